// SPDX-License-Identifier: GPL-2.0-only
/*
 * wbt_core: classification, depth limits, hold queues and release rules of
 * dm-wbthrottle. See wbt_core.h for the model. No kernel headers here.
 */
#include "wbt_core.h"
#include "wbt_names.h"

static const char * const kind_names[WTC_NR_KINDS] = {
	[WTC_K_READ] = "read",
	[WTC_K_BG] = "bg",
	[WTC_K_NORMAL] = "normal",
	[WTC_K_SYNC] = "sync",
	[WTC_K_RECLAIM] = "reclaim",
	[WTC_K_DIRECT] = "direct",
	[WTC_K_DISCARD] = "discard",
	[WTC_K_FLUSH] = "flush",
	[WTC_K_OTHER] = "other",
};

#define WTC_NAME(v, name)		\
	[v] = name,
#define WTC_NAME_LAST(v, name)		\
	[v] = name

static const char * const queue_names[WTC_Q_NONE + 1] = { WTC_QUEUE_NAMES };
static const char * const lat_names[WTC_LAT_EXCEEDED + 1] = { WTC_LAT_NAMES };

#undef WTC_NAME
#undef WTC_NAME_LAST

static const char * const wc_policy_names[WTC_NR_WC_POLICIES] = {
	[WTC_WC_DRAIN] = "drain",
	[WTC_WC_DELAY] = "delay",
	[WTC_WC_OFF] = "off",
	[WTC_WC_AUTO] = "auto",
};

static const enum wtc_counter queue_counter[WTC_NR_QUEUES] = {
	[WTC_Q_RECLAIM] = WTC_C_RECLAIM,
	[WTC_Q_SYNC] = WTC_C_WB,
	[WTC_Q_NORMAL] = WTC_C_WB,
	[WTC_Q_BG] = WTC_C_WB,
	[WTC_Q_DISCARD] = WTC_C_DISCARD,
};

const char *wtc_kind_name(enum wtc_kind kind)
{
	return kind < WTC_NR_KINDS ? kind_names[kind] : "?";
}

const char *wtc_queue_name(enum wtc_queue q)
{
	return q <= WTC_Q_NONE ? queue_names[q] : "none";
}

const char *wtc_lat_name(enum wtc_lat v)
{
	return v <= WTC_LAT_EXCEEDED ? lat_names[v] : "none";
}

const char *wtc_wc_policy_name(enum wtc_wc_policy p)
{
	return p < WTC_NR_WC_POLICIES ? wc_policy_names[p] : "?";
}

/* ---- classification ---------------------------------------------------- */

static bool queue_gated(enum wtc_queue q)
{
	return q == WTC_Q_NORMAL || q == WTC_Q_BG || q == WTC_Q_DISCARD;
}

/* ---- limits -------------------------------------------------------------- */

/* Upstream's rq_depth_calc_max_depth(), on our own fields. */
static unsigned int calc_step_depth(struct wtc_core *c)
{
	unsigned int qd = c->dev.queue_depth ? c->dev.queue_depth : 1;
	unsigned int depth, maxd;
	int step = c->lim.scale_step;

	c->lim.scaled_max = false;
	if (qd == 1) {
		if (step > 0)
			return 1;
		c->lim.scaled_max = true;
		return 2;
	}
	depth = qd < WTC_DEF_DEPTH ? qd : WTC_DEF_DEPTH;
	if (step > 0)
		return 1 + ((depth - 1) >> (step < 31 ? step : 31));
	if (step == 0)
		return depth;
	maxd = 3 * qd / 4;
	if (maxd < 1)
		maxd = 1;
	if (-step < 20)
		depth = 1 + ((depth - 1) << -step);
	else
		depth = UINT_MAX;	/* far past the cap */
	if (depth > maxd) {
		c->lim.scaled_max = true;
		depth = maxd;
	}
	return depth;
}

/* A volatile write cache under the delay policy: the pace, not depth. */
static bool paced_cache(const struct wtc_core *c)
{
	return c->dev.wc && wtc_wc_policy(c) == WTC_WC_DELAY;
}

void wtc_update_limits(struct wtc_core *c)
{
	u64 max;

	c->lim.step_depth = calc_step_depth(c);
	if (c->cfg.depth) {
		max = c->cfg.depth;
		c->lim.scaled_max = true;
	} else {
		max = (u64)c->lim.step_depth * c->cfg.wb_percent / 100;
		if (max > WTC_MAX_DEPTH)
			max = WTC_MAX_DEPTH;
	}
	if (max < 1)
		max = 1;
	c->lim.max_depth = max;
	if (max <= 2) {
		c->lim.wb_normal = max;
		c->lim.wb_background = 1;
	} else {
		c->lim.wb_normal = (max + 1) / 2;
		c->lim.wb_background = (max + 3) / 4;
	}
	/*
	 * Until a caller sees a change here, it may stamp with the tick's
	 * clock: the pace then measures one gap from a stamp up to a tick
	 * old.
	 */
	WTC_WRITE_ONCE(c->lim.fine_clock, paced_cache(c));
	/* New limits: let the dispatcher look again. */
	c->acct.open[WTC_C_WB] = true;
	c->acct.open[WTC_C_DISCARD] = true;
}

static bool throttling(const struct wtc_core *c)
{
	return c->cfg.enabled && c->acct.holding;
}

/*
 * A write of queue q went while normal or background writes are held: they
 * are promoted now (wtc_dispatch()); look whether they may go.
 */
bool wtc_overtook(const struct wtc_core *c, enum wtc_queue q)
{
	return q == WTC_Q_SYNC &&
	       (c->acct.queued[WTC_Q_NORMAL] || c->acct.queued[WTC_Q_BG]);
}

/* Does the core hold writes back at all (enabled, not suspending)? */
bool wtc_throttling(const struct wtc_core *c)
{
	return throttling(c);
}

/* Time since a stamp; 0 if now is a little older (sampled before the lock). */
static u64 elapsed(const struct wtc_now *now, u64 stamp)
{
	return now->ns > stamp ? now->ns - stamp : 0;
}

static bool close_io(const struct wtc_core *c, const struct wtc_now *now)
{
	return elapsed(now, WTC_READ_ONCE(c->acct.last_other_ns)) < WTC_CLOSE_IO_NSEC;
}

/*
 * Someone waited for a write (fsync, a journal commit) in the last 3 s:
 * an ext4 commit on a flooded disk waits 1.5-2 s for ordered data between
 * its journal writes and its commit block, with no sync write in between.
 */
static bool close_sync(const struct wtc_core *c, const struct wtc_now *now)
{
	return elapsed(now, c->acct.last_sync_ns) < WTC_CLOSE_SYNC_NSEC;
}

/*
 * The watched read (wtc_read_issue()) has not completed. A read stuck
 * behind the flood for longer than close_io's 100 ms is still a reader
 * waiting: if its protection lapsed, the writes let go meanwhile would be
 * what the next read waits behind.
 */
static bool read_in_flight(const struct wtc_core *c)
{
	return WTC_READ_ONCE(c->ctl.read_issue_ns) != 0;
}

/*
 * Someone would notice a deep write queue now: a reader (upstream's
 * close_io, or a read still in flight), or a task waiting for sync writes
 * (an fsync, a journal commit: it waits for the writeback ahead of it on
 * the disk). ext4 submits its writeback without REQ_BACKGROUND, so this is
 * what limits it while an fsync waits (to sync_share(): wtc_limit()).
 */
static bool protecting(const struct wtc_core *c, const struct wtc_now *now)
{
	return close_io(c, now) || read_in_flight(c) || close_sync(c, now);
}

/* A dirtier waits and nobody needs protecting: every writeback limit lifts. */
static bool full_lift(const struct wtc_core *c, const struct wtc_now *now)
{
	return now->dirty_wait && !protecting(c, now);
}

/*
 * Does a flush of this device's write cache hold writeback? See
 * wtc_flush_issue().
 */
bool wtc_counts_flushes(const struct wtc_core *c)
{
	return WTC_READ_ONCE(c->dev.wc) &&
	       WTC_READ_ONCE(c->cfg.wc_policy) != WTC_WC_OFF;
}

static bool flush_hold(const struct wtc_core *c)
{
	return c->acct.flushes && wtc_counts_flushes(c);
}

/*
 * What normal and background writeback may have in flight while someone
 * waits for a sync write: half of wb_background (at least one). An fsync
 * or a journal commit waits for the writeback queued ahead of its own
 * writes on the disk, and for the ordered data it flushes first; every
 * slot the flood keeps is disk time between the waiter and its commit.
 * Measured (tests/bench/README.md, "Half the background limit while an
 * fsync is around"): fsync p99 at or below half of blk-wbt's in 15 of 16
 * cells over two boots per kernel, against 7 of 16 with wb_background;
 * writers up to 10 % slower on a disk without cache.
 */
static unsigned int sync_share(const struct wtc_core *c)
{
	return c->lim.wb_background > 1 ? c->lim.wb_background / 2 : 1;
}

unsigned int wtc_limit(const struct wtc_core *c, enum wtc_queue q,
		       const struct wtc_now *now)
{
	if (!throttling(c))
		return UINT_MAX;
	switch (q) {
	case WTC_Q_RECLAIM:
	case WTC_Q_SYNC:
		return c->lim.max_depth;
	case WTC_Q_DISCARD:
		return c->lim.wb_background;
	default:
		break;
	}
	if (flush_hold(c))
		return 0;
	/*
	 * A dirtier waits: writeback is what it waits for, so lift the
	 * limits, as upstream does; but not while reads or sync writes are
	 * around: readers and fsync keep their protection exactly when the
	 * flood is at its worst.
	 */
	if (full_lift(c, now))
		return c->lim.max_depth;
	if (close_sync(c, now))
		return sync_share(c);
	if (q == WTC_Q_BG || protecting(c, now))
		return c->lim.wb_background;
	return c->lim.wb_normal;
}

