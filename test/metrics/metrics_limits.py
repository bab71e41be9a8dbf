#!/usr/bin/env python3
"""metrics_limits.py — `--metrics` of `jfrstream listen` and `tail` without a
JVM: the committed fixtures (test/data/workload.jfr: a JDK 17 recording with
GC, CPU, heap, thread and class events, one jdk.JVMInformation;
test/data/synthetic.jfr: 30 events, no JVMInformation, so each connection is
its own source, named by its peer) sent over TCP connections.

    test/metrics/metrics_limits.py JFRSTREAM [--fixture workload.jfr]
                                   [--synthetic synthetic.jfr] [--promtool BIN]
                                   [--connections 1000] [--only NAME]...

Scenarios (each with its own listener):
  values     workload.jfr once: every value the spec derives from its events
             (test/metrics/mlib.py's model of the listener's own --json lines)
             on /metrics; jfr_chunks_total, jfr_bytes_total (file size),
             jfr_source_connected 0 after the end, jfr_source_info (pid 14951,
             peer, the --label, a jvm_version with quotes, escaped); the same
             JVM reconnecting (the same id) takes over its series: counters
             continue (twice the counts), one tracked source; a --label value
             with a quote, a backslash and a newline, escaped and read back;
             --events jdk.CPULoad limits --json, not the metrics;
             jfrstream_build_info{version} = `jfrstream --version`; the same
             JVM twice at once (two open streams of one id): two label sets,
             the exposition valid;
             `promtool check metrics` reports nothing (skipped, with a note,
             without promtool: Debian's prometheus package).
  ttl        --metrics-ttl 2: a synthetic source's series are there after it
             closed (jfr_source_connected 0, still there 1 s later), gone
             within 2 s + 3 s of slack, jfrstream_metrics_expired_total 1,
             jfrstream_metrics_sources 0; the listener's series stay.
  sources    --metrics-max-sources 3: 5 synthetic sources open at once: 3
             get series, 2 refused (jfrstream_metrics_refused_total
             {limit="sources"} 2) and their events still counted by the
             listener (jfrstream_events_total 150); one tracked source closes,
             a 6th connects: the ended one is evicted
             (jfrstream_metrics_evicted_total 1), the new one has series.
  series     --metrics-max-series 20: a synthetic source's 9 series are all
             made (none refused, jfrstream_metrics_series 9); 5: refusals
             counted (limit="series"), at most 5 series tracked and exposed;
             60 with workload.jfr (84 series): some made, with the right
             values, the others refused; the exposition valid (promtext,
             promtool) each time.
  load       N (1,000) connections at once, each sending synthetic.jfr, while
             a scraper GETs /metrics in a loop: a scrape sees all N open and
             their events counted (then 3 more scrapes, then the connections
             end); every scrape one snapshot (the sum of jfr_events_total =
             jfrstream_events_total); every scrape answers 200 within 5 s and parses; at the end jfrstream_sources_total = N,
             jfrstream_connections_total = N, every source's jfr_events_total
             {type} = the fixture's counts from `jfrstream summary` (N sources
             all equal), jfrstream_events_total = 30 N. Scrape times printed.
  http       malformed requests on the metrics port: garbage bytes, a request
             line without a version, a 64 KiB header: 400/431 (or 413/505) or
             the connection closed, and a normal scrape right after works;
             a request left half-sent does not block a scrape; 20 scrapes at
             once; /other -> 404, POST -> 405, HEAD -> 200 with no body; the
             Content-Type; 70 idle connections holding half-sent requests
             (more than the server takes): how long scrapes fail is printed,
             and they work again once those time out (within 20 s).
  errors     a bad magic and a chunk cut in the middle: jfrstream_parse_errors_total
             counts 2 errors of 2 statuses, jfr_parse_errors_total 1 per source;
             a connection over --max-connections 1:
             jfrstream_connections_refused_total 1.
  stall      the loop thread blocked (--json into a pipe nobody reads): 3
             scrapes at once each answer 503 after about 10 s (at most 15 s);
             once the pipe is read, 200 with every event counted.
  addr       --metrics PORT alone serves on 127.0.0.1:PORT; --metrics [::1]:0
             prints an [::1] URL that answers (when the host has IPv6).
  usage      bad --metrics-ttl / -max-sources / -max-series / --metrics values:
             exit 2 naming the option; the metrics port in use: exit 1 naming
             it; --metrics-ttl 0.5 accepted.
  tail       `tail DIR --metrics` over a folder of 3 chunk files (workload.jfr
             copies, not final): one source (pid 14951, its path label) with
             3x the fixture's counts, jfr_chunks_total 3, GC histogram 3x.
Exit 0 pass, 1 fail, 77 skip (a jfrstream without --metrics).
"""
import argparse
import os
import resource
import selectors
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mlib as M  # noqa: E402
from mlib import L, P  # noqa: E402

NAME = "metrics-limits"
WORKLOAD = os.path.join(M.DATA, "workload.jfr")
SYNTHETIC = os.path.join(M.DATA, "synthetic.jfr")
SCENARIOS = ("values", "errors", "ttl", "sources", "series", "load", "http", "stall", "addr",
             "usage", "tail")
NOT_EVENTS = ("jdk.Checkpoint", "jdk.CheckPoint", "jdk.Metadata")
ESC_LABEL = ("note", 'say "hi"\\ back\nslash é日本')   # quote, backslash, newline, UTF-8


def model_count(events, t):
    return sum(1 for x, _ in events if x == t)


class Case:
    def __init__(self, name):
        self.name = name
        self.fails = []

    def check(self, cond, what):
        L.log("  %s: %s" % ("ok" if cond else "FAIL", what))
        if not cond:
            self.fails.append(what)
        return cond


def connect_send(port, data, close=True):
    """Connect, send DATA; with close, half-close and wait for the listener to
    close; returns the socket (open) or None."""
    return L.send(port, data, close)


def source_of(sock):
    """The source id of a connection without jdk.JVMInformation: its peer as
    the listener sees it (our local address)."""
    h, p = sock.getsockname()[:2]
    return "%s:%d" % (h, p)


def summary_counts(js, path):
    r = subprocess.run([js, "summary", path], capture_output=True, text=True, timeout=60)
    _, rows = L.parse_summary(r.stdout)
    return {t: c for t, (c, _) in rows.items() if t not in NOT_EVENTS and c}


def per_source_events(expo):
    """{source: {type: count}} of jfr_events_total."""
    out = {}
    for s in expo.find("jfr_events_total"):
        out.setdefault(s.labels.get("source"), {})[s.labels.get("type")] = s.value
    return out


