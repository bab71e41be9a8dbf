/* Live chunks (state byte non-zero: a JDK 14+ repository file being
 * written, a JMX stream): framed record by record into flush segments, each
 * segment dispatched when a flush checkpoint (or the final header) ends it. */
#include "internal.h"

void jfr__live_begin(jfr_parser *p) {
    p->state = ST_LIVE;
    p->lv.segbuf.len = p->lv.poolbuf.len = 0;
    jfr__pool_clear(&p->chunk.pool);
    jfr__names_clear(&p->val.names);
    p->lv.chunk_pos = p->lv.seg_start = JFR_HEADER_SIZE;
    p->lv.rec_need = 0;
    p->lv.varlen = 0;
    p->lv.segments = 0;
    p->lv.seg_ends_chunk = false;
    p->chunk.md = NULL;
}

static void live_end_chunk(jfr_parser *p) {
    p->err.nchunks++;
    p->state = ST_HEADER;
    p->lv.live = false;
    p->lv.seg_ends_chunk = false;
    p->lv.segbuf.len = p->lv.poolbuf.len = 0;
    p->chunk.md = NULL;
}

/* Does the buffered segment hold a plausible chunk header after its first
 * byte? A segment that failed is then a chunk cut short and the next one
 * (resync scans it again); otherwise only the segment is damaged. */
static bool seg_holds_header(const jfr_parser *p) {
    const uint8_t *d = p->lv.segbuf.data;
    size_t n = p->lv.segbuf.len;
    for (size_t i = 1; i + JFR_HEADER_SIZE <= n; i++) {
        const uint8_t *f = memchr(d + i, 'F', n - JFR_HEADER_SIZE + 1 - i);
        if (!f)
            break;
        i = (size_t)(f - d);
        if (jfr__resync_candidate_ok(p, f, n - i, d[i - 1]))
            return true;
    }
    return false;
}

/* Run (or resume) the dispatch of the buffered segment. */
jfr_status jfr__live_dispatch(jfr_parser *p) {
    p->state = ST_LIVE_DISPATCH;
    jfr_status s = jfr__chunk_process(p);
    if (s == JFR_PAUSED || s == JFR_STOPPED) /* jfr__cb_result set p->err.status */
        return s;
    if (s) {
        if (!jfr__error_continue(p))
            return jfr__fatal(p);
        if (p->opt.resync && seg_holds_header(p)) { /* the chunk was cut: a new one began */
            jfr__live_rescan(p);
            return JFR_OK;
        }
        p->disp.deferred = false; /* drop the damaged segment, keep the chunk */
    }
    if (p->disp.deferred) { /* no metadata yet: keep it, merge with the next */
        p->state = ST_LIVE;
        return JFR_OK;
    }
    p->lv.segments++;
    p->lv.segbuf.len = 0;
    p->lv.seg_start = p->lv.chunk_pos;
    if (s == JFR_OK)
        jfr__delivered(p, p->chunk.offset + p->lv.seg_start);
    if (p->lv.seg_ends_chunk)
        live_end_chunk(p);
    else
        p->state = ST_LIVE;
    return JFR_OK;
}

/* A whole record sits at segbuf[rec_start..]. A checkpoint with the FLUSH bit,
 * or carrying the chunk header with state 0, ends the segment. */
static jfr_status live_record_done(jfr_parser *p) {
    jfr_chunk *c = &p->chunk;
    const uint8_t *r = p->lv.segbuf.data + p->lv.rec_start;
    jfr_cur cur = {r, p->lv.segbuf.data + p->lv.segbuf.len, !c->compressed, r, 0};
    uint64_t size, type, v, ctype = 0;
    uint8_t b;
    if (!jfr__cur_int(&cur, &size) || !jfr__cur_long(&cur, &type) || type != 1)
        return JFR_OK;
    if (!jfr__cur_long(&cur, &v) || !jfr__cur_long(&cur, &v) || !jfr__cur_long(&cur, &v))
        return JFR_OK; /* malformed: index_unit reports it */
    if (c->compressed ? !jfr__cur_varint(&cur, &ctype) : !jfr__cur_u8(&cur, &b))
        return JFR_OK;
    if (!c->compressed)
        ctype = b;
    bool end = (ctype & 1) != 0;
    uint64_t npools, tid, n, key, len;
    if ((ctype & 2) && jfr__cur_int(&cur, &npools) && npools >= 1 && jfr__cur_long(&cur, &tid) &&
        jfr__cur_int(&cur, &n) && n >= 1 && jfr__cur_long(&cur, &key) && jfr__cur_int(&cur, &len) &&
        len == JFR_HEADER_SIZE && (size_t)(cur.end - cur.p) >= JFR_HEADER_SIZE &&
        jfr__header_magic(cur.p)) {
        /* the chunk header as it is after this flush: authoritative for
         * what a flush changes */
        jfr_chunk_info nh, *ci = &p->info;
        jfr__header_decode(cur.p, &nh);
        ci->size = nh.size;
        ci->cp_offset = nh.cp_offset;
        ci->metadata_offset = nh.metadata_offset;
        ci->duration_nanos = nh.duration_nanos;
        ci->state = nh.state;
        ci->flags = nh.flags;
        if (ci->state == 0) {
            p->lv.seg_ends_chunk = true;
            end = true;
        }
    }
    if (!end)
        return JFR_OK;
    c->base = p->lv.segbuf.data;
    c->size = p->lv.segbuf.len;
    c->base_off = p->lv.seg_start;
    c->first_rec = 0;
    c->pbase = p->lv.poolbuf.data;
    c->psize = p->lv.poolbuf.len;
    p->phase = PH_INDEX;
    return jfr__live_dispatch(p);
}

