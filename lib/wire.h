/* Bounds-checked reading of JFR wire values: varints, big-endian fixed
 * widths, and the six string encodings. Every reader returns false (and
 * leaves the cursor unspecified) when the bytes run out or are malformed. */
#ifndef JFR_WIRE_H
#define JFR_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#if defined(__SSE2__) && defined(__GNUC__)
#include <emmintrin.h>
#endif

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

#if defined(__SSE2__) && defined(__GNUC__)
/* Eight bytes in a row with the sign bit set (bits of k): a 9-byte varint
 * may be there, whose last byte carries 8 bits and ends it whatever its
 * sign bit, so counting terminators would be wrong (a word of 8 bytes
 * cannot hold such a varint and its end). */
static inline bool run8(uint64_t k) {
    k &= k >> 1;
    k &= k >> 2;
    k &= k >> 4;
    return k != 0;
}

/* The sign bits of the 64 bytes at p, byte i's in bit i. */
static inline uint64_t sign_bits64(const uint8_t *p) {
    const __m128i *q = (const __m128i *)(const void *)p;
    return (uint64_t)(unsigned)_mm_movemask_epi8(_mm_loadu_si128(q)) |
           (uint64_t)(unsigned)_mm_movemask_epi8(_mm_loadu_si128(q + 1)) << 16 |
           (uint64_t)(unsigned)_mm_movemask_epi8(_mm_loadu_si128(q + 2)) << 32 |
           (uint64_t)(unsigned)_mm_movemask_epi8(_mm_loadu_si128(q + 3)) << 48;
}
#endif

/* Bits set in t (no popcnt instruction in baseline x86-64). */
static inline unsigned jfr__bit_count(uint64_t t) {
    t -= (t >> 1) & 0x5555555555555555ull;
    t = (t & 0x3333333333333333ull) + ((t >> 2) & 0x3333333333333333ull);
    return (unsigned)((((t + (t >> 4)) & 0x0f0f0f0f0f0f0f0full) * 0x0101010101010101ull) >> 56);
}

#if defined(__GNUC__)
/* The index of t's m-th set bit, from the lowest (1 <= m <= its bits). */
static inline unsigned jfr__nth_bit(uint64_t t, uint64_t m) {
    for (uint64_t j = 1; j < m; j++)
        t &= t - 1;
    return (unsigned)__builtin_ctzll(t);
}
#endif

#if defined(__SSE2__) && defined(__GNUC__)
/* The long-run loop of jfr__cur_skip_varints below (out of line: it runs
 * on 64-byte blocks with AVX2 and POPCNT when `wide` and the CPU has them,
 * else with SSE2; tests run both). */
const uint8_t *jfr__skip_varint_blocks(const uint8_t *p, const uint8_t *end, uint64_t *m,
                                       unsigned *open, bool wide);
#endif

/* Skip m varints. Where a loaded word starts at a varint's first byte, the
 * bytes up to its last terminator (a byte below 0x80) are whole varints of
 * at most 8 bytes each, one per terminator: they go at once; with more
 * terminators than varints left, up to the m-th. */
static inline bool jfr__cur_skip_varints(jfr_cur *c, uint64_t m) {
    const uint8_t *p = c->p;
#if defined(__SSE2__) && defined(__GNUC__)
    /* Long runs (strings of thousands of units): whole 64-byte blocks while
     * 64 varints or more remain. Wherever a block starts, its terminators
     * are the varints that end in it; one left unfinished at its end (the
     * block's trailing sign bits) is finished by the next. At a possible
     * 9-byte varint, inside a block or across two, the loop stops and
     * goes back to that varint's first byte for the code below. */
    unsigned open = 0; /* bytes of the unfinished varint before p */
    if (m >= 64 && (size_t)(c->end - p) >= 64)
        p = jfr__skip_varint_blocks(p, c->end, &m, &open, true);
    p -= open; /* its terminator is not counted yet */
#endif
    while (m) {
#if defined(__SSE2__) && defined(__GNUC__)
        /* 64 bytes, then 16: the terminators are the bytes with the sign
         * bit clear (one dependent step per block, not per word) */
        if ((size_t)(c->end - p) >= 64 && m >= 8) {
            uint64_t k = sign_bits64(p), t = ~k;
            if (t && !run8(k)) {
                unsigned cnt = jfr__bit_count(t);
                if (cnt <= m) {
                    p += 64u - (unsigned)__builtin_clzll(t);
                    m -= cnt;
                    continue;
                }
            }
        }
        if ((size_t)(c->end - p) >= 16) {
            __m128i x = _mm_loadu_si128((const __m128i *)(const void *)p);
            unsigned k = (unsigned)_mm_movemask_epi8(x);
            unsigned t = ~k & 0xffffu;
            if (t && !run8(k)) {
                unsigned cnt = jfr__bit_count(t);
                if (cnt <= m) {
                    p += 32u - (unsigned)__builtin_clz(t);
                    m -= cnt;
                    continue;
                }
                /* fewer left than end here (a few fields of an event):
                 * the m-th terminator */
                p += jfr__nth_bit(t, m) + 1;
                break;
            }
        }
#endif
#if defined(__GNUC__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        if ((size_t)(c->end - p) >= 8) {
            uint64_t w;
            memcpy(&w, p, 8);
            uint64_t t = ~w & 0x8080808080808080ull;
            if (t) {
                /* t has bits 7, 15, ..., 63 only: sum them in the top byte */
                unsigned cnt = (unsigned)(((t >> 7) * 0x0101010101010101ull) >> 56);
                if (cnt <= m) {
                    p += (63u - (unsigned)__builtin_clzll(t)) / 8 + 1;
                    m -= cnt;
                    continue;
                }
                p += jfr__nth_bit(t, m) / 8 + 1;
                break;
            }
        }
#endif
        jfr_cur one = {p, c->end, false, c->base, c->tag};
        if (!jfr__cur_skip_varint(&one))
            return false;
        p = one.p;
        m--;
    }
    c->p = p;
    return true;
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
/* The same for a compressed payload, through the 32-byte blocks when `wide`
 * and the CPU has them (AVX2), else the 16-byte ones: tests run both. */
