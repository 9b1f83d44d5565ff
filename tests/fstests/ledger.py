#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""The ledger of a group run in batches (tests/fstests/run.sh -R).

fstests' quick group takes many hours under TCG, more than one sitting.
run.sh -R runs it in batches, on one kernel and one filesystem: each batch
takes the group's tests that have no result yet, runs as many as its
deadline allows, and adds what finished to the ledger, a directory
committed under results/ (FS-TARGET.tsv and FS-TARGET.kernel.tsv, rows as
guest-run.sh writes them; walls.tsv, one line per batch).

    ledger.py todo LEDGER SRC FS GROUP SERIES EXCLUDE_DIR
        the group's tests for FS without a result over wbthrottle, in
        order, less the excluded ones: the next batch's list
    ledger.py merge LEDGER BATCH_OUT FS WALL REVISION
        add a batch's finished results (not those the deadline stopped or
        never reached) to the ledger, and a line to walls.tsv: the wall
        seconds, the tests, the module's git revision, the date
    ledger.py view LEDGER FS OUT
        the whole ledger as one run's results under OUT/fstests/, for
        summarize.py; prints how many of the group's tests remain
"""
import os
import sys
import time

TARGETS = ("wbthrottle", "linear")
NOT_REACHED = "not reached before the ./check deadline"


def rows_of(path):
    """Rows of a tsv file, as lists, in order; [] if there is none."""
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [line.rstrip("\n").split("\t") for line in f if line.strip()]


def write_rows(path, rows):
    with open(path + ".tmp", "w") as f:
        for r in rows:
            f.write("\t".join(r) + "\n")
    os.replace(path + ".tmp", path)


def group_tests(src, fs, group):
    """The tests of a group for fs, in fstests' order (generic, then fs)."""
    out = []
    for d in ("generic", fs):
        for r in rows_of(os.path.join(src, "tests", d, "group.list")):
            words = r[0].split()
            if words and not words[0].startswith("#") and group in words[1:]:
                out.append("%s/%s" % (d, words[0]))
    return out


def excluded(exclude_dir, series, fs):
    out = set()
    for name in ("exclude", "exclude-" + series, "exclude-" + fs,
                 "exclude-%s-%s" % (series, fs)):
        for r in rows_of(os.path.join(exclude_dir, name)):
            t = r[0].split("#", 1)[0].strip()
            if t:
                out.add(t.split()[0])
    return out


def done_tests(ledger, fs):
    return {r[0] for r in rows_of(os.path.join(ledger,
                                               "%s-wbthrottle.tsv" % fs))}


def todo(ledger, src, fs, group, series, exclude_dir):
    have = done_tests(ledger, fs) | excluded(exclude_dir, series, fs)
    return [t for t in group_tests(src, fs, group) if t not in have]


def merge(ledger, batch, fs, wall, rev):
    os.makedirs(ledger, exist_ok=True)
    n_before = len(rows_of(os.path.join(ledger, "%s-wbthrottle.tsv" % fs)))
    for tg in TARGETS:
        d = os.path.join(batch, "%s-%s" % (fs, tg))
        new = [r for r in rows_of(os.path.join(d, "results.tsv"))
               if len(r) >= 2 and r[1] != "stopped" and
               not (r[1] == "notrun" and r[3:4] == [NOT_REACHED])]
        got = {r[0] for r in new}
        path = os.path.join(ledger, "%s-%s.tsv" % (fs, tg))
        # A test run again (the control, or a batch after a lost one)
        # keeps its newest result.
        old = [r for r in rows_of(path) if r[0] not in got]
        write_rows(path, old + new)
        kpath = os.path.join(ledger, "%s-%s.kernel.tsv" % (fs, tg))
        knew = [r for r in rows_of(os.path.join(d, "kernel.tsv"))
                if r[0] in got]
        kold = [r for r in rows_of(kpath) if r[0] not in got]
        write_rows(kpath, kold + knew)
    walls = os.path.join(ledger, "walls.tsv")
    n = len(rows_of(os.path.join(ledger, "%s-wbthrottle.tsv" % fs)))
    write_rows(walls, rows_of(walls) + [[
        str(wall), str(n - n_before), rev,
        time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())]])


def view(ledger, fs, out):
    wall = sum(int(r[0]) for r in rows_of(os.path.join(ledger, "walls.tsv")))
    for tg in TARGETS:
        d = os.path.join(out, "fstests", "%s-%s" % (fs, tg))
        os.makedirs(d, exist_ok=True)
        rows = rows_of(os.path.join(ledger, "%s-%s.tsv" % (fs, tg)))
        write_rows(os.path.join(d, "results.tsv"), rows)
        write_rows(os.path.join(d, "kernel.tsv"), rows_of(
            os.path.join(ledger, "%s-%s.kernel.tsv" % (fs, tg))))
        if rows or tg == "wbthrottle":
            with open(os.path.join(d, "done"), "w") as f:
                f.write("%d\n" % wall)
    with open(os.path.join(out, "wall"), "w") as f:
        f.write("%d\n" % wall)


def main(argv):
    cmd = argv[1] if len(argv) > 1 else ""
    if cmd == "todo" and len(argv) == 8:
        for t in todo(*argv[2:8]):
            print(t)
    elif cmd == "merge" and len(argv) == 7:
        merge(argv[2], argv[3], argv[4], int(argv[5]), argv[6])
    elif cmd == "view" and len(argv) == 5:
        view(*argv[2:5])
    else:
        sys.stderr.write(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
