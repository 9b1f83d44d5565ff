#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Bad table lines: each one makes `dmsetup create` fail, the kernel log
# gives the constructor's reason (ti->error), and nothing is left behind:
# no device of that name, no claim on the lower device, no module reference.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-wbt.sh"

# A table that should have failed but did not leaves wtbad behind.
badtable_cleanup() {
	local rc=$?
	set +e
	dmsetup info wtbad >/dev/null 2>&1 && run dmsetup remove wtbad
	(exit "$rc")
	lower_cleanup
}
trap badtable_cleanup EXIT

[ -n "$WBT_KO" ] || skip "no module under test (run.sh -n)"

dev=$(lower_dev nullb 64)
len=$(sectors "$dev")
lower=${dev#/dev/}

# bad REASON ARGS: "0 len wbthrottle ARGS" must be refused, and the kernel
# line "<dev>: wbthrottle: <ti->error>" must start ti->error with the ERE
# REASON.
bad() {
	local reason=$1 names
	shift
	dmesg_mark
	expect_fail -m 'reload ioctl on wtbad .*failed' \
		dmsetup create wtbad --table "0 $len wbthrottle${1:+ $1}"
	expect_dmesg "wbthrottle: $reason" "kernel gives the reason"
	names=$(dmsetup ls)
	! grep -Eq '^wtbad[[:space:]]' <<<"$names" || die "wtbad left behind: $names"
}

bad 'Missing device' ''
bad 'Cannot open the lower device' /dev/wbt-no-such-disk
bad 'Cannot open the lower device' /dev/null

bad 'wb_percent takes 1 to 1000' "$dev 2 wb_percent 0"
bad 'wb_percent takes 1 to 1000' "$dev 2 wb_percent abc"
bad 'wb_percent takes 1 to 1000' "$dev 2 wb_percent 1001"
bad 'wb_percent takes 1 to 1000' "$dev 2 wb_percent 99999999999999999999"
bad 'depth takes auto or 1 to 65536' "$dev 2 depth -1"
bad 'depth takes auto or 1 to 65536' "$dev 2 depth 0"
bad 'depth takes auto or 1 to 65536' "$dev 2 depth 70000"
bad 'depth takes auto or 1 to 65536' "$dev 2 depth +8"
bad 'enable takes 0 or 1' "$dev 2 enable 2"
bad 'enable takes 0 or 1' "$dev 2 enable yes"
bad 'cache_delay_us takes 0 to 1000000' "$dev 2 cache_delay_us 1x"
bad 'cache_delay_us takes 0 to 1000000' "$dev 2 cache_delay_us 1000001"
bad 'wc_policy takes auto, drain, delay or off' "$dev 2 wc_policy fast"
bad 'lat_us takes auto or 0 to 10000000' "$dev 2 lat_us 10000001"
bad 'lat_us takes auto or 0 to 10000000' "$dev 2 lat_us 4294967295"
bad 'lat_us takes auto or 0 to 10000000' "$dev 2 lat_us 2ms"
bad 'lat_pct takes 0 \(window minimum\) to 99' "$dev 2 lat_pct 100"
bad 'unknown option' "$dev 2 bogus 1"
bad 'unknown option' "$dev 4 depth 8 Depth 8"

# #opt_args: odd, more than the words given, over the maximum, not a number.
bad 'Optional arguments come in <key> <value> pairs: #opt_args must be even' "$dev 1 depth"
bad 'Optional arguments come in <key> <value> pairs: #opt_args must be even' "$dev 3 depth 8 enable"
bad 'Invalid number of optional arguments' "$dev 4 depth 8"
many=$(printf ' enable 1%.0s' $(seq 32))
bad 'Invalid number of optional arguments' "$dev 64$many"
bad 'Invalid number of optional arguments' "$dev x"
bad 'Invalid number of optional arguments' "$dev -2 depth 8"

# Words after the counted ones.
bad 'Too many arguments' "$dev 2 depth 8 extra"
bad 'Too many arguments' "$dev 0 depth 8"
bad 'Too many arguments' "$dev 2 depth 8 2 enable 1"

# Nothing holds the lower device or the module now, and a good table works.
assert_eq "$(ls "/sys/block/$lower/holders")" "" "$lower has no holders"
assert_eq "$(cat /sys/module/dm_wbthrottle/refcnt)" 0 "module reference count"
dm_create wtbad "0 $len wbthrottle $dev 2 depth 8"
assert_eq "$(st wtbad max)" 8 "a good table on the same device"
dm_remove wtbad
