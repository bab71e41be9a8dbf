#!/usr/bin/env python3
"""avg_order.py — an AVG of integers whose double sum depends on the order.

usage: test/cli/avg_order.py JFRSTREAM

The JDK adds an AVG's values to a double in end-time order. While their
magnitudes sum to at most 2^53 that sum is exact, so `view` and `query` may
read the chunks in file order (jfrc_query_order_free_checked); past it, the
rounding follows the order, and jfrstream must read the events again sorted
(jfrc_query_order_lost). A chunk of synth.Numbers events (test/mkjfr.py's
types) whose long field l is, in file order, 2^60, -2^60, then N ones, the
-2^60 ending last: in end-time order the double sum is 0 (each 1 is lost
against 2^60), in file order, and exactly, N. Every run must print the
average 0: `query` at --jobs 1 and 3, from stdin (not read again:
sorted from the start), the same with a GROUP BY, a query whose sum stays
exact (the i field) and the reference with every chunk sorted
(JFRSTREAM_VIEW_SORTED=1); and JDK 25's QueryPrinter
(test/java/ViewOracle.java) prints the same when there is a JDK 25
(test/find_jdk.py).
"""
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
import mkjfr  # noqa: E402
from query_oracle import forms, jdk_queries, run, start, verdict  # noqa: E402

N = 40
QUERIES = [
    "SELECT AVG(l), COUNT(*) FROM synth.Numbers",
    "SELECT b, AVG(l), MIN(l), MAX(l), COUNT(*) FROM synth.Numbers GROUP BY b",
    "SELECT AVG(i), COUNT(*) FROM synth.Numbers",
]


def recording():
    t0 = mkjfr.START_TICKS0
    tick = mkjfr.TPS // 1000
    big = 1 << 60
    # (end ticks, l) in file order: -2^60 ends last
    evs = [(t0 + 1 * tick, big), (t0 + (N + 5) * tick, -big)] + [(t0 + (2 + k) * tick, 1) for k in range(N)]
    recs = [("meta", mkjfr.metadata_record(t0, 1, False, 3))]
    for k, (ticks, l) in enumerate(evs):
        recs.append(mkjfr.ev_numbers(ticks, 1, 2, 1000 + k, l, 0.5, 0.25, 0x41, 1, 0, 1, 1, t0, 5))
    recs.append(("cp", mkjfr.checkpoint_record(t0, 0, 1, [])))
    body, meta, cp = mkjfr.layout(recs)
    dur = (N + 10) * tick * 10 ** 9 // mkjfr.TPS
    h = mkjfr.header(len(body), cp, meta, mkjfr.START_NANOS0, dur, t0, True)
    return bytes(h) + bytes(body[68:])


def main():
    args = start(__doc__)
    if not args:
        return 2
    J, jdk, why = args
    bad = cases = 0
    with tempfile.TemporaryDirectory(prefix="avg-order.") as tmp:
        path = os.path.join(tmp, "avg.jfr")
        with open(path, "wb") as f:
            f.write(recording())
        # the JDK's double sum: 2^60, the ones lost against it, -2^60: 0 (in
        # file order, or summed exactly: N, an average of 0.952)
        def first_value(text):
            rows = [l for l in text.splitlines() if l.strip()]
            return rows[-1].split()[0] if rows else None
        refs = {}
        for q in QUERIES:
            rc, ref, err = run([J, "query", q, path], {"JFRSTREAM_VIEW_SORTED": "1"})
            if rc != 0:
                print("FAIL: sorted reference of %r: exit %d: %s" % (q, rc, err.strip()))
                return 1
            refs[q] = ref
        if first_value(refs[QUERIES[0]]) != "0":
            print("FAIL: the sorted reference does not print the average 0:\n%s" % refs[QUERIES[0]])
            return 1
        for q in QUERIES:
            for label, rc, out, err in forms(J, q, path):
                cases += 1
                if rc != 0 or err or out != refs[q]:
                    bad += 1
                    print("FAIL: %s %r: exit %d, stderr %r, output:\n%s\nwanted:\n%s"
                          % (label, q, rc, err, out, refs[q]))
        if jdk:
            texts = jdk_queries(os.path.join(jdk, "bin", "java"), path, QUERIES)
            for q, text in zip(QUERIES, texts):
                cases += 1
                if text != refs[q]:
                    bad += 1
                    print("FAIL: JDK 25's %r:\n%s\njfrstream's:\n%s" % (q, text, refs[q]))
        else:
            print("avg-order: no JDK 25 (%s): compared with jfrstream's sorted run only" % why)
    return verdict("avg-order", cases, bad)


if __name__ == "__main__":
    sys.exit(main())
