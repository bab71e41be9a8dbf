/*
 * fuzz_common.h — shared pieces of the libFuzzer targets in test/fuzz/:
 * a counting allocator with a cap, a reader that touches everything the
 * public API can hand out (metadata, every field of every event through
 * jfr_iter and random access, the thread/stack/frame/class/method helpers),
 * and a transcript hash of the callback sequence.
 *
 * Every check that fails calls fuzz_die(), which prints a message and
 * aborts: libFuzzer (and the replay driver) then report the input.
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#ifndef JFRSTREAM_FUZZ_COMMON_H
#define JFRSTREAM_FUZZ_COMMON_H

#include "../harness.h"
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
#define FUZZ_MAX_FRAMES 1024               /* frames read per stack       */
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

typedef struct fuzz_run {
    uint64_t hash;       /* transcript: callbacks, their arguments, values */
    uint64_t budget;     /* values left to read                            */
    uint64_t callbacks;  /* callbacks so far                               */
    uint64_t pause_every; /* return PAUSE every n-th callback (0: never)    */
    int on_error_ret;    /* what on_error returns                          */
    bool read_values;    /* read every field (else just the event view)    */
} fuzz_run;

static inline void fz_mix(fuzz_run *r, const void *data, size_t n) {
    const unsigned char *p = data;
    uint64_t h = r->hash;
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 1099511628211ULL;
    }
    r->hash = h;
}
static inline void fz_u64(fuzz_run *r, uint64_t v) { fz_mix(r, &v, sizeof v); }
static inline void fz_str(fuzz_run *r, const char *s) {
    if (s)
        fz_mix(r, s, strlen(s) + 1);
    else
        fz_u64(r, 0xdeadULL);
}
/* A borrowed (pointer, length) string: every byte is read (ASan checks). */
static inline void fz_span(fuzz_run *r, const char *s, size_t n) {
    fz_u64(r, n);
    if (n && !s)
        fuzz_die("a string of length %zu with a NULL pointer", n);
    if (n)
        fz_mix(r, s, n);
}

/* The return value of a callback: PAUSE every pause_every-th one. */
static inline int fz_ret(fuzz_run *r) {
    r->callbacks++;
    if (r->pause_every && r->callbacks % r->pause_every == 0)
        return JFR_CB_PAUSE;
    return JFR_CB_CONTINUE;
}

/* ------------------------------------------------------ reading metadata */

static inline void fz_annotations(fuzz_run *r, const jfr_annotation *a, uint32_t n) {
    for (uint32_t i = 0; i < n; i++) {
        fz_str(r, a[i].type ? a[i].type->name : NULL);
        fz_str(r, a[i].value);
        for (uint32_t k = 0; k < a[i].nattrs; k++) {
            fz_str(r, a[i].attrs[k].key);
            fz_str(r, a[i].attrs[k].value);
        }
    }
}

static inline void fz_metadata(fuzz_run *r, const jfr_metadata *m) {
    fz_u64(r, m->metadata_id);
    fz_u64(r, m->fingerprint);
    fz_u64(r, (uint64_t)m->gmt_offset_ms);
    fz_u64(r, (uint64_t)m->dst_ms);
    fz_str(r, m->locale);
    fz_u64(r, m->ntypes);
    for (uint32_t i = 0; i < m->ntypes; i++) {
        const jfr_type *t = m->types[i];
        if (!t)
            fuzz_die("metadata type %u is NULL", i);
        if (t->index != i)
            fuzz_die("type %u has index %u", i, t->index);
        fz_u64(r, t->id);
        fz_str(r, t->name);
        fz_str(r, t->super_type);
        fz_u64(r, (uint64_t)t->base | (uint64_t)t->simple << 8 | (uint64_t)t->is_event << 9);
        fz_str(r, t->label);
        fz_str(r, t->description);
        fz_u64(r, t->units);
        for (uint32_t k = 0; k < t->nfields; k++) {
            const jfr_field *f = &t->fields[k];
            fz_str(r, f->name);
            if (!f->type)
                fuzz_die("field %s of %s has no type", f->name ? f->name : "?",
                         t->name ? t->name : "?");
            fz_str(r, f->type->name);
            fz_u64(r, (uint64_t)f->array | (uint64_t)f->pooled << 1 | (uint64_t)f->index << 2);
            fz_u64(r, f->units);
            fz_str(r, f->label);
            fz_str(r, f->description);
            fz_annotations(r, f->annotations, f->nannotations);
            if (f->name && jfr_type_field_index(t, f->name) < 0)
                fuzz_die("jfr_type_field_index cannot find field %s", f->name);
        }
        for (uint32_t k = 0; k < t->nsettings; k++) {
            const jfr_setting *s = &t->settings[k];
            fz_str(r, s->name);
            fz_str(r, s->type ? s->type->name : NULL);
            fz_str(r, s->default_value);
            fz_annotations(r, s->annotations, s->nannotations);
        }
        fz_annotations(r, t->annotations, t->nannotations);
        if (t->name && !jfr_metadata_type_named(m, t->name))
            fuzz_die("jfr_metadata_type_named cannot find %s", t->name);
        if (!jfr_metadata_type_by_id(m, t->id))
            fuzz_die("jfr_metadata_type_by_id cannot find %llu", (unsigned long long)t->id);
        (void)jfr_annotation_find(t->annotations, t->nannotations, "jdk.jfr.Label");
    }
}

