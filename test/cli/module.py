#!/usr/bin/env python3
"""module.py — listen and tail run from their module, and only from the right one.

usage: test/cli/module.py JFRSTREAM MODULE FIXTURE SUMMARY LIBDIR...

tools/jfrstream/module.h: a shared build puts listen and tail in
jfrstream_live.so, which module.c looks for beside the executable first and
runs only if its stamp (the version and the hashes of the headers the two
share) is the executable's. The executable is copied into a new folder
(LIBDIR... on LD_LIBRARY_PATH, since its run path is relative to the build):
- with a copy of the module beside it, `tail --exit-when-done --summary
  FIXTURE` counts the events of SUMMARY (`jfr summary` of the fixture);
- with a copy whose stamp is changed (one byte of the string), tail exits 1
  naming the file and "of another build", and `summary` still runs (it never
  loads the module);
- alone, tail exits 1 saying where it looked for the module, unless the
  configured install folder holds one (an installed jfrstream: then that one
  is used or refused, by its stamp).
"""
import os
import shutil
import subprocess
import sys
import tempfile


def total(text):
    n = 0
    for line in text.splitlines():
        f = line.split()
        if len(f) == 3 and f[1].isdigit():
            n += int(f[1])
    return n


def main():
    if len(sys.argv) < 6:
        print(__doc__, file=sys.stderr)
        return 2
    exe, module, fixture, summary = sys.argv[1:5]
    env = dict(os.environ, LD_LIBRARY_PATH=":".join(sys.argv[5:]))
    want = total(open(summary).read())
    fails = []
    with tempfile.TemporaryDirectory() as tmp:
        bindir = os.path.join(tmp, "bin")
        os.mkdir(bindir)
        me = os.path.join(bindir, "jfrstream")
        shutil.copy2(exe, me)
        mod = os.path.join(bindir, "jfrstream_live.so")

        def tail():
            return subprocess.run([me, "tail", "--exit-when-done", "--summary", fixture],
                                  capture_output=True, text=True, env=env, timeout=60)

        shutil.copy2(module, mod)
        r = tail()
        if r.returncode != 0 or total(r.stdout) != want:
            fails.append("beside the executable: exit %d, %d events (want %d): %s"
                         % (r.returncode, total(r.stdout), want, r.stderr[-300:]))
        else:
            print("ok: the module beside the executable: tail counts %d events" % want)

        data = open(module, "rb").read()
        version = subprocess.run([me, "--version"], capture_output=True, text=True,
                                 env=env).stdout.split()[-1]
        at = data.find((version + "-").encode())
        if at < 0:
            fails.append("no stamp starting %s- in %s" % (version, module))
        else:
            bad = bytearray(data)
            bad[at + len(version) + 1] ^= 0x01  # a hash digit: still a string
            os.unlink(mod)
            with open(mod, "wb") as f:
                f.write(bad)
            r = tail()
            if r.returncode != 1 or "of another build" not in r.stderr or mod not in r.stderr:
                fails.append("another stamp: exit %d: %s" % (r.returncode, r.stderr[-300:]))
            else:
                print("ok: a module of another stamp refused: %s" % r.stderr.strip()[-160:])
            s = subprocess.run([me, "summary", fixture], capture_output=True, text=True,
                               env=env, timeout=60)
            if s.returncode != 0 or total(s.stdout) != want:
                fails.append("summary beside a refused module: exit %d" % s.returncode)
            else:
                print("ok: summary runs without loading the module")

        os.unlink(mod)
        r = tail()
        if r.returncode == 1 and "not found" in r.stderr and mod in r.stderr:
            print("ok: no module: %s" % r.stderr.strip()[-200:])
        elif r.returncode == 0 or "of another build" in r.stderr:
            print("note: no module beside it, an installed one was found (exit %d)"
                  % r.returncode)
        else:
            fails.append("no module: exit %d: %s" % (r.returncode, r.stderr[-300:]))
    for f in fails:
        print("FAIL: " + f)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
