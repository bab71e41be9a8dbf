/*
 * query_value.c — the values of a query (query_run.h) as the JDK's query
 * engine treats them: their Java hashCode and equals (the keys of its
 * HashMap of groups), Comparable.compareTo (MAX, MIN, sorting) and their
 * text (FieldFormatter.format and formatCompact, ValueFormatter).
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#include "query_run.h"

#include "jformat.h"
#include "mem.h"
#include "ticks.h" /* jfr__java_d2l */

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static int32_t long_hash(int64_t v) { return (int32_t)((uint64_t)v ^ ((uint64_t)v >> 32)); }

/* ------------------------------------------------------------ Java hashes */

int32_t jq_jv_hash(const jv *v) {
    switch (v->k) {
    case JV_NULL: return 0;
    case JV_BYTE: case JV_SHORT: case JV_INT: case JV_CHAR: return (int32_t)v->i;
    case JV_LONG: return long_hash(v->i);
    case JV_BOOL: return v->b ? 1231 : 1237;
    case JV_FLOAT: {
        float f = (float)v->d;
        uint32_t bits;
        if (isnan(f))
            bits = 0x7fc00000u;
        else
            memcpy(&bits, &f, 4);
        return (int32_t)bits;
    }
    case JV_DOUBLE: {
        uint64_t bits;
        if (isnan(v->d))
            bits = 0x7ff8000000000000ULL;
        else
            memcpy(&bits, &v->d, 8);
        return long_hash((int64_t)bits);
    }
    case JV_INSTANT:
    case JV_DURATION: return (int32_t)((uint32_t)long_hash(v->i) + 51u * (uint32_t)v->ns);
    case JV_OBJ: return ((const qobj *)v->o)->jhash;
    default: return 0;
    }
}

bool jq_jv_equal(const jv *a, const jv *b) {
    if (a->k != b->k)
        return false;
    switch (a->k) {
    case JV_NULL: return true;
    case JV_BOOL: return a->b == b->b;
    case JV_FLOAT: case JV_DOUBLE: {
        uint64_t x, y; /* Double.equals: bits (NaN equal, -0.0 != 0.0) */
        double dx = isnan(a->d) ? NAN : a->d, dy = isnan(b->d) ? NAN : b->d;
        memcpy(&x, &dx, 8);
        memcpy(&y, &dy, 8);
        return x == y;
    }
    case JV_INSTANT: case JV_DURATION: return a->i == b->i && a->ns == b->ns;
    case JV_OBJ: case JV_LIST: return a->o == b->o;
    default: return a->i == b->i;
    }
}

/* ------------------------------------------------------------- comparing */

int jq_cmp_d(double a, double b) { /* Double.compare */
    if (a < b) return -1;
    if (a > b) return 1;
    uint64_t x, y;
    double xa = isnan(a) ? NAN : a, yb = isnan(b) ? NAN : b;
    memcpy(&x, &xa, 8);
    memcpy(&y, &yb, 8);
    int64_t sx = (int64_t)x, sy = (int64_t)y;
    return sx == sy ? 0 : sx < sy ? -1 : 1;
}

/* Comparable.compareTo between two values of one class. */
int jq_jv_compare(const jv *a, const jv *b) {
    if (jq_is_integral(a) && jq_is_integral(b))
        return a->i < b->i ? -1 : a->i > b->i;
    if (jq_is_number(a) && jq_is_number(b))
        return jq_cmp_d(jq_num_d(a), jq_num_d(b));
    if ((a->k == JV_INSTANT || a->k == JV_DURATION) && a->k == b->k)
        return a->i != b->i ? (a->i < b->i ? -1 : 1) : (a->ns < b->ns ? -1 : a->ns > b->ns);
    if (a->k == JV_BOOL && b->k == JV_BOOL)
        return (int)a->b - (int)b->b;
    if (a->k == JV_CHAR && b->k == JV_CHAR)
        return a->i < b->i ? -1 : a->i > b->i;
    if (a->k == JV_OBJ && b->k == JV_OBJ) {
        const qobj *x = a->o, *y = b->o;
        if (x->kind == QK_STR && y->kind == QK_STR)
            return jfmt_utf16_compare(x->text, y->text);
    }
    return 0;
}

bool jq_jv_comparable(const jv *v) {
    if (v->k == JV_NULL || v->k == JV_LIST)
        return false;
    if (v->k == JV_OBJ)
        return ((const qobj *)v->o)->kind == QK_STR;
    return true;
}

