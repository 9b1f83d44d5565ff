/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The wbthrottle command: what its parts share. opts.c (options, status
 * fields) and tab.c (the tab file, the systemd generator) use no
 * libdevmapper, so tools/test_tools.c tests them alone; dm.c is the
 * kernel side, wbthrottle.c the commands.
 */
#ifndef WBTHROTTLE_H
#define WBTHROTTLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

enum {
	WBT_ERR_LEN = 256,	/* an error message in words */
	WBT_NAME_MAX = 127,	/* DM_NAME_LEN - 1 */
	WBT_MAX_FIELDS = 256,	/* status fields parsed */
	WBT_TAB_MAX_OPTS = 32,	/* options on one tab line */
	WBT_PATH_LEN = 4096,
};

/* opts.c: the table options */
enum wbt_opt_verdict {
	WBT_OPT_OK,		/* known key, valid value */
	WBT_OPT_UNKNOWN,	/* key unknown here: the kernel decides */
	WBT_OPT_BAD,		/* refused, err says why */
};

enum wbt_opt_verdict wbt_opt_check(const char *key, const char *val,
				   const char **canon, char *err, size_t len);
int wbt_opt_split(char *arg, char **key, char **val, char *err, size_t len);
void wbt_opt_print_help(void);

/* opts.c: the status line */
struct wbt_field {
	const char *key;
	const char *val;
};

int wbt_status_parse(char *params, struct wbt_field *f, int max);
const char *wbt_field_unit(const char *key);
const char *wbt_field_help(const char *key);
bool wbt_field_is_counter(const char *key);
bool wbt_is_number(const char *s);
const char *wbt_field_get(const struct wbt_field *f, int n, const char *key);

/* tab.c */
struct wbt_tab_entry {
	char *name;
	char *dev;			/* as written: a path or UUID=... */
	char *opts[WBT_TAB_MAX_OPTS];	/* key=value */
	int nr_opts;
	bool nofail;			/* boot goes on without it */
	bool initramfs;			/* created in the initramfs too */
	int line;
};

bool wbt_name_valid(const char *name);
int wbt_tab_parse_line(char *line, struct wbt_tab_entry *e,
		       char *err, size_t len);
int wbt_dev_spec_path(const char *spec, char *buf, size_t len);
int wbt_unit_escape_path(const char *path, char *buf, size_t len);
int wbt_generate(const char *tab, const char *dir);

/* wbthrottle.c */
__attribute__((format(printf, 1, 2))) void wbt_err(const char *fmt, ...);
__attribute__((format(printf, 1, 2))) void wbt_warn(const char *fmt, ...);

/* dm.c: one wbthrottle device */
struct wbt_dev {
	char name[WBT_NAME_MAX + 1];
	unsigned int major, minor;
	uint64_t start, sectors;
	char lower[32];			/* major:minor, from the table */
	char *table;			/* "<lower> [<#opt> <key> <value>...]" */
	char *status;			/* parsed in place into f[] */
	struct wbt_field f[WBT_MAX_FIELDS];
	int nf;
};

void wbt_dm_init(void);
int wbt_dm_exists(const char *name);
int wbt_dm_create(const char *name, uint64_t sectors, const char *params);
int wbt_dm_remove(const char *name);
int wbt_dm_message(const char *name, const char *msg);
char **wbt_dm_list(void);
int wbt_dev_load(const char *name, struct wbt_dev *d);
void wbt_dev_free(struct wbt_dev *d);
int wbt_lower_size(const char *path, uint64_t *sectors, dev_t *rdev);
void wbt_lower_wbt_off(const char *name, dev_t rdev);
void wbt_lower_wbt_restore(const char *name);

#endif /* WBTHROTTLE_H */
