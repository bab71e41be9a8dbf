/*
 * jformat.c — Java-compatible formatting (see jformat.h).
 *
 * Written from the documented behaviour of the Java SE APIs (Double.toString
 * of JDK 19+, java.time toString formats) and verified against the JDK.
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#include "jformat.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------- doubles */

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
        char rev[20];
        int len = 0;
        for (uint64_t v = (uint64_t)n; v; v /= 10)
            rev[len++] = (char)('0' + v % 10);
        int z = 0;
        while (z < len - 1 && rev[z] == '0')
            z++;
        out->n = len - z;
        for (int i = 0; i < out->n; i++)
            out->d[i] = rev[len - 1 - i];
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
    char rev[24];
    int len = 0;
    do {
        rev[len++] = (char)('0' + digits % 10);
        digits /= 10;
    } while (digits);
    for (int i = 0; i < len; i++)
        out->d[i] = rev[len - 1 - i];
    out->n = strip_zeros(out->d, len);
    out->e = exp10 + len - 1;
}
#endif

/* The exact but slow search (printf and strtod), for every value; the
 * test checks the fast path against it. */
size_t jfmt_double_exact(double v, char *buf) {
    if (isnan(v) || isinf(v))
        return format_special(v, buf);
    bool neg = signbit(v) != 0;
    double ax = fabs(v);
    if (ax == 0) {
        const char *s = neg ? "-0.0" : "0.0";
        memcpy(buf, s, strlen(s) + 1);
        return strlen(s);
    }
    decimal x;
    uint64_t bits;
    memcpy(&bits, &ax, sizeof bits);
    bool pow2 = (bits & 0x000FFFFFFFFFFFFFull) == 0 && (bits >> 52) > 1;
    if (short_decimal(ax, &x))
        ; /* found without printf */
    else if (pow2)
        shortest_exact(ax, false, &x);
    else
        shortest_symmetric(ax, false, &x);
    return format_decimal(&x, neg, buf);
}

size_t jfmt_float_exact(float f, char *buf) {
    double v = f;
    if (isnan(v) || isinf(v))
        return format_special(v, buf);
    bool neg = signbit(f) != 0;
    float af = fabsf(f);
    if (af == 0) {
        const char *s = neg ? "-0.0" : "0.0";
        memcpy(buf, s, strlen(s) + 1);
        return strlen(s);
    }
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
/* The text of a normal value by the fast search: its mantissa and exponent
 * fields, of a format with mbits mantissa bits and this exponent bias. */
static size_t fast_text(uint64_t mant, uint32_t ex, int mbits, int bias, bool neg, char *buf) {
    decimal x;
    int32_t e10;
    uint64_t d = shortest_digits(mant | 1ull << mbits, (int32_t)ex - bias - mbits - 2,
                                 mant != 0 || ex <= 1, &e10);
    to_decimal(d, e10, &x);
    return format_decimal(&x, neg, buf);
}
#endif

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

/* ------------------------------------------------------------ java.time */

static int64_t floor_div(int64_t a, int64_t b) {
    int64_t q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0)))
        q--;
    return q;
}

/* Without a multiplication: floor_div(a, b) * b overflows near INT64_MIN. */
static int64_t floor_mod(int64_t a, int64_t b) {
    int64_t m = a % b;
    if (m != 0 && ((m < 0) != (b < 0)))
        m += b;
    return m;
}

static char *put_u64(char *p, uint64_t v) {
    char tmp[24];
    int n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    while (n)
        *p++ = tmp[--n];
    return p;
}

static char *put_i64(char *p, int64_t v) {
    if (v < 0) {
        *p++ = '-';
        return put_u64(p, (uint64_t)0 - (uint64_t)v);
    }
    return put_u64(p, (uint64_t)v);
}

static char *put2(char *p, int v) {
    *p++ = (char)('0' + v / 10);
    *p++ = (char)('0' + v % 10);
    return p;
}

