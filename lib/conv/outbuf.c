/*
 * outbuf.c — buffered writer to a file descriptor or a callback.
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#include "outbuf.h"
#include "digits.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

bool ob_init(outbuf *o, int fd, size_t cap, const jfr_allocator *a) {
    o->alloc = a ? *a : (jfr_allocator){0};
    o->buf = jfr__alloc(&o->alloc, cap);
    o->len = 0;
    o->cap = o->buf ? cap : 0;
    o->fd = fd;
    o->failed = false;
    o->err = 0;
    o->before_write = NULL;
    o->before_user = NULL;
    o->write_fn = NULL;
    o->write_user = NULL;
    o->grow = false;
    return o->buf != NULL;
}

void ob_free(outbuf *o) {
    jfr__free(&o->alloc, o->buf, o->cap);
    o->buf = NULL;
    o->cap = o->len = 0;
}

/* Bytes straight to the destination (nothing buffered before them). */
static void ob_send(outbuf *o, const char *s, size_t n) {
    if (!n || o->failed)
        return;
    if (o->before_write)
        o->before_write(o->before_user);
    if (o->write_fn) {
        if (o->write_fn(o->write_user, s, n) != 0)
            o->failed = true;
        return;
    }
    while (n) {
        ssize_t k = write(o->fd, s, n);
        if (k < 0) {
            if (errno == EINTR)
                continue;
            o->failed = true;
            o->err = errno;
            return;
        }
        s += k;
        n -= (size_t)k;
    }
}

bool ob_flush(outbuf *o) {
    if (o->grow)
        return !o->failed;
    size_t off = 0;
    if (o->len && o->before_write)
        o->before_write(o->before_user);
    if (o->write_fn && o->len && !o->failed && o->write_fn(o->write_user, o->buf, o->len) != 0)
        o->failed = true;
    while (!o->write_fn && off < o->len && !o->failed) {
        ssize_t n = write(o->fd, o->buf + off, o->len - off);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            o->failed = true;
            o->err = errno;
            break;
        }
        off += (size_t)n;
    }
    o->len = 0;
    return !o->failed;
}

void ob_reserve_slow(outbuf *o, size_t n) {
    if (!o->grow) {
        ob_flush(o);
        return;
    }
    if (o->failed || o->cap - o->len >= n)
        return;
    size_t c = o->cap ? o->cap : 4096;
    while (c - o->len < n) {
        if (c > SIZE_MAX / 2) {
            o->failed = true;
            return;
        }
        c *= 2;
    }
    char *b = jfr__realloc(&o->alloc, o->buf, o->cap, c);
    if (!b) {
        o->failed = true;
        return;
    }
    o->buf = b;
    o->cap = c;
}

void ob_write_slow(outbuf *o, const char *s, size_t n) {
    ob_reserve_slow(o, n);
    if (o->grow) {
        if (o->cap - o->len >= n) {
            memcpy(o->buf + o->len, s, n);
            o->len += n;
        }
        return; /* out of memory: dropped, the writer failed */
    }
    if (n >= o->cap / 2) { /* large: not copied through the buffer */
        ob_send(o, s, n);
        return;
    }
    memcpy(o->buf + o->len, s, n);
    o->len += n;
}

void ob_write_direct(outbuf *o, const char *s, size_t n) {
    if (o->grow) {
        ob_write(o, s, n);
        return;
    }
    ob_flush(o);
    ob_send(o, s, n);
}

void ob_fill(outbuf *o, char c, size_t n) {
    while (n > 0) {
        if (o->len == o->cap) {
            ob_reserve_slow(o, n);
            if (o->len == o->cap)
                return; /* a memory writer out of memory */
        }
        size_t k = o->cap - o->len;
        if (k > n)
            k = n;
        memset(o->buf + o->len, c, k);
        o->len += k;
        n -= k;
    }
}

void ob_u64(outbuf *o, uint64_t v) {
    char t[JFR_DIGITS_MAX], *s = jfr__digits_back(t + sizeof t, v);
    ob_write(o, s, (size_t)(t + sizeof t - s));
}

void ob_i64(outbuf *o, int64_t v) {
    if (v < 0) {
        ob_putc(o, '-');
        ob_u64(o, (uint64_t)0 - (uint64_t)v);
    } else {
        ob_u64(o, (uint64_t)v);
    }
}

void ob_vprintf(outbuf *o, const char *fmt, va_list ap) {
    char tmp[512];
    va_list again;
    va_copy(again, ap);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    if (n >= 0 && (size_t)n < sizeof tmp) {
        ob_write(o, tmp, (size_t)n);
    } else if (n >= 0) {
        char *big = jfr__alloc(&o->alloc, (size_t)n + 1);
        if (big) {
            vsnprintf(big, (size_t)n + 1, fmt, again);
            ob_write(o, big, (size_t)n);
            jfr__free(&o->alloc, big, (size_t)n + 1);
        }
    }
    va_end(again);
}

void ob_printf(outbuf *o, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    ob_vprintf(o, fmt, ap);
    va_end(ap);
}
