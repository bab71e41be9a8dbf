/* A unit of records — a whole chunk, or one flush segment of a live chunk —
 * is complete: find and compile its metadata, index its pools, then walk its
 * records and call back. Every phase can be paused and resumed. */
#include "internal.h"

#include <stdlib.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

typedef jfr_rec rec;

static bool read_rec_slow(const jfr_chunk *c, uint64_t pos, rec *r) {
    jfr_cur cur = {c->base + pos, c->base + c->size, !c->compressed, c->base, 0};
    uint64_t sz, ty;
    if (!jfr__cur_int(&cur, &sz) || !jfr__cur_long(&cur, &ty))
        return false;
    uint64_t hdr = (uint64_t)(cur.p - (c->base + pos));
    if (sz < hdr || sz > c->size - pos)
        return false;
    *r = (rec){pos, sz, ty, pos + hdr};
    return true;
}

/* The record header at pos. Sizes and type ids of one or two varint bytes
 * are nearly all of them: decoded without a loop. */
static inline bool read_rec(const jfr_chunk *c, uint64_t pos, rec *r) {
    const uint8_t *b = c->base + pos;
    uint64_t left = c->size - pos, sz, ty;
    unsigned h;
    if (!c->compressed || left < 4)
        return read_rec_slow(c, pos, r);
    if (b[0] < 0x80) {
        sz = b[0];
        h = 1;
    } else if (b[1] < 0x80) {
        sz = (b[0] & 0x7fu) | (uint64_t)b[1] << 7;
        h = 2;
    } else {
        return read_rec_slow(c, pos, r);
    }
    if (b[h] < 0x80) {
        ty = b[h];
        h += 1;
    } else if (b[h + 1] < 0x80) {
        ty = (b[h] & 0x7fu) | (uint64_t)b[h + 1] << 7;
        h += 2;
    } else {
        return read_rec_slow(c, pos, r);
    }
    if (sz < h || sz > left)
        return false;
    *r = (rec){pos, sz, ty, pos + h};
    return true;
}

static uint64_t abs_off(const jfr_parser *p, uint64_t pos) {
    return jfr__abs_off(p, pos);
}

static jfr_status bad_record(jfr_parser *p, uint64_t pos) {
    jfr__fail(p, JFR_BAD_RECORD, abs_off(p, pos), "record size out of range (%llu bytes left)",
              (unsigned long long)(p->chunk.size - pos));
    return JFR_BAD_RECORD;
}

/* Compile (or reuse) the metadata record at p->meta_pos. */
static jfr_status load_metadata(jfr_parser *p) {
    jfr_chunk *c = &p->chunk;
    rec r = {0};
    read_rec(c, p->meta_pos, &r); /* checked by index_unit */
    /* The type system proper follows startTicks, duration and metadata id. */
    jfr_cur cur = {c->base + r.payload, c->base + r.pos + r.size, !c->compressed, c->base, 0};
    uint64_t v, id = 0;
    if (!jfr__cur_long(&cur, &v) || !jfr__cur_long(&cur, &v) || !jfr__cur_long(&cur, &id)) {
        jfr__fail(p, JFR_BAD_METADATA, abs_off(p, r.pos), "metadata header truncated");
        return JFR_BAD_METADATA;
    }
    uint64_t len = (uint64_t)(cur.end - cur.p);
    uint64_t fp = XXH3_64bits(cur.p, (size_t)len);
    if (p->md && p->md->pub.fingerprint == fp && p->md_len == len) {
        if (c->md != p->md) { /* same types as the previous chunk */
            p->md->pub.reused = true;
            p->md_changed = true;
        }
        p->md->pub.metadata_id = id;
    } else {
        char why[200] = "";
        jfr_mdtab *md = NULL;
        uint64_t at = UINT64_MAX;
        jfr_status s = jfr__metadata_compile(&p->opt.allocator, c->base + r.payload,
                                             c->base + r.pos + r.size, c->compressed,
                                             fp, &md, why, sizeof why, &at);
        if (s) {
            /* the undecodable bytes if known, else the record */
            jfr__fail(p, s, abs_off(p, at == UINT64_MAX ? r.pos : r.payload + at), "%s",
                      why[0] ? why : "cannot compile metadata");
            return s;
        }
        jfr__metadata_free(&p->opt.allocator, p->md);
        p->md = md;
        /* the value cache holds type pointers (a live chunk can bring new
         * metadata between its segments) */
        jfr__names_clear_values(&p->names);
        p->md_len = len;
        p->md_changed = true;
    }
    c->md = p->md;
    return JFR_OK;
}

