// SPDX-License-Identifier: GPL-2.0-only
/* wbt_core unit tests: the latency controller. */
#include "test_helpers.h"

/* ---- latency controller -------------------------------------------------- */

/*
 * A synthetic device for the controller: each window has nr_read reads of
 * latency lat_ns and nr_write writes; the window then ends.
 */
static void feed_window(struct fx *f, unsigned int nr_read, u64 lat_ns,
			unsigned int nr_write)
{
	unsigned int i;

	for (i = 0; i < nr_read; i++)
		wtc_sample(&f->c, WTC_K_READ, lat_ns);
	for (i = 0; i < nr_write; i++)
		wtc_sample(&f->c, WTC_K_BG, 1 * MS);
	f->now.ns += f->c.ctl.cur_win_ns;
	wtc_window(&f->c, &f->now);
}

/* Read latency that grows with the writes allowed in flight. */
static u64 lat_of_depth(const struct fx *f, u64 per_req_ns)
{
	return per_req_ns * f->c.lim.max_depth;
}

static void setup_ctl(struct fx *f, const char *lat_us)
{
	DO(setup_opts(f, 128, false, "lat_us", lat_us, NULL));
}

/* The same on a write cache, paced (wc_policy delay). */
static void setup_paced_ctl(struct fx *f)
{
	DO(setup_opts(f, 128, true, "lat_us", "2000", "wc_policy", "delay",
		      NULL));
}

static void test_ctl_slow_device_scales_down(void)
{
	struct fx f;
	int i;

	DO(setup_ctl(&f, "2000"));
	CHECK(wtc_scaling(&f.c));
	CHECK_EQ(f.c.lim.max_depth, 16);
	for (i = 0; i < 4; i++)
		feed_window(&f, 20, 10 * MS, 10);
	CHECK_EQ(f.c.lim.scale_step, 4);
	CHECK_EQ(f.c.lim.max_depth, 1);
	CHECK_EQ(f.c.ctl.last.verdict, WTC_LAT_EXCEEDED);
	CHECK_EQ(f.c.stats.exceeded, 4);
}

/*
 * Under the delay policy on a write cache, depth 1 is not the end: the step
 * goes on doubling the gap between writes, up to WTC_MAX_PACE_STEP, and
 * comes back when reads recover. Under "drain" the step stops at depth 1.
 */
static void test_ctl_paces_write_cache(void)
{
	static const char *const pol[] = { "delay", "drain" };
	static const int top[] = { WTC_MAX_PACE_STEP, 4 };
	struct fx f;
	int i, p;

	for (p = 0; p < 2; p++) {
		DO(setup_opts(&f, 128, true, "lat_us", "2000",
			      "wc_policy", pol[p], NULL));
		for (i = 0; i < 12; i++)
			feed_window(&f, 20, 10 * MS, 10);
		CHECKF(f.c.lim.scale_step == top[p], "%s: step %d", pol[p],
		       f.c.lim.scale_step);
		CHECK_EQ(f.c.lim.max_depth, 1);
		CHECK_EQ(wtc_pace_ns(&f.c), (u64)10 * MS << (top[p] / 2));
		for (i = 0; i < 40 && f.c.lim.scale_step > 0; i++)
			feed_window(&f, 20, 200 * US, 10);
		CHECKF(f.c.lim.scale_step <= 0, "%s: step %d after %d good windows",
		       pol[p], f.c.lim.scale_step, i);
		CHECK(wtc_pace_ns(&f.c) <= 10 * MS);
	}
}

/*
 * Paced, a window sees few writes by design: good reads with fewer writes
 * than the usual minimum still say the pace is right (not "no signal",
 * which would drift the step back and refill the cache).
 */
static void test_ctl_paced_window_judged_on_reads(void)
{
	struct fx f;
	int i;

	DO(setup_paced_ctl(&f));
	for (i = 0; i < 12; i++)
		feed_window(&f, 20, 10 * MS, 10);
	CHECK_EQ(f.c.lim.scale_step, WTC_MAX_PACE_STEP);
	feed_window(&f, 20, 200 * US, 0);
	CHECK_EQ(f.c.ctl.last.verdict, WTC_LAT_OK);
	/* unpaced, the same window is no signal */
	DO(setup_opts(&f, 128, true, "lat_us", "2000", NULL));
	feed_window(&f, 20, 200 * US, 0);
	CHECK_EQ(f.c.ctl.last.verdict, WTC_LAT_UNKNOWN);
}

/*
 * Behind a deep queue the reads of the next windows were issued before the
 * step changed: they must not push the step further until a read issued
 * since could have completed.
 */
