/*
 * kafka.c — events to Kafka through librdkafka (jfrstream_sink.h, "Kafka"):
 * the producer (its configuration, topics, poll, flush and end) and its
 * delivery reports, counted per source, whose record outlives the source
 * until its last message is settled. A source's sender (each event's
 * message, hold-back, the queue waiting for room) is kafka_src.c.
 *
 * Without librdkafka (JFRS_HAVE_KAFKA undefined) only stubs are built.
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#include "jfrstream_sink.h"
#include "sink.h"
#include "../sized.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void jfrs_kafka_config_init(jfrs_kafka_config *cfg) {
    if (!cfg)
        return;
    memset(cfg, 0, sizeof *cfg);
    cfg->size = sizeof *cfg;
    cfg->stack_depth = 5;
}

static void put_err(char *errbuf, size_t errlen, const char *fmt, ...) {
    if (!errbuf || !errlen)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(errbuf, errlen, fmt, ap);
    va_end(ap);
}

#ifndef JFRS_HAVE_KAFKA

/* ------------------------------------------------------------------ stubs */

bool jfrs_kafka_available(void) { return false; }
jfr_status jfrs_kafka_new(const jfrs_kafka_config *cfg, jfrs_kafka **out, char *errbuf,
                          size_t errlen) {
    (void)cfg;
    if (out)
        *out = NULL;
    put_err(errbuf, errlen, "Kafka is not supported by this build (built without librdkafka)");
    return JFR_UNSUPPORTED;
}
void jfrs_kafka_free(jfrs_kafka *k) { (void)k; }
void jfrs_kafka_poll(jfrs_kafka *k) { (void)k; }
int jfrs_kafka_event_fd(const jfrs_kafka *k) {
    (void)k;
    return -1;
}
jfr_status jfrs_kafka_flush(jfrs_kafka *k, uint64_t timeout_ms) {
    (void)k;
    (void)timeout_ms;
    return JFR_OK;
}
void jfrs_kafka_stats_get(const jfrs_kafka *k, jfrs_kafka_stats *out) {
    (void)k;
    if (out)
        memset(out, 0, sizeof *out);
}
jfrs_kafka_src *jfrs_kafka_src_new(jfrs_kafka *k, jfrs_source *src) {
    (void)k;
    (void)src;
    return NULL;
}
void jfrs_kafka_src_chunk_begin(jfrs_kafka_src *ks, const jfr_chunk_info *c) {
    (void)ks;
    (void)c;
}
void jfrs_kafka_src_metadata(jfrs_kafka_src *ks, const jfr_metadata *m) {
    (void)ks;
    (void)m;
}
jfr_status jfrs_kafka_src_event(jfrs_kafka_src *ks, const jfr_event *e) {
    (void)ks;
    (void)e;
    return JFR_UNSUPPORTED;
}
const char *jfrs_kafka_src_decode_error(const jfrs_kafka_src *ks) {
    (void)ks;
    return NULL;
}
jfr_status jfrs_kafka_src_retry(jfrs_kafka_src *ks) {
    (void)ks;
    return JFR_OK;
}
jfr_status jfrs_kafka_src_wait(jfrs_kafka_src *ks, uint64_t timeout_ms) {
    (void)ks;
    (void)timeout_ms;
    return JFR_OK;
}
void jfrs_kafka_src_end(jfrs_kafka_src *ks) { (void)ks; }
void jfrs_kafka_src_stats(const jfrs_kafka_src *ks, jfrs_kafka_stats *out) {
    (void)ks;
    if (out)
        memset(out, 0, sizeof *out);
}
void jfrs_kafka_src_free(jfrs_kafka_src *ks) { (void)ks; }
void jfrs_kafka_src_mark(jfrs_kafka_src *ks, uint64_t pos) {
    (void)ks;
    (void)pos;
}
jfr_status jfrs_kafka_src_delivered(const jfrs_kafka_src *ks, uint64_t *pos) {
    (void)ks;
    if (pos)
        *pos = 0;
    return JFR_OK;
}

#else /* JFRS_HAVE_KAFKA */

#include "kafka.h"

#include <fcntl.h>
#include <unistd.h>

bool jfrs_kafka_available(void) { return true; }

/* ------------------------------------------------------------ the producer */

