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
 * cache_delay_us N, lat_us auto|N, lat_pct N. See README.md.
 *
 * Bios that may not go yet are held in per-queue FIFOs; ->map() never
 * sleeps (a sleeping map would wait on bios still parked on its own
 * current->bio_list). A WQ_MEM_RECLAIM worker issues held bios as
 * completions free slots. presuspend lets every held bio go.
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
#include <linux/wait.h>
#include <linux/ktime.h>

#include "wbt_core.h"

#define CREATE_TRACE_POINTS
#include "dm_wbthrottle_trace.h"

#define DM_MSG_PREFIX "wbthrottle"

enum {
	WBT_DISPATCH_BATCH = 64,	/* bios issued per lock hold */
	WBT_STATUS_LEN = 2048,
};

struct wt_dev {
	struct dm_target *ti;
	struct dm_dev *dev;
	struct backing_dev_info *bdi;	/* of the DM device: dirtier waits */
	dev_t devt;			/* of the DM device, for tracepoints */

	spinlock_t lock;		/* protects core and held[] */
	struct wbt_core core;
	struct bio_list held[WBT_NR_QUEUES];

	struct workqueue_struct *wq;
	struct delayed_work dispatch;	/* issues held bios */
	struct timer_list window;	/* ends latency windows */
	wait_queue_head_t idle_wait;	/* dtr waits for in-flight bios */
	unsigned long dirty_seen;	/* jiffies of the last bdi look */
	unsigned long dirty_sleep;	/* what it found */
};

/* Per-bio data, in DM's front pad. */
struct wbt_bio {
	u64 start_ns;			/* when ->map() saw it */
	u16 grp;			/* merge group, from wbt_core */
	u8 kind;			/* enum wbt_kind */
	bool watched;			/* the read whose age is watched */
};

static unsigned int wt_bio_flags(const struct bio *bio)
{
	blk_opf_t opf = bio->bi_opf;
	unsigned int f = 0;

	switch (bio_op(bio)) {
	case REQ_OP_READ:
		f |= WBT_F_READ;
		break;
	case REQ_OP_WRITE:
		f |= WBT_F_WRITE;
		break;
	case REQ_OP_DISCARD:
		f |= WBT_F_DISCARD;
		break;
	default:
		break;
	}
	f |= opf & REQ_SYNC ? WBT_F_SYNC : 0;
	f |= opf & REQ_IDLE ? WBT_F_IDLE : 0;
	f |= opf & REQ_META ? WBT_F_META : 0;
	f |= opf & REQ_PRIO ? WBT_F_PRIO : 0;
	f |= opf & REQ_FUA ? WBT_F_FUA : 0;
	f |= opf & REQ_PREFLUSH ? WBT_F_PREFLUSH : 0;
	f |= opf & REQ_BACKGROUND ? WBT_F_BACKGROUND : 0;
	f |= opf & REQ_SWAP ? WBT_F_SWAP : 0;
	/* Not PF_MEMALLOC: xfsaild runs with it and is not reclaim. */
	f |= current_is_kswapd() ? WBT_F_RECLAIMER : 0;
	f |= bio_sectors(bio) ? 0 : WBT_F_EMPTY;
	return f;
}

/* A dirtier slept in balance_dirty_pages() within the last second. */
static bool wt_dirty_wait(struct wt_dev *wt)
{
	unsigned long j = jiffies;

	/* On 6.1 this walks the bdi's wbs: once a jiffy is enough. */
	if (READ_ONCE(wt->dirty_seen) != j) {
		WRITE_ONCE(wt->dirty_sleep, wbt_bdi_last_dirty_sleep(wt->bdi));
		WRITE_ONCE(wt->dirty_seen, j);
	}
	return time_before(j, READ_ONCE(wt->dirty_sleep) + HZ);
}

static void wt_now(struct wt_dev *wt, struct wbt_now *now)
{
	now->ns = ktime_get_ns();
	now->dirty_wait = wt_dirty_wait(wt);
}

/* The lower device's depth and cache can change at run time; re-read. */
static void wt_refresh_device(struct wt_dev *wt)
{
	struct block_device *bdev = wt->dev->bdev;
	struct request_queue *q = bdev_get_queue(bdev);

	wbt_set_device(&wt->core, blk_queue_depth(q), bdev_write_cache(bdev),
		       queue_max_sectors(q), bdev_nonrot(bdev));
}

