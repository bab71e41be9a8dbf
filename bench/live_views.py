#!/usr/bin/env python3
"""live_views.py — the cost of `listen --view`: one recording sent over
loopback TCP to `jfrstream listen --once`, with the views and without (the
rate view), beside `jfrstream view` of the same file.

    bench/live_views.py --jfrstream J [--views a,b] [--every S] [--repeat N] FILE

For each mode, N runs (default 3): the median wall time from the connection
to listen's exit, CPU time (user + system, from wait4) and peak RSS of the
listener, the frames printed and the "bytes kept" of the last frame (the
copies of what the views read). The window is a day, so that every event of
an old file is in it. Run it on an idle machine.
"""
import argparse
import os
import socket
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "test", "live"))
import livelib as L  # noqa: E402  (free_port)


def listen_once(jfrstream, args, data):
    port = L.free_port()
    cmd = [jfrstream, "listen", "--once"] + args + ["127.0.0.1:%d" % port]
    out = open("/tmp/live_views.%d.out" % os.getpid(), "w+b")
    p = subprocess.Popen(cmd, stdout=out, stderr=subprocess.PIPE)
    line = p.stderr.readline()  # "listening on ..."
    if b"listening on" not in line:
        raise SystemExit("listen did not start: %r" % line)
    t0 = time.monotonic()
    s = socket.create_connection(("127.0.0.1", port))
    with open(data, "rb") as f:  # in pieces: a forked child's peak RSS starts at ours
        while True:
            b = f.read(1 << 20)
            if not b:
                break
            s.sendall(b)
    s.close()
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.monotonic() - t0
    p.stderr.read()
    out.seek(0)
    text = out.read().decode("utf-8", "replace")
    out.close()
    os.unlink(out.name)
    heads = [l for l in text.splitlines() if l.startswith("jfrstream listen ")]
    kept = "-"
    if heads and "(end)" in heads[-1]:
        kept = heads[-1].split("   ")[4].split()[0]
    return wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss / 1024, len(heads), kept, \
        os.waitstatus_to_exitcode(status)


def view_file(jfrstream, views, path):
    t0 = time.monotonic()
    procs = []
    cpu = rss = 0
    for v in views:
        p = subprocess.Popen([jfrstream, "view", v, path], stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
        _, status, ru = os.wait4(p.pid, 0)
        cpu += ru.ru_utime + ru.ru_stime
        rss = max(rss, ru.ru_maxrss / 1024)
        procs.append(os.waitstatus_to_exitcode(status))
    return time.monotonic() - t0, cpu, rss, procs


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--jfrstream", required=True)
    ap.add_argument("--views", default="hot-methods,gc-pauses")
    ap.add_argument("--every", default="1")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("file")
    a = ap.parse_args()
    data = a.file
    views = a.views.split(",")
    vargs = []
    for v in views:
        vargs += ["--view", v]
    vargs += ["--view-window", "86400", "--view-every", a.every]
    print("file: %s (%.1f MB), views: %s, a frame every %s s" %
          (a.file, os.path.getsize(a.file) / 1e6, ", ".join(views), a.every))
    print()
    print("| mode | wall s | CPU s | peak RSS MB | frames | bytes kept |")
    print("|---|---|---|---|---|---|")
    for name, args in (("listen (rate view)", []), ("listen --view", vargs)):
        runs = [listen_once(a.jfrstream, args, data) for _ in range(a.repeat)]
        if any(r[5] != 0 for r in runs):
            print("%s: exit %s" % (name, [r[5] for r in runs]), file=sys.stderr)
        med = lambda k: statistics.median(r[k] for r in runs)
        print("| %s | %.2f | %.2f | %.0f | %d | %s |" %
              (name, med(0), med(1), med(2), runs[-1][3], runs[-1][4]))
    runs = [view_file(a.jfrstream, views, a.file) for _ in range(a.repeat)]
    print("| view of the file (%d runs, one per view) | %.2f | %.2f | %.0f | | |" %
          (len(views), statistics.median(r[0] for r in runs),
           statistics.median(r[1] for r in runs), max(r[2] for r in runs)))


if __name__ == "__main__":
    main()
