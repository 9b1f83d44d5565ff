#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Tables and plots from one benchmark run (tests/bench/README.md).

    report.py RESULTS_DIR

RESULTS_DIR is what tests/bench/lib-bench.sh made: bench.conf, host.txt and
raw/ (written by the guest, tests/bench/t-bench.sh). Writes
RESULTS_DIR/report/results.md (also printed), one PNG per scenario (gnuplot)
and the data files behind them. Numbers are copied from fio's JSON and the
timings; nothing is adjusted. Standard library only.
"""

import math
import os
import re
import shlex
import shutil
import statistics
import subprocess
import sys

VARIANT_ORDER = ["none", "blk-wbt", "wbthrottle"]
# Percentiles shown in the tables (fio keys are "%f" of these).
TABLE_PCTS = [50, 99, 99.9]
PLOT_PCTS = [1, 5, 10, 20, 30, 40, 50, 60, 70, 80, 90, 95, 99, 99.5, 99.9, 99.95, 99.99]
COLORS = {"none": "#d62728", "blk-wbt": "#1f77b4", "wbthrottle": "#2ca02c",
          "wbthrottle@wc_policy=delay": "#9467bd", "wbthrottle@wc_policy=off": "#ff7f0e"}

WORKLOAD_TITLE = {
    "randread": "buffered writers + random 4 KiB O_DIRECT reader",
    "seqread": "buffered writers + buffered sequential reader of a cold file",
    "fsync": "buffered writers + commit log (4 KiB write + fsync, queue depth 1)",
    "writers": "buffered writers alone",
    "rwriters": "4 random 4 KiB buffered writers alone (small writeback writes)",
    "reader": "random 4 KiB O_DIRECT reader alone (the device's floor)",
}


def kv_file(path):
    d = {}
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                line = line.rstrip("\n")
                if "=" in line:
                    k, v = line.split("=", 1)
                    d[k.strip()] = v.strip()
    return d


def variant_key(v):
    """The three base variants first; "wbthrottle@opt=val" after them."""
    return (VARIANT_ORDER.index(v) if v in VARIANT_ORDER else 99, v)


def variants_of(scdir):
    vs = [v for v in os.listdir(scdir) if os.path.isdir(os.path.join(scdir, v))]
    return sorted(vs, key=variant_key)


def scenario_parts(sc):
    """'xfs-randread@wcache_mb=0' -> ('xfs', 'randread', 'wcache_mb=0')."""
    base, _, model = sc.partition("@")
    fs, _, wl = base.partition("-")
    return fs, wl, model.replace(",", " ")


def load_log(path):
    """A latency log with Unix-epoch ms timestamps: [(issue s, completion s,
    latency ms, bytes)]. fio logs at completion; issue = completion - latency
    (commit-log.py adds the write() time in the 5th column)."""
    out = []
    with open(path) as f:
        for line in f:
            a = [x.strip() for x in line.split(",")]
            if len(a) < 4:
                continue
            done = int(a[0]) / 1000.0
            lat = int(a[1]) / 1e6
            extra = int(a[4]) / 1e6 if path.endswith("commit_clat.1.log") and len(a) > 4 else 0.0
            out.append((done - (lat + extra) / 1000.0, done, lat, int(a[3])))
    return out


def nearest_rank(sorted_vals, p):
    if not sorted_vals:
        return None
    k = max(0, math.ceil(p / 100.0 * len(sorted_vals)) - 1)
    return sorted_vals[min(k, len(sorted_vals) - 1)]


class Run:
    """One scenario x variant: the numbers the tables need.

    With writers, only the I/O the reader (or commit log) issued between
    the start of writeback and the end of the writers' sync counts; alone,
    all of it. Rates are over that window (or until the reader finished
    its file, if sooner)."""

    def __init__(self, d, wl):
        self.dir = d
        self.wl = wl
        self.setup = kv_file(os.path.join(d, "setup.txt"))
        self.writers = kv_file(os.path.join(d, "writers.txt"))
        self.phases = kv_file(os.path.join(d, "phases.txt"))
        self.status = ""
        p = os.path.join(d, "status-end.txt")
        if os.path.exists(p):
            with open(p) as f:
                self.status = f.read().strip()
        self.m = {}
        if self.writers.get("wall_s"):
            w = self.writers
            self.m["wall"] = float(w["wall_s"])
            self.m["dd"] = float(w["dd_s"])
            mb = int(w["writers"]) * int(w["writer_mb"])
            self.m["wmbs"] = mb / float(w["wall_s"])
        self.log = None
        name = "commit" if wl == "fsync" else "reader"
        lp = os.path.join(d, name + "_clat.1.log")
        if wl != "writers" and os.path.exists(lp):
            self.log = load_log(lp)
        if not self.log:
            return
        if "writeback_start" in self.phases and "sync_done" in self.writers:
            # From the cue (writeback under way) to the end of the writers'
            # sync. Time the load spent before its first logged I/O (e.g.
            # opening its cold file: metadata reads) counts in its rates.
            t0 = max(float(self.phases["writeback_start"]), float(self.phases.get("load_start", 0)))
            t1 = float(self.writers["sync_done"])
        else:
            t0 = min(x[0] for x in self.log)
            t1 = max(x[1] for x in self.log)
        sel = [x for x in self.log if t0 <= x[0] < t1]
        self.window = (t0, t1)
        if not sel:
            return
        # A reader that finished its file before the writers: up to its end.
        end = min(t1, max(x[1] for x in sel))
        if wl in ("randread", "fsync", "reader"):
            end = t1
        dur = max(end - t0, 1e-3)
        lats = sorted(x[2] for x in sel)
        self.m["n"] = len(sel)
        self.m["secs"] = dur
        self.m["iops"] = len(sel) / dur
        self.m["ops"] = len(sel) / dur
        self.m["mbs"] = sum(x[3] for x in sel) / dur / 1e6
        self.m["read_mb"] = sum(x[3] for x in sel) / 1e6
        for p in TABLE_PCTS:
            self.m["p%g" % p] = nearest_rank(lats, p)
        self.m["max"] = lats[-1]
        self.m["p_all"] = {p: nearest_rank(lats, p) for p in PLOT_PCTS}


def fmt_num(v, unit=""):
    if v is None:
        return "-"
    if v >= 100:
        s = "%.0f" % v
    elif v >= 10:
        s = "%.1f" % v
    elif v >= 1:
        s = "%.2f" % v
    else:
        s = "%.3f" % v
    return s + unit


def fmt_ratio(v, base):
    if v is None or base is None or base == 0:
        return ""
    r = v / base
    if r >= 100:
        return " (%.0f×)" % r
    if r >= 10:
        return " (%.1f×)" % r
    if r >= 0.1:
        return " (%.2f×)" % r
    return " (%.2g×)" % r  # 0.0038×, not 0.00×


# Columns per workload: (header, metric key, unit).
COLUMNS = {
    "reader": [("reads", "n", ""), ("IOPS", "iops", ""), ("MB/s", "mbs", ""), ("p50", "p50", " ms"),
               ("p99", "p99", " ms"), ("p99.9", "p99.9", " ms"), ("max", "max", " ms")],
    "seqread": [("MB read", "read_mb", ""), ("MB/s", "mbs", ""), ("p50", "p50", " ms"),
                ("p99", "p99", " ms"), ("p99.9", "p99.9", " ms"), ("max", "max", " ms")],
    "fsync": [("commits", "n", ""), ("commits/s", "ops", ""), ("fsync p50", "p50", " ms"),
              ("fsync p99", "p99", " ms"), ("fsync p99.9", "p99.9", " ms"), ("fsync max", "max", " ms")],
    "writers": [("MB/s", "wmbs", "")],
    "rwriters": [("MB/s", "wmbs", "")],
}
WRITER_COLS = [("writers' wall", "wall", " s"), ("of which dd", "dd", " s")]


def table(wl, runs):
    cols = list(COLUMNS.get(wl, COLUMNS["reader"]))
    if wl != "reader":
        cols = cols + WRITER_COLS
    base = runs.get("none")
    head = "| variant | " + " | ".join(c[0] for c in cols) + " |"
    sep = "|---|" + "---:|" * len(cols)
    lines = [head, sep]
    for v, r in runs.items():
        cells = []
        for _, key, unit in cols:
            val = r.m.get(key)
            cell = fmt_num(val, unit) if key != "n" or val is None else "%d" % val
            if base is not None and v != "none" and val is not None and key != "n":
                cell += fmt_ratio(val, base.m.get(key))
            cells.append(cell)
        lines.append("| %s | %s |" % (v, " | ".join(cells)))
    return "\n".join(lines)


def targets(runs_by_sc):
    """The targets (not asserted): one column per XFS random-reader
    scenario; writers alone and reader alone come from xfs-writers and
    xfs-reader."""

    def get(sc, v, k):
        r = runs_by_sc.get(sc, {}).get(v)
        return r.m.get(k) if r else None

    def ratio(a, b):
        return None if a is None or b in (None, 0) else a / b

    rrs = [sc for sc in runs_by_sc if sc.split("@")[0] == "xfs-randread"
           and "wbthrottle" in runs_by_sc[sc] and "none" in runs_by_sc[sc]]
    if not rrs:
        return ""
    wr, ro = "xfs-writers", "xfs-reader"

    def vs_none(key, inverse):
        def f(rr):
            a, b = get(rr, "none", key), get(rr, "wbthrottle", key)
            return ratio(b, a) if inverse else ratio(a, b)
        return f

    def vs_blkwbt(rr):
        if "blk-wbt" not in runs_by_sc[rr]:
            return None
        worse = []
        for k, better in (("iops", "hi"), ("mbs", "hi"), ("p50", "lo"), ("p99", "lo"),
                          ("p99.9", "lo"), ("max", "lo")):
            a, b = get(rr, "wbthrottle", k), get(rr, "blk-wbt", k)
            if a is not None and b is not None and \
                    ((better == "hi" and a < b) or (better == "lo" and a > b)):
                worse.append(k)
        return worse

    rows = [
        ("reader p99, none / wbthrottle", "≥ 100×", vs_none("p99", False), lambda x: x >= 100),
        ("reader p99.9, none / wbthrottle", "≥ 10×", vs_none("p99.9", False), lambda x: x >= 10),
        ("reader IOPS, wbthrottle / none", "≥ 20×", vs_none("iops", True), lambda x: x >= 20),
        ("writers' wall time, wbthrottle / none", "≤ 1.10×",
         lambda rr: ratio(get(rr, "wbthrottle", "wall"), get(rr, "none", "wall")), lambda x: x <= 1.10),
        ("writers-alone throughput, wbthrottle / none (`%s`)" % wr, "≥ 0.97×",
         lambda rr: ratio(get(wr, "wbthrottle", "wmbs"), get(wr, "none", "wmbs")), lambda x: x >= 0.97),
        ("reader figures where wbthrottle is worse than blk-wbt", "none", vs_blkwbt, lambda x: not x),
        ("reader p99 under writeback / reader alone (`%s`), wbthrottle" % ro, "≤ 2×",
         lambda rr: ratio(get(rr, "wbthrottle", "p99"), get(ro, "wbthrottle", "p99")), lambda x: x <= 2),
    ]
    out = ["| target | goal | " + " | ".join("`%s`" % rr for rr in rrs) + " |",
           "|---|---|" + "---:|" * len(rrs)]
    for what, goal, f, ok in rows:
        cells = []
        for rr in rrs:
            x = f(rr)
            if x is None:
                cells.append("-")
                continue
            if isinstance(x, list):
                txt = ", ".join(x) if x else "none"
            else:
                txt = "%.2f×" % x if x < 10 else "%.1f×" % x
            cells.append(txt if ok(x) else "**%s** (missed)" % txt)
        out.append("| %s | %s | %s |" % (what, goal, " | ".join(cells)))
    return "\n".join(out)


def run_name(sc, r):
    """The raw directory of run r of scenario sc."""
    return sc if r == 1 else "%s~%d" % (sc, r)


def held_max_ms(r):
    m = re.search(r"held_max_ns=(\d+)", r.status)
    return int(m.group(1)) / 1e6 if m else None


def spread(xs, unit):
    """'median (min-max)' of the runs that have the figure."""
    if not xs:
        return "-", None
    m = statistics.median(xs)
    return "%s (%s-%s)" % (fmt_num(m, unit), fmt_num(min(xs)), fmt_num(max(xs), unit)), m


def medians(base_scen, nruns, runs_by_sc):
    """Per scenario and variant: the median over the runs of the figure the
    workload is judged on (p99 of the reader or of fsync; the writers' MB/s
    alone), the writers' wall time, and the largest held_max; ratios are
    of medians."""
    out = ["| scenario | variant | runs | p99 or MB/s, median (min-max) | ÷ blk-wbt | ÷ none "
           "| writers' wall, median (min-max) | ÷ none | held_max, largest |",
           "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    for sc in base_scen:
        wl = scenario_parts(sc)[1]
        key, unit = ("wmbs", "") if wl in ("writers", "rwriters") else ("p99", " ms")
        per_v = {}
        for r in range(1, nruns + 1):
            for v, run in runs_by_sc.get(run_name(sc, r), {}).items():
                per_v.setdefault(v, []).append(run)
        med = {}
        rows = []
        for v in sorted(per_v, key=variant_key):
            rs = per_v[v]
            k_txt, k_med = spread([x.m[key] for x in rs if x.m.get(key) is not None], unit)
            w_txt, w_med = spread([x.m["wall"] for x in rs if x.m.get("wall") is not None], " s")
            med[v] = (k_med, w_med)
            held = [h for h in (held_max_ms(x) for x in rs) if h is not None]
            rows.append((v, len(rs), k_txt, w_txt, "%.0f ms" % max(held) if held else "-"))
        for v, n, k_txt, w_txt, held in rows:
            def rel(i, b):
                a, c = med[v][i], med.get(b, (None, None))[i]
                if v == b or a is None or not c:
                    return "-"
                # three places below 0.2: the fsync goal is 0.1× none's
                return ("%.3f×" if a < 0.2 * c else "%.2f×") % (a / c)
            out.append("| `%s` | %s | %d | %s | %s | %s | %s | %s | %s |"
                       % (sc, v, n, k_txt, rel(0, "blk-wbt"), rel(0, "none"), w_txt,
                          rel(1, "none"), held))
    return "\n".join(out)


def write_dat(path, rows):
    with open(path, "w") as f:
        for r in rows:
            f.write(" ".join(str(x) for x in r) + "\n")


def nines(p):
    return -math.log10(1 - p / 100.0) if p < 100 else 5.0


def plot(rep, sc, wl, runs, gnuplot):
    """One PNG per scenario: latency percentiles (log) and, for readers, the
    latency of every read over time."""
    safe = re.sub(r"[^A-Za-z0-9_.=-]", "_", sc)
    series = []
    for v, r in runs.items():
        pa = r.m.get("p_all")
        if not pa:
            continue
        dat = os.path.join(rep, "%s.%s.pct.dat" % (safe, v))
        rows = [(nines(p), max(lat, 1e-3), p) for p, lat in sorted(pa.items())]
        rows.append((nines(99.999), max(r.m["max"], 1e-3), "max"))
        write_dat(dat, rows)
        series.append((v, dat))
    if not series:
        return None
    traces = []
    marks = []
    xmax = 0.0
    if wl in ("randread", "seqread", "reader", "fsync"):
        for v, r in runs.items():
            if not r.log:
                continue
            t0 = float(r.writers["start"]) if r.writers.get("start") else min(x[0] for x in r.log)
            dat = os.path.join(rep, "%s.%s.trace.dat" % (safe, v))
            write_dat(dat, [("%.3f" % (x[1] - t0), "%.3f" % max(x[2], 1e-3)) for x in r.log])
            traces.append((v, dat))
            xmax = max(xmax, max(x[1] for x in r.log) - t0)
            if r.writers.get("start"):
                marks.append((v, [float(r.phases["writeback_start"]) - t0 if "writeback_start" in r.phases else None,
                                  float(r.writers["dd_done"]) - t0, float(r.writers["sync_done"]) - t0]))
                xmax = max(xmax, float(r.writers["sync_done"]) - t0)
    png = os.path.join(rep, safe + ".png")
    gp = [
        'set terminal pngcairo noenhanced size %d,480 font "sans,10"' % (1300 if traces else 700),
        'set output "%s"' % png,
        "set grid",
        "set logscale y",
        'set format y "%g"',
        'set key top left',
    ]
    if traces:
        gp.append('set multiplot layout 1,2 title "%s: %s"' % (sc, WORKLOAD_TITLE.get(wl, wl)))
    else:
        gp.append('set title "%s: %s"' % (sc, WORKLOAD_TITLE.get(wl, wl)))
    ylab = "fsync latency (ms)" if wl == "fsync" else "completion latency (ms)"
    gp += [
        'set xlabel "percentile"',
        'set ylabel "%s"' % ylab,
        'set xtics ("50" %g, "90" 1, "99" 2, "99.9" 3, "99.99" 4, "max" %g)' % (nines(50), nines(99.999)),
        "set xrange [0:%g]" % (nines(99.999) + 0.2),
        "plot " + ", ".join('"%s" using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb "%s" title "%s"'
                            % (d, COLORS.get(v, "black"), v) for v, d in series),
    ]
    if traces:
        gp += [
            "unset xtics",
            "set xtics",
            "set xrange [0:%g]" % (xmax * 1.03 + 0.1),
            'set xlabel "%s"' % ("seconds since the start" if wl == "reader" else
                                 "seconds since the writers started (lines: writeback under way, "
                                 "dd done, sync done)"),
            'set ylabel "%s"' % ("fsync latency of each commit (ms)" if wl == "fsync"
                                 else "completion latency of each read (ms)"),
            'set key top left',
        ]
        n = 0
        for v, ts in marks:
            c = COLORS.get(v, "black")
            for t, dt in zip(ts, (4, 2, 3)):
                if t is None:
                    continue
                n += 1
                gp.append('set arrow %d from %g, graph 0 to %g, graph 1 nohead lc rgb "%s" dt %d'
                          % (n, t, t, c, dt))
        gp.append("plot " + ", ".join('"%s" using 1:2 with points pt 7 ps 0.3 lc rgb "%s" title "%s"'
                                      % (d, COLORS.get(v, "black"), v) for v, d in traces))
        gp.append("unset multiplot")
    gpf = os.path.join(rep, safe + ".gp")
    with open(gpf, "w") as f:
        f.write("\n".join(gp) + "\n")
    if not gnuplot:
        return None
    res = subprocess.run([gnuplot, gpf], capture_output=True, text=True)
    if res.returncode != 0:
        sys.stderr.write("report: gnuplot failed for %s:\n%s" % (sc, res.stderr))
        return None
    return os.path.basename(png)


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: report.py RESULTS_DIR")
    top = sys.argv[1]
    raw = os.path.join(top, "raw")
    rep = os.path.join(top, "report")
    os.makedirs(rep, exist_ok=True)
    host = kv_file(os.path.join(top, "host.txt"))
    guest = kv_file(os.path.join(raw, "guest.txt"))
    # bench.conf is bash (printf %q).
    conf = {k: " ".join(shlex.split(v)) for k, v in kv_file(os.path.join(top, "bench.conf")).items()}
    gnuplot = shutil.which("gnuplot")

    nruns = int(conf.get("BENCH_RUNS") or 1)
    base_scen = [s for s in conf.get("BENCH_SCENARIOS", "").split()
                 if os.path.isdir(os.path.join(raw, s))]
    # Every run's directory: run 1 of S is raw/S, run r raw/S~r.
    scen = [run_name(s, r) for r in range(1, nruns + 1) for s in base_scen
            if os.path.isdir(os.path.join(raw, run_name(s, r)))]
    md = []
    mode = host.get("mode", "bench")
    md.append("# dm-wbthrottle %s: %s, %s" % (mode, guest.get("kernel", "?"), host.get("date", "?")))
    md.append("")
    md.append("Measured under QEMU TCG (software emulation), %s; compare the "
              "variants with each other, not the absolute times with real hardware. "
              "In parentheses: the ratio to `none`."
              % ("one run per cell" if nruns == 1 else
                 "%d runs per cell, taking turns (run 1 of every cell, then run 2 ...); "
                 "medians over the runs at the end" % nruns))
    md.append("")
    runs_by_sc = {}
    statuses = []
    for sc in scen:
        fs, wl, model = scenario_parts(sc.split("~")[0])
        scdir = os.path.join(raw, sc)
        runs = {v: Run(os.path.join(scdir, v), wl) for v in variants_of(scdir)}
        runs_by_sc[sc] = runs
        title = "%s on %s" % (WORKLOAD_TITLE.get(wl, wl), fs.upper() if fs == "xfs" else fs)
        if model:
            title += ", disk model with %s" % model
        if nruns > 1:
            title += ", run %s" % (sc.split("~")[1] if "~" in sc else "1")
        md.append("## %s (`%s`)" % (title, sc))
        md.append("")
        md.append(table(wl, runs))
        md.append("")
        png = plot(rep, sc, wl, runs, gnuplot)
        if png:
            md.append("![%s](%s)" % (sc, png))
            md.append("")
        w = runs.get("wbthrottle")
        if w and w.status:
            statuses.append((sc, w.status))
    t = targets(runs_by_sc)
    if t and mode == "bench":
        md.append("## Where we stand against the targets")
        md.append("")
        md.append("Ratios from this one run, per XFS random-reader scenario; reported, not asserted. "
                  "A missed target is in bold.")
        md.append("")
        md.append(t)
        md.append("")
    if nruns > 1:
        md.append("## Medians over %d runs" % nruns)
        md.append("")
        md.append(medians(base_scen, nruns, runs_by_sc))
        md.append("")
    if statuses:
        md.append("## `dmsetup status` of wbthrottle at the end of each run")
        md.append("")
        for sc, s in statuses:
            md.append("`%s`:" % sc)
            md.append("")
            md.append("    " + s)
            md.append("")
    md.append("## Setup")
    md.append("")
    first = None
    for sc in scen:
        for r in runs_by_sc[sc].values():
            first = first or r
    w = conf
    md.append("- kernel %s in QEMU (%s), %s vCPUs, %s MB RAM; host: %s CPUs, load %s before, %s after; %s"
              % (guest.get("kernel"), host.get("accel", "tcg"), guest.get("cpus"),
                 int(guest.get("mem_kb", "0")) // 1024, host.get("host_cpus"),
                 host.get("host_load_before"), host.get("host_load_after"), host.get("qemu")))
    md.append("- git %s (uncommitted changes to module or model: %s); dm_wbthrottle.ko sha256 %s…, "
              "wbt_diskmodel.ko sha256 %s…"
              % (host.get("git"), host.get("git_dirty"), host.get("module_sha256"), host.get("diskmodel_sha256")))
    if first:
        s = first.setup
        md.append("- lower device: wbt_diskmodel profile=%s: %s MiB, queue depth %s, %s MiB/s, access %s µs "
                  "(sequential %s µs), rotational %s, write cache %s MiB; scheduler `%s`; extra parameters: `%s`"
                  % (s.get("model.profile"), s.get("model.size_mb"), s.get("model.queue_depth"),
                     s.get("model.bw_mbps"), s.get("model.access_us"), s.get("model.seq_access_us"),
                     s.get("model.rotational"), s.get("model.wcache_mb"), s.get("lower.scheduler"),
                     w.get("BENCH_MODEL_ARGS", "")))
    all_v = sorted({v for sc in scen for v in runs_by_sc[sc]},
                   key=variant_key)
    vdesc = {
        "none": "`none` = dm-linear, the disk's wbt off (wbt_lat_usec 0)",
        "blk-wbt": "`blk-wbt` = dm-linear, the disk's own wbt at its default (wbt_lat_usec -1 → %s µs)"
        % next((r.setup.get("lower.wbt_lat_usec") for sc in scen for v, r in runs_by_sc[sc].items()
                if v == "blk-wbt"), "?"),
        "wbthrottle": "`wbthrottle` = the target over the disk, the disk's wbt off, options: %s"
        % ("`%s`" % w["BENCH_WBT_OPTS"] if w.get("BENCH_WBT_OPTS") else "defaults"),
    }
    for v in all_v:
        if "@" in v:
            vdesc[v] = "`%s` = as `wbthrottle`, plus options `%s`" % (v, v.split("@", 1)[1].replace(",", " ").replace("=", " "))
    md.append("- variants: " + "; ".join(vdesc.get(v, v) for v in all_v))
    wls = {scenario_parts(sc)[1] for sc in scen}
    if wls - {"reader"}:
        md.append("- writers: %s × `dd if=/dev/zero bs=1M count=%s` (buffered, one file each), then `sync -f`; "
                  "wall time from their start to the end of the sync"
                  % (w.get("BENCH_WRITERS"), w.get("BENCH_WRITER_MB")))
    if wls & {"randread", "reader"}:
        md.append("- random reader: fio randread bs=4k direct=1 psync iodepth=1 over a %s MB file%s"
                  % (w.get("BENCH_RFILE_MB"),
                     "; alone: %s s" % w.get("BENCH_ALONE_S") if "reader" in wls else ""))
    if "seqread" in wls:
        md.append("- sequential reader: fio read bs=128k buffered (psync), one pass over a cold %s MB file"
                  % w.get("BENCH_SEQFILE_MB"))
    if "fsync" in wls:
        md.append("- commit log: `commit-log.py`, 4 KiB pwrite + fsync in a loop over a 16 MB file; "
                  "the latency is that of fsync()")
    if wls & {"randread", "seqread", "fsync"}:
        md.append("- with writers, the reader or commit log is started and set up (its process "
                  "running, its file open) before the writers start; it begins its I/O once writeback is "
                  "under way (16 MiB "
                  "written to the disk) and the figures count only the I/O it issued from then until the "
                  "writers' sync ended; rates are over that window, including the time it took to open "
                  "its cold file (for the sequential reader, until it finished its file if sooner); "
                  "percentiles are nearest-rank over the per-I/O log (fio `write_lat_log`, completion "
                  "latency), so with few reads the high percentiles are the maximum")
    md.append("- vm: %s" % ", ".join("%s=%s" % (k[3:], v) for k, v in guest.items() if k.startswith("vm.")))
    md.append("- every run: fresh disk model (empty disk and cache), mkfs, files written O_DIRECT, "
              "drop_caches, then the workload; raw data in `raw/<scenario>/<variant>/`")
    md.append("- total runtime %s s" % host.get("runtime_s", "?"))
    md.append("")
    text = "\n".join(md)
    with open(os.path.join(rep, "results.md"), "w") as f:
        f.write(text)
    print(text)


if __name__ == "__main__":
    main()
