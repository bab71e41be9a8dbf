#!/usr/bin/env python3
"""oracle.py — compare jfrstream with the JDK's `jfr` tool (python3, stdlib only).

For every FILE (.jfr):
  * `summary`: the text of `jfrstream summary FILE` must equal `jfr summary FILE`;
  * `metadata`: likewise `jfrstream metadata FILE` and `jfr metadata FILE`;
  * `print --json --stack-depth N` (N = 64 by default, optionally --events A,B):
    both outputs are parsed (streaming, one event at a time, so big files need
    little memory) and compared event by event, field by field: same events in
    the same order, same keys in the same order, same JSON types, same values.
    Floats compare by value (and sign of zero); when only the literal differs
    (1.0E7 vs 10000000.0) it is counted as a "number format" note, an error only
    with --exact-numbers.

Reference tool. JDK 25's `jfr` is the reference. With an older tool (JDK 17's
`jfr version` prints "1.0"), this script still compares, but tolerates — and
counts as "tolerated", never silently — exactly the documented differences
between the JDK 17 and JDK 25 printers (see ../shared/jfr-format.md §10.1, §13):
  * @Unsigned byte/short/int/long: JDK 17 prints them signed (-1 for 255);
  * Timespan Long.MAX_VALUE: JDK 25 prints FOREVER as
    PT2562047788015215H30M7.999999999S, JDK 17 an overflowed unit conversion;
  * float/double literals: Float/Double.toString changed in JDK 19 (shortest
    repr), e.g. 1.17549435E-38 vs 1.1754944E-38: tolerated when both denote
    the same float32 (or the same double);
  * summary: JDK 17 names the checkpoint row "jdk.CheckPoint" (format 1.0:
    "com.oracle.jdk.CheckPoint") and orders rows of equal count differently:
    rows are compared as a set.
With any tool: when a multi-chunk file differs as a whole, its chunks are
compared one by one (`jfr disassemble --max-chunks 1`); if each chunk alone
matches, the whole-file differences are tolerated and counted: the JDK reuses
constants of earlier chunks for keys a later chunk declares again, which goes
wrong in files that mix writers (a thread key meaning another thread later).
Use --strict to tolerate nothing whatever the tool.

Instead of running `jfr`, stored outputs can be given for a single FILE
(--expected-summary, --expected-json, --expected-metadata): this is how tests
run without a JDK (what is not given is not compared).

Memo (JFRSTREAM_ORACLE_MEMO=DIR, for CI's second run of the suite under
ASan + UBSan): after a file compared clean (no difference, no error), what
was compared is recorded in DIR: the SHA-256 of each of jfrstream's outputs
(summary, metadata, the JSON, and the JSON of each chunk when the chunks
were compared alone) and this script's report, keyed by the file's SHA-256,
the reference tool (path, size, time) and the options. A later run with the
same key runs only jfrstream; when each of its outputs has the recorded
hash, the comparison would give the recorded result, which is printed (with
a line saying so) without starting the JDK; any other output, exit status or
key is compared against the JDK as usual.

Output: the first --max-diffs differences (event index, type, JSON path, both
values), a grouping of differences by (event type, path), and one line per run:
  files=F events=E differing=D tolerated=T notes=N errors=X
Exit status: 0 all equal (modulo tolerated), 1 differences or failures, 2 usage,
77 nothing could be compared (e.g. the reference tool failed on every file).
"""

import argparse
import codecs
import collections
import difflib
import hashlib
import io
import json
import math
import os
import re
import shlex
import struct
import subprocess
import sys
import tempfile
import threading

FOREVER_25 = "PT2562047788015215H30M7.999999999S"


class Num(float):
    """A JSON float that remembers its literal."""
    __slots__ = ("text",)

    def __new__(cls, text):
        self = float.__new__(cls, text)
        self.text = text
        return self


class Obj(dict):
    """A JSON object that remembers duplicate keys."""
    __slots__ = ("dups",)


def _pairs(pairs):
    o = Obj(pairs)
    o.dups = None
    if len(o) != len(pairs):
        seen = set()
        o.dups = [k for k, _ in pairs if k in seen or seen.add(k)]
    return o


def _bad_constant(name):
    raise ValueError("non-JSON constant %s" % name)


DECODER = json.JSONDecoder(parse_float=Num, parse_constant=_bad_constant)
STRICT_DECODER = json.JSONDecoder(parse_float=Num, parse_constant=_bad_constant,
                                  object_pairs_hook=_pairs)


class FormatError(Exception):
    pass


