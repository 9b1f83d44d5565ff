#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Two signals the push-back work depends on. (1) io_uring: REQ_NOWAIT
# O_DIRECT writes to a device whose flusher waits in the target complete,
# none of them refused or held. (2) Writers in a child cgroup that sleep in
# balance_dirty_pages() are seen as waiting dirtiers (on 6.1 they sleep on
# their cgroup's wb, which upstream blk-wbt of 6.1 never looks at).
# vm-timeout: 400
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-wbt.sh"

cg=/sys/fs/cgroup/wbt-dirty
mnt=$TEST_TMP/mnt
cleanup() {
	local r=$?
	set +e
	mountpoint -q "$mnt" && umount "$mnt"
	[ -d $cg ] && rmdir $cg
	(exit $r)
	wbt_cleanup
}
trap cleanup EXIT

dev=$(slow_nullb 128)
wbt_create wt "$dev" depth 4
prep_writeback
run head -c 16M /dev/urandom >data
exec 9<"/dev/mapper/wt"
run dd if=data of=/dev/mapper/wt bs=1M conv=notrunc status=none
wait_for 60 st_ge wt waiting 1 || { st_log wt; die "no submitter waiting"; }
run fio --name=uring --filename=/dev/mapper/wt --ioengine=io_uring --direct=1 \
	--rw=randwrite --bs=4k --iodepth=8 --offset=64M --size=2M --output=uring.txt
grep -q 'err= 0' uring.txt || { cat uring.txt; die "io_uring writes failed"; }
st_log wt
assert_eq "$(st wt again)" 0 "no REQ_NOWAIT write refused"
assert_ge "$(st wt n_direct)" 512 "io_uring O_DIRECT writes passed as direct"
exec 9<&-
wait_idle wt 180 || die "flood did not drain"
run cmp data <(dd if="$dev" bs=1M count=16 iflag=direct status=none)
dm_remove wt

# Writers in a child cgroup, throttled by its memory's dirty limit only.
run modprobe ext4
dev2=$(lower_dev nullb 512 mbps=10)
wbt_create wd "$dev2"
# Tight dirty limits (a cgroup's share of them is tighter still): the
# writer sleeps in balance_dirty_pages() long before its memory is full.
vm_dirty $((16 << 20)) $((32 << 20))
run mkfs.ext4 -q -F /dev/mapper/wd
mkdir "$mnt"
run mount /dev/mapper/wd "$mnt"
grep -q cgroup2 /proc/mounts || run mount -t cgroup2 none /sys/fs/cgroup
sysfs_write /sys/fs/cgroup/cgroup.subtree_control "+memory +io"
run mkdir $cg
sysfs_write $cg/memory.max $((128 << 20))
before=$(st wd dirty_waits)
run sh -c "echo \$\$ > $cg/cgroup.procs && exec dd if=/dev/zero of=$mnt/big bs=1M count=160 status=none"
st_log wd
assert_ge "$(st wd dirty_waits)" $((before + 1)) "a dirtier in a child cgroup was seen waiting"
run umount "$mnt"
