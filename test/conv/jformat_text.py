#!/usr/bin/env python3
"""jformat_text.py TEST_BINARY JformatText.java — lib/conv/jformat_text.c
against JDK 25 itself.

Runs JformatText.java (the source launcher) with the JDK 25 that
test/find_jdk.py finds ($JFRSTREAM_JDK25, $JDK25_HOME, else /usr/lib/jvm),
then test_jformat_text on its output: the built-in table and every line the
JDK printed. Without a JDK 25 only the table is checked, and the test is a
SKIP (exit 77) when it passes. The binary runs under $JFRSTREAM_TEST_WRAPPER
(meson test --setup valgrind), the JVM never does.
"""
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from find_jdk import find_jdk  # noqa: E402


def main(argv):
    if len(argv) != 3:
        sys.stderr.write(__doc__)
        return 2
    exe, source = argv[1], argv[2]
    wrapper = os.environ.get("JFRSTREAM_TEST_WRAPPER", "").split()
    home, why = find_jdk(25)
    if not home:
        rc = subprocess.run(wrapper + [exe]).returncode
        if rc != 0:
            return rc
        print("SKIP: %s: the table agrees, no JDK 25 to compare with" % why)
        return 77
    print("JDK: %s" % why, flush=True)
    with tempfile.TemporaryDirectory(prefix="jformat-text-") as tmp:
        out = os.path.join(tmp, "jdk.txt")
        # C1 only and the serial collector: half the CPU time of the defaults
        # (the same output: Math.log is the same stub at every tier)
        java = [os.path.join(home, "bin", "java"), "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
                "--add-exports", "jdk.jfr/jdk.jfr.internal.util=ALL-UNNAMED", source]
        with open(out, "wb") as f:
            r = subprocess.run(java, stdout=f, timeout=600)
        if r.returncode != 0:
            print("FAIL: %s exited with %d" % (" ".join(java), r.returncode))
            return 1
        return subprocess.run(wrapper + [exe, out]).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv))
