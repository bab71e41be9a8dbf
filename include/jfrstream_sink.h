/*
 * jfrstream_sink.h — the ingestion edge: who is sending (a source's labels,
 * read from its own recording), events to Kafka (librdkafka), profiles to
 * Pyroscope (libcurl) and metrics for Prometheus (served by libmicrohttpd).
 * `jfrstream listen` and `tail` are built on it; libjfrstream_sink,
 * `pkg-config jfrstream-sink`.
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 *
 * The Kafka and Pyroscope parts and the metrics' HTTP endpoint are optional
 * at build time (meson features -Dkafka, -Dcurl and -Dmicrohttpd). Without
 * them this header is the same and the library links;
 * jfrs_kafka_available() / jfrs_pyroscope_available() /
 * jfrs_metrics_http_available() return false and their _new / _start
 * functions return JFR_UNSUPPORTED (see each section).
 *
 * Conventions (as jfrstream_conv.h): public names start with jfrs_; objects
 * are opaque, *_free accepts NULL; functions returning jfr_status return
 * JFR_OK, JFR_NOMEM, JFR_INVALID_ARG (a value they refuse), or what their
 * comment says; pointers handed in are borrowed for the call; strings
 * returned are owned by the object and valid until it changes. NULL for
 * any pointer is refused, never read or written through: a function
 * returning jfr_status returns JFR_INVALID_ARG (except the calls on a
 * Kafka producer or sender, or a metrics source, which accept NULL as
 * "nothing to do": JFR_OK, see their sections), a getter
 * NULL, 0 or false (a stats getter zeroes its `out`), the rest do nothing;
 * an `out` pointer is set to NULL before anything else is checked. Unless a
 * section says otherwise, an object is used from one thread at a time (the
 * loop's thread).
 */
#ifndef JFRSTREAM_SINK_H
#define JFRSTREAM_SINK_H

#include "jfrstream.h"
#include "jfrstream_conv.h"

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
/* The same, allocating through `a` (jfrstream.h, jfr_allocator; copied:
 * NULL or zeroed means malloc): the source, its labels and their JSON. */
JFRS_API jfrs_source *jfrs_source_new_advanced(const char *origin_key, const char *origin,
                                               const char *host, const jfr_allocator *a);
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
 * the next change); NULL when out of memory. Keys and values are escaped as
 * the event JSON's strings (jfrc_out_json_string: \/, \uXXXX for every
 * non-ASCII character, malformed UTF-8 as \ufffd). */
JFRS_API const char *jfrs_source_json(const jfrs_source *s);

/* -------------------------------------------------------------------- Kafka */

/*
 * Events to Kafka, through librdkafka: one message per event, keyed by the
 * source id (jfrs_source_id), so that one JVM's events keep their order
 * within a partition.
 *
 * Use: jfrs_kafka_config_init, set brokers (and the rest), jfrs_kafka_new.
 * Per input: jfrs_kafka_src_new with its jfrs_source; from the parser's
 * callbacks jfrs_kafka_src_chunk_begin, _metadata and, for each event to
 * send, jfrs_kafka_src_event; at its end jfrs_kafka_src_end and _free. Call
 * jfrs_kafka_poll often (every few tens of ms, and after the loop's I/O) to
 * serve delivery reports and to retry what waits for room; at the end
 * jfrs_kafka_flush with a bounded wait, then jfrs_kafka_free.
 *
 * Message value, format JFRS_KAFKA_JSON: the event as `listen --json` prints
 * it (jfrc_json, compact: byte for byte one of its lines) with the labels
 * and the event's id (see Identity below) added as last members:
 *   {"type":"jdk.CPULoad","values":{...},"source":{"source":"host:4242:17...",
 *    "peer":"10.0.0.7:51234","pid":"4242",...},"id":"host:4242:17...\/..."}
 * Format JFRS_KAFKA_OTLP_JSON: an OTLP ExportLogsServiceRequest in its JSON
 * encoding (what the OpenTelemetry Collector's Kafka receiver reads with
 * encoding otlp_json), one log record per message:
 *   {"resourceLogs":[{"resource":{"attributes":[ATTR...]},"scopeLogs":[{
 *    "scope":{"name":"jfrstream","version":"0.1.0"},"logRecords":[{
 *    "timeUnixNano":"START","observedTimeUnixNano":"NOW","eventName":"TYPE",
 *    "attributes":[{"key":"event.name","value":{"stringValue":"TYPE"}},
 *    {"key":"jfr.id","value":{"stringValue":"ID"}}],
 *    "body":{"kvlistValue":{"values":[...]}}}]}]}]}
 * The resource attributes are the labels, under OpenTelemetry's names where
 * one exists: service.name (label service, else main_class, else
 * "unknown_service:java"), process.pid (intValue), process.runtime.name
 * (jvm_name), process.runtime.version (jvm_version); jfr.source.id (source),
 * jfr.source.peer / .path / .main_class / .jvm_start for the others, and
 * the user's labels under their own keys. START is the event's start time
 * (ns since the epoch), NOW the time the message was made. The body holds
 * the event's "values" converted from its JSON: an object is a kvlistValue,
 * an array an arrayValue, a string a stringValue, an integer an intValue
 * (a decimal string; one outside int64 a stringValue), another number a
 * doubleValue, true/false a boolValue, null an empty AnyValue {}.
 *
 * Topic: "jfr-events" unless set; "{type}" in it expands to the event type
 * name (characters Kafka does not allow in a topic name, other than
 * [A-Za-z0-9._-], become '_').
 *
 * Delivery. The producer is idempotent (enable.idempotence=true, acks=all;
 * client.id "jfrstream"): retries inside librdkafka do not duplicate or
 * reorder messages of a partition. Options given in the config are applied
 * after these defaults, so they can change them (batching, compression,
 * security; a setting that contradicts idempotence makes jfrs_kafka_new
 * fail with librdkafka's reason).
 *
 * Back-pressure. When librdkafka's queue is full (queue.buffering.max.messages
 * or .kbytes) jfrs_kafka_src_event keeps the message and returns
 * JFR_PAUSED: stop feeding that source (return JFR_CB_PAUSE from the parser
 * callback: jfrstream_uv.h then stops reading the connection) until
 * jfrs_kafka_src_retry returns JFR_OK. A caller that goes on anyway (a tail
 * that resumes by itself, a shutdown that must finish the input) has its
 * messages queued behind, in order, within the hold bounds below; past them
 * an event is dropped (JFR_LIMIT, counted).
 *
 * Hold-back. Until the source is identified (jfrs_source_identified: its
 * jdk.JVMInformation was seen) its events are held, not produced, so that
 * they carry the full labels and the final key. They are released, in
 * order, with the labels known then, when the source is identified, when
 * the bound is reached (hold_events events or hold_bytes bytes; 10,000 and
 * 16 MiB by default), at jfrs_kafka_src_end and at jfrs_kafka_flush; after a
 * release nothing more is held for that source. The JDK writes
 * jdk.JVMInformation at the start of every chunk, and events are delivered
 * per flush segment, so in practice every message carries the full labels.
 *
 * Identity. Each message carries its event's id, SOURCE/CHUNKSTART/OFFSET:
 * the source id (the key), the chunk header's start time (ns since the
 * epoch) and the event record's byte offset from its chunk's start, in
 * decimal ("10.0.0.7:4242:1767225600000/1767225600123456789/4711"). A
 * chunk sent again (a sender resending after a lost connection) has the
 * same bytes, so its events get the same ids. It is the JSON's last member
 * "id" (after "source"), the OTLP log record's attribute "jfr.id", and in
 * both formats the message header "jfr-id".
 *
 * DELIVERED. A sender knows the input position through which every message
 * it was given was delivered: the application marks positions with
 * jfrs_kafka_src_mark (e.g. jfr_parser_delivered: every event before it was
 * handed to the sender), and jfrs_kafka_src_delivered returns the last
 * marked position all of whose earlier messages got a successful delivery
 * report (reports come in any order across partitions; held and waiting
 * messages are not delivered). A message that fails for good (a delivery
 * report with an error, refused, dropped over the bounds) stops it there
 * for good and makes jfrs_kafka_src_delivered return JFR_IO: the
 * application ends that input rather than acknowledge past the loss.
 * Events that are not sent (filtered by the application, duplicates) are
 * delivered at once.
 *
 * Duplicates. Per source id the producer remembers, while it runs, the
 * position (CHUNKSTART, OFFSET) through which a sender of that id had
 * everything delivered (from its marks), for the 4,096 ids used last (an
 * id in use by a sender is kept). A later event of the same id at an
 * earlier position (a resent chunk) is not produced again: counted in
 * `duplicates`, and delivered at once. It is looked up when the source is
 * identified (or its labels change), not per event; held events are
 * checked when released. Consumers dedupe by the id across producers
 * (restarts): effectively once.
 *
 * Statistics (jfrs_kafka_stats), per source and in total: produced (handed
 * to librdkafka), delivered (acknowledged), failed (a delivery report with
 * an error, or refused by librdkafka; last_error tells the last reason),
 * in_flight (produced, no report yet), held and pending (waiting here),
 * paused (times JFR_PAUSED was returned), dropped (over the bounds) and
 * duplicates (not produced: delivered before, see Duplicates).
 * After a flush, in_flight + pending + held is what was not delivered.
 *
 * All functions run on one thread (the loop's); delivery reports and
 * librdkafka's log lines are served from jfrs_kafka_poll and _flush on that
 * thread. Without librdkafka at build time, jfrs_kafka_available() is false
 * and jfrs_kafka_new returns JFR_UNSUPPORTED; the rest accept NULL.
 */
