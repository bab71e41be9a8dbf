#!/usr/bin/env python3
"""view.py — `jfrstream view` against JDK 25's `jfr view`.

usage: view.py --jfrstream J (--jfr JFR25 [--store OUT.gz] | --expected OUT.gz)
               [--feed-size S] [--quick] FILE...

For each FILE, every view of views.ini on its own, at the default width, at
--width 60 with --truncate beginning, at --width 200 with --truncate end and
--cell-height 3, and with --verbose (field names, the query printed back);
JDK 25's text of each comes from its own ViewPrinter, all views of all
files at all option sets in one JVM (test/java/ViewOracle.java; the
chunk-by-chunk checks below in one more), so that a view the
JDK fails on ("unexpected internal error": its formatter throws on an empty
stack trace, a malformed method descriptor...) is reported, counted and left
out, and the others are still compared. Then `view types`, `view
all-events` and three event types by name (jdk.GarbageCollection,
ExecutionSample with --verbose, jdk.CPULoad at --width 90) against the
same ViewPrinter (what `jfr view` runs: its text, and exit 1 where it
refuses a name; unless --quick). Outputs must be equal byte for byte, less the
"Execution: ..." timing line of --verbose (the tools time different
things); a multi-chunk file's view that differs is compared chunk by chunk,
and tolerated and counted when every chunk alone is equal (the JDK keeps a
constant of an earlier chunk for a key the next chunk declares again).
`view all-views` must print the views' texts one after the other,
at each option set; with --feed-size (a list: whole,1,random:7) it must
print the same at every size.

--expected compares with a stored reference (each case's exit status and
text, joined, gzip'd) instead of running a JDK, for a fixture; --store
writes that file from JDK 25. Runs under TZ=UTC unless TZ is set (the views
print local times). VIEW_OPTSETS=0,1 (indexes into the four option sets
above) compares at those only.

Exit 0 equal, 1 differences, 77 no JDK 25 (and no --expected).
"""
import argparse
import gzip
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from oracle import chunk_spans, first_diff, span_bytes  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
CRASHED = "\x01JDK 25 failed"  # a stored case the JDK fails on
USER = "\x01JDK 25 refused"  # `jfr view` exits 1 saying why (no such view or event type)
OPTSETS = [
    [],
    ["--width", "60", "--truncate", "beginning"],
    ["--width", "200", "--truncate", "end", "--cell-height", "3"],
    ["--verbose"],
]
MORE = [
    ("types", []),
    ("all-events", []),
    ("jdk.GarbageCollection", []),
    ("ExecutionSample", ["--verbose"]),
    ("jdk.CPULoad", ["--width", "90"]),
]


def strip_timing(text):
    return "".join(l for l in text.splitlines(True) if not l.startswith("Execution: "))


def run(cmd):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


def views_of():
    """The view names, from lib/conv/views.ini."""
    with open(os.path.join(HERE, "../../lib/conv/views.ini"), encoding="utf-8") as f:
        return [l.split()[1].rsplit(".", 1)[1] for l in f if l.startswith("view ")]


def jdk_views(jfr, jobs):
    """[{view: text or CRASHED}] for each job (path, opts, names), from
    ViewOracle.java under the JDK of jfr: one JVM for them all."""
    if not jobs:
        return []
    java = os.path.join(os.path.dirname(jfr), "java")
    cmd = [java, "--add-opens", "jdk.jfr/jdk.jfr.internal.query=ALL-UNNAMED",
           "--add-opens", "jdk.jfr/jdk.jfr.internal.util=ALL-UNNAMED",
           os.path.join(HERE, "../java/ViewOracle.java")]
    for k, (path, opts, names) in enumerate(jobs):
        cmd += (["--next"] if k else []) + [path] + opts + ["--"] + names
    rc, out, err = run(cmd)
    if rc != 0:
        raise RuntimeError("ViewOracle.java failed (exit %d): %s" % (rc, err[:300]))
    outs = out.split("\x01JOB ")[1:] if len(jobs) > 1 else [out]
    if len(outs) != len(jobs):
        raise RuntimeError("ViewOracle.java: %d outputs for %d jobs" % (len(outs), len(jobs)))
    res = []
    for job in outs:
        views = {}
        for part in job.split("\x01VIEW ")[1:]:
            name, _, text = part.partition("\n")
            views[name] = (USER if text.startswith("\x01FAIL jdk.jfr.internal.util.UserDataException")
                           else CRASHED if text.startswith("\x01FAIL ") else strip_timing(text))
        res.append(views)
    return res


