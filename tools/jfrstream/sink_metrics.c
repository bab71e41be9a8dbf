/*
 * sink_metrics.c — `listen` / `tail` --metrics (see sink_metrics.h): the
 * registry fed on the loop, served by jfrs_metrics_server, whose scrapes
 * wake the loop through a uv_async; the command's own series. HTTPS and
 * basic auth from files (--metrics-tls-cert/-key, --metrics-basic-auth),
 * read before the run: a bad file is a usage error.
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#include "sink_metrics.h"
#include "commands.h"
#include "report.h"
#include "usage.h"
#include "secret.h"
#include "sink_kafka.h"
#include "sink_pyroscope.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXPIRE_MS 1000

struct live_metrics {
    jfrs_metrics *m;
    jfrs_metrics_server *server;
    uv_async_t async; /* a scrape waits: render on the loop */
    uv_timer_t timer; /* TTL expiry between scrapes */
    char url[200];    /* "http://ADDR:PORT/metrics", said once it answers */
    bool started, closed;
};

static bool parse_count(const char *v, uint64_t max, uint64_t *out) {
    char *end;
    if (!v || *v < '1' || *v > '9')
        return false;
    errno = 0;
    unsigned long long n = strtoull(v, &end, 10);
    if (errno || *end || n > max)
        return false;
    *out = n;
    return true;
}

int live_metrics_option(live_opts *o, const cli_arg *a) {
    const char *cmd = a->cmd, *v = a->value;
    if (!v)
        return cli_usage_error("%s: missing value after %s", cmd, a->as);
    uint64_t n;
    switch (a->opt->key) {
    case OPT_METRICS:
        o->metrics = v;
        return CLI_EXIT_OK;
    case OPT_METRICS_TLS_CERT:
        o->metrics_tls_cert = v;
        return CLI_EXIT_OK;
    case OPT_METRICS_TLS_KEY:
        o->metrics_tls_key = v;
        return CLI_EXIT_OK;
    case OPT_METRICS_BASIC_AUTH:
        o->metrics_basic_auth = v;
        return CLI_EXIT_OK;
    case OPT_METRICS_TTL:
        if (!live_parse_seconds(v, &o->metrics_ttl_ms) || o->metrics_ttl_ms == 0)
            return cli_usage_error("%s: --metrics-ttl needs a number of seconds > 0", cmd);
        return CLI_EXIT_OK;
    case OPT_METRICS_MAX_SOURCES:
        if (!parse_count(v, UINT32_MAX, &n))
            return cli_usage_error("%s: --metrics-max-sources needs a number 1..%u", cmd,
                                   UINT32_MAX);
        o->metrics_max_sources = (uint32_t)n;
        return CLI_EXIT_OK;
    default: /* OPT_METRICS_MAX_SERIES */
        if (!parse_count(v, UINT64_MAX, &n))
            return cli_usage_error("%s: --metrics-max-series needs a number >= 1", cmd);
        o->metrics_max_series = n;
        return CLI_EXIT_OK;
    }
}

/* ------------------------------------------------------------ scrapes */

/* Values of the command's own (connections, sinks), before each render. */
static void on_render(jfrs_metrics *m, void *user) {
    live_app *app = user;
    if (strcmp(app->cmd, "listen") == 0) {
        jfrs_metrics_set(m, "jfrstream_connections_open", "gauge", "Connections open now", NULL,
                         app->conns);
        jfrs_metrics_set(m, "jfrstream_connections_total", "counter", "Connections accepted",
                         NULL, (double)app->conns_total);
        jfrs_metrics_set(m, "jfrstream_connections_refused_total", "counter",
                         "Connections refused (--max-connections, memory, TLS)", NULL,
                         (double)app->conns_refused);
        jfrs_metrics_set(m, "jfrstream_tls_refused_total", "counter",
                         "Connections refused by TLS: not TLS, handshake, client certificate",
                         NULL, (double)app->tls_refused);
    }
    jfrs_kafka_stats ks;
    if (live_kafka_stats(app, &ks)) {
        static const char h[] = "Kafka messages (one per event), by outcome";
        jfrs_metrics_set(m, "jfrstream_sink_kafka_messages_total", "counter", h,
                         "outcome=\"produced\"", (double)ks.produced);
        jfrs_metrics_set(m, "jfrstream_sink_kafka_messages_total", "counter", h,
                         "outcome=\"delivered\"", (double)ks.delivered);
        jfrs_metrics_set(m, "jfrstream_sink_kafka_messages_total", "counter", h,
                         "outcome=\"failed\"", (double)ks.failed);
        jfrs_metrics_set(m, "jfrstream_sink_kafka_messages_total", "counter", h,
                         "outcome=\"dropped\"", (double)ks.dropped);
        jfrs_metrics_set(m, "jfrstream_sink_kafka_messages_total", "counter", h,
                         "outcome=\"duplicate\"", (double)ks.duplicates);
        jfrs_metrics_set(m, "jfrstream_sink_kafka_in_flight", "gauge",
                         "Kafka messages waiting: in flight, pending or held back", NULL,
                         (double)(ks.in_flight + ks.pending + ks.held));
    }
    live_metrics *lm = app->metrics;
    if (app->o.metrics_basic_auth && lm && lm->server)
        jfrs_metrics_set(m, "jfrstream_metrics_unauthorized_total", "counter",
                         "Requests to the metrics endpoint answered 401 (no or wrong "
                         "credentials)", NULL,
                         (double)jfrs_metrics_server_unauthorized(lm->server));
    jfrs_pyroscope_stats ps;
    if (pyro_stats(app, &ps)) {
        static const char h[] = "Pyroscope profile windows, by outcome";
        const char *o[] = {"outcome=\"queued\"", "outcome=\"pushed\"", "outcome=\"retried\"",
                           "outcome=\"dropped\"", "outcome=\"failed\""};
        uint64_t v[] = {ps.queued, ps.pushed, ps.retried, ps.dropped, ps.failed};
        for (size_t i = 0; i < 5; i++)
            jfrs_metrics_set(m, "jfrstream_sink_pyroscope_windows_total", "counter", h, o[i],
                             (double)v[i]);
    }
}

