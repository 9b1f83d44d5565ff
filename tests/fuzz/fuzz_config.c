// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target for the option parser that the table line and
 * `dmsetup message` share: any words either set an option or leave the
 * config untouched with an error, and what wbt_config_format() prints
 * parses back to the same config.
 */
#include <stdlib.h>
#include <string.h>
#include "wbt_core.h"

static void check_roundtrip(const struct wbt_config *cfg)
{
	char buf[512], *save = NULL, *key, *val;
	struct wbt_config back;
	const char *err;

	wbt_config_default(&back);
	wbt_config_format(cfg, buf, sizeof(buf));
	for (key = strtok_r(buf, " ", &save); key;
	     key = strtok_r(NULL, " ", &save)) {
		val = strtok_r(NULL, " ", &save);
		if (wbt_config_set(&back, key, val, &err))
			abort();
	}
	if (memcmp(&back, cfg, sizeof(back)))
		abort();
}

/*
 * Map writes as the input bytes say (kind, how the submitter may be held,
 * size) and let them go again: whatever the options, the deferred backlog
 * stays within backlog_kb, and everything held can be let go.
 */
static void hold_some(struct wbt_core *c, const unsigned char *data,
		      size_t size)
{
	struct wbt_now now = { .ns = 1000000000ULL };
	struct wbt_io io = { 0 }, heads[WBT_NR_QUEUES];
	unsigned int grp;
	size_t i;
	u64 w;

	for (i = 0; i + 1 < size && i < 256; i += 2) {
		io.mode = data[i] & 3;
		io.bytes = (data[i + 1] + 1u) * 512;
		wbt_map(c, WBT_K_BG + data[i] % 4, &io, &now);
		if ((c->cfg.backlog_kb || c->deferred_bytes) &&
		    c->deferred_bytes > (u64)c->cfg.backlog_kb * 1024)
			abort();
	}
	memset(heads, 0, sizeof(heads));
	wbt_set_holding(c, false);
	for (i = 0; i < 1024; i++) {
		int q = wbt_dispatch(c, &now, heads, &grp, &w);

		if (q < 0)
			break;
	}
	if (!wbt_idle(c) && c->queued[WBT_Q_BG] + c->queued[WBT_Q_NORMAL] +
	    c->queued[WBT_Q_SYNC] + c->queued[WBT_Q_RECLAIM])
		abort();
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	struct wbt_config cfg, before;
	char *text, *words[24], *save = NULL, *w;
	const char *err;
	struct wbt_core core;
	char status[4096];
	int n = 0, i;

	text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = 0;
	for (w = strtok_r(text, " \n", &save); w && n < 24;
	     w = strtok_r(NULL, " \n", &save))
		words[n++] = w;

	wbt_config_default(&cfg);
	for (i = 0; i + 1 < n; i += 2) {
		before = cfg;
		if (wbt_config_set(&cfg, words[i], words[i + 1], &err)) {
			if (!err || memcmp(&before, &cfg, sizeof(cfg)))
				abort();
		} else if (err) {
			abort();
		}
	}
	check_roundtrip(&cfg);
	wbt_init(&core, &cfg);
	wbt_set_device(&core, size % 2048, size & 1, 256, size & 2);
	hold_some(&core, data, size);
	for (i = 0; i < 64; i++)
		wbt_format_status(&core, size, status, (size_t)i * 64 % sizeof(status));
	free(text);
	return 0;
}
