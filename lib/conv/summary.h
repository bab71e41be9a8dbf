/*
 * summary.h — the record-type table of `jfr summary` (JDK 25 layout): per
 * record type the count and summed size, the first chunk's version and
 * start, the chunk count and total duration. Used by `summary` for one
 * input (rows keyed by type id, as the JDK does) and by `listen`/`tail`
 * over many inputs (rows keyed by type name: ids differ between JVMs).
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#ifndef JFRSTREAM_CONV_SUMMARY_H
#define JFRSTREAM_CONV_SUMMARY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "jfrstream.h"
#include "outbuf.h"

typedef struct sum_row {
    uint64_t id;   /* type id (the first seen, when keyed by name) */
    char *name;
    size_t width;  /* name length in UTF-16 units */
    int64_t count; /* records */
    int64_t size;  /* summed record sizes (Java int per record) */
    size_t order;  /* insertion order */
    uint32_t bucket;
    uint64_t events; /* for the live view: events counted by the caller */
    uint64_t replayed; /* of those, read from what was there at the start */
} sum_row;

#define SUM_DIRECT 1024

typedef struct jfrc_summary { /* jfrc_summary of jfrstream_conv.h */
    sum_row *rows;
    size_t nrows, caprows;
    uint32_t *slots; /* open addressing: row index + 1, 0 = empty */
    size_t capslots;
    /* keyed by id: the rows of the ids below SUM_DIRECT (the JDK's and most
     * producers' type ids), row index + 1, 0 = none: a record costs a load,
     * not a probe whose length the type order makes unpredictable */
    uint32_t direct[SUM_DIRECT];
    bool by_name;
    bool have_first;
    uint16_t major, minor;
    int64_t start_nanos;
    uint64_t total_duration; /* Java long arithmetic: wraps */
    int64_t chunks;
    size_t min_width;
    bool nomem;
    jfr_allocator alloc; /* rows, names, slots and the struct (conv.c) */
} sum_table;

#define SUM_NONE UINT32_MAX

/* `a`: every allocation of the table (NULL: libc); allocates nothing. */
void sum_init(sum_table *s, bool by_name, const jfr_allocator *a);
void sum_free(sum_table *s);
/* The row of a record type: found by id (or by name when keyed by name),
 * inserted with (id, name) when absent. Returns its index, or SUM_NONE
 * when out of memory (s->nomem is set). Row indexes are stable. */
uint32_t sum_row_of(sum_table *s, uint64_t id, const char *name);
/* Chunk begin: the rows of records 0 and 1 (Metadata, Checkpoint) are
 * created before any other. Returns the rows of 0 and 1. */
void sum_chunk_begin(sum_table *s, const jfr_chunk_info *c, uint32_t *row0, uint32_t *row1);
/* Chunk end (complete chunks only): chunk count, duration; the version and
 * start of the first one (when keyed by name: of the earliest one). */
void sum_chunk_end(sum_table *s, const jfr_chunk_info *c);
/* Every event type of the metadata gets a row (count 0 if never seen).
 * When rows != NULL, rows[t->index] is set to the row of each event type
 * (SUM_NONE for other types); it must hold m->ntypes entries. */
void sum_metadata(sum_table *s, const jfr_metadata *m, uint32_t *rows);
/* Count one record in a row. */
static inline void sum_count(sum_table *s, uint32_t row, uint64_t size) {
    if (row == SUM_NONE)
        return;
    s->rows[row].count++;
    s->rows[row].size += (int32_t)(uint32_t)size; /* the JDK reads the size as an int */
}
/* The row of a record whose type id has no event type in the metadata. */
uint32_t sum_row_missing(sum_table *s, uint64_t id);
/* Print the table as `jfr summary` does (sorts the rows: indexes change). */
void sum_print(sum_table *s, outbuf *o);

#endif
