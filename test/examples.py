#!/usr/bin/env python3
"""examples.py — the programs of examples/ give the right answers.

usage: test/examples.py EXAMPLES_DIR JFRSTREAM FILE.jfr FILE.summary.txt ...

  count_events FILE      the per-type event counts of `jfr summary` (the
                         committed oracle output FILE.summary.txt)
  socket_callback --once the fixture sent over 127.0.0.1: one line per
                         jdk.ExecutionSample, its top frame, as in
                         `jfrstream print --json` (sorted: ordering is per chunk)
  tail_repo DIR 2000     a folder holding a copy of the fixture: every event,
                         per-type counts as in the summary
"""
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

print(f'examples: {fails} failures')
sys.exit(1 if fails else 0)
