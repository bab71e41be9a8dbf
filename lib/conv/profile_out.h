/*
 * profile_out.h — output formats of a finished profile (prof_finish done).
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#ifndef JFRSTREAM_CONV_PROFILE_OUT_H
#define JFRSTREAM_CONV_PROFILE_OUT_H

#include <stdbool.h>

#include "outbuf.h"
#include "profile.h"

/*
 * A self-contained HTML flame graph (no network: the script and style are
 * inside, built from flame.html at compile time). The data are the merged
 * tree of prof_write_collapsed: the same frames and weights. False on no
 * memory.
 */
bool prof_write_flamegraph(const prof *p, outbuf *o, const char *title);

/*
 * A gzip-compressed pprof profile (perftools.profiles.Profile). One sample
 * per distinct call path and line: locations are (function, line) leaf
 * first, functions are the frame names without the type suffix (as
 * async-profiler's jfr2pprof writes them), --threads frames become a
 * "thread" label. Sample types: the weight of the collapsed output first
 * (samples/count, alloc_space/bytes, delay/nanoseconds, events/count), then
 * for allocations and locks the event count (alloc_objects/contentions,
 * count). False on no memory or a zlib failure.
 */
bool prof_write_pprof(const prof *p, outbuf *o);

/*
 * The same profile with sample types of the caller's choice (Pyroscope's
 * names, jfrstream_conv.h jfrc_profile_write_pprof_with): per sample value
 * its type and unit, the event count or the weight, times `scale`; an
 * optional period type and period; the profile's time and duration (0: the
 * chunks'). False on no memory, a zlib failure or a bad spec.
 */
#define PPROF_MAX_VALUES 2
typedef struct pprof_value {
    const char *type, *unit;
    bool count;     /* the event count, else the weight          */
    uint64_t scale; /* multiplier (0 and 1: none)                */
} pprof_value;
typedef struct pprof_spec {
    uint32_t nvalues; /* 1..PPROF_MAX_VALUES */
    pprof_value v[PPROF_MAX_VALUES];
    const char *period_type, *period_unit; /* NULL: none */
    int64_t period;
    int64_t time_nanos, duration_nanos;    /* 0: from the chunks */
} pprof_spec;
bool prof_write_pprof_spec(const prof *p, outbuf *o, const pprof_spec *spec);

#endif
