#!/usr/bin/env python3
"""live_agent.py — tools/jfrstream-agent (jfrstream-agent.jar) in a real JVM, streaming
its own recording into `jfrstream listen --json --once --summary`.

    test/live/live_agent.py JFRSTREAM AGENT_JAR [--mode javaagent|env|down|attach]
                            [--java-home DIR | --jdk MAJOR] [--work DIR]

AGENT_JAR is the build's jar, or '' for a build without it (SKIP). SeqWorkload
(test/live/SeqWorkload.java) waits for a running recording (the agent's), emits
jfrstream.Seq at --rate for --seconds, then exits by itself.

  javaagent  -javaagent:JAR=connect=...: every seq exactly once, jdk.* events in
             the summary (jdk.JVMInformation, jdk.CPULoad...), the stream ended by
             the recording's final chunk (`listen --once` exit 0, `stream ended`),
             the agent's recording stopped and closed at exit; the JVM's exit status,
             stdout (its lines and counts) and stderr (nothing but `jfrstream-agent:`
             lines) as in a run with -XX:StartFlightRecording alone; exit delay
             (last event -> process end) against that run's
  env        the same through JAVA_TOOL_OPTIONS
  down       no listener: exit status and stdout unchanged, delay bounded, the
             failure logged once; then a listener that comes up 2 s late gets every
             seq (nothing was read meanwhile), one killed mid-run leaves the
             application's result and exit delay unchanged, and one that never reads
             delays the exit by drain= + 1 s at most
  attach     `java -jar JAR PID connect=...` into a running JVM: every seq once, clean end
Exit 0 pass, 1 fail, 77 skip.
"""
import argparse
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import livelib as L  # noqa: E402

NAME = "agent"
JFR_LOG = re.compile(r"^\[[\d.]+s\]\[info\]\[jfr")
DELAY_BOUND_S = 8.0      # drain (5 s) + margin: the longest exit delay the agent may add


def run_app(java, jvm_opts, args, env=None, timeout=120):
    """Run SeqWorkload to its end; returns (rc, stdout lines, stderr lines, exit delay s)."""
    p = L.start([java] + list(jvm_opts) + [L.SEQ_JAVA] + list(args), env=env)
    out, err = L.Lines(p.stdout), L.Lines(p.stderr)
    m = out.wait_for(r"^last=", timeout)
    t_last = time.monotonic() if m else None
    rc = L.wait(p, timeout, "SeqWorkload")
    t_end = time.monotonic()
    out.join()
    err.join()
    delay = (t_end - t_last) if t_last else None
    return rc, [l for _, l in out.lines], [l for _, l in err.lines], delay


def out_shape(lines):
    """SeqWorkload's stdout without its run-specific values: keys, last and count
    (-XX:StartFlightRecording's own startup lines left out)."""
    lines = [l for l in lines if not JFR_LOG.match(l)]
    keys = [l.split("=", 1)[0] for l in lines]
    vals = dict(l.split("=", 1) for l in lines if "=" in l)
    return keys, vals.get("last"), vals.get("count")


def check_app(fails, what, rc, out, err, ref=None):
    if rc != 0:
        fails.append("%s: exit status %s" % (what, rc))
    keys, last, count = out_shape(out)
    if keys != ["pid", "start", "last", "count"]:
        fails.append("%s: stdout %r" % (what, out[:6]))
    if ref is not None and (keys, last, count) != out_shape(ref):
        fails.append("%s: stdout %s differs from the run without agent %s"
                     % (what, out_shape(out), out_shape(ref)))
    other = [l for l in err if not l.startswith("jfrstream-agent: ")
             and not l.startswith("Picked up JAVA_TOOL_OPTIONS")]
    if other:
        fails.append("%s: stderr lines not from the agent: %r" % (what, other[:3]))
    return int(last) if last is not None else None


