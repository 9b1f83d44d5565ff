#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# make bench-cpu: what the throttle costs when nothing needs throttling.
# Boots one kernel (KVER=..., default the installed 6.12) under QEMU with
# tests/bench/t-cpucost.sh as the only test: 4 KiB O_DIRECT random reads
# and writes at QD 32 with one fio job per CPU, and a buffered sequential
# write, over dm-linear and wbthrottle on one null_blk disk, several rounds
# in the same boot. tests/bench/cpucost.py reports each round's ratio and
# the median. Environment: KVER, OUT (results directory, default
# build/bench/cpu-<kver>-<date>), ROUNDS (default 5), RUNTIME (seconds per
# fio run, default 5), SEQ_MB (buffered write size, default 768),
# WORKLOADS (default "randread randwrite seqwrite"), TARGETS (default
# "linear wbthrottle blkwbt": blkwbt is dm-linear over the disk with its
# own blk-wbt on), PERF (1: profile one more buffered write per target),
# ICOUNT (default 3: QEMU's -icount shift=3,sleep=off, empty: off).
#
# With ICOUNT the guest's clock is its instruction count (2^ICOUNT ns per
# instruction, idle time skipped), so IOPS and MB/s in the guest measure
# instructions executed per I/O: the same run twice agrees to about 0.1%,
# whatever else the host does, where wall-clock runs under TCG swing by
# tens of percent from round to round. What it does not see: cache misses,
# cache-line bouncing and lock contention of real CPUs (every instruction
# costs the same), so it ranks code paths, and a real machine may differ.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib-bench.sh"

kver=${KVER:-$(bench_default_kver)} ||
	{ echo "bench-cpu: no 6.12 Debian kernel installed (make deps)" >&2; exit 2; }
out=$(realpath -m "${OUT:-$bench_repo/build/bench/cpu-$kver-$(date +%Y%m%d-%H%M%S)}")
rm -rf "$out/raw" "$out/tests"
mkdir -p "$out"
{
	echo "CPU_ROUNDS=${ROUNDS:-5}"
	echo "CPU_RUNTIME=${RUNTIME:-5}"
	echo "CPU_SEQ_MB=${SEQ_MB:-768}"
	echo "CPU_WORKLOADS=\"${WORKLOADS:-randread randwrite seqwrite}\""
	echo "CPU_TARGETS=\"${TARGETS:-linear wbthrottle blkwbt}\""
	echo "CPU_PERF=${PERF:-0}"
} >"$out/bench.conf"
icount=${ICOUNT-3}
if [ -n "$icount" ]; then
	VM_QEMU_ARGS="${VM_QEMU_ARGS:-} -icount shift=$icount,sleep=off"
	# 6.1 hangs at "Booting SMP configuration" under -icount (6.12,
	# whose bring-up was rewritten, does not): one CPU there.
	case $kver in
	6.1.*) VM_QEMU_ARGS="$VM_QEMU_ARGS -smp 1" ;;
	esac
	export VM_QEMU_ARGS
fi

echo "bench-cpu: $kver, results in $out"
# shellcheck disable=SC2034 # read by bench_host_setup
BENCH_MODE=cpu
t0=$SECONDS
# What is measured is what is checked out now: record it before the run
# (run.sh builds the module from the tree at boot).
bench_host_setup | grep -v '^module_sha256=' >"$out/host.txt"
{
	echo "host_load_before=$(cut -d' ' -f1-3 /proc/loadavg)"
	echo "icount=$icount"
	echo "vm_qemu_args=${VM_QEMU_ARGS:-}"
} >>"$out/host.txt"
rc=0
bash "$bench_repo/tests/vm/run.sh" -k "$kver" -o "$out" -t 3300 \
	"$here/t-cpucost.sh" || rc=$?
{
	echo "module_sha256=$(sha256sum "$out/dm_wbthrottle.ko" 2>/dev/null | cut -c1-16)"
	echo "host_load_after=$(cut -d' ' -f1-3 /proc/loadavg)"
	echo "runtime_s=$((SECONDS - t0))"
} >>"$out/host.txt"
if [ ! -f "$out/raw/cpucost/complete" ]; then
	echo "bench-cpu: the guest did not complete the run (see $out/console.log)" >&2
	exit 1
fi
"$(bench_python)" "$here/cpucost.py" "$out"
exit "$rc"
