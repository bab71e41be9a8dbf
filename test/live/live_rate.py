#!/usr/bin/env python3
"""live_rate.py — the rate view of `jfrstream tail` shows what arrives now.

A folder already holds N chunk files (copies of test/data/workload.jfr, 596
events each, the final flag cleared): the tail reads them at once, a replay.
Then one more copy arrives every 0.5 s (1,192 events/s). The plain view
(one line a second) must count the replay apart (`replayed=N*596`) and never
show it as a rate: every line's rate stays under twice the trickle's, and
once the trickle runs the rate is the trickle's (within 40 %). No JVM.

    test/live/live_rate.py JFRSTREAM

Exit 0 pass, 1 fail.
"""
import os
import re
import shutil
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import livelib as L  # noqa: E402

NAME = "live-rate"
EVENTS = 596          # events of workload.jfr (its stored print --json)
PERIOD = 0.5          # s between two arriving chunk files
ARRIVING = 12
RATE = EVENTS / PERIOD
LINE = re.compile(r"^t=(\d+)s files=\d+ events=(\d+)(?: replayed=(\d+))? rate=([0-9.]+)/s")


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    js = L.cli(sys.argv[1])
    wrapped = bool(os.environ.get("JFRSTREAM_TEST_WRAPPER"))
    work = tempfile.mkdtemp(prefix="jfrstream-live-rate-")
    fails = []

    def check(cond, what):
        L.log("  %s: %s" % ("ok" if cond else "FAIL", what))
        if not cond:
            fails.append(what)

    try:
        with open(os.path.join(L.ROOT, "test", "data", "workload.jfr"), "rb") as f:
            chunk = bytearray(f.read())
        chunk[67] &= ~2 & 0xff  # not the final chunk: the tail goes on
        repo = os.path.join(work, "repo")
        os.mkdir(repo)
        n = L.scale(50, 5)
        for i in range(n):
            with open(os.path.join(repo, "%05d.jfr" % i), "wb") as f:
                f.write(chunk)
        p = L.start([js, "tail", "--idle", "4", repo])
        out, err = L.Lines(p.stdout), L.Lines(p.stderr)
        replayed = n * EVENTS
        m = out.wait_for(r"events=%d replayed=%d " % (replayed, replayed), 60)
        check(m is not None, "the %d chunk files on disk: replayed=%d" % (n, replayed))
        for i in range(ARRIVING):
            tmp = os.path.join(repo, "incoming.tmp")
            with open(tmp, "wb") as f:
                f.write(chunk)
            os.rename(tmp, os.path.join(repo, "%05d.jfr" % (n + i)))
            time.sleep(PERIOD)
        rc = L.wait(p, 60, "tail")
        out.join()
        err.join()
        rows = []
        for _, line in out.lines:
            m = LINE.match(line)
            if m:
                rows.append((int(m.group(1)), int(m.group(2)), int(m.group(3) or 0),
                             float(m.group(4))))
        L.log("  view: " + " ".join("t=%d:%g" % (r[0], r[3]) for r in rows))
        total = (n + ARRIVING) * EVENTS
        check(rc == 0 and rows and rows[-1][1] == total and rows[-1][2] == replayed,
              "tail: exit %s, last line events=%s replayed=%s (want %d, %d)"
              % (rc, rows[-1][1] if rows else None, rows[-1][2] if rows else None,
                 total, replayed))
        top = max((r[3] for r in rows), default=0)
        check(top < 2 * RATE,
              "no line shows the replay as a rate: highest %g/s, trickle %g/s, replay %d events"
              % (top, RATE, replayed))
        if wrapped:
            L.log("  (under %s: the trickle's rate is not timed)"
                  % os.environ["JFRSTREAM_TEST_WRAPPER"])
        else:
            steady = [r[3] for r in rows if abs(r[3] - RATE) <= 0.4 * RATE]
            check(len(steady) >= 2,
                  "the trickle shows as ~%g/s on %d lines (within 40 %%)" % (RATE, len(steady)))
    finally:
        L.cleanup()
        shutil.rmtree(work, ignore_errors=True)
    L.result(NAME, not fails, "%d failures" % len(fails) if fails else "replay apart, rate of now")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
