#!/usr/bin/env python3
"""mkseeds.py — (re)make the seed inputs of the fuzz corpora from the test
fixtures (python3, stdlib only):

    python3 test/fuzz/mkseeds.py          # writes test/fuzz/corpus/*/seed-*

Seeds (a few hundred KB in all; regress-* files are never touched):
  synthetic        test/data/synthetic.jfr (two chunks, every encoding)
  synthetic-c0/c1  its chunks alone
  workload-small   test/data/workload.jfr (412 KB, one chunk) cut down to one
                   valid chunk: its last metadata record (first), every checkpoint,
                   and the first two events of each event type (~170 KB)
  *-head           prefixes (a chunk cut short: truncation paths)
fuzz_sliced seeds carry a 4-byte prefix and fuzz_live seeds a 2-byte prefix
(the feeding plan, see the targets); workload.jfr's last
checkpoint carries the final chunk header (state 0): it ends a live chunk.; fuzz_whole and fuzz_json take raw data.
"""

import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "data")


def varint(b, p):
    v = 0
    for i in range(9):
        x = b[p + i]
        if i == 8:
            return v | x << 56, p + 9
        v |= (x & 0x7F) << (7 * i)
        if not x & 0x80:
            return v, p + i + 1
    raise ValueError


def chunks(d):
    off = 0
    while off + 68 <= len(d):
        size = struct.unpack(">q", d[off + 8:off + 16])[0]
        yield d[off:off + size]
        off += size


def small_workload(d):
    """One chunk: header, records kept in file order, header fixed up."""
    assert d[66:68] == b"\x00\x03" or d[67] & 1, "expects varint records"
    pos, kept, seen, last_meta = 68, [], {}, None
    while pos < len(d):
        size, q = varint(d, pos)
        typ, _ = varint(d, q)
        rec = d[pos:pos + size]
        if typ == 0:
            last_meta = rec  # the last one: every type of the recording
        elif typ == 1:
            kept.append((1, rec))
        else:
            seen[typ] = seen.get(typ, 0) + 1
            if seen[typ] <= 2:
                kept.append((typ, rec))
        pos += size
    kept.insert(0, (0, last_meta))
    out = bytearray(d[:68])
    meta_off = cp_off = 0
    for typ, rec in kept:
        if typ == 0:
            meta_off = len(out)
        elif typ == 1:
            cp_off = len(out)
        out += rec
    out[8:16] = struct.pack(">q", len(out))
    out[16:24] = struct.pack(">q", cp_off)
    out[24:32] = struct.pack(">q", meta_off)
    return bytes(out)


def main():
    syn = open(os.path.join(DATA, "synthetic.jfr"), "rb").read()
    wl = open(os.path.join(DATA, "workload.jfr"), "rb").read()
    c = list(chunks(syn))
    small = small_workload(wl)
    raw = {
        "seed-synthetic": syn,
        "seed-synthetic-c0": c[0],
        "seed-synthetic-c1": c[1],
        "seed-workload-small": small,
        "seed-synthetic-head": syn[:3000],
    }
    # fuzz_sliced: [mode/size, size/seed, pause every, flags] + data
    sliced = {
        "seed-synthetic-fixed7": bytes([0, 6, 0, 0]) + syn,
        "seed-synthetic-bytewise-pause3": bytes([2, 0, 3, 1]) + syn,
        "seed-synthetic-random-pause5": bytes([1 | 12 << 2, 7, 5, 2]) + syn,
        "seed-synthetic-chunks-stop": bytes([3, 0, 0, 4]) + syn,
        "seed-synthetic-nomem": bytes([1 | 8 << 2, 1, 40, 16]) + c[1],
        "seed-workload-small-random": bytes([1 | 14 << 2, 3, 97, 3]) + small,
        "seed-synthetic-head": bytes([0, 100, 0, 32]) + syn[:3000],
        # byte 3 bits 6-7: 2 and 3 threads (whole chunks within a slice)
        "seed-synthetic-whole-2threads": bytes([63 << 2, 255, 0, 1 | 1 << 6]) + syn,
        "seed-synthetic-pause5-3threads": bytes([63 << 2, 255, 5, 1 | 2 << 6]) + syn,
        "seed-synthetic-nomem-2threads": bytes([63 << 2, 255, 60, 16 | 1 << 6]) + syn,
    }
    # fuzz_live: [mode, flags] + data (the header is rewritten as live)
    live = {
        "seed-synthetic-c0-whole": bytes([3, 0]) + c[0],
        "seed-synthetic-c0-slices": bytes([0 | 20 << 2, 3]) + c[0],
        "seed-synthetic-c1-bytes": bytes([2, 16]) + c[1],
        "seed-synthetic-random": bytes([1 | 10 << 2, 7]) + syn,
        "seed-workload-small": bytes([1 | 16 << 2, 0]) + small,
        "seed-workload-small-twice": bytes([0 | 60 << 2, 5]) + small + small,
    }
    for target, seeds in (("fuzz_whole", raw), ("fuzz_json", raw),
                          ("fuzz_sliced", sliced), ("fuzz_live", live)):
        d = os.path.join(HERE, "corpus", target)
        os.makedirs(d, exist_ok=True)
        for name in os.listdir(d):
            if name.startswith("seed-"):
                os.remove(os.path.join(d, name))
        for name, data in seeds.items():
            with open(os.path.join(d, name), "wb") as f:
                f.write(data)
    print("mkseeds: written under", os.path.join(HERE, "corpus"))


if __name__ == "__main__":
    main()
