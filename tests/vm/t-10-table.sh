#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# The table line: a device without options reports the documented status
# fields with sane limits and prints "0 N wbthrottle MAJ:MIN"; with options
# the table line repeats them (in the documented order), status shows their
# effect, and a device created (or reloaded) from that line is the same.
# Removing the devices leaves nothing behind.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-wbt.sh"
trap lower_cleanup EXIT

[ -n "$WBT_KO" ] || skip "no module under test (run.sh -n)"

# The INFO fields README.md documents, in order (new ones are appended).
documented="enabled holding qd wc wc_policy depth_mode max normal background step"
for q in reclaim sync normal bg discard; do
	documented+=" ${q}_inflight ${q}_queued ${q}_hwm ${q}_throttled"
done
documented+=" held_ns held_max_ns"
for k in read bg normal sync reclaim direct discard flush other; do
	documented+=" n_$k"
done
documented+=" merged lat_target_us lat_pct scaling win_us win_reads win_writes"
documented+=" read_min_us read_p50_us read_p99_us verdict windows exceeded step_changes"

# sread NAME: read the status of NAME into S[key] and its keys, in order,
# into KEYS. One dmsetup call: under TCG every process costs.
declare -A S
sread() {
	local f
	S=()
	KEYS=
	for f in $(dmsetup status "$1" | cut -d' ' -f4-); do
		[[ $f =~ ^[a-z0-9_]+=-?[a-z0-9_]+$ ]] || die "$1: status field '$f' is not key=value"
		S[${f%%=*}]=${f#*=}
		KEYS+=" ${f%%=*}"
	done
	KEYS=${KEYS# }
}

# settings NAME: the settings and limits part of the status of NAME.
settings() {
	local k out=
	sread "$1"
	for k in enabled qd wc wc_policy depth_mode max normal background step \
		lat_target_us lat_pct scaling; do
		out+="$k=${S[$k]} "
	done
	echo "${out% }"
}

dev=$(lower_dev nullb 64)
len=$(sectors "$dev")
lower=${dev#/dev/}
majmin=$(cat "/sys/block/$lower/dev")
qd=$(cat "/sys/block/$lower/queue/nr_requests")
case $(cat "/sys/block/$lower/queue/write_cache") in
"write back") wc=1 ;;
*) wc=0 ;;
esac
# lat_us auto: 75 ms on a rotational lower device, 2 ms otherwise.
lat_auto=2000
[ "$(cat "/sys/block/$lower/queue/rotational")" = 0 ] || lat_auto=75000

# --- no options: defaults
dm_create wt "0 $len wbthrottle $dev"
assert_eq "$(run dmsetup table wt)" "0 $len wbthrottle $majmin" "table line without options"
status=$(run dmsetup status wt)
assert_match "$status" "^0 $len wbthrottle enabled=" "status starts with the target and enabled="
sread wt
log "ok: every status field is key=value"
assert_eq "${KEYS:0:${#documented}}" "$documented" "status keys in the documented order"

assert_eq "${S[enabled]}/${S[holding]}" "1/1" "enabled and holding by default"
assert_eq "${S[qd]}" "$qd" "qd is the lower queue depth"
assert_eq "${S[wc]}" "$wc" "wc follows the lower write cache"
assert_eq "${S[wc_policy]}/${S[depth_mode]}/${S[step]}" "drain/auto/0" \
	"default policy, depth mode and step"
assert_eq "${S[lat_target_us]}/${S[lat_pct]}/${S[scaling]}" "$lat_auto/0/1" \
	"default latency target, percentile and self-tuning"
assert_ge "${S[max]}" "${S[normal]}" "max >= normal"
assert_ge "${S[normal]}" "${S[background]}" "normal >= background"
assert_ge "${S[background]}" 1 "background >= 1"
# Upstream's step-0 depth: min(16, qd); normal and background derive from it.
[ "$qd" -ge 16 ] || die "null_blk queue depth $qd: expected at least 16"
assert_eq "${S[max]}/${S[normal]}/${S[background]}" "16/8/4" "default limits for qd $qd"
idle=
for q in reclaim sync normal bg discard; do
	idle+="${S[${q}_inflight]}/${S[${q}_queued]} "
done
assert_eq "$idle" "0/0 0/0 0/0 0/0 0/0 " "nothing in flight or held (inflight/queued per queue)"

# --- options: the table line repeats them in the order of README.md
dm_create wt2 "0 $len wbthrottle $dev 6 depth 8 wb_percent 50 wc_policy delay"
assert_eq "$(run dmsetup table wt2)" \
	"0 $len wbthrottle $majmin 6 wb_percent 50 depth 8 wc_policy delay" \
	"table line with three options"
st_log wt2
sread wt2
# A fixed depth is not scaled by wb_percent, nor self-tuned.
assert_eq "${S[max]}/${S[normal]}/${S[background]}" "8/4/2" "limits for depth 8"
assert_eq "${S[depth_mode]}/${S[wc_policy]}/${S[enabled]}/${S[scaling]}" "fixed/delay/1/0" \
	"depth mode, policy, enable and self-tuning"

dm_create wt3 "0 $len wbthrottle $dev 14 lat_pct 90 lat_us 5000 cache_delay_us 2500 wc_policy off depth auto wb_percent 200 enable 0"
assert_eq "$(run dmsetup table wt3)" \
	"0 $len wbthrottle $majmin 14 enable 0 wb_percent 200 depth auto wc_policy off cache_delay_us 2500 lat_us 5000 lat_pct 90" \
	"table line with every option"
st_log wt3
sread wt3
# Auto depth: 16 at step 0, scaled by wb_percent 200.
assert_eq "${S[max]}/${S[normal]}/${S[background]}" "32/16/8" "limits for wb_percent 200"
assert_eq "${S[depth_mode]}/${S[wc_policy]}/${S[enabled]}" "auto/off/0" \
	"depth mode, policy and enable"
assert_eq "${S[lat_target_us]}/${S[lat_pct]}/${S[scaling]}" "5000/90/0" \
	"latency target and percentile; no self-tuning while disabled"

dm_create wt4 "0 $len wbthrottle $dev 4 lat_us auto enable 1"
assert_eq "$(run dmsetup table wt4)" \
	"0 $len wbthrottle $majmin 4 enable 1 lat_us auto" \
	"table line with explicit defaults"
sread wt4
assert_eq "${S[lat_target_us]}/${S[scaling]}" "$lat_auto/1" "lat_us auto"

# --- round trip: a device made from `dmsetup table` is the same
for n in wt wt2 wt3 wt4; do
	table=$(run dmsetup table "$n")
	dm_create "$n-rt" "$table"
	assert_eq "$(run dmsetup table "$n-rt")" "$table" "$n: table line survives a round trip"
	assert_eq "$(settings "$n-rt")" "$(settings "$n")" "$n: settings survive a round trip"
done

# A reload takes the new options; the old ones do not linger.
table=$(dmsetup table wt3)
run dmsetup reload wt --table "$table"
run dmsetup resume wt
assert_eq "$(run dmsetup table wt)" "$table" "reloaded table line"
assert_eq "$(settings wt)" "$(settings wt3)" "reloaded settings"
sread wt
assert_eq "${S[holding]}" 1 "holding again after resume"
run dmsetup reload wt --table "0 $len wbthrottle $dev"
run dmsetup resume wt
assert_eq "$(run dmsetup table wt)" "0 $len wbthrottle $majmin" "reloaded without options"
sread wt
assert_eq "${S[enabled]}/${S[max]}/${S[wc_policy]}/${S[lat_target_us]}" "1/16/drain/$lat_auto" \
	"settings back to the defaults"

# The device works and its reads are counted.
reads=${S[n_read]}
run dd if=/dev/mapper/wt of=/dev/null bs=64k count=16 iflag=direct status=none
sread wt
assert_ge "${S[n_read]}" $((reads + 16)) "reads counted"

# --- remove leaves nothing
for n in wt wt2 wt3 wt4 wt-rt wt2-rt wt3-rt wt4-rt; do
	dm_remove "$n"
done
expect_fail -m 'not exist' dmsetup info wt
names=$(run dmsetup ls)
grep -E '^wt' <<<"$names" && die "a wbthrottle device is still listed"
log "ok: dmsetup ls lists none of them"
assert_eq "$(ls "/sys/block/$lower/holders")" "" "$lower has no holders"
assert_eq "$(cat /sys/module/dm_wbthrottle/refcnt)" 0 "module reference count"