/* Resolve subscriptions (names) to type indexes for this chunk. */
static jfr_status map_subscriptions(jfr_parser *p) {
    const jfr_allocator *a = &p->opt.allocator;
    uint32_t nt = p->md->pub.ntypes;
    if (p->tcap < (size_t)nt + 1) {
        size_t cap = (size_t)nt + 1;
        uint32_t *start = jfr__alloc(a, cap * sizeof *start);
        uint8_t *want = jfr__alloc(a, cap);
        if (!start || !want) {
            jfr__free(a, start, cap * sizeof *start);
            jfr__free(a, want, cap);
            return JFR_NOMEM;
        }
        jfr__free(a, p->tsub_start, p->tcap * sizeof *p->tsub_start);
        jfr__free(a, p->want, p->tcap);
        p->tsub_start = start;
        p->want = want;
        p->tcap = cap;
    }
    memset(p->tsub_start, 0, ((size_t)nt + 1) * sizeof *p->tsub_start);
    /* counting sort of subscriptions by type index */
    uint32_t *tidx = NULL;
    if (p->nsubs) {
        tidx = jfr__alloc(a, p->nsubs * sizeof *tidx);
        if (!tidx)
            return JFR_NOMEM;
    }
    for (size_t i = 0; i < p->nsubs; i++) {
        const jfr_type *t = jfr_metadata_type_named(&p->md->pub, p->subs[i].name);
        tidx[i] = t && t->is_event ? t->index : UINT32_MAX;
        if (tidx[i] != UINT32_MAX)
            p->tsub_start[tidx[i] + 1]++;
    }
    for (uint32_t i = 0; i < nt; i++)
        p->tsub_start[i + 1] += p->tsub_start[i];
    uint32_t *fill = p->tsub_start; /* reuse: compute positions then restore */
    for (size_t i = 0; i < p->nsubs; i++)
        if (tidx[i] != UINT32_MAX)
            p->tsub_list[fill[tidx[i]]++] = (uint32_t)i;
    /* fill[] advanced each start to its end; shift back */
    for (uint32_t i = nt; i > 0; i--)
        p->tsub_start[i] = p->tsub_start[i - 1];
    p->tsub_start[0] = 0;
    for (uint32_t i = 0; i < nt; i++) {
        const jfr_type *t = p->md->pub.types[i];
        p->want[i] = t->is_event &&
                     (p->cb.on_event || p->tsub_start[i + 1] > p->tsub_start[i]);
    }
    jfr__free(a, tidx, p->nsubs * sizeof *tidx);
    /* by type id too, so the record loop reads one byte per record */
    size_t nid = p->md->nby_id;
    if (nid > p->want_id_cap) {
        uint8_t *w = jfr__alloc(a, nid);
        if (!w)
            return JFR_NOMEM;
        jfr__free(a, p->want_id, p->want_id_cap);
        p->want_id = w;
        p->want_id_cap = nid;
    }
    for (size_t id = 0; id < nid; id++) {
        const jfr_type *t = p->md->by_id[id];
        p->want_id[id] = t && p->want[t->index];
    }
    return JFR_OK;
}

/* Walk the unit's records once: validate sizes, find the metadata, index the
 * checkpoints. A live segment before any metadata is deferred (kept and
 * merged with the next one). */
static jfr_status index_unit(jfr_parser *p) {
    jfr_chunk *c = &p->chunk;
    rec r;
    bool have_meta = false;
    /* A finished chunk's header points at its metadata: no pass needed.
     * Record sizes are then checked by the passes that walk the records. */
    uint64_t mo = (uint64_t)p->info.metadata_offset;
    if (!p->live && mo >= c->first_rec && mo < c->size && read_rec(c, mo, &r) &&
        r.type == 0 && r.size > 0) {
        p->meta_pos = mo;
        have_meta = true;
    } else {
        for (uint64_t pos = c->first_rec; pos < c->size; pos += r.size) {
            if (!read_rec(c, pos, &r) || r.size == 0)
                return bad_record(p, pos);
            if (r.type == 0) {
                p->meta_pos = pos;
                have_meta = true;
            }
        }
    }
    p->md_changed = false;
    if (!have_meta && !c->md) {
        if (p->live && !p->seg_ends_chunk) {
            p->deferred = true;
            return JFR_OK;
        }
        jfr__fail(p, JFR_NO_METADATA, abs_off(p, c->first_rec), "no metadata record in the chunk");
        return JFR_NO_METADATA;
    }
    jfr_status s;
    if (have_meta && (s = load_metadata(p)))
        return s;
    c->md = p->md;
    if (!p->live) {
        jfr__pool_clear(&c->pool);
        jfr__names_clear(c->names);
        c->pbase = c->base;
        c->psize = c->size;
    }
    return JFR_OK;
}

