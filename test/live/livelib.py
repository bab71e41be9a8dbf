"""livelib.py — helpers of the live end-to-end tests (test/live/*.py).

Python 3 standard library only. Everything is bounded in time; every child
process is started here and killed (by its own pid) when a test ends.
"""
import atexit
import fcntl
import hashlib
import json
import os
import re
import shlex
import shutil
import signal
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SEQ_JAVA = os.path.join(HERE, "SeqWorkload.java")
PUMP_JAVA = os.path.join(ROOT, "tools", "jfr-pump", "JfrPump.java")

SKIP = 77
_children = []


def log(msg):
    print(msg, flush=True)


def result(name, ok, detail):
    print("%s: %s: %s" % ("PASS" if ok else "FAIL", name, detail), flush=True)
    return 0 if ok else 1


def skip(name, why):
    print("SKIP: %s: %s" % (name, why), flush=True)
    return SKIP


# ------------------------------------------------------------------ java

def find_jdk(major):
    """(home, message): a JDK of this major version or newer (test/find_jdk.py)."""
    sys.path.insert(0, os.path.dirname(HERE))
    try:
        import find_jdk as F
    finally:
        sys.path.pop(0)
    return F.find_jdk(major)


def java_bin(home=None):
    """The java launcher of a JDK home, or the one on PATH; None if absent."""
    if home:
        j = os.path.join(home, "bin", "java")
        return j if os.access(j, os.X_OK) else None
    return shutil.which("java")


def add_jdk_options(ap):
    """--java-home DIR and --jdk MAJOR on an argparse parser (pick_java)."""
    ap.add_argument("--java-home")
    ap.add_argument("--jdk", type=int, metavar="MAJOR",
                    help="instead of --java-home: a JDK of this version or newer, found "
                         "by test/find_jdk.py (JFRSTREAM_JDK<MAJOR>, /usr/lib/jvm)")


def pick_java(a, name):
    """The java of --java-home or --jdk MAJOR (which sets a.java_home), else
    PATH's: (java, name, None), the test's name followed by the JDK folder's
    when one was given; (None, name, why) when there is none, to SKIP with."""
    if a.jdk:
        a.java_home, why = find_jdk(a.jdk)
        if not a.java_home:
            return None, "%s-jdk%d" % (name, a.jdk), why
        log("%s: %s" % (name, why))
    java = java_bin(a.java_home)
    if a.java_home:
        name += "-" + os.path.basename(a.java_home)
    if not java:
        return None, name, "no java (%s)" % (a.java_home or "PATH")
    return java, name, None


def jfr_bin(java):
    j = os.path.join(os.path.dirname(os.path.realpath(java)), "jfr")
    return j if os.access(j, os.X_OK) else shutil.which("jfr")


def java_major(java):
    out = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=60).stderr
    m = re.search(r'version "(\d+)(?:\.(\d+))?', out)
    if not m:
        return 0
    major = int(m.group(1))
    return int(m.group(2)) if major == 1 else major


# ------------------------------------------------------------- processes

_compiled_cache = {}