typedef struct jfrs_kafka jfrs_kafka;
typedef struct jfrs_kafka_src jfrs_kafka_src;

typedef enum jfrs_kafka_format {
    JFRS_KAFKA_JSON = 0,  /* the event JSON plus "source" */
    JFRS_KAFKA_OTLP_JSON  /* an OTLP ExportLogsServiceRequest (JSON) */
} jfrs_kafka_format;

typedef struct jfrs_kafka_stats {
    uint64_t produced, delivered, failed, in_flight;
    uint64_t held, pending, paused, dropped;
    char last_error[256]; /* "" when nothing failed */
    /* events not produced: delivered before by a sender of the same
     * source id (see IDENTITY) */
    uint64_t duplicates;
} jfrs_kafka_stats;

typedef struct jfrs_kafka_config {
    size_t size;          /* sizeof: jfrs_kafka_config_init */
    const char *brokers;  /* bootstrap.servers, "HOST:PORT,..." (required) */
    const char *topic;    /* NULL: "jfr-events"; "{type}": the event type */
    jfrs_kafka_format format;
    /* librdkafka properties "KEY=VALUE", applied in order after the
     * defaults; an unknown key or a bad value fails jfrs_kafka_new with
     * librdkafka's message */
    const char *const *options;
    size_t noptions;
    uint32_t stack_depth; /* frames per stack trace in the event JSON (5) */
    uint64_t hold_events; /* hold-back bound per source; 0: 10,000 */
    uint64_t hold_bytes;  /* ...in bytes; 0: 16 MiB */
    /* librdkafka's log lines (level: syslog's, 0..7) and errors (level 3),
     * from jfrs_kafka_poll/_flush; NULL: printed on stderr by librdkafka */
    void (*on_log)(void *user, int level, const char *message);
    /* A source freed with jfrs_kafka_src_free is done: each of its messages
     * was delivered or failed (from jfrs_kafka_poll/_flush), or, for those
     * still waiting, at jfrs_kafka_free (st->in_flight + st->pending is
     * then what was not delivered). id: its last source id; origin: its
     * peer or path label. Optional. */
    void (*on_source_done)(void *user, const char *id, const char *origin,
                           const jfrs_kafka_stats *st);
    void *user;
    /* Every allocation of the producer and its senders (messages held and
     * pending, the event JSON, topic names) goes through it (jfrstream.h,
     * jfr_allocator; copied). NULL: malloc. librdkafka allocates its own. */
    const jfr_allocator *allocator;
} jfrs_kafka_config;

#define JFRS_KAFKA_DEFAULT_TOPIC "jfr-events"

/* True when the library was built with librdkafka. */
JFRS_API bool jfrs_kafka_available(void);
/* Size set, stack_depth 5, everything else zero (the defaults). */
JFRS_API void jfrs_kafka_config_init(jfrs_kafka_config *cfg);
/* Create the producer. JFR_OK and *out; JFR_INVALID_ARG (no brokers, a bad
 * option: errbuf says which and why, in librdkafka's words), JFR_NOMEM,
 * JFR_UNSUPPORTED (built without librdkafka). errbuf may be NULL. */
JFRS_API jfr_status jfrs_kafka_new(const jfrs_kafka_config *cfg, jfrs_kafka **out,
                                   char *errbuf, size_t errlen);
/* Free every sender first (jfrs_kafka_src_free). Sources still waiting are
 * reported (on_source_done), what librdkafka still holds is purged (flush
 * first), then everything is freed. */
JFRS_API void jfrs_kafka_free(jfrs_kafka *k);
/* Serve delivery reports and log lines, and retry the messages waiting for
 * room (every source's, in order). Never blocks. */
JFRS_API void jfrs_kafka_poll(jfrs_kafka *k);
/* A file descriptor that becomes readable when delivery reports (or log
 * lines) wait: watch it in your loop (uv_poll) and call jfrs_kafka_poll,
 * which empties it; -1 when there is none (poll on a timer then). Owned by
 * the producer. */
