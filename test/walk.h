/* walk.h — the tests' one "decode everything" engine.
 *
 * jwalk_value() reads a jfr_value and everything under it: every field of
 * every object, every item of every array (jfr_iter), the typed helpers on
 * the objects that have one (thread, class name, method, stack trace with its
 * frames, jfr_value_unwrap of simple types), and it compares random access
 * (jfr_value_field, jfr_value_index, jfr_value_field_named) with iteration.
 * jwalk_stack() reads a stack trace's frames, jwalk_event() everything about
 * one event, jwalk_metadata() every type, field, setting and annotation.
 *
 * What is made of what was read is the caller's: every step is handed to
 * jwalk.visit (a jw_step and a jw_item). test/harness.h renders the steps as
 * a text transcript; jwalk_hash_visit() below mixes them into a 64-bit FNV-1a
 * hash (test_robust.c, the fuzz targets). Checks that fail (an accessor that
 * returns JFR_OK without writing its output, random access that disagrees
 * with iteration, ...) go to jwalk.fail.
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#ifndef JFR_TEST_WALK_H
#define JFR_TEST_WALK_H

#ifndef JFRSTREAM_EXPERIMENTAL
#define JFRSTREAM_EXPERIMENTAL /* jfr_iter_next_ref, _next_raw, jfr_stack_frames */
#endif
#include "jfrstream.h"

#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What one visit is about; the members of jw_item it sets. */
typedef enum jw_step {
    JW_VALUE,      /* a value, before its items: v, depth, descend (its items follow) */
    JW_VALUE_END,  /* after the value and its items: v, depth, descend, status (not
                    * JFR_OK: the error jfr_iter_next ended with) */
    JW_THREAD,     /* jfr_value_thread / jfr_event_thread: status, thread (when OK) */
    JW_CLASS,      /* jfr_value_class_name: status, str, len (when OK) */
    JW_METHOD,     /* jfr_value_method: status, frame (when OK) */
    JW_UNWRAP,     /* jfr_value_unwrap of a simple type: status, v (when OK) */
    JW_STACK,      /* a stack trace: status, stack (when OK) */
    JW_FRAME,      /* jfr_stack_frame: index, status, frame (when OK) */
    JW_STACK_END,  /* after the frames of a present stack */
    JW_EVENT,      /* jwalk_event: event, status of jfr_event_value */
    JW_FIELD,      /* jwalk_event's jfr_event_field(0) and (.., "startTime"): status, v */
    JW_METADATA,   /* jwalk_metadata: metadata, then a JW_TYPE per type */
    JW_TYPE,       /* type */
} jw_step;

typedef struct jw_item {
    const jfr_value *v;
    const jfr_thread *thread;
    const jfr_stack *stack;
    const jfr_frame *frame;
    const jfr_event *event;
    const jfr_metadata *metadata;
    const jfr_type *type;
    const char *str;
    size_t len;
    uint32_t index;
    int depth;
    int status; /* a jfr_status */
    bool descend;
} jw_item;

typedef struct jwalk jwalk;
struct jwalk {
    /* ---- what to read (set before use; jwalk_init gives the defaults) */
    int max_depth;          /* objects and arrays at this depth are not read into */
    uint32_t max_items;     /* items read per object/array (0: all) ...           */
    bool max_items_fails;   /* ... and whether more items is a failure            */
    uint64_t max_values;    /* values read in all (0: no limit)                   */
    bool helpers;           /* the typed helpers on objects (thread, class, ...)  */
    int ra_depth;           /* random access checked on containers up to this
                             * depth (-1: never)                                  */
    bool ra_strict;         /* random access must succeed (a good input); else a
                             * result is only compared when it is JFR_OK          */
    uint32_t stack_frames;  /* frames read in order per stack (>= 1); then the
                             * last one, and the last and first again             */
    /* ---- what to do with it */
    void (*visit)(jwalk *w, jw_step step, const jw_item *it); /* NULL: nothing */
    void (*fail)(jwalk *w, const char *message); /* NULL: print and abort */
    void *user;
    /* ---- results */
    uint64_t hash;          /* jwalk_hash_visit's                                 */
    uint64_t values;        /* values read                                        */
    uint64_t decode_errors; /* jfr_iter_next errors, helpers that failed          */
    uint64_t raw_strings;   /* strings jfr_iter_next_raw left as UTF-16 varints   */
};

#define JW_FNV_BASIS 14695981039346656037ULL

/* Names looked up to check that absent things are not found. */
#define JW_BOGUS_TYPE "no.such.Type"
#define JW_BOGUS_FIELD "no such field, surely"

