#include "internal.h"

size_t jfr_varint_decode(const uint8_t *p, const uint8_t *end, uint64_t *out) {
    jfr_cur c = {p, end, false, p, 0};
    if (!p || !end || end < p || !jfr__cur_varint(&c, out))
        return 0;
    return (size_t)(c.p - p);
}

/* Add UTF-16 unit u to the output, pairing surrogates (*pending: a high
 * surrogate waiting for its partner). */
static inline uint8_t *put_unit(uint8_t *o, uint32_t u, uint32_t *pending) {
    if (*pending) {
        if (u >= 0xdc00 && u <= 0xdfff) {
            o += jfr__utf8_put(o, 0x10000 + ((*pending - 0xd800) << 10) + (u - 0xdc00));
            *pending = 0;
            return o;
        }
        o += jfr__utf8_put(o, *pending);
        *pending = 0;
    }
    if (u >= 0xd800 && u <= 0xdbff)
        *pending = u;
    else
        o += jfr__utf8_put(o, u);
    return o;
}

/* One unit of a compressed string at p (avail bytes): its value, and the
 * bytes it took in *len (0: malformed). Writers use one to three bytes. */
static inline uint32_t varint_unit(const uint8_t *p, size_t avail, const uint8_t *base,
                                   uint64_t tag, size_t *len) {
    if (avail && p[0] < 0x80) {
        *len = 1;
        return p[0];
    }
    if (avail >= 2 && p[1] < 0x80) {
        *len = 2;
        return (uint32_t)(p[0] & 0x7f) | (uint32_t)p[1] << 7;
    }
    if (avail >= 3 && p[2] < 0x80) {
        *len = 3;
        return ((uint32_t)(p[0] & 0x7f) | (uint32_t)(p[1] & 0x7f) << 7 | (uint32_t)p[2] << 14) &
               0xffff;
    }
    jfr_cur one = {p, p + avail, false, base, tag};
    uint64_t v;
    if (!jfr__cur_varint(&one, &v)) {
        *len = 0;
        return 0;
    }
    *len = (size_t)(one.p - p);
    return (uint32_t)(v & 0xffff);
}

#if defined(__SSE2__) && defined(__GNUC__)
/* The scalar half of units16_to_utf8 and units32_to_utf8, on their masks
 * (bit i: byte i): m, a byte with the sign bit (another follows); zero,
 * gt3, gt15, a byte 0, above 3, above 15; sur, a last byte that makes a
 * surrogate. The ends of the whole units before the first one not
 * converted in place (a unit's last byte must be 1..15 after one byte,
 * 1..3 after two, and not make a surrogate); 0 if the first is one. */
static inline uint64_t block_ends(uint64_t m, uint64_t all, uint64_t zero, uint64_t gt3,
                                  uint64_t gt15, uint64_t sur) {
    uint64_t m1 = m << 1, m2 = m << 2, ends = ~m & all;
    uint64_t end2 = ends & m1 & ~m2, end3 = ends & m1 & m2;
    uint64_t bad = (m & m1 & m2) | (zero & (end2 | end3)) | (gt15 & end2) | ((gt3 | sur) & end3);
    if (bad)
        ends &= (bad & (0u - bad)) - 1;
    return ends;
}

/* 16 bytes at p, p at a unit's first byte: the units among them whose UTF-8
 * form has their varint's length are converted in place of a copy, 16 output
 * bytes stored at o. Those are ASCII, two-byte varints of U+0080..U+07FF and
 * three-byte varints of U+4000..U+FFFF but surrogates: most text. The UTF-8
 * bytes are the varint's bits in reverse order of significance, so each
 * output byte takes bits of itself and of its one or two neighbours, by
 * position in its unit. Returns the bytes of the whole units converted
 * before the first other unit (0: the first unit is one) and their number in
 * *units; the scalar code takes the unit that stopped it. */
