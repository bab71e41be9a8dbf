#!/usr/bin/env python3
"""sink_kafka_otlp.py — `jfrstream listen --kafka ... --kafka-format otlp-json`:
every Kafka message is one OTLP ExportLogsServiceRequest (JSON) that decodes
against the OTLP logs schema (test/sink/otlp/, test/sink/sink_otlp_check.py).

    test/sink/sink_kafka_otlp.py JFRSTREAM FIXTURE --mock MOCK_KAFKA

FIXTURE (test/data/workload.jfr: pid 14951) is sent over a socket to
`listen 127.0.0.1:0 --kafka BOOTSTRAP --kafka-topic T --kafka-format otlp-json
--label env=test --label team=jfr_sink`, backed by librdkafka's mock cluster
(3 brokers); the listener is stopped with SIGTERM once the connection has
ended; kcat reads the topic. The reference is `listen --json` of the same
bytes over a socket (same events, same order). Checks:
  * every message decodes (json_format.Parse with unknown fields refused, the
    OTLP/JSON rules, a binary round trip);
  * one resourceLogs, one scopeLogs, one logRecord per message;
  * resource attributes: service.name (non-empty), process.pid = 14951, and
    the --label ones; the message key is the source id (jfr.source.id when
    that attribute is sent);
  * each record names its JFR type (eventName, or an "event.name" attribute)
    and its timeUnixNano is the event's startTime, in nanoseconds;
  * the body carries the event's values (the numbers compared);
  * the messages are the reference's events, one each (same multiset of
    (type, startTime)), in the reference's order within each partition;
  * the listener's counts: delivered = messages, 0 failed; exit 0.
Exit 0 pass, 1 fail, 77 skip (no mock_kafka, kcat, listen --kafka, protoc or
python protobuf).
"""
import argparse
import calendar
import collections
import json
import os
import re
import signal
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sink_otlp_check as O  # noqa: E402
import kafkalib as K  # noqa: E402
from kafkalib import L  # noqa: E402

NAME = "kafka-otlp"
PID = 14951
LABELS = {"env": "test", "team": "jfr_sink"}

ISO = re.compile(r"^(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)(?:\.(\d{1,9}))?(Z|[+-]\d\d:\d\d)$")


def iso_ns(text):
    """An ISO-8601 time as print --json writes it -> epoch nanoseconds (exact)."""
    m = ISO.match(text)
    if not m:
        raise ValueError("not a time: %r" % text)
    y, mo, d, h, mi, s = (int(m.group(i)) for i in range(1, 7))
    frac = int((m.group(7) or "").ljust(9, "0"))
    secs = calendar.timegm((y, mo, d, h, mi, s, 0, 0, 0))
    tz = m.group(8)
    if tz != "Z":
        sign = 1 if tz[0] == "+" else -1
        secs -= sign * (int(tz[1:3]) * 3600 + int(tz[4:6]) * 60)
    return secs * 1_000_000_000 + frac


def reference(jfrstream, fixture):
    """listen --json of the fixture over a socket: [(type, values)]."""
    lp, lout, lerr, port = L.start_listener(jfrstream, ["--json", "--once"])
    if not port:
        raise RuntimeError("reference listen did not start: " + lerr.text())
    L.send(port, open(fixture, "rb").read())
    L.wait(lp, 60, "listen --json")
    lout.join()
    out = []
    for _, line in lout.lines:
        ev = json.loads(line)
        out.append((ev["type"], ev["values"]))
    return out


def same_number(body_value, v):
    """A number of the values as the body holds it: equal, or for an integer
    beyond int64 (an unsigned 64-bit field) its decimal string, its two's
    complement or the nearest double."""
    if body_value == v and type(body_value) is not bool:
        return True
    if isinstance(v, int) and not -2**63 <= v < 2**63:
        return body_value in (str(v), v - 2**64, float(v))
    return False


def numbers(values):
    """The top-level numeric fields of an event's values."""
    return {k: v for k, v in values.items() if isinstance(v, (int, float)) and not isinstance(v, bool)}