JFRS_API int jfrs_kafka_event_fd(const jfrs_kafka *k);
/* Release every held event, then wait up to timeout_ms for everything to be
 * handed over and acknowledged. JFR_OK, or JFR_LIMIT when messages remain
 * (see the stats). */
JFRS_API jfr_status jfrs_kafka_flush(jfrs_kafka *k, uint64_t timeout_ms);
/* The totals over all sources (ended ones included). */
JFRS_API void jfrs_kafka_stats_get(const jfrs_kafka *k, jfrs_kafka_stats *out);

/* A source's sender. `src` is borrowed: it must outlive the sender. NULL
 * when out of memory. */
JFRS_API jfrs_kafka_src *jfrs_kafka_src_new(jfrs_kafka *k, jfrs_source *src);
/* Hand it every chunk header and metadata table of the source's parser
 * (the event JSON's time base and types). */
JFRS_API void jfrs_kafka_src_chunk_begin(jfrs_kafka_src *ks, const jfr_chunk_info *c);
JFRS_API void jfrs_kafka_src_metadata(jfrs_kafka_src *ks, const jfr_metadata *m);
/*
 * Send one event (it is also passed to jfrs_source_event, so the source's
 * labels follow its identity events). Returns
 *   JFR_OK      produced (or held back, see above);
 *   JFR_PAUSED  taken, but waiting for room in librdkafka's queue: stop
 *               feeding this source until jfrs_kafka_src_retry is JFR_OK;
 *   JFR_LIMIT   dropped: the hold bounds are full (counted in dropped);
 *   JFR_IO      refused by librdkafka (too large, unknown topic, a fatal
 *               producer error): counted in failed, last_error says why;
 *   JFR_NOMEM.
 * An event that cannot be fully decoded is sent anyway (null where a value
 * could not be read) and jfrs_kafka_src_decode_error says why.
 */
JFRS_API jfr_status jfrs_kafka_src_event(jfrs_kafka_src *ks, const jfr_event *e);
/* The last event's decode error, or NULL when it was decoded whole. */
JFRS_API const char *jfrs_kafka_src_decode_error(const jfrs_kafka_src *ks);
/* Try again to hand over the waiting messages: JFR_OK when none waits,
 * else JFR_PAUSED. */
JFRS_API jfr_status jfrs_kafka_src_retry(jfrs_kafka_src *ks);
/* Wait up to timeout_ms (serving delivery reports) for the waiting messages
 * to be handed over: JFR_OK or JFR_PAUSED. For a caller that must go on
 * feeding (a shutdown). */
JFRS_API jfr_status jfrs_kafka_src_wait(jfrs_kafka_src *ks, uint64_t timeout_ms);
/* The input ended: release the held events (with the labels known now). */
JFRS_API void jfrs_kafka_src_end(jfrs_kafka_src *ks);
/* This source's counts. */
JFRS_API void jfrs_kafka_src_stats(const jfrs_kafka_src *ks, jfrs_kafka_stats *out);
/* Every event of the input before `pos` was given to this sender (or left
 * out by you): see DELIVERED. A position not above the last one: nothing.
 * Positions are the parser's input offsets (those of the chunk headers
 * given to jfrs_kafka_src_chunk_begin). */
JFRS_API void jfrs_kafka_src_mark(jfrs_kafka_src *ks, uint64_t pos);
/* *pos: the last marked position through which everything was delivered.
 * JFR_OK, or JFR_IO once a message failed for good (*pos stays before it;
 * the stats' last_error says why). */
JFRS_API jfr_status jfrs_kafka_src_delivered(const jfrs_kafka_src *ks, uint64_t *pos);
/* Free the sender (after jfrs_kafka_src_end; held events not released are
 * released now). Its waiting and in-flight messages stay with the
 * producer; on_source_done reports the source when they are settled. */
JFRS_API void jfrs_kafka_src_free(jfrs_kafka_src *ks);

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
    /* Every allocation of the sink (its queues and the uploads' copies)
     * goes through it (jfrstream.h, jfr_allocator; copied), from the loop's
     * thread and the worker's: it must be thread-safe. NULL: malloc.
     * libcurl allocates its own. */
    const jfr_allocator *allocator;
    /*
     * Authentication and HTTPS (members appended: an older caller's struct
     * ends before them, so it sends none of these). Every string is copied
     * by jfrs_pyroscope_new; the secrets (basic_auth, bearer_token, headers)
     * are wiped from the sink's memory when it is freed, and never appear
     * in last_error. JFR_INVALID_ARG for a value with a control character
     * (no CR/LF can reach a request), for basic_auth and bearer_token both
     * set, for a header not "Name: value".
     *
     *   basic_auth    "USER:PASSWORD" (split at the first ':', so the
     *                 password may hold ':'): Authorization: Basic (RFC 7617)
     *   bearer_token  "Authorization: Bearer TOKEN" (RFC 6750)
     *   tenant        "X-Scope-OrgID: TENANT": the tenant of a multi-tenant
     *                 Pyroscope (Grafana Cloud, Phlare's/Pyroscope's
     *                 multitenancy_enabled)
     *   headers       nheaders more headers, "Name: value" each (Name an
     *                 HTTP token); one of the same name as a header the
     *                 sink sets replaces it
     *   ca_file       HTTPS: the PEM bundle of the CAs that verify the
     *                 server, instead of the system's (NULL: the system's);
     *                 the server is always verified, its name checked
     *   cert_file     HTTPS: the client certificate (PEM; with its chain),
     *   key_file      its private key (PEM, unencrypted; NULL: in
     *                 cert_file): mutual TLS
     *
     * A 401 or 403 answer fails the window at once; its last_error says
     * what was sent ("HTTP 401 Unauthorized: the server refused the basic
     * auth credentials of user 'U'"). A certificate problem (the server's
     * not verified by ca_file, a name mismatch, an unreadable CA, client
     * certificate or key file) fails the window at once too, with libcurl's
     * message; a handshake the server breaks off (a client certificate it
     * wanted and did not get) is retried as a connection error.
     */
    const char *basic_auth;
    const char *bearer_token;
    const char *tenant;
    const char *const *headers;
    size_t nheaders;
    const char *ca_file;
    const char *cert_file;
    const char *key_file;
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
 * JFR_INVALID_ARG for a missing or non-http(s) URL or a refused
 * authentication value (above); JFR_NOMEM; JFR_IO when
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

/* ------------------------------------------------------------------ metrics */

