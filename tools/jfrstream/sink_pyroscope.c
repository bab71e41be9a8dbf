/*
 * sink_pyroscope.c — `listen`/`tail --pyroscope URL` (see sink_pyroscope.h).
 *
 * Each source gets, lazily at the first event of a kind, one profile per
 * Pyroscope kind of --event (jfrc_pyroscope_kinds: cpu, wall, three
 * allocation kinds, mutex, block, live, malloc). Every window (--window,
 * default 10 s) each kind with events is written as pprof with Pyroscope's
 * sample types (jfrc_pyroscope_pprof: cpu and wall scaled by the sampling
 * period the source's jdk.ActiveSetting gives, else the kind's default)
 * and queued on the sink (jfrs_pyroscope_push), named after the source's
 * labels (jfrs_pyroscope_name). A source that ends pushes its partial
 * window; at the end the sink is drained for at most PYRO_DRAIN_MS and the
 * counts are printed on stderr.
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
#include <sys/time.h>

#define PYRO_MAX_KINDS 16
#define PYRO_DEFAULT_WINDOW_MS 10000
#define PYRO_DRAIN_MS 10000

typedef struct pyro_src pyro_src;

/* One kind of one source: its profile (NULL until its first event). */
typedef struct pyro_slot {
    pyro_src *ps;
    const jfrc_pyroscope_kind *kind;
    jfrc_profile *prof;
    int64_t period; /* ns from jdk.ActiveSetting, 0: not seen */
} pyro_slot;

struct pyro_src {
    pyro_src *next, *prev;
    live_src *s;
    pyro_slot slots[PYRO_MAX_KINDS];
    char *name;           /* the series name, for labels of generation gen */
    uint64_t gen;
};

typedef struct pyro_app {
    jfrs_pyroscope *sink;
    const jfrc_pyroscope_kind *kinds[PYRO_MAX_KINDS];
    size_t nkinds;
    /* per kind the event types to subscribe (from a template profile) */
    jfrc_profile *tmpl[PYRO_MAX_KINDS];
    pyro_src *srcs;
    uv_timer_t timer;
    bool timer_on;
    int64_t win_start_ms; /* wall clock, epoch ms */
    uint64_t windows;     /* window ends */
    uint64_t said_dropped, said_failed; /* counts already reported */
    /* the pprof bytes of one upload */
    char *buf;
    size_t len, cap;
    bool buf_failed;
} pyro_app;

static int64_t wall_ms(void) {
    struct timeval tv;
    gettimeofday(&tv, NULL);
    return (int64_t)tv.tv_sec * 1000 + tv.tv_usec / 1000;
}

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

/* ------------------------------------------------------------ pushing */

static int buf_write(void *user, const void *data, size_t len) {
    pyro_app *pa = user;
    if (pa->cap - pa->len < len) {
        size_t c = pa->cap ? pa->cap : 65536;
        while (c - pa->len < len)
            c *= 2;
        char *b = realloc(pa->buf, c);
        if (!b) {
            pa->buf_failed = true;
            return 1;
        }
        pa->buf = b;
        pa->cap = c;
    }
    memcpy(pa->buf + pa->len, data, len);
    pa->len += len;
    return 0;
}

/* The series name of a source, rebuilt when its labels changed. */
static const char *series_name(live_app *app, pyro_src *ps) {
    uint64_t g = jfrs_source_generation(ps->s->src);
    if (!ps->name || ps->gen != g) {
        free(ps->name);
        ps->name = jfrs_pyroscope_name(ps->s->src, app->o.pyroscope_app);
        ps->gen = g;
    }
    return ps->name;
}

