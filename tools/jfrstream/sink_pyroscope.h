/*
 * sink_pyroscope.h — `listen`/`tail --pyroscope URL`: the sink to which
 * each source's jfrs_fanout pushes, per window and per profile kind
 * (--event), a pprof profile with Pyroscope's sample types; the window
 * timer. The hooks live.c calls; they do nothing without --pyroscope.
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#ifndef JFRSTREAM_CLI_SINK_PYROSCOPE_H
#define JFRSTREAM_CLI_SINK_PYROSCOPE_H

#include <stdbool.h>

#include "live.h"

/* --pyroscope URL, --pyroscope-app NAME and the authentication and TLS
 * options (--pyroscope-basic-auth, -bearer, -tenant, -header,
 * -header-file, -ca, -cert, -key): a CLI exit status (0: taken). */
int pyro_option(live_opts *o, const cli_arg *a);
/* After the options: read the secret files (or $JFRSTREAM_PYROSCOPE_BASIC_AUTH,
 * $JFRSTREAM_PYROSCOPE_BEARER) and check the options together. A CLI exit
 * status (a usage error names the option and file, never a secret). */
int pyro_open(live_app *app);
/* With --pyroscope, --event's words must have Pyroscope kinds: a CLI exit
 * status (a usage error otherwise). */
int pyro_check_event(const live_opts *o, const char *cmd);
/* From live_init: start the sink and the window timer. False (message
 * printed; the run goes on without the sink) when it cannot start. */
bool pyro_init(live_app *app);
/* The sink for jfrs_fanout (NULL without --pyroscope). */
jfrs_pyroscope *pyro_sink(const live_app *app);
/* From live_finish: stop the timer. */
void pyro_finish(live_app *app);
/* From live_report: drain (bounded) and print the counts. */
void pyro_report(live_app *app);
void pyro_free(live_app *app);
/* The sink's totals (--metrics); false without --pyroscope. */
bool pyro_stats(const live_app *app, jfrs_pyroscope_stats *out);

#endif
