#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# The flush rule end to end, on the disk model with a write cache: while a
# cache flush passed down by the target is in flight (status
# flush_inflight), no writeback reaches the disk; it goes when
# the flush completes, and the data reads back. With wc_policy off the
# rule is off, and the same writeback reaches the disk during the flush.
# vm-timeout: 300
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-wbt.sh"
trap diskmodel_cleanup EXIT

diskmodel_ko

P=/sys/module/wbt_diskmodel/parameters
# model NAME: one of the disk model's counters.
model() {
	sed -n "s/^$1 //p" $P/stats
}

model_ge() {
	[ "$(model "$1")" -ge "$2" ]
}

# held_or_sent W0: writeback was held by the target, or reached the disk.
held_or_sent() {
	st_ge wt bg_throttled 1 || st_ge wt normal_throttled 1 ||
		model_ge writes $(($1 + 1))
}

# 1 MiB/s and an 8 MiB cache: a flush behind a full cache is in flight for
# about 8 s, the disk's destage time, however slow the host.
run insmod "$ko" profile=hdd size_mb=64 bw_mbps=1 wcache_mb=8
wait_for 10 test -b /dev/wbtdm0 || die "no /dev/wbtdm0"
run head -c 3M /dev/urandom >data
prep_writeback

for policy in auto off; do
	wbt_create wt /dev/wbtdm0 wc_policy $policy backlog_ms 60000
	exec 9</dev/mapper/wt	# dd's close must not write back itself
	sleep 1.2		# a new bdi counts as a dirtier that just slept
	# Fill the cache with O_DIRECT writes (never held), then flush it.
	run dd if=/dev/zero of=/dev/mapper/wt bs=1M count=8 seek=32 oflag=direct status=none
	f0=$(model flushes)
	dd if=/dev/null of=/dev/mapper/wt conv=fsync,notrunc status=none &
	fpid=$!
	wait_for 10 model_ge flushes $((f0 + 1)) || die "the flush did not reach the disk"
	w0=$(model writes)
	# 3 MiB buffered, written back by dd itself as it goes (nocache:
	# fadvise DONTNEED starts writeback of what it wrote), so it does
	# not wait for the flusher, which a loaded host can delay past the
	# flush (seen at 5 s). dd may sleep in the target meanwhile.
	dd if=data of=/dev/mapper/wt bs=1M conv=notrunc oflag=nocache status=none &
	wpid=$!
	wait_for 5 held_or_sent "$w0" || die "no writeback started ($policy)"
	sleep 1	# time for any write that would slip through
	snap wt
	w1=$(model writes)
	kill -0 $fpid 2>/dev/null ||
		die "the flush completed before the check: the model's destage is too short here"
	log "$policy: $((w1 - w0)) writes reached the disk during the flush; $line"
	if [ $policy = auto ]; then
		assert_eq "$(field flush_inflight)" 1 "the flush is counted in flight"
		assert_eq "$w1" "$w0" "no writeback reached the disk during the flush"
		assert_eq "$(field bg_inflight)/$(field normal_inflight)" 0/0 \
			"no writeback in flight on the target during the flush"
		assert_ge $(($(field waiting) + $(field deferred))) 1 "writeback held"
	else
		assert_eq "$(field flush_inflight)" 0 "wc_policy off counts no flush"
		assert_ge "$w1" $((w0 + 1)) "wc_policy off: writeback reached the disk during the flush"
	fi
	wait $fpid || die "the flush failed ($policy)"
	wait $wpid || die "the buffered writer failed ($policy)"
	wait_idle wt 120 || die "writeback did not finish after the flush ($policy)"
	assert_eq "$(st wt flush_inflight)" 0 "no flush in flight after it completed"
	exec 9<&-
	run cmp data <(dd if=/dev/mapper/wt bs=1M count=3 iflag=direct status=none)
	dm_remove wt
done