/* On the loop: one render for the scrapes waiting now. */
static void on_async(uv_async_t *a) {
    live_metrics *lm = a->data;
    jfrs_metrics_server_service(lm->server);
}

/* On a server thread. */
static void wake(void *user) {
    uv_async_send(user);
}

static void on_expire(uv_timer_t *t) {
    live_metrics *lm = t->data;
    jfrs_metrics_expire(lm->m);
}

/* ------------------------------------------------------------ lifetime */

/* The PEM files and the users of --metrics-tls-cert/-key and
 * --metrics-basic-auth into *cert, *key, *users (NULL when not given). */
static int read_files(const live_opts *o, const char *cmd, char **cert, char **key,
                      char **users) {
    int rc;
    if (!o->metrics_tls_cert != !o->metrics_tls_key)
        return cli_usage_error("%s: %s needs %s", cmd,
                               o->metrics_tls_cert ? "--metrics-tls-cert" : "--metrics-tls-key",
                               o->metrics_tls_cert ? "--metrics-tls-key" : "--metrics-tls-cert");
    if (o->metrics_tls_cert && !jfrs_metrics_http_tls_available())
        return cli_usage_error("%s: --metrics-tls-cert: this jfrstream's libmicrohttpd has no "
                               "TLS (Debian's libmicrohttpd12 has it, through GnuTLS)", cmd);
    if (o->metrics_tls_cert) {
        if ((rc = cli_secret_file(cmd, "--metrics-tls-cert", o->metrics_tls_cert,
                                  CLI_SECRET_FILE_MAX, false, cert)) != CLI_EXIT_OK)
            return rc;
        if (!strstr(*cert, "-----BEGIN CERTIFICATE-----"))
            return cli_usage_error("%s: --metrics-tls-cert %s: no PEM certificate "
                                   "(-----BEGIN CERTIFICATE-----)", cmd, o->metrics_tls_cert);
        if ((rc = cli_secret_file(cmd, "--metrics-tls-key", o->metrics_tls_key,
                                  CLI_SECRET_FILE_MAX, false, key)) != CLI_EXIT_OK)
            return rc;
        if (strstr(*key, "-----BEGIN ENCRYPTED PRIVATE KEY-----") ||
            !strstr(*key, "PRIVATE KEY-----"))
            return cli_usage_error("%s: --metrics-tls-key %s: no unencrypted PEM private key "
                                   "(-----BEGIN PRIVATE KEY-----)", cmd, o->metrics_tls_key);
    }
    if (o->metrics_basic_auth &&
        (rc = cli_secret_file(cmd, "--metrics-basic-auth", o->metrics_basic_auth,
                              CLI_SECRET_FILE_MAX, false, users)) != CLI_EXIT_OK)
        return rc;
    return CLI_EXIT_OK;
}

