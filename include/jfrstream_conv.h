/*
 * jfrstream_conv.h — converters on top of the jfrstream parser: events as
 * the JSON of `jfr print --json`, stack-trace profiles (folded stacks, a
 * flame-graph page, pprof) and the record table of `jfr summary`. The
 * `jfrstream` CLI is built on this library (libjfrstream_conv,
 * `pkg-config jfrstream-conv`).
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 *
 * Every converter is fed from the parser's callbacks (jfrstream.h): hand it
 * the chunk headers, metadata tables and events (or records) the callbacks
 * receive, then ask for the output. Output goes through a jfrc_out, a
 * buffered writer to a file descriptor or to a callback of yours.
 *
 * Conventions:
 *   - every public name starts with jfrc_ (JFRC_ for macros);
 *   - the objects are opaque; *_new returns NULL only when out of memory,
 *     *_free accepts NULL;
 *   - every allocation goes through a jfr_allocator (jfrstream.h): the
 *     *_new_advanced constructors take one as their last parameter (NULL:
 *     malloc/realloc/free), the object keeps a copy and frees through it,
 *     the plain *_new use malloc. The one exception: the regular
 *     expressions of jfrc_profile_set_include / _exclude, compiled by the C
 *     library's regcomp, hold its malloc'd memory;
 *   - functions returning jfr_status return JFR_OK, JFR_NOMEM, or
 *     JFR_INVALID_ARG for a value they refuse (the profile's reason is then
 *     in jfrc_profile_error); a JSON event may also return a decode error
 *     of the event (see jfrc_json_event);
 *   - pointers handed in (parsers, events, metadata, chunk headers) are
 *     borrowed for the call only, except a jfrc_out given to jfrc_json_new,
 *     which must outlive the writer; strings returned are owned by the
 *     object and valid until its next call;
 *   - an object is used from one thread at a time.
 */
#ifndef JFRSTREAM_CONV_H
#define JFRSTREAM_CONV_H

#include "jfrstream.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Marks every public function, as JFR_API does in jfrstream.h: the library
 * is built with hidden visibility and exports only what this header
 * declares. Define JFRC_API before including this header to override it. */
#ifndef JFRC_API
#define JFRC_API JFR_API
#endif

#if defined(__GNUC__)
#define JFRC_PRINTF_(f, a) __attribute__((format(printf, f, a)))
#else
#define JFRC_PRINTF_(f, a)
#endif

/* ------------------------------------------------------------------ output */

typedef struct jfrc_out jfrc_out;

/* Where a jfrc_out's bytes go: write all `len` bytes of `data`; return 0, or
 * non-zero on an error (the output is then failed: later bytes are dropped
 * and jfrc_out_flush returns JFR_IO). */
typedef int (*jfrc_write_fn)(void *user, const void *data, size_t len);

/* A writer to the file descriptor `fd` (not closed by jfrc_out_free), or to
 * `write(user, ...)`, buffering `cap` bytes (0: 64 KiB). Bytes reach the
 * destination when the buffer is full and at jfrc_out_flush. NULL when out
 * of memory (jfrc_out_new: also when `write` is NULL). */
JFRC_API jfrc_out *jfrc_out_new_fd(int fd, size_t cap);
JFRC_API jfrc_out *jfrc_out_new(jfrc_write_fn write, void *user, size_t cap);
/* A writer to memory: its bytes stay in a buffer of `cap` bytes (0: 64 KiB)
 * that grows as needed, and a flush keeps them. When memory runs out it
 * fails (later bytes are dropped; jfrc_out_failed is true). NULL when out of
 * memory. */
JFRC_API jfrc_out *jfrc_out_new_memory(size_t cap);
/* The same three, allocating through `a` (jfrstream.h, jfr_allocator; NULL:
 * malloc): the writer, its buffer and the buffers jfrc_out_swap hands over
 * (free those with the same allocator, of their *cap bytes). */
JFRC_API jfrc_out *jfrc_out_new_fd_advanced(int fd, size_t cap, const jfr_allocator *a);
JFRC_API jfrc_out *jfrc_out_new_advanced(jfrc_write_fn write, void *user, size_t cap,
                                         const jfr_allocator *a);
JFRC_API jfrc_out *jfrc_out_new_memory_advanced(size_t cap, const jfr_allocator *a);
/* The bytes a memory writer holds and their count (NULL for other
 * writers); valid until the next call on `o`. */
JFRC_API const char *jfrc_out_data(const jfrc_out *o, size_t *len);
/* Take a memory writer's bytes without copying them: on return *buf, *len
 * and *cap are its buffer (from malloc: the caller frees it), and the
 * writer goes on, empty and no longer failed, in the buffer passed in
 * *buf / *cap (from malloc, or NULL and 0). Returns false when the bytes
 * taken are incomplete (memory ran out while writing them), or when `o` is
 * not a memory writer (then nothing changes). */
