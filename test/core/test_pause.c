/* The pause rule of jfrstream.h ("PAUSE"): a pause from each kind of
 * callback (on_chunk_begin, on_metadata, on_record, on_event, a
 * jfr_parser_on handler, on_chunk_end), at every call of that kind, at its
 * last call only, and (small files) at each single call in turn; fed in
 * slices of 1 byte, primes and whole; finished and live chunks, file order
 * and ordered; resumed by feeding the rest (or NULL, 0) or by going on with
 * the next slice / jfr_parser_finish. Each run's transcript (every value of
 * every event) must equal the run without pauses; every JFR_CB_PAUSE must
 * come back as exactly one JFR_PAUSED from feed or finish, with
 * jfr_parser_status() JFR_PAUSED then and never inside a callback. And a
 * parser reset while paused reads the input again as a new one.
 * Usage: test_pause FILE... */
#include "../harness.h"

enum { K_BEGIN, K_META, K_RECORD, K_EVENT, K_HANDLER, K_END, NK };
static const char *const kind_name[NK] = {"on_chunk_begin", "on_metadata", "on_record",
                                          "on_event", "handler", "on_chunk_end"};

typedef struct pctx {
    run_ctx r;      /* the harness's transcript (r.cfg.values) */
    int kind;       /* the kind that pauses, -1: none */
    long at;        /* 0: every call of that kind; else only the at-th */
    long n[NK];     /* calls of each kind so far */
    long paused;    /* JFR_CB_PAUSE returned */
    long in_cb_paused; /* callbacks that saw jfr_parser_status() == JFR_PAUSED */
} pctx;

static int answer(jfr_parser *p, pctx *c, int kind) {
    if (jfr_parser_status(p) == JFR_PAUSED)
        c->in_cb_paused++;
    long n = ++c->n[kind];
    if (kind == c->kind && (c->at == 0 || c->at == n)) {
        c->paused++;
        return JFR_CB_PAUSE;
    }
    return JFR_CB_CONTINUE;
}

static int p_begin(jfr_parser *p, const jfr_chunk_info *ci, void *u) {
    pctx *c = u;
    h_begin(p, ci, &c->r);
    return answer(p, c, K_BEGIN);
}
static int p_meta(jfr_parser *p, const jfr_metadata *m, void *u) {
    pctx *c = u;
    h_meta(p, m, &c->r);
    return answer(p, c, K_META);
}
static int p_record(jfr_parser *p, const jfr_record *rec, void *u) {
    pctx *c = u;
    h_record(p, rec, &c->r);
    return answer(p, c, K_RECORD);
}
static int p_event(jfr_parser *p, const jfr_event *e, void *u) {
    pctx *c = u;
    log_event(&c->r, "E", e);
    return answer(p, c, K_EVENT);
}
static int p_handler(jfr_parser *p, const jfr_event *e, void *u) {
    pctx *c = u;
    tlog_printf(&c->r.log, "H %s @%" PRIu64 "\n", e->type->name, e->offset);
    return answer(p, c, K_HANDLER);
}
static int p_end(jfr_parser *p, const jfr_chunk_info *ci, void *u) {
    pctx *c = u;
    h_end(p, ci, &c->r);
    return answer(p, c, K_END);
}
static int p_error(jfr_parser *p, jfr_status s, const char *msg, void *u) {
    pctx *c = u;
    return h_error(p, s, msg, &c->r);
}

/* Event type names of the input (a handler is subscribed to each). */
typedef struct names {
    char **v;
    size_t n;
} names;

static int collect(jfr_parser *p, const jfr_metadata *m, void *u) {
    (void)p;
    names *nm = u;
    for (uint32_t i = 0; i < m->ntypes; i++) {
        const jfr_type *t = m->types[i];
        bool seen = !t->is_event;
        for (size_t k = 0; k < nm->n && !seen; k++)
            seen = strcmp(nm->v[k], t->name) == 0;
        if (!seen) {
            nm->v = realloc(nm->v, (nm->n + 1) * sizeof *nm->v);
            nm->v[nm->n++] = strdup(t->name);
        }
    }
    return JFR_CB_CONTINUE;
}

typedef struct run_spec {
    size_t feed;    /* slice size, 0: whole */
    bool ordered;
    bool next;      /* a pause that took the whole slice goes on with the next
                       slice (or finish), not feed(NULL, 0) */
    int kind;       /* -1: no pause */
    long at;
} run_spec;

/* One run; *pauses_back: JFR_PAUSED returned by feed and finish, *bad: a
 * JFR_PAUSED whose jfr_parser_status() was not JFR_PAUSED. */
