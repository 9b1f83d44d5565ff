#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# /init of the test initramfs (busybox). Loads the 9p/virtio modules listed
# in /modules.list, mounts the host root read-only and the results share,
# then chroots into the host root to run tests/vm/guest.sh. Whatever happens
# there, the VM powers off; a kernel panic reboots, which -no-reboot turns
# into a QEMU exit. The host decides pass/fail from the results share only.
export PATH=/bin

mount -t devtmpfs dev /dev
exec </dev/console >/dev/console 2>&1
mount -t proc proc /proc

# sync(2) in the background: a task stuck in a test's I/O would hold it
# forever, and the results are on the host already (9p, no cache).
halt_vm() {
	echo "init: $*"
	sync &
	i=0
	while [ $i -lt 60 ] && kill -0 $! 2>/dev/null; do
		sleep 1
		i=$((i + 1))
	done
	poweroff -f
}

while read -r m; do
	insmod "/lib/modules/$m" || halt_vm "insmod $m failed"
done </modules.list

# Large msize: the whole guest userland is read over this transport.
# cache=loose is safe only because the guest never writes the host root.
opts=trans=virtio,version=9p2000.L,msize=512000
mkdir -p /newroot
mount -t 9p -o "$opts,ro,cache=loose" hostroot /newroot ||
	halt_vm "cannot mount the host root"
if ! { mount -t proc proc /newroot/proc &&
	mount -t sysfs sys /newroot/sys &&
	mount -t devtmpfs dev /newroot/dev &&
	mount -t tmpfs -o mode=1777 tmp /newroot/tmp &&
	mount -t tmpfs -o mode=755 run /newroot/run &&
	mkdir /newroot/run/vm-out &&
	mount -t 9p -o "$opts" vmout /newroot/run/vm-out; }; then
	halt_vm "cannot set up the chroot"
fi
# The repository (WBT_REPO, from the kernel command line) at its host path,
# even where the guest's own tmpfs hides the host's files (a clone in /tmp).
if [ -n "${WBT_REPO:-}" ] && ! { mkdir -p "/newroot$WBT_REPO" &&
	mount -t 9p -o "$opts,ro" repo "/newroot$WBT_REPO"; }; then
	halt_vm "cannot mount the repository at $WBT_REPO"
fi

# vm.conf (written by run.sh, bash syntax) names guest.sh and its inputs.
# shellcheck disable=SC2016 # expanded by the chrooted bash
chroot /newroot /bin/bash -c '. /run/vm-out/vm.conf && exec /bin/bash "$VM_GUEST"'
halt_vm "guest.sh ended with status $?"
