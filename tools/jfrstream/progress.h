/*
 * progress.h — a progress line on stderr for long runs over files.
 *
 * "NAME: 42% 310 MB/s", drawn only when stderr is a terminal and the input
 * size is known, first after 1 s (JFRSTREAM_PROGRESS_DELAY=SECONDS changes
 * that, for tests), redrawn at most 4 times a second, erased at the end and
 * before any message. When stdout is a terminal too, the line is dropped for
 * good once output is written there (the two would garble each other).
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#ifndef JFRSTREAM_CLI_PROGRESS_H
#define JFRSTREAM_CLI_PROGRESS_H

#include <stdatomic.h>
#include <stdint.h>

/* Start a run over `total` bytes (0: unknown, nothing is ever drawn). */
void cli_progress_begin(const char *name, uint64_t total);
/* `done` of `total` bytes are through. Cheap when called often: the clock is
 * read only every 64 KiB of progress. */
void cli_progress_update(uint64_t done);
/* Erase the line (it comes back at the next update). */
void cli_progress_clear(void);
/* Stdout is about to be written: erase, and stop for good if it is a tty. */
void cli_progress_stdout(void);
/* Erase the line and stop. */
void cli_progress_end(void);
/* This thread (a parallel run's worker) draws nothing: its updates are
 * stored in *to, for the thread that draws; NULL: draw again. */
void cli_progress_forward(_Atomic uint64_t *to);

#endif
