// SPDX-License-Identifier: GPL-2.0-only
/* wbt_core unit tests: properties of random map, done and dispatch runs. */
#include "test_helpers.h"

/* ---- property tests: random map/done/dispatch, as the glue drives them --- */

struct sbio {
	enum wtc_kind kind;
	unsigned int grp;
	struct wtc_io io;
	bool flush;		/* a flush the core counts */
};

struct sfifo {
	struct sbio *v;
	unsigned int head, tail;
};

struct sim {
	struct fx f;
	const char *name;
	unsigned int seed;
	int step;
	struct sfifo held[WTC_NR_QUEUES];
	struct sbio *fly;
	unsigned int nfly;
	bool timer_on;
	u64 timer_ns;
	unsigned long long mapped, completed;
	bool merge;		/* give writes a place, some contiguous */
	bool strict;		/* limits constant: check them */
	u64 next_sector[WTC_NR_QUEUES];
	unsigned int cap;
};

static unsigned int sf_len(const struct sfifo *q)
{
	return q->tail - q->head;
}

static void sim_free(struct sim *s)
{
	int q;

	for (q = 0; q < WTC_NR_QUEUES; q++)
		free(s->held[q].v);
	free(s->fly);
}

static bool sim_alloc(struct sim *s, unsigned int cap)
{
	int q;

	s->cap = cap;
	s->fly = calloc(cap, sizeof(*s->fly));
	for (q = 0; q < WTC_NR_QUEUES; q++) {
		s->held[q].v = calloc(cap, sizeof(struct sbio));
		s->held[q].head = s->held[q].tail = 0;
		if (!s->held[q].v)
			return false;
	}
	return s->fly;
}

#define SIM_FMT "%s seed %u step %d: "
#define SIM_ARG s->name, s->seed, s->step

/* The glue's wt_pick(): let go whatever wtc_dispatch() names. */
static void sim_dispatch(struct sim *s)
{
	struct wtc_io heads[WTC_NR_QUEUES];
	unsigned int grp, guard;
	struct sfifo *h;
	u64 wait;
	int q;

	for (guard = 0; guard < 10 * s->cap; guard++) {
		memset(heads, 0, sizeof(heads));
		for (q = 0; q < WTC_NR_QUEUES; q++)
			if (sf_len(&s->held[q]))
				heads[q] = s->held[q].v[s->held[q].head].io;
		grp = 0xdead;
		wait = 0;
		q = wtc_dispatch(&s->f.c, &s->f.now, heads, &grp, &wait);
		if (q < 0) {
			if (wait && (!s->timer_on ||
				     s->f.now.ns + wait < s->timer_ns)) {
				s->timer_on = true;
				s->timer_ns = s->f.now.ns + wait;
			}
			return;
		}
		h = &s->held[q];
		CHECKF(q < WTC_NR_QUEUES && sf_len(h),
		       SIM_FMT "dispatch named queue %d, nothing held there",
		       SIM_ARG, q);
		CHECKF(grp != 0xdead, SIM_FMT "dispatch gave no group",
		       SIM_ARG);
		s->fly[s->nfly] = h->v[h->head++];
		s->fly[s->nfly++].grp = grp;
	}
	FAIL(SIM_FMT "dispatcher never returned -1", SIM_ARG);
}

static enum wtc_kind sim_kind(void)
{
	static const struct { enum wtc_kind k; unsigned int w; } mix[] = {
		{ WTC_K_BG, 30 }, { WTC_K_NORMAL, 20 }, { WTC_K_SYNC, 10 },
		{ WTC_K_RECLAIM, 8 }, { WTC_K_DISCARD, 12 },
		{ WTC_K_READ, 10 }, { WTC_K_DIRECT, 5 }, { WTC_K_FLUSH, 3 },
		{ WTC_K_OTHER, 2 },
	};
	unsigned int r = rnd_below(100), i;

	for (i = 0; i < sizeof(mix) / sizeof(mix[0]); i++) {
		if (r < mix[i].w)
			return mix[i].k;
		r -= mix[i].w;
	}
	return WTC_K_BG;
}

