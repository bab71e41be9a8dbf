#!/usr/bin/env python3
"""live_view.py — the live views (`listen --view`, `tail --view`) beside real JVMs:
each last frame equals `jfrstream view` of the same bytes in a file.

    test/live/live_view.py JFRSTREAM [--java-home DIR | --jdk MAJOR] [--work DIR]
                           [--seconds S]

1. listen: SeqWorkload (a small young generation, -Xmn2m with the serial
   collector, and 4 worker threads allocating: GC pauses) recorded by
   tools/jfr-pump (live mode, settings profile: jdk.ExecutionSample every
   10 ms) through a tee proxy (livelib.Tee, which keeps a copy of the bytes)
   into `listen --once --view gc-pauses --view hot-methods --view-every 1
   --view-window 3600`. Checks: exit 0; every frame's header well formed,
   only the last one ending with "(end)"; at least 2 frames with data
   ("bytes kept" > 68) printed before the pump's stream ended (live delivery);
   the last frame's views are, byte for byte, `jfrstream view gc-pauses COPY`
   then `jfrstream view hot-methods COPY` (COPY: the tee's copy, the raw live
   stream, which `view` reads directly); both views have data rows.
2. tail: `tail REPO --view gc-pauses --view-window 3600 --view-every 1
   --exit-when-done` started on an empty folder, then a JVM with
   -XX:FlightRecorderOptions:repository=REPO (chunk rotations every 1.3 s).
   Each chunk file the JVM makes is opened as soon as it appears (polled every
   20 ms) and read at the end, so that the JVM's deletion of its repository at
   exit (JDK 17) does not lose it. Checks: exit 0, ended by the final chunk;
   the last frame equals `jfrstream view gc-pauses` of the chunk files
   concatenated in chunk start order, with data rows.
3. by source: run 1's copy and run 2's chunks (two JVMs) sent one after the
   other over loopback TCP to `listen --view gc-pauses --view-by source
   --view-window 86400` (the copy in two parts: the first ends inside its
   chunk, after its first flush segment, and a frame is awaited before the
   rest), then test/data/workload.jfr (2026-11-21: older than the window),
   stopped by SIGINT once every connection ended. Checks: exit 0; every
   frame holds as many "Source: ID" sections as its header counts sources;
   the frame between the two parts names the JVM (HOST:PID:START), not the
   peer, though its chunk has not ended; the last frame ("(end)") holds one
   section per connection whose events are in the window, in that order (the
   fixture left out unless the clock is within a day of it), ID naming that
   JVM's pid, each equal to `jfrstream view gc-pauses` of that connection's
   bytes.
Exit 0 pass, 1 fail, 77 skip (no java).
"""
import argparse
import os
import re
import shutil
import signal
import socket
import struct
import sys
import tempfile
import threading
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import livelib as L  # noqa: E402

NAME = "view"
# GC pauses: the young generation fills often (the workers allocate ~3 MB/s)
GC_OPTS = ["-Xmx32m", "-Xmn2m", "-XX:+UseSerialGC"]
HEAD = re.compile(r"^jfrstream (listen|tail) (\S+)   (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)   "
                  r"the last (\S+) s   (\d+) sources?   (\d+) bytes kept(   \(end\))?$")


class RawLines:
    """A child's stdout as raw lines (bytes, with their newline) and arrival time.ns."""

    def __init__(self, pipe):
        self.lines = []
        self.t = threading.Thread(target=self._run, args=(pipe,), daemon=True)
        self.t.start()

    def _run(self, pipe):
        for raw in iter(pipe.readline, b""):
            self.lines.append((time.time_ns(), raw))

    def join(self, timeout=10):
        self.t.join(timeout)


def frames(lines, prefix):
    """[(arrival ns, header text, header match or None, body bytes)] and the bytes
    before the first header."""
    out, stray = [], b""
    for t, raw in lines:
        if raw.startswith(prefix):
            head = raw.decode("utf-8", "replace").rstrip("\n")
            out.append([t, head, HEAD.match(head), b""])
        elif out:
            out[-1][3] += raw
        else:
            stray += raw
    return out, stray


def check_frames(fr, stray, cmd, fails):
    """The frames' common checks: headers well formed, only the last one marked
    (end). Returns the last frame or None."""
    if stray:
        fails.append("%s: output before the first frame: %r" % (cmd, stray[:200]))
    if not fr:
        fails.append("%s: no frame printed" % cmd)
        return None
    bad = [f[1] for f in fr if not f[2]]
    if bad:
        fails.append("%s: header not as documented: %r" % (cmd, bad[0]))
        return None
    ends = [i for i, f in enumerate(fr) if f[2].group(7)]
    if ends != [len(fr) - 1]:
        fails.append("%s: frames marked (end): %s of %d" % (cmd, ends, len(fr)))
    return fr[-1]


