/*
 * jformat_json.c — JSON string bodies as the JDK's JSONWriter escapes a
 * java.lang.String (see jformat.h).
 *
 * Written from the documented behaviour of the Java SE APIs and verified
 * against the JDK.
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#include "jformat.h"

#include <string.h>

/* Bytes copied as they are: printable ASCII except " \\ / (and DEL, which
 * the JDK prints raw but is rare enough for the slow path). */
#define P16 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1
static const unsigned char json_plain[256] = {
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, /* 0x00 */
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, /* 0x10 */
    1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, /* 0x20: " and / */
    P16,                                            /* 0x30 */
    P16,                                            /* 0x40 */
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1, /* 0x50: \\ */
    P16,                                            /* 0x60 */
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, /* 0x70: DEL */
};
#undef P16

/* Two hex digits of a byte, in memory order (little-endian words). */
#define HX(n) ((n) < 10 ? '0' + (n) : 'a' + (n)-10)
#define H1(b) (uint16_t)(HX((b) >> 4) | HX((b)&15) << 8)
#define H4(b) H1(b), H1(b + 1), H1(b + 2), H1(b + 3)
#define H16(b) H4(b), H4(b + 4), H4(b + 8), H4(b + 12)
#define H64(b) H16(b), H16(b + 16), H16(b + 32), H16(b + 48)
static const uint16_t hex2[256] = {H64(0), H64(64), H64(128), H64(192)};
#undef H64
#undef H16
#undef H4
#undef H1
#undef HX

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
/* \uXXXX for the unit c at d, 8 bytes stored; returns its end. Built in a
 * register and stored at once: six byte stores read back as one word
 * stalled the store-to-load forwarding (a third of the time of escaped
 * text). */
static inline char *json_escape_u_at(char *d, unsigned c) {
    uint64_t w = (uint64_t)'\\' | (uint64_t)'u' << 8 | (uint64_t)hex2[(c >> 8) & 255] << 16 |
                 (uint64_t)hex2[c & 255] << 32;
    memcpy(d, &w, 8);
    return d + 6;
}
#endif

/* \uXXXX for the unit c. */
static inline void json_escape_u(outbuf *o, unsigned c) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if (o->cap - o->len >= 8) {
        o->len = (size_t)(json_escape_u_at(o->buf + o->len, c) - o->buf);
        return;
    }
    char t[8];
    json_escape_u_at(t, c);
#else
    static const char hexdig[] = "0123456789abcdef";
    char t[6] = {'\\', 'u', hexdig[(c >> 12) & 15], hexdig[(c >> 8) & 15], hexdig[(c >> 4) & 15],
                 hexdig[c & 15]};
#endif
    ob_write(o, t, 6);
}

/* The second character of the two-character escapes; 0: none. Read by
 * json_unit and by jfmt_json_string's fast path. */
static const char json_esc2[128] = {['\b'] = 'b', ['\n'] = 'n', ['\t'] = 't', ['\f'] = 'f',
                                    ['\r'] = 'r', ['"'] = '"',  ['\\'] = '\\', ['/'] = '/'};

static void json_unit(outbuf *o, unsigned c) {
    if (c < sizeof json_esc2 && json_esc2[c]) {
        const char t[2] = {'\\', json_esc2[c]};
        ob_write(o, t, 2);
        return;
    }
    if (c > 0x7F || c < 0x20) {
        json_escape_u(o, c);
        return;
    }
    ob_putc(o, (char)c);
}

void jfmt_json_char(outbuf *o, uint32_t unit) { json_unit(o, unit & 0xFFFF); }

/* Bit 7 set in each byte of the word that is not json_plain: below 0x20,
 * 0x7F or above, '"', '/' or '\\'. Exact up to the first such byte (a
 * borrow only spreads above a byte that already matched), so the lowest set
 * bit finds the first special byte. */
