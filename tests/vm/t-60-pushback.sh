#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Push-back: background writeback that may not go waits in the flusher, not
# in the target. While a 32 MB flood drains to a slow disk, the pages under
# writeback (Writeback: in /proc/meminfo) stay within what the limit lets in
# flight and the target defers nothing. The same flood with push_back 0 is
# parked in the target instead (so this test can tell the two apart). Data
# reads back.
# vm-timeout: 400
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-wbt.sh"
trap wbt_cleanup EXIT

dev=$(slow_nullb)
prep_writeback
run head -c 32M /dev/urandom >data

# peak_writeback SECS: the largest Writeback: (kB) seen over SECS seconds.
peak_writeback() {
	local end=$((SECONDS + $1)) peak=0 v
	while [ $SECONDS -lt $end ]; do
		v=$(awk '/^Writeback:/ {print $2}' /proc/meminfo)
		[ "$v" -gt "$peak" ] && peak=$v
		sleep 0.2
	done
	echo "$peak"
}

# flood NAME SEEK_MB: write data buffered at SEEK_MB and print the peak of
# Writeback: over the next 6 s. The caller keeps the device open on fd 9:
# a last close would wait for all of the writeback.
flood() {
	run dd if=data of="/dev/mapper/$1" bs=1M seek="$2" conv=notrunc status=none
	peak_writeback 6
}

wbt_create wt "$dev" depth 4
exec 9<"/dev/mapper/wt"
peak=$(flood wt 0)
st_log wt
log "push_back 1: peak Writeback ${peak} kB"
assert_ge "$(st wt slept)" 1 "the flusher waited in the target"
assert_eq "$(st wt deferred_total)" 0 "nothing deferred: the flusher may sleep"
assert_le "$peak" 4096 "pages under writeback stay bounded (kB)"
exec 9<&-
wait_idle wt 180 || die "flood did not drain"
run cmp data <(dd if="$dev" bs=1M count=32 iflag=direct status=none)
dm_remove wt

wbt_create wt0 "$dev" depth 4 push_back 0 backlog_kb 1048576 backlog_ms 60000
exec 9<"/dev/mapper/wt0"
peak=$(flood wt0 40)
st_log wt0
log "push_back 0: peak Writeback ${peak} kB"
assert_eq "$(st wt0 slept)" 0 "push_back 0: nobody waited"
assert_ge "$(st wt0 deferred_total)" 1 "push_back 0: the target deferred the flood"
assert_ge "$peak" 16384 "push_back 0: the flood is under writeback, parked (kB)"
exec 9<&-
wait_idle wt0 300 || die "deferred flood did not drain"
run cmp data <(dd if="$dev" bs=1M skip=40 count=32 iflag=direct status=none)