/*
 * The policy "auto" stands for: pacing on a rotational disk, where the
 * benchmark shows it keeps reads fast (README); on a non-rotational one
 * a fixed gap per request would cap small writes at a few hundred a second,
 * so upstream's drain rule.
 */
enum wtc_wc_policy wtc_wc_policy(const struct wtc_core *c)
{
	if (c->cfg.wc_policy != WTC_WC_AUTO)
		return c->cfg.wc_policy;
	return c->dev.nonrot ? WTC_WC_DRAIN : WTC_WC_DELAY;
}

/*
 * Does the pace of the delay policy apply on this device? Only then do a
 * tracked write's map and completion need a clock finer than the tick:
 * every other rule of wtc_map() and wtc_done() works in tens of
 * milliseconds or more. Lock-free, so that the caller can pick its clock
 * before it takes the lock; wtc_update_limits() keeps the answer.
 */
bool wtc_fine_clock(const struct wtc_core *c)
{
	return WTC_READ_ONCE(c->lim.fine_clock);
}

/* The write cache rule in force for gated queues right now. */
static enum wtc_wc_policy wc_rule(const struct wtc_core *c,
				  const struct wtc_now *now)
{
	if (!c->dev.wc || full_lift(c, now))
		return WTC_WC_OFF;
	return wtc_wc_policy(c);
}

/*
 * Delay policy: the gap between gated writes. A write cache acknowledges at
 * once, so depth bounds nothing there and the step scales the pace instead:
 * each step against missed reads multiplies the gap by sqrt(2) (181/128),
 * fine enough to settle near the rate at which the disk destages.
 */
u64 wtc_pace_ns(const struct wtc_core *c)
{
	u64 gap = (u64)c->cfg.cache_delay_usec * 1000;
	int step = c->lim.scale_step;
	int e = step < 0 ? -step : step;

	if (e > WTC_MAX_PACE_STEP)
		e = WTC_MAX_PACE_STEP;
	if (step > 0) {
		gap <<= e / 2;
		if (e & 1)
			gap = gap * 181 / 128;
	} else if (step < 0) {
		gap >>= e / 2;
		if (e & 1)
			gap = gap * 90 / 128;
	}
	return gap;
}

/* The pace protects other I/O: with nobody to protect, the cache absorbs. */
static bool pacing(const struct wtc_core *c, const struct wtc_now *now)
{
	return wc_rule(c, now) == WTC_WC_DELAY &&
	       (c->lim.scale_step > 0 || protecting(c, now));
}

/* Delay policy: nanoseconds until a gated queue may issue again, or 0. */
static u64 delay_left(const struct wtc_core *c, enum wtc_queue q,
		      const struct wtc_now *now)
{
	u64 since = elapsed(now, c->acct.last_gated_ns);
	u64 delay;

	if (!throttling(c) || queue_counter[q] != WTC_C_WB ||
	    !queue_gated(q) || !pacing(c, now))
		return 0;
	delay = wtc_pace_ns(c);
	return since < delay ? delay - since : 0;
}

static bool under_limit(const struct wtc_core *c, enum wtc_queue q,
			const struct wtc_now *now)
{
	return c->acct.inflight[queue_counter[q]] < wtc_limit(c, q, now);
}

static void take_slot(struct wtc_core *c, enum wtc_queue q,
		      const struct wtc_now *now)
{
	c->acct.inflight[queue_counter[q]]++;
	if (++c->acct.q_inflight[q] > c->stats.hwm[q])
		c->stats.hwm[q] = c->acct.q_inflight[q];
	if (queue_gated(q) && queue_counter[q] == WTC_C_WB)
		c->acct.last_gated_ns = now->ns;
	if (q == WTC_Q_SYNC && (c->acct.queued[WTC_Q_NORMAL] || c->acct.queued[WTC_Q_BG]) &&
	    c->acct.overtakes < WTC_DEF_DEPTH)
		c->acct.overtakes++;
}

/*
 * A queue's open group is one word, so that a write joins it with one
 * compare-and-exchange and no lock: the group (10 bits), its sectors so
 * far (16), the sector it ends at (38, 128 TiB). A write beyond that, or
 * one that would make the group larger, starts a request of its own:
 * counting one request too many is safe, one too few is not.
 */
#define CUR_END_BITS	38
#define CUR_SECT_BITS	16
#define CUR_END_MAX	((1ULL << CUR_END_BITS) - 1)
#define CUR_SECT_MAX	((1U << CUR_SECT_BITS) - 1)

static u64 cur_pack(unsigned int g, unsigned int sectors, u64 end)
{
	return (u64)g << (CUR_END_BITS + CUR_SECT_BITS) |
	       (u64)sectors << CUR_END_BITS | end;
}

static unsigned int cur_grp(u64 cur)
{
	return cur >> (CUR_END_BITS + CUR_SECT_BITS);
}

static unsigned int cur_sectors(u64 cur)
{
	return (cur >> CUR_END_BITS) & CUR_SECT_MAX;
}

static u64 cur_end(u64 cur)
{
	return cur & CUR_END_MAX;
}

/* The open group of q after adding io to one of n sectors; 0: cannot. */
static u64 cur_next(const struct wtc_core *c, unsigned int g, unsigned int n,
		    const struct wtc_io *io)
{
	u64 end = io->sector + io->sectors;
	unsigned int max = c->dev.max_merge_sectors;

	if (max > CUR_SECT_MAX)
		max = CUR_SECT_MAX;
	/* n > max: the lower queue's requests shrank since the group began. */
	if (!io->sectors || n > max || io->sectors > max - n || end > CUR_END_MAX)
		return 0;
	return cur_pack(g, n + io->sectors, end);
}

/*
 * Does io continue the open group of queue q (contiguous, the group still
 * in flight, not too large)? Then it joins: *grp is the group, no slot is
 * taken. Lock-free; the caller checks that nothing is held ahead. Between
 * the exchange and the reference the group can complete, its id be reused
 * for another request, and io count in that one: one request too many in
 * flight until it completes, never a slot lost or freed twice.
 */
static bool try_join(struct wtc_core *c, enum wtc_queue q,
		     const struct wtc_io *io, unsigned int *grp)
{
	u64 cur = WTC_READ_ONCE(c->acct.cursor[q]);
	unsigned int g = cur_grp(cur);
	u64 next;

	if (!cur || !io || io->sector != cur_end(cur))
		return false;
	next = cur_next(c, g, cur_sectors(cur), io);
	if (!next || wtc_cmpxchg64(&c->acct.cursor[q], cur, next) != cur)
		return false;
	if (!wtc_atomic_inc_not_zero(&c->acct.grp_refs[g]))
		return false;	/* completed meanwhile: a request of its own */
	*grp = g;
	return true;
}

/* Would io join the open group of q now (wtc_dispatch(): it goes)? */
static bool joinable(const struct wtc_core *c, enum wtc_queue q,
		     const struct wtc_io *io)
{
	u64 cur = WTC_READ_ONCE(c->acct.cursor[q]);
	unsigned int g = cur_grp(cur);

	return cur && io->sector == cur_end(cur) &&
	       cur_next(c, g, cur_sectors(cur), io) &&
	       wtc_atomic_read(&c->acct.grp_refs[g]) > 0;
}

/* Take a slot for a new request; returns its group, if it can have one. */
static unsigned int new_group(struct wtc_core *c, enum wtc_queue q,
			      const struct wtc_io *io, const struct wtc_now *now)
{
	unsigned int g;

	take_slot(c, q, now);
	WTC_WRITE_ONCE(c->acct.cursor[q], 0);
	if (!io || !io->sectors || q == WTC_Q_DISCARD || !c->acct.grp_nfree)
		return WTC_NO_GROUP;
	g = c->acct.grp_free[--c->acct.grp_nfree];
	wtc_atomic_set(&c->acct.grp_refs[g], 1);
	c->acct.grp_q[g] = q;
	WTC_WRITE_ONCE(c->acct.cursor[q], cur_next(c, g, 0, io));
	return g;
}

/* Group g's last bio completed: free it, close it if open. */
static void free_group(struct wtc_core *c, unsigned int g)
{
	enum wtc_queue q = c->acct.grp_q[g];
	u64 cur = WTC_READ_ONCE(c->acct.cursor[q]);

	c->acct.grp_free[c->acct.grp_nfree++] = g;
	/* Only the lock holder moves the cursor to another group. */
	if (cur && cur_grp(cur) == g)
		WTC_WRITE_ONCE(c->acct.cursor[q], 0);
}

/* Is anything of this or a stronger queue on the same counter held? */
static bool held_ahead(const struct wtc_core *c, enum wtc_queue q)
{
	enum wtc_queue p;

	for (p = 0; p <= q; p++)
		if (queue_counter[p] == queue_counter[q] && c->acct.queued[p])
			return true;
	return false;
}

/* Deferring bytes more would pass the bound (0: nothing is deferred). */
static bool backlog_full(const struct wtc_core *c, u64 bytes)
{
	u64 bound = (u64)c->cfg.backlog_kb * 1024;

	return !bound || c->acct.deferred_bytes + bytes > bound;
}

