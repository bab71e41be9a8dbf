#!/usr/bin/env python3
"""lib-layers: the files of lib/ call each other in layers, without a cycle.

usage: lib_layers.py NM BUILD_LIB_DIR

BUILD_LIB_DIR is the build directory of lib/ (BUILD/lib): the object files
of the libraries are found there (*.p/*.o for the parser, uv/*.p/*.o for
the libuv front ends, conv/*.p/*.o for the converters). From each object file (one per lib .c file), nm gives the
functions it defines and those it calls but does not define. A call from
file A to a function defined in file B is an edge A -> B. The test fails
when the edges form a cycle (it prints the files of each cycle and the
calls that close it), else it prints the files by layer, lowest first: each
file calls only files of lower layers.
"""
import glob
import os
import subprocess
import sys


def objects(libdir):
    """(label, path) of each object file: label is the source's path in lib/."""
    found = {}
    for sub in ('', 'uv', 'conv'):
        d = os.path.join(libdir, sub)
        for pdir in sorted(glob.glob(os.path.join(d, '*.p'))):
            for o in sorted(glob.glob(os.path.join(pdir, '*.o'))):
                src = os.path.basename(o)[:-2]          # feed.c.o -> feed.c
                found.setdefault(os.path.join(sub, src), o)  # static + shared: once
    return sorted(found.items())


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
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    nm, libdir = sys.argv[1], sys.argv[2]
    objs = objects(libdir)
    if not objs:
        print('no object files under ' + libdir, file=sys.stderr)
        return 1
    files = {}
    owner = {}
    for n, o in objs:
        d, u = symbols(nm, o)
        files[n] = u
        for s in d:
            owner[s] = n
    edges = {n: {} for n in files}
    for n, undef in files.items():
        for s in sorted(undef):
            m = owner.get(s)
            if m and m != n:
                edges[n].setdefault(m, []).append(s)

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
    if cycles:
        for c in cycles:
            print('cycle: ' + ' '.join(c))
            for a in c:
                for b in sorted(edges[a]):
                    if b in c:
                        print('  %s -> %s: %s' % (a, b, ', '.join(edges[a][b])))
        return 1

    # layers: a file's layer is one more than the highest layer it calls
    layer = {}

    def depth(v):
        if v not in layer:
            layer[v] = 1 + max((depth(w) for w in edges[v]), default=-1)
        return layer[v]

    for v in files:
        depth(v)
    print('lib/ layers, lowest first (each file calls only files of lower layers):')
    for k in range(max(layer.values()) + 1):
        row = sorted(v for v in files if layer[v] == k)
        print('  %d: %s' % (k, ' '.join(row)))
    for v in sorted(files, key=lambda v: (layer[v], v)):
        if edges[v]:
            print('  %s -> %s' % (v, ', '.join(sorted(edges[v]))))
    return 0


if __name__ == '__main__':
    sys.exit(main())
