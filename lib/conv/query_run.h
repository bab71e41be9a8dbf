/*
 * query_run.h — a query's resolution, aggregation and rows (query_run.c),
 * shared with its renderer (query_render.c). Private to libjfrstream_conv.
 *
 * Values are the Java objects the JDK's query engine holds, reduced to what
 * it does with them: boxed numbers keep their class (Long, Integer, ...:
 * comparisons, hashes and sums depend on it), Instants and Durations their
 * seconds and nanos, and the objects of the recording (strings, classes,
 * methods and frames, threads, stack traces, class loaders, thread groups)
 * are interned once each (qobj): their text, short text, the Java hash of
 * the key the JDK groups them by, and identity for equality.
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#ifndef JFRSTREAM_CONV_QUERY_RUN_H
#define JFRSTREAM_CONV_QUERY_RUN_H

#include "query.h"
#include "mem.h"
#include "ticks.h" /* jfr__java_d2l */

#include <string.h>

enum {
    JV_NULL, JV_BYTE, JV_SHORT, JV_INT, JV_LONG, JV_FLOAT, JV_DOUBLE, JV_BOOL, JV_CHAR,
    JV_INSTANT, JV_DURATION, JV_OBJ, JV_LIST
};
enum { QK_STR, QK_CLASS, QK_THREAD, QK_METHOD, QK_STACK, QK_LOADER, QK_GROUP, QK_OTHER };

typedef struct qobj {
    uint8_t kind;
    int32_t jhash;          /* hashCode of the JDK's grouping key          */
    const char *text;       /* FieldFormatter.format; NULL: missing (loader) */
    size_t tlen;
    const char *compact;    /* formatCompact                               */
    size_t clen;
    uint32_t nframes;       /* stack traces: the frames (method qobjs)     */
    const struct qobj **frames;
    /* interning */
    struct qobj *next;
    uint64_t h;
    const uint8_t *eq;
    size_t eqlen;
} qobj;

typedef struct jv {
    uint8_t k;
    bool b;
    int32_t ns;   /* Instant / Duration nanos */
    int64_t i;    /* integers, chars; Instant / Duration seconds */
    double d;     /* float / double */
    const void *o; /* JV_OBJ: qobj; JV_LIST: qlist */
} jv;

typedef struct qlist {
    size_t n;
    jv *v;
} qlist;

typedef struct qfield qfield;
typedef struct qftype qftype;

/* Where a call of jq_run_event stands in the JDK's order of the events (by
 * chunk, then end time, then file order; then the order of the query's
 * types an event feeds), so that what depends on that order (FIRST, LAST,
 * ties of MIN and MAX, the groups' order) comes out the same when a chunk's
 * events arrive in file order (jq_run.file_order); in arrival order (b a
 * count) otherwise. */
typedef struct jq_key {
    uint64_t a;
    int64_t b;
    uint64_t c;
    uint32_t d;
} jq_key;

struct qfield {
    qftype *type;
    char *name;
    char *label;
    int index;
    /* how the value is read */
    int getter;           /* G_* of query_run.c */
    int frame;            /* topFrame / topApplicationFrame / topNotInitFrame */
    char *path;           /* dotted field path (under the frame for frame getters) */
    const char *data_type;
    /* FieldBuilder's flags */
    bool visible, align_left, normalized, lexical, percentage, frequency, memaddr, bytes,
        bits, fractional, integral, timespan, timestamp, fixed_width, to_string;
    int cell_height;
    int truncate; /* 0 none, 1 beginning, 2 end */
    const char *missing;
    int precision;
    qagg agg;
    bool grouper;
    int8_t fnk; /* how it aggregates (FN_* of query_run.c), once resolved */
    int orderer; /* index into the query's ORDER BY, or -1 */
    /* the fields that feed it (itself first), primary only */
    qfield **sources;
    size_t nsources, capsources;
    /* LAST_BATCH: end time of the last event it saw */
    int64_t last_s;
    int32_t last_ns;
    /* resolved per chunk */
    int32_t idx[16];
    int depth; /* -1: absent in this chunk */
    bool start_ticks; /* the event's field 0, a tick timestamp: jfr_event's */
};