/*
 * A write that may not go now: its submitter waits if it may sleep; a
 * REQ_NOWAIT one is refused; otherwise the target holds it, unless the
 * backlog is full, and then it goes at once.
 */
static int hold(struct wtc_core *c, enum wtc_queue q, const struct wtc_io *io,
		const struct wtc_now *now)
{
	unsigned int mode = io ? io->mode : WTC_IO_DEFER;
	u64 bytes = io ? io->bytes : 0;

	if (!c->cfg.push_back)
		mode &= ~WTC_IO_SLEEP;
	if (mode & WTC_IO_NOWAIT) {
		c->stats.again++;
		return WTC_AGAIN;
	}
	if (!(mode & WTC_IO_SLEEP) && backlog_full(c, bytes)) {
		c->stats.overflow++;
		return new_group(c, q, io, now);
	}
	c->acct.queued[q]++;
	WTC_WRITE_ONCE(c->acct.ctr_queued[queue_counter[q]],
		       c->acct.ctr_queued[queue_counter[q]] + 1);
	c->stats.throttled[q]++;
	c->ctl.waited |= 1u << q;	/* for write_probe() */
	if (mode & WTC_IO_SLEEP) {
		c->stats.slept++;
		return WTC_WAIT;
	}
	c->acct.deferred[q]++;
	c->acct.deferred_bytes += bytes;
	c->stats.deferred++;
	if (c->acct.deferred_bytes > c->stats.deferred_bytes_max)
		c->stats.deferred_bytes_max = c->acct.deferred_bytes;
	return WTC_HOLD;
}

/* ---- the three events: map, dispatch, done -------------------------------- */

/*
 * A bio arrives. WTC_WAIT: its submitter waits, WTC_HOLD: the caller holds
 * it; either way in queue wtc_kind_queue(kind), in arrival order, until
 * wtc_dispatch() names that queue. WTC_AGAIN: fail it with BLK_STS_AGAIN.
 * Otherwise issue it now; the value is its group, to give back to
 * wtc_done(). io NULL: a bio that cannot merge, deferred if held.
 */
int wtc_map(struct wtc_core *c, enum wtc_kind kind, const struct wtc_io *io,
	    const struct wtc_now *now)
{
	enum wtc_queue q = wtc_kind_queue(kind);
	unsigned int g;

	if (kind < WTC_NR_KINDS)
		c->stats.kind[kind]++;
	if (kind == WTC_K_READ)
		wtc_note_read(c, now->ns);
	if (q == WTC_Q_NONE)
		return WTC_NO_GROUP;
	if (q == WTC_Q_SYNC)
		c->acct.last_sync_ns = now->ns;
	if (now->dirty_wait)
		c->stats.dirty_waits++;
	if (held_ahead(c, q))
		return hold(c, q, io, now);
	if (try_join(c, q, io, &g)) {
		c->stats.merged++;
		return g;
	}
	if (under_limit(c, q, now) && !delay_left(c, q, now))
		return new_group(c, q, io, now);
	return hold(c, q, io, now);
}

/* Requests of the gated queues of counter ctr in flight. */
static unsigned int gated_inflight(const struct wtc_core *c,
				   enum wtc_counter ctr)
{
	unsigned int n = 0;
	enum wtc_queue q;

	for (q = 0; q < WTC_NR_QUEUES; q++)
		if (queue_gated(q) && queue_counter[q] == ctr)
			n += c->acct.q_inflight[q];
	return n;
}

static bool gate_closed(const struct wtc_core *c, enum wtc_queue q,
			const struct wtc_now *now)
{
	if (!throttling(c) || !queue_gated(q))
		return false;
	if (wc_rule(c, now) == WTC_WC_DELAY)
		return false;
	/* Drained: no completion of the class will come to open it. */
	if (!gated_inflight(c, queue_counter[q]))
		return false;
	return !c->acct.open[queue_counter[q]];
}

static u64 age_bound_ns(const struct wtc_core *c)
{
	return (u64)c->cfg.backlog_ms * 1000 * 1000;
}

/* How long head h has been held; 0 if it does not say. */
static u64 head_age(const struct wtc_io *h, const struct wtc_now *now)
{
	return h->since_ns ? elapsed(now, h->since_ns) : 0;
}

static void min_wait(u64 *wait_ns, u64 left)
{
	if (left && (!*wait_ns || left < *wait_ns))
		*wait_ns = left;
}

/* A sync write went past held writes of gated queue q: promote one. */
static bool overtaken(const struct wtc_core *c, enum wtc_queue q)
{
	return c->acct.overtakes && queue_gated(q) && queue_counter[q] == WTC_C_WB;
}

/*
 * The oldest head held for backlog_ms or longer, or overtaken by a sync
 * write, or WTC_Q_NONE; *aged says which.
 */
static enum wtc_queue promoted_head(const struct wtc_core *c,
				    const struct wtc_now *now,
				    const struct wtc_io *heads, u64 *wait_ns,
				    bool *aged)
{
	enum wtc_queue q, old = WTC_Q_NONE;
	u64 bound = age_bound_ns(c), age, oldest = 0;

	for (q = 0; q < WTC_NR_QUEUES; q++) {
		if (!c->acct.queued[q] || !heads[q].since_ns)
			continue;
		age = head_age(&heads[q], now);
		if (age < bound)
			min_wait(wait_ns, bound - age);
		if (age < bound && !overtaken(c, q))
			continue;
		if (age > oldest || old == WTC_Q_NONE) {
			oldest = age;
			old = q;
			*aged = age >= bound;
		}
	}
	return old;
}

/* The head of queue q goes: account it. */
static int take_head(struct wtc_core *c, enum wtc_queue q,
		     const struct wtc_io *h, const struct wtc_now *now,
		     unsigned int *grp)
{
	c->acct.queued[q]--;
	WTC_WRITE_ONCE(c->acct.ctr_queued[queue_counter[q]],
		       c->acct.ctr_queued[queue_counter[q]] - 1);
	if (!c->acct.queued[WTC_Q_NORMAL] && !c->acct.queued[WTC_Q_BG])
		c->acct.overtakes = 0;	/* nobody left who was overtaken */
	if (h->deferred && c->acct.deferred[q]) {
		c->acct.deferred[q]--;
		c->acct.deferred_bytes -= h->bytes < c->acct.deferred_bytes ?
				     h->bytes : c->acct.deferred_bytes;
	}
	if (h->since_ns)
		wtc_note_held(c, head_age(h, now), h->deferred);
	if (try_join(c, q, h, grp))
		c->stats.merged++;
	else
		*grp = new_group(c, q, h, now);
	return q;
}

/*
 * Pick the queue whose head may be issued now (or whose sleeping submitter
 * may go on) and account it; the caller pops that queue's head and lets it
 * go, giving *grp back to wtc_done(). heads[q] describes the head of queue
 * q. -1: nothing may go now; if *wait_ns is then nonzero, call again after
 * that long.
 *
 * A head held for backlog_ms, or overtaken by a sync write, goes first, as
 * soon as its counter is below max_depth; a deferred one held for
 * backlog_ms goes regardless of the limit.
 */
int wtc_dispatch(struct wtc_core *c, const struct wtc_now *now,
		 const struct wtc_io *heads, unsigned int *grp, u64 *wait_ns)
{
	bool blocked[WTC_NR_COUNTERS] = { false };
	enum wtc_queue q;
	bool aged = false;
	u64 left;

	*wait_ns = 0;
	q = promoted_head(c, now, heads, wait_ns, &aged);
	if (q != WTC_Q_NONE) {
		if ((aged && heads[q].deferred) || !throttling(c) ||
		    c->acct.inflight[queue_counter[q]] < c->lim.max_depth) {
			if (aged) {
				c->stats.aged++;
			} else {
				c->stats.promoted++;
				c->acct.overtakes--;
			}
			c->acct.promo_wait[queue_counter[q]] = false;
			return take_head(c, q, &heads[q], now, grp);
		}
		/* The next completion on the counter must look again. */
		c->acct.promo_wait[queue_counter[q]] = true;
		blocked[queue_counter[q]] = true;
	}
	for (q = 0; q < WTC_NR_QUEUES; q++) {
		enum wtc_counter ctr = queue_counter[q];

		if (!c->acct.queued[q])
			continue;
		if (joinable(c, q, &heads[q]))
			return take_head(c, q, &heads[q], now, grp);
		if (blocked[ctr])
			continue;
		blocked[ctr] = true;
		if (gate_closed(c, q, now) || !under_limit(c, q, now))
			continue;
		left = delay_left(c, q, now);
		if (left) {
			min_wait(wait_ns, left);
			continue;
		}
		return take_head(c, q, &heads[q], now, grp);
	}
	/* Whoever could not go waits for the next release decision. */
	c->acct.open[WTC_C_WB] = false;
	c->acct.open[WTC_C_DISCARD] = false;
	return -1;
}

static bool gated_waiting(const struct wtc_core *c, enum wtc_counter ctr)
{
	enum wtc_queue q;

	for (q = 0; q < WTC_NR_QUEUES; q++)
		if (queue_gated(q) && queue_counter[q] == ctr && c->acct.queued[q])
			return true;
	return false;
}

