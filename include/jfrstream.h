/*
 * jfrstream.h — incremental (push) parser for Java Flight Recorder data.
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 *
 * OVERVIEW
 *   A jfr_parser accepts JFR bytes in slices of any size (one byte, or a whole
 *   file at once: the callback sequence is identical) and calls back, SAX style:
 *
 *     on_chunk_begin  -> on_metadata -> (on_record, on_event)* -> on_chunk_end
 *
 *   per chunk. A chunk is buffered until the size declared in its header has
 *   arrived; when a single feed call already holds the whole chunk it is parsed
 *   in place, without a copy. Metadata and constant pools are indexed once per
 *   chunk; events are decoded lazily: reading a field decodes just that field.
 *
 *   Minimal use:
 *
 *     static int on_event(jfr_parser *p, const jfr_event *e, void *user) {
 *         printf("%s\n", e->type->name);
 *         return JFR_CB_CONTINUE;
 *     }
 *     jfr_callbacks cb = { .size = sizeof cb, .on_event = on_event };
 *     jfr_parser *p = jfr_parser_new(NULL, &cb, NULL);
 *     while ((n = read(fd, buf, sizeof buf)) > 0)
 *         if (jfr_parser_feed(p, buf, n) != JFR_OK) break;
 *     jfr_parser_finish(p);
 *     jfr_parser_free(p);
 *
 * LIFETIMES
 *   Everything handed to a callback (event, values, strings, types, chunk info)
 *   is borrowed: valid until that callback returns, except types/fields/
 *   annotations (jfr_metadata), which stay valid until the end of the chunk
 *   (on_chunk_end returns).
 *
 * THREADS
 *   A parser is used by one thread at a time. Distinct parsers are independent.
 *   With jfr_parser_set_threads(p, N > 1) (experimental, see below) a parser
 *   also runs helper threads of its own; callbacks still run only on the
 *   thread that called jfr_parser_feed / jfr_parser_finish.
 *
 * RETURN VALUES (one convention; each declaration below says which applies)
 *   - A function that can fail returns a jfr_status: JFR_OK (0) on success,
 *     otherwise why not. Its results go to out-parameters. A required
 *     pointer that is NULL is JFR_INVALID_ARG.
 *   - An iterator step (jfr_iter_next) returns JFR_OK with the next item,
 *     JFR_END when there is none left, or an error.
 *   - A lookup that may find nothing returns what it found or a sentinel,
 *     never a status (not finding is not an error): NULL for a pointer
 *     (jfr_metadata_type_named, jfr_metadata_type_by_id, jfr_annotation_find,
 *     jfr_parser_metadata, jfr_status_name), JFR_NO_FIELD for an index
 *     (jfr_type_field_index), 0 for a length (jfr_varint_decode,
 *     jfr_chunk_size_at).
 *   - The constructor jfr_parser_new returns the parser, or NULL (out of
 *     memory, or an invalid options/callbacks size). The libuv front ends
 *     start with a jfr_status (jfrstream_uv.h).
 *   - Getters and statistics (jfr_parser_bytes, jfr_version_number, ...)
 *     return their value and cannot fail; given a NULL parser they return
 *     0 or NULL (jfr_parser_status: JFR_INVALID_ARG).
 *   - Functions returning void cannot fail; jfr_parser_free and
 *     jfr_parser_reset accept NULL.
 *   - Callbacks return JFR_CB_CONTINUE, JFR_CB_PAUSE or JFR_CB_STOP.
 *
 * STRUCTS YOU HAND IN (the ABI rule)
 *   Every struct a caller fills in for the library (jfr_options,
 *   jfr_callbacks, and in jfrstream_uv.h jfr_uv_listener_config and
 *   jfr_uv_tail_config) starts with `size_t size`: sizeof the struct as the
 *   caller was compiled. Set it with the struct's init function
 *   (jfr_options_init, jfr_callbacks_init, ...) or its initialiser macro
 *   (JFR_OPTIONS_INIT, JFR_CALLBACKS_INIT, ...); both zero every other
 *   member, and a zero member is that member's default. The library reads
 *   only the first min(size, its own sizeof) bytes: members a later version
 *   appends (new members are only ever appended) take their defaults for a
 *   caller compiled before them, so such a caller keeps working with a newer
 *   library without being rebuilt. A size below sizeof(size_t) (a struct
 *   zeroed but not initialised) is an invalid argument. These structs are
 *   copied by the call that takes them and need not outlive it. None embeds
 *   another such struct by value (a config points to its options and
 *   callbacks), so each grows on its own; jfr_allocator, embedded in
 *   jfr_options, is fixed for good. Experimental settings are functions,
 *   never struct members, so no layout depends on JFRSTREAM_EXPERIMENTAL.
 *   The structs the library fills in for you (jfr_value, jfr_iter,
 *   jfr_stack, jfr_event, ...) are not covered: a release that changes them
 *   changes the library's major version.
 *
 * PAUSE (the one rule, wherever it happens)
 *   A callback (on_chunk_begin, on_metadata, on_record, on_event, a handler
 *   of jfr_parser_on, on_chunk_end) that returns JFR_CB_PAUSE ends the
 *   jfr_parser_feed or jfr_parser_finish call it runs in right after it
 *   returns: that call returns JFR_PAUSED, and jfr_parser_status() says
 *   JFR_PAUSED until the next feed or finish call. The callback that paused
 *   counts as made and is not repeated (the other handlers of the same
 *   event, if any, are still to come); the parser keeps its own copy of
 *   whatever it still needs from the caller's buffer.
 *   - Mid-input (feed returned JFR_PAUSED): jfr_parser_consumed() bytes of
 *     that call were taken; the rest were not looked at. Resume by calling
 *     jfr_parser_feed with the bytes not taken (buf + consumed, in slices of
 *     any size), or with the next bytes when all were taken, or with
 *     (NULL, 0) to resume without new bytes: the paused work resumes first,
 *     before any new byte is read. Every feed call may pause again.
 *   - At the end of input: call jfr_parser_finish once every byte was taken.
 *     It resumes what was paused, then ends the input (what is left is
 *     dispatched, an unfinished chunk reported); when it returns
 *     JFR_PAUSED, call it again, as often as it says so. The input is ended
 *     only when finish returns something else: JFR_OK, JFR_STOPPED or an
 *     error. A pause never ends the input, and never loses or reorders a
 *     callback: the sequence is the one of a run without pauses, whatever
 *     the points paused at and the slicing. (Calling finish while bytes of a
 *     paused feed call were not taken ends the input before them.)
 *   - on_error's answer is not a pause: JFR_CB_CONTINUE passes the error
 *     over, anything else (JFR_CB_PAUSE included) stops at it.
 *   A paused parser may also simply be reset or freed.
 *
 * STABILITY
 *   The stable API is everything declared without JFRSTREAM_EXPERIMENTAL.
 *   The items in the EXPERIMENTAL section at the end are declared only when
 *   the including file defines JFRSTREAM_EXPERIMENTAL before including this
 *   header (as zstd's ZSTD_STATIC_LINKING_ONLY): they may change or go away
 *   between minor versions.
 */
