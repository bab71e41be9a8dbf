#!/usr/bin/env python3
"""sink_otlp_check.py — decode OTLP logs JSON (ExportLogsServiceRequest) against
the OTLP schema in test/sink/otlp/ (.proto files written for the tests).

As a module (test/sink/sink_kafka_otlp.py):

    import sink_otlp_check as O
    O.reexec_for_protobuf()          # first thing in main(): see below
    schema = O.Schema()              # raises O.Missing(reason) -> SKIP
    reqs = schema.check(texts)       # [ExportLogsServiceRequest], or raises O.Invalid
    O.attrs(req.resource_logs[0].resource.attributes)   # {key: python value}

As a program:

    test/sink/sink_otlp_check.py [FILE|-]...   one JSON message per line (or one
                                          whole message per FILE with --whole)
    test/sink/sink_otlp_check.py --selftest    a valid message decodes (its values
                                          read back), each broken one is refused

check() does, for each message:
  * the OTLP/JSON rules that the proto3 JSON mapping alone does not enforce:
    every object key is lowerCamelCase (no snake_case field name), enum
    values (severityNumber) are integers, traceId/spanId are hex strings;
  * google.protobuf.json_format.Parse(text, ExportLogsServiceRequest,
    ignore_unknown_fields=False): an unknown or misspelt field, a wrong type,
    a non-decimal 64-bit integer all fail;
  * the message is encoded to the binary protobuf form and decoded again,
    and the two must be equal.
It returns the decoded messages, so that a test asserts attributes,
timeUnixNano, body.

The schema is compiled with protoc --python_out into a temporary folder (the
python protobuf runtime of the same release line as protoc: Debian's
protobuf-compiler and python3-protobuf, 3.21).

Exit status of the program: 0 all valid, 1 one invalid, 77 skip (no protoc
or no python protobuf).
"""
import base64
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True  # no __pycache__ in the source tree

HERE = os.path.dirname(os.path.abspath(__file__))
PROTO_ROOT = os.path.join(HERE, "otlp")
PROTOS = [
    "opentelemetry/proto/common/v1/common.proto",
    "opentelemetry/proto/resource/v1/resource.proto",
    "opentelemetry/proto/logs/v1/logs.proto",
    "opentelemetry/proto/collector/logs/v1/logs_service.proto",
]
SKIP = 77


class Missing(Exception):
    """protoc or the python protobuf runtime is missing: the test SKIPs."""


class Invalid(Exception):
    """A message that is not a valid OTLP logs JSON document."""


def have_protobuf():
    try:
        import google.protobuf  # noqa: F401
        return True
    except ImportError:
        return False


def reexec_for_protobuf():
    """When this python has no protobuf module (a pyenv or venv python on a
    machine where Debian's python3-protobuf is installed for /usr/bin/python3),
    run the calling script again under a python that has it. Returns when
    there is none: Schema() then raises Missing."""
    if have_protobuf() or os.environ.get("OTLP_CHECK_REEXEC"):
        return
    for cand in ("/usr/bin/python3", "/usr/local/bin/python3"):
        if not os.access(cand, os.X_OK) or os.path.realpath(cand) == os.path.realpath(sys.executable):
            continue
        r = subprocess.run([cand, "-c", "import google.protobuf"], capture_output=True)
        if r.returncode == 0:
            os.environ["OTLP_CHECK_REEXEC"] = "1"
            sys.stdout.flush()
            sys.stderr.flush()
            os.execv(cand, [cand] + sys.argv)


def _walk_rules(node, path, errors):
    """The OTLP/JSON rules beyond the proto3 JSON mapping."""
    if isinstance(node, dict):
        for k, v in node.items():
            p = path + "." + k
            if "_" in k:
                errors.append("%s: snake_case key (OTLP/JSON keys are lowerCamelCase)" % p)
            if k == "severityNumber" and not isinstance(v, int):
                errors.append("%s: enum value %r is not an integer" % (p, v))
            if k in ("traceId", "spanId") and isinstance(v, str):
                want = 32 if k == "traceId" else 16
                try:
                    bytes.fromhex(v)
                    ok = len(v) in (0, want)
                except ValueError:
                    ok = False
                if not ok:
                    errors.append("%s: %r is not %d hex digits" % (p, v, want))
            _walk_rules(v, p, errors)
    elif isinstance(node, list):
        for i, v in enumerate(node):
            _walk_rules(v, "%s[%d]" % (path, i), errors)