/* The glue's wt_map(). */
static void sim_map(struct sim *s)
{
	struct sbio b = { .kind = sim_kind() };
	enum wtc_queue q = wtc_kind_queue(b.kind);
	const struct wtc_io *io = NULL;
	struct sfifo *h;
	int r;

	if (s->merge && q != WTC_Q_NONE) {
		if (rnd_below(10) < 7) {
			b.io.sector = s->next_sector[q];
		} else {
			b.io.sector = (u64)rnd_below(1 << 20) << 8;
		}
		b.io.sectors = 8;
		s->next_sector[q] = b.io.sector + 8;
		io = &b.io;
	}
	/* Half the submitters may sleep; the others' writes are deferred. */
	if (q != WTC_Q_NONE) {
		b.io.bytes = 4096;
		b.io.mode = rnd_below(2) ? WTC_IO_SLEEP : WTC_IO_DEFER;
		io = &b.io;
	}
	s->mapped++;
	b.flush = b.kind == WTC_K_FLUSH && wtc_counts_flushes(&s->f.c);
	if (b.flush)
		wtc_flush_issue(&s->f.c);
	r = wtc_map(&s->f.c, b.kind, io, &s->f.now);
	b.io.deferred = r == WTC_HOLD;
	if (r == WTC_WAIT)
		r = WTC_HOLD;
	if (r != WTC_HOLD) {
		CHECKF(r >= 0 && (r == WTC_NO_GROUP || r < WTC_NR_GROUPS),
		       SIM_FMT "wtc_map returned %d", SIM_ARG, r);
		b.grp = r;
		s->fly[s->nfly++] = b;
		return;
	}
	CHECKF(q != WTC_Q_NONE, SIM_FMT "%s held", SIM_ARG,
	       wtc_kind_name(b.kind));
	h = &s->held[q];
	h->v[h->tail++] = b;
	if (wtc_counter_idle(&s->f.c, q))
		DO(sim_dispatch(s));
}

/* The glue's wt_end_io() for in-flight bio i. */
static void sim_done(struct sim *s, unsigned int i)
{
	struct sbio b = s->fly[i];

	s->fly[i] = s->fly[--s->nfly];
	s->completed++;
	if (b.flush && wtc_flush_done(&s->f.c))
		DO(sim_dispatch(s));
	if (wtc_done(&s->f.c, b.kind, b.grp, &s->f.now))
		DO(sim_dispatch(s));
}

static void sim_timer(struct sim *s)
{
	if (s->timer_on && s->f.now.ns >= s->timer_ns) {
		s->timer_on = false;
		DO(sim_dispatch(s));
	}
}

