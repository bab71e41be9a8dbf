/*
 * fuzz_query.c — libFuzzer target: the query language of `view` and
 * `query` (jfrc_query of jfrstream_conv.h; lib/conv/query_*.c) on hostile
 * queries and hostile recordings.
 *
 * The input is a query, a NUL byte, then a recording (no NUL: all query, no
 * recording). An empty query picks a view by the first byte of the
 * recording. The query must either parse, and then print back a text
 * that, where it parses again (the JDK prints names unquoted, so one with
 * a space does not) and the query has no quotes, prints the same (after the JDK's long aggregate names
 * are written short: its parser does not take them), or be refused with
 * "position N: reason", N within the text. A query that
 * parsed runs over the recording (ordered, the JDK's time base, its event
 * types subscribed by name) and is rendered at a width, truncation and cell
 * height taken from the input, verbose or not: the text must be valid UTF-8;
 * a query whose result does not depend on the order (jfrc_query_order_free,
 * or _checked: AVG of integers) runs again with the finished chunks in file
 * order, as `view` runs it, and must print the same unless
 * jfrc_query_order_lost says its sums went past 2^53.
 * The query's memory and the parser's go through the counting allocator
 * (nothing left at the end; a cap proportional to the input). A view picked
 * by the first byte also runs live (jfrs_views of jfrstream_sink.h): the
 * recording fed whole or 7 bytes at a time to one source's copy, a frame
 * before the input ends and one after, valid UTF-8, its memory counted.
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#include "fuzz_common.h"
#include "../query_names.h"

#include "jfrstream_conv.h"
#include "jfrstream_sink.h"

static bool valid_utf8(const unsigned char *s, size_t n) {
    for (size_t i = 0; i < n;) {
        unsigned char c = s[i];
        size_t len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
        if (!len || i + len > n)
            return false;
        for (size_t k = 1; k < len; k++)
            if ((s[i + k] & 0xC0) != 0x80)
                return false;
        i += len;
    }
    return true;
}

static jfrc_out *memory_out(size_t cap) {
    jfrc_out *o = jfrc_out_new_memory(cap);
    if (!o)
        fuzz_die("out of memory (memory writer)");
    return o;
}

/* What the memory writer o holds (n bytes, NUL-terminated, malloc); o is
 * freed. */
static char *out_string(jfrc_out *o, size_t *n) {
    const char *d = jfrc_out_data(o, n);
    char *s = malloc(*n + 1);
    if (!s)
        fuzz_die("out of memory");
    memcpy(s, d, *n);
    s[*n] = 0;
    jfrc_out_free(o);
    return s;
}

static char *printed(jfrc_query *q) {
    jfrc_out *o = memory_out(256);
    jfrc_query_text(q, o);
    size_t n;
    return out_string(o, &n);
}


/* The view the first byte picks. */
static const char *name_of(uint8_t b) {
    size_t n = jfrc_view_count();
    const char *name;
    if (!n || !jfrc_view_info(b % n, NULL, &name, NULL, NULL))
        fuzz_die("no views");
    return name;
}

static int on_metadata(jfr_parser *p, const jfr_metadata *m, void *user) {
    jfr_status s = jfrc_query_metadata(user, p, m);
    if (s != JFR_OK && s != JFR_NOMEM)
        fuzz_die("jfrc_query_metadata: status %d", (int)s);
    return s == JFR_OK ? JFR_CB_CONTINUE : JFR_CB_STOP;
}

static int on_error(jfr_parser *p, jfr_status s, const char *message, void *user) {
    (void)p, (void)s, (void)message, (void)user;
    return JFR_CB_CONTINUE;
}

/* The query of an order-free run: finished chunks in file order, as
 * `view` reads them (cmd_view.c), a chunk being written sorted. */
typedef struct fo_run {
    jfrc_query *q;
    bool live; /* the current chunk is being written */
} fo_run;

static void file_order(fo_run *f, jfr_parser *p) {
    if (jfrc_query_order_free_checked(f->q) && jfrc_query_set_file_order(f->q, !f->live))
        jfr_parser_set_ordered(p, f->live);
}

static int fo_metadata(jfr_parser *p, const jfr_metadata *m, void *user) {
    fo_run *f = user;
    int rc = on_metadata(p, m, f->q);
    if (rc == JFR_CB_CONTINUE)
        file_order(f, p);
    return rc;
}

