/*
 * cmd_print.c — `jfrstream print --json`: events as the JDK's
 * `jfr print --json` prints them (JDK 25 output is the reference).
 *
 * What is mirrored from the JDK tool:
 *  - layout: {"recording": {"events": [{"type": ..., "values": {...}}]}},
 *    two-space indentation, ", " separators, no final newline;
 *  - events per chunk in end-time order (the parser's `ordered` option) and
 *    ticks converted with the first chunk's time base (jformat.c does the
 *    conversion exactly as the JDK's TimeConverter);
 *  - fields in metadata order; structs and pool references as nested
 *    objects; simpleType values flattened; key 0, dangling keys and cycles
 *    as null;
 *  - @Timespan fields as Duration strings, @Timestamp fields as
 *    OffsetDateTime strings in the first chunk's zone offset, @Unsigned
 *    byte/short/int/long as unsigned numbers; array elements unconverted;
 *  - arrays of jdk.types.StackFrame cut to --stack-depth (default 5);
 *  - floats and doubles as Float/Double.toString, NaN and infinities null;
 *    chars as one-character strings; strings escaped as the JDK does.
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#include "cli.h"
#include "jformat.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_PATH_DEPTH 256 /* pooled objects open on the current print path */

typedef struct pool_ref {
    const jfr_type *type;
    uint64_t key;
} pool_ref;

typedef struct printer {
    outbuf *o;
    size_t indent;
    bool first_event;
    uint32_t stack_depth;
    jfmt_timebase tb;
    bool have_tb;
    int32_t zone;
    bool have_zone;
    cli_filter filter;
    bool table;        /* filter through `want` (not by subscription) */
    uint8_t *want;     /* per type index of the current chunk */
    size_t capwant;
    pool_ref path[MAX_PATH_DEPTH];
    size_t npath;
    jfr_status decode_error; /* first decode error of the current event */
    bool nomem;
} printer;

/* --------------------------------------------------------- JSON layout */

static void indent(printer *pr) { ob_fill(pr->o, ' ', pr->indent); }

static void put_name(printer *pr, const char *name) {
    indent(pr);
    ob_putc(pr->o, '"');
    jfmt_json_string(pr->o, name, strlen(name), false);
    ob_write(pr->o, "\": ", 3);
}

/* The JDK writer's printNewDataStructure. */
static void separator(printer *pr, bool first, bool array_element, const char *name) {
    if (!first) {
        ob_write(pr->o, ", ", 2);
        if (!array_element)
            ob_putc(pr->o, '\n');
    }
    if (!array_element)
        put_name(pr, name);
}

static void object_begin(printer *pr) {
    ob_write(pr->o, "{\n", 2);
    pr->indent += 2;
}

static void object_end(printer *pr) {
    pr->indent -= 2;
    ob_putc(pr->o, '\n');
    indent(pr);
    ob_putc(pr->o, '}');
}

static void put_null(printer *pr) { ob_write(pr->o, "null", 4); }