JFRC_API bool jfrc_out_swap(jfrc_out *o, char **buf, size_t *len, size_t *cap);
/* Free without flushing (flush first to keep what is buffered). */
JFRC_API void jfrc_out_free(jfrc_out *o);
/* Write what is buffered (a memory writer keeps it). JFR_OK, or JFR_IO
 * when this or an earlier write failed (errno is the failed write(2)'s for
 * a file descriptor). NULL: JFR_OK. */
JFRC_API jfr_status jfrc_out_flush(jfrc_out *o);
/* True once a write has failed. */
JFRC_API bool jfrc_out_failed(const jfrc_out *o);
/* Bytes buffered and not yet written. */
JFRC_API size_t jfrc_out_pending(const jfrc_out *o);
/* Append bytes, a NUL-terminated string, one byte, printf-style text.
 * jfrc_out_write of JFRC_OUT_DIRECT bytes or more to a file descriptor or a
 * callback is not copied: what is buffered is written first, then the bytes
 * from where they are (one write(2) or callback call). */
#define JFRC_OUT_DIRECT ((size_t)64 << 10)
JFRC_API void jfrc_out_write(jfrc_out *o, const void *data, size_t len);
JFRC_API void jfrc_out_puts(jfrc_out *o, const char *s);
JFRC_API void jfrc_out_putc(jfrc_out *o, char c);
JFRC_API void jfrc_out_printf(jfrc_out *o, const char *fmt, ...) JFRC_PRINTF_(2, 3);
/* Call `fn(user)` before each write that has bytes (e.g. to erase a
 * progress line on the same terminal); NULL: none. */
JFRC_API void jfrc_out_on_write(jfrc_out *o, void (*fn)(void *user), void *user);
/* `s` (UTF-8, `len` bytes) as a quoted JSON string, escaped as the JDK's
 * JSON writer escapes a java.lang.String (the event JSON's strings):
 * \" \\ \/ \b \f \n \r \t, and \uXXXX for every other UTF-16 unit below
 * 0x20 or above 0x7F; malformed UTF-8 becomes U+FFFD as in
 * new String(bytes, UTF_8). The one JSON string escaper of the libraries. */
JFRC_API void jfrc_out_json_string(jfrc_out *o, const char *s, size_t len);

/* ---------------------------------------------------------- events as JSON */

/*
 * One event as JSON, byte for byte what `jfr print --json` prints for an
 * element of its "events" array (`jfrstream print --json` is built on it):
 * the JDK's pretty layout (two-space indentation), or compact (the same
 * tokens without whitespace outside strings, on one line). Times are
 * converted with the first chunk's time base and zone, as the JDK does.
 * Pooled objects are followed as deep as the data goes; past 4096 nested
 * levels or 2^20 objects in one event the value prints as null and the
 * event reports JFR_LIMIT.
 */
typedef struct jfrc_json jfrc_json;

/* A writer appending to `o` (borrowed: it must outlive the writer).
 * `stack_depth`: frames printed per stack trace (the JDK's default is 5). */
JFRC_API jfrc_json *jfrc_json_new(jfrc_out *o, uint32_t stack_depth, bool compact);
/* The same, allocating through `a` (NULL: malloc): the writer, its stack of
 * open objects and its cache. When an allocation of the stack is refused
 * the event prints null there and jfrc_json_event returns JFR_NOMEM; the
 * cache does without (the output does not change). */
JFRC_API jfrc_json *jfrc_json_new_advanced(jfrc_out *o, uint32_t stack_depth, bool compact,
                                           const jfr_allocator *a);
JFRC_API void jfrc_json_free(jfrc_json *j);
/* The writer keeps, per finished chunk, the JSON of each pooled object
 * (thread, stack trace, method, class...) met a second time, and copies it
 * where the object is printed again at the same depth. `bytes` bounds all
 * of that cache's memory (entries, their text, its tables and its 1 MiB
 * capture buffer); the default is 80 MiB, and 0 (or less than 64 KiB)
 * turns it off. The output does not depend on it. Call it before the
 * first event. */
JFRC_API void jfrc_json_set_cache_limit(jfrc_json *j, uint64_t bytes);
/* The bytes the writer holds now, its cache included. */
JFRC_API uint64_t jfrc_json_memory(const jfrc_json *j);
/* Hand it every chunk header (on_chunk_begin) and metadata table
 * (on_metadata) of the input. */
JFRC_API void jfrc_json_chunk_begin(jfrc_json *j, const jfr_chunk_info *c);
JFRC_API void jfrc_json_metadata(jfrc_json *j, const jfr_metadata *m);
/* Append `{"type": ..., "values": {...}}` for the event `e`, whose value
 * `ev` is jfr_event_value(e) (the caller reports that call's error). Returns
 * JFR_OK, or the first error met while decoding the event: the JSON is
 * complete and valid anyway, with null where a value could not be read
 * (jfrc_json_error tells why). Writes no separator or newline. */
