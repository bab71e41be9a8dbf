#!/usr/bin/env python3
"""jobs.py — `print --json`, `view` and `query` on N threads (--jobs N) write
what one thread writes: stdout, stderr, the two interleaved on one descriptor, and the exit
status, byte for byte.

usage: test/cli/jobs.py JFRSTREAM FILE.jfr [FILE.jfr ...]

For each file, and for damaged copies of the first ones (bytes flipped at
seeded random places, cut short, garbage between two copies: the parser's
and the JSON writer's error paths), `jfrstream --jobs 1 print --json ...`
is the reference; --jobs 2, 3 and 7 with batches of 1, 7 and 1024 events
(JFRSTREAM_PRINT_BATCH) and the default batch must equal it, with the
default stack depth, --stack-depth 64, an --events list, a glob and
--categories. The sound files concatenated twice at --jobs 2 and 3: each
chunk prepared once for the workers (JFRSTREAM_SHARE_STATS), output
unchanged; with --max-memory nothing is shared. `view` and `query` (one
parser, the chunks prepared on --jobs - 1 helper threads) at --jobs 2, 3
and 7 equal --jobs 1 on the files, every fourth damaged copy and the
concatenation. Files that are absent are skipped (said); exit 77 when no
file is there at all.
"""
import os
import random
import re
import subprocess
import sys
import tempfile

SCALE = float(os.environ.get("JFRSTREAM_TEST_SCALE", "1"))
WRAPPER = os.environ.get("JFRSTREAM_TEST_WRAPPER", "").split()


def run(jfrstream, args, env_extra, tmp):
    """(exit status, stdout, stderr, both on one descriptor)."""
    env = dict(os.environ, **env_extra)
    out = os.path.join(tmp, "out")
    err = os.path.join(tmp, "err")
    both = os.path.join(tmp, "both")
    with open(out, "wb") as o, open(err, "wb") as e:
        rc = subprocess.run(WRAPPER + [jfrstream] + args, stdout=o, stderr=e,
                            env=env, timeout=600).returncode
    with open(both, "wb") as b:
        rc2 = subprocess.run(WRAPPER + [jfrstream] + args, stdout=b,
                             stderr=subprocess.STDOUT, env=env,
                             timeout=600).returncode
    with open(out, "rb") as o, open(err, "rb") as e, open(both, "rb") as b:
        return rc, rc2, o.read(), e.read(), b.read()


def damaged(src, tmp, seed):
    data = bytearray(open(src, "rb").read())
    rnd = random.Random(seed)
    kind = seed % 3
    if kind == 0:  # bytes flipped in the body
        for _ in range(1 + seed % 5):
            i = rnd.randrange(68, len(data))
            data[i] ^= 1 << rnd.randrange(8)
    elif kind == 1:  # cut short
        data = data[: rnd.randrange(68, len(data))]
    else:  # two copies with garbage between them, one byte flipped
        data = data + bytes(rnd.randrange(256) for _ in range(37)) + data
        i = rnd.randrange(68, len(data))
        data[i] ^= 0xFF
    path = os.path.join(tmp, "damaged-%d.jfr" % seed)
    with open(path, "wb") as f:
        f.write(data)
    return path, kind