static inline unsigned units16_to_utf8(const uint8_t *p, uint8_t *o, uint32_t *units) {
    const __m128i x = _mm_loadu_si128((const __m128i *)(const void *)p);
    unsigned m = (unsigned)_mm_movemask_epi8(x); /* bit: another byte follows */
    if (!m) { /* ASCII */
        _mm_storeu_si128((__m128i *)(void *)o, x);
        *units = 16;
        return 16;
    }
    /* a surrogate (U+D800..U+DFFF): last byte 3, middle 0x30..0x3f */
    const __m128i three = _mm_set1_epi8(3);
    __m128i mid_sur = _mm_cmpeq_epi8(_mm_and_si128(_mm_slli_si128(x, 1), _mm_set1_epi8(0x70)),
                                     _mm_set1_epi8(0x30));
    unsigned zero = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(x, _mm_setzero_si128()));
    unsigned gt3 = (unsigned)_mm_movemask_epi8(_mm_cmpgt_epi8(x, three));
    unsigned gt15 = (unsigned)_mm_movemask_epi8(_mm_cmpgt_epi8(x, _mm_set1_epi8(15)));
    unsigned sur = (unsigned)_mm_movemask_epi8(_mm_and_si128(_mm_cmpeq_epi8(x, three), mid_sur));
    uint64_t ends = block_ends(m, 0xffffu, zero, gt3, gt15, sur);
    if (!ends)
        return 0;
    *units = jfr__bit_count(ends);

    const __m128i c = _mm_cmplt_epi8(x, _mm_setzero_si128());
    const __m128i cm1 = _mm_slli_si128(c, 1), cm2 = _mm_slli_si128(c, 2);
    const __m128i c1 = _mm_srli_si128(c, 1);
    const __m128i x1 = _mm_srli_si128(x, 1), x2 = _mm_srli_si128(x, 2);
    const __m128i one = _mm_set1_epi8(1), cont = _mm_set1_epi8((char)0x80);
    /* bit 6 of each byte; 0x80 | its low six bits (a continuation byte) */
    __m128i bit6 = _mm_and_si128(_mm_srli_epi16(x, 6), one);
    __m128i low6 = _mm_or_si128(_mm_and_si128(x, _mm_set1_epi8(0x3f)), cont);
    __m128i lead = _mm_andnot_si128(cm1, c); /* first byte of a longer unit */
    /* ASCII: itself */
    __m128i out = _mm_andnot_si128(_mm_or_si128(c, cm1), x);
    /* first of two: 110 + next byte's four bits + own bit 6 */
    __m128i v = _mm_or_si128(_mm_set1_epi8((char)0xc0), _mm_or_si128(_mm_add_epi8(x1, x1), bit6));
    out = _mm_or_si128(out, _mm_and_si128(_mm_andnot_si128(c1, lead), v));
    /* first of three: 1110 + last byte's two bits + middle byte's bits 5-6 */
    __m128i x2s = _mm_add_epi8(x2, x2);
    v = _mm_or_si128(_mm_set1_epi8((char)0xe0),
                     _mm_or_si128(_mm_add_epi8(x2s, x2s),
                                  _mm_and_si128(_mm_srli_epi16(x1, 5), three)));
    out = _mm_or_si128(out, _mm_and_si128(_mm_and_si128(c1, lead), v));
    /* middle of three: 10 + own five bits + first byte's bit 6 */
    __m128i lo5 = _mm_and_si128(x, _mm_set1_epi8(0x1f));
    v = _mm_or_si128(cont, _mm_or_si128(_mm_add_epi8(lo5, lo5), _mm_slli_si128(bit6, 1)));
    out = _mm_or_si128(out, _mm_and_si128(_mm_and_si128(c, cm1), v));
    /* last of two or three: 10 + the first byte's six bits */
    __m128i last = _mm_andnot_si128(c, cm1);
    v = _mm_or_si128(_mm_andnot_si128(cm2, _mm_slli_si128(low6, 1)),
                     _mm_and_si128(cm2, _mm_slli_si128(low6, 2)));
    out = _mm_or_si128(out, _mm_and_si128(last, v));
    _mm_storeu_si128((__m128i *)(void *)o, out);
    return 64u - (unsigned)__builtin_clzll(ends);
}
#endif

#if defined(__GNUC__) && defined(__x86_64__)
#define JFR_WIRE_AVX2 1
#include <immintrin.h>

/* Byte shifts of a 32-byte register as one (AVX2's shift each 16-byte half
 * on its own): every byte moved k places up (zeros in below) or down. */
#define JFR_UP32(v, k) _mm256_alignr_epi8((v), _mm256_permute2x128_si256((v), (v), 0x08), 16 - (k))
#define JFR_DOWN32(v, k) _mm256_alignr_epi8(_mm256_permute2x128_si256((v), (v), 0x81), (v), (k))

/* units16_to_utf8 on 32 bytes, for CPUs with AVX2 (chosen at run time):
 * text with a non-ASCII character every few bytes, and an emoji every few
 * dozen, runs twice as far between stops. */
