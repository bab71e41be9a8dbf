#!/usr/bin/env python3
"""promtext.py — a strict reader of the Prometheus text exposition format
(version 0.0.4), shared by the tests of `--metrics` (test/metrics/*.py).

    import promtext
    expo = promtext.parse(body_bytes)        # raises promtext.FormatError
    expo.value("jfr_events_total", source="h:1:2", type="jdk.CPULoad")
    expo.samples                             # [Sample(name, labels, value, ts)]
    expo.families                            # {name: Family(name, type, help, samples)}

    test/metrics/promtext.py --selftest      # good and broken documents
    test/metrics/promtext.py FILE|-          # check one document, print families

What is checked (each a FormatError naming the line):
  * UTF-8, '\\n' line ends, the last line ends with '\\n';
  * `# HELP NAME TEXT`: at most one per name, TEXT escapes only \\\\ and \\n;
    `# TYPE NAME counter|gauge|histogram|summary|untyped`: at most one per
    name; both before the family's first sample;
  * sample lines: NAME [{LABEL="VALUE",...}] VALUE [TIMESTAMP]; metric and
    label names by their grammar; label names not reserved (__*) nor twice in
    a sample; label values escape only \\\\, \\" and \\n; values are floats
    (also NaN, +Inf, -Inf); timestamps are integers;
  * a family is one contiguous group (its HELP/TYPE then its samples): the
    samples of a name never come back after another family's;
  * no series (name + label set) twice;
  * counters: not negative, not NaN;
  * histograms: X_bucket with `le` (a float; X_sum/X_count without), per
    label set the buckets in increasing `le`, cumulative (never decreasing),
    ending with le="+Inf" whose value equals X_count; X_sum and X_count present;
  * summaries: X with a `quantile` label, X_sum and X_count present;
  * a family with a TYPE has samples of that type's names only.

Python 3 standard library only.
"""
import math
import re
import sys

METRIC_NAME = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")
LABEL_NAME = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*")
TYPES = ("counter", "gauge", "histogram", "summary", "untyped")
FLOAT = re.compile(r"[+-]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|Inf|inf|NaN|nan)")
TIMESTAMP = re.compile(r"-?\d+")
SUFFIXES = {"histogram": ("_bucket", "_sum", "_count"), "summary": ("_sum", "_count")}


class FormatError(ValueError):
    def __init__(self, lineno, msg, line=None):
        self.lineno = lineno
        self.msg = msg
        self.line = line
        text = "line %d: %s" % (lineno, msg) if lineno else msg
        if line is not None:
            text += ": %r" % (line[:200],)
        super().__init__(text)


class Sample:
    __slots__ = ("name", "labels", "value", "timestamp", "lineno")

    def __init__(self, name, labels, value, timestamp, lineno):
        self.name = name
        self.labels = labels
        self.value = value
        self.timestamp = timestamp
        self.lineno = lineno

    def key(self):
        return (self.name, tuple(sorted(self.labels.items())))

    def __repr__(self):
        return "%s%s %r" % (self.name, fmt_labels(self.labels), self.value)


class Family:
    def __init__(self, name):
        self.name = name
        self.type = None
        self.help = None
        self.samples = []

    def __repr__(self):
        return "Family(%s %s, %d samples)" % (self.name, self.type or "untyped", len(self.samples))


def fmt_labels(labels):
    if not labels:
        return ""
    return "{" + ",".join('%s="%s"' % (k, escape(v)) for k, v in labels.items()) + "}"


def escape(value):
    return value.replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n")


def parse_float(text):
    if not FLOAT.fullmatch(text):
        raise ValueError(text)
    t = text.lstrip("+")
    if t.lower() in ("inf",):
        return math.inf
    if t.lower() in ("-inf",):
        return -math.inf
    return float(t)


class Exposition:
    def __init__(self):
        self.families = {}
        self.samples = []
        self.order = []   # family names in the order they appear

    def find(self, name, **labels):
        """Samples of metric NAME whose labels include LABELS (values as str)."""
        out = []
        for s in self.samples:
            if s.name != name:
                continue
            if all(s.labels.get(k) == str(v) for k, v in labels.items()):
                out.append(s)
        return out

    def value(self, name, **labels):
        """The value of the one sample of NAME with LABELS; None if there is
        none; ValueError if several match."""
        ss = self.find(name, **labels)
        if not ss:
            return None
        if len(ss) > 1:
            raise ValueError("%d samples of %s%s" % (len(ss), name, fmt_labels(labels)))
        return ss[0].value

    def total(self, name, **labels):
        return sum(s.value for s in self.find(name, **labels))

    def names(self):
        return sorted({s.name for s in self.samples})