/* The start time and duration in ticks of the event record r (0 where the
 * type has none). */
static inline void event_ticks(const jfr_chunk *c, const rec *r, const jfr_type *t,
                               int64_t *start, int64_t *duration) {
    const jfr_tinfo *inf = &c->md->tinfo[t->index];
    *start = *duration = 0;
    jfr_cur cur = {c->base + r->payload, c->base + r->pos + r->size, !c->compressed, c->base, 0};
    uint64_t v;
    if (t->nfields && inf->ops[0] == JFR_OP_LONG && !t->fields[0].array && jfr__cur_long(&cur, &v)) {
        *start = (int64_t)v;
        if (inf->has_duration && inf->ops[1] == JFR_OP_LONG && !t->fields[1].array &&
            jfr__cur_long(&cur, &v))
            *duration = (int64_t)v;
    }
}

/* Fill the event view for the event record r. */
static void make_event(jfr_parser *p, const rec *r, const jfr_type *t, jfr_event *e) {
    const jfr_chunk *c = &p->chunk;
    e->type = t;
    e->chunk_index = c->index;
    e->offset = abs_off(p, r->pos);
    e->size = r->size;
    e->chunk_ = c;
    e->pos_ = r->payload;
    event_ticks(c, r, t, &e->start_ticks, &e->duration_ticks);
    e->start_nanos = jfr__ticks_to_epoch_nanos(c, e->start_ticks);
    e->duration_nanos = jfr__ticks_to_nanos(c, e->duration_ticks);
    e->end_nanos = (int64_t)((uint64_t)e->start_nanos + (uint64_t)e->duration_nanos);
}

/* Generic handler, then per-type handlers; resumable at p->ev_stage. */
static int deliver(jfr_parser *p, const rec *r, const jfr_type *t) {
    jfr_event e;
    make_event(p, r, t, &e);
    uint32_t first = p->tsub_start[t->index], last = p->tsub_start[t->index + 1];
    uint32_t nstage = 1 + (last - first);
    while (p->ev_stage < nstage) {
        uint32_t st = p->ev_stage++;
        jfr__arena_reset(&p->scratch);
        int rc = JFR_CB_CONTINUE;
        if (st == 0) {
            if (p->cb.on_event)
                rc = p->cb.on_event(p, &e, p->user);
        } else {
            const jfr_sub *s = &p->subs[p->tsub_list[first + st - 1]];
            rc = s->cb(p, &e, s->user);
        }
        if (rc != JFR_CB_CONTINUE)
            return rc;
    }
    return JFR_CB_CONTINUE;
}

static int cmp_ord(const void *a, const void *b) {
    const jfr_ord *x = a, *y = b;
    if (x->end != y->end)
        return x->end < y->end ? -1 : 1;
    return x->pos < y->pos ? -1 : x->pos > y->pos; /* file order: stable */
}

enum { ORD_BITS = 11, ORD_RADIX = 1 << ORD_BITS };

static inline uint64_t ord_key(const jfr_ord *o) {
    return (uint64_t)o->end ^ (1ull << 63); /* unsigned, in the ends' signed order */
}

/* The radix digit of o's key above lo at bit `shift`. */
static inline size_t ord_digit(const jfr_ord *o, uint64_t lo, unsigned shift) {
    return (size_t)((ord_key(o) - lo) >> shift) & (ORD_RADIX - 1);
}

/* p->ord by end time, in cmp_ord's order. The list is in file order, so a
 * stable sort by end alone keeps ties in file order: LSD radix sort on the
 * bits where the ends differ, 11 at a time, through a buffer of the same
 * size (qsort when it cannot be had). A few passes over the list instead of
 * n log n comparisons: every --jobs worker sorts every chunk's list. */
