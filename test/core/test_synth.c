/* Synthetic chunks with exact control over the encoding: every string
 * encoding, signed/unsigned narrowing, events before metadata, forward pool
 * references, duplicate keys, reference cycles, two metadata records,
 * compressed and uncompressed integers, multi-chunk input. Each case is
 * replayed at many slicings and pause patterns; transcripts must match. */
#include "../harness.h"
#include "../synth.h"

#include <math.h>

/* Event k's string field, by encoding. */
static void put_string(sbuf *b, int k) {
    static const uint16_t emoji[] = {'a', 0xd83d, 0xde00, 'b', 0xdc00};
    static const uint8_t cafe[] = {'c', 'a', 'f', 0xe9};
    switch (k % 8) {
    case 0: sb_str_null(b); break;
    case 1: sb_str_empty(b); break;
    case 2: sb_str_pool(b, 7); break;
    case 3: sb_str_utf8(b, "h\xc3\xa9llo \xe2\x82\xac"); break;
    case 4: sb_str_chars(b, emoji, 5); break;
    case 5: sb_str_latin1(b, cafe, 4); break;
    case 6: sb_str_pool(b, 99); break; /* dangling */
    default: sb_str(b, "plain"); break;
    }
}
static const char *expect_string[8] = {
    NULL, "", "pooled \xe2\x9c\x93", "h\xc3\xa9llo \xe2\x82\xac",
    "a\xf0\x9f\x98\x80" "b\xed\xb0\x80", "caf\xc3\xa9", NULL, "plain"};
static const int expect_encoding[8] = {0, 1, 3, 3, 4, 5, 0, 4};

#define NEVENTS 16

static void put_event(sbuf *out, int k) {
    sbuf b = {.fixed = out->fixed};
    sb_long(&b, 100);                   /* type id */
    sb_long(&b, 2000 - 100 * (uint64_t)k); /* startTime: decreasing */
    sb_long(&b, (uint64_t)k);           /* duration */
    put_string(&b, k);
    sb_int(&b, 0xffffffffu);            /* i = -1 */
    sb_short(&b, (uint16_t)-264);       /* sh */
    sb_u8(&b, 0xff);                    /* b (@Unsigned) */
    sb_short(&b, 'Z');                  /* c */
    sb_u8(&b, (uint8_t)(k % 2));        /* z */
    sb_be(&b, 4, 0x3e800000);           /* f = 0.25f */
    double d = -0.1;
    uint64_t bits;
    memcpy(&bits, &d, 8);
    sb_be(&b, 8, bits);
    sb_long(&b, (uint64_t)(k % 4));     /* node: 0 null, 1, 2, 3 */
    sb_int(&b, 3);                      /* arr */
    sb_int(&b, 1);
    sb_int(&b, 2);
    sb_int(&b, 3);
    sb_long(&b, k == 5 ? 0x7fffffffffffffffull : (uint64_t)k * 1000); /* since (ms) */
    sb_record(out, &b, k % 3 == 0 ? 4 : 0); /* some padded sizes */
    free(b.d);
}

static void put_node(sbuf *b, uint64_t key, const char *name, uint64_t next) {
    sb_long(b, key);
    sb_str_utf8(b, name);
    sb_long(b, next);
}

static void put_checkpoint_typed(sbuf *out, int ctype) {
    sbuf b = {.fixed = out->fixed};
    sb_long(&b, 1);
    sb_long(&b, 1500);
    sb_long(&b, 0);
    sb_long(&b, 0); /* delta */
    if (b.fixed) sb_u8(&b, (uint8_t)ctype); else sb_var(&b, (uint64_t)ctype);
    sb_int(&b, 3); /* pools: String, Node, Node again (duplicate type) */
    sb_long(&b, 22);
    sb_int(&b, 1);
    sb_long(&b, 7);
    sb_str_utf8(&b, "pooled \xe2\x9c\x93");
    sb_long(&b, 30);
    sb_int(&b, 3);
    put_node(&b, 1, "A", 2);
    put_node(&b, 2, "B", 1);
    put_node(&b, 3, "self", 3);
    sb_long(&b, 30);
    sb_int(&b, 1);
    put_node(&b, 1, "A2", 2); /* duplicate key: the first definition wins */
    sb_record(out, &b, b.fixed ? 0 : 8);
    free(b.d);
}
static void put_checkpoint(sbuf *out) { put_checkpoint_typed(out, 1); }

/* The chunk-header checkpoint a JDK 14+ writer appends at each flush (type
 * 3, state = generation) and at chunk end (type 2, state 0). `chunk_bytes`
 * is the chunk size after this record. */
