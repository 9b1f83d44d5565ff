// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit tests of the wbthrottle command's pure parts: the option table
 * against the target's own parser (wbt_core.c), the status line parser on
 * the target's own status and on fields not yet known, the tab parser, unit
 * name escaping and the generator. One line per failure, "tools: N tests,
 * pass" at the end.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "wbt_core.h"
#include "wbthrottle.h"

static int fails, tests;

#define CHECK(cond, ...) do {						\
	tests++;							\
	if (!(cond)) {							\
		fails++;						\
		printf("FAIL %s:%d: ", __func__, __LINE__);		\
		printf(__VA_ARGS__);					\
		putchar('\n');						\
	}								\
} while (0)

/* Stubs for what tab.c does not need here. */
void wbt_err(const char *fmt, ...) { (void)fmt; }
void wbt_warn(const char *fmt, ...) { (void)fmt; }

/* The keys the target knows, from its own "unknown option (a, b, ...)". */
static int kernel_keys(char keys[][32], int max)
{
	struct wtc_config cfg;
	const char *err, *p;
	int n = 0;

	wtc_config_default(&cfg);
	wtc_config_set(&cfg, "no_such_key", "1", &err);
	p = strchr(err, '(');
	while (p && n < max && sscanf(p + 1, " %31[a-z_0-9]", keys[n]) == 1) {
		n++;
		p = strchr(p + 1, ',');
	}
	return n;
}

/* Every value the kernel takes, the command takes, and no other. */
static void test_opts_match_kernel(void)
{
	static const char *const vals[] = {
		"", "0", "1", "2", "8", "99", "100", "1000", "1001", "65535",
		"65536", "65537", "999999", "1000000", "1000001", "10000000",
		"10000001", "4294967295", "4294967296",
		"99999999999999999999", "-1", "+1", "08", "1x", " 1", "auto",
		"drain", "delay", "off", "on", "AUTO", "au", "autox",
	};
	char keys[16][32], err[WBT_ERR_LEN];
	struct wtc_config cfg;
	const char *kerr, *canon;
	int n = kernel_keys(keys, 16), i;
	size_t v;

	CHECK(n >= 7, "parsed only %d keys from the target's error", n);
	for (i = 0; i < n; i++) {
		for (v = 0; v < ARRAY_SIZE(vals); v++) {
			enum wbt_opt_verdict r;
			int k;

			wtc_config_default(&cfg);
			k = wtc_config_set(&cfg, keys[i], vals[v], &kerr);
			r = wbt_opt_check(keys[i], vals[v], &canon, err,
					  sizeof(err));
			CHECK(r != WBT_OPT_UNKNOWN, "%s unknown to the command",
			      keys[i]);
			CHECK((r == WBT_OPT_OK) == (k == 0),
			      "%s=%s: kernel %s, command %s (%s)", keys[i],
			      vals[v], k ? "refuses" : "takes",
			      r == WBT_OPT_OK ? "takes" : "refuses", err);
			CHECK(!strcmp(canon, keys[i]), "%s canon %s", keys[i],
			      canon);
		}
	}
}

static void test_opts_words(void)
{
	char err[WBT_ERR_LEN];
	const char *canon;

	CHECK(wbt_opt_check("enabled", "1", &canon, err, sizeof(err)) ==
	      WBT_OPT_OK && !strcmp(canon, "enable"), "alias enabled");
	CHECK(wbt_opt_check("lat_target_us", "500", &canon, err,
			    sizeof(err)) == WBT_OPT_OK &&
	      !strcmp(canon, "lat_us"), "alias lat_target_us");
	CHECK(wbt_opt_check("depth", "0", &canon, err, sizeof(err)) ==
	      WBT_OPT_BAD && !strcmp(err, "depth takes auto or 1 to 65536"),
	      "depth 0 says: %s", err);
	CHECK(wbt_opt_check("wc_policy", "x", &canon, err, sizeof(err)) ==
	      WBT_OPT_BAD && strstr(err, "auto, drain, delay or off"),
	      "wc_policy says: %s", err);
	CHECK(wbt_opt_check("max_deferred_kb", "64", &canon, err,
			    sizeof(err)) == WBT_OPT_UNKNOWN &&
	      strstr(err, "passing it to the kernel"), "unknown key: %s", err);
	CHECK(wbt_opt_check("max deferred", "64", &canon, err, sizeof(err)) ==
	      WBT_OPT_BAD, "a key with a space");
	CHECK(wbt_opt_check("future", "a b", &canon, err, sizeof(err)) ==
	      WBT_OPT_BAD, "an unknown key's value with a space");
	CHECK(wbt_opt_check("", "1", &canon, err, sizeof(err)) == WBT_OPT_BAD,
	      "empty key");
}