def _family_of(name, families):
    """The family a sample name belongs to: NAME itself, or the histogram /
    summary X of X_bucket, X_sum, X_count when X is declared so."""
    for typ, sufs in SUFFIXES.items():
        for suf in sufs:
            if name.endswith(suf):
                base = name[: -len(suf)]
                f = families.get(base)
                if f is not None and f.type == typ:
                    return base
    return name


def _unescape_help(text, lineno, line):
    out = []
    i = 0
    while i < len(text):
        c = text[i]
        if c == "\\":
            if i + 1 >= len(text) or text[i + 1] not in "\\n":
                raise FormatError(lineno, "HELP text: a backslash must be \\\\ or \\n", line)
            out.append("\\" if text[i + 1] == "\\" else "\n")
            i += 2
            continue
        out.append(c)
        i += 1
    return "".join(out)


def _parse_labels(text, pos, lineno, line):
    """Parse {...} starting at text[pos] == '{'; returns (labels, next pos)."""
    labels = {}
    i = pos + 1
    n = len(text)
    while True:
        while i < n and text[i] in " \t":
            i += 1
        if i < n and text[i] == "}":
            return labels, i + 1
        m = LABEL_NAME.match(text, i)
        if not m:
            raise FormatError(lineno, "bad label name at column %d" % (i + 1), line)
        lname = m.group(0)
        if lname.startswith("__"):
            raise FormatError(lineno, "reserved label name %s" % lname, line)
        if lname in labels:
            raise FormatError(lineno, "label %s twice" % lname, line)
        i = m.end()
        while i < n and text[i] in " \t":
            i += 1
        if i >= n or text[i] != "=":
            raise FormatError(lineno, "'=' expected after label %s" % lname, line)
        i += 1
        while i < n and text[i] in " \t":
            i += 1
        if i >= n or text[i] != '"':
            raise FormatError(lineno, "'\"' expected for the value of label %s" % lname, line)
        i += 1
        val = []
        while True:
            if i >= n:
                raise FormatError(lineno, "unterminated value of label %s" % lname, line)
            c = text[i]
            if c == "\\":
                if i + 1 >= n or text[i + 1] not in '\\"n':
                    raise FormatError(lineno, "label %s: a backslash must be \\\\, \\\" or \\n"
                                      % lname, line)
                val.append({"\\": "\\", '"': '"', "n": "\n"}[text[i + 1]])
                i += 2
                continue
            if c == '"':
                i += 1
                break
            val.append(c)
            i += 1
        labels[lname] = "".join(val)
        while i < n and text[i] in " \t":
            i += 1
        if i < n and text[i] == ",":
            i += 1
            continue
        if i < n and text[i] == "}":
            return labels, i + 1
        raise FormatError(lineno, "',' or '}' expected after label %s" % lname, line)


