#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# make demo: a few minutes of the seed experiment on the "hdd" disk model,
# without throttling (dm-linear) and with wbthrottle (default options), in
# one boot of one kernel under QEMU. Prints the table; see
# tests/bench/README.md. Overrides as for bench.sh (tests/bench/lib-bench.sh),
# e.g. KVER=6.1.0-57-amd64 or WRITERS=16.
# shellcheck disable=SC2034 # the BENCH_* settings are read by lib-bench.sh
set -euo pipefail
. "$(dirname "$0")/lib-bench.sh"

BENCH_MODE=demo
BENCH_PROFILE=hdd
BENCH_MODEL_ARGS="size_mb=1536"
BENCH_VARIANTS="none wbthrottle"
BENCH_SCENARIOS="xfs-randread"
BENCH_WRITERS=16
BENCH_WRITER_MB=40
BENCH_RFILE_MB=64
BENCH_SEQFILE_MB=192
BENCH_RWRITE_MB=48
BENCH_ALONE_S=15
BENCH_MAX_RUN=300
BENCH_WBT_OPTS=
BENCH_DIRTY_BG_MB=
BENCH_DIRTY_MB=
BENCH_VM_TIMEOUT=1200

bench_main
