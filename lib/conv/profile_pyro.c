/*
 * profile_pyro.c — pprof with sample types of the caller's choice, and
 * Pyroscope's profile types for JFR data (jfrstream_conv.h: the table of
 * jfrc_pyroscope_kind, the sampling period from jdk.ActiveSetting).
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#include "jfrstream_conv.h"
#include "profile.h"
#include "profile_out.h"

#include <stdlib.h>
#include <string.h>

#include "../sized.h"

#define MS 1000000LL

#define TWO(t1, u1, s1, t2, u2, s2)                                                         \
    .nvalues = 2, .values = {{t1, u1, s1, 0}, { t2, u2, s2, 0 }}
#define KIND(nm, wd, sel, met, pev, dper, pt, pu, ...)                                       \
    {nm, wd, sel, met, pev, dper,                                                          \
     {.size = sizeof(jfrc_pprof_options), __VA_ARGS__, .period_type = pt, .period_unit = pu}}

static const jfrc_pyroscope_kind kinds[] = {
    KIND("cpu", "cpu", "jdk.ExecutionSample,com.oracle.jdk.ExecutionSample", "process_cpu",
         "jdk.ExecutionSample", 10 * MS, "cpu", "nanoseconds", .nvalues = 1,
         .values = {{"cpu", "nanoseconds", JFRC_PPROF_WEIGHT, 0}}),
    KIND("wall", "wall", "wall", "wall", "jdk.NativeMethodSample", 20 * MS, "wall",
         "nanoseconds", .nvalues = 1, .values = {{"wall", "nanoseconds", JFRC_PPROF_WEIGHT, 0}}),
    KIND("alloc_in_new_tlab", "alloc",
         "jdk.ObjectAllocationInNewTLAB,com.oracle.jdk.ObjectAllocationInNewTLAB", "memory", NULL,
         0, "space", "bytes",
         TWO("alloc_in_new_tlab_objects", "count", JFRC_PPROF_COUNT, "alloc_in_new_tlab_bytes",
             "bytes", JFRC_PPROF_WEIGHT)),
    KIND("alloc_outside_tlab", "alloc",
         "jdk.ObjectAllocationOutsideTLAB,com.oracle.jdk.ObjectAllocationOutsideTLAB", "memory",
         NULL, 0, "space", "bytes",
         TWO("alloc_outside_tlab_objects", "count", JFRC_PPROF_COUNT, "alloc_outside_tlab_bytes",
             "bytes", JFRC_PPROF_WEIGHT)),
    KIND("alloc_sample", "alloc", "jdk.ObjectAllocationSample", "memory", NULL, 0, "space",
         "bytes",
         TWO("alloc_sample_objects", "count", JFRC_PPROF_COUNT, "alloc_sample_bytes", "bytes",
             JFRC_PPROF_WEIGHT)),
    KIND("mutex", "lock", "jdk.JavaMonitorEnter,com.oracle.jdk.JavaMonitorEnter", "mutex", NULL,
         0, "mutex", "count",
         TWO("contentions", "count", JFRC_PPROF_COUNT, "delay", "nanoseconds",
             JFRC_PPROF_WEIGHT)),
    KIND("block", "lock", "jdk.ThreadPark,com.oracle.jdk.ThreadPark", "block", NULL, 0, "block",
         "count",
         TWO("contentions", "count", JFRC_PPROF_COUNT, "delay", "nanoseconds",
             JFRC_PPROF_WEIGHT)),
    KIND("live", "live", "profiler.LiveObject", "memory", NULL, 0, "objects", "count",
         .nvalues = 1, .values = {{"live", "count", JFRC_PPROF_COUNT, 0}}),
    KIND("malloc", "nativemem", "profiler.Malloc", "memory", NULL, 0, NULL, NULL,
         TWO("malloc_objects", "count", JFRC_PPROF_COUNT, "malloc_bytes", "bytes",
             JFRC_PPROF_WEIGHT)),
};
#define NKINDS (sizeof kinds / sizeof kinds[0])

JFRC_API jfr_status jfrc_profile_write_pprof_with(const jfrc_profile *p, jfrc_out *o,
                                                  const jfrc_pprof_options *opt) {
    jfrc_pprof_options x;
    if (!opt || !jfr__sized_copy(&x, sizeof x, opt) || p->reverse || x.nvalues < 1 ||
        x.nvalues > JFRC_PPROF_MAX_VALUES)
        return JFR_INVALID_ARG;
    pprof_spec spec = {.nvalues = x.nvalues,
                       .period_type = x.period_type,
                       .period_unit = x.period_unit,
                       .period = x.period,
                       .time_nanos = x.time_nanos,
                       .duration_nanos = x.duration_nanos};
    for (uint32_t i = 0; i < x.nvalues; i++)
        spec.v[i] = (pprof_value){x.values[i].type, x.values[i].unit,
                                  x.values[i].source == JFRC_PPROF_COUNT, x.values[i].scale};
    return prof_write_pprof_spec(p, o, &spec) ? JFR_OK : JFR_NOMEM;
}

static bool word_is(const char *s, size_t len, const char *w) {
    return strlen(w) == len && memcmp(s, w, len) == 0;
}

JFRC_API jfr_status jfrc_pyroscope_kinds(const char *words, const jfrc_pyroscope_kind **out,
                                         size_t cap, size_t *n, const char **bad) {
    bool want[NKINDS] = {false};
    const char *s = words;
    *n = 0;
    if (bad)
        *bad = NULL;
    while (s) {
        const char *e = strchr(s, ',');
        size_t len = e ? (size_t)(e - s) : strlen(s);
        bool found = false;
        for (size_t k = 0; k < NKINDS; k++)
            if (word_is(s, len, kinds[k].word) || word_is(s, len, kinds[k].name))
                want[k] = found = true;
        if (!found) {
            if (bad)
                *bad = s;
            return JFR_INVALID_ARG;
        }
        s = e ? e + 1 : NULL;
    }
    for (size_t k = 0; k < NKINDS; k++)
        if (want[k] && *n < cap)
            out[(*n)++] = &kinds[k];
    return JFR_OK;
}

JFRC_API void jfrc_pyroscope_pprof(const jfrc_pyroscope_kind *k, int64_t period_ns,
                                   int64_t time_nanos, int64_t duration_nanos,
                                   jfrc_pprof_options *out) {
    *out = k->pprof;
    out->size = sizeof *out;
    out->time_nanos = time_nanos;
    out->duration_nanos = duration_nanos;
    if (k->period_event) {
        int64_t per = period_ns > 0 ? period_ns : k->default_period;
        out->values[0].scale = (uint64_t)per;
        out->period = per;
    }
}

/* "10 ms" -> 10000000; 0 when not a time. */
static int64_t parse_period(const char *s, size_t len) {
    static const struct {
        const char *u;
        int64_t ns;
    } units[] = {{"ns", 1},       {"us", 1000},          {"ms", MS},
                 {"s", 1000 * MS}, {"m", 60000 * MS},    {"h", 3600000 * MS},
                 {"d", 86400000 * MS}};
    size_t i = 0;
    int64_t v = 0;
    if (len == 0 || s[0] < '0' || s[0] > '9')
        return 0;
    for (; i < len && s[i] >= '0' && s[i] <= '9'; i++) {
        if (v > (INT64_MAX - 9) / 10)
            return 0;
        v = v * 10 + (s[i] - '0');
    }
    while (i < len && s[i] == ' ')
        i++;
    for (size_t u = 0; u < sizeof units / sizeof units[0]; u++)
        if (word_is(s + i, len - i, units[u].u))
            return v > INT64_MAX / units[u].ns ? 0 : v * units[u].ns;
    return 0;
}

JFRC_API int64_t jfrc_setting_period(jfr_parser *parser, const jfr_event *e,
                                     const char *type_name) {
    jfr_value id, name, value;
    if (jfr_event_field_named(e, "name", &name) != JFR_OK || name.kind != JFR_KIND_STRING ||
        !word_is(name.str, name.len, "period") ||
        jfr_event_field_named(e, "id", &id) != JFR_OK || id.kind != JFR_KIND_INT ||
        jfr_event_field_named(e, "value", &value) != JFR_OK || value.kind != JFR_KIND_STRING)
        return 0;
    const jfr_metadata *m = parser ? jfr_parser_metadata(parser) : NULL;
    const jfr_type *t = m ? jfr_metadata_type_by_id(m, (uint64_t)id.i) : NULL;
    if (!t || strcmp(t->name, type_name) != 0)
        return 0;
    return parse_period(value.str, value.len);
}
