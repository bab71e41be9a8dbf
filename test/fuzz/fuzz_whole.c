/*
 * fuzz_whole.c — libFuzzer target: the whole input in one jfr_parser_feed
 * call (finished chunks are parsed in place), every callback set, every
 * field of every event read (jfr_iter, random access, helpers), then
 * jfr_parser_finish. max_chunk_size is 1 MiB and the allocator is capped and
 * checked (sizes, leaks). on_error returns CONTINUE, so damaged chunks are
 * skipped and the next ones are parsed; again after jfr_parser_reset, and
 * with every chunk prepared into a jfr_share first (same transcript); then
 * once more with jfr_options.resync (scanning for the next magic after an
 * error).
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#include "fuzz_common.h"

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
    return 0;
}
