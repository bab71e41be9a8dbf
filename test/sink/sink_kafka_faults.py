#!/usr/bin/env python3
"""sink_kafka_faults.py — a real JVM through tools/jfr-pump into
`jfrstream listen --kafka` and librdkafka's mock cluster (test/sink/mock_kafka,
3 brokers), read back by kcat, the independent consumer.

    test/sink/sink_kafka_faults.py JFRSTREAM --mock MOCK_KAFKA [--work DIR]
                              [--only normal|broker-down|tiny-queue]...

SeqWorkload (test/live) emits the custom event jfrstream.Seq (a running
sequence number, 500 a second for 5 s by default) while the pump streams the JVM's recording to
`listen 127.0.0.1:0 --kafka BOOTSTRAP --kafka-topic T --events jfrstream.Seq
--label suite=kafka_faults --label scenario=NAME`. Scenarios (a fresh mock
cluster each):

  normal       as is;
  broker-down  the broker that leads the partition of the JVM's key (found
               from the first message kcat reads and `kcat -L`) is taken down
               ("down ID" on mock_kafka's stdin) for 5 s mid-stream, then up
               (300 events a second for 10 s);
  tiny-queue   --kafka-option queue.buffering.max.messages=5 (and
               linger.ms=20: fewer messages leave a second than arrive): the
               producer's queue is full most of the time and the listener
               pauses the connection (TCP back-pressure to the pump): the
               bytes wait unread in the kernel's receive queue of the
               connection (/proc/net/tcp, sampled every 20 ms: it must be
               non-empty for a while); its peak RSS (VmHWM) must stay under
               200 MB.

The listener is ended with SIGTERM once the pump's connection has closed
(it flushes the producer and prints its counts on stderr). Then kcat reads the
whole topic (`kcat -C -o beginning -e`) and, for jfrstream.Seq:
  * every sequence number 0..last is there exactly once (sent, received,
    duplicated, lost are printed);
  * in order per key: each key's messages are in one partition and their
    offsets increase with the sequence number;
  * each message is {"type","values","source"}, its key is source.source, and
    the labels are those of that JVM: pid, main_class (the first word of the
    JVM's java_command, from jcmd), and the --label ones;
  * the listener's counts: delivered = the messages in the topic, 0 failed
    or undelivered; listen exit 0.
The mock cluster keeps about 4 MiB per partition (older messages are
dropped), so a run stays under that: about 3,000 messages of ~930 bytes (the
labels include jvm_version); a partition that does not start at offset 0 is
reported as that limit, not as a loss.
Exit 0 pass, 1 fail, 77 skip (no mock_kafka, kcat, java, or listen --kafka).
"""
import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kafkalib as K  # noqa: E402
from kafkalib import L  # noqa: E402

NAME = "kafka-faults"
SCENARIOS = ("normal", "broker-down", "tiny-queue")
RSS_LIMIT_MB = 200


