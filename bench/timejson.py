#!/usr/bin/env python3
"""timejson.py — time a JSON printer (`jfrstream print --json`, `jfr print --json`)
for bench/run.sh.

    bench/timejson.py REPEAT FILE CMD...

Runs CMD... FILE once with its output counted (the JSON bytes, untimed), then
REPEAT times with its output to /dev/null. Prints, for the run of median wall
time, the line bench/run.sh reads:

    MB/s=<input MB/s> cpu_MB/s=<input MB per CPU s> cpu_s=<user+sys> json_bytes=<n>
    json_MB/s=<JSON MB/s> json_cpu_MB/s=<JSON MB per CPU s> rss_kb=<peak RSS>

CPU time is the child's user + system time (all its threads), from wait4().
"""
import os
import subprocess
import sys
import time


def run_once(cmd):
    with open(os.devnull, "wb") as null:
        t0 = time.monotonic()
        p = subprocess.Popen(cmd, stdout=null)
        _, status, ru = os.wait4(p.pid, 0)
        wall = time.monotonic() - t0
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode != 0:
        sys.exit(f"timejson: {' '.join(cmd)}: exit {p.returncode}")
    return wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss


def main():
    if len(sys.argv) < 4:
        sys.exit("usage: timejson.py REPEAT FILE CMD...")
    repeat, path, cmd = int(sys.argv[1]), sys.argv[2], sys.argv[3:] + [sys.argv[2]]
    size = os.path.getsize(path)
    nbytes = 0
    with subprocess.Popen(cmd, stdout=subprocess.PIPE) as p:
        while chunk := p.stdout.read(1 << 20):
            nbytes += len(chunk)
    runs = sorted(run_once(cmd) for _ in range(max(1, repeat)))
    wall, cpu, rss = runs[len(runs) // 2]
    print(f"MB/s={size / wall / 1e6:.1f} cpu_MB/s={size / cpu / 1e6:.1f} cpu_s={cpu:.3f}"
          f" json_bytes={nbytes} json_MB/s={nbytes / wall / 1e6:.0f}"
          f" json_cpu_MB/s={nbytes / cpu / 1e6:.0f} wall_s={wall:.3f} rss_kb={rss}")


main()