JFRC_API jfr_status jfrc_json_event(jfrc_json *j, const jfr_event *e, const jfr_value *ev);
/* What the last event's error means: its status text, or for JFR_LIMIT the
 * limit that was reached. */
JFRC_API const char *jfrc_json_error(const jfrc_json *j);
/* The document around the events, in the pretty layout: `{` with the
 * indentation that follows, `"name": `, and `}`. `jfr print --json` is
 * object_begin, name "recording", object_begin, name "events", then `[`,
 * the events separated by ", ", `]`, object_end, object_end. */
JFRC_API void jfrc_json_object_begin(jfrc_json *j);
JFRC_API void jfrc_json_name(jfrc_json *j, const char *name);
JFRC_API void jfrc_json_object_end(jfrc_json *j);

/* ----------------------------------------------------------- events as XML */

/*
 * Events as XML, byte for byte what `jfr print --xml` prints (`jfrstream
 * print --xml` is built on it): the values of the JSON writer, in the same
 * order and with the same limits, as XMLWriter writes them: an element a
 * value (<value name="startTime">...</value>, <struct name="eventThread">,
 * <array name="frames" size="N"> with <struct index="0">...; a null as
 * xsi:nil="true"), " & ' < > and every UTF-16 unit above 0x7F as entities.
 * A jfrc_json writer in the XML layout: every jfrc_json_ call but the
 * document ones applies to it (free, cache limit, memory, chunk_begin,
 * metadata, error); jfrc_json_event appends `<event type="...">`, its
 * elements, `</event>` and an empty line. `a`: as for jfrc_json_new_advanced
 * (NULL: malloc).
 */
JFRC_API jfrc_json *jfrc_xml_new(jfrc_out *o, uint32_t stack_depth, const jfr_allocator *a);
/* The document around the events: the XML declaration, <recording> and
 * <events> (then the events' indentation), and their end tags. */
JFRC_API void jfrc_xml_begin(jfrc_json *j);
JFRC_API void jfrc_xml_end(jfrc_json *j);

/* -------------------------------------------------------------- events as text */

/*
 * Events as text, byte for byte what JDK 25's `jfr print FILE` prints
 * (`jfrstream print` is built on it): "TYPE {", one "name = value" line a
 * field with the JDK's units (durations as "12.3 ms", timestamps as
 * "12:34:56.789 (2026-12-03)" in the first chunk's zone offset, "1.2 MB",
 * "12.50%", "0x7F001234"), threads, classes, methods and stack traces
 * (`stack_depth` frames, then "...") in the JDK's short forms, and old
 * objects' reference chains. `exact`: what `jfr print --exact` prints
 * (every digit of durations, times, percentages and data amounts).
 *
 * ORDER. The JDK does not print in file order: it queues every event by
 * its end time on one binary heap (ties in the heap's own order) and prints
 * the earliest whenever more than 1,000,000 are queued, the rest at the
 * end. The writer does the same, so the output is the same to the tie: it
 * keeps the text of every queued event (rendered when the event is given)
 * and writes it when the event comes out; jfrc_text_finish writes the
 * rest. Memory: the text of up to 1,000,000 events (jfrc_text_memory).
 */
typedef struct jfrc_text jfrc_text;

/* A writer appending to `o` (borrowed: it must outlive the writer), its
 * memory through `a` (NULL: malloc). */
JFRC_API jfrc_text *jfrc_text_new(jfrc_out *o, uint32_t stack_depth, bool exact,
                                  const jfr_allocator *a);
JFRC_API void jfrc_text_free(jfrc_text *t);
/* Hand it every chunk header and metadata table of the input. The
 * metadata call returns JFR_NOMEM when its table could not be made. */
JFRC_API void jfrc_text_chunk_begin(jfrc_text *t, const jfr_chunk_info *c);
JFRC_API jfr_status jfrc_text_metadata(jfrc_text *t, const jfr_metadata *m);
/* Render the event `e` (its value `ev` = jfr_event_value(e)) and queue it;
 * what leaves the queue is appended to `o`. JFR_OK, the first error met
 * while decoding it (the text is complete anyway, with N/A where a value
 * could not be read: jfrc_text_error tells why), or JFR_NOMEM (the event is
 * not printed). */
JFRC_API jfr_status jfrc_text_event(jfrc_text *t, const jfr_event *e, const jfr_value *ev);
JFRC_API const char *jfrc_text_error(const jfrc_text *t);
/* Append every event still queued (at the end of the input). */
JFRC_API void jfrc_text_finish(jfrc_text *t);
/* The bytes the writer holds now. */
JFRC_API uint64_t jfrc_text_memory(const jfrc_text *t);

/* ----------------------------------------------------------------- profiles */

