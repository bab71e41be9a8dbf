/* The push state machine: jfr_parser_feed and jfr_parser_finish. Finished
 * chunks are borrowed from the caller's bytes when whole, else buffered;
 * headers, live framing and resynchronisation are in header.c, live.c and
 * resync.c. */
#include "internal.h"
#include "noun.h"

#include <stdio.h>

/* The chunk is complete at `base`: run it; on pause keep our own copy. */
static jfr_status run_chunk(jfr_parser *p) {
    p->state = ST_DISPATCH;
    jfr_status s = jfr__chunk_process(p);
    if (s == JFR_PAUSED) {
        if (p->chunk.base != p->in.chunkbuf.data) {
            p->in.chunkbuf.len = 0;
            jfr_status r = jfr__buf_reserve(&p->opt.allocator, &p->in.chunkbuf, p->chunk.size, 0);
            if (r) {
                jfr__fail(p, r, p->chunk.offset, "cannot keep the paused chunk");
                return jfr__fatal_told(p);
            }
            memcpy(p->in.chunkbuf.data, p->chunk.base, p->chunk.size);
            p->in.chunkbuf.len = p->chunk.size;
            p->chunk.base = p->in.chunkbuf.data;
        }
        return s;
    }
    if (s == JFR_STOPPED)
        return s;
    if (s && !jfr__error_continue(p))
        return jfr__fatal(p);
    /* done (or skipped after an error the user chose to pass over) */
    p->rs.chunk_failed = s != JFR_OK && p->opt.resync;
    if (s == JFR_OK)
        jfr__delivered(p, p->chunk.offset + p->chunk.size);
    if (p->mt.prep)
        jfr__par_release(p);
    p->err.nchunks++;
    p->state = ST_HEADER;
    p->phase = PH_DONE;
    p->chunk.md = NULL;
    p->in.chunkbuf.len = 0;
    return JFR_OK;
}

/* What a step of run_input says: go on, or have run_input return *st (the
 * bytes taken so far are used). */
enum { STEP_ON, STEP_STOP };

static int step_stop(jfr_status *st, jfr_status s) {
    *st = s;
    return STEP_STOP;
}

/* A header was taken (in p->in.hdr, or borrowed): a live chunk is framed from
 * here, a finished one buffered until its body is complete. */
static int chunk_begin(jfr_parser *p, jfr_status *st) {
    jfr_status s;
    p->in.hdr_have = 0;
    if (p->lv.live) {
        jfr__live_begin(p);
        if (p->cb.on_chunk_begin &&
            (s = jfr__cb_result(p, p->cb.on_chunk_begin(p, &p->info, p->user))))
            return step_stop(st, s);
        return STEP_ON;
    }
    /* buffer the chunk: header now, body as it arrives */
    p->in.chunkbuf.len = 0;
    if ((s = jfr__buf_reserve(&p->opt.allocator, &p->in.chunkbuf, JFR_HEADER_SIZE,
                              p->chunk.size))) {
        jfr__fail(p, s, p->info.offset, "cannot buffer the chunk");
        return step_stop(st, jfr__fatal_told(p));
    }
    memcpy(p->in.chunkbuf.data, p->in.hdr, JFR_HEADER_SIZE);
    p->in.chunkbuf.len = JFR_HEADER_SIZE;
    p->in.need = p->chunk.size - JFR_HEADER_SIZE;
    p->state = ST_BODY;
    p->phase = PH_INDEX;
    if (p->cb.on_chunk_begin &&
        (s = jfr__cb_result(p, p->cb.on_chunk_begin(p, &p->info, p->user))))
        return step_stop(st, s);
    return STEP_ON;
}

/* The whole finished chunk at in + *pos (its header taken): run it from the
 * caller's bytes; when it fails and is passed over, scan it again in place. */
static int chunk_in_place(jfr_parser *p, const uint8_t *in, size_t avail, size_t *pos,
                          jfr_status *st) {
    jfr_status s;
    size_t at = *pos;
    p->chunk.base = in + at;
    p->phase = PH_BEGIN;
    if (p->mt.threads > 1) /* parallel: adopt this chunk's preparation,
                               prepare the next */
        jfr__par_chunk(p, in + at, avail);
    *pos += p->chunk.size;
    p->in.input_off += p->chunk.size;
    if ((s = run_chunk(p)))
        return step_stop(st, s);
    if (p->rs.chunk_failed) { /* resync: scan it again, in place */
        jfr__resync_begin(p, p->chunk.offset);
        p->rs.rs_prev = in[at];
        *pos = at + 1;
        p->in.input_off = p->chunk.offset + 1;
    }
    return STEP_ON;
}