static void test_ctl_waits_for_fresh_reads(void)
{
	struct fx f;
	int i;

	/* without pacing, upstream's rule: a step on every miss */
	DO(setup_ctl(&f, "2000"));
	for (i = 0; i < 3; i++)
		feed_window(&f, 5, 400 * MS, 10);
	CHECK_EQ(f.c.lim.scale_step, 3);

	DO(setup_paced_ctl(&f));
	feed_window(&f, 5, 400 * MS, 10);
	CHECK_EQ(f.c.lim.scale_step, 1);
	for (i = 0; i < 5; i++)		/* 5 windows of 70 ms < 400 ms */
		feed_window(&f, 5, 400 * MS, 10);
	CHECK_EQ(f.c.lim.scale_step, 1);
	CHECK_EQ(f.c.stats.exceeded, 6);
	feed_window(&f, 5, 400 * MS, 10);	/* 420 ms since */
	CHECK_EQ(f.c.lim.scale_step, 2);

	/* a read stuck since before the step holds it; a new one moves it */
	DO(setup_paced_ctl(&f));
	CHECK(wtc_read_issue(&f.c, &f.now));
	feed_window(&f, 0, 0, 10);
	CHECK_EQ(f.c.lim.scale_step, 1);
	for (i = 0; i < 10; i++)
		feed_window(&f, 0, 0, 10);
	CHECK_EQ(f.c.lim.scale_step, 1);
	wtc_read_done(&f.c);
	CHECK(wtc_read_issue(&f.c, &f.now));
	feed_window(&f, 0, 0, 10);
	feed_window(&f, 0, 0, 10);
	CHECK_EQ(f.c.lim.scale_step, 2);
}

static void test_ctl_recovers(void)
{
	struct fx f;
	int i;

	DO(setup_ctl(&f, "2000"));
	for (i = 0; i < 6; i++)
		feed_window(&f, 20, 10 * MS, 10);
	CHECK(f.c.lim.scale_step >= 4);
	for (i = 0; i < 40 && f.c.lim.scale_step > 0; i++)
		feed_window(&f, 20, 200 * US, 10);
	CHECKF(f.c.lim.scale_step <= 0, "step %d after %d good windows",
	       f.c.lim.scale_step, i);
	CHECK(f.c.lim.max_depth >= 16);
}

static void test_ctl_no_change_without_samples(void)
{
	struct fx f;
	int i;

	DO(setup_ctl(&f, "2000"));
	for (i = 0; i < 100; i++) {
		f.now.ns += f.c.ctl.cur_win_ns;
		CHECK(!wtc_window(&f.c, &f.now));	/* idle: timer stops */
	}
	CHECK_EQ(f.c.lim.scale_step, 0);
	CHECK_EQ(f.c.stats.step_changes, 0);
	CHECK_EQ(f.c.ctl.last.verdict, WTC_LAT_UNKNOWN);
}

static void test_ctl_drifts_back_without_signal(void)
{
	struct fx f;
	int i;

	DO(setup_ctl(&f, "2000"));
	for (i = 0; i < 3; i++)
		feed_window(&f, 20, 10 * MS, 10);
	CHECK_EQ(f.c.lim.scale_step, 3);
	for (i = 0; i < WTC_UNKNOWN_BUMP - 1; i++)
		feed_window(&f, 0, 0, 0);
	CHECK_EQ(f.c.lim.scale_step, 3);		/* not yet */
	feed_window(&f, 0, 0, 0);
	CHECK_EQ(f.c.lim.scale_step, 2);		/* one unit per 5 windows */
	for (i = 0; i < 2 * WTC_UNKNOWN_BUMP; i++)
		feed_window(&f, 0, 0, 0);
	CHECK_EQ(f.c.lim.scale_step, 0);
	for (i = 0; i < 3 * WTC_UNKNOWN_BUMP; i++)
		feed_window(&f, 0, 0, 0);
	CHECK_EQ(f.c.lim.scale_step, 0);		/* and stays at neutral */
}

/*
 * Only writes, none waiting for a slot: the step stays at 0, where upstream
 * goes deeper (to 3/4 of the queue depth); the first fsync would wait for
 * all of that.
 */
static void test_ctl_writes_only_stay_neutral(void)
{
	struct fx f;
	int i;

	DO(setup_ctl(&f, "2000"));
	for (i = 0; i < 20; i++)
		feed_window(&f, 0, 0, 10);
	CHECK_EQ(f.c.ctl.last.verdict, WTC_LAT_UNKNOWN_WRITES);
	CHECK_EQ(f.c.lim.scale_step, 0);
	CHECK_EQ(f.c.lim.max_depth, 16);
}