typedef struct qfilter {
    qfield *field;
    const char *value;
} qfilter;

struct qftype {
    const jfr_type *type; /* of the first metadata */
    char *name, *simple, *label;
    bool experimental;
    qfilter *filters;
    size_t nfilters, capfilters;
    qftype *same; /* an earlier, equal FilteredType (same type and filters) */
    qfield **feed; /* the primary fields its events feed, in table order */
    const qfield **feedsrc; /* for each, the field of this type that reads it */
    uint32_t *feedsame;     /* for each, an earlier one reading the same (per chunk) */
    size_t nfeed, capfeed;
    struct jq_run *run;
    uint32_t sub; /* its index in jq_run.types: the order of its callbacks */
    /* no WHERE, and the keys it groups by are of its event type alone
     * (eventType.label..., or the one group of a query without GROUP BY):
     * all its events of a chunk go to one group, kept here; type_keyed
     * (order_free runs): so are the values it feeds (or COUNT's, read
     * nothing); count_only: and all they feed but the keys is COUNT */
    bool group_const, type_keyed, count_only;
    /* per chunk (jq_run_metadata), order_free runs: when every value it
     * feeds but COUNT's and its group's keys is an integer field of its
     * event or its start time (no other timestamp, no text), the nint fields int_idx[] of
     * int_type's events are read at once (jfr_event_ints), int_kind[] the
     * value's class (JV_DURATION: a timespan of int_units[]); feed k is
     * folded by step int_op[k] (INT_*) of int_slot[k], the value's index
     * in int_idx[] or (INT_KEY) the group's key's */
    const jfr_type *int_type;
    uint32_t nint, int_idx[16];
    uint8_t int_slot[64], int_op[64];
    uint8_t int_kind[16];
    uint32_t int_units[16];
    /* and when its groups' keys are all read through one pooled field of
     * the event (objectClass, eventThread, stackTrace.topFrame...), so
     * that within a chunk the constant's key decides the group: ref_slot,
     * the slot of that key in int_idx (-1: none), and refmap, the chunk's
     * groups found so far by that key (nref of them; entries of another
     * chunk_gen are free) */
    int8_t ref_slot;
    struct qref *refmap;
    uint32_t nref;
    uint64_t refgen;
    jv *tvals;
    struct qgroup *tgroup;
    const jfr_type *tgroup_type;
    uint64_t tgroup_gen;
};

typedef struct qrow {
    jv *v;
    char **text;
    size_t *tlen;
} qrow;

typedef struct jq_run {
    jq_arena ar;
    jq_query q;
    bool resolved, failed, syntax_error;
    char *err; /* the reason it failed (arena), "" before */
    qftype **types; /* the types to subscribe to (equal ones merged) */
    size_t ntypes, captypes;
    qftype **ftall; /* every type made */
    size_t nftall, capftall;
    qfield **fields;
    size_t nfields, capfields;
    qfield **all; /* every field made, primary or not, for chunk resolution */
    size_t nall, capall;
    qrow *rows;
    size_t nrows, caprows;
    struct qgroups *groups;
    struct qintern *intern;
    struct { int64_t id; const char *label; } *setlab; /* ActiveSetting ids */
    size_t nsetlab;
    bool implicit_group;
    /* strings re-decoded as Java decodes malformed UTF-8 (a ring: a few
     * are live at once while an object is made) */
    struct { char *p; size_t cap; } dec[8];
    unsigned ndec;
    uint64_t events;
    int64_t since_nanos; /* events ending before it are left out (0: none) */
    /* the result does not depend on the order of a chunk's events (every
     * aggregate is one field_order_free takes): events are keyed (jq_key) */
    bool order_free;
    /* order_free only while each AVG of integers sums exactly (at most
     * 2^53 in magnitude): jfrc_query_order_lost checks after the run */
    bool order_checked;
    bool keyed;      /* file_order was set once: keys start with the chunk */
    bool file_order; /* this chunk's events arrive in file order */
    bool any_file_order; /* some chunk's events arrived in file order */
    uint64_t seq;    /* arrival count, for keys in arrival order */
    jq_key last;     /* the latest call that reached a group */
    bool any_call;
    uint64_t chunk_gen; /* jq_run_chunk calls */
} jq_run;

