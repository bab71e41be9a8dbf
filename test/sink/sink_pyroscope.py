#!/usr/bin/env python3
"""sink_pyroscope.py — `listen --pyroscope` against a fake Pyroscope
(pyroscope_receiver.py: the documented /ingest contract).

usage: sink_pyroscope.py JFRSTREAM --work DIR

 (a) listen --pyroscope URL --window 1 --event cpu,alloc,lock --label
     team=perf, fed test/data/workload.jfr, a recording made here by a JDK 17
     (settings=profile, ExecutionSample period 20 ms, allocation and lock
     events on) and a live stream of a JVM captured from tools/jfr-pump
     (livelib.ensure_capture: 5 chunks, settings profile), each three times
     on its own connection in slices over ~3 s: every
     upload is decoded (gunzip; the published profile.proto through protoc
     and python3-protobuf; `go tool pprof -raw` reads each kind), its sample
     types and units are Pyroscope's for the kind, the query carries
     name=APP{labels} (app = main_class, labels source, pid, main_class,
     team), from <= until, format=pprof, spyName=jfrstream; per source and
     kind, the sum over the windows of each stack's values equals
     `jfrstream collapsed --event TYPES` (and --count) of the same bytes,
     cpu as samples x the period the stream's jdk.ActiveSetting gives (20 ms,
     the capture's 10 ms; workload.jfr has none: the default 10 ms).
 (b) the receiver answers 429, then 503, then 200: the two retries are
     counted, every window is accepted exactly once, the same bytes as the
     refused attempts, --pyroscope-app names the series.
 (c) nothing listens at the URL: the listener still reads every chunk, the
     windows beyond the queue (8 per source) are dropped and counted, the
     drain at SIGTERM is bounded and the exit line reports the counts.
 (d) 40 sources at once (workload.jfr on 40 connections): every upload
     accepted, none retried or dropped, totals 40 x collapsed per kind.
 (e) tail --pyroscope of a repository folder holding workload.jfr: the
     labels (pid, --label) and the totals per kind equal collapsed.

SKIP (77) without libcurl in the build, protoc, profile.proto or
python3-protobuf. Without a JDK 17 (a) uses workload.jfr only (said).
"""
import argparse
import collections
import gzip
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "test", "live"))
sys.path.insert(0, HERE)
import livelib as L  # noqa: E402
from pyroscope_receiver import Receiver, parse_name  # noqa: E402

WORKLOAD = os.path.join(ROOT, "test", "data", "workload.jfr")
WORKLOAD_JAVA = os.path.join(ROOT, "test", "java", "Workload.java")
PROTO = "/usr/share/gocode/src/github.com/google/pprof/proto/profile.proto"
NAME = "sink-pyroscope"

# kind -> (JFR types for `collapsed --event`, sample types, period type)
KINDS = {
    "cpu": ("jdk.ExecutionSample,com.oracle.jdk.ExecutionSample",
            [("cpu", "nanoseconds")], ("cpu", "nanoseconds")),
    "alloc_in_new_tlab": ("jdk.ObjectAllocationInNewTLAB,com.oracle.jdk.ObjectAllocationInNewTLAB",
                          [("alloc_in_new_tlab_objects", "count"),
                           ("alloc_in_new_tlab_bytes", "bytes")], ("space", "bytes")),
    "alloc_outside_tlab": ("jdk.ObjectAllocationOutsideTLAB,"
                           "com.oracle.jdk.ObjectAllocationOutsideTLAB",
                           [("alloc_outside_tlab_objects", "count"),
                            ("alloc_outside_tlab_bytes", "bytes")], ("space", "bytes")),
    "alloc_sample": ("jdk.ObjectAllocationSample",
                     [("alloc_sample_objects", "count"), ("alloc_sample_bytes", "bytes")],
                     ("space", "bytes")),
    "mutex": ("jdk.JavaMonitorEnter,com.oracle.jdk.JavaMonitorEnter",
              [("contentions", "count"), ("delay", "nanoseconds")], ("mutex", "count")),
    "block": ("jdk.ThreadPark,com.oracle.jdk.ThreadPark",
              [("contentions", "count"), ("delay", "nanoseconds")], ("block", "count")),
}
SUFFIX = re.compile(r"_\[[0-9a-z]\]$")


