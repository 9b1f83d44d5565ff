// SPDX-License-Identifier: GPL-2.0-only
/*
 * dm-wbthrottle: a device-mapper target that keeps buffered writeback from
 * burying reads, fsync and everything else on the disk below it, in the
 * manner of block/blk-wbt.c. The throttling logic is in wbt_core.c; this
 * file is the glue to device-mapper.
 *
 * Table line:
 *	<start> <len> wbthrottle <dev_path> [<#opt_args> <key> <value>...]
 * Keys (also `dmsetup message <dev> 0 <key> <value>`): enable 0|1,
 * wb_percent 1..1000, depth auto|N, wc_policy auto|drain|delay|off,
 * cache_delay_us N, lat_us auto|N, lat_pct N, push_back 0|1,
 * backlog_kb N, backlog_ms N. See README.md.
 *
 * A tracked write that may not go yet makes its submitter wait in ->map(),
 * as blk-wbt's wbt_wait() does, whenever that is safe: nothing of this task
 * is parked on current->bio_list (those bios could be the very completions
 * it waits for; md's raid10 wait_barrier() uses the same rule), it is not
 * in reclaim, and the bio is not REQ_NOWAIT (refused with BLK_STS_AGAIN).
 * Otherwise the bio is deferred: held in the same per-queue FIFO, in a
 * backlog bounded in bytes and age, and issued by a WQ_MEM_RECLAIM worker.
 * Completions, the pace timer and the window timer hand free slots to the
 * heads of the FIFOs: a sleeper is woken with its slot, one by one.
 * presuspend, `enable 0` and remove let every sleeper and held bio go.
 *
 * Bios that are never held (reads, O_DIRECT writes, flushes) take no shared
 * lock: they are counted per CPU and a sample of reads is timed into a
 * per-CPU shard, folded into the core when a latency window ends. The lower
 * device's depth and cache are re-read on every window and on resume, not
 * per bio.
 */
#include <linux/module.h>
#include <linux/device-mapper.h>
#include <linux/bio.h>
#include <linux/blkdev.h>
#include <linux/backing-dev.h>
#include <linux/sched.h>
#include <linux/swap.h>
#include <linux/slab.h>
#include <linux/workqueue.h>
#include <linux/ktime.h>
#include <linux/hrtimer.h>
#include <linux/percpu.h>

#include "wbt_core.h"

#define CREATE_TRACE_POINTS
#include "dm_wbthrottle_trace.h"

#define DM_MSG_PREFIX "wbthrottle"

enum {
	WT_RELEASE_BATCH = 64,		/* held writes let go per lock hold */
	WT_STATUS_LEN = 2048,
};

/* Per CPU: what bios that take no lock leave behind. */
struct wt_pcpu {
	u64 kind[WTC_NR_KINDS];		/* bios seen (this_cpu_inc()) */
	u64 writes_done;		/* writes completed without the lock */
	u64 merged;			/* writes that joined without it */
	u64 memo;			/* the last classification: wt_kind() */
	unsigned int reads;		/* reads seen: which ones to time */
	spinlock_t lock;		/* timed; wt_fold() */
	struct wtc_shard timed;		/* latencies of the timed reads */
};

struct wt_dev {
	struct dm_target *ti;
	struct dm_dev *dev;
	struct backing_dev_info *bdi;	/* of the DM device: dirtier waits */
	dev_t devt;			/* of the DM device, for tracepoints */

	spinlock_t lock;		/* protects core, held[], ready[], more */
	struct wtc_core core;
	struct wt_pcpu __percpu *pcpu;
	u64 kind_folded[WTC_NR_KINDS];	/* sums of pcpu->kind at the last fold */
	u64 writes_folded;		/* ... of pcpu->writes_done */
	u64 merged_folded;		/* ... of pcpu->merged */
	struct wtc_shard fold;		/* what the fold adds to the core */
	struct list_head held[WTC_NR_QUEUES];	/* struct wt_bio, FIFO */
	struct bio_list ready[WTC_NR_QUEUES];	/* deferred, let go */
	bool more;			/* the release batch ran out */

	struct workqueue_struct *wq;
	struct work_struct issue;	/* issues ready[], releases more */
	struct hrtimer pace;		/* the next release: pace or age */
	struct timer_list window;	/* ends latency windows */
	unsigned long dirty_seen;	/* jiffies of the last bdi look */
	unsigned long dirty_sleep;	/* what it found */
	unsigned int max_sectors;	/* of a lower request: wt_split() */
};

/* Per-bio data, in DM's front pad. */
struct wt_bio {
	struct list_head node;		/* in held[] while held */
	struct task_struct *waiter;	/* its sleeping submitter, or NULL */
	u64 start_ns;			/* when ->map() saw it */
	int granted;			/* a sleeper may go on (release/acquire) */
	u16 grp;			/* merge group, from wbt_core */
	u8 kind;			/* enum wtc_kind */
	bool watched;			/* the read whose age is watched */
	bool flush;			/* a flush counted by the core */
	bool refused;			/* failed with AGAIN, never counted */
};

