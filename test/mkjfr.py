#!/usr/bin/env python3
"""mkjfr.py — write a small synthetic JFR file (python3, stdlib only).

    python3 test/mkjfr.py [--format-1.0] OUT.jfr

The file is valid for the JDK's `jfr` tool (which gives the expected outputs),
but is laid out the way other writers (async-profiler, streaming JDKs) or odd
corners of the format do it, none of which test/java/Workload.java can force:

  chunk 0
    * an event before any metadata or checkpoint record;
    * two metadata records: the second (the one the header points to) adds
      the type synth.Late, and a synth.Late event sits between the two;
    * checkpoint A: threads, thread groups (with a parent cycle), strings,
      symbols; checkpoint B (at the end, linked to A by its delta): stack
      traces, methods, classes, more strings, a key of A repeated (same
      value, other encoding), two pools of the same type in one checkpoint;
    * forward references (events before the pools they use), a dangling key
      and an undefined key 0 (both print as null), and a pool that defines
      key 0 (HotSpot's static pools do: frame type 0 is "Interpreted");
    * strings in every encoding in event fields: null, empty, pooled, UTF-8
      (incl. 4-byte sequences), UTF-16 char arrays (incl. lone surrogates and
      control characters), Latin-1 (bytes >= 0x80);
    * integers narrowed by declared width (short/int stored zero-extended,
      negative longs in 9 bytes), @Unsigned, padded varints (4, 5 and 8 bytes)
      for record sizes and values, float/double edge values;
    * inline structs, arrays of primitives / strings / structs, simpleType
      values (flattened). (Not arrays of pooled structs: the JDK's reader
      throws a ClassCastException on them.)
    * ticks per second 2400000007 (not 1e9), region gmtOffset -03:30, metadata
      string table in UTF-8;
  chunk 1
    * its own pools (a key known only in chunk 0 is dangling here), a time base
      that differs from chunk 0 by 137 ns (jfr converts with chunk 0's base),
      metadata string table as UTF-16 char arrays, its metadata record last.

--format-1.0 writes the same chunks with the headers of a JDK 9 or 10 writer:
version 1.0, and no final-chunk flag (bytes 64..67 = 00 00 00 01). The JDK
reads it as the 2.1 file (same events, same metadata); only `jfr summary`
differs (its Version line, and com.oracle.jdk.* names for records 0 and 1).
"""

import struct
import sys

TPS = 2400000007
GMT_OFFSET_MS = -12600000  # -03:30
# chunk 0 starts 2026-01-02T03:04:05.678901234Z
START_NANOS0 = 1767323045678901234
START_TICKS0 = 123456789012


# ------------------------------------------------------------------ encoding

def varint(v):
    """JFR varint of a 64-bit pattern (negative numbers: two's complement)."""
    v &= (1 << 64) - 1
    out = bytearray()
    for _ in range(8):
        if v < 0x80:
            out.append(v)
            return bytes(out)
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v & 0xFF)  # 9th byte: all 8 bits
    return bytes(out)


def padded(v, width):
    """Non-minimal varint of exactly `width` bytes (width <= 8)."""
    assert 0 <= v < (1 << (7 * width))
    out = bytearray()
    for i in range(width):
        b = (v >> (7 * i)) & 0x7F
        out.append(b | (0x80 if i < width - 1 else 0))
    return bytes(out)


def s_null():
    return b"\x00"


def s_empty():
    return b"\x01"


def s_pool(key):
    return b"\x02" + varint(key)


def s_utf8(text):
    b = text.encode("utf-8")
    return b"\x03" + varint(len(b)) + b


def s_chars(units):
    """UTF-16 char array; `units` is a str (may hold lone surrogates) or a list."""
    if isinstance(units, str):
        units = utf16_units(units)
    out = bytearray(b"\x04" + varint(len(units)))
    for u in units:
        out += varint(u)
    return bytes(out)


def s_latin1(text):
    b = text.encode("latin-1")
    return b"\x05" + varint(len(b)) + b


def utf16_units(text):
    units = []
    for c in text:
        o = ord(c)
        if o >= 0x10000:
            o -= 0x10000
            units += [0xD800 + (o >> 10), 0xDC00 + (o & 0x3FF)]
        else:
            units.append(o)
    return units


