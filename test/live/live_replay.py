#!/usr/bin/env python3
"""live_replay.py — many live streams at once into one `jfrstream listen --summary`.

    test/live/live_replay.py JFRSTREAM [--java-home DIR] [--work DIR]
                        [--capture FILE] [--connections N]

A live stream captured from a real JVM with tools/jfr-pump --out (made once
and cached in --work, or given with --capture) is replayed over N (20)
concurrent loopback connections, plus:
  * one client that closes in the middle of a record (after half the bytes);
  * one client that writes the first 256 KiB one byte per send() (TCP_NODELAY)
    and the rest in random sizes of 1..9000 bytes.
Then SIGINT stops the listener. Checks:
  * each of the N + 1 whole connections reports the same
    "stream ended: C chunks, E events, B bytes", equal to the capture's
    (`jfrstream summary` of the capture for C and E);
  * the dropping client alone is reported ("closed", an unfinished chunk);
  * --summary (over all connections) = (N + 1) x the capture's table plus
    the table of the dropped prefix, per type;
  * listen exits 1 (a peer closed inside a chunk), after SIGINT.
Exit 0 pass, 1 fail, 77 skip (no java and no --capture).
"""
import argparse
import os
import random
import re
import signal
import socket
import sys
import threading
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import livelib as L  # noqa: E402

NAME = "replay"
END = re.compile(r"^jfrstream: (\S+): (stream ended|closed): (\d+) chunks?, (\d+) events?, (\d+) bytes?")


def send_whole(port, data, errors, i):
    try:
        s = L.connect(port, timeout=60)
        for off in range(0, len(data), 1 << 16):
            s.sendall(data[off:off + (1 << 16)])
        s.shutdown(socket.SHUT_WR)
        s.recv(1)  # the listener closes when done
        s.close()
    except OSError as e:
        errors.append("client %d: %s" % (i, e))


def send_bytewise(port, data, errors, seed=7):
    try:
        rnd = random.Random(seed)
        s = L.connect(port, timeout=60)
        head = min(len(data), 256 * 1024)
        for off in range(head):
            s.send(data[off:off + 1])
        off = head
        while off < len(data):
            k = rnd.randint(1, 9000)
            s.sendall(data[off:off + k])
            off += k
        s.shutdown(socket.SHUT_WR)
        s.recv(1)
        s.close()
    except OSError as e:
        errors.append("bytewise client: %s" % e)


def send_prefix(port, data, n, errors):
    try:
        s = L.connect(port, timeout=60)
        s.sendall(data[:n])
        time.sleep(0.2)
        s.close()
    except OSError as e:
        errors.append("dropping client: %s" % e)


