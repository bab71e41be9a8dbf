/*
 * summary.c — the record-type table of `jfr summary` (see summary.h): rows
 * sorted by count (descending), then name, then the iteration order of the
 * JDK's HashMap<Long, ...> of type ids.
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#include "summary.h"
#include "jfrstream_conv.h"
#include "jformat.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t hash_id(uint64_t id) {
    id ^= id >> 33;
    id *= 0xff51afd7ed558ccdull;
    id ^= id >> 33;
    return id;
}

static uint64_t hash_name(const char *s) { /* FNV-1a */
    uint64_t h = 0xcbf29ce484222325ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
    return hash_id(h);
}

static uint64_t hash_row(const sum_table *s, const sum_row *r) {
    return s->by_name ? hash_name(r->name) : hash_id(r->id);
}

void sum_init(sum_table *s, bool by_name, const jfr_allocator *a) {
    memset(s, 0, sizeof *s);
    s->by_name = by_name;
    if (a)
        s->alloc = *a;
}

void sum_free(sum_table *s) {
    const jfr_allocator a = s->alloc;
    for (size_t i = 0; i < s->nrows; i++)
        jfr__free(&a, s->rows[i].name, strlen(s->rows[i].name) + 1);
    jfr__free(&a, s->rows, s->caprows * sizeof *s->rows);
    jfr__free(&a, s->slots, s->capslots * sizeof *s->slots);
    memset(s, 0, sizeof *s);
    s->alloc = a;
}

static uint32_t find(const sum_table *s, uint64_t id, const char *name) {
    if (!s->by_name && id < SUM_DIRECT)
        return s->direct[id] - 1; /* 0 - 1: SUM_NONE */
    if (!s->capslots)
        return SUM_NONE;
    size_t mask = s->capslots - 1;
    uint64_t h = s->by_name ? hash_name(name) : hash_id(id);
    for (size_t i = h & mask;; i = (i + 1) & mask) {
        uint32_t v = s->slots[i];
        if (!v)
            return SUM_NONE;
        const sum_row *r = &s->rows[v - 1];
        if (s->by_name ? strcmp(r->name, name) == 0 : r->id == id)
            return v - 1;
    }
}

static bool rehash(sum_table *s, size_t cap) {
    uint32_t *slots = jfr__calloc(&s->alloc, cap * sizeof *slots);
    if (!slots)
        return false;
    for (size_t r = 0; r < s->nrows; r++) {
        size_t i = hash_row(s, &s->rows[r]) & (cap - 1);
        while (slots[i])
            i = (i + 1) & (cap - 1);
        slots[i] = (uint32_t)(r + 1);
        if (!s->by_name && s->rows[r].id < SUM_DIRECT)
            s->direct[s->rows[r].id] = (uint32_t)(r + 1);
    }
    jfr__free(&s->alloc, s->slots, s->capslots * sizeof *s->slots);
    s->slots = slots;
    s->capslots = cap;
    return true;
}

/* Insert a new row (must be absent). */
static uint32_t insert(sum_table *s, uint64_t id, const char *name) {
    if (s->nrows == s->caprows) {
        size_t cap = s->caprows ? s->caprows * 2 : 256;
        sum_row *r = jfr__realloc(&s->alloc, s->rows, s->caprows * sizeof *r, cap * sizeof *r);
        if (!r)
            goto oom;
        s->rows = r;
        s->caprows = cap;
    }
    if ((s->nrows + 1) * 2 > s->capslots && !rehash(s, s->capslots ? s->capslots * 2 : 512))
        goto oom;
    char *copy = jfr__strdup(&s->alloc, name);
    if (!copy)
        goto oom;
    sum_row *row = &s->rows[s->nrows];
    *row = (sum_row){id, copy, jfmt_utf16_length(copy, strlen(copy)), 0, 0, s->nrows, 0, 0, 0};
    s->nrows++;
    size_t i = hash_row(s, row) & (s->capslots - 1);
    while (s->slots[i])
        i = (i + 1) & (s->capslots - 1);
    s->slots[i] = (uint32_t)s->nrows;
    if (!s->by_name && id < SUM_DIRECT)
        s->direct[id] = (uint32_t)s->nrows;
    return (uint32_t)(s->nrows - 1);
oom:
    s->nomem = true;
    return SUM_NONE;
}

uint32_t sum_row_of(sum_table *s, uint64_t id, const char *name) {
    uint32_t r = find(s, id, name);
    return r != SUM_NONE ? r : insert(s, id, name);
}

void sum_chunk_begin(sum_table *s, const jfr_chunk_info *c, uint32_t *row0, uint32_t *row1) {
    /* the JDK names records 0 and 1 up front */
    const char *prefix = c->major == 1 ? "com.oracle.jdk." : "jdk.";
    char name[64];
    snprintf(name, sizeof name, "%sMetadata", prefix);
    uint32_t r0 = sum_row_of(s, 0, name);
    snprintf(name, sizeof name, "%sCheckpoint", prefix);
    uint32_t r1 = sum_row_of(s, 1, name);
    if (row0)
        *row0 = r0;
    if (row1)
        *row1 = r1;
}

