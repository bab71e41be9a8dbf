/*
 * test_sink_kafka.c — the Kafka sender of jfrstream_sink.h against librdkafka's
 * in-process mock cluster (test.mock.num.brokers), argv: the workload and
 * the synthetic fixture.
 *
 *   - a queue of 2 messages: jfrs_kafka_src_event pauses, the parser is
 *     paused (JFR_CB_PAUSE) until jfrs_kafka_src_retry has room, and every
 *     event is delivered once (produced = delivered = the events);
 *   - hold-back: the synthetic recording has no jdk.JVMInformation: its
 *     events are held until hold_events is reached, then released in order;
 *     at the end the rest is released by jfrs_kafka_src_end;
 *   - delivered positions (per-type topics: reports out of order): what
 *     is marked is delivered only after the reports, a second sender of the
 *     same source id and bytes produces nothing (every event a duplicate)
 *     and has it all delivered at once; a message refused (over
 *     message.max.bytes) stops the position and makes it JFR_IO;
 *   - a bad option: JFR_INVALID_ARG with librdkafka's message.
 * Without librdkafka: jfrs_kafka_new is JFR_UNSUPPORTED with a message.
 */
#include "../harness.h"
#include "jfrstream_sink.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct run {
    jfrs_kafka *k;
    jfrs_kafka_src *ks;
    uint64_t events, pauses, held_max;
    uint64_t hold_events; /* checked: held never exceeds it */
    bool refusals;        /* JFR_IO expected (messages too large) */
} run;

static int on_begin(jfr_parser *p, const jfr_chunk_info *c, void *u) {
    (void)p;
    jfrs_kafka_src_chunk_begin(((run *)u)->ks, c);
    return JFR_CB_CONTINUE;
}

static int on_meta(jfr_parser *p, const jfr_metadata *m, void *u) {
    (void)p;
    jfrs_kafka_src_metadata(((run *)u)->ks, m);
    return JFR_CB_CONTINUE;
}

static int on_event(jfr_parser *p, const jfr_event *e, void *u) {
    (void)p;
    run *r = u;
    r->events++;
    jfr_status st = jfrs_kafka_src_event(r->ks, e);
    CHECK(st == JFR_OK || st == JFR_PAUSED || (r->refusals && st == JFR_IO));
    jfrs_kafka_stats s;
    jfrs_kafka_src_stats(r->ks, &s);
    if (s.held > r->held_max)
        r->held_max = s.held;
    CHECK(s.pending <= 1); /* the caller pauses: one message waits at most */
    if (st == JFR_PAUSED) {
        r->pauses++;
        return JFR_CB_PAUSE;
    }
    return JFR_CB_CONTINUE;
}

/* Poll until `ks` has everything through `pos` delivered (20 s at most). */
static jfr_status wait_delivered(jfrs_kafka *k, jfrs_kafka_src *ks, uint64_t pos,
                                 uint64_t *got) {
    struct timespec ms = {0, 1000000};
    jfr_status st = JFR_OK;
    for (int i = 0; i < 20000; i++) {
        jfrs_kafka_poll(k);
        if ((st = jfrs_kafka_src_delivered(ks, got)) != JFR_OK || *got >= pos)
            return st;
        nanosleep(&ms, NULL);
    }
    return st;
}

static void wait_room(run *r) {
    struct timespec ms = {0, 1000000};
    for (int i = 0; i < 20000; i++) {
        jfrs_kafka_poll(r->k);
        if (jfrs_kafka_src_retry(r->ks) == JFR_OK)
            return;
        nanosleep(&ms, NULL);
    }
    CHECK(!"no room within 20 s");
}

/* Feed `data` through a sender; returns the events seen. */
static uint64_t send_all(run *r, jfrs_source *src, const uint8_t *data, size_t len) {
    jfr_options o;
    jfr_options_init(&o);
    o.ordered = true;
    o.jdk_time_base = true;
    jfr_callbacks cb = {.size = sizeof cb, .on_chunk_begin = on_begin, .on_metadata = on_meta,
                        .on_event = on_event};
    jfr_parser *p = jfr_parser_new(&o, &cb, r);
    CHECK(p && (r->ks = jfrs_kafka_src_new(r->k, src)) != NULL);
    const uint8_t *at = data;
    size_t left = len;
    jfr_status st;
    while ((st = jfr_parser_feed(p, at, left)) == JFR_PAUSED) {
        size_t used = jfr_parser_consumed(p);
        at += used;
        left -= used;
        wait_room(r);
    }
    CHECK(st == JFR_OK);
    while ((st = jfr_parser_finish(p)) == JFR_PAUSED)
        wait_room(r);
    CHECK(st == JFR_OK);
    CHECK(jfr_parser_delivered(p) == len);
    jfrs_kafka_src_mark(r->ks, jfr_parser_delivered(p));
    jfr_parser_free(p);
    jfrs_kafka_src_end(r->ks);
    return r->events;
}

