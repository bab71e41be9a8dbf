#!/usr/bin/env python3
"""view_order.py — `view` and `query` print the same whether the finished
chunks' events are sorted by end time or come in file order.

usage: test/cli/view_order.py JFRSTREAM FILE.jfr [FILE.jfr ...]

A query whose result does not depend on the order of a chunk's events
(jfrc_query_order_free) is fed the finished chunks unsorted, and orders by
itself what depends on it (FIRST, LAST, DIFF, ties of MIN and MAX, the
order of the groups in the JDK's HashMap); a chunk being written is
sorted per flush segment as before. The reference is the same command with
every chunk sorted (JFRSTREAM_VIEW_SORTED=1). Compared byte for byte
(stdout, stderr, exit status), at --jobs 1 and 3: every view alone and
order-sensitive queries (FIRST, LAST, DIFF, MIN, MAX, MEDIAN, P99, UNIQUE,
groups in HashMap order without ORDER BY, several types in one group,
several types of one query), over each file, the files concatenated
twice, damaged copies (bytes flipped, cut short), each file with its last
chunk being written (the header of a chunk in progress) and the
concatenation with its last chunk being written. Exit 77 when no file is
there.
"""
import os
import random
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "oracle"))
from oracle import chunk_spans  # noqa: E402

SCALE = float(os.environ.get("JFRSTREAM_TEST_SCALE", "1"))
WRAPPER = os.environ.get("JFRSTREAM_TEST_WRAPPER", "").split()

QUERIES = [
    "SELECT FIRST(startTime), LAST(startTime), DIFF(startTime), COUNT(*) FROM * GROUP BY eventType.label",
    "SELECT eventType.label, LAST(eventType.name), FIRST(eventType.name), COUNT(*) FROM * GROUP BY eventType.label",
    "SELECT eventThread, MIN(duration), MAX(duration), FIRST(stackTrace.topFrame), "
    "LAST(stackTrace.topFrame), COUNT(*) FROM ThreadSleep, ThreadPark, JavaMonitorWait, "
    "JavaMonitorEnter GROUP BY eventThread",
    "SELECT stackTrace.topFrame, COUNT(*) FROM ExecutionSample GROUP BY stackTrace.topFrame",
    "SELECT eventThread, COUNT(*), FIRST(startTime), LAST(duration) FROM ThreadSleep, ThreadPark, "
    "JavaMonitorEnter, ObjectAllocationSample GROUP BY eventThread",
    "SELECT eventType.name, MEDIAN(duration), P99(duration), P90(duration), UNIQUE(eventThread), "
    "MAX(startTime), MIN(startTime) FROM * GROUP BY eventType.name",
    "SELECT MIN(eventThread), MAX(eventThread), MIN(stackTrace.topFrame), LAST(stackTrace) FROM "
    "ThreadSleep, ThreadPark, ExecutionSample, ObjectAllocationSample GROUP BY eventType.name",
    "SELECT COUNT(*), SUM(duration), AVG(duration), DIFF(duration), FIRST(eventType.label) FROM *",
    "SELECT stackTrace.topApplicationFrame, DIFF(startTime), COUNT(*) FROM ExecutionSample, "
    "ObjectAllocationSample GROUP BY stackTrace.topApplicationFrame",
]


def run(jfrstream, args, env_extra):
    env = dict(os.environ)
    env.update(env_extra)
    p = subprocess.run(WRAPPER + [jfrstream] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       env=env, timeout=600)
    return p.returncode, p.stdout, p.stderr


def last_live(path):
    """The file's bytes with its last chunk being written: the header a JVM
    writes first (size 68, no checkpoint or metadata offset, no duration,
    state 1)."""
    cs = chunk_spans(path)
    if not cs:
        return None
    b = open(path, "rb").read()
    off, size = cs[-1]
    h = bytearray(b[off:off + 68])
    h[8:32] = bytes(24)
    h[15] = 68
    h[40:48] = bytes(8)
    h[64] = 1
    return b[:off] + bytes(h) + b[off + 68:off + size]


def damaged(b, seed):
    r = random.Random(seed)
    d = bytearray(b)
    if seed % 2:
        return bytes(d[:r.randrange(len(d) // 2, len(d))])
    for _ in range(8):
        d[r.randrange(68, len(d))] ^= 1 << r.randrange(8)
    return bytes(d)


def main():
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    jfrstream = sys.argv[1]
    files = [f for f in sys.argv[2:] if os.path.isfile(f)]
    for f in sys.argv[2:]:
        if not os.path.isfile(f):
            print("skip: %s not found" % f)
    if not files:
        print("SKIP: no recording found")
        return 77
    views = run_views()
    fails = compared = 0
    with tempfile.TemporaryDirectory() as tmp:
        inputs = []
        data = [open(f, "rb").read() for f in files]
        for f, b in zip(files, data):
            inputs.append((os.path.basename(f), b, True))
            lv = last_live(f)
            if lv:
                inputs.append((os.path.basename(f) + ", last chunk being written", lv, False))
        cat = os.path.join(tmp, "cat.jfr")
        with open(cat, "wb") as o:
            o.write(b"".join(data) * 2)
        inputs.append(("concatenation", open(cat, "rb").read(), True))
        lv = last_live(cat)
        if lv:
            inputs.append(("concatenation, last chunk being written", lv, False))
        for seed in range(max(2, int(6 * SCALE))):
            inputs.append(("damaged %d of %s" % (seed, os.path.basename(files[seed % len(files)])),
                           damaged(data[seed % len(data)], seed), False))
        for k, (what, b, every_view) in enumerate(inputs):
            path = os.path.join(tmp, "in%d.jfr" % k)
            with open(path, "wb") as o:
                o.write(b)
            cmds = [["query", q] for q in QUERIES]
            cmds += [["view", v] for v in (views if every_view else views[::7])]
            for cmd in cmds:
                for jobs in ("1", "3"):
                    args = ["--jobs", jobs] + cmd + [path]
                    ref = run(jfrstream, args, {"JFRSTREAM_VIEW_SORTED": "1"})
                    got = run(jfrstream, args, {})
                    compared += 1
                    if ref != got:
                        fails += 1
                        bad = [n for n, a, c in zip(["exit status", "stdout", "stderr"], ref, got) if a != c]
                        print("FAIL: %s: %s --jobs %s: %s differ" % (what, " ".join(cmd)[:80], jobs,
                                                                    ", ".join(bad)))
            print("ok: %s: %d commands at --jobs 1 and 3" % (what, len(cmds)))
    print("%d passed, %d failed" % (compared - fails, fails))
    return 1 if fails else 0


def run_views():
    """Every view's name, from lib/conv/views.ini ("view CATEGORY.NAME ...")."""
    ini = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "lib", "conv", "views.ini")
    names = []
    for line in open(ini, encoding="utf-8"):
        if line.startswith("view "):
            names.append(line.split()[1].split(".", 1)[1])
    return names


if __name__ == "__main__":
    sys.exit(main())
