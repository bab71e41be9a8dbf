/*
 * cmd_view.c — `jfrstream view VIEW FILE` and `jfrstream query 'SELECT ...'
 * FILE`: JDK 25's `jfr view` and its query language (lib/conv/query_*.c).
 * VIEW is a view's name, an event type (all its events), `types` (the event
 * types and their counts), `all-views` or `all-events`; everything is read
 * in one pass.
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#define JFRSTREAM_EXPERIMENTAL /* jfr_parser_set_ordered */
#include "args.h"
#include "commands.h"
#include "frontend.h"
#include "report.h"
#include "usage.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

typedef struct tcount {
    uint64_t id;
    char *name; /* simple name; NULL: slot free */
    bool experimental;
    uint64_t count;
} tcount;

typedef struct view_run {
    const char *cmd;
    jfrc_view_options opt;
    const char *what; /* the view, or the query text */
    const char *path;
    enum { V_ONE, V_ALL_VIEWS, V_ALL_EVENTS, V_TYPES } mode;
    jfrc_query **q;
    size_t nq, capq;
    bool failed;
    /* the parser's order: the queries are order-free (decided at the first
     * metadata), so the finished chunks need not be sorted by end time */
    bool order_free, file_order, live_chunk;
    /* sorted: every chunk sorted (the second run, or JFRSTREAM_VIEW_SORTED);
     * reread: the input can be read again, so order-free-checked queries
     * (AVG of integers) may run in file order, again sorted if need be */
    bool sorted, reread;
    /* all-views --verbose: the first metadata's event types */
    char **types;
    size_t ntypes;
    /* types: counts by type id (open addressing) */
    tcount *tc;
    size_t tccap, tcn;
} view_run;

static int on_arg(void *ctx, const cli_arg *a) {
    view_run *v = ctx;
    if (a->opt) {
        switch (a->opt->key) {
        case OPT_VERBOSE:
            v->opt.verbose = true;
            return CLI_EXIT_OK;
        case OPT_TRUNCATE:
            if (!strcmp(a->value, "beginning"))
                v->opt.truncate = JFRC_TRUNCATE_BEGINNING;
            else if (!strcmp(a->value, "end"))
                v->opt.truncate = JFRC_TRUNCATE_END;
            else
                return cli_usage_error("%s: --truncate must be 'beginning' or 'end'", a->cmd);
            return CLI_EXIT_OK;
        case OPT_WIDTH:
        case OPT_CELL_HEIGHT: {
            char *end;
            long n = strtol(a->value, &end, 10);
            if (*end || end == a->value || n < 1 || n > 100000)
                return cli_usage_error("%s: %s takes a number from 1 to 100000, not '%s'", a->cmd,
                                       a->as, a->value);
            if (a->opt->key == OPT_WIDTH)
                v->opt.width = (uint32_t)n;
            else
                v->opt.cell_height = (uint32_t)n;
            return CLI_EXIT_OK;
        }
        default:
            return CLI_EXIT_OK;
        }
    }
    if (!v->what)
        v->what = a->as;
    else if (!v->path)
        v->path = a->as;
    else
        return cli_usage_error("%s: too many arguments", a->cmd);
    return CLI_EXIT_OK;
}

static bool add_query(view_run *v, jfrc_query *q) {
    if (v->nq == v->capq) {
        size_t nc = v->capq ? 2 * v->capq : 16;
        jfrc_query **n = realloc(v->q, nc * sizeof(jfrc_query *));
        if (!n)
            return false;
        v->q = n;
        v->capq = nc;
    }
    v->q[v->nq++] = q;
    return true;
}

static tcount *tc_slot(view_run *v, uint64_t id) {
    if (v->tcn + 1 > v->tccap / 2) {
        size_t nc = v->tccap ? v->tccap * 2 : 256;
        tcount *n = calloc(nc, sizeof *n);
        if (!n)
            return NULL;
        for (size_t k = 0; k < v->tccap; k++)
            if (v->tc[k].name) {
                size_t s = (size_t)(v->tc[k].id * 0x9E3779B97F4A7C15ULL) & (nc - 1);
                while (n[s].name)
                    s = (s + 1) & (nc - 1);
                n[s] = v->tc[k];
            }
        free(v->tc);
        v->tc = n;
        v->tccap = nc;
    }
    size_t s = (size_t)(id * 0x9E3779B97F4A7C15ULL) & (v->tccap - 1);
    while (v->tc[s].name && v->tc[s].id != id)
        s = (s + 1) & (v->tccap - 1);
    return &v->tc[s];
}

