#!/usr/bin/env python3
"""sink_pyroscope_auth.py — `listen --pyroscope` with authentication and HTTPS
against the fake Pyroscope (pyroscope_receiver.py over Python's ssl, the
certificates made here by the openssl command, test/certs.py).

usage: sink_pyroscope_auth.py JFRSTREAM FIXTURE --work DIR

Each case: a receiver, `listen 127.0.0.1:0 --once --pyroscope URL ...`,
FIXTURE (workload.jfr) sent once on one connection (its cpu window is
pushed when it ends), the exit line's counts and the receiver's requests.

 (a) HTTPS with --pyroscope-ca, --pyroscope-basic-auth FILE (a password
     with ':' and a trailing newline in the file), --pyroscope-tenant,
     --pyroscope-header 'X-Team: perf' and --pyroscope-header-file
     X-Api-Key=FILE: the receiver (which answers 401/403 otherwise) gets
     exactly Authorization: Basic base64(USER:PASSWORD), X-Scope-OrgID,
     both headers; 1 window pushed. While it runs, /proc/PID/cmdline holds
     the files' paths and none of the secrets; no output holds them.
 (b) --pyroscope-bearer FILE, then $JFRSTREAM_PYROSCOPE_BEARER (no option):
     Authorization: Bearer TOKEN each time.
 (c) a wrong password: 401, the window failed at once (0 retried), the exit
     line says "HTTP 401 Unauthorized ... check --pyroscope-basic-auth";
     the wrong tenant: 403, "check --pyroscope-basic-auth and
     --pyroscope-tenant"; no secret in the output.
 (d) no --pyroscope-ca (the system's CAs do not know the test CA), and the
     CA of another PKI: nothing accepted, the window failed at once with
     "SSL certificate problem", 0 retried.
 (e) a receiver requiring a client certificate of the test CA: with
     --pyroscope-cert/--pyroscope-key accepted; without them nothing is
     accepted, the receiver counts a refused handshake, the listener says
     "pyroscope: retrying ... (last: ...)" with the TLS error.
 (f) usage errors (exit 2, the option and file named, no secret printed):
     a missing file, an empty one, a basic-auth file without ':', a bearer
     with a space, an empty $JFRSTREAM_PYROSCOPE_BASIC_AUTH, both options,
     --pyroscope-key without --pyroscope-cert, --pyroscope-ca with http://,
     credentials in the URL, --pyroscope-tenant without --pyroscope, an
     Authorization header on the command line.

SKIP (77) without libcurl in the build or the openssl command.
"""
import argparse
import base64
import os
import re
import shutil
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "test", "live"))
sys.path.insert(0, os.path.join(ROOT, "test"))
sys.path.insert(0, HERE)
import livelib as L  # noqa: E402
import certs  # noqa: E402
from pyroscope_receiver import Receiver  # noqa: E402

NAME = "sink-pyroscope-auth"
USER, PASSWORD = "12345", "glc_s3cr3t:with-colon"
TOKEN = "tok-9f8e7d6c5b4a"
API_KEY = "apikey-0a1b2c3d"
SECRETS = (PASSWORD, TOKEN, API_KEY, "wrong-pass-77")
SANITIZER = re.compile(r"ERROR: AddressSanitizer|ERROR: LeakSanitizer|runtime error:|"
                       r"==\d+==ERROR|ThreadSanitizer")
FINAL = re.compile(r"pyroscope: (\d+) windows? pushed, (\d+) retried, (\d+) dropped, "
                   r"(\d+) failed(.*)")


class Fail(Exception):
    pass


def check(cond, what):
    if not cond:
        raise Fail(what)


def write(path, text, mode=0o600):
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, mode)
    return path


def basic(user, password):
    return "Basic " + base64.b64encode(("%s:%s" % (user, password)).encode()).decode()


