// SPDX-License-Identifier: GPL-2.0-only
/* wbt_core unit tests: the status line. */
#include "test_helpers.h"

/* ---- status -------------------------------------------------------------- */

static int fmt_status(const void *c, char *buf, size_t len)
{
	return wtc_format_status(c, 0, buf, len);
}

static void test_status_no_overrun(void)
{
	struct fx f;

	DO(setup(&f, 32, false));
	map_n(&f, WTC_K_BG, 6);
	DO(check_no_overrun(fmt_status, &f.c, "status"));
}

#define CHECK_FIELD(s, key, want) do {					\
	char v_[64];							\
	CHECK_STR(status_val(s, key, v_, sizeof(v_)), want);		\
} while (0)

static void test_status_values(void)
{
	char buf[4096];
	struct fx f;

	DO(setup(&f, 32, false));
	map(&f, WTC_K_READ);
	f.now.ns += 200 * MS;
	map_n(&f, WTC_K_BG, 6);
	wtc_note_held(&f.c, 1000, false);
	wtc_note_held(&f.c, 500, false);
	CHECK(wtc_format_status(&f.c, 0, buf, sizeof(buf)) > 0);
	CHECK_FIELD(buf, "enabled", "1");
	CHECK_FIELD(buf, "holding", "1");
	CHECK_FIELD(buf, "qd", "32");
	CHECK_FIELD(buf, "wc", "0");
	CHECK_FIELD(buf, "wc_policy", "drain");
	CHECK_FIELD(buf, "depth_mode", "auto");
	CHECK_FIELD(buf, "max", "16");
	CHECK_FIELD(buf, "normal", "8");
	CHECK_FIELD(buf, "background", "4");
	CHECK_FIELD(buf, "step", "0");
	CHECK_FIELD(buf, "bg_inflight", "4");
	CHECK_FIELD(buf, "bg_queued", "2");
	CHECK_FIELD(buf, "bg_hwm", "4");
	CHECK_FIELD(buf, "bg_throttled", "2");
	CHECK_FIELD(buf, "sync_queued", "0");
	CHECK_FIELD(buf, "held_ns", "1500");
	CHECK_FIELD(buf, "held_max_ns", "1000");
	CHECK_FIELD(buf, "n_read", "1");
	CHECK_FIELD(buf, "n_bg", "6");
	CHECK_FIELD(buf, "n_other", "0");
	CHECK_FIELD(buf, "held_us", "1");
	CHECK_FIELD(buf, "held_max_us", "1");
	CHECK_FIELD(buf, "flush_inflight", "0");
}

/*
 * Every option is in the status under its own name, once, as the table
 * line writes it; the older status spellings are still printed and taken.
 */
static void test_status_options(void)
{
	const char *name, *err;
	char buf[4096], v[64];
	struct wtc_config cfg;
	unsigned int i;
	struct fx f;

	DO(setup(&f, 32, false));
	wtc_config_default(&cfg);
	CHECK(!wtc_config_set(&cfg, "enabled", "0", &err));
	CHECK(!wtc_config_set(&cfg, "lat_target_us", "2500", &err));
	CHECK(!wtc_config_set(&cfg, "depth", "7", &err));
	wtc_set_config(&f.c, &cfg);
	CHECK(wtc_format_status(&f.c, 0, buf, sizeof(buf)) > 0);
	for (i = 0; wtc_config_describe(i, &name, &err); i++) {
		char key[40];
		const char *at;

		snprintf(key, sizeof(key), " %s=", name);
		at = strstr(buf, key);
		CHECKF(at, "status has no %s", name);
		CHECKF(!at || !strstr(at + 1, key), "status has %s twice", name);
	}
	CHECK_FIELD(buf, "enable", "0");
	CHECK_FIELD(buf, "enabled", "0");
	CHECK_FIELD(buf, "lat_us", "2500");
	CHECK_FIELD(buf, "lat_target_us", "2500");
	CHECK_FIELD(buf, "depth", "7");
	CHECK_FIELD(buf, "depth_mode", "fixed");
	CHECK_FIELD(buf, "wb_percent", "100");
	CHECK_FIELD(buf, "cache_delay_us", "10000");

	wtc_config_default(&cfg);
	wtc_set_config(&f.c, &cfg);
	CHECK(wtc_format_status(&f.c, 0, buf, sizeof(buf)) > 0);
	CHECK_FIELD(buf, "lat_us", "auto");
	CHECK_FIELD(buf, "depth", "auto");
	CHECK(status_val(buf, "lat_target_us", v, sizeof(v)) && strcmp(v, "auto"));
}

