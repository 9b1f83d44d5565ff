#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Install what fstests needs on Debian 12, idempotently: its build
# dependencies, the tools its tests call at run time, and its test users.
# The VM guest chroots into this machine's root read-only, so everything,
# users included, must exist here before a guest boots.
# Run by tests/fstests/run.sh (make fstests) after scripts/install-deps.sh.
set -eu

export DEBIAN_FRONTEND=noninteractive
SUDO=
[ "$(id -u)" = 0 ] || SUDO=sudo

stamp=/var/lib/dm-wbthrottle-fstests-deps.stamp
want_stamp="v2"

# Build: what fstests' configure and make need (its README, Debian part).
build_pkgs="autoconf automake libtool-bin make gcc pkg-config gawk
	xfslibs-dev uuid-dev libacl1-dev libattr1-dev libaio-dev
	libgdbm-dev libgdbm-compat-dev liburing-dev libcap-dev"
# Run time: tools the selected tests call; ./check reports a missing one
# as "not run".
run_pkgs="xfsprogs xfsdump e2fsprogs attr acl quota psmisc bc fio dbench
	uuid-runtime python3 util-linux fdisk dmsetup thin-provisioning-tools
	sqlite3 xz-utils"

have_all() {
	[ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want_stamp" ] || return 1
	[ -d /var/lib/xfsdump ] || return 1
	for u in fsgqa fsgqa2 123456-fsgqa; do
		id "$u" >/dev/null 2>&1 || return 1
	done
	# shellcheck disable=SC2086 # one package per word
	dpkg-query -W -f '${Status}\n' $build_pkgs $run_pkgs 2>/dev/null |
		grep -vq '^install ok installed$' && return 1
	return 0
}

if have_all; then
	echo "fstests install-deps: everything is already installed"
	exit 0
fi

# Another apt run (scripts/install-deps.sh) may hold the lock for a while.
# shellcheck disable=SC2086 # one package per word
$SUDO apt-get -o DPkg::Lock::Timeout=900 install -y -q --no-install-recommends \
	$build_pkgs $run_pkgs

# fstests' users (its README, "Create fsgqa test users and groups");
# useradd makes the fsgqa group with the fsgqa user.
id fsgqa >/dev/null 2>&1 || $SUDO useradd -m fsgqa
id fsgqa2 >/dev/null 2>&1 || $SUDO useradd fsgqa2
id 123456-fsgqa >/dev/null 2>&1 || $SUDO useradd --badname 123456-fsgqa
getent group fsgqa >/dev/null || $SUDO groupadd fsgqa
# xfsdump keeps its inventory in /var/lib/xfsdump; the guest mounts a
# tmpfs there (guest-run.sh), which needs the directory to exist here.
$SUDO mkdir -p /var/lib/xfsdump

echo "$want_stamp" | $SUDO tee "$stamp" >/dev/null
echo "fstests install-deps: done"
