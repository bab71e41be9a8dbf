/*
 * jformat_decimal.c — Double.toString and Float.toString of JDK 19+: the
 * shortest decimal that reads back (see jformat.h).
 *
 * Written from the documented behaviour of the Java SE APIs and verified
 * against the JDK.
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#include "digits.h"
#include "jformat.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * Java picks, among the decimals that round to the value, one of minimal
 * length p (or of length 1 or 2 when p == 1), closest to the value, ties to
 * an even significand. We find it with correctly rounded printf/strtod:
 *
 *  - symmetric rounding interval (every value except a normal power of two):
 *    the correctly rounded p-digit decimal is in the interval iff any p-digit
 *    decimal is, and membership is monotone in p, so a binary search over p
 *    with "%.*e" + strtod is exact;
 *  - normal powers of two (the interval below is half as wide): use the exact
 *    decimal expansion and test both p-digit neighbours explicitly.
 */

/* A decimal d[0].d[1..n-1] x 10^e; candidates have at most 17 digits, an
 * exact expansion (exact_decimal) up to 767. */
typedef struct decimal {
    char d[24];
    int n;
    int e;
} decimal;

typedef struct exact_decimal {
    char d[800];
    int n;
    int e;
} exact_decimal;

/* Parse "%.*e" output ("d.ddde+XX") into digits and exponent; keeps all
 * digits (trailing zeros included). */
static int parse_e(const char *s, char *digits, int cap, int *exp10) {
    int n = 0;
    const char *p = s;
    for (; *p && *p != 'e'; p++)
        if (*p >= '0' && *p <= '9' && n < cap)
            digits[n++] = *p;
    *exp10 = *p == 'e' ? atoi(p + 1) : 0;
    return n;
}

static int strip_zeros(const char *d, int n) {
    while (n > 1 && d[n - 1] == '0')
        n--;
    return n;
}

/* Does the decimal (digits[0..n), exponent e) read back as the value? */
static bool reads_back(const char *digits, int n, int e, double ax, bool is_float) {
    char tmp[64];
    int k = 0;
    tmp[k++] = digits[0];
    if (n > 1) {
        tmp[k++] = '.';
        memcpy(tmp + k, digits + 1, (size_t)(n - 1));
        k += n - 1;
    }
    snprintf(tmp + k, sizeof tmp - (size_t)k, "e%d", e);
    if (is_float)
        return strtof(tmp, NULL) == (float)ax;
    return strtod(tmp, NULL) == ax;
}

/* Correctly rounded p-digit decimal of ax. */
static void rounded(double ax, int p, decimal *out) {
    char tmp[64];
    snprintf(tmp, sizeof tmp, "%.*e", p - 1, ax);
    out->n = parse_e(tmp, out->d, (int)sizeof out->d, &out->e);
}

static bool rounded_reads_back(double ax, int p, bool is_float, decimal *out) {
    rounded(ax, p, out);
    return reads_back(out->d, out->n, out->e, ax, is_float);
}

/* Symmetric interval: binary search for the minimal p. */
static void shortest_symmetric(double ax, bool is_float, decimal *out) {
    int lo = 1, hi = is_float ? 9 : 17;
    decimal tmp = {{0}, 0, 0};
    /* invariant: hi reads back (17 / 9 digits always do) */
    rounded(ax, hi, out);
    /* measured values mostly need 16 or 17 digits (8 or 9): one probe
     * below those settles it, else the search goes on below it */
    int probe = is_float ? 7 : 15;
    if (rounded_reads_back(ax, probe, is_float, &tmp)) {
        hi = probe;
        *out = tmp;
    } else {
        lo = probe + 1;
    }
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (rounded_reads_back(ax, mid, is_float, &tmp)) {
            hi = mid;
            *out = tmp;
        } else {
            lo = mid + 1;
        }
    }
    if (hi == 1 && rounded_reads_back(ax, 2, is_float, &tmp))
        *out = tmp; /* length 1 or 2: the closest one */
    out->n = strip_zeros(out->d, out->n);
}

/* Even significand test for digits[0..n) once trailing zeros are removed. */
static bool even_significand(const char *d, int n) {
    while (n > 1 && d[n - 1] == '0')
        n--;
    return ((d[n - 1] - '0') & 1) == 0;
}

