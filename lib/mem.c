/* mem.c — the allocation helper and growable buffer of every library
 * (mem.h). */
#include "mem.h"

#include <stdlib.h>
#include <string.h>

void *jfr__alloc(const jfr_allocator *a, size_t n) {
    if (n == 0)
        n = 1;
    return a->alloc_fn ? a->alloc_fn(a->ctx, n) : malloc(n);
}

void *jfr__calloc(const jfr_allocator *a, size_t n) {
    void *p = jfr__alloc(a, n);
    if (p)
        memset(p, 0, n);
    return p;
}

void *jfr__realloc(const jfr_allocator *a, void *p, size_t old_n, size_t new_n) {
    if (a->realloc_fn)
        return a->realloc_fn(a->ctx, p, old_n, new_n);
    if (!a->alloc_fn && !a->free_fn)
        return realloc(p, new_n ? new_n : 1);
    void *q = jfr__alloc(a, new_n);
    if (!q)
        return NULL;
    if (p) {
        memcpy(q, p, old_n < new_n ? old_n : new_n);
        jfr__free(a, p, old_n);
    }
    return q;
}

void jfr__free(const jfr_allocator *a, void *p, size_t n) {
    if (!p)
        return;
    if (n == 0)
        n = 1; /* as jfr__alloc asked for */
    if (a->free_fn)
        a->free_fn(a->ctx, p, n);
    else
        free(p);
}

jfr_status jfr__buf_reserve(const jfr_allocator *a, jfr_buf *b, size_t extra, size_t limit) {
    if (extra <= b->cap - b->len)
        return JFR_OK;
    size_t need = b->len + extra;
    if (need < b->len || (limit && need > limit))
        return JFR_LIMIT;
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < need)
        cap = cap > SIZE_MAX / 2 ? need : cap * 2;
    if (limit && cap > limit)
        cap = limit;
    uint8_t *d = jfr__realloc(a, b->data, b->cap, cap);
    if (!d)
        return JFR_NOMEM;
    b->data = d;
    b->cap = cap;
    return JFR_OK;
}

void jfr__buf_free(const jfr_allocator *a, jfr_buf *b) {
    jfr__free(a, b->data, b->cap);
    b->data = NULL;
    b->len = b->cap = 0;
}

char *jfr__strndup(const jfr_allocator *a, const char *s, size_t n) {
    if (n == SIZE_MAX)
        return NULL;
    char *d = jfr__alloc(a, n + 1);
    if (d) {
        if (n)
            memcpy(d, s, n);
        d[n] = '\0';
    }
    return d;
}

char *jfr__strdup(const jfr_allocator *a, const char *s) {
    return jfr__strndup(a, s, strlen(s));
}

bool jfr__array_reserve(const jfr_allocator *a, void **v, size_t n, size_t *cap, size_t elem,
                        size_t first) {
    if (n < *cap)
        return true;
    size_t c = *cap ? *cap * 2 : first;
    while (c <= n && c <= SIZE_MAX / 2)
        c *= 2;
    if (c <= n || c < *cap || elem == 0 || c > SIZE_MAX / elem)
        return false;
    void *p = jfr__realloc(a, *v, *cap * elem, c * elem);
    if (!p)
        return false;
    *v = p;
    *cap = c;
    return true;
}
