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
    char lastfile[PATH_MAX]; /* the chunk file read last */
    unsigned stuck_ticks; /* watch ticks with nothing opened but chunk files present */
    bool restarting;      /* stopped to start again on the same path */
    char cur[PATH_MAX * 2]; /* path given to the running tail */
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

/* The newest sub-folder of the tailed path after x->folder, if any. */
static bool newer_folder(tail_ctx *x, char *out, size_t outlen) {
    uv_fs_t req;
    uv_dirent_t ent;
    bool found = false;
    if (uv_fs_scandir(x->app.loop, &req, x->path, 0, NULL) < 0) {
        uv_fs_req_cleanup(&req);
        return false;
    }
    while (uv_fs_scandir_next(&req, &ent) != UV_EOF) {
        if (ent.type != UV_DIRENT_DIR || ent.name[0] == '.')
            continue;
        if (strcmp(ent.name, x->folder) <= 0)
            continue;
        if (!found || strcmp(ent.name, out) > 0) {
            snprintf(out, outlen, "%s", ent.name);
            found = true;
        }
    }
    uv_fs_req_cleanup(&req);
    return found;
}

static void chunk_hook(live_app *app, live_src *s) {
    (void)s;
    note_folder((tail_ctx *)app);
}

/* Is there a chunk file in `dir` or in one of its sub-folders? */
static bool has_chunks(uv_loop_t *loop, const char *dir, int depth) {
    uv_fs_t req;
    uv_dirent_t ent;
    bool found = false;
    if (uv_fs_scandir(loop, &req, dir, 0, NULL) < 0) {
        uv_fs_req_cleanup(&req);
        return false;
    }
    /* read to the end: libuv 1.44 leaks the entries left unread */
    while (uv_fs_scandir_next(&req, &ent) != UV_EOF) {
        if (found)
            continue;
        size_t n = strlen(ent.name);
        if (ent.type != UV_DIRENT_DIR && n > 4 && strcmp(ent.name + n - 4, ".jfr") == 0) {
            found = true;
        } else if (ent.type == UV_DIRENT_DIR && depth > 0 && ent.name[0] != '.') {
            char sub[PATH_MAX * 2];
            snprintf(sub, sizeof sub, "%s/%s", dir, ent.name);
            found = has_chunks(loop, sub, depth - 1);
        }
    }
    uv_fs_req_cleanup(&req);
    return found;
}

/* Bytes of the chunk files in `dir` (depth 0), or of `dir` itself when it is
 * a file; -1 when there is none. */
static int64_t chunk_bytes(uv_loop_t *loop, const char *dir) {
    uv_fs_t req;
    uv_dirent_t ent;
    int64_t sum = -1;
    if (uv_fs_stat(loop, &req, dir, NULL) == 0 && !S_ISDIR(req.statbuf.st_mode)) {
        sum = (int64_t)req.statbuf.st_size;
        uv_fs_req_cleanup(&req);
        return sum;
    }
    uv_fs_req_cleanup(&req);
    if (uv_fs_scandir(loop, &req, dir, 0, NULL) < 0) {
        uv_fs_req_cleanup(&req);
        return -1;
    }
    while (uv_fs_scandir_next(&req, &ent) != UV_EOF) {
        size_t n = strlen(ent.name);
        if (ent.type == UV_DIRENT_DIR || n <= 4 || strcmp(ent.name + n - 4, ".jfr") != 0)
            continue;
        char path[PATH_MAX * 2];
        uv_fs_t st;
        snprintf(path, sizeof path, "%s/%s", dir, ent.name);
        if (uv_fs_stat(loop, &st, path, NULL) == 0)
            sum = (sum < 0 ? 0 : sum) + (int64_t)st.statbuf.st_size;
        uv_fs_req_cleanup(&st);
    }
    uv_fs_req_cleanup(&req);
    return sum;
}

/* What the tail of `path` will read first and is on disk now: the file, the
 * chunk files of the folder, or those of its newest sub-folder (the choice
 * of jfr_uv_tail). Its events are replayed, not arriving now. */
static uint64_t bytes_on_disk(tail_ctx *x, const char *path) {
    int64_t n = chunk_bytes(x->app.loop, path);
    if (n < 0) {
        char name[PATH_MAX], sub[PATH_MAX * 2];
        x->folder[0] = '\0';
        if (newer_folder(x, name, sizeof name)) {
            snprintf(sub, sizeof sub, "%s/%s", path, name);
            n = chunk_bytes(x->app.loop, sub);
        }
    }
    return n > 0 ? (uint64_t)n : 0;
}

/* JDK 17 creates an empty repository folder at startup, removes it a few ms
 * later and makes the real one (often under another name) later. The tail
 * settles on the first folder it sees and keeps polling it even once it is
 * gone. Seen from here: nothing opened yet, while chunk files exist under
 * the path, for two ticks in a row: start the tail again (nothing was fed,
 * so nothing is lost or read twice). */
static void check_stuck(tail_ctx *x) {
    const char *f = jfr_uv_tail_file(x->t);
    bool stuck = !x->lastfile[0] && (!f || !*f) && has_chunks(x->app.loop, x->cur, 1) &&
                 jfr_parser_bytes(jfr_uv_tail_parser(x->t)) == 0;
    x->stuck_ticks = stuck ? x->stuck_ticks + 1 : 0;
    if (x->stuck_ticks >= 2) {
        cli_error("%s: nothing to read where the tail settled (JDK 17 removes its first "
                  "repository folder at startup): looking again", x->cur);
        x->restarting = true;
        jfr_uv_tail_stop(x->t); /* on_end starts it again */
    }
}

static void on_watch(uv_timer_t *h) {
    tail_ctx *x = h->data;
    if (!x->waiting) {
        if (x->t && !x->app.stopping)
            check_stuck(x);
        return;
    }
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
    x->stuck_ticks = 0;
    if (x->restarting) {
        x->restarting = false;
        live_src_discard(s);
        char again[sizeof x->cur];
        snprintf(again, sizeof again, "%s", x->cur);
        if (!x->app.stopping && start_tail(x, again))
            return;
        if (!x->app.stopping)
            x->app.failed = true;
        finish(x);
        return;
    }
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
    if (path != x->cur)
        snprintf(x->cur, sizeof x->cur, "%s", path);
    x->lastfile[0] = '\0';
    x->stuck_ticks = 0;
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

int cmd_tail(const cli_command *c, cli_global *g, int argc, char **argv) {
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
    if (g->feed_mode != CLI_FEED_DEFAULT) {
        rc = cli_usage_error("tail: --feed-size applies to files only");
        goto out;
    }
    x.app.cmd = "tail";
    if ((rc = live_kafka_open(&x.app)) != CLI_EXIT_OK) /* --kafka: the producer */
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
