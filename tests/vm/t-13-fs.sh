#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Filesystems on wbthrottle over the NVMe disk: ext4, then XFS. Fill each
# with a tree of small files and some large random ones, unmount, remove
# the target (so nothing can come from its page cache), set it up again,
# check the filesystem read-only (e2fsck -fn, xfs_repair -n), mount it
# again and compare every file and its metadata with what was written.
# vm-timeout: 400
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-wbt.sh"
trap lower_cleanup EXIT

[ -n "$WBT_KO" ] || skip "no module under test (run.sh -n)"

# request_module() cannot reach modprobe from the chroot.
run modprobe ext4
run modprobe xfs

dev=$(lower_dev nvme)
table="0 $(sectors "$dev") wbthrottle $dev"
mnt=$TEST_TMP/mnt
mkdir "$mnt"

# Small files: part of the host's documentation (about 25 MB, 1500 files).
docs=()
for d in /usr/share/doc/[a-f]* /usr/share/doc/[s-z]*; do
	[ -d "$d" ] && [ ! -L "$d" ] && docs+=("$d")
done
[ ${#docs[@]} -ge 10 ] || die "too little in /usr/share/doc to copy"

# manifest DIR: every entry with its type, mode, size, link target and,
# for files, content checksum.
manifest() {
	(cd "$1" && find . -printf '%p %y %m %s %l\n' | LC_ALL=C sort &&
		find . -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum)
}

# fill: write the test data into $mnt.
fill() {
	local i
	run mkdir "$mnt/doc" "$mnt/big"
	log "cp -a of ${#docs[@]} directories of /usr/share/doc into $mnt/doc"
	cp -a "${docs[@]}" "$mnt/doc/"
	for i in 1 2 3 4 5 6 7 8; do
		run dd if=/dev/urandom of="$mnt/big/f$i" bs=1M count=8 status=none
	done
	# A file written in small appends, and one with holes.
	for i in $(seq 200); do
		printf 'line %d of the appended file\n' "$i"
	done >"$mnt/big/appended"
	run dd if=/dev/urandom of="$mnt/big/sparse" bs=64k count=1 seek=100 status=none
	run dd if=/dev/urandom of="$mnt/big/sparse" bs=64k count=1 seek=10 conv=notrunc status=none
}

# fs_cycle FSTYPE MKFS_CMD CHECK_CMD: the whole round for one filesystem.
fs_cycle() {
	local fs=$1 mkfs=$2 check=$3 before after
	log "--- $fs"
	dm_create wt "$table"
	# shellcheck disable=SC2086 # the command and its options
	run $mkfs /dev/mapper/wt
	run mount -t "$fs" /dev/mapper/wt "$mnt"
	fill
	run sync
	before=$(manifest "$mnt")
	log "$fs: $(grep -c '^\./' <<<"$before") entries, $(du -sm "$mnt" | cut -f1) MB"
	run umount "$mnt"
	st_log wt
	dm_remove wt

	dm_create wt "$table"
	# shellcheck disable=SC2086
	run $check /dev/mapper/wt || die "$fs: $check found problems"
	run mount -t "$fs" /dev/mapper/wt "$mnt"
	after=$(manifest "$mnt")
	if [ "$before" != "$after" ]; then
		diff <(echo "$before") <(echo "$after") | head -n 20 >&2
		die "$fs: the files read back differ from those written"
	fi
	log "ok: $fs: every file and its metadata read back"
	# And the copy is the source's.
	run diff -r "${docs[0]}" "$mnt/doc/${docs[0]##*/}"
	run umount "$mnt"
	wait_idle wt 30 || die "$fs: target not idle"
	dm_remove wt
}

fs_cycle ext4 "mkfs.ext4 -q -F" "e2fsck -fn"
fs_cycle xfs "mkfs.xfs -q -f" "xfs_repair -n"