/*
 * Stack-trace profiles, as async-profiler's JFR converter makes them
 * (frame names, type suffixes, weights: doc/profiles.md). Events
 * with a stack trace are folded into a tree of frames; then the tree is
 * written as folded stacks, a self-contained HTML flame graph, or a
 * gzip-compressed pprof profile. Per event: one hash probe, no allocation
 * once the tables have grown.
 *
 * Use: jfrc_profile_new; options (select, flags, filters); for each parser
 * jfrc_profile_subscribe (or jfr_parser_on with your callback calling
 * jfrc_profile_add for each jfrc_profile_type), and chunk_begin / chunk_end
 * from the parser's chunk callbacks; then jfrc_profile_finish and the
 * writers. Several inputs may feed one profile.
 */
typedef struct jfrc_profile jfrc_profile;

/* Flags (jfrc_profile_set_flags). */
enum {
    JFRC_PROFILE_THREADS = 1u << 0, /* a bottom frame per thread: "[name tid=KEY]"    */
    JFRC_PROFILE_DOT = 1u << 1,     /* java.util.Map.get, not java/util/Map.get      */
    JFRC_PROFILE_COUNT = 1u << 2,   /* weight 1 for every event                     */
    JFRC_PROFILE_REVERSE = 1u << 3, /* top frame first (collapsed, flame graph)     */
    JFRC_PROFILE_LINES = 1u << 4,   /* frames named method:LINE                      */
    JFRC_PROFILE_LEAK = 1u << 5     /* nativemem: only allocations never freed       */
};

JFRC_API jfrc_profile *jfrc_profile_new(void);
/* The same, allocating through `a` (NULL: malloc): the profile, its
 * tables and the writers' scratch (zlib's too). A refused allocation
 * makes the call JFR_NOMEM (jfrc_profile_ok false once an event or an
 * option could not be kept). */
JFRC_API jfrc_profile *jfrc_profile_new_advanced(const jfr_allocator *a);
JFRC_API void jfrc_profile_free(jfrc_profile *p);

/* Add event types: a comma-separated list of "cpu", "cputime", "wall",
 * "alloc", "live", "nativemem", "lock" and full type names (at most 16
 * types). JFR_INVALID_ARG on an unknown word or too many types. Without a
 * selection the profile is empty: select "cpu" for the usual one. */
JFRC_API jfr_status jfrc_profile_select(jfrc_profile *p, const char *spec);
/* The selected event types: how many, and the name of the i-th. */
JFRC_API size_t jfrc_profile_ntypes(const jfrc_profile *p);
JFRC_API const char *jfrc_profile_type(const jfrc_profile *p, size_t i);
/* JFRC_PROFILE_* flags, set before the first event. */
JFRC_API void jfrc_profile_set_flags(jfrc_profile *p, unsigned flags);
JFRC_API unsigned jfrc_profile_flags(const jfrc_profile *p);
/* Filters, set before the first event; JFR_INVALID_ARG for a bad value:
 *   state:    keep events whose thread state is "STATE_" + one of these
 *             comma-separated, case-insensitive prefixes (types without a
 *             state field are kept);
 *   include / exclude: keep / drop the stacks with a frame (no suffix) that
 *             a POSIX extended regular expression matches as a whole;
 *   from / to: keep events by start time: milliseconds (from 1500000000000
 *             absolute, else after the start, negative before the end of
 *             the chunks read so far) or [YYYY-MM-DDT]HH:MM[:SS[.mmm]] in
 *             local time;
 *   minwidth: leave out frames below `percent` (0..100) of the total in
 *             the folded stacks and the flame graph. */
JFRC_API jfr_status jfrc_profile_set_state(jfrc_profile *p, const char *list);
JFRC_API jfr_status jfrc_profile_set_include(jfrc_profile *p, const char *regex);
JFRC_API jfr_status jfrc_profile_set_exclude(jfrc_profile *p, const char *regex);
JFRC_API jfr_status jfrc_profile_set_from(jfrc_profile *p, const char *time);
JFRC_API jfr_status jfrc_profile_set_to(jfrc_profile *p, const char *time);
JFRC_API jfr_status jfrc_profile_set_minwidth(jfrc_profile *p, double percent);

/* Feeding. jfrc_profile_subscribe registers the selected types on a parser
 * (jfr_parser_on) with a callback adding each event from the current
 * source (jfrc_profile_set_source, 0 at first). Several inputs feeding one
 * profile each need their own source number (below 2^47): constant-pool
 * keys are per input. Call chunk_begin / chunk_end from the parser's
 * on_chunk_begin / on_chunk_end. */
JFRC_API jfr_status jfrc_profile_subscribe(jfrc_profile *p, jfr_parser *parser);
JFRC_API void jfrc_profile_set_source(jfrc_profile *p, uint64_t source);
JFRC_API void jfrc_profile_chunk_begin(jfrc_profile *p, const jfr_chunk_info *c);
JFRC_API void jfrc_profile_chunk_end(jfrc_profile *p);
JFRC_API void jfrc_profile_add(jfrc_profile *p, const jfr_event *e, uint64_t source);

