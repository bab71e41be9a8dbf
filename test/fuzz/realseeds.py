#!/usr/bin/env python3
"""realseeds.py — seed candidates cut from real recordings (python3, stdlib).

    python3 test/fuzz/realseeds.py OUTDIR FILE_OR_DIR...

Reads every *.jfr and *.jfr.gz given (directories are searched), and writes
OUTDIR/<target>/real-<recording>-<what> for the four fuzz targets. The
candidates are small (at most BUDGET bytes of JFR each) and valid:

  c0       the first chunk, reduced: its last metadata record (moved first),
           its checkpoints with at most K entries per pool (K as large as
           fits the budget: events then meet resolved and dangling keys),
           and the first two events of each event type
  c0c1     the first two chunks, each reduced so (multi-chunk files: another
           writer, another metadata, the metadata cache)
  head     the reduced first chunk cut in the middle (truncation paths)

fuzz_sliced candidates carry a 4-byte feeding prefix and fuzz_live ones a
2-byte prefix (see those targets); the prefixes vary with the recording so
that the corpus covers several feeding plans. The candidates are not the
corpus: test/fuzz/merge-corpus.sh keeps only those that add coverage
(libFuzzer -merge=1). Value layouts are decoded from each chunk's own
metadata (compressed integers, the six string encodings), so any writer's
recording is cut at record and pool-entry boundaries.
"""

import gzip
import hashlib
import os
import re
import struct
import sys

BUDGET = 24 * 1024     # a candidate's size, when the chunk allows
HARD_BUDGET = 190000   # else up to this (run-fuzz.sh's -max_len is 200000)


class Cur:
    def __init__(self, b, p=0):
        self.b, self.p = b, p

    def varint(self):
        v = 0
        for i in range(9):
            x = self.b[self.p]
            self.p += 1
            if i == 8:
                return v | x << 56
            v |= (x & 0x7F) << (7 * i)
            if not x & 0x80:
                return v
        raise ValueError

    def string(self):
        enc = self.b[self.p]
        self.p += 1
        if enc in (0, 1):
            return ""
        if enc == 2:
            self.varint()
            return ""
        n = self.varint()
        if enc in (3, 5):
            s = bytes(self.b[self.p:self.p + n])
            self.p += n
            return s.decode("utf-8" if enc == 3 else "latin-1", "replace")
        if enc == 4:
            return "".join(chr(self.varint() & 0xFFFF) for _ in range(n))
        raise ValueError("string encoding %d" % enc)


def records(chunk):
    """(offset, size, type) of each record after the 68-byte header."""
    pos = 68
    while pos < len(chunk):
        c = Cur(chunk, pos)
        size = c.varint()
        typ = c.varint()
        if size <= 0 or pos + size > len(chunk):
            return
        yield pos, size, typ
        pos += size


def metadata_tree(rec):
    """(start, duration, metadata id, root element) of a metadata record;
    an element is (name, [(key, value)], [children])."""
    c = Cur(rec)
    c.varint(), c.varint()
    start, dur, mid = c.varint(), c.varint(), c.varint()
    strings = [c.string() for _ in range(c.varint())]

    def element():
        name = strings[c.varint()]
        attrs = [(strings[c.varint()], strings[c.varint()]) for _ in range(c.varint())]
        kids = [element() for _ in range(c.varint())]
        return name, attrs, kids

    return start, dur, mid, element()


def classes(root):
    """Every class element of the tree."""
    name, _, kids = root
    if name == "class":
        yield root
    for k in kids:
        yield from classes(k)


def metadata_types(root):
    """type id -> (name, [(field type id, array, pooled)])."""
    types = {}
    for _, attrs, kids in classes(root):
        a = dict(attrs)
        fields = [(int(dict(fa)["class"]), dict(fa).get("dimension") == "1",
                   "constantPool" in dict(fa)) for n, fa, _ in kids if n == "field"]
        types[int(a["id"])] = (a["name"], fields)
    return types


def type_refs(el):
    """Type ids an element names: its fields', settings' and annotations'."""
    name, attrs, kids = el
    a = dict(attrs)
    if name in ("field", "setting", "annotation") and "class" in a:
        yield int(a["class"])
    for k in kids:
        yield from type_refs(k)


def reachable(root, wanted):
    by_id = {int(dict(c[1])["id"]): c for c in classes(root)}
    seen, todo = set(), list(wanted)
    while todo:
        t = todo.pop()
        if t in seen or t not in by_id:
            continue
        seen.add(t)
        todo.extend(type_refs(by_id[t]))
    return seen


