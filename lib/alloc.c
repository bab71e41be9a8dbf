#include "internal.h"

#include <stdlib.h>

/* ------------------------------------------------- per-parser accounting */

/* Every byte a parser (and its parallel workers) holds goes through this
 * wrapper of the caller's allocator: jfr_options.max_memory is enforced here,
 * and jfr_parser_memory() reads it. Atomic: helper threads allocate too. */
static bool cap_take(jfr_memcap *m, size_t n) {
    uint64_t u = atomic_load_explicit(&m->used, memory_order_relaxed);
    do {
        if (n > m->limit || u > m->limit - n) {
            atomic_store_explicit(&m->hit, true, memory_order_relaxed);
            return false;
        }
    } while (!atomic_compare_exchange_weak_explicit(&m->used, &u, u + n, memory_order_relaxed,
                                                    memory_order_relaxed));
    uint64_t pk = atomic_load_explicit(&m->peak, memory_order_relaxed);
    while (u + n > pk && !atomic_compare_exchange_weak_explicit(
                             &m->peak, &pk, u + n, memory_order_relaxed, memory_order_relaxed))
        ;
    return true;
}

static void cap_give(jfr_memcap *m, size_t n) {
    atomic_fetch_sub_explicit(&m->used, n, memory_order_relaxed);
}

static void *cap_alloc(void *ctx, size_t n) {
    jfr_memcap *m = ctx;
    if (!cap_take(m, n))
        return NULL;
    void *p = jfr__alloc(&m->inner, n);
    if (!p)
        cap_give(m, n);
    return p;
}

static void *cap_realloc(void *ctx, void *p, size_t old_n, size_t new_n) {
    jfr_memcap *m = ctx;
    if (new_n > old_n && !cap_take(m, new_n - old_n))
        return NULL;
    void *q = jfr__realloc(&m->inner, p, old_n, new_n);
    if (!q && new_n > old_n)
        cap_give(m, new_n - old_n);
    else if (q && new_n < old_n)
        cap_give(m, old_n - new_n);
    return q;
}

static void cap_free(void *ctx, void *p, size_t n) {
    jfr_memcap *m = ctx;
    jfr__free(&m->inner, p, n);
    cap_give(m, n);
}

jfr_memcap *jfr__memcap_new(jfr_allocator *a, uint64_t limit) {
    jfr_memcap *m = jfr__alloc(a, sizeof *m);
    if (!m)
        return NULL;
    m->inner = *a;
    m->limit = limit ? limit : UINT64_MAX;
    atomic_init(&m->used, 0);
    atomic_init(&m->peak, 0);
    atomic_init(&m->hit, false);
    *a = (jfr_allocator){cap_alloc, cap_realloc, cap_free, m};
    return m;
}

void jfr__memcap_free(jfr_memcap *m) {
    if (m) {
        jfr_allocator inner = m->inner;
        jfr__free(&inner, m, sizeof *m);
    }
}

struct jfr_arena_block {
    jfr_arena_block *next;
    size_t cap;
    max_align_t data[];
};

void *jfr__arena_alloc(const jfr_allocator *a, jfr_arena *ar, size_t n, size_t align) {
    for (;;) {
        if (ar->cur) {
            size_t off = (ar->used + align - 1) & ~(align - 1);
            if (off <= ar->cur->cap && n <= ar->cur->cap - off) {
                ar->used = off + n;
                return (char *)ar->cur->data + off;
            }
            if (ar->cur->next) { /* reuse blocks kept by a reset */
                ar->cur = ar->cur->next;
                ar->used = 0;
                continue;
            }
        }
        size_t cap = ar->cur ? ar->cur->cap * 2 : 16384;
        if (cap < n + align)
            cap = n + align;
        if (cap > SIZE_MAX - sizeof(jfr_arena_block))
            return NULL;
        jfr_arena_block *blk = jfr__alloc(a, sizeof *blk + cap);
        if (!blk)
            return NULL;
        blk->next = NULL;
        blk->cap = cap;
        if (ar->cur)
            ar->cur->next = blk;
        else
            ar->head = blk;
        ar->cur = blk;
        ar->used = 0;
    }
}

char *jfr__arena_strndup(const jfr_allocator *a, jfr_arena *ar, const char *s, size_t n) {
    char *d = jfr__arena_alloc(a, ar, n + 1, 1);
    if (d) {
        if (n)
            memcpy(d, s, n);
        d[n] = 0;
    }
    return d;
}

void jfr__arena_free(const jfr_allocator *a, jfr_arena *ar) {
    jfr_arena_block *b = ar->head;
    while (b) {
        jfr_arena_block *n = b->next;
        jfr__free(a, b, sizeof *b + b->cap);
        b = n;
    }
    ar->head = ar->cur = NULL;
    ar->used = 0;
}
