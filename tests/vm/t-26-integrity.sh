#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Data integrity under throttling: buffered fio writes through a small
# depth, verified from the device (not the page cache) with crc32c, and an
# XFS filled by parallel buffered writers, then checked clean.
# vm-timeout: 420
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-wbt.sh"
trap wbt_cleanup EXIT

dev=$(lower_dev nullb 512 irqmode=2 completion_nsec=2000000)
wbt_create wt "$dev" depth 4
prep_writeback

job=(--name=v --filename=/dev/mapper/wt --size=48M --bsrange=4k-128k
     --rw=randwrite --verify=crc32c --verify_fatal=1 --randseed=4242)
run fio "${job[@]}" --ioengine=psync --do_verify=0 --output=fio-write.txt
run sync
sysfs_write /proc/sys/vm/drop_caches 3
run fio "${job[@]}" --ioengine=psync --direct=1 --verify_only --output=fio-verify.txt
grep -q 'err= 0' fio-verify.txt || { cat fio-verify.txt >&2; die "fio verify failed"; }
assert_ge "$(st wt bg_throttled)" 1 "background writes were held"

run modprobe xfs
run mkfs.xfs -q -f /dev/mapper/wt
run mkdir mnt
run mount /dev/mapper/wt mnt
for i in 1 2 3 4 5 6; do
	head -c 24M /dev/urandom >"src$i"
	cp "src$i" "mnt/f$i" &
done
wait
run sync
st_log wt
run umount mnt
run xfs_repair -n /dev/mapper/wt
run mount /dev/mapper/wt mnt
for i in 1 2 3 4 5 6; do
	run cmp "src$i" "mnt/f$i"
done
run umount mnt
wait_idle wt 60 || die "slots still taken"
