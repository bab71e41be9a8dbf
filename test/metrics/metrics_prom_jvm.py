#!/usr/bin/env python3
"""metrics_prom_jvm.py — a real JVM through tools/jfr-pump into
`jfrstream listen --metrics`, scraped by the real Prometheus server.

    test/metrics/metrics_prom_jvm.py JFRSTREAM [--seconds 7] [--jdk MAJOR] [--prometheus BIN]
                             [--promtool BIN]

1. `jfrstream listen 127.0.0.1:0 --metrics 127.0.0.1:0 --json --label
   suite=metrics` (both ports read from its stderr);
2. `prometheus` (Debian's) on 127.0.0.1:FREE, one job scraping the listener's
   /metrics every second, storage in a temporary folder; waited for /-/ready;
3. test/metrics/GcWorkload.java (-XX:+UseSerialGC -Xmx64m: DefNew and
   SerialOld collections, a contended monitor, exceptions, threads) and
   tools/jfr-pump --settings profile --duration S into the listener;
4. once the pump's connection has ended (jfr_source_connected 0), two more
   scrapes by Prometheus; then, for the source (its `source` label, found by
   jfr_source_info{pid=JVM pid}):
   * Prometheus's query API (instant queries) against the listener's own
     --json lines of the same run (all types, one source):
       sum by (jvm_gc_name) of jvm_gc_duration_seconds_count and _sum = the
       jdk.GarbageCollection events' count and sum of durations (1e-6
       relative), the total too, and every bucket;
       jfr_events_total{type=T} = the count of T, for every T printed, and no
       other type;
       jvm_cpu_recent_utilization_ratio = jvmUser + jvmSystem and
       jvm_system_cpu_utilization_ratio = machineTotal of the jdk.CPULoad with
       the latest startTime; jvm_memory_used_bytes{heap} = heapUsed of the
       latest jdk.GCHeapSummary; sum(jvm_threads) = activeCount and
       jvm_classes = loaded - unloaded of the latest statistics;
       and every other value of the spec's table the events give (memory
       committed/limit/after GC, metaspace, class and exception counters,
       allocation, lock contention, safepoints, VM operations): the model of
       test/metrics/mlib.py, over all of the source's series at once;
   * every series of the source carries service (the JVM runs with
     -Dservice.name=gc-workload) and the --label;
   * jfr_source_info{source}: value 1, pid, peer, service, the --label, jvm_name,
     jvm_version, main_class, jvm_start (= jdk.JVMInformation), and the
     source id HOST:PID:JVM_START;
   * GET /metrics directly: 200, Content-Type text/plain; version=0.0.4;
     charset=utf-8, valid for test/metrics/promtext.py, the same model
     values, and `promtool check metrics` reports nothing.
Prints the events per type, the GC counts and sums, the gauges.
Exit 0 pass, 1 fail, 77 skip (no prometheus/promtool, no JDK 17+, or a
jfrstream without --metrics).
"""
import argparse
import os
import shutil
import signal
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mlib as M  # noqa: E402
from mlib import L, P  # noqa: E402