def record(type_id, payload, size_width=None):
    """size (minimal, or padded to size_width bytes) + type id + payload."""
    body = varint(type_id) + payload
    if size_width:
        return padded(size_width + len(body), size_width) + body
    for w in range(1, 10):
        total = w + len(body)
        if len(varint(total)) == w:
            return varint(total) + body
    raise ValueError("record too large")


def f32(x):
    return struct.pack(">f", x)


def f64(x):
    return struct.pack(">d", x)


# ------------------------------------------------------------------ metadata

T = dict(
    long=20, int=21, short=22, byte=23, char=24, boolean=25, float=26, double=27,
    String=28, Thread=30, ThreadGroup=31, Class=32, Symbol=33, StackTrace=34,
    StackFrame=35, Method=36, FrameType=37, Point=38,
    Label=200, Timestamp=201, Timespan=202, Unsigned=203, Description=204,
    DataAmount=205, Category=206,
    Strings=100, Numbers=101, Structs=102, Late=103,
)


class Element:
    def __init__(self, name, attrs=None, children=None):
        self.name = name
        self.attrs = attrs or []
        self.children = children or []


def ann(type_name, value=None, values=None):
    attrs = [("class", str(T[type_name]))]
    if value is not None:
        attrs.append(("value", value))
    for i, v in enumerate(values or []):
        attrs.append(("value-%d" % i, v))
    return Element("annotation", attrs)


def field(name, type_name, array=False, pool=False, anns=()):
    attrs = [("name", name), ("class", str(T[type_name]))]
    if array:
        attrs.append(("dimension", "1"))
    if pool:
        attrs.append(("constantPool", "true"))
    return Element("field", attrs, list(anns))


def klass(name, tid, super_type=None, simple=False, fields=(), anns=()):
    attrs = [("name", name), ("id", str(tid))]
    if super_type:
        attrs.append(("superType", super_type))
    if simple:
        attrs.append(("simpleType", "true"))
    return Element("class", attrs, list(fields) + list(anns))


def std_start():
    return field("startTime", "long", anns=[ann("Label", "Start Time"), ann("Timestamp", "TICKS")])


def std_duration():
    return field("duration", "long", anns=[ann("Label", "Duration"), ann("Timespan", "TICKS")])


