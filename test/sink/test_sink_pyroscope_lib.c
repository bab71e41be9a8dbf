/*
 * test_sink_pyroscope_lib.c — the library side of the Pyroscope sink without a
 * server: Pyroscope's kinds (jfrc_pyroscope_kinds, jfrc_pyroscope_pprof),
 * pprof with chosen sample types (jfrc_profile_write_pprof_with: its
 * refusals, and the cpu profile of test/data/workload.jfr written), the
 * series name (jfrs_pyroscope_name: app fallbacks, skipped labels,
 * sanitising), and the sink against a closed port (jfrs_pyroscope_*: bad
 * URLs refused, a queue of 2 drops the oldest windows, the drain is bounded
 * and counts what is left). In a build without libcurl the sink's _new
 * returns JFR_UNSUPPORTED (checked instead).
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#include "sinktest.h"
#include "jfrstream_conv.h"
#include "jfrstream_sink.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static void kinds(void) {
    const jfrc_pyroscope_kind *k[16];
    size_t n = 0;
    const char *bad = NULL;
    CHECK(jfrc_pyroscope_kinds("cpu", k, 16, &n, &bad) == JFR_OK && n == 1);
    CHECK(strcmp(k[0]->name, "cpu") == 0 && strcmp(k[0]->metric, "process_cpu") == 0);
    CHECK(k[0]->pprof.nvalues == 1 && strcmp(k[0]->pprof.values[0].type, "cpu") == 0 &&
          strcmp(k[0]->pprof.values[0].unit, "nanoseconds") == 0);
    /* words and kind names, each kind once, in table order */
    CHECK(jfrc_pyroscope_kinds("lock,alloc,cpu,mutex", k, 16, &n, &bad) == JFR_OK && n == 6);
    static const char *const order[] = {"cpu", "alloc_in_new_tlab", "alloc_outside_tlab",
                                        "alloc_sample", "mutex", "block"};
    for (size_t i = 0; i < 6; i++)
        CHECK(strcmp(k[i]->name, order[i]) == 0);
    CHECK(strcmp(k[1]->pprof.values[0].type, "alloc_in_new_tlab_objects") == 0 &&
          k[1]->pprof.values[0].source == JFRC_PPROF_COUNT &&
          strcmp(k[1]->pprof.values[1].type, "alloc_in_new_tlab_bytes") == 0 &&
          k[1]->pprof.values[1].source == JFRC_PPROF_WEIGHT);
    CHECK(strcmp(k[4]->pprof.period_type, "mutex") == 0 &&
          strcmp(k[5]->pprof.period_type, "block") == 0);
    CHECK(jfrc_pyroscope_kinds("wall,live,nativemem", k, 16, &n, &bad) == JFR_OK && n == 3);
    CHECK(strcmp(k[2]->name, "malloc") == 0 && k[2]->pprof.period_type == NULL);
    /* cap: at most that many */
    CHECK(jfrc_pyroscope_kinds("alloc", k, 2, &n, &bad) == JFR_OK && n == 2);
    /* no Pyroscope type: refused, naming the word */
    const char *spec = "cpu,cputime";
    CHECK(jfrc_pyroscope_kinds(spec, k, 16, &n, &bad) == JFR_INVALID_ARG && bad == spec + 4);
    CHECK(jfrc_pyroscope_kinds("jdk.ExecutionSample", k, 16, &n, &bad) == JFR_INVALID_ARG);
    CHECK(jfrc_pyroscope_kinds("", k, 16, &n, &bad) == JFR_INVALID_ARG);
    /* the period: the recording's, else the kind's default */
    jfrc_pprof_options o;
    CHECK(jfrc_pyroscope_kinds("cpu,wall,lock", k, 16, &n, &bad) == JFR_OK && n == 4);
    jfrc_pyroscope_pprof(k[0], 0, 5, 6, &o);
    CHECK(o.period == 10000000 && o.values[0].scale == 10000000 && o.time_nanos == 5 &&
          o.duration_nanos == 6 && strcmp(o.period_type, "cpu") == 0);
    jfrc_pyroscope_pprof(k[0], 20000000, 5, 6, &o);
    CHECK(o.period == 20000000 && o.values[0].scale == 20000000);
    jfrc_pyroscope_pprof(k[1], 0, 5, 6, &o);
    CHECK(strcmp(k[1]->name, "wall") == 0 && o.period == 20000000);
    jfrc_pyroscope_pprof(k[2], 20000000, 5, 6, &o); /* mutex: no period */
    CHECK(o.period == 0 && o.values[0].scale == 0 && o.nvalues == 2);
}

