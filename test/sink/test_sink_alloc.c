/*
 * test_sink_alloc.c — the custom allocator in the sink library (argv: the
 * workload and the synthetic fixture). For a source (jfrs_source_new_advanced),
 * the metrics registry, the fan-out, live views (a frame of three), the
 * Kafka sender (librdkafka's mock cluster) and the
 * Pyroscope sink (a closed port), each with a counting allocator
 * (harness.h):
 *
 *   - balanced: after the objects are freed nothing is live, and every free
 *     and realloc was told the size that was allocated; the output (the
 *     labels' JSON, the exposition, the messages delivered) is the same as
 *     with malloc;
 *   - allocation failure at every point: the run is repeated with the Nth
 *     allocation refused (and every later one; for the source and metrics
 *     also that one alone), for every N up to the count of a whole run:
 *     each call refuses cleanly (NULL, JFR_NOMEM, or goes on without what it
 *     could not make), nothing crashes, nothing leaks.
 *
 * What librdkafka, libcurl and the converters' event JSON writer allocate
 * is theirs (not counted).
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#include "sinktest.h"
#include "jfrstream_conv.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static const uint8_t *g_data, *g_synth;
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER; /* Pyroscope's worker frees too */
static size_t g_len, g_synth_len;
static char g_url[64]; /* Pyroscope: a closed port */

/* Check a counting allocator after its objects are freed. */
static void balanced(const char *what, const talloc *t, size_t fail_at) {
    if (t->cur != 0 || t->bad_size != 0)
        fprintf(stderr, "%s (fail_at %zu): %zu bytes live, %zu wrong sizes (%s)\n", what,
                fail_at, t->cur, t->bad_size, t->bad_detail);
    CHECK(t->cur == 0 && t->bad_size == 0);
}

/* Run `run` whole (its allocations counted), then with each allocation
 * refused in turn; returns the count of a whole run. */
static size_t sweep(const char *what, void (*run)(const jfr_allocator *a, char **out),
                    bool also_once) {
    char *ref = NULL, *got = NULL;
    run(NULL, &ref);
    talloc t;
    talloc_init(&t);
    t.lock = &g_lock;
    jfr_allocator a = talloc_allocator(&t);
    run(&a, &got);
    balanced(what, &t, 0);
    CHECK(ref && got && strcmp(ref, got) == 0);
    size_t n = t.nalloc;
    CHECK(n > 0);
    free(ref);
    free(got);
    for (int once = 0; once <= (int)also_once; once++)
        for (size_t i = 1; i <= n; i++) {
            talloc_init(&t);
            t.lock = &g_lock;
            t.fail_at = i;
            t.fail_once = once;
            a = talloc_allocator(&t);
            got = NULL;
            run(&a, &got);
            free(got);
            CHECK(t.failed > 0);
            balanced(what, &t, i);
        }
    printf("test_sink_alloc: %s: %zu allocations, each refused in turn%s\n", what, n,
           also_once ? " (alone, and with all later ones)" : "");
    return n;
}

/* ------------------------------------------------------------ source */

static int src_event(jfr_parser *p, const jfr_event *e, void *u) {
    (void)p;
    jfrs_source_event(u, e);
    return JFR_CB_CONTINUE;
}

static void run_source(const jfr_allocator *a, char **out) {
    jfrs_source *s = jfrs_source_new_advanced("path", "/tmp/r\xc3\xa9po", NULL, a);
    if (!s)
        return;
    jfrs_source_set(s, "team", "caf\xc3\xa9\xff");
    jfrs_source_set(s, "zone", "eu");
    jfrs_source_set(s, "team", "core"); /* replaced */
    jfr_callbacks cb;
    jfr_callbacks_init(&cb);
    cb.on_event = src_event;
    jfr_parser *p = jfr_parser_new(NULL, &cb, s);
    CHECK(p);
    jfr_parser_feed(p, g_data, g_len);
    jfr_parser_finish(p);
    jfr_parser_free(p);
    const char *j = jfrs_source_json(s);
    if (j)
        *out = strdup(j);
    jfrs_source_free(s);
}

/* A fan-out source for `s` fed `data` through the ready-made callbacks
 * (`step` bytes a call), then ended. False when the source could not be
 * made (out of memory). */
