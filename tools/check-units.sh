#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# The generator's units as systemd reads them: generate units from a tab
# file with the built binary and have "systemd-analyze verify" load them.
# The command is not installed where this runs, so its "not executable"
# complaint is expected; any other complaint fails.
#
# usage: tools/check-units.sh BUILD_DIR
set -eu

out=$1
if ! command -v systemd-analyze >/dev/null; then
	echo "check-units: no systemd-analyze, skipped"
	exit 0
fi
tmp=$(mktemp -d /tmp/wbt-units.XXXXXX)
trap 'rm -rf "$tmp"' EXIT INT TERM
cat >"$tmp/tab" <<'TAB'
# name lower device options
slow	/dev/disk/by-id/ata-ST4000DM004-2CV104_ZFN0XXXX	wb_percent=50,lat_us=50000
fast	PARTUUID=6c4d5c1e-01	nofail
TAB
mkdir "$tmp/gen"
WBTHROTTLETAB="$tmp/tab" "$out/wbthrottle-generator" "$tmp/gen" "$tmp/gen" "$tmp/gen"
for n in slow fast; do
	[ -f "$tmp/gen/wbthrottle-$n.service" ] ||
		{ echo "FAIL check-units: no unit for $n"; exit 1; }
done
systemd-analyze verify --man=no "$tmp"/gen/*.service >"$tmp/log" 2>&1 || true
if grep -v 'Command /usr/sbin/wbthrottle is not executable' "$tmp/log" | grep .; then
	echo "FAIL check-units: systemd-analyze verify complains (above)"
	exit 1
fi
echo "PASS check-units: systemd loads the generated units"
