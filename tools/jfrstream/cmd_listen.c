/*
 * cmd_listen.c — `jfrstream listen [ADDR:PORT]`: accept JFR byte streams
 * (e.g. from tools/jfr-pump) on a TCP socket, many at once, one parser per
 * connection (jfr_uv_listener), and show them live: a rate view, one JSON
 * line per event (--json), and/or the summary table at the end (--summary).
 * --max-connections, --max-bytes and --idle-timeout set the listener's
 * limits (jfr_uv_listener_config; defaults and reasons in jfrstream_uv.h);
 * --tls-cert, --tls-key, --tls-client-ca and --tls-allow its TLS
 * (jfr_uv_tls_config).
 * A peer that asks for acks (doc/protocol.md) gets "ACK N" for what was
 * handed on: every ACK_TICK_MS each connection's parsed position
 * (jfr_parser_delivered) is marked on its outputs, and what they handed
 * on (with --kafka: what the delivery reports confirmed) is acknowledged
 * (jfr_uv_conn_ack); a Kafka message lost for good ends that connection.
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

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#define DEFAULT_HOST "127.0.0.1"
#define DEFAULT_PORT 7091
#define ACK_TICK_MS 20 /* positions to acks (the listener sends <= 1 per 50 ms) */
/* A clean end waits this long for its last ack; with --kafka the stop's
 * budget, for the delivery reports. */
#define ACK_LINGER_MS 2000

typedef struct listen_ctx {
    live_app app; /* first: live_app* <-> listen_ctx* */
    jfr_uv_listener *l;
    uv_timer_t ack_timer;
    bool ack_timer_on;
    live_src *acking;     /* every connection's source (ack_next) */
    bool once;
    unsigned max_conns;
    uint64_t max_bytes, idle_ms;
    const char *addr; /* the ADDR:PORT operand */
    const char *tls_cert, *tls_key, *tls_ca;
    const char **tls_allow; /* into argv */
    size_t tls_nallow;
} listen_ctx;

/* The TLS config members (jfrstream_uv.h: a failed start's message starts
 * with the member) and their options. */
static const struct {
    const char *member, *option;
} tls_members[] = {
    {"cert_file", "--tls-cert"},
    {"key_file", "--tls-key"},
    {"client_ca_file", "--tls-client-ca"},
};

/* A failed start's message, with the option for the config member. */
static void start_error(const char *msg) {
    for (size_t i = 0; i < sizeof tls_members / sizeof *tls_members; i++) {
        size_t n = strlen(tls_members[i].member);
        if (strncmp(msg, tls_members[i].member, n) == 0 && msg[n] == ' ') {
            cli_error("listen: %s %s", tls_members[i].option, msg + n + 1);
            return;
        }
    }
    cli_error("listen: %s", msg);
}

/* One descriptor per connection: raise the soft limit toward the hard one so
 * that --max-connections can be reached (the usual soft limit is 1024). */
static void raise_fd_limit(unsigned conns) {
    struct rlimit rl;
    rlim_t need = (rlim_t)conns + 64;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur >= need)
        return;
    rl.rlim_cur = rl.rlim_max == RLIM_INFINITY || rl.rlim_max > need ? need : rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < need)
    {
        unsigned long long about = rl.rlim_cur > 64 ? (unsigned long long)rl.rlim_cur - 64 : 0;
        cli_error("listen: the descriptor limit (%llu) allows about %llu %s, not %u",
                  (unsigned long long)rl.rlim_cur, about,
                  cli_noun(about, "connection", "connections"), conns);
    }
}

static void ack_unlink(listen_ctx *x, live_src *s) {
    if (s->ack_prev)
        s->ack_prev->ack_next = s->ack_next;
    else if (x->acking == s)
        x->acking = s->ack_next;
    if (s->ack_next)
        s->ack_next->ack_prev = s->ack_prev;
    s->ack_next = s->ack_prev = NULL;
}

/* Each connection that asked for acks: its parsed position to its outputs,
 * what they handed on to the peer; a lost Kafka message ends it. */
