/* Constant-pool index: (type index, key) -> offset of the value bytes in the
 * chunk. Open addressing, linear probing, XXH3 of the key. Values are decoded
 * only when an event asks for them. */
#include "internal.h"

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

jfr_status jfr__pool_put(const jfr_allocator *a, jfr_pool *pl, uint32_t type,
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
