"""query_oracle.py — running `jfrstream query` and JDK 25's QueryPrinter in tests.

start(doc): the test's JFRSTREAM and JDK 25. run(cmd, env, stdin): exit
status, stdout, stderr (text). forms(J, q, path):
the query in the forms that must print alike (--jobs 1, --jobs 3, from
stdin), as (label, status, stdout, stderr). jdk_queries(java, path, queries,
width): JDK 25's output of each query through test/java/ViewOracle.java, one
JVM for all, or JdkFail (the JDK's message) where the JDK fails on it.
verdict(name, cases, bad): the last lines and the exit status.
"""
import os
import subprocess
import sys

from find_jdk import find_jdk

HERE = os.path.dirname(os.path.abspath(__file__))


def start(doc):
    """(JFRSTREAM of argv, JDK 25's home or None, why not), TZ=UTC by
    default; None when argv has no JFRSTREAM (the usage printed)."""
    if len(sys.argv) < 2:
        print(doc)
        return None
    os.environ.setdefault("TZ", "UTC")
    jdk, why = find_jdk(25)
    return sys.argv[1], jdk, why


def run(cmd, env=None, stdin=None, timeout=None):
    e = None
    if env:
        e = dict(os.environ)
        e.update(env)
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=e, stdin=stdin,
                       timeout=timeout)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


def forms(J, q, path):
    """The query at --jobs 1 and 3 and from stdin (not read again)."""
    res = []
    for label, cmd in (("--jobs 1", [J, "--jobs", "1", "query", q, path]),
                       ("--jobs 3", [J, "--jobs", "3", "query", q, path])):
        res.append((label,) + run(cmd, timeout=120))
    with open(path, "rb") as f:
        res.append(("stdin",) + run([J, "query", q, "-"], stdin=f, timeout=120))
    return res


class JdkFail(str):
    """The exception of a query the JDK fails on."""


def jdk_queries(java, path, queries, width=None):
    """[text, or JdkFail where the JDK fails], one JVM for all."""
    cmd = [java, "--add-opens", "jdk.jfr/jdk.jfr.internal.query=ALL-UNNAMED",
           "--add-opens", "jdk.jfr/jdk.jfr.internal.util=ALL-UNNAMED",
           os.path.join(HERE, "java/ViewOracle.java"), path]
    if width is not None:
        cmd += ["--width", str(width)]
    rc, out, err = run(cmd + ["--"] + queries)
    if rc != 0:
        raise RuntimeError("ViewOracle.java failed (exit %d): %s" % (rc, err[:300]))
    parts = out.split("\x01QUERY ")[1:]
    if len(parts) != len(queries):
        raise RuntimeError("ViewOracle.java: %d outputs for %d queries" % (len(parts), len(queries)))
    res = []
    for q, part in zip(queries, parts):
        head, _, text = part.partition("\n")
        if head != q:
            raise RuntimeError("ViewOracle.java: output of %r for %r" % (head, q))
        res.append(JdkFail(text[6:].split("\n", 1)[0]) if text.startswith("\x01FAIL ") else text)
    return res


def verdict(name, cases, bad):
    """Say how many cases differed; the test's exit status."""
    print("%s: %d cases, %d differ" % (name, cases, bad))
    if bad:
        return 1
    print("PASS: %s" % name)
    return 0
