/*
 * report.c — the tool's standard output buffer, its messages on standard
 * error and the count of the errors reported (see report.h).
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#include "report.h"
#include "progress.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

jfrc_out *cli_out;

/* Errors reported through cli_on_error / cli_data_error, per thread: each
 * worker of a parallel run (ordered.c) counts its own parser's. */
static _Thread_local uint64_t cb_errors;
static _Thread_local uint64_t data_errors;

/* Where this thread's messages go instead of stderr (ordered.c). */
static _Thread_local cli_report_fn redirect_fn;
static _Thread_local void *redirect_user;

void cli_report_redirect(cli_report_fn fn, void *user) {
    redirect_fn = fn;
    redirect_user = user;
}

/* The input being read by this thread's parser (a parallel run's workers
 * each read it), for the messages about it. */
static _Thread_local const char *input_name;

void cli_report_input(const char *name) { input_name = name; }

/* fmt printed into small[SMALL], or into a malloc'd string when longer
 * (free it if it is not small); "out of memory" when there is none. */
#define SMALL 256
static char oom[] = "out of memory";
static char *vformat(char *small, const char *fmt, va_list ap) {
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(small, SMALL, fmt, ap);
    char *m = small;
    if (n < 0)
        small[0] = '\0';
    else if (n >= SMALL && (m = malloc((size_t)n + 1)) != NULL)
        vsnprintf(m, (size_t)n + 1, fmt, ap2);
    va_end(ap2);
    return m ? m : oom;
}

static void vformat_free(char *m, const char *small) {
    if (m != small && m != oom)
        free(m);
}

static void say(const char *fmt, va_list ap) {
    if (redirect_fn) {
        char small[SMALL], *m = vformat(small, fmt, ap);
        redirect_fn(redirect_user, m);
        vformat_free(m, small);
        return;
    }
    /* keep stdout and stderr roughly in order when both go to a terminal */
    jfrc_out_flush(cli_out);
    cli_progress_clear();
    fputs(CLI_NAME ": ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
}

void cli_error(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    say(fmt, ap);
    va_end(ap);
}

/* say() with "NAME: " first when an input is being read. */
static void say_input(const char *fmt, va_list ap) {
    if (!input_name) {
        say(fmt, ap);
        return;
    }
    char small[SMALL], *m = vformat(small, fmt, ap);
    cli_error("%s: %s", input_name, m);
    vformat_free(m, small);
}

void cli_input_error(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    say_input(fmt, ap);
    va_end(ap);
}

void cli_data_error(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    say_input(fmt, ap);
    va_end(ap);
    data_errors++;
}

int cli_on_error(jfr_parser *p, jfr_status s, const char *message, void *user) {
    (void)p;
    (void)user;
    cb_errors++;
    cli_input_error("%s", message && *message ? message : jfr_status_str(s));
    return JFR_CB_CONTINUE;
}

uint64_t cli_errors_parse(void) { return cb_errors; }
uint64_t cli_errors_data(void) { return data_errors; }
void cli_count_error(void) { cb_errors++; }

char *cli_event_error(const jfr_event *e, jfr_status s, const char *json_error) {
    unsigned long long chunk = (unsigned long long)e->chunk_index;
    unsigned long long at = (unsigned long long)e->offset;
    const char *fmt = json_error ? "chunk %llu at byte %llu: %s event could not be fully decoded: %s"
                                 : "chunk %llu at byte %llu: %s: %s";
    const char *why = json_error ? json_error : jfr_status_str(s);
    int n = snprintf(NULL, 0, fmt, chunk, at, e->type->name, why);
    char *m = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (m)
        snprintf(m, (size_t)n + 1, fmt, chunk, at, e->type->name, why);
    return m;
}