/* Release rule for the gated queues after a completion on counter ctr. */
static bool release_gated(struct wtc_core *c, enum wtc_counter ctr,
			  const struct wtc_now *now)
{
	unsigned int n = c->acct.inflight[ctr];
	unsigned int limit, batch;

	if (!throttling(c))
		return true;
	switch (ctr == WTC_C_WB ? wc_rule(c, now) : WTC_WC_OFF) {
	case WTC_WC_DELAY:
		return true;	/* wtc_dispatch() keeps the pace */
	case WTC_WC_DRAIN:
		/*
		 * "The class drained": sync writes in flight do not count,
		 * or a stream of them would starve background writeback.
		 */
		n = gated_inflight(c, ctr);
		limit = 0;
		break;
	default:
		limit = ctr == WTC_C_WB ? c->lim.wb_normal : c->lim.wb_background;
		break;
	}
	if (n && n >= limit)
		return false;
	batch = c->lim.wb_background / 2;
	if (n && limit - n < (batch ? batch : 1))
		return false;
	c->acct.open[ctr] = true;
	return true;
}

/*
 * A flush of the write cache was issued. Until it completes, normal and
 * background writeback wait (sync and reclaim writes do not; a held head
 * still goes once it is backlog_ms old): a write the cache takes now
 * must be destaged before the commit that follows the flush (ext4's
 * commit block, a FUA write) can complete, so each flush would otherwise
 * find the cache refilled behind it. The disk destages throughout, so the
 * pause costs writeback little. Lock held.
 */
void wtc_flush_issue(struct wtc_core *c)
{
	c->acct.flushes++;
}

/* The flush completed; true: run the dispatcher. Lock held. */
bool wtc_flush_done(struct wtc_core *c)
{
	if (!c->acct.flushes)
		return false;
	return !--c->acct.flushes && gated_waiting(c, WTC_C_WB);
}

/*
 * The last bio of a request completed (wtc_put() said so): give its slot
 * back. True: run the dispatcher.
 */
bool wtc_done_last(struct wtc_core *c, enum wtc_kind kind, unsigned int grp,
		   const struct wtc_now *now)
{
	enum wtc_queue q = wtc_kind_queue(kind);
	enum wtc_counter ctr;
	bool kick = false;
	enum wtc_queue p;

	if (grp < WTC_NR_GROUPS) {
		q = c->acct.grp_q[grp];
		free_group(c, grp);
	}
	if (q == WTC_Q_NONE)
		return false;
	ctr = queue_counter[q];
	if (c->acct.inflight[ctr])
		c->acct.inflight[ctr]--;
	if (c->acct.q_inflight[q])
		c->acct.q_inflight[q]--;
	for (p = 0; p < WTC_NR_QUEUES; p++)
		if (!queue_gated(p) && queue_counter[p] == ctr &&
		    c->acct.queued[p] && under_limit(c, p, now))
			kick = true;
	if (gated_waiting(c, ctr) && release_gated(c, ctr, now))
		kick = true;
	if (c->acct.promo_wait[ctr] && c->acct.inflight[ctr] < c->lim.max_depth)
		kick = true;
	return kick;
}

/* wtc_put() and wtc_done_last() in one, for a caller that holds the lock. */
bool wtc_done(struct wtc_core *c, enum wtc_kind kind, unsigned int grp,
	      const struct wtc_now *now)
{
	if (kind == WTC_K_READ)
		wtc_note_read(c, now->ns);
	if (wtc_kind_queue(kind) == WTC_Q_NONE)
		return false;
	return wtc_put(c, grp) && wtc_done_last(c, kind, grp, now);
}

/*
 * Lock-free: may a write of queue q join the request in flight it
 * continues (wtc_map() would say the same)? Only while nothing of its
 * counter is held: a write that joins takes no slot, but must not pass
 * what waits. Then *grp is its group, for wtc_put(); the caller counts
 * it (kind, merged) in a wtc_shard.
 */
bool wtc_join(struct wtc_core *c, enum wtc_queue q, const struct wtc_io *io,
	      unsigned int *grp)
{
	if (q >= WTC_NR_QUEUES ||
	    WTC_READ_ONCE(c->acct.ctr_queued[queue_counter[q]]))
		return false;
	return try_join(c, q, io, grp);
}

void wtc_note_held(struct wtc_core *c, u64 held_ns, bool deferred)
{
	c->stats.held_ns += held_ns;
	if (held_ns > c->stats.held_max_ns)
		c->stats.held_max_ns = held_ns;
	if (deferred && held_ns > c->stats.deferred_max_ns)
		c->stats.deferred_max_ns = held_ns;
}

bool wtc_idle(const struct wtc_core *c)
{
	int i;

	for (i = 0; i < WTC_NR_COUNTERS; i++)
		if (c->acct.inflight[i])
			return false;
	for (i = 0; i < WTC_NR_QUEUES; i++)
		if (c->acct.queued[i])
			return false;
	return true;
}

/* Nothing in flight on the counter queue q uses: no completion will come. */
bool wtc_counter_idle(const struct wtc_core *c, enum wtc_queue q)
{
	return q >= WTC_NR_QUEUES || !c->acct.inflight[queue_counter[q]];
}

/* ---- latency control ---------------------------------------------------- */

static unsigned int ilog2_u64(u64 v)
{
	unsigned int r = 0;

	while (v >>= 1)
		r++;
	return r;
}

static u64 isqrt_u64(u64 v)
{
	u64 r = 0, bit = 1ULL << 62;

	while (bit > v)
		bit >>= 2;
	while (bit) {
		if (v >= r + bit) {
			v -= r + bit;
			r = (r >> 1) + bit;
		} else {
			r >>= 1;
		}
		bit >>= 2;
	}
	return r;
}

/* Log-scale histogram: WTC_HIST_SUB buckets per power of two of usecs. */
unsigned int wtc_hist_bucket(u64 lat_ns)
{
	u64 us = lat_ns / 1000;
	unsigned int e, sub, b;

	if (!us)
		return 0;
	e = ilog2_u64(us);
	sub = e >= 2 ? (us >> (e - 2)) & 3 : (us << (2 - e)) & 3;
	b = e * WTC_HIST_SUB + sub;
	return b < WTC_HIST_BUCKETS ? b : WTC_HIST_BUCKETS - 1;
}

/* The upper end of a bucket, in ns. */
u64 wtc_hist_value(unsigned int b)
{
	unsigned int e = b / WTC_HIST_SUB, sub = b % WTC_HIST_SUB;

	return ((1000ULL << e) * (WTC_HIST_SUB + sub + 1)) / WTC_HIST_SUB;
}

static u64 window_pct(const struct wtc_window *w, unsigned int pct)
{
	u64 want = ((u64)w->nr_read * pct + 99) / 100, sum = 0;
	unsigned int b;

	if (!w->nr_read)
		return 0;
	if (!want)
		want = 1;
	for (b = 0; b < WTC_HIST_BUCKETS; b++) {
		sum += w->hist[b];
		if (sum >= want)
			break;
	}
	if (b >= WTC_HIST_BUCKETS || wtc_hist_value(b) > w->read_max_ns)
		return w->read_max_ns;
	return wtc_hist_value(b);
}

/* A completed bio's latency (map to end_io), into window w. */
static void window_add(struct wtc_window *w, enum wtc_kind kind, u64 lat_ns)
{
	switch (kind) {
	case WTC_K_READ:
		if (!w->nr_read || lat_ns < w->read_min_ns)
			w->read_min_ns = lat_ns;
		if (lat_ns > w->read_max_ns)
			w->read_max_ns = lat_ns;
		w->nr_read++;
		w->read_sum_ns += lat_ns;
		w->hist[wtc_hist_bucket(lat_ns)]++;
		break;
	case WTC_K_BG:
	case WTC_K_NORMAL:
	case WTC_K_SYNC:
	case WTC_K_RECLAIM:
	case WTC_K_DIRECT:
	case WTC_K_DISCARD:	/* upstream: any op_is_write() op */
		w->nr_write++;
		break;
	default:
		break;
	}
}

/* Add window s to window w, as if w had seen every sample of s. */
static void window_merge(struct wtc_window *w, const struct wtc_window *s)
{
	unsigned int i;

	if (s->nr_read) {
		if (!w->nr_read || s->read_min_ns < w->read_min_ns)
			w->read_min_ns = s->read_min_ns;
		if (s->read_max_ns > w->read_max_ns)
			w->read_max_ns = s->read_max_ns;
		w->nr_read += s->nr_read;
		w->read_sum_ns += s->read_sum_ns;
		for (i = 0; i < WTC_HIST_BUCKETS; i++)
			w->hist[i] += s->hist[i];
	}
	w->nr_write += s->nr_write;
}

void wtc_sample(struct wtc_core *c, enum wtc_kind kind, u64 lat_ns)
{
	window_add(&c->ctl.win, kind, lat_ns);
}

/* ---- the lock-free side --------------------------------------------------- */

/* A bio that is never held completed after lat_ns: sample it in shard s. */
void wtc_shard_sample(struct wtc_shard *s, enum wtc_kind kind, u64 lat_ns)
{
	window_add(&s->win, kind, lat_ns);
}

/*
 * Time the read numbered seq on this CPU, whose shard is s? Every one
 * while the shard has few in the window, then one in WTC_SAMPLE_EVERY.
 */
bool wtc_sample_read(const struct wtc_shard *s, unsigned int seq)
{
	return WTC_READ_ONCE(s->win.nr_read) < WTC_SAMPLE_ALL ||
	       !(seq % WTC_SAMPLE_EVERY);
}

/* Move what shard s holds into the core (both locked), and empty it. */
void wtc_fold(struct wtc_core *c, struct wtc_shard *s)
{
	unsigned int i;

	for (i = 0; i < WTC_NR_KINDS; i++)
		c->stats.kind[i] += s->kind[i];
	c->stats.merged += s->merged;
	window_merge(&c->ctl.win, &s->win);
	memset(s, 0, sizeof(*s));
}

