/* The push state machine: chunk headers, buffering (or borrowing) finished
 * chunks, framing live chunks record by record into flush segments,
 * pause/resume and error reporting. */
#include "internal.h"

#include <stdio.h>

void jfr_options_init(jfr_options *o) {
    memset(o, 0, sizeof *o);
}

jfr_parser *jfr_parser_new(const jfr_options *opts, const jfr_callbacks *cb, void *user) {
    jfr_options o;
    if (opts)
        o = *opts;
    else
        jfr_options_init(&o);
    /* from here on every allocation is counted (and capped: max_memory);
     * copies of o.allocator, e.g. in parallel workers, share the count */
    jfr_memcap *m = jfr__memcap_new(&o.allocator, o.max_memory);
    if (!m)
        return NULL;
    jfr_parser *p = jfr__calloc(&o.allocator, sizeof *p);
    if (!p) {
        jfr__memcap_free(m);
        return NULL;
    }
    p->memcap = m;
    p->opt = o;
    if (!p->opt.max_chunk_size)
        p->opt.max_chunk_size = JFR_DEFAULT_MAX_CHUNK;
    if (cb)
        p->cb = *cb;
    p->user = user;
    p->chunk.parser = p;
    p->names.alloc = p->opt.allocator;
    p->chunk.names = &p->names;
    jfr_parser_reset(p);
    return p;
}

void jfr_parser_reset(jfr_parser *p) {
    if (!p)
        return;
    if (p->par) { /* parallel: drop every preparation */
        jfr__par_release(p);
        jfr__par_quiesce(p);
    }
    p->state = ST_HEADER;
    p->phase = PH_DONE;
    p->hdr_have = 0;
    p->chunkbuf.len = 0;
    p->segbuf.len = p->poolbuf.len = 0;
    p->live = p->seg_ends_chunk = false;
    p->need = p->skip_left = 0;
    p->rs_from = p->skipped = 0;
    p->cand = p->chunk_failed = p->rp_final = false;
    p->replay.len = p->rp_pos = 0;
    p->input_off = 0;
    p->consumed = 0;
    p->have_tb = false;
    p->status = JFR_OK;
    p->msg[0] = 0;
    p->nerrors = p->nchunks = 0;
    memset(&p->info, 0, sizeof p->info);
    jfr__pool_clear(&p->chunk.pool);
    jfr__names_clear(&p->names);
}

void jfr_parser_free(jfr_parser *p) {
    if (!p)
        return;
    const jfr_allocator a = p->opt.allocator;
    jfr__par_free(p); /* parallel: join the helpers first */
    for (size_t i = 0; i < p->nsubs; i++)
        jfr__free(&a, p->subs[i].name, p->subs[i].name_len + 1);
    jfr__free(&a, p->subs, p->capsubs * sizeof *p->subs);
    jfr__free(&a, p->tsub_list, p->capsubs * sizeof *p->tsub_list);
    jfr__free(&a, p->tsub_start, p->tcap * sizeof *p->tsub_start);
    jfr__free(&a, p->want, p->tcap);
    jfr__free(&a, p->want_id, p->want_id_cap);
    jfr__free(&a, p->ord, p->capord * sizeof *p->ord);
    jfr__buf_free(&a, &p->chunkbuf);
    jfr__buf_free(&a, &p->replay);
    jfr__buf_free(&a, &p->segbuf);
    jfr__buf_free(&a, &p->poolbuf);
    jfr__pool_free(&a, &p->chunk.pool);
    jfr__names_free(&a, &p->names);
    jfr__metadata_free(&a, p->md);
    jfr__arena_free(&a, &p->scratch);
    jfr_memcap *m = p->memcap;
    jfr__free(&a, p, sizeof *p);
    jfr__memcap_free(m);
}

void *jfr_parser_user(const jfr_parser *p) { return p ? p->user : NULL; }
void jfr_parser_set_user(jfr_parser *p, void *user) { if (p) p->user = user; }
jfr_status jfr_parser_status(const jfr_parser *p) { return p ? p->status : JFR_INVALID_ARG; }
const char *jfr_parser_error(const jfr_parser *p) {
    return !p ? "no parser" : p->msg[0] ? p->msg : jfr_status_str(p->status);
}
uint64_t jfr_parser_chunks(const jfr_parser *p) { return p ? p->nchunks : 0; }
uint64_t jfr_parser_bytes(const jfr_parser *p) { return p ? p->input_off : 0; }
uint64_t jfr_parser_errors(const jfr_parser *p) { return p ? p->nerrors : 0; }
uint64_t jfr_parser_skipped(const jfr_parser *p) { return p ? p->skipped : 0; }
uint64_t jfr_parser_memory(const jfr_parser *p, uint64_t *peak) {
    if (peak)
        *peak = p ? atomic_load(&p->memcap->peak) : 0;
    return p ? atomic_load(&p->memcap->used) : 0;
}
size_t jfr_parser_consumed(const jfr_parser *p) { return p ? p->consumed : 0; }
const jfr_metadata *jfr_parser_metadata(const jfr_parser *p) {
    return p && p->chunk.md ? &p->chunk.md->pub : NULL;
}

