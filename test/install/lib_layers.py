#!/usr/bin/env python3
"""lib-layers: the libraries of lib/ and their files call and include each
other in layers, without a cycle.

usage: lib_layers.py NM BUILD_LIB_DIR [SOURCE_LIB_DIR]

BUILD_LIB_DIR is the build directory of lib/ (BUILD/lib): the object files
of the four libraries are found there (*.p/*.o for the parser, uv/*.p/*.o
for the libuv front ends, conv/*.p/*.o for the converters, sink/*.p/*.o for
the sinks). SOURCE_LIB_DIR is lib/ of the sources (default: next to this
script). The rules:

- Libraries: the parser (lib/*.c) calls no other; uv and conv call the
  parser; sink calls conv and the parser (as they link). A call across
  libraries goes to an exported function (jfr_, jfrc_, jfrs_), never to an
  internal jfr__ one: lib/mem.c is compiled into each library, and each
  file's call to it is resolved in its own library.
- Includes: a file includes its own library's headers, the public headers
  of the libraries it may call (include/jfrstream*.h), and of lib/ only the
  header-only helpers every library shares (mem.h, sized.h, noun.h, ticks.h,
  digits.h, header.h); the parser's other headers (internal.h, wire.h, skip.h) and another
  library's private headers are its own.
- Files: from each object file (one per lib .c file), nm gives the
  functions it defines and those it calls but does not define. A call from
  file A to a function defined in file B is an edge A -> B. The edges must
  not form a cycle (each cycle is printed with the calls that close it);
  the files are printed by layer, lowest first: each file calls only files
  of lower layers.
"""
import glob
import re
import os
import subprocess
import sys


LIBS = ('', 'uv', 'conv', 'sink')     # lib/ subdirectory of each library
LIB_NAME = {'': 'jfrstream', 'uv': 'jfrstream_uv', 'conv': 'jfrstream_conv',
            'sink': 'jfrstream_sink'}
# the libraries each one may call (its link_with in meson.build)
MAY_CALL = {'': set(), 'uv': {''}, 'conv': {''}, 'sink': {'', 'conv'}}
# public headers (include/) each library may include
PUBLIC = {'': {'jfrstream.h'},
          'uv': {'jfrstream.h', 'jfrstream_uv.h'},
          'conv': {'jfrstream.h', 'jfrstream_conv.h'},
          'sink': {'jfrstream.h', 'jfrstream_conv.h', 'jfrstream_sink.h'}}
# header-only helpers of lib/ that every library may include
SHARED = {'mem.h', 'sized.h', 'noun.h', 'header.h', 'ticks.h', 'digits.h'}
# headers generated into the build directory, by library
GENERATED = {'conv': {'flame_html.h', 'jfmt_pow5.h', 'views_ini.h'}}
EXPORTED = re.compile(r'^(jfr_|jfrc_|jfrs_)')


def objects(libdir):
    """(label, library, path) of each object file: label is the source's
    path in lib/ (lib/mem.c compiled into uv: uv/../mem.c)."""
    found = {}
    for sub in LIBS:
        d = os.path.join(libdir, sub)
        for pdir in sorted(glob.glob(os.path.join(d, '*.p'))):
            # (listdir: glob skips .._mem.c.o, a name starting with a dot)
            for o in sorted(os.path.join(pdir, f) for f in os.listdir(pdir)
                            if f.endswith('.o')):
                src = os.path.basename(o)[:-2]          # feed.c.o -> feed.c
                src = src.replace('.._', '../')         # .._mem.c -> ../mem.c
                label = os.path.normpath(os.path.join(sub, src)) if sub else src
                if sub and src.startswith('../'):
                    label = sub + '/' + src
                found.setdefault(label, (sub, o))  # static + shared: once
    return sorted((n, lib, o) for n, (lib, o) in found.items())