/*
 * A read was issued or completed at ns: stamp "reads recently". Written at
 * most once per WTC_STAMP_NSEC: reads on every CPU would otherwise keep
 * bouncing one cache line between them.
 */
void wtc_note_read(struct wtc_core *c, u64 ns)
{
	u64 last = WTC_READ_ONCE(c->acct.last_other_ns);

	if (ns > last && ns - last >= WTC_STAMP_NSEC)
		WTC_WRITE_ONCE(c->acct.last_other_ns, ns);
}

/*
 * A read is issued; true if it becomes the one whose age is watched (one
 * at a time; the first to claim the free slot wins).
 */
bool wtc_read_issue(struct wtc_core *c, const struct wtc_now *now)
{
	u64 ns = now->ns ? now->ns : 1;

	if (WTC_READ_ONCE(c->ctl.read_issue_ns))
		return false;
	return !wtc_cmpxchg64(&c->ctl.read_issue_ns, 0, ns);
}

/* The watched read completed. */
void wtc_read_done(struct wtc_core *c)
{
	WTC_WRITE_ONCE(c->ctl.read_issue_ns, 0);
}

/* The scale step now (0 neutral, > 0 throttled harder). */
int wtc_step(const struct wtc_core *c)
{
	return c->lim.scale_step;
}

/* The options in force. */
const struct wtc_config *wtc_get_config(const struct wtc_core *c)
{
	return &c->cfg;
}

/* The length of the running window. */
u64 wtc_window_ns(const struct wtc_core *c)
{
	return WTC_READ_ONCE(c->ctl.cur_win_ns);
}

static void update_lat_target(struct wtc_core *c)
{
	unsigned int us = c->cfg.lat_usec;

	if (us == WTC_LAT_AUTO)
		us = c->dev.nonrot ? WTC_DEF_LAT_NONROT_USEC : WTC_DEF_LAT_ROT_USEC;
	c->ctl.lat_target_ns = (u64)us * 1000;
}

/* Does the window controller move the depth? */
bool wtc_scaling(const struct wtc_core *c)
{
	return c->cfg.enabled && !c->cfg.depth && c->ctl.lat_target_ns;
}

/*
 * Writes a window needs before its reads tell about them. Paced, fewer come
 * by design: as many as the pace lets through, at most the usual minimum.
 */
static unsigned int min_write_samples(const struct wtc_core *c,
				      const struct wtc_now *now)
{
	u64 pace = wtc_pace_ns(c);
	u64 n;

	if (!pacing(c, now) || !pace)
		return WTC_MIN_WRITE_SAMPLES;
	n = c->ctl.cur_win_ns / pace;
	return n < WTC_MIN_WRITE_SAMPLES ? n : WTC_MIN_WRITE_SAMPLES;
}

/*
 * A read stuck behind the flood never completes to say so: the age of the
 * watched read, if it counts as a miss; else 0.
 */
static u64 stuck_read_age(const struct wtc_core *c, const struct wtc_now *now)
{
	u64 issued = WTC_READ_ONCE(c->ctl.read_issue_ns);
	u64 age;

	if (!issued)
		return 0;
	age = elapsed(now, issued);
	if (age > c->ctl.cur_win_ns || (age > c->ctl.lat_target_ns && !c->ctl.win.nr_read))
		return age;
	return 0;
}

static enum wtc_lat lat_verdict(const struct wtc_core *c,
				const struct wtc_now *now, u64 metric)
{
	const struct wtc_window *w = &c->ctl.win;

	if (stuck_read_age(c, now))
		return WTC_LAT_EXCEEDED;
	if (!w->nr_read || w->nr_write < min_write_samples(c, now)) {
		if (w->nr_write || now->dirty_wait || c->acct.inflight[WTC_C_WB])
			return WTC_LAT_UNKNOWN_WRITES;
		return WTC_LAT_UNKNOWN;
	}
	return metric > c->ctl.lat_target_ns ? WTC_LAT_EXCEEDED : WTC_LAT_OK;
}

/* More depth: one step down. */
static bool scale_up(struct wtc_core *c)
{
	if (c->lim.scaled_max)
		return false;
	c->lim.scale_step--;
	c->ctl.unknown_cnt = 0;
	c->stats.step_changes++;
	wtc_update_limits(c);
	return true;
}

/* Past depth 1, a paced write cache can still slow down. */
static bool paced_step_left(const struct wtc_core *c)
{
	return paced_cache(c) &&
	       c->cfg.cache_delay_usec && c->lim.scale_step < WTC_MAX_PACE_STEP;
}

/* Less depth: one step up; hard snaps a negative step back to 0. */
static bool scale_down(struct wtc_core *c, bool hard)
{
	/* The step's own depth, so that wb_percent cannot unbound it. */
	if ((c->lim.max_depth == 1 || c->lim.step_depth == 1) && !paced_step_left(c))
		return false;
	if (c->lim.scale_step < 0 && hard)
		c->lim.scale_step = 0;
	else
		c->lim.scale_step++;
	c->ctl.unknown_cnt = 0;
	c->stats.step_changes++;
	wtc_update_limits(c);
	return true;
}

/* Raising the depth into a step that missed waits for a run of good windows. */
static bool may_raise(const struct wtc_core *c)
{
	return c->lim.scale_step - 1 > c->ctl.bad_step || c->ctl.ok_run >= c->ctl.probe_backoff;
}

/*
 * Paced on a write cache: did the reads that missed the target start before
 * the last step up? Then they tell nothing about it: the next windows still
 * see the backlog the cache had (16 MiB at 40 MiB/s is 0.4 s), and stepping
 * on every one of them overshoots. Wait for a read issued since. Without a
 * cache the backlog is what is in flight, gone within a window or two; there
 * upstream's rule (step on every miss) measured better.
 */
static bool stale_miss(const struct wtc_core *c, const struct wtc_now *now,
		       u64 metric)
{
	u64 since, age;

	if (!c->ctl.down_ns || !paced_cache(c))
		return false;
	since = elapsed(now, c->ctl.down_ns);
	age = stuck_read_age(c, now);
	if (age)
		return age > since;
	/* The reads the metric stands for took at least that long. */
	return metric > since;
}

/*
 * Who would wait behind a try of more depth on a disk where it does not
 * pay: a reader, or a task waiting for sync writes (an fsync) while
 * writeback waits for slots beside them. Sync writes alone (a sync(2) or a
 * syncfs of a flood) are the load itself: a try serves them.
 */
static bool probe_protects(const struct wtc_core *c, const struct wtc_now *now)
{
	unsigned int gated = 1u << WTC_Q_NORMAL | 1u << WTC_Q_BG;

	if (close_io(c, now) || read_in_flight(c))
		return true;
	return close_sync(c, now) &&
	       ((c->ctl.waited & gated) || c->acct.queued[WTC_Q_NORMAL] ||
		c->acct.queued[WTC_Q_BG]);
}

/* Windows a probe of more depth lasts, and that it is measured against. */
#define WTC_PROBE_WINDOWS 2
/*
 * Windows writes must have waited before the first try: a flood's first
 * fsync, which comes before any protection, meets no try in its first
 * second. Where what is in flight drains fast (quick_drain()), two.
 */
#define WTC_PROBE_WARMUP 10
#define WTC_PROBE_WARMUP_QUICK 2
/* What in flight may take to drain for a try to come early (quick_drain()). */
#define WTC_QUICK_DRAIN_NSEC (20ULL * 1000 * 1000)

/*
 * Does what writeback has in flight drain within WTC_QUICK_DRAIN_NSEC at
 * the rate the window completed writes (in flight / rate, Little's law)?
 * Then a try of twice the depth costs whoever comes next about that much
 * more, and a first fsync has no reason to keep the try waiting: on the
 * model's network volume 8 writes in flight drain in 11 ms (60-80 a
 * window), on its one-head hdd in 200 ms (3-5 a window). Not on a write
 * cache under the delay policy: there the cache is the queue, not the
 * depth.
 */
static bool quick_drain(const struct wtc_core *c, unsigned int writes)
{
	u64 depth = c->acct.inflight[WTC_C_WB];

	if (paced_cache(c))
		return false;
	return writes && depth * c->ctl.win_ns < writes * WTC_QUICK_DRAIN_NSEC;
}

/*
 * Step deeper, and see whether it pays (write_probe()); base writes were
 * completed in base_ns.
 */
static void probe_deeper(struct wtc_core *c, unsigned int base, u64 base_ns)
{
	unsigned int from = c->lim.max_depth;

	c->ctl.wprobe_prev = 0;
	if (!scale_up(c))
		return;		/* at the cap: stay */
	c->ctl.probing = WTC_PROBE_WINDOWS;
	c->ctl.probe_writes = base;
	c->ctl.probe_ns = base_ns;
	c->ctl.probe_acc = 0;
	c->ctl.probe_acc_ns = 0;
	c->ctl.probe_depth = from;
}

/* At most 2^bits, so that probe_paid()'s products fit in 64 bits. */
static u64 clamp_bits(u64 v, unsigned int bits)
{
	return v < (1ULL << bits) ? v : (1ULL << bits);
}

/*
 * Did the try pay: did at least half of the depth it added turn into
 * writes completed per second? Twice the depth must complete 1.5x the
 * writes (each write then takes at most a third longer); the last step,
 * capped at 3/4 of the queue depth, adds less and needs less. Per second,
 * not per window: a window's timer may fire late on a busy machine.
 * Writes up to 2^20, depth up to 2^17 (WTC_MAX_DEPTH, twice), times in
 * microseconds up to 2^24 (16 s): 2^62 at most.
 */
