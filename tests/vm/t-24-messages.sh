#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Every message, valid and invalid: valid ones change status and the table
# line (so a reload keeps them); invalid ones fail, say why in the kernel
# log, and change nothing. "enable 0" lets held writes go at once.
# vm-timeout: 300
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-wbt.sh"
trap wbt_cleanup EXIT

dev=$(slow_nullb)
wbt_create wt "$dev"
m="$(sectors "$dev")"
qd=$(st wt qd)
log "lower queue depth $qd"
assert_eq "$(st wt depth_mode)" auto "auto depth by default"

msg() { run dmsetup message wt 0 "$@"; }

msg depth 8
assert_eq "$(st wt max)/$(st wt normal)/$(st wt background)" "8/4/2" "depth 8"
assert_eq "$(st wt depth_mode)" fixed "fixed depth"
msg depth auto
assert_eq "$(st wt depth_mode)" auto "auto again"
auto_max=$(st wt max)
msg wb_percent 50
assert_eq "$(st wt max)" $((auto_max / 2)) "wb_percent 50 halves max"
msg wc_policy delay
assert_eq "$(st wt wc_policy)" delay "wc_policy delay"
msg wc_policy off
assert_eq "$(st wt wc_policy)" off "wc_policy off"
msg wc_policy auto
assert_eq "$(dmsetup table wt | grep -o 'wc_policy [a-z]*')" "wc_policy auto" "wc_policy auto in the table"
msg wc_policy drain
msg cache_delay_us 5000
msg enable 0
assert_eq "$(st wt enabled)" 0 "disabled"
msg enabled 1
assert_eq "$(st wt enabled)/$(st wt enable)" 1/1 "enabled: the status's older name is taken"
msg lat_target_us 30000
assert_eq "$(st wt lat_us)/$(st wt lat_target_us)" 30000/30000 "lat_target_us taken for lat_us"
msg lat_us auto
assert_eq "$(st wt lat_us)" auto "lat_us auto in the status"
want="0 $m wbthrottle $(dmsetup table wt | awk '{print $4}') 12 enable 1 wb_percent 50 depth auto wc_policy drain cache_delay_us 5000 lat_us auto"
assert_eq "$(dmsetup table wt)" "$want" "table line reflects the messages"

before=$(dmsetup table wt)
reason=	# what the kernel log must say, set for each call of bad
bad() {
	dmesg_mark
	expect_fail dmsetup message wt 0 "$@"
	expect_dmesg "wbthrottle: .*message rejected: $reason" "kernel says why"
	assert_eq "$(dmsetup table wt)" "$before" "nothing changed"
}
# Rejections are logged ratelimited (device-mapper's limit: 10 in 5 s);
# let a window pass before each group of at most 10 checks.
fresh_ratelimit() { run sleep 6; }
fresh_ratelimit
reason='unknown option' bad nosuch 1
reason='messages are <key> <value>' bad depth
reason='messages are <key> <value>' bad depth 1 2
reason='enable takes 0 or 1' bad enable 2
reason='enable takes 0 or 1' bad enable yes
reason='wb_percent takes 1 to 1000' bad wb_percent 0
reason='wb_percent takes 1 to 1000' bad wb_percent 1001
reason='depth takes auto or 1 to 65536' bad depth 0
fresh_ratelimit
reason='depth takes auto or 1 to 65536' bad depth 65537
reason='depth takes auto or 1 to 65536' bad depth 8x
reason='wc_policy takes auto, drain, delay or off' bad wc_policy sometimes
reason='cache_delay_us takes 0 to 1000000' bad cache_delay_us 1000001
reason='cache_delay_us takes 0 to 1000000' bad cache_delay_us 99999999999999999999
reason='push_back takes 0' bad push_back 2
reason='backlog_kb takes 0' bad backlog_kb 4194305
reason='backlog_ms takes 1 to 60000' bad backlog_ms 0

# A user who repeats a bad message cannot flood the kernel log: bad
# messages sent for 4 s all fail, and the kernel logs at most 10 in the
# 5 s from the first it logs (device-mapper's ratelimit window starts
# there). Conclusive when more than 10 were sent in those 4 s.
fresh_ratelimit
dmesg_mark
sent=0
end=$(($(date +%s%N) + 4000000000))
while [ "$(date +%s%N)" -lt "$end" ]; do
	# Four at a time: the guest has two CPUs, dmsetup mostly waits.
	seq $((sent + 1)) $((sent + 8)) |
		xargs -P 4 -I{} sh -c '! dmsetup message wt 0 nosuch {} 2>/dev/null' ||
		die "a bad message was accepted"
	sent=$((sent + 8))
done
# The kernel's timestamps of the lines, in seconds.
stamps=$(dmesg_since_mark | grep 'message rejected' |
	sed -n 's/^\[ *\([0-9.]*\)\].*/\1/p')
logged=$(awk -v n=0 'NR == 1 { t0 = $1 } $1 < t0 + 5 { n++ } END { print n }' <<<"$stamps")
log "$sent rejections sent in 4 s; $logged logged in the first 5 s"
assert_ge "$logged" 1 "rejections are logged"
if [ "$sent" -gt 10 ]; then
	assert_le "$logged" 10 "rejections are ratelimited"
else
	log "inconclusive: only $sent sent in 4 s (slow host)"
fi

# The backlog options, as messages and in the table line.
msg push_back 0
msg backlog_kb 1048576
msg backlog_ms 60000
assert_eq "$(st wt push_back)/$(st wt backlog_kb)/$(st wt backlog_ms)" "0/1048576/60000" "backlog options in status"
assert_match "$(dmsetup table wt)" " push_back 0 backlog_kb 1048576 backlog_ms 60000$" "backlog options in the table line"

# "enable 0" releases what is held (deferred: push_back 0 above).
msg depth 4
prep_writeback
run head -c 32M /dev/urandom >data
backlog wt data 0
msg enable 0
wait_for 30 sh -c "dmsetup status wt | grep -q ' bg_queued=0 '" || die "enable 0 did not release held writes"
exec 9<&-
wait_idle wt 120 || die "writes did not finish"
run cmp data <(dd if=/dev/mapper/wt bs=1M count=32 iflag=direct status=none)
