#!/usr/bin/env python3
"""build-jar.py — jfrstream-agent.jar from the agent and the pump's streaming core.

    build-jar.py OUT.jar JAVAC JAR SOURCE.java...

Compiles the sources for Java 17 (`--release 17`) into a temporary folder and
packs them with the agent's manifest (Premain-Class, Agent-Class, Main-Class).
"""
import os
import shutil
import subprocess
import sys
import tempfile

MANIFEST = """Manifest-Version: 1.0
Main-Class: JfrstreamAgent
Premain-Class: JfrstreamAgent
Agent-Class: JfrstreamAgent
Implementation-Title: jfrstream-agent
"""


def main():
    out, javac, jar, srcs = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
    tmp = tempfile.mkdtemp(prefix="jfrstream-agent-", dir=os.path.dirname(os.path.abspath(out)))
    try:
        classes = os.path.join(tmp, "classes")
        os.makedirs(classes)
        subprocess.run([javac, "--release", "17", "-Xlint:all", "-Xlint:-options", "-Werror",
                        "-nowarn", "-encoding", "UTF-8", "-d", classes] + srcs, check=True)
        man = os.path.join(tmp, "MANIFEST.MF")
        with open(man, "w") as f:
            f.write(MANIFEST)
        part = out + ".tmp"
        subprocess.run([jar, "--create", "--file", part, "--manifest", man, "-C", classes, "."],
                       check=True)
        os.replace(part, out)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