static inline void jwalk_init(jwalk *w) {
    memset(w, 0, sizeof *w);
    w->max_depth = 10;
    w->ra_depth = INT_MAX;
    w->stack_frames = UINT32_MAX;
    w->helpers = true;
    w->hash = JW_FNV_BASIS;
}

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static inline void jw_fail(jwalk *w, const char *fmt, ...) {
    char m[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(m, sizeof m, fmt, ap);
    va_end(ap);
    if (w->fail) {
        w->fail(w, m);
        return;
    }
    fprintf(stderr, "WALK CHECK FAILED: %s\n", m);
    abort();
}

static inline void jw_visit(jwalk *w, jw_step step, const jw_item *it) {
    if (w->visit)
        w->visit(w, step, it);
}

static inline bool jw_budget_out(const jwalk *w) {
    return w->max_values && w->values >= w->max_values;
}

/* ------------------------------------------------------------------ hash */

static inline void jw_mix(jwalk *w, const void *data, size_t n) {
    const unsigned char *p = data;
    uint64_t h = w->hash;
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 1099511628211ULL;
    }
    w->hash = h;
}
static inline void jw_mix_u64(jwalk *w, uint64_t v) { jw_mix(w, &v, sizeof v); }
static inline void jw_mix_str(jwalk *w, const char *s) {
    if (s)
        jw_mix(w, s, strlen(s) + 1);
    else
        jw_mix_u64(w, 0xdeadULL);
}
/* A borrowed (pointer, length) string: every byte is read (ASan checks). */
static inline void jw_mix_span(jwalk *w, const char *s, size_t n) {
    jw_mix_u64(w, n);
    if (n && s)
        jw_mix(w, s, n);
}

/* ----------------------------------------------------------------- checks */

/* Outputs of helpers are filled with this pattern first: a helper that
 * returns JFR_OK must have written every output member (an unwritten length
 * would be read as a huge span). */
#define JW_CANARY 0xA5
static inline bool jw_unset_len(size_t len) {
    size_t c;
    memset(&c, JW_CANARY, sizeof c);
    return len == c;
}
static inline bool jw_unset_ptr(const void *p) {
    const void *c;
    memset(&c, JW_CANARY, sizeof c);
    return p == c;
}

/* A (pointer, length) output: a length without a pointer is a failure. */
static inline bool jw_span_ok(jwalk *w, const char *what, const char *s, size_t n) {
    if (n && !s) {
        jw_fail(w, "%s: a string of length %zu with a NULL pointer", what, n);
        return false;
    }
    return true;
}

/* jfr_value_method writes the class, method and descriptor members (whole:
 * false); jfr_stack_frame all of them. */
static inline bool jw_frame_ok(jwalk *w, const char *helper, const jfr_frame *f, bool whole) {
    if (jw_unset_len(f->class_name_len) || jw_unset_len(f->method_name_len) ||
        jw_unset_len(f->descriptor_len) || (whole && jw_unset_len(f->frame_type_len)) ||
        jw_unset_ptr(f->class_name) || jw_unset_ptr(f->method_name) ||
        jw_unset_ptr(f->descriptor) || (whole && jw_unset_ptr(f->frame_type))) {
        jw_fail(w, "%s returned JFR_OK but left members of its jfr_frame output unwritten",
                helper);
        return false;
    }
    return jw_span_ok(w, helper, f->class_name, f->class_name_len) &&
           jw_span_ok(w, helper, f->method_name, f->method_name_len) &&
           jw_span_ok(w, helper, f->descriptor, f->descriptor_len) &&
           (!whole || jw_span_ok(w, helper, f->frame_type, f->frame_type_len));
}

static inline bool jw_same_span(const char *a, size_t an, const char *b, size_t bn) {
    return an == bn && (an == 0 || memcmp(a, b, an) == 0);
}
static inline bool jw_same_frame(const jfr_frame *a, const jfr_frame *b) {
    return jw_same_span(a->class_name, a->class_name_len, b->class_name, b->class_name_len) &&
           jw_same_span(a->method_name, a->method_name_len, b->method_name,
                        b->method_name_len) &&
           jw_same_span(a->descriptor, a->descriptor_len, b->descriptor, b->descriptor_len) &&
           jw_same_span(a->frame_type, a->frame_type_len, b->frame_type, b->frame_type_len) &&
           a->line == b->line && a->bci == b->bci;
}

/* Whether two values read from the same place agree (containers: kind, type
 * and count; their items are compared where they are read). */
static inline bool jw_same_value(const jfr_value *a, const jfr_value *b) {
    if (a->kind != b->kind || a->type != b->type)
        return false;
    switch (a->kind) {
    case JFR_KIND_BOOLEAN: return a->b == b->b;
    case JFR_KIND_INT: return a->i == b->i && a->u == b->u;
    case JFR_KIND_CHAR: return a->u == b->u;
    case JFR_KIND_FLOAT:
    case JFR_KIND_DOUBLE: return memcmp(&a->d, &b->d, sizeof a->d) == 0;
    case JFR_KIND_STRING: return jw_same_span(a->str, a->len, b->str, b->len);
    case JFR_KIND_ARRAY: return a->count == b->count;
    default: return true;
    }
}