def lint(c, body, promtool, what="promtool check metrics"):
    """`promtool check metrics` on BODY must report nothing; without promtool
    the check is skipped with a note (it is Debian's prometheus package)."""
    if not promtool:
        L.log("  skipped: %s (no promtool: Debian's prometheus package)" % what)
        return True
    rc, out = M.promtool_check(body, promtool)
    return c.check(rc == 0 and not out, "%s: exit %d %s" % (what, rc, out[:400]))


# ------------------------------------------------------------------ values

def reference_events(js, path):
    """The listener's own --json lines for one file sent over a socket."""
    lp, lout, lerr, port = L.start_listener(js, ["--json", "--once"])
    if not port:
        raise RuntimeError("reference listen did not start: " + lerr.text())
    L.send(port, open(path, "rb").read())
    L.wait(lp, 60, "listen --json")
    lout.join()
    return M.read_json_lines(l for _, l in lout.lines)


def case_values(a, js, c):
    data = open(WORKLOAD, "rb").read()
    events = reference_events(js, WORKLOAD)
    # a --label value with a quote, a backslash and a newline (escaped in
    # the exposition), and --events: --json prints only jdk.CPULoad, the
    # metrics still come from every event
    lst = M.Listener(js, ["--label", "suite=metrics_limits", "--label", ESC_LABEL[0] + "="
                          + ESC_LABEL[1], "--events", "jdk.CPULoad", "--json"])
    if not c.check(lst.ok(), "listen --metrics printed both ports"):
        return
    L.send(lst.port, data)
    e = lst.wait_expo(lambda e: e.value("jfrstream_sources_total") == 1 and
                      e.value("jfrstream_sources_open") == 0 and
                      e.value("jfrstream_events_total") == len(events), 20, "values")
    st, hd, body, dt = lst.scrape()
    if not c.check(e is not None and st == 200, "the source ended (%d events), scrape %s"
                   % (len(events), st)):
        lst.stop()
        return
    expo = P.parse(body)
    info = expo.find("jfr_source_info")
    c.check(len(info) == 1, "one jfr_source_info: %d" % len(info))
    if not info:
        lst.stop()
        return
    lab = info[0].labels
    src = lab.get("source")
    jvm = next(v for t, v in events if t == "jdk.JVMInformation")
    start_ms = M.iso_ns(jvm["jvmStartTime"]) // 1_000_000
    want = {"pid": "14951", "suite": "metrics_limits", "jvm_name": jvm["jvmName"],
            "jvm_version": jvm["jvmVersion"], "jvm_start": str(start_ms),
            "main_class": jvm["javaArguments"].split()[0]}
    want[ESC_LABEL[0]] = ESC_LABEL[1]
    bad = {k: (lab.get(k), v) for k, v in want.items() if lab.get(k) != v}
    c.check(not bad and info[0].value == 1 and lab.get("peer", "").startswith("127.0.0.1:"),
            "jfr_source_info: source %s, peer %s, pid, suite, jvm_* (jvm_version holds \" "
            "quotes), main_class, %s=%r (escaped and read back)%s"
            % (src, lab.get("peer"), ESC_LABEL[0], ESC_LABEL[1],
               (": differ (got, want) %s" % bad) if bad else ""))
    esc_line = [l for l in body.decode().splitlines() if l.startswith("jfr_source_info{")]
    c.check(esc_line and M.P.escape(ESC_LABEL[1]) in esc_line[0],
            "the exposition writes it %s" % M.P.escape(ESC_LABEL[1]))
    printed = {t for t, _ in M.read_json_lines(l for _, l in lst.out.lines)}
    c.check(printed == {"jdk.CPULoad"} and lst.out.count == model_count(events, "jdk.CPULoad"),
            "--events jdk.CPULoad: --json printed %d lines of %s; the metrics below count all"
            % (lst.out.count, sorted(printed)))
    c.check(src.endswith(":14951:%d" % start_ms), "source id %s = HOST:PID:JVM_START" % src)
    model = M.Model(events)
    fails = []
    n = M.compare_model(model, expo, src, fails)
    c.check(not fails, "%d values of the spec = the model of the %d --json events (%d types)%s"
            % (n, len(events), len(model.counts), ": " + "; ".join(fails[:6]) if fails else ""))
    for k, v in sorted(model.gc.items()):
        L.log("    GC %s: %d, %.9f s" % (k, v[0], v[1]))
    c.check(expo.value("jfr_chunks_total", source=src) == 1 and
            expo.value("jfr_bytes_total", source=src) == len(data) and
            expo.value("jfr_source_connected", source=src) == 0,
            "jfr_chunks_total %s (1), jfr_bytes_total %s (%d), jfr_source_connected %s (0)"
            % (expo.value("jfr_chunks_total", source=src),
               expo.value("jfr_bytes_total", source=src), len(data),
               expo.value("jfr_source_connected", source=src)))
    lt = expo.value("jfr_last_event_timestamp_seconds", source=src)
    c.check(lt is not None and abs(lt - time.time()) < 120,
            "jfr_last_event_timestamp_seconds %s is the wall clock of arrival" % lt)
    mine = sum(1 for x in expo.samples if x.labels.get("source") == src)
    c.check(expo.value("jfrstream_metrics_series") == mine,
            "jfrstream_metrics_series %s = the %d series of the source exposed"
            % (expo.value("jfrstream_metrics_series"), mine))
    lint(c, body, a.promtool)
    # the same JVM again (the same id, its series still kept): counters continue
    L.send(lst.port, data)
    e2 = lst.wait_expo(lambda e: e.value("jfrstream_sources_open") == 0 and
                       e.value("jfrstream_sources_total") == 2, 20, "reconnect")
    if c.check(e2 is not None, "the second connection ended"):
        ev1 = per_source_events(expo).get(src, {})
        ev2 = per_source_events(e2)
        doubled = {t: 2 * v for t, v in ev1.items()}
        c.check(list(ev2) == [src] and ev2[src] == doubled,
                "a reconnect of the same JVM takes over its series: jfr_events_total doubled "
                "(%d types%s), sources %s" % (len(doubled), "" if ev2.get(src) == doubled else
                                              ", got %s" % ev2.get(src), list(ev2)))
        c.check(e2.value("jfrstream_metrics_sources") == 1 and
                e2.value("jfr_chunks_total", source=src) == 2,
                "jfrstream_metrics_sources %s (1), jfr_chunks_total %s (2)"
                % (e2.value("jfrstream_metrics_sources"), e2.value("jfr_chunks_total", source=src)))
    c.check(lst.stop() == 0, "listen exit 0")
    # the listener's own: its version and start time
    ver = subprocess.run([js, "--version"], capture_output=True, text=True,
                         timeout=30).stdout.split()
    bi = expo.find("jfrstream_build_info")
    st0 = expo.value("jfrstream_start_time_seconds")
    c.check(len(bi) == 1 and bi[0].value == 1 and ver and bi[0].labels.get("version") == ver[-1]
            and st0 is not None and abs(st0 - time.time()) < 300,
            "jfrstream_build_info{version=%s} (jfrstream --version: %s), "
            "jfrstream_start_time_seconds %s" % (bi[0].labels.get("version") if bi else None,
                                                 " ".join(ver), st0))
    # the same JVM twice at once (two streams of one id, both open): two
    # series sets, told apart, the exposition valid
    lst = M.Listener(js)
    if not c.check(lst.ok(), "listen --metrics"):
        return
    s1 = L.connect(lst.port)
    s1.sendall(data)
    s2 = L.connect(lst.port)
    s2.sendall(data)
    cpu = model_count(events, "jdk.CPULoad")
    e = lst.wait_expo(lambda e: e.total("jfr_events_total", type="jdk.CPULoad") == 2 * cpu and
                      e.value("jfrstream_sources_open") == 2, 10, "twice")
    if c.check(e is not None, "two open streams of one JVM id: jfr_events_total{type=jdk.CPULoad}"
               " sums to %d" % (2 * cpu)):
        sets = [x.labels for x in e.find("jfr_events_total", type="jdk.CPULoad")]
        c.check(len(sets) == 2 and all(x.get("source") == src for x in sets),
                "two label sets of source %s: %s" % (src, sets))
        st, hd, body, dt = lst.scrape()
        lint(c, body, a.promtool)
    s1.close()
    s2.close()
    rc = lst.stop()
    c.check(rc == 0, "listen exit %s (0)" % rc)