def chunkwise(a, cases):
    """Each case (path, opts as a tuple, view) of a multi-chunk file whose view differs,
    chunk by chunk: True when every chunk alone prints the same in both tools
    ({case: bool}). The JDK's stream keeps the value it resolved in the
    previous chunk for a pool key that the next chunk declares again
    (ChunkParser: getPreviousResolved), where jfrstream takes each chunk's
    own: JDK 17 reuses stack trace ids across chunks."""
    tmp = tempfile.mkdtemp(prefix="view.")
    try:
        chunks = {}  # path -> its chunks as files (None: one chunk)
        for path, _, _ in cases:
            if path in chunks:
                continue
            spans = chunk_spans(path)
            chunks[path] = None
            if spans and len(spans) > 1:
                chunks[path] = []
                for span in spans:
                    one = os.path.join(tmp, "chunk%d.jfr" % len(os.listdir(tmp)))
                    with open(one, "wb") as f:
                        f.write(span_bytes(path, span))
                    chunks[path].append(one)
        jobs = [(one, list(opts), [view]) for path, opts, view in cases for one in chunks[path] or []]
        refs = iter(jdk_views(a.jfr, jobs))
        res = {}
        for case in cases:
            path, opts, view = case
            res[case] = chunks[path] is not None
            for one in chunks[path] or []:
                r = next(refs).get(view, CRASHED)
                if r == CRASHED or not res[case]:
                    continue
                rc, ours, err = run([a.jfrstream, "view"] + list(opts) + [view, one])
                res[case] = rc == 0 and strip_timing(ours) == r
        return res
    finally:
        shutil.rmtree(tmp, True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--jfrstream", required=True)
    ap.add_argument("--jfr")
    ap.add_argument("--expected")
    ap.add_argument("--store")
    ap.add_argument("--feed-size", default="whole")
    ap.add_argument("--quick", action="store_true")
    # oracle.py's options (recordings.sh passes them to either): no effect here
    ap.add_argument("--exact-numbers", action="store_true")
    ap.add_argument("--no-summary", action="store_true")
    ap.add_argument("--no-metadata", action="store_true")
    ap.add_argument("--events")
    ap.add_argument("files", nargs="+")
    a = ap.parse_args()
    os.environ.setdefault("TZ", "UTC")
    if a.events:
        print("view: SKIP: an --events run (a view reads the types it names)")
        return 77
    if not a.jfr and not a.expected:
        print("view: SKIP: no JDK 25 jfr given (its `jfr view` is the reference)")
        return 77
    if a.jfr and not a.expected:
        m = re.match(rb"\s*(\d+)", subprocess.run([a.jfr, "version"], capture_output=True).stdout)
        if not m or int(m.group(1)) < 25:
            print("view: SKIP: %s is not JDK 25's (JDK 25's `jfr view` is the reference)" % a.jfr)
            return 77
    names = views_of()
    global OPTSETS
    if os.environ.get("VIEW_OPTSETS"):  # a subset, by index (the producers' run)
        OPTSETS = [OPTSETS[int(i)] for i in os.environ["VIEW_OPTSETS"].split(",")]
    more = [] if a.quick else MORE
    sizes = [s for s in a.feed_size.split(",") if s != "whole"]
    stored = None
    if a.expected:
        with gzip.open(a.expected, "rt", encoding="utf-8") as f:
            stored = f.read().split("\0")
        want = (len(OPTSETS) * len(names) + len(more)) * len(a.files)
        if len(stored) != want:
            print("FAIL: view: %s holds %d outputs, the cases are %d" % (a.expected, len(stored), want))
            return 1
    store = []
    bad = compared = crashed = tolerated = 0
    later = []  # (case, label, first difference): compared chunk by chunk at the end

    def compare(label, rc, ours, ref_rc, ref, case=None):
        nonlocal bad, compared
        compared += 1
        if (rc == 0) != (ref_rc == 0):
            bad += 1
            print("FAIL: %s: exit %d, JDK %d" % (label, rc, ref_rc))
        elif ours != ref:
            if case and a.jfr:
                later.append((case, label, first_diff(ours, ref)))
                return
            bad += 1
            print("FAIL: %s differs\n%s" % (label, first_diff(ours, ref)))

    # JDK 25's views of every file at every option set, and the rest, in one JVM
    refs = iter(jdk_views(a.jfr, [job for path in a.files for job in
                                  [(path, opts, names) for opts in OPTSETS] +
                                  [(path, opts, [what]) for what, opts in more]])
                if stored is None else [])
    for path in a.files:
        base = os.path.basename(path)
        for opts in OPTSETS:
            if stored is None:
                ref = next(refs)
            texts = []
            for v in names:
                label = "%s: view %s %s" % (base, " ".join(opts), v)
                if stored is None:
                    r = ref.get(v, CRASHED)
                    r = CRASHED if r == USER else r
                    store.append(r if r == CRASHED else "0\n" + r)
                else:
                    r = stored.pop(0)
                    if r != CRASHED:
                        r = r.split("\n", 1)[1]
                rc, ours, err = run([a.jfrstream, "view"] + opts + [v, path])
                ours = strip_timing(ours)
                if rc != 0:
                    print("FAIL: %s: exit %d: %s" % (label, rc, err.strip()[:200]))
                    bad += 1
                    continue
                texts.append(ours)
                if r == CRASHED:
                    crashed += 1
                    print("view: %s: JDK 25 fails, not compared" % label)
                    continue
                compare(label, rc, ours, 0, r, (path, tuple(opts), v))
            if opts == ["--verbose"]:
                continue  # all-views --verbose: one timing line, and the types table
            # all-views: the views one after the other, at every feed size
            for size in ["whole"] + sizes:
                fs = [] if size == "whole" else ["--feed-size", size]
                rc, ours, err = run([a.jfrstream] + fs + ["view"] + opts + ["all-views", path])
                compare("%s: view %s all-views (feed %s) = the views one by one"
                        % (base, " ".join(opts), size), rc, ours, 0, "".join(texts))
        for what, opts in more:
            label = "%s: view %s %s" % (base, " ".join(opts), what)
            if stored is None:
                r = next(refs).get(what, CRASHED)
                if r == CRASHED:
                    store.append(CRASHED)
                    crashed += 1
                    print("view: %s: JDK 25 fails, not compared" % label)
                    continue
                ref_rc, r = (1, "") if r == USER else (0, r)
                store.append("%d\n%s" % (ref_rc, r))
            else:
                r = stored.pop(0)
                if r == CRASHED:
                    crashed += 1
                    continue
                rc_text, r = r.split("\n", 1)
                ref_rc = int(rc_text)
            for size in ["whole"] + sizes:
                fs = [] if size == "whole" else ["--feed-size", size]
                rc, ours, err = run([a.jfrstream] + fs + ["view"] + opts + [what, path])
                compare(label + " (feed %s)" % size, rc, strip_timing(ours), ref_rc, r)
    if later:
        alone = chunkwise(a, [case for case, _, _ in later])
        for case, label, diff in later:
            if alone[case]:
                tolerated += 1
                print("view: %s differs as a whole, every chunk alone is equal (tolerated: the "
                      "JDK keeps an earlier chunk's constant for a key declared again)" % label)
            else:
                bad += 1
                print("FAIL: %s differs\n%s" % (label, diff))
    if a.store:
        with gzip.GzipFile(a.store, "wb", mtime=0) as f:
            f.write("\0".join(store).encode("utf-8"))
    print("view: %d outputs compared, %d differ, %d where JDK 25 fails (not compared), "
          "%d multi-chunk differences tolerated (every chunk equal alone)"
          % (compared, bad, crashed, tolerated))
    if bad:
        print("FAIL: view: %d differences" % bad)
        return 1
    print("PASS: view")
    return 0


if __name__ == "__main__":
    sys.exit(main())
