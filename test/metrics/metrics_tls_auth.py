#!/usr/bin/env python3
"""metrics_tls_auth.py — `listen --metrics` over HTTPS with basic auth
(--metrics-tls-cert, --metrics-tls-key, --metrics-basic-auth), the
certificates made here by the openssl command (test/certs.py).

usage: metrics_tls_auth.py JFRSTREAM FIXTURE --work DIR

The users file holds a plain password (alice) and, when Python's crypt
makes bcrypt here, a bcrypt hash of cost 10 (bob); FIXTURE (workload.jfr,
596 events) is sent to the listener once.

 (a) Python's https client trusting the test CA: no credentials -> 401 with
     WWW-Authenticate: Basic realm="jfrstream"; a wrong password, an unknown
     user -> 401; alice -> 200 with jfr_events_total; bob -> 200 (the first
     scrape pays bcrypt, the next ones hit the cache: both times reported),
     a wrong password for bob after that -> still 401; plain HTTP to the
     HTTPS port gets no HTTP answer; a client without the CA fails its
     verification; jfrstream_metrics_unauthorized_total = the 401s sent.
 (b) the real Prometheus scrapes it: a job with scheme https, tls_config
     ca_file and basic_auth password_file (written here) has up == 1 and
     sum(jfr_events_total) == 596 through its query API; a second job with
     a wrong password file has up == 0 and its target's lastError says 401.
     (Without a prometheus binary this part is left out, said so.)
 (c) usage errors (exit 2, option and file named): --metrics-tls-cert
     without its key, a key file without a key, a users line without ':',
     --metrics-basic-auth without --metrics.

SKIP (77) without libmicrohttpd in the build, without TLS in it, or
without the openssl command.
"""
import argparse
import os
import re
import shutil
import ssl
import subprocess
import sys
import time
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import mlib as M  # noqa: E402
L = M.L
sys.path.insert(0, os.path.dirname(HERE))
import certs  # noqa: E402

NAME = "metrics-tls-auth"
ALICE = ("alice", "al1ce-pl41n-pw")
BOB = ("bob", "b0b-bcrypt-pw")
EVENTS = 596


class Fail(Exception):
    pass


def check(cond, what):
    if not cond:
        raise Fail(what)


