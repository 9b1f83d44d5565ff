// SPDX-License-Identifier: GPL-2.0-only
/*
 * wbt_diskmodel: a test-only blk-mq disk that behaves like a drive.
 *
 * One "head" serves requests in arrival order.  A request that needs the
 * head pays an access cost (short if it starts where the previous head
 * operation ended, long otherwise), its transfer time at the media
 * bandwidth, and the run-time extra_latency_us:
 *
 *	done = max(now, head_free) + access + bytes / bandwidth + extra
 *
 * and head_free moves on to done.  A request then spends flight_us more
 * outside the head, overlapped with every other request: the round trip of
 * a network volume or the internal latency of a parallel device, whose
 * bandwidth grows with the queue depth until the head's limits it.
 * The schedule is computed when a request
 * reaches ->queue_rq(); a per-request hrtimer completes it at that time.
 * The tag set is queue_depth deep, so requests beyond it wait in blk-mq,
 * in front of the "drive", as they would with real hardware.
 *
 * With a volatile write cache (wcache_mb > 0) a plain write is acked as
 * soon as it has room in the cache.  Its destage is a head operation
 * booked at arrival, so later reads queue behind the dirty data.  The
 * destage schedule is kept in a ring, which tells when cached bytes leave
 * the cache and so when a write that does not fit gets room.  A FLUSH is
 * a head operation too, so it completes after every destage booked before
 * it; FUA writes bypass the cache.
 *
 * Data lives in an xarray of pages allocated on first write; unwritten
 * sectors read as zeros.  Data is copied at arrival, so a read always
 * returns what earlier-arrived writes stored (no power-loss model).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/blk-mq.h>
#include <linux/blkdev.h>
#include <linux/highmem.h>
#include <linux/hrtimer.h>
#include <linux/math64.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/rwsem.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/xarray.h>

#include "diskmodel_compat.h"

enum {
	/* Cost of taking a write into the cache (controller + bus). */
	WBTDM_CACHE_ACK_NSEC = 20 * NSEC_PER_USEC,
	/* Upper bound for extra_latency_us: 10 s. */
	WBTDM_MAX_EXTRA_USEC = 10 * USEC_PER_SEC,
	/* Largest read/write/write-zeroes request: 1 MiB. */
	WBTDM_MAX_HW_SECTORS = 2048,
	WBTDM_PHYS_BLOCK_SIZE = 4096,
};

/* Load-time knobs; -1 means "take it from the profile". */
enum wbtdm_knob_id {
	WBTDM_SIZE_MB,
	WBTDM_QUEUE_DEPTH,
	WBTDM_BW_MBPS,
	WBTDM_ACCESS_US,
	WBTDM_SEQ_ACCESS_US,
	WBTDM_ROTATIONAL,
	WBTDM_WCACHE_MB,
	WBTDM_NR_HW_QUEUES,
	WBTDM_FLIGHT_US,
	WBTDM_NR_KNOBS
};

struct wbtdm_knob_info {
	const char *name;
	int min;
	int max;
};

static const struct wbtdm_knob_info wbtdm_knob_info[WBTDM_NR_KNOBS] = {
	[WBTDM_SIZE_MB]		= { "size_mb", 1, 65536 },
	[WBTDM_QUEUE_DEPTH]	= { "queue_depth", 1, 1024 },
	[WBTDM_BW_MBPS]		= { "bw_mbps", 1, 100000 },
	[WBTDM_ACCESS_US]	= { "access_us", 0, 1000000 },
	[WBTDM_SEQ_ACCESS_US]	= { "seq_access_us", 0, 1000000 },
	[WBTDM_ROTATIONAL]	= { "rotational", 0, 1 },
	[WBTDM_WCACHE_MB]	= { "wcache_mb", 0, 1024 },
	[WBTDM_NR_HW_QUEUES]	= { "nr_hw_queues", 1, 64 },
	[WBTDM_FLIGHT_US]	= { "flight_us", 0, 1000000 },
};

struct wbtdm_profile {
	const char *name;
	int knob[WBTDM_NR_KNOBS];
};

/*
 * Chosen for a TCG-emulated guest: the hdd's 4 ms random access stays well
 * above timer and emulation noise, and 40 MiB/s is slower than a guest can
 * dirty page cache, so buffered writeback floods it.
 */