static inline uint64_t json_word_special(uint64_t w) {
    const uint64_t ones = 0x0101010101010101ull, high = 0x8080808080808080ull;
#define HAS_ZERO(v) (((v) - ones) & ~(v) & high)
    uint64_t q = w ^ (ones * '"'), sl = w ^ (ones * '/'), bs = w ^ (ones * '\\'),
             del = w ^ (ones * 0x7F);
    return (w & high) | ((w - ones * 0x20) & ~w & high) | HAS_ZERO(q) | HAS_ZERO(sl) |
           HAS_ZERO(bs) | HAS_ZERO(del);
#undef HAS_ZERO
}

/* The well-formed two-, three- or four-byte sequence at b (avail bytes):
 * its length, its UTF-16 unit in *u and, for a pair, the high surrogate in
 * *hi (else 0); 0 when it is not one of those every decoder reads alike (it
 * then goes through the JDK's replacement rules). */
static inline size_t json_utf8_seq(const unsigned char *b, size_t avail, unsigned *hi,
                                   unsigned *u) {
    unsigned b0 = b[0];
    *hi = 0;
    if (b0 <= 0xDF) {
        if (b0 < 0xC2 || avail < 2 || (b[1] & 0xC0) != 0x80)
            return 0;
        *u = (b0 & 0x1Fu) << 6 | (b[1] & 0x3Fu);
        return 2;
    }
    if (b0 <= 0xEF) {
        if (b0 == 0xE0 || b0 == 0xED || avail < 3 || (b[1] & 0xC0) != 0x80 ||
            (b[2] & 0xC0) != 0x80)
            return 0;
        *u = (b0 & 0x0Fu) << 12 | (b[1] & 0x3Fu) << 6 | (b[2] & 0x3Fu);
        return 3;
    }
    if (b0 > 0xF4 || avail < 4 || (b[1] & 0xC0) != 0x80 || (b[2] & 0xC0) != 0x80 ||
        (b[3] & 0xC0) != 0x80)
        return 0;
    uint32_t uc = (b0 & 0x07u) << 18 | (b[1] & 0x3Fu) << 12 | (b[2] & 0x3Fu) << 6 | (b[3] & 0x3Fu);
    if (uc < 0x10000 || uc > 0x10FFFF)
        return 0;
    *hi = 0xD800 + ((uc - 0x10000) >> 10);
    *u = 0xDC00 + ((uc - 0x10000) & 0x3FF);
    return 4;
}

/* The well-formed sequences at the start of the non-ASCII run s[j..k),
 * escaped. Returns where the first other sequence starts (k if none): that
 * one, and the rest of the run, go through the JDK's replacement rules. */
static size_t json_utf8_wellformed(outbuf *o, const unsigned char *s, size_t j, size_t k) {
    while (j < k) {
        unsigned hi, u;
        size_t n = json_utf8_seq(s + j, k - j, &hi, &u);
        if (!n)
            break;
        if (hi)
            json_escape_u(o, hi);
        json_escape_u(o, u);
        j += n;
    }
    return j;
}

#if defined(__GNUC__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#if defined(__SSE2__)
#include <emmintrin.h>
#define JSON_SSE2 1
#endif
#endif

#if defined(__GNUC__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
/* The next block of s (avail >= 8 bytes: 16 of them with SSE2 when there
 * are, else 8) stored at d as loaded; *block its size. Returns how many of
 * its bytes come before the first special one (below 0x20 or from 0x80, a
 * signed compare taking both; DEL, '"', '/', '\\'): *block when none is. */
static inline unsigned json_block(const char *s, size_t avail, char *d, unsigned *block) {
#ifdef JSON_SSE2
    if (avail >= 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)s);
        _mm_storeu_si128((__m128i *)(void *)d, v);
        __m128i sp = _mm_or_si128(
            _mm_or_si128(_mm_cmplt_epi8(v, _mm_set1_epi8(0x20)),
                         _mm_cmpeq_epi8(v, _mm_set1_epi8(0x7F))),
            _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('"')),
                                      _mm_cmpeq_epi8(v, _mm_set1_epi8('/'))),
                         _mm_cmpeq_epi8(v, _mm_set1_epi8('\\'))));
        unsigned mm = (unsigned)_mm_movemask_epi8(sp);
        *block = 16;
        return mm ? (unsigned)__builtin_ctz(mm) : 16;
    }
