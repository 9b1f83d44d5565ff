#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Runs inside the VM guest (tests/vm/guest.sh runs the t-*.sh wrappers of
# this directory, which exec this script):
#
#	guest-run.sh FSTYP TARGET [LIST]
#
# Stacks TARGET (wbthrottle, or linear as the control) on three
# partitions of the QEMU virtio-scsi disk: TEST_DEV, SCRATCH_DEV and
# LOGWRITES_DEV (not the NVMe disk: README.md, "When the emulated disk
# stalls"). Then runs fstests' ./check on FSTYP with the selection named
# in $VM_OUT/fstests.conf (written by tests/fstests/run.sh), or the list
# LIST of this directory instead. With
# FST_CONTROL=failed, the control (linear) runs only what failed over
# wbthrottle earlier in this boot, and is skipped if nothing did.
# Results go to $VM_OUT/fstests/FSTYP-TARGET[-LIST]/: fstests' own files,
# results.tsv (test, pass|fail|notrun|stopped, seconds, reason; stopped:
# killed at the deadline) and, written last
# as the success signal, done (the wall seconds of ./check).
#
# A failing fstests test does not fail this script: only the host can tell
# a wbthrottle-only failure, by comparing with the dm-linear control. A
# hung task or kernel warning fails it (guest.sh checks the kernel log), and
# results.tsv names the fstests test during which the kernel said it.
# shellcheck source=../vm/lib.sh
. "$(dirname "$0")/../vm/lib.sh"
trap lower_cleanup EXIT

fs=$1
target=$2
list=${3:-}
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=/dev/null
. "$VM_OUT/fstests.conf"
combo=$fs-$target${list:+-$list}
res=$VM_OUT/fstests/$combo
src=/var/tmp/fstests

case $target in wbthrottle | linear) ;; *) die "unknown target $target" ;; esac

# The selection: a group (-g quick), or the tests of a list file, minus
# those of the other filesystem's own directory.
args=()
sel=${list:-$FST_SELECTION}
if [ "$target" = linear ] && [ "$FST_CONTROL" = failed ]; then
	wres=$VM_OUT/fstests/$fs-wbthrottle${list:+-$list}
	[ -f "$wres/done" ] || die "no finished wbthrottle run to control"
	{
		cut -f1 "$wres/kernel.tsv"
		awk -F'\t' '$2 == "fail" { print $1 }' "$wres/results.tsv"
	} | sort -u >"$TEST_TMP/control.list"
	[ -s "$TEST_TMP/control.list" ] || skip "nothing failed over wbthrottle"
	sel=$TEST_TMP/control.list
