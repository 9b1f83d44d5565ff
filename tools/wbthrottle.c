// SPDX-License-Identifier: GPL-2.0-only
/*
 * wbthrottle: create, tune, watch and remove dm-wbthrottle devices; see
 * wbthrottle(8). Invoked as wbthrottle-generator it is the systemd
 * generator for /etc/wbthrottletab.
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "wbthrottle.h"

#define WBT_TAB "/etc/wbthrottletab"

static const char *const queues[] = {
	"reclaim", "sync", "normal", "bg", "discard"
};

void wbt_err(const char *fmt, ...)
{
	va_list ap;

	fputs("wbthrottle: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void wbt_warn(const char *fmt, ...)
{
	va_list ap;

	fputs("wbthrottle: warning: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static int usage(void)
{
	fprintf(stderr,
		"usage: wbthrottle create [--exist-ok] NAME DEVICE [key=value...]\n"
		"       wbthrottle remove NAME\n"
		"       wbthrottle set NAME key=value...\n"
		"       wbthrottle status [NAME] [--json]\n"
		"       wbthrottle list\n"
		"       wbthrottle watch NAME [INTERVAL [COUNT]]\n"
		"       wbthrottle metrics [--textfile DIR]\n"
		"       wbthrottle tab [--initramfs] [FILE]\n"
		"DEVICE is a path or UUID=, PARTUUID=, LABEL=. Options:\n");
	wbt_opt_print_help();
	return 2;
}

/*
 * Check key=value arguments and append " key value" for each to out.
 * Returns the number of words, or -1 after saying what is wrong.
 */
static int build_opts(char **argv, int argc, char *out, size_t len)
{
	char err[WBT_ERR_LEN], *arg, *key, *val;
	const char *canon;
	size_t pos = strlen(out);
	int i, r = 0;

	for (i = 0; i < argc; i++) {
		arg = strdup(argv[i]);
		if (!arg || wbt_opt_split(arg, &key, &val, err, sizeof(err))) {
			wbt_err("%s", arg ? err : "out of memory");
			free(arg);
			return -1;
		}
		switch (wbt_opt_check(key, val, &canon, err, sizeof(err))) {
		case WBT_OPT_BAD:
			wbt_err("%s", err);
			free(arg);
			return -1;
		case WBT_OPT_UNKNOWN:
			wbt_warn("%s", err);
			break;
		case WBT_OPT_OK:
			break;
		}
		pos += snprintf(out + pos, pos < len ? len - pos : 0, " %s %s",
				canon, val);
		free(arg);
		r += 2;
	}
	if (pos >= len) {
		wbt_err("too many options");
		return -1;
	}
	return r;
}

static int create(const char *name, const char *spec, char **opts, int nr,
		  bool exist_ok)
{
	char path[WBT_PATH_LEN], kv[2048] = "", params[WBT_PATH_LEN + 2100];
	uint64_t sectors;
	dev_t rdev;
	int words;

	if (!wbt_name_valid(name)) {
		wbt_err("'%s' is not a valid name (letters, digits, _ . -)", name);
		return 1;
	}
	if (wbt_dev_spec_path(spec, path, sizeof(path))) {
		wbt_err("'%s' is neither a path nor UUID=, PARTUUID=, LABEL=", spec);
		return 1;
	}
	words = build_opts(opts, nr, kv, sizeof(kv));
	if (words < 0)
		return 1;
	if (wbt_lower_size(path, &sectors, &rdev))
		return 1;
	switch (wbt_dm_exists(name)) {
	case 1:
		if (exist_ok)
			return 0;
		wbt_err("%s already exists", name);
		return 1;
	case -1:
		return 1;
	}
	if (words)
		snprintf(params, sizeof(params), "%s %d%s", path, words, kv);
	else
		snprintf(params, sizeof(params), "%s", path);
	if (wbt_dm_create(name, sectors, params))
		return 1;
	wbt_lower_wbt_off(name, rdev);
	return 0;
}

static int cmd_create(int argc, char **argv)
{
	bool exist_ok = argc > 1 && !strcmp(argv[1], "--exist-ok");

	argc -= exist_ok;
	argv += exist_ok;
	if (argc < 3)
		return usage();
	return create(argv[1], argv[2], argv + 3, argc - 3, exist_ok);
}