/* Counters match what is in flight; limits hold when they are constant. */
static void sim_check(struct sim *s)
{
	static bool seen[WTC_NR_GROUPS];
	const struct wtc_core *c = &s->f.c;
	unsigned int slots[WTC_NR_COUNTERS] = { 0 };
	unsigned int qin[WTC_NR_QUEUES] = { 0 };
	enum wtc_queue q;
	unsigned int i;
	u64 bytes = 0;

	memset(seen, 0, sizeof(seen));
	for (i = 0; i < s->nfly; i++) {
		const struct sbio *b = &s->fly[i];

		q = wtc_kind_queue(b->kind);
		if (q == WTC_Q_NONE)
			continue;
		if (b->grp != WTC_NO_GROUP) {
			if (seen[b->grp])
				continue;
			seen[b->grp] = true;
		}
		slots[counter_of(q)]++;
		qin[q]++;
	}
	for (i = 0; i < WTC_NR_COUNTERS; i++)
		CHECKF(c->acct.inflight[i] == slots[i],
		       SIM_FMT "counter %u is %u, %u requests in flight",
		       SIM_ARG, i, c->acct.inflight[i], slots[i]);
	for (q = 0; q < WTC_NR_QUEUES; q++) {
		const struct sfifo *h = &s->held[q];
		unsigned int nd = 0;

		for (i = h->head; i < h->tail; i++)
			nd += h->v[i].io.deferred;
		CHECKF(c->acct.deferred[q] == nd, SIM_FMT "%s deferred %u, %u held",
		       SIM_ARG, wtc_queue_name(q), c->acct.deferred[q], nd);
		bytes += (u64)nd * 4096;
		CHECKF(c->acct.queued[q] == sf_len(&s->held[q]),
		       SIM_FMT "%s queued %u, %u held", SIM_ARG,
		       wtc_queue_name(q), c->acct.queued[q], sf_len(&s->held[q]));
		CHECKF(c->acct.q_inflight[q] == qin[q],
		       SIM_FMT "%s_inflight %u, %u in flight", SIM_ARG,
		       wtc_queue_name(q), c->acct.q_inflight[q], qin[q]);
	}
	CHECKF(c->acct.deferred_bytes == bytes, SIM_FMT "deferred_bytes %llu, %llu held",
	       SIM_ARG, (unsigned long long)c->acct.deferred_bytes,
	       (unsigned long long)bytes);
	if (!s->strict)
		return;
	CHECKF(c->stats.hwm[WTC_Q_BG] <= c->lim.wb_background,
	       SIM_FMT "bg hwm %u > background %u", SIM_ARG,
	       c->stats.hwm[WTC_Q_BG], c->lim.wb_background);
	CHECKF(c->stats.hwm[WTC_Q_NORMAL] <= c->lim.wb_normal,
	       SIM_FMT "normal hwm %u > normal %u", SIM_ARG,
	       c->stats.hwm[WTC_Q_NORMAL], c->lim.wb_normal);
	CHECKF(c->acct.inflight[WTC_C_WB] <= c->lim.max_depth &&
	       c->acct.inflight[WTC_C_RECLAIM] <= c->lim.max_depth &&
	       c->acct.inflight[WTC_C_DISCARD] <= c->lim.wb_background,
	       SIM_FMT "in flight %u/%u/%u over %u/%u", SIM_ARG,
	       c->acct.inflight[WTC_C_RECLAIM], c->acct.inflight[WTC_C_WB],
	       c->acct.inflight[WTC_C_DISCARD], c->lim.max_depth, c->lim.wb_background);
}

/* Complete everything; held bios must all get out. */
static void sim_drain(struct sim *s, bool flip_dirty)
{
	unsigned int q, held;

	for (s->step = 0; s->step < 100 * (int)s->cap; s->step++) {
		held = 0;
		for (q = 0; q < WTC_NR_QUEUES; q++)
			held += sf_len(&s->held[q]);
		if (flip_dirty && !rnd_below(20))
			s->f.now.dirty_wait = !s->f.now.dirty_wait;
		if (s->nfly) {
			s->f.now.ns += rnd_below(300) * US;
			DO(sim_done(s, rnd_below(s->nfly)));
		} else if (held) {
			CHECKF(s->timer_on, SIM_FMT "drain: stuck: %u held "
			       "(bg %u normal %u discard %u), nothing in "
			       "flight, no timer; dirty_wait %d", SIM_ARG,
			       held, s->f.c.acct.queued[WTC_Q_BG],
			       s->f.c.acct.queued[WTC_Q_NORMAL],
			       s->f.c.acct.queued[WTC_Q_DISCARD],
			       s->f.now.dirty_wait);
			if (s->f.now.ns < s->timer_ns)
				s->f.now.ns = s->timer_ns;
		} else {
			break;
		}
		DO(sim_timer(s));
		DO(sim_check(s));
	}
	CHECKF(!s->nfly, SIM_FMT "drain did not finish", SIM_ARG);
	CHECKF(wtc_idle(&s->f.c), SIM_FMT "not idle after drain", SIM_ARG);
	CHECKF(s->mapped == s->completed, SIM_FMT "mapped %llu, completed %llu",
	       SIM_ARG, s->mapped, s->completed);
}

struct sim_cfg {
	const char *name;
	bool wc;
	const char *policy;
};

static const struct sim_cfg sim_cfgs[] = {
	{ "no-wc", false, "drain" },
	{ "wc-drain", true, "drain" },
	{ "wc-delay", true, "delay" },
	{ "wc-off", true, "off" },
};

