/*
 * fuzz_whole.c — libFuzzer target: the whole input in one jfr_parser_feed
 * call (finished chunks are parsed in place), every callback set, every
 * field of every event read (jfr_iter, random access, helpers), then
 * jfr_parser_finish. max_chunk_size is 1 MiB and the allocator is capped and
 * checked (sizes, leaks). on_error returns CONTINUE, so damaged chunks are
 * skipped and the next ones are parsed; again after jfr_parser_reset, and
 * with every chunk prepared into a jfr_share first (same transcript); then
 * once more with jfr_options.resync (scanning for the next magic after an
 * error); then through the chunk writer (jfr_writer_*), every other event
 * dropped: the written chunks re-parse to the events kept of the chunks
 * that were written (type names and record bytes, in order).
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#include "fuzz_common.h"

/* ------------------------------------------------------------ chunk writer */

typedef struct wpass {
    const uint8_t *in;
    jfr_writer *w;
    jfr_status werr;          /* of the chunk being written */
    uint64_t pending, npending; /* hash and count of its kept events */
    uint64_t hash, n;         /* of the chunks written */
    uint64_t seen;
    uint8_t *out;
    size_t out_len, out_cap;
    fuzz_alloc *a;
} wpass;

static uint64_t wmix(uint64_t h, const void *p, size_t n) {
    const uint8_t *b = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 0x100000001b3ull;
    return h;
}

static uint64_t wevent(uint64_t h, const uint8_t *base, const jfr_event *e) {
    h = wmix(h, e->type->name, strlen(e->type->name) + 1);
    h = wmix(h, &e->size, sizeof e->size);
    return wmix(h, base + e->offset, (size_t)e->size);
}

static int w_write(void *user, const void *buf, size_t len) {
    wpass *x = user;
    if (x->out_len + len > x->out_cap) {
        size_t cap = (x->out_len + len) * 2;
        uint8_t *o = talloc_realloc(x->a, x->out, x->out_cap, cap);
        if (!o)
            return -1;
        x->out = o;
        x->out_cap = cap;
    }
    memcpy(x->out + x->out_len, buf, len);
    x->out_len += len;
    return 0;
}

static int w_begin(jfr_parser *p, const jfr_chunk_info *c, void *user) {
    wpass *x = user;
    x->pending = 0;
    x->npending = 0;
    x->werr = x->w ? jfr_writer_begin(x->w, p, c) : JFR_OK;
    return JFR_CB_CONTINUE;
}

static int w_record(jfr_parser *p, const jfr_record *r, void *user) {
    wpass *x = user;
    if (x->w && !x->werr && r->type_id <= 1)
        x->werr = jfr_writer_record(x->w, p, r);
    return JFR_CB_CONTINUE;
}

static int w_event(jfr_parser *p, const jfr_event *e, void *user) {
    (void)p;
    wpass *x = user;
    if (x->w && (x->seen++ & 1))
        return JFR_CB_CONTINUE; /* dropped */
    x->pending = wevent(x->pending ? x->pending : 0xcbf29ce484222325ull, x->in, e);
    x->npending++;
    if (x->w && !x->werr)
        x->werr = jfr_writer_event(x->w, e);
    return JFR_CB_CONTINUE;
}

static int w_end(jfr_parser *p, const jfr_chunk_info *c, void *user) {
    wpass *x = user;
    if (x->w && !x->werr) {
        uint64_t before = jfr_writer_chunks(x->w);
        x->werr = jfr_writer_end(x->w, p, c);
        if (!x->werr && jfr_writer_chunks(x->w) != before + 1)
            fuzz_die("writer: chunk count %llu after %llu",
                     (unsigned long long)jfr_writer_chunks(x->w), (unsigned long long)before);
    }
    if (!x->w || !x->werr) { /* the chunk's events count */
        x->hash = wmix(x->hash, &x->pending, sizeof x->pending);
        x->n += x->npending;
    }
    return JFR_CB_CONTINUE;
}

static int w_error(jfr_parser *p, jfr_status s, const char *message, void *user) {
    (void)p;
    (void)s;
    (void)message;
    (void)user;
    return JFR_CB_CONTINUE;
}