/* UTF-8 of code point u (up to U+10FFFF; surrogates as three bytes). */
static inline size_t jw_utf8_put(uint8_t *o, uint32_t u) {
    if (u < 0x80) {
        o[0] = (uint8_t)u;
        return 1;
    }
    if (u < 0x800) {
        o[0] = (uint8_t)(0xc0 | u >> 6);
        o[1] = (uint8_t)(0x80 | (u & 0x3f));
        return 2;
    }
    if (u < 0x10000) {
        o[0] = (uint8_t)(0xe0 | u >> 12);
        o[1] = (uint8_t)(0x80 | (u >> 6 & 0x3f));
        o[2] = (uint8_t)(0x80 | (u & 0x3f));
        return 3;
    }
    o[0] = (uint8_t)(0xf0 | u >> 18);
    o[1] = (uint8_t)(0x80 | (u >> 12 & 0x3f));
    o[2] = (uint8_t)(0x80 | (u >> 6 & 0x3f));
    o[3] = (uint8_t)(0x80 | (u & 0x3f));
    return 4;
}

/* The tests' definition of the library's UTF-16 to UTF-8: a high surrogate
 * directly followed by a low one is one code point, every other unit is
 * encoded alone (lone surrogates as WTF-8). out needs 3 bytes a unit. */
static inline size_t jw_utf16_to_wtf8(const uint16_t *u, size_t n, uint8_t *out) {
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t cp = u[i];
        if (cp >= 0xd800 && cp <= 0xdbff && i + 1 < n && u[i + 1] >= 0xdc00 && u[i + 1] <= 0xdfff)
            cp = 0x10000 + ((cp - 0xd800) << 10) + (u[++i] - 0xdc00);
        o += jw_utf8_put(out + o, cp);
    }
    return o;
}

/* Whether a string jfr_iter_next_raw handed over as varints (raw) is the
 * one jfr_iter_next read from the same place (c): exactly raw->count
 * varints filling raw->len bytes, whose units (their low 16 bits, decoded
 * one varint at a time with the public jfr_varint_decode) are c's UTF-8
 * by jw_utf16_to_wtf8. */
static inline bool jw_same_raw_chars(const jfr_value *raw, const jfr_value *c) {
    if (c->kind != JFR_KIND_STRING || raw->type != c->type || (raw->len && !raw->str))
        return false;
    size_t n = raw->count;
    uint16_t small_u[512];
    uint8_t small_o[3 * 512];
    uint16_t *u = n <= 512 ? small_u : (uint16_t *)malloc(n * sizeof *u);
    uint8_t *o = n <= 512 ? small_o : (uint8_t *)malloc(n * 3);
    bool ok = true;
    if (u && o) {
        const uint8_t *p = (const uint8_t *)raw->str, *end = p + raw->len;
        size_t k = 0;
        while (ok && p < end) {
            uint64_t v;
            size_t len = jfr_varint_decode(p, end, &v);
            if (!len || k == n) {
                ok = false;
            } else {
                u[k++] = (uint16_t)v;
                p += len;
            }
        }
        ok = ok && k == n &&
             jw_same_span((const char *)o, jw_utf16_to_wtf8(u, n, o), c->str, c->len);
    } /* else: cannot check here */
    if (u != small_u)
        free(u);
    if (o != small_o)
        free(o);
    return ok;
}

/* An item of jfr_iter_next_raw against jfr_iter_next's. */
static inline bool jw_same_raw(const jfr_value *raw, const jfr_value *c) {
    if (raw->kind == JFR_KIND_STRING && raw->encoding == JFR_ENCODING_RAW_CHARS)
        return jw_same_raw_chars(raw, c);
    return jw_same_value(raw, c);
}

/* ------------------------------------------------------------------ stacks */

/* The frames of a stack that jfr_*_stack returned JFR_OK for: the first
 * w->stack_frames in order, then the last one; then the last and the first
 * again (the frame cache and the restart paths), which must give the same
 * frames; frame nframes must fail. */
