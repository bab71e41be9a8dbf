/* mem.h — the one allocation helper of every jfrstream library (the parser,
 * uv, conv and sink each compile lib/mem.c into their own object: nothing
 * of it is exported). Every allocation of a library goes through a
 * jfr_allocator (jfrstream.h): a zeroed one means malloc/realloc/free. An
 * object keeps the allocator it was made with and frees through it, with
 * the size it asked for. */
#ifndef JFR_MEM_H
#define JFR_MEM_H

#include "jfrstream.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* n == 0 allocates 1 byte (a unique pointer); NULL when refused. */
void *jfr__alloc(const jfr_allocator *a, size_t n);
void *jfr__calloc(const jfr_allocator *a, size_t n);
/* Grow or shrink `p` (old_n bytes) to new_n; NULL (p untouched) when refused. */
void *jfr__realloc(const jfr_allocator *a, void *p, size_t old_n, size_t new_n);
/* Free `p`, allocated with n bytes (NULL: nothing). */
void jfr__free(const jfr_allocator *a, void *p, size_t n);
/* A copy of s[0..n) with a terminating NUL (n + 1 bytes to free); of s. */
char *jfr__strndup(const jfr_allocator *a, const char *s, size_t n);
char *jfr__strdup(const jfr_allocator *a, const char *s);
/* Room for element `n` of the array *v (*cap elements of `elem` bytes):
 * doubles the capacity (first: `first`) when n >= *cap. False, *v and *cap
 * untouched, on overflow or when refused. */
bool jfr__array_reserve(const jfr_allocator *a, void **v, size_t n, size_t *cap, size_t elem,
                        size_t first);

/* Growable byte buffer. */
typedef struct jfr_buf {
    uint8_t *data;
    size_t len, cap;
} jfr_buf;
/* Ensure room for `extra` more bytes, growing geometrically up to `limit`
 * total capacity (0 = no limit): JFR_OK, JFR_LIMIT or JFR_NOMEM. */
jfr_status jfr__buf_reserve(const jfr_allocator *a, jfr_buf *b, size_t extra, size_t limit);
void jfr__buf_free(const jfr_allocator *a, jfr_buf *b);

#endif /* JFR_MEM_H */
