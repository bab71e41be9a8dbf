/* Names resolved from pooled methods and frame types, and whole stack traces
 * as lists of resolved frames, kept for the rest of the chunk. A stack frame
 * otherwise costs a chain of pool lookups (method, class, symbols) each
 * time. Entries stay right because a pool key keeps its first definition for
 * the whole chunk. */
#include "internal.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

/* Frame-cache entries allowed per chunk (16 bytes each: 32 MiB). Beyond,
 * stacks are decoded on each read. */
#define JFR_MAX_CACHED_FRAMES ((size_t)2 << 20)

static inline size_t hash_of(uint32_t type, uint64_t key, size_t mask) {
    return (size_t)XXH3_64bits_withSeed(&key, sizeof key, type) & mask;
}

void jfr__names_clear_values(jfr_names *n) {
    if (n->oslots && n->nobjs)
        memset(n->oslots, 0, (n->omask + 1) * sizeof *n->oslots);
    n->nobjs = n->nvals = 0;
    n->no_objs = false;
}

void jfr__names_clear(jfr_names *n) {
    jfr__names_clear_values(n);
    if (n->slots && n->count)
        memset(n->slots, 0, (n->mask + 1) * sizeof *n->slots);
    if (n->sslots && n->nstacks)
        memset(n->sslots, 0, (n->smask + 1) * sizeof *n->sslots);
    n->count = n->nstacks = n->nframes = 0;
    n->no_stacks = false;
    n->pbase = NULL;
    jfr__arena_reset(&n->arena);
}

void jfr__names_free(const jfr_allocator *a, jfr_names *n) {
    jfr__free(a, n->slots, n->slots ? (n->mask + 1) * sizeof *n->slots : 0);
    jfr__free(a, n->ents, n->capents * sizeof *n->ents);
    jfr__free(a, n->sslots, n->sslots ? (n->smask + 1) * sizeof *n->sslots : 0);
    jfr__free(a, n->stacks, n->capstacks * sizeof *n->stacks);
    jfr__free(a, n->frames, n->capframes * sizeof *n->frames);
    jfr__free(a, n->oslots, n->oslots ? (n->omask + 1) * sizeof *n->oslots : 0);
    jfr__free(a, n->vals, n->capvals * sizeof *n->vals);
    jfr__arena_free(a, &n->arena);
    memset(n, 0, sizeof *n);
}

/* A live chunk's pool store can move when it grows: entries pointing into
 * the old one are dropped. */
static void check_base(jfr_names *n, const jfr_chunk *c) {
    if (n->pbase != c->pbase) {
        if (n->count || n->nstacks || n->no_stacks || n->nobjs || n->no_objs)
            jfr__names_clear(n);
        n->pbase = c->pbase;
    }
}

/* Open-addressing index over entries that carry (type, key): slots hold
 * entry index + 1. */
static uint32_t *find_slot(uint32_t *slots, size_t mask, const void *ents, size_t stride,
                           uint32_t type, uint64_t key) {
    for (size_t h = hash_of(type, key, mask);; h = (h + 1) & mask) {
        uint32_t v = slots[h];
        if (!v)
            return &slots[h];
        const jfr_keyed *e = (const void *)((const char *)ents + (size_t)(v - 1) * stride);
        if (e->key == key && e->type == type)
            return &slots[h];
    }
}

static bool grow_index(const jfr_allocator *a, uint32_t **slots, size_t *mask, size_t count,
                       const void *ents, size_t stride) {
    if (*slots && (count + 1) * 4 <= (*mask + 1) * 3)
        return true;
    size_t cap = *slots ? (*mask + 1) * 2 : 1024;
    uint32_t *ns = jfr__calloc(a, cap * sizeof *ns);
    if (!ns)
        return false;
    for (size_t i = 0; i < count; i++) {
        const jfr_keyed *e = (const void *)((const char *)ents + i * stride);
        *find_slot(ns, cap - 1, ents, stride, e->type, e->key) = (uint32_t)i + 1;
    }
    jfr__free(a, *slots, *slots ? (*mask + 1) * sizeof **slots : 0);
    *slots = ns;
    *mask = cap - 1;
    return true;
}

