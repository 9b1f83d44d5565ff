#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Prove dkms.conf works: dkms add, build and install dm-wbthrottle for every
# given kernel, check the installed module, then remove it. Everything
# happens in private dkms/source/install trees under a temporary directory,
# so the machine is left as it was (and a real installation is not touched).
#
# usage: scripts/dkms-check.sh KVER...
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
name=dm-wbthrottle
ver=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$top/dkms.conf")
tmp=$(mktemp -d /tmp/wbt-dkms.XXXXXX)
trap 'rm -rf "$tmp"' EXIT INT TERM

# dkms signs modules, generating a MOK key pair on first use: keep that
# in the temporary directory too.
dkms_() {
	mok_signing_key="$tmp/mok.key" mok_certificate="$tmp/mok.pub" \
	dkms --dkmstree "$tmp/dkms" --sourcetree "$tmp/src" \
	     --installtree "$tmp/install" "$@"
}

mkdir -p "$tmp/dkms" "$tmp/src/$name-$ver" "$tmp/install"
# Ship exactly what "make dkms-install" ships.
make -s -C "$top" --no-print-directory dist-files |
	while read -r f; do cp "$top/$f" "$tmp/src/$name-$ver/"; done

fail=0
dkms_ add -m "$name" -v "$ver" >"$tmp/log" 2>&1 || { cat "$tmp/log"; exit 1; }
for k in "$@"; do
	mkdir -p "$tmp/install/$k"
	if dkms_ build -m "$name" -v "$ver" -k "$k" >"$tmp/log" 2>&1 &&
	   dkms_ install -m "$name" -v "$ver" -k "$k" >>"$tmp/log" 2>&1; then
		ko=$(find "$tmp/install/$k" -name 'dm_wbthrottle.ko*' | head -n 1)
		if [ -n "$ko" ] && modinfo -F vermagic "$ko" | grep -q "^$k "; then
			echo "PASS dkms $k"
			continue
		fi
		echo "FAIL dkms $k: no installed module with vermagic $k"
	else
		echo "FAIL dkms $k:"
		tail -n 30 "$tmp/log"
	fi
	fail=1
done
dkms_ remove -m "$name" -v "$ver" --all >/dev/null 2>&1 || true
exit $fail
