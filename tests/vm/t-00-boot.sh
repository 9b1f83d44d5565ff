#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Smoke test of the harness itself: the target is registered with DM, and
# each kind of lower device lib.sh offers can be set up, written and read
# back, directly and through a dm-linear device under /dev/mapper.
. "$(dirname "$0")/lib.sh"
trap lower_cleanup EXIT

if [ -n "$WBT_KO" ]; then
	targets=$(run dmsetup targets)
	assert_match "$targets" '^wbthrottle[[:space:]]' "wbthrottle target registered"
else
	log "no module under test (run.sh -n)"
fi

run head -c 1M /dev/urandom >pattern
for kind in nullb scsi_debug nvme scsi; do
	dev=$(lower_dev "$kind")
	log "$kind is $dev, $(sectors "$dev") sectors"
	run dd if=pattern of="$dev" bs=64k seek=16 oflag=direct status=none
	run dd if="$dev" of=back bs=64k skip=16 count=16 iflag=direct status=none
	run cmp pattern back

	dm_create "smoke-$kind" "0 $(sectors "$dev") linear $dev 0"
	run dd if="/dev/mapper/smoke-$kind" of=back bs=64k skip=16 count=16 \
		iflag=direct status=none
	run cmp pattern back
	dm_remove "smoke-$kind"
done