def parse(data):
    """Parse a text exposition (bytes or str); returns an Exposition or raises
    FormatError."""
    if isinstance(data, (bytes, bytearray)):
        try:
            text = bytes(data).decode("utf-8")
        except UnicodeDecodeError as e:
            raise FormatError(0, "not UTF-8 at byte %d" % e.start)
    else:
        text = data
    if "\r" in text:
        raise FormatError(0, "a carriage return (lines end with \\n only)")
    if text and not text.endswith("\n"):
        raise FormatError(0, "the last line does not end with \\n")
    expo = Exposition()
    fams = expo.families
    current = None         # the family whose group is open
    closed = set()         # families whose group has ended
    started = set()        # families with samples already
    seen = {}              # series key -> line
    for lineno, line in enumerate(text.split("\n")[:-1] if text else [], 1):
        stripped = line.strip(" \t")
        if not stripped:
            continue
        if stripped.startswith("#"):
            toks = stripped[1:].lstrip(" \t").split(None, 2)
            if not toks or toks[0] not in ("HELP", "TYPE"):
                continue  # a plain comment
            if len(toks) < 2:
                raise FormatError(lineno, "%s without a metric name" % toks[0], line)
            name = toks[1]
            if not METRIC_NAME.fullmatch(name):
                raise FormatError(lineno, "bad metric name %r" % name, line)
            if name in closed:
                raise FormatError(lineno, "%s of %s after its group ended (a family must be "
                                  "contiguous)" % (toks[0], name), line)
            if name in started:
                raise FormatError(lineno, "%s of %s after its first sample" % (toks[0], name),
                                  line)
            f = fams.get(name)
            if f is None:
                f = fams[name] = Family(name)
                expo.order.append(name)
            if current is not None and current != name:
                closed.add(current)
            current = name
            if toks[0] == "HELP":
                if f.help is not None:
                    raise FormatError(lineno, "a second HELP for %s" % name, line)
                # the text after the name, one separator removed
                rest = stripped[1:].lstrip(" \t")[4:].lstrip(" \t")[len(name):]
                if rest[:1] in (" ", "\t"):
                    rest = rest[1:]
                f.help = _unescape_help(rest, lineno, line)
            else:
                if len(toks) != 3 or toks[2].strip() not in TYPES:
                    raise FormatError(lineno, "TYPE needs one of %s" % "/".join(TYPES), line)
                if f.type is not None:
                    raise FormatError(lineno, "a second TYPE for %s" % name, line)
                f.type = toks[2].strip()
            continue
        # a sample line
        m = METRIC_NAME.match(stripped)
        if not m:
            raise FormatError(lineno, "bad metric name", line)
        name = m.group(0)
        i = m.end()
        labels = {}
        if i < len(stripped) and stripped[i] == "{":
            labels, i = _parse_labels(stripped, i, lineno, line)
        rest = stripped[i:]
        if not rest or rest[0] not in " \t":
            raise FormatError(lineno, "a space and a value expected after the series", line)
        toks = rest.split()
        if len(toks) not in (1, 2):
            raise FormatError(lineno, "VALUE [TIMESTAMP] expected", line)
        try:
            value = parse_float(toks[0])
        except ValueError:
            raise FormatError(lineno, "bad value %r" % toks[0], line)
        ts = None
        if len(toks) == 2:
            if not TIMESTAMP.fullmatch(toks[1]):
                raise FormatError(lineno, "bad timestamp %r" % toks[1], line)
            ts = int(toks[1])
        fam_name = _family_of(name, fams)
        if fam_name in closed:
            raise FormatError(lineno, "a sample of %s after its group ended (a family must be "
                              "contiguous)" % fam_name, line)
        if current is not None and current != fam_name:
            closed.add(current)
        current = fam_name
        started.add(fam_name)
        f = fams.get(fam_name)
        if f is None:
            f = fams[fam_name] = Family(fam_name)
            expo.order.append(fam_name)
        s = Sample(name, labels, value, ts, lineno)
        k = s.key()
        if k in seen:
            raise FormatError(lineno, "series %s%s twice (first on line %d)"
                              % (name, fmt_labels(labels), seen[k]), line)
        seen[k] = lineno
        typ = f.type or "untyped"
        if typ == "histogram":
            if name == fam_name + "_bucket":
                if "le" not in labels:
                    raise FormatError(lineno, "a histogram bucket without le", line)
                try:
                    parse_float(labels["le"])
                except ValueError:
                    raise FormatError(lineno, "le=%r is not a float" % labels["le"], line)
            elif "le" in labels:
                raise FormatError(lineno, "le on %s (only on _bucket)" % name, line)
            if name == fam_name:
                raise FormatError(lineno, "histogram %s: a sample without _bucket/_sum/_count"
                                  % fam_name, line)
        elif typ == "summary":
            if name == fam_name and "quantile" not in labels:
                raise FormatError(lineno, "summary %s without quantile" % name, line)
        elif name != fam_name:
            raise FormatError(lineno, "%s in family %s" % (name, fam_name), line)
        if typ == "counter" and (math.isnan(value) or value < 0):
            raise FormatError(lineno, "counter %s is %r" % (name, value), line)
        f.samples.append(s)
        expo.samples.append(s)
    for f in fams.values():
        if f.type == "histogram":
            _check_histogram(f)
        elif f.type == "summary":
            _check_summary(f)
    return expo


def _group(f, suffix, drop):
    """{label set without DROP: [samples]} of the family's NAME+SUFFIX."""
    out = {}
    for s in f.samples:
        if s.name == f.name + suffix:
            k = tuple(sorted((a, b) for a, b in s.labels.items() if a != drop))
            out.setdefault(k, []).append(s)
    return out


