#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Who keeps writeback shallow, end to end. (1) Windows of writes alone (no
# read sample) do not hold a step below 0 on a disk where depth buys no
# writes (null_blk completing at once: the CPU is the limit), where
# upstream goes to 3/4 of the queue depth and the next fsync waits for all
# of it: at most one step, to try (t-33 has a disk where it pays); fast
# reads do deepen it, and writes alone bring it back. (2) A dirtier sleeping in
# balance_dirty_pages() beside a reader does not lift writeback: the
# background and normal writes in flight stay within `background`.
# vm-timeout: 400
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-wbt.sh"

trap wbt_cleanup EXIT

# min_step NAME SECS: the lowest step seen in status over SECS seconds.
min_step() {
	local end=$((SECONDS + $2)) min=1000 s
	while [ $SECONDS -lt $end ]; do
		s=$(st "$1" step)
		[ "$s" -lt "$min" ] && min=$s
		sleep 0.1
	done
	echo "$min"
}

# fio_w NAME ARGS...: buffered writes to wf for up to 300 s, run as a job
# (exec: killing the job kills fio).
fio_w() {
	exec fio --name="$1" --filename=/dev/mapper/wf --rw=write --bs=1M \
		--invalidate=0 --time_based --runtime=300 "${@:2}" >/dev/null
}

# (1) A deep, fast disk. Writes alone (a buffered writer) leave the step
# at 0; fast reads beside them deepen it (so this disk can go deeper);
# writes alone again bring it back to 0.
dev=$(lower_dev nullb 512 hw_queue_depth=128)
wbt_create wf "$dev"
assert_eq "$(st wf scaling)" 1 "self-tuning on"
prep_writeback
exec 9<>/dev/mapper/wf	# dd's and fio's closes do not write back all
fio_w writer --offset=0 --size=384M &
writer=$!
wait_for 60 st_ge wf windows 10 || { st_log wf; die "no latency window ended"; }
w0=$(st wf windows)
low=$(min_step wf 10)
st_log wf
assert_ge "$(($(st wf windows) - w0))" 20 "windows ended while only writes went"
assert_ge "$low" -1 "writes alone: no deeper than one step, to try"

# Reads outside the writers' range: a direct read of dirty pages would
# write them back first, as sync writes. --invalidate=0: fio's default
# BLKFLSBUF at open writes back the whole device, as sync writes.
fio --name=fast --filename=/dev/mapper/wf --rw=randread --bs=4k --direct=1 \
	--invalidate=0 \
	--ioengine=libaio --iodepth=4 --offset=448M --size=64M --time_based \
	--runtime=300 >/dev/null &
reader=$!
wait_for 60 step_le wf -1 || { st_log wf; die "fast reads did not deepen the step"; }
log "status wf: $line"
kill "$reader"
wait "$reader" 2>/dev/null || true
wait_for 60 step_ge wf 0 || { st_log wf; die "writes alone did not bring the step back to 0"; }
log "status wf: $line"
kill "$writer"
wait "$writer" 2>/dev/null || true
exec 9<&-
dm_remove wf

# (2) A slow disk, a fixed depth (8: normal 4, background 2), a reader
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