static void put_quoted(printer *pr, const char *s, size_t n) {
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

static void note_error(printer *pr, jfr_status s) {
    if (!pr->decode_error)
        pr->decode_error = s;
}

static void print_object(printer *pr, const jfr_value *obj);

/* A value as the JDK prints an unconverted field value (printValue). */
static void print_plain(printer *pr, const jfr_value *v) {
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
        ob_putc(pr->o, '[');
        jfr_iter_init(&it, v);
        while ((r = jfr_iter_next(&it, &e)) > 0) {
            if (!first)
                ob_write(pr->o, ", ", 2);
            first = false;
            print_plain(pr, &e);
        }
        if (r < 0)
            note_error(pr, (jfr_status)-r);
        ob_putc(pr->o, ']');
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
static void print_scalar_field(printer *pr, const jfr_field *f, const jfr_value *raw) {
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

static void print_array(printer *pr, const jfr_field *f, const jfr_value *arr) {
    if (arr->kind != JFR_KIND_ARRAY) {
        put_null(pr);
        return;
    }
    const jfr_type *et = f->type;
    bool structs = is_struct_type(et);
    uint32_t limit = arr->count;
    if (is_frame_type(et) && limit > pr->stack_depth)
        limit = pr->stack_depth;
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
            ob_write(pr->o, ", ", 2);
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
}

/* Is the pooled object already open on the current print path? */
static bool on_path(const printer *pr, const jfr_value *v) {
    for (size_t i = 0; i < pr->npath; i++)
        if (pr->path[i].key == v->key && pr->path[i].type == v->type)
            return true;
    return false;
}

static void print_fields(printer *pr, const jfr_value *obj) {
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

static void print_object(printer *pr, const jfr_value *obj) {
    bool pushed = false;
    if (obj->pooled) {
        /* a reference back into an object being printed: the JDK's
         * resolver yields null there */
        if (on_path(pr, obj) || pr->npath == MAX_PATH_DEPTH) {
            put_null(pr);
            return;
        }
        pr->path[pr->npath++] = (pool_ref){obj->type, obj->key};
        pushed = true;
    }
    object_begin(pr);
    print_fields(pr, obj);
    object_end(pr);
    if (pushed)
        pr->npath--;
}

/* ---------------------------------------------------------- callbacks */

static int on_event(jfr_parser *p, const jfr_event *e, void *user) {
    (void)p;
    printer *pr = user;
    if (pr->table && (e->type->index >= pr->capwant || !pr->want[e->type->index]))
        return JFR_CB_CONTINUE;
    jfr_value ev;
    jfr_status s = jfr_event_value(e, &ev);
    if (s) {
        cli_data_error("chunk %llu at byte %llu: %s: %s", (unsigned long long)e->chunk_index,
                  (unsigned long long)e->offset, e->type->name, jfr_status_str(s));
        return JFR_CB_CONTINUE;
    }
    pr->decode_error = JFR_OK;
    pr->npath = 0;
    separator(pr, pr->first_event, true, NULL);
    pr->first_event = false;
    object_begin(pr);
    put_name(pr, "type");
    ob_putc(pr->o, '"');
    jfmt_json_string(pr->o, e->type->name, strlen(e->type->name), false);
    ob_putc(pr->o, '"');
    separator(pr, false, false, "values");
    object_begin(pr);
    print_fields(pr, &ev);
    object_end(pr);
    object_end(pr);
    if (pr->decode_error)
        cli_data_error("chunk %llu at byte %llu: %s event could not be fully decoded: %s",
                       (unsigned long long)e->chunk_index, (unsigned long long)e->offset,
                       e->type->name, jfr_status_str(pr->decode_error));
    return JFR_CB_CONTINUE;
}

static int on_chunk_begin(jfr_parser *p, const jfr_chunk_info *c, void *user) {
    (void)p;
    printer *pr = user;
    if (!pr->have_tb) { /* the JDK converts every chunk with the first one's base */
        pr->have_tb = true;
        pr->tb = (jfmt_timebase){c->start_nanos, c->start_ticks, c->ticks_per_second};
    }
    return JFR_CB_CONTINUE;
}

static int on_metadata(jfr_parser *p, const jfr_metadata *m, void *user) {
    (void)p;
    printer *pr = user;
    if (!pr->have_zone) { /* also the first chunk's, like the time base */
        pr->have_zone = true;
        pr->zone = jfmt_zone_offset_seconds(m->gmt_offset_ms, m->dst_ms);
    }
    if (pr->table) {
        size_t n = m->ntypes;
        if (n > pr->capwant) {
            uint8_t *w = realloc(pr->want, n);
            if (!w) {
                pr->nomem = true;
                return JFR_CB_STOP;
            }
            pr->want = w;
            pr->capwant = n;
        }
        memset(pr->want, 0, pr->capwant);
        for (uint32_t i = 0; i < m->ntypes; i++) {
            const jfr_type *t = m->types[i];
            if (t->is_event && t->index < pr->capwant)
                pr->want[t->index] = cli_filter_match(&pr->filter, t);
        }
    }
    return JFR_CB_CONTINUE;
}

/* Subscribe to the literal event names of the filter (skips the others). */
static jfr_status subscribe(jfr_parser *p, void *user) {
    printer *pr = user;
    for (size_t i = 0; i < pr->filter.nevents; i++) {
        bool dup = false;
        for (size_t k = 0; k < i; k++)
            if (strcmp(pr->filter.events[k], pr->filter.events[i]) == 0)
                dup = true;
        if (dup)
            continue;
        jfr_status s = jfr_parser_on(p, pr->filter.events[i], on_event, pr);
        if (s)
            return s;
    }
    return JFR_OK;
}

/* ------------------------------------------------------------ command */

int cmd_print(cli_global *g, int argc, char **argv) {
    printer pr;
    memset(&pr, 0, sizeof pr);
    pr.o = &cli_out;
    pr.stack_depth = 5;
    pr.first_event = true;
    const char *path = NULL;
    int rc = CLI_EXIT_OK;
    for (int i = 0; i < argc;) {
        int r = cli_take_global(g, argc, argv, &i);
        if (r < 0) {
            rc = CLI_EXIT_USAGE;
            goto out;
        }
        if (r > 0)
            continue;
        const char *a = argv[i];
        if (cli_is_help(a)) {
            cli_usage(stdout);
            rc = CLI_EXIT_OK;
            goto out;
        }
        if (strcmp(a, "--json") == 0) {
            i++;
        } else if (strcmp(a, "--events") == 0 || strcmp(a, "--categories") == 0) {
            bool cat = a[2] == 'c';
            if (i + 1 >= argc || strncmp(argv[i + 1], "--", 2) == 0) {
                rc = cli_usage_error("print: missing filter after %s", a);
                goto out;
            }
            if (cat ? pr.filter.has_categories : pr.filter.has_events) {
                rc = cli_usage_error("print: use %s A,B,C to give several", a);
                goto out;
            }
            if (!cli_filter_add(&pr.filter, cat, argv[i + 1])) {
                cli_error("out of memory");
                rc = CLI_EXIT_ERROR;
                goto out;
            }
            i += 2;
        } else if (strcmp(a, "--stack-depth") == 0) {
            char *end;
            if (i + 1 >= argc) {
                rc = cli_usage_error("print: missing value after --stack-depth");
                goto out;
            }
            errno = 0;
            long v = strtol(argv[i + 1], &end, 10);
            if (errno || *end || end == argv[i + 1] || v < 0 || v > INT32_MAX) {
                rc = cli_usage_error("print: --stack-depth needs a number >= 0, got '%s'",
                                     argv[i + 1]);
                goto out;
            }
            pr.stack_depth = (uint32_t)v;
            i += 2;
        } else if (strcmp(a, "--xml") == 0 || strcmp(a, "--exact") == 0) {
            rc = cli_usage_error("print: %s is not supported (only --json)", a);
            goto out;
        } else if (a[0] == '-' && a[1] != '\0') {
            rc = cli_usage_error("print: unknown option '%s'", a);
            goto out;
        } else {
            if (path) {
                rc = cli_usage_error("print: too many arguments");
                goto out;
            }
            path = a;
            i++;
        }
    }
    if (!path) {
        rc = cli_usage_error("print: missing FILE");
        goto out;
    }

    jfr_options opts;
    jfr_options_init(&opts);
    opts.ordered = true;
    opts.jdk_time_base = true;
    jfr_callbacks cb = {.on_chunk_begin = on_chunk_begin,
                        .on_metadata = on_metadata,
                        .on_error = cli_on_error};
    cli_setup_fn setup = NULL;
    if (cli_filter_active(&pr.filter) && cli_filter_literal(&pr.filter)) {
        setup = subscribe; /* only the named types are dispatched */
    } else {
        /* simple names, globs and categories are resolved per chunk from
         * its metadata, after the parser has mapped subscriptions: filter
         * the generic callback through a per-type table */
        cb.on_event = on_event;
        pr.table = cli_filter_active(&pr.filter);
    }

    outbuf *o = pr.o;
    object_begin(&pr);
    put_name(&pr, "recording");
    object_begin(&pr);
    put_name(&pr, "events");
    ob_putc(o, '[');
    rc = cli_parse(g, path, &opts, &cb, &pr, setup);
    ob_putc(o, ']');
    object_end(&pr);
    object_end(&pr);
    if (pr.nomem) {
        cli_error("out of memory");
        rc = CLI_EXIT_ERROR;
    }
out:
    cli_filter_free(&pr.filter);
    free(pr.want);
    return rc;
}
