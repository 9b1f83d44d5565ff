#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# The CPU-cost benchmark's guest side (make bench-cpu; the host side is
# tests/bench/cpucost.sh). On a null_blk disk that needs no throttling
# (no data kept, completions inline, 256 tags per queue), it compares
# dm-linear with wbthrottle (defaults) in the same boot:
#
#   randread   fio 4 KiB O_DIRECT random reads, libaio, QD 32, one job per CPU
#   randwrite  the same, random writes (O_DIRECT: never held)
#   seqwrite   buffered sequential writes through the page cache (1 MiB
#              writes, end_fsync): writeback, counted by the throttle
#
# A third target, blkwbt, is dm-linear with the null_blk disk's own blk-wbt
# on (its default latency target) for that run only: what upstream's
# throttle costs on the same disk, policy and path together, beside ours.
#
# Each round runs every workload over the targets in mirrored order
# (linear, wbthrottle, blkwbt, blkwbt, wbthrottle, linear), so that drift
# in the host counts against each; one unrecorded warm-up run of each
# comes first (the emulator translates the code paths on first use). Raw
# fio JSON goes to $VM_OUT/raw/cpucost/ROUND-WORKLOAD-TARGET-N.json; the
# host makes the table (tests/bench/cpucost.py). Parameters in
# $VM_OUT/bench.conf: CPU_ROUNDS, CPU_RUNTIME (seconds per fio run),
# CPU_SEQ_MB, CPU_WORKLOADS, CPU_TARGETS, CPU_PERF (1: profile one more
# buffered write per target with perf, raw/cpucost/perf-TARGET-*.txt).
# Guest seconds: under -icount,sleep=off the guest's clock jumps over its
# idle time, which includes its waits on the host (the 9p root) and so
# runs far ahead of the wall clock on a loaded host (6.1, 2026-12-05: 3000
# guest seconds in 570 wall seconds, half the rounds). The host bounds the
# run in wall seconds (cpucost.sh, run.sh -t).
# vm-timeout: 30000
. "$(dirname "$0")/../vm/lib.sh"

# shellcheck source=/dev/null
. "$VM_OUT/bench.conf"

CPU_TARGETS=${CPU_TARGETS:-linear wbthrottle}
RAW=$VM_OUT/raw/cpucost
LOWER=/dev/nullb0
NCPU=$(nproc)

cleanup() {
	local rc=$?
	set +e
	for t in linear wbthrottle; do
		dmsetup info "cpu-$t" >/dev/null 2>&1 && dmsetup remove --retry "cpu-$t"
	done
	[ -d /sys/module/null_blk ] && rmmod null_blk
	return $rc
}
trap cleanup EXIT

mkdir -p "$RAW"
[ -d /sys/module/null_blk ] && run rmmod null_blk
run modprobe null_blk nr_devices=1 queue_mode=2 irqmode=0 \
	hw_queue_depth=256 submit_queues="$NCPU" gb=8
wait_for 10 test -b $LOWER || die "no $LOWER"
sysfs_write /sys/block/nullb0/queue/scheduler none
# No blk-wbt below but in the blkwbt target's runs (blk_wbt below).
sysfs_write /sys/block/nullb0/queue/wbt_lat_usec 0
sz=$(sectors $LOWER)
dm_create cpu-linear "0 $sz linear $LOWER 0"
dm_create cpu-wbthrottle "0 $sz wbthrottle $LOWER"

{
	echo "ncpu=$NCPU"
	echo "lower=null_blk queue_mode=2 irqmode=0 hw_queue_depth=256 submit_queues=$NCPU"
	echo "scheduler=$(cat /sys/block/nullb0/queue/scheduler)"
	echo "fio=$(fio --version)"
	echo "rounds=$CPU_ROUNDS runtime_s=$CPU_RUNTIME seq_mb=$CPU_SEQ_MB"
	echo "table.wbthrottle=$(dmsetup table cpu-wbthrottle)"
	echo "targets=$CPU_TARGETS"
} >"$RAW/setup.txt"

