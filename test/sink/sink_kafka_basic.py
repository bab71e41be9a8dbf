"""sink_kafka_basic.py — `listen --kafka` end to end against librdkafka's mock
cluster (test/sink/mock_kafka.c, 3 brokers), read back with kcat.

    sink_kafka_basic.py JFRSTREAM MOCK_KAFKA FIXTURE

The fixture is sent over a socket to `listen 127.0.0.1:0 --kafka ... --once`;
then kcat (an independent consumer) reads the topic. Checks:
  - one message per event: as many as `summary` counts events, and as many
    as `listen --json` prints lines for the same bytes;
  - every payload is that `listen --json` line, byte for byte, with
    ,"source":{labels},"id":"SOURCE/CHUNKSTART/OFFSET" before its last brace,
    in the same order (one key: the source id "HOST:PID:JVM_START", so one
    partition), every id distinct;
  - the labels: pid 14951, the main class, the --label given;
  - --kafka-topic 'jfr-{type}' with --events: the selected types only, each
    in its own topic, with its count;
  - --kafka-format otlp-json: valid JSON, the resource attributes, one log
    record per message whose body holds the event's values;
  - tail --kafka of a repository with a 5-message producer queue: every
    event once, in order (the tail waits while the queue is full);
  - an unknown --kafka-option is a usage error (exit 2) in librdkafka's words.
SKIP (77) without a librdkafka build (no mock_kafka) or without kcat.
"""
import json
import os
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

from kafkalib import summary_events  # noqa: E402

SKIP = 77
NAME = "sink-kafka-basic"
PID = "14951"
MAIN = "jdk.compiler/com.sun.tools.javac.launcher.Main"
children = []


def fail(msg):
    print("FAIL: %s: %s" % (NAME, msg), flush=True)
    sys.exit(1)


def check(cond, msg):
    if not cond:
        fail(msg)


def start(args, **kw):
    p = subprocess.Popen(args, **kw)
    children.append(p)
    return p


def cleanup():
    for p in children:
        if p.poll() is None:
            p.kill()
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass


def readline(stream, timeout):
    """One line of a child's stdout within `timeout` seconds."""
    end = time.time() + timeout
    buf = b""
    fd = stream.fileno()
    while time.time() < end:
        r, _, _ = select.select([fd], [], [], max(0.0, end - time.time()))
        if not r:
            break
        c = os.read(fd, 1)
        if not c:
            break
        if c == b"\n":
            return buf.decode()
        buf += c
    return None


def listen_run(jfrstream, fixture, extra, timeout=60):
    """listen 127.0.0.1:0 --once EXTRA; the fixture sent over a socket.
    Returns (exit status, stdout bytes, stderr text)."""
    errf = tempfile.TemporaryFile()
    p = start([jfrstream, "listen", "127.0.0.1:0", "--once"] + extra,
              stdout=subprocess.PIPE, stderr=errf)
    port = None
    end = time.time() + 20
    while time.time() < end and port is None:
        errf.seek(0)
        for line in errf.read().decode(errors="replace").splitlines():
            if "listening on " in line:
                port = int(line.rsplit(":", 1)[1])
        if p.poll() is not None:
            break
        time.sleep(0.05)
    if port is None:
        p.kill()
        p.wait()
        errf.seek(0)
        return p.returncode, b"", errf.read().decode(errors="replace")
    with socket.create_connection(("127.0.0.1", port), timeout=20) as s:
        with open(fixture, "rb") as f:
            s.sendall(f.read())
    try:
        out, _ = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
        fail("listen %s did not exit within %d s" % (" ".join(extra), timeout))
    errf.seek(0)
    err = errf.read().decode(errors="replace")
    errf.close()
    return p.returncode, out, err


def consume(bootstrap, topic, expect):
    """Every message of `topic` (kcat -J): [(partition, key, payload)]."""
    r = subprocess.run(["kcat", "-C", "-b", bootstrap, "-t", topic, "-o", "beginning", "-e",
                        "-q", "-J", "-c", str(expect + 10)],
                       capture_output=True, timeout=60)
    msgs = []
    for line in r.stdout.decode().splitlines():
        if line.strip():
            m = json.loads(line)
            msgs.append((m["partition"], m.get("key"), m["payload"]))
    return msgs


KINDS = {"stringValue", "boolValue", "intValue", "doubleValue", "arrayValue", "kvlistValue"}