/*
 * Windows of writes alone move the step toward 0 from either side: a step
 * above 0 (reads missed) comes down one per window, one below 0 (reads
 * were fast) creeps back one per window; neither goes past 0.
 */
static void test_ctl_writes_only_back_to_neutral(void)
{
	struct fx f;
	int i, s;

	DO(setup_ctl(&f, "2000"));
	for (i = 0; i < 2; i++)			/* reads missed: step 2 */
		feed_window(&f, 20, 10 * MS, 10);
	CHECK_EQ(f.c.lim.scale_step, 2);
	for (i = 0; i < 4; i++) {
		feed_window(&f, 0, 0, 10);
		CHECK_EQ(f.c.lim.scale_step, i < 2 ? 1 - i : 0);
	}
	for (i = 0; i < 40; i++)		/* fast reads: deeper */
		feed_window(&f, 20, MS / 10, 10);
	s = f.c.lim.scale_step;
	CHECK(s <= -2);
	for (i = 1; i <= 2 - s; i++) {
		feed_window(&f, 0, 0, 10);
		CHECK_EQ(f.c.ctl.last.verdict, WTC_LAT_UNKNOWN_WRITES);
		CHECK_EQ(f.c.lim.scale_step, s + i < 0 ? s + i : 0);
	}
	CHECK_EQ(f.c.lim.max_depth, 16);
}

/* Writes alone, and one waits for a slot: the load wants more depth. */
static void setup_write_probe(struct fx *f, bool nonrot)
{
	DO(setup_ctl(f, "2000"));
	wtc_set_device(&f->c, 128, false, 0, nonrot);
	map_n(f, WTC_K_NORMAL, limit(f, WTC_Q_NORMAL) + 1);
	CHECK_EQ(f->c.acct.ctr_queued[WTC_C_WB], 1);
}

/*
 * A device whose latency is outside its queue (a network volume): writes
 * per window grow with the depth, and the 8 in flight drain in 5 ms (160
 * a window). Writes alone that waited for two windows then step deeper,
 * two windows a step, up to upstream's cap of 3/4 of the queue depth, and
 * stay there.
 */
static void test_ctl_write_probe_pays(void)
{
	struct fx f;
	int i;

	DO(setup_write_probe(&f, true));
	for (i = 0; i < 14; i++) {	/* two windows first, two per try */
		feed_window(&f, 0, 0, f.c.lim.max_depth * 10);
		CHECK_EQ(f.c.lim.scale_step, i < 1 ? 0 :
			 i < 5 ? -(i + 1) / 2 : -3);
	}
	CHECK_EQ(f.c.lim.max_depth, 96);
	for (i = 0; i < 10; i++)
		feed_window(&f, 0, 0, f.c.lim.max_depth * 10);
	CHECK_EQ(f.c.lim.max_depth, 96);
	CHECK(dispatch(&f, NULL) != WTC_HOLD);	/* at 96 the writes fit */
	for (i = 0; i < 45; i++)
		feed_window(&f, 0, 0, 500);
	CHECK_EQ(f.c.lim.max_depth, 96);	/* held while they come */
	for (i = 0; i < 15; i++)
		feed_window(&f, 0, 0, 500);
	CHECK_EQ(f.c.lim.max_depth, 61);	/* 64 windows: found again */
	feed_window(&f, 20, 10 * MS, 10);	/* reads miss: back to 0 */
	CHECK_EQ(f.c.lim.scale_step, 0);
	CHECK_EQ(f.c.lim.max_depth, 16);
}

/*
 * A device whose rate stops growing at 40 in flight: the try from 31 to 61
 * completes 1.3x the writes, less than the 1.5x that half of the added
 * depth would give, and the step goes back to 31.
 */
static void test_ctl_write_probe_stops_where_gain_ends(void)
{
	static const int want[] = {
		0, -1, -1, -2, -2, -1, -1, -1, -1, -1,
	};
	struct fx f;
	unsigned int i, d;

	DO(setup_write_probe(&f, true));
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		d = f.c.lim.max_depth < 40 ? f.c.lim.max_depth : 40;
		feed_window(&f, 0, 0, d * 10);
		CHECKF(f.c.lim.scale_step == want[i],
		       "window %u: step %d, want %d", i, f.c.lim.scale_step,
		       want[i]);
	}
	CHECK_EQ(f.c.lim.max_depth, 31);
}