/*
 * Metrics for Prometheus, computed from the sources' events: the JVM's own
 * state under the OpenTelemetry JVM metric names in Prometheus form, JFR's
 * counts per source and the reader's health, exposed in the text format
 * 0.0.4 (jfrs_metrics_render), served over HTTP by jfrs_metrics_http_*
 * (libmicrohttpd, meson feature -Dmicrohttpd).
 *
 * Use: jfrs_metrics_config_init, jfrs_metrics_new. Per input:
 * jfrs_metrics_src_new with its jfrs_source (the labels), then
 * jfrs_metrics_src_subscribe on its parser before it is fed, and from the
 * parser's callbacks jfrs_metrics_src_chunk_begin, _metadata, _record (every
 * record), _error and _chunk_end; at its end jfrs_metrics_src_end (its series
 * stay for ttl_ms, then go). A caller that dispatches events itself passes
 * them to jfrs_metrics_src_event instead of subscribing.
 *
 * Names: OpenTelemetry's jvm.* names in Prometheus form, except
 * jvm.thread.count and jvm.class.count, which are jvm_threads and
 * jvm_classes here: Prometheus keeps the _count suffix for histograms and
 * summaries (promtool check metrics flags any other).
 *
 * Every series of a source carries the labels `source` (jfrs_source_id),
 * `service` (when known) and the user's labels (jfrs_source_set), in that
 * order; jfr_source_info{...} 1 carries all of its labels (peer or path,
 * pid, jvm_name, jvm_version, main_class, jvm_start too). The series, and
 * the event fields they come from (JDK 9/10 com.oracle.jdk.* names too):
 *
 *   jvm_gc_duration_seconds          histogram  jdk.GarbageCollection duration;
 *       jvm_gc_name (its name), jvm_gc_action ("end of minor GC" for a name
 *       with New, Scavenge, Young or Minor in it; "end of major GC" for Old,
 *       Full, MarkSweep or Major; else "end of GC cycle"); buckets 0.0005 to
 *       10 s
 *   jvm_cpu_recent_utilization_ratio gauge      jdk.CPULoad jvmUser + jvmSystem
 *   jvm_system_cpu_utilization_ratio gauge      jdk.CPULoad machineTotal
 *   jvm_memory_used_bytes            gauge      jdk.GCHeapSummary heapUsed
 *       {jvm_memory_type="heap"}; jdk.MetaspaceSummary metaspace.used and
 *       classSpace.used {jvm_memory_type="non_heap",jvm_memory_pool_name=
 *       "Metaspace" / "Compressed Class Space"}
 *   jvm_memory_committed_bytes       gauge      heapSpace.committedSize,
 *       metaspace.committed, classSpace.committed (labels as above)
 *   jvm_memory_limit_bytes           gauge      heapSpace.reservedSize (heap)
 *   jvm_memory_used_after_last_gc_bytes gauge   heapUsed of the last
 *       jdk.GCHeapSummary with when "After GC" (heap)
 *   jvm_threads                      gauge      jdk.JavaThreadStatistics
 *       daemonCount {jvm_thread_daemon="true"}, activeCount - daemonCount
 *       {jvm_thread_daemon="false"}
 *   jvm_classes                      gauge      jdk.ClassLoadingStatistics
 *       loadedClassCount - unloadedClassCount
 *   jvm_class_loaded_total           counter    loadedClassCount
 *   jvm_class_unloaded_total         counter    unloadedClassCount
 *   jvm_memory_allocated_bytes_total counter    {jfr_event=TYPE}: the sum of
 *       jdk.ObjectAllocationSample weight (an estimate of all allocation),
 *       jdk.ObjectAllocationInNewTLAB tlabSize, ObjectAllocationOutsideTLAB
 *       allocationSize (those two together: TLABs and objects outside them)
 *   jvm_lock_contentions_total       counter    jdk.JavaMonitorEnter events
 *   jvm_lock_contention_seconds_total counter   ...their durations summed
 *   jvm_safepoints_total             counter    jdk.SafepointBegin events
 *   jvm_safepoint_seconds_total      counter    ...their durations summed
 *   jvm_vm_operations_total          counter    jdk.ExecuteVMOperation;
 *       jvm_vm_operation (operation), jvm_safepoint ("true"/"false")
 *   jvm_vm_operation_seconds_total   counter    ...their durations summed
 *   jvm_exceptions_thrown_total      counter    jdk.ExceptionStatistics
 *       throwables (the JVM's own count since it started)
 *   jfr_events_total                 counter    event records, {type=NAME}
 *   jfr_bytes_total                  counter    bytes the source's parser took
 *   jfr_chunks_total                 counter    chunks completed
 *   jfr_parse_errors_total           counter    errors, {status=NAME}
 *                                               (jfr_status_name)
 *   jfr_last_event_timestamp_seconds gauge      when (Unix time) its last event
 *                                               arrived
 *   jfr_source_connected             gauge      1 while open, 0 after its end
 *   jfr_source_info                  gauge      1, with all of its labels
 *
 * A gauge (and a counter the JVM keeps itself: class and exception counts)
 * holds the value of the event with the latest start time. Only what the
 * input contains is exposed: a series appears with the first event that
 * feeds it, never as a 0 for an event type that is disabled.
 *
 * The reader's own series, without source labels, kept across the sources'
 * ends: jfrstream_sources_open, jfrstream_sources_total,
 * jfrstream_events_total, jfrstream_bytes_total,
 * jfrstream_parse_errors_total{status}, jfrstream_metrics_sources (kept:
 * open and ended within the TTL), jfrstream_metrics_series,
 * jfrstream_metrics_refused_total{limit="sources"|"series"},
 * jfrstream_metrics_expired_total, jfrstream_metrics_evicted_total,
 * jfrstream_build_info{version} and jfrstream_start_time_seconds; and what
 * the application adds with jfrs_metrics_set (the CLI: connections, sinks).
 *
 * Bounds. An ended source is kept for ttl_ms (300 s), then forgotten with
 * its series (expired). A source that becomes identified (jfrs_source_id)
 * with the id of an ended one still kept (a JVM that reconnects) takes its
 * series over: counters go on from where they were. Two open sources with
 * the same id are told apart by a label stream="2", "3", ... At most
 * max_sources sources are kept (10,000): a new one evicts the ended source
 * that ended first, or, when every one is open, gets no series (refused,
 * limit "sources"; jfrs_metrics_src_new returns JFR_LIMIT). At most
 * max_series series of sources are held (1,000,000), counted as they are
 * created (a histogram as 17: its 15 buckets, +Inf included, _sum and
 * _count; a source's first 4, bytes,
 * chunks, connected and info, when it is taken): a series past it is not
 * created (refused, limit "series", counted once per series); a source
 * without room for its first 4 is refused as above. A refused source's
 * events, bytes and errors are still counted in the reader's totals.
 *
 * Cost. Per event: a table lookup by type index; the events the series
 * above read (GC, CPU, heap, ...: a few a second) are decoded, field by
 * index; pooled names (GC name, VM operation) are resolved once per chunk
 * and key. Nothing is allocated per event after the first of its kind.
 *
 * Threads: every function runs on one thread (the loop's), render included;
 * jfrs_metrics_http_* serves scrapes from its own threads through the
 * `scrape` callback, which must get the text from that thread:
 * jfrs_metrics_server does that hand-off.
 */
