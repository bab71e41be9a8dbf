/*
 * test_sink_api.c — the API rules of jfrstream_sink.h, without a server:
 *
 *   - sized structs (jfrstream.h, "STRUCTS YOU HAND IN"): the Kafka,
 *     Pyroscope and metrics configs of an older caller (a smaller size: the
 *     members past it are not read, whatever they hold) and of a newer one
 *     (a bigger size, its tail zero) are accepted, with the defaults for
 *     what the older one does not have; the Pyroscope config's
 *     authentication members and the metrics endpoint's config
 *     (jfrs_metrics_http_config) the same way, garbage past an older
 *     caller's size never read, and their bad values refused;
 *   - NULL: every public function called with NULL pointers returns what
 *     the header promises (JFR_INVALID_ARG, NULL, 0, nothing) without
 *     writing through them.
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#include "sinktest.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* ------------------------------------------------------------------ helpers */

/* What a function given a NULL refuses it with: JFR_INVALID_ARG, or
 * JFR_UNSUPPORTED in a build without the library behind it. */
static jfr_status refused(bool available) {
    return available ? JFR_INVALID_ARG : JFR_UNSUPPORTED;
}

/* The out-pointer `out`, which must be NULL after a refusal, made to point
 * somewhere first. */
static max_align_t g_somewhere;
#define POISONED(out) (*(out) = (void *)&g_somewhere, (out))

/* `st` as `get` fills it for a NULL handle (every byte 0xff before: what it
 * does not zero shows); `get(NULL, NULL)` too, harmless. Gives &st. */
#define STATS_OF_NULL(get, st)                                                 \
    (memset(&(st), 0xff, sizeof(st)), get(NULL, &(st)), get(NULL, NULL), &(st))

/* Whether the string `got` (malloc'd: freed here) is `want`. */
static bool owned_is(char *got, const char *want) {
    bool same = got && strcmp(got, want) == 0;
    free(got);
    return same;
}

/* ------------------------------------------------------------ sized structs */

static void kafka_sized(void) {
    if (!jfrs_kafka_available()) {
        printf("test_sink_api: built without librdkafka: Kafka configs not checked\n");
        return;
    }
    char err[512];
    jfrs_kafka *k = NULL;
    static const char *const mock[] = {"test.mock.num.brokers=1"};
    static const char *const bad[] = {"no.such.property=1"};
    /* an older caller, whose struct ends before `options`: the bad option
     * in what follows is not read */
    jfrs_kafka_config c;
    jfrs_kafka_config_init(&c);
    c.brokers = "127.0.0.1:9";
    c.options = bad;
    c.noptions = 1;
    CHECK(jfrs_kafka_new(&c, &k, err, sizeof err) == JFR_INVALID_ARG && !k);
    c.size = offsetof(jfrs_kafka_config, options);
    CHECK(jfrs_kafka_new(&c, &k, err, sizeof err) == JFR_OK && k);
    jfrs_kafka_free(k);
    k = NULL;
    /* a newer caller: its struct is bigger, the tail zero */
    SIZED_BUF(jfrs_kafka_config) newer;
    jfrs_kafka_config_init(&newer.c);
    sized_newer(&newer, sizeof newer.c);
    newer.c.brokers = "127.0.0.1:9";
    newer.c.options = mock;
    newer.c.noptions = 1;
    CHECK(jfrs_kafka_new(&newer.c, &k, err, sizeof err) == JFR_OK && k);
    jfrs_kafka_free(k);
    /* below sizeof(size_t): not a config */
    c.size = 2;
    CHECK(jfrs_kafka_new(&c, POISONED(&k), err, sizeof err) == JFR_INVALID_ARG && !k);
}

/* Push 8 windows of one source to a closed port: how many were dropped
 * (the queue holds queue_windows beside the one being sent). */
