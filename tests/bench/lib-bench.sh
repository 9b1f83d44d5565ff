# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash
# The benchmark's host side, shared by tests/bench/demo.sh and bench.sh:
# they set the BENCH_* defaults below and call bench_main. It builds the
# disk model for the kernel, writes the guest's parameters, boots the
# kernel under QEMU through tests/vm/run.sh with tests/bench/t-bench.sh as
# the only test, then turns the raw results into tables and plots with
# tests/bench/report.py.
#
# Every parameter can be overridden from the environment (same name
# without the BENCH_ prefix), e.g. `WRITERS=16 WRITER_MB=32 make bench`:
#
#   KVER         kernel to boot (default: the installed 6.12 Debian kernel)
#   OUT          results directory (default build/bench/<kver>-<date>[-demo])
#   VARIANTS     none blk-wbt wbthrottle; "wbthrottle@key=value,..." adds
#                table options to one variant (wbthrottle@wc_policy=delay)
#   SCENARIOS    <fs>-<workload>: fs xfs or ext4; workload randread,
#                seqread, fsync, writers (alone), rwriters (random
#                buffered writers, alone), reader (alone)
#   WRITERS      number of buffered dd writers
#   WRITER_MB    MB each writer writes (then syncfs)
#   RFILE_MB     size of the random reader's file
#   SEQFILE_MB   size of the cold file of the sequential reader
#   RWRITE_MB    MiB each of the 4 random writers writes, in 4 KiB blocks,
#                at random in its own file of 4 x RWRITE_MB
#   ALONE_S      runtime of the reader-alone run, seconds
#   MAX_RUN      longest a reader runs alongside the writers, seconds
#   PROFILE      wbt_diskmodel profile (hdd, ssd)
#   MODEL_ARGS   more wbt_diskmodel parameters (size_mb=...)
#   WBT_OPTS     wbthrottle table options ("key value ..."; default none)
#   DIRTY_BG_MB, DIRTY_MB  vm.dirty_background_bytes / vm.dirty_bytes in
#                MB (empty: keep the kernel's ratios)
#   RUNS         runs of each scenario x variant cell (default 1); run r > 1
#                of scenario S is raw/S~r/, the runs of all cells taking
#                turns (run 1 of every cell, then run 2 ...), and the report
#                adds medians over the runs
#   VM_TIMEOUT   whole-VM timeout, seconds (multiplied by RUNS)

bench_here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
bench_repo=$(cd "$bench_here/../.." && pwd)

# bench_python: Debian's python3 (report.py needs only the standard library).
bench_python() {
	if [ -x /usr/bin/python3 ]; then
		echo /usr/bin/python3
	else
		command -v python3
	fi
}