static int to_buf(void *user, const void *data, size_t len) {
    size_t *total = user;
    (void)data;
    *total += len;
    return 0;
}

static void pprof_with(const uint8_t *data, size_t len) {
    jfrc_profile *p = jfrc_profile_new();
    CHECK(p && jfrc_profile_select(p, "cpu") == JFR_OK);
    jfr_parser *parser = jfr_parser_new(NULL, NULL, NULL);
    CHECK(parser && jfrc_profile_subscribe(p, parser) == JFR_OK);
    CHECK(jfr_parser_feed(parser, data, len) == JFR_OK && jfr_parser_finish(parser) == JFR_OK);
    jfr_parser_free(parser);
    CHECK(jfrc_profile_events(p) == 7 && jfrc_profile_finish(p) == JFR_OK);
    size_t total = 0;
    jfrc_out *out = jfrc_out_new(to_buf, &total, 0);
    CHECK(out);
    jfrc_pprof_options o = JFRC_PPROF_OPTIONS_INIT;
    CHECK(jfrc_profile_write_pprof_with(p, out, &o) == JFR_INVALID_ARG); /* nvalues 0 */
    o.nvalues = 3;
    CHECK(jfrc_profile_write_pprof_with(p, out, &o) == JFR_INVALID_ARG);
    o.nvalues = 1;
    o.size = 4; /* below sizeof(size_t) */
    CHECK(jfrc_profile_write_pprof_with(p, out, &o) == JFR_INVALID_ARG);
    CHECK(jfrc_profile_write_pprof_with(p, out, NULL) == JFR_INVALID_ARG);
    CHECK(jfrc_out_flush(out) == JFR_OK && total == 0); /* nothing written */
    const jfrc_pyroscope_kind *k;
    size_t n;
    CHECK(jfrc_pyroscope_kinds("cpu", &k, 1, &n, NULL) == JFR_OK);
    jfrc_pyroscope_pprof(k, 0, 1700000000000000000LL, 1000000000, &o);
    CHECK(jfrc_profile_write_pprof_with(p, out, &o) == JFR_OK);
    CHECK(jfrc_out_flush(out) == JFR_OK && total > 100);
    jfrc_out_free(out);
    jfrc_profile_set_flags(p, JFRC_PROFILE_REVERSE);
    CHECK(jfrc_profile_write_pprof_with(p, NULL, &o) == JFR_INVALID_ARG);
    jfrc_profile_free(p);
}

static void series_name(const uint8_t *data, size_t len) {
    jfrs_source *s = jfrs_source_new("peer", "127.0.0.1:4000", NULL);
    CHECK(s);
    char *nm = jfrs_pyroscope_name(s, NULL); /* nothing known: jfrstream */
    CHECK(nm && strcmp(nm, "jfrstream{source=127.0.0.1:4000}") == 0);
    free(nm);
    CHECK(jfrs_source_set(s, "team", "a,b={c}\"d") == JFR_OK);
    nm = jfrs_pyroscope_name(s, "my app!");
    CHECK(nm && strcmp(nm, "my_app_{source=127.0.0.1:4000,team=a_b__c__d}") == 0);
    free(nm);
    jfr_parser *p = jfr_parser_new(NULL, NULL, NULL);
    CHECK(p && jfrs_source_subscribe(s, p) == JFR_OK);
    CHECK(jfr_parser_feed(p, data, len) == JFR_OK && jfr_parser_finish(p) == JFR_OK);
    jfr_parser_free(p);
    /* main_class names the app; jvm_* and the peer stay out */
    nm = jfrs_pyroscope_name(s, "");
    char want[256];
    snprintf(want, sizeof want,
             "jdk.compiler/com.sun.tools.javac.launcher.Main{source=%s,pid=14951,"
             "main_class=jdk.compiler/com.sun.tools.javac.launcher.Main,team=a_b__c__d}",
             jfrs_source_id(s));
    CHECK(nm && strcmp(nm, want) == 0);
    free(nm);
    CHECK(jfrs_source_set(s, "service", "checkout") == JFR_OK);
    nm = jfrs_pyroscope_name(s, NULL);
    CHECK(nm && strncmp(nm, "checkout{", 9) == 0 && strstr(nm, ",service=checkout"));
    free(nm);
    jfrs_source_free(s);
}

