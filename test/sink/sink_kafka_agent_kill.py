"""sink_kafka_agent_kill.py — nothing lost when the listener dies: a real JVM
(test/live/SeqWorkload.java) with tools/jfrstream-agent (acks on) streams into
`listen --kafka` (librdkafka's mock cluster); the listener is killed with
SIGKILL in the middle of the run and started again on the same port 1.5 s
later. kcat then reads the topic: every jfrstream.Seq sequence number from 0
to the JVM's last arrives, and every copy of one event (what the first
listener had produced but not acknowledged, resent by the agent) has the
same "id" (= its header jfr-id), while different events have different ids.

    sink_kafka_agent_kill.py JFRSTREAM MOCK_KAFKA AGENT_JAR

SKIP (77) without librdkafka's mock, kcat, java or the agent jar.
"""
import json
import os
import signal
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
import kafkalib as K  # noqa: E402
L = K.L

NAME = "sink-kafka-agent-kill"


def listener(jfrstream, port, bootstrap):
    p = L.start([jfrstream, "listen", "127.0.0.1:%d" % port, "--kafka", bootstrap,
                 "--events", "jfrstream.Seq", "--once"])
    err = L.Lines(p.stderr)
    L.Lines(p.stdout, keep=False)
    return p, err, err.wait_for(r"listening on", 10)


def main():
    if len(sys.argv) != 4:
        print("usage: sink_kafka_agent_kill.py JFRSTREAM MOCK_KAFKA AGENT_JAR", file=sys.stderr)
        return 2
    jfrstream, mock, agent = sys.argv[1:]
    jfrstream = L.cli(jfrstream)
    why = K.missing(jfrstream, mock, need_java=True)
    if not why and (not agent or not os.path.exists(agent)):
        why = "no agent jar (a build without javac/jar, or -Dagent=disabled)"
    if why:
        return L.skip(NAME, why)
    java = L.java_bin()
    # 2,000 events at 400/s, about 3 MB of messages with the resent ones: the
    # mock cluster trims a partition's oldest messages past a few MB
    m = K.Mock(mock, 3, ["jfr-events:3"])
    fails = []
    try:
        port = L.free_port()
        lp, lerr, ok = listener(jfrstream, port, m.bootstrap)
        if not ok:
            return L.result(NAME, False, "listen did not start: " + lerr.text())
        opt = "-javaagent:%s=connect=127.0.0.1:%d,retry-max=1s" % (agent, port)
        p = L.start([java, opt, L.SEQ_JAVA, "--rate", "400", "--duration", "5",
                     "--wait-recordings", "1"])
        out, err = L.Lines(p.stdout), L.Lines(p.stderr)
        out.wait_for(r"^start=", 60)
        time.sleep(2.5)
        lp.send_signal(signal.SIGKILL)
        lp.wait(10)
        L.log("  listener killed (SIGKILL) 2.5 s into the run")
        time.sleep(1.5)
        lp, lerr2, ok = listener(jfrstream, port, m.bootstrap)
        if not ok:
            return L.result(NAME, False, "listen did not start again: " + lerr2.text())
        mlast = out.wait_for(r"^last=(\d+)", 60)
        rc = L.wait(p, 60, "SeqWorkload")
        lrc = L.wait(lp, 60, "listen")
        out.join()
        err.join()
        lerr2.join()
        last = int(mlast.group(1)) if mlast else None
        agent_lines = [l for _, l in err.lines if l.startswith("jfrstream-agent:")]
        for l in agent_lines:
            if any(w in l for w in ("lost", "connected", "acknowledged", "resent")):
                L.log("  " + l)
        L.log("  listener 2: " + " | ".join(l for _, l in lerr2.lines if "kafka:" in l))
        if rc != 0 or last is None:
            fails.append("SeqWorkload exit %s, last %s" % (rc, last))
        if lrc != 0:
            fails.append("the second listener exited %s: %s" % (lrc, lerr2.text()[-1000:]))
        msgs = K.consume(m.bootstrap, "jfr-events", timeout=60, headers=True)
        ids = {}   # seq -> set of ids
        owner = {}  # id -> seq
        for x in msgs:
            v = json.loads(x.value)
            if v.get("type") != "jfrstream.Seq":
                continue
            hid = (x.headers or {}).get("jfr-id")
            if v.get("id") != hid:
                fails.append("\"id\" %r != header %r" % (v.get("id"), hid))
            s = v["values"]["seq"]
            ids.setdefault(s, set()).add(v["id"])
            if owner.setdefault(v["id"], s) != s:
                fails.append("id %s on seq %d and %d" % (v["id"], owner[v["id"]], s))
        copies = sum(1 for x in msgs if b'"jfrstream.Seq"' in x.value)
        missing = [s for s in range(last + 1)] if last is not None else []
        missing = [s for s in missing if s not in ids]
        multi = [s for s, v in ids.items() if len(v) > 1]
        L.log("  kafka: %d Seq messages for %d distinct seqs (0..%s), %d copies beyond one, "
              "%d missing, %d seqs with more than one id"
              % (copies, len(ids), last, copies - len(ids), len(missing), len(multi)))
        if missing:
            fails.append("%d seqs missing (first %s)" % (len(missing), missing[:5]))
        if multi:
            fails.append("%d seqs with several ids (first %s)" % (len(multi), multi[:3]))
    finally:
        m.stop()
    if fails:
        return L.result(NAME, False, "; ".join(fails[:6]))
    return L.result(NAME, True, "every seq 0..%d arrived across a SIGKILL of the listener, "
                    "every copy with one id" % last)


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, lambda *a: sys.exit(1))
    try:
        rc = main()
    finally:
        L.cleanup()
    sys.exit(rc)