typedef struct jfrs_metrics jfrs_metrics;
typedef struct jfrs_metrics_src jfrs_metrics_src;

typedef struct jfrs_metrics_config {
    size_t size;           /* sizeof: jfrs_metrics_config_init */
    uint64_t ttl_ms;       /* an ended source's series stay; 0: 300,000 */
    uint32_t max_sources;  /* 0: 10,000 */
    uint64_t max_series;   /* 0: 1,000,000 */
    /* Called at the start of jfrs_metrics_render: the place to refresh the
     * values set with jfrs_metrics_set. Optional. */
    void (*on_render)(jfrs_metrics *m, void *user);
    void *user;
    /* Every allocation of the registry and its sources goes through it
     * (jfrstream.h, jfr_allocator; copied). NULL: malloc. */
    const jfr_allocator *allocator;
} jfrs_metrics_config;

#define JFRS_METRICS_DEFAULT_TTL_MS 300000u
#define JFRS_METRICS_DEFAULT_MAX_SOURCES 10000u
#define JFRS_METRICS_DEFAULT_MAX_SERIES 1000000u

JFRS_API void jfrs_metrics_config_init(jfrs_metrics_config *cfg);
/* JFR_OK and *out, JFR_INVALID_ARG (no config or size), JFR_NOMEM. */
JFRS_API jfr_status jfrs_metrics_new(const jfrs_metrics_config *cfg, jfrs_metrics **out);
/* Free the registry (end and free its sources first). NULL: nothing. */
JFRS_API void jfrs_metrics_free(jfrs_metrics *m);

/* A new input. `src` is borrowed until jfrs_metrics_src_end. JFR_OK and
 * *out; JFR_LIMIT when refused over max_sources or max_series (counted):
 * *out is then a handle without series, that counts only the reader's
 * totals (events, bytes, errors); use and end it the same way; JFR_NOMEM
 * (*out NULL: the other calls accept NULL and do nothing). */
JFRS_API jfr_status jfrs_metrics_src_new(jfrs_metrics *m, jfrs_source *src,
                                         jfrs_metrics_src **out);
/* Subscribe the event types the series read (jfr_parser_on), and count the
 * parser's bytes (jfr_parser_bytes) as jfr_bytes_total until _end. */
JFRS_API jfr_status jfrs_metrics_src_subscribe(jfrs_metrics_src *ms, jfr_parser *p);
JFRS_API void jfrs_metrics_src_chunk_begin(jfrs_metrics_src *ms, const jfr_chunk_info *c);
JFRS_API void jfrs_metrics_src_metadata(jfrs_metrics_src *ms, const jfr_metadata *md);
/* Every record (the parser's on_record): counts events per type. */
JFRS_API void jfrs_metrics_src_record(jfrs_metrics_src *ms, const jfr_record *r);
/* An event, for a caller that dispatches them itself (any type: those the
 * series do not read cost one table lookup). */
JFRS_API void jfrs_metrics_src_event(jfrs_metrics_src *ms, const jfr_event *e);
JFRS_API void jfrs_metrics_src_chunk_end(jfrs_metrics_src *ms);
/* A parser error (the parser's on_error). */
JFRS_API void jfrs_metrics_src_error(jfrs_metrics_src *ms, jfr_status st);
/* The input ended (before its parser and jfrs_source are freed): its labels
 * are copied, jfr_source_connected becomes 0, the TTL starts. `ms` must
 * not be used afterwards (the registry frees it when it expires). */
JFRS_API void jfrs_metrics_src_end(jfrs_metrics_src *ms);

/* Forget the sources whose TTL has passed (also done by render). */
JFRS_API void jfrs_metrics_expire(jfrs_metrics *m);
/* A series of the application's (the reader's own health), rendered after
 * the built-in ones: `name` a metric name, `type` "counter" or "gauge",
 * `help` its HELP text (of the first call for a name), `labels` the label
 * pairs as written between the braces (`outcome="delivered"`) or NULL.
 * Later calls with the same name and labels update the value. At most 256
 * names. JFR_OK, JFR_INVALID_ARG, JFR_LIMIT, JFR_NOMEM. */
JFRS_API jfr_status jfrs_metrics_set(jfrs_metrics *m, const char *name, const char *type,
                                     const char *help, const char *labels, double value);
/* The exposition, text format 0.0.4: on_render, expiry, then every series.
 * Owned by the registry, valid until the next render or free; *len its
 * length. NULL when out of memory. */
JFRS_API const char *jfrs_metrics_render(jfrs_metrics *m, size_t *len);
/* Counts, for the application's own report. */
JFRS_API uint64_t jfrs_metrics_nsources(const jfrs_metrics *m); /* kept now */
JFRS_API uint64_t jfrs_metrics_nseries(const jfrs_metrics *m);

/*
 * The HTTP endpoint, libmicrohttpd on its own threads (one per connection,
 * at most 64 at once, 10 s idle timeout): GET or HEAD /metrics answers 200
 * with what `scrape` returns (Content-Type "text/plain; version=0.0.4;
 * charset=utf-8"), or 503 when it fails; / answers a line naming /metrics;
 * other paths 404, other methods 405; malformed requests get
 * libmicrohttpd's 400 (or the connection is closed). `scrape` runs on the
 * server's threads, several calls at once when scrapes arrive together: it
 * sets *body (malloc'ed, freed by the server) and *len and returns true, or
 * false (503). A client holding all 64 connections open without finishing
 * its requests keeps the others out until the idle timeout closes them:
 * bind to an address only the scrapers reach.
 * Without libmicrohttpd at build time jfrs_metrics_http_available() is false
 * and jfrs_metrics_http_start returns JFR_UNSUPPORTED.
 */
typedef struct jfrs_metrics_http jfrs_metrics_http;

JFRS_API bool jfrs_metrics_http_available(void);
/* Listen on host (a numeric IPv4 or IPv6 address; NULL: "127.0.0.1") and
 * port (0: any free one, see _port). JFR_OK and *out; JFR_INVALID_ARG (a
 * host that is not a numeric address); JFR_IO (cannot listen: errbuf says
 * why); JFR_UNSUPPORTED; JFR_NOMEM. */
JFRS_API jfr_status jfrs_metrics_http_start(const char *host, int port,
                                            bool (*scrape)(void *user, char **body,
                                                           size_t *len),
                                            void *user, jfrs_metrics_http **out,
                                            char *errbuf, size_t errlen);
JFRS_API int jfrs_metrics_http_port(const jfrs_metrics_http *h);
/* Stop: close the socket, wait for the connections' threads, free. */
JFRS_API void jfrs_metrics_http_stop(jfrs_metrics_http *h);

