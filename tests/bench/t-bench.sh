#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# The benchmark's guest side: run by tests/vm/guest.sh inside the QEMU guest
# like a functional test (tests/bench/lib-bench.sh passes it to
# tests/vm/run.sh; the t- prefix is what guest.sh names tests by, and
# tests/vm/run.sh only picks up tests/vm/t-*.sh by itself). It reads its
# parameters from $VM_OUT/bench.conf, written by the host, and for each
# scenario and each variant:
#
#   1. loads a fresh wbt_diskmodel (so every run starts with an empty disk
#      and an empty write cache), sets the disk's own blk-wbt,
#   2. stacks the variant on it (dm-linear or wbthrottle), makes the
#      filesystem and the files the readers need, drops the page cache,
#   3. runs the workload, sampling `dmsetup status`, the model's counters
#      and the kernel's dirty/writeback counters every second and recording
#      the throttle's tracepoints,
#   4. keeps the raw output (fio JSON, latency logs, timings, the final
#      status line) in $VM_OUT/raw/<scenario>/<variant>/, and tears down.
#
# It measures only; tests/bench/report.py makes the tables and plots on the
# host. It exits non-zero only if something broke.
# vm-timeout: 3300
. "$(dirname "$0")/../vm/lib.sh"

# shellcheck source=/dev/null
. "$VM_OUT/bench.conf"

DM=bench
MNT=$TEST_TMP/mnt
RAW=$VM_OUT/raw
MOD=wbt_diskmodel
LOWER=/dev/wbtdm0
Q=/sys/block/wbtdm0/queue
P=/sys/module/$MOD/parameters
PCTS=1:5:10:20:30:40:50:60:70:80:90:95:99:99.5:99.9:99.95:99.99
DIRTY_SAVED=

bench_cleanup() {
	local rc=$?
	set +e
	jobs -p | xargs -r kill 2>/dev/null
	wait 2>/dev/null
	mountpoint -q "$MNT" && umount "$MNT"
	dmsetup info "$DM" >/dev/null 2>&1 && dmsetup remove --retry "$DM"
	[ -d /sys/module/$MOD ] && rmmod $MOD
	if [ -n "$DIRTY_SAVED" ]; then
		# Writing a *_ratio clears the matching *_bytes.
		read -r bg fg <<<"$DIRTY_SAVED"
		echo "$bg" >/proc/sys/vm/dirty_background_ratio
		echo "$fg" >/proc/sys/vm/dirty_ratio
	fi
	return $rc
}
trap bench_cleanup EXIT

run modprobe xfs
run modprobe ext4
mkdir -p "$MNT" "$RAW"

# --- lower device and variants

# model_load [PARAM=VALUE...]: a fresh disk model; the scenario's own
# parameters come after (and so override) BENCH_MODEL_ARGS.
model_load() {
	# shellcheck disable=SC2086 # extra module parameters, one per word
	run insmod "$BENCH_MODEL_KO" profile="$BENCH_PROFILE" $BENCH_MODEL_ARGS "$@"
	wait_for 10 test -b $LOWER || die "no $LOWER after insmod"
}

model_unload() {
	wait_for 20 rmmod $MOD || die "cannot rmmod $MOD"
}

# variant_up VARIANT [MODEL_PARAM...]: lower device, its blk-wbt, the DM
# device on top. "wbthrottle@key=value,..." adds options to BENCH_WBT_OPTS,
# so option variants can be compared in one boot.
variant_up() {
	local full=$1 v=${1%%@*} extra='' sz kv
	shift
	model_load "$@"
	case $v in
	none | wbthrottle) sysfs_write $Q/wbt_lat_usec 0 ;;
	# -1: the kernel's default for this device (75 ms if rotational).
	blk-wbt) sysfs_write $Q/wbt_lat_usec -1 ;;
	*) die "unknown variant $v" ;;
	esac
	sz=$(sectors $LOWER)
	case $v in
	none | blk-wbt) dm_create $DM "0 $sz linear $LOWER 0" ;;
	wbthrottle)
		if [ "$full" != "$v" ]; then
			for kv in $(echo "${full#*@}" | tr ',' ' '); do
				extra="$extra ${kv%%=*} ${kv#*=}"
			done
		fi
		# shellcheck disable=SC2086 # options, one per word
		set -- $BENCH_WBT_OPTS $extra
		if [ $# -gt 0 ]; then
			dm_create $DM "0 $sz wbthrottle $LOWER $# $*"
		else
			dm_create $DM "0 $sz wbthrottle $LOWER"
		fi
		;;
	esac
}

