/*
 * test_sink_views.c — live views (jfrstream_sink.h, "views"; argv: the
 * fixtures). The reference is what `jfrstream view NAME FILE` prints (the
 * same query code over the file itself, which the view-workload and
 * view-synthetic tests hold to JDK 25's output):
 *
 *   - every one of the 83 views and an event type's table, fed through the
 *     fan-out's ready-made callbacks as a file and as a live stream (every
 *     chunk being written until it ends), at feed sizes 1, 7, 4093, random
 *     and whole, ordered and not: the frame equals the view of the file;
 *   - mid-stream: a frame while a live chunk is being written equals the
 *     view of the file cut there (no crash, the chunk as far as it came);
 *   - two sources: over all sources, each view is the view of the two files
 *     one after the other; by_source, a "Source:" section each, naming the
 *     JVM (jfrs_source_id) already inside its first live chunk;
 *   - the window: a frame whose window ends before the events leaves them
 *     out (the view of no events), drops the copies (memory 0) and the
 *     ended sources; only the views' types are copied (the copy is smaller
 *     than the file);
 *   - refused names, sized config, NULL pointers.
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#include "sinktest.h"
#include "jfrstream_conv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct holder {
    void *data; /* the jfrs_fanout_src, as jfr_uv_conn's data */
} holder;

static const char **g_names;
static size_t g_nnames;

/* What `jfrstream view` prints for each name over `buf`, one after the
 * other (malloc'ed, NUL-terminated). */
typedef struct refrun {
    jfrc_query **q;
    size_t n;
} refrun;

static int ref_meta(jfr_parser *p, const jfr_metadata *m, void *u) {
    refrun *r = u;
    for (size_t k = 0; k < r->n; k++)
        CHECK(jfrc_query_metadata(r->q[k], p, m) == JFR_OK);
    return JFR_CB_CONTINUE;
}

static int64_t g_since; /* the reference's since_nanos */

static jfrc_query *ref_query(const char *name) {
    jfrc_view_options o = JFRC_VIEW_OPTIONS_INIT;
    o.since_nanos = g_since;
    jfrc_query *q = jfrc_query_new_view(name, &o, NULL);
    return q ? q : jfrc_query_new_type(name, &o, NULL);
}

static char *reference(const uint8_t *const *bufs, const size_t *lens, size_t nbufs) {
    refrun r = {calloc(g_nnames, sizeof *r.q), g_nnames};
    for (size_t k = 0; k < g_nnames; k++)
        CHECK((r.q[k] = ref_query(g_names[k])) != NULL);
    jfr_options o = JFR_OPTIONS_INIT;
    o.ordered = true;
    o.jdk_time_base = true;
    jfr_callbacks cb = {.size = sizeof cb, .on_metadata = ref_meta};
    jfr_parser *p = jfr_parser_new(&o, &cb, &r);
    for (size_t i = 0; i < nbufs; i++) {
        if (i)
            jfr_parser_reset(p);
        jfr_parser_feed(p, bufs[i], lens[i]);
        jfr_parser_finish(p);
    }
    jfr_parser_free(p);
    jfrc_out *o2 = jfrc_out_new_memory(1 << 16);
    for (size_t k = 0; k < g_nnames; k++) {
        CHECK(jfrc_query_render(r.q[k], o2) == JFR_OK);
        jfrc_query_free(r.q[k]);
    }
    free(r.q);
    size_t n;
    jfrc_out_putc(o2, 0);
    const char *d = jfrc_out_data(o2, &n);
    char *s = strdup(d);
    jfrc_out_free(o2);
    return s;
}

static char *frame(jfrs_views *v, int64_t now) {
    jfrc_out *o = jfrc_out_new_memory(1 << 16);
    CHECK(jfrs_views_render(v, o, now) == JFR_OK);
    size_t n;
    jfrc_out_putc(o, 0);
    char *s = strdup(jfrc_out_data(o, &n));
    jfrc_out_free(o);
    return s;
}

static bool same(const char *what, const char *got, const char *want) {
    if (!strcmp(got, want))
        return true;
    size_t i = 0;
    while (got[i] && got[i] == want[i])
        i++;
    fprintf(stderr, "%s: differs at byte %zu:\n  got  '%.80s'\n  want '%.80s'\n", what, i,
            got + i, want + i);
    return false;
}

typedef struct feed {
    jfrs_fanout *fo;
    jfrs_source *src;
    jfrs_fanout_src *fs;
    jfr_parser *p;
    holder h;
} feed;

