#!/usr/bin/env python3
"""sink_kafka.py — how many events per second one `jfrstream listen`
forwards into Kafka (librdkafka's mock cluster, test/sink/mock_kafka) as
JSON, with 1, 100 and 1,000 connected sources, side by side with plain
`listen --json > /dev/null` in the same run. Run it through
bench/sink-kafka.sh (which finds the build); not part of `meson test`.

    bench/sink_kafka.py --jfrstream PATH [--mock PATH] [--file F.jfr|synth:N]
                        [--sources 1,100,1000] [--total EVENTS]
                        [--modes stdout,kafka[,kafka:otlp-json]] [--brokers 3]
                        [--certs DIR] [--callgrind]

Modes: stdout (`listen --json > /dev/null`), parse (`listen` with its rate
view to /dev/null: the parse alone), kafka[:FORMAT] (needs --mock); each
with a suffix +tls (`--tls-cert/--tls-key`: the sender speaks TLS) or +mtls
(also `--tls-client-ca`: the sender presents a client certificate), the
certificates from --certs DIR (default: made by test/certs.py in
--out). bench/tls.sh runs the TLS rows (bench/README.md, "TLS").

For each number of sources N and each mode, a fresh listener (and for kafka
a fresh mock cluster) is started; a sender process (this script, --send:
asyncio) opens N connections, all connected before the first byte, then
sends its recording to every one of them COPIES times back to back (a stream
of chunks, as one JVM sends chunk after chunk), half-closes and waits for the
listener to close each. The recording is by default bench/mkbench_jfr.py's
(17 KB: 500 bench.Sample events and a jdk.JVMInformation with a pid of its
own per source, so each source is a JVM with its own Kafka key), so that
1,000 sources stay small; --file takes a real one. COPIES is chosen so that
each row carries about --total events (default 501,000: 1 source x 1,000
copies, 100 x 10, 1,000 x 1). Then the
listener gets SIGTERM (kafka: it flushes the producer and prints its
counts) and is reaped with wait4():

  events     the listener's own count (its "stream ended: ... N events"
             lines); kafka: its "delivered" count, which must be equal
  seconds    from the first byte sent to the listener's exit (kafka: the
             final flush included)
  events/s   events / seconds
  cpu s      the listener's user + system CPU (all its threads, librdkafka's
             included), the same counters as utime + stime of
             /proc/PID/stat, taken at its exit
  cpu s/M    cpu seconds per million events
  connect cpu  the listener's CPU when every connection was open (the
             sender waits for the driver to take it before its first byte):
             accepting, and with TLS the handshakes
  after connect cpu s/M  (cpu s - connect cpu) per million events: the
             cost of the stream itself
  reads, KB a read  the listener's read calls and bytes per call so far
             (syscr and rchar of /proc/PID/io when the last stream ended;
             its file reads at start-up included, a few dozen)
  peak RSS   ru_maxrss (= VmHWM) of the listener
  mock cpu   the mock cluster's CPU (the brokers run in their own process
             on the same cores)

--callgrind runs each listener under valgrind's callgrind (--cache-sim=no)
and counts instructions instead of CPU time, which the machine's load does
not change: when every connection is open (and the listener's CPU has
settled) the driver has callgrind dump its counts (callgrind_control
--dump), which zeroes them, and the listener's exit dumps the rest:

  connect Ir       the instructions up to that point (start-up, accepting,
                   the handshakes)
  after connect Ir/ev  the rest per event: the stream itself

The run is about 50 times slower: use a small --window (handshakes in
flight at once, each waiting for the ones before it; the sender's handshake
timeout is 600 s) and a small --total.

Prints one table at the end (and each row's raw line as it goes).
"""
import argparse
import asyncio
import json
import os
import re
import resource
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


# ------------------------------------------------------------------ sender

