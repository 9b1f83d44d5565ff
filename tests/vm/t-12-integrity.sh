#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Data integrity over every kind of lower device: fio writes random and
# sequential data of mixed sizes (4k-256k), buffered and O_DIRECT, through
# wbthrottle with crc32c verify headers and reads it back through the
# target; then, with the target removed, verifies the same blocks on the
# lower device itself, which also proves every bio landed where it belongs.
# vm-timeout: 400
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-wbt.sh"
trap lower_cleanup EXIT

[ -n "$WBT_KO" ] || skip "no module under test (run.sh -n)"

size_mb=32
# Four jobs on disjoint regions; fio runs them at the same time.
cat >jobs.fio <<EOF
[global]
filename=\${FIO_DEV}
size=${size_mb}M
bsrange=4k-256k
verify=crc32c
do_verify=1
verify_fatal=1

[rand-direct]
rw=randwrite
direct=1
ioengine=libaio
iodepth=16
offset=0

[seq-buffered]
rw=write
direct=0
ioengine=psync
offset=$((size_mb))M

[rand-buffered]
rw=randwrite
direct=0
ioengine=psync
offset=$((2 * size_mb))M

[seq-direct]
rw=write
direct=1
ioengine=libaio
iodepth=8
offset=$((3 * size_mb))M
EOF
run cat jobs.fio >&2

# fio_check JSON PHASE: every job ran without error, and read back (its
# verify pass) all it covers. Each job's line goes to the transcript.
fio_check() {
	python3 - "$1" "$2" "$((size_mb << 20))" <<'EOF' >&2
import json, sys
path, phase, size = sys.argv[1], sys.argv[2], int(sys.argv[3])
bad = 0
for j in json.load(open(path))["jobs"]:
    w, r = j["write"]["io_bytes"], j["read"]["io_bytes"]
    print("# %s %s: error=%d wrote=%d read=%d" % (phase, j["jobname"], j["error"], w, r))
    if j["error"] or r != size or (phase == "write" and w != size):
        bad += 1
sys.exit(1 if bad else 0)
EOF
}

for kind in nullb scsi_debug nvme scsi; do
	case $kind in
	nullb | scsi_debug) dev=$(lower_dev "$kind" 256) ;;
	*) dev=$(lower_dev "$kind") ;;
	esac
	log "$kind is $dev"
	wbt_create "wt-$kind" "$dev"

	# Write and verify through the target.
	run env FIO_DEV="/dev/mapper/wt-$kind" fio --output-format=json \
		--output="$kind.json" jobs.fio ||
		die "$kind: fio failed through the target: $(cat "$kind.json")"
	fio_check "$kind.json" write || die "$kind: fio did not write and verify everything"
	st_log "wt-$kind"
	status=$(dmsetup status "wt-$kind")
	# Both paths really went through the target.
	n_direct=$(sed -n 's/.* n_direct=\([0-9]*\).*/\1/p' <<<"$status")
	n_buffered=$(awk '{ for (i = 1; i <= NF; i++)
		if ($i ~ /^n_(normal|bg|sync)=/) { split($i, kv, "="); n += kv[2] } }
		END { print n + 0 }' <<<"$status")
	assert_ge "$n_direct" 1 "$kind: O_DIRECT writes seen by the target"
	assert_ge "$n_buffered" 1 "$kind: writeback seen by the target"
	wait_idle "wt-$kind" 30 || die "$kind: target not idle after fio"

	# The same blocks, read from the lower device with the target gone.
	dm_remove "wt-$kind"
	run env FIO_DEV="$dev" fio --verify_only --output-format=json \
		--output="$kind-lower.json" jobs.fio ||
		die "$kind: data on the lower device is not what was written: $(cat "$kind-lower.json")"
	fio_check "$kind-lower.json" verify_only || die "$kind: fio did not verify everything"
done
