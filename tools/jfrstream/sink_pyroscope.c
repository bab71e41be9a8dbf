/*
 * sink_pyroscope.c — `listen`/`tail --pyroscope URL` (see sink_pyroscope.h):
 * the options, the sink (jfrs_pyroscope), whose profiles each source's
 * jfrs_fanout collects per kind of --event and pushes every window
 * (--window, default 10 s, from the timer here) and when the source ends;
 * at the end the sink is drained for at most PYRO_DRAIN_MS and the counts
 * are printed on stderr. Its credentials come from files or the
 * environment (secret.h), read by pyro_open before the run; a 401 or 403
 * names the option that gave them.
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#include "sink_pyroscope.h"
#include "commands.h"
#include "report.h"
#include "usage.h"
#include "secret.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define PYRO_MAX_KINDS 16
#define PYRO_DEFAULT_WINDOW_MS 10000
#define PYRO_DRAIN_MS 10000

#define PYRO_ENV_BASIC "JFRSTREAM_PYROSCOPE_BASIC_AUTH"
#define PYRO_ENV_BEARER "JFRSTREAM_PYROSCOPE_BEARER"

typedef struct pyro_app {
    jfrs_pyroscope *sink;
    uv_timer_t timer;
    bool timer_on;
    uint64_t said_dropped, said_failed, said_retried; /* counts already reported */
    /* from pyro_open: the secrets (wiped when freed), the headers made of
     * --pyroscope-header-file, where the credentials came from (for the
     * hint after a 401 or 403) */
    char *basic, *bearer;
    char *headers[2 * LIVE_MAX_LABELS];
    size_t nheaders;
    const char *cred_from;
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

/* The header "NAME: VALUE" (NAME n bytes): NAME an HTTP token, VALUE
 * without controls; as the library checks it, but named here. */
static bool header_ok(const char *name, size_t n, const char *value) {
    if (n == 0)
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = name[i];
        if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
              (c && strchr("!#$%&'*+-.^_`|~", c))))
            return false;
    }
    for (const unsigned char *c = (const unsigned char *)value; *c; c++)
        if (*c < 0x20 || *c == 0x7f)
            return false;
    return true;
}

/* http(s)://USER:PASS@host: credentials on the command line, which ps shows. */
static bool url_has_userinfo(const char *url) {
    const char *h = strstr(url, "://") + 3;
    size_t n = strcspn(h, "/?#");
    return memchr(h, '@', n) != NULL;
}