def bcrypt_hash(password):
    """A bcrypt hash (cost 10) made by Python's crypt, or None."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            import crypt
            h = crypt.crypt(password, crypt.mksalt(crypt.METHOD_BLOWFISH, rounds=1 << 10))
        return h if h and h.startswith("$2") else None
    except (ImportError, AttributeError, ValueError, OSError):
        return None


def write(path, text):
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, 0o600)
    return path


def case_clients(lst, ctx, have_bob, port_https):
    notes = []
    n401 = 0
    st, hd, body, _ = M.http("GET", lst.url, context=ctx)
    n401 += 1
    check(st == 401 and hd.get("www-authenticate") == 'Basic realm="jfrstream"',
          "no credentials: %s %s" % (st, hd))
    for auth in ((ALICE[0], "wrong"), ("mallory", ALICE[1]), (ALICE[0], ALICE[1] + "x"),
                 (ALICE[0], ALICE[1][:-1])):
        st, _, _, _ = M.http("GET", lst.url, context=ctx, auth=auth)
        n401 += 1
        check(st == 401, "%s: %s" % (auth[0], st))
    st, hd, body, _ = M.http("GET", lst.url, context=ctx, auth=ALICE)
    check(st == 200 and b"jfr_events_total" in body, "alice: %s %r" % (st, body[:200]))
    notes.append("no credentials, a wrong password, an unknown user, the password with a "
                 "byte more, its prefix: 401 with "
                 "WWW-Authenticate; alice (plain): 200")
    if have_bob:
        times = []
        for _ in range(3):
            st, _, body, dt = M.http("GET", lst.url, context=ctx, auth=BOB)
            check(st == 200 and b"jfr_events_total" in body, "bob: %s" % st)
            times.append(dt)
        st, _, _, _ = M.http("GET", lst.url, context=ctx, auth=(BOB[0], "wrong"))
        n401 += 1
        check(st == 401, "bob with a wrong password after a cached success: %s" % st)
        notes.append("bob (bcrypt cost 10): 200, scrapes %s ms (first: bcrypt; then the "
                     "cache), a wrong password after them 401"
                     % "/".join("%.0f" % (t * 1000) for t in times))
    st, got, how = M.raw_request(port_https, b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n",
                                 timeout=5)
    check(st is None and not got.startswith(b"HTTP/"),
          "plain HTTP to the HTTPS port: %s %r (%s)" % (st, got[:80], how))
    notes.append("plain HTTP to the HTTPS port: no HTTP answer (%s, %d bytes)" % (how, len(got)))
    try:
        M.http("GET", lst.url, context=ssl.create_default_context(), auth=ALICE)
        raise Fail("a client without the test CA was not refused")
    except Exception as e:  # urllib wraps the SSL error
        check("CERTIFICATE_VERIFY_FAILED" in str(e), "without the CA: %s" % e)
    notes.append("a client without the CA: certificate verify failed")
    expo = lst.expo()
    v = [s.value for s in expo.find("jfrstream_metrics_unauthorized_total")]
    check(v == [n401], "jfrstream_metrics_unauthorized_total %s, %d refused" % (v, n401))
    notes.append("jfrstream_metrics_unauthorized_total %d" % n401)
    return "; ".join(notes)


def case_prometheus(lst, w, ca, prom_bin):
    good = write(os.path.join(w, "prom-password"), ALICE[1] + "\n")
    bad = write(os.path.join(w, "prom-wrong"), "wrong\n")
    target = "127.0.0.1:%d" % lst.mport
    prom = M.Prometheus([target], binary=prom_bin, scheme="https", ca_file=ca,
                        basic_auth=(ALICE[0], good),
                        extra_jobs=[dict(job="wrong", targets=[target], scheme="https",
                                         ca_file=ca, basic_auth=(ALICE[0], bad))])
    try:
        check(prom.wait_ready(30), "prometheus not ready: %s" % prom.err.text()[-500:])
        end = time.monotonic() + 20
        up = events = wrong = None
        while time.monotonic() < end:
            try:
                up = prom.query('up{job="jfrstream"}')
                wrong = prom.query('up{job="wrong"}')
                events = prom.query('sum(jfr_events_total{job="jfrstream"})')
            except (OSError, RuntimeError, ValueError):
                pass
            if up and up[0][1] == 1 and events and events[0][1] == EVENTS and wrong:
                break
            time.sleep(0.5)
        check(up and up[0][1] == 1, "up %s: %s" % (up, prom.targets()))
        check(events and events[0][1] == EVENTS, "sum(jfr_events_total) %s" % events)
        check(wrong and wrong[0][1] == 0, "the wrong password's up %s" % wrong)
        err = [t.get("lastError", "") for t in prom.targets()
               if t.get("labels", {}).get("job") == "wrong"]
        check(err and "401" in err[0], "the wrong job's lastError %s" % err)
        return "prometheus (scheme https, tls_config ca_file, basic_auth password_file): " \
            "up 1, sum(jfr_events_total) %d; the wrong password file: up 0, %r" \
            % (EVENTS, err[0])
    finally:
        prom.stop()


def case_usage(jfr, w, crt, key, users):
    notkey = write(os.path.join(w, "notkey.pem"), "hello\n")
    badusers = write(os.path.join(w, "badusers"), "alice:x\nnocolon\n")
    m = ["--metrics", "127.0.0.1:0"]
    cases = [
        (m + ["--metrics-tls-cert", crt], "--metrics-tls-cert needs --metrics-tls-key"),
        (m + ["--metrics-tls-cert", crt, "--metrics-tls-key", notkey],
         "--metrics-tls-key %s: no unencrypted PEM private key" % notkey),
        (m + ["--metrics-basic-auth", badusers],
         "--metrics-basic-auth %s: line 2: no ':'" % badusers),
        (m + ["--metrics-basic-auth", os.path.join(w, "none")],
         "--metrics-basic-auth %s: No such file" % os.path.join(w, "none")),
        (["--metrics-basic-auth", users], "--metrics-basic-auth needs --metrics"),
    ]
    for args, want in cases:
        why = L.usage_error(jfr, ["listen", "127.0.0.1:0"] + args, want, secrets=(ALICE[1],))
        check(not why, why)
    return "%d usage errors, exit 2, the option and file named" % len(cases)


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
    ok, why = M.has_metrics(jfr)
    if not ok:
        return L.skip(NAME, why)
    w = a.work
    shutil.rmtree(w, ignore_errors=True)
    os.makedirs(w)
    ca = certs.CA(os.path.join(w, "pki"), "ca")
    crt, key = ca.issue("server")
    h = bcrypt_hash(BOB[1])
    users = write(os.path.join(w, "users"), "# jfrstream scrapers\n%s:%s\n%s"
                  % (ALICE[0], ALICE[1], "%s:%s\n" % (BOB[0], h) if h else ""))
    ctx = ssl.create_default_context(cafile=ca.cert)
    lst = M.Listener(jfr, ["--metrics-tls-cert", crt, "--metrics-tls-key", key,
                           "--metrics-basic-auth", users], context=ctx, auth=ALICE)
    if not lst.ok() and "has no crypt(3)" in lst.err.text():  # built with -Dcrypt=disabled
        L.log("%s: this build checks no bcrypt hash (-Dcrypt): the bcrypt user left out" % NAME)
        lst.stop()
        h = ""  # no bcrypt user, and not for want of Python's crypt
        write(users, "%s:%s\n" % ALICE)
        lst = M.Listener(jfr, ["--metrics-tls-cert", crt, "--metrics-tls-key", key,
                               "--metrics-basic-auth", users], context=ctx, auth=ALICE)
    fails = 0
    try:
        if not lst.ok():
            text = lst.err.text()
            if "has no TLS" in text:
                return L.skip(NAME, text.strip().splitlines()[0])
            return L.result(NAME, False, "the listener did not start: %s" % text[-600:])
        check_line = re.search(r"metrics on https://127\.0\.0\.1:\d+/metrics \(basic auth\)",
                               lst.err.text())
        L.send(lst.port, open(a.fixture, "rb").read())
        got = lst.wait_expo(lambda e: sum(s.value for s in e.find("jfr_events_total")) == EVENTS,
                            20, "events")
        parts = [("clients", lambda: case_clients(lst, ctx, bool(h), lst.mport))]
        prom_bin = shutil.which("prometheus")
        if prom_bin:
            parts.append(("prometheus", lambda: case_prometheus(lst, w, ca.cert, prom_bin)))
        else:
            L.log("%s: no prometheus binary (Debian: apt-get install prometheus): its part "
                  "left out" % NAME)
        parts.append(("usage", lambda: case_usage(jfr, w, crt, key, users)))
        if not check_line or got is None:
            fails += L.result(NAME, False, "start line %s, %d events scraped"
                              % (bool(check_line), 0 if got is None else EVENTS))
        if h is None:
            L.log("%s: Python's crypt makes no bcrypt here: the bcrypt user left out" % NAME)
        for name, fn in parts:
            t0 = time.monotonic()
            try:
                L.result("%s (%s)" % (NAME, name), True,
                         "%s [%.1f s]" % (fn(), time.monotonic() - t0))
            except (Fail, RuntimeError, OSError, subprocess.TimeoutExpired) as e:
                fails += L.result("%s (%s)" % (NAME, name), False, str(e))
    finally:
        rc = lst.stop()
        L.cleanup()
    reports = M.sanitizer_reports()
    if reports or rc != 0:
        fails += L.result(NAME, False, "listen exit %s; %s" % (rc, reports[:1]))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
