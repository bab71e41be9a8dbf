/*
 * cmd_print.c — `jfrstream print --json`: events as the JDK's
 * `jfr print --json` prints them (JDK 25 output is the reference).
 *
 * What is mirrored from the JDK tool:
 *  - layout: {"recording": {"events": [{"type": ..., "values": {...}}]}},
 *    two-space indentation, ", " separators, no final newline;
 *  - events per chunk in end-time order (the parser's `ordered` option) and
 *    ticks converted with the first chunk's time base (jformat_time.c does the
 *    conversion exactly as the JDK's TimeConverter);
 *  - fields in metadata order; structs and pool references as nested
 *    objects, followed as deep as the data goes (jdk.OldObjectSample
 *    chains: about 200 references); simpleType values flattened; key 0 and
 *    dangling keys as null;
 *  - cycles: a reference to a pooled object already open on the printed
 *    path prints as null. The JDK nulls instead the reference that closes
 *    a cycle while it resolves the pool (in its own key order), once for
 *    all events: for cyclic data its output depends on that order and can
 *    be shorter (test/cli/refchain.py shows both). HotSpot's pools have none
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
#define JFRSTREAM_EXPERIMENTAL /* jfr_parser_skip_events */
#include "args.h"
#include "commands.h"
#include "filter.h"
#include "frontend.h"
#include "ordered.h"
#include "report.h"
#include "usage.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct printer {
    jfrc_json *ej;
    jfrc_text *tx;     /* text (not --json): the JDK's order, one thread */
    int format;        /* 0 text, OPT_JSON, OPT_XML, OPT_EXACT */
    jfrc_out *out;     /* cli_out, or a worker's (ordered.h) */
    cli_worker *w;     /* a parallel run's worker, else NULL */
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
    printer *pr = user;
    if (pr->table && !cli_type_set_has(&pr->want, e->type))
        return JFR_CB_CONTINUE;
    if (pr->w && !cli_worker_event(pr->w)) {
        /* another worker prints it, and the rest of its batch: passed
         * over unseen, unless events are filtered here (they must all be
         * counted one by one then) */
        if (!pr->table)
            jfr_parser_skip_events(p, cli_worker_pass(pr->w));
        return JFR_CB_CONTINUE;
    }
    jfr_value ev;
    jfr_status s = jfr_event_value(e, &ev);
    if (s) {
        data_error(e, s, NULL);
        return JFR_CB_CONTINUE;
    }
    if (pr->tx) {
        if ((s = jfrc_text_event(pr->tx, e, &ev)) != JFR_OK)
            data_error(e, s, jfrc_text_error(pr->tx));
        return JFR_CB_CONTINUE;
    }
    /* array elements: no newline; a worker writes the separator before
     * every event, and the writer drops the very first one (XML: none) */
    if ((!pr->first_event || pr->w) && pr->format != OPT_XML)
        jfrc_out_write(pr->out, ", ", 2);
    pr->first_event = false;
    s = jfrc_json_event(pr->ej, e, &ev);
    if (s)
        data_error(e, s, jfrc_json_error(pr->ej));
    return JFR_CB_CONTINUE;
}

static int on_chunk_begin(jfr_parser *p, const jfr_chunk_info *c, void *user) {
    (void)p;
    printer *pr = user;
    if (pr->tx)
        jfrc_text_chunk_begin(pr->tx, c);
    else
        jfrc_json_chunk_begin(pr->ej, c);
    return JFR_CB_CONTINUE;
}

static int on_metadata(jfr_parser *p, const jfr_metadata *m, void *user) {
    (void)p;
    printer *pr = user;
    if (pr->tx) {
        if (jfrc_text_metadata(pr->tx, m) != JFR_OK) {
            pr->nomem = true;
            return JFR_CB_STOP;
        }
    } else {
        jfrc_json_metadata(pr->ej, m);
    }
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
    case OPT_XML:
    case OPT_EXACT:
        if (pr->format && pr->format != a->opt->key)
            return cli_usage_error("print: only one format can be given (--json, --xml or --exact)");
        pr->format = a->opt->key;
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
    default:
        return cli_usage_error("print: unknown option %s", a->as);
    }
}

/* Events per batch of a parallel run (ordered.h): 10 KB to 1 MB of JSON
 * (deep stack traces printed whole: up to 13 KB an event). A worker's
 * batch buffers (ORDERED_QUEUE + 1, each as large as the largest batch it
 * held) stay in the caches: batches of 256 events made them several MB
 * each, and two workers on bench/'s recording gained 1.21x instead of
 * 1.68x, on w25b 1.58x instead of 1.68x. */
#define PRINT_BATCH 64

/* What every run of the command shares (one printer per thread). */
typedef struct print_run {
    const printer *proto;
    cli_global g; /* max_memory: each parser's share */
    uint64_t cache; /* each writer's cache (0: its default) */
    const char *path;
} print_run;

static jfrc_json *new_writer(jfrc_out *o, const printer *pr, uint64_t cache) {
    jfrc_json *ej = pr->format == OPT_XML ? jfrc_xml_new(o, pr->stack_depth, NULL)
                                          : jfrc_json_new(o, pr->stack_depth, false);
    if (ej && cache)
        jfrc_json_set_cache_limit(ej, cache);
    return ej;
}

/* The document around the events: head (`{"recording": {"events": [`) or
 * tail; XML: <recording><events>. */
static void doc_head(const printer *pr, jfrc_json *ej, jfrc_out *o) {
    if (pr->format == OPT_XML) {
        jfrc_xml_begin(ej);
        return;
    }
    jfrc_json_object_begin(ej);
    jfrc_json_name(ej, "recording");
    jfrc_json_object_begin(ej);
    jfrc_json_name(ej, "events");
    jfrc_out_putc(o, '[');
}

