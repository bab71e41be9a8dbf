/*
 * test_sink_api.c — the API rules of jfrstream_sink.h, without a server:
 *
 *   - sized structs (jfrstream.h, "STRUCTS YOU HAND IN"): the Kafka,
 *     Pyroscope and metrics configs of an older caller (a smaller size: the
 *     members past it are not read, whatever they hold) and of a newer one
 *     (a bigger size, its tail zero) are accepted, with the defaults for
 *     what the older one does not have;
 *   - NULL: every public function called with NULL pointers returns what
 *     the header promises (JFR_INVALID_ARG, NULL, 0, nothing) without
 *     writing through them.
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#include "../harness.h"
#include "jfrstream_sink.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

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
    struct {
        jfrs_kafka_config c;
        unsigned char tail[64];
    } newer;
    memset(&newer, 0, sizeof newer);
    jfrs_kafka_config_init(&newer.c);
    newer.c.size = sizeof newer;
    newer.c.brokers = "127.0.0.1:9";
    newer.c.options = mock;
    newer.c.noptions = 1;
    CHECK(jfrs_kafka_new(&newer.c, &k, err, sizeof err) == JFR_OK && k);
    jfrs_kafka_free(k);
    /* below sizeof(size_t): not a config */
    c.size = 2;
    k = (jfrs_kafka *)&c;
    CHECK(jfrs_kafka_new(&c, &k, err, sizeof err) == JFR_INVALID_ARG && !k);
}

/* A loopback port nobody listens on. */
static int closed_port(void) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t al = sizeof a;
    CHECK(fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof a) == 0 &&
          getsockname(fd, (struct sockaddr *)&a, &al) == 0);
    close(fd);
    return ntohs(a.sin_port);
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

static void pyroscope_sized(void) {
    if (!jfrs_pyroscope_available()) {
        printf("test_sink_api: built without libcurl: Pyroscope configs not checked\n");
        return;
    }
    char url[64];
    snprintf(url, sizeof url, "http://127.0.0.1:%d", closed_port());
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
    struct {
        jfrs_pyroscope_config c;
        unsigned char tail[64];
    } newer;
    memset(&newer, 0, sizeof newer);
    jfrs_pyroscope_config_init(&newer.c);
    newer.c.size = sizeof newer;
    newer.c.url = url;
    newer.c.queue_windows = 1;
    CHECK(pyroscope_drops(&newer.c) >= 6);
    jfrs_pyroscope *p = (jfrs_pyroscope *)&c;
    c.size = 0;
    CHECK(jfrs_pyroscope_new(&c, &p) == JFR_INVALID_ARG && !p);
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
    struct {
        jfrs_metrics_config c;
        unsigned char tail[64];
    } newer;
    memset(&newer, 0, sizeof newer);
    jfrs_metrics_config_init(&newer.c);
    newer.c.size = sizeof newer;
    CHECK(metrics_src_status(&newer.c) == JFR_OK);
    newer.c.max_series = 1;
    CHECK(metrics_src_status(&newer.c) == JFR_LIMIT);
    jfrs_metrics *m = (jfrs_metrics *)&c;
    c.size = 1;
    CHECK(jfrs_metrics_new(&c, &m) == JFR_INVALID_ARG && !m);
}

int main(void) {
    kafka_sized();
    pyroscope_sized();
    metrics_sized();
    if (g_failures) {
        fprintf(stderr, "test_sink_api: %d failure(s)\n", g_failures);
        return 1;
    }
    printf("test_sink_api: ok\n");
    return 0;
}
