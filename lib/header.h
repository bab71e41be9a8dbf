/* The 68-byte chunk header: its layout, and the one decoder of it that the
 * state machine, the resynchronising scan, live framing, parallel
 * preparation and the libuv tail share. Header only (static inline): the
 * libuv front ends use it without linking to internal symbols. */
#ifndef JFR_HEADER_H
#define JFR_HEADER_H

#include "jfrstream.h"
#include "wire.h"

#define JFR_HEADER_SIZE 68

/* Chunk format majors read, as the JDK's own reader does (any minor): 1 is
 * JDK 9 and 10 (event names com.oracle.jdk.*), 2 is JDK 11+; both have the
 * same layout. 0 (0.9) is JDK 7 and 8, a different format. */
static inline bool jfr__major_ok(uint64_t major) { return major == 1 || major == 2; }

/* Do the 4 bytes at h hold the chunk magic "FLR\0"? */
static inline bool jfr__header_magic(const uint8_t *h) { return memcmp(h, "FLR\0", 4) == 0; }

/* Decode the JFR_HEADER_SIZE bytes at h into ci (all but index and offset,
 * which are the reader's; byte 65 is padding). Nothing is checked. */
static inline void jfr__header_decode(const uint8_t *h, jfr_chunk_info *ci) {
    ci->major = (uint16_t)jfr__be(h + 4, 2);
    ci->minor = (uint16_t)jfr__be(h + 6, 2);
    ci->size = (int64_t)jfr__be(h + 8, 8);
    ci->cp_offset = (int64_t)jfr__be(h + 16, 8);
    ci->metadata_offset = (int64_t)jfr__be(h + 24, 8);
    ci->start_nanos = (int64_t)jfr__be(h + 32, 8);
    ci->duration_nanos = (int64_t)jfr__be(h + 40, 8);
    ci->start_ticks = (int64_t)jfr__be(h + 48, 8);
    ci->ticks_per_second = (int64_t)jfr__be(h + 56, 8);
    ci->state = h[64];
    ci->flags = (uint16_t)jfr__be(h + 66, 2);
}

#endif