#ifndef JFRSTREAM_H
#define JFRSTREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * JFR_API marks every public function: the shared libraries are built with
 * hidden visibility, so these declarations are all they export (a test checks
 * that every exported name is declared under include/). Define JFR_API before
 * including this header to override it (e.g. empty, for a static build).
 */
#ifndef JFR_API
#if defined(__GNUC__) && __GNUC__ >= 4
#define JFR_API __attribute__((visibility("default")))
#else
#define JFR_API
#endif
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ version */

#define JFR_VERSION_MAJOR 0
#define JFR_VERSION_MINOR 2
#define JFR_VERSION_PATCH 0
#define JFR_VERSION_NUMBER \
    (JFR_VERSION_MAJOR * 10000 + JFR_VERSION_MINOR * 100 + JFR_VERSION_PATCH)
#define JFR_STRINGIFY_(x) #x
#define JFR_STRINGIFY(x) JFR_STRINGIFY_(x)
#define JFR_VERSION_STRING                                                     \
    JFR_STRINGIFY(JFR_VERSION_MAJOR) "." JFR_STRINGIFY(JFR_VERSION_MINOR) "."  \
    JFR_STRINGIFY(JFR_VERSION_PATCH)

/* Runtime version of the linked library: JFR_VERSION_NUMBER / _STRING. */
JFR_API unsigned jfr_version_number(void);
JFR_API const char *jfr_version_string(void);

/* ------------------------------------------------------------------- status */

/*
 * Status codes. One table generates the enum and the default messages
 * (jfr_status_name / jfr_status_str). JFR_OK is 0. Not errors: JFR_OK;
 * JFR_PAUSED and JFR_STOPPED (a callback asked for them); JFR_SKIPPED
 * (resynchronisation skipped damaged bytes and went on: told to on_error
 * with the bytes skipped, never returned by a call); JFR_END (an iterator
 * has no more items). Every other value is an error. New codes are only
 * ever appended.
 */
#define JFR_STATUS_MAP(X)                                                      \
    X(0, OK, "ok")                                                             \
    X(1, PAUSED, "paused by a callback")                                       \
    X(2, STOPPED, "stopped by a callback")                                     \
    X(3, NOMEM, "out of memory")                                               \
    X(4, BAD_MAGIC, "not a JFR chunk (bad magic)")                             \
    X(5, BAD_VERSION, "unsupported JFR version")                               \
    X(6, BAD_CHUNK_SIZE, "chunk size field out of range")                      \
    X(7, CHUNK_TOO_LARGE, "chunk larger than the configured maximum")          \
    X(8, TRUNCATED, "input ended inside a chunk")                              \
    X(9, BAD_RECORD, "record size or type out of range")                       \
    X(10, BAD_VARINT, "malformed integer")                                     \
    X(11, BAD_STRING, "malformed string")                                      \
    X(12, BAD_METADATA, "malformed metadata record")                           \
    X(13, NO_METADATA, "chunk has no metadata record")                         \
    X(14, BAD_CHECKPOINT, "malformed checkpoint record")                       \
    X(15, BAD_EVENT, "event record does not match its type")                   \
    X(16, LIMIT, "a configured limit was exceeded")                            \
    X(17, INVALID_ARG, "invalid argument")                                     \
    X(18, INVALID_STATE, "call not allowed in this parser state")              \
    X(19, NOT_FOUND, "no such field or type")                                  \
    X(20, TYPE_MISMATCH, "value is not of the requested kind")                 \
    X(21, SKIPPED, "bytes skipped to the next chunk magic")                    \
    X(22, END, "no more items")                                                \
    X(23, IO, "I/O error")                                                     \
    X(24, UNSUPPORTED, "not supported by this build")                          \
    X(25, REFUSED, "peer refused (TLS handshake or client certificate)")

typedef enum jfr_status {
#define JFR_STATUS_ENUM_(n, name, msg) JFR_##name = n,
    JFR_STATUS_MAP(JFR_STATUS_ENUM_)
#undef JFR_STATUS_ENUM_
} jfr_status;

/* JFR_BAD_MAGIC -> "BAD_MAGIC"; NULL for an unknown code. */
JFR_API const char *jfr_status_name(jfr_status s);
/* Short description of a status code (never NULL). */
JFR_API const char *jfr_status_str(jfr_status s);

/* ---------------------------------------------------------------- allocator */

/*
 * Custom allocator (zstd style). Any member may be NULL to use the libc
 * function. realloc_fn may be NULL when alloc_fn and free_fn are given; the
 * parser then allocates, copies and frees. free_fn receives the old size.
 */
typedef struct jfr_allocator {
    void *(*alloc_fn)(void *ctx, size_t size);
    void *(*realloc_fn)(void *ctx, void *ptr, size_t old_size, size_t new_size);
    void (*free_fn)(void *ctx, void *ptr, size_t size);
    void *ctx;
} jfr_allocator;

/* ----------------------------------------------------------------- metadata */

/* Unit and interpretation annotations of a field (or its type), as bits. */
enum jfr_unit {
    JFR_UNIT_NONE = 0,
    JFR_UNIT_TIMESTAMP_TICKS = 1u << 0,  /* @Timestamp("TICKS")           */
    JFR_UNIT_TIMESTAMP_MILLIS = 1u << 1, /* @Timestamp("MILLISECONDS_SINCE_EPOCH") */
    JFR_UNIT_TIMESPAN_TICKS = 1u << 2,   /* @Timespan("TICKS")            */
    JFR_UNIT_TIMESPAN_NANOS = 1u << 3,   /* @Timespan("NANOSECONDS")      */
    JFR_UNIT_TIMESPAN_MICROS = 1u << 4,  /* @Timespan("MICROSECONDS")     */
    JFR_UNIT_TIMESPAN_MILLIS = 1u << 5,  /* @Timespan("MILLISECONDS")     */
    JFR_UNIT_TIMESPAN_SECONDS = 1u << 6, /* @Timespan("SECONDS")          */
    JFR_UNIT_UNSIGNED = 1u << 7,         /* @Unsigned                     */
    JFR_UNIT_PERCENTAGE = 1u << 8,       /* @Percentage (0..1)            */
    JFR_UNIT_MEMORY_ADDRESS = 1u << 9,   /* @MemoryAddress                */
    JFR_UNIT_BYTES = 1u << 10,           /* @DataAmount("BYTES")          */
    JFR_UNIT_BITS = 1u << 11,            /* @DataAmount("BITS")           */
    JFR_UNIT_FREQUENCY = 1u << 12,       /* @Frequency                    */
    JFR_UNIT_BOOLEAN_FLAG = 1u << 13     /* @BooleanFlag                  */
};
#define JFR_UNIT_TIMESTAMP (JFR_UNIT_TIMESTAMP_TICKS | JFR_UNIT_TIMESTAMP_MILLIS)
#define JFR_UNIT_TIMESPAN                                                      \
    (JFR_UNIT_TIMESPAN_TICKS | JFR_UNIT_TIMESPAN_NANOS |                       \
     JFR_UNIT_TIMESPAN_MICROS | JFR_UNIT_TIMESPAN_MILLIS |                     \
     JFR_UNIT_TIMESPAN_SECONDS)

