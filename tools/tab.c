// SPDX-License-Identifier: GPL-2.0-only
/*
 * /etc/wbthrottletab and the systemd generator that turns each of its lines
 * into a unit (see wbthrottletab(5)):
 *
 *	# name	lower device			options
 *	slow	/dev/disk/by-id/ata-ST4000DM004-XYZ	wb_percent=50,nofail
 *
 * Options are the table options as key=value, comma-separated; "-" or
 * "defaults" for none; "nofail" makes the device optional at boot,
 * "initramfs" has the initramfs create it (tools/initramfs/).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "wbthrottle.h"

#ifndef WBT_SBINDIR
#define WBT_SBINDIR "/usr/sbin"
#endif

/* A DM name that is also usable in a unit name and a file name. */
bool wbt_name_valid(const char *name)
{
	const char *c;

	if (!*name || strlen(name) > WBT_NAME_MAX || *name == '.' ||
	    *name == '-')
		return false;
	for (c = name; *c; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
		      (*c >= '0' && *c <= '9') || *c == '_' || *c == '-' ||
		      *c == '.'))
			return false;
	return true;
}

static int tab_opts(char *s, struct wbt_tab_entry *e, char *err, size_t len)
{
	char *save = NULL, *o, *key, *val, *copy;
	const char *canon;

	for (o = strtok_r(s, ",", &save); o; o = strtok_r(NULL, ",", &save)) {
		if (!strcmp(o, "-") || !strcmp(o, "defaults"))
			continue;
		if (!strcmp(o, "nofail")) {
			e->nofail = true;
			continue;
		}
		if (!strcmp(o, "initramfs")) {
			e->initramfs = true;
			continue;
		}
		if (e->nr_opts == WBT_TAB_MAX_OPTS) {
			snprintf(err, len, "too many options");
			return -1;
		}
		e->opts[e->nr_opts] = o;
		copy = strdup(o);
		if (!copy) {
			snprintf(err, len, "out of memory");
			return -1;
		}
		if (wbt_opt_split(copy, &key, &val, err, len) ||
		    wbt_opt_check(key, val, &canon, err, len) == WBT_OPT_BAD) {
			free(copy);
			return -1;
		}
		free(copy);
		e->nr_opts++;
	}
	return 0;
}

/*
 * Parse one line, in place: 0 and *e filled, 1 for a blank or comment
 * line, -1 with err saying what is wrong.
 */
int wbt_tab_parse_line(char *line, struct wbt_tab_entry *e,
		       char *err, size_t len)
{
	const char *ws = " \t\r\n";
	char *save = NULL, *opts;

	memset(e, 0, sizeof(*e));
	if (strchr(line, '#'))
		*strchr(line, '#') = 0;
	e->name = strtok_r(line, ws, &save);
	if (!e->name)
		return 1;
	e->dev = strtok_r(NULL, ws, &save);
	opts = strtok_r(NULL, ws, &save);
	if (!e->dev) {
		snprintf(err, len, "%s: no lower device", e->name);
		return -1;
	}
	if (strtok_r(NULL, ws, &save)) {
		snprintf(err, len, "%s: more than three fields (options are comma-separated)",
			 e->name);
		return -1;
	}
	if (!wbt_name_valid(e->name)) {
		snprintf(err, len, "'%s' is not a valid name (letters, digits, _ . -)",
			 e->name);
		return -1;
	}
	if (e->dev[0] != '/' && wbt_dev_spec_path(e->dev, NULL, 0)) {
		snprintf(err, len, "%s: '%s' is neither a path nor UUID=, PARTUUID=, LABEL=",
			 e->name, e->dev);
		return -1;
	}
	return opts ? tab_opts(opts, e, err, len) : 0;
}

/* UUID=x and friends as /dev/disk/by-... paths; a path stays as it is. */
int wbt_dev_spec_path(const char *spec, char *buf, size_t len)
{
	static const char *const map[][2] = {
		{ "UUID=", "/dev/disk/by-uuid/" },
		{ "PARTUUID=", "/dev/disk/by-partuuid/" },
		{ "LABEL=", "/dev/disk/by-label/" },
	};
	const char *rest = NULL, *dir = "";
	size_t i;
	int n;

	for (i = 0; i < ARRAY_SIZE(map) && !rest; i++) {
		if (!strncmp(spec, map[i][0], strlen(map[i][0]))) {
			rest = spec + strlen(map[i][0]);
			dir = map[i][1];
		}
	}
	if (!rest && spec[0] != '/')
		return -1;
	if (rest && (!*rest || strchr(rest, '/')))
		return -1;
	if (!buf)
		return 0;
	n = snprintf(buf, len, "%s%s", dir, rest ? rest : spec);
	return n < 0 || (size_t)n >= len ? -1 : 0;
}