static jfrs_kafka *producer(const char *const *opts, size_t n, uint64_t hold_events,
                            const char *topic) {
    jfrs_kafka_config c;
    jfrs_kafka_config_init(&c);
    c.brokers = "127.0.0.1:1"; /* replaced by the mock cluster */
    c.topic = topic;
    c.options = opts;
    c.noptions = n;
    c.hold_events = hold_events;
    char err[512] = "";
    jfrs_kafka *k = NULL;
    jfr_status st = jfrs_kafka_new(&c, &k, err, sizeof err);
    if (st != JFR_OK)
        fprintf(stderr, "jfrs_kafka_new: %s: %s\n", jfr_status_str(st), err);
    CHECK(st == JFR_OK && k);
    return k;
}

int main(int argc, char **argv) {
    CHECK(argc == 3);
    size_t len = 0, len2 = 0;
    uint8_t *data = read_file(argv[1], &len);
    uint8_t *synth = read_file(argv[2], &len2);
    CHECK(data && synth);
    jfrs_kafka_config c;
    jfrs_kafka_config_init(&c);
    char err[512] = "";
    jfrs_kafka *k = NULL;

    if (!jfrs_kafka_available()) {
        c.brokers = "127.0.0.1:9092";
        CHECK(jfrs_kafka_new(&c, &k, err, sizeof err) == JFR_UNSUPPORTED && !k && err[0]);
        puts("kafka: not in this build: JFR_UNSUPPORTED");
        free(data);
        free(synth);
        return g_failures ? 1 : 0;
    }

    /* a bad option: librdkafka's words */
    static const char *const bad[] = {"no.such.thing=1"};
    c.brokers = "127.0.0.1:9092";
    c.options = bad;
    c.noptions = 1;
    CHECK(jfrs_kafka_new(&c, &k, err, sizeof err) == JFR_INVALID_ARG && !k);
    CHECK(strstr(err, "No such configuration property") != NULL);

    /* back-pressure: a queue of 2 messages */
    static const char *const tiny[] = {"test.mock.num.brokers=1",
                                       "queue.buffering.max.messages=2", "linger.ms=1"};
    run r = {0};
    r.k = producer(tiny, 3, 0, NULL);
    jfrs_source *src = jfrs_source_new("peer", "127.0.0.1:40000", NULL);
    uint64_t n = send_all(&r, src, data, len);
    jfrs_kafka_stats s;
    jfrs_kafka_src_stats(r.ks, &s);
    jfrs_kafka_src_free(r.ks);
    CHECK(jfrs_kafka_flush(r.k, 20000) == JFR_OK);
    jfrs_kafka_stats_get(r.k, &s);
    printf("tiny queue: %llu events, %llu pauses, %llu produced, %llu delivered, %llu failed\n",
           (unsigned long long)n, (unsigned long long)r.pauses, (unsigned long long)s.produced,
           (unsigned long long)s.delivered, (unsigned long long)s.failed);
    CHECK(n == 596 && r.pauses > 0);
    CHECK(s.produced == n && s.delivered == n && s.failed == 0 && s.in_flight == 0 &&
          s.pending == 0 && s.held == 0 && s.dropped == 0);
    jfrs_kafka_free(r.k);
    jfrs_source_free(src);

    /* hold-back: no jdk.JVMInformation in the synthetic recording */
    static const char *const mock[] = {"test.mock.num.brokers=1"};
    run h = {0};
    h.k = producer(mock, 1, 10, "held-{type}");
    src = jfrs_source_new("path", "/tmp/synthetic", NULL);
    n = send_all(&h, src, synth, len2);
    jfrs_kafka_src_stats(h.ks, &s);
    jfrs_kafka_src_free(h.ks);
    CHECK(jfrs_kafka_flush(h.k, 20000) == JFR_OK);
    jfrs_kafka_stats_get(h.k, &s);
    printf("hold-back: %llu events, at most %llu held (bound 10), %llu delivered\n",
           (unsigned long long)n, (unsigned long long)h.held_max,
           (unsigned long long)s.delivered);
    CHECK(n == 27 && h.held_max == 10 && s.delivered == n && s.held == 0 && s.failed == 0);
    jfrs_kafka_free(h.k);
    jfrs_source_free(src);

    /* delivered positions and duplicates: per-type topics over 3 brokers, 100 ms
     * batches. JFRSTREAM_TEST_KAFKA_BROKERS=1 (.ci/run's ThreadSanitizer step):
     * one broker, as librdkafka 2.0 races with itself when its brokers learn
     * their names (a free in a broker thread against a strcmp under the
     * instance's lock in rdk:main, both inside librdkafka) */
    const char *nb = getenv("JFRSTREAM_TEST_KAFKA_BROKERS");
    char brokers[64];
    snprintf(brokers, sizeof brokers, "test.mock.num.brokers=%s", nb && *nb ? nb : "3");
    const char *const batched[] = {brokers, "linger.ms=100"};
    run d = {0};
    d.k = producer(batched, 2, 0, "d-{type}");
    src = jfrs_source_new("peer", "127.0.0.1:40001", NULL);
    n = send_all(&d, src, data, len);
    uint64_t pos = 0;
    jfr_status dst = jfrs_kafka_src_delivered(d.ks, &pos);
    uint64_t before = pos;
    CHECK(dst == JFR_OK && pos < len); /* in flight: not delivered yet */
    dst = wait_delivered(d.k, d.ks, len, &pos);
    jfrs_kafka_src_stats(d.ks, &s);
    printf("delivered: %llu events, position %llu right after the marks, %llu after the "
           "reports (of %zu), %llu produced\n", (unsigned long long)n,
           (unsigned long long)before, (unsigned long long)pos, len,
           (unsigned long long)s.produced);
    CHECK(dst == JFR_OK && pos == len && s.produced == n && s.delivered == n);
    jfrs_kafka_src_free(d.ks);
    jfrs_source *src2 = jfrs_source_new("peer", "127.0.0.1:40002", NULL);
    d.events = 0;
    n = send_all(&d, src2, data, len); /* the same JVM again, from another port */
    dst = jfrs_kafka_src_delivered(d.ks, &pos);
    jfrs_kafka_src_stats(d.ks, &s);
    printf("resent: %llu events, %llu produced, %llu duplicates, position %llu at once\n",
           (unsigned long long)n, (unsigned long long)s.produced,
           (unsigned long long)s.duplicates, (unsigned long long)pos);
    CHECK(dst == JFR_OK && pos == len && s.produced == 0 && s.duplicates == n);
    jfrs_kafka_src_free(d.ks);
    CHECK(jfrs_kafka_flush(d.k, 20000) == JFR_OK);
    jfrs_kafka_stats_get(d.k, &s);
    CHECK(s.duplicates == n && s.delivered == n);
    jfrs_kafka_free(d.k);
    jfrs_source_free(src);
    jfrs_source_free(src2);

    /* a message refused for good: the position stops, JFR_IO */
    static const char *const small[] = {"test.mock.num.brokers=1", "message.max.bytes=1000"};
    run f = {0};
    f.refusals = true;
    f.k = producer(small, 2, 0, NULL);
    src = jfrs_source_new("peer", "127.0.0.1:40003", NULL);
    n = send_all(&f, src, data, len);
    dst = wait_delivered(f.k, f.ks, len, &pos);
    jfrs_kafka_src_stats(f.ks, &s);
    printf("refused: %llu events, %llu failed (%s), position %llu: %s\n",
           (unsigned long long)n, (unsigned long long)s.failed, s.last_error,
           (unsigned long long)pos, jfr_status_name(dst));
    CHECK(s.failed > 0 && dst == JFR_IO && pos < len);
    jfrs_kafka_src_free(f.ks);
    jfrs_kafka_flush(f.k, 20000);
    jfrs_kafka_free(f.k);
    jfrs_source_free(src);

    free(data);
    free(synth);
    if (g_failures)
        return 1;
    puts("kafka: ok");
    return 0;
}