def run_listen(jfr, fixture, args, env=None, during=None, wait_line=None):
    """listen --once ARGS, FIXTURE sent once; returns (rc, stdout, stderr,
    what `during(pid)` returned). With wait_line (a run that would retry for
    long): without --once, stopped by two SIGTERMs once stderr matches it."""
    e = dict(os.environ)
    for k in ("JFRSTREAM_PYROSCOPE_BASIC_AUTH", "JFRSTREAM_PYROSCOPE_BEARER"):
        e.pop(k, None)
    e.update(env or {})
    p = L.start([jfr, "listen", "127.0.0.1:0"] + ([] if wait_line else ["--once"]) + args,
                env=e)
    out, err = L.Lines(p.stdout), L.Lines(p.stderr)
    m = err.wait_for(r"listening on 127\.0\.0\.1:(\d+)", 15)
    if not m:
        p.kill()
        p.wait()
        err.join()
        raise Fail("listen did not start: %s" % err.text()[-600:])
    seen = during(p.pid) if during else None
    L.send(int(m.group(1)), open(fixture, "rb").read())
    if wait_line:
        got = err.wait_for(wait_line, 15)
        p.send_signal(signal.SIGTERM)
        time.sleep(0.3)
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)  # the second: at once
        check(got, "no line %r: %s" % (wait_line, err.text()[-800:]))
    rc = L.wait(p, 30, "listen")
    out.join()
    err.join()
    text = out.text() + err.text()
    check(not SANITIZER.search(text), "a sanitizer report: %s" % text[-1500:])
    check(wait_line or rc == 0, "listen exited %s: %s" % (rc, err.text()[-600:]))
    for s in SECRETS:
        check(s not in text, "a secret (%s...) in the output: %s" % (s[:4], text[-800:]))
    return rc, out.text(), err.text(), seen


def final(err):
    m = FINAL.search(err)
    check(m, "no final pyroscope line: %s" % err[-800:])
    return [int(m.group(i)) for i in range(1, 5)] + [m.group(5)]


def cmdline(pid):
    with open("/proc/%d/cmdline" % pid, "rb") as f:
        return f.read().decode("utf-8", "replace").split("\0")


# ------------------------------------------------------------------ cases

def case_headers(jfr, fixture, w, pki):
    rec = Receiver(tls=pki["server"], require={
        "Authorization": basic(USER, PASSWORD), "X-Scope-OrgID": "tenant-1",
        "X-Team": "perf", "X-Api-Key": API_KEY}).start()
    try:
        bfile = write(os.path.join(w, "basic"), "%s:%s\n" % (USER, PASSWORD))
        kfile = write(os.path.join(w, "apikey"), API_KEY + "\r\n")
        rc, _, err, argv = run_listen(jfr, fixture, [
            "--pyroscope", rec.url, "--pyroscope-ca", pki["ca"], "--pyroscope-basic-auth", bfile,
            "--pyroscope-tenant", "tenant-1", "--pyroscope-header", "X-Team: perf",
            "--pyroscope-header-file", "X-Api-Key=" + kfile], during=cmdline)
        pushed, retried, dropped, failed, _ = final(err)
        acc = rec.accepted()
        check(rc == 0 and pushed == 1 and (retried, dropped, failed) == (0, 0, 0) and len(acc) == 1,
              "rc %s, counts %s, %d accepted, statuses %s: %s"
              % (rc, final(err)[:4], len(acc), [r["status"] for r in rec.requests], err[-600:]))
        h = acc[0]["headers"]
        check(h.get("Authorization") == basic(USER, PASSWORD) and
              h.get("X-Scope-OrgID") == "tenant-1" and h.get("X-Team") == "perf" and
              h.get("X-Api-Key") == API_KEY, "headers %s" % h)
        joined = " ".join(argv)
        check(bfile in joined and kfile in joined, "the files not in the command line %s" % argv)
        check(not any(s in joined for s in SECRETS), "a secret in the command line %s" % argv)
        return "HTTPS with the test CA: 1 window pushed with Authorization: Basic, " \
            "X-Scope-OrgID, X-Team and X-Api-Key (from a file); the command line (%d words) " \
            "holds the paths, no secret" % len(argv)
    finally:
        rec.stop()


def case_bearer(jfr, fixture, w, pki):
    rec = Receiver(tls=pki["server"], require={"Authorization": "Bearer " + TOKEN}).start()
    try:
        tfile = write(os.path.join(w, "token"), TOKEN + "\n")
        runs = [([ "--pyroscope-bearer", tfile], None),
                ([], {"JFRSTREAM_PYROSCOPE_BEARER": TOKEN})]
        for extra, env in runs:
            rc, _, err, _ = run_listen(jfr, fixture, ["--pyroscope", rec.url, "--pyroscope-ca",
                                                      pki["ca"]] + extra, env=env)
            pushed, retried, dropped, failed, _ = final(err)
            check(rc == 0 and pushed == 1 and failed == 0,
                  "bearer %s: rc %s counts %s" % ("env" if env else "file", rc, final(err)[:4]))
        acc = rec.accepted()
        check(len(acc) == 2 and all(r["headers"].get("Authorization") == "Bearer " + TOKEN
                                    for r in acc), "accepted %d" % len(acc))
        return "Authorization: Bearer from --pyroscope-bearer FILE and from " \
            "$JFRSTREAM_PYROSCOPE_BEARER: 2 windows accepted"
    finally:
        rec.stop()