static void dr_msg(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque) {
    (void)rk;
    jfrs_kafka *k = opaque;
    kslot *slot = m->_private;
    if (!slot)
        return;
    krec *r = slot->r;
    if (r->st.in_flight)
        r->st.in_flight--;
    if (k->tot.in_flight)
        k->tot.in_flight--;
    if (m->err) {
        r->st.failed++;
        k->tot.failed++;
        const char *why = rd_kafka_err2str(m->err);
        char text[256];
        snprintf(text, sizeof text, "%s (topic %s)", why, m->rkt ? rd_kafka_topic_name(m->rkt) : "?");
        set_error(&r->st, text);
        set_error(&k->tot, text);
    } else {
        r->st.delivered++;
        k->tot.delivered++;
    }
    kafka_settle(k, slot, !m->err);
}

static void log_cb(const rd_kafka_t *rk, int level, const char *fac, const char *buf) {
    jfrs_kafka *k = rd_kafka_opaque(rk);
    /* a connection failure (FAIL) also comes through error_cb: once is enough */
    if (k && k->on_log && strcmp(fac, "FAIL") != 0)
        k->on_log(k->user, level, buf);
}

static void error_cb(rd_kafka_t *rk, int err, const char *reason, void *opaque) {
    jfrs_kafka *k = opaque;
    char text[1024];
    if (err == RD_KAFKA_RESP_ERR__FATAL) {
        char why[512];
        rd_kafka_resp_err_t e = rd_kafka_fatal_error(rk, why, sizeof why);
        snprintf(text, sizeof text, "fatal: %s: %s", rd_kafka_err2name(e), why);
    } else {
        snprintf(text, sizeof text, "%s", reason);
    }
    if (k->on_log)
        k->on_log(k->user, 3, text);
    else
        fprintf(stderr, "librdkafka: %s\n", text);
}

static bool conf_set(rd_kafka_conf_t *conf, const char *key, const char *value, char *errbuf,
                     size_t errlen) {
    char why[512];
    if (rd_kafka_conf_set(conf, key, value, why, sizeof why) == RD_KAFKA_CONF_OK)
        return true;
    put_err(errbuf, errlen, "%s=%s: %s", key, value, why);
    return false;
}

static void report(jfrs_kafka *k, krec *r) {
    if (r->done)
        return;
    r->done = true;
    if (k->on_source_done)
        k->on_source_done(k->user, r->id ? r->id : "", r->origin ? r->origin : "", &r->st);
}

static void queue_free(jfrs_kafka *k, kqueue *q) {
    for (kmsg *m = q->head, *next; m; m = next) {
        next = m->next;
        msg_free(k, m);
    }
    *q = (kqueue){0};
}

static void rec_free(jfrs_kafka *k, krec *r) {
    queue_free(k, &r->pend);
    kafka_track_free(k, r);
    str_free(k, r->id);
    str_free(k, r->origin);
    jfr__free(&k->a, r, sizeof *r);
}

/* Ended records whose messages are all settled: reported and freed. */
static void sweep(jfrs_kafka *k) {
    krec **pp = &k->recs;
    while (*pp) {
        krec *r = *pp;
        if (r->ended && r->st.in_flight == 0 && r->pend.n == 0) {
            report(k, r);
            *pp = r->next;
            rec_free(k, r);
        } else {
            pp = &r->next;
        }
    }
}

/* Free a producer that jfrs_kafka_new could not finish (before rd_kafka_new
 * or after its destruction). */
static void unmade(jfrs_kafka *k) {
    jfr_allocator a = k->a;
    jfrc_out_free(k->scratch);
    jfrc_out_free(k->idb);
    str_free(k, k->topic);
    jfr__free(&a, k, sizeof *k);
}

