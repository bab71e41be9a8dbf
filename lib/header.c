/* Chunk headers: decoding and checking one as the state machine meets it
 * (take_header), and what to do next (jfr__header_done): go on, skip the
 * chunk, or scan again for the next one. */
#include "internal.h"

uint64_t jfr_chunk_size_at(const void *buf, size_t len) {
    const uint8_t *b = buf;
    if (!b || len < JFR_HEADER_SIZE || !jfr__header_magic(b))
        return 0;
    jfr_chunk_info ci;
    jfr__header_decode(b, &ci);
    return (uint64_t)ci.size;
}

/* Decode and check a header; sets up p->info and p->chunk. */
static jfr_status take_header(jfr_parser *p, const uint8_t *h) {
    jfr_chunk_info *ci = &p->info;
    ci->index = p->err.nchunks;
    ci->offset = p->in.input_off;
    if (!jfr__header_magic(h)) {
        jfr__fail(p, JFR_BAD_MAGIC, ci->offset, "expected FLR\\0, found %02x %02x %02x %02x",
                  h[0], h[1], h[2], h[3]);
        return JFR_BAD_MAGIC;
    }
    jfr__header_decode(h, ci);
    if (!jfr__major_ok(ci->major)) {
        jfr__fail(p, JFR_BAD_VERSION, ci->offset + 4,
                  "version %u.%u (%sonly 1.x and 2.x are supported)", ci->major, ci->minor,
                  ci->major == 0 ? "a JDK 7 or 8 recording; " : "");
        return JFR_BAD_VERSION;
    }
    /* A non-zero state byte is a chunk still being written (JDK 14+ disk
     * repository, JMX live stream): its size and offsets are provisional,
     * so it is framed record by record and dispatched per flush segment. */
    p->lv.live = ci->state != 0;
    if (!p->lv.live && ci->size <= JFR_HEADER_SIZE) {
        jfr__fail(p, JFR_BAD_CHUNK_SIZE, ci->offset + 8, "chunk size %lld",
                  (long long)ci->size);
        return JFR_BAD_CHUNK_SIZE;
    }
    if (!p->lv.live && (uint64_t)ci->size > p->opt.max_chunk_size) {
        jfr__fail(p, JFR_CHUNK_TOO_LARGE, ci->offset + 8,
                  "declared size %lld exceeds the maximum %llu", (long long)ci->size,
                  (unsigned long long)p->opt.max_chunk_size);
        return JFR_CHUNK_TOO_LARGE;
    }
    jfr_chunk *c = &p->chunk;
    c->size = (uint64_t)ci->size;
    c->base_off = 0;
    c->first_rec = JFR_HEADER_SIZE;
    c->compressed = (ci->flags & JFR_CHUNK_COMPRESSED) != 0;
    c->index = ci->index;
    c->offset = ci->offset;
    c->md = NULL;
    double div = ci->ticks_per_second > 0 ? (double)ci->ticks_per_second / 1e9 : 1.0;
    if (!p->opt.jdk_time_base || !p->tb.have_tb) {
        p->tb.have_tb = true;
        p->tb.tb_nanos = ci->start_nanos;
        p->tb.tb_ticks = ci->start_ticks;
        p->tb.tb_div = div;
    }
    c->tb_start_nanos = p->tb.tb_nanos;
    c->tb_start_ticks = p->tb.tb_ticks;
    c->tb_divisor = p->tb.tb_div;
    return JFR_OK;
}

/* A header is complete in p->in.hdr or at `h`; p->in.input_off is its offset. */
jfr_status jfr__header_done(jfr_parser *p, const uint8_t *h, int *act) {
    *act = HD_GO;
    if (p->rs.cand) { /* the scan's candidate, completed in p->in.hdr */
        p->rs.cand = false;
        if (!jfr__resync_candidate_ok(p, h, UINT64_MAX, p->rs.cand_prev)) {
            *act = HD_REJECT;
            return JFR_OK;
        }
        if (!jfr__resync_report(p, p->in.input_off, false))
            return jfr__fatal(p);
    }
    jfr_status s = take_header(p, h);
    if (!s)
        return JFR_OK;
    /* a bad header ends the input, unless we resynchronise; a chunk over
     * the size limit can be skipped by its declared size */
    bool told = s == JFR_CHUNK_TOO_LARGE || p->opt.resync;
    if (told && jfr__error_continue(p)) {
        if (p->opt.resync) {
            *act = HD_RESCAN;
            return JFR_OK;
        }
        p->in.skip_left = p->info.size - JFR_HEADER_SIZE;
        p->state = ST_SKIP;
        p->err.nchunks++;
        *act = HD_SKIP;
        return JFR_OK;
    }
    return told ? jfr__fatal(p) : jfr__fatal_told(p);
}