/* systemd's unit_name_path_escape(), as "systemd-escape -p" does. */
int wbt_unit_escape_path(const char *path, char *buf, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	size_t o = 0;
	const char *p;

	while (*path == '/')
		path++;
	for (p = path; *p; p++) {
		unsigned char c = *p;

		if (c == '/' && (p[1] == '/' || !p[1]))
			continue;	/* "//" and a trailing '/' */
		if (o + 5 > len)
			return -1;
		if (c == '/') {
			buf[o++] = '-';
		} else if (((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			    (c >= '0' && c <= '9') || c == ':' || c == '_' ||
			    c == '.') && !(c == '.' && o == 0)) {
			buf[o++] = c;
		} else {
			buf[o++] = '\\';
			buf[o++] = 'x';
			buf[o++] = hex[c >> 4];
			buf[o++] = hex[c & 15];
		}
	}
	if (!o) {
		if (len < 2)
			return -1;
		buf[o++] = '-';
	}
	buf[o] = 0;
	return 0;
}

/* An ExecStart= word: '%' is a specifier, '\' an escape. */
static void put_exec_word(FILE *f, const char *w)
{
	fputc(' ', f);
	for (; *w; w++) {
		if (*w == '%' || *w == '\\')
			fputc(*w, f);
		fputc(*w, f);
	}
}

static int gen_unit(const char *dir, const char *tab,
		    const struct wbt_tab_entry *e)
{
	char path[WBT_PATH_LEN], dev[WBT_PATH_LEN], unit[WBT_PATH_LEN];
	const char *want = e->nofail ? "wants" : "requires";
	FILE *f;
	int i;

	if (wbt_dev_spec_path(e->dev, dev, sizeof(dev)) ||
	    wbt_unit_escape_path(dev, unit, sizeof(unit)))
		return -1;
	snprintf(path, sizeof(path), "%s/wbthrottle-%s.service", dir, e->name);
	f = fopen(path, "w");
	if (!f)
		return -1;
	fprintf(f, "# Generated by wbthrottle-generator from %s\n"
		"[Unit]\n"
		"Description=wbthrottle device %s on %s\n"
		"Documentation=man:wbthrottletab(5) man:wbthrottle(8)\n"
		"SourcePath=%s\n"
		"DefaultDependencies=no\n"
		"IgnoreOnIsolate=yes\n"
		"BindsTo=%s.device\n"
		"After=%s.device systemd-modules-load.service\n"
		"Before=local-fs-pre.target umount.target\n"
		"Conflicts=umount.target\n\n"
		"[Service]\n"
		"Type=oneshot\n"
		"RemainAfterExit=yes\n"
		"ExecStart=" WBT_SBINDIR "/wbthrottle create --exist-ok",
		tab, e->name, e->dev, tab, unit, unit);
	put_exec_word(f, e->name);
	put_exec_word(f, dev);
	for (i = 0; i < e->nr_opts; i++)
		put_exec_word(f, e->opts[i]);
	fprintf(f, "\nExecStop=" WBT_SBINDIR "/wbthrottle remove");
	put_exec_word(f, e->name);
	fputc('\n', f);
	if (fclose(f))
		return -1;

	snprintf(path, sizeof(path), "%s/local-fs.target.%s", dir, want);
	if (mkdir(path, 0755) && errno != EEXIST)
		return -1;
	snprintf(path, sizeof(path), "%s/local-fs.target.%s/wbthrottle-%s.service",
		 dir, want, e->name);
	snprintf(unit, sizeof(unit), "../wbthrottle-%s.service", e->name);
	unlink(path);
	return symlink(unit, path);
}

/*
 * The generator: one unit per tab line in dir. A bad line is reported
 * and skipped, so that one typo does not stop the other devices.
 */
int wbt_generate(const char *tab, const char *dir)
{
	char err[WBT_ERR_LEN];
	struct wbt_tab_entry e;
	char *line = NULL;
	size_t cap = 0;
	int nr = 0, r = 0;
	FILE *f;

	f = fopen(tab, "r");
	if (!f)
		return errno == ENOENT ? 0 : -1;
	while (getline(&line, &cap, f) > 0) {
		nr++;
		switch (wbt_tab_parse_line(line, &e, err, sizeof(err))) {
		case 1:
			continue;
		case -1:
			fprintf(stderr, "wbthrottle-generator: %s:%d: %s\n",
				tab, nr, err);
			r = -1;
			continue;
		}
		if (gen_unit(dir, tab, &e)) {
			fprintf(stderr, "wbthrottle-generator: %s:%d: cannot write the unit for %s: %m\n",
				tab, nr, e.name);
			r = -1;
		}
	}
	free(line);
	fclose(f);
	return r;
}
