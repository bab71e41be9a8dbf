/* test_writer.c — the chunk writer (jfr_writer_*, jfrstream.h): each FILE
 * written without one event type (kept by type in on_record, or by event in
 * on_event), and without every other event, re-parses to the same events
 * (type and record bytes, in order) minus those dropped, fed whole and a
 * byte at a time; the written chunks' checkpoint chain and metadata offset
 * are those a reader follows; a one-chunk file framed as a live stream (its
 * header as at the chunk's start) is written as one finished chunk with
 * the same events; max_chunk_size is a JFR_LIMIT, not an
 * allocation; an ordered parser's events are refused; bad arguments. */
#include "jfrstream.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;
#define CHECK(c, ...)                                                                       \
    do {                                                                                    \
        if (!(c)) {                                                                         \
            failures++;                                                                     \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                            \
            fprintf(stderr, __VA_ARGS__);                                                   \
            fputc('\n', stderr);                                                            \
        }                                                                                   \
    } while (0)

typedef struct bytes {
    unsigned char *p;
    size_t n, cap;
} bytes;

static void put(bytes *b, const void *d, size_t n) {
    if (b->n + n > b->cap) {
        b->cap = (b->n + n) * 2;
        b->p = realloc(b->p, b->cap);
        if (!b->p)
            abort();
    }
    memcpy(b->p + b->n, d, n);
    b->n += n;
}

/* The events of an input as a transcript: type name, then record bytes. */
typedef struct run {
    const unsigned char *in;
    bytes log;
    jfr_writer *w;
    bytes out;
    const char *drop_type; /* dropped by type (on_record) */
    int drop_every;        /* 2: every other event dropped (on_event) */
    uint64_t seen;
    jfr_status werr;
    uint64_t chunks_checked;
} run;

static void log_event(bytes *log, const char *name, const unsigned char *rec, uint64_t n) {
    put(log, name, strlen(name) + 1);
    put(log, &n, sizeof n);
    put(log, rec, (size_t)n);
}

static int w_write(void *user, const void *buf, size_t len) {
    put(user, buf, len);
    return 0;
}

static int on_begin(jfr_parser *p, const jfr_chunk_info *c, void *user) {
    run *r = user;
    if (r->w && !r->werr)
        r->werr = jfr_writer_begin(r->w, p, c);
    return JFR_CB_CONTINUE;
}

static int on_end(jfr_parser *p, const jfr_chunk_info *c, void *user) {
    run *r = user;
    if (r->w && !r->werr)
        r->werr = jfr_writer_end(r->w, p, c);
    return JFR_CB_CONTINUE;
}

static int on_record(jfr_parser *p, const jfr_record *rec, void *user) {
    run *r = user;
    if (!r->w || r->werr)
        return JFR_CB_CONTINUE;
    bool keep = rec->type_id <= 1 ||
                (rec->type && !r->drop_every &&
                 !(r->drop_type && strcmp(rec->type->name, r->drop_type) == 0));
    if (keep)
        r->werr = jfr_writer_record(r->w, p, rec);
    return JFR_CB_CONTINUE;
}

static int on_event(jfr_parser *p, const jfr_event *e, void *user) {
    (void)p;
    run *r = user;
    r->seen++;
    bool dropped = (r->drop_type && strcmp(e->type->name, r->drop_type) == 0) ||
                   (r->drop_every && r->seen % (uint64_t)r->drop_every == 0);
    if (!dropped)
        log_event(&r->log, e->type->name, r->in + e->offset, e->size);
    if (r->w && !r->werr && r->drop_every && !dropped)
        r->werr = jfr_writer_event(r->w, e);
    return JFR_CB_CONTINUE;
}

/* Checks on each written chunk's header: the checkpoint chain ends at delta
 * 0 and every link is a checkpoint; the metadata offset is a type-0 record. */
