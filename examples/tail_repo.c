/*
 * tail_repo.c — follow a JVM's disk repository as it is written and print
 * one line per event: "TYPE START_NANOS".
 *
 *   tail_repo PATH [IDLE_MS]
 *
 * PATH is the folder of chunk files (-XX:FlightRecorderOptions:repository=
 * ... or the JVM's default under /tmp), its parent (the newest JVM's folder
 * is followed), or one chunk file. The tail ends at the JVM's final chunk,
 * after IDLE_MS milliseconds without new bytes (when given), or on SIGINT.
 * Build it against an installed jfrstream with
 *
 *   cc tail_repo.c $(pkg-config --cflags --libs jfrstream-uv) -o tail_repo
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#define _POSIX_C_SOURCE 200809L /* uv.h uses POSIX types (pthread_rwlock_t), under -std=c11 */

#include <jfrstream_uv.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

/* Every event of every chunk, as soon as its flush segment is complete. */
static int on_event(jfr_parser *p, const jfr_event *e, void *user) {
    (void)p;
    (void)user; /* the jfr_uv_tail* */
    printf("%s %lld\n", e->type->name, (long long)e->start_nanos);
    return JFR_CB_CONTINUE;
}

static int failed;

static void on_end(jfr_uv_tail *t, jfr_uv_tail_end why, jfr_status status,
                   const char *message, void *user) {
    uv_signal_t *sigint = user;
    (void)t;
    (void)status;
    fflush(stdout);
    static const char *const reason[] = {"?", "final chunk", "idle", "error", "stopped"};
    fprintf(stderr, "tail_repo: ended (%s)%s%s\n", reason[why <= 4 ? why : 0],
            message && *message ? ": " : "", message ? message : "");
    failed = why == JFR_UV_TAIL_ERROR;
    uv_close((uv_handle_t *)sigint, NULL); /* the loop can end now */
}

static void on_sigint(uv_signal_t *s, int signum) {
    (void)signum;
    jfr_uv_tail_stop(s->data); /* on_end follows */
}

int main(int argc, char **argv) {
    if (argc < 2 || argc > 3) {
        fprintf(stderr, "usage: tail_repo PATH [IDLE_MS]\n");
        return 2;
    }
    uv_loop_t *loop = uv_default_loop();
    uv_signal_t sigint;
    /* the size member set, the rest zero: defaults (poll every 50 ms) */
    jfr_uv_tail_config cfg = JFR_UV_TAIL_CONFIG_INIT;
    jfr_callbacks cb = {.size = sizeof cb, .on_event = on_event};
    cfg.path = argv[1];
    cfg.idle_ms = argc == 3 ? strtoull(argv[2], NULL, 10) : 0;
    cfg.callbacks = &cb; /* copied by jfr_uv_tail_start */
    cfg.on_end = on_end;
    cfg.user = &sigint;
    jfr_uv_tail *t;
    int err = 0;
    jfr_status st = jfr_uv_tail_start(loop, &cfg, &t, &err);
    if (st != JFR_OK) {
        fprintf(stderr, "tail_repo: %s: %s\n", argv[1],
                st == JFR_IO ? uv_strerror(err) : jfr_status_str(st));
        return 1;
    }
    uv_signal_init(loop, &sigint);
    sigint.data = t;
    uv_signal_start(&sigint, on_sigint, SIGINT);
    uv_run(loop, UV_RUN_DEFAULT);
    uv_loop_close(loop);
    return failed;
}
