#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Run fstests over wbthrottle and over dm-linear (the control) in the QEMU
# harness (tests/vm/run.sh), on each kernel and filesystem, and compare.
#
#	tests/fstests/run.sh [-k KVER]... [-s SEL] [-f FS...] [-C] [-p] [-r] [-o DIR]
#	tests/fstests/run.sh -R -k KVER -f FS [-s GROUP] [-r]
#
# A test counts against wbthrottle only where it fails over wbthrottle and
# passes over dm-linear on the same kernel and filesystem. The run fails on
# such a test (unless it is in known.list: reported, not counted),
# on a hung task or kernel warning in any guest, and on any combination
# that did not finish. The last line is "fstests: PASSED" or
# "fstests: FAILED"; summary.md in the results directory has the tables.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)

usage() {
	cat <<EOF
usage: $0 [-k KVER]... [-s SEL] [-f "FS..."] [-C] [-p] [-r] [-o DIR]
       $0 -R -k KVER -f FS [-s GROUP] [-r]
  -k KVER  kernel (repeatable; default: every kernel tests/vm/run.sh finds)
  -s SEL   ci (default: ci.list), quick (fstests' quick group), the
           name of another NAME.list in $here, or the path of a list
           file inside the repository (build/ is fine)
  -f FS    filesystems (default "xfs ext4")
  -C       full control: dm-linear runs the whole selection too (default:
           only the tests that failed over wbthrottle, in the same boot)
  -p       boot the kernels side by side (one QEMU each)
  -r       record: copy summary.md to $here/results/SEL-KVER.md
  -o DIR   results directory (default build/fstests-out/SEL)
  -R       resume: run the group SEL (default quick) in batches on one
           kernel and filesystem; each batch runs the tests without a
           result in the ledger $here/results/SEL-KVER-FS/
           until its deadline (FSTESTS_TEST_TIMEOUT) and adds what
           finished; -r records the ledger's summary as SEL-KVER.md
Environment: FSTESTS_TARBALL (see build.sh), VM_DISK_MB (default 8192),
FSTESTS_TEST_TIMEOUT (seconds per combination; default 2100, ci 1200,
quick 14400), FSTESTS_VM_TIMEOUT (seconds per boot; default each
combination's timeout summed plus 600, ci 3000),
TIME_FACTOR, LOAD_FACTOR (default 1), SOAK_DURATION (seconds, default 10),
FSTESTS_CHECK_ARGS (more ./check options, e.g. "-I 5" to repeat each test),
FSTESTS_HUNG_SECS (the guest's hung_task_timeout_secs, default 30),
FSTESTS_WBT_OPTS (wbthrottle's optional table arguments, e.g. "2 enable 0").
EOF
	exit "${1:-2}"
}

kvers=()
sel=
fss="xfs ext4"
control=failed
parallel=
record=
outdir=
resume=
whole=
while getopts k:s:f:Cpro:Rh opt; do
	case $opt in
	k) kvers+=("$OPTARG") ;;
	s) sel=$OPTARG ;;
	f) fss=$OPTARG ;;
	C) control=all ;;
	p) parallel=1 ;;
	r) record=1 ;;
	o) outdir=$OPTARG ;;
	R) resume=1 ;;
	h) usage 0 ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