/*
 * The window timer fired late while writes waited at step 0 (a window of
 * 200 ms, twice the writes): the try is judged on writes per second, and
 * twice the depth doubling them pays (per window it would not: 240 a
 * window before, 310 at the try).
 */
static void test_ctl_write_probe_late_timer(void)
{
	struct fx f;

	DO(setup_write_probe(&f, true));
	feed_window(&f, 0, 0, f.c.lim.max_depth * 10);
	CHECK_EQ(f.c.lim.scale_step, 0);
	f.now.ns += 100 * MS;			/* late; the try starts */
	feed_window(&f, 0, 0, f.c.lim.max_depth * 20);
	CHECK_EQ(f.c.lim.scale_step, -1);
	feed_window(&f, 0, 0, f.c.lim.max_depth * 10);
	feed_window(&f, 0, 0, f.c.lim.max_depth * 10);
	CHECK_EQ(f.c.lim.scale_step, -2);		/* it paid */
}

/*
 * A disk that serves one request at a time completes as many writes at any
 * depth, here 4 a window as the model's hdd: the 8 in flight take 200 ms
 * to drain, so the first try comes after ten windows of waiting writes (a
 * flood's first fsync meets none); each try lasts two windows, and the
 * next waits 4, 8, .. windows.
 */
static void test_ctl_write_probe_backs_off(void)
{
	static const int want[] = {
		0, 0, 0, 0, 0, 0, 0, 0, 0,		/* ten windows first */
		-1, -1, 0, 0, 0, 0, 0,			/* try, back, wait 4 */
		-1, -1, 0, 0, 0, 0, 0, 0, 0, 0, 0,	/* again, wait 8 */
		-1, -1, 0,
	};
	struct fx f;
	unsigned int i;

	DO(setup_write_probe(&f, true));
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		feed_window(&f, 0, 0, 4);
		CHECKF(f.c.lim.scale_step == want[i],
		       "window %u: step %d, want %d", i, f.c.lim.scale_step,
		       want[i]);
	}
}

/*
 * A write cache under the delay policy acknowledges at once: whatever the
 * rate, the queue is the cache, not the writes in flight. The first try
 * waits ten windows there, as on a slow disk.
 */
static void test_ctl_write_probe_paced_cache_warms_up(void)
{
	struct fx f;
	int i;

	DO(setup_paced_ctl(&f));
	wtc_set_device(&f.c, 128, true, 0, false);
	map_n(&f, WTC_K_NORMAL, limit(&f, WTC_Q_NORMAL) + 1);
	CHECK_EQ(f.c.acct.ctr_queued[WTC_C_WB], 1);
	for (i = 0; i < 10; i++) {
		feed_window(&f, 0, 0, 160);
		CHECK_EQ(f.c.lim.scale_step, i < 9 ? 0 : -1);
	}
}

/*
 * The writer ends during a try: fewer writes per second, the try fails and
 * the step goes back; writes that never wait for a slot try nothing. (A
 * load that fits the deeper step and runs faster is a try that paid.)
 */
static void test_ctl_write_probe_load_ends(void)
{
	struct fx f;
	int i;

	DO(setup_write_probe(&f, true));
	for (i = 0; i < 10; i++)
		feed_window(&f, 0, 0, 160);
	CHECK_EQ(f.c.lim.scale_step, -1);
	CHECK(dispatch(&f, NULL) != WTC_HOLD);	/* the held write goes */
	CHECK_EQ(f.c.acct.ctr_queued[WTC_C_WB], 0);
	feed_window(&f, 0, 0, 20);		/* the writer is done */
	feed_window(&f, 0, 0, 20);
	CHECK_EQ(f.c.lim.scale_step, 0);
	for (i = 0; i < 70; i++)		/* writes that never wait */
		feed_window(&f, 0, 0, 1000);
	CHECK_EQ(f.c.lim.scale_step, 0);
}

/*
 * An fsync beside writeback that waits: no try, whatever depth would buy.
 * Sync writes that wait by themselves (a sync(2) of a flood) are tried.
 */
static void test_ctl_write_probe_protects(void)
{
	struct fx f;
	int i;

	DO(setup_write_probe(&f, true));
	CHECK(go(map(&f, WTC_K_SYNC)));		/* an fsync's write */
	for (i = 0; i < 14; i++)
		feed_window(&f, 0, 0, f.c.lim.max_depth * 10);
	CHECK_EQ(f.c.lim.scale_step, 0);

	DO(setup_ctl(&f, "2000"));
	map_n(&f, WTC_K_SYNC, limit(&f, WTC_Q_SYNC) + 1);
	CHECK_EQ(f.c.acct.ctr_queued[WTC_C_WB], 1);
	for (i = 0; i < 14; i++)
		feed_window(&f, 0, 0, f.c.lim.max_depth * 10);
	CHECK_EQ(f.c.lim.scale_step, -3);
}