static bool feed_fanout(jfrs_fanout *fo, jfrs_source *s, const uint8_t *data, size_t len,
                        size_t step, bool ordered) {
    struct {
        void *data;
    } h = {NULL};
    jfrs_fanout_src *fs = NULL;
    jfr_status st = jfrs_fanout_src_new(fo, s, &h, &fs);
    CHECK(st == JFR_OK || st == JFR_NOMEM);
    if (st != JFR_OK)
        return false;
    h.data = fs;
    jfr_callbacks cb;
    jfrs_fanout_callbacks(&cb);
    jfr_options opts;
    jfr_options_init(&opts);
    opts.ordered = ordered;
    jfr_parser *p = jfr_parser_new(&opts, &cb, &h);
    CHECK(p);
    if (p && jfrs_fanout_src_subscribe(fs, p) == JFR_OK) {
        for (size_t off = 0; off < len; off += step)
            jfr_parser_feed(p, data + off, len - off < step ? len - off : step);
        jfr_parser_finish(p);
    }
    jfrs_fanout_src_end(fs);
    jfr_parser_free(p);
    return true;
}

/* ------------------------------------------------------------ fan-out */

/* JSON lines, a registry, a profile and Pyroscope windows (with libcurl)
 * through one fan-out source; the lines and the stable metrics text are the
 * output. */
static void run_fanout(const jfr_allocator *a, char **out) {
    jfrc_out *o = jfrc_out_new_memory_advanced(1 << 12, a);
    jfrc_profile *pr = jfrc_profile_new_advanced(a);
    jfrs_pyroscope *py = NULL;
    if (jfrs_pyroscope_available()) {
        jfrs_pyroscope_config pc;
        jfrs_pyroscope_config_init(&pc);
        pc.url = g_url;
        pc.backoff_ms = pc.max_backoff_ms = 60000; /* the first attempt only */
        pc.allocator = a;
        jfrs_pyroscope_new(&pc, &py);
    }
    jfrs_metrics_config mc;
    jfrs_metrics_config_init(&mc);
    mc.allocator = a;
    jfrs_metrics *m = NULL;
    jfrs_fanout_config c;
    jfrs_fanout_config_init(&c);
    c.allocator = a;
    c.json = o;
    c.pyroscope = py;
    c.pyroscope_event = "cpu,alloc";
    jfrs_fanout *fo = NULL;
    jfrs_source *s = NULL;
    if (!o || !pr || jfrc_profile_select(pr, "cpu") != JFR_OK || (c.profile = pr, false) ||
        (jfrs_pyroscope_available() && !py) ||
        jfrs_metrics_new(&mc, &m) != JFR_OK || (c.metrics = m, false) ||
        jfrs_fanout_new(&c, &fo) != JFR_OK ||
        !(s = jfrs_source_new_advanced("peer", "127.0.0.1:1", NULL, a)))
        goto done;
    if (!feed_fanout(fo, s, g_data, g_len, 4096, true))
        goto done;
    size_t n = 0;
    const char *d = jfrc_out_data(o, &n);
    const char *t = jfrs_metrics_render(m, NULL);
    char *mt = sinktest_stable(t);
    if (d && !jfrc_out_failed(o) && mt && (*out = malloc(n + strlen(mt) + 1)) != NULL) {
        memcpy(*out, d, n);
        strcpy(*out + n, mt);
    }
    free(mt);
done:
    jfrs_fanout_free(fo);
    jfrs_source_free(s);
    jfrs_metrics_free(m);
    jfrs_pyroscope_free(py);
    jfrc_profile_free(pr);
    jfrc_out_free(o);
}

/* ------------------------------------------------------------ views */

/* Live views through a fan-out source (the synthetic fixture, as a file),
 * then one frame: its text is the output. */
static void run_views(const jfr_allocator *a, char **out) {
    static const char *names[] = {"events-by-count", "gc-pauses", "jdk.ActiveSetting"};
    jfrs_views_config vc;
    jfrs_views_config_init(&vc);
    vc.names = names;
    vc.count = 3;
    vc.window_ms = (uint64_t)100 * 365 * 86400 * 1000; /* the fixture is old */
    vc.allocator = a;
    jfrs_views *v = NULL;
    jfrs_fanout_config c;
    jfrs_fanout_config_init(&c);
    c.allocator = a;
    jfrs_fanout *fo = NULL;
    jfrs_source *s = NULL;
    jfrc_out *o = jfrc_out_new_memory_advanced(1 << 12, a);
    if (!o || jfrs_views_new(&vc, &v, NULL, 0) != JFR_OK || (c.views = v, false) ||
        jfrs_fanout_new(&c, &fo) != JFR_OK ||
        !(s = jfrs_source_new_advanced("path", "synthetic", NULL, a)))
        goto done;
    if (!feed_fanout(fo, s, g_synth, g_synth_len, g_synth_len, false))
        goto done;
    jfr_status st = jfrs_views_render(v, o, 4102444800000000000ll); /* 2100-01-01 */
    CHECK(st == JFR_OK || st == JFR_NOMEM);
    size_t n = 0;
    const char *d = jfrc_out_data(o, &n);
    if (st == JFR_OK && d && !jfrc_out_failed(o) && !jfrs_views_error(v) &&
        (*out = malloc(n + 1)) != NULL) {
        memcpy(*out, d, n);
        (*out)[n] = 0;
    }
done:
    jfrs_fanout_free(fo);
    jfrs_views_free(v);
    jfrs_source_free(s);
    jfrc_out_free(o);
}

