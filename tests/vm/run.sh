#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Run the functional tests (tests/vm/t-*.sh) against dm-wbthrottle inside a
# QEMU guest, for one or more Debian kernels. Each kernel boots under TCG
# (so the host needs neither KVM nor module loading) with a busybox
# initramfs that chroots into the host root (read-only, over virtio-9p) and
# runs tests/vm/guest.sh there.
#
# A kernel counts as passed only if the guest wrote OUTDIR/summary with
# "N passed, 0 failed": a panic, hang, timeout or early exit never writes it.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)

usage() {
	cat <<EOF
usage: $0 [-k KVER]... [-o OUTDIR] [-n] [-t SECS] [-v] [TEST...]
  -k KVER   kernel to boot (repeatable; default: every installed Debian
            kernel with headers, i.e. /lib/modules/6.*-amd64/build)
  -o OUTDIR results directory (default $repo/build/vm-out/KVER;
            with several kernels, OUTDIR/KVER)
  -n        no module: skip the build and insmod (tests the harness only)
  -t SECS   whole-VM timeout (default \$VM_TIMEOUT or 1200)
  -v        also stream the guest console to stderr
  TEST      t-NAME.sh, NAME, or the NAME after a t-NN- prefix
            (default: every tests/vm/t-*.sh)
EOF
	exit "${1:-2}"
}

kvers=()
outdir=
nomod=
verbose=
vm_timeout=${VM_TIMEOUT:-1200}
while getopts k:o:nt:vh opt; do
	case $opt in
	k) kvers+=("$OPTARG") ;;
	o) outdir=$OPTARG ;;
	n) nomod=1 ;;
	t) vm_timeout=$OPTARG ;;
	v) verbose=1 ;;
	h) usage 0 ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))