static inline void jwalk_stack(jwalk *w, const jfr_stack *stack, int depth) {
    jfr_stack st = *stack;
    jw_item it = {.stack = &st, .depth = depth, .status = JFR_OK};
    jw_visit(w, JW_STACK, &it);
    if (!st.present)
        return;
    uint32_t n = st.nframes, lead = w->stack_frames ? w->stack_frames : 1;
    jfr_frame f, first, last;
    memset(&first, 0, sizeof first);
    memset(&last, 0, sizeof last);
    bool whole = true;
    for (uint32_t i = 0; i < n;) {
        memset(&f, JW_CANARY, sizeof f);
        jfr_status s = jfr_stack_frame(&st, i, &f);
        jw_item fi = {.frame = &f, .index = i, .status = s, .depth = depth};
        if (s != JFR_OK) {
            w->decode_errors++;
            fi.frame = NULL;
            jw_visit(w, JW_FRAME, &fi);
            whole = false;
            break;
        }
        if (!jw_frame_ok(w, "jfr_stack_frame", &f, true)) {
            whole = false;
            break;
        }
        jw_visit(w, JW_FRAME, &fi);
        if (i == 0)
            first = f;
        if (i + 1 == n)
            last = f;
        i = i + 1 < lead || i + 1 >= n ? i + 1 : n - 1;
    }
    jfr_frame again;
    if (whole && n) {
        if (jfr_stack_frame(&st, n - 1, &again) != JFR_OK || !jw_same_frame(&again, &last))
            jw_fail(w, "jfr_stack_frame(%u) read again differs", n - 1);
        if (jfr_stack_frame(&st, 0, &again) != JFR_OK || !jw_same_frame(&again, &first))
            jw_fail(w, "jfr_stack_frame(0) read again differs");
    }
    if (jfr_stack_frame(&st, n, &again) == JFR_OK)
        jw_fail(w, "jfr_stack_frame(nframes = %u) returned JFR_OK", n);
    if (whole && n) { /* jfr_stack_frames from a fresh stack, 1 to 5 at a time
                       * (first read, cached or not): frame for frame the same */
        jfr_stack sb = *stack;
        jfr_frame batch[5];
        uint32_t step = 1 + n % 5, got = 0;
        for (uint32_t i = 0; i < n; i += got) {
            if (jfr_stack_frames(&sb, i, batch, step, &got) != JFR_OK || got == 0 ||
                got > step || i + got > n) {
                jw_fail(w, "jfr_stack_frames(%u, %u) failed or gave %u frames", i, step, got);
                break;
            }
            for (uint32_t k = 0; k < got; k++)
                if (jfr_stack_frame(&st, i + k, &again) != JFR_OK ||
                    !jw_same_frame(&again, &batch[k]))
                    jw_fail(w, "jfr_stack_frames: frame %u differs", i + k);
        }
        if (jfr_stack_frames(&sb, n, batch, step, &got) != JFR_OK || got != 0)
            jw_fail(w, "jfr_stack_frames(nframes = %u) gave frames", n);
    }
    jw_item end = {.stack = &st, .depth = depth, .status = JFR_OK};
    jw_visit(w, JW_STACK_END, &end);
}

/* ----------------------------------------------------------------- values */

/* The helpers of an object value, chosen by its type's name. */
static inline void jwalk_helpers(jwalk *w, const jfr_value *v, int depth) {
    const jfr_type *t = v->type;
    if (!t || !t->name)
        return;
    jw_item it = {.depth = depth};
    if (strcmp(t->name, "java.lang.Thread") == 0) {
        jfr_thread th;
        memset(&th, JW_CANARY, sizeof th);
        it.status = jfr_value_thread(v, &th);
        if (it.status == JFR_OK) {
            if (jw_unset_len(th.os_name_len) || jw_unset_len(th.java_name_len)) {
                jw_fail(w, "jfr_value_thread returned JFR_OK but left its output unwritten");
                return;
            }
            if (!jw_span_ok(w, "jfr_value_thread", th.os_name, th.os_name_len) ||
                !jw_span_ok(w, "jfr_value_thread", th.java_name, th.java_name_len))
                return;
            it.thread = &th;
        } else {
            w->decode_errors++;
        }
        jw_visit(w, JW_THREAD, &it);
    } else if (strcmp(t->name, "java.lang.Class") == 0) {
        const char *name;
        size_t len;
        memset(&name, JW_CANARY, sizeof name);
        memset(&len, JW_CANARY, sizeof len);
        it.status = jfr_value_class_name(v, &name, &len);
        if (it.status == JFR_OK) {
            if (jw_unset_len(len) || jw_unset_ptr(name)) {
                jw_fail(w, "jfr_value_class_name returned JFR_OK but left its outputs unwritten");
                return;
            }
            if (!jw_span_ok(w, "jfr_value_class_name", name, len))
                return;
            it.str = name;
            it.len = len;
        } else {
            w->decode_errors++;
        }
        jw_visit(w, JW_CLASS, &it);
    } else if (strcmp(t->name, "jdk.types.Method") == 0) {
        jfr_frame f;
        memset(&f, JW_CANARY, sizeof f);
        it.status = jfr_value_method(v, &f);
        if (it.status == JFR_OK) {
            if (!jw_frame_ok(w, "jfr_value_method", &f, false))
                return;
            it.frame = &f;
        } else {
            w->decode_errors++;
        }
        jw_visit(w, JW_METHOD, &it);
    } else if (strcmp(t->name, "jdk.types.StackTrace") == 0) {
        jfr_stack st;
        memset(&st, JW_CANARY, sizeof st);
        it.status = jfr_value_stack(v, &st);
        if (it.status == JFR_OK) {
            uint32_t c32;
            memset(&c32, JW_CANARY, sizeof c32);
            if (st.nframes == c32) {
                jw_fail(w, "jfr_value_stack returned JFR_OK but left nframes unwritten");
                return;
            }
            jwalk_stack(w, &st, depth);
        } else {
            w->decode_errors++;
            jw_visit(w, JW_STACK, &it);
        }
    }
    if (t->simple) {
        jfr_value u;
        it = (jw_item){.depth = depth};
        it.status = jfr_value_unwrap(v, &u);
        if (it.status == JFR_OK)
            it.v = &u;
        else
            w->decode_errors++;
        jw_visit(w, JW_UNWRAP, &it);
    }
}

