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

#ifdef __cplusplus
}
#endif
#endif /* JFRSTREAM_SINK_H */