# Accept t-NAME.sh, a path, NAME, or NAME without the t-NN- ordering prefix.
resolve_test() {
	local f
	for f in "$1" "$here/$1" "$here/t-$1.sh"; do
		if [ -f "$f" ]; then
			realpath "$f"
			return 0
		fi
	done
	set -- "$here"/t-[0-9]*-"$1".sh
	[ $# = 1 ] && [ -f "$1" ] && echo "$1"
}

tests=()
if [ $# = 0 ]; then
	tests=("$here"/t-*.sh)
	[ -f "${tests[0]}" ] || { echo "run.sh: no tests in $here" >&2; exit 2; }
fi
for t in "$@"; do
	f=$(resolve_test "$t") || { echo "run.sh: no such test: $t" >&2; exit 2; }
	tests+=("$f")
done
# The guest mounts its own tmpfs on these, hiding the host's files; the
# repository itself is shared on its own, so a clone anywhere works.
for t in "${tests[@]}"; do
	case $t in
	"$repo"/*) ;;
	/tmp/* | /run/* | /var/tmp/* | /dev/* | /proc/* | /sys/*)
		echo "run.sh: $t: the guest cannot see host files there" >&2
		exit 2
		;;
	esac
done

if [ ${#kvers[@]} = 0 ]; then
	for d in /lib/modules/6.*-amd64/build; do
		d=${d%/build}
		[ -f "/boot/vmlinuz-${d##*/}" ] && kvers+=("${d##*/}")
	done
	[ ${#kvers[@]} -gt 0 ] || { echo "run.sh: no kernels found" >&2; exit 2; }
fi

for c in qemu-system-x86_64 busybox cpio xz modprobe flock; do
	command -v "$c" >/dev/null ||
		{ echo "run.sh: $c missing (sh scripts/install-deps.sh)" >&2; exit 2; }
done

# Build (or reuse) the initramfs for $kver in $1. It holds busybox, the
# modules needed to reach the 9p root (decompressed: busybox insmod cannot
# read .ko.xz) in dependency order, and initramfs-init.sh as /init.
build_initramfs() {
	local dir=$1 m ko fp stage a
	local -a mods=()
	for m in 9pnet_virtio virtio_pci 9p; do
		while read -r a ko _; do
			[ "$a" = insmod ] && mods+=("$ko")
		done < <(modprobe -S "$kver" --show-depends "$m")
	done
	# --show-depends repeats shared dependencies; keep the first of each.
	mapfile -t mods < <(printf '%s\n' "${mods[@]}" | awk '!seen[$0]++')

	fp=$({
		echo "initramfs v2"
		sha256sum "$(command -v busybox)" "$here/initramfs-init.sh"
		for ko in "${mods[@]}"; do stat -c '%n %s %Y' "$ko"; done
	} | sha256sum)
	if [ -f "$dir/initramfs.cpio" ] && [ "$(cat "$dir/inputs" 2>/dev/null)" = "$fp" ]; then
		return 0
	fi

	stage=$(mktemp -d)
	mkdir -p "$stage"/{bin,dev,proc,newroot,lib/modules}
	cp "$(command -v busybox)" "$stage/bin/busybox"
	for a in sh mount mkdir insmod chroot sync sleep poweroff; do
		ln -s busybox "$stage/bin/$a"
	done
	for ko in "${mods[@]}"; do
		m=${ko##*/}
		case $ko in
		*.xz) m=${m%.xz}; xz -dc "$ko" >"$stage/lib/modules/$m" ;;
		*) cp "$ko" "$stage/lib/modules/$m" ;;
		esac
		echo "$m" >>"$stage/modules.list"
	done
	install -m 755 "$here/initramfs-init.sh" "$stage/init"
	# Without /dev/console the kernel starts /init with no stdio.
	mknod "$stage/dev/console" c 5 1 2>/dev/null || true
	(cd "$stage" && find . | LC_ALL=C sort |
		cpio -o -H newc -R 0:0 --quiet) >"$dir/initramfs.cpio.tmp"
	rm -rf "$stage"
	mv "$dir/initramfs.cpio.tmp" "$dir/initramfs.cpio"
	echo "$fp" >"$dir/inputs"
}

# prefix: prefix every line of stdin with the kernel version.
prefix() {
	local line
	while IFS= read -r line; do
		printf '[%s] %s\n' "$kver" "${line%$'\r'}"
	done
}

# oops_digest CONSOLE: the first oops, warning or panic of a guest console
# in a few lines (what went wrong, where, and the call trace on one line
# without the unreliable "?" frames), so that the end of a CI log names
# the culprit even when the trace itself scrolled out of it.
oops_digest() {
	sed 's/^\[ *[0-9]*\.[0-9]*\] //' "$1" | awk '
	!seen && /(BUG:|Oops:|general protection fault|kernel BUG at|WARNING:|Unable to handle|Kernel panic|blocked for more than)/ {
		seen = 1; print "oops: " $0; next }
	seen && !rip && /^RIP: / { rip = 1; print; next }
	seen && !done && /^Call Trace:/ { intrace = 1; next }
	intrace && /^ *(<\/TASK>|---\[ end trace)/ { intrace = 0; done = 1; next }
	intrace && n < 24 && /^ +[A-Za-z_.0-9]+\+0x/ {
		sub(/^ +/, ""); t = t (n++ ? " < " : "") $0 }
	END { if (t != "") print "trace: " t }'
}

# Run the suite on one kernel; returns non-zero unless it fully passed.
run_kernel() {
	local kver=$1 out=$2 vmdir=$repo/build/vm/$1 ko='' qrc=0 t0 secs n
	local kernel=/boot/vmlinuz-$kver summary running reason lock
	local -a qemu

	[ -f "$kernel" ] || { echo "FAIL vm: no $kernel" | prefix; return 1; }
	mkdir -p "$vmdir" "$out"

	# One build at a time per kernel; concurrent runs share build/.
	exec {lock}>"$vmdir/lock"
	flock "$lock"
	if [ -z "$nomod" ]; then
		if ! make -C "$repo" "build/$kver/dm_wbthrottle.ko" >"$out/build.log" 2>&1; then
			echo "FAIL build: make build/$kver/dm_wbthrottle.ko (see $out/build.log)" | prefix
			tail -n 20 "$out/build.log" | prefix
			exec {lock}>&-
			return 1
		fi
		# The guest loads this copy, so a rebuild during the run cannot
		# change what is under test.
		cp "$repo/build/$kver/dm_wbthrottle.ko" "$out/dm_wbthrottle.ko"
		ko=/run/vm-out/dm_wbthrottle.ko
	fi
	build_initramfs "$vmdir"
	exec {lock}>&-

	# One VM at a time per results directory.
	exec {lock}>"$out/.lock"
	flock "$lock"
	rm -rf "$out/tests" "$out/results" "$out/summary" "$out/running" \
		"$out/console.log" "$out/dmesg.log" "$out/vm.conf" \
		"$out/failure"
	mkdir "$out/tests"
	: >"$out/results"

	{
		printf 'VM_GUEST=%q\n' "$here/guest.sh"
		printf 'VM_KVER=%q\n' "$kver"
		printf 'VM_KO=%q\n' "$ko"
		printf 'VM_TEST_TIMEOUT=%q\n' "${VM_TEST_TIMEOUT:-300}"
		printf 'VM_TESTS=(%s)\n' "$(printf '%q ' "${tests[@]}")"
	} >"$out/vm.conf"

	# Sparse backing files for the NVMe and virtio-scsi disks.
	tmp=$(mktemp -d "${TMPDIR:-/var/tmp}/wbt-vm.XXXXXX")
	truncate -s "${VM_DISK_MB:-1024}M" "$tmp/nvme.img" "$tmp/scsi.img"

	# shellcheck disable=SC2054 # commas belong to QEMU options
	qemu=(qemu-system-x86_64 -m 2G -smp 2 -nographic -no-reboot -nic none
		-accel "${VM_ACCEL:-tcg,thread=single}" -cpu "${VM_CPU:-qemu64}"
		-kernel "$kernel" -initrd "$vmdir/initramfs.cpio"
		-append "console=ttyS0 panic=-1 panic_on_oops=1 printk.devkmsg=on log_buf_len=4M WBT_REPO=$repo ${VM_APPEND:-}"
		-virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap
		-virtfs "local,path=$repo,mount_tag=repo,security_model=none,readonly=on,multidevs=remap"
		-virtfs "local,path=$out,mount_tag=vmout,security_model=none,multidevs=remap"
		-drive "file=$tmp/nvme.img,if=none,id=nvmeimg,format=raw,discard=unmap${VM_NVME_OPTS:+,$VM_NVME_OPTS}"
		-device nvme,serial=wbt0,drive=nvmeimg
		-drive "file=$tmp/scsi.img,if=none,id=scsiimg,format=raw,discard=unmap${VM_SCSI_OPTS:+,$VM_SCSI_OPTS}"
		-device virtio-scsi-pci,id=scsi0
		-device scsi-hd,bus=scsi0.0,drive=scsiimg,serial=wbt1)
	# shellcheck disable=SC2206 # VM_QEMU_ARGS is split on purpose
	qemu+=(${VM_QEMU_ARGS:-})

	echo "vm: booting for ${#tests[@]} test(s), console in $out/console.log" | prefix
	t0=$SECONDS
	timeout -k 10 "$vm_timeout" "${qemu[@]}" </dev/null >"$out/console.log" 2>&1 &
	qpid=$!
	if [ -n "$verbose" ]; then
		tail -n +1 -F -s 0.2 --pid="$qpid" "$out/console.log" >&2 &
	fi
	tail -n +1 -F -s 0.2 --pid="$qpid" "$out/results" 2>/dev/null | prefix
	wait "$qpid" || qrc=$?
	qpid=
	wait
	rm -rf "$tmp"
	tmp=
	secs=$((SECONDS - t0))

	summary=$(cat "$out/summary" 2>/dev/null || true)
	if [[ $summary =~ ^[0-9]+\ passed,\ 0\ failed ]]; then
		echo "vm: ok in ${secs}s, logs in $out" | prefix
		exec {lock}>&-
		return 0
	fi
	if [ -z "$summary" ]; then
		running=$(cat "$out/running" 2>/dev/null || true)
		if [ "$qrc" = 124 ] || [ "$qrc" = 137 ]; then
			reason="timed out after ${vm_timeout}s"
		elif grep -aq 'Kernel panic' "$out/console.log"; then
			reason="kernel panic"
		else
			reason="stopped without a success signal (qemu status $qrc)"
		fi
		echo "FAIL ${running:-vm}: VM $reason" | prefix
		for n in "${tests[@]}"; do
			n=${n##*/t-}
			n=${n%.sh}
			[ "$n" != "$running" ] || continue
			grep -Eq "^(PASS|FAIL|SKIP) $n(:|\$)" "$out/results" ||
				echo "FAIL $n: not run"
		done | prefix
		echo "--- last lines of $out/console.log" | prefix
		tail -n 40 "$out/console.log" | prefix
	fi
	{
		grep -E '^FAIL ' "$out/results" 2>/dev/null || true
		[ -n "$summary" ] || echo "FAIL ${running:-vm}: VM $reason"
		oops_digest "$out/console.log"
	} | prefix >"$out/failure"
	echo "vm: FAILED in ${secs}s, logs in $out" | prefix
	exec {lock}>&-
	return 1
}

# If interrupted, stop the VM (timeout passes the signal on to QEMU; the
# tails follow it) and delete the disk images.
qpid=
tmp=
# shellcheck disable=SC2317 # run by trap
cleanup() {
	[ -z "$qpid" ] || kill "$qpid" 2>/dev/null
	[ -z "$tmp" ] || rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

rc=0
for kver in "${kvers[@]}"; do
	if [ -z "$outdir" ]; then
		o=$repo/build/vm-out/$kver
	elif [ ${#kvers[@]} = 1 ]; then
		o=$outdir
	else
		o=$outdir/$kver
	fi
	o=$(realpath -m "$o")
	run_kernel "$kver" "$o" || rc=1
done
exit "$rc"
