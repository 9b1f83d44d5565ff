#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Stacks with submitters asleep in the target: dm-crypt above wbthrottle
# (kcryptd submits), dm-crypt below it, and wbthrottle over wbthrottle. In
# each a buffered flood drains, a suspend of the top device while writers
# wait completes, and the data reads back through the stack.
# vm-timeout: 600
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-wbt.sh"
trap wbt_cleanup EXIT
short_hung_task 10

run modprobe dm-crypt
key=$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')
prep_writeback
run head -c 12M /dev/urandom >data

# crypt NAME DEV: dm-crypt over DEV (CBC and AES are built in).
crypt() {
	dm_create "$1" "0 $(sectors "$2") crypt aes-cbc-plain64 $key 0 $2 0"
}

# flood TOP WT: 12 MB buffered into TOP; while it drains, wbthrottle device
# WT keeps its background limit (backlog_ms 60000: on a loaded host age
# would promote a write past it); a suspend of TOP while writers may be
# waiting (it lets everything go); then everything drains and reads back.
flood() {
	# A new bdi counts as a dirtier that just slept: limits lift for 1 s.
	sleep 1.2
	exec 9<"/dev/mapper/$1"
	run dd if=data of="/dev/mapper/$1" bs=1M conv=notrunc status=none
	sleep 2
	assert_le "$(st "$2" bg_hwm)" "$(st "$2" background)" "$2: background in flight <= its limit"
	run timeout 120 dmsetup suspend "$1"
	run dmsetup resume "$1"
	run timeout 120 sync
	exec 9<&-
	run cmp data <(dd if="/dev/mapper/$1" bs=1M count=12 iflag=direct status=none)
}

dev=$(slow_nullb 64)
wbt_create wt "$dev" depth 4 backlog_ms 60000
crypt top /dev/mapper/wt
flood top wt
st_log wt
assert_ge "$(st wt slept)" 1 "crypt above: kcryptd's writes waited"
dm_remove top
dm_remove wt

dev2=$(slow_nullb 64)
crypt low "$dev2"
wbt_create wt2 /dev/mapper/low depth 4 backlog_ms 60000
flood wt2 wt2
st_log wt2
assert_ge "$(st wt2 slept)" 1 "crypt below: the flusher waited"
dm_remove wt2
dm_remove low

dev3=$(slow_nullb 64)
wbt_create inner "$dev3" depth 4 backlog_ms 60000
wbt_create outer /dev/mapper/inner depth 2
flood outer inner
st_log outer
st_log inner
assert_ge "$(st outer slept)" 1 "wbthrottle over wbthrottle: the outer one pushed back"
