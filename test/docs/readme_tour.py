#!/usr/bin/env python3
"""readme_tour.py — runs the README's tour ("## A short tour") as written.

    readme_tour.py JFRSTREAM SOURCE_ROOT BUILD_ROOT [--mock MOCK_KAFKA]

The fenced blocks of the tour are taken from README.md and run by bash, in a
scratch folder that links the checkout's `test` and `tools` folders (the
commands name `test/data/workload.jfr`, `tools/jfr-pump/JfrPump.java`...), with
the build's `jfrstream` first on the PATH. Only the addresses change, to ports
this test chose free on loopback: the listener's 7091, the metrics' 9464,
Prometheus's 9090; `localhost:9092` becomes librdkafka's mock cluster
(test/sink/mock_kafka) and `http://localhost:4040` the tests' fake Pyroscope
(test/sink/pyroscope_receiver.py).

  1. the file block (sh): every command succeeds; the outputs are checked
     against the fixture (summary as `jfr summary` prints it, the GC events,
     the flame graph page, the gzip'd pprof, the summary of stdin = the file's);
  2. the live JVM block (sh): a JVM, tools/jfr-pump, `listen --once --summary`;
  3. the fleet block (sh): Kafka (read back by the block's kcat), Pyroscope
     (the receiver's 200s), Prometheus (its query API), the metrics endpoint;
  4. the TLS block (sh): certificates made by openssl, `listen --once --summary`
     with mutual TLS, a JVM with the build's jfrstream-agent.jar connecting
     with its client certificate;
  5. the library: the C block written as top.c, built and run by the next sh
     block against the build's uninstalled pkg-config files; one line per
     jdk.ExecutionSample of the fixture.

A part whose needs are missing (java, kcat, prometheus, curl, cc, the build's
Kafka, Pyroscope or metrics) is skipped with its reason; the test SKIPs
(exit 77) only when nothing ran. Every wait is bounded; each block runs in a
session of its own, killed by its id at the end.
"""
import gzip
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "sink"))
sys.path.insert(0, os.path.join(HERE, "..", "live"))
import livelib  # noqa: E402

fails = []
skips = []
ran = []


def log(msg):
    print(msg, flush=True)


def check(ok, what):
    log(("ok:   " if ok else "FAIL: ") + what)
    if not ok:
        fails.append(what)


free_port = livelib.free_port


def tour_blocks(readme):
    """[(info, text)] of the fenced blocks of the tour section."""
    text = open(readme, encoding="utf-8").read()
    m = re.search(r"^## A short tour\n(.*?)(?=^## )", text, re.S | re.M)
    if not m:
        return []
    return re.findall(r"^```(\w*)\n(.*?)^```", m.group(1), re.S | re.M)


def run_block(name, script, cwd, env, timeout):
    """Runs `script` with bash in a session of its own; returns (rc, out, err)."""
    log("---- %s:\n%s" % (name, script.rstrip()))
    p = subprocess.Popen(["bash", "-c", script], cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         start_new_session=True)
    try:
        out, err = p.communicate(timeout=timeout)
        rc = p.returncode
    except subprocess.TimeoutExpired:
        rc = None
        out, err = b"", b""
    finally:
        try:
            os.killpg(p.pid, signal.SIGKILL)  # what the block left behind
        except ProcessLookupError:
            pass
        if rc is None:
            out, err = p.communicate()
    out = out.decode("utf-8", "replace")
    err = err.decode("utf-8", "replace")
    log("  exit %s (timeout %d s)" % (rc, timeout))
    for line in out.splitlines()[:40]:
        log("  | " + line[:160])
    for line in err.splitlines()[-25:]:
        log("  ! " + line[:160])
    return rc, out, err


def java_ok():
    java = shutil.which("java")
    if not java:
        return "no java on PATH (openjdk-17-jdk-headless)"
    r = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=60)
    m = re.search(r'version "(\d+)', r.stderr)
    if not m or int(m.group(1)) < 17:
        return "java is not JDK 17 or later"
    return None


