#!/usr/bin/env python3
"""agent_cost.py — what tools/jfrstream-agent costs a busy JVM, beside the same JFR
recording started by -XX:StartFlightRecording alone (bench/README.md, "The agent's cost").

    bench/agent_cost.py BUILD [--runs 3] [--iterations 6000000] [--threads 2]
                        [--settings profile] [--heap 256m] [--java java]
                        [--agent-options ack=off,...]

BUILD is a meson build folder with jfrstream and jfrstream-agent.jar. The workload
(bench/AgentWorkload.java, compiled once into a temporary folder) does a fixed amount of
work, so the JVM's CPU time (user + system, from wait4) compares the runs:

  nojfr   java AgentWorkload                           (no JFR at all, for scale)
  jfr     java -XX:StartFlightRecording:settings=S,maxsize=250m AgentWorkload
  agent   java -javaagent:jfrstream-agent.jar=connect=...,settings=S AgentWorkload,
          streaming into `jfrstream listen --json > /dev/null` (its CPU reported apart);
          the agent's last log line gives its own thread's CPU time (ThreadMXBean), the
          direct cost, which the noise of a shared machine does not blur

The runs alternate (nojfr, jfr, agent, nojfr, ...) RUNS times; the medians are printed:
CPU seconds, peak RSS (ru_maxrss), wall time, and the exit delay (the workload's
"done" line to the process's end).
"""
import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def run(cmd, env=None):
    """Run cmd; returns dict(cpu, rss_mb, wall, delay) from wait4 and the 'done' line."""
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    done = {}
    err = []

    def read_out():
        for line in p.stdout:
            if line.startswith(b"done"):
                done["t"] = time.monotonic()

    def read_err():
        for line in p.stderr:
            err.append(line.decode("utf-8", "replace").rstrip())

    ts = [threading.Thread(target=read_out), threading.Thread(target=read_err)]
    for t in ts:
        t.start()
    _, status, ru = os.wait4(p.pid, 0)
    t1 = time.monotonic()
    p.returncode = os.waitstatus_to_exitcode(status)
    for t in ts:
        t.join()
    if p.returncode != 0 or "t" not in done:
        sys.exit("agent_cost: %s: exit %s\n%s" % (" ".join(cmd), p.returncode, "\n".join(err[-10:])))
    return {"cpu": ru.ru_utime + ru.ru_stime, "rss_mb": ru.ru_maxrss / 1024.0,
            "wall": t1 - t0, "delay": t1 - done["t"], "err": err}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--iterations", type=int, default=6000000)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--settings", default="profile")
    ap.add_argument("--heap", default="256m", help="-Xms and -Xmx of every run (RSS compares)")
    ap.add_argument("--java", default=shutil.which("java"))
    ap.add_argument("--agent-options", default="",
                    help="more agent options, e.g. ack=off (a listener without the ack protocol)")
    a = ap.parse_args()
    jfrstream = os.path.join(a.build, "tools", "jfrstream", "jfrstream")
    jar = os.path.join(a.build, "tools", "jfrstream-agent", "jfrstream-agent.jar")
    for f in (jfrstream, jar):
        if not os.path.exists(f):
            sys.exit("agent_cost: no %s (ninja -C %s)" % (f, a.build))
    tmp = tempfile.mkdtemp(prefix="agent-cost-")
    try:
        javac = os.path.join(os.path.dirname(os.path.realpath(a.java)), "javac")
        subprocess.run([javac, "-d", tmp, os.path.join(HERE, "AgentWorkload.java")], check=True)
        work = ["-Xms" + a.heap, "-Xmx" + a.heap, "-cp", tmp, "AgentWorkload", str(a.iterations), str(a.threads)]
        res = {"nojfr": [], "jfr": [], "agent": []}
        listen_cpu = []
        thread_cpu = []     # the agent's own thread (ThreadMXBean), from its last log line:
        setup_cpu = []      # starting the recording (JFR's own work) apart from the streaming
        for i in range(a.runs):
            res["nojfr"].append(run([a.java] + work))
            rec = "-XX:StartFlightRecording:settings=%s,maxsize=250m,filename=%s/jfr.jfr" % (
                a.settings, tmp)
            res["jfr"].append(run([a.java, rec] + work))
            lp = subprocess.Popen([jfrstream, "listen", "127.0.0.1:0", "--json", "--once"],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            port = None
            while port is None:
                line = lp.stderr.readline().decode()
                m = re.search(r"listening on 127\.0\.0\.1:(\d+)", line)
                if m:
                    port = int(m.group(1))
                elif not line:
                    sys.exit("agent_cost: listen did not start")
            threading.Thread(target=lp.stderr.read, daemon=True).start()
            opt = "-javaagent:%s=connect=127.0.0.1:%d,settings=%s" % (jar, port, a.settings)
            if a.agent_options:
                opt += "," + a.agent_options
            r = run([a.java, opt] + work)
            m = [re.search(r"thread used (\d+) ms.*: (\d+) ms to start the recording, (\d+) ms streaming", l)
                 for l in r["err"]]
            m = [x for x in m if x]
            thread_cpu.append(int(m[-1].group(3)) / 1000.0 if m else float("nan"))
            setup_cpu.append(int(m[-1].group(2)) / 1000.0 if m else float("nan"))
            res["agent"].append(r)
            for _ in range(300):            # listen --once ends with the stream: 30 s at most
                pid, _, ru = os.wait4(lp.pid, os.WNOHANG)
                if pid:
                    break
                time.sleep(0.1)
            else:
                lp.kill()
                _, _, ru = os.wait4(lp.pid, 0)
                print("note: listen got no stream (the JVM ended before the agent connected)")
            listen_cpu.append(ru.ru_utime + ru.ru_stime)
            print("run %d: " % (i + 1) + ", ".join(
                "%s cpu %.2f s rss %.0f MB delay %.2f s" % (k, v[-1]["cpu"], v[-1]["rss_mb"], v[-1]["delay"])
                for k, v in res.items()), flush=True)
        med = {k: {m: statistics.median(r[m] for r in v) for m in ("cpu", "rss_mb", "wall", "delay")}
               for k, v in res.items()}
        print("\n| run | CPU s | peak RSS MB | wall s | exit delay s |")
        print("|---|---|---|---|---|")
        for k in ("nojfr", "jfr", "agent"):
            m = med[k]
            print("| %s | %.2f | %.0f | %.2f | %.2f |" % (k, m["cpu"], m["rss_mb"], m["wall"], m["delay"]))
        j, g, n = med["jfr"]["cpu"], med["agent"]["cpu"], med["nojfr"]["cpu"]
        print("\nagent beyond JFR: %+.2f CPU s = %+.1f %% of the jfr run's CPU (JFR itself: %+.1f %% over nojfr); "
              "RSS %+.0f MB; listen used %.2f CPU s (median)"
              % (g - j, 100.0 * (g - j) / j, 100.0 * (j - n) / n,
                 med["agent"]["rss_mb"] - med["jfr"]["rss_mb"], statistics.median(listen_cpu)))
        t = statistics.median(thread_cpu)
        print("the agent's own thread, streaming: %.2f CPU s (median of %s) = %.2f %% of the jfr run's CPU; "
              "starting the recording: %.2f CPU s (median)"
              % (t, ", ".join("%.2f" % x for x in thread_cpu), 100.0 * t / j, statistics.median(setup_cpu)))
        for k in ("nojfr", "jfr", "agent"):
            print("%s cpu s: %s" % (k, ", ".join("%.2f" % r["cpu"] for r in res[k])))
        d = [ag["cpu"] - jf["cpu"] for ag, jf in zip(res["agent"], res["jfr"])]
        print("agent - jfr per round (the same minute of the machine's load): %s s; median %+.2f s = %+.1f %%"
              % (", ".join("%+.2f" % x for x in d), statistics.median(d), 100.0 * statistics.median(d) / j))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