/*
 * The endpoint with HTTPS and basic auth (Prometheus' web config: its
 * tls_server_config and basic_auth_users), a sized struct (jfrstream.h,
 * "STRUCTS YOU HAND IN"; members only ever appended):
 *
 *   tls_cert_pem, tls_key_pem  the server's certificate (with its chain)
 *       and unencrypted private key, PEM texts (copied; the key wiped when
 *       the server stops): HTTPS only, TLS 1.2 or later, through
 *       libmicrohttpd's TLS (GnuTLS). Both or neither. A plain HTTP request
 *       to that port fails its handshake and is closed unanswered.
 *   basic_auth  the users, the text of a file of lines "USER:PASSWORD"
 *       (copied, wiped when the server stops): every request must carry
 *       one user's credentials (Authorization: Basic), or it is answered
 *       401 with WWW-Authenticate: Basic realm="jfrstream" (and counted,
 *       jfrs_metrics_http_unauthorized). PASSWORD is the password itself,
 *       or its bcrypt hash ("$2a$", "$2b$" or "$2y$" and 56 characters, as
 *       `htpasswd -nbB` and Prometheus' web config write it) checked with
 *       crypt(3) (libxcrypt, -Dcrypt); a user's last accepted password is
 *       kept in memory so that its next scrapes cost no bcrypt. Passwords
 *       are compared in time independent of where they differ, and every
 *       user is compared (no early exit). Empty lines and lines starting
 *       with '#' are skipped; a trailing CR is dropped; a user without ':',
 *       an empty user, the same user twice or more than 1,024 users:
 *       JFR_INVALID_ARG, errbuf naming the line.
 *   allocator   what the copies are allocated with (NULL: malloc).
 *
 * Statuses: those of jfrs_metrics_http_start; JFR_INVALID_ARG for one PEM
 * without the other, a bad users text, a bcrypt hash crypt(3) here cannot
 * check (errbuf says which); JFR_UNSUPPORTED for TLS when libmicrohttpd has
 * none (jfrs_metrics_http_tls_available); JFR_IO when libmicrohttpd
 * refuses the certificate or key (errbuf: its message).
 */
typedef struct jfrs_metrics_http_config {
    size_t size;      /* sizeof: jfrs_metrics_http_config_init */
    const char *host; /* as jfrs_metrics_http_start (NULL: 127.0.0.1) */
    int port;         /* 0: any free one */
    const char *tls_cert_pem, *tls_key_pem;
    const char *basic_auth;
    const jfr_allocator *allocator;
} jfrs_metrics_http_config;

JFRS_API void jfrs_metrics_http_config_init(jfrs_metrics_http_config *c);
/* Whether HTTPS can be served: libmicrohttpd built with TLS (false without
 * libmicrohttpd). */
JFRS_API bool jfrs_metrics_http_tls_available(void);
JFRS_API jfr_status jfrs_metrics_http_start_with(const jfrs_metrics_http_config *c,
                                                 bool (*scrape)(void *user, char **body,
                                                                size_t *len),
                                                 void *user, jfrs_metrics_http **out,
                                                 char *errbuf, size_t errlen);
/* Requests answered 401 so far (any thread). */
JFRS_API uint64_t jfrs_metrics_http_unauthorized(const jfrs_metrics_http *h);

/*
 * A registry served: the endpoint above with the hand-off between its
 * threads and the one thread that owns the registry (which feeds it with
 * no lock per event, so only it may render). A scrape wakes that thread
 * through `wake` (called on a server thread: it must be safe from any
 * thread, e.g. libuv's uv_async_send, a write to a pipe) and waits;
 * that thread calls jfrs_metrics_server_service when woken, which renders
 * once for every scrape waiting, so a scrape sees whole events and chunks.
 * A scrape not answered within 10 s (the owner busy with a huge chunk),
 * and every scrape before _serve or after _stop began, gets a 503.
 * The metrics' allocator serves the server's own memory; the bodies handed
 * to libmicrohttpd are malloc'ed, as it frees them.
 *
 *   jfrs_metrics_server_start(m, "127.0.0.1", 9464, &srv, err, sizeof err);
 *   uv_async_init(loop, &async, on_async);    // on_async: ..._service(srv)
 *   jfrs_metrics_server_serve(srv, wake, &async); // wake: uv_async_send
 *   ...
 *   jfrs_metrics_server_stop(srv);            // then uv_close(&async)
 */
typedef struct jfrs_metrics_server jfrs_metrics_server;

/* Listen as jfrs_metrics_http_start (same statuses); scrapes get a 503
 * until _serve. `m` must outlive the server. */
JFRS_API jfr_status jfrs_metrics_server_start(jfrs_metrics *m, const char *host, int port,
                                              jfrs_metrics_server **out, char *errbuf,
                                              size_t errlen);
/* The same with HTTPS and basic auth (jfrs_metrics_http_config; its
 * allocator: NULL takes the metrics'). */
JFRS_API jfr_status jfrs_metrics_server_start_with(jfrs_metrics *m,
                                                   const jfrs_metrics_http_config *c,
                                                   jfrs_metrics_server **out, char *errbuf,
                                                   size_t errlen);
/* Requests answered 401 so far (jfrs_metrics_http_unauthorized). */
JFRS_API uint64_t jfrs_metrics_server_unauthorized(const jfrs_metrics_server *s);
/* From now on scrapes are answered: each calls wake(user) on its thread. */
JFRS_API void jfrs_metrics_server_serve(jfrs_metrics_server *s, void (*wake)(void *user),
                                        void *user);
/* On the registry's thread, when woken: one render for the scrapes waiting
 * now (nothing when none waits). */
JFRS_API void jfrs_metrics_server_service(jfrs_metrics_server *s);
JFRS_API int jfrs_metrics_server_port(const jfrs_metrics_server *s);
/* Waiting scrapes get their 503; close the socket, wait for the server's
 * threads, free. On the registry's thread, before jfrs_metrics_free. */
JFRS_API void jfrs_metrics_server_stop(jfrs_metrics_server *s);

/* ------------------------------------------------------------------ views */

/*
 * Live views: the views of `jfrstream view` (JDK 25's `jfr view`, or an
 * event type's table) over the events of the last minutes of one or many
 * sources, as JFR.view shows one JVM on demand: `listen --view` and
 * `tail --view` redraw them.
 *
 * Each source keeps a copy of what the views read, made by the chunk
 * writer (jfrstream.h): its metadata, its constant pools and the events of
 * the types the views name, nothing else. A chunk whose end is older than
 * the window is dropped; the chunk still being written is kept whole. Memory
 * per source: the copies of the chunks that reach into the window, at most
 * max_source_bytes (the oldest chunks go first; a chunk that alone would
 * be larger is left out, and jfrs_views_error says so).
 *
 * jfrs_views_render reads the copies with fresh queries, as `jfrstream view`
 * reads a file (events by end time per chunk, every chunk's time in the
 * first chunk's time base; per source), leaving out the events that ended
 * before now minus the window (JFR.view's maxage). Over all sources (the
 * default) each view is one table of every source's events, the sources in
 * the order they began; by_source prints the views of each source under a
 * line "Source: ID" (jfrs_source_id). A view's text is byte for byte what
 * `jfrstream view NAME FILE` prints for a file holding the same events.
 *
 * Per source: jfrs_views_src_new, then from the parser's callbacks
 * _chunk_begin, _metadata, _record (every record: the copy keeps metadata,
 * checkpoints and the events of the views' types, in file order, whatever
 * jfr_options.ordered is), _chunk_end; _end when the input ends (what it
 * sent stays for the window). The fan-out does all this for its sources
 * when jfrs_fanout_config.views is set. One thread (the loop's).
 */
