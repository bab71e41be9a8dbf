/*
 * conv.c — the public API of the converter library (jfrstream_conv.h): thin
 * wrappers over the writers, profile and summary of this folder. The
 * public opaque types are the private structs (outbuf.h, evjson.h,
 * profile.h, summary.h name them jfrc_*), so no call here copies data.
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#include "jfrstream_conv.h"

#include "evjson.h"
#include "evtext.h"
#include "jformat.h"
#include "outbuf.h"
#include "profile.h"
#include "profile_out.h"
#include "summary.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

/* ------------------------------------------------------------------ output */

#define DEFAULT_CAP ((size_t)64 << 10)

JFRC_API jfrc_out *jfrc_out_new_fd_advanced(int fd, size_t cap, const jfr_allocator *a) {
    const jfr_allocator zero = {0};
    if (!a)
        a = &zero;
    outbuf *o = jfr__alloc(a, sizeof *o);
    if (!o)
        return NULL;
    if (!ob_init(o, fd, cap ? cap : DEFAULT_CAP, a)) {
        jfr__free(a, o, sizeof *o);
        return NULL;
    }
    return o;
}

JFRC_API jfrc_out *jfrc_out_new_fd(int fd, size_t cap) {
    return jfrc_out_new_fd_advanced(fd, cap, NULL);
}

JFRC_API jfrc_out *jfrc_out_new_advanced(jfrc_write_fn write, void *user, size_t cap,
                                         const jfr_allocator *a) {
    if (!write)
        return NULL;
    outbuf *o = jfrc_out_new_fd_advanced(-1, cap, a);
    if (o) {
        o->write_fn = write;
        o->write_user = user;
    }
    return o;
}

JFRC_API jfrc_out *jfrc_out_new(jfrc_write_fn write, void *user, size_t cap) {
    return jfrc_out_new_advanced(write, user, cap, NULL);
}

JFRC_API jfrc_out *jfrc_out_new_memory_advanced(size_t cap, const jfr_allocator *a) {
    outbuf *o = jfrc_out_new_fd_advanced(-1, cap, a);
    if (o)
        o->grow = true;
    return o;
}

JFRC_API jfrc_out *jfrc_out_new_memory(size_t cap) {
    return jfrc_out_new_memory_advanced(cap, NULL);
}

JFRC_API const char *jfrc_out_data(const jfrc_out *o, size_t *len) {
    if (!o || !o->grow) {
        if (len)
            *len = 0;
        return NULL;
    }
    if (len)
        *len = o->len;
    return o->buf;
}

JFRC_API bool jfrc_out_swap(jfrc_out *o, char **buf, size_t *len, size_t *cap) {
    if (!o || !o->grow || !buf || !len || !cap)
        return false;
    char *b = o->buf;
    size_t n = o->len, c = o->cap;
    bool ok = !o->failed;
    o->buf = *buf;
    o->cap = *buf ? *cap : 0;
    o->len = 0;
    o->failed = false;
    *buf = b;
    *len = n;
    *cap = c;
    return ok;
}

JFRC_API void jfrc_out_free(jfrc_out *o) {
    if (!o)
        return;
    jfr_allocator a = o->alloc;
    ob_free(o);
    jfr__free(&a, o, sizeof *o);
}

JFRC_API jfr_status jfrc_out_flush(jfrc_out *o) {
    if (!o)
        return JFR_OK;
    if (ob_flush(o) && !o->failed)
        return JFR_OK;
    if (o->err) /* the header promises the write's errno, whatever ran since */
        errno = o->err;
    return JFR_IO;
}

JFRC_API bool jfrc_out_failed(const jfrc_out *o) { return o->failed; }

JFRC_API size_t jfrc_out_pending(const jfrc_out *o) { return o->len; }

JFRC_API void jfrc_out_write(jfrc_out *o, const void *data, size_t len) {
    if (len >= JFRC_OUT_DIRECT)
        ob_write_direct(o, data, len);
    else
        ob_write(o, data, len);
}

JFRC_API void jfrc_out_puts(jfrc_out *o, const char *s) { ob_puts(o, s); }

JFRC_API void jfrc_out_putc(jfrc_out *o, char c) { ob_putc(o, c); }

