#!/usr/bin/env python3
"""oldobject.py — jdk.OldObjectSample reference chains of a real JVM.

    python3 test/oracle/oldobject.py JFRSTREAM WORKDIR

For JDK 17 and JDK 25 (each when installed; $JDK17_HOME / $JDK25_HOME, the
value "none" hides one), records test/java/Leak.java (a leak through a long
linked list, path-to-gc-roots=true, test/java/leak.jfc) into WORKDIR, then:

  * the reference `jfr print --json` (JDK 25's, else 17's) must show at least
    one chain deeper than 64 referrers (HotSpot writes about 200): else the
    recording is made again, up to 3 times, then the test fails;
  * `jfrstream print --json` gives the same chain length for every event;
  * test/oracle/oracle.py compares summary, metadata and every event field by field.

Exit 0, 1 on a difference, 77 (SKIP) without a JDK.
"""

import glob
import json
import os
import shlex
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
DEEP = 64
RUNS = 3


def java_major(home):
    try:
        p = subprocess.run([home + "/bin/java", "-XshowSettings:properties", "-version"],
                           capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    for line in p.stderr.splitlines():
        if line.strip().startswith("java.specification.version ="):
            return line.split("=", 1)[1].strip()
    return None


def find_jdk(v):
    env = os.environ.get("JDK%s_HOME" % v)
    if env == "none":
        return None
    cands = [env] if env else []
    j = subprocess.run(["sh", "-c", "command -v java"], capture_output=True, text=True).stdout.strip()
    if j:
        cands.append(os.path.dirname(os.path.dirname(os.path.realpath(j))))
    cands += sorted(glob.glob("/usr/lib/jvm/*%s*" % v))
    for c in cands:
        if c and os.access(c + "/bin/java", os.X_OK) and os.access(c + "/bin/jfr", os.X_OK) \
                and java_major(c) == v:
            return c
    return None


def chains(doc):
    """Referrer chain length of every jdk.OldObjectSample event."""
    out = []
    for e in json.loads(doc)["recording"]["events"]:
        if e["type"] != "jdk.OldObjectSample":
            continue
        v, n = e["values"]["object"], 0
        while v and v.get("referrer"):
            v = v["referrer"]["object"]
            n += 1
        out.append(n)
    return out


def record(home, dest):
    if os.path.exists(dest):
        os.unlink(dest)
    cmd = [home + "/bin/java", "-Xmx256m", "-Xmn4m", "-XX:+UseSerialGC",
           "-XX:FlightRecorderOptions:old-object-queue-size=24",
           "-XX:StartFlightRecording:filename=%s,path-to-gc-roots=true,settings=%s"
           % (dest, os.path.join(HERE, "..", "java", "leak.jfc")),
           os.path.join(HERE, "..", "java", "Leak.java"), "12000"]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300,
                       cwd=os.path.dirname(dest))
    if p.returncode != 0 or not os.path.exists(dest):
        raise RuntimeError("java exit %d: %s" % (p.returncode, (p.stdout + p.stderr)[-2000:]))


def main():
    if len(sys.argv) != 3:
        sys.stderr.write(__doc__)
        return 2
    cli, work = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    os.makedirs(work, exist_ok=True)
    sys.setrecursionlimit(20000)  # json of ~400 nested objects
    jdks = {v: find_jdk(v) for v in ("17", "25")}
    if not any(jdks.values()):
        print("oldobject: SKIP: no JDK 17 or 25 with java and jfr found")
        return 77
    ref = (jdks["25"] or jdks["17"]) + "/bin/jfr"
    print("oldobject: reference %s" % ref)
    wrapper = shlex.split(os.environ.get("JFRSTREAM_TEST_WRAPPER", ""))
    bad = 0
    for v, home in jdks.items():
        if not home:
            print("oldobject: no JDK %s: its recording is skipped" % v)
            continue
        f = os.path.join(work, "jdk%s-oldobject.jfr" % v)
        for attempt in range(1, RUNS + 1):
            t0 = time.monotonic()
            record(home, f)
            secs = time.monotonic() - t0
            jp = subprocess.run([ref, "print", "--json", "--events", "jdk.OldObjectSample", f],
                                capture_output=True, timeout=300)
            if jp.returncode != 0:
                print("FAIL: jfr exit %d: %s" % (jp.returncode, jp.stderr[:500]))
                return 1
            want = chains(jp.stdout)
            deep = [n for n in want if n > DEEP]
            print("jdk%s-oldobject.jfr (attempt %d, %.1f s): %d bytes, %d OldObjectSample "
                  "events, %d with chains > %d referrers (longest %d), %d bytes of JSON"
                  % (v, attempt, secs, os.path.getsize(f), len(want), len(deep), DEEP,
                     max(want, default=0), len(jp.stdout)))
            if deep:
                break
        if not deep:
            print("FAIL: jdk%s: no chain deeper than %d referrers in %d recordings" % (v, DEEP, RUNS))
            bad += 1
            continue
        p = subprocess.run(wrapper + [cli, "print", "--json", "--events", "jdk.OldObjectSample", f],
                           capture_output=True, timeout=300)
        got = chains(p.stdout) if p.returncode == 0 else None
        if p.returncode != 0 or p.stderr or got != want:
            print("FAIL: jdk%s: jfrstream exit %d, stderr %r, chain lengths %s, want %s"
                  % (v, p.returncode, p.stderr[:300], got, want))
            bad += 1
        else:
            print("jdk%s: jfrstream chain lengths equal the JDK's: %s" % (v, got))
        o = subprocess.run([sys.executable, os.path.join(HERE, "oracle.py"), "--jfrstream", cli,
                            "--jfr", ref, "--exact-numbers", f], timeout=900)
        if o.returncode != 0:
            print("FAIL: jdk%s: oracle.py exit %d" % (v, o.returncode))
            bad += 1
    print("oldobject: %s" % ("FAIL" if bad else "ok"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