static int cmd_remove(int argc, char **argv)
{
	if (argc != 2)
		return usage();
	switch (wbt_dm_exists(argv[1])) {
	case 0:
		wbt_err("%s: no such device", argv[1]);
		/* fallthrough */
	case -1:
		return 1;
	}
	if (wbt_dm_remove(argv[1]))
		return 1;
	wbt_lower_wbt_restore(argv[1]);
	return 0;
}

/* All options are checked before the first message goes. */
static int cmd_set(int argc, char **argv)
{
	char kv[2048] = "", *p, *next;

	if (argc < 3)
		return usage();
	if (build_opts(argv + 2, argc - 2, kv, sizeof(kv)) < 0)
		return 1;
	switch (wbt_dm_exists(argv[1])) {
	case 0:
		wbt_err("%s: no such device", argv[1]);
		/* fallthrough */
	case -1:
		return 1;
	}
	/* kv is " k1 v1 k2 v2 ...": one message per pair. */
	for (p = kv + 1; p && *p; p = next) {
		next = strchr(strchr(p, ' ') + 1, ' ');
		if (next)
			*next++ = 0;
		if (wbt_dm_message(argv[1], p))
			return 1;
	}
	return 0;
}

/* ---- status ------------------------------------------------------------- */

static void json_str(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			printf("\\%c", *s);
		else if ((unsigned char)*s < ' ')
			printf("\\u%04x", *s);
		else
			putchar(*s);
	}
	putchar('"');
}

static void json_dev(const struct wbt_dev *d)
{
	int i;

	printf("{\"name\": ");
	json_str(d->name);
	printf(", \"dev\": \"%u:%u\", \"sectors\": %llu, \"lower\": ",
	       d->major, d->minor, (unsigned long long)d->sectors);
	json_str(d->lower);
	printf(", \"table\": ");
	json_str(d->table);
	printf(", \"fields\": {");
	for (i = 0; i < d->nf; i++) {
		printf("%s\n  ", i ? "," : "");
		if (*d->f[i].key)
			json_str(d->f[i].key);
		else
			printf("\"_%d\"", i);
		printf(": {\"value\": ");
		if (wbt_is_number(d->f[i].val))
			printf("%s", d->f[i].val);
		else
			json_str(d->f[i].val);
		printf(", \"unit\": ");
		json_str(wbt_field_unit(d->f[i].key));
		printf(", \"description\": ");
		json_str(wbt_field_help(d->f[i].key));
		putchar('}');
	}
	printf("}}");
}

static void text_dev(const struct wbt_dev *d)
{
	char v[96];
	int i;

	printf("%s: /dev/mapper/%s (%u:%u), %llu sectors, table: %s\n",
	       d->name, d->name, d->major, d->minor,
	       (unsigned long long)d->sectors, d->table);
	for (i = 0; i < d->nf; i++) {
		snprintf(v, sizeof(v), "%s %s", d->f[i].val,
			 wbt_field_unit(d->f[i].key));
		printf("  %-20s %-20s %s\n", d->f[i].key, v,
		       wbt_field_help(d->f[i].key));
	}
}

/* Load NAME, or every wbthrottle device when name is NULL. */
static struct wbt_dev *load(const char *name, int *nr)
{
	char **names = NULL, *one[2] = { (char *)name, NULL };
	struct wbt_dev *d;
	int i, n = 0;

	if (!name) {
		names = wbt_dm_list();
		if (!names)
			return NULL;
	}
	for (i = 0; (names ? names : one)[i]; i++)
		n++;
	d = calloc(n + 1, sizeof(*d));
	for (i = 0; d && i < n; i++) {
		if (wbt_dev_load((names ? names : one)[i], &d[i])) {
			while (i--)
				wbt_dev_free(&d[i]);
			free(d);
			d = NULL;
		}
	}
	for (i = 0; names && names[i]; i++)
		free(names[i]);
	free(names);
	*nr = n;
	return d;
}

static void unload(struct wbt_dev *d, int n)
{
	while (n--)
		wbt_dev_free(&d[n]);
	free(d);
}

static int cmd_status(int argc, char **argv)
{
	const char *name = NULL;
	bool json = false;
	struct wbt_dev *d;
	int i, n;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--json"))
			json = true;
		else if (!name && argv[i][0] != '-')
			name = argv[i];
		else
			return usage();
	}
	d = load(name, &n);
	if (!d)
		return 1;
	if (json && !name)
		putchar('[');
	for (i = 0; i < n; i++) {
		if (json) {
			printf("%s", i ? ",\n" : "");
			json_dev(&d[i]);
		} else {
			text_dev(&d[i]);
		}
	}
	if (json)
		printf("%s\n", name ? "" : "]");
	unload(d, n);
	return 0;
}

