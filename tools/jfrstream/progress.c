/*
 * progress.c — the progress line of the jfrstream CLI. See progress.h.
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#include "progress.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define CHECK_EVERY ((uint64_t)64 << 10)

static struct {
    bool active, shown, stdout_tty;
    const char *name;
    uint64_t total, next_check;
    double t0, last, delay;
} pg;

/* A parallel run's worker: its progress goes to this counter (ordered.c). */
static _Thread_local _Atomic uint64_t *forward;

void cli_progress_forward(_Atomic uint64_t *to) { forward = to; }

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void cli_progress_begin(const char *name, uint64_t total) {
    if (forward)
        return;
    pg.active = total > 0 && isatty(STDERR_FILENO);
    pg.shown = false;
    if (!pg.active)
        return;
    pg.stdout_tty = isatty(STDOUT_FILENO);
    pg.name = name;
    pg.total = total;
    pg.next_check = 0;
    pg.t0 = now_s();
    pg.last = 0;
    pg.delay = 1.0;
    const char *d = getenv("JFRSTREAM_PROGRESS_DELAY");
    if (d && *d) {
        char *end;
        double v = strtod(d, &end);
        if (!*end && v >= 0)
            pg.delay = v;
    }
}

void cli_progress_update(uint64_t done) {
    if (forward) {
        atomic_store_explicit(forward, done, memory_order_relaxed);
        return;
    }
    if (!pg.active || done < pg.next_check)
        return;
    pg.next_check = done + CHECK_EVERY;
    double t = now_s(), dt = t - pg.t0;
    if (dt < pg.delay || (pg.last > 0 && t - pg.last < 0.25))
        return;
    pg.last = t;
    pg.shown = true;
    unsigned pct = (unsigned)(done >= pg.total ? 100 : done * 100 / pg.total);
    double mbs = dt > 0 ? (double)done / 1e6 / dt : 0;
    fprintf(stderr, "\r%s: %3u%% %.0f MB/s\033[K", pg.name, pct, mbs);
    fflush(stderr);
}

void cli_progress_clear(void) {
    if (forward)
        return;
    if (!pg.shown)
        return;
    fputs("\r\033[K", stderr);
    fflush(stderr);
    pg.shown = false;
}

void cli_progress_stdout(void) {
    if (!pg.active)
        return;
    cli_progress_clear();
    if (pg.stdout_tty)
        pg.active = false;
}

void cli_progress_end(void) {
    if (forward)
        return;
    cli_progress_clear();
    pg.active = false;
}
