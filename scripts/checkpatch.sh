#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Run the kernel's checkpatch.pl --strict over the module sources. The
# script comes from Debian's linux-source-6.12 package, fetched once into
# build/checkpatch/ (kernel files are never committed here).
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
dir=$top/build/checkpatch
cp=$dir/scripts/checkpatch.pl
if [ ! -f "$cp" ]; then
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	(cd "$tmp" && apt-get download linux-source-6.12 >/dev/null 2>&1)
	dpkg-deb --fsys-tarfile "$tmp"/linux-source-6.12_*.deb |
		tar -x -C "$tmp" --wildcards '*/linux-source-6.12.tar.xz'
	mkdir -p "$dir"
	tar -xJf "$tmp"/usr/src/linux-source-6.12.tar.xz -C "$dir" \
		--strip-components=1 linux-source-6.12/scripts/checkpatch.pl \
		linux-source-6.12/scripts/spelling.txt \
		linux-source-6.12/scripts/const_structs.checkpatch
fi
cd "$top"
# Long user-visible strings are not split (coding-style.rst 2).
perl "$cp" --no-tree --strict --terse --ignore LONG_LINE_STRING,LONG_LINE \
	-f dm-wbthrottle.c wbt_core.c wbt_core.h compat.h
