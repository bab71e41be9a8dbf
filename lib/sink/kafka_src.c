/*
 * kafka_src.c — a source's sender of the Kafka sink (jfrstream_sink.h,
 * "Kafka"; kafka.h): each event's message (the event JSON with the labels,
 * or OTLP JSON), held back until the source is identified (bounded), and
 * kept in order while librdkafka's queue is full. Built with librdkafka only
 * (lib/sink/meson.build).
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#include "digits.h"
#include "kafka.h"
#include "jfrstream_conv.h"

#include <time.h>

/* ------------------------------------------------------------ producing */

/* "/CHUNKSTART/OFFSET" (sep "/"), or with sep "\\/" as the JSON writer
 * escapes it, into buf (at least 48 bytes); its length. Without snprintf,
 * which was a third of the id's cost per message. */
static size_t id_tail(char *buf, const char *sep, int64_t cs, uint64_t off) {
    char d[48], *e = d + sizeof d, *q = jfr__digits_back(e, off);
    size_t sl = sep[1] ? 2 : 1; /* "/" or "\\/" */
    q -= sl;
    memcpy(q, sep, sl);
    q = jfr__digits_back(q, cs < 0 ? 0 - (uint64_t)cs : (uint64_t)cs);
    if (cs < 0)
        *--q = '-';
    q -= sl;
    memcpy(q, sep, sl);
    memcpy(buf, q, (size_t)(e - q));
    return (size_t)(e - q);
}

/* An event's id, SOURCE/CHUNKSTART/OFFSET (SOURCE: the key), in k->idb;
 * NULL without memory. */
static const char *id_text(jfrs_kafka *k, const char *key, size_t keylen, int64_t cs,
                           uint64_t off, size_t *len) {
    char num[48];
    jfrs_out_reset(k->idb);
    jfrc_out_write(k->idb, key, keylen);
    jfrc_out_write(k->idb, num, id_tail(num, "/", cs, off));
    const char *id = jfrc_out_data(k->idb, len);
    return jfrc_out_failed(k->idb) ? NULL : id;
}

/* Hand one message to librdkafka, with its id as header jfr-id: JFR_OK,
 * JFR_PAUSED (queue full: not taken), JFR_IO (refused: counted failed,
 * its slot settled as failed). */
