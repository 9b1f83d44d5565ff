#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Self-test of the fstests harness's host-side tools (make fstests-selftest).

results.py, summarize.py and ledger.py decide whether a run of hours
counts against wbthrottle; a mistake there passes or fails CI for the
wrong reason. Each case builds the files a guest would leave, runs the
tool as run.sh does, and checks its verdict and what it wrote.
"""
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
KVER = "6.12.0-test-amd64"
failures = []


def check(cond, what):
    print("%s: %s" % ("ok" if cond else "FAIL", what))
    if not cond:
        failures.append(what)


def tool(name, *args):
    p = subprocess.run([sys.executable, os.path.join(HERE, name)] +
                       list(args), capture_output=True, text=True)
    return p.returncode, p.stdout + p.stderr


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def combo(out, fs, tg, results, kernel="", done="100\n"):
    d = os.path.join(out, KVER, "fstests", "%s-%s" % (fs, tg))
    write(os.path.join(d, "results.tsv"),
          "".join("\t".join(r) + "\n" for r in results))
    write(os.path.join(d, "kernel.tsv"),
          "".join("\t".join(r) + "\n" for r in kernel))
    if done is not None:
        write(os.path.join(d, "done"), done)


def summarize(out, *extra):
    known = os.path.join(out, "known.list")
    if not os.path.exists(known):
        write(known, "")
    rc, text = tool("summarize.py", "--sel", "t", "--fs", "xfs", "--out",
                    out, "--known", known, *extra, KVER)
    with open(os.path.join(out, KVER, "summary.md")) as f:
        return rc, text, f.read()


def line_of(md, start):
    return next((ln for ln in md.splitlines() if ln.startswith(start)), "")


def test_results_stopped():
    with tempfile.TemporaryDirectory() as d:
        write(os.path.join(d, "check.out"),
              "generic/001        5s\ngeneric/002       [not run] no\n")
        rc, text = tool("results.py", d, "124", "generic/003",
                        "generic/001", "generic/002", "generic/003",
                        "generic/004")
        rows = {ln.split("\t")[0]: ln.split("\t")[1:]
                for ln in text.splitlines()}
        check(rc == 0, "results.py: exits 0")
        check(rows.get("generic/001", [""])[0] == "pass",
              "results.py: a finished test passes")
        check(rows.get("generic/003", [""])[0] == "stopped",
              "results.py: the test the deadline killed is 'stopped'")
        check(rows.get("generic/004", ["", "", ""])[2].startswith(
              "not reached"), "results.py: a test never reached is notrun")


def test_wbt_only_failure():
    with tempfile.TemporaryDirectory() as out:
        combo(out, "xfs", "wbthrottle", [["generic/001", "fail", "3", "diff"],
                                         ["generic/002", "fail", "3", "x"]])
        combo(out, "xfs", "linear", [["generic/001", "pass", "3", ""],
                                     ["generic/002", "fail", "3", "x"]])
        rc, text, md = summarize(out)
        check(rc == 1, "summarize: a wbthrottle-only failure fails the run")
        check("generic/001" in line_of(md, "- wbthrottle-only"),
              "summarize: it is named a wbthrottle-only failure")
        check("generic/002" in line_of(md, "- fail on both"),
              "summarize: a failure on both targets is the environment's")
        check("generic/002" not in line_of(md, "- wbthrottle-only"),
              "summarize: ... and not counted against wbthrottle")


def test_known_failure():
    with tempfile.TemporaryDirectory() as out:
        write(os.path.join(out, "known.list"), "generic/001 # why\n")
        combo(out, "xfs", "wbthrottle", [["generic/001", "fail", "3", "x"]])
        combo(out, "xfs", "linear", [["generic/001", "pass", "3", ""]])
        rc, text, md = summarize(out)
        check(rc == 0, "summarize: a known failure does not fail the run")
        check("generic/001" in line_of(md, "- known wbthrottle"),
              "summarize: it is reported as known")


def test_stall_is_environment():
    with tempfile.TemporaryDirectory() as out:
        hung = "INFO: task kworker/0:1:11 blocked for more than 30 seconds."
        stall = "nvme nvme0: I/O tag 365 (316d) opcode 0x1 (I/O Cmd) QID 1 timeout, aborting"
        combo(out, "xfs", "linear", [["generic/113", "pass", "29", ""],
                                     ["generic/114", "pass", "4", ""]])
        combo(out, "xfs", "wbthrottle", [["generic/113", "pass", "40", ""]],
              kernel=[["generic/113", hung, stall]])
        rc, text, md = summarize(out)
        check(rc == 1 and "run it again" in md,
              "summarize: a hung task during a disk I/O timeout fails the run")
        combo(out, "xfs", "wbthrottle",
              [["generic/113", "pass", "40", ""], ["generic/114", "pass", "4", ""]],
              kernel=[["generic/113", hung, stall], ["generic/114", hung]])
        write(os.path.join(out, KVER, "results"),
              "FAIL 10-xfs-wbthrottle: kernel log\n    " + hung + "\n")
        rc, text, md = summarize(out)
        check(rc == 1, "summarize: a hung task still fails the run")
        check("generic/113" in line_of(md, "- a hung task over wbthrottle only"),
              "summarize: a hung task during a disk I/O timeout is the environment's")
        wo = line_of(md, "- wbthrottle-only")
        check("generic/113" not in wo and "generic/114" in wo,
              "summarize: ... and only a hung task without one counts against wbthrottle")
        check("I/O tag 365" in md,
              "summarize: the disk's timeout is quoted beside the hung task")


def test_control_trouble():
    with tempfile.TemporaryDirectory() as out:
        hung = "INFO: task fio:99 blocked for more than 30 seconds."
        combo(out, "xfs", "wbthrottle", [["generic/757", "pass", "30", ""],
                                         ["generic/001", "fail", "3", "x"]])
        combo(out, "xfs", "linear", [["generic/757", "stopped", "960", "k"],
                                     ["generic/001", "notrun", "0", "n"]],
              kernel=[["generic/757", hung, "", "schedule < io_schedule"]])
        write(os.path.join(out, KVER, "results"),
              "FAIL 11-xfs-linear: kernel log\n    " + hung + "\n")
        rc, text, md = summarize(out)
        check(rc == 1 and "generic/001" in line_of(md, "- wbthrottle-only"),
              "summarize: a control in trouble still counts wbthrottle's failures")
        combo(out, "xfs", "wbthrottle", [["generic/757", "pass", "30", ""],
                                         ["generic/001", "pass", "3", ""]])
        rc, text, md = summarize(out)
        check(rc == 0, "summarize: a hung task or a stop in the control "
              "alone does not fail the run")
        ct = line_of(md, "- trouble in the dm-linear control")
        check("11-xfs-linear" in ct and "generic/757 stopped" in ct,
              "summarize: ... it is reported as the control's trouble")
        check("schedule < io_schedule" in md and "io_schedule" in text,
              "summarize: the hung task's call trace is shown")
        os.remove(os.path.join(out, KVER, "fstests", "xfs-wbthrottle",
                               "done"))
        rc, text, md = summarize(out)
        check(rc == 1, "summarize: trouble over wbthrottle still fails the run")


def test_stopped_batch():
    with tempfile.TemporaryDirectory() as out:
        combo(out, "xfs", "wbthrottle", [["generic/001", "pass", "3", ""],
                                         ["generic/002", "stopped", "0", "k"]])
        combo(out, "xfs", "linear", [])
        rc, text, md = summarize(out, "--control-failed")
        check(rc == 1, "summarize: a stopped test fails a run")
        check("did not finish" in md, "summarize: ... as one that did not finish")
        rc, text, md = summarize(out, "--control-failed", "--batch")
        check(rc == 0, "summarize --batch: a stopped test ends a batch, no failure")
        check("| 1 | 0 | 0 | 1 |" in md,
              "summarize: the stopped test has its own column")


def test_ledger():
    with tempfile.TemporaryDirectory() as d:
        src, led, batch = (os.path.join(d, x) for x in ("src", "led", "b"))
        write(os.path.join(src, "tests", "generic", "group.list"),
              "# comment\n001 auto quick\n002 auto\n003 auto quick rw\n"
              "004 quick\n005 quick\n")
        write(os.path.join(src, "tests", "xfs", "group.list"), "001 quick\n")
        excl = os.path.join(d, "excl")
        write(os.path.join(excl, "exclude-6.12-xfs"), "generic/005 # why\n")
        rc, text = tool("ledger.py", "todo", led, src, "xfs", "quick",
                        "6.12", excl)
        check(text.split() == ["generic/001", "generic/003", "generic/004",
                               "xfs/001"],
              "ledger todo: the group in order, less the excluded")
        for tg in ("wbthrottle", "linear"):
            write(os.path.join(batch, "xfs-" + tg, "results.tsv"),
                  "generic/001\tpass\t3\t\ngeneric/003\tstopped\t0\tk\n"
                  "generic/004\tnotrun\t0\tnot reached before the ./check deadline\n")
            write(os.path.join(batch, "xfs-" + tg, "kernel.tsv"),
                  "generic/001\tINFO: x\tnvme: y\n")
        rc, text = tool("ledger.py", "merge", led, batch, "xfs", "60", "abc")
        check(rc == 0, "ledger merge: exits 0")
        rc, text = tool("ledger.py", "todo", led, src, "xfs", "quick",
                        "6.12", excl)
        check(text.split() == ["generic/003", "generic/004", "xfs/001"],
              "ledger merge: keeps what finished, not what was stopped or never reached")
        with open(os.path.join(led, "xfs-wbthrottle.kernel.tsv")) as f:
            check(f.read() == "generic/001\tINFO: x\tnvme: y\n",
                  "ledger merge: keeps the kernel lines, all columns")
        with open(os.path.join(led, "walls.tsv")) as f:
            w = f.read().split("\t")
        check(w[:3] == ["60", "1", "abc"],
              "ledger merge: records the wall, the tests and the revision")


def main():
    for name, fn in sorted(globals().items()):
        if name.startswith("test_") and callable(fn):
            fn()
    print("fstests-selftest: %s" % (
        "%d failed" % len(failures) if failures else "passed"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
