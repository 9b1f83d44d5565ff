// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target for the wbthrottle command's parsers of untrusted text:
 * a wbthrottletab line either parses into a valid entry or says why not,
 * a status line splits into fields without refusing anything, and unit
 * name escaping gives only characters systemd allows.
 */
#include <stdlib.h>
#include <string.h>
#include "tools/wbthrottle.h"

void wbt_err(const char *fmt, ...) { (void)fmt; }
void wbt_warn(const char *fmt, ...) { (void)fmt; }

static void check_tab(char *text)
{
	char err[WBT_ERR_LEN] = "", kv[512], *key, *val;
	struct wbt_tab_entry e;
	const char *canon;
	int i, r;

	r = wbt_tab_parse_line(text, &e, err, sizeof(err));
	if (r == -1 && !err[0])
		abort();
	if (r != 0)
		return;
	if (!wbt_name_valid(e.name) || !e.dev || e.nr_opts > WBT_TAB_MAX_OPTS)
		abort();
	for (i = 0; i < e.nr_opts; i++) {
		if (strlen(e.opts[i]) >= sizeof(kv))
			continue;
		strcpy(kv, e.opts[i]);
		if (wbt_opt_split(kv, &key, &val, err, sizeof(err)) ||
		    wbt_opt_check(key, val, &canon, err, sizeof(err)) ==
		    WBT_OPT_BAD)
			abort();
	}
}

static void check_status(char *text, size_t words)
{
	struct wbt_field f[WBT_MAX_FIELDS];
	int n = wbt_status_parse(text, f, WBT_MAX_FIELDS), i;

	if (n < 0 || (size_t)n > words)
		abort();
	for (i = 0; i < n; i++)
		if (!f[i].key || !f[i].val || !wbt_field_unit(f[i].key) ||
		    !wbt_field_help(f[i].key))
			abort();
}

static void check_escape(const char *text)
{
	char out[8192];
	const char *c;

	if (wbt_unit_escape_path(text, out, sizeof(out)))
		return;
	for (c = out; *c; c++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
			    "0123456789:_.\\-", *c))
			abort();
	if (out[0] == '.')
		abort();
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	char *a, *b;
	size_t i, words = 0;

	if (size > 2048)
		return 0;
	a = malloc(size + 1);
	b = malloc(size + 1);
	if (!a || !b)
		goto out;
	memcpy(a, data, size);
	a[size] = 0;
	memcpy(b, a, size + 1);
	for (i = 0; i < size; i++)
		words += (i == 0 || strchr(" \t\n", a[i - 1])) &&
			 !strchr(" \t\n", a[i]);
	check_escape(a);
	check_status(b, words);
	check_tab(a);
out:
	free(a);
	free(b);
	return 0;
}
