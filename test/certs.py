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

    def issue(self, cn, client=False, san="IP:127.0.0.1,DNS:localhost", rsa=False):
        """(cert path, key path) of a certificate for CN signed by this CA:
        a server's (subjectAltName `san`) or, with client, a client's; an
        RSA 2048 key with rsa, else EC P-256."""
        base = os.path.join(self.dir, "%s-%s" % (self.name, cn))
        crt, key, csr, ext = base + ".crt", base + ".key", base + ".csr", base + ".ext"
        with open(ext, "w") as f:
            f.write("basicConstraints=CA:FALSE\n")
            if client:
                f.write("extendedKeyUsage=clientAuth\nkeyUsage=critical,digitalSignature\n")
            else:
                f.write("extendedKeyUsage=serverAuth\nkeyUsage=critical,digitalSignature\n"
                        "subjectAltName=%s\n" % san)
        _run(["req", "-new"] + (["-newkey", "rsa:2048"] if rsa else EC) + ["-nodes", "-keyout", key, "-out", csr, "-subj", "/CN=" + cn],
             self.dir)
        os.chmod(key, 0o600)
        _run(["x509", "-req", "-in", csr, "-CA", self.cert, "-CAkey", self.key,
              "-CAcreateserial", "-out", crt, "-days", "2", "-extfile", ext], self.dir)
        return crt, key


def traditional(key, out):
    """Write `key` (PKCS#8) in its traditional form (PKCS#1 "BEGIN RSA PRIVATE
    KEY", SEC1 "BEGIN EC PRIVATE KEY") to `out`; returns out."""
    _run(["pkey", "-in", key, "-traditional", "-out", out], os.path.dirname(out) or ".")
    os.chmod(out, 0o600)
    return out
