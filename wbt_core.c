// SPDX-License-Identifier: GPL-2.0-only
/*
 * wbt_core: classification, depth limits, hold queues and release rules of
 * dm-wbthrottle. See wbt_core.h for the model. No kernel headers here.
 */
#include "wbt_core.h"

static const char * const kind_names[WBT_NR_KINDS] = {
	[WBT_K_READ] = "read",
	[WBT_K_BG] = "bg",
	[WBT_K_NORMAL] = "normal",
	[WBT_K_SYNC] = "sync",
	[WBT_K_RECLAIM] = "reclaim",
	[WBT_K_DIRECT] = "direct",
	[WBT_K_DISCARD] = "discard",
	[WBT_K_FLUSH] = "flush",
	[WBT_K_OTHER] = "other",
};

static const char * const queue_names[WBT_NR_QUEUES] = {
	[WBT_Q_RECLAIM] = "reclaim",
	[WBT_Q_SYNC] = "sync",
	[WBT_Q_NORMAL] = "normal",
	[WBT_Q_BG] = "bg",
	[WBT_Q_DISCARD] = "discard",
};

static const char * const wc_policy_names[WBT_NR_WC_POLICIES] = {
	[WBT_WC_DRAIN] = "drain",
	[WBT_WC_DELAY] = "delay",
	[WBT_WC_OFF] = "off",
	[WBT_WC_AUTO] = "auto",
};

static const enum wbt_counter queue_counter[WBT_NR_QUEUES] = {
	[WBT_Q_RECLAIM] = WBT_C_RECLAIM,
	[WBT_Q_SYNC] = WBT_C_WB,
	[WBT_Q_NORMAL] = WBT_C_WB,
	[WBT_Q_BG] = WBT_C_WB,
	[WBT_Q_DISCARD] = WBT_C_DISCARD,
};

const char *wbt_kind_name(enum wbt_kind kind)
{
	return kind < WBT_NR_KINDS ? kind_names[kind] : "?";
}

const char *wbt_queue_name(enum wbt_queue q)
{
	return q < WBT_NR_QUEUES ? queue_names[q] : "none";
}

const char *wbt_lat_name(enum wbt_lat v)
{
	switch (v) {
	case WBT_LAT_OK:
		return "ok";
	case WBT_LAT_UNKNOWN:
		return "unknown";
	case WBT_LAT_UNKNOWN_WRITES:
		return "unknown_writes";
	case WBT_LAT_EXCEEDED:
		return "exceeded";
	}
	return "none";
}

const char *wbt_wc_policy_name(enum wbt_wc_policy p)
{
	return p < WBT_NR_WC_POLICIES ? wc_policy_names[p] : "?";
}

/* ---- classification ---------------------------------------------------- */

enum wbt_kind wbt_classify(unsigned int f)
{
	if (f & WBT_F_READ)
		return WBT_K_READ;
	if (f & WBT_F_DISCARD)
		return WBT_K_DISCARD;
	if (!(f & WBT_F_WRITE))
		return WBT_K_OTHER;
	if ((f & WBT_F_PREFLUSH) && (f & WBT_F_EMPTY))
		return WBT_K_FLUSH;
	if (f & (WBT_F_SWAP | WBT_F_RECLAIMER))
		return WBT_K_RECLAIM;
	if ((f & (WBT_F_SYNC | WBT_F_IDLE)) == (WBT_F_SYNC | WBT_F_IDLE))
		return WBT_K_DIRECT;
	if (f & (WBT_F_SYNC | WBT_F_META | WBT_F_PRIO | WBT_F_FUA))
		return WBT_K_SYNC;
	if (f & WBT_F_BACKGROUND)
		return WBT_K_BG;
	return WBT_K_NORMAL;
}

enum wbt_queue wbt_kind_queue(enum wbt_kind kind)
{
	switch (kind) {
	case WBT_K_RECLAIM:
		return WBT_Q_RECLAIM;
	case WBT_K_SYNC:
		return WBT_Q_SYNC;
	case WBT_K_NORMAL:
		return WBT_Q_NORMAL;
	case WBT_K_BG:
		return WBT_Q_BG;
	case WBT_K_DISCARD:
		return WBT_Q_DISCARD;
	default:
		return WBT_Q_NONE;
	}
}

static bool queue_gated(enum wbt_queue q)
{
	return q == WBT_Q_NORMAL || q == WBT_Q_BG || q == WBT_Q_DISCARD;
}

/* ---- limits -------------------------------------------------------------- */

/* Upstream's rq_depth_calc_max_depth(), on our own fields. */
static unsigned int calc_step_depth(struct wbt_core *c)
{
	unsigned int qd = c->queue_depth ? c->queue_depth : 1;
	unsigned int depth, maxd;
	int step = c->scale_step;

	c->scaled_max = false;
	if (qd == 1) {
		if (step > 0)
			return 1;
		c->scaled_max = true;
		return 2;
	}
	depth = qd < WBT_DEF_DEPTH ? qd : WBT_DEF_DEPTH;
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
		c->scaled_max = true;
		depth = maxd;
	}
	return depth;
}

void wbt_update_limits(struct wbt_core *c)
{
	u64 max;

	c->step_depth = calc_step_depth(c);
	if (c->cfg.depth) {
		max = c->cfg.depth;
		c->scaled_max = true;
	} else {
		max = (u64)c->step_depth * c->cfg.wb_percent / 100;
		if (max > WBT_MAX_DEPTH)
			max = WBT_MAX_DEPTH;
	}
	if (max < 1)
		max = 1;
	c->max_depth = max;
	if (max <= 2) {
		c->wb_normal = max;
		c->wb_background = 1;
	} else {
		c->wb_normal = (max + 1) / 2;
		c->wb_background = (max + 3) / 4;
	}
	/* New limits: let the dispatcher look again. */
	c->open[WBT_C_WB] = true;
	c->open[WBT_C_DISCARD] = true;
}

static bool throttling(const struct wbt_core *c)
{
	return c->cfg.enabled && c->holding;
}

/*
 * A write of queue q went while normal or background writes are held: they
 * are promoted now (wbt_dispatch()); look whether they may go.
 */