[ $# = 0 ] || usage
if [ -n "$resume" ]; then
	sel=${sel:-quick}
	if [ ${#kvers[@]} != 1 ] || [ "$(wc -w <<<"$fss")" != 1 ] ||
		[[ $sel = */* ]] || [ -f "$here/$sel.list" ]; then
		echo "fstests: -R takes one kernel (-k), one filesystem (-f) and a group (-s)" >&2
		exit 2
	fi
	# fsel: the batch's list, made once fstests is built
	tmo=${FSTESTS_TEST_TIMEOUT:-14400}
else
	case ${sel:=ci} in
	quick) fsel=group:quick tmo=${FSTESTS_TEST_TIMEOUT:-14400} ;;
	ci)
		# CI's step: a combination takes 6-9 minutes on a loaded
		# host; a guest that wedges (an emulated disk that stops)
		# must end the step well inside CI's 90 minutes, red
		fsel=ci tmo=${FSTESTS_TEST_TIMEOUT:-1200} whole=3000
		;;
	*/*)
		# a list file elsewhere in the repository (the guest sees only that)
		fsel=$(realpath "$sel")
		if [ ! -f "$fsel" ] || [[ $fsel != "$repo"/* ]]; then
			echo "fstests: $sel: not a list file in $repo" >&2
			exit 2
		fi
		sel=$(basename "$sel" .list) tmo=${FSTESTS_TEST_TIMEOUT:-2100}
		;;
	*)
		[ -f "$here/$sel.list" ] || { echo "fstests: no $here/$sel.list" >&2; exit 2; }
		fsel=$sel tmo=${FSTESTS_TEST_TIMEOUT:-2100}
		;;
	esac
fi
outdir=$(realpath -m "${outdir:-$repo/build/fstests-out/$sel}")
if [ ${#kvers[@]} = 0 ]; then
	for d in /lib/modules/6.*-amd64/build; do
		d=${d%/build}
		[ -f "/boot/vmlinuz-${d##*/}" ] && kvers+=("${d##*/}")
	done
	[ ${#kvers[@]} -gt 0 ] || { echo "fstests: no kernels found" >&2; exit 2; }
fi

bash "$here/build.sh"
fsrc=$repo/build/fstests/src

if [ -n "$resume" ]; then
	# the tree the module was just built from (make builds it first)
	rev=$(git -C "$repo" describe --always --dirty 2>/dev/null || echo unknown)
	ledger=$here/results/$sel-${kvers[0]}-$fss
	series=$(cut -d. -f1,2 <<<"${kvers[0]}")
	mkdir -p "$outdir"
	fsel=$outdir/batch.list
	python3 "$here/ledger.py" todo "$ledger" "$fsrc" "$fss" "$sel" \
		"$series" "$here" >"$fsel"
	echo "fstests: batch of $sel: $(wc -l <"$fsel") tests without a result in $ledger"
	if [ ! -s "$fsel" ]; then
		echo "fstests: every test of $sel has a result; nothing to run"
		exit 0
	fi
fi

# wrappers FS... TARGET...: the guest test scripts of those combinations.
wrappers() {
	local fs tg
	for fs in $fss; do
		for tg in "$@"; do
			ls "$here"/t-[0-9]*-"$fs-$tg".sh
		done
	done
}

# boot KVER OUT SELECTION TARGET...: one VM running those combinations.
boot() {
	local kver=$1 out=$2 s=$3 rc=0
	shift 3
	local -a ws
	mapfile -t ws < <(wrappers "$@")
	mkdir -p "$out"
	{
		printf 'FST_TAR=%q\n' "$repo/build/fstests/fstests.tar"
		printf 'FST_SELECTION=%q\n' "$s"
		printf 'FST_TIME_FACTOR=%q\n' "${TIME_FACTOR:-1}"
		printf 'FST_LOAD_FACTOR=%q\n' "${LOAD_FACTOR:-1}"
		printf 'FST_SOAK_DURATION=%q\n' "${SOAK_DURATION:-10}"
		printf 'FST_HUNG_SECS=%q\n' "${FSTESTS_HUNG_SECS:-30}"
		# ./check's own deadline, inside the harness's timeout, so
		# that what finished is reported (setup takes a minute or two)
		printf 'FST_DEADLINE=%q\n' $((tmo - 240))
		printf 'FST_CONTROL=%q\n' "$control"
		printf 'FST_CHECK_ARGS=%q\n' "${FSTESTS_CHECK_ARGS:-}"
		printf 'FST_WBT_OPTS=%q\n' "${FSTESTS_WBT_OPTS:-}"
		# guest.sh's list of kernel lines that fail a test
		printf 'FST_KERNEL_BAD=%q\n' 'Oops|WARNING:|BUG:|kernel BUG|general protection|blocked for more than|hung_task|Call Trace|UBSAN|KASAN|soft lockup|rcu.*stall|Kernel panic'
		# a request the lower (emulated) disk did not complete in
		# time: it had left the target, which can no longer hold it
		printf 'FST_DEVICE_STALL=%q\n' 'I/O tag [0-9]+ .*timeout|tag#[0-9]+ .*tim(ed|ing) out'
	} >"$out/fstests.conf"
	VM_DISK_MB=${VM_DISK_MB:-8192} VM_TEST_TIMEOUT=$tmo \
		nice -n 10 bash "$repo/tests/vm/run.sh" -k "$kver" -o "$out" \
		-t "${FSTESTS_VM_TIMEOUT:-${whole:-$((tmo * ${#ws[@]} + 600))}}" \
		"${ws[@]}" || rc=$?
	return "$rc"
}

# one_kernel KVER: one boot, each filesystem over wbthrottle and then over
# dm-linear; the output lines carry the kernel's name.
one_kernel() {
	local kver=$1 out=$outdir/$1 t0=$SECONDS
	rm -rf "$out"
	boot "$kver" "$out" "$fsel" wbthrottle linear || true
	echo "$((SECONDS - t0))" >"$out/wall"
}

t0=$SECONDS
if [ -n "$parallel" ]; then
	for k in "${kvers[@]}"; do one_kernel "$k" & done
	wait
else
	for k in "${kvers[@]}"; do one_kernel "$k"; done
fi
echo "fstests: all boots done in $((SECONDS - t0))s"

rc=0
cf=--control-failed
[ "$control" != all ] || cf=
# shellcheck disable=SC2086 # $cf: one option or none
python3 "$here/summarize.py" --sel "$sel" --fs "$fss" --out "$outdir" \
	--known "$here/known.list" --tarball "$(cat "$fsrc/.tarball.name")" \
	${resume:+--batch} $cf "${kvers[@]}" || rc=$?
if [ -n "$resume" ]; then
	# The ledger, with this batch's finished tests, as one run.
	k=${kvers[0]}
	python3 "$here/ledger.py" merge "$ledger" "$outdir/$k/fstests" "$fss" \
		"$(cat "$outdir/$k/wall")" "$rev"
	rm -rf "$outdir/ledger"
	python3 "$here/ledger.py" view "$ledger" "$fss" "$outdir/ledger/$k"
	python3 "$here/ledger.py" todo "$ledger" "$fsrc" "$fss" "$sel" \
		"$series" "$here" | wc -l >"$outdir/ledger/$k/remaining"
	python3 "$here/summarize.py" --sel "$sel" --fs "$fss" \
		--out "$outdir/ledger" --known "$here/known.list" \
		--tarball "$(cat "$fsrc/.tarball.name")" $cf "$k" ||
		echo "fstests: the ledger's verdict is FAILED (see $outdir/ledger/$k/summary.md)"
	outdir=$outdir/ledger
fi
if [ -n "$record" ]; then
	mkdir -p "$here/results"
	for k in "${kvers[@]}"; do
		cp "$outdir/$k/summary.md" "$here/results/$sel-$k.md"
	done
fi
if [ "$rc" = 0 ]; then
	echo "fstests: PASSED"
else
	echo "fstests: FAILED (see $outdir/*/summary.md)"
fi
exit "$rc"
