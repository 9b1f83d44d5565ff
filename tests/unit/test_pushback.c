// SPDX-License-Identifier: GPL-2.0-only
/* wbt_core unit tests: push-back and the bounded backlog. */
#include "test_helpers.h"

/* ---- push-back and the bounded backlog ----------------------------------- */

/* A write of 4 KiB that cannot merge, held as mode says, seen at f->now. */
static int map_mode(struct fx *f, enum wtc_kind k, unsigned int mode)
{
	struct wtc_io io = { .bytes = 4096, .mode = mode };

	return wtc_map(&f->c, k, &io, &f->now);
}

/* The head of queue q for wtc_dispatch(): held since, deferred or not. */
static int dispatch_heads(struct fx *f, enum wtc_queue q, u64 since,
			  bool deferred, u64 *wait_ns)
{
	struct wtc_io heads[WTC_NR_QUEUES];
	unsigned int grp = 0;
	u64 w;

	memset(heads, 0, sizeof(heads));
	heads[q].bytes = 4096;
	heads[q].since_ns = since;
	heads[q].deferred = deferred;
	return wtc_dispatch(&f->c, &f->now, heads, &grp, wait_ns ? wait_ns : &w);
}

/* Fill the background limit (4 of 16 on qd 32). */
static void fill_bg(struct fx *f)
{
	DO(setup(f, 32, false));
	CHECK_EQ(map_n(f, WTC_K_BG, 4), 4);
}

static void test_pushback_submitter_waits(void)
{
	struct fx f;

	DO(fill_bg(&f));
	CHECK_EQ(map_mode(&f, WTC_K_BG, WTC_IO_SLEEP), WTC_WAIT);
	CHECK_EQ(f.c.acct.queued[WTC_Q_BG], 1);
	CHECK_EQ(f.c.acct.deferred[WTC_Q_BG], 0);
	CHECK_EQ(f.c.acct.deferred_bytes, 0);
	CHECK_EQ(f.c.stats.slept, 1);
	/* ... and gets the slot the next completion frees */
	CHECK(done(&f, WTC_K_BG));
	CHECK_EQ(dispatch_heads(&f, WTC_Q_BG, T0, false, NULL), WTC_Q_BG);
	CHECK_EQ(f.c.acct.queued[WTC_Q_BG], 0);
	CHECK_EQ(f.c.acct.inflight[WTC_C_WB], 4);
	CHECK_EQ(f.c.stats.throttled[WTC_Q_BG], 1);
}

/* A submitter that may not sleep is deferred; push_back 0 defers all. */
static void test_pushback_defer_when_unsafe(void)
{
	struct fx f;

	DO(fill_bg(&f));
	CHECK_EQ(map_mode(&f, WTC_K_BG, WTC_IO_DEFER), WTC_HOLD);
	CHECK_EQ(f.c.acct.deferred[WTC_Q_BG], 1);
	CHECK_EQ(f.c.acct.deferred_bytes, 4096);
	CHECK_EQ(f.c.stats.deferred_bytes_max, 4096);
	CHECK_EQ(dispatch_heads(&f, WTC_Q_BG, T0, true, NULL), -1);
	done(&f, WTC_K_BG);
	done(&f, WTC_K_BG);
	CHECK_EQ(dispatch_heads(&f, WTC_Q_BG, T0, true, NULL), WTC_Q_BG);
	CHECK_EQ(f.c.acct.deferred[WTC_Q_BG], 0);
	CHECK_EQ(f.c.acct.deferred_bytes, 0);

	DO(setup_opts(&f, 32, false, "push_back", "0", NULL));
	CHECK_EQ(map_n(&f, WTC_K_BG, 4), 4);
	CHECK_EQ(map_mode(&f, WTC_K_BG, WTC_IO_SLEEP), WTC_HOLD);
	CHECK_EQ(f.c.stats.slept, 0);
}

/* REQ_NOWAIT: refused when it would wait, never held; fine under limit. */
static void test_nowait_refused_not_held(void)
{
	struct fx f;

	DO(setup(&f, 32, false));
	CHECK(map_mode(&f, WTC_K_BG, WTC_IO_NOWAIT) >= 0);
	CHECK_EQ(map_n(&f, WTC_K_BG, 3), 3);
	CHECK_EQ(map_mode(&f, WTC_K_BG, WTC_IO_NOWAIT | WTC_IO_SLEEP),
		 WTC_AGAIN);
	CHECK_EQ(f.c.acct.queued[WTC_Q_BG], 0);
	CHECK_EQ(f.c.acct.inflight[WTC_C_WB], 4);
	CHECK_EQ(f.c.stats.again, 1);
	/* behind a held write it is refused too: it may not overtake */
	CHECK_EQ(map_mode(&f, WTC_K_BG, WTC_IO_SLEEP), WTC_WAIT);
	done(&f, WTC_K_BG);
	done(&f, WTC_K_BG);
	CHECK_EQ(map_mode(&f, WTC_K_BG, WTC_IO_NOWAIT), WTC_AGAIN);
	/* untracked I/O is never refused */
	CHECK(map_mode(&f, WTC_K_DIRECT, WTC_IO_NOWAIT) >= 0);
}

