/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The few types and helpers wbt_core needs, from the kernel when built by
 * Kbuild and from libc when built for the user-space tests. This is the only
 * place where the throttling logic touches either world.
 */
#ifndef WBT_SHIM_H
#define WBT_SHIM_H

#ifdef __KERNEL__
#include <linux/types.h>
#include <linux/kernel.h>
#include <linux/limits.h>
#include <linux/string.h>
#include <linux/stdarg.h>
#include <linux/compiler.h>
#include <linux/atomic.h>
#define WBT_READ_ONCE(x)	READ_ONCE(x)
#define WBT_WRITE_ONCE(x, v)	WRITE_ONCE(x, v)
#define wbt_cmpxchg64(p, old, new)	cmpxchg64(p, old, new)
#else
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <limits.h>
typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
typedef int64_t s64;
#define __printf(a, b) __attribute__((format(printf, a, b)))
#ifndef U64_MAX
#define U64_MAX UINT64_MAX
#endif
/* What the kernel's READ_ONCE(), WRITE_ONCE() and cmpxchg64() do. */
#define WBT_READ_ONCE(x)	(*(const volatile __typeof__(x) *)&(x))
#define WBT_WRITE_ONCE(x, v)	(*(volatile __typeof__(x) *)&(x) = (v))
static inline u64 wbt_cmpxchg64(u64 *p, u64 old, u64 new)
{
	__atomic_compare_exchange_n(p, &old, new, false, __ATOMIC_SEQ_CST,
				    __ATOMIC_SEQ_CST);
	return old;
}
#endif

#endif /* WBT_SHIM_H */
