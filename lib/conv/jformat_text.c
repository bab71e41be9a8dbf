/*
 * jformat_text.c — what `jfr print` (text) formats with: String.format's
 * %.Nf, and JDK 25's jdk.jfr.internal.util.ValueFormatter for durations and
 * data amounts (see jformat.h).
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#include "digits.h"
#include "jformat.h"

#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

/* ---------------------------------------------------------------- %.Nf */

size_t jfmt_fixed(double v, int prec, char *buf) {
    if (isnan(v))
        return (size_t)sprintf(buf, "NaN");
    if (isinf(v))
        return (size_t)sprintf(buf, v < 0 ? "-Infinity" : "Infinity");
    if (prec < 0)
        prec = 0;
    if (prec > 17)
        prec = 17;
    /* Java 21+ rounds the shortest decimal (Double.toString's digits), half
     * up, not the binary value: 0.125 -> "0.13", 1.005 -> "1.01" */
    char t[JFMT_NUM_MAX];
    jfmt_double(fabs(v), t);
    char dig[24];
    int n = 0, point = -1, e10 = 0;
    for (const char *s = t; *s; s++) {
        if (*s >= '0' && *s <= '9') {
            if (n == 0 && *s == '0') { /* leading zeros: only shift the point */
                if (point >= 0)
                    e10--;
                continue;
            }
            if (n < (int)sizeof dig)
                dig[n++] = *s;
            if (point < 0)
                e10++;
        } else if (*s == '.') {
            point = n;
        } else if (*s == 'E') {
            e10 += atoi(s + 1);
            break;
        }
    }
    while (n > 0 && dig[n - 1] == '0')
        n--;
    /* value = 0.dig[0..n) x 10^e10: `e10` digits before the point */
    int keep = e10 + prec; /* significant digits kept */
    if (n == 0 || keep < 0) {
        n = 0;
    } else if (keep < n) {
        bool up = dig[keep] >= '5';
        n = keep;
        for (int i = n - 1; up && i >= 0; i--) {
            if (dig[i] == '9') {
                dig[i] = '0';
            } else {
                dig[i]++;
                up = false;
            }
        }
        if (up) { /* 9.99 -> 10.0, or 0.5 at keep 0 -> 1 */
            memmove(dig + 1, dig, (size_t)n);
            dig[0] = '1';
            n++;
            e10++;
        }
        while (n > 0 && dig[n - 1] == '0')
            n--;
    }
    char *p = buf;
    if (signbit(v)) /* Double.compare(v, 0.0) < 0: -0.0 too */
        *p++ = '-';
    if (n == 0 || e10 <= 0) {
        *p++ = '0';
    } else {
        for (int i = 0; i < e10; i++)
            *p++ = i < n ? dig[i] : '0';
    }
    if (prec > 0) {
        *p++ = '.';
        for (int i = 0; i < prec; i++) {
            int at = e10 + i; /* index into dig */
            *p++ = n > 0 && at >= 0 && at < n ? dig[at] : '0';
        }
    }
    *p = '\0';
    return (size_t)(p - buf);
}

/* ----------------------------------------------------------- data amounts */

size_t jfmt_data_amount(int64_t amount, bool bits, bool per_second, char *buf) {
    static const char *const small[2][2] = {{" bytes", " byte/s"}, {" bits", " bps"}};
    static const char *const big[2][2] = {{"B", "B/s"}, {"bit", "bps"}};
    char *p = buf;
    if (amount > -1024 && amount < 1024) {
        if (amount < 0)
            *p++ = '-';
        p = jfr__digits(p, (uint64_t)(amount < 0 ? -amount : amount));
        const char *unit = small[bits][per_second];
        if (!per_second && (amount == 1 || amount == -1))
            unit = bits ? " bit" : " byte";
        size_t k = strlen(unit);
        memcpy(p, unit, k + 1);
        return (size_t)(p - buf) + k;
    }
    if (amount == INT64_MIN) {
        memcpy(buf, "N/A", 4);
        return 3;
    }
    /* ValueFormatter's own double arithmetic, so that values at the powers
     * of 1024 fall on the same side */
    double a = (double)(amount < 0 ? -amount : amount);
    int exp = (int)(log(a) / log(1024));
    if (exp < 1)
        exp = 1;
    if (exp > 6)
        exp = 6;
    size_t len = jfmt_fixed((double)amount / pow(1024, exp), 1, buf);
    p = buf + len;
    *p++ = ' ';
    *p++ = "kMGTPE"[exp - 1];
    const char *unit = big[bits][per_second];
    size_t k = strlen(unit);
    memcpy(p, unit, k + 1);
    return (size_t)(p - buf) + k;
}

size_t jfmt_hex_address(int64_t v, char *buf) {
    return (size_t)sprintf(buf, "0x%08llX", (unsigned long long)v);
}

