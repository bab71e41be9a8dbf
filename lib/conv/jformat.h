/*
 * jformat.h — Java-compatible text formatting for the converters, one file
 * a job: Double/Float.toString (JDK 19+ shortest decimal: jformat_decimal.c),
 * java.time.Duration and OffsetDateTime toString and JFR time conversions as
 * the JDK does them (jformat_time.c), UTF-8 read as Java's UTF-16 units
 * (jformat_utf16.c), the JSON string escaping of `jfr print --json`
 * (jformat_json.c), and the value formats of the text `jfr print`
 * (jformat_text.c).
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#ifndef JFRSTREAM_CONV_JFORMAT_H
#define JFRSTREAM_CONV_JFORMAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "outbuf.h"

/* Buffer sizes large enough for any result of the functions below. */
#define JFMT_NUM_MAX 40  /* doubles, floats, integers */
#define JFMT_TIME_MAX 64 /* durations and date-times  */

/* Double.toString(v) / Float.toString(v) of JDK 19+ ("NaN", "Infinity",
 * "-0.0", "1.0E-5", "0.1", ...). Returns the length; buf gets a NUL too. */
size_t jfmt_double(double v, char *buf);
/* The integer digits NumberFormat prints for a double of 1e17 or more in
 * magnitude (no fraction there): the digits of Double.toString, then zeros
 * ("340282346638528860000..." for Float.MAX_VALUE), without sign or
 * grouping; NUL-terminated. At most 310 bytes. */
size_t jfmt_large_integer(double v, char *buf);
size_t jfmt_float(float v, char *buf);
/* The same by the slow exact search (correctly rounded printf and strtod):
 * what the fast one is tested against. */
size_t jfmt_double_exact(double v, char *buf);
size_t jfmt_float_exact(float v, char *buf);

/* java.time.Duration.toString() of a duration (seconds, 0 <= nanos < 1e9). */
size_t jfmt_duration(int64_t seconds, int32_t nanos, char *buf);

/* OffsetDateTime.toString() of the instant (epoch seconds, 0 <= nanos < 1e9)
 * at a zone offset in seconds (|offset| <= 18 h). */
size_t jfmt_offset_date_time(int64_t epoch_seconds, int32_t nanos,
                             int32_t offset_seconds, char *buf);
/* OffsetDateTime.MIN.toString(): what the JDK prints for Instant.MIN. */
#define JFMT_OFFSET_DATE_TIME_MIN "-999999999-01-01T00:00+18:00"

/* "yyyy-MM-dd HH:mm:ss" in UTC (jfr summary's Start). */
size_t jfmt_utc_date_time(int64_t epoch_seconds, char *buf);

/* The JDK's tick conversion (jdk.jfr.internal.consumer.TimeConverter), built
 * from one chunk header: divisor = ticks_per_second / 1e9 (double);
 * nanos = (long)(ticks / divisor), saturating like a Java cast. */
typedef struct jfmt_timebase {
    int64_t start_nanos;
    int64_t start_ticks;
    int64_t ticks_per_second;
} jfmt_timebase;
int64_t jfmt_ticks_to_epoch_nanos(const jfmt_timebase *tb, int64_t ticks);
int64_t jfmt_ticks_to_nanos(const jfmt_timebase *tb, int64_t ticks);

/* Units of a timespan / timestamp value (subset of enum jfr_unit meaning). */
typedef enum jfmt_span_unit {
    JFMT_SPAN_TICKS,
    JFMT_SPAN_NANOS,
    JFMT_SPAN_MICROS,
    JFMT_SPAN_MILLIS,
    JFMT_SPAN_SECONDS
} jfmt_span_unit;

/* RecordedObject.getDuration(...).toString() for an already widened value:
 * 0, Long.MIN_VALUE and Long.MAX_VALUE are the JDK's sentinels. */
size_t jfmt_timespan(int64_t value, jfmt_span_unit unit, const jfmt_timebase *tb,
                     char *buf);
/* RecordedObject.getOffsetDateTime(...).toString(): `millis` selects
 * MILLISECONDS_SINCE_EPOCH, else TICKS. Long.MIN_VALUE -> OffsetDateTime.MIN. */
size_t jfmt_timestamp(int64_t value, bool millis, const jfmt_timebase *tb,
                      int32_t offset_seconds, char *buf);
/* The same conversions to the java.time values themselves: the Duration
 * (seconds, 0 <= nanos < 1e9; the sentinels as the JDK makes them: 0,
 * (Long.MIN_VALUE, 0), FOREVER = (Long.MAX_VALUE, 999999999)) and the
 * Instant (false for Long.MIN_VALUE: OffsetDateTime.MIN). */
