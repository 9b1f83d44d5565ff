#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""The CPU-cost benchmark's table (make bench-cpu, tests/bench/cpucost.sh).

    cpucost.py RESULTS_DIR

Reads RESULTS_DIR/raw/cpucost/ROUND-WORKLOAD-TARGET-N.json (fio; each
round runs the targets in mirrored order: linear, wbthrottle, blkwbt,
blkwbt, wbthrottle, linear) and writes RESULTS_DIR/results.md (also
printed): per workload, each round's sums per target, the ratios to
dm-linear, and the median ratio of wbthrottle against the target; blkwbt
(dm-linear over the disk with its own blk-wbt on), where it ran, beside
it. Numbers are copied from fio; nothing is adjusted.
"""

import json
import os
import re
import statistics
import sys

WORKLOADS = [
    # name, what, unit, target ratio
    ("randread", "4 KiB O_DIRECT random read, QD 32 x 1 job/CPU", "IOPS", 0.95),
    ("randwrite", "4 KiB O_DIRECT random write, QD 32 x 1 job/CPU", "IOPS", 0.95),
    ("seqwrite", "buffered sequential write, 1 MiB, end_fsync", "MB/s", 0.97),
]


def kv_file(path):
    d = {}
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                if "=" in line:
                    k, v = line.rstrip("\n").split("=", 1)
                    d[k] = v
    return d


def measure(path, workload):
    with open(path) as f:
        job = json.load(f)["jobs"][0]
    side = job["read"] if workload == "randread" else job["write"]
    value = side["iops"] if workload != "seqwrite" else side["bw_bytes"] / 1e6
    return value, job.get("sys_cpu", 0.0)


def main():
    out = sys.argv[1]
    raw = os.path.join(out, "raw", "cpucost")
    runs = {}
    for name in os.listdir(raw):
        m = re.match(r"(\d+)-(\w+)-(linear|wbthrottle|blkwbt)-\d+\.json$", name)
        if m:
            key = (int(m.group(1)), m.group(2), m.group(3))
            value, cpu = measure(os.path.join(raw, name), m.group(2))
            old = runs.get(key, (0.0, []))
            runs[key] = (old[0] + value, old[1] + [cpu])
    host = kv_file(os.path.join(out, "host.txt"))
    setup = kv_file(os.path.join(raw, "setup.txt"))
    blk = any(t == "blkwbt" for (_, _, t) in runs)
    lines = ["# CPU cost: dm-linear vs wbthrottle on null_blk", ""]
    lines.append("Kernel %s, git %s (dirty: %s), %s, host CPUs %s, host load "
                 "before/after %s / %s." % (
                     host.get("kver"), host.get("git"), host.get("git_dirty"),
                     host.get("accel"), host.get("host_cpus"),
                     host.get("host_load_before"), host.get("host_load_after")))
    lines.append("Guest: %s CPUs, %s, scheduler %s, no blk-wbt but in "
                 "blkwbt's runs (%s); %s; %s." % (
                     setup.get("ncpu"), setup.get("lower"),
                     setup.get("scheduler"),
                     kv_file(os.path.join(raw, "blkwbt.txt")).get(
                         "blkwbt_lat_usec", "-") + " us" if blk else "none",
                     setup.get("fio"), setup.get("rounds")))
    lines.append("Same boot; each round runs the targets in mirrored order "
                 "(%s, then back) and compares the sums of each target's two "
                 "runs. Emulated (TCG): compare the ratios, not the absolute "
                 "numbers." % setup.get("targets", "linear wbthrottle"))
    if host.get("icount"):
        lines.append("Clock: instructions (QEMU -icount shift=%s,sleep=off: "
                     "%d ns of guest time per instruction, idle skipped), so "
                     "a ratio is one of instructions per I/O and repeats to "
                     "about 0.1%%; cache misses and lock contention of a "
                     "real CPU are not in it." % (
                         host["icount"], 1 << int(host["icount"])))
    else:
        lines.append("Clock: the host's (no -icount): rounds swing with "
                     "the emulator and the host's load.")
    lines.append("")
    lines.append("| workload | unit | median wbthrottle / linear | target | "
                 "median blkwbt / linear | rounds: linear / wbthrottle%s, "
                 "sums of two runs (ratios) | sys CPU %% linear / "
                 "wbthrottle%s (median) |" % ((" / blkwbt",) * 2 if blk else ("", "")))
    lines.append("|---|---|---:|---:|---:|---|---|")
    met = True
    for w, what, unit, target in WORKLOADS:
        rounds = sorted({r for (r, ww, _) in runs if ww == w})
        ratios, bratios, cells = [], [], []
        cpu = {"linear": [], "wbthrottle": [], "blkwbt": []}
        for r in rounds:
            lin = runs.get((r, w, "linear"))
            wbt = runs.get((r, w, "wbthrottle"))
            bw = runs.get((r, w, "blkwbt"))
            if not lin or not wbt or not lin[0]:
                continue
            ratios.append(wbt[0] / lin[0])
            cpu["linear"].extend(lin[1])
            cpu["wbthrottle"].extend(wbt[1])
            if bw:
                bratios.append(bw[0] / lin[0])
                cpu["blkwbt"].extend(bw[1])
                cells.append("%.0f / %.0f / %.0f (%.2f, %.2f)" % (
                    lin[0], wbt[0], bw[0], wbt[0] / lin[0], bw[0] / lin[0]))
            else:
                cells.append("%.0f / %.0f (%.2f)" % (lin[0], wbt[0],
                                                     wbt[0] / lin[0]))
        if not ratios:
            lines.append("| %s | %s | no data | %.2f | | | |" % (w, unit, target))
            met = False
            continue
        med = statistics.median(ratios)
        met = met and med >= target
        cpus = " / ".join("%.1f" % statistics.median(cpu[t])
                          for t in ("linear", "wbthrottle", "blkwbt") if cpu[t])
        lines.append("| %s: %s | %s | **%.3f** | %.2f | %s | %s | %s |" % (
            w, what, unit, med, target,
            "%.3f" % statistics.median(bratios) if bratios else "-",
            "; ".join(cells), cpus))
    lines.append("")
    lines.append("Targets %s." % ("met" if met else "not all met"))
    status = os.path.join(raw, "status-wbthrottle.txt")
    if os.path.exists(status):
        with open(status) as f:
            st = f.read().strip()
        keep = [kv for kv in st.split() if re.match(
            r"(n_\w+|\w+_throttled|slept|deferred_total|held_max_ns)=", kv)]
        lines.append("")
        lines.append("wbthrottle status afterwards: `%s`" % " ".join(keep))
    text = "\n".join(lines) + "\n"
    with open(os.path.join(out, "results.md"), "w") as f:
        f.write(text)
    sys.stdout.write(text)


if __name__ == "__main__":
    main()