/* -------------------------------------------------------------- durations */

#define NS 1000000000

/* A java.time.Duration, positive here: seconds, nanos. */
typedef struct jdur {
    int64_t s;
    int32_t ns;
} jdur;

static int cmp(jdur a, int64_t s, int32_t ns) {
    return a.s != s ? (a.s < s ? -1 : 1) : (a.ns < ns ? -1 : a.ns > ns);
}

static int ndigits(int64_t v) {
    int n = 1;
    while (v >= 10) {
        v /= 10;
        n++;
    }
    return n;
}

static int64_t pow10i(int k) {
    int64_t r = 1;
    while (k-- > 0)
        r *= 10;
    return r;
}

/* Math.round(x) for the values here (x >= 0, no tie hidden by x + 0.5). */
static int64_t jround(double x) { return (int64_t)floor(x + 0.5); }

/* d + add seconds, truncated to `unit` seconds (plusX then truncatedTo);
 * past Long.MAX_VALUE seconds the JDK throws: saturated here. */
static jdur add_trunc(jdur d, int64_t add_s, int32_t add_ns, int64_t unit) {
    int64_t ns = (int64_t)d.ns + add_ns;
    int64_t s = d.s;
    if (ns >= NS) {
        ns -= NS;
        s = s == INT64_MAX ? s : s + 1;
    }
    s = s > INT64_MAX - add_s ? INT64_MAX : s + add_s;
    return (jdur){unit > 1 ? s - s % unit : s, unit >= 1 ? 0 : (int32_t)ns};
}

/* ValueFormatter.roundPositiveDuration. */
static jdur round_positive(jdur d) {
    if (cmp(d, 0, 1000) < 0)
        return d;
    if (cmp(d, 1, 0) < 0) { /* three significant digits of the nanos */
        int64_t r = pow10i(ndigits(d.ns) - 3);
        int64_t ns = jround((double)d.ns / (double)r) * r;
        return ns >= NS ? (jdur){d.s + 1, (int32_t)(ns - NS)} : (jdur){d.s, (int32_t)ns};
    }
    if (cmp(d, 60, 0) < 0) { /* 1.23 s, 12.3 s: millis to 10 or 100 */
        int64_t r = pow10i(ndigits(d.s));
        int64_t ms = jround((double)(d.ns / 1000000) / (double)r) * r;
        jdur x = {d.s + ms / 1000, (int32_t)(ms % 1000) * 1000000};
        return x;
    }
    if (cmp(d, 3600, 0) < 0)
        return add_trunc(d, 0, 500000000, 1);
    if (cmp(d, 86400, 0) < 0)
        return add_trunc(d, 30, 0, 60);
    return add_trunc(d, 1800, 0, 3600);
}

/* ValueFormatter.formatPositiveDuration. */
static size_t format_positive(jdur d, char *buf) {
    if (cmp(d, 0, 1000) < 0) {
        size_t n = jfmt_fixed((double)d.ns / 1000000, 6, buf);
        memcpy(buf + n, " ms", 4);
        return n + 3;
    }
    if (cmp(d, 1, 0) < 0) {
        size_t n = jfmt_fixed((double)d.ns / 1000000, 9 - ndigits(d.ns), buf);
        memcpy(buf + n, " ms", 4);
        return n + 3;
    }
    if (cmp(d, 60, 0) < 0) {
        size_t n = jfmt_fixed((double)d.s + (double)(d.ns / 1000000) / 1000, 3 - ndigits(d.s), buf);
        memcpy(buf + n, " s", 3);
        return n + 2;
    }
    if (cmp(d, 3600, 0) < 0)
        return (size_t)sprintf(buf, "%d m %d s", (int)(d.s / 60), (int)(d.s % 60));
    if (cmp(d, 86400, 0) < 0)
        return (size_t)sprintf(buf, "%d h %d m", (int)(d.s / 3600), (int)(d.s / 60 % 60));
    return (size_t)sprintf(buf, "%lld d %d h", (long long)(d.s / 86400), (int)(d.s / 3600 % 24));
}

size_t jfmt_pretty_duration(int64_t seconds, int32_t nanos, char *buf) {
    jdur d = {seconds, nanos};
    if (seconds == 0 && nanos == 0) {
        memcpy(buf, "0 s", 4);
        return 3;
    }
    if (seconds < 0) { /* abs (Duration.MIN's abs throws in the JDK: saturated) */
        d = nanos ? (jdur){seconds == INT64_MIN ? INT64_MAX : -seconds - 1, NS - nanos}
                  : (jdur){seconds == INT64_MIN ? INT64_MAX : -seconds, 0};
        buf[0] = '-';
        return 1 + format_positive(round_positive(d), buf + 1);
    }
    return format_positive(round_positive(d), buf);
}