/* What a type is. Primitive kinds are those whose name is a Java primitive. */
typedef enum jfr_base {
    JFR_BASE_STRUCT = 0, /* any composite type: events, pool types, ...   */
    JFR_BASE_BOOLEAN,
    JFR_BASE_BYTE,
    JFR_BASE_CHAR,
    JFR_BASE_SHORT,
    JFR_BASE_INT,
    JFR_BASE_LONG,
    JFR_BASE_FLOAT,
    JFR_BASE_DOUBLE,
    JFR_BASE_STRING /* java.lang.String */
} jfr_base;

typedef struct jfr_type jfr_type;

/* One metadata attribute of an annotation: key ("value", "value-0", ...) and value. */
typedef struct jfr_attr {
    const char *key;
    const char *value;
} jfr_attr;

typedef struct jfr_annotation {
    const jfr_type *type; /* the annotation type (type->name "jdk.jfr.Label") */
    const char *value;    /* the "value" attribute, or NULL               */
    uint32_t nattrs;      /* every attribute except "class"               */
    const jfr_attr *attrs;
} jfr_annotation;

typedef struct jfr_field {
    const char *name;
    const jfr_type *type;    /* declared type (element type for arrays)       */
    bool array;              /* dimension 1                                   */
    bool pooled;             /* constantPool: value is a key into a pool      */
    uint32_t index;          /* position within the owning type's fields      */
    uint32_t units;          /* enum jfr_unit bits, from the field's annotations */
    const char *label;       /* @Label, or NULL                               */
    const char *description; /* @Description, or NULL                         */
    uint32_t nannotations;
    const jfr_annotation *annotations;
} jfr_field;

/* A <setting> element of an event type (jdk.settings.*). */
typedef struct jfr_setting {
    const char *name;
    const jfr_type *type;
    const char *default_value;
    uint32_t nannotations;
    const jfr_annotation *annotations;
} jfr_setting;

struct jfr_type {
    uint64_t id;             /* the writer's type id (per chunk)              */
    uint32_t index;          /* dense index in jfr_metadata.types             */
    const char *name;        /* "jdk.ExecutionSample", "java.lang.Thread", ... */
    const char *super_type;  /* "jdk.jfr.Event", ... or NULL                  */
    jfr_base base;
    bool simple;             /* simpleType: one field, shown flattened         */
    bool is_event;           /* super_type == "jdk.jfr.Event"                 */
    const char *label;       /* @Label, or NULL                               */
    const char *description; /* @Description, or NULL                         */
    uint32_t units;          /* enum jfr_unit bits of the type's own annotations */
    uint32_t nfields;
    const jfr_field *fields;
    uint32_t nsettings;
    const jfr_setting *settings;
    uint32_t nannotations;
    const jfr_annotation *annotations;
};

/* The type table of a chunk (its last metadata record). */
typedef struct jfr_metadata {
    uint64_t metadata_id;     /* writer's metadata id                       */
    uint64_t fingerprint;     /* XXH3 of the type-system bytes              */
    bool reused;              /* identical to the previous chunk's: reused  */
    int64_t gmt_offset_ms;    /* <region gmtOffset>, 0 if absent            */
    int64_t dst_ms;           /* <region dst>, 0 if absent                  */
    const char *locale;       /* <region locale>, or NULL                   */
    uint32_t ntypes;
    const jfr_type *const *types; /* ordered as declared                    */
} jfr_metadata;

/* Find a type by name / by writer id in a metadata table; NULL if absent
 * (lookups). */
JFR_API const jfr_type *jfr_metadata_type_named(const jfr_metadata *m, const char *name);
JFR_API const jfr_type *jfr_metadata_type_by_id(const jfr_metadata *m, uint64_t id);
/* jfr_type_field_index's sentinel: no such field. */
#define JFR_NO_FIELD (-1)
/* Field index by name (a "handle": resolve once per chunk), or JFR_NO_FIELD
 * when the type has no such field (or t or name is NULL). */
JFR_API int32_t jfr_type_field_index(const jfr_type *t, const char *name);
/* First annotation of the given type name, or NULL. */
JFR_API const jfr_annotation *jfr_annotation_find(const jfr_annotation *a, uint32_t n,
                                                  const char *type_name);

/* --------------------------------------------------------------- chunk info */

/* The 68-byte chunk header, decoded. */
typedef struct jfr_chunk_info {
    uint64_t index;            /* 0-based chunk number in this input          */
    uint64_t offset;           /* byte offset of the chunk in the input       */
    uint16_t major, minor;     /* format version: 1.0 (JDK 9, 10), 2.0, 2.1   */
    int64_t size;              /* header chunk size, header included          */
    int64_t cp_offset;         /* last checkpoint, relative to chunk start    */
    int64_t metadata_offset;   /* last metadata record, relative              */
    int64_t start_nanos;       /* wall clock at chunk start, ns since epoch   */
    int64_t duration_nanos;
    int64_t start_ticks;
    int64_t ticks_per_second;
    uint8_t state;             /* 0 = finished; 1..254 live generation; 255  */
    uint16_t flags;            /* JFR_CHUNK_COMPRESSED | JFR_CHUNK_FINAL      */
} jfr_chunk_info;

#define JFR_CHUNK_COMPRESSED 0x0001u /* integers are varints               */
#define JFR_CHUNK_FINAL 0x0002u      /* writer's last chunk                */

/* Raw record, for walkers such as `summary`: fired for every record of a chunk
 * (metadata, checkpoints and events) in file order, after on_metadata. */
typedef struct jfr_record {
    uint64_t chunk_index;
    uint64_t offset;       /* byte offset of the record in the input        */
    uint64_t size;         /* whole record, size field included             */
    uint64_t type_id;      /* 0 metadata, 1 checkpoint, else event type id  */
    const jfr_type *type;  /* event type, or NULL for 0/1/unknown ids       */
} jfr_record;

/* ------------------------------------------------------------------- values */

typedef enum jfr_kind {
    JFR_KIND_NULL = 0, /* null string, dangling reference, string cycle     */
    JFR_KIND_BOOLEAN,  /* v.b                                              */
    JFR_KIND_INT,      /* byte/short/int/long: v.i (signed), v.u (unsigned
                          reinterpretation at the declared width)          */
    JFR_KIND_CHAR,     /* v.u: one UTF-16 code unit                        */
    JFR_KIND_FLOAT,    /* v.d (exactly the float's value)                  */
    JFR_KIND_DOUBLE,   /* v.d                                              */
    JFR_KIND_STRING,   /* v.str, v.len: UTF-8 (lone surrogates as WTF-8)   */
    JFR_KIND_OBJECT,   /* struct: see jfr_value_field / jfr_value_iter     */
    JFR_KIND_ARRAY     /* v.count elements: see jfr_value_index / iter     */
} jfr_kind;

