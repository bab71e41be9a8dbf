/*
 * test_query.c — the query language (jfrc_query of jfrstream_conv.h):
 *
 *   test_query QUERIES.txt FILE...
 *
 * 1. Every "Q" line of QUERIES.txt (test/data/queries.txt: every construct
 *    of the grammar, bad queries, and every view's query) parses as JDK 25
 *    parses it (its "A" line, made by test/java/QueryOracle.java): the text
 *    Query.toString prints, or the error's message and position.
 * 2. Every view's query round-trips: the printed text (with AVG, DIFF, MAX,
 *    MIN, STDEV for the names Query.toString prints) parses to a query that
 *    prints the same.
 * 3. For each FILE, a few views (hot-methods, gc, allocation-by-class,
 *    jvm-information: table and form, groups, percentiles, LAST_BATCH) run
 *    through a counting allocator (harness.h's talloc): a full run gives the
 *    reference text and N allocations; then each allocation 1..N is refused
 *    in turn (every 7th past 400, to bound the time): the run reports
 *    JFR_NOMEM (from metadata or render) or prints the reference, and ends
 *    with nothing held.
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#include "../harness.h"
#include "../query_names.h"
#include "jfrstream_conv.h"

static int failures;

static char *unescape(const char *s) {
    size_t n = strlen(s);
    char *d = malloc(n + 1), *p = d;
    for (size_t k = 0; k < n; k++) {
        if (s[k] == '\\' && s[k + 1] == 'n') {
            *p++ = '\n';
            k++;
        } else {
            *p++ = s[k];
        }
    }
    *p = 0;
    return d;
}

static char *query_text(jfrc_query *q) {
    jfrc_out *o = jfrc_out_new_memory(256);
    jfrc_query_text(q, o);
    size_t len;
    const char *d = jfrc_out_data(o, &len);
    char *s = strndup(d, len);
    jfrc_out_free(o);
    return s;
}

static void check_queries(const char *path) {
    size_t len = 0;
    uint8_t *raw = read_file(path, &len);
    CHECK(raw);
    char *text = malloc(len + 1); /* read_file's bytes end without a NUL */
    CHECK(text);
    memcpy(text, raw, len);
    text[len] = 0;
    free(raw);
    char *query = NULL;
    int n = 0, ok = 0;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        if (!strncmp(line, "Q ", 2)) {
            free(query);
            query = unescape(line + 2);
            continue;
        }
        if (strncmp(line, "A ", 2) || !query)
            continue;
        const char *want = line + 2;
        if (!strncmp(want, "EXC", 3))
            continue;
        n++;
        char err[512];
        jfrc_query *q = jfrc_query_new(query, NULL, false, NULL, NULL, err, sizeof err);
        char got[1024];
        if (q) {
            char *t = query_text(q);
            snprintf(got, sizeof got, "OK %s", t);
            free(t);
            jfrc_query_free(q);
        } else {
            unsigned pos = 0;
            int skip = 0;
            if (sscanf(err, "position %u: %n", &pos, &skip) < 1 || !skip)
                snprintf(got, sizeof got, "ERR ? %s", err);
            else
                snprintf(got, sizeof got, "ERR %u %s", pos, err + skip);
        }
        char *w = unescape(want);
        if (strcmp(got, w)) {
            printf("FAIL: query %s\n  got:  %s\n  want: %s\n", query, got, w);
            failures++;
        } else {
            ok++;
        }
        free(w);
    }
    free(query);
    free(text);
    printf("query: %d of %d queries parse as JDK 25's parser parses them\n", ok, n);
}

/* The printed text with the aggregates' short names back (a copy). */
static char *short_names(const char *t) {
    char *s = strdup(t);
    query_short_names(s);
    return s;
}

static void check_round_trip(void) {
    const char *name, *qt;
    size_t k = 0;
    for (; jfrc_view_info(k, NULL, &name, NULL, &qt); k++) {
        char err[256];
        jfrc_query *q = jfrc_query_new(qt, NULL, false, NULL, NULL, err, sizeof err);
        if (!q) {
            printf("FAIL: view %s does not parse: %s\n", name, err);
            failures++;
            continue;
        }
        char *t1 = query_text(q);
        char *again = short_names(t1);
        jfrc_query *q2 = jfrc_query_new(again, NULL, false, NULL, NULL, err, sizeof err);
        char *t2 = q2 ? query_text(q2) : strdup(err);
        if (strcmp(t1, t2)) {
            printf("FAIL: view %s: printed query does not round-trip\n  %s\n  %s\n", name, t1, t2);
            failures++;
        }
        free(again);
        free(t1);
        free(t2);
        jfrc_query_free(q);
        jfrc_query_free(q2);
    }
    CHECK(k == jfrc_view_count() && k >= 80);
    printf("query: %zu views' queries round-trip\n", k);
}