def type_system(with_late):
    A = "java.lang.annotation.Annotation"
    E = "jdk.jfr.Event"
    classes = [
        klass("long", T["long"]), klass("int", T["int"]), klass("short", T["short"]),
        klass("byte", T["byte"]), klass("char", T["char"]), klass("boolean", T["boolean"]),
        klass("float", T["float"]), klass("double", T["double"]),
        klass("java.lang.String", T["String"]),
        klass("jdk.jfr.Label", T["Label"], A, fields=[field("value", "String")]),
        klass("jdk.jfr.Description", T["Description"], A, fields=[field("value", "String")]),
        klass("jdk.jfr.Timestamp", T["Timestamp"], A, fields=[field("value", "String")]),
        klass("jdk.jfr.Timespan", T["Timespan"], A, fields=[field("value", "String")]),
        klass("jdk.jfr.DataAmount", T["DataAmount"], A, fields=[field("value", "String")]),
        klass("jdk.jfr.Unsigned", T["Unsigned"], A),
        klass("jdk.jfr.Category", T["Category"], A, fields=[field("value", "String", array=True)]),
        klass("java.lang.Thread", T["Thread"], fields=[
            field("osName", "String"), field("osThreadId", "long"),
            field("javaName", "String"), field("javaThreadId", "long"),
            field("group", "ThreadGroup", pool=True)]),
        klass("jdk.types.ThreadGroup", T["ThreadGroup"], fields=[
            field("parent", "ThreadGroup", pool=True), field("name", "String")]),
        klass("jdk.types.Symbol", T["Symbol"], simple=True, fields=[field("string", "String")]),
        klass("java.lang.Class", T["Class"], fields=[
            field("name", "Symbol", pool=True), field("modifiers", "int")]),
        klass("jdk.types.Method", T["Method"], fields=[
            field("type", "Class", pool=True), field("name", "Symbol", pool=True),
            field("descriptor", "Symbol", pool=True), field("modifiers", "int"),
            field("hidden", "boolean")]),
        klass("jdk.types.FrameType", T["FrameType"], simple=True,
              fields=[field("description", "String")]),
        klass("jdk.types.StackFrame", T["StackFrame"], fields=[
            field("method", "Method", pool=True), field("lineNumber", "int"),
            field("bytecodeIndex", "int"), field("type", "FrameType", pool=True)]),
        klass("jdk.types.StackTrace", T["StackTrace"], fields=[
            field("truncated", "boolean"), field("frames", "StackFrame", array=True)]),
        klass("synth.Point", T["Point"], fields=[
            field("x", "int"), field("y", "int"), field("label", "String")]),
        klass("synth.Strings", T["Strings"], E, fields=[
            std_start(), std_duration(),
            field("eventThread", "Thread", pool=True, anns=[ann("Label", "Event Thread")]),
            field("stackTrace", "StackTrace", pool=True, anns=[ann("Label", "Stack Trace")]),
            field("case", "String"), field("s", "String", anns=[ann("Label", "Value")]),
            field("t", "String"), field("n", "int")],
            anns=[ann("Label", "Synthetic Strings"), ann("Category", values=["Synthetic", "Strings"])]),
        klass("synth.Numbers", T["Numbers"], E, fields=[
            std_start(),
            field("b", "byte"), field("ub", "byte", anns=[ann("Unsigned")]),
            field("s", "short"), field("us", "short", anns=[ann("Unsigned")]),
            field("i", "int"), field("ui", "int", anns=[ann("Unsigned")]),
            field("l", "long"), field("ul", "long", anns=[ann("Unsigned")]),
            field("f", "float"), field("d", "double"), field("c", "char"), field("z", "boolean"),
            field("ms", "long", anns=[ann("Timestamp", "MILLISECONDS_SINCE_EPOCH")]),
            field("span", "long", anns=[ann("Timespan", "NANOSECONDS")]),
            field("spanTicks", "long", anns=[ann("Timespan", "TICKS")]),
            field("ticks", "long", anns=[ann("Timestamp", "TICKS")]),
            field("bytes", "long", anns=[ann("DataAmount", "BYTES")])],
            anns=[ann("Label", "Synthetic Numbers"),
                  ann("Description", "Integers of every width, floats, units")]),
        klass("synth.Structs", T["Structs"], E, fields=[
            std_start(), std_duration(),
            field("thread", "Thread", pool=True), field("group", "ThreadGroup", pool=True),
            field("where", "Point"), field("points", "Point", array=True),
            field("payload", "byte", array=True), field("names", "String", array=True),
            field("sym", "Symbol", pool=True), field("frame", "StackFrame"),
            field("stackTrace", "StackTrace", pool=True)]),
    ]
    if with_late:
        classes.append(klass("synth.Late", T["Late"], E, fields=[
            std_start(), field("note", "String"), field("value", "long")],
            anns=[ann("Label", "Declared by the second metadata record")]))
    region = Element("region", [("locale", "en_US"), ("gmtOffset", str(GMT_OFFSET_MS)), ("dst", "0")])
    return Element("root", [], [Element("metadata", [], classes), region])


def metadata_record(start_ticks, metadata_id, with_late, string_enc):
    table = []
    index = {}

    def sid(s):
        if s not in index:
            index[s] = len(table)
            table.append(s)
        return index[s]

    def walk(e):
        sid(e.name)
        for k, v in e.attrs:
            sid(k)
            sid(v)
        for c in e.children:
            walk(c)

    root = type_system(with_late)
    walk(root)

    def emit(e):
        out = bytearray(varint(sid(e.name)) + varint(len(e.attrs)))
        for k, v in e.attrs:
            out += varint(sid(k)) + varint(sid(v))
        out += varint(len(e.children))
        for c in e.children:
            out += emit(c)
        return bytes(out)

    payload = bytearray(varint(start_ticks) + varint(0) + varint(metadata_id) + varint(len(table)))
    for s in table:
        payload += s_utf8(s) if string_enc == 3 else s_chars(utf16_units(s))
    payload += emit(root)
    return record(0, bytes(payload), size_width=4)