def from_any(v, where):
    """An OTLP/JSON AnyValue back to plain JSON; fails on a malformed one."""
    check(isinstance(v, dict) and len(v) <= 1 and set(v) <= KINDS, "%s: bad AnyValue %r"
          % (where, v))
    if not v:
        return None
    (k, x), = v.items()
    if k == "intValue":
        check(isinstance(x, str) and x.lstrip("-").isdigit() and -2**63 <= int(x) < 2**63,
              "%s: intValue %r" % (where, x))
        return int(x)
    if k == "doubleValue":
        check(isinstance(x, (int, float)), "%s: doubleValue %r" % (where, x))
        return float(x)
    if k == "boolValue":
        check(isinstance(x, bool), "%s: boolValue %r" % (where, x))
        return x
    if k == "stringValue":
        check(isinstance(x, str), "%s: stringValue %r" % (where, x))
        return x
    check(isinstance(x, dict) and set(x) <= {"values"}, "%s: %s %r" % (where, k, x))
    vals = x.get("values", [])
    if k == "arrayValue":
        return [from_any(e, where) for e in vals]
    out = {}
    for kv in vals:
        check(set(kv) == {"key", "value"}, "%s: KeyValue %r" % (where, kv))
        out[kv["key"]] = from_any(kv["value"], where + "." + kv["key"])
    return out


def no_lone_surrogates(s):
    """s with each lone UTF-16 surrogate as U+FFFD (what OTLP strings carry:
    protobuf JSON strings must be valid Unicode; the --json line keeps it)."""
    out = []
    i = 0
    while i < len(s):
        c = ord(s[i])
        if 0xD800 <= c <= 0xDBFF and i + 1 < len(s) and 0xDC00 <= ord(s[i + 1]) <= 0xDFFF:
            out.append(s[i:i + 2])
            i += 2
            continue
        out.append("\ufffd" if 0xD800 <= c <= 0xDFFF else s[i])
        i += 1
    return "".join(out)


