/*
 * cmd_tail.c — `jfrstream tail DIR|FILE`: follow a JVM's JFR disk
 * repository (the folder of chunk files, or its parent holding one folder
 * per JVM) or one chunk file as the JVM writes it (jfr_uv_tail), and show
 * the events live like `listen`.
 *
 * After a final chunk (the JVM finished writing), a tail of a parent folder
 * waits for the next JVM's folder unless --exit-when-done; a tail of one
 * JVM's folder or of a file ends there.
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#include "args.h"
#include "commands.h"
#include "report.h"
#include "usage.h"
#include "live.h"
#include "sink_kafka.h"
#include "sink_metrics.h"
#include "sink_pyroscope.h"

#include "jfrstream_uv.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef PATH_MAX
#define PATH_MAX 4096
#endif

#define WATCH_MS 200 /* folder watch period */

typedef struct tail_ctx {
    live_app app; /* first: live_app* <-> tail_ctx* */
    jfr_uv_tail *t;
    live_src *src;
    const char *path;
    bool exit_when_done;
    uint64_t idle_ms;
    uv_timer_t watch;   /* waits for a new JVM folder (parent mode) */
    bool waiting;       /* between JVMs: no tail */
    uint64_t waiting_since;
    char folder[PATH_MAX]; /* name of the JVM folder followed (parent mode) */
    char lastfile[PATH_MAX]; /* the chunk file read last: a new one counts in files= */
    bool started;         /* a tail was started once: later data is new */
} tail_ctx;

static bool start_tail(tail_ctx *x, const char *path);

static void finish(tail_ctx *x) {
    uv_timer_stop(&x->watch);
    if (!uv_is_closing((uv_handle_t *)&x->watch))
        uv_close((uv_handle_t *)&x->watch, NULL);
    live_finish(&x->app);
}

/* path of the file being read -> the JVM folder's name, when that folder is
 * a sub-folder of the tailed path (parent mode). */
static void note_folder(tail_ctx *x) {
    if (!x->t)
        return;
    const char *f = jfr_uv_tail_file(x->t);
    if (f && *f && strcmp(f, x->lastfile) != 0) {
        snprintf(x->lastfile, sizeof x->lastfile, "%s", f);
        x->app.files++; /* a new chunk file begun */
    }
    size_t n = strlen(x->path);
    if (!f || !*f || strncmp(f, x->path, n) != 0 || f[n] != '/')
        return;
    const char *sub = f + n + 1;
    const char *slash = strchr(sub, '/');
    if (!slash || strchr(slash + 1, '/'))
        return; /* a chunk file right in the tailed folder: not parent mode */
    size_t k = (size_t)(slash - sub);
    if (k < sizeof x->folder) {
        memcpy(x->folder, sub, k);
        x->folder[k] = '\0';
    }
}

/* The newest JVM folder of the tailed path after x->folder, if any (one
 * holding chunk files: jfr_uv_repo_newest). */
static bool newer_folder(tail_ctx *x, char *out, size_t outlen) {
    return jfr_uv_repo_newest(x->app.loop, x->path, x->folder, out, outlen) == 1;
}

static void chunk_hook(live_app *app, live_src *s) {
    (void)s;
    note_folder((tail_ctx *)app);
}

/* What the tail of `path` will read first and is on disk now: its events
 * are replayed, not arriving now. */
static uint64_t bytes_on_disk(tail_ctx *x, const char *path) {
    int64_t n = jfr_uv_repo_bytes(x->app.loop, path);
    return n > 0 ? (uint64_t)n : 0;
}

static void on_watch(uv_timer_t *h) {
    tail_ctx *x = h->data;
    if (!x->waiting)
        return;
    char name[PATH_MAX], path[PATH_MAX * 2];
    if (newer_folder(x, name, sizeof name)) {
        snprintf(path, sizeof path, "%s/%s", x->path, name);
        snprintf(x->folder, sizeof x->folder, "%s", name);
        x->waiting = false;
        cli_error("%s: following the new repository folder %s", x->path, name);
        if (!start_tail(x, path)) {
            x->app.failed = true;
            finish(x);
        }
        return;
    }
    if (x->idle_ms && uv_now(x->app.loop) - x->waiting_since >= x->idle_ms) {
        cli_error("%s: no new JVM for %.1f s", x->path, (double)x->idle_ms / 1000.0);
        finish(x);
    }
}

static void on_end(jfr_uv_tail *t, jfr_uv_tail_end why, jfr_status st, const char *message,
                   void *user) {
    tail_ctx *x = user;
    live_src *s = t->data;
    note_folder(x);
    uint64_t bytes = jfr_parser_bytes(jfr_uv_tail_parser(t));
    x->t = NULL;
    x->src = NULL;
    const char *how = "tail ended";
    char idle[64];
    bool ours = false;
    switch (why) {
    case JFR_UV_TAIL_FINAL:
        how = "the JVM finished writing (final chunk)";
        st = JFR_OK;
        break;
    case JFR_UV_TAIL_IDLE: /* ours: an unfinished chunk is reported, not an error */
        snprintf(idle, sizeof idle, "no new data for %.1f s", (double)x->idle_ms / 1000.0);
        how = idle;
        ours = true;
        break;
    case JFR_UV_TAIL_STOPPED:
        how = "stopped";
        ours = x->app.stopping;
        break;
    case JFR_UV_TAIL_ERROR:
    default:
        how = "tail failed";
        if (st == JFR_OK)
            st = JFR_INVALID_STATE;
        break;
    }
    live_src_end(s, st, message, ours, bytes, how);
    if (why == JFR_UV_TAIL_FINAL && !x->exit_when_done && !x->app.stopping && x->folder[0]) {
        cli_error("%s: waiting for the next JVM's repository folder", x->path);
        x->waiting = true;
        x->waiting_since = uv_now(x->app.loop);
        return;
    }
    finish(x);
}

