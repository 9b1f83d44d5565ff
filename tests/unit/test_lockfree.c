// SPDX-License-Identifier: GPL-2.0-only
/*
 * The lock-free side of the merge groups: a write that continues the
 * request in flight joins it with wtc_join(), a completion that is not its
 * request's last leaves with wtc_put(); only the rest take the lock. What a
 * user would notice if they were wrong: a slot never given back (the
 * target never idle, suspend hangs) or given back twice (more in flight
 * than the limit), or a write that passes one that waits.
 */
#include <pthread.h>

#include "test_helpers.h"

static struct wtc_io wio(u64 sector, unsigned int sectors)
{
	return (struct wtc_io){ .sector = sector, .sectors = sectors,
				.bytes = sectors * 512, .mode = WTC_IO_SLEEP };
}

/* wtc_done() as the glue does it: the lock only for a request's last bio. */
static bool put(struct fx *f, enum wtc_kind k, unsigned int grp)
{
	return wtc_put(&f->c, grp) && wtc_done_last(&f->c, k, grp, &f->now);
}

/* QD 32, requests of 256 sectors; a background write at 1000 opens one. */
static void setup_request(struct fx *f, unsigned int *g)
{
	struct wtc_io io = wio(1000, 8);
	int r;

	DO(setup(f, 32, false));
	set_device(&f->c, 32, false, 256);
	r = wtc_map(&f->c, WTC_K_BG, &io, &f->now);
	CHECK(r >= 0 && r != WTC_NO_GROUP);
	*g = r;
}

static void test_join_takes_no_slot(void)
{
	struct wtc_io io;
	unsigned int g, g2 = 0;
	struct fx f;

	DO(setup_request(&f, &g));
	io = wio(1008, 8);
	CHECK(wtc_join(&f.c, WTC_Q_BG, &io, &g2));
	CHECK_EQ(g2, g);
	CHECK_EQ(f.c.acct.inflight[WTC_C_WB], 1);
	io = wio(2000, 8);			/* not contiguous */
	CHECK(!wtc_join(&f.c, WTC_Q_BG, &io, &g2));
	io = wio(1016, 8);			/* another queue's stream */
	CHECK(!wtc_join(&f.c, WTC_Q_NORMAL, &io, &g2));
	CHECK(!wtc_put(&f.c, g));		/* one of two: no lock */
	CHECK_EQ(f.c.acct.inflight[WTC_C_WB], 1);
	CHECK(wtc_put(&f.c, g));		/* the last */
	wtc_done_last(&f.c, WTC_K_BG, g, &f.now);
	CHECK_EQ(f.c.acct.inflight[WTC_C_WB], 0);
	CHECK(wtc_idle(&f.c));
	io = wio(1016, 8);			/* its request is gone */
	CHECK(!wtc_join(&f.c, WTC_Q_BG, &io, &g2));
}

/* The request is at most max_merge_sectors, as the lower queue makes it. */
static void test_join_stops_at_merge_size(void)
{
	struct wtc_io io = wio(0, 128);
	unsigned int g = 0;
	struct fx f;

	DO(setup(&f, 32, false));
	set_device(&f.c, 32, false, 256);
	CHECK(go(wtc_map(&f.c, WTC_K_NORMAL, &io, &f.now)));
	io = wio(128, 128);
	CHECK(wtc_join(&f.c, WTC_Q_NORMAL, &io, &g));
	io = wio(256, 8);
	CHECK(!wtc_join(&f.c, WTC_Q_NORMAL, &io, &g));
	CHECK(go(wtc_map(&f.c, WTC_K_NORMAL, &io, &f.now)));
	CHECK_EQ(f.c.acct.inflight[WTC_C_WB], 2);
}

/* Nothing passes a write that waits, not even one that takes no slot. */
static void test_join_not_past_held(void)
{
	struct wtc_io io;
	unsigned int g = 0, i;
	struct fx f;

	DO(setup_request(&f, &g));
	/* Fill the background limit with unmergeable ones, one more waits. */
	for (i = 1; i < limit(&f, WTC_Q_BG); i++)
		CHECK(go(map(&f, WTC_K_BG)));
	CHECK_EQ(map(&f, WTC_K_BG), WTC_HOLD);
	io = wio(1008, 8);
	CHECK(!wtc_join(&f.c, WTC_Q_BG, &io, &g));
	CHECK(!wtc_join(&f.c, WTC_Q_SYNC, &io, &g));	/* same counter */
	/* Two slots free, the held one goes: a new request, and joins again. */
	done(&f, WTC_K_BG);
	done(&f, WTC_K_BG);
	CHECK_EQ(dispatch(&f, NULL), WTC_Q_BG);
	io = wio(5000, 8);
	CHECK(go(wtc_map(&f.c, WTC_K_BG, &io, &f.now)));
	io = wio(5008, 8);
	CHECK(wtc_join(&f.c, WTC_Q_BG, &io, &g));
}

/*
 * A request's last bio completes lock-free, and before its completion
 * takes the lock a write continuing it arrives: it may not join a request
 * that is gone; it starts its own, and the late free of the old one must
 * neither close the new one nor give its slot back twice.
 */
