#!/usr/bin/env python3
"""print_text.py — `jfrstream print` (text) against JDK 25's `jfr print`.

usage: print_text.py --jfrstream J (--jfr JFR25 | --expected OUT --events LIST)
                     [--feed-size S] [--events LIST] [--exact] FILE...

For each FILE both tools print the same events and the outputs must be
identical, byte for byte. JDK 25's PrettyWriter throws on some values (a
@Timespan near Long.MAX_VALUE overflows its rounding: "jfr print:
unexpected internal error, long overflow") and then prints nothing: the
event types it fails on are found by halving the type list, reported, and
left out of the comparison on both sides (with --events, as the JDK's own
filter leaves them out: the queue then holds the same events on both
sides, so even ties come out in the same order). jfrstream must still print
those types (exit 0). Options of oracle.py that do not concern the text
(--no-summary, --exact-numbers, ...) are accepted and ignored, so that
recordings.sh can call either.

Exit 0 equal, 1 differences, 77 no JDK 25 given (the text of older JDKs
differs: not a reference).
"""
import argparse
import difflib
import os
import re
import shlex
import subprocess
import sys

CRASH = "unexpected internal error"


def run(cmd, timeout):
    try:
        p = subprocess.run(cmd, capture_output=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, "timed out after %d s" % timeout, -1
    return p.stdout, p.stderr.decode("utf-8", "replace"), p.returncode


def ours(args, extra, path):
    cmd = shlex.split(os.environ.get("JFRSTREAM_TEST_WRAPPER", "")) + [args.jfrstream]
    if args.feed_size:
        cmd += ["--feed-size", args.feed_size]
    return run(cmd + ["print"] + extra + [path], args.timeout)


def types_of(args, path):
    """The event types with events in the file (jfrstream summary)."""
    out, err, rc = run([args.jfrstream, "summary", path], args.timeout)
    if rc != 0:
        raise SystemExit("print_text: jfrstream summary %s failed: %s" % (path, err))
    names, table = [], False
    for line in out.decode("utf-8", "replace").splitlines():
        if line.startswith("====="):
            table = True
        elif table and line.split():
            parts = line.split()
            if len(parts) >= 3 and parts[1].isdigit() and int(parts[1]) > 0:
                names.append(parts[0])
    return names


def ref_print(args, names, path):
    """(bytes, crashed) of the JDK's print of these types."""
    extra = ["--events", ",".join(names)] if names is not None else []
    out, err, rc = run([args.jfr, "print"] + ([] if not args.exact else ["--exact"]) + extra +
                       [path], args.timeout)
    crashed = rc != 0 and CRASH in err
    if rc != 0 and not crashed:
        raise SystemExit("print_text: %s print %s failed (exit %s): %s" % (args.jfr, path, rc, err[:400]))
    return out, crashed


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


def compare(label, exp, act, max_lines=40):
    if exp == act:
        return True
    e = exp.decode("utf-8", "replace").splitlines()
    a = act.decode("utf-8", "replace").splitlines()
    d = list(difflib.unified_diff(e, a, label, "jfrstream", lineterm="", n=1))
    for line in d[:max_lines]:
        print("    " + line)
    if len(d) > max_lines:
        print("    ... (%d more diff lines)" % (len(d) - max_lines))
    return False


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("files", nargs="+", metavar="FILE")
    ap.add_argument("--jfrstream", required=True)
    ap.add_argument("--jfr", help="JDK 25's jfr")
    ap.add_argument("--expected", help="stored JDK 25 output (one FILE, with --events)")
    ap.add_argument("--events")
    ap.add_argument("--feed-size")
    ap.add_argument("--exact", action="store_true", help="print --exact on both sides")
    ap.add_argument("--timeout", type=int, default=900)
    for ignored in ("--no-summary", "--no-metadata", "--no-json", "--exact-numbers", "--strict",
                    "--no-per-chunk", "--check-duplicates"):
        ap.add_argument(ignored, action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--stack-depth", help=argparse.SUPPRESS)
    args = ap.parse_args()
    fmt = ["--exact"] if args.exact else []

    if args.expected:
        if len(args.files) != 1 or not args.events:
            ap.error("--expected needs one FILE and --events")
        with open(args.expected, "rb") as f:
            exp = f.read()
        act, err, rc = ours(args, fmt + ["--events", args.events], args.files[0])
        if rc != 0:
            print("%s: FAIL: jfrstream exit %s: %s" % (args.files[0], rc, err[:400]))
            return 1
        ok = compare("expected", exp, act)
        print("%s: %s (%d bytes)" % (args.files[0], "OK" if ok else "DIFF", len(act)))
        return 0 if ok else 1

    if not args.jfr:
        print("print_text: SKIP: no JDK 25 jfr given (older JDKs print another text)")
        return 77
    m = re.match(rb"\s*(\d+)", subprocess.run([args.jfr, "version"], capture_output=True).stdout)
    if not m or int(m.group(1)) < 25:
        print("print_text: SKIP: %s is older than JDK 25 (its text differs: not a reference)" % args.jfr)
        return 77

    status = 0
    for path in args.files:
        names = types_of(args, path)
        if args.events:
            want = set(args.events.split(","))
            names = [n for n in names if n in want or n.rsplit(".", 1)[-1] in want]
        exp, crashed = ref_print(args, None if not args.events else names, path)
        left_out = []
        if crashed:
            left_out = crashing(args, names, path)
            names = [n for n in names if n not in left_out]
            exp, crashed = ref_print(args, names, path)
            if crashed:
                raise SystemExit("print_text: %s still fails without %s" % (args.jfr, left_out))
        sel = ["--events", ",".join(names)] if (left_out or args.events) else []
        act, err, rc = ours(args, fmt + sel, path)
        if rc != 0:
            print("%s: FAIL: jfrstream exit %s: %s" % (path, rc, err[:400]))
            status = 1
            continue
        ok = compare("jfr25", exp, act)
        note = ""
        if left_out:
            # the types the JDK fails on: ours must print them all the same
            o2, e2, r2 = ours(args, fmt + ["--events", ",".join(left_out)], path)
            note = " (JDK 25 fails on %s: left out; jfrstream printed them, exit %s, %d bytes)" % (
                ",".join(left_out), r2, len(o2 or b""))
            if r2 != 0:
                print("    jfrstream failed on them: %s" % e2[:300])
                ok = False
        print("%s: %s, %d bytes, %d event types%s" % (path, "OK" if ok else "DIFF", len(act),
                                                       len(names), note))
        if not ok:
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