/* --------------------------------------------------------- reading values */

static inline bool fz_same(const jfr_value *a, const jfr_value *b) {
    if (a->kind != b->kind || a->type != b->type)
        return false;
    switch (a->kind) {
    case JFR_KIND_BOOLEAN: return a->b == b->b;
    case JFR_KIND_INT: return a->i == b->i && a->u == b->u;
    case JFR_KIND_CHAR: return a->u == b->u;
    case JFR_KIND_FLOAT:
    case JFR_KIND_DOUBLE: return memcmp(&a->d, &b->d, sizeof a->d) == 0;
    case JFR_KIND_STRING:
        return a->len == b->len && (a->len == 0 || memcmp(a->str, b->str, a->len) == 0);
    case JFR_KIND_ARRAY: return a->count == b->count;
    default: return true;
    }
}

static inline void fz_frame(fuzz_run *r, const jfr_frame *f, bool whole) {
    fz_span(r, f->class_name, f->class_name_len);
    fz_span(r, f->method_name, f->method_name_len);
    fz_span(r, f->descriptor, f->descriptor_len);
    if (whole) {
        fz_span(r, f->frame_type, f->frame_type_len);
        fz_u64(r, (uint64_t)(int64_t)f->line);
        fz_u64(r, (uint64_t)(int64_t)f->bci);
    }
}

/* Every frame in order, then the last and the first again (cache paths). */
static inline void fz_stack(fuzz_run *r, jfr_stack *st) {
    fz_u64(r, (uint64_t)st->present | (uint64_t)st->truncated << 1);
    fz_u64(r, st->nframes);
    if (!st->present)
        return;
    jfr_frame f;
    uint32_t n = st->nframes < FUZZ_MAX_FRAMES ? st->nframes : FUZZ_MAX_FRAMES;
    for (uint32_t i = 0; i < n; i++) {
        jfr_status s = jfr_stack_frame(st, i, &f);
        fz_u64(r, (uint64_t)s);
        if (s != JFR_OK)
            return;
        fz_frame(r, &f, true);
    }
    if (n && jfr_stack_frame(st, n - 1, &f) == JFR_OK)
        fz_frame(r, &f, true);
    if (n && jfr_stack_frame(st, 0, &f) == JFR_OK)
        fz_frame(r, &f, true);
    if (jfr_stack_frame(st, st->nframes, &f) == JFR_OK)
        fuzz_die("jfr_stack_frame(nframes = %u) returned JFR_OK", st->nframes);
}

static inline void fz_helpers(fuzz_run *r, const jfr_value *v) {
    const jfr_type *t = v->type;
    if (!t || !t->name)
        return;
    if (strcmp(t->name, "java.lang.Thread") == 0) {
        jfr_thread th;
        if (jfr_value_thread(v, &th) == JFR_OK) {
            fz_u64(r, th.present);
            fz_span(r, th.os_name, th.os_name_len);
            fz_span(r, th.java_name, th.java_name_len);
            fz_u64(r, (uint64_t)th.os_thread_id ^ (uint64_t)th.java_thread_id << 1);
        }
    } else if (strcmp(t->name, "java.lang.Class") == 0) {
        const char *name;
        size_t len;
        if (jfr_value_class_name(v, &name, &len) == JFR_OK)
            fz_span(r, name, len);
    } else if (strcmp(t->name, "jdk.types.Method") == 0) {
        jfr_frame f;
        if (jfr_value_method(v, &f) == JFR_OK)
            fz_frame(r, &f, false);
    } else if (strcmp(t->name, "jdk.types.StackTrace") == 0) {
        jfr_stack st;
        if (jfr_value_stack(v, &st) == JFR_OK)
            fz_stack(r, &st);
    }
    if (t->simple) {
        jfr_value u;
        if (jfr_value_unwrap(v, &u) == JFR_OK)
            fz_u64(r, u.kind);
    }
}

