/*
 * live.c — the parts `listen` and `tail` share (see live.h): per-source
 * parser callbacks, one JSON line per event, the per-type table over all
 * sources, the once-a-second rate view, SIGINT/SIGTERM, the final report.
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#include "live.h"
#include "commands.h"
#include "usage.h"
#include "profile_files.h"
#include "sink_pyroscope.h"
#include "sink_kafka.h"
#include "sink_metrics.h"
#include "module.h"

#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifdef CLI_LIVE_STAMP
const char *live_module_stamp(void) {
    return CLI_LIVE_STAMP;
}
#endif

#define VIEW_WIN 4      /* ring of per-second snapshots: rates over <= 3 s */
#define VIEW_TOP_LINE 5 /* types on a plain view line */
#define VIEW_TOP_TTY 20 /* types on the terminal view */

/* ------------------------------------------------------------ options */

bool live_parse_seconds(const char *s, uint64_t *ms) {
    if (!s || !*s || *s == '-' || *s == '+')
        return false;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || (*end && strcmp(end, "s") != 0) || !(v >= 0) || v > 1e9)
        return false;
    *ms = (uint64_t)llround(v * 1000.0);
    return true;
}

/* The listener and the metrics endpoint bind numeric addresses only (no
 * name lookup): another host is a usage error, not "cannot listen". An IPv6
 * zone (fe80::1%eth0) is left to libuv. */
static bool numeric_host(const char *host) {
    unsigned char a[16];
    char bare[64];
    size_t n = strcspn(host, "%");
    if (n >= sizeof bare)
        return false;
    memcpy(bare, host, n);
    bare[n] = '\0';
    bool v6 = strchr(bare, ':') != NULL;
    return (v6 || host[n] == '\0') && inet_pton(v6 ? AF_INET6 : AF_INET, bare, a) == 1;
}

/* PORT | ADDR:PORT | [V6ADDR]:PORT | [V6ADDR] | ADDR -> host, port. */
bool live_parse_address(const char *arg, char *host, size_t hostlen, int *port,
                        int default_port) {
    const char *p = arg, *colon = NULL;
    size_t hl;
    if (*p == '[') {
        const char *close = strchr(p, ']');
        if (!close)
            return false;
        hl = (size_t)(close - p - 1);
        if (hl == 0 || hl >= hostlen)
            return false;
        memcpy(host, p + 1, hl);
        host[hl] = '\0';
        if (close[1] == '\0') {
            *port = default_port;
            return true;
        }
        if (close[1] != ':')
            return false;
        colon = close + 1;
    } else {
        colon = strrchr(p, ':');
        if (colon && strchr(p, ':') != colon)
            return false; /* a bare IPv6 address needs [brackets] */
        bool digits = *p != '\0';
        for (const char *q = p; *q; q++)
            if (*q < '0' || *q > '9')
                digits = false;
        if (digits) { /* PORT alone */
            snprintf(host, hostlen, "127.0.0.1");
            colon = p - 1;
        } else {
            hl = colon ? (size_t)(colon - p) : strlen(p);
            if (hl == 0 || hl >= hostlen)
                return false;
            memcpy(host, p, hl);
            host[hl] = '\0';
            if (!colon) {
                *port = default_port;
                goto names;
            }
        }
    }
    {
        const char *ps = colon + 1;
        char *end;
        if (!*ps || *ps == '-' || *ps == '+')
            return false;
        errno = 0;
        long v = strtol(ps, &end, 10);
        if (errno || *end || v < 0 || v > 65535)
            return false;
        *port = (int)v;
    }
names:
    if (strcmp(host, "localhost") == 0) /* the same length: it fits */
        memcpy(host, "127.0.0.1", sizeof "127.0.0.1");
    return numeric_host(host);
}