static void sort_ord(jfr_parser *p) {
    size_t n = p->nord;
    jfr_ord *a = p->ord;
    uint64_t lo = UINT64_MAX, hi = 0, prev = 0;
    bool sorted = true;
    for (size_t i = 0; i < n; i++) {
        uint64_t k = ord_key(&a[i]);
        sorted &= k >= prev;
        prev = k;
        lo = k < lo ? k : lo;
        hi = k > hi ? k : hi;
    }
    if (sorted)
        return;
    jfr_ord *b = jfr__alloc(&p->opt.allocator, n * sizeof *b);
    if (!b) {
        qsort(a, n, sizeof *a, cmp_ord);
        return;
    }
    unsigned bits = 64 - (unsigned)__builtin_clzll(hi - lo); /* hi > lo: not sorted */
    for (unsigned shift = 0; shift < bits; shift += ORD_BITS) {
        size_t count[ORD_RADIX] = {0};
        for (size_t i = 0; i < n; i++)
            count[ord_digit(&a[i], lo, shift)]++;
        size_t sum = 0;
        for (size_t d = 0; d < ORD_RADIX; d++) {
            size_t c = count[d];
            count[d] = sum;
            sum += c;
        }
        for (size_t i = 0; i < n; i++)
            b[count[ord_digit(&a[i], lo, shift)]++] = a[i];
        jfr_ord *t = a;
        a = b;
        b = t;
    }
    if (a != p->ord) {
        memcpy(p->ord, a, n * sizeof *a);
        b = a;
    }
    jfr__free(&p->opt.allocator, b, n * sizeof *b);
}

/* Above this many entries an unordered unit is delivered by walking all its
 * records again instead of from the list: bounds the list's memory. */
#define JFR_MAX_LIST ((size_t)1 << 20)

static jfr_status push_ord(jfr_parser *p, int64_t end, uint64_t pos) {
    if (p->nord == p->capord) {
        size_t cap = p->capord ? p->capord * 2 : 1024;
        jfr_ord *o = jfr__realloc(&p->opt.allocator, p->ord, p->capord * sizeof *o, cap * sizeof *o);
        if (!o)
            return JFR_NOMEM;
        p->ord = o;
        p->capord = cap;
    }
    p->ord[p->nord++] = (jfr_ord){end, pos};
    return JFR_OK;
}

/* One pass over the unit's records when events will be delivered: check
 * sizes, index the checkpoints' pools, and list the wanted events (sorted by
 * end time when ordered), so that delivery need not walk the other records.
 * A finished chunk whose events nobody wants (a walk, a summary) skips this.
 * A live chunk always indexes: later segments may need these pools.
 * `cancel` is NULL but on a helper thread (jfr__chunk_prepare): the serial
 * path's copy of this loop, inlined with NULL, has no check. */
static inline __attribute__((always_inline)) jfr_status scan_records(jfr_parser *p,
                                                                     atomic_bool *cancel) {
    jfr_chunk *c = &p->chunk;
    const jfr_mdtab *md = c->md;
    bool any = false;
    for (uint32_t i = 0; i < md->pub.ntypes && !any; i++)
        any = p->want[i];
    p->nord = 0;
    p->use_list = false;
    if (!any && !p->live)
        return JFR_OK;
    bool list = any && (p->opt.ordered || !p->cb.on_record);
    rec r;
    jfr_status s;
    uint32_t n = 0;
    for (uint64_t pos = c->first_rec; pos < c->size; pos += r.size) {
        if (cancel && (++n & 255) == 0 && atomic_load_explicit(cancel, memory_order_relaxed))
            return JFR_STOPPED;
        if (!read_rec(c, pos, &r) || r.size == 0)
            return bad_record(p, pos);
        if (r.type == 1) {
            if ((s = jfr__pool_index_checkpoint(p, &r)))
                return s;
            continue;
        }
        if (!list || r.type < 2)
            continue;
        const jfr_type *t = jfr__md_type_by_id(md, r.type);
        if (!t || !p->want[t->index])
            continue;
        int64_t end = 0;
        if (p->opt.ordered) {
            int64_t start, duration;
            event_ticks(c, &r, t, &start, &duration);
            end = (int64_t)((uint64_t)start + (uint64_t)duration);
        } else if (p->nord >= JFR_MAX_LIST) {
            list = false;
            continue;
        }
        if ((s = push_ord(p, end, pos))) {
            jfr__fail(p, s, abs_off(p, pos), "cannot list the chunk's events");
            return s;
        }
    }
    p->use_list = list && !p->cb.on_record; /* else after the on_record pass */
    if (p->opt.ordered && p->nord > 1) /* p->ord is NULL until the first wanted event */
        sort_ord(p);
    return JFR_OK;
}

