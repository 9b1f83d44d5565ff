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
#endif

#endif /* WBT_SHIM_H */