def checkpoint_record(start_ticks, delta, ctype, pools, size_width=None, count_width=None):
    """pools: list of (type id, [(key, value bytes), ...])."""
    payload = bytearray(varint(start_ticks) + varint(0) + varint(delta) + varint(ctype) + varint(len(pools)))
    for tid, entries in pools:
        payload += varint(tid)
        payload += padded(len(entries), count_width) if count_width else varint(len(entries))
        for key, value in entries:
            payload += varint(key) + value
    return record(1, bytes(payload), size_width=size_width)


# -------------------------------------------------------------------- values

def thread(os_name, os_id, java_name, java_id, group_key):
    return os_name + varint(os_id) + java_name + varint(java_id) + varint(group_key)


def frame(method_key, line, bci, type_key):
    return varint(method_key) + varint(line & 0xFFFFFFFF) + varint(bci & 0xFFFFFFFF) + varint(type_key)


def stacktrace(truncated, frames):
    return bytes([1 if truncated else 0]) + varint(len(frames)) + b"".join(frames)


def point(x, y, label):
    return varint(x & 0xFFFFFFFF) + varint(y & 0xFFFFFFFF) + label


def ev_strings(ticks, dur, thread_key, st_key, case, s, t, n):
    return record(T["Strings"], varint(ticks) + varint(dur) + varint(thread_key) + varint(st_key)
                  + s_utf8(case) + s + t + varint(n & 0xFFFFFFFF))


def ev_numbers(ticks, b, s, i, l, f, d, c, z, ms, span, span_ticks, ts_ticks, nbytes, size_width=None,
               pad_long=None):
    lv = padded(l, pad_long) if pad_long else varint(l)
    payload = (varint(ticks)
               + struct.pack(">b", b) + struct.pack(">b", b)
               + varint(s & 0xFFFF) + varint(s & 0xFFFF)
               + varint(i & 0xFFFFFFFF) + varint(i & 0xFFFFFFFF)
               + lv + varint(l)
               + f32(f) + f64(d) + varint(c) + bytes([z])
               + varint(ms) + varint(span) + varint(span_ticks) + varint(ts_ticks) + varint(nbytes))
    return record(T["Numbers"], payload, size_width=size_width)


def ev_structs(ticks, dur, thread_key, group_key, where, points, payload, names, sym_key,
               frm, st_key):
    body = (varint(ticks) + varint(dur) + varint(thread_key) + varint(group_key) + where
            + varint(len(points)) + b"".join(points)
            + varint(len(payload)) + bytes(payload)
            + varint(len(names)) + b"".join(names)
            + varint(sym_key) + frm + varint(st_key))
    return record(T["Structs"], body)


def ev_late(ticks, note, value):
    return record(T["Late"], varint(ticks) + note + varint(value))


# --------------------------------------------------------------------- chunks

def header(size, cp, meta, start_nanos, duration_nanos, start_ticks, final, v1=False):
    # flags: 1 = compressed integers, 2 = final chunk (not written before 2.x)
    return (b"FLR\x00" + struct.pack(">HH", *((1, 0) if v1 else (2, 1)))
            + struct.pack(">qqqqqqq", size, cp, meta, start_nanos, duration_nanos, start_ticks, TPS)
            + bytes([0, 0]) + struct.pack(">H", 3 if final and not v1 else 1))


