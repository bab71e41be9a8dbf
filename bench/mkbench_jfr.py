#!/usr/bin/env python3
"""mkbench_jfr.py — a small one-chunk JFR recording for the sink benchmark
(bench/sink_kafka.py): one source per file without the ~100 KB of metadata
a JVM writes, so that 1,000 connected sources stay small.

    bench/mkbench_jfr.py OUT.jfr [--events N] [--pid PID]

The chunk holds a metadata record declaring jdk.JVMInformation and
bench.Sample (startTime, duration, seq, value, name, ok, bytes), a
checkpoint with a string pool, one jdk.JVMInformation event (pid PID, so
that the listener identifies the source and keys its Kafka messages by it)
and N bench.Sample events. Built with the encoders of test/mkjfr.py.
"""
import os
import struct
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "test"))
import mkjfr as M  # noqa: E402

M.T.update(JVMInformation=110, Sample=111)
START_NANOS = 1767323045678901234  # 2026-01-02T03:04:05.678901234Z


def _types():
    A = "java.lang.annotation.Annotation"
    E = "jdk.jfr.Event"
    T = M.T
    klass, field, ann = M.klass, M.field, M.ann
    classes = [
        klass("long", T["long"]), klass("int", T["int"]), klass("boolean", T["boolean"]),
        klass("double", T["double"]), klass("java.lang.String", T["String"]),
        klass("jdk.jfr.Label", T["Label"], A, fields=[field("value", "String")]),
        klass("jdk.jfr.Timestamp", T["Timestamp"], A, fields=[field("value", "String")]),
        klass("jdk.jfr.Timespan", T["Timespan"], A, fields=[field("value", "String")]),
        klass("jdk.jfr.DataAmount", T["DataAmount"], A, fields=[field("value", "String")]),
        klass("jdk.JVMInformation", T["JVMInformation"], E, fields=[
            M.std_start(), M.std_duration(),
            field("jvmName", "String"), field("jvmVersion", "String"),
            field("jvmArguments", "String"), field("jvmFlags", "String"),
            field("javaArguments", "String"),
            field("jvmStartTime", "long", anns=[ann("Timestamp", "MILLISECONDS_SINCE_EPOCH")]),
            field("pid", "long")],
            anns=[ann("Label", "JVM Information")]),
        klass("bench.Sample", T["Sample"], E, fields=[
            M.std_start(), M.std_duration(),
            field("seq", "long"), field("value", "double"), field("name", "String"),
            field("ok", "boolean"),
            field("bytes", "long", anns=[ann("DataAmount", "BYTES")])],
            anns=[ann("Label", "Benchmark sample")]),
    ]
    region = M.Element("region", [("locale", "en_US"), ("gmtOffset", "0"), ("dst", "0")])
    return M.Element("root", [], [M.Element("metadata", [], classes), region])


def build(events=500, pid=4242):
    """The recording's bytes."""
    M.type_system = lambda with_late: _types()
    t0 = M.START_TICKS0
    tick = M.TPS // 10000  # 0.1 ms
    recs = []
    recs.append(M.record(M.T["JVMInformation"], M.varint(t0) + M.varint(0)
                         + M.s_utf8("OpenJDK 64-Bit Server VM") + M.s_utf8("bench 1.0")
                         + M.s_utf8("-Xmx1g") + M.s_null()
                         + M.s_utf8("bench.Main --source %d" % pid)
                         + M.varint(START_NANOS // 1000000 - 1000) + M.varint(pid)))
    for i in range(events):
        name = M.s_pool(1 + i % 3) if i % 2 else M.s_utf8("sample %d" % i)
        recs.append(M.record(M.T["Sample"], M.varint(t0 + (i + 1) * tick) + M.varint(tick // 2)
                             + M.varint(i) + struct.pack(">d", i * 0.5) + name
                             + (b"\x01" if i % 3 else b"\x00") + M.varint(i * 1024)))
    recs.append(("cp", M.checkpoint_record(t0 + (events + 2) * tick, 0, 1, [
        (M.T["String"], [(1, M.s_utf8("alpha")), (2, M.s_utf8("beta")), (3, M.s_utf8("gamma"))])])))
    recs.append(("meta", M.metadata_record(t0 + (events + 3) * tick, 1, False, 3)))
    body, meta, cp = M.layout(recs)
    dur = (events + 4) * tick * 10 ** 9 // M.TPS
    h = M.header(len(body), cp, meta, START_NANOS, dur, t0, True)
    return bytes(h) + bytes(body[68:])


def main():
    args = sys.argv[1:]
    if not args or args[0].startswith("-"):
        sys.stderr.write("usage: mkbench_jfr.py OUT.jfr [--events N] [--pid PID]\n")
        return 2
    out = args[0]
    events = int(args[args.index("--events") + 1]) if "--events" in args else 500
    pid = int(args[args.index("--pid") + 1]) if "--pid" in args else 4242
    data = build(events, pid)
    with open(out, "wb") as f:
        f.write(data)
    print("mkbench_jfr: %s, %d bytes, %d events + jdk.JVMInformation" % (out, len(data), events))
    return 0


if __name__ == "__main__":
    sys.exit(main())
