#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Self-tuning on a device whose read latency changes at run time (dm-delay
# below the target, reloaded): while reads miss the target the step goes
# up and the depth down; when the device recovers the step comes back to
# neutral or deeper. Both show in status and in the tracepoints.
# vm-timeout: 300
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-wbt.sh"

tr=/sys/kernel/tracing
cleanup() {
	local r=$?
	set +e
	[ -e $tr/events/wbthrottle/enable ] && echo 0 >$tr/events/wbthrottle/enable
	(exit $r)
	wbt_cleanup
}
trap cleanup EXIT

dev=$(lower_dev nullb 512)
size=$(sectors "$dev")
run modprobe dm-delay
dm_create slow "0 $size delay $dev 0 0"
wbt_create wt /dev/mapper/slow lat_us 20000
assert_eq "$(st wt scaling)" 1 "self-tuning on"
assert_eq "$(st wt lat_target_us)" 20000 "latency target"

[ -d $tr/events ] || run mount -t tracefs tracefs $tr
sysfs_write $tr/trace ""
sysfs_write $tr/events/wbthrottle/enable 1

# A steady writer and a steady reader for the whole test.
exec 9<>/dev/mapper/wt
(while :; do dd if=/dev/zero of=/dev/mapper/wt bs=1M count=64 conv=notrunc status=none; done) &
(while :; do dd if=/dev/mapper/wt of=/dev/null bs=4k count=64 skip=$((RANDOM * 3)) iflag=direct status=none; done) &

wait_for 60 sh -c "dmsetup status wt | grep -q 'windows=[1-9]'" || die "no latency window ended"
wait_for 30 step_le wt 0 || die "step above 0 before the device got slow"
log "status wt: $line"
max0=$(field max)

# Reads now take 60 ms on the device: far above the 20 ms target.
run dmsetup reload slow --table "0 $size delay $dev 0 60"
run dmsetup resume slow
wait_for 60 step_ge wt 2 || { st_log wt; die "step did not rise while reads missed the target"; }
log "status wt: $line"
assert_le "$(field max)" $((max0 - 1)) "depth went down"
assert_ge "$(st wt exceeded)" 1 "windows counted as exceeded"

run dmsetup reload slow --table "0 $size delay $dev 0 0"
run dmsetup resume slow
wait_for 90 step_le wt 0 || { st_log wt; die "step did not come back after recovery"; }
log "status wt: $line"

kill %1 %2
wait 2>/dev/null || true
events=$(cat $tr/trace)
assert_match "$events" 'wbthrottle_stat: .*verdict=exceeded' "stat tracepoint saw a missed window"
assert_match "$events" 'wbthrottle_step: .*step=[2-9]' "step tracepoint saw the rise"
assert_match "$events" 'wbthrottle_step: .*step=(0|-[0-9]+) ' "step tracepoint saw the return"