static bool probe_paid(const struct wtc_control *k, unsigned int depth)
{
	u64 from = k->probe_depth;
	u64 base_us = clamp_bits(k->probe_ns / 1000 + 1, 24);
	u64 acc_us = clamp_bits(k->probe_acc_ns / 1000 + 1, 24);

	return clamp_bits(k->probe_acc, 20) * from * base_us * 2 >=
	       clamp_bits(k->probe_writes, 20) * (from + depth) * acc_us;
}

/*
 * Writes alone, and they wait for slots: does more depth buy more writes?
 * Upstream goes deeper on every such window, up to 3/4 of the queue depth;
 * on a disk that serves one request at a time that buys nothing and
 * lengthens the queue that the next fsync or read waits behind. A device
 * whose latency is mostly outside its queue (a network volume, an SSD of
 * many channels) completes more writes with more in flight: there depth
 * is bandwidth, and what is in flight drains in about one request's time.
 * So step deeper for two windows; keep that step, and try the next, only
 * if they completed more writes per second than the two before, by at
 * least half of the depth added (probe_paid()); else step back and wait
 * 4, 8, .. 64 windows before the next try. The first try needs
 * WTC_PROBE_WARMUP such windows in a row, WTC_PROBE_WARMUP_QUICK where
 * what is in flight drains fast (quick_drain()). A step the tries found holds
 * while writes come, waiting or not (at that depth they may all fit), for
 * 64 windows, then goes one back to be found again; when the writes stop,
 * the step drifts back (WTC_LAT_UNKNOWN). Not while someone needs
 * protecting (probe_protects()): then, as from a step deeper than the
 * tries found (fast reads took it there), a step below 0 creeps back as
 * before. Rotational disks are tried too: the flag says little about
 * depth (sd calls every disk rotational unless it reports a rotation rate
 * of 1, so a virtio-scsi or iSCSI volume often is), and a one-head disk
 * fails its tries, which back off. False if the step is not its business.
 */
static bool write_probe(struct wtc_core *c, const struct wtc_now *now,
			unsigned int probing)
{
	struct wtc_control *k = &c->ctl;
	unsigned int writes = k->win.nr_write;
	unsigned int wb = 1u << WTC_Q_SYNC | 1u << WTC_Q_NORMAL | 1u << WTC_Q_BG;
	bool may = !probe_protects(c, now);
	bool want = may && ((k->waited & wb) || c->acct.ctr_queued[WTC_C_WB]);
	unsigned int warm = quick_drain(c, writes) ? WTC_PROBE_WARMUP_QUICK :
						     WTC_PROBE_WARMUP;

	if (probing) {
		/* With more depth the writes may no longer wait: judge the rate. */
		k->probe_acc += writes;
		k->probe_acc_ns += k->win_ns;
		if (may && probing > 1) {
			k->probing = probing - 1;
			return true;
		}
		if (may && probe_paid(k, c->lim.max_depth)) {
			k->wprobe_backoff = 0;
			k->wprobe_ok = c->lim.scale_step;
			k->wprobe_hold = 0;
			probe_deeper(c, k->probe_acc, k->probe_acc_ns);
			return true;
		}
		scale_down(c, false);
		k->wprobe_backoff = k->wprobe_backoff ?
			k->wprobe_backoff * 2 : WTC_PROBE_BACKOFF_MIN;
		if (k->wprobe_backoff > WTC_PROBE_BACKOFF_MAX)
			k->wprobe_backoff = WTC_PROBE_BACKOFF_MAX;
		k->wprobe_wait = k->wprobe_backoff;
		return true;
	}
	if (!may || c->lim.scale_step < k->wprobe_ok) {
		/* protecting, or below what tries found (fast reads): creep */
		k->wprobe_prev = 0;
		k->wprobe_run = 0;
		return false;
	}
	/*
	 * What tries found holds, but not for ever: a try may have paid by
	 * chance, or the device changed. After 64 windows, one step back;
	 * if the writes wait there and depth pays, a try finds it again.
	 */
	if (c->lim.scale_step < 0 && ++k->wprobe_hold >= WTC_PROBE_BACKOFF_MAX) {
		k->wprobe_hold = 0;
		k->wprobe_prev = 0;
		scale_down(c, false);
		k->wprobe_ok = c->lim.scale_step;
		return true;
	}
	if (!want) {
		/* writes that fit: hold (when they stop, the step drifts) */
		k->wprobe_prev = 0;
		k->wprobe_run = 0;
		return c->lim.scale_step < 0;
	}
	if (k->wprobe_run < warm)
		k->wprobe_run++;
	if (k->wprobe_wait || k->wprobe_run < warm) {
		/* hold the step meanwhile */
		if (k->wprobe_wait)
			k->wprobe_wait--;
		k->wprobe_prev = writes;
		k->wprobe_prev_ns = k->win_ns;
		return true;
	}
	probe_deeper(c, k->wprobe_prev + writes, k->wprobe_prev_ns + k->win_ns);
	return true;
}

static void act(struct wtc_core *c, enum wtc_lat verdict,
		const struct wtc_now *now, u64 metric)
{
	bool was_raised = c->ctl.raised;
	unsigned int probing = c->ctl.probing;

	c->ctl.raised = false;
	c->ctl.probing = 0;
	if (verdict != WTC_LAT_UNKNOWN_WRITES) {
		c->ctl.wprobe_prev = 0;
		c->ctl.wprobe_run = 0;
	}
	switch (verdict) {
	case WTC_LAT_EXCEEDED:
		c->stats.exceeded++;
		if (stale_miss(c, now, metric))
			break;
		if (was_raised) {
			c->ctl.bad_step = c->lim.scale_step;
			c->ctl.probe_backoff = c->ctl.probe_backoff ?
				c->ctl.probe_backoff * 2 : WTC_PROBE_BACKOFF_MIN;
			if (c->ctl.probe_backoff > WTC_PROBE_BACKOFF_MAX)
				c->ctl.probe_backoff = WTC_PROBE_BACKOFF_MAX;
		}
		c->ctl.ok_run = 0;
		if (scale_down(c, true))
			c->ctl.down_ns = now->ns ? now->ns : 1;
		break;
	case WTC_LAT_OK:
		if (was_raised && c->lim.scale_step <= c->ctl.bad_step) {
			c->ctl.bad_step = INT_MIN;	/* that step is fine now */
			c->ctl.probe_backoff = 0;
		}
		c->ctl.ok_run++;
		if (may_raise(c) && scale_up(c)) {
			c->ctl.raised = true;
			c->ctl.ok_run = 0;
		}
		break;
	case WTC_LAT_UNKNOWN_WRITES:
		/*
		 * Only writes: a step above 0 (reads missed) comes down as
		 * upstream; below it, more depth only where it pays
		 * (write_probe()); else a step below 0 (fast reads before)
		 * creeps back.
		 */
		if (c->lim.scale_step > 0)
			c->ctl.raised = scale_up(c);
		else if (!write_probe(c, now, probing) && c->lim.scale_step < 0)
			scale_down(c, false);
		break;
	case WTC_LAT_UNKNOWN:
		if (++c->ctl.unknown_cnt < WTC_UNKNOWN_BUMP)
			break;
		if (c->lim.scale_step > 0)
			scale_up(c);
		else if (c->lim.scale_step < 0)
			scale_down(c, false);
		break;
	case WTC_LAT_NONE:		/* not a verdict */
		break;
	}
}

static void window_length(struct wtc_core *c)
{
	u64 step = c->lim.scale_step > 0 ? c->lim.scale_step : 0;
	u64 win = WTC_WINDOW_NSEC;

	if (step)
		win = ((u64)WTC_WINDOW_NSEC << 4) / isqrt_u64((step + 1) << 8);
	WTC_WRITE_ONCE(c->ctl.cur_win_ns, win);
}

/*
 * The window of c->ctl.cur_win_ns ended: judge it, maybe move the step, start
 * the next one. True: arm the timer for another c->ctl.cur_win_ns.
 */
bool wtc_window(struct wtc_core *c, const struct wtc_now *now)
{
	const struct wtc_window *w = &c->ctl.win;
	struct wtc_win_result *r = &c->ctl.last;
	bool busy = w->nr_read || w->nr_write || !wtc_idle(c);

	r->nr_read = w->nr_read;
	r->nr_write = w->nr_write;
	r->min_ns = w->read_min_ns;
	r->mean_ns = w->nr_read ? w->read_sum_ns / w->nr_read : 0;
	r->p50_ns = window_pct(w, 50);
	r->p99_ns = window_pct(w, 99);
	r->metric_ns = c->cfg.lat_pct ? window_pct(w, c->cfg.lat_pct) : r->min_ns;
	r->verdict = lat_verdict(c, now, r->metric_ns);
	c->stats.windows++;
	/* How long the window really was (its timer may fire late). */
	c->ctl.win_ns = c->ctl.win_end_ns && now->ns > c->ctl.win_end_ns ?
			now->ns - c->ctl.win_end_ns : c->ctl.cur_win_ns;
	c->ctl.win_end_ns = now->ns;
	if (wtc_scaling(c))
		act(c, r->verdict, now, r->metric_ns);
	memset(&c->ctl.win, 0, sizeof(c->ctl.win));
	c->ctl.waited = 0;
	window_length(c);
	return c->lim.scale_step || busy;
}

/* ---- setup -------------------------------------------------------------- */

