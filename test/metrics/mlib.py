"""mlib.py — helpers of the `--metrics` tests (test/metrics/*.py).

Python 3 standard library only. Builds on test/live/livelib.py (processes,
line readers, the listener); adds: a listener with --metrics (both ports from
its stderr; HTTPS and basic auth), HTTP GETs (an ssl context and credentials
optional) and raw requests, the real Prometheus server (a temporary config
and storage, its query API; a job's scheme, tls_config and basic_auth),
promtool, and the reference model: the
values the spec (/work/golden/metrics-spec.md, README) derives from the events
of one source, computed here from the listener's own --json lines.
"""
import json
import math
import base64
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "live"))
import livelib as L  # noqa: E402,F401
sys.path.pop(0)
sys.path.insert(0, HERE)
import promtext as P  # noqa: E402,F401
sys.path.pop(0)

ROOT = L.ROOT
DATA = os.path.join(ROOT, "test", "data")
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
GC_BUCKETS = ["0.0005", "0.001", "0.0025", "0.005", "0.01", "0.025", "0.05", "0.1", "0.25",
              "0.5", "1", "2.5", "5", "10", "+Inf"]
METRICS_LINE = r"metrics on https?://127\.0\.0\.1:(\d+)/metrics"


# ------------------------------------------------------------------ listener

_watched = []   # stderr Lines of our jfrstream processes
SANITIZER = re.compile(r"ERROR: AddressSanitizer|ERROR: LeakSanitizer|runtime error:|"
                       r"==\d+==ERROR|Invalid read|Invalid write|definitely lost: [1-9]")


def watch(lines):
    """Keep LINES (a jfrstream's stderr) for sanitizer_reports()."""
    _watched.append(lines)
    return lines


def sanitizer_reports(clear=True):
    """The sanitizer or valgrind reports on the watched stderr so far."""
    out = []
    for lines in _watched:
        text = lines.text()
        if SANITIZER.search(text):
            m = SANITIZER.search(text)
            out.append(text[max(0, m.start() - 200):m.start() + 1500])
    if clear:
        del _watched[:]
    return out


# the Debian package that gives a build each optional library: a SKIP names it
DEBIAN_DEV = {"libmicrohttpd": "libmicrohttpd-dev", "libcurl": "libcurl4-openssl-dev",
              "librdkafka": "librdkafka-dev"}


def built_without(text):
    """The reason to SKIP when jfrstream's stderr TEXT says an option needs a
    library this build lacks (its usage error), naming the library and the
    Debian package; None when TEXT says no such thing."""
    for line in text.splitlines():
        m = re.search(r"built without (lib[a-z]+)", line)
        if m:
            lib = m.group(1)
            return ("jfrstream was built without %s (Debian: apt-get install %s, then "
                    "meson setup --reconfigure build): %s"
                    % (lib, DEBIAN_DEV.get(lib, lib + "-dev"), line.strip()))
    return None


def has_metrics(jfrstream):
    """(True, "") when this build's `listen --metrics` serves; else (False,
    why): no --metrics in its --help, or built without libmicrohttpd."""
    try:
        r = subprocess.run([jfrstream, "listen", "--help"], capture_output=True, text=True,
                           timeout=30)
    except (OSError, subprocess.TimeoutExpired) as e:
        return False, "jfrstream listen --help: %s" % e
    if "--metrics" not in (r.stdout + r.stderr):
        return False, "this jfrstream has no listen --metrics"
    p = subprocess.Popen([jfrstream, "listen", "127.0.0.1:0", "--metrics", "127.0.0.1:0"],
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE)
    err = L.Lines(p.stderr)
    try:
        if err.wait_for(METRICS_LINE, 15):
            return True, ""
        text = err.text()
        why = built_without(text)
        if why:
            return False, why
        last = [x for x in text.splitlines() if x.strip()][-1:] or ["(nothing on stderr)"]
        return False, "listen --metrics does not serve: %s" % last[0].strip()
    finally:
        if p.poll() is None:
            p.kill()
        p.wait(timeout=10)


