/*
 * fanout.c — one source's parser callbacks to its outputs (jfrstream_sink.h,
 * jfrs_fanout): one JSON line per event, a Kafka sender, a metrics source,
 * the application's profile, Pyroscope windows; the list of sources paused
 * for a full Kafka queue and their resume.
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#include "jfrstream_sink.h"
#include "sink.h"
#include "../sized.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define MAX_KINDS 16

/* One Pyroscope kind of one source: its profile (NULL until its first
 * event) and the sampling period its jdk.ActiveSetting gave (0: none). */
typedef struct slot {
    jfrs_fanout_src *fs;
    const jfrc_pyroscope_kind *kind;
    jfrc_profile *prof;
    int64_t period;
} slot;

struct jfrs_fanout {
    jfrs_fanout_config cfg;
    jfr_allocator a;
    jfrs_fanout_src *head; /* every source, newest first */
    uint64_t nsrc;         /* sources made: their ids */
    /* pyroscope: the kinds of pyroscope_event, per kind a profile that
     * names its event types, the window's start (wall clock, ms), the
     * pprof of one upload */
    const jfrc_pyroscope_kind *kinds[MAX_KINDS];
    size_t nkinds;
    jfrc_profile *tmpl[MAX_KINDS];
    int64_t win_start_ms;
    jfrc_out *pbuf;
};

struct jfrs_fanout_src {
    jfrs_fanout *fo;
    jfrs_source *src;
    void *user;
    jfrc_json *ej;          /* json: this source's writer (time base, zone) */
    jfrs_kafka_src *ks;     /* kafka: its sender */
    jfrs_metrics_src *ms;   /* metrics: its series (NULL: refused) */
    jfr_status ms_status;   /* how jfrs_metrics_src_new answered */
    uint64_t id;            /* 1, 2, ... in creation order: the profile's key */
    /* pyroscope: a slot per kind; the queue's name (the origin), the series
     * name (malloc'ed by jfrs_pyroscope_name) of labels generation pgen */
    slot *slots;
    char *origin;
    char *pname;
    uint64_t pgen;
    bool paused, resume;    /* waiting for room in Kafka's queue; to resume now */
    /* the last event's decode error: its status and message (NULL: none,
     * or no message) */
    jfr_status ev_status;
    const char *ev_error;
    uint64_t marked;        /* jfrs_fanout_src_mark's last position */
    jfrs_views_src *vs;     /* views: its copy */
    jfr_parser *p;          /* views: from jfrs_fanout_src_subscribe */
    jfrs_kafka_stats kst;   /* the sender's stats at a failure: its error */
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
    if (c.pyroscope) {
        const char *words = c.pyroscope_event ? c.pyroscope_event : "cpu";
        jfr_status st = jfrc_pyroscope_kinds(words, fo->kinds, MAX_KINDS, &fo->nkinds, NULL);
        for (size_t k = 0; st == JFR_OK && k < fo->nkinds; k++) {
            fo->tmpl[k] = jfrc_profile_new_advanced(&fo->a);
            st = !fo->tmpl[k] ? JFR_NOMEM : jfrc_profile_select(fo->tmpl[k], fo->kinds[k]->select);
            if (st != JFR_OK && fo->tmpl[k] && !jfrc_profile_error(fo->tmpl[k]))
                st = JFR_NOMEM;
        }
        if (st == JFR_OK && !(fo->pbuf = jfrc_out_new_memory_advanced(1 << 16, &fo->a)))
            st = JFR_NOMEM;
        if (st != JFR_OK) {
            jfrs_fanout_free(fo);
            return st == JFR_NOMEM ? JFR_NOMEM : JFR_INVALID_ARG;
        }
        fo->win_start_ms = jfrs_fanout_now_ms();
    }
    *out = fo;
    return JFR_OK;
}

int64_t jfrs_fanout_now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* A message about a source, to the application's on_message. */
#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static void say(jfrs_fanout_src *fs, const char *fmt, ...) {
    const jfrs_fanout_config *c = &fs->fo->cfg;
    if (!c->on_message)
        return;
    char text[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    c->on_message(fs, fs->user, text, c->user);
}

