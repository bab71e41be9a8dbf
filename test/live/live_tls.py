#!/usr/bin/env python3
"""live_tls.py — `jfrstream listen --tls-cert/--tls-key [--tls-client-ca]
[--tls-allow]` against `openssl s_client`, the independent TLS client, on
loopback; the certificates are made by test/certs.py (openssl):

  - mutual TLS: s_client with a client certificate of the right CA sends
    test/data/workload.jfr: every event arrives (per-type counts of --json
    equal `jfrstream summary` of the file). Another CA's certificate, no
    certificate, and plaintext (a python socket sending the .jfr): nothing
    delivered, a "PEER: refused: REASON" line each with the reason, the
    counters (--metrics: jfrstream_connections_refused_total,
    jfrstream_tls_refused_total) when this build serves /metrics.
  - --tls-allow: app-*.example and a SAN URI pattern admit the client
    certificate; CN=intruder.example (same CA) is refused "not allowed".
  - server authentication only (no --tls-client-ca): s_client without a
    certificate delivers every event; plaintext and TLS 1.1 are refused.
  - the CLI's errors: --tls-key without --tls-cert (exit 2), a missing
    certificate file, a key of another certificate, a file that is not PEM
    (exit 1, "jfrstream: listen: --tls-... FILE: REASON").

    test/live/live_tls.py JFRSTREAM

Exit 0 pass, 1 fail, 77 skip (no openssl command, or built without OpenSSL).
"""
import collections
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import livelib as L  # noqa: E402
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import certs as C  # noqa: E402
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "metrics"))
import mlib as M  # noqa: E402

NAME = "live-tls"
WORKLOAD = os.path.join(L.ROOT, "test", "data", "workload.jfr")
fails = []


def check(ok, what):
    L.log("  %s: %s" % ("ok" if ok else "FAIL", what))
    if not ok:
        fails.append(what)
    return ok


