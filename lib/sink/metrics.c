/*
 * metrics.c — per-source metrics from JFR events, and their Prometheus text
 * exposition (jfrstream_sink.h, "metrics").
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#include "jfrstream_sink.h"
#include "sink.h"
#include "../sized.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ------------------------------------------------------------ tables */

#define NB 14 /* histogram buckets, +Inf apart */
static const double bucket_le[NB] = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
                                     0.1,    0.25,  0.5,    1,     2.5,  5,    10};
static const char *const bucket_str[NB] = {"0.0005", "0.001", "0.0025", "0.005", "0.01",
                                           "0.025",  "0.05",  "0.1",    "0.25",  "0.5",
                                           "1",      "2.5",   "5",      "10"};
#define HIST_SERIES (NB + 3) /* buckets, +Inf, _sum, _count */
#define MAX_CHILDREN 256     /* label sets per family and source */
#define MAX_SETS 256         /* jfrs_metrics_set names */
#define NCACHE 16            /* pooled key -> child, per chunk */

/* The event types read, each with its JDK 9/10 name. */
enum kind {
    K_NONE,
    K_GC,
    K_CPU,
    K_HEAP,
    K_META,
    K_THREADS,
    K_CLASSES,
    K_ALLOC_SAMPLE,
    K_ALLOC_TLAB,
    K_ALLOC_OUTSIDE,
    K_MONITOR,
    K_SAFEPOINT,
    K_VMOP,
    K_EXC,
    K_N
};
static const char *const kind_name[K_N] = {
    NULL,
    "GarbageCollection",
    "CPULoad",
    "GCHeapSummary",
    "MetaspaceSummary",
    "JavaThreadStatistics",
    "ClassLoadingStatistics",
    "ObjectAllocationSample",
    "ObjectAllocationInNewTLAB",
    "ObjectAllocationOutsideTLAB",
    "JavaMonitorEnter",
    "SafepointBegin",
    "ExecuteVMOperation",
    "ExceptionStatistics",
};
/* The fields each reads (by index, resolved per metadata), and for struct
 * fields the two members read inside. */
static const char *const kind_fields[K_N][3] = {
    [K_GC] = {"name"},
    [K_CPU] = {"jvmUser", "jvmSystem", "machineTotal"},
    [K_HEAP] = {"when", "heapSpace", "heapUsed"},
    [K_META] = {"metaspace", "classSpace"},
    [K_THREADS] = {"activeCount", "daemonCount"},
    [K_CLASSES] = {"loadedClassCount", "unloadedClassCount"},
    [K_ALLOC_SAMPLE] = {"weight"},
    [K_ALLOC_TLAB] = {"tlabSize"},
    [K_ALLOC_OUTSIDE] = {"allocationSize"},
    [K_VMOP] = {"operation", "safepoint"},
    [K_EXC] = {"throwables"},
};

/* A source's fixed series (values), and the groups whose value is that of
 * the event with the latest start time. */
enum val {
    V_CPU_JVM,
    V_CPU_MACHINE,
    V_HEAP_USED,
    V_HEAP_COMMITTED,
    V_HEAP_LIMIT,
    V_HEAP_AFTER_GC,
    V_META_USED,
    V_META_COMMITTED,
    V_CLASS_USED,
    V_CLASS_COMMITTED,
    V_THREADS_DAEMON,
    V_THREADS_OTHER,
    V_CLASS_COUNT,
    V_CLASS_LOADED,
    V_CLASS_UNLOADED,
    V_ALLOC_SAMPLE,
    V_ALLOC_TLAB,
    V_ALLOC_OUTSIDE,
    V_MONITOR_N,
    V_MONITOR_S,
    V_SAFEPOINT_N,
    V_SAFEPOINT_S,
    V_EXC,
    NV
};
enum group { G_CPU, G_HEAP, G_AFTER, G_META, G_THREADS, G_CLASSES, G_EXC, NG };
/* bytes, chunks, connected, info: a source's series from its start (its
 * last event time comes with its first event, the values with theirs) */
#define BASE_SERIES 4

/* ------------------------------------------------------------ types */

/* One label set of a family with labels of its own. */
typedef struct child {
    char *labels; /* as written between the braces: type="jdk.CPULoad" */
    uint64_t count;
    double sum;
    uint64_t bucket[NB]; /* histograms: observations per bucket (not cumulative) */
    bool counted;        /* its series are in the registry's total */
    bool refused;        /* over max_series */
} child;

typedef struct family {
    child *v;
    size_t n, cap;
    bool hist;
} family;

typedef struct keycache {
    uint64_t key;
    uint32_t val; /* child index + 1, or a flag + 1; 0: empty */
} keycache;

enum fam { F_TYPES, F_GC, F_VMOP, F_ERRORS, NF };

struct jfrs_metrics_src {
    jfrs_metrics *m;
    struct jfrs_metrics_src *next, *prev;
    jfrs_source *src; /* borrowed until end */
    jfr_parser *parser;
    uint64_t gen;       /* of src when the labels were made */
    char *labels;       /* source="...",service="...",user labels[,stream="N"] */
    char *info;         /* all the source's labels */
    char *id;           /* its source id */
    unsigned stream;    /* >= 2: another open source has the same id */
    uint64_t seq;       /* creation order */
    bool ended;
    uint64_t ended_ms;
    uint64_t bytes_base; /* bytes of a source taken over, and at the end */
    uint64_t chunks;
    double last_event_s; /* 0: none yet */
    /* per metadata: kind per type index, child of F_TYPES per type index */
    const jfr_metadata *md;
    uint8_t *kind_of;
    uint32_t *type_child;
    size_t ntypes;
    int32_t f[K_N][3];
    int32_t sub[K_N][2]; /* members of struct fields (heapSpace, metaspace...) */
    /* values */
    double v[NV];
    bool has[NV];
    int64_t t[NG];
    bool tset[NG];
    family fam[NF];
    keycache gc_cache[NCACHE], vm_cache[NCACHE], when_cache[NCACHE];
    jfrs_buf scratch; /* label sets being looked up (kept: no malloc per event) */
    uint64_t nseries;      /* taken from the registry */
    bool vrefused[NV];     /* a value refused over max_series (counted once) */
    bool has_last, last_refused; /* jfr_last_event_timestamp_seconds */
    /* over a limit: no series, only the reader's totals (events, bytes,
     * errors); in the list of untracked sources, freed at its end */
    bool untracked;
};

