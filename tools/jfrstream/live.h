/*
 * live.h — what `listen` and `tail` share: options (--events, --json,
 * --summary, --stack-depth), one "source" per connection or tail with its
 * parser callbacks, the aggregated per-type table, the once-a-second rate
 * view, signals and the end-of-run report.
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#ifndef JFRSTREAM_CLI_LIVE_H
#define JFRSTREAM_CLI_LIVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <uv.h>

#include "args.h"
#include "filter.h"
#include "report.h"
#include "jfrstream_conv.h"
#include "jfrstream_sink.h"

#define LIVE_MAX_LABELS 64

typedef struct live_opts {
    cli_filter filter;
    bool json;            /* one event per line on stdout */
    bool summary;         /* the summary table at the end */
    uint32_t stack_depth; /* --stack-depth (5) */
    bool resync;          /* the global --resync */
    uint64_t max_memory;  /* the global --max-memory */
    /* profiles: --collapsed/--flamegraph/--pprof FILE, --event E,
     * --profile-threads, --window SECONDS (0: one profile at the end) */
    const char *prof_collapsed, *prof_flame, *prof_pprof;
    const char *prof_event;
    bool prof_threads;
    uint64_t window_ms;
    /* --pyroscope URL, --pyroscope-app NAME (sink_pyroscope.c); its
     * authentication and TLS: --pyroscope-basic-auth FILE, -bearer FILE,
     * -tenant ID, -header 'NAME: VALUE', -header-file NAME=FILE, -ca FILE,
     * -cert FILE, -key FILE (read by pyro_open) */
    const char *pyroscope_url, *pyroscope_app;
    const char *pyroscope_basic_file, *pyroscope_bearer_file, *pyroscope_tenant;
    const char *pyroscope_headers[LIVE_MAX_LABELS];
    size_t npyroscope_headers;
    const char *pyroscope_header_files[LIVE_MAX_LABELS];
    size_t npyroscope_header_files;
    const char *pyroscope_ca, *pyroscope_cert, *pyroscope_key;
    /* --label KEY=VALUE, in the order given */
    const char *labels[LIVE_MAX_LABELS];
    size_t nlabels;
    /* --kafka BROKERS, --kafka-topic, --kafka-format (0 json, 1 otlp-json),
     * --kafka-option KEY=VALUE (sink_kafka.c) */
    const char *kafka, *kafka_topic;
    int kafka_format;
    const char *kafka_options[LIVE_MAX_LABELS];
    size_t nkafka_options;
    /* --metrics ADDR:PORT, --metrics-ttl, --metrics-max-sources,
     * --metrics-max-series (sink_metrics.c; 0: the library's defaults) */
    const char *metrics;
    uint64_t metrics_ttl_ms;
    uint32_t metrics_max_sources;
    uint64_t metrics_max_series;
    /* --metrics-tls-cert FILE, --metrics-tls-key FILE, --metrics-basic-auth
     * FILE (read by live_metrics_open) */
    const char *metrics_tls_cert, *metrics_tls_key, *metrics_basic_auth;
    /* --view NAME (in the order given), --view-window, --view-every (0:
     * their defaults), --view-by source */
    const char *views[LIVE_MAX_LABELS];
    size_t nviews;
    uint64_t view_window_ms, view_every_ms;
    bool view_by_source;
} live_opts;

typedef struct live_app live_app;
typedef struct live_metrics live_metrics;

/* One input: a connection or a tail. */
typedef struct live_src {
    live_app *app;
    char name[160];      /* peer address or tailed path, for messages */
    jfrs_source *src;    /* who is sending: its labels (jfrstream_sink.h) */
    /* its outputs: --json lines, --kafka, --metrics (jfrs_fanout) */
    jfrs_fanout_src *fs;
    cli_type_set want;   /* per type index: an event type --events selects */
    uint32_t *rows;      /* per type index: row in app->stats */
    size_t ntypes;       /* entries of rows */
    uint32_t row0, row1; /* rows of records 0 and 1 */
    uint64_t chunks, events;
    /* input bytes that were already there when the run began (tail: the
     * chunk files on disk): their events are "replayed", not counted in
     * the view's rates */
    uint64_t replay_bytes;
    char lasterr[512];   /* last message printed from on_error */
    bool failed;         /* an error that makes the exit status 1 */
    /* listen's connection or the tail (jfr_uv_conn*, jfr_uv_tail*): resumed
     * when a source paused for a full Kafka queue has room again */
    void *conn, *tail;
    /* listen: its place on the list of connections acks are reported for */
    struct live_src *ack_next, *ack_prev;
} live_src;

