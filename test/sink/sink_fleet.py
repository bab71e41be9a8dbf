#!/usr/bin/env python3
"""sink_fleet.py — the fleet path end to end: a real JVM with -javaagent streams
through mutual TLS into `jfrstream listen --kafka` (librdkafka's mock cluster,
kcat reading back), with acknowledged delivery, while a part fails.

    test/sink/sink_fleet.py JFRSTREAM AGENT_JAR MOCK_KAFKA --mode kill|cut|kafka-down|refused
                            [--jdk MAJOR] [--work DIR] [--seed N]

SeqWorkload (test/live/SeqWorkload.java) emits jfrstream.Seq (a running number)
at 200 a second for 10 s. The agent connects with tls-ca, tls-cert and tls-key
(certificates made by the test with the openssl command, test/certs.py) to
`listen --tls-cert --tls-key --tls-client-ca --kafka BOOTSTRAP --events
jfrstream.Seq`. At a random moment (--seed; printed) of the emission:

  kill        the listener is killed with SIGKILL, and started again on the same
              port 1 to 3 s later; meanwhile the agent's client certificate is
              renewed in place (another CN, which alone the new listener allows
              with --tls-allow): the agent reads its TLS files again;
  cut         the connection is reset (RST) by a TCP relay between the agent and
              the listener (the listener lives on; the agent reconnects through
              the relay);
  kafka-down  every broker goes down for 8 s, longer than the producer queue
              (queue.buffering.max.messages=100) lasts: the listener stops
              reading, the agent keeps what is not acknowledged;
  refused     the listener allows no client (--tls-allow nobody): the
              application's exit status, result and exit time are as usual,
              every attempt is refused on listen's stderr, nothing reaches Kafka.

Then, once the JVM has exited and the listener was stopped (SIGTERM: it
flushes), kcat reads the whole topic and:
  * every sequence number from 0 to the JVM's last arrives (duplicates are
    allowed: after a failure the agent resends what was not acknowledged);
  * every copy of one event has the same "id", the same as its jfr-id header,
    and one id is one sequence number (the id is SOURCE/CHUNKSTART/OFFSET);
  * the application's exit status and result are those of a run without a
    failure (exit 0, last and count printed).
Exit 0 pass, 1 fail, 77 skip.
"""
import argparse
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))
import kafkalib as K  # noqa: E402
import certs  # noqa: E402
L = K.L

RATE, SECONDS = 200, 10
TOPIC = "fleet"


class Relay:
    """A TCP relay 127.0.0.1:port -> 127.0.0.1:target; cut() resets every
    connection it carries (SO_LINGER 0: an RST to both ends)."""

    def __init__(self, target):
        self.target = target
        self.srv = socket.socket()
        self.srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.srv.bind(("127.0.0.1", 0))
        self.srv.listen(8)
        self.port = self.srv.getsockname()[1]
        self.pairs = []
        self.lock = threading.Lock()
        self.accepted = 0
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                a, _ = self.srv.accept()
            except OSError:
                return
            try:
                b = socket.create_connection(("127.0.0.1", self.target), timeout=5)
            except OSError:
                a.close()
                continue
            with self.lock:
                self.pairs.append((a, b))
                self.accepted += 1
            for x, y in ((a, b), (b, a)):
                threading.Thread(target=self._pipe, args=(x, y), daemon=True).start()

    @staticmethod
    def _pipe(x, y):
        try:
            while True:
                d = x.recv(65536)
                if not d:
                    y.shutdown(socket.SHUT_WR)
                    return
                y.sendall(d)
        except OSError:
            return

    def cut(self):
        with self.lock:
            pairs, self.pairs = self.pairs, []
        for pair in pairs:
            for s in pair:
                try:
                    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\1\0\0\0\0\0\0\0")
                    s.close()
                except OSError:
                    pass
        return len(pairs)


def listener(a, port, ca, srv, mock, extra=()):
    args = [L.cli(a.jfrstream), "listen", "127.0.0.1:%d" % port,
            "--tls-cert", srv[0], "--tls-key", srv[1], "--tls-client-ca", ca.cert,
            "--kafka", mock.bootstrap, "--kafka-topic", TOPIC, "--events", "jfrstream.Seq",
            "--label", "suite=fleet"] + list(extra)
    p = L.start(args)
    out, err = L.Lines(p.stdout, keep=False), L.Lines(p.stderr, echo=lambda l: L.log("  listen: " + l))
    if not err.wait_for(r"listening on 127\.0\.0\.1:%d" % port, 20):
        return p, err, False
    return p, err, True


