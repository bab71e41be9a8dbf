"""sink_kafka_ack.py — acknowledged delivery (doc/protocol.md) through the real
CLI: `listen --kafka` into librdkafka's mock cluster (test/sink/mock_kafka),
kcat reading back, a fake sender (this script) speaking JFRS/1.

    sink_kafka_ack.py JFRSTREAM MOCK_KAFKA FIXTURE

  1. The sender sends "JFRS/1 ack\\n" and the recording, half-closes, reads
     ACK lines until the listener closes: each "ACK N\\n", growing, the last
     N = the recording's bytes. The producer batches for 1 s
     (queue.buffering.max.ms=1000), so the final ACK comes >= 0.9 s after
     the last byte was sent: acks wait for Kafka's delivery reports (the
     parse takes milliseconds). kcat then sees every event (summary's
     count), each with "id" SOURCE/CHUNKSTART/OFFSET = its header jfr-id,
     all distinct, SOURCE = the key.
  2. The sender reconnects and resends the same bytes (same source id, same
     chunk starts): the listener produces no new message, counts every event
     as a duplicate, and still acknowledges every byte; the topic holds the
     same messages (ids unique across the topic).
  3. A plain sender (no hello) of the same bytes is never written to (its
     events are duplicates too: same source id and positions).
  4. A listener whose producer refuses the larger messages
     (message.max.bytes=1000): the connection is ended, its reason on stderr
     (the peer, "kafka: delivery failed", Kafka's error), no ACK reaches the
     byte count, exit status 1.
  5. Over TLS (--tls-cert, --tls-key; a Python ssl client, the server's CA
     trusted): the hello line inside TLS, ACK lines up to the byte count
     (read until then, the connection left open). Skipped, said so, in a
     build without TLS or without openssl to make the certificates.
SKIP (77) without a librdkafka build (no mock_kafka) or without kcat.
"""
import json
import os
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
import kafkalib as K  # noqa: E402
L = K.L

NAME = "sink-kafka-ack"


def fail(msg):
    print("FAIL: %s: %s" % (NAME, msg), flush=True)
    sys.exit(1)


def check(cond, msg):
    if not cond:
        fail(msg)


def send_acked(port, data, hello=b"JFRS/1 ack\n", timeout=30):
    """Send HELLO + DATA, half-close, read until the listener closes:
    (the ACK values, seconds from the last byte sent to the last ACK)."""
    s = L.connect(port, timeout=timeout)
    s.sendall(hello + data)
    t_sent = time.monotonic()
    s.shutdown(socket.SHUT_WR)
    got = b""
    t_last = t_sent
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            b = s.recv(65536)
        except socket.timeout:
            break
        except OSError:
            break
        if not b:
            break
        got += b
        if b.endswith(b"\n"):
            t_last = time.monotonic()
    s.close()
    acks = []
    lines = got.split(b"\n")
    if lines[-1] == b"":  # after the last '\n' (or nothing at all)
        lines.pop()
    for line in lines:
        check(line.startswith(b"ACK ") and line[4:].isdigit()
              and (line[4:5] != b"0" or line == b"ACK 0"), "bad ack line %r" % line[:80])
        acks.append(int(line[4:]))
    return acks, t_last - t_sent, got