static tlog run(const uint8_t *buf, size_t len, const names *nm, run_spec sp, pctx *c,
                long *pauses_back, long *bad) {
    memset(c, 0, sizeof *c);
    c->r.cfg.values = true;
    c->kind = sp.kind;
    c->at = sp.at;
    *pauses_back = *bad = 0;
    jfr_callbacks cb = {sizeof cb, p_begin, p_meta, p_record, p_event, p_end, p_error};
    jfr_options o = JFR_OPTIONS_INIT;
    o.ordered = sp.ordered;
    jfr_parser *p = jfr_parser_new(&o, &cb, c);
    for (size_t k = 0; k < nm->n; k++)
        CHECK(jfr_parser_on(p, nm->v[k], p_handler, c) == JFR_OK);
    size_t pos = 0;
    jfr_status s = JFR_OK;
    long guard = 0;
    while (pos < len && guard < 100000000) {
        size_t n = sp.feed && sp.feed < len - pos ? sp.feed : len - pos, off = 0;
        for (;;) {
            s = jfr_parser_feed(p, buf + pos + off, n - off);
            off += jfr_parser_consumed(p);
            if (s != JFR_PAUSED)
                break;
            ++*pauses_back;
            *bad += jfr_parser_status(p) != JFR_PAUSED;
            if ((sp.next && off == n) || ++guard > 100000000)
                break;
        }
        pos += off;
        if (s != JFR_OK && s != JFR_PAUSED)
            break;
    }
    if (s == JFR_OK || s == JFR_PAUSED)
        while ((s = jfr_parser_finish(p)) == JFR_PAUSED && ++guard < 100000000) {
            ++*pauses_back;
            *bad += jfr_parser_status(p) != JFR_PAUSED;
        }
    tlog_printf(&c->r.log, "END %s\n", jfr_status_name(s));
    jfr_parser_free(p);
    return c->r.log;
}

static int fails, cases;

static void one(const char *what, const uint8_t *buf, size_t len, const names *nm, run_spec sp,
                const tlog *ref) {
    pctx c;
    long back, bad;
    tlog t = run(buf, len, nm, sp, &c, &back, &bad);
    cases++;
    const char *why = NULL;
    if (t.n != ref->n || memcmp(t.d, ref->d, t.n) != 0)
        why = "transcript differs from the unpaused run";
    else if (back != c.paused)
        why = "JFR_CB_PAUSE and JFR_PAUSED returns do not match";
    else if (bad)
        why = "jfr_parser_status() was not JFR_PAUSED after a pause";
    else if (c.in_cb_paused)
        why = "a callback saw jfr_parser_status() JFR_PAUSED";
    else if (sp.kind >= 0 && !c.paused)
        why = "no pause happened";
    if (why) {
        size_t k = 0;
        while (k < t.n && k < ref->n && t.d[k] == ref->d[k])
            k++;
        fprintf(stderr, "%s: %s, %s, feed %zu, pause in %s at %ld: %s "
                "(%ld paused, %ld JFR_PAUSED, %ld bad status, %ld in-callback; "
                "transcripts agree to byte %zu of %zu)\n",
                what, sp.ordered ? "ordered" : "file order", sp.next ? "next slice" : "rest fed",
                sp.feed, sp.kind >= 0 ? kind_name[sp.kind] : "-", sp.at, why, c.paused,
                back, bad, c.in_cb_paused, k, ref->n);
        fails++;
    }
    free(t.d);
}

/* live: the chunks are still being written (as_live), so the input ends
 * JFR_TRUNCATED, without on_chunk_end. */
static void check_input(const char *what, const uint8_t *buf, size_t len, const names *nm,
                        bool each, bool live) {
    static const size_t feeds[] = {0, 1, 2, 7, 13, 251, 4099};
    /* under valgrind (JFRSTREAM_TEST_SCALE < 1): whole and 1-byte slices,
     * no single-call runs */
    size_t nfeeds = test_scale() < 1 ? 2 : sizeof feeds / sizeof feeds[0];
    each = each && test_scale() >= 1;
    for (int ord = 0; ord < 2; ord++) {
        run_spec base = {.ordered = ord == 1, .kind = -1};
        pctx c;
        long back, bad;
        tlog ref = run(buf, len, nm, base, &c, &back, &bad);
        long calls[NK];
        memcpy(calls, c.n, sizeof calls);
        if (live ? !calls[K_EVENT] : !tlog_ends_ok(&ref)) {
            fprintf(stderr, "%s: the unpaused run did not end OK\n", what);
            fails++;
        }
        for (int kind = 0; kind < NK; kind++) {
            if (live && kind == K_END)
                continue;
            if (!calls[kind]) {
                fprintf(stderr, "%s: no %s call\n", what, kind_name[kind]);
                fails++;
                continue;
            }
            for (size_t f = 0; f < nfeeds; f++)
                for (int next = 0; next < 2; next++) {
                    run_spec sp = base;
                    sp.feed = feeds[f];
                    sp.next = next;
                    sp.kind = kind;
                    sp.at = 0; /* every call */
                    one(what, buf, len, nm, sp, &ref);
                    sp.at = calls[kind]; /* the last call only */
                    one(what, buf, len, nm, sp, &ref);
                }
            /* each single call in turn (small inputs) */
            if (each)
                for (long at = 1; at <= calls[kind]; at++)
                    for (size_t f = 0; f < 3; f++) {
                        run_spec sp = base;
                        sp.feed = feeds[f];
                        sp.next = at % 2;
                        sp.kind = kind;
                        sp.at = at;
                        one(what, buf, len, nm, sp, &ref);
                    }
        }
        free(ref.d);
    }
}

