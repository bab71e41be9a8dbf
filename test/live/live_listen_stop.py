#!/usr/bin/env python3
"""live_listen_stop.py — `jfrstream listen` stopped by SIGTERM and by SIGINT with
peers left in every state, and its limits, without a JVM (loopback only):

  - one peer sent a whole chunk, one stopped inside the chunk header, one
    inside a record of a finished chunk, one inside a flush segment of a
    live-shaped chunk; all still connected when the signal comes. The whole
    chunk's events are printed, each partial chunk is reported on stderr
    with its peer and the bytes received, the exit status is 0 (an
    unfinished chunk at our own stop is not an error), within 5 s.
  - garbage (bad magic, a header then junk, a huge chunk size): each of those
    connections is closed alone with its reason (peer, chunk, byte offset),
    a good one beside them completes; exit status 1.
  - --max-connections, --max-bytes, --idle-timeout: the extra connection is
    refused with a reason, the one over the byte limit closed with a reason,
    a silent peer closed by the idle limit while a peer sending a byte every
    0.3 s stays; the other connections complete; exit status 1.
  - usage errors for the three options (exit 2).

    test/live/live_listen_stop.py JFRSTREAM

Exit 0 pass, 1 fail.
"""
import os
import random
import re
import signal
import socket
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import livelib as L  # noqa: E402

NAME = "listen-stop"
DATA = os.path.join(L.ROOT, "test", "data")

fails = []
notes = []


def check(cond, what):
    if cond:
        notes.append(what)
        L.log("  ok: " + what)
    else:
        fails.append(what)
        L.log("  FAIL: " + what)
    return cond


def live_shaped(data):
    """The JMX live stream's header: size 68, offsets 0, state 1 (generation)."""
    b = bytearray(data)
    b[8:32] = bytes(24)
    b[15] = 68
    b[40:48] = bytes(8)
    b[64] = 1
    return bytes(b)


_ports = {}


def port_of(s):
    """The peer's local port (remembered: asked again after close)."""
    if s not in _ports:
        _ports[s] = s.getsockname()[1]
    return _ports[s]


def wait_until(cond, timeout):
    end = time.monotonic() + timeout
    while not cond() and time.monotonic() < end:
        time.sleep(0.05)
    return cond()


def line_for(err, port, rx):
    """The first stderr line of peer 127.0.0.1:port matching rx."""
    pre = "jfrstream: 127.0.0.1:%d: " % port
    for _, l in err.lines:
        if l.startswith(pre):
            m = re.search(rx, l[len(pre):])
            if m:
                return m
    return None


def stop_with(js, data, signum):
    name = signal.Signals(signum).name
    size = len(data)
    live = live_shaped(data)
    p, out, err, port = L.start_listener(js, ["--json"])
    if not check(port is not None, "%s: listener started" % name):
        return
    whole = L.connect(port)
    whole.sendall(data)               # a whole chunk, the peer stays connected
    head = L.connect(port)
    head.sendall(data[:30])           # inside the 68-byte header
    half = size // 2
    body = L.connect(port)
    body.sendall(data[:half])         # inside a record of a finished chunk
    seg = L.connect(port)
    seg.sendall(live[:half])          # inside a flush segment of a live chunk
    peers = [whole, head, body, seg]
    for s in peers:
        port_of(s)
    ok = wait_until(lambda: len(out.lines) >= 596 and
                    sum("connected" in l for _, l in err.lines) >= 4, 10)
    time.sleep(0.3)                   # the listener has read everything sent
    check(ok, "%s: 4 peers connected, the whole chunk's events printed before the signal"
          % name)
    t0 = time.monotonic()
    p.send_signal(signum)
    rc = L.wait(p, 10, "listen")
    took = time.monotonic() - t0
    out.join()
    err.join()
    for s in peers:
        s.close()
    text = err.text()
    check("Sanitizer" not in text, "%s: no sanitizer report" % name)
    check(rc == 0 and took < 5 and "%s: stopping" % name in text,
          "%s: exit status %s (0 documented) after %.2f s (bound 5 s)" % (name, rc, took))

    m = line_for(err, port_of(whole), r"^(?:stream ended|closed): 1 chunk, 596 events, "
                 r"%d bytes$" % size)
    check(m is not None, "%s: the whole chunk: 1 chunk, 596 events, %d bytes" % (name, size))

    m = line_for(err, port_of(head), r"^chunk 0 at byte 30: input ended inside a chunk: "
                 r"38 of the 68 header bytes missing$")
    c = line_for(err, port_of(head), r"^closed: 0 chunks, 0 events, 30 bytes$")
    check(m is not None and c is not None,
          "%s: mid-header peer reported: 30 bytes received, 38 of 68 missing" % name)

    m = line_for(err, port_of(body), r"^chunk 0 at byte %d: input ended inside a chunk: "
                 r"(\d+) bytes short of the declared chunk size %d$" % (half, size))
    c = line_for(err, port_of(body), r"^closed: 0 chunks, 0 events, %d bytes$" % half)
    check(m is not None and c is not None and size - int(m.group(1)) == half,
          "%s: mid-record peer reported: %d bytes of the chunk received, %s missing"
          % (name, half, m.group(1) if m else "?"))

    m = line_for(err, port_of(seg), r"^chunk 0 at byte %d: input ended inside a chunk: live "
                 r"chunk unfinished after (\d+) complete flush segments?; (\d+) bytes? of an "
                 r"unfinished segment dropped$" % half)
    c = line_for(err, port_of(seg), r"^closed: 0 chunks, (\d+) events?, %d bytes$" % half)
    segs, dropped = (int(m.group(1)), int(m.group(2))) if m else (0, 0)
    seg_events = int(c.group(1)) if c else -1
    check(m is not None and c is not None and segs >= 1 and 0 < dropped < half
          and seg_events > 0,
          "%s: live peer reported: %d segments delivered (%d events), %d bytes of the "
          "unfinished one dropped" % (name, segs, seg_events, dropped))
    check(len(out.lines) == 596 + seg_events,
          "%s: stdout holds the %d events delivered (596 + %d), got %d"
          % (name, 596 + seg_events, seg_events, len(out.lines)))


