#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Prove dkms.conf and "make install-dkms" work: install dm-wbthrottle with
# DKMS for every given kernel, check the installed module, install again
# for the first kernel (a second "make install" must succeed and leave the
# other builds alone), then uninstall twice. Everything happens in private
# dkms/source/install trees under a temporary directory, so the machine is
# left as it was (and a real installation is not touched).
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
dkms="env mok_signing_key=$tmp/mok.key mok_certificate=$tmp/mok.pub dkms"
dkms="$dkms --dkmstree $tmp/dkms --sourcetree $tmp/src --installtree $tmp/install"
mkdir -p "$tmp/dkms" "$tmp/src" "$tmp/install"

# make install-dkms KVER
install() {
	mkdir -p "$tmp/install/$1"
	make -s -C "$top" --no-print-directory install-dkms KVER="$1" \
		DKMS="$dkms" DKMS_SRC="$tmp/src" >"$tmp/log" 2>&1
}

# installed KVER: the module DKMS installed for KVER has its vermagic.
installed() {
	ko=$(find "$tmp/install/$1" -name 'dm_wbthrottle.ko*' | head -n 1)
	[ -n "$ko" ] && modinfo -F vermagic "$ko" | grep -q "^$1 "
}

fail=0
for k in "$@"; do
	if ! install "$k"; then
		echo "FAIL dkms $k:"
		tail -n 30 "$tmp/log"
		fail=1
	elif installed "$k"; then
		echo "PASS dkms $k"
	else
		echo "FAIL dkms $k: no installed module with vermagic $k"
		fail=1
	fi
done

if [ $# -gt 0 ] && [ $fail = 0 ]; then
	if install "$1" && installed "$1" &&
	   $dkms status -m "$name" -v "$ver" 2>/dev/null | grep -q "$1.*: installed"; then
		for k in "$@"; do
			installed "$k" || { echo "FAIL dkms: a second install for $1 removed the build for $k"; fail=1; }
		done
		[ $fail = 1 ] || echo "PASS dkms: make install again for $1"
	else
		echo "FAIL dkms: make install again for $1:"
		tail -n 30 "$tmp/log"
		fail=1
	fi
fi

for i in 1 2; do
	if ! make -s -C "$top" --no-print-directory uninstall-dkms \
		DKMS="$dkms" DKMS_SRC="$tmp/src" >"$tmp/log" 2>&1 ||
	   $dkms status -m "$name" -v "$ver" 2>/dev/null | grep -q .; then
		echo "FAIL dkms: make uninstall ($i):"
		tail -n 30 "$tmp/log"
		fail=1
	fi
done
[ $fail = 1 ] || echo "PASS dkms: make uninstall, twice"
exit $fail