/* "A paused parser may also simply be reset or freed": paused in the
 * middle of the input (the kind's 3rd call, or its last), then reset, the
 * same parser reads the whole input again as a new one would. */
static void reset_while_paused(const char *what, const uint8_t *buf, size_t len, const names *nm) {
    run_spec none = {.kind = -1};
    pctx c;
    long back, bad;
    tlog ref = run(buf, len, nm, none, &c, &back, &bad);
    long calls[NK];
    memcpy(calls, c.n, sizeof calls);
    free(ref.d);
    for (int kind = 0; kind < NK; kind++)
        for (size_t feed = 0; feed <= 7; feed += 7) {
            memset(&c, 0, sizeof c);
            c.r.cfg.values = true;
            c.kind = kind;
            c.at = calls[kind] < 3 ? calls[kind] : 3;
            jfr_callbacks cb = {sizeof cb, p_begin, p_meta, p_record, p_event, p_end, p_error};
            jfr_parser *p = jfr_parser_new(NULL, &cb, &c);
            for (size_t k = 0; k < nm->n; k++)
                CHECK(jfr_parser_on(p, nm->v[k], p_handler, &c) == JFR_OK);
            jfr_status s = JFR_OK;
            for (size_t pos = 0; pos < len && s == JFR_OK;) {
                size_t n = feed && feed < len - pos ? feed : len - pos;
                s = jfr_parser_feed(p, buf + pos, n);
                pos += jfr_parser_consumed(p);
            }
            if (s == JFR_OK)
                s = jfr_parser_finish(p);
            cases++;
            if (s != JFR_PAUSED) {
                fprintf(stderr, "%s: pause in %s: %s, not JFR_PAUSED\n", what, kind_name[kind],
                        jfr_status_name(s));
                fails++;
            }
            jfr_parser_reset(p);
            free(c.r.log.d);
            memset(&c, 0, sizeof c);
            c.r.cfg.values = true;
            c.kind = -1;
            s = jfr_parser_feed(p, buf, len);
            if (s == JFR_OK)
                s = jfr_parser_finish(p);
            tlog_printf(&c.r.log, "END %s\n", jfr_status_name(s));
            jfr_parser_free(p);
            tlog again = run(buf, len, nm, none, &(pctx){0}, &back, &bad);
            if (c.r.log.n != again.n || memcmp(c.r.log.d, again.d, again.n) != 0) {
                fprintf(stderr, "%s: reset after a pause in %s (feed %zu): the transcript "
                        "differs from a new parser's\n", what, kind_name[kind], feed);
                fails++;
            }
            free(again.d);
            free(c.r.log.d);
        }
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: test_pause FILE...\n");
        return 2;
    }
    for (int i = 1; i < argc; i++) {
        size_t len;
        uint8_t *buf = read_file(argv[i], &len);
        if (!buf) {
            fprintf(stderr, "cannot read %s\n", argv[i]);
            return 1;
        }
        names nm = {0};
        jfr_callbacks cb = JFR_CALLBACKS_INIT;
        cb.on_metadata = collect;
        jfr_parser *p = jfr_parser_new(NULL, &cb, &nm);
        jfr_parser_feed(p, buf, len);
        jfr_parser_finish(p);
        jfr_parser_free(p);
        int f0 = fails, c0 = cases;
        bool small = len < 64 * 1024;
        check_input(argv[i], buf, len, &nm, small, false);
        reset_while_paused(argv[i], buf, len, &nm);
        uint8_t *live = as_live(buf, len);
        char what[512];
        snprintf(what, sizeof what, "%s (live)", argv[i]);
        if (live)
            check_input(what, live, len, &nm, small, true);
        else
            fprintf(stderr, "%s: chunks do not frame the file: no live run\n", argv[i]);
        printf("%s: %zu bytes, %zu event types, %d runs paused as unpaused, %d differ\n",
               argv[i], len, nm.n, (cases - c0) - (fails - f0), fails - f0);
        for (size_t k = 0; k < nm.n; k++)
            free(nm.v[k]);
        free(nm.v);
        free(live);
        free(buf);
    }
    return fails || g_failures ? 1 : 0;
}