static int cmd_list(int argc, char **argv)
{
	struct wbt_dev *d;
	int i, n;

	(void)argv;
	if (argc != 1)
		return usage();
	d = load(NULL, &n);
	if (!d)
		return 1;
	for (i = 0; i < n; i++)
		printf("%s\t%s\n", d[i].name, d[i].table);
	unload(d, n);
	return 0;
}

/* ---- metrics ------------------------------------------------------------ */

static void metric_name(const char *key, char *buf, size_t len)
{
	snprintf(buf, len, "wbthrottle_%s%s", key,
		 wbt_field_is_counter(key) ? "_total" : "");
}

/* One family per numeric field (of the first device), every device in it. */
static void metrics(FILE *o, const struct wbt_dev *d, int n)
{
	char m[160];
	const char *v;
	int i, j;

	for (i = 0; n && i < d[0].nf; i++) {
		const char *key = d[0].f[i].key;

		if (!*key || !wbt_is_number(d[0].f[i].val))
			continue;
		metric_name(key, m, sizeof(m));
		fprintf(o, "# HELP %s %s%s%s%s\n", m,
			*wbt_field_help(key) ? wbt_field_help(key) : key,
			*wbt_field_unit(key) ? " (" : "", wbt_field_unit(key),
			*wbt_field_unit(key) ? ")" : "");
		fprintf(o, "# TYPE %s %s\n", m,
			wbt_field_is_counter(key) ? "counter" : "gauge");
		for (j = 0; j < n; j++) {
			v = wbt_field_get(d[j].f, d[j].nf, key);
			if (v && wbt_is_number(v))
				fprintf(o, "%s{device=\"%s\"} %s\n", m,
					d[j].name, v);
		}
	}
	fprintf(o, "# HELP wbthrottle_info Lower device and word-valued status fields\n"
		"# TYPE wbthrottle_info gauge\n");
	for (j = 0; j < n; j++) {
		fprintf(o, "wbthrottle_info{device=\"%s\",lower=\"%s\"",
			d[j].name, d[j].lower);
		for (i = 0; i < d[j].nf; i++)
			if (*d[j].f[i].key && !wbt_is_number(d[j].f[i].val))
				fprintf(o, ",%s=\"%s\"", d[j].f[i].key,
					d[j].f[i].val);
		fprintf(o, "} 1\n");
	}
}

/* node-exporter's textfile collector reads DIR/NAME.prom: replace it whole. */
static int metrics_textfile(const char *dir, const struct wbt_dev *d, int n)
{
	char tmp[WBT_PATH_LEN], dst[WBT_PATH_LEN];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s/.wbthrottle.prom.%d", dir, getpid());
	snprintf(dst, sizeof(dst), "%s/wbthrottle.prom", dir);
	f = fopen(tmp, "w");
	if (!f) {
		wbt_err("%s: %m", tmp);
		return 1;
	}
	metrics(f, d, n);
	if (fclose(f) || rename(tmp, dst)) {
		wbt_err("%s: %m", dst);
		unlink(tmp);
		return 1;
	}
	return 0;
}

static int cmd_metrics(int argc, char **argv)
{
	struct wbt_dev *d;
	int n, r = 0;

	if (argc != 1 && !(argc == 3 && !strcmp(argv[1], "--textfile")))
		return usage();
	d = load(NULL, &n);
	if (!d)
		return 1;
	if (argc == 3)
		r = metrics_textfile(argv[2], d, n);
	else
		metrics(stdout, d, n);
	unload(d, n);
	return r;
}

/* ---- watch -------------------------------------------------------------- */

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static unsigned long long num(const struct wbt_dev *d, const char *key)
{
	const char *v = wbt_field_get(d->f, d->nf, key);

	return v ? strtoull(v, NULL, 10) : 0;
}

static const char *word(const struct wbt_dev *d, const char *key)
{
	const char *v = wbt_field_get(d->f, d->nf, key);

	return v ? v : "?";
}