def compiled_java(java, src):
    """(class folder, main class) of the single-file program src compiled once by the
    javac beside `java` (cached per JDK, path, mtime and size in $JFRSTREAM_JAVA_CACHE
    or the temp folder; parallel tests: the first rename wins), or None (no javac,
    or it failed: the source launcher compiles it as before)."""
    jv = os.path.realpath(shutil.which(java) or java)
    st = os.stat(src)
    key = "%s|%s|%d|%d" % (jv, os.path.realpath(src), st.st_mtime_ns, st.st_size)
    if key in _compiled_cache:
        return _compiled_cache[key]
    root = os.environ.get("JFRSTREAM_JAVA_CACHE") or os.path.join(
        tempfile.gettempdir(), "jfrstream-java-%d" % os.getuid())
    d = os.path.join(root, hashlib.sha1(key.encode()).hexdigest()[:16])
    main = os.path.splitext(os.path.basename(src))[0]
    res = None
    if os.path.isfile(os.path.join(d, main + ".class")):
        res = (d, main)
    else:
        javac = os.path.join(os.path.dirname(jv), "javac")
        if os.access(javac, os.X_OK):
            os.makedirs(root, exist_ok=True)
            tmp = tempfile.mkdtemp(prefix="new.", dir=root)
            try:
                r = subprocess.run([javac, "-nowarn", "-d", tmp, src], capture_output=True,
                                   timeout=300)
                if r.returncode == 0:
                    try:
                        os.rename(tmp, d)
                    except OSError:
                        pass  # another test's copy is there
            except (OSError, subprocess.SubprocessError):
                pass
            shutil.rmtree(tmp, ignore_errors=True)
            if os.path.isfile(os.path.join(d, main + ".class")):
                res = (d, main)
    _compiled_cache[key] = res
    return res


def precompiled(args):
    """[java, JVM options..., X.java, args...] -> [java, options..., -cp DIR, X, args...]:
    the source launcher compiles X.java at every start (2 to 3 s of CPU, the test's
    own JVMs start about a hundred times a run); the same program compiled once.
    Anything else is returned as it is."""
    if not args or os.path.basename(str(args[0])) != "java":
        return args
    for i in range(1, len(args)):
        a = str(args[i])
        if a.endswith(".java") and os.path.isfile(a):
            c = compiled_java(str(args[0]), a)
            return list(args[:i]) + ["-cp", c[0], c[1]] + list(args[i + 1:]) if c else args
        if not a.startswith("-") or a in ("-jar", "-cp", "-classpath", "--class-path", "-m"):
            return args
    return args


def start(args, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
          **kw):
    args = precompiled(args)
    p = subprocess.Popen(args, stdin=stdin, stdout=stdout, stderr=stderr, **kw)
    _children.append(p)
    return p


def cli(jfrstream):
    """The command to start the jfrstream CLI with: JFRSTREAM_TEST_WRAPPER
    (e.g. test/valgrind.sh, set by `meson test --setup valgrind`) becomes a
    small script that runs it under that wrapper (one path, so every call
    site stays [cli, args...]; exec keeps the pid the tests signal)."""
    w = os.environ.get("JFRSTREAM_TEST_WRAPPER")
    if not w:
        return jfrstream
    d = tempfile.mkdtemp(prefix="jfrstream-wrapped-")
    atexit.register(shutil.rmtree, d, True)
    path = os.path.join(d, "jfrstream")
    with open(path, "w") as f:
        f.write("#!/bin/sh\nexec %s %s \"$@\"\n" % (w, shlex.quote(os.path.abspath(jfrstream))))
    os.chmod(path, 0o755)
    return path


def scale(n, least=1):
    """n scaled by JFRSTREAM_TEST_SCALE (slow tools such as valgrind), at
    least `least`."""
    f = float(os.environ.get("JFRSTREAM_TEST_SCALE") or 1)
    return max(least, int(n * f))


def wait_open(p, path, timeout):
    """Wait until process p holds `path` open (/proc/PID/fd): a fixed sleep
    is too short when the CLI runs under a slow wrapper such as valgrind."""
    target = os.path.realpath(path)
    fd_dir = "/proc/%d/fd" % p.pid
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and p.poll() is None:
        try:
            for fd in os.listdir(fd_dir):
                if os.path.realpath(os.path.join(fd_dir, fd)) == target:
                    return True
        except OSError:
            pass
        time.sleep(0.05)
    return False


def cleanup():
    """Kill every child still running (each by its pid)."""
    for p in _children:
        if p.poll() is None:
            try:
                p.kill()
            except OSError:
                pass
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass


def wait(p, timeout, name):
    try:
        return p.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        log("  %s did not end within %.0f s: killed" % (name, timeout))
        p.kill()
        p.wait(timeout=10)
        return None


