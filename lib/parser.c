/* The parser object: options, creation, reset and release of its state,
 * accessors and subscriptions. The public jfr_parser_new, _reset and _free
 * (lifecycle.c) add the parallel helpers around these. */
#include "internal.h"

void jfr_options_init(jfr_options *o) {
    memset(o, 0, sizeof *o);
    o->size = sizeof *o;
}

void jfr_callbacks_init(jfr_callbacks *cb) {
    memset(cb, 0, sizeof *cb);
    cb->size = sizeof *cb;
}

/* The value cache's bound: at most 1/16 of max_memory, so that it never
 * crowds out the chunk buffer (it keeps its memory from chunk to chunk). */
static size_t value_cache_bound(const jfr_options *o) {
    if (o->max_memory && o->max_memory / 16 / sizeof(jfr_value) < JFR_MAX_CACHED_VALUES)
        return (size_t)(o->max_memory / 16 / sizeof(jfr_value));
    return JFR_MAX_CACHED_VALUES;
}

jfr_parser *jfr__parser_create(const jfr_options *opts, const jfr_callbacks *cb, void *user) {
    jfr_options o;
    jfr_callbacks c;
    jfr_options_init(&o);
    jfr_callbacks_init(&c);
    if ((opts && !jfr__sized_copy(&o, sizeof o, opts)) ||
        (cb && !jfr__sized_copy(&c, sizeof c, cb)))
        return NULL;
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
    p->cb = c;
    p->user = user;
    p->chunk.parser = p;
    p->val.names.alloc = p->opt.allocator;
    p->val.names.max_vals = value_cache_bound(&p->opt);
    p->chunk.names = &p->val.names;
    p->disp.ordered_next = -1;
    jfr__parser_clear(p);
    return p;
}

void jfr__parser_clear(jfr_parser *p) {
    p->state = ST_HEADER;
    p->phase = PH_DONE;
    p->in.hdr_have = 0;
    p->in.chunkbuf.len = 0;
    p->lv.segbuf.len = p->lv.poolbuf.len = 0;
    p->lv.live = p->lv.seg_ends_chunk = false;
    p->in.need = p->in.skip_left = 0;
    p->rs.rs_from = p->rs.skipped = 0;
    p->rs.cand = p->rs.chunk_failed = p->rs.rp_final = false;
    p->rs.replay.len = p->rs.rp_pos = 0;
    p->in.input_off = 0;
    p->in.delivered = 0;
    p->in.consumed = 0;
    p->tb.have_tb = false;
    p->disp.skip_ev = 0;
    if (p->disp.ordered_next >= 0)
        p->opt.ordered = p->disp.ordered_next != 0;
    p->disp.ordered_next = -1;
    p->err.status = JFR_OK;
    p->err.msg[0] = 0;
    p->err.nerrors = p->err.nchunks = 0;
    memset(&p->info, 0, sizeof p->info);
    jfr__pool_clear(&p->chunk.pool);
    jfr__names_clear(&p->val.names);
}

jfr_status jfr_parser_set_value_cache(jfr_parser *p, bool on) {
    if (!p)
        return JFR_INVALID_ARG;
    p->val.names.max_vals = on ? value_cache_bound(&p->opt) : 0;
    return JFR_OK;
}

jfr_status jfr_parser_set_ordered(jfr_parser *p, bool on) {
    if (!p)
        return JFR_INVALID_ARG;
    p->disp.ordered_next = on ? 1 : 0;
    return JFR_OK;
}

jfr_status jfr_parser_skip_events(jfr_parser *p, uint64_t n) {
    if (!p)
        return JFR_INVALID_ARG;
    p->disp.skip_ev = n;
    return JFR_OK;
}

jfr_status jfr_parser_set_threads(jfr_parser *p, unsigned threads) {
    if (!p)
        return JFR_INVALID_ARG;
    if (p->in.input_off || p->mt.par)
        return JFR_INVALID_STATE;
    p->mt.threads = threads;
    return JFR_OK;
}