/* A random-access result against the item iteration gave. */
static inline void jw_ra(jwalk *w, jfr_status s, const jfr_value *got, const jfr_value *want,
                         const char *what) {
    if (w->ra_strict ? s != JFR_OK || !jw_same_value(got, want)
                     : s == JFR_OK && !jw_same_value(got, want))
        jw_fail(w, "%s differs from iteration (status %d)", what, (int)s);
}

/* Random access on a container whose n items iteration read, first and last. */
static inline void jwalk_random_access(jwalk *w, const jfr_value *v, uint32_t n,
                                       const jfr_value *first, const jfr_value *last) {
    jfr_value ra;
    if (v->kind == JFR_KIND_ARRAY) {
        if (n != v->count)
            jw_fail(w, "array iteration gave %u items, count is %u", n, v->count);
        if (n) {
            jw_ra(w, jfr_value_index(v, 0, &ra), &ra, first, "jfr_value_index(0)");
            jw_ra(w, jfr_value_index(v, n - 1, &ra), &ra, last, "jfr_value_index(last)");
        }
        if (jfr_value_index(v, n, &ra) == JFR_OK)
            jw_fail(w, "jfr_value_index(count) returned JFR_OK");
        return;
    }
    const jfr_type *t = v->type;
    if (t && t->nfields && n != t->nfields)
        jw_fail(w, "object iteration gave %u fields, type %s has %u", n,
                t->name ? t->name : "?", t->nfields);
    if (n) {
        jw_ra(w, jfr_value_field(v, 0, &ra), &ra, first, "jfr_value_field(0)");
        jw_ra(w, jfr_value_field(v, n - 1, &ra), &ra, last, "jfr_value_field(last)");
        const char *name = t && n <= t->nfields ? t->fields[n - 1].name : NULL;
        if (name) {
            jfr_status s = jfr_value_field_named(v, name, &ra);
            /* not strict: a name given twice finds the first field */
            if (w->ra_strict || jfr_type_field_index(t, name) == (int32_t)(n - 1))
                jw_ra(w, s, &ra, last, "jfr_value_field_named(last)");
        }
    }
    if (t && n == t->nfields && jfr_value_field(v, n, &ra) == JFR_OK)
        jw_fail(w, "jfr_value_field(nfields) returned JFR_OK");
    /* A name the type does not have is not found. (libFuzzer learns strcmp's
     * operands, so a fuzzed type may well have a field of this very name.) */
    if (jfr_value_field_named(v, JW_BOGUS_FIELD, &ra) == JFR_OK &&
        jfr_type_field_index(t, JW_BOGUS_FIELD) == JFR_NO_FIELD)
        jw_fail(w, "jfr_value_field_named(bogus) returned JFR_OK");
}

/* A value and everything under it, `depth` deep in what is being read. */
static inline void jwalk_value(jwalk *w, const jfr_value *v, int depth) {
    if (jw_budget_out(w))
        return;
    w->values++;
    bool container = v->kind == JFR_KIND_OBJECT || v->kind == JFR_KIND_ARRAY;
    jw_item it = {.v = v, .depth = depth, .descend = container && depth < w->max_depth};
    switch (v->kind) {
    case JFR_KIND_NULL:
    case JFR_KIND_BOOLEAN:
    case JFR_KIND_INT:
    case JFR_KIND_CHAR:
    case JFR_KIND_FLOAT:
    case JFR_KIND_DOUBLE:
    case JFR_KIND_OBJECT:
    case JFR_KIND_ARRAY: break;
    case JFR_KIND_STRING:
        if (!jw_span_ok(w, "string value", v->str, v->len))
            return;
        break;
    default: jw_fail(w, "value of unknown kind %d", (int)v->kind); return;
    }
    jw_visit(w, JW_VALUE, &it);
    if (container) {
        if (v->kind == JFR_KIND_OBJECT && w->helpers)
            jwalk_helpers(w, v, depth);
        if (it.descend) {
            jfr_iter iter;
            jfr_value c, first, last;
            jfr_status k = JFR_OK;
            uint32_t n = 0;
            bool cut = false;
            memset(&first, 0, sizeof first);
            memset(&last, 0, sizeof last);
            /* a second iterator without copies (jfr_iter_next_ref) in step */
            jfr_iter iref;
            jfr_value scratch;
            const jfr_value *ref = NULL;
            bool ref_on = true;
            jfr_iter_init(&iref, v);
            /* and a third that leaves compressed UTF-16 unconverted */
            jfr_iter iraw;
            jfr_value raw;
            bool raw_on = true;
            jfr_iter_init(&iraw, v);
            jfr_iter_init(&iter, v);
            while (!(cut = jw_budget_out(w)) && (k = jfr_iter_next(&iter, &c)) == JFR_OK) {
                if (ref_on) {
                    /* (as random access: an error only counts on good input,
                     * where memory does not run out either) */
                    jfr_status kr = jfr_iter_next_ref(&iref, &scratch, &ref);
                    if (w->ra_strict ? kr != JFR_OK || !jw_same_value(ref, &c)
                                     : kr == JFR_OK && !jw_same_value(ref, &c))
                        jw_fail(w, "jfr_iter_next_ref: item %u differs (status %d)", n, (int)kr);
                    ref_on = kr == JFR_OK;
                }
                if (raw_on) {
                    jfr_status kr = jfr_iter_next_raw(&iraw, &raw);
                    if (w->ra_strict ? kr != JFR_OK || !jw_same_raw(&raw, &c)
                                     : kr == JFR_OK && !jw_same_raw(&raw, &c))
                        jw_fail(w, "jfr_iter_next_raw: item %u differs (status %d)", n, (int)kr);
                    raw_on = kr == JFR_OK;
                    if (raw_on && raw.encoding == JFR_ENCODING_RAW_CHARS)
                        w->raw_strings++;
                }
                if (w->max_items && n == w->max_items) {
                    cut = true;
                    if (w->max_items_fails)
                        jw_fail(w, "jfr_iter_next did not end after %u items", n);
                    break;
                }
                if (n == 0)
                    first = c;
                last = c;
                n++;
                jwalk_value(w, &c, depth + 1);
            }
            if (!cut && ref_on && w->ra_strict && jfr_iter_next_ref(&iref, &scratch, &ref) != k)
                jw_fail(w, "jfr_iter_next_ref ended with another status than jfr_iter_next");
            if (!cut && raw_on && w->ra_strict && jfr_iter_next_raw(&iraw, &raw) != k)
                jw_fail(w, "jfr_iter_next_raw ended with another status than jfr_iter_next");
            if (!cut && k != JFR_END) { /* a decode error */
                w->decode_errors++;
                it.status = k;
            } else if (!cut && depth <= w->ra_depth) {
                jwalk_random_access(w, v, n, &first, &last);
            }
        }
    }
    jw_visit(w, JW_VALUE_END, &it);
}