jfr_status jfr_parser_on(jfr_parser *p, const char *type_name, jfr_event_cb cb, void *user) {
    if (!p || !type_name || !cb)
        return JFR_INVALID_ARG;
    if ((p->state == ST_DISPATCH || p->state == ST_LIVE_DISPATCH) && p->phase > PH_MAP &&
        p->phase != PH_DONE)
        return JFR_INVALID_STATE; /* the current unit's events are being delivered */
    const jfr_allocator *a = &p->opt.allocator;
    if (p->nsubs == p->capsubs) {
        /* both arrays or neither: they share capsubs (tsub_list is rebuilt
         * by the next mapping, its content need not be kept) */
        size_t cap = p->capsubs ? p->capsubs * 2 : 8;
        jfr_sub *s = jfr__alloc(a, cap * sizeof *s);
        uint32_t *l = jfr__alloc(a, cap * sizeof *l);
        if (!s || !l) {
            jfr__free(a, s, cap * sizeof *s);
            jfr__free(a, l, cap * sizeof *l);
            return JFR_NOMEM;
        }
        if (p->nsubs)
            memcpy(s, p->subs, p->nsubs * sizeof *s);
        jfr__free(a, p->subs, p->capsubs * sizeof *p->subs);
        jfr__free(a, p->tsub_list, p->capsubs * sizeof *p->tsub_list);
        p->subs = s;
        p->tsub_list = l;
        p->capsubs = cap;
    }
    size_t n = strlen(type_name);
    char *name = jfr__alloc(a, n + 1);
    if (!name)
        return JFR_NOMEM;
    memcpy(name, type_name, n + 1);
    p->subs[p->nsubs++] = (jfr_sub){name, n, cb, user};
    p->subs_dirty = true;
    return JFR_OK;
}

char *jfr__parser_scratch(jfr_parser *p, size_t n) {
    return jfr__arena_alloc(&p->opt.allocator, &p->scratch, n ? n : 1, 1);
}

bool jfr__fail(jfr_parser *p, jfr_status s, uint64_t offset, const char *fmt, ...) {
    char detail[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof detail, fmt, ap);
    va_end(ap);
    if (s == JFR_NOMEM && atomic_exchange(&p->memcap->hit, false)) {
        /* refused by max_memory, not by the system: say so */
        s = JFR_LIMIT;
        snprintf(p->msg, sizeof p->msg, "chunk %llu at byte %llu: %s: max_memory %llu bytes: %s",
                 (unsigned long long)p->info.index, (unsigned long long)offset,
                 jfr_status_str(s), (unsigned long long)p->memcap->limit, detail);
    } else {
        snprintf(p->msg, sizeof p->msg, "chunk %llu at byte %llu: %s: %s",
                 (unsigned long long)p->info.index, (unsigned long long)offset,
                 jfr_status_str(s), detail);
    }
    p->status = s;
    p->nerrors++;
    return false;
}

/* After an error: ask on_error whether to skip the chunk and go on. */
static bool error_continue(jfr_parser *p) {
    return p->cb.on_error &&
           p->cb.on_error(p, p->status, p->msg, p->user) == JFR_CB_CONTINUE;
}

static jfr_status fatal(jfr_parser *p) {
    p->state = ST_ERROR;
    return p->status;
}

/* An error that cannot be skipped (framing lost, no memory): on_error is
 * told all the same; its answer does not matter. */