static const struct wbtdm_profile wbtdm_profiles[] = {
	{ "hdd", { 512, 32, 40, 4000, 100, 1, 16, 1, 0 } },
	{ "ssd", { 512, 128, 400, 50, 50, 0, 0, 1, 0 } },
};

static char *profile = "hdd";
module_param(profile, charp, 0444);
MODULE_PARM_DESC(profile, "Defaults for the other knobs: hdd or ssd");

static int wbtdm_knob[WBTDM_NR_KNOBS] = {
	[0 ... WBTDM_NR_KNOBS - 1] = -1
};

module_param_named(size_mb, wbtdm_knob[WBTDM_SIZE_MB], int, 0444);
MODULE_PARM_DESC(size_mb, "Capacity in MiB (default 512)");
module_param_named(queue_depth, wbtdm_knob[WBTDM_QUEUE_DEPTH], int, 0444);
MODULE_PARM_DESC(queue_depth, "Hardware tags per queue (hdd 32, ssd 128)");
module_param_named(bw_mbps, wbtdm_knob[WBTDM_BW_MBPS], int, 0444);
MODULE_PARM_DESC(bw_mbps, "Media bandwidth in MiB/s (hdd 40, ssd 400)");
module_param_named(access_us, wbtdm_knob[WBTDM_ACCESS_US], int, 0444);
MODULE_PARM_DESC(access_us, "Random access cost in us (hdd 4000, ssd 50)");
module_param_named(seq_access_us, wbtdm_knob[WBTDM_SEQ_ACCESS_US], int, 0444);
MODULE_PARM_DESC(seq_access_us, "Sequential access cost in us (hdd 100, ssd 50)");
module_param_named(rotational, wbtdm_knob[WBTDM_ROTATIONAL], int, 0444);
MODULE_PARM_DESC(rotational, "Report a rotational device (hdd 1, ssd 0)");
module_param_named(wcache_mb, wbtdm_knob[WBTDM_WCACHE_MB], int, 0444);
MODULE_PARM_DESC(wcache_mb, "Volatile write cache in MiB, 0 = none (hdd 16, ssd 0)");
module_param_named(nr_hw_queues, wbtdm_knob[WBTDM_NR_HW_QUEUES], int, 0444);
MODULE_PARM_DESC(nr_hw_queues, "Hardware queues sharing the one head (default 1)");
module_param_named(flight_us, wbtdm_knob[WBTDM_FLIGHT_US], int, 0444);
MODULE_PARM_DESC(flight_us, "Latency every request adds outside the head, overlapped, in us (default 0)");

static unsigned int extra_latency_us;

static int wbtdm_set_extra(const char *val, const struct kernel_param *kp)
{
	return param_set_uint_minmax(val, kp, 0, WBTDM_MAX_EXTRA_USEC);
}

static const struct kernel_param_ops wbtdm_extra_ops = {
	.set = wbtdm_set_extra,
	.get = param_get_uint,
};

module_param_cb(extra_latency_us, &wbtdm_extra_ops, &extra_latency_us, 0644);
MODULE_PARM_DESC(extra_latency_us, "Added to every request's service time, in us (run-time)");

/* One cached write: its bytes are in the cache from admit_ns to done_ns. */
struct wbtdm_destage {
	u64 admit_ns;
	u64 done_ns;
	u32 bytes;
};

/* The volatile write cache; destage entries are in done_ns order. */
struct wbtdm_cache {
	struct wbtdm_destage *ring;
	u32 size;			/* ring entries */
	u32 tail;			/* oldest entry */
	u32 count;			/* entries in use */
	u64 cap;			/* bytes */
	u64 dirty;			/* bytes in the ring, admitted or not */
	u64 admit_ns;			/* when the last write got room */
};

struct wbtdm_stats {
	u64 reads;
	u64 writes;
	u64 flushes;
	u64 fua;
	u64 discards;
	u64 write_zeroes;
	u64 read_bytes;
	u64 write_bytes;
	u64 cached_writes;
	u64 cache_full_waits;
	u64 max_inflight;
};