variant_down() {
	mountpoint -q "$MNT" && run umount "$MNT"
	run dmsetup remove --retry $DM
	model_unload
}

# lower_info: the lower device as the kernel sees it.
lower_info() {
	local f
	for f in scheduler wbt_lat_usec rotational write_cache nr_requests \
		max_sectors_kb read_ahead_kb; do
		printf 'lower.%s=%s\n' "$f" "$(cat $Q/$f 2>/dev/null)"
	done
	printf 'dm.read_ahead_kb=%s\n' \
		"$(cat /sys/block/"$(basename "$(readlink -f /dev/mapper/$DM)")"/queue/read_ahead_kb)"
	printf 'dm.table=%s\n' "$(dmsetup table $DM)"
	for f in profile size_mb queue_depth bw_mbps access_us seq_access_us \
		rotational wcache_mb nr_hw_queues extra_latency_us; do
		printf 'model.%s=%s\n' $f "$(cat $P/$f)"
	done
}

mkfs_mount() {
	case $1 in
	xfs) run mkfs.xfs -q -f /dev/mapper/$DM ;;
	# Initialise inode tables and journal now: ext4lazyinit would
	# otherwise write them in the background during the measurement.
	ext4) run mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 /dev/mapper/$DM ;;
	*) die "unknown filesystem $1" ;;
	esac
	run mount -t "$1" /dev/mapper/$DM "$MNT"
}

# mkfile NAME MB: a file written with O_DIRECT, so it is on the disk and
# not in the page cache.
mkfile() {
	run dd if=/dev/zero of="$MNT/$1" bs=1M count="$2" oflag=direct conv=fsync status=none
}

# --- tracing: the throttles' own view (window statistics and depth steps)

TR=/sys/kernel/tracing
# Events per variant: wbthrottle's, or blk-wbt's on the lower device.
trace_events() {
	case ${1%%@*} in
	wbthrottle) echo "wbthrottle/wbthrottle_stat wbthrottle/wbthrottle_step" ;;
	blk-wbt) echo "wbt/wbt_stat wbt/wbt_step wbt/wbt_timer" ;;
	esac
}

trace_start() {
	local e
	[ -d $TR/events ] || mount -t tracefs tracefs $TR 2>/dev/null || return 0
	echo >$TR/trace
	for e in $(trace_events "$1"); do
		[ -e "$TR/events/$e/enable" ] && echo 1 >"$TR/events/$e/enable"
	done
	return 0
}

# trace_stop VARIANT DIR: keep the trace (and blk-wbt's debugfs state).
trace_stop() {
	local e
	for e in $(trace_events "$1"); do
		[ -e "$TR/events/$e/enable" ] && echo 0 >"$TR/events/$e/enable"
	done
	[ -z "$(trace_events "$1")" ] || cat $TR/trace >"$2/trace.txt" 2>/dev/null
	if [ "$1" = blk-wbt ] && [ -d /sys/kernel/debug/block/wbtdm0/rqos/wbt ]; then
		grep -r . /sys/kernel/debug/block/wbtdm0/rqos/wbt/ >"$2/wbt-debugfs.txt" 2>/dev/null
	fi
	return 0
}

# --- background pieces

# sampler FILE: every second, one line: time | dm status | model counters
# | Dirty and Writeback from /proc/meminfo (kB).
sampler() {
	local s m d
	while :; do
		s=$(dmsetup status $DM 2>/dev/null)
		m=$(tr '\n' ' ' <$P/stats)
		d=$(awk '$1 == "Dirty:" || $1 == "Writeback:" { printf "%s%s ", $1, $2 }' /proc/meminfo)
		printf '%s | %s | %s| %s\n' "$EPOCHREALTIME" "$s" "$m" "$d"
		sleep 1
	done >"$1"
}

