/*
 * sink_metrics.h — `listen` and `tail` with --metrics (sink_metrics.c): the
 * options, the registry (jfrstream_sink.h, "metrics") fed by every source,
 * and its /metrics endpoint, whose scrapes are rendered on the loop's
 * thread (uv_async) while the HTTP server's thread waits.
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
/* Per source (live_src_new / _subscribe / _end). */
void live_metrics_src_new(live_src *s);
jfr_status live_metrics_src_subscribe(live_src *s, jfr_parser *p);
void live_metrics_src_end(live_src *s);
void live_metrics_free(live_app *app);

#endif
