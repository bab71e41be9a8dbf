/*
 * sink.h — private helpers of libjfrstream_sink: a growable byte buffer
 * with JSON string escaping (labels, message envelopes).
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#ifndef JFRSTREAM_SINK_PRIVATE_H
#define JFRSTREAM_SINK_PRIVATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

/* Zero-initialise; a failed growth sets `failed` and drops later bytes. */
typedef struct jfrs_buf {
    char *data;
    size_t len, cap;
    bool failed;
} jfrs_buf;

void jfrs_buf_write(jfrs_buf *b, const void *p, size_t n);
void jfrs_buf_putc(jfrs_buf *b, char c);
void jfrs_buf_puts(jfrs_buf *b, const char *s);
/* `"..."` with JSON escapes (control characters as \u00XX; UTF-8 kept). */
void jfrs_buf_json_string(jfrs_buf *b, const char *s, size_t n);
/* NUL-terminate (not counted in len); NULL when a growth failed. */
char *jfrs_buf_cstr(jfrs_buf *b);
void jfrs_buf_reset(jfrs_buf *b); /* len 0, keeps the memory */
void jfrs_buf_free(jfrs_buf *b);

/* A copy of s[0..n) / of s, NUL-terminated; NULL when out of memory. */
char *jfrs_strndup(const char *s, size_t n);
char *jfrs_strdup(const char *s);
/* Room for one more element in the array *v of *n used of *cap, `elem`
 * bytes each (capacity doubled, from `first`); false when out of memory. */
bool jfrs_array_reserve(void **v, size_t n, size_t *cap, size_t elem, size_t first);

/* ---- OTLP JSON (otlp.c): one ExportLogsServiceRequest per event */
struct jfrs_source;
/* {"resourceLogs":[{"resource":{"attributes":[...the labels...]},
 * "scopeLogs":[{"scope":{...},"logRecords":[ */
void jfrs_otlp_begin(jfrs_buf *b, const struct jfrs_source *s);
/* One log record: `json` is the event's JSON object ({"type":..,"values":
 * {..}}), its values become the body. False when `json` is not JSON. */
bool jfrs_otlp_record(jfrs_buf *b, const char *type, size_t tlen, int64_t start_ns,
                      int64_t observed_ns, const char *json, size_t len);
/* What closes the request after the record. */
#define JFRS_OTLP_END "]}]}]}"

/* Milliseconds of CLOCK_MONOTONIC: timeouts and retry times. */
static inline uint64_t jfrs_mono_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

#endif