static jfr_status fatal_told(jfr_parser *p) {
    (void)error_continue(p);
    return fatal(p);
}

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
    ci->index = p->nchunks;
    ci->offset = p->input_off;
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
    p->live = ci->state != 0;
    if (!p->live && ci->size <= JFR_HEADER_SIZE) {
        jfr__fail(p, JFR_BAD_CHUNK_SIZE, ci->offset + 8, "chunk size %lld",
                  (long long)ci->size);
        return JFR_BAD_CHUNK_SIZE;
    }
    if (!p->live && (uint64_t)ci->size > p->opt.max_chunk_size) {
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
    if (!p->opt.jdk_time_base || !p->have_tb) {
        p->have_tb = true;
        p->tb_nanos = ci->start_nanos;
        p->tb_ticks = ci->start_ticks;
        p->tb_div = div;
    }
    c->tb_start_nanos = p->tb_nanos;
    c->tb_start_ticks = p->tb_ticks;
    c->tb_divisor = p->tb_div;
    return JFR_OK;
}

/* ------------------------------------------------------- resynchronisation */

/* A header found by the scan (opt.resync): plausible enough to try. `left`
 * input bytes follow from its first byte; at finish the chunk must fit.
 * `prev` is the byte before it (-1: unknown). */
static bool candidate_ok(const jfr_parser *p, const uint8_t *h, uint64_t left, int prev) {
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
    return !p->rp_final || size <= left;
}

/* Skip from `from`, the first byte of the damaged header or chunk. */
static void resync_begin(jfr_parser *p, uint64_t from) {
    p->state = ST_RESYNC;
    p->rs_prev = -1;
    p->rs_from = from;
    p->hdr_have = 0;
    p->cand = false;
    p->chunk_failed = false;
}

/* The scan found a chunk at `at` (or the input ended there): say how many
 * bytes were skipped. False when on_error wants to stop. */
static bool resync_report(jfr_parser *p, uint64_t at, bool at_end) {
    uint64_t n = at - p->rs_from;
    p->skipped += n;
    p->info.index = p->nchunks;
    if (at_end)
        jfr__fail(p, JFR_SKIPPED, p->rs_from,
                  "%llu bytes skipped to the end of the input (no further chunk)",
                  (unsigned long long)n);
    else
        jfr__fail(p, JFR_SKIPPED, p->rs_from, "%llu bytes skipped; next chunk magic at byte %llu",
                  (unsigned long long)n, (unsigned long long)at);
    return error_continue(p);
}

/* What run_input left to copy to the replay buffer once it has returned. */
enum { PUSH_NONE, PUSH_HDR, PUSH_CHUNK };

/* Bytes taken but to be scanned again (from the second byte of a damaged
 * header or chunk, which sit in p->hdr or p->chunkbuf) go ahead of the
 * replay bytes not yet read. Their offset is p->input_off. */
static jfr_status replay_push(jfr_parser *p) {
    const uint8_t *d = p->want_push == PUSH_HDR ? p->hdr + 1 : p->chunkbuf.data + 1;
    size_t n = p->push_len, rest = p->replay.len - p->rp_pos;
    bool chunk = p->want_push == PUSH_CHUNK;
    p->want_push = PUSH_NONE;
    p->rs_prev = d[-1]; /* the scan goes on after the unit's first byte */
    if (p->par)
        jfr__par_quiesce(p); /* no helper may read a buffer that changes now */
    if (!rest)
        p->replay.len = p->rp_pos = 0;
    if (!rest && chunk) { /* hand the chunk buffer over rather than copy it */
        jfr_buf t = p->replay;
        p->replay = p->chunkbuf;
        p->replay.len = n + 1;
        p->rp_pos = 1;
        p->chunkbuf = t;
        p->chunkbuf.len = 0;
    } else if (p->rp_pos >= n) {
        p->rp_pos -= n;
        memcpy(p->replay.data + p->rp_pos, d, n);
    } else {
        jfr_status s = jfr__buf_reserve(&p->opt.allocator, &p->replay, n, 0);
        if (s) {
            jfr__fail(p, s, p->input_off, "cannot keep %zu damaged bytes to scan them again", n);
            return fatal_told(p);
        }
        memmove(p->replay.data + n, p->replay.data + p->rp_pos, rest);
        memcpy(p->replay.data, d, n);
        p->replay.len = n + rest;
        p->rp_pos = 0;
    }
    return JFR_OK;
}

/* The chunk just run failed and was passed over: scan it again from its
 * second byte, from our buffer (the caller's bytes are rewound instead). */
static void rescan_buffered_chunk(jfr_parser *p, uint64_t len) {
    uint64_t off = p->chunk.offset;
    resync_begin(p, off);
    p->input_off = off + 1;
    p->want_push = PUSH_CHUNK;
    p->push_len = (size_t)len - 1;
}

/* ------------------------------------------------------------- finished chunks */

