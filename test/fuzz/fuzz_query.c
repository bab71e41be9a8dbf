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
 * height taken from the input, verbose or not: the text must be valid UTF-8.
 * The query's memory and the parser's go through the counting allocator
 * (nothing left at the end; a cap proportional to the input).
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#include "fuzz_common.h"
#include "../query_names.h"

#include "jfrstream_conv.h"

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

static char *printed(jfrc_query *q) {
    jfrc_out *o = jfrc_out_new_memory(256);
    if (!o)
        fuzz_die("out of memory (memory writer)");
    jfrc_query_text(q, o);
    size_t n;
    const char *d = jfrc_out_data(o, &n);
    char *s = malloc(n + 1);
    if (!s)
        fuzz_die("out of memory");
    memcpy(s, d, n);
    s[n] = 0;
    jfrc_out_free(o);
    return s;
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
        size_t n = jfrc_view_count();
        const char *name;
        if (!n || !jfrc_view_info(b1 % n, NULL, &name, NULL, NULL))
            fuzz_die("no views");
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
        jfr_callbacks cb = {.size = sizeof cb, .on_metadata = on_metadata, .on_error = on_error};
        jfr_parser *p = jfr_parser_new(&o, &cb, q);
        if (p) {
            jfr_parser_feed(p, rec, rlen);
            jfr_parser_finish(p);
            jfr_parser_free(p);
        }
        jfrc_out *out = jfrc_out_new_memory(4096);
        if (!out)
            fuzz_die("out of memory (memory writer)");
        jfr_status s = jfrc_query_render(q, out);
        if (s != JFR_OK && s != JFR_NOMEM && s != JFR_INVALID_ARG)
            fuzz_die("jfrc_query_render: status %d", (int)s);
        size_t n;
        const char *d = jfrc_out_data(out, &n);
        if (!valid_utf8((const unsigned char *)d, n))
            fuzz_die("rendered text is not valid UTF-8");
        jfrc_out_free(out);
        jfrc_query_free(q);
    }
    fuzz_check_freed(&a);
    free(text);
    return 0;
}