static int on_check(jfr_parser *p, const jfr_chunk_info *c, void *user) {
    (void)p;
    run *r = user;
    const unsigned char *base = r->in + c->offset;
    uint64_t v, t;
    size_t k;
    CHECK(c->metadata_offset > 0 && c->metadata_offset < c->size, "metadata offset");
    k = jfr_varint_decode(base + c->metadata_offset, base + c->size, &v);
    CHECK(k && jfr_varint_decode(base + c->metadata_offset + k, base + c->size, &t) && t == 0,
          "metadata offset names a metadata record");
    int64_t cp = c->cp_offset;
    for (int links = 0; cp && links < 100000; links++) {
        const unsigned char *q = base + cp, *end = base + c->size;
        uint64_t size, type, st, du, delta;
        q += jfr_varint_decode(q, end, &size);
        q += jfr_varint_decode(q, end, &type);
        q += jfr_varint_decode(q, end, &st);
        q += jfr_varint_decode(q, end, &du);
        CHECK(jfr_varint_decode(q, end, &delta) && type == 1, "checkpoint at %lld",
              (long long)cp);
        if (type != 1 || !delta)
            break;
        cp += (int64_t)delta;
        CHECK(cp > 0 && cp < c->size, "delta inside the chunk");
        if (cp <= 0 || cp >= c->size)
            break;
    }
    r->chunks_checked++;
    return JFR_CB_CONTINUE;
}

static bool parse(const unsigned char *buf, size_t n, run *r, size_t slice, bool ordered,
                  jfr_chunk_cb end_cb) {
    jfr_options o = JFR_OPTIONS_INIT;
    o.ordered = ordered;
    jfr_callbacks cb = {.size = sizeof cb, .on_chunk_begin = on_begin, .on_record = on_record,
                        .on_event = on_event, .on_chunk_end = end_cb ? end_cb : on_end};
    jfr_parser *p = jfr_parser_new(&o, &cb, r);
    r->in = buf;
    jfr_status s = JFR_OK;
    for (size_t i = 0; i < n && s == JFR_OK; i += slice)
        s = jfr_parser_feed(p, buf + i, n - i < slice ? n - i : slice);
    if (s == JFR_OK)
        s = jfr_parser_finish(p);
    if (s)
        fprintf(stderr, "parse: %s\n", jfr_parser_error(p));
    jfr_parser_free(p);
    return s == JFR_OK;
}

/* The most frequent event type of the input. */
typedef struct tcount {
    char name[256];
    uint64_t n;
} tcount;
static tcount types[4096];
static size_t ntypes;
static int count_event(jfr_parser *p, const jfr_event *e, void *user) {
    (void)p;
    (void)user;
    for (size_t i = 0; i < ntypes; i++)
        if (strcmp(types[i].name, e->type->name) == 0) {
            types[i].n++;
            return JFR_CB_CONTINUE;
        }
    if (ntypes < 4096) {
        snprintf(types[ntypes].name, sizeof types[ntypes].name, "%s", e->type->name);
        types[ntypes++].n = 1;
    }
    return JFR_CB_CONTINUE;
}

static void one(const char *path, const unsigned char *buf, size_t n, const char *drop,
                int every, size_t slice) {
    run in = {.drop_type = drop, .drop_every = every};
    jfr_writer_config wc = JFR_WRITER_CONFIG_INIT;
    wc.write = w_write;
    wc.user = &in.out;
    in.w = jfr_writer_new(&wc);
    CHECK(in.w, "writer");
    CHECK(parse(buf, n, &in, slice, false, NULL), "%s: input parses", path);
    CHECK(in.werr == JFR_OK, "%s: writer: %s", path, jfr_writer_error(in.w));
    run back = {0};
    CHECK(parse(in.out.p, in.out.n, &back, slice, false, on_check), "%s: output re-parses",
          path);
    CHECK(back.chunks_checked == jfr_writer_chunks(in.w), "%s: chunks %llu of %llu", path,
          (unsigned long long)back.chunks_checked, (unsigned long long)jfr_writer_chunks(in.w));
    CHECK(in.log.n == back.log.n && memcmp(in.log.p, back.log.p, in.log.n) == 0,
          "%s drop %s every %d: events differ (%zu vs %zu bytes of transcript)", path,
          drop ? drop : "-", every, in.log.n, back.log.n);
    printf("%s: drop %s%s%d, slice %zu: %llu events in, %zu -> %zu bytes, %llu chunks, "
           "events equal\n", path, drop ? drop : "", drop ? " " : "every ", every, slice,
           (unsigned long long)in.seen, n, in.out.n, (unsigned long long)back.chunks_checked);
    jfr_writer_free(in.w);
    free(in.log.p);
    free(in.out.p);
    free(back.log.p);
    free(back.out.p);
}