int live_metrics_open(live_app *app) {
    const live_opts *o = &app->o;
    if (!o->metrics) {
        const char *orphan = o->metrics_tls_cert ? "--metrics-tls-cert"
                             : o->metrics_tls_key ? "--metrics-tls-key"
                             : o->metrics_basic_auth ? "--metrics-basic-auth"
                                                     : NULL;
        return orphan ? cli_usage_error("%s: %s needs --metrics ADDR:PORT", app->cmd, orphan)
                      : CLI_EXIT_OK;
    }
    char host[128];
    int port = LIVE_METRICS_DEFAULT_PORT;
    if (!live_parse_address(o->metrics, host, sizeof host, &port, LIVE_METRICS_DEFAULT_PORT))
        return cli_usage_error("%s: --metrics: bad address '%s' (PORT, ADDR:PORT or "
                               "[ADDR]:PORT; ADDR numeric or localhost)", app->cmd, o->metrics);
    if (!jfrs_metrics_http_available())
        return cli_usage_error("%s: --metrics: this jfrstream was built without "
                               "libmicrohttpd (meson feature -Dmicrohttpd)", app->cmd);
    live_metrics *lm = calloc(1, sizeof *lm);
    if (!lm) {
        cli_error("out of memory");
        return CLI_EXIT_ERROR;
    }
    app->metrics = lm;
    jfrs_metrics_config cfg;
    jfrs_metrics_config_init(&cfg);
    cfg.ttl_ms = o->metrics_ttl_ms;
    cfg.max_sources = o->metrics_max_sources;
    cfg.max_series = o->metrics_max_series;
    cfg.on_render = on_render;
    cfg.user = app;
    if (jfrs_metrics_new(&cfg, &lm->m) != JFR_OK) {
        cli_error("out of memory");
        return CLI_EXIT_ERROR;
    }
    char *cert = NULL, *key = NULL, *users = NULL;
    int rc = read_files(o, app->cmd, &cert, &key, &users);
    if (rc != CLI_EXIT_OK)
        goto done;
    char err[512];
    jfrs_metrics_http_config hc;
    jfrs_metrics_http_config_init(&hc);
    hc.host = host;
    hc.port = port;
    hc.tls_cert_pem = cert;
    hc.tls_key_pem = key;
    hc.basic_auth = users;
    jfr_status st = jfrs_metrics_server_start_with(lm->m, &hc, &lm->server, err, sizeof err);
    bool v6 = strchr(host, ':') != NULL;
    if (st == JFR_INVALID_ARG && users && strncmp(err, "basic auth", 10) == 0) {
        rc = cli_usage_error("%s: --metrics-basic-auth %s: %s", app->cmd, o->metrics_basic_auth,
                             err + strlen("basic auth users: "));
    } else if (st != JFR_OK) {
        cli_error("%s: --metrics %s: %s", app->cmd, o->metrics,
                  *err ? err : jfr_status_str(st));
        rc = CLI_EXIT_ERROR;
    } else {
        snprintf(lm->url, sizeof lm->url, "%s://%s%s%s:%d/metrics%s", cert ? "https" : "http",
                 v6 ? "[" : "", host, v6 ? "]" : "", jfrs_metrics_server_port(lm->server),
                 users ? " (basic auth)" : "");
    }
done: /* the server keeps its own copies */
    cli_secret_free(cert);
    cli_secret_free(key);
    cli_secret_free(users);
    return rc;
}

void live_metrics_start(live_app *app) {
    live_metrics *lm = app->metrics;
    if (!lm || lm->started)
        return;
    lm->started = true;
    uv_async_init(app->loop, &lm->async, on_async);
    lm->async.data = lm;
    uv_timer_init(app->loop, &lm->timer);
    lm->timer.data = lm;
    uv_timer_start(&lm->timer, on_expire, EXPIRE_MS, EXPIRE_MS);
    jfrs_metrics_server_serve(lm->server, wake, &lm->async);
    /* Said only now: a scrape that follows the line is answered, and a
     * SIGTERM that follows it stops the command cleanly (live_init). */
    cli_error("metrics on %s", lm->url);
}

void live_metrics_close(live_app *app) {
    live_metrics *lm = app->metrics;
    if (!lm || !lm->started || lm->closed)
        return;
    lm->closed = true;
    jfrs_metrics_server_stop(lm->server); /* a waiting scrape gets its 503 */
    lm->server = NULL;
    uv_timer_stop(&lm->timer);
    uv_close((uv_handle_t *)&lm->timer, NULL);
    uv_close((uv_handle_t *)&lm->async, NULL);
}

void live_metrics_free(live_app *app) {
    live_metrics *lm = app->metrics;
    if (!lm)
        return;
    jfrs_metrics_server_stop(lm->server);
    jfrs_metrics_free(lm->m);
    free(lm);
    app->metrics = NULL;
}

/* ------------------------------------------------------------ sources */

jfrs_metrics *live_metrics_registry(const live_app *app) {
    return app->metrics ? app->metrics->m : NULL;
}
