#!/usr/bin/env python3
"""metrics_oracle.py — every metric of `listen --metrics` against the JDK.

    test/metrics/metrics_oracle.py JFRSTREAM --work DIR [--gen GEN_RECORDINGS_SH]
                                   FILE.jfr[=FILE.json] ...

Each recording is sent whole over 127.0.0.1 to its own `jfrstream listen
127.0.0.1:0 --metrics 127.0.0.1:0`; once the connection has ended, /metrics is
scraped and every series of that source is compared with what the JDK's `jfr
print --json` says of the same file (FILE.json when given: the committed
fixture's; else made with JDK 25's `jfr`, else 17's):

  jvm_gc_duration_seconds     per GC name: count, sum of durations, every
                              bucket (cumulative, le 0.0005 .. 10, +Inf), the
                              action (minor / major / cycle) from the name
  gauges ("last")             of the event with the latest startTime (ties:
                              any of them): CPU (jvmUser + jvmSystem,
                              machineTotal), heap used / committed / reserved,
                              heap used after the last "After GC" summary,
                              metaspace and class space used / committed,
                              threads (daemon, others), classes (loaded -
                              unloaded, loaded, unloaded), throwables
  sums                        allocation (weight, tlabSize, allocationSize per
                              event type), JavaMonitorEnter and SafepointBegin
                              count and durations, ExecuteVMOperation count and
                              durations per (operation, safepoint)
  jfr_events_total            per event type: the JSON's events of that type
  jfr_bytes_total             the file's size
  jfr_chunks_total            the file's chunks (walked by their headers)
and, for every family above whose events the recording lacks, no series at
all. `promtool check metrics` (when installed) must find nothing in the text.
With --gen, missing recordings are made with test/gen-recordings.sh into
DIR/recordings (JDK 17, and 25 when installed).
Exit 0 pass, 1 fail, 77 skip (no recording could be checked: no JDK, or
jfrstream built without --metrics).
"""
import argparse
import glob
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections import Counter, defaultdict

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from find_jdk import find_jdk  # noqa: E402
sys.path.insert(0, HERE)
import mlib as M  # noqa: E402

MAX_JSON_INPUT = 16 << 20  # jfr print --json writes ~90 bytes per input byte
BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]
fails = 0


def check(name, cond, detail=''):
    global fails
    if not cond:
        fails += 1
        print('FAIL: %s %s' % (name, str(detail)[:400]))
    return cond


# ------------------------------------------------------------ JSON values

def dur_s(v):
    """A duration as jfr print --json writes it: 'PT1M2.5S', or a number."""
    if isinstance(v, (int, float)):
        return float(v)
    m = re.match(r'^(-)?PT(?:(-?\d+)H)?(?:(-?\d+)M)?(?:(-?[\d.]+)S)?$', v)
    if not m:
        raise ValueError(v)
    neg, h, mi, s = m.groups()
    t = int(h or 0) * 3600 + int(mi or 0) * 60 + float(s or 0)
    return -t if neg else t


close = M.close
iso_ns = M.iso_ns


def gc_action(name):
    if any(w in name for w in ('New', 'Scavenge', 'Young', 'Minor')):
        return 'end of minor GC'
    if any(w in name for w in ('Old', 'Full', 'MarkSweep', 'Major')):
        return 'end of major GC'
    return 'end of GC cycle'


def base(t):
    return t[len('com.oracle.'):] if t.startswith('com.oracle.jdk.') else t


