// SPDX-License-Identifier: GPL-2.0-only
/* wbt_core unit tests: options, their defaults and the table line. */
#include "test_helpers.h"

/* ---- options ------------------------------------------------------------- */

/* The options this file tests (later ones are tested where they live). */
enum { NR_KNOWN_OPTS = WTC_O_CACHE_DELAY + 1 };

/* Every option set to a non-default value. */
static void all_set(struct wtc_config *cfg)
{
	wtc_config_default(cfg);
	DO(opt(cfg, "enable", "0"));
	DO(opt(cfg, "wb_percent", "250"));
	DO(opt(cfg, "depth", "12"));
	DO(opt(cfg, "wc_policy", "off"));
	DO(opt(cfg, "cache_delay_us", "777"));
}

static void check_cfg_eq(const struct wtc_config *a, const struct wtc_config *b,
			 const char *what)
{
	CHECKF(a->enabled == b->enabled && a->wb_percent == b->wb_percent &&
	       a->depth == b->depth && a->wc_policy == b->wc_policy &&
	       a->cache_delay_usec == b->cache_delay_usec &&
	       a->set_mask == b->set_mask,
	       "%s: config {%d %u %u %d %u mask %#x}, "
	       "want {%d %u %u %d %u mask %#x}",
	       what, a->enabled, a->wb_percent, a->depth, a->wc_policy,
	       a->cache_delay_usec, a->set_mask, b->enabled, b->wb_percent,
	       b->depth, b->wc_policy, b->cache_delay_usec, b->set_mask);
}

static void test_config_default(void)
{
	struct wtc_config cfg;
	char buf[16] = "junk";

	wtc_config_default(&cfg);
	CHECK(cfg.enabled);
	CHECK_EQ(cfg.wb_percent, 100);
	CHECK_EQ(cfg.depth, 0);
	CHECK_EQ(cfg.wc_policy, WTC_WC_AUTO);
	CHECK_EQ(cfg.cache_delay_usec, 10000);
	CHECK_EQ(cfg.set_mask, 0);
	CHECK_EQ(wtc_config_nr_args(&cfg), 0);
	CHECK_EQ(wtc_config_format(&cfg, buf, sizeof(buf)), 0);
	CHECK_STR(buf, "");
}

static void test_config_accepts_valid(void)
{
	static const struct {
		const char *key, *val;
		enum wtc_opt opt;
		unsigned int want;
	} t[] = {
		{ "enable", "0", WTC_O_ENABLE, 0 },
		{ "enable", "1", WTC_O_ENABLE, 1 },
		{ "wb_percent", "1", WTC_O_WB_PERCENT, 1 },
		{ "wb_percent", "100", WTC_O_WB_PERCENT, 100 },
		{ "wb_percent", "1000", WTC_O_WB_PERCENT, 1000 },
		{ "depth", "auto", WTC_O_DEPTH, 0 },
		{ "depth", "1", WTC_O_DEPTH, 1 },
		{ "depth", "65536", WTC_O_DEPTH, 65536 },
		{ "wc_policy", "drain", WTC_O_WC_POLICY, WTC_WC_DRAIN },
		{ "wc_policy", "delay", WTC_O_WC_POLICY, WTC_WC_DELAY },
		{ "wc_policy", "off", WTC_O_WC_POLICY, WTC_WC_OFF },
		{ "wc_policy", "auto", WTC_O_WC_POLICY, WTC_WC_AUTO },
		{ "cache_delay_us", "0", WTC_O_CACHE_DELAY, 0 },
		{ "cache_delay_us", "1000000", WTC_O_CACHE_DELAY, 1000000 },
		/* leading zeros: plain decimal, not octal */
		{ "wb_percent", "010", WTC_O_WB_PERCENT, 10 },
		{ "enable", "01", WTC_O_ENABLE, 1 },
		{ "enable", "00", WTC_O_ENABLE, 0 },
		{ "depth", "0000000000000000000000000000064", WTC_O_DEPTH, 64 },
		{ "cache_delay_us", "0000", WTC_O_CACHE_DELAY, 0 },
		/* the status line's older spellings */
		{ "enabled", "0", WTC_O_ENABLE, 0 },
		{ "lat_target_us", "auto", WTC_O_LAT, WTC_LAT_AUTO },
	};
	struct wtc_config cfg;
	unsigned int i, got;
	const char *err;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		DO(all_set(&cfg));
		cfg.set_mask = 0;
		err = "unset";
		CHECKF(!wtc_config_set(&cfg, t[i].key, t[i].val, &err),
		       "%s \"%s\" refused: %s", t[i].key, t[i].val, err);
		CHECKF(!err, "%s %s: err set on success", t[i].key, t[i].val);
		switch (t[i].opt) {
		case WTC_O_ENABLE:
			got = cfg.enabled;
			break;
		case WTC_O_WB_PERCENT:
			got = cfg.wb_percent;
			break;
		case WTC_O_DEPTH:
			got = cfg.depth;
			break;
		case WTC_O_WC_POLICY:
			got = cfg.wc_policy;
			break;
		case WTC_O_LAT:
			got = cfg.lat_usec;
			break;
		default:
			got = cfg.cache_delay_usec;
			break;
		}
		CHECKF(got == t[i].want, "%s %s: value %u, want %u", t[i].key,
		       t[i].val, got, t[i].want);
		CHECKF(cfg.set_mask == 1u << t[i].opt, "%s %s: set_mask %#x",
		       t[i].key, t[i].val, cfg.set_mask);
	}
}