static void test_join_after_last_put(void)
{
	struct wtc_io io;
	unsigned int g_old, g = 0;
	struct fx f;
	int r;

	DO(setup_request(&f, &g_old));
	CHECK(wtc_put(&f.c, g_old));		/* last: lock not taken yet */
	io = wio(1008, 8);
	CHECK(!wtc_join(&f.c, WTC_Q_BG, &io, &g));
	r = wtc_map(&f.c, WTC_K_BG, &io, &f.now);	/* its own request */
	CHECK(r >= 0 && r != WTC_NO_GROUP && (unsigned int)r != g_old);
	CHECK_EQ(f.c.acct.inflight[WTC_C_WB], 2);
	wtc_done_last(&f.c, WTC_K_BG, g_old, &f.now);
	CHECK_EQ(f.c.acct.inflight[WTC_C_WB], 1);
	io = wio(1016, 8);			/* the new one is still open */
	CHECK(wtc_join(&f.c, WTC_Q_BG, &io, &g));
	CHECK_EQ(g, (unsigned int)r);
	CHECK(!put(&f, WTC_K_BG, g));
	put(&f, WTC_K_BG, g);
	CHECK_EQ(f.c.acct.inflight[WTC_C_WB], 0);
	CHECK(wtc_idle(&f.c));
	CHECK_EQ(f.c.acct.grp_nfree, WTC_NR_GROUPS);
}

/*
 * Threads share one sequential stream, as CPUs share a flusher's: each
 * joins lock-free or maps under a mutex (the glue's spinlock), keeps a few
 * writes in flight and completes them in random order, lock-free unless
 * last. Nothing is held (a deep limit): afterwards every slot and group is
 * back, and the requests in flight never exceeded what was mapped.
 */
enum { LF_THREADS = 4, LF_BIOS = 200000, LF_WINDOW = 16 };

struct lf_shared {
	struct fx f;
	pthread_mutex_t lock;
	u64 next_sector;
	unsigned int joined;
	bool bad;
};

struct lf_bio {
	unsigned int grp;
	bool joined;
};

static void lf_complete(struct lf_shared *s, struct lf_bio *b)
{
	if (!wtc_put(&s->f.c, b->grp))
		return;
	pthread_mutex_lock(&s->lock);
	wtc_done_last(&s->f.c, WTC_K_BG, b->grp, &s->f.now);
	pthread_mutex_unlock(&s->lock);
}

static void lf_submit(struct lf_shared *s, struct lf_bio *b)
{
	u64 sector = __atomic_fetch_add(&s->next_sector, 8, __ATOMIC_SEQ_CST);
	struct wtc_io io = wio(sector, 8);
	int r;

	b->joined = wtc_join(&s->f.c, WTC_Q_BG, &io, &b->grp);
	if (b->joined) {
		__atomic_fetch_add(&s->joined, 1, __ATOMIC_RELAXED);
		return;
	}
	pthread_mutex_lock(&s->lock);
	r = wtc_map(&s->f.c, WTC_K_BG, &io, &s->f.now);
	if (r < 0 || s->f.c.acct.inflight[WTC_C_WB] > LF_THREADS * LF_WINDOW)
		s->bad = true;
	pthread_mutex_unlock(&s->lock);
	b->grp = r < 0 ? WTC_NO_GROUP : (unsigned int)r;
}

static void *lf_thread(void *arg)
{
	struct lf_shared *s = arg;
	struct lf_bio win[LF_WINDOW];
	unsigned int n = 0, i, seed = (unsigned int)(uintptr_t)&win;

	for (i = 0; i < LF_BIOS; i++) {
		if (n == LF_WINDOW) {
			unsigned int k = rand_r(&seed) % n;

			lf_complete(s, &win[k]);
			win[k] = win[--n];
		}
		lf_submit(s, &win[n++]);
	}
	while (n)
		lf_complete(s, &win[--n]);
	return NULL;
}

static void test_join_threads(void)
{
	static struct lf_shared s;
	pthread_t t[LF_THREADS];
	unsigned int i, busy = 0;

	memset(&s, 0, sizeof(s));
	DO(setup_opts(&s.f, 4096, false, "depth", "4096", NULL));
	set_device(&s.f.c, 4096, false, 64);
	pthread_mutex_init(&s.lock, NULL);
	for (i = 0; i < LF_THREADS; i++)
		CHECK(!pthread_create(&t[i], NULL, lf_thread, &s));
	for (i = 0; i < LF_THREADS; i++)
		pthread_join(t[i], NULL);
	CHECK(!s.bad);
	CHECK_EQ(s.f.c.acct.inflight[WTC_C_WB], 0);
	CHECK_EQ(s.f.c.acct.q_inflight[WTC_Q_BG], 0);
	CHECK_EQ(s.f.c.acct.grp_nfree, WTC_NR_GROUPS);
	for (i = 0; i < WTC_NR_GROUPS; i++)
		busy += wtc_atomic_read(&s.f.c.acct.grp_refs[i]) != 0;
	CHECK_EQ(busy, 0);
	CHECK(wtc_idle(&s.f.c));
	CHECK(s.joined > 0);		/* the lock-free side did run */
}

static const struct test tests[] = {
	T(join_takes_no_slot),
	T(join_stops_at_merge_size),
	T(join_not_past_held),
	T(join_after_last_put),
	T(join_threads),
};

const struct suite lockfree_suite = SUITE(tests);