static uint64_t pyroscope_drops(const jfrs_pyroscope_config *c) {
    jfrs_pyroscope *p = NULL;
    CHECK(jfrs_pyroscope_new(c, &p) == JFR_OK && p);
    if (!p)
        return UINT64_MAX;
    static const char body[] = "not pprof";
    for (int i = 0; i < 8; i++)
        CHECK(jfrs_pyroscope_push(p, "a", "app{}", body, sizeof body, i, i + 1) == JFR_OK);
    jfrs_pyroscope_stats st;
    jfrs_pyroscope_stats_total(p, &st);
    jfrs_pyroscope_free(p);
    return st.dropped;
}

/* jfrs_pyroscope_new's verdict on c (the sink freed at once). */
static jfr_status pyroscope_new_status(const jfrs_pyroscope_config *c) {
    jfrs_pyroscope *p = NULL;
    jfr_status st = jfrs_pyroscope_new(c, &p);
    CHECK((st == JFR_OK) == (p != NULL));
    jfrs_pyroscope_free(p);
    return st;
}

/* The members appended for authentication and TLS. */
static void pyroscope_auth_sized(const char *url) {
    static const char *const good_headers[] = {"X-Team: perf", "X-Empty:"};
    static const char *const crlf[] = {"X-Team: perf\r\nX-Injected: 1"};
    static const char *const no_name[] = {": v"};
    static const char *const spaced_name[] = {"X Team: v"};
    jfrs_pyroscope_config c;
    jfrs_pyroscope_config_init(&c);
    c.url = url;
    c.basic_auth = "user:pass:with:colons";
    c.tenant = "tenant-1";
    c.headers = good_headers;
    c.nheaders = 2;
    c.ca_file = "/nonexistent/ca.pem"; /* read by libcurl per request, not here */
    CHECK(pyroscope_new_status(&c) == JFR_OK);
    c.bearer_token = "tok"; /* both */
    CHECK(pyroscope_new_status(&c) == JFR_INVALID_ARG);
    c.basic_auth = NULL;
    CHECK(pyroscope_new_status(&c) == JFR_OK);
    c.bearer_token = "tok en";
    CHECK(pyroscope_new_status(&c) == JFR_INVALID_ARG);
    c.bearer_token = NULL;
    const char *bad_basic[] = {"nocolon", ":emptyuser", "u:p\nX: y"};
    for (size_t i = 0; i < 3; i++) {
        c.basic_auth = bad_basic[i];
        CHECK(pyroscope_new_status(&c) == JFR_INVALID_ARG);
    }
    c.basic_auth = NULL;
    c.tenant = "t\r\nX: y";
    CHECK(pyroscope_new_status(&c) == JFR_INVALID_ARG);
    c.tenant = NULL;
    const char *const *bad_headers[] = {crlf, no_name, spaced_name};
    for (size_t i = 0; i < 3; i++) {
        c.headers = bad_headers[i];
        c.nheaders = 1;
        CHECK(pyroscope_new_status(&c) == JFR_INVALID_ARG);
    }
    c.headers = NULL; /* nheaders without headers */
    CHECK(pyroscope_new_status(&c) == JFR_INVALID_ARG);
    /* an older caller, whose struct ends before basic_auth: garbage in
     * every byte after (bad pointers) is never read */
    jfrs_pyroscope_config base;
    jfrs_pyroscope_config_init(&base);
    base.url = url;
    SIZED_BUF(jfrs_pyroscope_config) older;
    sized_older(&older, &base, sizeof base, offsetof(jfrs_pyroscope_config, basic_auth), 0xa5);
    CHECK(pyroscope_new_status(&older.c) == JFR_OK);
    /* a newer one: its tail zero, the new members set */
    SIZED_BUF(jfrs_pyroscope_config) newer;
    jfrs_pyroscope_config_init(&newer.c);
    sized_newer(&newer, sizeof newer.c);
    newer.c.url = url;
    newer.c.bearer_token = "tok";
    newer.c.tenant = "t";
    CHECK(pyroscope_new_status(&newer.c) == JFR_OK);
    newer.c.tenant = "";
    CHECK(pyroscope_new_status(&newer.c) == JFR_INVALID_ARG);
}