/* Push every kind of `ps` with events, window [start, now), and empty them. */
static void push_source(live_app *app, pyro_src *ps, int64_t start_ms, int64_t now_ms) {
    pyro_app *pa = app->pyro;
    for (size_t k = 0; k < pa->nkinds; k++) {
        pyro_slot *sl = &ps->slots[k];
        if (!sl->prof || jfrc_profile_events(sl->prof) == 0) {
            if (sl->prof)
                jfrc_profile_reset(sl->prof);
            continue;
        }
        if (jfrc_profile_error(sl->prof)) {
            live_src_msg(ps->s, "pyroscope %s: %s", sl->kind->name, jfrc_profile_error(sl->prof));
            jfrc_profile_clear_error(sl->prof);
        }
        const char *name = series_name(app, ps);
        jfrc_pprof_options po;
        jfrc_pyroscope_pprof(sl->kind, sl->period, start_ms * 1000000,
                             (now_ms - start_ms) * 1000000, &po);
        pa->len = 0;
        pa->buf_failed = false;
        jfrc_out *o = jfrc_out_new(buf_write, pa, 1 << 16);
        jfr_status st = !o || !name ? JFR_NOMEM : jfrc_profile_finish(sl->prof);
        if (st == JFR_OK)
            st = jfrc_profile_write_pprof_with(sl->prof, o, &po);
        if (st == JFR_OK && (jfrc_out_flush(o) != JFR_OK || pa->buf_failed))
            st = JFR_NOMEM;
        jfrc_out_free(o);
        if (st == JFR_OK)
            st = jfrs_pyroscope_push(pa->sink, ps->s->name, name, pa->buf, pa->len,
                                     start_ms / 1000, now_ms / 1000);
        if (st != JFR_OK && st != JFR_INVALID_STATE)
            live_src_msg(ps->s, "pyroscope %s: window not pushed: %s", sl->kind->name,
                         jfr_status_str(st));
        jfrc_profile_reset(sl->prof);
    }
}

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
    int64_t now = wall_ms();
    for (pyro_src *ps = pa->srcs; ps; ps = ps->next)
        push_source(app, ps, pa->win_start_ms, now);
    pa->win_start_ms = now;
    pa->windows++;
    say_losses(pa);
}

/* ------------------------------------------------------------ setup */

bool pyro_init(live_app *app) {
    if (!app->o.pyroscope_url)
        return true;
    const char *words = app->o.prof_event ? app->o.prof_event : "cpu";
    pyro_app *pa = calloc(1, sizeof *pa);
    if (!pa) {
        cli_error("out of memory");
        app->failed = true;
        return false;
    }
    app->pyro = pa;
    if (jfrc_pyroscope_kinds(words, pa->kinds, PYRO_MAX_KINDS, &pa->nkinds, NULL) != JFR_OK)
        goto fail; /* checked by pyro_check_event */
    for (size_t k = 0; k < pa->nkinds; k++) {
        pa->tmpl[k] = jfrc_profile_new();
        if (!pa->tmpl[k] || jfrc_profile_select(pa->tmpl[k], pa->kinds[k]->select) != JFR_OK) {
            cli_error("out of memory");
            goto fail;
        }
    }
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
    pa->win_start_ms = wall_ms();
    return true;
fail: /* go on without the sink */
    pyro_free(app);
    app->failed = true;
    return false;
}

static pyro_src *src_state(live_src *s) {
    pyro_app *pa = s->app->pyro;
    if (s->pyro)
        return s->pyro;
    pyro_src *ps = calloc(1, sizeof *ps);
    if (!ps)
        return NULL;
    ps->s = s;
    for (size_t k = 0; k < pa->nkinds; k++) {
        ps->slots[k].ps = ps;
        ps->slots[k].kind = pa->kinds[k];
    }
    ps->next = pa->srcs;
    if (pa->srcs)
        pa->srcs->prev = ps;
    pa->srcs = ps;
    s->pyro = ps;
    return ps;
}

