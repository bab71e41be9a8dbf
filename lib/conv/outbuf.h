/*
 * outbuf.h — a simple buffered writer to a file descriptor or a callback
 * (private to the converter library; public as jfrc_out).
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#ifndef JFRSTREAM_CONV_OUTBUF_H
#define JFRSTREAM_CONV_OUTBUF_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "mem.h"

typedef struct jfrc_out { /* jfrc_out of jfrstream_conv.h */
    char *buf;
    size_t len;
    size_t cap;
    int fd;
    bool failed; /* a write error happened (EPIPE, ENOSPC, ...) */
    int err;     /* the failed write(2)'s errno (0: not a write of ours) */
    void (*before_write)(void *user); /* if set, called before each write */
    void *before_user;
    /* if set, where the bytes go instead of fd: 0 ok, else failed */
    int (*write_fn)(void *user, const void *data, size_t len);
    void *write_user;
    bool grow; /* a memory writer: the buffer grows, a flush keeps the bytes */
    jfr_allocator alloc; /* buf and the struct itself (conv.c) */
} outbuf;

/* Initialise with a buffer of `cap` bytes from `a` (NULL: libc) writing to
 * `fd`. */
bool ob_init(outbuf *o, int fd, size_t cap, const jfr_allocator *a);
void ob_free(outbuf *o);
/* Write everything buffered. Returns false on a write error. */
bool ob_flush(outbuf *o);
/* Slow path of the inline helpers: make room for n bytes. */
void ob_reserve_slow(outbuf *o, size_t n);

/* Slow path of ob_write: no room for n bytes. */
void ob_write_slow(outbuf *o, const char *s, size_t n);
/* What is buffered, then s straight to the destination, not copied (a
 * memory writer appends it). */
void ob_write_direct(outbuf *o, const char *s, size_t n);

static inline void ob_write(outbuf *o, const char *s, size_t n) {
    if (o->cap - o->len < n) {
        ob_write_slow(o, s, n);
        return;
    }
    memcpy(o->buf + o->len, s, n);
    o->len += n;
}

static inline void ob_putc(outbuf *o, char c) {
    if (o->len == o->cap) {
        ob_reserve_slow(o, 1);
        if (o->len == o->cap) /* a memory writer out of memory */
            return;
    }
    o->buf[o->len++] = c;
}

static inline void ob_puts(outbuf *o, const char *s) { ob_write(o, s, strlen(s)); }

/* Repeat character c n times. */
void ob_fill(outbuf *o, char c, size_t n);
/* Decimal integers. */
void ob_i64(outbuf *o, int64_t v);
void ob_u64(outbuf *o, uint64_t v);
/* printf-style (slow path, for rare output). */
void ob_vprintf(outbuf *o, const char *fmt, va_list ap);
void ob_printf(outbuf *o, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

#endif