def view(jfrstream, name, path):
    r = L.run([jfrstream, "view", name, path], 120)
    if r.returncode != 0:
        return None, "view %s %s: exit %d: %s" % (name, path, r.returncode,
                                                   r.stderr.decode(errors="replace")[:300])
    return r.stdout, None


def first_diff(a, b):
    """Where two texts part (line number, the two lines)."""
    la, lb = a.split(b"\n"), b.split(b"\n")
    for i in range(max(len(la), len(lb))):
        x = la[i] if i < len(la) else None
        y = lb[i] if i < len(lb) else None
        if x != y:
            return "line %d: live %r, file %r" % (i + 1, x, y)
    return "equal"


def pauses(text):
    m = re.search(rb"^Number of Pauses: (\d+)", text, re.M)
    return int(m.group(1)) if m else 0


def table_rows(text):
    """The data rows of a table view: the lines after its header's dashes."""
    lines = text.split(b"\n")
    for i, l in enumerate(lines):
        if re.match(rb"^-+( -+)+\s*$", l):
            return [x for x in lines[i + 1:] if x.strip()]
    return []


def samples(rows):
    return sum(int(m.group(1)) for m in (re.search(rb"\s(\d+)\s+[\d.]+%\s*$", r) for r in rows)
               if m)


# ------------------------------------------------------------------ 1. listen

def run_listen(a, java, work, fails):
    """Returns (copy path, workload pid) or (None, None)."""
    copy = os.path.join(work, "stream.bin")
    t0 = time.monotonic()
    lp = L.start([a.jfrstream, "listen", "127.0.0.1:0", "--once", "--view", "gc-pauses",
                  "--view", "hot-methods", "--view-every", "1", "--view-window", "3600"])
    lout = RawLines(lp.stdout)
    lerr = L.Lines(lp.stderr)
    m = lerr.wait_for(r"listening on 127\.0\.0\.1:(\d+)", 10)
    if not m:
        fails.append("listen did not start: " + lerr.text()[-500:])
        return None, None
    tee = L.Tee(int(m.group(1)), copy)
    w, wout, werr = L.seq_workload(
        java, ["--rate", "1000", "--duration", str(max(1, a.seconds - 2)), "--threads", "4",
               "--wait-recordings", "1", "--linger", "120"], jvm_opts=GC_OPTS)
    pid = L.workload_pid(wout)
    if not pid:
        fails.append("SeqWorkload did not start: " + werr.text()[-800:])
        return None, None
    pp, pout, perr = L.pump(java, ["--pid", str(pid), "--duration", "%ds" % a.seconds,
                                   "--connect", "127.0.0.1:%d" % tee.port,
                                   "--settings", "profile"])
    prc = L.wait(pp, 120, "jfr-pump")
    perr.join()
    if prc != 0:
        fails.append("jfr-pump exit %s: %s" % (prc, perr.text()[-500:]))
    tee.t.join(30)
    lrc = L.wait(lp, 30, "jfrstream listen")
    lout.join()
    lerr.join()
    if w.poll() is None:
        w.send_signal(signal.SIGTERM)
    L.wait(w, 60, "SeqWorkload")
    took = time.monotonic() - t0
    if lrc != 0:
        fails.append("listen exit %s: %s" % (lrc, lerr.text()[-500:]))
    if tee.error:
        fails.append("tee: " + tee.error)
    pump_last = [l for _, l in perr.lines if "bytes" in l]
    if pump_last:
        L.log("  pump: " + pump_last[-1])

    fr, stray = frames(lout.lines, b"jfrstream listen ")
    last = check_frames(fr, stray, "listen", fails)
    if last is None or not tee.t_end:
        return (copy if os.path.exists(copy) else None), pid
    # live delivery: frames with data printed before the pump's stream ended
    live = [f for f in fr[:-1] if int(f[2].group(6)) > 68 and f[0] < tee.t_end]
    kept = [int(f[2].group(6)) for f in live]
    first = (live[0][0] - tee.t_first) / 1e9 if live else None
    L.log("  listen: %d frames, %d with data before the stream ended (%.1f s of stream; "
          "bytes kept %s); the first %s s after the first byte; last frame: %s"
          % (len(fr), len(live), (tee.t_end - tee.t_first) / 1e9,
             ", ".join(str(k) for k in kept), "%.2f" % first if first is not None else "-",
             last[1]))
    if len(live) < 2:
        fails.append("listen: %d frames with data (bytes kept > 68) before the stream ended, "
                     "want >= 2" % len(live))
    if last[2].group(5) != "1":
        fails.append("listen: last frame: %s sources, want 1" % last[2].group(5))
    if last[2].group(4) != "3600":
        fails.append("listen: last frame: the last %s s, want 3600" % last[2].group(4))

    # the last frame = view of the copy, view by view
    gc, err = view(a.jfrstream, "gc-pauses", copy)
    hot, err2 = view(a.jfrstream, "hot-methods", copy)
    if err or err2:
        fails.append(err or err2)
        return copy, pid
    if last[3] != gc + hot:
        fails.append("listen: the last frame differs from view gc-pauses + view hot-methods "
                     "of the copy (%d and %d bytes): %s" % (len(last[3]), len(gc) + len(hot),
                                                             first_diff(last[3], gc + hot)))
    else:
        L.log("  listen: last frame = view gc-pauses + view hot-methods of the %d bytes "
              "received (%d + %d bytes of text)" % (tee.bytes, len(gc), len(hot)))
    rows = table_rows(hot)
    L.log("  rows: gc-pauses %d pauses; hot-methods %d rows, %d samples; %.1f s"
          % (pauses(gc), len(rows), samples(rows), took))
    if pauses(gc) < 1 or b"No events found" in gc:
        fails.append("listen: gc-pauses has no pause: %r" % gc[:300])
    if not rows or b"No events found" in hot:
        fails.append("listen: hot-methods has no row: %r" % hot[:300])
    return copy, pid