# writers DIR: BENCH_WRITERS buffered dd's, each writing its own file of
# BENCH_WRITER_MB MB, then syncfs; times go to DIR/writers.txt.
writers() {
	local dir=$1 i pids=() t0
	t0=$EPOCHREALTIME
	for i in $(seq "$BENCH_WRITERS"); do
		dd if=/dev/zero of="$MNT/w$i" bs=1M count="$BENCH_WRITER_MB" status=none &
		pids+=($!)
	done
	wait "${pids[@]}"
	synced "$dir" "$t0" "$BENCH_WRITERS" "$BENCH_WRITER_MB"
}

# synced DIR T0 WRITERS MB: the writers that started at T0 are done
# writing; syncfs, and record the times in DIR/writers.txt.
synced() {
	local t1 t2
	t1=$EPOCHREALTIME
	sync -f "$MNT"
	t2=$EPOCHREALTIME
	{
		echo "start=$2"
		echo "dd_done=$t1"
		echo "sync_done=$t2"
		echo "writers=$3"
		echo "writer_mb=$4"
		awk -v a="$2" -v b="$t1" -v c="$t2" \
			'BEGIN { printf "dd_s=%.3f\nwall_s=%.3f\n", b - a, c - a }'
	} >"$1/writers.txt"
}

# rwriters DIR: random buffered writers: 4 fio jobs, each overwriting
# BENCH_RWRITE_MB in 4 KiB blocks at random in its own file of 4 x that
# (written beforehand), then syncfs. Writeback then issues
# small scattered writes, whose rate on a device with latency outside the
# head (flight_us) grows with the writes in flight.
RWRITERS=4
rwriters() {
	local dir=$1 t0
	t0=$EPOCHREALTIME
	# shellcheck disable=SC2016 # $jobnum is fio's, not the shell's
	run fio --name=rw --directory="$MNT" --filename_format='rw.$jobnum' \
		--rw=randwrite --bs=4k --size="$((BENCH_RWRITE_MB * 4))M" \
		--io_size="${BENCH_RWRITE_MB}M" --numjobs=$RWRITERS \
		--ioengine=psync --randrepeat=0 --output="$dir/rwriters.txt" ||
		die "fio failed: $(cat "$dir/rwriters.txt")"
	synced "$dir" "$t0" $RWRITERS "$BENCH_RWRITE_MB"
}

# The load's processes start when $GO exists: fio and the commit log set
# themselves up, create $READY and then wait for it, so they start on cue.
# The writers start only once $READY exists: under emulation, with 16 dd's
# sharing the CPU, starting Python took longer than the writers' whole
# writeback, and the commit log's first commit came after it.
GO=$TEST_TMP/run/go
READY=$TEST_TMP/run/ready

# fio_bg NAME DIR ARGS...: a fio job in the background with JSON output
# and a per-I/O completion latency log (Unix-epoch ms timestamps); its I/O
# starts at `go`; its pid in $BG_PID.
fio_bg() {
	local name=$1 dir=$2
	shift 2
	printf '+ fio --name=%s %s &\n' "$name" "$(_quote "$@")" >&2
	fio --name="$name" --output-format=json --output="$dir/$name.json" \
		--percentile_list=$PCTS --write_lat_log="$dir/$name" \
		--log_avg_msec=0 --log_unix_epoch=1 \
		--exec_prerun="sh -c 'touch $READY; while [ ! -e $GO ]; do sleep 0.02; done'" \
		"$@" >"$dir/$name.err" 2>&1 &
	BG_PID=$!
}

# commit_bg DIR: the commit log (commit-log.py: 4 KiB write + fsync, one
# at a time) over $MNT/clog, logging to DIR/commit_clat.1.log.
commit_bg() {
	log "commit-log.py $MNT/clog &"
	/usr/bin/python3 "$(dirname "$0")/commit-log.py" "$MNT/clog" \
		"$1/commit_clat.1.log" "$GO" "$READY" >"$1/commit.err" 2>&1 &
	BG_PID=$!
}

# bg_ready DIR: wait until the load of fio_bg or commit_bg is set up and
# waits for $GO; record when.
bg_ready() {
	wait_for 120 test -e "$READY" || die "the load was not ready within 120 s"
	echo "load_ready=$EPOCHREALTIME" >>"$1/phases.txt"
}