static int on_kind_event(jfr_parser *p, const jfr_event *e, void *user) {
    (void)p;
    pyro_slot *sl = user;
    if (!sl->prof) {
        sl->prof = jfrc_profile_new();
        if (!sl->prof || jfrc_profile_select(sl->prof, sl->kind->select) != JFR_OK) {
            jfrc_profile_free(sl->prof);
            sl->prof = NULL;
            live_src_msg(sl->ps->s, "pyroscope: out of memory");
            return JFR_CB_CONTINUE;
        }
    }
    jfrc_profile_add(sl->prof, e, 0);
    return JFR_CB_CONTINUE;
}

static int on_setting(jfr_parser *p, const jfr_event *e, void *user) {
    pyro_src *ps = user;
    pyro_app *pa = ps->s->app->pyro;
    for (size_t k = 0; k < pa->nkinds; k++) {
        if (!pa->kinds[k]->period_event)
            continue;
        int64_t v = jfrc_setting_period(p, e, pa->kinds[k]->period_event);
        if (v > 0)
            ps->slots[k].period = v;
    }
    return JFR_CB_CONTINUE;
}

jfr_status pyro_src_subscribe(live_src *s, jfr_parser *p) {
    pyro_app *pa = s->app->pyro;
    if (!pa)
        return JFR_OK;
    pyro_src *ps = src_state(s);
    if (!ps)
        return JFR_NOMEM;
    bool periods = false;
    for (size_t k = 0; k < pa->nkinds; k++) {
        periods = periods || pa->kinds[k]->period_event;
        for (size_t i = 0; i < jfrc_profile_ntypes(pa->tmpl[k]); i++) {
            jfr_status st = jfr_parser_on(p, jfrc_profile_type(pa->tmpl[k], i), on_kind_event,
                                          &ps->slots[k]);
            if (st)
                return st;
        }
    }
    if (periods) {
        jfr_status st = jfr_parser_on(p, "jdk.ActiveSetting", on_setting, ps);
        if (st)
            return st;
    }
    return JFR_OK;
}

void pyro_chunk_begin(live_src *s, const jfr_chunk_info *c) {
    if (!s->pyro)
        return;
    for (size_t k = 0; k < PYRO_MAX_KINDS; k++)
        if (s->pyro->slots[k].prof)
            jfrc_profile_chunk_begin(s->pyro->slots[k].prof, c);
}

void pyro_chunk_end(live_src *s) {
    if (!s->pyro)
        return;
    for (size_t k = 0; k < PYRO_MAX_KINDS; k++)
        if (s->pyro->slots[k].prof)
            jfrc_profile_chunk_end(s->pyro->slots[k].prof);
}

void pyro_src_end(live_src *s, bool push) {
    pyro_src *ps = s->pyro;
    pyro_app *pa = s->app->pyro;
    if (!ps || !pa)
        return;
    if (push) {
        push_source(s->app, ps, pa->win_start_ms, wall_ms());
        jfrs_pyroscope_end_source(pa->sink, s->name);
    }
    if (ps->prev)
        ps->prev->next = ps->next;
    else
        pa->srcs = ps->next;
    if (ps->next)
        ps->next->prev = ps->prev;
    for (size_t k = 0; k < PYRO_MAX_KINDS; k++)
        jfrc_profile_free(ps->slots[k].prof);
    free(ps->name);
    free(ps);
    s->pyro = NULL;
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
    /* sources still open (the loop ended without their end) push now */
    while (pa->srcs)
        pyro_src_end(pa->srcs->s, true);
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
    while (pa->srcs)
        pyro_src_end(pa->srcs->s, false);
    jfrs_pyroscope_free(pa->sink);
    for (size_t k = 0; k < PYRO_MAX_KINDS; k++)
        jfrc_profile_free(pa->tmpl[k]);
    free(pa->buf);
    free(pa);
    app->pyro = NULL;
}

bool pyro_stats(const live_app *app, jfrs_pyroscope_stats *out) {
    if (!app->pyro || !app->pyro->sink)
        return false;
    jfrs_pyroscope_stats_total(app->pyro->sink, out);
    return true;
}
