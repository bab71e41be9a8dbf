/*
 * sink_kafka.c — `listen` / `tail` --kafka (see sink_kafka.h): every event
 * selected by --events / --categories (all without them) goes to Kafka
 * through jfrstream_sink.h's producer, one sender per source.
 *
 * Back-pressure. When the producer's queue is full the sender keeps the
 * message and the parser callback returns JFR_CB_PAUSE: listen stops
 * reading that connection (TCP back-pressure reaches the sender); a 50 ms
 * timer and a check handle (after every loop iteration) retry the waiting
 * message and resume the connection. The tail is started with
 * manual_resume: it reads nothing more until resumed the same way.
 *
 * Stop. Once a stop was asked (SIGINT/SIGTERM, --once, ...), the input that
 * is finished still produces events: a full queue is then waited for
 * instead of pausing. Those waits and the final flush share one budget of
 * LIVE_KAFKA_FLUSH_MS (10 s): then the counts
 * are printed per source and in total; a failed or undelivered message
 * makes the exit status 1.
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#include "sink_kafka.h"
#include "commands.h"
#include "report.h"
#include "usage.h"

#include "jfrstream_uv.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define POLL_MS 50

struct live_kafka {
    jfrs_kafka *k;
    uv_timer_t timer;
    uv_check_t check;
    uv_poll_t evpoll;        /* the producer's event fd: delivery reports */
    bool polling;
    bool started, closed;
    uint64_t stop_budget_ms; /* left for waits at a stop */
    char lastlog[512];       /* the last log line printed (repeats are not) */
    uint64_t repeats;
};

int live_kafka_option(live_opts *o, const cli_arg *a) {
    const char *cmd = a->cmd, *v = a->value;
    if (!v)
        return cli_usage_error("%s: missing value after %s", cmd, a->as);
    switch (a->opt->key) {
    case OPT_KAFKA:
        if (!*v)
            return cli_usage_error("%s: --kafka needs BROKERS (HOST:PORT,...)", cmd);
        o->kafka = v;
        return CLI_EXIT_OK;
    case OPT_KAFKA_TOPIC:
        if (!*v)
            return cli_usage_error("%s: --kafka-topic needs a topic name", cmd);
        o->kafka_topic = v;
        return CLI_EXIT_OK;
    case OPT_KAFKA_FORMAT:
        if (strcmp(v, "json") == 0)
            o->kafka_format = JFRS_KAFKA_JSON;
        else if (strcmp(v, "otlp-json") == 0)
            o->kafka_format = JFRS_KAFKA_OTLP_JSON;
        else
            return cli_usage_error("%s: --kafka-format is json or otlp-json, not '%s'", cmd, v);
        return CLI_EXIT_OK;
    default: /* OPT_KAFKA_OPTION */
        if (!strchr(v, '=') || *v == '=')
            return cli_usage_error("%s: --kafka-option needs KEY=VALUE, got '%s'", cmd, v);
        if (o->nkafka_options == LIVE_MAX_LABELS)
            return cli_usage_error("%s: at most %d --kafka-option options", cmd, LIVE_MAX_LABELS);
        o->kafka_options[o->nkafka_options++] = v;
        return CLI_EXIT_OK;
    }
}

/* librdkafka's warnings and errors, "jfrstream: kafka: ..." (a line
 * repeated at once is counted, not printed again). */
static void on_log(void *user, int level, const char *message) {
    live_app *app = user;
    struct live_kafka *lk = app->kafka;
    if (level > 4 || !lk)
        return;
    if (strcmp(message, lk->lastlog) == 0) {
        lk->repeats++;
        return;
    }
    if (lk->repeats)
        live_msg("kafka: (the last line %llu more %s)", (unsigned long long)lk->repeats,
                 cli_noun(lk->repeats, "time", "times"));
    lk->repeats = 0;
    snprintf(lk->lastlog, sizeof lk->lastlog, "%s", message);
    live_msg("kafka: %s", message);
}

static uint64_t undelivered(const jfrs_kafka_stats *st) {
    return st->in_flight + st->pending + st->held + st->dropped;
}

