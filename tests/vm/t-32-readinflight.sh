#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# A read slower than 100 ms keeps its protection while it is in flight: on
# the disk model (one head, arrival order, 4 MiB/s, so a read behind two
# 1 MiB writes waits over 0.5 s), with a dirtier waiting in
# balance_dirty_pages() and a reader reading one block at a time, normal
# and background writes never exceed the background limit. Without the
# rule the protection lapsed 100 ms into each read and the waiting dirtier
# lifted writeback to max.
# vm-timeout: 300
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-wbt.sh"
trap diskmodel_cleanup EXIT

diskmodel_ko
run insmod "$ko" profile=hdd size_mb=128 bw_mbps=4 wcache_mb=0
wait_for 10 test -b /dev/wbtdm0 || die "no /dev/wbtdm0"
wbt_create wr /dev/wbtdm0 depth 8
assert_eq "$(st wr background)/$(st wr max)" 2/8 "background and max limits"
vm_dirty $((2 << 20)) $((8 << 20))
# Reads clear of the dirtier's range, no BLKFLSBUF at open (both would
# write dirty pages back as sync writes).
fio --name=reader --filename=/dev/mapper/wr --rw=randread --bs=4k --direct=1 \
	--invalidate=0 --ioengine=psync --offset=100M --size=28M --time_based \
	--runtime=300 --write_lat_log=rd --log_avg_msec=0 >/dev/null &
reader=$!
wait_for 60 st_ge wr n_read 4 || { st_log wr; die "the reader did not start"; }
dirtier_hwm wr 64 6 "$reader"
# The reader's log: completion time (ms) and latency (ns) per read. The
# rule covers a read in flight; between two reads close_io does, unless
# the guest stalled for 100 ms between one read's end and the next.
read -r slowest gap < <(awk -F, '{ t = $1; l = $2 / 1e6
	if (l > m) m = l
	if (NR > 1 && t - l - prev > g) g = t - l - prev
	prev = t } END { printf "%d %d\n", m, g }' rd_clat.1.log)
log "slowest read: $slowest ms; longest gap between reads: $gap ms"
assert_ge "$slowest" 150 "reads waited behind writes for longer than 100 ms"
assert_eq "$(st wr n_sync)" 0 "no sync writes (none to overtake the held ones)"
if [ "$gap" -lt 90 ]; then
	assert_le "$hwm" 2 "background and normal writes in flight within background"
else
	log "the guest stalled between reads: the limit may lift; not checked"
fi