# go DIR: start the load; record when.
go() {
	echo "load_start=$EPOCHREALTIME" >>"$1/phases.txt"
	touch "$GO"
}

# bg_started: wait until the load process of fio_bg or commit_bg has done
# some I/O of its own: read_bytes counts what a task submitted to the
# disk, write_bytes what it dirtied.
bg_started() {
	# shellcheck disable=SC2317 # called through wait_for
	_bg_io() {
		local p
		for p in $(pgrep -P "$BG_PID") "$BG_PID"; do
			awk '$1 == "read_bytes:" || $1 == "write_bytes:" { n += $2 }
				END { exit !(n >= 8192) }' /proc/"$p"/io 2>/dev/null && return 0
		done
		return 1
	}
	wait_for 60 _bg_io || die "the load did no I/O within 60 s"
}

# bg_stop: end the load (SIGINT: fio writes its JSON and logs, the commit
# log its log). Again until it is gone: a SIGINT that reaches fio while it
# still sets up is lost, and fio would then run for all of BENCH_MAX_RUN
# (seen with the fast "ssd" profile, where the writers are done first).
bg_stop() {
	local i
	for i in $(seq 100); do
		kill -INT "$BG_PID" 2>/dev/null || break
		sleep 0.2
	done
	kill -0 "$BG_PID" 2>/dev/null && kill -TERM "$BG_PID" 2>/dev/null
	wait "$BG_PID" || true
}

# --- workloads; each runs in a prepared filesystem, results in $1

reader_fio_args() {
	echo "--filename=$MNT/rfile --rw=randread --bs=4k --direct=1 --ioengine=psync --iodepth=1"
}

# writers_bg DIR: start the writers in the background (pid in $WPID) and
# wait until their writeback is under way (16 MiB written to the disk);
# record when. The page cache takes the first few seconds of writes, so
# the disk is idle at first.
writers_bg() {
	writers "$1" &
	WPID=$!
	# shellcheck disable=SC2317 # called through wait_for
	_wb_seen() {
		awk '$1 == "write_bytes" { exit !($2 >= 16 * 1048576) }' "$P/stats"
	}
	wait_for 60 _wb_seen || die "no writeback 60 s after the writers started"
	echo "writeback_start=$EPOCHREALTIME" >>"$1/phases.txt"
}

# with_writers DIR: the load prepared by fio_bg/commit_bg runs from the
# moment writeback is under way until the writers are done (written and
# synced). report.py counts only I/O issued in that window.
with_writers() {
	bg_ready "$1"
	writers_bg "$1"
	go "$1"
	bg_started
	wait "$WPID"
	echo "writers_done=$EPOCHREALTIME" >>"$1/phases.txt"
	bg_stop
}

# randread: the random 4 KiB O_DIRECT reader.
wl_randread() {
	# shellcheck disable=SC2046
	fio_bg reader "$1" $(reader_fio_args) --time_based --runtime="$BENCH_MAX_RUN"
	with_writers "$1"
}

# seqread: a buffered sequential reader of a cold file, one pass (or until
# the writers are done).
wl_seqread() {
	fio_bg reader "$1" --filename="$MNT/sfile" --rw=read --bs=128k \
		--ioengine=psync --size="${BENCH_SEQFILE_MB}M" --runtime="$BENCH_MAX_RUN"
	with_writers "$1"
}

# fsync: a commit log: 4 KiB writes, each followed by fsync().
wl_fsync() {
	commit_bg "$1"
	with_writers "$1"
}

wl_writers() {
	writers "$1"
}

wl_rwriters() {
	rwriters "$1"
}

# reader alone: the device's own latency, the floor for the others.
wl_reader() {
	# shellcheck disable=SC2046
	fio_bg reader "$1" $(reader_fio_args) --time_based --runtime="$BENCH_ALONE_S"
	bg_ready "$1"
	go "$1"
	wait "$BG_PID" || die "fio failed: $(cat "$1/reader.err")"
}

# Scenario names: <fs>-<workload>[@<model param>=<value>[,...]].
scenario_fs() {
	case ${1%%@*} in
	ext4-*) echo ext4 ;;
	*) echo xfs ;;
	esac
}

