#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# make bench: the seed experiment scaled to a QEMU guest: no throttling,
# the disk's own blk-wbt and wbthrottle, on the "hdd" disk model, in one
# boot of one kernel: writers + random reader (XFS, ext4), writers + cold
# sequential reader, writers + fsync'ing commit log, writers alone, reader
# alone. Tables, plots and raw data go to
# build/bench/<kver>-<date>/; see tests/bench/README.md. Every BENCH_*
# setting below can be overridden from the environment without the prefix
# (tests/bench/lib-bench.sh), e.g. KVER=6.1.0-57-amd64 make bench.
# shellcheck disable=SC2034 # the BENCH_* settings are read by lib-bench.sh
set -euo pipefail
. "$(dirname "$0")/lib-bench.sh"

BENCH_MODE=bench
BENCH_PROFILE=hdd
BENCH_MODEL_ARGS="size_mb=1536"
BENCH_VARIANTS="none blk-wbt wbthrottle"
BENCH_SCENARIOS="xfs-randread ext4-randread xfs-seqread xfs-fsync xfs-writers xfs-reader xfs-randread@wcache_mb=0"
BENCH_WRITERS=16
BENCH_WRITER_MB=40
BENCH_RFILE_MB=64
BENCH_SEQFILE_MB=192
BENCH_RWRITE_MB=48
BENCH_ALONE_S=20
BENCH_MAX_RUN=300
BENCH_WBT_OPTS=
BENCH_DIRTY_BG_MB=
BENCH_DIRTY_MB=
BENCH_VM_TIMEOUT=3600

bench_main
