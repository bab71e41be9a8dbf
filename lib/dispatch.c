/* A unit of records — a whole chunk, or one flush segment of a live chunk —
 * is complete: find and compile its metadata, index its pools, then walk its
 * records and call back. Every phase can be paused and resumed. */
#include "internal.h"
#include "noun.h"

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
    jfr__fail(p, JFR_BAD_RECORD, abs_off(p, pos), "record size out of range (%llu %s left)",
              (unsigned long long)(p->chunk.size - pos),
              jfr__noun(p->chunk.size - pos, "byte", "bytes"));
    return JFR_BAD_RECORD;
}

/* Compile (or reuse) the metadata record at p->disp.meta_pos. */
static jfr_status load_metadata(jfr_parser *p) {
    jfr_chunk *c = &p->chunk;
    rec r = {0};
    read_rec(c, p->disp.meta_pos, &r); /* checked by index_unit */
    /* The type system proper follows startTicks, duration and metadata id. */
    jfr_cur cur = {c->base + r.payload, c->base + r.pos + r.size, !c->compressed, c->base, 0};
    uint64_t v, id = 0;
    if (!jfr__cur_long(&cur, &v) || !jfr__cur_long(&cur, &v) || !jfr__cur_long(&cur, &id)) {
        jfr__fail(p, JFR_BAD_METADATA, abs_off(p, r.pos), "metadata header truncated");
        return JFR_BAD_METADATA;
    }
    uint64_t len = (uint64_t)(cur.end - cur.p);
    uint64_t fp = XXH3_64bits(cur.p, (size_t)len);
    if (p->meta.md && p->meta.md->pub.fingerprint == fp && p->meta.md_len == len) {
        if (c->md != p->meta.md) { /* same types as the previous chunk */
            p->meta.md->pub.reused = true;
            p->disp.md_changed = true;
        }
        p->meta.md->pub.metadata_id = id;
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
        jfr__metadata_free(&p->opt.allocator, p->meta.md);
        p->meta.md = md;
        /* the value cache holds type pointers (a live chunk can bring new
         * metadata between its segments) */
        jfr__names_clear_values(&p->val.names);
        p->meta.md_len = len;
        p->disp.md_changed = true;
    }
    c->md = p->meta.md;
    return JFR_OK;
}

