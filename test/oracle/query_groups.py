#!/usr/bin/env python3
"""query_groups.py — the order of GROUP BY groups: `jfrstream query` against
JDK 25's own QueryPrinter (the engine of the debug-build `jfr query`).

usage: query_groups.py --jfrstream J [--known LIST] [--producers DIR]
                       [--max-producers N] [--producers-max-gz BYTES]
                       [--jobs N] [--width N] [--show-queries] FILE...

The groups of a GROUP BY leave the JDK's Histogram in the iteration order of
its HashMap, and rows that tie after the sort keep that order: a table of
the wrong size shows as reordered ties. computeIfAbsent resizes before it
looks up, when the size so far is over the threshold: 13 keys stay in 16
bins, 25 in 32, 49 in 64, 97 in 128, 193 in 256 when the last key came with
the last event (one more call of any key and the table doubles); a bin of 8
in a table under 64 bins doubles it too. For each FILE (and the smallest --max-producers
recordings of DIR, *.jfr.gz, gunzipped, when DIR exists), over every event
type with events (`jfrstream summary`) and every field of it (`jfrstream
metadata`): its top-level fields, one level of the fields of a struct field
(eventThread.javaName, objectClass.name ...), stackTrace.topFrame,
stackTrace.topFrame.lineNumber and stackTrace.topApplicationFrame:

    SELECT F, COUNT(*) FROM T GROUP BY F              (default sort: by count)
    SELECT F, COUNT(*) AS C FROM T GROUP BY F ORDER BY C DESC
    SELECT F, G, COUNT(*) AS C FROM T GROUP BY F, G ORDER BY C DESC
                                                      (G: the next field of T)

then, for each of the group counts 12 13 24 25 48 49 96 97 192 193 384 385
the queries above did not reach, a union of event types whose groups add up
to it, grouped by a field they share (a global sequence number, startTime):

    SELECT F, COUNT(*) AS C FROM T1, T2, ... GROUP BY F ORDER BY C DESC

(the count is found by a subset sum of each type's groups and checked with
jfrstream before the query is kept). All the queries of a file run in one
JVM (test/java/ViewOracle.java, its query mode) at --width (200: nothing is
cut), and each through `jfrstream query --width` (--jobs at a time). The
texts must be equal byte for byte. A query the JDK fails on (an exception,
also one in a field's getter for some event) is counted and left out. A
multi-chunk file's differences are not forgiven chunk by chunk as view.py
forgives them: a chunk alone has fewer groups, and would hide the very
table-size differences this test is for (synthetic.jfr has two chunks).
The differences known and not yet fixed are listed in --known
(query_groups.known, by category): counted, not failures; one listed that
is now equal fails the test until it is taken off the list.

Reported: the queries compared, how many differ (must be 0), the JDK's
failures, the distinct group counts compared, and how many compared queries
had each of the boundary counts. Runs under TZ=UTC unless TZ is set.

Exit 0 equal, 1 differences, 77 no JDK 25.
"""
import argparse
import collections
import concurrent.futures
import gzip
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, HERE)
from find_jdk import find_jdk  # noqa: E402
from oracle import first_diff  # noqa: E402
from query_oracle import JdkFail, jdk_queries  # noqa: E402

# the group counts n whose table is the one n - 1 keys needed (n - 1 = 3/4
# of it) when the n-th key came last, twice as big else; and the counts below
# them (the same table either way)
BOUNDARIES = [13, 25, 49, 97, 193, 385]
BELOW = [12, 24, 48, 96, 192, 384]
TARGETS = sorted(BOUNDARIES + BELOW)
# not events: `jfr summary` lists them, a query does not find them
NOT_EVENTS = {"jdk.Metadata", "jdk.Checkpoint", "jdk.ChunkHeader"}
SCALARS = {"boolean", "byte", "char", "short", "int", "long", "float", "double", "String"}
# the structs that Histogram.makeKey turns into a key of values (a thread, a
# class or a class loader: its id; a method, a frame: its class id, name and
# descriptor; a stack trace: the list of its frames; a thread group: names)
KEYED = {"java.lang.Thread", "java.lang.Class", "jdk.types.ClassLoader", "jdk.types.Method",
         "jdk.types.StackFrame", "jdk.types.StackTrace", "jdk.types.ThreadGroup"}