typedef struct jfr_chunk jfr_chunk; /* internal: the chunk a value lives in */

/*
 * A decoded value. Small, copyable, borrowed: valid during the callback.
 * Strings are UTF-8: borrowed from the chunk bytes when they were stored as
 * UTF-8, otherwise converted into a per-parser scratch area that is reset
 * before each event callback (no allocation per event once it has grown).
 */
typedef struct jfr_value {
    jfr_kind kind;
    const jfr_type *type;   /* declared type (element type for arrays)      */
    const jfr_field *field; /* field this value was read from, or NULL      */
    bool b;
    int64_t i;
    uint64_t u;
    double d;
    const char *str;
    size_t len;
    uint32_t count;         /* arrays: element count                       */
    uint8_t encoding;       /* strings: wire encoding 0..5                 */
    bool pooled;            /* came through a constant-pool reference      */
    uint64_t key;           /* pool key when pooled (also for NULL results) */
    /* private */
    const jfr_chunk *chunk_;
    uint64_t pos_;          /* offset of the value bytes in the chunk      */
    uint32_t depth_;
} jfr_value;

/* Field `index` of an OBJECT value. Pool references are resolved: the result
 * has the referenced value (OBJECT/STRING/...), or NULL kind for a key no
 * pool of the chunk defines (key 0 is an ordinary key; writers use it for
 * "no thread/stack trace" by leaving it undefined). A key defined twice
 * resolves to its first definition, as in the JDK. Chains of references are
 * followed lazily, one level per call, to any length: nothing here loops or
 * recurses along a chain, and a cycle (A -> B -> A) simply reads A again. A
 * caller that walks a whole graph detects cycles itself, by the (type, key)
 * of the pooled values open on its path (`pooled`, `key`), as `jfrstream
 * print --json` does. Only a string pool entry that refers to the string
 * pool is followed here; a cycle of those reads as NULL. Inline struct
 * nesting (counted from the event or pool entry the value is in) deeper than
 * 64 is a decode error. Returns JFR_OK, JFR_NOT_FOUND, JFR_TYPE_MISMATCH or a decode
 * error (bytes inconsistent with the metadata). */
JFR_API jfr_status jfr_value_field(const jfr_value *obj, uint32_t index, jfr_value *out);
/* Same by name (a string compare per call: prefer indexes on hot paths);
 * JFR_NOT_FOUND when the type has no such field. */
JFR_API jfr_status jfr_value_field_named(const jfr_value *obj, const char *name,
                                         jfr_value *out);
/* Element `i` of an ARRAY value: JFR_OK, JFR_NOT_FOUND (i >= count),
 * JFR_TYPE_MISMATCH (not an array) or a decode error. */
JFR_API jfr_status jfr_value_index(const jfr_value *arr, uint32_t i, jfr_value *out);
/* A simpleType OBJECT (e.g. jdk.types.Symbol) -> its single field's value;
 * any other value is copied unchanged. JFR_OK or as jfr_value_field. */
JFR_API jfr_status jfr_value_unwrap(const jfr_value *v, jfr_value *out);

/* Sequential iteration over an OBJECT's fields or an ARRAY's elements: one
 * pass over the bytes, the fastest way to read everything. */
typedef struct jfr_iter {
    jfr_value parent;
    uint32_t next;
    uint64_t pos_;
} jfr_iter;
JFR_API void jfr_iter_init(jfr_iter *it, const jfr_value *obj_or_array);
/* JFR_OK and *out set: the next item; JFR_END: no more (also for a value that
 * is neither OBJECT nor ARRAY); otherwise a decode error, after which the
 * iterator is done. it and out must not be NULL:
 *     while ((s = jfr_iter_next(&it, &v)) == JFR_OK) ...;
 *     if (s != JFR_END) ...error... */
JFR_API jfr_status jfr_iter_next(jfr_iter *it, jfr_value *out);

/* ------------------------------------------------------------------- events */

typedef struct jfr_event {
    const jfr_type *type;
    uint64_t chunk_index;
    uint64_t offset;         /* byte offset of the record in the input     */
    uint64_t size;           /* record size in bytes                       */
    int64_t start_ticks;     /* field 0                                    */
    int64_t duration_ticks;  /* field "duration" if present, else 0        */
    int64_t start_nanos;     /* epoch ns (see jfr_options.jdk_time_base)   */
    int64_t duration_nanos;
    int64_t end_nanos;       /* start + duration                           */
    /* private */
    const jfr_chunk *chunk_;
    uint64_t pos_;           /* payload offset in the chunk                */
} jfr_event;

/* The event as an OBJECT value (fields in metadata order). These return
 * JFR_OK or an error as jfr_value_field. */
JFR_API jfr_status jfr_event_value(const jfr_event *e, jfr_value *out);
/* Shorthands for jfr_event_value + jfr_value_field[_named]. */
JFR_API jfr_status jfr_event_field(const jfr_event *e, uint32_t index, jfr_value *out);
JFR_API jfr_status jfr_event_field_named(const jfr_event *e, const char *name, jfr_value *out);
/* The constant of pool type `t` (a type of the event's chunk metadata) with
 * key `key`, looked up in the event's chunk: NULL kind when the chunk's pools
 * do not define it. Lets a reader inspect a pool once per chunk (for example
 * which frame types a producer declares) without an event referring to it. */
JFR_API jfr_status jfr_event_constant(const jfr_event *e, const jfr_type *t, uint64_t key,
                                      jfr_value *out);

/* Convert a tick timestamp / timespan of this event's chunk to ns (values:
 * cannot fail). */
JFR_API int64_t jfr_event_ticks_to_epoch_nanos(const jfr_event *e, int64_t ticks);
JFR_API int64_t jfr_event_ticks_to_nanos(const jfr_event *e, int64_t ticks);

/* Well-known shapes, read through the value API. Strings as in jfr_value. */
typedef struct jfr_thread {
    bool present;            /* false: null thread                          */
    const char *os_name;   size_t os_name_len;
    const char *java_name; size_t java_name_len;
    int64_t os_thread_id;
    int64_t java_thread_id;
} jfr_thread;

typedef struct jfr_frame {
    const char *class_name;  size_t class_name_len;  /* "java/lang/String" */
    const char *method_name; size_t method_name_len;
    const char *descriptor;  size_t descriptor_len;
    int32_t line;            /* lineNumber, -1 unknown                     */
    int32_t bci;             /* bytecodeIndex                              */
    const char *frame_type;  size_t frame_type_len;  /* "Interpreted", "JIT compiled", ... */
} jfr_frame;

typedef struct jfr_stack {
    bool present;            /* false: no stack trace                       */
    bool truncated;
    uint32_t nframes;
    /* private */
    jfr_value frames_;
    uint32_t next_;          /* frame after the last one read ...         */
    uint64_t next_pos_;      /* ... and where its bytes start             */
    uint64_t key_;           /* pool key of the stack trace, if keyed_    */
    bool keyed_;
    uint32_t cached_;        /* 1 + first frame in the chunk's frame cache */
} jfr_stack;