# bench_default_kver: the installed 6.12 Debian kernel with headers.
bench_default_kver() {
	local d k=
	for d in /lib/modules/6.12.*-amd64/build; do
		[ -d "$d" ] || continue
		d=${d%/build}
		[ -f "/boot/vmlinuz-${d##*/}" ] && k=${d##*/}
	done
	[ -n "$k" ] || return 1
	echo "$k"
}

# bench_conf: the guest's parameters (bash syntax).
bench_conf() {
	local v
	for v in PROFILE MODEL_ARGS VARIANTS SCENARIOS WRITERS WRITER_MB \
		RFILE_MB SEQFILE_MB RWRITE_MB ALONE_S MAX_RUN WBT_OPTS DIRTY_BG_MB \
		DIRTY_MB RUNS; do
		v=BENCH_$v
		printf '%s=%q\n' "$v" "${!v}"
	done
	printf 'BENCH_MODEL_KO=%q\n' /run/vm-out/wbt_diskmodel.ko
}

# bench_host_setup: what the guest cannot know.
bench_host_setup() {
	echo "mode=$BENCH_MODE"
	echo "kver=$kver"
	echo "date=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
	echo "git=$(git -C "$bench_repo" rev-parse --short HEAD 2>/dev/null || echo unknown)"
	if [ -n "$(git -C "$bench_repo" status --porcelain -- \
		'*.c' '*.h' Kbuild tests/diskmodel 2>/dev/null)" ]; then
		echo "git_dirty=yes"
	else
		echo "git_dirty=no"
	fi
	echo "module_sha256=$(sha256sum "$out/dm_wbthrottle.ko" 2>/dev/null | cut -c1-16)"
	echo "diskmodel_sha256=$(sha256sum "$out/wbt_diskmodel.ko" | cut -c1-16)"
	echo "host_cpus=$(nproc)"
	echo "qemu=$(qemu-system-x86_64 --version | head -n 1)"
	echo "accel=tcg"
}

# bench_main: the whole run; exit status 0 if the guest completed.
bench_main() {
	local t0=$SECONDS rc=0 runpid py
	kver=${KVER:-$(bench_default_kver)} ||
		{ echo "bench: no 6.12 Debian kernel installed (make deps)" >&2; return 2; }
	local v
	for v in PROFILE MODEL_ARGS VARIANTS SCENARIOS WRITERS WRITER_MB \
		RFILE_MB SEQFILE_MB RWRITE_MB ALONE_S MAX_RUN WBT_OPTS DIRTY_BG_MB \
		DIRTY_MB RUNS; do
		# An environment variable of the same name wins, even if empty.
		if [ -n "${!v+set}" ]; then
			printf -v "BENCH_$v" '%s' "${!v}"
		fi
	done
	: "${BENCH_RUNS:=1}"
	case $BENCH_RUNS in
	'' | *[!0-9]* | 0) echo "bench: RUNS must be a number of runs, 1 or more" >&2; return 2 ;;
	esac
	local suffix=
	[ "$BENCH_MODE" = demo ] && suffix=-demo
	out=${OUT:-$bench_repo/build/bench/$kver-$(date +%Y%m%d-%H%M%S)$suffix}
	out=$(realpath -m "$out")
	mkdir -p "$out"
	py=$(bench_python)

	echo "bench: $BENCH_MODE on $kver, results in $out"
	echo "bench: building the disk model"
	if ! make -C "$bench_repo/tests/diskmodel" KVER="$kver" out \
		>"$out/diskmodel-build.log" 2>&1; then
		echo "bench: building wbt_diskmodel for $kver failed:" >&2
		tail -n 20 "$out/diskmodel-build.log" >&2
		return 1
	fi
	cp "$bench_repo/build/$kver/diskmodel/wbt_diskmodel.ko" "$out/"
	bench_conf >"$out/bench.conf"
	# Nothing of an earlier run in the same directory may count.
	rm -rf "$out/tests" "$out/raw" "$out/report"

	echo "host_load_before=$(cut -d' ' -f1-3 /proc/loadavg)" >"$out/host-load.txt"
	bash "$bench_repo/tests/vm/run.sh" -k "$kver" -o "$out" \
		-t $((${VM_TIMEOUT:-$BENCH_VM_TIMEOUT} * BENCH_RUNS)) "$bench_here/t-bench.sh" &
	runpid=$!
	# Progress: the guest's run headers, from the test's transcript; the
	# tail ends with run.sh.
	tail -n +1 -F -s 1 --pid="$runpid" "$out/tests/bench.log" 2>/dev/null |
		grep --line-buffered -E '^# (===|writers:)' |
		sed -u 's/^# /bench: /' &
	wait "$runpid" || rc=$?
	wait

	{
		bench_host_setup
		cat "$out/host-load.txt"
	} >"$out/host.txt"
	rm -f "$out/host-load.txt"
	echo "host_load_after=$(cut -d' ' -f1-3 /proc/loadavg)" >>"$out/host.txt"
	echo "runtime_s=$((SECONDS - t0))" >>"$out/host.txt"

	if [ ! -f "$out/raw/complete" ]; then
		echo "bench: the guest did not complete the run (see $out/console.log" \
			"and $out/tests/bench.log)" >&2
		[ -f "$out/tests/bench.log" ] && tail -n 30 "$out/tests/bench.log" >&2
		return 1
	fi
	"$py" "$bench_here/report.py" "$out" || return 1
	[ "$rc" = 0 ] || echo "bench: the VM harness reported a failure (status $rc);" \
		"see $out/results" >&2
	echo "bench: done in $((SECONDS - t0)) s; results in $out"
	return "$rc"
}
