#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Liveness with submitters asleep in the target: on ext4 (data=ordered) and
# on XFS over wbthrottle, buffered writers, an fsync loop and `sync` run at
# once under tight dirty limits while the device is suspended and resumed
# and its table reloaded. With the hung-task timeout at 10 s nothing may
# block that long (the harness fails on "blocked for more than"), every
# fsync returns and every file reads back. Then a deferred remove while the
# flusher sleeps in the target: it completes and the data is on the disk.
# vm-timeout: 900
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-wbt.sh"

mnt=$TEST_TMP/mnt
cleanup() {
	local r=$?
	set +e
	mountpoint -q "$mnt" && umount "$mnt"
	(exit $r)
	wbt_cleanup
}
trap cleanup EXIT
short_hung_task 10
run modprobe ext4
run modprobe xfs
mkdir "$mnt"

dev=$(lower_dev nullb 640 mbps=20)
# A fixed depth: with writers alone the controller would deepen the limits
# until nobody waits.
wbt_create wt "$dev" depth 4
table="0 $(sectors "$dev") wbthrottle $dev"
vm_dirty $((4 << 20)) $((24 << 20))
run head -c 16M /dev/urandom >data

# fsync_loop FILE SECS: append 4 KiB and fsync, for SECS; print the count.
fsync_loop() {
	python3 - "$1" "$2" <<'EOF'
import os, sys, time
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
end, n = time.time() + float(sys.argv[2]), 0
while time.time() < end:
    os.write(fd, os.urandom(4096))
    os.fsync(fd)
    n += 1
print(n)
EOF
}

# storm: suspend/resume a few times, and reload the table once, while the
# writers run. A reload starts new counters: keep `slept` before it.
storm() {
	local i
	for i in 1 2 3; do
		sleep 2
		run timeout 60 dmsetup suspend wt
		run dmsetup resume wt
	done
	st wt slept >>slept.log
	run dmsetup reload wt --table "$table 2 depth 8"
	run timeout 60 dmsetup resume wt
	sleep 2
	run dmsetup reload wt --table "$table 2 depth 4"
	run timeout 60 dmsetup resume wt
}

# one_fs FS MKFS...: the mixed load on a fresh file system of type FS.
one_fs() {
	local fs=$1 i pids=() n
	shift
	run "$@" /dev/mapper/wt >/dev/null
	run mount -t "$fs" /dev/mapper/wt "$mnt"
	for i in 1 2 3 4 5 6; do
		dd if=data of="$mnt/w$i" bs=1M conv=fsync status=none &
		pids+=($!)
	done
	fsync_loop "$mnt/log" 20 >fsyncs &
	pids+=($!)
	(for i in 1 2 3 4; do sync; sleep 2; done) &
	pids+=($!)
	storm
	for i in "${pids[@]}"; do
		timeout 300 tail --pid="$i" -f /dev/null || die "$fs: a writer never finished"
		wait "$i" || die "$fs: a writer failed"
	done
	n=$(cat fsyncs)
	log "$fs: $n fsyncs in 20 s"
	assert_ge "$n" 1 "$fs: fsyncs completed"
	for i in 1 2 3 4 5 6; do
		run cmp data "$mnt/w$i"
	done
	run umount "$mnt"
	st_log wt
}

one_fs ext4 mkfs.ext4 -q -F
one_fs xfs mkfs.xfs -q -f
assert_ge "$(sort -n slept.log | tail -n 1)" 1 "submitters waited in the target"

# Deferred remove while a submitter is asleep in the target: the data,
# then 48 MB more from a writer still running when the remove comes.
exec 9<"/dev/mapper/wt"
run dd if=data of=/dev/mapper/wt bs=1M conv=notrunc status=none
dd if=/dev/zero of=/dev/mapper/wt bs=1M seek=16 count=48 conv=notrunc status=none &
wait_for 60 st_ge wt waiting 1 || { st_log wt; die "no submitter waiting"; }
st_log wt
run dmsetup remove --deferred wt
wait $! || die "the writer failed"
exec 9<&-
wait_for 120 sh -c '! dmsetup info wt' || die "deferred remove did not complete"
run cmp data <(dd if="$dev" bs=1M count=16 iflag=direct status=none)