/* These return JFR_OK, JFR_TYPE_MISMATCH (a value of another type) or a
 * decode error. A missing thread or stack is not an error: !present.
 * `v` is a Thread value (e.g. from eventThread); NULL kind -> !present. */
JFR_API jfr_status jfr_value_thread(const jfr_value *v, jfr_thread *out);
/* The event's "eventThread" (or "sampledThread") and "stackTrace". */
JFR_API jfr_status jfr_event_thread(const jfr_event *e, jfr_thread *out);
JFR_API jfr_status jfr_event_stack(const jfr_event *e, jfr_stack *out);
JFR_API jfr_status jfr_value_stack(const jfr_value *v, jfr_stack *out);
/* Frame i (0 = top): JFR_OK, JFR_NOT_FOUND (i >= nframes) or a decode error.
 * Reading frames in order costs O(1) each: the stack
 * remembers where the next frame starts. A pooled stack trace is resolved
 * once per chunk: the first call for it fills a per-chunk frame cache (at
 * most 2^21 frames, 32 MiB; beyond that frames are decoded each time), and later
 * calls for the same stack in the chunk are array reads. */
JFR_API jfr_status jfr_stack_frame(jfr_stack *s, uint32_t i, jfr_frame *out);
/* A java.lang.Class value -> its name; a jdk.types.Method value -> its
 * class_name, method_name and descriptor members of *out (always written:
 * NULL/0 when absent or for a NULL value; the other members are untouched).
 * JFR_OK, JFR_TYPE_MISMATCH or a decode error. */
JFR_API jfr_status jfr_value_class_name(const jfr_value *cls, const char **name, size_t *len);
JFR_API jfr_status jfr_value_method(const jfr_value *m, jfr_frame *out);

/* ---------------------------------------------------------------- callbacks */

/* Callback return values (every callback returns one of these). */
enum { JFR_CB_CONTINUE = 0, JFR_CB_PAUSE = 1, JFR_CB_STOP = 2 };

typedef struct jfr_parser jfr_parser;

typedef int (*jfr_chunk_cb)(jfr_parser *p, const jfr_chunk_info *c, void *user);
typedef int (*jfr_metadata_cb)(jfr_parser *p, const jfr_metadata *m, void *user);
typedef int (*jfr_record_cb)(jfr_parser *p, const jfr_record *r, void *user);
typedef int (*jfr_event_cb)(jfr_parser *p, const jfr_event *e, void *user);
/* An error. `message` includes the chunk index and byte offset. Return
 * JFR_CB_CONTINUE to skip the damaged chunk and go on with the next one when
 * the framing allows it; JFR_CB_STOP to stop. */
typedef int (*jfr_error_cb)(jfr_parser *p, jfr_status s, const char *message,
                            void *user);

/* A struct you hand in: see "STRUCTS YOU HAND IN" at the top. Any member may
 * be NULL. */
typedef struct jfr_callbacks {
    size_t size;                   /* sizeof(jfr_callbacks): JFR_CALLBACKS_INIT */
    jfr_chunk_cb on_chunk_begin;   /* header decoded                          */
    jfr_metadata_cb on_metadata;   /* chunk's type table ready (once a chunk) */
    jfr_record_cb on_record;       /* every record, file order                */
    jfr_event_cb on_event;         /* every event (unless per-type handlers
                                      exist and on_event is NULL)           */
    jfr_chunk_cb on_chunk_end;     /* after the chunk's last event            */
    jfr_error_cb on_error;         /* optional: see above                     */
} jfr_callbacks;

/* Initialisers: `jfr_callbacks cb = JFR_CALLBACKS_INIT; cb.on_event = f;`,
 * or `jfr_callbacks cb = {.size = sizeof cb, .on_event = f};`. */
#define JFR_CALLBACKS_INIT {.size = sizeof(jfr_callbacks)}
/* The same at run time: size set, every callback NULL. */
JFR_API void jfr_callbacks_init(jfr_callbacks *cb);

/* ------------------------------------------------------------------ options */

/* A struct you hand in: see "STRUCTS YOU HAND IN" at the top. */
typedef struct jfr_options {
    size_t size;            /* sizeof(jfr_options): jfr_options_init        */
    jfr_allocator allocator;
    /* Largest accepted chunk, bytes (0: default 1 GiB). A header declaring
     * more is JFR_CHUNK_TOO_LARGE; nothing is allocated for it. Buffers grow
     * with the bytes that actually arrive, never from the declared size. */
    uint64_t max_chunk_size;
    /* Deliver each chunk's events stable-sorted by end time, as `jfr print`
     * and the JDK's ordered streams do. Default: file order. */
    bool ordered;
    /* Convert ticks with the FIRST chunk's time base for every chunk, as the
     * JDK's RecordingFile does (bit-exact with `jfr print`). Default: each
     * chunk's own header (more accurate by ~100 ns on later chunks). */
    bool jdk_time_base;
    /* Resynchronise after damage: when on_error passes over an error (returns
     * JFR_CB_CONTINUE), do not trust the damaged chunk's framing: scan on from
     * the second byte of that chunk for the next "FLR\0" magic whose header
     * is plausible (version 1.x or 2.x; for a finished chunk a size within
     * max_chunk_size and offsets inside it), and go on from there. Each
     * resumption is reported through on_error as JFR_SKIPPED, with the first
     * skipped byte's offset and the count ("N bytes skipped ... next chunk
     * magic at byte M"), or at finish as the bytes skipped to the end of the
     * input; jfr_parser_skipped() adds them up. Without it (the default), a
     * chunk with a damaged body is skipped by its declared size, and a bad
     * header (magic, version, size) ends the input. Covers garbage between
     * chunks, a damaged size or header, a chunk cut short by the next one
     * (also when the input ends: jfr_parser_finish scans the unfinished
     * chunk's bytes too), and broken live-chunk framing (the rest of that
     * live chunk is lost). Each failed candidate is scanned again from its
     * second byte, so no later chunk is lost to a false one. */
    bool resync;
    /* Most bytes the parser may hold at once, all of its memory included
     * (the chunk buffer, pools and their indexes, metadata, caches, the
     * replay and scratch buffers, and the workers of jfr_parser_set_threads);
     * 0 = no limit. An allocation past it fails like one the system refused, but
     * is reported as JFR_LIMIT ("max_memory N bytes: ...") with the chunk and
     * offset; with on_error continuing, the next chunk starts afresh. A
     * finished chunk needs about its size plus its indexes (1e6 pool entries:
     * ~80 bytes each), a live one its pools plus one flush segment. */
    uint64_t max_memory;
} jfr_options;

/* Initialiser: `jfr_options o = JFR_OPTIONS_INIT;` (size set, the rest zero:
 * the defaults). */
#define JFR_OPTIONS_INIT {.size = sizeof(jfr_options)}
/* The same at run time. */
JFR_API void jfr_options_init(jfr_options *o);

/* ------------------------------------------------------------------- parser */

/* A new parser. opts and cb may be NULL (defaults; no callbacks); both are
 * copied. Returns NULL when memory runs out or when opts or cb has an invalid
 * size (see "STRUCTS YOU HAND IN"). */