static unsigned int wt_bio_flags(const struct bio *bio)
{
	blk_opf_t opf = bio->bi_opf;
	unsigned int f = 0;

	switch (bio_op(bio)) {
	case REQ_OP_READ:
		return WTC_F_READ;	/* a read is a read (wtc_classify()) */
	case REQ_OP_WRITE:
		f |= WTC_F_WRITE;
		break;
	case REQ_OP_DISCARD:
		f |= WTC_F_DISCARD;
		break;
	default:
		break;
	}
	f |= opf & REQ_SYNC ? WTC_F_SYNC : 0;
	f |= opf & REQ_IDLE ? WTC_F_IDLE : 0;
	f |= opf & REQ_META ? WTC_F_META : 0;
	f |= opf & REQ_PRIO ? WTC_F_PRIO : 0;
	f |= opf & REQ_FUA ? WTC_F_FUA : 0;
	f |= opf & REQ_PREFLUSH ? WTC_F_PREFLUSH : 0;
	f |= opf & REQ_BACKGROUND ? WTC_F_BACKGROUND : 0;
	f |= opf & REQ_SWAP ? WTC_F_SWAP : 0;
	/* Not PF_MEMALLOC: xfsaild runs with it and is not reclaim. */
	f |= current_is_kswapd() ? WTC_F_RECLAIMER : 0;
	f |= bio_sectors(bio) ? 0 : WTC_F_EMPTY;
	return f;
}

/*
 * What a bio is. Writeback comes in long runs of bios alike, so the last
 * answer for a write on this CPU is kept with what it depends on (the
 * bio's opf, "no data", kswapd) in one word, read and written whole
 * (this_cpu_*(): the submitter may move to another CPU in between), with
 * a bit that says it is there at all.
 */
static enum wtc_kind wt_kind(struct wt_dev *wt, const struct bio *bio)
{
	u64 key, memo;
	enum wtc_kind kind;

	BUILD_BUG_ON(WTC_NR_KINDS > 0xff);
	if (bio_op(bio) == REQ_OP_READ)
		return wtc_classify(WTC_F_READ);	/* a read is a read */
	key = (__force u64)bio->bi_opf << 3 | current_is_kswapd() << 2 |
	      !bio_sectors(bio) << 1 | 1;
	memo = this_cpu_read(wt->pcpu->memo);
	if (memo >> 8 == key)
		return memo & 0xff;
	kind = wtc_classify(wt_bio_flags(bio));
	this_cpu_write(wt->pcpu->memo, key << 8 | kind);
	return kind;
}

/* A dirtier slept in balance_dirty_pages() within the last second. */
static bool wt_dirty_wait(struct wt_dev *wt)
{
	unsigned long j = jiffies;

	/* On 6.1 this walks the bdi's wbs: once a jiffy is enough. */
	if (READ_ONCE(wt->dirty_seen) != j) {
		WRITE_ONCE(wt->dirty_sleep, wt_bdi_last_dirty_sleep(wt->bdi));
		WRITE_ONCE(wt->dirty_seen, j);
	}
	return time_before(j, READ_ONCE(wt->dirty_sleep) + HZ);
}

static void wt_now(struct wt_dev *wt, struct wtc_now *now)
{
	now->ns = ktime_get_ns();
	now->dirty_wait = wt_dirty_wait(wt);
}

/*
 * The time a tracked write's map and completion decide with: the tick's,
 * which costs a load, unless the write-cache pace applies. What is held
 * and what releases it use the fine clock (wt_now()).
 */
static void wt_now_tracked(struct wt_dev *wt, struct wtc_now *now)
{
	now->ns = wtc_fine_clock(&wt->core) ? ktime_get_ns() :
		  ktime_get_coarse_ns();
	now->dirty_wait = wt_dirty_wait(wt);
}

/*
 * The lower device's depth and cache can change at run time: re-read on
 * every window and on resume. Lock held.
 */
static void wt_refresh_device(struct wt_dev *wt)
{
	struct block_device *bdev = wt->dev->bdev;
	struct request_queue *q = bdev_get_queue(bdev);

	lockdep_assert_held(&wt->lock);
	wtc_set_device(&wt->core, blk_queue_depth(q), bdev_write_cache(bdev),
		       queue_max_sectors(q), bdev_nonrot(bdev));
	WRITE_ONCE(wt->max_sectors, queue_max_sectors(q));
}

/*
 * Depth counts requests on the lower device. A write larger than one of
 * its requests becomes several there: split it here where the lower queue
 * will, max_sectors from its start, so that one bio counted is one
 * request; DM submits the rest as a bio of its own. Not DM's max_io_len:
 * that cuts at multiples of it from the start of the device, and where
 * max_sectors is not a multiple of 8 (255, the block layer's default) it
 * splits every 4 KiB write that crosses one, a bio more each time. DM
 * cannot take part of a duplicate (a flush: empty here) or a zoned write
 * (this target takes no host-managed zoned device).
 */
static void wt_split(struct wt_dev *wt, struct bio *bio)
{
	unsigned int max = READ_ONCE(wt->max_sectors);

	if (bio_op(bio) == REQ_OP_WRITE && bio_sectors(bio) > max)
		dm_accept_partial_bio(bio, max);
}