static int fo_begin(jfr_parser *p, const jfr_chunk_info *c, void *user) {
    fo_run *f = user;
    f->live = c->state != 0;
    file_order(f, p);
    return JFR_CB_CONTINUE;
}

/* Run q over the recording (sorted, or as an order-free query in file
 * order) and render it: the text (malloc, *len bytes), and the render's
 * status. */
static char *run_render(jfrc_query *q, const jfr_options *o, const uint8_t *rec, size_t rlen,
                        bool by_file, jfr_status *rs, size_t *len, bool *lost) {
    fo_run f = {q, false};
    jfr_callbacks cb = {.size = sizeof cb, .on_metadata = on_metadata, .on_error = on_error};
    if (by_file) {
        cb.on_metadata = fo_metadata;
        cb.on_chunk_begin = fo_begin;
    }
    jfr_parser *p = jfr_parser_new(o, &cb, by_file ? (void *)&f : (void *)q);
    if (p) {
        jfr_parser_feed(p, rec, rlen);
        jfr_parser_finish(p);
        jfr_parser_free(p);
    }
    *lost = jfrc_query_order_lost(q);
    if (*lost && !by_file)
        fuzz_die("jfrc_query_order_lost after a run in end-time order");
    jfrc_out *out = memory_out(4096);
    jfr_status s = jfrc_query_render(q, out);
    if (s != JFR_OK && s != JFR_NOMEM && s != JFR_INVALID_ARG)
        fuzz_die("jfrc_query_render: status %d", (int)s);
    size_t n;
    char *t = out_string(out, &n);
    if (!valid_utf8((const unsigned char *)t, n))
        fuzz_die("rendered text is not valid UTF-8");
    *rs = s;
    *len = n;
    return t;
}


/* ---- a live view of the same view over the recording (jfrs_views):
 * the source's copy made from the parser's callbacks, then a frame */
static int v_begin(jfr_parser *p, const jfr_chunk_info *c, void *u) {
    jfrs_views_src_chunk_begin(u, p, c);
    return JFR_CB_CONTINUE;
}
static int v_meta(jfr_parser *p, const jfr_metadata *m, void *u) {
    (void)p;
    jfrs_views_src_metadata(u, m);
    return JFR_CB_CONTINUE;
}
static int v_record(jfr_parser *p, const jfr_record *r, void *u) {
    jfrs_views_src_record(u, p, r);
    return JFR_CB_CONTINUE;
}
static int v_end(jfr_parser *p, const jfr_chunk_info *c, void *u) {
    (void)c;
    jfrs_views_src_chunk_end(u, p);
    return JFR_CB_CONTINUE;
}