def _check_histogram(f):
    buckets = _group(f, "_bucket", "le")
    sums = _group(f, "_sum", None)
    counts = _group(f, "_count", None)
    for k in set(buckets) | set(sums) | set(counts):
        where = "%s%s" % (f.name, fmt_labels(dict(k)))
        bs = buckets.get(k, [])
        if not bs:
            raise FormatError(0, "histogram %s: no buckets" % where)
        if k not in sums or k not in counts:
            raise FormatError(bs[0].lineno, "histogram %s: no %s" % (
                where, "_sum" if k not in sums else "_count"))
        prev_le, prev_v = -math.inf, -math.inf
        for s in bs:
            le = parse_float(s.labels["le"])
            if not le > prev_le:
                raise FormatError(s.lineno, "histogram %s: le %s not after %s" % (
                    where, s.labels["le"], prev_le))
            if math.isnan(s.value) or s.value < 0 or s.value != int(s.value):
                raise FormatError(s.lineno, "histogram %s: bucket count %r" % (where, s.value))
            if s.value < prev_v:
                raise FormatError(s.lineno, "histogram %s: bucket le=%s (%r) below the one "
                                  "before (%r): not cumulative" % (where, s.labels["le"],
                                                                   s.value, prev_v))
            prev_le, prev_v = le, s.value
        if prev_le != math.inf:
            raise FormatError(bs[-1].lineno, "histogram %s: the last bucket is le=%s, not +Inf"
                              % (where, bs[-1].labels["le"]))
        c = counts[k][0].value
        if c != prev_v:
            raise FormatError(counts[k][0].lineno, "histogram %s: _count %r != the +Inf "
                              "bucket %r" % (where, c, prev_v))


def _check_summary(f):
    q = _group(f, "", "quantile")
    sums = _group(f, "_sum", None)
    counts = _group(f, "_count", None)
    for k in set(q) | set(sums) | set(counts):
        if k not in sums or k not in counts:
            raise FormatError(0, "summary %s%s without _sum or _count" % (f.name,
                                                                          fmt_labels(dict(k))))


def histograms(expo, name, by=()):
    """{(label values of BY): (count, sum, {le: cumulative})} over the series
    of histogram NAME, summed over the labels not in BY."""
    out = {}
    for s in expo.samples:
        if s.name not in (name + "_bucket", name + "_sum", name + "_count"):
            continue
        k = tuple(s.labels.get(b) for b in by)
        c, t, b = out.get(k, (0, 0.0, {}))
        if s.name == name + "_count":
            c += s.value
        elif s.name == name + "_sum":
            t += s.value
        else:
            b[s.labels["le"]] = b.get(s.labels["le"], 0) + s.value
        out[k] = (c, t, b)
    return out


# ------------------------------------------------------------------ self-test

GOOD = [
    ("empty", ""),
    ("counter", "# HELP a_total The a.\n# TYPE a_total counter\na_total 3\n"),
    ("labels and escapes",
     '# TYPE x gauge\nx{a="b\\\\c",d="e\\"f",g="h\\ni"} 1.5e3\nx{a="z",} -Inf\n'),
    ("help escapes", "# HELP y line\\nnext \\\\ back\n# TYPE y untyped\ny NaN 1700000000000\n"),
    ("histogram",
     "# TYPE h histogram\n"
     'h_bucket{k="1",le="0.5"} 1\nh_bucket{k="1",le="1"} 2\nh_bucket{k="1",le="+Inf"} 2\n'
     'h_sum{k="1"} 1.25\nh_count{k="1"} 2\n'
     'h_bucket{k="2",le="0.5"} 0\nh_bucket{k="2",le="+Inf"} 0\nh_sum{k="2"} 0\nh_count{k="2"} 0\n'),
    ("summary", "# TYPE s summary\ns{quantile=\"0.5\"} 1\ns_sum 3\ns_count 2\n"),
    ("plain comment, no TYPE", "# just a comment\nfoo 1\n\nbar{x=\"y\"} 2\n"),
]