/* ------------------------------------------------------------ metrics */

/* One input of the registry; a second with the same JVM takes its series
 * over. */
static void metrics_input(jfrs_metrics *m, const jfr_allocator *a, const char *peer) {
    jfrs_source *s = jfrs_source_new_advanced("peer", peer, NULL, a);
    if (!s)
        return;
    jfrs_source_set(s, "team", "caf\xc3\xa9\xff\"\n");
    jfrs_metrics_src *ms = NULL;
    jfr_status st = jfrs_metrics_src_new(m, s, &ms);
    CHECK(st == JFR_OK || st == JFR_NOMEM);
    jfr_callbacks cb;
    sinktest_metrics_callbacks(&cb);
    jfr_parser *p = jfr_parser_new(NULL, &cb, ms);
    CHECK(p);
    jfrs_source_subscribe(s, p);
    jfrs_metrics_src_subscribe(ms, p);
    for (size_t off = 0; off < g_len; off += 4096)
        jfr_parser_feed(p, g_data + off, g_len - off < 4096 ? g_len - off : 4096);
    jfr_parser_finish(p);
    jfrs_metrics_src_error(ms, JFR_TRUNCATED);
    jfrs_metrics_src_end(ms);
    jfr_parser_free(p);
    jfrs_source_free(s);
}

static void run_metrics(const jfr_allocator *a, char **out) {
    jfrs_metrics_config c;
    jfrs_metrics_config_init(&c);
    c.allocator = a;
    jfrs_metrics *m = NULL;
    if (jfrs_metrics_new(&c, &m) != JFR_OK)
        return;
    metrics_input(m, a, "127.0.0.1:1000");
    metrics_input(m, a, "127.0.0.1:1001");
    jfrs_metrics_set(m, "jfrstream_kafka_messages_total", "counter", "Messages",
                     "outcome=\"delivered\"", 3);
    jfrs_metrics_set(m, "jfrstream_kafka_messages_total", "counter", "Messages",
                     "outcome=\"failed\"", 1);
    *out = sinktest_stable(jfrs_metrics_render(m, NULL));
    jfrs_metrics_free(m);
}

/* ------------------------------------------------------------ Kafka */

typedef struct krun {
    jfrs_kafka_src *ks;
    uint64_t events, nomem;
} krun;

static int k_begin(jfr_parser *p, const jfr_chunk_info *c, void *u) {
    (void)p;
    jfrs_kafka_src_chunk_begin(((krun *)u)->ks, c);
    return JFR_CB_CONTINUE;
}
static int k_meta(jfr_parser *p, const jfr_metadata *m, void *u) {
    (void)p;
    jfrs_kafka_src_metadata(((krun *)u)->ks, m);
    return JFR_CB_CONTINUE;
}
static int k_event(jfr_parser *p, const jfr_event *e, void *u) {
    (void)p;
    krun *r = u;
    r->events++;
    jfr_status st = jfrs_kafka_src_event(r->ks, e);
    CHECK(st == JFR_OK || st == JFR_NOMEM || st == JFR_IO);
    r->nomem += st == JFR_NOMEM;
    return JFR_CB_CONTINUE;
}

static void log_quiet(void *user, int level, const char *message) {
    (void)user, (void)level, (void)message;
}

/* The synthetic recording (no jdk.JVMInformation: held back, 10 at most)
 * to per-type topics, as JSON and as OTLP JSON; the output: the counts. */