def client_tls(tls, certs):
    """The sender's ssl context for tls "tls" or "mtls" (None: plain TCP)."""
    if tls == "none":
        return None
    import ssl
    ctx = ssl.create_default_context(cafile=os.path.join(certs, "ca.pem"))
    if tls == "mtls":
        ctx.load_cert_chain(os.path.join(certs, "client.pem"), os.path.join(certs, "client.key"))
    return ctx


async def _send_all(port, n, copies, data, window, ctx=None):
    sem = asyncio.Semaphore(window)
    conns = []

    async def connect():
        async with sem:
            for attempt in range(50):
                try:
                    r, w = await asyncio.open_connection("127.0.0.1", port, ssl=ctx,
                                                         ssl_handshake_timeout=600 if ctx else None)
                    return r, w
                except OSError:
                    await asyncio.sleep(0.05 * (attempt + 1))
            raise OSError("cannot connect to 127.0.0.1:%d" % port)

    conns = await asyncio.gather(*(connect() for _ in range(n)))
    # every connection open (TLS: its handshake done): the driver takes the
    # listener's CPU so far, then says go
    print("connected", flush=True)
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
    t0 = time.monotonic()

    async def one(r, w, data):
        for _ in range(copies):
            w.write(data)
            await w.drain()
        if w.can_write_eof():
            w.write_eof()
            await r.read()  # until the listener closes
        else:  # TLS: close_notify, then the socket (the listener reads both)
            w.close()
            try:
                await w.wait_closed()
            except (OSError, ConnectionError):
                pass
            return
        w.close()

    await asyncio.gather(*(one(r, w, data[i]) for i, (r, w) in enumerate(conns)))
    return t0, time.monotonic()


def recording(spec, i):
    """The bytes that source i sends: FILE, or synth:N (bench/mkbench_jfr.py,
    N events and pid 20000 + i: each source is a JVM of its own)."""
    if spec.startswith("synth:"):
        sys.path.insert(0, HERE)
        import mkbench_jfr
        return mkbench_jfr.build(int(spec.split(":", 1)[1]), 20000 + i)
    return open(spec, "rb").read()


def sender(port, n, copies, spec, window, tls="none", certs=""):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = min(hard, max(soft, n + 64))
    if want > soft:
        resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
    if spec.startswith("synth:"):
        data = [recording(spec, i) for i in range(n)]
    else:
        data = [recording(spec, 0)] * n
    t0, t1 = asyncio.run(_send_all(port, n, copies, data, window, client_tls(tls, certs)))
    print("t0=%.6f t1=%.6f" % (t0, t1), flush=True)
    return 0


# ------------------------------------------------------------------ driver

def read_io(pid):
    """/proc/PID/io: syscr (read calls) and rchar (bytes read), or {}."""
    try:
        with open("/proc/%d/io" % pid) as f:
            return {k: int(v) for k, v in (line.split(":") for line in f)}
    except (OSError, ValueError):
        return {}


def read_stat_cpu(pid):
    with open("/proc/%d/stat" % pid) as f:
        s = f.read()
    fields = s[s.rindex(")") + 2:].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class Proc:
    """A child reaped with wait4 (its rusage)."""

    def __init__(self, args, **kw):
        self.p = subprocess.Popen(args, **kw)
        self.pid = self.p.pid
        self.rusage = None
        self.status = None

    def reap(self, timeout):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            try:
                pid, status, ru = os.wait4(self.pid, os.WNOHANG)
            except ChildProcessError:
                return True
            if pid == self.pid:
                self.status, self.rusage = status, ru
                self.p.returncode = os.waitstatus_to_exitcode(status)
                return True
            time.sleep(0.02)
        return False

    def kill(self):
        if self.status is None and self.p.returncode is None:
            try:
                self.p.kill()
            except OSError:
                pass
            self.reap(10)


