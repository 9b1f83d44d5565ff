# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash
# Helpers for the VM functional tests, sourced first by each tests/vm/t-*.sh:
#
#	. "$(dirname "$0")/lib.sh"
#	trap lower_cleanup EXIT
#
# guest.sh runs every test with bash in its own scratch directory $TEST_TMP
# and records stdout and stderr as the test's transcript. Commands run
# through `run` appear there as "+ cmd" (on stderr, like set -x, so that
# $(run ...) captures only the command's output). Assertions die with
# "FAIL: ..." and exit 1. Environment from guest.sh: TEST_NAME, TEST_TMP,
# KVER, WBT_KO (the module, empty under run.sh -n), VM_OUT, DM_DISABLE_UDEV.

set -eu -o pipefail
shopt -s inherit_errexit
# Let EXIT traps (cleanup) run when guest.sh times a test out.
trap 'exit 143' TERM
trap 'exit 130' INT

TEST_TMP=${TEST_TMP:-$(mktemp -d)}
_lib_state=$TEST_TMP/.lib
mkdir -p "$_lib_state"

# _quote ARG...: the arguments as a shell would need them typed.
_quote() {
	local a out=
	for a; do
		case $a in
		'' | *[!A-Za-z0-9_./=:,+@%^-]*) a="'${a//\'/\'\\\'\'}'" ;;
		esac
		out+=" $a"
	done
	printf '%s' "${out# }"
}

# log MSG: a comment line in the transcript.
log() {
	printf '# %s\n' "$*" >&2
}

# run CMD...: echo "+ CMD" to the transcript and run it.
run() {
	printf '+ %s\n' "$(_quote "$@")" >&2
	"$@"
}

# die MSG: fail the test.
die() {
	printf 'FAIL: %s\n' "$*" >&2
	exit 1
}

# skip REASON: report the test as SKIP (exit status 77).
skip() {
	printf '%s\n' "$*" >"${WBT_SKIP_FILE:-/dev/null}"
	printf 'SKIP: %s\n' "$*" >&2
	exit 77
}

# sysfs_write FILE VALUE: echo VALUE >FILE, in the transcript.
sysfs_write() {
	printf '+ echo %s > %s\n' "$(_quote "$2")" "$1" >&2
	printf '%s\n' "$2" >"$1"
}

# assert_eq A B [MSG] and assert_ne: string comparison.
assert_eq() {
	[ "$1" = "$2" ] || die "${3:-assert_eq}: '$1' != '$2'"
	log "ok: ${3:-assert_eq}: '$1'"
}

assert_ne() {
	[ "$1" != "$2" ] || die "${3:-assert_ne}: both '$1'"
	log "ok: ${3:-assert_ne}: '$1' != '$2'"
}

# _num_cmp A OP B: numeric comparison, decimals allowed.
_num_cmp() {
	local re='^-?[0-9]+([.][0-9]+)?$'
	[[ $1 =~ $re ]] || die "not a number: '$1'"
	[[ $3 =~ $re ]] || die "not a number: '$3'"
	awk -v a="$1" -v b="$3" "BEGIN { exit !(a $2 b) }"
}

# assert_le A B [MSG], assert_ge A B [MSG]: numeric A <= B, A >= B.
assert_le() {
	_num_cmp "$1" '<=' "$2" || die "${3:-assert_le}: $1 > $2"
	log "ok: ${3:-assert_le}: $1 <= $2"
}

assert_ge() {
	_num_cmp "$1" '>=' "$2" || die "${3:-assert_ge}: $1 < $2"
	log "ok: ${3:-assert_ge}: $1 >= $2"
}

# assert_match TEXT REGEX [MSG]: some line of TEXT matches the ERE.
assert_match() {
	grep -Eq -- "$2" <<<"$1" || die "${3:-assert_match}: no line matches /$2/ in: $1"
	log "ok: ${3:-assert_match}: /$2/"
}

# assert_no_match TEXT REGEX [MSG]: no line of TEXT matches the ERE.
assert_no_match() {
	! grep -Eq -- "$2" <<<"$1" || die "${3:-assert_no_match}: a line matches /$2/ in: $1"
	log "ok: ${3:-assert_no_match}: not /$2/"
}

