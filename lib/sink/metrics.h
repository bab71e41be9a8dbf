/*
 * metrics.h — the insides of the metrics registry (jfrstream_sink.h,
 * "metrics"), shared by its files: metrics_registry.c (the registry, its
 * sources' lives and take-overs, the application's series),
 * metrics_series.c (a source's series: families, label sets, values and
 * the max_series count), metrics_events.c (which events feed which series)
 * metrics_text.c (the text exposition) and metrics_label.c (a label,
 * escaped), below both the registry and the text.
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#ifndef JFRSTREAM_SINK_METRICS_H
#define JFRSTREAM_SINK_METRICS_H

#include "jfrstream_sink.h"
#include "sink.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define NB 14 /* histogram buckets, +Inf apart */
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
    jfrc_out *scratch; /* label sets being looked up (kept: no malloc per event) */
    size_t types_cap;  /* kind_of and type_child have room for it */
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
    uint64_t nsrc, open, total;
    uint64_t series;
    uint64_t refused_sources, refused_series, expired, evicted;
    uint64_t events, bytes_ended;
    uint64_t errors[32];
    double start_s;
    set_family sets[MAX_SETS];
    size_t nsets;
    jfrc_out *out;     /* the exposition */
    jfr_allocator a;   /* every allocation of the registry and its sources */
};


/* Free a string of the registry's (NULL: nothing). */
static inline void metrics_str_free(const jfr_allocator *a, char *s) {
    if (s)
        jfr__free(a, s, strlen(s) + 1);
}

/* ---- metrics_series.c */
/* Take n series from the registry's max_series; false when over it. */
bool metrics_take_series(jfrs_metrics_src *ms, uint64_t n);
/* May value i be set? Takes its series the first time. */
bool metrics_value_live(jfrs_metrics_src *ms, int i);
/* Set value i / add to it (NaN: nothing), when it may be. */
void metrics_set_v(jfrs_metrics_src *ms, int i, double x);
void metrics_add_v(jfrs_metrics_src *ms, int i, double x);
void metrics_family_free(const jfr_allocator *a, family *f);
/* The child with these labels; created (not yet counted) when absent.
 * UINT32_MAX when out of memory or over MAX_CHILDREN. */
uint32_t metrics_family_get(const jfr_allocator *a, family *f, const char *labels, size_t len);
/* May this child be updated? Takes its series the first time. */
bool metrics_child_live(jfrs_metrics_src *ms, family *f, child *c);
/* Count observation x in child i (histograms: its bucket too). */
void metrics_child_observe(jfrs_metrics_src *ms, family *f, uint32_t i, double x);
/* The source's scratch buffer, emptied, for a label set to look up; the
 * child index of the label set built in it. */
jfrc_out *metrics_scratch(jfrs_metrics_src *ms);
uint32_t metrics_scratch_child(jfrs_metrics_src *ms, family *f);

/* ---- metrics_label.c */
/* A label value as the text format wants it: quoted, \\, \" and \n
 * escaped, and valid UTF-8 (anything else becomes U+FFFD). */
void metrics_put_label_value(jfrc_out *b, const char *s, size_t n);
/* KEY="VALUE", after a ',' unless *first. */
void metrics_put_label(jfrc_out *b, bool *first, const char *key, const char *value);

/* ---- metrics_registry.c */
/* An open source's labels follow its jfrs_source; when it has become a JVM
 * seen before, it takes over that one's series. */
void metrics_relabel(jfrs_metrics *m, jfrs_metrics_src *ms);

/* ---- metrics_auth.c: the endpoint's users (jfrstream_sink.h,
 * jfrs_metrics_http_config.basic_auth) */
typedef struct metrics_users metrics_users;
/* Parse the users text (copied). JFR_INVALID_ARG with err naming the line,
 * JFR_NOMEM. */
jfr_status metrics_users_new(const char *text, const jfr_allocator *a, metrics_users **out,
                             char *err, size_t errlen);
/* Whether user and password are one user's; from any thread, several at
 * once. */
bool metrics_users_check(metrics_users *u, const char *user, const char *password);
/* Wipe and free. NULL: nothing. */
void metrics_users_free(metrics_users *u);

#endif