bool wbt_overtook(const struct wbt_core *c, enum wbt_queue q)
{
	return q == WBT_Q_SYNC &&
	       (c->queued[WBT_Q_NORMAL] || c->queued[WBT_Q_BG]);
}

/* Does the core hold writes back at all (enabled, not suspending)? */
bool wbt_throttling(const struct wbt_core *c)
{
	return throttling(c);
}

/* Time since a stamp; 0 if now is a little older (sampled before the lock). */
static u64 elapsed(const struct wbt_now *now, u64 stamp)
{
	return now->ns > stamp ? now->ns - stamp : 0;
}

static bool close_io(const struct wbt_core *c, const struct wbt_now *now)
{
	return elapsed(now, WBT_READ_ONCE(c->last_other_ns)) < WBT_CLOSE_IO_NSEC;
}

unsigned int wbt_limit(const struct wbt_core *c, enum wbt_queue q,
		       const struct wbt_now *now)
{
	if (!throttling(c))
		return UINT_MAX;
	switch (q) {
	case WBT_Q_RECLAIM:
	case WBT_Q_SYNC:
		return c->max_depth;
	case WBT_Q_DISCARD:
		return c->wb_background;
	default:
		break;
	}
	/*
	 * A dirtier waits: writeback is what it waits for, so lift the
	 * limits, as upstream does; but with reads around only to wb_normal,
	 * so that the readers keep most of their protection exactly when the
	 * flood is at its worst.
	 */
	if (now->dirty_wait)
		return close_io(c, now) ? c->wb_normal : c->max_depth;
	if (q == WBT_Q_BG || close_io(c, now))
		return c->wb_background;
	return c->wb_normal;
}

/* A dirtier waits and no reads need protecting: every limit lifts. */
static bool full_lift(const struct wbt_core *c, const struct wbt_now *now)
{
	return now->dirty_wait && !close_io(c, now);
}

/*
 * The policy "auto" stands for: pacing on a rotational disk, where the
 * benchmark shows it keeps reads fast (README); on a non-rotational one
 * a fixed gap per request would cap small writes at a few hundred a second,
 * so upstream's drain rule.
 */
enum wbt_wc_policy wbt_wc_policy(const struct wbt_core *c)
{
	if (c->cfg.wc_policy != WBT_WC_AUTO)
		return c->cfg.wc_policy;
	return c->nonrot ? WBT_WC_DRAIN : WBT_WC_DELAY;
}

/* The write cache rule in force for gated queues right now. */
static enum wbt_wc_policy wc_rule(const struct wbt_core *c,
				  const struct wbt_now *now)
{
	if (!c->wc || full_lift(c, now))
		return WBT_WC_OFF;
	return wbt_wc_policy(c);
}

/*
 * Delay policy: the gap between gated writes. A write cache acknowledges at
 * once, so depth bounds nothing there and the step scales the pace instead:
 * each step against missed reads multiplies the gap by sqrt(2) (181/128),
 * fine enough to settle near the rate at which the disk destages.
 */
