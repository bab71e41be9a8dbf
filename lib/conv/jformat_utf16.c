/*
 * jformat_utf16.c — UTF-8 read as Java's UTF-16 units, with new String(bytes,
 * UTF_8)'s replacements (see jformat.h).
 *
 * Written from the documented behaviour of the Java SE APIs and verified
 * against the JDK.
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#include "jformat.h"

#include <string.h>

#define REPL 0xFFFD

static bool not_cont(unsigned b) { return (b & 0xC0) != 0x80; }

/* The replacement rules of new String(bytes, UTF_8), JDK 25: how many
 * bytes one U+FFFD stands for depends on where the sequence breaks. */
int jfmt_u16_next(jfmt_u16_iter *it) {
    if (it->pending >= 0) {
        int u = it->pending;
        it->pending = -1;
        return u;
    }
    const unsigned char *p = it->p, *end = it->end;
    if (p >= end)
        return -1;
    unsigned b1 = *p++;
    if (b1 < 0x80) {
        it->p = p;
        return (int)b1;
    }
    if (b1 >= 0xC2 && b1 <= 0xDF) {
        if (p < end) {
            unsigned b2 = *p;
            if (not_cont(b2)) {
                it->p = p;
                return REPL;
            }
            it->p = p + 1;
            return (int)(((b1 & 0x1F) << 6) | (b2 & 0x3F));
        }
        it->p = end;
        return REPL;
    }
    if ((b1 & 0xF0) == 0xE0) {
        if (end - p >= 2) {
            unsigned b2 = p[0], b3 = p[1];
            bool bad2 = (b1 == 0xE0 && (b2 & 0xE0) == 0x80) || not_cont(b2);
            if (bad2 || not_cont(b3)) {
                it->p = p + (bad2 ? 0 : 1);
                return REPL;
            }
            unsigned c = ((b1 & 0x0F) << 12) | ((b2 & 0x3F) << 6) | (b3 & 0x3F);
            it->p = p + 2;
            if (c >= 0xD800 && c <= 0xDFFF && it->java)
                return REPL;
            return (int)c;
        }
        if (p < end && ((b1 == 0xE0 && (*p & 0xE0) == 0x80) || not_cont(*p))) {
            it->p = p;
            return REPL;
        }
        it->p = end;
        return REPL;
    }
    if ((b1 & 0xF8) == 0xF0) {
        if (end - p >= 3) {
            unsigned b2 = p[0], b3 = p[1], b4 = p[2];
            uint32_t uc = ((b1 & 0x07u) << 18) | ((b2 & 0x3Fu) << 12) | ((b3 & 0x3Fu) << 6) | (b4 & 0x3Fu);
            if (not_cont(b2) || not_cont(b3) || not_cont(b4) || uc < 0x10000 || uc > 0x10FFFF) {
                int adv;
                if (b1 > 0xF4 || (b1 == 0xF0 && (b2 < 0x90 || b2 > 0xBF)) ||
                    (b1 == 0xF4 && (b2 & 0xF0) != 0x80) || not_cont(b2))
                    adv = 0;
                else if (not_cont(b3))
                    adv = 1;
                else
                    adv = 2;
                it->p = p + adv;
                return REPL;
            }
            it->p = p + 3;
            it->pending = (int)(0xDC00 + ((uc - 0x10000) & 0x3FF));
            return (int)(0xD800 + ((uc - 0x10000) >> 10));
        }
        if (b1 > 0xF4 ||
            (p < end && ((b1 == 0xF0 && (*p < 0x90 || *p > 0xBF)) ||
                         (b1 == 0xF4 && (*p & 0xF0) != 0x80) || not_cont(*p)))) {
            it->p = p;
            return REPL;
        }
        /* a valid start of a truncated 4-byte sequence */
        if (p < end)
            p++;
        if (p < end && not_cont(*p))
            it->p = p;
        else
            it->p = end;
        return REPL;
    }
    it->p = p;
    return REPL;
}

void jfmt_u16_init(jfmt_u16_iter *it, const char *s, size_t len, bool java) {
    it->p = (const unsigned char *)s;
    it->end = it->p + len;
    it->pending = -1;
    it->java = java;
}

size_t jfmt_utf16_length(const char *s, size_t len) {
    jfmt_u16_iter it;
    jfmt_u16_init(&it, s, len, false);
    size_t n = 0;
    while (jfmt_u16_next(&it) >= 0)
        n++;
    return n;
}

int jfmt_utf16_compare(const char *a, const char *b) {
    jfmt_u16_iter x, y;
    jfmt_u16_init(&x, a, strlen(a), false);
    jfmt_u16_init(&y, b, strlen(b), false);
    for (;;) {
        int u = jfmt_u16_next(&x), v = jfmt_u16_next(&y);
        if (u != v)
            return u < v ? -1 : 1; /* -1 (end) sorts first */
        if (u < 0)
            return 0;
    }
}