def run(cmd):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


def event_types(J, path):
    """[(type, count)] of the types with events, from `jfrstream summary`."""
    rc, out, err = run(J + ["summary", path])
    if rc:
        raise RuntimeError("jfrstream summary %s: %s" % (path, err.strip()))
    res, on = [], False
    for line in out.splitlines():
        if line.startswith("====="):
            on = True
            continue
        m = re.match(r"\s*(\S+)\s+(\d+)\s+(\d+)\s*$", line)
        if on and m and int(m.group(2)) > 0 and m.group(1) not in NOT_EVENTS:
            res.append((m.group(1), int(m.group(2))))
    return res


def classes(J, path):
    """{qualified name: [(type, is array, field)]} and {simple name:
    qualified name}, from `jfrstream metadata` (jfr metadata's text)."""
    rc, out, err = run(J + ["metadata", path])
    if rc:
        raise RuntimeError("jfrstream metadata %s: %s" % (path, err.strip()))
    fields, simple, name, cur = {}, {}, None, None
    for line in out.splitlines():
        m = re.match(r'@Name\("([^"]+)"\)', line)
        if m:
            name = m.group(1)
            continue
        m = re.match(r"class (\S+)( extends (\S+))?", line)
        if m:
            qual = name or m.group(1)
            if m.group(3) not in ("java.lang.annotation.Annotation", "jdk.jfr.SettingControl"):
                simple.setdefault(m.group(1), qual)  # a field's type, by its simple name
            cur = fields.setdefault(qual, [])
            name = None
            continue
        m = re.match(r"  (\S+?)(\[\])? (\w+);$", line)
        if m and cur is not None:
            cur.append((m.group(1), bool(m.group(2)), m.group(3)))
        elif line.startswith("}"):
            cur = None
    return fields, simple


def group_fields(fields, simple, etype):
    """The fields of etype to group by: top-level, then nested ones. Left
    out: arrays and structs other than KEYED (the JDK's key is then the
    object itself, hashed by identity: an order no other program can give)."""
    top, nested = [], []
    for ftype, array, f in fields.get(etype, []):
        qual = simple.get(ftype, ftype)
        if array or (ftype not in SCALARS and qual not in KEYED):
            continue
        top.append(f)
        if ftype in SCALARS:
            continue
        if qual == "jdk.types.StackTrace":
            nested += [f + ".topFrame", f + ".topFrame.lineNumber", f + ".topApplicationFrame"]
            continue
        for stype, sarray, sf in fields.get(qual, []):
            if not sarray and stype in SCALARS:
                nested.append(f + "." + sf)
    return top, nested


def rows_of(text):
    """The rows of a table's text: the lines after the dashes under the
    header, up to the first empty one (a cell is one line unless a FORMAT
    says otherwise, which these queries do not)."""
    n, on = 0, False
    for line in text.splitlines():
        if not on:
            on = bool(line) and set(line) <= {"-", " "} and "-" in line
        elif not line.strip():
            break
        else:
            n += 1
    return n


class Jdk:
    """ViewOracle.java started in the background on a list of queries."""

    def __init__(self, java, path, width, queries):
        self.pool = concurrent.futures.ThreadPoolExecutor(1)
        self.future = self.pool.submit(jdk_queries, java, path, queries, width) if queries else None

    def result(self):
        r = self.future.result() if self.future else []
        self.pool.shutdown()
        return r


def ours_all(J, width, path, queries, jobs):
    """[(exit status, stdout, stderr)] of `jfrstream query` for each query."""
    with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
        return list(pool.map(lambda q: run(J + ["query", "--width", str(width), q, path]), queries))


def subset_sum(items, target):
    """A subset of items [(name, count)] whose counts add up to target, or None."""
    reach = {0: []}
    for name, c in items:
        for s, chosen in list(reach.items()):
            t = s + c
            if t <= target and t not in reach:
                reach[t] = chosen + [name]
        if target in reach:
            return reach[target]
    return None


