#!/usr/bin/env python3
"""examples.py — the programs of examples/ give the right answers.

usage: test/install/examples.py EXAMPLES_DIR JFRSTREAM FILE.jfr FILE.summary.txt ...

  count_events FILE      the per-type event counts of `jfr summary` (the
                         committed oracle output FILE.summary.txt)
  socket_callback --once the fixture sent over 127.0.0.1: one line per
                         jdk.ExecutionSample, its top frame, as in
                         `jfrstream print --json` (sorted: ordering is per chunk)
  tail_repo DIR 2000     a folder holding a copy of the fixture: every event,
                         per-type counts as in the summary
  stream_to_pprof FILE|- [cpu|alloc|lock]
                         the file, and the same bytes on stdin: the bytes of
                         `jfrstream pprof --event E -o OUT FILE`, which decode
                         (python's protobuf reader of test/profile/profile-fixture.py)
                         to the sample types of E and to the stacks and
                         weights of `jfrstream collapsed` (suffixes removed)
"""
import gzip
import importlib.util
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
from collections import Counter

ex_dir, jfrstream = sys.argv[1], sys.argv[2]
pairs = list(zip(sys.argv[3::2], sys.argv[4::2]))
fails = 0
TIMEOUT = 30


def check(name, cond, detail=''):
    global fails
    print(('ok: ' if cond else 'FAIL: ') + name + ('' if cond else ' ' + str(detail)[:600]))
    if not cond:
        fails += 1


def summary_counts(path):
    """Event counts from `jfr summary` text: the rows with a count, less the
    records that are not events (metadata and checkpoints)."""
    counts = Counter()
    for line in open(path):
        m = re.match(r'^ (\S+)\s+(\d+)\s+\d+\s*$', line)
        if m and m.group(1) not in ('jdk.Metadata', 'jdk.Checkpoint') and int(m.group(2)):
            counts[m.group(1)] = int(m.group(2))
    return counts


def exe(name):
    return os.path.join(ex_dir, name)


def oracle_module():
    """test/profile/profile-fixture.py (its pprof decoder)."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'profile', 'profile-fixture.py')
    spec = importlib.util.spec_from_file_location('profile_oracle', path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


po = oracle_module()
PPROF_TYPES = {'cpu': [('samples', 'count')],
               'alloc': [('alloc_space', 'bytes'), ('alloc_objects', 'count')],
               'lock': [('delay', 'nanoseconds'), ('contentions', 'count')]}


for jfr, summary in pairs:
    base = os.path.basename(jfr)
    want = summary_counts(summary)
    check(f'{base}: the oracle lists events', sum(want.values()) > 0)

    # ------------------------------------------------------- count_events
    p = subprocess.run([exe('count_events'), jfr], capture_output=True, text=True,
                       timeout=TIMEOUT)
    got = Counter({l.split()[1]: int(l.split()[0]) for l in p.stdout.splitlines()})
    check(f'count_events {base}: {sum(got.values())} events in {len(got)} types = jfr summary',
          p.returncode == 0 and got == want, (p.returncode, p.stderr, want - got, got - want))

    # ---------------------------------------------------- socket_callback
    doc = json.loads(subprocess.run(
        [jfrstream, 'print', '--json', '--events', 'jdk.ExecutionSample', '--stack-depth', '1', jfr],
        capture_output=True, text=True, timeout=TIMEOUT, check=True).stdout)
    tops = []
    for e in doc['recording']['events']:
        st = e['values'].get('stackTrace')
        if st and st['frames']:
            m = st['frames'][0]['method']
            tops.append(m['type']['name'] + '.' + m['name'])
        else:
            tops.append('(no stack)')
    srv = subprocess.Popen([exe('socket_callback'), '--once', '0'], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
    try:
        first = srv.stderr.readline()
        m = re.match(r'listening on 127\.0\.0\.1:(\d+)', first)
        check(f'socket_callback: "{first.strip()}"', m is not None)
        if m:
            with socket.create_connection(('127.0.0.1', int(m.group(1))), timeout=TIMEOUT) as s:
                with open(jfr, 'rb') as f:
                    s.sendall(f.read())
            out, err = srv.communicate(timeout=TIMEOUT)
            lines = out.splitlines()
            check(f'socket_callback {base}: {len(lines)} samples, top frames as print --json',
                  srv.returncode == 0 and sorted(lines) == sorted(tops) and 'stream ended' in err,
                  (srv.returncode, err, sorted(lines)[:5], sorted(tops)[:5]))
    finally:
        if srv.poll() is None:
            srv.kill()
            srv.communicate()

    # ---------------------------------------------------------- tail_repo
    with tempfile.TemporaryDirectory() as d:
        shutil.copy(jfr, os.path.join(d, '2026_01_01_00_00_00.jfr'))
        p = subprocess.run([exe('tail_repo'), d, '2000'], capture_output=True, text=True,
                           timeout=TIMEOUT)
        got = Counter(l.split()[0] for l in p.stdout.splitlines())
        check(f'tail_repo {base}: {sum(got.values())} events = jfr summary ({p.stderr.strip()})',
              p.returncode == 0 and got == want, (p.returncode, p.stderr, want - got, got - want))

    # ---------------------------------------------------- stream_to_pprof
    with tempfile.TemporaryDirectory() as d:
        for ev in ('cpu', 'alloc', 'lock'):
            want_pb = os.path.join(d, ev + '.pb.gz')
            subprocess.run([jfrstream, 'pprof', '--event', ev, '-o', want_pb, jfr],
                           capture_output=True, timeout=TIMEOUT, check=True)
            want_raw = open(want_pb, 'rb').read()
            collapsed = subprocess.run([jfrstream, 'collapsed', '--event', ev, jfr],
                                       capture_output=True, text=True, timeout=TIMEOUT,
                                       check=True).stdout
            exp = po.strip_suffix(po.parse_collapsed(collapsed, False))
            with open(jfr, 'rb') as f:
                p_stdin = subprocess.run([exe('stream_to_pprof'), '-', ev], stdin=f,
                                         capture_output=True, timeout=TIMEOUT)
            p = subprocess.run([exe('stream_to_pprof'), jfr, ev], capture_output=True,
                               timeout=TIMEOUT)
            try:
                types, folded, nsamples = po.decode_pprof(gzip.decompress(p.stdout))
            except Exception as e:  # not gzip, not protobuf
                types, folded, nsamples = None, {}, 0
                print(f'  decode: {e!r}')
            check(f'stream_to_pprof {base} {ev}: {len(p.stdout)} bytes = jfrstream pprof, '
                  f'also from stdin; {nsamples} samples, {len(folded)} stacks, total '
                  f'{sum(folded.values())} = collapsed',
                  p.returncode == 0 and p.stdout == want_raw and
                  p_stdin.returncode == 0 and p_stdin.stdout == want_raw and
                  types == PPROF_TYPES[ev] and folded == exp,
                  (p.returncode, p.stderr[-300:], p_stdin.returncode, len(p.stdout),
                   len(p_stdin.stdout), len(want_raw), types, len(folded), len(exp)))

print(f'examples: {fails} failures')
sys.exit(1 if fails else 0)
