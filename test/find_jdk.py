#!/usr/bin/env python3
"""find_jdk.py — find a JDK of a given major version or newer.

    python3 test/find_jdk.py 25     prints the JDK's home; exit 1 with a
                                    message on stderr when there is none

As a module: find_jdk(25) -> (home or None, message).

The environment variable JFRSTREAM_JDK<N> (JFRSTREAM_JDK25), else JDK<N>_HOME
(the name test/gen-recordings.sh and the oracle scripts read), names the home
to use; it must hold bin/java ("none": act as if there were no such JDK). Else every home under /usr/lib/jvm is read: its
major version from the `release` file's JAVA_VERSION, else from
`bin/java -version`; the lowest major version >= N wins (the closest to the
JDK the stored expectations were made with), the first name in sort order
among equals.
"""
import glob
import os
import re
import subprocess
import sys

JVM_DIR = "/usr/lib/jvm"


def _major(version):
    """'25.0.3' -> 25, '1.8.0_402' -> 8, '17' -> 17; None if unreadable."""
    m = re.match(r"(\d+)(?:\.(\d+))?", version)
    if not m:
        return None
    major = int(m.group(1))
    if major == 1 and m.group(2):
        major = int(m.group(2))
    return major


def jdk_major(home):
    """The major version of the JDK at home, or None."""
    try:
        with open(os.path.join(home, "release"), encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.startswith("JAVA_VERSION="):
                    v = _major(line.split("=", 1)[1].strip().strip('"'))
                    if v is not None:
                        return v
    except OSError:
        pass
    java = os.path.join(home, "bin", "java")
    if not os.access(java, os.X_OK):
        return None
    try:
        r = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return None
    m = re.search(r'version "([^"]+)"', r.stderr + r.stdout)
    return _major(m.group(1)) if m else None


def find_jdk(min_major):
    """(home, message): a JDK home of major version >= min_major, or None and why."""
    for var in ("JFRSTREAM_JDK%d" % min_major, "JDK%d_HOME" % min_major):
        home = os.environ.get(var)
        if home == "none":
            return None, "%s=none" % var
        if home:
            if os.access(os.path.join(home, "bin", "java"), os.X_OK):
                return home, "%s=%s" % (var, home)
            return None, "%s=%s has no bin/java" % (var, home)
    found, seen = [], set()
    # the folders first, then links (to a JDK elsewhere): each JDK once
    homes = sorted(glob.glob(os.path.join(JVM_DIR, "*")), key=lambda h: (os.path.islink(h), h))
    for home in homes:
        real = os.path.realpath(home)
        if real in seen or not os.path.isdir(home):
            continue
        seen.add(real)
        v = jdk_major(home)
        if v is not None and v >= min_major and os.access(os.path.join(home, "bin", "java"), os.X_OK):
            found.append((v, home))
    if not found:
        return None, ("no JDK %d or newer in %s/* (set JFRSTREAM_JDK%d to a JDK home)"
                      % (min_major, JVM_DIR, min_major))
    v, home = min(found, key=lambda f: f[0])
    return home, "JDK %d at %s" % (v, home)


def main(argv):
    if len(argv) != 2 or not argv[1].isdigit():
        sys.stderr.write(__doc__)
        return 2
    home, msg = find_jdk(int(argv[1]))
    if not home:
        sys.stderr.write("find_jdk: %s\n" % msg)
        return 1
    print(home)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
