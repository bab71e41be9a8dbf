/*
 * metrics_registry.c — the metrics registry (jfrstream_sink.h, "metrics"):
 * its sources from jfrs_metrics_src_new to the end of their TTL, the
 * take-over of an ended source's series by a JVM that comes back, and the
 * application's own series (jfrs_metrics_set).
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#include "metrics.h"

#include "../sized.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void jfrs_metrics_config_init(jfrs_metrics_config *cfg) {
    if (cfg)
        *cfg = (jfrs_metrics_config){.size = sizeof *cfg};
}

jfr_status jfrs_metrics_new(const jfrs_metrics_config *cfg, jfrs_metrics **out) {
    if (!out)
        return JFR_INVALID_ARG;
    *out = NULL;
    jfrs_metrics_config c;
    if (!cfg || !jfr__sized_copy(&c, sizeof c, cfg))
        return JFR_INVALID_ARG;
    jfr_allocator a = jfrs_allocator(c.allocator);
    jfrs_metrics *m = jfr__calloc(&a, sizeof *m);
    if (!m)
        return JFR_NOMEM;
    m->a = a;
    m->cfg = c;
    m->cfg.allocator = NULL; /* the caller's: borrowed for the call only */
    if (!(m->out = jfrc_out_new_memory_advanced(1 << 14, &a))) {
        jfr__free(&a, m, sizeof *m);
        return JFR_NOMEM;
    }
    if (!m->cfg.ttl_ms)
        m->cfg.ttl_ms = JFRS_METRICS_DEFAULT_TTL_MS;
    if (!m->cfg.max_sources)
        m->cfg.max_sources = JFRS_METRICS_DEFAULT_MAX_SOURCES;
    if (!m->cfg.max_series)
        m->cfg.max_series = JFRS_METRICS_DEFAULT_MAX_SERIES;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    int64_t ms = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
    m->start_s = (double)ms / 1e3;
    *out = m;
    return JFR_OK;
}

static void src_free(jfrs_metrics_src *ms) {
    const jfr_allocator *a = &ms->m->a;
    for (int i = 0; i < NF; i++)
        metrics_family_free(a, &ms->fam[i]);
    metrics_str_free(a, ms->labels);
    metrics_str_free(a, ms->info);
    metrics_str_free(a, ms->id);
    jfr__free(a, ms->kind_of, ms->types_cap);
    jfr__free(a, ms->type_child, ms->types_cap * sizeof *ms->type_child);
    jfrc_out_free(ms->scratch);
    jfr__free(a, ms, sizeof *ms);
}

static void src_unlink(jfrs_metrics *m, jfrs_metrics_src *ms) {
    *(ms->prev ? &ms->prev->next : &m->head) = ms->next;
    *(ms->next ? &ms->next->prev : &m->tail) = ms->prev;
    m->nsrc--;
}

/* Drop a kept (ended) source and its series. */
static void src_drop(jfrs_metrics *m, jfrs_metrics_src *ms) {
    m->series -= ms->nseries < m->series ? ms->nseries : m->series;
    src_unlink(m, ms);
    src_free(ms);
}

void jfrs_metrics_free(jfrs_metrics *m) {
    if (!m)
        return;
    while (m->head) {
        jfrs_metrics_src *ms = m->head;
        src_unlink(m, ms);
        src_free(ms);
    }
    while (m->untracked) { /* not ended: the caller's mistake, but no leak */
        jfrs_metrics_src *ms = m->untracked;
        m->untracked = ms->next;
        src_free(ms);
    }
    for (size_t i = 0; i < m->nsets; i++) {
        set_family *sf = &m->sets[i];
        for (size_t k = 0; k < sf->n; k++)
            metrics_str_free(&m->a, sf->s[k].labels);
        jfr__free(&m->a, sf->s, sf->cap * sizeof *sf->s);
        metrics_str_free(&m->a, sf->name);
        metrics_str_free(&m->a, sf->type);
        metrics_str_free(&m->a, sf->help);
    }
    jfrc_out_free(m->out);
    jfr_allocator a = m->a;
    jfr__free(&a, m, sizeof *m);
}

void jfrs_metrics_expire(jfrs_metrics *m) {
    if (!m)
        return;
    uint64_t now = jfrs_mono_ms();
    for (jfrs_metrics_src *ms = m->head, *next; ms; ms = next) {
        next = ms->next;
        if (ms->ended && now - ms->ended_ms >= m->cfg.ttl_ms) {
            src_drop(m, ms);
            m->expired++;
        }
    }
}

uint64_t jfrs_metrics_nsources(const jfrs_metrics *m) { return m ? m->nsrc : 0; }
uint64_t jfrs_metrics_nseries(const jfrs_metrics *m) { return m ? m->series : 0; }