struct live_app {
    uv_loop_t *loop;
    live_opts o;
    const char *cmd;     /* "listen" or "tail" */
    char where[200];     /* the address or path, for the view */
    jfrc_summary *stats; /* per type name, over all inputs */
    /* per row of stats: the events counted (--events), of those replayed */
    uint64_t *row_events, *row_replayed;
    size_t caprows;      /* rows covered by row_events and row_replayed */
    bool view;           /* the once-a-second rate view */
    bool tty;            /* stdout is a terminal: redraw the view */
    bool stopping;       /* shutdown requested: truncations are ours */
    bool failed;         /* exit status 1 */
    bool finished;       /* live_finish ran */
    /* damaged data ends the source (listen: a peer's byte stream cannot be
     * trusted past it) instead of skipping the chunk (tail: the next chunk
     * file is sound) */
    bool stop_on_error;
    unsigned conns;      /* open inputs */
    uint64_t conns_total;
    uint64_t conns_refused; /* listen: refused connections (limit, memory, TLS) */
    uint64_t tls_refused;   /* listen: of those, by TLS (jfr_uv_tls_config) */
    uint64_t files;      /* tail: chunk files begun (the view shows files, not conns) */
    uint64_t events_total;
    uint64_t replayed_total; /* of those, replayed (live_src.replay_bytes) */
    uint64_t start_ms;
    /* the command's shutdown (close the listener, stop the tail) */
    void (*stop)(live_app *app);
    /* optional: called at every chunk begin of a source */
    void (*chunk_hook)(live_app *app, live_src *s);
    uv_signal_t sigint, sigterm;
    sigset_t sigmask; /* the mask before live_signals_hold */
    uv_timer_t view_timer;
    uv_prepare_t flusher;
    uint64_t ticks;
    uint64_t *snap;      /* arrived (not replayed) events of each row at the last ticks */
    size_t capsnap;      /* rows covered by snap */
    uint64_t tsnap[8];   /* arrived events of all rows at the last ticks */
    uint64_t tms[8];     /* uv_now() at the last ticks */
    jfrc_profile *prof;  /* the profile being collected, or NULL */
    uint64_t prof_windows; /* profile windows written */
    uv_timer_t window_timer;
    struct pyro_app *pyro; /* --pyroscope (sink_pyroscope.c), or NULL */
    struct live_kafka *kafka; /* --kafka (sink_kafka.c), or NULL */
    live_metrics *metrics;    /* --metrics (sink_metrics.c), or NULL */
    jfrs_fanout *fan;         /* each source's --json, --kafka, --metrics */
    jfrs_views *views;        /* --view: every source's copy, or NULL */
    uv_timer_t views_timer;
    uint64_t frames;          /* --view frames printed */
    char views_err[400];      /* the last copy error reported */
};

/* An option shared by listen and tail (the live_opts list of commands.c):
 * returns a CLI exit status (0: taken). */
int live_option(live_opts *o, const cli_arg *a);
/* A number of seconds (fractions allowed) -> ms; false when invalid. */
bool live_parse_seconds(const char *s, uint64_t *ms);
/* PORT | ADDR:PORT | [V6ADDR]:PORT | [V6ADDR] | ADDR -> host ("localhost"
 * and PORT alone: 127.0.0.1), port (default_port when not given); false
 * when malformed: a port past 65535, an ADDR that is not a numeric IPv4 or
 * IPv6 address (nor localhost). */
bool live_parse_address(const char *arg, char *host, size_t hostlen, int *port,
                        int default_port);

#define LIVE_VIEW_WINDOW_MS 600000 /* --view-window's default, as JFR.view's maxage */

/* The live options' combinations, after parsing: CLI_EXIT_OK or a usage
 * error (printed; exit 2). */
int live_check(const live_app *app);
/* Set up the app on the loop: signals, flusher, view timer. */
bool live_init(live_app *app, uv_loop_t *loop, const char *cmd, const char *where);
/* Before the first thread is started (the sinks' open): SIGINT/SIGTERM
 * blocked, so that every thread started after inherits the block. */
void live_signals_hold(live_app *app);
/* After the last thread is started, before the loop runs: SIGINT/SIGTERM,
 * blocked by live_signals_hold, reach the loop's thread only. */
void live_signals_deliver(live_app *app);
/* Parser options and callbacks for every source. The callbacks' user
 * pointer must point at a struct whose first member is `void *data` holding
 * the live_src (jfr_uv_conn, jfr_uv_tail). */
void live_parser_config(const live_app *app, jfr_options *opts, jfr_callbacks *cb);

/* Per source. */
/* origin_key: "peer" (listen) or "path" (tail), the label naming `name`. */
live_src *live_src_new(live_app *app, const char *name, const char *origin_key);
/* Subscribe the literal --events names (with --json), after the parser is
 * created and before it is fed. */
jfr_status live_src_subscribe(live_src *s, jfr_parser *p);
/* The source ended: status/message from the front end (message names the
 * source); `ours` when our own shutdown ended it. Prints the closing lines
 * and frees the source. */
void live_src_end(live_src *s, jfr_status status, const char *message, bool ours,
                  uint64_t bytes, const char *how);
/* "jfrstream: <source>: <message>" on stderr. */
void live_src_msg(const live_src *s, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* "jfrstream: message" on stderr, for a connection without a source (one
 * refused over a limit); a "SOURCE: " prefix is kept for the view. */
void live_msg(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;

/* Ask for shutdown (signals, --once, ...): calls app->stop once. */
void live_request_stop(live_app *app);
/* Everything ended: close our handles (uv_run then returns). */
void live_finish(live_app *app);
/* After uv_run: the summary (when asked), flush; returns the exit status. */
int live_report(live_app *app);
void live_free(live_app *app);

#endif