static void put_header_checkpoint(sbuf *out, int ctype, uint8_t state, uint64_t chunk_bytes) {
    sbuf b = {.fixed = out->fixed};
    sb_long(&b, 1);
    sb_long(&b, 1900);
    sb_long(&b, 0);
    sb_long(&b, 0);
    if (b.fixed) sb_u8(&b, (uint8_t)ctype); else sb_var(&b, (uint64_t)ctype);
    sb_int(&b, 1);
    sb_long(&b, 40); /* jdk.types.ChunkHeader */
    sb_int(&b, 1);
    sb_long(&b, 1);
    sb_int(&b, 68);
    sbuf h = {0};
    sb_raw(&h, "FLR\0", 4);
    sb_be(&h, 2, 2);
    sb_be(&h, 2, 1);
    sb_be(&h, 8, chunk_bytes);
    sb_be(&h, 8, 0);
    sb_be(&h, 8, 0);
    sb_be(&h, 8, 1700000000000000000ull);
    sb_be(&h, 8, 777);
    sb_be(&h, 8, 5000);
    sb_be(&h, 8, 1000000000);
    sb_u8(&h, state);
    sb_u8(&h, 0);
    sb_be(&h, 2, b.fixed ? 0 : 1);
    sb_raw(&b, h.d, h.n);
    free(h.d);
    sb_record(out, &b, 4);
    free(b.d);
}

static sel *make_meta(bool full) {
    sel *root = sel_new("root");
    sel *meta = sel_add(root, sel_new("metadata"));
    const char *prim[][2] = {{"long", "20"}, {"int", "21"}, {"java.lang.String", "22"},
                             {"short", "23"}, {"byte", "24"}, {"char", "25"},
                             {"boolean", "26"}, {"float", "27"}, {"double", "28"}};
    for (size_t i = 0; i < sizeof prim / sizeof prim[0]; i++)
        sel_class(meta, prim[i][0], prim[i][1], NULL);
    const char *ann = "java.lang.annotation.Annotation";
    sel_class(meta, "jdk.jfr.Timestamp", "200", ann);
    sel_class(meta, "jdk.jfr.Timespan", "201", ann);
    sel_class(meta, "jdk.jfr.Unsigned", "202", ann);
    sel_class(meta, "jdk.jfr.Label", "203", ann);
    sel *ch = sel_class(meta, "jdk.types.ChunkHeader", "40", NULL);
    sel_attr(ch, "simpleType", "true");
    sel_field(ch, "payload", "24", false, true);
    sel *node = sel_class(meta, "test.Node", "30", NULL);
    sel_field(node, "name", "22", false, false);
    sel_field(node, "next", "30", true, false);
    if (full) {
        sel *ev = sel_class(meta, "test.Event", "100", "jdk.jfr.Event");
        sel_annot(ev, "203", "Test Event");
        sel_annot(sel_field(ev, "startTime", "20", false, false), "200", "TICKS");
        sel_annot(sel_field(ev, "duration", "20", false, false), "201", "TICKS");
        sel_annot(sel_field(ev, "s", "22", false, false), "203", "A String");
        sel_field(ev, "i", "21", false, false);
        sel_field(ev, "sh", "23", false, false);
        sel_annot(sel_field(ev, "b", "24", false, false), "202", NULL);
        sel_field(ev, "c", "25", false, false);
        sel_field(ev, "z", "26", false, false);
        sel_field(ev, "f", "27", false, false);
        sel_field(ev, "d", "28", false, false);
        sel_field(ev, "node", "30", true, false);
        sel_field(ev, "arr", "21", false, true);
        sel_annot(sel_field(ev, "since", "20", false, false), "200", "MILLISECONDS_SINCE_EPOCH");
    }
    sel *region = sel_add(root, sel_new("region"));
    sel_attr(region, "locale", "en_US");
    sel_attr(region, "gmtOffset", "3600000");
    return root;
}

/* One chunk: partial metadata, events (forward refs), checkpoint, events,
 * full metadata last. */
static void build_chunk(sbuf *out, bool fixed) {
    sbuf body = {.fixed = fixed};
    sel *m1 = make_meta(false), *m2 = make_meta(true);
    sb_metadata(&body, m1, 1);
    for (int k = 0; k < NEVENTS / 2; k++)
        put_event(&body, k);
    put_checkpoint(&body);
    for (int k = NEVENTS / 2; k < NEVENTS; k++)
        put_event(&body, k);
    sb_metadata(&body, m2, 2);
    sel_free(m1);
    sel_free(m2);
    sb_chunk(out, &body, 1700000000000000000LL, 5000, 1000000000);
    free(body.d);
}

/* A live chunk as the JMX stream delivers it: rewritten header (size 68,
 * state 1), segment 1 = metadata, events (forward refs), FLUSH checkpoint;
 * segment 2 = events using segment 1's pools, a type-3 header checkpoint;
 * then the type-2 header checkpoint with state 0 ends the chunk. */