# expect_fail [-m REGEX] CMD...: CMD must fail (and its stderr match the
# ERE). Its stderr is left in $EXPECT_STDERR and copied to the transcript.
expect_fail() {
	local re='' f
	if [ "$1" = -m ]; then
		re=$2
		shift 2
	fi
	printf '+ ! %s\n' "$(_quote "$@")" >&2
	f=$(mktemp -p "$TEST_TMP")
	if "$@" 2>"$f"; then
		cat "$f" >&2
		die "expected to fail: $(_quote "$@")"
	fi
	EXPECT_STDERR=$(cat "$f")
	rm -f "$f"
	[ -z "$EXPECT_STDERR" ] || printf '%s\n' "$EXPECT_STDERR" >&2
	if [ -n "$re" ] && ! grep -Eq -- "$re" <<<"$EXPECT_STDERR"; then
		die "stderr does not match /$re/"
	fi
	return 0
}

# wait_for SECS CMD...: poll CMD every 0.1 s until it succeeds.
wait_for() {
	local end=$((SECONDS + $1))
	shift
	until "$@" >/dev/null 2>&1; do
		[ "$SECONDS" -lt "$end" ] || return 1
		sleep 0.1
	done
}

# --- kernel log

# dmesg_mark: start a new window for dmesg_since_mark (lib.sh sets one
# when sourced, so by default the window is the whole test).
dmesg_mark() {
	_lib_mark="wbt-test: mark $TEST_NAME $RANDOM$RANDOM"
	echo "$_lib_mark" >/dev/kmsg
}

# dmesg_since_mark: kernel messages since the last dmesg_mark.
dmesg_since_mark() {
	local all
	all=$(dmesg)
	awk -v m="$_lib_mark" 'found { print } index($0, m) { found = 1 }' <<<"$all"
}

# expect_dmesg REGEX [MSG]: a kernel message since the mark matches.
expect_dmesg() {
	local got
	got=$(dmesg_since_mark)
	grep -Eq -- "$1" <<<"$got" || die "${2:-expect_dmesg}: no kernel message matches /$1/"
	log "ok: ${2:-expect_dmesg}: kernel said /$1/"
}

# --- device-mapper

# dm_create NAME TABLE: create /dev/mapper/NAME; lower_cleanup removes it.
dm_create() {
	run dmsetup create "$1" --table "$2" || return
	echo "$1" >>"$_lib_state/dm"
}

# dm_remove NAME
dm_remove() {
	run dmsetup remove "$1"
}

# sectors DEV: size in 512-byte sectors.
sectors() {
	blockdev --getsz "$1"
}

# --- lower devices

# lower_dev KIND [SIZE_MB] [OPTION=VALUE...]: set up a lower device and
# print its path. KIND:
#   nullb       null_blk through configfs, memory-backed so data reads back;
#               OPTIONs are nullb configfs attributes (mbps=40,
#               completion_nsec=..., irqmode=2, blocksize=4096, ...).
#               Default 512 MB; may be called several times.
#   scsi_debug  scsi_debug (RAM store); OPTIONs are module parameters
#               (delay=0, ndelay=..., sector_size=4096, ...). Default
#               512 MB; once per test.
#   nvme        the QEMU NVMe disk (serial wbt0, 1 GiB sparse file)
#   scsi        the QEMU virtio-scsi disk (scsi-hd, serial wbt1)
# The QEMU disks keep their contents between tests of one run.
lower_dev() {
	local kind=$1
	shift
	case $kind in
	nullb) _lower_nullb "$@" ;;
	scsi_debug) _lower_scsi_debug "$@" ;;
	nvme) _lower_nvme "$@" ;;
	scsi) _lower_scsi "$@" ;;
	*) die "lower_dev: unknown kind '$kind'" ;;
	esac
}

_lower_nullb() {
	local size=512 cfg=/sys/kernel/config/nullb n=0 dir kv dev
	case ${1:-} in [0-9]*) size=$1 && shift ;; esac
	# nr_devices=0: no default, disk-less nullb0.
	run modprobe null_blk nr_devices=0 >&2
	if [ ! -d "$cfg" ]; then
		run mount -t configfs configfs /sys/kernel/config >&2
	fi
	while [ -e "$cfg/nullb$n" ] || [ -e "/sys/block/nullb$n" ]; do
		n=$((n + 1))
	done
	dir=$cfg/nullb$n
	run mkdir "$dir" >&2
	echo "$dir" >>"$_lib_state/nullb"
	sysfs_write "$dir/size" "$size"
	sysfs_write "$dir/memory_backed" 1
	for kv; do
		sysfs_write "$dir/${kv%%=*}" "${kv#*=}"
	done
	sysfs_write "$dir/power" 1
	# Newer kernels name the disk after the configfs directory, older
	# ones nullb<index>; the directory name makes both the same.
	dev=/dev/${dir##*/}
	[ -e "/sys/block/${dir##*/}" ] || dev=/dev/nullb$(cat "$dir/index")
	wait_for 10 test -b "$dev" || die "lower_dev: $dev did not appear"
	echo "$dev"
}

