#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# While background writeback is held (deferred in the target: push_back 0),
# O_DIRECT writes and reads and O_SYNC writes are not stuck behind it: each
# completes while the backlog is still queued, and none of them is held.
# vm-timeout: 240
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-wbt.sh"
trap wbt_cleanup EXIT

dev=$(slow_nullb)
wbt_create wt "$dev" depth 4 push_back 0 backlog_kb 1048576 backlog_ms 60000
assert_eq "$(st wt max)/$(st wt normal)/$(st wt background)" "4/2/1" "limits for depth 4"
prep_writeback
run head -c 64M /dev/urandom >data
backlog wt data 0

run dd if=/dev/urandom of=/dev/mapper/wt bs=4k count=8 seek=$((200 * 256)) oflag=direct status=none
assert_ge "$(st wt bg_queued)" 1 "backlog still held after the O_DIRECT write"
assert_ge "$(st wt n_direct)" 8 "O_DIRECT writes classified as direct"

run dd if=/dev/mapper/wt of=/dev/null bs=4k count=8 skip=$((210 * 256)) iflag=direct status=none
assert_ge "$(st wt bg_queued)" 1 "backlog still held after the O_DIRECT read"
assert_ge "$(st wt n_read)" 8 "reads counted"

run dd if=/dev/urandom of=/dev/mapper/wt bs=4k count=4 seek=$((220 * 256)) oflag=sync conv=notrunc status=none
assert_ge "$(st wt bg_queued)" 1 "backlog still held after the O_SYNC writes"
assert_ge "$(st wt n_sync)" 4 "O_SYNC writeback classified as sync"
assert_eq "$(st wt sync_throttled)" 0 "sync writes never waited"

exec 9<&-
wait_idle wt 180 || die "backlog did not drain"
st_log wt
# Each O_SYNC write that overtook the backlog promoted one held write past
# the background limit (so that an fsync is not stuck behind it): only those.
assert_le "$(st wt bg_hwm)" $(($(st wt background) + $(st wt promoted))) "background in flight <= background limit + promoted"
run cmp data <(dd if=/dev/mapper/wt bs=1M count=64 iflag=direct status=none)