/* The framing of a live chunk is broken: the end of the input, or (resync)
 * the rest of the chunk is lost and the bytes of its unfinished segment
 * count as skipped. */
static jfr_status live_broken(jfr_parser *p) {
    if (!p->opt.resync)
        return jfr__fatal_told(p);
    if (!jfr__error_continue(p))
        return jfr__fatal(p);
    jfr__live_rescan(p);
    return JFR_OK;
}

/* resync: the unfinished segment is scanned again from its second byte (a
 * live chunk cut short and followed by the next chunk holds that chunk's
 * header inside the bytes taken as its records). */
void jfr__live_rescan(jfr_parser *p) {
    size_t n = p->lv.segbuf.len;
    uint64_t from = p->in.input_off - n;
    live_end_chunk(p); /* keeps segbuf's bytes, until the replay took them */
    jfr__resync_begin(p, from);
    if (n > 1) {
        p->in.input_off = from + 1;
        p->rs.want_push = PUSH_SEG;
        p->rs.push_len = n - 1;
    } else if (n == 1) {
        p->rs.rs_prev = p->lv.segbuf.data[0];
    }
}

/* Take bytes of a live chunk: frame records, dispatch at segment ends.
 * Returns bytes taken (stops early when dispatch pauses/stops/fails). */
size_t jfr__live_take(jfr_parser *p, const uint8_t *in, size_t avail, jfr_status *st) {
    jfr_buf *sb = &p->lv.segbuf;
    size_t pos = 0;
    *st = JFR_OK;
    const jfr_allocator *a = &p->opt.allocator;
    while (pos < avail && p->state == ST_LIVE) {
        jfr_status s;
        size_t take = p->lv.rec_need ? (avail - pos < p->lv.rec_need ? avail - pos : (size_t)p->lv.rec_need) : 1;
        if ((s = jfr__buf_reserve(a, sb, take, p->opt.max_chunk_size))) {
            jfr__fail(p, s == JFR_LIMIT ? JFR_CHUNK_TOO_LARGE : s, p->in.input_off,
                      "live segment exceeds the maximum chunk size");
            *st = live_broken(p);
            return pos;
        }
        if (!p->lv.rec_need && !p->lv.varlen)
            p->lv.rec_start = sb->len;
        memcpy(sb->data + sb->len, in + pos, take);
        sb->len += take;
        pos += take;
        p->in.input_off += take;
        p->lv.chunk_pos += take;
        if (!p->lv.rec_need) { /* one more byte of the size field */
            uint8_t last = sb->data[sb->len - 1];
            p->lv.varlen++;
            bool done = p->chunk.compressed ? (!(last & 0x80) || p->lv.varlen == 9) : p->lv.varlen == 4;
            if (!done)
                continue;
            jfr_cur cur = {sb->data + p->lv.rec_start, sb->data + sb->len, !p->chunk.compressed,
                           sb->data, 0};
            uint64_t size = 0;
            jfr__cur_int(&cur, &size);
            if (size <= p->lv.varlen || size > p->opt.max_chunk_size) {
                jfr__fail(p, JFR_BAD_RECORD, p->in.input_off - p->lv.varlen,
                          "record size %llu out of range in a live chunk",
                          (unsigned long long)size);
                *st = live_broken(p);
                return pos;
            }
            p->lv.rec_need = size - p->lv.varlen;
            p->lv.varlen = 0;
            continue;
        }
        p->lv.rec_need -= take;
        if (!p->lv.rec_need && (s = live_record_done(p))) {
            *st = s;
            return pos;
        }
    }
    return pos;
}