class Lines:
    """Read a child's pipe line by line in a thread; keep (arrival ns, line)."""

    def __init__(self, pipe, keep=True, echo=None):
        self.lines = []
        self.keep = keep
        self.echo = echo
        self.count = 0
        self.cond = threading.Condition()
        self.done = False
        self.t = threading.Thread(target=self._run, args=(pipe,), daemon=True)
        self.t.start()

    def _run(self, pipe):
        for raw in iter(pipe.readline, b""):
            now = time.time_ns()
            line = raw.decode("utf-8", "replace").rstrip("\n")
            if self.echo:
                self.echo(line)
            with self.cond:
                if self.keep:
                    self.lines.append((now, line))
                self.count += 1
                self.cond.notify_all()
        with self.cond:
            self.done = True
            self.cond.notify_all()

    def wait_for(self, pattern, timeout):
        """The first match of regex `pattern` in a line, waiting up to timeout."""
        rx = re.compile(pattern)
        end = time.monotonic() + timeout
        i = 0
        with self.cond:
            while True:
                while i < len(self.lines):
                    m = rx.search(self.lines[i][1])
                    if m:
                        return m
                    i += 1
                left = end - time.monotonic()
                if left <= 0 or self.done:
                    return None
                self.cond.wait(left)

    def join(self, timeout=10):
        self.t.join(timeout)

    def text(self):
        return "\n".join(l for _, l in self.lines)


# ------------------------------------------------------------- workloads

def seq_workload(java, args, jvm_opts=(), cwd=None):
    """Start SeqWorkload; returns (process, stdout Lines, stderr Lines)."""
    p = start([java] + list(jvm_opts) + [SEQ_JAVA] + list(args), cwd=cwd)
    return p, Lines(p.stdout), Lines(p.stderr)


def pump(java, args):
    p = start([java, PUMP_JAVA] + list(args))
    return p, Lines(p.stdout), Lines(p.stderr)


def workload_pid(out, timeout=60):
    m = out.wait_for(r"^pid=(\d+)", timeout)
    return int(m.group(1)) if m else None


# ------------------------------------------------------------- checks