static void build_live_chunk(sbuf *out, bool fixed) {
    sbuf body = {.fixed = fixed};
    sel *m = make_meta(true);
    sb_metadata(&body, m, 2);
    sel_free(m);
    for (int k = 0; k < NEVENTS / 2; k++)
        put_event(&body, k);
    put_checkpoint(&body);
    for (int k = NEVENTS / 2; k < NEVENTS; k++)
        put_event(&body, k);
    put_header_checkpoint(&body, 3, 2, 0);
    put_header_checkpoint(&body, 2, 0, 0);
    sbuf hdr = {0};
    sb_chunk(&hdr, &(sbuf){.fixed = fixed}, 1700000000000000000LL, 5000, 1000000000);
    hdr.d[64] = 1; /* state: live */
    hdr.d[15] = 68; /* size as rewritten by the JMX stream */
    sb_raw(out, hdr.d, 68);
    sb_raw(out, body.d, body.n);
    free(hdr.d);
    free(body.d);
}

/* ---------------------------------------------------------- value checks */

typedef struct seen {
    int n;
    int order[NEVENTS * 4];
} seen;

static int check_event(jfr_parser *p, const jfr_event *e, void *u) {
    seen *s = u;
    jfr_value v, x, y;
    int k = (int)e->duration_ticks;
    s->order[s->n++] = k;
    CHECK(strcmp(e->type->name, "test.Event") == 0);
    CHECK(e->start_ticks == 2000 - 100 * k);
    CHECK(e->start_nanos == 1700000000000000000LL + (2000 - 100 * k) - 5000);
    CHECK(strcmp(jfr_parser_metadata(p)->types[0]->name, "long") == 0);
    CHECK(jfr_parser_metadata(p)->gmt_offset_ms == 3600000);
    CHECK(e->type->label && strcmp(e->type->label, "Test Event") == 0);
    /* string, by encoding */
    CHECK(jfr_event_field_named(e, "s", &v) == JFR_OK);
    if (expect_string[k % 8]) {
        CHECK(v.kind == JFR_KIND_STRING);
        CHECK(v.len == strlen(expect_string[k % 8]) &&
              memcmp(v.str, expect_string[k % 8], v.len) == 0);
        CHECK(v.encoding == expect_encoding[k % 8]);
    } else {
        CHECK(v.kind == JFR_KIND_NULL);
    }
    CHECK(v.field && strcmp(v.field->label, "A String") == 0);
    CHECK(jfr_event_field_named(e, "i", &v) == JFR_OK && v.kind == JFR_KIND_INT &&
          v.i == -1 && v.u == 4294967295u);
    CHECK(jfr_event_field_named(e, "sh", &v) == JFR_OK && v.i == -264 && v.u == 65272);
    CHECK(jfr_event_field_named(e, "b", &v) == JFR_OK && v.i == -1 && v.u == 255 &&
          (v.field->units & JFR_UNIT_UNSIGNED));
    CHECK(jfr_event_field_named(e, "c", &v) == JFR_OK && v.kind == JFR_KIND_CHAR && v.u == 'Z');
    CHECK(jfr_event_field_named(e, "z", &v) == JFR_OK && v.kind == JFR_KIND_BOOLEAN &&
          v.b == (k % 2));
    CHECK(jfr_event_field_named(e, "f", &v) == JFR_OK && v.kind == JFR_KIND_FLOAT && v.d == 0.25);
    CHECK(jfr_event_field_named(e, "d", &v) == JFR_OK && v.kind == JFR_KIND_DOUBLE && v.d == -0.1);
    CHECK(jfr_event_field_named(e, "startTime", &v) == JFR_OK &&
          (v.field->units & JFR_UNIT_TIMESTAMP_TICKS));
    CHECK(jfr_event_field_named(e, "since", &v) == JFR_OK &&
          (v.field->units & JFR_UNIT_TIMESTAMP_MILLIS) &&
          (k == 5 ? v.i == INT64_MAX : v.i == k * 1000));
    CHECK(jfr_event_field_named(e, "duration", &v) == JFR_OK &&
          (v.field->units & JFR_UNIT_TIMESPAN_TICKS));
    /* array, by index and by iteration */
    CHECK(jfr_event_field_named(e, "arr", &v) == JFR_OK && v.kind == JFR_KIND_ARRAY && v.count == 3);
    CHECK(jfr_value_index(&v, 2, &x) == JFR_OK && x.i == 3);
    CHECK(jfr_value_index(&v, 3, &x) == JFR_NOT_FOUND);
    /* pool references, duplicates, cycles */
    CHECK(jfr_event_field_named(e, "node", &v) == JFR_OK);
    switch (k % 4) {
    case 0:
        CHECK(v.kind == JFR_KIND_NULL && v.pooled && v.key == 0);
        break;
    case 1: /* A -> B -> A -> ... (A2 redefines key 1 later: ignored) */
        CHECK(v.kind == JFR_KIND_OBJECT && v.key == 1);
        CHECK(jfr_value_field(&v, 0, &x) == JFR_OK && x.len == 1 && memcmp(x.str, "A", 1) == 0);
        CHECK(jfr_value_field(&v, 1, &x) == JFR_OK && x.kind == JFR_KIND_OBJECT && x.key == 2);
        CHECK(jfr_value_field(&x, 1, &y) == JFR_OK && y.kind == JFR_KIND_OBJECT && y.key == 1);
        break;
    case 2:
        CHECK(v.kind == JFR_KIND_OBJECT && v.key == 2);
        break;
    case 3: { /* self reference: followed one level per call, as often as
               * asked (no depth limit, no loop): the same object each time */
        jfr_value cur = v;
        int steps = 0;
        while (cur.kind == JFR_KIND_OBJECT && steps < 1000) {
            CHECK(jfr_value_field(&cur, 1, &x) == JFR_OK);
            CHECK(x.kind == JFR_KIND_OBJECT && x.key == v.key && x.type == v.type);
            cur = x;
            steps++;
        }
        CHECK(cur.kind == JFR_KIND_OBJECT && steps == 1000);
        break;
    }
    }
    CHECK(jfr_event_field_named(e, "nope", &v) == JFR_NOT_FOUND);
    return JFR_CB_CONTINUE;
}

