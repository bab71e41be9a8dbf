#!/usr/bin/env python3
"""disassemble.py --jfrstream J FILE...: `jfrstream disassemble` and
`assemble` against JDK 25's `jfr disassemble` and `jfr assemble`: on each
FILE and on a 6-chunk file made of FILEs, with several option sets, the
exit status, the stdout (folders aside), the names and the bytes of every
file written are the same; assembling the pieces back gives the input's
bytes with both tools. SKIP without a JDK 25."""
import argparse
import os
import shlex
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from find_jdk import find_jdk  # noqa: E402

OPTION_SETS = [[], ["--max-chunks", "2"], ["--max-chunks", "1"], ["--max-size", "3000"],
               ["--max-size", "1"], ["--max-size", "999999999"], ["--max-chunks", "99"],
               ["--max-chunks", "2", "--max-size", "5000"], ["--max-chunks", "0"],
               ["--max-size", "x"]]


def run(cmd, cwd):
    r = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    return r.returncode, r.stdout.decode(), r.stderr.decode()


def tree(d):
    out = {}
    for name in sorted(os.listdir(d)):
        with open(os.path.join(d, name), "rb") as f:
            out[name] = f.read()
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--jfrstream", required=True)
    ap.add_argument("files", nargs="+")
    a = ap.parse_args()
    home, why = find_jdk(25)
    if not home:
        print("SKIP: %s" % why)
        return 77
    jfr = os.path.join(home, "bin", "jfr")
    # JFRSTREAM_TEST_WRAPPER (test/valgrind.sh): put before every jfrstream run
    J = shlex.split(os.environ.get("JFRSTREAM_TEST_WRAPPER", "")) + [os.path.abspath(a.jfrstream)]
    tmp = tempfile.mkdtemp(prefix="disassemble-")
    inputs = [os.path.abspath(f) for f in a.files]
    many = os.path.join(tmp, "six.jfr")
    with open(many, "wb") as fo:
        blob = b"".join(open(f, "rb").read() for f in inputs)
        while blob.count(b"FLR\0") < 6:
            blob += blob
        fo.write(blob)
    inputs.append(many)
    fails = runs = files = 0
    try:
        for path in inputs:
            for opts in OPTION_SETS:
                what = "%s %s" % (os.path.basename(path), " ".join(opts) or "(defaults)")
                res = []
                for tool, name in ((J, "ours"), ([jfr], "jdk")):
                    d = os.path.join(tmp, name)
                    shutil.rmtree(d, ignore_errors=True)
                    os.mkdir(d)
                    rc, out, err = run(tool + ["disassemble", "--output", d] + opts + [path], tmp)
                    res.append((rc, out.replace(d, "DIR"), tree(d), err, d))
                runs += 1
                (rc1, o1, t1, e1, d1), (rc2, o2, t2, e2, d2) = res
                if rc1 != rc2 or o1 != o2 or t1 != t2:
                    print("FAIL %s: exit %d vs JDK %d, files %s vs %s\n--- ours\n%s%s--- JDK\n%s%s"
                          % (what, rc1, rc2, sorted(t1), sorted(t2), o1, e1, o2, e2))
                    fails += 1
                    continue
                files += len(t1)
                if not t1:
                    print("ok %s: exit %d, no file, same output" % (what, rc1))
                    continue
                back = []
                for tool, d in ((J, d1), ([jfr], d2)):
                    dst = os.path.join(tmp, "back-%s.jfr" % os.path.basename(d))
                    if os.path.exists(dst):
                        os.remove(dst)
                    rc, out, err = run(tool + ["assemble", d, dst], tmp)
                    back.append((rc, out.replace(d, "DIR"), open(dst, "rb").read() if rc == 0 else None, err))
                orig = open(path, "rb").read()
                if back[0][:2] != back[1][:2] or back[0][2] != orig or back[1][2] != orig:
                    print("FAIL %s: assemble: exit %d vs %d, equal to the input: %s, %s\n%s%s"
                          % (what, back[0][0], back[1][0], back[0][2] == orig, back[1][2] == orig,
                             back[0][1] + back[0][3], back[1][1] + back[1][3]))
                    fails += 1
                    continue
                print("ok %s: %d files equal; assembled back equal to the input" % (what, len(t1)))
        # assemble's own errors: no *.jfr, existing output, bad extension, not a folder
        empty = os.path.join(tmp, "empty")
        os.mkdir(empty)
        for args in ([empty, os.path.join(tmp, "e.jfr")], [tmp, inputs[0]], [tmp, "x.txt"],
                     [inputs[0], "y.jfr"], [tmp]):
            rc1, o1, e1 = run(J + ["assemble"] + args, tmp)
            rc2, o2, e2 = run([jfr, "assemble"] + args, tmp)
            runs += 1
            if rc1 != rc2:
                print("FAIL assemble %s: exit %d vs JDK %d (%s / %s)" % (args, rc1, rc2, e1, e2))
                fails += 1
            elif os.path.exists(os.path.join(tmp, "e.jfr")) and rc1:
                os.remove(os.path.join(tmp, "e.jfr"))  # the JDK leaves it empty; ours writes none
                print("ok assemble %s: both exit %d (the JDK leaves an empty file)" % (args, rc1))
            else:
                print("ok assemble %s: both exit %d" % (args, rc1))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("runs=%d files=%d failed=%d" % (runs, files, fails))
    if fails:
        print("FAIL: %d runs differ from JDK 25's" % fails)
        return 1
    print("PASS: disassemble and assemble equal JDK 25's")
    return 0


if __name__ == "__main__":
    sys.exit(main())
