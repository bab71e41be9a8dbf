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

/* Compressed chunks write each UTF-16 unit as a varint: an ASCII unit is
 * one byte below 0x80 (also its UTF-8 form), and every unit takes at most
 * three bytes in the form writers use. Those are decoded inline, runs of
 * ASCII eight at a time; anything else through the general varint. */
static long chars_varint_to_utf8(jfr_cur *c, uint32_t n, uint8_t *out) {
    const uint8_t *p = c->p, *end = c->end;
    uint8_t *o = out;
    uint32_t pending = 0, i = 0;
    while (i < n) {
        uint32_t u;
        size_t avail = (size_t)(end - p);
        if (avail && p[0] < 0x80) {
            if (!pending) {
                while (n - i >= 8 && (size_t)(end - p) >= 8) {
                    uint64_t w;
                    memcpy(&w, p, 8);
                    if (w & 0x8080808080808080ull)
                        break;
                    memcpy(o, &w, 8);
                    o += 8;
                    p += 8;
                    i += 8;
                }
                if (i < n && p < end && p[0] < 0x80) {
                    *o++ = *p++;
                    i++;
                }
                continue;
            }
            u = *p++;
        } else if (avail >= 2 && p[1] < 0x80) {
            u = (uint32_t)(p[0] & 0x7f) | (uint32_t)p[1] << 7;
            p += 2;
        } else if (avail >= 3 && p[2] < 0x80) {
            u = ((uint32_t)(p[0] & 0x7f) | (uint32_t)(p[1] & 0x7f) << 7 | (uint32_t)p[2] << 14) &
                0xffff;
            p += 3;
        } else {
            jfr_cur one = {p, end, false, c->base, c->tag};
            uint64_t v;
            if (!jfr__cur_varint(&one, &v))
                return -1;
            p = one.p;
            u = (uint32_t)(v & 0xffff);
        }
        i++;
        o = put_unit(o, u, &pending);
    }
    if (pending)
        o += jfr__utf8_put(o, pending);
    c->p = p;
    return (long)(o - out);
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