/* Larger runs: make CFLAGS_EXTRA="-DSIM_SEEDS=50 -DSIM_STEPS=50000" */
#ifndef SIM_STEPS
#define SIM_STEPS 20000
#endif
#ifndef SIM_SEEDS
#define SIM_SEEDS 3
#endif

/*
 * Random map/done/dispatch events with constant limits (fixed depth, no
 * dirtier): bg never has more in flight than background, and every bio
 * mapped completes.
 */
static void run_sim(const struct sim_cfg *sc, unsigned int seed, bool merge,
		    bool chaos)
{
	struct sim *s = calloc(1, sizeof(*s));
	struct wtc_config cfg;
	unsigned int r;

	CHECK(s);
	if (!sim_alloc(s, SIM_STEPS + 16)) {
		sim_free(s);
		free(s);
		FAIL("out of memory");
	}
	rng = 0x9e3779b97f4a7c15ULL * (seed + 1) + (merge ? 7 : 0);
	s->name = sc->name;
	s->seed = seed;
	s->merge = merge;
	s->strict = !chaos;
	wtc_config_default(&cfg);
	opt(&cfg, "depth", "8");		/* max 8, normal 4, bg 2 */
	opt(&cfg, "wc_policy", sc->policy);
	opt(&cfg, "cache_delay_us", "1000");
	if (failed)
		goto out;
	setup_cfg(&s->f, &cfg, 32, sc->wc);
	set_device(&s->f.c, 32, sc->wc, merge ? 64 : 0);
	for (s->step = 0; s->step < SIM_STEPS && !failed; s->step++) {
		r = rnd_below(100);
		if (r < 45)
			sim_map(s);
		else if (r < 85 && s->nfly)
			sim_done(s, rnd_below(s->nfly));
		else if (r < 97)
			s->f.now.ns += rnd_below(2000) * US;
		else
			sim_dispatch(s);	/* a kick from a message */
		if (!failed && chaos) {
			if (!rnd_below(20))
				s->f.now.dirty_wait = !s->f.now.dirty_wait;
			if (!rnd_below(500)) {	/* suspend and resume */
				wtc_set_holding(&s->f.c, false);
				sim_dispatch(s);
				wtc_set_holding(&s->f.c, true);
			}
			if (!rnd_below(500))
				set_device(&s->f.c, 32, !s->f.c.dev.wc,
					       merge ? 64 : 0);
		}
		if (!failed)
			sim_timer(s);
		if (!failed)
			sim_check(s);
	}
	/* drain on the configured device, the dirtier still coming and going */
	set_device(&s->f.c, 32, sc->wc, merge ? 64 : 0);
	if (!failed)
		sim_drain(s, chaos);
out:
	sim_free(s);
	free(s);
}

static void test_prop_bg_limit_and_no_loss(void)
{
	unsigned int i, seed;

	for (i = 0; i < sizeof(sim_cfgs) / sizeof(sim_cfgs[0]); i++)
		for (seed = 0; seed < SIM_SEEDS; seed++)
			DO(run_sim(&sim_cfgs[i], seed, false, false));
}

static void test_prop_merge_groups_balance(void)
{
	unsigned int i, seed;

	for (i = 0; i < sizeof(sim_cfgs) / sizeof(sim_cfgs[0]); i++)
		for (seed = 0; seed < SIM_SEEDS; seed++)
			DO(run_sim(&sim_cfgs[i], seed, true, false));
}

/*
 * As above, with a dirtier that comes and goes, suspend/resume and write
 * cache changes: limits move, so only "nothing lost, nothing stuck" holds.
 */
static void test_prop_no_stall_with_dirtier(void)
{
	unsigned int i, seed;

	for (i = 0; i < sizeof(sim_cfgs) / sizeof(sim_cfgs[0]); i++)
		for (seed = 0; seed < SIM_SEEDS; seed++)
			DO(run_sim(&sim_cfgs[i], seed, i & 1, true));
}

static const struct test tests[] = {
	T(prop_bg_limit_and_no_loss),
	T(prop_merge_groups_balance),
	T(prop_no_stall_with_dirtier),
};

const struct suite prop_suite = SUITE(tests);