class Fail(Exception):
    pass


def check(cond, what):
    if not cond:
        raise Fail(what)


# ------------------------------------------------------------- decoding

def load_pb(work):
    """profile_pb2 from the published profile.proto (protoc --python_out)."""
    try:
        import google.protobuf  # noqa: F401
    except ImportError:
        sys.path.append("/usr/lib/python3/dist-packages")  # Debian's python3-protobuf
        try:
            import google.protobuf  # noqa: F401
        except ImportError:
            return None, "python3-protobuf is not installed"
    if not shutil.which("protoc") or not os.path.exists(PROTO):
        return None, "protoc or %s is absent" % PROTO
    out = os.path.join(work, "pb")
    os.makedirs(out, exist_ok=True)
    r = subprocess.run(["protoc", "--python_out=" + out, "-I", os.path.dirname(PROTO), PROTO],
                       capture_output=True, text=True, timeout=60)
    if r.returncode != 0:
        return None, "protoc failed: " + r.stderr
    sys.path.insert(0, out)
    import profile_pb2
    return profile_pb2, None


def decode(pb2, body):
    prof = pb2.Profile()
    prof.ParseFromString(gzip.decompress(body))
    st = prof.string_table
    types = [(st[t.type], st[t.unit]) for t in prof.sample_type]
    period_type = (st[prof.period_type.type], st[prof.period_type.unit]) \
        if prof.HasField("period_type") else None
    func = {f.id: st[f.name] for f in prof.function}
    loc = {l.id: [func[ln.function_id] for ln in l.line] for l in prof.location}
    stacks = collections.Counter()
    sums = collections.defaultdict(lambda: [0] * len(types))
    for s in prof.sample:
        names = []
        for lid in reversed(s.location_id):  # root first, as collapsed
            names.extend(reversed(loc[lid]))
        key = ";".join(names)
        for i, v in enumerate(s.value):
            sums[key][i] += v
        stacks[key] += 1
    return dict(types=types, period_type=period_type, period=prof.period,
                time=prof.time_nanos, duration=prof.duration_nanos, sums=sums)


def kind_of(d):
    """The kind of a decoded profile: sample types and period type (mutex
    and block differ only by the latter)."""
    for k, (_, t, pt) in KINDS.items():
        if t == d["types"] and pt == d["period_type"]:
            return k
    return None


def collapsed(jfrstream, path, event, count=False):
    args = [jfrstream, "collapsed", "--event", event] + (["--count"] if count else []) + [path]
    r = subprocess.run(args, capture_output=True, text=True, timeout=120)
    check(r.returncode == 0, "collapsed failed: %s" % r.stderr)
    out = collections.Counter()
    for line in r.stdout.splitlines():
        stack, w = line.rsplit(" ", 1)
        out[";".join(SUFFIX.sub("", f) for f in stack.split(";"))] += int(w)
    return out


def pprof_raw(body, work, kind):
    """`go tool pprof -raw` on the upload: its sample-type line."""
    go = shutil.which("go")
    if not go:
        return None
    path = os.path.join(work, "raw-%s.pb.gz" % kind)
    with open(path, "wb") as f:
        f.write(body)
    r = subprocess.run([go, "tool", "pprof", "-raw", path], capture_output=True, text=True,
                       timeout=120, env=dict(os.environ, HOME=work, PPROF_TMPDIR=work))
    check(r.returncode == 0, "go tool pprof -raw %s: %s" % (kind, r.stderr))
    lines = r.stdout.splitlines()
    i = lines.index("Samples:")
    return lines[i + 1].strip()


# ------------------------------------------------------------- running

