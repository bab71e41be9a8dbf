/*
 * fanout.c — one source's parser callbacks to its outputs (jfrstream_sink.h,
 * jfrs_fanout): one JSON line per event, a Kafka sender, a metrics source;
 * the list of sources paused for a full Kafka queue and their resume.
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#include "jfrstream_sink.h"
#include "sink.h"
#include "../sized.h"

struct jfrs_fanout {
    jfrs_fanout_config cfg;
    jfr_allocator a;
    jfrs_fanout_src *head; /* every source, newest first */
};

struct jfrs_fanout_src {
    jfrs_fanout *fo;
    jfrs_source *src;
    void *user;
    jfrc_json *ej;          /* json: this source's writer (time base, zone) */
    jfrs_kafka_src *ks;     /* kafka: its sender */
    jfrs_metrics_src *ms;   /* metrics: its series (NULL: refused) */
    jfr_status ms_status;   /* how jfrs_metrics_src_new answered */
    bool paused, resume;    /* waiting for room in Kafka's queue; to resume now */
    /* the last event's decode error: its status and message (NULL: none,
     * or no message) */
    jfr_status ev_status;
    const char *ev_error;
    jfrs_fanout_src *next, *prev;
};

void jfrs_fanout_config_init(jfrs_fanout_config *cfg) {
    if (!cfg)
        return;
    memset(cfg, 0, sizeof *cfg);
    cfg->size = sizeof *cfg;
    cfg->json_stack_depth = 5;
}

jfr_status jfrs_fanout_new(const jfrs_fanout_config *cfg, jfrs_fanout **out) {
    if (out)
        *out = NULL;
    if (!cfg || !out)
        return JFR_INVALID_ARG;
    jfrs_fanout_config c;
    if (!jfr__sized_copy(&c, sizeof c, cfg))
        return JFR_INVALID_ARG;
    jfr_allocator a = jfrs_allocator(c.allocator);
    jfrs_fanout *fo = jfr__calloc(&a, sizeof *fo);
    if (!fo)
        return JFR_NOMEM;
    fo->cfg = c;
    fo->a = a;
    fo->cfg.allocator = NULL; /* kept by value in fo->a */
    *out = fo;
    return JFR_OK;
}

void jfrs_fanout_free(jfrs_fanout *fo) {
    if (!fo)
        return;
    while (fo->head)
        jfrs_fanout_src_end(fo->head);
    jfr_allocator a = fo->a;
    jfr__free(&a, fo, sizeof *fo);
}

jfr_status jfrs_fanout_src_new(jfrs_fanout *fo, jfrs_source *src, void *user,
                               jfrs_fanout_src **out) {
    if (out)
        *out = NULL;
    if (!fo || !src || !out)
        return JFR_INVALID_ARG;
    const jfrs_fanout_config *c = &fo->cfg;
    jfrs_fanout_src *fs = jfr__calloc(&fo->a, sizeof *fs);
    if (!fs)
        return JFR_NOMEM;
    fs->fo = fo;
    fs->src = src;
    fs->user = user;
    if ((c->json && !(fs->ej = jfrc_json_new_advanced(c->json, c->json_stack_depth, true,
                                                       &fo->a))) ||
        (c->kafka && !(fs->ks = jfrs_kafka_src_new(c->kafka, src)))) {
        jfrc_json_free(fs->ej);
        jfr__free(&fo->a, fs, sizeof *fs);
        return JFR_NOMEM;
    }
    if (fs->ej && c->json_cache_limit)
        jfrc_json_set_cache_limit(fs->ej, c->json_cache_limit);
    fs->ms_status = c->metrics ? jfrs_metrics_src_new(c->metrics, src, &fs->ms) : JFR_OK;
    if ((fs->next = fo->head) != NULL)
        fo->head->prev = fs;
    fo->head = fs;
    *out = fs;
    return JFR_OK;
}

jfr_status jfrs_fanout_src_metrics_status(const jfrs_fanout_src *fs) {
    return fs ? fs->ms_status : JFR_INVALID_ARG;
}

void *jfrs_fanout_src_user(const jfrs_fanout_src *fs) {
    return fs ? fs->user : NULL;
}

