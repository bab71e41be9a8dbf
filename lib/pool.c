/* Constant pools: the checkpoint records of a unit are indexed, (type
 * index, key) -> offset of the value bytes in the chunk (or in the pool
 * store of a live chunk). Open addressing, linear probing, XXH3 of the key.
 * Values are decoded only when an event asks for them. */
#include "internal.h"
#include "skip.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

static inline size_t slot_of(const jfr_pool *pl, uint32_t type, uint64_t key) {
    return (size_t)XXH3_64bits_withSeed(&key, sizeof key, type) & pl->mask;
}

static jfr_status rehash(const jfr_allocator *a, jfr_pool *pl, size_t cap) {
    jfr_pool_slot *ns = jfr__calloc(a, cap * sizeof *ns);
    if (!ns)
        return JFR_NOMEM;
    jfr_pool old = *pl;
    pl->slots = ns;
    pl->mask = cap - 1;
    if (old.slots) {
        for (size_t i = 0; i <= old.mask; i++) {
            const jfr_pool_slot *o = &old.slots[i];
            if (!o->pos)
                continue;
            size_t h = slot_of(pl, o->type, o->key);
            while (ns[h].pos)
                h = (h + 1) & pl->mask;
            ns[h] = *o;
        }
        jfr__free(a, old.slots, (old.mask + 1) * sizeof *old.slots);
    }
    return JFR_OK;
}

static jfr_status pool_put(const jfr_allocator *a, jfr_pool *pl, uint32_t type,
                           uint64_t key, uint64_t pos) {
    if (!pl->slots || (pl->count + 1) * 4 > (pl->mask + 1) * 3) {
        size_t cap = pl->slots ? (pl->mask + 1) * 2 : 1024;
        jfr_status s = rehash(a, pl, cap);
        if (s)
            return s;
    }
    size_t h = slot_of(pl, type, key);
    for (;; h = (h + 1) & pl->mask) {
        jfr_pool_slot *sl = &pl->slots[h];
        if (!sl->pos) {
            *sl = (jfr_pool_slot){key, pos, type, 0};
            pl->count++;
            return JFR_OK;
        }
        if (sl->key == key && sl->type == type)
            return JFR_OK; /* duplicate key: the first definition wins, as in
                              the JDK (it reads checkpoints newest first and
                              lets older ones overwrite) */
    }
}

uint64_t jfr__pool_get(const jfr_pool *pl, uint32_t type, uint64_t key) {
    if (!pl->count)
        return 0;
    for (size_t h = slot_of(pl, type, key);; h = (h + 1) & pl->mask) {
        const jfr_pool_slot *sl = &pl->slots[h];
        if (!sl->pos)
            return 0;
        if (sl->key == key && sl->type == type)
            return sl->pos;
    }
}

void jfr__pool_clear(jfr_pool *pl) {
    if (pl->slots && pl->count)
        memset(pl->slots, 0, (pl->mask + 1) * sizeof *pl->slots);
    pl->count = 0;
}

void jfr__pool_free(const jfr_allocator *a, jfr_pool *pl) {
    if (pl->slots)
        jfr__free(a, pl->slots, (pl->mask + 1) * sizeof *pl->slots);
    pl->slots = NULL;
    pl->mask = 0;
    pl->count = 0;
}

/* ------------------------------------------------------ checkpoints */

/* Index a checkpoint record's pool entries: (type, key) -> value offset. A
 * live chunk's checkpoints are first copied into the pool store. */