static void check_values_live(const uint8_t *buf, size_t len, bool ordered, int nchunks,
                              bool live);
static void check_values(const uint8_t *buf, size_t len, bool ordered, int nchunks) {
    check_values_live(buf, len, ordered, nchunks, false);
}
static int count_end(jfr_parser *p, const jfr_chunk_info *c, void *u) {
    (void)p;
    (void)c;
    (*(int *)u)++;
    return JFR_CB_CONTINUE;
}
static void check_values_live(const uint8_t *buf, size_t len, bool ordered, int nchunks,
                              bool live) {
    seen s = {0};
    jfr_callbacks cb = {.size = sizeof cb, .on_event = check_event};
    jfr_options o;
    jfr_options_init(&o);
    o.ordered = ordered;
    jfr_parser *p = jfr_parser_new(&o, &cb, &s);
    CHECK(jfr_parser_feed(p, buf, len) == JFR_OK);
    CHECK(jfr_parser_finish(p) == JFR_OK);
    CHECK(jfr_parser_chunks(p) == (uint64_t)nchunks);
    CHECK(s.n == NEVENTS * nchunks);
    for (int i = 0; i < NEVENTS; i++) {
        int h = NEVENTS / 2; /* live: sorted within each flush segment */
        int want = !ordered ? i : !live ? NEVENTS - 1 - i : i < h ? h - 1 - i : NEVENTS - 1 - (i - h);
        CHECK(s.order[i] == want);
    }
    jfr_parser_free(p);
}

/* Every slicing and pause pattern gives the reference transcript. */
static void check_replays(const char *name, const uint8_t *buf, size_t len) {
    static const size_t feeds[] = {1, 2, 3, 5, 7, 13, 64, 67, 68, 69, 4096};
    for (int ordered = 0; ordered < 2; ordered++) {
        run_cfg base = {.values = true, .ordered = ordered};
        tlog ref = run_parser(buf, len, base);
        CHECK(tlog_ends_ok(&ref));
        int cases = 0;
        for (size_t f = 0; f < sizeof feeds / sizeof feeds[0]; f++)
            for (int pause = 0; pause < 3; pause++) {
                run_cfg c = base;
                c.feed = feeds[f];
                c.pause_every = pause == 0 ? 0 : pause == 1 ? 1 : 3;
                tlog t = run_parser(buf, len, c);
                if (t.n != ref.n || memcmp(t.d, ref.d, t.n) != 0) {
                    fprintf(stderr, "%s: feed %zu pause %d ordered %d differs\n", name,
                            feeds[f], c.pause_every, ordered);
                    g_failures++;
                }
                free(t.d);
                cases++;
            }
        for (unsigned seed = 1; seed <= 20; seed++) {
            run_cfg c = base;
            c.feed = 1 + seed * 37;
            c.seed = seed;
            c.pause_every = (int)(seed % 4);
            tlog t = run_parser(buf, len, c);
            if (t.n != ref.n || memcmp(t.d, ref.d, t.n) != 0) {
                fprintf(stderr, "%s: random seed %u differs\n", name, seed);
                g_failures++;
            }
            free(t.d);
            cases++;
        }
        printf("%s (ordered=%d): %d replays identical to the whole-buffer run\n", name,
               ordered, cases);
        free(ref.d);
    }
}

static int record_reuse(jfr_parser *p, const jfr_metadata *m, void *u) {
    (void)p;
    char *out = u;
    size_t n = strlen(out);
    out[n] = m->reused ? 'R' : 'N';
    out[n + 1] = 0;
    return JFR_CB_CONTINUE;
}