JFRC_API void jfrc_out_printf(jfrc_out *o, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    ob_vprintf(o, fmt, ap);
    va_end(ap);
}

JFRC_API void jfrc_out_on_write(jfrc_out *o, void (*fn)(void *user), void *user) {
    o->before_write = fn;
    o->before_user = user;
}

JFRC_API void jfrc_out_json_string(jfrc_out *o, const char *s, size_t len) {
    ob_putc(o, '"');
    jfmt_json_string(o, s, len, true);
    ob_putc(o, '"');
}

/* ---------------------------------------------------------- events as text */

JFRC_API jfrc_text *jfrc_text_new(jfrc_out *o, uint32_t stack_depth, bool exact,
                                  const jfr_allocator *a) {
    const jfr_allocator zero = {0};
    evtext *t = jfr__alloc(a ? a : &zero, sizeof *t);
    if (t)
        evtext_init(t, o, stack_depth, exact, a);
    return t;
}

JFRC_API void jfrc_text_free(jfrc_text *t) {
    if (!t)
        return;
    jfr_allocator a = t->alloc;
    evtext_free(t);
    jfr__free(&a, t, sizeof *t);
}

JFRC_API void jfrc_text_chunk_begin(jfrc_text *t, const jfr_chunk_info *c) {
    evtext_chunk_begin(t, c);
}

JFRC_API jfr_status jfrc_text_metadata(jfrc_text *t, const jfr_metadata *m) {
    return evtext_metadata(t, m) ? JFR_OK : JFR_NOMEM;
}

JFRC_API jfr_status jfrc_text_event(jfrc_text *t, const jfr_event *e, const jfr_value *ev) {
    return evtext_event(t, e, ev);
}

JFRC_API const char *jfrc_text_error(const jfrc_text *t) { return evtext_error_str(t); }
JFRC_API void jfrc_text_finish(jfrc_text *t) { evtext_finish(t); }
JFRC_API uint64_t jfrc_text_memory(const jfrc_text *t) { return evtext_memory(t); }

/* ---------------------------------------------------------- events as JSON */

JFRC_API jfrc_json *jfrc_json_new_advanced(jfrc_out *o, uint32_t stack_depth, bool compact,
                                           const jfr_allocator *a) {
    const jfr_allocator zero = {0};
    evjson *j = jfr__alloc(a ? a : &zero, sizeof *j);
    if (j)
        evjson_init(j, o, stack_depth, compact, a);
    return j;
}

JFRC_API jfrc_json *jfrc_json_new(jfrc_out *o, uint32_t stack_depth, bool compact) {
    return jfrc_json_new_advanced(o, stack_depth, compact, NULL);
}

JFRC_API void jfrc_json_free(jfrc_json *j) {
    if (!j)
        return;
    jfr_allocator a = j->alloc;
    evjson_free(j);
    jfr__free(&a, j, sizeof *j);
}

JFRC_API void jfrc_json_set_cache_limit(jfrc_json *j, uint64_t bytes) {
    evjson_set_cache_limit(j, bytes > SIZE_MAX ? SIZE_MAX : (size_t)bytes);
}

JFRC_API uint64_t jfrc_json_memory(const jfrc_json *j) { return evjson_memory(j); }

JFRC_API void jfrc_json_chunk_begin(jfrc_json *j, const jfr_chunk_info *c) {
    evjson_chunk_begin(j, c);
}

JFRC_API void jfrc_json_metadata(jfrc_json *j, const jfr_metadata *m) { evjson_metadata(j, m); }

JFRC_API jfr_status jfrc_json_event(jfrc_json *j, const jfr_event *e, const jfr_value *ev) {
    return evjson_event(j, e, ev);
}

JFRC_API const char *jfrc_json_error(const jfrc_json *j) { return evjson_error_str(j); }

JFRC_API void jfrc_json_object_begin(jfrc_json *j) { evjson_object_begin(j); }

JFRC_API void jfrc_json_name(jfrc_json *j, const char *name) { evjson_put_name(j, name); }

JFRC_API void jfrc_json_object_end(jfrc_json *j) { evjson_object_end(j); }

/* ----------------------------------------------------------- events as XML */

