/*
 * kafka.c — events to Kafka through librdkafka (jfrstream_sink.h, "Kafka"):
 * one message per event, keyed by the source id, JSON or OTLP JSON; held
 * back until the source is identified (bounded); kept in order while
 * librdkafka's queue is full (the caller pauses that source); delivery
 * reports counted per source, whose record outlives the source until its
 * last message is settled.
 *
 * Without librdkafka (JFRS_HAVE_KAFKA undefined) only stubs are built.
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#include "jfrstream_sink.h"
#include "jfrstream_conv.h"
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

#else /* JFRS_HAVE_KAFKA */

#include <librdkafka/rdkafka.h>
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#define DEFAULT_HOLD_EVENTS 10000
#define DEFAULT_HOLD_BYTES (16u << 20)

/* A message waiting here: held (the event JSON, wrapped at release) or
 * pending (the whole message, waiting for room in librdkafka's queue). */
typedef struct kmsg {
    struct kmsg *next;
    rd_kafka_topic_t *rkt;
    int64_t start_ns;   /* held: the event's start (OTLP) */
    size_t a, b;        /* held: type length, JSON length; pending: key, value */
    char data[];        /* held: type, JSON; pending: key, value */
} kmsg;

typedef struct kqueue {
    kmsg *head, *tail;
    uint64_t n, bytes;
} kqueue;

/* A source's record: its counts and its pending messages; outlives the
 * sender until every message is settled. */
typedef struct krec {
    struct krec *next;
    jfrs_kafka_stats st;
    kqueue pend;
    struct jfrs_kafka_src *ks; /* its sender; NULL once freed */
    bool ended;         /* the sender was freed */
    bool done;          /* reported (on_source_done) */
    char *id, *origin;  /* set when the sender is freed */
} krec;

/* A topic handle per expanded name (cached per source by type index). */
typedef struct ktopic {
    struct ktopic *next;
    rd_kafka_topic_t *rkt;
    char name[];
} ktopic;

struct jfrs_kafka {
    rd_kafka_t *rk;
    rd_kafka_queue_t *mainq;
    int evfd[2];        /* readable when delivery reports wait (-1: none) */
    jfrs_kafka_format format;
    char *topic;        /* the pattern */
    bool per_type;      /* it holds "{type}" */
    rd_kafka_topic_t *fixed; /* the topic when not per type */
    ktopic *topics;
    uint32_t stack_depth;
    uint64_t hold_events, hold_bytes;
    void (*on_log)(void *user, int level, const char *message);
    void (*on_source_done)(void *user, const char *id, const char *origin,
                           const jfrs_kafka_stats *st);
    void *user;
    krec *recs;         /* every record, live or ended */
    jfrs_kafka_stats tot;
    jfrc_out *scratch;  /* a message being made for a release */
    jfr_allocator a;    /* every allocation of the producer and its senders */
};

struct jfrs_kafka_src {
    jfrs_kafka *k;
    krec *r;
    jfrs_source *src;
    jfrc_out *out;      /* the event JSON */
    jfrc_json *json;
    jfrc_out *msg;      /* the message */
    jfrc_out *res;      /* OTLP: the resource part, of label generation resgen */
    uint64_t resgen;
    bool holding;       /* not identified, not released yet */
    kqueue hold;
    rd_kafka_topic_t **rkt_by_type; /* per type index (per-type topics) */
    size_t ntypes;
    const jfr_type *last_type; /* the last event's type and topic */
    rd_kafka_topic_t *last_rkt;
    bool decode_failed;
    char decode_err[256];
};

bool jfrs_kafka_available(void) { return true; }

static void set_error(jfrs_kafka_stats *st, const char *what) {
    snprintf(st->last_error, sizeof st->last_error, "%s", what);
}

/* ------------------------------------------------------------ the producer */

