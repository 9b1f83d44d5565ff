// SPDX-License-Identifier: GPL-2.0-only
/*
 * The options of the wbthrottle target and the fields of its status line,
 * as the command knows them.
 *
 * Options: the target's own table and parser (wbt_core.c, linked in), so a
 * value the kernel would refuse is refused here first, in the kernel's
 * words. A key the table does not know goes to the kernel with a warning:
 * a newer module may know it.
 *
 * Status: the target prints key=value fields in an append-only order. They
 * are parsed generically; wbt_fields[] only adds a unit and a description,
 * and a field it does not know gets its unit from its suffix.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wbt_core.h"
#include "wbthrottle.h"

/*
 * Check key=val before it goes to the kernel. *canon is the key the kernel
 * knows (an alias is translated). WBT_OPT_BAD: err says why.
 */
enum wbt_opt_verdict wbt_opt_check(const char *key, const char *val,
				   const char **canon, char *err, size_t len)
{
	struct wtc_config cfg;
	const char *c, *kerr;

	*canon = key;
	for (c = key; *c; c++) {
		if (!((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') ||
		      *c == '_')) {
			snprintf(err, len, "'%s' is not an option name", key);
			return WBT_OPT_BAD;
		}
	}
	if (!*key) {
		snprintf(err, len, "empty option name");
		return WBT_OPT_BAD;
	}
	if (!wtc_config_name(key)) {
		for (c = val; *c; c++)
			if (*c <= ' ' || *c > '~')
				break;
		if (*c || !*val) {
			snprintf(err, len, "%s: the value must be one word", key);
			return WBT_OPT_BAD;
		}
		snprintf(err, len, "unknown option %s: passing it to the kernel",
			 key);
		return WBT_OPT_UNKNOWN;
	}
	*canon = wtc_config_name(key);
	wtc_config_default(&cfg);
	if (!wtc_config_set(&cfg, key, val, &kerr))
		return WBT_OPT_OK;
	snprintf(err, len, "%s", kerr);
	return WBT_OPT_BAD;
}

/* Split "key=value" in place. */
int wbt_opt_split(char *arg, char **key, char **val, char *err, size_t len)
{
	char *eq = strchr(arg, '=');

	if (!eq) {
		snprintf(err, len, "'%s': options are key=value", arg);
		return -1;
	}
	*eq = 0;
	*key = arg;
	*val = eq + 1;
	return 0;
}

void wbt_opt_print_help(void)
{
	const char *name, *err;
	unsigned int i;

	/* "NAME takes ..." says the values. */
	for (i = 0; wtc_config_describe(i, &name, &err); i++)
		printf("  %-16s %s: %s\n", name, wtc_config_help(i),
		       err + strlen(name) + 1);
}

/* ---- status fields ------------------------------------------------------ */

struct wbt_field_info {
	const char *pat;	/* exact, "prefix*" or "*suffix" */
	const char *unit;
	bool counter;		/* only grows */
	const char *help;
};

static const struct wbt_field_info wbt_fields[] = {
	{ "enabled", "", false, "throttling on (1) or off (0)" },
	{ "holding", "", false, "0 while suspending: nothing is held" },
	{ "qd", "requests", false, "lower device queue depth" },
	{ "wc", "", false, "1 if the lower device has a volatile write cache" },
	{ "wc_policy", "", false, "write cache policy in force" },
	{ "depth_mode", "", false, "auto (self-tuned) or fixed depth" },
	{ "max", "requests", false, "depth limit: max" },
	{ "normal", "requests", false, "depth limit: normal writeback" },
	{ "background", "requests", false, "depth limit: background writeback" },
	{ "step", "", false, "scale step (0 neutral, >0 throttled harder)" },
	{ "*_inflight", "requests", false, "requests of this queue on the lower device" },
	{ "*_queued", "bios", false, "bios of this queue held now" },
	{ "*_hwm", "requests", false, "most requests of this queue in flight at once" },
	{ "*_throttled", "bios", true, "bios of this queue that had to wait" },
	{ "held_ns", "ns", true, "total time bios were held" },
	{ "held_max_ns", "ns", false, "longest time a bio was held" },
	{ "n_*", "bios", true, "bios seen of this kind" },
	{ "merged", "bios", true, "writes that joined the previous request" },
	{ "lat_target_us", "us", false, "read latency target in force" },
	{ "lat_pct", "", false, "0 (window minimum) or the percentile compared" },
	{ "scaling", "", false, "1 if the depth is self-tuned" },
	{ "win_us", "us", false, "current window length" },
	{ "win_reads", "samples", false, "reads in the last window" },
	{ "win_writes", "samples", false, "writes in the last window" },
	{ "read_min_us", "us", false, "fastest read of the last window" },
	{ "read_p50_us", "us", false, "median read of the last window" },
	{ "read_p99_us", "us", false, "99th percentile read of the last window" },
	{ "verdict", "", false, "last window: ok, exceeded, unknown, unknown_writes" },
	{ "windows", "windows", true, "windows judged" },
	{ "exceeded", "windows", true, "windows over the latency target" },
	{ "step_changes", "", true, "step moves since creation" },
	{ "pace_us", "us", false, "gap between released writes (wc_policy delay)" },
	{ "waiting", "bios", false, "held now with their submitter waiting" },
	{ "deferred", "bios", false, "held now by the target alone" },
	{ "deferred_bytes", "bytes", false, "bytes held by the target now" },
	{ "deferred_bytes_max", "bytes", false, "most bytes ever held by the target" },
	{ "held_oldest_us", "us", false, "age of the oldest held bio" },
	{ "deferred_max_us", "us", false, "longest a bio was held by the target" },
	{ "slept", "bios", true, "writes whose submitter waited" },
	{ "deferred_total", "bios", true, "writes the target held" },
	{ "aged", "bios", true, "held writes let go for their age" },
	{ "overflow", "bios", true, "writes passed because the backlog was full" },
	{ "again", "bios", true, "REQ_NOWAIT writes refused" },
	{ "dirty_waits", "bios", true, "writes that saw a dirtier waiting" },
	{ "push_back", "", false, "submitters may wait in the target" },
	{ "backlog_kb", "KiB", false, "bound on bytes the target holds" },
	{ "backlog_ms", "ms", false, "age at which a held write goes" },
	{ "promoted", "bios", true, "held writes let go first for a sync write" },
	{ "enable", "", false, "option enable as set (the same as enabled)" },
	{ "wb_percent", "%", false, "option wb_percent as set" },
	{ "depth", "requests", false, "option depth as set (auto or fixed)" },
	{ "cache_delay_us", "us", false, "option cache_delay_us as set" },
	{ "lat_us", "us", false, "option lat_us as set (auto or a target)" },
	{ "held_us", "us", true, "total time bios were held" },
	{ "held_max_us", "us", false, "longest time a bio was held" },
	{ "flush_inflight", "requests", false, "cache flushes in flight: writeback waits" },
};

static const char *const wbt_suffix_units[][2] = {
	{ "_ns", "ns" }, { "_us", "us" }, { "_ms", "ms" },
	{ "_bytes", "bytes" }, { "_kb", "KiB" }, { "_pct", "%" },
};

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n > m && !strcmp(s + n - m, suffix);
}