def chunk0():
    t0 = START_TICKS0
    tick = TPS // 1000  # ~1 ms
    recs = []  # (kind, bytes); offsets fixed up at the end

    # an event before any metadata or checkpoint: every reference is forward
    recs.append(ev_strings(t0 + 5 * tick, 3 * tick, 2, 1, "first record of the chunk",
                           s_pool(1), s_utf8("utf-8 caf\u00e9 \u20ac \U0001F600"), 1))
    recs.append(("meta", metadata_record(t0, 1, False, 3)))
    # strings in every encoding
    cases = [
        ("null", s_null(), s_empty(), 0),
        ("empty", s_empty(), s_null(), 0),
        ("pooled", s_pool(1), s_pool(2), 2),
        ("pooled key 0 is null", s_pool(0), s_pool(999), 0),
        ("utf-8", s_utf8("h\u00e9llo \u4e2d\u6587 \U0001F600 \U00010348"), s_utf8("ascii"), 5),
        ("utf-8 controls", s_utf8("tab\tnl\ncr\r nul\x00 del\x7f \"q\" back\\ /"), s_utf8(""), 6),
        ("char array", s_chars("plain chars"), s_chars(utf16_units("\U0001F600 pair")), 7),
        ("char array lone surrogates", s_chars([0x61, 0xD800, 0x62, 0xDC00, 0xDFFF, 0xD83D]),
         s_chars([0xFFFF, 0xFFFE, 0xFEFF, 0x0, 0x1F, 0x7F, 0x80, 0x9F]), 8),
        ("latin-1", s_latin1("caf\u00e9 \u00ff\u00a0\u00bf \u0080\u0085"), s_latin1("ascii in latin-1"), 9),
        ("latin-1 controls", s_latin1("\x01\x02\x1b[0m\x7f"), s_utf8("x" * 300), 10),
    ]
    for k, (case, s, t, n) in enumerate(cases):
        # end times out of order on purpose (jfr sorts by end time, stably)
        start = t0 + (20 + (k * 7) % 11) * tick
        recs.append(ev_strings(start, (k % 3) * tick, 1 + k % 3, 1 + k % 2, case, s, t, n))

    # numbers: narrowing, unsigned, extremes, padded encodings
    L = 1 << 64
    num_cases = [
        (0, 0, 0, 0, 0.0, 0.0, 0x41, 0, 0, 0, 0, 0),
        (-1, -1, -1, -1, -0.0, -0.0, 0xE9, 1, -1, -1, -1, 1),
        (-128, -32768, -2147483648, -(1 << 63), float("inf"), float("-inf"), 0xD800, 1,
         -(1 << 63), -(1 << 63), -(1 << 63), -(1 << 63)),
        (127, 32767, 2147483647, (1 << 63) - 1, float("nan"), float("nan"), 0xFFFF, 0,
         (1 << 63) - 1, (1 << 63) - 1, (1 << 63) - 1, (1 << 63) - 1),
        (-2, -264, -65536, -1234567890123, 1.4e-45, 4.9e-324, 0x20AC, 7,
         1767323045678, 1500, 2400000007, 2 ** 40),
        (100, 300, 70000, 1 << 56, 3.4028234663852886e38, 1.7976931348623157e308, 0x22, 1,
         -62135596800000, 86400 * 10 ** 9, TPS * 3600, 1023),
        (5, 5, 5, 5, 0.1, 0.1, 0x5C, 0, 253402300799999, 999, 1, 1 << 62),
    ]
    for k, (b, s, i, l, f, d, c, z, ms, span, sticks, nbytes) in enumerate(num_cases):
        ticks_val = t0 + 40 * tick + k if k != 2 else -(1 << 63)
        recs.append(ev_numbers(t0 + (30 + k) * tick, b, s, i, l & (L - 1), f, d, c, z,
                               ms & (L - 1), span & (L - 1), sticks & (L - 1),
                               ticks_val & (L - 1), nbytes & (L - 1),
                               size_width=(4, 5, 8, None)[k % 4],
                               pad_long=8 if (k == 0 or k == 6) else None))

    # checkpoint A: threads, groups (with a cycle), strings, symbols, frame types
    cp_a = checkpoint_record(t0 + 50 * tick, 0, 0, [
        (T["String"], [(1, s_chars("pooled string number one")),
                       (2, s_utf8("pooled \u00e9\u00e8 two")),
                       (3, s_latin1("defined twice"))]),
        # 3 <-> 4 is a cycle nobody references (a reader that resolves
        # eagerly must still terminate); 5 is its own parent (printed: null)
        (T["ThreadGroup"], [(1, varint(0) + s_utf8("system")),
                            (2, varint(1) + s_utf8("main")),
                            (3, varint(4) + s_utf8("cycle-a")),
                            (4, varint(3) + s_utf8("cycle-b")),
                            (5, varint(5) + s_utf8("self-parent"))]),
        (T["Thread"], [(1, thread(s_utf8("main"), 101, s_utf8("main"), 1, 2)),
                       (2, thread(s_utf8("w\u00f6rker"), 102, s_chars("w\u00f6rker \U0001F600"), 22, 2)),
                       (3, thread(s_null(), 0, s_latin1("caf\u00e9"), 33, 0)),
                       (4, thread(s_utf8("looped"), 104, s_utf8("looped"), 44, 5))]),
        (T["Symbol"], [(1, s_utf8("java/lang/Object")), (2, s_utf8("run")),
                       (3, s_utf8("()V")), (4, s_utf8("sym\u00e9")), (5, s_utf8("main")),
                       (6, s_utf8("([Ljava/lang/String;)V"))]),
        # key 0 is a real entry here, as in HotSpot's static pools (frame
        # types, flag origins, GC causes): only an undefined key 0 is null
        (T["FrameType"], [(0, s_utf8("Native (key 0)")), (1, s_utf8("Interpreted")),
                          (2, s_utf8("JIT compiled")), (3, s_utf8("Inlined"))]),
    ], size_width=8, count_width=4)
    recs.append(("cp", cp_a))

    # an event of the type only the second metadata record declares
    recs.append(ev_late(t0 + 55 * tick, s_utf8("late type, early event"), -7))

    # structs: inline, arrays, pool arrays, dangling keys, the group cycle
    pts = [point(1, -1, s_utf8("one")), point(-2147483648, 2147483647, s_null()),
           point(0, 0, s_pool(2))]
    recs.append(ev_structs(t0 + 60 * tick, tick, 1, 2, point(3, 4, s_chars("inline")), pts,
                           [0, 1, 127, 128, 255], [s_utf8("a"), s_null(), s_pool(3), s_empty()],
                           4, frame(1, 42, 7, 2), 2))
    recs.append(ev_structs(t0 + 61 * tick, 0, 99, 5, point(0, 0, s_empty()), [], [], [],
                           0, frame(99, -1, 0, 0), 0))
    recs.append(ev_structs(t0 + 62 * tick, 2 * tick, 4, 0, point(-5, 5, s_latin1("\u00e9")),
                           [point(i, i * i, s_utf8(str(i))) for i in range(20)],
                           list(range(256)), [s_utf8("x%d" % i) for i in range(30)],
                           6, frame(2, 0, 65535, 3), 3))

    recs.append(("meta", metadata_record(t0 + 70 * tick, 2, True, 3)))
    recs.append(ev_late(t0 + 71 * tick, s_chars("after the second metadata"), 1 << 40))

    # checkpoint B: stack traces, methods, classes; String key 3 repeated;
    # two Symbol pools in one checkpoint
    frames_long = [frame(1 + j % 3, 10 + j, j, 1 + j % 3) for j in range(70)]
    cp_b_pools = [
        # key 3 again, same value (as HotSpot repeats keys). With different
        # values the JDK keeps the first one in file order (it reads the
        # checkpoints backwards from the header's), a parser in file order
        # the last: not a thing to test against the JDK.
        (T["String"], [(3, s_utf8("defined twice"))]),
        (T["Symbol"], [(7, s_utf8("com/example/Main"))]),
        (T["Class"], [(1, varint(1) + varint(1)), (2, varint(7) + varint(0x411))]),
        (T["Method"], [(1, varint(1) + varint(2) + varint(3) + varint(1) + b"\x00"),
                       (2, varint(2) + varint(5) + varint(6) + varint(9) + b"\x01"),
                       (3, varint(77) + varint(4) + varint(0) + varint(0) + b"\x00")]),
        (T["StackTrace"], [(1, stacktrace(False, [frame(1, 10, 0, 1), frame(2, 20, 3, 2)])),
                           (2, stacktrace(True, frames_long)),
                           (3, stacktrace(False, [])),
                           (4, stacktrace(False, [frame(3, -1, -1, 9)]))]),
        (T["Symbol"], [(8, s_chars("second Symbol pool of the checkpoint"))]),
    ]
    recs.append(("cpB", cp_b_pools))
    return recs, t0


