#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Heavy buffered writeback to a slow device through wbthrottle: background
# writes get held (counters move), the number of them in flight never
# exceeds the background limit, and everything written reads back.
# vm-timeout: 240
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-wbt.sh"
trap wbt_cleanup EXIT

# 4 ms per request, whatever the depth: slow enough to build a backlog.
dev=$(lower_dev nullb 256 irqmode=2 completion_nsec=4000000)
# backlog_ms 60000: on a loaded host a write may wait half a second, and
# age would promote it past the background limit this test checks.
wbt_create wt "$dev" depth 8 backlog_ms 60000
assert_eq "$(st wt max)/$(st wt normal)/$(st wt background)" "8/4/2" "limits for depth 8"

# Background writeback starts early; the writer itself is never throttled
# (its dirty pages stay far below the dirty limit), so only REQ_BACKGROUND
# writeback runs, and its limit is "background".
vm_dirty $((2 << 20)) $((1 << 30))
run head -c 48M /dev/urandom >data
# A dirtier that slept in balance_dirty_pages lifts the limit for 1 s; the
# bdi counts its creation as such a sleep.
sleep 1.2
# fd 9 keeps the device open: dd's close would sync it, and those sync
# writes would promote held background ones past the limit (on purpose).
exec 9<"/dev/mapper/wt"
run dd if=data of=/dev/mapper/wt bs=1M status=none
wait_for 120 st_ge wt bg_throttled 1 || die "no background write was held"
wait_idle wt 120 || die "writeback did not finish"
exec 9<&-
st_log wt

assert_ge "$(st wt n_bg)" 1 "background writes seen"
# The page cache writes 4 KiB bios: most continue the request in flight
# before them and join it, taking no slot of their own.
assert_ge "$(st wt merged)" $(($(st wt n_bg) / 2)) "most background writes joined a request"
assert_le "$(st wt bg_hwm)" "$(st wt background)" "background in flight <= background limit"
assert_ge "$(st wt held_ns)" 1 "time held is accounted"
run cmp data <(dd if=/dev/mapper/wt bs=1M count=48 iflag=direct status=none)