static void feed_open(feed *f, jfrs_fanout *fo, bool ordered, const char *name) {
    f->fo = fo;
    CHECK((f->src = jfrs_source_new("path", name, NULL)) != NULL);
    CHECK(jfrs_fanout_src_new(fo, f->src, NULL, &f->fs) == JFR_OK);
    f->h.data = f->fs;
    jfr_callbacks cb;
    jfrs_fanout_callbacks(&cb);
    jfr_options o = JFR_OPTIONS_INIT;
    o.ordered = ordered;
    o.jdk_time_base = true;
    CHECK((f->p = jfr_parser_new(&o, &cb, &f->h)) != NULL);
    CHECK(jfrs_source_subscribe(f->src, f->p) == JFR_OK);
    CHECK(jfrs_fanout_src_subscribe(f->fs, f->p) == JFR_OK);
}

/* Feed [from, to) of buf in slices of `step` (0: random 1..4096). */
static void feed_bytes(feed *f, const uint8_t *buf, size_t from, size_t to, size_t step,
                       uint64_t *seed) {
    for (size_t off = from; off < to;) {
        size_t n = step ? step : 1 + (size_t)(test_splitmix(seed) % 4096);
        if (n > to - off)
            n = to - off;
        jfr_status st = jfr_parser_feed(f->p, buf + off, n);
        if (st != JFR_OK)
            fprintf(stderr, "feed at %zu: %s\n", off, jfr_parser_error(f->p));
        CHECK(st == JFR_OK);
        off += n;
    }
}

static void feed_close(feed *f) {
    jfr_parser_finish(f->p);
    jfrs_fanout_src_end(f->fs);
    jfr_parser_free(f->p);
    jfrs_source_free(f->src);
}

static jfrs_views *new_views(bool by_source) {
    jfrs_views_config c;
    jfrs_views_config_init(&c);
    c.names = g_names;
    c.count = g_nnames;
    c.by_source = by_source;
    jfrs_views *v = NULL;
    char err[200];
    CHECK(jfrs_views_new(&c, &v, err, sizeof err) == JFR_OK);
    return v;
}

static jfrs_fanout *new_fanout(jfrs_views *v) {
    jfrs_fanout_config fc;
    jfrs_fanout_config_init(&fc);
    fc.views = v;
    jfrs_fanout *fo = NULL;
    CHECK(jfrs_fanout_new(&fc, &fo) == JFR_OK);
    return fo;
}

/* Views with a fan-out that had `buf` fed to one source, which ended. */
static jfrs_views *views_fed(const uint8_t *buf, size_t len, const char *name,
                             jfrs_fanout **fo) {
    jfrs_views *v = new_views(false);
    *fo = new_fanout(v);
    feed f;
    uint64_t seed = 1;
    feed_open(&f, *fo, false, name);
    feed_bytes(&f, buf, 0, len, 65536, &seed);
    feed_close(&f);
    return v;
}

/* The end of the file's last chunk, ns since the epoch (header fields). */
static int64_t file_end(const uint8_t *b, size_t len) {
    int64_t end = 0;
    for (size_t off = 0; off + 68 <= len;) {
        uint64_t size = 0, start = 0, dur = 0;
        for (int i = 0; i < 8; i++) {
            size = size << 8 | b[off + 8 + i];
            start = start << 8 | b[off + 32 + i];
            dur = dur << 8 | b[off + 40 + i];
        }
        if ((int64_t)(start + dur) > end)
            end = (int64_t)(start + dur);
        if (size < 68)
            break;
        off += size;
    }
    return end;
}