class Listener:
    """`jfrstream listen 127.0.0.1:0 --metrics 127.0.0.1:0 ARGS`: .port (JFR),
    .mport (metrics), .url, .out/.err (Lines). With --metrics-tls-cert in
    ARGS, `context` (an ssl.SSLContext trusting its CA) and `auth` ((user,
    password) for --metrics-basic-auth) are what scrape() and expo() use."""

    def __init__(self, jfrstream, args=(), keep_stdout=True, metrics="127.0.0.1:0",
                 context=None, auth=None):
        self.context, self.auth = context, auth
        self.p = L.start([jfrstream, "listen", "127.0.0.1:0", "--metrics", metrics] + list(args))
        self.out = L.Lines(self.p.stdout, keep=keep_stdout)
        self.err = watch(L.Lines(self.p.stderr))
        m = self.err.wait_for(r"listening on 127\.0\.0\.1:(\d+)", 15)
        self.port = int(m.group(1)) if m else None
        m = self.err.wait_for(METRICS_LINE, 15)
        self.mport = int(m.group(1)) if m else None
        scheme = "https" if "--metrics-tls-cert" in args else "http"
        self.url = "%s://127.0.0.1:%d/metrics" % (scheme, self.mport) if self.mport else None

    def ok(self):
        return self.port is not None and self.mport is not None

    def scrape(self, timeout=15):
        """(status, headers, body bytes, seconds) of GET /metrics."""
        return http("GET", self.url, timeout=timeout, context=self.context, auth=self.auth)

    def expo(self, timeout=15):
        """GET /metrics parsed (promtext.Exposition); raises on a status other
        than 200 or a format error."""
        st, hd, body, _ = self.scrape(timeout)
        if st != 200:
            raise RuntimeError("GET /metrics: status %s: %r" % (st, body[:300]))
        return P.parse(body)

    def wait_expo(self, cond, timeout, what=""):
        """Scrape until cond(expo) is true; returns the last Exposition (or
        None after TIMEOUT with cond never true)."""
        end = time.monotonic() + timeout
        last = None
        while True:
            try:
                last = self.expo()
                if cond(last):
                    return last
            except (OSError, RuntimeError, P.FormatError) as e:
                L.log("  scrape (%s): %s" % (what, e))
            if time.monotonic() > end:
                return None
            time.sleep(0.1)

    def stop(self, timeout=30):
        if self.p.poll() is None:
            self.p.send_signal(signal.SIGTERM)
        rc = L.wait(self.p, timeout, "listen")
        self.out.join()
        self.err.join()
        if rc is None:   # a hang at the stop: what listen said is the clue
            L.log("  listen's last stderr lines: %r" % [l for _, l in self.err.lines][-8:])
        return rc


# ------------------------------------------------------------------ HTTP

def basic_auth(user, password):
    """The Authorization header's value of basic auth."""
    return "Basic " + base64.b64encode(("%s:%s" % (user, password)).encode()).decode()


def http(method, url, timeout=15, data=None, headers=None, context=None, auth=None):
    """(status, {header lower: value}, body, seconds); HTTP errors are returned,
    not raised. context: the ssl.SSLContext of an https URL; auth: (user,
    password) sent as basic auth."""
    headers = dict(headers or {})
    if auth:
        headers["Authorization"] = basic_auth(*auth)
    req = urllib.request.Request(url, method=method, data=data, headers=headers)
    t0 = time.monotonic()
    try:
        with urllib.request.urlopen(req, timeout=timeout, context=context) as r:
            body = r.read()
            return r.status, {k.lower(): v for k, v in r.headers.items()}, body, \
                time.monotonic() - t0
    except urllib.error.HTTPError as e:
        body = e.read()
        return e.code, {k.lower(): v for k, v in e.headers.items()}, body, time.monotonic() - t0