/*
 * The INFO fields in the README's order ("new fields are only ever
 * appended"); no field twice.
 */
static void test_status_field_order(void)
{
	static const char *const qs[] = {
		"reclaim", "sync", "normal", "bg", "discard",
	};
	static const char *const ks[] = {
		"read", "bg", "normal", "sync", "reclaim", "direct", "discard",
		"flush", "other",
	};
	char buf[4096], want[64][32], *p, *save = NULL;
	unsigned int n = 0, i, j;
	struct fx f;

	DO(setup(&f, 32, false));
	CHECK(wtc_format_status(&f.c, 0, buf, sizeof(buf)) > 0);
#define WANT(...) snprintf(want[n++], sizeof(want[0]), __VA_ARGS__)
	WANT("enabled"); WANT("holding"); WANT("qd"); WANT("wc");
	WANT("wc_policy"); WANT("depth_mode"); WANT("max"); WANT("normal");
	WANT("background"); WANT("step");
	for (i = 0; i < 5; i++) {
		WANT("%s_inflight", qs[i]);
		WANT("%s_queued", qs[i]);
		WANT("%s_hwm", qs[i]);
		WANT("%s_throttled", qs[i]);
	}
	WANT("held_ns"); WANT("held_max_ns");
	for (i = 0; i < 9; i++)
		WANT("n_%s", ks[i]);
#undef WANT
	for (i = 0, p = strtok_r(buf, " ", &save); p;
	     p = strtok_r(NULL, " ", &save), i++) {
		char *eq = strchr(p, '=');

		CHECKF(eq, "field %u \"%s\" is not key=value", i, p);
		*eq = 0;
		if (i < n)
			CHECKF(!strcmp(p, want[i]), "field %u is %s, want %s",
			       i, p, want[i]);
		for (j = 0; i >= n && j < n; j++)
			CHECKF(strcmp(p, want[j]), "%s repeated", p);
	}
	CHECKF(i >= n, "%u fields, want at least %u", i, n);
}

/* A flush of a write cache in flight shows, and goes when it completes. */
static void test_status_flush_inflight(void)
{
	char buf[4096];
	struct fx f;

	DO(setup(&f, 32, true));
	wtc_flush_issue(&f.c);
	wtc_flush_issue(&f.c);
	CHECK(wtc_format_status(&f.c, 0, buf, sizeof(buf)) > 0);
	CHECK_FIELD(buf, "flush_inflight", "2");
	wtc_flush_done(&f.c);
	wtc_flush_done(&f.c);
	CHECK(wtc_format_status(&f.c, 0, buf, sizeof(buf)) > 0);
	CHECK_FIELD(buf, "flush_inflight", "0");
}

static void test_note_held(void)
{
	struct fx f;

	DO(setup(&f, 32, false));
	wtc_note_held(&f.c, 300, false);
	wtc_note_held(&f.c, 700, false);
	wtc_note_held(&f.c, 100, false);
	CHECK_EQ(f.c.stats.held_ns, 1100);
	CHECK_EQ(f.c.stats.held_max_ns, 700);
}

static const struct test tests[] = {
	T(status_no_overrun),
	T(status_values),
	T(status_field_order),
	T(status_options),
	T(status_flush_inflight),
	T(note_held),
};

const struct suite status_suite = SUITE(tests);
