#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# The initramfs-tools hook on this host's initramfs-tools: with a tab line
# marked "initramfs", mkinitramfs puts the command (with libdevmapper), the
# tab, device-mapper's udev rules and the scripts into the image; with no
# such line the hook adds nothing. (This host cannot boot the image; the
# scripts themselves only run "wbthrottle tab --initramfs".)
#
# usage: tools/check-initramfs.sh BUILD_DIR KVER
set -eu

src=$(cd "$(dirname "$0")" && pwd)/initramfs
out=$(cd "$1" && pwd)
kver=$2
if ! command -v mkinitramfs >/dev/null || [ ! -d "/lib/modules/$kver" ]; then
	echo "check-initramfs: no mkinitramfs or no /lib/modules/$kver, skipped"
	exit 0
fi
tmp=$(mktemp -d /tmp/wbt-initramfs.XXXXXX)
trap 'rm -rf "$tmp"' EXIT INT TERM

# A private configuration, small and quick: no modules but those asked for.
mkdir -p "$tmp/conf"
cp -r /etc/initramfs-tools/. "$tmp/conf/"
sed -i 's/^MODULES=.*/MODULES=list/; s/^COMPRESS=.*/COMPRESS=gzip/' \
	"$tmp/conf/initramfs.conf"
: >"$tmp/conf/modules"
mkdir -p "$tmp/conf/hooks" "$tmp/conf/scripts/local-top" \
	"$tmp/conf/scripts/local-block"
cp "$src/hook" "$tmp/conf/hooks/wbthrottle"
cp "$src/local-block" "$tmp/conf/scripts/local-top/wbthrottle"
cp "$src/local-block" "$tmp/conf/scripts/local-block/wbthrottle"
export WBTHROTTLE_BIN="$out/wbthrottle"

printf 'data /dev/disk/by-id/ata-X_1 nofail\n' >"$tmp/tab0"
mkdir "$tmp/d0"
DESTDIR=$tmp/d0 WBTHROTTLETAB=$tmp/tab0 version=$kver \
	sh "$tmp/conf/hooks/wbthrottle"
if [ -n "$(ls -A "$tmp/d0")" ]; then
	echo "FAIL check-initramfs: the hook copied files with no initramfs line"
	exit 1
fi

printf '# root\nroot /dev/disk/by-id/ata-X_1 wb_percent=50,initramfs\n' >"$tmp/tab1"
if ! WBTHROTTLETAB=$tmp/tab1 mkinitramfs -d "$tmp/conf" -o "$tmp/initrd" \
	"$kver" >"$tmp/log" 2>&1; then
	tail -n 20 "$tmp/log"
	echo "FAIL check-initramfs: mkinitramfs"
	exit 1
fi
lsinitramfs "$tmp/initrd" >"$tmp/list"
fail=0
for f in usr/sbin/wbthrottle etc/wbthrottletab scripts/local-top/wbthrottle \
	 scripts/local-block/wbthrottle '(usr/)?lib/udev/rules.d/95-dm-notify.rules' \
	 '.*/libdevmapper\.so\..*'; do
	grep -Eqx "$f" "$tmp/list" ||
		{ echo "FAIL check-initramfs: no $f in the image"; fail=1; }
done
[ $fail = 1 ] || echo "PASS check-initramfs: the hook fills the initramfs for $kver"
exit $fail