int live_option(live_opts *o, const cli_arg *a) {
    const char *cmd = a->cmd, *v = a->value;
    switch (a->opt->key) {
    case OPT_JSON:
        o->json = true;
        return CLI_EXIT_OK;
    case OPT_SUMMARY:
        o->summary = true;
        return CLI_EXIT_OK;
    case OPT_EVENTS:
    case OPT_CATEGORIES:
        return cli_filter_option(&o->filter, a);
    case OPT_COLLAPSED:
    case OPT_FLAMEGRAPH:
    case OPT_PPROF:
    case OPT_EVENT: {
        int key = a->opt->key;
        if (!v)
            return cli_usage_error("%s: missing value after %s", cmd, a->as);
        if (key != OPT_EVENT) {
            *(key == OPT_COLLAPSED ? &o->prof_collapsed
              : key == OPT_FLAMEGRAPH ? &o->prof_flame
                                      : &o->prof_pprof) = v;
            return CLI_EXIT_OK;
        }
        o->prof_event = v;
        jfrc_profile *t = jfrc_profile_new(); /* check the words now: a usage error */
        const char *why = !t ? "out of memory"
                          : jfrc_profile_select(t, v) != JFR_OK ? jfrc_profile_error(t)
                                                                : NULL;
        int rc = !why ? CLI_EXIT_OK : cli_usage_error("%s: %s: %s", cmd, a->as, why);
        jfrc_profile_free(t);
        if (rc == CLI_EXIT_OK)
            rc = pyro_check_event(o, cmd); /* with --pyroscope: its kinds */
        return rc;
    }
    case OPT_LABEL: {
        const char *eq = v ? strchr(v, '=') : NULL;
        if (!eq)
            return cli_usage_error("%s: --label needs KEY=VALUE", cmd);
        jfrs_source *t = jfrs_source_new("peer", "", "x"); /* check it now: a usage error */
        char key[80];
        size_t kl = (size_t)(eq - v);
        snprintf(key, sizeof key, "%.*s", (int)(kl < sizeof key - 1 ? kl : sizeof key - 1), v);
        jfr_status st = !t ? JFR_NOMEM : kl >= sizeof key ? JFR_INVALID_ARG : jfrs_source_set(t, key, eq + 1);
        jfrs_source_free(t);
        if (st == JFR_NOMEM)
            return cli_usage_error("%s: out of memory", cmd);
        if (st != JFR_OK)
            return cli_usage_error("%s: --label %s: KEY must be letters, digits and _ (not first a "
                                   "digit, at most 64), VALUE at most 1024 bytes", cmd, v);
        if (o->nlabels == LIVE_MAX_LABELS)
            return cli_usage_error("%s: at most %d --label options", cmd, LIVE_MAX_LABELS);
        o->labels[o->nlabels++] = v;
        return CLI_EXIT_OK;
    }
    case OPT_PYROSCOPE:
    case OPT_PYROSCOPE_APP:
    case OPT_PYROSCOPE_BASIC_AUTH:
    case OPT_PYROSCOPE_BEARER:
    case OPT_PYROSCOPE_TENANT:
    case OPT_PYROSCOPE_HEADER:
    case OPT_PYROSCOPE_HEADER_FILE:
    case OPT_PYROSCOPE_CA:
    case OPT_PYROSCOPE_CERT:
    case OPT_PYROSCOPE_KEY:
        return pyro_option(o, a);
    case OPT_KAFKA:
    case OPT_KAFKA_TOPIC:
    case OPT_KAFKA_FORMAT:
    case OPT_KAFKA_OPTION:
        return live_kafka_option(o, a);
    case OPT_METRICS:
    case OPT_METRICS_TTL:
    case OPT_METRICS_MAX_SOURCES:
    case OPT_METRICS_MAX_SERIES:
    case OPT_METRICS_TLS_CERT:
    case OPT_METRICS_TLS_KEY:
    case OPT_METRICS_BASIC_AUTH:
        return live_metrics_option(o, a);
    case OPT_THREADS:
        o->prof_threads = true;
        return CLI_EXIT_OK;
    case OPT_WINDOW:
        if (!live_parse_seconds(v, &o->window_ms) || o->window_ms == 0)
            return cli_usage_error("%s: --window needs a number of seconds > 0", cmd);
        return CLI_EXIT_OK;
    case OPT_LIVE_VIEW: {
        if (!v || !*v)
            return cli_usage_error("%s: --view needs a NAME (a view, or an event type)", cmd);
        if (o->nviews == LIVE_MAX_LABELS)
            return cli_usage_error("%s: at most %d --view options", cmd, LIVE_MAX_LABELS);
        /* check the name now: a usage error */
        jfrs_views_config c;
        jfrs_views_config_init(&c);
        c.names = &v;
        c.count = 1;
        jfrs_views *t = NULL;
        char err[300];
        jfr_status st = jfrs_views_new(&c, &t, err, sizeof err);
        jfrs_views_free(t);
        if (st == JFR_INVALID_ARG)
            return cli_usage_error("%s: --view: %s (`" CLI_NAME " view --help` lists them)", cmd,
                                   err);
        o->views[o->nviews++] = v;
        return CLI_EXIT_OK;
    }
    case OPT_VIEW_WINDOW:
    case OPT_VIEW_EVERY: {
        uint64_t *to = a->opt->key == OPT_VIEW_WINDOW ? &o->view_window_ms : &o->view_every_ms;
        if (!live_parse_seconds(v, to) || *to == 0)
            return cli_usage_error("%s: %s needs a number of seconds > 0", cmd, a->as);
        return CLI_EXIT_OK;
    }
    case OPT_VIEW_BY:
        if (!v || strcmp(v, "source") != 0)
            return cli_usage_error("%s: --view-by takes 'source'", cmd);
        o->view_by_source = true;
        return CLI_EXIT_OK;
    default: { /* OPT_STACK_DEPTH */
        char *end;
        if (!v)
            return cli_usage_error("%s: missing value after --stack-depth", cmd);
        errno = 0;
        long n = strtol(v, &end, 10);
        if (errno || *end || end == v || n < 0 || n > INT32_MAX)
            return cli_usage_error("%s: --stack-depth needs a number >= 0, got '%s'", cmd, v);
        o->stack_depth = (uint32_t)n;
        return CLI_EXIT_OK;
    }
    }
}

/* ------------------------------------------------------------ messages */

/* The last messages, shown under the terminal view (which clears the
 * screen every second). */
#define RECENT 5
static char recent[RECENT][160];
static unsigned nrecent;

