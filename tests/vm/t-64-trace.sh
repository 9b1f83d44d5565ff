#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# The tracepoints decode from their format files alone: trace-cmd records
# wbthrottle_stat, wbthrottle_step and wbthrottle_wait while direct reads
# miss their latency target behind held background writeback, and
# `trace-cmd report`, which knows nothing of the module's code, prints the
# queue and the verdicts by name.
# vm-timeout: 300
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-wbt.sh"

cleanup() {
	local r=$?
	set +e
	: >stop
	(exit $r)
	wbt_cleanup
}
trap cleanup EXIT
command -v trace-cmd >/dev/null ||
	die "no trace-cmd on the host (scripts/install-deps.sh installs it)"

dev=$(slow_nullb)
prep_writeback
# A target far below the 20 ms a read takes: a window with reads misses it.
wbt_create wt "$dev" lat_us 5000

# Recording runs until ./stop exists; ./started says the events are on.
events=(-e wbthrottle:wbthrottle_stat -e wbthrottle:wbthrottle_step
	-e wbthrottle:wbthrottle_wait)
run trace-cmd record -o trace.dat "${events[@]}" \
	bash -c ': >started; until [ -e stop ]; do sleep 0.2; done' &
rec=$!
wait_for 60 test -e started || die "trace-cmd record did not start"

# Buffered writes, written back as background writes, and direct reads.
# fd 9 keeps the device open, so no dd's close waits for writeback.
exec 9<"/dev/mapper/wt"
(while :; do
	dd if=/dev/zero of=/dev/mapper/wt bs=1M count=16 conv=notrunc status=none
done) &
(while :; do
	dd if=/dev/mapper/wt of=/dev/null bs=4k count=16 \
		skip=$((RANDOM % 60000)) iflag=direct status=none
done) &
wait_for 120 st_ge wt step 2 || { st_log wt; die "step did not rise"; }
wait_for 60 st_ge wt bg_throttled 10 || { st_log wt; die "no background writes held"; }
st_log wt
: >stop
wait "$rec" || die "trace-cmd record failed"
exec 9<&-

report=$(run trace-cmd report -i trace.dat)
for e in stat step wait; do
	log "wbthrottle_$e: $(grep -c "wbthrottle_$e:" <<<"$report" || true) events, first:"
	grep -m 2 "wbthrottle_$e:" <<<"$report" >&2 || true
done

# Every event names its queue or verdict: none failed to parse, none is
# left a number.
bad=$(grep -E 'wbthrottle_(stat|step|wait):' <<<"$report" |
	grep -Ev ' (queue=(reclaim|sync|normal|bg|discard) held=[0-9]+ns|(verdict|after)=(ok|unknown|unknown_writes|exceeded))$' |
	head -n 5 || true)
assert_eq "$bad" "" "every queue and verdict decoded"

# count ERE: events of the report that match.
count() {
	grep -Ec -- "$1" <<<"$report" || true
}
assert_ge "$(count 'wbthrottle_wait: .* queue=bg held=[0-9]+ns$')" 1 "a held background write"
assert_ge "$(count 'wbthrottle_stat: .* verdict=exceeded$')" 1 "a missed window"
assert_ge "$(count 'wbthrottle_step: .* step=[1-9][0-9]* .* after=exceeded$')" 1 "a step up"

# What made it so: the format files refer to no module symbol.
fmt=$(cat /sys/kernel/tracing/events/wbthrottle/*/format)
assert_no_match "$fmt" 'wbt_|WBT_' "the format files name no module symbol"
