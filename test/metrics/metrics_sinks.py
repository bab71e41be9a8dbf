#!/usr/bin/env python3
"""metrics_sinks.py — the sinks' counts on /metrics: `listen --metrics
--kafka --pyroscope` together.

    test/metrics/metrics_sinks.py JFRSTREAM MOCK_KAFKA FIXTURE

The fixture (596 events) is sent over loopback to `listen 127.0.0.1:0
--metrics 127.0.0.1:0 --kafka BOOTSTRAP --pyroscope URL --window 1`, with
librdkafka's mock cluster (test/sink/mock_kafka) and the fake Pyroscope
receiver of the sink tests (test/sink/pyroscope_receiver.py). /metrics is
scraped until Kafka has acknowledged every message and the receiver has
answered every window, then:

  jfrstream_sink_kafka_messages_total{outcome="produced"} = "delivered" = 596
  (one message per event), "failed" = "dropped" = 0, and
  jfrstream_sink_kafka_in_flight 0;
  jfrstream_sink_pyroscope_windows_total{outcome="queued"} = "pushed" = the
  receiver's 200 answers (> 0), "retried" = "dropped" = "failed" = 0;
  jfrstream_events_total 596, and `promtool check metrics` clean when
  installed.

Exit 0 pass, 1 fail, 77 skip (no mock_kafka, or built without libcurl or
libmicrohttpd).
"""
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, '..', 'sink'))
from pyroscope_receiver import Receiver  # noqa: E402
sys.path.insert(0, HERE)
import mlib as M  # noqa: E402

fails = 0


def check(cond, what):
    global fails
    print(('ok: ' if cond else 'FAIL: ') + what, flush=True)
    if not cond:
        fails += 1
    return cond


def read_until(f, pattern, timeout):
    deadline = time.time() + timeout
    while time.time() < deadline:
        f.seek(0)
        m = re.search(pattern, f.read())
        if m:
            return m
        time.sleep(0.05)
    return None


def values(text):
    out = {}
    for line in text.splitlines():
        if line and not line.startswith('#'):
            k, v = line.rsplit(' ', 1)
            out[k] = float(v)
    return out


def main():
    jfrstream, mock, fixture = sys.argv[1:4]
    if not mock or not os.access(mock, os.X_OK):
        print('SKIP: built without librdkafka: no mock_kafka (Debian: apt-get install '
              'librdkafka-dev, then meson setup --reconfigure build)')
        return 77
    m = subprocess.Popen([mock, '1', 'jfr-events:1'], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    rcv = Receiver()
    rcv.start()
    p = None
    err = open(os.devnull, 'w')
    try:
        bootstrap = m.stdout.readline().strip()
        if not check(':' in bootstrap, 'mock cluster: ' + bootstrap):
            return 1
        import tempfile
        err = tempfile.TemporaryFile('w+')
        p = subprocess.Popen([jfrstream, 'listen', '127.0.0.1:0', '--metrics', '127.0.0.1:0', '--kafka', bootstrap,
                              '--pyroscope', rcv.url, '--window', '1', '--event', 'cpu,alloc'],
                             stdout=subprocess.DEVNULL, stderr=err)
        mm = read_until(err, r'metrics on http://127\.0\.0\.1:(\d+)/metrics', 20)
        lm = read_until(err, r'listening on 127\.0\.0\.1:(\d+)', 20)
        if not mm or not lm:
            err.seek(0)
            text = err.read()
            why = M.built_without(text)
            if why:
                print('SKIP: ' + why)
                return 77
            check(False, 'listen started: ' + text[-500:])
            return 1
        url = 'http://127.0.0.1:%s/metrics' % mm.group(1)
        with socket.create_connection(('127.0.0.1', int(lm.group(1))), timeout=30) as s, open(fixture, 'rb') as f:
            s.sendall(f.read())
        v, text = {}, ''
        deadline = time.time() + 60
        while time.time() < deadline:
            text = urllib.request.urlopen(url, timeout=15).read().decode()
            v = values(text)
            k = lambda o: v.get('jfrstream_sink_kafka_messages_total{outcome="%s"}' % o)  # noqa: E731
            y = lambda o: v.get('jfrstream_sink_pyroscope_windows_total{outcome="%s"}' % o)  # noqa: E731
            if (v.get('jfrstream_sources_open') == 0 and k('delivered') == 596 and y('queued') and
                    y('pushed') == y('queued') and v.get('jfrstream_sink_kafka_in_flight') == 0):
                break
            time.sleep(0.2)
        print('kafka: ' + ', '.join('%s %s' % (o, k(o)) for o in ('produced', 'delivered', 'failed', 'dropped')) +
              ', in flight %s' % v.get('jfrstream_sink_kafka_in_flight'))
        print('pyroscope: ' + ', '.join('%s %s' % (o, y(o))
                                        for o in ('queued', 'pushed', 'retried', 'dropped', 'failed')))
        check(k('produced') == 596 and k('delivered') == 596, 'Kafka: 596 produced and delivered (one per event)')
        check(k('failed') == 0 and k('dropped') == 0 and v.get('jfrstream_sink_kafka_in_flight') == 0,
              'Kafka: none failed, dropped or in flight')
        accepted = len(rcv.accepted())
        check(y('queued') and y('queued') == y('pushed') == accepted,
              'Pyroscope: windows queued = pushed = the receiver\'s 200 answers (%d)' % accepted)
        check(y('retried') == 0 and y('dropped') == 0 and y('failed') == 0, 'Pyroscope: none retried, dropped, failed')
        check(v.get('jfrstream_events_total') == 596, 'jfrstream_events_total 596')
        if shutil.which('promtool'):
            rc, out = M.promtool_check(text.encode())
            check(rc == 0, 'promtool check metrics: %s' % out)
    finally:
        if p:
            p.send_signal(signal.SIGTERM)
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        rcv.stop()
        try:
            m.stdin.close()
            m.wait(timeout=20)
        except Exception:
            m.kill()
            m.wait()
        err.close()
    return 1 if fails else 0


if __name__ == '__main__':
    sys.exit(main())