def base_queries(J, path):
    """The per-type queries of a file, and per type the fields grouped alone."""
    types = event_types(J, path)
    fields, simple = classes(J, path)
    queries, single = [], []
    for etype, _ in types:
        top, nested = group_fields(fields, simple, etype)
        for f in top + nested:
            queries.append("SELECT %s, COUNT(*) FROM %s GROUP BY %s" % (f, etype, f))
            q = "SELECT %s, COUNT(*) AS C FROM %s GROUP BY %s ORDER BY C DESC" % (f, etype, f)
            queries.append(q)
            single.append((etype, f, q))
        for f, g in zip(top, top[1:] + top[:1]):
            if f != g:
                queries.append("SELECT %s, %s, COUNT(*) AS C FROM %s GROUP BY %s, %s "
                               "ORDER BY C DESC"
                               % (f, g, etype, f, g))
    return queries, single


def union_queries(J, width, path, single, ours, covered):
    """For each target group count not in covered: up to two unions of
    types grouped by a shared top-level field whose groups add up to it."""
    groups = collections.defaultdict(dict)  # field -> {type: groups}
    for etype, f, q in single:
        rc, out, _ = ours[q]
        if rc == 0 and "." not in f:
            groups[f][etype] = rows_of(out)
    # fields of several types, the most groups first (a sequence number, the
    # start time: distinct in every event, so the groups of a union add up)
    shared = sorted((f for f, per in groups.items() if len(per) > 1),
                    key=lambda f: (-sum(groups[f].values()), f))[:4]
    found = []
    for n in TARGETS:
        if n in covered:
            continue
        kept = 0
        for f in shared:
            items = sorted(((t, c) for t, c in groups[f].items() if c > 0),
                           key=lambda x: (-x[1], x[0]))
            subset = subset_sum(items, n)
            if not subset or len(subset) < 2:
                continue
            q = ("SELECT %s, COUNT(*) AS C FROM %s GROUP BY %s ORDER BY C DESC"
                 % (f, ", ".join(sorted(subset)), f))
            rc, out, err = run(J + ["query", "--width", str(width), q, path])
            if rc == 0 and rows_of(out) == n:
                found.append(q)
                ours[q] = (rc, out, err)
                kept += 1
                if kept == 2:
                    break
    return found


