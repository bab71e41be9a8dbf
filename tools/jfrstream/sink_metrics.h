/*
 * sink_metrics.h — `listen` and `tail` with --metrics (sink_metrics.c): the
 * options, the registry (jfrstream_sink.h, "metrics") fed by every source's
 * jfrs_fanout, and its /metrics endpoint (jfrs_metrics_server), whose
 * scrapes wake the loop through a uv_async to be rendered there.
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#ifndef JFRSTREAM_CLI_SINK_METRICS_H
#define JFRSTREAM_CLI_SINK_METRICS_H

#include "live.h"

#define LIVE_METRICS_DEFAULT_PORT 9464 /* OpenTelemetry's Prometheus exporter's */

/* --metrics, --metrics-ttl, --metrics-max-sources, --metrics-max-series:
 * CLI exit status. */
int live_metrics_option(live_opts *o, const cli_arg *a);
/* After the options: the registry and the HTTP server when --metrics was
 * given; prints "metrics on http://ADDR:PORT/metrics". Returns the exit
 * status (0: fine; an address that cannot be bound: 1). */
int live_metrics_open(live_app *app);
/* From live_init / live_finish: scrapes are served from the loop between
 * these (before: 503); close stops the server. */
void live_metrics_start(live_app *app);
void live_metrics_close(live_app *app);
/* The registry for jfrs_fanout (NULL without --metrics). */
jfrs_metrics *live_metrics_registry(const live_app *app);
void live_metrics_free(live_app *app);

#endif