static bool experimental(const jfr_type *t) {
    return jfr_annotation_find(t->annotations, t->nannotations, "jdk.jfr.Experimental") != NULL;
}

/* Finished chunks delivered in file order, not sorted (the queries order
 * what depends on it themselves), or sorted. */
static void set_file_order(view_run *v, jfr_parser *p, bool on) {
    for (size_t k = 0; k < v->nq; k++)
        if (!jfrc_query_failed(v->q[k]))
            jfrc_query_set_file_order(v->q[k], on);
    jfr_parser_set_ordered(p, !on);
    v->file_order = on;
}

static int on_metadata(jfr_parser *p, const jfr_metadata *m, void *user) {
    view_run *v = user;
    if (v->mode == V_TYPES) {
        for (uint32_t k = 0; k < m->ntypes; k++) {
            const jfr_type *t = m->types[k];
            if (!t->is_event)
                continue;
            tcount *c = tc_slot(v, t->id);
            const char *dot = strrchr(t->name, '.');
            char *name = strdup(dot ? dot + 1 : t->name);
            if (!c || !name) {
                free(name);
                goto oom;
            }
            if (!c->name)
                v->tcn++;
            free(c->name);
            c->id = t->id;
            c->name = name;
            c->experimental = experimental(t);
        }
        return JFR_CB_CONTINUE;
    }
    bool first = v->mode == V_ALL_EVENTS ? v->nq == 0 : v->types == NULL;
    if (first) {
        size_t n = 0;
        for (uint32_t k = 0; k < m->ntypes; k++)
            n += m->types[k]->is_event;
        v->types = calloc(n + 1, sizeof *v->types);
        if (!v->types)
            goto oom;
        for (uint32_t k = 0; k < m->ntypes; k++) {
            const jfr_type *t = m->types[k];
            if (!t->is_event)
                continue;
            if (!(v->types[v->ntypes++] = strdup(t->name)))
                goto oom;
            if (v->mode != V_ALL_EVENTS || strpbrk(t->name, " \t\n\r"))
                continue;
            char text[1024];
            snprintf(text, sizeof text, "SELECT * FROM %s", t->name);
            jfrc_query *q = jfrc_query_new(text, t->label, false, &v->opt, NULL, NULL, 0);
            if (q && !add_query(v, q)) {
                jfrc_query_free(q);
                goto oom;
            }
        }
    }
    for (size_t k = 0; k < v->nq; k++)
        if (jfrc_query_metadata(v->q[k], p, m) != JFR_OK)
            goto oom;
    if (first) {
        v->order_free = v->nq > 0 && !v->sorted;
        for (size_t k = 0; k < v->nq; k++) /* a failed one reads nothing */
            v->order_free &= jfrc_query_failed(v->q[k]) || jfrc_query_order_free(v->q[k]) ||
                             (v->reread && jfrc_query_order_free_checked(v->q[k]));
        if (v->order_free)
            set_file_order(v, p, !v->live_chunk);
    }
    return JFR_CB_CONTINUE;
oom:
    cli_error("out of memory");
    v->failed = true;
    return JFR_CB_STOP;
}

static int on_chunk_begin(jfr_parser *p, const jfr_chunk_info *c, void *user) {
    view_run *v = user;
    v->live_chunk = c->state != 0; /* its flush segments are sorted one by one */
    if (v->order_free && v->file_order == v->live_chunk)
        set_file_order(v, p, !v->live_chunk);
    return JFR_CB_CONTINUE;
}

static int on_record(jfr_parser *p, const jfr_record *r, void *user) {
    (void)p;
    view_run *v = user;
    if (r->type_id < 2 || !r->type)
        return JFR_CB_CONTINUE;
    tcount *c = tc_slot(v, r->type_id);
    if (!c) {
        cli_error("out of memory");
        v->failed = true;
        return JFR_CB_STOP;
    }
    if (c->name)
        c->count++;
    return JFR_CB_CONTINUE;
}

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* `jfr view types`: the simple names (and counts) in two columns. */
static void print_types(view_run *v) {
    char **items = calloc(v->tcn + 1, sizeof(char *));
    if (!items) {
        cli_error("out of memory");
        return;
    }
    size_t n = 0;
    for (size_t k = 0; k < v->tccap; k++) {
        tcount *c = &v->tc[k];
        if (!c->name || c->experimental)
            continue;
        char buf[64] = "";
        if (c->count)
            snprintf(buf, sizeof buf, " (%llu)", (unsigned long long)c->count);
        size_t len = strlen(c->name) + strlen(buf) + 1;
        if (!(items[n] = malloc(len)))
            break;
        snprintf(items[n++], len, "%s%s", c->name, buf);
    }
    jfrc_out_puts(cli_out, "Event Types (number of events):\n\n");
    qsort(items, n, sizeof *items, cmp_str);
    size_t h = (n + 1) / 2, w[2] = {0, 0};
    for (size_t k = 0; k < n; k++) {
        size_t l = strlen(items[k]);
        if (l > w[k / (h ? h : 1)])
            w[k / (h ? h : 1)] = l;
    }
    for (size_t row = 0; row < h; row++) {
        for (size_t col = 0; col < 2; col++) {
            size_t i = col * h + row;
            if (i >= n)
                goto done;
            if (row && col == 0)
                jfrc_out_putc(cli_out, '\n');
            jfrc_out_printf(cli_out, " %s%*s", items[i], (int)(w[col] - strlen(items[i])), "");
        }
    }
done:
    jfrc_out_putc(cli_out, '\n');
    for (size_t k = 0; k < n; k++)
        free(items[k]);
    free(items);
}