static void run_kafka_format(const jfr_allocator *a, jfrs_kafka_format format, char *out,
                             size_t outlen) {
    static const char *const mock[] = {"test.mock.num.brokers=1"};
    jfrs_kafka_config c;
    jfrs_kafka_config_init(&c);
    c.brokers = "127.0.0.1:1";
    c.topic = "alloc-{type}";
    c.format = format;
    c.options = mock;
    c.noptions = 1;
    c.hold_events = 10;
    c.on_log = log_quiet;
    c.allocator = a;
    jfrs_kafka *k = NULL;
    jfr_status st = jfrs_kafka_new(&c, &k, NULL, 0);
    CHECK(st == JFR_OK || st == JFR_NOMEM);
    if (!k)
        return;
    jfrs_source *s = jfrs_source_new_advanced("path", "/tmp/synthetic", NULL, a);
    krun r = {0};
    if (s && (r.ks = jfrs_kafka_src_new(k, s)) != NULL) {
        jfr_callbacks cb;
        jfr_callbacks_init(&cb);
        cb.on_chunk_begin = k_begin;
        cb.on_metadata = k_meta;
        cb.on_event = k_event;
        jfr_parser *p = jfr_parser_new(NULL, &cb, &r);
        CHECK(p);
        jfr_parser_feed(p, g_synth, g_synth_len);
        jfr_parser_finish(p);
        jfr_parser_free(p);
        jfrs_kafka_src_end(r.ks);
        jfrs_kafka_src_free(r.ks);
    }
    jfrs_kafka_flush(k, 10000);
    jfrs_kafka_stats st2;
    jfrs_kafka_stats_get(k, &st2);
    snprintf(out, outlen, "%d: %llu events, %llu delivered, %llu failed; ", (int)format,
             (unsigned long long)r.events, (unsigned long long)st2.delivered,
             (unsigned long long)st2.failed);
    jfrs_kafka_free(k);
    jfrs_source_free(s);
}

static void run_kafka(const jfr_allocator *a, char **out) {
    char j[128] = "", o[128] = "", all[256];
    run_kafka_format(a, JFRS_KAFKA_JSON, j, sizeof j);
    run_kafka_format(a, JFRS_KAFKA_OTLP_JSON, o, sizeof o);
    snprintf(all, sizeof all, "%s%s", j, o);
    *out = strdup(all);
}

/* ------------------------------------------------------------ Pyroscope */


static void run_pyroscope(const jfr_allocator *a, char **out) {
    jfrs_pyroscope_config c;
    jfrs_pyroscope_config_init(&c);
    c.url = g_url;
    c.spy_name = "alloc";
    c.queue_windows = 2;
    c.backoff_ms = c.max_backoff_ms = 60000; /* the first attempt only */
    c.allocator = a;
    jfrs_pyroscope *p = NULL;
    jfr_status st = jfrs_pyroscope_new(&c, &p);
    CHECK(st == JFR_OK || st == JFR_NOMEM);
    if (!p)
        return;
    static const char body[] = "not pprof";
    uint64_t ok = 0;
    for (int i = 0; i < 4; i++) {
        st = jfrs_pyroscope_push(p, i % 2 ? "a" : "b", "app{x=y}", body, sizeof body, i, i + 1);
        CHECK(st == JFR_OK || st == JFR_NOMEM);
        ok += st == JFR_OK;
    }
    jfrs_pyroscope_end_source(p, "a");
    jfrs_pyroscope_push(p, "c", "app{}", NULL, 0, 0, 1);
    jfrs_pyroscope_drain(p, 0);
    jfrs_pyroscope_free(p);
    char t[32];
    snprintf(t, sizeof t, "%llu pushed", (unsigned long long)ok);
    *out = strdup(t);
}

int main(int argc, char **argv) {
    CHECK(argc == 3);
    if (argc != 3)
        return 1;
    uint8_t *data = read_file(argv[1], &g_len);
    uint8_t *synth = read_file(argv[2], &g_synth_len);
    CHECK(data && synth);
    g_data = data;
    g_synth = synth;
    snprintf(g_url, sizeof g_url, "http://127.0.0.1:%d/", sinktest_closed_port());
    sweep("source", run_source, true);
    sweep("metrics", run_metrics, true);
    sweep("fan-out", run_fanout, false);
    sweep("views", run_views, false);
    if (jfrs_kafka_available())
        sweep("kafka", run_kafka, false);
    else
        printf("test_sink_alloc: built without librdkafka: Kafka not checked\n");
    if (jfrs_pyroscope_available()) {
        sweep("pyroscope", run_pyroscope, false);
    } else {
        printf("test_sink_alloc: built without libcurl: Pyroscope not checked\n");
    }
    free(data);
    free(synth);
    if (g_failures) {
        fprintf(stderr, "test_sink_alloc: %d failure(s)\n", g_failures);
        return 1;
    }
    printf("test_sink_alloc: ok\n");
    return 0;
}