size_t jfmt_duration(int64_t seconds, int32_t nanos, char *buf) {
    char *p = buf;
    *p++ = 'P';
    *p++ = 'T';
    if (seconds == 0 && nanos == 0) {
        memcpy(p, "0S", 3);
        return 4;
    }
    int64_t eff = seconds;
    if (seconds < 0 && nanos > 0)
        eff++;
    int64_t hours = eff / 3600;
    int minutes = (int)((eff % 3600) / 60);
    int secs = (int)(eff % 60);
    if (hours != 0) {
        p = put_i64(p, hours);
        *p++ = 'H';
    }
    if (minutes != 0) {
        p = put_i64(p, minutes);
        *p++ = 'M';
    }
    if (secs == 0 && nanos == 0 && p - buf > 2) {
        *p = '\0';
        return (size_t)(p - buf);
    }
    if (seconds < 0 && nanos > 0 && secs == 0) {
        *p++ = '-';
        *p++ = '0';
    } else {
        p = put_i64(p, secs);
    }
    if (nanos > 0) {
        char *dot = p;
        int64_t frac = seconds < 0 ? 2 * 1000000000LL - nanos : nanos + 1000000000LL;
        p = put_i64(p, frac);
        while (p[-1] == '0')
            p--;
        *dot = '.';
    }
    *p++ = 'S';
    *p = '\0';
    return (size_t)(p - buf);
}

/* Days since 1970-01-01 -> proleptic Gregorian y/m/d. */
static void civil_from_days(int64_t z, int64_t *y, int *m, int *d) {
    z += 719468;
    int64_t era = floor_div(z, 146097);
    int64_t doe = z - era * 146097;                                   /* [0, 146096] */
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365; /* [0, 399] */
    int64_t yy = yoe + era * 400;
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100); /* [0, 365] */
    int64_t mp = (5 * doy + 2) / 153;                      /* [0, 11] */
    *d = (int)(doy - (153 * mp + 2) / 5 + 1);
    *m = (int)(mp < 10 ? mp + 3 : mp - 9);
    *y = yy + (*m <= 2);
}

static char *put_date(char *p, int64_t epoch_day) {
    int64_t y;
    int m, d;
    civil_from_days(epoch_day, &y, &m, &d);
    int64_t ay = y < 0 ? -y : y;
    if (ay < 1000) {
        if (y < 0)
            *p++ = '-';
        int pad = ay < 10 ? 3 : ay < 100 ? 2 : 1;
        while (pad--)
            *p++ = '0';
        p = put_i64(p, ay);
    } else {
        if (y > 9999)
            *p++ = '+';
        p = put_i64(p, y);
    }
    *p++ = '-';
    p = put2(p, m);
    *p++ = '-';
    p = put2(p, d);
    return p;
}

size_t jfmt_offset_date_time(int64_t epoch_seconds, int32_t nanos,
                             int32_t offset_seconds, char *buf) {
    int64_t local = epoch_seconds + offset_seconds;
    int64_t day = floor_div(local, 86400);
    int sod = (int)floor_mod(local, 86400);
    char *p = put_date(buf, day);
    *p++ = 'T';
    int hh = sod / 3600, mm = sod / 60 % 60, ss = sod % 60;
    p = put2(p, hh);
    *p++ = ':';
    p = put2(p, mm);
    if (ss > 0 || nanos > 0) {
        *p++ = ':';
        p = put2(p, ss);
        if (nanos > 0) {
            int digits, width;
            if (nanos % 1000000 == 0) {
                digits = nanos / 1000000;
                width = 3;
            } else if (nanos % 1000 == 0) {
                digits = nanos / 1000;
                width = 6;
            } else {
                digits = nanos;
                width = 9;
            }
            *p++ = '.';
            for (int k = width - 1; k >= 0; k--) {
                p[k] = (char)('0' + digits % 10);
                digits /= 10;
            }
            p += width;
        }
    }
    if (offset_seconds == 0) {
        *p++ = 'Z';
    } else {
        int a = offset_seconds < 0 ? -offset_seconds : offset_seconds;
        *p++ = offset_seconds < 0 ? '-' : '+';
        p = put2(p, a / 3600);
        *p++ = ':';
        p = put2(p, a / 60 % 60);
        if (a % 60) {
            *p++ = ':';
            p = put2(p, a % 60);
        }
    }
    *p = '\0';
    return (size_t)(p - buf);
}