def java_command(java, pid):
    """The JVM's java_command (sun.java.command) from `jcmd PID VM.command_line`."""
    jcmd = os.path.join(os.path.dirname(os.path.realpath(java)), "jcmd")
    if not os.access(jcmd, os.X_OK):
        return None
    try:
        r = subprocess.run([jcmd, str(pid), "VM.command_line"], capture_output=True, text=True,
                           timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    for line in r.stdout.splitlines():
        if line.startswith("java_command:"):
            return line.split(":", 1)[1].strip()
    return None


def check_messages(msgs, last, pid, main_class, labels, fails):
    """The jfrstream.Seq messages: exactly once, in order per key, labels."""
    seen = {}
    per_key = {}
    bad = []
    other = 0
    for m in msgs:
        try:
            v = json.loads(m.value)
        except ValueError:
            bad.append("not JSON at partition %d offset %d" % (m.partition, m.offset))
            continue
        if not isinstance(v, dict) or list(v) != ["type", "values", "source", "id"] or \
                not v["id"].startswith(m.key + "/"):
            bad.append("keys %s at partition %d offset %d" % (
                sorted(v) if isinstance(v, dict) else type(v).__name__, m.partition, m.offset))
            continue
        if v["type"] != "jfrstream.Seq":
            other += 1
            continue
        s = v["values"]["seq"]
        seen[s] = seen.get(s, 0) + 1
        src = v["source"]
        per_key.setdefault(m.key, []).append((m.partition, m.offset, s))
        want = {"source": m.key, "pid": str(pid)}
        want.update(labels)
        if main_class:
            want["main_class"] = main_class
        for k, w in want.items():
            if str(src.get(k)) != w and len(bad) < 20:
                bad.append("seq %d: label %s=%r, expected %r" % (s, k, src.get(k), w))
    expected = last + 1
    received = sum(seen.values())
    lost = sum(1 for s in range(expected) if s not in seen)
    dup = sum(c - 1 for c in seen.values() if c > 1)
    extra = sum(1 for s in seen if s < 0 or s >= expected)
    L.log("  seq: sent %d, received %d, duplicated %d, lost %d, extra %d; other types %d"
          % (expected, received, dup, lost, extra, other))
    if lost:
        ranges = []
        s0 = None
        for s in range(expected + 1):
            miss = s < expected and s not in seen
            if miss and s0 is None:
                s0 = s
            elif not miss and s0 is not None:
                ranges.append("%d..%d" % (s0, s - 1))
                s0 = None
        L.log("  lost seq ranges: %s" % ", ".join(ranges[:10]))
    if expected <= 0 or lost or dup or extra:
        fails.append("seq sent %d received %d duplicated %d lost %d extra %d"
                     % (expected, received, dup, lost, extra))
    # order per key
    disorder = 0
    parts = set()
    for key, rows in per_key.items():
        kp = {p for p, _, _ in rows}
        parts |= kp
        if len(kp) != 1:
            fails.append("key %s spread over partitions %s" % (key, sorted(kp)))
        rows.sort()
        for a, b in zip(rows, rows[1:]):
            if a[0] == b[0] and b[2] <= a[2]:
                disorder += 1
                if disorder <= 3:
                    fails.append("key %s partition %d: offset %d has seq %d after offset %d seq %d"
                                 % (key, a[0], b[1], b[2], a[1], a[2]))
    L.log("  order: %d key(s) %s, partition(s) %s, %d out of order"
          % (len(per_key), sorted(per_key), sorted(parts), disorder))
    # the mock cluster keeps about 4 MiB per partition and drops the oldest
    # messages beyond that: a log that does not start at offset 0 is the
    # test's own limit, not a loss of the listener's
    first = {}
    for m in msgs:
        first[m.partition] = min(first.get(m.partition, m.offset), m.offset)
    cut = {p: o for p, o in first.items() if o != 0}
    if cut:
        fails.append("the mock cluster dropped the oldest messages (retention, about 4 MiB a "
                     "partition): partitions start at offsets %s; send less" % cut)
    if msgs:
        L.log("  %d bytes of values, %.0f bytes a message"
              % (sum(len(m.value) for m in msgs), sum(len(m.value) for m in msgs) / len(msgs)))
    if len(per_key) != 1:
        fails.append("%d keys for one JVM (expected 1): %s" % (len(per_key), sorted(per_key)[:4]))
    if bad:
        fails.append("%d bad messages: %s" % (len(bad), "; ".join(bad[:4])))
    return received


def scenario(a, java, name, work):
    fails = []
    topic = "jfr-faults-" + name
    mock = K.Mock(a.mock, 3, [topic + ":6"])
    if not mock.bootstrap:
        return ["mock_kafka printed no bootstrap list: " + mock.err.text()[-500:]]
    meta = K.metadata(mock.bootstrap, topic)
    L.log("  mock cluster %s; topic %s: %d partitions, leaders %s"
          % (mock.bootstrap, topic, len(meta), meta))
    if len(meta) < 2:
        fails.append("topic %s has %d partitions (expected several)" % (topic, len(meta)))
    labels = {"suite": "kafka_faults", "scenario": name.replace("-", "_")}
    args = ["--kafka", mock.bootstrap, "--kafka-topic", topic, "--events", "jfrstream.Seq"]
    for k, v in labels.items():
        args += ["--label", "%s=%s" % (k, v)]
    rate, seconds = a.rate, a.seconds
    if name == "tiny-queue":
        # 5 messages in the producer's queue, each batch waiting 20 ms:
        # at most ~250 messages a second leave, fewer than arrive
        args += ["--kafka-option", "queue.buffering.max.messages=5",
                 "--kafka-option", "linger.ms=20"]
    if name == "broker-down":
        # the outage inside the emission, with time around it; fewer events
        # a second, so that the partition stays under the mock's retention
        seconds = max(seconds, int(a.down_seconds) + 5)
        rate = min(rate, 300)
    lp, lout, lerr, port = L.start_listener(a.jfrstream, args)
    if not port:
        mock.stop()
        return ["listen did not start: " + lerr.text()[-800:]]
    peak = K.Peak(lp.pid)
    recvq = K.RecvQ(port)
    san = K.sanitized(lp.pid)
    w, wout, werr = L.seq_workload(
        java, ["--rate", str(rate), "--duration", str(seconds), "--wait-recordings", "1",
               "--linger", "120"])
    pid = L.workload_pid(wout)
    if not pid:
        mock.stop()
        return ["SeqWorkload did not start: " + werr.text()[-800:]]
    main_class = None
    jc = java_command(java, pid)
    if jc:
        main_class = jc.split()[0]
    L.log("  JVM pid %d, java_command %r -> main_class %r" % (pid, jc, main_class))
    pp, pout, perr = L.pump(java, ["--pid", str(pid), "--duration", "%ds" % (seconds + 3),
                                   "--connect", "127.0.0.1:%d" % port, "--settings", "default"])
    if not wout.wait_for(r"^start=", 90):
        fails.append("SeqWorkload did not start emitting: " + werr.text()[-500:])
    elif name == "broker-down":
        time.sleep(1.5)
        victim = 1
        try:
            first = K.consume(mock.bootstrap, topic, timeout=20, count=1)
            if first:
                victim = meta.get(first[0].partition, 1)
                L.log("  the JVM's key %s is on partition %d, led by broker %d"
                      % (first[0].key, first[0].partition, victim))
            else:
                L.log("  no message yet: taking broker 1 down")
        except (RuntimeError, subprocess.TimeoutExpired, ValueError) as e:
            L.log("  first message not read (%s): taking broker 1 down" % e)
        mock.command("down %d" % victim)
        time.sleep(a.down_seconds)
        mock.command("up %d" % victim)
    prc = L.wait(pp, 60 + seconds * 3, "jfr-pump")
    perr.join()
    if prc != 0:
        fails.append("jfr-pump exit %s: %s" % (prc, perr.text()[-300:]))
    pump_last = [l for _, l in perr.lines if "bytes" in l]
    if pump_last:
        L.log("  pump: " + pump_last[-1])
    m = wout.wait_for(r"^last=(-?\d+)", 30)
    last = int(m.group(1)) if m else None
    if w.poll() is None:
        w.send_signal(signal.SIGTERM)
    L.wait(w, 30, "SeqWorkload")
    if last is None:
        fails.append("SeqWorkload printed no last seq")
        last = -1
    # the connection closed (the pump ended): stop the listener, which flushes
    if not lerr.wait_for(r"stream ended|closed", 60 + seconds * 3):
        fails.append("listen did not report the end of the pump's connection")
    peak.sample()
    recvq.stop()
    L.log("  listen's receive queue: max %d bytes waiting, non-empty in %d of %d samples (20 ms)"
          % (recvq.max, recvq.nonzero, recvq.samples))
    t0 = time.monotonic()
    lp.send_signal(signal.SIGTERM)
    lrc = L.wait(lp, 90, "jfrstream listen")
    stop_s = time.monotonic() - t0
    peak.stop()
    lout.join()
    lerr.join()
    if lrc != 0:
        fails.append("listen exit %s" % lrc)
    stderr = lerr.text()
    tail = [l for l in stderr.splitlines() if "kafka" in l.lower()]
    for l in tail[-4:]:
        L.log("  listen: " + l)
    counts = K.final_counts(stderr)
    L.log("  listen stopped in %.1f s after SIGTERM; counts %s" % (stop_s, counts))
    try:
        msgs = K.consume(mock.bootstrap, topic)
    except (RuntimeError, subprocess.TimeoutExpired, ValueError) as e:
        mock.stop()
        return fails + ["kcat -C: %s" % e]
    mock.stop()
    L.log("  kcat read %d messages" % len(msgs))
    received = check_messages(msgs, last, pid, main_class, labels, fails)
    delivered = counts.get("delivered")
    if delivered is None:
        fails.append("no delivered count on listen's stderr")
    elif delivered != len(msgs):
        fails.append("listen says %d delivered, kcat read %d" % (delivered, len(msgs)))
    for k in ("failed", "undelivered", "errors", "dropped", "lost"):
        if counts.get(k):
            fails.append("listen counts %d %s" % (counts[k], k))
    for k in ("received", "events", "produced", "queued", "sent"):
        if k in counts and counts[k] != len(msgs):
            fails.append("listen counts %s=%d, kcat read %d" % (k, counts[k], len(msgs)))
    if name == "broker-down":
        # the producer saw the outage (librdkafka's connection errors, logged)
        seen = [l for l in stderr.splitlines() if "refused" in l or "Disconnected" in l]
        L.log("  the outage on listen's stderr: %d line(s)%s"
              % (len(seen), (": " + seen[0][:120]) if seen else ""))
        if not seen:
            fails.append("no connection error on listen's stderr: the outage went unseen")
    if name == "tiny-queue":
        hwm_mb = peak.hwm_kb / 1024
        limit = RSS_LIMIT_MB
        if os.environ.get("JFRSTREAM_TEST_WRAPPER") or "asan" in os.environ.get("LD_PRELOAD", "") \
                or os.environ.get("ASAN_OPTIONS") is not None or san:
            limit = RSS_LIMIT_MB * 4  # sanitizer or valgrind: not the program's own memory
        L.log("  listen peak RSS (VmHWM) %.1f MB (limit %d MB)" % (hwm_mb, limit))
        if hwm_mb > limit:
            fails.append("listen peak RSS %.1f MB > %d MB" % (hwm_mb, limit))
        # paused: the pump's bytes wait in the kernel, unread, for a while
        if recvq.nonzero < 5 or recvq.max < 4096:
            fails.append("no sign of a paused connection: the receive queue held at most %d "
                         "bytes, non-empty in %d samples" % (recvq.max, recvq.nonzero))
    else:
        L.log("  listen peak RSS (VmHWM) %.1f MB" % (peak.hwm_kb / 1024))
    if fails:
        L.log("  listen stderr (tail):\n    " + "\n    ".join(stderr.splitlines()[-15:]))
    else:
        L.log("  %s: seq sent %d received %d duplicated 0 lost 0, delivered %s"
              % (name, last + 1, received, delivered))
    return fails


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("jfrstream")
    ap.add_argument("--mock", help="test/sink/mock_kafka, built with -Dkafka")
    ap.add_argument("--work")
    ap.add_argument("--only", action="append", choices=SCENARIOS)
    ap.add_argument("--rate", type=int, default=500, help="jfrstream.Seq per second")
    ap.add_argument("--seconds", type=int, default=5, help="of emission")
    ap.add_argument("--down-seconds", type=float, default=5)
    a = ap.parse_args()
    a.jfrstream = L.cli(a.jfrstream)
    why = K.missing(a.jfrstream, a.mock, need_java=True)
    if why:
        return L.skip(NAME, why)
    java = L.java_bin()
    if a.work:
        os.makedirs(a.work, exist_ok=True)
    work = tempfile.mkdtemp(prefix=NAME + "-", dir=a.work)
    fails = []
    try:
        for name in a.only or SCENARIOS:
            L.log("%s: scenario %s" % (NAME, name))
            f = scenario(a, java, name, work)
            L.log("  %s: %s" % (name, "ok" if not f else "FAILED: " + "; ".join(f)))
            fails += ["%s: %s" % (name, x) for x in f]
            L.cleanup()
    finally:
        L.cleanup()
        shutil.rmtree(work, ignore_errors=True)
    return L.result(NAME, not fails, "; ".join(fails) if fails else
                    "%s: every seq exactly once, in order per key, with its labels"
                    % ", ".join(a.only or SCENARIOS))


if __name__ == "__main__":
    sys.exit(main())
