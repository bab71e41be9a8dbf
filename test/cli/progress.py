#!/usr/bin/env python3
"""progress.py — the CLI's progress line on stderr.

usage: test/cli/progress.py JFRSTREAM FILE.jfr

With stderr on a pseudo-terminal and JFRSTREAM_PROGRESS_DELAY=0 (the line is
otherwise drawn only after 1 s), a run over the file and over its gzip copy
draws "NAME: N% R MB/s" and erases it at the end; stdout is unchanged. With
the default delay a short run draws nothing, and without a terminal nothing
is ever drawn.
"""
import gzip
import os
import pty
import re
import shutil
import subprocess
import sys
import tempfile

bin_, src = sys.argv[1], sys.argv[2]
fails = 0


def run(args, tty, delay):
    """Run jfrstream; returns (rc, stdout, stderr bytes)."""
    env = dict(os.environ)
    env.pop('JFRSTREAM_PROGRESS_DELAY', None)
    if delay is not None:
        env['JFRSTREAM_PROGRESS_DELAY'] = delay
    if not tty:
        p = subprocess.run([bin_] + args, capture_output=True, env=env, timeout=60)
        return p.returncode, p.stdout, p.stderr
    try:
        master, slave = pty.openpty()
    except OSError as e:  # a chroot or container without /dev/pts
        print(f'SKIP: no pseudo-terminal to draw the progress line on ({e})')
        sys.exit(77)
    p = subprocess.Popen([bin_] + args, stdout=subprocess.PIPE, stderr=slave, env=env)
    os.close(slave)
    out = p.stdout.read()
    err = b''
    while True:
        try:
            b = os.read(master, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not b:
            break
        err += b
    os.close(master)
    return p.wait(timeout=60), out, err


def check(name, cond, detail=''):
    global fails
    if cond:
        print(f'ok: {name}')
    else:
        fails += 1
        print(f'FAIL: {name} {detail}')


with tempfile.TemporaryDirectory() as d:
    plain = os.path.join(d, 'rec.jfr')
    shutil.copy(src, plain)
    gz = os.path.join(d, 'rec.jfr.gz')
    with open(src, 'rb') as f, gzip.open(gz, 'wb') as g:
        g.write(f.read())
    rc, ref, _ = run(['summary', plain], False, None)
    check('reference run', rc == 0, f'exit {rc}')
    line = re.compile(rb'\r(\S+): +(\d+)% (\d+) MB/s\x1b\[K')
    for f in (plain, gz):
        for feed in (['--feed-size', '4096'], []):
            args = feed + ['summary', f]
            what = ' '.join(args[:-1]) + ' ' + os.path.basename(f)
            rc, out, err = run(args, True, '0')
            m = line.findall(err)
            check(f'{what}: progress drawn on a terminal', rc == 0 and m and
                  all(name.decode() == f for name, _, _ in m), repr(err[:200]))
            check(f'{what}: percentages in 0..100', all(0 <= int(p) <= 100 for _, p, _ in m))
            check(f'{what}: erased at the end', err.endswith(b'\r\x1b[K'), repr(err[-20:]))
            check(f'{what}: stdout unchanged', out == ref)
            rc, out, err = run(args, False, '0')
            check(f'{what}: nothing without a terminal', rc == 0 and err == b'' and out == ref,
                  repr(err[:200]))
            rc, out, err = run(args, True, None)
            check(f'{what}: nothing on a terminal for a run under 1 s', rc == 0 and err == b'',
                  repr(err[:200]))
    # print --json on two threads (ordered.c): the calling thread draws
    # worker 0's progress while it waits for batches
    rc, ref_json, _ = run(['--jobs', '1', 'print', '--json', plain], False, None)
    rc, out, err = run(['--jobs', '2', 'print', '--json', plain], True, '0')
    m = line.findall(err)
    check('--jobs 2 print --json: progress drawn on a terminal', rc == 0 and m and
          all(name.decode() == plain for name, _, _ in m), repr(err[:200]))
    check('--jobs 2 print --json: percentages in 0..100', all(0 <= int(p) <= 100 for _, p, _ in m))
    check('--jobs 2 print --json: erased at the end', err.endswith(b'\r\x1b[K'), repr(err[-20:]))
    check('--jobs 2 print --json: stdout unchanged', out == ref_json)
    rc, out, err = run(['--jobs', '2', 'print', '--json', plain], False, '0')
    check('--jobs 2 print --json: nothing without a terminal', rc == 0 and err == b'' and
          out == ref_json, repr(err[:200]))
    # a message erases the line first: it starts a line of its own
    bad = os.path.join(d, 'cut.jfr')
    with open(src, 'rb') as f, open(bad, 'wb') as g:
        g.write(f.read()[: os.path.getsize(src) * 2 // 3])
    rc, out, err = run(['--feed-size', '4096', 'summary', bad], True, '0')
    msgs = [l for l in err.split(b'\r\x1b[K') if b'jfrstream: ' in l]
    check('a message on a terminal starts its own line', rc == 1 and msgs and
          all(l.lstrip(b'\r\n').startswith(b'jfrstream: ') for l in msgs), repr(err[:300]))

print(f'progress: {fails} failures')
sys.exit(1 if fails else 0)
