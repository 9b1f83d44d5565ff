/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The names of the hold queues and of the latency verdicts, one list each,
 * for the status line (wbt_core.c) and the tracepoints' symbol tables
 * (dm_wbthrottle_trace.h) alike. The idiom of include/trace/events/ (EM()
 * and EMe() there): the includer defines WTC_NAME(value, "name") for each
 * entry and WTC_NAME_LAST() for the last, expands the list, and undefines
 * them. Include after wbt_core.h.
 */
#ifndef WBT_NAMES_H
#define WBT_NAMES_H

#define WTC_QUEUE_NAMES					\
	WTC_NAME(WTC_Q_RECLAIM, "reclaim")		\
	WTC_NAME(WTC_Q_SYNC, "sync")			\
	WTC_NAME(WTC_Q_NORMAL, "normal")		\
	WTC_NAME(WTC_Q_BG, "bg")			\
	WTC_NAME(WTC_Q_DISCARD, "discard")		\
	WTC_NAME_LAST(WTC_Q_NONE, "none")

#define WTC_LAT_NAMES					\
	WTC_NAME(WTC_LAT_NONE, "none")			\
	WTC_NAME(WTC_LAT_OK, "ok")			\
	WTC_NAME(WTC_LAT_UNKNOWN, "unknown")		\
	WTC_NAME(WTC_LAT_UNKNOWN_WRITES, "unknown_writes")	\
	WTC_NAME_LAST(WTC_LAT_EXCEEDED, "exceeded")

#endif /* WBT_NAMES_H */
