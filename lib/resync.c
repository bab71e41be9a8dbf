/* Resynchronisation (opt.resync): after damage, scan the bytes for the next
 * plausible chunk header; bytes already taken are scanned again from the
 * replay buffer. */
#include "internal.h"
#include "noun.h"

/* A header found by the scan (opt.resync): plausible enough to try. `left`
 * input bytes follow from its first byte; at finish the chunk must fit.
 * `prev` is the byte before it (-1: unknown). */
bool jfr__resync_candidate_ok(const jfr_parser *p, const uint8_t *h, uint64_t left, int prev) {
    if (!jfr__header_magic(h))
        return false;
    jfr_chunk_info ci;
    jfr__header_decode(h, &ci);
    if (!jfr__major_ok(ci.major))
        return false;
    if (prev == JFR_HEADER_SIZE)
        return false; /* 68, the length of a copy of the header in a chunk-header
                         checkpoint (JDK 14+, at each flush and at the end) */
    if (h[65] != 0 || (ci.flags & ~3) != 0 || ci.ticks_per_second <= 0)
        return false; /* pad byte, unknown flags, ticks per second */
    uint64_t size = (uint64_t)ci.size, cp = (uint64_t)ci.cp_offset,
             md = (uint64_t)ci.metadata_offset;
    if (ci.state != 0) /* live: only the shape of a chunk's start, as a JMX stream
                       sends it; the copies of the header that JDK 14+ writes
                       into checkpoints at each flush have a later size */
        return ci.state != 255 && size == JFR_HEADER_SIZE && cp == 0 && md == 0;
    if (size <= JFR_HEADER_SIZE || size > p->opt.max_chunk_size)
        return false;
    if (md < JFR_HEADER_SIZE || md >= size || (cp && (cp < JFR_HEADER_SIZE || cp >= size)))
        return false;
    return !p->rs.rp_final || size <= left;
}

/* Skip from `from`, the first byte of the damaged header or chunk. */
void jfr__resync_begin(jfr_parser *p, uint64_t from) {
    p->state = ST_RESYNC;
    p->rs.rs_prev = -1;
    p->rs.rs_from = from;
    p->in.hdr_have = 0;
    p->rs.cand = false;
    p->rs.chunk_failed = false;
}

/* The scan found a chunk at `at` (or the input ended there): say how many
 * bytes were skipped. False when on_error wants to stop. The message names
 * the damaged unit the skip starts at, as its own error did: p->info.index
 * is still that unit's (a chunk that failed or was cut short keeps its
 * index; a bad header or trailing garbage has the index of the next chunk). */
bool jfr__resync_report(jfr_parser *p, uint64_t at, bool at_end) {
    uint64_t n = at - p->rs.rs_from;
    p->rs.skipped += n;
    if (at_end)
        jfr__fail(p, JFR_SKIPPED, p->rs.rs_from,
                  "%llu %s skipped to the end of the input (no further chunk)",
                  (unsigned long long)n, jfr__noun(n, "byte", "bytes"));
    else
        jfr__fail(p, JFR_SKIPPED, p->rs.rs_from, "%llu %s skipped; next chunk magic at byte %llu",
                  (unsigned long long)n, jfr__noun(n, "byte", "bytes"), (unsigned long long)at);
    return jfr__error_continue(p);
}

/* Bytes taken but to be scanned again (from the second byte of a damaged
 * header, chunk or live segment, which sit in p->in.hdr, p->in.chunkbuf or
 * p->lv.segbuf) go ahead of the
 * replay bytes not yet read. Their offset is p->in.input_off. */
jfr_status jfr__replay_push(jfr_parser *p) {
    const uint8_t *d = p->rs.want_push == PUSH_HDR     ? p->in.hdr + 1
                       : p->rs.want_push == PUSH_SEG ? p->lv.segbuf.data + 1
                                                     : p->in.chunkbuf.data + 1;
    size_t n = p->rs.push_len, rest = p->rs.replay.len - p->rs.rp_pos;
    bool chunk = p->rs.want_push == PUSH_CHUNK;
    p->rs.want_push = PUSH_NONE;
    p->rs.rs_prev = d[-1]; /* the scan goes on after the unit's first byte */
    if (p->mt.par)
        jfr__par_quiesce(p); /* no helper may read a buffer that changes now */
    if (!rest)
        p->rs.replay.len = p->rs.rp_pos = 0;
    if (!rest && chunk) { /* hand the chunk buffer over rather than copy it */
        jfr_buf t = p->rs.replay;
        p->rs.replay = p->in.chunkbuf;
        p->rs.replay.len = n + 1;
        p->rs.rp_pos = 1;
        p->in.chunkbuf = t;
        p->in.chunkbuf.len = 0;
    } else if (p->rs.rp_pos >= n) {
        p->rs.rp_pos -= n;
        memcpy(p->rs.replay.data + p->rs.rp_pos, d, n);
    } else {
        jfr_status s = jfr__buf_reserve(&p->opt.allocator, &p->rs.replay, n, 0);
        if (s) {
            jfr__fail(p, s, p->in.input_off, "cannot keep %zu damaged bytes to scan them again", n);
            return jfr__fatal_told(p);
        }
        memmove(p->rs.replay.data + n, p->rs.replay.data + p->rs.rp_pos, rest);
        memcpy(p->rs.replay.data, d, n);
        p->rs.replay.len = n + rest;
        p->rs.rp_pos = 0;
    }
    return JFR_OK;
}

/* The chunk just run failed and was passed over: scan it again from its
 * second byte, from our buffer (the caller's bytes are rewound instead). */
void jfr__rescan_buffered_chunk(jfr_parser *p, uint64_t len) {
    uint64_t off = p->chunk.offset;
    jfr__resync_begin(p, off);
    p->in.input_off = off + 1;
    p->rs.want_push = PUSH_CHUNK;
    p->rs.push_len = (size_t)len - 1;
}

/* Can the n bytes at h begin a header of a version we read (magic, major)? */
bool jfr__header_lead(const uint8_t *h, size_t n) {
    static const uint8_t lead[5] = {'F', 'L', 'R', 0, 0}; /* magic, major's high byte */
    return memcmp(h, lead, n < 5 ? n : 5) == 0 && (n < 6 || jfr__major_ok(h[5]));
}

/* Scan for the next plausible chunk header (opt.resync). */

size_t jfr__resync_scan(jfr_parser *p, const uint8_t *in, size_t len, jfr_status *st) {
    size_t pos = 0;
    *st = JFR_OK;
    while (pos < len) {
        const uint8_t *f = memchr(in + pos, 'F', len - pos);
        size_t at = f ? (size_t)(f - in) : len, left = len - at;
        p->in.input_off += at - pos;
        pos = at;
        if (!f)
            break;
        int prev = at ? in[at - 1] : p->rs.rs_prev;
        if (left >= JFR_HEADER_SIZE) {
            if (jfr__resync_candidate_ok(p, f, left, prev)) {
                if (!jfr__resync_report(p, p->in.input_off, false)) {
                    *st = jfr__fatal(p);
                    return pos;
                }
                p->state = ST_HEADER;
                return pos;
            }
        } else if (jfr__header_lead(f, left)) {
            /* maybe a header cut by the end of this slice: complete it */
            memcpy(p->in.hdr, f, left);
            p->in.hdr_have = left;
            p->rs.cand = true;
            p->rs.cand_prev = prev;
            p->state = ST_HEADER;
            p->in.input_off += left;
            return len;
        }
        pos++;
        p->in.input_off++;
    }
    if (len)
        p->rs.rs_prev = in[len - 1];
    return pos;
}
