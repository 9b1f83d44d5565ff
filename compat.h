/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The differences between the kernels dm-wbthrottle builds for, in one
 * place. Force-included by Kbuild; fed by probes of the kernel headers
 * there (probes, not version numbers, because stable kernels backport).
 */
#ifndef WBT_COMPAT_H
#define WBT_COMPAT_H

#ifdef __KERNEL__
#include <linux/backing-dev-defs.h>

/*
 * When a task last slept in balance_dirty_pages() on this bdi. Upstream
 * f814bdda774c (v6.8) moved it from the root wb (wb.dirty_sleep, only
 * updated by root-cgroup dirtiers) to the bdi (last_bdp_sleep).
 */
static inline unsigned long wbt_bdi_last_dirty_sleep(struct backing_dev_info *bdi)
{
#ifdef WBT_HAVE_LAST_BDP_SLEEP
	return READ_ONCE(bdi->last_bdp_sleep);
#else
	return READ_ONCE(bdi->wb.dirty_sleep);
#endif
}
#endif /* __KERNEL__ */

#endif /* WBT_COMPAT_H */