static void put_msg(const char *name, const char *text) {
    jfrc_out_flush(cli_out); /* keep stdout and stderr roughly in order */
    fprintf(stderr, CLI_NAME ": %s: %s\n", name, text);
    char *r = recent[nrecent++ % RECENT];
    size_t cap = sizeof recent[0];
    size_t k = strlen(name);
    k = k < cap - 3 ? k : cap - 3;
    memcpy(r, name, k);
    memcpy(r + k, ": ", 2);
    k += 2;
    size_t t = strlen(text);
    t = t < cap - 1 - k ? t : cap - 1 - k;
    memcpy(r + k, text, t);
    r[k + t] = '\0';
}

void live_msg(const char *fmt, ...) {
    char text[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    /* "SOURCE: message": split so that the terminal view keeps it too */
    char *colon = strstr(text, ": ");
    if (colon) {
        *colon = '\0';
        put_msg(text, colon + 2);
    } else {
        jfrc_out_flush(cli_out);
        fprintf(stderr, CLI_NAME ": %s\n", text);
    }
}

void live_src_msg(const live_src *s, const char *fmt, ...) {
    char text[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    put_msg(s->name, text);
}

/* ------------------------------------------------------------ callbacks */

/* The parser's user pointer is a jfr_uv_conn* or jfr_uv_tail*: both start
 * with `void *data`, which holds our source. */
static live_src *src_of(void *user) { return *(void **)user; }

static int on_chunk_begin(jfr_parser *p, const jfr_chunk_info *c, void *user) {
    (void)p;
    live_src *s = src_of(user);
    if (s->app->chunk_hook)
        s->app->chunk_hook(s->app, s);
    jfrc_summary_chunk_begin(s->app->stats, c, &s->row0, &s->row1);
    jfrs_fanout_src_chunk_begin(s->fs, c);
    return JFR_CB_CONTINUE;
}

static int on_metadata(jfr_parser *p, const jfr_metadata *m, void *user) {
    (void)p;
    live_src *s = src_of(user);
    live_app *app = s->app;
    jfrs_fanout_src_metadata(s->fs, m);
    if (m->ntypes > s->ntypes) {
        uint32_t *r = realloc(s->rows, m->ntypes * sizeof *r);
        if (r) {
            s->rows = r;
            s->ntypes = m->ntypes;
        }
    }
    if (s->ntypes < m->ntypes || !cli_type_set_build(&s->want, &app->o.filter, m)) {
        live_src_msg(s, "out of memory");
        s->failed = true;
        return JFR_CB_STOP;
    }
    for (size_t i = 0; i < s->ntypes; i++)
        s->rows[i] = JFRC_SUMMARY_NONE;
    jfrc_summary_metadata(app->stats, m, s->rows);
    return JFR_CB_CONTINUE;
}

/* Make room for the counters of summary row `row`; false on no memory. */
static bool row_counters(live_app *app, uint32_t row) {
    if (row < app->caprows)
        return true;
    size_t cap = app->caprows ? app->caprows * 2 : 64;
    while (cap <= row)
        cap *= 2;
    uint64_t *e = realloc(app->row_events, cap * sizeof *e);
    if (!e)
        return false;
    app->row_events = e;
    uint64_t *r = realloc(app->row_replayed, cap * sizeof *r);
    if (!r)
        return false;
    app->row_replayed = r;
    memset(e + app->caprows, 0, (cap - app->caprows) * sizeof *e);
    memset(r + app->caprows, 0, (cap - app->caprows) * sizeof *r);
    app->caprows = cap;
    return true;
}

/* Events counted in a summary row. */
static uint64_t row_events(const live_app *app, size_t row) {
    return row < app->caprows ? app->row_events[row] : 0;
}

static int on_record(jfr_parser *p, const jfr_record *r, void *user) {
    (void)p;
    live_src *s = src_of(user);
    live_app *app = s->app;
    uint32_t row;
    bool typed = r->type && r->type->index < s->ntypes;
    if (r->type_id == 0)
        row = s->row0;
    else if (r->type_id == 1)
        row = s->row1;
    else if (typed)
        row = s->rows[r->type->index];
    else
        row = jfrc_summary_row_missing(app->stats, r->type_id);
    jfrc_summary_count(app->stats, row, r->size);
    jfrs_fanout_src_record(s->fs, r);
    if (typed && cli_type_set_has(&s->want, r->type)) {
        /* already there at the start (tail: on disk): not a rate of now */
        unsigned old = r->offset < s->replay_bytes;
        s->events++;
        app->events_total++;
        app->replayed_total += old;
        if (row != JFRC_SUMMARY_NONE && row_counters(app, row)) {
            app->row_events[row]++;
            app->row_replayed[row] += old;
        }
    }
    return JFR_CB_CONTINUE;
}

/* An event that cannot be (fully) decoded: reported, the source failed. */
static void event_error(live_src *s, const jfr_event *e, jfr_status st, const char *json_error) {
    char *m = cli_event_error(e, st, json_error);
    live_src_msg(s, "%s", m ? m : json_error ? json_error : "out of memory");
    free(m);
    s->failed = true;
}

/* A selected event: its --json line, and to Kafka (which may pause). */
static int emit(live_src *s, const jfr_event *e) {
    if (!cli_type_set_has(&s->want, e->type))
        return JFR_CB_CONTINUE;
    jfr_status st = jfrs_fanout_src_event(s->fs, e);
    const char *why;
    jfr_status est = jfrs_fanout_src_event_error(s->fs, &why);
    if (est)
        event_error(s, e, est, why);
    if (st == JFR_PAUSED)
        return live_kafka_paused(s);
    if (st == JFR_NOMEM) {
        live_src_msg(s, "kafka: out of memory");
        s->failed = true;
    }
    return JFR_CB_CONTINUE;
}

static int on_event(jfr_parser *p, const jfr_event *e, void *user) {
    (void)p;
    return emit(src_of(user), e);
}

/* Per-type subscription: user is the source itself. */
static int on_event_sub(jfr_parser *p, const jfr_event *e, void *user) {
    (void)p;
    return emit(user, e);
}

static int on_chunk_end(jfr_parser *p, const jfr_chunk_info *c, void *user) {
    (void)p;
    live_src *s = src_of(user);
    s->chunks++;
    jfrc_summary_chunk_end(s->app->stats, c);
    jfrs_fanout_src_chunk_end(s->fs);
    return JFR_CB_CONTINUE;
}

static int on_error(jfr_parser *p, jfr_status st, const char *message, void *user) {
    (void)p;
    live_src *s = src_of(user);
    const char *m = message && *message ? message : jfr_status_str(st);
    live_src_msg(s, "%s", m);
    snprintf(s->lasterr, sizeof s->lasterr, "%s", m);
    jfrs_fanout_src_error(s->fs, st);
    /* an unfinished chunk: live_src_end decides (not an error when our own
     * stop, --once or --idle-timeout left it) */
    if (st != JFR_TRUNCATED)
        s->failed = true;
    /* listen closes a connection with bad data, unless --resync asks to
     * scan on for the next chunk */
    return s->app->stop_on_error && !s->app->o.resync ? JFR_CB_STOP : JFR_CB_CONTINUE;
}

/* Events are delivered (decoded): for --json, for --kafka. */
static bool events_wanted(const live_app *app) { return app->o.json || app->kafka; }

static bool literal_subscriptions(const live_app *app) {
    return events_wanted(app) && cli_filter_active(&app->o.filter) &&
           cli_filter_literal(&app->o.filter);
}

void live_parser_config(const live_app *app, jfr_options *opts, jfr_callbacks *cb) {
    jfr_options_init(opts);
    /* --json: events of each flush segment by end time, as the JDK. Without
     * --json no event is delivered (records are counted) and order does not
     * matter; leaving it off also avoids qsort(NULL, 0, ...) in the
     * library's build_order for units without a wanted event (UBSan). */
    opts->ordered = events_wanted(app);
    opts->jdk_time_base = true; /* the first chunk's time base, per source */
    opts->resync = app->o.resync;
    opts->max_memory = app->o.max_memory;
    if (app->o.json) /* the JSON writer's cache takes its share (live_src_new) */
        opts->max_memory -= cli_json_cache_share(app->o.max_memory);
    jfr_callbacks_init(cb);
    cb->on_chunk_begin = on_chunk_begin;
    cb->on_metadata = on_metadata;
    cb->on_record = on_record;
    cb->on_chunk_end = on_chunk_end;
    cb->on_error = on_error;
    if (events_wanted(app) && !literal_subscriptions(app))
        cb->on_event = on_event; /* globs, simple names, categories, or all */
}

/* ------------------------------------------------------------ sources */

/* The source's labels: its origin and the --label options. */
static jfrs_source *new_labels(const live_app *app, const char *name, const char *origin_key) {
    jfrs_source *src = jfrs_source_new(origin_key, name, NULL);
    for (size_t i = 0; src && i < app->o.nlabels; i++) {
        const char *kv = app->o.labels[i], *eq = strchr(kv, '=');
        char key[80];
        snprintf(key, sizeof key, "%.*s", (int)(eq - kv), kv);
        if (jfrs_source_set(src, key, eq + 1) != JFR_OK) { /* checked by live_option */
            jfrs_source_free(src);
            return NULL;
        }
    }
    return src;
}

live_src *live_src_new(live_app *app, const char *name, const char *origin_key) {
    live_src *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->app = app;
    snprintf(s->name, sizeof s->name, "%s", name);
    if (!(s->src = new_labels(app, name, origin_key)) ||
        jfrs_fanout_src_new(app->fan, s->src, s, &s->fs) != JFR_OK) {
        jfrs_source_free(s->src);
        free(s);
        return NULL;
    }
    s->row0 = s->row1 = JFRC_SUMMARY_NONE;
    jfr_status mst = jfrs_fanout_src_metrics_status(s->fs);
    if (mst == JFR_LIMIT)
        live_src_msg(s, "metrics: no series for this source (--metrics-max-sources or "
                        "--metrics-max-series reached)");
    else if (mst != JFR_OK)
        live_src_msg(s, "metrics: %s", jfr_status_str(mst));
    app->conns++;
    app->conns_total++;
    return s;
}

/* A line about one of the source's outputs (a Pyroscope window). */
static void on_fanout_message(jfrs_fanout_src *fs, void *src_user, const char *text,
                              void *user) {
    (void)fs;
    (void)user;
    live_src_msg(src_user, "%s", text);
}

jfr_status live_src_subscribe(live_src *s, jfr_parser *p) {
    const live_app *app = s->app;
    jfr_status sst = jfrs_source_subscribe(s->src, p);
    if (sst)
        return sst;
    if ((sst = jfrs_fanout_src_subscribe(s->fs, p)) != JFR_OK)
        return sst;
    if (!literal_subscriptions(app))
        return JFR_OK;
    return cli_filter_subscribe(&app->o.filter, p, on_event_sub, s);
}

static bool is_error(jfr_status s) {
    return s != JFR_OK && s != JFR_PAUSED && s != JFR_STOPPED;
}

void live_src_end(live_src *s, jfr_status status, const char *message, bool ours,
                  uint64_t bytes, const char *how) {
    live_app *app = s->app;
    if (is_error(status) || (status == JFR_STOPPED && !ours)) {
        const char *m = message && *message ? message : jfr_status_str(status);
        if (strcmp(m, s->lasterr) != 0) /* not printed by on_error yet */
            live_src_msg(s, "%s", m);
        if (!ours)
            s->failed = true;
    }
    live_src_msg(s, "%s: %llu %s, %llu %s, %llu %s%s", how, (unsigned long long)s->chunks,
                 cli_noun(s->chunks, "chunk", "chunks"), (unsigned long long)s->events,
                 cli_noun(s->events, "event", "events"), (unsigned long long)bytes,
                 cli_noun(bytes, "byte", "bytes"), s->failed ? " (with errors)" : "");
    if (s->failed)
        app->failed = true;
    app->conns--;
    /* its partial Pyroscope window and Kafka's held events go, the series'
     * TTL starts */
    jfrs_fanout_src_end(s->fs);
    jfrs_source_free(s->src);
    cli_type_set_free(&s->want);
    free(s->rows);
    free(s);
}

/* ------------------------------------------------------------ the view */

typedef struct rate_row {
    uint32_t row;
    double rate;
} rate_row;

static const live_app *sort_app; /* for the comparison (single-threaded) */

static int cmp_rate(const void *a, const void *b) {
    const rate_row *x = a, *y = b;
    if (x->rate != y->rate)
        return x->rate > y->rate ? -1 : 1;
    uint64_t ex = row_events(sort_app, x->row), ey = row_events(sort_app, y->row);
    if (ex != ey)
        return ex > ey ? -1 : 1;
    return strcmp(jfrc_summary_row_name(sort_app->stats, x->row),
                  jfrc_summary_row_name(sort_app->stats, y->row));
}

static void fmt_rate(jfrc_out *o, double r) {
    if (r >= 100 || r == 0)
        jfrc_out_printf(o, "%.0f", r);
    else
        jfrc_out_printf(o, "%.1f", r);
}

static void on_view(uv_timer_t *t) {
    live_app *app = t->data;
    const jfrc_summary *st = app->stats;
    size_t nrows = jfrc_summary_nrows(st);
    if (nrows > app->capsnap) {
        size_t cap = nrows * 2;
        uint64_t *n = realloc(app->snap, cap * VIEW_WIN * sizeof *n);
        if (!n)
            return;
        memset(n + app->capsnap * VIEW_WIN, 0, (cap - app->capsnap) * VIEW_WIN * sizeof *n);
        app->snap = n;
        app->capsnap = cap;
    }
    /* rates: the events that arrived over the last ticks (up to 3 s, fewer
     * at the start), per second of the time that really passed; replayed
     * ones are left out (shown apart) */
    uint64_t k = ++app->ticks;
    uint64_t w = k < VIEW_WIN - 1 ? k : VIEW_WIN - 1;
    size_t now_i = (size_t)(k % VIEW_WIN), old_i = (size_t)((k - w) % VIEW_WIN);
    uint64_t now = uv_now(app->loop);
    app->tms[now_i] = now;
    double secs = (double)(now - (k > w ? app->tms[old_i] : app->start_ms)) / 1000.0;
    if (secs < 0.001)
        secs = 0.001;
    rate_row *rr = malloc((nrows ? nrows : 1) * sizeof *rr);
    if (!rr)
        return;
    size_t n = 0;
    for (size_t r = 0; r < nrows; r++) {
        uint64_t *sn = app->snap + r * VIEW_WIN;
        uint64_t cur = row_events(app, r) - (r < app->caprows ? app->row_replayed[r] : 0);
        double rate = (double)(cur - sn[old_i]) / secs;
        sn[now_i] = cur;
        if (row_events(app, r))
            rr[n++] = (rate_row){(uint32_t)r, rate};
    }
    uint64_t arrived = app->events_total - app->replayed_total;
    double total_rate = (double)(arrived - app->tsnap[old_i]) / secs;
    app->tsnap[now_i] = arrived;
    sort_app = app;
    qsort(rr, n, sizeof *rr, cmp_rate);
    uint64_t up = (uv_now(app->loop) - app->start_ms + 500) / 1000;
    jfrc_out *o = cli_out;
    if (app->tty) {
        jfrc_out_puts(o, "\x1b[H\x1b[2J");
        jfrc_out_printf(o, "jfrstream %s %s   up %llus   ", app->cmd, app->where,
                        (unsigned long long)up);
        if (strcmp(app->cmd, "listen") == 0)
            jfrc_out_printf(o, "connections %u (%llu total)   ", app->conns,
                            (unsigned long long)app->conns_total);
        else
            jfrc_out_printf(o, "files %llu   ", (unsigned long long)app->files);
        jfrc_out_printf(o, "events %llu   ", (unsigned long long)app->events_total);
        if (app->replayed_total)
            jfrc_out_printf(o, "(%llu replayed: there at the start)   ",
                            (unsigned long long)app->replayed_total);
        fmt_rate(o, total_rate);
        jfrc_out_puts(o, " events/s\n\n  events/s        total  event type\n");
        for (size_t i = 0; i < n && i < VIEW_TOP_TTY; i++) {
            char rate[32];
            snprintf(rate, sizeof rate, rr[i].rate >= 100 || rr[i].rate == 0 ? "%.0f" : "%.1f",
                     rr[i].rate);
            jfrc_out_printf(o, "%10s %12llu  %s\n", rate,
                            (unsigned long long)row_events(app, rr[i].row),
                            jfrc_summary_row_name(st, rr[i].row));
        }
        if (n == 0)
            jfrc_out_puts(o, "  (no events yet)\n");
        if (nrecent) {
            jfrc_out_puts(o, "\nmessages:\n");
            for (unsigned i = nrecent > RECENT ? nrecent - RECENT : 0; i < nrecent; i++)
                jfrc_out_printf(o, "  %s\n", recent[i % RECENT]);
        }
    } else {
        jfrc_out_printf(o, "t=%llus ", (unsigned long long)up);
        if (strcmp(app->cmd, "listen") == 0) /* open/total connections */
            jfrc_out_printf(o, "conns=%u/%llu", app->conns, (unsigned long long)app->conns_total);
        else /* tail: one source whether or not there is a file yet */
            jfrc_out_printf(o, "files=%llu", (unsigned long long)app->files);
        jfrc_out_printf(o, " events=%llu", (unsigned long long)app->events_total);
        if (app->replayed_total)
            jfrc_out_printf(o, " replayed=%llu", (unsigned long long)app->replayed_total);
        jfrc_out_puts(o, " rate=");
        fmt_rate(o, total_rate);
        jfrc_out_puts(o, "/s");
        if (n)
            jfrc_out_puts(o, " top:");
        for (size_t i = 0; i < n && i < VIEW_TOP_LINE; i++) {
            jfrc_out_printf(o, " %s=", jfrc_summary_row_name(st, rr[i].row));
            fmt_rate(o, rr[i].rate);
            jfrc_out_puts(o, "/s");
        }
        jfrc_out_putc(o, '\n');
    }
    free(rr);
    jfrc_out_flush(o);
}

/* ------------------------------------------------------------ --view */

/* One frame of the --view views: a line naming the run, then each view as
 * `view` prints it (redrawn on a terminal). The views are rendered first:
 * the render drops what left the window (copies, ended sources), and the
 * line counts what the frame shows. */
static void views_frame(live_app *app, bool last) {
    jfrc_out *o = cli_out;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    struct tm tm;
    char when[32] = "";
    if (localtime_r(&ts.tv_sec, &tm))
        strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", &tm);
    jfrc_out *body = jfrc_out_new_memory(1 << 16);
    jfr_status st = body ? jfrs_views_render(app->views, body,
                                             (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec)
                         : JFR_NOMEM;
    if (st == JFR_OK && jfrc_out_failed(body))
        st = JFR_NOMEM;
    if (app->tty && !last)
        jfrc_out_puts(o, "\x1b[H\x1b[2J");
    uint64_t win = app->o.view_window_ms ? app->o.view_window_ms : LIVE_VIEW_WINDOW_MS;
    size_t n = jfrs_views_sources(app->views);
    char span[32];
    if (win % 1000 == 0)
        snprintf(span, sizeof span, "%llu", (unsigned long long)(win / 1000));
    else
        snprintf(span, sizeof span, "%.3f", (double)win / 1000);
    jfrc_out_printf(o, "jfrstream %s %s   %s   the last %s s   %zu %s   %llu bytes kept%s\n",
                    app->cmd, app->where, when, span, n,
                    cli_noun(n, "source", "sources"),
                    (unsigned long long)jfrs_views_memory(app->views), last ? "   (end)" : "");
    size_t len = 0;
    const char *text = body ? jfrc_out_data(body, &len) : NULL;
    if (text)
        jfrc_out_write(o, text, len);
    jfrc_out_free(body);
    if (st != JFR_OK) {
        cli_error("%s: --view: %s", app->cmd, jfr_status_str(st));
        app->failed = true;
    }
    const char *err = jfrs_views_error(app->views);
    if (err && strcmp(err, app->views_err) != 0) { /* a chunk left out of the copy */
        snprintf(app->views_err, sizeof app->views_err, "%s", err);
        live_msg("--view: %s", err);
    }
    app->frames++;
    jfrc_out_flush(o);
}

static void on_views(uv_timer_t *t) { views_frame(t->data, false); }

int live_check(const live_app *app) {
    const live_opts *o = &app->o;
    if (!o->nviews && (o->view_window_ms || o->view_every_ms || o->view_by_source))
        return cli_usage_error("%s: --view-window, --view-every and --view-by need --view",
                               app->cmd);
    if (o->nviews && o->json)
        return cli_usage_error("%s: --view and --json both print on stdout: choose one",
                               app->cmd);
    return CLI_EXIT_OK;
}

/* ------------------------------------------------------------ the loop */

static void on_flush(uv_prepare_t *h) {
    live_app *app = h->data;
    if (jfrc_out_pending(cli_out) && jfrc_out_flush(cli_out) != JFR_OK && !app->failed) {
        cli_error("write error: %s", strerror(errno));
        app->failed = true;
        live_request_stop(app);
    }
}

static void on_signal(uv_signal_t *h, int signum) {
    live_app *app = h->data;
    if (app->stopping) { /* a second one: give up at once */
        jfrc_out_flush(cli_out);
        cli_error("%s again: exiting", signum == SIGINT ? "SIGINT" : "SIGTERM");
        _exit(CLI_EXIT_ERROR);
    }
    cli_error("%s: stopping", signum == SIGINT ? "SIGINT" : "SIGTERM");
    live_request_stop(app);
}

/* Write the profile outputs of the window that ends now and start a new
 * one. A window without events is not written (the files keep the last
 * one that had some); without --window the single profile always is. */
static void write_window(live_app *app) {
    jfrc_profile *pr = app->prof;
    if (app->o.window_ms && jfrc_profile_events(pr) == 0 && !jfrc_profile_error(pr)) {
        jfrc_profile_reset(pr);
        return;
    }
    char title[256];
    snprintf(title, sizeof title, "jfrstream %s %s: %s, window %llu", app->cmd, app->where,
             app->o.prof_event ? app->o.prof_event : "cpu", (unsigned long long)app->prof_windows + 1);
    if (jfrc_profile_error(pr)) {
        cli_error("profile: %s", jfrc_profile_error(pr));
        jfrc_profile_clear_error(pr);
    }
    if (!prof_write_files(pr, app->o.prof_collapsed, app->o.prof_flame, app->o.prof_pprof,
                          title))
        app->failed = true;
    app->prof_windows++;
    jfrc_profile_reset(pr);
}

static void on_window(uv_timer_t *t) { write_window(t->data); }

void live_signals_hold(live_app *app) {
    /* SIGINT/SIGTERM blocked before the sinks start their threads (librdkafka,
     * libmicrohttpd, the Pyroscope sender), which inherit the mask: the kernel
     * then delivers a stop to the loop's thread only (live_signals_deliver). A
     * signal taken by a helper thread parked in a call ThreadSanitizer does not
     * treat as blocking was held there (metrics-limits: SIGTERM ignored 30 s). */
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGINT);
    sigaddset(&stop, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stop, &app->sigmask);
}

void live_signals_deliver(live_app *app) {
    /* A sleep of 0 while the stops are still blocked: ThreadSanitizer makes a
     * thread's signal state at its first blocking call, and a signal that
     * lands in the middle of that is lost (the loop's first epoll_wait;
     * strace of metrics-limits: the handler ran, libuv never heard of it).
     * Without the sanitizer it is one syscall. */
    struct timespec zero = {0, 0};
    nanosleep(&zero, NULL);
    pthread_sigmask(SIG_SETMASK, &app->sigmask, NULL);
}

bool live_init(live_app *app, uv_loop_t *loop, const char *cmd, const char *where) {
    app->loop = loop;
    app->cmd = cmd;
    snprintf(app->where, sizeof app->where, "%s", where);
    if (!(app->stats = jfrc_summary_new(true))) {
        cli_error("out of memory");
        return false;
    }
    app->view = !app->o.json && !app->o.summary && !app->o.nviews;
    app->tty = isatty(STDOUT_FILENO);
    app->start_ms = uv_now(loop);
    uv_signal_init(loop, &app->sigint);
    uv_signal_init(loop, &app->sigterm);
    app->sigint.data = app->sigterm.data = app;
    uv_signal_start(&app->sigint, on_signal, SIGINT);
    uv_signal_start(&app->sigterm, on_signal, SIGTERM);
    uv_prepare_init(loop, &app->flusher);
    app->flusher.data = app;
    uv_prepare_start(&app->flusher, on_flush);
    uv_timer_init(loop, &app->view_timer);
    app->view_timer.data = app;
    if (app->view)
        uv_timer_start(&app->view_timer, on_view, 1000, 1000);
    uv_timer_init(loop, &app->window_timer);
    app->window_timer.data = app;
    uv_timer_init(loop, &app->views_timer);
    app->views_timer.data = app;
    live_kafka_start(app);
    live_metrics_start(app);
    bool ok = true;
    if (app->o.prof_collapsed || app->o.prof_flame || app->o.prof_pprof) {
        app->prof = jfrc_profile_new();
        if (app->prof && app->o.prof_threads)
            jfrc_profile_set_flags(app->prof, JFRC_PROFILE_THREADS);
        if (!app->prof) {
            ok = false;
        } else if (jfrc_profile_select(app->prof,
                                       app->o.prof_event ? app->o.prof_event : "cpu")) {
            const char *why = jfrc_profile_error(app->prof);
            cli_error("%s: %s", cmd, why ? why : "out of memory");
            jfrc_profile_free(app->prof);
            app->prof = NULL;
            app->failed = true;
            ok = false;
        } else if (app->o.window_ms) {
            uv_timer_start(&app->window_timer, on_window, app->o.window_ms, app->o.window_ms);
        }
    }
    if (ok && app->o.pyroscope_url && !pyro_init(app))
        ok = false;
    /* each source's outputs, whatever of the above could be made */
    jfrs_fanout_config fc;
    jfrs_fanout_config_init(&fc);
    fc.json = app->o.json ? cli_out : NULL;
    fc.json_stack_depth = app->o.stack_depth;
    fc.json_cache_limit = app->o.max_memory ? cli_json_cache_share(app->o.max_memory) : 0;
    fc.kafka = live_kafka_producer(app);
    fc.metrics = live_metrics_registry(app);
    fc.profile = app->prof;
    fc.pyroscope = pyro_sink(app);
    fc.pyroscope_app = app->o.pyroscope_app;
    fc.pyroscope_event = app->o.prof_event;
    fc.on_resume = live_kafka_resume;
    fc.on_message = on_fanout_message;
    if (ok && app->o.nviews) {
        jfrs_views_config vc;
        jfrs_views_config_init(&vc);
        vc.names = app->o.views;
        vc.count = app->o.nviews;
        vc.window_ms = app->o.view_window_ms;
        vc.by_source = app->o.view_by_source;
        char err[300];
        if (jfrs_views_new(&vc, &app->views, err, sizeof err) != JFR_OK) {
            cli_error("%s: --view: %s", cmd, err[0] ? err : "out of memory");
            app->failed = true;
            ok = false;
        } else {
            uint64_t every = app->o.view_every_ms ? app->o.view_every_ms
                             : app->tty             ? 1000
                                                    : 10000;
            uv_timer_start(&app->views_timer, on_views, every, every);
        }
        fc.views = app->views;
    }
    if (jfrs_fanout_new(&fc, &app->fan) != JFR_OK) {
        cli_error("out of memory");
        app->failed = true;
        ok = false;
    }
    return ok;
}

void live_request_stop(live_app *app) {
    if (app->stopping)
        return;
    app->stopping = true;
    if (app->stop)
        app->stop(app);
    live_kafka_stop(app);
}

void live_finish(live_app *app) {
    if (app->finished)
        return;
    app->finished = true;
    app->stopping = true;
    uv_timer_stop(&app->view_timer);
    uv_close((uv_handle_t *)&app->view_timer, NULL);
    uv_timer_stop(&app->window_timer);
    uv_close((uv_handle_t *)&app->window_timer, NULL);
    uv_timer_stop(&app->views_timer);
    uv_close((uv_handle_t *)&app->views_timer, NULL);
    pyro_finish(app);
    uv_close((uv_handle_t *)&app->flusher, NULL);
    uv_close((uv_handle_t *)&app->sigint, NULL);
    uv_close((uv_handle_t *)&app->sigterm, NULL);
    live_kafka_close(app);
    live_metrics_close(app);
}

int live_report(live_app *app) {
    /* the last (partial) window, or the whole run without --window */
    if (app->prof)
        write_window(app);
    if (app->views) /* the last frame: every input has ended */
        views_frame(app, true);
    pyro_report(app); /* push what is queued (bounded), print the counts */
    live_kafka_finish(app); /* flush (bounded), counts per source and in total */
    if (app->o.summary) {
        /* with --json stdout holds only events: the table goes to stderr */
        jfrc_out *err = app->o.json ? jfrc_out_new_fd(STDERR_FILENO, 1 << 16) : NULL;
        jfrc_out *o = cli_out;
        if (err) {
            jfrc_out_flush(cli_out);
            o = err;
        }
        if (jfrc_summary_has_chunks(app->stats))
            jfrc_summary_print(app->stats, o);
        else
            cli_error("summary: no complete chunk");
        if (err) {
            jfrc_out_flush(err);
            jfrc_out_free(err);
        }
    }
    return app->failed ? CLI_EXIT_ERROR : CLI_EXIT_OK;
}

void live_free(live_app *app) {
    jfrs_fanout_free(app->fan); /* every source has ended */
    app->fan = NULL;
    jfrs_views_free(app->views); /* after the fan-out, whose sources it copied */
    app->views = NULL;
    pyro_free(app);
    jfrc_profile_free(app->prof);
    app->prof = NULL;
    jfrc_summary_free(app->stats);
    app->stats = NULL;
    free(app->row_events);
    free(app->row_replayed);
    app->row_events = app->row_replayed = NULL;
    app->caprows = 0;
    live_kafka_finish(app); /* when live_report did not run */
    live_metrics_free(app);
    cli_filter_free(&app->o.filter);
    free(app->snap);
    app->snap = NULL;
}