def expected(events):
    """What the metrics must say, from the JDK's JSON events."""
    by = defaultdict(list)
    for e in events:
        by[base(e['type'])].append(e['values'])

    def lasts(t):
        es = by.get(t, [])
        if not es:
            return []
        top = max(iso_ns(v['startTime']) for v in es)
        return [v for v in es if iso_ns(v['startTime']) == top]

    ex = {'gc': {}, 'last': {}, 'sum': {}, 'vmop': {}}
    for v in by.get('jdk.GarbageCollection', []):
        g = ex['gc'].setdefault(v['name'], {'n': 0, 'sum': 0.0, 'b': [0] * len(BUCKETS)})
        d = dur_s(v['duration'])
        g['n'] += 1
        g['sum'] += d
        for i, le in enumerate(BUCKETS):
            if d <= le:
                g['b'][i] += 1
    # each "last" family: the candidate value sets of the latest events
    L = ex['last']
    L['cpu'] = [(v['jvmUser'] + v['jvmSystem'], v['machineTotal']) for v in lasts('jdk.CPULoad')]
    L['heap'] = [(v['heapUsed'], v['heapSpace']['committedSize'], v['heapSpace']['reservedSize'])
                 for v in lasts('jdk.GCHeapSummary')]
    after = [v for v in by.get('jdk.GCHeapSummary', []) if v.get('when') == 'After GC']
    if after:
        top = max(iso_ns(v['startTime']) for v in after)
        L['after'] = [(v['heapUsed'],) for v in after if iso_ns(v['startTime']) == top]
    else:
        L['after'] = []
    L['meta'] = [(v['metaspace']['used'], v['metaspace']['committed'], v['classSpace']['used'],
                  v['classSpace']['committed']) for v in lasts('jdk.MetaspaceSummary')]
    L['threads'] = [(v['daemonCount'], v['activeCount'] - v['daemonCount'])
                    for v in lasts('jdk.JavaThreadStatistics')]
    L['classes'] = [(v['loadedClassCount'] - v['unloadedClassCount'], v['loadedClassCount'],
                     v['unloadedClassCount']) for v in lasts('jdk.ClassLoadingStatistics')]
    L['exc'] = [(v['throwables'],) for v in lasts('jdk.ExceptionStatistics')]
    S = ex['sum']
    for t, f in (('jdk.ObjectAllocationSample', 'weight'), ('jdk.ObjectAllocationInNewTLAB', 'tlabSize'),
                 ('jdk.ObjectAllocationOutsideTLAB', 'allocationSize')):
        if by.get(t):
            S['alloc:' + t] = sum(v[f] for v in by[t])
    for t, k in (('jdk.JavaMonitorEnter', 'lock'), ('jdk.SafepointBegin', 'safepoint')):
        if by.get(t):
            S[k + ':n'] = len(by[t])
            S[k + ':s'] = sum(dur_s(v['duration']) for v in by[t])
    for v in by.get('jdk.ExecuteVMOperation', []):
        k = (v['operation'] or '', 'true' if v['safepoint'] else 'false')
        o = ex['vmop'].setdefault(k, [0, 0.0])
        o[0] += 1
        o[1] += dur_s(v['duration'])
    ex['types'] = Counter(e['type'] for e in events)
    return ex


# ------------------------------------------------------------ exposition

SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$')
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


def parse(text):
    out = []
    for line in text.splitlines():
        if not line or line.startswith('#'):
            continue
        m = SAMPLE.match(line)
        if not m:
            raise ValueError('bad line: ' + line)
        labels = {k: v.encode().decode('unicode_escape') if '\\' in v else v
                  for k, v in LABEL.findall(m.group(2) or '')}
        out.append((m.group(1), labels, float(m.group(3))))
    return out


def chunks_of(path):
    n, off = 0, 0
    with open(path, 'rb') as f:
        data = f.read()
    while off + 16 <= len(data) and data[off:off + 4] == b'FLR\0':
        size = int.from_bytes(data[off + 8:off + 16], 'big')
        if size <= 0:
            break
        n += 1
        off += size
    return n


# ------------------------------------------------------------ one file