/* ST_HEADER with nothing buffered and a whole header at in + *pos. */
static int header_in_place(jfr_parser *p, const uint8_t *in, size_t len, size_t *pos,
                           jfr_status *st) {
    size_t avail = len - *pos;
    int act;
    jfr_status s;
    if ((s = jfr__header_done(p, in + *pos, &act)))
        return step_stop(st, s);
    if (act == HD_SKIP) {
        *pos += JFR_HEADER_SIZE;
        p->in.input_off += JFR_HEADER_SIZE;
        return STEP_ON;
    }
    if (act == HD_RESCAN) { /* the header's bytes are still here */
        jfr__resync_begin(p, p->in.input_off);
        p->rs.rs_prev = in[*pos];
        *pos += 1;
        p->in.input_off++;
        return STEP_ON;
    }
    if (!p->lv.live && avail >= p->chunk.size) /* whole chunk here: borrow it */
        return chunk_in_place(p, in, avail, pos, st);
    memcpy(p->in.hdr, in + *pos, JFR_HEADER_SIZE);
    p->in.hdr_have = JFR_HEADER_SIZE;
    *pos += JFR_HEADER_SIZE;
    p->in.input_off += JFR_HEADER_SIZE;
    return chunk_begin(p, st);
}

/* ST_HEADER otherwise: gather the header's bytes in p->in.hdr. */
static int header_bytes(jfr_parser *p, const uint8_t *in, size_t len, size_t *pos,
                        jfr_status *st) {
    size_t take = JFR_HEADER_SIZE - p->in.hdr_have, avail = len - *pos;
    int act;
    jfr_status s;
    if (take > avail)
        take = avail;
    memcpy(p->in.hdr + p->in.hdr_have, in + *pos, take);
    p->in.hdr_have += take;
    *pos += take;
    p->in.input_off += take;
    if (p->in.hdr_have < JFR_HEADER_SIZE)
        return STEP_ON;
    /* take_header reports offsets from the chunk start */
    uint64_t hoff = p->in.input_off -= JFR_HEADER_SIZE;
    s = jfr__header_done(p, p->in.hdr, &act);
    p->in.input_off += JFR_HEADER_SIZE;
    if (s)
        return step_stop(st, s);
    if (act == HD_SKIP) {
        p->in.hdr_have = 0;
        return STEP_ON;
    }
    if (act == HD_RESCAN || act == HD_REJECT) {
        /* its bytes were taken: scan them again from the replay */
        if (act == HD_RESCAN)
            jfr__resync_begin(p, hoff);
        p->state = ST_RESYNC;
        p->in.hdr_have = 0;
        p->in.input_off = hoff + 1;
        p->rs.want_push = PUSH_HDR;
        p->rs.push_len = JFR_HEADER_SIZE - 1;
        return step_stop(st, JFR_OK);
    }
    return chunk_begin(p, st);
}

/* ST_BODY: buffer the chunk's body; run the chunk once it is complete. */
static int body_bytes(jfr_parser *p, const uint8_t *in, size_t len, size_t *pos,
                      jfr_status *st) {
    size_t avail = len - *pos;
    size_t take = avail < p->in.need ? avail : (size_t)p->in.need;
    jfr_status s;
    if ((s = jfr__buf_reserve(&p->opt.allocator, &p->in.chunkbuf, take, p->chunk.size))) {
        jfr__fail(p, s, p->in.input_off, "cannot buffer the chunk");
        return step_stop(st, jfr__fatal_told(p));
    }
    memcpy(p->in.chunkbuf.data + p->in.chunkbuf.len, in + *pos, take);
    p->in.chunkbuf.len += take;
    p->in.need -= take;
    *pos += take;
    p->in.input_off += take;
    if (p->in.need == 0) {
        p->chunk.base = p->in.chunkbuf.data;
        if ((s = run_chunk(p)))
            return step_stop(st, s);
        if (p->rs.chunk_failed) { /* resync: scan it again from our copy */
            jfr__rescan_buffered_chunk(p, p->chunk.size);
            return step_stop(st, JFR_OK);
        }
    }
    return STEP_ON;
}

/* Run the state machine over `in`; *used: bytes taken. Returns early (OK,
 * p->rs.want_push set) when taken bytes must be scanned again: the caller
 * queues them in the replay buffer before going on. */