size_t jfmt_utc_date_time(int64_t epoch_seconds, char *buf) {
    int64_t day = floor_div(epoch_seconds, 86400);
    int sod = (int)floor_mod(epoch_seconds, 86400);
    int64_t y;
    int m, d;
    civil_from_days(day, &y, &m, &d);
    char *p = buf;
    /* "yyyy" is the year of era: four digits at least, '+' beyond four */
    int64_t yoe = y <= 0 ? 1 - y : y;
    if (yoe > 9999)
        *p++ = '+';
    if (yoe < 1000) {
        int pad = yoe < 10 ? 3 : yoe < 100 ? 2 : 1;
        while (pad--)
            *p++ = '0';
    }
    p = put_i64(p, yoe);
    *p++ = '-';
    p = put2(p, m);
    *p++ = '-';
    p = put2(p, d);
    *p++ = ' ';
    p = put2(p, sod / 3600);
    *p++ = ':';
    p = put2(p, sod / 60 % 60);
    *p++ = ':';
    p = put2(p, sod % 60);
    *p = '\0';
    return (size_t)(p - buf);
}

/* Java's (long) cast of a double: saturating, NaN -> 0. */
static int64_t java_d2l(double d) {
    if (isnan(d))
        return 0;
    if (d >= 9223372036854775807.0)
        return INT64_MAX;
    if (d <= -9223372036854775808.0)
        return INT64_MIN;
    return (int64_t)d;
}

/* ticks / divisor as the JDK computes it: divisor = ticksPerSecond / 1e9 in
 * double arithmetic; the tick count is converted to double. */
static double ticks_div(const jfmt_timebase *tb, int64_t ticks) {
    double div = (double)tb->ticks_per_second / 1e9;
    if (div == 0) /* x / 0.0 in Java */
        return ticks > 0 ? INFINITY : ticks < 0 ? -INFINITY : NAN;
    return (double)ticks / div;
}

int64_t jfmt_ticks_to_epoch_nanos(const jfmt_timebase *tb, int64_t ticks) {
    int64_t delta = (int64_t)((uint64_t)ticks - (uint64_t)tb->start_ticks);
    return (int64_t)((uint64_t)tb->start_nanos + (uint64_t)java_d2l(ticks_div(tb, delta)));
}

int64_t jfmt_ticks_to_nanos(const jfmt_timebase *tb, int64_t ticks) {
    return java_d2l(ticks_div(tb, ticks));
}

size_t jfmt_timespan(int64_t v, jfmt_span_unit unit, const jfmt_timebase *tb,
                     char *buf) {
    if (v == 0)
        return jfmt_duration(0, 0, buf);
    if (v == INT64_MIN)
        return jfmt_duration(INT64_MIN, 0, buf);
    if (v == INT64_MAX) /* ChronoUnit.FOREVER */
        return jfmt_duration(INT64_MAX, 999999999, buf);
    int64_t nanos;
    switch (unit) {
    case JFMT_SPAN_SECONDS:
        return jfmt_duration(v, 0, buf);
    case JFMT_SPAN_MILLIS:
        return jfmt_duration(floor_div(v, 1000), (int32_t)(floor_mod(v, 1000) * 1000000), buf);
    case JFMT_SPAN_MICROS:
        nanos = (int64_t)((uint64_t)v * 1000u); /* Java long overflow wraps */
        break;
    case JFMT_SPAN_TICKS:
        nanos = jfmt_ticks_to_nanos(tb, v);
        break;
    case JFMT_SPAN_NANOS:
    default:
        nanos = v;
        break;
    }
    return jfmt_duration(floor_div(nanos, 1000000000), (int32_t)floor_mod(nanos, 1000000000), buf);
}

size_t jfmt_timestamp(int64_t v, bool millis, const jfmt_timebase *tb,
                      int32_t offset_seconds, char *buf) {
    if (v == INT64_MIN) {
        size_t n = strlen(JFMT_OFFSET_DATE_TIME_MIN);
        memcpy(buf, JFMT_OFFSET_DATE_TIME_MIN, n + 1);
        return n;
    }
    if (millis)
        return jfmt_offset_date_time(floor_div(v, 1000), (int32_t)(floor_mod(v, 1000) * 1000000),
                                     offset_seconds, buf);
    int64_t ns = jfmt_ticks_to_epoch_nanos(tb, v);
    return jfmt_offset_date_time(floor_div(ns, 1000000000), (int32_t)floor_mod(ns, 1000000000),
                                 offset_seconds, buf);
}

