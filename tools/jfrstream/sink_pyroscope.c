/*
 * sink_pyroscope.c — `listen`/`tail --pyroscope URL` (see sink_pyroscope.h):
 * the options, the sink (jfrs_pyroscope), whose profiles each source's
 * jfrs_fanout collects per kind of --event and pushes every window
 * (--window, default 10 s, from the timer here) and when the source ends;
 * at the end the sink is drained for at most PYRO_DRAIN_MS and the counts
 * are printed on stderr.
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#include "sink_pyroscope.h"
#include "commands.h"
#include "report.h"
#include "usage.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PYRO_MAX_KINDS 16
#define PYRO_DEFAULT_WINDOW_MS 10000
#define PYRO_DRAIN_MS 10000

typedef struct pyro_app {
    jfrs_pyroscope *sink;
    uv_timer_t timer;
    bool timer_on;
    uint64_t said_dropped, said_failed; /* counts already reported */
} pyro_app;

/* --event's words must all have a Pyroscope kind: a usage error. */
int pyro_check_event(const live_opts *o, const char *cmd) {
    const jfrc_pyroscope_kind *k[PYRO_MAX_KINDS];
    size_t n;
    const char *bad = NULL;
    if (!o->pyroscope_url || !o->prof_event ||
        jfrc_pyroscope_kinds(o->prof_event, k, PYRO_MAX_KINDS, &n, &bad) == JFR_OK)
        return CLI_EXIT_OK;
    const char *e = bad ? strchr(bad, ',') : NULL;
    int len = bad ? (int)(e ? (size_t)(e - bad) : strlen(bad)) : 0;
    return cli_usage_error("%s: --pyroscope: --event %.*s: no Pyroscope profile type (cpu, "
                           "wall, alloc, lock, live, nativemem)",
                           cmd, len > 60 ? 60 : len, bad ? bad : "");
}

int pyro_option(live_opts *o, const cli_arg *a) {
    const char *v = a->value;
    if (!v || !*v)
        return cli_usage_error("%s: missing value after %s", a->cmd, a->as);
    if (a->opt->key == OPT_PYROSCOPE_APP) {
        o->pyroscope_app = v;
        return CLI_EXIT_OK;
    }
    if (strncmp(v, "http://", 7) != 0 && strncmp(v, "https://", 8) != 0)
        return cli_usage_error("%s: --pyroscope needs an http:// or https:// URL, got '%s'",
                               a->cmd, v);
    if (!jfrs_pyroscope_available())
        return cli_usage_error("%s: --pyroscope: %s (built without libcurl)", a->cmd,
                               jfr_status_str(JFR_UNSUPPORTED));
    o->pyroscope_url = v;
    return pyro_check_event(o, a->cmd);
}

/* ------------------------------------------------------------ windows */

/* Say once per window when windows were dropped or failed. */
static void say_losses(pyro_app *pa) {
    jfrs_pyroscope_stats st;
    jfrs_pyroscope_stats_total(pa->sink, &st);
    if (st.dropped > pa->said_dropped || st.failed > pa->said_failed) {
        live_msg("pyroscope: %llu %s dropped, %llu failed so far (last: %s)",
                 (unsigned long long)st.dropped, cli_noun(st.dropped, "window", "windows"),
                 (unsigned long long)st.failed,
                 st.last_error[0] ? st.last_error : "-");
        pa->said_dropped = st.dropped;
        pa->said_failed = st.failed;
    }
}

static void on_timer(uv_timer_t *t) {
    live_app *app = t->data;
    pyro_app *pa = app->pyro;
    jfrs_fanout_window(app->fan, jfrs_fanout_now_ms());
    say_losses(pa);
}

/* ------------------------------------------------------------ setup */

bool pyro_init(live_app *app) {
    if (!app->o.pyroscope_url)
        return true;
    pyro_app *pa = calloc(1, sizeof *pa);
    if (!pa) {
        cli_error("out of memory");
        app->failed = true;
        return false;
    }
    app->pyro = pa;
    jfrs_pyroscope_config cfg;
    jfrs_pyroscope_config_init(&cfg);
    cfg.url = app->o.pyroscope_url;
    jfr_status st = jfrs_pyroscope_new(&cfg, &pa->sink);
    if (st != JFR_OK) {
        cli_error("%s: --pyroscope %s: %s", app->cmd, cfg.url, jfr_status_str(st));
        goto fail;
    }
    uint64_t win = app->o.window_ms ? app->o.window_ms : PYRO_DEFAULT_WINDOW_MS;
    uv_timer_init(app->loop, &pa->timer);
    pa->timer.data = app;
    uv_timer_start(&pa->timer, on_timer, win, win);
    pa->timer_on = true;
    return true;
fail: /* go on without the sink */
    pyro_free(app);
    app->failed = true;
    return false;
}

void pyro_finish(live_app *app) {
    pyro_app *pa = app->pyro;
    if (!pa || !pa->timer_on)
        return;
    uv_timer_stop(&pa->timer);
    uv_close((uv_handle_t *)&pa->timer, NULL);
    pa->timer_on = false;
}

void pyro_report(live_app *app) {
    pyro_app *pa = app->pyro;
    if (!pa || !pa->sink)
        return;
    jfrs_pyroscope_stats st;
    jfrs_pyroscope_stats_total(pa->sink, &st);
    if (st.pending)
        cli_error("pyroscope: sending %llu queued %s (at most %d s)",
                  (unsigned long long)st.pending, cli_noun(st.pending, "window", "windows"),
                  PYRO_DRAIN_MS / 1000);
    jfrs_pyroscope_drain(pa->sink, PYRO_DRAIN_MS);
    jfrs_pyroscope_stats_total(pa->sink, &st);
    jfrc_out_flush(cli_out);
    char left[64] = "", last[300] = "";
    if (st.left)
        snprintf(left, sizeof left, ", %llu left unsent", (unsigned long long)st.left);
    if (st.last_error[0] && (st.failed || st.left || st.dropped))
        snprintf(last, sizeof last, " (last error: %s)", st.last_error);
    cli_error("pyroscope: %llu %s pushed, %llu retried, %llu dropped, %llu failed%s%s",
              (unsigned long long)st.pushed, cli_noun(st.pushed, "window", "windows"),
              (unsigned long long)st.retried,
              (unsigned long long)st.dropped, (unsigned long long)st.failed, left, last);
}

void pyro_free(live_app *app) {
    pyro_app *pa = app->pyro;
    if (!pa)
        return;
    jfrs_pyroscope_free(pa->sink);
    free(pa);
    app->pyro = NULL;
}

jfrs_pyroscope *pyro_sink(const live_app *app) {
    return app->pyro ? app->pyro->sink : NULL;
}

bool pyro_stats(const live_app *app, jfrs_pyroscope_stats *out) {
    if (!app->pyro || !app->pyro->sink)
        return false;
    jfrs_pyroscope_stats_total(app->pyro->sink, out);
    return true;
}