int pyro_option(live_opts *o, const cli_arg *a) {
    const char *v = a->value;
    if (!v || !*v)
        return cli_usage_error("%s: missing value after %s", a->cmd, a->as);
    switch (a->opt->key) {
    case OPT_PYROSCOPE_APP:
        o->pyroscope_app = v;
        return CLI_EXIT_OK;
    case OPT_PYROSCOPE_BASIC_AUTH:
        o->pyroscope_basic_file = v;
        return CLI_EXIT_OK;
    case OPT_PYROSCOPE_BEARER:
        o->pyroscope_bearer_file = v;
        return CLI_EXIT_OK;
    case OPT_PYROSCOPE_TENANT:
        if (!header_ok("X", 1, v) || strlen(v) > 256)
            return cli_usage_error("%s: --pyroscope-tenant: at most 256 bytes, no control "
                                   "characters", a->cmd);
        o->pyroscope_tenant = v;
        return CLI_EXIT_OK;
    case OPT_PYROSCOPE_HEADER: {
        const char *colon = strchr(v, ':');
        if (!colon || !header_ok(v, (size_t)(colon - v), colon + 1))
            return cli_usage_error("%s: --pyroscope-header needs 'NAME: VALUE' (NAME letters, "
                                   "digits, -; no control characters)", a->cmd);
        if ((colon - v == 13 && strncasecmp(v, "Authorization", 13) == 0) ||
            (colon - v == 19 && strncasecmp(v, "Proxy-Authorization", 19) == 0))
            return cli_usage_error("%s: --pyroscope-header %.*s: a secret on the command line "
                                   "(ps shows it): use --pyroscope-header-file NAME=FILE, "
                                   "--pyroscope-basic-auth or --pyroscope-bearer", a->cmd,
                                   (int)(colon - v), v);
        if (o->npyroscope_headers == LIVE_MAX_LABELS)
            return cli_usage_error("%s: at most %d --pyroscope-header options", a->cmd,
                                   LIVE_MAX_LABELS);
        o->pyroscope_headers[o->npyroscope_headers++] = v;
        return CLI_EXIT_OK;
    }
    case OPT_PYROSCOPE_HEADER_FILE: {
        const char *eq = strchr(v, '=');
        if (!eq || !eq[1] || !header_ok(v, (size_t)(eq - v), ""))
            return cli_usage_error("%s: --pyroscope-header-file needs NAME=FILE (NAME letters, "
                                   "digits, -)", a->cmd);
        if (o->npyroscope_header_files == LIVE_MAX_LABELS)
            return cli_usage_error("%s: at most %d --pyroscope-header-file options", a->cmd,
                                   LIVE_MAX_LABELS);
        o->pyroscope_header_files[o->npyroscope_header_files++] = v;
        return CLI_EXIT_OK;
    }
    case OPT_PYROSCOPE_CA:
    case OPT_PYROSCOPE_CERT:
    case OPT_PYROSCOPE_KEY: {
        int rc = cli_file_readable(a->cmd, a->as, v);
        if (rc == CLI_EXIT_OK)
            *(a->opt->key == OPT_PYROSCOPE_CA     ? &o->pyroscope_ca
              : a->opt->key == OPT_PYROSCOPE_CERT ? &o->pyroscope_cert
                                                  : &o->pyroscope_key) = v;
        return rc;
    }
    default: /* OPT_PYROSCOPE */
        break;
    }
    if (strncmp(v, "http://", 7) != 0 && strncmp(v, "https://", 8) != 0)
        return cli_usage_error("%s: --pyroscope needs an http:// or https:// URL, got '%s'",
                               a->cmd, v);
    if (url_has_userinfo(v))
        return cli_usage_error("%s: --pyroscope: no credentials in the URL (ps shows them to "
                               "every user): use --pyroscope-basic-auth FILE or $%s",
                               a->cmd, PYRO_ENV_BASIC);
    if (!jfrs_pyroscope_available())
        return cli_usage_error("%s: --pyroscope: %s (built without libcurl)", a->cmd,
                               jfr_status_str(JFR_UNSUPPORTED));
    o->pyroscope_url = v;
    return pyro_check_event(o, a->cmd);
}

/* ------------------------------------------------------------ credentials */

/* "USER:PASSWORD" with a user; the password may be empty. */
static bool basic_ok(const char *s) {
    const char *colon = strchr(s, ':');
    return colon && colon != s && header_ok("X", 1, s);
}

/* A bearer token: visible characters only. */
static bool token_ok(const char *s) {
    for (const unsigned char *c = (const unsigned char *)s; *c; c++)
        if (*c <= 0x20 || *c == 0x7f)
            return false;
    return *s != '\0';
}

/* The basic or bearer credentials: an option's file, else (neither option
 * given) the environment. */
