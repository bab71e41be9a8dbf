/*
 * test_sink_fanout.c — jfrs_fanout (jfrstream_sink.h; argv: the fixture):
 * one source's parser callbacks to JSON lines and
 * a metrics registry.
 *
 *   - the JSON lines equal those of a jfrc_json writer fed directly (the
 *     code the CLI's listen --json ran before the fan-out), one line per
 *     event, at feed sizes 1, 7, 4093 and whole, through the ready-made
 *     callbacks (user: a struct starting with `void *data`) and through
 *     the caller's own callbacks;
 *   - the metrics text equals that of a registry fed directly;
 *   - a profile (cpu, with threads) collapses as one fed directly, with the
 *     source's id as key;
 *   - Pyroscope windows: every kind with events pushed per window and when
 *     the source ends (a sink towards a closed port: counted as queued);
 *   - a source refused by the registry (max_sources) still gets its lines,
 *     and jfrs_fanout_src_metrics_status says JFR_LIMIT;
 *   - sized config of an older and a newer caller, NULL for every pointer.
 * The allocator, refused at each allocation, is test_sink_alloc's.
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#include "sinktest.h"
#include "jfrstream_conv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const uint8_t *g_data;
static size_t g_len;

typedef struct holder {
    void *data; /* the jfrs_fanout_src, as jfr_uv_conn's data */
} holder;

/* ------------------------------------------------------------ the reference */

static int ref_begin(jfr_parser *p, const jfr_chunk_info *c, void *u) {
    (void)p;
    jfrc_json_chunk_begin(u, c);
    return JFR_CB_CONTINUE;
}
static int ref_meta(jfr_parser *p, const jfr_metadata *m, void *u) {
    (void)p;
    jfrc_json_metadata(u, m);
    return JFR_CB_CONTINUE;
}
static jfrc_out *g_ref_out;
static size_t g_ref_events;
static int ref_event(jfr_parser *p, const jfr_event *e, void *u) {
    (void)p;
    jfr_value v;
    CHECK(jfr_event_value(e, &v) == JFR_OK);
    CHECK(jfrc_json_event(u, e, &v) == JFR_OK);
    jfrc_out_putc(g_ref_out, '\n');
    g_ref_events++;
    return JFR_CB_CONTINUE;
}

static jfr_options ordered_options(void) {
    jfr_options o;
    jfr_options_init(&o);
    o.ordered = true;
    o.jdk_time_base = true;
    return o;
}

/* The JSON lines of a jfrc_json writer fed directly (malloc'ed). */
static char *reference_lines(void) {
    g_ref_out = jfrc_out_new_memory(1 << 16);
    jfrc_json *j = jfrc_json_new(g_ref_out, 5, true);
    CHECK(g_ref_out && j);
    jfr_callbacks cb;
    jfr_callbacks_init(&cb);
    cb.on_chunk_begin = ref_begin;
    cb.on_metadata = ref_meta;
    cb.on_event = ref_event;
    jfr_options o = ordered_options();
    jfr_parser *p = jfr_parser_new(&o, &cb, j);
    CHECK(jfr_parser_feed(p, g_data, g_len) == JFR_OK);
    CHECK(jfr_parser_finish(p) == JFR_OK);
    jfr_parser_free(p);
    jfrc_json_free(j);
    size_t n = 0;
    const char *d = jfrc_out_data(g_ref_out, &n);
    char *r = malloc(n + 1);
    CHECK(r);
    memcpy(r, d, n);
    r[n] = '\0';
    jfrc_out_free(g_ref_out);
    return r;
}

/* The collapsed text of a profile (malloc'ed; finishes it). */
static char *collapsed(jfrc_profile *pr) {
    jfrc_out *o = jfrc_out_new_memory(1 << 16);
    CHECK(o && jfrc_profile_finish(pr) == JFR_OK && jfrc_profile_write_collapsed(pr, o) == JFR_OK);
    size_t n = 0;
    const char *d = jfrc_out_data(o, &n);
    char *r = malloc(n + 1);
    CHECK(r);
    memcpy(r, d, n);
    r[n] = '\0';
    jfrc_out_free(o);
    return r;
}