/* Best p-digit decimal reading back as ax, given its exact expansion x:
 * one of the two p-digit neighbours of x. False when neither reads back. */
static bool best_at(const exact_decimal *x, int p, double ax, bool is_float, decimal *out) {
    if (x->n <= p) { /* the value itself has at most p digits */
        memcpy(out->d, x->d, (size_t)x->n);
        out->n = x->n;
        out->e = x->e;
        return true;
    }
    /* lo = truncation, hi = lo + one unit in the p-th digit */
    char lo[24], hi[24];
    memcpy(lo, x->d, (size_t)p);
    memcpy(hi, x->d, (size_t)p);
    int hie = x->e, i = p - 1;
    while (i >= 0 && hi[i] == '9')
        hi[i--] = '0';
    if (i >= 0) {
        hi[i]++;
    } else { /* 99..9 + 1 = 100..0 */
        hi[0] = '1';
        for (int k = 1; k < p; k++)
            hi[k] = '0';
        hie++;
    }
    bool lo_ok = reads_back(lo, p, x->e, ax, is_float);
    bool hi_ok = reads_back(hi, p, hie, ax, is_float);
    if (!lo_ok && !hi_ok)
        return false;
    bool take_hi;
    if (lo_ok && hi_ok) {
        /* compare the tail (digits after p) with one half */
        int c = x->d[p] - '5';
        if (c == 0) {
            bool rest = false;
            for (int k = p + 1; k < x->n; k++)
                if (x->d[k] != '0')
                    rest = true;
            c = rest ? 1 : 0;
        }
        if (c > 0)
            take_hi = true;
        else if (c < 0)
            take_hi = false;
        else
            take_hi = !even_significand(lo, p);
    } else {
        take_hi = hi_ok;
    }
    memcpy(out->d, take_hi ? hi : lo, (size_t)p);
    out->n = p;
    out->e = take_hi ? hie : x->e;
    out->n = strip_zeros(out->d, out->n);
    return true;
}

/* Exact path for normal powers of two. */
static void shortest_exact(double ax, bool is_float, decimal *out) {
    char text[820];
    exact_decimal x;
    snprintf(text, sizeof text, "%.*e", is_float ? 200 : 780, ax);
    x.n = parse_e(text, x.d, (int)sizeof x.d, &x.e);
    x.n = strip_zeros(x.d, x.n);
    int maxp = is_float ? 9 : 17;
    for (int p = 1; p <= maxp; p++) {
        if (best_at(&x, p, ax, is_float, out)) {
            /* minimal length 1: decimals of length 2 compete too, and the
             * 2-digit neighbours are at least as close */
            if (p == 1)
                best_at(&x, 2, ax, is_float, out);
            return;
        }
    }
    rounded(ax, maxp, out); /* not reached */
    out->n = strip_zeros(out->d, out->n);
}

static size_t format_decimal(const decimal *x, bool neg, char *buf) {
    char *p = buf;
    if (neg)
        *p++ = '-';
    int n = x->n, e = x->e;
    if (e >= -3 && e < 0) {
        *p++ = '0';
        *p++ = '.';
        for (int k = 0; k < -e - 1; k++)
            *p++ = '0';
        memcpy(p, x->d, (size_t)n);
        p += n;
    } else if (e >= 0 && e < 7) {
        if (n <= e + 1) {
            memcpy(p, x->d, (size_t)n);
            p += n;
            for (int k = 0; k < e + 1 - n; k++)
                *p++ = '0';
            *p++ = '.';
            *p++ = '0';
        } else {
            memcpy(p, x->d, (size_t)(e + 1));
            p += e + 1;
            *p++ = '.';
            memcpy(p, x->d + e + 1, (size_t)(n - e - 1));
            p += n - e - 1;
        }
    } else {
        *p++ = x->d[0];
        *p++ = '.';
        if (n == 1) {
            *p++ = '0';
        } else {
            memcpy(p, x->d + 1, (size_t)(n - 1));
            p += n - 1;
        }
        p += sprintf(p, "E%d", e);
    }
    *p = '\0';
    return (size_t)(p - buf);
}