#endif
    (void)avail;
    uint64_t w, m;
    memcpy(&w, s, 8);
    memcpy(d, &w, 8);
    *block = 8;
    return (m = json_word_special(w)) != 0 ? (unsigned)__builtin_ctzll(m) >> 3 : 8;
}
#endif

void jfmt_json_string(outbuf *o, const char *s, size_t len, bool java_utf8) {
    size_t i = 0;
    while (i < len) {
        size_t j = i;
#if defined(__GNUC__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        /* plain printable ASCII eight bytes at a time, each word stored as
         * loaded and the end advanced to its first special byte, which is
         * escaped in place when it is an ASCII escape or a well-formed
         * sequence: no copy call and no trip through the general loop for
         * the short runs between escapes (text in other scripts). Room: a
         * 16-byte block, then up to 15 bytes on and a surrogate pair (14
         * bytes). */
        if (o->cap - o->len >= 32) {
            char *d = o->buf + o->len, *dend = o->buf + o->cap - 32;
            uint64_t w, m;
            for (;;) {
                unsigned k;
                if (j + 8 > len || d > dend)
                    break;
                unsigned block;
                k = json_block(s + j, len - j, d, &block);
                d += k;
                j += k;
                if (k == block)
                    continue;
                unsigned char c = (unsigned char)s[j];
                if (c >= 0x80) {
                    /* this sequence and those right after it */
                    do {
                        unsigned hi, u;
                        size_t n = json_utf8_seq((const unsigned char *)s + j, len - j, &hi, &u);
                        if (!n)
                            goto stored; /* the JDK's replacement rules, below */
                        if (hi)
                            d = json_escape_u_at(d, hi);
                        d = json_escape_u_at(d, u);
                        j += n;
                    } while (j < len && (unsigned char)s[j] >= 0x80 && d <= dend);
                } else {
                    if (json_esc2[c]) {
                        d[0] = '\\';
                        d[1] = json_esc2[c];
                        d += 2;
                    } else if (c < 0x20) {
                        d = json_escape_u_at(d, c);
                    } else {
                        *d++ = (char)c; /* DEL, as the JDK writes it */
                    }
                    j++;
                }
            }
            /* the last 1..7 bytes: the string's last word, shifted down */
            if (j < len && len >= 8 && d <= dend) {
                unsigned r = (unsigned)(len - j);
                memcpy(&w, s + len - 8, 8);
                w >>= 8 * (8 - r);
                memcpy(d, &w, 8);
                m = json_word_special(w) & ((1ull << 8 * r) - 1);
                unsigned k = m ? (unsigned)__builtin_ctzll(m) >> 3 : r;
                d += k;
                j += k;
            }
        stored:
            o->len = (size_t)(d - o->buf);
            i = j;
        }
#else
        for (uint64_t w; j + 8 <= len && (memcpy(&w, s + j, 8), !json_word_special(w));)
            j += 8;
#endif
        while (j < len && json_plain[(unsigned char)s[j]])
            j++;
        if (j > i)
            ob_write(o, s + i, j - i);
        if (j >= len)
            return;
        unsigned char c = (unsigned char)s[j];
        if (c < 0x80) {
            json_unit(o, c);
            i = j + 1;
            continue;
        }
        /* a non-ASCII sequence: decode up to the next ASCII byte */
        size_t k = j + 1;
#if defined(__GNUC__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        for (uint64_t w, a; k + 8 <= len; k += 8) {
            memcpy(&w, s + k, 8);
            if ((a = ~w & 0x8080808080808080ull) != 0) {
                k += (unsigned)__builtin_ctzll(a) >> 3;
                break;
            }
        }
#endif
        while (k < len && (unsigned char)s[k] >= 0x80)
            k++;
        j = json_utf8_wellformed(o, (const unsigned char *)s, j, k);
        if (j >= k) {
            i = j;
            continue;
        }
        jfmt_u16_iter it;
        jfmt_u16_init(&it, s + j, len - j, java_utf8);
        int u;
        /* decode while inside the non-ASCII run; the decoder may stop
         * early (Java drops the tail after some truncated sequences) */
        while (it.pending >= 0 || (it.p < (const unsigned char *)s + k)) {
            u = jfmt_u16_next(&it);
            if (u < 0)
                break;
            json_unit(o, (unsigned)u);
        }
        i = (size_t)((const char *)it.p - s);
    }
}

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
/* ASCII unit c (a special one, or DEL, or one from a longer varint than
 * it needs) escaped at d as the JDK writes it; 8 bytes of room. */