/* Events folded so far; the total weight (after jfrc_profile_finish). */
JFRC_API uint64_t jfrc_profile_events(const jfrc_profile *p);
/* False once an allocation failed: the profile is incomplete (the callback
 * of jfrc_profile_subscribe then stops the parser). */
JFRC_API bool jfrc_profile_ok(const jfrc_profile *p);
JFRC_API uint64_t jfrc_profile_total(const jfrc_profile *p);
/* The first problem met (an option refused, an event that could not be
 * decoded), or NULL; clear_error forgets it. */
JFRC_API const char *jfrc_profile_error(const jfrc_profile *p);
JFRC_API void jfrc_profile_clear_error(jfrc_profile *p);

/* After the last event: totals and the merged tree the writers need.
 * JFR_OK or JFR_NOMEM. */
JFRC_API jfr_status jfrc_profile_finish(jfrc_profile *p);
/* Writers of a finished profile, appending to `o`:
 *   collapsed: folded stacks "frame;frame;frame weight\n" (flamegraph.pl,
 *              speedscope), frames with async-profiler's type suffix;
 *   flamegraph: one HTML page with its script and style (no network),
 *              titled `title`;
 *   pprof:     profile.proto, gzip-compressed: one sample per call path
 *              and line; sample types samples/count, alloc_space/bytes +
 *              alloc_objects/count, delay/nanoseconds + contentions/count,
 *              or events/count. JFR_INVALID_ARG with JFRC_PROFILE_REVERSE.
 * JFR_OK, or JFR_NOMEM (also for a zlib failure). */
JFRC_API jfr_status jfrc_profile_write_collapsed(const jfrc_profile *p, jfrc_out *o);
JFRC_API jfr_status jfrc_profile_write_flamegraph(const jfrc_profile *p, jfrc_out *o,
                                                  const char *title);
JFRC_API jfr_status jfrc_profile_write_pprof(const jfrc_profile *p, jfrc_out *o);
/* Empty the profile for a new window, keeping the options, the selected
 * types and the frame names seen. */
JFRC_API void jfrc_profile_reset(jfrc_profile *p);

/*
 * pprof with sample types of your choice, e.g. those of a profiling backend.
 * Each sample value is the event count or the weight (what the collapsed
 * output shows: samples, bytes, ns), times `scale` (for example the
 * sampling period in ns, to turn a sample count into CPU time; saturates at
 * UINT64_MAX). The options are a sized struct (jfrstream.h rules):
 * jfrc_pprof_options o = JFRC_PPROF_OPTIONS_INIT; then set its members.
 */
#define JFRC_PPROF_MAX_VALUES 2
enum {
    JFRC_PPROF_WEIGHT = 0, /* the weight of the folded stacks                 */
    JFRC_PPROF_COUNT = 1   /* the number of events                           */
};
typedef struct jfrc_pprof_value {
    const char *type, *unit; /* e.g. "cpu", "nanoseconds"                      */
    int source;              /* JFRC_PPROF_WEIGHT or JFRC_PPROF_COUNT          */
    uint64_t scale;          /* multiplier; 0 and 1: none                      */
} jfrc_pprof_value;
typedef struct jfrc_pprof_options {
    size_t size;             /* sizeof(jfrc_pprof_options)                     */
    uint32_t nvalues;        /* 1..JFRC_PPROF_MAX_VALUES                       */
    jfrc_pprof_value values[JFRC_PPROF_MAX_VALUES];
    const char *period_type, *period_unit; /* Profile.period_type; NULL: none */
    int64_t period;          /* Profile.period; 0: not written                 */
    int64_t time_nanos;      /* Profile.time_nanos; 0: the chunks' start       */
    int64_t duration_nanos;  /* with time_nanos; 0: not written                */
} jfrc_pprof_options;
#define JFRC_PPROF_OPTIONS_INIT {.size = sizeof(jfrc_pprof_options)}
/* As jfrc_profile_write_pprof (same locations, functions, thread labels),
 * with the sample types, period and time of `opt`. JFR_INVALID_ARG for
 * options out of range (nvalues, size) or JFRC_PROFILE_REVERSE; JFR_NOMEM. */
JFRC_API jfr_status jfrc_profile_write_pprof_with(const jfrc_profile *p, jfrc_out *o,
                                                  const jfrc_pprof_options *opt);

