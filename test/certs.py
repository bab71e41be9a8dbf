"""certs.py — test certificates, made by the tests with the `openssl` command.

Python 3 standard library and the openssl binary. A CA (EC P-256, valid 2
days) issues server certificates (SAN IP:127.0.0.1 and DNS:localhost,
serverAuth) and client certificates (clientAuth); a second CA is "the wrong
one". Keys are unencrypted PKCS#8 PEM files, mode 0600.

Use:  if not certs.available(): SKIP
      ca = certs.CA(workdir, "ca"); crt, key = ca.issue("server")
      other = certs.CA(workdir, "other")
"""
import os
import shutil
import subprocess
import sys

EC = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1"]


def available():
    """(True, "") or (False, why): the openssl command is there."""
    if not shutil.which("openssl"):
        return False, "no openssl command (Debian: apt-get install openssl)"
    return True, ""


def _run(args, cwd):
    r = subprocess.run(["openssl"] + args, cwd=cwd, capture_output=True, text=True, timeout=60)
    if r.returncode != 0:
        raise RuntimeError("openssl %s: %s" % (" ".join(args), r.stderr.strip()))


class CA:
    """A CA in DIR/NAME.crt, DIR/NAME.key."""

    def __init__(self, directory, name="ca"):
        os.makedirs(directory, exist_ok=True)
        self.dir = directory
        self.name = name
        self.cert = os.path.join(directory, name + ".crt")
        self.key = os.path.join(directory, name + ".key")
        _run(["req", "-x509"] + EC + ["-nodes", "-keyout", self.key, "-out", self.cert,
                                      "-days", "2", "-subj", "/CN=jfrstream test CA " + name,
                                      "-addext", "basicConstraints=critical,CA:TRUE",
                                      "-addext", "keyUsage=critical,keyCertSign,cRLSign"],
             directory)
        os.chmod(self.key, 0o600)

    def issue(self, cn, client=False, san=None, rsa=False, name=None):
        """(cert path, key path) of a certificate for CN signed by this CA, in
        DIR/NAME.crt and .key (NAME: CA-CN by default): a server's
        (subjectAltName `san`, by default IP:127.0.0.1 and DNS:localhost) or,
        with client, a client's (a subjectAltName only when `san` is given);
        an RSA 2048 key with rsa, else EC P-256."""
        base = os.path.join(self.dir, name or "%s-%s" % (self.name, cn))
        crt, key, csr, ext = base + ".crt", base + ".key", base + ".csr", base + ".ext"
        if san is None and not client:
            san = "IP:127.0.0.1,DNS:localhost"
        with open(ext, "w") as f:
            f.write("basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\n")
            f.write("extendedKeyUsage=%s\n" % ("clientAuth" if client else "serverAuth"))
            if san:
                f.write("subjectAltName=%s\n" % san)
        _run(["req", "-new"] + (["-newkey", "rsa:2048"] if rsa else EC) +
             ["-nodes", "-keyout", key, "-out", csr, "-subj", "/CN=" + cn], self.dir)
        os.chmod(key, 0o600)
        _run(["x509", "-req", "-in", csr, "-CA", self.cert, "-CAkey", self.key,
              "-CAcreateserial", "-out", crt, "-days", "2", "-extfile", ext], self.dir)
        os.remove(csr)
        os.remove(ext)
        return crt, key


def traditional(key, out):
    """Write `key` (PKCS#8) in its traditional form (PKCS#1 "BEGIN RSA PRIVATE
    KEY", SEC1 "BEGIN EC PRIVATE KEY") to `out`; returns out."""
    _run(["pkey", "-in", key, "-traditional", "-out", out], os.path.dirname(out) or ".")
    os.chmod(out, 0o600)
    return out


def listener_set(d):
    """The listener's TLS tests' set in directory d (test/uv/test_tls.c,
    test/live/live_tls.py, bench/sink_kafka.py), as NAME.pem and NAME.key:
      ca                 the CA
      server             of ca: CN=127.0.0.1, SAN IP:127.0.0.1, DNS:localhost
      client             of ca: CN=app-1.example, SAN DNS:app-1.example and
                         URI:spiffe://fleet/app-1
      intruder           of ca: CN=intruder.example, no SAN (for --tls-allow)
      other-ca, other    another CA, and its certificate for CN=app-1.example
                         (the right name, the wrong CA)"""
    ca, other_ca = CA(d, "ca"), CA(d, "other-ca")
    made = {"ca": (ca.cert, ca.key), "other-ca": (other_ca.cert, other_ca.key),
            "server": ca.issue("127.0.0.1", name="server"),
            "client": ca.issue("app-1.example", client=True, name="client",
                               san="DNS:app-1.example,URI:spiffe://fleet/app-1"),
            "intruder": ca.issue("intruder.example", client=True, name="intruder"),
            "other": other_ca.issue("app-1.example", client=True, name="other")}
    for n, (crt, key) in made.items():
        os.replace(crt, os.path.join(d, n + ".pem"))


def main(argv):
    """certs.py DIR: listener_set(DIR); exit 77 without the openssl command."""
    if len(argv) != 2:
        print("usage: certs.py DIR", file=sys.stderr)
        return 2
    ok, why = available()
    if not ok:
        print("SKIP: " + why)
        return 77
    listener_set(argv[1])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
