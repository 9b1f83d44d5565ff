#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# fstests on ext4 over linear (the control); see guest-run.sh.
exec bash "$(dirname "$0")/guest-run.sh" ext4 linear
