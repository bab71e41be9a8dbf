#!/usr/bin/env python3
"""profile-producers.py — `jfrstream collapsed` on the recordings of other
producers (../shared/data/producers: async-profiler via Pyroscope, dd-trace-java,
a JetBrains IDE, ...) against async-profiler's converter semantics computed
by the JDK's own reader: test/java/ApFold.java (RecordingFile, one chunk at a
time), every job in one JVM.

usage: profile-producers.py --jfrstream BIN --java JAVA --apfold ApFold.java
                            [--java25 JAVA | --jdk25] DIR

Per job (a profile of one or more files with options: cpu, wall, alloc, live,
nativemem, nativemem --leak, lock, --threads, --state, --include/--exclude,
--reverse, --lines, --minwidth, --dot, --from/--to, two files) every stack
line and weight must be equal; for six of them the pprof output, decoded by
test/profile/profile-fixture.py, must hold the same stacks and weights. Lock weights
are durations converted from the producer's ticks, where the JDK and
jfrstream round each event differently: there a stack's weight may differ by
2 ns + 2e-4 of it. Known totals are asserted (wall.jfr weighted by
`samples`: 26,246). A file the JDK cannot read is reported and skipped.
With --java25 (a JDK 25 `java`, when present; --jdk25: the one of the JDK 25
or newer that test/find_jdk.py finds) a short recording with
jdk.CPUTimeSample is made and its `--event cputime` profile compared too.
Exit: 0 equal, 1 differences, 77 skipped (no JDK or no DIR).
"""
import argparse
import gzip
import os
import shutil
import subprocess
import sys
import tempfile
import importlib.util


