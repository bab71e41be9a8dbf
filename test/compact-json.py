#!/usr/bin/env python3
"""compact-json.py — re-write `jfr print --json` output compactly, one event per
line, keeping every token (number literals included) exactly as printed.

    jfr print --json --stack-depth 64 x.jfr | python3 test/compact-json.py > x.json
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from oracle import EventStream  # noqa: E402

TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|\s+')


def squeeze(text):
    return TOKEN.sub(lambda m: "" if m.group(0)[0] != '"' else m.group(0), text)


def main():
    stream = EventStream(sys.stdin.buffer, "stdin")
    out = sys.stdout
    out.write('{"recording":{"events":[\n')
    first = True
    for _ in stream:
        if not first:
            out.write(",\n")
        out.write(squeeze(stream.last_text))
        first = False
    out.write("\n]}}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
