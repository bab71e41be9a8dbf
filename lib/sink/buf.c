/*
 * buf.c — the sink library's growable buffer (sink.h).
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#include "sink.h"

#include <stdlib.h>
#include <string.h>

static bool grow(jfrs_buf *b, size_t more) {
    if (b->failed)
        return false;
    if (b->len + more < b->len) {
        b->failed = true;
        return false;
    }
    if (b->len + more <= b->cap)
        return true;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + more)
        cap *= 2;
    char *d = realloc(b->data, cap);
    if (!d) {
        b->failed = true;
        return false;
    }
    b->data = d;
    b->cap = cap;
    return true;
}

void jfrs_buf_write(jfrs_buf *b, const void *p, size_t n) {
    if (n && grow(b, n)) {
        memcpy(b->data + b->len, p, n);
        b->len += n;
    }
}

void jfrs_buf_putc(jfrs_buf *b, char c) { jfrs_buf_write(b, &c, 1); }
void jfrs_buf_puts(jfrs_buf *b, const char *s) { jfrs_buf_write(b, s, strlen(s)); }

void jfrs_buf_json_string(jfrs_buf *b, const char *s, size_t n) {
    static const char hex[] = "0123456789abcdef";
    jfrs_buf_putc(b, '"');
    size_t run = 0; /* bytes copied as they are, in one write */
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c != '"' && c != '\\')
            continue;
        jfrs_buf_write(b, s + run, i - run);
        run = i + 1;
        char e[6] = {'\\', 0};
        switch (c) {
        case '"': e[1] = '"'; break;
        case '\\': e[1] = '\\'; break;
        case '\n': e[1] = 'n'; break;
        case '\r': e[1] = 'r'; break;
        case '\t': e[1] = 't'; break;
        default:
            e[1] = 'u';
            e[2] = e[3] = '0';
            e[4] = hex[c >> 4];
            e[5] = hex[c & 15];
            jfrs_buf_write(b, e, 6);
            continue;
        }
        jfrs_buf_write(b, e, 2);
    }
    jfrs_buf_write(b, s + run, n - run);
    jfrs_buf_putc(b, '"');
}

char *jfrs_buf_cstr(jfrs_buf *b) {
    if (!grow(b, 1))
        return NULL;
    b->data[b->len] = '\0';
    return b->data;
}

void jfrs_buf_reset(jfrs_buf *b) { b->len = 0; }

void jfrs_buf_free(jfrs_buf *b) {
    free(b->data);
    *b = (jfrs_buf){0};
}

char *jfrs_strndup(const char *s, size_t n) {
    char *d = malloc(n + 1);
    if (d) {
        memcpy(d, s, n);
        d[n] = '\0';
    }
    return d;
}

char *jfrs_strdup(const char *s) { return jfrs_strndup(s, strlen(s)); }

bool jfrs_array_reserve(void **v, size_t n, size_t *cap, size_t elem, size_t first) {
    if (n < *cap)
        return true;
    size_t c = *cap ? *cap * 2 : first;
    if (c < *cap || c > SIZE_MAX / elem)
        return false;
    void *p = realloc(*v, c * elem);
    if (!p)
        return false;
    *v = p;
    *cap = c;
    return true;
}
