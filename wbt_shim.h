/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The few types and helpers wbt_core needs, from the kernel when built by
 * Kbuild and from libc when built for the user-space tests. This is the only
 * place where the throttling logic touches either world.
 */
#ifndef WTC_SHIM_H
#define WTC_SHIM_H

#ifdef __KERNEL__
#include <linux/types.h>
#include <linux/kernel.h>
#include <linux/limits.h>
#include <linux/string.h>
#include <linux/stdarg.h>
#include <linux/compiler.h>
#include <linux/atomic.h>
#define WTC_READ_ONCE(x)	READ_ONCE(x)
#define WTC_WRITE_ONCE(x, v)	WRITE_ONCE(x, v)
#define wtc_cmpxchg64(p, old, new)	cmpxchg64(p, old, new)
typedef atomic_t wtc_atomic_t;
#define wtc_atomic_read(a)		atomic_read(a)
#define wtc_atomic_set(a, v)		atomic_set(a, v)
#define wtc_atomic_inc_not_zero(a)	atomic_inc_not_zero(a)
#define wtc_atomic_dec_return(a)	atomic_dec_return(a)
#else
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <limits.h>
/* As the kernel defines them (asm-generic/int-ll64.h), so formats agree. */
typedef unsigned char u8;
typedef unsigned short u16;
typedef unsigned int u32;
typedef unsigned long long u64;
typedef long long s64;
#define __printf(a, b) __attribute__((format(printf, a, b)))
#ifndef U64_MAX
#define U64_MAX UINT64_MAX
#endif
/* What the kernel's READ_ONCE(), WRITE_ONCE() and cmpxchg64() do. */
#define WTC_READ_ONCE(x)	__atomic_load_n(&(x), __ATOMIC_RELAXED)
#define WTC_WRITE_ONCE(x, v)	__atomic_store_n(&(x), (v), __ATOMIC_RELAXED)
static inline u64 wtc_cmpxchg64(u64 *p, u64 old, u64 new)
{
	__atomic_compare_exchange_n(p, &old, new, false, __ATOMIC_SEQ_CST,
				    __ATOMIC_SEQ_CST);
	return old;
}

/* ... and atomic_t with the few operations the merge groups use. */
typedef struct { int counter; } atomic_t;
typedef atomic_t wtc_atomic_t;

static inline int wtc_atomic_read(const wtc_atomic_t *a)
{
	return __atomic_load_n(&a->counter, __ATOMIC_RELAXED);
}

static inline void wtc_atomic_set(wtc_atomic_t *a, int v)
{
	__atomic_store_n(&a->counter, v, __ATOMIC_RELAXED);
}

static inline bool wtc_atomic_inc_not_zero(wtc_atomic_t *a)
{
	int v = wtc_atomic_read(a);

	do {
		if (!v)
			return false;
	} while (!__atomic_compare_exchange_n(&a->counter, &v, v + 1, false,
					      __ATOMIC_SEQ_CST, __ATOMIC_RELAXED));
	return true;
}

static inline int wtc_atomic_dec_return(wtc_atomic_t *a)
{
	return __atomic_sub_fetch(&a->counter, 1, __ATOMIC_SEQ_CST);
}
#endif

#endif /* WTC_SHIM_H */
