/*
 * test_metrics_registry.c — the metrics registry (jfrstream_sink.h, "metrics") over
 * test/data/workload.jfr, a JDK 17 recording whose values the JDK's own `jfr
 * print --json` gives (test/data/workload.json): 3 G1New collections summing
 * 0.067633441 s and 1 G1Full of 0.076617518 s, the last jdk.CPULoad jvmUser +
 * jvmSystem 0.33 and machineTotal 1, the last heapUsed 43,401,192 (committed
 * 167,772,160, reserved 6,320,816,128), 12 threads of which 7 daemons,
 * ObjectAllocationSample weights summing 80,956,392, 9 JavaMonitorEnter
 * of 0.581530506 s, 596 events. Then: the same exposition at every feed
 * size; the TTL; a JVM that reconnects takes its series over; two open
 * sources with one id; the caps on sources and series; label escaping; the
 * application's series; the HTTP endpoint when built with libmicrohttpd.
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#include "../sink/sinktest.h"

#include <arpa/inet.h>
#include <math.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* ------------------------------------------------------------ feeding */

typedef struct input {
    jfrs_source *src;
    jfrs_metrics_src *ms;
    jfr_parser *p;
} input;

/* A new input on `m` named by `peer`; NULL ms when refused. */
static input open_input(jfrs_metrics *m, const char *peer, jfr_status want) {
    input in = {0};
    in.src = jfrs_source_new("peer", peer, NULL);
    CHECK(in.src);
    CHECK(jfrs_metrics_src_new(m, in.src, &in.ms) == want);
    jfr_callbacks cb;
    sinktest_metrics_callbacks(&cb);
    in.p = jfr_parser_new(NULL, &cb, in.ms);
    CHECK(in.p);
    CHECK(jfrs_source_subscribe(in.src, in.p) == JFR_OK);
    CHECK(jfrs_metrics_src_subscribe(in.ms, in.p) == JFR_OK);
    return in;
}

/* slice 0: random slices */
static void feed(input *in, const uint8_t *data, size_t len, size_t slice) {
    unsigned seed = 7;
    for (size_t off = 0; off < len;) {
        size_t n = slice ? slice : 1 + rnd_next(&seed) % 9000;
        if (n > len - off)
            n = len - off;
        jfr_parser_feed(in->p, data + off, n);
        off += n;
    }
}

static void close_input(input *in) {
    jfr_parser_finish(in->p);
    jfrs_metrics_src_end(in->ms);
    jfr_parser_free(in->p);
    jfrs_source_free(in->src);
}

/* ------------------------------------------------------------ reading */

/* The rendered text without the lines that hold the time. */
static char *render_stable(jfrs_metrics *m) {
    size_t len = 0;
    const char *t = jfrs_metrics_render(m, &len);
    CHECK(t && strlen(t) == len);
    return sinktest_stable(t);
}

/* The value of the sample whose line starts with `head` (name, labels and
 * the space before the value); NAN when absent; at most one such line. */
static double value_of(const char *text, const char *head) {
    double v = NAN;
    int found = 0;
    for (const char *l = text; (l = strstr(l, head)) != NULL; l++) {
        if (l != text && l[-1] != '\n')
            continue;
        v = strtod(l + strlen(head), NULL); /* head ends with "} " or "name " */
        found++;
    }
    CHECK(found <= 1);
    return v;
}

/* Samples of sources in a fresh render (time lines included). */
static int source_series(jfrs_metrics *m) {
    int n = 0;
    for (const char *l = jfrs_metrics_render(m, NULL); l && (l = strstr(l, "{source=\"")) != NULL; l++)
        n++;
    return n;
}

static bool near(double a, double b) { return fabs(a - b) <= 1e-9 * (fabs(b) > 1 ? fabs(b) : 1); }

static int count_lines(const char *text, const char *prefix) {
    int n = 0;
    for (const char *l = text; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL)
        if (strncmp(l, prefix, strlen(prefix)) == 0)
            n++;
    return n;
}