static jfrc_profile *cpu_profile(void) {
    jfrc_profile *pr = jfrc_profile_new();
    CHECK(pr && jfrc_profile_select(pr, "cpu") == JFR_OK);
    jfrc_profile_set_flags(pr, JFRC_PROFILE_THREADS);
    return pr;
}

static int prof_begin(jfr_parser *p, const jfr_chunk_info *c, void *u) {
    (void)p;
    jfrc_profile_chunk_begin(u, c);
    return JFR_CB_CONTINUE;
}
static int prof_end(jfr_parser *p, const jfr_chunk_info *c, void *u) {
    (void)p;
    (void)c;
    jfrc_profile_chunk_end(u);
    return JFR_CB_CONTINUE;
}

/* ------------------------------------------------------------ own callbacks */

static int own_begin(jfr_parser *p, const jfr_chunk_info *c, void *u) {
    (void)p;
    jfrs_fanout_src_chunk_begin(u, c);
    return JFR_CB_CONTINUE;
}
static int own_meta(jfr_parser *p, const jfr_metadata *m, void *u) {
    (void)p;
    jfrs_fanout_src_metadata(u, m);
    return JFR_CB_CONTINUE;
}
static int own_record(jfr_parser *p, const jfr_record *r, void *u) {
    (void)p;
    jfrs_fanout_src_record(u, r);
    return JFR_CB_CONTINUE;
}
static int own_event(jfr_parser *p, const jfr_event *e, void *u) {
    (void)p;
    CHECK(jfrs_fanout_src_event(u, e) == JFR_OK);
    const char *why = "x";
    CHECK(jfrs_fanout_src_event_error(u, &why) == JFR_OK && why == NULL);
    return JFR_CB_CONTINUE;
}
static int own_end(jfr_parser *p, const jfr_chunk_info *c, void *u) {
    (void)p;
    (void)c;
    jfrs_fanout_src_chunk_end(u);
    return JFR_CB_CONTINUE;
}

/* Feed the fixture through a fan-out source, `step` bytes at a time (0:
 * whole); `own`: the test's callbacks instead of the ready-made ones. */
static void feed_source(jfrs_fanout *fo, const char *peer, size_t step, bool own,
                        jfr_status want_metrics) {
    jfrs_source *s = jfrs_source_new("peer", peer, NULL);
    CHECK(s);
    jfrs_fanout_src *fs = NULL;
    holder h = {0};
    CHECK(jfrs_fanout_src_new(fo, s, &h, &fs) == JFR_OK && fs);
    CHECK(jfrs_fanout_src_user(fs) == &h && jfrs_fanout_src_source(fs) == s);
    CHECK(jfrs_fanout_src_metrics_status(fs) == want_metrics);
    h.data = fs;
    jfr_callbacks cb;
    if (own) {
        jfr_callbacks_init(&cb);
        cb.on_chunk_begin = own_begin;
        cb.on_metadata = own_meta;
        cb.on_record = own_record;
        cb.on_event = own_event;
        cb.on_chunk_end = own_end;
    } else {
        jfrs_fanout_callbacks(&cb);
    }
    jfr_options o = ordered_options();
    jfr_parser *p = jfr_parser_new(&o, &cb, own ? (void *)fs : (void *)&h);
    CHECK(p);
    CHECK(jfrs_source_subscribe(s, p) == JFR_OK);
    CHECK(jfrs_fanout_src_subscribe(fs, p) == JFR_OK);
    size_t n = step ? step : g_len;
    for (size_t off = 0; off < g_len; off += n)
        CHECK(jfr_parser_feed(p, g_data + off, g_len - off < n ? g_len - off : n) == JFR_OK);
    CHECK(jfr_parser_finish(p) == JFR_OK);
    CHECK(!jfrs_fanout_paused(fo));
    jfrs_fanout_src_end(fs);
    jfr_parser_free(p);
    jfrs_source_free(s);
}

