/* Names resolved from pooled methods and frame types, kept for the rest of
 * the chunk. A stack frame otherwise costs a chain of pool lookups (method,
 * class, symbols) each time; with this cache it costs one probe. Entries stay
 * right because a pool key keeps its first definition for the whole chunk. */
#include "internal.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

static inline size_t slot_of(const jfr_names *n, uint32_t type, uint64_t key) {
    return (size_t)XXH3_64bits_withSeed(&key, sizeof key, type) & n->mask;
}

void jfr__names_clear(jfr_names *n) {
    if (n->slots && n->count)
        memset(n->slots, 0, (n->mask + 1) * sizeof *n->slots);
    n->count = 0;
    n->pbase = NULL;
    jfr__arena_reset(&n->arena);
}

void jfr__names_free(const jfr_allocator *a, jfr_names *n) {
    if (n->slots)
        jfr__free(a, n->slots, (n->mask + 1) * sizeof *n->slots);
    jfr__arena_free(a, &n->arena);
    memset(n, 0, sizeof *n);
}

/* A live chunk's pool store can move when it grows: entries pointing into
 * the old one are dropped. */
static void check_base(jfr_names *n, const jfr_chunk *c) {
    if (n->pbase != c->pbase) {
        if (n->count)
            jfr__names_clear(n);
        n->pbase = c->pbase;
    }
}

const jfr_name_ent *jfr__names_get(jfr_names *n, const jfr_chunk *c, uint32_t type,
                                   uint64_t key) {
    check_base(n, c);
    if (!n->count)
        return NULL;
    for (size_t h = slot_of(n, type, key);; h = (h + 1) & n->mask) {
        const jfr_name_ent *e = &n->slots[h];
        if (!e->type1)
            return NULL;
        if (e->key == key && e->type1 == type + 1)
            return e;
    }
}

static jfr_status grow(const jfr_allocator *a, jfr_names *n) {
    size_t cap = n->slots ? (n->mask + 1) * 2 : 1024;
    jfr_name_ent *ns = jfr__calloc(a, cap * sizeof *ns);
    if (!ns)
        return JFR_NOMEM;
    jfr_name_ent *old = n->slots;
    size_t oldcap = old ? n->mask + 1 : 0;
    n->slots = ns;
    n->mask = cap - 1;
    for (size_t i = 0; i < oldcap; i++) {
        if (!old[i].type1)
            continue;
        size_t h = slot_of(n, old[i].type1 - 1, old[i].key);
        while (ns[h].type1)
            h = (h + 1) & n->mask;
        ns[h] = old[i];
    }
    if (old)
        jfr__free(a, old, oldcap * sizeof *old);
    return JFR_OK;
}

void jfr__names_put(jfr_names *n, const jfr_chunk *c, uint32_t type, uint64_t key,
                    const char *const str[3], const size_t len[3]) {
    const jfr_allocator *a = &n->alloc;
    check_base(n, c);
    /* bounded by the pool index: one entry per pool entry at most */
    if (n->count >= c->pool.count + 1024)
        return;
    if ((!n->slots || (n->count + 1) * 4 > (n->mask + 1) * 3) && grow(a, n))
        return; /* out of memory: stay uncached */
    jfr_name_ent e = {.key = key, .type1 = type + 1};
    uintptr_t lo = (uintptr_t)c->pbase, hi = lo + (uintptr_t)c->psize;
    for (int i = 0; i < 3; i++) {
        if (len[i] > UINT32_MAX)
            return;
        e.len[i] = (uint32_t)len[i];
        e.str[i] = str[i];
        /* strings converted into the per-callback scratch need a copy */
        uintptr_t sp = (uintptr_t)str[i];
        if (str[i] && !(sp >= lo && sp <= hi && len[i] <= hi - sp) &&
            !(e.str[i] = jfr__arena_strndup(a, &n->arena, str[i], len[i])))
            return;
    }
    size_t h = slot_of(n, type, key);
    while (n->slots[h].type1) {
        if (n->slots[h].key == key && n->slots[h].type1 == type + 1)
            return;
        h = (h + 1) & n->mask;
    }
    n->slots[h] = e;
    n->count++;
}