static jfr_status run_input(jfr_parser *p, const uint8_t *in, size_t len, size_t *used) {
    size_t pos = 0;
    jfr_status s = JFR_OK;
    int step = STEP_ON;
    while (pos < len && step == STEP_ON) {
        size_t avail = len - pos;
        switch (p->state) {
        case ST_HEADER:
            if (p->in.hdr_have == 0 && avail >= JFR_HEADER_SIZE)
                step = header_in_place(p, in, len, &pos, &s);
            else
                step = header_bytes(p, in, len, &pos, &s);
            break;
        case ST_BODY:
            step = body_bytes(p, in, len, &pos, &s);
            break;
        case ST_LIVE:
            pos += jfr__live_take(p, in + pos, avail, &s);
            step = s || p->rs.want_push ? STEP_STOP : STEP_ON;
            break;
        case ST_SKIP: {
            size_t take = avail < p->in.skip_left ? avail : (size_t)p->in.skip_left;
            pos += take;
            p->in.input_off += take;
            p->in.skip_left -= take;
            if (!p->in.skip_left)
                p->state = ST_HEADER;
            break;
        }
        case ST_RESYNC:
            pos += jfr__resync_scan(p, in + pos, avail, &s);
            step = s ? STEP_STOP : STEP_ON;
            break;
        default:
            step = step_stop(&s, p->err.status);
            break;
        }
    }
    *used = pos;
    return step == STEP_STOP ? s : JFR_OK;
}

/* One run of the state machine over in[*pos..len): *pos advances by what it
 * took, and the bytes it left to scan again are queued in the replay buffer
 * (pos may be &p->rs.rp_pos, with in the replay buffer). *stuck: no progress. */
static jfr_status take(jfr_parser *p, const uint8_t *in, size_t len, size_t *pos, bool *stuck) {
    size_t used = 0;
    jfr_status s = run_input(p, in + *pos, len - *pos, &used);
    *pos += used;
    *stuck = false;
    if (!s && p->rs.want_push)
        return jfr__replay_push(p);
    *stuck = !s && !used; /* cannot happen: run_input takes all or stops */
    return s;
}

/* Feed the replay buffer (bytes to scan again) through the state machine. */
static jfr_status drain(jfr_parser *p) {
    bool stuck = false;
    while (p->rs.rp_pos < p->rs.replay.len && !stuck) {
        jfr_status s = take(p, p->rs.replay.data, p->rs.replay.len, &p->rs.rp_pos, &stuck);
        if (s)
            return s;
    }
    if (p->rs.rp_pos >= p->rs.replay.len)
        p->rs.replay.len = p->rs.rp_pos = 0;
    return JFR_OK;
}

/* Resume a paused dispatch (a feed or finish call ends the pause); a chunk
 * that then fails is scanned again. */
static jfr_status resume(jfr_parser *p) {
    jfr_status s = JFR_OK;
    if (p->err.status == JFR_PAUSED)
        p->err.status = JFR_OK;
    if (p->state == ST_DISPATCH) {
        if ((s = run_chunk(p)))
            return s;
        if (p->rs.chunk_failed) { /* paused chunks are in chunkbuf */
            jfr__rescan_buffered_chunk(p, p->chunk.size);
            s = jfr__replay_push(p);
        }
    } else if (p->state == ST_LIVE_DISPATCH) {
        s = jfr__live_dispatch(p);
        if (!s && p->rs.want_push) /* the segment failed: scan it again */
            s = jfr__replay_push(p);
    }
    return s;
}

static jfr_status feed(jfr_parser *p, const uint8_t *in, size_t len) {
    size_t pos = 0;
    jfr_status s;
    p->in.consumed = 0;
    if (p->state == ST_ERROR || p->state == ST_STOPPED)
        return p->err.status;
    if ((s = resume(p)))
        return s;
    bool stuck = false;
    while (!stuck) {
        if ((s = drain(p)) || pos >= len)
            break;
        s = take(p, in, len, &pos, &stuck);
        p->in.consumed = pos;
        if (s)
            return s;
    }
    p->in.consumed = pos;
    return s;
}

jfr_status jfr_parser_feed(jfr_parser *p, const void *buf, size_t len) {
    if (!p || (!buf && len))
        return JFR_INVALID_ARG;
    jfr_status s = feed(p, buf, len);
    if (p->mt.par) /* parallel: the helpers must be done with buf */
        jfr__par_quiesce(p);
    return s;
}