def _lone_surrogates(node):
    """(node with every lone UTF-16 surrogate replaced by U+FFFD, how many).
    json.loads joins a valid \\uD83D\\uDE00 pair into one character and
    leaves a lone \\uD83D as a surrogate code point, which no protobuf string
    (valid UTF-8) can hold."""
    if isinstance(node, str):
        n = sum(1 for c in node if 0xD800 <= ord(c) <= 0xDFFF)
        if n:
            node = "".join("\ufffd" if 0xD800 <= ord(c) <= 0xDFFF else c for c in node)
        return node, n
    if isinstance(node, dict):
        total = 0
        out = {}
        for k, v in node.items():
            out[k], n = _lone_surrogates(v)
            total += n
        return out, total
    if isinstance(node, list):
        total = 0
        out = []
        for v in node:
            v, n = _lone_surrogates(v)
            out.append(v)
            total += n
        return out, total
    return node, 0


def _hex_ids_to_base64(node):
    """OTLP/JSON carries traceId/spanId as hex; the proto3 JSON mapping of
    bytes is base64: convert before json_format.Parse."""
    if isinstance(node, dict):
        for k, v in list(node.items()):
            if k in ("traceId", "spanId") and isinstance(v, str):
                node[k] = base64.b64encode(bytes.fromhex(v)).decode()
            else:
                _hex_ids_to_base64(v)
    elif isinstance(node, list):
        for v in node:
            _hex_ids_to_base64(v)


class Schema:
    """The compiled OTLP logs schema."""

    def __init__(self, protoc=None):
        protoc = protoc or shutil.which("protoc")
        if not protoc:
            raise Missing("no protoc (Debian package protobuf-compiler)")
        if not have_protobuf():
            raise Missing("no python protobuf module for %s (Debian package python3-protobuf)"
                          % sys.executable)
        self.dir = tempfile.mkdtemp(prefix="otlp-py-")
        r = subprocess.run([protoc, "-I", PROTO_ROOT, "--python_out=" + self.dir] + PROTOS,
                           capture_output=True, text=True, timeout=60)
        if r.returncode != 0:
            shutil.rmtree(self.dir, ignore_errors=True)
            raise Invalid("protoc failed on test/sink/otlp: " + r.stderr.strip())
        sys.path.insert(0, self.dir)
        try:
            from google.protobuf import json_format
            from opentelemetry.proto.collector.logs.v1 import logs_service_pb2
            from opentelemetry.proto.logs.v1 import logs_pb2
        except Exception as e:  # an old runtime refusing the generated code
            raise Missing("python protobuf cannot load protoc's output: %s" % e)
        finally:
            sys.path.remove(self.dir)
            shutil.rmtree(self.dir, ignore_errors=True)
        self.json_format = json_format
        self.Request = logs_service_pb2.ExportLogsServiceRequest
        self.logs_pb2 = logs_pb2

    def check_one(self, text, where="message", surrogates=None):
        """One ExportLogsServiceRequest JSON document -> the decoded message.
        A string with a lone UTF-16 surrogate (\\uD83D alone) is refused,
        unless `surrogates` is a list: then each is read as U+FFFD (what Go's
        JSON decoders, the OpenTelemetry Collector's among them, do) and the
        count is appended to the list."""
        if isinstance(text, bytes):
            text = text.decode("utf-8")
        try:
            doc = json.loads(text)
        except ValueError as e:
            raise Invalid("%s: not JSON: %s" % (where, e))
        if not isinstance(doc, dict):
            raise Invalid("%s: not a JSON object" % where)
        doc, lone = _lone_surrogates(doc)
        if lone:
            if surrogates is None:
                raise Invalid("%s: %d lone UTF-16 surrogate(s) in strings (\\uD800-\\uDFFF "
                              "without its pair: not valid UTF-8, no protobuf string holds it)"
                              % (where, lone))
            surrogates.append(lone)
        errors = []
        _walk_rules(doc, "", errors)
        if errors:
            raise Invalid("%s: %s" % (where, "; ".join(errors[:5])))
        _hex_ids_to_base64(doc)
        msg = self.Request()
        try:
            self.json_format.Parse(json.dumps(doc), msg, ignore_unknown_fields=False)
        except self.json_format.ParseError as e:
            raise Invalid("%s: does not decode as ExportLogsServiceRequest: %s" % (where, e))
        wire = msg.SerializeToString()
        again = self.Request()
        again.ParseFromString(wire)
        if again != msg or again.SerializeToString() != wire:
            raise Invalid("%s: binary round trip differs" % where)
        return again

    def check(self, texts, surrogates=None):
        """Many messages -> [decoded messages]; raises Invalid at the first bad one."""
        return [self.check_one(t, "message %d" % i, surrogates) for i, t in enumerate(texts)]