/* all-views --verbose: which views read each event type. */
static void print_relation(view_run *v) {
    jfrc_out_puts(cli_out, "\nEvent types and views\n\n");
    char **names = malloc((v->ntypes + 1) * sizeof *names);
    if (!names)
        return;
    memcpy(names, v->types, v->ntypes * sizeof *names);
    qsort(names, v->ntypes, sizeof *names, cmp_str);
    for (size_t k = 0; k < v->ntypes; k++) {
        jfrc_out_printf(cli_out, "%-35s ", names[k]);
        bool any = false;
        for (size_t i = 0; i < v->nq; i++) {
            const char *view;
            if (!jfrc_view_info(i, NULL, &view, NULL, NULL))
                continue;
            bool uses = false;
            for (size_t j = 0; j < jfrc_query_type_count(v->q[i]); j++)
                if (!strcmp(jfrc_query_type_name(v->q[i], j), names[k]))
                    uses = true;
            const char *qt;
            jfrc_view_info(i, NULL, NULL, NULL, &qt);
            if (uses && !strstr(qt, "FROM *")) {
                jfrc_out_printf(cli_out, "%s%s", any ? ", " : "", view);
                any = true;
            }
        }
        jfrc_out_putc(cli_out, '\n');
    }
    free(names);
}

/* The run's queries (all-events: made at the first metadata, types: none).
 * Returns CLI_EXIT_OK or the exit status; the caller frees what was added. */
static int make_queries(view_run *v, bool query, bool *is_type) {
    jfrc_query *q = NULL;
    if (query) {
        char err[512];
        q = jfrc_query_new(v->what, NULL, false, &v->opt, NULL, err, sizeof err);
        if (!q) {
            if (err[0])
                return cli_usage_error("query: %s", err);
            cli_error("out of memory");
            return CLI_EXIT_ERROR;
        }
    } else if (!strcasecmp(v->what, "all-events")) {
        v->mode = V_ALL_EVENTS;
    } else if (!strcmp(v->what, "types")) {
        v->mode = V_TYPES;
    } else if (!strcasecmp(v->what, "all-views")) {
        v->mode = V_ALL_VIEWS;
        const char *name;
        for (size_t k = 0; jfrc_view_info(k, NULL, &name, NULL, NULL); k++) {
            jfrc_query *vq = jfrc_query_new_view(name, &v->opt, NULL);
            if (!vq || !add_query(v, vq)) {
                jfrc_query_free(vq);
                cli_error("out of memory");
                return CLI_EXIT_ERROR;
            }
        }
    } else if (!(q = jfrc_query_new_view(v->what, &v->opt, NULL))) {
        *is_type = true;
        q = jfrc_query_new_type(v->what, &v->opt, NULL);
        if (!q) {
            cli_error("view: could not find a view or an event type named %s", v->what);
            return CLI_EXIT_ERROR;
        }
    }
    if (q && !add_query(v, q)) {
        jfrc_query_free(q);
        cli_error("out of memory");
        return CLI_EXIT_ERROR;
    }
    return CLI_EXIT_OK;
}

static void free_queries(view_run *v) {
    for (size_t k = 0; k < v->nq; k++)
        jfrc_query_free(v->q[k]);
    v->nq = 0;
    for (size_t k = 0; k < v->ntypes; k++)
        free(v->types[k]);
    free(v->types);
    v->types = NULL;
    v->ntypes = 0;
}

static int on_error_quiet(jfr_parser *p, jfr_status s, const char *message, void *user) {
    (void)p, (void)s, (void)message, (void)user;
    return JFR_CB_CONTINUE;
}