typedef struct set_series {
    char *labels;
    double value;
} set_series;

typedef struct set_family {
    char *name, *type, *help;
    set_series *s;
    size_t n, cap;
} set_family;

struct jfrs_metrics {
    jfrs_metrics_config cfg;
    jfrs_metrics_src *head, *tail;
    jfrs_metrics_src *untracked; /* refused sources still open (their bytes) */
    uint64_t nsrc, open, total, seq;
    uint64_t series;
    uint64_t refused_sources, refused_series, expired, evicted;
    uint64_t events, bytes_ended;
    uint64_t errors[32];
    double start_s;
    set_family sets[MAX_SETS];
    size_t nsets;
    jfrs_buf out;
};

/* ------------------------------------------------------------ helpers */

static double wall_s(void) {
    struct timespec ts;
#ifdef CLOCK_REALTIME_COARSE
    clock_gettime(CLOCK_REALTIME_COARSE, &ts); /* per record: the cheap clock */
#else
    clock_gettime(CLOCK_REALTIME, &ts);
#endif
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Length of the valid UTF-8 sequence at s[0..n), 0 if invalid. */
static size_t utf8_len(const unsigned char *s, size_t n) {
    unsigned c = s[0];
    size_t k = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (!k || k > n || (k == 2 && c < 0xc2) || (k == 4 && c > 0xf4))
        return 0;
    for (size_t i = 1; i < k; i++)
        if ((s[i] & 0xc0) != 0x80)
            return 0;
    if (k == 3 && ((c == 0xe0 && s[1] < 0xa0) || (c == 0xed && s[1] >= 0xa0)))
        return 0; /* overlong; a surrogate (WTF-8) */
    if (k == 4 && ((c == 0xf0 && s[1] < 0x90) || (c == 0xf4 && s[1] >= 0x90)))
        return 0;
    return k;
}

/* A label value as the text format wants it: \\, \" and \n escaped, and
 * valid UTF-8 (anything else becomes U+FFFD). */
static void put_label_value(jfrs_buf *b, const char *s, size_t n) {
    jfrs_buf_putc(b, '"');
    const unsigned char *u = (const unsigned char *)s;
    size_t i = 0;
    while (i < n) {
        size_t run = i;
        size_t k;
        while (i < n && u[i] != '\\' && u[i] != '"' && u[i] != '\n' &&
               (k = utf8_len(u + i, n - i)) != 0)
            i += k;
        jfrs_buf_write(b, s + run, i - run);
        if (i == n)
            break;
        if (u[i] == '\\')
            jfrs_buf_puts(b, "\\\\");
        else if (u[i] == '"')
            jfrs_buf_puts(b, "\\\"");
        else if (u[i] == '\n')
            jfrs_buf_puts(b, "\\n");
        else
            jfrs_buf_puts(b, "\xef\xbf\xbd");
        i++;
    }
    jfrs_buf_putc(b, '"');
}

static void put_label(jfrs_buf *b, bool *first, const char *key, const char *value) {
    if (!*first)
        jfrs_buf_putc(b, ',');
    *first = false;
    jfrs_buf_puts(b, key);
    jfrs_buf_putc(b, '=');
    put_label_value(b, value, strlen(value));
}

/* Most samples are counts: written without printf. */
static void put_u64(jfrs_buf *b, uint64_t v) {
    char t[24];
    size_t i = sizeof t;
    do {
        t[--i] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    jfrs_buf_write(b, t + i, sizeof t - i);
}

static void put_num(jfrs_buf *b, double v) {
    char t[40];
    if (isnan(v))
        jfrs_buf_puts(b, "NaN");
    else if (isinf(v))
        jfrs_buf_puts(b, v > 0 ? "+Inf" : "-Inf");
    else if (v == floor(v) && fabs(v) < 9007199254740992.0) {
        if (v < 0)
            jfrs_buf_putc(b, '-');
        put_u64(b, (uint64_t)fabs(v));
    }
    else
        jfrs_buf_write(b, t, (size_t)snprintf(t, sizeof t, "%.17g", v));
}

static bool take_series(jfrs_metrics_src *ms, uint64_t n) {
    jfrs_metrics *m = ms->m;
    if (m->series + n > m->cfg.max_series)
        return false;
    m->series += n;
    ms->nseries += n;
    return true;
}

/* May value i be set? Takes its series the first time. */
static bool value_live(jfrs_metrics_src *ms, int i) {
    if (ms->has[i])
        return true;
    if (ms->vrefused[i])
        return false;
    if (take_series(ms, 1))
        return true;
    ms->vrefused[i] = true;
    ms->m->refused_series++;
    return false;
}

/* ------------------------------------------------------------ families */

static void family_free(family *f) {
    for (size_t i = 0; i < f->n; i++)
        free(f->v[i].labels);
    free(f->v);
    *f = (family){.hist = f->hist};
}

/* The child with these labels; created (not yet counted) when absent.
 * UINT32_MAX when out of memory or over MAX_CHILDREN. */
static uint32_t family_get(family *f, const char *labels, size_t len) {
    for (size_t i = 0; i < f->n; i++)
        if (strncmp(f->v[i].labels, labels, len) == 0 && f->v[i].labels[len] == '\0')
            return (uint32_t)i;
    if (f->n == MAX_CHILDREN)
        return UINT32_MAX;
    char *l;
    if (!jfrs_array_reserve((void **)&f->v, f->n, &f->cap, sizeof *f->v, 8) ||
        !(l = jfrs_strndup(labels, len)))
        return UINT32_MAX;
    f->v[f->n] = (child){.labels = l};
    return (uint32_t)f->n++;
}

/* May this child be updated? Takes its series the first time. */
static bool child_live(jfrs_metrics_src *ms, family *f, child *c) {
    if (c->counted)
        return true;
    if (c->refused)
        return false;
    if (take_series(ms, f->hist ? HIST_SERIES : 1))
        return c->counted = true;
    c->refused = true;
    ms->m->refused_series++;
    return false;
}

static void child_observe(jfrs_metrics_src *ms, family *f, uint32_t i, double x) {
    if (i >= f->n)
        return;
    child *c = &f->v[i];
    if (!child_live(ms, f, c))
        return;
    c->count++;
    c->sum += x;
    if (f->hist)
        for (size_t k = 0; k < NB; k++)
            if (x <= bucket_le[k]) {
                c->bucket[k]++;
                break;
            }
}

/* The source's scratch buffer, emptied, for a label set to look up. */
static jfrs_buf *scratch(jfrs_metrics_src *ms) {
    jfrs_buf_reset(&ms->scratch);
    ms->scratch.failed = false;
    return &ms->scratch;
}

/* Child index for the label set built in the scratch buffer. */
static uint32_t scratch_child(jfrs_metrics_src *ms, family *f) {
    jfrs_buf *b = &ms->scratch;
    if (b->failed)
        return UINT32_MAX;
    return family_get(f, b->data ? b->data : "", b->len);
}

/* ------------------------------------------------------------ registry */

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
    jfrs_metrics *m = calloc(1, sizeof *m);
    if (!m)
        return JFR_NOMEM;
    m->cfg = c;
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
    for (int i = 0; i < NF; i++)
        family_free(&ms->fam[i]);
    free(ms->labels);
    free(ms->info);
    free(ms->id);
    free(ms->kind_of);
    free(ms->type_child);
    jfrs_buf_free(&ms->scratch);
    free(ms);
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
            free(sf->s[k].labels);
        free(sf->s);
        free(sf->name);
        free(sf->type);
        free(sf->help);
    }
    jfrs_buf_free(&m->out);
    free(m);
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

/* ------------------------------------------------------------ sources */

jfr_status jfrs_metrics_src_new(jfrs_metrics *m, jfrs_source *src, jfrs_metrics_src **out) {
    if (!out)
        return JFR_INVALID_ARG;
    *out = NULL;
    if (!m || !src)
        return JFR_INVALID_ARG;
    jfrs_metrics_expire(m);
    jfrs_metrics_src *ms = calloc(1, sizeof *ms);
    if (!ms)
        return JFR_NOMEM;
    ms->m = m;
    ms->src = src;
    ms->seq = ++m->seq;
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
    if (!take_series(ms, BASE_SERIES)) {
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

static int on_metric_event(jfr_parser *p, const jfr_event *e, void *user) {
    (void)p;
    jfrs_metrics_src_event(user, e);
    return JFR_CB_CONTINUE;
}

jfr_status jfrs_metrics_src_subscribe(jfrs_metrics_src *ms, jfr_parser *p) {
    if (!ms)
        return JFR_OK;
    if (!p)
        return JFR_INVALID_ARG;
    ms->parser = p;
    if (ms->untracked)
        return JFR_OK; /* its bytes only */
    for (int k = 1; k < K_N; k++) {
        char name[64];
        snprintf(name, sizeof name, "jdk.%s", kind_name[k]);
        jfr_status st = jfr_parser_on(p, name, on_metric_event, ms);
        if (st == JFR_OK && k != K_ALLOC_SAMPLE) { /* JDK 9/10 */
            snprintf(name, sizeof name, "com.oracle.jdk.%s", kind_name[k]);
            st = jfr_parser_on(p, name, on_metric_event, ms);
        }
        if (st)
            return st;
    }
    return JFR_OK;
}

void jfrs_metrics_src_chunk_begin(jfrs_metrics_src *ms, const jfr_chunk_info *c) {
    (void)c;
    if (!ms)
        return;
    /* pool keys are per chunk */
    memset(ms->gc_cache, 0, sizeof ms->gc_cache);
    memset(ms->vm_cache, 0, sizeof ms->vm_cache);
    memset(ms->when_cache, 0, sizeof ms->when_cache);
}

static const jfr_type *kind_type(const jfr_metadata *md, int k) {
    char name[64];
    snprintf(name, sizeof name, "jdk.%s", kind_name[k]);
    const jfr_type *t = jfr_metadata_type_named(md, name);
    if (!t) {
        snprintf(name, sizeof name, "com.oracle.jdk.%s", kind_name[k]);
        t = jfr_metadata_type_named(md, name);
    }
    return t;
}

/* Member index of struct field `fi` of type t. */
static int32_t member(const jfr_type *t, int32_t fi, const char *name) {
    if (fi < 0 || (uint32_t)fi >= t->nfields || !t->fields[fi].type)
        return JFR_NO_FIELD;
    return jfr_type_field_index(t->fields[fi].type, name);
}

void jfrs_metrics_src_metadata(jfrs_metrics_src *ms, const jfr_metadata *md) {
    if (!ms || !md || ms->untracked)
        return;
    if (md == ms->md && md->reused && ms->ntypes == md->ntypes)
        return;
    ms->md = NULL;
    if (md->ntypes > ms->ntypes || !ms->kind_of) {
        size_t n = md->ntypes ? md->ntypes : 1;
        uint8_t *k = realloc(ms->kind_of, n);
        if (k)
            ms->kind_of = k;
        uint32_t *c = realloc(ms->type_child, n * sizeof *c);
        if (c)
            ms->type_child = c;
        if (!k || !c) {
            ms->ntypes = 0; /* no memory: nothing counted until the next metadata */
            return;
        }
    }
    ms->ntypes = md->ntypes;
    memset(ms->kind_of, 0, ms->ntypes);
    for (uint32_t i = 0; i < md->ntypes; i++) {
        const jfr_type *t = md->types[i];
        ms->type_child[i] = UINT32_MAX;
        if (!t->is_event || t->index >= ms->ntypes)
            continue;
        jfrs_buf *b = scratch(ms);
        jfrs_buf_puts(b, "type=");
        put_label_value(b, t->name, strlen(t->name));
        ms->type_child[t->index] = scratch_child(ms, &ms->fam[F_TYPES]);
    }
    for (int k = 1; k < K_N; k++) {
        const jfr_type *t = kind_type(md, k);
        if (!t || t->index >= ms->ntypes)
            continue;
        ms->kind_of[t->index] = (uint8_t)k;
        for (int j = 0; j < 3; j++)
            ms->f[k][j] = kind_fields[k][j] ? jfr_type_field_index(t, kind_fields[k][j])
                                            : JFR_NO_FIELD;
        if (k == K_HEAP) {
            ms->sub[k][0] = member(t, ms->f[k][1], "committedSize");
            ms->sub[k][1] = member(t, ms->f[k][1], "reservedSize");
        } else if (k == K_META) {
            ms->sub[k][0] = member(t, ms->f[k][0], "used");
            ms->sub[k][1] = member(t, ms->f[k][0], "committed");
        }
    }
    ms->md = md;
}

void jfrs_metrics_src_record(jfrs_metrics_src *ms, const jfr_record *r) {
    if (!ms || !r || !r->type) /* metadata, checkpoints */
        return;
    ms->m->events++;
    if (r->type->index >= ms->ntypes) /* untracked, or no memory for the table */
        return;
    if (!ms->has_last && !ms->last_refused) {
        ms->has_last = take_series(ms, 1);
        ms->last_refused = !ms->has_last;
        ms->m->refused_series += ms->last_refused;
    }
    ms->last_event_s = wall_s();
    uint32_t c = ms->type_child[r->type->index];
    family *f = &ms->fam[F_TYPES];
    if (c >= f->n)
        return;
    child *ch = &f->v[c];
    if (!ch->counted && !child_live(ms, f, ch))
        return;
    ch->count++;
}

void jfrs_metrics_src_chunk_end(jfrs_metrics_src *ms) {
    if (ms)
        ms->chunks++;
}

void jfrs_metrics_src_error(jfrs_metrics_src *ms, jfr_status st) {
    if (!ms)
        return;
    const char *name = jfr_status_name(st);
    if ((unsigned)st < 32)
        ms->m->errors[st]++;
    if (!name || ms->untracked)
        return;
    char l[64];
    int n = snprintf(l, sizeof l, "status=\"%s\"", name);
    family *f = &ms->fam[F_ERRORS];
    child_observe(ms, f, family_get(f, l, (size_t)n), 0);
}

/* ------------------------------------------------------------ events */

/* A number field (int, float, double) of the event object; NAN when absent. */
static double num(const jfr_value *obj, int32_t fi) {
    jfr_value v;
    if (fi < 0 || jfr_value_field(obj, (uint32_t)fi, &v) != JFR_OK)
        return NAN;
    switch (v.kind) {
    case JFR_KIND_INT:
    case JFR_KIND_CHAR:
        return (double)v.i;
    case JFR_KIND_FLOAT:
    case JFR_KIND_DOUBLE:
        return v.d;
    default:
        return NAN;
    }
}

static double member_num(const jfr_value *obj, int32_t fi, int32_t mi) {
    jfr_value s;
    if (fi < 0 || mi < 0 || jfr_value_field(obj, (uint32_t)fi, &s) != JFR_OK ||
        s.kind != JFR_KIND_OBJECT)
        return NAN;
    return num(&s, mi);
}

/* A string field (simple types unwrapped); false when absent or null. */
static bool str_field(const jfr_value *obj, int32_t fi, jfr_value *out) {
    jfr_value v;
    if (fi < 0 || jfr_value_field(obj, (uint32_t)fi, &v) != JFR_OK ||
        jfr_value_unwrap(&v, out) != JFR_OK)
        return false;
    out->key = v.key; /* the reference's, for the per-chunk caches */
    out->pooled = v.pooled;
    return out->kind == JFR_KIND_STRING;
}

/* A "last" group: true when this event is not older than the kept one. */
static bool newer(jfrs_metrics_src *ms, int g, const jfr_event *e) {
    if (ms->tset[g] && e->start_nanos < ms->t[g])
        return false;
    ms->t[g] = e->start_nanos;
    ms->tset[g] = true;
    return true;
}

static void set_v(jfrs_metrics_src *ms, int i, double x) {
    if (isnan(x) || !value_live(ms, i))
        return;
    ms->v[i] = x;
    ms->has[i] = true;
}

static void add_v(jfrs_metrics_src *ms, int i, double x) {
    if (isnan(x) || !value_live(ms, i))
        return;
    ms->v[i] += x;
    ms->has[i] = true;
}

static const char *gc_action(const char *n, size_t len) {
    static const char *const minor[] = {"New", "Scavenge", "Young", "Minor"};
    static const char *const major[] = {"Old", "Full", "MarkSweep", "Major"};
    char b[128];
    snprintf(b, sizeof b, "%.*s", (int)(len < sizeof b - 1 ? len : sizeof b - 1), n);
    for (size_t i = 0; i < sizeof minor / sizeof *minor; i++)
        if (strstr(b, minor[i]))
            return "end of minor GC";
    for (size_t i = 0; i < sizeof major / sizeof *major; i++)
        if (strstr(b, major[i]))
            return "end of major GC";
    return "end of GC cycle";
}

/* A per-chunk cache of pooled keys: value + 1, or 0 when not there. */
static uint32_t cache_get(const keycache *c, uint64_t key) {
    const keycache *e = &c[key % NCACHE];
    return e->val && e->key == key ? e->val : 0;
}
static void cache_put(keycache *c, uint64_t key, uint32_t val) {
    c[key % NCACHE] = (keycache){key, val};
}

/* The child of the label set just built in the scratch buffer, remembered
 * in `cache` for `key` when the name came through a pool (UINT32_MAX: none). */
static uint32_t keyed_child(jfrs_metrics_src *ms, family *f, keycache *cache, bool pooled,
                            uint64_t key) {
    uint32_t ci = scratch_child(ms, f);
    if (pooled && ci != UINT32_MAX)
        cache_put(cache, key, ci + 1);
    return ci;
}

static void on_gc(jfrs_metrics_src *ms, const jfr_value *ev, const jfr_event *e) {
    family *f = &ms->fam[F_GC];
    jfr_value nv = {0};
    bool ok = str_field(ev, ms->f[K_GC][0], &nv);
    bool pooled = ok && nv.pooled;
    uint32_t ci = pooled ? cache_get(ms->gc_cache, nv.key) : 0;
    if (ci) {
        ci--;
    } else {
        const char *n = ok ? nv.str : "";
        size_t len = ok ? nv.len : 0;
        jfrs_buf *b = scratch(ms);
        jfrs_buf_puts(b, "jvm_gc_name=");
        put_label_value(b, n, len);
        jfrs_buf_puts(b, ",jvm_gc_action=\"");
        jfrs_buf_puts(b, gc_action(n, len));
        jfrs_buf_putc(b, '"');
        ci = keyed_child(ms, f, ms->gc_cache, pooled, nv.key);
    }
    child_observe(ms, f, ci, (double)e->duration_nanos / 1e9);
}

static void on_vmop(jfrs_metrics_src *ms, const jfr_value *ev, const jfr_event *e) {
    family *f = &ms->fam[F_VMOP];
    jfr_value ov = {0}, sv;
    bool ok = str_field(ev, ms->f[K_VMOP][0], &ov);
    bool sp = ms->f[K_VMOP][1] >= 0 &&
              jfr_value_field(ev, (uint32_t)ms->f[K_VMOP][1], &sv) == JFR_OK &&
              sv.kind == JFR_KIND_BOOLEAN && sv.b;
    bool pooled = ok && ov.pooled;
    uint64_t key = ov.key * 2 + sp;
    uint32_t ci = pooled ? cache_get(ms->vm_cache, key) : 0;
    if (ci) {
        ci--;
    } else {
        jfrs_buf *b = scratch(ms);
        jfrs_buf_puts(b, "jvm_vm_operation=");
        put_label_value(b, ok ? ov.str : "", ok ? ov.len : 0);
        jfrs_buf_puts(b, sp ? ",jvm_safepoint=\"true\"" : ",jvm_safepoint=\"false\"");
        ci = keyed_child(ms, f, ms->vm_cache, pooled, key);
    }
    child_observe(ms, f, ci, (double)e->duration_nanos / 1e9);
}

/* GCHeapSummary's `when` is "After GC"? (pooled: once per chunk and key) */
static bool after_gc(jfrs_metrics_src *ms, const jfr_value *ev) {
    jfr_value w = {0};
    bool ok = str_field(ev, ms->f[K_HEAP][0], &w);
    uint32_t c = w.pooled ? cache_get(ms->when_cache, w.key) : 0;
    if (c)
        return c == 2;
    bool after = ok && w.len == 8 && memcmp(w.str, "After GC", 8) == 0;
    if (w.pooled && ok)
        cache_put(ms->when_cache, w.key, after ? 2 : 1);
    return after;
}

void jfrs_metrics_src_event(jfrs_metrics_src *ms, const jfr_event *e) {
    if (!ms || !e || !e->type || e->type->index >= ms->ntypes || !ms->md)
        return;
    int k = ms->kind_of[e->type->index];
    if (!k)
        return;
    jfr_value ev;
    if (jfr_event_value(e, &ev) != JFR_OK)
        return;
    const int32_t *f = ms->f[k];
    double dur = (double)e->duration_nanos / 1e9;
    switch (k) {
    case K_GC:
        on_gc(ms, &ev, e);
        break;
    case K_CPU:
        if (newer(ms, G_CPU, e)) {
            set_v(ms, V_CPU_JVM, num(&ev, f[0]) + num(&ev, f[1]));
            set_v(ms, V_CPU_MACHINE, num(&ev, f[2]));
        }
        break;
    case K_HEAP: {
        double used = num(&ev, f[2]);
        if (newer(ms, G_HEAP, e)) {
            set_v(ms, V_HEAP_USED, used);
            set_v(ms, V_HEAP_COMMITTED, member_num(&ev, f[1], ms->sub[k][0]));
            set_v(ms, V_HEAP_LIMIT, member_num(&ev, f[1], ms->sub[k][1]));
        }
        if (after_gc(ms, &ev) && newer(ms, G_AFTER, e))
            set_v(ms, V_HEAP_AFTER_GC, used);
        break;
    }
    case K_META:
        if (newer(ms, G_META, e)) {
            set_v(ms, V_META_USED, member_num(&ev, f[0], ms->sub[k][0]));
            set_v(ms, V_META_COMMITTED, member_num(&ev, f[0], ms->sub[k][1]));
            set_v(ms, V_CLASS_USED, member_num(&ev, f[1], ms->sub[k][0]));
            set_v(ms, V_CLASS_COMMITTED, member_num(&ev, f[1], ms->sub[k][1]));
        }
        break;
    case K_THREADS:
        if (newer(ms, G_THREADS, e)) {
            double active = num(&ev, f[0]), daemon = num(&ev, f[1]);
            set_v(ms, V_THREADS_DAEMON, daemon);
            set_v(ms, V_THREADS_OTHER, active - daemon);
        }
        break;
    case K_CLASSES:
        if (newer(ms, G_CLASSES, e)) {
            double loaded = num(&ev, f[0]), unloaded = num(&ev, f[1]);
            set_v(ms, V_CLASS_COUNT, loaded - unloaded);
            set_v(ms, V_CLASS_LOADED, loaded);
            set_v(ms, V_CLASS_UNLOADED, unloaded);
        }
        break;
    case K_ALLOC_SAMPLE:
        add_v(ms, V_ALLOC_SAMPLE, num(&ev, f[0]));
        break;
    case K_ALLOC_TLAB:
        add_v(ms, V_ALLOC_TLAB, num(&ev, f[0]));
        break;
    case K_ALLOC_OUTSIDE:
        add_v(ms, V_ALLOC_OUTSIDE, num(&ev, f[0]));
        break;
    case K_MONITOR:
        add_v(ms, V_MONITOR_N, 1);
        add_v(ms, V_MONITOR_S, dur);
        break;
    case K_SAFEPOINT:
        add_v(ms, V_SAFEPOINT_N, 1);
        add_v(ms, V_SAFEPOINT_S, dur);
        break;
    case K_VMOP:
        on_vmop(ms, &ev, e);
        break;
    case K_EXC:
        if (newer(ms, G_EXC, e))
            set_v(ms, V_EXC, num(&ev, f[0]));
        break;
    default:
        break;
    }
}

/* ------------------------------------------------------------ labels */

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
    jfrs_buf a = {0}, b = {0};
    bool fa = true, fb = true;
    size_t n = jfrs_source_nlabels(s);
    for (size_t i = 0; i < n; i++) {
        const char *k = jfrs_source_key(s, i);
        if (k[0] == '_' && k[1] == '_') /* names starting with __ are Prometheus's own */
            continue;
        if (series_label(s, i))
            put_label(&a, &fa, k, jfrs_source_value(s, i));
        put_label(&b, &fb, k, jfrs_source_value(s, i));
    }
    if (ms->stream >= 2) {
        char t[16];
        snprintf(t, sizeof t, "%u", ms->stream);
        put_label(&a, &fa, "stream", t);
        put_label(&b, &fb, "stream", t);
    }
    if (!jfrs_buf_cstr(&a) || !jfrs_buf_cstr(&b)) {
        jfrs_buf_free(&a);
        jfrs_buf_free(&b);
        return false;
    }
    free(ms->labels);
    free(ms->info);
    ms->labels = a.data;
    ms->info = b.data;
    free(ms->id);
    ms->id = jfrs_strdup(jfrs_source_id(s)); /* NULL (no memory): no take-over */
    ms->gen = jfrs_source_generation(s);
    return true;
}

static void merge_family(jfrs_metrics_src *to, family *tf, const family *from) {
    for (size_t i = 0; i < from->n; i++) {
        const child *c = &from->v[i];
        if (!c->counted)
            continue;
        uint32_t k = family_get(tf, c->labels, strlen(c->labels));
        if (k >= tf->n || !child_live(to, tf, &tf->v[k]))
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
            add_v(to, sums[i], from->v[sums[i]]);
    for (size_t i = 0; i < sizeof lasts / sizeof *lasts; i++) {
        int g = lasts[i].g;
        if (!from->tset[g] || (to->tset[g] && to->t[g] >= from->t[g]))
            continue;
        to->t[g] = from->t[g];
        to->tset[g] = true;
        for (int v = lasts[i].lo; v <= lasts[i].hi; v++)
            if (from->has[v])
                set_v(to, v, from->v[v]);
    }
    to->bytes_base += from->bytes_base;
    to->chunks += from->chunks;
    if (from->has_last && !to->has_last && !to->last_refused)
        to->has_last = take_series(to, 1);
    if (from->last_event_s > to->last_event_s)
        to->last_event_s = from->last_event_s;
    for (int f = 0; f < NF; f++)
        merge_family(to, &to->fam[f], &from->fam[f]);
}

/* An open source's labels follow its jfrs_source; when it has become a JVM
 * seen before, it takes over that one's series. */
static void relabel(jfrs_metrics *m, jfrs_metrics_src *ms) {
    if (ms->ended || (ms->labels && jfrs_source_generation(ms->src) == ms->gen))
        return;
    const char *id = jfrs_source_id(ms->src);
    unsigned open_same = 0;
    for (jfrs_metrics_src *o = m->head, *next; o; o = next) {
        next = o->next;
        if (o == ms || !o->id || strcmp(o->id, id) != 0)
            continue;
        if (o->ended) {
            merge(ms, o);
            src_drop(m, o);
        } else if (o->seq < ms->seq) {
            open_same++;
        }
    }
    ms->stream = open_same ? open_same + 1 : 0;
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
    relabel(m, ms);
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

/* ------------------------------------------------------------ application series */

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
        *sf = (set_family){jfrs_strdup(name), jfrs_strdup(type), jfrs_strdup(help), NULL, 0, 0};
        if (!sf->name || !sf->type || !sf->help) {
            free(sf->name);
            free(sf->type);
            free(sf->help);
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
    if (!jfrs_array_reserve((void **)&sf->s, sf->n, &sf->cap, sizeof *sf->s, 4) ||
        !(l = jfrs_strdup(labels)))
        return JFR_NOMEM;
    sf->s[sf->n++] = (set_series){l, value};
    return JFR_OK;
}

/* ------------------------------------------------------------ render */

typedef struct writer {
    jfrs_buf *b;
    const char *name, *type, *help;
    bool started;
} writer;

static void fam_begin(writer *w, const char *name, const char *type, const char *help) {
    *w = (writer){w->b, name, type, help, false};
}

/* One sample: NAME[SUFFIX]{LABELS[,EXTRA]} (value written by the caller). */
static void sample_head(writer *w, const char *suffix, const char *labels, const char *extra,
                        const char *le) {
    jfrs_buf *b = w->b;
    if (!w->started) {
        w->started = true;
        jfrs_buf_puts(b, "# HELP ");
        jfrs_buf_puts(b, w->name);
        jfrs_buf_putc(b, ' ');
        jfrs_buf_puts(b, w->help);
        jfrs_buf_puts(b, "\n# TYPE ");
        jfrs_buf_puts(b, w->name);
        jfrs_buf_putc(b, ' ');
        jfrs_buf_puts(b, w->type);
        jfrs_buf_putc(b, '\n');
    }
    jfrs_buf_puts(b, w->name);
    if (suffix)
        jfrs_buf_puts(b, suffix);
    const char *parts[3] = {labels, extra, le};
    bool any = false;
    for (int i = 0; i < 3; i++) {
        if (!parts[i] || !*parts[i])
            continue;
        jfrs_buf_putc(b, any ? ',' : '{');
        any = true;
        if (i == 2)
            jfrs_buf_puts(b, "le=\"");
        jfrs_buf_puts(b, parts[i]);
        if (i == 2)
            jfrs_buf_putc(b, '"');
    }
    if (any)
        jfrs_buf_putc(b, '}');
    jfrs_buf_putc(b, ' ');
}

static void sample(writer *w, const char *labels, const char *extra, double v) {
    sample_head(w, NULL, labels, extra, NULL);
    put_num(w->b, v);
    jfrs_buf_putc(w->b, '\n');
}

static void sample_u(writer *w, const char *suffix, const char *labels, const char *extra,
                     uint64_t v) {
    sample_head(w, suffix, labels, extra, NULL);
    put_u64(w->b, v);
    jfrs_buf_putc(w->b, '\n');
}

/* The fixed series: name, type, help, and the values with their labels. */
static const struct fixed {
    const char *name, *type, *help;
    int v;
    const char *extra;
} fixed[] = {
    {"jvm_cpu_recent_utilization_ratio", "gauge",
     "CPU used by the JVM (jdk.CPULoad jvmUser + jvmSystem), 0 to 1", V_CPU_JVM, NULL},
    {"jvm_system_cpu_utilization_ratio", "gauge",
     "CPU used by the whole machine (jdk.CPULoad machineTotal), 0 to 1", V_CPU_MACHINE, NULL},
    {"jvm_memory_used_bytes", "gauge",
     "Memory used (jdk.GCHeapSummary heapUsed, jdk.MetaspaceSummary used)", V_HEAP_USED,
     "jvm_memory_type=\"heap\""},
    {"jvm_memory_used_bytes", NULL, NULL, V_META_USED,
     "jvm_memory_type=\"non_heap\",jvm_memory_pool_name=\"Metaspace\""},
    {"jvm_memory_used_bytes", NULL, NULL, V_CLASS_USED,
     "jvm_memory_type=\"non_heap\",jvm_memory_pool_name=\"Compressed Class Space\""},
    {"jvm_memory_committed_bytes", "gauge",
     "Memory committed (jdk.GCHeapSummary heapSpace.committedSize, jdk.MetaspaceSummary "
     "committed)",
     V_HEAP_COMMITTED, "jvm_memory_type=\"heap\""},
    {"jvm_memory_committed_bytes", NULL, NULL, V_META_COMMITTED,
     "jvm_memory_type=\"non_heap\",jvm_memory_pool_name=\"Metaspace\""},
    {"jvm_memory_committed_bytes", NULL, NULL, V_CLASS_COMMITTED,
     "jvm_memory_type=\"non_heap\",jvm_memory_pool_name=\"Compressed Class Space\""},
    {"jvm_memory_limit_bytes", "gauge", "Heap reserved (jdk.GCHeapSummary heapSpace.reservedSize)",
     V_HEAP_LIMIT, "jvm_memory_type=\"heap\""},
    {"jvm_memory_used_after_last_gc_bytes", "gauge",
     "Heap used after the last GC (jdk.GCHeapSummary when \"After GC\")", V_HEAP_AFTER_GC,
     "jvm_memory_type=\"heap\""},
    {"jvm_threads", "gauge",
     "Live Java threads (jdk.JavaThreadStatistics; OpenTelemetry's jvm.thread.count)",
     V_THREADS_DAEMON, "jvm_thread_daemon=\"true\""},
    {"jvm_threads", NULL, NULL, V_THREADS_OTHER, "jvm_thread_daemon=\"false\""},
    {"jvm_classes", "gauge",
     "Classes loaded now (jdk.ClassLoadingStatistics loadedClassCount - unloadedClassCount)",
     V_CLASS_COUNT, NULL},
    {"jvm_class_loaded_total", "counter",
     "Classes loaded since the JVM started (jdk.ClassLoadingStatistics)", V_CLASS_LOADED, NULL},
    {"jvm_class_unloaded_total", "counter",
     "Classes unloaded since the JVM started (jdk.ClassLoadingStatistics)", V_CLASS_UNLOADED,
     NULL},
    {"jvm_memory_allocated_bytes_total", "counter",
     "Bytes allocated, per allocation event type: ObjectAllocationSample weight (an estimate "
     "of all), InNewTLAB tlabSize plus OutsideTLAB allocationSize",
     V_ALLOC_SAMPLE, "jfr_event=\"jdk.ObjectAllocationSample\""},
    {"jvm_memory_allocated_bytes_total", NULL, NULL, V_ALLOC_TLAB,
     "jfr_event=\"jdk.ObjectAllocationInNewTLAB\""},
    {"jvm_memory_allocated_bytes_total", NULL, NULL, V_ALLOC_OUTSIDE,
     "jfr_event=\"jdk.ObjectAllocationOutsideTLAB\""},
    {"jvm_lock_contentions_total", "counter",
     "Contended monitor enters recorded (jdk.JavaMonitorEnter, over its threshold)", V_MONITOR_N,
     NULL},
    {"jvm_lock_contention_seconds_total", "counter",
     "Time spent in recorded contended monitor enters (jdk.JavaMonitorEnter durations)",
     V_MONITOR_S, NULL},
    {"jvm_safepoints_total", "counter", "Safepoints (jdk.SafepointBegin)", V_SAFEPOINT_N, NULL},
    {"jvm_safepoint_seconds_total", "counter",
     "Time in safepoints (jdk.SafepointBegin durations)", V_SAFEPOINT_S, NULL},
    {"jvm_exceptions_thrown_total", "counter",
     "Throwables created since the JVM started (jdk.ExceptionStatistics throwables)", V_EXC,
     NULL},
};

static void render_fixed(jfrs_metrics *m, writer *w, size_t i) {
    const struct fixed *fx = &fixed[i];
    for (jfrs_metrics_src *ms = m->head; ms; ms = ms->next)
        if (ms->has[fx->v] && ms->labels)
            sample(w, ms->labels, fx->extra, ms->v[fx->v]);
}

static void render_family(jfrs_metrics *m, writer *w, int f) {
    for (jfrs_metrics_src *ms = m->head; ms; ms = ms->next) {
        if (!ms->labels)
            continue;
        const family *fa = &ms->fam[f];
        for (size_t i = 0; i < fa->n; i++) {
            const child *c = &fa->v[i];
            if (!c->counted || !c->count)
                continue;
            if (!fa->hist) {
                sample_u(w, NULL, ms->labels, c->labels, c->count);
                continue;
            }
            uint64_t cum = 0;
            for (size_t b = 0; b <= NB; b++) {
                cum += b < NB ? c->bucket[b] : 0;
                sample_head(w, "_bucket", ms->labels, c->labels, b < NB ? bucket_str[b] : "+Inf");
                put_u64(w->b, b < NB ? cum : c->count);
                jfrs_buf_putc(w->b, '\n');
            }
            sample_head(w, "_sum", ms->labels, c->labels, NULL);
            put_num(w->b, c->sum);
            jfrs_buf_putc(w->b, '\n');
            sample_u(w, "_count", ms->labels, c->labels, c->count);
        }
    }
}

/* The sums of a family (VM operation seconds). */
static void render_family_sums(jfrs_metrics *m, writer *w, int f) {
    for (jfrs_metrics_src *ms = m->head; ms; ms = ms->next)
        for (size_t i = 0; ms->labels && i < ms->fam[f].n; i++) {
            const child *c = &ms->fam[f].v[i];
            if (c->counted && c->count)
                sample(w, ms->labels, c->labels, c->sum);
        }
}

const char *jfrs_metrics_render(jfrs_metrics *m, size_t *len) {
    if (len)
        *len = 0;
    if (!m)
        return NULL;
    if (m->cfg.on_render)
        m->cfg.on_render(m, m->cfg.user);
    jfrs_metrics_expire(m);
    for (jfrs_metrics_src *ms = m->head; ms; ms = ms->next)
        relabel(m, ms);
    jfrs_buf *b = &m->out;
    jfrs_buf_reset(b);
    b->failed = false;
    writer w = {b, 0, 0, 0, false};

    fam_begin(&w, "jvm_gc_duration_seconds", "histogram",
              "Duration of garbage collections (jdk.GarbageCollection)");
    render_family(m, &w, F_GC);
    for (size_t i = 0; i < sizeof fixed / sizeof *fixed; i++) {
        if (fixed[i].type)
            fam_begin(&w, fixed[i].name, fixed[i].type, fixed[i].help);
        render_fixed(m, &w, i);
    }
    fam_begin(&w, "jvm_vm_operations_total", "counter",
              "VM operations executed (jdk.ExecuteVMOperation)");
    render_family(m, &w, F_VMOP);
    fam_begin(&w, "jvm_vm_operation_seconds_total", "counter",
              "Time in VM operations (jdk.ExecuteVMOperation durations)");
    render_family_sums(m, &w, F_VMOP);
    fam_begin(&w, "jfr_events_total", "counter", "JFR events received, per event type");
    render_family(m, &w, F_TYPES);
    fam_begin(&w, "jfr_bytes_total", "counter", "Bytes of JFR data read from the source");
    for (jfrs_metrics_src *ms = m->head; ms; ms = ms->next)
        if (ms->labels)
            sample_u(&w, NULL, ms->labels, NULL,
                     ms->bytes_base + (ms->parser ? jfr_parser_bytes(ms->parser) : 0));
    fam_begin(&w, "jfr_chunks_total", "counter", "JFR chunks completed");
    for (jfrs_metrics_src *ms = m->head; ms; ms = ms->next)
        if (ms->labels)
            sample_u(&w, NULL, ms->labels, NULL, ms->chunks);
    fam_begin(&w, "jfr_parse_errors_total", "counter", "Errors in the source's JFR data");
    render_family(m, &w, F_ERRORS);
    fam_begin(&w, "jfr_last_event_timestamp_seconds", "gauge",
              "When the source's last event arrived (Unix time)");
    for (jfrs_metrics_src *ms = m->head; ms; ms = ms->next)
        if (ms->labels && ms->has_last)
            sample(&w, ms->labels, NULL, floor(ms->last_event_s * 1000) / 1000);
    fam_begin(&w, "jfr_source_connected", "gauge",
              "1 while the source's input is open, 0 after it ended (kept for the TTL)");
    for (jfrs_metrics_src *ms = m->head; ms; ms = ms->next)
        if (ms->labels)
            sample_u(&w, NULL, ms->labels, NULL, !ms->ended);
    fam_begin(&w, "jfr_source_info", "gauge", "The source's labels, all of them");
    for (jfrs_metrics_src *ms = m->head; ms; ms = ms->next)
        if (ms->info)
            sample_u(&w, NULL, ms->info, NULL, 1);

    /* the reader's own */
    uint64_t bytes = m->bytes_ended;
    for (jfrs_metrics_src *ms = m->head; ms; ms = ms->next)
        if (ms->parser)
            bytes += jfr_parser_bytes(ms->parser);
    for (jfrs_metrics_src *ms = m->untracked; ms; ms = ms->next)
        if (ms->parser)
            bytes += jfr_parser_bytes(ms->parser);
    static const struct {
        const char *name, *type, *help;
    } own[] = {
        {"jfrstream_sources_open", "gauge", "Inputs open now"},
        {"jfrstream_sources_total", "counter", "Inputs opened"},
        {"jfrstream_events_total", "counter", "JFR events received from all inputs"},
        {"jfrstream_bytes_total", "counter", "Bytes of JFR data read from all inputs"},
        {"jfrstream_metrics_sources", "gauge", "Sources whose series are kept (open and within "
                                               "the TTL)"},
        {"jfrstream_metrics_series", "gauge", "Series of the sources held"},
        {"jfrstream_metrics_expired_total", "counter", "Sources forgotten after the TTL"},
        {"jfrstream_metrics_evicted_total", "counter",
         "Ended sources forgotten before the TTL to make room"},
    };
    uint64_t ownv[] = {m->open, m->total, m->events, bytes, m->nsrc, m->series, m->expired,
                       m->evicted};
    for (size_t i = 0; i < sizeof own / sizeof *own; i++) {
        fam_begin(&w, own[i].name, own[i].type, own[i].help);
        sample_u(&w, NULL, NULL, NULL, ownv[i]);
    }
    fam_begin(&w, "jfrstream_metrics_refused_total", "counter",
              "Sources and series not created over a limit");
    sample_u(&w, NULL, NULL, "limit=\"sources\"", m->refused_sources);
    sample_u(&w, NULL, NULL, "limit=\"series\"", m->refused_series);
    fam_begin(&w, "jfrstream_parse_errors_total", "counter", "Errors in the inputs' JFR data");
    for (unsigned s = 0; s < 32; s++)
        if (m->errors[s] && jfr_status_name((jfr_status)s)) {
            char l[64];
            snprintf(l, sizeof l, "status=\"%s\"", jfr_status_name((jfr_status)s));
            sample_u(&w, NULL, NULL, l, m->errors[s]);
        }
    fam_begin(&w, "jfrstream_build_info", "gauge", "The reader's version");
    char l[64];
    snprintf(l, sizeof l, "version=\"%s\"", jfr_version_string());
    sample_u(&w, NULL, NULL, l, 1);
    fam_begin(&w, "jfrstream_start_time_seconds", "gauge", "When the reader started (Unix time)");
    sample(&w, NULL, NULL, m->start_s);
    for (size_t i = 0; i < m->nsets; i++) {
        const set_family *sf = &m->sets[i];
        fam_begin(&w, sf->name, sf->type, sf->help);
        for (size_t k = 0; k < sf->n; k++)
            sample(&w, NULL, sf->s[k].labels, sf->s[k].value);
    }
    if (!jfrs_buf_cstr(b))
        return NULL;
    if (len)
        *len = b->len;
    return b->data;
}