def check_topic(fails, msgs, last):
    """Every seq 0..last at least once; one id per seq, the same in every copy
    and in its jfr-id header."""
    by_seq, by_id = {}, {}
    bad = 0
    for m in msgs:
        try:
            v = json.loads(m.value)
        except ValueError:
            bad += 1
            continue
        if v.get("type") != "jfrstream.Seq":
            continue
        s, i = v["values"]["seq"], v.get("id")
        by_seq.setdefault(s, set()).add(i)
        by_id.setdefault(i, set()).add(s)
        if m.headers.get("jfr-id") != i:
            bad += 1
            if bad <= 3:
                fails.append("seq %d: id %r, header jfr-id %r" % (s, i, m.headers.get("jfr-id")))
    copies = sum(1 for m in msgs)
    lost = [s for s in range(last + 1) if s not in by_seq]
    multi_id = [s for s, ids in by_seq.items() if len(ids) != 1 or None in ids]
    multi_seq = [i for i, ss in by_id.items() if len(ss) != 1]
    L.log("  topic: %d messages, %d distinct seq of %d sent, %d duplicates; lost %d; "
          "seqs with several ids %d; ids with several seqs %d"
          % (copies, len(by_seq), last + 1, copies - len(by_seq), len(lost), len(multi_id),
             len(multi_seq)))
    if last < 0 or lost:
        fails.append("lost %d of %d seq (first: %s)" % (len(lost), last + 1, lost[:10]))
    if multi_id:
        fails.append("%d seq have no or several ids (e.g. %d: %s)"
                     % (len(multi_id), multi_id[0], sorted(map(str, by_seq[multi_id[0]]))))
    if multi_seq:
        fails.append("%d ids name several seq" % len(multi_seq))
    if bad:
        fails.append("%d messages unreadable or with a jfr-id header unlike their id" % bad)
    return copies - len(by_seq)


def refused(w, wout, werr, lp, lerr, mock):
    """The listener refuses the agent's certificate (--tls-allow nobody) all
    along: the application runs and exits as usual, within the agent's bound;
    the listener counts every attempt as refused and forwards nothing."""
    fails = []
    t0 = time.monotonic()
    rc = L.wait(w, 120, "SeqWorkload")
    took = time.monotonic() - t0
    wout.join()
    werr.join()
    last = wout.wait_for(r"^last=(-?\d+)", 1)
    count = wout.wait_for(r"^count=(\d+)", 1)
    if rc != 0 or not last or not count or int(count.group(1)) != RATE * SECONDS:
        fails.append("SeqWorkload exit %s, %s, %s" % (rc, last and last.group(0),
                                                      count and count.group(0)))
    if took > SECONDS + 8:
        fails.append("the JVM took %.1f s from its first event to its exit" % took)
    lp.send_signal(signal.SIGTERM)
    L.wait(lp, 30, "listen")
    lerr.join()
    for l in [l for _, l in werr.lines if l.startswith("jfrstream-agent: ")][:4]:
        L.log("  " + l)
    ref = [l for _, l in lerr.lines if "refused: subject CN=app not allowed" in l]
    other = [l for _, l in werr.lines if not l.startswith("jfrstream-agent: ")
             and not l.startswith("Picked up")]
    L.log("  refused: JVM exit %s after %.1f s, %s; %d refusals on listen's stderr; "
          "%d foreign stderr lines" % (rc, took, count and count.group(0), len(ref), len(other)))
    if not ref:
        fails.append("listen reported no refusal naming the subject")
    if not any("may refuse this client certificate" in l for _, l in werr.lines):
        fails.append("the agent's log does not point at a refused certificate")
    if other:
        fails.append("stderr lines not from the agent: %r" % other[:3])
    msgs = K.consume(mock.bootstrap, TOPIC, timeout=60, headers=True)
    if msgs:
        fails.append("%d messages in the topic from a refused sender" % len(msgs))
    return fails