/*
 * Pyroscope's profile types for JFR data, as its own Java integration names
 * them (Grafana's jfr-parser: the series `__name__`, sample types and
 * period type per event type), so that profiles pushed to Pyroscope's
 * /ingest show as those of its agent:
 *
 *   kind                word       series       sample types (type/unit)      period type
 *   cpu                 cpu        process_cpu  cpu/nanoseconds                cpu/nanoseconds
 *   wall                wall       wall         wall/nanoseconds               wall/nanoseconds
 *   alloc_in_new_tlab   alloc      memory       alloc_in_new_tlab_objects/count,
 *                                               alloc_in_new_tlab_bytes/bytes  space/bytes
 *   alloc_outside_tlab  alloc      memory       alloc_outside_tlab_objects/count,
 *                                               alloc_outside_tlab_bytes/bytes space/bytes
 *   alloc_sample        alloc      memory       alloc_sample_objects/count,
 *                                               alloc_sample_bytes/bytes       space/bytes
 *   mutex               lock       mutex        contentions/count, delay/nanoseconds  mutex/count
 *   block               lock       block        contentions/count, delay/nanoseconds  block/count
 *   live                live       memory       live/count                     objects/count
 *   malloc              nativemem  memory       malloc_objects/count, malloc_bytes/bytes  (none)
 *
 * One profile per kind (jfrc_profile_select(p, kind->select)): its event
 * types are cpu jdk.ExecutionSample; wall jdk.NativeMethodSample and
 * profiler.WallClockSample (by its samples); the allocation kinds one
 * allocation event each; mutex jdk.JavaMonitorEnter; block jdk.ThreadPark;
 * live profiler.LiveObject; malloc profiler.Malloc (and the JDK 9/10 names).
 * Objects/contentions are event counts; bytes and delay (ns) the weights of
 * the collapsed output. cpu and wall are sample weights times the sampling
 * period in ns: the "period" the recording's jdk.ActiveSetting gives the
 * kind's `period_event` (jfrc_setting_period), else `default_period` (cpu
 * 10 ms: Pyroscope's default interval, JDK's profile.jfc; wall 20 ms: the
 * JDK's jdk.NativeMethodSample period in default.jfc and profile.jfc). No
 * thread-state filter is applied (Pyroscope leaves out STATE_SLEEPING
 * execution samples; the JDK does not take sleeping threads as CPU samples).
 */
typedef struct jfrc_pyroscope_kind {
    const char *name;         /* "cpu", "alloc_in_new_tlab", ... (table above) */
    const char *word;         /* the --event word it belongs to                */
    const char *select;       /* for jfrc_profile_select                       */
    const char *metric;       /* Pyroscope's series name (__name__)            */
    const char *period_event; /* type whose "period" setting scales, or NULL   */
    int64_t default_period;   /* ns, when the recording does not say           */
    jfrc_pprof_options pprof; /* sample and period types (period unset)        */
} jfrc_pyroscope_kind;

/* The kinds of a comma-separated list of words (cpu, wall, alloc, lock,
 * live, nativemem) or kind names, each once, in table order: up to `cap`
 * pointers into `out` (static data), their number in *n. JFR_INVALID_ARG
 * for an unknown word or one without a Pyroscope type (cputime, type
 * names), with *bad (may be NULL) pointing at it in `words`. */
JFRC_API jfr_status jfrc_pyroscope_kinds(const char *words, const jfrc_pyroscope_kind **out,
                                         size_t cap, size_t *n, const char **bad);
/* The pprof options of a kind for one window: the kind's sample types with
 * the period `period_ns` (cpu, wall: the values' scale and Profile.period;
 * <= 0: the kind's default), and the window's start and length. */
JFRC_API void jfrc_pyroscope_pprof(const jfrc_pyroscope_kind *k, int64_t period_ns,
                                   int64_t time_nanos, int64_t duration_nanos,
                                   jfrc_pprof_options *out);
/* For a jdk.ActiveSetting event `e` (from a callback of `parser`): the
 * value in ns of the setting "period" of the event type named `type_name`
 * ("10 ms", "20 ms", "1 s": units ns, us, ms, s, m, h, d), or 0 when `e` is
 * another setting or the value is not a time ("everyChunk", "off"). */
JFRC_API int64_t jfrc_setting_period(jfr_parser *parser, const jfr_event *e,
                                     const char *type_name);

/* ------------------------------------------------------------ summary table */

/*
 * The record table of `jfr summary` (JDK 25 layout): per record type its
 * count and summed size, and the first chunk's version and start, the chunk
 * count and total duration. Rows are keyed by type id (one input, as the
 * JDK does) or by type name (many inputs: ids differ between JVMs). A row
 * is a number, stable until jfrc_summary_print.
 */
typedef struct jfrc_summary jfrc_summary;

/* No row (out of memory, or a type that is not an event). */
#define JFRC_SUMMARY_NONE UINT32_MAX

JFRC_API jfrc_summary *jfrc_summary_new(bool by_name);
/* The same, allocating through `a` (NULL: malloc): the table, its rows and
 * their names (a refused one: jfrc_summary_ok false). */
JFRC_API jfrc_summary *jfrc_summary_new_advanced(bool by_name, const jfr_allocator *a);
JFRC_API void jfrc_summary_free(jfrc_summary *s);
/* From on_chunk_begin: the rows of records 0 (Metadata) and 1 (Checkpoint)
 * come first; *row0 / *row1 (may be NULL) get them. */