/* The series name of a source, made again when its labels changed. */
static const char *series_name(jfrs_fanout_src *fs) {
    uint64_t g = jfrs_source_generation(fs->src);
    if (!fs->pname || fs->pgen != g) {
        free(fs->pname);
        fs->pname = jfrs_pyroscope_name(fs->src, fs->fo->cfg.pyroscope_app);
        fs->pgen = g;
    }
    return fs->pname;
}

/* Push every kind of `fs` with events, window [start, end), and empty them. */
static void push_window(jfrs_fanout_src *fs, int64_t start_ms, int64_t end_ms) {
    jfrs_fanout *fo = fs->fo;
    for (size_t k = 0; fs->slots && k < fo->nkinds; k++) {
        slot *sl = &fs->slots[k];
        if (!sl->prof || jfrc_profile_events(sl->prof) == 0) {
            if (sl->prof)
                jfrc_profile_reset(sl->prof);
            continue;
        }
        if (jfrc_profile_error(sl->prof)) {
            say(fs, "pyroscope %s: %s", sl->kind->name, jfrc_profile_error(sl->prof));
            jfrc_profile_clear_error(sl->prof);
        }
        const char *name = series_name(fs);
        jfrc_pprof_options po;
        jfrc_pyroscope_pprof(sl->kind, sl->period, start_ms * 1000000,
                             (end_ms - start_ms) * 1000000, &po);
        jfrs_out_reset(fo->pbuf);
        jfr_status st = !name ? JFR_NOMEM : jfrc_profile_finish(sl->prof);
        if (st == JFR_OK)
            st = jfrc_profile_write_pprof_with(sl->prof, fo->pbuf, &po);
        size_t len = 0;
        const char *body = jfrc_out_data(fo->pbuf, &len);
        if (st == JFR_OK && (!body || jfrc_out_failed(fo->pbuf)))
            st = JFR_NOMEM;
        if (st == JFR_OK)
            st = jfrs_pyroscope_push(fo->cfg.pyroscope, fs->origin, name, body, len,
                                     start_ms / 1000, end_ms / 1000);
        if (st != JFR_OK && st != JFR_INVALID_STATE)
            say(fs, "pyroscope %s: window not pushed: %s", sl->kind->name, jfr_status_str(st));
        jfrc_profile_reset(sl->prof);
    }
}

void jfrs_fanout_window(jfrs_fanout *fo, int64_t now_ms) {
    if (!fo || !fo->cfg.pyroscope)
        return;
    for (jfrs_fanout_src *fs = fo->head; fs; fs = fs->next)
        push_window(fs, fo->win_start_ms, now_ms);
    fo->win_start_ms = now_ms;
}

void jfrs_fanout_free(jfrs_fanout *fo) {
    if (!fo)
        return;
    while (fo->head)
        jfrs_fanout_src_end(fo->head);
    for (size_t k = 0; k < MAX_KINDS; k++)
        jfrc_profile_free(fo->tmpl[k]);
    jfrc_out_free(fo->pbuf);
    jfr_allocator a = fo->a;
    jfr__free(&a, fo, sizeof *fo);
}