struct wbtdm_dev {
	struct blk_mq_tag_set tag_set;
	struct gendisk *disk;
	struct xarray pages;		/* page index -> struct page * */
	struct rw_semaphore data_sem;	/* write side: pages are freed */
	u64 access_ns;
	u64 seq_access_ns;
	u64 bw_bytes;			/* bytes per second */
	u64 flight_ns;			/* overlapped latency per request */
	atomic_t inflight;
	atomic_t timeouts;
	spinlock_t lock;		/* protects the fields below */
	u64 head_free_ns;		/* when the head is done with booked work */
	sector_t head_pos;		/* sector after the last head operation */
	struct wbtdm_cache cache;
	struct wbtdm_stats stats;
};

/* Per-request data. */
struct wbtdm_cmd {
	struct hrtimer timer;
	blk_status_t status;
};

/* Set once the disk is live; cleared under the module's param lock. */
static struct wbtdm_dev *wbtdm_dev;

/* ---- service-time model (all under dev->lock) ---- */

static u64 wbtdm_xfer_ns(const struct wbtdm_dev *d, u32 bytes)
{
	return div64_u64((u64)bytes * NSEC_PER_SEC, d->bw_bytes);
}

/* Book the head for one operation; returns when it is done. */
static u64 wbtdm_head_op(struct wbtdm_dev *d, u64 now, sector_t pos,
			 u32 sectors, u32 xfer_bytes, u64 extra_ns)
{
	u64 start = max(now, d->head_free_ns);
	u64 cost = pos == d->head_pos ? d->seq_access_ns : d->access_ns;

	cost += wbtdm_xfer_ns(d, xfer_bytes) + extra_ns;
	d->head_free_ns = start + cost;
	d->head_pos = pos + sectors;
	return d->head_free_ns;
}

static void wbtdm_cache_expire(struct wbtdm_cache *c, u64 now)
{
	while (c->count && c->ring[c->tail].done_ns <= now) {
		c->dirty -= c->ring[c->tail].bytes;
		c->tail = (c->tail + 1) % c->size;
		c->count--;
	}
}

/* When @bytes more fit, given the booked destages; needs bytes <= cap. */
static u64 wbtdm_cache_room_ns(const struct wbtdm_cache *c, u64 now,
			       u32 bytes)
{
	u64 dirty = c->dirty;
	u32 i = c->tail;
	u32 n = c->count;

	while (n == c->size || dirty + bytes > c->cap) {
		dirty -= c->ring[i].bytes;
		now = c->ring[i].done_ns;
		i = (i + 1) % c->size;
		n--;
	}
	return now;
}

static void wbtdm_cache_push(struct wbtdm_cache *c, u64 admit_ns,
			     u64 done_ns, u32 bytes)
{
	struct wbtdm_destage *e = &c->ring[(c->tail + c->count) % c->size];

	e->admit_ns = admit_ns;
	e->done_ns = done_ns;
	e->bytes = bytes;
	c->count++;
	c->dirty += bytes;
}

/* Bytes in the cache at @now; the newest writes may still wait for room. */
static u64 wbtdm_cache_dirty(struct wbtdm_cache *c, u64 now)
{
	u64 dirty;
	u32 n;

	wbtdm_cache_expire(c, now);
	dirty = c->dirty;
	for (n = c->count; n; n--) {
		const struct wbtdm_destage *e;

		e = &c->ring[(c->tail + n - 1) % c->size];
		if (e->admit_ns <= now)
			break;
		dirty -= e->bytes;
	}
	return dirty;
}

static u64 wbtdm_cached_write(struct wbtdm_dev *d, u64 now,
			      struct request *rq, u64 extra_ns)
{
	struct wbtdm_cache *c = &d->cache;
	u32 bytes = blk_rq_bytes(rq);
	u64 admit, destaged;

	wbtdm_cache_expire(c, now);
	admit = max(wbtdm_cache_room_ns(c, now, bytes), c->admit_ns);
	if (admit > now)
		d->stats.cache_full_waits++;
	c->admit_ns = admit;
	/* The head is busy until every earlier destage, so start >= admit. */
	destaged = wbtdm_head_op(d, now, blk_rq_pos(rq), bytes >> SECTOR_SHIFT,
				 bytes, extra_ns);
	wbtdm_cache_push(c, admit, destaged, bytes);
	d->stats.cached_writes++;
	return admit + WBTDM_CACHE_ACK_NSEC + extra_ns;
}