u64 wbt_pace_ns(const struct wbt_core *c)
{
	u64 gap = (u64)c->cfg.cache_delay_usec * 1000;
	int step = c->scale_step;
	int e = step < 0 ? -step : step;

	if (e > WBT_MAX_PACE_STEP)
		e = WBT_MAX_PACE_STEP;
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
static bool pacing(const struct wbt_core *c, const struct wbt_now *now)
{
	return wc_rule(c, now) == WBT_WC_DELAY &&
	       (c->scale_step > 0 || close_io(c, now));
}

/* Delay policy: nanoseconds until a gated queue may issue again, or 0. */
static u64 delay_left(const struct wbt_core *c, enum wbt_queue q,
		      const struct wbt_now *now)
{
	u64 since = elapsed(now, c->last_gated_ns);
	u64 delay;

	if (!throttling(c) || queue_counter[q] != WBT_C_WB ||
	    !queue_gated(q) || !pacing(c, now))
		return 0;
	delay = wbt_pace_ns(c);
	return since < delay ? delay - since : 0;
}

static bool under_limit(const struct wbt_core *c, enum wbt_queue q,
			const struct wbt_now *now)
{
	return c->inflight[queue_counter[q]] < wbt_limit(c, q, now);
}

static void take_slot(struct wbt_core *c, enum wbt_queue q,
		      const struct wbt_now *now)
{
	c->inflight[queue_counter[q]]++;
	if (++c->q_inflight[q] > c->stats.hwm[q])
		c->stats.hwm[q] = c->q_inflight[q];
	if (queue_gated(q) && queue_counter[q] == WBT_C_WB)
		c->last_gated_ns = now->ns;
	if (q == WBT_Q_SYNC && (c->queued[WBT_Q_NORMAL] || c->queued[WBT_Q_BG]) &&
	    c->overtakes < WBT_DEF_DEPTH)
		c->overtakes++;
}

/* Does this write continue the open group of its queue? */
static bool can_merge(const struct wbt_core *c, enum wbt_queue q,
		      const struct wbt_io *io)
{
	unsigned int g = c->open_grp[q];

	return io && io->sectors && g != WBT_NO_GROUP && c->grp_refs[g] &&
	       c->grp_refs[g] < 0xffff &&
	       io->sector == c->open_end[q] &&
	       c->open_sectors[q] + io->sectors <= c->max_merge_sectors;
}

static unsigned int join_group(struct wbt_core *c, enum wbt_queue q,
			       const struct wbt_io *io)
{
	unsigned int g = c->open_grp[q];

	c->grp_refs[g]++;
	c->open_end[q] += io->sectors;
	c->open_sectors[q] += io->sectors;
	c->stats.merged++;
	return g;
}

/* Take a slot for a new request; returns its group, if it can have one. */
static unsigned int new_group(struct wbt_core *c, enum wbt_queue q,
			      const struct wbt_io *io, const struct wbt_now *now)
{
	unsigned int g;

	take_slot(c, q, now);
	c->open_grp[q] = WBT_NO_GROUP;
	if (!io || !io->sectors || q == WBT_Q_DISCARD || !c->grp_nfree)
		return WBT_NO_GROUP;
	g = c->grp_free[--c->grp_nfree];
	c->grp_refs[g] = 1;
	c->open_grp[q] = g;
	c->open_end[q] = io->sector + io->sectors;
	c->open_sectors[q] = io->sectors;
	return g;
}

/* A bio of group g completed; true if that was the group's last bio. */
static bool leave_group(struct wbt_core *c, enum wbt_queue q, unsigned int g)
{
	if (g == WBT_NO_GROUP)
		return true;
	if (g >= WBT_NR_GROUPS || !c->grp_refs[g])
		return false;	/* not ours: never release a slot twice */
	if (--c->grp_refs[g])
		return false;
	c->grp_free[c->grp_nfree++] = g;
	if (c->open_grp[q] == g)
		c->open_grp[q] = WBT_NO_GROUP;
	return true;
}

/* Is anything of this or a stronger queue on the same counter held? */
static bool held_ahead(const struct wbt_core *c, enum wbt_queue q)
{
	enum wbt_queue p;

	for (p = 0; p <= q; p++)
		if (queue_counter[p] == queue_counter[q] && c->queued[p])
			return true;
	return false;
}

/* Deferring bytes more would pass the bound (0: nothing is deferred). */
static bool backlog_full(const struct wbt_core *c, u64 bytes)
{
	u64 bound = (u64)c->cfg.backlog_kb * 1024;

	return !bound || c->deferred_bytes + bytes > bound;
}

/*
 * A write that may not go now: its submitter waits if it may sleep; a
 * REQ_NOWAIT one is refused; otherwise the target holds it, unless the
 * backlog is full, and then it goes at once.
 */
static int hold(struct wbt_core *c, enum wbt_queue q, const struct wbt_io *io,
		const struct wbt_now *now)
{
	unsigned int mode = io ? io->mode : WBT_IO_DEFER;
	u64 bytes = io ? io->bytes : 0;

	if (!c->cfg.push_back)
		mode &= ~WBT_IO_SLEEP;
	if (mode & WBT_IO_NOWAIT) {
		c->stats.again++;
		return WBT_AGAIN;
	}
	if (!(mode & WBT_IO_SLEEP) && backlog_full(c, bytes)) {
		c->stats.overflow++;
		return new_group(c, q, io, now);
	}
	c->queued[q]++;
	c->stats.throttled[q]++;
	if (mode & WBT_IO_SLEEP) {
		c->stats.slept++;
		return WBT_WAIT;
	}
	c->deferred[q]++;
	c->deferred_bytes += bytes;
	c->stats.deferred++;
	if (c->deferred_bytes > c->stats.deferred_bytes_max)
		c->stats.deferred_bytes_max = c->deferred_bytes;
	return WBT_HOLD;
}

/* ---- the three events: map, dispatch, done -------------------------------- */

/*
 * A bio arrives. WBT_WAIT: its submitter waits, WBT_HOLD: the caller holds
 * it; either way in queue wbt_kind_queue(kind), in arrival order, until
 * wbt_dispatch() names that queue. WBT_AGAIN: fail it with BLK_STS_AGAIN.
 * Otherwise issue it now; the value is its group, to give back to
 * wbt_done(). io NULL: a bio that cannot merge, deferred if held.
 */
int wbt_map(struct wbt_core *c, enum wbt_kind kind, const struct wbt_io *io,
	    const struct wbt_now *now)
{
	enum wbt_queue q = wbt_kind_queue(kind);

	if (kind < WBT_NR_KINDS)
		c->stats.kind[kind]++;
	if (kind == WBT_K_READ)
		wbt_note_read(c, now->ns);
	if (q == WBT_Q_NONE)
		return WBT_NO_GROUP;
	if (now->dirty_wait)
		c->stats.dirty_waits++;
	if (held_ahead(c, q))
		return hold(c, q, io, now);
	if (can_merge(c, q, io))
		return join_group(c, q, io);
	if (under_limit(c, q, now) && !delay_left(c, q, now))
		return new_group(c, q, io, now);
	return hold(c, q, io, now);
}

/* Requests of the gated queues of counter ctr in flight. */
static unsigned int gated_inflight(const struct wbt_core *c,
				   enum wbt_counter ctr)
{
	unsigned int n = 0;
	enum wbt_queue q;

	for (q = 0; q < WBT_NR_QUEUES; q++)
		if (queue_gated(q) && queue_counter[q] == ctr)
			n += c->q_inflight[q];
	return n;
}

static bool gate_closed(const struct wbt_core *c, enum wbt_queue q,
			const struct wbt_now *now)
{
	if (!throttling(c) || !queue_gated(q))
		return false;
	if (wc_rule(c, now) == WBT_WC_DELAY)
		return false;
	/* Drained: no completion of the class will come to open it. */
	if (!gated_inflight(c, queue_counter[q]))
		return false;
	return !c->open[queue_counter[q]];
}

static u64 age_bound_ns(const struct wbt_core *c)
{
	return (u64)c->cfg.backlog_ms * 1000 * 1000;
}

/* How long head h has been held; 0 if it does not say. */
static u64 head_age(const struct wbt_io *h, const struct wbt_now *now)
{
	return h->since_ns ? elapsed(now, h->since_ns) : 0;
}

static void min_wait(u64 *wait_ns, u64 left)
{
	if (left && (!*wait_ns || left < *wait_ns))
		*wait_ns = left;
}

/* A sync write went past held writes of gated queue q: promote one. */
static bool overtaken(const struct wbt_core *c, enum wbt_queue q)
{
	return c->overtakes && queue_gated(q) && queue_counter[q] == WBT_C_WB;
}

/*
 * The oldest head held for backlog_ms or longer, or overtaken by a sync
 * write, or WBT_Q_NONE; *aged says which.
 */
static enum wbt_queue promoted_head(const struct wbt_core *c,
				    const struct wbt_now *now,
				    const struct wbt_io *heads, u64 *wait_ns,
				    bool *aged)
{
	enum wbt_queue q, old = WBT_Q_NONE;
	u64 bound = age_bound_ns(c), age, oldest = 0;

	for (q = 0; q < WBT_NR_QUEUES; q++) {
		if (!c->queued[q] || !heads[q].since_ns)
			continue;
		age = head_age(&heads[q], now);
		if (age < bound)
			min_wait(wait_ns, bound - age);
		if (age < bound && !overtaken(c, q))
			continue;
		if (age > oldest || old == WBT_Q_NONE) {
			oldest = age;
			old = q;
			*aged = age >= bound;
		}
	}
	return old;
}

/* The head of queue q goes: account it. */
static int take_head(struct wbt_core *c, enum wbt_queue q,
		     const struct wbt_io *h, const struct wbt_now *now,
		     unsigned int *grp)
{
	c->queued[q]--;
	if (!c->queued[WBT_Q_NORMAL] && !c->queued[WBT_Q_BG])
		c->overtakes = 0;	/* nobody left who was overtaken */
	if (h->deferred && c->deferred[q]) {
		c->deferred[q]--;
		c->deferred_bytes -= h->bytes < c->deferred_bytes ?
				     h->bytes : c->deferred_bytes;
	}
	if (h->since_ns)
		wbt_note_held(c, head_age(h, now), h->deferred);
	if (can_merge(c, q, h))
		*grp = join_group(c, q, h);
	else
		*grp = new_group(c, q, h, now);
	return q;
}

/*
 * Pick the queue whose head may be issued now (or whose sleeping submitter
 * may go on) and account it; the caller pops that queue's head and lets it
 * go, giving *grp back to wbt_done(). heads[q] describes the head of queue
 * q. -1: nothing may go now; if *wait_ns is then nonzero, call again after
 * that long.
 *
 * A head held for backlog_ms, or overtaken by a sync write, goes first, as
 * soon as its counter is below max_depth; a deferred one held for
 * backlog_ms goes regardless of the limit.
 */
int wbt_dispatch(struct wbt_core *c, const struct wbt_now *now,
		 const struct wbt_io *heads, unsigned int *grp, u64 *wait_ns)
{
	bool blocked[WBT_NR_COUNTERS] = { false };
	enum wbt_queue q;
	bool aged = false;
	u64 left;

	*wait_ns = 0;
	q = promoted_head(c, now, heads, wait_ns, &aged);
	if (q != WBT_Q_NONE) {
		if ((aged && heads[q].deferred) || !throttling(c) ||
		    c->inflight[queue_counter[q]] < c->max_depth) {
			if (aged) {
				c->stats.aged++;
			} else {
				c->stats.promoted++;
				c->overtakes--;
			}
			c->promo_wait[queue_counter[q]] = false;
			return take_head(c, q, &heads[q], now, grp);
		}
		/* The next completion on the counter must look again. */
		c->promo_wait[queue_counter[q]] = true;
		blocked[queue_counter[q]] = true;
	}
	for (q = 0; q < WBT_NR_QUEUES; q++) {
		enum wbt_counter ctr = queue_counter[q];

		if (!c->queued[q])
			continue;
		if (can_merge(c, q, &heads[q]))
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
	c->open[WBT_C_WB] = false;
	c->open[WBT_C_DISCARD] = false;
	return -1;
}

static bool gated_waiting(const struct wbt_core *c, enum wbt_counter ctr)
{
	enum wbt_queue q;

	for (q = 0; q < WBT_NR_QUEUES; q++)
		if (queue_gated(q) && queue_counter[q] == ctr && c->queued[q])
			return true;
	return false;
}

/* Release rule for the gated queues after a completion on counter ctr. */
static bool release_gated(struct wbt_core *c, enum wbt_counter ctr,
			  const struct wbt_now *now)
{
	unsigned int n = c->inflight[ctr];
	unsigned int limit, batch;

	if (!throttling(c))
		return true;
	switch (ctr == WBT_C_WB ? wc_rule(c, now) : WBT_WC_OFF) {
	case WBT_WC_DELAY:
		return true;	/* wbt_dispatch() keeps the pace */
	case WBT_WC_DRAIN:
		/*
		 * "The class drained": sync writes in flight do not count,
		 * or a stream of them would starve background writeback.
		 */
		n = gated_inflight(c, ctr);
		limit = 0;
		break;
	default:
		limit = ctr == WBT_C_WB ? c->wb_normal : c->wb_background;
		break;
	}
	if (n && n >= limit)
		return false;
	batch = c->wb_background / 2;
	if (n && limit - n < (batch ? batch : 1))
		return false;
	c->open[ctr] = true;
	return true;
}

/*
 * A bio of this kind and group completed (only call it for bios that
 * wbt_map() or wbt_dispatch() let go). True: run the dispatcher.
 */
bool wbt_done(struct wbt_core *c, enum wbt_kind kind, unsigned int grp,
	      const struct wbt_now *now)
{
	enum wbt_queue q = wbt_kind_queue(kind);
	enum wbt_counter ctr;
	bool kick = false;
	enum wbt_queue p;

	if (kind == WBT_K_READ)
		wbt_note_read(c, now->ns);
	if (q == WBT_Q_NONE || !leave_group(c, q, grp))
		return false;
	ctr = queue_counter[q];
	if (c->inflight[ctr])
		c->inflight[ctr]--;
	if (c->q_inflight[q])
		c->q_inflight[q]--;
	for (p = 0; p < WBT_NR_QUEUES; p++)
		if (!queue_gated(p) && queue_counter[p] == ctr &&
		    c->queued[p] && under_limit(c, p, now))
			kick = true;
	if (gated_waiting(c, ctr) && release_gated(c, ctr, now))
		kick = true;
	if (c->promo_wait[ctr] && c->inflight[ctr] < c->max_depth)
		kick = true;
	return kick;
}

void wbt_note_held(struct wbt_core *c, u64 held_ns, bool deferred)
{
	c->stats.held_ns += held_ns;
	if (held_ns > c->stats.held_max_ns)
		c->stats.held_max_ns = held_ns;
	if (deferred && held_ns > c->stats.deferred_max_ns)
		c->stats.deferred_max_ns = held_ns;
}

bool wbt_idle(const struct wbt_core *c)
{
	int i;

	for (i = 0; i < WBT_NR_COUNTERS; i++)
		if (c->inflight[i])
			return false;
	for (i = 0; i < WBT_NR_QUEUES; i++)
		if (c->queued[i])
			return false;
	return true;
}

/* Nothing in flight on the counter queue q uses: no completion will come. */
bool wbt_counter_idle(const struct wbt_core *c, enum wbt_queue q)
{
	return q >= WBT_NR_QUEUES || !c->inflight[queue_counter[q]];
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

/* Log-scale histogram: WBT_HIST_SUB buckets per power of two of usecs. */
unsigned int wbt_hist_bucket(u64 lat_ns)
{
	u64 us = lat_ns / 1000;
	unsigned int e, sub, b;

	if (!us)
		return 0;
	e = ilog2_u64(us);
	sub = e >= 2 ? (us >> (e - 2)) & 3 : (us << (2 - e)) & 3;
	b = e * WBT_HIST_SUB + sub;
	return b < WBT_HIST_BUCKETS ? b : WBT_HIST_BUCKETS - 1;
}

/* The upper end of a bucket, in ns. */
u64 wbt_hist_value(unsigned int b)
{
	unsigned int e = b / WBT_HIST_SUB, sub = b % WBT_HIST_SUB;

	return ((1000ULL << e) * (WBT_HIST_SUB + sub + 1)) / WBT_HIST_SUB;
}

static u64 window_pct(const struct wbt_window *w, unsigned int pct)
{
	u64 want = ((u64)w->nr_read * pct + 99) / 100, sum = 0;
	unsigned int b;

	if (!w->nr_read)
		return 0;
	if (!want)
		want = 1;
	for (b = 0; b < WBT_HIST_BUCKETS; b++) {
		sum += w->hist[b];
		if (sum >= want)
			break;
	}
	if (b >= WBT_HIST_BUCKETS || wbt_hist_value(b) > w->read_max_ns)
		return w->read_max_ns;
	return wbt_hist_value(b);
}

/* A completed bio's latency (map to end_io), into window w. */
static void window_add(struct wbt_window *w, enum wbt_kind kind, u64 lat_ns)
{
	switch (kind) {
	case WBT_K_READ:
		if (!w->nr_read || lat_ns < w->read_min_ns)
			w->read_min_ns = lat_ns;
		if (lat_ns > w->read_max_ns)
			w->read_max_ns = lat_ns;
		w->nr_read++;
		w->read_sum_ns += lat_ns;
		w->hist[wbt_hist_bucket(lat_ns)]++;
		break;
	case WBT_K_BG:
	case WBT_K_NORMAL:
	case WBT_K_SYNC:
	case WBT_K_RECLAIM:
	case WBT_K_DIRECT:
	case WBT_K_DISCARD:	/* upstream: any op_is_write() op */
		w->nr_write++;
		break;
	default:
		break;
	}
}

/* Add window s to window w, as if w had seen every sample of s. */
static void window_merge(struct wbt_window *w, const struct wbt_window *s)
{
	unsigned int i;

	if (s->nr_read) {
		if (!w->nr_read || s->read_min_ns < w->read_min_ns)
			w->read_min_ns = s->read_min_ns;
		if (s->read_max_ns > w->read_max_ns)
			w->read_max_ns = s->read_max_ns;
		w->nr_read += s->nr_read;
		w->read_sum_ns += s->read_sum_ns;
		for (i = 0; i < WBT_HIST_BUCKETS; i++)
			w->hist[i] += s->hist[i];
	}
	w->nr_write += s->nr_write;
}

void wbt_sample(struct wbt_core *c, enum wbt_kind kind, u64 lat_ns)
{
	window_add(&c->win, kind, lat_ns);
}

/* ---- the lock-free side --------------------------------------------------- */

/* A bio that is never held arrives: count it in shard s. */
void wbt_shard_map(struct wbt_shard *s, enum wbt_kind kind)
{
	if (kind < WBT_NR_KINDS)
		s->kind[kind]++;
}

/* ... and completes after lat_ns. */
void wbt_shard_sample(struct wbt_shard *s, enum wbt_kind kind, u64 lat_ns)
{
	window_add(&s->win, kind, lat_ns);
}

/*
 * Time the read numbered seq on this CPU, whose shard is s? Every one
 * while the shard has few in the window, then one in WBT_SAMPLE_EVERY.
 */
bool wbt_sample_read(const struct wbt_shard *s, unsigned int seq)
{
	return WBT_READ_ONCE(s->win.nr_read) < WBT_SAMPLE_ALL ||
	       !(seq % WBT_SAMPLE_EVERY);
}

/* Move what shard s holds into the core (both locked), and empty it. */
void wbt_fold(struct wbt_core *c, struct wbt_shard *s)
{
	unsigned int i;

	for (i = 0; i < WBT_NR_KINDS; i++)
		c->stats.kind[i] += s->kind[i];
	window_merge(&c->win, &s->win);
	memset(s, 0, sizeof(*s));
}

/*
 * A read was issued or completed at ns: stamp "reads recently". Written at
 * most once per WBT_STAMP_NSEC: reads on every CPU would otherwise keep
 * bouncing one cache line between them.
 */
void wbt_note_read(struct wbt_core *c, u64 ns)
{
	u64 last = WBT_READ_ONCE(c->last_other_ns);

	if (ns > last && ns - last >= WBT_STAMP_NSEC)
		WBT_WRITE_ONCE(c->last_other_ns, ns);
}

/*
 * A read is issued; true if it becomes the one whose age is watched (one
 * at a time; the first to claim the free slot wins).
 */
bool wbt_read_issue(struct wbt_core *c, const struct wbt_now *now)
{
	u64 ns = now->ns ? now->ns : 1;

	if (WBT_READ_ONCE(c->read_issue_ns))
		return false;
	return !wbt_cmpxchg64(&c->read_issue_ns, 0, ns);
}

/* The watched read completed. */
void wbt_read_done(struct wbt_core *c)
{
	WBT_WRITE_ONCE(c->read_issue_ns, 0);
}

/* The length of the running window. */
u64 wbt_window_ns(const struct wbt_core *c)
{
	return WBT_READ_ONCE(c->cur_win_ns);
}

static void update_lat_target(struct wbt_core *c)
{
	unsigned int us = c->cfg.lat_usec;

	if (us == WBT_LAT_AUTO)
		us = c->nonrot ? WBT_DEF_LAT_NONROT_USEC : WBT_DEF_LAT_ROT_USEC;
	c->lat_target_ns = (u64)us * 1000;
}

/* Does the window controller move the depth? */
bool wbt_scaling(const struct wbt_core *c)
{
	return c->cfg.enabled && !c->cfg.depth && c->lat_target_ns;
}

/*
 * Writes a window needs before its reads tell about them. Paced, fewer come
 * by design: as many as the pace lets through, at most the usual minimum.
 */
static unsigned int min_write_samples(const struct wbt_core *c,
				      const struct wbt_now *now)
{
	u64 pace = wbt_pace_ns(c);
	u64 n;

	if (!pacing(c, now) || !pace)
		return WBT_MIN_WRITE_SAMPLES;
	n = c->cur_win_ns / pace;
	return n < WBT_MIN_WRITE_SAMPLES ? n : WBT_MIN_WRITE_SAMPLES;
}

/*
 * A read stuck behind the flood never completes to say so: the age of the
 * watched read, if it counts as a miss; else 0.
 */
static u64 stuck_read_age(const struct wbt_core *c, const struct wbt_now *now)
{
	u64 issued = WBT_READ_ONCE(c->read_issue_ns);
	u64 age;

	if (!issued)
		return 0;
	age = elapsed(now, issued);
	if (age > c->cur_win_ns || (age > c->lat_target_ns && !c->win.nr_read))
		return age;
	return 0;
}

static enum wbt_lat lat_verdict(const struct wbt_core *c,
				const struct wbt_now *now, u64 metric)
{
	const struct wbt_window *w = &c->win;

	if (stuck_read_age(c, now))
		return WBT_LAT_EXCEEDED;
	if (!w->nr_read || w->nr_write < min_write_samples(c, now)) {
		if (w->nr_write || now->dirty_wait || c->inflight[WBT_C_WB])
			return WBT_LAT_UNKNOWN_WRITES;
		return WBT_LAT_UNKNOWN;
	}
	return metric > c->lat_target_ns ? WBT_LAT_EXCEEDED : WBT_LAT_OK;
}

/* More depth: one step down. */
static bool scale_up(struct wbt_core *c)
{
	if (c->scaled_max)
		return false;
	c->scale_step--;
	c->unknown_cnt = 0;
	c->stats.step_changes++;
	wbt_update_limits(c);
	return true;
}

/* Past depth 1, a paced write cache can still slow down. */
static bool paced_step_left(const struct wbt_core *c)
{
	return c->wc && wbt_wc_policy(c) == WBT_WC_DELAY &&
	       c->cfg.cache_delay_usec && c->scale_step < WBT_MAX_PACE_STEP;
}

/* Less depth: one step up; hard snaps a negative step back to 0. */
static bool scale_down(struct wbt_core *c, bool hard)
{
	/* The step's own depth, so that wb_percent cannot unbound it. */
	if ((c->max_depth == 1 || c->step_depth == 1) && !paced_step_left(c))
		return false;
	if (c->scale_step < 0 && hard)
		c->scale_step = 0;
	else
		c->scale_step++;
	c->unknown_cnt = 0;
	c->stats.step_changes++;
	wbt_update_limits(c);
	return true;
}

/* Raising the depth into a step that missed waits for a run of good windows. */
static bool may_raise(const struct wbt_core *c)
{
	return c->scale_step - 1 > c->bad_step || c->ok_run >= c->probe_backoff;
}

/*
 * Paced on a write cache: did the reads that missed the target start before
 * the last step up? Then they tell nothing about it: the next windows still
 * see the backlog the cache had (16 MiB at 40 MiB/s is 0.4 s), and stepping
 * on every one of them overshoots. Wait for a read issued since. Without a
 * cache the backlog is what is in flight, gone within a window or two; there
 * upstream's rule (step on every miss) measured better.
 */
static bool stale_miss(const struct wbt_core *c, const struct wbt_now *now,
		       u64 metric)
{
	u64 since, age;

	if (!c->down_ns || !c->wc || wbt_wc_policy(c) != WBT_WC_DELAY)
		return false;
	since = elapsed(now, c->down_ns);
	age = stuck_read_age(c, now);
	if (age)
		return age > since;
	/* The reads the metric stands for took at least that long. */
	return metric > since;
}

static void act(struct wbt_core *c, enum wbt_lat verdict,
		const struct wbt_now *now, u64 metric)
{
	bool was_raised = c->raised;

	c->raised = false;
	switch (verdict) {
	case WBT_LAT_EXCEEDED:
		c->stats.exceeded++;
		if (stale_miss(c, now, metric))
			break;
		if (was_raised) {
			c->bad_step = c->scale_step;
			c->probe_backoff = c->probe_backoff ?
				c->probe_backoff * 2 : WBT_PROBE_BACKOFF_MIN;
			if (c->probe_backoff > WBT_PROBE_BACKOFF_MAX)
				c->probe_backoff = WBT_PROBE_BACKOFF_MAX;
		}
		c->ok_run = 0;
		if (scale_down(c, true))
			c->down_ns = now->ns ? now->ns : 1;
		break;
	case WBT_LAT_OK:
		if (was_raised && c->scale_step <= c->bad_step) {
			c->bad_step = INT_MIN;	/* that step is fine now */
			c->probe_backoff = 0;
		}
		c->ok_run++;
		if (may_raise(c) && scale_up(c)) {
			c->raised = true;
			c->ok_run = 0;
		}
		break;
	case WBT_LAT_UNKNOWN_WRITES:
		/* Only writes: nobody to protect, go deeper. */
		c->raised = scale_up(c);
		break;
	case WBT_LAT_UNKNOWN:
		if (++c->unknown_cnt < WBT_UNKNOWN_BUMP)
			break;
		if (c->scale_step > 0)
			scale_up(c);
		else if (c->scale_step < 0)
			scale_down(c, false);
		break;
	}
}

static void window_length(struct wbt_core *c)
{
	u64 step = c->scale_step > 0 ? c->scale_step : 0;
	u64 win = WBT_WINDOW_NSEC;

	if (step)
		win = ((u64)WBT_WINDOW_NSEC << 4) / isqrt_u64((step + 1) << 8);
	WBT_WRITE_ONCE(c->cur_win_ns, win);
}

/*
 * The window of c->cur_win_ns ended: judge it, maybe move the step, start
 * the next one. True: arm the timer for another c->cur_win_ns.
 */
bool wbt_window(struct wbt_core *c, const struct wbt_now *now)
{
	const struct wbt_window *w = &c->win;
	struct wbt_win_result *r = &c->last;
	bool busy = w->nr_read || w->nr_write || !wbt_idle(c);

	r->nr_read = w->nr_read;
	r->nr_write = w->nr_write;
	r->min_ns = w->read_min_ns;
	r->mean_ns = w->nr_read ? w->read_sum_ns / w->nr_read : 0;
	r->p50_ns = window_pct(w, 50);
	r->p99_ns = window_pct(w, 99);
	r->metric_ns = c->cfg.lat_pct ? window_pct(w, c->cfg.lat_pct) : r->min_ns;
	r->verdict = lat_verdict(c, now, r->metric_ns);
	c->stats.windows++;
	if (wbt_scaling(c))
		act(c, r->verdict, now, r->metric_ns);
	memset(&c->win, 0, sizeof(c->win));
	window_length(c);
	return c->scale_step || busy;
}

/* ---- setup -------------------------------------------------------------- */

void wbt_init(struct wbt_core *c, const struct wbt_config *cfg)
{
	unsigned int i;

	memset(c, 0, sizeof(*c));
	c->cfg = *cfg;
	c->holding = true;
	c->queue_depth = 1;
	for (i = 0; i < WBT_NR_GROUPS; i++)
		c->grp_free[i] = WBT_NR_GROUPS - 1 - i;
	c->grp_nfree = WBT_NR_GROUPS;
	for (i = 0; i < WBT_NR_QUEUES; i++)
		c->open_grp[i] = WBT_NO_GROUP;
	c->bad_step = INT_MIN;
	c->cur_win_ns = WBT_WINDOW_NSEC;
	update_lat_target(c);
	wbt_update_limits(c);
}

static void reset_step(struct wbt_core *c)
{
	c->scale_step = 0;
	c->bad_step = INT_MIN;
	c->probe_backoff = 0;
	c->ok_run = 0;
	c->unknown_cnt = 0;
	c->raised = false;
	c->down_ns = 0;
	window_length(c);
}

void wbt_set_config(struct wbt_core *c, const struct wbt_config *cfg)
{
	c->cfg = *cfg;
	reset_step(c);
	update_lat_target(c);
	wbt_update_limits(c);
}

/* The lower device may change its depth or cache; true if it did. */
bool wbt_set_device(struct wbt_core *c, unsigned int queue_depth, bool wc,
		    unsigned int max_merge_sectors, bool nonrot)
{
	c->max_merge_sectors = max_merge_sectors;
	if (c->queue_depth == queue_depth && c->wc == wc &&
	    c->nonrot == nonrot)
		return false;
	if (c->queue_depth != queue_depth) {
		c->queue_depth = queue_depth;
		reset_step(c);
	}
	c->wc = wc;
	c->nonrot = nonrot;
	update_lat_target(c);
	wbt_update_limits(c);
	return true;
}

void wbt_set_holding(struct wbt_core *c, bool holding)
{
	c->holding = holding;
	wbt_update_limits(c);
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
 * (wbt_config_format), the error texts and the README (checked by the unit
 * tests and `make check`) follow it.
 */
struct opt {
	const char *name;
	enum opt_type type;
	unsigned int min, max;
	unsigned int def;
	unsigned int auto_val;		/* OPT_AUTO: what "auto" stores */
	const char *const *names;	/* OPT_NAME */
	size_t off;			/* of its unsigned int in wbt_config */
	const char *err;		/* what the value may be */
};

#define CFG(field) offsetof(struct wbt_config, field)

static const struct opt opts[WBT_NR_OPTS] = {
	[WBT_O_ENABLE] = {
		.name = "enable", .max = 1, .def = 1,
		.off = CFG(enabled), .err = "enable takes 0 or 1",
	},
	[WBT_O_WB_PERCENT] = {
		.name = "wb_percent",
		.min = 1, .max = WBT_MAX_WB_PERCENT, .def = WBT_DEF_WB_PERCENT,
		.off = CFG(wb_percent), .err = "wb_percent takes 1 to 1000",
	},
	[WBT_O_DEPTH] = {
		.name = "depth", .type = OPT_AUTO,
		.min = 1, .max = WBT_MAX_DEPTH, .def = 0, .auto_val = 0,
		.off = CFG(depth), .err = "depth takes auto or 1 to 65536",
	},
	[WBT_O_WC_POLICY] = {
		.name = "wc_policy", .type = OPT_NAME,
		.max = WBT_NR_WC_POLICIES - 1, .def = WBT_WC_AUTO,
		.names = wc_policy_names, .off = CFG(wc_policy),
		.err = "wc_policy takes auto, drain, delay or off",
	},
	[WBT_O_CACHE_DELAY] = {
		.name = "cache_delay_us",
		.max = WBT_MAX_CACHE_DELAY_USEC,
		.def = WBT_DEF_CACHE_DELAY_USEC, .off = CFG(cache_delay_usec),
		.err = "cache_delay_us takes 0 to 1000000",
	},
	[WBT_O_LAT] = {
		.name = "lat_us", .type = OPT_AUTO,
		.max = WBT_MAX_LAT_USEC, .def = WBT_LAT_AUTO,
		.auto_val = WBT_LAT_AUTO, .off = CFG(lat_usec),
		.err = "lat_us takes auto or 0 to 10000000",
	},
	[WBT_O_LAT_PCT] = {
		.name = "lat_pct", .max = 99, .off = CFG(lat_pct),
		.err = "lat_pct takes 0 (window minimum) to 99",
	},
	[WBT_O_PUSH_BACK] = {
		.name = "push_back", .max = 1, .def = 1,
		.off = CFG(push_back),
		.err = "push_back takes 0 (never make a submitter wait) or 1",
	},
	[WBT_O_BACKLOG_KB] = {
		.name = "backlog_kb", .max = WBT_MAX_BACKLOG_KB,
		.def = WBT_DEF_BACKLOG_KB, .off = CFG(backlog_kb),
		.err = "backlog_kb takes 0 (defer nothing) to 4194304",
	},
	[WBT_O_BACKLOG_MS] = {
		.name = "backlog_ms",
		.min = 1, .max = WBT_MAX_BACKLOG_MS, .def = WBT_DEF_BACKLOG_MS,
		.off = CFG(backlog_ms), .err = "backlog_ms takes 1 to 60000",
	},
};

static const char unknown_opt[] =
	"unknown option (enable, wb_percent, depth, wc_policy, cache_delay_us, lat_us, lat_pct, push_back, backlog_kb, backlog_ms)";

static unsigned int *opt_val(struct wbt_config *cfg, const struct opt *o)
{
	return (unsigned int *)((char *)cfg + o->off);
}

static unsigned int opt_get(const struct wbt_config *cfg, const struct opt *o)
{
	return *(const unsigned int *)((const char *)cfg + o->off);
}

void wbt_config_default(struct wbt_config *cfg)
{
	unsigned int i;

	memset(cfg, 0, sizeof(*cfg));
	for (i = 0; i < WBT_NR_OPTS; i++)
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

	for (i = 0; i < WBT_NR_OPTS; i++)
		if (!strcmp(key, opts[i].name))
			return &opts[i];
	return NULL;
}

/*
 * Set one option from its text. 0 on success; otherwise -1, cfg unchanged
 * and *err says what to fix.
 */
int wbt_config_set(struct wbt_config *cfg, const char *key, const char *val,
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
int wbt_config_doc(unsigned int i, char *buf, size_t len)
{
	const struct opt *o = &opts[i];
	size_t pos = 0;

	if (len)
		buf[0] = 0;
	if (i >= WBT_NR_OPTS)
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
bool wbt_config_describe(unsigned int i, const char **name, const char **err)
{
	if (i >= WBT_NR_OPTS)
		return false;
	*name = opts[i].name;
	*err = opts[i].err;
	return true;
}

unsigned int wbt_config_nr_args(const struct wbt_config *cfg)
{
	unsigned int i, n = 0;

	for (i = 0; i < WBT_NR_OPTS; i++)
		if (cfg->set_mask & (1u << i))
			n += 2;
	return n;
}

/* The options that were set, as " key value" pairs, in table order. */
int wbt_config_format(const struct wbt_config *cfg, char *buf, size_t len)
{
	const struct opt *o;
	unsigned int i, v;
	size_t pos = 0;

	if (len)
		buf[0] = 0;
	for (i = 0; i < WBT_NR_OPTS; i++) {
		if (!(cfg->set_mask & (1u << i)))
			continue;
		o = &opts[i];
		v = opt_get(cfg, o);
		if (o->type == OPT_NAME)
			emit(buf, len, &pos, " %s %s", o->name, o->names[v]);
		else if (o->type == OPT_AUTO && v == o->auto_val)
			emit(buf, len, &pos, " %s auto", o->name);
		else
			emit(buf, len, &pos, " %s %u", o->name, v);
	}
	return pos;
}

/* Writes held now: submitters waiting, and deferred ones. */
static void held_counts(const struct wbt_core *c, unsigned int *waiting,
			unsigned int *deferred)
{
	int i;

	*waiting = 0;
	*deferred = 0;
	for (i = 0; i < WBT_NR_QUEUES; i++) {
		*waiting += c->queued[i] - c->deferred[i];
		*deferred += c->deferred[i];
	}
}

/*
 * The INFO status: key=value fields, in an append-only order (README).
 * oldest_ns: how long the oldest write held now has been held.
 */
int wbt_format_status(const struct wbt_core *c, u64 oldest_ns, char *buf,
		      size_t len)
{
	const struct wbt_stats *s = &c->stats;
	unsigned int waiting, deferred;
	size_t pos = 0;
	int i;

	if (len)
		buf[0] = 0;
	emit(buf, len, &pos,
	     "enabled=%u holding=%d qd=%u wc=%d wc_policy=%s depth_mode=%s",
	     c->cfg.enabled, c->holding, c->queue_depth, c->wc,
	     wc_policy_names[wbt_wc_policy(c)],
	     c->cfg.depth ? "fixed" : "auto");
	emit(buf, len, &pos, " max=%u normal=%u background=%u step=%d",
	     c->max_depth, c->wb_normal, c->wb_background, c->scale_step);
	for (i = 0; i < WBT_NR_QUEUES; i++)
		emit(buf, len, &pos,
		     " %s_inflight=%u %s_queued=%u %s_hwm=%u %s_throttled=%llu",
		     queue_names[i], c->q_inflight[i], queue_names[i],
		     c->queued[i], queue_names[i], s->hwm[i], queue_names[i],
		     (unsigned long long)s->throttled[i]);
	emit(buf, len, &pos, " held_ns=%llu held_max_ns=%llu",
	     (unsigned long long)s->held_ns,
	     (unsigned long long)s->held_max_ns);
	for (i = 0; i < WBT_NR_KINDS; i++)
		emit(buf, len, &pos, " n_%s=%llu", kind_names[i],
		     (unsigned long long)s->kind[i]);
	emit(buf, len, &pos, " merged=%llu", (unsigned long long)s->merged);
	emit(buf, len, &pos,
	     " lat_target_us=%llu lat_pct=%u scaling=%d win_us=%llu",
	     (unsigned long long)c->lat_target_ns / 1000, c->cfg.lat_pct,
	     wbt_scaling(c), (unsigned long long)c->cur_win_ns / 1000);
	emit(buf, len, &pos,
	     " win_reads=%u win_writes=%u read_min_us=%llu read_p50_us=%llu read_p99_us=%llu verdict=%s",
	     c->last.nr_read, c->last.nr_write,
	     (unsigned long long)c->last.min_ns / 1000,
	     (unsigned long long)c->last.p50_ns / 1000,
	     (unsigned long long)c->last.p99_ns / 1000,
	     wbt_lat_name(c->last.verdict));
	emit(buf, len, &pos, " windows=%llu exceeded=%llu step_changes=%llu",
	     (unsigned long long)s->windows, (unsigned long long)s->exceeded,
	     (unsigned long long)s->step_changes);
	emit(buf, len, &pos, " pace_us=%llu",
	     (unsigned long long)wbt_pace_ns(c) / 1000);
	held_counts(c, &waiting, &deferred);
	emit(buf, len, &pos,
	     " waiting=%u deferred=%u deferred_bytes=%llu deferred_bytes_max=%llu held_oldest_us=%llu deferred_max_us=%llu",
	     waiting, deferred, (unsigned long long)c->deferred_bytes,
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
	return pos;
}
