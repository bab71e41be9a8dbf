#!/usr/bin/env python3
"""print_text.py — `jfrstream print` (text, --exact, --xml) against JDK 25's
`jfr print`.

usage: print_text.py --jfrstream J (--jfr JFR25 | --expected OUT[.gz])
                     [--feed-size S] [--events LIST|@FILE] [--exact|--xml]
                     [--jobs N] FILE...

With --expected (a stored JDK 25 output, gzip'd if it ends in .gz; one
FILE), --feed-size may list several sizes (whole,1,random:7): each must
print the stored bytes.

For each FILE both tools print the same events and the outputs must be
identical, byte for byte. JDK 25's PrettyWriter throws on some values (a
@Timespan near Long.MAX_VALUE overflows its rounding: "jfr print:
unexpected internal error, long overflow") and then prints nothing: the
event types it fails on are found by halving the type list, reported, and
left out of the comparison on both sides (with --events, as the JDK's own
filter leaves them out: the queue then holds the same events on both
sides, so even ties come out in the same order). jfrstream must still print
those types (exit 0). A multi-chunk file that differs as a whole is
compared chunk by chunk (each chunk alone, as oracle.py does): the JDK
keeps a constant it resolved in an earlier chunk for a key a later chunk
declares again (ChunkParser: getPreviousResolved; files that mix writers),
where jfrstream takes the chunk's own; when every chunk matches alone, the
whole-file difference is tolerated and counted. Options of oracle.py that do not concern the text
(--no-summary, --exact-numbers, ...) are accepted and ignored, so that
recordings.sh can call either.

Exit 0 equal, 1 differences, 77 no JDK 25 given (the text of older JDKs
differs: not a reference).
"""
import argparse
import atexit
import gzip
import hashlib
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from oracle import chunk_spans, span_bytes  # noqa: E402

CRASH = "unexpected internal error"
TMP = tempfile.mkdtemp(prefix="print_text.")
atexit.register(shutil.rmtree, TMP, True)