def summary_of(jfrstream, path):
    r = L.run([jfrstream, "summary", path], 120)
    return r.returncode, L.parse_summary(r.stdout.decode())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("jfrstream")
    ap.add_argument("--java-home")
    ap.add_argument("--work", default=os.path.join(os.getcwd(), "live-work"))
    ap.add_argument("--capture")
    ap.add_argument("--connections", type=int, default=20)
    a = ap.parse_args()
    a.jfrstream = L.cli(a.jfrstream)
    fails = []
    try:
        if a.capture:
            capture = a.capture
        else:
            java = L.java_bin(a.java_home)
            if not java:
                return L.skip(NAME, "no java and no --capture")
            capture, last = L.ensure_capture(a.work, java)
            if not capture:
                return L.result(NAME, False, "no capture: %s" % last)
        data = open(capture, "rb").read()
        rc, (chunks, table) = summary_of(a.jfrstream, capture)
        events = sum(c for n, (c, _) in table.items() if n not in ("jdk.Metadata", "jdk.Checkpoint"))
        L.log("  capture %s: %d bytes, %s chunks, %d events (summary exit %d)"
              % (capture, len(data), chunks, events, rc))
        cut = len(data) // 2 + 7
        prefix = os.path.join(a.work, "prefix-%d.bin" % os.getpid())
        with open(prefix, "wb") as f:
            f.write(data[:cut])
        _, (pchunks, ptable) = summary_of(a.jfrstream, prefix)
        os.unlink(prefix)

        lp, lout, lerr, port = L.start_listener(a.jfrstream, ["--summary"])
        if not port:
            return L.result(NAME, False, "listen did not start: " + lerr.text())
        errors = []
        threads = [threading.Thread(target=send_whole, args=(port, data, errors, i))
                   for i in range(a.connections)]
        threads.append(threading.Thread(target=send_bytewise, args=(port, data, errors)))
        threads.append(threading.Thread(target=send_prefix, args=(port, data, cut, errors)))
        t0 = time.monotonic()
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
        total = a.connections + 2
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if sum(1 for _, l in lerr.lines if END.match(l)) >= total:
                break
            time.sleep(0.05)
        elapsed = time.monotonic() - t0
        lp.send_signal(signal.SIGINT)
        lrc = L.wait(lp, 30, "jfrstream listen")
        lout.join()
        lerr.join()
        fails += errors

        ends = [END.match(l).groups() for _, l in lerr.lines if END.match(l)]
        whole = [e for e in ends if e[1] == "stream ended"]
        closed = [e for e in ends if e[1] == "closed"]
        want = (str(chunks), str(events), str(len(data)))
        same = [e for e in whole if e[2:] == want]
        L.log("  %d connections ended in %.1f s: %d stream ended, %d of them with %s chunks, %s events, %s bytes; %d closed"
              % (len(ends), elapsed, len(whole), len(same), *want, len(closed)))
        if len(same) != a.connections + 1 or len(whole) != a.connections + 1:
            fails.append("expected %d whole connections with %s; got %s"
                         % (a.connections + 1, want, [e[2:] for e in whole]))
        if len(closed) != 1:
            fails.append("expected exactly 1 closed connection, got %d" % len(closed))
        else:
            peer = closed[0][0]
            msgs = [l for _, l in lerr.lines if l.startswith("jfrstream: %s: " % peer)]
            L.log("  dropped peer: " + " | ".join(m[len("jfrstream: "):] for m in msgs[1:]))
            if not any("unfinished" in m or "input ended inside a chunk" in m for m in msgs):
                fails.append("the dropped connection was not reported as truncated")
            others = [l for _, l in lerr.lines if ("truncat" in l or "unfinished" in l)
                      and not l.startswith("jfrstream: %s: " % peer)]
            if others:
                fails.append("other connections reported errors: %s" % others[:3])
        if lrc != 1:
            fails.append("listen exit %s (expected 1: a peer closed inside a chunk)" % lrc)

        # the summary over all connections
        ours_chunks, ours = L.parse_summary(lout.text())
        n = a.connections + 1
        expect = {k: (v[0] * n, v[1] * n) for k, v in table.items()}
        for k, v in ptable.items():
            c, s = expect.get(k, (0, 0))
            expect[k] = (c + v[0], s + v[1])
        diffs = L.compare_tables(ours, expect)
        want_chunks = chunks * n + (pchunks or 0)
        if ours_chunks != want_chunks:
            diffs.insert(0, "chunks: ours %s, expected %s" % (ours_chunks, want_chunks))
        if diffs:
            fails.append("summary: " + "; ".join(diffs[:6]))
        else:
            L.log("  summary over all connections: %d chunks, %d records = %d x capture + dropped prefix"
                  % (ours_chunks, sum(c for c, _ in ours.values()), n))
        detail = "%d connections + 1 dropped: each %s chunks, %s events; summary exact" % (
            n, chunks, events)
        if fails:
            L.log("  listen stderr (tail):\n    " + "\n    ".join(lerr.text().splitlines()[-10:]))
        return L.result(NAME, not fails, "; ".join(fails) if fails else detail)
    finally:
        L.cleanup()


if __name__ == "__main__":
    sys.exit(main())
