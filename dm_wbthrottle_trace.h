/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Tracepoints of dm-wbthrottle, in the spirit of block/blk-wbt's wbt_stat,
 * wbt_step and wtc_lat: watch them with
 *	perf trace -e 'wbthrottle:*'   or   trace-cmd record -e wbthrottle
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM wbthrottle

#if !defined(DM_WBTHROTTLE_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define DM_WBTHROTTLE_TRACE_H

#include <linux/tracepoint.h>
#include "wbt_names.h"

/*
 * TP_printk() may not call module code: trace-cmd and perf decode events
 * from the format file alone. So the queue and verdict names (the lists
 * of wbt_names.h, which wtc_queue_name() and wtc_lat_name() use too) are
 * symbol tables, and TRACE_DEFINE_ENUM() puts the enum values, not their
 * names, into the format file.
 */
#undef WTC_NAME
#undef WTC_NAME_LAST
#define WTC_NAME(v, name)	TRACE_DEFINE_ENUM(v);
#define WTC_NAME_LAST(v, name)	TRACE_DEFINE_ENUM(v);

WTC_QUEUE_NAMES
WTC_LAT_NAMES

#undef WTC_NAME
#undef WTC_NAME_LAST
#define WTC_NAME(v, name)	{ v, name },
#define WTC_NAME_LAST(v, name)	{ v, name }

#define show_wt_queue(q)	__print_symbolic(q, WTC_QUEUE_NAMES)
#define show_wt_verdict(v)	__print_symbolic(v, WTC_LAT_NAMES)

/* A latency window ended. */
TRACE_EVENT(wbthrottle_stat,
	TP_PROTO(dev_t dev, const struct wtc_core *c),
	TP_ARGS(dev, c),
	TP_STRUCT__entry(
		__field(dev_t, dev)
		__field(unsigned int, nr_read)
		__field(unsigned int, nr_write)
		__field(u64, min_ns)
		__field(u64, p50_ns)
		__field(u64, p99_ns)
		__field(u64, metric_ns)
		__field(u64, target_ns)
		__field(int, verdict)
	),
	TP_fast_assign(
		__entry->dev = dev;
		__entry->nr_read = c->ctl.last.nr_read;
		__entry->nr_write = c->ctl.last.nr_write;
		__entry->min_ns = c->ctl.last.min_ns;
		__entry->p50_ns = c->ctl.last.p50_ns;
		__entry->p99_ns = c->ctl.last.p99_ns;
		__entry->metric_ns = c->ctl.last.metric_ns;
		__entry->target_ns = c->ctl.lat_target_ns;
		__entry->verdict = c->ctl.last.verdict;
	),
	TP_printk("%d:%d reads=%u writes=%u min=%llu p50=%llu p99=%llu metric=%llu target=%llu verdict=%s",
		  MAJOR(__entry->dev), MINOR(__entry->dev),
		  __entry->nr_read, __entry->nr_write, __entry->min_ns,
		  __entry->p50_ns, __entry->p99_ns, __entry->metric_ns,
		  __entry->target_ns, show_wt_verdict(__entry->verdict))
);

/* The scale step, and with it the limits, changed. */
TRACE_EVENT(wbthrottle_step,
	TP_PROTO(dev_t dev, const struct wtc_core *c),
	TP_ARGS(dev, c),
	TP_STRUCT__entry(
		__field(dev_t, dev)
		__field(int, step)
		__field(unsigned int, max)
		__field(unsigned int, normal)
		__field(unsigned int, background)
		__field(u64, window_ns)
		__field(int, verdict)
	),
	TP_fast_assign(
		__entry->dev = dev;
		__entry->step = c->lim.scale_step;
		__entry->max = c->lim.max_depth;
		__entry->normal = c->lim.wb_normal;
		__entry->background = c->lim.wb_background;
		__entry->window_ns = c->ctl.cur_win_ns;
		__entry->verdict = c->ctl.last.verdict;
	),
	TP_printk("%d:%d step=%d max=%u normal=%u background=%u window=%lluns after=%s",
		  MAJOR(__entry->dev), MINOR(__entry->dev), __entry->step,
		  __entry->max, __entry->normal, __entry->background,
		  __entry->window_ns, show_wt_verdict(__entry->verdict))
);

/* A held bio was let go after waiting held_ns. */
TRACE_EVENT(wbthrottle_wait,
	TP_PROTO(dev_t dev, int queue, u64 held_ns),
	TP_ARGS(dev, queue, held_ns),
	TP_STRUCT__entry(
		__field(dev_t, dev)
		__field(int, queue)
		__field(u64, held_ns)
	),
	TP_fast_assign(
		__entry->dev = dev;
		__entry->queue = queue;
		__entry->held_ns = held_ns;
	),
	TP_printk("%d:%d queue=%s held=%lluns",
		  MAJOR(__entry->dev), MINOR(__entry->dev),
		  show_wt_queue(__entry->queue), __entry->held_ns)
);

#endif /* DM_WBTHROTTLE_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE dm_wbthrottle_trace
#include <trace/define_trace.h>