static int read_credentials(const live_opts *o, const char *cmd, pyro_app *pa) {
    int rc;
    if (o->pyroscope_basic_file && o->pyroscope_bearer_file)
        return cli_usage_error("%s: --pyroscope-basic-auth and --pyroscope-bearer: one of the "
                               "two", cmd);
    if (o->pyroscope_basic_file) {
        if ((rc = cli_secret_file(cmd, "--pyroscope-basic-auth", o->pyroscope_basic_file,
                                  CLI_SECRET_MAX, true, &pa->basic)) != CLI_EXIT_OK)
            return rc;
        pa->cred_from = "--pyroscope-basic-auth";
    } else if (o->pyroscope_bearer_file) {
        if ((rc = cli_secret_file(cmd, "--pyroscope-bearer", o->pyroscope_bearer_file,
                                  CLI_SECRET_MAX, true, &pa->bearer)) != CLI_EXIT_OK)
            return rc;
        pa->cred_from = "--pyroscope-bearer";
    } else {
        if ((rc = cli_secret_env(cmd, PYRO_ENV_BASIC, &pa->basic)) != CLI_EXIT_OK ||
            (rc = cli_secret_env(cmd, PYRO_ENV_BEARER, &pa->bearer)) != CLI_EXIT_OK)
            return rc;
        if (pa->basic && pa->bearer)
            return cli_usage_error("%s: both %s and %s are set: unset one, or give "
                                   "--pyroscope-basic-auth or --pyroscope-bearer", cmd,
                                   PYRO_ENV_BASIC, PYRO_ENV_BEARER);
        pa->cred_from = pa->basic ? "$" PYRO_ENV_BASIC : pa->bearer ? "$" PYRO_ENV_BEARER
                                                                    : NULL;
    }
    if (pa->basic && !basic_ok(pa->basic))
        return cli_usage_error("%s: %s%s%s: not USER:PASSWORD on one line (no control "
                               "characters)", cmd, pa->cred_from,
                               o->pyroscope_basic_file ? " " : "",
                               o->pyroscope_basic_file ? o->pyroscope_basic_file : "");
    if (pa->bearer && !token_ok(pa->bearer))
        return cli_usage_error("%s: %s%s%s: not a token (visible characters, no spaces)", cmd,
                               pa->cred_from, o->pyroscope_bearer_file ? " " : "",
                               o->pyroscope_bearer_file ? o->pyroscope_bearer_file : "");
    return CLI_EXIT_OK;
}

/* --pyroscope-header-file NAME=FILE: "NAME: <the file's line>". */
static int read_header_file(const char *cmd, const char *v, pyro_app *pa) {
    const char *eq = strchr(v, '=');
    char *value = NULL;
    int rc = cli_secret_file(cmd, "--pyroscope-header-file", eq + 1, CLI_SECRET_MAX, true,
                             &value);
    if (rc != CLI_EXIT_OK)
        return rc;
    size_t n = (size_t)(eq - v), len = n + 2 + strlen(value) + 1;
    char *h = header_ok(v, n, value) ? malloc(len) : NULL;
    if (h) {
        snprintf(h, len, "%.*s: %s", (int)n, v, value);
        pa->headers[pa->nheaders++] = h;
    }
    cli_secret_free(value);
    if (!h)
        return cli_usage_error("%s: --pyroscope-header-file %s: a control character in the "
                               "value, or out of memory", cmd, eq + 1);
    return CLI_EXIT_OK;
}

int pyro_open(live_app *app) {
    const live_opts *o = &app->o;
    const char *cmd = app->cmd;
    const char *orphan = o->pyroscope_basic_file ? "--pyroscope-basic-auth"
                         : o->pyroscope_bearer_file ? "--pyroscope-bearer"
                         : o->pyroscope_tenant ? "--pyroscope-tenant"
                         : o->npyroscope_headers ? "--pyroscope-header"
                         : o->npyroscope_header_files ? "--pyroscope-header-file"
                         : o->pyroscope_ca ? "--pyroscope-ca"
                         : o->pyroscope_cert ? "--pyroscope-cert"
                         : o->pyroscope_key ? "--pyroscope-key"
                                             : NULL;
    if (!o->pyroscope_url)
        return orphan ? cli_usage_error("%s: %s needs --pyroscope URL", cmd, orphan)
                      : CLI_EXIT_OK;
    bool https = strncmp(o->pyroscope_url, "https://", 8) == 0;
    const char *tls = o->pyroscope_ca ? "--pyroscope-ca"
                      : o->pyroscope_cert ? "--pyroscope-cert"
                      : o->pyroscope_key ? "--pyroscope-key"
                                         : NULL;
    if (tls && !https)
        return cli_usage_error("%s: %s needs an https:// --pyroscope URL", cmd, tls);
    if (o->pyroscope_key && !o->pyroscope_cert)
        return cli_usage_error("%s: --pyroscope-key needs --pyroscope-cert", cmd);
    pyro_app *pa = calloc(1, sizeof *pa);
    if (!pa)
        return cli_usage_error("%s: out of memory", cmd);
    app->pyro = pa;
    int rc = read_credentials(o, cmd, pa);
    for (size_t i = 0; rc == CLI_EXIT_OK && i < o->npyroscope_header_files; i++)
        rc = read_header_file(cmd, o->pyroscope_header_files[i], pa);
    for (size_t i = 0; rc == CLI_EXIT_OK && i < o->npyroscope_headers; i++) {
        if (!(pa->headers[pa->nheaders] = strdup(o->pyroscope_headers[i])))
            rc = cli_usage_error("%s: out of memory", cmd);
        else
            pa->nheaders++;
    }
    return rc;
}