static uint64_t now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void sink_down(void) {
    jfrs_pyroscope_config c;
    jfrs_pyroscope_config_init(&c);
    jfrs_pyroscope *p = NULL;
    if (!jfrs_pyroscope_available()) {
        c.url = "http://127.0.0.1:1";
        CHECK(jfrs_pyroscope_new(&c, &p) == JFR_UNSUPPORTED && !p);
        printf("test_pyroscope: built without libcurl: the sink's stubs checked\n");
        return;
    }
    CHECK(jfrs_pyroscope_new(&c, &p) == JFR_INVALID_ARG && !p); /* no URL */
    c.url = "ftp://127.0.0.1/";
    CHECK(jfrs_pyroscope_new(&c, &p) == JFR_INVALID_ARG && !p);
    char url[64];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/", sinktest_closed_port());
    c.url = url;
    c.queue_windows = 2;
    c.backoff_ms = 50;
    c.max_backoff_ms = 100;
    c.max_attempts = 3;
    CHECK(jfrs_pyroscope_new(&c, &p) == JFR_OK && p);
    static const char body[] = "not really pprof";
    for (int i = 0; i < 6; i++)
        CHECK(jfrs_pyroscope_push(p, "src-a", "app{x=y}", body, sizeof body, 1000 + i,
                                  1001 + i) == JFR_OK);
    CHECK(jfrs_pyroscope_push(p, "src-b", "app{x=z}", body, sizeof body, 1, 2) == JFR_OK);
    jfrs_pyroscope_stats st, sa;
    jfrs_pyroscope_stats_total(p, &st);
    CHECK(st.queued == 7);
    /* src-a: 2 waiting (+ 1 maybe in flight): 3 or 4 of 6 dropped */
    CHECK(jfrs_pyroscope_stats_source(p, "src-a", &sa) && sa.queued == 6);
    CHECK(sa.dropped == 3 || sa.dropped == 4);
    CHECK(!jfrs_pyroscope_stats_source(p, "nobody", &sa));
    /* every window fails after 3 attempts (50 + 100 ms apart): all end */
    uint64_t t0 = now_ms();
    uint64_t left = jfrs_pyroscope_drain(p, 5000);
    jfrs_pyroscope_stats_total(p, &st);
    CHECK(left == 0 && st.left == 0 && st.pending == 0 && st.pushed == 0);
    CHECK(st.dropped + st.failed == 7 && st.retried >= 2 * st.failed);
    CHECK(strstr(st.last_error, "onnect") != NULL); /* "Couldn't connect to server" */
    CHECK(now_ms() - t0 < 4000);
    CHECK(jfrs_pyroscope_push(p, "src-a", "app", body, 1, 1, 2) == JFR_INVALID_STATE);
    printf("test_pyroscope: down: %llu dropped, %llu failed, %llu retried (%s)\n",
           (unsigned long long)st.dropped, (unsigned long long)st.failed,
           (unsigned long long)st.retried, st.last_error);
    jfrs_pyroscope_free(p);

    /* a drain that runs out: what is queued is left, counted */
    c.backoff_ms = 10000;
    c.max_backoff_ms = 10000;
    c.queue_windows = 8;
    CHECK(jfrs_pyroscope_new(&c, &p) == JFR_OK);
    for (int i = 0; i < 3; i++)
        CHECK(jfrs_pyroscope_push(p, "src-a", "app", body, sizeof body, i, i + 1) == JFR_OK);
    t0 = now_ms();
    left = jfrs_pyroscope_drain(p, 300);
    jfrs_pyroscope_stats_total(p, &st);
    if (!(left == 3 && st.left == 3 && st.failed == 0 && st.dropped == 0))
        fprintf(stderr, "left %llu/%llu failed %llu dropped %llu pushed %llu\n",
                (unsigned long long)left, (unsigned long long)st.left,
                (unsigned long long)st.failed, (unsigned long long)st.dropped,
                (unsigned long long)st.pushed);
    CHECK(left == 3 && st.left == 3 && st.failed == 0 && st.dropped == 0);
    CHECK(now_ms() - t0 < 2000);
    jfrs_pyroscope_free(p);
    /* freed without a drain: stops at once */
    CHECK(jfrs_pyroscope_new(&c, &p) == JFR_OK);
    CHECK(jfrs_pyroscope_push(p, "s", "app", body, sizeof body, 1, 2) == JFR_OK);
    jfrs_pyroscope_free(p);
    jfrs_pyroscope_free(NULL);
}

int main(int argc, char **argv) {
    CHECK(argc == 2);
    size_t len = 0;
    uint8_t *data = read_file(argv[1], &len);
    CHECK(data);
    kinds();
    pprof_with(data, len);
    series_name(data, len);
    sink_down();
    free(data);
    if (g_failures) {
        printf("test_pyroscope: %d checks failed\n", g_failures);
        return 1;
    }
    printf("test_pyroscope: ok\n");
    return 0;
}