/* A source's Pyroscope state (slots, names), freed. */
static void free_pyro(jfrs_fanout_src *fs) {
    jfrs_fanout *fo = fs->fo;
    if (fs->slots) {
        for (size_t k = 0; k < fo->nkinds; k++)
            jfrc_profile_free(fs->slots[k].prof);
        jfr__free(&fo->a, fs->slots, fo->nkinds * sizeof *fs->slots);
        fs->slots = NULL;
    }
    if (fs->origin)
        jfr__free(&fo->a, fs->origin, strlen(fs->origin) + 1);
    fs->origin = NULL;
    free(fs->pname); /* jfrs_pyroscope_name's: malloc'ed */
    fs->pname = NULL;
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
    const char *origin = jfrs_source_value(src, 1); /* the labels: source, origin, ... */
    if (c->pyroscope &&
        (!(fs->slots = jfr__calloc(&fo->a, fo->nkinds * sizeof *fs->slots)) ||
         !(fs->origin = jfr__strdup(&fo->a, origin ? origin : "")))) {
        free_pyro(fs);
        jfr__free(&fo->a, fs, sizeof *fs);
        return JFR_NOMEM;
    }
    for (size_t k = 0; fs->slots && k < fo->nkinds; k++) {
        fs->slots[k].fs = fs;
        fs->slots[k].kind = fo->kinds[k];
    }
    if ((c->json && !(fs->ej = jfrc_json_new_advanced(c->json, c->json_stack_depth, true,
                                                       &fo->a))) ||
        (c->kafka && !(fs->ks = jfrs_kafka_src_new(c->kafka, src)))) {
        jfrc_json_free(fs->ej);
        free_pyro(fs);
        jfr__free(&fo->a, fs, sizeof *fs);
        return JFR_NOMEM;
    }
    if (c->views && jfrs_views_src_new(c->views, src, &fs->vs) != JFR_OK) {
        jfrc_json_free(fs->ej);
        if (fs->ks)
            jfrs_kafka_src_free(fs->ks);
        free_pyro(fs);
        jfr__free(&fo->a, fs, sizeof *fs);
        return JFR_NOMEM;
    }
    fs->id = ++fo->nsrc;
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

uint64_t jfrs_fanout_src_id(const jfrs_fanout_src *fs) {
    return fs ? fs->id : 0;
}

/* A Pyroscope kind's event: into its slot's profile (made at the first). */
static int on_kind_event(jfr_parser *p, const jfr_event *e, void *user) {
    (void)p;
    slot *sl = user;
    if (!sl->prof) {
        sl->prof = jfrc_profile_new_advanced(&sl->fs->fo->a);
        if (!sl->prof || jfrc_profile_select(sl->prof, sl->kind->select) != JFR_OK) {
            jfrc_profile_free(sl->prof);
            sl->prof = NULL;
            say(sl->fs, "pyroscope: out of memory");
            return JFR_CB_CONTINUE;
        }
    }
    jfrc_profile_add(sl->prof, e, 0);
    return JFR_CB_CONTINUE;
}

/* jdk.ActiveSetting: the sampling periods of the kinds that have one. */
static int on_setting(jfr_parser *p, const jfr_event *e, void *user) {
    jfrs_fanout_src *fs = user;
    jfrs_fanout *fo = fs->fo;
    for (size_t k = 0; k < fo->nkinds; k++) {
        if (!fo->kinds[k]->period_event)
            continue;
        int64_t v = jfrc_setting_period(p, e, fo->kinds[k]->period_event);
        if (v > 0)
            fs->slots[k].period = v;
    }
    return JFR_CB_CONTINUE;
}

/* The application's profile: every event of its types, keyed by the id. */
static int on_profile_event(jfr_parser *p, const jfr_event *e, void *user) {
    (void)p;
    jfrs_fanout_src *fs = user;
    jfrc_profile_add(fs->fo->cfg.profile, e, fs->id);
    return JFR_CB_CONTINUE;
}

jfr_status jfrs_fanout_src_subscribe(jfrs_fanout_src *fs, jfr_parser *p) {
    if (!fs || !p)
        return JFR_INVALID_ARG;
    jfrs_fanout *fo = fs->fo;
    fs->p = p;
    bool periods = false;
    for (size_t k = 0; fs->slots && k < fo->nkinds; k++) {
        periods = periods || fo->kinds[k]->period_event;
        for (size_t i = 0; i < jfrc_profile_ntypes(fo->tmpl[k]); i++) {
            jfr_status st = jfr_parser_on(p, jfrc_profile_type(fo->tmpl[k], i), on_kind_event,
                                          &fs->slots[k]);
            if (st)
                return st;
        }
    }
    if (periods) {
        jfr_status st = jfr_parser_on(p, "jdk.ActiveSetting", on_setting, fs);
        if (st)
            return st;
    }
    jfr_status st = fs->ms ? jfrs_metrics_src_subscribe(fs->ms, p) : JFR_OK;
    jfrc_profile *pr = fo->cfg.profile;
    for (size_t i = 0; st == JFR_OK && pr && i < jfrc_profile_ntypes(pr); i++)
        st = jfr_parser_on(p, jfrc_profile_type(pr, i), on_profile_event, fs);
    return st;
}

void jfrs_fanout_src_chunk_begin(jfrs_fanout_src *fs, const jfr_chunk_info *c) {
    if (!fs || !c)
        return;
    if (fs->fo->cfg.profile)
        jfrc_profile_chunk_begin(fs->fo->cfg.profile, c);
    for (size_t k = 0; fs->slots && k < fs->fo->nkinds; k++)
        if (fs->slots[k].prof)
            jfrc_profile_chunk_begin(fs->slots[k].prof, c);
    if (fs->ej)
        jfrc_json_chunk_begin(fs->ej, c);
    if (fs->ks)
        jfrs_kafka_src_chunk_begin(fs->ks, c);
    jfrs_metrics_src_chunk_begin(fs->ms, c);
    jfrs_views_src_chunk_begin(fs->vs, fs->p, c);
}

void jfrs_fanout_src_metadata(jfrs_fanout_src *fs, const jfr_metadata *m) {
    if (!fs || !m)
        return;
    if (fs->ej)
        jfrc_json_metadata(fs->ej, m);
    if (fs->ks)
        jfrs_kafka_src_metadata(fs->ks, m);
    jfrs_metrics_src_metadata(fs->ms, m);
    jfrs_views_src_metadata(fs->vs, m);
}

void jfrs_fanout_src_record(jfrs_fanout_src *fs, const jfr_record *r) {
    if (!fs || !r)
        return;
    jfrs_metrics_src_record(fs->ms, r);
    jfrs_views_src_record(fs->vs, fs->p, r);
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
    if (!fs)
        return;
    if (fs->fo->cfg.profile)
        jfrc_profile_chunk_end(fs->fo->cfg.profile);
    for (size_t k = 0; fs->slots && k < fs->fo->nkinds; k++)
        if (fs->slots[k].prof)
            jfrc_profile_chunk_end(fs->slots[k].prof);
    jfrs_metrics_src_chunk_end(fs->ms);
    jfrs_views_src_chunk_end(fs->vs, fs->p);
}

void jfrs_fanout_src_error(jfrs_fanout_src *fs, jfr_status st) {
    if (fs)
        jfrs_metrics_src_error(fs->ms, st);
}

void jfrs_fanout_src_mark(jfrs_fanout_src *fs, uint64_t pos) {
    if (!fs || pos <= fs->marked)
        return;
    fs->marked = pos;
    jfrs_kafka_src_mark(fs->ks, pos);
}

jfr_status jfrs_fanout_src_delivered(jfrs_fanout_src *fs, uint64_t *pos, const char **message) {
    if (message)
        *message = NULL;
    if (pos)
        *pos = 0;
    if (!fs)
        return JFR_INVALID_ARG;
    if (!fs->ks) {
        if (pos)
            *pos = fs->marked;
        return JFR_OK;
    }
    jfr_status st = jfrs_kafka_src_delivered(fs->ks, pos);
    if (st != JFR_OK && message) {
        jfrs_kafka_src_stats(fs->ks, &fs->kst);
        *message = fs->kst.last_error[0] ? fs->kst.last_error : "a message was not delivered";
    }
    return st;
}

void jfrs_fanout_src_end(jfrs_fanout_src *fs) {
    if (!fs)
        return;
    jfrs_fanout *fo = fs->fo;
    if (fs->slots) { /* its partial window */
        push_window(fs, fo->win_start_ms, jfrs_fanout_now_ms());
        jfrs_pyroscope_end_source(fo->cfg.pyroscope, fs->origin);
    }
    free_pyro(fs);
    if (fs->ks) {
        jfrs_kafka_src_end(fs->ks);  /* held events go now */
        jfrs_kafka_src_free(fs->ks); /* its messages stay with the producer */
    }
    jfrs_metrics_src_end(fs->ms);
    jfrs_views_src_end(fs->vs); /* its copy stays for the window */
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
