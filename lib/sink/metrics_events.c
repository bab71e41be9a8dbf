/*
 * metrics_events.c — which JFR events feed which series (jfrstream_sink.h,
 * "metrics"): the types subscribed, their fields resolved per metadata,
 * and each event's values taken into its source's series.
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#include "metrics.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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


static double wall_s(void) {
    struct timespec ts;
#ifdef CLOCK_REALTIME_COARSE
    clock_gettime(CLOCK_REALTIME_COARSE, &ts); /* per record: the cheap clock */
#else
    clock_gettime(CLOCK_REALTIME, &ts);
#endif
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
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
    if (md->ntypes > ms->types_cap || !ms->kind_of) {
        /* both tables anew (they are filled below), or neither */
        const jfr_allocator *a = &ms->m->a;
        size_t n = md->ntypes ? md->ntypes : 1;
        uint8_t *k = jfr__alloc(a, n);
        uint32_t *c = jfr__alloc(a, n * sizeof *c);
        if (!k || !c) {
            jfr__free(a, k, n);
            jfr__free(a, c, n * sizeof *c);
            ms->ntypes = 0; /* no memory: nothing counted until the next metadata */
            return;
        }
        jfr__free(a, ms->kind_of, ms->types_cap);
        jfr__free(a, ms->type_child, ms->types_cap * sizeof *c);
        ms->kind_of = k;
        ms->type_child = c;
        ms->types_cap = n;
    }
    ms->ntypes = md->ntypes;
    memset(ms->kind_of, 0, ms->ntypes);
    for (uint32_t i = 0; i < md->ntypes; i++) {
        const jfr_type *t = md->types[i];
        ms->type_child[i] = UINT32_MAX;
        if (!t->is_event || t->index >= ms->ntypes)
            continue;
        jfrc_out *b = metrics_scratch(ms);
        jfrc_out_puts(b, "type=");
        metrics_put_label_value(b, t->name, strlen(t->name));
        ms->type_child[t->index] = metrics_scratch_child(ms, &ms->fam[F_TYPES]);
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
        ms->has_last = metrics_take_series(ms, 1);
        ms->last_refused = !ms->has_last;
        ms->m->refused_series += ms->last_refused;
    }
    ms->last_event_s = wall_s();
    uint32_t c = ms->type_child[r->type->index];
    family *f = &ms->fam[F_TYPES];
    if (c >= f->n)
        return;
    child *ch = &f->v[c];
    if (!ch->counted && !metrics_child_live(ms, f, ch))
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
    metrics_child_observe(ms, f, metrics_family_get(&ms->m->a, f, l, (size_t)n), 0);
}

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
    uint32_t ci = metrics_scratch_child(ms, f);
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
        jfrc_out *b = metrics_scratch(ms);
        jfrc_out_puts(b, "jvm_gc_name=");
        metrics_put_label_value(b, n, len);
        jfrc_out_puts(b, ",jvm_gc_action=\"");
        jfrc_out_puts(b, gc_action(n, len));
        jfrc_out_putc(b, '"');
        ci = keyed_child(ms, f, ms->gc_cache, pooled, nv.key);
    }
    metrics_child_observe(ms, f, ci, (double)e->duration_nanos / 1e9);
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
        jfrc_out *b = metrics_scratch(ms);
        jfrc_out_puts(b, "jvm_vm_operation=");
        metrics_put_label_value(b, ok ? ov.str : "", ok ? ov.len : 0);
        jfrc_out_puts(b, sp ? ",jvm_safepoint=\"true\"" : ",jvm_safepoint=\"false\"");
        ci = keyed_child(ms, f, ms->vm_cache, pooled, key);
    }
    metrics_child_observe(ms, f, ci, (double)e->duration_nanos / 1e9);
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
            metrics_set_v(ms, V_CPU_JVM, num(&ev, f[0]) + num(&ev, f[1]));
            metrics_set_v(ms, V_CPU_MACHINE, num(&ev, f[2]));
        }
        break;
    case K_HEAP: {
        double used = num(&ev, f[2]);
        if (newer(ms, G_HEAP, e)) {
            metrics_set_v(ms, V_HEAP_USED, used);
            metrics_set_v(ms, V_HEAP_COMMITTED, member_num(&ev, f[1], ms->sub[k][0]));
            metrics_set_v(ms, V_HEAP_LIMIT, member_num(&ev, f[1], ms->sub[k][1]));
        }
        if (after_gc(ms, &ev) && newer(ms, G_AFTER, e))
            metrics_set_v(ms, V_HEAP_AFTER_GC, used);
        break;
    }
    case K_META:
        if (newer(ms, G_META, e)) {
            metrics_set_v(ms, V_META_USED, member_num(&ev, f[0], ms->sub[k][0]));
            metrics_set_v(ms, V_META_COMMITTED, member_num(&ev, f[0], ms->sub[k][1]));
            metrics_set_v(ms, V_CLASS_USED, member_num(&ev, f[1], ms->sub[k][0]));
            metrics_set_v(ms, V_CLASS_COMMITTED, member_num(&ev, f[1], ms->sub[k][1]));
        }
        break;
    case K_THREADS:
        if (newer(ms, G_THREADS, e)) {
            double active = num(&ev, f[0]), daemon = num(&ev, f[1]);
            metrics_set_v(ms, V_THREADS_DAEMON, daemon);
            metrics_set_v(ms, V_THREADS_OTHER, active - daemon);
        }
        break;
    case K_CLASSES:
        if (newer(ms, G_CLASSES, e)) {
            double loaded = num(&ev, f[0]), unloaded = num(&ev, f[1]);
            metrics_set_v(ms, V_CLASS_COUNT, loaded - unloaded);
            metrics_set_v(ms, V_CLASS_LOADED, loaded);
            metrics_set_v(ms, V_CLASS_UNLOADED, unloaded);
        }
        break;
    case K_ALLOC_SAMPLE:
        metrics_add_v(ms, V_ALLOC_SAMPLE, num(&ev, f[0]));
        break;
    case K_ALLOC_TLAB:
        metrics_add_v(ms, V_ALLOC_TLAB, num(&ev, f[0]));
        break;
    case K_ALLOC_OUTSIDE:
        metrics_add_v(ms, V_ALLOC_OUTSIDE, num(&ev, f[0]));
        break;
    case K_MONITOR:
        metrics_add_v(ms, V_MONITOR_N, 1);
        metrics_add_v(ms, V_MONITOR_S, dur);
        break;
    case K_SAFEPOINT:
        metrics_add_v(ms, V_SAFEPOINT_N, 1);
        metrics_add_v(ms, V_SAFEPOINT_S, dur);
        break;
    case K_VMOP:
        on_vmop(ms, &ev, e);
        break;
    case K_EXC:
        if (newer(ms, G_EXC, e))
            metrics_set_v(ms, V_EXC, num(&ev, f[0]));
        break;
    default:
        break;
    }
}

