#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Build both Debian packages with "dpkg-buildpackage -us -uc -b" from a
# copy of the tree as a clean checkout has it (the files git knows and new
# ones it does not ignore), check what each package holds, run lintian
# (an error fails). The -dkms package must ship exactly "make dist-files",
# the files scripts/dkms-check.sh proves DKMS builds. The packages are
# left in build/deb/.
#
# usage: scripts/deb-check.sh [--build-only]
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
ver=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$top/dkms.conf")
arch=$(dpkg --print-architecture)
build_only=
[ "${1:-}" != --build-only ] || { build_only=1; shift; }
tmp=$(mktemp -d /tmp/wbt-deb.XXXXXX)
trap 'rm -rf "$tmp"' EXIT INT TERM
src=$tmp/dm-wbthrottle-$ver
dkms_deb=$tmp/dm-wbthrottle-dkms_${ver}_all.deb
tools_deb=$tmp/wbthrottle-tools_${ver}_$arch.deb
fail=0

mkdir -p "$src"
git -C "$top" ls-files -co --exclude-standard -z |
	(cd "$top" && tar --null -T - --ignore-failed-read -cf - 2>/dev/null) |
	tar -C "$src" -xf -
if ! (cd "$src" && dpkg-buildpackage -us -uc -b) >"$tmp/build.log" 2>&1; then
	tail -n 40 "$tmp/build.log"
	echo "FAIL deb: dpkg-buildpackage"
	exit 1
fi
mkdir -p "$top/build/deb"
cp "$tmp"/*.deb "$tmp"/*.changes "$tmp"/*.buildinfo "$top/build/deb/"
echo "PASS deb: built $(cd "$tmp" && printf '%s ' ./*.deb)(in build/deb)"
[ -z "$build_only" ] || exit 0

# has DEB FILE...: the package holds each file.
has() {
	deb=$1
	shift
	dpkg-deb -c "$deb" | awk '{ print $6 }' | sed 's/^\.//' >"$tmp/list"
	for f; do
		grep -qx "$f" "$tmp/list" ||
			{ echo "FAIL deb: ${deb##*/} lacks $f"; fail=1; }
	done
}
has "$dkms_deb" "/usr/src/dm-wbthrottle-$ver/dkms.conf" \
	"/usr/src/dm-wbthrottle-$ver/Kbuild" \
	"/usr/src/dm-wbthrottle-$ver/dm-wbthrottle.c" \
	"/usr/src/dm-wbthrottle-$ver/wbt_core.c"
has "$tools_deb" /usr/sbin/wbthrottle \
	/lib/systemd/system-generators/wbthrottle-generator \
	/usr/share/man/man8/wbthrottle.8.gz \
	/usr/share/man/man5/wbthrottletab.5.gz \
	/usr/share/man/man4/dm-wbthrottle.4.gz \
	/usr/share/initramfs-tools/hooks/wbthrottle \
	/usr/share/initramfs-tools/scripts/local-top/wbthrottle \
	/usr/share/initramfs-tools/scripts/local-block/wbthrottle
dpkg-deb -f "$dkms_deb" Depends | grep -q dkms ||
	{ echo "FAIL deb: the -dkms package does not depend on dkms"; fail=1; }
dpkg-deb --ctrl-tarfile "$dkms_deb" | tar -xOf - ./postinst |
	grep -q '^DKMS_NAME=dm-wbthrottle$' ||
	{ echo "FAIL deb: the -dkms postinst does not call dkms"; fail=1; }
dpkg-deb -f "$tools_deb" Depends | grep -q libdevmapper ||
	{ echo "FAIL deb: wbthrottle-tools does not depend on libdevmapper"; fail=1; }

if command -v lintian >/dev/null; then
	lintian --fail-on error \
		"$tmp"/*.changes >"$tmp/lintian.log" 2>&1 ||
		{ cat "$tmp/lintian.log"; echo "FAIL deb: lintian errors"; fail=1; }
	echo "lintian: $(grep -c '^E:' "$tmp/lintian.log" || true) errors, $(grep -c '^W:' "$tmp/lintian.log" || true) warnings"
fi

# The module sources: exactly what DKMS is tested with.
dpkg-deb -c "$dkms_deb" | awk '{ print $6 }' |
	sed -n "s|^\./usr/src/dm-wbthrottle-$ver/\(.\)|\1|p" | sort >"$tmp/shipped"
make -s -C "$top" --no-print-directory dist-files | sort >"$tmp/dist"
cmp -s "$tmp/shipped" "$tmp/dist" ||
	{ echo "FAIL deb: the -dkms package ships other files than make dist-files:"
	  diff "$tmp/dist" "$tmp/shipped"; fail=1; }
[ $fail = 1 ] || echo "PASS deb: both packages hold what they should"
exit $fail