JFRC_API void jfrc_summary_chunk_begin(jfrc_summary *s, const jfr_chunk_info *c,
                                       uint32_t *row0, uint32_t *row1);
/* From on_chunk_end of complete chunks: chunk count and duration. */
JFRC_API void jfrc_summary_chunk_end(jfrc_summary *s, const jfr_chunk_info *c);
/* From on_metadata: every event type gets a row (count 0 until seen). When
 * rows != NULL (m->ntypes entries), rows[t->index] is the row of each event
 * type, JFRC_SUMMARY_NONE for the other types. */
JFRC_API void jfrc_summary_metadata(jfrc_summary *s, const jfr_metadata *m, uint32_t *rows);
/* The row of a record type id without an event type in the metadata (found
 * or added). */
JFRC_API uint32_t jfrc_summary_row_missing(jfrc_summary *s, uint64_t type_id);
/* Count one record of `size` bytes in a row (JFRC_SUMMARY_NONE: nothing). */
JFRC_API void jfrc_summary_count(jfrc_summary *s, uint32_t row, uint64_t size);
/* From on_record, for a table keyed by type id: count the record in the row
 * of its type id (found, or added as jfrc_summary_row_missing does).
 * Returns the row, or JFRC_SUMMARY_NONE when out of memory (nothing
 * counted). A table keyed by name counts nothing here: its caller picks
 * the rows (chunk_begin, metadata) and counts with jfrc_summary_count. */
JFRC_API uint32_t jfrc_summary_record(jfrc_summary *s, const jfr_record *r);
/* Rows so far; a row's type name. */
JFRC_API size_t jfrc_summary_nrows(const jfrc_summary *s);
JFRC_API const char *jfrc_summary_row_name(const jfrc_summary *s, uint32_t row);
/* True once a chunk has been counted; false after an allocation failed. */
JFRC_API bool jfrc_summary_has_chunks(const jfrc_summary *s);
JFRC_API bool jfrc_summary_ok(const jfrc_summary *s);
/* Append the table as `jfr summary` prints it. Sorts the rows: row numbers
 * handed out before are void. */
JFRC_API void jfrc_summary_print(jfrc_summary *s, jfrc_out *o);

/* ------------------------------------------------------------ views, query */

/*
 * The views of JDK 25's `jfr view` and the query language they are written
 * in (COLUMN, FORMAT, SELECT with AVG COUNT DIFF FIRST LAST LAST_BATCH LIST
 * SET MAX MEDIAN MIN P90 P95 P99 P999 STDEV SUM UNIQUE, FROM, WHERE, GROUP
 * BY, ORDER BY, LIMIT; doc/views.md), printed as the JDK prints them. A
 * query reads only the event types it names: jfrc_query_metadata subscribes
 * to them (jfr_parser_on), the rest are skipped by size. It keeps one row
 * per group (percentiles, medians, LIST and SET keep their group's values);
 * a query without GROUP BY or aggregate keeps a row per event. It resolves
 * against the first metadata it is given, as the JDK's does. Values follow
 * the JDK: timestamps print in the local time zone (TZ), numbers as its
 * English NumberFormat.
 */
typedef struct jfrc_query jfrc_query;

enum { JFRC_TRUNCATE_AUTO = 0, JFRC_TRUNCATE_BEGINNING = 1, JFRC_TRUNCATE_END = 2 };

/* A struct you hand in (jfrstream.h, "STRUCTS YOU HAND IN"). */
typedef struct jfrc_view_options {
    size_t size;          /* sizeof(jfrc_view_options): JFRC_VIEW_OPTIONS_INIT */
    uint32_t width;       /* table / form width; 0: as the JDK picks (80..120) */
    uint32_t cell_height; /* lines per table cell; 0: the view's own        */
    int truncate;         /* JFRC_TRUNCATE_*: where long texts are cut      */
    bool verbose;         /* field names under the headers, and the query   */
    /* Events that end before this time (ns since the epoch) are left out,
     * as JFR.view's maxage leaves them out; 0: none. */
    int64_t since_nanos;
} jfrc_view_options;
#define JFRC_VIEW_OPTIONS_INIT {.size = sizeof(jfrc_view_options)}

/* A query from its text, titled `title` (NULL: none), printed as a form
 * (the first row, one field a line) or a table. NULL when the text does not
 * parse: `err` (errlen bytes) gets "position N: reason" with the JDK's
 * reason and position (a UTF-16 index into the text, malformed UTF-8 read as
 * U+FFFD, as Java decodes an argument); or when out of memory (err empty). */
JFRC_API jfrc_query *jfrc_query_new(const char *text, const char *title, bool form,
                                    const jfrc_view_options *opt, const jfr_allocator *a,
                                    char *err, size_t errlen);
