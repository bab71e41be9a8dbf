/*
 * socket_callback.c — accept JFR byte streams on a TCP socket and print the
 * top frame of every jdk.ExecutionSample, through a per-type callback.
 *
 *   socket_callback [--once] [PORT]
 *
 * Listens on 127.0.0.1:PORT (0 or absent: any free port) and prints
 * "listening on 127.0.0.1:PORT" on stderr. Send it a recording with, e.g.,
 * `nc 127.0.0.1 PORT < app.jfr`, or point tools/jfr-pump at it. Each sample
 * prints "class.method" (class names in the JVM's internal form,
 * java/lang/Thread). --once: exit when the first connection ends; otherwise
 * run until SIGINT. Build it against an installed jfrstream with
 *
 *   cc socket_callback.c $(pkg-config --cflags --libs jfrstream-uv) -o socket_callback
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#define _POSIX_C_SOURCE 200809L /* uv.h uses POSIX types (pthread_rwlock_t), under -std=c11 */

#include <jfrstream_uv.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct app {
    jfr_uv_listener *listener;
    uv_signal_t sigint;
    int once;
    int failed;
} app;

/* Called only for jdk.ExecutionSample events: the parser resolves the name
 * to the chunk's type id once, and skips every other event unread. */
static int on_sample(jfr_parser *p, const jfr_event *e, void *user) {
    jfr_stack st;
    jfr_frame top;
    (void)p;
    (void)user; /* the jfr_uv_conn*, as given to jfr_parser_on below */
    if (jfr_event_stack(e, &st) == JFR_OK && st.present && st.nframes > 0 &&
        jfr_stack_frame(&st, 0, &top) == JFR_OK)
        printf("%.*s.%.*s\n", (int)top.class_name_len, top.class_name,
               (int)top.method_name_len, top.method_name);
    else
        printf("(no stack)\n");
    return JFR_CB_CONTINUE;
}

/* A new peer: its own parser exists now; subscribe to the type there. */
static void on_conn_start(jfr_uv_conn *c, void *user) {
    (void)user;
    fprintf(stderr, "socket_callback: %s connected\n", jfr_uv_conn_peer(c));
    jfr_parser_on(jfr_uv_conn_parser(c), "jdk.ExecutionSample", on_sample, c);
}

static void stop(app *a) {
    if (a->listener) {
        jfr_uv_listener_stop(a->listener); /* every connection ends */
        a->listener = NULL;
        uv_close((uv_handle_t *)&a->sigint, NULL);
    }
}

/* The peer is gone (or sent bad data): status and message say which. */
static void on_conn_end(jfr_uv_conn *c, jfr_status status, const char *message, void *user) {
    app *a = user;
    fflush(stdout);
    fprintf(stderr, "socket_callback: %s (%llu bytes)\n",
            message && *message ? message : jfr_status_str(status),
            (unsigned long long)jfr_uv_conn_bytes(c));
    if (status != JFR_OK)
        a->failed = 1;
    if (a->once)
        stop(a);
}

static void on_sigint(uv_signal_t *s, int signum) {
    (void)signum;
    stop(s->data);
}

int main(int argc, char **argv) {
    app a = {0};
    int port = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--once") == 0)
            a.once = 1;
        else
            port = atoi(argv[i]);
    }
    uv_loop_t *loop = uv_default_loop();
    /* the size member set, the rest zero: defaults (127.0.0.1, 1024 peers) */
    jfr_uv_listener_config cfg = JFR_UV_LISTENER_CONFIG_INIT;
    jfr_options opts = JFR_OPTIONS_INIT;
    opts.ordered = true; /* each chunk's events in end-time order */
    cfg.port = port;
    cfg.options = &opts; /* copied by jfr_uv_listener_start */
    cfg.on_conn_start = on_conn_start;
    cfg.on_conn_end = on_conn_end;
    cfg.user = &a;
    int err = 0;
    jfr_status st = jfr_uv_listener_start(loop, &cfg, &a.listener, &err);
    if (st != JFR_OK) {
        fprintf(stderr, "socket_callback: cannot listen: %s\n",
                st == JFR_IO ? uv_strerror(err) : jfr_status_str(st));
        return 1;
    }
    fprintf(stderr, "listening on 127.0.0.1:%d\n", jfr_uv_listener_port(a.listener));
    uv_signal_init(loop, &a.sigint);
    a.sigint.data = &a;
    uv_signal_start(&a.sigint, on_sigint, SIGINT);
    uv_run(loop, UV_RUN_DEFAULT);
    uv_loop_close(loop);
    return a.failed;
}
