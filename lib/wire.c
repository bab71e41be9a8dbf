#include "internal.h"

size_t jfr_varint_decode(const uint8_t *p, const uint8_t *end, uint64_t *out) {
    jfr_cur c = {p, end, false, p, 0};
    if (!p || !end || end < p || !jfr__cur_varint(&c, out))
        return 0;
    return (size_t)(c.p - p);
}

/* Compressed chunks write each UTF-16 unit as a varint: an ASCII unit is
 * one byte below 0x80, which is also its UTF-8 form. Copies the run of such
 * bytes at the cursor, up to n units, eight at a time; returns the count. */
static uint32_t ascii_run(jfr_cur *c, uint32_t n, uint8_t *o) {
    const uint8_t *p = c->p;
    size_t avail = (size_t)(c->end - p);
    size_t lim = avail < n ? avail : n, k = 0;
    while (k + 8 <= lim) {
        uint64_t w;
        memcpy(&w, p + k, 8);
        if (w & 0x8080808080808080ull)
            break;
        memcpy(o + k, &w, 8);
        k += 8;
    }
    while (k < lim && p[k] < 0x80) {
        o[k] = p[k];
        k++;
    }
    c->p = p + k;
    return (uint32_t)k;
}

long jfr__wire_chars_to_utf8(jfr_cur *c, uint32_t n, uint8_t *out) {
    uint8_t *o = out;
    uint32_t pending = 0; /* a high surrogate waiting for its partner */
    for (uint32_t i = 0; i < n; i++) {
        uint64_t v;
        if (!c->fixed && !pending) {
            uint32_t k = ascii_run(c, n - i, o);
            o += k;
            i += k;
            if (i == n)
                break;
        }
        if (!jfr__cur_short(c, &v))
            return -1;
        uint32_t u = (uint32_t)(v & 0xffff);
        if (pending) {
            if (u >= 0xdc00 && u <= 0xdfff) {
                o += jfr__utf8_put(o, 0x10000 + ((pending - 0xd800) << 10) + (u - 0xdc00));
                pending = 0;
                continue;
            }
            o += jfr__utf8_put(o, pending);
            pending = 0;
        }
        if (u >= 0xd800 && u <= 0xdbff)
            pending = u;
        else
            o += jfr__utf8_put(o, u);
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