class Out:
    """A command's standard output, kept in a file (the XML of one
    producer's recording is 920 MB): its size and digest, its bytes on
    demand."""

    def __init__(self, path):
        self.path = path
        self.size = os.path.getsize(path)
        h = hashlib.sha256()
        with open(path, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
        self.digest = h.digest()

    def data(self):
        with open(self.path, "rb") as f:
            return f.read()

    def __len__(self):
        return self.size

    def __del__(self):
        try:
            os.unlink(self.path)
        except OSError:
            pass


def out_of_bytes(data):
    fd, path = tempfile.mkstemp(prefix="print_text.", dir=TMP)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    return Out(path)


def run(cmd, timeout):
    fd, path = tempfile.mkstemp(prefix="print_text.", dir=TMP)
    try:
        with os.fdopen(fd, "wb") as f:
            p = subprocess.run(cmd, stdout=f, stderr=subprocess.PIPE, timeout=timeout)
    except subprocess.TimeoutExpired:
        os.unlink(path)
        return None, "timed out after %d s" % timeout, -1
    return Out(path), p.stderr.decode("utf-8", "replace"), p.returncode


def ours(args, extra, path):
    cmd = shlex.split(os.environ.get("JFRSTREAM_TEST_WRAPPER", "")) + [args.jfrstream]
    if args.feed_size:
        cmd += ["--feed-size", args.feed_size]
    if args.jobs:
        cmd += ["--jobs", args.jobs]
    return run(cmd + ["print"] + extra + [path], args.timeout)


def types_of(args, path):
    """The event types with events in the file (jfrstream summary)."""
    out, err, rc = run([args.jfrstream, "summary", path], args.timeout)
    if rc != 0:
        raise SystemExit("print_text: jfrstream summary %s failed: %s" % (path, err))
    names, table = [], False
    for line in out.data().decode("utf-8", "replace").splitlines():
        if line.startswith("====="):
            table = True
        elif table and line.split():
            parts = line.split()
            if len(parts) >= 3 and parts[1].isdigit() and int(parts[1]) > 0:
                names.append(parts[0])
    return names


def filter_of(names):
    """--events for these types: the JDK refuses a filter with ':' (the path
    separator: "wildcards should be quoted"), so ':' is matched by '?'."""
    return ["--events", ",".join(n.replace(":", "?") for n in names)]


def ref_print(args, names, path):
    """(bytes, crashed) of the JDK's print of these types."""
    extra = filter_of(names) if names is not None else []
    out, err, rc = run([args.jfr, "print"] + args.fmt + extra + [path], args.timeout)
    # a failure while printing (PrettyWriter, ValueFormatter) is a value's;
    # one while reading (ChunkParser...) the file's: nothing to compare
    top = next((x.strip() for x in err.splitlines() if x.strip().startswith("at ")), "")
    crashed = rc != 0 and CRASH in err and "internal.consumer" not in top
    if rc != 0 and not crashed:
        raise Unreadable("exit %s: %s" % (rc, " | ".join(err.strip().splitlines()[:2])[:300]))
    return out, crashed


class Unreadable(Exception):
    """The JDK cannot read the file (not a printing failure)."""


def crashing(args, names, path):
    """The types among `names` the JDK fails on, by halving."""
    if not names:
        return []
    _, crashed = ref_print(args, names, path)
    if not crashed:
        return []
    if len(names) == 1:
        return names
    h = len(names) // 2
    return crashing(args, names[:h], path) + crashing(args, names[h:], path)


def lines_differing(e, a):
    """The indexes where two equally long line lists differ (linear: difflib
    is quadratic on the large outputs of the producers' files)."""
    return [i for i, (x, y) in enumerate(zip(e, a)) if x != y]


def first_difference(exp, act):
    """The offset of the first differing byte of two outputs."""
    with open(exp.path, "rb") as f, open(act.path, "rb") as g:
        off = 0
        while True:
            x, y = f.read(1 << 20), g.read(1 << 20)
            if x != y:
                n = min(len(x), len(y))
                return off + next((i for i in range(n) if x[i] != y[i]), n)
            if not x:
                return off
            off += len(x)


def compare(label, exp, act, max_lines=40):
    if exp.size == act.size and exp.digest == act.digest:
        return True
    if max(exp.size, act.size) > (256 << 20):
        off = first_difference(exp, act)
        print("    %s has %d bytes, jfrstream %d; the first difference at byte %d:" % (
            label, exp.size, act.size, off))
        for o, sign in ((exp, "-"), (act, "+")):
            with open(o.path, "rb") as f:
                f.seek(max(0, off - 200))
                print("    %s %r" % (sign, f.read(600)))
        return False
    exp, act = exp.data(), act.data()
    e = exp.decode("utf-8", "replace").splitlines()
    a = act.decode("utf-8", "replace").splitlines()
    if len(e) == len(a):
        diff = lines_differing(e, a)
        print("    %d of %d lines differ (%s / jfrstream):" % (len(diff), len(e), label))
        for i in diff[:max_lines // 2]:
            print("    %7d - %s\n    %7d + %s" % (i + 1, e[i], i + 1, a[i]))
        return False
    i = next((k for k, (x, y) in enumerate(zip(e, a)) if x != y), min(len(e), len(a)))
    print("    %s has %d lines, jfrstream %d; the first difference at line %d:" % (
        label, len(e), len(a), i + 1))
    for line in e[max(0, i - 2):i + max_lines // 2]:
        print("    - " + line)
    for line in a[max(0, i - 2):i + max_lines // 2]:
        print("    + " + line)
    return False


def per_chunk(args, extra, path):
    """(ok, note): a multi-chunk file, each chunk printed alone by both."""
    spans = chunk_spans(path)
    if not spans or len(spans) < 2:
        return False, ""
    print("    %d chunks: compared one at a time" % len(spans))
    with tempfile.TemporaryDirectory() as tmp:
        for i, span in enumerate(spans):
            c = os.path.join(tmp, "chunk_%d.jfr" % i)
            with open(c, "wb") as f:
                f.write(span_bytes(path, span))
            exp, err, rc = run([args.jfr, "print"] + extra + [c], args.timeout)
            if rc != 0:
                print("    chunk %d: the JDK fails alone (exit %s): %s" % (i, rc, err[:200]))
                return False, ""
            act, err, rc = ours(args, extra, c)
            if rc != 0 or not compare("jfr25 chunk %d" % i, exp, act):
                print("    chunk %d differs alone" % i)
                return False, ""
    return True, (" (tolerated: differs as a whole, each of its %d chunks matches alone: "
                  "the JDK reused an earlier chunk's constant for a key declared again)" % len(spans))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("files", nargs="+", metavar="FILE")
    ap.add_argument("--jfrstream", required=True)
    ap.add_argument("--jfr", help="JDK 25's jfr")
    ap.add_argument("--expected", help="stored JDK 25 output (one FILE, with --events)")
    ap.add_argument("--events")
    ap.add_argument("--feed-size")
    ap.add_argument("--exact", action="store_true", help="print --exact on both sides")
    ap.add_argument("--xml", action="store_true", help="print --xml on both sides")
    ap.add_argument("--jobs", help="jfrstream --jobs N")
    ap.add_argument("--timeout", type=int, default=900)
    ap.add_argument("--known-crash", default="jfrstream.Timespans",
                    help="types tried alone first (JDK 25 fails on them)")
    for ignored in ("--no-summary", "--no-metadata", "--no-json", "--exact-numbers", "--strict",
                    "--no-per-chunk", "--check-duplicates"):
        ap.add_argument(ignored, action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--stack-depth", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.exact and args.xml:
        ap.error("--exact or --xml, not both")
    fmt = args.fmt = ["--exact"] if args.exact else ["--xml"] if args.xml else []

    if args.events and args.events.startswith("@"):
        with open(args.events[1:], encoding="utf-8") as f:
            args.events = ",".join(x.strip() for x in f if x.strip())

    if args.expected:
        if len(args.files) != 1:
            ap.error("--expected needs one FILE")
        with (gzip.open if args.expected.endswith(".gz") else open)(args.expected, "rb") as f:
            exp = out_of_bytes(f.read())
        status = 0
        for feed in (args.feed_size or "whole").split(","):
            args.feed_size = None if feed == "whole" else feed
            sel = ["--events", args.events] if args.events else []
            act, err, rc = ours(args, fmt + sel, args.files[0])
            if rc != 0:
                print("%s: FAIL: jfrstream exit %s: %s" % (args.files[0], rc, err[:400]))
                status = 1
                continue
            ok = compare("expected", exp, act)
            print("%s, feed %s: %s (%d bytes)" % (args.files[0], feed, "OK" if ok else "DIFF", len(act)))
            status |= 0 if ok else 1
        return status

    if not args.jfr:
        print("print_text: SKIP: no JDK 25 jfr given (older JDKs print another text)")
        return 77
    m = re.match(rb"\s*(\d+)", subprocess.run([args.jfr, "version"], capture_output=True).stdout)
    if not m or int(m.group(1)) < 25:
        print("print_text: SKIP: %s is older than JDK 25 (its text differs: not a reference)" % args.jfr)
        return 77

    status = 0
    for path in args.files:
        try:
            status |= one(args, fmt, path)
        except Unreadable as e:
            print("%s: SKIP: JDK 25's jfr print cannot read it (%s)" % (path, e))
    return status


def one(args, fmt, path):
    names = types_of(args, path)
    if args.events:
        want = set(args.events.split(","))
        names = [n for n in names if n in want or n.rsplit(".", 1)[-1] in want]
    left_out = []
    known = [n for n in names if n in args.known_crash.split(",")]
    if known and ref_print(args, known, path)[1]:
        # a type the JDK is known to fail on (the workload's edge values):
        # checked alone, left out without halving the whole list
        left_out = crashing(args, known, path)
        names = [n for n in names if n not in left_out]
    exp, crashed = ref_print(args, None if not (args.events or left_out) else names, path)
    if crashed:
        more = crashing(args, names, path)
        left_out += more
        names = [n for n in names if n not in more]
        exp, crashed = ref_print(args, names, path)
        if crashed:
            raise SystemExit("print_text: %s still fails without %s" % (args.jfr, left_out))
    sel = filter_of(names) if (left_out or args.events) else []
    act, err, rc = ours(args, fmt + sel, path)
    if rc != 0:
        print("%s: FAIL: jfrstream exit %s: %s" % (path, rc, err[:400]))
        return 1
    ok = compare("jfr25", exp, act)
    note = ""
    if not ok:
        ok, note = per_chunk(args, fmt + sel, path)
    if left_out:
        # the types the JDK fails on: ours must print them all the same
        o2, e2, r2 = ours(args, fmt + filter_of(left_out), path)
        note = " (JDK 25 fails on %s: left out; jfrstream printed them, exit %s, %d bytes)" % (
            ",".join(left_out), r2, len(o2) if o2 else 0)
        if r2 != 0:
            print("    jfrstream failed on them: %s" % e2[:300])
            ok = False
    print("%s: %s, %d bytes, %d event types%s" % (path, "OK" if ok else "DIFF", len(act),
                                                   len(names), note))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