static void live_view(const char *name, const jfrc_view_options *vo, const uint8_t *rec,
                      size_t rlen, size_t size, bool slices) {
    fuzz_alloc a;
    jfr_options o;
    fuzz_options(&o, &a, size);
    jfrs_views_config c;
    jfrs_views_config_init(&c);
    c.names = &name;
    c.count = 1;
    c.options = *vo;
    c.window_ms = 9000000000000ull; /* ~285 years before `now` (0): all but hostile times */
    c.max_source_bytes = 1 << 20;
    c.allocator = &o.allocator;
    jfrs_views *v = NULL;
    jfrs_source *src = jfrs_source_new("path", "fuzz", NULL);
    jfrs_views_src *vs = NULL;
    jfr_status st = jfrs_views_new(&c, &v, NULL, 0);
    if (st != JFR_OK && st != JFR_NOMEM)
        fuzz_die("jfrs_views_new(%s): status %d", name, (int)st);
    if (v && src && jfrs_views_src_new(v, src, &vs) == JFR_OK) {
        jfr_callbacks cb = {.size = sizeof cb, .on_chunk_begin = v_begin, .on_metadata = v_meta,
                            .on_record = v_record, .on_chunk_end = v_end, .on_error = on_error};
        jfr_parser *p = jfr_parser_new(&o, &cb, vs);
        if (p) {
            for (size_t off = 0; off < rlen;) { /* whole, or 7 bytes at a time */
                size_t k = slices && rlen - off > 7 ? 7 : rlen - off;
                jfr_parser_feed(p, rec + off, k);
                off += k;
            }
            jfrc_out *out = memory_out(4096);
            for (int f = 0; f < 2; f++) { /* a frame before the input ends, one after */
                if (f) {
                    jfr_parser_finish(p);
                    jfrs_views_src_end(vs);
                }
                st = jfrs_views_render(v, out, 0);
                if (st != JFR_OK && st != JFR_NOMEM)
                    fuzz_die("jfrs_views_render: status %d", (int)st);
            }
            size_t n;
            const char *d = jfrc_out_data(out, &n);
            if (!valid_utf8((const unsigned char *)d, n))
                fuzz_die("a live view's frame is not valid UTF-8");
            jfrc_out_free(out);
            jfr_parser_free(p);
        }
    }
    jfrs_views_free(v);
    jfrs_source_free(src);
    fuzz_check_freed(&a);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const uint8_t *nul = memchr(data, 0, size);
    size_t qlen = nul ? (size_t)(nul - data) : size;
    const uint8_t *rec = nul ? nul + 1 : data + size;
    size_t rlen = (size_t)(data + size - rec);
    char *text = malloc(qlen + 1);
    if (!text)
        return 0;
    memcpy(text, data, qlen);
    text[qlen] = 0;
    if (strlen(text) != qlen) { /* cannot happen: the query ends at the first NUL */
        free(text);
        return 0;
    }

    jfr_options o;
    fuzz_alloc a;
    fuzz_options(&o, &a, size);
    o.ordered = true;
    o.jdk_time_base = true;
    jfrc_view_options vo = JFRC_VIEW_OPTIONS_INIT;
    uint8_t b0 = rlen ? rec[0] : 0, b1 = rlen > 1 ? rec[1] : 0;
    vo.width = b0 & 1 ? 0 : 20 + (b1 & 127);
    vo.cell_height = b0 & 2 ? 1 + (b1 & 7) : 0;
    vo.truncate = (b0 >> 2) % 3;
    vo.verbose = b0 & 32;

    jfrc_query *q;
    if (qlen == 0) {
        const char *name = name_of(b1);
        q = jfrc_query_new_view(name, &vo, &o.allocator);
        if (!q && a.failed == 0)
            fuzz_die("view %s does not parse", name);
    } else {
        char err[512];
        q = jfrc_query_new(text, NULL, b0 & 64, &vo, &o.allocator, err, sizeof err);
        if (!q) {
            unsigned long pos;
            int at = 0;
            if (a.failed == 0 &&
                (sscanf(err, "position %lu: %n", &pos, &at) != 1 || !at || pos > qlen))
                fuzz_die("refused query without a position within it: '%s'", err);
        } else {
            /* printed back, it parses (short names) and prints the same */
            char *p1 = printed(q), *again = strdup(p1);
            if (!again)
                fuzz_die("out of memory");
            query_short_names(again);
            /* names are printed as they were read, unquoted (as the JDK
             * prints them): one with a space or a separator does not parse
             * back; a query without quotes that does must print the same */
            jfrc_query *q2 = jfrc_query_new(again, NULL, false, NULL, NULL, err, sizeof err);
            if (q2) {
                char *p2 = printed(q2);
                if (!strpbrk(text, "'\"") && strcmp(p1, p2)) /* quoted names lose their quotes */
                    fuzz_die("printed query prints differently: '%s' / '%s'", p1, p2);
                free(p2);
                jfrc_query_free(q2);
            }
            free(p1);
            free(again);
        }
    }
    if (q) {
        jfr_status s1, s2;
        size_t failed = a.failed;
        size_t n1, n2;
        bool lost;
        char *t1 = run_render(q, &o, rec, rlen, false, &s1, &n1, &lost);
        bool order_free = jfrc_query_order_free_checked(q);
        jfrc_query_free(q);
        /* an order-free query prints the same from the file's order */
        q = !order_free ? NULL
            : qlen == 0 ? jfrc_query_new_view(name_of(b1), &vo, &o.allocator)
                        : jfrc_query_new(text, NULL, b0 & 64, &vo, &o.allocator, NULL, 0);
        if (q) {
            char *t2 = run_render(q, &o, rec, rlen, true, &s2, &n2, &lost);
            if (!lost && a.failed == failed && s1 == JFR_OK && s2 == JFR_OK && (n1 != n2 || memcmp(t1, t2, n1)))
                fuzz_die("an order-free query prints differently in file order:\n%s\n---\n%s", t1, t2);
            free(t2);
            jfrc_query_free(q);
        }
        free(t1);
    }
    fuzz_check_freed(&a);
    if (qlen == 0)
        live_view(name_of(b1), &vo, rec, rlen, size, b0 & 128);
    free(text);
    return 0;
}
