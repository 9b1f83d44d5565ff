#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# fstests on xfs over wbthrottle (the device under test); see guest-run.sh.
exec bash "$(dirname "$0")/guest-run.sh" xfs wbthrottle
