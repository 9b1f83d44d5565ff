#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# One version: PACKAGE_VERSION in dkms.conf feeds Kbuild (MODULE_VERSION,
# the target version), DKMS and the Makefile; debian/changelog must say
# the same. Also hold BUILD_EXCLUSIVE_KERNEL to the kernels the code
# builds for (6.1 and newer) and not older ones.
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
ver=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$top/dkms.conf")
deb=$(sed -n '1s/^[^ ]* (\([^)]*\)).*/\1/p' "$top/debian/changelog")
fail=0

if [ "$ver" != "${deb%-*}" ]; then
	echo "FAIL version: dkms.conf says $ver, debian/changelog says $deb" \
	     "(dch -v $ver to follow)"
	fail=1
fi

re=$(sed -n 's/^BUILD_EXCLUSIVE_KERNEL="\(.*\)"/\1/p' "$top/dkms.conf")
for k in 6.1.0-57-amd64 6.12.118+deb12-amd64 6.19.0 7.0.1 10.2.3; do
	echo "$k" | grep -Eq "$re" ||
		{ echo "FAIL BUILD_EXCLUSIVE_KERNEL refuses $k"; fail=1; }
done
for k in 5.15.0-91-generic 6.0.12-amd64 4.19.0-26-amd64 3.10.0; do
	! echo "$k" | grep -Eq "$re" ||
		{ echo "FAIL BUILD_EXCLUSIVE_KERNEL takes $k"; fail=1; }
done
[ $fail = 1 ] || echo "PASS version $ver (dkms.conf, debian/changelog); kernels >= 6.1"
exit $fail