jfrs_source *jfrs_fanout_src_source(const jfrs_fanout_src *fs) {
    return fs ? fs->src : NULL;
}

jfr_status jfrs_fanout_src_subscribe(jfrs_fanout_src *fs, jfr_parser *p) {
    if (!fs || !p)
        return JFR_INVALID_ARG;
    return fs->ms ? jfrs_metrics_src_subscribe(fs->ms, p) : JFR_OK;
}

void jfrs_fanout_src_chunk_begin(jfrs_fanout_src *fs, const jfr_chunk_info *c) {
    if (!fs || !c)
        return;
    if (fs->ej)
        jfrc_json_chunk_begin(fs->ej, c);
    if (fs->ks)
        jfrs_kafka_src_chunk_begin(fs->ks, c);
    jfrs_metrics_src_chunk_begin(fs->ms, c);
}

void jfrs_fanout_src_metadata(jfrs_fanout_src *fs, const jfr_metadata *m) {
    if (!fs || !m)
        return;
    if (fs->ej)
        jfrc_json_metadata(fs->ej, m);
    if (fs->ks)
        jfrs_kafka_src_metadata(fs->ks, m);
    jfrs_metrics_src_metadata(fs->ms, m);
}

void jfrs_fanout_src_record(jfrs_fanout_src *fs, const jfr_record *r) {
    if (fs && r)
        jfrs_metrics_src_record(fs->ms, r);
}

/* The event's first decode error is the one reported. */
static void event_error(jfrs_fanout_src *fs, jfr_status st, const char *msg) {
    if (fs->ev_status == JFR_OK) {
        fs->ev_status = st;
        fs->ev_error = msg;
    }
}

jfr_status jfrs_fanout_src_event(jfrs_fanout_src *fs, const jfr_event *e) {
    if (!fs || !e)
        return JFR_INVALID_ARG;
    fs->ev_status = JFR_OK;
    fs->ev_error = NULL;
    if (fs->ej) {
        jfrc_out *o = fs->fo->cfg.json;
        jfr_value ev;
        jfr_status st = jfr_event_value(e, &ev);
        if (st) {
            event_error(fs, st, NULL);
        } else {
            st = jfrc_json_event(fs->ej, e, &ev);
            jfrc_out_putc(o, '\n');
            if (st)
                event_error(fs, st, jfrc_json_error(fs->ej));
        }
    }
    if (!fs->ks)
        return JFR_OK;
    jfr_status st = jfrs_kafka_src_event(fs->ks, e);
    const char *derr = jfrs_kafka_src_decode_error(fs->ks);
    if (derr && !fs->ej) /* with JSON lines, their error was the report */
        event_error(fs, JFR_BAD_EVENT, derr);
    if (st == JFR_PAUSED)
        fs->paused = true;
    /* LIMIT, IO: counted in the producer's stats */
    return st == JFR_PAUSED || st == JFR_NOMEM ? st : JFR_OK;
}

jfr_status jfrs_fanout_src_event_error(const jfrs_fanout_src *fs, const char **message) {
    if (message)
        *message = fs ? fs->ev_error : NULL;
    return fs ? fs->ev_status : JFR_INVALID_ARG;
}

jfr_status jfrs_fanout_src_wait(jfrs_fanout_src *fs, uint64_t timeout_ms) {
    if (!fs)
        return JFR_INVALID_ARG;
    fs->paused = false;
    return fs->ks ? jfrs_kafka_src_wait(fs->ks, timeout_ms) : JFR_OK;
}

void jfrs_fanout_src_chunk_end(jfrs_fanout_src *fs) {
    if (fs)
        jfrs_metrics_src_chunk_end(fs->ms);
}

void jfrs_fanout_src_error(jfrs_fanout_src *fs, jfr_status st) {
    if (fs)
        jfrs_metrics_src_error(fs->ms, st);
}

