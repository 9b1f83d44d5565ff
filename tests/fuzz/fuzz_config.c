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
	for (i = 0; i < 64; i++)
		wbt_format_status(&core, size, status, (size_t)i * 64 % sizeof(status));
	free(text);
	return 0;
}
