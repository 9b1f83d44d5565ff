#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Runs inside the test VM, chrooted into the host root (read-only 9p), with
# the results share at /run/vm-out. run.sh writes /run/vm-out/vm.conf:
#   VM_KVER VM_KO VM_TEST_TIMEOUT VM_TESTS (array of test scripts)
# Loads dm-mod and the module under test, runs each test in its own session
# with a timeout, and prints one PASS/FAIL/SKIP line per test (plus indented
# details) to the console and /run/vm-out/results. A test fails if it exits
# non-zero, times out, leaves devices behind, or the kernel logs a WARN,
# oops, BUG, hung task or similar while it runs. /run/vm-out/summary is the
# success signal and is written last.
set -u
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/tmp LC_ALL=C DM_DISABLE_UDEV=1

VM_OUT=/run/vm-out
# shellcheck source=/dev/null
. "$VM_OUT/vm.conf"
results=$VM_OUT/results
# Kernel log lines that fail the test that was running.
bad='Oops|WARNING:|BUG:|kernel BUG|general protection|blocked for more than|hung_task|Call Trace|UBSAN|KASAN|soft lockup|rcu.*stall|Kernel panic'
passed=0
failed=0
skipped=0

say() {
	printf '%s\n' "$*" >>"$results"
	printf '%s\n' "$*"
}

# Details under a PASS/FAIL line, indented so the host shows them as such.
detail() {
	sed 's/^/    /' | tee -a "$results"
}

# kmsg_mark: open a kernel log window. printk stores into the ring buffer
# (4 MiB, log_buf_len) before write() returns, so dmesg later sees all of it.
kmsg_mark() {
	mark="wbt-vm: mark $RANDOM$RANDOM"
	echo "$mark" >/dev/kmsg
}

# kmsg_bad: bad kernel lines since the mark (since boot if there is none),
# each with the 25 lines after it. During an fstests test that owns the
# kernel log (listed in $VM_OUT/kmsg-own by tests/fstests/guest-run.sh: it
# expects the filesystem's corruption reports), a bare "Call Trace:" and
# the filesystem's own messages ("XFS (dm-1): WARNING: ...") are not; a
# hung task, oops, BUG or WARN_ON splat is.
kmsg_bad() {
	local own=

	[ -r "$VM_OUT/kmsg-own" ] && own=$(cat "$VM_OUT/kmsg-own")
	dmesg | awk -v m="$mark" -v bad="$bad" -v own=" $own " '
		!on { on = 1; if (m != "") { on = index($0, m); next } }
		/run fstests [^ ]+ at / { for (i = 1; i < NF; i++) if ($i == "fstests") t = $(i + 1) }
		/Call Trace:|\] (XFS|EXT4-fs) \(/ && t != "" && index(own, " " t " ") && !ctx { next }
		$0 ~ bad { ctx = 26 }
		ctx > 0 && n < 80 { print; ctx--; n++ }'
}

# wait_exit PID SECS: true if PID exits within SECS; its status in $exit_rc.
wait_exit() {
	local wd ended='' rc
	sleep "$2" &
	wd=$!
	wait -n -p ended "$1" "$wd"
	rc=$?
	if [ "$ended" = "$1" ]; then
		kill "$wd" 2>/dev/null
		wait "$wd" 2>/dev/null
		exit_rc=$rc
		return 0
	fi
	return 1
}

