#!/usr/bin/env python3
"""live_tail.py — `jfrstream tail` of a real JVM's disk repository.

    test/live/live_tail.py JFRSTREAM [--java-home DIR | --jdk MAJOR] [--work DIR]
                           [--rate N] [--seconds S] [--no-preserve]

`jfrstream tail REPO --json --events jfrstream.Seq --exit-when-done --summary`
is started on an empty folder REPO; then SeqWorkload runs with
-XX:StartFlightRecording:settings=profile,filename=dump.jfr and
-XX:FlightRecorderOptions:repository=REPO,maxchunksize=1M (the JVM makes
REPO/<time>_<pid>/ and writes its chunk files there; extra recordings make
more chunks) and exits. The JVM's final chunk carries the final flag, so the
tail ends by itself. On JDK 21+ preserve-repository=true keeps the files
after exit (unless --no-preserve); on JDK 17 the JVM deletes them at exit.
Checks:
  * every seq 0..last arrives exactly once (0 lost, 0 duplicated);
  * latency commit -> JSON line on stdout: median, p99 (goal <= 1100 ms;
    reported, enforced only with --strict-latency);
  * tail --summary equals `jfr summary` of the JVM's dump at exit (the same
    chunks: the tail started before the JVM);
  * tail exit status 0, ended by the final chunk.
Exit 0 pass, 1 fail, 77 skip (no java).
"""
import argparse
import os
import shutil
import sys
import tempfile

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import livelib as L  # noqa: E402

NAME = "tail"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("jfrstream")
    L.add_jdk_options(ap)
    ap.add_argument("--work")
    ap.add_argument("--rate", type=int, default=2000)
    ap.add_argument("--seconds", type=float, default=4)
    ap.add_argument("--no-preserve", action="store_true")
    ap.add_argument("--strict-latency", action="store_true")
    a = ap.parse_args()
    a.jfrstream = L.cli(a.jfrstream)
    java, name, why = L.pick_java(a, NAME)
    if not java:
        return L.skip(name, why)
    jfr = L.jfr_bin(java)
    major = L.java_major(java)
    if a.work:
        os.makedirs(a.work, exist_ok=True)
    work = tempfile.mkdtemp(prefix=name + "-", dir=a.work)
    repo = os.path.join(work, "repo")
    os.makedirs(repo)
    dump = os.path.join(work, "dump.jfr")
    fails = []
    try:
        tp = L.start([a.jfrstream, "tail", repo, "--json", "--events", "jfrstream.Seq",
                      "--exit-when-done", "--summary"])
        tout = L.Lines(tp.stdout)
        terr = L.Lines(tp.stderr)
        opts = "repository=%s,maxchunksize=1M" % repo
        preserve = major >= 21 and not a.no_preserve
        if preserve:
            opts += ",preserve-repository=true"
        w, wout, werr = L.seq_workload(
            java, ["--rate", str(a.rate), "--duration", str(a.seconds), "--rotate", "1.3",
                   # the final chunk lives >= 0.5 s: the tail (50 ms polls) opens its
                   # file before the JVM deletes it at exit (see live_cli.py for
                   # what happens when it does not)
                   "--linger", "0.5"],
            jvm_opts=["-XX:StartFlightRecording:settings=profile,filename=%s" % dump,
                      "-XX:FlightRecorderOptions:" + opts])
        wrc = L.wait(w, 90, "SeqWorkload")
        werr.join()
        wout.join()
        m = wout.wait_for(r"^last=(-?\d+)", 1)
        last = int(m.group(1)) if m else None
        if wrc != 0 or last is None:
            fails.append("SeqWorkload exit %s: %s" % (wrc, werr.text()[-500:]))
        trc = L.wait(tp, 30, "jfrstream tail")
        tout.join()
        terr.join()
        if trc != 0:
            fails.append("tail exit %s" % trc)
        ended = [l for _, l in terr.lines if "final chunk" in l]
        if not ended:
            fails.append("the tail did not end with the final chunk")

        removed = [l for _, l in terr.lines if "removed (JVM exit)" in l]
        if removed:
            fails.append("the JVM removed chunk files before the tail read them: " + removed[0])
        ok, text, st = L.seq_report(tout.lines, last)
        L.log("  JDK %d, preserve-repository %s: %s" % (major, "true" if preserve else "false (JDK default)", text))
        if not ok:
            fails.append(text)
        if st.get("lat_p99_ms") is not None and st["lat_p99_ms"] > 1100:
            msg = "latency p99 %.0f ms > 1100 ms" % st["lat_p99_ms"]
            L.log("  note: " + msg)
            if a.strict_latency:
                fails.append(msg)
        left = []
        for d, _, files in os.walk(repo):
            left += [os.path.join(os.path.relpath(d, repo), f) for f in files]
        L.log("  repository after exit: %d files" % len(left))

        ours_chunks, ours = L.parse_summary(terr.text())
        if not os.path.exists(dump):
            fails.append("no dump %s" % dump)
        elif jfr:
            r = L.run([jfr, "summary", dump], 120)
            ref_chunks, ref = L.parse_summary(r.stdout.decode())
            diffs = L.compare_tables(ours, ref)
            if ref_chunks != ours_chunks:
                diffs.insert(0, "chunks: ours %s, jfr %s" % (ours_chunks, ref_chunks))
            if diffs:
                fails.append("tail --summary differs from jfr summary of the dump: "
                             + "; ".join(diffs[:8]))
            else:
                L.log("  summary: %d chunks, %d types, %d records equal to jfr summary of the dump"
                      % (ref_chunks, len(ref), sum(c for c, _ in ref.values())))
        L.log("  tail: " + (ended[-1] if ended else terr.text()[-300:]))
        if fails:
            L.log("  tail stderr (head):\n    " + "\n    ".join(terr.text().splitlines()[:12]))
            L.log("  kept " + work)
        else:
            shutil.rmtree(work, ignore_errors=True)
        return L.result(name, not fails, "; ".join(fails) if fails else text)
    finally:
        L.cleanup()


if __name__ == "__main__":
    sys.exit(main())
