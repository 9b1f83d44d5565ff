/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * User-space unit tests of wbt_core with a fake clock: one case per
 * transition. The tests of each topic are in test_<topic>.c, listed in that
 * file's tests[] and run by test_core.c; the first check that fails ends its
 * test. Output is "PASS name" or "FAIL name: file:line: what" per test, then
 * "N passed, N failed"; the exit status is 1 if any test failed. Time is
 * struct wtc_now.ns, advanced by hand; nothing here reads a real clock.
 */
#ifndef TEST_HELPERS_H
#define TEST_HELPERS_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wbt_core.h"

/* ---- runner -------------------------------------------------------------- */

extern bool failed;		/* the running test failed */
extern char fail_msg[1024];	/* where and why: the first failed check */

__printf(3, 4) void fail_at(const char *file, int line, const char *fmt, ...);

#define FAIL(...) do {						\
	fail_at(__FILE__, __LINE__, __VA_ARGS__);			\
	return;								\
} while (0)
#define CHECK(cond) do { if (!(cond)) FAIL("%s", #cond); } while (0)
#define CHECKF(cond, ...) do { if (!(cond)) FAIL(__VA_ARGS__); } while (0)
#define CHECK_EQ(a, b) do {						\
	long long a_ = (long long)(a), b_ = (long long)(b);		\
	if (a_ != b_)							\
		FAIL("%s is %lld, want %lld", #a, a_, b_);		\
} while (0)
#define CHECK_STR(a, b) do {						\
	const char *a_ = (a), *b_ = (b);				\
	if (!a_ || strcmp(a_, b_))					\
		FAIL("%s is \"%s\", want \"%s\"", #a,			\
		     a_ ? a_ : "(null)", b_);				\
} while (0)
/* Call a helper that checks things; stop this test if it failed. */
#define DO(call) do { call; if (failed) return; } while (0)

struct test {
	const char *name;
	void (*fn)(void);
};

#define T(fn) { #fn, test_##fn }

/* A file's tests, in the order they run. */
struct suite {
	const struct test *tests;
	unsigned int nr;
};

#define SUITE(t) { t, sizeof(t) / sizeof((t)[0]) }

extern const struct suite classify_suite, limits_suite, gate_suite,
	prop_suite, config_suite, status_suite, pushback_suite,
	controller_suite, lockfree_suite;

/* ---- fake clock and fixture ---------------------------------------------- */

#define US 1000ULL
#define MS (1000 * US)
#define T0 (10000 * MS)	/* long after "boot": no read or gated bio yet */

struct fx {
	struct wtc_core c;
	struct wtc_now now;
};

void opt(struct wtc_config *cfg, const char *key, const char *val);
bool set_device(struct wtc_core *c, unsigned int qd, bool wc,
		unsigned int max_merge_sectors);
void setup_cfg(struct fx *f, const struct wtc_config *cfg,
	       unsigned int qd, bool wc);
void setup(struct fx *f, unsigned int qd, bool wc);
void setup_opts(struct fx *f, unsigned int qd, bool wc, ...);
void setup_paced(struct fx *f);
int map(struct fx *f, enum wtc_kind k);
bool go(int r);
unsigned int map_n(struct fx *f, enum wtc_kind k, unsigned int n);
bool done(struct fx *f, enum wtc_kind k);
int dispatch(struct fx *f, u64 *wait_ns);
unsigned int limit(struct fx *f, enum wtc_queue q);
enum wtc_counter counter_of(enum wtc_queue q);

/* ---- PRNG (xorshift64*), seeded per test --------------------------------- */

extern u64 rng;
u64 rnd(void);
unsigned int rnd_below(unsigned int n);

/* ---- formatted output ---------------------------------------------------- */

void check_no_overrun(int (*fmt)(const void *, char *, size_t),
		      const void *arg, const char *what);
const char *status_val(const char *s, const char *key, char *out,
		       size_t len);

#endif /* TEST_HELPERS_H */
