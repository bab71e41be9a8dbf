#!/usr/bin/env python3
"""gen-header.py IN OUT NAME: a C header defining `static const char NAME[]`
with the bytes of IN (the flame graph template, embedded at build time)."""
import sys

src, dst, name = sys.argv[1:4]
data = open(src, 'rb').read()
out = ['/* generated from %s by gen-header.py: do not edit */' % src.rsplit('/', 1)[-1],
       'static const char %s[] =' % name]
for line in data.split(b'\n'):
    esc = ''.join(chr(c) if 32 <= c < 127 and c not in (34, 92, 63) else '\\%03o' % c
                  for c in line + b'\n')
    out.append('    "%s"' % esc)
out[-1] += ';'
open(dst, 'w').write('\n'.join(out) + '\n')