class EventStream:
    """Iterates the events of `{"recording": {"events": [ ... ]}}` read from a
    binary file object, decoding one event at a time."""

    def __init__(self, f, what, decoder=DECODER):
        self.decoder = decoder
        self.last_text = ""
        self.f = f
        self.what = what
        self.dec = codecs.getincrementaldecoder("utf-8")()
        self.buf = ""
        self.pos = 0
        self.eof = False
        self.count = 0

    def _fill(self):
        if self.eof:
            return False
        data = self.f.read(1 << 17)
        if not data:
            self.eof = True
            self.buf = self.buf[self.pos:] + self.dec.decode(b"", final=True)
            self.pos = 0
            return False
        self.buf = self.buf[self.pos:] + self.dec.decode(data)
        self.pos = 0
        return True

    def _ws(self):
        while True:
            n = len(self.buf)
            p = self.pos
            while p < n and self.buf[p] in " \t\r\n":
                p += 1
            self.pos = p
            if p < n or not self._fill():
                return

    def _peek(self):
        self._ws()
        return self.buf[self.pos] if self.pos < len(self.buf) else ""

    def _context(self):
        return repr(self.buf[self.pos:self.pos + 60])

    def _expect(self, ch):
        c = self._peek()
        if c != ch:
            raise FormatError("%s: expected %r at %s" % (self.what, ch, self._context() or "end of output"))
        self.pos += 1

    def _value(self):
        self._ws()
        while True:
            try:
                v, end = self.decoder.raw_decode(self.buf, self.pos)
                # a number at the very end of the buffer may be cut
                if end == len(self.buf) and not self.eof:
                    raise json.JSONDecodeError("maybe cut", self.buf, end)
                self.last_text = self.buf[self.pos:end]
                self.pos = end
                return v
            except json.JSONDecodeError as e:
                if not self._fill():
                    raise FormatError("%s: bad JSON at %s: %s" % (self.what, self._context(), e.msg))
            except ValueError as e:
                raise FormatError("%s: %s" % (self.what, e))

    def _key(self, want):
        k = self._value()
        if k != want:
            raise FormatError("%s: expected key %r, got %r" % (self.what, want, k))
        self._expect(":")

    def __iter__(self):
        self._expect("{")
        self._key("recording")
        self._expect("{")
        self._key("events")
        self._expect("[")
        if self._peek() == "]":
            self.pos += 1
        else:
            while True:
                yield self._value()
                self.count += 1
                c = self._peek()
                self.pos += 1
                if c == "]":
                    break
                if c != ",":
                    self.pos -= 1
                    raise FormatError("%s: expected ',' or ']' after event %d at %s"
                                      % (self.what, self.count - 1, self._context()))
        self._expect("}")
        self._expect("}")
        if self._peek() != "":
            raise FormatError("%s: trailing data after the JSON document: %s" % (self.what, self._context()))


JFR_PREFIX = b'{\n  "recording": {\n    "events": ['
JFR_EVENT_END = b"\n    }"   # an event object closes at indentation 4, nothing else does
JFR_SUFFIX = b"]\n  }\n}"


class JfrTextStream:
    """Fast path for output in the exact layout of `jfr print --json`: yields
    each event's bytes without parsing them (equal bytes are equal events; only
    events whose bytes differ get parsed and compared field by field), and
    skip_common() passes over a run of events that two streams share in one
    comparison of their bytes, for files as big as `jfr` prints (GBs)."""

    def __init__(self, f, what, initial):
        self.f = f
        self.what = what
        self.buf = initial
        self.pos = len(JFR_PREFIX)
        self.eof = False
        self.count = 0
        self.started = False
        self.sep_pending = False  # an event was returned: ", " or "]" comes next
        self.done = False

    def _fill(self):
        if self.eof:
            return False
        data = self.f.read(1 << 20)
        if not data:
            self.eof = True
            return False
        if self.pos > (1 << 20):
            self.buf = self.buf[self.pos:]
            self.pos = 0
        self.buf += data
        return True

    def _need(self, n):
        while len(self.buf) - self.pos < n:
            if not self._fill():
                return False
        return True

    def _bad(self, msg):
        raise FormatError("%s: %s at %r" % (self.what, msg, bytes(self.buf[self.pos:self.pos + 60])))

    def _at_event(self):
        """Past the separator after the last event: True when an event starts
        at pos, False at the closing ']' (asking again gives the same)."""
        if not self.started:
            if not self._need(1):
                self._bad("output ends after the prefix")
            self.started = True
        elif self.sep_pending:
            if not self._need(1):
                self._bad("output cut after event %d" % (self.count - 1))
            if self.buf[self.pos:self.pos + 1] == b"]":
                return False
            if not self._need(2) or self.buf[self.pos:self.pos + 2] != b", ":
                self._bad("expected ', ' or ']' after event %d" % (self.count - 1))
            self.pos += 2
            self.sep_pending = False
        return self.buf[self.pos:self.pos + 1] != b"]"

    def next_event(self):
        """The next event's bytes, or None after the last (the end checked)."""
        if self.done:
            return None
        if not self._at_event():
            self.done = True
            while self._fill():
                pass
            rest = bytes(self.buf[self.pos:]).rstrip()
            if rest != JFR_SUFFIX:
                self._bad("unexpected end of the document")
            return None
        if not self._need(1) or self.buf[self.pos:self.pos + 1] != b"{":
            self._bad("expected an event")
        scanned = 0  # bytes after pos known not to hold the end mark
        while True:
            i = self.buf.find(JFR_EVENT_END, self.pos + scanned)
            if i >= 0:
                break
            scanned = max(0, len(self.buf) - self.pos - len(JFR_EVENT_END) + 1)
            if not self._fill():
                self._bad("output cut inside event %d" % self.count)
        end = i + len(JFR_EVENT_END)
        text = bytes(self.buf[self.pos:end])
        self.pos = end
        self.count += 1
        self.sep_pending = True
        return text


JFR_BETWEEN = JFR_EVENT_END + b", "  # the end of an event that another follows


