#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# make bench-pushback: what push-back is judged on. The writers of the
# seed experiment with an fsync'ing commit log (fdatasync cost) and,
# separately, with the random reader, on ext4 (data=ordered, whose commits
# wait for data writeback), over four disks of the model: hdd with its
# 16 MiB write cache, hdd without it, an ssd slowed to 100 MiB/s so that
# the load lasts, and "fifo": one head serving requests strictly in arrival
# order, 0.2 ms each, no cache, non-rotational (the disk on which the fsync
# cost of a backlog held in the target was first measured). Variants:
# none, blk-wbt, wbthrottle, and wbthrottle with push-back off. One boot of
# one kernel (KVER=...), as make bench; everything in tests/bench/README.md.
# Dirty limits of 32/128 MB: with the default ratios (200/400 MB of this
# guest) ext4's delayed allocation starts writeback only as the writers
# end, and the window with writeback under way lasted 4 s, too short for
# the reader to complete a read in some runs.
# shellcheck disable=SC2034 # the BENCH_* settings are read by lib-bench.sh
set -euo pipefail
. "$(dirname "$0")/lib-bench.sh"

fifo=access_us=200,seq_access_us=200,wcache_mb=0,rotational=0
ssd=profile=ssd,bw_mbps=100
BENCH_MODE=bench
BENCH_PROFILE=hdd
BENCH_MODEL_ARGS="size_mb=1536"
# wbthrottle@push_back=0,...: every held write deferred, without a bound:
# the target as it was before push-back, for comparison.
BENCH_VARIANTS="none blk-wbt wbthrottle wbthrottle@push_back=0,backlog_kb=4194304,backlog_ms=60000"
BENCH_SCENARIOS="ext4-fsync ext4-randread ext4-fsync@wcache_mb=0 ext4-randread@wcache_mb=0 ext4-fsync@$ssd ext4-randread@$ssd ext4-fsync@$fifo ext4-randread@$fifo"
BENCH_WRITERS=16
BENCH_WRITER_MB=40
BENCH_RFILE_MB=64
BENCH_SEQFILE_MB=192
BENCH_RWRITE_MB=48
BENCH_ALONE_S=20
BENCH_MAX_RUN=300
BENCH_WBT_OPTS=
BENCH_DIRTY_BG_MB=32
BENCH_DIRTY_MB=128
BENCH_VM_TIMEOUT=5400

bench_main