/*
 * Fast reads took the step below 0; then writes alone wait for slots on a
 * disk where depth buys nothing: no try found that step, so it creeps back
 * one per window, as without tries.
 */
static void test_ctl_write_probe_creeps_from_reads(void)
{
	struct fx f;
	int i, s;

	DO(setup_write_probe(&f, true));
	for (i = 0; i < 40; i++)
		feed_window(&f, 20, MS / 10, 10);
	s = f.c.lim.scale_step;
	CHECK(s <= -2);
	f.now.ns += WTC_CLOSE_IO_NSEC;		/* the reads are over */
	for (i = 1; i <= -s; i++) {
		feed_window(&f, 0, 0, 160);
		CHECK_EQ(f.c.lim.scale_step, s + i);
	}
}

/*
 * A rotational disk is tried like any other: a network volume may call
 * itself rotational, and depth pays there (the step goes below 0); a disk
 * with one head completes as many writes at any depth, and the try comes
 * back.
 */
static void test_ctl_write_probe_rotational(void)
{
	struct fx f;
	int i;

	DO(setup_write_probe(&f, false));
	for (i = 0; i < 4; i++)
		feed_window(&f, 0, 0, f.c.lim.max_depth * 10);
	CHECK_EQ(f.c.lim.scale_step, -2);

	DO(setup_write_probe(&f, false));
	for (i = 0; i < 12; i++)
		feed_window(&f, 0, 0, 4);
	CHECK_EQ(f.c.lim.scale_step, 0);
	CHECK_EQ(f.c.lim.max_depth, 16);
}

static void test_ctl_stuck_read_exceeds(void)
{
	struct fx f;

	DO(setup_ctl(&f, "2000"));
	CHECK(wtc_read_issue(&f.c, &f.now));
	CHECK(!wtc_read_issue(&f.c, &f.now));	/* one watched at a time */
	feed_window(&f, 0, 0, 10);		/* 100 ms: the read is stuck */
	CHECK_EQ(f.c.ctl.last.verdict, WTC_LAT_EXCEEDED);
	CHECK_EQ(f.c.lim.scale_step, 1);
	wtc_read_done(&f.c);
	feed_window(&f, 0, 0, 10);
	CHECK_EQ(f.c.ctl.last.verdict, WTC_LAT_UNKNOWN_WRITES);
}

static void test_ctl_fixed_depth_does_not_scale(void)
{
	struct fx f;
	int i;

	DO(setup_opts(&f, 128, false, "lat_us", "2000", "depth", "8", NULL));
	CHECK(!wtc_scaling(&f.c));
	for (i = 0; i < 10; i++)
		feed_window(&f, 20, 10 * MS, 10);
	CHECK_EQ(f.c.lim.scale_step, 0);
	CHECK_EQ(f.c.lim.max_depth, 8);
	CHECK_EQ(f.c.ctl.last.verdict, WTC_LAT_EXCEEDED);	/* still reported */
}

static void test_ctl_lat_off(void)
{
	struct fx f;
	int i;

	DO(setup_ctl(&f, "0"));
	CHECK(!wtc_scaling(&f.c));
	for (i = 0; i < 10; i++)
		feed_window(&f, 20, 10 * MS, 10);
	CHECK_EQ(f.c.lim.scale_step, 0);
}

static void test_ctl_auto_target(void)
{
	struct fx f;

	DO(setup(&f, 32, false));		/* set_device(): non-rotational */
	CHECK_EQ(f.c.ctl.lat_target_ns, 2 * MS);
	wtc_set_device(&f.c, 32, false, 0, false);
	CHECK_EQ(f.c.ctl.lat_target_ns, 75 * MS);
}

/* One fast read cannot hide a bad window when a percentile is compared. */
static void test_ctl_percentile(void)
{
	struct fx f, g;

	DO(setup_ctl(&f, "2000"));
	DO(setup_opts(&g, 128, false, "lat_us", "2000", "lat_pct", "90", NULL));
	wtc_sample(&f.c, WTC_K_READ, 100 * US);
	wtc_sample(&g.c, WTC_K_READ, 100 * US);
	feed_window(&f, 19, 10 * MS, 10);
	feed_window(&g, 19, 10 * MS, 10);
	CHECK_EQ(f.c.ctl.last.verdict, WTC_LAT_OK);		/* the minimum */
	CHECK_EQ(g.c.ctl.last.verdict, WTC_LAT_EXCEEDED);	/* the p90 */
	CHECK(g.c.ctl.last.p50_ns >= 10 * MS && g.c.ctl.last.p50_ns <= 13 * MS);
	CHECK_EQ(g.c.ctl.last.min_ns, 100 * US);
}

