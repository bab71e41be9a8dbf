#!/usr/bin/env python3
"""live_cli.py — `jfrstream listen` and `tail` without a JVM: addresses, exit
statuses, signals, --once, --summary, the rate view, --view's frame lines,
--idle (also with an unfinished chunk), following the next JVM folder. Uses
the committed recordings test/data/*.jfr (finished chunks, final flag set),
sent over loopback or placed in a folder.

    test/live/live_cli.py JFRSTREAM

Exit 0 pass, 1 fail.
"""
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import livelib as L  # noqa: E402

NAME = "cli-live"
DATA = os.path.join(L.ROOT, "test", "data")
TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|\s+')

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


def squeeze_events(text):
    doc = TOKEN.sub(lambda m: "" if m.group(0)[0] != '"' else m.group(0), text)
    pre = '{"recording":{"events":['
    assert doc.startswith(pre) and doc.endswith("]}}")
    return doc[len(pre):-3]


def ends(err):
    return [l for _, l in err.lines if re.search(r": (stream ended|closed): ", l)]


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    js = L.cli(sys.argv[1])
    work = tempfile.mkdtemp(prefix="jfrstream-cli-live-")
    wl = os.path.join(DATA, "workload.jfr")
    data = open(wl, "rb").read()
    try:
        # --- usage errors
        for args in (["listen", "1.2.3.4:99999"], ["listen", "::1:5"], ["listen", "[::1"],
                     ["listen", "127.0.0.1:"], ["listen", "a", "b"], ["listen", "--bogus"],
                     ["--feed-size", "1", "listen", "0"], ["tail"], ["tail", "--idle", "x", "d"],
                     ["listen", "--stack-depth", "-1"]):
            r = L.run([js] + args, 10)
            check(r.returncode == 2, "exit 2 for %s" % " ".join(args))
        r = L.run([js, "tail", os.path.join(work, "absent")], 10)
        check(r.returncode == 1 and b"cannot tail" in r.stderr,
              "tail of a missing path: exit 1, 'cannot tail'")
        r = L.run([js, "--help"], 10)
        r1 = L.run([js, "listen", "--help"], 10)
        r2 = L.run([js, "help", "tail"], 10)
        check(b"  listen " in r.stdout and b"  tail " in r.stdout and
              r1.returncode == 0 and b"listen [LIVE OPTIONS]" in r1.stdout and
              r2.returncode == 0 and b"--exit-when-done" in r2.stdout,
              "--help lists listen and tail; listen --help and help tail document them")

        # --- addresses
        for addr, rx in (("0", r"listening on 127\.0\.0\.1:\d+"),
                         ("127.0.0.1:0", r"listening on 127\.0\.0\.1:\d+"),
                         ("[::1]:0", r"listening on \[::1\]:\d+|cannot listen on \[::1\]")):
            p = L.start([js, "listen", addr])
            err = L.Lines(p.stderr)
            m = err.wait_for(rx, 10)
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
            L.wait(p, 10, "listen")
            check(m is not None, "listen %s: '%s'" % (addr, m.group(0) if m else err.text()))

        # --- --json --once, a whole file: the events of print --json, compact
        p, out, err, port = L.start_listener(js, ["--json", "--once"])
        L.send(port, data)
        rc = L.wait(p, 20, "listen")
        out.join()
        ref = L.run([js, "print", "--json", wl], 60).stdout.decode()
        check(rc == 0 and ",".join(l for _, l in out.lines) == squeeze_events(ref),
              "listen --json --once of workload.jfr: exit %s, %d lines = print --json events"
              % (rc, len(out.lines)))

        # --- --once, the peer closes inside a chunk: exit 1
        p, out, err, port = L.start_listener(js, ["--once", "--json"])
        L.send(port, data[:len(data) // 2])
        rc = L.wait(p, 20, "listen")
        err.join()
        check(rc == 1 and any("closed:" in l for l in ends(err))
              and "input ended inside a chunk" in err.text(),
              "listen --once, peer closes mid-chunk: exit %s, reported" % rc)

        # --- SIGINT with a connection open mid-chunk: reported, exit 0; view lines
        p, out, err, port = L.start_listener(js, [])
        s1 = L.send(port, data[:len(data) // 2], close=False)
        L.send(port, data)
        out.wait_for(r"^t=\d+s conns=1/2 events=596 ", 5)
        p.send_signal(signal.SIGINT)
        rc = L.wait(p, 20, "listen")
        s1.close()
        out.join()
        err.join()
        view = [l for _, l in out.lines]
        check(rc == 0 and "SIGINT: stopping" in err.text()
              and "input ended inside a chunk" in err.text(),
              "SIGINT with an open mid-chunk connection: exit %s, the chunk reported" % rc)
        check(any(re.match(r"t=\d+s conns=\d+/2 events=596 rate=\S+/s top: \S+=", l) for l in view),
              "view: one plain line per second (%s)" % (view[-1][:70] if view else "none"))

        # --- --summary over 3 connections = 3 x summary of the file
        p, out, err, port = L.start_listener(js, ["--summary"])
        for _ in range(3):
            L.send(port, data)
        t0 = time.monotonic()
        while len(ends(err)) < 3 and time.monotonic() - t0 < 10:
            time.sleep(0.05)
        p.send_signal(signal.SIGTERM)
        rc = L.wait(p, 20, "listen")
        out.join()
        chunks, ours = L.parse_summary(out.text())
        rchunks, ref = L.parse_summary(L.run([js, "summary", wl], 60).stdout.decode())
        ref3 = {k: (c * 3, s * 3) for k, (c, s) in ref.items()}
        check(rc == 0 and chunks == 3 * rchunks and not L.compare_tables(ours, ref3),
              "listen --summary, 3 connections, SIGTERM: exit %s, table = 3 x summary" % rc)

        # --- --view: a recording older than the window leaves it at the next
        # frame, whose line counts what the frame shows (0 sources, 0 bytes)
        p, out, err, port = L.start_listener(js, ["--view", "gc-pauses", "--view-by", "source",
                                                  "--view-window", "60", "--view-every", "0.2"])
        L.send(port, data)  # returns once the listener closed it
        sent = time.time_ns()
        t0 = time.monotonic()
        while time.monotonic() - t0 < 10 and not any(
                t > sent and l.startswith("jfrstream listen ") for t, l in list(out.lines)):
            time.sleep(0.05)
        p.send_signal(signal.SIGTERM)
        rc = L.wait(p, 20, "listen")
        out.join()
        heads = [i for i, (_, l) in enumerate(out.lines) if l.startswith("jfrstream listen ")]
        counts = []  # (sources in the line, Source sections under it)
        for k, i in enumerate(heads):
            body = out.lines[i + 1:heads[k + 1] if k + 1 < len(heads) else len(out.lines)]
            m = re.search(r"   (\d+) sources?   ", out.lines[i][1])
            counts.append((int(m.group(1)) if m else -1,
                           sum(1 for _, l in body if l.startswith("Source: "))))
        check(rc == 0 and heads and heads[0] == 0 and all(a == b for a, b in counts)
              and out.lines[-1][1].endswith("   0 sources   0 bytes kept   (end)"),
              "listen --view --view-by source of a recording older than --view-window: exit "
              "%s, %d frames, each line's sources = its sections, the last empty" % (rc, len(heads)))

        # --- tail of a finished file (final flag): --json = listen --json
        r = L.run([js, "tail", wl, "--json", "--exit-when-done"], 20)
        check(r.returncode == 0 and r.stdout.decode().rstrip("\n").replace("\n", ",")
              == squeeze_events(ref_json(js, wl)),
              "tail FILE --json --exit-when-done: exit %d, = print --json events" % r.returncode)

        # --- a chunk without the final flag: --idle ends the tail
        nofinal = os.path.join(work, "nofinal.jfr")
        b = bytearray(data)
        b[67] &= ~0x02
        open(nofinal, "wb").write(b)
        t0 = time.monotonic()
        r = L.run([js, "tail", nofinal, "--idle", "0.5", "--summary"], 20)
        el = time.monotonic() - t0
        check(r.returncode == 0 and b"no new data for 0.5 s" in r.stderr and 0.4 < el < 5
              and b" Chunks: 1" in r.stdout,
              "tail --idle 0.5 of a non-final chunk: exit %d after %.1f s" % (r.returncode, el))

        # --- half a chunk, then nothing: --idle reports the unfinished chunk
        # (our own stop: exit 0)
        half = os.path.join(work, "half.jfr")
        open(half, "wb").write(data[:len(data) // 2])
        r = L.run([js, "tail", half, "--idle", "0.3"], 20)
        e = r.stderr.decode()
        check(r.returncode == 0 and "chunk 0 at byte %d: input ended inside a chunk: %d bytes "
              "short of the declared chunk size %d" % (len(data) // 2, len(data) - len(data) // 2,
                                                       len(data)) in e
              and "no new data for 0.3 s: 0 chunks, 0 events" in e,
              "tail --idle of half a chunk: the unfinished chunk reported, exit %d"
              % r.returncode)

        # --- parent folder: follow the next JVM's folder after a final chunk
        parent = os.path.join(work, "repo")
        os.makedirs(os.path.join(parent, "2026_01_01_00_00_00_1"))
        shutil.copy(wl, os.path.join(parent, "2026_01_01_00_00_00_1", "2026_01_01_00_00_00.jfr"))
        p = L.start([js, "tail", parent, "--summary"])
        out = L.Lines(p.stdout)
        err = L.Lines(p.stderr)
        m1 = err.wait_for(r"waiting for the next JVM", 10)
        os.makedirs(os.path.join(parent, "2026_01_01_00_00_09_2"))
        shutil.copy(os.path.join(DATA, "synthetic.jfr"),
                    os.path.join(parent, "2026_01_01_00_00_09_2", "2026_01_01_00_00_09.jfr"))
        m2 = err.wait_for(r"following the new repository folder 2026_01_01_00_00_09_2", 10)
        err.wait_for(r"synthetic|00_09_2.*final chunk|: the JVM finished writing.*10595 bytes", 5)
        time.sleep(0.3)
        p.send_signal(signal.SIGINT)
        rc = L.wait(p, 20, "tail")
        out.join()
        err.join()
        finals = [l for _, l in err.lines if "final chunk" in l]
        chunks, _ = L.parse_summary(out.text())
        check(rc == 0 and m1 and m2 and len(finals) == 2 and chunks == 3,
              "tail of a parent folder: 2 JVM folders followed, SIGINT exit %s, %s chunks" % (rc, chunks))
        # --- JDK 17 makes and removes an empty repository folder at startup:
        # the tail must not stay on it
        probe = os.path.join(work, "repo2")
        os.makedirs(os.path.join(probe, "2026_01_01_00_00_00_7"))
        p = L.start([js, "tail", probe, "--exit-when-done", "--summary"])
        out = L.Lines(p.stdout)
        err = L.Lines(p.stderr)
        time.sleep(0.3)
        os.rmdir(os.path.join(probe, "2026_01_01_00_00_00_7"))
        os.makedirs(os.path.join(probe, "2026_01_01_00_00_01_7"))
        shutil.copy(wl, os.path.join(probe, "2026_01_01_00_00_01_7", "2026_01_01_00_00_01.jfr"))
        rc = L.wait(p, 20, "tail")
        out.join()
        err.join()
        check(rc == 0 and "final chunk): 1 chunk, 596 events" in err.text(),
              "tail of a parent folder whose first JVM folder vanished: exit %s, %s"
              % (rc, err.text().strip().splitlines()[-1:] if err.text().strip() else ""))

        # --- the JVM removes its chunk files at exit before the tail opened
        # the last one: reported, exit 1
        gone = os.path.join(work, "repo3")
        os.makedirs(gone)
        nf1 = os.path.join(gone, "2026_01_01_00_00_00.jfr")
        shutil.copy(nofinal, nf1)
        p = L.start([js, "tail", gone, "--exit-when-done"])
        err = L.Lines(p.stderr)
        L.wait_open(p, nf1, 20)
        os.unlink(nf1)
        rc = L.wait(p, 20, "tail")
        err.join()
        check(rc == 1 and "removed (JVM exit) before the last ones could be read" in err.text(),
              "tail: chunk files removed before the final chunk: exit %s, reported" % rc)

        r = L.run([js, "tail", parent, "--exit-when-done"], 20)
        check(r.returncode == 0 and b"waiting" not in r.stderr,
              "tail of a parent folder --exit-when-done: exit %d at the final chunk" % r.returncode)
    finally:
        L.cleanup()
        shutil.rmtree(work, ignore_errors=True)
    return L.result(NAME, not fails, "; ".join(fails) if fails else "%d checks" % len(notes))


def ref_json(js, path):
    return L.run([js, "print", "--json", path], 60).stdout.decode()


if __name__ == "__main__":
    sys.exit(main())
