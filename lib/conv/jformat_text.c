/*
 * jformat_text.c — the value formats of the text `jfr print` (JDK 25's
 * PrettyWriter and jdk.jfr.internal.util.ValueFormatter): String.format's
 * %.Nf, durations, data amounts, timestamps and addresses (see jformat.h).
 *
 * Written from the behaviour of the JDK and verified against it
 * (test/conv/test_jformat_text.c runs JDK 25 on thousands of inputs).
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#include "digits.h"
#include "jformat.h"

#include <math.h>
#include <string.h>

static char *put_str(char *p, const char *s) {
    while (*s)
        *p++ = *s++;
    return p;
}

/* The last width digits of v, zeros in front. */
static char *put_padded(char *p, uint64_t v, int width) {
    for (int k = width - 1; k >= 0; k--, v /= 10)
        p[k] = (char)('0' + v % 10);
    return p + width;
}

static size_t finish(char *buf, char *p) {
    *p = '\0';
    return (size_t)(p - buf);
}

static char *put_fixed(char *p, double v, int prec) { return p + jfmt_fixed(v, prec, p); }

size_t jfmt_fixed(double v, int prec, char *buf) {
    char *p = buf;
    if (isnan(v))
        return finish(buf, put_str(p, "NaN"));
    if (signbit(v)) /* Java tests Double.compare(v, 0.0) < 0: -0.0 too */
        *p++ = '-';
    if (isinf(v))
        return finish(buf, put_str(p, "Infinity"));
    prec = prec < 0 ? 0 : prec > 17 ? 17 : prec;
    /* Java rounds the decimal Double.toString picks, not the binary value:
     * d[0].d[1].. x 10^e, to the digit at 10^-prec, halves up */
    char d[24];
    int e = 0, n = v != 0 ? jfmt__shortest(v, d, &e) : 0;
    int keep = e + 1 + prec;
    if (keep < n) {
        bool up = keep >= 0 && d[keep] >= '5';
        n = keep < 0 ? 0 : keep;
        if (up) {
            while (n > 0 && d[n - 1] == '9')
                n--;
            if (n > 0) {
                d[n - 1]++;
            } else { /* 9.99 -> 10.0, or 0.5 -> 1 at a lost digit */
                d[0] = '1';
                n = 1;
                e++;
            }
        }
    }
    if (e < 0) {
        *p++ = '0';
    } else {
        int int_digits = e + 1, from = n < int_digits ? n : int_digits;
        memcpy(p, d, (size_t)from);
        memset(p + from, '0', (size_t)(int_digits - from));
        p += int_digits;
    }
    if (prec > 0) {
        *p++ = '.';
        for (int k = 1; k <= prec; k++) {
            int i = e + k; /* the index of the digit at 10^-k */
            if (i >= 0 && i < n)
                *p++ = d[i];
            else
                *p++ = '0';
        }
    }
    return finish(buf, p);
}

/* The number of decimal digits: the JDK's (int) Math.log10(v) + 1, which
 * Math.log10's exactness at powers of ten makes the same for v >= 1. */
static int digit_count(uint64_t v) {
    int n = 1;
    while (v >= 10) {
        v /= 10;
        n++;
    }
    return n;
}

/* Math.round: to the nearest, halves up (x >= 0 here). */
static uint64_t java_round(double x) {
    double f = floor(x);
    return (uint64_t)f + (x - f >= 0.5);
}

size_t jfmt_pretty_duration(int64_t seconds, int32_t nanos, char *buf) {
    char *p = buf;
    if (seconds == 0 && nanos == 0)
        return finish(buf, put_str(p, "0 s"));
    /* |d| in unsigned seconds: the JDK rounds the magnitude, and -d of
     * Long.MIN_VALUE seconds needs 2^63 */
    uint64_t s = (uint64_t)seconds;
    uint32_t ns = (uint32_t)nanos;
    if (seconds < 0) {
        *p++ = '-';
        s = ns > 0 ? (uint64_t)0 - s - 1 : (uint64_t)0 - s;
        ns = ns > 0 ? 1000000000u - ns : 0;
    }
    /* round as roundPositiveDuration: three significant digits below a
     * minute, then to the second, minute, hour, by adding half of it */
    if (s == 0 && ns >= 1000) {
        uint64_t unit = 1; /* 10^(digits - 3) */
        for (uint32_t v = ns; v >= 1000; v /= 10)
            unit *= 10;
        ns = (uint32_t)(java_round((double)ns / (double)unit) * unit);
    } else if (s > 0 && s < 60) {
        uint64_t unit = s < 10 ? 10 : 100; /* 10^digits */
        uint32_t ms = ns / 1000000;
        ns = (uint32_t)(java_round((double)ms / (double)unit) * unit) * 1000000;
    } else if (s >= 60 && s < 3600) {
        ns += 500000000;
        s += ns / 1000000000;
        ns = 0;
    } else if (s >= 3600) {
        uint64_t unit = s < 86400 ? 60 : 3600;
        s += unit / 2;
        s -= s % unit;
        ns = 0;
    }
    if (ns >= 1000000000) {
        s++;
        ns -= 1000000000;
    }
    if (s == 0) { /* ms: nine significant digits at most; 6 decimals below 1 us */
        int prec = ns < 1000 ? 6 : 9 - digit_count(ns);
        p = put_fixed(p, (double)ns / 1000000, prec);
        return finish(buf, put_str(p, " ms"));
    }
    if (s < 60) {
        uint32_t ms = ns / 1000000;
        p = put_fixed(p, (double)s + (double)ms / 1000, 3 - digit_count(s));
        return finish(buf, put_str(p, " s"));
    }
    uint64_t big, small;
    const char *big_unit, *small_unit;
    if (s < 3600) {
        big = s / 60, small = s % 60, big_unit = " m ", small_unit = " s";
    } else if (s < 86400) {
        big = s / 3600, small = s / 60 % 60, big_unit = " h ", small_unit = " m";
    } else {
        big = s / 86400, small = s / 3600 % 24, big_unit = " d ", small_unit = " h";
    }
    p = put_str(jfr__digits(p, big), big_unit);
    p = put_str(jfr__digits(p, small), small_unit);
    return finish(buf, p);
}