# ------------------------------------------------------------------ errors

def case_errors(a, js, c):
    """Bad data: parse errors counted per status, per source and in all."""
    data = open(WORKLOAD, "rb").read()
    lst = M.Listener(js)
    if not c.check(lst.ok(), "listen --metrics"):
        return
    s1 = L.connect(lst.port)
    bad_src = source_of(s1)
    s1.sendall(b"NOTJFR\0\0" + bytes(100))
    s1.shutdown(socket.SHUT_WR)
    try:
        s1.recv(1)
    except OSError:
        pass
    s1.close()
    s2 = L.connect(lst.port)
    cut_src = source_of(s2)
    s2.sendall(data[:len(data) // 2])   # the chunk cut in the middle
    s2.shutdown(socket.SHUT_WR)
    try:
        s2.recv(1)
    except OSError:
        pass
    s2.close()
    e = lst.wait_expo(lambda e: e.value("jfrstream_connections_total") == 2 and
                      e.value("jfrstream_connections_open") == 0 and
                      e.total("jfrstream_parse_errors_total") >= 2, 10, "errors")
    if not c.check(e is not None, "two bad inputs ended"):
        lst.stop()
        return
    errs = {x.labels.get("status"): x.value for x in e.find("jfrstream_parse_errors_total")}
    per = {}
    for x in e.find("jfr_parse_errors_total"):
        per.setdefault(x.labels.get("source"), {})[x.labels.get("status")] = x.value
    L.log("    jfrstream_parse_errors_total %s; per source %s" % (errs, per))
    c.check(sum(errs.values()) == 2 and len(errs) == 2,
            "jfrstream_parse_errors_total: 2 errors of 2 statuses (bad magic, cut chunk): %s"
            % errs)
    c.check(set(per) == {bad_src, cut_src} and all(sum(v.values()) == 1 for v in per.values()),
            "jfr_parse_errors_total: 1 for each source (%s, %s): %s" % (bad_src, cut_src, per))
    rc = lst.stop()
    c.check(rc == 1, "listen exit %s (1: a connection ended with an error)" % rc)
    # a connection over --max-connections: counted as refused
    lst = M.Listener(js, ["--max-connections", "1"])
    if not c.check(lst.ok(), "listen --metrics --max-connections 1"):
        return
    s1 = L.connect(lst.port)
    s1.sendall(data[:100])
    lst.wait_expo(lambda e: e.value("jfrstream_connections_open") == 1, 10, "one open")
    s2 = L.connect(lst.port)
    try:
        s2.recv(1)
    except OSError:
        pass
    s2.close()
    e = lst.wait_expo(lambda e: e.value("jfrstream_connections_refused_total") == 1, 10,
                      "refused")
    c.check(e is not None and e.value("jfrstream_connections_open") == 1,
            "--max-connections 1, a second connection: jfrstream_connections_refused_total %s "
            "(1), jfrstream_connections_open %s (1)"
            % (e and e.value("jfrstream_connections_refused_total"),
               e and e.value("jfrstream_connections_open")))
    s1.close()
    rc = lst.stop()
    c.check(rc == 1, "listen exit %s (1: a connection ended with an error)" % rc)


# ------------------------------------------------------------------ stall

def case_stall(a, js, c):
    """The loop thread blocked (--json into a pipe nobody reads): a scrape
    answers 503 after about 10 s instead of hanging; once the pipe is read,
    200 again with every event counted."""
    data = open(WORKLOAD, "rb").read()
    n_ev = sum(summary_counts(js, WORKLOAD).values())
    p = L.start([js, "listen", "127.0.0.1:0", "--metrics", "127.0.0.1:0", "--json"])
    err = M.watch(L.Lines(p.stderr))
    m1 = err.wait_for(r"listening on 127\.0\.0\.1:(\d+)", 15)
    m2 = err.wait_for(M.METRICS_LINE, 15)
    if not c.check(m1 and m2, "listen --metrics --json started"):
        return
    url = "http://127.0.0.1:%s/metrics" % m2.group(1)
    s = L.connect(int(m1.group(1)))
    s.sendall(data * 3)          # ~600 KB of --json lines: the 64 KiB pipe fills
    time.sleep(1.0)
    # three scrapes at once (two Prometheus servers and a person, say):
    # each one waits up to 10 s, not one after the other
    res = []

    def one_scrape(i):
        t0 = time.monotonic()
        try:
            st, _, _, dt = M.http("GET", url, timeout=45)
        except OSError as err:
            st, dt = "error %s" % err, time.monotonic() - t0
        res.append((i, st, dt))

    ts = [threading.Thread(target=one_scrape, args=(i,)) for i in range(3)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(60)
    res.sort()
    L.log("    3 scrapes at once while the loop is blocked: %s"
          % ", ".join("%s after %.1f s" % (st, dt) for _, st, dt in res))
    c.check(len(res) == 3 and all(st == 503 and 8 <= dt <= 15 for _, st, dt in res),
            "each scrape while the loop is blocked on stdout: 503 after about 10 s "
            "(at most 15 s each, waited side by side)")
    out = L.Lines(p.stdout, keep=False)   # read the pipe: the loop goes on
    e = None
    end = time.monotonic() + 20
    while time.monotonic() < end:
        st, hd, body, dt = M.http("GET", url, timeout=15)
        if st == 200:
            e = P.parse(body)
            if e.value("jfrstream_events_total") == 3 * n_ev:
                break
        time.sleep(0.2)
    c.check(e is not None and e.value("jfrstream_events_total") == 3 * n_ev,
            "once stdout is read: 200, jfrstream_events_total %s (%d)"
            % (e and e.value("jfrstream_events_total"), 3 * n_ev))
    s.close()
    p.send_signal(signal.SIGTERM)
    rc = L.wait(p, 30, "listen")
    out.join()
    c.check(rc == 0, "listen exit %s (0)" % rc)


# ------------------------------------------------------------------ usage

def case_usage(a, js, c):
    """Bad option values: exit 2 with a message naming the option; the
    metrics port taken: exit 1 naming the address."""
    for args, what in ((["--metrics-ttl", "abc"], "--metrics-ttl"),
                       (["--metrics-ttl", "0"], "--metrics-ttl"),
                       (["--metrics-ttl", "-1"], "--metrics-ttl"),
                       (["--metrics-max-sources", "0"], "--metrics-max-sources"),
                       (["--metrics-max-series", "x"], "--metrics-max-series"),
                       (["--metrics", "127.0.0.1:99999"], "--metrics")):
        full = ["--metrics", "127.0.0.1:0"] + args if args[0] != "--metrics" else args
        r = subprocess.run([js, "listen", "127.0.0.1:0"] + full, capture_output=True, text=True,
                           timeout=30, stdin=subprocess.DEVNULL)
        first = (r.stderr.splitlines() or [""])[0]
        c.check(r.returncode == 2 and what in first,
                "listen %s: exit %s, %r" % (" ".join(args), r.returncode, first))
    busy = socket.socket()
    busy.bind(("127.0.0.1", 0))
    busy.listen()
    bport = busy.getsockname()[1]
    r = subprocess.run([js, "listen", "127.0.0.1:0", "--metrics", "127.0.0.1:%d" % bport],
                       capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL)
    busy.close()
    first = (r.stderr.splitlines() or [""])[0]
    c.check(r.returncode == 1 and str(bport) in first,
            "--metrics on a port in use: exit %s, %r" % (r.returncode, first))
    lst = M.Listener(js, ["--metrics-ttl", "0.5"])
    c.check(lst.ok(), "--metrics-ttl 0.5 (a fraction) accepted")
    rc = lst.stop()
    c.check(rc == 0, "listen exit %s (0)" % rc)


# ------------------------------------------------------------------ addr

def case_addr(a, js, c):
    """--metrics PORT alone (127.0.0.1) and [::1]:PORT."""
    port = M.free_port()
    lst = M.Listener(js, metrics=str(port))
    c.check(lst.mport == port, "--metrics %d: metrics on http://127.0.0.1:%d/metrics (%s)"
            % (port, port, lst.mport))
    if lst.mport:
        st, _, body, _ = lst.scrape()
        c.check(st == 200, "GET on 127.0.0.1:%d: %s" % (port, st))
    rc = lst.stop()
    c.check(rc == 0, "listen exit %s (0)" % rc)
    try:
        t = socket.socket(socket.AF_INET6)
        t.bind(("::1", 0))
        t.close()
    except OSError:
        L.log("  (no IPv6 loopback: [::1] not tried)")
        return
    p = L.start([js, "listen", "127.0.0.1:0", "--metrics", "[::1]:0"])
    err = M.watch(L.Lines(p.stderr))
    L.Lines(p.stdout, keep=False)
    m = err.wait_for(r"metrics on http://\[::1\]:(\d+)/metrics", 15)
    if c.check(m is not None, "--metrics [::1]:0: %s" % (m.group(0) if m else err.text()[-300:])):
        st, _, body, _ = M.http("GET", "http://[::1]:%s/metrics" % m.group(1))
        c.check(st == 200 and P.parse(body) is not None, "GET over IPv6: %s" % st)
    p.send_signal(signal.SIGTERM)
    c.check(L.wait(p, 20, "listen") == 0, "listen exit 0")


# ------------------------------------------------------------------ ttl

def case_ttl(a, js, c):
    data = open(SYNTHETIC, "rb").read()
    want = summary_counts(js, SYNTHETIC)
    lst = M.Listener(js, ["--metrics-ttl", "2"])
    if not c.check(lst.ok(), "listen --metrics --metrics-ttl 2"):
        return
    s = L.connect(lst.port)
    src = source_of(s)
    s.sendall(data)
    e = lst.wait_expo(lambda e: per_source_events(e).get(src) == want, 20, "ttl open")
    c.check(e is not None and e.value("jfr_source_connected", source=src) == 1,
            "source %s open: jfr_source_connected 1, jfr_events_total %s" % (src, want))
    s.shutdown(socket.SHUT_WR)
    try:
        s.recv(1)
    except OSError:
        pass
    s.close()
    e = lst.wait_expo(lambda e: e.value("jfr_source_connected", source=src) == 0, 10, "ttl end")
    t_end = time.monotonic()
    c.check(e is not None and per_source_events(e).get(src) == want,
            "after the close: jfr_source_connected 0, its series kept")
    time.sleep(1.0)
    e = lst.expo()
    c.check(per_source_events(e).get(src) == want, "1 s after the close: still there")
    gone = lst.wait_expo(lambda e: not any(s.labels.get("source") == src for s in e.samples),
                         2 + 3, "ttl gone")
    t_gone = time.monotonic() - t_end
    if c.check(gone is not None, "gone %.2f s after the close was seen (TTL 2 s, bound 5 s)"
               % t_gone):
        c.check(t_gone >= 0.9, "not before the TTL: %.2f s" % t_gone)
        c.check(gone.value("jfrstream_metrics_expired_total") == 1 and
                gone.value("jfrstream_metrics_sources") == 0 and
                gone.value("jfrstream_sources_total") == 1,
                "jfrstream_metrics_expired_total %s (1), jfrstream_metrics_sources %s (0), "
                "jfrstream_sources_total %s (1, the listener's series stay)"
                % (gone.value("jfrstream_metrics_expired_total"),
                   gone.value("jfrstream_metrics_sources"),
                   gone.value("jfrstream_sources_total")))
    rc = lst.stop()
    c.check(rc == 0, "listen exit %s (0)" % rc)


# ------------------------------------------------------------------ caps

def case_sources(a, js, c):
    data = open(SYNTHETIC, "rb").read()
    want = summary_counts(js, SYNTHETIC)
    per_file = sum(want.values())
    lst = M.Listener(js, ["--metrics-max-sources", "3", "--json"])
    if not c.check(lst.ok(), "listen --metrics --metrics-max-sources 3 --json"):
        return
    socks = []
    for i in range(5):
        s = L.connect(lst.port)
        s.sendall(data)
        socks.append(s)
        k = i + 1
        # one at a time (the first 3 are tracked, in this order): accepted,
        # and its events printed by --json (they flow to the other outputs)
        e = lst.wait_expo(lambda e: e.value("jfrstream_connections_total") == k and
                          lst.out.count == k * per_file, 20, "sources %d" % k)
        if not c.check(e is not None, "connection %d (%s) accepted and its %d events printed "
                       "by --json (%d lines)" % (k, source_of(s), per_file, lst.out.count)):
            break
    srcs = [source_of(s) for s in socks]
    e = lst.expo()
    per = per_source_events(e)
    c.check(set(per) == set(srcs[:3]) and all(per[x] == want for x in srcs[:3]),
            "the first 3 sources have series (%s), the 4th and 5th none" % sorted(per))
    c.check(e.value("jfrstream_metrics_refused_total", limit="sources") == 2,
            "jfrstream_metrics_refused_total{limit=\"sources\"} %s (2)"
            % e.value("jfrstream_metrics_refused_total", limit="sources"))
    c.check(e.value("jfrstream_metrics_sources") == 3 and
            e.value("jfrstream_connections_open") == 5,
            "jfrstream_metrics_sources %s (3 tracked), jfrstream_connections_open %s (5)"
            % (e.value("jfrstream_metrics_sources"), e.value("jfrstream_connections_open")))
    # the listener's own series count every input, tracked or not
    c.check(e.value("jfrstream_sources_open") == 5 and e.value("jfrstream_sources_total") == 5
            and e.value("jfrstream_events_total") == 5 * per_file
            and e.value("jfrstream_bytes_total") == 5 * len(data),
            "the listener's own: jfrstream_sources_open %s (5), jfrstream_sources_total %s (5), "
            "jfrstream_events_total %s (%d), jfrstream_bytes_total %s (%d): the refused sources "
            "are inputs too" % (e.value("jfrstream_sources_open"),
                                e.value("jfrstream_sources_total"),
                                e.value("jfrstream_events_total"), 5 * per_file,
                                e.value("jfrstream_bytes_total"), 5 * len(data)))
    # the first one ends (kept for the TTL), a 6th arrives: the ended one goes
    s0 = socks[0]
    s0.shutdown(socket.SHUT_WR)
    try:
        s0.recv(1)
    except OSError:
        pass
    s0.close()
    lst.wait_expo(lambda e: e.value("jfr_source_connected", source=srcs[0]) == 0, 10, "end 1")
    s6 = L.connect(lst.port)
    s6.sendall(data)
    src6 = source_of(s6)
    e = lst.wait_expo(lambda e: per_source_events(e).get(src6) == want, 10, "6th")
    if c.check(e is not None, "the 6th source (%s) has series" % src6):
        per = per_source_events(e)
        c.check(srcs[0] not in per and e.value("jfrstream_metrics_evicted_total") == 1
                and e.value("jfrstream_metrics_sources") == 3,
                "the ended source evicted: jfrstream_metrics_evicted_total %s (1), its series "
                "%s, tracked %s (3)" % (e.value("jfrstream_metrics_evicted_total"),
                                        "gone" if srcs[0] not in per else "still there",
                                        e.value("jfrstream_metrics_sources")))
    for s in socks[1:] + [s6]:
        s.close()
    rc = lst.stop()
    c.check(rc == 0, "listen exit %s (0)" % rc)


def exposed_matches_model(expo, src, model):
    """Differences between the source's exposed gauges/counters and the model
    (only the series exposed: under a series cap some are missing)."""
    want = model.expected()
    diffs = []
    for x in expo.samples:
        if x.labels.get("source") != src:
            continue
        extra = tuple((k, v) for k, v in x.labels.items() if k != "source")
        k = (x.name, extra)
        if k in want and not M.close(x.value, want[k]):
            diffs.append("%s%s: %r, the events give %r" % (x.name, P.fmt_labels(dict(extra)),
                                                           x.value, want[k]))
    return diffs


def case_series(a, js, c):
    # (i) synthetic.jfr's source has 9 series (4 jfr_events_total, bytes,
    # chunks, last event, connected, info): under a cap of 20 all are made;
    # under a cap of 5, 5 at most, the others refused
    data = open(SYNTHETIC, "rb").read()
    want = summary_counts(js, SYNTHETIC)
    per_file = sum(want.values())
    for cap in (20, 5):
        lst = M.Listener(js, ["--metrics-max-series", str(cap), "--json"])
        if not c.check(lst.ok(), "listen --metrics --metrics-max-series %d" % cap):
            return
        s = L.connect(lst.port)
        src = source_of(s)
        s.sendall(data)
        e = lst.wait_expo(lambda e: e.value("jfrstream_connections_total") == 1 and
                          lst.out.count == per_file, 20, "series")
        c.check(e is not None, "synthetic.jfr: its %d events printed by --json" % per_file)
        st, hd, body, dt = lst.scrape()
        try:
            e = P.parse(body)
        except P.FormatError as err:
            c.check(False, "the exposition under the series cap %d: %s" % (cap, err))
            lst.stop()
            return
        refused = e.value("jfrstream_metrics_refused_total", limit="series")
        mine = [x for x in e.samples if x.labels.get("source") == src]
        tracked = e.value("jfrstream_metrics_series")
        if cap == 20:
            c.check(per_source_events(e).get(src) == want and len(mine) == 9 and refused == 0
                    and tracked == len(mine),
                    "cap 20: the source's 9 series all made (%d exposed, jfr_events_total %s), "
                    "refused{series} %s (0), jfrstream_metrics_series %s (= exposed)"
                    % (len(mine), per_source_events(e).get(src), refused, tracked))
        else:
            c.check(refused is not None and refused > 0,
                    "cap 5: jfrstream_metrics_refused_total{limit=\"series\"} %s (> 0)" % refused)
            c.check(tracked is not None and tracked <= cap and len(mine) <= cap,
                    "cap 5: jfrstream_metrics_series %s, %d series of the source exposed"
                    % (tracked, len(mine)))
            c.check(e.value("jfrstream_events_total") == per_file,
                    "cap 5: jfrstream_events_total %s (%d: the listener's own count)"
                    % (e.value("jfrstream_events_total"), per_file))
        lint(c, body, a.promtool, "cap %d: the exposition parses, promtool check metrics" % cap)
        s.close()
        rc = lst.stop()
        c.check(rc == 0, "cap %d: listen exit %s (0)" % (cap, rc))
    # (ii) a cap inside what workload.jfr's source needs: some series made
    events = reference_events(js, WORKLOAD)
    model = M.Model(events)
    cap = 60
    lst = M.Listener(js, ["--metrics-max-series", str(cap)])
    if not c.check(lst.ok(), "listen --metrics --metrics-max-series %d" % cap):
        return
    L.send(lst.port, open(WORKLOAD, "rb").read())
    e = lst.wait_expo(lambda e: e.value("jfrstream_connections_total") == 1 and
                      e.value("jfrstream_connections_open") == 0, 20, "series 60")
    st, hd, body, dt = lst.scrape()
    try:
        e = P.parse(body)
    except P.FormatError as err:
        c.check(False, "the exposition under the series cap %d: %s" % (cap, err))
        lst.stop()
        return
    info = e.find("jfr_source_info")
    src = info[0].labels["source"] if info else None
    mine = [x for x in e.samples if src and x.labels.get("source") == src]
    refused = e.value("jfrstream_metrics_refused_total", limit="series")
    tracked = e.value("jfrstream_metrics_series")
    c.check(src is not None and refused and tracked is not None and tracked <= cap
            and 0 < len(mine) <= cap,
            "workload.jfr under --metrics-max-series %d: %d series of the source exposed, "
            "jfrstream_metrics_series %s, refused{series} %s (> 0)"
            % (cap, len(mine), tracked, refused))
    diffs = exposed_matches_model(e, src, model)
    c.check(not diffs, "the series that were made hold the right values%s"
            % (": " + "; ".join(diffs[:4]) if diffs else ""))
    lint(c, body, a.promtool)
    rc = lst.stop()
    c.check(rc == 0, "listen exit %s (0)" % rc)


# ------------------------------------------------------------------ load

class Scraper(threading.Thread):
    """GET /metrics in a loop (every 50 ms after the last answer); each row:
    (start, status, seconds, samples or the error, {listener values})."""

    KEYS = ("jfrstream_connections_open", "jfrstream_sources_open", "jfrstream_events_total")

    def __init__(self, url):
        super().__init__(daemon=True)
        self.url = url
        self.stop_ev = threading.Event()
        self.rows = []

    def run(self):
        while not self.stop_ev.is_set():
            t = time.monotonic()
            try:
                st, hd, body, dt = M.http("GET", self.url, timeout=30)
                vals = {}
                try:
                    e = P.parse(body)
                    n = len(e.samples)
                    vals = {k: e.value(k) for k in self.KEYS}
                    vals["sources"] = len({x.labels.get("source") for x in
                                           e.find("jfr_events_total")})
                    vals["sum_events"] = e.total("jfr_events_total")
                except (P.FormatError, ValueError) as err:
                    n = "invalid: %s" % err
                self.rows.append((t, st, dt, n, vals))
            except OSError as err:
                self.rows.append((t, None, time.monotonic() - t, "error: %s" % err, {}))
            self.stop_ev.wait(0.05)

    def wait_row(self, cond, timeout):
        """The first row (from now on) with cond(values) true, or None."""
        i = len(self.rows)
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            while i < len(self.rows):
                if cond(self.rows[i][4]):
                    return self.rows[i]
                i += 1
            time.sleep(0.02)
        return None


def case_load(a, js, c):
    # under a slow tool (JFRSTREAM_TEST_SCALE < 1: valgrind, the sanitizers)
    # fewer connections, and the time bounds stretched, not shrunk
    slow = 1 / float(os.environ.get("JFRSTREAM_TEST_SCALE") or 1)
    n = L.scale(a.connections, 100)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    need = n + 200
    if soft < need:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, max(need, soft)), hard))
        except (ValueError, OSError):
            pass
        soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    if soft < need:
        return "skip", "RLIMIT_NOFILE %d (hard %d), %d needed" % (soft, hard, need)
    # each connection: REPEAT copies of the file one after the other (a
    # longer recording of 2 x REPEAT chunks), so that the load lasts
    data = open(SYNTHETIC, "rb").read() * a.repeat
    want = {t: v * a.repeat for t, v in summary_counts(js, SYNTHETIC).items()}
    per_file = sum(want.values())
    L.log("  %d connections, each %d bytes (%d copies of synthetic.jfr, %d events)"
          % (n, len(data), a.repeat, per_file))
    lst = M.Listener(js, ["--max-connections", str(n + 100)], keep_stdout=False)
    if not c.check(lst.ok(), "listen --metrics --max-connections %d" % (n + 100)):
        return
    sc = Scraper(lst.url)
    sc.start()
    t0 = time.monotonic()
    socks = []
    try:
        for i in range(n):
            socks.append(socket.create_connection(("127.0.0.1", lst.port), timeout=30))
        t_conn = time.monotonic() - t0
        srcs = {source_of(s) for s in socks}
        for s in socks:
            s.sendall(data)
        t_sent = time.monotonic() - t0
        # all open at once, all their events taken: seen by a scrape, then 3
        # more scrapes with everything open
        full = sc.wait_row(lambda v: v.get("jfrstream_connections_open") == n and
                           v.get("jfrstream_events_total") == n * per_file, 60 * slow)
        t_full = time.monotonic() - t0
        c.check(full is not None, "a scrape during the load sees %d connections open and %d "
                "events (%.2f s): %s" % (n, n * per_file, t_full, full and full[4]))
        if full:
            k = len(sc.rows)
            end = time.monotonic() + 30
            while len(sc.rows) < k + 3 and time.monotonic() < end:
                time.sleep(0.02)
        for s in socks:
            s.shutdown(socket.SHUT_WR)
        # every connection closed by the listener once its stream ended
        sel = selectors.DefaultSelector()
        for s in socks:
            s.setblocking(False)
            sel.register(s, selectors.EVENT_READ)
        left = len(socks)
        end = time.monotonic() + 60 * slow
        while left and time.monotonic() < end:
            for key, _ in sel.select(timeout=1):
                try:
                    b = key.fileobj.recv(1)
                except (BlockingIOError, InterruptedError):
                    continue
                except OSError:
                    b = b""
                if not b:
                    sel.unregister(key.fileobj)
                    left -= 1
        t_done = time.monotonic() - t0
        c.check(left == 0, "%d connections: connected in %.2f s, sent in %.2f s, all closed by "
                "the listener in %.2f s (%d left)" % (n, t_conn, t_sent, t_done, left))
        e = lst.wait_expo(lambda e: e.value("jfrstream_sources_open") == 0 and
                          e.value("jfrstream_events_total") == n * per_file, 30, "load end")
    finally:
        sc.stop_ev.set()
        sc.join(40)
        for s in socks:
            s.close()
    during = [r for r in sc.rows if r[0] - t0 <= t_done]
    bad = [r[:4] for r in sc.rows if r[1] != 200 or not isinstance(r[3], int)]
    times = sorted(r[2] for r in during)
    if times:
        L.log("    scrapes during the load: %d, %.1f / %.1f / %.1f ms (median / p90 / max), "
              "%s samples each (first, last)"
              % (len(times), times[len(times) // 2] * 1000,
                 times[min(len(times) - 1, int(0.9 * len(times)))] * 1000, times[-1] * 1000,
                 (during[0][3], during[-1][3])))
    # one snapshot: the listener's count = the sum of the sources' counts
    # in every scrape (no source refused or expired here)
    torn = [r[4] for r in sc.rows if r[4] and r[4].get("sum_events") !=
            r[4].get("jfrstream_events_total")]
    c.check(not torn, "every scrape is one snapshot: sum of jfr_events_total = "
            "jfrstream_events_total in %d scrapes%s" % (len(sc.rows), ": torn %s" % torn[:2]
                                                       if torn else ""))
    bound = 5.0 * slow
    c.check(len(during) >= 5 and not bad and times and times[-1] < bound,
            "%d scrapes during the load, all 200 and valid, slowest %.0f ms (bound %g s)%s"
            % (len(during), times[-1] * 1000 if times else -1, bound,
               ": bad %s" % bad[:3] if bad else ""))
    if not c.check(e is not None, "the listener took all %d streams (%d events)"
                   % (n, n * per_file)):
        lst.stop()
        return
    per = per_source_events(e)
    equal = sum(1 for s in srcs if per.get(s) == want)
    c.check(e.value("jfrstream_sources_total") == n and
            e.value("jfrstream_connections_total") == n and len(per) == n and equal == n,
            "jfrstream_sources_total %s, jfrstream_connections_total %s, %d sources with "
            "series, %d of them with jfr_events_total = `summary` %s"
            % (e.value("jfrstream_sources_total"), e.value("jfrstream_connections_total"),
               len(per), equal, want))
    c.check(e.value("jfrstream_events_total") == n * per_file and
            e.value("jfrstream_metrics_sources") == n,
            "jfrstream_events_total %s (%d), jfrstream_metrics_sources %s"
            % (e.value("jfrstream_events_total"), n * per_file,
               e.value("jfrstream_metrics_sources")))
    st, hd, body, dt = lst.scrape()
    L.log("    final scrape: %d bytes, %d samples, %.1f ms" % (len(body), len(e.samples),
                                                              dt * 1000))
    lint(c, body, a.promtool, "promtool check metrics of %d sources" % n)
    c.check(lst.stop() == 0, "listen exit 0")


# ------------------------------------------------------------------ http

def case_http(a, js, c):
    lst = M.Listener(js)
    if not c.check(lst.ok(), "listen --metrics"):
        return

    def scrape_ok(after):
        st, hd, body, dt = lst.scrape(timeout=10)
        try:
            P.parse(body)
            valid = True
        except P.FormatError:
            valid = False
        return c.check(st == 200 and valid, "a scrape after %s: %s, valid %s, %.1f ms"
                       % (after, st, valid, dt * 1000))

    st, hd, body, dt = lst.scrape()
    c.check(st == 200 and hd.get("content-type") == M.CONTENT_TYPE and body,
            "GET /metrics: %s, Content-Type %r" % (st, hd.get("content-type")))
    bad_requests = [
        ("garbage bytes", b"\x16\x03\x01\x02\x00\x01\xfc\x03\x03garbage\x00\xff\r\n\r\n",
         (400, 505)),
        ("a request line without a version", b"GET /metrics\r\n\r\n", (400, 505)),
        ("a 64 KiB header", b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: "
         + b"a" * 65536 + b"\r\n\r\n", (400, 413, 431)),
        ("a header line without a colon", b"GET /metrics HTTP/1.1\r\nHost: x\r\nno colon here"
         b"\r\n\r\n", (400,)),
    ]
    for what, req, ok_status in bad_requests:
        status, got, how = M.raw_request(lst.mport, req, timeout=10)
        c.check(status in ok_status or (status is None and how in ("closed", "reset")),
                "%s: %s (%s, %d bytes back)" % (what, status, how, len(got)))
        scrape_ok(what)
    # a request left half-sent: the server keeps serving others
    hang = socket.create_connection(("127.0.0.1", lst.mport), timeout=10)
    hang.sendall(b"GET /metr")
    scrape_ok("a request left half-sent (still open)")
    hang.close()
    # 20 scrapes at once
    res = []

    def one_scrape():
        try:
            st, _, b, dt = lst.scrape(timeout=15)
            P.parse(b)
            res.append((st, dt))
        except (OSError, P.FormatError) as err:
            res.append((str(err), 0))

    ts = [threading.Thread(target=one_scrape) for _ in range(20)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(30)
    c.check(len(res) == 20 and all(r[0] == 200 for r in res),
            "20 scrapes at once: all 200 and valid, slowest %.1f ms"
            % (max(r[1] for r in res) * 1000 if res else -1))
    st, hd, body, dt = M.http("GET", "http://127.0.0.1:%d/other" % lst.mport)
    c.check(st == 404, "GET /other: %s (404)" % st)
    st, hd, body, dt = M.http("POST", lst.url, data=b"x=1")
    c.check(st == 405, "POST /metrics: %s (405)" % st)
    st, hd, body, dt = M.http("HEAD", lst.url)
    c.check(st == 200 and body == b"" and hd.get("content-type") == M.CONTENT_TYPE,
            "HEAD /metrics: %s, %d body bytes, Content-Type %r"
            % (st, len(body), hd.get("content-type")))
    status, got, how = M.raw_request(lst.mport, b"GET /metrics HTTP/1.0\r\n\r\n")
    c.check(status == 200, "GET /metrics HTTP/1.0: %s" % status)
    # more idle connections than the server takes (a slow client holding
    # half-sent requests): scrapes fail until its idle timeout closes them,
    # then work again (a limit, measured and printed; the recovery checked)
    held = []
    refused = 0
    t0 = time.monotonic()
    for _ in range(70):
        try:
            h = socket.create_connection(("127.0.0.1", lst.mport), timeout=2)
            h.sendall(b"GET /metr")
            held.append(h)
        except OSError:
            refused += 1   # over the server's limit: closed at once, or not accepted
        if time.monotonic() - t0 > 20:
            break
    L.log("    %d connections held, %d not (%.1f s)" % (len(held), refused,
                                                      time.monotonic() - t0))
    t0 = time.monotonic()
    first_ok = None
    failed = 0
    while time.monotonic() - t0 < 20:
        try:
            st, _, b, _ = lst.scrape(timeout=3)
            if st == 200:
                first_ok = time.monotonic() - t0
                break
        except OSError:
            pass
        failed += 1
        time.sleep(0.5)
    L.log("    70 idle connections holding half-sent requests: %d scrapes failed, the first "
          "answer after %s s" % (failed, "%.1f" % first_ok if first_ok is not None else "> 20"))
    c.check(first_ok is not None, "scrapes work again after the held connections time out "
            "(%s s)" % ("%.1f" % first_ok if first_ok is not None else "> 20"))
    for h in held:
        h.close()
    c.check(lst.p.poll() is None, "the listener still runs")
    c.check(lst.stop() == 0, "listen exit 0")


# ------------------------------------------------------------------ tail

def case_tail(a, js, c):
    work = tempfile.mkdtemp(prefix="jfrstream-metrics-tail-")
    try:
        chunk = bytearray(open(WORKLOAD, "rb").read())
        chunk[67] &= ~2 & 0xff  # not the final chunk: the tail goes on
        repo = os.path.join(work, "repo")
        os.mkdir(repo)
        copies = 3
        for i in range(copies):
            with open(os.path.join(repo, "%05d.jfr" % i), "wb") as f:
                f.write(chunk)
        events = reference_events(js, WORKLOAD)
        model = M.Model(events * copies)
        p = L.start([js, "tail", "--idle-timeout", "20", "--metrics", "127.0.0.1:0",
                     "--label", "suite=metrics_tail", repo])
        out, err = L.Lines(p.stdout, keep=False), M.watch(L.Lines(p.stderr))
        m = err.wait_for(M.METRICS_LINE, 15)
        if not c.check(m is not None, "tail --metrics printed its port"):
            return
        url = "http://127.0.0.1:%d/metrics" % int(m.group(1))
        total = len(events) * copies
        expo = None
        end = time.monotonic() + 30
        while time.monotonic() < end:
            st, hd, body, dt = M.http("GET", url)
            if st == 200:
                expo = P.parse(body)
                if expo.total("jfr_events_total") == total:
                    break
            time.sleep(0.1)
        if not c.check(expo is not None and expo.total("jfr_events_total") == total,
                       "the tail's events: %s (%d)" % (expo and expo.total("jfr_events_total"),
                                                       total)):
            return
        info = expo.find("jfr_source_info")
        c.check(len(info) == 1 and info[0].labels.get("pid") == "14951"
                and info[0].labels.get("suite") == "metrics_tail"
                and "path" in info[0].labels and "peer" not in info[0].labels,
                "one source: %s" % (info[0].labels if info else None))
        src = info[0].labels.get("source") if info else None
        fails = []
        n = M.compare_model(model, expo, src, fails)
        c.check(not fails, "%d values = the model of %d copies of the fixture's events%s"
                % (n, copies, ": " + "; ".join(fails[:6]) if fails else ""))
        c.check(expo.value("jfr_chunks_total", source=src) == copies,
                "jfr_chunks_total %s (%d)" % (expo.value("jfr_chunks_total", source=src), copies))
        c.check(expo.find("jfrstream_connections_total") == [],
                "no jfrstream_connections_* in tail (listen only)")
        lint(c, body, a.promtool)
        p.send_signal(signal.SIGTERM)
        rc = L.wait(p, 30, "tail")
        c.check(rc == 0, "tail exit %s after SIGTERM" % rc)
    finally:
        shutil.rmtree(work, ignore_errors=True)


CASES = {"values": case_values, "errors": case_errors, "addr": case_addr, "stall": case_stall,
         "usage": case_usage, "ttl": case_ttl, "sources": case_sources, "series": case_series,
         "load": case_load, "http": case_http, "tail": case_tail}


def main():
    global WORKLOAD, SYNTHETIC
    ap = argparse.ArgumentParser()
    ap.add_argument("jfrstream")
    ap.add_argument("--promtool", default="promtool",
                    help="looked up on PATH; a name not there (e.g. none): run as "
                    "without promtool, its checks skipped")
    ap.add_argument("--connections", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=10,
                    help="load: copies of synthetic.jfr each connection sends")
    ap.add_argument("--fixture", default=WORKLOAD, help="test/data/workload.jfr")
    ap.add_argument("--synthetic", default=SYNTHETIC, help="test/data/synthetic.jfr")
    ap.add_argument("--only", action="append", choices=SCENARIOS)
    a = ap.parse_args()
    WORKLOAD, SYNTHETIC = a.fixture, a.synthetic
    a.promtool = shutil.which(a.promtool)
    js = L.cli(a.jfrstream)
    ok, why = M.has_metrics(js)
    if not ok:
        return L.skip(NAME, why)
    if not a.promtool:
        L.log("(no promtool on PATH (Debian's prometheus package): "
              "`promtool check metrics` not run)")
    fails = []
    skipped = []
    for name in a.only or SCENARIOS:
        L.log("%s:" % name)
        c = Case(name)
        t0 = time.monotonic()
        try:
            r = CASES[name](a, js, c)
            if isinstance(r, tuple) and r[0] == "skip":
                L.log("  SKIP %s: %s" % (name, r[1]))
                skipped.append(name)
        except Exception as e:  # noqa: BLE001 — reported as the case's failure
            import traceback
            traceback.print_exc()
            c.fails.append("%s: %s: %s" % (name, type(e).__name__, e))
        finally:
            L.cleanup()
            L._children.clear()
            for rep in M.sanitizer_reports():
                L.log(rep)
                c.fails.append("a sanitizer report on jfrstream's stderr: %s"
                               % rep.strip().splitlines()[0][:200])
        L.log("  (%s: %.1f s, %s)" % (name, time.monotonic() - t0,
                                      "%d failures" % len(c.fails) if c.fails else "ok"))
        fails += ["%s: %s" % (name, f) for f in c.fails]
    if fails:
        return L.result(NAME, False, "; ".join(fails[:8]))
    return L.result(NAME, True, "%s passed%s" % (", ".join(x for x in (a.only or SCENARIOS)
                                                           if x not in skipped),
                                                  "; skipped %s" % skipped if skipped else ""))


if __name__ == "__main__":
    sys.exit(main())