def main():
    if len(sys.argv) != 4:
        print("usage: sink_kafka_ack.py JFRSTREAM MOCK_KAFKA FIXTURE", file=sys.stderr)
        return 2
    jfrstream, mock, fixture = sys.argv[1:]
    jfrstream = L.cli(jfrstream)
    why = K.missing(jfrstream, mock)
    if why:
        return L.skip(NAME, why)
    data = open(fixture, "rb").read()
    total, _ = K.summary_events(jfrstream, fixture)
    m = K.Mock(mock, 3, ["jfr-events:3"])
    check(m.bootstrap, "mock_kafka printed no bootstrap line")
    p, out, err, port = L.start_listener(
        jfrstream, ["--kafka", m.bootstrap, "--kafka-option", "queue.buffering.max.ms=1000"])
    check(port, "listen did not start: %s" % err.text())

    # 1. the first connection
    acks, wait, _ = send_acked(port, data)
    print("1st connection: %d ACK lines, last %s of %d bytes, %.2f s after the last byte"
          % (len(acks), acks[-1] if acks else None, len(data), wait), flush=True)
    check(acks and acks == sorted(set(acks)), "acks not growing: %s" % acks[:20])
    check(acks[-1] == len(data), "last ACK %s, want %d" % (acks[-1:], len(data)))
    check(wait >= 0.9, "the final ACK came %.2f s after the last byte: before the "
          "producer's 1 s batch was delivered" % wait)
    msgs = K.consume(m.bootstrap, "jfr-events", timeout=60, headers=True)
    check(len(msgs) == total, "kcat reads %d messages, want %d" % (len(msgs), total))
    ids = set()
    for i, msg in enumerate(msgs):
        obj = json.loads(msg.value)
        hid = (msg.headers or {}).get("jfr-id")
        check(list(obj)[-1] == "id" and obj["id"] == hid,
              "message %d: \"id\" %r, header jfr-id %r" % (i, obj.get("id"), hid))
        src, cs, off = hid.rsplit("/", 2)
        check(src == msg.key and cs.isdigit() and off.isdigit(),
              "message %d: id %r is not KEY/CHUNKSTART/OFFSET (key %r)" % (i, hid, msg.key))
        ids.add(hid)
    check(len(ids) == total, "%d distinct ids for %d messages" % (len(ids), total))
    print("kcat: %d messages, each with \"id\" = header jfr-id, %d distinct, e.g. %s"
          % (len(msgs), len(ids), sorted(ids)[0]), flush=True)

    # 2. the same bytes again: all duplicates, still acknowledged
    acks2, wait2, _ = send_acked(port, data)
    print("2nd connection (same bytes): %d ACK lines, last %s, %.2f s after the last byte"
          % (len(acks2), acks2[-1] if acks2 else None, wait2), flush=True)
    check(acks2 and acks2[-1] == len(data), "resend: last ACK %s, want %d"
          % (acks2[-1:], len(data)))
    # 3. a plain sender: never written to
    _, _, back = send_acked(port, data, hello=b"")
    check(back == b"", "a plain sender got %r" % back[:80])
    print("plain sender: 0 bytes back", flush=True)

    p.send_signal(signal.SIGTERM)
    rc = L.wait(p, 60, "listen")
    out.join()
    err.join()
    text = err.text()
    counts = K.final_counts(text)
    print("listener: exit %s, kafka counts %s" % (rc, counts), flush=True)
    check(rc == 0, "listen exited %s: %s" % (rc, text[-2000:]))
    check(counts.get("produced") == total and counts.get("delivered") == total,
          "want %d produced and delivered (the 1st connection), got %s" % (total, counts))
    check(counts.get("duplicates") == 2 * total,
          "want %d duplicates (the resend and the plain sender's), got %s" % (2 * total, counts))
    msgs2 = K.consume(m.bootstrap, "jfr-events", timeout=60, headers=True)
    ids2 = [(x.headers or {}).get("jfr-id") for x in msgs2]
    check(len(msgs2) == total and set(ids2) == ids,
          "topic: %d messages, %d distinct ids; want the first %d"
          % (len(msgs2), len(set(ids2)), total))
    # 4. a Kafka message refused for good: that connection ends, no full ack
    p, out, err, port = L.start_listener(
        jfrstream, ["--kafka", m.bootstrap, "--kafka-topic", "small", "--kafka-option",
                    "message.max.bytes=1000", "--once"])
    check(port, "listen did not start: %s" % err.text())
    acks4, _, _ = send_acked(port, data)
    rc = L.wait(p, 60, "listen")
    err.join()
    text = err.text()
    lost = [l for l in text.splitlines() if "delivery failed" in l]
    print("refused messages: ACKs %s, exit %s: %s" % (acks4[-3:], rc, lost[:1]), flush=True)
    check(rc == 1 and lost and "127.0.0.1:" in lost[0] and "too large" in lost[0],
          "want exit 1 and 'PEER: kafka: delivery failed (...too large...)': %s" % text[-2000:])
    check(not acks4 or acks4[-1] < len(data), "acknowledged %s of %d bytes despite the loss"
          % (acks4[-1:], len(data)))
    # 5. over TLS: the hello line and the acks inside TLS
    tls = "--tls-cert" in subprocess.run([jfrstream, "listen", "--help"], capture_output=True,
                                         text=True, timeout=30).stdout
    if not tls or not shutil.which("openssl"):
        print("TLS: skipped (%s)" % ("no TLS in this build" if not tls else "no openssl"),
              flush=True)
    else:
        sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        import certs as C  # noqa: E402
        d = tempfile.mkdtemp(prefix="jfrstream-ack-tls-")
        try:
            C.listener_set(d)
            p, out, err, port = L.start_listener(
                jfrstream, ["--kafka", m.bootstrap, "--kafka-topic", "tls", "--tls-cert",
                            os.path.join(d, "server.pem"), "--tls-key",
                            os.path.join(d, "server.key"), "--once"])
            check(port, "listen --tls-cert did not start: %s" % err.text())
            ctx = ssl.create_default_context(cafile=os.path.join(d, "ca.pem"))
            raw = L.connect(port, timeout=30)
            s = ctx.wrap_socket(raw, server_hostname="127.0.0.1")
            s.sendall(b"JFRS/1 ack\n" + data)
            got, last, end = b"", 0, time.monotonic() + 30
            while last < len(data) and time.monotonic() < end:
                b = s.recv(4096)
                if not b:
                    break
                got += b
                lines = got.split(b"\n")
                if len(lines) > 1 and lines[-2].startswith(b"ACK "):
                    last = int(lines[-2][4:])
            s.close()
            rc = L.wait(p, 60, "listen")
            print("TLS: %d ACK lines, last %d of %d bytes; listen exit %s"
                  % (got.count(b"\n"), last, len(data), rc), flush=True)
            check(last == len(data) and all(x.startswith(b"ACK ") for x in got.split(b"\n")[:-1]),
                  "over TLS: acks %r" % got[-200:])
        finally:
            shutil.rmtree(d, ignore_errors=True)
    m.stop()
    print("PASS: %s: %d events acknowledged only after delivery, resent: 0 produced, %d "
          "duplicates, acked; ids unique per event" % (NAME, total, total), flush=True)
    return 0


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, lambda *a: sys.exit(1))
    try:
        rc = main()
    finally:
        L.cleanup()
    sys.exit(rc)