def same(a, b):
    """Event values equal, ints beyond int64 sent as text, lone surrogates
    as U+FFFD."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(b, bool) or isinstance(a, bool):
        return a is b
    if isinstance(b, int) and isinstance(a, str):
        return a == str(b)
    if isinstance(b, str):
        return a == no_lone_surrogates(b)
    if isinstance(b, (int, float)) and isinstance(a, (int, float)):
        return float(a) == float(b)
    return a == b


def main():
    if len(sys.argv) != 4:
        print("usage: sink_kafka_basic.py JFRSTREAM MOCK_KAFKA FIXTURE", file=sys.stderr)
        return 2
    jfrstream, mock, fixture = sys.argv[1:]
    # JFRSTREAM_TEST_WRAPPER (meson test --setup valgrind) runs the CLI under it
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "live"))
    import livelib
    jfrstream = livelib.cli(jfrstream)
    if not mock or not os.access(mock, os.X_OK):
        print("SKIP: %s: built without librdkafka (no mock_kafka)" % NAME, flush=True)
        return SKIP
    if not shutil.which("kcat"):
        print("SKIP: %s: kcat is not installed (Debian package kcat)" % NAME, flush=True)
        return SKIP

    m = start([mock, "3", "jfr-events:4", "otlp:2", "tail:1"], stdin=subprocess.PIPE,
              stdout=subprocess.PIPE)
    bootstrap = readline(m.stdout, 30)
    check(bootstrap and ":" in bootstrap, "mock_kafka printed no bootstrap line")
    print("mock cluster: %s" % bootstrap, flush=True)

    # the reference: listen --json of the same bytes, and summary's counts
    rc, out, err = listen_run(jfrstream, fixture, ["--json"])
    check(rc == 0, "listen --json: exit %d: %s" % (rc, err))
    ref = out.decode().splitlines()
    total, per = summary_events(jfrstream, fixture)
    check(len(ref) == total, "listen --json printed %d events, summary counts %d"
          % (len(ref), total))
    print("reference: %d events (summary and listen --json)" % total, flush=True)

    # 1. json into jfr-events
    rc, out, err = listen_run(jfrstream, fixture, ["--kafka", bootstrap, "--label", "team=blue"])
    check(rc == 0, "listen --kafka: exit %d: %s" % (rc, err))
    want = "kafka: %d events produced, %d delivered, 0 failed, 0 undelivered" % (total, total)
    check(want in err, "the report line '%s' is missing: %s" % (want, err))
    msgs = consume(bootstrap, "jfr-events", total)
    check(len(msgs) == total, "jfr-events holds %d messages, want %d" % (len(msgs), total))
    keys = {k for _, k, _ in msgs}
    parts = {p for p, _, _ in msgs}
    check(len(keys) == 1 and len(parts) == 1,
          "one source: want one key and one partition, got keys %s partitions %s" % (keys, parts))
    key = keys.pop()
    check(key.startswith("127.0.0.1:%s:" % PID), "key %r is not HOST:PID:JVM_START" % key)
    ids = set()
    for i, (_, _, payload) in enumerate(msgs):
        line = ref[i]
        head = line[:-1] + ',"source":'
        check(payload.startswith(head) and payload.endswith("}"),
              "message %d is not listen --json line %d plus \"source\":\n  %s\n  %s"
              % (i, i, payload[:300], line[:300]))
        obj = json.loads(payload)
        labels = obj["source"]
        # the last member: "id", SOURCE/CHUNKSTART/OFFSET
        cut = payload.rfind(',"id":')
        check(list(obj)[-2:] == ["source", "id"] and cut > len(head),
              "message %d: \"id\" is not the member after \"source\"" % i)
        check(json.loads(payload[len(head):cut]) == labels, "message %d: bad labels" % i)
        src, cs, off = obj["id"].rsplit("/", 2)
        check(src == key and cs.isdigit() and off.isdigit() and int(off) >= 68,
              "message %d: id %r is not %s/CHUNKSTART/OFFSET" % (i, obj["id"], key))
        ids.add(obj["id"])
        check(labels.get("pid") == PID and labels.get("main_class") == MAIN
              and labels.get("team") == "blue" and labels.get("source") == key,
              "message %d: labels %s" % (i, labels))
    check(len(ids) == total, "%d distinct ids for %d events" % (len(ids), total))
    print("json: %d messages = the listen --json lines in order, key %s, labels pid=%s "
          "main_class=%s team=blue" % (len(msgs), key, PID, MAIN), flush=True)

    # 2. per-type topics, with an event filter
    types = ["jdk.ThreadSleep", "jdk.JavaErrorThrow"]
    rc, out, err = listen_run(jfrstream, fixture, ["--kafka", bootstrap, "--kafka-topic",
                                                   "jfr-{type}", "--events", ",".join(types)])
    check(rc == 0, "listen --kafka-topic jfr-{type}: exit %d: %s" % (rc, err))
    n = 0
    for t in types:
        got = consume(bootstrap, "jfr-" + t, per[t])
        check(len(got) == per[t], "topic jfr-%s: %d messages, want %d" % (t, len(got), per[t]))
        check(all(json.loads(p)["type"] == t for _, _, p in got), "topic jfr-%s: other types" % t)
        n += len(got)
    meta = subprocess.run(["kcat", "-L", "-J", "-b", bootstrap], capture_output=True,
                          timeout=60).stdout
    topics = sorted(t["topic"] for t in json.loads(meta)["topics"]
                    if t["topic"].startswith("jfr-") and t["topic"] != "jfr-events")
    check(topics == sorted("jfr-" + t for t in types), "per-type topics: %s" % topics)
    print("per-type topics: %s, %d messages" % (", ".join(topics), n), flush=True)

    # 3. otlp-json
    rc, out, err = listen_run(jfrstream, fixture, ["--kafka", bootstrap, "--kafka-topic", "otlp",
                                                   "--kafka-format", "otlp-json",
                                                   "--label", "team=blue"])
    check(rc == 0, "listen --kafka-format otlp-json: exit %d: %s" % (rc, err))
    msgs = consume(bootstrap, "otlp", total)
    check(len(msgs) == total, "otlp holds %d messages, want %d" % (len(msgs), total))
    for i, (_, k, payload) in enumerate(msgs):
        doc = json.loads(payload)
        rl = doc["resourceLogs"]
        check(len(rl) == 1, "message %d: %d resourceLogs" % (i, len(rl)))
        attrs = {a["key"]: a["value"] for a in rl[0]["resource"]["attributes"]}
        check(attrs.get("service.name") == {"stringValue": MAIN}
              and attrs.get("process.pid") == {"intValue": PID}
              and attrs.get("team") == {"stringValue": "blue"}
              and attrs.get("jfr.source.id") == {"stringValue": k}
              and "process.runtime.name" in attrs and "process.runtime.version" in attrs,
              "message %d: resource attributes %s" % (i, attrs))
        sl = rl[0]["scopeLogs"]
        check(len(sl) == 1 and sl[0]["scope"]["name"] == "jfrstream"
              and len(sl[0]["logRecords"]) == 1, "message %d: scopeLogs %s" % (i, sl))
        rec = sl[0]["logRecords"][0]
        ev = json.loads(ref[i])
        check(rec["eventName"] == ev["type"] and rec["timeUnixNano"].isdigit()
              and int(rec["timeUnixNano"]) > 1500000000 * 10**9
              and rec["observedTimeUnixNano"].isdigit(),
              "message %d: log record %s" % (i, {x: rec[x] for x in rec if x != "body"}))
        body = rec["body"]["kvlistValue"]["values"]
        check([kv["key"] for kv in body] == list(ev["values"].keys()),
              "message %d: body keys %s, event %s" % (i, [kv["key"] for kv in body],
                                                       list(ev["values"].keys())))
        back = from_any(rec["body"], "message %d body" % i)
        check(same(back, ev["values"]), "message %d: the body is not the event's values:\n"
              "  %s\n  %s" % (i, json.dumps(back)[:400], json.dumps(ev["values"])[:400]))
    print("otlp-json: %d ExportLogsServiceRequests, one log record each, resource "
          "service.name/process.pid/team, every body = the event's values" % len(msgs),
          flush=True)

    # 5. tail --kafka with a 5-message producer queue: the tail stops reading
    # while the queue is full (manual_resume) and loses nothing; idle time
    # does not run while it waits
    repo = tempfile.mkdtemp(prefix="jfrstream-kafka-tail-")
    try:
        shutil.copy(fixture, os.path.join(repo, "2026_11_24_10_00_00.jfr"))
        t0 = time.time()
        r = subprocess.run([jfrstream, "tail", repo, "--exit-when-done", "--idle-timeout", "5",
                            "--kafka", bootstrap, "--kafka-topic", "tail",
                            "--kafka-option", "queue.buffering.max.messages=5",
                            "--kafka-option", "linger.ms=20"],
                           capture_output=True, text=True, timeout=120)
        secs = time.time() - t0
    finally:
        shutil.rmtree(repo, ignore_errors=True)
    check(r.returncode == 0, "tail --kafka: exit %d: %s" % (r.returncode, r.stderr))
    want = "kafka: %d events produced, %d delivered, 0 failed, 0 undelivered" % (total, total)
    check(want in r.stderr, "tail --kafka: '%s' is missing: %s" % (want, r.stderr))
    paused = [l for l in r.stderr.splitlines() if "inputs paused" in l]
    check(paused and int(paused[0].split("inputs paused ")[1].split()[0]) > 0,
          "tail --kafka with a 5-message queue never paused: %s" % r.stderr)
    msgs = consume(bootstrap, "tail", total)
    check(len(msgs) == total, "topic tail holds %d messages, want %d" % (len(msgs), total))
    for i, (_, _, payload) in enumerate(msgs):
        head = ref[i][:-1] + ',"source":'
        check(payload.startswith(head), "tail message %d is not event %d" % (i, i))
    print("tail --kafka, 5-message queue: %d events delivered once, in order, in %.1f s (%s)"
          % (total, secs, paused[0].split("; ")[-1]), flush=True)

    # 4. an unknown librdkafka property: a usage error
    r = subprocess.run([jfrstream, "listen", "127.0.0.1:0", "--kafka", bootstrap,
                        "--kafka-option", "no.such.property=1"], capture_output=True, text=True,
                       timeout=60)
    check(r.returncode == 2 and "No such configuration property" in r.stderr,
          "unknown --kafka-option: exit %d: %s" % (r.returncode, r.stderr))
    print("unknown --kafka-option: exit 2: %s" % r.stderr.splitlines()[0], flush=True)

    m.stdin.close()
    m.wait(timeout=30)
    print("PASS: %s: %d events as %d json messages, per-type topics, otlp-json"
          % (NAME, total, total), flush=True)
    return 0


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, lambda *a: sys.exit(1))
    try:
        rc = main()
    finally:
        cleanup()
    sys.exit(rc)