/* Resolve subscriptions (names) to type indexes for this chunk. */
static jfr_status map_subscriptions(jfr_parser *p) {
    const jfr_allocator *a = &p->opt.allocator;
    uint32_t nt = p->meta.md->pub.ntypes;
    if (p->sub.tcap < (size_t)nt + 1) {
        size_t cap = (size_t)nt + 1;
        uint32_t *start = jfr__alloc(a, cap * sizeof *start);
        uint8_t *want = jfr__alloc(a, cap);
        if (!start || !want) {
            jfr__free(a, start, cap * sizeof *start);
            jfr__free(a, want, cap);
            return JFR_NOMEM;
        }
        jfr__free(a, p->sub.tsub_start, p->sub.tcap * sizeof *p->sub.tsub_start);
        jfr__free(a, p->sub.want, p->sub.tcap);
        p->sub.tsub_start = start;
        p->sub.want = want;
        p->sub.tcap = cap;
    }
    memset(p->sub.tsub_start, 0, ((size_t)nt + 1) * sizeof *p->sub.tsub_start);
    /* counting sort of subscriptions by type index */
    uint32_t *tidx = NULL;
    if (p->sub.nsubs) {
        tidx = jfr__alloc(a, p->sub.nsubs * sizeof *tidx);
        if (!tidx)
            return JFR_NOMEM;
    }
    for (size_t i = 0; i < p->sub.nsubs; i++) {
        const jfr_type *t = jfr_metadata_type_named(&p->meta.md->pub, p->sub.subs[i].name);
        tidx[i] = t && t->is_event ? t->index : UINT32_MAX;
        if (tidx[i] != UINT32_MAX)
            p->sub.tsub_start[tidx[i] + 1]++;
    }
    for (uint32_t i = 0; i < nt; i++)
        p->sub.tsub_start[i + 1] += p->sub.tsub_start[i];
    uint32_t *fill = p->sub.tsub_start; /* reuse: compute positions then restore */
    for (size_t i = 0; i < p->sub.nsubs; i++)
        if (tidx[i] != UINT32_MAX)
            p->sub.tsub_list[fill[tidx[i]]++] = (uint32_t)i;
    /* fill[] advanced each start to its end; shift back */
    for (uint32_t i = nt; i > 0; i--)
        p->sub.tsub_start[i] = p->sub.tsub_start[i - 1];
    p->sub.tsub_start[0] = 0;
    for (uint32_t i = 0; i < nt; i++) {
        const jfr_type *t = p->meta.md->pub.types[i];
        p->sub.want[i] = t->is_event &&
                     (p->cb.on_event || p->sub.tsub_start[i + 1] > p->sub.tsub_start[i]);
    }
    jfr__free(a, tidx, p->sub.nsubs * sizeof *tidx);
    /* by type id too, so the record loop reads one byte per record */
    size_t nid = p->meta.md->nby_id;
    if (nid > p->sub.want_id_cap) {
        uint8_t *w = jfr__alloc(a, nid);
        if (!w)
            return JFR_NOMEM;
        jfr__free(a, p->sub.want_id, p->sub.want_id_cap);
        p->sub.want_id = w;
        p->sub.want_id_cap = nid;
    }
    for (size_t id = 0; id < nid; id++) {
        const jfr_type *t = p->meta.md->by_id[id];
        p->sub.want_id[id] = id > 1 && t && p->sub.want[t->index];
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
    if (!p->lv.live && mo >= c->first_rec && mo < c->size && read_rec(c, mo, &r) &&
        r.type == 0 && r.size > 0) {
        p->disp.meta_pos = mo;
        have_meta = true;
    } else {
        for (uint64_t pos = c->first_rec; pos < c->size; pos += r.size) {
            if (!read_rec(c, pos, &r) || r.size == 0)
                return bad_record(p, pos);
            if (r.type == 0) {
                p->disp.meta_pos = pos;
                have_meta = true;
            }
        }
    }
    p->disp.md_changed = false;
    if (!have_meta && !c->md) {
        if (p->lv.live && !p->lv.seg_ends_chunk) {
            p->disp.deferred = true;
            return JFR_OK;
        }
        jfr__fail(p, JFR_NO_METADATA, abs_off(p, c->first_rec), "no metadata record in the chunk");
        return JFR_NO_METADATA;
    }
    jfr_status s;
    if (have_meta && (s = load_metadata(p)))
        return s;
    c->md = p->meta.md;
    if (!p->lv.live) {
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

/* Generic handler, then per-type handlers; resumable at p->disp.ev_stage. */
static int deliver(jfr_parser *p, const rec *r, const jfr_type *t) {
    jfr_event e;
    make_event(p, r, t, &e);
    uint32_t first = p->sub.tsub_start[t->index], last = p->sub.tsub_start[t->index + 1];
    uint32_t nstage = 1 + (last - first);
    while (p->disp.ev_stage < nstage) {
        uint32_t st = p->disp.ev_stage++;
        jfr__arena_reset(&p->val.scratch);
        int rc = JFR_CB_CONTINUE;
        if (st == 0) {
            if (p->cb.on_event)
                rc = p->cb.on_event(p, &e, p->user);
        } else {
            const jfr_sub *s = &p->sub.subs[p->sub.tsub_list[first + st - 1]];
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

/* p->disp.ord by end time, in cmp_ord's order. The list is in file order, so a
 * stable sort by end alone keeps ties in file order: LSD radix sort on the
 * bits where the ends differ, 11 at a time, through a buffer of the same
 * size (qsort when it cannot be had). A few passes over the list instead of
 * n log n comparisons: every --jobs worker sorts every chunk's list. */
static void sort_ord(jfr_parser *p) {
    size_t n = p->disp.nord;
    jfr_ord *a = p->disp.ord;
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
    if (a != p->disp.ord) {
        memcpy(p->disp.ord, a, n * sizeof *a);
        b = a;
    }
    jfr__free(&p->opt.allocator, b, n * sizeof *b);
}

/* Above this many entries an unordered unit is delivered by walking all its
 * records again instead of from the list: bounds the list's memory. */
#define JFR_MAX_LIST ((size_t)1 << 20)

static jfr_status push_ord(jfr_parser *p, int64_t end, uint64_t pos) {
    if (p->disp.nord == p->disp.capord) {
        size_t cap = p->disp.capord ? p->disp.capord * 2 : 1024;
        jfr_ord *o = jfr__realloc(&p->opt.allocator, p->disp.ord, p->disp.capord * sizeof *o, cap * sizeof *o);
        if (!o)
            return JFR_NOMEM;
        p->disp.ord = o;
        p->disp.capord = cap;
    }
    p->disp.ord[p->disp.nord++] = (jfr_ord){end, pos};
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
        any = p->sub.want[i];
    p->disp.nord = 0;
    p->disp.use_list = false;
    if (!any && !p->lv.live)
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
        if (r.type < md->nby_id && !p->sub.want_id[r.type]) /* one byte per record */
            continue;
        const jfr_type *t = jfr__md_type_by_id(md, r.type);
        if (!t || !p->sub.want[t->index])
            continue;
        int64_t end = 0;
        if (p->opt.ordered) {
            int64_t start, duration;
            event_ticks(c, &r, t, &start, &duration);
            end = (int64_t)((uint64_t)start + (uint64_t)duration);
        } else if (p->disp.nord >= JFR_MAX_LIST) {
            list = false;
            continue;
        }
        if ((s = push_ord(p, end, pos))) {
            jfr__fail(p, s, abs_off(p, pos), "cannot list the chunk's events");
            return s;
        }
    }
    p->disp.use_list = list && !p->cb.on_record; /* else after the on_record pass */
    if (p->opt.ordered && p->disp.nord > 1) /* p->disp.ord is NULL until the first wanted event */
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
    p->disp.meta_pos = w->disp.meta_pos;
    if (p->meta.md && p->meta.md->pub.fingerprint == w->meta.md->pub.fingerprint && p->meta.md_len == w->meta.md_len) {
        p->meta.md->pub.reused = true; /* same types as the previous chunk */
        p->meta.md->pub.metadata_id = w->meta.md->pub.metadata_id;
    } else {
        jfr_mdtab *md = p->meta.md;
        uint64_t len = p->meta.md_len;
        p->meta.md = w->meta.md;
        p->meta.md_len = w->meta.md_len;
        w->meta.md = md;
        w->meta.md_len = len;
        p->meta.md->pub.reused = false;
    }
    p->disp.md_changed = true;
    c->md = p->meta.md;
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
    /* listed for other types, or not sorted when sorting is wanted now (a
     * sorted list is a valid delivery in file order) */
    if (memcmp(p->sub.want, w->sub.want, nt) != 0 || (p->opt.ordered && !w->opt.ordered)) {
        jfr__pool_clear(&p->chunk.pool);
        return scan_unit(p);
    }
    jfr_ord *ord = p->disp.ord;
    size_t cap = p->disp.capord;
    p->disp.ord = w->disp.ord;
    p->disp.capord = w->disp.capord;
    p->disp.nord = w->disp.nord;
    w->disp.ord = ord;
    w->disp.capord = cap;
    w->disp.nord = 0;
    p->disp.use_list = w->disp.use_list;
    return JFR_OK;
}


/* PH_RECORDS from the list: the wanted events only (ordered or not). */
static jfr_status deliver_listed(jfr_parser *p) {
    jfr_chunk *c = &p->chunk;
    int rc;
    while (p->disp.ord_i < p->disp.nord) {
        /* jfr_parser_skip_events: no view, no callback (ev_stage > 0: the
         * handlers of a paused event are still to run) */
        if (p->disp.skip_ev && p->disp.ev_stage == 0) {
            size_t left = p->disp.nord - p->disp.ord_i;
            size_t k = p->disp.skip_ev < left ? (size_t)p->disp.skip_ev : left;
            p->disp.ord_i += k;
            p->disp.skip_ev -= k;
            continue;
        }
        rec r = {0};
        read_rec(c, p->disp.ord[p->disp.ord_i].pos, &r); /* checked by scan_unit */
        rc = deliver(p, &r, jfr__md_type_by_id(c->md, r.type));
        if (rc != JFR_CB_CONTINUE)
            return jfr__cb_result(p, rc);
        p->disp.ord_i++;
        p->disp.ev_stage = 0;
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
    uint64_t pos = p->disp.rec_pos;
    bool done = p->disp.rec_done;
    const jfr_mdtab *md = c->md;
    jfr_record_cb on_rec = p->cb.on_record;
    const uint8_t *want = p->opt.ordered ? NULL : p->sub.want;
    while (pos < c->size) {
        rec r;
        if (!read_rec(c, pos, &r) || r.size == 0) {
            p->disp.rec_pos = pos;
            return bad_record(p, pos);
        }
        const jfr_type *t; /* the event type, or NULL */
        bool w;
        if (r.type < md->nby_id) {
            t = md->ev_by_id[r.type];
            w = want && p->sub.want_id[r.type];
        } else {
            t = r.type > 1 ? jfr__md_type_by_id(md, r.type) : NULL;
            t = t && t->is_event ? t : NULL;
            w = t && want && want[t->index];
        }
        if (!done && on_rec) {
            jfr_record jr = {c->index, abs_off(p, pos), r.size, r.type, t};
            if ((rc = on_rec(p, &jr, p->user)) != JFR_CB_CONTINUE) {
                p->disp.rec_pos = pos;
                p->disp.rec_done = true;
                p->disp.ev_stage = 0;
                return jfr__cb_result(p, rc);
            }
        }
        done = false;
        if (w) {
            if (p->disp.skip_ev && p->disp.ev_stage == 0) { /* jfr_parser_skip_events */
                p->disp.skip_ev--;
            } else {
                p->disp.rec_pos = pos;
                p->disp.rec_done = true;
                if ((rc = deliver(p, &r, t)) != JFR_CB_CONTINUE)
                    return jfr__cb_result(p, rc);
                p->disp.ev_stage = 0;
            }
        }
        pos += r.size;
    }
    p->disp.rec_pos = pos;
    p->disp.rec_done = false;
    p->disp.ev_stage = 0;
    if (p->opt.ordered) /* on_record saw every record; now the events */
        p->disp.use_list = true;
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
            p->disp.deferred = false;
            if (p->mt.prep) /* prepared on a helper thread (parallel.c) */
                adopt_index(p, p->mt.prep);
            else if ((s = index_unit(p)))
                return s;
            if (p->disp.deferred) {
                p->phase = PH_DONE;
                return JFR_OK;
            }
            p->phase = PH_META;
            break;
        case PH_META:
            p->phase = PH_MAP;
            if (p->disp.md_changed && p->cb.on_metadata &&
                (s = jfr__cb_result(p, p->cb.on_metadata(p, &c->md->pub, p->user))))
                return s;
            break;
        case PH_MAP: /* after on_metadata, which may subscribe */
            if (p->disp.ordered_next >= 0) { /* jfr_parser_set_ordered */
                p->opt.ordered = p->disp.ordered_next != 0;
                p->disp.ordered_next = -1;
            }
            if ((p->disp.md_changed || p->sub.subs_dirty) && (s = map_subscriptions(p))) {
                jfr__fail(p, s, abs_off(p, c->first_rec), "cannot map subscriptions");
                return s;
            }
            p->sub.subs_dirty = false;
            if (p->mt.prep) { /* prepared on a helper thread (parallel.c); the
                              caller releases it when the chunk is done */
                if ((s = adopt_scan(p, p->mt.prep)))
                    return s;
            } else if (p->mt.share && !p->lv.live && jfr__share_adopt(p)) {
                /* prepared by another parser with the same share (share.c) */
            } else if ((s = scan_unit(p))) {
                return s;
            }
            p->disp.rec_pos = c->first_rec;
            p->disp.rec_done = false;
            p->disp.ev_stage = 0;
            p->disp.ord_i = 0;
            p->phase = PH_RECORDS;
            break;
        case PH_RECORDS:
            if ((s = p->disp.use_list ? deliver_listed(p) : walk_records(p)))
                return s;
            break;
        case PH_END:
            p->phase = PH_DONE;
            if ((!p->lv.live || p->lv.seg_ends_chunk) && p->cb.on_chunk_end &&
                (s = jfr__cb_result(p, p->cb.on_chunk_end(p, &p->info, p->user))))
                return s;
            break;
        default:
            return JFR_OK;
        }
    }
}
