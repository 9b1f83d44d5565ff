#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Flush, FUA and discard reach the lower device, seen from the lower device
# itself: its block_rq_issue trace events (filtered to its dev_t) and its
# /sys/block/X/stat counters. Over a lower device with a volatile write
# cache (the QEMU NVMe disk, null_blk with cache_size) the target advertises
# a write-back cache; fsync sends a flush request to the lower device and an
# O_DSYNC O_DIRECT write arrives there as a FUA write. Over a write-through
# null_blk no flush arrives (the control). A discard through the target
# discards on the lower device, and exactly the discarded range reads back
# as zeros. A write is cut where the lower queue cuts it (max_sectors from
# its start), never across a multiple of max_sectors.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-wbt.sh"

[ -n "$WBT_KO" ] || skip "no module under test (run.sh -n)"

tr=/sys/kernel/tracing
ev=$tr/events/block/block_rq_issue

flush_cleanup() {
	local rc=$?
	set +e
	if [ -e "$ev/enable" ]; then
		echo 0 >"$ev/enable"
		echo 0 >"$ev/filter"
		: >"$tr/trace"
	fi
	[ ! -e "$TEST_TMP/.tracefs" ] || run umount "$tr"
	! mountpoint -q "$TEST_TMP/mnt" || run umount "$TEST_TMP/mnt"
	(exit "$rc")
	lower_cleanup
}
trap flush_cleanup EXIT

if [ ! -e "$tr/trace" ]; then
	run mount -t tracefs tracefs "$tr"
	: >"$TEST_TMP/.tracefs"
fi
[ -e "$ev/enable" ] || die "no block_rq_issue trace event"