/* The chunk is complete at `base`: run it; on pause keep our own copy. */
static jfr_status run_chunk(jfr_parser *p) {
    p->state = ST_DISPATCH;
    jfr_status s = jfr__chunk_process(p);
    if (s == JFR_PAUSED) {
        if (p->chunk.base != p->chunkbuf.data) {
            p->chunkbuf.len = 0;
            jfr_status r = jfr__buf_reserve(&p->opt.allocator, &p->chunkbuf, p->chunk.size, 0);
            if (r) {
                jfr__fail(p, r, p->chunk.offset, "cannot keep the paused chunk");
                return fatal_told(p);
            }
            memcpy(p->chunkbuf.data, p->chunk.base, p->chunk.size);
            p->chunkbuf.len = p->chunk.size;
            p->chunk.base = p->chunkbuf.data;
        }
        p->status = JFR_PAUSED;
        return s;
    }
    if (s == JFR_STOPPED) {
        p->status = JFR_STOPPED;
        return s;
    }
    if (s && !error_continue(p))
        return fatal(p);
    /* done (or skipped after an error the user chose to pass over) */
    p->chunk_failed = s != JFR_OK && p->opt.resync;
    if (p->prep)
        jfr__par_release(p);
    p->nchunks++;
    p->state = ST_HEADER;
    p->phase = PH_DONE;
    p->chunk.md = NULL;
    p->chunkbuf.len = 0;
    if (p->status == JFR_PAUSED)
        p->status = JFR_OK;
    return JFR_OK;
}

/* What header_done found. */
enum { HD_GO, HD_SKIP, HD_RESCAN, HD_REJECT };

/* A header is complete in p->hdr or at `h`; p->input_off is its offset. */
static jfr_status header_done(jfr_parser *p, const uint8_t *h, int *act) {
    *act = HD_GO;
    if (p->cand) { /* the scan's candidate, completed in p->hdr */
        p->cand = false;
        if (!candidate_ok(p, h, UINT64_MAX, p->cand_prev)) {
            *act = HD_REJECT;
            return JFR_OK;
        }
        if (!resync_report(p, p->input_off, false))
            return fatal(p);
    }
    jfr_status s = take_header(p, h);
    if (!s)
        return JFR_OK;
    /* a bad header ends the input, unless we resynchronise; a chunk over
     * the size limit can be skipped by its declared size */
    bool told = s == JFR_CHUNK_TOO_LARGE || p->opt.resync;
    if (told && error_continue(p)) {
        if (p->opt.resync) {
            *act = HD_RESCAN;
            return JFR_OK;
        }
        p->skip_left = p->info.size - JFR_HEADER_SIZE;
        p->state = ST_SKIP;
        p->nchunks++;
        *act = HD_SKIP;
        return JFR_OK;
    }
    return told ? fatal(p) : fatal_told(p);
}

/* ------------------------------------------------------------ live chunks */

static void live_begin(jfr_parser *p) {
    p->state = ST_LIVE;
    p->segbuf.len = p->poolbuf.len = 0;
    jfr__pool_clear(&p->chunk.pool);
    jfr__names_clear(&p->names);
    p->chunk_pos = p->seg_start = JFR_HEADER_SIZE;
    p->rec_need = 0;
    p->varlen = 0;
    p->segments = 0;
    p->seg_ends_chunk = false;
    p->chunk.md = NULL;
}

static void live_end_chunk(jfr_parser *p) {
    p->nchunks++;
    p->state = ST_HEADER;
    p->live = false;
    p->seg_ends_chunk = false;
    p->segbuf.len = p->poolbuf.len = 0;
    p->chunk.md = NULL;
}

/* Run (or resume) the dispatch of the buffered segment. */
static jfr_status live_dispatch(jfr_parser *p) {
    p->state = ST_LIVE_DISPATCH;
    jfr_status s = jfr__chunk_process(p);
    if (s == JFR_PAUSED)
        return p->status = JFR_PAUSED;
    if (s == JFR_STOPPED)
        return p->status = JFR_STOPPED;
    if (s) {
        if (!error_continue(p))
            return fatal(p);
        p->deferred = false; /* drop the damaged segment, keep the chunk */
    }
    if (p->status == JFR_PAUSED)
        p->status = JFR_OK;
    if (p->deferred) { /* no metadata yet: keep it, merge with the next */
        p->state = ST_LIVE;
        return JFR_OK;
    }
    p->segments++;
    p->segbuf.len = 0;
    p->seg_start = p->chunk_pos;
    if (p->seg_ends_chunk)
        live_end_chunk(p);
    else
        p->state = ST_LIVE;
    return JFR_OK;
}

