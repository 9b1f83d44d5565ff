#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# A lower device with a volatile write cache (null_blk cache_size): the
# target sees it (wc=1), and under each write-cache policy heavy background
# writeback is held within the background limit, the "delay" policy paces
# it, and the data reads back.
# vm-timeout: 300
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-wbt.sh"
trap wbt_cleanup EXIT

dev=$(lower_dev nullb 256 irqmode=2 completion_nsec=2000000 max_sectors=128 cache_size=32)
assert_eq "$(cat "/sys/block/${dev#/dev/}/queue/write_cache")" "write back" "lower device caches writes"
prep_writeback
run head -c 16M /dev/urandom >data

for policy in drain delay off; do
	# backlog_ms 60000: on a loaded host a write may wait half a second,
	# and age would promote it past the limit this test checks.
	wbt_create wt "$dev" depth 8 wc_policy $policy cache_delay_us 10000 backlog_ms 60000
	assert_eq "$(st wt wc)" 1 "write cache seen ($policy)"
	sleep 1.2	# a new bdi counts as a dirtier that just slept
	exec 9<"/dev/mapper/wt"
	# Reads near the writes: the delay policy paces only to protect them.
	# One dd reading back to back (2 ms each, for longer than the test).
	dd if=/dev/mapper/wt of=/dev/null bs=4k count=65536 iflag=direct status=none &
	rpid=$!
	t0=$(date +%s%N)
	run dd if=data of=/dev/mapper/wt bs=1M conv=notrunc status=none
	wait_for 60 st_ge wt bg_throttled 1 || die "nothing held ($policy)"
	exec 9<&-
	wait_idle wt 120 || die "writeback did not finish ($policy)"
	ms=$((($(date +%s%N) - t0) / 1000000))
	kill $rpid
	wait $rpid 2>/dev/null || true
	st_log wt
	# A sync write that overtakes held ones promotes one of them (so that
	# an fsync is not stuck behind it): the only way past the limit.
	assert_le "$(st wt bg_hwm)" $(($(st wt background) + $(st wt promoted))) "background in flight <= limit + promoted ($policy)"
	run cmp data <(dd if=/dev/mapper/wt bs=1M count=16 iflag=direct status=none)
	if [ $policy = delay ]; then
		# One request per 10 ms at most: a lower bound on the time the
		# writeback took, whatever the speed of the machine.
		reqs=$(($(st wt n_bg) - $(st wt merged)))
		assert_ge "$ms" $((reqs * 10 * 9 / 10)) "delay policy: $reqs requests paced 10 ms apart"
		assert_ge "$(st wt pace_us)" 10000 "pace shown in status"
	fi
	dm_remove wt
done

# wc_policy auto (the default): upstream's drain rule on a non-rotational
# disk, pacing on a rotational one. The target re-reads the flag when a
# latency window ends (I/O starts one) and on resume.
rot=/sys/block/${dev#/dev/}/queue/rotational
wbt_create wt "$dev"
assert_eq "$(st wt wc_policy)" drain "auto: drain on a non-rotational disk"
sysfs_write "$rot" 1
run dd if=/dev/zero of=/dev/mapper/wt bs=4k count=1 conv=fsync status=none
wait_for 10 sh -c "dmsetup status wt | grep -q ' wc_policy=delay '" || true
assert_eq "$(st wt wc_policy)" delay "auto: delay on a rotational disk"
assert_eq "$(st wt lat_target_us)" 75000 "auto: the rotational latency target"
assert_no_match "$(dmsetup table wt)" wc_policy "the table keeps auto (no option)"
sysfs_write "$rot" 0
dm_remove wt
