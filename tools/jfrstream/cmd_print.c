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
 *    objects, followed as deep as the data goes (jdk.OldObjectSample
 *    chains: about 200 references); simpleType values flattened; key 0 and
 *    dangling keys as null;
 *  - cycles: a reference to a pooled object already open on the printed
 *    path prints as null. The JDK nulls instead the reference that closes
 *    a cycle while it resolves the pool (in its own key order), once for
 *    all events: for cyclic data its output depends on that order and can
 *    be shorter (test/refchain.py shows both). HotSpot's pools have none
 *    that we know of (class -> loader -> class chains end at the boot
 *    loader);
 *  - more than EVJSON_MAX_NEST (4096) nested objects and arrays in one
 *    event (hostile data; the JDK's recursion would overflow its stack):
 *    null from there on, and the event is reported (exit status 1);
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
#include "evjson.h"
#include "jformat.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct printer {
    evjson ej;
    bool first_event;
    cli_filter filter;
    bool table;        /* filter through `want` (not by subscription) */
    uint8_t *want;     /* per type index of the current chunk */
    size_t capwant;
    bool nomem;
} printer;

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
    if (!pr->first_event)
        ob_write(pr->ej.o, ", ", 2); /* array elements: no newline */
    pr->first_event = false;
    s = evjson_event(&pr->ej, e, &ev);
    if (s)
        cli_data_error("chunk %llu at byte %llu: %s event could not be fully decoded: %s",
                       (unsigned long long)e->chunk_index, (unsigned long long)e->offset,
                       e->type->name, evjson_error_str(&pr->ej));
    return JFR_CB_CONTINUE;
}

static int on_chunk_begin(jfr_parser *p, const jfr_chunk_info *c, void *user) {
    (void)p;
    printer *pr = user;
    evjson_chunk_begin(&pr->ej, c);
    return JFR_CB_CONTINUE;
}

static int on_metadata(jfr_parser *p, const jfr_metadata *m, void *user) {
    (void)p;
    printer *pr = user;
    evjson_metadata(&pr->ej, m);
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
    evjson_init(&pr.ej, &cli_out, 5, false);
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
            pr.ej.stack_depth = (uint32_t)v;
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
    jfr_callbacks cb = {.size = sizeof cb, .on_chunk_begin = on_chunk_begin,
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

    evjson *ej = &pr.ej;
    evjson_object_begin(ej);
    evjson_put_name(ej, "recording");
    evjson_object_begin(ej);
    evjson_put_name(ej, "events");
    ob_putc(ej->o, '[');
    rc = cli_parse(g, path, &opts, &cb, &pr, setup);
    ob_putc(ej->o, ']');
    evjson_object_end(ej);
    evjson_object_end(ej);
    if (pr.nomem) {
        cli_error("out of memory");
        rc = CLI_EXIT_ERROR;
    }
out:
    cli_filter_free(&pr.filter);
    evjson_free(&pr.ej);
    free(pr.want);
    return rc;
}