def run_one(jfrstream, path, events, work):
    name = os.path.basename(path)
    err_path = os.path.join(work, name + '.listen.err')
    errf = open(err_path, 'w+')
    p = subprocess.Popen([jfrstream, 'listen', '127.0.0.1:0', '--metrics', '127.0.0.1:0', '--summary'],
                         stdout=subprocess.DEVNULL, stderr=errf)
    try:
        lport = mport = None
        deadline = time.time() + 20
        while time.time() < deadline and (lport is None or mport is None):
            errf.seek(0)
            t = errf.read()
            m = re.search(r'listening on 127\.0\.0\.1:(\d+)', t)
            lport = int(m.group(1)) if m else None
            m = re.search(r'metrics on http://127\.0\.0\.1:(\d+)/metrics', t)
            mport = int(m.group(1)) if m else None
            if p.poll() is not None:
                break
            time.sleep(0.05)
        if 'built without libmicrohttpd' in t:
            return 'skip'
        if not check(name + ': listen started', lport and mport, t):
            return 'fail'
        with socket.create_connection(('127.0.0.1', lport), timeout=30) as s, open(path, 'rb') as f:
            s.sendall(f.read())
        url = 'http://127.0.0.1:%d/metrics' % mport
        text = ''
        deadline = time.time() + 60
        while time.time() < deadline:
            text = urllib.request.urlopen(url, timeout=15).read().decode()
            if re.search(r'^jfrstream_sources_open 0$', text, re.M) and \
                    re.search(r'^jfrstream_sources_total 1$', text, re.M):
                break
            time.sleep(0.1)
    finally:
        p.send_signal(signal.SIGTERM)
        try:
            p.wait(timeout=30)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
        errf.close()
    compare(name, path, text, events, work)
    return 'ran'


