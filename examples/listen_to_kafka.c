/*
 * listen_to_kafka.c — forward the events of every connection to Kafka: a
 * libuv listener (jfrstream_uv.h) whose connections each get a source
 * (labels from the stream) and a Kafka sender (jfrstream_sink.h). When the
 * producer's queue is full, that connection stops being read (TCP
 * back-pressure) until there is room again. SIGINT stops, flushes (10 s at
 * most) and prints the counts.
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

typedef struct conn {
    jfr_uv_conn *c;
    jfrs_source *src;   /* who is sending: labels, the message key */
    jfrs_kafka_src *ks; /* its sender */
    bool paused;        /* waiting for room in the producer's queue */
    struct conn *next, *prev;
} conn;

static jfrs_kafka *kafka;
static conn *conns;
static jfr_uv_listener *listener;
static uv_timer_t timer;
static uv_signal_t sigint;

static int on_chunk_begin(jfr_parser *p, const jfr_chunk_info *c, void *user) {
    (void)p;
    jfrs_kafka_src_chunk_begin(((conn *)((jfr_uv_conn *)user)->data)->ks, c);
    return JFR_CB_CONTINUE;
}

static int on_metadata(jfr_parser *p, const jfr_metadata *m, void *user) {
    (void)p;
    jfrs_kafka_src_metadata(((conn *)((jfr_uv_conn *)user)->data)->ks, m);
    return JFR_CB_CONTINUE;
}

static int on_event(jfr_parser *p, const jfr_event *e, void *user) {
    (void)p;
    conn *cn = ((jfr_uv_conn *)user)->data;
    if (jfrs_kafka_src_event(cn->ks, e) != JFR_PAUSED)
        return JFR_CB_CONTINUE; /* failures are counted in the stats */
    if (!listener) { /* stopping: the rest of the input must be taken */
        jfrs_kafka_src_wait(cn->ks, 1000);
        return JFR_CB_CONTINUE;
    }
    cn->paused = true;
    return JFR_CB_PAUSE; /* stop reading this peer */
}

static void on_conn_start(jfr_uv_conn *c, void *user) {
    (void)user;
    conn *cn = calloc(1, sizeof *cn);
    if (!cn || !(cn->src = jfrs_source_new("peer", jfr_uv_conn_peer(c), NULL)) ||
        !(cn->ks = jfrs_kafka_src_new(kafka, cn->src))) {
        if (cn)
            jfrs_source_free(cn->src);
        free(cn);
        jfr_uv_conn_stop(c);
        return;
    }
    cn->c = c;
    c->data = cn;
    if ((cn->next = conns) != NULL)
        conns->prev = cn;
    conns = cn;
}

static void on_conn_end(jfr_uv_conn *c, jfr_status st, const char *msg, void *user) {
    (void)user;
    conn *cn = c->data;
    fprintf(stderr, "%s (%s)\n", msg, jfr_status_str(st));
    if (!cn)
        return;
    jfrs_kafka_src_end(cn->ks);  /* held events go now */
    jfrs_kafka_src_free(cn->ks); /* its messages stay with the producer */
    jfrs_source_free(cn->src);
    if (cn->prev)
        cn->prev->next = cn->next;
    else
        conns = cn->next;
    if (cn->next)
        cn->next->prev = cn->prev;
    free(cn);
}

/* Delivery reports; resume the paused peers that have room again (a resume
 * may end connections: start over after each one). */
static void on_timer(uv_timer_t *t) {
    (void)t;
    jfrs_kafka_poll(kafka);
    for (bool again = true; again;) {
        again = false;
        for (conn *cn = conns; cn; cn = cn->next)
            if (cn->paused && jfrs_kafka_src_retry(cn->ks) == JFR_OK) {
                cn->paused = false;
                jfr_uv_conn_resume(cn->c);
                again = true;
                break;
            }
    }
}

static void on_end(jfr_uv_listener *l, void *user) {
    (void)l;
    (void)user;
    uv_close((uv_handle_t *)&timer, NULL);
    uv_close((uv_handle_t *)&sigint, NULL);
}

static void on_sigint(uv_signal_t *s, int signum) {
    (void)s;
    (void)signum;
    jfr_uv_listener *l = listener;
    listener = NULL; /* stopping */
    if (l)
        jfr_uv_listener_stop(l); /* every connection ends, then on_end */
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
    jfr_options opts;
    jfr_options_init(&opts);
    opts.ordered = true; /* each flush segment by end time, as listen --json */
    opts.jdk_time_base = true;
    jfr_callbacks cbs = {.size = sizeof cbs, .on_chunk_begin = on_chunk_begin,
                         .on_metadata = on_metadata, .on_event = on_event};
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
        jfrs_kafka_free(kafka);
        return 1;
    }
    fprintf(stderr, "listening on 127.0.0.1:%d\n", jfr_uv_listener_port(listener));
    uv_timer_init(loop, &timer);
    uv_timer_start(&timer, on_timer, 20, 20);
    uv_signal_init(loop, &sigint);
    uv_signal_start(&sigint, on_sigint, SIGINT);
    uv_run(loop, UV_RUN_DEFAULT);
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
