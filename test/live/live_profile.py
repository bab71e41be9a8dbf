#!/usr/bin/env python3
"""live_profile.py — profiles from live inputs: `listen --collapsed/--pprof/
--flamegraph`, with and without --window, without a JVM (the committed
test/data/workload.jfr sent over loopback).

    test/live/live_profile.py JFRSTREAM

Checks: one connection (--once) gives exactly the collapsed stacks of
`jfrstream collapsed` on the file, and a pprof/HTML file; two connections at
once (interleaved sends) give every stack twice its weight (constant keys
of the two inputs kept apart); --window 0.5 writes the first window's
profile while the listener still runs, replaces it with the next window that
has events, and leaves no FILE.tmp; `tail` of a chunk file gives the
file's profile. Exit 0 pass, 1 fail.
"""
import gzip
import os
import signal
import socket
import sys
import tempfile
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import livelib as L  # noqa: E402

NAME = "profile-live"
fails = []


def check(cond, what):
    L.log(("  ok: " if cond else "  FAIL: ") + what)
    if not cond:
        fails.append(what)
    return cond


def folded(text, times=1):
    out = {}
    for line in text.splitlines():
        k, _, n = line.rpartition(' ')
        out[k] = out.get(k, 0) + int(n) * times
    return out


def wait_file(path, timeout):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if os.path.exists(path):
            return True
        time.sleep(0.05)
    return False