static bool start_tail(tail_ctx *x, const char *path) {
    jfr_uv_tail_config cfg;
    jfr_uv_tail_config_init(&cfg);
    cfg.path = path;
    jfr_options opts;
    jfr_callbacks cbs;
    live_parser_config(&x->app, &opts, &cbs);
    cfg.options = &opts;
    cfg.callbacks = &cbs;
    cfg.idle_ms = x->idle_ms;
    /* --kafka pauses the parser while the producer's queue is full: stay
     * paused (read nothing) until it resumes us */
    cfg.manual_resume = x->app.kafka != NULL;
    cfg.on_end = on_end;
    cfg.user = x;
    live_src *s = live_src_new(&x->app, x->path, "path");
    if (!s) {
        cli_error("out of memory");
        return false;
    }
    if (!x->started)
        s->replay_bytes = bytes_on_disk(x, path);
    x->started = true;
    int err = 0;
    jfr_status st = jfr_uv_tail_start(x->app.loop, &cfg, &x->t, &err);
    if (st != JFR_OK) {
        cli_error("cannot tail %s: %s", path, err ? uv_strerror(err) : jfr_status_str(st));
        s->failed = true;
        live_src_end(s, JFR_OK, NULL, false, 0, "not started");
        x->t = NULL;
        return false;
    }
    x->t->data = s; /* before the first poll, which runs from the loop */
    s->tail = x->t; /* --kafka resumes it */
    x->src = s;
    st = live_src_subscribe(s, jfr_uv_tail_parser(x->t));
    if (st) {
        live_src_msg(s, "%s", jfr_status_str(st));
        s->failed = true;
        jfr_uv_tail_stop(x->t); /* on_end ends it */
        return false;
    }
    return true;
}

static void stop(live_app *app) {
    tail_ctx *x = (tail_ctx *)app;
    if (x->t)
        jfr_uv_tail_stop(x->t); /* finishes the parser; on_end ends the run */
    else
        finish(x);
}

static int on_arg(void *ctx, const cli_arg *a) {
    tail_ctx *x = ctx;
    if (!a->opt) {
        if (x->path)
            return cli_usage_error("tail: too many arguments");
        x->path = a->as;
        return CLI_EXIT_OK;
    }
    switch (a->opt->key) {
    case OPT_EXIT_WHEN_DONE:
        x->exit_when_done = true;
        return CLI_EXIT_OK;
    case OPT_IDLE_TIMEOUT: /* or its old spelling --idle */
        if (!live_parse_seconds(a->value, &x->idle_ms) || x->idle_ms == 0)
            return cli_usage_error("tail: %s needs a number of seconds > 0", a->as);
        return CLI_EXIT_OK;
    default:
        return live_option(&x->app.o, a);
    }
}

int live_cmd_tail(const cli_command *c, cli_global *g, int argc, char **argv) {
    tail_ctx x;
    memset(&x, 0, sizeof x);
    x.app.o.stack_depth = 5;
    int rc = cli_args(c, g, argc, argv, on_arg, &x);
    if (rc != CLI_ARGS_RUN)
        goto out;
    rc = CLI_EXIT_OK;
    if (!x.path) {
        rc = cli_usage_error("tail: missing DIR or FILE");
        goto out;
    }
    x.app.o.resync = g->resync;
    x.app.o.max_memory = g->max_memory;
    x.app.cmd = "tail";
    if ((rc = live_check(&x.app)) != CLI_EXIT_OK)
        goto out;
    if (g->feed_mode != CLI_FEED_DEFAULT) {
        rc = cli_usage_error("tail: --feed-size applies to files only");
        goto out;
    }
    x.app.cmd = "tail";
    live_signals_hold(&x.app); /* before the sinks' threads start */
    if ((rc = live_kafka_open(&x.app)) != CLI_EXIT_OK) /* --kafka: the producer */
        goto out;
    if ((rc = pyro_open(&x.app)) != CLI_EXIT_OK) /* --pyroscope: its credentials */
        goto out;
    if ((rc = live_metrics_open(&x.app)) != CLI_EXIT_OK) /* --metrics: the endpoint */
        goto out;
    /* "DIR/" and "DIR" name the same folder: compare paths without it */
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s", x.path);
    for (size_t n = strlen(path); n > 1 && path[n - 1] == '/'; n--)
        path[n - 1] = '\0';
    x.path = path;

    uv_loop_t loop;
    if (uv_loop_init(&loop) != 0) {
        cli_error("cannot create the event loop");
        rc = CLI_EXIT_ERROR;
        goto out;
    }
    live_init(&x.app, &loop, "tail", x.path);
    x.app.stop = stop;
    x.app.chunk_hook = chunk_hook;
    uv_timer_init(&loop, &x.watch);
    x.watch.data = &x;
    uv_timer_start(&x.watch, on_watch, WATCH_MS, WATCH_MS);
    if (!start_tail(&x, x.path)) {
        x.app.failed = true;
        finish(&x);
    }
    live_signals_deliver(&x.app);
    uv_run(&loop, UV_RUN_DEFAULT);
    rc = live_report(&x.app);
    if (uv_loop_close(&loop) != 0) {
        uv_run(&loop, UV_RUN_DEFAULT);
        uv_loop_close(&loop);
    }
out:
    live_free(&x.app);
    return rc;
}
