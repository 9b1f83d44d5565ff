// SPDX-License-Identifier: GPL-2.0-only
/*
 * What the unit tests of wbt_core share: the failure record, the fixture
 * (a core on a fake device, with a fake clock) and its verbs, a PRNG, and
 * a check and a reader of formatted output. See test_helpers.h.
 */
#include "test_helpers.h"

bool failed;
char fail_msg[1024];

void fail_at(const char *file, int line, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (failed)
		return;
	failed = true;
	n = snprintf(fail_msg, sizeof(fail_msg), "%s:%d: ", file, line);
	va_start(ap, fmt);
	vsnprintf(fail_msg + n, sizeof(fail_msg) - n, fmt, ap);
	va_end(ap);
}

/* Set one option; the test fails if it is refused. */
void opt(struct wtc_config *cfg, const char *key, const char *val)
{
	const char *err = "unset";

	CHECKF(!wtc_config_set(cfg, key, val, &err), "%s %s refused: %s",
	       key, val, err ? err : "(null)");
	CHECKF(!err, "%s %s: err is \"%s\" after success", key, val, err);
}

/* The one place that knows wtc_set_device()'s signature; rotational: no. */
bool set_device(struct wtc_core *c, unsigned int qd, bool wc,
		unsigned int max_merge_sectors)
{
	return wtc_set_device(c, qd, wc, max_merge_sectors, true);
}

/* A core on a device of queue depth qd, no merging, at time T0. */
void setup_cfg(struct fx *f, const struct wtc_config *cfg,
	       unsigned int qd, bool wc)
{
	struct wtc_config def;

	if (!cfg) {
		wtc_config_default(&def);
		cfg = &def;
	}
	wtc_init(&f->c, cfg);
	set_device(&f->c, qd, wc, 0);
	f->now.ns = T0;
	f->now.dirty_wait = false;
}

void setup(struct fx *f, unsigned int qd, bool wc)
{
	setup_cfg(f, NULL, qd, wc);
}

/* Default config but these pairs, NULL-terminated. */
void setup_opts(struct fx *f, unsigned int qd, bool wc, ...)
{
	struct wtc_config cfg;
	const char *k, *v;
	va_list ap;

	wtc_config_default(&cfg);
	va_start(ap, wc);
	while ((k = va_arg(ap, const char *))) {
		v = va_arg(ap, const char *);
		opt(&cfg, k, v);
		if (failed)
			break;
	}
	va_end(ap);
	if (!failed)
		setup_cfg(f, &cfg, qd, wc);
}

/* The delay policy on a caching device, with a read to protect. */
void setup_paced(struct fx *f)
{
	DO(setup_opts(f, 32, true, "wc_policy", "delay", NULL));
	wtc_map(&f->c, WTC_K_READ, NULL, &f->now);
}

/* A bio that cannot merge arrives; returns wtc_map()'s answer. */
int map(struct fx *f, enum wtc_kind k)
{
	return wtc_map(&f->c, k, NULL, &f->now);
}

bool go(int r)
{
	return r != WTC_HOLD;
}

/* Map n unmergeable bios of kind k; how many went at once. */
unsigned int map_n(struct fx *f, enum wtc_kind k, unsigned int n)
{
	unsigned int i, went = 0;

	for (i = 0; i < n; i++)
		went += go(map(f, k));
	return went;
}

bool done(struct fx *f, enum wtc_kind k)
{
	return wtc_done(&f->c, k, WTC_NO_GROUP, &f->now);
}

/* Run the dispatcher once, with heads that cannot merge. */
int dispatch(struct fx *f, u64 *wait_ns)
{
	struct wtc_io heads[WTC_NR_QUEUES];
	unsigned int grp = 0;
	u64 w;

	memset(heads, 0, sizeof(heads));
	if (!wait_ns)
		wait_ns = &w;
	return wtc_dispatch(&f->c, &f->now, heads, &grp, wait_ns);
}

unsigned int limit(struct fx *f, enum wtc_queue q)
{
	return wtc_limit(&f->c, q, &f->now);
}

/* The documented model: which in-flight counter a queue adds to. */
enum wtc_counter counter_of(enum wtc_queue q)
{
	if (q == WTC_Q_RECLAIM)
		return WTC_C_RECLAIM;
	if (q == WTC_Q_DISCARD)
		return WTC_C_DISCARD;
	return WTC_C_WB;
}

u64 rng;

u64 rnd(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 2685821657736338717ULL;
}

unsigned int rnd_below(unsigned int n)
{
	return (unsigned int)(rnd() >> 32) % n;
}

/* Output into a short buffer: cut, terminated, never past len. */
void check_no_overrun(int (*fmt)(const void *, char *, size_t),
		      const void *arg, const char *what)
{
	char full[4096], buf[96];
	size_t len, i;
	int n;

	n = fmt(arg, full, sizeof(full));
	CHECKF(n > 0 && (size_t)n == strlen(full), "%s: returned %d", what, n);
	for (len = 0; len <= 64; len++) {
		memset(buf, 0xa5, sizeof(buf));
		n = fmt(arg, len ? buf : NULL, len);
		for (i = len; i < sizeof(buf); i++)
			CHECKF((unsigned char)buf[i] == 0xa5,
			       "%s: len %zu: byte %zu overwritten", what, len,
			       i);
		if (!len) {
			CHECKF(n == 0, "%s: len 0 returned %d", what, n);
			continue;
		}
		CHECKF(memchr(buf, 0, len), "%s: len %zu: not terminated",
		       what, len);
		CHECKF((size_t)n == strlen(buf) && (size_t)n < len,
		       "%s: len %zu: returned %d for %zu bytes", what, len, n,
		       strlen(buf));
		CHECKF(!strncmp(buf, full, strlen(buf)),
		       "%s: len %zu: \"%s\" is not a prefix", what, len, buf);
	}
}

/* "key=value" of status line s, or NULL. */
const char *status_val(const char *s, const char *key, char *out,
		       size_t len)
{
	size_t k = strlen(key);
	const char *p = s;

	while ((p = strstr(p, key))) {
		if ((p == s || p[-1] == ' ') && p[k] == '=') {
			size_t n = strcspn(p + k + 1, " ");

			if (n >= len)
				n = len - 1;
			memcpy(out, p + k + 1, n);
			out[n] = 0;
			return out;
		}
		p += k;
	}
	return NULL;
}