/* Identical metadata bytes in the next chunk: the compiled table is reused. */
static void check_reuse(const uint8_t *buf, size_t len, const char *want) {
    char got[16] = "";
    jfr_callbacks cb = {.size = sizeof cb, .on_metadata = record_reuse};
    jfr_parser *p = jfr_parser_new(NULL, &cb, got);
    CHECK(jfr_parser_feed(p, buf, len) == JFR_OK && jfr_parser_finish(p) == JFR_OK);
    CHECK(strcmp(got, want) == 0);
    printf("metadata reuse: %s (want %s)\n", got, want);
    jfr_parser_free(p);
}

/* Per-type subscriptions: handlers run after on_event, in subscription
 * order; types nobody wants are never delivered. */
static char g_calls[4096];
static int sub_generic(jfr_parser *p, const jfr_event *e, void *u) {
    (void)p; (void)e; (void)u;
    strcat(g_calls, "g");
    return JFR_CB_CONTINUE;
}
static int sub_a(jfr_parser *p, const jfr_event *e, void *u) {
    (void)p; (void)u;
    CHECK(strcmp(e->type->name, "test.Event") == 0);
    strcat(g_calls, "a");
    return JFR_CB_CONTINUE;
}
static int sub_b(jfr_parser *p, const jfr_event *e, void *u) {
    (void)p; (void)e;
    strcat(g_calls, (const char *)u);
    return JFR_CB_CONTINUE;
}
static int sub_from_meta(jfr_parser *p, const jfr_metadata *m, void *u) {
    (void)u;
    /* choose by looking at the types: every event type under "test." */
    for (uint32_t i = 0; i < m->ntypes; i++)
        if (m->types[i]->is_event && strncmp(m->types[i]->name, "test.", 5) == 0)
            CHECK(jfr_parser_on(p, m->types[i]->name, sub_a, NULL) == JFR_OK);
    return JFR_CB_CONTINUE;
}
static int sub_refused(jfr_parser *p, const jfr_event *e, void *u) {
    (void)e; (void)u;
    CHECK(jfr_parser_on(p, "test.Event", sub_b, "z") == JFR_INVALID_STATE);
    return JFR_CB_CONTINUE;
}
static void check_subscriptions(const uint8_t *buf, size_t len) {
    /* only per-type handlers */
    g_calls[0] = 0;
    jfr_parser *p = jfr_parser_new(NULL, NULL, NULL);
    CHECK(jfr_parser_on(p, "test.Event", sub_a, NULL) == JFR_OK);
    CHECK(jfr_parser_on(p, "test.Event", sub_b, "b") == JFR_OK);
    CHECK(jfr_parser_on(p, "no.Such", sub_b, "x") == JFR_OK);
    CHECK(jfr_parser_on(p, "test.Node", sub_b, "n") == JFR_OK); /* not an event type */
    CHECK(jfr_parser_on(p, NULL, sub_b, "x") == JFR_INVALID_ARG);
    CHECK(jfr_parser_feed(p, buf, len) == JFR_OK && jfr_parser_finish(p) == JFR_OK);
    char want[4096] = "";
    for (int i = 0; i < NEVENTS; i++)
        strcat(want, "ab");
    CHECK(strcmp(g_calls, want) == 0);
    jfr_parser_free(p);
    /* generic first, then the handlers */
    g_calls[0] = 0;
    jfr_callbacks cb = {.size = sizeof cb, .on_event = sub_generic};
    p = jfr_parser_new(NULL, &cb, NULL);
    CHECK(jfr_parser_on(p, "test.Event", sub_b, "b") == JFR_OK);
    CHECK(jfr_parser_feed(p, buf, len) == JFR_OK && jfr_parser_finish(p) == JFR_OK);
    want[0] = 0;
    for (int i = 0; i < NEVENTS; i++)
        strcat(want, "gb");
    CHECK(strcmp(g_calls, want) == 0);
    jfr_parser_free(p);
    /* a subscription to an absent type: nothing delivered */
    g_calls[0] = 0;
    p = jfr_parser_new(NULL, NULL, NULL);
    CHECK(jfr_parser_on(p, "no.Such", sub_b, "x") == JFR_OK);
    CHECK(jfr_parser_feed(p, buf, len) == JFR_OK && jfr_parser_finish(p) == JFR_OK);
    CHECK(g_calls[0] == 0);
    jfr_parser_free(p);
    /* subscribing from on_metadata applies to the chunk at hand */
    g_calls[0] = 0;
    jfr_callbacks mc = {.size = sizeof mc, .on_metadata = sub_from_meta};
    p = jfr_parser_new(NULL, &mc, NULL);
    CHECK(jfr_parser_feed(p, buf, len) == JFR_OK && jfr_parser_finish(p) == JFR_OK);
    CHECK(strlen(g_calls) == NEVENTS);
    jfr_parser_free(p);
    jfr_callbacks rc = {.size = sizeof rc, .on_event = sub_refused};
    p = jfr_parser_new(NULL, &rc, NULL);
    CHECK(jfr_parser_feed(p, buf, len) == JFR_OK && jfr_parser_finish(p) == JFR_OK);
    jfr_parser_free(p);
    printf("subscriptions: per-type handlers in order, generic first, absent types silent, "
           "from on_metadata\n");
}