JFR_API jfr_parser *jfr_parser_new(const jfr_options *opts, const jfr_callbacks *cb, void *user);
JFR_API void jfr_parser_free(jfr_parser *p);
/* Back to the initial state (for a new input), keeping subscriptions and
 * settings. */
JFR_API void jfr_parser_reset(jfr_parser *p);

JFR_API void *jfr_parser_user(const jfr_parser *p);
JFR_API void jfr_parser_set_user(jfr_parser *p, void *user);

/*
 * Subscribe `cb` to one event type, by name. Names resolve to type ids once
 * per chunk; events of types nobody subscribed to (and no on_event) are
 * skipped by their size, never decoded. Several callbacks per name are called
 * in subscription order, after the generic on_event. May be called before the
 * first feed, between chunks, and from on_chunk_begin or on_metadata (e.g. to
 * subscribe by category or pattern after looking at the chunk's types);
 * from on_record/on_event it returns JFR_INVALID_STATE. Returns JFR_OK,
 * JFR_INVALID_ARG, JFR_INVALID_STATE or JFR_NOMEM.
 */
JFR_API jfr_status jfr_parser_on(jfr_parser *p, const char *type_name, jfr_event_cb cb,
                                 void *user);

/*
 * Push `len` bytes. Returns JFR_OK when all bytes were taken; JFR_PAUSED or
 * JFR_STOPPED when a callback asked for it; or an error. After JFR_PAUSED,
 * jfr_parser_consumed() bytes of this call were taken: feed the rest (or
 * call feed(p, NULL, 0)) to resume (see PAUSE at the top). After
 * JFR_STOPPED or an error not skipped by on_error, further feeds return the
 * same status.
 */
JFR_API jfr_status jfr_parser_feed(jfr_parser *p, const void *buf, size_t len);
/* Bytes of the last feed call that were taken (== len unless paused/error). */
JFR_API size_t jfr_parser_consumed(const jfr_parser *p);
/* End of input. JFR_OK; JFR_PAUSED or JFR_STOPPED when a callback asked for
 * it (after JFR_PAUSED, call finish again until it returns anything else:
 * see PAUSE at the top); JFR_TRUNCATED when a chunk is incomplete (the
 * message says how many bytes are missing); or an error. */
JFR_API jfr_status jfr_parser_finish(jfr_parser *p);

/* The last error: status (JFR_OK if none), and a message with chunk index
 * and byte offset (without an error: jfr_status_str of the status). */
JFR_API jfr_status jfr_parser_status(const jfr_parser *p);
JFR_API const char *jfr_parser_error(const jfr_parser *p);
/* Statistics. */
JFR_API uint64_t jfr_parser_chunks(const jfr_parser *p);     /* chunks completed  */
JFR_API uint64_t jfr_parser_bytes(const jfr_parser *p);      /* bytes taken       */
/* Bytes [0, N) of the input whose records have all been called back: the
 * end of the last chunk or live flush segment whose callbacks all ran (the
 * whole input once jfr_parser_finish returned JFR_OK). During a callback,
 * the start of the chunk or segment being called back; it only grows. An
 * application that hands events on (a network ack) reports this position:
 * ordered delivery sorts events within a chunk or segment, so an event's
 * own offset is not one. A chunk or segment skipped after an error does
 * not move it; the next one that succeeds does. */
JFR_API uint64_t jfr_parser_delivered(const jfr_parser *p);
JFR_API uint64_t jfr_parser_errors(const jfr_parser *p);     /* errors reported   */
JFR_API uint64_t jfr_parser_skipped(const jfr_parser *p);    /* bytes skipped by
                                                                resynchronisation */
/* Bytes the parser holds now (and, in *peak if not NULL, the most it held):
 * every allocation made through its allocator, parallel workers included. */
JFR_API uint64_t jfr_parser_memory(const jfr_parser *p, uint64_t *peak);

/* The current chunk's metadata (valid in callbacks), or NULL (lookup). */
JFR_API const jfr_metadata *jfr_parser_metadata(const jfr_parser *p);

/* ------------------------------------------------------------- wire helpers */

/* Decode one JFR varint (at most 9 bytes; the 9th contributes 8 bits).
 * Returns bytes used, or 0 if malformed/incomplete within [p, end). */
JFR_API size_t jfr_varint_decode(const uint8_t *p, const uint8_t *end, uint64_t *out);

/* The size declared by the chunk header at the start of [buf, buf+len): 0
 * when there are fewer than 68 bytes or no "FLR\0" magic. A caller holding a
 * whole file in memory can feed it one chunk per call (each chunk is then
 * parsed in place) and release a chunk's pages once its call has returned,
 * so that resident memory stays near one chunk. */
JFR_API uint64_t jfr_chunk_size_at(const void *buf, size_t len);

/* ------------------------------------------------------------ chunk writer */

/*
 * A chunk writer copies the chunks a parser reads into new, valid chunks,
 * leaving out the events its caller drops: to filter or redact a recording
 * before it is stored or forwarded (`jfrstream scrub` is built on it).
 * The caller hands it, from the parser's callbacks (on the parser's
 * thread, with jfr_options.ordered false, the default):
 *
 *     on_chunk_begin:  jfr_writer_begin(w, p, c)
 *     on_record:       jfr_writer_record(w, p, r) for each record to keep:
 *                      every metadata (type 0) and checkpoint (type 1)
 *                      record, and the events it keeps by type alone
 *     on_event:        jfr_writer_event(w, e) for each event it keeps by
 *                      its values (its thread, a field); never both calls
 *                      for one event
 *     on_chunk_end:    jfr_writer_end(w, p, c)
 *
 * Each kept record is copied as it comes (its bytes are borrowed only during
 * the callback), events and checkpoints in call order. At jfr_writer_end
 * the chunk is laid out as the JDK's own ChunkWriter (`jfr scrub`) does:
 * the 68-byte header of the input chunk (finished: state 0; flags kept),
 * the kept records, then the metadata record the parser reads the chunk
 * with (jfr_metadata: the one the header points at, else the last; other
 * metadata records are passed over); the header's chunk size, constant-pool
 * offset and metadata offset are rewritten, and so is each checkpoint's
 * delta, so that the chain runs from the last checkpoint back to the first
 * (delta 0). Constant pools are copied whole. The finished chunk is handed
 * to config.write in one call (a chunk's bytes, contiguous).
 *
 * Memory: the chunk being written, at most config.max_chunk_size bytes (0:
 * 1 GiB); a record that would make it larger is JFR_LIMIT, before anything
 * is allocated for it. Returns, for all of these: JFR_OK; JFR_INVALID_ARG
 * (a NULL argument, a record of another parser's chunk); JFR_INVALID_STATE
 * (outside begin .. end, or an on_event call from an ordered parser);
 * JFR_BAD_CHECKPOINT (a checkpoint record whose fields cannot be read);
 * JFR_NO_METADATA (end of a chunk without a kept metadata record); JFR_LIMIT;
 * JFR_NOMEM; JFR_IO (config.write failed). After an error the chunk is
 * abandoned (nothing is written for it) until the next jfr_writer_begin;
 * jfr_writer_error says why, naming the chunk and the byte offset of the
 * input.
 */
