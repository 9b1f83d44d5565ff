#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Who keeps writeback shallow, end to end: a dirtier sleeping in
# balance_dirty_pages() beside a reader does not lift writeback: the
# background and normal writes in flight stay within `background`. (How
# deep writes alone go is t-33's; until 2026-12-07 this test had them
# never leave step 0 on a null_blk, which the write probe now deepens:
# more depth completes more writes there.)
# vm-timeout: 400
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-wbt.sh"

trap wbt_cleanup EXIT

# A slow disk, a fixed depth (8: normal 4, background 2), a reader
# throughout, and a dirtier that sleeps in balance_dirty_pages().
dev=$(slow_nullb 128)
wbt_create wl "$dev" depth 8
assert_eq "$(st wl background)" 2 "background limit"
assert_eq "$(st wl normal)" 4 "normal limit"
vm_dirty $((2 << 20)) $((8 << 20))
# The reader stays clear of the dirtier's range: a direct read of dirty
# pages would write them back first, as sync writes, and so would fio's
# default BLKFLSBUF at open (--invalidate=0), which on a loaded host came
# after the dirtier had started. Four reads in flight,
# each 20 ms: one completes every 5 ms, so "reads in the last 100 ms" holds
# throughout unless the whole guest stalls; the latency log tells.
fio --name=reader --filename=/dev/mapper/wl --rw=randread --bs=4k --direct=1 \
	--invalidate=0 \
	--ioengine=libaio --iodepth=4 --offset=100M --size=28M --time_based \
	--runtime=300 --write_lat_log=rd --log_avg_msec=0 >/dev/null &
reader=$!
wait_for 60 st_ge wl n_read 8 || { st_log wl; die "the reader did not start"; }
dirtier_hwm wl 96 5 "$reader"
slowest=$(awk -F, '$2 > m { m = $2 } END { print int(m / 1000000) }' rd_clat.1.log)
log "slowest read: $slowest ms"
assert_ge "$(st wl slept)" 1 "writeback waited at the limit"
assert_eq "$(st wl n_sync)" 0 "no sync writes (none to overtake the held ones)"
if [ "$slowest" -lt 90 ]; then
	assert_le "$hwm" 2 "background and normal writes in flight within background"
else
	log "the guest stalled: reads were not recent for a while, the limit may lift; not checked"
fi