long jfr__wire_chars_varint_at(jfr_cur *c, uint32_t n, uint8_t *out, bool wide);
/* Latin-1 bytes to UTF-8 (out needs 2*n bytes); returns bytes written. */
size_t jfr__wire_latin1_to_utf8(const uint8_t *in, size_t n, uint8_t *out);

/* ------------------------------------------------------------- strings */

/* A string value as jfr__cur_string read it. */
typedef struct jfr_wstr {
    uint8_t enc;     /* JFR_STR_* */
    uint64_t key;    /* JFR_STR_POOL: the key into the string pool */
    const char *str; /* UTF-8 (NULL for JFR_STR_NULL; unset when skipping) */
    size_t len;
} jfr_wstr;

/* What jfr__cur_string does with the characters. */
enum {
    JFR__STR_SKIP,   /* only moves past them */
    JFR__STR_BORROW, /* UTF-8 and ASCII Latin-1 point into the bytes; other
                        strings are converted into room(ctx, n) */
    JFR__STR_COPY    /* every string is converted or copied into room(ctx, n),
                        NUL-terminated */
};

/* What jfr__cur_string found wrong (0: nothing). */
enum {
    JFR__STR_END = 1,   /* no encoding byte */
    JFR__STR_BAD_LEN,   /* the length is out of range */
    JFR__STR_TRUNCATED, /* the UTF-16 units run out */
    JFR__STR_BAD_ENC,   /* an unknown encoding (in out->enc) */
    JFR__STR_NOMEM      /* room() returned NULL */
};

/* The one decoder of the six string encodings: reads a string value at the
 * cursor into *out. `mode` is a constant at every call site, so that each
 * inlined copy keeps only its own work (a skip converts nothing). room(ctx,
 * n) gives n writable bytes (not called when skipping). Returns 0 or a
 * JFR__STR_* problem; out->enc is set once the encoding byte was read. */
static inline int jfr__cur_string(jfr_cur *c, int mode, char *(*room)(void *, size_t),
                                  void *ctx, jfr_wstr *out) {
    uint8_t enc;
    uint32_t n;
    char *d;
    if (!jfr__cur_u8(c, &enc))
        return JFR__STR_END;
    out->enc = enc;
    out->str = "";
    out->len = 0;
    switch (enc) {
    case JFR_STR_NULL:
        out->str = NULL;
        return 0;
    case JFR_STR_EMPTY:
        return 0;
    case JFR_STR_POOL:
        return jfr__cur_long(c, &out->key) ? 0 : JFR__STR_BAD_LEN;
    case JFR_STR_UTF8:
    case JFR_STR_LATIN1: {
        if (!jfr__cur_count(c, &n) || n > (size_t)(c->end - c->p))
            return JFR__STR_BAD_LEN;
        const uint8_t *b = c->p;
        c->p += n;
        if (mode == JFR__STR_SKIP)
            return 0;
        if (mode == JFR__STR_BORROW) {
            size_t i = 0;
            if (enc == JFR_STR_LATIN1)
                while (i < n && b[i] < 0x80)
                    i++;
            if (enc == JFR_STR_UTF8 || i == n) { /* UTF-8 or ASCII: borrow */
                out->str = (const char *)b;
                out->len = n;
                return 0;
            }
        }
        bool nul = mode == JFR__STR_COPY;
        if (enc == JFR_STR_UTF8) { /* JFR__STR_COPY */
            if (!(d = room(ctx, (size_t)n + 1)))
                return JFR__STR_NOMEM;
            if (n)
                memcpy(d, b, n);
            out->len = n;
        } else {
            if (!(d = room(ctx, (size_t)n * 2 + nul)))
                return JFR__STR_NOMEM;
            out->len = jfr__wire_latin1_to_utf8(b, n, (uint8_t *)d);
        }
        if (nul)
            d[out->len] = 0;
        out->str = d;
        return 0;
    }
    case JFR_STR_CHARS:
        if (!jfr__cur_count(c, &n) || n > (size_t)(c->end - c->p))
            return JFR__STR_BAD_LEN;
        if (mode == JFR__STR_SKIP) {
            uint64_t v;
            if (c->fixed)
                return jfr__cur_skip(c, (uint64_t)n * 2) ? 0 : JFR__STR_TRUNCATED;
            (void)v;
            return jfr__cur_skip_varints(c, n) ? 0 : JFR__STR_TRUNCATED;
        }
        if (!(d = room(ctx, (size_t)n * 3 + 1)))
            return JFR__STR_NOMEM;
        long w = jfr__wire_chars_to_utf8(c, n, (uint8_t *)d);
        if (w < 0)
            return JFR__STR_TRUNCATED;
        if (mode == JFR__STR_COPY)
            d[w] = 0;
        out->str = d;
        out->len = (size_t)w;
        return 0;
    default:
        return JFR__STR_BAD_ENC;
    }
}

/* Skip a string value of any encoding. */
static inline bool jfr__cur_skip_string(jfr_cur *c) {
    jfr_wstr s;
    return jfr__cur_string(c, JFR__STR_SKIP, NULL, NULL, &s) == 0;
}

#endif
