#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Errors of the lower device come back to the submitter (O_DIRECT and
# buffered + fsync), and no slot stays taken afterwards.
# vm-timeout: 180
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-wbt.sh"
trap wbt_cleanup EXIT

dev=$(lower_dev nullb 64)
run modprobe dm-flakey
# Always "down", failing writes; reads work.
dm_create flaky "0 $(sectors "$dev") flakey $dev 0 0 5 1 error_writes"
wbt_create wt /dev/mapper/flaky depth 4

expect_fail -m 'error' dd if=/dev/zero of=/dev/mapper/wt bs=64k count=4 oflag=direct status=none
expect_fail -m 'error' dd if=/dev/zero of=/dev/mapper/wt bs=1M count=16 conv=fsync status=none
run dd if=/dev/mapper/wt of=/dev/null bs=64k count=4 iflag=direct status=none
wait_idle wt 60 || { st_log wt; die "slots still taken after errors"; }
st_log wt
assert_ge "$(st wt n_direct)" 1 "the O_DIRECT write reached the target"

# The same with a device that fails everything.
dm_create err "0 $(sectors "$dev") error"
wbt_create wt2 /dev/mapper/err
expect_fail dd if=/dev/mapper/wt2 of=/dev/null bs=4k count=1 iflag=direct status=none
expect_fail dd if=/dev/zero of=/dev/mapper/wt2 bs=4k count=1 oflag=direct status=none
wait_idle wt2 60 || { st_log wt2; die "slots still taken after errors"; }