def case_refused(jfr, fixture, w, pki):
    rec = Receiver(tls=pki["server"], require={
        "Authorization": basic(USER, PASSWORD), "X-Scope-OrgID": "tenant-1"}).start()
    try:
        bad = write(os.path.join(w, "basic-wrong"), "%s:wrong-pass-77\n" % USER)
        good = write(os.path.join(w, "basic"), "%s:%s\n" % (USER, PASSWORD))
        t0 = time.monotonic()
        rc, _, err, _ = run_listen(jfr, fixture, ["--pyroscope", rec.url, "--pyroscope-ca",
                                                  pki["ca"], "--pyroscope-basic-auth", bad,
                                                  "--pyroscope-tenant", "tenant-1"])
        took = time.monotonic() - t0
        pushed, retried, dropped, failed, last = final(err)
        check((pushed, retried, failed) == (0, 0, 1), "401: counts %s" % final(err)[:4])
        check("HTTP 401 Unauthorized" in last and "user '%s'" % USER in last and
              "check --pyroscope-basic-auth" in last, "401: last error %r" % last)
        rc2, _, err2, _ = run_listen(jfr, fixture, ["--pyroscope", rec.url, "--pyroscope-ca",
                                                    pki["ca"], "--pyroscope-basic-auth", good,
                                                    "--pyroscope-tenant", "tenant-2"])
        p2, r2, d2, f2, last2 = final(err2)
        check((p2, r2, f2) == (0, 0, 1) and "HTTP 403 Forbidden" in last2 and
              "check --pyroscope-basic-auth and --pyroscope-tenant" in last2,
              "403: counts %s last %r" % ((p2, r2, f2), last2))
        check([r["status"] for r in rec.requests] == [401, 403], "statuses %s"
              % [r["status"] for r in rec.requests])
        return "a wrong password: one 401, failed at once (run %.1f s), %r; a wrong tenant: " \
            "403, %r" % (took, last.strip(), last2.strip())
    finally:
        rec.stop()


def case_ca(jfr, fixture, w, pki):
    rec = Receiver(tls=pki["server"]).start()
    try:
        notes = []
        for label, extra in (("no --pyroscope-ca", []),
                             ("another CA", ["--pyroscope-ca", pki["other"]])):
            rc, _, err, _ = run_listen(jfr, fixture, ["--pyroscope", rec.url] + extra)
            pushed, retried, dropped, failed, last = final(err)
            check((pushed, retried, failed) == (0, 0, 1) and "SSL certificate problem" in last,
                  "%s: counts %s last %r" % (label, final(err)[:4], last))
            notes.append("%s: %s" % (label, last.strip()))
        check(not rec.accepted() and not rec.requests, "requests reached the receiver")
        return "; ".join(notes)
    finally:
        rec.stop()


def case_mtls(jfr, fixture, w, pki):
    rec = Receiver(tls=pki["server"], client_ca=pki["ca"]).start()
    try:
        crt, key = pki["client"]
        rc, _, err, _ = run_listen(jfr, fixture, ["--pyroscope", rec.url, "--pyroscope-ca",
                                                  pki["ca"], "--pyroscope-cert", crt,
                                                  "--pyroscope-key", key])
        pushed, retried, dropped, failed, _ = final(err)
        check(rc == 0 and pushed == 1 and failed == 0 and len(rec.accepted()) == 1,
              "with the client certificate: rc %s counts %s" % (rc, final(err)[:4]))
        rc, _, err, _ = run_listen(jfr, fixture, ["--pyroscope", rec.url, "--pyroscope-ca",
                                                  pki["ca"], "--window", "1"],
                                   wait_line=r"pyroscope: retrying, \d+ retr(y|ies) so far "
                                             r"\(last: ([^)]+)\)")
        m = re.search(r"pyroscope: retrying, \d+ retr(?:y|ies) so far \(last: (.+)\)", err)
        check(m and "does the server require one?" in m.group(1),
              "the retry line does not suggest the client certificate: %s" % err[-600:])
        check(len(rec.accepted()) == 1 and rec.tls_errors,
              "without it: %d accepted, tls errors %s" % (len(rec.accepted()), rec.tls_errors))
        return "mTLS: with --pyroscope-cert/--pyroscope-key 1 window accepted; without, none " \
            "(%d handshakes refused by the receiver: %s), the listener says %r" \
            % (len(rec.tls_errors), rec.tls_errors[0][:60], m.group(1) if m else "")
    finally:
        rec.stop()


