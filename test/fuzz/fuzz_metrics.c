/*
 * fuzz_metrics.c — libFuzzer target: the input as three sources of one
 * metrics registry (jfrstream_sink.h, lib/sink/metrics_*.c compiled in),
 * each with its labels read from the input (jfrs_source): the first fed
 * whole and ended, the second in slices of 7 bytes and kept open while the
 * third is fed (same id: take-over, stream="2"), with caps small enough to
 * be reached (2 sources, 300 series). After each source the exposition is
 * rendered and checked line by line (comments, or NAME[{...}] VALUE).
 * Hostile GC names, VM operation names, field types and label values go
 * through the registry's decoding and escaping; ASan checks the memory,
 * the parser's allocator is capped and checked as in the other targets.
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#include "fuzz_common.h"
#include "jfrstream_sink.h"

static int m_begin(jfr_parser *p, const jfr_chunk_info *c, void *u) {
    (void)p;
    jfrs_metrics_src_chunk_begin(u, c);
    return JFR_CB_CONTINUE;
}
static int m_meta(jfr_parser *p, const jfr_metadata *md, void *u) {
    (void)p;
    jfrs_metrics_src_metadata(u, md);
    return JFR_CB_CONTINUE;
}
static int m_record(jfr_parser *p, const jfr_record *r, void *u) {
    (void)p;
    jfrs_metrics_src_record(u, r);
    return JFR_CB_CONTINUE;
}
static int m_end(jfr_parser *p, const jfr_chunk_info *c, void *u) {
    (void)p;
    (void)c;
    jfrs_metrics_src_chunk_end(u);
    return JFR_CB_CONTINUE;
}
static int m_error(jfr_parser *p, jfr_status st, const char *msg, void *u) {
    (void)p;
    (void)msg;
    jfrs_metrics_src_error(u, st);
    return JFR_CB_CONTINUE;
}

/* Every line: a comment, or NAME, optional {...}, a space, a value. */
static void check_text(jfrs_metrics *m) {
    size_t len = 0;
    const char *t = jfrs_metrics_render(m, &len);
    if (!t)
        fuzz_die("render returned NULL");
    if (strlen(t) != len || (len && t[len - 1] != '\n'))
        fuzz_die("render: length %zu, or no final newline", len);
    for (const char *l = t; *l;) {
        const char *nl = strchr(l, '\n');
        if (*l != '#') {
            const char *q = l;
            while ((*q >= 'a' && *q <= 'z') || *q == '_' || (*q >= '0' && *q <= '9'))
                q++;
            if (q == l)
                fuzz_die("render: a line without a metric name: %.60s", l);
            if (*q == '{') { /* to the closing brace outside quotes */
                bool in = false;
                for (q++; q < nl && (in || *q != '}'); q++) {
                    if (in && *q == '\\')
                        q++;
                    else if (*q == '"')
                        in = !in;
                }
                if (q >= nl)
                    fuzz_die("render: unbalanced labels: %.80s", l);
                q++;
            }
            if (*q != ' ' || q + 1 >= nl)
                fuzz_die("render: no value: %.80s", l);
        }
        l = nl + 1;
    }
}

typedef struct input {
    jfrs_source *src;
    jfrs_metrics_src *ms;
    jfr_parser *p;
} input;

static input open_input(jfrs_metrics *m, jfr_options *o, fuzz_alloc *a, size_t size) {
    input in = {0};
    fuzz_options(o, a, size);
    if (!(in.src = jfrs_source_new("peer", "127.0.0.1:7091", NULL)))
        fuzz_die("jfrs_source_new failed");
    jfr_status st = jfrs_metrics_src_new(m, in.src, &in.ms);
    if (st != JFR_OK && st != JFR_LIMIT)
        fuzz_die("jfrs_metrics_src_new: %s", jfr_status_name(st));
    jfr_callbacks cb;
    jfr_callbacks_init(&cb);
    cb.on_chunk_begin = m_begin;
    cb.on_metadata = m_meta;
    cb.on_record = m_record;
    cb.on_chunk_end = m_end;
    cb.on_error = m_error;
    if (!(in.p = jfr_parser_new(o, &cb, in.ms)))
        fuzz_die("jfr_parser_new failed");
    if (jfrs_source_subscribe(in.src, in.p) != JFR_OK ||
        jfrs_metrics_src_subscribe(in.ms, in.p) != JFR_OK)
        fuzz_die("subscribe failed");
    return in;
}

static void close_input(input *in, fuzz_alloc *a) {
    jfrs_metrics_src_end(in->ms);
    jfr_parser_free(in->p);
    jfrs_source_free(in->src);
    fuzz_check_freed(a);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    jfrs_metrics_config cfg;
    jfrs_metrics_config_init(&cfg);
    cfg.max_sources = 2;
    cfg.max_series = 300;
    jfrs_metrics *m = NULL;
    if (jfrs_metrics_new(&cfg, &m) != JFR_OK)
        fuzz_die("jfrs_metrics_new failed");
    fuzz_alloc a1, a2, a3;
    jfr_options o1, o2, o3;

    input in = open_input(m, &o1, &a1, size);
    (void)jfr_parser_feed(in.p, data, size);
    (void)fuzz_finish(in.p);
    check_text(m);
    close_input(&in, &a1);
    check_text(m);

    input kept = open_input(m, &o2, &a2, size);
    for (size_t off = 0; off < size; off += 7)
        (void)jfr_parser_feed(kept.p, data + off, size - off < 7 ? size - off : 7);
    (void)fuzz_finish(kept.p);
    check_text(m);

    in = open_input(m, &o3, &a3, size); /* two open: the cap of 2 sources */
    (void)jfr_parser_feed(in.p, data, size);
    (void)fuzz_finish(in.p);
    check_text(m);
    close_input(&in, &a3);
    close_input(&kept, &a2);
    check_text(m);
    jfrs_metrics_free(m);
    return 0;
}
