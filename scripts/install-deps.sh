#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Install everything dm-wbthrottle needs to build, test and benchmark on
# Debian 12 (bookworm), idempotently: both Debian kernels (6.1 and the
# newest 6.12 backport that has both image and headers), QEMU, busybox and
# the block and trace tools used inside the guest (which sees the host's
# root), what the wbthrottle command and the Debian packages need to
# build, and the linters of make lint.
set -eu

export DEBIAN_FRONTEND=noninteractive
SUDO=
[ "$(id -u)" = 0 ] || SUDO=sudo

stamp=/var/lib/dm-wbthrottle-deps.stamp
want_stamp="v7"

# Newest 6.12 flavour for which both linux-image and linux-headers exist.
pick_612() {
	imgs=$(apt-cache pkgnames linux-image-6.12. |
	       sed -n 's/^linux-image-\(6\.12\.[0-9]*+deb12-amd64\)$/\1/p')
	hdrs=$(apt-cache pkgnames linux-headers-6.12. |
	       sed -n 's/^linux-headers-\(6\.12\.[0-9]*+deb12-amd64\)$/\1/p')
	for k in $(printf '%s\n' "$imgs" | sort -rV); do
		if printf '%s\n' "$hdrs" | grep -qx "$k" &&
		   apt-cache show "linux-image-$k" >/dev/null 2>&1; then
			echo "$k"
			return 0
		fi
	done
	return 1
}

have_all() {
	[ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want_stamp" ] || return 1
	ls /lib/modules/6.1.*-amd64/build/Makefile >/dev/null 2>&1 || return 1
	ls /lib/modules/6.12.*+deb12-amd64/build/Makefile >/dev/null 2>&1 || return 1
	[ -f /usr/include/libdevmapper.h ] || return 1
	[ -f /usr/share/perl5/Debian/Debhelper/Sequence/dkms.pm ] || return 1
	for c in qemu-system-x86_64 busybox dmsetup fio mkfs.xfs mkfs.ext4 \
		 dkms sparse cpio xz gnuplot clang pkg-config dh fakeroot \
		 dpkg-buildpackage trace-cmd perf shellcheck pyflakes3; do
		command -v "$c" >/dev/null 2>&1 || return 1
	done
}

if have_all; then
	echo "install-deps: everything is already installed"
	exit 0
fi

$SUDO apt-get update -q
k612=$(pick_612) || { echo "install-deps: no linux-image-6.12.*+deb12-amd64 with headers" >&2; exit 1; }
echo "install-deps: 6.12 kernel is $k612"

# Kernel images change what the machine boots: ask first on a terminal.
if ! dpkg -s linux-image-amd64 "linux-image-$k612" >/dev/null 2>&1 &&
   [ -t 0 ] && [ "${WBT_ASSUME_YES:-}" != 1 ]; then
	echo "install-deps: about to install the kernel images linux-image-amd64 and"
	echo "linux-image-$k612 (for the QEMU tests); the newer one may become the"
	printf "default boot entry. Go on? [y/N] "
	read -r answer
	case $answer in [yY]*) ;; *) echo "install-deps: stopped"; exit 1 ;; esac
fi

$SUDO apt-get install -y -q --no-install-recommends \
	build-essential make gcc bc bison flex libelf-dev kmod cpio xz-utils \
	initramfs-tools \
	linux-image-amd64 linux-headers-amd64 \
	"linux-image-$k612" "linux-headers-$k612" \
	qemu-system-x86 busybox-static \
	dmsetup fio xfsprogs e2fsprogs util-linux procps trace-cmd linux-perf \
	dkms sparse gnuplot-nox clang python3 git \
	libdevmapper-dev pkg-config debhelper dh-dkms dpkg-dev fakeroot lintian \
	shellcheck python3-pyflakes pyflakes3

echo "$want_stamp" | $SUDO tee "$stamp" >/dev/null
echo "install-deps: done"
