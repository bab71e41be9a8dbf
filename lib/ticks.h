/* Ticks to nanoseconds as the JDK converts them: a double division by the
 * ticks per nanosecond, then Java's (long) cast. Header only, as noun.h, so
 * the parser (lib/value.c) and the JSON writer (lib/conv/jformat_time.c)
 * share one arithmetic without exporting it. */
#ifndef JFR_TICKS_H
#define JFR_TICKS_H

#include <math.h>
#include <stdint.h>

/* Java's (long) cast of a double: truncation, saturating, NaN -> 0. */
static inline int64_t jfr__java_d2l(double d) {
    if (isnan(d))
        return 0;
    if (d >= 9223372036854775807.0)
        return INT64_MAX;
    if (d <= -9223372036854775808.0)
        return INT64_MIN;
    return (int64_t)d;
}

/* (long)(ticks / divisor), divisor = ticks per second / 1e9. With a 1 GHz
 * tick (1.0) the double round trip is exact below 2^53 and is skipped; a
 * divisor of 0 gives Java's x / 0.0 (infinities, NaN) without dividing. */
static inline int64_t jfr__ticks_div(int64_t ticks, double divisor) {
    const int64_t exact = INT64_C(1) << 53;
    if (divisor == 1.0 && ticks > -exact && ticks < exact)
        return ticks;
    if (divisor == 0)
        return ticks > 0 ? INT64_MAX : ticks < 0 ? INT64_MIN : 0;
    return jfr__java_d2l((double)ticks / divisor);
}

#endif