/* Where a write lands, if the lower queue could merge it with others. */
static const struct wbt_io *wt_bio_io(const struct bio *bio, struct wbt_io *io)
{
	io->sector = bio->bi_iter.bi_sector;
	io->sectors = 0;
	if (bio_op(bio) == REQ_OP_WRITE &&
	    !(bio->bi_opf & (REQ_FUA | REQ_PREFLUSH | REQ_NOMERGE)))
		io->sectors = bio_sectors(bio);
	return io;
}

static void wt_kick(struct wt_dev *wt)
{
	mod_delayed_work(wt->wq, &wt->dispatch, 0);
}

/* Describe the head of held queue q for wbt_dispatch(). Lock held. */
static void wt_peek(struct wt_dev *wt, int q, struct wbt_io *io)
{
	struct bio *bio = bio_list_peek(&wt->held[q]);

	io->sectors = 0;
	if (bio)
		wt_bio_io(bio, io);
}

/* Move up to @max bios that may go now from held[] to @out. Lock held. */
static bool wt_pick(struct wt_dev *wt, struct bio_list *out,
		    unsigned int max, u64 *wait_ns)
{
	struct wbt_io heads[WBT_NR_QUEUES] = { };
	struct wbt_now now;
	struct wbt_bio *pb;
	unsigned int grp;
	struct bio *bio;
	int q;

	wt_now(wt, &now);
	for (q = 0; q < WBT_NR_QUEUES; q++)
		wt_peek(wt, q, &heads[q]);
	while (max--) {
		q = wbt_dispatch(&wt->core, &now, heads, &grp, wait_ns);
		if (q < 0)
			return false;
		bio = bio_list_pop(&wt->held[q]);
		if (WARN_ON_ONCE(!bio))
			return false;
		pb = dm_per_bio_data(bio, sizeof(*pb));
		pb->grp = grp;
		wbt_note_held(&wt->core, now.ns - pb->start_ns);
		trace_wbthrottle_wait(wt->devt, q, now.ns - pb->start_ns);
		bio_list_add(out, bio);
		wt_peek(wt, q, &heads[q]);
	}
	return true;
}

static void wt_submit_list(struct bio_list *bios)
{
	struct blk_plug plug;
	struct bio *bio;

	blk_start_plug(&plug);
	while ((bio = bio_list_pop(bios)))
		dm_submit_bio_remap(bio, NULL);
	blk_finish_plug(&plug);
}

static void wt_dispatch_work(struct work_struct *work)
{
	struct wt_dev *wt = container_of(to_delayed_work(work),
					     struct wt_dev, dispatch);
	struct bio_list out = BIO_EMPTY_LIST;
	unsigned long flags;
	u64 wait_ns = 0;
	bool more;

	spin_lock_irqsave(&wt->lock, flags);
	more = wt_pick(wt, &out, WBT_DISPATCH_BATCH, &wait_ns);
	spin_unlock_irqrestore(&wt->lock, flags);

	wt_submit_list(&out);
	if (more)
		wt_kick(wt);
	else if (wait_ns)
		queue_delayed_work(wt->wq, &wt->dispatch,
				   max(1UL, nsecs_to_jiffies(wait_ns)));
}

/* A latency window ended: judge it, maybe rescale, start the next one. */
static void wt_window_fn(struct timer_list *t)
{
	struct wt_dev *wt = from_timer(wt, t, window);
	struct wbt_now now;
	unsigned long flags;
	bool again, moved;
	int step;
	u64 win;

	wt_now(wt, &now);
	spin_lock_irqsave(&wt->lock, flags);
	step = wt->core.scale_step;
	again = wbt_window(&wt->core, &now);
	moved = step != wt->core.scale_step;
	win = wt->core.cur_win_ns;
	trace_wbthrottle_stat(wt->devt, &wt->core);
	if (moved)
		trace_wbthrottle_step(wt->devt, &wt->core);
	spin_unlock_irqrestore(&wt->lock, flags);

	if (again)
		mod_timer(&wt->window, jiffies + max(1UL, nsecs_to_jiffies(win)));
	/* Deeper limits let held bios go. */
	if (moved)
		wt_kick(wt);
}

/* Start windows when I/O shows up. Lock held. */
static void wt_arm_window(struct wt_dev *wt)
{
	if (!timer_pending(&wt->window))
		mod_timer(&wt->window, jiffies +
			  max(1UL, nsecs_to_jiffies(wt->core.cur_win_ns)));
}

/* Stop holding and issue everything held; used by presuspend and dtr. */
static void wt_release_all(struct wt_dev *wt)
{
	struct bio_list out;
	unsigned long flags;
	u64 wait_ns;
	bool more;

	spin_lock_irqsave(&wt->lock, flags);
	wbt_set_holding(&wt->core, false);
	spin_unlock_irqrestore(&wt->lock, flags);
	do {
		bio_list_init(&out);
		spin_lock_irqsave(&wt->lock, flags);
		more = wt_pick(wt, &out, WBT_DISPATCH_BATCH, &wait_ns);
		spin_unlock_irqrestore(&wt->lock, flags);
		wt_submit_list(&out);
	} while (more);
}