def main():
    O.reexec_for_protobuf()
    ap = argparse.ArgumentParser()
    ap.add_argument("jfrstream")
    ap.add_argument("fixture")
    ap.add_argument("--mock")
    ap.add_argument("--lone-surrogates", choices=("fail", "count"), default="fail",
                    help="a string with a lone UTF-16 surrogate: fail (default), or count "
                         "it and read it as U+FFFD as Go's JSON decoders do")
    a = ap.parse_args()
    a.jfrstream = L.cli(a.jfrstream)
    why = K.missing(a.jfrstream, a.mock)
    if why:
        return L.skip(NAME, why)
    try:
        schema = O.Schema()
    except O.Missing as e:
        return L.skip(NAME, str(e))
    fails = []
    try:
        ref = reference(a.jfrstream, a.fixture)
        L.log("  reference: listen --json of %s: %d events" % (os.path.basename(a.fixture), len(ref)))
        topic = "jfr-otlp"
        mock = K.Mock(a.mock, 3, [topic])
        if not mock.bootstrap:
            return L.result(NAME, False, "mock_kafka printed no bootstrap list: " + mock.err.text())
        args = ["--kafka", mock.bootstrap, "--kafka-topic", topic, "--kafka-format", "otlp-json"]
        for k, v in LABELS.items():
            args += ["--label", "%s=%s" % (k, v)]
        lp, lout, lerr, port = L.start_listener(a.jfrstream, args)
        if not port:
            return L.result(NAME, False, "listen did not start: " + lerr.text())
        L.send(port, open(a.fixture, "rb").read())
        if not lerr.wait_for(r"stream ended|closed", 60):
            fails.append("listen did not report the end of the connection")
        lp.send_signal(signal.SIGTERM)
        lrc = L.wait(lp, 90, "jfrstream listen")
        lerr.join()
        if lrc != 0:
            fails.append("listen exit %s" % lrc)
        counts = K.final_counts(lerr.text())
        for l in [l for l in lerr.text().splitlines() if "kafka" in l.lower()][-3:]:
            L.log("  listen: " + l)
        msgs = K.consume(mock.bootstrap, topic)
        mock.stop()
        L.log("  kcat read %d messages from %d partition(s)"
              % (len(msgs), len({m.partition for m in msgs})))
        lone = [] if a.lone_surrogates == "count" else None
        try:
            reqs = schema.check([m.value for m in msgs], lone)
            if lone:
                L.log("  note: %d message(s) hold %d lone UTF-16 surrogate(s) in strings, read as "
                      "U+FFFD (--lone-surrogates count)" % (len(lone), sum(lone)))
        except O.Invalid as e:
            return L.result(NAME, False, "; ".join(fails + ["schema: %s" % e]))
        L.log("  %d messages decode as ExportLogsServiceRequest (binary round trip equal)" % len(reqs))

        got = []
        shape_bad = []
        res_bad = collections.Counter()
        body_kinds = collections.Counter()
        first_attrs = None
        for i, (m, r) in enumerate(zip(msgs, reqs)):
            if len(r.resource_logs) != 1 or len(r.resource_logs[0].scope_logs) != 1 \
                    or len(r.resource_logs[0].scope_logs[0].log_records) != 1:
                shape_bad.append(i)
                continue
            rl = r.resource_logs[0]
            ra = O.attrs(rl.resource.attributes)
            if not m.key or ("jfr.source.id" in ra and ra["jfr.source.id"] != m.key):
                res_bad["key %r, jfr.source.id %r" % (m.key, ra.get("jfr.source.id"))] += 1
            if first_attrs is None:
                first_attrs = ra
            if not ra.get("service.name"):
                res_bad["no service.name"] += 1
            if str(ra.get("process.pid")) != str(PID):
                res_bad["process.pid %r" % (ra.get("process.pid"),)] += 1
            for k, v in LABELS.items():
                if ra.get(k) != v:
                    res_bad["label %s=%r" % (k, ra.get(k))] += 1
            rec = rl.scope_logs[0].log_records[0]
            ra2 = O.attrs(rec.attributes)
            etype = rec.event_name or ra2.get("event.name")
            body = O.value(rec.body)
            body_kinds[rec.body.WhichOneof("value")] += 1
            got.append((m.partition, m.offset, etype, rec.time_unix_nano, body))
        L.log("  resource attributes of the first message: %s" % first_attrs)
        L.log("  body kinds: %s" % dict(body_kinds))
        if shape_bad:
            fails.append("%d messages are not one resourceLogs/scopeLogs/logRecord (first: #%d)"
                         % (len(shape_bad), shape_bad[0]))
        if res_bad:
            fails.append("resource attributes: " + ", ".join("%s x%d" % kv for kv in res_bad.most_common(5)))

        # the records against the reference events
        want = collections.Counter()
        want_order = []
        for t, v in ref:
            ns = iso_ns(v["startTime"]) if isinstance(v.get("startTime"), str) else None
            want[(t, ns)] += 1
            want_order.append((t, ns, v))
        have = collections.Counter((t, ns) for _, _, t, ns, _ in got)
        missing = want - have
        extra = have - want
        L.log("  events: reference %d, messages %d, matched %d, missing %d, extra %d"
              % (len(ref), len(msgs), sum((want & have).values()), sum(missing.values()),
                 sum(extra.values())))
        if missing or extra:
            fails.append("(type, timeUnixNano) differ: missing %s; extra %s"
                         % (list(missing.items())[:3], list(extra.items())[:3]))
        if len(msgs) != len(ref):
            fails.append("%d messages for %d events" % (len(msgs), len(ref)))
        # order per partition (per key): each partition's records, by offset,
        # are in the reference's order; each record is matched with its event
        pos = {}
        for i, (t, ns, _) in enumerate(want_order):
            pos.setdefault((t, ns), []).append(i)
        used = collections.Counter()
        order_bad = 0
        pairs = []
        for part in sorted({g[0] for g in got}):
            prev = -1
            for g in sorted((g for g in got if g[0] == part), key=lambda g: g[1]):
                cands = pos.get((g[2], g[3]), [])
                k = used[(g[2], g[3])]
                used[(g[2], g[3])] += 1
                if k >= len(cands):
                    continue  # counted as extra above
                i = cands[k]
                if i < prev:
                    order_bad += 1
                prev = i
                pairs.append((g, want_order[i]))
        L.log("  order: %d partition(s); %d record(s) out of the reference order"
              % (len({g[0] for g in got}), order_bad))
        if order_bad:
            fails.append("%d records out of the reference order within their partition" % order_bad)
        # the body carries the values: compare the numbers
        checked = num_bad = 0
        for g, w in pairs:
            body = g[4]
            if isinstance(body, str):
                try:
                    body = json.loads(body)
                except ValueError:
                    body = None
            if not isinstance(body, dict):
                num_bad += 1
                continue
            for k, v in numbers(w[2]).items():
                checked += 1
                if k not in body or not same_number(body[k], v):
                    num_bad += 1
                    if num_bad <= 3:
                        L.log("    %s: body %s=%r, values %r" % (w[0], k, body.get(k), v))
        L.log("  body: %d numeric values of %d records compared, %d differ"
              % (checked, len(pairs), num_bad))
        if num_bad or not checked:
            fails.append("body: %d of %d numeric values differ" % (num_bad, checked))
        delivered = counts.get("delivered")
        L.log("  listen counts: %s" % counts)
        if delivered != len(msgs):
            fails.append("listen says delivered %s, kcat read %d" % (delivered, len(msgs)))
        for k in ("failed", "undelivered", "errors", "dropped"):
            if counts.get(k):
                fails.append("listen counts %d %s" % (counts[k], k))
        return L.result(NAME, not fails, "; ".join(fails) if fails else
                        "%d events -> %d OTLP messages, each decoded, one record each, "
                        "type/timeUnixNano/body/resource attributes as the reference"
                        % (len(ref), len(msgs)))
    finally:
        L.cleanup()


if __name__ == "__main__":
    sys.exit(main())
