/*
 * frontend.h — the file front end of summary, print, metadata and the
 * profile commands: open a file or standard input, recognise its format
 * (plain, or compressed: input.c), feed a parser as the global options say,
 * report what went wrong.
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#ifndef JFRSTREAM_CLI_FRONTEND_H
#define JFRSTREAM_CLI_FRONTEND_H

#include "args.h"
#include "jfrstream.h"

/* Optional hook run after jfr_parser_new (e.g. to subscribe with
 * jfr_parser_on); non-zero status aborts. */
typedef jfr_status (*cli_setup_fn)(jfr_parser *p, void *user);

/*
 * Parse `path` ("-" = stdin): create a parser with opts/cb/user, feed it the
 * input as the global options say, finish and free it. cb->on_error should
 * be cli_on_error. Returns CLI_EXIT_OK, or CLI_EXIT_ERROR when any error was
 * reported (input, parse or finish).
 */
int cli_parse(const cli_global *g, const char *path, const jfr_options *opts,
              const jfr_callbacks *cb, void *user, cli_setup_fn setup);

#endif