/* The ABI rule (jfrstream.h, "STRUCTS YOU HAND IN"): a struct not initialised
 * (size 0) is refused; a caller compiled when the struct was shorter has the
 * members past its size read as defaults (never its bytes beyond them); a
 * caller compiled against a longer struct is read up to the library's size. */
static void check_sized_structs(const uint8_t *d, size_t n) {
    jfr_options zo;
    memset(&zo, 0, sizeof zo);
    jfr_callbacks zc;
    memset(&zc, 0, sizeof zc);
    CHECK(jfr_parser_new(&zo, NULL, NULL) == NULL);
    CHECK(jfr_parser_new(NULL, &zc, NULL) == NULL);
    jfr_options io = JFR_OPTIONS_INIT;
    jfr_callbacks ic = JFR_CALLBACKS_INIT;
    CHECK(io.size == sizeof io && ic.size == sizeof ic && !ic.on_event && !io.resync);

    /* older caller: options without resync and max_memory, callbacks without
     * on_chunk_end and on_error; the bytes after them are garbage */
    union { jfr_options o; unsigned char b[sizeof(jfr_options)]; } old_o;
    memset(old_o.b, 0xff, sizeof old_o.b);
    old_o.o.size = offsetof(jfr_options, resync);
    memset(&old_o.o.allocator, 0, sizeof old_o.o.allocator);
    old_o.o.max_chunk_size = 0;
    old_o.o.ordered = false;
    old_o.o.jdk_time_base = false;
    old_o.o.max_memory = 1; /* past its size: read, every allocation would fail */
    int ends = 0;
    jfr_callbacks old_c = {.size = offsetof(jfr_callbacks, on_chunk_end),
                           .on_chunk_end = count_end};
    jfr_parser *p = jfr_parser_new(&old_o.o, &old_c, &ends);
    CHECK(p != NULL);
    CHECK(jfr_parser_feed(p, d, n) == JFR_OK && jfr_parser_finish(p) == JFR_OK);
    CHECK(ends == 0 && jfr_parser_chunks(p) == 1);
    jfr_parser_free(p);

    /* newer caller of jfr_options: 64 more bytes the library does not know
     * (garbage), its own members read (max_memory 1: every allocation
     * refused, JFR_LIMIT), and without them the defaults */
    struct { jfr_options o; uint64_t more[8]; } new_o;
    memset(&new_o, 0xff, sizeof new_o);
    jfr_options_init(&new_o.o);
    new_o.o.size = sizeof new_o;
    p = jfr_parser_new(&new_o.o, NULL, NULL);
    CHECK(p != NULL);
    CHECK(jfr_parser_feed(p, d, n) == JFR_OK && jfr_parser_finish(p) == JFR_OK);
    CHECK(jfr_parser_chunks(p) == 1);
    jfr_parser_free(p);
    new_o.o.max_memory = 4096;
    p = jfr_parser_new(&new_o.o, NULL, NULL);
    CHECK(p != NULL);
    jfr_status ls = jfr_parser_feed(p, d, n);
    if (ls == JFR_OK)
        ls = jfr_parser_finish(p);
    CHECK(ls == JFR_LIMIT);
    jfr_parser_free(p);

    /* newer caller of jfr_callbacks: 64 more bytes the library does not know */
    struct { jfr_callbacks c; void *more[8]; } new_c;
    memset(&new_c, 0xff, sizeof new_c);
    jfr_callbacks_init(&new_c.c);
    new_c.c.size = sizeof new_c;
    new_c.c.on_chunk_end = count_end;
    p = jfr_parser_new(NULL, &new_c.c, &ends);
    CHECK(p != NULL);
    CHECK(jfr_parser_feed(p, d, n) == JFR_OK && jfr_parser_finish(p) == JFR_OK);
    CHECK(ends == 1);
    /* experimental settings: before the first byte only */
    CHECK(jfr_parser_set_threads(p, 2) == JFR_INVALID_STATE);
    jfr_parser_reset(p);
    CHECK(jfr_parser_set_threads(p, 2) == JFR_OK);
    CHECK(jfr_parser_set_threads(NULL, 2) == JFR_INVALID_ARG);
    jfr_parser_free(p);
}

/* ------------------------------------------------- ordered delivery */

/* Events by end time (start + duration, wrapping like the parser's sum),
 * ties in file order: the reference, by comparison. */
typedef struct tick_ev {
    int64_t end;
    int seq;
} tick_ev;

