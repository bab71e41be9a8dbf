/* The decimal digits of an unsigned 64-bit integer, without printf: header
 * only (as ticks.h), so the converters (outbuf, jformat), the sinks (Kafka
 * ids, the /metrics text) share one routine without exporting it. */
#ifndef JFR_DIGITS_H
#define JFR_DIGITS_H

#include <stdint.h>
#include <string.h>

/* The most digits a uint64_t has (18446744073709551615). */
#define JFR_DIGITS_MAX 20

/* Writes the digits of v so that the last one is at end[-1]; returns the
 * first. end needs JFR_DIGITS_MAX bytes before it. Two digits a step, from
 * a table: it is on the path of every number printed. */
static inline char *jfr__digits_back(char *end, uint64_t v) {
    static const char two[] = "00010203040506070809101112131415161718192021222324"
                              "25262728293031323334353637383940414243444546474849"
                              "50515253545556575859606162636465666768697071727374"
                              "75767778798081828384858687888990919293949596979899";
    char *q = end;
    while (v >= 100) {
        q -= 2;
        memcpy(q, two + 2 * (v % 100), 2);
        v /= 100;
    }
    if (v >= 10) {
        q -= 2;
        memcpy(q, two + 2 * v, 2);
    } else {
        *--q = (char)('0' + v);
    }
    return q;
}

/* Writes the digits of v at p; returns the byte after the last. */
static inline char *jfr__digits(char *p, uint64_t v) {
    char t[JFR_DIGITS_MAX], *s = jfr__digits_back(t + sizeof t, v);
    size_t n = (size_t)(t + sizeof t - s);
    memcpy(p, s, n);
    return p + n;
}

#endif