/* A view by name (case-insensitive), or NULL when no view has that name. */
JFRC_API jfrc_query *jfrc_query_new_view(const char *name, const jfrc_view_options *opt,
                                         const jfr_allocator *a);
/* "SELECT * FROM type", titled by the type's label, as `jfr view TYPE`. */
JFRC_API jfrc_query *jfrc_query_new_type(const char *type, const jfrc_view_options *opt,
                                         const jfr_allocator *a);
JFRC_API void jfrc_query_free(jfrc_query *q);
/* From on_metadata of every chunk (with the parser, to subscribe). The first
 * resolves the query: a query naming types or fields the recording does not
 * have is not an error here, jfrc_query_render prints why. JFR_OK or
 * JFR_NOMEM. */
JFRC_API jfr_status jfrc_query_metadata(jfrc_query *q, jfr_parser *p, const jfr_metadata *m);
/* Resolve the query against `m` without subscribing to anything (as the
 * first jfrc_query_metadata would): then jfrc_query_type_count and
 * _type_name name the event types it reads. Does nothing once resolved.
 * JFR_OK (a missing type or field included: jfrc_query_failed) or
 * JFR_NOMEM. */
JFRC_API jfr_status jfrc_query_resolve(jfrc_query *q, const jfr_metadata *m);
/* Print the result as `jfr view` does. JFR_OK, JFR_NOMEM, or JFR_INVALID_ARG
 * when the query is invalid against the recording in a way the JDK reports
 * as a syntax error (jfrc_query_error says why). */
JFRC_API jfr_status jfrc_query_render(jfrc_query *q, jfrc_out *o);
JFRC_API const char *jfrc_query_error(const jfrc_query *q);
/* True when the query could not be resolved against the recording (a type
 * or field it names is missing: jfrc_query_error says which). */
JFRC_API bool jfrc_query_failed(const jfrc_query *q);
/* After resolution: true when the result does not depend on the order in
 * which a chunk's events arrive: every aggregate is COUNT, UNIQUE, MIN,
 * MAX, FIRST, LAST, DIFF, SUM of integers or durations, AVG of durations,
 * MEDIAN or a percentile of one kind of value, or a GROUP BY key, and the
 * query groups. Such a query keeps, for what depends on the order (FIRST,
 * LAST, ties of MIN and MAX, the order of the groups), the position of the
 * event in the JDK's order (chunk, end time, file position). */
JFRC_API bool jfrc_query_order_free(const jfrc_query *q);
/* As jfrc_query_order_free, and also true when the only other aggregates
 * are AVG of integers. The JDK adds those to a double in end-time order,
 * which is exact, and so the same in any order, while the magnitudes of a
 * group's values sum to at most 2^53; past that, its rounding follows the
 * order. Such a query may be run in file order when the events can be
 * read again: after the run (before jfrc_query_render), jfrc_query_order_lost
 * says whether a sum went past 2^53; then run a new query over the events
 * in end-time order and render that one. */
JFRC_API bool jfrc_query_order_free_checked(const jfrc_query *q);
JFRC_API bool jfrc_query_order_lost(const jfrc_query *q);
/* For an order-free query (or an order-free-checked one), before its first
 * event (from the first on_metadata, after jfrc_query_metadata) and again
 * from any on_chunk_begin: `on`, the events of the chunks that follow may
 * arrive in file order (jfr_parser_set_ordered(p, false): no sort), and
 * the result is the same as in end-time order; false, they arrive in
 * end-time order (a live chunk: sorted per flush segment). False, changing
 * nothing, when the query is not order-free or events already arrived
 * without it. */
JFRC_API bool jfrc_query_set_file_order(jfrc_query *q, bool on);
/* After resolution: the event types of its FROM, one per source (an alias
 * of a type counts again), qualified names. */
JFRC_API size_t jfrc_query_type_count(const jfrc_query *q);
JFRC_API const char *jfrc_query_type_name(const jfrc_query *q, size_t i);
/* The query as the JDK prints it back (Query.toString: keywords in capitals,
 * aggregates by their long names, AVERAGE, DIFFERENCE, ...; `view --verbose`
 * prints it). After jfrc_query_render, with the GROUP BY an aggregate adds. */
JFRC_API void jfrc_query_text(const jfrc_query *q, jfrc_out *o);
/* Made by jfrc_query_new_view. */
JFRC_API bool jfrc_query_is_view(const jfrc_query *q);
/* Bytes the query holds (its rows, groups and interned values). */
JFRC_API uint64_t jfrc_query_memory(const jfrc_query *q);
/* The views, in the JDK's order: i < jfrc_view_count(); false past it. */
JFRC_API size_t jfrc_view_count(void);
JFRC_API bool jfrc_view_info(size_t i, const char **category, const char **name,
                             const char **label, const char **query);

#ifdef __cplusplus
}
#endif

#endif