static void limits(const unsigned char *buf, size_t n) {
    run in = {0};
    jfr_writer_config wc = JFR_WRITER_CONFIG_INIT;
    wc.write = w_write;
    wc.user = &in.out;
    wc.max_chunk_size = 200;
    in.w = jfr_writer_new(&wc);
    parse(buf, n, &in, n, false, NULL);
    CHECK(in.werr == JFR_LIMIT, "max_chunk_size 200: %s", jfr_status_name(in.werr));
    CHECK(strstr(jfr_writer_error(in.w), "chunk 0 at byte ") != NULL, "message: %s",
          jfr_writer_error(in.w));
    CHECK(in.out.n == 0, "nothing written past the limit");
    printf("limit: %s\n", jfr_writer_error(in.w));
    jfr_writer_free(in.w);
    free(in.log.p);
    /* an ordered parser's events are not in file order */
    run o = {.drop_every = 2};
    wc.max_chunk_size = 0;
    wc.user = &o.out;
    o.w = jfr_writer_new(&wc);
    parse(buf, n, &o, n, true, NULL);
    CHECK(o.werr == JFR_INVALID_STATE, "ordered: %s", jfr_status_name(o.werr));
    jfr_writer_free(o.w);
    free(o.log.p);
    free(o.out.p);
    /* bad arguments */
    jfr_writer_config bad = {0};
    CHECK(jfr_writer_new(&bad) == NULL, "size 0");
    CHECK(jfr_writer_new(NULL) == NULL, "NULL config");
    jfr_writer_config nowrite = JFR_WRITER_CONFIG_INIT;
    CHECK(jfr_writer_new(&nowrite) == NULL, "no write");
    CHECK(jfr_writer_begin(NULL, NULL, NULL) == JFR_INVALID_ARG, "NULL begin");
    CHECK(jfr_writer_chunks(NULL) == 0, "NULL chunks");
    jfr_writer_free(NULL);
}

int main(int argc, char **argv) {
    for (int i = 1; i < argc; i++) {
        FILE *f = fopen(argv[i], "rb");
        if (!f) {
            perror(argv[i]);
            return 1;
        }
        fseek(f, 0, SEEK_END);
        long n = ftell(f);
        fseek(f, 0, SEEK_SET);
        unsigned char *buf = malloc((size_t)n);
        if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n)
            return 1;
        fclose(f);
        ntypes = 0;
        jfr_callbacks cb = {.size = sizeof cb, .on_event = count_event};
        jfr_parser *p = jfr_parser_new(NULL, &cb, NULL);
        jfr_parser_feed(p, buf, (size_t)n);
        jfr_parser_finish(p);
        jfr_parser_free(p);
        size_t top = 0;
        for (size_t t = 1; t < ntypes; t++)
            if (types[t].n > types[top].n)
                top = t;
        const char *drop = ntypes ? types[top].name : "none";
        one(argv[i], buf, (size_t)n, drop, 0, (size_t)n);
        one(argv[i], buf, (size_t)n, drop, 0, 1);
        one(argv[i], buf, (size_t)n, NULL, 2, (size_t)n);
        one(argv[i], buf, (size_t)n, NULL, 0, 4096);
        /* a one-chunk file as a live stream sends it: the header as written
         * at the chunk's start (size 68, no offsets, state 1) */
        if (jfr_chunk_size_at(buf, (size_t)n) != (uint64_t)n)
            goto next;
        unsigned char *live = malloc((size_t)n);
        memcpy(live, buf, (size_t)n);
        static const unsigned char h[] = {0, 0, 0, 0, 0, 0, 0, 68};
        memcpy(live + 8, h, 8);
        memset(live + 16, 0, 16);
        memset(live + 40, 0, 8);
        live[64] = 1;
        char what[1100];
        snprintf(what, sizeof what, "%s (live)", argv[i]);
        one(what, live, (size_t)n, NULL, 2, 7);
        free(live);
    next:
        if (i == 1)
            limits(buf, (size_t)n);
        free(buf);
    }
    if (failures) {
        printf("FAIL: %d checks failed\n", failures);
        return 1;
    }
    printf("PASS: written chunks re-parse to the events kept\n");
    return 0;
}