static jfr_status produce(jfrs_kafka *k, krec *r, rd_kafka_topic_t *rkt, const char *key,
                          size_t keylen, const char *value, size_t len, kslot *slot,
                          int64_t cs, uint64_t off) {
    size_t idlen = 0;
    const char *id = id_text(k, key, keylen, cs, off, &idlen);
    rd_kafka_headers_t *hdrs = id ? rd_kafka_headers_new(1) : NULL;
    rd_kafka_resp_err_t err = RD_KAFKA_RESP_ERR__FAIL; /* no memory for the id */
    if (hdrs && rd_kafka_header_add(hdrs, "jfr-id", 6, id, (ssize_t)idlen) == 0)
        err = rd_kafka_producev(
            k->rk, RD_KAFKA_V_RKT(rkt), RD_KAFKA_V_KEY(key, keylen),
            RD_KAFKA_V_VALUE((void *)value, len), RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
            RD_KAFKA_V_HEADERS(hdrs), RD_KAFKA_V_OPAQUE(slot), RD_KAFKA_V_END);
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR && hdrs) /* taken by librdkafka only on success */
        rd_kafka_headers_destroy(hdrs);
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
    kafka_settle(k, slot, false);
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
jfr_status kafka_drain(jfrs_kafka *k, krec *r) {
    while (r->pend.head) {
        kmsg *m = r->pend.head;
        jfr_status st = produce(k, r, m->rkt, m->data, m->a, m->data + m->a, m->b, m->slot,
                                m->cs, m->off);
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
                           size_t keylen, const char *value, size_t len, bool may_drop,
                           kslot *slot, int64_t cs, uint64_t off) {
    jfrs_kafka *k = ks->k;
    krec *r = ks->r;
    if (!r->pend.head) {
        jfr_status st = produce(k, r, rkt, key, keylen, value, len, slot, cs, off);
        if (st != JFR_PAUSED)
            return st;
    }
    if (may_drop && (waiting_events(ks) >= k->hold_events ||
                     waiting_bytes(ks) + keylen + len > k->hold_bytes)) {
        r->st.dropped++;
        k->tot.dropped++;
        kafka_settle(k, slot, false);
        return JFR_LIMIT;
    }
    kmsg *m = msg_new(k, keylen, len);
    if (!m) {
        kafka_settle(k, slot, false);
        return JFR_NOMEM;
    }
    m->rkt = rkt;
    m->slot = slot;
    m->cs = cs;
    m->off = off;
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
                     int64_t start_ns, const char *json, size_t len, int64_t cs, uint64_t off) {
    jfrs_kafka *k = ks->k;
    jfrs_out_reset(out);
    if (k->format == JFRS_KAFKA_JSON) {
        /* the id as the JSON writer escapes it: the source id's JSON string,
         * kept per label generation, then the numbers */
        uint64_t gen = jfrs_source_generation(ks->src);
        size_t klen = 0;
        const char *kj = jfrc_out_data(ks->idkey, &klen);
        if (gen != ks->idkeygen || klen == 0) {
            const char *key = jfrs_source_id(ks->src);
            jfrs_out_reset(ks->idkey);
            jfrc_out_json_string(ks->idkey, key ? key : "", key ? strlen(key) : 0);
            kj = jfrc_out_data(ks->idkey, &klen);
            if (jfrc_out_failed(ks->idkey) || klen < 2) {
                jfrs_out_reset(ks->idkey);
                return false;
            }
            ks->idkeygen = gen;
        }
        const char *labels = jfrs_source_json(ks->src);
        if (!labels || len < 2 || json[len - 1] != '}')
            return false;
        char num[48];
        jfrc_out_write(out, json, len - 1);
        jfrc_out_puts(out, ",\"source\":");
        jfrc_out_puts(out, labels);
        jfrc_out_puts(out, ",\"id\":");
        jfrc_out_write(out, kj, klen - 1); /* without its closing quote */
        jfrc_out_write(out, num, id_tail(num, "\\/", cs, off));
        jfrc_out_puts(out, "\"}");
        return !jfrc_out_failed(out);
    }
    const char *key = jfrs_source_id(ks->src);
    size_t idlen = 0;
    const char *id = id_text(k, key ? key : "", key ? strlen(key) : 0, cs, off, &idlen);
    if (!id)
        return false;
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
    if (!jfrs_otlp_record(out, &k->a, type, tlen, start_ns, now_ns(), json, len, id, idlen))
        return false;
    jfrc_out_puts(out, JFRS_OTLP_END);
    return !jfrc_out_failed(out);
}

/* Once identified: the watermark of the source id, looked up again when
 * the labels changed (not per event). */
static void wm_refresh(jfrs_kafka_src *ks) {
    uint64_t gen = jfrs_source_generation(ks->src);
    if (gen == ks->wmgen || !jfrs_source_identified(ks->src))
        return;
    ks->wmgen = gen;
    kafka_wm_pin(ks->k, ks->r, jfrs_source_id(ks->src));
}

/* An event at (cs, off) that this source id delivered already: counted. */
static bool is_dup(jfrs_kafka_src *ks, int64_t cs, uint64_t off) {
    const kwm *w = ks->r->wm;
    if (!w || !w->set || cs > w->cs || (cs == w->cs && off >= w->off))
        return false;
    ks->r->st.duplicates++;
    ks->k->tot.duplicates++;
    return true;
}

/* Release the held events: made with the labels known now, sent in order. */
jfr_status kafka_release(jfrs_kafka_src *ks) {
    jfrs_kafka *k = ks->k;
    jfr_status worst = JFR_OK;
    ks->holding = false;
    const char *key = jfrs_source_id(ks->src);
    size_t keylen = key ? strlen(key) : 0;
    wm_refresh(ks);
    kmsg *m;
    while ((m = q_pop(&ks->hold)) != NULL) {
        k->tot.held--;
        ks->r->st.held = ks->hold.n;
        jfr_status st;
        size_t mlen = 0;
        const char *msg;
        if (is_dup(ks, m->cs, m->off)) {
            kafka_settle(k, m->slot, true); /* delivered before: handed on */
            st = JFR_OK;
        } else if (!make_msg(ks, k->scratch, m->data, m->a, m->start_ns, m->data + m->a, m->b,
                             m->cs, m->off) ||
                   !(msg = jfrc_out_data(k->scratch, &mlen))) {
            kafka_settle(k, m->slot, false);
            st = JFR_NOMEM;
        } else {
            st = send_msg(ks, m->rkt, key, keylen, msg, mlen, false, m->slot, m->cs, m->off);
        }
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
    jfrc_out_free(ks->idkey);
    jfr__free(&k->a, ks->rkt_by_type, ks->ntypes * sizeof(rd_kafka_topic_t *));
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
        !(ks->idkey = jfrc_out_new_memory_advanced(1 << 8, &k->a)) ||
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
    if (!ks || !c)
        return;
    jfrc_json_chunk_begin(ks->json, c);
    ks->prev_off = ks->chunk_off;
    ks->prev_ns = ks->chunk_ns;
    ks->chunk_off = c->offset;
    ks->chunk_ns = c->start_nanos;
    ks->have_chunk = true;
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
        rkt = kafka_topic_for(k, t->name);
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
        kafka_drain(k, r);
    /* its id: the chunk's start and the record's place in it */
    int64_t cs = ks->chunk_ns;
    uint64_t off = e->offset >= ks->chunk_off ? e->offset - ks->chunk_off : 0;
    if (ks->holding && jfrs_source_identified(ks->src))
        kafka_release(ks); /* before a duplicate returns: the held go first */
    wm_refresh(ks);
    if (is_dup(ks, cs, off))
        return JFR_OK;
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
    kslot *slot = kafka_slot_new(k, r);
    if (!slot)
        return JFR_NOMEM;
    rd_kafka_topic_t *rkt = event_topic(ks, e->type);
    if (!rkt) {
        r->st.failed++;
        k->tot.failed++;
        set_error(&r->st, "cannot make the topic handle");
        kafka_settle(k, slot, false);
        return JFR_IO;
    }
    const char *tname = e->type->name;
    size_t tlen = strlen(tname);
    if (ks->holding) {
        /* identified: with the full labels; the bound: with what is known */
        if (jfrs_source_identified(ks->src) || waiting_events(ks) + 1 > k->hold_events ||
            waiting_bytes(ks) + tlen + evlen > k->hold_bytes) {
            kafka_release(ks);
        } else {
            kmsg *m = msg_new(k, tlen, evlen);
            if (!m) {
                kafka_settle(k, slot, false);
                return JFR_NOMEM;
            }
            m->rkt = rkt;
            m->slot = slot;
            m->cs = cs;
            m->off = off;
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
    if (!make_msg(ks, ks->msg, tname, tlen, e->start_nanos, evjson, evlen, cs, off) ||
        !(msg = jfrc_out_data(ks->msg, &mlen))) {
        kafka_settle(k, slot, false);
        return JFR_NOMEM;
    }
    const char *key = jfrs_source_id(ks->src);
    jfr_status st = send_msg(ks, rkt, key, key ? strlen(key) : 0, msg, mlen, true, slot, cs,
                             off);
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
    return kafka_drain(ks->k, ks->r);
}

jfr_status jfrs_kafka_src_wait(jfrs_kafka_src *ks, uint64_t timeout_ms) {
    if (!ks)
        return JFR_OK;
    uint64_t t0 = jfrs_mono_ms();
    for (;;) {
        if (kafka_drain(ks->k, ks->r) == JFR_OK)
            return JFR_OK;
        if (jfrs_mono_ms() - t0 >= timeout_ms)
            return JFR_PAUSED;
        rd_kafka_poll(ks->k->rk, 10);
    }
}

void jfrs_kafka_src_end(jfrs_kafka_src *ks) {
    if (ks && ks->holding)
        kafka_release(ks);
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
        kafka_release(ks);
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