# ------------------------------------------------------------------ 2. tail

class ChunkFiles:
    """Open each chunk file of a repository as soon as it appears (every 20 ms),
    so that its bytes outlive the JVM's deletion of the repository at exit."""

    def __init__(self, repo):
        self.repo = repo
        self.files = {}  # (dev, inode) -> open file
        self.done = False
        self.t = threading.Thread(target=self._run, daemon=True)
        self.t.start()

    def _scan(self):
        for d, _, names in os.walk(self.repo):
            for n in names:
                if not (n.endswith(".jfr") or n.endswith(".part")):
                    continue
                try:
                    f = open(os.path.join(d, n), "rb")
                except OSError:
                    continue  # gone already
                st = os.fstat(f.fileno())
                key = (st.st_dev, st.st_ino)
                if key in self.files:
                    f.close()
                else:
                    self.files[key] = f

    def _run(self):
        while not self.done:
            self._scan()
            time.sleep(0.02)

    def stop(self):
        self.done = True
        self.t.join(10)
        self._scan()

    def chunks(self):
        """[(start ns, bytes)] of the files, each read whole, in chunk start order."""
        out = []
        for f in self.files.values():
            f.seek(0)
            data = f.read()
            f.close()
            out.append((struct.unpack(">q", data[32:40])[0] if len(data) >= 40 else 0, data))
        return sorted(out, key=lambda c: c[0])


def run_tail(a, java, work, fails):
    """Returns (the chunks concatenated, workload pid) or (None, None)."""
    repo = os.path.join(work, "repo")
    os.makedirs(repo)
    cat = os.path.join(work, "repo-chunks.jfr")
    t0 = time.monotonic()
    tp = L.start([a.jfrstream, "tail", repo, "--view", "gc-pauses", "--view-window", "3600",
                  "--view-every", "1", "--exit-when-done"])
    tout = RawLines(tp.stdout)
    terr = L.Lines(tp.stderr)
    files = ChunkFiles(repo)
    w, wout, werr = L.seq_workload(
        java, ["--rate", "1000", "--duration", str(max(1, a.seconds - 2)), "--threads", "4",
               "--rotate", "1.3", "--linger", "0.5"],
        jvm_opts=GC_OPTS + ["-XX:StartFlightRecording:settings=profile",
                            "-XX:FlightRecorderOptions:repository=%s,maxchunksize=1M" % repo])
    wrc = L.wait(w, 90, "SeqWorkload")
    werr.join()
    if wrc != 0:
        fails.append("tail's SeqWorkload exit %s: %s" % (wrc, werr.text()[-500:]))
    trc = L.wait(tp, 30, "jfrstream tail")
    files.stop()
    tout.join()
    terr.join()
    took = time.monotonic() - t0
    if trc != 0:
        fails.append("tail exit %s: %s" % (trc, terr.text()[-500:]))
    if not [l for _, l in terr.lines if "final chunk" in l]:
        fails.append("the tail did not end with the final chunk: " + terr.text()[-300:])
    chunks = files.chunks()
    with open(cat, "wb") as f:
        for _, c in chunks:
            f.write(c)
    fr, stray = frames(tout.lines, b"jfrstream tail ")
    last = check_frames(fr, stray, "tail", fails)
    if last is None:
        return None, None
    gc, err = view(a.jfrstream, "gc-pauses", cat)
    if err:
        fails.append(err)
        return cat, w.pid
    live = [f for f in fr[:-1] if int(f[2].group(6)) > 68]
    L.log("  tail: %d frames (%d with data), last: %s" % (len(fr), len(live), last[1]))
    if last[3] != gc:
        fails.append("tail: the last frame differs from view gc-pauses of the %d chunk files "
                     "(%d bytes): %s" % (len(chunks), os.path.getsize(cat),
                                         first_diff(last[3], gc)))
    else:
        L.log("  tail: last frame = view gc-pauses of the repository's %d chunk files "
              "concatenated (%d bytes); %d pauses; %.1f s"
              % (len(chunks), os.path.getsize(cat), pauses(gc), took))
    if pauses(gc) < 1:
        fails.append("tail: gc-pauses has no pause: %r" % gc[:300])
    return cat, w.pid