def oracle_module():
    """test/profile/profile-fixture.py (its pprof decoder)."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'profile-fixture.py')
    spec = importlib.util.spec_from_file_location('profile_oracle', path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod

# file -> jobs (options); every file also gets `--threads` (cpu)
JOBS = {
    'wall.jfr': ['--event wall', '--event wall --threads', '--event wall --state sleeping',
                 '--event wall --state runnable --reverse', '--event wall --count'],
    'wall_tick_sample.jfr': ['--event wall --threads'],
    'nativemem.jfr': ['--event nativemem', '--event nativemem --leak',
                      '--event nativemem --leak --count', '--event nativemem --threads --dot'],
    'dump2.jfr': ['--event live --threads', '--event alloc'],
    'async-profiler.jfr': ['', '--event alloc --threads'],
    'cortex-dev-01__kafka-0__cpu__0.jfr': [
        '--state default,runnable', '--include .*epoll.*', '--exclude .*Unsafe_Park.*',
        '--include .*kafka.* --exclude .*Selector.*', '--minwidth 1', '--lines', '--reverse',
        '--dot --threads', '--from 2000 --to -3000',
        '--threads cortex-dev-01__kafka-0__cpu__1.jfr'],
    'cortex-dev-01__kafka-0__cpu_lock0_alloc0__0.jfr': ['--event alloc --threads', '--event lock',
                                                        '--event lock --threads --count'],
    'goland-multichunk.jfr': ['--event alloc', '--event lock --count'],
    'dd-trace-java.jfr': ['--event alloc', '--event lock'],
    'object-allocation-sample.jfr': ['--event alloc --threads'],
    'example.jfr': ['--event alloc', '--event lock'],
}
# jobs whose pprof output is decoded too: per stack equal to collapsed
PPROF = {('wall.jfr', '--event wall --threads'), ('nativemem.jfr', '--event nativemem --leak'),
         ('dump2.jfr', '--event live --threads'), ('cputime.jfr', '--event cputime'),
         ('cortex-dev-01__kafka-0__cpu__0.jfr', '--state default,runnable'),
         ('async-profiler.jfr', '')}
TOTALS = {('wall.jfr', '--event wall'): 26246, ('wall.jfr', '--event wall --count'): 1780}


def parse(text):
    out = {}
    for line in text.splitlines():
        stack, _, n = line.rpartition(' ')
        out[stack] = out.get(stack, 0) + int(n)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--jfrstream', required=True)
    ap.add_argument('--java', required=True)
    ap.add_argument('--apfold', required=True)
    ap.add_argument('--java25')
    ap.add_argument('--jdk25', action='store_true')
    ap.add_argument('dir')
    a = ap.parse_args()
    if not os.path.isdir(a.dir):
        print('profile-producers: SKIP: %s absent (no ../shared/data)' % a.dir)
        return 77
    if a.jdk25:
        sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
        from find_jdk import find_jdk
        home, why = find_jdk(25)
        print('profile-producers: %s%s' % (why, '' if home else ': no jdk.CPUTimeSample recording'))
        a.java25 = os.path.join(home, 'bin', 'java') if home else None
    java = shutil.which(a.java) or (a.java if os.path.isfile(a.java) else None)
    if not java:
        print('profile-producers: SKIP: no JDK (%s not found)' % a.java)
        return 77
    wrapper = os.environ.get('JFRSTREAM_TEST_WRAPPER', '').split()
    tmp = tempfile.mkdtemp(prefix='prof-producers-')
    try:
        names = sorted(n[:-3] for n in os.listdir(a.dir) if n.endswith('.jfr.gz'))
        for n in names:
            with gzip.open(os.path.join(a.dir, n + '.gz')) as src, \
                    open(os.path.join(tmp, n), 'wb') as dst:
                shutil.copyfileobj(src, dst)
        if a.java25 and os.access(a.java25, os.X_OK):
            # a JDK 25 recording with jdk.CPUTimeSample (Linux CPU-time sampler)
            spin = os.path.join(tmp, 'Spin.java')
            with open(spin, 'w') as f:
                f.write('public class Spin { public static void main(String[] a) { long t = '
                        'System.nanoTime(), x = 0; while (System.nanoTime() - t < 1_000_000_000L)'
                        ' x += Long.numberOfTrailingZeros(x * 31 + t); System.out.println(x); } }\n')
            rec = os.path.join(tmp, 'cputime.jfr')
            r = subprocess.run([a.java25, '-XX:StartFlightRecording:filename=%s,settings=profile,'
                                '+jdk.CPUTimeSample#enabled=true,+jdk.CPUTimeSample#throttle=1ms'
                                % rec, spin], capture_output=True, text=True)
            if r.returncode == 0 and os.path.exists(rec):
                names.append('cputime.jfr')
                JOBS['cputime.jfr'] = ['--event cputime', '--event cputime --threads --lines']
            else:
                print('note: no jdk.CPUTimeSample recording: %s' % r.stderr[-300:])
        else:
            print('note: no JDK 25: jdk.CPUTimeSample not checked')
        jobs = []
        for n in names:
            for opts in ['--threads'] + JOBS.get(n, []):
                words = opts.split()
                extra = [os.path.join(tmp, w) for w in words if w.endswith('.jfr')]
                words = [w for w in words if not w.endswith('.jfr')]
                jobs.append((n, opts, words, [os.path.join(tmp, n)] + extra))
        jobfile = os.path.join(tmp, 'jobs')
        with open(jobfile, 'w') as f:
            for i, (_, _, words, files) in enumerate(jobs):
                f.write('%d\t%s\n' % (i, ' '.join(words + files)))
        r = subprocess.run([java, a.apfold, '--jobs', jobfile], capture_output=True, text=True)
        if r.returncode != 0:
            print('profile-producers: FAIL: ApFold exit %d\n%s' % (r.returncode, r.stderr[-3000:]))
            return 1
        want, errors, cur = {}, {}, None
        for line in r.stdout.split('\n'):
            if line.startswith('#job '):
                cur = int(line[5:])
                want[cur] = []
            elif line.startswith('#error '):
                i, _, msg = line[7:].partition(' ')
                errors[int(i)] = msg
                cur = None
            elif line and cur is not None:
                want[cur].append(line)
        fails = compared = lines = 0
        unread = set()
        for i, (n, opts, words, files) in enumerate(jobs):
            if i in errors:
                unread.add(n)
                print('skip: %s %s: the JDK cannot read it: %s' % (n, opts, errors[i][:160]))
                continue
            got = subprocess.run(wrapper + [a.jfrstream, 'collapsed'] + words + files,
                                 capture_output=True, text=True)
            if got.returncode != 0:
                print('FAIL: %s %s: jfrstream exit %d: %s' % (n, opts, got.returncode,
                                                              got.stderr[:300]))
                fails += 1
                continue
            w, g = parse('\n'.join(want[i])), parse(got.stdout)
            lock = '--event lock' in opts and '--count' not in opts
            bad = []
            for k in sorted(set(w) | set(g)):
                x, y = w.get(k), g.get(k)
                if x == y:
                    continue
                if lock and x is not None and y is not None and abs(x - y) <= 2 + x // 5000:
                    continue
                bad.append((k, x, y))
            total = sum(g.values())
            note = ''
            if (n, opts) in PPROF and not bad:
                # pprof: functions are the names without the type suffix, and
                # keep a ';' that collapsed writes '|'
                po = oracle_module()
                out = os.path.join(tmp, 'p.pb.gz')
                r2 = subprocess.run(wrapper + [a.jfrstream, 'pprof'] + words + ['-o', out] + files,
                                    capture_output=True, text=True)
                types, folded, nsamples = po.decode_pprof(gzip.open(out).read()) \
                    if r2.returncode == 0 else ([], {}, 0)
                want_p = po.strip_suffix({k.replace('|', ';'): v for k, v in g.items()})
                if r2.returncode != 0 or not types or want_p != folded:
                    bad.append(('<pprof: exit %d, %d samples>' % (r2.returncode, nsamples),
                                sum(want_p.values()), sum(folded.values())))
                else:
                    note = '; pprof %s/%s: %d samples equal' % (types[0][0], types[0][1], nsamples)
            t = TOTALS.get((n, opts))
            if t is not None and total != t:
                bad.append(('<total>', t, total))
            compared += 1
            lines += len(g)
            if bad:
                fails += 1
                print('FAIL: %s %s: %d of %d stacks differ' % (n, opts, len(bad), len(w)))
                for k, x, y in bad[:5]:
                    print('   converter %s jfrstream %s: %s' % (x, y, k[:400]))
            else:
                print('ok: %s %s: %d stacks, total %d%s%s' % (n, opts, len(g), total,
                                                            ' (asserted)' if t is not None else '',
                                                            note))
        print('profile-producers: files=%d jobs=%d compared=%d stacks=%d unreadable-by-jdk=%s '
              'failures=%d' % (len(names), len(jobs), compared, lines,
                               ','.join(sorted(unread)) or '-', fails))
        return 1 if fails or compared == 0 else 0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == '__main__':
    sys.exit(main())