/* After a 401 or 403: which option to look at. */
static void auth_hint(const pyro_app *pa, const live_opts *o, long status, char *buf,
                      size_t n) {
    *buf = '\0';
    if (status != 401 && status != 403)
        return;
    if (pa->cred_from)
        snprintf(buf, n, "; check %s%s", pa->cred_from,
                 status == 403 && o->pyroscope_tenant ? " and --pyroscope-tenant" : "");
    else
        snprintf(buf, n, "; no credentials given: --pyroscope-basic-auth FILE or "
                 "--pyroscope-bearer FILE");
}

/* ------------------------------------------------------------ windows */

/* Say once per window when windows were dropped or failed, or retried. */
static void say_losses(live_app *app, pyro_app *pa) {
    jfrs_pyroscope_stats st;
    jfrs_pyroscope_stats_total(pa->sink, &st);
    if (st.dropped > pa->said_dropped || st.failed > pa->said_failed) {
        char hint[160];
        auth_hint(pa, &app->o, st.last_status, hint, sizeof hint);
        live_msg("pyroscope: %llu %s dropped, %llu failed so far (last: %s%s)",
                 (unsigned long long)st.dropped, cli_noun(st.dropped, "window", "windows"),
                 (unsigned long long)st.failed,
                 st.last_error[0] ? st.last_error : "-", st.last_error[0] ? hint : "");
        pa->said_dropped = st.dropped;
        pa->said_failed = st.failed;
    } else if (st.retried > pa->said_retried && st.last_error[0]) {
        /* nothing lost yet, but the server is not taking them: say why */
        live_msg("pyroscope: retrying, %llu %s so far (last: %s)",
                 (unsigned long long)st.retried, cli_noun(st.retried, "retry", "retries"),
                 st.last_error);
    }
    pa->said_retried = st.retried;
}

static void on_timer(uv_timer_t *t) {
    live_app *app = t->data;
    pyro_app *pa = app->pyro;
    jfrs_fanout_window(app->fan, jfrs_fanout_now_ms());
    say_losses(app, pa);
}

/* ------------------------------------------------------------ setup */

bool pyro_init(live_app *app) {
    if (!app->o.pyroscope_url)
        return true;
    pyro_app *pa = app->pyro; /* pyro_open's */
    if (!pa) {
        cli_error("%s: --pyroscope: pyro_open was not called", app->cmd);
        app->failed = true;
        return false;
    }
    const live_opts *o = &app->o;
    jfrs_pyroscope_config cfg;
    jfrs_pyroscope_config_init(&cfg);
    cfg.url = o->pyroscope_url;
    cfg.basic_auth = pa->basic;
    cfg.bearer_token = pa->bearer;
    cfg.tenant = o->pyroscope_tenant;
    cfg.headers = (const char *const *)pa->headers;
    cfg.nheaders = pa->nheaders;
    cfg.ca_file = o->pyroscope_ca;
    cfg.cert_file = o->pyroscope_cert;
    cfg.key_file = o->pyroscope_key;
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
    char left[64] = "", last[450] = "";
    if (st.left)
        snprintf(left, sizeof left, ", %llu left unsent", (unsigned long long)st.left);
    if (st.last_error[0] && (st.failed || st.left || st.dropped)) {
        char hint[160];
        auth_hint(pa, &app->o, st.last_status, hint, sizeof hint);
        snprintf(last, sizeof last, " (last error: %s%s)", st.last_error, hint);
    }
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
    cli_secret_free(pa->basic);
    cli_secret_free(pa->bearer);
    for (size_t i = 0; i < pa->nheaders; i++)
        cli_secret_free(pa->headers[i]);
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