/* When deferring would pass backlog_kb, the write goes at once. */
static void test_backlog_bytes_bound(void)
{
	struct fx f;

	DO(setup_opts(&f, 32, false, "backlog_kb", "8", NULL));
	CHECK_EQ(map_n(&f, WTC_K_BG, 4), 4);
	CHECK_EQ(map_mode(&f, WTC_K_BG, WTC_IO_DEFER), WTC_HOLD);
	CHECK_EQ(map_mode(&f, WTC_K_BG, WTC_IO_DEFER), WTC_HOLD);
	CHECK_EQ(f.c.acct.deferred_bytes, 8192);
	CHECK(map_mode(&f, WTC_K_BG, WTC_IO_DEFER) >= 0);
	CHECK_EQ(f.c.stats.overflow, 1);
	CHECK_EQ(f.c.acct.deferred_bytes, 8192);
	CHECK_EQ(f.c.acct.inflight[WTC_C_WB], 5);
	/* a submitter that may sleep still waits: the bound is on bytes held */
	CHECK_EQ(map_mode(&f, WTC_K_BG, WTC_IO_SLEEP), WTC_WAIT);

	DO(setup_opts(&f, 32, false, "backlog_kb", "0", NULL));
	CHECK_EQ(map_n(&f, WTC_K_BG, 4), 4);
	CHECK(map_mode(&f, WTC_K_BG, WTC_IO_DEFER) >= 0);
	CHECK_EQ(f.c.stats.deferred, 0);
}

/* A deferred write held for backlog_ms goes, whatever the limit says. */
static void test_backlog_age_goes_over_limit(void)
{
	struct fx f;
	u64 wait = 0;

	DO(fill_bg(&f));
	CHECK_EQ(map_mode(&f, WTC_K_BG, WTC_IO_DEFER), WTC_HOLD);
	f.now.ns += 300 * MS;
	CHECK_EQ(dispatch_heads(&f, WTC_Q_BG, T0, true, &wait), -1);
	CHECK_EQ(wait, 200 * MS);		/* call again when it ages */
	f.now.ns += 200 * MS;
	CHECK_EQ(dispatch_heads(&f, WTC_Q_BG, T0, true, &wait), WTC_Q_BG);
	CHECK_EQ(f.c.acct.inflight[WTC_C_WB], 5);	/* over the limit of 4 */
	CHECK_EQ(f.c.stats.aged, 1);
	CHECK_EQ(f.c.stats.deferred_max_ns, 500 * MS);
	CHECK_EQ(f.c.stats.held_max_ns, 500 * MS);
}

/*
 * A sync load that keeps the shared counter near max starves background
 * writes under upstream's rules, and an fsync may wait on exactly the pages
 * such a write carries (ext4 data=ordered). A held background write that a
 * sync write overtakes is promoted: it goes at the next slot below max.
 */
static void test_overtaken_promoted(void)
{
	struct fx f;

	DO(setup(&f, 32, false));
	CHECK_EQ(map_n(&f, WTC_K_SYNC, 16), 16);
	f.now.ns += 1 * MS;
	CHECK_EQ(map_mode(&f, WTC_K_BG, WTC_IO_SLEEP), WTC_WAIT);
	done(&f, WTC_K_SYNC);
	/* 15 in flight: under max, over background: not yet */
	CHECK_EQ(dispatch_heads(&f, WTC_Q_BG, f.now.ns, false, NULL), -1);
	CHECK(!wtc_overtook(&f.c, WTC_Q_BG));
	f.now.ns += 1 * MS;
	CHECK(go(map(&f, WTC_K_SYNC)));		/* overtakes it */
	CHECK(wtc_overtook(&f.c, WTC_Q_SYNC));
	CHECK_EQ(dispatch_heads(&f, WTC_Q_BG, T0 + 1 * MS, false, NULL), -1);
	/* a slot below max: the completion says "look", gate or not */
	CHECK(done(&f, WTC_K_SYNC));
	CHECK_EQ(dispatch_heads(&f, WTC_Q_BG, T0 + 1 * MS, false, NULL),
		 WTC_Q_BG);
	CHECK_EQ(f.c.acct.inflight[WTC_C_WB], 16);
	CHECK_EQ(f.c.stats.promoted, 1);
	CHECK_EQ(f.c.stats.aged, 0);
}