# leftovers: undo (and report) devices and modules a test left behind.
leftovers() {
	local d _ dm=
	while read -r d _; do
		[ "$d" != No ] || continue	# "No devices found"
		echo "left dm device $d behind"
		dm=1
	done < <(dmsetup ls 2>/dev/null)
	# remove_all takes stacked devices top down; --force errors held I/O.
	[ -z "$dm" ] || dmsetup remove_all --force >/dev/null 2>&1
	for d in /sys/kernel/config/nullb/*/; do
		[ -d "$d" ] || continue
		echo "left null_blk ${d%/} behind"
		echo 0 >"$d/power"
		rmdir "$d"
	done
	for d in null_blk scsi_debug; do
		[ -d /sys/module/$d ] || continue
		echo "left module $d loaded"
		rmmod $d
	done
}

# The module under test may be unloaded by a test; put it back.
ensure_loaded() {
	[ -n "$VM_KO" ] && [ ! -d /sys/module/dm_wbthrottle ] &&
		insmod "$VM_KO"
	return 0
}

# run_test FILE: run one test script and report it.
run_test() {
	local t=$1 name tmo='' tmp log pid exit_rc=0 why=() t0 hits skipf line
	name=${t##*/t-}
	name=${name%.sh}
	while read -r line; do
		[[ $line =~ ^#\ vm-timeout:\ *([0-9]+) ]] && tmo=${BASH_REMATCH[1]}
	done <"$t"
	tmo=${tmo:-$VM_TEST_TIMEOUT}
	tmp=/tmp/vm-test/$name
	log=$VM_OUT/tests/$name.log
	skipf=$tmp/.skip
	[ ! -e "$tmp" ] || rm -rf "$tmp"
	mkdir -p "$tmp"
	echo "$name" >"$VM_OUT/running"
	echo "=== RUN $name"
	kmsg_mark
	t0=$EPOCHREALTIME

	# Own session: a timeout can signal the test and all its children.
	(
		export TEST_NAME=$name TEST_TMP=$tmp KVER=$VM_KVER WBT_KO=$VM_KO
		export VM_OUT WBT_SKIP_FILE=$skipf
		cd "$tmp" && exec setsid bash "$t"
	) >"$log" 2>&1 </dev/null &
	pid=$!
	if ! wait_exit "$pid" "$tmo"; then
		why+=("timed out after ${tmo}s")
		kill -TERM -- "-$pid" 2>/dev/null
		if ! wait_exit "$pid" 15; then
			kill -KILL -- "-$pid" 2>/dev/null
			if ! wait_exit "$pid" 15; then
				# Stuck in the kernel: record the blocked tasks
				# and stop, since later tests would hang too.
				echo w >/proc/sysrq-trigger
				why+=("test process cannot be killed; stopping")
				stuck=1
			fi
		fi
	fi
	# Stray background processes of the test may still hold devices.
	kill -KILL -- "-$pid" 2>/dev/null
	[ -n "${stuck:-}" ] || mapfile -t -O ${#why[@]} why < <(leftovers)
	ensure_loaded
	hits=$(kmsg_bad)
	t0=$(((${EPOCHREALTIME/./} - ${t0/./}) / 1000))
	echo "=== END $name status $exit_rc, $t0 ms"

	if [ ${#why[@]} = 0 ] && [ -z "$hits" ] && [ "$exit_rc" = 77 ]; then
		say "SKIP $name: $(cat "$skipf" 2>/dev/null || echo "no reason given")"
		skipped=$((skipped + 1))
		return
	fi
	if [ ${#why[@]} = 0 ] && [ -z "$hits" ] && [ "$exit_rc" = 0 ]; then
		say "PASS $name"
		passed=$((passed + 1))
		return
	fi
	say "FAIL $name"
	failed=$((failed + 1))
	[ "$exit_rc" = 0 ] || why+=("exit status $exit_rc")
	[ ${#why[@]} = 0 ] || printf '%s\n' "${why[@]}" | detail
	if [ -n "$hits" ]; then
		echo "kernel log:" | detail
		printf '%s\n' "$hits" | sed 's/^/  /' | detail
	fi
	echo "last lines of tests/$name.log:" | detail
	tail -n 20 "$log" | sed 's/^/  /' | detail
}

# step NAME CMD...: a harness step reported like a test (module load/unload).
step() {
	local name=$1 hits out
	shift
	echo "$name" >"$VM_OUT/running"
	[ -n "${boot_step:-}" ] || kmsg_mark
	boot_step=
	if out=$("$@" 2>&1); then
		hits=$(kmsg_bad)
		if [ -z "$hits" ]; then
			say "PASS $name"
			passed=$((passed + 1))
			return 0
		fi
	fi
	say "FAIL $name"
	failed=$((failed + 1))
	[ -z "$out" ] || printf '%s\n' "$out" | detail
	[ -z "${hits:-}" ] || printf '%s\n' "$hits" | detail
	return 1
}

# Mounts initramfs-init.sh does not need but tests may.
mkdir -p /tmp/vm-test
mkdir -p /dev/pts /dev/shm
# devtmpfs lacks these links; bash needs /dev/fd for <(...).
ln -sf /proc/self/fd /dev/fd
ln -sf /proc/self/fd/0 /dev/stdin
ln -sf /proc/self/fd/1 /dev/stdout
ln -sf /proc/self/fd/2 /dev/stderr
mount -t devpts devpts /dev/pts
mount -t tmpfs -o mode=1777 shm /dev/shm
mount -t tmpfs -o mode=1777 vartmp /var/tmp
mount -t debugfs debugfs /sys/kernel/debug
mount -t tracefs tracefs /sys/kernel/tracing
mount -t cgroup2 cgroup2 /sys/fs/cgroup
echo 60 >/proc/sys/kernel/hung_task_timeout_secs
echo 1 >/proc/sys/kernel/sysrq

echo "guest: $(uname -r), $(nproc) CPUs, tests: ${VM_TESTS[*]##*/}"
[ "$(uname -r)" = "$VM_KVER" ] || echo "guest: expected kernel $VM_KVER"

# The boot log counts towards module-load; without a module, check it alone.
mark=
boot_step=1
modprobe dm-mod
if [ -n "$VM_KO" ]; then
	step module-load insmod "$VM_KO" || noload=1
else
	step boot true
fi

for t in "${VM_TESTS[@]}"; do
	name=${t##*/t-}
	name=${name%.sh}
	if [ -n "${stuck:-}" ]; then
		say "FAIL $name: not run"
		failed=$((failed + 1))
	elif [ -n "${noload:-}" ]; then
		say "SKIP $name: module not loaded"
		skipped=$((skipped + 1))
	else
		run_test "$t"
	fi
done

if [ -n "$VM_KO" ] && [ -z "${stuck:-}${noload:-}" ]; then
	step module-unload rmmod dm_wbthrottle
fi
dmesg >"$VM_OUT/dmesg.log"

line="$passed passed, $failed failed"
[ "$skipped" = 0 ] || line="$line, $skipped skipped"
say "$line"
rm -f "$VM_OUT/running"
# The success signal: the host trusts nothing else.
echo "$line" >"$VM_OUT/summary.tmp" && mv "$VM_OUT/summary.tmp" "$VM_OUT/summary"
# VM_OUT is 9p without a cache: the host has the results already. A task
# stuck in a test's filesystem would hold sync(2) forever; do not wait on
# it longer than it takes a healthy guest.
sync &
wait_exit $! 60 || echo "guest: sync did not finish in 60 s; powering off"