static struct bio *wt_bio(struct wt_bio *pb)
{
	return dm_bio_from_per_bio_data(pb, sizeof(*pb));
}

/*
 * Where a write lands (if the lower queue could merge it with others) and
 * the data it holds (a discard holds none).
 */
static const struct wtc_io *wt_bio_io(struct bio *bio, struct wtc_io *io)
{
	io->sector = bio->bi_iter.bi_sector;
	io->sectors = 0;
	io->bytes = bio_has_data(bio) ? bio->bi_iter.bi_size : 0;
	io->mode = WTC_IO_DEFER;
	io->since_ns = 0;
	io->deferred = false;
	if (bio_op(bio) == REQ_OP_WRITE &&
	    !(bio->bi_opf & (REQ_FUA | REQ_PREFLUSH | REQ_NOMERGE)))
		io->sectors = bio_sectors(bio);
	return io;
}

/*
 * May this submitter wait in ->map()? Not if bios of its own wait on
 * current->bio_list to be issued after we return: they may be what the
 * wait needs (bio_alloc_bioset() and md's wait_barrier() use the same
 * test). Not in reclaim: a task that frees memory must not wait for
 * writeback it may be holding up. Never for REQ_NOWAIT.
 */
static unsigned int wt_hold_mode(const struct bio *bio)
{
	struct bio_list *pending = current->bio_list;

	if (bio->bi_opf & REQ_NOWAIT)
		return WTC_IO_NOWAIT;
	if (current->flags & PF_MEMALLOC)
		return WTC_IO_DEFER;
	if (pending && (!bio_list_empty(&pending[0]) ||
			!bio_list_empty(&pending[1])))
		return WTC_IO_DEFER;
	return WTC_IO_SLEEP;
}

/* Describe the head of held queue q for wtc_dispatch(). Lock held. */
static void wt_peek(struct wt_dev *wt, int q, struct wtc_io *io)
{
	struct wt_bio *pb;

	lockdep_assert_held(&wt->lock);
	pb = list_first_entry_or_null(&wt->held[q], struct wt_bio, node);
	memset(io, 0, sizeof(*io));
	if (!pb)
		return;
	wt_bio_io(wt_bio(pb), io);
	io->since_ns = pb->start_ns;
	io->deferred = !pb->waiter;
}

/* The next release is due in wait_ns (pace or age). Lock held. */
static void wt_arm_pace(struct wt_dev *wt, u64 wait_ns)
{
	ktime_t when = ktime_add_ns(ktime_get(), wait_ns);

	lockdep_assert_held(&wt->lock);
	if (hrtimer_is_queued(&wt->pace) &&
	    !ktime_before(when, hrtimer_get_expires(&wt->pace)))
		return;
	hrtimer_start(&wt->pace, when, HRTIMER_MODE_ABS);
}

/*
 * Held write pb of queue q may go, with merge group grp: wake its sleeping
 * submitter, or pass the deferred bio to the worker. Lock held: a granted
 * sleeper may return and finish at once, so pb is not touched after the
 * grant; its task outlives the lock hold (an RCU read-side section).
 */
static void wt_let_go(struct wt_dev *wt, int q, struct wt_bio *pb,
		      unsigned int grp)
{
	struct task_struct *task = pb->waiter;

	list_del(&pb->node);
	pb->grp = grp;
	if (task) {
		/* Pairs with wt_wait(): the sleeper sees pb->grp once granted. */
		smp_store_release(&pb->granted, 1);
		wake_up_process(task);
		return;
	}
	bio_list_add(&wt->ready[q], wt_bio(pb));
	queue_work(wt->wq, &wt->issue);
}

/* Let go of what may go now, a batch at most; the worker goes on. Lock held. */
static void wt_release(struct wt_dev *wt, const struct wtc_now *now)
{
	struct wtc_io heads[WTC_NR_QUEUES];
	struct wt_bio *pb;
	unsigned int n, grp;
	u64 wait_ns;
	int q;

	lockdep_assert_held(&wt->lock);
	for (q = 0; q < WTC_NR_QUEUES; q++)
		wt_peek(wt, q, &heads[q]);
	for (n = 0; n < WT_RELEASE_BATCH; n++) {
		q = wtc_dispatch(&wt->core, now, heads, &grp, &wait_ns);
		if (q < 0) {
			if (wait_ns)
				wt_arm_pace(wt, wait_ns);
			return;
		}
		pb = list_first_entry_or_null(&wt->held[q], struct wt_bio,
					      node);
		if (WARN_ON_ONCE(!pb))
			return;
		trace_wbthrottle_wait(wt->devt, q, now->ns - pb->start_ns);
		wt_let_go(wt, q, pb, grp);
		wt_peek(wt, q, &heads[q]);
	}
	wt->more = true;
	queue_work(wt->wq, &wt->issue);
}

static void wt_kick(struct wt_dev *wt)
{
	struct wtc_now now;
	unsigned long flags;

	wt_now(wt, &now);
	spin_lock_irqsave(&wt->lock, flags);
	wt_release(wt, &now);
	spin_unlock_irqrestore(&wt->lock, flags);
}