def compare(name, path, text, events, work):
    with open(os.path.join(work, name + '.metrics.txt'), 'w') as f:
        f.write(text)
    samples = parse(text)
    src = [l for n, l, v in samples if n == 'jfr_source_info']
    if not check(name + ': one source', len(src) == 1, src):
        return
    sid = src[0]['source']
    mine = [(n, l, v) for n, l, v in samples if l.get('source') == sid]

    def get(metric, **labels):
        vals = [v for n, l, v in mine if n == metric and all(l.get(k) == w for k, w in labels.items())]
        return vals[0] if len(vals) == 1 else (None if not vals else vals)

    def present(metric):
        return any(n == metric for n, l, v in mine)

    ex = expected(events)
    counts = Counter()
    # GC
    for gname, g in ex['gc'].items():
        lab = {'jvm_gc_name': gname, 'jvm_gc_action': gc_action(gname)}
        check('%s: gc %s count' % (name, gname), get('jvm_gc_duration_seconds_count', **lab) == g['n'],
              (get('jvm_gc_duration_seconds_count', **lab), g['n']))
        check('%s: gc %s sum' % (name, gname), close(get('jvm_gc_duration_seconds_sum', **lab), g['sum'], 1e-9),
              (get('jvm_gc_duration_seconds_sum', **lab), g['sum']))
        for i, le in enumerate(BUCKETS):
            check('%s: gc %s le %s' % (name, gname, le),
                  get('jvm_gc_duration_seconds_bucket', le=repr_le(le), **lab) == g['b'][i])
        check('%s: gc %s +Inf' % (name, gname),
              get('jvm_gc_duration_seconds_bucket', le='+Inf', **lab) == g['n'])
        counts['gc'] += g['n']
    check(name + ': no other GC names',
          {l['jvm_gc_name'] for n, l, v in mine if n == 'jvm_gc_duration_seconds_count'} == set(ex['gc']))
    # last values
    L = ex['last']
    spec = {
        'cpu': [('jvm_cpu_recent_utilization_ratio', {}), ('jvm_system_cpu_utilization_ratio', {})],
        'heap': [('jvm_memory_used_bytes', {'jvm_memory_type': 'heap'}),
                 ('jvm_memory_committed_bytes', {'jvm_memory_type': 'heap'}),
                 ('jvm_memory_limit_bytes', {'jvm_memory_type': 'heap'})],
        'after': [('jvm_memory_used_after_last_gc_bytes', {'jvm_memory_type': 'heap'})],
        'meta': [('jvm_memory_used_bytes', {'jvm_memory_pool_name': 'Metaspace'}),
                 ('jvm_memory_committed_bytes', {'jvm_memory_pool_name': 'Metaspace'}),
                 ('jvm_memory_used_bytes', {'jvm_memory_pool_name': 'Compressed Class Space'}),
                 ('jvm_memory_committed_bytes', {'jvm_memory_pool_name': 'Compressed Class Space'})],
        'threads': [('jvm_threads', {'jvm_thread_daemon': 'true'}), ('jvm_threads', {'jvm_thread_daemon': 'false'})],
        'classes': [('jvm_classes', {}), ('jvm_class_loaded_total', {}), ('jvm_class_unloaded_total', {})],
        'exc': [('jvm_exceptions_thrown_total', {})],
    }
    for fam, metrics in spec.items():
        cands = L.get(fam) or []
        got = tuple(get(m, **lab) for m, lab in metrics)
        if not cands:
            check('%s: %s absent' % (name, fam), all(g is None for g in got), got)
            continue
        ok = any(all(close(g, float(c)) for g, c in zip(got, cand)) for cand in cands)
        check('%s: %s last values' % (name, fam), ok, (got, cands[:3]))
        counts['last'] += 1
    # sums
    S = ex['sum']
    for t in ('jdk.ObjectAllocationSample', 'jdk.ObjectAllocationInNewTLAB', 'jdk.ObjectAllocationOutsideTLAB'):
        got = get('jvm_memory_allocated_bytes_total', jfr_event=t)
        want = S.get('alloc:' + t)
        check('%s: allocation %s' % (name, t), (got is None and want is None) or close(got, want, 1e-12), (got, want))
    for k, m in (('lock', 'jvm_lock_contention'), ('safepoint', 'jvm_safepoint')):
        n_name = 'jvm_lock_contentions_total' if k == 'lock' else 'jvm_safepoints_total'
        gn, gs = get(n_name), get(m + '_seconds_total')
        wn, ws = S.get(k + ':n'), S.get(k + ':s')
        check('%s: %s count' % (name, k), gn == wn, (gn, wn))
        check('%s: %s seconds' % (name, k), (gs is None and ws is None) or close(gs, ws, 1e-9), (gs, ws))
    for (op, sp), (n, s) in ex['vmop'].items():
        check('%s: vm op %s/%s count' % (name, op, sp), get('jvm_vm_operations_total', jvm_vm_operation=op, jvm_safepoint=sp) == n)
        check('%s: vm op %s/%s seconds' % (name, op, sp),
              close(get('jvm_vm_operation_seconds_total', jvm_vm_operation=op, jvm_safepoint=sp), s, 1e-9))
    check(name + ': vm op sets', {(l['jvm_vm_operation'], l['jvm_safepoint']) for n, l, v in mine
                                  if n == 'jvm_vm_operations_total'} == set(ex['vmop']))
    # events, bytes, chunks
    got_types = {l['type']: v for n, l, v in mine if n == 'jfr_events_total'}
    check(name + ': jfr_events_total per type', got_types == dict(ex['types']),
          sorted(set(got_types.items()) ^ set(ex['types'].items()))[:6])
    check(name + ': jfr_bytes_total', get('jfr_bytes_total') == os.path.getsize(path),
          (get('jfr_bytes_total'), os.path.getsize(path)))
    check(name + ': jfr_chunks_total', get('jfr_chunks_total') == chunks_of(path), (get('jfr_chunks_total'), chunks_of(path)))
    check(name + ': jfr_source_connected 0', get('jfr_source_connected') == 0)
    check(name + ': no parse error', not present('jfr_parse_errors_total'))
    promtool = shutil.which('promtool')
    if promtool:
        rc, out = M.promtool_check(text.encode(), promtool)
        check(name + ': promtool check metrics', rc == 0 and not out, out)
    print('ok: %s: %d events of %d types, %d GCs in %d names, %d last-value families, %d VM operation kinds, '
          '%d series of the source%s; sums: %s' % (
              name, sum(ex['types'].values()), len(ex['types']), counts['gc'], len(ex['gc']), counts['last'],
              len(ex['vmop']), len(mine), ', promtool clean' if promtool else '',
              ', '.join('%s=%.9g' % kv for kv in sorted(ex['sum'].items()))))


def repr_le(le):
    return {0.0005: '0.0005', 0.001: '0.001', 0.0025: '0.0025', 0.005: '0.005', 0.01: '0.01',
            0.025: '0.025', 0.05: '0.05', 0.1: '0.1', 0.25: '0.25', 0.5: '0.5', 1: '1', 2.5: '2.5',
            5: '5', 10: '10'}[le]


# ------------------------------------------------------------ main

