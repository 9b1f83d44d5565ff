#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# The wbthrottle command end to end: create from arguments and from a tab
# file, set, status --json, metrics, watch, refusals in words (its own
# before the kernel, and the target's reason when the kernel refuses), the
# generator's units, the lower disk's blk-wbt switched off and restored
# (by the last device on the disk), remove.
# vm-timeout: 300
. "$(dirname "$0")/lib.sh"
trap lower_cleanup EXIT

top=$(cd "$(dirname "$0")/../.." && pwd)
wbt=$top/build/tools/wbthrottle
[ -x "$wbt" ] || die "$wbt is missing: run make tools on the host"

# Devices the command creates are removed by lower_cleanup too.
track() { echo "$1" >>"$_lib_state/dm"; }

dev=$(lower_dev nullb 64)
lat=/sys/block/${dev#/dev/}/queue/wbt_lat_usec
sysfs_write "$lat" 4321
assert_eq "$(cat "$lat")" 4321 "blk-wbt on below"

# create: options checked, blk-wbt switched off, saying so
track wt
out=$(run "$wbt" create wt "$dev" depth=8 enabled=1)
printf '%s\n' "$out" >&2
assert_match "$out" "switched off the lower disk's blk-wbt .*was 4321" "says so"
assert_eq "$(cat "$lat")" 0 "blk-wbt off under wbthrottle"
[ -b /dev/mapper/wt ] || die "/dev/mapper/wt is not a block device"
assert_match "$(run dmsetup table wt)" " wbthrottle [0-9:]+ 4 enable 1 depth 8$" "table line"
expect_fail -m "wt already exists" "$wbt" create wt "$dev"
run "$wbt" create --exist-ok wt "$dev"

# status --json: valid JSON, every field with a unit
run "$wbt" status wt --json >s.json
run python3 -m json.tool s.json >/dev/null
got=$(python3 -c '
import json
d = json.load(open("s.json"))
f = d["fields"]
print(len(f), f["max"]["value"], f["held_ns"]["unit"], f["qd"]["unit"], d["name"])')
log "json: $got"
read -r nf max unit qunit name <<<"$got"
assert_ge "$nf" 40 "fields in status --json"
assert_eq "$max/$unit/$qunit/$name" "8/ns/requests/wt" "values and units"
assert_eq "$(dmsetup status wt | grep -o '=' | wc -l)" "$nf" "every status field"
assert_match "$(run "$wbt" status wt)" "^  held_max_ns +[0-9]+ ns +longest time" "text status"

# set: messages, old spellings accepted
run "$wbt" set wt wb_percent=50 lat_target_us=5000
assert_match "$(dmsetup table wt)" " wb_percent 50 depth 8 .*lat_us 5000$" "set shows in the table"

# refused before the kernel, in words; the kernel hears nothing
dmesg_mark
expect_fail -m "depth takes auto or 1 to 65536" "$wbt" set wt depth=0
expect_fail -m "wc_policy takes auto, drain, delay or off" "$wbt" set wt wb_percent=60 wc_policy=often
expect_fail -m "options are key=value" "$wbt" create wx "$dev" depth
expect_fail -m "is not a block device" "$wbt" create wx /etc/passwd
expect_fail -m "wx: no such device" "$wbt" remove wx
expect_fail -m "is the wbthrottle device wt itself" "$wbt" create wx /dev/mapper/wt
assert_no_match "$(dmesg_since_mark)" "wbthrottle" "nothing reached the kernel"
assert_match "$(dmsetup table wt)" " wb_percent 50 " "a refused set changes nothing"

# refused by the kernel: the target's reason, not "ioctl failed"
expect_fail -m "the kernel refused: .*wbthrottle: .*message rejected: unknown option" \
	"$wbt" set wt future_knob=1
assert_match "$EXPECT_STDERR" "warning: unknown option future_knob: passing it to the kernel" "warned"
track wx
expect_fail -m "the kernel refused: .*wbthrottle: unknown option" \
	"$wbt" create wx "$dev" future_knob=1
dmsetup info wx >/dev/null 2>&1 && die "a refused create left wx behind"

# metrics: Prometheus text format
run "$wbt" metrics >m.prom
bad=$(grep -Ev '^# (HELP|TYPE) wbthrottle_[a-z0-9_]+ .+$|^wbthrottle_[a-z0-9_]+\{device="[^"]+"(,[a-z_0-9]+="[^"]*")*\} -?[0-9]+$' m.prom || true)
[ -z "$bad" ] || die "not Prometheus text format: $bad"
assert_match "$(cat m.prom)" '^wbthrottle_max\{device="wt"\} 8$' "a gauge"
assert_match "$(cat m.prom)" '^# TYPE wbthrottle_bg_throttled_total counter$' "a counter"
mkdir prom
run "$wbt" metrics --textfile prom
cmp m.prom prom/wbthrottle.prom || log "(values moved between the two reads)"
assert_eq "$(ls -A prom)" wbthrottle.prom "one file, no temporary left"

# watch: one screen per interval
out=$(run "$wbt" watch wt 0.2 2)
printf '%s\n' "$out" >&2
assert_eq "$(grep -c '^wt on ' <<<"$out")" 2 "two screens"
assert_match "$out" "^normal +0 +0 +[0-9]+ " "queue rows"

# tab: a file with comments creates its devices; a second run is a no-op
d1=$(lower_dev nullb 32)
d2=$(lower_dev nullb 32)
cat >tab <<EOF
# name  lower device  options
t1	$d1	depth=4,wc_policy=off   # a comment
t2 $d2 -

EOF
track t1
track t2
run "$wbt" tab tab
assert_match "$(dmsetup table t1)" "wbthrottle [0-9:]+ 4 depth 4 wc_policy off$" "t1 from the tab"
assert_match "$(dmsetup table t2)" "wbthrottle [0-9:]+$" "t2 from the tab"
assert_match "$(run "$wbt" tab tab)" "t1: already active" "tab again"
assert_eq "$("$wbt" list | cut -f1 | sort | tr '\n' ' ')" "t1 t2 wt " "list"

# the generator: one unit per tab line
mkdir gen
run env WBTHROTTLETAB="$TEST_TMP/tab" "$top/build/tools/wbthrottle-generator" gen gen gen
for n in t1 t2; do
	u=gen/wbthrottle-$n.service
	[ -f "$u" ] || die "no unit for $n"
	[ -L "gen/local-fs.target.requires/wbthrottle-$n.service" ] || die "$n not required by local-fs.target"
done
u=$(cat gen/wbthrottle-t1.service)
assert_match "$u" "^BindsTo=dev-${d1#/dev/}.device$" "bound to the lower device"
assert_match "$u" "^Before=local-fs-pre.target" "before local-fs-pre.target"
assert_match "$u" "^ExecStart=/usr/sbin/wbthrottle create --exist-ok t1 $d1 depth=4 wc_policy=off$" "ExecStart"

# remove: blk-wbt restored, but only by the last device on the disk
track wt2
run "$wbt" create wt2 "$dev"
out=$(run "$wbt" remove wt)
printf '%s\n' "$out" >&2
assert_match "$out" "blk-wbt stays off: wt2 is on it too" "handed over"
assert_eq "$(cat "$lat")" 0 "blk-wbt still off under wt2"
[ ! -e /dev/mapper/wt ] || die "/dev/mapper/wt is still there"
out=$(run "$wbt" remove wt2)
printf '%s\n' "$out" >&2
assert_match "$out" "restored the lower disk's blk-wbt" "says so"
assert_eq "$(cat "$lat")" 4321 "blk-wbt restored"
run "$wbt" remove t1
run "$wbt" remove t2
assert_eq "$("$wbt" list)" "" "nothing left"