NAME = "metrics-prom-jvm"
WORKLOAD = os.path.join(M.HERE, "GcWorkload.java")
LABELS = {"suite": "metrics"}
SERVICE = "gc-workload"   # -Dservice.name: the label service of every series


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("jfrstream")
    ap.add_argument("--seconds", type=int, default=7, help="of recording (pump --duration)")
    ap.add_argument("--prometheus", default="prometheus")
    ap.add_argument("--promtool", default="promtool")
    ap.add_argument("--jdk", type=int, metavar="MAJOR",
                    help="the JVM (workload and pump) of this JDK version or newer, found by "
                         "test/find_jdk.py; default: java on PATH (17+)")
    a = ap.parse_args()
    global NAME
    if a.jdk:
        NAME += "-jdk%d" % a.jdk
    js = L.cli(a.jfrstream)
    prom_bin = shutil.which(a.prometheus)
    promtool = shutil.which(a.promtool)
    if not prom_bin or not promtool:
        return L.skip(NAME, "no %s on PATH (Debian's prometheus package)"
                      % (a.prometheus if not prom_bin else a.promtool))
    if a.jdk:
        home, why = L.find_jdk(a.jdk)
        if not home:
            return L.skip(NAME, why)
        java = L.java_bin(home)
        L.log(why)
    else:
        java = L.java_bin()
    if not java or L.java_major(java) < 17:
        return L.skip(NAME, "no JDK 17+ (%s; Debian: openjdk-17-jdk-headless)"
                      % (java or "java on PATH"))
    ok, why = M.has_metrics(js)
    if not ok:
        return L.skip(NAME, why)
    fails = []

    def check(cond, what):
        L.log("  %s: %s" % ("ok" if cond else "FAIL", what))
        if not cond:
            fails.append(what)
        return cond

    prom = None
    try:
        args = ["--json"]
        for k, v in LABELS.items():
            args += ["--label", "%s=%s" % (k, v)]
        lst = M.Listener(js, args)
        if not lst.ok():
            return L.result(NAME, False, "listen --metrics did not print both ports: "
                            + lst.err.text()[-800:])
        L.log("listener: JFR on %d, metrics on %s" % (lst.port, lst.url))
        prom = M.Prometheus(["127.0.0.1:%d" % lst.mport], binary=prom_bin)
        t0 = time.monotonic()
        if not prom.wait_ready(30):
            return L.result(NAME, False, "prometheus not ready in 30 s: " + prom.err.text()[-800:])
        L.log("prometheus %s ready in %.1f s" % (prom.base, time.monotonic() - t0))
        w = L.start([java, "-XX:+UseSerialGC", "-Xmx64m", "-Dservice.name=" + SERVICE, WORKLOAD,
                     "--seconds", "120"])
        wout, werr = L.Lines(w.stdout), L.Lines(w.stderr)
        pid = L.workload_pid(wout, 60)
        if not pid:
            return L.result(NAME, False, "GcWorkload did not start: " + werr.text()[-800:])
        L.log("GcWorkload pid %d; jfr-pump --settings profile --duration %ds" % (pid, a.seconds))
        pp, pout, perr = L.pump(java, ["--pid", str(pid), "--duration", "%ds" % a.seconds,
                                       "--connect", "127.0.0.1:%d" % lst.port,
                                       "--settings", "profile"])
        prc = L.wait(pp, 60 + 3 * a.seconds, "jfr-pump")
        perr.join()
        last = [l for _, l in perr.lines if "bytes" in l]
        if last:
            L.log("  pump: " + last[-1])
        if not check(prc == 0, "jfr-pump exit %s" % prc):
            L.log(perr.text()[-800:])
            return L.result(NAME, False, "; ".join(fails))
        # the source: jfr_source_info{pid=...}; wait until its input closed
        found = {}

        def ended(e):
            info = e.find("jfr_source_info", pid=str(pid))
            if len(info) != 1:
                return False
            found["info"] = info[0].labels
            src = info[0].labels.get("source")
            return e.value("jfr_source_connected", source=src) == 0

        e = lst.wait_expo(ended, 30, "the source's end")
        if not check(e is not None, "jfr_source_info{pid=%d} once, then jfr_source_connected 0 "
                     "(the pump's connection ended)" % pid):
            return L.result(NAME, False, "; ".join(fails))
        info = found["info"]
        source = info["source"]
        L.log("  source %r" % source)
        w.send_signal(signal.SIGTERM)
        n = prom.wait_scrapes(2, 30)
        check(n is not None, "Prometheus scraped twice more after the end (%s scrapes)" % n)
        # everything Prometheus has for the source (instant query), and
        # the queries of the issue one by one
        sel = 'source="%s"' % source.replace("\\", "\\\\").replace('"', '\\"')
        series = prom.query('{%s}' % sel)
        q = {}
        q["gc_count"] = prom.query('sum by (jvm_gc_name) (jvm_gc_duration_seconds_count{%s})' % sel)
        q["gc_sum"] = prom.query('sum by (jvm_gc_name) (jvm_gc_duration_seconds_sum{%s})' % sel)
        q["gc_total"] = prom.query('sum(jvm_gc_duration_seconds_count{%s})' % sel)
        q["events"] = prom.query('jfr_events_total{%s}' % sel)
        q["cpu"] = prom.query('jvm_cpu_recent_utilization_ratio{%s}' % sel)
        q["sys_cpu"] = prom.query('jvm_system_cpu_utilization_ratio{%s}' % sel)
        q["heap"] = prom.query('jvm_memory_used_bytes{%s,jvm_memory_type="heap"}' % sel)
        q["threads"] = prom.query('sum(jvm_threads{%s})' % sel)
        q["classes"] = prom.query('jvm_classes{%s}' % sel)
        q["info"] = prom.query('jfr_source_info{%s}' % sel)
        q["up"] = prom.query('up{job="%s"}' % prom.job)
        health = [(t["scrapeUrl"], t["health"], t["lastError"]) for t in prom.targets()]
        # the listener's /metrics directly
        st, hd, body, dt = lst.scrape()
        rc, lint = M.promtool_check(body, promtool)
        lrc = lst.stop()
        events = M.read_json_lines(l for _, l in lst.out.lines)
    finally:
        if prom:
            prom.stop()
        L.cleanup()

    L.log("listen exit %s; %d --json events" % (lrc, len(events)))
    check(lrc == 0, "listen exit %s" % lrc)
    model = M.Model(events)
    L.log("events per type (%d types):" % len(model.counts))
    for t, c in sorted(model.counts.items(), key=lambda x: (-x[1], x[0])):
        L.log("    %-45s %6d" % (t, c))
    for name, (c, s, b) in sorted(model.gc.items()):
        L.log("  GC %s: %d collections, %.9f s" % (name, c, s))
    check(all(x[1] == 1 for x in q["up"]) and all(h[1] == "up" for h in health),
          "the target is up: %s" % health)

    # --- Prometheus, the queries
    def one(rows):
        return rows[0][1] if len(rows) == 1 else None

    gc_count = {r[0].get("jvm_gc_name"): r[1] for r in q["gc_count"]}
    gc_sum = {r[0].get("jvm_gc_name"): r[1] for r in q["gc_sum"]}
    want_count = {k: v[0] for k, v in model.gc.items()}
    want_sum = {k: v[1] for k, v in model.gc.items()}
    check(len(want_count) >= 2, "the JVM had young and old collections: %s" % want_count)
    check(gc_count == want_count, "Prometheus: jvm_gc_duration_seconds_count by jvm_gc_name %s "
          "= the jdk.GarbageCollection events %s" % (gc_count, want_count))
    check(set(gc_sum) == set(want_sum) and all(M.close(gc_sum[k], want_sum[k]) for k in want_sum),
          "Prometheus: jvm_gc_duration_seconds_sum by jvm_gc_name %s = the sum of the durations "
          "%s (1e-6 relative)" % ({k: round(v, 9) for k, v in gc_sum.items()},
                                 {k: round(v, 9) for k, v in want_sum.items()}))
    check(one(q["gc_total"]) == sum(want_count.values()),
          "Prometheus: sum(jvm_gc_duration_seconds_count) %s = %d events"
          % (one(q["gc_total"]), sum(want_count.values())))
    actions = {(r[0].get("jvm_gc_name"), r[0].get("jvm_gc_action")) for r in series
               if r[0].get("__name__") == "jvm_gc_duration_seconds_count"}
    want_act = {("DefNew", "end of minor GC"), ("SerialOld", "end of major GC")}
    check(actions == want_act, "Prometheus: jvm_gc_action of the Serial collectors %s (%s)"
          % (sorted(actions), sorted(want_act)))
    ev = {r[0].get("type"): r[1] for r in q["events"]}
    diff = ["%s: Prometheus %s, --json %s" % (t, ev.get(t), model.counts.get(t))
            for t in sorted(set(ev) | set(model.counts)) if ev.get(t) != model.counts.get(t)]
    check(not diff and ev, "Prometheus: jfr_events_total{type} = the --json counts for all %d "
          "types (%d events)%s" % (len(model.counts), len(events),
                                   ": " + "; ".join(diff[:8]) if diff else ""))
    lastc = model.last.get("jdk.CPULoad")
    lasth = model.last.get("jdk.GCHeapSummary")
    lastt = model.last.get("jdk.JavaThreadStatistics")
    lastcl = model.last.get("jdk.ClassLoadingStatistics")
    check(lastc and M.close(one(q["cpu"]), lastc["jvmUser"] + lastc["jvmSystem"]),
          "Prometheus: jvm_cpu_recent_utilization_ratio %s = jvmUser + jvmSystem of the last "
          "jdk.CPULoad %s" % (one(q["cpu"]), lastc and (lastc["jvmUser"], lastc["jvmSystem"])))
    check(lastc and M.close(one(q["sys_cpu"]), lastc["machineTotal"]),
          "Prometheus: jvm_system_cpu_utilization_ratio %s = machineTotal %s"
          % (one(q["sys_cpu"]), lastc and lastc["machineTotal"]))
    check(lasth and one(q["heap"]) == lasth["heapUsed"],
          "Prometheus: jvm_memory_used_bytes{heap} %s = heapUsed of the last jdk.GCHeapSummary %s"
          " (%s)" % (one(q["heap"]), lasth and lasth["heapUsed"], lasth and lasth["when"]))
    check(lastt and one(q["threads"]) == lastt["activeCount"],
          "Prometheus: sum(jvm_threads) %s = activeCount %s (daemon %s)"
          % (one(q["threads"]), lastt and lastt["activeCount"], lastt and lastt["daemonCount"]))
    check(lastcl and one(q["classes"]) == lastcl["loadedClassCount"]
          - lastcl["unloadedClassCount"],
          "Prometheus: jvm_classes %s = loaded %s - unloaded %s"
          % (one(q["classes"]), lastcl and lastcl["loadedClassCount"],
             lastcl and lastcl["unloadedClassCount"]))
    # every value of the model through Prometheus
    pe = P.Exposition()
    for labels, value in series:
        lab = dict(labels)
        name = lab.pop("__name__")
        lab.pop("job", None)
        lab.pop("instance", None)
        pe.samples.append(P.Sample(name, lab, value, None, 0))
    pf = []
    nchk = M.compare_model(model, pe, source, pf)
    check(not pf, "Prometheus: %d values of the source (%d series) = the model of the events%s"
          % (nchk, len(series), ": " + "; ".join(pf[:6]) if pf else ""))

    # --- every series of the source carries service and the --label
    unlabeled = sorted({"%s%s" % (lab.get("__name__"), {k: v for k, v in lab.items()
                                                        if k in ("service", "suite")})
                        for lab, _ in series
                        if lab.get("service") != SERVICE or lab.get("suite") != LABELS["suite"]})
    check(series and not unlabeled, "Prometheus: all %d series of the source carry "
          "service=%s (-Dservice.name) and suite=%s%s"
          % (len(series), SERVICE, LABELS["suite"],
             ": not %s" % unlabeled[:5] if unlabeled else ""))

    # --- the source's labels
    jvm = model.last.get("jdk.JVMInformation") or next(
        (v for t, v in events if t == "jdk.JVMInformation"), None)
    pinfo = q["info"][0][0] if len(q["info"]) == 1 else {}
    want = {"pid": str(pid), "service": SERVICE}
    want.update(LABELS)
    if jvm:
        start_ms = M.iso_ns(jvm["jvmStartTime"]) // 1_000_000
        want.update({"jvm_name": jvm["jvmName"], "jvm_version": jvm["jvmVersion"],
                     "main_class": (jvm["javaArguments"] or "").split()[0],
                     "jvm_start": str(start_ms)})
        check(source.endswith(":%d:%d" % (pid, start_ms)),
              "source id %r is HOST:PID:JVM_START (pid %d, start %d)" % (source, pid, start_ms))
    else:
        check(False, "no jdk.JVMInformation in the --json output")
    bad = {k: (pinfo.get(k), v) for k, v in want.items() if pinfo.get(k) != v}
    check(len(q["info"]) == 1 and q["info"][0][1] == 1 and not bad
          and pinfo.get("peer", "").startswith("127.0.0.1:"),
          "Prometheus: jfr_source_info{source} = 1 with pid, peer %s, suite, jvm_* and main_class"
          "%s" % (pinfo.get("peer"), (": differ (got, want) %s" % bad) if bad else ""))

    # --- the direct scrape
    check(st == 200 and hd.get("content-type") == M.CONTENT_TYPE,
          "GET /metrics: %s, Content-Type %r, %d bytes in %.1f ms"
          % (st, hd.get("content-type"), len(body), dt * 1000))
    try:
        expo = P.parse(body)
        check(True, "the exposition parses: %d families, %d samples"
              % (len(expo.families), len(expo.samples)))
        df = []
        nchk = M.compare_model(model, expo, source, df)
        check(not df, "GET /metrics: %d values of the source = the model of the events%s"
              % (nchk, ": " + "; ".join(df[:6]) if df else ""))
        srcs = sorted({x.labels["source"] for x in expo.samples if "source" in x.labels})
        check(srcs == [source] and expo.value("jfrstream_metrics_sources") == 1,
              "one source in the exposition %s, jfrstream_metrics_sources %s (the stream's "
              "events before its jdk.JVMInformation are not left under its peer)"
              % (srcs, expo.value("jfrstream_metrics_sources")))
        for name in ("jfrstream_sources_total", "jfrstream_connections_total"):
            check(expo.value(name) == 1, "%s = %s (one connection)" % (name, expo.value(name)))
        check(expo.value("jfrstream_events_total") == len(events),
              "jfrstream_events_total %s = %d events" % (expo.value("jfrstream_events_total"),
                                                          len(events)))
        eb = expo.value("jfr_bytes_total", source=source)
        check(eb and eb == expo.value("jfrstream_bytes_total"),
              "jfr_bytes_total %s = jfrstream_bytes_total %s" % (
                  eb, expo.value("jfrstream_bytes_total")))
    except P.FormatError as err:
        check(False, "the exposition is invalid: %s" % err)
    check(rc == 0 and not lint, "promtool check metrics: exit %d%s"
          % (rc, (", " + lint[:600]) if lint else ", nothing to report"))
    for rep in M.sanitizer_reports():
        L.log(rep)
        check(False, "a sanitizer report on listen's stderr: %s" % rep.strip().splitlines()[0])
    L.log("  GC: %s" % ", ".join("%s %d in %.6f s" % (k, want_count[k], want_sum[k])
                                 for k in sorted(want_count)))
    return L.result(NAME, not fails, "; ".join(fails[:6]) if fails else
                    "%d events of %d types, GC %s = Prometheus; promtool clean"
                    % (len(events), len(model.counts), want_count))


if __name__ == "__main__":
    sys.exit(main())