def s_client(port, certs, cert=None, timeout=15):
    """Send the workload through `openssl s_client` (with the client
    certificate CERT of certs/, or none); returns (exit status, stderr)."""
    args = ["openssl", "s_client", "-quiet", "-no_ign_eof", "-connect", "127.0.0.1:%d" % port,
            "-CAfile", os.path.join(certs, "ca.pem"), "-verify_return_error"]
    if cert:
        args += ["-cert", os.path.join(certs, cert + ".pem"),
                 "-key", os.path.join(certs, cert + ".key")]
    with open(WORKLOAD, "rb") as f:
        try:
            r = subprocess.run(args, stdin=f, capture_output=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return None, "timeout"
    return r.returncode, r.stderr.decode("utf-8", "replace")


def types(lines):
    return collections.Counter(json.loads(l)["type"] for _, l in lines)


def wait_lines(lines, n, timeout=10):
    end = time.monotonic() + timeout
    while len(lines.lines) < n and time.monotonic() < end:
        time.sleep(0.05)
    return len(lines.lines)


def metrics_values(mport):
    st, _, body, _ = M.http("GET", "http://127.0.0.1:%d/metrics" % mport)
    vals = {}
    for line in body.decode().splitlines():
        m = re.match(r"^(jfrstream_(?:connections_refused|tls_refused)_total) (\S+)$", line)
        if m:
            vals[m.group(1)] = float(m.group(2))
    return vals


def listener(js, certs, args, metrics):
    a = ["--json", "--tls-cert", os.path.join(certs, "server.pem"),
         "--tls-key", os.path.join(certs, "server.key")] + args
    if metrics:
        lst = M.Listener(js, a)
        return lst.p, lst.out, lst.err, lst.port, lst.mport
    p, out, err, port = L.start_listener(js, a)
    return p, out, err, port, None


def refused_line(err, reason, timeout=10):
    return err.wait_for(r"127\.0\.0\.1:\d+: refused: " + re.escape(reason), timeout)


def plaintext(port):
    """The workload in plaintext; the listener closes on its first byte, so
    the send may fail (reset, not connected) at any point."""
    try:
        L.send(port, open(WORKLOAD, "rb").read())
    except OSError as e:
        L.log("  (plaintext sender: %s)" % e)


def stop(p, out, err):
    p.send_signal(2)
    rc = L.wait(p, 15, "listen")
    out.join()
    err.join()
    return rc


def mutual(js, certs, ref, metrics):
    L.log("mutual TLS (--tls-client-ca)")
    p, out, err, port, mport = listener(
        js, certs, ["--tls-client-ca", os.path.join(certs, "ca.pem")], metrics)
    if not check(port is not None, "listener started: %s" % err.text()[-300:]):
        return
    check(err.wait_for(r"\(TLS, client certificates required\)", 1) is not None,
          "the start line says TLS, client certificates required")
    rc, e = s_client(port, certs, "client")
    n = wait_lines(out, sum(ref.values()))
    check(rc == 0 and types(out.lines) == ref,
          "client of the right CA: s_client exit %s, %d events, per type as `summary` (%d)"
          % (rc, n, sum(ref.values())))
    before = len(out.lines)
    for cert, reason in (("other", "certificate verify failed: unable to get local issuer "
                          "certificate"),
                         (None, "TLS handshake: peer did not return a certificate")):
        rc, e = s_client(port, certs, cert)
        m = refused_line(err, reason)
        # (s_client's exit status is not checked: in TLS 1.3 the client ends
        # its handshake before the server checks its certificate, and may exit
        # 0 having sent its bytes into the refusal)
        check(m is not None, "%s: s_client exit %s, refused: %s"
              % (cert or "no certificate", rc, m.group(0) if m else err.text()[-400:]))
    plaintext(port)
    m = refused_line(err, "not TLS (a plaintext client?)")
    check(m is not None, "plaintext: %s" % (m.group(0) if m else err.text()[-300:]))
    time.sleep(0.3)
    check(len(out.lines) == before, "nothing delivered from the 3 refused peers (%d events)"
          % (len(out.lines) - before))
    if mport:
        v = metrics_values(mport)
        check(v.get("jfrstream_tls_refused_total") == 3 and
              v.get("jfrstream_connections_refused_total") == 3,
              "--metrics: refused and tls_refused 3: %s" % v)
    rc = stop(p, out, err)
    check(rc == 1, "exit status 1 (connections refused): %s" % rc)
    check(sum("connected" in l for _, l in err.lines) == 1,
          "one connection announced (refused ones never are)")


def allow(js, certs, ref):
    L.log("--tls-allow")
    ca = os.path.join(certs, "ca.pem")
    for pats in (["app-*.example"], ["nothing", "spiffe://fleet/*"]):
        args = ["--tls-client-ca", ca]
        for x in pats:
            args += ["--tls-allow", x]
        p, out, err, port, _ = listener(js, certs, args, False)
        if not check(port is not None, "listener started"):
            return
        rc, e = s_client(port, certs, "client")
        n = wait_lines(out, sum(ref.values()))
        check(rc == 0 and types(out.lines) == ref, "%s: CN=app-1.example admitted: %d events"
              % (pats, n))
        before = len(out.lines)
        rc, e = s_client(port, certs, "intruder")
        m = refused_line(err, "subject CN=intruder.example not allowed")
        check(m is not None, "%s: intruder refused: %s"
              % (pats, m.group(0) if m else err.text()[-300:]))
        time.sleep(0.2)
        check(len(out.lines) == before, "nothing delivered from the intruder")
        stop(p, out, err)


def server_only(js, certs, ref):
    L.log("server authentication only")
    p, out, err, port, _ = listener(js, certs, [], False)
    if not check(port is not None, "listener started"):
        return
    rc, e = s_client(port, certs, None)
    n = wait_lines(out, sum(ref.values()))
    check(rc == 0 and types(out.lines) == ref, "no client certificate: %d events as `summary`"
          % n)
    plaintext(port)
    check(refused_line(err, "not TLS (a plaintext client?)") is not None, "plaintext refused")
    # TLS 1.1 (offered with its ciphers allowed on the client's side)
    r = L.run(["openssl", "s_client", "-tls1_1", "-cipher", "DEFAULT:@SECLEVEL=0",
               "-connect", "127.0.0.1:%d" % port], 15, stdin=subprocess.DEVNULL)
    m = refused_line(err, "TLS handshake: unsupported protocol")
    check(m is not None, "TLS 1.1 refused: %s" % (m.group(0) if m else err.text()[-300:]))
    stop(p, out, err)


def cli_errors(js, certs):
    L.log("CLI errors")
    srv = [os.path.join(certs, "server.pem"), os.path.join(certs, "server.key")]
    cases = [
        (["--tls-key", srv[1]], 2, r"listen: --tls-key needs --tls-cert"),
        (["--tls-cert", srv[0]], 2, r"listen: --tls-cert needs --tls-key"),
        (["--tls-cert", srv[0], "--tls-key", srv[1], "--tls-allow", "x"], 2,
         r"--tls-allow needs --tls-client-ca"),
        (["--tls-cert", "/nonexistent.pem", "--tls-key", srv[1]], 1,
         r"^jfrstream: listen: --tls-cert /nonexistent\.pem: No such file or directory$"),
        (["--tls-cert", srv[0], "--tls-key", os.path.join(certs, "other.key")], 1,
         r"^jfrstream: listen: --tls-key \S+other\.key: key values mismatch$"),
        (["--tls-cert", WORKLOAD, "--tls-key", srv[1]], 1,
         r"^jfrstream: listen: --tls-cert \S+workload\.jfr: no start line$"),
        (["--tls-cert", srv[0], "--tls-key", srv[1], "--tls-client-ca", "/nonexistent-ca"], 1,
         r"^jfrstream: listen: --tls-client-ca /nonexistent-ca: No such file or directory$"),
    ]
    for args, want, rx in cases:
        r = L.run([js, "listen", "127.0.0.1:0"] + args, 15)
        e = r.stderr.decode("utf-8", "replace")
        check(r.returncode == want and re.search(rx, e, re.M) is not None,
              "%s: exit %s (want %s): %s" % (" ".join(args[-2:]), r.returncode, want,
                                             e.strip()[-200:]))


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    js = L.cli(sys.argv[1])
    if not shutil.which("openssl"):
        return L.skip(NAME, "no openssl command (Debian package openssl)")
    work = tempfile.mkdtemp(prefix="jfrstream-tls-")
    try:
        certs = os.path.join(work, "certs")
        C.listener_set(certs)
        probe = L.run([js, "listen", "127.0.0.1:0", "--tls-cert", "/nonexistent",
                       "--tls-key", "/nonexistent"], 15)
        if b"built without OpenSSL" in probe.stderr:
            return L.skip(NAME, "built without OpenSSL (-Dtls, Debian package libssl-dev)")
        s = L.run([js, "summary", WORKLOAD], 30)
        _, rows = L.parse_summary(s.stdout.decode())
        # summary counts the metadata and constant-pool records too; --json
        # prints events only
        ref = collections.Counter({k: c for k, (c, _) in rows.items()
                                   if c and k not in ("jdk.Metadata", "jdk.Checkpoint")})
        metrics, why = M.has_metrics(js)
        if not metrics:
            L.log("  (no --metrics: %s; the counters are not scraped)" % why)
        mutual(js, certs, ref, metrics)
        allow(js, certs, ref)
        server_only(js, certs, ref)
        cli_errors(js, certs)
    finally:
        L.cleanup()
        shutil.rmtree(work, True)
    return L.result(NAME, not fails, "%d failed: %s" % (len(fails), fails) if fails
                    else "mutual TLS, --tls-allow, server-only and plaintext checked")


if __name__ == "__main__":
    sys.exit(main())
