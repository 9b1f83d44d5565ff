// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target for the option parser that the table line and
 * `dmsetup message` share: any words either set an option or leave the
 * config untouched with an error, and what wtc_config_format() prints
 * parses back to the same config.
 */
#include <stdlib.h>
#include <string.h>
#include "wbt_core.h"

static void check_roundtrip(const struct wtc_config *cfg)
{
	char buf[512], *save = NULL, *key, *val;
	struct wtc_config back;
	const char *err;

	wtc_config_default(&back);
	wtc_config_format(cfg, buf, sizeof(buf));
	for (key = strtok_r(buf, " ", &save); key;
	     key = strtok_r(NULL, " ", &save)) {
		val = strtok_r(NULL, " ", &save);
		if (wtc_config_set(&back, key, val, &err))
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
static void hold_some(struct wtc_core *c, const unsigned char *data,
		      size_t size)
{
	struct wtc_now now = { .ns = 1000000000ULL };
	struct wtc_io io = { 0 }, heads[WTC_NR_QUEUES];
	unsigned int grp;
	size_t i;
	u64 w;

	for (i = 0; i + 1 < size && i < 256; i += 2) {
		io.mode = data[i] & 3;
		io.bytes = (data[i + 1] + 1u) * 512;
		wtc_map(c, WTC_K_BG + data[i] % 4, &io, &now);
		if ((c->cfg.backlog_kb || c->acct.deferred_bytes) &&
		    c->acct.deferred_bytes > (u64)c->cfg.backlog_kb * 1024)
			abort();
	}
	memset(heads, 0, sizeof(heads));
	wtc_set_holding(c, false);
	for (i = 0; i < 1024; i++) {
		int q = wtc_dispatch(c, &now, heads, &grp, &w);

		if (q < 0)
			break;
	}
	if (!wtc_idle(c) && c->acct.queued[WTC_Q_BG] + c->acct.queued[WTC_Q_NORMAL] +
	    c->acct.queued[WTC_Q_SYNC] + c->acct.queued[WTC_Q_RECLAIM])
		abort();
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	struct wtc_config cfg, before;
	char *text, *words[24], *save = NULL, *w;
	const char *err;
	struct wtc_core core;
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

	wtc_config_default(&cfg);
	for (i = 0; i + 1 < n; i += 2) {
		before = cfg;
		if (wtc_config_set(&cfg, words[i], words[i + 1], &err)) {
			if (!err || memcmp(&before, &cfg, sizeof(cfg)))
				abort();
		} else if (err) {
			abort();
		}
	}
	check_roundtrip(&cfg);
	wtc_init(&core, &cfg);
	wtc_set_device(&core, size % 2048, size & 1, 256, size & 2);
	hold_some(&core, data, size);
	for (i = 0; i < 64; i++)
		wtc_format_status(&core, size, status, (size_t)i * 64 % sizeof(status));
	free(text);
	return 0;
}
