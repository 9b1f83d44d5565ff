#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Module lifetime: a wbthrottle device holds a module reference, so rmmod is
# refused while one exists and succeeds once it is gone; after rmmod the
# target is unregistered and a table using it fails. Three load/unload
# cycles each register the target again (with the module's version) and
# give a working device. The module is loaded at the end.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-wbt.sh"

[ -n "$WBT_KO" ] || skip "no module under test (run.sh -n)"

# Whatever happens, leave the module loaded for the tests after this one.
module_cleanup() {
	local rc=$?
	set +e
	lower_cleanup
	[ -d /sys/module/dm_wbthrottle ] || run insmod "$WBT_KO"
	return "$rc"
}
trap module_cleanup EXIT

mod=/sys/module/dm_wbthrottle
version=$(run modinfo -F version "$WBT_KO")
[ -n "$version" ] || die "no version in $WBT_KO"
dev=$(lower_dev nullb 64)
table="0 $(sectors "$dev") wbthrottle $dev"

# io NAME: write a block through the device and read it back.
io() {
	run dd if=block of="/dev/mapper/$1" bs=4k seek=10 oflag=direct status=none
	run dd if="/dev/mapper/$1" of=back bs=4k skip=10 count=1 iflag=direct status=none
	run cmp block back
}

run head -c 4k /dev/urandom >block
[ -d "$mod" ] || run insmod "$WBT_KO"
assert_eq "$(cat "$mod/refcnt")" 0 "no reference without a device"

# --- rmmod is refused while a device exists
dm_create wt "$table"
assert_eq "$(cat "$mod/refcnt")" 1 "the device holds a reference"
expect_fail -m 'in use' rmmod dm_wbthrottle
[ -d "$mod" ] || die "the module went away under a live device"
log "ok: still loaded"
io wt
dm_remove wt
assert_eq "$(cat "$mod/refcnt")" 0 "reference dropped on remove"

# --- load/unload cycles
for i in 1 2 3; do
	log "--- cycle $i"
	run rmmod dm_wbthrottle
	[ ! -d "$mod" ] || die "cycle $i: still in /sys/module after rmmod"
	targets=$(run dmsetup targets)
	grep -q '^wbthrottle' <<<"$targets" && die "cycle $i: target still registered"
	log "ok: cycle $i: target unregistered"
	dmesg_mark
	expect_fail dmsetup create wt --table "$table"
	expect_dmesg 'wbthrottle: unknown target type' "cycle $i: no target, no device"

	run insmod "$WBT_KO"
	targets=$(run dmsetup targets)
	assert_match "$targets" "^wbthrottle[[:space:]]+v${version//./\\.}\$" "cycle $i: target registered, v$version"
	dm_create wt "$table"
	io wt
	dm_remove wt
	assert_eq "$(cat "$mod/refcnt")" 0 "cycle $i: no reference left"
done