static void pyroscope_sized(void) {
    if (!jfrs_pyroscope_available()) {
        printf("test_sink_api: built without libcurl: Pyroscope configs not checked\n");
        return;
    }
    char url[64];
    snprintf(url, sizeof url, "http://127.0.0.1:%d", sinktest_closed_port());
    jfrs_pyroscope_config c;
    jfrs_pyroscope_config_init(&c);
    c.url = url;
    c.backoff_ms = c.max_backoff_ms = 60000; /* the first attempt only */
    c.queue_windows = 1;
    CHECK(pyroscope_drops(&c) >= 6); /* read: 8 pushed, 1 or 2 kept */
    /* an older caller, whose struct ends before queue_windows: the default
     * queue of 8 holds all 8 */
    c.size = offsetof(jfrs_pyroscope_config, queue_windows);
    CHECK(pyroscope_drops(&c) == 0);
    SIZED_BUF(jfrs_pyroscope_config) newer;
    jfrs_pyroscope_config_init(&newer.c);
    sized_newer(&newer, sizeof newer.c);
    newer.c.url = url;
    newer.c.queue_windows = 1;
    CHECK(pyroscope_drops(&newer.c) >= 6);
    jfrs_pyroscope *p;
    c.size = 0;
    CHECK(jfrs_pyroscope_new(&c, POISONED(&p)) == JFR_INVALID_ARG && !p);
    pyroscope_auth_sized(url);
}

/* Whether a new source gets series (not refused over max_series). */
static jfr_status metrics_src_status(const jfrs_metrics_config *c) {
    jfrs_metrics *m = NULL;
    CHECK(jfrs_metrics_new(c, &m) == JFR_OK && m);
    if (!m)
        return JFR_NOMEM;
    jfrs_source *s = jfrs_source_new("peer", "127.0.0.1:1", NULL);
    jfrs_metrics_src *ms = NULL;
    jfr_status st = jfrs_metrics_src_new(m, s, &ms);
    jfrs_metrics_src_end(ms);
    jfrs_source_free(s);
    jfrs_metrics_free(m);
    return st;
}

static void metrics_sized(void) {
    jfrs_metrics_config c;
    jfrs_metrics_config_init(&c);
    c.max_series = 1; /* no room for a source's first 4 */
    CHECK(metrics_src_status(&c) == JFR_LIMIT);
    /* an older caller, whose struct ends before max_series: the default */
    c.size = offsetof(jfrs_metrics_config, max_series);
    CHECK(metrics_src_status(&c) == JFR_OK);
    SIZED_BUF(jfrs_metrics_config) newer;
    jfrs_metrics_config_init(&newer.c);
    sized_newer(&newer, sizeof newer.c);
    CHECK(metrics_src_status(&newer.c) == JFR_OK);
    newer.c.max_series = 1;
    CHECK(metrics_src_status(&newer.c) == JFR_LIMIT);
    jfrs_metrics *m;
    c.size = 1;
    CHECK(jfrs_metrics_new(&c, POISONED(&m)) == JFR_INVALID_ARG && !m);
}


static bool scrape_empty(void *user, char **body, size_t *len) {
    (void)user;
    *body = malloc(1);
    *len = 0;
    return *body != NULL;
}

/* jfrs_metrics_http_start_with's verdict on c (the server stopped at
 * once); its message in err. */
static jfr_status http_status(const jfrs_metrics_http_config *c, char *err, size_t n) {
    jfrs_metrics_http *h = NULL;
    jfr_status st = jfrs_metrics_http_start_with(c, scrape_empty, NULL, &h, err, n);
    CHECK((st == JFR_OK) == (h != NULL));
    CHECK(jfrs_metrics_http_unauthorized(h) == 0);
    jfrs_metrics_http_stop(h);
    return st;
}

