#!/usr/bin/env python3
"""profile-fixture.py — check `jfrstream collapsed` and `jfrstream pprof`
against folded stacks computed here from the JDK's `jfr print --json`.

usage: profile-fixture.py --jfrstream BIN (--jfr JFR | --json STORED.json)
                         [--feed-size N] [--protoc-proto PROTO] FILE...

For each FILE and each profile (cpu, alloc, lock, cpu --threads, alloc --dot)
the events are printed by `jfr print --json --stack-depth 4096` and folded
with the naming rules of async-profiler's converter (see
lib/conv/profile.h); the result must equal `jfrstream collapsed`
line for line and count for count. --threads frames carry the thread's
constant-pool key, which `jfr print` does not show: there `tid=N` is
compared as `tid=?` (and lines that become equal are summed on both sides).

pprof: the output is gunzipped and decoded here (a small protobuf reader);
the sample types must be the expected ones and, per stack (function names,
root first), the values must equal the collapsed weights with the type
suffixes removed. With --protoc-proto, `protoc --decode` (Debian's
profile.proto) must accept it too.
Exit: 0 all equal, 1 differences.
"""
import argparse
import gzip
import json
import re
import subprocess
import sys
import tempfile
import os

PROFILES = {
    'cpu': ['jdk.ExecutionSample'],
    'alloc': ['jdk.ObjectAllocationInNewTLAB', 'jdk.ObjectAllocationOutsideTLAB',
              'jdk.ObjectAllocationSample'],
    'lock': ['jdk.JavaMonitorEnter', 'jdk.ThreadPark'],
}
# JDK 9 and 10 (format 1.0) name the same events com.oracle.jdk.*
OLD_PREFIX = 'com.oracle.jdk.'
for _types in PROFILES.values():
    _types += [OLD_PREFIX + t[4:] for t in list(_types) if t != 'jdk.ObjectAllocationSample']


def jdk_name(t):
    """A format 1.0 event name as the JDK 11+ one."""
    return 'jdk.' + t[len(OLD_PREFIX):] if t.startswith(OLD_PREFIX) else t
TYPES = {'Interpreted': 0, 'JIT compiled': 1, 'Inlined': 2, 'Native': 3, 'C++': 4,
         'Kernel': 5, 'C1 compiled': 6}
SUFFIX = ['_[0]', '_[j]', '_[i]', '', '', '_[k]', '_[1]']
PRIM = {'B': 'byte', 'C': 'char', 'S': 'short', 'I': 'int', 'J': 'long', 'Z': 'boolean',
        'F': 'float', 'D': 'double'}


def duration_ns(s):
    """ISO-8601 duration as `jfr print --json` writes it -> ns (exact)."""
    m = re.fullmatch(r'(-)?PT(?:(\d+)H)?(?:(\d+)M)?(?:(\d+)(?:\.(\d+))?S)?', s)
    if not m:
        raise ValueError('duration ' + s)
    h, mi, sec, frac = (int(m.group(2) or 0), int(m.group(3) or 0), int(m.group(4) or 0),
                        (m.group(5) or '').ljust(9, '0')[:9])
    v = ((h * 60 + mi) * 60 + sec) * 10**9 + int(frac or 0)
    return -v if m.group(1) else v


def class_frame(cls):
    if cls is None:
        return None
    n = cls['name'] or ''
    depth = len(n) - len(n.lstrip('['))
    if depth and depth < len(n) and n[depth] in PRIM:
        base = PRIM[n[depth]]
    else:
        s = n[depth:]
        if depth and s.startswith('L'):
            s = s[1:-1] if s.endswith(';') else s[1:]
        base = s.replace('/', '.')
    return base + '[]' * depth


def frame_name(f, dot):
    m = f['method']
    if m is None:
        return 'unknown'
    t = TYPES.get(f['type'], 1)
    cls = (m['type'] or {}).get('name') or ''
    meth = m['name'] or ''
    if cls == '' or t in (4, 5):
        return meth
    if dot:
        cls = cls.replace('/', '.')
    return cls + '.' + meth if meth else cls