size_t jfmt_data_amount(int64_t amount, bool bits, bool per_second, char *buf) {
    char *p = buf;
    if (amount == INT64_MIN)
        return finish(buf, put_str(p, "N/A"));
    if (amount > -1024 && amount < 1024) {
        if (amount < 0)
            *p++ = '-';
        p = jfr__digits(p, (uint64_t)(amount < 0 ? -amount : amount));
        if (per_second)
            return finish(buf, put_str(p, bits ? " bps" : " byte/s"));
        p = put_str(p, bits ? " bit" : " byte");
        if (amount != 1 && amount != -1)
            *p++ = 's';
        return finish(buf, p);
    }
    /* the unit as the JDK picks it, in the same double operations: the
     * ratio of logarithms, cut to an int, is 5 for 2^50 - 1 (its double is
     * exact, yet the ratio rounds up to 5.0) and 1 for 2^20 - 1 */
    double mag = (double)(amount < 0 ? -amount : amount);
    int exp = (int)(log(mag) / log(1024.0));
    exp = exp < 1 ? 1 : exp > 6 ? 6 : exp; /* 1 .. 6 for every long */
    p = put_fixed(p, (double)amount / pow(1024.0, exp), 1);
    *p++ = ' ';
    *p++ = "kMGTPE"[exp - 1];
    if (bits)
        return finish(buf, put_str(p, per_second ? "bps" : "bit"));
    return finish(buf, put_str(p, per_second ? "B/s" : "B"));
}

size_t jfmt_pretty_time(int64_t epoch_seconds, int32_t nanos, int32_t offset_seconds,
                        bool exact, char *buf) {
    int sod;
    int64_t day = jfmt__local_day(epoch_seconds, offset_seconds, &sod);
    char *p = jfmt__put_hms(buf, sod);
    *p++ = '.';
    p = exact ? put_padded(p, (uint64_t)nanos, 9) : put_padded(p, (uint64_t)nanos / 1000000, 3);
    *p++ = ' ';
    *p++ = '(';
    p = jfmt__put_era_date(p, day);
    *p++ = ')';
    return finish(buf, p);
}

size_t jfmt_hex_address(int64_t v, char *buf) {
    uint64_t u = (uint64_t)v;
    int n = 8;
    while (n < 16 && (u >> (4 * n)) != 0)
        n++;
    char *p = buf;
    *p++ = '0';
    *p++ = 'x';
    for (int k = n - 1; k >= 0; k--)
        *p++ = "0123456789ABCDEF"[(u >> (4 * k)) & 15];
    return finish(buf, p);
}

bool jfmt_descriptor_type(const char *s, size_t n, size_t *i, bool simple, jfmt_desc_type *out) {
    static const char *const prim[] = {"int", "long", "boolean", "double", "float", "short", "char", "byte"};
    static const char codes[] = "IJZDFSCB";
    out->dims = 0;
    while (*i < n && s[*i] == '[') {
        out->dims++;
        (*i)++;
    }
    if (*i >= n) {
        *i = n;
        return false;
    }
    const char *c = s[*i] ? strchr(codes, s[*i]) : NULL;
    out->is_class = s[*i] == 'L';
    if (out->is_class) {
        const char *semi = memchr(s + *i, ';', n - *i);
        size_t end = semi ? (size_t)(semi - s) : n;
        size_t from = *i + 1;
        if (simple)
            for (size_t k = from; k < end; k++)
                if (s[k] == '.' || s[k] == '/')
                    from = k + 1;
        out->name = s + from;
        out->len = end - from;
        *i = end;
    } else {
        out->name = c ? prim[c - codes] : "<unknown-descriptor-type>";
        out->len = strlen(out->name);
    }
    (*i)++;
    return true;
}
