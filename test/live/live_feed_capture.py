#!/usr/bin/env python3
"""live_feed_capture.py — a live-stream capture read by `print` and `listen`,
however it is sliced.

    test/live/live_feed_capture.py JFRSTREAM [--java-home DIR] [--work DIR]
                              [--capture FILE]

With a capture of a real JVM's live stream (tools/jfr-pump --out; made once
and cached in --work, or given with --capture):
  * `print --json` of the file, and of stdin with --feed-size 1, 7, random,
    random:3: identical output and exit status;
  * the same for the capture cut inside its last chunk (a stream that ends
    in an unfinished chunk: exit 1 with a message, identical output);
  * `listen --json --once`, fed by a client writing the first 64 KiB one byte
    per send() and the rest in random sizes: its lines are exactly the events
    of `print --json` of the capture, compacted (no whitespace outside
    strings), in the same order.
Exit 0 pass, 1 fail, 77 skip (no java and no --capture).
"""
import argparse
import os
import random
import re
import socket
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import livelib as L  # noqa: E402

NAME = "feed-capture"
TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|\s+')


def squeeze(text):
    return TOKEN.sub(lambda m: "" if m.group(0)[0] != '"' else m.group(0), text)


def print_json(jfrstream, path, feed):
    args = [jfrstream]
    if feed:
        args += ["--feed-size", feed, "print", "--json", "-"]
        with open(path, "rb") as f:
            r = L.run(args, 120, stdin=f)
    else:
        r = L.run(args + ["print", "--json", path], 120)
    return r.returncode, r.stdout, r.stderr.decode("utf-8", "replace")


def check_feeds(jfrstream, path, label, fails):
    ref = print_json(jfrstream, path, None)
    n = ref[1].count(b'{\n      "type": ')
    L.log("  %s: print --json exit %d, %d bytes, %d events%s" % (
        label, ref[0], len(ref[1]), n,
        (": " + ref[2].strip().splitlines()[-1]) if ref[2].strip() else ""))
    for feed in ["1", "7", "random", "random:3"]:
        got = print_json(jfrstream, path, feed)
        if got[0] != ref[0] or got[1] != ref[1]:
            fails.append("%s: --feed-size %s from stdin: exit %d (whole %d), output %s" % (
                label, feed, got[0], ref[0], "same" if got[1] == ref[1] else "differs"))
    return ref


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("jfrstream")
    ap.add_argument("--java-home")
    ap.add_argument("--work", default=os.path.join(os.getcwd(), "live-work"))
    ap.add_argument("--capture")
    a = ap.parse_args()
    a.jfrstream = L.cli(a.jfrstream)
    fails = []
    try:
        if a.capture:
            capture = a.capture
        else:
            java = L.java_bin(a.java_home)
            if not java:
                return L.skip(NAME, "no java and no --capture")
            capture, why = L.ensure_capture(a.work, java)
            if not capture:
                return L.result(NAME, False, "no capture: %s" % why)
        data = open(capture, "rb").read()
        ref = check_feeds(a.jfrstream, capture, "whole capture", fails)
        if ref[0] != 0:
            fails.append("print of the whole capture: exit %d: %s" % (ref[0], ref[2][-300:]))

        # cut inside the last chunk: after its header and some records
        starts = L.live_header_offsets(data)
        cut_at = starts[-1] + (len(data) - starts[-1]) * 2 // 3 if starts else len(data) // 2
        cut = os.path.join(a.work, "cut-%d.bin" % os.getpid())
        os.makedirs(a.work, exist_ok=True)
        with open(cut, "wb") as f:
            f.write(data[:cut_at])
        try:
            cref = check_feeds(a.jfrstream, cut, "capture cut at byte %d" % cut_at, fails)
        finally:
            os.unlink(cut)
        if cref[0] != 1 or "unfinished" not in cref[2]:
            fails.append("cut capture: expected exit 1 and an unfinished chunk, got exit %d: %s"
                         % (cref[0], cref[2][-300:]))

        # listen --json: one compact line per event, exactly print's events
        lp, lout, lerr, port = L.start_listener(a.jfrstream, ["--json", "--once"])
        if not port:
            return L.result(NAME, False, "listen did not start: " + lerr.text())
        rnd = random.Random(11)
        s = L.connect(port, timeout=60)
        head = min(len(data), 64 * 1024)
        for off in range(head):
            s.send(data[off:off + 1])
        off = head
        while off < len(data):
            k = rnd.randint(1, 20000)
            s.sendall(data[off:off + k])
            off += k
        s.shutdown(socket.SHUT_WR)
        lrc = L.wait(lp, 60, "jfrstream listen")
        s.close()
        lout.join()
        lerr.join()
        lines = [l for _, l in lout.lines]
        doc = squeeze(ref[1].decode("utf-8"))
        expect = '{"recording":{"events":[' + ",".join(lines) + "]}}"
        if lrc != 0:
            fails.append("listen --json --once: exit %s: %s" % (lrc, lerr.text()[-300:]))
        if doc != expect:
            # find the first differing event for the message
            pre = '{"recording":{"events":['
            body = doc[len(pre):-3] if doc.startswith(pre) else doc
            k = 0
            pos = 0
            for k, line in enumerate(lines):
                if body[pos:pos + len(line)] != line:
                    break
                pos += len(line) + 1
            fails.append("listen --json lines differ from print --json's events (%d lines; first difference at line %d)"
                         % (len(lines), k + 1))
        else:
            L.log("  listen --json (1-byte, then random writes): %d lines = print --json's events, compacted"
                  % len(lines))
        detail = "print --json of the capture identical for --feed-size 1/7/random/random:3 (whole and cut: exit %d/%d); listen --json = print events" % (ref[0], cref[0])
        return L.result(NAME, not fails, "; ".join(fails) if fails else detail)
    finally:
        L.cleanup()


if __name__ == "__main__":
    sys.exit(main())
