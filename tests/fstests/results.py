#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""results.tsv of one fstests run: RES RC RUNNING [TEST...].

RES is ./check's RESULT_BASE (result.xml, check.out), RC its exit status
under timeout(1), RUNNING the test the kernel log says it started last,
TEST the selection. Prints test, pass|fail|notrun, seconds, reason.
"""
import os
import re
import sys
import xml.etree.ElementTree as ET

KILLED = ("124", "137")


def from_xunit(path):
    rows = {}
    for tc in ET.parse(path).getroot().iter("testcase"):
        status, why = "pass", ""
        for tag, st in (("skipped", "notrun"), ("failure", "fail"),
                        ("error", "fail")):
            e = tc.find(tag)
            if e is not None:
                status, why = st, (e.get("message") or "").split("\n")[0]
        rows[tc.get("name")] = (status, tc.get("time", "0"), why)
    return rows


def from_output(path):
    """./check's own lines: 'generic/015  24s', '[not run] why', others."""
    rows = {}
    pat = re.compile(r"^((?:generic|shared|xfs|ext4)/\d+)\s+(.*)$")
    with open(path, errors="replace") as f:
        for line in f:
            m = pat.match(line.rstrip())
            if not m:
                continue
            t, rest = m.groups()
            secs = re.search(r"(\d+)s$", rest)
            if "[not run]" in rest:
                rows[t] = ("notrun", "0", rest.split("]", 1)[1])
            elif "[expunged]" in rest or not rest:
                continue
            elif re.fullmatch(r"(\d+s \.\.\. +)?\d+s", rest):
                rows[t] = ("pass", secs.group(1), "")
            elif not re.match(r"\w{3} \w{3} ", rest):  # a start time
                rows[t] = ("fail", secs.group(1) if secs else "0", rest)
    return rows


def main():
    res, rc, running, sel = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
    xml = os.path.join(res, "result.xml")
    out = os.path.join(res, "check.out")
    rows = {}
    if os.path.exists(xml):
        rows = from_xunit(xml)
    elif os.path.exists(out):
        rows = from_output(out)
    if rc in KILLED:
        if running and (running not in rows or rows[running][0] == "notrun"):
            rows[running] = ("stopped", "0",
                             "killed at the ./check deadline")
        for t in sel:
            if "/" in t and t not in rows:
                rows[t] = ("notrun", "0",
                           "not reached before the ./check deadline")
    for t, (st, secs, why) in rows.items():
        print("\t".join((t, st, secs, " ".join(why.split())[:200])))


if __name__ == "__main__":
    main()