static u64 wbtdm_write(struct wbtdm_dev *d, u64 now, struct request *rq,
		       u64 extra_ns)
{
	u32 bytes = blk_rq_bytes(rq);

	d->stats.writes++;
	d->stats.write_bytes += bytes;
	if (rq->cmd_flags & REQ_FUA)
		d->stats.fua++;
	/* FUA, no cache, or larger than the whole cache: straight to media. */
	if (!(rq->cmd_flags & REQ_FUA) && bytes <= d->cache.cap)
		return wbtdm_cached_write(d, now, rq, extra_ns);
	return wbtdm_head_op(d, now, blk_rq_pos(rq), bytes >> SECTOR_SHIFT,
			     bytes, extra_ns);
}

/* Book @rq, which arrived at @now; returns its completion time. */
static u64 wbtdm_schedule(struct wbtdm_dev *d, struct request *rq, u64 now)
{
	u64 extra_ns = (u64)READ_ONCE(extra_latency_us) * NSEC_PER_USEC;
	u32 inflight = atomic_inc_return(&d->inflight);
	u32 bytes = blk_rq_bytes(rq);
	sector_t pos = blk_rq_pos(rq);
	u64 due;

	spin_lock(&d->lock);
	d->stats.max_inflight = max_t(u64, d->stats.max_inflight, inflight);
	switch (req_op(rq)) {
	case REQ_OP_READ:
		d->stats.reads++;
		d->stats.read_bytes += bytes;
		due = wbtdm_head_op(d, now, pos, bytes >> SECTOR_SHIFT, bytes,
				    extra_ns);
		break;
	case REQ_OP_WRITE:
		due = wbtdm_write(d, now, rq, extra_ns);
		break;
	case REQ_OP_FLUSH:
		d->stats.flushes++;
		due = wbtdm_head_op(d, now, d->head_pos, 0, 0, extra_ns);
		break;
	case REQ_OP_DISCARD:
		d->stats.discards++;
		due = wbtdm_head_op(d, now, pos, bytes >> SECTOR_SHIFT, 0,
				    extra_ns);
		break;
	case REQ_OP_WRITE_ZEROES:
		d->stats.write_zeroes++;
		due = wbtdm_head_op(d, now, pos, bytes >> SECTOR_SHIFT, bytes,
				    extra_ns);
		break;
	default:
		due = now;
		break;
	}
	spin_unlock(&d->lock);
	return due + d->flight_ns;
}

/* ---- data store ---- */

static struct page *wbtdm_get_page(struct wbtdm_dev *d, pgoff_t idx)
{
	struct page *page = xa_load(&d->pages, idx);
	struct page *old;

	if (page)
		return page;
	page = alloc_page(GFP_NOIO | __GFP_ZERO | __GFP_HIGHMEM);
	if (!page)
		return NULL;
	/* Another queue_rq may have raced us to this index. */
	old = xa_cmpxchg(&d->pages, idx, NULL, page, GFP_NOIO);
	if (!old)
		return page;
	__free_page(page);
	return xa_is_err(old) ? NULL : old;
}

static int wbtdm_alloc_range(struct wbtdm_dev *d, sector_t pos, u32 sectors)
{
	pgoff_t idx = pos >> PAGE_SECTORS_SHIFT;
	pgoff_t last = (pos + sectors - 1) >> PAGE_SECTORS_SHIFT;

	for (; idx <= last; idx++)
		if (!wbtdm_get_page(d, idx))
			return -ENOMEM;
	return 0;
}

/* Copy within one store page. */
static void wbtdm_copy_chunk(struct wbtdm_dev *d, sector_t pos, void *buf,
			     u32 len, bool write)
{
	struct page *page = xa_load(&d->pages, pos >> PAGE_SECTORS_SHIFT);
	u32 off = (pos & (PAGE_SECTORS - 1)) << SECTOR_SHIFT;
	void *p;

	if (!page) {
		/* Writes allocated their pages under data_sem. */
		if (!WARN_ON_ONCE(write))
			memset(buf, 0, len);
		return;
	}
	p = kmap_local_page(page);
	if (write)
		memcpy(p + off, buf, len);
	else
		memcpy(buf, p + off, len);
	kunmap_local(p);
}

