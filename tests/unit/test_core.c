// SPDX-License-Identifier: GPL-2.0-only
/*
 * The runner of the unit tests of wbt_core (see test_helpers.h): every
 * test of every topic, or those whose name contains argv[1].
 */
#include "test_helpers.h"

static const struct suite *const suites[] = {
	&classify_suite,
	&limits_suite,
	&gate_suite,
	&prop_suite,
	&config_suite,
	&status_suite,
	&pushback_suite,
	&controller_suite,
	&lockfree_suite,
};

int main(int argc, char **argv)
{
	unsigned int s, i, pass = 0, fail = 0;

	for (s = 0; s < sizeof(suites) / sizeof(suites[0]); s++) {
		for (i = 0; i < suites[s]->nr; i++) {
			const struct test *t = &suites[s]->tests[i];

			if (argc > 1 && !strstr(t->name, argv[1]))
				continue;
			failed = false;
			t->fn();
			if (!failed) {
				printf("PASS %s\n", t->name);
				pass++;
				continue;
			}
			printf("FAIL %s: %s\n", t->name, fail_msg);
			fail++;
		}
	}
	printf("%u passed, %u failed\n", pass, fail);
	return fail ? 1 : 0;
}