def value(av):
    """An AnyValue -> a python value (int for intValue, dict for kvlist, ...)."""
    kind = av.WhichOneof("value")
    if kind is None:
        return None
    if kind == "array_value":
        return [value(v) for v in av.array_value.values]
    if kind == "kvlist_value":
        return attrs(av.kvlist_value.values)
    return getattr(av, kind)


def attrs(kvs):
    """repeated KeyValue -> {key: python value}; a repeated key is an error."""
    out = {}
    for kv in kvs:
        if kv.key in out:
            raise Invalid("attribute %r repeated" % kv.key)
        out[kv.key] = value(kv.value)
    return out


GOOD = ('{"resourceLogs":[{"resource":{"attributes":['
        '{"key":"service.name","value":{"stringValue":"app"}},'
        '{"key":"process.pid","value":{"intValue":"14951"}}]},'
        '"scopeLogs":[{"scope":{"name":"jfrstream"},"logRecords":[{'
        '"timeUnixNano":"1700000000000000001","eventName":"jdk.CPULoad","severityNumber":9,'
        '"traceId":"0102030405060708090a0b0c0d0e0f10","spanId":"0102030405060708",'
        '"body":{"kvlistValue":{"values":[{"key":"machineTotal","value":{"doubleValue":0.5}},'
        '{"key":"list","value":{"arrayValue":{"values":[{"intValue":3},{"boolValue":true}]}}},'
        '{"key":"emoji","value":{"stringValue":"\\ud83d\\ude00 \\u2615"}}]}},'
        '"attributes":[{"key":"event.name","value":{"stringValue":"jdk.CPULoad"}}]}]}]}]}')
BAD = [
    ('snake_case key', '{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"time_unix_nano":"1"}]}]}]}'),
    ('enum by name', '{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"severityNumber":"SEVERITY_NUMBER_INFO"}]}]}]}'),
    ('unknown field', '{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"timeUnixNano":"1","name":"x"}]}]}]}'),
    ('traceId in base64', '{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"traceId":"AQIDBAUGBwgJCgsMDQ4PEA=="}]}]}]}'),
    ('timestamp not an integer', '{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"timeUnixNano":"1.5e3x"}]}]}]}'),
    ('two values in a oneof', '{"resourceLogs":[{"resource":{"attributes":[{"key":"k","value":'
     '{"stringValue":"a","intValue":"1"}}]}}]}'),
    ('lone surrogate', '{"resourceLogs":[{"resource":{"attributes":[{"key":"k","value":'
     '{"stringValue":"\\ud83d"}}]}}]}'),
    ('not a request', '[1,2]'),
]


def selftest(schema):
    fails = []
    req = schema.check_one(GOOD, "good")
    rl = req.resource_logs[0]
    rec = rl.scope_logs[0].log_records[0]
    got = (attrs(rl.resource.attributes), rec.time_unix_nano, rec.event_name, rec.severity_number,
           rec.trace_id.hex(), value(rec.body), attrs(rec.attributes))
    want = ({"service.name": "app", "process.pid": 14951}, 1700000000000000001, "jdk.CPULoad", 9,
            "0102030405060708090a0b0c0d0e0f10",
            {"machineTotal": 0.5, "list": [3, True], "emoji": "\U0001F600 \u2615"},
            {"event.name": "jdk.CPULoad"})
    if got != want:
        fails.append("good message read back as %r, expected %r" % (got, want))
    for what, text in BAD:
        try:
            schema.check_one(text, what)
            fails.append("%s: accepted" % what)
        except Invalid as e:
            print("  refused as expected: %s" % e, flush=True)
    if fails:
        print("FAIL: otlp-check-selftest: " + "; ".join(fails), flush=True)
        return 1
    print("PASS: otlp-check-selftest: the schema compiles; 1 valid message decoded with its values, "
          "%d invalid ones refused" % len(BAD), flush=True)
    return 0


def main(argv):
    reexec_for_protobuf()
    whole = "--whole" in argv
    files = [a for a in argv if not a.startswith("--")] or ["-"]
    try:
        schema = Schema()
    except Missing as e:
        print("SKIP: otlp-check: %s" % e, flush=True)
        return SKIP
    if "--selftest" in argv:
        return selftest(schema)
    texts = []
    for f in files:
        data = sys.stdin.read() if f == "-" else open(f, encoding="utf-8").read()
        if whole:
            texts.append(data)
        else:
            texts.extend(l for l in data.splitlines() if l.strip())
    try:
        reqs = schema.check(texts)
    except Invalid as e:
        print("FAIL: otlp-check: %s" % e, flush=True)
        return 1
    records = sum(len(sl.log_records) for r in reqs for rl in r.resource_logs for sl in rl.scope_logs)
    print("PASS: otlp-check: %d messages, %d log records" % (len(reqs), records), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