def fold(events, threads, dot):
    """-> {line: weight} with async-profiler's merged node types."""
    # trie: key (name, cls) -> node dict
    root = {'kids': {}, 'total': 0, 'self': 0}
    for e in events:
        t, v = jdk_name(e['type']), e['values']
        st = v.get('stackTrace')
        if st is None:
            continue
        path = []  # (name, type)
        if threads:
            th = v.get('sampledThread' if t == 'jdk.ExecutionSample' else 'eventThread')
            if th is None:
                path.append(('[tid=?]', 3))
            else:
                nm = th['javaName'] if th['javaName'] is not None else th['osName']
                # a name like async-profiler's "[tid=123]" is kept as it is
                # (and its number hidden like ours)
                path.append((re.sub(r'^\[tid=\d+\]$', '[tid=?]', nm) if nm.startswith('[tid=')
                             else '[%s tid=?]' % nm, 3))
        for f in reversed(st['frames']):
            path.append((frame_name(f, dot), TYPES.get(f['type'], 1)))
        ctype, w = 2, 1
        cls = None
        if t == 'jdk.ObjectAllocationInNewTLAB':
            w = v['tlabSize']
            if w == 0:
                w, ctype = v['allocationSize'], 5
            cls = v['objectClass']
        elif t == 'jdk.ObjectAllocationOutsideTLAB':
            w, ctype, cls = v['allocationSize'], 5, v['objectClass']
        elif t == 'jdk.ObjectAllocationSample':
            w, ctype, cls = v['weight'], 5, v['objectClass']
        elif t in ('jdk.JavaMonitorEnter', 'jdk.ThreadPark'):
            w = max(0, duration_ns(v['duration']))
            cls = v['monitorClass' if t == 'jdk.JavaMonitorEnter' else 'parkedClass']
        if cls is not None:
            path.append((class_frame(cls), ctype))
        node = root
        root['total'] += w
        for i, (name, typ) in enumerate(path):
            thread = threads and i == 0
            c = 3 if thread else (1 if typ in (0, 1, 2, 6) else typ)
            k = (name, c)
            n = node['kids'].get(k)
            if n is None:
                n = node['kids'][k] = {'kids': {}, 'total': 0, 'self': 0, 'cls': c,
                                       'i': 0, 'in': 0, 'c1': 0}
            n['total'] += w
            if not thread:
                if typ == 0:
                    n['i'] += w
                elif typ == 2:
                    n['in'] += w
                elif typ == 6:
                    n['c1'] += w
            node = n
        node['self'] += w
    out = {}

    def suffix(n):
        if n['cls'] != 1:
            return SUFFIX[n['cls']]
        if n['in'] * 3 >= n['total']:
            return '_[i]'
        if n['c1'] * 2 >= n['total']:
            return '_[1]'
        if n['i'] * 2 >= n['total']:
            return '_[0]'
        return '_[j]'

    def walk(n, prefix):
        for (name, _), c in n['kids'].items():
            line = prefix + [name + suffix(c)]
            if c['self'] > 0:
                key = ';'.join(line)
                out[key] = out.get(key, 0) + c['self']
            walk(c, line)
    sys.setrecursionlimit(100000)
    walk(root, [])
    return out


def parse_collapsed(text, norm_tid):
    out = {}
    for line in text.splitlines():
        stack, _, n = line.rpartition(' ')
        if norm_tid:
            stack = re.sub(r'^\[(.*) tid=\d+\]', r'[\1 tid=?]', stack)
            stack = re.sub(r'^\[tid=\d+\]', '[tid=?]', stack)
        out[stack] = out.get(stack, 0) + int(n)
    return out


# --------------------------------------------------------------- protobuf

def pb_fields(b):
    """Yield (field, wire, value) of one message (value: int or bytes)."""
    i = 0
    while i < len(b):
        key, i = varint(b, i)
        f, wt = key >> 3, key & 7
        if wt == 0:
            v, i = varint(b, i)
        elif wt == 2:
            n, i = varint(b, i)
            v, i = b[i:i + n], i + n
        elif wt == 1:
            v, i = int.from_bytes(b[i:i + 8], 'little'), i + 8
        elif wt == 5:
            v, i = int.from_bytes(b[i:i + 4], 'little'), i + 4
        else:
            raise ValueError('wire type %d' % wt)
        yield f, wt, v


def varint(b, i):
    v = s = 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7f) << s
        s += 7
        if c < 0x80:
            return v, i


def packed(v, wt):
    if wt == 0:
        return [v]
    out, i = [], 0
    while i < len(v):
        x, i = varint(v, i)
        out.append(x)
    return out


