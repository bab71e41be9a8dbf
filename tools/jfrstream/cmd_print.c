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
#include "args.h"
#include "commands.h"
#include "filter.h"
#include "frontend.h"
#include "report.h"
#include "usage.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct printer {
    jfrc_json *ej;
    uint32_t stack_depth; /* --stack-depth */
    bool first_event;
    cli_filter filter;
    bool table;        /* filter through `want` (not by subscription) */
    cli_type_set want; /* per type index of the current chunk */
    bool nomem;
    const char *path;  /* FILE */
} printer;

/* ---------------------------------------------------------- callbacks */

/* An event that cannot be (fully) decoded: reported, exit status 1. */
static void data_error(const jfr_event *e, jfr_status s, const char *json_error) {
    char *m = cli_event_error(e, s, json_error);
    cli_data_error("%s", m ? m : "out of memory");
    free(m);
}

static int on_event(jfr_parser *p, const jfr_event *e, void *user) {
    (void)p;
    printer *pr = user;
    if (pr->table && !cli_type_set_has(&pr->want, e->type))
        return JFR_CB_CONTINUE;
    jfr_value ev;
    jfr_status s = jfr_event_value(e, &ev);
    if (s) {
        data_error(e, s, NULL);
        return JFR_CB_CONTINUE;
    }
    if (!pr->first_event)
        jfrc_out_write(cli_out, ", ", 2); /* array elements: no newline */
    pr->first_event = false;
    s = jfrc_json_event(pr->ej, e, &ev);
    if (s)
        data_error(e, s, jfrc_json_error(pr->ej));
    return JFR_CB_CONTINUE;
}

static int on_chunk_begin(jfr_parser *p, const jfr_chunk_info *c, void *user) {
    (void)p;
    printer *pr = user;
    jfrc_json_chunk_begin(pr->ej, c);
    return JFR_CB_CONTINUE;
}

static int on_metadata(jfr_parser *p, const jfr_metadata *m, void *user) {
    (void)p;
    printer *pr = user;
    jfrc_json_metadata(pr->ej, m);
    if (pr->table && !cli_type_set_build(&pr->want, &pr->filter, m)) {
        pr->nomem = true;
        return JFR_CB_STOP;
    }
    return JFR_CB_CONTINUE;
}

/* Subscribe to the literal event names of the filter (skips the others). */
static jfr_status subscribe(jfr_parser *p, void *user) {
    printer *pr = user;
    return cli_filter_subscribe(&pr->filter, p, on_event, pr);
}

/* ------------------------------------------------------------ command */

static int on_arg(void *ctx, const cli_arg *a) {
    printer *pr = ctx;
    if (!a->opt) {
        if (pr->path)
            return cli_usage_error("print: too many arguments");
        pr->path = a->as;
        return CLI_EXIT_OK;
    }
    switch (a->opt->key) {
    case OPT_JSON:
        return CLI_EXIT_OK;
    case OPT_EVENTS:
    case OPT_CATEGORIES:
        return cli_filter_option(&pr->filter, a);
    case OPT_STACK_DEPTH: {
        char *end;
        if (!a->value)
            return cli_usage_error("print: missing value after --stack-depth");
        errno = 0;
        long v = strtol(a->value, &end, 10);
        if (errno || *end || end == a->value || v < 0 || v > INT32_MAX)
            return cli_usage_error("print: --stack-depth needs a number >= 0, got '%s'",
                                   a->value);
        pr->stack_depth = (uint32_t)v;
        return CLI_EXIT_OK;
    }
    default: /* OPT_UNSUPPORTED */
        return cli_usage_error("print: %s is not supported (only --json)", a->as);
    }
}

int cmd_print(const cli_command *c, cli_global *g, int argc, char **argv) {
    printer pr;
    memset(&pr, 0, sizeof pr);
    pr.stack_depth = 5;
    pr.first_event = true;
    const char *path;
    int rc = cli_args(c, g, argc, argv, on_arg, &pr);
    if (rc != CLI_ARGS_RUN)
        goto out;
    path = pr.path;
    if (!path) {
        rc = cli_usage_error("print: missing FILE");
        goto out;
    }

    pr.ej = jfrc_json_new(cli_out, pr.stack_depth, false);
    if (!pr.ej) {
        cli_error("out of memory");
        rc = CLI_EXIT_ERROR;
        goto out;
    }
    if (g->max_memory) { /* the writer's cache and the parser share it */
        uint64_t share = cli_json_cache_share(g->max_memory);
        jfrc_json_set_cache_limit(pr.ej, share);
        g->max_memory -= share;
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

    jfrc_json *ej = pr.ej;
    jfrc_json_object_begin(ej);
    jfrc_json_name(ej, "recording");
    jfrc_json_object_begin(ej);
    jfrc_json_name(ej, "events");
    jfrc_out_putc(cli_out, '[');
    rc = cli_parse(g, path, &opts, &cb, &pr, setup);
    jfrc_out_putc(cli_out, ']');
    jfrc_json_object_end(ej);
    jfrc_json_object_end(ej);
    if (pr.nomem) {
        cli_error("out of memory");
        rc = CLI_EXIT_ERROR;
    }
out:
    cli_filter_free(&pr.filter);
    jfrc_json_free(pr.ej);
    cli_type_set_free(&pr.want);
    return rc;
}