/* ------------------------------------------------------------ HTTP */

static bool scrape_text(void *user, char **body, size_t *len) {
    jfrs_metrics *m = user;
    size_t n = 0;
    const char *t = jfrs_metrics_render(m, &n);
    if (!t)
        return false;
    *body = malloc(n);
    if (!*body)
        return false;
    memcpy(*body, t, n);
    *len = n;
    return true;
}

/* Send `req`, read the whole answer (the server closes: Connection: close). */
static char *http(int port, const char *req) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    CHECK(fd >= 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    CHECK(connect(fd, (struct sockaddr *)&a, sizeof a) == 0);
    struct timeval tv = {5, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    CHECK(write(fd, req, strlen(req)) == (ssize_t)strlen(req));
    shutdown(fd, SHUT_WR);
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);
    CHECK(buf);
    for (;;) {
        if (len + 4096 > cap) {
            cap *= 2;
            buf = realloc(buf, cap);
            CHECK(buf);
        }
        ssize_t n = read(fd, buf + len, cap - len - 1);
        if (n <= 0)
            break;
        len += (size_t)n;
    }
    buf[len] = '\0';
    close(fd);
    return buf;
}

static void test_http(jfrs_metrics *m, const char *text) {
    char err[256];
    jfrs_metrics_http *h = NULL;
    if (!jfrs_metrics_http_available()) {
        CHECK(jfrs_metrics_http_start(NULL, 0, scrape_text, m, &h, err, sizeof err) ==
              JFR_UNSUPPORTED);
        printf("http: not built (no libmicrohttpd): JFR_UNSUPPORTED checked\n");
        return;
    }
    CHECK(jfrs_metrics_http_start("not-an-address", 0, scrape_text, m, &h, err, sizeof err) ==
          JFR_INVALID_ARG);
    CHECK(strstr(err, "not-an-address"));
    CHECK(jfrs_metrics_http_start("127.0.0.1", 0, scrape_text, m, &h, err, sizeof err) == JFR_OK);
    int port = jfrs_metrics_http_port(h);
    CHECK(port > 0);
    /* the same port again: a clear error */
    jfrs_metrics_http *h2 = NULL;
    CHECK(jfrs_metrics_http_start("127.0.0.1", port, scrape_text, m, &h2, err, sizeof err) ==
          JFR_IO);
    CHECK(strstr(err, "cannot listen"));
    printf("http: second bind refused: %s\n", err);

    char *r = http(port, "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    CHECK(strncmp(r, "HTTP/1.1 200", 12) == 0);
    CHECK(strstr(r, "Content-Type: text/plain; version=0.0.4; charset=utf-8\r\n"));
    const char *body = strstr(r, "\r\n\r\n");
    CHECK(body && strstr(body, "jfr_events_total{"));
    CHECK(strlen(body + 4) + 200 > strlen(text)); /* the whole text (times may differ) */
    free(r);
    r = http(port, "HEAD /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    CHECK(strncmp(r, "HTTP/1.1 200", 12) == 0 && !strstr(r, "# TYPE"));
    free(r);
    r = http(port, "GET /other HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    CHECK(strncmp(r, "HTTP/1.1 404", 12) == 0);
    free(r);
    r = http(port, "POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nConnection: "
                   "close\r\n\r\nhello");
    CHECK(strncmp(r, "HTTP/1.1 405", 12) == 0 && strstr(r, "Allow: GET, HEAD"));
    free(r);
    r = http(port, "\x01\x02garbage garbage\r\n\r\n");
    CHECK(r[0] == '\0' || strncmp(r, "HTTP/1.1 400", 12) == 0);
    printf("http: garbage answered '%.12s'\n", r);
    free(r);
    /* a header larger than the connection's memory: refused, no crash */
    enum { big = 64 * 1024 };
    static char req[big + 200];
    int k = snprintf(req, 200, "GET /metrics HTTP/1.1\r\nHost: x\r\nX-Big: ");
    memset(req + k, 'a', big);
    strcpy(req + k + big, "\r\n\r\n");
    r = http(port, req);
    CHECK(r[0] == '\0' || strncmp(r, "HTTP/1.1 4", 10) == 0);
    printf("http: a 64 KiB header answered '%.12s'\n", r);
    free(r);
    r = http(port, "GET /metrics HTTP/1.0\r\n\r\n"); /* still serving */
    CHECK(strncmp(r, "HTTP/1.", 7) == 0 && strstr(r, " 200 "));
    free(r);
    jfrs_metrics_http_stop(h);
    printf("http: 200, HEAD, 404, 405, garbage, big header: ok on port %d\n", port);
}

/* jfrs_metrics_server: scrapes wake this thread (a byte in a pipe), which
 * renders; before _serve and after _stop a scrape gets a 503. */
static int wake_pipe[2];
static int wakes, answered;

static void wake_fn(void *user) {
    __atomic_fetch_add((int *)user, 1, __ATOMIC_SEQ_CST);
    CHECK(write(wake_pipe[1], "w", 1) == 1);
}

typedef struct scrape_job {
    pthread_t t;
    int port;
    char *answer;
} scrape_job;

static void *scrape_thread(void *arg) {
    scrape_job *j = arg;
    j->answer = http(j->port, "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    __atomic_fetch_add(&answered, 1, __ATOMIC_SEQ_CST);
    return NULL;
}

static void test_server(jfrs_metrics *m, const char *text) {
    char err[256];
    jfrs_metrics_server *s = NULL;
    if (!jfrs_metrics_http_available()) {
        CHECK(jfrs_metrics_server_start(m, NULL, 0, &s, err, sizeof err) == JFR_UNSUPPORTED);
        CHECK(!s);
        printf("server: not built (no libmicrohttpd): JFR_UNSUPPORTED checked\n");
        return;
    }
    CHECK(jfrs_metrics_server_start(NULL, NULL, 0, &s, err, sizeof err) == JFR_INVALID_ARG);
    CHECK(jfrs_metrics_server_start(m, "not-an-address", 0, &s, err, sizeof err) ==
          JFR_INVALID_ARG && !s);
    CHECK(jfrs_metrics_server_start(m, "127.0.0.1", 0, &s, err, sizeof err) == JFR_OK);
    int port = jfrs_metrics_server_port(s);
    CHECK(port > 0);
    char *r = http(port, "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    CHECK(strncmp(r, "HTTP/1.1 503", 12) == 0); /* not serving yet */
    free(r);
    CHECK(pipe(wake_pipe) == 0);
    jfrs_metrics_server_serve(s, wake_fn, &wakes);
    /* three scrapes at once: each wakes us; every one gets the whole text */
    scrape_job jobs[3];
    for (int i = 0; i < 3; i++) {
        jobs[i].port = port;
        CHECK(pthread_create(&jobs[i].t, NULL, scrape_thread, &jobs[i]) == 0);
    }
    int renders = 0;
    for (;;) {
        struct pollfd pf = {.fd = wake_pipe[0], .events = POLLIN};
        int n = poll(&pf, 1, 100);
        CHECK(n >= 0);
        if (__atomic_load_n(&answered, __ATOMIC_SEQ_CST) == 3)
            break;
        if (n == 1) {
            char c[8];
            CHECK(read(wake_pipe[0], c, sizeof c) > 0);
            jfrs_metrics_server_service(s);
            renders++;
        }
    }
    for (int i = 0; i < 3; i++) {
        CHECK(pthread_join(jobs[i].t, NULL) == 0);
        CHECK(strncmp(jobs[i].answer, "HTTP/1.1 200", 12) == 0);
        const char *body = strstr(jobs[i].answer, "\r\n\r\n");
        CHECK(body && strstr(body, "jfr_events_total{"));
        CHECK(strlen(body + 4) + 200 > strlen(text));
        free(jobs[i].answer);
    }
    jfrs_metrics_server_service(s); /* nothing waits: no render, no harm */
    /* a scrape nobody services: stop answers it with a 503, not a hang */
    scrape_job late = {.port = port};
    CHECK(pthread_create(&late.t, NULL, scrape_thread, &late) == 0);
    while (__atomic_load_n(&wakes, __ATOMIC_SEQ_CST) < 4)
        usleep(1000);
    jfrs_metrics_server_stop(s);
    CHECK(pthread_join(late.t, NULL) == 0);
    CHECK(late.answer[0] == '\0' || strncmp(late.answer, "HTTP/1.1 503", 12) == 0);
    free(late.answer);
    jfrs_metrics_server_stop(NULL);
    jfrs_metrics_server_service(NULL);
    CHECK(jfrs_metrics_server_port(NULL) == 0);
    close(wake_pipe[0]);
    close(wake_pipe[1]);
    printf("server: 503 before serve, 3 scrapes at once in %d render(s), 503 at stop: ok\n",
           renders);
}

/* ------------------------------------------------------------ main */

int main(int argc, char **argv) {
    CHECK(argc == 3);
    size_t len = 0, slen = 0;
    uint8_t *data = read_file(argv[1], &len);
    uint8_t *synth = read_file(argv[2], &slen);
    CHECK(data && synth);

    /* the values, and the same text at every feed size */
    char *first = NULL;
    static const size_t slices[] = {1u << 30, 1, 7, 4093, 0};
    for (size_t k = 0; k < sizeof slices / sizeof *slices; k++) {
        jfrs_metrics_config cfg;
        jfrs_metrics_config_init(&cfg);
        jfrs_metrics *m = NULL;
        CHECK(jfrs_metrics_new(&cfg, &m) == JFR_OK);
        input in = open_input(m, "127.0.0.1:40000", JFR_OK);
        CHECK(jfrs_source_set(in.src, "team", "a\"b\\c\nd\xff") == JFR_OK);
        feed(&in, data, len, slices[k]);
        char *t = render_stable(m);
        close_input(&in);
        if (!first) {
            first = t;
            const char *s = "{source=\"127.0.0.1:14951:";
            CHECK(strstr(t, s + 1));
            /* escaped user label, invalid UTF-8 replaced */
            CHECK(strstr(t, ",team=\"a\\\"b\\\\c\\nd\xef\xbf\xbd\""));
            char head[512];
            const char *src = strstr(t, "source=\"127.0.0.1:14951:");
            size_t sl = (size_t)(strchr(src + 8, '"') - src) + 1;
            char lab[256];
            snprintf(lab, sizeof lab, "%.*s,team=\"a\\\"b\\\\c\\nd\xef\xbf\xbd\"", (int)sl, src);
#define V(fmt, ...) (snprintf(head, sizeof head, fmt, __VA_ARGS__), value_of(t, head))
            CHECK(V("jvm_gc_duration_seconds_count{%s,jvm_gc_name=\"G1New\",jvm_gc_action=\"end of minor GC\"} ", lab) == 3);
            CHECK(near(V("jvm_gc_duration_seconds_sum{%s,jvm_gc_name=\"G1New\",jvm_gc_action=\"end of minor GC\"} ", lab), 0.067633441));
            CHECK(V("jvm_gc_duration_seconds_count{%s,jvm_gc_name=\"G1Full\",jvm_gc_action=\"end of major GC\"} ", lab) == 1);
            CHECK(near(V("jvm_gc_duration_seconds_sum{%s,jvm_gc_name=\"G1Full\",jvm_gc_action=\"end of major GC\"} ", lab), 0.076617518));
            CHECK(V("jvm_gc_duration_seconds_bucket{%s,jvm_gc_name=\"G1New\",jvm_gc_action=\"end of minor GC\",le=\"+Inf\"} ", lab) == 3);
            CHECK(V("jvm_gc_duration_seconds_bucket{%s,jvm_gc_name=\"G1Full\",jvm_gc_action=\"end of major GC\",le=\"0.05\"} ", lab) == 0);
            CHECK(V("jvm_gc_duration_seconds_bucket{%s,jvm_gc_name=\"G1Full\",jvm_gc_action=\"end of major GC\",le=\"0.1\"} ", lab) == 1);
            CHECK(fabs(V("jvm_cpu_recent_utilization_ratio{%s} ", lab) - 0.33) < 1e-6);
            CHECK(V("jvm_system_cpu_utilization_ratio{%s} ", lab) == 1);
            CHECK(V("jvm_memory_used_bytes{%s,jvm_memory_type=\"heap\"} ", lab) == 43401192);
            CHECK(V("jvm_memory_committed_bytes{%s,jvm_memory_type=\"heap\"} ", lab) == 167772160);
            CHECK(V("jvm_memory_limit_bytes{%s,jvm_memory_type=\"heap\"} ", lab) == 6320816128.0);
            CHECK(V("jvm_threads{%s,jvm_thread_daemon=\"true\"} ", lab) == 7);
            CHECK(V("jvm_threads{%s,jvm_thread_daemon=\"false\"} ", lab) == 5);
            CHECK(V("jvm_memory_allocated_bytes_total{%s,jfr_event=\"jdk.ObjectAllocationSample\"} ", lab) == 80956392);
            CHECK(V("jvm_lock_contentions_total{%s} ", lab) == 9);
            CHECK(near(V("jvm_lock_contention_seconds_total{%s} ", lab), 0.581530506));
            CHECK(V("jfr_events_total{%s,type=\"jdk.JavaErrorThrow\"} ", lab) == 35);
            CHECK(V("jfr_events_total{%s,type=\"jfrstream.Timed\"} ", lab) == 62);
            CHECK(V("jfr_bytes_total{%s} ", lab) == (double)len);
            CHECK(V("jfr_chunks_total{%s} ", lab) == 1);
            CHECK(V("jfr_source_connected{%s} ", lab) == 1);
            CHECK(value_of(t, "jfrstream_events_total ") == 596);
            CHECK(value_of(t, "jfrstream_sources_open ") == 1);
            /* absent, not 0: this recording has none of these events */
            CHECK(!strstr(t, "jvm_classes{") && !strstr(t, "jvm_safepoints_total{") &&
                  !strstr(t, "jvm_exceptions_thrown_total{"));
            /* the sum of jfr_events_total is the events */
            double sum = 0;
            for (const char *l = t; (l = strstr(l, "\njfr_events_total{")) != NULL; l++)
                sum += strtod(strchr(l + 1, ' ') + 1, NULL);
            CHECK(sum == 596);
            /* the series held are those shown */
            CHECK(source_series(m) == 84 && value_of(t, "jfrstream_metrics_series ") == 84);
            /* one HELP and one TYPE per family */
            CHECK(count_lines(t, "# TYPE jvm_gc_duration_seconds ") == 1);
            CHECK(count_lines(t, "# TYPE jvm_memory_used_bytes ") == 1);
            printf("values: GC 3 + 1, CPU 0.33/1, heap 43401192, threads 7+5, 596 events: ok\n");
        } else {
            CHECK(strcmp(t, first) == 0);
            free(t);
        }
        jfrs_metrics_free(m);
    }
    printf("feed sizes: whole, 1, 7, 4093, random: identical text\n");

    /* TTL; a JVM that reconnects; two open sources with one id */
    {
        jfrs_metrics_config cfg;
        jfrs_metrics_config_init(&cfg);
        cfg.ttl_ms = 300;
        jfrs_metrics *m = NULL;
        CHECK(jfrs_metrics_new(&cfg, &m) == JFR_OK);
        input a = open_input(m, "127.0.0.1:40001", JFR_OK);
        feed(&a, data, len, 4096);
        close_input(&a);
        char *t = render_stable(m);
        CHECK(strstr(t, "jfr_source_connected{source=\"127.0.0.1:14951:"));
        CHECK(strstr(t, "} 0\n"));
        CHECK(value_of(t, "jfrstream_metrics_sources ") == 1);
        free(t);
        /* within the TTL, the same JVM again: its counters go on */
        input b = open_input(m, "127.0.0.1:40002", JFR_OK);
        feed(&b, data, len, 4096);
        t = render_stable(m);
        CHECK(value_of(t, "jfrstream_metrics_sources ") == 1);
        CHECK(count_lines(t, "jvm_gc_duration_seconds_count{source=\"127.0.0.1:14951:") == 2);
        CHECK(strstr(t, "jvm_gc_name=\"G1New\",jvm_gc_action=\"end of minor GC\"} 6\n"));
        CHECK(strstr(t, "peer=\"127.0.0.1:40002\""));
        free(t);
        /* a second open source with the same id: told apart */
        input c = open_input(m, "127.0.0.1:40003", JFR_OK);
        feed(&c, data, len, 4096);
        t = render_stable(m);
        CHECK(value_of(t, "jfrstream_metrics_sources ") == 2);
        CHECK(strstr(t, ",stream=\"2\""));
        free(t);
        close_input(&b);
        close_input(&c);
        /* after the TTL: gone, counted */
        struct timespec ts = {0, 400 * 1000 * 1000};
        nanosleep(&ts, NULL);
        t = render_stable(m);
        CHECK(!strstr(t, "source=\"127.0.0.1:14951"));
        CHECK(value_of(t, "jfrstream_metrics_expired_total ") == 2);
        CHECK(value_of(t, "jfrstream_metrics_sources ") == 0);
        CHECK(value_of(t, "jfrstream_metrics_series ") == 0);
        CHECK(value_of(t, "jfrstream_events_total ") == 3 * 596);
        CHECK(value_of(t, "jfrstream_bytes_total ") == 3.0 * (double)len);
        free(t);
        jfrs_metrics_free(m);
        printf("ttl, take-over, stream=2, expiry: ok\n");
    }

    /* two open sources of one id whose ids come in the other order (the one
     * opened later first): still told apart (both were stream 0 before) */
    {
        jfrs_metrics_config cfg;
        jfrs_metrics_config_init(&cfg);
        jfrs_metrics *m = NULL;
        CHECK(jfrs_metrics_new(&cfg, &m) == JFR_OK);
        input first = open_input(m, "127.0.0.1:40011", JFR_OK);
        input later = open_input(m, "127.0.0.1:40012", JFR_OK);
        feed(&later, data, len, 4096);
        feed(&first, data, len, 4096);
        char *t = render_stable(m);
        CHECK(value_of(t, "jfrstream_metrics_sources ") == 2);
        CHECK(count_lines(t, "jvm_gc_duration_seconds_count{source=\"127.0.0.1:14951:") == 4); /* 2 a source */
        CHECK(strstr(t, ",stream=\"2\""));
        free(t);
        close_input(&first);
        close_input(&later);
        jfrs_metrics_free(m);
        printf("two open sources of one id, ids in the other order: told apart\n");
    }

    /* caps */
    {
        jfrs_metrics_config cfg;
        jfrs_metrics_config_init(&cfg);
        cfg.max_sources = 2;
        jfrs_metrics *m = NULL;
        CHECK(jfrs_metrics_new(&cfg, &m) == JFR_OK);
        input a = open_input(m, "10.0.0.1:1", JFR_OK);
        input b = open_input(m, "10.0.0.2:1", JFR_OK);
        input c = open_input(m, "10.0.0.3:1", JFR_LIMIT); /* all open: refused */
        CHECK(c.ms != NULL);
        feed(&c, data, len, 4096); /* no series, but the reader's totals */
        char *u = render_stable(m);
        CHECK(value_of(u, "jfrstream_events_total ") == 596);
        CHECK(value_of(u, "jfrstream_bytes_total ") == (double)len);
        CHECK(value_of(u, "jfrstream_sources_open ") == 3);
        CHECK(value_of(u, "jfrstream_metrics_series ") == 8); /* a's and b's first 4 */
        CHECK(!strstr(u, "10.0.0.3"));
        free(u);
        close_input(&c);
        close_input(&a);
        input d = open_input(m, "10.0.0.4:1", JFR_OK); /* evicts a */
        char *t = render_stable(m);
        CHECK(strstr(t, "jfrstream_metrics_refused_total{limit=\"sources\"} 1\n"));
        CHECK(value_of(t, "jfrstream_metrics_evicted_total ") == 1);
        CHECK(value_of(t, "jfrstream_metrics_sources ") == 2);
        CHECK(value_of(t, "jfrstream_sources_total ") == 4);
        CHECK(value_of(t, "jfrstream_sources_open ") == 2);
        free(t);
        close_input(&b);
        close_input(&d);
        jfrs_metrics_free(m);

        jfrs_metrics_config_init(&cfg);
        cfg.max_series = 60;
        CHECK(jfrs_metrics_new(&cfg, &m) == JFR_OK);
        a = open_input(m, "10.0.0.1:1", JFR_OK);
        feed(&a, data, len, 4096);
        t = render_stable(m);
        CHECK(value_of(t, "jfrstream_metrics_series ") <= 60);
        /* the series held are those shown (of the source) */
        CHECK(source_series(m) == (int)value_of(t, "jfrstream_metrics_series "));
        double refused = value_of(t, "jfrstream_metrics_refused_total{limit=\"series\"} ");
        CHECK(refused > 0);
        /* counted once per series, not per event: the same again */
        feed(&a, data, len, 4096);
        free(t);
        t = render_stable(m);
        CHECK(value_of(t, "jfrstream_metrics_refused_total{limit=\"series\"} ") == refused);
        /* a source with no room for its first 4 series: refused */
        CHECK(value_of(t, "jfrstream_metrics_series ") > 56);
        b = open_input(m, "10.0.0.2:1", JFR_LIMIT);
        close_input(&b);
        printf("caps: sources refused 1, evicted 1; series refused %.0f\n", refused);
        free(t);
        close_input(&a);
        jfrs_metrics_free(m);
    }

    /* the application's series, bad input, the synthetic recording */
    {
        jfrs_metrics_config cfg;
        jfrs_metrics_config_init(&cfg);
        jfrs_metrics *m = NULL;
        CHECK(jfrs_metrics_new(&cfg, &m) == JFR_OK);
        CHECK(jfrs_metrics_set(m, "x_total", "counter", "X", "k=\"a\"", 1) == JFR_OK);
        CHECK(jfrs_metrics_set(m, "x_total", "counter", "X", "k=\"b\"", 2) == JFR_OK);
        CHECK(jfrs_metrics_set(m, "x_total", "counter", "X", "k=\"a\"", 5) == JFR_OK);
        CHECK(jfrs_metrics_set(m, "y", "histogram", "Y", NULL, 1) == JFR_INVALID_ARG);
        input a = open_input(m, "127.0.0.1:1", JFR_OK);
        feed(&a, synth, slen, 4096);
        static const uint8_t junk[200] = {'F', 'L', 'R', 0, 0, 2, 0, 0, 0xff};
        input b = open_input(m, "127.0.0.1:2", JFR_OK);
        feed(&b, junk, sizeof junk, 4096);
        close_input(&b);
        char *t = render_stable(m);
        CHECK(strstr(t, "# TYPE x_total counter\nx_total{k=\"a\"} 5\nx_total{k=\"b\"} 2\n"));
        CHECK(strstr(t, "jfr_parse_errors_total{source=\"127.0.0.1:2\",status=\""));
        CHECK(strstr(t, "jfrstream_parse_errors_total{status=\""));
        test_http(m, t);
        test_server(m, t);
        free(t);
        close_input(&a);
        jfrs_metrics_free(m);
    }
    CHECK(jfrs_metrics_new(NULL, NULL) == JFR_INVALID_ARG);
    jfrs_metrics_free(NULL);
    free(first);
    free(data);
    free(synth);
    printf("ok\n");
    return g_failures ? 1 : 0;
}