def raw_request(port, data, timeout=10):
    """Send raw bytes to 127.0.0.1:PORT and read until the server closes or
    TIMEOUT. Returns (status or None, bytes read, how it ended: "closed",
    "reset", "timeout", or "answered": a whole response read on a connection
    the server keeps open)."""
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    got = b""
    how = "closed"
    try:
        try:
            s.sendall(data)
        except (BrokenPipeError, ConnectionResetError):
            how = "reset"
        end = time.monotonic() + timeout
        while how == "closed":
            s.settimeout(max(0.05, end - time.monotonic()))
            try:
                b = s.recv(65536)
            except socket.timeout:
                how = "timeout"
                break
            except ConnectionResetError:
                how = "reset"
                break
            if not b:
                break
            got += b
            # a full response to a request without a body: stop at its end
            # if the server keeps the connection open
            if b"\r\n\r\n" in got:
                head = got.split(b"\r\n\r\n", 1)[0]
                m = re.search(rb"(?im)^content-length:\s*(\d+)", head)
                if m and len(got) >= len(head) + 4 + int(m.group(1)):
                    how = "answered"
                    break
                if re.search(rb"(?im)^transfer-encoding:\s*chunked", head) and \
                        got.endswith(b"\r\n0\r\n\r\n"):
                    how = "answered"
                    break
    finally:
        s.close()
    m = re.match(rb"HTTP/1\.[01] (\d{3})", got)
    return (int(m.group(1)) if m else None), got, how


free_port = L.free_port  # M.free_port for the metrics tests


# ------------------------------------------------------------------ Prometheus

def _job_yaml(job, interval, targets, scheme="http", ca_file=None, basic_auth=None):
    """One scrape job; basic_auth: (username, password_file)."""
    y = ("  - job_name: %s\n    scrape_interval: %s\n    scheme: %s\n"
         % (job, interval, scheme))
    if ca_file:
        y += "    tls_config:\n      ca_file: %s\n" % ca_file
    if basic_auth:
        y += ("    basic_auth:\n      username: %s\n      password_file: %s\n"
              % basic_auth)
    return y + "    static_configs:\n      - targets: [%s]\n" % ", ".join(
        '"%s"' % t for t in targets)


class Prometheus:
    """The real Prometheus server on 127.0.0.1:FREE with one scrape job
    ("jfrstream", every INTERVAL) on TARGETS, storage in a temporary folder.
    scheme, ca_file (tls_config) and basic_auth ((username, password_file))
    are the job's; extra_jobs: more jobs, dicts of _job_yaml's arguments."""

    def __init__(self, targets, interval="1s", job="jfrstream", binary="prometheus",
                 scheme="http", ca_file=None, basic_auth=None, extra_jobs=()):
        self.dir = tempfile.mkdtemp(prefix="jfrstream-prom-")
        self.job = job
        cfg = os.path.join(self.dir, "prometheus.yml")
        with open(cfg, "w") as f:
            f.write("global:\n  scrape_interval: %s\n  scrape_timeout: %s\n"
                    "  evaluation_interval: 15s\n"
                    "scrape_configs:\n" % (interval, interval)
                    + _job_yaml(job, interval, targets, scheme, ca_file, basic_auth)
                    + "".join(_job_yaml(interval=interval, **j) for j in extra_jobs))
        self.port = free_port()
        self.base = "http://127.0.0.1:%d" % self.port
        self.p = L.start([binary, "--config.file=" + cfg,
                          "--storage.tsdb.path=" + os.path.join(self.dir, "data"),
                          "--web.listen-address=127.0.0.1:%d" % self.port,
                          "--storage.tsdb.retention.time=1d", "--log.level=warn"],
                         stdout=subprocess.DEVNULL)
        self.err = L.Lines(self.p.stderr)

    def wait_ready(self, timeout=30):
        end = time.monotonic() + timeout
        while time.monotonic() < end and self.p.poll() is None:
            try:
                st, _, _, _ = http("GET", self.base + "/-/ready", timeout=2)
                if st == 200:
                    return True
            except OSError:
                pass
            time.sleep(0.2)
        return False

    def api(self, path, **params):
        url = self.base + path + ("?" + urllib.parse.urlencode(params) if params else "")
        st, _, body, _ = http("GET", url, timeout=15)
        d = json.loads(body)
        if st != 200 or d.get("status") != "success":
            raise RuntimeError("%s: %s %s" % (url, st, body[:300]))
        return d["data"]

    def query(self, expr):
        """Instant query: [(labels, float value)] (vector results)."""
        d = self.api("/api/v1/query", query=expr)
        if d["resultType"] == "scalar":
            return [({}, float(d["result"][1]))]
        return [(r["metric"], float(r["value"][1])) for r in d["result"]]

    def query_one(self, expr):
        r = self.query(expr)
        if len(r) != 1:
            raise RuntimeError("%s: %d results: %s" % (expr, len(r), r[:4]))
        return r[0][1]

    def scrapes(self):
        """How many scrapes of the job Prometheus has stored (samples of up)."""
        r = self.query('count_over_time(up{job="%s"}[1h])' % self.job)
        return int(r[0][1]) if r else 0

    def targets(self):
        return self.api("/api/v1/targets")["activeTargets"]

    def wait_scrapes(self, more, timeout):
        """Wait until MORE scrapes started after now have been stored (and
        were healthy). Returns the number of scrapes seen, or None."""
        time.sleep(0.05)
        n0 = self.scrapes()
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            n = self.scrapes()
            if n >= n0 + more:
                return n - n0
            time.sleep(0.2)
        return None

    def stop(self):
        if self.p.poll() is None:
            self.p.send_signal(signal.SIGTERM)
            L.wait(self.p, 20, "prometheus")
        shutil.rmtree(self.dir, ignore_errors=True)


