/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * wbt_core: the writeback throttling logic of dm-wbthrottle, free of kernel
 * headers so that it is unit-tested in user space.
 *
 * Every bio is sorted into a kind (wbt_classify). Reads, O_DIRECT writes and
 * flushes are never held. Tracked writes go to one of five queues, strongest
 * first: reclaim, sync, normal, background, discard. Reclaim, discard and
 * the three writeback queues each share one in-flight counter; a queue may
 * add to its counter only while the counter is below the queue's limit:
 *
 *	reclaim, sync			max_depth
 *	any writeback, dirtier waiting	max_depth
 *	background, or reads recently	wb_background
 *	normal				wb_normal
 *	discard				wb_background
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
 *
 * Self-tuning (depth auto, a latency target): per window (100 ms, shorter
 * as the step grows) the read latencies are summarised; if the minimum (or
 * the lat_pct percentile) is above the target, or a read has been out for
 * longer than the window, the step goes up (less depth); if reads meet the
 * target, or only writes are running, it goes down (more depth); with no
 * signal for 5 windows it drifts back to 0. Unlike upstream, after the
 * depth was raised into a step that then missed, raising into that step
 * again waits for a run of good windows that doubles each time (4..64):
 * a steady load settles instead of oscillating between two steps.
 *
 * Push-back: a tracked write that may not go waits in its submitter when
 * the glue says the submitter may sleep (WBT_WAIT); only otherwise is it
 * deferred, held by the target (WBT_HOLD). Sleeping and deferred writes
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
 * would wait is refused (WBT_AGAIN): its submitter retries where it may
 * block.
 *
 * The caller holds one lock around every call, except on the lock-free
 * side: bios that are never held (reads, O_DIRECT writes, flushes) must
 * cost what they cost in dm-linear. They are counted in per-CPU counters
 * and their latencies sampled into a shard (one per CPU in the kernel,
 * under a lock of that CPU's own), both folded into the core, under its
 * lock, when a window ends and for status (wbt_fold()). While a CPU's
 * shard has fewer than WBT_SAMPLE_ALL reads in the window, every read is
 * timed; past that, one in WBT_SAMPLE_EVERY (wbt_sample_read()): a busy
 * window's minimum and percentiles then come from a subsample of at least
 * WBT_SAMPLE_ALL reads per CPU, a quiet window's from every read. The two
 * stamps reads share, "reads recently" and the read whose age is watched,
 * are written without the lock (wbt_note_read(), wbt_read_issue(),
 * wbt_read_done()); the first is written at most once per WBT_STAMP_NSEC,
 * and the glue gives both the tick's time, so "recently" may end up to a
 * tick (4 ms at HZ=250; upstream counts in jiffies too) early. Nothing
 * here sleeps.
 */
#ifndef WBT_CORE_H
#define WBT_CORE_H

#include "wbt_shim.h"

/* What a bio is, for counting and for choosing its queue. */
enum wbt_kind {
	WBT_K_READ,
	WBT_K_BG,		/* REQ_BACKGROUND writeback */
	WBT_K_NORMAL,		/* other buffered writes */
	WBT_K_SYNC,		/* WB_SYNC_ALL / fsync, META, PRIO, FUA */
	WBT_K_RECLAIM,		/* swap, or submitted by kswapd */
	WBT_K_DIRECT,		/* REQ_SYNC|REQ_IDLE: O_DIRECT, journals */
	WBT_K_DISCARD,
	WBT_K_FLUSH,		/* empty PREFLUSH */
	WBT_K_OTHER,		/* write zeroes, secure erase, ... */
	WBT_NR_KINDS
};

/* Hold queues, strongest first. */
enum wbt_queue {
	WBT_Q_RECLAIM,
	WBT_Q_SYNC,
	WBT_Q_NORMAL,
	WBT_Q_BG,
	WBT_Q_DISCARD,
	WBT_NR_QUEUES,
	WBT_Q_NONE = WBT_NR_QUEUES,	/* not tracked: passes at once */
};

/* In-flight counters shared by queues. */
enum wbt_counter {
	WBT_C_RECLAIM,
	WBT_C_WB,
	WBT_C_DISCARD,
	WBT_NR_COUNTERS
};

/* Request flags, translated from REQ_* by the glue. */
enum wbt_flag {
	WBT_F_WRITE	= 1u << 0,	/* REQ_OP_WRITE */
	WBT_F_READ	= 1u << 1,	/* REQ_OP_READ */
	WBT_F_DISCARD	= 1u << 2,	/* REQ_OP_DISCARD */
	WBT_F_SYNC	= 1u << 3,
	WBT_F_IDLE	= 1u << 4,
	WBT_F_META	= 1u << 5,
	WBT_F_PRIO	= 1u << 6,
	WBT_F_FUA	= 1u << 7,
	WBT_F_PREFLUSH	= 1u << 8,
	WBT_F_BACKGROUND = 1u << 9,
	WBT_F_SWAP	= 1u << 10,
	WBT_F_RECLAIMER	= 1u << 11,	/* submitted by kswapd */
	WBT_F_EMPTY	= 1u << 12,	/* no data */
};

enum wbt_wc_policy {
	WBT_WC_DRAIN,		/* write cache: let go only when drained */
	WBT_WC_DELAY,		/* write cache: one bio per cache_delay */
	WBT_WC_OFF,		/* ignore the write cache */
	WBT_WC_AUTO,		/* delay if rotational, else drain */
	WBT_NR_WC_POLICIES
};

enum {
	WBT_DEF_DEPTH = 16,			/* max_depth at step 0 */
	WBT_CLOSE_IO_NSEC = 100 * 1000 * 1000,	/* "reads recently" */
	WBT_STAMP_NSEC = 1000 * 1000,		/* its stamp's granularity */
	WBT_SAMPLE_ALL = 16,			/* reads timed per CPU/window */
	WBT_SAMPLE_EVERY = 8,			/* then one in this many */
	WBT_DEF_CACHE_DELAY_USEC = 10000,
	WBT_DEF_WB_PERCENT = 100,
	WBT_MAX_WB_PERCENT = 1000,
	WBT_MAX_DEPTH = 65536,
	WBT_MAX_CACHE_DELAY_USEC = 1000000,
	WBT_WINDOW_NSEC = 100 * 1000 * 1000,	/* base latency window */
	WBT_MIN_WRITE_SAMPLES = 3,		/* for a valid window */
	WBT_UNKNOWN_BUMP = 5,			/* windows before drifting */
	WBT_DEF_LAT_ROT_USEC = 75000,
	WBT_DEF_LAT_NONROT_USEC = 2000,
	WBT_MAX_LAT_USEC = 10000000,
	WBT_PROBE_BACKOFF_MIN = 4,		/* good windows before re-probing */
	WBT_PROBE_BACKOFF_MAX = 64,
	WBT_MAX_PACE_STEP = 12,			/* delay policy: gap x64 at most */
	WBT_HIST_SUB = 4,			/* histogram: 4 buckets per 2x */
	WBT_HIST_BUCKETS = 30 * WBT_HIST_SUB,	/* 1 us .. ~17 min */
	WBT_NR_GROUPS = 1024,			/* merge groups in flight */
	WBT_NO_GROUP = 0xffff,			/* bio accounted on its own */
	WBT_DEF_BACKLOG_KB = 16384,		/* deferred bytes bound */
	WBT_MAX_BACKLOG_KB = 4 * 1024 * 1024,
	WBT_DEF_BACKLOG_MS = 500,		/* deferred age bound */
	WBT_MAX_BACKLOG_MS = 60000,
};

/* lat_us "auto": a value no target in range can have. */
#define WBT_LAT_AUTO	UINT_MAX

/* What wbt_map() says of a write that may not go now (a group otherwise). */
enum wbt_verdict {
	WBT_AGAIN = -3,		/* refuse it (REQ_NOWAIT): retry elsewhere */
	WBT_WAIT = -2,		/* its submitter waits */
	WBT_HOLD = -1,		/* the caller defers it */
};

/* How the submitter of a write may be held (struct wbt_io.mode). */
enum wbt_io_mode {
	WBT_IO_DEFER = 0,		/* cannot sleep: the target holds it */
	WBT_IO_SLEEP = 1u << 0,		/* the submitter may sleep */
	WBT_IO_NOWAIT = 1u << 1,	/* REQ_NOWAIT: never hold */
};

/*
 * A write: where it lands (sectors 0: cannot merge), its size and how it may
 * be held; as a queue head for wbt_dispatch(), also when it was held (0:
 * never ages) and whether it is deferred rather than a sleeping submitter.
 */
struct wbt_io {
	u64 sector;
	unsigned int sectors;
	unsigned int bytes;
	unsigned int mode;		/* enum wbt_io_mode */
	u64 since_ns;
	bool deferred;
};

/* Which options were given explicitly, so the table line repeats them. */
enum wbt_opt {
	WBT_O_ENABLE,
	WBT_O_WB_PERCENT,
	WBT_O_DEPTH,
	WBT_O_WC_POLICY,
	WBT_O_CACHE_DELAY,
	WBT_O_LAT,
	WBT_O_LAT_PCT,
	WBT_O_PUSH_BACK,
	WBT_O_BACKLOG_KB,
	WBT_O_BACKLOG_MS,
	WBT_NR_OPTS
};

/* Every option is an unsigned int: the option table in wbt_core.c says how. */
struct wbt_config {
	unsigned int enabled;		/* 0 or 1 */
	unsigned int wb_percent;	/* % of the derived depths */
	unsigned int depth;		/* fixed max_depth, 0 = auto */
	unsigned int wc_policy;		/* enum wbt_wc_policy */
	unsigned int cache_delay_usec;
	unsigned int lat_usec;		/* read latency target, 0 = off */
	unsigned int lat_pct;		/* 0: window minimum, else percentile */
	unsigned int push_back;		/* 1: submitters may wait in ->map() */
	unsigned int backlog_kb;	/* bound on deferred bytes; 0: defer none */
	unsigned int backlog_ms;	/* age at which a held write is old */
	unsigned int set_mask;		/* 1 << enum wbt_opt */
};

/* The verdict on a latency window, as upstream's latency_exceeded(). */
enum wbt_lat {
	WBT_LAT_OK = 1,
	WBT_LAT_UNKNOWN,		/* no signal */
	WBT_LAT_UNKNOWN_WRITES,		/* only writes: room to go deeper */
	WBT_LAT_EXCEEDED,
};

/* Samples of the running window. */
struct wbt_window {
	unsigned int nr_read;
	unsigned int nr_write;
	u64 read_sum_ns;
	u64 read_min_ns;
	u64 read_max_ns;
	u32 hist[WBT_HIST_BUCKETS];	/* read latency, log scale */
};

/* What bios that are never held leave behind, folded by wbt_fold(). */
struct wbt_shard {
	u64 kind[WBT_NR_KINDS];		/* bios seen per kind */
	struct wbt_window win;		/* read latencies, write completions */
};

/* Summary of the last finished window. */
struct wbt_win_result {
	unsigned int nr_read;
	unsigned int nr_write;
	u64 min_ns;
	u64 mean_ns;
	u64 p50_ns;
	u64 p99_ns;
	u64 metric_ns;			/* what was compared with the target */
	enum wbt_lat verdict;
};

struct wbt_stats {
	u64 kind[WBT_NR_KINDS];		/* bios seen per kind */
	u64 throttled[WBT_NR_QUEUES];	/* bios that had to wait */
	u64 held_ns;			/* total time bios waited */
	u64 held_max_ns;		/* longest wait */
	u64 merged;			/* bios that joined a group */
	u64 windows;			/* latency windows evaluated */
	u64 exceeded;			/* of which missed the target */
	u64 step_changes;
	unsigned int hwm[WBT_NR_QUEUES];	/* most in flight at once */
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

/* (*): also read or written without the lock, WBT_READ/WRITE_ONCE(). */
struct wbt_core {
	struct wbt_config cfg;
	bool holding;			/* false while suspending */

	/* the lower device */
	unsigned int queue_depth;
	bool wc;
	unsigned int max_merge_sectors;	/* largest lower request */
	bool nonrot;

	/* limits, derived by wbt_update_limits() */
	int scale_step;
	bool scaled_max;
	unsigned int step_depth;	/* max_depth of the step, unscaled */
	unsigned int max_depth;
	unsigned int wb_normal;
	unsigned int wb_background;

	unsigned int inflight[WBT_NR_COUNTERS];
	unsigned int q_inflight[WBT_NR_QUEUES];
	unsigned int queued[WBT_NR_QUEUES];	/* sleeping + deferred */
	unsigned int deferred[WBT_NR_QUEUES];
	u64 deferred_bytes;
	bool open[WBT_NR_COUNTERS];	/* gate of the gated queues */
	bool promo_wait[WBT_NR_COUNTERS];	/* a promoted head waits for max */
	u64 last_other_ns;		/* last read issue or completion (*) */
	u64 last_gated_ns;		/* last gated dispatch (delay policy) */
	unsigned int overtakes;		/* sync writes past held gated ones */

	/* merge groups: bios per group in flight, free ids, open group */
	u16 grp_refs[WBT_NR_GROUPS];
	u16 grp_free[WBT_NR_GROUPS];
	unsigned int grp_nfree;
	unsigned int open_grp[WBT_NR_QUEUES];
	u64 open_end[WBT_NR_QUEUES];
	unsigned int open_sectors[WBT_NR_QUEUES];

	/* latency control */
	u64 lat_target_ns;		/* 0: no self-tuning */
	u64 cur_win_ns;			/* (*) */
	u64 read_issue_ns;		/* watched read's issue, 0 = none (*) */
	u64 down_ns;			/* last step up on a miss, 0 = none */
	struct wbt_window win;
	struct wbt_win_result last;
	unsigned int unknown_cnt;
	int bad_step;			/* step that missed after a raise */
	unsigned int probe_backoff;	/* good windows needed to re-enter it */
	unsigned int ok_run;		/* consecutive good windows */
	bool raised;			/* the last window raised the depth */

	struct wbt_stats stats;
};

/* Per-call context the glue samples: time and "a dirtier is throttled". */
struct wbt_now {
	u64 ns;
	bool dirty_wait;
};

void wbt_config_default(struct wbt_config *cfg);
int wbt_config_set(struct wbt_config *cfg, const char *key, const char *val,
		   const char **err);
int wbt_config_format(const struct wbt_config *cfg, char *buf, size_t len);
unsigned int wbt_config_nr_args(const struct wbt_config *cfg);
bool wbt_config_describe(unsigned int i, const char **name, const char **err);
int wbt_config_doc(unsigned int i, char *buf, size_t len);

void wbt_init(struct wbt_core *c, const struct wbt_config *cfg);
void wbt_set_config(struct wbt_core *c, const struct wbt_config *cfg);
bool wbt_set_device(struct wbt_core *c, unsigned int queue_depth, bool wc,
		    unsigned int max_merge_sectors, bool nonrot);
void wbt_set_holding(struct wbt_core *c, bool holding);
void wbt_update_limits(struct wbt_core *c);

enum wbt_kind wbt_classify(unsigned int flags);
enum wbt_queue wbt_kind_queue(enum wbt_kind kind);
unsigned int wbt_limit(const struct wbt_core *c, enum wbt_queue q,
		       const struct wbt_now *now);
u64 wbt_pace_ns(const struct wbt_core *c);

int wbt_map(struct wbt_core *c, enum wbt_kind kind, const struct wbt_io *io,
	    const struct wbt_now *now);
int wbt_dispatch(struct wbt_core *c, const struct wbt_now *now,
		 const struct wbt_io *heads, unsigned int *grp, u64 *wait_ns);
bool wbt_done(struct wbt_core *c, enum wbt_kind kind, unsigned int grp,
	      const struct wbt_now *now);
void wbt_note_held(struct wbt_core *c, u64 held_ns, bool deferred);
void wbt_sample(struct wbt_core *c, enum wbt_kind kind, u64 lat_ns);
bool wbt_read_issue(struct wbt_core *c, const struct wbt_now *now);
void wbt_read_done(struct wbt_core *c);
void wbt_note_read(struct wbt_core *c, u64 ns);
u64 wbt_window_ns(const struct wbt_core *c);
void wbt_shard_map(struct wbt_shard *s, enum wbt_kind kind);
void wbt_shard_sample(struct wbt_shard *s, enum wbt_kind kind, u64 lat_ns);
void wbt_fold(struct wbt_core *c, struct wbt_shard *s);
bool wbt_sample_read(const struct wbt_shard *s, unsigned int seq);
bool wbt_scaling(const struct wbt_core *c);
bool wbt_window(struct wbt_core *c, const struct wbt_now *now);
u64 wbt_hist_value(unsigned int bucket);
unsigned int wbt_hist_bucket(u64 lat_ns);
bool wbt_idle(const struct wbt_core *c);
bool wbt_throttling(const struct wbt_core *c);
bool wbt_overtook(const struct wbt_core *c, enum wbt_queue q);
bool wbt_counter_idle(const struct wbt_core *c, enum wbt_queue q);

const char *wbt_kind_name(enum wbt_kind kind);
const char *wbt_queue_name(enum wbt_queue q);
const char *wbt_wc_policy_name(enum wbt_wc_policy p);
enum wbt_wc_policy wbt_wc_policy(const struct wbt_core *c);
const char *wbt_lat_name(enum wbt_lat v);
int wbt_format_status(const struct wbt_core *c, u64 oldest_ns, char *buf,
		      size_t len);

#endif /* WBT_CORE_H */
