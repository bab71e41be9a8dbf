#!/usr/bin/env python3
"""ref_groups.py — groups found by a constant's key (eventThread, stackTrace.topFrame).

usage: test/cli/ref_groups.py JFRSTREAM

An order-free query whose GROUP BY keys are all read through one pooled
field of the event finds, within a chunk, the group of an event by that
field's key once the chunk's first event with the key found it the long
way (lib/conv/query_run.c, ref_get). Two chunks of synth.Strings events
(test/mkjfr.py's types), 40,000 each: 9,000 thread keys (more than the
8,192 a chunk remembers), two keys per thread name for some (one group
by javaName, two keys), 3,000 stack traces over 40 top methods, keys 0 (null) and keys no
pool defines; a second chunk gives the same keys other constants (a group
remembered for a key must not outlive its chunk). In the file of the first
chunk and in the file of both, every query must print what the same query
prints with an always true WHERE, which takes the general path for every
event, at --jobs 1 and 3 and from stdin; and in the first, what JDK 25's
QueryPrinter prints (test/java/ViewOracle.java) when there is a JDK 25
(test/find_jdk.py; the JDK gives a key declared again in a later chunk
the earlier chunk's constant).
"""
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
import mkjfr  # noqa: E402
from mkjfr import T, varint, s_utf8  # noqa: E402
from query_oracle import forms, jdk_queries, run, start, verdict  # noqa: E402

N_EVENTS = 40000
N_THREADS = 9000
N_STACKS = 3000
N_METHODS = 40
WHERE = " WHERE eventType.name = 'synth.Strings' "
QUERIES = [
    "SELECT eventThread AS T, SUM(n) AS S, COUNT(*) AS C FROM synth.Strings GROUP BY T ORDER BY S DESC",
    "SELECT stackTrace.topFrame AS F, COUNT(*) AS C, MIN(n), MAX(n) FROM synth.Strings GROUP BY F ORDER BY C DESC",
    "SELECT eventThread.javaName AS N, AVG(n), COUNT(*) FROM synth.Strings GROUP BY N ORDER BY N",
    "SELECT COUNT(*) AS C, SUM(n) FROM synth.Strings GROUP BY eventThread ORDER BY C DESC",
]


def chunk(start_ticks, tag):
    tick = mkjfr.TPS // 1000
    recs = [("meta", mkjfr.metadata_record(start_ticks, 1, False, 3))]
    for j in range(N_EVENTS):
        th = 1 + (j * 7919) % N_THREADS
        if j % 97 == 0:
            th = 0
        elif j % 89 == 0:
            th = 99999  # no pool defines it
        st = 1 + (j * 31) % N_STACKS
        if j % 83 == 0:
            st = 0
        elif j % 79 == 0:
            st = 77777
        recs.append(mkjfr.ev_strings(start_ticks + j * (tick // 50), 0, th, st,
                                     "c", mkjfr.s_null(), mkjfr.s_null(), j % 1000))

    def tname(k):
        # keys k and k + 4500 of the first 50 have one name (one group by
        # javaName; two by eventThread, which the JDK groups by pool key)
        return "%s-%d" % (tag, k - 4500 if 4500 < k <= 4550 else k)

    threads = [(k, mkjfr.thread(s_utf8(tname(k)), 1000 + (k - 4500 if 4500 < k <= 4550 else k),
                                s_utf8(tname(k)), k - 4500 if 4500 < k <= 4550 else k, 0))
               for k in range(1, N_THREADS + 1)]
    shift = 0 if tag == "a" else 7
    symbols = [(1, s_utf8("synth/Cls")), (2, s_utf8("()V"))]
    # names of one class and descriptor differing in their last characters:
    # 15 of them in each of two bins of the JDK's HashMap (tree bins)
    symbols += [(10 + m, s_utf8("%s_m%d" % (tag, m))) for m in range(N_METHODS)]
    methods = [(1 + m, varint(1) + varint(10 + m) + varint(2) + varint(1) + b"\x00") for m in range(N_METHODS)]
    stacks = [(k, mkjfr.stacktrace(False, [mkjfr.frame(1 + (k + shift) % N_METHODS, k % 50, 0, 1),
                                           mkjfr.frame(1 + (k * 3) % N_METHODS, 1, 1, 1)]))
              for k in range(1, N_STACKS + 1)]
    recs.append(("cp", mkjfr.checkpoint_record(start_ticks, 0, 1, [
        (T["Symbol"], symbols),
        (T["Class"], [(1, varint(1) + varint(1))]),
        (T["Method"], methods),
        (T["FrameType"], [(1, s_utf8("Interpreted"))]),
        (T["Thread"], threads),
        (T["StackTrace"], stacks),
    ])))
    return recs


def recording(tags):
    out = b""
    t = mkjfr.START_TICKS0
    nanos = mkjfr.START_NANOS0
    for k, tag in enumerate(tags):
        body, meta, cp = mkjfr.layout(chunk(t, tag))
        dur = 10 ** 9
        h = mkjfr.header(len(body), cp, meta, nanos, dur, t, k == len(tags) - 1)
        out += bytes(h) + bytes(body[68:])
        t += mkjfr.TPS
        nanos += dur
    return out


def with_where(q):
    head, sep, tail = q.partition(" GROUP BY ")
    return head + WHERE + sep.strip() + " " + tail


def main():
    args = start(__doc__)
    if not args:
        return 2
    J, jdk, why = args
    bad = cases = 0
    with tempfile.TemporaryDirectory(prefix="ref-groups.") as tmp:
        paths = {}
        for name, tags in (("one", ("a",)), ("two", ("a", "b"))):
            paths[name] = os.path.join(tmp, name + ".jfr")
            with open(paths[name], "wb") as f:
                f.write(recording(tags))
        refs = {}
        for name, path in paths.items():
            for q in QUERIES:
                rc, ref, err = run([J, "--jobs", "1", "query", with_where(q), path])
                rows = ref.count("\n")
                if rc != 0 or err or rows < 40:
                    print("FAIL: the reference %r of %s: exit %d, %d lines: %s"
                          % (with_where(q), name, rc, rows, err.strip()))
                    return 1
                refs[name, q] = ref
            for q in QUERIES:
                for label, rc, out, err in forms(J, q, path):
                    cases += 1
                    if rc != 0 or err or out != refs[name, q]:
                        bad += 1
                        print("FAIL: %s %s %r: exit %d, stderr %r, first lines:\n%s\nwanted:\n%s"
                              % (name, label, q, rc, err, "\n".join(out.splitlines()[:12]),
                                 "\n".join(refs[name, q].splitlines()[:12])))
        # the JDK reuses an earlier chunk's constant for a key declared
        # again (test/mkjfr.py's chunk1): the one-chunk file only
        if jdk:
            texts = jdk_queries(os.path.join(jdk, "bin", "java"), paths["one"], QUERIES)
            for q, text in zip(QUERIES, texts):
                cases += 1
                if text != refs["one", q]:
                    bad += 1
                    print("FAIL: JDK 25's %r, first lines:\n%s\njfrstream's:\n%s"
                          % (q, "\n".join(text.splitlines()[:12]), "\n".join(refs["one", q].splitlines()[:12])))
        else:
            print("ref-groups: no JDK 25 (%s): compared with jfrstream's general path only" % why)
    return verdict("ref-groups", cases, bad)


if __name__ == "__main__":
    sys.exit(main())
