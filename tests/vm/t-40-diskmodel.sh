#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# The benchmark's disk model (tests/diskmodel) on this kernel: its own
# functional checks (hdd and ssd profiles, queue depth, write cache,
# FLUSH/FUA, data read back, fio verify, bad parameters refused), then
# wbthrottle over it with its write cache: the status sees a rotational
# disk with a cache, and data written through the target reads back.
# vm-timeout: 400
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-wbt.sh"
trap diskmodel_cleanup EXIT

diskmodel_ko
run bash "$(dirname "$0")/../diskmodel/selftest.sh" "$ko" ||
	die "the disk model's selftest failed"

run insmod "$ko" profile=hdd size_mb=64
wait_for 10 test -b /dev/wbtdm0 || die "no /dev/wbtdm0"
wbt_create wt /dev/wbtdm0
assert_eq "$(st wt wc)/$(st wt wc_policy)/$(st wt lat_target_us)" "1/delay/75000" \
	"a rotational disk with a write cache: pacing, 75 ms target"
run head -c 8M /dev/urandom >data
run dd if=data of=/dev/mapper/wt bs=1M conv=fsync status=none
run cmp data <(dd if=/dev/mapper/wt bs=1M count=8 iflag=direct status=none)
dm_remove wt