void wtc_init(struct wtc_core *c, const struct wtc_config *cfg)
{
	unsigned int i;

	memset(c, 0, sizeof(*c));
	c->cfg = *cfg;
	c->acct.holding = true;
	c->dev.queue_depth = 1;
	for (i = 0; i < WTC_NR_GROUPS; i++)
		c->acct.grp_free[i] = WTC_NR_GROUPS - 1 - i;
	c->acct.grp_nfree = WTC_NR_GROUPS;
	c->ctl.bad_step = INT_MIN;
	c->ctl.cur_win_ns = WTC_WINDOW_NSEC;
	update_lat_target(c);
	wtc_update_limits(c);
}

static void reset_step(struct wtc_core *c)
{
	c->lim.scale_step = 0;
	c->ctl.bad_step = INT_MIN;
	c->ctl.probe_backoff = 0;
	c->ctl.ok_run = 0;
	c->ctl.unknown_cnt = 0;
	c->ctl.raised = false;
	c->ctl.probing = 0;
	c->ctl.waited = 0;
	c->ctl.wprobe_backoff = 0;
	c->ctl.wprobe_wait = 0;
	c->ctl.wprobe_prev = 0;
	c->ctl.wprobe_ok = 0;
	c->ctl.wprobe_run = 0;
	c->ctl.wprobe_hold = 0;
	c->ctl.down_ns = 0;
	window_length(c);
}

void wtc_set_config(struct wtc_core *c, const struct wtc_config *cfg)
{
	c->cfg = *cfg;
	reset_step(c);
	update_lat_target(c);
	wtc_update_limits(c);
}

/* The lower device may change its depth or cache; true if it did. */
bool wtc_set_device(struct wtc_core *c, unsigned int queue_depth, bool wc,
		    unsigned int max_merge_sectors, bool nonrot)
{
	c->dev.max_merge_sectors = max_merge_sectors;
	if (c->dev.queue_depth == queue_depth && c->dev.wc == wc &&
	    c->dev.nonrot == nonrot)
		return false;
	if (c->dev.queue_depth != queue_depth) {
		c->dev.queue_depth = queue_depth;
		reset_step(c);
	}
	c->dev.wc = wc;
	c->dev.nonrot = nonrot;
	update_lat_target(c);
	wtc_update_limits(c);
	return true;
}

void wtc_set_holding(struct wtc_core *c, bool holding)
{
	c->acct.holding = holding;
	wtc_update_limits(c);
}

/* Append to buf at *pos; output that does not fit is cut, never overrun. */
static __printf(4, 5) void emit(char *buf, size_t len, size_t *pos, const char *fmt, ...)
{
	va_list ap;
	int r;

	if (*pos >= len)
		return;
	va_start(ap, fmt);
	r = vsnprintf(buf + *pos, len - *pos, fmt, ap);
	va_end(ap);
	if (r > 0)
		*pos += (size_t)r < len - *pos ? (size_t)r : len - *pos - 1;
}

/* ---- options -------------------------------------------------------------- */

/* How an option's value is written. */
enum opt_type {
	OPT_UINT = 0,		/* decimal in [min, max] */
	OPT_AUTO,		/* "auto" (stored as auto_val), or as OPT_UINT */
	OPT_NAME,		/* one of names[] (stored as its index) */
};

/*
 * The options, in table-line order: the one place that knows their names,
 * ranges, defaults and how they read and print. The parser, the table line
 * (wtc_config_format), the status's option fields, the error texts, the
 * wbthrottle command's checks and help, and the README (checked by the
 * unit tests) follow it; so does unknown_opt below (checked likewise).
 */
struct opt {
	const char *name;
	const char *alias;		/* its status field's older name, also taken */
	bool in_status;			/* status shows it under its name (in force) */
	enum opt_type type;
	unsigned int min, max;
	unsigned int def;
	unsigned int auto_val;		/* OPT_AUTO: what "auto" stores */
	const char *const *names;	/* OPT_NAME */
	size_t off;			/* of its unsigned int in wtc_config */
	const char *err;		/* what the value may be */
	const char *help;		/* what it does, in a line */
};

#define CFG(field) offsetof(struct wtc_config, field)

static const struct opt opts[WTC_NR_OPTS] = {
	[WTC_O_ENABLE] = {
		.name = "enable", .alias = "enabled", .max = 1, .def = 1,
		.off = CFG(enabled), .err = "enable takes 0 or 1",
		.help = "0 lets every bio through",
	},
	[WTC_O_WB_PERCENT] = {
		.name = "wb_percent",
		.min = 1, .max = WTC_MAX_WB_PERCENT, .def = WTC_DEF_WB_PERCENT,
		.off = CFG(wb_percent), .err = "wb_percent takes 1 to 1000",
		.help = "scales the derived depths, 100 = upstream's",
	},
	[WTC_O_DEPTH] = {
		.name = "depth", .type = OPT_AUTO,
		.min = 1, .max = WTC_MAX_DEPTH, .def = 0, .auto_val = 0,
		.off = CFG(depth), .err = "depth takes auto or 1 to 65536",
		.help = "fixed maximum depth instead of the derived one",
	},
	[WTC_O_WC_POLICY] = {
		.name = "wc_policy", .in_status = true, .type = OPT_NAME,
		.max = WTC_NR_WC_POLICIES - 1, .def = WTC_WC_AUTO,
		.names = wc_policy_names, .off = CFG(wc_policy),
		.err = "wc_policy takes auto, drain, delay or off",
		.help = "release rule with a volatile write cache",
	},
	[WTC_O_CACHE_DELAY] = {
		.name = "cache_delay_us",
		.max = WTC_MAX_CACHE_DELAY_USEC,
		.def = WTC_DEF_CACHE_DELAY_USEC, .off = CFG(cache_delay_usec),
		.err = "cache_delay_us takes 0 to 1000000",
		.help = "gap between released writes under wc_policy delay",
	},
	[WTC_O_LAT] = {
		.name = "lat_us", .alias = "lat_target_us", .type = OPT_AUTO,
		.max = WTC_MAX_LAT_USEC, .def = WTC_LAT_AUTO,
		.auto_val = WTC_LAT_AUTO, .off = CFG(lat_usec),
		.err = "lat_us takes auto or 0 to 10000000",
		.help = "read latency target, 0 = no self-tuning",
	},
	[WTC_O_LAT_PCT] = {
		.name = "lat_pct", .in_status = true, .max = 99,
		.off = CFG(lat_pct),
		.err = "lat_pct takes 0 (window minimum) to 99",
		.help = "0 = window minimum, else this percentile of reads",
	},
	[WTC_O_PUSH_BACK] = {
		.name = "push_back", .in_status = true, .max = 1, .def = 1,
		.off = CFG(push_back),
		.err = "push_back takes 0 (never make a submitter wait) or 1",
		.help = "1 lets a writeback submitter wait in the target",
	},
	[WTC_O_BACKLOG_KB] = {
		.name = "backlog_kb", .in_status = true,
		.max = WTC_MAX_BACKLOG_KB,
		.def = WTC_DEF_BACKLOG_KB, .off = CFG(backlog_kb),
		.err = "backlog_kb takes 0 (defer nothing) to 4194304",
		.help = "bound on writes the target holds, 0 = hold none",
	},
	[WTC_O_BACKLOG_MS] = {
		.name = "backlog_ms", .in_status = true,
		.min = 1, .max = WTC_MAX_BACKLOG_MS, .def = WTC_DEF_BACKLOG_MS,
		.off = CFG(backlog_ms), .err = "backlog_ms takes 1 to 60000",
		.help = "age at which a held write goes regardless",
	},
};

static const char unknown_opt[] =
	"unknown option (enable, wb_percent, depth, wc_policy, cache_delay_us, lat_us, lat_pct, push_back, backlog_kb, backlog_ms)";

static unsigned int *opt_val(struct wtc_config *cfg, const struct opt *o)
{
	return (unsigned int *)((char *)cfg + o->off);
}

static unsigned int opt_get(const struct wtc_config *cfg, const struct opt *o)
{
	return *(const unsigned int *)((const char *)cfg + o->off);
}

void wtc_config_default(struct wtc_config *cfg)
{
	unsigned int i;

	memset(cfg, 0, sizeof(*cfg));
	for (i = 0; i < WTC_NR_OPTS; i++)
		*opt_val(cfg, &opts[i]) = opts[i].def;
}

/* Strict decimal: digits only, no sign, no overflow, within [min, max]. */
static int parse_uint(const char *s, unsigned int min, unsigned int max,
		      unsigned int *out)
{
	u64 v = 0;

	if (!s || !*s)
		return -1;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -1;
		v = v * 10 + (unsigned int)(*s - '0');
		if (v > max)
			return -1;
	}
	if (v < min)
		return -1;
	*out = v;
	return 0;
}

static int opt_parse(const struct opt *o, const char *val, unsigned int *out)
{
	unsigned int i;

	switch (o->type) {
	case OPT_AUTO:
		if (!strcmp(val, "auto")) {
			*out = o->auto_val;
			return 0;
		}
		return parse_uint(val, o->min, o->max, out);
	case OPT_NAME:
		for (i = o->min; i <= o->max; i++) {
			if (!strcmp(val, o->names[i])) {
				*out = i;
				return 0;
			}
		}
		return -1;
	default:
		return parse_uint(val, o->min, o->max, out);
	}
}

static const struct opt *opt_find(const char *key)
{
	unsigned int i;

	for (i = 0; i < WTC_NR_OPTS; i++)
		if (!strcmp(key, opts[i].name) ||
		    (opts[i].alias && !strcmp(key, opts[i].alias)))
			return &opts[i];
	return NULL;
}

