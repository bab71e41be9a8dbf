/*
 * cmd_listen.c — `jfrstream listen [ADDR:PORT]`: accept JFR byte streams
 * (e.g. from tools/jfr-pump) on a TCP socket, many at once, one parser per
 * connection (jfr_uv_listener), and show them live: a rate view, one JSON
 * line per event (--json), and/or the summary table at the end (--summary).
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#include "cli.h"
#include "live.h"

#include "jfrstream_uv.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_HOST "127.0.0.1"
#define DEFAULT_PORT 7091

typedef struct listen_ctx {
    live_app app; /* first: live_app* <-> listen_ctx* */
    jfr_uv_listener *l;
    bool once;
} listen_ctx;

/* PORT | ADDR:PORT | [V6ADDR]:PORT | [V6ADDR] | ADDR -> host, port. */
static bool parse_address(const char *arg, char *host, size_t hostlen, int *port) {
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
            *port = DEFAULT_PORT;
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
            snprintf(host, hostlen, "%s", DEFAULT_HOST);
            colon = p - 1;
        } else {
            hl = colon ? (size_t)(colon - p) : strlen(p);
            if (hl == 0 || hl >= hostlen)
                return false;
            memcpy(host, p, hl);
            host[hl] = '\0';
            if (!colon) {
                *port = DEFAULT_PORT;
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
    if (strcmp(host, "localhost") == 0)
        snprintf(host, hostlen, "%s", DEFAULT_HOST);
    return true;
}

static void on_connect(jfr_uv_conn *c, void *user) {
    listen_ctx *x = user;
    live_src *s = live_src_new(&x->app, jfr_uv_conn_peer(c));
    if (!s) {
        cli_error("%s: out of memory", jfr_uv_conn_peer(c));
        x->app.failed = true;
        jfr_uv_conn_close(c);
        return;
    }
    c->data = s;
    jfr_status st = live_src_subscribe(s, jfr_uv_conn_parser(c));
    if (st) {
        live_src_msg(s, "%s", jfr_status_str(st));
        s->failed = true;
        jfr_uv_conn_close(c);
        return;
    }
    live_src_msg(s, "connected");
}

static void on_close(jfr_uv_conn *c, jfr_status st, const char *message, void *user) {
    listen_ctx *x = user;
    live_src *s = c->data;
    if (!s)
        return;
    c->data = NULL;
    /* the message starts with "<peer>: ", which live_src_end adds again */
    const char *peer = jfr_uv_conn_peer(c);
    size_t n = strlen(peer);
    if (message && strncmp(message, peer, n) == 0 && strncmp(message + n, ": ", 2) == 0)
        message += n + 2;
    bool ours = x->app.stopping;
    live_src_end(s, st, message, ours, jfr_uv_conn_bytes(c),
                 st == JFR_OK ? "stream ended" : "closed");
    if (x->once)
        live_request_stop(&x->app);
}

static void on_listener_closed(jfr_uv_listener *l) {
    listen_ctx *x = l->data;
    x->l = NULL;
    live_finish(&x->app);
}

static void stop(live_app *app) {
    listen_ctx *x = (listen_ctx *)app;
    if (x->l)
        jfr_uv_listener_close(x->l, on_listener_closed); /* finishes every connection */
    else
        live_finish(app);
}

int cmd_listen(cli_global *g, int argc, char **argv) {
    listen_ctx x;
    memset(&x, 0, sizeof x);
    x.app.o.stack_depth = 5;
    const char *addr = NULL;
    int rc = CLI_EXIT_OK;
    for (int i = 0; i < argc;) {
        int r = cli_take_global(g, argc, argv, &i);
        if (r < 0) {
            rc = CLI_EXIT_USAGE;
            goto out;
        }
        if (r > 0)
            continue;
        r = live_take_option(&x.app.o, "listen", argc, argv, &i);
        if (r < 0) {
            rc = CLI_EXIT_USAGE;
            goto out;
        }
        if (r > 0)
            continue;
        const char *a = argv[i];
        if (cli_is_help(a)) {
            cli_usage(stdout);
            goto out;
        }
        if (strcmp(a, "--once") == 0) {
            x.once = true;
            i++;
        } else if (a[0] == '-' && a[1] != '\0') {
            rc = cli_usage_error("listen: unknown option '%s'", a);
            goto out;
        } else {
            if (addr) {
                rc = cli_usage_error("listen: too many arguments");
                goto out;
            }
            addr = a;
            i++;
        }
    }
    x.app.o.resync = g->resync;
    if (g->feed_mode != CLI_FEED_DEFAULT) {
        rc = cli_usage_error("listen: --feed-size applies to files only");
        goto out;
    }
    char host[128];
    int port = DEFAULT_PORT;
    snprintf(host, sizeof host, "%s", DEFAULT_HOST);
    if (addr && !parse_address(addr, host, sizeof host, &port)) {
        rc = cli_usage_error("listen: bad address '%s' (PORT, ADDR:PORT or [ADDR]:PORT)", addr);
        goto out;
    }

    uv_loop_t loop;
    if (uv_loop_init(&loop) != 0) {
        cli_error("cannot create the event loop");
        rc = CLI_EXIT_ERROR;
        goto out;
    }
    bool v6 = strchr(host, ':') != NULL;
    char where[200];
    live_init(&x.app, &loop, "listen", "");
    x.app.stop = stop;
    jfr_uv_listener_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.host = host;
    cfg.port = port;
    live_parser_config(&x.app, &cfg.options, &cfg.callbacks);
    cfg.on_connect = on_connect;
    cfg.on_close = on_close;
    cfg.user = &x;
    int err = jfr_uv_listener_start(&loop, &cfg, &x.l);
    if (err) {
        cli_error("cannot listen on %s%s%s:%d: %s", v6 ? "[" : "", host, v6 ? "]" : "", port,
                  uv_strerror(err));
        x.l = NULL;
        x.app.failed = true;
        live_finish(&x.app);
    } else {
        x.l->data = &x;
        snprintf(where, sizeof where, "%s%s%s:%d", v6 ? "[" : "", host, v6 ? "]" : "",
                 jfr_uv_listener_port(x.l));
        snprintf(x.app.where, sizeof x.app.where, "%s", where);
        cli_error("listening on %s", where);
    }
    uv_run(&loop, UV_RUN_DEFAULT);
    rc = live_report(&x.app);
    if (uv_loop_close(&loop) != 0) { /* nothing should be left; be safe */
        uv_run(&loop, UV_RUN_DEFAULT);
        uv_loop_close(&loop);
    }
out:
    live_free(&x.app);
    return rc;
}