/* ----------------------------------------------------------------- events */

/* jfr_event_ints against jfr_event_field: every integer, char and pool
 * reference among the event's first 32 fields at once, then each alone; a
 * field of another kind is a type mismatch, indexes out of order invalid. */
static inline void jwalk_ints(jwalk *w, const jfr_event *e) {
    const jfr_type *t = e->type;
    uint32_t idx[32], n = 0;
    int64_t want[32], got[32];
    bool all_ok = true;
    for (uint32_t i = 0; t && i < t->nfields && i < 32; i++) {
        const jfr_field *fd = &t->fields[i];
        jfr_base b = fd->type ? fd->type->base : JFR_BASE_STRUCT;
        bool integral = b == JFR_BASE_BYTE || b == JFR_BASE_SHORT || b == JFR_BASE_CHAR ||
                        b == JFR_BASE_INT || b == JFR_BASE_LONG;
        if (fd->array || !(fd->pooled || integral)) {
            if (jfr_event_ints(e, &i, 1, got) != JFR_TYPE_MISMATCH)
                jw_fail(w, "jfr_event_ints: field %u of another kind not refused", i);
            continue;
        }
        jfr_value f;
        if (jfr_event_field(e, i, &f) != JFR_OK)
            all_ok = false;
        want[n] = fd->pooled ? (int64_t)f.key : f.i;
        idx[n++] = i;
    }
    if (!all_ok)
        return; /* damaged: only that nothing crashes */
    if (n && jfr_event_ints(e, idx, n, got) != JFR_OK) {
        jw_fail(w, "jfr_event_ints of %u fields failed", n);
        return;
    }
    for (uint32_t k = 0; k < n; k++) {
        int64_t one;
        if (got[k] != want[k] || jfr_event_ints(e, &idx[k], 1, &one) != JFR_OK || one != want[k])
            jw_fail(w, "jfr_event_ints: field %u differs from jfr_event_field", idx[k]);
    }
    if (n > 1 && jfr_event_ints(e, (uint32_t[]){idx[1], idx[0]}, 2, got) != JFR_INVALID_ARG)
        jw_fail(w, "jfr_event_ints: indexes out of order not refused");
}

/* Everything about one event: its header (JW_EVENT), its value, thread and
 * stack, and the field accessors. */