def make_tlab_recording(gen, work):
    """A JDK 17 recording with the events `profile` leaves off that the
    metrics read: jdk.ObjectAllocationInNewTLAB, ObjectAllocationOutsideTLAB
    and jdk.SafepointBegin (event settings on the command line, JDK 17+)."""
    out = os.path.join(work, 'jdk17-tlab.jfr')
    if os.path.exists(out):
        return out
    home, _ = find_jdk(17)
    java = os.path.join(home, 'bin', 'java') if home else shutil.which('java')
    if not java:
        return None
    workload = os.path.join(os.path.dirname(os.path.abspath(gen)), 'java', 'Workload.java')
    opts = ('filename=%s.tmp,settings=profile,jdk.ObjectAllocationInNewTLAB#enabled=true,'
            'jdk.ObjectAllocationOutsideTLAB#enabled=true,jdk.SafepointBegin#enabled=true' % out)
    r = subprocess.run([java, '-XX:StartFlightRecording:' + opts, workload, '--quiet', '--seconds', '2',
                        '--threads', '2'], capture_output=True, text=True, timeout=300, cwd=work)
    if not check('the TLAB recording (%s)' % java, r.returncode == 0 and os.path.exists(out + '.tmp'),
                 r.stdout[-300:] + r.stderr[-300:]):
        return None
    os.rename(out + '.tmp', out)
    return out


def jfr_tool():
    for v in (25, 17):
        home, _ = find_jdk(v)
        if home and os.path.exists(os.path.join(home, 'bin', 'jfr')):
            return os.path.join(home, 'bin', 'jfr')
    return shutil.which('jfr')


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('jfrstream')
    ap.add_argument('--work', required=True)
    ap.add_argument('--gen')
    ap.add_argument('files', nargs='*')
    a = ap.parse_intermixed_args()
    os.makedirs(a.work, exist_ok=True)
    items = [(f.split('=', 1) + [None])[:2] for f in a.files]
    jfr = jfr_tool()
    if a.gen:
        rec = os.path.join(a.work, 'recordings')
        if not glob.glob(os.path.join(rec, '*-profile.jfr')):
            if shutil.which('java') or glob.glob('/usr/lib/jvm/*/bin/java'):
                shutil.rmtree(rec, ignore_errors=True)
                os.makedirs(rec)
                r = subprocess.run([a.gen, rec], capture_output=True, text=True, timeout=600)
                if r.returncode not in (0, 77):
                    check('gen-recordings.sh', False, r.stdout[-400:] + r.stderr[-400:])
            else:
                print('note: no java: no recordings generated')
        items += [(f, None) for f in sorted(glob.glob(os.path.join(rec, '*.jfr')))]
        tlab = make_tlab_recording(a.gen, a.work)
        if tlab:
            items.append((tlab, None))
    ran = 0
    for path, js in items:
        if js:
            with open(js) as f:
                events = json.load(f)['recording']['events']
        else:
            if not jfr:
                print('note: %s: no JDK jfr tool: not checked' % path)
                continue
            if os.path.getsize(path) > MAX_JSON_INPUT:
                print('note: %s: over %d MB: its JSON would not fit in memory here: not checked'
                      % (path, MAX_JSON_INPUT >> 20))
                continue
            r = subprocess.run([jfr, 'print', '--json', path], capture_output=True, timeout=600)
            if not check(os.path.basename(path) + ': jfr print --json', r.returncode == 0, r.stderr[-300:]):
                continue
            events = json.loads(r.stdout)['recording']['events']
        res = run_one(a.jfrstream, path, events, a.work)
        if res == 'skip':
            print('SKIP: jfrstream was built without libmicrohttpd: --metrics refused (Debian: '
                  'apt-get install libmicrohttpd-dev, then meson setup --reconfigure build)')
            sys.exit(77)
        ran += res == 'ran'
    if not ran and not fails:
        print('SKIP: no recording could be checked: no JDK (Debian: openjdk-17-jdk-headless) '
              'for the recordings and its jfr tool')
        sys.exit(77)
    print('%d recordings checked (reference: %s), %d failures' % (ran, jfr or 'the committed JSON', fails))
    sys.exit(1 if fails else 0)


if __name__ == '__main__':
    main()