/* A whole record sits at segbuf[rec_start..]. A checkpoint with the FLUSH bit,
 * or carrying the chunk header with state 0, ends the segment. */
static jfr_status live_record_done(jfr_parser *p) {
    jfr_chunk *c = &p->chunk;
    const uint8_t *r = p->segbuf.data + p->rec_start;
    jfr_cur cur = {r, p->segbuf.data + p->segbuf.len, !c->compressed, r, 0};
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
            p->seg_ends_chunk = true;
            end = true;
        }
    }
    if (!end)
        return JFR_OK;
    c->base = p->segbuf.data;
    c->size = p->segbuf.len;
    c->base_off = p->seg_start;
    c->first_rec = 0;
    c->pbase = p->poolbuf.data;
    c->psize = p->poolbuf.len;
    p->phase = PH_INDEX;
    return live_dispatch(p);
}

/* The framing of a live chunk is broken: the end of the input, or (resync)
 * the rest of the chunk is lost and the bytes of its unfinished segment
 * count as skipped. */
static jfr_status live_broken(jfr_parser *p) {
    if (!p->opt.resync)
        return fatal_told(p);
    if (!error_continue(p))
        return fatal(p);
    uint64_t from = p->input_off - p->segbuf.len;
    live_end_chunk(p);
    resync_begin(p, from);
    return JFR_OK;
}

/* Take bytes of a live chunk: frame records, dispatch at segment ends.
 * Returns bytes taken (stops early when dispatch pauses/stops/fails). */
static size_t live_take(jfr_parser *p, const uint8_t *in, size_t avail, jfr_status *st) {
    jfr_buf *sb = &p->segbuf;
    size_t pos = 0;
    *st = JFR_OK;
    const jfr_allocator *a = &p->opt.allocator;
    while (pos < avail && p->state == ST_LIVE) {
        jfr_status s;
        size_t take = p->rec_need ? (avail - pos < p->rec_need ? avail - pos : (size_t)p->rec_need) : 1;
        if ((s = jfr__buf_reserve(a, sb, take, p->opt.max_chunk_size))) {
            jfr__fail(p, s == JFR_LIMIT ? JFR_CHUNK_TOO_LARGE : s, p->input_off,
                      "live segment exceeds the maximum chunk size");
            *st = live_broken(p);
            return pos;
        }
        if (!p->rec_need && !p->varlen)
            p->rec_start = sb->len;
        memcpy(sb->data + sb->len, in + pos, take);
        sb->len += take;
        pos += take;
        p->input_off += take;
        p->chunk_pos += take;
        if (!p->rec_need) { /* one more byte of the size field */
            uint8_t last = sb->data[sb->len - 1];
            p->varlen++;
            bool done = p->chunk.compressed ? (!(last & 0x80) || p->varlen == 9) : p->varlen == 4;
            if (!done)
                continue;
            jfr_cur cur = {sb->data + p->rec_start, sb->data + sb->len, !p->chunk.compressed,
                           sb->data, 0};
            uint64_t size = 0;
            jfr__cur_int(&cur, &size);
            if (size <= p->varlen || size > p->opt.max_chunk_size) {
                jfr__fail(p, JFR_BAD_RECORD, p->input_off - p->varlen,
                          "record size %llu out of range in a live chunk",
                          (unsigned long long)size);
                *st = live_broken(p);
                return pos;
            }
            p->rec_need = size - p->varlen;
            p->varlen = 0;
            continue;
        }
        p->rec_need -= take;
        if (!p->rec_need && (s = live_record_done(p))) {
            *st = s;
            return pos;
        }
    }
    return pos;
}

/* Can the n bytes at h begin a header of a version we read (magic, major)? */
static bool header_lead(const uint8_t *h, size_t n) {
    static const uint8_t lead[5] = {'F', 'L', 'R', 0, 0}; /* magic, major's high byte */
    return memcmp(h, lead, n < 5 ? n : 5) == 0 && (n < 6 || jfr__major_ok(h[5]));
}

/* Scan for the next plausible chunk header (opt.resync). */