def limits(js, data):
    size = len(data)
    small = open(os.path.join(DATA, "synthetic.jfr"), "rb").read()  # 2 chunks, 27 events
    p, out, err, port = L.start_listener(
        js, ["--summary", "--max-connections", "4", "--max-bytes", "300K",
             "--idle-timeout", "1"])
    if not check(port is not None, "limits: listener started"):
        return
    slow = L.connect(port)
    silent = L.connect(port)
    big = L.connect(port)
    ok1 = L.connect(port)
    wait_until(lambda: sum("connected" in l for _, l in err.lines) >= 4, 10)
    extra = L.connect(port)           # the fifth: refused
    for s in (slow, silent, big, ok1, extra):
        port_of(s)
    refused = None
    big.sendall(data[:300 * 1024 + 1000])
    ok1.sendall(small)
    ok1.shutdown(socket.SHUT_WR)
    t0 = time.monotonic()
    while time.monotonic() - t0 < 2.2:  # a byte every 0.3 s: not idle
        slow.sendall(data[int((time.monotonic() - t0) / 0.3):][:1])
        time.sleep(0.3)
    slow_open = line_for(err, port_of(slow), r"idle limit|closed") is None
    wait_until(lambda: line_for(err, port_of(ok1), r"^stream ended") is not None, 10)
    p.send_signal(signal.SIGTERM)
    rc = L.wait(p, 10, "listen")
    out.join()
    err.join()
    for s in (slow, silent, big, ok1, extra):
        s.close()
    refused = line_for(err, port_of(extra), r"^connection limit 4 reached: refused$")
    check(refused is not None, "limits: the 5th connection refused with a reason")
    m = line_for(err, port_of(big), r"^byte limit 307200 reached \(chunk 0, \d+ bytes parsed\)$")
    t = line_for(err, port_of(big), r"bytes short of the declared chunk size %d$" % size)
    check(m is not None and t is not None,
          "limits: over --max-bytes 300K: closed with a reason, the partial chunk reported")
    m = line_for(err, port_of(silent), r"^idle limit: no bytes for (\d+) ms \(after 0 bytes\)$")
    check(m is not None and 1000 <= int(m.group(1)) < 2000,
          "limits: a silent peer closed by --idle-timeout 1 (%s ms)" % (m.group(1) if m else "?"))
    check(slow_open, "limits: a peer sending a byte every 0.3 s is not idle")
    check(line_for(err, port_of(ok1), r"^stream ended: 2 chunks, 27 events, %d bytes$"
                   % len(small)) is not None,
          "limits: a good connection beside them completes (synthetic.jfr: 27 events)")
    check("Sanitizer" not in err.text(), "limits: no sanitizer report")
    check(rc == 1, "limits: exit status %s (1: connections were closed by limits)" % rc)


