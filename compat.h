/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The differences between the kernels dm-wbthrottle builds for, in one
 * place. Force-included by Kbuild; fed by probes of the kernel headers
 * there (probes, not version numbers, because stable kernels backport).
 */
#ifndef WT_COMPAT_H
#define WT_COMPAT_H

#ifdef __KERNEL__
#include <linux/backing-dev-defs.h>
#include <linux/rculist.h>

/*
 * When a task last slept in balance_dirty_pages() on this bdi. Upstream
 * f814bdda774c (v6.8) moved it from the wbs (wb->dirty_sleep, set in the
 * dirtier's cgroup wb) to the bdi (last_bdp_sleep). Before it, blk-wbt read
 * only the root wb and missed dirtiers in other cgroups; here every wb of
 * the bdi is looked at (bdi->wb_list holds the root wb too).
 */
static inline unsigned long wt_bdi_last_dirty_sleep(struct backing_dev_info *bdi)
{
#ifdef WBT_HAVE_LAST_BDP_SLEEP
	return READ_ONCE(bdi->last_bdp_sleep);
#else
	unsigned long last = READ_ONCE(bdi->wb.dirty_sleep);
#ifdef CONFIG_CGROUP_WRITEBACK
	struct bdi_writeback *wb;

	rcu_read_lock();
	list_for_each_entry_rcu(wb, &bdi->wb_list, bdi_node)
		if (time_after(READ_ONCE(wb->dirty_sleep), last))
			last = READ_ONCE(wb->dirty_sleep);
	rcu_read_unlock();
#endif
	return last;
#endif
}
#endif /* __KERNEL__ */

#endif /* WT_COMPAT_H */
