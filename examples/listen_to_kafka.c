/*
 * listen_to_kafka.c — forward the events of every connection to Kafka: a
 * libuv listener (jfrstream_uv.h) whose connections each get a source
 * (labels from the stream) and a fan-out to Kafka (jfrstream_sink.h,
 * jfrs_fanout). When the producer's queue is full, that connection stops
 * being read (TCP back-pressure) until there is room again. SIGINT stops,
 * flushes (10 s at most) and prints the counts; a second SIGINT quits.
 *
 *   listen_to_kafka PORT BROKERS [TOPIC]
 *   java ... | tools/jfr-pump → 127.0.0.1:PORT;  kcat -C -b BROKERS -t jfr-events
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#include "jfrstream_sink.h"
#include "jfrstream_uv.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

static jfrs_kafka *kafka;
static jfrs_fanout *fan;
static jfr_uv_listener *listener;
static uv_timer_t timer;
static uv_signal_t sigint;

/* Each connection's data is its fan-out source (the ready-made callbacks
 * find it there); its labels live beside it until it ends. */
static void on_conn_start(jfr_uv_conn *c, void *user) {
    (void)user;
    jfrs_source *src = jfrs_source_new("peer", jfr_uv_conn_peer(c), NULL);
    jfrs_fanout_src *fs = NULL;
    if (!src || jfrs_fanout_src_new(fan, src, c, &fs) != JFR_OK) {
        jfrs_source_free(src);
        jfr_uv_conn_stop(c);
        return;
    }
    c->data = fs;
}

static void on_conn_end(jfr_uv_conn *c, jfr_status st, const char *msg, void *user) {
    (void)user;
    fprintf(stderr, "%s (%s)\n", msg, jfr_status_str(st));
    jfrs_fanout_src *fs = c->data;
    if (!fs)
        return;
    jfrs_source *src = jfrs_fanout_src_source(fs);
    jfrs_fanout_src_end(fs); /* held events go; its messages stay with the producer */
    jfrs_source_free(src);
    c->data = NULL;
}

/* The queue had room again for a paused connection: read it again. */
static void on_resume(jfrs_fanout_src *fs, void *src_user, void *user) {
    (void)fs;
    (void)user;
    jfr_uv_conn_resume(src_user);
}

/* Delivery reports; the paused connections with room again resume. */
static void on_timer(uv_timer_t *t) {
    (void)t;
    jfrs_fanout_poll(fan);
}

static void on_end(jfr_uv_listener *l, void *user) {
    (void)l;
    (void)user;
    uv_close((uv_handle_t *)&timer, NULL);
    uv_close((uv_handle_t *)&sigint, NULL);
}

/* The first SIGINT stops: the connections finish their input, their events
 * wait for room in the queue; a second one quits without waiting (the
 * brokers may be gone). */
static void on_sigint(uv_signal_t *s, int signum) {
    (void)s;
    (void)signum;
    jfr_uv_listener *l = listener;
    if (!l) {
        fprintf(stderr, "second SIGINT: quitting without waiting for the brokers\n");
        exit(1);
    }
    listener = NULL; /* stopping */
    {
        jfr_uv_listener_stop(l); /* every connection ends, then on_end */
        jfrs_fanout_resume_all(fan); /* a paused one must finish too */
    }
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: %s PORT BROKERS [TOPIC]\n", argv[0]);
        return 2;
    }
    jfrs_kafka_config kc;
    jfrs_kafka_config_init(&kc);
    kc.brokers = argv[2];
    kc.topic = argc > 3 ? argv[3] : NULL; /* jfr-events */
    char err[512];
    if (jfrs_kafka_new(&kc, &kafka, err, sizeof err) != JFR_OK) {
        fprintf(stderr, "kafka: %s\n", err);
        return 1;
    }
    jfrs_fanout_config fc;
    jfrs_fanout_config_init(&fc);
    fc.kafka = kafka;
    fc.on_resume = on_resume;
    if (jfrs_fanout_new(&fc, &fan) != JFR_OK) {
        jfrs_kafka_free(kafka);
        return 1;
    }
    jfr_options opts;
    jfr_options_init(&opts);
    opts.ordered = true; /* each flush segment by end time, as listen --json */
    opts.jdk_time_base = true;
    jfr_callbacks cbs;
    jfrs_fanout_callbacks(&cbs); /* user: the connection, its data the source */
    jfr_uv_listener_config cfg;
    jfr_uv_listener_config_init(&cfg);
    cfg.port = (int)strtol(argv[1], NULL, 10);
    cfg.options = &opts;
    cfg.callbacks = &cbs;
    cfg.on_conn_start = on_conn_start;
    cfg.on_conn_end = on_conn_end;
    cfg.on_end = on_end;
    uv_loop_t *loop = uv_default_loop();
    if (jfr_uv_listener_start(loop, &cfg, &listener, NULL) != JFR_OK) {
        fprintf(stderr, "cannot listen on port %s\n", argv[1]);
        jfrs_fanout_free(fan);
        jfrs_kafka_free(kafka);
        return 1;
    }
    fprintf(stderr, "listening on 127.0.0.1:%d\n", jfr_uv_listener_port(listener));
    uv_timer_init(loop, &timer);
    uv_timer_start(&timer, on_timer, 20, 20);
    uv_signal_init(loop, &sigint);
    uv_signal_start(&sigint, on_sigint, SIGINT);
    uv_run(loop, UV_RUN_DEFAULT);
    jfrs_fanout_free(fan);
    jfr_status fst = jfrs_kafka_flush(kafka, 10000);
    jfrs_kafka_stats st;
    jfrs_kafka_stats_get(kafka, &st);
    uint64_t lost = st.in_flight + st.pending + st.held + st.dropped;
    fprintf(stderr, "kafka: %llu delivered, %llu failed, %llu undelivered %s\n",
            (unsigned long long)st.delivered, (unsigned long long)st.failed,
            (unsigned long long)lost, st.last_error);
    jfrs_kafka_free(kafka);
    uv_loop_close(loop);
    return fst == JFR_OK && st.failed == 0 ? 0 : 1;
}