# devt DEV: the kernel's dev_t of DEV (MAJOR << 20 | MINOR), for filters.
devt() {
	local mm
	mm=$(cat "/sys/block/${1#/dev/}/dev")
	echo $(((${mm%:*} << 20) | ${mm#*:}))
}

# trace_on DEV: record the requests issued to DEV from now on.
trace_on() {
	sysfs_write "$ev/enable" 0
	sysfs_write "$ev/filter" "dev == $(devt "$1")"
	sysfs_write "$tr/trace" ""
	sysfs_write "$ev/enable" 1
}

# trace_off: stop recording; print "RWBS SECTOR NR_SECTORS" for each request.
# RWBS is blk_fill_rwbs(): 'F' first for a flush (REQ_OP_FLUSH, or
# REQ_PREFLUSH), then the op (W, R, D, ...), then 'F' for FUA, 'S' sync...
trace_off() {
	sysfs_write "$ev/enable" 0
	awk '{
		for (i = 1; i < NF; i++)
			if ($i == "block_rq_issue:")
				break
		for (j = i; j < NF; j++)
			if ($j == "+")
				break
		if (i < NF && j < NF)
			print $(i + 2), $(j - 1), $(j + 1)
	}' "$tr/trace"
}

# stat_field DEV N: field N of /sys/block/DEV/stat (12 discards, 16 flushes).
stat_field() {
	awk -v n="$2" '{ print $n }' "/sys/block/${1#/dev/}/stat"
}

# sysq DEV ATTR: a queue attribute of a block device node.
sysq() {
	local mm
	mm=$(stat -L -c '%t %T' "$1")
	cat "/sys/dev/block/$((0x${mm% *})):$((0x${mm#* }))/queue/$2"
}

run head -c 4k /dev/urandom >block

# cached KIND DEV: flush and FUA through the target over DEV, which has a
# volatile write cache.
cached() {
	local kind=$1 dev=$2 wt=/dev/mapper/wt-$1 f0 f1 rq back
	log "--- $kind ($dev): volatile write cache"
	wbt_create "wt-$kind" "$dev"
	assert_eq "$(sysq "$dev" write_cache)" "write back" "$kind: lower device has a write-back cache"
	assert_eq "$(sysq "$wt" write_cache)" "write back" "$kind: so does the target"
	assert_eq "$(sysq "$wt" fua)" "$(sysq "$dev" fua)" "$kind: target FUA as the lower device's"
	assert_eq "$(st "wt-$kind" wc)" 1 "$kind: status wc=1"

	# fsync: a flush request on the lower device.
	f0=$(stat_field "$dev" 16)
	trace_on "$dev"
	run dd if=block of="$wt" bs=4k seek=64 conv=fsync,notrunc status=none
	rq=$(trace_off)
	log "$kind: requests: $(paste -sd, <<<"$rq")"
	f1=$(stat_field "$dev" 16)
	assert_match "$rq" '^F' "$kind: fsync sent a flush request to the lower device"
	assert_ge "$f1" $((f0 + 1)) "$kind: lower device flush counter"
	assert_ge "$(st "wt-$kind" n_flush)" 1 "$kind: flush seen by the target"

	# O_DIRECT|O_DSYNC: the write itself carries FUA, at the right sector.
	if [ "$(sysq "$dev" fua)" = 1 ]; then
		trace_on "$dev"
		run dd if=block of="$wt" bs=4k seek=100 oflag=direct,dsync conv=notrunc status=none
		rq=$(trace_off)
		log "$kind: requests: $(paste -sd, <<<"$rq")"
		assert_match "$rq" '^F?WF[A-Z]* 800 8$' "$kind: FUA write of sectors 800-807 on the lower device"
	else
		log "$kind: the lower device has no FUA; not checking FUA writes"
		run dd if=block of="$wt" bs=4k seek=100 oflag=direct,dsync conv=notrunc status=none
	fi
	back=$kind.back
	run dd if="$dev" of="$back" bs=4k skip=100 count=1 iflag=direct status=none
	run cmp block "$back"
	dm_remove "wt-$kind"
}

dev=$(lower_dev nvme)
cached nvme "$dev"
dev=$(lower_dev nullb 64 cache_size=16)
cached nullb "$dev"

# --- write-through null_blk with discard: no flush arrives; discards do.
dev=$(lower_dev nullb 64 discard=1)
wt=/dev/mapper/wt-wt
log "--- nullb ($dev): write through, discard"
wbt_create wt-wt "$dev"
assert_eq "$(sysq "$wt" write_cache)" "write through" "control: target is write through"
f0=$(stat_field "$dev" 16)
trace_on "$dev"
run dd if=block of="$wt" bs=4k seek=64 conv=fsync,notrunc status=none
rq=$(trace_off)
log "control: requests: $(paste -sd, <<<"$rq")"
assert_eq "$(stat_field "$dev" 16)" "$f0" "control: no flush on the lower device"
grep -q '^F' <<<"$rq" && die "control: a flush request reached a write-through device"
assert_match "$rq" '^W[A-Z]* 512 8$' "control: the trace sees the write itself"

# The target cuts a write only where the lower queue would (at its
# max_sectors from the write's start), never at multiples of max_sectors
# from the start of the disk: this null_blk keeps the block layer's default,
# 255 sectors, and a 4 KiB write of sectors 248-255 crosses 255. Cut there,
# it would be two writes for the target and a merge on the lower device.
assert_eq "$(sysq "$dev" max_sectors_kb)" 127 "lower max_sectors is 255 sectors"
# tracked NAME: the writes the target NAME counted, every class.
tracked() {
	dmsetup status "$1" | tr ' ' '\n' |
		awk -F= '/^n_(reclaim|sync|normal|bg)=/ { n += $2 } END { print n }'
}
t0=$(tracked wt-wt)
n0=$(stat_field "$dev" 5)
m0=$(stat_field "$dev" 6)
trace_on "$dev"
run dd if=block of="$wt" bs=4k seek=31 conv=fsync,notrunc status=none
rq=$(trace_off)
log "across 255: requests: $(paste -sd, <<<"$rq")"
assert_match "$rq" '^W[A-Z]* 248 8$' "one request, sectors 248-255"
assert_eq "$(($(tracked wt-wt) - t0))" 1 "the target counted one write"
assert_eq "$(($(stat_field "$dev" 5) - n0))/$(($(stat_field "$dev" 6) - m0))" 1/0 \
	"lower device: one write, no merge"

run head -c 2M /dev/urandom >data
run dd if=data of="$wt" bs=1M oflag=direct status=none
d0=$(stat_field "$dev" 12)
trace_on "$dev"
run blkdiscard -o 0 -l 1M "$wt"
rq=$(trace_off)
log "discard: requests: $(paste -sd, <<<"$rq")"
assert_match "$rq" '^D[A-Z]* 0 ' "discard request at sector 0 on the lower device"
assert_ge "$(stat_field "$dev" 12)" $((d0 + 1)) "lower device discard counter"
assert_ge "$(st wt-wt n_discard)" 1 "discard seen by the target"
run dd if="$wt" of=back bs=1M count=2 iflag=direct status=none
run cmp -n 1M back /dev/zero
run tail -c 1M data >data.tail
run tail -c 1M back >back.tail
run cmp data.tail back.tail
run dd if="$dev" of=back.lower bs=1M count=1 iflag=direct status=none
run cmp -n 1M back.lower /dev/zero
wait_idle wt-wt 30 || die "target not idle"

# It does cut a write larger than a request of the lower device: ext4
# writes back in bios of up to 1 MiB, and the target counts each as the
# writes of at most 255 sectors that the lower queue makes of it. No
# journal and no lazy init: jbd2 writes with REQ_SYNC|REQ_IDLE, which the
# target does not count (as O_DIRECT), and ext4lazyinit writes when it
# likes; then every sector written is in a counted write.
dev=$(lower_dev nullb 128)
mnt=$TEST_TMP/mnt
log "--- nullb ($dev): ext4, writes larger than max_sectors"
wbt_create wt-fs "$dev"
# request_module() cannot reach modprobe from the chroot.
run modprobe ext4
run mkfs.ext4 -q -F -O ^has_journal -E lazy_itable_init=0 /dev/mapper/wt-fs
run mkdir -p "$mnt"
run mount -t ext4 -o noinit_itable /dev/mapper/wt-fs "$mnt"
t0=$(tracked wt-fs)
s0=$(stat_field "$dev" 7)
run head -c 16M /dev/urandom >"$mnt/f"
run sync
n=$(($(tracked wt-fs) - t0))
s=$(($(stat_field "$dev" 7) - s0))
log "ext4: $s sectors written in $n counted writes"
assert_ge "$s" 32768 "the file reached the lower device"
assert_ge "$n" $(((s + 254) / 255)) "no counted write over 255 sectors"
run umount "$mnt"
wait_idle wt-fs 30 || die "target not idle"
