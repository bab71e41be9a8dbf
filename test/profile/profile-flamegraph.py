#!/usr/bin/env python3
"""profile-flamegraph.py JFRSTREAM FILE — open `jfrstream flamegraph` output in a
real headless browser (Debian's chromium) and check what it rendered.

For the CPU and allocation profiles of FILE: the page must render frames
(div.f elements in the DOM after the script ran), the root total it shows
must equal the sum of `jfrstream collapsed` (for CPU: the number of samples
with a stack trace), every frame name of the heaviest collapsed stack must be
in the DOM, and a search given as #search=REGEX must report the weight of the
stacks with a matching frame. The page must not refer to any network
resource. Exit 77 (skip) when chromium is not installed.
"""
import html
import os
import re
import shutil
import subprocess
import sys
import tempfile


def browser():
    for b in ('chromium', 'chromium-browser', 'google-chrome'):
        p = shutil.which(b)
        if p:
            return p
    return None


def dump_dom(chrome, url, tmp):
    r = subprocess.run([chrome, '--headless', '--no-sandbox', '--disable-gpu',
                        '--no-first-run', '--disable-dev-shm-usage', '--user-data-dir=' + os.path.join(tmp, 'profile'),
                        '--window-size=1200,900', '--virtual-time-budget=5000', '--dump-dom',
                        url], capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        print(r.stderr[-2000:])
        raise SystemExit('chromium failed: %d' % r.returncode)
    return r.stdout


def main():
    if len(sys.argv) < 3:
        raise SystemExit(__doc__)
    jfrstream, path = sys.argv[1], sys.argv[2]
    shot = sys.argv[3] if len(sys.argv) > 3 else None
    chrome = browser()
    if not chrome:
        print('SKIP: no chromium (apt-get install chromium)')
        return 77
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        for prof in ('cpu', 'alloc'):
            out = os.path.join(tmp, prof + '.html')
            subprocess.run([jfrstream, 'flamegraph', '--event', prof, '--title',
                            'jfrstream <%s>' % prof, '-o', out, path], check=True)
            page = open(out, encoding='utf-8').read()
            if re.search(r'(src|href)\s*=\s*["\']?(https?:)?//', page) or 'http://' in page \
                    or 'https://' in page:
                print('%s: the page refers to a network resource' % prof)
                ok = False
            collapsed = subprocess.run([jfrstream, 'collapsed', '--event', prof, path],
                                       check=True, capture_output=True, text=True).stdout
            lines = [(l.rpartition(' ')[0], int(l.rpartition(' ')[2]))
                     for l in collapsed.splitlines()]
            total = sum(n for _, n in lines)
            dom = dump_dom(chrome, 'file://' + out, tmp)
            m = re.search(r'<b id="total">(\d+)</b>', dom)
            shown = int(m.group(1)) if m else None
            nframes = len(re.findall(r'<div class="f[ "]', dom))
            m2 = re.search(r'<b id="nframes">(\d+)</b>', dom)
            heavy = max(lines, key=lambda x: x[1])[0].split(';')
            names = [re.sub(r'_\[[0-9jik]\]$', '', f) for f in heavy]
            missing = [n for n in names if html.escape(n, quote=False) not in dom]
            print('%s: collapsed total %d, page total %s, %d frames in the DOM (page says %s),'
                  ' heaviest stack %d frames, %d missing' %
                  (prof, total, shown, nframes, m2.group(1) if m2 else None, len(names),
                   len(missing)))
            if shown != total or nframes == 0 or not m2 or int(m2.group(1)) != nframes \
                    or missing:
                print('  FAIL%s' % (': missing ' + ', '.join(missing[:3]) if missing else ''))
                ok = False
            if '<h1 id="title">jfrstream &lt;%s&gt;</h1>' % prof not in dom:
                print('  FAIL: title not shown')
                ok = False
            # search: the weight of the stacks with a matching frame
            rx = 'Workload|Thread'
            want = sum(n for s, n in lines
                       if any(re.search(rx, re.sub(r'_\[[0-9jik]\]$', '', f))
                              for f in s.split(';')))
            dom = dump_dom(chrome, 'file://' + out + '#search=' + rx, tmp)
            m = re.search(r'Matched: (\d+) \(', dom)
            nmatch = len(re.findall(r'<div class="f m', dom))
            print('%s: search %r: page %s, expected %d, %d highlighted frames' %
                  (prof, rx, m.group(1) if m else None, want, nmatch))
            if not m or int(m.group(1)) != want or (want and nmatch == 0):
                print('  FAIL')
                ok = False
            if shot and prof == 'cpu':
                subprocess.run([chrome, '--headless', '--no-sandbox', '--disable-gpu',
                                '--disable-dev-shm-usage', '--user-data-dir=' + os.path.join(tmp, 'profile'),
                                '--window-size=1400,900', '--virtual-time-budget=5000',
                                '--screenshot=' + shot, 'file://' + out],
                               capture_output=True, timeout=120)
    return 0 if ok else 1


if __name__ == '__main__':
    sys.exit(main())