def skip_common(x, y, window=1 << 22):
    """Both JfrTextStreams at an event: pass over the whole events, followed
    by another, that both have with the same bytes; returns how many."""
    skipped = 0
    while not x.done and not y.done and x._at_event() and y._at_event():
        x._need(window)
        y._need(window)
        n = min(len(x.buf) - x.pos, len(y.buf) - y.pos)
        same = n
        if x.buf[x.pos:x.pos + n] != y.buf[y.pos:y.pos + n]:
            lo, hi = 0, n  # the common prefix is lo long, shorter than hi
            while hi - lo > 1:
                mid = (lo + hi) // 2
                if x.buf[x.pos + lo:x.pos + mid] == y.buf[y.pos + lo:y.pos + mid]:
                    lo = mid
                else:
                    hi = mid
            same = lo
        i = x.buf.rfind(JFR_BETWEEN, x.pos, x.pos + same)
        if i < 0:
            break
        cut = i + len(JFR_BETWEEN) - x.pos
        k = x.buf.count(JFR_EVENT_END, x.pos, x.pos + cut)
        for s in (x, y):
            s.pos += cut
            s.count += k
        skipped += k
        if same < n or n < window:
            break  # the next event differs, or one stream's end is near
    return skipped


def parse_event_text(text, what):
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    try:
        return DECODER.decode(text)
    except ValueError as e:
        raise FormatError("%s: bad JSON in an event: %s" % (what, e))


class BufferedReader:
    """A file object with some bytes already read from it put back."""

    def __init__(self, head, f):
        self.head = head
        self.f = f

    def read(self, n):
        if self.head:
            h, self.head = self.head, b""
            return h
        return self.f.read(n)


def text_sha(text):
    """SHA-256 of a command's decoded output (run_text's), as hex."""
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()


def stream_sha(f):
    """SHA-256 of what is left in the binary reader f, read 1 MiB at a time, as hex."""
    h = hashlib.sha256()
    for b in iter(lambda: f.read(1 << 20), b""):
        h.update(b)
    return h.hexdigest()


class HashingReader:
    """A reader that hashes what is read through it (SHA-256)."""

    def __init__(self, f):
        self.f = f
        self.h = hashlib.sha256()

    def read(self, n=-1):
        b = self.f.read(n)
        self.h.update(b)
        return b

    def close(self):
        self.f.close()


def read_head(f, n):
    out = b""
    while len(out) < n:
        b = f.read(n - len(out))
        if not b:
            break
        out += b
    return out


# ---------------------------------------------------------------- comparison

def jtype(v):
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, int):
        return "integer"
    if isinstance(v, float):
        return "float"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return "array"
    return "object"


def show(v, limit=160):
    if isinstance(v, Num):
        s = v.text
    else:
        try:
            s = json.dumps(v, separators=(",", ":"))
        except (TypeError, ValueError):
            s = repr(v)
    return s if len(s) <= limit else s[:limit] + "...(%d chars)" % len(s)


def f32(x):
    try:
        return struct.unpack(">f", struct.pack(">f", x))[0]
    except OverflowError:
        return None


DURATION_RE = re.compile(r"^-?PT")


class Comparator:
    def __init__(self, tolerant, exact_numbers):
        self.tolerant = tolerant
        # JDK 17's Double.toString is not the shortest form: literals can only
        # be compared with a JDK 25 reference
        self.exact_numbers = exact_numbers and not tolerant
        self.diffs = []        # (kind, path, expected, actual) for one event
        self.tolerated = collections.Counter()
        self.notes = 0
        self.note_samples = []

    def _diff(self, path, exp, act, why):
        self.diffs.append((why, path, exp, act))

    def _tolerate(self, why):
        self.tolerated[why] += 1

    def cmp(self, exp, act, path):
        te, ta = jtype(exp), jtype(act)
        if te != ta:
            if self.tolerant and te == "integer" and ta == "integer":
                pass
            elif self.tolerant and te == "string" and ta == "string":
                pass
            else:
                self._diff(path, exp, act, "type %s vs %s" % (te, ta))
                return
        if te == "object":
            self._cmp_obj(exp, act, path)
        elif te == "array":
            if len(exp) != len(act):
                self._diff(path, exp, act, "array length %d vs %d" % (len(exp), len(act)))
            for i in range(min(len(exp), len(act))):
                self.cmp(exp[i], act[i], "%s[%d]" % (path, i))
        elif te == "float":
            self._cmp_float(exp, act, path)
        elif te == "integer":
            if exp != act:
                if self.tolerant and exp < 0 <= act and any(
                        -(1 << (b - 1)) <= exp and exp + (1 << b) == act for b in (8, 16, 32, 64)):
                    self._tolerate("@Unsigned printed signed by JDK < 25")
                else:
                    self._diff(path, exp, act, "value")
        elif te == "string":
            if exp != act:
                if (self.tolerant and act == FOREVER_25 and DURATION_RE.match(exp)):
                    self._tolerate("Timespan Long.MAX_VALUE (FOREVER) printed by JDK < 25")
                else:
                    self._diff(path, exp, act, "value")
        elif exp != act:
            self._diff(path, exp, act, "value")

    def _cmp_float(self, exp, act, path):
        same = exp == act and math.copysign(1.0, exp) == math.copysign(1.0, act)
        et = getattr(exp, "text", None)
        at = getattr(act, "text", None)
        if same:
            if et is not None and at is not None and et != at:
                if self.exact_numbers:
                    self._diff(path, exp, act, "number literal")
                else:
                    self.notes += 1
                    if len(self.note_samples) < 5:
                        self.note_samples.append("%s: %s vs %s" % (path, et, at))
            return
        if self.tolerant and math.copysign(1.0, exp) == math.copysign(1.0, act):
            fe, fa = f32(exp), f32(act)
            if fe is not None and fe == fa:
                self._tolerate("float literal (Float.toString of JDK < 19)")
                return
        self._diff(path, exp, act, "value")

    def _cmp_obj(self, exp, act, path):
        for o, side in ((exp, "reference"), (act, "jfrstream")):
            if getattr(o, "dups", None):
                self._diff(path, exp, act, "duplicate keys in %s output: %s" % (side, ", ".join(o.dups)))
        ke, ka = list(exp), list(act)
        se, sa = set(ke), set(ka)
        for k in ke:
            if k not in sa:
                self._diff("%s.%s" % (path, k), exp[k], "<missing>", "missing field")
        for k in ka:
            if k not in se:
                self._diff("%s.%s" % (path, k), "<absent>", act[k], "extra field")
        common_e = [k for k in ke if k in sa]
        common_a = [k for k in ka if k in se]
        if common_e != common_a:
            self._diff(path, common_e, common_a, "field order")
        for k in common_e:
            self.cmp(exp[k], act[k], "%s.%s" % (path, k))