jfr_status jfr_parser_finish(jfr_parser *p) {
    if (!p)
        return JFR_INVALID_ARG;
    for (;;) {
        if (p->state == ST_ERROR || p->state == ST_STOPPED)
            return p->err.status;
        jfr_status s = resume(p);
        if (!s) { /* bytes left to scan again: every chunk must fit now */
            p->rs.rp_final = true;
            s = drain(p);
            p->rs.rp_final = false;
        }
        if (s)
            return s;
        switch (p->state) {
        case ST_HEADER:
            if (!p->in.hdr_have) {
                jfr__delivered(p, p->in.input_off); /* the whole input */
                return JFR_OK;
            }
            if (p->rs.cand) { /* a candidate cut by the end of the input */
                p->in.hdr_have = 0;
                p->rs.cand = false;
                p->state = ST_RESYNC;
                continue;
            }
            p->info.index = p->err.nchunks;
            if (p->opt.resync && !jfr__header_lead(p->in.hdr, p->in.hdr_have)) {
                /* not the start of a header: garbage at the end */
                uint64_t at = p->in.input_off - p->in.hdr_have;
                jfr__fail(p, JFR_BAD_MAGIC, at, "%zu %s at the end %s not a chunk header",
                          p->in.hdr_have, jfr__noun(p->in.hdr_have, "byte", "bytes"),
                          p->in.hdr_have == 1 ? "is" : "are");
                if (!jfr__error_continue(p))
                    return jfr__fatal(p);
                jfr__resync_begin(p, at);
                continue;
            }
            if (memcmp(p->in.hdr, "FLR", p->in.hdr_have < 4 ? p->in.hdr_have : 4) != 0) {
                /* too short for a header, and not the start of one either:
                 * the magic is what is wrong, not the length */
                char got[16] = "";
                for (size_t k = 0; k < p->in.hdr_have && k < 4; k++)
                    snprintf(got + 3 * k, sizeof got - 3 * k, "%02x ", p->in.hdr[k]);
                got[3 * (p->in.hdr_have < 4 ? p->in.hdr_have : 4) - 1] = '\0'; /* the last space */
                jfr__fail(p, JFR_BAD_MAGIC, p->in.input_off - p->in.hdr_have,
                          "expected FLR\\0, found %s", got);
                break;
            }
            jfr__fail(p, JFR_TRUNCATED, p->in.input_off, "%llu of the 68 header bytes missing",
                      (unsigned long long)(JFR_HEADER_SIZE - p->in.hdr_have));
            break;
        case ST_RESYNC:
            if (!jfr__resync_report(p, p->in.input_off, true))
                return jfr__fatal(p);
            p->state = ST_HEADER;
            return JFR_OK;
        case ST_BODY:
            jfr__fail(p, JFR_TRUNCATED, p->in.input_off,
                      "%llu %s short of the declared chunk size %lld",
                      (unsigned long long)p->in.need, jfr__noun(p->in.need, "byte", "bytes"),
                      (long long)p->info.size);
            if (!p->opt.resync)
                break;
            if (!jfr__error_continue(p))
                return jfr__fatal(p);
            /* its size may be the damage: look for chunks inside it */
            p->err.nchunks++;
            jfr__rescan_buffered_chunk(p, p->in.chunkbuf.len);
            if ((s = jfr__replay_push(p)))
                return s;
            continue;
        case ST_LIVE:
            jfr__fail(p, JFR_TRUNCATED, p->in.input_off,
                      "live chunk unfinished after %llu complete flush %s; "
                      "%llu %s of an unfinished segment dropped",
                      (unsigned long long)p->lv.segments,
                      jfr__noun(p->lv.segments, "segment", "segments"),
                      (unsigned long long)p->lv.segbuf.len,
                      jfr__noun(p->lv.segbuf.len, "byte", "bytes"));
            if (!p->opt.resync)
                break;
            if (!jfr__error_continue(p))
                return jfr__fatal(p);
            /* the next chunk may start inside the segment taken as records */
            jfr__live_rescan(p);
            if (p->rs.want_push && (s = jfr__replay_push(p)))
                return s;
            continue;
        case ST_SKIP:
            jfr__fail(p, JFR_TRUNCATED, p->in.input_off, "%llu %s short of a skipped chunk",
                      (unsigned long long)p->in.skip_left,
                      jfr__noun(p->in.skip_left, "byte", "bytes"));
            break;
        default:
            return p->err.status;
        }
        return jfr__fatal_told(p);
    }
}