static inline void fz_value(fuzz_run *r, const jfr_value *v, int depth) {
    if (r->budget == 0)
        return;
    r->budget--;
    fz_u64(r, (uint64_t)v->kind | (uint64_t)v->pooled << 8);
    switch (v->kind) {
    case JFR_KIND_NULL: break;
    case JFR_KIND_BOOLEAN: fz_u64(r, v->b); break;
    case JFR_KIND_INT:
        fz_u64(r, (uint64_t)v->i);
        fz_u64(r, v->u);
        break;
    case JFR_KIND_CHAR: fz_u64(r, v->u); break;
    case JFR_KIND_FLOAT:
    case JFR_KIND_DOUBLE: fz_mix(r, &v->d, sizeof v->d); break;
    case JFR_KIND_STRING:
        fz_u64(r, v->encoding);
        fz_span(r, v->str, v->len);
        break;
    case JFR_KIND_OBJECT:
    case JFR_KIND_ARRAY: {
        if (v->kind == JFR_KIND_OBJECT)
            fz_helpers(r, v);
        else
            fz_u64(r, v->count);
        if (depth >= FUZZ_MAX_DEPTH)
            break;
        jfr_iter it;
        jfr_value c, first, last;
        jfr_status k = JFR_OK;
        uint32_t n = 0;
        memset(&first, 0, sizeof first);
        memset(&last, 0, sizeof last);
        jfr_iter_init(&it, v);
        while (n < FUZZ_MAX_ITEMS && r->budget && (k = jfr_iter_next(&it, &c)) == JFR_OK) {
            if (n == 0)
                first = c;
            last = c;
            n++;
            fz_value(r, &c, depth + 1);
        }
        if (n == 0 || n >= FUZZ_MAX_ITEMS || !r->budget)
            break;
        if (k != JFR_OK && k != JFR_END) { /* a decode error */
            fz_u64(r, (uint64_t)k);
            break;
        }
        /* random access agrees with iteration where both succeed */
        jfr_value ra;
        if (v->kind == JFR_KIND_ARRAY) {
            if (n != v->count)
                fuzz_die("array iteration gave %u items, count is %u", n, v->count);
            if (jfr_value_index(v, 0, &ra) == JFR_OK && !fz_same(&ra, &first))
                fuzz_die("jfr_value_index(0) differs from iteration");
            if (jfr_value_index(v, n - 1, &ra) == JFR_OK && !fz_same(&ra, &last))
                fuzz_die("jfr_value_index(last) differs from iteration");
            if (jfr_value_index(v, n, &ra) == JFR_OK)
                fuzz_die("jfr_value_index(count) returned JFR_OK");
        } else {
            if (v->type && v->type->nfields && n != v->type->nfields)
                fuzz_die("object iteration gave %u fields, type has %u", n, v->type->nfields);
            if (jfr_value_field(v, 0, &ra) == JFR_OK && !fz_same(&ra, &first))
                fuzz_die("jfr_value_field(0) differs from iteration");
            if (jfr_value_field(v, n - 1, &ra) == JFR_OK && !fz_same(&ra, &last))
                fuzz_die("jfr_value_field(last) differs from iteration");
            if (v->type && v->type->nfields && v->type->fields[n - 1].name &&
                jfr_value_field_named(v, v->type->fields[n - 1].name, &ra) == JFR_OK &&
                !fz_same(&ra, &last) && jfr_type_field_index(v->type, v->type->fields[n - 1].name) == (int32_t)(n - 1))
                fuzz_die("jfr_value_field_named(last) differs from iteration");
            if (v->type && n == v->type->nfields && jfr_value_field(v, n, &ra) == JFR_OK)
                fuzz_die("jfr_value_field(nfields) returned JFR_OK");
        }
        break;
    }
    default: fuzz_die("value of unknown kind %d", (int)v->kind);
    }
}

/* Everything about one event. */
static inline void fz_event(fuzz_run *r, const jfr_event *e) {
    fz_str(r, e->type ? e->type->name : NULL);
    fz_u64(r, e->chunk_index);
    fz_u64(r, e->offset);
    fz_u64(r, e->size);
    fz_u64(r, (uint64_t)e->start_ticks);
    fz_u64(r, (uint64_t)e->duration_ticks);
    fz_u64(r, (uint64_t)e->start_nanos);
    fz_u64(r, (uint64_t)e->duration_nanos);
    fz_u64(r, (uint64_t)e->end_nanos);
    if (!r->read_values)
        return;
    (void)jfr_event_ticks_to_epoch_nanos(e, e->start_ticks);
    (void)jfr_event_ticks_to_nanos(e, e->duration_ticks);
    jfr_value ev;
    jfr_status s = jfr_event_value(e, &ev);
    fz_u64(r, (uint64_t)s);
    if (s == JFR_OK)
        fz_value(r, &ev, 0);
    jfr_thread th;
    if (jfr_event_thread(e, &th) == JFR_OK) {
        fz_u64(r, th.present);
        fz_span(r, th.os_name, th.os_name_len);
        fz_span(r, th.java_name, th.java_name_len);
    }
    jfr_stack st;
    if (jfr_event_stack(e, &st) == JFR_OK)
        fz_stack(r, &st);
    jfr_value f;
    (void)jfr_event_field_named(e, "startTime", &f);
    (void)jfr_event_field(e, 0, &f);
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
    fz_metadata(r, m);
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
    r->hash = 14695981039346656037ULL;
    r->budget = FUZZ_VALUE_BUDGET;
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