def promtool_check(body, promtool="promtool"):
    """`promtool check metrics` on BODY: (exit status, its output)."""
    r = subprocess.run([promtool, "check", "metrics"], input=body, capture_output=True,
                       timeout=60)
    return r.returncode, (r.stdout + r.stderr).decode("utf-8", "replace").strip()


# ------------------------------------------------------------------ --json values

ISO = re.compile(r"^(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)(?:\.(\d{1,9}))?(Z|[+-]\d\d:\d\d)$")
DURATION = re.compile(r"^(-)?PT(?:(\d+)H)?(?:(\d+)M)?(?:(\d+)(?:\.(\d{1,9}))?S)?$")


def iso_ns(text):
    """An ISO-8601 time as print --json writes it -> epoch nanoseconds (exact)."""
    import calendar
    m = ISO.match(text)
    if not m:
        raise ValueError("not a time: %r" % text)
    y, mo, d, h, mi, s = (int(m.group(i)) for i in range(1, 7))
    frac = int((m.group(7) or "").ljust(9, "0"))
    secs = calendar.timegm((y, mo, d, h, mi, s, 0, 0, 0))
    tz = m.group(8)
    if tz != "Z":
        sign = 1 if tz[0] == "+" else -1
        secs -= sign * (int(tz[1:3]) * 3600 + int(tz[4:6]) * 60)
    return secs * 1_000_000_000 + frac


def duration_ns(text):
    """A Duration as print --json writes it (java.time.Duration.toString:
    PT0.014449987S, PT1M2.5S, PT0S, -PT0.5S) -> nanoseconds (exact)."""
    m = DURATION.match(text)
    if not m or text in ("PT", "-PT"):
        raise ValueError("not a duration: %r" % text)
    h = int(m.group(2) or 0)
    mi = int(m.group(3) or 0)
    s = int(m.group(4) or 0)
    frac = int((m.group(5) or "").ljust(9, "0"))
    ns = ((h * 60 + mi) * 60 + s) * 1_000_000_000 + frac
    return -ns if m.group(1) else ns


def read_json_lines(lines):
    """The listener's --json lines -> [(type, values)] in output order."""
    out = []
    for line in lines:
        if not line.strip():
            continue
        ev = json.loads(line)
        out.append((ev["type"], ev["values"]))
    return out