static void metrics_http_sized(void) {
    if (!jfrs_metrics_http_available()) {
        printf("test_sink_api: built without libmicrohttpd: endpoint configs not checked\n");
        return;
    }
    char err[256];
    jfrs_metrics_http_config c;
    jfrs_metrics_http_config_init(&c);
    CHECK(http_status(&c, err, sizeof err) == JFR_OK);
    c.basic_auth = "alice:secret\r\n# a comment\n\nbob:$2y$10$abcdefghijklmnopqrstuv0123456789ABCDEFGHIJKLMNOPQRSTU\n";
    jfr_status bcrypt = http_status(&c, err, sizeof err);
    CHECK(bcrypt == JFR_OK || (bcrypt == JFR_INVALID_ARG && strstr(err, "line 4")));
    static const char *const bad[][2] = {
        {"alice", "line 1: no ':'"},
        {"alice:a\n:b", "line 2: an empty user"},
        {"alice:a\nalice:b", "line 2: that user a second time"},
        {"# nobody\n", "no user"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        c.basic_auth = bad[i][0];
        CHECK(http_status(&c, err, sizeof err) == JFR_INVALID_ARG && strstr(err, bad[i][1]));
    }
    c.basic_auth = NULL;
    c.tls_cert_pem = "-----BEGIN CERTIFICATE-----"; /* without its key */
    CHECK(http_status(&c, err, sizeof err) == JFR_INVALID_ARG);
    c.tls_key_pem = "-----BEGIN PRIVATE KEY-----"; /* not PEM: libmicrohttpd refuses it */
    jfr_status st = http_status(&c, err, sizeof err);
    CHECK(st == (jfrs_metrics_http_tls_available() ? JFR_IO : JFR_UNSUPPORTED));
    /* an older caller, whose struct ends before tls_cert_pem: garbage
     * after it never read (plain HTTP, no users) */
    jfrs_metrics_http_config base;
    jfrs_metrics_http_config_init(&base);
    SIZED_BUF(jfrs_metrics_http_config) older;
    sized_older(&older, &base, sizeof base, offsetof(jfrs_metrics_http_config, tls_cert_pem),
                0xa5);
    CHECK(http_status(&older.c, err, sizeof err) == JFR_OK);
    SIZED_BUF(jfrs_metrics_http_config) newer;
    jfrs_metrics_http_config_init(&newer.c);
    sized_newer(&newer, sizeof newer.c);
    newer.c.basic_auth = "alice:secret";
    CHECK(http_status(&newer.c, err, sizeof err) == JFR_OK);
    newer.c.basic_auth = "alice";
    CHECK(http_status(&newer.c, err, sizeof err) == JFR_INVALID_ARG);
    c.size = 1;
    jfrs_metrics_http *h;
    CHECK(jfrs_metrics_http_start_with(&c, scrape_empty, NULL, POISONED(&h), err, sizeof err) ==
              JFR_INVALID_ARG && !h);
    /* the served registry takes the same config */
    jfrs_metrics_config mc;
    jfrs_metrics_config_init(&mc);
    jfrs_metrics *m = NULL;
    CHECK(jfrs_metrics_new(&mc, &m) == JFR_OK);
    jfrs_metrics_server *srv = NULL;
    CHECK(jfrs_metrics_server_start_with(m, &newer.c, &srv, err, sizeof err) ==
              JFR_INVALID_ARG && !srv);
    newer.c.basic_auth = "alice:secret";
    CHECK(jfrs_metrics_server_start_with(m, &newer.c, &srv, err, sizeof err) == JFR_OK && srv);
    CHECK(jfrs_metrics_server_unauthorized(srv) == 0);
    jfrs_metrics_server_stop(srv);
    jfrs_metrics_free(m);
}

/* ------------------------------------------------------------------- NULLs
 *
 * One check a line: a function given NULL for a handle or a pointer, and
 * what it returns (jfrstream_sink.h); a call without a CHECK must only not
 * crash. */

static void nulls_source(void) {
    CHECK(jfrs_source_new(NULL, "x", NULL) == NULL);
    CHECK(jfrs_source_new("peer", NULL, NULL) == NULL);
    jfrs_source_free(NULL);
    CHECK(jfrs_source_set(NULL, "k", "v") == JFR_INVALID_ARG);
    CHECK(jfrs_source_subscribe(NULL, NULL) == JFR_INVALID_ARG);
    jfrs_source_event(NULL, NULL);
    CHECK(!jfrs_source_identified(NULL));
    CHECK(jfrs_source_generation(NULL) == 0);
    CHECK(jfrs_source_id(NULL) == NULL);
    CHECK(jfrs_source_nlabels(NULL) == 0);
    CHECK(jfrs_source_key(NULL, 0) == NULL && jfrs_source_value(NULL, 0) == NULL);
    CHECK(jfrs_source_get(NULL, "source") == NULL);
    CHECK(jfrs_source_json(NULL) == NULL);
    CHECK(owned_is(jfrs_pyroscope_name(NULL, "app"), "app{}")); /* no source: no labels */
    jfrs_source *s = jfrs_source_new("peer", "127.0.0.1:1", NULL);
    CHECK(s != NULL);
    CHECK(jfrs_source_set(s, NULL, "v") == JFR_INVALID_ARG);
    CHECK(jfrs_source_set(s, "k", NULL) == JFR_INVALID_ARG);
    CHECK(jfrs_source_subscribe(s, NULL) == JFR_INVALID_ARG);
    jfrs_source_event(s, NULL);
    CHECK(jfrs_source_get(s, NULL) == NULL);
    CHECK(jfrs_source_key(s, 99) == NULL && jfrs_source_value(s, 99) == NULL);
    CHECK(jfrs_source_nlabels(s) == 2 && strcmp(jfrs_source_get(s, "peer"), "127.0.0.1:1") == 0);
    jfrs_source_free(s);
}

static void nulls_kafka(void) {
    char err[256];
    jfrs_kafka *k = NULL;
    jfrs_kafka_config c;
    jfrs_kafka_config_init(NULL);
    jfrs_kafka_config_init(&c);
    c.brokers = "127.0.0.1:9";
    jfr_status no = refused(jfrs_kafka_available());
    jfrs_kafka_stats st;
    CHECK(jfrs_kafka_new(NULL, &k, err, sizeof err) == no && !k);
    CHECK(jfrs_kafka_new(&c, NULL, err, sizeof err) == no);
    CHECK(jfrs_kafka_new(&c, NULL, NULL, 0) == no);
    jfrs_kafka_free(NULL);
    jfrs_kafka_poll(NULL);
    CHECK(jfrs_kafka_event_fd(NULL) == -1);
    CHECK(jfrs_kafka_flush(NULL, 0) == JFR_OK);
    CHECK(STATS_OF_NULL(jfrs_kafka_stats_get, st)->produced == 0 && st.last_error[0] == '\0');
    CHECK(jfrs_kafka_src_new(NULL, NULL) == NULL);
    jfrs_kafka_src_chunk_begin(NULL, NULL);
    jfrs_kafka_src_metadata(NULL, NULL);
    CHECK(jfrs_kafka_src_event(NULL, NULL) == no);
    CHECK(jfrs_kafka_src_decode_error(NULL) == NULL);
    CHECK(jfrs_kafka_src_retry(NULL) == JFR_OK);
    CHECK(jfrs_kafka_src_wait(NULL, 0) == JFR_OK);
    jfrs_kafka_src_end(NULL);
    CHECK(STATS_OF_NULL(jfrs_kafka_src_stats, st)->produced == 0);
    jfrs_kafka_src_free(NULL);
    jfrs_kafka_src_mark(NULL, 1);
    uint64_t dpos = 7;
    CHECK(jfrs_kafka_src_delivered(NULL, &dpos) == JFR_OK && dpos == 0);
    jfrs_fanout_src_mark(NULL, 1);
    const char *dwhy = "x";
    dpos = 7;
    CHECK(jfrs_fanout_src_delivered(NULL, &dpos, &dwhy) == JFR_INVALID_ARG && dpos == 0 &&
          dwhy == NULL);
    if (!jfrs_kafka_available())
        return;
    static const char *const mock[] = {"test.mock.num.brokers=1"};
    c.options = mock;
    c.noptions = 1;
    CHECK(jfrs_kafka_new(&c, &k, NULL, 0) == JFR_OK && k);
    jfrs_source *s = jfrs_source_new("peer", "127.0.0.1:1", NULL);
    CHECK(jfrs_kafka_src_new(k, NULL) == NULL);
    jfrs_kafka_src *ks = jfrs_kafka_src_new(k, s);
    CHECK(ks != NULL);
    jfrs_kafka_src_chunk_begin(ks, NULL);
    jfrs_kafka_src_metadata(ks, NULL);
    CHECK(jfrs_kafka_src_event(ks, NULL) == JFR_INVALID_ARG);
    jfrs_kafka_stats_get(k, NULL);
    jfrs_kafka_src_stats(ks, NULL);
    jfrs_kafka_src_end(ks);
    jfrs_kafka_src_free(ks);
    jfrs_source_free(s);
    jfrs_kafka_free(k);
}

static void nulls_pyroscope(void) {
    jfrs_pyroscope_config c;
    jfrs_pyroscope_config_init(NULL);
    jfrs_pyroscope_config_init(&c);
    c.url = "http://127.0.0.1:9";
    jfrs_pyroscope *p = NULL;
    jfr_status no = refused(jfrs_pyroscope_available());
    jfrs_pyroscope_stats st;
    CHECK(jfrs_pyroscope_new(NULL, &p) == no && !p);
    CHECK(jfrs_pyroscope_new(&c, NULL) == JFR_INVALID_ARG);
    jfrs_pyroscope_free(NULL);
    CHECK(jfrs_pyroscope_push(NULL, "a", "n", "b", 1, 0, 1) == no);
    jfrs_pyroscope_end_source(NULL, "a");
    CHECK(jfrs_pyroscope_drain(NULL, 0) == 0);
    CHECK(STATS_OF_NULL(jfrs_pyroscope_stats_total, st)->queued == 0 && st.last_error[0] == '\0');
    CHECK(!jfrs_pyroscope_stats_source(NULL, "a", &st));
    if (!jfrs_pyroscope_available())
        return;
    CHECK(jfrs_pyroscope_new(&c, &p) == JFR_OK && p);
    CHECK(jfrs_pyroscope_push(p, NULL, "n", "b", 1, 0, 1) == JFR_INVALID_ARG);
    CHECK(jfrs_pyroscope_push(p, "a", NULL, "b", 1, 0, 1) == JFR_INVALID_ARG);
    CHECK(jfrs_pyroscope_push(p, "a", "n", NULL, 1, 0, 1) == JFR_INVALID_ARG);
    jfrs_pyroscope_end_source(p, NULL);
    jfrs_pyroscope_stats_total(p, NULL);
    CHECK(!jfrs_pyroscope_stats_source(p, NULL, &st));
    CHECK(!jfrs_pyroscope_stats_source(p, "a", NULL));
    jfrs_pyroscope_free(p);
}

static bool scrape_none(void *user, char **body, size_t *len) {
    (void)user, (void)body, (void)len;
    return false;
}

static void nulls_metrics(void) {
    jfrs_metrics *m = NULL;
    jfrs_metrics_config c;
    jfrs_metrics_config_init(NULL);
    jfrs_metrics_config_init(&c);
    CHECK(jfrs_metrics_new(NULL, &m) == JFR_INVALID_ARG && !m);
    CHECK(jfrs_metrics_new(&c, NULL) == JFR_INVALID_ARG);
    jfrs_metrics_free(NULL);
    jfrs_metrics_src *ms;
    CHECK(jfrs_metrics_src_new(NULL, NULL, POISONED(&ms)) == JFR_INVALID_ARG && !ms);
    CHECK(jfrs_metrics_src_new(NULL, NULL, NULL) == JFR_INVALID_ARG);
    CHECK(jfrs_metrics_src_subscribe(NULL, NULL) == JFR_OK); /* a src_new out of memory */
    jfrs_metrics_src_chunk_begin(NULL, NULL);
    jfrs_metrics_src_metadata(NULL, NULL);
    jfrs_metrics_src_record(NULL, NULL);
    jfrs_metrics_src_event(NULL, NULL);
    jfrs_metrics_src_chunk_end(NULL);
    jfrs_metrics_src_error(NULL, JFR_IO);
    jfrs_metrics_src_end(NULL);
    jfrs_metrics_expire(NULL);
    CHECK(jfrs_metrics_set(NULL, "a", "gauge", "h", NULL, 1) == JFR_INVALID_ARG);
    size_t len = 7;
    CHECK(jfrs_metrics_render(NULL, &len) == NULL && len == 0);
    CHECK(jfrs_metrics_nsources(NULL) == 0 && jfrs_metrics_nseries(NULL) == 0);
    jfrs_metrics_http *h;
    char err[128];
    jfr_status no = refused(jfrs_metrics_http_available());
    CHECK(jfrs_metrics_http_start(NULL, 0, NULL, NULL, POISONED(&h), err, sizeof err) == no && !h);
    CHECK(jfrs_metrics_http_start(NULL, 0, scrape_none, NULL, NULL, NULL, 0) == no);
    CHECK(jfrs_metrics_http_port(NULL) == 0);
    jfrs_metrics_http_stop(NULL);
    jfrs_metrics_http_config_init(NULL);
    jfrs_metrics_http_config hc;
    jfrs_metrics_http_config_init(&hc);
    CHECK(jfrs_metrics_http_start_with(NULL, scrape_none, NULL, POISONED(&h), err, sizeof err) ==
              no && !h);
    CHECK(jfrs_metrics_http_start_with(&hc, NULL, NULL, POISONED(&h), err, sizeof err) == no &&
          !h);
    CHECK(jfrs_metrics_http_start_with(&hc, scrape_none, NULL, NULL, NULL, 0) == no);
    CHECK(jfrs_metrics_http_unauthorized(NULL) == 0);
    CHECK(jfrs_metrics_server_unauthorized(NULL) == 0);
    jfrs_metrics_server *srv;
    CHECK(jfrs_metrics_server_start_with(NULL, &hc, POISONED(&srv), err, sizeof err) ==
              JFR_INVALID_ARG && !srv);
    CHECK(jfrs_metrics_new(&c, &m) == JFR_OK && m);
    jfrs_source *s = jfrs_source_new("peer", "127.0.0.1:1", NULL);
    CHECK(jfrs_metrics_src_new(m, NULL, POISONED(&ms)) == JFR_INVALID_ARG && !ms);
    CHECK(jfrs_metrics_src_new(m, s, NULL) == JFR_INVALID_ARG);
    CHECK(jfrs_metrics_src_new(m, s, &ms) == JFR_OK && ms);
    CHECK(jfrs_metrics_src_subscribe(ms, NULL) == JFR_INVALID_ARG);
    jfrs_metrics_src_chunk_begin(ms, NULL);
    jfrs_metrics_src_metadata(ms, NULL);
    jfrs_metrics_src_record(ms, NULL);
    jfrs_metrics_src_event(ms, NULL);
    jfrs_metrics_src_end(ms);
    CHECK(jfrs_metrics_set(m, NULL, "gauge", "h", NULL, 1) == JFR_INVALID_ARG);
    CHECK(jfrs_metrics_set(m, "a", NULL, "h", NULL, 1) == JFR_INVALID_ARG);
    CHECK(jfrs_metrics_set(m, "a", "gauge", NULL, NULL, 1) == JFR_INVALID_ARG);
    CHECK(jfrs_metrics_set(m, "a", "gauge", "h", NULL, 1) == JFR_OK);
    CHECK(jfrs_metrics_render(m, NULL) != NULL); /* len optional */
    jfrs_source_free(s);
    jfrs_metrics_free(m);
}

int main(void) {
    kafka_sized();
    pyroscope_sized();
    metrics_sized();
    metrics_http_sized();
    nulls_source();
    nulls_kafka();
    nulls_pyroscope();
    nulls_metrics();
    if (g_failures) {
        fprintf(stderr, "test_sink_api: %d failure(s)\n", g_failures);
        return 1;
    }
    printf("test_sink_api: ok\n");
    return 0;
}
