#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Self-test of the bench's host side (make bench-selftest).

The push-back goals are judged on report.py's medians over RUNS runs and
lib-bench.sh decides how many runs a boot does; a mistake there reports
numbers nobody measured. Each case builds the raw files a guest would
leave, runs the tool, and checks what it wrote.
"""
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
failures = []


def check(cond, what):
    print("%s: %s" % ("ok" if cond else "FAIL", what))
    if not cond:
        failures.append(what)


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def cell(top, name, variant, wall_s, fsync_ms=None, held_ns=None):
    """One run of one variant: the writers' times, a commit log of one
    fsync (its p99 is that fsync), the status line."""
    d = os.path.join(top, "raw", name, variant)
    write(os.path.join(d, "writers.txt"),
          "writers=1\nwriter_mb=10\ndd_s=1.0\nwall_s=%s\n" % wall_s)
    if fsync_ms is not None:
        write(os.path.join(d, "commit_clat.1.log"),
              "1000000, %d, 1, 4096\n" % (fsync_ms * 1000000))
    if held_ns is not None:
        write(os.path.join(d, "status-end.txt"),
              "0 8 wbthrottle held_max_ns=%d\n" % held_ns)


def report(top):
    p = subprocess.run([sys.executable, os.path.join(HERE, "report.py"), top],
                       capture_output=True, text=True)
    return p.returncode, p.stdout + p.stderr


def row(md, sc, variant):
    m = re.search(r"^\| `%s` \| %s \|.*$" % (re.escape(sc), re.escape(variant)),
                  md, re.M)
    return [c.strip() for c in m.group(0).strip("|").split("|")] if m else None


def test_medians():
    with tempfile.TemporaryDirectory() as top:
        write(os.path.join(top, "bench.conf"),
              "BENCH_SCENARIOS='ext4-writers ext4-fsync'\nBENCH_RUNS=3\n")
        runs = {1: "", 2: "~2", 3: "~3"}
        # MB/s 10 MB / wall: 10, 5, 2.5 -> median 5
        for r, wall in ((1, 1.0), (2, 2.0), (3, 4.0)):
            cell(top, "ext4-writers" + runs[r], "wbthrottle", wall,
                 held_ns=(100, 700, 300)[r - 1] * 1000000)
        for r in (1, 2, 3):
            cell(top, "ext4-fsync" + runs[r], "none", 10.0,
                 fsync_ms=(1000, 2000, 3000)[r - 1])
            cell(top, "ext4-fsync" + runs[r], "blk-wbt", 10.0,
                 fsync_ms=300)
            cell(top, "ext4-fsync" + runs[r], "wbthrottle",
                 (11.0, 12.0, 13.0)[r - 1], fsync_ms=(100, 150, 900)[r - 1])
        rc, out = report(top)
        check(rc == 0, "report.py over 3 runs exits 0 (%d)" % rc)
        check("## Medians over 3 runs" in out, "a section of medians")
        check("run 3 (`ext4-fsync~3`)" in out, "run 3 has its own table")
        w = row(out, "ext4-writers", "wbthrottle")
        check(w is not None and w[2] == "3" and w[3] == "5.00 (2.50-10.0)",
              "writers-alone MB/s: median and range of 3 runs (%s)" % w)
        check(w is not None and w[8] == "700 ms", "largest held_max (%s)" % w)
        f = row(out, "ext4-fsync", "wbthrottle")
        check(f is not None and f[3] == "150 ms (100-900 ms)",
              "fsync p99: median and range (%s)" % f)
        check(f is not None and f[4] == "0.50×" and f[5] == "0.075×",
              "ratios of medians, three places under 0.2× (%s)" % f)
        check(f is not None and f[6] == "12.0 s (11.0-13.0 s)" and
              f[7] == "1.20×", "writers' wall median and ratio (%s)" % f)


def test_one_run_no_medians():
    with tempfile.TemporaryDirectory() as top:
        write(os.path.join(top, "bench.conf"), "BENCH_SCENARIOS=ext4-writers\n")
        cell(top, "ext4-writers", "wbthrottle", 1.0)
        cell(top, "ext4-writers~2", "wbthrottle", 9.0)	# not asked for
        rc, out = report(top)
        check(rc == 0 and "## Medians" not in out and "~2" not in out,
              "without RUNS: one run per cell, no medians")


def test_runs_must_be_a_count():
    for bad in ("0", "x", "-1"):
        with tempfile.TemporaryDirectory() as top:
            out = os.path.join(top, "out")
            p = subprocess.run(
                ["bash", "-c", '. "$1/lib-bench.sh"; BENCH_MODE=bench; bench_main',
                 "-", HERE], env=dict(os.environ, KVER="none", RUNS=bad, OUT=out),
                capture_output=True, text=True)
            check(p.returncode == 2 and "RUNS must be" in p.stderr and
                  not os.path.exists(out),
                  "RUNS=%s refused before anything runs" % bad)


def main():
    test_medians()
    test_one_run_no_medians()
    test_runs_must_be_a_count()
    if failures:
        print("bench-selftest: %d failed" % len(failures))
        sys.exit(1)
    print("bench-selftest: all passed")


if __name__ == "__main__":
    main()
