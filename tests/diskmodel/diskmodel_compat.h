/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Kernel-version differences for wbt_diskmodel, in one place.
 *
 * Kbuild probes the kernel headers and defines:
 *   WBTDM_HAVE_BLK_FEAT - queue features live in struct queue_limits and
 *                         blk_mq_alloc_disk() takes the limits (6.11+).
 * Without it the 6.1 setters are used on the freshly allocated queue.
 */
#ifndef WBTDM_DISKMODEL_COMPAT_H
#define WBTDM_DISKMODEL_COMPAT_H

#include <linux/blk-mq.h>
#include <linux/blkdev.h>

/* What the model tells the block layer about itself. */
struct wbtdm_disk_props {
	unsigned int logical_block_size;
	unsigned int physical_block_size;
	unsigned int max_hw_sectors;
	unsigned int max_discard_sectors;
	unsigned int max_write_zeroes_sectors;
	bool rotational;
	bool write_cache;		/* volatile cache, with FUA */
};

#ifdef WBTDM_HAVE_BLK_FEAT

static inline struct gendisk *
wbtdm_alloc_disk(struct blk_mq_tag_set *set,
		 const struct wbtdm_disk_props *p, void *queuedata)
{
	struct queue_limits lim = {
		.logical_block_size	  = p->logical_block_size,
		.physical_block_size	  = p->physical_block_size,
		.max_hw_sectors		  = p->max_hw_sectors,
		.max_hw_discard_sectors	  = p->max_discard_sectors,
		.discard_granularity	  = p->physical_block_size,
		.max_write_zeroes_sectors = p->max_write_zeroes_sectors,
	};

	if (p->rotational)
		lim.features |= BLK_FEAT_ROTATIONAL;
	if (p->write_cache)
		lim.features |= BLK_FEAT_WRITE_CACHE | BLK_FEAT_FUA;
	return blk_mq_alloc_disk(set, &lim, queuedata);
}

#else /* !WBTDM_HAVE_BLK_FEAT */

static inline struct gendisk *
wbtdm_alloc_disk(struct blk_mq_tag_set *set,
		 const struct wbtdm_disk_props *p, void *queuedata)
{
	struct gendisk *disk = blk_mq_alloc_disk(set, queuedata);
	struct request_queue *q;

	if (IS_ERR(disk))
		return disk;
	q = disk->queue;
	blk_queue_logical_block_size(q, p->logical_block_size);
	blk_queue_physical_block_size(q, p->physical_block_size);
	blk_queue_max_hw_sectors(q, p->max_hw_sectors);
	blk_queue_max_discard_sectors(q, p->max_discard_sectors);
	q->limits.discard_granularity = p->physical_block_size;
	blk_queue_max_write_zeroes_sectors(q, p->max_write_zeroes_sectors);
	if (p->rotational)
		blk_queue_flag_clear(QUEUE_FLAG_NONROT, q);
	else
		blk_queue_flag_set(QUEUE_FLAG_NONROT, q);
	/* Before add_disk(), so wbt_init() sees the cache as it will be. */
	blk_queue_write_cache(q, p->write_cache, p->write_cache);
	return disk;
}

#endif /* WBTDM_HAVE_BLK_FEAT */

#endif /* WBTDM_DISKMODEL_COMPAT_H */