def free_port():
    """A loopback port free now (bound, read, released)."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def seq_report(lines, last):
    """Check the jfrstream.Seq JSON lines: returns (ok, text, stats)."""
    seen = {}
    lat = []
    bad = 0
    batches = []  # [smallest latency, last arrival] per burst of lines
    for t, line in lines:
        try:
            ev = json.loads(line)
        except ValueError:
            bad += 1
            continue
        if ev.get("type") != "jfrstream.Seq":
            continue
        v = ev["values"]
        s = v["seq"]
        seen[s] = seen.get(s, 0) + 1
        lat.append((t - v["commitNanos"]) / 1e6)
        if not batches or t - batches[-1][1] > 200_000_000:
            batches.append([t - v["commitNanos"], t])
        else:
            batches[-1][0] = min(batches[-1][0], t - v["commitNanos"])
            batches[-1][1] = t
    expected = last + 1 if last is not None else 0
    lost = sum(1 for s in range(expected) if s not in seen)
    dup = sum(c - 1 for c in seen.values() if c > 1)
    extra = sum(1 for s in seen if s < 0 or s >= expected)
    st = {"expected": expected, "received": sum(seen.values()), "lost": lost, "dup": dup,
          "extra": extra, "bad_lines": bad}
    if batches:
        # newest event of a burst (committed just before the flush) -> its
        # arrival: the delay of the pipeline after the JVM's flush
        st["bursts"] = len(batches)
        st["pipe_median_ms"] = statistics.median(b[0] / 1e6 for b in batches)
    if lat:
        lat.sort()
        st["lat_median_ms"] = statistics.median(lat)
        st["lat_p99_ms"] = lat[min(len(lat) - 1, int(round(0.99 * (len(lat) - 1))))]
        st["lat_max_ms"] = lat[-1]
        st["lat_min_ms"] = lat[0]
    ok = expected > 0 and lost == 0 and dup == 0 and extra == 0 and bad == 0
    text = "seq expected %d received %d lost %d duplicated %d extra %d bad-lines %d" % (
        expected, st["received"], lost, dup, extra, bad)
    if lat:
        text += "; latency median %.0f ms p99 %.0f ms (min %.0f, max %.0f)" % (
            st["lat_median_ms"], st["lat_p99_ms"], st["lat_min_ms"], st["lat_max_ms"])
    if batches:
        text += "; %d bursts, newest event of a burst -> stdout median %.0f ms" % (
            st["bursts"], st["pipe_median_ms"])
    return ok, text, st


SUM_ROW = re.compile(r"^ (\S.*?)\s+(-?\d+)\s+(-?\d+)\s*$")


def parse_summary(text):
    """`jfr summary` text -> (chunks, {type: (count, size)}). Names are
    normalised: JDK 17 prints jdk.CheckPoint, JDK 25 jdk.Checkpoint."""
    chunks = None
    rows = {}
    table = False
    for line in text.splitlines():
        m = re.match(r"^ Chunks: (\d+)", line)
        if m:
            chunks = int(m.group(1))
        if line.startswith("====="):
            table = True
            continue
        if table:
            m = SUM_ROW.match(line)
            if m:
                name = m.group(1).strip()
                if name == "jdk.CheckPoint":
                    name = "jdk.Checkpoint"
                rows[name] = (int(m.group(2)), int(m.group(3)))
            elif line.strip() == "" or not line.startswith(" "):
                table = False
    return chunks, rows


def compare_tables(ours, ref):
    """Differences between two {type: (count, size)} (types with count 0 in
    one and absent in the other are equal)."""
    diffs = []
    for name in sorted(set(ours) | set(ref)):
        a = ours.get(name, (0, 0))
        b = ref.get(name, (0, 0))
        if a != b:
            diffs.append("%s: ours %s, reference %s" % (name, a, b))
    return diffs


def chunks_of(path):
    """Split a finished .jfr file: [(start_nanos, bytes)]."""
    data = open(path, "rb").read()
    out = []
    off = 0
    while off + 68 <= len(data):
        if data[off:off + 4] != b"FLR\0":
            break
        size = struct.unpack(">q", data[off + 8:off + 16])[0]
        start = struct.unpack(">q", data[off + 32:off + 40])[0]
        if size <= 68:
            break
        out.append((start, data[off:off + size]))
        off += size
    return out


def live_header_offsets(data):
    """Offsets of the chunk headers of a live-stream capture: the stream's
    rewritten headers (size 68, state 1), not the headers embedded in
    chunk-header checkpoints."""
    out = []
    i = data.find(b"FLR\0\x00\x02")
    while i >= 0:
        if (i + 68 <= len(data) and struct.unpack(">q", data[i + 8:i + 16])[0] == 68
                and data[i + 64] != 0):
            out.append(i)
        i = data.find(b"FLR\0\x00\x02", i + 1)
    return out


def live_chunk_starts(path):
    """Chunk start times (epoch ns) of the headers in a live-stream capture."""
    data = open(path, "rb").read()
    return [struct.unpack(">q", data[i + 32:i + 40])[0] for i in live_header_offsets(data)]


def run(args, timeout, **kw):
    return subprocess.run(args, capture_output=True, timeout=timeout, **kw)


def usage_error(jfrstream, args, want, env=None, secrets=()):
    """Run `jfrstream ARGS` (ENV added to the environment): None when it exits
    2 with WANT in its output and none of SECRETS, else what went wrong."""
    e = dict(os.environ)
    e.update(env or {})
    r = subprocess.run([jfrstream] + list(args), capture_output=True, text=True, timeout=30,
                       env=e, stdin=subprocess.DEVNULL)
    text = r.stdout + r.stderr
    if r.returncode != 2 or want not in text:
        return "%s: exit %d, want %r: %s" % (" ".join(args), r.returncode, want, text[:400])
    if any(s in text for s in secrets):
        return "%s: a secret printed: %s" % (" ".join(args), text[:400])
    return None


# ------------------------------------------------------------- listener

def send(port, data, close=True):
    """Connect to 127.0.0.1:PORT and send DATA; with close, half-close and wait
    for the peer to close (returns None), else return the open socket."""
    s = connect(port)
    s.sendall(data)
    if close:
        s.shutdown(socket.SHUT_WR)
        try:
            s.recv(1)
        except OSError:
            pass
        s.close()
        return None
    return s


def start_listener(jfrstream, args, keep_stdout=True):
    """Start `jfrstream listen 127.0.0.1:0 ARGS`; returns (proc, out, err, port)."""
    p = start([jfrstream, "listen", "127.0.0.1:0"] + list(args))
    out = Lines(p.stdout, keep=keep_stdout)
    err = Lines(p.stderr)
    m = err.wait_for(r"listening on 127\.0\.0\.1:(\d+)", 10)
    return p, out, err, (int(m.group(1)) if m else None)


def connect(port, timeout=10):
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return s


class Tee:
    """A loopback proxy for one connection: accepts it on self.port, forwards it to
    127.0.0.1:`port` and keeps a copy of the bytes in `path` (the listener's
    acknowledgements go back to the sender). t_first and t_end: time.time_ns() of the
    first byte and of the sender's end (as Lines stamps lines), None until then."""

    def __init__(self, port, path):
        self.srv = socket.socket()
        self.srv.bind(("127.0.0.1", 0))
        self.srv.listen(1)
        self.srv.settimeout(120)
        self.port = self.srv.getsockname()[1]
        self.target = port
        self.path = path
        self.bytes = 0
        self.error = None
        self.t_first = self.t_end = None
        self.t = threading.Thread(target=self._run, daemon=True)
        self.t.start()

    def _run(self):
        try:
            src, _ = self.srv.accept()
            src.settimeout(120)
            dst = connect(self.target)
            threading.Thread(target=self._back, args=(dst, src), daemon=True).start()
            with open(self.path, "wb") as f:
                while True:
                    b = src.recv(1 << 16)
                    if not b:
                        break
                    if self.t_first is None:
                        self.t_first = time.time_ns()
                    dst.sendall(b)
                    f.write(b)
                    self.bytes += len(b)
            self.t_end = time.time_ns()
            dst.shutdown(socket.SHUT_WR)
            dst.close()
            src.close()
        except OSError as e:
            self.error = str(e)
        finally:
            self.srv.close()

    @staticmethod
    def _back(dst, src):
        """The listener's acknowledgements, back to the sender."""
        try:
            while True:
                b = dst.recv(4096)
                if not b:
                    break
                src.sendall(b)
        except OSError:
            pass