def main():
    js = L.cli(sys.argv[1])
    wl = os.path.join(L.ROOT, "test", "data", "workload.jfr")
    data = open(wl, "rb").read()
    tmp = tempfile.mkdtemp(prefix="jfrstream-profile-live-")
    try:
        for ev in ("cpu", "alloc", "lock"):
            want = L.run([js, "collapsed", "--event", ev, wl], 60).stdout.decode()
            col, pp, fl = (os.path.join(tmp, ev + x) for x in (".txt", ".pb.gz", ".html"))
            p, out, err, port = L.start_listener(
                js, ["--once", "--profile-event", ev, "--collapsed", col, "--pprof", pp,
                     "--flamegraph", fl])
            L.send(port, data)
            rc = L.wait(p, 30, "listen")
            got = open(col).read() if os.path.exists(col) else ""
            raw = gzip.open(pp).read() if os.path.exists(pp) else b""
            page = open(fl).read() if os.path.exists(fl) else ""
            check(rc == 0 and folded(got) == folded(want) and len(want) > 0,
                  "listen --once --profile-event %s: exit %s, %d collapsed lines = collapsed "
                  "of the file" % (ev, rc, len(got.splitlines())))
            check(len(raw) > 0 and b"Produced by jfrstream" in raw and "<script>" in page,
                  "%s: pprof (%d bytes) and flame graph (%d bytes) written" %
                  (ev, len(raw), len(page)))

        # two inputs at once: every stack twice
        want = L.run([js, "collapsed", "--event", "alloc", "--threads", wl], 60).stdout.decode()
        col = os.path.join(tmp, "two.txt")
        p, out, err, port = L.start_listener(
            js, ["--profile-event", "alloc", "--profile-threads", "--collapsed", col])
        a, b = L.connect(port), L.connect(port)
        step = 4096
        for off in range(0, len(data), step):
            a.sendall(data[off:off + step])
            b.sendall(data[off:off + step])
        for s in (a, b):
            s.shutdown(socket.SHUT_WR)
        ended = err.wait_for(r"stream ended", 20) and True
        time.sleep(0.3)
        for s in (a, b):
            s.close()
        p.send_signal(signal.SIGINT)
        rc = L.wait(p, 20, "listen")
        got = open(col).read() if os.path.exists(col) else ""
        check(rc == 0 and ended and folded(got) == folded(want, 2),
              "two connections, --profile-threads: exit %s, every stack twice (%d lines)" %
              (rc, len(got.splitlines())))

        # --window: written while running, replaced by the next window with events
        col = os.path.join(tmp, "win.txt")
        want = L.run([js, "collapsed", wl], 60).stdout.decode()
        p, out, err, port = L.start_listener(js, ["--window", "0.5", "--collapsed", col])
        L.send(port, data)
        first = wait_file(col, 10)
        m1 = os.stat(col).st_mtime_ns if first else 0
        got1 = open(col).read() if first else ""
        running = p.poll() is None
        time.sleep(1.2)  # empty windows: the file stays
        same = first and os.stat(col).st_mtime_ns == m1
        L.send(port, data)
        end = time.monotonic() + 10
        while time.monotonic() < end and os.stat(col).st_mtime_ns == m1:
            time.sleep(0.05)
        replaced = os.stat(col).st_mtime_ns != m1
        got2 = open(col).read()
        p.send_signal(signal.SIGINT)
        rc = L.wait(p, 20, "listen")
        check(first and running and folded(got1) == folded(want) and same,
              "--window 0.5: the first window written while listening (%d lines), kept "
              "through empty windows" % len(got1.splitlines()))
        check(replaced and folded(got2) == folded(want) and rc == 0 and
              not os.path.exists(col + ".tmp"),
              "--window: replaced by the next window with events, exit %s, no .tmp" % rc)

        # tail of a chunk file: the same profile at the end
        d = os.path.join(tmp, "repo")
        os.mkdir(d)
        with open(os.path.join(d, "workload.jfr"), "wb") as f:
            f.write(data)
        col = os.path.join(tmp, "tail.txt")
        want = L.run([js, "collapsed", "--event", "lock", wl], 60).stdout.decode()
        r = L.run([js, "tail", "--idle", "1", "--profile-event", "lock", "--collapsed", col,
                   os.path.join(d, "workload.jfr")], 30)
        got = open(col).read() if os.path.exists(col) else ""
        check(r.returncode == 0 and folded(got) == folded(want),
              "tail --profile-event lock --collapsed: exit %d, %d lines = collapsed of the file"
              % (r.returncode, len(got.splitlines())))

        # async-profiler's event kinds (wall by samples, nativemem) through
        # listen, when the producers' recordings are there
        prod = os.path.join(L.ROOT, "..", "shared", "data", "producers")
        for name, ev in (("wall.jfr.gz", "wall"), ("nativemem.jfr.gz", "nativemem")):
            src = os.path.join(prod, name)
            if not os.path.exists(src):
                L.log("  note: %s absent: --profile-event %s not checked" % (src, ev))
                continue
            plain = os.path.join(tmp, name[:-3])
            with gzip.open(src) as f, open(plain, "wb") as o:
                o.write(f.read())
            want = L.run([js, "collapsed", "--event", ev, "--threads", plain], 60).stdout.decode()
            col = os.path.join(tmp, ev + "-ap.txt")
            p, out, err, port = L.start_listener(
                js, ["--once", "--profile-event", ev, "--profile-threads", "--collapsed", col])
            L.send(port, open(plain, "rb").read())
            rc = L.wait(p, 30, "listen")
            got = open(col).read() if os.path.exists(col) else ""
            check(rc == 0 and folded(got) == folded(want) and len(want) > 0,
                  "listen --profile-event %s (%s): exit %s, %d lines, total %d = collapsed of "
                  "the file" % (ev, name[:-3], rc, len(got.splitlines()),
                                sum(folded(got).values())))

        # a bad --profile-event: usage error
        r = L.run([js, "listen", "127.0.0.1:0", "--profile-event", "nope", "--collapsed",
                   col], 10)
        check(r.returncode == 2 and b"unknown event" in r.stderr,
              "listen --profile-event nope: exit %d" % r.returncode)
    finally:
        L.cleanup()
        import shutil
        shutil.rmtree(tmp, ignore_errors=True)
    return L.result(NAME, not fails, "%d failures" % len(fails))


if __name__ == "__main__":
    sys.exit(main())