static void test_ctl_window_shrinks(void)
{
	struct fx f;
	int i;

	DO(setup_ctl(&f, "2000"));
	CHECK_EQ(f.c.ctl.cur_win_ns, 100 * MS);
	for (i = 0; i < 3; i++)
		feed_window(&f, 20, 10 * MS, 10);
	CHECK_EQ(f.c.lim.scale_step, 3);
	CHECK_EQ(f.c.ctl.cur_win_ns, 50 * MS);	/* 100 ms / sqrt(4) */
}

/*
 * A steady load whose read latency crosses the target between two steps:
 * upstream would move every window; the damped probe settles on the good
 * step and only tries the bad one, rarely.
 */
static void test_ctl_steady_no_oscillation(void)
{
	struct fx f;
	unsigned int at_good = 0;
	u64 changes;
	int i;

	DO(setup_ctl(&f, "1000"));
	/* 100 us per write in flight: 16 -> 1.6 ms (bad), 8 -> 0.8 ms (good) */
	for (i = 0; i < 100; i++)
		feed_window(&f, 20, lat_of_depth(&f, 100 * US), 10);
	changes = f.c.stats.step_changes;
	for (i = 0; i < 300; i++) {
		feed_window(&f, 20, lat_of_depth(&f, 100 * US), 10);
		at_good += f.c.lim.scale_step == 1;
	}
	changes = f.c.stats.step_changes - changes;
	CHECKF(changes <= 12, "%llu step changes in 300 steady windows",
	       (unsigned long long)changes);
	CHECKF(at_good >= 280, "at the good step in %u of 300 windows", at_good);
}

static void test_hist_buckets(void)
{
	u64 v;

	CHECK_EQ(wtc_hist_bucket(0), 0);
	for (v = 1 * US; v < 60ULL * 1000 * MS; v = v * 9 / 8 + 1) {
		unsigned int b = wtc_hist_bucket(v);
		u64 up = wtc_hist_value(b);

		CHECKF(up >= v - v % US, "bucket %u tops at %llu < %llu", b,
		       (unsigned long long)up, (unsigned long long)v);
		CHECKF(up <= v + v / 4 + US, "bucket %u tops at %llu >> %llu",
		       b, (unsigned long long)up, (unsigned long long)v);
	}
}

/* Discards count as write samples, as upstream's op_is_write() does. */
static void test_discard_is_write_sample(void)
{
	struct fx f;

	DO(setup(&f, 32, false));
	wtc_sample(&f.c, WTC_K_DISCARD, 1 * MS);
	CHECK_EQ(f.c.ctl.win.nr_write, 1);
}

/* wb_percent above 100 cannot push the step past depth 1 of the step. */
static void test_wb_percent_step_bounded(void)
{
	struct fx f;
	int i;

	DO(setup_opts(&f, 128, false, "lat_us", "2000", "wb_percent", "1000",
		      NULL));
	for (i = 0; i < 40; i++)
		feed_window(&f, 5, 100 * MS, 5);
	CHECK_EQ(f.c.lim.scale_step, 4);		/* 16 >> 4: depth 1 */
	CHECK_EQ(f.c.lim.max_depth, 10);		/* 1 x 1000% */
}

/* ---- the lock-free side: per-CPU shards, stamps -------------------------- */

/*
 * Samples taken in shards (one per CPU in the kernel) and folded at the
 * window's end give the controller exactly what it gets when every sample
 * goes to the core: the same window summary, verdict and step, window after
 * window. Without the fold, the shards' reads would be lost.
 */