static inline void jwalk_event(jwalk *w, const jfr_event *e) {
    jfr_value v;
    jw_item it = {.event = e};
    it.status = jfr_event_value(e, &v);
    if (it.status != JFR_OK)
        w->decode_errors++;
    jw_visit(w, JW_EVENT, &it);
    (void)jfr_event_ticks_to_epoch_nanos(e, e->start_ticks);
    (void)jfr_event_ticks_to_nanos(e, e->duration_ticks);
    if (it.status == JFR_OK)
        jwalk_value(w, &v, 0);
    /* an event without a thread or a stack trace: not a decode error */
    jfr_thread th;
    memset(&th, JW_CANARY, sizeof th);
    it = (jw_item){.status = jfr_event_thread(e, &th)};
    if (it.status == JFR_OK) {
        if (jw_unset_len(th.os_name_len) || jw_unset_len(th.java_name_len))
            jw_fail(w, "jfr_event_thread returned JFR_OK but left its output unwritten");
        else if (jw_span_ok(w, "jfr_event_thread", th.os_name, th.os_name_len) &&
                 jw_span_ok(w, "jfr_event_thread", th.java_name, th.java_name_len))
            it.thread = &th;
    }
    jw_visit(w, JW_THREAD, &it);
    jfr_stack st;
    memset(&st, JW_CANARY, sizeof st);
    it = (jw_item){.status = jfr_event_stack(e, &st)};
    if (it.status == JFR_OK)
        jwalk_stack(w, &st, 0);
    else
        jw_visit(w, JW_STACK, &it);
    jfr_value f;
    it = (jw_item){.v = &f, .status = jfr_event_field(e, 0, &f)};
    jw_visit(w, JW_FIELD, &it);
    it = (jw_item){.v = &f, .status = jfr_event_field_named(e, "startTime", &f)};
    jw_visit(w, JW_FIELD, &it);
    jwalk_ints(w, e);
}

/* --------------------------------------------------------------- metadata */

/* Every type of a metadata table (JW_TYPE each), and the lookups agree. */
static inline void jwalk_metadata(jwalk *w, const jfr_metadata *m) {
    jw_item it = {.metadata = m};
    jw_visit(w, JW_METADATA, &it);
    for (uint32_t i = 0; i < m->ntypes; i++) {
        const jfr_type *t = m->types[i];
        if (!t) {
            jw_fail(w, "metadata type %u is NULL", i);
            continue;
        }
        if (t->index != i)
            jw_fail(w, "type %u has index %u", i, t->index);
        for (uint32_t k = 0; k < t->nfields; k++) {
            const jfr_field *f = &t->fields[k];
            if (!f->type)
                jw_fail(w, "field %s of %s has no type", f->name ? f->name : "?",
                        t->name ? t->name : "?");
            if (f->name && jfr_type_field_index(t, f->name) == JFR_NO_FIELD)
                jw_fail(w, "jfr_type_field_index(%s, %s) is JFR_NO_FIELD", t->name ? t->name : "?",
                        f->name);
        }
        if (t->name && !jfr_metadata_type_named(m, t->name))
            jw_fail(w, "jfr_metadata_type_named(%s) is NULL", t->name);
        if (!jfr_metadata_type_by_id(m, t->id))
            jw_fail(w, "jfr_metadata_type_by_id(%" PRIu64 ") is NULL", t->id);
        (void)jfr_annotation_find(t->annotations, t->nannotations, "jdk.jfr.Label");
        it = (jw_item){.metadata = m, .type = t, .index = i};
        jw_visit(w, JW_TYPE, &it);
    }
    /* A name no type has is not found; one a type has (a fuzzer can make one
     * named so) finds a type of that name. */
    const jfr_type *bogus = jfr_metadata_type_named(m, JW_BOGUS_TYPE);
    bool bogus_named = false;
    for (uint32_t i = 0; i < m->ntypes; i++)
        if (m->types[i]->name && strcmp(m->types[i]->name, JW_BOGUS_TYPE) == 0)
            bogus_named = true;
    if ((bogus != NULL) != bogus_named || (bogus && strcmp(bogus->name, JW_BOGUS_TYPE) != 0))
        jw_fail(w, "jfr_metadata_type_named(bogus) is %s but %s type has that name",
                bogus ? "a type" : "NULL", bogus_named ? "a" : "no");
}

/* ------------------------------------------------------ the hashing visit */

static inline void jw_mix_annotations(jwalk *w, const jfr_annotation *a, uint32_t n) {
    jw_mix_u64(w, n);
    for (uint32_t i = 0; i < n; i++) {
        jw_mix_str(w, a[i].type ? a[i].type->name : NULL);
        jw_mix_str(w, a[i].value);
        jw_mix_u64(w, a[i].nattrs);
        for (uint32_t k = 0; k < a[i].nattrs; k++) {
            jw_mix_str(w, a[i].attrs[k].key);
            jw_mix_str(w, a[i].attrs[k].value);
        }
    }
}

static inline void jw_mix_frame(jwalk *w, const jfr_frame *f, bool whole) {
    jw_mix_span(w, f->class_name, f->class_name_len);
    jw_mix_span(w, f->method_name, f->method_name_len);
    jw_mix_span(w, f->descriptor, f->descriptor_len);
    if (whole) {
        jw_mix_span(w, f->frame_type, f->frame_type_len);
        jw_mix_u64(w, (uint64_t)(int64_t)f->line);
        jw_mix_u64(w, (uint64_t)(int64_t)f->bci);
    }
}

/* A jwalk.visit that mixes every step, with everything it carries, into
 * w->hash: two reads of the same input agree iff their hashes do. */