static enum hrtimer_restart wt_pace_fn(struct hrtimer *t)
{
	wt_kick(container_of(t, struct wt_dev, pace));
	return HRTIMER_NORESTART;
}

/* A deferred bio that was let go, strongest queue first. Lock held. */
static struct bio *wt_pop_ready(struct wt_dev *wt)
{
	struct bio *bio;
	int q;

	lockdep_assert_held(&wt->lock);
	for (q = 0; q < WTC_NR_QUEUES; q++) {
		bio = bio_list_pop(&wt->ready[q]);
		if (bio)
			return bio;
	}
	return NULL;
}

/*
 * Issue deferred bios that were let go, one per lock hold so that a sync
 * or reclaim bio let go meanwhile overtakes the background ones.
 */
static void wt_issue_work(struct work_struct *work)
{
	struct wt_dev *wt = container_of(work, struct wt_dev, issue);
	struct blk_plug plug;
	struct wtc_now now;
	unsigned long flags;
	struct bio *bio;

	blk_start_plug(&plug);
	for (;;) {
		wt_now(wt, &now);
		spin_lock_irqsave(&wt->lock, flags);
		if (wt->more) {
			wt->more = false;
			wt_release(wt, &now);
		}
		bio = wt_pop_ready(wt);
		spin_unlock_irqrestore(&wt->lock, flags);
		if (!bio)
			break;
		dm_submit_bio_remap(bio, NULL);
	}
	blk_finish_plug(&plug);
}

/* Sleep until wt_let_go() hands this write its slot. */
static void wt_wait(struct wt_bio *pb)
{
	for (;;) {
		set_current_state(TASK_UNINTERRUPTIBLE);
		/* Pairs with wt_let_go(): pb->grp is set once granted. */
		if (smp_load_acquire(&pb->granted))
			break;
		io_schedule();
	}
	__set_current_state(TASK_RUNNING);
}

/*
 * Move what bios that are never held left on every CPU into the core: the
 * counters are cumulative (a remote CPU cannot reset them safely), so the
 * core gets what they grew since the last fold; the timed reads' shards
 * are emptied. Lock held.
 */
static void wt_fold(struct wt_dev *wt)
{
	struct wtc_shard *d = &wt->fold;
	struct wt_pcpu *pc;
	u64 writes = 0, merged = 0, sum;
	int cpu, k;

	lockdep_assert_held(&wt->lock);
	memset(d, 0, sizeof(*d));
	for_each_possible_cpu(cpu) {
		pc = per_cpu_ptr(wt->pcpu, cpu);
		for (k = 0; k < WTC_NR_KINDS; k++)
			d->kind[k] += READ_ONCE(pc->kind[k]);
		writes += READ_ONCE(pc->writes_done);
		merged += READ_ONCE(pc->merged);
		spin_lock(&pc->lock);
		wtc_fold(&wt->core, &pc->timed);
		spin_unlock(&pc->lock);
	}
	for (k = 0; k < WTC_NR_KINDS; k++) {
		sum = d->kind[k];
		d->kind[k] = sum - wt->kind_folded[k];
		wt->kind_folded[k] = sum;
	}
	d->win.nr_write = writes - wt->writes_folded;
	wt->writes_folded = writes;
	d->merged = merged - wt->merged_folded;
	wt->merged_folded = merged;
	wtc_fold(&wt->core, d);
}

/* A latency window ended: judge it, maybe rescale, start the next one. */
static void wt_window_fn(struct timer_list *t)
{
	struct wt_dev *wt = from_timer(wt, t, window);
	struct wtc_now now;
	unsigned long flags;
	bool again, moved;
	int step;
	u64 win;

	wt_now(wt, &now);
	spin_lock_irqsave(&wt->lock, flags);
	wt_refresh_device(wt);
	wt_fold(wt);
	step = wtc_step(&wt->core);
	again = wtc_window(&wt->core, &now);
	moved = step != wtc_step(&wt->core);
	win = wtc_window_ns(&wt->core);
	trace_wbthrottle_stat(wt->devt, &wt->core);
	if (moved)
		trace_wbthrottle_step(wt->devt, &wt->core);
	spin_unlock_irqrestore(&wt->lock, flags);

	if (again)
		mod_timer(&wt->window, jiffies + max(1UL, nsecs_to_jiffies(win)));
	/* Deeper limits let held writes go. */
	if (moved)
		wt_kick(wt);
}

/* Start windows when I/O shows up (lock-free: mod_timer() serialises). */
static void wt_arm_window(struct wt_dev *wt)
{
	if (!timer_pending(&wt->window))
		mod_timer(&wt->window, jiffies +
			  max(1UL, nsecs_to_jiffies(wtc_window_ns(&wt->core))));
}

static bool wt_holds_any(struct wt_dev *wt)
{
	int q;

	lockdep_assert_held(&wt->lock);
	for (q = 0; q < WTC_NR_QUEUES; q++)
		if (!list_empty(&wt->held[q]) || !bio_list_empty(&wt->ready[q]))
			return true;
	return false;
}

/*
 * Throttling is off (suspend, enable 0): wake every sleeper and issue every
 * deferred bio here and now, until nothing is held.
 */