def include_violations(srcdir):
    """A message for each #include "..." a file of lib/ may not make."""
    out = []
    incdir = os.path.join(os.path.dirname(os.path.abspath(srcdir)), 'include')
    for lib in LIBS:
        d = os.path.join(srcdir, lib)
        for f in sorted(glob.glob(os.path.join(d, '*.[ch]'))):
            label = os.path.join(lib, os.path.basename(f))
            with open(f, encoding='utf-8', errors='replace') as fh:
                for k, line in enumerate(fh, 1):
                    m = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
                    if not m:
                        continue
                    name = m.group(1)
                    base = os.path.basename(name)
                    # where the compiler finds it: next to the file, in lib/,
                    # in include/ (the include directories of every library)
                    cands = [os.path.normpath(os.path.join(d, name)),
                             os.path.normpath(os.path.join(srcdir, name)),
                             os.path.normpath(os.path.join(incdir, name))]
                    target = next((c for c in cands if os.path.exists(c)), None)
                    if target is None:
                        ok = base in GENERATED.get(lib, set())
                        why = 'not found in lib/ or include/ (a generated header ' \
                              'must be listed in GENERATED)'
                    elif os.path.dirname(target) == os.path.normpath(incdir):
                        ok = base in PUBLIC[lib]
                        why = 'the public header of a library %s may not call' % \
                              LIB_NAME[lib]
                    else:
                        tlib = os.path.relpath(os.path.dirname(target), srcdir)
                        tlib = '' if tlib == '.' else tlib
                        ok = tlib == lib or (tlib == '' and base in SHARED)
                        why = 'a private header of %s' % LIB_NAME.get(tlib, tlib)
                    if not ok:
                        out.append('%s:%d includes "%s": %s' % (label, k, name, why))
    return out


def symbols(nm, obj):
    out = subprocess.run([nm, '-P', obj], check=True, capture_output=True,
                         text=True).stdout
    defined, undefined = set(), set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) < 2:
            continue
        sym, kind = parts[0], parts[1]
        if kind in ('T', 'D', 'B', 'R', 'W', 'V'):
            defined.add(sym)
        elif kind == 'U':
            undefined.add(sym)
    return defined, undefined


def main():
    if len(sys.argv) not in (3, 4):
        print(__doc__, file=sys.stderr)
        return 2
    nm, libdir = sys.argv[1], sys.argv[2]
    srcdir = sys.argv[3] if len(sys.argv) == 4 else \
        os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'lib')
    objs = objects(libdir)
    missing = [l for l in LIBS if not any(lib == l for _, lib, _ in objs)]
    if missing:
        print('no object files of %s under %s' %
              (', '.join(LIB_NAME[l] for l in missing), libdir), file=sys.stderr)
        return 1
    files, lib_of = {}, {}
    owner = {}  # (library, symbol) -> file
    for n, lib, o in objs:
        d, u = symbols(nm, o)
        files[n] = u
        lib_of[n] = lib
        for s in d:
            owner[(lib, s)] = n
    bad = include_violations(srcdir)
    edges = {n: {} for n in files}
    for n, undef in files.items():
        lib = lib_of[n]
        for s in sorted(undef):
            m = owner.get((lib, s))  # in its own library first
            if m is None:
                for other in LIBS:
                    if other != lib and (other, s) in owner:
                        m = owner[(other, s)]
                        if other not in MAY_CALL[lib]:
                            bad.append('%s calls %s of %s: %s may not call %s' %
                                       (n, s, m, LIB_NAME[lib], LIB_NAME[other]))
                        elif not EXPORTED.match(s) or s.startswith('jfr__'):
                            bad.append('%s calls %s of %s: not exported by %s' %
                                       (n, s, m, LIB_NAME[other]))
                        break
            if m and m != n:
                edges[n].setdefault(m, []).append(s)
    if bad:
        for b in bad:
            print('layering: ' + b)
        return 1

    # Tarjan's strongly connected components: a component of more than one
    # file is a cycle.
    index, low, on, stack, sccs = {}, {}, set(), [], []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            sccs.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(files):
        if v not in index:
            visit(v)
    cycles = [c for c in sccs if len(c) > 1]
    for c in cycles:
        print('cycle: ' + ' '.join(c))
        for a in c:
            for b in sorted(edges[a]):
                if b in c:
                    print('  %s -> %s: %s' % (a, b, ', '.join(edges[a][b])))
    if cycles:
        return 1

    # layers: a file's layer is one more than the highest layer it calls
    layer = {}

    def depth(v):
        if v not in layer:
            layer[v] = 1 + max((depth(w) for w in edges[v]), default=-1)
        return layer[v]

    for v in files:
        depth(v)
    print('lib/ layers (%d files of %d libraries), lowest first' % (len(files), len(LIBS)) + ' (each file calls only files of lower layers):')
    for k in range(max(layer.values()) + 1):
        row = sorted(v for v in files if layer[v] == k)
        print('  %d: %s' % (k, ' '.join(row)))
    for v in sorted(files, key=lambda v: (layer[v], v)):
        if edges[v]:
            print('  %s -> %s' % (v, ', '.join(sorted(edges[v]))))
    return 0


if __name__ == '__main__':
    sys.exit(main())