BAD = [
    ("no final newline", "# TYPE a gauge\na 1", "does not end"),
    ("CRLF", "# TYPE a gauge\r\na 1\r\n", "carriage return"),
    ("TYPE after sample", "a 1\n# TYPE a gauge\n", "after its first sample"),
    ("HELP after sample", "# TYPE a gauge\na 1\n# HELP a late\n", "after its first sample"),
    ("two TYPEs", "# TYPE a gauge\n# TYPE a gauge\na 1\n", "second TYPE"),
    ("two HELPs", "# HELP a x\n# HELP a y\na 1\n", "second HELP"),
    ("bad type", "# TYPE a meter\na 1\n", "TYPE needs"),
    ("family not contiguous", "# TYPE a gauge\na{x=\"1\"} 1\n# TYPE b gauge\nb 2\na{x=\"2\"} 3\n",
     "contiguous"),
    ("histogram not contiguous",
     "# TYPE h histogram\nh_bucket{le=\"+Inf\"} 1\nother 1\nh_sum 1\nh_count 1\n", "contiguous"),
    ("duplicate series", "a{x=\"1\"} 1\na{x=\"1\"} 2\n", "twice"),
    ("duplicate label", "a{x=\"1\",x=\"2\"} 1\n", "label x twice"),
    ("bad escape", "a{x=\"\\t\"} 1\n", "backslash"),
    ("raw quote", "a{x=\"a\"b\"} 1\n", "expected"),
    ("unterminated", "a{x=\"abc} 1\n", "unterminated"),
    ("bad label name", "a{1x=\"1\"} 1\n", "bad label name"),
    ("reserved label", "a{__x=\"1\"} 1\n", "reserved"),
    ("bad value", "a 1,5\n", "bad value"),
    ("no value", "a\n", "value expected"),
    ("bad timestamp", "a 1 1.5\n", "bad timestamp"),
    ("negative counter", "# TYPE c_total counter\nc_total -1\n", "counter"),
    ("bucket without le", "# TYPE h histogram\nh_bucket 1\nh_sum 1\nh_count 1\n", "without le"),
    ("not cumulative", "# TYPE h histogram\nh_bucket{le=\"1\"} 2\nh_bucket{le=\"+Inf\"} 1\n"
     "h_sum 1\nh_count 1\n", "not cumulative"),
    ("no +Inf", "# TYPE h histogram\nh_bucket{le=\"1\"} 1\nh_sum 1\nh_count 1\n", "not +Inf"),
    ("count != +Inf", "# TYPE h histogram\nh_bucket{le=\"+Inf\"} 2\nh_sum 1\nh_count 3\n",
     "_count"),
    ("le out of order", "# TYPE h histogram\nh_bucket{le=\"2\"} 0\nh_bucket{le=\"1\"} 0\n"
     "h_bucket{le=\"+Inf\"} 0\nh_sum 0\nh_count 0\n", "not after"),
    ("no _sum", "# TYPE h histogram\nh_bucket{le=\"+Inf\"} 0\nh_count 0\n", "no _sum"),
    ("help bad escape", "# HELP a x\\y\na 1\n", "backslash"),
    ("gauge with suffix sample", "# TYPE g gauge\ng_sum 1\n", None),
    ("not utf-8", b"a{x=\"\xff\"} 1\n", "UTF-8"),
]


def selftest():
    fails = 0
    for name, doc in GOOD:
        try:
            parse(doc)
            print("ok: good %s" % name)
        except FormatError as e:
            print("FAIL: good %s refused: %s" % (name, e))
            fails += 1
    for name, doc, want in BAD:
        try:
            e = parse(doc)
            # "gauge with suffix sample": g_sum is its own (untyped) family
            if want is None:
                print("ok: %s is read as its own family (%s)" % (name, e.order))
                continue
            print("FAIL: bad %s accepted" % name)
            fails += 1
        except FormatError as e:
            if want and want not in str(e):
                print("FAIL: bad %s refused for another reason: %s" % (name, e))
                fails += 1
            else:
                print("ok: bad %s refused: %s" % (name, e))
    # values read back
    e = parse(GOOD[2][1])
    v = e.find("x", a="b\\c")
    if not (len(v) == 1 and v[0].labels == {"a": "b\\c", "d": 'e"f', "g": "h\ni"}
            and v[0].value == 1500.0 and e.value("x", a="z") == -math.inf):
        print("FAIL: label values read back: %r" % v)
        fails += 1
    h = histograms(parse(GOOD[4][1]), "h", by=("k",))
    if h != {("1",): (2, 1.25, {"0.5": 1, "1": 2, "+Inf": 2}),
             ("2",): (0, 0.0, {"0.5": 0, "+Inf": 0})}:
        print("FAIL: histograms(): %r" % h)
        fails += 1
    print("%s: promtext self-test: %d good, %d bad documents, %d failures"
          % ("PASS" if not fails else "FAIL", len(GOOD), len(BAD), fails))
    return 1 if fails else 0


def main(argv):
    if argv[1:] == ["--selftest"]:
        return selftest()
    if len(argv) != 2:
        print(__doc__)
        return 2
    data = sys.stdin.buffer.read() if argv[1] == "-" else open(argv[1], "rb").read()
    try:
        e = parse(data)
    except FormatError as err:
        print("invalid: %s" % err)
        return 1
    for n in e.order:
        f = e.families[n]
        print("%s %s: %d samples" % (n, f.type or "untyped", len(f.samples)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