static void wt_release_all(struct wt_dev *wt)
{
	struct wtc_now now;
	unsigned long flags;
	struct bio *bio;
	bool held;

	do {
		wt_now(wt, &now);
		spin_lock_irqsave(&wt->lock, flags);
		wt_release(wt, &now);
		bio = wt_pop_ready(wt);
		/* Throttling back on (resume, enable 1): the rules apply. */
		held = wt_holds_any(wt) && !wtc_throttling(&wt->core);
		spin_unlock_irqrestore(&wt->lock, flags);
		if (bio)
			dm_submit_bio_remap(bio, NULL);
		cond_resched();
	} while (bio || held);
}

static void wt_set_holding(struct wt_dev *wt, bool holding)
{
	unsigned long flags;

	spin_lock_irqsave(&wt->lock, flags);
	wtc_set_holding(&wt->core, holding);
	spin_unlock_irqrestore(&wt->lock, flags);
}

static bool wt_is_idle(struct wt_dev *wt)
{
	unsigned long flags;
	bool idle;

	spin_lock_irqsave(&wt->lock, flags);
	idle = wtc_idle(&wt->core);
	spin_unlock_irqrestore(&wt->lock, flags);
	return idle;
}

static void wt_destroy(struct wt_dev *wt)
{
	if (wt->wq) {
		/*
		 * DM destroys a table only with no I/O left in it: presuspend
		 * let go of everything held, and suspend (or the last close
		 * before a remove) waited for what was in flight.
		 */
		WARN_ON_ONCE(!wt_is_idle(wt));
		timer_shutdown_sync(&wt->window);
		hrtimer_cancel(&wt->pace);
		cancel_work_sync(&wt->issue);
		destroy_workqueue(wt->wq);
	}
	if (wt->dev)
		dm_put_device(wt->ti, wt->dev);
	free_percpu(wt->pcpu);
	kfree(wt);
}

static int wt_parse_opts(struct dm_arg_set *as, struct wtc_config *cfg,
			 char **error)
{
	static const struct dm_arg group = {
		0, 2 * WTC_NR_OPTS,
		"Invalid number of optional arguments: give <#opt_args> then that many <key> <value> words"
	};
	unsigned int n;
	const char *err;
	int r;

	r = dm_read_arg_group(&group, as, &n, error);
	if (r)
		return r;
	if (n % 2) {
		*error = "Optional arguments come in <key> <value> pairs: #opt_args must be even";
		return -EINVAL;
	}
	for (; n; n -= 2) {
		const char *key = dm_shift_arg(as);
		const char *val = dm_shift_arg(as);

		if (wtc_config_set(cfg, key, val, &err)) {
			*error = (char *)err;
			return -EINVAL;
		}
	}
	return 0;
}

/*
 * Construct: <dev_path> [<#opt_args> <key> <value>...]
 */
static int wt_ctr(struct dm_target *ti, unsigned int argc, char **argv)
{
	struct dm_arg_set as = { .argc = argc, .argv = argv };
	struct wt_dev *wt;
	struct wtc_config cfg;
	const char *path;
	int i, r;

	if (argc < 1) {
		ti->error = "Missing device: wbthrottle <dev_path> [<#opt_args> <key> <value>...]";
		return -EINVAL;
	}
	wt = kzalloc(sizeof(*wt), GFP_KERNEL);
	if (!wt) {
		ti->error = "Cannot allocate wbthrottle context";
		return -ENOMEM;
	}
	ti->private = wt;
	wt->ti = ti;
	spin_lock_init(&wt->lock);
	INIT_WORK(&wt->issue, wt_issue_work);
	hrtimer_init(&wt->pace, CLOCK_MONOTONIC, HRTIMER_MODE_ABS);
	wt->pace.function = wt_pace_fn;
	timer_setup(&wt->window, wt_window_fn, 0);
	for (i = 0; i < WTC_NR_QUEUES; i++) {
		INIT_LIST_HEAD(&wt->held[i]);
		bio_list_init(&wt->ready[i]);
	}

	wt->pcpu = alloc_percpu(struct wt_pcpu);
	if (!wt->pcpu) {
		ti->error = "Cannot allocate per-CPU counters";
		r = -ENOMEM;
		goto bad;
	}
	for_each_possible_cpu(i)
		spin_lock_init(&per_cpu_ptr(wt->pcpu, i)->lock);

	path = dm_shift_arg(&as);
	wtc_config_default(&cfg);
	if (as.argc) {
		r = wt_parse_opts(&as, &cfg, &ti->error);
		if (r)
			goto bad;
	}
	if (as.argc) {
		ti->error = "Too many arguments: give <#opt_args> = the number of words after it";
		r = -EINVAL;
		goto bad;
	}

	r = dm_get_device(ti, path, dm_table_get_mode(ti->table), &wt->dev);
	if (r) {
		ti->error = "Cannot open the lower device: check the path";
		goto bad;
	}
	wt->bdi = dm_disk(dm_table_get_md(ti->table))->bdi;
	wt->devt = disk_devt(dm_disk(dm_table_get_md(ti->table)));
	wtc_init(&wt->core, &cfg);
	spin_lock_irq(&wt->lock);
	wt_refresh_device(wt);
	spin_unlock_irq(&wt->lock);

	wt->wq = alloc_workqueue("kwbthrottled", WQ_MEM_RECLAIM, 0);
	if (!wt->wq) {
		ti->error = "Cannot allocate the dispatch workqueue";
		r = -ENOMEM;
		goto bad;
	}

	ti->num_flush_bios = 1;
	ti->num_discard_bios = 1;
	ti->num_secure_erase_bios = 1;
	ti->num_write_zeroes_bios = 1;
	ti->per_io_data_size = sizeof(struct wt_bio);
	ti->accounts_remapped_io = true;
	return 0;

bad:
	wt_destroy(wt);
	return r;
}