/*
 * Set one option from its text. 0 on success; otherwise -1, cfg unchanged
 * and *err says what to fix.
 */
int wtc_config_set(struct wtc_config *cfg, const char *key, const char *val,
		   const char **err)
{
	const struct opt *o;
	unsigned int v;

	if (!key || !val) {
		*err = "option needs a key and a value";
		return -1;
	}
	o = opt_find(key);
	if (!o) {
		*err = unknown_opt;
		return -1;
	}
	if (opt_parse(o, val, &v)) {
		*err = o->err;
		return -1;
	}
	*opt_val(cfg, o) = v;
	cfg->set_mask |= 1u << (o - opts);
	*err = NULL;
	return 0;
}

/* The values an option takes, as the README's table writes them. */
static void opt_values(const struct opt *o, char *buf, size_t len,
		       size_t *pos)
{
	unsigned int i;

	if (o->type == OPT_NAME) {
		/* The default first, then the others in order. */
		emit(buf, len, pos, "`%s`", o->names[o->def]);
		for (i = o->min; i <= o->max; i++)
			if (i != o->def)
				emit(buf, len, pos, ", `%s`", o->names[i]);
		return;
	}
	if (o->type == OPT_AUTO)
		emit(buf, len, pos, "`auto`, ");
	if (o->max - o->min == 1)
		emit(buf, len, pos, "`%u`, `%u`", o->min, o->max);
	else
		emit(buf, len, pos, "%u..%u", o->min, o->max);
}

/*
 * Option i's row of the README's table, up to its meaning:
 * "| `key` | values | default |". 0 past the last option.
 */
int wtc_config_doc(unsigned int i, char *buf, size_t len)
{
	const struct opt *o = &opts[i];
	size_t pos = 0;

	if (len)
		buf[0] = 0;
	if (i >= WTC_NR_OPTS)
		return 0;
	emit(buf, len, &pos, "| `%s` | ", o->name);
	opt_values(o, buf, len, &pos);
	if (o->type == OPT_NAME)
		emit(buf, len, &pos, " | `%s` |", o->names[o->def]);
	else if (o->type == OPT_AUTO && o->def == o->auto_val)
		emit(buf, len, &pos, " | `auto` |");
	else if (o->max - o->min == 1)
		emit(buf, len, &pos, " | `%u` |", o->def);
	else
		emit(buf, len, &pos, " | %u |", o->def);
	return pos;
}

/* Option i's name and the text of its range error; false past the last. */
bool wtc_config_describe(unsigned int i, const char **name, const char **err)
{
	if (i >= WTC_NR_OPTS)
		return false;
	*name = opts[i].name;
	*err = opts[i].err;
	return true;
}

/* What option i does, in a line (the command's help); NULL past the last. */
const char *wtc_config_help(unsigned int i)
{
	return i < WTC_NR_OPTS ? opts[i].help : NULL;
}

/* The name of the option key stands for (itself, or an alias's); or NULL. */
const char *wtc_config_name(const char *key)
{
	const struct opt *o = key ? opt_find(key) : NULL;

	return o ? o->name : NULL;
}

unsigned int wtc_config_nr_args(const struct wtc_config *cfg)
{
	unsigned int i, n = 0;

	for (i = 0; i < WTC_NR_OPTS; i++)
		if (cfg->set_mask & (1u << i))
			n += 2;
	return n;
}

/* Option o of cfg as " <name><sep><value>", as it is written to be read. */
static void opt_format(const struct opt *o, const struct wtc_config *cfg,
		       char sep, char *buf, size_t len, size_t *pos)
{
	unsigned int v = opt_get(cfg, o);

	if (o->type == OPT_NAME)
		emit(buf, len, pos, " %s%c%s", o->name, sep, o->names[v]);
	else if (o->type == OPT_AUTO && v == o->auto_val)
		emit(buf, len, pos, " %s%cauto", o->name, sep);
	else
		emit(buf, len, pos, " %s%c%u", o->name, sep, v);
}

/* The options that were set, as " key value" pairs, in table order. */
int wtc_config_format(const struct wtc_config *cfg, char *buf, size_t len)
{
	unsigned int i;
	size_t pos = 0;

	if (len)
		buf[0] = 0;
	for (i = 0; i < WTC_NR_OPTS; i++)
		if (cfg->set_mask & (1u << i))
			opt_format(&opts[i], cfg, ' ', buf, len, &pos);
	return pos;
}

/* Writes held now: submitters waiting, and deferred ones. */
static void held_counts(const struct wtc_core *c, unsigned int *waiting,
			unsigned int *deferred)
{
	int i;

	*waiting = 0;
	*deferred = 0;
	for (i = 0; i < WTC_NR_QUEUES; i++) {
		*waiting += c->acct.queued[i] - c->acct.deferred[i];
		*deferred += c->acct.deferred[i];
	}
}

/*
 * The INFO status: key=value fields, in an append-only order (README).
 * oldest_ns: how long the oldest write held now has been held.
 */
int wtc_format_status(const struct wtc_core *c, u64 oldest_ns, char *buf,
		      size_t len)
{
	const struct wtc_stats *s = &c->stats;
	unsigned int waiting, deferred;
	size_t pos = 0;
	int i;

	if (len)
		buf[0] = 0;
	emit(buf, len, &pos,
	     "enabled=%u holding=%d qd=%u wc=%d wc_policy=%s depth_mode=%s",
	     c->cfg.enabled, c->acct.holding, c->dev.queue_depth, c->dev.wc,
	     wc_policy_names[wtc_wc_policy(c)],
	     c->cfg.depth ? "fixed" : "auto");
	emit(buf, len, &pos, " max=%u normal=%u background=%u step=%d",
	     c->lim.max_depth, c->lim.wb_normal, c->lim.wb_background, c->lim.scale_step);
	for (i = 0; i < WTC_NR_QUEUES; i++)
		emit(buf, len, &pos,
		     " %s_inflight=%u %s_queued=%u %s_hwm=%u %s_throttled=%llu",
		     queue_names[i], c->acct.q_inflight[i], queue_names[i],
		     c->acct.queued[i], queue_names[i], s->hwm[i], queue_names[i],
		     (unsigned long long)s->throttled[i]);
	emit(buf, len, &pos, " held_ns=%llu held_max_ns=%llu",
	     (unsigned long long)s->held_ns,
	     (unsigned long long)s->held_max_ns);
	for (i = 0; i < WTC_NR_KINDS; i++)
		emit(buf, len, &pos, " n_%s=%llu", kind_names[i],
		     (unsigned long long)s->kind[i]);
	emit(buf, len, &pos, " merged=%llu", (unsigned long long)s->merged);
	emit(buf, len, &pos,
	     " lat_target_us=%llu lat_pct=%u scaling=%d win_us=%llu",
	     (unsigned long long)c->ctl.lat_target_ns / 1000, c->cfg.lat_pct,
	     wtc_scaling(c), (unsigned long long)c->ctl.cur_win_ns / 1000);
	emit(buf, len, &pos,
	     " win_reads=%u win_writes=%u read_min_us=%llu read_p50_us=%llu read_p99_us=%llu verdict=%s",
	     c->ctl.last.nr_read, c->ctl.last.nr_write,
	     (unsigned long long)c->ctl.last.min_ns / 1000,
	     (unsigned long long)c->ctl.last.p50_ns / 1000,
	     (unsigned long long)c->ctl.last.p99_ns / 1000,
	     wtc_lat_name(c->ctl.last.verdict));
	emit(buf, len, &pos, " windows=%llu exceeded=%llu step_changes=%llu",
	     (unsigned long long)s->windows, (unsigned long long)s->exceeded,
	     (unsigned long long)s->step_changes);
	emit(buf, len, &pos, " pace_us=%llu",
	     (unsigned long long)wtc_pace_ns(c) / 1000);
	held_counts(c, &waiting, &deferred);
	emit(buf, len, &pos,
	     " waiting=%u deferred=%u deferred_bytes=%llu deferred_bytes_max=%llu held_oldest_us=%llu deferred_max_us=%llu",
	     waiting, deferred, (unsigned long long)c->acct.deferred_bytes,
	     (unsigned long long)s->deferred_bytes_max,
	     (unsigned long long)oldest_ns / 1000,
	     (unsigned long long)s->deferred_max_ns / 1000);
	emit(buf, len, &pos,
	     " slept=%llu deferred_total=%llu aged=%llu overflow=%llu again=%llu dirty_waits=%llu",
	     (unsigned long long)s->slept, (unsigned long long)s->deferred,
	     (unsigned long long)s->aged, (unsigned long long)s->overflow,
	     (unsigned long long)s->again,
	     (unsigned long long)s->dirty_waits);
	emit(buf, len, &pos, " push_back=%u backlog_kb=%u backlog_ms=%u",
	     c->cfg.push_back, c->cfg.backlog_kb, c->cfg.backlog_ms);
	emit(buf, len, &pos, " promoted=%llu",
	     (unsigned long long)s->promoted);
	/* Every option under its own name, and held times in us like the rest. */
	for (i = 0; i < WTC_NR_OPTS; i++)
		if (!opts[i].in_status)
			opt_format(&opts[i], &c->cfg, '=', buf, len, &pos);
	emit(buf, len, &pos, " held_us=%llu held_max_us=%llu",
	     (unsigned long long)s->held_ns / 1000,
	     (unsigned long long)s->held_max_ns / 1000);
	emit(buf, len, &pos, " flush_inflight=%u", c->acct.flushes);
	return pos;
}
