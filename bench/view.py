#!/usr/bin/env python3
"""view.py — `jfrstream view` beside JDK 25's `jfr view`, view by view, on
the same file in the same run.

    bench/view.py --jfrstream J --jfr JFR25 [--views a,b,...] [--repeat N] FILE

For each view (default: all of lib/conv/views.ini), runs `jfrstream view V
FILE` and `jfr view V FILE` alternately, N times each (default 1), output
to /dev/null, and prints a Markdown table: per view the median wall time,
CPU time (user + system, all threads, from wait4) and peak RSS of each tool,
and the ratios (JDK / jfrstream). Then the totals and the smallest CPU
ratio. Run it on an idle machine.
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
    ap.add_argument("file")
    a = ap.parse_args()
    views = a.views.split(",") if a.views else views_of()
    size = os.path.getsize(a.file) / 1e6
    print("`%s` (%.0f MB), %d views, %d run(s) each, medians\n" % (os.path.basename(a.file), size,
                                                                   len(views), a.repeat))
    print("| view | jfrstream wall s | CPU s | RSS MB | jfr wall s | CPU s | RSS MB | CPU x | wall x |")
    print("|---|---|---|---|---|---|---|---|---|")
    tot = [0.0] * 4
    worst = None
    for v in views:
        ours, jdk = [], []
        for _ in range(a.repeat):
            ours.append(run_once([a.jfrstream, "view", v, a.file]))
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
        print("| %s%s | %.2f | %.2f | %.0f | %.2f | %.2f | %.0f | %.0f | %.0f |"
              % (v, "" if rc == 0 else " (exit %d)" % rc, ow, oc, orss / 1024, jw, jc, jrss / 1024,
                 cx, wx))
        sys.stdout.flush()
    print("| **all %d** | %.1f | %.1f | | %.1f | %.1f | | %.0f | %.0f |"
          % (len(views), tot[0], tot[1], tot[2], tot[3], tot[3] / max(tot[1], 1e-3),
             tot[2] / max(tot[0], 1e-3)))
    print("\nSmallest CPU ratio: %s, %.1f times." % worst)


if __name__ == "__main__":
    main()