static void on_ack_tick(uv_timer_t *t) {
    listen_ctx *x = t->data;
    bool stopping = x->app.stopping;
    for (live_src *s = x->acking, *next; s && x->app.stopping == stopping; s = next) {
        /* s may end below; a stop it starts (--once) ends the others too */
        next = s->ack_next;
        jfr_uv_conn *c = s->conn;
        if (!jfr_uv_conn_acks(c))
            continue;
        jfrs_fanout_src_mark(s->fs, jfr_parser_delivered(jfr_uv_conn_parser(c)));
        uint64_t n = 0;
        const char *why = NULL;
        if (jfrs_fanout_src_delivered(s->fs, &n, &why) != JFR_OK) {
            char msg[400];
            snprintf(msg, sizeof msg, "kafka: delivery failed (%s): acknowledged %llu bytes, "
                     "the sender resends the rest", why ? why : "?", (unsigned long long)n);
            jfr_uv_conn_ack(c, n);
            jfr_uv_conn_end(c, JFR_IO, msg);
            continue;
        }
        jfr_uv_conn_ack(c, n);
    }
}

static void on_conn_start(jfr_uv_conn *c, void *user) {
    listen_ctx *x = user;
    live_src *s = live_src_new(&x->app, jfr_uv_conn_peer(c), "peer");
    if (!s) {
        cli_error("%s: out of memory", jfr_uv_conn_peer(c));
        x->app.failed = true;
        jfr_uv_conn_stop(c);
        return;
    }
    c->data = s;
    s->conn = c; /* --kafka resumes it */
    s->ack_next = x->acking;
    if (x->acking)
        x->acking->ack_prev = s;
    x->acking = s;
    jfr_status st = live_src_subscribe(s, jfr_uv_conn_parser(c));
    if (st) {
        live_src_msg(s, "%s", jfr_status_str(st));
        s->failed = true;
        jfr_uv_conn_stop(c);
        return;
    }
    live_src_msg(s, "connected");
}