# ------------------------------------------------------------- capture

def ensure_capture(workdir, java, name="capture.bin", seconds=5):
    """A live-stream capture of SeqWorkload by the pump (--out), cached in
    workdir (made once, under a lock). Returns (path, last seq) or (None, why)."""
    os.makedirs(workdir, exist_ok=True)
    path = os.path.join(workdir, name)
    meta = path + ".last"
    with open(os.path.join(workdir, name + ".lock"), "w") as lk:
        fcntl.flock(lk, fcntl.LOCK_EX)
        if os.path.exists(path) and os.path.exists(meta):
            return path, int(open(meta).read())
        log("making the live capture %s (SeqWorkload + jfr-pump --out, %d s)" % (path, seconds))
        tmp = path + ".tmp"
        w, wout, werr = seq_workload(java, ["--rate", "1000", "--duration", str(seconds - 2),
                                            "--wait-enabled", "60", "--rotate", "1.3",
                                            "--linger", "120"])
        try:
            pid = workload_pid(wout)
            if not pid:
                return None, "SeqWorkload did not start: " + werr.text()[-500:]
            pp, pout, perr = pump(java, ["--pid", str(pid), "--duration", "%ds" % seconds,
                                         "--settings", "profile", "--out", tmp])
            rc = wait(pp, 90, "jfr-pump")
            perr.join()
            if rc != 0:
                return None, "jfr-pump exit %s: %s" % (rc, perr.text()[-800:])
            m = wout.wait_for(r"^last=(-?\d+)", 30)
            if not m:
                return None, "SeqWorkload did not finish: " + werr.text()[-500:]
            last = int(m.group(1))
        finally:
            if w.poll() is None:
                w.send_signal(signal.SIGTERM)
                wait(w, 30, "SeqWorkload")
        os.rename(tmp, path)
        with open(meta, "w") as f:
            f.write(str(last))
        return path, last