__attribute__((target("avx2"))) static inline unsigned units32_to_utf8(const uint8_t *p,
                                                                        uint8_t *o,
                                                                        uint32_t *units) {
    const __m256i x = _mm256_loadu_si256((const __m256i *)(const void *)p);
    uint64_t m = (uint32_t)_mm256_movemask_epi8(x);
    if (!m) {
        _mm256_storeu_si256((__m256i *)(void *)o, x);
        *units = 32;
        return 32;
    }
    const __m256i zero = _mm256_setzero_si256(), three = _mm256_set1_epi8(3);
    __m256i mid_sur = _mm256_cmpeq_epi8(_mm256_and_si256(JFR_UP32(x, 1), _mm256_set1_epi8(0x70)),
                                        _mm256_set1_epi8(0x30));
    uint64_t zs = (uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(x, zero));
    uint64_t gt3 = (uint32_t)_mm256_movemask_epi8(_mm256_cmpgt_epi8(x, three));
    uint64_t gt15 = (uint32_t)_mm256_movemask_epi8(_mm256_cmpgt_epi8(x, _mm256_set1_epi8(15)));
    uint64_t sur =
        (uint32_t)_mm256_movemask_epi8(_mm256_and_si256(_mm256_cmpeq_epi8(x, three), mid_sur));
    uint64_t ends = block_ends(m, 0xffffffffu, zs, gt3, gt15, sur);
    if (!ends)
        return 0;
    *units = jfr__bit_count(ends);

    const __m256i c = _mm256_cmpgt_epi8(zero, x);
    const __m256i cm1 = JFR_UP32(c, 1), cm2 = JFR_UP32(c, 2);
    const __m256i c1 = JFR_DOWN32(c, 1);
    const __m256i x1 = JFR_DOWN32(x, 1), x2 = JFR_DOWN32(x, 2);
    const __m256i one = _mm256_set1_epi8(1), cont = _mm256_set1_epi8((char)0x80);
    __m256i bit6 = _mm256_and_si256(_mm256_srli_epi16(x, 6), one);
    __m256i low6 = _mm256_or_si256(_mm256_and_si256(x, _mm256_set1_epi8(0x3f)), cont);
    __m256i lead = _mm256_andnot_si256(cm1, c);
    __m256i out = _mm256_andnot_si256(_mm256_or_si256(c, cm1), x);
    __m256i v = _mm256_or_si256(_mm256_set1_epi8((char)0xc0),
                                _mm256_or_si256(_mm256_add_epi8(x1, x1), bit6));
    out = _mm256_or_si256(out, _mm256_and_si256(_mm256_andnot_si256(c1, lead), v));
    __m256i x2s = _mm256_add_epi8(x2, x2);
    v = _mm256_or_si256(_mm256_set1_epi8((char)0xe0),
                        _mm256_or_si256(_mm256_add_epi8(x2s, x2s),
                                        _mm256_and_si256(_mm256_srli_epi16(x1, 5), three)));
    out = _mm256_or_si256(out, _mm256_and_si256(_mm256_and_si256(c1, lead), v));
    __m256i lo5 = _mm256_and_si256(x, _mm256_set1_epi8(0x1f));
    v = _mm256_or_si256(cont, _mm256_or_si256(_mm256_add_epi8(lo5, lo5), JFR_UP32(bit6, 1)));
    out = _mm256_or_si256(out, _mm256_and_si256(_mm256_and_si256(c, cm1), v));
    __m256i last = _mm256_andnot_si256(c, cm1);
    v = _mm256_or_si256(_mm256_andnot_si256(cm2, JFR_UP32(low6, 1)),
                        _mm256_and_si256(cm2, JFR_UP32(low6, 2)));
    out = _mm256_or_si256(out, _mm256_and_si256(last, v));
    _mm256_storeu_si256((__m256i *)(void *)o, out);
    return 64u - (unsigned)__builtin_clzll(ends);
}
#endif

#if defined(__SSE2__) && defined(__GNUC__)
/* A surrogate pair (U+10000 and up: emoji, rare CJK) as two three-byte
 * varints at p (8 bytes readable; x86, so little-endian): its four UTF-8
 * bytes stored at o (room for 6) and true; false for anything else. */