scenario_wl() {
	local wl=${1%%@*}
	wl=${wl#*-}
	case $wl in
	randread | seqread | fsync | writers | rwriters | reader) echo "$wl" ;;
	*) die "unknown scenario $1" ;;
	esac
}

# one_run SCENARIO VARIANT RUN: the results in raw/SCENARIO/ (run 1) or
# raw/SCENARIO~RUN/.
one_run() {
	local sc=$1 v=$2 fs wl dir work spid t0 i params=() name=$1
	fs=$(scenario_fs "$sc")
	wl=$(scenario_wl "$sc")
	case $sc in *@*) IFS=, read -r -a params <<<"${sc#*@}" ;; esac
	[ "$3" = 1 ] || name=$sc~$3
	dir=$RAW/$name/$v
	work=$TEST_TMP/run
	rm -rf "$dir" "$work"
	mkdir -p "$dir" "$work"
	log "=== $name / $v"
	echo "$name $v" >"$VM_OUT/bench-running"
	t0=$SECONDS

	variant_up "$v" "${params[@]}"
	mkfs_mount "$fs"
	case $wl in
	randread | reader) mkfile rfile "$BENCH_RFILE_MB" ;;
	seqread) mkfile sfile "$BENCH_SEQFILE_MB" ;;
	fsync) mkfile clog 16 ;;
	rwriters)
		for i in $(seq 0 $((RWRITERS - 1))); do
			mkfile "rw.$i" $((BENCH_RWRITE_MB * 4))
		done
		;;
	esac
	run sync
	sysfs_write /proc/sys/vm/drop_caches 3
	sleep 1
	{
		echo "scenario=$sc"
		echo "run=$3"
		echo "variant=$v"
		echo "fs=$fs"
		echo "workload=$wl"
		lower_info
	} >"$dir/setup.txt"
	echo 1 >$P/reset_stats

	sampler "$work/samples.txt" &
	spid=$!
	trace_start "$v"
	"wl_$wl" "$work"
	dmsetup status $DM >"$dir/status-end.txt"
	trace_stop "$v" "$dir"
	kill "$spid"
	wait "$spid" 2>/dev/null || true
	cat $P/stats >"$dir/model-stats.txt"
	log "status $v: $(cat "$dir/status-end.txt")"
	[ ! -f "$work/writers.txt" ] || log "writers: $(tr '\n' ' ' <"$work/writers.txt")"

	# Only the completion latency log is kept (slat is ~0 for psync).
	rm -f "$work"/*_lat.*.log "$work"/*_slat.*.log
	cp "$work"/* "$dir"/
	variant_down
	echo "run_s=$((SECONDS - t0))" >>"$dir/setup.txt"
	rm -rf "$work"
}

# --- main

{
	echo "kernel=$(uname -r)"
	echo "cpus=$(nproc)"
	echo "mem_kb=$(awk '$1 == "MemTotal:" { print $2 }' /proc/meminfo)"
	echo "fio=$(fio --version)"
	echo "xfsprogs=$(mkfs.xfs -V 2>&1 | head -n 1)"
	echo "e2fsprogs=$(mke2fs -V 2>&1 | head -n 1)"
	echo "module_srcversion=$(cat /sys/module/dm_wbthrottle/srcversion 2>/dev/null)"
} >"$RAW/guest.txt"

DIRTY_SAVED="$(sysctl -n vm.dirty_background_ratio) $(sysctl -n vm.dirty_ratio)"
if [ -n "$BENCH_DIRTY_BG_MB" ]; then
	sysfs_write /proc/sys/vm/dirty_background_bytes $((BENCH_DIRTY_BG_MB << 20))
	sysfs_write /proc/sys/vm/dirty_bytes $((BENCH_DIRTY_MB << 20))
fi
sysctl vm.dirty_background_ratio vm.dirty_ratio vm.dirty_background_bytes \
	vm.dirty_bytes vm.dirty_expire_centisecs vm.dirty_writeback_centisecs \
	| sed 's/ = /=/' >>"$RAW/guest.txt"

for r in $(seq 1 "${BENCH_RUNS:-1}"); do
	for sc in $BENCH_SCENARIOS; do
		for v in $BENCH_VARIANTS; do
			one_run "$sc" "$v" "$r"
		done
	done
done
rm -f "$VM_OUT/bench-running"
echo complete >"$RAW/complete"