def layout(recs, first_cp_kind="cp"):
    """Lay out records after a header; fix checkpoint deltas; return bytes + offsets."""
    out = bytearray(68)
    meta_off = 0
    cp_offs = []
    for r in recs:
        if isinstance(r, tuple):
            kind, data = r
            if kind == "cpB":
                prev = cp_offs[-1]
                here = len(out)
                data = checkpoint_record(0, prev - here, 1, data, size_width=4)
                kind = "cp"
            if kind == "meta":
                meta_off = len(out)
            elif kind == "cp":
                cp_offs.append(len(out))
            out += data
        else:
            out += r
    return out, meta_off, cp_offs[-1] if cp_offs else 0


def chunk1(start_ticks, start_nanos):
    # Keys differ from chunk 0's: the JDK reuses a previous chunk's resolved
    # constant when a key is declared again (HotSpot keeps keys stable across
    # chunks), which is not something a parser should imitate.
    t0 = start_ticks
    tick = TPS // 1000
    recs = []
    recs.append(ev_strings(t0 + 2 * tick, tick, 101, 101, "chunk 1: key 2 of chunk 0 is dangling here",
                           s_pool(101), s_pool(2), 2))
    recs.append(ev_strings(t0 + 1 * tick, 0, 105, 0, "chunk 1: earlier end time, later in file",
                           s_chars("\u00e9t\u00e9"), s_latin1("\u00e0 bient\u00f4t"), 3))
    recs.append(ev_numbers(t0 + 3 * tick, 1, 2, 3, 4, 0.5, 0.25, 0x4E2D, 1, 0, 1, 1, t0, 5))
    recs.append(ev_late(t0 + 4 * tick, s_utf8("chunk 1"), 0))
    recs.append(("cp", checkpoint_record(t0 + 5 * tick, 0, 1, [
        (T["String"], [(101, s_utf8("chunk 1 pool"))]),
        (T["ThreadGroup"], [(101, varint(0) + s_utf8("system"))]),
        (T["Thread"], [(101, thread(s_utf8("main"), 101, s_utf8("main"), 1, 101)),
                       (105, thread(s_utf8("new in chunk 1"), 105, s_utf8("new"), 55, 7))]),
        (T["Symbol"], [(101, s_utf8("Chunk1")), (102, s_utf8("<clinit>"))]),
        (T["FrameType"], [(101, s_utf8("Native"))]),
        (T["Class"], [(101, varint(101) + varint(0))]),
        (T["Method"], [(101, varint(101) + varint(102) + varint(102) + varint(8) + b"\x00")]),
        (T["StackTrace"], [(101, stacktrace(False, [frame(101, 1, 1, 101), frame(3, 2, 2, 1)]))]),
    ])))
    recs.append(("meta", metadata_record(t0 + 6 * tick, 2, True, 4)))
    return recs