/* The array arr (capacity *cap elements of `elem` bytes) with room for
 * `need`, grown by doubling from `first`: arr itself or its new place, or
 * NULL when memory runs out (arr is then unchanged). */
static void *grow_array(const jfr_allocator *a, void *arr, size_t *cap, size_t need, size_t elem,
                        size_t first) {
    if (need <= *cap)
        return arr;
    size_t c = *cap ? *cap * 2 : first;
    while (c < need)
        c *= 2;
    void *na = jfr__realloc(a, arr, *cap * elem, c * elem);
    if (na)
        *cap = c;
    return na;
}

const char *jfr__names_keep(jfr_names *n, const jfr_chunk *c, const char *s, size_t len) {
    uintptr_t lo = (uintptr_t)c->pbase, hi = lo + (uintptr_t)c->psize, sp = (uintptr_t)s;
    if (sp >= lo && sp <= hi && len <= hi - sp)
        return s;
    /* strings converted into the per-callback scratch need a copy */
    return jfr__arena_strndup(&n->alloc, &n->arena, s, len);
}

uint32_t jfr__names_get(jfr_names *n, const jfr_chunk *c, uint32_t type, uint64_t key) {
    check_base(n, c);
    if (!n->count)
        return 0;
    return *find_slot(n->slots, n->mask, n->ents, sizeof *n->ents, type, key);
}

uint32_t jfr__names_put(jfr_names *n, const jfr_chunk *c, uint32_t type, uint64_t key,
                        const char *const str[3], const size_t len[3]) {
    const jfr_allocator *a = &n->alloc;
    check_base(n, c);
    /* bounded by the pool index: one entry per pool entry at most */
    if (n->count >= c->pool.count + 1024 || n->count >= UINT32_MAX - 1)
        return 0;
    if (!grow_index(a, &n->slots, &n->mask, n->count, n->ents, sizeof *n->ents))
        return 0; /* out of memory: stay uncached */
    uint32_t *slot = find_slot(n->slots, n->mask, n->ents, sizeof *n->ents, type, key);
    if (*slot)
        return *slot;
    jfr_name_ent *ne = grow_array(a, n->ents, &n->capents, n->count + 1, sizeof *ne, 256);
    if (!ne)
        return 0;
    n->ents = ne;
    jfr_name_ent e = {.k = {key, type}};
    for (int i = 0; i < 3; i++) {
        if (len[i] > UINT32_MAX)
            return 0;
        e.len[i] = (uint32_t)len[i];
        e.str[i] = str[i];
        if (str[i] && !(e.str[i] = jfr__names_keep(n, c, str[i], len[i])))
            return 0;
    }
    n->ents[n->count++] = e;
    return *slot = (uint32_t)n->count;
}

const jfr_stack_ent *jfr__stack_get(jfr_names *n, const jfr_chunk *c, uint32_t type,
                                    uint64_t key) {
    check_base(n, c);
    if (!n->nstacks)
        return NULL;
    uint32_t v = *find_slot(n->sslots, n->smask, n->stacks, sizeof *n->stacks, type, key);
    return v ? &n->stacks[v - 1] : NULL;
}

jfr_cached_frame *jfr__stack_reserve(jfr_names *n, const jfr_chunk *c, uint32_t nframes) {
    const jfr_allocator *a = &n->alloc;
    check_base(n, c);
    if (nframes > JFR_MAX_CACHED_FRAMES - n->nframes)
        return NULL;
    jfr_cached_frame *nf =
        grow_array(a, n->frames, &n->capframes, n->nframes + nframes, sizeof *nf, 4096);
    if (!nf)
        return NULL;
    n->frames = nf;
    return &n->frames[n->nframes];
}