jfr_status jfrs_metrics_src_new(jfrs_metrics *m, jfrs_source *src, jfrs_metrics_src **out) {
    if (!out)
        return JFR_INVALID_ARG;
    *out = NULL;
    if (!m || !src)
        return JFR_INVALID_ARG;
    jfrs_metrics_expire(m);
    jfrs_metrics_src *ms = jfr__calloc(&m->a, sizeof *ms);
    if (!ms)
        return JFR_NOMEM;
    if (!(ms->scratch = jfrc_out_new_memory_advanced(256, &m->a))) {
        jfr__free(&m->a, ms, sizeof *ms);
        return JFR_NOMEM;
    }
    ms->m = m;
    ms->src = src;
    ms->fam[F_GC].hist = true;
    m->open++;
    m->total++;
    *out = ms;
    if (m->nsrc >= m->cfg.max_sources) {
        /* make room: the ended source that ended first */
        jfrs_metrics_src *old = NULL;
        for (jfrs_metrics_src *o = m->head; o; o = o->next)
            if (o->ended && (!old || o->ended_ms < old->ended_ms))
                old = o;
        if (!old) {
            m->refused_sources++;
            goto untracked;
        }
        src_drop(m, old);
        m->evicted++;
    }
    if (!metrics_take_series(ms, BASE_SERIES)) {
        m->refused_series++;
        goto untracked;
    }
    ms->prev = m->tail;
    *(m->tail ? &m->tail->next : &m->head) = ms;
    m->tail = ms;
    m->nsrc++;
    return JFR_OK;
untracked:
    ms->untracked = true;
    ms->next = m->untracked;
    if (m->untracked)
        m->untracked->prev = ms;
    m->untracked = ms;
    return JFR_LIMIT;
}

static bool series_label(const jfrs_source *s, size_t i) {
    static const char *const verbose[] = {"pid", "jvm_name", "jvm_version", "main_class",
                                          "jvm_start"};
    const char *k = jfrs_source_key(s, i);
    if (i == 1) /* the origin (peer, path) */
        return false;
    for (size_t j = 0; j < sizeof verbose / sizeof *verbose; j++)
        if (strcmp(k, verbose[j]) == 0)
            return false;
    return true;
}

/* (Re)make the label strings from the source; false on no memory. */
static bool make_labels(jfrs_metrics_src *ms) {
    const jfrs_source *s = ms->src;
    const jfr_allocator *al = &ms->m->a;
    char *made[2] = {NULL, NULL}; /* the series' labels, all of them (info) */
    for (int all = 0; all < 2; all++) {
        jfrc_out *o = metrics_scratch(ms);
        bool first = true;
        size_t n = jfrs_source_nlabels(s);
        for (size_t i = 0; i < n; i++) {
            const char *k = jfrs_source_key(s, i);
            if (k[0] == '_' && k[1] == '_') /* names starting with __ are Prometheus's own */
                continue;
            if (all || series_label(s, i))
                metrics_put_label(o, &first, k, jfrs_source_value(s, i));
        }
        if (ms->stream >= 2) {
            char t[16];
            snprintf(t, sizeof t, "%u", ms->stream);
            metrics_put_label(o, &first, "stream", t);
        }
        size_t len = 0;
        const char *d = jfrs_out_cstr(o, &len);
        if (!d || !(made[all] = jfr__strndup(al, d, len))) {
            metrics_str_free(al, made[0]);
            return false;
        }
    }
    metrics_str_free(al, ms->labels);
    metrics_str_free(al, ms->info);
    ms->labels = made[0];
    ms->info = made[1];
    metrics_str_free(al, ms->id);
    ms->id = jfr__strdup(al, jfrs_source_id(s)); /* NULL (no memory): no take-over */
    ms->gen = jfrs_source_generation(s);
    return true;
}

static void merge_family(jfrs_metrics_src *to, family *tf, const family *from) {
    for (size_t i = 0; i < from->n; i++) {
        const child *c = &from->v[i];
        if (!c->counted)
            continue;
        uint32_t k = metrics_family_get(&to->m->a, tf, c->labels, strlen(c->labels));
        if (k >= tf->n || !metrics_child_live(to, tf, &tf->v[k]))
            continue;
        child *d = &tf->v[k];
        d->count += c->count;
        d->sum += c->sum;
        for (size_t b = 0; b < NB; b++)
            d->bucket[b] += c->bucket[b];
    }
}