# ------------------------------------------------------------------ 3. by source

WINDOW3 = 86400


def sections(body):
    """A by-source frame's body -> (text before the first section, [(id, text)])."""
    secs = re.split(rb"^Source: (.*)\n", body, flags=re.M)
    return secs[0], [(i.decode("utf-8", "replace"), t) for i, t in zip(secs[1::2], secs[2::2])]


def segment_ends(data):
    """The ends of the flush segments of a live stream's first chunk (at byte 0):
    each segment ends with a chunk-header checkpoint whose embedded header (its
    last 68 bytes) holds the chunk's size so far."""
    heads = L.live_header_offsets(data)
    if heads[:1] != [0]:
        return []
    stop = heads[1] if len(heads) > 1 else len(data)
    out = []
    i = data.find(b"FLR\0\x00\x02", 1)
    while 0 < i < stop:
        if struct.unpack(">q", data[i + 8:i + 16])[0] == i + 68:
            out.append(i + 68)
        i = data.find(b"FLR\0\x00\x02", i + 1)
    return out


def file_end_ns(path):
    return max(st + struct.unpack(">q", c[40:48])[0] for st, c in L.chunks_of(path))


def run_by_source(a, inputs, fails):
    """inputs: [(path, pid)], sent one after the other (the first in two parts, a
    frame between them), then test/data/workload.jfr (older than the window, on
    a clock past 2026-11-22: not shown, and not counted in the header)."""
    old = os.path.join(L.ROOT, "test", "data", "workload.jfr")
    t0 = time.monotonic()
    lp = L.start([a.jfrstream, "listen", "127.0.0.1:0", "--view", "gc-pauses",
                  "--view-by", "source", "--view-window", str(WINDOW3), "--view-every", "1"])
    lout = RawLines(lp.stdout)
    lerr = L.Lines(lp.stderr)
    m = lerr.wait_for(r"listening on 127\.0\.0\.1:(\d+)", 10)
    if not m:
        fails.append("by source: listen did not start: " + lerr.text()[-500:])
        return
    port = int(m.group(1))
    # the first input cut inside its first chunk, after its first flush segment
    # (which holds jdk.JVMInformation; the listener reads whole segments): a
    # frame while that chunk is still being written
    data = open(inputs[0][0], "rb").read()
    ends = segment_ends(data)
    cut = (ends[0] + ends[1]) // 2 if len(ends) > 1 else ends[0] if ends else len(data) // 2
    sock = L.send(port, data[:cut], close=False)
    sent = time.time_ns()
    mid = None
    end = time.monotonic() + 10
    while mid is None and time.monotonic() < end:
        time.sleep(0.05)
        for t, raw in list(lout.lines):
            mh = HEAD.match(raw.decode("utf-8", "replace").rstrip("\n"))
            if t > sent and mh and int(mh.group(6)) > 68:
                mid = t
                break
    sock.sendall(data[cut:])
    sock.shutdown(socket.SHUT_WR)
    try:
        sock.recv(1)
    except OSError:
        pass
    sock.close()
    for path, _ in inputs[1:] + [(old, None)]:
        L.send(port, open(path, "rb").read())  # returns once the listener closed it
    end = time.monotonic() + 20
    while time.monotonic() < end and len([l for _, l in lerr.lines
                                          if "stream ended" in l]) < len(inputs) + 1:
        time.sleep(0.05)
    lp.send_signal(signal.SIGINT)
    lrc = L.wait(lp, 30, "jfrstream listen")
    lout.join()
    lerr.join()
    if lrc != 0:
        fails.append("by source: listen exit %s: %s" % (lrc, lerr.text()[-500:]))
    fr, stray = frames(lout.lines, b"jfrstream listen ")
    last = check_frames(fr, stray, "by source", fails)
    if last is None:
        return
    # every frame: as many sections as its header counts sources
    for t, head, mh, body in fr:
        pre, got = sections(body)
        if pre or len(got) != int(mh.group(5)):
            fails.append("by source: a frame of %d Source sections (and %d bytes before "
                         "them) under %r" % (len(got), len(pre), head))
            break
    # the mid-chunk frame names the JVM, not the peer
    midf = [f for f in fr if f[0] == mid]
    if not midf:
        fails.append("by source: no frame with data while the first input was cut")
    else:
        _, got = sections(midf[0][3])
        ids = [i for i, _ in got]
        if len(ids) != 1 or ":%d:" % inputs[0][1] not in ids[0]:
            fails.append("by source: mid-chunk frame's sources %s, want the id of pid %d"
                         % (ids, inputs[0][1]))
        else:
            L.log("  by source: mid-chunk frame (%d of %d bytes sent): Source: %s"
                  % (cut, len(data), ids[0]))
    # the fixture is in the last frame only if it ended inside the window
    t_end = last[0]
    expect = list(inputs)
    shown = file_end_ns(old) >= t_end - WINDOW3 * 10**9
    if shown:
        expect.append((old, None))
    L.log("  by source: %d frames, last: %s; %s %s" % (
        len(fr), last[1], os.path.basename(old),
        "in the window" if shown else "older than the window (left out)"))
    if last[2].group(5) != str(len(expect)):
        fails.append("by source: last frame: %s sources, want %d" % (last[2].group(5),
                                                                     len(expect)))
    pre, got = sections(last[3])
    if pre:
        fails.append("by source: text before the first Source line: %r" % pre[:200])
    if len(got) != len(expect):
        fails.append("by source: %d Source sections, want %d: %r"
                     % (len(got), len(expect), [i for i, _ in got]))
        return
    for (path, pid), (sid, text) in zip(expect, got):
        want, err = view(a.jfrstream, "gc-pauses", path)
        if err:
            fails.append(err)
            continue
        if pid is not None and ":%d:" % pid not in sid:
            fails.append("by source: section %r for %s (pid %d)" % (sid, path, pid))
        if text != want:
            fails.append("by source: section %s differs from view gc-pauses %s: %s"
                         % (sid, os.path.basename(path), first_diff(text, want)))
        else:
            L.log("  by source: Source: %s = view gc-pauses %s (%d pauses)"
                  % (sid, os.path.basename(path), pauses(want)))
    L.log("  by source: %.1f s" % (time.monotonic() - t0))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("jfrstream")
    L.add_jdk_options(ap)
    ap.add_argument("--work")
    ap.add_argument("--seconds", type=int, default=6,
                    help="pump --duration; the JVMs emit for 2 s less")
    a = ap.parse_args()
    a.jfrstream = L.cli(a.jfrstream)
    java, name, why = L.pick_java(a, NAME)
    if not java:
        return L.skip(name, why)
    if a.work:
        os.makedirs(a.work, exist_ok=True)
    work = tempfile.mkdtemp(prefix=name + "-", dir=a.work)
    fails = []
    t0 = time.monotonic()
    try:
        copy, pid1 = run_listen(a, java, work, fails)
        L.cleanup()
        cat, pid2 = run_tail(a, java, work, fails)
        L.cleanup()
        inputs = [(p, pid) for p, pid in ((copy, pid1), (cat, pid2)) if p]
        if len(inputs) == 2:
            run_by_source(a, inputs, fails)
        else:
            fails.append("by source: not run (no bytes of run 1 or 2)")
        detail = "; ".join(fails) if fails else (
            "listen and tail last frames = view of the same bytes; 2 sources by source; "
            "%.0f s" % (time.monotonic() - t0))
        if fails:
            L.log("  kept " + work)
        else:
            shutil.rmtree(work, ignore_errors=True)
        return L.result(name, not fails, detail)
    finally:
        L.cleanup()


if __name__ == "__main__":
    sys.exit(main())