static size_t resync_scan(jfr_parser *p, const uint8_t *in, size_t len, jfr_status *st) {
    size_t pos = 0;
    *st = JFR_OK;
    while (pos < len) {
        const uint8_t *f = memchr(in + pos, 'F', len - pos);
        size_t at = f ? (size_t)(f - in) : len, left = len - at;
        p->input_off += at - pos;
        pos = at;
        if (!f)
            break;
        int prev = at ? in[at - 1] : p->rs_prev;
        if (left >= JFR_HEADER_SIZE) {
            if (candidate_ok(p, f, left, prev)) {
                if (!resync_report(p, p->input_off, false)) {
                    *st = fatal(p);
                    return pos;
                }
                p->state = ST_HEADER;
                return pos;
            }
        } else if (header_lead(f, left)) {
            /* maybe a header cut by the end of this slice: complete it */
            memcpy(p->hdr, f, left);
            p->hdr_have = left;
            p->cand = true;
            p->cand_prev = prev;
            p->state = ST_HEADER;
            p->input_off += left;
            return len;
        }
        pos++;
        p->input_off++;
    }
    if (len)
        p->rs_prev = in[len - 1];
    return pos;
}

/* Run the state machine over `in`; *used: bytes taken. Returns early (OK,
 * p->want_push set) when taken bytes must be scanned again: the caller
 * queues them in the replay buffer before going on. */
static jfr_status run_input(jfr_parser *p, const uint8_t *in, size_t len, size_t *used) {
    size_t pos = 0;
    jfr_status s;
    while (pos < len) {
        size_t avail = len - pos;
        switch (p->state) {
        case ST_HEADER: {
            int act;
            if (p->hdr_have == 0 && avail >= JFR_HEADER_SIZE) {
                if ((s = header_done(p, in + pos, &act))) {
                    *used = pos;
                    return s;
                }
                if (act == HD_SKIP) {
                    pos += JFR_HEADER_SIZE;
                    p->input_off += JFR_HEADER_SIZE;
                    break;
                }
                if (act == HD_RESCAN) { /* the header's bytes are still here */
                    resync_begin(p, p->input_off);
                    p->rs_prev = in[pos];
                    pos++;
                    p->input_off++;
                    break;
                }
                if (!p->live && avail >= p->chunk.size) { /* whole chunk here: borrow it */
                    size_t at = pos;
                    p->chunk.base = in + pos;
                    p->phase = PH_BEGIN;
                    if (p->opt.threads > 1) /* parallel: adopt this chunk's
                                               preparation, prepare the next */
                        jfr__par_chunk(p, in + pos, avail);
                    pos += p->chunk.size;
                    p->input_off += p->chunk.size;
                    *used = pos;
                    if ((s = run_chunk(p)))
                        return s;
                    if (p->chunk_failed) { /* resync: scan it again, in place */
                        resync_begin(p, p->chunk.offset);
                        p->rs_prev = in[at];
                        pos = at + 1;
                        p->input_off = p->chunk.offset + 1;
                    }
                    break;
                }
                memcpy(p->hdr, in + pos, JFR_HEADER_SIZE);
                p->hdr_have = JFR_HEADER_SIZE;
                pos += JFR_HEADER_SIZE;
                p->input_off += JFR_HEADER_SIZE;
            } else {
                size_t take = JFR_HEADER_SIZE - p->hdr_have;
                if (take > avail)
                    take = avail;
                memcpy(p->hdr + p->hdr_have, in + pos, take);
                p->hdr_have += take;
                pos += take;
                p->input_off += take;
                if (p->hdr_have < JFR_HEADER_SIZE)
                    break;
                /* take_header reports offsets from the chunk start */
                uint64_t hoff = p->input_off -= JFR_HEADER_SIZE;
                s = header_done(p, p->hdr, &act);
                p->input_off += JFR_HEADER_SIZE;
                if (s) {
                    *used = pos;
                    return s;
                }
                if (act == HD_SKIP) {
                    p->hdr_have = 0;
                    break;
                }
                if (act == HD_RESCAN || act == HD_REJECT) {
                    /* its bytes were taken: scan them again from the replay */
                    if (act == HD_RESCAN)
                        resync_begin(p, hoff);
                    p->state = ST_RESYNC;
                    p->hdr_have = 0;
                    p->input_off = hoff + 1;
                    p->want_push = PUSH_HDR;
                    p->push_len = JFR_HEADER_SIZE - 1;
                    *used = pos;
                    return JFR_OK;
                }
            }
            p->hdr_have = 0;
            if (p->live) {
                live_begin(p);
                if (p->cb.on_chunk_begin) {
                    int rc = p->cb.on_chunk_begin(p, &p->info, p->user);
                    if (rc != JFR_CB_CONTINUE) {
                        *used = pos;
                        if (rc == JFR_CB_PAUSE)
                            return p->status = JFR_PAUSED;
                        p->state = ST_STOPPED;
                        return p->status = JFR_STOPPED;
                    }
                }
                break;
            }
            /* buffer the chunk: header now, body as it arrives */
            p->chunkbuf.len = 0;
            if ((s = jfr__buf_reserve(&p->opt.allocator, &p->chunkbuf, JFR_HEADER_SIZE,
                                      p->chunk.size))) {
                jfr__fail(p, s, p->info.offset, "cannot buffer the chunk");
                *used = pos;
                return fatal_told(p);
            }
            memcpy(p->chunkbuf.data, p->hdr, JFR_HEADER_SIZE);
            p->chunkbuf.len = JFR_HEADER_SIZE;
            p->need = p->chunk.size - JFR_HEADER_SIZE;
            p->state = ST_BODY;
            p->phase = PH_INDEX;
            if (p->cb.on_chunk_begin) {
                int rc = p->cb.on_chunk_begin(p, &p->info, p->user);
                if (rc != JFR_CB_CONTINUE) {
                    *used = pos;
                    if (rc == JFR_CB_PAUSE)
                        return JFR_PAUSED;
                    p->state = ST_STOPPED;
                    return p->status = JFR_STOPPED;
                }
            }
            break;
        }
        case ST_BODY: {
            size_t take = avail < p->need ? avail : (size_t)p->need;
            if ((s = jfr__buf_reserve(&p->opt.allocator, &p->chunkbuf, take, p->chunk.size))) {
                jfr__fail(p, s, p->input_off, "cannot buffer the chunk");
                *used = pos;
                return fatal_told(p);
            }
            memcpy(p->chunkbuf.data + p->chunkbuf.len, in + pos, take);
            p->chunkbuf.len += take;
            p->need -= take;
            pos += take;
            p->input_off += take;
            if (p->need == 0) {
                p->chunk.base = p->chunkbuf.data;
                *used = pos;
                if ((s = run_chunk(p)))
                    return s;
                if (p->chunk_failed) { /* resync: scan it again from our copy */
                    rescan_buffered_chunk(p, p->chunk.size);
                    return JFR_OK;
                }
            }
            break;
        }
        case ST_LIVE:
            pos += live_take(p, in + pos, avail, &s);
            if (s) {
                *used = pos;
                return s;
            }
            break;
        case ST_SKIP: {
            size_t take = avail < p->skip_left ? avail : (size_t)p->skip_left;
            pos += take;
            p->input_off += take;
            p->skip_left -= take;
            if (!p->skip_left)
                p->state = ST_HEADER;
            break;
        }
        case ST_RESYNC:
            pos += resync_scan(p, in + pos, avail, &s);
            if (s) {
                *used = pos;
                return s;
            }
            break;
        default:
            *used = pos;
            return p->status;
        }
    }
    *used = pos;
    return JFR_OK;
}

