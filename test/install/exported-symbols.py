#!/usr/bin/env python3
"""exported-symbols.py: the shared libraries export the public API, nothing else.

usage: test/install/exported-symbols.py NM INCLUDE_DIR LIB.so...

Lists the defined dynamic symbols of each library (`nm -D --defined-only`) and
fails on any name that no header under INCLUDE_DIR declares as a function
(an identifier followed by `(` outside comments). The symbols every linker
may define itself (_init, _fini, _edata, _end, __bss_start) are ignored.
Prints the exported count of each library.
"""
import pathlib
import re
import subprocess
import sys

LINKER = {"_init", "_fini", "_edata", "_end", "__bss_start"}


def declared(include_dir):
    names = set()
    for h in sorted(pathlib.Path(include_dir).rglob("*.h")):
        text = h.read_text()
        text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
        text = re.sub(r"//[^\n]*", " ", text)
        names.update(re.findall(r"\b([A-Za-z_]\w*)\s*\(", text))
    return names


def main():
    if len(sys.argv) < 4:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    nm, include_dir, libs = sys.argv[1], sys.argv[2], sys.argv[3:]
    api = declared(include_dir)
    fails = 0
    for lib in libs:
        out = subprocess.run([nm, "-D", "--defined-only", lib], check=True,
                             capture_output=True, text=True).stdout
        syms = sorted({line.split()[-1] for line in out.splitlines() if line.split()})
        syms = [s.split("@")[0] for s in syms if s.split("@")[0] not in LINKER]
        bad = [s for s in syms if s not in api]
        print(f"{pathlib.Path(lib).name}: {len(syms)} exported symbols")
        for s in bad:
            print(f"FAIL: {lib} exports {s}, declared in no header under {include_dir}")
        fails += len(bad)
        if not syms:
            print(f"FAIL: {lib} exports nothing")
            fails += 1
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