# ------------------------------------------------------------- acks, TLS

HELLO = b"JFRS/1 ack\n"


class AckListener:
    """A fake listener speaking the acknowledgement protocol (tools/jfrstream-agent/README.md):
    accepts connections one after another on 127.0.0.1:PORT (0: any free port); keeps, per
    connection, the hello line (b"" when the bytes start with the JFR data) and the bytes
    after it. With ack, answers "ACK N" (N: the bytes received) at most every 50 ms and when
    the input ends or pauses; without, never writes (an older listener or nc -l). cut_after=S: the first
    connection is reset (SO_LINGER 0) at the first read S seconds after its first byte, before
    that read is acknowledged (so that unacknowledged bytes are lost with it). silent_after=S:
    the first connection goes silent instead (a network cut without a reset): no more reads,
    acks or keepalives, the socket left open until close(). With ack, the last ack is written
    again after 1 s without one (the listener's keepalive, every 5 s there). tls: an
    ssl.SSLContext (server side) that wraps each connection (see tls_server_context)."""

    def __init__(self, ack=True, cut_after=None, port=0, tls=None, silent_after=None):
        self.ack = ack
        self.silent_after = silent_after
        self.held = []           # the silent connections' sockets
        self.tls = tls
        self.tls_errors = []
        self.cut_after = cut_after
        self.conns = []          # [{"hello": bytes, "data": bytearray, "acks": [N...], "cut": bool}]
        self.srv = socket.socket()
        self.srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.srv.bind(("127.0.0.1", port))
        self.srv.listen(4)
        self.port = self.srv.getsockname()[1]
        self.lock = threading.Lock()
        self.closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while not self.closed:
            try:
                s, _ = self.srv.accept()
            except OSError:
                return
            if self.tls:
                try:
                    s.settimeout(10)
                    s = self.tls.wrap_socket(s, server_side=True)
                except OSError as e:
                    self.tls_errors.append(str(e))
                    s.close()
                    continue
            c = {"hello": None, "data": bytearray(), "acks": [], "cut": False, "eof": False,
                 "silent": False, "ack_t": time.monotonic()}
            with self.lock:
                self.conns.append(c)
            first = len(self.conns) == 1
            self._serve(s, c, self.cut_after if first else None, self.silent_after if first else None)

    def _serve(self, s, c, cut, silent=None):
        s.settimeout(0.05)       # idle 50 ms: acknowledge what is pending
        head = bytearray()
        last = 0.0
        t0 = None
        idle = time.monotonic()
        try:
            while True:
                try:
                    b = s.recv(1 << 16)
                except (socket.timeout, TimeoutError):
                    if time.monotonic() - idle > 60:
                        break
                    if self.ack and c["hello"] is not None:
                        self._ack(s, c)
                    continue
                idle = time.monotonic()
                if not b:
                    c["eof"] = True
                    break
                if c["hello"] is None:
                    head += b
                    if head[:1] == b"J":
                        if b"\n" not in head:
                            continue
                        i = head.index(b"\n") + 1
                        c["hello"], b = bytes(head[:i]), bytes(head[i:])
                    else:
                        c["hello"], b = b"", bytes(head)
                c["data"] += b
                t0 = t0 or time.monotonic()
                if silent is not None and time.monotonic() - t0 >= silent:
                    c["cut"] = c["silent"] = True
                    self.held.append(s)
                    return           # open, never read again: the next connection is served
                if cut is not None and time.monotonic() - t0 >= cut:
                    c["cut"] = True
                    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                    break
                if self.ack and time.monotonic() - last >= 0.05:
                    last = time.monotonic()
                    self._ack(s, c)
            if self.ack and c["eof"]:
                self._ack(s, c)
        except OSError:
            pass
        finally:
            if not c["silent"]:
                s.close()

    def _ack(self, s, c):
        n = len(c["data"])
        if not c["acks"] or n > c["acks"][-1]:
            s.sendall(b"ACK %d\n" % n)
            c["acks"].append(n)
            c["ack_t"] = time.monotonic()
        elif time.monotonic() - c["ack_t"] >= 1.0:  # keepalive: the same N again
            s.sendall(b"ACK %d\n" % c["acks"][-1])
            c["ack_t"] = time.monotonic()

    def wait_conns(self, n, timeout):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            with self.lock:
                if len(self.conns) >= n:
                    return True
            time.sleep(0.05)
        return False

    def close(self):
        self.closed = True
        self.srv.close()
        for s in self.held:
            s.close()