JFRC_API jfrc_json *jfrc_xml_new(jfrc_out *o, uint32_t stack_depth, const jfr_allocator *a) {
    jfrc_json *j = jfrc_json_new_advanced(o, stack_depth, false, a);
    if (j)
        j->xml = true;
    return j;
}

JFRC_API void jfrc_xml_begin(jfrc_json *j) { evjson_xml_begin(j); }

JFRC_API void jfrc_xml_end(jfrc_json *j) { evjson_xml_end(j); }

/* ----------------------------------------------------------------- profiles */

JFRC_API jfrc_profile *jfrc_profile_new_advanced(const jfr_allocator *a) {
    const jfr_allocator zero = {0};
    prof *p = jfr__alloc(a ? a : &zero, sizeof *p);
    if (!p)
        return NULL;
    prof_init(p, a);
    if (p->nomem) {
        jfrc_profile_free(p);
        return NULL;
    }
    return p;
}

JFRC_API jfrc_profile *jfrc_profile_new(void) { return jfrc_profile_new_advanced(NULL); }

JFRC_API void jfrc_profile_free(jfrc_profile *p) {
    if (!p)
        return;
    jfr_allocator a = p->alloc;
    prof_free(p);
    jfr__free(&a, p, sizeof *p);
}

static jfr_status refused(const prof *p, bool ok) {
    return ok ? JFR_OK : p->nomem ? JFR_NOMEM : JFR_INVALID_ARG;
}

JFRC_API jfr_status jfrc_profile_select(jfrc_profile *p, const char *spec) {
    return refused(p, prof_select(p, spec));
}

JFRC_API size_t jfrc_profile_ntypes(const jfrc_profile *p) { return p->nsubs; }

JFRC_API const char *jfrc_profile_type(const jfrc_profile *p, size_t i) {
    return i < p->nsubs ? p->subs[i].name : NULL;
}

JFRC_API void jfrc_profile_set_flags(jfrc_profile *p, unsigned flags) {
    p->threads = flags & JFRC_PROFILE_THREADS;
    p->dot = flags & JFRC_PROFILE_DOT;
    p->count = flags & JFRC_PROFILE_COUNT;
    p->reverse = flags & JFRC_PROFILE_REVERSE;
    p->lines = flags & JFRC_PROFILE_LINES;
    p->leak = flags & JFRC_PROFILE_LEAK;
}

JFRC_API unsigned jfrc_profile_flags(const jfrc_profile *p) {
    return (p->threads ? JFRC_PROFILE_THREADS : 0u) | (p->dot ? JFRC_PROFILE_DOT : 0u) |
           (p->count ? JFRC_PROFILE_COUNT : 0u) | (p->reverse ? JFRC_PROFILE_REVERSE : 0u) |
           (p->lines ? JFRC_PROFILE_LINES : 0u) | (p->leak ? JFRC_PROFILE_LEAK : 0u);
}

JFRC_API jfr_status jfrc_profile_set_state(jfrc_profile *p, const char *list) {
    return refused(p, prof_set_state(p, list));
}

JFRC_API jfr_status jfrc_profile_set_include(jfrc_profile *p, const char *regex) {
    return refused(p, prof_set_regex(p, true, regex));
}

JFRC_API jfr_status jfrc_profile_set_exclude(jfrc_profile *p, const char *regex) {
    return refused(p, prof_set_regex(p, false, regex));
}

JFRC_API jfr_status jfrc_profile_set_from(jfrc_profile *p, const char *time) {
    return refused(p, prof_set_time(p, false, time));
}

JFRC_API jfr_status jfrc_profile_set_to(jfrc_profile *p, const char *time) {
    return refused(p, prof_set_time(p, true, time));
}

JFRC_API jfr_status jfrc_profile_set_minwidth(jfrc_profile *p, double percent) {
    if (!(percent >= 0 && percent <= 100)) {
        snprintf(p->err, sizeof p->err, "--minwidth: a percentage from 0 to 100");
        return JFR_INVALID_ARG;
    }
    p->minwidth = percent;
    return JFR_OK;
}

JFRC_API jfr_status jfrc_profile_subscribe(jfrc_profile *p, jfr_parser *parser) {
    return prof_subscribe(p, parser);
}