static void test_config_rejects_invalid(void)
{
	static const char *const t[][2] = {
		{ "bogus", "1" }, { "", "1" }, { "Enable", "1" },
		{ "enabled", "2" }, { "lat_target_us", "x" }, { "depth ", "1" },
		{ "enable", "" }, { "wb_percent", "" }, { "depth", "" },
		{ "wc_policy", "" }, { "cache_delay_us", "" },
		{ "enable", "2" }, { "enable", "-1" }, { "enable", "+1" },
		{ "enable", "1x" }, { "enable", " 1" }, { "enable", "1 " },
		{ "enable", "yes" }, { "enable", "99999999999" },
		{ "wb_percent", "0" }, { "wb_percent", "1001" },
		{ "wb_percent", "-1" }, { "wb_percent", "1x" },
		{ "wb_percent", "0x10" }, { "wb_percent", "1e2" },
		{ "wb_percent", "50.5" }, { "wb_percent", "99999999999" },
		{ "wb_percent", "18446744073709551716" },
		{ "depth", "0" }, { "depth", "65537" }, { "depth", "-1" },
		{ "depth", "AUTO" }, { "depth", "auto " }, { "depth", "autox" },
		{ "depth", "1x" }, { "depth", "99999999999" },
		{ "depth", "00000" },
		{ "wc_policy", "DRAIN" }, { "wc_policy", "none" },
		{ "wc_policy", "drain " }, { "wc_policy", "0" },
		{ "cache_delay_us", "1000001" }, { "cache_delay_us", "-1" },
		{ "cache_delay_us", "1x" }, { "cache_delay_us", "99999999999" },
	};
	struct wtc_config cfg, before;
	unsigned int i;
	const char *err;
	char what[64];

	DO(all_set(&cfg));
	before = cfg;
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		err = NULL;
		CHECKF(wtc_config_set(&cfg, t[i][0], t[i][1], &err),
		       "\"%s\" \"%s\" accepted", t[i][0], t[i][1]);
		CHECKF(err && *err, "\"%s\" \"%s\": no error text", t[i][0],
		       t[i][1]);
		snprintf(what, sizeof(what), "after \"%s\" \"%s\"", t[i][0],
			 t[i][1]);
		DO(check_cfg_eq(&cfg, &before, what));
	}
	err = NULL;
	CHECK(wtc_config_set(&cfg, NULL, "1", &err) && err);
	err = NULL;
	CHECK(wtc_config_set(&cfg, "enable", NULL, &err) && err);
	DO(check_cfg_eq(&cfg, &before, "after NULL"));
}

/* Format the options that were set, parse the pairs back: same config. */
static void check_roundtrip(const struct wtc_config *cfg)
{
	static const char *const keys[NR_KNOWN_OPTS] = {
		"enable", "wb_percent", "depth", "wc_policy", "cache_delay_us",
	};
	char buf[256], copy[256], *tok[32], *save = NULL, *p;
	struct wtc_config back;
	unsigned int n = 0, i;
	int len;

	len = wtc_config_format(cfg, buf, sizeof(buf));
	CHECKF(len == (int)strlen(buf), "format returned %d for \"%s\"", len,
	       buf);
	CHECKF(!len || buf[0] == ' ', "\"%s\" does not start with a space",
	       buf);
	strcpy(copy, buf);
	for (p = strtok_r(copy, " ", &save); p && n < 32;
	     p = strtok_r(NULL, " ", &save))
		tok[n++] = p;
	CHECKF(n == wtc_config_nr_args(cfg), "\"%s\": %u words, nr_args %u",
	       buf, n, wtc_config_nr_args(cfg));
	CHECKF(n % 2 == 0, "\"%s\": odd number of words", buf);
	wtc_config_default(&back);
	for (i = 0; i < n; i += 2)
		DO(opt(&back, tok[i], tok[i + 1]));
	DO(check_cfg_eq(&back, cfg, buf));
	for (i = 0; i < NR_KNOWN_OPTS; i++) {
		bool set = cfg->set_mask & (1u << i);

		CHECKF(set == !!strstr(buf, keys[i]), "\"%s\": %s %s", buf,
		       keys[i], set ? "missing" : "emitted but not set");
	}
}