def main():
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    jfrstream = sys.argv[1]
    files = [f for f in sys.argv[2:] if os.path.isfile(f)]
    for f in sys.argv[2:]:
        if not os.path.isfile(f):
            print("skip: %s not found" % f)
    if not files:
        print("SKIP: no recording found")
        return 77
    option_sets = [
        [],
        ["--stack-depth", "64"],
        ["--events", "jdk.ExecutionSample,jdk.ThreadSleep,jdk.GarbageCollection"],
        ["--events", "jdk.*Allocation*"],
        ["--categories", "Java Virtual Machine"],
    ]
    fails = 0
    compared = 0
    with tempfile.TemporaryDirectory() as tmp:
        cases = [(f, "", []) for f in files]
        ndamaged = max(3, int(24 * SCALE))
        for seed in range(ndamaged):
            src = files[seed % min(2, len(files))]
            path, kind = damaged(src, tmp, seed)
            extra = ["--resync"] if kind == 2 and seed % 2 else []
            cases.append((path, " (damaged %d from %s)" % (seed, os.path.basename(src)), extra))
        for path, what, extra in cases:
            for oi, opts in enumerate(option_sets):
                if what and oi not in (0, 1):
                    continue  # damaged copies: two option sets are enough
                args = extra + ["print", "--json"] + opts + [path]
                ref = run(jfrstream, ["--jobs", "1"] + args, {}, tmp)
                if ref[0] != ref[1]:
                    print("FAIL: %s%s: the serial run's exit statuses differ" % (path, what))
                    fails += 1
                variants = [(2, None), (3, "7"), (2, "1"), (7, "1024")]
                if what:
                    variants = [(2, "7"), (3, "1")]
                for jobs, batch in variants:
                    env = {"JFRSTREAM_PRINT_BATCH": batch} if batch else {}
                    got = run(jfrstream, ["--jobs", str(jobs)] + args, env, tmp)
                    compared += 1
                    label = "%s%s %s --jobs %d batch %s" % (
                        os.path.basename(path), what, " ".join(extra + opts), jobs, batch or "default")
                    names = ["exit status", "exit status (2>&1)", "stdout", "stderr", "stdout+stderr"]
                    bad = [n for n, a, b in zip(names, ref, got) if a != b]
                    if bad:
                        fails += 1
                        print("FAIL: %s: %s differ" % (label, ", ".join(bad)))
                        if "stderr" in bad:
                            print("  serial:   %r" % ref[3][:300])
                            print("  parallel: %r" % got[3][:300])
                    else:
                        print("ok: %s (exit %d, %d bytes, %d stderr lines)" % (
                            label, got[0], len(got[2]), got[3].count(b"\n")))
        # the workers share each chunk's preparation (jfr_share): the
        # sound files concatenated twice, said by JFRSTREAM_SHARE_STATS
        cat = os.path.join(tmp, "cat.jfr")
        with open(cat, "wb") as o:
            for _ in range(2):
                for f in files:
                    o.write(open(f, "rb").read())
        ref = run(jfrstream, ["--jobs", "1", "print", "--json", cat], {}, tmp)
        for jobs in (2, 3):
            got = run(jfrstream, ["--jobs", str(jobs), "print", "--json", cat],
                      {"JFRSTREAM_SHARE_STATS": "1"}, tmp)
            compared += 1
            m = re.search(rb"jfrstream: (\d+) workers?, (\d+) chunks? prepared, "
                          rb"(\d+) preparations copied\n", got[3])
            rest = re.sub(rb"jfrstream: \d+ workers, [^\n]*\n", b"", got[3])
            label = "concatenation --jobs %d, chunk preparations shared" % jobs
            if not m or got[2] != ref[2] or rest != ref[3] or got[0] != ref[0]:
                fails += 1
                print("FAIL: %s: %r" % (label, got[3][-300:]))
            elif int(m.group(2)) < 1 or int(m.group(3)) < int(m.group(2)):
                fails += 1
                print("FAIL: %s: %s" % (label, m.group(0).decode().strip()))
            else:
                print("ok: %s (%s)" % (label, m.group(0).decode().strip()))
        # not with --max-memory, which the share's copies would exceed
        got = run(jfrstream, ["--max-memory", "512M", "--jobs", "2", "print", "--json", cat],
                  {"JFRSTREAM_SHARE_STATS": "1"}, tmp)
        compared += 1
        if got[2] != ref[2] or got[3] != ref[3] or got[0] != ref[0]:
            fails += 1
            print("FAIL: concatenation --max-memory 512M --jobs 2: %r" % got[3][-300:])
        else:
            print("ok: concatenation --max-memory 512M --jobs 2, nothing shared")
        # view and query: the chunks after the first of each feed prepared
        # on helper threads, every view printed by the calling thread
        views = [["view", "all-views"], ["view", "--width", "60", "types"],
                 ["view", "all-events"],
                 ["query", "SELECT COUNT(*), FIRST(startTime), LAST(startTime) FROM * "
                           "GROUP BY eventType.label ORDER BY eventType.label"]]
        for path, what, extra in cases[:len(files)] + cases[len(files)::4] + [(cat, " (concatenation)", [])]:
            for vi, args in enumerate(views):
                if what.startswith(" (damaged") and vi > 1:
                    continue
                args = extra + args + [path]
                ref = run(jfrstream, ["--jobs", "1"] + args, {}, tmp)
                for jobs in (2, 3, 7):
                    got = run(jfrstream, ["--jobs", str(jobs)] + args, {}, tmp)
                    compared += 1
                    label = "%s%s %s --jobs %d" % (os.path.basename(path), what,
                                                   " ".join(extra + args[:-1])[:60], jobs)
                    names = ["exit status", "exit status (2>&1)", "stdout", "stderr", "stdout+stderr"]
                    bad = [n for n, a, b in zip(names, ref, got) if a != b]
                    if bad:
                        fails += 1
                        print("FAIL: %s: %s differ" % (label, ", ".join(bad)))
                    else:
                        print("ok: %s (exit %d, %d bytes)" % (label, got[0], len(got[2])))
    print("%d passed, %d failed" % (compared - fails, fails))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
