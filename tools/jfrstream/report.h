/*
 * report.h — what the tool writes: its buffered standard output, and its
 * messages and errors on standard error (counted, for the exit status).
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#ifndef JFRSTREAM_CLI_REPORT_H
#define JFRSTREAM_CLI_REPORT_H

#include <stdint.h>

#include "jfrstream.h"
#include "jfrstream_conv.h"

#define CLI_NAME "jfrstream"

/* Exit statuses. */
enum { CLI_EXIT_OK = 0, CLI_EXIT_ERROR = 1, CLI_EXIT_USAGE = 2 };

#if defined(__GNUC__)
#define CLI_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define CLI_PRINTF(f, a)
#endif

/* The noun for n things, for every message that counts: `one` when n is 1,
 * else `many` ("%llu %s", n, cli_noun(n, "chunk", "chunks")). */
static inline const char *cli_noun(uint64_t n, const char *one, const char *many) {
    return n == 1 ? one : many;
}

/* Stdout, buffered; flushed by main before exit. */
extern jfrc_out *cli_out;

/* "jfrstream: <message>" on stderr (stdout flushed first, the progress line
 * erased). */
void cli_error(const char *fmt, ...) CLI_PRINTF(1, 2);

/* An error found by a command in the data (e.g. an event that cannot be
 * decoded): printed like cli_input_error, and the run's exit status
 * becomes 1. */
void cli_data_error(const char *fmt, ...) CLI_PRINTF(1, 2);

/* The input this thread's parser messages are about: the front end sets
 * the path (or "<stdin>") while it reads a file and NULL after. cli_on_error,
 * cli_data_error and cli_input_error put "NAME: " before their message when
 * it is set (listen and tail name their sources themselves). */
void cli_report_input(const char *name);

/* cli_error with "NAME: " of the input being read (cli_report_input) first:
 * a message about the input, naming its chunk and byte offset. */
void cli_input_error(const char *fmt, ...) CLI_PRINTF(1, 2);

/* The on_error callback every file command installs: prints the message
 * (after the input's name) and returns JFR_CB_CONTINUE so later good chunks
 * are still processed. */
int cli_on_error(jfr_parser *p, jfr_status s, const char *message, void *user);

/* Errors printed so far by cli_on_error (and the front end on its behalf)
 * and by cli_data_error: the front end compares them before and after a
 * run. cli_count_error counts one the front end printed itself. */
uint64_t cli_errors_parse(void);
/* (The counts are per thread.) */
uint64_t cli_errors_data(void);
void cli_count_error(void);

/*
 * The messages for an event that cannot be decoded, the same for every
 * command: "chunk N at byte M: TYPE: STATUS" when its value cannot be read
 * (json_error NULL), "chunk N at byte M: TYPE event could not be fully
 * decoded: JSON_ERROR" when its JSON is incomplete. A malloc'd string (NULL
 * on no memory) for the caller's reporter.
 */
/* Send this thread's messages (cli_error, cli_data_error, cli_on_error) to
 * `fn` instead of stderr, without the "jfrstream: " prefix; NULL: stderr
 * again. A parallel run's workers use it to print their messages in
 * order (ordered.h). */
typedef void (*cli_report_fn)(void *user, const char *message);
void cli_report_redirect(cli_report_fn fn, void *user);

char *cli_event_error(const jfr_event *e, jfr_status s, const char *json_error);

#endif