def sinks_missing(jfrstream):
    """Why this build cannot run the fleet block, or None."""
    args = [jfrstream, "listen", "127.0.0.1:0", "--kafka", "127.0.0.1:1",
            "--pyroscope", "http://127.0.0.1:1", "--metrics", "127.0.0.1:0"]
    p = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE)
    try:
        p.wait(timeout=3)
        err = p.stderr.read().decode("utf-8", "replace").strip()
        return "listen --kafka --pyroscope --metrics exits %d: %s" % (p.returncode, err[-200:])
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait(timeout=10)
        return None
    finally:
        p.stderr.close()


def file_block(script, work, env, jfrstream):
    rc, out, err = run_block("a file", "set -e\n" + script, work, env, 120)
    check(rc == 0, "the file block runs (exit 0)")
    ref = subprocess.run([jfrstream, "summary", os.path.join(work, "test/data/workload.jfr")],
                         capture_output=True, text=True, timeout=60).stdout
    stored = open(os.path.join(work, "test/data/workload.summary.txt")).read()
    check(ref == stored, "summary of workload.jfr = the stored JDK 25 `jfr summary`")
    if "jfrstream summary test/data/workload.jfr\n" in script:
        check(out.startswith(stored), "the block's summary is the stored one")
    if "| jfrstream summary -" in script:
        check(out.count(stored) >= 2 or out.endswith(stored),
              "summary of gzip'd stdin = summary of the file")
    if "print --events jdk.GarbageCollection" in script:
        check(out.count("jdk.GarbageCollection {\n") == 4,
              "print --events jdk.GarbageCollection: the fixture's 4 collections as text")
    if "print --json --events jdk.CPULoad" in script:
        n = subprocess.run([jfrstream, "summary", os.path.join(work, "test/data/workload.jfr")],
                           capture_output=True, text=True, timeout=60).stdout
        m = re.search(r"^ jdk\.CPULoad +(\d+) ", n, re.M)
        check(m is not None and out.count('"type": "jdk.CPULoad"') == int(m.group(1)),
              "print --json --events jdk.CPULoad: one JSON event per jdk.CPULoad of summary")
    if "jfrstream view hot-methods" in script:
        check("Java Methods that Execute the Most" in out and "Workload.spin(long)" in out,
              "view hot-methods: the table of the fixture's hot methods")
    if "jfrstream query " in script:
        check(re.search(r"^STATE_RUNNABLE +\d+$", out, re.M) is not None,
              "query: the ExecutionSample count of the RUNNABLE state")
    if "flamegraph -o cpu.html" in script:
        page = os.path.join(work, "cpu.html")
        check(os.path.exists(page) and b"<html" in open(page, "rb").read(4096).lower(),
              "cpu.html is an HTML page")
    if "-o alloc.pb.gz" in script:
        pb = os.path.join(work, "alloc.pb.gz")
        ok = os.path.exists(pb)
        if ok:
            try:
                ok = len(gzip.decompress(open(pb, "rb").read())) > 0
            except OSError:
                ok = False
        check(ok, "alloc.pb.gz is a gzip'd profile")
    if "> alloc.collapsed" in script:
        col = os.path.join(work, "alloc.collapsed")
        lines = open(col).read().splitlines() if os.path.exists(col) else []
        check(lines and all(re.search(r" \d+$", x) for x in lines),
              "alloc.collapsed: %d folded stacks, each with its weight" % len(lines))
    ran.append("file")


def live_block(script, work, env):
    why = java_ok()
    if why:
        skips.append("live JVM: " + why)
        return
    rc, out, err = run_block("a live JVM", script, work, env, 180)
    check(rc is not None and "listen: exit 0" in out,
          "the live block runs (listen --once exits 0)")
    check("Event Type" in out and "jdk.GarbageCollection" in out,
          "listen --summary printed the streamed events' table")
    ran.append("live")