/* A query run in file order whose AVG of integers did not sum exactly
 * (past 2^53): the JDK's rounding follows the end-time order. */
static bool order_lost(const view_run *v) {
    for (size_t k = 0; v->order_free && k < v->nq; k++)
        if (jfrc_query_order_lost(v->q[k]))
            return true;
    return false;
}

static int view_main(const cli_command *c, cli_global *g, int argc, char **argv, bool query) {
    view_run v = {.cmd = c->name, .opt = JFRC_VIEW_OPTIONS_INIT};
    int r = cli_args(c, g, argc, argv, on_arg, &v);
    if (r != CLI_ARGS_RUN)
        return r;
    if (!v.what)
        return cli_usage_error(query ? "query: missing QUERY" : "view: missing VIEW");
    if (!v.path)
        return cli_usage_error("%s: missing FILE", c->name);
    bool is_type = false;
    int rc = make_queries(&v, query, &is_type);
    if (rc != CLI_EXIT_OK)
        goto done;
    rc = CLI_EXIT_ERROR;
    double t0 = now();
    jfr_callbacks cb = {.size = sizeof cb, .on_chunk_begin = on_chunk_begin, .on_metadata = on_metadata,
                        .on_error = cli_on_error};
    if (v.mode == V_TYPES)
        cb.on_record = on_record;
    /* the JDK's stream sorts by end time and converts every chunk's ticks
     * with the first chunk's time base */
    jfr_options o = {.size = sizeof o, .ordered = true, .jdk_time_base = true};
    /* chunks prepared on helper threads, delivered in order on this one */
    cli_global gt = *g;
    uint64_t size = 0;
    gt.threads = cli_jobs(g, v.path, &size);
    /* JFRSTREAM_VIEW_SORTED: every chunk sorted, the reference of
     * test/cli/view_order.py */
    v.sorted = getenv("JFRSTREAM_VIEW_SORTED") != NULL;
    v.reread = strcmp(v.path, "-") != 0;
    rc = cli_parse(&gt, v.path, &o, &cb, &v, NULL);
    if (!v.failed && order_lost(&v)) {
        /* read again, sorted; its errors were reported by the first run */
        free_queries(&v);
        v.sorted = true;
        v.order_free = v.file_order = false;
        int rc1 = rc;
        if ((rc = make_queries(&v, query, &is_type)) != CLI_EXIT_OK)
            goto done;
        cb.on_error = on_error_quiet;
        rc = cli_parse(&gt, v.path, &o, &cb, &v, NULL);
        rc = rc1 != CLI_EXIT_OK ? rc1 : rc;
    }
    if (v.failed) {
        rc = CLI_EXIT_ERROR;
        goto done;
    }
    double t1 = now();
    if (v.mode == V_TYPES) {
        print_types(&v);
        goto done;
    }
    if (is_type && jfrc_query_failed(v.q[0])) {
        cli_error("view: could not find a view or an event type named %s", v.what);
        rc = CLI_EXIT_ERROR;
        goto done;
    }
    for (size_t k = 0; k < v.nq; k++) {
        jfr_status s = jfrc_query_render(v.q[k], cli_out);
        if (s == JFR_INVALID_ARG) {
            cli_error("%s: %s", c->name, jfrc_query_error(v.q[k]));
            rc = CLI_EXIT_USAGE;
            goto done;
        }
        if (s != JFR_OK) {
            cli_error("out of memory");
            rc = CLI_EXIT_ERROR;
            goto done;
        }
        if (v.mode == V_ALL_EVENTS)
            jfrc_out_putc(cli_out, '\n');
    }
    if (v.opt.verbose) /* the JDK's timing line (the tests skip it) */
        jfrc_out_printf(cli_out, "\nExecution: aggregation=%.3g ms, formatting=%.3g ms\n%s",
                        (t1 - t0) * 1e3, (now() - t1) * 1e3,
                        v.mode == V_ONE && !query && !is_type ? "\n" : "");
    if (v.mode == V_ALL_VIEWS && v.opt.verbose)
        print_relation(&v);
done:
    free_queries(&v);
    free(v.q);
    for (size_t k = 0; k < v.tccap; k++)
        free(v.tc[k].name);
    free(v.tc);
    return rc;
}

int cmd_view(const cli_command *c, cli_global *g, int argc, char **argv) {
    return view_main(c, g, argc, argv, false);
}

int cmd_query(const cli_command *c, cli_global *g, int argc, char **argv) {
    return view_main(c, g, argc, argv, true);
}
