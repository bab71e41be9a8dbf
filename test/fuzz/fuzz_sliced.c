/*
 * fuzz_sliced.c — libFuzzer target: the input fed in slices, with pauses.
 *
 * The first 4 bytes choose how; the rest is the JFR data:
 *
 *   byte 0, low 2 bits: 0 fixed slices of 1 + byte1 + 256 * (byte0 >> 2) bytes;
 *                       1 pseudo-random slices (seed byte 1) of 1 .. 2^k bytes,
 *                         k = (byte0 >> 2) % 17;
 *                       2 one byte per call;
 *                       3 one chunk per call (jfr_chunk_size_at), the rest
 *                         whole
 *   byte 2: low 7 bits: a callback returns PAUSE every Nth callback (0:
 *           never); the rest of the slice is fed again after JFR_PAUSED
 *           (consumed()); bit 7 jfr_options.resync
 *   byte 3: bit 0 ordered, bit 1 jdk_time_base, bit 2 on_error returns STOP
 *           (else CONTINUE), bit 3 events not read (only the event view),
 *           bit 4 allocation failure at allocation 1 + (byte1 ^ byte2),
 *           bit 5 an empty feed between slices,
 *           bits 6-7 jfr_parser_set_threads: 1 + (bits % 3): 1, 2, 3 (whole
 *           chunks within a slice are then prepared on helper threads,
 *           lib/parallel.c; the allocator is then called under a lock)
 *
 * The invariant checked (abort on mismatch): the transcript of callbacks,
 * with every value read, is identical to that of the same options with the
 * data in one call, no pauses and one thread. With an allocation failure only
 * the clean failure is checked (no crash, no leak).
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#include "fuzz_common.h"

#include <pthread.h>

#define PREFIX 4

typedef struct plan {
    int mode;
    size_t fixed;
    unsigned k;
    uint64_t rng;
    uint64_t pause_every;
    bool ordered, jdk_tb, stop_on_error, no_values, nomem, empty_feeds, resync;
    size_t fail_at;
    unsigned threads;
} plan;

/* helper threads allocate too: the counting allocator under a lock */
static pthread_mutex_t alloc_lock = PTHREAD_MUTEX_INITIALIZER;

static uint64_t next_rnd(uint64_t *s) {
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 2685821657736338717ULL;
}

static jfr_parser *make(const plan *pl, fuzz_alloc *a, fuzz_run *r, size_t len, bool ref) {
    jfr_options o;
    fuzz_options(&o, a, len);
    o.ordered = pl->ordered;
    o.jdk_time_base = pl->jdk_tb;
    o.resync = pl->resync;
    if (!ref && pl->nomem)
        a->fail_at = pl->fail_at;
    if (!ref && pl->threads > 1)
        a->lock = &alloc_lock;
    jfr_callbacks cb;
    fuzz_callbacks(&cb);
    fuzz_run_init(r);
    r->read_values = !pl->no_values;
    r->on_error_ret = pl->stop_on_error ? JFR_CB_STOP : JFR_CB_CONTINUE;
    r->pause_every = ref ? 0 : pl->pause_every;
    jfr_parser *p = jfr_parser_new(&o, &cb, r);
    if (!ref && pl->threads > 1)
        jfr_parser_set_threads(p, pl->threads);
    return p;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < PREFIX)
        return 0;
    plan pl;
    memset(&pl, 0, sizeof pl);
    pl.mode = data[0] & 3;
    pl.fixed = 1 + data[1] + 256 * (size_t)(data[0] >> 2);
    pl.k = (unsigned)(data[0] >> 2) % 17;
    pl.rng = data[1] * 0x9E3779B97F4A7C15ULL + 1;
    pl.pause_every = data[2] & 0x7f;
    pl.ordered = data[3] & 1;
    pl.jdk_tb = data[3] & 2;
    pl.stop_on_error = data[3] & 4;
    pl.no_values = data[3] & 8;
    pl.nomem = data[3] & 16;
    pl.empty_feeds = data[3] & 32;
    pl.resync = data[2] & 0x80;
    pl.fail_at = 1 + (size_t)(data[1] ^ data[2]);
    pl.threads = 1 + (unsigned)(data[3] >> 6) % 3;
    const uint8_t *in = data + PREFIX;
    size_t len = size - PREFIX;

    /* the reference: one call, no pauses */
    fuzz_alloc ra;
    fuzz_run rr;
    uint64_t ref_hash = 0;
    jfr_status ref_feed = JFR_OK, ref_fin = JFR_OK;
    if (!pl.nomem) {
        jfr_parser *p = make(&pl, &ra, &rr, len, true);
        if (!p)
            fuzz_die("jfr_parser_new failed");
        ref_feed = jfr_parser_feed(p, in, len);
        ref_fin = fuzz_finish(p);
        ref_hash = rr.hash;
        jfr_parser_free(p);
        fuzz_check_freed(&ra);
    }

    /* sliced, paused */
    fuzz_alloc sa;
    fuzz_run sr;
    jfr_parser *p = make(&pl, &sa, &sr, len, false);
    if (!p) {
        if (!pl.nomem)
            fuzz_die("jfr_parser_new failed");
        fuzz_check_freed(&sa);
        return 0;
    }
    size_t pos = 0;
    jfr_status s = JFR_OK;
    while (pos < len) {
        size_t n;
        switch (pl.mode) {
        case 0: n = pl.fixed; break;
        case 1: n = 1 + (size_t)(next_rnd(&pl.rng) % ((uint64_t)1 << pl.k)); break;
        case 2: n = 1; break;
        default: {
            uint64_t c = jfr_chunk_size_at(in + pos, len - pos);
            n = c ? (size_t)(c < len - pos ? c : len - pos) : len - pos;
            break;
        }
        }
        if (n > len - pos)
            n = len - pos;
        s = fuzz_feed_all(p, in + pos, n);
        pos += n;
        if (s != JFR_OK)
            break;
        if (pl.empty_feeds && (s = fuzz_feed_all(p, in + pos, 0)) != JFR_OK)
            break;
    }
    jfr_status fin = fuzz_finish(p);
    if (!pl.nomem) {
        /* a feed status is seen at another call when sliced: finish decides */
        (void)ref_feed;
        if (fin != ref_fin)
            fuzz_die("finish: %s sliced, %s in one call", jfr_status_name(fin),
                     jfr_status_name(ref_fin));
        if (sr.hash != ref_hash)
            fuzz_die("transcript differs from the one-call transcript (mode %d, pause every "
                     "%llu, %u threads)",
                     pl.mode, (unsigned long long)pl.pause_every, pl.threads);
    }
    jfr_parser_free(p);
    fuzz_check_freed(&sa);
    return 0;
}