/* The target's real status line: every field parsed, in order. */
static void test_status_kernel(void)
{
	struct wbt_field f[WBT_MAX_FIELDS];
	struct wtc_config cfg;
	struct wtc_core c;
	char buf[4096], copy[4096], *p;
	int n, eq = 0, i;

	wtc_config_default(&cfg);
	memset(&c, 0, sizeof(c));
	wtc_init(&c, &cfg);
	wtc_format_status(&c, 0, buf, sizeof(buf));
	strcpy(copy, buf);
	for (p = buf; *p; p++)
		eq += *p == '=';
	n = wbt_status_parse(copy, f, WBT_MAX_FIELDS);
	CHECK(n == eq && n > 40, "parsed %d fields of %d", n, eq);
	CHECK(!strcmp(f[0].key, "enabled") && !strcmp(f[0].val, "1"),
	      "first field %s=%s", f[0].key, f[0].val);
	CHECK(!strcmp(wbt_field_unit("held_max_ns"), "ns"), "held_max_ns");
	CHECK(!strcmp(wbt_field_unit("normal_inflight"), "requests"), "queue");
	CHECK(wbt_field_is_counter("bg_throttled") &&
	      wbt_field_is_counter("n_read") && !wbt_field_is_counter("qd"),
	      "counters");
	for (i = 0; i < n; i++)
		if (!*wbt_field_help(f[i].key))
			printf("note: status field %s has no description in tools/opts.c\n",
			       f[i].key);
}

/* Fields appended later: parsed, units from the suffix, nothing refused. */
static void test_status_future(void)
{
	char line[] = "enabled=1 normal_waiting=3 deferred_bytes=4096 "
		      "deferred_oldest_ms=12 lonely_word renamed=x";
	struct wbt_field f[WBT_MAX_FIELDS];
	int n = wbt_status_parse(line, f, WBT_MAX_FIELDS);

	CHECK(n == 6, "%d fields", n);
	CHECK(!strcmp(wbt_field_unit("deferred_bytes"), "bytes"), "bytes");
	CHECK(!strcmp(wbt_field_unit("deferred_oldest_ms"), "ms"), "ms");
	CHECK(!strcmp(wbt_field_unit("max_deferred_kb"), "KiB"), "KiB");
	CHECK(!strcmp(wbt_field_unit("normal_waiting"), ""), "no unit");
	CHECK(!strcmp(f[4].key, "") && !strcmp(f[4].val, "lonely_word"),
	      "a word without '='");
	CHECK(!strcmp(wbt_field_get(f, n, "renamed"), "x"), "get");
	CHECK(wbt_is_number("-3") && !wbt_is_number("3x") &&
	      !wbt_is_number("-"), "numbers");
}

static int parse(const char *text, struct wbt_tab_entry *e, char *err)
{
	static char line[1024];

	snprintf(line, sizeof(line), "%s", text);
	return wbt_tab_parse_line(line, e, err, WBT_ERR_LEN);
}

static void test_tab(void)
{
	char err[WBT_ERR_LEN] = "";
	struct wbt_tab_entry e;

	CHECK(parse("  # comment", &e, err) == 1, "comment");
	CHECK(parse("\n", &e, err) == 1, "blank");
	CHECK(parse("slow /dev/sdb", &e, err) == 0 && !e.nr_opts &&
	      !strcmp(e.dev, "/dev/sdb"), "no options");
	CHECK(parse("slow\tUUID=1234-ABCD -  # x", &e, err) == 0 &&
	      !e.nr_opts, "UUID, '-': %s", err);
	CHECK(parse("a /dev/disk/by-id/x depth=8,nofail,enabled=0", &e,
		    err) == 0 && e.nr_opts == 2 && e.nofail &&
	      !strcmp(e.opts[1], "enabled=0"), "options: %s", err);
	CHECK(parse("a /dev/sdb depth=0", &e, err) == -1 &&
	      strstr(err, "depth takes auto or 1 to 65536"), "bad: %s", err);
	CHECK(parse("a /dev/sdb depth", &e, err) == -1 &&
	      strstr(err, "key=value"), "no '=': %s", err);
	CHECK(parse("a /dev/sdb depth=8 extra", &e, err) == -1,
	      "four fields");
	CHECK(parse("a", &e, err) == -1 && strstr(err, "no lower device"),
	      "no device");
	CHECK(parse("a/b /dev/sdb", &e, err) == -1, "name with '/'");
	CHECK(parse("a sdb", &e, err) == -1, "relative device");
	CHECK(parse("a UUID=", &e, err) == -1, "empty UUID");
	CHECK(parse("a /dev/sdb defaults,nofail", &e, err) == 0 &&
	      !e.nr_opts && e.nofail && !e.initramfs, "defaults,nofail: %s",
	      err);
	CHECK(parse("a /dev/sdb initramfs,depth=4", &e, err) == 0 &&
	      e.nr_opts == 1 && e.initramfs, "initramfs: %s", err);
	CHECK(parse("a /dev/sdb future_knob=1", &e, err) == 0,
	      "unknown key passes: %s", err);
}