class Model:
    """What the spec derives from one source's events: expected values, keyed
    like the exposition (name, frozenset of the extra labels)."""

    def __init__(self, events):
        self.events = events
        self.counts = {}
        self.gc = {}          # gc name -> [count, sum seconds, {le: cumulative}]
        self.gauges = {}      # (name, labels tuple) -> value
        self.counters = {}
        last = {}             # type (or type+"/after") -> (startTime ns, index, values)
        alloc = {}
        lock = [0, 0]
        safep = [0, 0]
        vmops = {}
        for i, (t, v) in enumerate(events):
            self.counts[t] = self.counts.get(t, 0) + 1
            st = iso_ns(v["startTime"]) if isinstance(v.get("startTime"), str) else 0
            if t in ("jdk.CPULoad", "jdk.GCHeapSummary", "jdk.MetaspaceSummary",
                     "jdk.JavaThreadStatistics", "jdk.ClassLoadingStatistics",
                     "jdk.ExceptionStatistics"):
                for key in (t, t + "/after") if (t == "jdk.GCHeapSummary"
                                                 and v.get("when") == "After GC") else (t,):
                    if key not in last or st >= last[key][0]:
                        last[key] = (st, i, v)
            if t == "jdk.GarbageCollection":
                d = duration_ns(v["duration"]) / 1e9
                g = self.gc.setdefault(v["name"], [0, 0.0, {b: 0 for b in GC_BUCKETS}])
                g[0] += 1
                g[1] += d
                for b in GC_BUCKETS:
                    if b == "+Inf" or d <= float(b):
                        g[2][b] += 1
            elif t == "jdk.ObjectAllocationSample":
                alloc[t] = alloc.get(t, 0) + v["weight"]
            elif t == "jdk.ObjectAllocationInNewTLAB":
                alloc[t] = alloc.get(t, 0) + v["tlabSize"]
            elif t == "jdk.ObjectAllocationOutsideTLAB":
                alloc[t] = alloc.get(t, 0) + v["allocationSize"]
            elif t == "jdk.JavaMonitorEnter":
                lock[0] += 1
                lock[1] += duration_ns(v["duration"])
            elif t == "jdk.SafepointBegin":
                safep[0] += 1
                safep[1] += duration_ns(v["duration"])
            elif t == "jdk.ExecuteVMOperation":
                k = (("jvm_vm_operation", v["operation"]),
                     ("jvm_safepoint", "true" if v["safepoint"] else "false"))
                c = vmops.setdefault(k, [0, 0])
                c[0] += 1
                c[1] += duration_ns(v["duration"])
        self.last = {k: x[2] for k, x in last.items()}
        g = self.gauges
        c = self.counters
        if "jdk.CPULoad" in self.last:
            v = self.last["jdk.CPULoad"]
            g[("jvm_cpu_recent_utilization_ratio", ())] = v["jvmUser"] + v["jvmSystem"]
            g[("jvm_system_cpu_utilization_ratio", ())] = v["machineTotal"]
        heap = (("jvm_memory_type", "heap"),)
        if "jdk.GCHeapSummary" in self.last:
            v = self.last["jdk.GCHeapSummary"]
            g[("jvm_memory_used_bytes", heap)] = v["heapUsed"]
            g[("jvm_memory_committed_bytes", heap)] = v["heapSpace"]["committedSize"]
            g[("jvm_memory_limit_bytes", heap)] = v["heapSpace"]["reservedSize"]
        if "jdk.GCHeapSummary/after" in self.last:
            g[("jvm_memory_used_after_last_gc_bytes", heap)] = \
                self.last["jdk.GCHeapSummary/after"]["heapUsed"]
        if "jdk.MetaspaceSummary" in self.last:
            v = self.last["jdk.MetaspaceSummary"]
            for pool, field in (("Metaspace", "metaspace"), ("Compressed Class Space",
                                                             "classSpace")):
                lab = (("jvm_memory_type", "non_heap"), ("jvm_memory_pool_name", pool))
                g[("jvm_memory_used_bytes", lab)] = v[field]["used"]
                g[("jvm_memory_committed_bytes", lab)] = v[field]["committed"]
        if "jdk.JavaThreadStatistics" in self.last:
            v = self.last["jdk.JavaThreadStatistics"]
            g[("jvm_threads", (("jvm_thread_daemon", "true"),))] = v["daemonCount"]
            g[("jvm_threads", (("jvm_thread_daemon", "false"),))] = \
                v["activeCount"] - v["daemonCount"]
        if "jdk.ClassLoadingStatistics" in self.last:
            v = self.last["jdk.ClassLoadingStatistics"]
            g[("jvm_classes", ())] = v["loadedClassCount"] - v["unloadedClassCount"]
            c[("jvm_class_loaded_total", ())] = v["loadedClassCount"]
            c[("jvm_class_unloaded_total", ())] = v["unloadedClassCount"]
        if "jdk.ExceptionStatistics" in self.last:
            c[("jvm_exceptions_thrown_total", ())] = self.last["jdk.ExceptionStatistics"][
                "throwables"]
        for t, n in alloc.items():
            c[("jvm_memory_allocated_bytes_total", (("jfr_event", t),))] = n
        if lock[0]:
            c[("jvm_lock_contentions_total", ())] = lock[0]
            c[("jvm_lock_contention_seconds_total", ())] = lock[1] / 1e9
        if safep[0]:
            c[("jvm_safepoints_total", ())] = safep[0]
            c[("jvm_safepoint_seconds_total", ())] = safep[1] / 1e9
        for k, (n, ns) in vmops.items():
            c[("jvm_vm_operations_total", k)] = n
            c[("jvm_vm_operation_seconds_total", k)] = ns / 1e9
        for t, n in self.counts.items():
            c[("jfr_events_total", (("type", t),))] = n

    def expected(self):
        """{(name, labels tuple): value} of the gauges and counters."""
        d = dict(self.gauges)
        d.update(self.counters)
        return d