static void on_source_done(void *user, const char *id, const char *origin,
                           const jfrs_kafka_stats *st) {
    live_app *app = user;
    uint64_t lost = undelivered(st);
    char err[320] = "", dups[64] = "";
    if (st->failed && st->last_error[0])
        snprintf(err, sizeof err, " (last error: %s)", st->last_error);
    if (st->duplicates)
        snprintf(dups, sizeof dups, ", %llu %s before", (unsigned long long)st->duplicates,
                 cli_noun(st->duplicates, "duplicate delivered", "duplicates delivered"));
    /* "SOURCE: kafka: ..." as the other per-source lines */
    live_msg("%s: kafka: %llu %s produced, %llu delivered, %llu failed, %llu undelivered%s%s%s%s",
             origin && *origin ? origin : id, (unsigned long long)st->produced,
             cli_noun(st->produced, "event", "events"),
             (unsigned long long)st->delivered, (unsigned long long)st->failed,
             (unsigned long long)lost, dups, *id ? ", key " : "", id, err);
    if (st->failed || lost)
        app->failed = true;
}

int live_kafka_open(live_app *app) {
    const live_opts *o = &app->o;
    const char *cmd = app->cmd ? app->cmd : "listen";
    if (!o->kafka) {
        if (o->kafka_topic || o->nkafka_options || o->kafka_format)
            return cli_usage_error("%s: --kafka-topic, --kafka-format and --kafka-option need "
                                   "--kafka BROKERS", cmd);
        return CLI_EXIT_OK;
    }
    if (!jfrs_kafka_available())
        return cli_usage_error("%s: --kafka: not supported by this build (built without "
                               "librdkafka: meson setup -Dkafka=enabled)", cmd);
    struct live_kafka *lk = calloc(1, sizeof *lk);
    if (!lk) {
        cli_error("out of memory");
        return CLI_EXIT_ERROR;
    }
    jfrs_kafka_config cfg;
    jfrs_kafka_config_init(&cfg);
    cfg.brokers = o->kafka;
    cfg.topic = o->kafka_topic;
    cfg.format = o->kafka_format == 1 ? JFRS_KAFKA_OTLP_JSON : JFRS_KAFKA_JSON;
    cfg.options = o->kafka_options;
    cfg.noptions = o->nkafka_options;
    cfg.stack_depth = o->stack_depth;
    cfg.on_log = on_log;
    cfg.on_source_done = on_source_done;
    cfg.user = app;
    char err[512] = "";
    jfr_status st = jfrs_kafka_new(&cfg, &lk->k, err, sizeof err);
    if (st != JFR_OK) {
        free(lk);
        if (st == JFR_NOMEM) {
            cli_error("out of memory");
            return CLI_EXIT_ERROR;
        }
        return cli_usage_error("%s: --kafka: %s", cmd, err[0] ? err : jfr_status_str(st));
    }
    lk->stop_budget_ms = LIVE_KAFKA_FLUSH_MS;
    app->kafka = lk;
    return CLI_EXIT_OK;
}

/* A source paused for a full queue has room again (jfrs_fanout's
 * on_resume, from jfrs_fanout_poll or _resume_all): resume its input. */
void live_kafka_resume(jfrs_fanout_src *fs, void *src_user, void *user) {
    (void)fs;
    (void)user;
    live_src *s = src_user;
    if (s->conn)
        jfr_uv_conn_resume(s->conn);
    else if (s->tail)
        jfr_uv_tail_resume(s->tail);
}

/* Retry the paused sources; resume those that have room again. */
static void retry_paused(live_app *app) {
    jfrs_fanout_poll(app->fan);
}

/* A paused connection or tail waits for its resume before it finishes
 * (jfrstream_uv.h): a stop resumes them all. */
void live_kafka_stop(live_app *app) {
    if (app->kafka)
        jfrs_fanout_resume_all(app->fan);
}

static void on_timer(uv_timer_t *t) { retry_paused(t->data); }
static void on_evpoll(uv_poll_t *h, int status, int events) {
    (void)status;
    (void)events;
    retry_paused(h->data);
}
static void on_check(uv_check_t *c) {
    live_app *app = c->data;
    if (jfrs_fanout_paused(app->fan))
        retry_paused(app);
}

void live_kafka_start(live_app *app) {
    struct live_kafka *lk = app->kafka;
    if (!lk || lk->started)
        return;
    lk->started = true;
    uv_timer_init(app->loop, &lk->timer);
    lk->timer.data = app;
    uv_timer_start(&lk->timer, on_timer, POLL_MS, POLL_MS);
    uv_check_init(app->loop, &lk->check);
    lk->check.data = app;
    uv_check_start(&lk->check, on_check);
    int fd = jfrs_kafka_event_fd(lk->k);
    if (fd >= 0 && uv_poll_init(app->loop, &lk->evpoll, fd) == 0) {
        lk->polling = true;
        lk->evpoll.data = app;
        uv_poll_start(&lk->evpoll, UV_READABLE, on_evpoll);
    }
}