static void check_file(const char *path) {
    size_t len;
    uint8_t *buf = read_file(path, &len);
    CHECK(buf != NULL);
    if (!buf)
        return;
    /* the live form, where the file's layout allows one (the synthetic
     * fixture's does not: its records are not in the JDK's order) */
    uint8_t *live = as_live(buf, len);
    if (live) {
        jfr_parser *lp = jfr_parser_new(NULL, NULL, NULL);
        if (jfr_parser_feed(lp, live, len) != JFR_OK || jfr_parser_finish(lp) != JFR_OK) {
            printf("%s: no live form (%s)\n", path, jfr_parser_error(lp));
            free(live);
            live = NULL;
        }
        jfr_parser_free(lp);
    }
    const uint8_t *one[] = {buf};
    size_t lens[] = {len, len};
    char *want = reference(one, lens, 1);
    int64_t now = file_end(buf, len) + 1000000000; /* 1 s after: all in the window */
    const size_t steps[] = {0, 1, 7, 4093, len};
    int frames = 0, ok = 0;
    uint64_t seed = 0x7669657773ull;
    for (int shape = 0; shape < (live ? 2 : 1); shape++)
        for (size_t si = 0; si < sizeof steps / sizeof *steps; si++)
            for (int ordered = 0; ordered < 2; ordered++) {
                if (steps[si] == 1 && (shape || ordered))
                    continue; /* 1 byte once: it is slow */
                jfrs_views *v = new_views(false);
                jfrs_fanout *fo = new_fanout(v);
                feed f;
                feed_open(&f, fo, ordered, path);
                feed_bytes(&f, shape ? live : buf, 0, len, steps[si], &seed);
                char *got = frame(v, now); /* live: the last chunk not ended yet */
                feed_close(&f);
                char *after = frame(v, now);
                char what[160];
                snprintf(what, sizeof what, "%s %s step %zu%s", path, shape ? "live" : "file",
                         steps[si], ordered ? " ordered" : "");
                frames += 2;
                ok += same(what, got, want);
                ok += same(what, after, want);
                CHECK(jfrs_views_memory(v) > 0 && jfrs_views_memory(v) < len);
                CHECK(jfrs_views_error(v) == NULL);
                free(got);
                free(after);
                jfrs_fanout_free(fo);
                jfrs_views_free(v);
            }
    CHECK(ok == frames);
    printf("%s: %d frames of %zu views, all equal to the view of the file\n", path, frames,
           g_nnames);

    /* mid-stream: a frame of the live chunk as far as it came (no crash,
     * the writer unchanged by it: the frames after the end are exact) */
    {
        jfrs_views *v = new_views(false);
        jfrs_fanout *fo = new_fanout(v);
        feed f;
        feed_open(&f, fo, false, path);
        const uint8_t *in = live ? live : buf;
        feed_bytes(&f, in, 0, len / 2, 4093, &seed);
        char *mid = frame(v, now);
        CHECK(mid != NULL);
        feed_bytes(&f, in, len / 2, len, 4093, &seed);
        feed_close(&f);
        char *end = frame(v, now);
        CHECK(same("after a mid-stream frame", end, want));
        free(mid);
        free(end);
        jfrs_fanout_free(fo);
        jfrs_views_free(v);
    }
    /* by source, mid-chunk: the Source line names the JVM (jdk.JVMInformation
     * came early in the chunk), not the origin it had before, although the
     * chunk has not ended (a JVM's live chunk may last for hours) */
    if (live) {
        jfrs_views *v = new_views(true);
        jfrs_fanout *fo = new_fanout(v);
        feed f;
        feed_open(&f, fo, false, "origin");
        feed_bytes(&f, live, 0, len / 2, 4093, &seed);
        CHECK(jfrs_source_identified(f.src));
        char hdr[300];
        snprintf(hdr, sizeof hdr, "Source: %s\n", jfrs_source_id(f.src));
        CHECK(strcmp(jfrs_source_id(f.src), "origin") != 0);
        char *mid = frame(v, now);
        if (strncmp(mid, hdr, strlen(hdr)) != 0)
            fprintf(stderr, "mid-chunk by source: '%.60s', want '%s'\n", mid, hdr);
        CHECK(!strncmp(mid, hdr, strlen(hdr)));
        free(mid);
        feed_close(&f);
        jfrs_fanout_free(fo);
        jfrs_views_free(v);
        printf("%s: by source mid-chunk: %s", path, hdr);
    }

    /* two sources, over all and by source */
    {
        const uint8_t *two[] = {buf, buf};
        char *want2 = reference(two, lens, 2);
        for (int by = 0; by < 2; by++) {
            jfrs_views *v = new_views(by);
            jfrs_fanout *fo = new_fanout(v);
            feed a, b;
            feed_open(&a, fo, true, "a");
            feed_open(&b, fo, true, "b");
            feed_bytes(&a, buf, 0, len, 65536, &seed);
            feed_bytes(&b, live ? live : buf, 0, len, 65536, &seed);
            char hdr[300], hdrb[300]; /* the JVM's id, else the origin */
            snprintf(hdr, sizeof hdr, "Source: %s\n", jfrs_source_id(a.src));
            snprintf(hdrb, sizeof hdrb, "Source: %s\n", jfrs_source_id(b.src));
            feed_close(&a);
            CHECK(jfrs_views_sources(v) == 2);
            char *got = frame(v, now);
            if (!by) {
                CHECK(same("two sources", got, want2));
            } else {
                size_t n = strlen(want), hn = strlen(hdr), hbn = strlen(hdrb);
                CHECK(strlen(got) == 2 * n + hn + hbn);
                CHECK(!strncmp(got, hdr, hn) && !strncmp(got + hn, want, n));
                CHECK(!strncmp(got + hn + n, hdrb, hbn) && !strcmp(got + hn + hbn + n, want));
            }
            free(got);
            feed_close(&b);
            jfrs_fanout_free(fo);
            jfrs_views_free(v);
        }
        free(want2);
        printf("%s: two sources, over all and by source: equal\n", path);
    }

    /* the window reaching into the file: the events that ended before its
     * start are left out, as since_nanos leaves them out of a view */
    {
        int64_t start = 0;
        for (int i = 0; i < 8; i++)
            start = (int64_t)((uint64_t)start << 8 | buf[32 + i]);
        int64_t mid = start + (file_end(buf, len) - start) / 2;
        g_since = mid;
        char *want_mid = reference(one, lens, 1);
        g_since = 0;
        jfrs_fanout *fo;
        jfrs_views *v = views_fed(buf, len, path, &fo);
        char *got = frame(v, mid + 600 * 1000000000ll); /* the default 10 minutes */
        CHECK(same("half the file in the window", got, want_mid));
        CHECK(strcmp(want_mid, want) != 0);
        free(got);
        free(want_mid);
        jfrs_fanout_free(fo);
        jfrs_views_free(v);
    }
    /* the window: nothing of the file is in the last 10 minutes of a time
     * an hour after it; the copies and the ended source go */
    {
        char *none = reference(NULL, NULL, 0);
        jfrs_fanout *fo;
        jfrs_views *v = views_fed(buf, len, path, &fo);
        uint64_t kept = jfrs_views_memory(v);
        char *got = frame(v, now + 3600 * 1000000000ll);
        CHECK(same("an hour later", got, none));
        CHECK(jfrs_views_memory(v) == 0 && jfrs_views_sources(v) == 0);
        printf("%s: %llu bytes kept of %zu (the views' types), 0 an hour later\n", path,
               (unsigned long long)kept, len);
        free(got);
        free(none);
        jfrs_fanout_free(fo);
        jfrs_views_free(v);
    }
    free(want);
    free(live);
    free(buf);
}

