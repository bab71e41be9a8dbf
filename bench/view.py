#!/usr/bin/env python3
"""view.py — `jfrstream view` beside JDK 25's `jfr view`, view by view, on
the same file in the same run.

    bench/view.py --jfrstream J --jfr JFR25 [--views a,b,...] [--repeat N] [--jobs1] FILE

For each view (default: all of lib/conv/views.ini), runs `jfrstream view V
FILE` and `jfr view V FILE` alternately, N times each (default 1), output
to /dev/null, and prints a Markdown table: per view the median wall time,
CPU time (user + system, all threads, from wait4) and peak RSS of each tool,
and the ratios (JDK / jfrstream). Then the totals and the smallest CPU
and wall ratios. jfrstream runs with its default --jobs (the cores, at most
8, for a file of 4 MiB or more: the chunks prepared on helper threads);
--jobs1 adds a column, the wall time of `jfrstream --jobs 1 view` (one
thread). Run it on an idle machine.
"""
import argparse
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def run_once(cmd):
    with open(os.devnull, "wb") as null:
        t0 = time.monotonic()
        p = subprocess.Popen(cmd, stdout=null, stderr=subprocess.DEVNULL)
        _, status, ru = os.wait4(p.pid, 0)
        wall = time.monotonic() - t0
    return wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss, os.waitstatus_to_exitcode(status)


def views_of():
    with open(os.path.join(HERE, "../lib/conv/views.ini"), encoding="utf-8") as f:
        return [l.split()[1].rsplit(".", 1)[1] for l in f if l.startswith("view ")]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--jfrstream", required=True)
    ap.add_argument("--jfr", required=True)
    ap.add_argument("--views")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--jobs1", action="store_true")
    ap.add_argument("file")
    a = ap.parse_args()
    views = a.views.split(",") if a.views else views_of()
    size = os.path.getsize(a.file) / 1e6
    print("`%s` (%.0f MB), %d views, %d run(s) each, medians\n" % (os.path.basename(a.file), size,
                                                                   len(views), a.repeat))
    one = " --jobs 1 wall s |" if a.jobs1 else ""
    print("| view | jfrstream wall s |%s CPU s | RSS MB | jfr wall s | CPU s | RSS MB | CPU x | wall x |"
          % one)
    print("|---|---|---|---|---|---|---|---|---|" + ("---|" if a.jobs1 else ""))
    tot = [0.0] * 5
    worst = worst_wall = None
    for v in views:
        ours, jdk, serial = [], [], []
        for _ in range(a.repeat):
            ours.append(run_once([a.jfrstream, "view", v, a.file]))
            if a.jobs1:
                serial.append(run_once([a.jfrstream, "--jobs", "1", "view", v, a.file]))
            jdk.append(run_once([a.jfr, "view", v, a.file]))
        ow, oc, orss = (statistics.median(x[i] for x in ours) for i in range(3))
        jw, jc, jrss = (statistics.median(x[i] for x in jdk) for i in range(3))
        rc = max(x[3] for x in ours)
        cx, wx = jc / max(oc, 1e-3), jw / max(ow, 1e-3)
        tot[0] += ow
        tot[1] += oc
        tot[2] += jw
        tot[3] += jc
        if worst is None or cx < worst[1]:
            worst = (v, cx)
        if worst_wall is None or wx < worst_wall[1]:
            worst_wall = (v, wx)
        sw = ""
        if a.jobs1:
            w1 = statistics.median(x[0] for x in serial)
            tot[4] += w1
            sw = " %.2f |" % w1
        print("| %s%s | %.2f |%s %.2f | %.0f | %.2f | %.2f | %.0f | %.0f | %.0f |"
              % (v, "" if rc == 0 else " (exit %d)" % rc, ow, sw, oc, orss / 1024, jw, jc,
                 jrss / 1024, cx, wx))
        sys.stdout.flush()
    print("| **all %d** | %.1f |%s %.1f | | %.1f | %.1f | | %.0f | %.0f |"
          % (len(views), tot[0], " %.1f |" % tot[4] if a.jobs1 else "", tot[1], tot[2], tot[3],
             tot[3] / max(tot[1], 1e-3), tot[2] / max(tot[0], 1e-3)))
    print("\nSmallest CPU ratio: %s, %.1f times; smallest wall ratio: %s, %.1f times."
          % (worst + worst_wall))


if __name__ == "__main__":
    main()
