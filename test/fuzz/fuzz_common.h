/*
 * fuzz_common.h — shared pieces of the libFuzzer targets in test/fuzz/:
 * a counting allocator with a cap, callbacks that touch everything the
 * public API can hand out (metadata, every field of every event through
 * jfr_iter and random access, the thread/stack/frame/class/method helpers:
 * test/walk.h, shared with the other tests), and a transcript hash of the
 * callback sequence.
 *
 * Every check that fails calls fuzz_die(), which prints a message and
 * aborts: libFuzzer (and the replay driver) then report the input.
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#ifndef JFRSTREAM_FUZZ_COMMON_H
#define JFRSTREAM_FUZZ_COMMON_H

#include "../harness.h"
#include "../walk.h"
#include "jfrstream.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Limits of every target. */
#define FUZZ_MAX_CHUNK ((uint64_t)1 << 20) /* jfr_options.max_chunk_size  */
#define FUZZ_MAX_DEPTH 8                   /* recursion into values       */
#define FUZZ_MAX_ITEMS 4096                /* items read per object/array */
#define FUZZ_MAX_FRAMES 1024               /* frames read in order per stack */
#define FUZZ_VALUE_BUDGET 200000           /* values read per run         */

#if defined(__GNUC__)
__attribute__((noreturn, format(printf, 1, 2)))
#endif
static inline void fuzz_die(const char *fmt, ...) {
    va_list ap;
    fputs("FUZZ CHECK FAILED: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    fflush(stderr);
    abort();
}

/* ------------------------------------------------------------- allocator */

/*
 * All parser memory goes through the counting allocator of test/harness.h,
 * with `die` set: a wrong size given to free/realloc aborts, and so does a
 * request above the cap (an allocation sized from a hostile declared count
 * rather than from the bytes that arrived). fail_at > 0 makes the fail_at-th
 * allocation and every later one fail (allocation-failure paths).
 */
typedef talloc fuzz_alloc;

/* Options for a target: small max_chunk_size, the counting allocator with a
 * cap proportional to the input (a parser that sizes nothing from declared
 * counts needs a small multiple of the chunk bytes). */
static inline void fuzz_options(jfr_options *o, fuzz_alloc *a, size_t input_len) {
    talloc_init(a);
    a->cap = ((size_t)64 << 20) + 64 * input_len;
    a->die = true;
    jfr_options_init(o);
    o->max_chunk_size = FUZZ_MAX_CHUNK;
    talloc_options(o, a);
}

/* After jfr_parser_free: nothing may be left. */
static inline void fuzz_check_freed(const fuzz_alloc *a) {
    if (a->cur != 0)
        fuzz_die("%zu bytes still allocated after jfr_parser_free (leak)", a->cur);
}

/* ------------------------------------------------------------ transcript */

/* What a target reads goes through the tests' one reading engine,
 * test/walk.h: jwalk_hash_visit mixes every callback, argument and value read
 * into w.hash (the transcript hash two runs compare), a failed check dies. */
typedef struct fuzz_run {
    jwalk w;              /* the reading: w.hash, the value budget           */
    uint64_t callbacks;   /* callbacks so far                                */
    uint64_t pause_every; /* return PAUSE every n-th callback (0: never)     */
    int on_error_ret;     /* what on_error returns                           */
    bool read_values;     /* read every field (else just the event view)     */
} fuzz_run;

static inline void fz_u64(fuzz_run *r, uint64_t v) { jw_mix_u64(&r->w, v); }
static inline void fz_str(fuzz_run *r, const char *s) { jw_mix_str(&r->w, s); }

static inline void fz_walk_fail(jwalk *w, const char *message) {
    (void)w;
    fuzz_die("%s", message);
}

/* The return value of a callback: PAUSE every pause_every-th one. */
static inline int fz_ret(fuzz_run *r) {
    r->callbacks++;
    if (r->pause_every && r->callbacks % r->pause_every == 0)
        return JFR_CB_PAUSE;
    return JFR_CB_CONTINUE;
}

/* Everything about one event (with read_values), else its header. */
static inline void fz_event(fuzz_run *r, const jfr_event *e) {
    if (r->read_values) {
        jwalk_event(&r->w, e);
    } else {
        jw_item it = {.event = e};
        jwalk_hash_visit(&r->w, JW_EVENT, &it);
    }
}

static inline void fz_chunk(fuzz_run *r, const jfr_chunk_info *c) {
    fz_u64(r, c->index);
    fz_u64(r, c->offset);
    fz_u64(r, (uint64_t)c->major << 16 | c->minor);
    fz_u64(r, (uint64_t)c->size);
    fz_u64(r, (uint64_t)c->start_nanos);
    fz_u64(r, (uint64_t)c->ticks_per_second);
    fz_u64(r, (uint64_t)c->state << 16 | c->flags);
}

/* ------------------------------------------------------ the callbacks */

static inline int fz_on_chunk_begin(jfr_parser *p, const jfr_chunk_info *c, void *user) {
    (void)p;
    fuzz_run *r = user;
    fz_u64(r, 1);
    fz_chunk(r, c);
    return fz_ret(r);
}
static inline int fz_on_metadata(jfr_parser *p, const jfr_metadata *m, void *user) {
    fuzz_run *r = user;
    fz_u64(r, 2);
    if (jfr_parser_metadata(p) != m)
        fuzz_die("jfr_parser_metadata differs from the table given to on_metadata");
    jwalk_metadata(&r->w, m);
    return fz_ret(r);
}
static inline int fz_on_record(jfr_parser *p, const jfr_record *rec, void *user) {
    (void)p;
    fuzz_run *r = user;
    fz_u64(r, 3);
    fz_u64(r, rec->chunk_index);
    fz_u64(r, rec->offset);
    fz_u64(r, rec->size);
    fz_u64(r, rec->type_id);
    fz_str(r, rec->type ? rec->type->name : NULL);
    return fz_ret(r);
}
static inline int fz_on_event(jfr_parser *p, const jfr_event *e, void *user) {
    fuzz_run *r = user;
    fz_u64(r, 4);
    if (jfr_parser_on(p, "x", fz_on_event, r) != JFR_INVALID_STATE)
        fuzz_die("jfr_parser_on from on_event did not return JFR_INVALID_STATE");
    fz_event(r, e);
    return fz_ret(r);
}
static inline int fz_on_chunk_end(jfr_parser *p, const jfr_chunk_info *c, void *user) {
    (void)p;
    fuzz_run *r = user;
    fz_u64(r, 5);
    fz_chunk(r, c);
    return fz_ret(r);
}
static inline int fz_on_error(jfr_parser *p, jfr_status s, const char *message, void *user) {
    (void)p;
    fuzz_run *r = user;
    fz_u64(r, 6);
    fz_u64(r, (uint64_t)s);
    if (!message)
        fuzz_die("on_error without a message");
    if (!jfr_status_name(s))
        fuzz_die("on_error with unknown status %d", (int)s);
    fz_str(r, message);
    r->callbacks++;
    return r->on_error_ret;
}

static inline void fuzz_callbacks(jfr_callbacks *cb) {
    jfr_callbacks_init(cb);
    cb->on_chunk_begin = fz_on_chunk_begin;
    cb->on_metadata = fz_on_metadata;
    cb->on_record = fz_on_record;
    cb->on_event = fz_on_event;
    cb->on_chunk_end = fz_on_chunk_end;
    cb->on_error = fz_on_error;
}

static inline void fuzz_run_init(fuzz_run *r) {
    memset(r, 0, sizeof *r);
    jwalk_init(&r->w);
    r->w.visit = jwalk_hash_visit;
    r->w.fail = fz_walk_fail;
    r->w.max_depth = FUZZ_MAX_DEPTH;
    r->w.max_items = FUZZ_MAX_ITEMS;
    r->w.max_values = FUZZ_VALUE_BUDGET;
    r->w.stack_frames = FUZZ_MAX_FRAMES;
    r->read_values = true;
    r->on_error_ret = JFR_CB_CONTINUE;
}

/* Feed [data, data+len) in one call, resuming after every pause. Returns the
 * final status of the feeds (not of finish). */
static inline jfr_status fuzz_feed_all(jfr_parser *p, const uint8_t *data, size_t len) {
    jfr_status s = jfr_parser_feed(p, data, len);
    size_t guard = 0;
    while (s == JFR_PAUSED) {
        size_t used = jfr_parser_consumed(p);
        if (used > len)
            fuzz_die("jfr_parser_consumed %zu > fed %zu", used, len);
        data += used;
        len -= used;
        s = jfr_parser_feed(p, data, len);
        if (++guard > 100000000)
            fuzz_die("endless pauses");
    }
    return s;
}

/* finish (resuming pauses it reports) and check what the parser says. */
static inline jfr_status fuzz_finish(jfr_parser *p) {
    jfr_status s = jfr_parser_finish(p);
    size_t guard = 0;
    while (s == JFR_PAUSED) {
        s = jfr_parser_finish(p);
        if (++guard > 100000000)
            fuzz_die("endless pauses in finish");
    }
    const char *m = jfr_parser_error(p);
    if (!m)
        fuzz_die("jfr_parser_error returned NULL");
    (void)strlen(m);
    (void)jfr_parser_chunks(p);
    (void)jfr_parser_bytes(p);
    (void)jfr_parser_errors(p);
    return s;
}

#endif