static inline bool pair_to_utf8(const uint8_t *p, uint8_t *o) {
    uint64_t w;
    memcpy(&w, p, 8);
    /* per byte: a lead (0x80 set), 0b10110xxx / 0b10111xxx (bits 10-13 of
     * a high / low surrogate, continued), 3 (bits 14-15) */
    if ((w & 0xfff880fff880ull) != 0x03b88003b080ull)
        return false;
    uint32_t hi = (uint32_t)(w & 0x7f) | (uint32_t)(w >> 1 & 0x380);
    uint32_t lo = (uint32_t)(w >> 24 & 0x7f) | (uint32_t)(w >> 25 & 0x380);
    uint32_t cp = 0x10000 + (hi << 10) + lo;
    uint32_t enc = (0xf0 | cp >> 18) | (0x80 | (cp >> 12 & 0x3f)) << 8 |
                   (0x80 | (cp >> 6 & 0x3f)) << 16 | (uint32_t)(0x80 | (cp & 0x3f)) << 24;
    memcpy(o, &enc, 4);
    return true;
}

#ifdef JFR_WIRE_AVX2
/* sign_bits64 in two loads */
__attribute__((target("avx2"))) static inline uint64_t sign_bits64_avx2(const uint8_t *p) {
    const __m256i *q = (const __m256i *)(const void *)p;
    return (uint64_t)(uint32_t)_mm256_movemask_epi8(_mm256_loadu_si256(q)) |
           (uint64_t)(uint32_t)_mm256_movemask_epi8(_mm256_loadu_si256(q + 1)) << 32;
}
#endif

/* Whole 64-byte blocks of varints while 64 or more remain (see
 * jfr__cur_skip_varints): *m less the varints that ended in them, *open the
 * bytes of one left unfinished at the last block's end; stops before a
 * block that may hold a 9-byte varint. */
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
static inline const uint8_t *varint_blocks(const uint8_t *p, const uint8_t *end, uint64_t *m,
                                           unsigned *open, bool wide) {
    uint64_t left = *m;
    unsigned op = *open;
    (void)wide;
    while (left >= 64 && (size_t)(end - p) >= 64) {
        uint64_t k, t;
#ifdef JFR_WIRE_AVX2
        if (wide)
            k = sign_bits64_avx2(p);
        else
#endif
            k = sign_bits64(p);
        t = ~k;
        if (!t || run8(k) || op + (unsigned)__builtin_ctzll(t) >= 8)
            break;
        left -= wide ? (uint64_t)__builtin_popcountll(t) : jfr__bit_count(t);
        op = (unsigned)__builtin_clzll(t);
        p += 64;
    }
    *m = left;
    *open = op;
    return p;
}

#ifdef JFR_WIRE_AVX2
__attribute__((target("avx2,popcnt"))) static const uint8_t *
varint_blocks_avx2(const uint8_t *p, const uint8_t *end, uint64_t *m, unsigned *open) {
    return varint_blocks(p, end, m, open, true);
}
#endif

const uint8_t *jfr__skip_varint_blocks(const uint8_t *p, const uint8_t *end, uint64_t *m,
                                       unsigned *open, bool wide) {
#ifdef JFR_WIRE_AVX2
    if (wide && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("popcnt"))
        return varint_blocks_avx2(p, end, m, open);
#endif
    return varint_blocks(p, end, m, open, false);
}
#endif

