"""kafkalib.py — helpers of the Kafka sink tests (test/sink/sink_kafka_*.py) and
of bench/sink-kafka.py: the mock cluster (test/sink/mock_kafka), kcat as the
independent consumer, the listener's --kafka flag and its final counts.

Python 3 standard library only; processes are started through
test/live/livelib.py (killed by their own pid when a test ends).
"""
import os
import re
import shutil
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "live"))
import livelib as L  # noqa: E402


def missing(jfrstream, mock, need_java=False):
    """Why the Kafka tests cannot run here (-> SKIP), or None."""
    if not mock or not os.access(mock, os.X_OK):
        return "mock_kafka not built (librdkafka with rdkafka_mock.h missing: -Dkafka)"
    if not shutil.which("kcat"):
        return "no kcat (Debian package kcat): the independent consumer"
    if need_java and not L.java_bin():
        return "no java (JDK 17)"
    try:
        r = subprocess.run([jfrstream, "listen", "--help"], capture_output=True, text=True,
                           timeout=30)
    except OSError as e:
        return "cannot run %s: %s" % (jfrstream, e)
    if "--kafka" not in r.stdout + r.stderr:
        return "listen --kafka not built"
    return None


class Mock:
    """test/sink/mock_kafka BROKERS TOPIC...: librdkafka's mock cluster in a
    process of its own; its first stdout line is the bootstrap list; stdin
    takes "down ID" / "up ID"; EOF or SIGTERM ends it."""

    def __init__(self, path, brokers=3, topics=()):
        self.p = L.start([path, str(brokers)] + list(topics), stdin=subprocess.PIPE)
        self.out = L.Lines(self.p.stdout)
        self.err = L.Lines(self.p.stderr)
        m = self.out.wait_for(r"^(\S+:\d+.*)$", 20)
        self.bootstrap = m.group(1).strip() if m else None

    def command(self, line):
        L.log("  mock_kafka <- %s" % line)
        self.p.stdin.write((line + "\n").encode())
        self.p.stdin.flush()

    def stop(self):
        if self.p.poll() is None:
            try:
                self.p.stdin.close()
            except OSError:
                pass
            if L.wait(self.p, 20, "mock_kafka") is None:
                return
        self.out.join()
        self.err.join()


def metadata(bootstrap, topic, timeout=20):
    """{partition: leader broker id} from `kcat -L`."""
    r = subprocess.run(["kcat", "-L", "-b", bootstrap, "-t", topic], capture_output=True,
                       text=True, timeout=timeout)
    out = {}
    for m in re.finditer(r"partition (\d+), leader (-?\d+)", r.stdout):
        out[int(m.group(1))] = int(m.group(2))
    return out


class Message:
    __slots__ = ("key", "partition", "offset", "value", "headers")

    def __init__(self, key, partition, offset, value, headers=None):
        self.key, self.partition, self.offset, self.value = key, partition, offset, value
        self.headers = headers


def consume(bootstrap, topic, timeout=120, count=None, headers=False):
    """Everything in TOPIC from the beginning, read by kcat (-e: stop at the
    end of every partition), or the first COUNT messages (waiting for them,
    up to timeout): [Message]. With headers, each Message's headers as
    {name: value} (kcat's %h: "name=value,...")."""
    fmt = "%k\\t%p\\t%o\\t%h\\t%S\\t%s\\n" if headers else "%k\\t%p\\t%o\\t%S\\t%s\\n"
    args = ["kcat", "-C", "-q", "-b", bootstrap, "-t", topic, "-o", "beginning", "-f", fmt]
    if count:
        args += ["-c", str(count)]  # wait for them (bounded by timeout)
    else:
        args += ["-e"]
    r = subprocess.run(args, capture_output=True, timeout=timeout)
    if r.returncode != 0:
        raise RuntimeError("kcat -C exit %d: %s" % (r.returncode, r.stderr.decode()[-500:]))
    msgs = []
    data = r.stdout
    pos = 0
    # "%S" (the value's size) makes the split exact even if a value held a
    # newline or a tab
    while pos < len(data):
        parts = []
        for _ in range(5 if headers else 4):
            t = data.index(b"\t", pos)
            parts.append(data[pos:t])
            pos = t + 1
        hdrs = None
        if headers:
            h = parts.pop(3).decode("utf-8", "replace")
            hdrs = dict(kv.split("=", 1) for kv in h.split(",") if "=" in kv)
        size = int(parts[3])
        value = data[pos:pos + size]
        pos += size
        if data[pos:pos + 1] != b"\n":
            raise RuntimeError("kcat output out of step at byte %d" % pos)
        pos += 1
        msgs.append(Message(parts[0].decode("utf-8", "replace"), int(parts[1]), int(parts[2]),
                            value, hdrs))
    return msgs


