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

#endif