typedef struct vrun {
    jfrc_query *q;
    bool nomem;
} vrun;

static int on_metadata(jfr_parser *p, const jfr_metadata *m, void *user) {
    vrun *r = user;
    if (jfrc_query_metadata(r->q, p, m) == JFR_NOMEM) {
        r->nomem = true;
        return JFR_CB_STOP;
    }
    return JFR_CB_CONTINUE;
}

/* One run of a view on data through allocator a: its text in *out (NULL:
 * it reported a refusal). */
static void one_run(const char *view, const uint8_t *data, size_t len, const jfr_allocator *a,
                    char **out) {
    *out = NULL;
    vrun r = {0};
    jfrc_view_options opt = JFRC_VIEW_OPTIONS_INIT;
    opt.verbose = true;
    r.q = jfrc_query_new_view(view, &opt, a);
    if (!r.q)
        return; /* refused */
    jfr_callbacks cb = {.size = sizeof cb, .on_metadata = on_metadata};
    jfr_options o = {.size = sizeof o, .ordered = true};
    jfr_parser *p = jfr_parser_new(&o, &cb, &r);
    CHECK(p);
    jfr_status s = jfr_parser_feed(p, data, len);
    if (s == JFR_OK)
        s = jfr_parser_finish(p);
    jfr_parser_free(p);
    if (!r.nomem) {
        /* an event the query could not take stops the parser; render says why */
        CHECK(s == JFR_OK || (s == JFR_STOPPED && jfrc_query_failed(r.q)));
        jfrc_out *mo = jfrc_out_new_memory(4096);
        CHECK(mo);
        jfr_status rs = jfrc_query_render(r.q, mo);
        if (rs == JFR_OK) {
            size_t n;
            const char *d = jfrc_out_data(mo, &n);
            *out = strndup(d, n);
        } else {
            CHECK(rs == JFR_NOMEM);
        }
        jfrc_out_free(mo);
    }
    jfrc_query_free(r.q);
}

static void check_alloc(const char *path) {
    size_t len = 0;
    uint8_t *data = read_file(path, &len);
    CHECK(data);
    static const char *const views[] = {"hot-methods", "gc", "allocation-by-class",
                                        "jvm-information"};
    for (size_t v = 0; v < sizeof views / sizeof *views; v++) {
        talloc t;
        talloc_init(&t);
        jfr_allocator a = talloc_allocator(&t);
        char *ref;
        one_run(views[v], data, len, &a, &ref);
        CHECK(ref);
        CHECK(t.cur == 0 && t.bad_size == 0);
        size_t n = t.nalloc, tried = 0, reported = 0;
        for (size_t k = 1; k <= n; k += k < 400 ? 1 : 7) {
            talloc_init(&t);
            t.fail_at = k;
            t.fail_once = true;
            a = talloc_allocator(&t);
            char *got;
            one_run(views[v], data, len, &a, &got);
            tried++;
            if (!got) {
                reported++;
            } else if (strcmp(got, ref)) {
                printf("FAIL: %s: view %s, allocation %zu refused: different output, not reported\n",
                       path, views[v], k);
                failures++;
            }
            if (t.cur != 0 || t.bad_size) {
                printf("FAIL: %s: view %s, allocation %zu refused: %zu bytes held, %zu bad sizes\n",
                       path, views[v], k, t.cur, t.bad_size);
                failures++;
            }
            free(got);
        }
        printf("query: %s: view %s: %zu allocations, %zu refused in turn (%zu reported)\n", path,
               views[v], n, tried, reported);
        free(ref);
    }
    free(data);
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s QUERIES.txt FILE...\n", argv[0]);
        return 2;
    }
    check_queries(argv[1]);
    check_round_trip();
    for (int i = 2; i < argc; i++)
        check_alloc(argv[i]);
    if (failures) {
        printf("FAIL: query: %d failures\n", failures);
        return 1;
    }
    printf("PASS: query\n");
    return 0;
}
