#!/usr/bin/env python3
"""refchain.py — reference chains of any depth in `jfrstream print --json`.

    python3 test/cli/refchain.py JFRSTREAM [--jfr JDK_BIN_JFR | --jdk25] [--keep DIR]

Writes synthetic recordings (with test/mkjfr.py's encoders) shaped like
HotSpot's jdk.OldObjectSample chains: an event holds a pooled chain.Object,
whose pooled `referrer` (a chain.Reference) holds the next pooled
chain.Object, and so on. Two levels of JSON per reference, as in the JDK's
OldObject -> Reference -> OldObject.

  chain-250     250 objects in a line (the last one's referrer is key 0,
                undefined: null); events start at objects 1, 64 and 250.
  cycle-200     200 objects, the 200th refers back to the 101st. A cycle is
                cut where a reference leads to an object already open on
                the printed path: from object 1 the chain prints 200 objects
                and object 200's referrer.object is null; from object 150 it
                prints 150..200, 101..149, then null.
  chain-1e6     10^6 objects in a line (hostile): the printer stops at
                EVJSON_MAX_NEST (4096) levels with exit status 1 and a
                message naming chunk and byte offset; valid JSON, no crash,
                bounded time.
  wrapped       a simpleType wrapping an array of structs, inline, pooled
                and in an array: printed as (nested) plain arrays.
  dag-60        60 pairs whose halves both refer to the next pair (hostile):
                2^60 objects to print; the printer stops after
                EVJSON_MAX_OBJECTS (2^20) with exit status 1 and a message.

Every printed event is compared with the value computed here (field by
field, the whole chain), stderr must be empty and the exit status 0 (but for
chain-1e6). With --jfr (JDK 25's `jfr` as the reference; --jdk25: the `jfr`
of the JDK 25 or newer that test/find_jdk.py finds, skipped when none) the JDK's
`print --json` of chain-250 must be identical event by event (test/oracle/oracle.py);
for cycle-200 the JDK's output is printed for information (its resolver cuts
cycles in the order it resolves the pool, not by path; see cmd_print.c).
"""

import json
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import mkjfr  # noqa: E402
from mkjfr import Element, checkpoint_record, field, header, klass, layout, record, s_utf8, varint  # noqa: E402

OBJ, REF, LEAK, PAIR, DAG, PT, WRAP, WEV = 300, 301, 302, 303, 304, 305, 306, 307
mkjfr.T.update(Object=OBJ, Reference=REF, Leak=LEAK, Pair=PAIR, Dag=DAG, Pt=PT, Wrap=WRAP,
               Wrapped=WEV)
MAX_NEST = 4096
MAX_OBJECTS = 1048576


def type_system(with_late):
    del with_late
    c = [
        klass("long", mkjfr.T["long"]), klass("int", mkjfr.T["int"]),
        klass("java.lang.String", mkjfr.T["String"]),
        klass("chain.Object", OBJ, fields=[
            field("address", "long"), field("description", "String"),
            field("referrer", "Reference", pool=True)]),
        klass("chain.Reference", REF, fields=[
            field("object", "Object", pool=True), field("skip", "int")]),
        klass("chain.Leak", LEAK, "jdk.jfr.Event", fields=[
            field("startTime", "long"), field("object", "Object", pool=True),
            field("n", "int")]),
        klass("chain.Pair", PAIR, fields=[
            field("left", "Pair", pool=True), field("right", "Pair", pool=True)]),
        klass("chain.Dag", DAG, "jdk.jfr.Event", fields=[
            field("startTime", "long"), field("pair", "Pair", pool=True)]),
        # a simpleType wrapping an array of structs: printed as a plain array
        klass("chain.Pt", PT, fields=[field("a", "int"), field("s", "String")]),
        klass("chain.Wrap", WRAP, simple=True, fields=[field("values", "Pt", array=True)]),
        klass("chain.Wrapped", WEV, "jdk.jfr.Event", fields=[
            field("startTime", "long"), field("w", "Wrap"), field("pw", "Wrap", pool=True),
            field("ws", "Wrap", array=True)]),
    ]
    region = Element("region", [("locale", "en_US"), ("gmtOffset", "0"), ("dst", "0")])
    return Element("root", [], [Element("metadata", [], c), region])


