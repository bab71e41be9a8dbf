/* A minimal JFR chunk writer for unit tests: exact control over encodings
 * (padded varints, each string encoding, uncompressed integers, record
 * order, pool cycles). Header-only; test code, not library code. */
#ifndef JFR_TEST_SYNTH_H
#define JFR_TEST_SYNTH_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct sbuf {
    uint8_t *d;
    size_t n, cap;
    bool fixed; /* uncompressed integers (header flag bit 0 clear) */
} sbuf;

static inline void sb_raw(sbuf *b, const void *p, size_t n) {
    if (n == 0)
        return;
    if (b->n + n > b->cap) {
        b->cap = (b->n + n) * 2 + 64;
        b->d = realloc(b->d, b->cap);
        if (!b->d)
            abort();
    }
    memcpy(b->d + b->n, p, n);
    b->n += n;
}
static inline void sb_u8(sbuf *b, uint8_t v) { sb_raw(b, &v, 1); }
static inline void sb_be(sbuf *b, int w, uint64_t v) {
    for (int i = w - 1; i >= 0; i--)
        sb_u8(b, (uint8_t)(v >> (8 * i)));
}
/* Minimal varint, or padded to `width` bytes (width 0: minimal). */
static inline void sb_var_w(sbuf *b, uint64_t v, int width) {
    int i = 0;
    for (;;) {
        if (i == 8) {
            sb_u8(b, (uint8_t)v);
            return;
        }
        uint8_t byte = v & 0x7f;
        v >>= 7;
        i++;
        bool more = v != 0 || (width && i < width);
        sb_u8(b, byte | (more ? 0x80 : 0));
        if (!more)
            return;
    }
}
static inline void sb_var(sbuf *b, uint64_t v) { sb_var_w(b, v, 0); }
static inline void sb_long(sbuf *b, uint64_t v) { if (b->fixed) sb_be(b, 8, v); else sb_var(b, v); }
static inline void sb_int(sbuf *b, uint32_t v) { if (b->fixed) sb_be(b, 4, v); else sb_var(b, v); }
static inline void sb_short(sbuf *b, uint16_t v) { if (b->fixed) sb_be(b, 2, v); else sb_var(b, v); }

static inline void sb_str_null(sbuf *b) { sb_u8(b, 0); }
static inline void sb_str_empty(sbuf *b) { sb_u8(b, 1); }
static inline void sb_str_pool(sbuf *b, uint64_t key) { sb_u8(b, 2); sb_long(b, key); }
static inline void sb_str_utf8(sbuf *b, const char *s) {
    sb_u8(b, 3);
    sb_int(b, (uint32_t)strlen(s));
    sb_raw(b, s, strlen(s));
}
static inline void sb_str_chars(sbuf *b, const uint16_t *u, uint32_t n) {
    sb_u8(b, 4);
    sb_int(b, n);
    for (uint32_t i = 0; i < n; i++)
        sb_short(b, u[i]);
}
static inline void sb_str_latin1(sbuf *b, const uint8_t *s, uint32_t n) {
    sb_u8(b, 5);
    sb_int(b, n);
    sb_raw(b, s, n);
}
/* ASCII string as UTF-16 chars (what Java's EventWriter writes). */
static inline void sb_str(sbuf *b, const char *s) {
    uint16_t u[256];
    uint32_t n = 0;
    while (s[n] && n < 256) {
        u[n] = (uint8_t)s[n];
        n++;
    }
    sb_str_chars(b, u, n);
}

/* Wrap `body` as a record: size (padded to size_width bytes, 0 = minimal). */
static inline void sb_record(sbuf *out, const sbuf *body, int size_width) {
    size_t w = 1;
    if (out->fixed) {
        sb_be(out, 4, body->n + 4);
    } else {
        if (size_width)
            w = (size_t)size_width;
        else
            while (1) {
                uint64_t total = body->n + w, t = total;
                size_t need = 1;
                while (t >= 0x80) { t >>= 7; need++; }
                if (need <= w) break;
                w = need;
            }
        sb_var_w(out, body->n + w, (int)w);
    }
    sb_raw(out, body->d, body->n);
}

/* ---- metadata element tree ---- */
typedef struct sel {
    const char *name;
    const char *attrs[24]; /* key, value pairs */
    int nattrs;
    struct sel *kids[256];
    int nkids;
} sel;