static inline void jwalk_hash_visit(jwalk *w, jw_step step, const jw_item *it) {
    jw_mix_u64(w, (uint64_t)step << 32 | (uint32_t)it->status);
    switch (step) {
    case JW_VALUE: {
        const jfr_value *v = it->v;
        jw_mix_u64(w, (uint64_t)v->kind | (uint64_t)v->pooled << 8 | (uint64_t)it->descend << 9);
        switch (v->kind) {
        case JFR_KIND_BOOLEAN: jw_mix_u64(w, v->b); break;
        case JFR_KIND_INT:
            jw_mix_u64(w, (uint64_t)v->i);
            jw_mix_u64(w, v->u);
            break;
        case JFR_KIND_CHAR: jw_mix_u64(w, v->u); break;
        case JFR_KIND_FLOAT:
        case JFR_KIND_DOUBLE: jw_mix(w, &v->d, sizeof v->d); break;
        case JFR_KIND_STRING:
            jw_mix_u64(w, v->encoding);
            jw_mix_span(w, v->str, v->len);
            break;
        case JFR_KIND_ARRAY: jw_mix_u64(w, v->count); break;
        default: break;
        }
        break;
    }
    case JW_THREAD:
        if (it->thread) {
            const jfr_thread *th = it->thread;
            jw_mix_u64(w, th->present);
            jw_mix_span(w, th->os_name, th->os_name_len);
            jw_mix_span(w, th->java_name, th->java_name_len);
            jw_mix_u64(w, (uint64_t)th->os_thread_id);
            jw_mix_u64(w, (uint64_t)th->java_thread_id);
        }
        break;
    case JW_CLASS:
        if (it->status == JFR_OK)
            jw_mix_span(w, it->str, it->len);
        break;
    case JW_METHOD:
        if (it->frame)
            jw_mix_frame(w, it->frame, false);
        break;
    case JW_UNWRAP:
    case JW_FIELD:
        if (it->status == JFR_OK)
            jw_mix_u64(w, it->v->kind);
        break;
    case JW_STACK:
        if (it->stack) {
            jw_mix_u64(w, (uint64_t)it->stack->present | (uint64_t)it->stack->truncated << 1);
            jw_mix_u64(w, it->stack->nframes);
        }
        break;
    case JW_FRAME:
        jw_mix_u64(w, it->index);
        if (it->frame)
            jw_mix_frame(w, it->frame, true);
        break;
    case JW_EVENT: {
        const jfr_event *e = it->event;
        jw_mix_str(w, e->type ? e->type->name : NULL);
        jw_mix_u64(w, e->chunk_index);
        jw_mix_u64(w, e->offset);
        jw_mix_u64(w, e->size);
        jw_mix_u64(w, (uint64_t)e->start_ticks);
        jw_mix_u64(w, (uint64_t)e->duration_ticks);
        jw_mix_u64(w, (uint64_t)e->start_nanos);
        jw_mix_u64(w, (uint64_t)e->duration_nanos);
        jw_mix_u64(w, (uint64_t)e->end_nanos);
        break;
    }
    case JW_METADATA: {
        const jfr_metadata *m = it->metadata;
        jw_mix_u64(w, m->metadata_id);
        jw_mix_u64(w, m->fingerprint);
        jw_mix_u64(w, (uint64_t)m->gmt_offset_ms);
        jw_mix_u64(w, (uint64_t)m->dst_ms);
        jw_mix_str(w, m->locale);
        jw_mix_u64(w, m->ntypes);
        break;
    }
    case JW_TYPE: {
        const jfr_type *t = it->type;
        jw_mix_u64(w, t->id);
        jw_mix_str(w, t->name);
        jw_mix_str(w, t->super_type);
        jw_mix_u64(w, (uint64_t)t->base | (uint64_t)t->simple << 8 | (uint64_t)t->is_event << 9);
        jw_mix_str(w, t->label);
        jw_mix_str(w, t->description);
        jw_mix_u64(w, t->units);
        jw_mix_annotations(w, t->annotations, t->nannotations);
        jw_mix_u64(w, t->nfields);
        for (uint32_t k = 0; k < t->nfields; k++) {
            const jfr_field *f = &t->fields[k];
            jw_mix_str(w, f->name);
            jw_mix_str(w, f->type ? f->type->name : NULL);
            jw_mix_u64(w, (uint64_t)f->array | (uint64_t)f->pooled << 1 | (uint64_t)f->index << 2);
            jw_mix_u64(w, f->units);
            jw_mix_str(w, f->label);
            jw_mix_str(w, f->description);
            jw_mix_annotations(w, f->annotations, f->nannotations);
        }
        jw_mix_u64(w, t->nsettings);
        for (uint32_t k = 0; k < t->nsettings; k++) {
            const jfr_setting *s = &t->settings[k];
            jw_mix_str(w, s->name);
            jw_mix_str(w, s->type ? s->type->name : NULL);
            jw_mix_str(w, s->default_value);
            jw_mix_annotations(w, s->annotations, s->nannotations);
        }
        break;
    }
    case JW_VALUE_END:
    case JW_STACK_END: break;
    }
}

#endif