def garbage(js, data):
    """Bad input on three connections: each is closed alone with its reason
    (peer, chunk, byte offset); a good connection beside them completes."""
    size = len(data)
    rnd = random.Random(5)
    junk = bytes(rnd.getrandbits(8) for _ in range(size - 68))
    huge = bytearray(data[:68])
    huge[8:16] = (1 << 62).to_bytes(8, "big")
    p, out, err, port = L.start_listener(js, ["--summary"])
    if not check(port is not None, "garbage: listener started"):
        return
    bad = {"bad magic": (b"GARBAGE!" * 100, r"chunk 0 at byte 0: not a JFR chunk \(bad magic\)"),
           "header then junk": (data[:68] + junk, r"chunk 0 at byte \d+: record size or type "
                                r"out of range"),
           "huge chunk size": (bytes(huge) + junk[:100000], r"chunk 0 at byte 8: chunk larger "
                               r"than the configured maximum: declared size %d" % (1 << 62))}
    socks = {}
    for what, (b, _) in bad.items():
        s = L.connect(port)
        port_of(s)
        s.sendall(b)
        socks[what] = s
    good = L.connect(port)
    port_of(good)
    good.sendall(data)
    good.shutdown(socket.SHUT_WR)
    wait_until(lambda: sum(bool(re.search(r": (closed|stream ended): ", l))
                           for _, l in err.lines) >= 4, 10)
    p.send_signal(signal.SIGTERM)
    rc = L.wait(p, 10, "listen")
    err.join()
    out.join()
    for what, (b, rx) in bad.items():
        s = socks[what]
        m = line_for(err, port_of(s), "^" + rx)
        c = line_for(err, port_of(s), r"^closed: 0 chunks, 0 events, \d+ bytes \(with errors\)$")
        check(m is not None and c is not None,
              "garbage: %s: closed with the reason (%s)" % (what, m.group(0) if m else "none"))
        s.close()
    good.close()
    check(line_for(err, port_of(good), r"^stream ended: 1 chunk, 596 events, %d bytes$" % size)
          is not None, "garbage: a good connection beside them completes (596 events)")
    check(rc == 1, "garbage: exit status %s (1: bad input)" % rc)


def resync(js, data):
    """--resync: garbage between two copies of the recording on one connection;
    the connection stays open, the skipped bytes are reported with offset and
    count, and both chunks are delivered."""
    size = len(data)
    junk = bytes(b if b != 0x46 else 0x47 for b in random.Random(7).randbytes(5000))
    p, out, err, port = L.start_listener(js, ["--resync", "--summary"])
    if not check(port is not None, "resync: listener started"):
        return
    s = L.connect(port)
    port_of(s)
    s.sendall(data + junk + data)
    s.shutdown(socket.SHUT_WR)
    wait_until(lambda: any(re.search(r": (closed|stream ended): ", l) for _, l in err.lines), 10)
    p.send_signal(signal.SIGTERM)
    rc = L.wait(p, 10, "listen")
    err.join()
    out.join()
    m = line_for(err, port_of(s), r"^chunk 1 at byte %d: bytes skipped to the next chunk magic: "
                 r"5000 bytes skipped; next chunk magic at byte %d$" % (size, size + 5000))
    check(m is not None, "resync: the skipped bytes are reported with offset and count")
    check(line_for(err, port_of(s), r"^stream ended: 2 chunks, 1192 events, %d bytes \(with errors\)$"
                   % (2 * size + 5000)) is not None,
          "resync: both chunks delivered on the same connection (1192 events)")
    s.close()
    check(rc == 1, "resync: exit status %s (1: damaged input)" % rc)


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    js = L.cli(sys.argv[1])
    data = open(os.path.join(DATA, "workload.jfr"), "rb").read()
    try:
        for args in (["--max-connections", "0"], ["--max-connections", "x"],
                     ["--max-connections"], ["--max-bytes", "1Q"], ["--max-bytes", "-5"],
                     ["--idle-timeout", "-1"], ["--idle-timeout", "soon"]):
            r = L.run([js, "listen"] + args + ["0"], 10)
            check(r.returncode == 2, "exit 2 for listen %s" % " ".join(args))
        r = L.run([js, "listen", "--help"], 10)
        check(all(o in r.stdout for o in (b"--max-connections N", b"--max-bytes BYTES",
                                          b"--idle-timeout SECONDS")),
              "listen --help documents the three limits")
        stop_with(js, data, signal.SIGTERM)
        stop_with(js, data, signal.SIGINT)
        garbage(js, data)
        resync(js, data)
        limits(js, data)
    finally:
        L.cleanup()
    return L.result(NAME, not fails, "; ".join(fails) if fails else "%d checks" % len(notes))


if __name__ == "__main__":
    sys.exit(main())
