/*
 * evjson.c — one event as `jfr print --json` prints it (see evjson.h and the
 * notes at the top of cmd_print.c on what is mirrored from the JDK tool).
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#include "evjson.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --------------------------------------------------------- JSON layout */

static void indent(evjson *pr) {
    if (!pr->compact)
        ob_fill(pr->o, ' ', pr->indent);
}

static void put_name(evjson *pr, const char *name) {
    indent(pr);
    ob_putc(pr->o, '"');
    jfmt_json_string(pr->o, name, strlen(name), false);
    if (pr->compact)
        ob_write(pr->o, "\":", 2);
    else
        ob_write(pr->o, "\": ", 3);
}

/* Between the elements of an array. */
static void comma(evjson *pr) {
    if (pr->compact)
        ob_putc(pr->o, ',');
    else
        ob_write(pr->o, ", ", 2);
}

/* The JDK writer's printNewDataStructure. */
static void separator(evjson *pr, bool first, bool array_element, const char *name) {
    if (!first) {
        comma(pr);
        if (!array_element && !pr->compact)
            ob_putc(pr->o, '\n');
    }
    if (!array_element)
        put_name(pr, name);
}

static void object_begin(evjson *pr) {
    if (pr->compact) {
        ob_putc(pr->o, '{');
        return;
    }
    ob_write(pr->o, "{\n", 2);
    pr->indent += 2;
}

static void object_end(evjson *pr) {
    if (pr->compact) {
        ob_putc(pr->o, '}');
        return;
    }
    pr->indent -= 2;
    ob_putc(pr->o, '\n');
    indent(pr);
    ob_putc(pr->o, '}');
}

static void put_null(evjson *pr) { ob_write(pr->o, "null", 4); }

static void put_quoted(evjson *pr, const char *s, size_t n) {
    ob_putc(pr->o, '"');
    ob_write(pr->o, s, n); /* our own ASCII formats: nothing to escape */
    ob_putc(pr->o, '"');
}

/* ------------------------------------------------------------- values */

static bool is_struct_type(const jfr_type *t) {
    return t && t->base == JFR_BASE_STRUCT && !t->simple && t->nfields > 0;
}

static bool is_frame_type(const jfr_type *t) {
    return t && (strcmp(t->name, "jdk.types.StackFrame") == 0 ||
                 strcmp(t->name, "com.oracle.jfr.types.StackFrame") == 0);
}

static void note_error(evjson *pr, jfr_status s) {
    if (!pr->decode_error)
        pr->decode_error = s;
}

/* Enter one more object or array; false (null printed, the event reports
 * JFR_LIMIT) at the nesting limit. */
static bool nest_in(evjson *pr) {
    if (pr->nest >= EVJSON_MAX_NEST) {
        note_error(pr, JFR_LIMIT);
        put_null(pr);
        return false;
    }
    pr->nest++;
    return true;
}

static void print_object(evjson *pr, const jfr_value *obj);

/* A value as the JDK prints an unconverted field value (printValue). */
static void print_plain(evjson *pr, const jfr_value *v) {
    char buf[JFMT_NUM_MAX];
    size_t n;
    switch (v->kind) {
    case JFR_KIND_NULL:
        put_null(pr);
        return;
    case JFR_KIND_BOOLEAN:
        if (v->b)
            ob_write(pr->o, "true", 4);
        else
            ob_write(pr->o, "false", 5);
        return;
    case JFR_KIND_INT:
        ob_i64(pr->o, v->i);
        return;
    case JFR_KIND_CHAR:
        ob_putc(pr->o, '"');
        jfmt_json_char(pr->o, (uint32_t)v->u);
        ob_putc(pr->o, '"');
        return;
    case JFR_KIND_FLOAT:
        if (isnan(v->d) || isinf(v->d)) {
            put_null(pr);
            return;
        }
        n = jfmt_float((float)v->d, buf);
        ob_write(pr->o, buf, n);
        return;
    case JFR_KIND_DOUBLE:
        if (isnan(v->d) || isinf(v->d)) {
            put_null(pr);
            return;
        }
        n = jfmt_double(v->d, buf);
        ob_write(pr->o, buf, n);
        return;
    case JFR_KIND_STRING:
        ob_putc(pr->o, '"');
        jfmt_json_string(pr->o, v->str, v->len, v->encoding == 3);
        ob_putc(pr->o, '"');
        return;
    case JFR_KIND_OBJECT:
        print_object(pr, v);
        return;
    case JFR_KIND_ARRAY: {
        /* only reachable through a simpleType wrapping an array */
        jfr_iter it;
        jfr_value e;
        int r;
        bool first = true;
        if (!nest_in(pr))
            return;
        ob_putc(pr->o, '[');
        jfr_iter_init(&it, v);
        while ((r = jfr_iter_next(&it, &e)) > 0) {
            if (!first)
                comma(pr);
            first = false;
            print_plain(pr, &e);
        }
        if (r < 0)
            note_error(pr, (jfr_status)-r);
        ob_putc(pr->o, ']');
        pr->nest--;
        return;
    }
    }
    put_null(pr);
}