static bool shown(const char *key)
{
	static const char *const keys[] = {
		"enabled", "holding", "qd", "wc", "wc_policy", "depth_mode",
		"max", "normal", "background", "step", "held_ns",
		"held_max_ns", "lat_target_us", "lat_pct", "scaling", "win_us",
		"win_reads", "win_writes", "read_min_us", "read_p50_us",
		"read_p99_us", "verdict", "pace_us", "windows", "exceeded",
		"step_changes", "waiting", "deferred", "deferred_bytes",
		"deferred_bytes_max", "held_oldest_us", "flush_inflight",
		/* the same facts under their newer names */
		"enable", "depth", "lat_us", "held_us", "held_max_us",
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(keys); i++)
		if (!strcmp(key, keys[i]))
			return true;
	for (i = 0; i < 5; i++) {
		const char *s = key + strlen(queues[i]);

		if (strncmp(key, queues[i], strlen(queues[i])) || *s != '_')
			continue;
		return !strcmp(s, "_queued") || !strcmp(s, "_inflight") ||
		       !strcmp(s, "_hwm") || !strcmp(s, "_throttled");
	}
	/* Counters per kind: in status and metrics, not on this screen. */
	return !strncmp(key, "n_", 2) || !strcmp(key, "merged");
}

static void watch_queues(const struct wbt_dev *d, const struct wbt_dev *p,
			 double secs)
{
	static const char *const limit[] = {
		"max", "max", "normal", "background", "background"
	};
	char k[64];
	int i;

	printf("\n%-8s %8s %9s %6s %6s %12s\n", "queue", "held", "inflight",
	       "limit", "hwm", "throttled/s");
	for (i = 0; i < 5; i++) {
		unsigned long long t, t0;

		snprintf(k, sizeof(k), "%s_throttled", queues[i]);
		t = num(d, k);
		t0 = p ? num(p, k) : t;
		snprintf(k, sizeof(k), "%s_queued", queues[i]);
		printf("%-8s %8llu", queues[i], num(d, k));
		snprintf(k, sizeof(k), "%s_inflight", queues[i]);
		printf(" %9llu %6llu", num(d, k), num(d, limit[i]));
		snprintf(k, sizeof(k), "%s_hwm", queues[i]);
		printf(" %6llu %12.1f\n", num(d, k), (t - t0) / secs);
	}
}

static void watch_screen(const struct wbt_dev *d, const struct wbt_dev *p,
			 double secs)
{
	unsigned long long held = 0, waits = 0;
	int i;

	if (p) {
		for (i = 0; i < 5; i++) {
			char k[64];

			snprintf(k, sizeof(k), "%s_throttled", queues[i]);
			waits += num(d, k) - num(p, k);
		}
		held = num(d, "held_ns") - num(p, "held_ns");
	}
	if (isatty(STDOUT_FILENO))
		printf("\033[H\033[2J");
	printf("%s on %s  enabled %s  step %s  depth %s (max %llu normal %llu background %llu)  qd %llu  wc %llu %s\n",
	       d->name, d->lower, word(d, "enabled"),
	       word(d, "step"), word(d, "depth_mode"), num(d, "max"),
	       num(d, "normal"), num(d, "background"), num(d, "qd"),
	       num(d, "wc"), word(d, "wc_policy"));
	watch_queues(d, p, secs);
	printf("\nreads, last window (%llu ms, %llu reads, %llu writes): min %.1f ms  p50 %.1f ms  p99 %.1f ms  target %.1f ms: %s\n",
	       num(d, "win_us") / 1000, num(d, "win_reads"),
	       num(d, "win_writes"), num(d, "read_min_us") / 1e3,
	       num(d, "read_p50_us") / 1e3, num(d, "read_p99_us") / 1e3,
	       num(d, "lat_target_us") / 1e3, word(d, "verdict"));
	printf("windows %llu, exceeded %llu, step changes %llu\n",
	       num(d, "windows"), num(d, "exceeded"), num(d, "step_changes"));
	printf("held: %llu waits this interval, mean %.1f ms; longest ever %.1f ms; pace %.1f ms\n",
	       waits, waits ? held / 1e6 / waits : 0.0,
	       num(d, "held_max_ns") / 1e6, num(d, "pace_us") / 1e3);
	if (wbt_field_get(d->f, d->nf, "deferred_bytes"))
		printf("backlog: %llu waiting, %llu held by the target, %.1f MiB (most %.1f MiB); oldest held %.1f ms\n",
		       num(d, "waiting"), num(d, "deferred"),
		       num(d, "deferred_bytes") / 1048576.0,
		       num(d, "deferred_bytes_max") / 1048576.0,
		       num(d, "held_oldest_us") / 1e3);
	/* Fields this screen does not know yet. */
	for (i = 0; i < d->nf; i++)
		if (*d->f[i].key && !shown(d->f[i].key))
			printf("%s %s%s%s   ", d->f[i].key, d->f[i].val,
			       *wbt_field_unit(d->f[i].key) ? " " : "",
			       wbt_field_unit(d->f[i].key));
	putchar('\n');
	fflush(stdout);
}