jfr_status jfr__pool_index_checkpoint(jfr_parser *p, const jfr_rec *r) {
    jfr_chunk *c = &p->chunk;
    jfr_cur cur = {c->base + r->payload, c->base + r->pos + r->size, !c->compressed, c->base, 0};
    if (p->lv.live) {
        /* Keep the record for the rest of the chunk: segments are released. */
        jfr_buf *pb = &p->lv.poolbuf;
        jfr_status s = jfr__buf_reserve(&p->opt.allocator, pb, r->size, p->opt.max_chunk_size);
        if (s) {
            jfr__fail(p, s == JFR_LIMIT ? JFR_CHUNK_TOO_LARGE : s, jfr__abs_off(p, r->pos),
                      "constant pools of the chunk exceed the maximum chunk size");
            return p->err.status;
        }
        uint64_t at = pb->len;
        memcpy(pb->data + at, c->base + r->pos, r->size);
        pb->len += r->size;
        c->pbase = pb->data;
        c->psize = pb->len;
        cur = (jfr_cur){pb->data + at + (r->payload - r->pos), pb->data + at + r->size,
                        !c->compressed, pb->data, JFR_POOL_TAG};
    }
    const uint8_t *rstart = cur.p - (r->payload - r->pos);
#define OFF_OF(q) jfr__abs_off(p, r->pos + (uint64_t)((q) - rstart))
#define CUR_OFF() OFF_OF(cur.p)
    uint64_t v, npools;
    uint8_t b;
    bool ok = jfr__cur_long(&cur, &v) && jfr__cur_long(&cur, &v) && jfr__cur_long(&cur, &v);
    ok = ok && (c->compressed ? jfr__cur_varint(&cur, &v) : jfr__cur_u8(&cur, &b));
    const uint8_t *at_n = cur.p; /* errors point at the count or id at fault */
    if (!ok || !jfr__cur_int(&cur, &npools)) {
        jfr__fail(p, JFR_BAD_CHECKPOINT, jfr__abs_off(p, r->pos), "checkpoint header truncated");
        return JFR_BAD_CHECKPOINT;
    }
    /* counts are checked against the bytes left, so that a hostile count
     * says so instead of running into the record's end */
    if (npools > (uint64_t)(cur.end - cur.p)) {
        jfr__fail(p, JFR_BAD_CHECKPOINT, OFF_OF(at_n),
                  "%llu constant pools cannot fit in the record", (unsigned long long)npools);
        return JFR_BAD_CHECKPOINT;
    }
    for (uint32_t i = 0; i < npools; i++) {
        uint64_t tid, n;
        const uint8_t *at_tid = cur.p;
        bool ok_tid = jfr__cur_long(&cur, &tid);
        at_n = cur.p;
        if (!ok_tid || !jfr__cur_int(&cur, &n)) {
            jfr__fail(p, JFR_BAD_CHECKPOINT, CUR_OFF(),
                      "pool %u of checkpoint truncated", i);
            return JFR_BAD_CHECKPOINT;
        }
        const jfr_type *t = jfr__md_type_by_id(c->md, tid);
        if (!t) {
            jfr__fail(p, JFR_BAD_CHECKPOINT, OFF_OF(at_tid),
                      "constant pool of unknown type id %llu", (unsigned long long)tid);
            return JFR_BAD_CHECKPOINT;
        }
        if (n > (uint64_t)(cur.end - cur.p)) {
            jfr__fail(p, JFR_BAD_CHECKPOINT, OFF_OF(at_n),
                      "pool %s: %llu entries cannot fit in the record", t->name,
                      (unsigned long long)n);
            return JFR_BAD_CHECKPOINT;
        }
        uint8_t op = jfr__op_for_type(t);
        for (uint64_t k = 0; k < n; k++) {
            uint64_t key;
            if (!jfr__cur_long(&cur, &key)) {
                jfr__fail(p, JFR_BAD_CHECKPOINT, CUR_OFF(),
                          "pool %s entry %llu truncated", t->name,
                          (unsigned long long)k);
                return JFR_BAD_CHECKPOINT;
            }
            uint64_t val = jfr__cur_pos(&cur), at = CUR_OFF();
            jfr_status s = skip_one(c, &cur, t, op, 0);
            if (s) {
                jfr__fail(p, JFR_BAD_CHECKPOINT, at,
                          "pool %s entry %llu: value does not match its type", t->name,
                          (unsigned long long)k);
                return JFR_BAD_CHECKPOINT;
            }
            if ((s = pool_put(&p->opt.allocator, &c->pool, t->index, key, val))) {
                jfr__fail(p, s, at, "cannot grow the pool index");
                return s;
            }
        }
    }
    return JFR_OK;
#undef CUR_OFF
#undef OFF_OF
}