# ------------------------------------------------------------------- running

class Totals:
    def __init__(self):
        self.files = 0
        self.compared = False
        self.events = 0
        self.differing = 0
        self.tolerated = collections.Counter()
        self.notes = 0
        self.errors = 0
        self.skipped = 0
        self.partial = 0
        self.last_json = (True, 0, 0, False)
        self.groups = collections.Counter()
        self.group_example = {}
        self.act = {}            # memo: command -> SHA-256 of jfrstream's output
        self.act_json = None     # the last compare_json's (sha, complete)


def tool_major(jfr):
    try:
        out = subprocess.run([jfr, "version"], capture_output=True, text=True, timeout=120).stdout
    except (OSError, subprocess.SubprocessError):
        return 0
    m = re.match(r"\s*(\d+)", out)
    return int(m.group(1)) if m else 0


def errsum(text, lines=3):
    """The first lines of a stderr text, for a one-glance report."""
    ls = [x for x in (text or "").strip().splitlines() if x.strip()]
    out = " | ".join(x.strip()[:240] for x in ls[:lines])
    if len(ls) > lines:
        out += " | ... (%d more lines)" % (len(ls) - lines)
    return out


def jfrstream_cmd(args, rest):
    # JFRSTREAM_TEST_WRAPPER (e.g. test/valgrind.sh): a command put before ours
    cmd = shlex.split(os.environ.get("JFRSTREAM_TEST_WRAPPER", "")) + [args.jfrstream]
    if args.feed_size:
        cmd += ["--feed-size", args.feed_size]
    return cmd + rest