static void test_fold_is_exact(void)
{
	static const u64 lat[] = { 90 * US, 3 * MS, 700 * US, 12 * MS, 1 * MS };
	struct wtc_shard sh[3];
	struct fx f, g;
	unsigned int w, i;

	DO(setup_ctl(&f, "2000"));
	DO(setup_ctl(&g, "2000"));
	for (w = 0; w < 6; w++) {
		memset(sh, 0, sizeof(sh));
		for (i = 0; i < 40; i++) {
			u64 l = lat[(i + w) % 5] + (w < 3 ? 0 : 3 * MS);

			wtc_sample(&f.c, WTC_K_READ, l);
			wtc_shard_sample(&sh[i % 3], WTC_K_READ, l);
			wtc_sample(&f.c, WTC_K_DIRECT, 0);
			wtc_shard_sample(&sh[(i + 1) % 3], WTC_K_DIRECT, 0);
		}
		for (i = 0; i < 3; i++)
			wtc_fold(&g.c, &sh[i]);
		f.now.ns += f.c.ctl.cur_win_ns;
		g.now.ns += g.c.ctl.cur_win_ns;
		wtc_window(&f.c, &f.now);
		wtc_window(&g.c, &g.now);
		CHECK_EQ(g.c.ctl.last.nr_read, 40);
		CHECK_EQ(g.c.ctl.last.nr_write, 40);
		CHECK_EQ(g.c.ctl.last.min_ns, f.c.ctl.last.min_ns);
		CHECK_EQ(g.c.ctl.last.mean_ns, f.c.ctl.last.mean_ns);
		CHECK_EQ(g.c.ctl.last.p50_ns, f.c.ctl.last.p50_ns);
		CHECK_EQ(g.c.ctl.last.p99_ns, f.c.ctl.last.p99_ns);
		CHECK_EQ(g.c.ctl.last.verdict, f.c.ctl.last.verdict);
		CHECK_EQ(g.c.lim.scale_step, f.c.lim.scale_step);
	}
	CHECK(f.c.stats.exceeded > 0);		/* the windows moved the step */
}

/* Bios counted in shards show in status once, however often it folds. */
static void test_fold_counts_once(void)
{
	struct wtc_shard sh[2];
	char buf[2048], v[32];
	struct fx f;
	int i;

	DO(setup(&f, 32, false));
	memset(sh, 0, sizeof(sh));
	for (i = 0; i < 5; i++)
		sh[i % 2].kind[WTC_K_READ]++;
	sh[0].kind[WTC_K_FLUSH]++;
	map(&f, WTC_K_READ);			/* counted by the core */
	wtc_fold(&f.c, &sh[0]);
	wtc_fold(&f.c, &sh[1]);
	wtc_fold(&f.c, &sh[0]);			/* status again: nothing new */
	CHECK(wtc_format_status(&f.c, 0, buf, sizeof(buf)) > 0);
	CHECK_STR(status_val(buf, "n_read", v, sizeof(v)), "6");
	CHECK_STR(status_val(buf, "n_flush", v, sizeof(v)), "1");
	CHECK_EQ(sh[1].win.nr_read, 0);
}

/*
 * "Reads recently" is stamped at most once per WTC_STAMP_NSEC, so that reads
 * on every CPU do not bounce one cache line: a read within that much of the
 * stamp leaves it, and the background limit comes back that much early at
 * most; a later read moves it.
 */
static void test_read_stamp_granularity(void)
{
	struct fx f;

	DO(setup(&f, 32, false));
	map(&f, WTC_K_READ);
	f.now.ns += WTC_STAMP_NSEC - 1;
	map(&f, WTC_K_READ);			/* within the stamp: kept */
	f.now.ns += 100 * MS - (WTC_STAMP_NSEC - 1) - 1;
	CHECK_EQ(limit(&f, WTC_Q_NORMAL), 4);
	f.now.ns += 1;				/* 100 ms after the first */
	CHECK_EQ(limit(&f, WTC_Q_NORMAL), 8);
	map(&f, WTC_K_READ);
	f.now.ns += WTC_STAMP_NSEC;
	map(&f, WTC_K_READ);			/* a stamp later: moved */
	f.now.ns += 100 * MS - 1;
	CHECK_EQ(limit(&f, WTC_Q_NORMAL), 4);
}

/* One read's age is watched at a time; its completion frees the slot. */
static void test_read_watch_one(void)
{
	struct fx f;

	DO(setup(&f, 32, false));
	CHECK(wtc_read_issue(&f.c, &f.now));
	f.now.ns += 1 * MS;
	CHECK(!wtc_read_issue(&f.c, &f.now));
	CHECK_EQ(f.c.ctl.read_issue_ns, T0);
	wtc_read_done(&f.c);
	CHECK_EQ(f.c.ctl.read_issue_ns, 0);
	CHECK(wtc_read_issue(&f.c, &f.now));
	CHECK_EQ(f.c.ctl.read_issue_ns, T0 + 1 * MS);
}

/*
 * Which reads are timed: every one while this CPU's shard has fewer than
 * WTC_SAMPLE_ALL in the window, then one in WTC_SAMPLE_EVERY. What that
 * changes for the controller: a busy window's minimum is the subsample's.
 * With reads spread as usual (fast and slow mixed) the verdicts stay those
 * of every read; a lone fast read among many slow ones in a busy window
 * is missed unless it is one of the timed, and the window then counts as
 * a miss where timing every read would not have.
 */