static void doc_tail(const printer *pr, jfrc_json *ej, jfrc_out *o) {
    if (pr->format == OPT_XML) {
        jfrc_xml_end(ej);
        return;
    }
    jfrc_out_putc(o, ']');
    jfrc_json_object_end(ej);
    jfrc_json_object_end(ej);
}

/* One pass over the input with `pr` (its ej and out set). */
static int print_pass(printer *pr, const cli_global *g, const char *path) {
    jfr_options opts;
    jfr_options_init(&opts);
    opts.ordered = !pr->tx; /* text: in file order, into the JDK's queue */
    opts.jdk_time_base = true;
    jfr_callbacks cb = {.size = sizeof cb, .on_chunk_begin = on_chunk_begin,
                        .on_metadata = on_metadata,
                        .on_error = cli_on_error};
    cli_setup_fn setup = NULL;
    if (cli_filter_active(&pr->filter) && cli_filter_literal(&pr->filter)) {
        setup = subscribe; /* only the named types are dispatched */
    } else {
        /* simple names, globs and categories are resolved per chunk from
         * its metadata, after the parser has mapped subscriptions: filter
         * the generic callback through a per-type table */
        cb.on_event = on_event;
        pr->table = cli_filter_active(&pr->filter);
    }
    int rc = cli_parse(g, path, &opts, &cb, pr, setup);
    if (pr->nomem) {
        cli_error("out of memory");
        rc = CLI_EXIT_ERROR;
    }
    return rc;
}

/* A parallel run's worker: the whole input, printing its own batches. */
static int print_worker(cli_worker *w, void *arg) {
    const print_run *run = arg;
    printer pr = *run->proto;
    memset(&pr.want, 0, sizeof pr.want);
    pr.w = w;
    pr.out = cli_worker_out(w);
    pr.ej = new_writer(pr.out, &pr, run->cache);
    if (!pr.ej) {
        cli_error("out of memory");
        return CLI_EXIT_ERROR;
    }
    doc_head(&pr, pr.ej, pr.out); /* for its indentation; the bytes are dropped */
    int rc = print_pass(&pr, &run->g, run->path);
    jfrc_json_free(pr.ej);
    cli_type_set_free(&pr.want);
    return rc;
}


/* The text of `jfr print` (--exact: `jfr print --exact`): one pass, the
 * events queued in the JDK's order by the writer. */
static int print_text(printer *pr, cli_global *g) {
    pr->tx = jfrc_text_new(cli_out, pr->stack_depth, pr->format == OPT_EXACT, NULL);
    if (!pr->tx) {
        cli_error("out of memory");
        return CLI_EXIT_ERROR;
    }
    int rc = print_pass(pr, g, pr->path);
    jfrc_text_finish(pr->tx);
    jfrc_text_free(pr->tx);
    pr->tx = NULL;
    return rc;
}

int cmd_print(const cli_command *c, cli_global *g, int argc, char **argv) {
    printer pr;
    memset(&pr, 0, sizeof pr);
    pr.stack_depth = 5;
    pr.first_event = true;
    pr.out = cli_out;
    int rc = cli_args(c, g, argc, argv, on_arg, &pr);
    if (rc != CLI_ARGS_RUN)
        goto out;
    if (!pr.path) {
        rc = cli_usage_error("print: missing FILE");
        goto out;
    }
    if (pr.format != OPT_JSON && pr.format != OPT_XML) {
        rc = print_text(&pr, g);
        goto out;
    }
    uint64_t size = 0;
    unsigned jobs = cli_jobs(g, pr.path, &size);
    /* the writers' caches and the parsers share --max-memory */
    uint64_t cache = 0, parser_mem = g->max_memory;
    if (g->max_memory) {
        uint64_t each = g->max_memory / jobs;
        cache = cli_json_cache_share(each);
        parser_mem = each - cache;
    }
    pr.ej = new_writer(cli_out, &pr, cache);
    if (!pr.ej) {
        cli_error("out of memory");
        rc = CLI_EXIT_ERROR;
        goto out;
    }
    doc_head(&pr, pr.ej, cli_out);
    if (jobs > 1) {
        print_run run = {&pr, *g, cache, pr.path};
        run.g.max_memory = parser_mem;
        void *args[64];
        if (jobs > 64)
            jobs = 64;
        for (unsigned k = 0; k < jobs; k++)
            args[k] = &run;
        /* JFRSTREAM_PRINT_BATCH=N: N events per batch (a test aid, to
         * cross batch boundaries on small files) */
        uint64_t batch = PRINT_BATCH;
        const char *eb = getenv("JFRSTREAM_PRINT_BATCH");
        if (eb && *eb && strtoull(eb, NULL, 10) > 0)
            batch = strtoull(eb, NULL, 10);
        /* chunks prepared once for all workers, but not within --max-memory
         * (the share's copies are no worker's) */
        run.g.shared = cli_shared_file_open(pr.path, jobs, !g->max_memory);
        rc = cli_ordered_run(jobs, batch, pr.format == OPT_XML ? 0 : 2, print_worker, args,
                             pr.path, size);
        cli_shared_file_close(run.g.shared);
    } else {
        g->max_memory = parser_mem;
        rc = print_pass(&pr, g, pr.path);
    }
    doc_tail(&pr, pr.ej, cli_out);
out:
    cli_filter_free(&pr.filter);
    jfrc_json_free(pr.ej);
    cli_type_set_free(&pr.want);
    return rc;
}