static void wbtdm_copy_rq(struct wbtdm_dev *d, struct request *rq,
			  bool write)
{
	sector_t pos = blk_rq_pos(rq);
	struct req_iterator iter;
	struct bio_vec bv;

	rq_for_each_segment(bv, rq, iter) {
		void *buf = bvec_kmap_local(&bv);
		u32 done = 0;

		while (done < bv.bv_len) {
			u32 off = (pos & (PAGE_SECTORS - 1)) << SECTOR_SHIFT;
			u32 n = min_t(u32, bv.bv_len - done, PAGE_SIZE - off);

			wbtdm_copy_chunk(d, pos, buf + done, n, write);
			done += n;
			pos += n >> SECTOR_SHIFT;
		}
		kunmap_local(buf);
		if (!write)
			flush_dcache_page(bv.bv_page);
	}
}

/* Zero @sectors inside one store page, if it exists. */
static void wbtdm_zero_partial(struct wbtdm_dev *d, sector_t pos, u32 sectors)
{
	struct page *page = xa_load(&d->pages, pos >> PAGE_SECTORS_SHIFT);
	u32 off = (pos & (PAGE_SECTORS - 1)) << SECTOR_SHIFT;

	if (page)
		memzero_page(page, off, sectors << SECTOR_SHIFT);
}

/* Discard and write-zeroes: unwritten pages read as zeros, so free them. */
static void wbtdm_zero_range(struct wbtdm_dev *d, sector_t pos, u32 sectors)
{
	sector_t end = pos + sectors;
	sector_t first = round_up(pos, PAGE_SECTORS);
	sector_t last = round_down(end, PAGE_SECTORS);
	struct page *page;
	unsigned long idx;

	if (first >= last) {
		/* No whole page inside: at most two partial ones. */
		sector_t mid = min(first, end);

		wbtdm_zero_partial(d, pos, mid - pos);
		if (end > mid)
			wbtdm_zero_partial(d, mid, end - mid);
		return;
	}
	if (pos < first)
		wbtdm_zero_partial(d, pos, first - pos);
	xa_for_each_range(&d->pages, idx, page, first >> PAGE_SECTORS_SHIFT,
			  (last >> PAGE_SECTORS_SHIFT) - 1) {
		xa_erase(&d->pages, idx);
		__free_page(page);
		cond_resched();
	}
	if (end > last)
		wbtdm_zero_partial(d, last, end - last);
}

static blk_status_t wbtdm_rw(struct wbtdm_dev *d, struct request *rq,
			     bool write)
{
	blk_status_t st = BLK_STS_OK;

	down_read(&d->data_sem);
	if (write && wbtdm_alloc_range(d, blk_rq_pos(rq), blk_rq_sectors(rq)))
		st = BLK_STS_RESOURCE;
	else
		wbtdm_copy_rq(d, rq, write);
	up_read(&d->data_sem);
	return st;
}

static blk_status_t wbtdm_transfer(struct wbtdm_dev *d, struct request *rq)
{
	switch (req_op(rq)) {
	case REQ_OP_READ:
		return wbtdm_rw(d, rq, false);
	case REQ_OP_WRITE:
		return wbtdm_rw(d, rq, true);
	case REQ_OP_DISCARD:
	case REQ_OP_WRITE_ZEROES:
		down_write(&d->data_sem);
		wbtdm_zero_range(d, blk_rq_pos(rq), blk_rq_sectors(rq));
		up_write(&d->data_sem);
		return BLK_STS_OK;
	case REQ_OP_FLUSH:
		return BLK_STS_OK;
	default:
		return BLK_STS_NOTSUPP;
	}
}

static void wbtdm_free_pages(struct wbtdm_dev *d)
{
	struct page *page;
	unsigned long idx;

	xa_for_each(&d->pages, idx, page)
		__free_page(page);
	xa_destroy(&d->pages);
}

/* ---- blk-mq ---- */

