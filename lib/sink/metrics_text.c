/*
 * metrics_text.c — the Prometheus text exposition 0.0.4 of the registry
 * (jfrs_metrics_render); the label escaping is metrics_label.c's.
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#include "metrics.h"
#include "digits.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const char *const bucket_str[NB] = {"0.0005", "0.001", "0.0025", "0.005", "0.01",
                                           "0.025",  "0.05",  "0.1",    "0.25",  "0.5",
                                           "1",      "2.5",   "5",      "10"};

/* Most samples are counts: written without printf. */
static void put_u64(jfrc_out *b, uint64_t v) {
    char t[JFR_DIGITS_MAX], *s = jfr__digits_back(t + sizeof t, v);
    jfrc_out_write(b, s, (size_t)(t + sizeof t - s));
}

static void put_num(jfrc_out *b, double v) {
    char t[40];
    if (isnan(v))
        jfrc_out_puts(b, "NaN");
    else if (isinf(v))
        jfrc_out_puts(b, v > 0 ? "+Inf" : "-Inf");
    else if (v == floor(v) && fabs(v) < 9007199254740992.0) {
        if (v < 0)
            jfrc_out_putc(b, '-');
        put_u64(b, (uint64_t)fabs(v));
    }
    else
        jfrc_out_write(b, t, (size_t)snprintf(t, sizeof t, "%.17g", v));
}

typedef struct writer {
    jfrc_out *b;
    const char *name, *type, *help;
    bool started;
} writer;

static void fam_begin(writer *w, const char *name, const char *type, const char *help) {
    *w = (writer){w->b, name, type, help, false};
}

/* One sample: NAME[SUFFIX]{LABELS[,EXTRA]} (value written by the caller). */
static void sample_head(writer *w, const char *suffix, const char *labels, const char *extra,
                        const char *le) {
    jfrc_out *b = w->b;
    if (!w->started) {
        w->started = true;
        jfrc_out_puts(b, "# HELP ");
        jfrc_out_puts(b, w->name);
        jfrc_out_putc(b, ' ');
        jfrc_out_puts(b, w->help);
        jfrc_out_puts(b, "\n# TYPE ");
        jfrc_out_puts(b, w->name);
        jfrc_out_putc(b, ' ');
        jfrc_out_puts(b, w->type);
        jfrc_out_putc(b, '\n');
    }
    jfrc_out_puts(b, w->name);
    if (suffix)
        jfrc_out_puts(b, suffix);
    const char *parts[3] = {labels, extra, le};
    bool any = false;
    for (int i = 0; i < 3; i++) {
        if (!parts[i] || !*parts[i])
            continue;
        jfrc_out_putc(b, any ? ',' : '{');
        any = true;
        if (i == 2)
            jfrc_out_puts(b, "le=\"");
        jfrc_out_puts(b, parts[i]);
        if (i == 2)
            jfrc_out_putc(b, '"');
    }
    if (any)
        jfrc_out_putc(b, '}');
    jfrc_out_putc(b, ' ');
}

static void sample(writer *w, const char *labels, const char *extra, double v) {
    sample_head(w, NULL, labels, extra, NULL);
    put_num(w->b, v);
    jfrc_out_putc(w->b, '\n');
}

static void sample_u(writer *w, const char *suffix, const char *labels, const char *extra,
                     uint64_t v) {
    sample_head(w, suffix, labels, extra, NULL);
    put_u64(w->b, v);
    jfrc_out_putc(w->b, '\n');
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
                jfrc_out_putc(w->b, '\n');
            }
            sample_head(w, "_sum", ms->labels, c->labels, NULL);
            put_num(w->b, c->sum);
            jfrc_out_putc(w->b, '\n');
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
        metrics_relabel(m, ms);
    jfrc_out *b = m->out;
    jfrs_out_reset(b);
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
    return jfrs_out_cstr(b, len);
}