static void wt_dtr(struct dm_target *ti)
{
	wt_destroy(ti->private);
}

/*
 * A flush of a write cache holds writeback until it completes
 * (wtc_flush_issue()); flushes are rare, so the lock is no cost.
 */
static bool wt_flush_issue(struct wt_dev *wt)
{
	unsigned long flags;

	if (!wtc_counts_flushes(&wt->core))
		return false;
	spin_lock_irqsave(&wt->lock, flags);
	wtc_flush_issue(&wt->core);
	spin_unlock_irqrestore(&wt->lock, flags);
	return true;
}

static void wt_flush_done(struct wt_dev *wt)
{
	struct wtc_now now;
	unsigned long flags;

	wt_now(wt, &now);
	spin_lock_irqsave(&wt->lock, flags);
	if (wtc_flush_done(&wt->core))
		wt_release(wt, &now);
	spin_unlock_irqrestore(&wt->lock, flags);
}

/*
 * A bio that is never held: count it on this CPU. A read is the "other
 * I/O" that lowers the background limit (stamped with the tick's time,
 * which costs a load), and a sample of reads is timed for the controller.
 */
static void wt_map_untracked(struct wt_dev *wt, struct wt_bio *pb)
{
	struct wtc_now now;
	unsigned int seq;

	this_cpu_inc(wt->pcpu->kind[pb->kind]);
	pb->start_ns = 0;
	pb->watched = false;
	pb->flush = pb->kind == WTC_K_FLUSH && wt_flush_issue(wt);
	if (pb->kind != WTC_K_READ)
		return;
	now.ns = ktime_get_coarse_ns();
	now.dirty_wait = false;
	wtc_note_read(&wt->core, now.ns);
	pb->watched = wtc_read_issue(&wt->core, &now);
	seq = this_cpu_inc_return(wt->pcpu->reads);
	if (wtc_sample_read(&raw_cpu_ptr(wt->pcpu)->timed, seq))
		pb->start_ns = ktime_get_ns();
	wt_arm_window(wt);
}

/*
 * ... and its completion. Interrupts off for the shard: end_io may run in
 * one.
 */
static void wt_end_untracked(struct wt_dev *wt, struct wt_bio *pb)
{
	struct wt_pcpu *pc;
	unsigned long flags;
	u64 lat;

	if (pb->kind == WTC_K_DIRECT) {
		this_cpu_inc(wt->pcpu->writes_done);
		return;
	}
	if (pb->flush) {
		wt_flush_done(wt);
		return;
	}
	if (pb->kind != WTC_K_READ)
		return;
	wtc_note_read(&wt->core, ktime_get_coarse_ns());
	if (pb->watched)
		wtc_read_done(&wt->core);
	if (!pb->start_ns)
		return;
	lat = ktime_get_ns() - pb->start_ns;
	local_irq_save(flags);
	pc = this_cpu_ptr(wt->pcpu);
	spin_lock(&pc->lock);
	wtc_shard_sample(&pc->timed, WTC_K_READ, lat);
	spin_unlock(&pc->lock);
	local_irq_restore(flags);
}

/*
 * Most writeback continues the request in flight before it (a raw block
 * device's page cache writes 4 KiB bios): such a write joins it with no
 * lock, no clock and no slot, counted on this CPU.
 */
static bool wt_map_join(struct wt_dev *wt, struct wt_bio *pb, enum wtc_queue q,
			const struct wtc_io *io)
{
	unsigned int grp;

	if (!wtc_join(&wt->core, q, io, &grp))
		return false;
	pb->grp = grp;
	this_cpu_inc(wt->pcpu->kind[pb->kind]);
	this_cpu_inc(wt->pcpu->merged);
	return true;
}

/*
 * A tracked write that does not join: the core decides under the lock.
 * Not inlined, so that the join's path keeps a small frame.
 */
static noinline int wt_map_locked(struct wt_dev *wt, struct bio *bio,
				  struct wt_bio *pb, enum wtc_queue q,
				  struct wtc_io *io)
{
	struct wtc_now now;
	unsigned long flags;
	int r;

	pb->waiter = NULL;
	pb->granted = 0;
	wt_now_tracked(wt, &now);
	pb->start_ns = now.ns;
	io->mode = wt_hold_mode(bio);