typedef struct jfr_writer jfr_writer;

/* Where the written chunks go: 0 when all `len` bytes were taken, anything
 * else an error (JFR_IO). */
typedef int (*jfr_writer_write_fn)(void *user, const void *buf, size_t len);

/* A struct you hand in: see "STRUCTS YOU HAND IN" at the top. */
typedef struct jfr_writer_config {
    size_t size;             /* sizeof(jfr_writer_config): JFR_WRITER_CONFIG_INIT */
    jfr_allocator allocator;
    jfr_writer_write_fn write; /* required */
    void *user;              /* write's first argument                     */
    uint64_t max_chunk_size; /* largest chunk written, bytes (0: 1 GiB)    */
} jfr_writer_config;

#define JFR_WRITER_CONFIG_INIT {.size = sizeof(jfr_writer_config)}
JFR_API void jfr_writer_config_init(jfr_writer_config *c);

/* A new writer, or NULL (out of memory, an invalid size, no write). */
JFR_API jfr_writer *jfr_writer_new(const jfr_writer_config *config);
JFR_API void jfr_writer_free(jfr_writer *w);
JFR_API jfr_status jfr_writer_begin(jfr_writer *w, jfr_parser *p, const jfr_chunk_info *c);
JFR_API jfr_status jfr_writer_record(jfr_writer *w, jfr_parser *p, const jfr_record *r);
JFR_API jfr_status jfr_writer_event(jfr_writer *w, const jfr_event *e);
JFR_API jfr_status jfr_writer_end(jfr_writer *w, jfr_parser *p, const jfr_chunk_info *c);
/* The last error's message ("chunk N at byte M: ..."), or "" without one. */
JFR_API const char *jfr_writer_error(const jfr_writer *w);
/* Chunks written so far (a value: 0 for NULL). */
JFR_API uint64_t jfr_writer_chunks(const jfr_writer *w);
/* The chunk begun so far, as the finished chunk jfr_writer_end would write
 * if it ended now (duration 0: not known yet), handed to `write` in three
 * calls (header, records, metadata), the writer unchanged: a live view of
 * a chunk still being written (jfrstream_sink.h, views). JFR_OK;
 * JFR_INVALID_ARG; JFR_INVALID_STATE outside begin .. end or after an
 * error; JFR_NO_METADATA before a metadata record was kept; JFR_IO (write
 * failed). */
JFR_API jfr_status jfr_writer_snapshot(const jfr_writer *w, jfr_writer_write_fn write,
                                       void *user);
/* Bytes of the chunk being written (0 outside begin .. end). */
JFR_API uint64_t jfr_writer_pending(const jfr_writer *w);

/* ============================================================ EXPERIMENTAL */
#ifdef JFRSTREAM_EXPERIMENTAL

/*
 * Parallel preparation. Returns JFR_OK; JFR_INVALID_ARG for a NULL parser;
 * JFR_INVALID_STATE once bytes were fed since jfr_parser_new or
 * jfr_parser_reset, or once helper threads have been started.
 *
 *   threads 0 or 1 (the default): everything happens on the calling thread.
 *
 *   N > 1: when one jfr_parser_feed call holds several whole finished chunks
 *   (header state 0; not live chunks), the chunks after the one being
 *   delivered are prepared on up to N - 1 helper threads (POSIX threads,
 *   started at the first such call and joined by jfr_parser_free) while the
 *   calling thread delivers the current one. Preparing a chunk is what
 *   precedes its first record callback: finding and compiling its metadata,
 *   checking record sizes, indexing its constant pools and listing the events
 *   to deliver (sorted by end time when `ordered`), for the subscriptions
 *   made so far (a chunk whose on_chunk_begin or on_metadata subscribes to
 *   more types is listed again on the calling thread). While a helper
 *   prepares the chunk to be delivered next, the calling thread prepares a
 *   later one that no helper has started (light callbacks would else wait
 *   for the helpers). At most N + 1 chunks are prepared or being prepared
 *   at a time; their bytes are read in place from the caller's buffer,
 *   never copied.
 *
 *   Every callback still runs on the calling thread, in the same order and
 *   with the same arguments as with threads = 0: the output does not depend
 *   on N. Errors are reported at the damaged chunk's turn with the same
 *   status, message, chunk index and offset (a chunk whose preparation
 *   failed is processed again on the calling thread). Pause, stop, reset
 *   and jfr_parser_free work as usual: before jfr_parser_feed returns, every
 *   helper has stopped reading the buffer it was given (preparations not yet
 *   used are then dropped), so the buffer may be reused or freed as usual.
 *
 *   Gains need whole chunks in one feed call (a mapped or fully read file);
 *   input fed in slices smaller than a chunk is processed serially. Helpers
 *   allocate through jfr_options.allocator concurrently with the calling
 *   thread: a custom allocator must then be thread-safe. Their memory counts
 *   towards jfr_options.max_memory.
 */
JFR_API jfr_status jfr_parser_set_threads(jfr_parser *p, unsigned threads);

/*
 * Change jfr_options.ordered during a parse: from the chunk or segment whose
 * on_metadata is the next to run, or that is the next to be mapped when
 * called from on_chunk_begin or on_metadata (so a call from the first
 * on_metadata covers the first chunk). Chunks that helpers prepared before
 * the call may still come sorted by end time when `on` is false (that is
 * one of the orders of the file's events); they are sorted again when `on`
 * is true. A reader that can put its results together in any order of a
 * chunk's events (jfrc_query_set_file_order) turns sorting off once it
 * knows it. JFR_OK, or JFR_INVALID_ARG for a NULL parser.
 */
JFR_API jfr_status jfr_parser_set_ordered(jfr_parser *p, bool on);

/*
 * Pass over the next n events this parser would deliver, in delivery order
 * (end time with `ordered`, else file order), in this chunk and the
 * following ones: no event view is made and no event callback is called
 * for them (on_record still sees every record). Called from an event
 * callback, the count starts after the current event, whose other handlers
 * still run. A later call replaces the count; jfr_parser_reset clears it.
 * Cheaper than callbacks that return at once: e.g. N parsers over one input
 * that each deliver their own share of its events by position (jfrstream
 * print --json --jobs: every worker passes over the batches of the
 * others). JFR_OK, or JFR_INVALID_ARG for a NULL parser.
 */
JFR_API jfr_status jfr_parser_skip_events(jfr_parser *p, uint64_t n);

/*
 * The integers of fields idx[0..n) of event e, read in one pass over its
 * bytes with no value view per field: for a reader of a few numbers of
 * each of millions of events (jfrstream's query aggregates). idx ascending,
 * each a top-level field of e's type that is a byte, short, char, int or
 * long (not an array) or a constant-pool reference. out[k] is the `i` that
 * jfr_event_field(e, idx[k]) gives for an integer or char, the pool key
 * (unresolved) for a reference. Returns JFR_OK (also for n = 0);
 * JFR_INVALID_ARG for a NULL pointer or an index out of range or order;
 * JFR_TYPE_MISMATCH for a field of another kind; a decode error
 * (JFR_BAD_VARINT, JFR_BAD_EVENT) where jfr_event_field would give one.
 * out[] is then partly written.
 */