static inline char *json_ascii_at(char *d, unsigned c) {
    if (json_esc2[c]) {
        d[0] = '\\';
        d[1] = json_esc2[c];
        return d + 2;
    }
    if (c < 0x20)
        return json_escape_u_at(d, c);
    *d = (char)c;
    return d + 1;
}
#endif

/* The unit at p escaped through json_unit (the path without room for the
 * blocks): returns where the next one starts. */
static const unsigned char *json_chars_unit(outbuf *o, const unsigned char *p,
                                            const unsigned char *end) {
    size_t n = 1;
    unsigned u = *p < 0x80 ? *p : jfmt__varint_unit(p, end, &n);
    json_unit(o, u);
    return p + n;
}

void jfmt_json_chars(outbuf *o, const char *s, size_t len) {
    const unsigned char *p = (const unsigned char *)s, *end = p + len;
    while (p < end) {
        if (o->cap - o->len < 64)
            ob_reserve_slow(o, 64);
        if (o->cap - o->len < 64) { /* a tiny or failed buffer: unit by unit */
            if (o->failed)
                return;
            p = json_chars_unit(o, p, end);
            continue;
        }
#if defined(__GNUC__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        /* As jfmt_json_string's fast path: ASCII units are single bytes
         * below 0x80, so the same blocks store them and stop at the first
         * special byte, which here starts a varint of two bytes or more
         * (a unit from U+0080: \uXXXX) or is an ASCII escape. Room: a
         * 16-byte block or an 8-byte escape store. */
        char *d = o->buf + o->len, *dend = o->buf + o->cap - 32;
        while (p < end && d <= dend) {
            unsigned k;
            uint64_t w;
            if (end - p >= 8) {
                unsigned block;
                k = json_block((const char *)p, (size_t)(end - p), d, &block);
                if (k == block) {
                    d += k;
                    p += k;
                    continue;
                }
            } else {
                k = 0;
                while (p + k < end && json_plain[p[k]])
                    d[k] = (char)p[k], k++;
                if (p + k == end) {
                    d += k;
                    p += k;
                    break;
                }
            }
            d += k;
            p += k;
            if (*p < 0x80) {
                d = json_ascii_at(d, *p++);
                continue;
            }
            /* this unit and the non-ASCII ones right after it (words in
             * other scripts) without going back to the blocks; two- and
             * three-byte varints decoded without a branch on their size */
            do {
                unsigned c;
                size_t n;
                if (end - p >= 8) {
                    memcpy(&w, p, 8);
                    uint64_t c1 = (w >> 15) & 1;
                    if (c1 && (w & 0x800000)) {
                        c = jfmt__varint_unit(p, end, &n); /* four bytes or more */
                    } else {
                        c = (unsigned)(((w & 0x7f) | ((w >> 1) & 0x3f80) |
                                        ((w >> 2) & 0x1fc000 & (0 - c1))) &
                                       0xffff);
                        n = 2 + (size_t)c1;
                    }
                } else {
                    c = jfmt__varint_unit(p, end, &n);
                }
                p += n;
                d = c >= 0x80 ? json_escape_u_at(d, c) : json_ascii_at(d, c);
            } while (p < end && *p >= 0x80 && d <= dend);
        }
        o->len = (size_t)(d - o->buf);
#else
        p = json_chars_unit(o, p, end);
#endif
    }
}