void jfrs_fanout_src_end(jfrs_fanout_src *fs) {
    if (!fs)
        return;
    jfrs_fanout *fo = fs->fo;
    if (fs->ks) {
        jfrs_kafka_src_end(fs->ks);  /* held events go now */
        jfrs_kafka_src_free(fs->ks); /* its messages stay with the producer */
    }
    jfrs_metrics_src_end(fs->ms);
    jfrc_json_free(fs->ej);
    if (fs->prev)
        fs->prev->next = fs->next;
    else
        fo->head = fs->next;
    if (fs->next)
        fs->next->prev = fs->prev;
    jfr__free(&fo->a, fs, sizeof *fs);
}

/* Resume the paused sources that have room again (every paused one when
 * `all`). on_resume may end sources (an input that ended, then the
 * application stops them all), so every source is marked first and the
 * list is walked again from its start after each resume. */
static void resume(jfrs_fanout *fo, bool all) {
    bool any = false;
    for (jfrs_fanout_src *fs = fo->head; fs; fs = fs->next)
        if (fs->paused && (all || !fs->ks || jfrs_kafka_src_retry(fs->ks) == JFR_OK)) {
            fs->paused = false;
            fs->resume = true;
            any = true;
        }
    while (any) {
        any = false;
        for (jfrs_fanout_src *fs = fo->head; fs; fs = fs->next)
            if (fs->resume) {
                fs->resume = false;
                if (fo->cfg.on_resume)
                    fo->cfg.on_resume(fs, fs->user, fo->cfg.user);
                any = true;
                break;
            }
    }
}

void jfrs_fanout_poll(jfrs_fanout *fo) {
    if (!fo)
        return;
    if (fo->cfg.kafka)
        jfrs_kafka_poll(fo->cfg.kafka);
    resume(fo, false);
}

void jfrs_fanout_resume_all(jfrs_fanout *fo) {
    if (fo)
        resume(fo, true);
}

bool jfrs_fanout_paused(const jfrs_fanout *fo) {
    for (const jfrs_fanout_src *fs = fo ? fo->head : NULL; fs; fs = fs->next)
        if (fs->paused)
            return true;
    return false;
}

/* ---- ready-made parser callbacks: the parser's user pointer points at a
 * struct whose first member is `void *data` holding the jfrs_fanout_src
 * (jfr_uv_conn, jfr_uv_tail) */

static jfrs_fanout_src *src_of(void *user) { return user ? *(void **)user : NULL; }

static int cb_chunk_begin(jfr_parser *p, const jfr_chunk_info *c, void *user) {
    (void)p;
    jfrs_fanout_src_chunk_begin(src_of(user), c);
    return JFR_CB_CONTINUE;
}

static int cb_metadata(jfr_parser *p, const jfr_metadata *m, void *user) {
    (void)p;
    jfrs_fanout_src_metadata(src_of(user), m);
    return JFR_CB_CONTINUE;
}

static int cb_record(jfr_parser *p, const jfr_record *r, void *user) {
    (void)p;
    jfrs_fanout_src_record(src_of(user), r);
    return JFR_CB_CONTINUE;
}

static int cb_event(jfr_parser *p, const jfr_event *e, void *user) {
    (void)p;
    jfrs_fanout_src *fs = src_of(user);
    return fs && jfrs_fanout_src_event(fs, e) == JFR_PAUSED ? JFR_CB_PAUSE : JFR_CB_CONTINUE;
}

static int cb_chunk_end(jfr_parser *p, const jfr_chunk_info *c, void *user) {
    (void)p;
    (void)c;
    jfrs_fanout_src_chunk_end(src_of(user));
    return JFR_CB_CONTINUE;
}

static int cb_error(jfr_parser *p, jfr_status st, const char *message, void *user) {
    (void)p;
    (void)message;
    jfrs_fanout_src_error(src_of(user), st);
    return JFR_CB_STOP; /* as without on_error */
}

void jfrs_fanout_callbacks(jfr_callbacks *cb) {
    if (!cb)
        return;
    jfr_callbacks_init(cb);
    cb->on_chunk_begin = cb_chunk_begin;
    cb->on_metadata = cb_metadata;
    cb->on_record = cb_record;
    cb->on_event = cb_event;
    cb->on_chunk_end = cb_chunk_end;
    cb->on_error = cb_error;
}