def decode_pprof(raw):
    strings, funcs, locs, samples, stypes = [], {}, {}, [], []
    for f, wt, v in pb_fields(raw):
        if f == 6:
            strings.append(v.decode('utf-8', 'surrogateescape'))
        elif f == 1:
            d = dict((ff, vv) for ff, _, vv in pb_fields(v))
            stypes.append((d.get(1, 0), d.get(2, 0)))
        elif f == 5:
            d = dict((ff, vv) for ff, _, vv in pb_fields(v))
            funcs[d[1]] = d.get(2, 0)
        elif f == 4:
            lid, fid = None, None
            for ff, _, vv in pb_fields(v):
                if ff == 1:
                    lid = vv
                elif ff == 4:
                    fid = dict((a, b) for a, _, b in pb_fields(vv))[1]
            locs[lid] = fid
        elif f == 2:
            ids, vals, labels = [], [], []
            for ff, w2, vv in pb_fields(v):
                if ff == 1:
                    ids += packed(vv, w2)
                elif ff == 2:
                    vals += packed(vv, w2)
                elif ff == 3:
                    d = dict((a, b) for a, _, b in pb_fields(vv))
                    labels.append((d.get(1, 0), d.get(2, 0)))
            samples.append((ids, vals, labels))
    types = [(strings[a], strings[b]) for a, b in stypes]
    folded = {}
    for ids, vals, labels in samples:
        names = [strings[funcs[locs[i]]] for i in reversed(ids)]
        for k, s in labels:
            if strings[k] == 'thread':
                names.insert(0, strings[s])
        key = ';'.join(names)
        folded[key] = folded.get(key, 0) + vals[0]
    return types, folded, len(samples)


def strip_suffix(folded):
    out = {}
    for k, v in folded.items():
        k2 = ';'.join(re.sub(r'_\[[0-9jik]\]$', '', f) for f in k.split(';'))
        out[k2] = out.get(k2, 0) + v
    return out