	spin_lock_irqsave(&wt->lock, flags);
	wt_arm_window(wt);
	r = wtc_map(&wt->core, pb->kind, io, &now);
	if (r == WTC_WAIT || r == WTC_HOLD) {
		if (r == WTC_WAIT)
			pb->waiter = current;
		now.ns = ktime_get_ns();	/* held: its age counts */
		pb->start_ns = now.ns;
		list_add_tail(&pb->node, &wt->held[q]);
		/* Nothing in flight will complete to let it go: look now. */
		if (wtc_counter_idle(&wt->core, q))
			wt_release(wt, &now);
	} else if (r >= 0 && wtc_overtook(&wt->core, q)) {
		now.ns = ktime_get_ns();
		wt_release(wt, &now);
	}
	spin_unlock_irqrestore(&wt->lock, flags);
	return r;
}

/* A tracked write: it goes, waits in its submitter, is deferred or refused. */
static int wt_map_tracked(struct wt_dev *wt, struct bio *bio,
			  struct wt_bio *pb, enum wtc_queue q)
{
	struct wtc_io io;
	int r;

	pb->refused = false;
	wt_split(wt, bio);
	wt_bio_io(bio, &io);
	if (wt_map_join(wt, pb, q, &io))
		return DM_MAPIO_REMAPPED;
	r = wt_map_locked(wt, bio, pb, q, &io);
	switch (r) {
	case WTC_WAIT:
		wt_wait(pb);
		return DM_MAPIO_REMAPPED;
	case WTC_HOLD:
		return DM_MAPIO_SUBMITTED;
	case WTC_AGAIN:
		pb->refused = true;
		bio_wouldblock_error(bio);
		return DM_MAPIO_SUBMITTED;
	default:
		pb->grp = r;
		return DM_MAPIO_REMAPPED;
	}
}

static int wt_map(struct dm_target *ti, struct bio *bio)
{
	struct wt_dev *wt = ti->private;
	struct wt_bio *pb = dm_per_bio_data(bio, sizeof(*pb));
	enum wtc_queue q;

	bio_set_dev(bio, wt->dev->bdev);
	if (bio_sectors(bio) || op_is_zone_mgmt(bio_op(bio)))
		bio->bi_iter.bi_sector = dm_target_offset(ti, bio->bi_iter.bi_sector);

	pb->kind = wt_kind(wt, bio);
	q = wtc_kind_queue(pb->kind);
	if (q != WTC_Q_NONE)
		return wt_map_tracked(wt, bio, pb, q);
	wt_map_untracked(wt, pb);
	return DM_MAPIO_REMAPPED;
}

/*
 * The last bio of a request completed: give its slot back, under the lock.
 * Not inlined, so that the other completions keep a small frame.
 */
static noinline void wt_end_last(struct wt_dev *wt, struct wt_bio *pb)
{
	struct wtc_now now;
	unsigned long flags;

	wt_now_tracked(wt, &now);
	spin_lock_irqsave(&wt->lock, flags);
	wtc_sample(&wt->core, pb->kind, 0);	/* a write: counted, not timed */
	if (wtc_done_last(&wt->core, pb->kind, pb->grp, &now)) {
		now.ns = ktime_get_ns();
		wt_release(wt, &now);
	}
	spin_unlock_irqrestore(&wt->lock, flags);
}

static int wt_end_io(struct dm_target *ti, struct bio *bio,
		     blk_status_t *error)
{
	struct wt_dev *wt = ti->private;
	struct wt_bio *pb = dm_per_bio_data(bio, sizeof(*pb));

	if (wtc_kind_queue(pb->kind) == WTC_Q_NONE) {
		wt_end_untracked(wt, pb);
		return DM_ENDIO_DONE;
	}
	if (pb->refused)
		return DM_ENDIO_DONE;
	if (wtc_put(&wt->core, pb->grp))
		wt_end_last(wt, pb);
	else	/* not the last bio of its request: no slot to give back */
		this_cpu_inc(wt->pcpu->writes_done);
	return DM_ENDIO_DONE;
}

/* Wake every sleeper and issue every deferred bio before DM waits for them. */
static void wt_presuspend(struct dm_target *ti)
{
	struct wt_dev *wt = ti->private;

	wt_set_holding(wt, false);
	wt_release_all(wt);
}

static void wt_presuspend_undo(struct dm_target *ti)
{
	wt_set_holding(ti->private, true);
}

static void wt_resume(struct dm_target *ti)
{
	struct wt_dev *wt = ti->private;
	unsigned long flags;

	spin_lock_irqsave(&wt->lock, flags);
	wt_refresh_device(wt);
	wtc_set_holding(&wt->core, true);
	spin_unlock_irqrestore(&wt->lock, flags);
}

/* How long the oldest write held now has been held. Lock held. */
static u64 wt_oldest_ns(struct wt_dev *wt)
{
	u64 now = ktime_get_ns(), oldest = 0;
	struct wt_bio *pb;
	int q;

	lockdep_assert_held(&wt->lock);
	for (q = 0; q < WTC_NR_QUEUES; q++) {
		pb = list_first_entry_or_null(&wt->held[q], struct wt_bio,
					      node);
		if (pb && now > pb->start_ns && now - pb->start_ns > oldest)
			oldest = now - pb->start_ns;
	}
	return oldest;
}