static bool pat_match(const char *pat, const char *key)
{
	size_t n = strlen(pat);

	if (pat[0] == '*')
		return ends_with(key, pat + 1);
	if (pat[n - 1] == '*')
		return strlen(key) >= n && !strncmp(key, pat, n - 1);
	return !strcmp(pat, key);
}

static const struct wbt_field_info *field_find(const char *key)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(wbt_fields); i++)
		if (pat_match(wbt_fields[i].pat, key))
			return &wbt_fields[i];
	return NULL;
}

const char *wbt_field_unit(const char *key)
{
	const struct wbt_field_info *fi = field_find(key);
	size_t i;

	if (fi)
		return fi->unit;
	for (i = 0; i < ARRAY_SIZE(wbt_suffix_units); i++)
		if (ends_with(key, wbt_suffix_units[i][0]))
			return wbt_suffix_units[i][1];
	return "";
}

const char *wbt_field_help(const char *key)
{
	const struct wbt_field_info *fi = field_find(key);

	return fi ? fi->help : "";
}

bool wbt_field_is_counter(const char *key)
{
	const struct wbt_field_info *fi = field_find(key);

	return fi && fi->counter;
}

bool wbt_is_number(const char *s)
{
	if (*s == '-')
		s++;
	if (!*s)
		return false;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return false;
	return true;
}

/*
 * Split a status line into fields, in place, in order. A word without '='
 * becomes a field with an empty key; nothing is refused.
 */
int wbt_status_parse(char *params, struct wbt_field *f, int max)
{
	char *save = NULL, *w, *eq;
	int n = 0;

	for (w = strtok_r(params, " \t\n", &save); w && n < max;
	     w = strtok_r(NULL, " \t\n", &save)) {
		eq = strchr(w, '=');
		if (eq) {
			*eq = 0;
			f[n].key = w;
			f[n].val = eq + 1;
		} else {
			f[n].key = "";
			f[n].val = w;
		}
		n++;
	}
	return n;
}

const char *wbt_field_get(const struct wbt_field *f, int n, const char *key)
{
	int i;

	for (i = 0; i < n; i++)
		if (!strcmp(f[i].key, key))
			return f[i].val;
	return NULL;
}
