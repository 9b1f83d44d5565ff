#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""A database-like commit log for the benchmark (run in the guest).

    commit-log.py FILE LOG GOFILE [READYFILE]

Opens FILE, creates READYFILE (if given), waits until GOFILE exists, then
in a loop writes 4 KiB at the next offset of FILE (an existing file; wraps
at its end) and fsync()s it, one commit at a time, until SIGINT or SIGTERM.
Logs one line per commit to LOG, in the format of fio's latency logs with
Unix-epoch timestamps:

    <completion time, ms since the epoch>, <fsync ns>, 1, 4096, <write ns>

fio's own fsync latencies are only in its JSON summary, which cannot be
restricted to the time the writers ran; this log can.
"""

import os
import signal
import sys
import time


def main():
    path, log, gofile = sys.argv[1:4]
    ready = sys.argv[4] if len(sys.argv) > 4 else None
    stop = []
    signal.signal(signal.SIGINT, lambda *_: stop.append(1))
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    fd = os.open(path, os.O_WRONLY)
    size = os.fstat(fd).st_size // 4096 * 4096
    buf = os.urandom(4096)
    if ready:
        open(ready, "w").close()
    while not os.path.exists(gofile) and not stop:
        time.sleep(0.02)
    out = []
    off = 0
    while not stop:
        t0 = time.time_ns()
        os.pwrite(fd, buf, off)
        t1 = time.time_ns()
        os.fsync(fd)
        t2 = time.time_ns()
        out.append("%d, %d, 1, 4096, %d\n" % (t2 // 1000000, t2 - t1, t1 - t0))
        off = (off + 4096) % size
    os.close(fd)
    with open(log, "w") as f:
        f.writelines(out)


if __name__ == "__main__":
    main()