/* One run of the state machine over in[*pos..len): *pos advances by what it
 * took, and the bytes it left to scan again are queued in the replay buffer
 * (pos may be &p->rp_pos, with in the replay buffer). *stuck: no progress. */
static jfr_status take(jfr_parser *p, const uint8_t *in, size_t len, size_t *pos, bool *stuck) {
    size_t used = 0;
    jfr_status s = run_input(p, in + *pos, len - *pos, &used);
    *pos += used;
    *stuck = false;
    if (!s && p->want_push)
        return replay_push(p);
    *stuck = !s && !used; /* cannot happen: run_input takes all or stops */
    return s;
}

/* Feed the replay buffer (bytes to scan again) through the state machine. */
static jfr_status drain(jfr_parser *p) {
    bool stuck = false;
    while (p->rp_pos < p->replay.len && !stuck) {
        jfr_status s = take(p, p->replay.data, p->replay.len, &p->rp_pos, &stuck);
        if (s)
            return s;
    }
    if (p->rp_pos >= p->replay.len)
        p->replay.len = p->rp_pos = 0;
    return JFR_OK;
}

/* Resume a paused dispatch; a chunk that then fails is scanned again. */
static jfr_status resume(jfr_parser *p) {
    jfr_status s = JFR_OK;
    if (p->state == ST_DISPATCH) {
        if ((s = run_chunk(p)))
            return s;
        if (p->chunk_failed) { /* paused chunks are in chunkbuf */
            rescan_buffered_chunk(p, p->chunk.size);
            s = replay_push(p);
        }
    } else if (p->state == ST_LIVE_DISPATCH) {
        s = live_dispatch(p);
    }
    return s;
}