static enum hrtimer_restart wbtdm_timer_fn(struct hrtimer *timer)
{
	struct wbtdm_cmd *cmd = container_of(timer, struct wbtdm_cmd, timer);

	blk_mq_complete_request(blk_mq_rq_from_pdu(cmd));
	return HRTIMER_NORESTART;
}

static blk_status_t wbtdm_queue_rq(struct blk_mq_hw_ctx *hctx,
				   const struct blk_mq_queue_data *bd)
{
	struct wbtdm_dev *d = hctx->queue->queuedata;
	struct wbtdm_cmd *cmd = blk_mq_rq_to_pdu(bd->rq);
	u64 now = ktime_get_ns();
	blk_status_t st;

	blk_mq_start_request(bd->rq);
	/* Copy before booking so a failed allocation books nothing. */
	st = wbtdm_transfer(d, bd->rq);
	if (st == BLK_STS_RESOURCE)
		return st;
	cmd->status = st;
	hrtimer_start(&cmd->timer, ns_to_ktime(wbtdm_schedule(d, bd->rq, now)),
		      HRTIMER_MODE_ABS);
	return BLK_STS_OK;
}

static void wbtdm_complete(struct request *rq)
{
	struct wbtdm_dev *d = rq->q->queuedata;
	struct wbtdm_cmd *cmd = blk_mq_rq_to_pdu(rq);

	atomic_dec(&d->inflight);
	blk_mq_end_request(rq, cmd->status);
}

/* A slow model is not a hung one: its timer will complete the request. */
static enum blk_eh_timer_return wbtdm_timeout(struct request *rq)
{
	struct wbtdm_dev *d = rq->q->queuedata;

	atomic_inc(&d->timeouts);
	pr_warn_ratelimited("request at sector %llu still in service\n",
			    (unsigned long long)blk_rq_pos(rq));
	return BLK_EH_RESET_TIMER;
}

static int wbtdm_init_request(struct blk_mq_tag_set *set, struct request *rq,
			      unsigned int hctx_idx, unsigned int numa_node)
{
	struct wbtdm_cmd *cmd = blk_mq_rq_to_pdu(rq);

	hrtimer_init(&cmd->timer, CLOCK_MONOTONIC, HRTIMER_MODE_ABS);
	cmd->timer.function = wbtdm_timer_fn;
	return 0;
}

static void wbtdm_exit_request(struct blk_mq_tag_set *set, struct request *rq,
			       unsigned int hctx_idx)
{
	struct wbtdm_cmd *cmd = blk_mq_rq_to_pdu(rq);

	hrtimer_cancel(&cmd->timer);
}

static const struct blk_mq_ops wbtdm_mq_ops = {
	.queue_rq	= wbtdm_queue_rq,
	.complete	= wbtdm_complete,
	.timeout	= wbtdm_timeout,
	.init_request	= wbtdm_init_request,
	.exit_request	= wbtdm_exit_request,
};

static const struct block_device_operations wbtdm_fops = {
	.owner		= THIS_MODULE,
};

/* ---- stats ---- */

static int wbtdm_get_stats(char *buf, const struct kernel_param *kp)
{
	struct wbtdm_dev *d = wbtdm_dev;
	struct wbtdm_stats s;
	u64 now = ktime_get_ns();
	u64 dirty, backlog;

	if (!d)
		return -ENODEV;
	spin_lock(&d->lock);
	s = d->stats;
	dirty = d->cache.size ? wbtdm_cache_dirty(&d->cache, now) : 0;
	backlog = d->head_free_ns > now ? d->head_free_ns - now : 0;
	spin_unlock(&d->lock);
	return scnprintf(buf, PAGE_SIZE,
			 "reads %llu\nwrites %llu\nflushes %llu\nfua %llu\n"
			 "discards %llu\nwrite_zeroes %llu\n"
			 "read_bytes %llu\nwrite_bytes %llu\n"
			 "cached_writes %llu\ncache_full_waits %llu\n"
			 "inflight %d\nmax_inflight %llu\n"
			 "cache_dirty_bytes %llu\nhead_backlog_us %llu\n"
			 "timeouts %d\n",
			 s.reads, s.writes, s.flushes, s.fua, s.discards,
			 s.write_zeroes, s.read_bytes, s.write_bytes,
			 s.cached_writes, s.cache_full_waits,
			 atomic_read(&d->inflight), s.max_inflight,
			 dirty, div_u64(backlog, NSEC_PER_USEC),
			 atomic_read(&d->timeouts));
}