def tls_server_context(certs, client_ca=True):
    """A server-side ssl.SSLContext from make_certs' files: the server certificate, and with
    client_ca a client certificate signed by the CA required (mutual TLS)."""
    import ssl
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    ctx.load_cert_chain(certs["server.pem"], certs["server.key"])
    if client_ca:
        ctx.verify_mode = ssl.CERT_REQUIRED
        ctx.load_verify_locations(certs["ca.pem"])
    return ctx


def make_certs(d):
    """The agent tests' certificates (test/certs.py, made with the openssl command) in
    directory d: a CA (ca.pem, ca.key), a server certificate for SAN IP:127.0.0.1 only
    (server.pem, server.key), an RSA client certificate (client.pem, client.key: PKCS#8),
    the same client key as PKCS#1 (client-rsa.key), and another CA (other-ca.pem) that
    signed nothing here. Returns a dict name -> path, or None when openssl is missing."""
    sys.path.insert(0, os.path.dirname(HERE))
    try:
        import certs
    finally:
        sys.path.pop(0)
    if not certs.available()[0]:
        return None
    ca, other = certs.CA(d, "ca"), certs.CA(d, "other-ca")
    srv = ca.issue("server", san="IP:127.0.0.1")
    cli = ca.issue("client", client=True, rsa=True)
    return {"ca.pem": ca.cert, "ca.key": ca.key, "server.pem": srv[0], "server.key": srv[1],
            "client.pem": cli[0], "client.key": cli[1],
            "client-rsa.key": certs.traditional(cli[1], os.path.join(d, "client-rsa.key")),
            "other-ca.pem": other.cert, "other-ca.key": other.key}


_acks_known = {}


def listener_acks(jfrstream):
    """True when `jfrstream listen` takes the hello line of the acknowledgement protocol
    (probed once: a listener without it reads the hello as a bad chunk magic). The tests'
    senders use acks with such a listener, else ack=off / --no-ack."""
    if jfrstream not in _acks_known:
        p, _, err, port = start_listener(jfrstream, [], keep_stdout=False)
        ok = False
        if port:
            send(port, HELLO)
            err.wait_for(r": closed", 10)
            ok = "bad magic" not in err.text()
        p.terminate()
        wait(p, 10, "jfrstream listen")
        _acks_known[jfrstream] = ok
    return _acks_known[jfrstream]