def wait_line(stream, pattern, timeout):
    """Read lines of a pipe until one matches (or timeout): the match."""
    import select
    rx = re.compile(pattern)
    end = time.monotonic() + timeout
    buf = b""
    fd = stream.fileno()
    while time.monotonic() < end:
        r, _, _ = select.select([fd], [], [], 0.2)
        if not r:
            continue
        chunk = os.read(fd, 65536)
        if not chunk:
            return None
        buf += chunk
        for line in buf.decode("utf-8", "replace").splitlines():
            m = rx.search(line)
            if m:
                return m
    return None


def callgrind_ir(path):
    """The instruction count of a callgrind dump ("summary:" or "totals:")."""
    with open(path) as f:
        for line in f:
            if line.startswith(("summary:", "totals:")):
                return int(line.split()[1])
    raise RuntimeError("no totals in " + path)


def run_one(a, mode, n, copies):
    """One listener, one sender: a dict of the row."""
    procs = []
    mock = None
    mock_cpu = None
    try:
        largs = [a.jfrstream, "listen", "127.0.0.1:0", "--max-connections", str(max(1024, n + 16))]
        mode, _, tls = mode.partition("+")
        tls = tls or "none"
        if tls != "none":
            largs += ["--tls-cert", os.path.join(a.certs, "server.pem"),
                      "--tls-key", os.path.join(a.certs, "server.key")]
        if tls == "mtls":
            largs += ["--tls-client-ca", os.path.join(a.certs, "ca.pem")]
        if mode == "stdout":
            largs += ["--json"]
        elif mode == "parse":
            pass
        else:
            if not a.mock:
                raise RuntimeError("mode %s needs --mock" % mode)
            mock = Proc([a.mock, str(a.brokers), "bench"], stdin=subprocess.PIPE,
                        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
            procs.append(mock)
            m = wait_line(mock.p.stdout, r"^(\S+:\d+\S*)", 20)
            if not m:
                raise RuntimeError("mock_kafka printed no bootstrap list")
            largs += ["--kafka", m.group(1), "--kafka-topic", "bench", "--kafka-format", mode.split(":", 1)[1]
                      if ":" in mode else "json"]
        tag = "%s-%s-%d" % (mode.replace(":", "-"), tls, n)
        errf = open(os.path.join(a.out, "listen-%s.err" % tag), "w+b")
        cg = None
        if a.callgrind:
            cg = os.path.join(a.out, "callgrind-%s.out" % tag)
            for old in [f for f in os.listdir(a.out) if f.startswith("callgrind-%s.out" % tag)]:
                os.unlink(os.path.join(a.out, old))
            largs = ["valgrind", "--tool=callgrind", "--cache-sim=no", "--callgrind-out-file=" + cg,
                     "--log-file=" + cg + ".log"] + largs
        lst = Proc(largs, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=errf)
        procs.append(lst)
        port = None
        end = time.monotonic() + (120 if cg else 20)
        while time.monotonic() < end and port is None:
            errf.seek(0)
            m = re.search(rb"listening on 127\.0\.0\.1:(\d+)", errf.read())
            if m:
                port = int(m.group(1))
            else:
                time.sleep(0.05)
        if port is None:
            raise RuntimeError("listen did not start")
        snd = Proc([sys.executable, os.path.abspath(__file__), "--send", str(port), str(n),
                    str(copies), a.file, str(a.window), tls, a.certs or ""],
                   stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        procs.append(snd)
        if not wait_line(snd.p.stdout, r"^connected", a.timeout):
            raise RuntimeError("the sender did not connect")
        # the server's end of each handshake may still be under way (TLS
        # 1.3: the client is done when it has sent its Finished; the listener
        # verifies the client's certificate after that): wait until the
        # listener's CPU stops growing
        cpu_connected = read_stat_cpu(lst.pid)
        for _ in range(100):
            time.sleep(0.1)
            c = read_stat_cpu(lst.pid)
            if c == cpu_connected:
                break
            cpu_connected = c
        ir_connected = None
        if cg:
            subprocess.run(["callgrind_control", "--dump=connected", str(lst.pid)], check=True,
                           stdout=subprocess.DEVNULL)
            dumps = [f for f in os.listdir(a.out) if f.startswith(os.path.basename(cg) + ".")
                     and not f.endswith(".log")]
            if len(dumps) != 1:
                raise RuntimeError("callgrind_control: dumps %r" % dumps)
            ir_connected = callgrind_ir(os.path.join(a.out, dumps[0]))
        out, _ = snd.p.communicate(b"go\n", timeout=a.timeout)
        m = re.search(rb"t0=([\d.]+) t1=([\d.]+)", out)
        if not m:
            raise RuntimeError("sender failed (exit %s)" % snd.p.returncode)
        t0, t1 = float(m.group(1)), float(m.group(2))
        # every connection closed by the listener: its events are all parsed
        # (kafka: handed to the producer, maybe not all delivered yet)
        cpu_before = read_stat_cpu(lst.pid)
        io = read_io(lst.pid)
        lst.p.send_signal(signal.SIGTERM)
        if not lst.reap(a.timeout):
            raise RuntimeError("listen did not exit after SIGTERM")
        t2 = time.monotonic()
        if mock:
            mock_cpu = read_stat_cpu(mock.pid)
            mock.p.stdin.close()
            mock.reap(20)
        errf.seek(0)
        err = errf.read().decode("utf-8", "replace")
        errf.close()
        events = sum(int(x) for x in re.findall(r"stream ended: \d+ chunks?, (\d+) events", err))
        ended = len(re.findall(r"stream ended", err))
        delivered = None
        if mode not in ("stdout", "parse"):
            for line in err.splitlines():
                if "kafka" in line.lower():
                    md = re.search(r"(\d+) delivered|delivered[=: ]+(\d+)", line)
                    if md:
                        delivered = int(md.group(1) or md.group(2))
        ru = lst.rusage
        cpu = ru.ru_utime + ru.ru_stime
        ir_after = callgrind_ir(cg) if cg else None
        secs = t2 - t0
        if tls != "none":
            mode += "+" + tls
        row = {"mode": mode, "sources": n, "copies": copies, "events": events, "ended": ended,
               "delivered": delivered, "seconds": secs, "send_s": t1 - t0, "cpu": cpu,
               "cpu_at_eof": cpu_before, "cpu_connected": cpu_connected, "rss_mb": ru.ru_maxrss / 1024.0, "mock_cpu": mock_cpu,
               "reads": io.get("syscr"), "read_bytes": io.get("rchar"),
               "ir_connected": ir_connected, "ir_after": ir_after,
               "exit": lst.p.returncode}
        print("row " + json.dumps(row), flush=True)
        return row
    finally:
        for p in reversed(procs):
            p.kill()


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--send":
        port, n, copies, path, window, tls, certs = (sys.argv[2:9] + ["none", ""])[:7]
        return sender(int(port), int(n), int(copies), path, int(window), tls, certs)
    ap = argparse.ArgumentParser()
    ap.add_argument("--jfrstream", required=True)
    ap.add_argument("--mock", help="test/sink/mock_kafka (the kafka modes)")
    ap.add_argument("--certs", help="the TLS modes' certificates (test/certs.py's); "
                                    "default: made in --out")
    ap.add_argument("--file", default="synth:500",
                    help="the recording each source sends: a .jfr file (the same bytes for "
                         "every source), or synth:N (default synth:500): bench/mkbench_jfr.py, "
                         "N events, a pid of its own per source")
    ap.add_argument("--sources", default="1,100,1000")
    ap.add_argument("--total", type=int, default=501000,
                    help="about this many events per row (at least one copy per source)")
    ap.add_argument("--modes", default="stdout,kafka")
    ap.add_argument("--brokers", type=int, default=3)
    ap.add_argument("--window", type=int, default=64, help="connects in flight at once")
    ap.add_argument("--timeout", type=float, default=600)
    ap.add_argument("--out", default="/tmp/jfrstream-bench-kafka")
    ap.add_argument("--callgrind", action="store_true",
                    help="count the listener's instructions (valgrind's callgrind)")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    if "tls" in a.modes and not a.certs:
        a.certs = os.path.join(a.out, "certs")
        subprocess.run(["python3", os.path.join(ROOT, "test", "certs.py"), a.certs],
                       check=True, stdout=subprocess.DEVNULL)
    per_copy = None
    size = len(recording(a.file, 0))
    rows = []
    for n in [int(x) for x in a.sources.split(",")]:
        for mode in a.modes.split(","):
            if per_copy is None:
                row = run_one(a, "stdout", 1, 1)
                per_copy = row["events"]
                print("one copy of %s: %d events (%d bytes)"
                      % (os.path.basename(a.file), per_copy, size), flush=True)
            copies = max(1, round(a.total / (per_copy * n)))
            rows.append(run_one(a, mode, n, copies))
    load = os.getloadavg()
    print()
    print("recording %s (%d bytes, %d events a copy); %d cores, load %.2f %.2f %.2f"
          % (os.path.basename(a.file), size, per_copy, os.cpu_count(), load[0], load[1], load[2]))
    hdr = ("sources", "mode", "copies", "events", "seconds", "events/s", "cpu s", "cpu s/M ev",
           "connect cpu s", "after connect cpu s/M ev", "reads", "KB a read", "peak RSS MB", "mock cpu s",
           "check")
    if a.callgrind:
        hdr = hdr[:-1] + ("connect Ir", "after connect Ir/ev", "check")
    print("| " + " | ".join(hdr) + " |")
    print("|" + "|".join("---:" if i not in (1, len(hdr) - 1) else "---" for i in range(len(hdr))) + "|")
    bad = 0
    for w in rows:
        check = "ok"
        expect = per_copy * w["copies"] * w["sources"]
        if w["events"] != expect or w["ended"] != w["sources"]:
            check = "parsed %d of %d (%d of %d streams)" % (w["events"], expect, w["ended"], w["sources"])
        base = w["mode"].partition("+")[0]
        if base not in ("stdout", "parse") and w["delivered"] != w["events"]:
            check = "delivered %s of %d" % (w["delivered"], w["events"])
        if w["exit"] != 0:
            check += ", exit %s" % w["exit"]
        if check != "ok":
            bad += 1
        mode = "listen --json > /dev/null" if base == "stdout" else \
            "listen (rate view)" if base == "parse" else \
            "listen --kafka (%s)" % (base.split(":", 1)[1] if ":" in base else "json")
        tls = w["mode"].partition("+")[2]
        mode += {"": "", "tls": ", TLS", "mtls": ", mutual TLS"}[tls]
        per_m = w["events"] / 1e6 if w["events"] else 0
        reads = w.get("reads")
        kb = "%.1f" % (w["read_bytes"] / reads / 1024.0) if reads else "-"
        if a.callgrind:
            check = "%d | %.0f | %s" % (w["ir_connected"],
                                       w["ir_after"] / w["events"] if w["events"] else 0, check)
        print("| %d | %s | %d | %d | %.2f | %.0f | %.2f | %.2f | %.2f | %.2f | %s | %s | %.1f | %s | %s |" % (
            w["sources"], mode, w["copies"], w["events"], w["seconds"],
            w["events"] / w["seconds"] if w["seconds"] else 0, w["cpu"],
            w["cpu"] / per_m if per_m else 0, w["cpu_connected"],
            (w["cpu"] - w["cpu_connected"]) / per_m if per_m else 0,
            reads if reads is not None else "-", kb, w["rss_mb"],
            "%.2f" % w["mock_cpu"] if w["mock_cpu"] is not None else "-", check))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