static void test_escape(void)
{
	char buf[256];

	wbt_unit_escape_path("/dev/disk/by-uuid/1234-ABCD", buf, sizeof(buf));
	CHECK(!strcmp(buf, "dev-disk-by\\x2duuid-1234\\x2dABCD"), "%s", buf);
	wbt_unit_escape_path("//dev//sdb/", buf, sizeof(buf));
	CHECK(!strcmp(buf, "dev-sdb"), "%s", buf);
	wbt_unit_escape_path("/.x y", buf, sizeof(buf));
	CHECK(!strcmp(buf, "\\x2ex\\x20y"), "%s", buf);
	CHECK(wbt_dev_spec_path("PARTUUID=ab", buf, sizeof(buf)) == 0 &&
	      !strcmp(buf, "/dev/disk/by-partuuid/ab"), "%s", buf);
	CHECK(wbt_dev_spec_path("UUID=../x", buf, sizeof(buf)) == -1,
	      "UUID with '/'");
}

static void test_generator(void)
{
	char dir[] = "/tmp/wbt-gen.XXXXXX", path[512], unit[2048], cmd[600];
	FILE *f;
	size_t n;

	if (!mkdtemp(dir)) {
		CHECK(0, "mkdtemp");
		return;
	}
	snprintf(path, sizeof(path), "%s/tab", dir);
	f = fopen(path, "w");
	fprintf(f, "# test\nfast /dev/disk/by-id/nvme-X_1 depth=8,nofail\n"
		"bad /dev/sdb depth=0\nslow UUID=12-ab wc_policy=delay,future=5%%\n");
	fclose(f);
	CHECK(wbt_generate(path, dir) == -1, "the bad line is reported");
	snprintf(path, sizeof(path), "%s/wbthrottle-fast.service", dir);
	f = fopen(path, "r");
	n = f ? fread(unit, 1, sizeof(unit) - 1, f) : 0;
	unit[n] = 0;
	if (f)
		fclose(f);
	CHECK(strstr(unit, "BindsTo=dev-disk-by\\x2did-nvme\\x2dX_1.device\n"),
	      "BindsTo: %s", unit);
	CHECK(strstr(unit, "Before=local-fs-pre.target"), "ordering");
	CHECK(strstr(unit, "create --exist-ok fast /dev/disk/by-id/nvme-X_1 depth=8\n"),
	      "ExecStart: %s", unit);
	snprintf(path, sizeof(path),
		 "%s/local-fs.target.wants/wbthrottle-fast.service", dir);
	CHECK(!access(path, F_OK), "nofail: wanted");
	snprintf(path, sizeof(path),
		 "%s/local-fs.target.requires/wbthrottle-slow.service", dir);
	CHECK(!access(path, F_OK), "required");
	snprintf(path, sizeof(path), "%s/wbthrottle-bad.service", dir);
	CHECK(access(path, F_OK), "no unit for the bad line");
	snprintf(cmd, sizeof(cmd), "grep -q 'slow /dev/disk/by-uuid/12-ab wc_policy=delay future=5%%%%$' %s/wbthrottle-slow.service", dir);
	CHECK(!system(cmd), "'%%' doubled in ExecStart");
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	CHECK(!system(cmd), "cleanup");
}

int main(void)
{
	test_opts_match_kernel();
	test_opts_words();
	test_status_kernel();
	test_status_future();
	test_tab();
	test_escape();
	test_generator();
	if (fails) {
		printf("tools: %d of %d checks FAIL\n", fails, tests);
		return 1;
	}
	printf("tools: %d checks, pass\n", tests);
	return 0;
}