typedef struct jfrs_views jfrs_views;
typedef struct jfrs_views_src jfrs_views_src;

typedef struct jfrs_views_config {
    size_t size;               /* sizeof: jfrs_views_config_init */
    const char *const *names;  /* views (jfrc_view_info) or event types */
    size_t count;
    jfrc_view_options options; /* width, truncate, ... (since_nanos: the window's) */
    uint64_t window_ms;        /* the events of the last ... (0: 10 minutes) */
    bool by_source;            /* the views of each source apart */
    uint64_t max_source_bytes; /* copy kept per source (0: 64 MiB) */
    const jfr_allocator *allocator; /* copied; NULL: malloc */
} jfrs_views_config;

JFRS_API void jfrs_views_config_init(jfrs_views_config *cfg);
/* JFR_OK and *out; JFR_INVALID_ARG (no names; a name that is neither a
 * view nor a dotted event type name: *err, errlen bytes, says which);
 * JFR_NOMEM. The names are copied. */
JFRS_API jfr_status jfrs_views_new(const jfrs_views_config *cfg, jfrs_views **out, char *err,
                                   size_t errlen);
/* Frees the sources too (those not ended are ended). */
JFRS_API void jfrs_views_free(jfrs_views *v);
/* Print every view over the events that ended at or after now_nanos minus
 * the window (ns since the epoch); first drops the copies that are older.
 * JFR_OK or JFR_NOMEM. */
JFRS_API jfr_status jfrs_views_render(jfrs_views *v, jfrc_out *o, int64_t now_nanos);
/* Bytes kept for all sources (the copies), sources kept. */
JFRS_API uint64_t jfrs_views_memory(const jfrs_views *v);
JFRS_API size_t jfrs_views_sources(const jfrs_views *v);
/* The last chunk that could not be copied, and why; NULL when none. */
JFRS_API const char *jfrs_views_error(const jfrs_views *v);

/* A new source; `src` is borrowed until _end (its id names it). */
JFRS_API jfr_status jfrs_views_src_new(jfrs_views *v, jfrs_source *src, jfrs_views_src **out);
JFRS_API void jfrs_views_src_chunk_begin(jfrs_views_src *vs, jfr_parser *p,
                                         const jfr_chunk_info *c);
JFRS_API void jfrs_views_src_metadata(jfrs_views_src *vs, const jfr_metadata *m);
JFRS_API void jfrs_views_src_record(jfrs_views_src *vs, jfr_parser *p, const jfr_record *r);
JFRS_API void jfrs_views_src_chunk_end(jfrs_views_src *vs, jfr_parser *p);
/* The input ended: a chunk it left unfinished is kept as it was. */
JFRS_API void jfrs_views_src_end(jfrs_views_src *vs);

/* ------------------------------------------------------------------ fan-out */

/*
 * The fan-out: one source's parser callbacks to every output the
 * application chose, so an application (listen, tail, your own) maps its
 * options onto one object instead of calling each output:
 *
 *   json       one line per event, as `jfrstream print --json` prints an
 *              event (conv's jfrc_json, compact), then '\n', on a jfrc_out;
 *   kafka      a jfrs_kafka_src per source (the events, with back-pressure);
 *   metrics    a jfrs_metrics_src per source (its records, events, errors);
 *   profile    the application's jfrc_profile: the events of its types, each
 *              with the source's id (1, 2, ... in creation order) as key;
 *   views      a jfrs_views_src per source (live views: see above);
 *   pyroscope  per source and kind of pyroscope_event (jfrc_pyroscope_kinds)
 *              a profile, pushed to the jfrs_pyroscope sink as pprof with
 *              Pyroscope's sample types each window (jfrs_fanout_window,
 *              from your timer) and when the source ends (its partial
 *              window); cpu and wall scaled by the sampling period the
 *              source's jdk.ActiveSetting gives, else the kind's default.
 *
 * Each is optional (NULL: off); the objects are borrowed and must outlive
 * the fan-out. Per input: jfrs_fanout_src_new with its jfrs_source, then
 * hand it the parser's callbacks, either from your own (jfrs_fanout_src_
 * chunk_begin, _metadata, _record, _event, _chunk_end, _error: call the ones
 * you have) or by installing jfrs_fanout_callbacks, whose user pointer must
 * point at a struct starting with `void *data` that holds the source (as
 * jfr_uv_conn and jfr_uv_tail do). Which events reach _event is yours: the
 * parser's subscriptions, filters.
 *
 * Back-pressure (PAUSE in jfrstream.h): when Kafka's queue is full,
 * jfrs_fanout_src_event returns JFR_PAUSED (the ready-made callback:
 * JFR_CB_PAUSE) and the source is marked paused; call jfrs_fanout_poll
 * often (a timer of a few tens of ms, after the loop's I/O, and when
 * jfrs_kafka_event_fd is readable): it serves Kafka's delivery reports and
 * calls on_resume for each paused source whose messages went over, where
 * you resume its input (jfr_uv_conn_resume, jfr_uv_tail_resume). An
 * application that must go on feeding (a shutdown) calls
 * jfrs_fanout_src_wait instead, or jfrs_fanout_resume_all.
 *
 * What goes wrong in an output without stopping the source (a window not
 * pushed, a profile's error) reaches on_message, one line naming the output.
 *
 * Memory: the fan-out and its sources through `allocator`; the JSON writers
 * and profiles too (the JSON cache bounded by json_cache_limit); the series
 * names of jfrs_pyroscope_name are malloc'ed. One thread (the loop's).
 */
typedef struct jfrs_fanout jfrs_fanout;
typedef struct jfrs_fanout_src jfrs_fanout_src;