static const struct kernel_param_ops wbtdm_stats_ops = {
	.get = wbtdm_get_stats,
};

module_param_cb(stats, &wbtdm_stats_ops, NULL, 0444);
MODULE_PARM_DESC(stats, "Counters, one \"name value\" per line (read-only)");

/* Any write zeroes the counters; max_inflight restarts from inflight. */
static int wbtdm_reset_stats(const char *val, const struct kernel_param *kp)
{
	struct wbtdm_dev *d = wbtdm_dev;

	if (!d)
		return -ENODEV;
	spin_lock(&d->lock);
	memset(&d->stats, 0, sizeof(d->stats));
	d->stats.max_inflight = atomic_read(&d->inflight);
	spin_unlock(&d->lock);
	atomic_set(&d->timeouts, 0);
	return 0;
}

static const struct kernel_param_ops wbtdm_reset_ops = {
	.set = wbtdm_reset_stats,
};

module_param_cb(reset_stats, &wbtdm_reset_ops, NULL, 0200);
MODULE_PARM_DESC(reset_stats, "Write anything to zero the counters");

/* ---- setup ---- */

static const struct wbtdm_profile *wbtdm_find_profile(void)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(wbtdm_profiles); i++)
		if (sysfs_streq(profile, wbtdm_profiles[i].name))
			return &wbtdm_profiles[i];
	return NULL;
}

/* Fill unset knobs from the profile; the params then show what is used. */
static int wbtdm_resolve_knobs(void)
{
	const struct wbtdm_profile *prof = wbtdm_find_profile();
	unsigned int i;

	if (!prof) {
		pr_err("unknown profile \"%s\" (hdd or ssd)\n", profile);
		return -EINVAL;
	}
	for (i = 0; i < WBTDM_NR_KNOBS; i++) {
		const struct wbtdm_knob_info *k = &wbtdm_knob_info[i];

		if (wbtdm_knob[i] == -1)
			wbtdm_knob[i] = prof->knob[i];
		if (wbtdm_knob[i] < k->min || wbtdm_knob[i] > k->max) {
			pr_err("%s=%d out of range [%d, %d]\n", k->name,
			       wbtdm_knob[i], k->min, k->max);
			return -EINVAL;
		}
	}
	return 0;
}

static int wbtdm_cache_init(struct wbtdm_cache *c, int mb)
{
	c->cap = (u64)mb << 20;
	if (!c->cap)
		return 0;
	/* One entry per 4 KiB: only sub-4 KiB writes can run out of them. */
	c->size = c->cap >> 12;
	c->ring = kvcalloc(c->size, sizeof(*c->ring), GFP_KERNEL);
	return c->ring ? 0 : -ENOMEM;
}

static int wbtdm_init_tag_set(struct wbtdm_dev *d)
{
	struct blk_mq_tag_set *set = &d->tag_set;

	set->ops = &wbtdm_mq_ops;
	set->nr_hw_queues = wbtdm_knob[WBTDM_NR_HW_QUEUES];
	set->queue_depth = wbtdm_knob[WBTDM_QUEUE_DEPTH];
	set->numa_node = NUMA_NO_NODE;
	set->cmd_size = sizeof(struct wbtdm_cmd);
	/* queue_rq allocates store pages with GFP_NOIO, so it may sleep. */
	set->flags = BLK_MQ_F_SHOULD_MERGE | BLK_MQ_F_BLOCKING;
	set->driver_data = d;
	return blk_mq_alloc_tag_set(set);
}