static size_t format_special(double v, char *buf) {
    const char *s = isnan(v) ? "NaN" : v > 0 ? "Infinity" : "-Infinity";
    size_t n = strlen(s);
    memcpy(buf, s, n + 1);
    return n;
}

/* A double that is the nearest one to a decimal n / 10^k of at most 15
 * significant digits (0 <= k <= 22): that decimal, found without printf.
 * Two different decimals of at most 15 digits never round to the same
 * double (DBL_DIG), so it is the one shortest decimal that reads back, and
 * Java prints it (for one digit, its two-digit form is the closest of
 * that length too). The smallest k that works gives it: at that k,
 * ax * 10^k lies within 0.22 of n (the value's half ulp scaled, plus the
 * product's rounding, both below 0.11 under 10^15), and the division,
 * correctly rounded from exact operands, tells whether n / 10^k reads back
 * as ax. Values of 16 or 17 digits, or beyond these ranges, return false. */
static bool short_decimal(double ax, decimal *out) {
    static const double p10[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                   1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                   1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
    for (int k = 0; k <= 22; k++) {
        double m = ax * p10[k];
        if (m >= 1e15)
            return false;
        double n = floor(m + 0.5);
        if (n < 1 || fabs(m - n) > 0.25 || n / p10[k] != ax)
            continue;
        int len = (int)(jfr__digits(out->d, (uint64_t)n) - out->d);
        out->n = strip_zeros(out->d, len);
        out->e = len - 1 - k;
        return true;
    }
    return false;
}

#if defined(__SIZEOF_INT128__)
/*
 * The fast path: Ryu's search (Ulf Adams, "Ryu: fast float-to-string
 * conversion", PLDI 2018), in 64- and 128-bit integers. The value m2 * 2^e2
 * and the ends of its rounding interval, times 4 (so that the halfway points
 * are integers), are scaled by a power of ten with 125-bit powers of five
 * (gen-pow5.py) into vm < vr < vp; decimal digits are then dropped while the
 * interval still holds a shorter number, tracking whether the dropped digits
 * are exactly zero so that a tie goes to the even digit and an end belongs to
 * the interval only when m2 is even (IEEE round-half-even reads it back).
 * The result is the shortest decimal that reads back, closest to the value,
 * ties even: Java's choice, except its length-2 rule when the shortest has
 * one digit, which can only matter where the interval is wide compared with
 * the value (subnormals): those take the exact path above.
 */
#include "jfmt_pow5.h"

__extension__ typedef unsigned __int128 jfmt_u128;

static inline uint32_t pow5_bits(uint32_t e) { return ((e * 1217359u) >> 19) + 1; } /* e <= 3528 */
static inline uint32_t log10_pow2(uint32_t e) { return (e * 78913u) >> 18; }     /* e <= 1650 */
static inline uint32_t log10_pow5(uint32_t e) { return (e * 732923u) >> 20; }    /* e <= 2620 */

/* (m * mul) >> j, mul a 125-bit table entry, j >= 64. */
static inline uint64_t mul_shift(uint64_t m, const uint64_t mul[2], uint32_t j) {
    jfmt_u128 lo = (jfmt_u128)m * mul[0], hi = (jfmt_u128)m * mul[1];
    return (uint64_t)(((lo >> 64) + hi) >> (j - 64));
}

static inline bool multiple_of_pow5(uint64_t v, uint32_t p) {
    uint32_t n = 0;
    while (v && v % 5 == 0) {
        v /= 5;
        n++;
    }
    return n >= p;
}

static inline bool multiple_of_pow2(uint64_t v, uint32_t p) {
    return p < 64 && (v & ((1ull << p) - 1)) == 0;
}

/* Drop the last digit of vr, vp and vm: *last gets the digit vr lost,
 * *vr_zeros stays true while every digit it lost before was a zero. */
static inline void drop_digit(uint64_t *vr, uint64_t *vp, uint64_t *vm, uint32_t *last,
                              bool *vr_zeros) {
    *vr_zeros &= *last == 0;
    *last = (uint32_t)(*vr % 10);
    *vr /= 10;
    *vp /= 10;
    *vm /= 10;
}

/* The decimal digits * 10^*exp10 for m2 * 2^e2 (m2 > 0; e2 already less
 * the 2 bits of the times-4 scaling); mm_shift: 0 when the interval below
 * is half as wide (a normal power of two). */
static uint64_t shortest_digits(uint64_t m2, int32_t e2, bool mm_shift, int32_t *exp10) {
    bool accept = (m2 & 1) == 0;
    uint64_t mv = 4 * m2, vr, vp, vm;
    int32_t e10;
    bool vm_zeros = false, vr_zeros = false;
    if (e2 >= 0) {
        uint32_t q = log10_pow2((uint32_t)e2) - (e2 > 3);
        e10 = (int32_t)q;
        uint32_t k = JFMT_POW5_BITS + pow5_bits(q) - 1;
        uint32_t i = (uint32_t)(-e2 + (int32_t)q + (int32_t)k);
        vr = mul_shift(4 * m2, jfmt_pow5_inv[q], i);
        vp = mul_shift(4 * m2 + 2, jfmt_pow5_inv[q], i);
        vm = mul_shift(4 * m2 - 1 - mm_shift, jfmt_pow5_inv[q], i);
        if (q <= 21) { /* only then can mv be a multiple of 5^q */
            if (mv % 5 == 0)
                vr_zeros = multiple_of_pow5(mv, q);
            else if (accept)
                vm_zeros = multiple_of_pow5(mv - 1 - mm_shift, q);
            else
                vp -= multiple_of_pow5(mv + 2, q);
        }
    } else {
        uint32_t q = log10_pow5((uint32_t)-e2) - (-e2 > 1);
        e10 = (int32_t)q + e2;
        uint32_t i = (uint32_t)(-e2 - (int32_t)q);
        uint32_t k = pow5_bits(i) - JFMT_POW5_BITS;
        uint32_t j = q - k;
        vr = mul_shift(4 * m2, jfmt_pow5[i], j);
        vp = mul_shift(4 * m2 + 2, jfmt_pow5[i], j);
        vm = mul_shift(4 * m2 - 1 - mm_shift, jfmt_pow5[i], j);
        if (q <= 1) {
            /* mv has at least q trailing zero bits: the product is exact */
            vr_zeros = true;
            if (accept)
                vm_zeros = mm_shift; /* mm = mv - 1 - mm_shift */
            else
                vp--; /* mp = mv + 2 has one */
        } else if (q < 63) {
            vr_zeros = multiple_of_pow2(mv, q);
        }
    }
    int32_t removed = 0;
    uint32_t last = 0; /* the last digit dropped from vr */
    uint64_t out;
    if (vm_zeros || vr_zeros) {
        while (vp / 10 > vm / 10) {
            vm_zeros &= vm % 10 == 0;
            drop_digit(&vr, &vp, &vm, &last, &vr_zeros);
            removed++;
        }
        if (vm_zeros)
            while (vm % 10 == 0) {
                drop_digit(&vr, &vp, &vm, &last, &vr_zeros);
                removed++;
            }
        if (vr_zeros && last == 5 && vr % 2 == 0)
            last = 4; /* an exact tie: to the even digit */
        out = vr + ((vr == vm && (!accept || !vm_zeros)) || last >= 5);
    } else {
        bool up = false;
        while (vp / 10 > vm / 10) {
            up = vr % 10 >= 5;
            vr /= 10;
            vp /= 10;
            vm /= 10;
            removed++;
        }
        out = vr + (vr == vm || up);
    }
    *exp10 = e10 + removed;
    return out;
}

/* digits * 10^exp10 as a decimal (trailing zeros dropped). */
static void to_decimal(uint64_t digits, int32_t exp10, decimal *out) {
    int len = (int)(jfr__digits(out->d, digits) - out->d);
    out->n = strip_zeros(out->d, len);
    out->e = exp10 + len - 1;
}
#endif

/* The exact but slow search (printf and strtod), for every value; the
 * test checks the fast path against it. */
/* NaN, the infinities and the zeros, as Java prints them (a float is
 * passed widened: exact for these); false for any other value. */
static bool format_trivial(double v, char *buf, size_t *n) {
    if (isnan(v) || isinf(v)) {
        *n = format_special(v, buf);
        return true;
    }
    if (v != 0)
        return false;
    const char *s = signbit(v) ? "-0.0" : "0.0";
    *n = strlen(s);
    memcpy(buf, s, *n + 1);
    return true;
}

/* The decimal of a finite ax > 0 by the exact search. */
static void exact_double_decimal(double ax, decimal *x) {
    uint64_t bits;
    memcpy(&bits, &ax, sizeof bits);
    bool pow2 = (bits & 0x000FFFFFFFFFFFFFull) == 0 && (bits >> 52) > 1;
    if (short_decimal(ax, x))
        ; /* found without printf */
    else if (pow2)
        shortest_exact(ax, false, x);
    else
        shortest_symmetric(ax, false, x);
}

size_t jfmt_double_exact(double v, char *buf) {
    size_t n;
    if (format_trivial(v, buf, &n))
        return n;
    decimal x;
    exact_double_decimal(fabs(v), &x);
    return format_decimal(&x, signbit(v) != 0, buf);
}

size_t jfmt_float_exact(float f, char *buf) {
    size_t n;
    if (format_trivial(f, buf, &n))
        return n;
    bool neg = signbit(f) != 0;
    float af = fabsf(f);
    decimal x;
    uint32_t bits;
    memcpy(&bits, &af, sizeof bits);
    bool pow2 = (bits & 0x007FFFFFu) == 0 && (bits >> 23) > 1;
    if (pow2)
        shortest_exact(af, true, &x);
    else
        shortest_symmetric(af, true, &x);
    return format_decimal(&x, neg, buf);
}

#if defined(__SIZEOF_INT128__)
/* The decimal of a normal value by the fast search: its mantissa and
 * exponent fields, of a format with mbits mantissa bits and this exponent
 * bias. */
static void fast_decimal(uint64_t mant, uint32_t ex, int mbits, int bias, decimal *x) {
    int32_t e10;
    uint64_t d = shortest_digits(mant | 1ull << mbits, (int32_t)ex - bias - mbits - 2,
                                 mant != 0 || ex <= 1, &e10);
    to_decimal(d, e10, x);
}

static size_t fast_text(uint64_t mant, uint32_t ex, int mbits, int bias, bool neg, char *buf) {
    decimal x;
    fast_decimal(mant, ex, mbits, bias, &x);
    return format_decimal(&x, neg, buf);
}
#endif

int jfmt__shortest(double v, char *digits, int *exp10) {
    decimal x;
#if defined(__SIZEOF_INT128__)
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    uint32_t ex = (uint32_t)(bits >> 52) & 0x7FF;
    if (ex != 0) /* normal (the caller passes finite values) */
        fast_decimal(bits & 0x000FFFFFFFFFFFFFull, ex, 52, 1023, &x);
    else
#endif
        exact_double_decimal(fabs(v), &x);
    memcpy(digits, x.d, (size_t)x.n);
    *exp10 = x.e;
    return x.n;
}

size_t jfmt_double(double v, char *buf) {
#if defined(__SIZEOF_INT128__)
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    uint32_t ex = (uint32_t)(bits >> 52) & 0x7FF;
    if (ex != 0 && ex != 0x7FF) /* normal */
        return fast_text(bits & 0x000FFFFFFFFFFFFFull, ex, 52, 1023, bits >> 63, buf);
#endif
    return jfmt_double_exact(v, buf);
}

size_t jfmt_float(float f, char *buf) {
#if defined(__SIZEOF_INT128__)
    uint32_t bits;
    memcpy(&bits, &f, sizeof bits);
    uint32_t ex = (bits >> 23) & 0xFF;
    if (ex != 0 && ex != 0xFF) /* normal */
        return fast_text(bits & 0x007FFFFFu, ex, 23, 127, bits >> 31, buf);
#endif
    return jfmt_float_exact(f, buf);
}

size_t jfmt_large_integer(double v, char *buf) {
    char d[20];
    int e = 0, n = jfmt__shortest(v < 0 ? -v : v, d, &e);
    size_t len = 0;
    for (int k = 0; k <= e; k++) /* d[0].d[1].. x 10^e: e + 1 integer digits */
        buf[len++] = k < n ? d[k] : '0';
    buf[len] = 0;
    return len;
}
