/*
 * profile_out.c — flame graph HTML and pprof (protobuf + gzip) output.
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#include "profile_out.h"

#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "flame_html.h" /* generated from flame.html: flame_html[] */

/* ------------------------------------------------------------ flame graph */

/* A JSON/JS string literal, safe inside <script> (no "</", no U+2028). */
static void js_string(outbuf *o, const char *s, size_t n) {
    static const char hex[] = "0123456789abcdef";
    ob_putc(o, '"');
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\') {
            ob_putc(o, '\\');
            ob_putc(o, (char)c);
        } else if (c < 0x20 || c == '<' || c == '>' || c == '&' || c == 0x7f) {
            char u[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
            ob_write(o, u, 6);
        } else if (c == 0xE2 && i + 2 < n && (unsigned char)s[i + 1] == 0x80 &&
                   ((unsigned char)s[i + 2] == 0xA8 || (unsigned char)s[i + 2] == 0xA9)) {
            ob_puts(o, (unsigned char)s[i + 2] == 0xA8 ? "\\u2028" : "\\u2029");
            i += 2;
        } else {
            ob_putc(o, (char)c);
        }
    }
    ob_putc(o, '"');
}

/* HTML text (for the title). */
static void html_text(outbuf *o, const char *s) {
    for (; *s; s++) {
        switch (*s) {
        case '<': ob_puts(o, "&lt;"); break;
        case '>': ob_puts(o, "&gt;"); break;
        case '&': ob_puts(o, "&amp;"); break;
        case '"': ob_puts(o, "&quot;"); break;
        default: ob_putc(o, *s);
        }
    }
}

/* Write the template up to `mark`; returns the rest after it. */
static const char *till(outbuf *o, const char *t, const char *mark) {
    const char *at = strstr(t, mark);
    if (!at)
        at = t + strlen(t);
    ob_write(o, t, (size_t)(at - t));
    return *at ? at + strlen(mark) : at;
}

bool prof_write_flamegraph(const prof *p, outbuf *o, const char *title) {
    const prof_mnode *m = p->mnodes;
    const char *unit, *type;
    prof_value_type(p, &type, &unit);
    const char *t = flame_html;
    t = till(o, t, "@TITLE@");
    html_text(o, title);
    t = till(o, t, "@DATA@");
    ob_puts(o, "unit:");
    js_string(o, unit, strlen(unit));
    ob_puts(o, ",\n");
    /* names: only those the merged tree uses, renumbered */
    size_t nren = p->nnames ? p->nnames : 1;
    uint32_t *ren = jfr__alloc(&p->alloc, nren * sizeof *ren);
    if (!ren)
        return false;
    memset(ren, 0xff, (size_t)p->nnames * sizeof *ren);
    uint32_t nused = 0;
    ob_puts(o, "names:[");
    for (uint32_t i = 0; i < p->nmnodes; i++) {
        uint32_t nm = m[i].name;
        if (ren[nm] != UINT32_MAX)
            continue;
        ren[nm] = nused++;
        if (nused > 1)
            ob_putc(o, ',');
        ob_putc(o, '\n');
        js_string(o, prof_name(p, nm), p->name_len[nm]);
    }
    /* nodes in pre-order: name, type, total, child count */
    ob_puts(o, "],\nnodes:[");
    uint32_t cur = 0;
    bool first = true;
    while (true) {
        uint32_t nkids = 0;
        for (uint32_t c = m[cur].first_child; c; c = m[c].next_sibling)
            nkids++;
        if (!first)
            ob_putc(o, ',');
        first = false;
        ob_putc(o, '\n');
        ob_u64(o, ren[m[cur].name]);
        ob_putc(o, ',');
        ob_u64(o, cur == 0 ? 3 : prof_mtype(&m[cur]));
        ob_putc(o, ',');
        ob_u64(o, m[cur].total);
        ob_putc(o, ',');
        ob_u64(o, nkids);
        if (m[cur].first_child) {
            cur = m[cur].first_child;
            continue;
        }
        while (cur && !m[cur].next_sibling)
            cur = m[cur].parent;
        if (!cur)
            break;
        cur = m[cur].next_sibling;
    }
    ob_puts(o, "]");
    jfr__free(&p->alloc, ren, nren * sizeof *ren);
    ob_puts(o, t);
    return true;
}