void jfmt_timespan_value(int64_t value, jfmt_span_unit unit, const jfmt_timebase *tb,
                         int64_t *seconds, int32_t *nanos);
bool jfmt_timestamp_value(int64_t value, bool millis, const jfmt_timebase *tb,
                          int64_t *epoch_seconds, int32_t *nanos);

/*
 * The values of the text `jfr print` as JDK 25's PrettyWriter formats them
 * (jformat_text.c), in an English locale (String.format follows the
 * default locale: "12,3 ms" in a German one).
 */
/* Room for any jfmt_fixed result (a %f of 1e308 has 309 integer digits). */
#define JFMT_FIXED_MAX 352
/* String.format("%.<prec>f", v) of JDK 21+: the digits of Double.toString(v)
 * (the shortest decimal that reads back, not the exact binary value) rounded
 * half up to prec fraction digits: "0.13" for 0.125, "2.68" for 2.675
 * (printf says 0.12 and 2.67). No exponent; "-" before every negative value
 * and -0.0, also where it rounds to zero ("-0.00" for -0.0 and -0.001);
 * "NaN", "Infinity", "-Infinity". prec is 0..17 (clamped to that). */
size_t jfmt_fixed(double v, int prec, char *buf);
/* ValueFormatter.formatDuration of a java.time.Duration (seconds, 0 <= nanos
 * < 1e9), rounded as the JDK rounds: "0 s"; below 1 us "0.000123 ms"; three
 * significant digits below 1 s in ms ("0.00123 ms", "12.3 ms", "123 ms"),
 * below 1 min in s ("1.23 s", "12.3 s"); then "1 m 2 s", "1 h 2 m", "1 d 2 h"
 * to the nearest second, minute, hour (halves up); negatives with '-'. Where
 * the JDK throws (the rounding overflows a long: within half an hour of
 * Long.MAX_VALUE s, or Long.MIN_VALUE s) the rounded value is printed all
 * the same. At most JFMT_NUM_MAX bytes. */
size_t jfmt_pretty_duration(int64_t seconds, int32_t nanos, char *buf);
/* ValueFormatter.formatBytes / formatBits, or with per_second
 * formatBytesPerSecond / formatBitsPerSecond: below 1024 in magnitude the
 * integer ("1 byte", "12 bytes", "1 bit", "12 bits", "12 byte/s", "12 bps"),
 * else one decimal of the power of 1024 the JDK's Math.log ratio picks
 * ("1.0 kB", "2.5 MB", "3.0 kbit", "1.2 kB/s", "1.2 kbps"; 1048575 is
 * "1024.0 kB", 2^50 - 1 "1.0 PB"); Long.MIN_VALUE "N/A". At most
 * JFMT_NUM_MAX bytes. */
size_t jfmt_data_amount(int64_t amount, bool bits, bool per_second, char *buf);
/* DateTimeFormatter "HH:mm:ss.SSS (yyyy-MM-dd)" (exact: "HH:mm:ss.SSSSSSSSS
 * (yyyy-MM-dd)") of the instant (epoch seconds, 0 <= nanos < 1e9) at the zone
 * offset in seconds: PrettyWriter's @Timestamp values. The fraction is cut,
 * not rounded; yyyy is the year of era (year 0 is "0001", -1 "0002"), four
 * digits at least, '+' before years past 9999 ("+10000-01-01"). At most
 * JFMT_TIME_MAX bytes. */
size_t jfmt_pretty_time(int64_t epoch_seconds, int32_t nanos, int32_t offset_seconds,
                        bool exact, char *buf);
/* String.format("0x%08X", v) of a Java long (two's complement for negatives):
 * "0x" and 8 to 16 upper-case digits. At most JFMT_NUM_MAX bytes. */
size_t jfmt_hex_address(int64_t v, char *buf);

/* One type of a method descriptor at s[*i] (n bytes), as ValueFormatter
 * decodes it: its array dimensions, then a class ("Ljava/lang/String;": its
 * name, the part after the last '.' or '/' when `simple`, with '/' left for
 * the caller), a primitive ("I": "int") or "<unknown-descriptor-type>".
 * *i moves past it. False when nothing is left after the '['s (the JDK's
 * charAt throws there; *i is n). */
typedef struct jfmt_desc_type {
    size_t dims;
    const char *name; /* into s for a class, else a static text */
    size_t len;
    bool is_class;
} jfmt_desc_type;
bool jfmt_descriptor_type(const char *s, size_t n, size_t *i, bool simple, jfmt_desc_type *out);