static void writer_pass(const uint8_t *data, size_t size) {
    fuzz_alloc a;
    jfr_options o;
    fuzz_options(&o, &a, size);
    jfr_callbacks cb = {.size = sizeof cb, .on_chunk_begin = w_begin, .on_record = w_record,
                        .on_event = w_event, .on_chunk_end = w_end, .on_error = w_error};
    wpass x = {.in = data, .a = &a};
    jfr_writer_config wc = JFR_WRITER_CONFIG_INIT;
    wc.allocator = o.allocator;
    wc.write = w_write;
    wc.user = &x;
    wc.max_chunk_size = FUZZ_MAX_CHUNK; /* what the re-parse accepts */
    if (!(x.w = jfr_writer_new(&wc)))
        fuzz_die("jfr_writer_new failed");
    jfr_parser *p = jfr_parser_new(&o, &cb, &x);
    if (!p)
        fuzz_die("jfr_parser_new failed");
    (void)jfr_parser_feed(p, data, size);
    (void)jfr_parser_finish(p);
    jfr_parser_free(p);
    uint64_t chunks = jfr_writer_chunks(x.w);
    jfr_writer_free(x.w);
    /* the written chunks, read back: every chunk whole, the same events */
    wpass y = {.in = x.out};
    if (!(p = jfr_parser_new(&o, &cb, &y)))
        fuzz_die("jfr_parser_new failed");
    jfr_status s = jfr_parser_feed(p, x.out, x.out_len);
    if (s == JFR_OK)
        s = jfr_parser_finish(p);
    if (s != JFR_OK)
        fuzz_die("writer: the written chunks do not parse: %s", jfr_parser_error(p));
    if (jfr_parser_chunks(p) != chunks)
        fuzz_die("writer: %llu chunks written, %llu read back", (unsigned long long)chunks,
                 (unsigned long long)jfr_parser_chunks(p));
    if (y.n != x.n || y.hash != x.hash)
        fuzz_die("writer: %llu events kept, %llu read back (or other bytes)",
                 (unsigned long long)x.n, (unsigned long long)y.n);
    if (getenv("FUZZ_WRITER_STATS"))
        fprintf(stderr, "writer: %llu chunks, %llu events kept, %zu bytes\n",
                (unsigned long long)chunks, (unsigned long long)x.n, x.out_len);
    jfr_parser_free(p);
    talloc_free(&a, x.out, x.out_cap);
    fuzz_check_freed(&a);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz_alloc a;
    jfr_options o;
    fuzz_options(&o, &a, size);
    jfr_callbacks cb;
    fuzz_callbacks(&cb);
    fuzz_run r;
    fuzz_run_init(&r);
    jfr_parser *p = jfr_parser_new(&o, &cb, &r);
    if (!p)
        fuzz_die("jfr_parser_new failed");
    jfr_status s = jfr_parser_feed(p, data, size);
    if (s == JFR_OK && jfr_parser_consumed(p) != size)
        fuzz_die("feed returned JFR_OK but consumed %zu of %zu", jfr_parser_consumed(p), size);
    s = fuzz_finish(p);
    (void)s;
    /* the same parser again after a reset, with the ordered option unchanged:
     * a reset parser must behave as a new one */
    uint64_t h1 = r.w.hash;
    jfr_parser_reset(p);
    fuzz_run_init(&r);
    (void)jfr_parser_feed(p, data, size);
    (void)fuzz_finish(p);
    if (r.w.hash != h1)
        fuzz_die("transcript after jfr_parser_reset differs from the first one");
    /* every whole chunk prepared into a share first (jfr_parser_prepare),
     * then copied from it at its turn: the same transcript */
    jfr_share *sh = jfr_share_new(&o.allocator, 1, 64);
    if (sh) {
        jfr_parser_reset(p);
        fuzz_run_init(&r);
        jfr_parser_set_share(p, sh);
        for (size_t at = 0; at < size;) {
            uint64_t k = jfr_chunk_size_at(data + at, size - at);
            if (k < 68 || k > size - at)
                break;
            (void)jfr_parser_prepare(p, data + at, size - at, NULL);
            at += (size_t)k;
        }
        (void)jfr_parser_feed(p, data, size);
        (void)fuzz_finish(p);
        jfr_parser_set_share(p, NULL);
        jfr_share_free(sh);
        if (r.w.hash != h1)
            fuzz_die("transcript with shared preparations differs from the first one");
    }
    jfr_parser_free(p);
    fuzz_check_freed(&a);

    /* resynchronisation: scanning for the next magic after every error */
    fuzz_options(&o, &a, size);
    o.resync = true;
    fuzz_run_init(&r);
    if (!(p = jfr_parser_new(&o, &cb, &r)))
        fuzz_die("jfr_parser_new failed");
    s = jfr_parser_feed(p, data, size);
    if (s == JFR_OK && jfr_parser_consumed(p) != size)
        fuzz_die("resync: feed returned JFR_OK but consumed %zu of %zu",
                 jfr_parser_consumed(p), size);
    (void)fuzz_finish(p);
    if (jfr_parser_skipped(p) > size)
        fuzz_die("resync: %llu bytes skipped of %zu", (unsigned long long)jfr_parser_skipped(p),
                 size);
    jfr_parser_free(p);
    fuzz_check_freed(&a);

    writer_pass(data, size);
    return 0;
}