/* ------------------------------------------------------------ protobuf */

typedef struct pb {
    uint8_t *b;
    size_t len, cap;
    bool nomem;
    const jfr_allocator *a; /* the profile's */
} pb;

static void pb_raw(pb *w, const void *s, size_t n) {
    if (w->nomem)
        return;
    if (w->cap - w->len < n) {
        size_t c = w->cap ? w->cap : 4096;
        while (c - w->len < n) {
            if (c > SIZE_MAX / 2) {
                w->nomem = true;
                return;
            }
            c *= 2;
        }
        uint8_t *nb = jfr__realloc(w->a, w->b, w->cap, c);
        if (!nb) {
            w->nomem = true;
            return;
        }
        w->b = nb;
        w->cap = c;
    }
    memcpy(w->b + w->len, s, n);
    w->len += n;
}

static void pb_varint(pb *w, uint64_t v) {
    uint8_t t[10];
    size_t n = 0;
    while (v >= 0x80) {
        t[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    t[n++] = (uint8_t)v;
    pb_raw(w, t, n);
}

static void pb_uint(pb *w, uint32_t field, uint64_t v) { /* wire type 0 */
    pb_varint(w, (uint64_t)field << 3);
    pb_varint(w, v);
}

static void pb_bytes(pb *w, uint32_t field, const void *s, size_t n) { /* wire type 2 */
    pb_varint(w, (uint64_t)field << 3 | 2);
    pb_varint(w, n);
    pb_raw(w, s, n);
}

/* A sub-message built in `sub`, appended as field `field`, sub reset. */
static void pb_msg(pb *w, uint32_t field, pb *sub) {
    if (sub->nomem)
        w->nomem = true;
    pb_bytes(w, field, sub->b, sub->len);
    sub->len = 0;
}

/* profile.proto field numbers */
enum {
    P_SAMPLE_TYPE = 1, P_SAMPLE = 2, P_MAPPING = 3, P_LOCATION = 4, P_FUNCTION = 5, P_STRING = 6,
    P_TIME = 9, P_DURATION = 10, P_PERIOD_TYPE = 11, P_PERIOD = 12, P_COMMENT = 13,
    P_DEFAULT_TYPE = 14
};

/* One node of the sample tree: the exact nodes folded by location. */
typedef struct pp_node {
    uint32_t id, parent;
    uint64_t what, weight, count;
} pp_node;

/* Everything the pprof steps share: the buffers, the maps and the trees. */
typedef struct pprof_ctx {
    const prof *p;
    pb w, sub, sub2;
    prof_map locs, ptree;
    uint32_t nlocs, npn;
    /* sample tree: per exact node its id there (pn[i].id); per sample-tree
     * node its parent, location (or thread), weight and count */
    pp_node *pn;
    uint32_t *locid;
    uint64_t xbase;
    const pprof_spec *spec;
    /* our strings: their indexes after xbase (pprof_strings) */
    uint32_t s_type[PPROF_MAX_VALUES], s_unit[PPROF_MAX_VALUES];
    uint32_t s_thread, s_comment, s_mapping, s_ptype, s_punit;
} pprof_ctx;

/* The one mapping and the sample types. */
static void pprof_mapping_and_types(pprof_ctx *c) {
    pb *w = &c->w, *sub = &c->sub;
    uint64_t xbase = c->xbase;
    /* one mapping with functions: the names are final, nothing to symbolize */
    pb_uint(sub, 1, 1);
    pb_uint(sub, 5, xbase + c->s_mapping);
    pb_uint(sub, 7, 1); /* has_functions */
    pb_msg(w, P_MAPPING, sub);
    /* sample types */
    for (uint32_t i = 0; i < c->spec->nvalues; i++) {
        pb_uint(sub, 1, xbase + c->s_type[i]);
        pb_uint(sub, 2, xbase + c->s_unit[i]);
        pb_msg(w, P_SAMPLE_TYPE, sub);
    }
}

/* One Location per distinct (name, line) of the non-thread exact nodes;
 * locid[i] is exact node i's. False when out of memory. */
static bool pprof_locations(pprof_ctx *c) {
    const prof *p = c->p;
    const prof_node *n = p->nodes;
    /* samples: every exact node with events, its path leaf first */
    c->locid = jfr__calloc(&p->alloc, (p->nnodes ? p->nnodes : 1) * sizeof *c->locid);
    if (!c->locid)
        return false;
    for (uint32_t i = 1; i < p->nnodes; i++) {
        if (n[i].thread)
            continue;
        uint64_t k[4] = {n[i].name, (uint32_t)n[i].line, 0, 0};
        uint32_t id = prof_map_get(&c->locs, k);
        if (!id) {
            id = ++c->nlocs;
            if (!prof_map_put(&p->alloc, &c->locs, k, id))
                return false;
            /* Location{id, line{function_id = name + 1, line}} */
            pb_uint(&c->sub, 1, id);
            pb_uint(&c->sub, 2, 1); /* mapping 1 */
            pb_uint(&c->sub2, 1, (uint64_t)n[i].name + 1);
            if (n[i].line > 0)
                pb_uint(&c->sub2, 2, (uint64_t)n[i].line);
            pb_msg(&c->sub, 4, &c->sub2);
            pb_msg(&c->w, P_LOCATION, &c->sub);
        }
        c->locid[i] = id;
    }
    return true;
}

/* Exact nodes that differ only by frame type have the same locations:
 * fold them into one tree keyed by location ids (thread: name | 2^32),
 * summing their weights and counts. False when out of memory. */
static bool pprof_fold_tree(pprof_ctx *c) {
    const prof *p = c->p;
    const prof_node *n = p->nodes;
    pp_node *pn = c->pn = jfr__calloc(&p->alloc, (size_t)p->nnodes * sizeof *c->pn);
    if (!pn)
        return false;
    uint32_t npn = 1;
    for (uint32_t i = 1; i < p->nnodes; i++) {
        uint64_t what = n[i].thread ? (uint64_t)n[i].name | 1ull << 32 : c->locid[i];
        uint64_t k[4] = {pn[n[i].parent].id, what, 0, 0};
        uint32_t j = prof_map_get(&c->ptree, k);
        if (!j) {
            j = npn++;
            if (!prof_map_put(&p->alloc, &c->ptree, k, j))
                return false;
            pn[j].parent = pn[n[i].parent].id;
            pn[j].what = what;
        }
        pn[i].id = j;
    }
    c->npn = npn;
    for (uint32_t i = 0; i < p->nnodes; i++) {
        pn[pn[i].id].weight += n[i].self_weight;
        pn[pn[i].id].count += n[i].self_count;
    }
    return true;
}

/* One Sample per sample-tree node with events: its location ids leaf first,
 * its values, and its thread as a label. */
static void pprof_samples(pprof_ctx *c) {
    const pp_node *pn = c->pn;
    pb *w = &c->w, *sub = &c->sub, *sub2 = &c->sub2;
    for (uint32_t i = 0; i < c->npn; i++) {
        if (pn[i].count == 0)
            continue;
        uint64_t thread = 0;
        for (uint32_t j = i; j != 0; j = pn[j].parent) {
            if (pn[j].what >> 32)
                thread = (uint32_t)pn[j].what + 1ull;
            else
                pb_varint(sub2, pn[j].what);
        }
        pb_msg(sub, 1, sub2); /* packed location ids */
        for (uint32_t v = 0; v < c->spec->nvalues; v++) {
            const pprof_value *pv = &c->spec->v[v];
            uint64_t x = pv->count ? pn[i].count : pn[i].weight;
            if (pv->scale > 1)
                x = x > UINT64_MAX / pv->scale ? UINT64_MAX : x * pv->scale;
            pb_varint(sub2, x);
        }
        pb_msg(sub, 2, sub2); /* packed values */
        if (thread) {
            pb_uint(sub2, 1, c->xbase + c->s_thread);
            pb_uint(sub2, 2, thread);
            pb_msg(sub, 3, sub2);
        }
        pb_msg(w, P_SAMPLE, sub);
    }
}

/* The functions, the string table (names, then `extra`) and the profile's
 * scalar fields. */
static void pprof_functions_strings_fields(pprof_ctx *c, const char *const *extra,
                                           size_t nextra) {
    const prof *p = c->p;
    pb *w = &c->w, *sub = &c->sub;
    /* functions: one per name (name 0, "all", is unused but harmless) */
    for (uint32_t i = 1; i < p->nnames; i++) {
        pb_uint(sub, 1, (uint64_t)i + 1);
        pb_uint(sub, 2, (uint64_t)i + 1);
        pb_uint(sub, 3, (uint64_t)i + 1);
        pb_msg(w, P_FUNCTION, sub);
    }
    pb_bytes(w, P_STRING, "", 0);
    for (uint32_t i = 0; i < p->nnames; i++)
        pb_bytes(w, P_STRING, prof_name(p, i), p->name_len[i]);
    for (size_t i = 0; i < nextra; i++)
        pb_bytes(w, P_STRING, extra[i], strlen(extra[i]));
    const pprof_spec *sp = c->spec;
    if (sp->time_nanos > 0) {
        pb_uint(w, P_TIME, (uint64_t)sp->time_nanos);
        if (sp->duration_nanos > 0)
            pb_uint(w, P_DURATION, (uint64_t)sp->duration_nanos);
    } else if (p->start_nanos != INT64_MAX) {
        pb_uint(w, P_TIME, (uint64_t)p->start_nanos);
        if (p->end_nanos > p->start_nanos)
            pb_uint(w, P_DURATION, (uint64_t)(p->end_nanos - p->start_nanos));
    }
    if (sp->period_type) {
        pb_uint(sub, 1, c->xbase + c->s_ptype);
        pb_uint(sub, 2, c->xbase + c->s_punit);
        pb_msg(w, P_PERIOD_TYPE, sub);
        if (sp->period > 0)
            pb_uint(w, P_PERIOD, (uint64_t)sp->period);
    }
    pb_uint(w, P_COMMENT, c->xbase + c->s_comment);
    pb_uint(w, P_DEFAULT_TYPE, c->xbase + c->s_type[0]);
}

/* zlib's memory through the profile's allocator: zfree has no size, so
 * each block carries it in a 16-byte header (keeping malloc's alignment). */
#define ZHEAD 16
static voidpf z_alloc(voidpf opaque, uInt items, uInt size) {
    if (size && items > (SIZE_MAX - ZHEAD) / size)
        return Z_NULL;
    size_t n = (size_t)items * size + ZHEAD;
    unsigned char *q = jfr__alloc(opaque, n);
    if (!q)
        return Z_NULL;
    memcpy(q, &n, sizeof n);
    return q + ZHEAD;
}

static void z_free(voidpf opaque, voidpf p) {
    if (!p)
        return;
    unsigned char *q = (unsigned char *)p - ZHEAD;
    size_t n;
    memcpy(&n, q, sizeof n);
    jfr__free(opaque, q, n);
}

/* The encoded profile gzipped (windowBits 15 + 16) in one call into `o`;
 * false on failure, with nothing written. */
static bool pprof_gzip(const pb *w, outbuf *o) {
    bool ok = false;
    z_stream z;
    memset(&z, 0, sizeof z);
    z.zalloc = z_alloc;
    z.zfree = z_free;
    z.opaque = (voidpf)(uintptr_t)w->a;
    if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        return false;
    uLong bound = deflateBound(&z, (uLong)w->len);
    uint8_t *gz = jfr__alloc(w->a, bound);
    if (!gz) {
        deflateEnd(&z);
        return false;
    }
    z.next_in = w->b;
    z.avail_in = (uInt)w->len;
    z.next_out = gz;
    z.avail_out = (uInt)bound;
    int zr = deflate(&z, Z_FINISH);
    size_t gzlen = bound - z.avail_out;
    deflateEnd(&z);
    if (zr == Z_STREAM_END) {
        ob_write(o, (const char *)gz, gzlen);
        ok = true;
    }
    jfr__free(w->a, gz, bound);
    return ok;
}

/* Write the profile with the sample types of `spec`, our strings `extra`
 * (indexes set in c->s_*). */
static bool pprof_write(pprof_ctx *c, outbuf *o, const char *const *extra, size_t nextra) {
    const prof *p = c->p;
    bool ok = false;
    const jfr_allocator *a = &p->alloc;
    c->w.a = c->sub.a = c->sub2.a = a;
    c->xbase = (uint64_t)p->nnames + 1;
    pprof_mapping_and_types(c);
    if (!pprof_locations(c) || !pprof_fold_tree(c))
        goto out;
    pprof_samples(c);
    pprof_functions_strings_fields(c, extra, nextra);
    if (c->w.nomem || c->sub.nomem || c->sub2.nomem || c->w.len > (size_t)UINT32_MAX / 2)
        goto out; /* (one deflate call takes at most 4 GiB) */
    ok = pprof_gzip(&c->w, o);
out:
    jfr__free(a, c->locid, (p->nnodes ? p->nnodes : 1) * sizeof *c->locid);
    jfr__free(a, c->pn, (size_t)p->nnodes * sizeof *c->pn);
    prof_map_free(a, &c->locs);
    prof_map_free(a, &c->ptree);
    jfr__free(a, c->w.b, c->w.cap);
    jfr__free(a, c->sub.b, c->sub.cap);
    jfr__free(a, c->sub2.b, c->sub2.cap);
    return ok;
}

bool prof_write_pprof(const prof *p, outbuf *o) {
    const char *type, *unit, *type2 = NULL;
    prof_value_type(p, &type, &unit);
    if (!p->count && strcmp(unit, "bytes") == 0)
        type2 = "alloc_objects";
    else if (!p->count && strcmp(unit, "nanoseconds") == 0)
        type2 = "contentions";
    pprof_spec spec = {.nvalues = type2 ? 2 : 1,
                       .v = {{type, unit, false, 1}, {type2, "count", true, 1}}};
    /* the string table of the first versions, kept byte for byte */
    const char *extra[] = {type, unit, "count", "thread", "Produced by jfrstream",
                           type2 ? type2 : "samples", "jfr"};
    pprof_ctx c = {.p = p, .spec = &spec, .s_type = {0, 5}, .s_unit = {1, 2},
                   .s_thread = 3, .s_comment = 4, .s_mapping = 6};
    return pprof_write(&c, o, extra, sizeof extra / sizeof extra[0]);
}

bool prof_write_pprof_spec(const prof *p, outbuf *o, const pprof_spec *spec) {
    if (spec->nvalues < 1 || spec->nvalues > PPROF_MAX_VALUES)
        return false;
    const char *extra[2 * PPROF_MAX_VALUES + 5];
    size_t n = 0;
    pprof_ctx c = {.p = p, .spec = spec};
    for (uint32_t i = 0; i < spec->nvalues; i++) {
        c.s_type[i] = (uint32_t)n;
        extra[n++] = spec->v[i].type ? spec->v[i].type : "";
        c.s_unit[i] = (uint32_t)n;
        extra[n++] = spec->v[i].unit ? spec->v[i].unit : "";
    }
    c.s_thread = (uint32_t)n;
    extra[n++] = "thread";
    c.s_comment = (uint32_t)n;
    extra[n++] = "Produced by jfrstream";
    c.s_mapping = (uint32_t)n;
    extra[n++] = "jfr";
    if (spec->period_type) {
        c.s_ptype = (uint32_t)n;
        extra[n++] = spec->period_type;
        c.s_punit = (uint32_t)n;
        extra[n++] = spec->period_unit ? spec->period_unit : "";
    }
    return pprof_write(&c, o, extra, n);
}
