/*
 * jfrstream_sink.h — the ingestion edge: who is sending (a source's labels,
 * read from its own recording), events to Kafka (librdkafka) and profiles
 * to Pyroscope (libcurl). `jfrstream listen` and `tail` are built on it;
 * libjfrstream_sink, `pkg-config jfrstream-sink`.
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 *
 * The Kafka and Pyroscope parts are optional at build time (meson features
 * -Dkafka and -Dcurl). Without them this header is the same and the library
 * links; jfrs_kafka_available() / jfrs_pyroscope_available() return false
 * and their _new functions return JFR_UNSUPPORTED_BUILD... see each section.
 *
 * Conventions (as jfrstream_conv.h): public names start with jfrs_; objects
 * are opaque, *_free accepts NULL; functions returning jfr_status return
 * JFR_OK, JFR_NOMEM, JFR_INVALID_ARG (a value they refuse), or what their
 * comment says; pointers handed in are borrowed for the call; strings
 * returned are owned by the object and valid until it changes. Unless a
 * section says otherwise, an object is used from one thread at a time (the
 * loop's thread).
 */
#ifndef JFRSTREAM_SINK_H
#define JFRSTREAM_SINK_H

#include "jfrstream.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifndef JFRS_API
#define JFRS_API JFR_API
#endif

/* ------------------------------------------------------------------ sources */

/*
 * A source is one input: a connection (listen) or a tailed repository. Its
 * labels come from three places, without any change to the byte stream:
 *
 *   origin     "peer" (listen: "127.0.0.1:54321") or "path" (tail: the
 *              repository), given to jfrs_source_new;
 *   recording  jdk.JVMInformation (JDK 9/10: com.oracle.jdk.JVMInformation),
 *              which every JDK writes at the start of each chunk:
 *                pid          its pid
 *                jvm_name     jvmName      ("OpenJDK 64-Bit Server VM")
 *                jvm_version  jvmVersion   (the full version line)
 *                main_class   the first word of javaArguments (the main
 *                             class or -jar file, as sun.java.command)
 *                jvm_start    jvmStartTime, milliseconds since the epoch
 *              jdk.InitialSystemProperty, when the JVM sets them:
 *                service      service.name, else otel.service.name
 *   user       jfrs_source_set (the CLI's --label KEY=VALUE); a user label
 *              overrides a derived one of the same key.
 *
 * The source id, label "source", names one JVM run: "HOST:PID:JVM_START"
 * once jdk.JVMInformation was seen (HOST: the peer's address without its
 * port, or the local host name for a path), before that the origin. It is
 * what the Kafka sink uses as message key.
 */
typedef struct jfrs_source jfrs_source;

/* origin_key: "peer" or "path" (any label key is accepted); origin: its
 * value; host: the HOST of the id (NULL: taken from a peer origin
 * "ADDR:PORT" / "[V6]:PORT", else "localhost"). NULL when out of memory. */
JFRS_API jfrs_source *jfrs_source_new(const char *origin_key, const char *origin,
                                      const char *host);
JFRS_API void jfrs_source_free(jfrs_source *s);
/* A user label (key: [A-Za-z_][A-Za-z0-9_]*, at most 64 bytes; value at
 * most 1024 bytes). JFR_INVALID_ARG for a bad key or value. */
JFRS_API jfr_status jfrs_source_set(jfrs_source *s, const char *key, const char *value);
/* Subscribe the identity events on a parser (before it is fed, or from
 * on_chunk_begin / on_metadata); the callbacks return JFR_CB_CONTINUE. */
JFRS_API jfr_status jfrs_source_subscribe(jfrs_source *s, jfr_parser *p);
/* The same, for a caller that dispatches events itself: any event may be
 * passed, those of other types are ignored (one pointer compare each). */
JFRS_API void jfrs_source_event(jfrs_source *s, const jfr_event *e);
/* True once jdk.JVMInformation was seen. */
JFRS_API bool jfrs_source_identified(const jfrs_source *s);
/* Counts every change of the labels (starts at 1): cache what you derive
 * from them and compare. */
JFRS_API uint64_t jfrs_source_generation(const jfrs_source *s);
JFRS_API const char *jfrs_source_id(const jfrs_source *s);
/* The labels in a stable order: source, the origin, the recording's (in the
 * order above, those known), then the user's in the order set. */
JFRS_API size_t jfrs_source_nlabels(const jfrs_source *s);
JFRS_API const char *jfrs_source_key(const jfrs_source *s, size_t i);
JFRS_API const char *jfrs_source_value(const jfrs_source *s, size_t i);
/* The value of a label, or NULL. */
JFRS_API const char *jfrs_source_get(const jfrs_source *s, const char *key);
/* The labels as one compact JSON object, {"source":"...",...} (cached until
 * the next change); NULL when out of memory. */
JFRS_API const char *jfrs_source_json(const jfrs_source *s);

/* ---------------------------------------------------------------- Pyroscope */

