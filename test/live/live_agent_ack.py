#!/usr/bin/env python3
"""live_agent_ack.py — the sender side of acknowledged delivery and TLS in
tools/jfrstream-agent (the AckedSender of tools/jfr-pump/JfrPump.java), in a real JVM
(test/live/SeqWorkload.java), against independent peers started here.

    test/live/live_agent_ack.py JFRSTREAM AGENT_JAR --mode tls|resend|silent|noack|pump
                                [--java-home DIR | --jdk MAJOR] [--work DIR]

  tls     certificates made with the openssl command (livelib.make_certs); `openssl
          s_server -Verify 1` (mutual TLS) receives the agent's stream (ack=off, a PKCS#1
          "RSA PRIVATE KEY" client key) and writes it to a file: `jfrstream print` finds
          every sequence number in it. Then a trust file of another CA: the agent logs the
          TLS failure, s_server receives nothing, and the application's exit status and
          stdout are as without the agent.
  resend  nothing listens for 3 s: the agent's attempts back off (log lines with their
          jittered waits, caps 0.5, 1, 2, 2 s with retry-max=2s); then a fake listener
          (livelib.AckListener) that acknowledges what it read resets the first connection
          2 s in, before acknowledging its last read. The second connection starts with the
          hello line and a chunk header, and its first bytes equal those of the first
          connection from that chunk's start; the first connection up to there plus the
          second, parsed by `jfrstream print`, hold every sequence number exactly once; the
          final acknowledgement is waited for at exit.
  silent  the fake listener's first connection goes silent 2 s in (a network cut without a
          reset: no reads, no acks, the socket open); the agent (ack-timeout=3s) logs the
          timeout once and reconnects; the second connection is checked as for resend.
  noack   a fake listener that reads and never acknowledges (an older listener, nc -l),
          buffer=1m: every sequence number arrives, chunks are dropped from the bounded
          buffer (one log line, counted), at most 1 MiB kept, the exit is not delayed.
Exit 0 pass, 1 fail, 77 skip.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import livelib as L  # noqa: E402
import live_agent as A  # noqa: E402  (run_app, check_app: the agent tests' own checks)

ATTEMPT = re.compile(r"attempt (\d+) failed; next attempt in (\d+) ms \(backoff cap (\d+) ms\)")


def seqs_of(jfrstream, path):
    """{seq: count} of the jfrstream.Seq events in a stream file, read by `jfrstream print`."""
    r = L.run([jfrstream, "print", "--json", "--events", "jfrstream.Seq", path], 60)
    if r.returncode != 0:
        return None, r.stderr.decode(errors="replace")[-400:]
    seen = {}
    for ev in json.loads(r.stdout)["recording"]["events"]:
        s = ev["values"]["seq"]
        seen[s] = seen.get(s, 0) + 1
    return seen, ""


def check_seqs(fails, what, seen, last):
    if seen is None:
        fails.append("%s: jfrstream print failed" % what)
        return
    lost = [s for s in range(last + 1) if s not in seen]
    dup = sum(c - 1 for c in seen.values())
    L.log("  %s: %d of %d sequence numbers, %d lost, %d duplicated" % (what, len(seen), last + 1,
                                                                      len(lost), dup))
    if last < 0 or lost or dup:
        fails.append("%s: %d lost (first %s), %d duplicated" % (what, len(lost), lost[:5], dup))


def write(path, data):
    with open(path, "wb") as f:
        f.write(data)
    return path


def mode_tls(a, java, work, fails):
    certs = L.make_certs(os.path.join(work, "certs"))
    seq = ["--rate", "2000", "--duration", "2", "--wait-recordings", "1"]
    rc0, out0, err0, _ = A.run_app(java, ["-XX:StartFlightRecording"], seq)
    A.check_app(fails, "without agent", rc0, out0, err0)
    got = os.path.join(work, "s_server.bin")
    port = L.free_port()
    srv = L.start(["openssl", "s_server", "-accept", "127.0.0.1:%d" % port, "-cert", certs["server.pem"],
                   "-key", certs["server.key"], "-CAfile", certs["ca.pem"], "-Verify", "1",
                   "-quiet", "-naccept", "1"], stdin=subprocess.PIPE, stdout=open(got, "wb"))
    serr = L.Lines(srv.stderr)
    time.sleep(0.5)
    opt = ("-javaagent:%s=connect=127.0.0.1:%d,tls-ca=%s,tls-cert=%s,tls-key=%s,ack=off"
           % (a.agent, port, certs["ca.pem"], certs["client.pem"], certs["client-rsa.key"]))
    rc, out, err, d = A.run_app(java, [opt], seq)
    last = A.check_app(fails, "mTLS", rc, out, err, ref=out0)
    L.wait(srv, 10, "openssl s_server")
    serr.join()
    conn = [l for l in err if "connected to" in l]
    L.log("  mTLS: %s; s_server got %d bytes; %s" % (conn[0] if conn else "(no connection)",
                                                     os.path.getsize(got), serr.text().replace("\n", " | ")))
    if not conn or "TLSv1." not in conn[0]:
        fails.append("mTLS: no TLS connection logged: %r" % err[-4:])
    if "CN = client" not in serr.text():
        fails.append("s_server did not verify the client certificate")
    seen, why = seqs_of(a.jfrstream, got)
    check_seqs(fails, "mTLS stream", seen, last if last is not None else -1)
    # another CA: the server's certificate is not trusted
    got2 = os.path.join(work, "s_server-other.bin")
    port = L.free_port()
    srv = L.start(["openssl", "s_server", "-accept", "127.0.0.1:%d" % port, "-cert", certs["server.pem"],
                   "-key", certs["server.key"], "-quiet"], stdin=subprocess.PIPE, stdout=open(got2, "wb"))
    time.sleep(0.5)
    opt = ("-javaagent:%s=connect=127.0.0.1:%d,tls-ca=%s,ack=off,drain=2s"
           % (a.agent, port, certs["other-ca.pem"]))
    rc, out, err, d = A.run_app(java, [opt], seq)
    A.check_app(fails, "wrong CA", rc, out, err, ref=out0)
    srv.kill()
    srv.wait(10)
    tlsf = [l for l in err if "TLS handshake" in l]
    L.log("  wrong CA: exit %s, delay %.2f s, s_server got %d bytes; %s" % (
        rc, d or -1, os.path.getsize(got2), tlsf[0] if tlsf else "(no TLS failure logged)"))
    if len(tlsf) != 1 or "PKIX" not in tlsf[0] and "certificate" not in tlsf[0].lower():
        fails.append("wrong CA: expected one TLS failure line, got %r" % tlsf)
    if os.path.getsize(got2) != 0:
        fails.append("wrong CA: s_server received %d bytes" % os.path.getsize(got2))
    if d is None or d > A.DELAY_BOUND_S:
        fails.append("wrong CA: exit delay %s s" % d)
    # the right CA, but the host name (localhost) is not in the certificate (SAN IP:127.0.0.1)
    lis = L.AckListener(tls=L.tls_server_context(certs, client_ca=False))
    opt = "-javaagent:%s=connect=localhost:%d,tls-ca=%s,drain=2s" % (a.agent, lis.port, certs["ca.pem"])
    rc, out, err, d = A.run_app(java, [opt], seq)
    lis.close()
    A.check_app(fails, "host name", rc, out, err, ref=out0)
    tlsf = [l for l in err if "TLS handshake" in l]
    L.log("  host name not in the certificate: %s; the listener got %d connections"
          % (tlsf[0] if tlsf else "(no TLS failure logged)", len(lis.conns)))
    if len(tlsf) != 1 or "localhost" not in tlsf[0] or lis.conns:
        fails.append("host name: expected one TLS failure naming localhost and no connection: %r" % tlsf)
    return "mTLS through openssl s_server: every seq; another CA and a wrong host name refused, the app unchanged"


def mode_resend(a, java, work, fails):
    port = L.free_port()
    opt = "-javaagent:%s=connect=127.0.0.1:%d,retry-max=2s,verbose" % (a.agent, port)
    # 11 s: the reset comes at most 3 + 2 (backoff) + 2 s in, the reconnect 0.5 s later; the
    # agent has caught up long before the exit (JFR deletes its repository then, unread
    # chunk files with it)
    p = L.start([java, opt, L.SEQ_JAVA, "--rate", "2000", "--duration", "11", "--wait-recordings", "1",
                 "--rotate", "1.0"])
    out, err = L.Lines(p.stdout), L.Lines(p.stderr)
    out.wait_for(r"^start=", 60)
    time.sleep(3)
    lis = L.AckListener(ack=True, cut_after=2.0, port=port)
    rc = L.wait(p, 60, "SeqWorkload")
    out.join()
    err.join()
    lis.close()
    elog = [l for _, l in err.lines]
    write(os.path.join(work, "agent.err"), "".join(l + "\n" for l in elog).encode())  # kept on failure
    last = A.check_app(fails, "resend", rc, [l for _, l in out.lines], elog)
    # backoff
    att = [tuple(int(x) for x in m.groups()) for m in map(ATTEMPT.search, elog) if m]
    L.log("  attempts (n, wait ms, cap ms): %s" % att)
    caps = [c for _, _, c in att]
    want = [min(2000, 500 << i) for i in range(len(caps))]
    if len(att) < 3 or caps[:3] != want[:3] or any(w > c for _, w, c in att):
        fails.append("backoff: attempts %s, caps expected %s" % (att, want))
    if att and all(w == c for _, w, c in att):
        fails.append("backoff: no jitter, every wait is its cap")
    return "backoff waits %s ms; %s" % ([w for _, w, _ in att], check_resend(a, work, fails, lis, elog, last))


def check_resend(a, work, fails, lis, elog, last):
    """The two connections of an AckListener that reset the first one: the resend."""
    for l in elog:
        if any(w in l for w in ("lost", "reconnected", "acknowledged", "connected to", "final chunk", "deleted")):
            L.log("  sender: " + l)
    conns = lis.conns
    if len(conns) != 2:
        fails.append("expected 2 connections, got %d" % len(conns))
        return "?"
    c1, c2 = conns
    for i, c in enumerate(conns):
        if c["hello"] != L.HELLO:
            fails.append("connection %d starts with %r, not the hello line" % (i + 1, c["hello"]))
    d1, d2 = bytes(c1["data"]), bytes(c2["data"])
    heads = L.live_header_offsets(d1)
    L.log("  connection 1: %d bytes, chunk headers at %s, last ack %s, reset: %s; connection 2: %d bytes"
          % (len(d1), heads, c1["acks"][-1] if c1["acks"] else None, c1["cut"], len(d2)))
    if not c1["cut"]:
        fails.append("the first connection was not reset")
    if d2[:4] != b"FLR\0":
        fails.append("connection 2 does not start with a chunk header: %r" % d2[:8])
    h = next((h for h in heads if d2[:len(d1) - h] == d1[h:]), None)
    if h is None:
        fails.append("connection 2 does not repeat connection 1 from a chunk start")
        return "?"
    acked = c1["acks"][-1] if c1["acks"] else 0
    L.log("  connection 2 repeats connection 1 from its offset %d (chunk %d of %d): %d bytes identical; "
          "%d bytes were acknowledged" % (h, heads.index(h) + 1, len(heads), len(d1) - h, acked))
    if not (h <= acked or acked == 0) or h >= len(d1):
        fails.append("resend start %d: not the chunk of the first unacknowledged byte (ack %d, %d bytes)"
                     % (h, acked, len(d1)))
    seen, _ = seqs_of(a.jfrstream, write(os.path.join(work, "joined.bin"), d1[:h] + d2))
    check_seqs(fails, "connection 1 to the resend + connection 2", seen, last if last is not None else -1)
    if not c2["acks"] or c2["acks"][-1] != len(d2):
        fails.append("connection 2: last ack %s of %d bytes" % (c2["acks"][-1:], len(d2)))
    if not any("acknowledged all %d bytes" % len(d2) in l for l in elog):
        fails.append("the sender did not log the final acknowledgement")
    # the agent resends from stream offset h (connection 1 started at 0); it had written more
    # than connection 1 read before the reset (lost in the socket buffers)
    rs = [m for m in (re.search(r"resending (\d+) bytes from the start of chunk at stream offset (\d+)", l)
                      for l in elog) if m]
    if len(rs) != 1 or int(rs[0].group(2)) != h or int(rs[0].group(1)) < len(d1) - h:
        fails.append("the sender's resend line %s does not match offset %d" % ([m.group(0) for m in rs], h))
    return "reset at %d bytes; %s bytes resent from the chunk at %d, every seq once" % (
        len(d1), rs[0].group(1) if rs else "?", h)


def mode_silent(a, java, work, fails):
    """A network cut without a reset: the fake listener's first connection goes silent 2 s
    in (no reads, no acks, the socket left open); ack-timeout=3s gives it up, the second
    connection resends from the chunk start: the same checks as a reset."""
    lis = L.AckListener(ack=True, silent_after=2.0)
    opt = "-javaagent:%s=connect=127.0.0.1:%d,retry-max=1s,ack-timeout=3s" % (a.agent, lis.port)
    # 10 s: silent at 2 s, given up about 3 s later, the resend 0.5 s after that
    rc, out, err, _ = A.run_app(java, [opt], ["--rate", "2000", "--duration", "10",
                                              "--wait-recordings", "1", "--rotate", "1.0"])
    lis.close()
    write(os.path.join(work, "agent-silent.err"), "".join(l + "\n" for l in err).encode())
    last = A.check_app(fails, "silent cut", rc, out, err)
    gone = [l for l in err if "said nothing for 3.0 s (ack-timeout" in l]
    L.log("  %s" % (gone[0] if gone else "(no ack-timeout line)"))
    if len(gone) != 1:
        fails.append("expected one ack-timeout line, got %d" % len(gone))
    if len(lis.conns) >= 1 and not lis.conns[0]["silent"]:
        fails.append("the first connection did not go silent")
    return "given up after 3 s of silence; " + check_resend(a, work, fails, lis, err, last)


def mode_pump(a, java, work, fails):
    """tools/jfr-pump --ack over mutual TLS (Python's ssl on the listener side) into an
    AckListener that resets the first connection: the same resend checks."""
    certs = L.make_certs(os.path.join(work, "certs"))
    lis = L.AckListener(ack=True, cut_after=2.0, tls=L.tls_server_context(certs))
    w, wout, werr = L.seq_workload(java, ["--rate", "2000", "--duration", "5", "--wait-recordings", "1",
                                          "--rotate", "1.0", "--linger", "30"])
    pid = L.workload_pid(wout)
    if not pid:
        fails.append("SeqWorkload did not start: " + werr.text()[-400:])
        return "?"
    pp, pout, perr = L.pump(java, ["--pid", str(pid), "--duration", "7s", "--ack", "--retry-max", "1s",
                                   "--connect", "127.0.0.1:%d" % lis.port, "--tls-ca", certs["ca.pem"],
                                   "--tls-cert", certs["client.pem"], "--tls-key", certs["client.key"]])
    prc = L.wait(pp, 60, "jfr-pump")
    perr.join()
    m = wout.wait_for(r"^last=(-?\d+)", 30)
    w.terminate()
    L.wait(w, 30, "SeqWorkload")
    lis.close()
    plog = [l for _, l in perr.lines]
    if prc != 0:
        fails.append("jfr-pump exit %s: %s" % (prc, plog[-3:]))
    if not any("TLSv1." in l for l in plog if "connected to" in l):
        fails.append("the pump did not log a TLS connection")
    if lis.tls_errors:
        fails.append("TLS errors on the listener: %s" % lis.tls_errors)
    return "pump over mTLS: " + check_resend(a, work, fails, lis, plog, int(m.group(1)) if m else -1)


def mode_noack(a, java, work, fails):
    lis = L.AckListener(ack=False)
    opt = "-javaagent:%s=connect=127.0.0.1:%d,buffer=1m" % (a.agent, lis.port)
    rc, out, err, d = A.run_app(java, [opt], ["--rate", "20000", "--duration", "4", "--wait-recordings",
                                              "1", "--rotate", "0.4", "--linger", "1"])
    lis.close()
    last = A.check_app(fails, "no acks", rc, out, err)
    conns = lis.conns
    if len(conns) != 1:
        fails.append("expected 1 connection, got %d" % len(conns))
        return "?"
    data = bytes(conns[0]["data"])
    seen, _ = seqs_of(a.jfrstream, write(os.path.join(work, "noack.bin"), data))
    check_seqs(fails, "stream to a listener that never acks", seen, last if last is not None else -1)
    nothing = [l for l in err if "acknowledged nothing" in l]
    stats = [l for l in err if "dropped from the resend buffer" in l]
    d = d - 1 if d is not None else None     # SeqWorkload --linger 1
    L.log("  %s\n  %s\n  exit delay %.2f s" % (nothing[0] if nothing else "(no drop line)",
                                               stats[-1] if stats else "(no stats)", d or -1))
    m = re.search(r"(\d+) chunks \((\d+) bytes\) dropped from the resend buffer.* (\d+) bytes kept at the end",
                  stats[-1] if stats else "")
    if len(nothing) != 1 or not m or int(m.group(1)) < 1:
        fails.append("no acks: expected one drop line and dropped chunks counted")
    elif int(m.group(3)) > 1 << 20:
        fails.append("no acks: %s bytes kept, more than buffer=1m" % m.group(3))
    if d is None or d > 2.0:
        fails.append("no acks: exit delay %s s after the linger" % d)
    return "every seq, %s chunks dropped from a 1 MiB buffer (%s bytes kept), exit delay %.2f s" % (
        m.group(1) if m else "?", m.group(3) if m else "?", d or -1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("jfrstream")
    ap.add_argument("agent")
    ap.add_argument("--mode", required=True, choices=["tls", "resend", "silent", "noack", "pump"])
    ap.add_argument("--java-home")
    ap.add_argument("--jdk", type=int, metavar="MAJOR")
    ap.add_argument("--work")
    a = ap.parse_args()
    name = "agent-" + a.mode + ("-jdk%d" % a.jdk if a.jdk else "")
    if not a.agent:
        return L.skip(name, "a build without the agent (no javac or jar found, or -Dagent=disabled)")
    if not os.path.exists(a.agent):
        return L.skip(name, "no %s (ninja -C BUILD builds it)" % a.agent)
    if a.mode in ("tls", "pump") and not shutil.which("openssl"):
        return L.skip(name, "no openssl command (Debian package openssl)")
    a.jfrstream = L.cli(a.jfrstream)
    if a.jdk:
        a.java_home, why = L.find_jdk(a.jdk)
        if not a.java_home:
            return L.skip(name, why)
    java = L.java_bin(a.java_home)
    if not java:
        return L.skip(name, "no java (%s)" % (a.java_home or "PATH"))
    if a.work:
        os.makedirs(a.work, exist_ok=True)
    work = tempfile.mkdtemp(prefix=name + "-", dir=a.work)
    fails = []
    try:
        detail = {"tls": mode_tls, "resend": mode_resend, "silent": mode_silent,
                  "noack": mode_noack, "pump": mode_pump}[a.mode](a, java, work, fails)
        if fails:
            L.log("  kept " + work)
            return L.result(name, False, "; ".join(fails))
        shutil.rmtree(work, ignore_errors=True)
        return L.result(name, True, detail)
    finally:
        L.cleanup()


if __name__ == "__main__":
    sys.exit(main())