static bool wt_is_idle(struct wt_dev *wt)
{
	unsigned long flags;
	bool idle;

	spin_lock_irqsave(&wt->lock, flags);
	idle = wbt_idle(&wt->core);
	spin_unlock_irqrestore(&wt->lock, flags);
	return idle;
}

static void wt_destroy(struct wt_dev *wt)
{
	if (wt->wq) {
		wt_release_all(wt);
		wait_event(wt->idle_wait, wt_is_idle(wt));
		timer_shutdown_sync(&wt->window);
		cancel_delayed_work_sync(&wt->dispatch);
		destroy_workqueue(wt->wq);
	}
	if (wt->dev)
		dm_put_device(wt->ti, wt->dev);
	kfree(wt);
}

static int wt_parse_opts(struct dm_arg_set *as, struct wbt_config *cfg,
			 char **error)
{
	static const struct dm_arg group = {
		0, 2 * WBT_NR_OPTS,
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

		if (wbt_config_set(cfg, key, val, &err)) {
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
	struct block_device *bdev;
	struct wt_dev *wt;
	struct wbt_config cfg;
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
	init_waitqueue_head(&wt->idle_wait);
	INIT_DELAYED_WORK(&wt->dispatch, wt_dispatch_work);
	timer_setup(&wt->window, wt_window_fn, 0);
	for (i = 0; i < WBT_NR_QUEUES; i++)
		bio_list_init(&wt->held[i]);

	path = dm_shift_arg(&as);
	wbt_config_default(&cfg);
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
	bdev = wt->dev->bdev;
	wt->bdi = dm_disk(dm_table_get_md(ti->table))->bdi;
	wt->devt = disk_devt(dm_disk(dm_table_get_md(ti->table)));
	wbt_init(&wt->core, &cfg);
	wt_refresh_device(wt);

	wt->wq = alloc_workqueue("kwbthrottled", WQ_MEM_RECLAIM, 0);
	if (!wt->wq) {
		ti->error = "Cannot allocate the dispatch workqueue";
		r = -ENOMEM;
		goto bad;
	}

	/* One clone per lower request keeps the depth accounting honest. */
	r = dm_set_target_max_io_len(ti, queue_max_sectors(bdev_get_queue(bdev)));
	if (r) {
		ti->error = "Cannot set the maximum I/O size";
		goto bad;
	}
	ti->num_flush_bios = 1;
	ti->num_discard_bios = 1;
	ti->num_secure_erase_bios = 1;
	ti->num_write_zeroes_bios = 1;
	ti->per_io_data_size = sizeof(struct wbt_bio);
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

static int wt_map(struct dm_target *ti, struct bio *bio)
{
	struct wt_dev *wt = ti->private;
	struct wbt_bio *pb = dm_per_bio_data(bio, sizeof(*pb));
	struct wbt_now now;
	struct wbt_io io;
	unsigned long flags;
	enum wbt_queue q;
	bool lonely;
	int r;

	bio_set_dev(bio, wt->dev->bdev);
	if (bio_sectors(bio) || op_is_zone_mgmt(bio_op(bio)))
		bio->bi_iter.bi_sector = dm_target_offset(ti, bio->bi_iter.bi_sector);

	pb->kind = wbt_classify(wt_bio_flags(bio));
	q = wbt_kind_queue(pb->kind);
	wt_now(wt, &now);
	pb->start_ns = now.ns;

	spin_lock_irqsave(&wt->lock, flags);
	if (q != WBT_Q_NONE)
		wt_refresh_device(wt);
	pb->watched = pb->kind == WBT_K_READ && wbt_read_issue(&wt->core, &now);
	if (q != WBT_Q_NONE || pb->kind == WBT_K_READ)
		wt_arm_window(wt);
	r = wbt_map(&wt->core, pb->kind, wt_bio_io(bio, &io), &now);
	if (r == WBT_HOLD)
		bio_list_add(&wt->held[q], bio);
	lonely = r == WBT_HOLD && wbt_counter_idle(&wt->core, q);
	spin_unlock_irqrestore(&wt->lock, flags);

	if (r != WBT_HOLD) {
		pb->grp = r;
		return DM_MAPIO_REMAPPED;
	}
	/* Nothing in flight will complete to release it: look now. */
	if (lonely)
		wt_kick(wt);
	return DM_MAPIO_SUBMITTED;
}

static int wt_end_io(struct dm_target *ti, struct bio *bio,
		     blk_status_t *error)
{
	struct wt_dev *wt = ti->private;
	struct wbt_bio *pb = dm_per_bio_data(bio, sizeof(*pb));
	struct wbt_now now;
	unsigned long flags;
	bool kick, idle;

	wt_now(wt, &now);
	spin_lock_irqsave(&wt->lock, flags);
	if (pb->watched)
		wbt_read_done(&wt->core);
	wbt_sample(&wt->core, pb->kind, now.ns - pb->start_ns);
	kick = wbt_done(&wt->core, pb->kind, pb->grp, &now);
	idle = wbt_idle(&wt->core);
	spin_unlock_irqrestore(&wt->lock, flags);

	if (kick)
		wt_kick(wt);
	if (idle && wq_has_sleeper(&wt->idle_wait))
		wake_up(&wt->idle_wait);
	return DM_ENDIO_DONE;
}

static void wt_presuspend(struct dm_target *ti)
{
	wt_release_all(ti->private);
}

static void wt_set_holding(struct wt_dev *wt, bool holding)
{
	unsigned long flags;

	spin_lock_irqsave(&wt->lock, flags);
	wbt_set_holding(&wt->core, holding);
	spin_unlock_irqrestore(&wt->lock, flags);
}

static void wt_presuspend_undo(struct dm_target *ti)
{
	wt_set_holding(ti->private, true);
}

static void wt_resume(struct dm_target *ti)
{
	wt_set_holding(ti->private, true);
}

static void wt_status(struct dm_target *ti, status_type_t type,
		      unsigned int status_flags, char *result,
		      unsigned int maxlen)
{
	struct wt_dev *wt = ti->private;
	struct wbt_config cfg;
	unsigned long flags;
	unsigned int sz = 0;
	char *buf;

	buf = kmalloc(WBT_STATUS_LEN, GFP_NOIO);
	if (!buf) {
		DMEMIT("ENOMEM");
		return;
	}
	spin_lock_irqsave(&wt->lock, flags);
	cfg = wt->core.cfg;
	if (type == STATUSTYPE_INFO)
		wbt_format_status(&wt->core, buf, WBT_STATUS_LEN);
	spin_unlock_irqrestore(&wt->lock, flags);

	switch (type) {
	case STATUSTYPE_INFO:
		DMEMIT("%s", buf);
		break;
	case STATUSTYPE_TABLE:
		DMEMIT("%s", wt->dev->name);
		if (wbt_config_nr_args(&cfg)) {
			wbt_config_format(&cfg, buf, WBT_STATUS_LEN);
			DMEMIT(" %u%s", wbt_config_nr_args(&cfg), buf);
		}
		break;
	case STATUSTYPE_IMA:
		DMEMIT("target_name=%s,target_version=%u.%u.%u,device_name=%s,enable=%c,wb_percent=%u,depth=%u,wc_policy=%s,cache_delay_us=%u,lat_us=%u,lat_pct=%u;",
		       ti->type->name, ti->type->version[0],
		       ti->type->version[1], ti->type->version[2],
		       wt->dev->name, cfg.enabled ? 'y' : 'n',
		       cfg.wb_percent, cfg.depth,
		       wbt_wc_policy_name(cfg.wc_policy),
		       cfg.cache_delay_usec, cfg.lat_usec, cfg.lat_pct);
		break;
	}
	kfree(buf);
}

static int wt_message(struct dm_target *ti, unsigned int argc, char **argv,
		      char *result, unsigned int maxlen)
{
	struct wt_dev *wt = ti->private;
	struct wbt_config cfg;
	unsigned long flags;
	const char *err = "messages are <key> <value>, keys as in the table line";
	int r = -EINVAL;

	spin_lock_irqsave(&wt->lock, flags);
	cfg = wt->core.cfg;
	if (argc == 2 && !wbt_config_set(&cfg, argv[0], argv[1], &err)) {
		wbt_set_config(&wt->core, &cfg);
		r = 0;
	}
	spin_unlock_irqrestore(&wt->lock, flags);

	if (r) {
		DMWARN("%s: message rejected: %s",
		       dm_device_name(dm_table_get_md(ti->table)), err);
		return r;
	}
	/* Limits may have risen: let held bios that now fit go. */
	wt_kick(wt);
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
MODULE_AUTHOR("dm-wbthrottle developers");
MODULE_LICENSE("GPL");
MODULE_VERSION(WBT_VERSION);
MODULE_ALIAS("dm-wbthrottle");