int32_t jfmt_zone_offset_seconds(int64_t gmt_offset_ms, int64_t dst_ms) {
    /* (int) gmtOffset + (int) dst, in int arithmetic (wraps), then / 1000 */
    uint32_t sum = (uint32_t)(uint64_t)gmt_offset_ms + (uint32_t)(uint64_t)dst_ms;
    int32_t ms = sum > INT32_MAX ? (int32_t)(sum - 0x80000000u) - INT32_MAX - 1 : (int32_t)sum;
    int32_t s = ms / 1000;
    if (s < -18 * 3600 || s > 18 * 3600)
        return 0;
    return s;
}

/* ----------------------------------------------------------- UTF-16 view */

typedef struct u16_iter {
    const unsigned char *p, *end;
    int pending; /* low surrogate waiting, or -1 */
    bool java;
} u16_iter;

#define REPL 0xFFFD

static bool not_cont(unsigned b) { return (b & 0xC0) != 0x80; }

/* Next UTF-16 unit, or -1 at the end. Mirrors the replacement behaviour of
 * new String(bytes, UTF_8) (JDK 25) when it->java; otherwise the same but
 * encoded surrogates decode to themselves. */
static int u16_next(u16_iter *it) {
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

static void u16_init(u16_iter *it, const char *s, size_t len, bool java) {
    it->p = (const unsigned char *)s;
    it->end = it->p + len;
    it->pending = -1;
    it->java = java;
}

size_t jfmt_utf16_length(const char *s, size_t len) {
    u16_iter it;
    u16_init(&it, s, len, false);
    size_t n = 0;
    while (u16_next(&it) >= 0)
        n++;
    return n;
}

int jfmt_utf16_compare(const char *a, const char *b) {
    u16_iter x, y;
    u16_init(&x, a, strlen(a), false);
    u16_init(&y, b, strlen(b), false);
    for (;;) {
        int u = u16_next(&x), v = u16_next(&y);
        if (u != v)
            return u < v ? -1 : 1; /* -1 (end) sorts first */
        if (u < 0)
            return 0;
    }
}

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
        u16_iter it;
        u16_init(&it, s + j, len - j, java_utf8);
        int u;
        /* decode while inside the non-ASCII run; the decoder may stop
         * early (Java drops the tail after some truncated sequences) */
        while (it.pending >= 0 || (it.p < (const unsigned char *)s + k)) {
            u = u16_next(&it);
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

/* The unit of the varint at b, bit 7 of b[0] set (whole varints up to end,
 * as the library checked them): its low 16 bits, its length in *n. */
static inline unsigned json_varint_unit(const unsigned char *b, const unsigned char *end,
                                        size_t *n) {
    unsigned u = b[0] & 0x7Fu;
    size_t k = 1;
    while (k < 9 && b + k < end) {
        unsigned c = b[k];
        if (k < 3)
            u |= (c & 0x7Fu) << (7 * k);
        k++;
        if (c < 0x80 || k == 9)
            break;
    }
    *n = k;
    return u & 0xFFFF;
}

/* The unit at p escaped through json_unit (the path without room for the
 * blocks): returns where the next one starts. */
static const unsigned char *json_chars_unit(outbuf *o, const unsigned char *p,
                                            const unsigned char *end) {
    size_t n = 1;
    unsigned u = *p < 0x80 ? *p : json_varint_unit(p, end, &n);
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
                        c = json_varint_unit(p, end, &n); /* four bytes or more */
                    } else {
                        c = (unsigned)(((w & 0x7f) | ((w >> 1) & 0x3f80) |
                                        ((w >> 2) & 0x1fc000 & (0 - c1))) &
                                       0xffff);
                        n = 2 + (size_t)c1;
                    }
                } else {
                    c = json_varint_unit(p, end, &n);
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
