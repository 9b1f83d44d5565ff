#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# make lint: every language of the tree through its linter.
#   all kernel C:          checkpatch --strict (scripts/checkpatch.sh)
#   every shell script:    shellcheck, as .shellcheckrc sets it up
#   every Python script:   pyflakes (pyflakes3, Debian's python3-pyflakes)
# A script is a file named *.sh or *.py, or one without an extension
# whose #! line names sh, bash or python.
# Files are those git tracks, or, outside a git checkout, those under the
# top directory but for build/ and debian's build directories.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"

files() {
	if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
		git ls-files
	else
		find . \( -path ./build -o -path ./.git -o -path './debian/*/*' \) \
			-prune -o -type f -print | sed 's|^\./||'
	fi
}

# pick EXT ERE: the files named *.EXT, and those without an extension
# whose first line matches ERE.
pick() {
	files | while IFS= read -r f; do
		case ${f##*/} in
		*."$1") echo "$f" ;;
		*.*) ;;
		*) if head -n 1 "$f" | grep -Eq "$2"; then echo "$f"; fi ;;
		esac
	done
}

rc=0
sh scripts/checkpatch.sh || rc=1

sh_files=$(pick sh '^#!.*/(env )?(ba)?sh( |$)')
n=$(printf '%s\n' "$sh_files" | grep -c .)
# shellcheck disable=SC2086 # one file per word; no names with spaces
if shellcheck -x $sh_files; then
	echo "shellcheck: $n scripts clean"
else
	rc=1
fi

py_files=$(pick py '^#!.*python')
n=$(printf '%s\n' "$py_files" | grep -c .)
# shellcheck disable=SC2086
if pyflakes3 $py_files; then
	echo "pyflakes: $n files clean"
else
	rc=1
fi

[ "$rc" = 0 ] && echo "lint: clean"
exit $rc
