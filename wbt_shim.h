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
typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
typedef int64_t s64;
#define __printf(a, b) __attribute__((format(printf, a, b)))
#ifndef U64_MAX
#define U64_MAX UINT64_MAX
#endif
#endif

#endif /* WBT_SHIM_H */