static void test_sampled_reads(void)
{
	struct wtc_shard sh[2];
	struct fx f, g;
	unsigned int seq[2] = { 0, 0 }, i, timed = 0;

	memset(sh, 0, sizeof(sh));
	for (i = 0; i < 100; i++) {
		struct wtc_shard *s = &sh[i % 2];

		if (wtc_sample_read(s, ++seq[i % 2])) {
			wtc_shard_sample(s, WTC_K_READ, 1 * MS);
			timed++;
		}
	}
	/* 16 per CPU, then 1 in 8 of the other 34 on each (seq 24, 32, 40, 48). */
	CHECK_EQ(sh[0].win.nr_read, WTC_SAMPLE_ALL + 4);
	CHECK_EQ(timed, 2 * (WTC_SAMPLE_ALL + 4));

	/* Mixed latencies: the same verdicts as timing every read. */
	DO(setup_ctl(&f, "2000"));
	DO(setup_ctl(&g, "2000"));
	memset(sh, 0, sizeof(sh));
	seq[0] = seq[1] = 0;
	for (i = 0; i < 400; i++) {
		u64 lat = i % 3 ? 5 * MS : 1 * MS;
		struct wtc_shard *s = &sh[i % 2];

		wtc_sample(&f.c, WTC_K_READ, lat);
		if (wtc_sample_read(s, ++seq[i % 2]))
			wtc_shard_sample(s, WTC_K_READ, lat);
	}
	for (i = 0; i < 10; i++)
		wtc_sample(&f.c, WTC_K_BG, 1 * MS);
	sh[0].win.nr_write = 10;
	wtc_fold(&g.c, &sh[0]);
	wtc_fold(&g.c, &sh[1]);
	f.now.ns += f.c.ctl.cur_win_ns;
	g.now.ns += g.c.ctl.cur_win_ns;
	wtc_window(&f.c, &f.now);
	wtc_window(&g.c, &g.now);
	CHECK_EQ(f.c.ctl.last.verdict, WTC_LAT_OK);
	CHECK_EQ(g.c.ctl.last.verdict, WTC_LAT_OK);
	CHECK_EQ(g.c.ctl.last.min_ns, f.c.ctl.last.min_ns);

	/* One fast read, the 50th of a busy CPU, untimed: a miss. */
	memset(sh, 0, sizeof(sh));
	for (i = 1; i <= 100; i++) {
		u64 lat = i == 50 ? 1 * MS : 5 * MS;

		if (wtc_sample_read(&sh[0], i))
			wtc_shard_sample(&sh[0], WTC_K_READ, lat);
	}
	sh[0].win.nr_write = 10;
	wtc_fold(&g.c, &sh[0]);
	g.now.ns += g.c.ctl.cur_win_ns;
	wtc_window(&g.c, &g.now);
	CHECK_EQ(g.c.ctl.last.min_ns, 5 * MS);
	CHECK_EQ(g.c.ctl.last.verdict, WTC_LAT_EXCEEDED);
}

static const struct test tests[] = {
	T(discard_is_write_sample),
	T(wb_percent_step_bounded),
	T(ctl_slow_device_scales_down),
	T(ctl_paces_write_cache),
	T(ctl_paced_window_judged_on_reads),
	T(ctl_waits_for_fresh_reads),
	T(ctl_recovers),
	T(ctl_no_change_without_samples),
	T(ctl_drifts_back_without_signal),
	T(ctl_writes_only_stay_neutral),
	T(ctl_writes_only_back_to_neutral),
	T(ctl_write_probe_pays),
	T(ctl_write_probe_stops_where_gain_ends),
	T(ctl_write_probe_late_timer),
	T(ctl_write_probe_backs_off),
	T(ctl_write_probe_paced_cache_warms_up),
	T(ctl_write_probe_load_ends),
	T(ctl_write_probe_protects),
	T(ctl_write_probe_creeps_from_reads),
	T(ctl_write_probe_rotational),
	T(ctl_stuck_read_exceeds),
	T(ctl_fixed_depth_does_not_scale),
	T(ctl_lat_off),
	T(ctl_auto_target),
	T(ctl_percentile),
	T(ctl_window_shrinks),
	T(ctl_steady_no_oscillation),
	T(hist_buckets),
	T(fold_is_exact),
	T(fold_counts_once),
	T(read_stamp_granularity),
	T(read_watch_one),
	T(sampled_reads),
};

const struct suite controller_suite = SUITE(tests);