def run_text(cmd, timeout):
    try:
        p = subprocess.run(cmd, capture_output=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, "timed out after %d s" % timeout, -1
    except OSError as e:
        return None, str(e), -1
    return p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace"), p.returncode


def summary_rows(text):
    """(header lines, set of normalised table rows) of a `jfr summary` output."""
    head, rows, in_table = [], [], False
    for line in text.splitlines():
        if line.startswith("====="):
            in_table = True
            continue
        if in_table and line.strip():
            parts = line.split()
            if parts and parts[0] in ("jdk.CheckPoint", "com.oracle.jdk.CheckPoint"):
                parts[0] = parts[0][:-len("CheckPoint")] + "Checkpoint"
            rows.append(" ".join(parts))
        elif not in_table:
            head.append(line.rstrip())
    return head, sorted(rows)


def compare_text(args, path, command, expected_text, totals, tolerant, label):
    """`jfrstream COMMAND FILE` must print exactly expected_text (for summary,
    with a JDK < 25 reference, the table rows are compared as a set)."""
    totals.compared = True
    out, err, rc = run_text(jfrstream_cmd(args, [command, path]), args.timeout)
    if rc == 0 and out is not None:
        totals.act[command] = text_sha(out)
    if rc != 0 or out is None:
        print("  %s: FAIL: jfrstream exit %s: %s" % (command, rc, errsum(err)))
        totals.errors += 1
        return False
    if out == expected_text:
        print("  %s: OK" % command)
        return True
    if tolerant and command == "summary":
        he, re_ = summary_rows(expected_text)
        ha, ra = summary_rows(out)
        if he == ha and re_ == ra:
            totals.tolerated["summary row order / jdk.CheckPoint name of JDK < 25"] += 1
            print("  summary: OK (tolerated: row order of JDK < 25)")
            return True
    print("  %s: DIFF (%s vs jfrstream):" % (command, label))
    d = list(difflib.unified_diff(expected_text.splitlines(), out.splitlines(),
                                  label, "jfrstream", lineterm="", n=1))
    for line in d[:40]:
        print("    " + line)
    if len(d) > 40:
        print("    ... (%d more diff lines)" % (len(d) - 40))
    totals.errors += 1
    return False


def drain_to(f, dest):
    def run():
        with open(dest, "wb") as o:
            while True:
                b = f.read(1 << 16)
                if not b:
                    break
                o.write(b)
    t = threading.Thread(target=run, daemon=True)
    t.start()
    return t


def print_args(args):
    a = ["print", "--json"]
    if args.events:
        a += ["--events", args.events]
    a += ["--stack-depth", str(args.stack_depth)]
    return a


def compare_json(args, path, ref, totals, tolerant, label):
    """ref: a JDK jfr binary (run it) or ("file", PATH) with stored output."""
    procs = []
    tmpdir = tempfile.mkdtemp(prefix="oracle.")
    try:
        if isinstance(ref, tuple):
            ref_f = open(ref[1], "rb")
            ref_proc = None
        else:
            ref_proc = subprocess.Popen([ref] + print_args(args) + [path], stdout=subprocess.PIPE,
                                        stderr=open(os.path.join(tmpdir, "ref.err"), "wb"))
            procs.append(ref_proc)
            ref_f = ref_proc.stdout
        act_proc = subprocess.Popen(jfrstream_cmd(args, print_args(args) + [path]),
                                    stdout=subprocess.PIPE,
                                    stderr=open(os.path.join(tmpdir, "act.err"), "wb"))
        procs.append(act_proc)
        act_hash = HashingReader(act_proc.stdout)
        fired = []

        def on_timeout():
            fired.append(1)
            for p in procs:
                p.kill()
        timer = threading.Timer(args.timeout, on_timeout)
        timer.start()

        cmp = Comparator(tolerant, args.exact_numbers)
        decoder = STRICT_DECODER if args.check_duplicates else DECODER
        act_f = act_hash
        eh = read_head(ref_f, len(JFR_PREFIX))
        ah = read_head(act_f, len(JFR_PREFIX))
        fast = eh == JFR_PREFIX and ah == JFR_PREFIX and not args.check_duplicates
        if fast:
            exp_s = JfrTextStream(ref_f, label, bytearray(eh))
            act_s = JfrTextStream(act_f, "jfrstream", bytearray(ah))
        else:
            exp_s = EventStream(BufferedReader(eh, ref_f), label, decoder)
            act_s = EventStream(BufferedReader(ah, act_f), "jfrstream", decoder)
        if fast:
            exp_next, act_next = exp_s.next_event, act_s.next_event
        else:
            exp_it, act_it = iter(exp_s), iter(act_s)
            exp_next, act_next = (lambda: next(exp_it)), (lambda: next(act_it))
        n = differing = 0
        shown = 0
        problem = None
        exp_done = act_done = False
        extra_exp = extra_act = 0
        first_type_mismatch = None
        counts_cut = False
        while True:
            if fast and not exp_done and not act_done:
                try:
                    n += skip_common(exp_s, act_s)
                except FormatError:
                    pass  # said again by next_event below, on its side
            try:
                e = None if exp_done else exp_next()
                if e is None and fast:
                    raise StopIteration
            except StopIteration:
                exp_done = True
            except FormatError as ex:
                problem = problem or "reference output: %s" % ex
                exp_done = True
            try:
                a = None if act_done else act_next()
                if a is None and fast:
                    raise StopIteration
            except StopIteration:
                act_done = True
            except FormatError as ex:
                problem = problem or "jfrstream output: %s" % ex
                act_done = True
            if exp_done and act_done:
                break
            if exp_done:
                extra_act += 1
            elif act_done:
                extra_exp += 1
            if exp_done or act_done:
                if extra_act + extra_exp >= 1000:
                    counts_cut = True  # do not parse the rest just to count it
                    break
                continue
            # the same text is the same JSON (the deep comparison below also
            # sees 1 vs 1.0, true vs 1, -0.0 vs 0.0 and key order)
            if fast:
                if e == a:
                    n += 1
                    continue
                try:
                    e = parse_event_text(e, label)
                except FormatError as ex:
                    problem = problem or "reference output: %s" % ex
                    exp_done = True
                    continue
                try:
                    a = parse_event_text(a, "jfrstream")
                except FormatError as ex:
                    problem = problem or "jfrstream output: %s" % ex
                    act_done = True
                    continue
            elif exp_s.last_text == act_s.last_text:
                n += 1
                continue
            etype = e.get("type") if isinstance(e, dict) else None
            atype = a.get("type") if isinstance(a, dict) else None
            if etype != atype and first_type_mismatch is None:
                first_type_mismatch = (n, etype, atype)
            cmp.diffs = []
            cmp.cmp(e, a, "$")
            if cmp.diffs:
                differing += 1
                shown_here = 0
                for why, p, ev, av in cmp.diffs:
                    key = (etype, re.sub(r"\[\d+\]", "[]", p), why.split(" ")[0])
                    totals.groups[key] += 1
                    if key not in totals.group_example:
                        totals.group_example[key] = (os.path.basename(path), n, ev, av)
                    if shown < args.max_diffs and shown_here < 3:
                        print("  event %d %s %s: %s\n      %s: %s\n      jfrstream: %s"
                              % (n, etype, p, why, label, show(ev), show(av)))
                        shown += 1
                        shown_here += 1
                if shown_here and len(cmp.diffs) > shown_here:
                    print("  event %d: ... %d more differences in this event"
                          % (n, len(cmp.diffs) - shown_here))
            n += 1
        if not counts_cut:  # the rest (the closing brackets) into the hash
            while act_hash.read(1 << 20):
                pass
        timer.cancel()
        killed = set()
        if counts_cut:
            # one side ended long ago: stop the other, it is not waited for
            if not exp_done and ref_proc is not None:
                ref_proc.kill()
                killed.add(ref_proc)
            if not act_done:
                act_proc.kill()
                killed.add(act_proc)
        rcs = []
        for p in procs:
            try:
                rc = p.wait(timeout=60)
            except subprocess.TimeoutExpired:
                p.kill()
                rc = p.wait()
            rcs.append(0 if p in killed else rc)
        if ref_proc is None:
            ref_f.close()
        ref_rc = rcs[0] if ref_proc is not None else 0
        act_rc = rcs[-1]
        if fired:
            problem = "jfrstream output: timed out after %d s" % args.timeout
        act_err = open(os.path.join(tmpdir, "act.err"), "rb").read().decode("utf-8", "replace")
        ref_err = ""
        if ref_proc is not None:
            ref_err = open(os.path.join(tmpdir, "ref.err"), "rb").read().decode("utf-8", "replace")
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
        for name in ("ref.err", "act.err"):
            try:
                os.unlink(os.path.join(tmpdir, name))
            except OSError:
                pass
        os.rmdir(tmpdir)

    totals.act_json = (act_hash.h.hexdigest(), act_rc == 0 and not counts_cut and not fired)
    ref_failed = ref_rc != 0 or (problem is not None and problem.startswith("reference"))
    if ref_failed and n == 0:
        print("  json: SKIP: reference %s failed (exit %s): %s"
              % (label, ref_rc, errsum(ref_err, 1) if ref_rc else problem))
        totals.skipped += 1
        return None
    totals.compared = True
    totals.events += n
    totals.differing += differing
    totals.tolerated.update(cmp.tolerated)
    totals.notes += cmp.notes
    ok = True
    if ref_failed:
        # The JDK gives up on some files (e.g. "Pool ... must contain at least one
        # element"); the events it printed before that are still compared.
        print("  json: PARTIAL: reference %s failed (exit %s) after %d events: %s; "
              "compared those, jfrstream printed %d" % (label, ref_rc, n,
                                                        ref_err.strip().splitlines()[0][:200] if ref_err.strip() else problem,
                                                        n + extra_act))
        totals.partial += 1
        extra_act = 0
        if problem and problem.startswith("reference"):
            problem = None
    if act_rc != 0 and not ref_failed:
        print("  json: FAIL: jfrstream exit %d: %s" % (act_rc, errsum(act_err)))
        ok = False
    if problem:
        print("  json: FAIL: %s" % problem)
        ok = False
    if extra_exp or extra_act:
        more = "at least " if counts_cut else ""
        print("  json: FAIL: event count: %s has %s%d, jfrstream has %s%d"
              % (label, more if extra_exp else "", n + extra_exp,
                 more if extra_act else "", n + extra_act))
        ok = False
    if first_type_mismatch:
        i, et, at = first_type_mismatch
        print("  json: first event of a different type at index %d: %s vs %s "
              "(events out of order or missing)" % (i, et, at))
    if differing:
        if shown < differing:
            print("  ... %d differing events in all" % differing)
        ok = False
    if cmp.notes:
        print("  json: %d float literals differ in form only, e.g. %s"
              % (cmp.notes, "; ".join(cmp.note_samples[:3])))
    if cmp.tolerated:
        print("  json: tolerated: " + ", ".join("%s x%d" % kv for kv in sorted(cmp.tolerated.items())))
    print("  json: %s, %d events, %d differing" % ("OK" if ok else "DIFF", n, differing))
    if not ok:
        totals.errors += 1
    totals.last_json = (ok, n, differing, bool(problem or extra_exp or extra_act or (act_rc and not ref_failed)))
    return ok


def first_diff(ours, ref):
    """The first line where two texts differ, both shown (the views' tests)."""
    ol, rl = ours.splitlines(), ref.splitlines()
    for i in range(max(len(ol), len(rl))):
        x = ol[i] if i < len(ol) else "<end>"
        y = rl[i] if i < len(rl) else "<end>"
        if x != y:
            return "  line %d:\n    jfrstream: %r\n    jdk:       %r" % (i + 1, x[:160], y[:160])
    return ""


def chunk_spans(path):
    """[(offset, size)] of the chunks of a .jfr file (header: magic FLR\\0,
    then the chunk size at byte 8, big-endian), or None if it does not
    split exactly so."""
    spans, off = [], 0
    end = os.path.getsize(path)
    with open(path, "rb") as f:
        while off < end:
            f.seek(off)
            h = f.read(16)
            if len(h) < 16 or h[:4] != b"FLR\0":
                return None
            size = struct.unpack(">Q", h[8:16])[0]
            if size < 16 or off + size > end:
                return None
            spans.append((off, size))
            off += size
    return spans


def span_bytes(path, span):
    with open(path, "rb") as f:
        f.seek(span[0])
        return f.read(span[1])


def memo_key(args, path, tolerant):
    """The memo's key of one FILE (None: no memo): what the reference's
    outputs and this script's verdict depend on, but jfrstream's outputs."""
    d = os.environ.get("JFRSTREAM_ORACLE_MEMO")
    if not d or not args.jfr or args.check_duplicates:
        return None
    with open(path, "rb") as f:
        file_sha = stream_sha(f)
    ref = os.path.realpath(args.jfr)
    st = os.stat(ref)
    # the JDK's classes: bin/jfr is only its launcher
    modules = os.path.join(os.path.dirname(os.path.dirname(ref)), "lib", "modules")
    mst = os.stat(modules) if os.path.exists(modules) else None
    opts = {k: v for k, v in vars(args).items() if k not in ("files", "jfrstream", "timeout")}
    ident = json.dumps([file_sha, ref, st.st_size, st.st_mtime_ns,
                        mst and (mst.st_size, mst.st_mtime_ns), tolerant,
                        sorted(opts.items())], default=str)
    return os.path.join(d, hashlib.sha256(ident.encode()).hexdigest() + ".json")


def memo_stream_sha(cmd, timeout):
    """(SHA-256 of cmd's stdout, exit status), the output not kept."""
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    timer = threading.Timer(timeout, p.kill)
    timer.start()
    sha = stream_sha(p.stdout)
    rc = p.wait()
    timer.cancel()
    return sha, rc


def memo_replay(args, path, memo, totals):
    """True when each of jfrstream's outputs has the memo's hash: the memo's
    report printed and its counts added."""
    act = memo["act"]
    for command in ("summary", "metadata"):
        if command in act:
            out, _, rc = run_text(jfrstream_cmd(args, [command, path]), args.timeout)
            if rc != 0 or out is None or text_sha(out) != act[command]:
                return False
    if "json" in act:
        sha, rc = memo_stream_sha(jfrstream_cmd(args, print_args(args) + [path]), args.timeout)
        if rc != 0 or sha != act["json"]:
            return False
    if "chunks" in act:
        tmp = tempfile.mkdtemp(prefix="oracle-memo.")
        try:
            for i, (off, size, want) in enumerate(act["chunks"]):
                c = os.path.join(tmp, "chunk_%d.jfr" % i)
                with open(c, "wb") as f:
                    f.write(span_bytes(path, (off, size)))
                sha, rc = memo_stream_sha(jfrstream_cmd(args, print_args(args) + [c]), args.timeout)
                os.unlink(c)
                if rc != 0 or sha != want:
                    return False
        finally:
            for f in os.listdir(tmp):
                os.unlink(os.path.join(tmp, f))
            os.rmdir(tmp)
    sys.stdout.write(memo["out"])
    print("  (memo: jfrstream's outputs equal those compared with %s in an earlier run, "
          "whose report this is; the JDK was not started: JFRSTREAM_ORACLE_MEMO=%s)"
          % (args.jfr, os.environ["JFRSTREAM_ORACLE_MEMO"]))
    c = memo["counts"]
    totals.compared = c["compared"]
    totals.events += c["events"]
    totals.tolerated.update(c["tolerated"])
    totals.notes += c["notes"]
    return True


class Tee(io.StringIO):
    """stdout, also kept (the report of one file for the memo)."""

    def __init__(self, out):
        super().__init__()
        self.out = out

    def write(self, text):
        self.out.write(text)
        return super().write(text)


CROSS_CHUNK = ("JDK reused an earlier chunk's constant for a key declared again in a later "
               "chunk (whole-file `jfr print` only: each chunk alone matches)")


def per_chunk_check(args, path, totals, tolerant, label, groups_before, notes_before):
    """A multi-chunk file differed as a whole: compare every chunk alone
    (`jfr disassemble --max-chunks 1`). The JDK keeps resolved constants of
    earlier chunks for keys that a later chunk declares again; with files that
    mix writers (the same key meaning another thread in another chunk) its
    whole-file output is then wrong, while each chunk alone is right. If every
    chunk matches, the whole-file differences are counted as tolerated."""
    ok, n, differing, hard = totals.last_json
    if ok or hard or not differing or isinstance(args.jfr, tuple) or not args.jfr:
        return
    tmp = tempfile.mkdtemp(prefix="oracle-chunks.")
    try:
        out, err, rc = run_text([args.jfr, "disassemble", "--max-chunks", "1", "--output", tmp, path],
                                args.timeout)
        chunks = sorted((f for f in os.listdir(tmp) if f.endswith(".jfr")),
                        key=lambda f: int(re.sub(r"\D", "", f.rsplit("_", 1)[-1]) or 0))
        if rc != 0 or len(chunks) < 2:
            return
        print("  per chunk: %d chunks, comparing each alone" % len(chunks))
        sub = Totals()
        all_ok = True
        # memo: where each chunk is in the file, if the JDK's copies are its bytes
        spans = chunk_spans(path)
        recorded = []
        for i, c in enumerate(chunks):
            print("  chunk %d alone (%s):" % (i, c))
            sub.last_json = (True, 0, 0, False)
            keep = args.max_diffs
            args.max_diffs = 3
            r = compare_json(args, os.path.join(tmp, c), args.jfr, sub, tolerant, label)
            args.max_diffs = keep
            if spans is not None and len(spans) == len(chunks) and sub.act_json[1]:
                with open(os.path.join(tmp, c), "rb") as f:
                    same = f.read() == span_bytes(path, spans[i])
                recorded.append(list(spans[i]) + [sub.act_json[0]] if same else None)
            else:
                recorded.append(None)
            if r is False:
                all_ok = False
                break  # no need to look further
        if all_ok and None not in recorded:
            totals.act["chunks"] = recorded
        if all_ok:
            print("  per chunk: every chunk matches: the %d whole-file differences are "
                  "tolerated (%s)" % (differing, CROSS_CHUNK))
            totals.differing -= differing
            totals.errors -= 1
            totals.tolerated[CROSS_CHUNK] += differing
            totals.groups = groups_before
            totals.notes = notes_before + sub.notes
        else:
            print("  per chunk: chunks differ on their own too")
    finally:
        for f in os.listdir(tmp):
            os.unlink(os.path.join(tmp, f))
        os.rmdir(tmp)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("files", nargs="+", metavar="FILE")
    ap.add_argument("--jfrstream", required=True, help="the jfrstream CLI")
    ap.add_argument("--jfr", help="reference `jfr` tool (JDK 25 preferred)")
    ap.add_argument("--expected-summary", help="stored `jfr summary` output (one FILE)")
    ap.add_argument("--expected-json", help="stored `jfr print --json` output (one FILE)")
    ap.add_argument("--expected-metadata", help="stored `jfr metadata` output (one FILE)")
    ap.add_argument("--events", help="compare only these event types (jfr --events)")
    ap.add_argument("--stack-depth", type=int, default=64)
    ap.add_argument("--feed-size", help="pass --feed-size to jfrstream")
    ap.add_argument("--no-summary", action="store_true")
    ap.add_argument("--no-json", action="store_true")
    ap.add_argument("--no-metadata", action="store_true")
    ap.add_argument("--strict", action="store_true",
                    help="tolerate nothing, even with a JDK < 25 reference")
    ap.add_argument("--exact-numbers", action="store_true",
                    help="float literals must be identical, not just equal")
    ap.add_argument("--check-duplicates", action="store_true",
                    help="also report duplicate keys in objects (slower)")
    ap.add_argument("--max-diffs", type=int, default=20, help="differences shown per file")
    ap.add_argument("--timeout", type=int, default=600, help="seconds per command")
    ap.add_argument("--no-per-chunk", action="store_true",
                    help="do not compare the chunks of a differing multi-chunk file one by one")
    ap.add_argument("--max-groups", type=int, default=40, help="difference groups shown")
    args = ap.parse_args()

    stored = args.expected_summary or args.expected_json or args.expected_metadata
    any_stored = bool(stored)
    if stored and len(args.files) != 1:
        ap.error("--expected-summary/-json/-metadata need exactly one FILE")
    if not stored and not args.jfr:
        ap.error("give --jfr or --expected-summary/-json/-metadata")

    tolerant = False
    label = "expected"
    if args.jfr and not stored:
        major = tool_major(args.jfr)
        label = "jfr%s" % (major if major >= 2 else "17")
        tolerant = major < 25 and not args.strict
        if args.strict:
            args.no_per_chunk = True
        if tolerant:
            print("oracle: reference %s is older than JDK 25: tolerating the documented "
                  "17-vs-25 differences (counted below)" % args.jfr)

    totals = Totals()
    for path in args.files:
        print("%s:" % path)
        totals.compared = False
        memo_file = memo_key(args, path, tolerant) if not any_stored else None
        if memo_file:
            try:
                with open(memo_file, encoding="utf-8") as f:
                    memo = json.load(f)
            except (OSError, ValueError):
                memo = None
            if memo and memo_replay(args, path, memo, totals):
                if totals.compared:
                    totals.files += 1
                continue
            before = (totals.events, totals.differing, collections.Counter(totals.tolerated),
                      totals.notes, totals.errors, totals.skipped, totals.partial)
            totals.act = {}
            tee = Tee(sys.stdout)
            sys.stdout = tee
        for command, stored, skip in (("summary", args.expected_summary, args.no_summary),
                                      ("metadata", args.expected_metadata, args.no_metadata)):
            if skip:
                continue
            if stored:
                with open(stored, encoding="utf-8") as f:
                    exp = f.read()
                compare_text(args, path, command, exp, totals, False, label)
            elif not any_stored:
                exp, err, rc = run_text([args.jfr, command, path], args.timeout)
                if rc != 0 or exp is None:
                    print("  %s: SKIP: reference jfr failed (exit %s): %s" % (command, rc, errsum(err, 1)))
                    totals.skipped += 1
                else:
                    compare_text(args, path, command, exp, totals, tolerant, label)
        if not args.no_json:
            if args.expected_json:
                compare_json(args, path, ("file", args.expected_json), totals, False, label)
            elif not any_stored:
                groups_before = collections.Counter(totals.groups)
                notes_before = totals.notes
                totals.last_json = (True, 0, 0, False)
                totals.act_json = None
                compare_json(args, path, args.jfr, totals, tolerant, label)
                if totals.act_json and totals.act_json[1]:
                    totals.act["json"] = totals.act_json[0]
                if not args.no_per_chunk:
                    per_chunk_check(args, path, totals, tolerant, label, groups_before, notes_before)
        if memo_file:
            sys.stdout = tee.out
            clean = (totals.differing, totals.errors, totals.skipped, totals.partial) == before[1:2] + before[4:]
            want = {"summary": not args.no_summary, "metadata": not args.no_metadata,
                    "json": not args.no_json}
            if clean and all(totals.act.get(k) for k, on in want.items() if on) and \
                    ("chunks" in totals.act or "per chunk:" not in tee.getvalue()):
                tol = totals.tolerated.copy()
                tol.subtract(before[2])
                memo = {"act": totals.act, "out": tee.getvalue(),
                        "counts": {"compared": totals.compared, "events": totals.events - before[0],
                                   "tolerated": {k: v for k, v in tol.items() if v},
                                   "notes": totals.notes - before[3]}}
                os.makedirs(os.path.dirname(memo_file), exist_ok=True)
                with open(memo_file + ".tmp", "w", encoding="utf-8") as f:
                    json.dump(memo, f)
                os.replace(memo_file + ".tmp", memo_file)
        if totals.compared:
            totals.files += 1

    if totals.groups:
        print("differences grouped by (event type, path, kind):")
        for (t, p, why), c in totals.groups.most_common(args.max_groups):
            f, i, ev, av = totals.group_example[(t, p, why)]
            print("  %6d  %s %s (%s)  e.g. %s event %d: %s vs %s"
                  % (c, t, p, why, f, i, show(ev, 60), show(av, 60)))
    if totals.tolerated:
        print("tolerated: "
              + ", ".join("%s x%d" % kv for kv in sorted(totals.tolerated.items())))
    print("files=%d events=%d differing=%d tolerated=%d notes=%d errors=%d skipped=%d partial=%d"
          % (totals.files, totals.events, totals.differing, sum(totals.tolerated.values()),
             totals.notes, totals.errors, totals.skipped, totals.partial))
    if totals.errors or totals.differing:
        return 1
    if totals.files == 0 and totals.skipped:
        return 77
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BrokenPipeError:
        sys.exit(1)