uint32_t jfr__stack_commit(jfr_names *n, uint32_t type, uint64_t key, uint32_t nframes,
                           bool truncated) {
    const jfr_allocator *a = &n->alloc;
    if (n->nstacks >= UINT32_MAX - 1 ||
        !grow_index(a, &n->sslots, &n->smask, n->nstacks, n->stacks, sizeof *n->stacks))
        return 0;
    jfr_stack_ent *ns = grow_array(a, n->stacks, &n->capstacks, n->nstacks + 1, sizeof *ns, 256);
    if (!ns)
        return 0;
    n->stacks = ns;
    uint32_t *slot = find_slot(n->sslots, n->smask, n->stacks, sizeof *n->stacks, type, key);
    if (*slot)
        return n->stacks[*slot - 1].first + 1;
    uint32_t first = (uint32_t)n->nframes;
    n->stacks[n->nstacks++] = (jfr_stack_ent){{key, type}, first, nframes, truncated};
    *slot = (uint32_t)n->nstacks;
    n->nframes += nframes;
    return first + 1;
}

/* The value cache's index holds its keys in the slots: one probe reads
 * one slot, no entry array (the lookup runs at every pooled object read). */
static inline jfr_obj_slot *obj_slot(jfr_obj_slot *slots, size_t mask, uint32_t type,
                                     uint64_t pos) {
    for (size_t h = (size_t)(((pos ^ (uint64_t)type << 40) * 0x9E3779B97F4A7C15ull) >> 32) & mask;;
         h = (h + 1) & mask) {
        jfr_obj_slot *s = &slots[h];
        if (!s->first1 || (s->pos == pos && s->type == type))
            return s;
    }
}

uint32_t jfr__obj_get(jfr_names *n, const jfr_chunk *c, uint32_t type, uint64_t pos) {
    check_base(n, c);
    if (!n->nobjs || !n->max_vals)
        return 0;
    return obj_slot(n->oslots, n->omask, type, pos)->first1;
}

jfr_value *jfr__obj_reserve(jfr_names *n, const jfr_chunk *c, uint32_t nfields) {
    const jfr_allocator *a = &n->alloc;
    check_base(n, c);
    if (n->no_objs)
        return NULL;
    if (nfields > n->max_vals || n->nvals > n->max_vals - nfields) {
        n->no_objs = true;
        return NULL;
    }
    jfr_value *nv = grow_array(a, n->vals, &n->capvals, n->nvals + nfields, sizeof *nv, 1024);
    if (!nv) {
        n->no_objs = true;
        return NULL;
    }
    n->vals = nv;
    return &n->vals[n->nvals];
}

uint32_t jfr__obj_commit(jfr_names *n, uint32_t type, uint64_t pos, uint32_t nfields) {
    const jfr_allocator *a = &n->alloc;
    if (!n->oslots || (n->nobjs + 1) * 4 > (n->omask + 1) * 3) {
        size_t cap = n->oslots ? (n->omask + 1) * 2 : 1024;
        jfr_obj_slot *ns = jfr__calloc(a, cap * sizeof *ns);
        if (!ns) {
            n->no_objs = true;
            return 0;
        }
        for (size_t i = 0; n->oslots && i <= n->omask; i++)
            if (n->oslots[i].first1)
                *obj_slot(ns, cap - 1, n->oslots[i].type, n->oslots[i].pos) = n->oslots[i];
        jfr__free(a, n->oslots, n->oslots ? (n->omask + 1) * sizeof *n->oslots : 0);
        n->oslots = ns;
        n->omask = cap - 1;
    }
    jfr_obj_slot *s = obj_slot(n->oslots, n->omask, type, pos);
    if (!s->first1) {
        *s = (jfr_obj_slot){pos, type, (uint32_t)n->nvals + 1};
        n->nobjs++;
        n->nvals += nfields;
    }
    return s->first1;
}