static void test_config_roundtrip(void)
{
	static const char *const pct[] = { "1", "100", "1000", "37" };
	static const char *const depth[] = { "auto", "1", "65536", "16" };
	static const char *const pol[] = { "drain", "delay", "off" };
	static const char *const delay[] = { "0", "1000000", "10000", "5" };
	struct wtc_config cfg;
	unsigned int mask, round;

	rng = 12345;
	for (round = 0; round < 20; round++) {
		for (mask = 0; mask < (1u << NR_KNOWN_OPTS); mask++) {
			wtc_config_default(&cfg);
			if (mask & (1u << WTC_O_ENABLE))
				DO(opt(&cfg, "enable",
				       rnd_below(2) ? "1" : "0"));
			if (mask & (1u << WTC_O_WB_PERCENT))
				DO(opt(&cfg, "wb_percent", pct[rnd_below(4)]));
			if (mask & (1u << WTC_O_DEPTH))
				DO(opt(&cfg, "depth", depth[rnd_below(4)]));
			if (mask & (1u << WTC_O_WC_POLICY))
				DO(opt(&cfg, "wc_policy", pol[rnd_below(3)]));
			if (mask & (1u << WTC_O_CACHE_DELAY))
				DO(opt(&cfg, "cache_delay_us",
				       delay[rnd_below(4)]));
			CHECK_EQ(cfg.set_mask, mask);
			DO(check_roundtrip(&cfg));
		}
	}
}

static int fmt_config(const void *cfg, char *buf, size_t len)
{
	return wtc_config_format(cfg, buf, len);
}

static void test_config_format_no_overrun(void)
{
	struct wtc_config cfg;

	DO(all_set(&cfg));
	DO(check_no_overrun(fmt_config, &cfg, "config"));
}

static void test_config_backlog_options(void)
{
	struct wtc_config cfg, back;
	char buf[256];
	const char *err;

	wtc_config_default(&cfg);
	CHECK(cfg.push_back);
	CHECK_EQ(cfg.backlog_kb, 16384);
	CHECK_EQ(cfg.backlog_ms, 500);
	DO(opt(&cfg, "push_back", "0"));
	DO(opt(&cfg, "backlog_kb", "0"));
	DO(opt(&cfg, "backlog_ms", "60000"));
	CHECK(wtc_config_set(&cfg, "backlog_ms", "0", &err));
	CHECK(wtc_config_set(&cfg, "backlog_kb", "4194305", &err));
	CHECK(wtc_config_set(&cfg, "push_back", "2", &err));
	CHECK_EQ(wtc_config_nr_args(&cfg), 6);
	wtc_config_format(&cfg, buf, sizeof(buf));
	CHECK_STR(buf, " push_back 0 backlog_kb 0 backlog_ms 60000");
	wtc_config_default(&back);
	DO(opt(&back, "push_back", "0"));
	DO(opt(&back, "backlog_kb", "0"));
	DO(opt(&back, "backlog_ms", "60000"));
	CHECK(!memcmp(&back, &cfg, sizeof(cfg)));
}

/* ---- the option table, and the README beside it --------------------------- */

/* The README, read once; the tests run in tests/unit (make unit). */
static char *readme(void)
{
	static char text[128 * 1024];
	static bool done;
	FILE *f;
	size_t n;

	if (done)
		return text;
	f = fopen("../../README.md", "r");
	if (!f)
		return NULL;
	n = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	text[n] = 0;
	done = true;
	return text;
}

/*
 * Each option's error names what it takes: its bounds parse, one past them
 * does not, and the text says the bounds. The unknown-key text lists every
 * option, in table order.
 */
