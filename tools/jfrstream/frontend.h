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
 * reported (input, parse or finish). With cli_global.threads N > 1 and a
 * mapped file, N + 1 whole chunks are fed per call and the parser prepares
 * all but the first on its helper threads (jfr_parser_set_threads: the
 * callbacks and the output are those of one thread).
 */
int cli_parse(const cli_global *g, const char *path, const jfr_options *opts,
              const jfr_callbacks *cb, void *user, cli_setup_fn setup);

/* Without --jobs, files smaller than this are read on one thread. */
#define CLI_JOBS_MIN_SIZE ((uint64_t)4 << 20)

/*
 * How many threads read `path`: --jobs, else the cores (at most 8) for a
 * plain recording file of CLI_JOBS_MIN_SIZE bytes or more without
 * --max-memory; 1 for standard input, compressed input and --feed-size
 * (they are read once, as a stream). *size: the file's size when plain.
 */
unsigned cli_jobs(const cli_global *g, const char *path, uint64_t *size);

/*
 * A regular file mapped once for the N workers of a parallel run (ordered.h),
 * each of which runs cli_parse on it with cli_global.shared set: each chunk's
 * pages are mapped in by the first worker to reach it and released once
 * every worker is past them, so the page-table work is done once, not N
 * times, and resident memory stays near the distance between the first and
 * the last worker. Each chunk is also prepared once for all of them (a
 * jfr_share: its pool index and event list, copied by each worker's
 * parser), when `share`: a worker about to feed a chunk prepares it, or
 * the next one when another worker has it (the share holds up to
 * workers + 2 chunks' pool indexes and event lists, outside the parsers'
 * max_memory). JFRSTREAM_SHARE_STATS=1 says on stderr, at
 * the end, how many were prepared and copied (a test aid). NULL when the
 * file cannot be opened or mapped (the workers then map it each on their
 * own). Not for standard input.
 */
cli_shared_file *cli_shared_file_open(const char *path, unsigned workers, bool share);
void cli_shared_file_close(cli_shared_file *sf);

#endif
