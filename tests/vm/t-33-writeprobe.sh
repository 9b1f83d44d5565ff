#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Writes alone go deeper than step 0 only where depth buys writes. On the
# disk model as a network volume (every request 50 ms outside the head, in
# parallel; 128 tags: 16 in flight make 320 writes a second, 31 make 620,
# both well within what the emulated guest can send) random buffered
# writeback, no read at all, takes the step below 0 and keeps it, whether
# the volume calls itself rotational or not (many do). On the model as a
# rotational disk that serves one request at a time (2 ms each), the same
# load tries one step deeper and comes back: never two steps, and at step
# 0 at the end. On a fast null_blk, fast reads beside a trickle of direct
# writes deepen the step (upstream's rule); writes alone then bring it
# back, since no try found that depth.
# vm-timeout: 300
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-wbt.sh"
trap diskmodel_cleanup EXIT

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

# rwriter NAME: random 4 KiB buffered writes into NAME for up to 300 s,
# as a job (exec: killing the job kills fio). Its pages are 16 KiB apart
# (24 MiB of them, more than the dirty limit), so writeback sends one
# small request per page and the block layer below can merge none: on a
# disk of one head, more in flight then completes no more requests.
rwriter() {
	exec fio --name=rw --filename="/dev/mapper/$1" --rw=randwrite --bs=4k \
		--blockalign=16k --size=96M --invalidate=0 --time_based \
		--runtime=300 >/dev/null
}

# model ARGS...: a fresh disk model (ssd: 128 tags, non-rotational unless
# ARGS say) with wbthrottle wp over it, self-tuned, the writer running.
model() {
	run insmod "$ko" profile=ssd size_mb=128 "$@"
	wait_for 10 test -b /dev/wbtdm0 || die "no /dev/wbtdm0"
	wbt_create wp /dev/wbtdm0
	assert_eq "$(st wp scaling)/$(st wp step)/$(st wp normal)" 1/0/8 "self-tuned, step 0"
	exec 9<>/dev/mapper/wp	# fio's close must not write back itself
	rwriter wp &
	writer=$!
	wait_for 60 waited wp || { st_log wp; die "no write waited"; }
}

# waited NAME: a background or normal write of NAME waited for a slot
# (the flusher's writeback is background below the dirty limit).
waited() {
	[ $(($(st "$1" bg_throttled) + $(st "$1" normal_throttled))) -ge 1 ]
}

unmodel() {
	kill "$writer"
	wait "$writer" 2>/dev/null || true
	exec 9<&-
	dm_remove wp
	run rmmod wbt_diskmodel
}

diskmodel_ko
vm_dirty $((2 << 20)) $((16 << 20))

for rot in 0 1; do
	model flight_us=50000 rotational=$rot
	wait_for 60 step_le wp -1 ||
		{ st_log wp; die "writes alone did not go deeper where depth pays (rotational=$rot)"; }
	# A try that did not pay is back at 0 two windows (0.2 s) later.
	sleep 2
	st_log wp
	assert_le "$(st wp step)" -1 "writes alone kept the deeper step (rotational=$rot)"
	# Step 0 lets 16 writes go at most (a dirtier waiting lifts to max).
	assert_ge "$(($(st wp bg_hwm) + $(st wp normal_hwm)))" 17 \
		"more writeback in flight than step 0 lets go (rotational=$rot)"
	unmodel
done

model access_us=2000 seq_access_us=2000 rotational=1
changes=$(st wp step_changes)
low=$(min_step wp 8)
st_log wp
assert_ge "$(st wp step_changes)" $((changes + 2)) "writes alone tried more depth and came back"
assert_ge "$low" -1 "one try at a time, never two steps deeper"
wait_for 30 step_ge wp 0 || { st_log wp; die "the try did not come back to step 0"; }
unmodel

dev=$(lower_dev nullb 512 hw_queue_depth=128)
wbt_create wf "$dev"
# Direct writes are sampled but never held: nothing waits, nothing is tried.
fio --name=w --filename=/dev/mapper/wf --rw=randwrite --bs=4k --direct=1 \
	--rate_iops=100 --offset=0 --size=64M --time_based --runtime=300 >/dev/null &
dwriter=$!
fio --name=r --filename=/dev/mapper/wf --rw=randread --bs=4k --direct=1 \
	--ioengine=libaio --iodepth=4 --offset=256M --size=64M --time_based \
	--runtime=300 >/dev/null &
reader=$!
wait_for 60 step_le wf -1 || { st_log wf; die "fast reads did not deepen the step"; }
st_log wf
kill "$reader"
wait "$reader" 2>/dev/null || true
wait_for 60 step_ge wf 0 || { st_log wf; die "writes alone kept a step the reads found"; }
st_log wf
kill "$dwriter"
wait "$dwriter" 2>/dev/null || true
dm_remove wf