/* `to` (open) takes over the series of `from` (ended, same id). */
static void merge(jfrs_metrics_src *to, jfrs_metrics_src *from) {
    static const int sums[] = {V_ALLOC_SAMPLE, V_ALLOC_TLAB, V_ALLOC_OUTSIDE, V_MONITOR_N,
                               V_MONITOR_S,    V_SAFEPOINT_N, V_SAFEPOINT_S};
    static const struct {
        int g, lo, hi;
    } lasts[] = {{G_CPU, V_CPU_JVM, V_CPU_MACHINE},       {G_HEAP, V_HEAP_USED, V_HEAP_LIMIT},
                 {G_AFTER, V_HEAP_AFTER_GC, V_HEAP_AFTER_GC}, {G_META, V_META_USED, V_CLASS_COMMITTED},
                 {G_THREADS, V_THREADS_DAEMON, V_THREADS_OTHER},
                 {G_CLASSES, V_CLASS_COUNT, V_CLASS_UNLOADED}, {G_EXC, V_EXC, V_EXC}};
    for (size_t i = 0; i < sizeof sums / sizeof *sums; i++)
        if (from->has[sums[i]])
            metrics_add_v(to, sums[i], from->v[sums[i]]);
    for (size_t i = 0; i < sizeof lasts / sizeof *lasts; i++) {
        int g = lasts[i].g;
        if (!from->tset[g] || (to->tset[g] && to->t[g] >= from->t[g]))
            continue;
        to->t[g] = from->t[g];
        to->tset[g] = true;
        for (int v = lasts[i].lo; v <= lasts[i].hi; v++)
            if (from->has[v])
                metrics_set_v(to, v, from->v[v]);
    }
    to->bytes_base += from->bytes_base;
    to->chunks += from->chunks;
    if (from->has_last && !to->has_last && !to->last_refused)
        to->has_last = metrics_take_series(to, 1);
    if (from->last_event_s > to->last_event_s)
        to->last_event_s = from->last_event_s;
    for (int f = 0; f < NF; f++)
        merge_family(to, &to->fam[f], &from->fam[f]);
}

/* An open source's labels follow its jfrs_source; when it has become a JVM
 * seen before, it takes over that one's series. */
void metrics_relabel(jfrs_metrics *m, jfrs_metrics_src *ms) {
    if (ms->ended || (ms->labels && jfrs_source_generation(ms->src) == ms->gen))
        return;
    const char *id = jfrs_source_id(ms->src);
    /* Another open source of this id: the streams are told apart by a
     * stream label, 2, 3, ..., unique among them whichever took its id
     * first (two streams' ids can arrive in either order). */
    bool open_same = false, taken = false;
    unsigned top = 1;
    for (jfrs_metrics_src *o = m->head, *next; o; o = next) {
        next = o->next;
        if (o == ms || !o->id || strcmp(o->id, id) != 0)
            continue;
        if (o->ended) {
            merge(ms, o);
            src_drop(m, o);
            continue;
        }
        open_same = true;
        taken |= o->stream == ms->stream;
        if (o->stream > top)
            top = o->stream;
    }
    if (!open_same)
        ms->stream = 0;
    else if (taken)
        ms->stream = top + 1;
    make_labels(ms);
}

void jfrs_metrics_src_end(jfrs_metrics_src *ms) {
    if (!ms || ms->ended)
        return;
    jfrs_metrics *m = ms->m;
    if (ms->untracked) {
        m->bytes_ended += ms->parser ? jfr_parser_bytes(ms->parser) : 0;
        m->open--;
        *(ms->prev ? &ms->prev->next : &m->untracked) = ms->next;
        if (ms->next)
            ms->next->prev = ms->prev;
        src_free(ms);
        return;
    }
    metrics_relabel(m, ms);
    uint64_t bytes = ms->parser ? jfr_parser_bytes(ms->parser) : 0;
    ms->bytes_base += bytes;
    m->bytes_ended += bytes;
    ms->parser = NULL;
    ms->src = NULL;
    ms->md = NULL;
    ms->ntypes = 0;
    ms->ended = true;
    ms->ended_ms = jfrs_mono_ms();
    m->open--;
    if (!ms->labels) { /* no memory for them: nothing to show */
        src_drop(m, ms);
        return;
    }
}

jfr_status jfrs_metrics_set(jfrs_metrics *m, const char *name, const char *type,
                            const char *help, const char *labels, double value) {
    if (!m || !name || !*name || !type || !help ||
        (strcmp(type, "counter") != 0 && strcmp(type, "gauge") != 0))
        return JFR_INVALID_ARG;
    if (!labels)
        labels = "";
    set_family *sf = NULL;
    for (size_t i = 0; i < m->nsets && !sf; i++)
        if (strcmp(m->sets[i].name, name) == 0)
            sf = &m->sets[i];
    if (!sf) {
        if (m->nsets == MAX_SETS)
            return JFR_LIMIT;
        sf = &m->sets[m->nsets];
        *sf = (set_family){jfr__strdup(&m->a, name), jfr__strdup(&m->a, type),
                           jfr__strdup(&m->a, help), NULL, 0, 0};
        if (!sf->name || !sf->type || !sf->help) {
            metrics_str_free(&m->a, sf->name);
            metrics_str_free(&m->a, sf->type);
            metrics_str_free(&m->a, sf->help);
            return JFR_NOMEM;
        }
        m->nsets++;
    }
    for (size_t i = 0; i < sf->n; i++)
        if (strcmp(sf->s[i].labels, labels) == 0) {
            sf->s[i].value = value;
            return JFR_OK;
        }
    if (sf->n == MAX_CHILDREN)
        return JFR_LIMIT;
    char *l;
    if (!jfr__array_reserve(&m->a, (void **)&sf->s, sf->n, &sf->cap, sizeof *sf->s, 4) ||
        !(l = jfr__strdup(&m->a, labels)))
        return JFR_NOMEM;
    sf->s[sf->n++] = (set_series){l, value};
    return JFR_OK;
}