def metadata_record(start, dur, mid, root, keep):
    """The metadata record with only the classes in `keep`, its string
    table rebuilt (UTF-8)."""
    strings, index = [], {}

    def sid(s):
        if s not in index:
            index[s] = len(strings)
            strings.append(s)
        return enc_varint(index[s])

    def element(el):
        name, attrs, kids = el
        kids = [k for k in kids if k[0] != "class" or int(dict(k[1])["id"]) in keep]
        out = sid(name) + enc_varint(len(attrs))
        for k, v in attrs:
            out += sid(k) + sid(v)
        out += enc_varint(len(kids))
        for k in kids:
            out += element(k)
        return out

    tree = element(root)
    body = enc_varint(start) + enc_varint(dur) + enc_varint(mid) + enc_varint(len(strings))
    for s in strings:
        b = s.encode("utf-8", "surrogatepass")
        body += b"\x03" + enc_varint(len(b)) + b
    return record(0, body + tree)


FIXED = {"boolean": 1, "byte": 1, "float": 4, "double": 8}
VARINT = {"char", "short", "int", "long"}


def skip_value(c, types, tid, depth=0):
    if depth > 64:
        raise ValueError("nested too deep")
    name, fields = types[tid]
    if name in FIXED:
        c.p += FIXED[name]
    elif name in VARINT:
        c.varint()
    elif name == "java.lang.String":
        c.string()
    else:
        for ftid, array, pooled in fields:
            for _ in range(c.varint() if array else 1):
                if pooled:
                    c.varint()
                else:
                    skip_value(c, types, ftid, depth + 1)


def trim_checkpoint(rec, types, keep):
    """The checkpoint with at most `keep` entries per pool (None: whole)."""
    c = Cur(rec)
    c.varint(), c.varint()
    body_start = c.p
    c.varint(), c.varint(), c.varint()  # start, duration, delta
    ctype = c.varint()
    head = bytes(rec[body_start:c.p])
    npools = c.varint()
    pools = []
    for _ in range(npools):
        tid = c.varint()
        count = c.varint()
        entries = []
        for _ in range(count):
            start = c.p
            c.varint()
            skip_value(c, types, tid)
            entries.append(bytes(rec[start:c.p]))
        if keep is not None:
            entries = entries[:keep]
        pools.append((tid, entries))
    return ctype, head, pools


def enc_varint(v):
    """JFR's varint: 7 bits a byte, the 9th byte whole (64 bits in all)."""
    v &= 0xFFFFFFFFFFFFFFFF
    out = bytearray()
    for _ in range(8):
        if v < 0x80:
            out.append(v)
            return bytes(out)
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def record(typ, body):
    payload = enc_varint(typ) + body
    n = len(payload) + 1
    while len(enc_varint(n)) + len(payload) != n:
        n += 1
    return enc_varint(n) + payload


def checkpoint_bytes(head, pools, delta):
    """A checkpoint record from its parts, with the given delta."""
    c = Cur(head)
    start, dur = c.varint(), c.varint()
    c.varint()  # the old delta
    ctype = head[c.p:]
    body = enc_varint(start) + enc_varint(dur) + enc_varint(delta) + ctype
    body += enc_varint(len(pools))
    for tid, entries in pools:
        body += enc_varint(tid) + enc_varint(len(entries)) + b"".join(entries)
    return record(1, body)


def reduce_chunk(chunk, keep, per_type=2):
    """One valid chunk: the last metadata record first, reduced to the
    types the kept events and pools need; the checkpoints with at most
    `keep` entries per pool; a few events per type; in file order; the
    header's size and offsets fixed."""
    recs = list(records(chunk))
    metas = [(o, s) for o, s, t in recs if t == 0]
    if not metas:
        return None
    mo, ms = metas[-1]
    start, dur, mid, root = metadata_tree(chunk[mo:mo + ms])
    types = metadata_types(root)
    seen, body, wanted = {}, [], set()
    for o, s, t in recs:
        rec = chunk[o:o + s]
        if t == 0:
            continue
        if t == 1:
            _, head, pools = trim_checkpoint(rec, types, keep)
            body.append((1, head, pools))
        else:
            seen[t] = seen.get(t, 0) + 1
            if seen[t] <= per_type:
                body.append((t, bytes(rec), None))
                wanted.add(t)
    # pools of the chunk header (live framing) and those the events reach
    wanted |= {t for t, (n, _) in types.items() if n == "jdk.types.ChunkHeader"}
    keep_types = reachable(root, wanted)
    out = bytearray(chunk[:68])
    meta_off = len(out)
    out += metadata_record(start, dur, mid, root, keep_types)
    last_cp = 0
    for t, rec, pools in body:
        if t != 1:
            out += rec
            continue
        pools = [p for p in pools if p[0] in keep_types]
        here = len(out)
        out += checkpoint_bytes(rec, pools, (last_cp - here) if last_cp else 0)
        last_cp = here
    out[8:16] = struct.pack(">q", len(out))
    out[16:24] = struct.pack(">q", last_cp)
    out[24:32] = struct.pack(">q", meta_off)
    return bytes(out)


