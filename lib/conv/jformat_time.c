/*
 * jformat_time.c — java.time's Duration and OffsetDateTime toString, and
 * JFR's tick conversions as the JDK does them (see jformat.h).
 *
 * Written from the documented behaviour of the Java SE APIs and verified
 * against the JDK.
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#include "jformat.h"
#include "digits.h"
#include "ticks.h"

#include <math.h>
#include <string.h>

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

static char *put_i64(char *p, int64_t v) {
    if (v < 0) {
        *p++ = '-';
        return jfr__digits(p, (uint64_t)0 - (uint64_t)v);
    }
    return jfr__digits(p, (uint64_t)v);
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

int64_t jfmt__local_day(int64_t epoch_seconds, int32_t offset_seconds, int *second_of_day) {
    /* the offset added to the second of the day, not to epoch_seconds:
     * no overflow at the ends of int64_t */
    int64_t day = floor_div(epoch_seconds, 86400);
    int64_t sod = floor_mod(epoch_seconds, 86400) + offset_seconds;
    day += floor_div(sod, 86400);
    *second_of_day = (int)floor_mod(sod, 86400);
    return day;
}

size_t jfmt_offset_date_time(int64_t epoch_seconds, int32_t nanos,
                             int32_t offset_seconds, char *buf) {
    int sod;
    int64_t day = jfmt__local_day(epoch_seconds, offset_seconds, &sod);
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

char *jfmt__put_era_date(char *p, int64_t epoch_day) {
    int64_t y;
    int m, d;
    civil_from_days(epoch_day, &y, &m, &d);
    /* "yyyy" is the year of era (no era shown: year 0 is 0001, -1 is 0002):
     * four digits at least, '+' beyond four (SignStyle.EXCEEDS_PAD) */
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
    return put2(p, d);
}

char *jfmt__put_hms(char *p, int second_of_day) {
    p = put2(p, second_of_day / 3600);
    *p++ = ':';
    p = put2(p, second_of_day / 60 % 60);
    *p++ = ':';
    return put2(p, second_of_day % 60);
}

size_t jfmt_utc_date_time(int64_t epoch_seconds, char *buf) {
    int sod;
    int64_t day = jfmt__local_day(epoch_seconds, 0, &sod);
    char *p = jfmt__put_era_date(buf, day);
    *p++ = ' ';
    p = jfmt__put_hms(p, sod);
    *p = '\0';
    return (size_t)(p - buf);
}

/* the JDK's divisor = ticksPerSecond / 1e9 in double arithmetic (0 for a
 * chunk that says 0 ticks a second: Java's x / 0.0) */
static double tb_divisor(const jfmt_timebase *tb) { return (double)tb->ticks_per_second / 1e9; }

int64_t jfmt_ticks_to_epoch_nanos(const jfmt_timebase *tb, int64_t ticks) {
    int64_t delta = (int64_t)((uint64_t)ticks - (uint64_t)tb->start_ticks);
    return (int64_t)((uint64_t)tb->start_nanos + (uint64_t)jfr__ticks_div(delta, tb_divisor(tb)));
}

int64_t jfmt_ticks_to_nanos(const jfmt_timebase *tb, int64_t ticks) {
    return jfr__ticks_div(ticks, tb_divisor(tb));
}

void jfmt_timespan_value(int64_t v, jfmt_span_unit unit, const jfmt_timebase *tb,
                         int64_t *seconds, int32_t *nanos) {
    int64_t ns;
    *nanos = 0;
    if (v == 0 || v == INT64_MIN) {
        *seconds = v;
        return;
    }
    if (v == INT64_MAX) { /* ChronoUnit.FOREVER */
        *seconds = INT64_MAX;
        *nanos = 999999999;
        return;
    }
    switch (unit) {
    case JFMT_SPAN_SECONDS:
        *seconds = v;
        return;
    case JFMT_SPAN_MILLIS:
        *seconds = floor_div(v, 1000);
        *nanos = (int32_t)(floor_mod(v, 1000) * 1000000);
        return;
    case JFMT_SPAN_MICROS:
        ns = (int64_t)((uint64_t)v * 1000u); /* Java long overflow wraps */
        break;
    case JFMT_SPAN_TICKS:
        ns = jfmt_ticks_to_nanos(tb, v);
        break;
    case JFMT_SPAN_NANOS:
    default:
        ns = v;
        break;
    }
    *seconds = floor_div(ns, 1000000000);
    *nanos = (int32_t)floor_mod(ns, 1000000000);
}

size_t jfmt_timespan(int64_t v, jfmt_span_unit unit, const jfmt_timebase *tb,
                     char *buf) {
    int64_t s;
    int32_t ns;
    jfmt_timespan_value(v, unit, tb, &s, &ns);
    return jfmt_duration(s, ns, buf);
}

bool jfmt_timestamp_value(int64_t v, bool millis, const jfmt_timebase *tb,
                          int64_t *epoch_seconds, int32_t *nanos) {
    if (v == INT64_MIN)
        return false;
    int64_t ns = millis ? 0 : jfmt_ticks_to_epoch_nanos(tb, v);
    *epoch_seconds = millis ? floor_div(v, 1000) : floor_div(ns, 1000000000);
    *nanos = millis ? (int32_t)(floor_mod(v, 1000) * 1000000) : (int32_t)floor_mod(ns, 1000000000);
    return true;
}

size_t jfmt_timestamp(int64_t v, bool millis, const jfmt_timebase *tb,
                      int32_t offset_seconds, char *buf) {
    int64_t s;
    int32_t ns;
    if (!jfmt_timestamp_value(v, millis, tb, &s, &ns)) {
        size_t n = strlen(JFMT_OFFSET_DATE_TIME_MIN);
        memcpy(buf, JFMT_OFFSET_DATE_TIME_MIN, n + 1);
        return n;
    }
    return jfmt_offset_date_time(s, ns, offset_seconds, buf);
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