def case_usage(jfr, fixture, w, pki):
    url = "https://127.0.0.1:9"
    empty = write(os.path.join(w, "empty"), "")
    nocolon = write(os.path.join(w, "nocolon"), "wrong-pass-77\n")
    spaced = write(os.path.join(w, "spaced"), "tok en wrong-pass-77\n")
    good = write(os.path.join(w, "basic"), "%s:%s\n" % (USER, PASSWORD))
    missing = os.path.join(w, "no-such-file")
    cases = [
        (["--pyroscope", url, "--pyroscope-basic-auth", missing],
         None, "--pyroscope-basic-auth %s: No such file" % missing),
        (["--pyroscope", url, "--pyroscope-bearer", empty], None,
         "--pyroscope-bearer %s: empty" % empty),
        (["--pyroscope", url, "--pyroscope-basic-auth", nocolon], None,
         "--pyroscope-basic-auth %s: not USER:PASSWORD" % nocolon),
        (["--pyroscope", url, "--pyroscope-bearer", spaced], None,
         "--pyroscope-bearer %s: not a token" % spaced),
        (["--pyroscope", url], {"JFRSTREAM_PYROSCOPE_BASIC_AUTH": ""},
         "JFRSTREAM_PYROSCOPE_BASIC_AUTH is empty"),
        (["--pyroscope", url, "--pyroscope-basic-auth", good, "--pyroscope-bearer", good], None,
         "--pyroscope-basic-auth and --pyroscope-bearer: one of the two"),
        (["--pyroscope", url, "--pyroscope-key", good], None,
         "--pyroscope-key needs --pyroscope-cert"),
        (["--pyroscope", "http://127.0.0.1:9", "--pyroscope-ca", good], None,
         "--pyroscope-ca needs an https://"),
        (["--pyroscope", "https://%s:%s@127.0.0.1:9" % (USER, "pw")], None,
         "no credentials in the URL"),
        (["--pyroscope-tenant", "t"], None, "--pyroscope-tenant needs --pyroscope URL"),
        (["--pyroscope", url, "--pyroscope-header", "X Bad: v"], None,
         "--pyroscope-header needs 'NAME: VALUE'"),
        (["--pyroscope", url, "--pyroscope-header", "authorization: Bearer wrong-pass-77"], None,
         "--pyroscope-header authorization: a secret on the command line"),
        (["--pyroscope", url, "--pyroscope-header-file", "X-Key=" + missing], None,
         "--pyroscope-header-file %s: No such file" % missing),
    ]
    for args, env, want in cases:
        why = L.usage_error(jfr, ["listen", "127.0.0.1:0"] + args, want, env, SECRETS)
        check(not why, why)
    return "%d usage errors, exit 2 each, naming the option and the file, no secret" % len(cases)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("jfrstream")
    ap.add_argument("fixture")
    ap.add_argument("--work", required=True)
    a = ap.parse_args()
    jfr = L.cli(a.jfrstream)
    ok, why = certs.available()
    if not ok:
        return L.skip(NAME, why)
    r = subprocess.run([jfr, "listen", "--pyroscope", "https://127.0.0.1:9", "--help"],
                       capture_output=True, text=True, timeout=30)
    if "built without libcurl" in r.stdout + r.stderr:
        return L.skip(NAME, "jfrstream was built without libcurl (Debian: apt-get install "
                      "libcurl4-openssl-dev, then meson setup --reconfigure build)")
    w = a.work
    shutil.rmtree(w, ignore_errors=True)
    os.makedirs(w)
    ca = certs.CA(os.path.join(w, "pki"), "ca")
    other = certs.CA(os.path.join(w, "pki"), "other")
    pki = {"ca": ca.cert, "other": other.cert, "server": ca.issue("server"),
           "client": ca.issue("client", client=True)}
    fails = 0
    for name, fn in (("headers", case_headers), ("bearer", case_bearer),
                     ("refused", case_refused), ("ca", case_ca), ("mtls", case_mtls),
                     ("usage", case_usage)):
        t0 = time.monotonic()
        try:
            detail = fn(jfr, a.fixture, w, pki)
            L.result("%s (%s)" % (NAME, name), True, "%s [%.1f s]" % (detail, time.monotonic() - t0))
        except (Fail, RuntimeError, OSError, subprocess.TimeoutExpired) as e:
            fails += L.result("%s (%s)" % (NAME, name), False, str(e))
    L.cleanup()
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