def small_chunk(chunk, budget):
    """The largest reduction that fits the budget, else the smallest one
    that fits HARD_BUDGET (JDK 21+ metadata alone is ~100 KB)."""
    tries = [(keep, 2) for keep in (None, 400, 100, 30, 10, 3, 1, 0)] + [(0, 1)]
    smallest = None
    for keep, per_type in tries:
        try:
            r = reduce_chunk(chunk, keep, per_type)
        except (ValueError, KeyError, IndexError):
            return None
        if r is None:
            return None
        if len(r) <= budget:
            return r
        if smallest is None or len(r) < len(smallest):
            smallest = r
    return smallest if len(smallest) <= HARD_BUDGET else None


def chunks(d):
    off = 0
    while off + 68 <= len(d) and d[off:off + 4] == b"FLR\0":
        size = struct.unpack(">q", d[off + 8:off + 16])[0]
        if size < 68 or off + size > len(d):
            return
        yield d[off:off + size]
        off += size


def inputs(paths):
    for p in paths:
        if os.path.isdir(p):
            for root, _, files in sorted(os.walk(p)):
                for f in sorted(files):
                    if f.endswith((".jfr", ".jfr.gz")):
                        yield os.path.join(root, f)
        else:
            yield p


def main():
    if len(sys.argv) < 3:
        sys.exit("usage: realseeds.py OUTDIR FILE_OR_DIR...")
    out = sys.argv[1]
    made = 0
    for path in inputs(sys.argv[2:]):
        data = open(path, "rb").read()
        if data[:2] == b"\x1f\x8b":
            data = gzip.decompress(data)
        name = re.sub(r"[^A-Za-z0-9]+", "-", os.path.basename(path).split(".jfr")[0])[:40]
        cs = list(chunks(data))
        if not cs:
            print("realseeds: %s: no chunk, skipped" % path, file=sys.stderr)
            continue
        c0 = small_chunk(cs[0], BUDGET)
        if c0 is None:
            print("realseeds: %s: first chunk not reducible, skipped" % path, file=sys.stderr)
            continue
        cands = {"c0": c0, "head": c0[:len(c0) // 2]}
        if len(cs) > 1:
            c1 = small_chunk(cs[1], BUDGET // 2)
            c0h = small_chunk(cs[0], BUDGET // 2)
            if c1 and c0h and len(c0h) + len(c1) <= HARD_BUDGET:
                cands["c0c1"] = c0h + c1
        # feeding prefixes vary with the recording (see the targets' headers)
        h = hashlib.sha1(name.encode()).digest()
        sliced = bytes([(h[0] & 0xFC) | 1, h[1], h[2] & 0x0F, h[3] & 0x4B])
        live = bytes([(h[4] & 0xFC) | (h[5] & 1), h[6] & 0x1F])
        for target, prefix in (("fuzz_whole", b""), ("fuzz_json", b""),
                               ("fuzz_sliced", sliced), ("fuzz_live", live)):
            d = os.path.join(out, target)
            os.makedirs(d, exist_ok=True)
            for what, b in cands.items():
                if target == "fuzz_live" and what == "c0c1":
                    continue
                with open(os.path.join(d, "real-%s-%s" % (name, what)), "wb") as f:
                    f.write(prefix + b)
                made += 1
        print("realseeds: %-40s %d chunk(s); c0 %6d of %8d bytes" % (name, len(cs), len(c0), len(cs[0])))
    print("realseeds: %d candidates under %s" % (made, out))


if __name__ == "__main__":
    main()