static jfr_status scan_unit(jfr_parser *p) {
    return scan_records(p, NULL);
}

/* ------------------------------------------------- parallel preparation */

/* On a helper thread (parallel.c), on the worker parser w (its own chunk
 * state, and copies of the callbacks and subscriptions as they were when
 * the chunk was queued; nothing is called back): the serial steps that
 * precede the chunk's first record callback. */
jfr_status jfr__chunk_prepare(jfr_parser *w, atomic_bool *cancel) {
    jfr_status s = index_unit(w);
    if (!s)
        s = map_subscriptions(w);
    if (!s)
        s = scan_records(w, cancel);
    return s;
}

/* On the calling thread, instead of index_unit: take over the metadata and
 * pools prepared on w, with the same outcome as load_metadata (the previous
 * chunk's table is kept when the fingerprints match). Each parser then owns
 * and frees what it holds. */
static void adopt_index(jfr_parser *p, jfr_parser *w) {
    jfr_chunk *c = &p->chunk;
    p->meta_pos = w->meta_pos;
    if (p->md && p->md->pub.fingerprint == w->md->pub.fingerprint && p->md_len == w->md_len) {
        p->md->pub.reused = true; /* same types as the previous chunk */
        p->md->pub.metadata_id = w->md->pub.metadata_id;
    } else {
        jfr_mdtab *md = p->md;
        uint64_t len = p->md_len;
        p->md = w->md;
        p->md_len = w->md_len;
        w->md = md;
        w->md_len = len;
        p->md->pub.reused = false;
    }
    p->md_changed = true;
    c->md = p->md;
    jfr_pool pool = c->pool;
    c->pool = w->chunk.pool;
    w->chunk.pool = pool;
    jfr__names_clear(c->names);
    c->pbase = c->base;
    c->psize = c->size;
}

/* On the calling thread, instead of scan_unit (after map_subscriptions):
 * w's list is the one scan_unit would make when the same types are wanted.
 * Otherwise (on_chunk_begin or on_metadata subscribed to more types) the
 * pools are indexed again by scan_unit. */
static jfr_status adopt_scan(jfr_parser *p, jfr_parser *w) {
    uint32_t nt = p->chunk.md->pub.ntypes; /* w's table has the same types */
    if (memcmp(p->want, w->want, nt) != 0) {
        jfr__pool_clear(&p->chunk.pool);
        return scan_unit(p);
    }
    jfr_ord *ord = p->ord;
    size_t cap = p->capord;
    p->ord = w->ord;
    p->capord = w->capord;
    p->nord = w->nord;
    w->ord = ord;
    w->capord = cap;
    w->nord = 0;
    p->use_list = w->use_list;
    return JFR_OK;
}


/* PH_RECORDS from the list: the wanted events only (ordered or not). */
static jfr_status deliver_listed(jfr_parser *p) {
    jfr_chunk *c = &p->chunk;
    int rc;
    while (p->ord_i < p->nord) {
        /* jfr_parser_skip_events: no view, no callback (ev_stage > 0: the
         * handlers of a paused event are still to run) */
        if (p->skip_ev && p->ev_stage == 0) {
            size_t left = p->nord - p->ord_i;
            size_t k = p->skip_ev < left ? (size_t)p->skip_ev : left;
            p->ord_i += k;
            p->skip_ev -= k;
            continue;
        }
        rec r = {0};
        read_rec(c, p->ord[p->ord_i].pos, &r); /* checked by scan_unit */
        rc = deliver(p, &r, jfr__md_type_by_id(c->md, r.type));
        if (rc != JFR_CB_CONTINUE)
            return jfr__cb_result(p, rc);
        p->ord_i++;
        p->ev_stage = 0;
    }
    p->phase = PH_END;
    return JFR_OK;
}

/* PH_RECORDS by walking every record: on_record for each, the wanted events
 * delivered as they come (unordered); when ordered, the events follow from
 * the list. The hot loop of a walk: state lives in locals and is saved only
 * when a callback pauses or stops. */