static int cmd_watch(int argc, char **argv)
{
	struct wbt_dev d[2];
	double secs = argc > 2 ? strtod(argv[2], NULL) : 1.0;
	long count = argc > 3 ? strtol(argv[3], NULL, 10) : -1;
	struct timespec ts;
	int cur = 0, have_prev = 0;

	if (argc < 2 || argc > 4 || secs < 0.1 || count == 0) {
		if (argc >= 2 && argc <= 4)
			wbt_err("INTERVAL is at least 0.1 s, COUNT at least 1");
		return usage();
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	ts.tv_sec = (time_t)secs;
	ts.tv_nsec = (long)((secs - ts.tv_sec) * 1e9);
	while (!stop) {
		if (wbt_dev_load(argv[1], &d[cur]))
			return 1;
		watch_screen(&d[cur], have_prev ? &d[!cur] : NULL, secs);
		if (have_prev)
			wbt_dev_free(&d[!cur]);
		have_prev = 1;
		cur = !cur;
		if (count > 0 && !--count)
			break;
		nanosleep(&ts, NULL);
	}
	wbt_dev_free(&d[!cur]);
	return 0;
}

/* ---- tab ---------------------------------------------------------------- */

/* Create the tab's devices (with --initramfs: those marked initramfs). */
static int cmd_tab(int argc, char **argv)
{
	bool initramfs = argc > 1 && !strcmp(argv[1], "--initramfs");
	const char *tab = argc > 1 + initramfs ? argv[1 + initramfs] : WBT_TAB;
	char err[WBT_ERR_LEN], *line = NULL;
	struct wbt_tab_entry e;
	size_t cap = 0;
	int nr = 0, r = 0;
	FILE *f;

	if (argc > 2 + initramfs)
		return usage();
	f = fopen(tab, "r");
	if (!f) {
		wbt_err("%s: %m", tab);
		return 1;
	}
	while (getline(&line, &cap, f) > 0) {
		nr++;
		switch (wbt_tab_parse_line(line, &e, err, sizeof(err))) {
		case 1:
			continue;
		case -1:
			wbt_err("%s:%d: %s", tab, nr, err);
			r = 1;
			continue;
		}
		if (initramfs && !e.initramfs)
			continue;
		if (wbt_dm_exists(e.name) == 1) {
			printf("%s: already active\n", e.name);
			continue;
		}
		if (create(e.name, e.dev, e.opts, e.nr_opts, true))
			r = 1;
		else
			printf("%s: created on %s\n", e.name, e.dev);
	}
	free(line);
	fclose(f);
	return r;
}

static int generator(int argc, char **argv)
{
	const char *tab = getenv("WBTHROTTLETAB");

	if (argc != 2 && argc != 4) {
		fprintf(stderr, "usage: wbthrottle-generator NORMAL_DIR [EARLY_DIR LATE_DIR]\n");
		return 2;
	}
	return wbt_generate(tab ? tab : WBT_TAB, argv[1]) ? 1 : 0;
}

static const struct {
	const char *name;
	int (*fn)(int argc, char **argv);
} cmds[] = {
	{ "create", cmd_create },
	{ "remove", cmd_remove },
	{ "set", cmd_set },
	{ "status", cmd_status },
	{ "list", cmd_list },
	{ "watch", cmd_watch },
	{ "metrics", cmd_metrics },
	{ "tab", cmd_tab },
};

int main(int argc, char **argv)
{
	const char *self = strrchr(argv[0], '/');
	size_t i;

	self = self ? self + 1 : argv[0];
	if (!strcmp(self, "wbthrottle-generator"))
		return generator(argc, argv);
	if (argc < 2)
		return usage();
	wbt_dm_init();
	for (i = 0; i < ARRAY_SIZE(cmds); i++)
		if (!strcmp(argv[1], cmds[i].name))
			return cmds[i].fn(argc - 1, argv + 1);
	if (strcmp(argv[1], "-h") && strcmp(argv[1], "--help"))
		wbt_err("unknown command '%s'", argv[1]);
	return usage();
}
