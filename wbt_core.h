/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * wbt_core: the writeback throttling logic of dm-wbthrottle, free of kernel
 * headers so that it is unit-tested in user space.
 *
 * Names: the core's symbols are wtc_ and WTC_ ("wbthrottle core"), the DM
 * glue's wt_ (dm-wbthrottle.c); wbt_ and rwb_ are the block layer's
 * (block/blk-wbt.c), and in a backtrace or in kallsyms ours must not read
 * as theirs.
 *
 * Every bio is sorted into a kind (wtc_classify). Reads, O_DIRECT writes and
 * flushes are never held. Tracked writes go to one of five queues, strongest
 * first: reclaim, sync, normal, background, discard. Reclaim, discard and
 * the three writeback queues each share one in-flight counter; a queue may
 * add to its counter only while the counter is below the queue's limit:
 *
 *	reclaim, sync			max_depth
 *	any writeback, dirtier waiting	max_depth, unless protecting
 *	background, or protecting	wb_background
 *	normal				wb_normal
 *	discard				wb_background
 *
 * "Protecting": a read in the last 100 ms (upstream's close_io) or a sync
 * write in the last 3 s (a task waits for writes: fsync, a journal commit).
 *
 * Limits derive from the lower queue depth as upstream blk-wbt does
 * (16 at step 0, halved per positive step, doubled per negative step up to
 * 3/4 of the queue depth), scaled by wb_percent.
 *
 * The normal, background and discard queues are "gated": held bios are let
 * go in batches. Without a volatile write cache the gate opens when enough
 * slots are free (upstream's wb_normal rule); with one, either only when the
 * gated writes in flight drain to zero (policy "drain", upstream's rule,
 * but sync writes in flight do not count), or one bio per cache_delay
 * (policy "delay", the 2016 patch set's rule).
 *
 * Depth counts requests on the lower device, not bios: a write that continues
 * the last one let go from its queue (contiguous, mergeable, that one still
 * in flight, together at most max_merge_sectors) joins its "group" and takes
 * no new slot, as the lower queue will merge it into the same request. The
 * page cache of a raw block device writes back in 4 KiB bios; counting them
 * one by one would throttle a sequential stream to a few pages in flight.
 * Such a write joins without the lock (wtc_join(): a compare-and-exchange
 * on the queue's open group, then a reference on the group) while nothing
 * of its counter is held, and a completion that is not its request's last
 * leaves without it (wtc_put()): most writeback takes no lock at all.
 *
 * Self-tuning (depth auto, a latency target): per window (100 ms, shorter
 * as the step grows) the read latencies are summarised; if the minimum (or
 * the lat_pct percentile) is above the target, or a read has been out for
 * longer than the window, the step goes up (less depth); if reads meet the
 * target, it goes down (more depth). With only writes running it does not
 * go below 0 (upstream does) unless a probe finds that more depth completes
 * more writes: a non-rotational device whose latency is outside its queue,
 * as a network volume's (write_probe() in wbt_core.c). With no
 * signal for 5 windows it drifts back to 0. Unlike upstream, after the
 * depth was raised into a step that then missed, raising into that step
 * again waits for a run of good windows that doubles each time (4..64):
 * a steady load settles instead of oscillating between two steps.
 *
 * Push-back: a tracked write that may not go waits in its submitter when
 * the glue says the submitter may sleep (WTC_WAIT); only otherwise is it
 * deferred, held by the target (WTC_HOLD). Sleeping and deferred writes
 * share the queues above, in arrival order. The deferred backlog is
 * bounded: when it would exceed backlog_kb, a write that cannot sleep
 * passes at once; a deferred write older than backlog_ms goes regardless
 * of the limit. A held write of any kind older than backlog_ms is promoted:
 * it goes first, at max_depth, ungated and unpaced, so a saturating sync
 * load cannot starve normal or background writes. So does, one for each
 * sync write that overtook them, a held normal or background write: an
 * fsync may be waiting on
 * the pages it carries (ext4's data=ordered commit waits for the writeback
 * the flusher started), and behind the sync writes it would wait for the
 * shared counter to drain to the background limit. A REQ_NOWAIT write that
 * would wait is refused (WTC_AGAIN): its submitter retries where it may
 * block.
 *
 * The caller holds one lock around every call, except on the lock-free
 * side: wtc_join() and wtc_put() above, and bios that are never held
 * (reads, O_DIRECT writes, flushes), which must cost what they cost in
 * dm-linear. Those, and the writes that joined, are counted in per-CPU
 * counters, reads' latencies sampled into a shard (one per CPU in the kernel,
 * under a lock of that CPU's own), both folded into the core, under its
 * lock, when a window ends and for status (wtc_fold()). While a CPU's
 * shard has fewer than WTC_SAMPLE_ALL reads in the window, every read is
 * timed; past that, one in WTC_SAMPLE_EVERY (wtc_sample_read()): a busy
 * window's minimum and percentiles then come from a subsample of at least
 * WTC_SAMPLE_ALL reads per CPU, a quiet window's from every read. The two
 * stamps reads share, "reads recently" and the read whose age is watched,
 * are written without the lock (wtc_note_read(), wtc_read_issue(),
 * wtc_read_done()); the first is written at most once per WTC_STAMP_NSEC,
 * and the glue gives both the tick's time, so "recently" may end up to a
 * tick (4 ms at HZ=250; upstream counts in jiffies too) early. Nothing
 * here sleeps.
 */
#ifndef WTC_CORE_H
#define WTC_CORE_H

#include "wbt_shim.h"

/* What a bio is, for counting and for choosing its queue. */
enum wtc_kind {
	WTC_K_READ,
	WTC_K_BG,		/* REQ_BACKGROUND writeback */
	WTC_K_NORMAL,		/* other buffered writes */
	WTC_K_SYNC,		/* WB_SYNC_ALL / fsync, META, PRIO, FUA */
	WTC_K_RECLAIM,		/* swap, or submitted by kswapd */
	WTC_K_DIRECT,		/* REQ_SYNC|REQ_IDLE: O_DIRECT, journals */
	WTC_K_DISCARD,
	WTC_K_FLUSH,		/* empty PREFLUSH */
	WTC_K_OTHER,		/* write zeroes, secure erase, ... */
	WTC_NR_KINDS
};

/* Hold queues, strongest first. */
enum wtc_queue {
	WTC_Q_RECLAIM,
	WTC_Q_SYNC,
	WTC_Q_NORMAL,
	WTC_Q_BG,
	WTC_Q_DISCARD,
	WTC_NR_QUEUES,
	WTC_Q_NONE = WTC_NR_QUEUES,	/* not tracked: passes at once */
};

/* In-flight counters shared by queues. */
enum wtc_counter {
	WTC_C_RECLAIM,
	WTC_C_WB,
	WTC_C_DISCARD,
	WTC_NR_COUNTERS
};

/* Request flags, translated from REQ_* by the glue. */
enum wtc_flag {
	WTC_F_WRITE	= 1u << 0,	/* REQ_OP_WRITE */
	WTC_F_READ	= 1u << 1,	/* REQ_OP_READ */
	WTC_F_DISCARD	= 1u << 2,	/* REQ_OP_DISCARD */
	WTC_F_SYNC	= 1u << 3,
	WTC_F_IDLE	= 1u << 4,
	WTC_F_META	= 1u << 5,
	WTC_F_PRIO	= 1u << 6,
	WTC_F_FUA	= 1u << 7,
	WTC_F_PREFLUSH	= 1u << 8,
	WTC_F_BACKGROUND = 1u << 9,
	WTC_F_SWAP	= 1u << 10,
	WTC_F_RECLAIMER	= 1u << 11,	/* submitted by kswapd */
	WTC_F_EMPTY	= 1u << 12,	/* no data */
};

enum wtc_wc_policy {
	WTC_WC_DRAIN,		/* write cache: let go only when drained */
	WTC_WC_DELAY,		/* write cache: one bio per cache_delay */
	WTC_WC_OFF,		/* ignore the write cache */
	WTC_WC_AUTO,		/* delay if rotational, else drain */
	WTC_NR_WC_POLICIES
};

/* "sync writes recently": longer than an fsync waits on a flooded disk */
#define WTC_CLOSE_SYNC_NSEC	(3ULL * 1000 * 1000 * 1000)

enum {
	WTC_DEF_DEPTH = 16,			/* max_depth at step 0 */
	WTC_CLOSE_IO_NSEC = 100 * 1000 * 1000,	/* "reads recently" */
	WTC_STAMP_NSEC = 1000 * 1000,		/* its stamp's granularity */
	WTC_SAMPLE_ALL = 16,			/* reads timed per CPU/window */
	WTC_SAMPLE_EVERY = 8,			/* then one in this many */
	WTC_DEF_CACHE_DELAY_USEC = 10000,
	WTC_DEF_WB_PERCENT = 100,
	WTC_MAX_WB_PERCENT = 1000,
	WTC_MAX_DEPTH = 65536,
	WTC_MAX_CACHE_DELAY_USEC = 1000000,
	WTC_WINDOW_NSEC = 100 * 1000 * 1000,	/* base latency window */
	WTC_MIN_WRITE_SAMPLES = 3,		/* for a valid window */
	WTC_UNKNOWN_BUMP = 5,			/* windows before drifting */
	WTC_DEF_LAT_ROT_USEC = 75000,
	WTC_DEF_LAT_NONROT_USEC = 2000,
	WTC_MAX_LAT_USEC = 10000000,
	WTC_PROBE_BACKOFF_MIN = 4,		/* good windows before re-probing */
	WTC_PROBE_BACKOFF_MAX = 64,
	WTC_MAX_PACE_STEP = 12,			/* delay policy: gap x64 at most */
	WTC_HIST_SUB = 4,			/* histogram: 4 buckets per 2x */
	WTC_HIST_BUCKETS = 30 * WTC_HIST_SUB,	/* 1 us .. ~17 min */
	WTC_NR_GROUPS = 1024,			/* merge groups in flight */
	WTC_NO_GROUP = 0xffff,			/* bio accounted on its own */
	WTC_DEF_BACKLOG_KB = 16384,		/* deferred bytes bound */
	WTC_MAX_BACKLOG_KB = 4 * 1024 * 1024,
	WTC_DEF_BACKLOG_MS = 500,		/* deferred age bound */
	WTC_MAX_BACKLOG_MS = 60000,
};

/* lat_us "auto": a value no target in range can have. */
#define WTC_LAT_AUTO	UINT_MAX

/* What wtc_map() says of a write that may not go now (a group otherwise). */
enum wtc_verdict {
	WTC_AGAIN = -3,		/* refuse it (REQ_NOWAIT): retry elsewhere */
	WTC_WAIT = -2,		/* its submitter waits */
	WTC_HOLD = -1,		/* the caller defers it */
};

/* How the submitter of a write may be held (struct wtc_io.mode). */
enum wtc_io_mode {
	WTC_IO_DEFER = 0,		/* cannot sleep: the target holds it */
	WTC_IO_SLEEP = 1u << 0,		/* the submitter may sleep */
	WTC_IO_NOWAIT = 1u << 1,	/* REQ_NOWAIT: never hold */
};

/*
 * A write: where it lands (sectors 0: cannot merge), its size and how it may
 * be held; as a queue head for wtc_dispatch(), also when it was held (0:
 * never ages) and whether it is deferred rather than a sleeping submitter.
 */
struct wtc_io {
	u64 sector;
	unsigned int sectors;
	unsigned int bytes;
	unsigned int mode;		/* enum wtc_io_mode */
	u64 since_ns;
	bool deferred;
};

/* Which options were given explicitly, so the table line repeats them. */
enum wtc_opt {
	WTC_O_ENABLE,
	WTC_O_WB_PERCENT,
	WTC_O_DEPTH,
	WTC_O_WC_POLICY,
	WTC_O_CACHE_DELAY,
	WTC_O_LAT,
	WTC_O_LAT_PCT,
	WTC_O_PUSH_BACK,
	WTC_O_BACKLOG_KB,
	WTC_O_BACKLOG_MS,
	WTC_NR_OPTS
};

/* Every option is an unsigned int: the option table in wbt_core.c says how. */
struct wtc_config {
	unsigned int enabled;		/* 0 or 1 */
	unsigned int wb_percent;	/* % of the derived depths */
	unsigned int depth;		/* fixed max_depth, 0 = auto */
	unsigned int wc_policy;		/* enum wtc_wc_policy */
	unsigned int cache_delay_usec;
	unsigned int lat_usec;		/* read latency target, 0 = off */
	unsigned int lat_pct;		/* 0: window minimum, else percentile */
	unsigned int push_back;		/* 1: submitters may wait in ->map() */
	unsigned int backlog_kb;	/* bound on deferred bytes; 0: defer none */
	unsigned int backlog_ms;	/* age at which a held write is old */
	unsigned int set_mask;		/* 1 << enum wtc_opt */
};

/* The verdict on a latency window, as upstream's latency_exceeded(). */
enum wtc_lat {
	WTC_LAT_NONE,			/* no window judged yet */
	WTC_LAT_OK,
	WTC_LAT_UNKNOWN,		/* no signal */
	WTC_LAT_UNKNOWN_WRITES,		/* only writes: back to step 0 */
	WTC_LAT_EXCEEDED,
};

/* Samples of the running window. */
struct wtc_window {
	unsigned int nr_read;
	unsigned int nr_write;
	u64 read_sum_ns;
	u64 read_min_ns;
	u64 read_max_ns;
	u32 hist[WTC_HIST_BUCKETS];	/* read latency, log scale */
};

/* What the lock-free side leaves behind, folded by wtc_fold(). */
struct wtc_shard {
	u64 kind[WTC_NR_KINDS];		/* bios seen per kind */
	u64 merged;			/* writes joined by wtc_join() */
	struct wtc_window win;		/* read latencies, write completions */
};

/* Summary of the last finished window. */
struct wtc_win_result {
	unsigned int nr_read;
	unsigned int nr_write;
	u64 min_ns;
	u64 mean_ns;
	u64 p50_ns;
	u64 p99_ns;
	u64 metric_ns;			/* what was compared with the target */
	enum wtc_lat verdict;
};

struct wtc_stats {
	u64 kind[WTC_NR_KINDS];		/* bios seen per kind */
	u64 throttled[WTC_NR_QUEUES];	/* bios that had to wait */
	u64 held_ns;			/* total time bios waited */
	u64 held_max_ns;		/* longest wait */
	u64 merged;			/* bios that joined a group */
	u64 windows;			/* latency windows evaluated */
	u64 exceeded;			/* of which missed the target */
	u64 step_changes;
	unsigned int hwm[WTC_NR_QUEUES];	/* most in flight at once */
	u64 slept;			/* writes whose submitter waited */
	u64 deferred;			/* writes the target held */
	u64 deferred_max_ns;		/* longest a deferred write was held */
	u64 deferred_bytes_max;		/* largest deferred backlog */
	u64 aged;			/* held writes let go for their age */
	u64 promoted;			/* ... for a sync write overtaking them */
	u64 overflow;			/* passed: the backlog was full */
	u64 again;			/* REQ_NOWAIT writes refused */
	u64 dirty_waits;		/* tracked writes seeing a dirtier wait */
};

/* The lower device, as the glue last saw it (wtc_set_device()). */
struct wtc_device {
	unsigned int queue_depth;
	bool wc;			/* volatile write cache */
	unsigned int max_merge_sectors;	/* largest lower request */
	bool nonrot;
};

/*
 * What may be in flight: derived by wtc_update_limits() from the device,
 * the options and the scale step, which only the controller moves. (*):
 * also read without the lock.
 */
struct wtc_limits {
	int scale_step;
	bool scaled_max;
	unsigned int step_depth;	/* max_depth of the step, unscaled */
	unsigned int max_depth;
	unsigned int wb_normal;
	unsigned int wb_background;
	bool fine_clock;		/* (*) wtc_fine_clock() */
};

/* What is in flight and held now; (*): also without the lock. */
struct wtc_acct {
	bool holding;			/* false while suspending */
	unsigned int inflight[WTC_NR_COUNTERS];
	unsigned int q_inflight[WTC_NR_QUEUES];
	unsigned int queued[WTC_NR_QUEUES];	/* sleeping + deferred */
	unsigned int ctr_queued[WTC_NR_COUNTERS];	/* their sum (*) */
	unsigned int deferred[WTC_NR_QUEUES];
	u64 deferred_bytes;
	bool open[WTC_NR_COUNTERS];	/* gate of the gated queues */
	bool promo_wait[WTC_NR_COUNTERS];	/* a promoted head waits for max */
	u64 last_other_ns;		/* last read issue or completion (*) */
	u64 last_sync_ns;		/* last sync write mapped */
	u64 last_gated_ns;		/* last gated dispatch (delay policy) */
	unsigned int overtakes;		/* sync writes past held gated ones */
	unsigned int flushes;		/* cache flushes in flight */

	/*
	 * Merge groups: bios per group in flight (*), each group's queue,
	 * free ids, and per queue the open group as one word (*): group,
	 * sectors so far, the sector it ends at; 0 = none (wbt_core.c).
	 */
	wtc_atomic_t grp_refs[WTC_NR_GROUPS];
	u8 grp_q[WTC_NR_GROUPS];
	u16 grp_free[WTC_NR_GROUPS];
	unsigned int grp_nfree;
	u64 cursor[WTC_NR_QUEUES];
};

/* The latency controller's memory; (*): also without the lock. */
struct wtc_control {
	u64 lat_target_ns;		/* 0: no self-tuning */
	u64 cur_win_ns;			/* (*) */
	u64 read_issue_ns;		/* watched read's issue, 0 = none (*) */
	u64 down_ns;			/* last step up on a miss, 0 = none */
	struct wtc_window win;
	struct wtc_win_result last;
	unsigned int unknown_cnt;
	int bad_step;			/* step that missed after a raise */
	unsigned int probe_backoff;	/* good windows needed to re-enter it */
	unsigned int ok_run;		/* consecutive good windows */
	bool raised;			/* the last window raised the depth */
	unsigned int probing;		/* windows left of a try of more depth */
	unsigned int probe_writes;	/* writes of the windows before it */
	u64 probe_ns;			/* ... in this long */
	unsigned int probe_acc;		/* writes of its windows so far */
	u64 probe_acc_ns;		/* ... in this long */
	unsigned int probe_depth;	/* max_depth before it */
	unsigned int waited;		/* 1 << queue: a write waited this window */
	unsigned int wprobe_backoff;	/* windows to wait after a miss */
	unsigned int wprobe_wait;	/* windows left to wait */
	unsigned int wprobe_prev;	/* writes of the last window */
	u64 wprobe_prev_ns;		/* ... in this long */
	u64 win_end_ns;			/* when the last window ended, 0: none */
	u64 win_ns;			/* how long the window judged lasted */
	unsigned int wprobe_run;	/* windows in a row writes waited */
	int wprobe_ok;			/* deepest step a try found to pay */
	unsigned int wprobe_hold;	/* windows since it found a step */
};

/*
 * One throttled device: what the user set, what the device is, what may
 * be in flight (the controller moves these), what is, and the controller.
 * (*) fields are read or written with WTC_READ/WRITE_ONCE() without the
 * lock.
 */
struct wtc_core {
	struct wtc_config cfg;
	struct wtc_device dev;
	struct wtc_limits lim;
	struct wtc_acct acct;
	struct wtc_control ctl;
	struct wtc_stats stats;
};

/* Per-call context the glue samples: time and "a dirtier is throttled". */
struct wtc_now {
	u64 ns;
	bool dirty_wait;
};

/* What a bio is (its WTC_F_* flags); inline: every bio asks. */
static inline enum wtc_kind wtc_classify(unsigned int f)
{
	if (f & WTC_F_READ)
		return WTC_K_READ;
	if (f & WTC_F_DISCARD)
		return WTC_K_DISCARD;
	if (!(f & WTC_F_WRITE))
		return WTC_K_OTHER;
	if ((f & WTC_F_PREFLUSH) && (f & WTC_F_EMPTY))
		return WTC_K_FLUSH;
	if (f & (WTC_F_SWAP | WTC_F_RECLAIMER))
		return WTC_K_RECLAIM;
	if ((f & (WTC_F_SYNC | WTC_F_IDLE)) == (WTC_F_SYNC | WTC_F_IDLE))
		return WTC_K_DIRECT;
	if (f & (WTC_F_SYNC | WTC_F_META | WTC_F_PRIO | WTC_F_FUA))
		return WTC_K_SYNC;
	if (f & WTC_F_BACKGROUND)
		return WTC_K_BG;
	return WTC_K_NORMAL;
}

static inline enum wtc_queue wtc_kind_queue(enum wtc_kind kind)
{
	switch (kind) {
	case WTC_K_RECLAIM:
		return WTC_Q_RECLAIM;
	case WTC_K_SYNC:
		return WTC_Q_SYNC;
	case WTC_K_NORMAL:
		return WTC_Q_NORMAL;
	case WTC_K_BG:
		return WTC_Q_BG;
	case WTC_K_DISCARD:
		return WTC_Q_DISCARD;
	default:
		return WTC_Q_NONE;
	}
}

void wtc_config_default(struct wtc_config *cfg);
int wtc_config_set(struct wtc_config *cfg, const char *key, const char *val,
		   const char **err);
int wtc_config_format(const struct wtc_config *cfg, char *buf, size_t len);
unsigned int wtc_config_nr_args(const struct wtc_config *cfg);
bool wtc_config_describe(unsigned int i, const char **name, const char **err);
const char *wtc_config_help(unsigned int i);
const char *wtc_config_name(const char *key);
int wtc_config_doc(unsigned int i, char *buf, size_t len);

void wtc_init(struct wtc_core *c, const struct wtc_config *cfg);
void wtc_set_config(struct wtc_core *c, const struct wtc_config *cfg);
bool wtc_set_device(struct wtc_core *c, unsigned int queue_depth, bool wc,
		    unsigned int max_merge_sectors, bool nonrot);
void wtc_set_holding(struct wtc_core *c, bool holding);
void wtc_update_limits(struct wtc_core *c);

unsigned int wtc_limit(const struct wtc_core *c, enum wtc_queue q,
		       const struct wtc_now *now);
u64 wtc_pace_ns(const struct wtc_core *c);
bool wtc_counts_flushes(const struct wtc_core *c);
void wtc_flush_issue(struct wtc_core *c);
bool wtc_flush_done(struct wtc_core *c);
bool wtc_fine_clock(const struct wtc_core *c);

int wtc_map(struct wtc_core *c, enum wtc_kind kind, const struct wtc_io *io,
	    const struct wtc_now *now);
int wtc_dispatch(struct wtc_core *c, const struct wtc_now *now,
		 const struct wtc_io *heads, unsigned int *grp, u64 *wait_ns);
bool wtc_done(struct wtc_core *c, enum wtc_kind kind, unsigned int grp,
	      const struct wtc_now *now);
bool wtc_join(struct wtc_core *c, enum wtc_queue q, const struct wtc_io *io,
	      unsigned int *grp);
bool wtc_done_last(struct wtc_core *c, enum wtc_kind kind, unsigned int grp,
		   const struct wtc_now *now);
void wtc_note_held(struct wtc_core *c, u64 held_ns, bool deferred);

/*
 * Lock-free: a write that wtc_map(), wtc_join() or wtc_dispatch() let go,
 * of group grp, completed. True if that was the last bio of its request:
 * then call wtc_done_last() under the lock. Inline: most writeback bios
 * complete here and nowhere else.
 */
static inline bool wtc_put(struct wtc_core *c, unsigned int grp)
{
	if (grp == WTC_NO_GROUP)
		return true;
	if (grp >= WTC_NR_GROUPS)
		return false;	/* not ours: never release a slot twice */
	return !wtc_atomic_dec_return(&c->acct.grp_refs[grp]);
}

void wtc_sample(struct wtc_core *c, enum wtc_kind kind, u64 lat_ns);
bool wtc_read_issue(struct wtc_core *c, const struct wtc_now *now);
void wtc_read_done(struct wtc_core *c);
void wtc_note_read(struct wtc_core *c, u64 ns);
u64 wtc_window_ns(const struct wtc_core *c);
int wtc_step(const struct wtc_core *c);
const struct wtc_config *wtc_get_config(const struct wtc_core *c);
void wtc_shard_sample(struct wtc_shard *s, enum wtc_kind kind, u64 lat_ns);
void wtc_fold(struct wtc_core *c, struct wtc_shard *s);
bool wtc_sample_read(const struct wtc_shard *s, unsigned int seq);
bool wtc_scaling(const struct wtc_core *c);
bool wtc_window(struct wtc_core *c, const struct wtc_now *now);
u64 wtc_hist_value(unsigned int bucket);
unsigned int wtc_hist_bucket(u64 lat_ns);
bool wtc_idle(const struct wtc_core *c);
bool wtc_throttling(const struct wtc_core *c);
bool wtc_overtook(const struct wtc_core *c, enum wtc_queue q);
bool wtc_counter_idle(const struct wtc_core *c, enum wtc_queue q);

const char *wtc_kind_name(enum wtc_kind kind);
const char *wtc_queue_name(enum wtc_queue q);
const char *wtc_wc_policy_name(enum wtc_wc_policy p);
enum wtc_wc_policy wtc_wc_policy(const struct wtc_core *c);
const char *wtc_lat_name(enum wtc_lat v);
int wtc_format_status(const struct wtc_core *c, u64 oldest_ns, char *buf,
		      size_t len);

#endif /* WTC_CORE_H */
