/*
 * fuzz_live.c — libFuzzer target: live-stream framing.
 *
 * The first chunk header of the data is rewritten as a JDK live stream (JMX
 * RemoteRecordingStream, or a disk-repository chunk still being written)
 * sends it: size 68, constant-pool and metadata offsets 0, duration 0, state
 * byte 1. The parser then frames the chunk record by record and dispatches it
 * per flush segment (a checkpoint with the flush bit ends one; a checkpoint
 * carrying the chunk header with state 0 ends the chunk).
 *
 * The first 2 bytes choose the feeding; the rest is the data (from offset 2,
 * rewritten when it holds at least 68 bytes):
 *
 *   byte 0: low 2 bits: 0 fixed slices of 1 + (byte0 >> 2) * 37 bytes;
 *           1 pseudo-random slices of 1 .. 2^((byte0 >> 2) % 17) bytes;
 *           2 one byte per call; 3 the whole data in one call
 *   byte 1: low 4 bits: PAUSE every n-th callback (0: never); bit 4 ordered;
 *           bit 5 on_error returns STOP; bit 6 events not read
 *
 * Every callback reads what fuzz_whole reads, and the transcript must equal
 * that of the same data in one call without pauses.
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#include "fuzz_common.h"

#define PREFIX 2

static void put_be64(uint8_t *p, uint64_t v) {
    for (int i = 7; i >= 0; i--) {
        p[i] = (uint8_t)v;
        v >>= 8;
    }
}

static uint64_t next_rnd(uint64_t *s) {
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 2685821657736338717ULL;
}

static jfr_parser *make(uint8_t flags, fuzz_alloc *a, fuzz_run *r, size_t len, bool ref) {
    jfr_options o;
    fuzz_options(&o, a, len);
    o.ordered = flags & 16;
    jfr_callbacks cb;
    fuzz_callbacks(&cb);
    fuzz_run_init(r);
    r->read_values = !(flags & 64);
    r->on_error_ret = (flags & 32) ? JFR_CB_STOP : JFR_CB_CONTINUE;
    r->pause_every = ref ? 0 : (flags & 15);
    jfr_parser *p = jfr_parser_new(&o, &cb, r);
    if (!p)
        fuzz_die("jfr_parser_new failed");
    return p;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < PREFIX)
        return 0;
    uint8_t mode = data[0], flags = data[1];
    size_t len = size - PREFIX;
    uint8_t *in = malloc(len ? len : 1);
    if (!in)
        return 0;
    memcpy(in, data + PREFIX, len);
    if (len >= 68) {
        put_be64(in + 8, 68); /* size: just the header so far */
        put_be64(in + 16, 0); /* constant pool offset */
        put_be64(in + 24, 0); /* metadata offset */
        put_be64(in + 40, 0); /* duration */
        in[64] = 1;           /* state: being written */
    }

    fuzz_alloc ra, sa;
    fuzz_run rr, sr;
    jfr_parser *p = make(flags, &ra, &rr, len, true);
    (void)jfr_parser_feed(p, in, len);
    jfr_status ref_fin = fuzz_finish(p);
    jfr_parser_free(p);
    fuzz_check_freed(&ra);

    p = make(flags, &sa, &sr, len, false);
    uint64_t rng = (uint64_t)mode * 0x9E3779B97F4A7C15ULL + 1;
    size_t pos = 0;
    while (pos < len) {
        size_t n;
        switch (mode & 3) {
        case 0: n = 1 + (size_t)(mode >> 2) * 37; break;
        case 1: n = 1 + (size_t)(next_rnd(&rng) % ((uint64_t)1 << ((mode >> 2) % 17))); break;
        case 2: n = 1; break;
        default: n = len; break;
        }
        if (n > len - pos)
            n = len - pos;
        jfr_status s = fuzz_feed_all(p, in + pos, n);
        pos += n;
        if (s != JFR_OK)
            break;
    }
    jfr_status fin = fuzz_finish(p);
    if (fin != ref_fin)
        fuzz_die("finish: %s sliced, %s in one call", jfr_status_name(fin),
                 jfr_status_name(ref_fin));
    if (sr.w.hash != rr.w.hash)
        fuzz_die("live transcript differs from the one-call transcript (mode %u, flags %u)",
                 (unsigned)mode, (unsigned)flags);
    jfr_parser_free(p);
    fuzz_check_freed(&sa);
    free(in);
    return 0;
}