void jfr__parser_destroy(jfr_parser *p) {
    const jfr_allocator a = p->opt.allocator;
    for (size_t i = 0; i < p->sub.nsubs; i++)
        jfr__free(&a, p->sub.subs[i].name, p->sub.subs[i].name_len + 1);
    jfr__free(&a, p->sub.subs, p->sub.capsubs * sizeof *p->sub.subs);
    jfr__free(&a, p->sub.tsub_list, p->sub.capsubs * sizeof *p->sub.tsub_list);
    jfr__free(&a, p->sub.tsub_start, p->sub.tcap * sizeof *p->sub.tsub_start);
    jfr__free(&a, p->sub.want, p->sub.tcap);
    jfr__free(&a, p->sub.want_id, p->sub.want_id_cap);
    jfr__free(&a, p->disp.ord, p->disp.capord * sizeof *p->disp.ord);
    jfr__buf_free(&a, &p->in.chunkbuf);
    jfr__buf_free(&a, &p->rs.replay);
    jfr__buf_free(&a, &p->lv.segbuf);
    jfr__buf_free(&a, &p->lv.poolbuf);
    jfr__pool_free(&a, &p->chunk.pool);
    jfr__names_free(&a, &p->val.names);
    jfr__metadata_free(&a, p->meta.md);
    jfr__arena_free(&a, &p->val.scratch);
    jfr_memcap *m = p->memcap;
    jfr__free(&a, p, sizeof *p);
    jfr__memcap_free(m);
}

void *jfr_parser_user(const jfr_parser *p) { return p ? p->user : NULL; }
void jfr_parser_set_user(jfr_parser *p, void *user) { if (p) p->user = user; }
jfr_status jfr_parser_status(const jfr_parser *p) { return p ? p->err.status : JFR_INVALID_ARG; }
const char *jfr_parser_error(const jfr_parser *p) {
    return !p ? "no parser" : p->err.msg[0] ? p->err.msg : jfr_status_str(p->err.status);
}
uint64_t jfr_parser_chunks(const jfr_parser *p) { return p ? p->err.nchunks : 0; }
uint64_t jfr_parser_bytes(const jfr_parser *p) { return p ? p->in.input_off : 0; }
uint64_t jfr_parser_delivered(const jfr_parser *p) { return p ? p->in.delivered : 0; }
uint64_t jfr_parser_errors(const jfr_parser *p) { return p ? p->err.nerrors : 0; }
uint64_t jfr_parser_skipped(const jfr_parser *p) { return p ? p->rs.skipped : 0; }
uint64_t jfr_parser_memory(const jfr_parser *p, uint64_t *peak) {
    if (peak)
        *peak = p ? atomic_load(&p->memcap->peak) : 0;
    return p ? atomic_load(&p->memcap->used) : 0;
}
size_t jfr_parser_consumed(const jfr_parser *p) { return p ? p->in.consumed : 0; }
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
    if (p->sub.nsubs == p->sub.capsubs) {
        /* both arrays or neither: they share capsubs (tsub_list is rebuilt
         * by the next mapping, its content need not be kept) */
        size_t cap = p->sub.capsubs ? p->sub.capsubs * 2 : 8;
        jfr_sub *s = jfr__alloc(a, cap * sizeof *s);
        uint32_t *l = jfr__alloc(a, cap * sizeof *l);
        if (!s || !l) {
            jfr__free(a, s, cap * sizeof *s);
            jfr__free(a, l, cap * sizeof *l);
            return JFR_NOMEM;
        }
        if (p->sub.nsubs)
            memcpy(s, p->sub.subs, p->sub.nsubs * sizeof *s);
        jfr__free(a, p->sub.subs, p->sub.capsubs * sizeof *p->sub.subs);
        jfr__free(a, p->sub.tsub_list, p->sub.capsubs * sizeof *p->sub.tsub_list);
        p->sub.subs = s;
        p->sub.tsub_list = l;
        p->sub.capsubs = cap;
    }
    size_t n = strlen(type_name);
    char *name = jfr__alloc(a, n + 1);
    if (!name)
        return JFR_NOMEM;
    memcpy(name, type_name, n + 1);
    p->sub.subs[p->sub.nsubs++] = (jfr_sub){name, n, cb, user};
    p->sub.subs_dirty = true;
    return JFR_OK;
}