mkjfr.type_system = type_system


def build(nobj, back_to, starts):
    """Objects 1..nobj; object i's referrer is Reference i whose object is
    i + 1, except object nobj: referrer key 0 (undefined) or, with back_to,
    a Reference to object back_to. Events: one per start key."""
    objs, refs = [], []
    for i in range(1, nobj + 1):
        nxt = i + 1 if i < nobj else back_to
        objs.append((i, varint(0x1000 + i) + s_utf8("node %d" % i) + varint(i if nxt else 0)))
        if nxt:
            refs.append((i, varint(nxt) + varint(i % 3)))
    t0 = mkjfr.START_TICKS0
    recs = [("meta", mkjfr.metadata_record(t0, 1, False, 3)),
            ("cp", checkpoint_record(t0, 0, 1, [(OBJ, objs), (REF, refs)]))]
    for n, k in enumerate(starts):
        recs.append(record(LEAK, varint(t0 + 10 + n) + varint(k) + varint(n)))
    body, meta, cp = layout(recs)
    h = header(len(body), cp, meta, mkjfr.START_NANOS0, 10 ** 9, t0, True)
    return bytes(h) + bytes(body[68:]), len(body) - len(recs[-1])


def build_dag(depth):
    """Pairs 1..depth, both halves of pair i referring to pair i + 1: one
    event prints 2^depth objects."""
    pairs = [(i, varint(i + 1 if i < depth else 0) * 2) for i in range(1, depth + 1)]
    t0 = mkjfr.START_TICKS0
    recs = [("meta", mkjfr.metadata_record(t0, 1, False, 3)),
            ("cp", checkpoint_record(t0, 0, 1, [(PAIR, pairs)])),
            record(DAG, varint(t0 + 10) + varint(1))]
    body, meta, cp = layout(recs)
    h = header(len(body), cp, meta, mkjfr.START_NANOS0, 10 ** 9, t0, True)
    return bytes(h) + bytes(body[68:]), len(body) - len(recs[-1])


def build_wrapped():
    def wrap(n):
        return varint(n) + b"".join(varint(i) + s_utf8("p%d" % i) for i in range(n))
    t0 = mkjfr.START_TICKS0
    recs = [("meta", mkjfr.metadata_record(t0, 1, False, 3)),
            ("cp", checkpoint_record(t0, 0, 1, [(WRAP, [(1, wrap(2))])])),
            record(WEV, varint(t0 + 1) + wrap(3) + varint(1) + varint(2) + wrap(1) + wrap(0)),
            record(WEV, varint(t0 + 2) + wrap(0) + varint(7) + varint(0))]
    body, meta, cp = layout(recs)
    h = header(len(body), cp, meta, mkjfr.START_NANOS0, 10 ** 9, t0, True)
    return bytes(h) + bytes(body[68:])


def pts(n):
    return [{"a": i, "s": "p%d" % i} for i in range(n)]


WRAPPED = [{"startTime": mkjfr.START_TICKS0 + 1, "w": pts(3), "pw": pts(2), "ws": [pts(1), []]},
           {"startTime": mkjfr.START_TICKS0 + 2, "w": [], "pw": None, "ws": []}]


def expected(nobj, back_to, start):
    """The object at `start` as printed: cycles cut by the path."""
    def nxt(i):
        return i + 1 if i < nobj else back_to

    # built bottom-up (no recursion: chains are long)
    path = []
    i = start
    while i and i not in path:
        path.append(i)
        i = nxt(i)
    # `i` is 0 (chain end) or on the path (cycle): its slot prints null
    val = None
    for k in reversed(path):
        ref = None if not nxt(k) else {"object": val, "skip": k % 3}
        val = {"address": 0x1000 + k, "description": "node %d" % k, "referrer": ref}
    return val, len(path)