static void wt_status(struct dm_target *ti, status_type_t type,
		      unsigned int status_flags, char *result,
		      unsigned int maxlen)
{
	struct wt_dev *wt = ti->private;
	struct wtc_config cfg;
	unsigned long flags;
	unsigned int sz = 0;
	char *buf;

	buf = kmalloc(WT_STATUS_LEN, GFP_NOIO);
	if (!buf) {
		DMEMIT("ENOMEM");
		return;
	}
	spin_lock_irqsave(&wt->lock, flags);
	cfg = *wtc_get_config(&wt->core);
	if (type == STATUSTYPE_INFO) {
		wt_fold(wt);
		wtc_format_status(&wt->core, wt_oldest_ns(wt), buf,
				  WT_STATUS_LEN);
	}
	spin_unlock_irqrestore(&wt->lock, flags);

	switch (type) {
	case STATUSTYPE_INFO:
		DMEMIT("%s", buf);
		break;
	case STATUSTYPE_TABLE:
		DMEMIT("%s", wt->dev->name);
		if (wtc_config_nr_args(&cfg)) {
			wtc_config_format(&cfg, buf, WT_STATUS_LEN);
			DMEMIT(" %u%s", wtc_config_nr_args(&cfg), buf);
		}
		break;
	case STATUSTYPE_IMA:
		DMEMIT("target_name=%s,target_version=%u.%u.%u,device_name=%s,enable=%c,wb_percent=%u,depth=%u,wc_policy=%s,cache_delay_us=%u,lat_us=%u,lat_pct=%u,push_back=%c,backlog_kb=%u,backlog_ms=%u;",
		       ti->type->name, ti->type->version[0],
		       ti->type->version[1], ti->type->version[2],
		       wt->dev->name, cfg.enabled ? 'y' : 'n',
		       cfg.wb_percent, cfg.depth,
		       wtc_wc_policy_name(cfg.wc_policy),
		       cfg.cache_delay_usec, cfg.lat_usec, cfg.lat_pct,
		       cfg.push_back ? 'y' : 'n', cfg.backlog_kb,
		       cfg.backlog_ms);
		break;
	}
	kfree(buf);
}

static int wt_message(struct dm_target *ti, unsigned int argc, char **argv,
		      char *result, unsigned int maxlen)
{
	struct wt_dev *wt = ti->private;
	struct wtc_config cfg;
	unsigned long flags;
	const char *err = "messages are <key> <value>, keys as in the table line";
	int r = -EINVAL;

	spin_lock_irqsave(&wt->lock, flags);
	cfg = *wtc_get_config(&wt->core);
	if (argc == 2 && !wtc_config_set(&cfg, argv[0], argv[1], &err)) {
		wtc_set_config(&wt->core, &cfg);
		r = 0;
	}
	spin_unlock_irqrestore(&wt->lock, flags);

	if (r) {
		DMWARN_LIMIT("%s: message rejected: %s",
			     dm_device_name(dm_table_get_md(ti->table)), err);
		return r;
	}
	/* Limits may have risen, or throttling stopped: let go what may. */
	if (cfg.enabled)
		wt_kick(wt);
	else
		wt_release_all(wt);
	return 0;
}

static int wt_prepare_ioctl(struct dm_target *ti, struct block_device **bdev)
{
	struct wt_dev *wt = ti->private;

	*bdev = wt->dev->bdev;
	/* Pass ioctls through only when we cover the whole device. */
	return ti->len != bdev_nr_sectors(wt->dev->bdev);
}

static int wt_iterate_devices(struct dm_target *ti,
			      iterate_devices_callout_fn fn, void *data)
{
	struct wt_dev *wt = ti->private;

	return fn(ti, wt->dev, 0, ti->len, data);
}

static struct target_type wt_target_type = {
	.name = "wbthrottle",
	.features = DM_TARGET_NOWAIT,
	.version = { WBT_V_MAJOR, WBT_V_MINOR, WBT_V_PATCH },
	.module = THIS_MODULE,
	.ctr = wt_ctr,
	.dtr = wt_dtr,
	.map = wt_map,
	.end_io = wt_end_io,
	.presuspend = wt_presuspend,
	.presuspend_undo = wt_presuspend_undo,
	.resume = wt_resume,
	.status = wt_status,
	.message = wt_message,
	.prepare_ioctl = wt_prepare_ioctl,
	.iterate_devices = wt_iterate_devices,
};

static int __init dm_wbthrottle_init(void)
{
	return dm_register_target(&wt_target_type);
}

static void __exit dm_wbthrottle_exit(void)
{
	dm_unregister_target(&wt_target_type);
}

module_init(dm_wbthrottle_init);
module_exit(dm_wbthrottle_exit);

MODULE_DESCRIPTION(DM_NAME " target throttling buffered writeback");
MODULE_AUTHOR("the dm-wbthrottle authors <maintainers@users.noreply.a-seed-8d80a926.example>");
MODULE_LICENSE("GPL");
MODULE_VERSION(WBT_VERSION);
MODULE_ALIAS("dm-wbthrottle");