fi
case $sel in
group:*) args+=(-g "${sel#group:}") ;;
*)
	# NAME (NAME.list here) or the path of a list file
	f=$here/$sel.list
	[[ $sel != /* ]] || f=$sel
	while read -r t _; do
		case $t in
		xfs/* | ext4/*) [ "${t%%/*}" = "$fs" ] || continue ;;
		esac
		args+=("$t")
	done < <(sed 's/#.*//' "$f" | grep -v '^[[:space:]]*$')
	;;
esac
[ ${#args[@]} -gt 0 ] || die "empty selection $sel"

# Tasks that wait on held writeback longer than this are reported; 30 s
# leaves room for TCG's slowness (the dm-linear control shows if not).
sysfs_write /proc/sys/kernel/hung_task_timeout_secs "$FST_HUNG_SECS"
# The kernel stops reporting after 10 hung tasks per boot: the control and
# later repeats (-I N) in the same boot would see none. Report them all.
sysfs_write /proc/sys/kernel/hung_task_warnings -1 ||
	log "cannot lift the limit of hung-task reports"
# request_module() cannot reach the chroot: load what the tests use.
for m in "$fs" dm-flakey dm-log-writes dm-thin-pool dm-snapshot dm-delay \
	dm-dust loop; do
	modprobe "$m" 2>/dev/null || log "no module $m"
done

scsi=$(lower_dev scsi)
# The disk's own blk-wbt off under both targets: `wbthrottle create` does
# so for wbthrottle (two throttles in a row each take the other's queueing
# for latency), and the control must differ from it only in the target.
# With it on, 6.12's blk-wbt left dm-thin's worker in wbt_wait() for good
# in generic/757 over dm-linear (README.md, "Verdict").
sysfs_write "/sys/block/${scsi##*/}/queue/wbt_lat_usec" 0
# TEST_DEV on the first half of the SCSI disk, SCRATCH_DEV on the next
# three eighths, LOGWRITES_DEV (the log of dm-log-writes) on the rest;
# each device keeps its queue.
size=$(sectors "$scsi")
run sfdisk -q --wipe always "$scsi" <<EOF
label: dos
start=2048, size=$((size / 2 - 2048)), type=83
start=$((size / 2)), size=$((size * 3 / 8)), type=83
start=$((size * 7 / 8)), type=83
EOF
part=$scsi
[[ $scsi != *[0-9] ]] || part=${scsi}p
wait_for 20 test -b "${part}3" || die "no ${part}3 after sfdisk"

stack() {
	local name=$1 dev=$2
	if [ "$target" = wbthrottle ]; then
		dm_create "$name" "0 $(sectors "$dev") wbthrottle $dev ${FST_WBT_OPTS:-}"
	else
		dm_create "$name" "0 $(sectors "$dev") linear $dev 0"
	fi
	# As udev would: /dev/mapper/NAME links to dm-N, so that fstests
	# finds the device's sysfs directory (xfs/011 reads its log state).
	run ln -sfn "../dm-$(dmsetup info -c --noheadings -o minor "$name")" \
		"/dev/mapper/$name"
}
stack fst-test "${part}1"
stack fst-scratch "${part}2"
stack fst-logw "${part}3"

# fstests writes into its own tree (results aside); the host root is
# read-only here, so run a copy in the guest's tmpfs (once per boot).
if [ ! -f "$src/.unpacked" ]; then
	run rm -rf "$src"
	run mkdir -p "$src"
	run tar -xf "$FST_TAR" -C "$src"
	touch "$src/.unpacked"
fi
# Tests that own the kernel log: they corrupt metadata on purpose and turn
# fstests' dmesg check off (_disable_dmesg_check) or filter it themselves
# (_check_dmesg FILTER), since the filesystem reports the corruption with a
# stack dump. During them a bare "Call Trace:" and the filesystem's own
# messages ("XFS (dm-1): WARNING: Reset corrupted AGFL") are theirs, here
# and in guest.sh (kmsg_bad); a hung task, oops, BUG or WARN_ON splat
# still counts.
(cd "$src/tests" && grep -lE '_disable_dmesg_check|_check_dmesg [a-z_]' -- */[0-9]*) |
	tr '\n' ' ' >"$VM_OUT/kmsg-own"

# No udevd runs in the guest: dmsetup makes /dev/mapper/NAME a node of
# its own (DM_DISABLE_UDEV=1), and fstests' "udevadm wait" for a new dm
# device would wait forever. This stand-in answers settle and wait at
# once, and on wait does udev's part: /dev/mapper/NAME becomes a link to
# dm-N, through which fstests finds the device in sysfs (dm-flakey tests
# on xfs set /sys/fs/xfs/dm-N/error/...).
mkdir -p "$src/.bin"
cat >"$src/.bin/udevadm" <<'EOF'
#!/bin/sh
case $1 in
settle) exit 0 ;;
wait)
	for a; do
		case $a in /dev/mapper/?*) ;; *) continue ;; esac
		[ -b "$a" ] && [ ! -L "$a" ] || continue
		n=$(dmsetup info -c --noheadings -o minor "${a#/dev/mapper/}") &&
			ln -sfn "../dm-$n" "$a"
	done
	exit 0
	;;
esac
exec /usr/bin/udevadm "$@"
EOF
chmod +x "$src/.bin/udevadm"

# xfsdump writes its inventory under /var/lib/xfsdump (xfs/026 and
# others); the root is read-only, so give it a tmpfs there.
if ! mountpoint -q /var/lib/xfsdump; then
	run mount -t tmpfs -o mode=0755 xfsdump /var/lib/xfsdump ||
		log "no writable /var/lib/xfsdump: xfsdump tests will fail"
fi

mkdir -p "$TEST_TMP/test" "$TEST_TMP/scratch"
rm -rf "$res"
mkdir -p "$res"
if [ "$fs" = xfs ]; then
	run mkfs.xfs -f -q /dev/mapper/fst-test