def run(cli, path, timeout=120):
    t = time.monotonic()
    p = subprocess.run(os.environ.get("JFRSTREAM_TEST_WRAPPER", "").split() +
                       [cli, "print", "--json", path], capture_output=True, timeout=timeout)
    return p.returncode, p.stdout, p.stderr.decode(errors="replace"), time.monotonic() - t


def depth_of(v):
    d = 0
    while isinstance(v, dict):
        d += 1
        v = v["referrer"]["object"] if v.get("referrer") else None
    return d


def main():
    args = sys.argv[1:]
    if not args:
        sys.stderr.write(__doc__)
        return 2
    cli, jfr, keep = args[0], None, None
    i = 1
    while i < len(args):
        if args[i] == "--jdk25":
            from find_jdk import find_jdk
            home, why = find_jdk(25)
            print("refchain: %s%s" % (why, "" if home else ": no comparison with the JDK's jfr"))
            jfr = os.path.join(home, "bin", "jfr") if home else None
            i += 1
            continue
        if args[i] == "--jfr":
            jfr = args[i + 1]
        elif args[i] == "--keep":
            keep = args[i + 1]
        i += 2
    if jfr and not os.path.exists(jfr):
        jfr = None
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 4 * MAX_NEST + 1000))
    bad = 0
    tmp = tempfile.TemporaryDirectory()
    d = keep or tmp.name
    os.makedirs(d, exist_ok=True)

    def fail(msg):
        nonlocal bad
        bad += 1
        print("FAIL: " + msg)

    cases = [("chain-250", 250, 0, [1, 64, 250]), ("cycle-200", 200, 101, [1, 150, 200])]
    for name, nobj, back, starts in cases:
        f = os.path.join(d, name + ".jfr")
        with open(f, "wb") as out:
            out.write(build(nobj, back, starts)[0])
        rc, out, err, secs = run(cli, f)
        if rc != 0 or err:
            fail("%s: exit %d, stderr %r" % (name, rc, err[:300]))
            continue
        events = json.loads(out)["recording"]["events"]
        if len(events) != len(starts):
            fail("%s: %d events, want %d" % (name, len(events), len(starts)))
            continue
        depths = []
        for n, (ev, k) in enumerate(zip(events, starts)):
            want, nlev = expected(nobj, back, k)
            got = ev["values"]
            if ev["type"] != "chain.Leak" or got["n"] != n or got["object"] != want:
                fail("%s: event %d (from object %d) differs from the expected chain of %d"
                     % (name, n, k, nlev))
            depths.append(depth_of(got["object"]))
        print("%s: %d bytes, %d events, chain lengths printed %s, %d bytes of JSON, %.2f s: %s"
              % (name, os.path.getsize(f), len(events), depths, len(out), secs,
                 "ok" if not bad else "FAIL"))
        if name == "chain-250" and depths != [250, 187, 1]:
            fail("chain-250: printed chain lengths %s, want [250, 187, 1]" % depths)
        if name == "cycle-200" and depths != [200, 100, 100]:
            fail("cycle-200: printed chain lengths %s, want [200, 100, 100]" % depths)
        if jfr:
            jp = subprocess.run([jfr, "print", "--json", f], capture_output=True, timeout=300)
            if jp.returncode != 0:
                fail("%s: jfr exit %d: %s" % (name, jp.returncode, jp.stderr[:300]))
                continue
            if name == "chain-250":
                with open(f + ".jdk.json", "wb") as o:
                    o.write(jp.stdout)
                ok = jp.stdout == out
                print("chain-250: byte-identical to `%s print --json`: %s" % (jfr, ok))
                if not ok:
                    o = subprocess.run([sys.executable, os.path.join(os.path.dirname(
                        os.path.abspath(__file__)), "..", "oracle", "oracle.py"), "--jfrstream", cli,
                        "--jfr", jfr, f], capture_output=True, text=True)
                    print(o.stdout[-3000:])
                    fail("chain-250: differs from the JDK's output")
            else:
                jev = json.loads(jp.stdout)["recording"]["events"]
                print("cycle-200: the JDK prints chain lengths %s (its resolver's order; "
                      "jfrstream cuts by path)" % [depth_of(e["values"]["object"]) for e in jev])

    # hostile: 10^6 deep; stop at the nesting limit, say so, stay bounded
    name, n = "chain-1e6", 10 ** 6
    f = os.path.join(d, name + ".jfr")
    data, last_ev = build(n, 0, [1])
    with open(f, "wb") as out:
        out.write(data)
    rc, out, err, secs = run(cli, f, timeout=300)
    want_err = ("jfrstream: %s: chunk 0 at byte %d: chain.Leak event could not be fully decoded: "
                "objects nested deeper than %d levels" % (f, last_ev, MAX_NEST))
    if rc != 1 or not err.startswith(want_err):
        fail("%s: exit %d, stderr %r, want exit 1 and %r" % (name, rc, err[:300], want_err))
    try:
        ev = json.loads(out)["recording"]["events"]
        got = depth_of(ev[0]["values"]["object"])
    except (ValueError, KeyError, IndexError) as e:
        got = -1
        fail("%s: output is not the expected JSON: %s" % (name, e))
    # two levels per link (object, reference): the last object printed is
    # at level MAX_NEST - 1, its reference at MAX_NEST, the next object null
    if got != MAX_NEST // 2:
        fail("%s: %d objects printed before the limit, want %d" % (name, got, MAX_NEST // 2))
    print("%s: %d bytes, exit %d, %d objects printed, %d bytes of JSON, %.2f s; stderr: %s"
          % (name, os.path.getsize(f), rc, got, len(out), secs, err.strip()[:200]))

    # simpleType values wrapping arrays of structs (nested plain arrays)
    f = os.path.join(d, "wrapped.jfr")
    with open(f, "wb") as out:
        out.write(build_wrapped())
    rc, out, err, secs = run(cli, f)
    got = [e["values"] for e in json.loads(out)["recording"]["events"]] if rc == 0 else None
    if rc != 0 or err or got != WRAPPED:
        fail("wrapped: exit %d, stderr %r, values %s" % (rc, err[:200], got))
    print("wrapped: simpleType-wrapped arrays of structs as plain arrays: %s"
          % ("ok" if got == WRAPPED else "FAIL"))

    # hostile: a shared reference at each of 60 levels, 2^60 objects to
    # print: stop after MAX_OBJECTS, say so (the JSON, ~250 MB, is dropped)
    name = "dag-60"
    f = os.path.join(d, name + ".jfr")
    data, last_ev = build_dag(60)
    with open(f, "wb") as out:
        out.write(data)
    t = time.monotonic()
    p = subprocess.run(os.environ.get("JFRSTREAM_TEST_WRAPPER", "").split() +
                       [cli, "print", "--json", f], stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, timeout=300)
    secs = time.monotonic() - t
    err = p.stderr.decode(errors="replace")
    want_err = ("jfrstream: %s: chunk 0 at byte %d: chain.Dag event could not be fully decoded: "
                "more than %d objects and arrays in one event" % (f, last_ev, MAX_OBJECTS))
    if p.returncode != 1 or not err.startswith(want_err):
        fail("%s: exit %d, stderr %r, want exit 1 and %r" % (name, p.returncode, err[:300], want_err))
    print("%s: %d bytes, exit %d, %.2f s; stderr: %s"
          % (name, len(data), p.returncode, secs, err.strip()[:200]))
    print("refchain: %s" % ("FAIL" if bad else "ok"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