/*
 * Profiles to Pyroscope's HTTP ingest API, through libcurl (built when
 * libcurl is found, -Dcurl). Each window's profile of one source and one
 * kind (jfrstream_conv.h: jfrc_pyroscope_kinds, jfrc_profile_write_pprof_with)
 * is one upload:
 *
 *   POST URL/ingest?name=NAME&from=FROM&until=UNTIL&format=pprof&spyName=SPY
 *   Content-Type: application/octet-stream, body: the gzip-compressed pprof
 *
 * NAME is "APP{key=value,...}" (jfrs_pyroscope_name), URL-encoded; FROM and
 * UNTIL are Unix seconds. Uploads go out on a worker thread of the object
 * (libcurl's multi interface; up to 4 at once, one per source at a time, so
 * a source's windows arrive in order; the sources served in turn).
 * Delivery:
 *
 *   - 2xx: pushed. A window is never split, and never sent again after a
 *     2xx (a request whose answer was lost to a timeout may have been
 *     received: that window can arrive twice);
 *   - 429, 5xx and connection errors (refused, reset, timeouts: per request
 *     `timeout_ms`) are retried after a backoff of `backoff_ms`, doubled
 *     after each failed attempt up to `max_backoff_ms`, for at most
 *     `max_attempts` attempts; then the window has failed. Other answers
 *     (400, 413, 422...) fail at once;
 *   - each source has a queue of `queue_windows` windows waiting (beside
 *     the one being sent): when a push finds it full, the oldest waiting
 *     window of that source is dropped and counted;
 *   - jfrs_pyroscope_drain (shutdown) sends what is queued with a bounded
 *     wait, then counts what is left.
 *
 * All functions are called from one thread (the loop's); the worker thread
 * is the object's own.
 */
typedef struct jfrs_pyroscope jfrs_pyroscope;

typedef struct jfrs_pyroscope_config {
    size_t size;             /* sizeof(jfrs_pyroscope_config)                  */
    const char *url;         /* the server, "http://host:4040" (required)      */
    const char *spy_name;    /* spyName; NULL: "jfrstream"                     */
    uint32_t queue_windows;  /* windows waiting per source; 0: 8               */
    uint32_t max_attempts;   /* per window; 0: 5                               */
    uint32_t backoff_ms;     /* first retry after; 0: 1000                     */
    uint32_t max_backoff_ms; /* 0: 16000                                       */
    uint32_t timeout_ms;     /* per request, connection included; 0: 10000     */
    uint32_t connect_timeout_ms; /* 0: 3000                                    */
} jfrs_pyroscope_config;

/* Counts, of one source or of all. */
typedef struct jfrs_pyroscope_stats {
    uint64_t queued;   /* windows handed to jfrs_pyroscope_push               */
    uint64_t pushed;   /* answered 2xx                                        */
    uint64_t retried;  /* attempts repeated (429, 5xx, connection errors)     */
    uint64_t dropped;  /* dropped from a full queue (the oldest waiting)      */
    uint64_t failed;   /* given up: refused, or out of attempts               */
    uint64_t left;     /* still queued when jfrs_pyroscope_drain gave up      */
    uint64_t pending;  /* queued now (waiting, being sent or retried)         */
    long last_status;  /* the last HTTP status received, 0: none              */
    char last_error[256]; /* the last failure ("HTTP 503", curl's message), "" */
} jfrs_pyroscope_stats;

/* False in a build without libcurl. */
JFRS_API bool jfrs_pyroscope_available(void);
JFRS_API void jfrs_pyroscope_config_init(jfrs_pyroscope_config *c);
/* Start the sink (its worker thread). JFR_UNSUPPORTED without libcurl;
 * JFR_INVALID_ARG for a missing or non-http(s) URL; JFR_NOMEM; JFR_IO when
 * libcurl or the thread cannot start. */
JFRS_API jfr_status jfrs_pyroscope_new(const jfrs_pyroscope_config *c, jfrs_pyroscope **out);
/* Stop at once (in-flight requests aborted, what is queued counted as left)
 * and free. NULL: nothing. */
JFRS_API void jfrs_pyroscope_free(jfrs_pyroscope *p);
/* Queue one upload of source `source` (any string naming its queue, e.g. the
 * peer address); `name`: NAME above; `body`: the gzip pprof (copied); `from`
 * / `until`: Unix seconds. JFR_OK (also when an older window was dropped to
 * make room), JFR_NOMEM, JFR_INVALID_STATE after jfrs_pyroscope_drain. */
JFRS_API jfr_status jfrs_pyroscope_push(jfrs_pyroscope *p, const char *source, const char *name,
                                        const void *body, size_t len, int64_t from,
                                        int64_t until);
/* The source will push no more: its counts are kept in the totals, its
 * queue is sent and then forgotten. */
JFRS_API void jfrs_pyroscope_end_source(jfrs_pyroscope *p, const char *source);
/* Send what is queued, waiting at most `timeout_ms`; then stop the worker
 * (requests in flight aborted) and count what is left (stats.left).
 * Returns the windows left. Pushes are refused afterwards. */
JFRS_API uint64_t jfrs_pyroscope_drain(jfrs_pyroscope *p, uint32_t timeout_ms);
/* Counts of all sources; of one (false when unknown or forgotten). */
JFRS_API void jfrs_pyroscope_stats_total(jfrs_pyroscope *p, jfrs_pyroscope_stats *out);
JFRS_API bool jfrs_pyroscope_stats_source(jfrs_pyroscope *p, const char *source,
                                          jfrs_pyroscope_stats *out);
/*
 * The series name of a source: "APP{key=value,...}", malloc'ed (NULL when
 * out of memory). APP: `app` when given, else the label service, else
 * main_class, else "jfrstream"; characters outside [A-Za-z0-9_.-/] become
 * '_'. The labels: every label of the source (jfrs_source_nlabels) but
 * peer, path, jvm_name, jvm_version and jvm_start (per connection or
 * verbose), i.e. source, pid, main_class, service and the user's; key
 * characters outside [A-Za-z0-9_.] and value characters among {},=" and
 * controls become '_'.
 */
JFRS_API char *jfrs_pyroscope_name(const jfrs_source *s, const char *app);

#ifdef __cplusplus
}
#endif
#endif /* JFRSTREAM_SINK_H */