static jfr_status walk_records(jfr_parser *p) {
    jfr_chunk *c = &p->chunk;
    int rc;
    uint64_t pos = p->rec_pos;
    bool done = p->rec_done;
    const jfr_mdtab *md = c->md;
    jfr_record_cb on_rec = p->cb.on_record;
    const uint8_t *want = p->opt.ordered ? NULL : p->want;
    while (pos < c->size) {
        rec r;
        if (!read_rec(c, pos, &r) || r.size == 0) {
            p->rec_pos = pos;
            return bad_record(p, pos);
        }
        const jfr_type *t; /* the event type, or NULL */
        bool w;
        if (r.type < md->nby_id) {
            t = md->ev_by_id[r.type];
            w = want && p->want_id[r.type];
        } else {
            t = r.type > 1 ? jfr__md_type_by_id(md, r.type) : NULL;
            t = t && t->is_event ? t : NULL;
            w = t && want && want[t->index];
        }
        if (!done && on_rec) {
            jfr_record jr = {c->index, abs_off(p, pos), r.size, r.type, t};
            if ((rc = on_rec(p, &jr, p->user)) != JFR_CB_CONTINUE) {
                p->rec_pos = pos;
                p->rec_done = true;
                p->ev_stage = 0;
                return jfr__cb_result(p, rc);
            }
        }
        done = false;
        if (w) {
            if (p->skip_ev && p->ev_stage == 0) { /* jfr_parser_skip_events */
                p->skip_ev--;
            } else {
                p->rec_pos = pos;
                p->rec_done = true;
                if ((rc = deliver(p, &r, t)) != JFR_CB_CONTINUE)
                    return jfr__cb_result(p, rc);
                p->ev_stage = 0;
            }
        }
        pos += r.size;
    }
    p->rec_pos = pos;
    p->rec_done = false;
    p->ev_stage = 0;
    if (p->opt.ordered) /* on_record saw every record; now the events */
        p->use_list = true;
    else
        p->phase = PH_END;
    return JFR_OK;
}

jfr_status jfr__chunk_process(jfr_parser *p) {
    jfr_chunk *c = &p->chunk;
    jfr_status s;
    for (;;) {
        switch (p->phase) {
        case PH_BEGIN:
            p->phase = PH_INDEX;
            if (p->cb.on_chunk_begin &&
                (s = jfr__cb_result(p, p->cb.on_chunk_begin(p, &p->info, p->user))))
                return s;
            break;
        case PH_INDEX:
            p->deferred = false;
            if (p->prep) /* prepared on a helper thread (parallel.c) */
                adopt_index(p, p->prep);
            else if ((s = index_unit(p)))
                return s;
            if (p->deferred) {
                p->phase = PH_DONE;
                return JFR_OK;
            }
            p->phase = PH_META;
            break;
        case PH_META:
            p->phase = PH_MAP;
            if (p->md_changed && p->cb.on_metadata &&
                (s = jfr__cb_result(p, p->cb.on_metadata(p, &c->md->pub, p->user))))
                return s;
            break;
        case PH_MAP: /* after on_metadata, which may subscribe */
            if ((p->md_changed || p->subs_dirty) && (s = map_subscriptions(p))) {
                jfr__fail(p, s, abs_off(p, c->first_rec), "cannot map subscriptions");
                return s;
            }
            p->subs_dirty = false;
            if (p->prep) { /* prepared on a helper thread (parallel.c); the
                              caller releases it when the chunk is done */
                if ((s = adopt_scan(p, p->prep)))
                    return s;
            } else if (p->share && !p->live && jfr__share_adopt(p)) {
                /* prepared by another parser with the same share (share.c) */
            } else if ((s = scan_unit(p))) {
                return s;
            }
            p->rec_pos = c->first_rec;
            p->rec_done = false;
            p->ev_stage = 0;
            p->ord_i = 0;
            p->phase = PH_RECORDS;
            break;
        case PH_RECORDS:
            if ((s = p->use_list ? deliver_listed(p) : walk_records(p)))
                return s;
            break;
        case PH_END:
            p->phase = PH_DONE;
            if ((!p->live || p->seg_ends_chunk) && p->cb.on_chunk_end &&
                (s = jfr__cb_result(p, p->cb.on_chunk_end(p, &p->info, p->user))))
                return s;
            break;
        default:
            return JFR_OK;
        }
    }
}
