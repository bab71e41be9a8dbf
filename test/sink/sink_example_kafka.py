"""sink_example_kafka.py — examples/listen_to_kafka.c (the library's fan-out,
jfrs_fanout, with a Kafka output on a libuv listener) end to end against
librdkafka's mock cluster, read back with kcat.

    sink_example_kafka.py LISTEN_TO_KAFKA JFRSTREAM MOCK_KAFKA FIXTURE

The fixture is sent over a socket to the example; after the connection
ends, SIGINT stops it. Checks: it exits 0 saying every message was
delivered, as many as `jfrstream listen --kafka` produces for the same
bytes; kcat reads them back, each payload equal to the one listen --kafka
produced (without the source labels, which name the peer's port), in the
same order.
SKIP (77) without a librdkafka build (no mock_kafka or example) or kcat.
"""
import os
import signal
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import kafkalib as K  # noqa: E402
L = K.L

NAME = "sink-example-kafka"


def events_of(msgs):
    """Each payload without its ,"source":{...} member (the peer's port)."""
    out = []
    for m in msgs:
        v = m.value
        i = v.rfind(b',"source":')
        out.append(v[:i] if i >= 0 else v)
    return out


def main():
    if len(sys.argv) != 5:
        print("usage: %s LISTEN_TO_KAFKA JFRSTREAM MOCK_KAFKA FIXTURE" % sys.argv[0])
        return 2
    example, jfrstream, mock_path, fixture = sys.argv[1:]
    why = K.missing(jfrstream, mock_path)
    if not why and not os.access(example, os.X_OK):
        why = "examples/listen_to_kafka not built (-Dkafka)"
    if why:
        return L.skip(NAME, why)
    data = open(fixture, "rb").read()
    mock = K.Mock(mock_path, 3, ["jfr-events", "jfr-ref"])
    try:
        if not mock.bootstrap:
            return L.result(NAME, False, "mock_kafka gave no bootstrap list")
        # the reference: listen --kafka on the same bytes
        p, out, err, port = L.start_listener(
            jfrstream, ["--once", "--kafka", mock.bootstrap, "--kafka-topic", "jfr-ref"])
        if port is None:
            return L.result(NAME, False, "listen did not start: %s" % err.text()[-300:])
        L.send(port, data)
        if L.wait(p, 60, "listen") != 0:
            return L.result(NAME, False, "listen --kafka: exit %s: %s"
                            % (p.returncode, err.text()[-300:]))
        err.join()
        ref_counts = K.final_counts(err.text())
        n = ref_counts.get("produced", 0)
        if n <= 0 or ref_counts.get("delivered") != n:
            return L.result(NAME, False, "listen --kafka counts: %s" % ref_counts)

        # the example
        p = L.start([example, "0", mock.bootstrap])
        xerr = L.Lines(p.stderr)
        m = xerr.wait_for(r"listening on 127\.0\.0\.1:(\d+)", 10)
        if not m:
            return L.result(NAME, False, "the example did not start: %s" % xerr.text()[-300:])
        L.send(int(m.group(1)), data)
        if not xerr.wait_for(r"\(", 30):  # the connection's end line: "MESSAGE (STATUS)"
            return L.result(NAME, False, "no end of connection: %s" % xerr.text()[-300:])
        p.send_signal(signal.SIGINT)
        rc = L.wait(p, 60, "listen_to_kafka")
        xerr.join()
        text = xerr.text()
        L.log("  example's stderr: %s" % text.replace("\n", " | "))
        if rc != 0:
            return L.result(NAME, False, "exit %s: %s" % (rc, text[-400:]))
        want = "kafka: %d delivered, 0 failed, 0 undelivered" % n
        if want not in text:
            return L.result(NAME, False, "no '%s' in its stderr" % want)

        got = K.consume(mock.bootstrap, "jfr-events", count=n)
        ref = K.consume(mock.bootstrap, "jfr-ref", count=n)
        L.log("  %d events: listen --kafka %d messages, the example %d" % (n, len(ref), len(got)))
        if len(got) != n or len(ref) != n:
            return L.result(NAME, False, "messages: example %d, listen %d, want %d"
                            % (len(got), len(ref), n))
        if events_of(got) != events_of(ref):
            bad = next(i for i, (a, b) in enumerate(zip(events_of(got), events_of(ref)))
                       if a != b)
            return L.result(NAME, False, "message %d differs: %r vs %r"
                            % (bad, events_of(got)[bad][:200], events_of(ref)[bad][:200]))
        return L.result(NAME, True, "%d events, each message as listen --kafka's, all delivered"
                        % n)
    finally:
        mock.stop()
        L.cleanup()


if __name__ == "__main__":
    sys.exit(main())