def check_stream(fails, lout, lerr, lrc, last, agent_err):
    ok, text, st = L.seq_report(lout.lines, last)
    L.log("  " + text)
    if not ok:
        fails.append(text)
    if lrc != 0:
        fails.append("listen exit %s" % lrc)
    _, table = L.parse_summary(lerr.text())
    jdk = {k: v for k, v in table.items() if k.startswith("jdk.") and v[0] > 0}
    for need in ("jdk.JVMInformation", "jdk.CPULoad", "jdk.ActiveRecording"):
        if need not in jdk:
            fails.append("no %s in listen's summary" % need)
    L.log("  summary: %d jdk.* types with events, %d events" % (len(jdk), sum(c for c, _ in jdk.values())))
    ended = [l for _, l in lerr.lines if "stream ended" in l]
    L.log("  listen: " + (ended[-1] if ended else "(no end line)"))
    if not ended:
        fails.append("listen did not report the stream ended")
    a = "\n".join(agent_err)
    if "closed recording" not in a:
        fails.append("the agent did not close its recording: " + a[-400:])
    if "final chunk complete" not in a and "stream ended" not in a:
        fails.append("the agent's stream did not end with the final chunk: " + a[-1500:])
    live = [l for l in agent_err if " bytes, " in l]
    if live:
        L.log("  agent: " + live[-1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("jfrstream")
    ap.add_argument("agent")
    ap.add_argument("--mode", default="javaagent", choices=["javaagent", "env", "down", "attach"])
    ap.add_argument("--java-home")
    ap.add_argument("--jdk", type=int, metavar="MAJOR")
    ap.add_argument("--work")
    ap.add_argument("--rate", type=int, default=2000)
    ap.add_argument("--seconds", type=int, default=3)
    a = ap.parse_args()
    name = NAME + ("-" + a.mode if a.mode != "javaagent" else "")
    if a.jdk:
        name += "-jdk%d" % a.jdk
    if not a.agent:
        return L.skip(name, "a build without the agent (no javac or jar found, or -Dagent=disabled)")
    if not os.path.exists(a.agent):
        return L.skip(name, "no %s (ninja -C BUILD builds it)" % a.agent)
    a.jfrstream = L.cli(a.jfrstream)
    if a.jdk:
        a.java_home, why = L.find_jdk(a.jdk)
        if not a.java_home:
            return L.skip(name, why)
        L.log("%s: %s" % (name, why))
    java = L.java_bin(a.java_home)
    if not java:
        return L.skip(name, "no java (%s)" % (a.java_home or "PATH"))
    if a.work:
        os.makedirs(a.work, exist_ok=True)
    work = tempfile.mkdtemp(prefix=name + "-", dir=a.work)
    seq_args = ["--rate", str(a.rate), "--duration", str(a.seconds), "--wait-recordings", "1"]
    # the agent's acks need the listener's side of the protocol (livelib.listener_acks)
    ack = "" if L.listener_acks(a.jfrstream) else ",ack=off"
    L.log("%s: %s" % (name, "acks on" if not ack else "ack=off: this listener does not take the hello line"))
    fails = []
    try:
        if a.mode in ("javaagent", "env"):
            rc0, out0, err0, d0 = run_app(java, ["-XX:StartFlightRecording"], seq_args)
            check_app(fails, "without agent", rc0, out0, err0)
            lp, lout, lerr, port = L.start_listener(
                a.jfrstream, ["--json", "--events", "jfrstream.Seq", "--once", "--summary"])
            if not port:
                return L.result(name, False, "listen did not start: " + lerr.text())
            opt = "-javaagent:%s=connect=127.0.0.1:%d%s" % (a.agent, port, ack)
            if a.mode == "env":
                env = dict(os.environ, JAVA_TOOL_OPTIONS=opt)
                rc, out, err, d = run_app(java, [], seq_args, env=env)
                if not any(l.startswith("Picked up JAVA_TOOL_OPTIONS") for l in err):
                    fails.append("the JVM did not pick up JAVA_TOOL_OPTIONS")
            else:
                rc, out, err, d = run_app(java, [opt], seq_args)
            last = check_app(fails, "with agent", rc, out, err, ref=out0)
            lrc = L.wait(lp, 30, "jfrstream listen")
            lout.join()
            lerr.join()
            check_stream(fails, lout, lerr, lrc, last, err)
            L.log("  exit delay (last event -> exit): %.2f s with the agent, %.2f s with "
                  "-XX:StartFlightRecording alone" % (d or -1, d0 or -1))
            if d is None or d > DELAY_BOUND_S:
                fails.append("exit delay %s s > %.0f s" % (d, DELAY_BOUND_S))
            detail = "exit delay %.2f s (%.2f s without agent)" % (d or -1, d0 or -1)
        elif a.mode == "down":
            # 1: nobody listens, ever
            port = L.free_port()
            opt = "-javaagent:%s=connect=127.0.0.1:%d%s" % (a.agent, port, ack)
            rc0, out0, err0, d0 = run_app(java, ["-XX:StartFlightRecording"], seq_args)
            check_app(fails, "without agent", rc0, out0, err0)
            rc, out, err, d = run_app(java, [opt], seq_args)
            check_app(fails, "listener down", rc, out, err, ref=out0)
            nr = [l for l in err if "not reachable" in l]
            L.log("  listener down: exit %s, delay %.2f s (%.2f s without agent); %s"
                  % (rc, d or -1, d0 or -1, nr[0] if nr else "(no log line)"))
            if len(nr) != 1:
                fails.append("expected one 'not reachable' line, got %d" % len(nr))
            if d is None or d > DELAY_BOUND_S:
                fails.append("exit delay with the listener down %s s" % d)
            # 2: the listener comes up 2 s after the JVM (the agent retries after 0.5,
            # 1, 2, 4 s... and once more at exit)
            port = L.free_port()
            opt = "-javaagent:%s=connect=127.0.0.1:%d%s" % (a.agent, port, ack)
            p = L.start([java, opt] + [L.SEQ_JAVA] + seq_args[:2] + ["--duration", "5"]
                        + seq_args[4:])
            out, err = L.Lines(p.stdout), L.Lines(p.stderr)
            out.wait_for(r"^pid=", 60)
            time.sleep(2)
            lp = L.start([a.jfrstream, "listen", "127.0.0.1:%d" % port, "--json", "--events",
                          "jfrstream.Seq", "--once", "--summary"])
            lout, lerr = L.Lines(lp.stdout), L.Lines(lp.stderr)
            rc = L.wait(p, 120, "SeqWorkload")
            out.join()
            err.join()
            last = check_app(fails, "late listener", rc, [l for _, l in out.lines],
                             [l for _, l in err.lines])
            lrc = L.wait(lp, 30, "jfrstream listen")
            lout.join()
            lerr.join()
            check_stream(fails, lout, lerr, lrc, last, [l for _, l in err.lines])
            rec = [l for _, l in err.lines if "connected to" in l]
            L.log("  late listener: " + (rec[0] if rec else "(never connected)"))
            # 3: the listener is killed in the middle of the run
            lp, lout, lerr, port = L.start_listener(a.jfrstream, ["--json", "--events", "jfrstream.Seq"])
            opt = "-javaagent:%s=connect=127.0.0.1:%d%s" % (a.agent, port, ack)
            p = L.start([java, opt] + [L.SEQ_JAVA] + seq_args)
            out, err = L.Lines(p.stdout), L.Lines(p.stderr)
            out.wait_for(r"^start=", 60)
            lout.wait_for(r"jfrstream\.Seq", 10)
            lp.kill()
            lp.wait(10)
            m = out.wait_for(r"^last=", 60)
            t_last = time.monotonic()
            rc = L.wait(p, 60, "SeqWorkload")
            d = time.monotonic() - t_last if m else None
            out.join()
            err.join()
            check_app(fails, "listener killed", rc, [l for _, l in out.lines],
                      [l for _, l in err.lines], ref=out0)
            lost = [l for _, l in err.lines if "lost" in l]
            L.log("  listener killed: exit %s, delay %.2f s; %s"
                  % (rc, d or -1, lost[0] if lost else "(no loss seen: the kill came between writes)"))
            if d is None or d > DELAY_BOUND_S:
                fails.append("exit delay with the listener killed %s s" % d)
            # 4: a listener that accepts and never reads (a small receive buffer): the
            # drain cannot end, the exit hook gives up after drain= + 1 s
            srv = socket.socket()
            srv.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            srv.bind(("127.0.0.1", 0))
            srv.listen(1)
            opt = "-javaagent:%s=connect=127.0.0.1:%d,drain=2s" % (a.agent, srv.getsockname()[1])
            rc, out, err, d = run_app(java, [opt], ["--rate", "50000", "--duration", "3",
                                                   "--wait-recordings", "1"])
            srv.close()
            gave_up = [l for l in err if "drain did not end" in l]
            L.log("  listener not reading: exit %s, delay %.2f s (drain=2s); %s"
                  % (rc, d or -1, gave_up[0] if gave_up else "(the drain ended)"))
            if rc != 0:
                fails.append("listener not reading: exit status %s" % rc)
            if d is None or d > 2 + 1 + 2:
                fails.append("exit delay with a listener not reading %s s > drain + 1 s + 2 s" % d)
            detail = "listener down, late, killed and not reading: exit 0, output unchanged"
        else:  # attach
            lp, lout, lerr, port = L.start_listener(
                a.jfrstream, ["--json", "--events", "jfrstream.Seq", "--once", "--summary"])
            if not port:
                return L.result(name, False, "listen did not start: " + lerr.text())
            p = L.start([java, L.SEQ_JAVA] + seq_args)
            out, err = L.Lines(p.stdout), L.Lines(p.stderr)
            pid = L.workload_pid(out)
            if not pid:
                return L.result(name, False, "SeqWorkload did not start: " + err.text()[-500:])
            r = L.run([java, "-jar", a.agent, str(pid), "connect=127.0.0.1:%d%s" % (port, ack)], 60)
            L.log("  java -jar agent.jar %d: exit %d: %s" % (pid, r.returncode, r.stderr.decode().strip()))
            if r.returncode != 0:
                fails.append("java -jar agent.jar PID: exit %d" % r.returncode)
            rc = L.wait(p, 120, "SeqWorkload")
            out.join()
            err.join()
            last = check_app(fails, "attached", rc, [l for _, l in out.lines], [l for _, l in err.lines])
            lrc = L.wait(lp, 30, "jfrstream listen")
            lout.join()
            lerr.join()
            check_stream(fails, lout, lerr, lrc, last, [l for _, l in err.lines])
            bad = L.run([java, "-jar", a.agent, str(pid), "bogus=1"], 60)
            if bad.returncode != 2:
                fails.append("a bad option: exit %d, not 2" % bad.returncode)
            detail = "loaded into pid %d" % pid
        if fails:
            L.log("  kept " + work)
            return L.result(name, False, "; ".join(fails))
        shutil.rmtree(work, ignore_errors=True)
        return L.result(name, True, detail)
    finally:
        L.cleanup()


if __name__ == "__main__":
    sys.exit(main())