/* One sync write that overtakes promotes one held write, not the backlog. */
static void test_overtaken_one_each(void)
{
	struct fx f;

	DO(fill_bg(&f));
	f.now.ns += 1 * MS;
	CHECK_EQ(map_mode(&f, WTC_K_BG, WTC_IO_DEFER), WTC_HOLD);
	CHECK_EQ(map_mode(&f, WTC_K_BG, WTC_IO_DEFER), WTC_HOLD);
	CHECK_EQ(map_mode(&f, WTC_K_BG, WTC_IO_DEFER), WTC_HOLD);
	CHECK(go(map(&f, WTC_K_SYNC)));
	CHECK_EQ(dispatch_heads(&f, WTC_Q_BG, T0 + 1 * MS, true, NULL),
		 WTC_Q_BG);
	CHECK_EQ(dispatch_heads(&f, WTC_Q_BG, T0 + 1 * MS, true, NULL), -1);
	CHECK_EQ(f.c.acct.queued[WTC_Q_BG], 2);
	CHECK(go(map(&f, WTC_K_SYNC)));
	CHECK(go(map(&f, WTC_K_SYNC)));
	CHECK_EQ(dispatch_heads(&f, WTC_Q_BG, T0 + 1 * MS, true, NULL),
		 WTC_Q_BG);
	CHECK_EQ(dispatch_heads(&f, WTC_Q_BG, T0 + 1 * MS, true, NULL),
		 WTC_Q_BG);
	CHECK_EQ(f.c.stats.promoted, 3);
	/* nobody held: no credit is kept for later writes */
	CHECK(go(map(&f, WTC_K_SYNC)));
	CHECK_EQ(map_mode(&f, WTC_K_BG, WTC_IO_DEFER), WTC_HOLD);
	CHECK_EQ(dispatch_heads(&f, WTC_Q_BG, f.now.ns, true, NULL), -1);
}

/* Without a sync write overtaking, only its age promotes a held write. */
static void test_aging_no_starvation(void)
{
	struct fx f;

	DO(setup(&f, 32, false));
	CHECK_EQ(map_n(&f, WTC_K_NORMAL, 8), 8);
	f.now.ns += 1 * MS;
	CHECK_EQ(map_mode(&f, WTC_K_BG, WTC_IO_SLEEP), WTC_WAIT);
	f.now.ns += 499 * MS;			/* held 499 ms */
	CHECK_EQ(dispatch_heads(&f, WTC_Q_BG, T0 + 1 * MS, false, NULL), -1);
	f.now.ns += 1 * MS;			/* held 500 ms */
	CHECK_EQ(dispatch_heads(&f, WTC_Q_BG, T0 + 1 * MS, false, NULL),
		 WTC_Q_BG);
	CHECK_EQ(f.c.acct.inflight[WTC_C_WB], 9);	/* over background, under max */
	CHECK_EQ(f.c.stats.aged, 1);
}

/* An old head also goes first past the gate and the pace. */
static void test_aging_beats_pace(void)
{
	struct fx f;
	u64 wait = 0;

	DO(setup_paced(&f));
	DO(opt(&f.c.cfg, "cache_delay_us", "1000000"));
	CHECK(go(map(&f, WTC_K_BG)));
	CHECK(!done(&f, WTC_K_BG));
	CHECK_EQ(map_mode(&f, WTC_K_BG, WTC_IO_SLEEP), WTC_WAIT);
	CHECK_EQ(dispatch_heads(&f, WTC_Q_BG, T0, false, &wait), -1);
	CHECK_EQ(wait, 500 * MS);		/* the age comes before the pace */
	f.now.ns += 500 * MS;
	CHECK_EQ(dispatch_heads(&f, WTC_Q_BG, T0, false, &wait), WTC_Q_BG);
}

/* Status: what is held now, and the backlog counters. */
static void test_status_held_fields(void)
{
	char buf[4096], v[32];
	struct fx f;

	DO(fill_bg(&f));
	CHECK_EQ(map_mode(&f, WTC_K_BG, WTC_IO_SLEEP), WTC_WAIT);
	CHECK_EQ(map_mode(&f, WTC_K_BG, WTC_IO_DEFER), WTC_HOLD);
	CHECK(wtc_format_status(&f.c, 1234 * US, buf, sizeof(buf)) > 0);
	CHECK_STR(status_val(buf, "bg_queued", v, sizeof(v)), "2");
	CHECK_STR(status_val(buf, "waiting", v, sizeof(v)), "1");
	CHECK_STR(status_val(buf, "deferred", v, sizeof(v)), "1");
	CHECK_STR(status_val(buf, "deferred_bytes", v, sizeof(v)), "4096");
	CHECK_STR(status_val(buf, "held_oldest_us", v, sizeof(v)), "1234");
	CHECK_STR(status_val(buf, "slept", v, sizeof(v)), "1");
	CHECK_STR(status_val(buf, "backlog_kb", v, sizeof(v)), "16384");
	CHECK_STR(status_val(buf, "backlog_ms", v, sizeof(v)), "500");
	CHECK_STR(status_val(buf, "push_back", v, sizeof(v)), "1");
}

static const struct test tests[] = {
	T(pushback_submitter_waits),
	T(pushback_defer_when_unsafe),
	T(nowait_refused_not_held),
	T(backlog_bytes_bound),
	T(backlog_age_goes_over_limit),
	T(overtaken_promoted),
	T(overtaken_one_each),
	T(aging_no_starvation),
	T(aging_beats_pace),
	T(status_held_fields),
};

const struct suite pushback_suite = SUITE(tests);