/* Compressed chunks write each UTF-16 unit as a varint: an ASCII unit is
 * one byte below 0x80 (also its UTF-8 form). With 8 units and 8 bytes
 * ahead, the common cases run without bounds checks: ASCII copied 8 bytes
 * at a time and advanced by its run's length (the output has 3 bytes per
 * unit left, so the over-copy stays inside it), two- and three-byte units
 * written out directly. A high surrogate looks at the next unit to pair
 * with it (no state carried); lone surrogates stay WTF-8, as put_unit.
 * Before all that, blocks of 16 bytes (32 when `wide`: a copy of this loop
 * compiled for AVX2) convert most text in place. */
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
static inline long chars_varint_loop(jfr_cur *c, uint32_t n, uint8_t *out, bool wide) {
    const uint8_t *p = c->p, *end = c->end;
    uint8_t *o = out;
    uint32_t i = 0;
    (void)wide;
    while (i < n) {
        uint32_t u;
#if defined(__SSE2__) && defined(__GNUC__)
        uint32_t span = 16;
#ifdef JFR_WIRE_AVX2
        if (wide)
            span = 32;
#endif
        if ((size_t)(end - p) >= span && n - i >= span) {
            uint32_t k, units = 0;
#ifdef JFR_WIRE_AVX2
            if (wide)
                k = units32_to_utf8(p, o, &units);
            else
#endif
                k = units16_to_utf8(p, o, &units);
            p += k;
            o += k;
            i += units;
            /* text with emoji stops at each: pair it here, then go on */
            if ((size_t)(end - p) >= 8 && n - i >= 2 && pair_to_utf8(p, o)) {
                p += 6;
                o += 4;
                i += 2;
                continue;
            }
            if (k)
                continue;
        }
#endif
#if defined(__GNUC__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        if ((size_t)(end - p) >= 16 && n - i >= 9) {
            /* the leading ASCII bytes of the next 8 (stored as a word),
             * then one unit of two or three bytes without a branch on its
             * size: mixed text had mispredicted the choice at every unit */
            uint64_t w;
            memcpy(&w, p, 8);
            memcpy(o, &w, 8);
            uint64_t hi = w & 0x8080808080808080ull;
            if (!hi) {
                o += 8;
                p += 8;
                i += 8;
                continue;
            }
            unsigned k = (unsigned)__builtin_ctzll(hi) >> 3;
            o += k;
            p += k;
            i += k;
            memcpy(&w, p, 8); /* p[0] >= 0x80: a unit of two bytes or more */
            uint32_t c1 = (uint32_t)(w >> 15) & 1;
            if (c1 && (w & 0x800000))
                goto slow; /* four bytes or more (padded) */
            u = ((uint32_t)w & 0x7f) | ((uint32_t)(w >> 1) & 0x3f80) |
                ((uint32_t)(w >> 2) & 0x1fc000 & (0u - c1));
            u &= 0xffff;
            p += 2 + c1;
            i++;
            if (u - 0xd800 < 0x800)
                goto unit; /* surrogates: paired, or kept alone as WTF-8 */
            uint32_t two = (0xc0 | u >> 6) | (0x80 | (u & 0x3f)) << 8;
            uint32_t three =
                (0xe0 | u >> 12) | (0x80 | (u >> 6 & 0x3f)) << 8 | (0x80 | (u & 0x3f)) << 16;
            uint32_t enc = u < 0x80 ? u : u < 0x800 ? two : three;
            memcpy(o, &enc, 4);
            o += 1 + (u >= 0x80) + (u >= 0x800);
            continue;
        }
#endif
    slow: {
            size_t len;
            u = varint_unit(p, (size_t)(end - p), c->base, c->tag, &len);
            if (!len)
                return -1;
            p += len;
            i++;
        }
    unit:
        if (u >= 0xd800 && u <= 0xdbff && i < n) { /* a high surrogate: paired? */
            size_t len;
            uint32_t v = varint_unit(p, (size_t)(end - p), c->base, c->tag, &len);
            if (len && v >= 0xdc00 && v <= 0xdfff) {
                o += jfr__utf8_put(o, 0x10000 + ((u - 0xd800) << 10) + (v - 0xdc00));
                p += len;
                i++;
                continue;
            }
        }
        o += jfr__utf8_put(o, u);
    }
    c->p = p;
    return (long)(o - out);
}

#ifdef JFR_WIRE_AVX2
__attribute__((target("avx2"))) static long chars_varint_avx2(jfr_cur *c, uint32_t n,
                                                              uint8_t *out) {
    return chars_varint_loop(c, n, out, true);
}
#endif

long jfr__wire_chars_varint_at(jfr_cur *c, uint32_t n, uint8_t *out, bool wide) {
#ifdef JFR_WIRE_AVX2
    if (wide && __builtin_cpu_supports("avx2"))
        return chars_varint_avx2(c, n, out);
#endif
    return chars_varint_loop(c, n, out, false);
}

static long chars_varint_to_utf8(jfr_cur *c, uint32_t n, uint8_t *out) {
    return jfr__wire_chars_varint_at(c, n, out, n >= 32);
}

long jfr__wire_chars_to_utf8(jfr_cur *c, uint32_t n, uint8_t *out) {
    if (!c->fixed)
        return chars_varint_to_utf8(c, n, out);
    uint8_t *o = out;
    uint32_t pending = 0; /* a high surrogate waiting for its partner */
    for (uint32_t i = 0; i < n; i++) {
        uint64_t v;
        if (!jfr__cur_short(c, &v))
            return -1;
        o = put_unit(o, (uint32_t)(v & 0xffff), &pending);
    }
    if (pending)
        o += jfr__utf8_put(o, pending);
    return (long)(o - out);
}

size_t jfr__wire_latin1_to_utf8(const uint8_t *in, size_t n, uint8_t *out) {
    uint8_t *o = out;
    for (size_t i = 0; i < n; i++)
        o += jfr__utf8_put(o, in[i]);
    return (size_t)(o - out);
}