static jfr_status feed(jfr_parser *p, const uint8_t *in, size_t len) {
    size_t pos = 0;
    jfr_status s;
    p->consumed = 0;
    if (p->state == ST_ERROR || p->state == ST_STOPPED)
        return p->status;
    if ((s = resume(p)))
        return s;
    bool stuck = false;
    while (!stuck) {
        if ((s = drain(p)) || pos >= len)
            break;
        s = take(p, in, len, &pos, &stuck);
        p->consumed = pos;
        if (s)
            return s;
    }
    p->consumed = pos;
    return s;
}

jfr_status jfr_parser_feed(jfr_parser *p, const void *buf, size_t len) {
    if (!p || (!buf && len))
        return JFR_INVALID_ARG;
    jfr_status s = feed(p, buf, len);
    if (p->par) /* parallel: the helpers must be done with buf */
        jfr__par_quiesce(p);
    return s;
}

jfr_status jfr_parser_finish(jfr_parser *p) {
    if (!p)
        return JFR_INVALID_ARG;
    for (;;) {
        if (p->state == ST_ERROR || p->state == ST_STOPPED)
            return p->status;
        jfr_status s = resume(p);
        if (!s) { /* bytes left to scan again: every chunk must fit now */
            p->rp_final = true;
            s = drain(p);
            p->rp_final = false;
        }
        if (s)
            return s;
        switch (p->state) {
        case ST_HEADER:
            if (!p->hdr_have)
                return JFR_OK;
            if (p->cand) { /* a candidate cut by the end of the input */
                p->hdr_have = 0;
                p->cand = false;
                p->state = ST_RESYNC;
                continue;
            }
            p->info.index = p->nchunks;
            if (p->opt.resync && !header_lead(p->hdr, p->hdr_have)) {
                /* not the start of a header: garbage at the end */
                uint64_t at = p->input_off - p->hdr_have;
                jfr__fail(p, JFR_BAD_MAGIC, at, "%zu bytes at the end are not a chunk header",
                          p->hdr_have);
                if (!error_continue(p))
                    return fatal(p);
                resync_begin(p, at);
                continue;
            }
            if (memcmp(p->hdr, "FLR", p->hdr_have < 4 ? p->hdr_have : 4) != 0) {
                /* too short for a header, and not the start of one either:
                 * the magic is what is wrong, not the length */
                char got[16] = "";
                for (size_t k = 0; k < p->hdr_have && k < 4; k++)
                    snprintf(got + 3 * k, sizeof got - 3 * k, "%02x ", p->hdr[k]);
                got[3 * (p->hdr_have < 4 ? p->hdr_have : 4) - 1] = '\0'; /* the last space */
                jfr__fail(p, JFR_BAD_MAGIC, p->input_off - p->hdr_have,
                          "expected FLR\\0, found %s", got);
                break;
            }
            jfr__fail(p, JFR_TRUNCATED, p->input_off, "%llu of the 68 header bytes missing",
                      (unsigned long long)(JFR_HEADER_SIZE - p->hdr_have));
            break;
        case ST_RESYNC:
            if (!resync_report(p, p->input_off, true))
                return fatal(p);
            p->state = ST_HEADER;
            return JFR_OK;
        case ST_BODY:
            jfr__fail(p, JFR_TRUNCATED, p->input_off,
                      "%llu bytes short of the declared chunk size %lld",
                      (unsigned long long)p->need, (long long)p->info.size);
            if (!p->opt.resync)
                break;
            if (!error_continue(p))
                return fatal(p);
            /* its size may be the damage: look for chunks inside it */
            p->nchunks++;
            rescan_buffered_chunk(p, p->chunkbuf.len);
            if ((s = replay_push(p)))
                return s;
            continue;
        case ST_LIVE:
            jfr__fail(p, JFR_TRUNCATED, p->input_off,
                      "live chunk unfinished after %llu complete flush segments; "
                      "%llu bytes of an unfinished segment dropped",
                      (unsigned long long)p->segments, (unsigned long long)(p->segbuf.len));
            break;
        case ST_SKIP:
            jfr__fail(p, JFR_TRUNCATED, p->input_off, "%llu bytes short of a skipped chunk",
                      (unsigned long long)p->skip_left);
            break;
        default:
            return p->status;
        }
        return fatal_told(p);
    }
}