def fleet_block(script, work, env, jfrstream, mock):
    for what, why in (("java", java_ok()),
                      ("kcat", None if shutil.which("kcat") else "no kcat (Debian kcat)"),
                      ("prometheus", None if shutil.which("prometheus")
                       else "no prometheus (Debian prometheus)"),
                      ("curl", None if shutil.which("curl") else "no curl"),
                      ("mock", None if mock and os.access(mock, os.X_OK)
                       else "mock_kafka not built (librdkafka: -Dkafka)"),
                      ("sinks", sinks_missing(jfrstream))):
        if why:
            skips.append("fleet: " + why)
            return
    import pyroscope_receiver
    mk = subprocess.Popen([mock, "1"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                          stderr=subprocess.DEVNULL, start_new_session=True)
    recv = pyroscope_receiver.Receiver()
    try:
        bootstrap = mk.stdout.readline().decode().strip()
        check(bool(re.match(r"\S+:\d+", bootstrap)), "mock Kafka cluster: %s" % bootstrap)
        recv.start()
        check("localhost:9092" in script and "http://localhost:4040" in script,
              "the fleet block names localhost:9092 and http://localhost:4040")
        script = script.replace("localhost:9092", bootstrap)
        script = script.replace("http://localhost:4040", recv.url.rstrip("/"))
        rc, out, err = run_block("a fleet", script, work, env, 240)
        check(rc is not None and "listen: exit 0" in out,
              "the fleet block runs (listen exits 0 after SIGTERM)")
        check(re.search(r"^jvm_gc_duration_seconds_count\{.*cluster=\"dev\".*\} [1-9]", out,
                        re.M) is not None,
              "the metrics endpoint: jvm_gc_duration_seconds_count with the --label")
        m = re.search(r'"status":"success".*"value":\[[0-9.]+,"(\d+)"\]', out)
        check(m is not None and int(m.group(1)) > 0,
              "Prometheus scraped the listener: sum(jfr_events_total) = %s"
              % (m.group(1) if m else None))
        msgs = [x for x in out.splitlines() if x.startswith('{"type":')]
        check(len(msgs) == 2 and all('"source":' in x for x in msgs),
              "kcat read 2 events from Kafka, with their source labels")
        got = recv.accepted()
        check(len(got) >= 1, "Pyroscope received %d profiles" % len(got))
    finally:
        recv.stop()
        try:
            mk.stdin.close()
            mk.wait(timeout=20)
        except (OSError, subprocess.TimeoutExpired):
            os.killpg(mk.pid, signal.SIGKILL)
            mk.wait(timeout=10)
    ran.append("fleet")


def secure_block(script, work, env, jfrstream, build):
    """The fleet's secure path: certificates by openssl, listen with mutual TLS
    (--once --summary), a JVM with the build's agent jar connecting with them."""
    jar = os.path.join(build, "tools", "jfrstream-agent", "jfrstream-agent.jar")
    h = subprocess.run([jfrstream, "listen", "--help"], capture_output=True, text=True)
    for what, why in (("java", java_ok()),
                      ("openssl", None if shutil.which("openssl") else "no openssl command"),
                      ("agent", None if os.path.exists(jar) else "no jfrstream-agent.jar (-Dagent)"),
                      ("TLS", None if "--tls-cert" in h.stdout else "listen built without TLS (-Dtls)")):
        if why:
            skips.append("mutual TLS with the agent: " + why)
            return
    script = script.replace("/usr/local/share/jfrstream/jfrstream-agent.jar", jar)
    check(jar in script, "the TLS block names the installed agent jar")
    rc, out, err = run_block("mutual TLS with the agent", script, work, env, 180)
    check(rc is not None and "listen: exit 0" in out,
          "the TLS block runs (listen --once exits 0)")
    check("Event Type" in out and "jdk.GarbageCollection" in out,
          "listen --summary printed the events the agent sent through mutual TLS")
    check("TLS" in err and "client certificates required" in err,
          "listen said it requires client certificates")
    ran.append("mutual TLS")


def library_blocks(c_src, script, work, env, build, jfrstream):
    if not shutil.which("cc"):
        skips.append("library: no cc")
        return
    try:
        import json
        opts = json.load(open(os.path.join(build, "meson-info", "intro-buildoptions.json")))
        sanitize = [o["value"] for o in opts if o["name"] == "b_sanitize"]
    except (OSError, ValueError):
        sanitize = []
    if sanitize and sanitize[0] not in ("none", "", []):
        skips.append("library: a %s build: a program built without the sanitizer cannot "
                     "load its libraries" % sanitize[0])
        return
    pcdir = os.path.join(build, "meson-uninstalled")
    if not os.path.exists(os.path.join(pcdir, "jfrstream-uninstalled.pc")):
        skips.append("library: no uninstalled jfrstream.pc in the build")
        return
    env = dict(env, PKG_CONFIG_PATH=pcdir,
               LD_LIBRARY_PATH=os.path.join(build, "lib") + ":" +
               env.get("LD_LIBRARY_PATH", ""))
    # pkg-config prefers NAME-uninstalled.pc, found in PKG_CONFIG_PATH
    open(os.path.join(work, "top.c"), "w").write(c_src)
    rc, out, err = run_block("the library", "set -e\n" + script, work, env, 120)
    check(rc == 0, "top.c builds with pkg-config and runs")
    summary = subprocess.run([jfrstream, "summary", os.path.join(work, "test/data/workload.jfr")],
                             capture_output=True, text=True, timeout=60).stdout
    m = re.search(r"^ jdk\.ExecutionSample\s+(\d+)", summary, re.M)
    n = int(m.group(1)) if m else -1
    lines = out.splitlines()
    check(len(lines) == n and all("." in x for x in lines),
          "top printed %d top frames, one per jdk.ExecutionSample (%d)" % (len(lines), n))
    ran.append("library")


def main():
    args = sys.argv[1:]
    mock = None
    if "--mock" in args:
        i = args.index("--mock")
        mock = args[i + 1] or None
        del args[i:i + 2]
    if len(args) != 3:
        print("usage: readme_tour.py JFRSTREAM SOURCE_ROOT BUILD_ROOT [--mock MOCK_KAFKA]",
              file=sys.stderr)
        return 2
    jfrstream, src, build = (os.path.abspath(a) for a in args)
    blocks = tour_blocks(os.path.join(src, "README.md"))
    sh = [b for info, b in blocks if info == "sh"]
    cs = [b for info, b in blocks if info == "c"]
    check(len(sh) >= 5 and len(cs) == 1,
          "README's tour: %d sh blocks and %d C block (file, live, fleet, TLS, library)"
          % (len(sh), len(cs)))
    if fails:
        return 1
    work = tempfile.mkdtemp(prefix="readme-tour-")
    try:
        for d in ("test", "tools"):
            os.symlink(os.path.join(src, d), os.path.join(work, d))
        bindir = os.path.join(work, ".bin")
        os.mkdir(bindir)
        wrapper = os.environ.get("JFRSTREAM_TEST_WRAPPER", "")
        with open(os.path.join(bindir, "jfrstream"), "w") as f:
            f.write('#!/bin/sh\nexec %s"%s" "$@"\n' % (wrapper + " " if wrapper else "",
                                                     jfrstream))
        os.chmod(os.path.join(bindir, "jfrstream"), 0o755)
        env = dict(os.environ, PATH=bindir + ":" + os.environ.get("PATH", ""))
        ports = {"7091": free_port(), "9464": free_port(), "9090": free_port()}

        def ported(s):
            for old, new in ports.items():
                s = s.replace("127.0.0.1:" + old, "127.0.0.1:%d" % new)
            return s

        file_block(sh[0], work, env, jfrstream)
        live_block(ported(sh[1]), work, env)
        fleet_block(ported(sh[2]), work, env, jfrstream, mock)
        secure_block(ported(sh[3]), work, env, jfrstream, build)
        library_blocks(cs[0], sh[4], work, env, build, jfrstream)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    for s in skips:
        log("skipped part: " + s)
    if fails:
        log("FAIL: readme-tour: %d failed checks: %s" % (len(fails), "; ".join(fails)))
        return 1
    if not ran:
        log("SKIP: readme-tour: nothing could run: " + "; ".join(skips))
        return 77
    log("PASS: readme-tour: %s ran%s" % (", ".join(ran),
                                         "; skipped " + "; ".join(skips) if skips else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