/* The zone offset the JDK derives from the metadata region (gmtOffset + dst,
 * milliseconds, truncated to int): UTC when out of range. */
int32_t jfmt_zone_offset_seconds(int64_t gmt_offset_ms, int64_t dst_ms);

/*
 * A JSON string body (without the quotes) exactly as the JDK's JSONWriter
 * escapes a java.lang.String: \b \n \t \f \r \" \\ \/ and \uXXXX (lowercase)
 * for every UTF-16 unit < 0x20 or > 0x7F. `s` is UTF-8. When java_utf8 is
 * true, malformed input is replaced by U+FFFD the way new String(bytes,
 * UTF_8) does (and encoded surrogates are malformed); otherwise encoded
 * surrogates (WTF-8) are taken as lone UTF-16 units.
 */
void jfmt_json_string(outbuf *o, const char *s, size_t len, bool java_utf8);
/*
 * The same body from UTF-16 units given as their varints (a string of wire
 * encoding 4 as jfr_iter_next_raw hands it over: whole varints, each unit
 * the low 16 bits of one): each unit escaped as jfmt_json_char would, with
 * no UTF-8 in between. Output identical to converting the units to UTF-8
 * (surrogates paired, lone ones as WTF-8) and calling jfmt_json_string.
 */
void jfmt_json_chars(outbuf *o, const char *s, size_t len);
/* Same for one UTF-16 code unit (a Java char). */
void jfmt_json_char(outbuf *o, uint32_t unit);

/*
 * Text as the JDK's XMLWriter escapes a java.lang.String (element text and
 * attribute values alike): " & ' < > as &quot; &amp; &apos; &lt; &gt;, every
 * UTF-16 unit above 0x7F as &#N; (decimal: a supplementary character is two
 * of them, one per surrogate), every other unit as it is (control
 * characters too). `s` is UTF-8 read as for jfmt_json_string
 * (jformat_xml.c); jfmt_xml_chars takes wire-encoding-4 varints as
 * jfmt_json_chars does, jfmt_xml_char one unit.
 */
void jfmt_xml_string(outbuf *o, const char *s, size_t len, bool java_utf8);
void jfmt_xml_chars(outbuf *o, const char *s, size_t len);
void jfmt_xml_char(outbuf *o, uint32_t unit);

/* UTF-8 read as Java's UTF-16 units: jfmt_u16_next returns the next unit,
 * or -1 at the end. With `java`, malformed input (encoded surrogates
 * included) becomes U+FFFD as new String(bytes, UTF_8) of JDK 25 makes it;
 * without, the same but encoded surrogates (WTF-8) decode to themselves. */
typedef struct jfmt_u16_iter {
    const unsigned char *p, *end;
    int pending; /* low surrogate waiting, or -1 */
    bool java;
} jfmt_u16_iter;
void jfmt_u16_init(jfmt_u16_iter *it, const char *s, size_t len, bool java);
int jfmt_u16_next(jfmt_u16_iter *it);

/* Length in UTF-16 units of a UTF-8 string (for Java-style column padding). */
size_t jfmt_utf16_length(const char *s, size_t len);
/* Compare two UTF-8 strings in UTF-16 code-unit order (String.compareTo). */
int jfmt_utf16_compare(const char *a, const char *b);

/*
 * Shared between the jformat_*.c files (not for the converters).
 */
/* The decimal Double.toString(v) prints, for a finite v != 0, as
 * d[0].d[1]..d[n-1] x 10^e (of |v|): its digits (n <= 17, no trailing
 * zeros, no NUL) and e. Returns n. */
int jfmt__shortest(double v, char *digits, int *exp10);
/* The local day (days since 1970-01-01) of an instant at a zone offset, and
 * the second of that day; no overflow for any epoch_seconds. */
int64_t jfmt__local_day(int64_t epoch_seconds, int32_t offset_seconds, int *second_of_day);
/* DateTimeFormatter's "yyyy-MM-dd" (yyyy the year of era: year 0 is 0001,
 * four digits at least, '+' past 9999) and "HH:mm:ss" at p; each returns
 * the byte after the text (no NUL). */
char *jfmt__put_era_date(char *p, int64_t epoch_day);
char *jfmt__put_hms(char *p, int second_of_day);
/* The UTF-16 unit of the varint at b (a string of wire encoding 4), bit 7
 * of b[0] set (whole varints up to end, as the library checked them): its
 * low 16 bits, its length in *n. */
static inline unsigned jfmt__varint_unit(const unsigned char *b, const unsigned char *end,
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

#endif
