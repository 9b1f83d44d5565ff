#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Run the kernel's checkpatch.pl --strict over all kernel C of the tree:
# the module, its trace header and shim, and the test disk model. The
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

# checkpatch [--ignore TYPES] FILE...: print what it finds (nothing if
# the files are clean) and count the files; rc=1 if it found anything.
n=0
rc=0
checkpatch() {
	# Long user-visible strings are not split (coding-style.rst 2).
	ignore=LONG_LINE_STRING,LONG_LINE
	if [ "$1" = --ignore ]; then
		ignore=$ignore,$2
		shift 2
	fi
	n=$((n + $#))
	perl "$cp" --no-tree --strict --terse --show-types --ignore "$ignore" \
		-f "$@" || rc=1
}

checkpatch dm-wbthrottle.c wbt_core.c wbt_core.h compat.h \
	tests/diskmodel/wbt_diskmodel.c tests/diskmodel/diskmodel_compat.h
# The name lists are the EM()/EMe() idiom of include/trace/events/: a list
# of macro calls is not an expression.
checkpatch --ignore COMPLEX_MACRO wbt_names.h
# TRACE_EVENT() is laid out as in include/trace/events/: a '(' ends the
# line that opens each part, and the parts align by tab, not by paren; its
# EM() ends in TRACE_DEFINE_ENUM()'s ';' and leaves the name out.
checkpatch --ignore OPEN_ENDED_LINE,PARENTHESIS_ALIGNMENT,TRAILING_SEMICOLON,MACRO_ARG_UNUSED \
	dm_wbthrottle_trace.h
# For user space the shim defines __printf itself.
checkpatch --ignore PREFER_DEFINED_ATTRIBUTE_MACRO wbt_shim.h
if [ "$rc" = 0 ]; then
	echo "checkpatch: $n files clean"
else
	echo "checkpatch: $n files, findings above"
fi
exit $rc