jfr_status jfrs_kafka_new(const jfrs_kafka_config *cfg, jfrs_kafka **out, char *errbuf,
                          size_t errlen) {
    if (out)
        *out = NULL;
    /* min(size, sizeof) of the caller's struct: an older or newer header's */
    jfrs_kafka_config copy;
    if (!cfg || !out || !jfr__sized_copy(&copy, sizeof copy, cfg)) {
        put_err(errbuf, errlen, "bad configuration (not initialised)");
        return JFR_INVALID_ARG;
    }
    cfg = &copy;
    if (!cfg->brokers || !*cfg->brokers) {
        put_err(errbuf, errlen, "no brokers");
        return JFR_INVALID_ARG;
    }
    const char *topic = cfg->topic && *cfg->topic ? cfg->topic : JFRS_KAFKA_DEFAULT_TOPIC;
    if (cfg->format != JFRS_KAFKA_JSON && cfg->format != JFRS_KAFKA_OTLP_JSON) {
        put_err(errbuf, errlen, "unknown format %d", (int)cfg->format);
        return JFR_INVALID_ARG;
    }
    jfr_allocator a = jfrs_allocator(cfg->allocator);
    jfrs_kafka *k = jfr__calloc(&a, sizeof *k);
    if (!k) {
        put_err(errbuf, errlen, "out of memory");
        return JFR_NOMEM;
    }
    k->a = a;
    k->format = cfg->format;
    k->topic = jfr__strdup(&a, topic);
    k->scratch = jfrc_out_new_memory_advanced(1 << 12, &a);
    k->idb = jfrc_out_new_memory_advanced(1 << 8, &a);
    k->per_type = strstr(topic, "{type}") != NULL;
    k->stack_depth = cfg->stack_depth;
    k->hold_events = cfg->hold_events ? cfg->hold_events : DEFAULT_HOLD_EVENTS;
    k->hold_bytes = cfg->hold_bytes ? cfg->hold_bytes : DEFAULT_HOLD_BYTES;
    k->on_log = cfg->on_log;
    k->on_source_done = cfg->on_source_done;
    k->user = cfg->user;
    rd_kafka_conf_t *conf = k->topic && k->scratch && k->idb ? rd_kafka_conf_new() : NULL;
    if (!conf) {
        unmade(k);
        put_err(errbuf, errlen, "out of memory");
        return JFR_NOMEM;
    }
    bool ok = conf_set(conf, "bootstrap.servers", cfg->brokers, errbuf, errlen) &&
              conf_set(conf, "client.id", "jfrstream", errbuf, errlen) &&
              conf_set(conf, "enable.idempotence", "true", errbuf, errlen) &&
              conf_set(conf, "acks", "all", errbuf, errlen) &&
              /* log lines through the main queue: served by poll, on our thread */
              conf_set(conf, "log.queue", "true", errbuf, errlen);
    for (size_t i = 0; ok && i < cfg->noptions; i++) {
        const char *kv = cfg->options[i], *eq = kv ? strchr(kv, '=') : NULL;
        if (!eq || eq == kv) {
            put_err(errbuf, errlen, "%s: needs KEY=VALUE", kv ? kv : "(null)");
            ok = false;
            break;
        }
        char key[256];
        size_t kl = (size_t)(eq - kv);
        if (kl >= sizeof key) {
            put_err(errbuf, errlen, "%.40s...: key too long", kv);
            ok = false;
            break;
        }
        memcpy(key, kv, kl);
        key[kl] = '\0';
        ok = conf_set(conf, key, eq + 1, errbuf, errlen);
    }
    if (!ok) {
        rd_kafka_conf_destroy(conf);
        unmade(k);
        return JFR_INVALID_ARG;
    }
    rd_kafka_conf_set_opaque(conf, k);
    rd_kafka_conf_set_dr_msg_cb(conf, dr_msg);
    rd_kafka_conf_set_error_cb(conf, error_cb);
    if (k->on_log)
        rd_kafka_conf_set_log_cb(conf, log_cb);
    char why[512];
    k->rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, why, sizeof why);
    if (!k->rk) { /* conf is still ours */
        rd_kafka_conf_destroy(conf);
        put_err(errbuf, errlen, "%s", why);
        unmade(k);
        return JFR_INVALID_ARG;
    }
    rd_kafka_set_log_queue(k->rk, NULL); /* the main queue */
    /* a byte on evfd[0] when the main queue (delivery reports, logs) gets
     * something: a loop can wait on it */
    k->evfd[0] = k->evfd[1] = -1;
    if ((k->mainq = rd_kafka_queue_get_main(k->rk)) != NULL && pipe(k->evfd) == 0) {
        for (int i = 0; i < 2; i++) {
            fcntl(k->evfd[i], F_SETFL, fcntl(k->evfd[i], F_GETFL) | O_NONBLOCK);
            fcntl(k->evfd[i], F_SETFD, FD_CLOEXEC);
        }
        rd_kafka_queue_io_event_enable(k->mainq, k->evfd[1], "1", 1);
    } else {
        k->evfd[0] = k->evfd[1] = -1;
    }
    if (!k->per_type && !(k->fixed = rd_kafka_topic_new(k->rk, k->topic, NULL))) {
        put_err(errbuf, errlen, "topic %s: %s", k->topic,
                rd_kafka_err2str(rd_kafka_last_error()));
        rd_kafka_destroy(k->rk);
        unmade(k);
        return JFR_INVALID_ARG;
    }
    *out = k;
    return JFR_OK;
}