/* The widened integer the JDK's getDuration/getInstant start from. */
static bool widen(const jfr_value *v, bool is_unsigned, int64_t *out) {
    if (v->kind == JFR_KIND_CHAR) {
        *out = (int64_t)(uint16_t)v->u;
        return true;
    }
    if (v->kind != JFR_KIND_INT || !v->type)
        return false;
    switch (v->type->base) {
    case JFR_BASE_LONG:
        *out = v->i;
        return true;
    case JFR_BASE_INT:
        *out = is_unsigned ? (int64_t)(uint32_t)v->i : (int64_t)(int32_t)v->i;
        return true;
    case JFR_BASE_SHORT:
        *out = is_unsigned ? (int64_t)(uint16_t)v->i : (int64_t)(int16_t)v->i;
        return true;
    case JFR_BASE_BYTE:
        /* the JDK widens an unsigned byte through short: -1 -> 65535 */
        *out = is_unsigned ? (int64_t)(uint16_t)(int16_t)(int8_t)v->i : (int64_t)(int8_t)v->i;
        return true;
    default:
        *out = v->i;
        return true;
    }
}

static jfmt_span_unit span_unit(uint32_t units) {
    if (units & JFR_UNIT_TIMESPAN_TICKS)
        return JFMT_SPAN_TICKS;
    if (units & JFR_UNIT_TIMESPAN_NANOS)
        return JFMT_SPAN_NANOS;
    if (units & JFR_UNIT_TIMESPAN_MICROS)
        return JFMT_SPAN_MICROS;
    if (units & JFR_UNIT_TIMESPAN_MILLIS)
        return JFMT_SPAN_MILLIS;
    return JFMT_SPAN_SECONDS;
}

/* A non-array, non-struct field value, converted as the JDK's
 * EventPrintWriter.getValue does. */
static void print_scalar_field(evjson *pr, const jfr_field *f, const jfr_value *raw) {
    jfr_value u;
    const jfr_value *v = raw;
    if (raw->kind == JFR_KIND_OBJECT && raw->type && raw->type->simple) {
        jfr_status s = jfr_value_unwrap(raw, &u);
        if (s) {
            note_error(pr, s);
            put_null(pr);
            return;
        }
        v = &u;
    }
    uint32_t units = f->units;
    bool is_unsigned = (units & JFR_UNIT_UNSIGNED) != 0;
    char buf[JFMT_TIME_MAX];
    int64_t w;
    if ((units & JFR_UNIT_TIMESPAN) && widen(v, is_unsigned, &w)) {
        size_t n = jfmt_timespan(w, span_unit(units), &pr->tb, buf);
        put_quoted(pr, buf, n);
        return;
    }
    if ((units & JFR_UNIT_TIMESTAMP) && widen(v, is_unsigned, &w)) {
        size_t n = jfmt_timestamp(w, (units & JFR_UNIT_TIMESTAMP_TICKS) == 0, &pr->tb,
                                  pr->zone, buf);
        put_quoted(pr, buf, n);
        return;
    }
    if (is_unsigned && v->kind == JFR_KIND_INT && v->type) {
        uint64_t x;
        switch (v->type->base) {
        case JFR_BASE_BYTE: x = (uint8_t)v->i; break;
        case JFR_BASE_SHORT: x = (uint16_t)v->i; break;
        case JFR_BASE_INT: x = (uint32_t)v->i; break;
        default: x = (uint64_t)v->i; break;
        }
        ob_u64(pr->o, x);
        return;
    }
    print_plain(pr, v);
}

static void print_array(evjson *pr, const jfr_field *f, const jfr_value *arr) {
    if (arr->kind != JFR_KIND_ARRAY) {
        put_null(pr);
        return;
    }
    const jfr_type *et = f->type;
    bool structs = is_struct_type(et);
    uint32_t limit = arr->count;
    if (is_frame_type(et) && limit > pr->stack_depth)
        limit = pr->stack_depth;
    if (!nest_in(pr))
        return;
    ob_putc(pr->o, '[');
    jfr_iter it;
    jfr_value e;
    jfr_iter_init(&it, arr);
    for (uint32_t i = 0; i < limit; i++) {
        int r = jfr_iter_next(&it, &e);
        if (r <= 0) {
            if (r < 0)
                note_error(pr, (jfr_status)-r);
            break;
        }
        if (i > 0)
            comma(pr);
        if (structs && e.kind == JFR_KIND_OBJECT)
            print_object(pr, &e);
        else if (e.kind == JFR_KIND_OBJECT && e.type && e.type->simple) {
            jfr_value u;
            jfr_status s = jfr_value_unwrap(&e, &u);
            if (s) {
                note_error(pr, s);
                put_null(pr);
            } else {
                print_plain(pr, &u);
            }
        } else {
            print_plain(pr, &e);
        }
    }
    ob_putc(pr->o, ']');
    pr->nest--;
}

