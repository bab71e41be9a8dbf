#!/usr/bin/env python3
"""live_pump_listen.py — a real JVM's live JFR stream, through tools/jfr-pump and
TCP, into `jfrstream listen --json --once --summary`.

    test/live/live_pump_listen.py JFRSTREAM [--java-home DIR | --jdk MAJOR] [--work DIR]
                             [--rate N] [--seconds S]

SeqWorkload runs with its own recording (-XX:StartFlightRecording, dumped at
exit) and starts emitting jfrstream.Seq only once the pump's recording runs
too (--wait-recordings 2), for a shorter time than the pump records, with
chunk rotations (--rotate: a short extra recording every 1.3 s). The
pump connects to a small tee proxy (livelib.Tee) that forwards the bytes to
jfrstream and keeps a copy (and the listener's acknowledgements back: --ack when the
listener speaks the protocol, livelib.listener_acks). Checks:
  * every seq 0..last arrives exactly once (0 lost, 0 duplicated);
  * latency from commit (the event's commitNanos) to the arrival of its JSON
    line on jfrstream's stdout: median and p99 (goal p99 <= 1100 ms, one
    flush interval + 100 ms; reported, enforced only with --strict-latency);
  * listen --summary equals `jfr summary` of the chunks of the JVM's own dump
    that the stream carried (matched by chunk start time);
  * exit statuses: pump 0, listen 0.
Exit 0 pass, 1 fail, 77 skip (no java).
"""
import argparse
import os
import shutil
import signal
import sys
import tempfile

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import livelib as L  # noqa: E402

NAME = "pump-listen"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("jfrstream")
    L.add_jdk_options(ap)
    ap.add_argument("--work")
    ap.add_argument("--rate", type=int, default=2000)
    ap.add_argument("--seconds", type=int, default=6, help="pump --duration")
    ap.add_argument("--maxchunksize", default="1M",
                    help="of the JVM's repository: small, so that chunks rotate")
    ap.add_argument("--strict-latency", action="store_true")
    a = ap.parse_args()
    a.jfrstream = L.cli(a.jfrstream)
    java, name, why = L.pick_java(a, NAME)
    if not java:
        return L.skip(name, why)
    jfr = L.jfr_bin(java)
    if a.work:
        os.makedirs(a.work, exist_ok=True)
    work = tempfile.mkdtemp(prefix=name + "-", dir=a.work)
    dump = os.path.join(work, "dump.jfr")
    capture = os.path.join(work, "stream.bin")
    fails = []
    try:
        lp, lout, lerr, port = L.start_listener(
            a.jfrstream, ["--json", "--events", "jfrstream.Seq", "--once", "--summary"])
        if not port:
            return L.result(name, False, "listen did not start: " + lerr.text())
        tee = L.Tee(port, capture)
        emit = max(1, a.seconds - 3)
        w, wout, werr = L.seq_workload(
            java, ["--rate", str(a.rate), "--duration", str(emit), "--wait-recordings", "2",
                   "--rotate", "1.3", "--linger", "120"],
            jvm_opts=["-XX:StartFlightRecording:filename=%s,settings=profile" % dump,
                      "-XX:FlightRecorderOptions:maxchunksize=%s" % a.maxchunksize])
        pid = L.workload_pid(wout)
        if not pid:
            return L.result(name, False, "SeqWorkload did not start: " + werr.text()[-800:])
        pp, pout, perr = L.pump(java, ["--pid", str(pid), "--duration", "%ds" % a.seconds,
                                       "--connect", "127.0.0.1:%d" % tee.port,
                                       "--settings", "profile"]
                                + (["--ack"] if L.listener_acks(a.jfrstream) else []))
        prc = L.wait(pp, 120, "jfr-pump")
        perr.join()
        if prc != 0:
            fails.append("jfr-pump exit %s" % prc)
        tee.t.join(30)
        lrc = L.wait(lp, 30, "jfrstream listen")
        lout.join()
        lerr.join()
        m = wout.wait_for(r"^last=(-?\d+)", 30)
        last = int(m.group(1)) if m else None
        # end the workload: its recording is dumped at exit
        if w.poll() is None:
            w.send_signal(signal.SIGTERM)
        L.wait(w, 60, "SeqWorkload")
        werr.join()
        if last is None:
            fails.append("SeqWorkload printed no last seq")
        if lrc != 0:
            fails.append("listen exit %s" % lrc)
        if tee.error:
            fails.append("tee: " + tee.error)

        ok, text, st = L.seq_report(lout.lines, last)
        L.log("  %s" % text)
        if not ok:
            fails.append(text)
        if st.get("lat_p99_ms") is not None and st["lat_p99_ms"] > 1100:
            msg = "latency p99 %.0f ms > 1100 ms" % st["lat_p99_ms"]
            L.log("  note: " + msg)
            if a.strict_latency:
                fails.append(msg)
        pump_last = [l for _, l in perr.lines if "bytes" in l]
        if pump_last:
            L.log("  pump: " + pump_last[-1])

        # the summary against `jfr summary` of the same chunks of the dump
        ours_chunks, ours = L.parse_summary(lerr.text())
        starts = set(L.live_chunk_starts(capture))
        if not os.path.exists(dump):
            fails.append("no dump %s" % dump)
        else:
            sel = [c for s, c in L.chunks_of(dump) if s in starts]
            sub = os.path.join(work, "same-chunks.jfr")
            with open(sub, "wb") as f:
                for c in sel:
                    f.write(c)
            L.log("  stream: %d bytes, %d chunk headers; dump chunks matched: %d; listen summary chunks: %s"
                  % (tee.bytes, len(starts), len(sel), ours_chunks))
            if not sel:
                fails.append("no chunk of the dump matches the stream's chunk start times")
            elif jfr:
                r = L.run([jfr, "summary", sub], 120)
                ref_chunks, ref = L.parse_summary(r.stdout.decode())
                diffs = L.compare_tables(ours, ref)
                if ref_chunks != ours_chunks:
                    diffs.insert(0, "chunks: ours %s, jfr %s" % (ours_chunks, ref_chunks))
                if diffs:
                    fails.append("summary differs from jfr summary of the same chunks: "
                                 + "; ".join(diffs[:8]))
                else:
                    L.log("  summary: %d types, %d records equal to jfr summary of the same %d chunks"
                          % (len(ref), sum(c for c, _ in ref.values()), len(sel)))
        conn = [l for _, l in lerr.lines if "stream ended" in l or "closed" in l]
        L.log("  listen: " + (conn[-1] if conn else "(no connection line)"))
        if fails:
            L.log("  listen stderr (head):\n    " + "\n    ".join(lerr.text().splitlines()[:12]))
        detail = text
        if fails:
            detail = "; ".join(fails)
        if not fails:
            shutil.rmtree(work, ignore_errors=True)
        else:
            L.log("  kept " + work)
        return L.result(name, not fails, detail)
    finally:
        L.cleanup()


if __name__ == "__main__":
    sys.exit(main())
