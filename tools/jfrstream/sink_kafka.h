/*
 * sink_kafka.h — `listen` and `tail` with --kafka (sink_kafka.c): the
 * options, the producer (jfrstream_sink.h, "Kafka") on the loop, whose
 * senders the sources' jfrs_fanout makes; back-pressure (jfrs_fanout_poll
 * from a 50 ms timer, the producer's event fd and after every loop
 * iteration resumes a paused source), and the final flush and report.
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#ifndef JFRSTREAM_CLI_SINK_KAFKA_H
#define JFRSTREAM_CLI_SINK_KAFKA_H

#include "live.h"

/* How long the end of a run waits for the brokers (ms), in all: what
 * finishing paused sources waits at a stop, then the final flush. */
#define LIVE_KAFKA_FLUSH_MS 10000

/* --kafka, --kafka-topic, --kafka-format, --kafka-option: CLI exit status. */
int live_kafka_option(live_opts *o, const cli_arg *a);
/* After the options: create the producer when --kafka was given. A bad
 * option (librdkafka's message) or a build without librdkafka is a usage
 * error: returns its exit status (0: fine). */
int live_kafka_open(live_app *app);
/* From live_init / live_finish: the poll timer and check handle. */
void live_kafka_start(live_app *app);
/* Stopping: resume the sources paused for room (they finish their input). */
void live_kafka_stop(live_app *app);
void live_kafka_close(live_app *app);
/* The producer for jfrs_fanout (NULL without --kafka). */
jfrs_kafka *live_kafka_producer(const live_app *app);
/* jfrs_fanout's on_resume: resume the source's connection or tail. */
void live_kafka_resume(jfrs_fanout_src *fs, void *src_user, void *user);
/* jfrs_fanout_src_event paused the source: JFR_CB_PAUSE, or when stopping
 * (the input must finish) a wait for room within the stop's budget and
 * JFR_CB_CONTINUE. */
int live_kafka_paused(live_src *s);
/* After uv_run: flush (bounded), the per-source and total lines, free the
 * producer; sets app->failed when something was not delivered. */
void live_kafka_finish(live_app *app);
/* The producer's totals (--metrics); false without --kafka. */
bool live_kafka_stats(const live_app *app, jfrs_kafka_stats *out);

#endif
