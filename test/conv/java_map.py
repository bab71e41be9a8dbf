#!/usr/bin/env python3
"""java_map.py TEST_BINARY MapOrder.java — lib/conv/java_map.c against the
JDK's java.util.HashMap.

Runs MapOrder.java (the source launcher of the JDK that test/find_jdk.py
finds, else `java` on the PATH: HashMap's order is the same in every JDK
since 8) for 2,000 cases, then test_java_map on its output. No JDK: SKIP
(exit 77). The binary runs under $JFRSTREAM_TEST_WRAPPER (meson test
--setup valgrind), the JVM never does.
"""
import os
import shutil
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
    java = os.path.join(home, "bin", "java") if home else shutil.which("java")
    if not java:
        print("SKIP: no JDK (%s) and no java on the PATH" % why)
        return 77
    with tempfile.TemporaryDirectory(prefix="java-map.") as tmp:
        cases = os.path.join(tmp, "cases.txt")
        with open(cases, "wb") as f:
            p = subprocess.run([java, source, "2000"], stdout=f, stderr=subprocess.PIPE, timeout=240)
        if p.returncode != 0:
            print("FAIL: %s MapOrder.java: exit %d: %s" % (java, p.returncode, p.stderr.decode()[:300]))
            return 1
        return subprocess.run(wrapper + [exe, cases]).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv))