void live_kafka_close(live_app *app) {
    struct live_kafka *lk = app->kafka;
    if (!lk || !lk->started || lk->closed)
        return;
    lk->closed = true;
    uv_timer_stop(&lk->timer);
    uv_close((uv_handle_t *)&lk->timer, NULL);
    uv_check_stop(&lk->check);
    uv_close((uv_handle_t *)&lk->check, NULL);
    if (lk->polling) {
        uv_poll_stop(&lk->evpoll);
        uv_close((uv_handle_t *)&lk->evpoll, NULL);
    }
}

jfrs_kafka *live_kafka_producer(const live_app *app) {
    return app->kafka ? app->kafka->k : NULL;
}

/* jfrs_fanout paused the source for a full queue. */
int live_kafka_paused(live_src *s) {
    live_app *app = s->app;
    struct live_kafka *lk = app->kafka;
    if (!app->stopping)
        return JFR_CB_PAUSE; /* resumed by live_kafka_resume */
    /* stopping: the input must be finished; wait for room (bounded) */
    uint64_t t0 = uv_hrtime();
    jfrs_fanout_src_wait(s->fs, lk->stop_budget_ms);
    uint64_t ms = (uv_hrtime() - t0) / 1000000;
    lk->stop_budget_ms = ms >= lk->stop_budget_ms ? 0 : lk->stop_budget_ms - ms;
    return JFR_CB_CONTINUE;
}

/* A signal during the final flush (the loop's handlers are closed): the
 * first ends the wait (the counts are still printed), a second exits. */
static volatile sig_atomic_t flush_signals;

static void on_flush_signal(int sig) {
    (void)sig;
    if (flush_signals++)
        _exit(CLI_EXIT_ERROR);
}

void live_kafka_finish(live_app *app) {
    struct live_kafka *lk = app->kafka;
    if (!lk)
        return;
    /* every source has ended (uv_run returned): their messages remain; wait
     * what a stop left of the budget, in slices, a signal ends it */
    struct sigaction sa, old_int, old_term;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_flush_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    uint64_t t0 = uv_hrtime();
    for (;;) {
        uint64_t ms = (uv_hrtime() - t0) / 1000000;
        uint64_t left = ms >= lk->stop_budget_ms ? 0 : lk->stop_budget_ms - ms;
        if (jfrs_kafka_flush(lk->k, left < 100 ? left : 100) == JFR_OK || left == 0)
            break;
        if (flush_signals) {
            live_msg("kafka: flush interrupted by a signal");
            break;
        }
    }
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    jfrs_kafka_stats st;
    jfrs_kafka_stats_get(lk->k, &st);
    jfrs_kafka_free(lk->k); /* per-source lines of those still waiting */
    if (lk->repeats)
        live_msg("kafka: (the last line %llu more %s)", (unsigned long long)lk->repeats,
                 cli_noun(lk->repeats, "time", "times"));
    uint64_t lost = undelivered(&st);
    char extra[320] = "";
    if (st.dropped)
        snprintf(extra, sizeof extra, " (%llu dropped over the hold bound)",
                 (unsigned long long)st.dropped);
    else if (st.paused) /* back-pressure happened: say how often */
        snprintf(extra, sizeof extra, "; inputs paused %llu %s for a full queue",
                 (unsigned long long)st.paused, cli_noun(st.paused, "time", "times"));
    char dups[64] = "";
    if (st.duplicates)
        snprintf(dups, sizeof dups, ", %llu %s before", (unsigned long long)st.duplicates,
                 cli_noun(st.duplicates, "duplicate delivered", "duplicates delivered"));
    live_msg("kafka: %llu %s produced, %llu delivered, %llu failed, %llu undelivered%s%s",
             (unsigned long long)st.produced, cli_noun(st.produced, "event", "events"),
             (unsigned long long)st.delivered,
             (unsigned long long)st.failed, (unsigned long long)lost, dups, extra);
    if (st.failed && st.last_error[0])
        live_msg("kafka: last error: %s", st.last_error);
    if (st.failed || lost)
        app->failed = true;
    free(lk);
    app->kafka = NULL;
}

bool live_kafka_stats(const live_app *app, jfrs_kafka_stats *out) {
    if (!app->kafka || !app->kafka->k)
        return false;
    jfrs_kafka_stats_get(app->kafka->k, out);
    return true;
}