static inline sel *sel_new(const char *name) {
    sel *e = calloc(1, sizeof *e);
    e->name = name;
    return e;
}
static inline sel *sel_add(sel *parent, sel *kid) {
    parent->kids[parent->nkids++] = kid;
    return kid;
}
static inline void sel_attr(sel *e, const char *k, const char *v) {
    e->attrs[2 * e->nattrs] = k;
    e->attrs[2 * e->nattrs + 1] = v;
    e->nattrs++;
}
static inline void sel_free(sel *e) {
    for (int i = 0; i < e->nkids; i++)
        sel_free(e->kids[i]);
    free(e);
}

typedef struct strtab {
    const char *s[1024];
    int n;
} strtab;
static inline int strtab_idx(strtab *t, const char *s) {
    for (int i = 0; i < t->n; i++)
        if (strcmp(t->s[i], s) == 0)
            return i;
    t->s[t->n] = s;
    return t->n++;
}
static inline void sel_collect(strtab *t, const sel *e) {
    strtab_idx(t, e->name);
    for (int i = 0; i < 2 * e->nattrs; i++)
        strtab_idx(t, e->attrs[i]);
    for (int i = 0; i < e->nkids; i++)
        sel_collect(t, e->kids[i]);
}
static inline void sel_emit(sbuf *b, strtab *t, const sel *e) {
    sb_int(b, (uint32_t)strtab_idx(t, e->name));
    sb_int(b, (uint32_t)e->nattrs);
    for (int i = 0; i < 2 * e->nattrs; i++)
        sb_int(b, (uint32_t)strtab_idx(t, e->attrs[i]));
    sb_int(b, (uint32_t)e->nkids);
    for (int i = 0; i < e->nkids; i++)
        sel_emit(b, t, e->kids[i]);
}

/* A metadata record body (without size). */
static inline void sb_metadata(sbuf *out, const sel *root, uint64_t id) {
    sbuf b = {.fixed = out->fixed};
    strtab t = {.n = 0};
    sel_collect(&t, root);
    sb_long(&b, 0); /* type id: metadata */
    sb_long(&b, 1000);
    sb_long(&b, 0);
    sb_long(&b, id);
    sb_int(&b, (uint32_t)t.n);
    for (int i = 0; i < t.n; i++)
        sb_str_utf8(&b, t.s[i]);
    sel_emit(&b, &t, root);
    sb_record(out, &b, out->fixed ? 0 : 4);
    free(b.d);
}

/* class element helper */
static inline sel *sel_class(sel *meta, const char *name, const char *id, const char *super) {
    sel *c = sel_add(meta, sel_new("class"));
    sel_attr(c, "name", name);
    sel_attr(c, "id", id);
    if (super)
        sel_attr(c, "superType", super);
    return c;
}
static inline sel *sel_field(sel *cls, const char *name, const char *type_id, bool pool, bool array) {
    sel *f = sel_add(cls, sel_new("field"));
    sel_attr(f, "name", name);
    sel_attr(f, "class", type_id);
    if (pool)
        sel_attr(f, "constantPool", "true");
    if (array)
        sel_attr(f, "dimension", "1");
    return f;
}
static inline void sel_annot(sel *on, const char *type_id, const char *value) {
    sel *a = sel_add(on, sel_new("annotation"));
    sel_attr(a, "class", type_id);
    if (value)
        sel_attr(a, "value", value);
}

/* Chunk: header + records (already encoded in `body`). */
static inline void sb_chunk(sbuf *out, const sbuf *body, int64_t start_nanos, int64_t start_ticks,
                     int64_t tps) {
    sb_raw(out, "FLR\0", 4);
    sb_be(out, 2, 2);
    sb_be(out, 2, 1);
    sb_be(out, 8, 68 + body->n);
    sb_be(out, 8, 0); /* cp offset: unused by a sequential reader */
    sb_be(out, 8, 0);
    sb_be(out, 8, (uint64_t)start_nanos);
    sb_be(out, 8, 1000000);
    sb_be(out, 8, (uint64_t)start_ticks);
    sb_be(out, 8, (uint64_t)tps);
    sb_u8(out, 0);
    sb_u8(out, 0);
    sb_be(out, 2, body->fixed ? 0 : 1);
    sb_raw(out, body->d, body->n);
}

#endif
