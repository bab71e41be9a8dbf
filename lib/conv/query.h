/*
 * query.h — the query language of the JDK's `jfr view` (JDK 25's
 * jdk.jfr.internal.query, the reference), public as jfrc_query.
 *
 * Three parts, one file each: query_parse.c reads a query the way the JDK's
 * tokenizer does (case-insensitive keywords matched as prefixes, quotes
 * anywhere in a token, the JDK's error messages and positions) and prints it
 * back as Query.toString does (`view --verbose`); query_run.c resolves it
 * against the first metadata of the input and aggregates the events of the
 * types it names into one row per group; query_render.c formats, sorts and
 * prints the rows as the JDK's TableRenderer / FormRenderer do. The views
 * themselves are data (views.ini, compiled in by gen-header.py).
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#ifndef JFRSTREAM_CONV_QUERY_H
#define JFRSTREAM_CONV_QUERY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "jfrstream.h"
#include "jfrstream_conv.h"
#include "outbuf.h"

/* Aggregators, in the order the JDK's parser tries them. */
typedef enum qagg {
    QA_MISSING, QA_AVG, QA_COUNT, QA_DIFF, QA_FIRST, QA_LAST, QA_LIST, QA_SET, QA_MAX,
    QA_MEDIAN, QA_MIN, QA_P90, QA_P95, QA_P99, QA_P999, QA_STDEV, QA_SUM, QA_UNIQUE,
    QA_LAST_BATCH, QA_N
} qagg;
extern const char *const jq_agg_names[QA_N];

typedef enum qorder { QO_NONE, QO_ASC, QO_DESC } qorder;

typedef struct qexpr {
    char *name;
    char *alias; /* NULL: none */
    qagg agg;
} qexpr;

typedef struct qsource {
    char *name;
    char *alias;
} qsource;

typedef struct qcond {
    char *field;
    char *value;
} qcond;

typedef struct qorderel {
    char *name;
    qorder order;
} qorderel;

/* A FORMAT property: its text as written, and what it sets. */
typedef enum qprop_kind {
    QP_NONE, QP_NORMALIZED, QP_TRUNC_BEGIN, QP_TRUNC_END, QP_MISSING, QP_CELL_HEIGHT,
    QP_PRECISION
} qprop_kind;
typedef struct qprop {
    char *text;
    qprop_kind kind;
    int value;      /* cell height, precision */
    char *missing;  /* missing text */
} qprop;
typedef struct qformat {
    qprop *props;
    size_t nprops;
} qformat;

/* A parsed query: Query.java's fields. Strings are NUL-terminated UTF-8,
 * owned by the query's arena. */
typedef struct jq_query {
    char **column;
    size_t ncolumn;
    qformat *format;
    size_t nformat;
    qexpr *select; /* nselect 0: SELECT * */
    size_t nselect;
    qsource *from;
    size_t nfrom;
    qcond *where;
    size_t nwhere;
    char **group;
    size_t ngroup;
    qorderel *order;
    size_t norder;
    int64_t limit; /* INT32_MAX: none */
} jq_query;

/* A bump arena: every string and array of a query and its run. */
typedef struct jq_arena {
    const jfr_allocator *a;
    struct jq_block *head;
    size_t used, cap;
    uint64_t bytes; /* all blocks */
} jq_arena;
void *jq_alloc(jq_arena *ar, size_t n); /* zeroed, 8-aligned; NULL: refused */
char *jq_strndup(jq_arena *ar, const char *s, size_t n);
void jq_arena_free(jq_arena *ar);

/* Parse `text` (len bytes) into *q. 0, or -1 with msg ("Expected FROM") and
 * *pos (UTF-16 index, as the JDK reports it) set. */
int jq_parse(jq_arena *ar, const char *text, size_t len, jq_query *q, char *msg, size_t msglen,
             size_t *pos);
/* Query.toString. */
void jq_print(const jq_query *q, outbuf *o);
/* ViewPrinter's query print at `width`: the text of jq_print cut into lines
 * of at most width UTF-16 units at token boundaries. False when out of
 * memory. */
bool jq_print_wrapped(const jq_query *q, outbuf *o, int64_t width, jq_arena *ar);

/* One view of views.ini. */
typedef struct jq_view {
    const char *category, *name, *label, *query;
    bool form;
} jq_view;
/* The views, in views.ini's order (parsed once, on first use; NULL when
 * out of memory). */
const jq_view *jq_views(size_t *n);

/* s as Java decodes UTF-8 (new String(bytes, UTF_8)): each malformed
 * sequence becomes U+FFFD; a copy in the arena, NUL-terminated (NULL when
 * refused). */
char *jq_utf8_decoded(jq_arena *ar, const char *s, size_t n, size_t *out_len);
/* Java's String.hashCode of UTF-8 text (over its UTF-16 units). */
int32_t jq_java_string_hash(const char *s, size_t len);
/* ASCII letters equal in either case (false for NULL). */
bool jq_iequal(const char *a, const char *b);
/* Byte offset of UTF-16 unit `units` in s (len if past the end). */
size_t jq_u16_offset(const char *s, size_t len, size_t units);

#endif /* JFRSTREAM_CONV_QUERY_H */
