#include "internal.h"

size_t jfr_varint_decode(const uint8_t *p, const uint8_t *end, uint64_t *out) {
    jfr_cur c = {p, end, false, p, 0};
    if (!p || !end || end < p || !jfr__cur_varint(&c, out))
        return 0;
    return (size_t)(c.p - p);
}

long jfr__wire_chars_to_utf8(jfr_cur *c, uint32_t n, uint8_t *out) {
    uint8_t *o = out;
    uint32_t pending = 0; /* a high surrogate waiting for its partner */
    for (uint32_t i = 0; i < n; i++) {
        uint64_t v;
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