static void on_conn_end(jfr_uv_conn *c, jfr_status st, const char *message, void *user) {
    listen_ctx *x = user;
    live_src *s = c->data;
    if (!s) { /* refused (limit, memory, TLS), or on_conn_start failed and said so */
        if (st != JFR_STOPPED) {
            x->app.conns_refused++;
            if (st == JFR_REFUSED || strstr(message, ": refused: ")) /* TLS */
                x->app.tls_refused++;
            live_msg("%s", message);
            x->app.failed = true;
        }
        return;
    }
    c->data = NULL;
    ack_unlink(x, s);
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

static void on_end(jfr_uv_listener *l, void *user) {
    (void)l;
    listen_ctx *x = user;
    x->l = NULL;
    if (x->ack_timer_on) {
        x->ack_timer_on = false;
        uv_close((uv_handle_t *)&x->ack_timer, NULL);
    }
    live_finish(&x->app);
}

static void stop(live_app *app) {
    listen_ctx *x = (listen_ctx *)app;
    if (x->l)
        jfr_uv_listener_stop(x->l); /* finishes every connection; on_end follows */
    else
        live_finish(app);
}

static int on_arg(void *ctx, const cli_arg *a) {
    listen_ctx *x = ctx;
    const char *v = a->value;
    if (!a->opt) {
        if (x->addr)
            return cli_usage_error("listen: too many arguments");
        x->addr = a->as;
        return CLI_EXIT_OK;
    }
    switch (a->opt->key) {
    case OPT_ONCE:
        x->once = true;
        return CLI_EXIT_OK;
    case OPT_MAX_CONNECTIONS: {
        char *end;
        errno = 0;
        unsigned long n = v ? strtoul(v, &end, 10) : 0;
        if (!v || *v < '1' || *v > '9' || *end || errno || n > 1000000)
            return cli_usage_error("listen: --max-connections needs a number 1..1000000");
        x->max_conns = (unsigned)n;
        return CLI_EXIT_OK;
    }
    case OPT_MAX_BYTES:
        if (!cli_parse_bytes(v, &x->max_bytes))
            return cli_usage_error("listen: --max-bytes needs a byte count (K, M, G "
                                   "suffixes allowed; 0 = unlimited)");
        return CLI_EXIT_OK;
    case OPT_TLS_CERT:
    case OPT_TLS_KEY:
    case OPT_TLS_CLIENT_CA: {
        if (!v || !*v)
            return cli_usage_error("listen: %s needs a FILE", a->as);
        const char **to = a->opt->key == OPT_TLS_CERT  ? &x->tls_cert
                          : a->opt->key == OPT_TLS_KEY ? &x->tls_key
                                                       : &x->tls_ca;
        if (*to)
            return cli_usage_error("listen: %s given twice", a->as);
        *to = v;
        return CLI_EXIT_OK;
    }
    case OPT_TLS_ALLOW: {
        if (!v || !*v)
            return cli_usage_error("listen: --tls-allow needs a PATTERN");
        const char **n = realloc(x->tls_allow, (x->tls_nallow + 1) * sizeof *n);
        if (!n) {
            cli_error("out of memory");
            return CLI_EXIT_ERROR;
        }
        x->tls_allow = n;
        x->tls_allow[x->tls_nallow++] = v;
        return CLI_EXIT_OK;
    }
    case OPT_IDLE_TIMEOUT:
        if (!live_parse_seconds(v, &x->idle_ms))
            return cli_usage_error("listen: --idle-timeout needs a number of seconds "
                                   "(0 = none)");
        return CLI_EXIT_OK;
    default:
        return live_option(&x->app.o, a);
    }
}

int live_cmd_listen(const cli_command *c, cli_global *g, int argc, char **argv) {
    listen_ctx x;
    memset(&x, 0, sizeof x);
    x.app.o.stack_depth = 5;
    const char *addr;
    int rc = cli_args(c, g, argc, argv, on_arg, &x);
    if (rc != CLI_ARGS_RUN)
        goto out;
    rc = CLI_EXIT_OK;
    addr = x.addr;
    x.app.o.resync = g->resync;
    x.app.o.max_memory = g->max_memory;
    x.app.cmd = "listen";
    if ((rc = live_check(&x.app)) != CLI_EXIT_OK)
        goto out;
    if (g->feed_mode != CLI_FEED_DEFAULT) {
        rc = cli_usage_error("listen: --feed-size applies to files only");
        goto out;
    }
    if (!x.tls_cert != !x.tls_key) {
        rc = cli_usage_error("listen: %s needs %s", x.tls_cert ? "--tls-cert" : "--tls-key",
                             x.tls_cert ? "--tls-key" : "--tls-cert");
        goto out;
    }
    if (x.tls_ca && !x.tls_cert) {
        rc = cli_usage_error("listen: --tls-client-ca needs --tls-cert and --tls-key");
        goto out;
    }
    if (x.tls_nallow && !x.tls_ca) {
        rc = cli_usage_error("listen: --tls-allow needs --tls-client-ca (it matches the "
                             "client certificate)");
        goto out;
    }
    if (x.tls_cert && !jfr_uv_tls_available()) {
        cli_error("listen: --tls-cert: %s: built without OpenSSL (-Dtls, Debian package "
                  "libssl-dev)", jfr_status_str(JFR_UNSUPPORTED));
        rc = CLI_EXIT_ERROR;
        goto out;
    }
    x.app.cmd = "listen";
    char host[128];
    int port = DEFAULT_PORT;
    snprintf(host, sizeof host, "%s", DEFAULT_HOST);
    if (addr && !live_parse_address(addr, host, sizeof host, &port, DEFAULT_PORT)) {
        rc = cli_usage_error("listen: bad address '%s' (PORT, ADDR:PORT or [ADDR]:PORT; ADDR "
                             "numeric or localhost)", addr);
        goto out;
    }
    live_signals_hold(&x.app); /* before the sinks' threads start */
    if ((rc = live_kafka_open(&x.app)) != CLI_EXIT_OK) /* --kafka: the producer */
        goto out;
    if ((rc = pyro_open(&x.app)) != CLI_EXIT_OK) /* --pyroscope: its credentials */
        goto out;
    if ((rc = live_metrics_open(&x.app)) != CLI_EXIT_OK) /* --metrics: the endpoint */
        goto out;

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
    x.app.stop_on_error = true; /* garbage closes that connection, with its reason */
    jfr_uv_listener_config cfg;
    jfr_uv_listener_config_init(&cfg);
    cfg.host = host;
    cfg.port = port;
    jfr_options opts;
    jfr_callbacks cbs;
    live_parser_config(&x.app, &opts, &cbs);
    cfg.options = &opts;
    cfg.callbacks = &cbs;
    cfg.on_conn_start = on_conn_start;
    cfg.on_conn_end = on_conn_end;
    cfg.on_end = on_end;
    cfg.user = &x;
    cfg.max_connections = x.max_conns;
    cfg.max_bytes_per_conn = x.max_bytes;
    cfg.idle_ms = x.idle_ms;
    jfr_uv_tls_config tls;
    jfr_uv_tls_config_init(&tls);
    if (x.tls_cert) {
        tls.cert_file = x.tls_cert;
        tls.key_file = x.tls_key;
        tls.client_ca_file = x.tls_ca;
        tls.allow = x.tls_allow;
        tls.allow_count = x.tls_nallow;
        cfg.tls = &tls;
    }
    char errmsg[600];
    cfg.error = errmsg;
    cfg.error_size = sizeof errmsg;
    cfg.ack_linger_ms = x.app.kafka ? LIVE_KAFKA_FLUSH_MS : ACK_LINGER_MS;
    raise_fd_limit(x.max_conns ? x.max_conns : JFR_UV_DEFAULT_MAX_CONNECTIONS);
    /* The listener writes to peers (TLS handshakes, acks): what libuv queues
     * for a peer that then resets must not kill every other JVM's stream
     * with SIGPIPE (jfrstream_uv.h). A closed stdout then shows as a write
     * error, which stops listen cleanly (Kafka flushed). */
    signal(SIGPIPE, SIG_IGN);
    int err = 0;
    jfr_status st = jfr_uv_listener_start(&loop, &cfg, &x.l, &err);
    if (st != JFR_OK && !err && errmsg[0]) { /* TLS: the file and OpenSSL's reason */
        start_error(errmsg);
        x.l = NULL;
        x.app.failed = true;
        live_finish(&x.app);
    } else if (st != JFR_OK) {
        cli_error("cannot listen on %s%s%s:%d: %s", v6 ? "[" : "", host, v6 ? "]" : "", port,
                  err ? uv_strerror(err) : jfr_status_str(st));
        x.l = NULL;
        x.app.failed = true;
        live_finish(&x.app);
    } else {
        x.l->data = &x;
        snprintf(where, sizeof where, "%s%s%s:%d", v6 ? "[" : "", host, v6 ? "]" : "",
                 jfr_uv_listener_port(x.l));
        snprintf(x.app.where, sizeof x.app.where, "%s", where);
        cli_error("listening on %s%s", where,
                  !x.tls_cert ? "" : x.tls_ca ? " (TLS, client certificates required)" : " (TLS)");
        uv_timer_init(&loop, &x.ack_timer);
        x.ack_timer.data = &x;
        uv_timer_start(&x.ack_timer, on_ack_tick, ACK_TICK_MS, ACK_TICK_MS);
        uv_unref((uv_handle_t *)&x.ack_timer); /* the listener keeps the loop */
        x.ack_timer_on = true;
    }
    live_signals_deliver(&x.app);
    uv_run(&loop, UV_RUN_DEFAULT);
    rc = live_report(&x.app);
    if (uv_loop_close(&loop) != 0) { /* nothing should be left; be safe */
        uv_run(&loop, UV_RUN_DEFAULT);
        uv_loop_close(&loop);
    }
out:
    free(x.tls_allow);
    live_free(&x.app);
    return rc;
}