# blk_wbt on|off: null_blk's own blk-wbt, for the blkwbt target's runs.
blk_wbt() {
	local f=/sys/block/nullb0/queue/wbt_lat_usec
	if [ "$1" = on ]; then
		sysfs_write $f -1	# the kernel's default for this disk
		[ "$(cat $f)" != 0 ] || die "blk-wbt did not turn on"
		echo "blkwbt_lat_usec=$(cat $f)" >"$RAW/blkwbt.txt"
	else
		sysfs_write $f 0
	fi
}

# fio_run WORKLOAD TARGET OUTPUT [PROFILE]: PROFILE, a perf.data file to
# record the whole guest into (cpu-clock samples with call chains).
fio_run() {
	local w=$1 t=$2 dev=/dev/mapper/cpu-$2 args rc=0 wrap=()
	[ -z "${4:-}" ] || wrap=(perf record -q -a -g -F 499 -o "$4" --)
	[ "$t" != blkwbt ] || dev=/dev/mapper/cpu-linear
	case $w in
	randread | randwrite)
		args=(--rw="$w" --bs=4k --direct=1 --ioengine=libaio
			--iodepth=32 --numjobs="$NCPU" --time_based
			--runtime="$CPU_RUNTIME" --ramp_time=1 --norandommap
			--randrepeat=0)
		;;
	seqwrite)
		# Buffered: the page cache, then writeback through the
		# target; end_fsync counts the writeback in the time.
		args=(--rw=write --bs=1M --direct=0 --ioengine=psync
			--numjobs=1 --size="${CPU_SEQ_MB}M" --end_fsync=1)
		;;
	esac
	sync
	echo 3 >/proc/sys/vm/drop_caches
	[ "$t" != blkwbt ] || blk_wbt on
	# A run takes seconds; one that hangs shows its tasks and dies.
	run "${wrap[@]}" timeout 300 fio --name="$w" --filename="$dev" \
		--group_reporting --output-format=json --output="$3" \
		"${args[@]}" >/dev/null || rc=$?
	[ "$t" != blkwbt ] || blk_wbt off
	if [ "$rc" != 0 ]; then
		echo w >/proc/sysrq-trigger
		echo l >/proc/sysrq-trigger
		run dmsetup status "cpu-$t"
		die "fio $w over $t failed or hung (tasks in the console log)"
	fi
}

read -ra targets <<<"$CPU_TARGETS"
order=("${targets[@]}")
for ((i = ${#targets[@]} - 1; i >= 0; i--)); do order+=("${targets[i]}"); done
for w in $CPU_WORKLOADS; do
	for t in "${targets[@]}"; do
		log "warm-up: $w over $t"
		fio_run "$w" "$t" "$TEST_TMP/warmup.json"
	done
done
for r in $(seq 1 "$CPU_ROUNDS"); do
	for w in $CPU_WORKLOADS; do
		n=0
		for t in "${order[@]}"; do
			n=$((n + 1))
			log "round $r: $w over $t"
			fio_run "$w" "$t" "$RAW/$r-$w-$t-$n.json"
		done
	done
done

# CPU_PERF=1: one more buffered write per target under perf, and where
# its samples went: by function alone (self) and with callees (children).
if [ "${CPU_PERF:-0}" = 1 ]; then
	for t in "${targets[@]}"; do
		log "profile: seqwrite over $t"
		fio_run seqwrite "$t" "$TEST_TMP/perf-$t.json" "$TEST_TMP/perf-$t.data"
		for m in self children; do
			perf report -i "$TEST_TMP/perf-$t.data" --stdio --sort sym \
				-g none --percent-limit 0.3 --"${m/self/no-children}" \
				>"$RAW/perf-$t-$m.txt" 2>/dev/null
		done
	done
fi

# What the throttle saw: every bio went through it.
run dmsetup status cpu-wbthrottle >"$RAW/status-wbthrottle.txt"
touch "$RAW/complete"
