/* jfr_parser_set_ordered: the order changed during a parse, from on_metadata
 * and from on_chunk_begin, chunk by chunk in a pattern, on 1, 2, 3 and 8
 * threads, fed whole and in slices of 1, 7 and 4093 bytes. Every chunk
 * must deliver exactly its events (as a parse in file order lists them);
 * a chunk for which sorting was asked, sorted by end time then offset; one
 * for which it was not, in file order or (prepared by a helper before the
 * call) sorted. Each file's first chunk live too (flush segments: sorted
 * per segment when asked, in file order otherwise).
 *
 *   test_set_ordered FILE...
 */
#include "../harness.h"

typedef struct ev {
    uint64_t chunk, off;
    int64_t end;
} ev;

typedef struct elist {
    ev *v;
    size_t n, cap;
} elist;

typedef struct octx {
    elist got;
    int pattern;            /* which chunks ask for sorting */
    bool from_begin;        /* called from on_chunk_begin, else on_metadata */
    bool asked[1 << 12];    /* per chunk index: sorting asked */
    uint64_t chunk;         /* the current chunk's index */
} octx;

static int g_cases, g_fails;

static bool want_sorted(int pattern, uint64_t chunk) {
    switch (pattern) {
    case 0: return chunk % 2 == 0;
    case 1: return chunk % 3 == 1;
    default: return chunk >= 2; /* off first, on from the third chunk */
    }
}

static void ask(octx *x, jfr_parser *p, uint64_t chunk) {
    bool on = want_sorted(x->pattern, chunk);
    if (chunk < sizeof x->asked)
        x->asked[chunk] = on;
    CHECK(jfr_parser_set_ordered(p, on) == JFR_OK);
}

static int o_begin(jfr_parser *p, const jfr_chunk_info *c, void *u) {
    octx *x = u;
    x->chunk = c->index;
    if (x->from_begin)
        ask(x, p, c->index);
    return JFR_CB_CONTINUE;
}

static int o_meta(jfr_parser *p, const jfr_metadata *m, void *u) {
    (void)m;
    octx *x = u;
    if (!x->from_begin)
        ask(x, p, x->chunk);
    return JFR_CB_CONTINUE;
}

static void push(elist *l, ev e) {
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 1024;
        l->v = realloc(l->v, l->cap * sizeof *l->v);
        if (!l->v)
            abort();
    }
    l->v[l->n++] = e;
}

static int o_event(jfr_parser *p, const jfr_event *e, void *u) {
    (void)p;
    octx *x = u;
    push(&x->got, (ev){e->chunk_index, e->offset,
                       (int64_t)((uint64_t)e->start_ticks + (uint64_t)e->duration_ticks)});
    return JFR_CB_CONTINUE;
}

static elist parse(const uint8_t *buf, size_t len, unsigned threads, size_t feed, octx *x,
                   bool control, bool live) {
    jfr_options o;
    jfr_options_init(&o); /* not sorted: the calls below decide */
    jfr_callbacks cb = {.size = sizeof cb, .on_event = o_event};
    if (control) {
        cb.on_chunk_begin = o_begin;
        cb.on_metadata = o_meta;
    }
    jfr_parser *p = jfr_parser_new(&o, &cb, x);
    CHECK(p != NULL);
    if (threads > 1)
        CHECK(jfr_parser_set_threads(p, threads) == JFR_OK);
    for (size_t off = 0; off < len;) {
        size_t n = feed && feed < len - off ? feed : len - off;
        jfr_status s = jfr_parser_feed(p, buf + off, n);
        if (s != JFR_OK) {
            fprintf(stderr, "feed: %s\n", jfr_parser_error(p));
            CHECK(s == JFR_OK);
            break;
        }
        off += n;
    }
    jfr_status fs = jfr_parser_finish(p);
    CHECK(fs == JFR_OK || (live && fs == JFR_TRUNCATED)); /* live: the last chunk open */
    jfr_parser_free(p);
    elist l = x->got;
    x->got = (elist){0};
    return l;
}

static int by_end(const void *a, const void *b) {
    const ev *x = a, *y = b;
    if (x->end != y->end)
        return x->end < y->end ? -1 : 1;
    return x->off < y->off ? -1 : x->off > y->off;
}

static bool same_seq(const ev *a, const ev *b, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (a[i].off != b[i].off)
            return false;
    return true;
}

