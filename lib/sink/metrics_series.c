/*
 * metrics_series.c — a source's series (metrics.h): families of label sets,
 * histogram buckets, values, and the count against max_series.
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#include "metrics.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const double bucket_le[NB] = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
                                     0.1,    0.25,  0.5,    1,     2.5,  5,    10};

bool metrics_take_series(jfrs_metrics_src *ms, uint64_t n) {
    jfrs_metrics *m = ms->m;
    if (m->series + n > m->cfg.max_series)
        return false;
    m->series += n;
    ms->nseries += n;
    return true;
}

/* May value i be set? Takes its series the first time. */
bool metrics_value_live(jfrs_metrics_src *ms, int i) {
    if (ms->has[i])
        return true;
    if (ms->vrefused[i])
        return false;
    if (metrics_take_series(ms, 1))
        return true;
    ms->vrefused[i] = true;
    ms->m->refused_series++;
    return false;
}

void metrics_set_v(jfrs_metrics_src *ms, int i, double x) {
    if (isnan(x) || !metrics_value_live(ms, i))
        return;
    ms->v[i] = x;
    ms->has[i] = true;
}

void metrics_add_v(jfrs_metrics_src *ms, int i, double x) {
    if (isnan(x) || !metrics_value_live(ms, i))
        return;
    ms->v[i] += x;
    ms->has[i] = true;
}

void metrics_family_free(const jfr_allocator *a, family *f) {
    for (size_t i = 0; i < f->n; i++)
        metrics_str_free(a, f->v[i].labels);
    jfr__free(a, f->v, f->cap * sizeof *f->v);
    *f = (family){.hist = f->hist};
}

/* The child with these labels; created (not yet counted) when absent.
 * UINT32_MAX when out of memory or over MAX_CHILDREN. */
uint32_t metrics_family_get(const jfr_allocator *a, family *f, const char *labels, size_t len) {
    for (size_t i = 0; i < f->n; i++)
        if (strncmp(f->v[i].labels, labels, len) == 0 && f->v[i].labels[len] == '\0')
            return (uint32_t)i;
    if (f->n == MAX_CHILDREN)
        return UINT32_MAX;
    char *l;
    if (!jfr__array_reserve(a, (void **)&f->v, f->n, &f->cap, sizeof *f->v, 8) ||
        !(l = jfr__strndup(a, labels, len)))
        return UINT32_MAX;
    f->v[f->n] = (child){.labels = l};
    return (uint32_t)f->n++;
}

/* May this child be updated? Takes its series the first time. */
bool metrics_child_live(jfrs_metrics_src *ms, family *f, child *c) {
    if (c->counted)
        return true;
    if (c->refused)
        return false;
    if (metrics_take_series(ms, f->hist ? HIST_SERIES : 1))
        return c->counted = true;
    c->refused = true;
    ms->m->refused_series++;
    return false;
}

void metrics_child_observe(jfrs_metrics_src *ms, family *f, uint32_t i, double x) {
    if (i >= f->n)
        return;
    child *c = &f->v[i];
    if (!metrics_child_live(ms, f, c))
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
jfrc_out *metrics_scratch(jfrs_metrics_src *ms) {
    jfrs_out_reset(ms->scratch);
    return ms->scratch;
}

/* Child index for the label set built in the scratch buffer. */
uint32_t metrics_scratch_child(jfrs_metrics_src *ms, family *f) {
    size_t len = 0;
    const char *d = jfrc_out_data(ms->scratch, &len);
    if (jfrc_out_failed(ms->scratch))
        return UINT32_MAX;
    return metrics_family_get(&ms->m->a, f, d ? d : "", len);
}