/* java.util.HashMap's iteration order after computeIfAbsent put `count`
 * keys of these hashCode()s in this order, with one more call after the
 * last one when `trailing`: order[k], the index of the k-th key it
 * iterates over (java_map.c). false: no memory. */
bool jq_java_map_order(const jfr_allocator *a, const int32_t *hash, size_t count, bool trailing,
                       size_t *order);
int jq_run_error(jq_run *r, bool syntax, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int jq_resolve(jq_run *r, const jfr_metadata *m);
void jq_run_metadata(jq_run *r, const jfr_metadata *m);
void jq_run_chunk(jq_run *r);
int jq_field_value(jq_run *r, const qfield *f, const jfr_event *e, jv *out);
const char *jq_setting_label(jq_run *r, int64_t id);
/* query_value.c: Java's hashCode, equals and compareTo of the values. */
int32_t jq_jv_hash(const jv *v);
bool jq_jv_equal(const jv *a, const jv *b);
int jq_jv_compare(const jv *a, const jv *b); /* values of one class */
bool jq_jv_comparable(const jv *v);          /* a Comparable (not null, an object) */
/* Inline: several per aggregate per event. */
static inline bool jq_is_number(const jv *v) { return v->k >= JV_BYTE && v->k <= JV_DOUBLE; }
static inline bool jq_is_integral(const jv *v) { return v->k >= JV_BYTE && v->k <= JV_LONG; }
/* Number.doubleValue, Number.longValue */
static inline double jq_num_d(const jv *v) { return jq_is_integral(v) ? (double)v->i : v->d; }
static inline int64_t jq_num_l(const jv *v) { return jq_is_integral(v) ? v->i : jfr__java_d2l(v->d); }
int jq_cmp_d(double a, double b); /* Double.compare */
/* A growing text in the run's arena. */
typedef struct jq_fbuf {
    char *p;
    size_t n, cap;
    jq_run *r;
    bool oom;
} jq_fbuf;
void jq_fput(jq_fbuf *b, const char *s, size_t n);
/* Sort n elements of `size` bytes at base, keeping equal ones in their
 * order (Java's List.sort: a merge sort), through the allocator's scratch;
 * false when it could not be had (base unchanged). Inline, so that each
 * caller's constant size and comparison are compiled in (percentiles sort
 * every value of a group). */
static inline __attribute__((always_inline)) bool
jq_stable_sort(const jfr_allocator *a, void *base, size_t n, size_t size,
               int (*cmp)(const void *, const void *, void *), void *ctx) {
    if (n < 2)
        return true;
    unsigned char *v = base, *tmp = jfr__alloc(a, n * size);
    if (!tmp)
        return false;
    for (size_t w = 1; w < n; w *= 2) {
        for (size_t lo = 0; lo < n; lo += 2 * w) {
            size_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
            size_t i = lo, j = mid, k = lo;
            while (i < mid && j < hi) {
                bool right = cmp(v + j * size, v + i * size, ctx) < 0; /* ties: the left */
                memcpy(tmp + k++ * size, v + (right ? j++ : i++) * size, size);
            }
            memcpy(tmp + k * size, v + i * size, (mid - i) * size);
            k += mid - i;
            memcpy(tmp + k * size, v + j * size, (hi - j) * size);
        }
        memcpy(v, tmp, n * size);
    }
    jfr__free(a, tmp, n * size);
    return true;
}
/* One event of from-type ft. */
int jq_run_event(jq_run *r, qftype *ft, const jfr_event *e);
/* After the last event: the rows (groups in the JDK's HashMap order). */
int jq_run_finish(jq_run *r);
/* An order_checked run in file order whose AVG of integers did not sum
 * exactly: its result may not be the JDK's. */
bool jq_run_order_lost(const jq_run *r);
/* FieldFormatter.format / formatCompact of v into the run's scratch. */
const char *jq_format(jq_run *r, const qfield *f, const jv *v, bool compact, size_t *len);
int jq_run_init(jq_run *r, const jfr_allocator *a);
void jq_run_free(jq_run *r);

#endif /* JFRSTREAM_CONV_QUERY_RUN_H */