void sum_chunk_end(sum_table *s, const jfr_chunk_info *c) {
    if (!s->have_first || (s->by_name && c->start_nanos < s->start_nanos)) {
        s->have_first = true;
        s->major = c->major;
        s->minor = c->minor;
        s->start_nanos = c->start_nanos;
    }
    s->chunks++;
    s->total_duration += (uint64_t)c->duration_nanos;
}

void sum_metadata(sum_table *s, const jfr_metadata *m, uint32_t *rows) {
    for (uint32_t i = 0; i < m->ntypes; i++) {
        const jfr_type *t = m->types[i];
        if (rows)
            rows[t->index] = SUM_NONE;
        if (!t->is_event)
            continue;
        uint32_t r = sum_row_of(s, t->id, t->name);
        if (r == SUM_NONE)
            return;
        if (rows)
            rows[t->index] = r;
        size_t w = jfmt_utf16_length(t->name, strlen(t->name));
        if (w > s->min_width)
            s->min_width = w;
    }
}

uint32_t sum_row_missing(sum_table *s, uint64_t id) {
    uint32_t r = s->by_name ? SUM_NONE : find(s, id, NULL);
    if (r != SUM_NONE)
        return r;
    char name[64];
    snprintf(name, sizeof name, "%lld (missing event metadata)", (long long)(int64_t)id);
    return sum_row_of(s, id, name);
}

/* The public per-record calls of jfrstream_conv.h live here, next to what
 * they use, so that a record costs one call into the library. */
JFRC_API uint32_t jfrc_summary_row_missing(jfrc_summary *s, uint64_t type_id) {
    return sum_row_missing(s, type_id);
}

JFRC_API void jfrc_summary_count(jfrc_summary *s, uint32_t row, uint64_t size) {
    sum_count(s, row, size);
}

JFRC_API uint32_t jfrc_summary_record(jfrc_summary *s, const jfr_record *r) {
    if (s->by_name)
        return SUM_NONE;
    uint32_t row = sum_row_missing(s, r->type_id);
    sum_count(s, row, r->size);
    return row;
}

/* java.util.HashMap<Long, ?> bucket of a key at table size cap. */
static uint32_t java_bucket(uint64_t id, size_t cap) {
    uint32_t h = (uint32_t)(id ^ (id >> 32));
    h ^= h >> 16;
    return h & (uint32_t)(cap - 1);
}

static int cmp_rows(const void *a, const void *b) {
    const sum_row *x = a, *y = b;
    if (x->count != y->count)
        return x->count > y->count ? -1 : 1;
    int c = jfmt_utf16_compare(x->name, y->name);
    if (c)
        return c;
    if (x->bucket != y->bucket)
        return x->bucket < y->bucket ? -1 : 1;
    return x->order < y->order ? -1 : x->order > y->order;
}

static void pad_right(outbuf *o, const char *s, size_t width, size_t to) {
    ob_puts(o, s);
    if (width < to)
        ob_fill(o, ' ', to - width);
}

static void pad_left_i64(outbuf *o, int64_t v, size_t to) {
    char tmp[24];
    int n = snprintf(tmp, sizeof tmp, "%lld", (long long)v);
    if (n > 0 && (size_t)n < to)
        ob_fill(o, ' ', to - (size_t)n);
    ob_puts(o, tmp);
}

void sum_print(sum_table *s, outbuf *o) {
    /* Java HashMap table size for nrows entries (load factor 0.75) */
    size_t cap = 16;
    while (s->nrows > cap / 4 * 3)
        cap *= 2;
    for (size_t i = 0; i < s->nrows; i++)
        s->rows[i].bucket = java_bucket(s->rows[i].id, cap);
    qsort(s->rows, s->nrows, sizeof *s->rows, cmp_rows);
    if (s->capslots) /* the order changed: re-index */
        rehash(s, s->capslots);

    char date[JFMT_TIME_MAX];
    int64_t secs = s->start_nanos / 1000000000;
    if (s->start_nanos % 1000000000 < 0)
        secs--;
    jfmt_utc_date_time(secs, date);
    uint64_t rounded = s->total_duration + 500000000u;
    int64_t total = rounded > INT64_MAX ? -(int64_t)(~rounded) - 1 : (int64_t)rounded;

    ob_putc(o, '\n');
    ob_printf(o, " Version: %u.%u\n", (unsigned)s->major, (unsigned)s->minor);
    ob_printf(o, " Chunks: %lld\n", (long long)s->chunks);
    ob_printf(o, " Start: %s (UTC)\n", date);
    ob_printf(o, " Duration: %lld s\n", (long long)(total / 1000000000));
    ob_putc(o, '\n');
    static const char header[] = "      Count  Size (bytes) ";
    static const char type_header[] = " Event Type";
    size_t w = s->min_width;
    if (w < sizeof type_header - 1)
        w = sizeof type_header - 1;
    pad_right(o, type_header, sizeof type_header - 1, w);
    ob_puts(o, header);
    ob_putc(o, '\n');
    ob_fill(o, '=', w + sizeof header - 1);
    ob_putc(o, '\n');
    for (size_t i = 0; i < s->nrows; i++) {
        const sum_row *r = &s->rows[i];
        ob_putc(o, ' ');
        pad_right(o, r->name, r->width, w);
        pad_left_i64(o, r->count, 10);
        ob_puts(o, "  ");
        pad_left_i64(o, r->size, 12);
        ob_putc(o, '\n');
    }
}