static void test_option_table(void)
{
	const char *name, *err, *uerr, *at;
	struct wtc_config cfg;
	char row[256], v[16];
	unsigned int i, lo, hi;

	wtc_config_default(&cfg);
	CHECK(wtc_config_set(&cfg, "nosuch", "1", &uerr));
	at = uerr;
	for (i = 0; wtc_config_describe(i, &name, &err); i++) {
		CHECKF(!strncmp(err, name, strlen(name)), "%s: error \"%s\"",
		       name, err);
		at = strstr(at, name);
		CHECKF(at, "unknown-key text misses %s (or its order)", name);
		CHECK(wtc_config_doc(i, row, sizeof(row)) > 0);
		/* The range from the doc row: "min..max" or "`0`, `1`". */
		if (sscanf(strstr(row, "| ") + 2, "%*[^|]| %u..%u", &lo, &hi) != 2 &&
		    sscanf(strstr(row, "| ") + 2, "%*[^|]| `%u`, `%u`", &lo, &hi) != 2 &&
		    sscanf(strstr(row, "| ") + 2, "%*[^|]| `auto`, %u..%u", &lo, &hi) != 2)
			continue;		/* names: checked by the config tests */
		snprintf(v, sizeof(v), "%u", lo);
		CHECKF(strstr(err, v), "%s: \"%s\" does not say %u", name, err, lo);
		CHECKF(!wtc_config_set(&cfg, name, v, &at), "%s %s refused", name, v);
		snprintf(v, sizeof(v), "%u", hi);
		CHECKF(strstr(err, v), "%s: \"%s\" does not say %u", name, err, hi);
		CHECKF(!wtc_config_set(&cfg, name, v, &at), "%s %s refused", name, v);
		snprintf(v, sizeof(v), "%u", hi + 1);
		CHECKF(wtc_config_set(&cfg, name, v, &at), "%s %s accepted", name, v);
		if (lo) {
			snprintf(v, sizeof(v), "%u", lo - 1);
			CHECKF(wtc_config_set(&cfg, name, v, &at),
			       "%s %s accepted", name, v);
		}
		at = uerr;
	}
	CHECK_EQ(i, WTC_NR_OPTS);
}

/* The README's table of options is the option table: names, values, defaults. */
static void test_readme_options(void)
{
	const char *text = readme(), *at;
	char row[256];
	unsigned int i;

	CHECKF(text, "cannot read ../../README.md");
	at = text ? strstr(text, "| key | values | default | meaning |") : NULL;
	CHECKF(at, "README: no table of options");
	for (i = 0; at && wtc_config_doc(i, row, sizeof(row)); i++) {
		at = strstr(at, row);
		CHECKF(at, "README: no row \"%s...\" (or out of order)", row);
	}
}

/*
 * Every status field is in the README's table of fields, and every field
 * there is printed (<q> and <kind> stand for each queue and kind).
 */
static void test_readme_status_fields(void)
{
	static const char *const qs[] = {
		"reclaim", "sync", "normal", "bg", "discard",
	};
	const char *text = readme(), *sec, *end;
	char buf[4096], doc[8192], key[64], *p, *save = NULL;
	unsigned int i, n = 0;
	struct fx f;

	CHECKF(text, "cannot read ../../README.md");
	sec = text ? strstr(text, "\n## Status\n") : NULL;
	CHECKF(sec, "README: no Status section");
	end = strstr(sec + 1, "\n## ");
	CHECK(end && (size_t)(end - sec) < sizeof(doc));
	memcpy(doc, sec, end - sec);
	doc[end - sec] = 0;
	DO(setup(&f, 32, false));
	CHECK(wtc_format_status(&f.c, 0, buf, sizeof(buf)) > 0);
	for (p = strtok_r(buf, " ", &save); p; p = strtok_r(NULL, " ", &save)) {
		char *eq = strchr(p, '=');
		bool found = false;

		CHECK(eq);
		*eq = 0;
		n++;
		snprintf(key, sizeof(key), "`%s`", p);
		found = strstr(doc, key);
		for (i = 0; !found && i < 5; i++) {
			size_t l = strlen(qs[i]);

			if (!strncmp(p, qs[i], l) && p[l] == '_') {
				snprintf(key, sizeof(key), "`<q>%s`", p + l);
				found = strstr(doc, key);
			}
		}
		if (!found && !strncmp(p, "n_", 2))
			found = strstr(doc, "`n_<kind>`") &&
				strstr(doc, p + 2);
		CHECKF(found, "status field %s is not in the README", p);
	}
	/* ... and nothing the README lists is missing from the status. */
	for (p = doc; (p = strstr(p, "\n| `")); p += 4) {
		const char *k = p + 4;
		size_t l = strcspn(k, "`");
		char v[64];

		if (l >= sizeof(key) || !strncmp(k, "<q>", 3) ||
		    !strncmp(k, "n_<", 3))
			continue;
		memcpy(key, k, l);
		key[l] = 0;
		DO(setup(&f, 32, false));
		CHECK(wtc_format_status(&f.c, 0, buf, sizeof(buf)) > 0);
		CHECKF(status_val(buf, key, v, sizeof(v)),
		       "README lists %s, status does not print it", key);
	}
	CHECK(n > 60);
}

static const struct test tests[] = {
	T(config_default),
	T(config_accepts_valid),
	T(config_rejects_invalid),
	T(config_roundtrip),
	T(config_format_no_overrun),
	T(config_backlog_options),
	T(option_table),
	T(readme_options),
	T(readme_status_fields),
};

const struct suite config_suite = SUITE(tests);