# _sd_by MODEL_REGEX: the /dev/sdX whose SCSI vendor+model match.
_sd_by() {
	local b v m
	for b in /sys/block/sd*; do
		[ -e "$b/device/model" ] || continue
		read -r v <"$b/device/vendor"
		read -r m <"$b/device/model"
		if [[ "$v $m" =~ $1 ]] && [ -b "/dev/${b##*/}" ]; then
			echo "/dev/${b##*/}"
			return 0
		fi
	done
	return 1
}

_lower_scsi_debug() {
	local size=512
	case ${1:-} in [0-9]*) size=$1 && shift ;; esac
	[ ! -e "$_lib_state/scsi_debug" ] || die "lower_dev: scsi_debug is already set up"
	[ ! -d /sys/module/scsi_debug ] || die "lower_dev: scsi_debug is loaded already"
	run modprobe sd_mod >&2
	echo 1 >"$_lib_state/scsi_debug"
	run modprobe scsi_debug dev_size_mb="$size" "$@" >&2
	# Disks are probed asynchronously.
	wait_for 20 _sd_by '^Linux scsi_debug' || die "lower_dev: no scsi_debug disk"
	_sd_by '^Linux scsi_debug'
}

_lower_nvme() {
	local b s
	run modprobe nvme >&2
	for s in $(seq 100); do
		for b in /sys/block/nvme*n1; do
			[ -e "$b/device/serial" ] || continue
			read -r s <"$b/device/serial"
			if [ "$s" = wbt0 ] && [ -b "/dev/${b##*/}" ]; then
				echo "/dev/${b##*/}"
				return 0
			fi
		done
		sleep 0.1
	done
	die "lower_dev: no NVMe disk with serial wbt0"
}

_lower_scsi() {
	run modprobe virtio_scsi >&2
	run modprobe sd_mod >&2
	wait_for 20 _sd_by '^QEMU QEMU HARDDISK' || die "lower_dev: no QEMU scsi-hd disk"
	_sd_by '^QEMU QEMU HARDDISK'
}

_nullb_any() {
	local d
	for d in /sys/kernel/config/nullb/*/; do
		[ -d "$d" ] && return 0
	done
	return 1
}

# lower_cleanup: undo what this test set up with the helpers above:
# background jobs, mounts under $TEST_TMP, dm devices (newest first),
# null_blk devices, scsi_debug. Meant for `trap lower_cleanup EXIT`;
# keeps the exit status of the test.
lower_cleanup() {
	local rc=$? n m p
	set +e
	n=$(jobs -p)
	if [ -n "$n" ]; then
		# Their children too: a dd left running holds the devices open.
		m=$(for p in $n; do pgrep -P "$p"; done)
		# shellcheck disable=SC2086 # one pid per word
		kill $n $m 2>/dev/null
		wait 2>/dev/null
		for p in $m; do
			wait_for 10 sh -c "! kill -0 $p 2>/dev/null"
		done
	fi
	while read -r m; do
		run umount "$m"
	done < <(awk -v t="$TEST_TMP" 'index($2, t) == 1 { print $2 }' /proc/mounts | tac)
	if [ -f "$_lib_state/dm" ]; then
		for n in $(tac "$_lib_state/dm"); do
			dmsetup info "$n" >/dev/null 2>&1 || continue
			run dmsetup remove --retry "$n"
		done
		rm -f "$_lib_state/dm"
	fi
	if [ -f "$_lib_state/nullb" ]; then
		for n in $(tac "$_lib_state/nullb"); do
			[ -d "$n" ] || continue
			sysfs_write "$n/power" 0
			run rmdir "$n"
		done
		rm -f "$_lib_state/nullb"
		_nullb_any || run rmmod null_blk
	fi
	if [ -f "$_lib_state/scsi_debug" ]; then
		# The disk may still be settling after its last close.
		wait_for 10 rmmod scsi_debug
		log "rmmod scsi_debug: status $?"
		rm -f "$_lib_state/scsi_debug"
	fi
	return "$rc"
}

dmesg_mark
