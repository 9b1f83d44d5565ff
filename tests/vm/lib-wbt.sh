# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash
# Helpers for tests of the wbthrottle target itself, sourced after lib.sh.

# wbt_create NAME DEV [OPTION VALUE]...: a wbthrottle device over all of DEV.
wbt_create() {
	local name=$1 dev=$2 n
	shift 2
	n=$#
	if [ "$n" -gt 0 ]; then
		dm_create "$name" "0 $(sectors "$dev") wbthrottle $dev $n $*"
	else
		dm_create "$name" "0 $(sectors "$dev") wbthrottle $dev"
	fi
}

# st NAME KEY: one field of `dmsetup status NAME`.
st() {
	dmsetup status "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"
}

# st_log NAME: the whole status line, in the transcript.
st_log() {
	log "status $1: $(dmsetup status "$1")"
}

# vm_dirty BG_BYTES DIRTY_BYTES: writeback thresholds for this test; the
# old values come back at exit through wbt_restore_dirty.
vm_dirty() {
	if [ ! -f "$TEST_TMP/.dirty" ]; then
		sysctl -n vm.dirty_background_ratio vm.dirty_ratio \
			vm.dirty_expire_centisecs vm.dirty_writeback_centisecs \
			>"$TEST_TMP/.dirty"
	fi
	sysfs_write /proc/sys/vm/dirty_background_bytes "$1"
	sysfs_write /proc/sys/vm/dirty_bytes "$2"
}

# short_hung_task [SECS]: the hung-task detector at SECS (default 10) for
# this test, so that a task blocked that long fails it (the harness looks
# for "blocked for more than"); wbt_restore_dirty puts the old value back.
short_hung_task() {
	[ -f "$TEST_TMP/.hung" ] ||
		sysctl -n kernel.hung_task_timeout_secs >"$TEST_TMP/.hung"
	sysfs_write /proc/sys/kernel/hung_task_timeout_secs "${1:-10}"
}

wbt_restore_dirty() {
	local r=$? v
	set +e
	if [ -f "$TEST_TMP/.hung" ]; then
		cat "$TEST_TMP/.hung" >/proc/sys/kernel/hung_task_timeout_secs
	fi
	if [ -f "$TEST_TMP/.dirty" ]; then
		mapfile -t v <"$TEST_TMP/.dirty"
		echo "${v[0]}" >/proc/sys/vm/dirty_background_ratio
		echo "${v[1]}" >/proc/sys/vm/dirty_ratio
		echo "${v[2]}" >/proc/sys/vm/dirty_expire_centisecs
		echo "${v[3]}" >/proc/sys/vm/dirty_writeback_centisecs
	fi
	return $r
}

# wbt_cleanup: for `trap wbt_cleanup EXIT`.
wbt_cleanup() {
	local r=$?
	set +e
	exec 9<&-	# the holder fd of backlog()
	wbt_restore_dirty
	(exit $r)
	lower_cleanup
}

# snap NAME: keep one status line of NAME in $line, for field (fields that
# move every window, such as step and max, must come from one line).
line=
snap() {
	line=$(dmsetup status "$1")
}

# field KEY: one field of the line snap kept.
field() {
	echo "$line" | tr ' ' '\n' | sed -n "s/^$1=//p"
}

# step_le NAME N, step_ge NAME N: the scale step, snapped, is <= / >= N.
step_le() {
	snap "$1" && [ "$(field step)" -le "$2" ]
}

step_ge() {
	snap "$1" && [ "$(field step)" -ge "$2" ]
}

# st_ge NAME KEY MIN: status field KEY is at least MIN (for wait_for).
st_ge() {
	local v
	v=$(st "$1" "$2")
	[ -n "$v" ] && [ "$v" -ge "$3" ]
}

# is_idle NAME: nothing held or in flight on the target.
is_idle() {
	local s
	s=$(dmsetup status "$1")
	! grep -Eq '_(inflight|queued)=[1-9]' <<<"$s"
}

# wait_idle NAME SECS: wait until the target is idle.
wait_idle() {
	wait_for "$2" is_idle "$1"
}

# slow_nullb [SIZE_MB]: a null_blk that takes 20 ms per request of at most
# 64 KiB, whatever the depth: a small buffered write becomes a long backlog.
slow_nullb() {
	lower_dev nullb "${1:-256}" irqmode=2 completion_nsec=20000000 max_sectors=128
}

# backlog NAME FILE SEEK_MB: write FILE buffered into NAME at SEEK_MB while
# fd 9 keeps the device open (so dd's close does not wait for writeback),
# then wait until background writes are held.
backlog() {
	[ -e /proc/self/fd/9 ] || exec 9<"/dev/mapper/$1"
	run dd if="$2" of="/dev/mapper/$1" bs=1M seek="$3" conv=notrunc status=none
	wait_for 60 st_ge "$1" bg_queued 10 || { st_log "$1"; die "no backlog of held background writes"; }
	st_log "$1"
}

# prep_writeback: writeback starts at once but no dirtier is throttled, so
# the flusher's REQ_BACKGROUND writes meet the background limit.
prep_writeback() {
	vm_dirty $((2 << 20)) $((1 << 30))
	# A dirtier that slept in balance_dirty_pages lifts the limits for
	# 1 s; a new bdi counts its creation as such a sleep.
	sleep 1.2
}

# dirtier_hwm NAME MB SECS PID: with a reader (a fio in the background,
# PID) on NAME, write MB MiB buffered with dd until a dirtier is seen
# waiting in balance_dirty_pages(), then SECS seconds more; log the
# status, set hwm to the most normal + background writes NAME had in
# flight, stop the reader.
# shellcheck disable=SC2034 # hwm is the caller's
dirtier_hwm() {
	local before
	exec 9<>"/dev/mapper/$1"	# dd's close must not write back itself
	before=$(st "$1" dirty_waits)
	dd if=/dev/zero of="/dev/mapper/$1" bs=1M count="$2" conv=notrunc status=none &
	wait_for 60 st_ge "$1" dirty_waits $((before + 1)) ||
		{ st_log "$1"; die "the dirtier was not seen waiting"; }
	sleep "$3"
	st_log "$1"
	hwm=$(($(st "$1" bg_hwm) + $(st "$1" normal_hwm)))
	kill -INT "$4"
	wait "$4" || true
}

# diskmodel_cleanup: for `trap diskmodel_cleanup EXIT` in a test that
# loads the disk model: the dm devices first (they hold it), then the model.
diskmodel_cleanup() {
	local r=$?
	set +e
	(exit $r)
	wbt_cleanup
	[ -d /sys/module/wbt_diskmodel ] && rmmod wbt_diskmodel
	exit $r
}

# diskmodel_ko: the disk model built for this kernel, in $ko.
diskmodel_ko() {
	ko=$(cd "$(dirname "$0")/../.." && pwd)/build/$(uname -r)/diskmodel/wbt_diskmodel.ko
	[ -f "$ko" ] || die "no $ko: make diskmodel-all first (make vm-test does)"
}