JFRC_API void jfrc_profile_set_source(jfrc_profile *p, uint64_t source) {
    p->cur_source = source;
}

JFRC_API void jfrc_profile_chunk_begin(jfrc_profile *p, const jfr_chunk_info *c) {
    prof_chunk_begin(p, c);
}

JFRC_API void jfrc_profile_chunk_end(jfrc_profile *p) { prof_chunk_end(p); }

JFRC_API void jfrc_profile_add(jfrc_profile *p, const jfr_event *e, uint64_t source) {
    prof_add(p, e, source);
}

JFRC_API uint64_t jfrc_profile_events(const jfrc_profile *p) { return p->events; }

JFRC_API bool jfrc_profile_ok(const jfrc_profile *p) { return !p->nomem; }

JFRC_API uint64_t jfrc_profile_total(const jfrc_profile *p) {
    return p->nodes ? p->nodes[0].total : 0;
}

JFRC_API const char *jfrc_profile_error(const jfrc_profile *p) {
    return p->err[0] ? p->err : NULL;
}

JFRC_API void jfrc_profile_clear_error(jfrc_profile *p) { p->err[0] = '\0'; }

JFRC_API jfr_status jfrc_profile_finish(jfrc_profile *p) {
    return prof_finish(p) ? JFR_OK : JFR_NOMEM;
}

JFRC_API jfr_status jfrc_profile_write_collapsed(const jfrc_profile *p, jfrc_out *o) {
    return prof_write_collapsed(p, o) ? JFR_OK : JFR_NOMEM;
}

JFRC_API jfr_status jfrc_profile_write_flamegraph(const jfrc_profile *p, jfrc_out *o,
                                                  const char *title) {
    return prof_write_flamegraph(p, o, title) ? JFR_OK : JFR_NOMEM;
}

JFRC_API jfr_status jfrc_profile_write_pprof(const jfrc_profile *p, jfrc_out *o) {
    if (p->reverse) /* pprof viewers turn stacks themselves */
        return JFR_INVALID_ARG;
    return prof_write_pprof(p, o) ? JFR_OK : JFR_NOMEM;
}

JFRC_API void jfrc_profile_reset(jfrc_profile *p) { prof_reset(p); }

/* ------------------------------------------------------------ summary table */

JFRC_API jfrc_summary *jfrc_summary_new_advanced(bool by_name, const jfr_allocator *a) {
    const jfr_allocator zero = {0};
    sum_table *s = jfr__alloc(a ? a : &zero, sizeof *s);
    if (s)
        sum_init(s, by_name, a);
    return s;
}

JFRC_API jfrc_summary *jfrc_summary_new(bool by_name) {
    return jfrc_summary_new_advanced(by_name, NULL);
}

JFRC_API void jfrc_summary_free(jfrc_summary *s) {
    if (!s)
        return;
    jfr_allocator a = s->alloc;
    sum_free(s);
    jfr__free(&a, s, sizeof *s);
}

JFRC_API void jfrc_summary_chunk_begin(jfrc_summary *s, const jfr_chunk_info *c, uint32_t *row0,
                                       uint32_t *row1) {
    sum_chunk_begin(s, c, row0, row1);
}

JFRC_API void jfrc_summary_chunk_end(jfrc_summary *s, const jfr_chunk_info *c) {
    sum_chunk_end(s, c);
}

JFRC_API void jfrc_summary_metadata(jfrc_summary *s, const jfr_metadata *m, uint32_t *rows) {
    sum_metadata(s, m, rows);
}

/* jfrc_summary_row_missing, jfrc_summary_count and jfrc_summary_record,
 * called per record, are defined in summary.c. */

JFRC_API size_t jfrc_summary_nrows(const jfrc_summary *s) { return s->nrows; }

JFRC_API const char *jfrc_summary_row_name(const jfrc_summary *s, uint32_t row) {
    return row < s->nrows ? s->rows[row].name : NULL;
}

JFRC_API bool jfrc_summary_has_chunks(const jfrc_summary *s) { return s->have_first; }

JFRC_API bool jfrc_summary_ok(const jfrc_summary *s) { return !s->nomem; }

JFRC_API void jfrc_summary_print(jfrc_summary *s, jfrc_out *o) { sum_print(s, o); }