static int wbtdm_add_disk(struct wbtdm_dev *d)
{
	const struct wbtdm_disk_props props = {
		.logical_block_size	  = SECTOR_SIZE,
		.physical_block_size	  = WBTDM_PHYS_BLOCK_SIZE,
		.max_hw_sectors		  = WBTDM_MAX_HW_SECTORS,
		.max_discard_sectors	  = UINT_MAX >> SECTOR_SHIFT,
		.max_write_zeroes_sectors = WBTDM_MAX_HW_SECTORS,
		.rotational		  = wbtdm_knob[WBTDM_ROTATIONAL],
		.write_cache		  = d->cache.cap != 0,
	};
	struct gendisk *disk = wbtdm_alloc_disk(&d->tag_set, &props, d);
	int ret;

	if (IS_ERR(disk))
		return PTR_ERR(disk);
	/* What wbt and others read as the device's queue depth. */
	blk_set_queue_depth(disk->queue, wbtdm_knob[WBTDM_QUEUE_DEPTH]);
	disk->fops = &wbtdm_fops;
	disk->private_data = d;
	strscpy(disk->disk_name, "wbtdm0", DISK_NAME_LEN);
	set_capacity(disk, (sector_t)wbtdm_knob[WBTDM_SIZE_MB] <<
			   (20 - SECTOR_SHIFT));
	ret = add_disk(disk);
	if (ret) {
		put_disk(disk);
		return ret;
	}
	d->disk = disk;
	return 0;
}

static void wbtdm_init_model(struct wbtdm_dev *d)
{
	d->access_ns = (u64)wbtdm_knob[WBTDM_ACCESS_US] * NSEC_PER_USEC;
	d->seq_access_ns = (u64)wbtdm_knob[WBTDM_SEQ_ACCESS_US] * NSEC_PER_USEC;
	d->bw_bytes = (u64)wbtdm_knob[WBTDM_BW_MBPS] << 20;
	d->flight_ns = (u64)wbtdm_knob[WBTDM_FLIGHT_US] * NSEC_PER_USEC;
	xa_init(&d->pages);
	init_rwsem(&d->data_sem);
	spin_lock_init(&d->lock);
	atomic_set(&d->inflight, 0);
	atomic_set(&d->timeouts, 0);
}

static int __init wbtdm_init(void)
{
	struct wbtdm_dev *d;
	int ret;

	ret = wbtdm_resolve_knobs();
	if (ret)
		return ret;
	d = kzalloc(sizeof(*d), GFP_KERNEL);
	if (!d)
		return -ENOMEM;
	wbtdm_init_model(d);
	ret = wbtdm_cache_init(&d->cache, wbtdm_knob[WBTDM_WCACHE_MB]);
	if (ret)
		goto err_free_dev;
	ret = wbtdm_init_tag_set(d);
	if (ret)
		goto err_free_cache;
	ret = wbtdm_add_disk(d);
	if (ret)
		goto err_free_tag_set;

	kernel_param_lock(THIS_MODULE);
	wbtdm_dev = d;
	kernel_param_unlock(THIS_MODULE);
	pr_info("wbtdm0: %s, %d MiB, qd %d, %d MiB/s, access %d/%d us, wcache %d MiB, flight %d us\n",
		profile, wbtdm_knob[WBTDM_SIZE_MB],
		wbtdm_knob[WBTDM_QUEUE_DEPTH], wbtdm_knob[WBTDM_BW_MBPS],
		wbtdm_knob[WBTDM_ACCESS_US], wbtdm_knob[WBTDM_SEQ_ACCESS_US],
		wbtdm_knob[WBTDM_WCACHE_MB], wbtdm_knob[WBTDM_FLIGHT_US]);
	return 0;

err_free_tag_set:
	blk_mq_free_tag_set(&d->tag_set);
err_free_cache:
	kvfree(d->cache.ring);
err_free_dev:
	kfree(d);
	return ret;
}

static void __exit wbtdm_exit(void)
{
	struct wbtdm_dev *d = wbtdm_dev;

	kernel_param_lock(THIS_MODULE);
	wbtdm_dev = NULL;
	kernel_param_unlock(THIS_MODULE);

	/* del_gendisk() waits for every request, so no timer is left. */
	del_gendisk(d->disk);
	put_disk(d->disk);
	blk_mq_free_tag_set(&d->tag_set);
	wbtdm_free_pages(d);
	kvfree(d->cache.ring);
	kfree(d);
}

module_init(wbtdm_init);
module_exit(wbtdm_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Test-only disk model: FIFO head, queue depth, volatile write cache");
MODULE_AUTHOR("dm-wbthrottle developers");
