#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Compare fstests over wbthrottle with the dm-linear control.

Reads what tests/fstests/guest-run.sh left in OUT/KVER/fstests/FS-TARGET/
(results.tsv, kernel.tsv, done) and the harness lines of tests/vm/run.sh
(OUT/KVER/results, and results.wbthrottle when the control ran in a second
boot), writes OUT/KVER/summary.md and prints the verdict. Exit status 1 on
a wbthrottle-only failure not listed in known.list, on a harness
failure (hung task or kernel warning, timeout, a combination that did not
finish) not explained by a known test, on a missing combination, and on a
test stopped by ./check's deadline (status "stopped": the run ran out of
time; reported apart from failures, since it says nothing of the target).
A test whose only failure is a kernel complaint (a hung task) that came
with an I/O timeout of the lower disk is not counted against wbthrottle:
the requests had left the target, and the emulated disk did not complete
them. It still fails the run (run the test again), as every hung task
does.

Trouble in the dm-linear control alone (a hung task, a warning, a test
stopped by the deadline, a control combination that did not finish) is
reported but does not fail the run: wbthrottle is not in that I/O path,
and a control that did not give a clean answer can only count more of
wbthrottle's failures against it, never fewer (a test that failed over
wbthrottle counts unless it failed over dm-linear too).
"""
import argparse
import os
import re
import sys
import time

TARGETS = ("linear", "wbthrottle")


def read_tsv(path):
    rows = []
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                rows.append(line.rstrip("\n").split("\t"))
    return rows


def read_list(path):
    out = set()
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                line = line.split("#", 1)[0].strip()
                if line:
                    out.add(line.split()[0])
    return out


def harness_fails(path):
    """FAIL blocks of tests/vm/run.sh results: {name: [detail lines]}."""
    fails, cur = {}, None
    if not os.path.exists(path):
        return fails
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            m = re.match(r"^FAIL (\S+?)(:.*)?$", line)
            if m:
                cur = m.group(1)
                fails[cur] = [m.group(2)[2:]] if m.group(2) else []
            elif line.startswith("    ") and cur:
                fails[cur].append(line.strip())
            else:
                cur = None
    return fails


def combo_of(name):
    """Harness test name (10-xfs-linear) to combination (xfs-linear)."""
    return re.sub(r"^\d+-", "", name)


def cell(r):
    if r is None:
        return "-"
    st, secs = r["status"], r["secs"]
    txt = st if st == "notrun" else "%s %ss" % (st, secs)
    if r["kernel"]:
        txt += " (kernel log)"
    return txt


def kernel_report(args, kver, known):
    out = os.path.join(args.out, kver)
    fss = args.fs.split()
    res, walls, missing = {}, {}, []
    for fs in fss:
        for tg in TARGETS:
            d = os.path.join(out, "fstests", "%s-%s" % (fs, tg))
            rows = {}
            for r in read_tsv(os.path.join(d, "results.tsv")):
                t, st, secs, why = (r + [""] * 4)[:4]
                rows[t] = {"status": st, "secs": secs, "why": why,
                           "kernel": "", "stall": ""}
            for r in read_tsv(os.path.join(d, "kernel.tsv")):
                if len(r) < 2:
                    continue
                t = r[0]
                rows.setdefault(t, {"status": "fail", "secs": "?",
                                    "why": "", "kernel": "", "stall": ""})
                rows[t]["kernel"] = r[1]
                rows[t]["stall"] = r[2] if len(r) > 2 else ""
                rows[t]["trace"] = r[3] if len(r) > 3 else ""
            if os.path.exists(os.path.join(d, "done")):
                with open(os.path.join(d, "done")) as f:
                    walls[(fs, tg)] = f.read().strip()
            elif rows or tg == "wbthrottle" or not args.control_failed:
                missing.append("%s-%s" % (fs, tg))
            res[(fs, tg)] = rows

    # harness failures (per combination), from both boots
    hfails = harness_fails(os.path.join(out, "results"))
    hfails.update(harness_fails(os.path.join(out, "results.wbthrottle")))

    bad, notes, ctl_trouble = [], [], []
    wbt_only, known_hit, both, ctl_only, stalled = [], [], [], [], []
    for fs in fss:
        w, l = res[(fs, "wbthrottle")], res[(fs, "linear")]
        for t in sorted(w):
            wf = w[t]["status"] == "fail" or w[t]["kernel"]
            if not wf:
                continue
            lr = l.get(t)
            lf = lr is not None and (lr["status"] == "fail" or lr["kernel"])
            if lr is None and args.control_failed:
                desc = "control not run"
            elif lr is None:
                desc = "control missing"
            else:
                desc = None
            if lf:
                both.append((fs, t))
            elif w[t]["status"] != "fail" and w[t]["stall"]:
                stalled.append((fs, t))
            elif t in known:
                known_hit.append((fs, t, desc))
            else:
                wbt_only.append((fs, t, desc))
        for t in sorted(l):
            lf = l[t]["status"] == "fail" or l[t]["kernel"]
            wr = w.get(t)
            if lf and wr and not (wr["status"] == "fail" or wr["kernel"]):
                ctl_only.append((fs, t))
    for fs, t, desc in wbt_only:
        bad.append("wbthrottle-only failure: %s %s%s" %
                   (fs, t, " (%s)" % desc if desc else ""))
    for fs, t in stalled:
        bad.append("hung task over wbthrottle during an I/O timeout of the "
                   "lower disk: %s %s (the environment's; run it again)" %
                   (fs, t))
    for name, lines in sorted(hfails.items()):
        combo = combo_of(name)
        fs_tg = tuple(combo.split("-", 1)) if "-" in combo else None
        why = "; ".join(lines[:3])
        # A combination the harness failed only for a kernel complaint
        # during a known test is reported, not counted.
        if fs_tg in res and fs_tg[1] == "wbthrottle" and combo not in missing:
            ktests = {t for t, r in res[fs_tg].items() if r["kernel"]}
            other = [x for x in lines if x.startswith(("exit status",
                     "timed out", "left ", "test process"))]
            if ktests and ktests <= known and not other:
                notes.append("harness FAIL %s (kernel log during %s: known, "
                             "known.list)" % (name, ", ".join(sorted(ktests))))
                continue
        if fs_tg and fs_tg[1] == "linear":
            ctl_trouble.append("harness FAIL %s: %s" % (name, why))
            continue
        bad.append("harness FAIL %s: %s" % (name, why))
    for m in missing:
        msg = "combination %s did not finish (no done file)" % m
        (ctl_trouble if m.endswith("-linear") else bad).append(msg)
    stopped = [(fs, tg, t) for (fs, tg), rows in sorted(res.items())
               for t, r in sorted(rows.items()) if r["status"] == "stopped"]
    for fs, tg, t in stopped:
        msg = ("%s %s did not finish: %s stopped by the ./check deadline "
               "(not a test failure; FSTESTS_TEST_TIMEOUT)" % (fs, tg, t))
        if tg == "linear" and not args.batch:
            ctl_trouble.append(msg)
        else:
            (notes if args.batch else bad).append(msg)

    # summary.md
    wall = "?"
    if os.path.exists(os.path.join(out, "wall")):
        with open(os.path.join(out, "wall")) as f:
            wall = f.read().strip()
    L = []
    L.append("# fstests `%s` on %s\n" % (args.sel, kver))
    L.append("Recorded %s by `tests/fstests/run.sh`; fstests from `%s`. "
             "Whole run for this kernel (boots included): %s s wall. "
             "TEST_DEV, SCRATCH_DEV and LOGWRITES_DEV over three "
             "partitions of the QEMU virtio-scsi disk, "
             "each under a `wbthrottle` device or, as the control, a "
             "`linear` one.%s\n" %
             (time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
              args.tarball, wall,
              " The control ran only the tests that failed over "
              "wbthrottle (the default; run.sh -C runs it all)." if args.control_failed else ""))
    L.append("| kernel | fs | target | pass | fail | notrun | "
             "stopped | tests' seconds | ./check wall (s) |")
    L.append("|---|---|---|---:|---:|---:|---:|---:|---:|")
    for fs in fss:
        for tg in TARGETS:
            rows = res[(fs, tg)].values()
            n = {s: 0 for s in ("pass", "fail", "notrun", "stopped")}
            secs = 0
            for r in rows:
                st = "fail" if r["kernel"] else r["status"]
                n[st] = n.get(st, 0) + 1
                try:
                    secs += int(r["secs"])
                except ValueError:
                    pass
            w = walls.get((fs, tg))
            if w is None:
                w = "did not finish"
                if tg == "linear" and args.control_failed and not rows:
                    w = "not needed"
            L.append("| %s | %s | %s | %d | %d | %d | %d | %d | %s |" %
                     (kver, fs, tg, n["pass"], n["fail"], n["notrun"],
                      n["stopped"], secs, w))
    L.append("")
    L.append("## Verdict\n")
    L.append("- wbthrottle-only failures (fail over wbthrottle, pass over "
             "dm-linear): %s" % (", ".join(
                 "%s %s%s" % (fs, t, " (%s)" % d if d else "")
                 for fs, t, d in wbt_only) or "none"))
    L.append("- known wbthrottle failures (known.list; reported, not "
             "counted): %s" % (", ".join(
                 "%s %s%s" % (fs, t, " (%s)" % d if d else "")
                 for fs, t, d in known_hit) or "none"))
    L.append("- fail on both targets (environment, candidates for "
             "`exclude`): %s" %
             (", ".join("%s %s" % x for x in both) or "none"))
    L.append("- fail over dm-linear only: %s" %
             (", ".join("%s %s" % x for x in ctl_only) or "none"))
    L.append("- a hung task over wbthrottle only, during an I/O timeout of "
             "the lower disk (environment: the emulated disk held requests "
             "that had left the target): %s" %
             (", ".join("%s %s" % x for x in stalled) or "none"))
    L.append("- trouble in the dm-linear control only (wbthrottle is not "
             "in its I/O path; reported, not counted: it excuses no "
             "wbthrottle failure): %s" % ("; ".join(ctl_trouble) or "none"))
    for b in bad:
        L.append("- **%s**" % b)
    for n_ in notes:
        L.append("- %s" % n_)
    left = os.path.join(out, "remaining")
    if os.path.exists(left):
        with open(left) as f:
            n_left = f.read().strip()
        L.append("- not run yet: %s of the group's tests (run in batches, "
                 "`run.sh -R`; the seconds are the batches' sum)" % n_left)
    L.append("- result: **%s**\n" % ("FAILED" if bad else "PASSED"))

    series = ".".join(kver.split(".")[:2])
    excl = []
    here = os.path.dirname(os.path.abspath(__file__))
    for name in ["exclude", "exclude-" + series] + [
            "exclude-%s" % fs for fs in fss] + [
            "exclude-%s-%s" % (series, fs) for fs in fss]:
        for t in sorted(read_list(os.path.join(here, name))):
            excl.append("%s (`%s`)" % (t, name))
    L.append("Excluded (not run; the reasons are in the files): %s\n" %
             (", ".join(excl) or "none"))

    klines = [(fs, tg, t, r["kernel"], r["stall"], r.get("trace", ""))
              for (fs, tg), rows in res.items()
              for t, r in sorted(rows.items()) if r["kernel"]]
    if klines:
        L.append("## Kernel log during tests (first bad line each)\n")
        for fs, tg, t, line, stall, trace in klines:
            L.append("- %s %s %s: `%s`%s%s" % (
                fs, tg, t, line.replace("`", "'"),
                "; the lower disk timed out I/O during the test: `%s`" %
                stall.replace("`", "'") if stall else "",
                "; call trace: `%s`" % trace if trace else ""))
        L.append("")

    tests = sorted({t for rows in res.values() for t in rows})
    L.append("## Per test\n")
    hdr = ["test"] + ["%s %s" % (fs, tg) for fs in fss for tg in TARGETS]
    L.append("| " + " | ".join(hdr) + " |")
    L.append("|" + "---|" * len(hdr))
    for t in tests:
        L.append("| " + " | ".join(
            [t] + [cell(res[(fs, tg)].get(t)) for fs in fss
                   for tg in TARGETS]) + " |")
    L.append("")
    fails = [(fs, tg, t, r["why"]) for (fs, tg), rows in res.items()
             for t, r in sorted(rows.items())
             if r["status"] in ("fail", "stopped") and r["why"]]
    if fails:
        L.append("## Failure messages\n")
        for fs, tg, t, why in fails:
            L.append("- %s %s %s: %s" % (fs, tg, t, why))
        L.append("")
    reasons = {}
    for (fs, tg), rows in res.items():
        for t, r in rows.items():
            if r["status"] == "notrun":
                reasons.setdefault((t, r["why"]), []).append(
                    "%s %s" % (fs, tg))
    if reasons:
        L.append("## Not run, and why\n")
        for (t, why), where in sorted(reasons.items()):
            L.append("- %s (%s): %s" % (t, ", ".join(sorted(where)), why))
        L.append("")
    with open(os.path.join(out, "summary.md"), "w") as f:
        f.write("\n".join(L))

    for fs in fss:
        for tg in TARGETS:
            rows = res[(fs, tg)].values()
            c = {s: sum(1 for r in rows if (("fail" if r["kernel"] else
                                             r["status"]) == s))
                 for s in ("pass", "fail", "notrun", "stopped")}
            print("[%s] fstests %s %-10s pass %d fail %d notrun %d "
                  "stopped %d, ./check %ss" %
                  (kver, fs, tg, c["pass"], c["fail"], c["notrun"],
                   c["stopped"], walls.get((fs, tg), "-")))
    for fs, tg, t, line, stall, trace in klines:
        print("[%s] fstests: kernel log, %s %s %s: %s%s%s" % (
            kver, fs, tg, t, line, " [disk: %s]" % stall if stall else "",
            " [trace: %s]" % trace if trace else ""))
    for c in ctl_trouble:
        print("[%s] fstests: control only (not counted): %s" % (kver, c))
    for b in bad:
        print("[%s] fstests: %s" % (kver, b))
    for n_ in notes:
        print("[%s] fstests: %s" % (kver, n_))
    for fs, t, d in known_hit:
        print("[%s] fstests: known (known.list): %s %s" % (kver, fs, t))
    return not bad


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sel", required=True)
    ap.add_argument("--fs", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--known", required=True)
    ap.add_argument("--tarball", default="?")
    ap.add_argument("--control-failed", action="store_true")
    # a batch of run.sh -R: its deadline is how it ends
    ap.add_argument("--batch", action="store_true")
    ap.add_argument("kvers", nargs="+")
    args = ap.parse_args()
    known = read_list(args.known)
    ok = True
    for k in args.kvers:
        ok = kernel_report(args, k, known) and ok
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