/* ------------------------------------------------------------- formatting */

void jq_fput(jq_fbuf *b, const char *s, size_t n) {
    if (b->oom)
        return;
    if (b->n + n + 1 > b->cap) {
        size_t nc = b->cap ? b->cap * 2 : 128;
        while (nc < b->n + n + 1)
            nc *= 2;
        char *np = jq_alloc(&b->r->ar, nc);
        if (!np) {
            b->oom = true;
            return;
        }
        if (b->n)
            memcpy(np, b->p, b->n);
        b->p = np;
        b->cap = nc;
    }
    if (n)
        memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = 0;
}
static void fputs_(jq_fbuf *b, const char *s) { jq_fput(b, s, strlen(s)); }

/* NumberFormat.getNumberInstance(en): grouping, at most 3 fraction digits,
 * HALF_EVEN on the exact value (glibc's %.3f rounds the exact binary value
 * to nearest, ties to even, which is what DecimalFormat arrives at). */
static void format_number(jq_fbuf *b, const jv *v) {
    char tmp[400];
    if (v->k >= JV_BYTE && v->k <= JV_LONG) {
        snprintf(tmp, sizeof tmp, "%lld", (long long)v->i);
    } else {
        double d = v->d;
        if (isnan(d)) {
            fputs_(b, "NaN");
            return;
        }
        if (isinf(d)) {
            fputs_(b, d < 0 ? "-\xe2\x88\x9e" : "\xe2\x88\x9e");
            return;
        }
        if (fabs(d) >= 1e17) { /* DecimalFormat: Double.toString's digits, then zeros */
            tmp[0] = '-';
            jfmt_large_integer(d, tmp + (d < 0));
        } else {
            snprintf(tmp, sizeof tmp, "%.3f", d);
        }
        char *dot = strchr(tmp, '.');
        if (dot) {
            char *e = tmp + strlen(tmp);
            while (e > dot + 1 && e[-1] == '0')
                *--e = 0;
            if (e == dot + 1)
                *dot = 0;
        }
    }
    const char *s = tmp;
    if (*s == '-') {
        jq_fput(b, "-", 1);
        s++;
    }
    const char *dot = strchr(s, '.');
    size_t il = dot ? (size_t)(dot - s) : strlen(s);
    for (size_t k = 0; k < il; k++) {
        if (k && (il - k) % 3 == 0)
            jq_fput(b, ",", 1);
        jq_fput(b, s + k, 1);
    }
    if (dot)
        fputs_(b, dot);
}

static void format_instant(jq_fbuf *b, const jv *v) {
    if (v->i == -31557014167219200LL && v->ns == 0) {
        fputs_(b, "N/A");
        return;
    }
    time_t t = (time_t)v->i;
    struct tm tm;
    char tmp[16];
    if (!localtime_r(&t, &tm)) {
        fputs_(b, "N/A");
        return;
    }
    snprintf(tmp, sizeof tmp, "%02d:%02d:%02d", tm.tm_hour, tm.tm_min, tm.tm_sec);
    fputs_(b, tmp);
}

/* ValueFormatter.formatDuration(d, precision) below a second (FORMAT
 * ms-precision:N): the JDK's rounding to three significant digits, then
 * N decimals of milliseconds. False: at or past a second, where the
 * precision does not apply. */
static bool format_precise(jq_fbuf *b, const jv *v, int precision) {
    char tmp[JFMT_FIXED_MAX + 8];
    bool neg = v->i < 0;
    int64_t s = v->i, ns = v->ns;
    if (neg) { /* abs() of a Duration */
        s = -s - (ns ? 1 : 0);
        ns = ns ? 1000000000 - ns : 0;
    }
    if (s != 0 || (s == 0 && ns == 0))
        return false;
    if (ns >= 1000) {
        int len = (int)log10((double)ns) + 1;
        double round = pow(10, len - 3);
        int64_t r = (int64_t)floor((double)ns / round + 0.5) * (int64_t)round;
        if (r >= 1000000000)
            return false;
        ns = r;
    }
    if (neg)
        jq_fput(b, "-", 1);
    jq_fput(b, tmp, jfmt_fixed((double)ns / 1000000, precision, tmp));
    fputs_(b, " ms");
    return true;
}