def build(v1=False):
    recs0, t0 = chunk0()
    body0, meta0, cp0 = layout(recs0)
    dur0 = 250 * 1000 * 1000  # 250 ms
    h0 = header(len(body0), cp0, meta0, START_NANOS0, dur0, t0, False, v1)
    c0 = bytes(h0) + bytes(body0[68:])

    # chunk 1 starts when chunk 0 ends; its own (start nanos, start ticks)
    # pair is 137 ns off chunk 0's conversion, as real clocks drift
    t1 = t0 + dur0 * TPS // 10 ** 9
    n1 = START_NANOS0 + dur0 + 137
    body1, meta1, cp1 = layout(chunk1(t1, n1))
    h1 = header(len(body1), cp1, meta1, n1, 10 * 1000 * 1000, t1, True, v1)
    c1 = bytes(h1) + bytes(body1[68:])
    return c0 + c1


def main():
    args = sys.argv[1:]
    v1 = args[:1] == ["--format-1.0"]
    if v1:
        args = args[1:]
    if len(args) != 1:
        sys.stderr.write("usage: mkjfr.py [--format-1.0] OUT.jfr\n")
        return 2
    data = build(v1)
    with open(args[0], "wb") as f:
        f.write(data)
    print("mkjfr: %s, %d bytes" % (args[0], len(data)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