static void check_api(void) {
    jfrs_views_config c;
    jfrs_views_config_init(&c);
    jfrs_views *v = (jfrs_views *)1;
    char err[200];
    CHECK(jfrs_views_new(&c, &v, err, sizeof err) == JFR_INVALID_ARG && v == NULL);
    const char *bad[] = {"gc-pauses", "no-such-view"};
    c.names = bad;
    c.count = 2;
    CHECK(jfrs_views_new(&c, &v, err, sizeof err) == JFR_INVALID_ARG && v == NULL);
    CHECK(strstr(err, "no-such-view") != NULL);
    CHECK(jfrs_views_new(NULL, &v, err, sizeof err) == JFR_INVALID_ARG);
    c.count = 1;
    CHECK(jfrs_views_new(&c, NULL, err, sizeof err) == JFR_INVALID_ARG);
    /* an older caller's config (without by_source and after) */
    SIZED_BUF(jfrs_views_config) old;
    jfrs_views_config *oc = sized_older(&old, &c, sizeof c,
                                        offsetof(jfrs_views_config, by_source), 0xa5);
    CHECK(jfrs_views_new(oc, &v, err, sizeof err) == JFR_OK && v != NULL);
    jfrs_views_free(v);
    SIZED_BUF(jfrs_views_config) newer;
    newer.c = c;
    CHECK(jfrs_views_new(sized_newer(&newer, sizeof c), &v, err, sizeof err) == JFR_OK);
    CHECK(jfrs_views_render(v, NULL, 0) == JFR_INVALID_ARG);
    CHECK(jfrs_views_render(NULL, NULL, 0) == JFR_INVALID_ARG);
    CHECK(jfrs_views_memory(NULL) == 0 && jfrs_views_sources(NULL) == 0);
    CHECK(jfrs_views_error(NULL) == NULL);
    jfrs_views_src *vs = (jfrs_views_src *)1;
    CHECK(jfrs_views_src_new(v, NULL, &vs) == JFR_INVALID_ARG && vs == NULL);
    jfrs_views_src_chunk_begin(NULL, NULL, NULL);
    jfrs_views_src_metadata(NULL, NULL);
    jfrs_views_src_record(NULL, NULL, NULL);
    jfrs_views_src_chunk_end(NULL, NULL);
    jfrs_views_src_end(NULL);
    jfrs_views_free(v);
    jfrs_views_free(NULL);
    printf("api: refused names, sized config, NULL pointers\n");
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: test_sink_views FILE...\n");
        return 2;
    }
    const char *name;
    size_t nv = jfrc_view_count();
    g_names = calloc(nv + 1, sizeof *g_names);
    for (size_t k = 0; jfrc_view_info(k, NULL, &name, NULL, NULL); k++)
        g_names[g_nnames++] = name;
    g_names[g_nnames++] = "jdk.GarbageCollection";
    check_api();
    for (int i = 1; i < argc; i++)
        check_file(argv[i]);
    free(g_names);
    printf("%d failures\n", g_failures);
    return g_failures ? 1 : 0;
}
