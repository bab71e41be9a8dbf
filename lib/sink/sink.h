/*
 * sink.h — private helpers of libjfrstream_sink. Allocation goes through
 * lib/mem.h (jfr__alloc..., with the object's jfr_allocator); text is made
 * in conv's memory writers (jfrc_out_new_memory_advanced) and JSON strings
 * escaped by jfrc_out_json_string, as the converters do.
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#ifndef JFRSTREAM_SINK_PRIVATE_H
#define JFRSTREAM_SINK_PRIVATE_H

#include "jfrstream_conv.h"
#include "mem.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

/* The allocator a caller handed in (NULL: malloc), kept by value. */
static inline jfr_allocator jfrs_allocator(const jfr_allocator *a) {
    return a ? *a : (jfr_allocator){0};
}

/* Wipe a string (a secret: a password, a key) and free it (strlen + 1
 * bytes, as jfr__strdup allocated it). NULL: nothing. */
static inline void jfrs_wipe_free(const jfr_allocator *a, char *s) {
    if (!s)
        return;
    size_t n = strlen(s) + 1;
    explicit_bzero(s, n);
    jfr__free(a, s, n);
}

/* Empty a memory writer, keeping its buffer (and clearing its failure). */
static inline void jfrs_out_reset(jfrc_out *o) {
    char *b = NULL;
    size_t len, cap = 0;
    jfrc_out_swap(o, &b, &len, &cap);
    jfrc_out_swap(o, &b, &len, &cap);
}

/* A memory writer's bytes, NUL-terminated (the NUL is written, not counted
 * in *len); NULL when a write failed. */
static inline const char *jfrs_out_cstr(jfrc_out *o, size_t *len) {
    jfrc_out_putc(o, '\0');
    size_t n = 0;
    const char *d = jfrc_out_data(o, &n);
    if (!d || jfrc_out_failed(o))
        return NULL;
    if (len)
        *len = n - 1;
    return d;
}

/* ---- OTLP JSON (otlp.c): one ExportLogsServiceRequest per event */
struct jfrs_source;
/* {"resourceLogs":[{"resource":{"attributes":[...the labels...]},
 * "scopeLogs":[{"scope":{...},"logRecords":[ */
void jfrs_otlp_begin(jfrc_out *b, const struct jfrs_source *s);
/* One log record: `json` is the event's JSON object ({"type":..,"values":
 * {..}}), its values become the body; `id` the attribute jfr.id. False when `json` is not JSON or
 * memory ran out (a nesting deeper than 64 allocates through `a`). */
bool jfrs_otlp_record(jfrc_out *b, const jfr_allocator *a, const char *type, size_t tlen,
                      int64_t start_ns, int64_t observed_ns, const char *json, size_t len,
                      const char *id, size_t idlen);
/* What closes the request after the record. */
#define JFRS_OTLP_END "]}]}]}"

/* Milliseconds of CLOCK_MONOTONIC: timeouts and retry times. */
static inline uint64_t jfrs_mono_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

#endif