else
	run mkfs.ext4 -F -q /dev/mapper/fst-test
fi
cat >"$src/local.config" <<EOF
export FSTYP=$fs
export TEST_DEV=/dev/mapper/fst-test
export TEST_DIR=$TEST_TMP/test
export SCRATCH_DEV=/dev/mapper/fst-scratch
export SCRATCH_MNT=$TEST_TMP/scratch
export LOGWRITES_DEV=/dev/mapper/fst-logw
export RESULT_BASE=$res
export TIME_FACTOR=$FST_TIME_FACTOR
export LOAD_FACTOR=$FST_LOAD_FACTOR
export SOAK_DURATION=$FST_SOAK_DURATION
EOF
log "local.config:"
cat "$src/local.config" >&2

# ./check in its own process group, which timeout(1) signals whole at
# the deadline: a combination that runs out of time still reports what
# finished, and the test it stopped in fails.
# exclude holds what fails everywhere; exclude-SERIES, exclude-FSTYP and
# exclude-SERIES-FSTYP (SERIES: 6.1, 6.12) what fails only there.
xargs=()
series=$(uname -r | cut -d. -f1,2)
for f in exclude exclude-"$series" exclude-"$fs" exclude-"$series-$fs"; do
	[ ! -f "$here/$f" ] || xargs+=(-E "$here/$f")
done
t0=$SECONDS
rc=0
# shellcheck disable=SC2086 # FST_CHECK_ARGS: one option per word
(cd "$src" && PATH=$src/.bin:$PATH run timeout -k 30 "$FST_DEADLINE" \
	./check "${xargs[@]}" -R xunit ${FST_CHECK_ARGS:-} "${args[@]}") 2>&1 |
	tee "$res/check.out" || rc=$?
wall=$((SECONDS - t0))
log "./check: status $rc in ${wall}s (deadline ${FST_DEADLINE}s)"
running=$(dmesg_since_mark | sed -n 's/.*run fstests \([^ ]*\) at .*/\1/p' | tail -n 1)

# results.tsv from fstests' xunit report (or, if ./check was killed before
# writing it, from its output); then the kernel log: every hung task or
# warning goes to the test that was running (./check writes "run fstests
# TEST at ..." to /dev/kmsg before each test), with the first I/O timeout
# of the lower disk during that test, if there was one, and the first
# functions of the first complaint's call trace (what was stuck where).
python3 "$here/results.py" "$res" "$rc" "$running" "${args[@]}" >"$res/results.tsv"
dmesg_since_mark | awk -v bad="$FST_KERNEL_BAD" -v stall="${FST_DEVICE_STALL:-^$}" \
	-v own=" $(cat "$VM_OUT/kmsg-own") " '
	function text(s) { sub(/^\[[^]]*\] */, "", s); return s }
	/run fstests [^ ]+ at / { for (i = 1; i < NF; i++) if ($i == "fstests") t = $(i + 1) }
	t == "" { next }
	/Call Trace:|\] (XFS|EXT4-fs) \(/ && index(own, " " t " ") && !cap { next }
	$0 ~ stall && !(t in dev) { dev[t] = text($0) }
	cap == t && /<\/TASK>|^\[[^]]*\] *---\[/ { cap = "" }
	cap == t && intrace && !/\] *\? / && match(text($0), /^[A-Za-z_][A-Za-z0-9_.]*\+0x/) {
		f = substr(text($0), 1, RLENGTH - 3)
		if (nf++ < 12) trace[t] = trace[t] (trace[t] == "" ? "" : " < ") f
	}
	cap == t && /Call Trace:/ { intrace = 1 }
	$0 ~ bad && !(t in seen) { seen[t] = text($0); order[++n] = t; cap = t; intrace = 0; nf = 0 }
	END { for (i = 1; i <= n; i++) { o = order[i]; print o "\t" seen[o] "\t" dev[o] "\t" trace[o] } }
' >"$res/kernel.tsv"
if [ -s "$res/kernel.tsv" ]; then
	log "kernel log lines during tests:"
	cat "$res/kernel.tsv" >&2
fi
cat "$res/results.tsv" >&2
[ -s "$res/results.tsv" ] || die "./check reported no test (status $rc)"
echo "$wall" >"$res/done"
