#!/usr/bin/env python3
"""A fake Pyroscope server for the tests: the documented /ingest contract
(POST /ingest?name=APP{k=v,...}&from=&until=&format=pprof&spyName=..., body a
pprof profile, gzip-compressed or not; 200 with an empty body on success, 400
for a bad name), with Python's http.server only.

It records every request (query, headers, body) and can be told to answer
429 or 503 for the first requests (`fail=[429, 503]`: the first request gets
429, the second 503, then 200). `down` is simply not starting it: nothing
listens on its port.

HTTPS and authentication, as Grafana Cloud or a multi-tenant Pyroscope:
`tls=(cert, key)` serves HTTPS (Python's ssl), `client_ca=FILE` also
requires a client certificate signed by that CA (ssl.CERT_REQUIRED);
`require={header: value}` answers 401 when Authorization is not the one
given (absent or different) and 403 when another required header (e.g.
X-Scope-OrgID) is. Failed handshakes are kept in `tls_errors`.

Use:  r = Receiver(fail=[429, 503]); r.start(); ... r.url ...; r.stop()
      r.requests: list of dict(path, query (dict of str), headers, body, status)
      r.accepted(): the requests answered 200
"""

import http.server
import re
import ssl
import threading
import urllib.parse

NAME_RE = re.compile(r'^[A-Za-z0-9_.\-/]+(\{([A-Za-z0-9_.]+=[^{},=]*)(,[A-Za-z0-9_.]+=[^{},=]*)*\}|\{\})?$')


def parse_name(name):
    """'app{a=b,c=d}' -> ('app', {'a': 'b', 'c': 'd'}); None when malformed."""
    if not NAME_RE.match(name):
        return None
    if '{' not in name:
        return name, {}
    app, rest = name.split('{', 1)
    labels = {}
    body = rest[:-1]
    if body:
        for kv in body.split(','):
            k, v = kv.split('=', 1)
            labels[k.strip()] = v.strip()
    return app, labels


class Receiver:
    def __init__(self, fail=None, tls=None, client_ca=None, require=None):
        self.fail = list(fail or [])
        self.require = dict(require or {})
        self.tls_errors = []
        self.ctx = None
        if tls:
            self.ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            self.ctx.minimum_version = ssl.TLSVersion.TLSv1_2
            self.ctx.load_cert_chain(*tls)
            if client_ca:
                self.ctx.verify_mode = ssl.CERT_REQUIRED
                self.ctx.load_verify_locations(client_ca)
        self.requests = []
        self.lock = threading.Lock()
        self.server = None
        self.thread = None

    def accepted(self):
        with self.lock:
            return [r for r in self.requests if r['status'] == 200]

    def start(self):
        rec = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = 'HTTP/1.1'

            def log_message(self, fmt, *args):
                pass

            def reply(self, status, body=b''):
                self.send_response(status)
                self.send_header('Content-Length', str(len(body)))
                self.end_headers()
                if body:
                    self.wfile.write(body)

            def do_POST(self):
                u = urllib.parse.urlsplit(self.path)
                q = dict(urllib.parse.parse_qsl(u.query, keep_blank_values=True))
                n = int(self.headers.get('Content-Length') or 0)
                body = self.rfile.read(n) if n else b''
                with rec.lock:
                    status = 200
                    wrong = [h for h, v in rec.require.items() if self.headers.get(h) != v]
                    if u.path != '/ingest':
                        status = 404
                    elif wrong:
                        status = 401 if 'Authorization' in wrong else 403
                    elif rec.fail:
                        status = rec.fail.pop(0)
                    elif 'name' not in q or parse_name(q['name']) is None:
                        status = 400
                    rec.requests.append(dict(path=u.path, query=q, headers=dict(self.headers),
                                             body=body, status=status))
                self.reply(status, b'' if status == 200 else
                           b'{"code":"error","message":"test receiver"}')

        class Server(http.server.ThreadingHTTPServer):
            def finish_request(self, request, client_address):
                if rec.ctx:  # the handshake on the connection's thread
                    request.settimeout(10)
                    try:
                        request = rec.ctx.wrap_socket(request, server_side=True)
                    except (ssl.SSLError, OSError) as e:
                        with rec.lock:
                            rec.tls_errors.append(str(e))
                        return
                try:
                    self.RequestHandlerClass(request, client_address, self)
                finally:
                    if rec.ctx:
                        request.close()

            def handle_error(self, request, client_address):
                pass  # a client gone mid-request: nothing to report

        self.server = Server(('127.0.0.1', 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        return self

    @property
    def port(self):
        return self.server.server_address[1]

    @property
    def url(self):
        return '%s://127.0.0.1:%d' % ('https' if self.ctx else 'http', self.port)

    def stop(self):
        if self.server:
            self.server.shutdown()
            self.server.server_close()
            self.server = None