static int cmp_tick(const void *a, const void *b) {
    const tick_ev *x = a, *y = b;
    if (x->end != y->end)
        return x->end < y->end ? -1 : 1;
    return (x->seq > y->seq) - (x->seq < y->seq);
}

typedef struct tick_got {
    int n, *seq;
} tick_got;

static int on_tick(jfr_parser *p, const jfr_event *e, void *u) {
    (void)p;
    tick_got *g = u;
    jfr_value v;
    CHECK(jfr_event_field_named(e, "seq", &v) == JFR_OK);
    g->seq[g->n++] = (int)v.i;
    return JFR_CB_CONTINUE;
}

/* `ordered` delivery of chunks whose ends are sorted, reversed, in a narrow
 * or the full 64-bit range (negative starts, durations that wrap), with
 * many ties: the order of a stable sort by end, for each shape. */
static void check_ordered_ticks(void) {
    enum { N = 3000 };
    uint64_t seed = 0x51ed2701;
    for (int shape = 0; shape < 5; shape++) {
        for (int fixed = 0; fixed < 2; fixed++) {
            sel *root = make_meta(false);
            sel *meta = root->kids[0];
            sel *ev = sel_class(meta, "test.Tick", "101", "jdk.jfr.Event");
            sel_annot(sel_field(ev, "startTime", "20", false, false), "200", "TICKS");
            sel_annot(sel_field(ev, "duration", "20", false, false), "201", "TICKS");
            sel_field(ev, "seq", "21", false, false);
            sbuf body = {.fixed = fixed};
            sb_metadata(&body, root, 1);
            sel_free(root);
            static tick_ev want[N];
            for (int k = 0; k < N; k++) {
                uint64_t r = test_splitmix(&seed), start, dur;
                switch (shape) {
                case 0: start = (uint64_t)k * 10; dur = 5; break;        /* sorted */
                case 1: start = (uint64_t)(N - k) * 10; dur = 0; break;  /* reversed */
                case 2: start = 1000 + r % 50; dur = (r >> 8) % 4; break; /* ties */
                case 3: start = r; dur = test_splitmix(&seed); break;    /* 64 bits */
                default: /* extremes among small values */
                    start = r % 7 == 0 ? (uint64_t)INT64_MAX : r % 7 == 1 ? (uint64_t)INT64_MIN
                                                                          : r % 1000;
                    dur = r % 5 == 0 ? (uint64_t)INT64_MAX : r % 5 == 1 ? UINT64_MAX : 0;
                    break;
                }
                sbuf b = {.fixed = fixed};
                sb_long(&b, 101);
                sb_long(&b, start);
                sb_long(&b, dur);
                sb_int(&b, (uint32_t)k);
                sb_record(&body, &b, 0);
                free(b.d);
                want[k] = (tick_ev){(int64_t)(start + dur), k};
            }
            sbuf chunk = {0};
            sb_chunk(&chunk, &body, 1700000000000000000LL, 0, 1000000000);
            free(body.d);
            qsort(want, N, sizeof *want, cmp_tick);
            static int seq[N];
            tick_got got = {0, seq};
            jfr_options o = JFR_OPTIONS_INIT;
            o.ordered = true;
            jfr_callbacks cb = {.size = sizeof cb, .on_event = on_tick};
            jfr_parser *p = jfr_parser_new(&o, &cb, &got);
            CHECK(jfr_parser_feed(p, chunk.d, chunk.n) == JFR_OK && jfr_parser_finish(p) == JFR_OK);
            CHECK(got.n == N);
            int same = 0;
            for (int k = 0; k < got.n; k++)
                same += seq[k] == want[k].seq;
            CHECK(same == N);
            jfr_parser_free(p);
            free(chunk.d);
        }
    }
    printf("ordered: 5 shapes of 3000 events by end time, ties in file order\n");
}

typedef struct reserved_seen {
    int events, typed_records, records;
} reserved_seen;

static int reserved_event(jfr_parser *p, const jfr_event *e, void *u) {
    (void)p;
    (void)e;
    ((reserved_seen *)u)->events++;
    return JFR_CB_CONTINUE;
}

static int reserved_record(jfr_parser *p, const jfr_record *r, void *u) {
    (void)p;
    reserved_seen *x = u;
    x->records++;
    x->typed_records += r->type != NULL;
    return JFR_CB_CONTINUE;
}

/* Metadata that names event classes with the ids 0 and 1: records of type 0
 * and 1 are still the metadata and the checkpoints (as the JDK reads them),
 * never events, whichever path delivers (per-record walk, event list,
 * ordered). A fuzzer input made the walk deliver the metadata record. */