/* ------------------------------------------------------------ the producer's life */

int jfrs_kafka_event_fd(const jfrs_kafka *k) { return k ? k->evfd[0] : -1; }

void jfrs_kafka_poll(jfrs_kafka *k) {
    if (!k)
        return;
    if (k->evfd[0] >= 0) { /* empty the pipe first: a report after this wakes again */
        char buf[256];
        while (read(k->evfd[0], buf, sizeof buf) > 0)
            ;
    }
    rd_kafka_poll(k->rk, 0);
    for (krec *r = k->recs; r; r = r->next)
        if (r->pend.head)
            kafka_drain(k, r);
    sweep(k);
}

jfr_status jfrs_kafka_flush(jfrs_kafka *k, uint64_t timeout_ms) {
    if (!k)
        return JFR_OK;
    for (krec *r = k->recs; r; r = r->next)
        if (r->ks && r->ks->holding)
            kafka_release(r->ks);
    uint64_t t0 = jfrs_mono_ms();
    for (;;) {
        rd_kafka_poll(k->rk, 0);
        bool waiting = false;
        for (krec *r = k->recs; r; r = r->next)
            if (r->pend.head && kafka_drain(k, r) != JFR_OK)
                waiting = true;
        sweep(k);
        if (!waiting && k->tot.in_flight == 0)
            return JFR_OK;
        uint64_t ms = jfrs_mono_ms() - t0;
        if (ms >= timeout_ms)
            break;
        uint64_t left = timeout_ms - ms;
        rd_kafka_poll(k->rk, (int)(left < 50 ? left : 50));
    }
    sweep(k);
    return k->tot.in_flight || k->tot.pending ? JFR_LIMIT : JFR_OK;
}

void jfrs_kafka_stats_get(const jfrs_kafka *k, jfrs_kafka_stats *out) {
    if (!out)
        return;
    if (!k) {
        memset(out, 0, sizeof *out);
        return;
    }
    copy_stats(out, &k->tot);
}

void jfrs_kafka_free(jfrs_kafka *k) {
    if (!k)
        return;
    rd_kafka_poll(k->rk, 0);
    /* what is still waiting is reported now, before the purge settles it */
    for (krec *r = k->recs; r; r = r->next)
        if (r->ended)
            report(k, r);
    rd_kafka_purge(k->rk, RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT);
    k->on_log = NULL; /* no more lines after this */
    rd_kafka_poll(k->rk, 0); /* the purged messages' reports */
    if (k->fixed)
        rd_kafka_topic_destroy(k->fixed);
    for (ktopic *t = k->topics, *next; t; t = next) {
        next = t->next;
        rd_kafka_topic_destroy(t->rkt);
        jfr__free(&k->a, t, sizeof *t + strlen(t->name) + 1);
    }
    if (k->mainq) {
        rd_kafka_queue_io_event_enable(k->mainq, -1, NULL, 0);
        rd_kafka_queue_destroy(k->mainq);
    }
    rd_kafka_destroy(k->rk);
    for (int i = 0; i < 2; i++)
        if (k->evfd[i] >= 0)
            close(k->evfd[i]);
    while (k->recs) { /* every sender was freed before (see the header) */
        krec *r = k->recs;
        k->recs = r->next;
        rec_free(k, r);
    }
    kafka_wm_free(k);
    jfrc_out_free(k->idb);
    jfrc_out_free(k->scratch);
    str_free(k, k->topic);
    jfr_allocator a = k->a;
    jfr__free(&a, k, sizeof *k);
}

#endif /* JFRS_HAVE_KAFKA */