/* Is the pooled object already open on the current print path? A linear
 * scan: paths are short (a few hundred for the deepest real chains). */
static bool on_path(const evjson *pr, const jfr_value *v) {
    for (size_t i = 0; i < pr->npath; i++)
        if (pr->path[i].key == v->key && pr->path[i].type == v->type)
            return true;
    return false;
}

static bool path_push(evjson *pr, const jfr_value *v) {
    if (pr->npath == pr->cappath) {
        size_t cap = pr->cappath ? pr->cappath * 2 : 64;
        void *np = realloc(pr->path, cap * sizeof *pr->path);
        if (!np)
            return false;
        pr->path = np;
        pr->cappath = cap;
    }
    pr->path[pr->npath].type = v->type;
    pr->path[pr->npath].key = v->key;
    pr->npath++;
    return true;
}

static void print_fields(evjson *pr, const jfr_value *obj) {
    const jfr_type *t = obj->type;
    jfr_iter it;
    jfr_value v;
    bool broken = false; /* positions after a decode error are unknown */
    jfr_iter_init(&it, obj);
    for (uint32_t i = 0; i < t->nfields; i++) {
        const jfr_field *f = &t->fields[i];
        separator(pr, i == 0, false, f->name);
        int r = broken ? -1 : jfr_iter_next(&it, &v);
        if (r <= 0) {
            /* keep the output valid JSON; the event is reported as an error */
            if (!broken)
                note_error(pr, r < 0 ? (jfr_status)-r : JFR_BAD_EVENT);
            broken = true;
            put_null(pr);
            continue;
        }
        if (f->array)
            print_array(pr, f, &v);
        else if (is_struct_type(f->type))
            v.kind == JFR_KIND_OBJECT ? print_object(pr, &v) : put_null(pr);
        else
            print_scalar_field(pr, f, &v);
    }
}

static void print_object(evjson *pr, const jfr_value *obj) {
    bool pushed = false;
    if (obj->pooled) {
        /* a reference back into an object open on this path: null, where
         * the JDK nulls the reference that closes the cycle in the order
         * its resolver visits the pool (see cmd_print.c) */
        if (on_path(pr, obj)) {
            put_null(pr);
            return;
        }
        if (!path_push(pr, obj)) {
            note_error(pr, JFR_NOMEM);
            put_null(pr);
            return;
        }
        pushed = true;
    }
    if (nest_in(pr)) {
        object_begin(pr);
        print_fields(pr, obj);
        object_end(pr);
        pr->nest--;
    }
    if (pushed)
        pr->npath--;
}

/* -------------------------------------------------------------- API */

void evjson_init(evjson *pr, outbuf *o, uint32_t stack_depth, bool compact) {
    memset(pr, 0, sizeof *pr);
    pr->o = o;
    pr->stack_depth = stack_depth;
    pr->compact = compact;
}

void evjson_free(evjson *pr) {
    free(pr->path);
    pr->path = NULL;
    pr->npath = pr->cappath = 0;
}

void evjson_chunk_begin(evjson *pr, const jfr_chunk_info *c) {
    if (!pr->have_tb) { /* the JDK converts every chunk with the first one's base */
        pr->have_tb = true;
        pr->tb = (jfmt_timebase){c->start_nanos, c->start_ticks, c->ticks_per_second};
    }
}

void evjson_metadata(evjson *pr, const jfr_metadata *m) {
    if (!pr->have_zone) { /* also the first chunk's, like the time base */
        pr->have_zone = true;
        pr->zone = jfmt_zone_offset_seconds(m->gmt_offset_ms, m->dst_ms);
    }
}

jfr_status evjson_event(evjson *pr, const jfr_event *e, const jfr_value *ev) {
    pr->decode_error = JFR_OK;
    pr->npath = 0;
    pr->nest = 0;
    object_begin(pr);
    put_name(pr, "type");
    ob_putc(pr->o, '"');
    jfmt_json_string(pr->o, e->type->name, strlen(e->type->name), false);
    ob_putc(pr->o, '"');
    separator(pr, false, false, "values");
    object_begin(pr);
    print_fields(pr, ev);
    object_end(pr);
    object_end(pr);
    return pr->decode_error;
}

void evjson_object_begin(evjson *pr) { object_begin(pr); }
void evjson_object_end(evjson *pr) { object_end(pr); }
void evjson_put_name(evjson *pr, const char *name) { put_name(pr, name); }

const char *evjson_error_str(const evjson *pr) {
    if (pr->decode_error == JFR_LIMIT)
        return "objects nested deeper than " JFR_STRINGIFY(EVJSON_MAX_NEST)
               " levels (a reference chain too deep to print)";
    return jfr_status_str(pr->decode_error);
}