static void format_to(jq_fbuf *b, const qfield *f, const jv *v, bool compact) {
    char tmp[JFMT_FIXED_MAX + 8];
    switch (v->k) {
    case JV_NULL:
        fputs_(b, f->missing);
        return;
    case JV_LIST: {
        const qlist *l = v->o;
        for (size_t k = 0; k < l->n; k++) {
            if (k)
                fputs_(b, ", ");
            format_to(b, f, &l->v[k], compact);
        }
        return;
    }
    case JV_OBJ: {
        const qobj *o = v->o;
        if (o->kind == QK_STR) {
            for (size_t k = 0; k < o->tlen; k++) {
                char c = o->text[k];
                jq_fput(b, (c == '\n' || c == '\r' || c == '\t') ? " " : &o->text[k], 1);
            }
            return;
        }
        if (o->kind == QK_STACK && !o->nframes) {
            fputs_(b, f->missing); /* the JDK throws on getFirst() here */
            return;
        }
        if (!o->text) {
            fputs_(b, f->missing);
            return;
        }
        bool c = compact && (o->kind == QK_METHOD || o->kind == QK_CLASS || o->kind == QK_LOADER ||
                             o->kind == QK_STACK);
        jq_fput(b, c ? o->compact : o->text, c ? o->clen : o->tlen);
        return;
    }
    case JV_DOUBLE:
    case JV_FLOAT:
        if (isnan(v->d) || (isinf(v->d) && v->d < 0)) {
            fputs_(b, f->missing);
            return;
        }
        break;
    case JV_LONG:
        if (v->i == INT64_MIN) {
            fputs_(b, f->missing);
            return;
        }
        break;
    case JV_INT:
        if (v->i == INT32_MIN) {
            fputs_(b, f->missing);
            return;
        }
        break;
    case JV_DURATION:
        if (v->i == INT64_MIN && v->ns == 0) {
            fputs_(b, f->missing);
            return;
        }
        if (v->i == INT64_MAX && v->ns == 999999999) {
            fputs_(b, "Indefinite");
            return;
        }
        if (f->precision >= 0 && format_precise(b, v, f->precision))
            return;
        jq_fput(b, tmp, jfmt_pretty_duration(v->i, v->ns, tmp));
        return;
    case JV_INSTANT:
        format_instant(b, v);
        return;
    default:
        break;
    }
    bool num = v->k >= JV_BYTE && v->k <= JV_DOUBLE;
    if (f->percentage && num) {
        double d = v->k <= JV_LONG ? (double)v->i : v->d;
        jq_fput(b, tmp, jfmt_fixed(d * 100, 2, tmp));
        jq_fput(b, "%", 1);
        return;
    }
    if ((f->bits || f->bytes) && num) {
        int64_t amount = v->k <= JV_LONG ? v->i : jfr__java_d2l(v->d);
        jq_fput(b, tmp, jfmt_data_amount(amount, !f->bytes, f->frequency, tmp));
        return;
    }
    if (f->memaddr && num) {
        int64_t d = v->k <= JV_LONG ? v->i : jfr__java_d2l(v->d);
        jq_fput(b, tmp, jfmt_hex_address(d, tmp));
        return;
    }
    if (f->frequency && num) {
        if (v->k <= JV_LONG)
            snprintf(tmp, sizeof tmp, "%lld", (long long)v->i);
        else if (v->k == JV_FLOAT)
            tmp[jfmt_float((float)v->d, tmp)] = 0;
        else
            tmp[jfmt_double(v->d, tmp)] = 0;
        fputs_(b, tmp);
        fputs_(b, " Hz");
        return;
    }
    if (num) {
        format_number(b, v);
        return;
    }
    if (v->k == JV_BOOL) {
        fputs_(b, v->b ? "true" : "false");
        return;
    }
    if (v->k == JV_CHAR) {
        char u[4];
        uint32_t c = (uint32_t)v->i;
        size_t n = c < 0x80 ? (u[0] = (char)c, 1)
                   : c < 0x800 ? (u[0] = (char)(0xC0 | c >> 6), u[1] = (char)(0x80 | (c & 63)), 2)
                               : (u[0] = (char)(0xE0 | c >> 12), u[1] = (char)(0x80 | ((c >> 6) & 63)),
                                  u[2] = (char)(0x80 | (c & 63)), 3);
        jq_fput(b, u, n);
    }
}

const char *jq_format(jq_run *r, const qfield *f, const jv *v, bool compact, size_t *len) {
    jq_fbuf b = {.r = r};
    jq_fput(&b, "", 0);
    format_to(&b, f, v, compact);
    if (b.oom)
        return NULL;
    *len = b.n;
    return b.p;
}