static void check_reserved_ids(void) {
    for (int fixed = 0; fixed < 2; fixed++) {
        sel *root = make_meta(false);
        sel *meta = root->kids[0];
        const char *ids[] = {"0", "1", "102"}, *names[] = {"test.Id0", "test.Id1", "test.Id102"};
        for (int i = 0; i < 3; i++) {
            sel *ev = sel_class(meta, names[i], ids[i], "jdk.jfr.Event");
            sel_annot(sel_field(ev, "startTime", "20", false, false), "200", "TICKS");
        }
        sbuf body = {.fixed = fixed};
        sb_metadata(&body, root, 1);
        sel_free(root);
        put_checkpoint(&body);
        for (int k = 0; k < 5; k++) {
            sbuf b = {.fixed = fixed};
            sb_long(&b, 102);
            sb_long(&b, (uint64_t)k);
            sb_record(&body, &b, 0);
            free(b.d);
        }
        sbuf chunk = {0};
        sb_chunk(&chunk, &body, 1700000000000000000LL, 0, 1000000000);
        free(body.d);
        for (int mode = 0; mode < 3; mode++) { /* walk with on_record, list, ordered */
            reserved_seen x = {0};
            jfr_options o = JFR_OPTIONS_INIT;
            o.ordered = mode == 2;
            jfr_callbacks cb = {.size = sizeof cb, .on_event = reserved_event,
                                .on_record = mode == 0 ? reserved_record : NULL};
            jfr_parser *p = jfr_parser_new(&o, &cb, &x);
            CHECK(jfr_parser_feed(p, chunk.d, chunk.n) == JFR_OK && jfr_parser_finish(p) == JFR_OK);
            CHECK(x.events == 5);
            CHECK(mode != 0 || (x.records == 7 && x.typed_records == 5));
            jfr_parser_free(p);
        }
        free(chunk.d);
    }
    printf("reserved ids: event classes 0 and 1 in the metadata, no record of type 0 or 1 an event\n");
}

int main(void) {
    for (int fixed = 0; fixed < 2; fixed++) {
        sbuf one = {0}, two = {0};
        build_chunk(&one, fixed);
        build_chunk(&two, fixed);
        build_chunk(&two, fixed);
        const char *mode = fixed ? "uncompressed" : "compressed";
        check_values(one.d, one.n, false, 1);
        check_values(one.d, one.n, true, 1);
        check_subscriptions(one.d, one.n);
        check_sized_structs(one.d, one.n);
        check_values(two.d, two.n, false, 2);
        check_reuse(two.d, two.n, "NR");
        char name[64];
        snprintf(name, sizeof name, "synthetic %s x2", mode);
        check_replays(name, two.d, two.n);
        free(one.d);
        free(two.d);
    }
    check_ordered_ticks();
    check_reserved_ids();
    /* one of each: compressed chunk followed by an uncompressed one */
    sbuf mix = {0};
    build_chunk(&mix, false);
    build_chunk(&mix, true);
    check_values(mix.d, mix.n, true, 2);
    check_reuse(mix.d, mix.n, "NN");
    free(mix.d);
    /* live chunks (JMX stream shape), alone, two in a row, then a finished one */
    for (int fixed = 0; fixed < 2; fixed++) {
        sbuf live = {0}, mixed = {0};
        build_live_chunk(&live, fixed);
        check_values_live(live.d, live.n, false, 1, true);
        check_values_live(live.d, live.n, true, 1, true);
        build_live_chunk(&mixed, fixed);
        build_live_chunk(&mixed, fixed);
        build_chunk(&mixed, fixed);
        check_values_live(mixed.d, mixed.n, false, 3, true);
        int ends = 0;
        jfr_callbacks cb = {.size = sizeof cb, .on_chunk_end = count_end};
        jfr_parser *p = jfr_parser_new(NULL, &cb, &ends);
        CHECK(jfr_parser_feed(p, mixed.d, mixed.n) == JFR_OK && jfr_parser_finish(p) == JFR_OK);
        CHECK(ends == 3);
        jfr_parser_free(p);
        char name[64];
        snprintf(name, sizeof name, "live %s x2 + finished", fixed ? "uncompressed" : "compressed");
        check_replays(name, mixed.d, mixed.n);
        /* a stream cut inside the second segment: segment 1 delivered, the rest reported */
        seen sn = {0};
        cb = (jfr_callbacks){.size = sizeof cb, .on_event = check_event};
        p = jfr_parser_new(NULL, &cb, &sn);
        CHECK(jfr_parser_feed(p, live.d, live.n - 150) == JFR_OK);
        CHECK(jfr_parser_finish(p) == JFR_TRUNCATED);
        CHECK(sn.n == NEVENTS / 2);
        CHECK(strstr(jfr_parser_error(p), "after 1 complete flush segment; ") != NULL);
        printf("cut live stream: %d events delivered; %s\n", sn.n, jfr_parser_error(p));
        jfr_parser_free(p);
        free(live.d);
        free(mixed.d);
    }
    printf("%d failures\n", g_failures);
    return g_failures ? 1 : 0;
}