JFR_API jfr_status jfr_event_ints(const jfr_event *e, const uint32_t *idx, uint32_t n,
                                  int64_t *out);

/*
 * jfr_iter_next without the copy of the item: *out points at it. For the
 * fields of an object in the value cache (below) that is the cache itself;
 * otherwise the item is read into *scratch and *out points there. *out is
 * valid until the next call on this parser that may read a value (another
 * object's first iteration may grow the cache); copy the value to keep it.
 * Same statuses as jfr_iter_next; all arguments non-NULL. For consumers that
 * look at every field once (a generic walker): no 112-byte copy a field.
 */
JFR_API jfr_status jfr_iter_next_ref(jfr_iter *it, jfr_value *scratch, const jfr_value **out);

/*
 * jfr_iter_next, except for strings stored as UTF-16 units in compressed
 * integers (wire encoding 4: what the JDK writes for a string with
 * characters beyond Latin-1), inline or as the string pool entry a
 * reference names: those come back unconverted, with encoding
 * JFR_ENCODING_RAW_CHARS, str and len the units' varints in the chunk
 * (checked: exactly `count` of them, the last one complete; valid as long
 * as the chunk), count the number of units, and pooled and key as usual.
 * A unit is the low 16 bits of its varint (jfr_varint_decode); a high
 * surrogate followed by a low one is one character. Other strings, and the fields of an object iterated
 * from the value cache, are UTF-8 as with jfr_iter_next; so is everything
 * in a chunk without compressed integers. For writers that encode every
 * UTF-16 unit anyway (JSON's \uXXXX): no conversion to UTF-8 and back.
 * Same statuses as jfr_iter_next; it and out must not be NULL.
 */
#define JFR_ENCODING_RAW_CHARS 0x84
JFR_API jfr_status jfr_iter_next_raw(jfr_iter *it, jfr_value *out);

/*
 * Frames first .. first + max - 1 of s (fewer at its end) into out[0..),
 * their number in *n: jfr_stack_frame for each, in one call. JFR_OK (*n is
 * 0 when first >= nframes), or jfr_stack_frame's error for the frame that
 * failed, with *n the frames written before it. All pointers non-NULL.
 */
JFR_API jfr_status jfr_stack_frames(jfr_stack *s, uint32_t first, jfr_frame *out, uint32_t max,
                                    uint32_t *n);

/*
 * The value cache (on by default). The first jfr_iter over a pooled object
 * (a thread, class, class loader, package, module, method...) decodes all
 * its fields once for the rest of the chunk; later iterations over it, and
 * jfr_value_field on it, copy them from the cache: the thousandth event
 * naming the same thread or class costs a lookup, not a decode. Values are
 * the same either way; strings of cached fields stay valid to the end of
 * the chunk. Memory: about 100 bytes per cached field, at most 2^18 fields
 * per chunk and 1/16 of jfr_options.max_memory, counted there and in
 * jfr_parser_memory(); past the bound (or when memory runs out) objects are
 * decoded from their bytes on each read, as with the cache off. Off pays
 * for consumers that read each pooled object once (a cache of their own).
 * JFR_OK, or JFR_INVALID_ARG for a NULL parser.
 */
JFR_API jfr_status jfr_parser_set_value_cache(jfr_parser *p, bool on);

/*
 * Shared preparation: N parsers in one process that read the same chunks at
 * the same addresses (N workers over one mapped file, each delivering its
 * own share of the events: jfrstream print --json --jobs) index each chunk
 * once between them instead of N times.
 *
 * A jfr_share holds up to `slots` (0: 4) prepared chunks for `parsers`
 * parsers (0: not known). Preparing a
 * chunk is what precedes its first record callback (see
 * jfr_parser_set_threads): metadata, record sizes checked, constant pools
 * indexed, events listed (sorted by end time when `ordered`). A parser
 * given a share (jfr_parser_set_share) that reaches a finished chunk (not a
 * live one) at an address whose preparation the share holds copies the pool
 * index and the event list from it instead of making them, when it was
 * made for the same metadata, the same wanted types, the same `ordered`
 * and the same presence of on_record; it waits for a preparation that
 * another thread is making. Otherwise, and when the preparation failed (a
 * damaged chunk), the parser does the work itself, so callbacks, errors
 * and their offsets are those of a parser without a share. The bytes must
 * stay unchanged at that address while any of the parsers may reach them.
 *
 * jfr_parser_prepare(p, buf, len, &made) prepares the whole finished chunk
 * that starts at buf (len: the bytes available there) into p's share, on
 * the calling thread, as p would (its options, callbacks and
 * subscriptions), unless the share holds it or another thread is making
 * it: *made (may be NULL) says whether this call did the work. A parser
 * that finds its next chunk made or being made by another can prepare the
 * one after it meanwhile: each chunk is then indexed about once. A slot is
 * reused once all `parsers` parsers have reached its chunk (or it failed;
 * with `parsers` 0, oldest first); when none can be, nothing is prepared
 * (a parser far ahead of the others does its own work). Bytes that are
 * not a whole finished chunk are left to the parsers: JFR_OK, *made 0.
 * A preparation is used only where the bytes at its address still begin
 * with the header it was made from.
 *
 * Memory: a slot holds a copy of its chunk's pool index and event list
 * (32 to 64 bytes per pool entry: 24-byte slots, 3/8 to 3/4 of them used;
 * 16 bytes per event), allocated with the allocator given to
 * jfr_share_new (NULL: malloc), not counted in any parser's max_memory;
 * an adopting parser's copies are counted in its own.
 * The share is thread-safe; it must outlive the parsers' use of it
 * (jfr_parser_set_share(p, NULL) detaches). jfr_share_stats: chunks
 * prepared into it, and copies taken by parsers.
 * Returns: jfr_share_new NULL when memory runs out; the others JFR_OK, or
 * JFR_INVALID_ARG for a NULL parser (prepare: or no share, or NULL buf),
 * or JFR_NOMEM when prepare could not allocate.
 */
typedef struct jfr_share jfr_share;
JFR_API jfr_share *jfr_share_new(const jfr_allocator *a, unsigned parsers, unsigned slots);
JFR_API void jfr_share_free(jfr_share *s);
JFR_API void jfr_share_stats(jfr_share *s, uint64_t *prepared, uint64_t *adopted);
JFR_API jfr_status jfr_parser_set_share(jfr_parser *p, jfr_share *s);
JFR_API jfr_status jfr_parser_prepare(jfr_parser *p, const void *buf, size_t len, bool *made);

#endif /* JFRSTREAM_EXPERIMENTAL */

#ifdef __cplusplus
}
#endif
#endif /* JFRSTREAM_H */