/* ref: every event in file order (no control); got: the controlled parse. */
static bool check(const elist *ref, const elist *got, const octx *x, bool live) {
    if (ref->n != got->n)
        return false;
    for (size_t i = 0, j = 0; i < ref->n; i = j) {
        uint64_t chunk = ref->v[i].chunk;
        for (j = i; j < ref->n && ref->v[j].chunk == chunk; j++)
            if (got->v[j].chunk != chunk)
                return false;
        size_t n = j - i;
        ev *sorted = malloc((n ? n : 1) * sizeof *sorted);
        if (!sorted)
            abort();
        memcpy(sorted, ref->v + i, n * sizeof *sorted);
        qsort(sorted, n, sizeof *sorted, by_end);
        bool asked = chunk < sizeof x->asked && x->asked[chunk];
        bool file = same_seq(got->v + i, ref->v + i, n), ok;
        if (live) /* segments sorted one by one: same events, and file order when not asked */
            ok = asked ? true : file;
        else
            ok = same_seq(got->v + i, sorted, n) || (!asked && file);
        if (live && asked) { /* at least the same events */
            ev *g = malloc((n ? n : 1) * sizeof *g);
            if (!g)
                abort();
            memcpy(g, got->v + i, n * sizeof *g);
            qsort(g, n, sizeof *g, by_end);
            ok = same_seq(g, sorted, n);
            free(g);
        }
        free(sorted);
        if (!ok)
            return false;
    }
    return true;
}

static void run_file(const uint8_t *buf, size_t len, const char *what, bool live) {
    static const unsigned threads[] = {1, 2, 3, 8};
    static const size_t feeds[] = {0, 1, 7, 4093};
    octx x;
    memset(&x, 0, sizeof x);
    elist ref = parse(buf, len, 1, 0, &x, false, live);
    for (int pattern = 0; pattern < 3; pattern++)
        for (int fb = 0; fb < 2; fb++)
            for (size_t t = 0; t < sizeof threads / sizeof *threads; t++)
                for (size_t f = 0; f < sizeof feeds / sizeof *feeds; f++) {
                    if (feeds[f] == 1 && (threads[t] > 1 || len > (1u << 20)))
                        continue; /* slices never reach helpers; 1 byte: once */
                    memset(&x, 0, sizeof x);
                    x.pattern = pattern;
                    x.from_begin = fb;
                    elist got = parse(buf, len, threads[t], feeds[f], &x, true, live);
                    g_cases++;
                    if (!check(&ref, &got, &x, live)) {
                        g_fails++;
                        fprintf(stderr, "%s: pattern %d from %s, %u threads, feed %zu: wrong order\n",
                                what, pattern, fb ? "on_chunk_begin" : "on_metadata", threads[t],
                                feeds[f]);
                    }
                    free(got.v);
                }
    printf("%s: %zu events\n", what, ref.n);
    free(ref.v);
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: test_set_ordered FILE...\n");
        return 2;
    }
    uint8_t *cat = NULL;
    size_t catlen = 0;
    for (int i = 1; i < argc; i++) {
        size_t len;
        uint8_t *buf = read_file(argv[i], &len);
        if (!buf) {
            fprintf(stderr, "cannot read %s\n", argv[i]);
            return 1;
        }
        /* its first chunk being written (only the last chunk of a stream can
         * be): its flush segments */
        uint64_t first = jfr_chunk_size_at(buf, len);
        uint8_t *live = first >= 68 && first <= len ? as_live(buf, (size_t)first) : NULL;
        CHECK(live != NULL);
        if (live) {
            char what[300];
            snprintf(what, sizeof what, "%s, first chunk live", argv[i]);
            run_file(live, (size_t)first, what, true);
        }
        free(live);
        cat = realloc(cat, catlen + len);
        memcpy(cat + catlen, buf, len);
        catlen += len;
        free(buf);
    }
    /* twice: many chunks, types changing between them */
    cat = realloc(cat, 2 * catlen);
    memcpy(cat + catlen, cat, catlen);
    catlen *= 2;
    run_file(cat, catlen, "concatenation", false);
    free(cat);
    CHECK(jfr_parser_set_ordered(NULL, true) == JFR_INVALID_ARG);
    printf("%d cases, %d wrong\n", g_cases, g_fails);
    return g_fails || g_failures ? 1 : 0;
}