/* The fan-out's lines for one source at feed size `step` (malloc'ed), and
 * its metrics text (stable lines, malloc'ed) in *metrics. */
static char *fanout_lines(size_t step, bool own, char **metrics) {
    jfrc_out *o = jfrc_out_new_memory(1 << 16);
    jfrs_metrics_config mc;
    jfrs_metrics_config_init(&mc);
    jfrs_metrics *m = NULL;
    CHECK(o && jfrs_metrics_new(&mc, &m) == JFR_OK);
    jfrs_fanout_config c;
    jfrs_fanout_config_init(&c);
    c.json = o;
    c.metrics = m;
    jfrs_fanout *fo = NULL;
    CHECK(jfrs_fanout_new(&c, &fo) == JFR_OK && fo);
    feed_source(fo, "127.0.0.1:40001", step, own, JFR_OK);
    jfrs_fanout_poll(fo); /* nothing paused: nothing happens */
    jfrs_fanout_resume_all(fo);
    jfrs_fanout_free(fo);
    size_t n = 0;
    const char *d = jfrc_out_data(o, &n);
    char *r = malloc(n + 1);
    CHECK(r);
    memcpy(r, d, n);
    r[n] = '\0';
    jfrc_out_free(o);
    *metrics = sinktest_stable(jfrs_metrics_render(m, NULL));
    jfrs_metrics_free(m);
    return r;
}

/* The metrics text of a registry fed directly (sinktest's callbacks). */
static char *direct_metrics(void) {
    jfrs_metrics_config mc;
    jfrs_metrics_config_init(&mc);
    jfrs_metrics *m = NULL;
    CHECK(jfrs_metrics_new(&mc, &m) == JFR_OK);
    jfrs_source *s = jfrs_source_new("peer", "127.0.0.1:40001", NULL);
    jfrs_metrics_src *ms = NULL;
    CHECK(s && jfrs_metrics_src_new(m, s, &ms) == JFR_OK);
    jfr_callbacks cb;
    sinktest_metrics_callbacks(&cb);
    jfr_options o = ordered_options();
    jfr_parser *p = jfr_parser_new(&o, &cb, ms);
    CHECK(jfrs_source_subscribe(s, p) == JFR_OK);
    CHECK(jfrs_metrics_src_subscribe(ms, p) == JFR_OK);
    CHECK(jfr_parser_feed(p, g_data, g_len) == JFR_OK);
    CHECK(jfr_parser_finish(p) == JFR_OK);
    jfrs_metrics_src_end(ms);
    jfr_parser_free(p);
    jfrs_source_free(s);
    char *t = sinktest_stable(jfrs_metrics_render(m, NULL));
    jfrs_metrics_free(m);
    return t;
}