def slow_send(port, data, seconds, pieces):
    s = L.connect(port)
    n = len(data)
    for i in range(pieces):
        s.sendall(data[i * n // pieces:(i + 1) * n // pieces])
        time.sleep(seconds / pieces)
    s.shutdown(socket.SHUT_WR)
    try:
        s.settimeout(20)
        s.recv(1)
    except OSError:
        pass
    s.close()


def run_listener(jfrstream, url, extra, feeds, settle):
    """listen --pyroscope URL; feeds: [(data, seconds, pieces)] in parallel;
    then SIGTERM. Returns (exit code, stderr text, seconds from SIGTERM to exit)."""
    p, out, err, port = L.start_listener(jfrstream, ["--pyroscope", url] + extra,
                                         keep_stdout=False)
    if port is None:
        p.kill()
        p.wait(10)
        err.join()
        return None, err.text(), 0
    ts = [threading.Thread(target=slow_send, args=(port, d, s, n)) for d, s, n in feeds]
    for t in ts:
        t.start()
    for t in ts:
        t.join(60)
    time.sleep(settle)
    t0 = time.monotonic()
    p.send_signal(signal.SIGTERM)
    rc = L.wait(p, 60, "listen")
    took = time.monotonic() - t0
    err.join()
    return rc, err.text(), took


def final_counts(text):
    m = re.search(r"pyroscope: (\d+) windows? pushed, (\d+) retried, (\d+) dropped, (\d+) failed"
                  r"(?:, (\d+) left unsent)?", text)
    check(m, "no pyroscope count line in stderr:\n" + text)
    return [int(x or 0) for x in m.groups()]


def make_jvm_recording(work):
    home, why = L.find_jdk(17)
    java = L.java_bin(home) if home else L.java_bin()
    if not java or L.java_major(java) < 17:
        return None, "no JDK 17: " + (why or "java absent")
    path = os.path.join(work, "jvm17-profile.jfr")
    if os.path.exists(path):
        return path, None
    opts = ("filename=%s.tmp,settings=profile,jdk.ExecutionSample#period=20ms,"
            "jdk.ObjectAllocationInNewTLAB#enabled=true,"
            "jdk.ObjectAllocationOutsideTLAB#enabled=true,"
            "jdk.JavaMonitorEnter#threshold=0ms,jdk.ThreadPark#threshold=0ms" % path)
    r = subprocess.run([java, "-XX:StartFlightRecording:" + opts, WORKLOAD_JAVA, "--quiet",
                        "--seconds", "3", "--threads", "3"], capture_output=True, text=True,
                       timeout=240, cwd=work)
    if r.returncode != 0 or not os.path.exists(path + ".tmp"):
        raise Fail("the JDK 17 workload failed: %s" % r.stderr[-2000:])
    os.rename(path + ".tmp", path)
    return path, None


# ------------------------------------------------------------- the cases

def case_a(jfrstream, pb2, work):
    # the recordings and the cpu sampling period each carries
    files = [WORKLOAD]
    period_of = {WORKLOAD: 10_000_000}  # no jdk.ActiveSetting: the default
    jvm, why = make_jvm_recording(work)
    if jvm:
        files.append(jvm)
        period_of[jvm] = 20_000_000  # jdk.ExecutionSample#period=20ms
    else:
        L.log("  (a): %s: no JVM recording" % why)
    java = L.java_bin()
    cap, last = L.ensure_capture(os.path.join(work, "capture"), java) if java else (None, "no java")
    if cap:
        files.append(cap)
        period_of[cap] = 10_000_000  # jfr-pump --settings profile, from the stream
    else:
        L.log("  (a): no live capture (%s)" % last)
    # each recording three times on its connection, a copy every second:
    # chunks in different windows; `collapsed` reads the same bytes
    copies = 3
    fed = []
    for f in files:
        path = os.path.join(work, "x%d-" % copies + os.path.basename(f))
        with open(path, "wb") as o:
            o.write(open(f, "rb").read() * copies)
        period_of[path] = period_of[f]
        fed.append(path)
    files = fed
    rec = Receiver().start()
    try:
        rc, err, _ = run_listener(jfrstream, rec.url,
                                  ["--window", "1", "--event", "cpu,alloc,lock",
                                   "--label", "team=perf"],
                                  [(open(f, "rb").read(), 3, copies) for f in files], 1.5)
    finally:
        rec.stop()
    if rc is None and "without libcurl" in err:
        return "skip", err
    check(rc == 0, "listen exit %s:\n%s" % (rc, err))
    pushed, retried, dropped, failed, left = final_counts(err)
    reqs = rec.requests
    check(len(reqs) == pushed and all(r["status"] == 200 for r in reqs),
          "%d requests, %d pushed" % (len(reqs), pushed))
    check((retried, dropped, failed, left) == (0, 0, 0, 0), "counts %s" % err)
    # per source (pid label): per kind, the sum over windows
    got = collections.defaultdict(lambda: collections.defaultdict(lambda: None))
    windows = collections.Counter()
    seen_raw = set()
    periods = {}
    for r in reqs:
        q, h = r["query"], r["headers"]
        check(r["path"] == "/ingest", r["path"])
        check(q.get("format") == "pprof" and q.get("spyName") == "jfrstream", str(q))
        check(h.get("Content-Type") == "application/octet-stream", str(h))
        check(int(q["from"]) <= int(q["until"]), "from > until: %s" % q)
        app, labels = parse_name(q["name"])
        for k in ("source", "pid", "main_class"):
            check(k in labels, "label %s missing in %s" % (k, q["name"]))
        check(labels.get("team") == "perf", "--label team=perf missing: %s" % q["name"])
        check(app == re.sub(r"[^A-Za-z0-9_.\-/]", "_", labels["main_class"]),
              "app %s, main_class %s" % (app, labels["main_class"]))
        check(r["body"][:2] == b"\x1f\x8b", "body not gzip")
        d = decode(pb2, r["body"])
        kind = kind_of(d)
        check(kind, "unexpected sample/period types %s %s" % (d["types"], d["period_type"]))
        check(d["time"] // 10**9 >= int(q["from"]) - 1, "time_nanos %d vs from %s" %
              (d["time"], q["from"]))
        if kind == "cpu":
            periods.setdefault(labels["pid"], set()).add(d["period"])
        if kind not in seen_raw:
            line = pprof_raw(r["body"], work, kind)
            if line is not None:
                want = " ".join("%s/%s%s" % (t, u, "[dflt]" if i == 0 else "")
                                for i, (t, u) in enumerate(KINDS[kind][1]))
                check(line == want, "pprof -raw %s: '%s', not '%s'" % (kind, line, want))
            seen_raw.add(kind)
        acc = got[labels["pid"]]
        if acc[kind] is None:
            acc[kind] = collections.defaultdict(lambda: [0] * len(d["types"]))
        for stack, vals in d["sums"].items():
            for i, v in enumerate(vals):
                acc[kind][stack][i] += v
        windows[(labels["pid"], kind)] += 1
    pid_of = {}
    for f in files:
        r = subprocess.run([jfrstream, "print", "--json", "--events", "jdk.JVMInformation", f],
                           capture_output=True, text=True, timeout=60)
        m = re.search(r'"pid": *(\d+)', r.stdout)
        check(m, "no pid in %s" % f)
        pid_of[f] = m.group(1)
    total_stacks = 0
    for f in files:
        pid = pid_of[f]
        period = period_of[f]
        check(periods.get(pid) == {period}, "%s: cpu period %s, not %d" %
              (os.path.basename(f), periods.get(pid), period))
        for kind, (event, types, _) in KINDS.items():
            weight = collapsed(jfrstream, f, event)
            count = collapsed(jfrstream, f, event, count=True)
            ours = got[pid][kind] or {}
            if len(types) == 1:  # cpu: samples x period
                want = {s: [w * period] for s, w in weight.items()}
            else:
                want = {s: [count[s], weight[s]] for s in weight}
            ours = {s: v for s, v in ours.items()}
            if ours != want:
                diff = [s for s in set(ours) | set(want) if ours.get(s) != want.get(s)][:3]
                raise Fail("%s %s: %d stacks vs collapsed %d; differ: %s" % (
                    os.path.basename(f), kind, len(ours), len(want),
                    [(s[-80:], ours.get(s), want.get(s)) for s in diff]))
            total_stacks += len(want)
            L.log("  (a) %s %-18s %3d windows, %4d stacks, values %s" % (
                os.path.basename(f), kind, windows[(pid, kind)], len(want),
                [sum(v[i] for v in want.values()) for i in range(len(types))]))
    multi = max(windows.values()) if windows else 0
    check(multi >= 2, "every kind came in one window: the windows were not exercised")
    return "ok", "%d files, %d uploads (up to %d windows per kind), %d stacks equal to collapsed" % (
        len(files), len(reqs), multi, total_stacks)


def case_b(jfrstream, pb2, work):
    rec = Receiver(fail=[429, 503]).start()
    try:
        rc, err, _ = run_listener(jfrstream, rec.url,
                                  ["--window", "1", "--event", "cpu,lock",
                                   "--pyroscope-app", "my-app/svc"],
                                  [(open(WORKLOAD, "rb").read(), 1, 2)], 5)
    finally:
        rec.stop()
    check(rc == 0, "listen exit %s:\n%s" % (rc, err))
    pushed, retried, dropped, failed, left = final_counts(err)
    reqs = rec.requests
    check([r["status"] for r in reqs[:2]] == [429, 503], "first answers %s" %
          [r["status"] for r in reqs[:2]])
    acc = [r for r in reqs if r["status"] == 200]
    check(retried == 2 and dropped == 0 and failed == 0 and left == 0,
          "counts %s" % [pushed, retried, dropped, failed, left])
    check(pushed == len(acc), "pushed %d, accepted %d" % (pushed, len(acc)))
    keys = collections.Counter()
    for r in acc:
        app, _ = parse_name(r["query"]["name"])
        check(app == "my-app/svc", "app %s" % app)
        d = decode(pb2, r["body"])
        keys[(kind_of(d), d["time"])] += 1
    dup = [k for k, n in keys.items() if n > 1]
    check(not dup, "windows accepted twice: %s" % dup)
    bodies = {r["body"] for r in acc}
    check(all(r["body"] in bodies for r in reqs[:2]), "a refused window never arrived")
    return "ok", "%d requests: 429, 503, then %d windows accepted once each; %d retried" % (
        len(reqs), len(acc), retried)


def case_c(jfrstream, work):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens there now
    data = open(WORKLOAD, "rb").read()
    copies = 14
    t0 = time.monotonic()
    rc, err, took = run_listener(jfrstream, "http://127.0.0.1:%d" % port,
                                 ["--window", "1", "--event", "cpu,alloc,lock"],
                                 [(data * copies, 7, copies)], 1.5)
    check(rc == 0, "listen exit %s:\n%s" % (rc, err))
    m = re.search(r"stream ended: (\d+) chunks?, (\d+) events?", err)
    check(m and int(m.group(1)) == copies, "the listener did not read every chunk:\n" + err)
    pushed, retried, dropped, failed, left = final_counts(err)
    check(pushed == 0, "pushed %d to nowhere" % pushed)
    check(dropped > 0, "nothing dropped:\n" + err)
    check(left <= 9, "more left than the queue holds (8 waiting + 1 in flight): %d" % left)
    check(retried > 0, "no retry counted")
    check(took < 10 + 5, "the drain took %.1f s (bounded at 10 s)" % took)
    check("Couldn't connect" in err or "refused" in err.lower() or "connect" in err,
          "the reason is not given:\n" + err)
    return "ok", "%d chunks read with the receiver down; %d dropped, %d retried, %d failed, " \
        "%d left after a %.1f s drain (run %.1f s)" % (copies, dropped, retried, failed, left,
                                                         took, time.monotonic() - t0)


def case_d(jfrstream, pb2, work):
    n = 40
    data = open(WORKLOAD, "rb").read()
    rec = Receiver().start()
    try:
        rc, err, _ = run_listener(jfrstream, rec.url, ["--window", "1", "--event", "cpu,lock"],
                                  [(data, 0.5, 2)] * n, 3)
    finally:
        rec.stop()
    check(rc == 0, "listen exit %s:\n%s" % (rc, err))
    pushed, retried, dropped, failed, left = final_counts(err)
    check(err.count("stream ended") == n, "not every connection ended cleanly")
    reqs = rec.requests
    check((pushed, retried, dropped, failed, left) == (len(reqs), 0, 0, 0, 0),
          "counts %s for %d requests" % ([pushed, retried, dropped, failed, left], len(reqs)))
    per_kind = collections.Counter()
    totals = collections.Counter()
    for r in reqs:
        d = decode(pb2, r["body"])
        k = kind_of(d)
        per_kind[k] += 1
        totals[k] += sum(v[-1] for v in d["sums"].values())
    want = {k: sum(collapsed(jfrstream, WORKLOAD, KINDS[k][0]).values()) * n *
            (10_000_000 if k == "cpu" else 1) for k in ("cpu", "mutex", "block")}
    check(dict(totals) == want, "totals %s, want %s" % (dict(totals), want))
    check(all(per_kind[k] >= n for k in want), "uploads per kind %s" % dict(per_kind))
    return "ok", "%d sources at once: %d uploads (%s), totals = %d x collapsed" % (
        n, len(reqs), ", ".join("%s %d" % kv for kv in sorted(per_kind.items())), n)


def case_e(jfrstream, pb2, work):
    """tail --pyroscope of a repository folder holding the fixture (a final
    chunk): the per-kind totals of the uploads equal collapsed of the file,
    and the source's labels name the path."""
    repo = os.path.join(work, "tail-repo")
    shutil.rmtree(repo, ignore_errors=True)
    os.makedirs(repo)
    shutil.copy(WORKLOAD, os.path.join(repo, "2026_11_24_10_00_00.jfr"))
    rec = Receiver().start()
    try:
        r = subprocess.run([jfrstream, "tail", repo, "--exit-when-done", "--pyroscope", rec.url,
                            "--window", "1", "--event", "cpu,lock", "--label", "team=tail"],
                           capture_output=True, text=True, timeout=90)
    finally:
        rec.stop()
    check(r.returncode == 0, "tail exit %s:\n%s" % (r.returncode, r.stderr))
    pushed, retried, dropped, failed, left = final_counts(r.stderr)
    reqs = rec.requests
    check((pushed, retried, dropped, failed, left) == (len(reqs), 0, 0, 0, 0) and reqs,
          "counts %s for %d requests" % ([pushed, retried, dropped, failed, left], len(reqs)))
    totals = collections.Counter()
    for q in reqs:
        app, labels = parse_name(q["query"]["name"])
        check(labels.get("team") == "tail" and labels.get("pid") == "14951",
              "labels of a tail upload: %s" % labels)
        d = decode(pb2, q["body"])
        totals[kind_of(d)] += sum(v[-1] for v in d["sums"].values())
    want = {k: sum(collapsed(jfrstream, WORKLOAD, KINDS[k][0]).values()) *
            (10_000_000 if k == "cpu" else 1) for k in ("cpu", "mutex", "block")}
    check(dict(totals) == want, "tail totals %s, want %s" % (dict(totals), want))
    shutil.rmtree(repo, ignore_errors=True)
    return "ok", "tail of a repository: %d uploads, totals = collapsed (%s)" % (
        len(reqs), ", ".join("%s %d" % kv for kv in sorted(totals.items())))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("jfrstream")
    ap.add_argument("--work", required=True)
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    jfrstream = L.cli(a.jfrstream)
    r = subprocess.run([jfrstream, "listen", "--pyroscope", "http://127.0.0.1:9", "--help"],
                       capture_output=True, text=True, timeout=30)
    if "without libcurl" in r.stderr:
        return L.skip(NAME, "jfrstream is built without libcurl")
    pb2, why = load_pb(a.work)
    if pb2 is None:
        return L.skip(NAME, why)
    rc = 0
    try:
        for name, fn in (("(a) kinds, labels, totals", lambda: case_a(jfrstream, pb2, a.work)),
                         ("(b) 429, 503, then 200", lambda: case_b(jfrstream, pb2, a.work)),
                         ("(c) receiver down", lambda: case_c(jfrstream, a.work)),
                         ("(d) many sources", lambda: case_d(jfrstream, pb2, a.work)),
                         ("(e) tail", lambda: case_e(jfrstream, pb2, a.work))):
            try:
                st, detail = fn()
            except Fail as e:
                rc |= L.result(NAME + " " + name, False, str(e))
                continue
            if st == "skip":
                return L.skip(NAME, detail)
            L.result(NAME + " " + name, True, detail)
    finally:
        L.cleanup()
    return rc


if __name__ == "__main__":
    sys.exit(main())
