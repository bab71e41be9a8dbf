/* Bounds-checked reading of JFR wire values: varints, big-endian fixed
 * widths, and the six string encodings. Every reader returns false (and
 * leaves the cursor unspecified) when the bytes run out or are malformed. */
#ifndef JFR_WIRE_H
#define JFR_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef struct jfr_cur {
    const uint8_t *p;
    const uint8_t *end;
    bool fixed;          /* chunk without the "compressed integers" flag */
    const uint8_t *base; /* start of the region p points into (for offsets) */
    uint64_t tag;        /* region tag OR-ed into offsets (see JFR_POOL_TAG) */
} jfr_cur;

/* String encodings (first byte of a string value). */
enum {
    JFR_STR_NULL = 0,
    JFR_STR_EMPTY = 1,
    JFR_STR_POOL = 2,
    JFR_STR_UTF8 = 3,
    JFR_STR_CHARS = 4,
    JFR_STR_LATIN1 = 5
};

/* LEB128-style JFR varint: at most 9 bytes, the 9th carries 8 full bits;
 * padded (non-minimal) forms are accepted. */
static inline bool jfr__cur_varint(jfr_cur *c, uint64_t *v) {
    const uint8_t *p = c->p;
    if ((size_t)(c->end - p) >= 9) {
        uint64_t r = 0;
        for (int i = 0; i < 8; i++) {
            uint8_t b = p[i];
            r |= (uint64_t)(b & 0x7f) << (7 * i);
            if (!(b & 0x80)) {
                c->p = p + i + 1;
                *v = r;
                return true;
            }
        }
        *v = r | ((uint64_t)p[8] << 56);
        c->p = p + 9;
        return true;
    }
    uint64_t r = 0;
    for (int i = 0; i < 9; i++) {
        if (p + i >= c->end)
            return false;
        uint8_t b = p[i];
        if (i == 8) {
            r |= (uint64_t)b << 56;
            c->p = p + 9;
            *v = r;
            return true;
        }
        r |= (uint64_t)(b & 0x7f) << (7 * i);
        if (!(b & 0x80)) {
            c->p = p + i + 1;
            *v = r;
            return true;
        }
    }
    return false; /* unreachable */
}

/* Skip a varint without decoding it. */
static inline bool jfr__cur_skip_varint(jfr_cur *c) {
    const uint8_t *p = c->p;
    size_t avail = (size_t)(c->end - p);
    size_t lim = avail < 9 ? avail : 9;
    for (size_t i = 0; i < lim; i++) {
        if (i == 8 || !(p[i] & 0x80)) {
            c->p = p + i + 1;
            return true;
        }
    }
    return false;
}

static inline bool jfr__cur_u8(jfr_cur *c, uint8_t *v) {
    if (c->p >= c->end)
        return false;
    *v = *c->p++;
    return true;
}

static inline uint64_t jfr__be(const uint8_t *p, int n) {
    uint64_t r = 0;
    for (int i = 0; i < n; i++)
        r = (r << 8) | p[i];
    return r;
}

static inline bool jfr__cur_be(jfr_cur *c, int n, uint64_t *v) {
    if ((size_t)(c->end - c->p) < (size_t)n)
        return false;
    *v = jfr__be(c->p, n);
    c->p += n;
    return true;
}

static inline bool jfr__cur_skip(jfr_cur *c, uint64_t n) {
    if ((uint64_t)(c->end - c->p) < n)
        return false;
    c->p += n;
    return true;
}

/* Integers of a declared Java width: varints in compressed chunks, big-endian
 * fixed widths otherwise (the widths JMC uses). Callers narrow the result. */
static inline bool jfr__cur_long(jfr_cur *c, uint64_t *v) {
    return c->fixed ? jfr__cur_be(c, 8, v) : jfr__cur_varint(c, v);
}
static inline bool jfr__cur_int(jfr_cur *c, uint64_t *v) {
    return c->fixed ? jfr__cur_be(c, 4, v) : jfr__cur_varint(c, v);
}
static inline bool jfr__cur_short(jfr_cur *c, uint64_t *v) {
    return c->fixed ? jfr__cur_be(c, 2, v) : jfr__cur_varint(c, v);
}

/* A count (array length, string length, pool count...) that must fit in 31 bits. */
static inline bool jfr__cur_count(jfr_cur *c, uint32_t *n) {
    uint64_t v;
    if (!jfr__cur_int(c, &v) || v > 0x7fffffffu)
        return false;
    *n = (uint32_t)v;
    return true;
}

/* Skip a string value of any encoding. */
static inline bool jfr__cur_skip_string(jfr_cur *c) {
    uint8_t enc;
    uint64_t v;
    uint32_t n;
    if (!jfr__cur_u8(c, &enc))
        return false;
    switch (enc) {
    case JFR_STR_NULL:
    case JFR_STR_EMPTY:
        return true;
    case JFR_STR_POOL:
        return jfr__cur_long(c, &v);
    case JFR_STR_UTF8:
    case JFR_STR_LATIN1:
        return jfr__cur_count(c, &n) && jfr__cur_skip(c, n);
    case JFR_STR_CHARS:
        if (!jfr__cur_count(c, &n) || n > (size_t)(c->end - c->p))
            return false;
        if (c->fixed)
            return jfr__cur_skip(c, (uint64_t)n * 2);
        for (uint32_t i = 0; i < n; i++)
            if (!jfr__cur_varint(c, &v))
                return false;
        return true;
    default:
        return false;
    }
}

/* Append the UTF-8 form of code point cp (lone surrogates as WTF-8) to out;
 * returns bytes written (1..4). out needs 4 bytes. */
static inline size_t jfr__utf8_put(uint8_t *out, uint32_t cp) {
    if (cp < 0x80) {
        out[0] = (uint8_t)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (uint8_t)(0xc0 | (cp >> 6));
        out[1] = (uint8_t)(0x80 | (cp & 0x3f));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (uint8_t)(0xe0 | (cp >> 12));
        out[1] = (uint8_t)(0x80 | ((cp >> 6) & 0x3f));
        out[2] = (uint8_t)(0x80 | (cp & 0x3f));
        return 3;
    }
    out[0] = (uint8_t)(0xf0 | (cp >> 18));
    out[1] = (uint8_t)(0x80 | ((cp >> 12) & 0x3f));
    out[2] = (uint8_t)(0x80 | ((cp >> 6) & 0x3f));
    out[3] = (uint8_t)(0x80 | (cp & 0x3f));
    return 4;
}

/* Convert a UTF-16 char-array string payload (count already read: n units
 * follow at c) into UTF-8 at out (needs 3*n bytes). Returns bytes written or
 * -1 on malformed input. Surrogate pairs combine; lone ones stay WTF-8. */
long jfr__wire_chars_to_utf8(jfr_cur *c, uint32_t n, uint8_t *out);
/* Latin-1 bytes to UTF-8 (out needs 2*n bytes); returns bytes written. */
size_t jfr__wire_latin1_to_utf8(const uint8_t *in, size_t n, uint8_t *out);

#endif