typedef struct jfrs_fanout_config {
    size_t size;                /* sizeof: jfrs_fanout_config_init */
    struct jfrc_out *json;      /* JSON lines written here (jfrstream_conv.h), or NULL */
    uint32_t json_stack_depth;  /* frames per stack trace (5) */
    uint64_t json_cache_limit;  /* jfrc_json_set_cache_limit; 0: its default */
    jfrs_kafka *kafka;          /* events to Kafka, or NULL */
    jfrs_metrics *metrics;      /* records and events to the registry, or NULL */
    struct jfrc_profile *profile; /* events into this profile (selected), or NULL */
    jfrs_pyroscope *pyroscope;  /* windows pushed there, or NULL */
    const char *pyroscope_app;  /* APP of jfrs_pyroscope_name (NULL: its default) */
    const char *pyroscope_event; /* kinds, as --event's words (NULL: "cpu") */
    /* A line about a source's output (optional). */
    void (*on_message)(jfrs_fanout_src *fs, void *src_user, const char *text, void *user);
    /* A paused source can take events again (from jfrs_fanout_poll or
     * _resume_all): resume its input. `src_user` is jfrs_fanout_src_new's.
     * It may end sources (jfrs_fanout_src_end), this one included. */
    void (*on_resume)(jfrs_fanout_src *fs, void *src_user, void *user);
    void *user;
    /* Every allocation of the fan-out and its JSON writers (copied). NULL:
     * malloc. */
    const jfr_allocator *allocator;
    /* views: each source's copy for these live views (see views above; the
     * parser comes from jfrs_fanout_src_subscribe), or NULL */
    jfrs_views *views;
} jfrs_fanout_config;

JFRS_API void jfrs_fanout_config_init(jfrs_fanout_config *cfg);
/* JFR_OK and *out; JFR_INVALID_ARG (no config, out or size; a word of
 * pyroscope_event without a Pyroscope kind); JFR_NOMEM. The first
 * Pyroscope window starts now. */
JFRS_API jfr_status jfrs_fanout_new(const jfrs_fanout_config *cfg, jfrs_fanout **out);
/* Ends the sources still open (as jfrs_fanout_src_end), then frees. */
JFRS_API void jfrs_fanout_free(jfrs_fanout *fo);

/* A new input. `src` is borrowed until _end; `user` is yours (on_resume,
 * jfrs_fanout_src_user). JFR_OK and *out; JFR_NOMEM (its JSON writer or
 * Kafka sender could not be made). A metrics source refused or not made
 * is not a failure: the input goes on without series, and
 * jfrs_fanout_src_metrics_status says what jfrs_metrics_src_new answered
 * (JFR_LIMIT: over max_sources or max_series). */
JFRS_API jfr_status jfrs_fanout_src_new(jfrs_fanout *fo, jfrs_source *src, void *user,
                                        jfrs_fanout_src **out);
JFRS_API jfr_status jfrs_fanout_src_metrics_status(const jfrs_fanout_src *fs);
JFRS_API void *jfrs_fanout_src_user(const jfrs_fanout_src *fs);
/* Its jfrs_source (still the caller's: free it after _end). */
JFRS_API jfrs_source *jfrs_fanout_src_source(const jfrs_fanout_src *fs);
/* 1, 2, ... in creation order: its events' key in `profile`. */
JFRS_API uint64_t jfrs_fanout_src_id(const jfrs_fanout_src *fs);
/* Subscribe the event types the outputs read on their own (the metrics'
 * series), after the parser is made and before it is fed. */
JFRS_API jfr_status jfrs_fanout_src_subscribe(jfrs_fanout_src *fs, jfr_parser *p);
JFRS_API void jfrs_fanout_src_chunk_begin(jfrs_fanout_src *fs, const jfr_chunk_info *c);
JFRS_API void jfrs_fanout_src_metadata(jfrs_fanout_src *fs, const jfr_metadata *m);
JFRS_API void jfrs_fanout_src_record(jfrs_fanout_src *fs, const jfr_record *r);
/* An event to the JSON lines and to Kafka: JFR_OK (decode errors
 * included: see _event_error; Kafka's refusals are counted in its stats),
 * JFR_PAUSED (taken, the source paused: see above), JFR_NOMEM. */
JFRS_API jfr_status jfrs_fanout_src_event(jfrs_fanout_src *fs, const jfr_event *e);
/* The last event's decode error: JFR_OK when it was decoded whole; else
 * its status and, in *message (owned by the source, valid until its next
 * event; may be NULL), why: the JSON writer's, or, without JSON lines,
 * the Kafka sender's. */
JFRS_API jfr_status jfrs_fanout_src_event_error(const jfrs_fanout_src *fs,
                                                const char **message);
/* Instead of waiting for on_resume: wait up to timeout_ms for room
 * (jfrs_kafka_src_wait); the source is no longer paused. JFR_OK or
 * JFR_PAUSED (still full). */
JFRS_API jfr_status jfrs_fanout_src_wait(jfrs_fanout_src *fs, uint64_t timeout_ms);
JFRS_API void jfrs_fanout_src_chunk_end(jfrs_fanout_src *fs);
JFRS_API void jfrs_fanout_src_error(jfrs_fanout_src *fs, jfr_status st);
/* Positions (acknowledged delivery): every event of the input before `pos`
 * went to the outputs (jfr_parser_delivered). With Kafka, its sender's
 * mark (jfrs_kafka_src_mark); without, the other outputs took it. */
JFRS_API void jfrs_fanout_src_mark(jfrs_fanout_src *fs, uint64_t pos);
/* *pos: what is handed on: with Kafka, what its delivery reports
 * confirmed (jfrs_kafka_src_delivered: JFR_IO once a message failed for
 * good, *message then its last error, owned by the source); without, the
 * last position marked. JFR_OK otherwise (message NULL). */
JFRS_API jfr_status jfrs_fanout_src_delivered(jfrs_fanout_src *fs, uint64_t *pos,
                                              const char **message);
/* The input ended: Kafka's held events go (its messages stay with the
 * producer), the metrics source ends (its TTL starts); `fs` is freed. */
JFRS_API void jfrs_fanout_src_end(jfrs_fanout_src *fs);

/* Kafka's delivery reports, then on_resume for each paused source with
 * room again. */
JFRS_API void jfrs_fanout_poll(jfrs_fanout *fo);
/* on_resume for every paused source (a stop: each input must finish). */
JFRS_API void jfrs_fanout_resume_all(jfrs_fanout *fo);
/* Whether a source is paused now. */
JFRS_API bool jfrs_fanout_paused(const jfrs_fanout *fo);
/* pyroscope: end the window [its start, now_ms) of every source (push
 * what each kind collected, empty it) and start the next. */
JFRS_API void jfrs_fanout_window(jfrs_fanout *fo, int64_t now_ms);
/* The wall clock in ms since the epoch, as the windows take it. */
JFRS_API int64_t jfrs_fanout_now_ms(void);
/* Parser callbacks that call the above: the user pointer points at a
 * struct whose first member, `void *data`, holds the jfrs_fanout_src;
 * on_event returns JFR_CB_PAUSE when the source pauses; on_error counts the
 * error and returns JFR_CB_STOP, as no on_error would (wrap it to skip a
 * damaged chunk). `cb` is initialised first. */
JFRS_API void jfrs_fanout_callbacks(jfr_callbacks *cb);

#ifdef __cplusplus
}
#endif
#endif /* JFRSTREAM_SINK_H */