static void dr_msg(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque) {
    (void)rk;
    jfrs_kafka *k = opaque;
    krec *r = m->_private;
    if (!r)
        return;
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

static kmsg *msg_new(jfrs_kafka *k, size_t a, size_t b) {
    kmsg *m = jfr__alloc(&k->a, sizeof *m + a + b);
    if (m) {
        m->a = a;
        m->b = b;
    }
    return m;
}

static void msg_free(jfrs_kafka *k, kmsg *m) {
    if (m)
        jfr__free(&k->a, m, sizeof *m + m->a + m->b);
}

static void str_free(jfrs_kafka *k, char *s) {
    if (s)
        jfr__free(&k->a, s, strlen(s) + 1);
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
    k->per_type = strstr(topic, "{type}") != NULL;
    k->stack_depth = cfg->stack_depth;
    k->hold_events = cfg->hold_events ? cfg->hold_events : DEFAULT_HOLD_EVENTS;
    k->hold_bytes = cfg->hold_bytes ? cfg->hold_bytes : DEFAULT_HOLD_BYTES;
    k->on_log = cfg->on_log;
    k->on_source_done = cfg->on_source_done;
    k->user = cfg->user;
    rd_kafka_conf_t *conf = k->topic && k->scratch ? rd_kafka_conf_new() : NULL;
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

/* The topic of events of type `name` (per-type topics). */
static rd_kafka_topic_t *topic_for(jfrs_kafka *k, const char *name) {
    jfrc_out *b = jfrc_out_new_memory_advanced(256, &k->a);
    if (!b)
        return NULL;
    const char *p = k->topic, *at;
    while ((at = strstr(p, "{type}")) != NULL) {
        jfrc_out_write(b, p, (size_t)(at - p));
        for (const char *q = name; *q; q++) {
            char c = *q;
            bool okc = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                       (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
            jfrc_out_putc(b, (char)(okc ? c : '_'));
        }
        p = at + 6;
    }
    jfrc_out_puts(b, p);
    const char *full = jfrs_out_cstr(b, NULL);
    rd_kafka_topic_t *rkt = NULL;
    if (full) {
        for (ktopic *t = k->topics; t; t = t->next)
            if (strcmp(t->name, full) == 0) {
                rkt = t->rkt;
                break;
            }
        if (!rkt && (rkt = rd_kafka_topic_new(k->rk, full, NULL)) != NULL) {
            size_t n = strlen(full);
            ktopic *t = jfr__alloc(&k->a, sizeof *t + n + 1);
            if (t) {
                t->rkt = rkt;
                memcpy(t->name, full, n + 1);
                t->next = k->topics;
                k->topics = t;
            } else {
                rd_kafka_topic_destroy(rkt);
                rkt = NULL;
            }
        }
    }
    jfrc_out_free(b);
    return rkt;
}

/* ------------------------------------------------------------ producing */

/* Hand one message to librdkafka: JFR_OK, JFR_PAUSED (queue full: not
 * taken), JFR_IO (refused: counted failed). */
static jfr_status produce(jfrs_kafka *k, krec *r, rd_kafka_topic_t *rkt, const char *key,
                          size_t keylen, const char *value, size_t len) {
    rd_kafka_resp_err_t err = rd_kafka_producev(
        k->rk, RD_KAFKA_V_RKT(rkt), RD_KAFKA_V_KEY(key, keylen),
        RD_KAFKA_V_VALUE((void *)value, len), RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
        RD_KAFKA_V_OPAQUE(r), RD_KAFKA_V_END);
    if (err == RD_KAFKA_RESP_ERR_NO_ERROR) {
        r->st.produced++;
        r->st.in_flight++;
        k->tot.produced++;
        k->tot.in_flight++;
        return JFR_OK;
    }
    if (err == RD_KAFKA_RESP_ERR__QUEUE_FULL)
        return JFR_PAUSED;
    char text[256];
    snprintf(text, sizeof text, "%s (topic %s)", rd_kafka_err2str(err), rd_kafka_topic_name(rkt));
    r->st.failed++;
    k->tot.failed++;
    set_error(&r->st, text);
    set_error(&k->tot, text);
    return JFR_IO;
}

static uint64_t waiting_events(const jfrs_kafka_src *ks) {
    return ks->hold.n + ks->r->pend.n;
}

static uint64_t waiting_bytes(const jfrs_kafka_src *ks) {
    return ks->hold.bytes + ks->r->pend.bytes;
}

static void q_push(kqueue *q, kmsg *m, size_t bytes) {
    m->next = NULL;
    if (q->tail)
        q->tail->next = m;
    else
        q->head = m;
    q->tail = m;
    q->n++;
    q->bytes += bytes;
}

static kmsg *q_pop(kqueue *q) {
    kmsg *m = q->head;
    if (m) {
        q->head = m->next;
        if (!q->head)
            q->tail = NULL;
        q->n--;
        q->bytes -= m->a + m->b;
    }
    return m;
}

/* Hand over a record's pending messages, in order: JFR_OK when none is
 * left, JFR_PAUSED when the queue is full again. */
static jfr_status drain(jfrs_kafka *k, krec *r) {
    while (r->pend.head) {
        kmsg *m = r->pend.head;
        jfr_status st = produce(k, r, m->rkt, m->data, m->a, m->data + m->a, m->b);
        if (st == JFR_PAUSED)
            return JFR_PAUSED;
        q_pop(&r->pend);
        msg_free(k, m);
        r->st.pending = r->pend.n;
        k->tot.pending--;
    }
    return JFR_OK;
}

/* Send a made message (key, value) of source ks: produce it, or queue it
 * behind those pending. */
static jfr_status send_msg(jfrs_kafka_src *ks, rd_kafka_topic_t *rkt, const char *key,
                           size_t keylen, const char *value, size_t len, bool may_drop) {
    jfrs_kafka *k = ks->k;
    krec *r = ks->r;
    if (!r->pend.head) {
        jfr_status st = produce(k, r, rkt, key, keylen, value, len);
        if (st != JFR_PAUSED)
            return st;
    }
    if (may_drop && (waiting_events(ks) >= k->hold_events ||
                     waiting_bytes(ks) + keylen + len > k->hold_bytes)) {
        r->st.dropped++;
        k->tot.dropped++;
        return JFR_LIMIT;
    }
    kmsg *m = msg_new(k, keylen, len);
    if (!m)
        return JFR_NOMEM;
    m->rkt = rkt;
    m->start_ns = 0;
    if (keylen)
        memcpy(m->data, key, keylen);
    memcpy(m->data + keylen, value, len);
    q_push(&r->pend, m, keylen + len);
    r->st.pending = r->pend.n;
    k->tot.pending++;
    r->st.paused++;
    k->tot.paused++;
    return JFR_PAUSED;
}

static int64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* The message for one event (JSON json[0..len), type name) into ks->msg or
 * `out`; false when out of memory. */
static bool make_msg(jfrs_kafka_src *ks, jfrc_out *out, const char *type, size_t tlen,
                     int64_t start_ns, const char *json, size_t len) {
    jfrs_kafka *k = ks->k;
    jfrs_out_reset(out);
    if (k->format == JFRS_KAFKA_JSON) {
        const char *labels = jfrs_source_json(ks->src);
        if (!labels || len < 2 || json[len - 1] != '}')
            return false;
        jfrc_out_write(out, json, len - 1);
        jfrc_out_puts(out, ",\"source\":");
        jfrc_out_puts(out, labels);
        jfrc_out_putc(out, '}');
        return !jfrc_out_failed(out);
    }
    uint64_t gen = jfrs_source_generation(ks->src);
    size_t rlen = 0;
    const char *res = jfrc_out_data(ks->res, &rlen);
    if (gen != ks->resgen || rlen == 0) {
        jfrs_out_reset(ks->res);
        jfrs_otlp_begin(ks->res, ks->src);
        res = jfrc_out_data(ks->res, &rlen);
        if (jfrc_out_failed(ks->res)) {
            jfrs_out_reset(ks->res);
            return false;
        }
        ks->resgen = gen;
    }
    jfrc_out_write(out, res, rlen);
    if (!jfrs_otlp_record(out, &k->a, type, tlen, start_ns, now_ns(), json, len))
        return false;
    jfrc_out_puts(out, JFRS_OTLP_END);
    return !jfrc_out_failed(out);
}

/* Release the held events: made with the labels known now, sent in order. */
static jfr_status release(jfrs_kafka_src *ks) {
    jfrs_kafka *k = ks->k;
    jfr_status worst = JFR_OK;
    ks->holding = false;
    const char *key = jfrs_source_id(ks->src);
    size_t keylen = key ? strlen(key) : 0;
    kmsg *m;
    while ((m = q_pop(&ks->hold)) != NULL) {
        k->tot.held--;
        ks->r->st.held = ks->hold.n;
        jfr_status st;
        size_t mlen = 0;
        const char *msg;
        if (!make_msg(ks, k->scratch, m->data, m->a, m->start_ns, m->data + m->a, m->b) ||
            !(msg = jfrc_out_data(k->scratch, &mlen)))
            st = JFR_NOMEM;
        else
            st = send_msg(ks, m->rkt, key, keylen, msg, mlen, false);
        msg_free(k, m);
        if (st == JFR_NOMEM || (st != JFR_OK && worst == JFR_OK))
            worst = st;
    }
    return worst;
}

/* ------------------------------------------------------------ sources */

/* The sender's own memory (its record apart). */
static void src_free(jfrs_kafka_src *ks) {
    jfrs_kafka *k = ks->k;
    jfrc_json_free(ks->json);
    jfrc_out_free(ks->out);
    jfrc_out_free(ks->msg);
    jfrc_out_free(ks->res);
    jfr__free(&k->a, ks->rkt_by_type, ks->ntypes * sizeof *ks->rkt_by_type);
    jfr__free(&k->a, ks, sizeof *ks);
}

jfrs_kafka_src *jfrs_kafka_src_new(jfrs_kafka *k, jfrs_source *src) {
    if (!k || !src)
        return NULL;
    jfrs_kafka_src *ks = jfr__calloc(&k->a, sizeof *ks);
    krec *r = jfr__calloc(&k->a, sizeof *r);
    if (!ks || !r) {
        jfr__free(&k->a, ks, sizeof *ks);
        jfr__free(&k->a, r, sizeof *r);
        return NULL;
    }
    ks->k = k;
    ks->r = r;
    ks->src = src;
    ks->holding = !jfrs_source_identified(src);
    r->ks = ks;
    if (!(ks->out = jfrc_out_new_memory_advanced(1 << 16, &k->a)) ||
        !(ks->msg = jfrc_out_new_memory_advanced(1 << 12, &k->a)) ||
        !(ks->res = jfrc_out_new_memory_advanced(1 << 10, &k->a)) ||
        !(ks->json = jfrc_json_new(ks->out, k->stack_depth, true))) {
        src_free(ks);
        jfr__free(&k->a, r, sizeof *r);
        return NULL;
    }
    r->next = k->recs;
    k->recs = r;
    return ks;
}

void jfrs_kafka_src_chunk_begin(jfrs_kafka_src *ks, const jfr_chunk_info *c) {
    if (ks && c)
        jfrc_json_chunk_begin(ks->json, c);
}

void jfrs_kafka_src_metadata(jfrs_kafka_src *ks, const jfr_metadata *m) {
    if (!ks || !m)
        return;
    jfrc_json_metadata(ks->json, m);
    ks->last_type = NULL;
    if (ks->k->per_type) {
        /* type indexes are per metadata table: forget the cache */
        if (m->ntypes > ks->ntypes) {
            rd_kafka_topic_t **t = jfr__realloc(&ks->k->a, ks->rkt_by_type,
                                                ks->ntypes * sizeof(rd_kafka_topic_t *),
                                                m->ntypes * sizeof(rd_kafka_topic_t *));
            if (!t)
                return; /* looked up each time */
            ks->rkt_by_type = t;
            ks->ntypes = m->ntypes;
        }
        memset(ks->rkt_by_type, 0, ks->ntypes * sizeof(rd_kafka_topic_t *));
    }
}

static rd_kafka_topic_t *event_topic(jfrs_kafka_src *ks, const jfr_type *t) {
    jfrs_kafka *k = ks->k;
    if (!k->per_type)
        return k->fixed;
    if (t == ks->last_type)
        return ks->last_rkt;
    rd_kafka_topic_t *rkt = NULL;
    bool cached = t->index < ks->ntypes;
    if (cached)
        rkt = ks->rkt_by_type[t->index];
    if (!rkt) {
        rkt = topic_for(k, t->name);
        if (cached)
            ks->rkt_by_type[t->index] = rkt;
    }
    ks->last_type = t;
    ks->last_rkt = rkt;
    return rkt;
}

jfr_status jfrs_kafka_src_event(jfrs_kafka_src *ks, const jfr_event *e) {
    if (!ks || !e || !e->type)
        return JFR_INVALID_ARG;
    jfrs_kafka *k = ks->k;
    krec *r = ks->r;
    jfrs_source_event(ks->src, e);
    if (r->pend.head)
        drain(k, r);
    /* the event JSON */
    ks->decode_failed = false;
    jfr_value ev;
    jfr_status dst = jfr_event_value(e, &ev);
    jfrs_out_reset(ks->out);
    if (dst == JFR_OK) {
        dst = jfrc_json_event(ks->json, e, &ev);
        if (dst != JFR_OK)
            snprintf(ks->decode_err, sizeof ks->decode_err, "%s", jfrc_json_error(ks->json));
    } else {
        snprintf(ks->decode_err, sizeof ks->decode_err, "%s", jfr_status_str(dst));
        ks->decode_failed = true;
        return dst; /* nothing to send */
    }
    ks->decode_failed = dst != JFR_OK;
    size_t evlen = 0;
    const char *evjson = jfrc_out_data(ks->out, &evlen);
    if (jfrc_out_failed(ks->out)) {
        jfrs_out_reset(ks->out); /* out of memory: this event is lost */
        return JFR_NOMEM;
    }
    rd_kafka_topic_t *rkt = event_topic(ks, e->type);
    if (!rkt) {
        r->st.failed++;
        k->tot.failed++;
        set_error(&r->st, "cannot make the topic handle");
        return JFR_IO;
    }
    const char *tname = e->type->name;
    size_t tlen = strlen(tname);
    if (ks->holding) {
        /* identified: with the full labels; the bound: with what is known */
        if (jfrs_source_identified(ks->src) || waiting_events(ks) + 1 > k->hold_events ||
            waiting_bytes(ks) + tlen + evlen > k->hold_bytes) {
            release(ks);
        } else {
            kmsg *m = msg_new(k, tlen, evlen);
            if (!m)
                return JFR_NOMEM;
            m->rkt = rkt;
            m->start_ns = e->start_nanos;
            /* the type name, then the JSON: lengths a and b, no NUL */
            memcpy(m->data, tname, tlen); // NOLINT(bugprone-not-null-terminated-result)
            memcpy(m->data + tlen, evjson, evlen);
            q_push(&ks->hold, m, tlen + evlen);
            r->st.held = ks->hold.n;
            k->tot.held++;
            return JFR_OK;
        }
    }
    size_t mlen = 0;
    const char *msg;
    if (!make_msg(ks, ks->msg, tname, tlen, e->start_nanos, evjson, evlen) ||
        !(msg = jfrc_out_data(ks->msg, &mlen)))
        return JFR_NOMEM;
    const char *key = jfrs_source_id(ks->src);
    jfr_status st = send_msg(ks, rkt, key, key ? strlen(key) : 0, msg, mlen, true);
    if (st == JFR_OK && r->pend.head)
        st = JFR_PAUSED; /* released events wait */
    return st;
}

const char *jfrs_kafka_src_decode_error(const jfrs_kafka_src *ks) {
    return ks && ks->decode_failed ? ks->decode_err : NULL;
}

jfr_status jfrs_kafka_src_retry(jfrs_kafka_src *ks) {
    if (!ks)
        return JFR_OK;
    return drain(ks->k, ks->r);
}

jfr_status jfrs_kafka_src_wait(jfrs_kafka_src *ks, uint64_t timeout_ms) {
    if (!ks)
        return JFR_OK;
    uint64_t t0 = jfrs_mono_ms();
    for (;;) {
        if (drain(ks->k, ks->r) == JFR_OK)
            return JFR_OK;
        if (jfrs_mono_ms() - t0 >= timeout_ms)
            return JFR_PAUSED;
        rd_kafka_poll(ks->k->rk, 10);
    }
}

void jfrs_kafka_src_end(jfrs_kafka_src *ks) {
    if (ks && ks->holding)
        release(ks);
}

static void copy_stats(jfrs_kafka_stats *out, const jfrs_kafka_stats *in) {
    *out = *in;
}

void jfrs_kafka_src_stats(const jfrs_kafka_src *ks, jfrs_kafka_stats *out) {
    if (!out)
        return;
    if (!ks) {
        memset(out, 0, sizeof *out);
        return;
    }
    copy_stats(out, &ks->r->st);
}

void jfrs_kafka_src_free(jfrs_kafka_src *ks) {
    if (!ks)
        return;
    jfrs_kafka *k = ks->k;
    krec *r = ks->r;
    if (ks->holding)
        release(ks);
    const char *id = jfrs_source_id(ks->src);
    const char *origin = jfrs_source_get(ks->src, "peer");
    if (!origin)
        origin = jfrs_source_get(ks->src, "path");
    r->id = jfr__strdup(&k->a, id ? id : "");
    r->origin = jfr__strdup(&k->a, origin ? origin : (id ? id : ""));
    r->ended = true;
    r->ks = NULL;
    src_free(ks);
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
            drain(k, r);
    sweep(k);
}

jfr_status jfrs_kafka_flush(jfrs_kafka *k, uint64_t timeout_ms) {
    if (!k)
        return JFR_OK;
    for (krec *r = k->recs; r; r = r->next)
        if (r->ks && r->ks->holding)
            release(r->ks);
    uint64_t t0 = jfrs_mono_ms();
    for (;;) {
        rd_kafka_poll(k->rk, 0);
        bool waiting = false;
        for (krec *r = k->recs; r; r = r->next)
            if (r->pend.head && drain(k, r) != JFR_OK)
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
    jfrc_out_free(k->scratch);
    str_free(k, k->topic);
    jfr_allocator a = k->a;
    jfr__free(&a, k, sizeof *k);
}

#endif /* JFRS_HAVE_KAFKA */
