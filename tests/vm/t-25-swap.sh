#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Swap on a wbthrottle device: a memory-limited cgroup pushes pages out;
# swap writes are classified as reclaim, their submitters (kswapd, direct
# reclaim) never wait in the target, what it defers stays within
# backlog_kb, and the swapped pages come back intact.
# vm-timeout: 240
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-wbt.sh"

cg=/sys/fs/cgroup/wbt-swap
cleanup() {
	local r=$?
	set +e
	swapoff /dev/mapper/wt 2>/dev/null
	[ -d $cg ] && rmdir $cg
	(exit $r)
	wbt_cleanup
}
trap cleanup EXIT
short_hung_task 10

dev=$(lower_dev nullb 512 irqmode=2 completion_nsec=1000000)
wbt_create wt "$dev" depth 8
run mkswap /dev/mapper/wt >/dev/null
run swapon /dev/mapper/wt

grep -q cgroup2 /proc/mounts || run mount -t cgroup2 none /sys/fs/cgroup
sysfs_write /sys/fs/cgroup/cgroup.subtree_control +memory
run mkdir $cg
sysfs_write $cg/memory.max $((32 << 20))
# 96 MB of distinct pages in 32 MB: most of them go to swap and back.
run sh -c "echo \$\$ > $cg/cgroup.procs && exec python3 -c '
import hashlib
pages = [bytes([i % 251]) * 4096 for i in range(24576)]
assert all(p == bytes([i % 251]) * 4096 for i, p in enumerate(pages))
print(\"pages intact\")
'"
st_log wt
assert_ge "$(st wt n_reclaim)" 1 "swap writes classified as reclaim"
assert_eq "$(st wt slept)" 0 "no reclaiming task waited in the target"
assert_le "$(st wt deferred_bytes_max)" $((16384 * 1024)) "deferred swap writes within backlog_kb"
assert_eq "$(st wt n_bg)$(st wt n_normal)" "00" "no swap write taken for writeback"
run swapoff /dev/mapper/wt