def diff(a, b, label):
    bad = [k for k in set(a) | set(b) if a.get(k) != b.get(k)]
    if bad:
        print('%s: %d differing stacks (of %d / %d)' % (label, len(bad), len(a), len(b)))
        for k in sorted(bad)[:5]:
            print('  jfrstream=%s expected=%s  %s' % (a.get(k), b.get(k), k[-300:]))
    return not bad


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--jfrstream', required=True)
    ap.add_argument('--jfr', help="the JDK's jfr tool")
    ap.add_argument('--json', help='instead of --jfr: the stored output of `jfr print --json '
                    '--stack-depth 64` of the (single) FILE, e.g. test/data/workload.json')
    ap.add_argument('--feed-size', help='also pass --feed-size to jfrstream')
    ap.add_argument('--protoc-proto')
    ap.add_argument('--pprof-tool', help='the pprof tool: `pprof -raw` must read the output '
                    'and its samples must add up to the collapsed total')
    ap.add_argument('files', nargs='+')
    a = ap.parse_args()
    if not a.jfr and not a.json:
        ap.error('--jfr or --json is needed')
    stored = json.load(open(a.json, encoding='utf-8'))['recording']['events'] if a.json else None
    # JFRSTREAM_TEST_WRAPPER (e.g. test/valgrind.sh): a command put before ours
    base = (os.environ.get('JFRSTREAM_TEST_WRAPPER', '').split() + [a.jfrstream] +
            (['--feed-size', a.feed_size] if a.feed_size else []))
    ok = True
    runs = [('cpu', []), ('alloc', []), ('lock', []), ('cpu', ['--threads']),
            ('alloc', ['--dot']), ('lock', ['--threads'])]
    with tempfile.TemporaryDirectory() as tmp:
        for path in a.files:
            cache = {}
            for prof, opts in runs:
                if prof not in cache:
                    if stored is not None:
                        events = [e for e in stored if e['type'] in PROFILES[prof]]
                    else:
                        r = subprocess.run([a.jfr, 'print', '--json', '--stack-depth', '4096',
                                            '--events', ','.join(PROFILES[prof]), path],
                                           capture_output=True)
                        if r.returncode != 0:
                            print('%s: not compared: jfr cannot read it: %s' %
                                  (os.path.basename(path),
                                   r.stderr.decode(errors='replace').strip()[:200]))
                            cache[prof] = None
                            continue
                        events = json.loads(r.stdout)['recording']['events']
                    # a stack-trace key the chunk does not define: the JDK
                    # reuses an earlier chunk's value, jfrstream (like
                    # async-profiler, constants per chunk) has no stack
                    ours = subprocess.run([a.jfrstream, 'print', '--json', '--stack-depth', '1',
                                           '--events', ','.join(PROFILES[prof]), path],
                                          check=True, capture_output=True).stdout
                    nostack = {}
                    for e in json.loads(ours)['recording']['events']:
                        if e['values'].get('stackTrace') is None:
                            k = (e['type'], e['values']['startTime'])
                            nostack[k] = nostack.get(k, 0) + 1
                    kept = []
                    for e in events:
                        k = (e['type'], e['values']['startTime'])
                        if nostack.get(k) and e['values'].get('stackTrace') is not None:
                            nostack[k] -= 1
                            print('%s: tolerated: %s at %s has a stack trace only in jfr '
                                  '(key from an earlier chunk)' % (os.path.basename(path), *k))
                            continue
                        kept.append(e)
                    cache[prof] = kept
                events = cache[prof]
                if events is None:
                    continue
                threads, dot = '--threads' in opts, '--dot' in opts
                want = fold(events, threads, dot)
                got_text = subprocess.run(base + ['collapsed', '--event', prof] + opts +
                                          [path], check=True, capture_output=True,
                                          text=True).stdout
                got = parse_collapsed(got_text, threads)
                label = '%s %s %s' % (os.path.basename(path), prof, ' '.join(opts))
                good = diff(got, want, label)
                ok = ok and good
                total = sum(want.values())
                print('%s: %s: %d events, %d stacks, total %d' %
                      (label, 'equal' if good else 'DIFFERENT', len(events), len(want), total))
                # pprof: same stacks and values, suffixes removed
                out = os.path.join(tmp, 'p.pb.gz')
                subprocess.run(base + ['pprof', '--event', prof, '-o', out] + opts +
                               [path], check=True)
                raw = gzip.open(out).read()
                types, pf, nsamples = decode_pprof(raw)
                exp_types = {'cpu': [('samples', 'count')],
                             'alloc': [('alloc_space', 'bytes'), ('alloc_objects', 'count')],
                             'lock': [('delay', 'nanoseconds'), ('contentions', 'count')]}[prof]
                if types != exp_types:
                    print('%s pprof: sample types %s, expected %s' % (label, types, exp_types))
                    ok = False
                exp = strip_suffix(parse_collapsed(got_text, False))
                good = diff(pf, exp, label + ' pprof')
                ok = ok and good
                print('%s pprof: %s: %d samples, %d stacks' %
                      (label, 'equal' if good else 'DIFFERENT', nsamples, len(pf)))
                if a.pprof_tool:
                    r = subprocess.run([a.pprof_tool, '-raw', out], capture_output=True,
                                       text=True)
                    body = r.stdout.split('Samples:', 1)[-1].split('Locations', 1)[0]
                    vals = [int(m.group(1)) for m in
                            re.finditer(r'^\s+(-?\d+)(?:\s+-?\d+)*: ', body, re.M)]
                    want_total = sum(exp.values())
                    if r.returncode != 0 or len(vals) != nsamples or sum(vals) != want_total:
                        print('%s pprof -raw: rc=%d, %d samples (want %d), total %d (want %d) %s'
                              % (label, r.returncode, len(vals), nsamples, sum(vals),
                                 want_total, r.stderr[-300:]))
                        ok = False
                    else:
                        print('%s pprof -raw: %d samples, total %d' %
                              (label, len(vals), sum(vals)))
                if a.protoc_proto:
                    d = os.path.dirname(a.protoc_proto)
                    r = subprocess.run(['protoc', '--decode=perftools.profiles.Profile',
                                        '-I', d, os.path.basename(a.protoc_proto)],
                                       input=raw, capture_output=True)
                    n = r.stdout.count(b'\nsample {')
                    if r.returncode != 0 or n != nsamples:
                        print('%s pprof: protoc: rc=%d, %d samples (want %d) %s' %
                              (label, r.returncode, n, nsamples, r.stderr[:300]))
                        ok = False
    return 0 if ok else 1


if __name__ == '__main__':
    sys.exit(main())