def summary_events(jfrstream, fixture):
    """(events in FIXTURE by `jfrstream summary`, {type: count})."""
    out = subprocess.run([jfrstream, "summary", fixture], capture_output=True, text=True,
                         timeout=60, check=True).stdout
    total, rows = 0, False
    per = {}
    for line in out.splitlines():
        if line.startswith("====="):
            rows = True
            continue
        f = line.split()
        if rows and len(f) == 3 and f[1].isdigit():
            if f[0] not in ("jdk.Metadata", "jdk.Checkpoint"):
                total += int(f[1])
                per[f[0]] = int(f[1])
    return total, per


COUNT_RX = re.compile(r"(\d+) (?:events? )?([a-z][a-z_-]*)")


def final_counts(stderr_text):
    """The listener's Kafka counts from its stderr at exit: {word: number},
    from its total line ("jfrstream: kafka: N events produced, N delivered,
    N failed, N undelivered"; a line naming a peer is one source's). The
    last such line wins; without a total line, the last line about kafka."""
    total = None
    any_line = None
    for line in stderr_text.splitlines():
        low = line.lower()
        i = low.find("kafka:")
        if i < 0:
            continue
        any_line = low[i + 6:]
        if low.startswith("jfrstream: kafka:"):
            total = low[i + 6:]
    text = total if total is not None else any_line
    counts = {}
    if text:
        for m in COUNT_RX.finditer(text):
            counts[m.group(2)] = int(m.group(1))
    return counts


class Peak:
    """Sample /proc/PID/status (VmHWM, VmRSS) of a process every 100 ms."""

    def __init__(self, pid):
        self.pid = pid
        self.hwm_kb = 0
        self.rss_max_kb = 0
        self.stop_ev = threading.Event()
        self.t = threading.Thread(target=self._run, daemon=True)
        self.t.start()

    def sample(self):
        try:
            with open("/proc/%d/status" % self.pid) as f:
                for line in f:
                    if line.startswith("VmHWM:"):
                        self.hwm_kb = max(self.hwm_kb, int(line.split()[1]))
                    elif line.startswith("VmRSS:"):
                        self.rss_max_kb = max(self.rss_max_kb, int(line.split()[1]))
        except (OSError, ValueError):
            pass

    def _run(self):
        while not self.stop_ev.wait(0.1):
            self.sample()

    def stop(self):
        self.sample()
        self.stop_ev.set()
        self.t.join(2)


class RecvQ:
    """Sample, every 20 ms, the bytes waiting in the kernel's receive queue
    of the established TCP connections accepted on local PORT (/proc/net/tcp):
    data stays there while the listener has paused the connection."""

    def __init__(self, port):
        self.port = port
        self.max = 0
        self.nonzero = 0
        self.samples = 0
        self.stop_ev = threading.Event()
        self.t = threading.Thread(target=self._run, daemon=True)
        self.t.start()

    def sample(self):
        total = 0
        for path in ("/proc/net/tcp", "/proc/net/tcp6"):
            try:
                with open(path) as f:
                    next(f)
                    for line in f:
                        fl = line.split()
                        if len(fl) < 5 or fl[3] != "01":
                            continue
                        if int(fl[1].rsplit(":", 1)[1], 16) != self.port:
                            continue
                        total += int(fl[4].split(":")[1], 16)
            except (OSError, ValueError, StopIteration):
                pass
        self.samples += 1
        if total:
            self.nonzero += 1
        self.max = max(self.max, total)

    def _run(self):
        while not self.stop_ev.wait(0.02):
            self.sample()

    def stop(self):
        self.stop_ev.set()
        self.t.join(2)


def cpu_seconds(pid):
    """utime + stime of a process (/proc/PID/stat), in seconds."""
    with open("/proc/%d/stat" % pid) as f:
        s = f.read()
    fields = s[s.rindex(")") + 2:].split()
    tick = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / tick


def sanitized(pid):
    """True when the process runs with ASan (its memory figures are not the
    program's own)."""
    try:
        with open("/proc/%d/maps" % pid) as f:
            return any("libasan" in l or "libclang_rt.asan" in l for l in f)
    except OSError:
        return False


def wait_quiet(lines, pattern, timeout):
    m = lines.wait_for(pattern, timeout)
    return m is not None


def now():
    return time.monotonic()