def close(a, b, rel=1e-6, abs_=1e-9):
    if a is None or b is None:
        return False
    return math.isclose(a, b, rel_tol=rel, abs_tol=abs_)


def compare_model(model, expo, source, fails, log=L.log, rel=1e-6):
    """Every value of MODEL against the exposition's series of SOURCE (the
    `source` label); the GC histogram per jvm_gc_name summed over
    jvm_gc_action. Appends to FAILS; returns the number of values checked."""
    checked = 0
    for (name, labs), want in sorted(model.expected().items(), key=lambda x: (x[0][0], x[0][1])):
        got = expo.find(name, source=source, **dict(labs))
        val = got[0].value if len(got) == 1 else None
        if len(got) != 1 or not close(val, want, rel):
            fails.append("%s%s{source=%s}: exposed %s, the events give %r"
                         % (name, P.fmt_labels(dict(labs)), source,
                            [s.value for s in got] if len(got) != 1 else val, want))
        checked += 1
    for s in expo.find("jvm_gc_duration_seconds_count", source=source):
        act = s.labels.get("jvm_gc_action")
        if act not in ("end of minor GC", "end of major GC"):
            fails.append("jvm_gc_action=%r (spec: end of minor GC / end of major GC)" % act)
    sub = P.Exposition()
    sub.samples = [s for s in expo.samples if s.labels.get("source") == source]
    gcs = P.histograms(sub, "jvm_gc_duration_seconds", by=("jvm_gc_name",))
    for name, (n, total, buckets) in model.gc.items():
        got = gcs.get((name,))
        if got is None:
            fails.append("jvm_gc_duration_seconds{jvm_gc_name=%s}: absent, %d events" % (name, n))
            continue
        if got[0] != n or not close(got[1], total, rel):
            fails.append("jvm_gc_duration_seconds{jvm_gc_name=%s}: count %r sum %r, the events "
                         "give %d and %r" % (name, got[0], got[1], n, total))
        if got[2] != buckets:
            fails.append("jvm_gc_duration_seconds{jvm_gc_name=%s}: buckets %r, the events give %r"
                         % (name, got[2], buckets))
        checked += 1
    for (name,) in gcs:
        if name not in model.gc:
            fails.append("jvm_gc_duration_seconds{jvm_gc_name=%s}: no such event" % name)
    return checked
