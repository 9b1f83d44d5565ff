#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Build fstests from the pinned source tarball into build/fstests/src,
# and pack what runs into build/fstests/fstests.tar for the guest.
#
#	tests/fstests/build.sh
#
# FSTESTS_TARBALL names the tarball (default: the one file matching
# shared/fstests/fstests-*.tar.xz beside the repository, or beside the
# nearest directory above it that has one: a clean clone may sit deeper
# than the working tree). No build or CI machine reaches GitHub, so there is
# no fallback: without the tarball this fails and says where it looked. The tree is rebuilt only when the tarball
# changes; "fstests: built <dir>" is the success signal.
set -eu -o pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
out=$repo/build/fstests

if [ -n "${FSTESTS_TARBALL:-}" ]; then
	tarball=$FSTESTS_TARBALL
else
	shopt -s nullglob
	d=$repo
	while d=$(dirname "$d"); do
		set -- "$d"/shared/fstests/fstests-*.tar.xz
		if [ $# != 0 ] || [ "$d" = / ]; then
			break
		fi
	done
	shopt -u nullglob
	if [ $# != 1 ]; then
		echo "fstests: need exactly one shared/fstests/fstests-*.tar.xz" \
			"beside $repo or a directory above it, found $#;" \
			"set FSTESTS_TARBALL to the pinned fstests source" >&2
		exit 2
	fi
	tarball=$1
fi
[ -f "$tarball" ] || {
	echo "fstests: FSTESTS_TARBALL=$tarball: no such file" >&2
	exit 2
}
tarball=$(realpath "$tarball")

sum=$(sha256sum "$tarball" | cut -d' ' -f1)
if [ -x "$out/src/ltp/fsstress" ] && [ -f "$out/fstests.tar" ] &&
	[ "$(cat "$out/src/.tarball" 2>/dev/null)" = "$sum" ]; then
	echo "fstests: built $out/src (up to date)"
	exit 0
fi

echo "fstests: building $tarball in $out/src (log: $out/build.log)"
rm -rf "$out/src"
mkdir -p "$out/src"
tar -xJf "$tarball" -C "$out/src" --strip-components=1
if ! nice -n 10 make -C "$out/src" -j"$(nproc)" >"$out/build.log" 2>&1; then
	tail -n 30 "$out/build.log" >&2
	echo "fstests: build failed (see $out/build.log)" >&2
	exit 1
fi
for f in ltp/fsstress ltp/fsx src/feature; do
	[ -x "$out/src/$f" ] || { echo "fstests: build did not make $f" >&2; exit 1; }
done
# The guest unpacks this into its tmpfs: one file reads fast over 9p,
# thousands of small ones do not.
tar -cf "$out/fstests.tar.tmp" -C "$out/src" --exclude='*.o' \
	--exclude=autom4te.cache --exclude='*.lo' --exclude=.libs .
mv "$out/fstests.tar.tmp" "$out/fstests.tar"
echo "$sum" >"$out/src/.tarball"
basename "$tarball" >"$out/src/.tarball.name"
echo "fstests: built $out/src"