def read_known(path):
    """{(file name, query): category} of the known differences: lines
    "FILE<TAB>QUERY" under a line "@category: what differs"."""
    known, category = {}, None
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line.strip() or line.startswith("#"):
                continue
            if line.startswith("@"):
                category = line[1:].split(":", 1)[0].strip()
                continue
            name, sep, q = line.partition("\t")
            if not sep or not category:
                raise ValueError("%s: not FILE<TAB>QUERY under an @category line: %r"
                                 % (path, line))
            known[(name, q)] = category
    return known


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--jfrstream", required=True)
    ap.add_argument("--producers", help="a folder of *.jfr.gz; absent: left out")
    ap.add_argument("--max-producers", type=int, default=3)
    ap.add_argument("--producers-max-gz", type=int, default=60_000)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--width", type=int, default=200)
    ap.add_argument("--show-queries", action="store_true",
                    help="print each query and its group count")
    ap.add_argument("--known", help="the known differences (query_groups.known)")
    ap.add_argument("files", nargs="*")
    a = ap.parse_args()
    os.environ.setdefault("TZ", "UTC")
    home, why = find_jdk(25)
    if not home:
        print("query-groups: SKIP: %s (JDK 25's QueryPrinter is the reference)" % why)
        return 77
    java = os.path.join(home, "bin", "java")
    # JFRSTREAM_TEST_WRAPPER (test/valgrind.sh): put before every jfrstream run
    J = shlex.split(os.environ.get("JFRSTREAM_TEST_WRAPPER", "")) + [os.path.abspath(a.jfrstream)]
    tmp = tempfile.mkdtemp(prefix="query-groups.")
    files = [os.path.abspath(f) for f in a.files]
    if a.producers and os.path.isdir(a.producers):
        sizes = [(os.path.getsize(os.path.join(a.producers, n)), n)
                 for n in os.listdir(a.producers) if n.endswith(".jfr.gz")]
        small = sorted(s for s in sizes if s[0] <= a.producers_max_gz)
        for _, name in small[:a.max_producers]:
            dst = os.path.join(tmp, name[:-3])
            with gzip.open(os.path.join(a.producers, name)) as fi, open(dst, "wb") as fo:
                shutil.copyfileobj(fi, fo)
            files.append(dst)
    elif a.producers:
        print("query-groups: no %s: the fixtures only" % a.producers)
    known = read_known(a.known) if a.known else {}
    compared = bad = failed = nknown = stale = 0
    counts = collections.Counter()  # group count -> queries compared equal
    per_category = collections.Counter()
    jdk_fails = collections.Counter()  # exception class -> queries
    try:
        for path in files:
            base = os.path.basename(path)
            queries, single = base_queries(J, path)
            jdk = Jdk(java, path, a.width, queries)
            ours = dict(zip(queries, ours_all(J, a.width, path, queries, a.jobs)))
            covered = {rows_of(out) for rc, out, _ in ours.values() if rc == 0}
            unions = union_queries(J, a.width, path, single, ours, covered)
            more = Jdk(java, path, a.width, unions)
            refs = jdk.result() + more.result()
            differing, nfile, nfail = [], 0, 0
            for q, ref in zip(queries + unions, refs):
                rc, out, err = ours[q]
                if isinstance(ref, JdkFail):
                    nfail += 1
                    # the exception without its message's details (names, positions)
                    jdk_fails[ref.split(":", 1)[0]] += 1
                    continue
                nfile += 1
                category = known.get((base, q))
                same = rc == 0 and out == ref
                if category and same:
                    stale += 1
                    print("FAIL: %s: %s: listed in %s (%s), now equal: take it off the list"
                          % (base, q, os.path.basename(a.known), category))
                elif category:
                    nknown += 1
                    per_category[category] += 1
                elif rc != 0:
                    differing.append((q, "exit %d: %s" % (rc, err.strip()[:200])))
                elif not same:
                    differing.append((q, first_diff(out, ref)))
                else:
                    counts[rows_of(ref)] += 1
                if a.show_queries:
                    print("  %4d groups%s: %s" % (rows_of(ref), " (known: %s)" % category
                                                  if category else "", q))
            for q, why in differing:
                bad += 1
                print("FAIL: %s: %s\n%s" % (base, q, why))
            compared += nfile
            failed += nfail
            print("query-groups: %s: %d queries (%d unions for the boundaries), %d compared, "
                  "%d where JDK 25 fails"
                  % (base, len(queries) + len(unions), len(unions), nfile, nfail))
    finally:
        shutil.rmtree(tmp, True)
    print("query-groups: group counts of the equal queries (%d distinct): %s"
          % (len(counts), " ".join(str(n) for n in sorted(counts))))
    print("query-groups: boundary counts (equal queries): %s"
          % ", ".join("%d: %d" % (n, counts[n]) for n in TARGETS))
    missing = [n for n in TARGETS if not counts[n]]
    if missing:
        print("query-groups: not reached: %s" % " ".join(map(str, missing)))
    if per_category:
        print("query-groups: known differences (%s): %s" % (os.path.basename(a.known), ", ".join(
            "%s %d" % (c, n) for c, n in sorted(per_category.items()))))
    if jdk_fails:
        print("query-groups: JDK 25 fails with: %s" % ", ".join(
            "%s %d" % (e, n) for e, n in sorted(jdk_fails.items())))
    print("query-groups: %d queries compared, %d differ, %d known differences, %d where JDK 25 "
          "fails (not compared)" % (compared, bad, nknown, failed))
    bad += stale
    if bad:
        print("FAIL: query-groups: %d differences (%d of them listed as known, now equal)"
              % (bad, stale))
        return 1
    if not compared:
        print("query-groups: SKIP: nothing compared")
        return 77
    print("PASS: query-groups")
    return 0


if __name__ == "__main__":
    sys.exit(main())
