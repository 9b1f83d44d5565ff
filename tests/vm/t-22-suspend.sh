#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Suspend, noflush suspend, table reload with new options and deferred
# remove, each while background writes are held deferred in the target
# (push_back 0; t-61 does the same with submitters asleep): every one
# completes, throttling resumes after resume, and the data reads back.
# vm-timeout: 400
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-wbt.sh"
trap wbt_cleanup EXIT

dev=$(slow_nullb)
defer="push_back 0 backlog_kb 1048576 backlog_ms 60000"
# shellcheck disable=SC2086 # $defer is key value pairs
wbt_create wt "$dev" depth 4 $defer
prep_writeback
run head -c 24M /dev/urandom >data

backlog wt data 0
run timeout 120 dmsetup suspend wt
assert_eq "$(st wt bg_queued)" 0 "suspend released the held writes"
assert_eq "$(st wt holding)" 0 "not holding while suspended"
run dmsetup resume wt
assert_eq "$(st wt holding)" 1 "holding again after resume"

throttled=$(st wt bg_throttled)
backlog wt data 32
assert_ge "$(st wt bg_throttled)" $((throttled + 1)) "throttling resumed after resume"
run timeout 120 dmsetup suspend --noflush wt
assert_eq "$(st wt bg_queued)" 0 "noflush suspend released the held writes"
run dmsetup resume wt

backlog wt data 64
table="0 $(sectors "$dev") wbthrottle $dev 10 depth 2 wc_policy off $defer"
run dmsetup reload wt --table "$table"
run timeout 120 dmsetup resume wt
assert_eq "$(st wt max)" 2 "reloaded table's depth in force"
assert_match "$(dmsetup table wt)" "wbthrottle [0-9]+:[0-9]+ 10 depth 2 wc_policy off $defer$" "reloaded table line"

backlog wt data 96
run dmsetup remove --deferred wt
exec 9<&-
wait_for 120 sh -c '! dmsetup info wt' || die "deferred remove did not complete"

for mb in 0 32 64 96; do
	run cmp data <(dd if="$dev" bs=1M skip=$mb count=24 iflag=direct status=none)
done
