/*
 * ordered.h — a file command whose output is a sequence of events
 * (print --json), run on N threads with the output of one.
 *
 * Each of the N workers runs the whole input through a parser and writer of
 * its own (so no decoding state is shared: pools, caches, the JSON writer's
 * cache of pooled objects). The events are numbered in delivery order,
 * which is the same in every worker, and cut into batches of a fixed number
 * of events; each batch is printed by the first worker to reach it, and
 * the others skip it (an event a worker does not print costs it its place
 * in the walk, no decoding). A worker slowed by a heavy batch finds the
 * next ones taken, so uneven batches balance themselves. The batches go
 * to cli_out in order, written by whichever worker publishes the one that
 * is next (the calling thread only draws the progress line).
 * What each worker would say on stderr (cli_error, cli_data_error and the
 * parser's errors, all raised alike in every worker) is said once, by the
 * worker that owns the place where it was raised, and printed between the
 * bytes it came between: stdout and stderr are byte-identical to a serial
 * run, interleaving included.
 *
 * Memory: per worker a parser, a JSON writer (with its cache of pooled
 * objects' JSON) and at most 4 batches of output waiting to be written
 * (then it waits until they are written). A batch goes to the writer as soon
 * as its worker passes into a batch of another's, so a worker busy with
 * something else (preparing a chunk ahead, frontend.c) holds no one up.
 * Every worker walks the whole input (metadata, the records); the pool
 * index and sorted event list of each chunk are made once for all of them
 * (jfr_share, frontend.c) and copied. An output-bound run (many GB of JSON
 * from the JSON writer's cache) is bound by memory bandwidth, not by cores.
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#ifndef JFRSTREAM_CLI_ORDERED_H
#define JFRSTREAM_CLI_ORDERED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "jfrstream_conv.h"

typedef struct cli_worker cli_worker;

/* A worker's whole run, on its own thread (`arg`: args[k] of
 * cli_ordered_run); returns its exit status. */
typedef int (*cli_worker_fn)(cli_worker *w, void *arg);

/*
 * Run `fn` on `n` threads (n >= 1) and write their batches of `batch`
 * events to cli_out in order, less the first `strip` bytes of all (the
 * separator the workers write before every event, the first one's too). The progress line (progress.h) is drawn here
 * from worker 0's progress, as `name` of `total` bytes. Returns the
 * largest exit status of the workers, or CLI_EXIT_ERROR when a thread
 * could not be started or memory ran out (reported).
 */
int cli_ordered_run(unsigned n, uint64_t batch, size_t strip, cli_worker_fn fn, void **args,
                    const char *name, uint64_t total);

/* The worker's writer: bytes written here between two events belong to
 * the event before them (only the events this worker prints write). */
jfrc_out *cli_worker_out(cli_worker *w);
/* The next event in delivery order: true when this worker prints it (its
 * bytes then go to cli_worker_out), false to skip it. */
bool cli_worker_event(cli_worker *w);
/* Right after cli_worker_event returned false: the events up to the end
 * of that batch are not this worker's either. They are counted as passed
 * here; returns how many, for the caller to pass over without a callback
 * (jfr_parser_skip_events). Only for a caller that calls cli_worker_event
 * for every event the parser delivers. */
uint64_t cli_worker_pass(cli_worker *w);
/* Which worker (0 .. n-1), of how many. */
unsigned cli_worker_index(const cli_worker *w);
unsigned cli_worker_count(const cli_worker *w);

#endif