def run(a, java, mock, ca, srv, cli):
    fails = []
    rnd = random.Random(a.seed)
    port = L.free_port()
    extra = {"kafka-down": ["--kafka-option", "queue.buffering.max.messages=100"],
             "refused": ["--tls-allow", "nobody"]}.get(a.mode, [])
    lp, lerr, ok = listener(a, port, ca, srv, mock, extra)
    if not ok:
        return ["listen did not start: " + lerr.text()[-600:]]
    target = port
    relay = None
    if a.mode == "cut":
        relay = Relay(port)
        target = relay.port
    opts = ("connect=127.0.0.1:%d,tls-ca=%s,tls-cert=%s,tls-key=%s,retry-max=1s,drain=20s"
            % (target, ca.cert, cli[0], cli[1]))
    w, wout, werr = L.seq_workload(java, ["--rate", str(RATE), "--duration", str(SECONDS),
                                          "--wait-enabled", "60"],
                                   jvm_opts=["-javaagent:%s=%s" % (a.agent, opts)])
    if not wout.wait_for(r"^start=", 90):
        return ["SeqWorkload did not start emitting: " + werr.text()[-600:]]
    if a.mode == "refused":
        return fails + refused(w, wout, werr, lp, lerr, mock)
    at = rnd.uniform(2.0, SECONDS - 4.0)
    time.sleep(at)
    if a.mode == "kill":
        gap = rnd.uniform(1.0, 3.0)
        L.log("  %.2f s into the emission: kill -9 the listener; again in %.2f s" % (at, gap))
        lp.kill()
        lp.wait(10)
        # meanwhile the client certificate is renewed (another name, the same
        # files), and the new listener admits only the new name: the agent
        # must read its files again before it reconnects
        crt, key = ca.issue("app-renewed", client=True)
        os.replace(key, cli[1])
        os.replace(crt, cli[0])
        time.sleep(gap)
        lp, lerr, ok = listener(a, port, ca, srv, mock, ["--tls-allow", "app-renewed"])
        if not ok:
            fails.append("the listener did not start again on port %d: %s"
                         % (port, lerr.text()[-400:]))
    elif a.mode == "cut":
        n = relay.cut()
        L.log("  %.2f s into the emission: %d connection(s) reset" % (at, n))
        if n != 1:
            fails.append("the relay carried %d connections at the cut, expected 1" % n)
    else:
        L.log("  %.2f s into the emission: every broker down for 8 s" % at)
        mock.command("down -1")
        time.sleep(8)
        mock.command("up -1")
    rc = L.wait(w, 120, "SeqWorkload")
    wout.join()
    werr.join()
    m = wout.wait_for(r"^last=(-?\d+)", 1)
    last = int(m.group(1)) if m else -1
    if rc != 0 or last < 0:
        fails.append("SeqWorkload exit %s, last %s: %s" % (rc, last, werr.text()[-400:]))
    agent = [l for _, l in werr.lines if l.startswith("jfrstream-agent: ")]
    for l in agent:
        L.log("  " + l)
    if a.mode in ("kill", "cut") and not any("reconnected" in l for l in agent):
        fails.append("the agent logged no reconnection")
    if relay and relay.accepted < 2:
        fails.append("the relay saw %d connections, expected a reconnection" % relay.accepted)
    # the agent waited for the final acknowledgement; stop the listener (flush)
    lp.send_signal(signal.SIGTERM)
    lrc = L.wait(lp, 60, "listen")
    lerr.join()
    if lrc not in (0, 1):
        fails.append("listen exit %s" % lrc)
    if a.mode == "kafka-down":
        m = lerr.wait_for(r"paused (\d+) times? for a full queue", 1)
        if not m or int(m.group(1)) == 0:
            fails.append("the producer queue never filled (no 'paused N times' from listen)")
    try:
        msgs = K.consume(mock.bootstrap, TOPIC, timeout=60, headers=True)
    except (RuntimeError, subprocess.TimeoutExpired) as e:
        return fails + ["kcat: %s" % e]
    dup = check_topic(fails, msgs, last)
    L.log("  %s: last seq %d, %d duplicates in the topic" % (a.mode, last, dup))
    return fails


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("jfrstream")
    ap.add_argument("agent")
    ap.add_argument("mock")
    ap.add_argument("--mode", choices=["kill", "cut", "kafka-down", "refused"], required=True)
    ap.add_argument("--jdk", type=int, default=0)
    ap.add_argument("--work")
    ap.add_argument("--seed", type=int, default=int(time.time()) % 100000)
    a = ap.parse_args()
    name = "fleet-%s%s" % (a.mode, "-jdk%d" % a.jdk if a.jdk else "")
    if not a.agent or not os.path.exists(a.agent):
        return L.skip(name, "jfrstream-agent.jar not built (-Dagent: a JDK's javac and jar)")
    java = L.java_bin(L.find_jdk(a.jdk)[0]) if a.jdk else L.java_bin()
    if not java:
        return L.skip(name, "no JDK %s (the JVM side)" % (a.jdk or 17))
    why = K.missing(a.jfrstream, a.mock)
    if why:
        return L.skip(name, why)
    ok, why = certs.available()
    if not ok:
        return L.skip(name, why)
    h = subprocess.run([a.jfrstream, "listen", "--help"], capture_output=True, text=True)
    if "--tls-cert" not in h.stdout:
        return L.skip(name, "listen built without TLS (-Dtls: Debian package libssl-dev)")
    L.log("%s: seed %d" % (name, a.seed))
    work = a.work or tempfile.mkdtemp(prefix="jfrstream-fleet-")
    os.makedirs(work, exist_ok=True)
    ca = certs.CA(os.path.join(work, "pki"), "ca")
    srv = ca.issue("listener")
    cli = ca.issue("app", client=True)
    mock = K.Mock(a.mock, brokers=1, topics=[TOPIC + ":1"])
    if not mock.bootstrap:
        L.cleanup()
        return L.result(name, False, ["mock_kafka did not start"])
    try:
        fails = run(a, java, mock, ca, srv, cli)
    finally:
        mock.stop()
        L.cleanup()
        if not a.work:
            shutil.rmtree(work, True)
    return L.result(name, not fails, fails or ["every seq arrived, one id each (seed %d)" % a.seed])


if __name__ == "__main__":
    sys.exit(main())