static size_t lines(const char *s) {
    size_t n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

/* A profile through the fan-out, and Pyroscope windows. */
static void test_profiles(void) {
    jfrc_profile *direct = cpu_profile();
    jfr_callbacks cb;
    jfr_callbacks_init(&cb);
    cb.on_chunk_begin = prof_begin;
    cb.on_chunk_end = prof_end;
    jfr_options o = ordered_options();
    jfr_parser *p = jfr_parser_new(&o, &cb, direct);
    CHECK(p && jfrc_profile_subscribe(direct, p) == JFR_OK);
    CHECK(jfr_parser_feed(p, g_data, g_len) == JFR_OK && jfr_parser_finish(p) == JFR_OK);
    jfr_parser_free(p);
    char *want = collapsed(direct);
    jfrc_profile_free(direct);

    jfrc_profile *pr = cpu_profile();
    jfrs_pyroscope_config pc;
    jfrs_pyroscope_config_init(&pc);
    char url[64];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/", sinktest_closed_port());
    pc.url = url;
    jfrs_pyroscope *py = NULL;
    bool pyro = jfrs_pyroscope_available() && jfrs_pyroscope_new(&pc, &py) == JFR_OK;
    jfrs_fanout_config c;
    jfrs_fanout_config_init(&c);
    c.profile = pr;
    c.pyroscope = py;
    c.pyroscope_event = "cpu,alloc";
    jfrs_fanout *fo = NULL;
    CHECK(jfrs_fanout_new(&c, &fo) == JFR_OK);
    feed_source(fo, "127.0.0.1:40001", 4093, false, JFR_OK); /* its window pushed at its end */
    char *got = collapsed(pr);
    CHECK(strlen(want) > 0 && strcmp(got, want) == 0);
    size_t nw = lines(want);
    feed_source(fo, "127.0.0.1:40002", 0, false, JFR_OK);
    jfrs_fanout_window(fo, jfrs_fanout_now_ms()); /* nothing left: nothing pushed */
    jfrs_fanout_free(fo);
    if (pyro) {
        jfrs_pyroscope_stats st;
        jfrs_pyroscope_stats_total(py, &st);
        /* cpu and alloc of each source, once (at its end) */
        CHECK(st.queued == 4);
        printf("test_sink_fanout: pyroscope: %llu windows queued (cpu, alloc x 2 sources)\n",
               (unsigned long long)st.queued);
        jfrs_pyroscope_free(py);
    } else {
        printf("test_sink_fanout: built without libcurl: Pyroscope not checked\n");
    }
    /* a word without a Pyroscope kind */
    c.pyroscope_event = "cpu,nonsense";
    if (pyro) {
        jfrs_pyroscope_new(&pc, &py);
        c.pyroscope = py;
        CHECK(jfrs_fanout_new(&c, &fo) == JFR_INVALID_ARG && fo == NULL);
        jfrs_pyroscope_free(py);
    }
    jfrc_profile_free(pr);
    free(got);
    free(want);
    printf("test_sink_fanout: profile through the fan-out: the %zu stacks fed directly\n", nw);
}

static void test_api(void) {
    jfrs_fanout *fo = (jfrs_fanout *)1;
    CHECK(jfrs_fanout_new(NULL, &fo) == JFR_INVALID_ARG && fo == NULL);
    jfrs_fanout_config c;
    jfrs_fanout_config_init(&c);
    CHECK(c.size == sizeof c && c.json_stack_depth == 5);
    CHECK(jfrs_fanout_new(&c, NULL) == JFR_INVALID_ARG);
    c.size = 0;
    CHECK(jfrs_fanout_new(&c, &fo) == JFR_INVALID_ARG && fo == NULL);
    /* an older caller (only size and json): the rest defaults */
    c.size = offsetof(jfrs_fanout_config, json_stack_depth);
    CHECK(jfrs_fanout_new(&c, &fo) == JFR_OK && fo);
    jfrs_fanout_free(fo);
    /* a newer caller: more bytes than we know, read up to ours */
    struct {
        jfrs_fanout_config c;
        uint64_t later;
    } newer;
    memset(&newer, 0, sizeof newer);
    jfrs_fanout_config_init(&newer.c);
    newer.c.size = sizeof newer;
    newer.later = 42;
    CHECK(jfrs_fanout_new(&newer.c, &fo) == JFR_OK && fo);
    jfrs_fanout_src *fs = (jfrs_fanout_src *)1;
    CHECK(jfrs_fanout_src_new(fo, NULL, NULL, &fs) == JFR_INVALID_ARG && fs == NULL);
    CHECK(jfrs_fanout_src_new(NULL, NULL, NULL, NULL) == JFR_INVALID_ARG);
    jfrs_fanout_free(fo);
    /* NULL: nothing, or JFR_INVALID_ARG */
    jfrs_fanout_free(NULL);
    jfrs_fanout_config_init(NULL);
    CHECK(jfrs_fanout_src_subscribe(NULL, NULL) == JFR_INVALID_ARG);
    CHECK(jfrs_fanout_src_event(NULL, NULL) == JFR_INVALID_ARG);
    CHECK(jfrs_fanout_src_wait(NULL, 0) == JFR_INVALID_ARG);
    CHECK(jfrs_fanout_src_metrics_status(NULL) == JFR_INVALID_ARG);
    const char *why = "x";
    CHECK(jfrs_fanout_src_event_error(NULL, &why) == JFR_INVALID_ARG && why == NULL);
    CHECK(jfrs_fanout_src_user(NULL) == NULL && jfrs_fanout_src_source(NULL) == NULL);
    jfrs_fanout_src_chunk_begin(NULL, NULL);
    jfrs_fanout_src_metadata(NULL, NULL);
    jfrs_fanout_src_record(NULL, NULL);
    jfrs_fanout_src_chunk_end(NULL);
    jfrs_fanout_src_error(NULL, JFR_IO);
    jfrs_fanout_src_end(NULL);
    jfrs_fanout_poll(NULL);
    jfrs_fanout_resume_all(NULL);
    CHECK(!jfrs_fanout_paused(NULL));
    jfrs_fanout_callbacks(NULL);
    printf("test_sink_fanout: sized configs (older, newer), NULL arguments: ok\n");
}

/* A registry full (max_sources 1): the second source has no series, but
 * its JSON lines are all there. */
static void test_refused(const char *ref) {
    jfrc_out *o = jfrc_out_new_memory(1 << 16);
    jfrs_metrics_config mc;
    jfrs_metrics_config_init(&mc);
    mc.max_sources = 1;
    jfrs_metrics *m = NULL;
    CHECK(o && jfrs_metrics_new(&mc, &m) == JFR_OK);
    jfrs_fanout_config c;
    jfrs_fanout_config_init(&c);
    c.json = o;
    c.metrics = m;
    jfrs_fanout *fo = NULL;
    CHECK(jfrs_fanout_new(&c, &fo) == JFR_OK);
    jfrs_source *s1 = jfrs_source_new("peer", "127.0.0.1:1", NULL);
    jfrs_fanout_src *first = NULL;
    CHECK(s1 && jfrs_fanout_src_new(fo, s1, NULL, &first) == JFR_OK);
    feed_source(fo, "127.0.0.1:2", 0, false, JFR_LIMIT);
    size_t n = 0;
    const char *d = jfrc_out_data(o, &n);
    CHECK(n == strlen(ref) && memcmp(d, ref, n) == 0);
    jfrs_fanout_free(fo); /* ends `first` */
    jfrs_source_free(s1);
    jfrc_out_free(o);
    jfrs_metrics_free(m);
    printf("test_sink_fanout: a source the registry refused: JFR_LIMIT, its lines whole\n");
}

int main(int argc, char **argv) {
    CHECK(argc == 2);
    if (argc != 2)
        return 1;
    uint8_t *data = read_file(argv[1], &g_len);
    CHECK(data);
    g_data = data;
    char *ref = reference_lines();
    char *ref_metrics = direct_metrics();
    CHECK(lines(ref) == g_ref_events && g_ref_events > 0);
    static const size_t steps[] = {0, 1, 7, 4093};
    for (size_t i = 0; i < sizeof steps / sizeof *steps; i++)
        for (int own = 0; own <= 1; own++) {
            char *mt = NULL;
            char *got = fanout_lines(steps[i], own, &mt);
            if (strcmp(got, ref) != 0)
                fprintf(stderr, "lines differ at feed size %zu (%s callbacks)\n", steps[i],
                        own ? "own" : "ready-made");
            CHECK(strcmp(got, ref) == 0);
            CHECK(mt && ref_metrics && strcmp(mt, ref_metrics) == 0);
            free(got);
            free(mt);
        }
    printf("test_sink_fanout: %zu JSON lines and the metrics text as fed directly, at feed "
           "sizes whole, 1, 7, 4093, ready-made and own callbacks\n", g_ref_events);
    test_refused(ref);
    test_profiles();
    test_api();
    free(ref);
    free(ref_metrics);
    free(data);
    if (g_failures) {
        fprintf(stderr, "test_sink_fanout: %d failure(s)\n", g_failures);
        return 1;
    }
    return 0;
}
