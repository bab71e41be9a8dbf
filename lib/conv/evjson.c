/*
 * evjson.c — one event as `jfr print --json` prints it (see evjson.h and the
 * notes at the top of cmd_print.c on what is mirrored from the JDK tool).
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#define JFRSTREAM_EXPERIMENTAL /* jfr_iter_next_raw */
#include "evjson.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --------------------------------------------------------- JSON layout */

/* What indent copies: 64 spaces (no NUL). */
static const char spaces[64] = "                                                                ";

/* The per-value steps are made twice, for JSON and for XML (`xml` a
 * constant in each), so that the JSON path tests no layout per field; they
 * and the separators are inlined into each (the compiler's budget would
 * leave the separator a call). */
#if defined(__GNUC__)
#define EVJSON_LAYOUT_INLINE __attribute__((always_inline)) static inline
#else
#define EVJSON_LAYOUT_INLINE static inline
#endif

/* One fixed-size copy up to 64 spaces deep (a call to memset per line cost
 * 2% of a print), ob_fill deeper or near the buffer's end. */
static void indent(evjson *pr) {
    if (pr->compact)
        return;
    outbuf *o = pr->o;
    size_t n = pr->indent;
    if (n <= sizeof spaces && o->cap - o->len >= sizeof spaces) {
        memcpy(o->buf + o->len, spaces, sizeof spaces);
        o->len += n;
        return;
    }
    ob_fill(o, ' ', n);
}

static void put_name(evjson *pr, const char *name) {
    indent(pr);
    ob_putc(pr->o, '"');
    jfmt_json_string(pr->o, name, strlen(name), false);
    if (pr->compact)
        ob_write(pr->o, "\":", 2);
    else
        ob_write(pr->o, "\": ", 3);
}

/* Between the elements of an array. */
static void comma(evjson *pr) {
    if (pr->compact)
        ob_putc(pr->o, ',');
    else
        ob_write(pr->o, ", ", 2);
}

/* The JDK writer's printNewDataStructure. */
EVJSON_LAYOUT_INLINE void separator(evjson *pr, bool first, bool array_element, const char *name) {
    if (!first) {
        comma(pr);
        if (!array_element && !pr->compact)
            ob_putc(pr->o, '\n');
    }
    if (!array_element)
        put_name(pr, name);
}

static void object_begin(evjson *pr) {
    if (pr->compact) {
        ob_putc(pr->o, '{');
        return;
    }
    ob_write(pr->o, "{\n", 2);
    pr->indent += 2;
}

static void object_end(evjson *pr) {
    if (pr->compact) {
        ob_putc(pr->o, '}');
        return;
    }
    pr->indent -= 2;
    ob_putc(pr->o, '\n');
    indent(pr);
    ob_putc(pr->o, '}');
}

static void xml_nil(evjson *pr);
static void put_null(evjson *pr) {
    if (pr->xml)
        xml_nil(pr);
    else
        ob_write(pr->o, "null", 4);
}

static void put_quoted(evjson *pr, const char *s, size_t n) {
    ob_putc(pr->o, '"');
    ob_write(pr->o, s, n); /* our own ASCII formats: nothing to escape */
    ob_putc(pr->o, '"');
}

/* ---------------------------------------------------------------- XML */

/* XMLWriter's elements: what a value is comes from its field (an array
 * field, a struct type, else a value), not from the value itself. */
enum { XK_VALUE, XK_STRUCT, XK_ARRAY };
static const char *const xk_names[] = {"value", "struct", "array"};
static const uint8_t xk_lens[] = {5, 6, 5};

/* The element the next value is written as (the XML for separator()). */
static void xml_pending(evjson *pr, uint8_t kind, const char *name, uint32_t index) {
    pr->xkind = kind;
    pr->xname = name;
    pr->xindex = index;
}

/* `<kind name="..."` or `<kind index="N"`, left open for attributes. */
static void xml_start(evjson *pr) {
    indent(pr);
    ob_putc(pr->o, '<');
    ob_write(pr->o, xk_names[pr->xkind], xk_lens[pr->xkind]);
    if (pr->xname) {
        ob_write(pr->o, " name=\"", 7);
        jfmt_xml_string(pr->o, pr->xname, strlen(pr->xname), false);
    } else {
        ob_write(pr->o, " index=\"", 8);
        ob_u64(pr->o, pr->xindex);
    }
    ob_putc(pr->o, '"');
    pr->xopen = true;
}

/* The '>' of the start tag being written. */
static void xml_tag_end(evjson *pr) {
    ob_putc(pr->o, '>');
    pr->xopen = false;
}

/* A <value> element around text the caller writes between the two. */
static void xml_value_open(evjson *pr) {
    xml_start(pr);
    xml_tag_end(pr);
}

static void xml_value_close(evjson *pr) { ob_write(pr->o, "</value>\n", 9); }

static void xml_nil(evjson *pr) {
    if (!pr->xopen)
        xml_start(pr);
    ob_write(pr->o, " xsi:nil=\"true\"/>\n", 18);
    pr->xopen = false;
}

/* A <value> element with text that needs no escaping (our own formats). */
static void xml_text(evjson *pr, const char *s, size_t n) {
    xml_value_open(pr);
    ob_write(pr->o, s, n);
    xml_value_close(pr);
}

/* ------------------------------------------------------------- values */

static bool is_struct_type(const jfr_type *t) {
    return t && t->base == JFR_BASE_STRUCT && !t->simple && t->nfields > 0;
}

static bool is_frame_type(evjson *pr, const jfr_type *t) {
    if (!t)
        return false;
    for (uint32_t i = 0; i < pr->ft_n; i++)
        if (pr->ft_type[i] == t)
            return pr->ft_is[i];
    bool is = strcmp(t->name, "jdk.types.StackFrame") == 0 ||
              strcmp(t->name, "com.oracle.jfr.types.StackFrame") == 0;
    uint32_t i = pr->ft_n < 4 ? pr->ft_n++ : 3; /* more array types: the last slot turns */
    pr->ft_type[i] = t;
    pr->ft_is[i] = is;
    return is;
}

static void note_error(evjson *pr, jfr_status s) {
    pr->cache.nerr++; /* open captures compare: their JSON is not kept */
    if (!pr->decode_error)
        pr->decode_error = s;
}

/* The printer iterates: an object or array being printed is a frame on
 * pr->frames (grown on demand, kept across events), so the depth of the
 * data costs no C stack. Opening a value pushes its frame and writes its
 * opening bracket; run() then prints its members one at a time and closes
 * it when done. A function that opens a value does nothing after it. */
enum { FR_FIELDS, FR_ARRAY, FR_PLAIN_ARRAY };

/* Room for one more frame, or false (null printed, the event reports
 * JFR_LIMIT at the nesting limit, JFR_NOMEM without memory). The event's
 * own fields are frame 0, not counted. */
static evjson_frame *frame_push(evjson *pr, uint8_t kind, const jfr_value *v) {
    if (pr->nframes > EVJSON_MAX_NEST || pr->nopened >= EVJSON_MAX_OBJECTS) {
        if (!pr->decode_error)
            pr->too_many = pr->nopened >= EVJSON_MAX_OBJECTS;
        note_error(pr, JFR_LIMIT);
        put_null(pr);
        return NULL;
    }
    pr->nopened++;
    if (pr->nframes == pr->capframes) {
        size_t cap = pr->capframes ? pr->capframes * 2 : 16;
        void *nf = jfr__realloc(&pr->alloc, pr->frames, pr->capframes * sizeof *pr->frames,
                                cap * sizeof *pr->frames);
        if (!nf) {
            note_error(pr, JFR_NOMEM);
            put_null(pr);
            return NULL;
        }
        pr->frames = nf;
        pr->capframes = cap;
    }
    evjson_frame *fr = &pr->frames[pr->nframes++];
    memset(fr, 0, sizeof *fr);
    fr->kind = kind;
    jfr_iter_init(&fr->it, v);
    return fr;
}

/* The frame of the pooled object v if it is open on the current print
 * path, else -1. A linear scan: paths are short (a few hundred frames for
 * the deepest real chains). */
static ptrdiff_t path_index(const evjson *pr, const jfr_value *v) {
    for (size_t i = 0; i < pr->nframes; i++) {
        const jfr_value *o = &pr->frames[i].it.parent;
        if (pr->frames[i].kind == FR_FIELDS && o->pooled && o->key == v->key &&
            o->type == v->type)
            return (ptrdiff_t)i;
    }
    return -1;
}

/* ------------------------------------------------- pooled objects' JSON */

/* Can the cache allocate `add` bytes more? */
static bool cache_room(const evjson_cache *ca, size_t add) {
    return add <= ca->limit && ca->held <= ca->limit - add;
}

/* The cache's allocations, counted in `held`. */
static void *cache_alloc(evjson_cache *ca, size_t n, bool zero) {
    if (!cache_room(ca, n))
        return NULL;
    void *p = zero ? jfr__calloc(&ca->alloc, n) : jfr__alloc(&ca->alloc, n);
    if (p)
        ca->held += n;
    return p;
}

static void cache_release(evjson_cache *ca, void *p, size_t n) {
    if (p)
        ca->held -= n;
    jfr__free(&ca->alloc, p, n);
}

static void *cache_grow(evjson_cache *ca, void *p, size_t old_n, size_t new_n) {
    if (!cache_room(ca, new_n - old_n))
        return NULL;
    void *np = jfr__realloc(&ca->alloc, p, old_n, new_n);
    if (np)
        ca->held += new_n - old_n;
    return np;
}

static uint8_t hbit_of(const jfr_type *t, uint64_t key) {
    uint64_t h = key * 0x9E3779B97F4A7C15ull ^ (uint64_t)(uintptr_t)t * 0xC2B2AE3D27D4EB4Full;
    return (uint8_t)(h >> 56);
}

static void reach_add(uint64_t r[4], uint8_t b) { r[b >> 6] |= 1ull << (b & 63); }
static bool reach_has(const uint64_t r[4], uint8_t b) { return (r[b >> 6] >> (b & 63)) & 1; }
static void reach_or(uint64_t r[4], const uint64_t o[4]) {
    for (int i = 0; i < 4; i++)
        r[i] |= o[i];
}

static size_t cache_hash(const jfr_type *t, uint64_t key, uint32_t depth, uint32_t indent) {
    uint64_t h = key * 0x9E3779B97F4A7C15ull ^ ((uint64_t)(uintptr_t)t >> 4) * 0xC2B2AE3D27D4EB4Full ^
                 ((uint64_t)depth << 32 | indent) * 0x165667B19E3779F9ull;
    return (size_t)(h ^ h >> 29);
}

static uint32_t *cache_slot(const evjson_cache *ca, const jfr_type *t, uint64_t key,
                            uint32_t depth, uint32_t indent) {
    for (size_t h = cache_hash(t, key, depth, indent) & ca->mask;; h = (h + 1) & ca->mask) {
        uint32_t v = ca->slots[h];
        if (!v)
            return &ca->slots[h];
        const evjson_cent *e = &ca->ents[v - 1];
        if (e->key == key && e->type == t && e->depth == depth && e->indent == indent)
            return &ca->slots[h];
    }
}

/* Was the object of hash h met before in this chunk? Remembers it. */
static bool seen_before(evjson_cache *ca, size_t h) {
    uint64_t f = (uint64_t)h | 1;
    if (!ca->seen || (ca->nseen + 1) * 4 > (ca->smask + 1) * 3) {
        size_t n = ca->seen ? (ca->smask + 1) * 2 : 4096;
        uint64_t *ns;
        if (n * sizeof *ns > ca->limit / 5 || !(ns = cache_alloc(ca, n * sizeof *ns, true)))
            return true; /* full: capture everything */
        for (size_t i = 0; ca->seen && i <= ca->smask; i++) {
            if (!ca->seen[i])
                continue;
            size_t j = (size_t)(ca->seen[i] >> 7) & (n - 1);
            while (ns[j])
                j = (j + 1) & (n - 1);
            ns[j] = ca->seen[i];
        }
        cache_release(ca, ca->seen, ca->seen ? (ca->smask + 1) * sizeof *ca->seen : 0);
        ca->seen = ns;
        ca->smask = n - 1;
    }
    for (size_t j = (size_t)(f >> 7) & ca->smask;; j = (j + 1) & ca->smask) {
        if (ca->seen[j] == f)
            return true;
        if (!ca->seen[j]) {
            ca->seen[j] = f;
            ca->nseen++;
            return false;
        }
    }
}

static void cache_clear(evjson_cache *ca) {
    if (ca->seen && ca->nseen)
        memset(ca->seen, 0, (ca->smask + 1) * sizeof *ca->seen);
    ca->nseen = 0;
    if (ca->slots && ca->nents)
        memset(ca->slots, 0, (ca->mask + 1) * sizeof *ca->slots);
    ca->nents = 0;
    ca->nblocks = ca->nblocks ? 1 : 0; /* keep the first block */
    ca->bused = 0;
    ca->bound = false;
}

static void cache_free(evjson_cache *ca) {
    const jfr_allocator *a = &ca->alloc;
    jfr__free(a, ca->seen, ca->seen ? (ca->smask + 1) * sizeof *ca->seen : 0);
    jfr__free(a, ca->slots, ca->slots ? (ca->mask + 1) * sizeof *ca->slots : 0);
    jfr__free(a, ca->ents, ca->capents * sizeof *ca->ents);
    for (size_t i = 0; i < ca->capblocks; i++)
        jfr__free(a, ca->blocks[i], ca->capmax); /* every block is capmax bytes */
    jfr__free(a, ca->blocks, ca->capblocks * sizeof *ca->blocks);
    jfr__free(a, ca->caps, ca->capcaps * sizeof *ca->caps);
    ob_free(&ca->capo);
    size_t limit = ca->limit, capmax = ca->capmax;
    jfr_allocator keep = ca->alloc;
    memset(ca, 0, sizeof *ca);
    ca->limit = limit;
    ca->capmax = capmax;
    ca->alloc = keep;
}

/* Room for n bytes in the store (n <= capmax), or NULL. Blocks past the
 * first are kept allocated in blocks[] for reuse after a clear. */
static char *store_alloc(evjson_cache *ca, size_t n) {
    if (ca->nblocks && ca->bused + n <= ca->capmax) {
        char *p = ca->blocks[ca->nblocks - 1] + ca->bused;
        ca->bused += n;
        return p;
    }
    if (ca->nblocks == ca->capblocks) {
        size_t cap = ca->capblocks ? ca->capblocks * 2 : 8;
        char **nb = cache_grow(ca, ca->blocks, ca->capblocks * sizeof *nb, cap * sizeof *nb);
        if (!nb)
            return NULL;
        memset(nb + ca->capblocks, 0, (cap - ca->capblocks) * sizeof *nb);
        ca->blocks = nb;
        ca->capblocks = cap;
    }
    if (!ca->blocks[ca->nblocks] &&
        !(ca->blocks[ca->nblocks] = cache_alloc(ca, ca->capmax, false)))
        return NULL;
    ca->bused = n;
    return ca->blocks[ca->nblocks++];
}

/* Keep the JSON of the capture that just closed (its object's frame is
 * still on the stack). Best effort: out of room or memory, nothing. */
static void cache_put(evjson *pr, const evjson_cap *cap) {
    evjson_cache *ca = &pr->cache;
    const jfr_value *obj = &pr->frames[cap->frame].it.parent;
    size_t len = ca->capo.len - cap->start;
    if (ca->nents >= UINT32_MAX - 1 || cap->frame > UINT32_MAX || pr->indent > UINT32_MAX)
        return;
    if (!ca->slots || (ca->nents + 1) * 2 > ca->mask + 1) {
        size_t n = ca->slots ? (ca->mask + 1) * 2 : 4096;
        uint32_t *ns = cache_alloc(ca, n * sizeof *ns, true);
        if (!ns)
            return;
        cache_release(ca, ca->slots, ca->slots ? (ca->mask + 1) * sizeof *ca->slots : 0);
        ca->slots = ns;
        ca->mask = n - 1;
        for (size_t i = 0; i < ca->nents; i++) {
            const evjson_cent *e = &ca->ents[i];
            *cache_slot(ca, e->type, e->key, e->depth, e->indent) = (uint32_t)i + 1;
        }
    }
    if (ca->nents == ca->capents) {
        size_t n = ca->capents ? ca->capents * 2 : 1024;
        evjson_cent *ne = cache_grow(ca, ca->ents, ca->capents * sizeof *ne, n * sizeof *ne);
        if (!ne)
            return;
        ca->ents = ne;
        ca->capents = n;
    }
    uint32_t depth = (uint32_t)cap->frame, ind = (uint32_t)pr->indent;
    uint32_t *slot = cache_slot(ca, obj->type, obj->key, depth, ind);
    if (*slot)
        return; /* printed again where the entry could not be used */
    char *b = store_alloc(ca, len);
    if (!b)
        return;
    memcpy(b, ca->capo.buf + cap->start, len);
    evjson_cent *e = &ca->ents[ca->nents++];
    *e = (evjson_cent){obj->type, obj->key, depth, ind, pr->nopened - cap->nopened0,
                       (uint32_t)len, {0}, b};
    memcpy(e->reach, cap->reach, sizeof e->reach);
    *slot = (uint32_t)ca->nents;
}

/* The capture buffer overflowed: its bytes go out in order, and the open
 * captures are void. */
static int capo_spill(void *user, const void *data, size_t len) {
    evjson *pr = user;
    evjson_cache *ca = &pr->cache;
    ca->spilled = true;
    for (size_t i = 0; i < ca->ncaps; i++)
        ca->caps[i].bad = true;
    ob_write(ca->real, data, len);
    return 0;
}

/* Start capturing the pooled object just pushed (before its '{'). */
static void capture_begin(evjson *pr, uint8_t hb) {
    evjson_cache *ca = &pr->cache;
    if (ca->held >= ca->limit || (ca->ncaps && ca->spilled))
        return;
    if (ca->ncaps == ca->capcaps) {
        size_t n = ca->capcaps ? ca->capcaps * 2 : 16;
        evjson_cap *nc = cache_grow(ca, ca->caps, ca->capcaps * sizeof *nc, n * sizeof *nc);
        if (!nc)
            return;
        ca->caps = nc;
        ca->capcaps = n;
    }
    if (!ca->ncaps) {
        if (!ca->capo.buf) {
            if (!cache_room(ca, ca->capmax) || !ob_init(&ca->capo, -1, ca->capmax, &ca->alloc))
                return;
            ca->held += ca->capmax;
            ca->capo.write_fn = capo_spill;
            ca->capo.write_user = pr;
        }
        ca->capo.len = 0;
        ca->spilled = false;
        ca->real = pr->o;
        pr->o = &ca->capo;
    }
    evjson_cap *cap = &ca->caps[ca->ncaps++];
    *cap = (evjson_cap){pr->nframes - 1, ca->capo.len, pr->nopened - 1, ca->nerr, false, {0}};
    reach_add(cap->reach, hb);
    pr->frames[pr->nframes - 1].captured = true;
}

/* The captured object's frame is closing (its '}' written). */
static void capture_end(evjson *pr) {
    evjson_cache *ca = &pr->cache;
    evjson_cap *cap = &ca->caps[--ca->ncaps];
    if (!cap->bad && !ca->spilled && cap->nerr0 == ca->nerr)
        cache_put(pr, cap);
    if (ca->ncaps) {
        reach_or(ca->caps[ca->ncaps - 1].reach, cap->reach);
        return;
    }
    pr->o = ca->real;
    ob_write(pr->o, ca->capo.buf, ca->capo.len);
    ca->capo.len = 0;
    ca->spilled = false;
}

/* Print obj from the cache if it is there and may be used here. *capture
 * says whether to capture it when not: on its second meeting. */
static bool replay(evjson *pr, const jfr_value *obj, bool *capture) {
    evjson_cache *ca = &pr->cache;
    *capture = false;
    if (pr->nframes > UINT32_MAX || pr->indent > UINT32_MAX)
        return false;
    uint32_t v = 0;
    if (ca->nents)
        v = *cache_slot(ca, obj->type, obj->key, (uint32_t)pr->nframes, (uint32_t)pr->indent);
    if (!v) {
        ca->misses++;
        *capture = ca->held < ca->limit &&
                   seen_before(ca, cache_hash(obj->type, obj->key, (uint32_t)pr->nframes,
                                              (uint32_t)pr->indent));
        return false;
    }
    const evjson_cent *e = &ca->ents[v - 1];
    if ((uint64_t)pr->nopened + e->nopened > EVJSON_MAX_OBJECTS)
        return false;
    /* an object open around it that it visits would print as null there */
    for (size_t i = 0; i < pr->nframes; i++) {
        const evjson_frame *f = &pr->frames[i];
        if (f->kind == FR_FIELDS && f->it.parent.pooled && reach_has(e->reach, f->hbit))
            return false;
    }
    if (pr->xml)
        xml_tag_end(pr);
    ob_write(pr->o, e->bytes, e->len);
    pr->nopened += e->nopened;
    if (ca->ncaps)
        reach_or(ca->caps[ca->ncaps - 1].reach, e->reach);
    ca->hits++;
    return true;
}

static void open_object(evjson *pr, const jfr_value *obj) {
    evjson_cache *ca = &pr->cache;
    uint8_t hb = 0;
    bool capture = false;
    if (obj->pooled) {
        ptrdiff_t at = path_index(pr, obj);
        if (ca->use) {
            hb = hbit_of(obj->type, obj->key);
            if (ca->ncaps)
                reach_add(ca->caps[ca->ncaps - 1].reach, hb);
        }
        if (at >= 0) {
            /* a reference back into an object open on this path: null,
             * where the JDK nulls the reference that closes the cycle in
             * the order its resolver visits the pool (see cmd_print.c).
             * Captures of objects inside the cycle would print otherwise
             * elsewhere: void. */
            for (size_t i = ca->ncaps; i > 0 && ca->caps[i - 1].frame > (size_t)at; i--)
                ca->caps[i - 1].bad = true;
            put_null(pr);
            return;
        }
        if (pr->xml)
            xml_start(pr); /* its tag is not in the cached bytes: they follow the '>' */
        /* XML: its end tag is in them: cached as a <struct> only (an object
         * where a field declares a value is hostile data) */
        if (ca->use && (!pr->xml || pr->xkind == XK_STRUCT) && replay(pr, obj, &capture))
            return;
    }
    evjson_frame *fr = frame_push(pr, FR_FIELDS, obj);
    if (!fr)
        return;
    fr->hbit = hb;
    fr->xkind = pr->xkind;
    if (pr->xml) {
        if (!pr->xopen)
            xml_start(pr);
        xml_tag_end(pr);
    }
    if (capture)
        capture_begin(pr, hb);
    if (pr->xml) {
        ob_putc(pr->o, '\n');
        pr->indent += 2;
    } else {
        object_begin(pr);
    }
}

static void open_plain_array(evjson *pr, const jfr_value *v);

/* A value as the JDK prints an unconverted field value (printValue). */
static void print_plain(evjson *pr, const jfr_value *v) {
    char buf[JFMT_NUM_MAX];
    size_t n;
    switch (v->kind) {
    case JFR_KIND_NULL:
        put_null(pr);
        return;
    case JFR_KIND_BOOLEAN:
        if (v->b)
            ob_write(pr->o, "true", 4);
        else
            ob_write(pr->o, "false", 5);
        return;
    case JFR_KIND_INT:
        ob_i64(pr->o, v->i);
        return;
    case JFR_KIND_CHAR:
        ob_putc(pr->o, '"');
        jfmt_json_char(pr->o, (uint32_t)v->u);
        ob_putc(pr->o, '"');
        return;
    case JFR_KIND_FLOAT:
        if (isnan(v->d) || isinf(v->d)) {
            put_null(pr);
            return;
        }
        n = jfmt_float((float)v->d, buf);
        ob_write(pr->o, buf, n);
        return;
    case JFR_KIND_DOUBLE:
        if (isnan(v->d) || isinf(v->d)) {
            put_null(pr);
            return;
        }
        n = jfmt_double(v->d, buf);
        ob_write(pr->o, buf, n);
        return;
    case JFR_KIND_STRING:
        ob_putc(pr->o, '"');
        if (v->encoding == JFR_ENCODING_RAW_CHARS)
            jfmt_json_chars(pr->o, v->str, v->len);
        else
            jfmt_json_string(pr->o, v->str, v->len, v->encoding == 3);
        ob_putc(pr->o, '"');
        return;
    case JFR_KIND_OBJECT:
        open_object(pr, v);
        return;
    case JFR_KIND_ARRAY: /* only reachable through a simpleType wrapping an array */
        open_plain_array(pr, v);
        return;
    }
    put_null(pr);
}

/* An <array> start tag: the size is the whole array's (frames past the
 * stack depth are left out, but counted). */
static void xml_array_start(evjson *pr, uint32_t count) {
    if (!pr->xopen)
        xml_start(pr);
    ob_write(pr->o, " size=\"", 7);
    ob_u64(pr->o, count);
    ob_write(pr->o, "\">\n", 3);
    pr->xopen = false;
    pr->indent += 2;
}

/* print_plain as XMLWriter writes it: String.valueOf(value), escaped (NaN
 * and the infinities as Java prints them, where JSON has null). */
static void xml_plain(evjson *pr, const jfr_value *v) {
    char buf[JFMT_NUM_MAX];
    switch (v->kind) {
    case JFR_KIND_OBJECT:
        open_object(pr, v);
        return;
    case JFR_KIND_ARRAY:
        open_plain_array(pr, v);
        return;
    case JFR_KIND_BOOLEAN:
    case JFR_KIND_INT:
    case JFR_KIND_CHAR:
    case JFR_KIND_FLOAT:
    case JFR_KIND_DOUBLE:
    case JFR_KIND_STRING:
        break;
    default:
        put_null(pr);
        return;
    }
    xml_value_open(pr);
    switch (v->kind) {
    case JFR_KIND_BOOLEAN:
        if (v->b)
            ob_write(pr->o, "true", 4);
        else
            ob_write(pr->o, "false", 5);
        break;
    case JFR_KIND_INT:
        ob_i64(pr->o, v->i);
        break;
    case JFR_KIND_CHAR:
        jfmt_xml_char(pr->o, (uint32_t)v->u);
        break;
    case JFR_KIND_FLOAT:
    case JFR_KIND_DOUBLE:
        if (isnan(v->d))
            ob_write(pr->o, "NaN", 3);
        else if (isinf(v->d))
            ob_write(pr->o, v->d < 0 ? "-Infinity" : "Infinity", v->d < 0 ? 9 : 8);
        else
            ob_write(pr->o, buf, v->kind == JFR_KIND_FLOAT ? jfmt_float((float)v->d, buf)
                                                           : jfmt_double(v->d, buf));
        break;
    default: /* JFR_KIND_STRING */
        if (v->encoding == JFR_ENCODING_RAW_CHARS)
            jfmt_xml_chars(pr->o, v->str, v->len);
        else
            jfmt_xml_string(pr->o, v->str, v->len, v->encoding == 3);
        break;
    }
    xml_value_close(pr);
}

static void open_plain_array(evjson *pr, const jfr_value *v) {
    evjson_frame *fr = frame_push(pr, FR_PLAIN_ARRAY, v);
    if (!fr)
        return;
    fr->limit = UINT32_MAX; /* until the iteration ends */
    fr->xkind = pr->xkind;
    if (pr->xml)
        xml_array_start(pr, v->count);
    else
        ob_putc(pr->o, '[');
}

/* The widened integer the JDK's getDuration/getInstant start from. */
bool evjson_widen(const jfr_value *v, bool is_unsigned, int64_t *out) {
    if (v->kind == JFR_KIND_CHAR) {
        *out = (int64_t)(uint16_t)v->u;
        return true;
    }
    if (v->kind != JFR_KIND_INT || !v->type)
        return false;
    switch (v->type->base) {
    case JFR_BASE_LONG:
        *out = v->i;
        return true;
    case JFR_BASE_INT:
        *out = is_unsigned ? (int64_t)(uint32_t)v->i : (int64_t)(int32_t)v->i;
        return true;
    case JFR_BASE_SHORT:
        *out = is_unsigned ? (int64_t)(uint16_t)v->i : (int64_t)(int16_t)v->i;
        return true;
    case JFR_BASE_BYTE:
        /* the JDK widens an unsigned byte through short: -1 -> 65535 */
        *out = is_unsigned ? (int64_t)(uint16_t)(int16_t)(int8_t)v->i : (int64_t)(int8_t)v->i;
        return true;
    default:
        *out = v->i;
        return true;
    }
}

jfmt_span_unit evjson_span_unit(uint32_t units) {
    if (units & JFR_UNIT_TIMESPAN_TICKS)
        return JFMT_SPAN_TICKS;
    if (units & JFR_UNIT_TIMESPAN_NANOS)
        return JFMT_SPAN_NANOS;
    if (units & JFR_UNIT_TIMESPAN_MICROS)
        return JFMT_SPAN_MICROS;
    if (units & JFR_UNIT_TIMESPAN_MILLIS)
        return JFMT_SPAN_MILLIS;
    return JFMT_SPAN_SECONDS;
}

/* A non-array, non-struct field value, converted as the JDK's
 * EventPrintWriter.getValue does. */
EVJSON_LAYOUT_INLINE void print_scalar_field(evjson *pr, const jfr_field *f, const jfr_value *raw,
                                         const bool xml) {
    jfr_value u;
    const jfr_value *v = raw;
    if (raw->kind == JFR_KIND_OBJECT && raw->type && raw->type->simple) {
        jfr_status s = jfr_value_unwrap(raw, &u);
        if (s) {
            note_error(pr, s);
            put_null(pr);
            return;
        }
        v = &u;
    }
    uint32_t units = f->units;
    bool is_unsigned = (units & JFR_UNIT_UNSIGNED) != 0;
    char buf[JFMT_TIME_MAX];
    int64_t w;
    if ((units & JFR_UNIT_TIMESPAN) && evjson_widen(v, is_unsigned, &w)) {
        size_t n = jfmt_timespan(w, evjson_span_unit(units), &pr->tb, buf);
        if (xml)
            xml_text(pr, buf, n);
        else
            put_quoted(pr, buf, n);
        return;
    }
    if ((units & JFR_UNIT_TIMESTAMP) && evjson_widen(v, is_unsigned, &w)) {
        size_t n = jfmt_timestamp(w, (units & JFR_UNIT_TIMESTAMP_TICKS) == 0, &pr->tb,
                                  pr->zone, buf);
        if (xml)
            xml_text(pr, buf, n);
        else
            put_quoted(pr, buf, n);
        return;
    }
    if (is_unsigned && v->kind == JFR_KIND_INT && v->type) {
        uint64_t x;
        switch (v->type->base) {
        case JFR_BASE_BYTE: x = (uint8_t)v->i; break;
        case JFR_BASE_SHORT: x = (uint16_t)v->i; break;
        case JFR_BASE_INT: x = (uint32_t)v->i; break;
        default: x = (uint64_t)v->i; break;
        }
        if (xml)
            xml_value_open(pr);
        ob_u64(pr->o, x);
        if (xml)
            xml_value_close(pr);
        return;
    }
    if (xml)
        xml_plain(pr, v);
    else
        print_plain(pr, v);
}

static void open_array(evjson *pr, const jfr_field *f, const jfr_value *arr) {
    if (arr->kind != JFR_KIND_ARRAY) {
        put_null(pr);
        return;
    }
    evjson_frame *fr = frame_push(pr, FR_ARRAY, arr);
    if (!fr)
        return;
    fr->structs = is_struct_type(f->type);
    fr->limit = arr->count;
    if (is_frame_type(pr, f->type) && fr->limit > pr->stack_depth)
        fr->limit = pr->stack_depth;
    fr->xkind = pr->xkind;
    if (pr->xml)
        xml_array_start(pr, arr->count);
    else
        ob_putc(pr->o, '[');
}

/* Print the next field of an object; false when there is none. */
EVJSON_LAYOUT_INLINE bool step_field(evjson *pr, evjson_frame *fr, const bool xml) {
    const jfr_type *t = fr->it.parent.type;
    if (fr->next >= t->nfields)
        return false;
    const jfr_field *f = &t->fields[fr->next];
    if (xml)
        xml_pending(pr, f->array ? XK_ARRAY : is_struct_type(f->type) ? XK_STRUCT : XK_VALUE,
                    f->name, 0);
    else
        separator(pr, fr->next == 0, false, f->name);
    fr->next++;
    jfr_value v;
    jfr_status r = fr->broken ? JFR_BAD_EVENT : jfr_iter_next_raw(&fr->it, &v);
    if (r != JFR_OK) {
        /* keep the output valid JSON; the event is reported as an error */
        if (!fr->broken)
            note_error(pr, r == JFR_END ? JFR_BAD_EVENT : r);
        fr->broken = true; /* positions after a decode error are unknown */
        put_null(pr);
    } else if (f->array) {
        open_array(pr, f, &v);
    } else if (is_struct_type(f->type)) {
        if (v.kind == JFR_KIND_OBJECT)
            open_object(pr, &v);
        else
            put_null(pr);
    } else {
        print_scalar_field(pr, f, &v, xml);
    }
    return true;
}

/* Print the next element of an array; false when there is none. */
EVJSON_LAYOUT_INLINE bool step_element(evjson *pr, evjson_frame *fr, const bool xml) {
    if (fr->next >= fr->limit)
        return false;
    jfr_value e;
    jfr_status r = jfr_iter_next_raw(&fr->it, &e);
    if (r != JFR_OK) {
        if (r != JFR_END)
            note_error(pr, r);
        return false;
    }
    if (xml)
        xml_pending(pr, fr->structs ? XK_STRUCT : XK_VALUE, NULL, fr->next);
    else if (fr->next > 0)
        comma(pr);
    fr->next++;
    /* elements of a plain array (structs false) print unconverted */
    if (fr->structs && e.kind == JFR_KIND_OBJECT) {
        open_object(pr, &e);
    } else if (fr->kind == FR_ARRAY && e.kind == JFR_KIND_OBJECT && e.type && e.type->simple) {
        jfr_value u;
        jfr_status s = jfr_value_unwrap(&e, &u);
        if (s) {
            note_error(pr, s);
            put_null(pr);
        } else {
            xml ? xml_plain(pr, &u) : print_plain(pr, &u);
        }
    } else {
        xml ? xml_plain(pr, &e) : print_plain(pr, &e);
    }
    return true;
}

/* The end of an open frame, as the element it was opened as (frame 0: the
 * event's; an object in a field declared a value is a <value>). */
static void xml_close(evjson *pr, const evjson_frame *fr) {
    pr->indent -= 2;
    indent(pr);
    if (pr->nframes == 1) {
        ob_write(pr->o, "</event>\n\n", 10);
        return;
    }
    ob_write(pr->o, "</", 2);
    ob_write(pr->o, xk_names[fr->xkind], xk_lens[fr->xkind]);
    ob_write(pr->o, ">\n", 2);
}

/* Print the open frames' members until every frame is closed. */
EVJSON_LAYOUT_INLINE void run_layout(evjson *pr, const bool xml) {
    while (pr->nframes > 0) {
        /* re-read after every step: opening a value may move the frames */
        evjson_frame *fr = &pr->frames[pr->nframes - 1];
        if (fr->kind == FR_FIELDS ? step_field(pr, fr, xml) : step_element(pr, fr, xml))
            continue;
        if (xml)
            xml_close(pr, fr);
        else if (fr->kind == FR_FIELDS)
            object_end(pr);
        else
            ob_putc(pr->o, ']');
        if (fr->captured)
            capture_end(pr);
        pr->nframes--;
    }
}

static void run(evjson *pr) {
    if (pr->xml)
        run_layout(pr, true);
    else
        run_layout(pr, false);
}

/* -------------------------------------------------------------- API */

void evjson_init(evjson *pr, outbuf *o, uint32_t stack_depth, bool compact,
                 const jfr_allocator *a) {
    memset(pr, 0, sizeof *pr);
    if (a)
        pr->alloc = pr->cache.alloc = *a;
    pr->o = o;
    pr->stack_depth = stack_depth;
    pr->compact = compact;
    evjson_set_cache_limit(pr, EVJSON_CACHE_LIMIT);
}

void evjson_set_cache_limit(evjson *pr, size_t bytes) {
    evjson_cache *ca = &pr->cache;
    cache_free(ca);
    ca->limit = bytes < EVJSON_CACHE_MIN ? 0 : bytes;
    ca->capmax = ca->limit / 16 < EVJSON_CAPTURE_MAX ? ca->limit / 16 : EVJSON_CAPTURE_MAX;
}

size_t evjson_memory(const evjson *pr) {
    return pr->cache.held + pr->capframes * sizeof *pr->frames;
}

void evjson_free(evjson *pr) {
    cache_free(&pr->cache);
    jfr__free(&pr->alloc, pr->frames, pr->capframes * sizeof *pr->frames);
    pr->frames = NULL;
    pr->nframes = pr->capframes = 0;
}

void evjson_chunk_begin(evjson *pr, const jfr_chunk_info *c) {
    /* pooled objects are cached for finished chunks only: their pools are
     * complete before the first event (a live chunk's grow with its
     * segments, so a reference may resolve later) */
    cache_clear(&pr->cache);
    pr->ft_n = 0; /* a new chunk's types may sit where a freed one's were */
    pr->cache.on = c->state == 0 && pr->cache.limit;
    if (!pr->have_tb) { /* the JDK converts every chunk with the first one's base */
        pr->have_tb = true;
        pr->tb = (jfmt_timebase){c->start_nanos, c->start_ticks, c->ticks_per_second};
    }
}

void evjson_metadata(evjson *pr, const jfr_metadata *m) {
    pr->ft_n = 0;
    if (!pr->have_zone) { /* also the first chunk's, like the time base */
        pr->have_zone = true;
        cache_clear(&pr->cache); /* printed without it */
        pr->zone = jfmt_zone_offset_seconds(m->gmt_offset_ms, m->dst_ms);
    }
}

jfr_status evjson_event(evjson *pr, const jfr_event *e, const jfr_value *ev) {
    evjson_cache *ca = &pr->cache;
    /* the cache holds one chunk's objects: the chunk evjson_chunk_begin
     * announced, whose events are the first ones printed after it */
    if (ca->on && !ca->bound) {
        ca->bound = true;
        ca->chunk = e->chunk_;
        ca->index = e->chunk_index;
    }
    ca->use = ca->on && ca->chunk == e->chunk_ && ca->index == e->chunk_index;
    ca->ncaps = 0;
    if (pr->ft_chunk != e->chunk_ || pr->ft_index != e->chunk_index) {
        pr->ft_chunk = e->chunk_;
        pr->ft_index = e->chunk_index;
        pr->ft_n = 0;
    }
    pr->decode_error = JFR_OK;
    pr->nframes = 0;
    pr->nopened = 0;
    pr->too_many = false;
    if (pr->xml) {
        indent(pr);
        ob_write(pr->o, "<event type=\"", 13);
        jfmt_xml_string(pr->o, e->type->name, strlen(e->type->name), false);
        ob_write(pr->o, "\">\n", 3);
        pr->xopen = false;
        xml_pending(pr, XK_STRUCT, "values", 0); /* only if frame 0 cannot open */
        if (frame_push(pr, FR_FIELDS, ev)) { /* frame 0, closed by run() */
            pr->indent += 2;
            run(pr);
        } else {
            indent(pr);
            ob_write(pr->o, "</event>\n\n", 10);
        }
        return pr->decode_error;
    }
    object_begin(pr);
    put_name(pr, "type");
    ob_putc(pr->o, '"');
    jfmt_json_string(pr->o, e->type->name, strlen(e->type->name), false);
    ob_putc(pr->o, '"');
    separator(pr, false, false, "values");
    if (frame_push(pr, FR_FIELDS, ev)) { /* frame 0, closed by run() */
        object_begin(pr);
        run(pr);
    }
    object_end(pr);
    return pr->decode_error;
}

void evjson_object_begin(evjson *pr) { object_begin(pr); }
void evjson_object_end(evjson *pr) { object_end(pr); }
void evjson_put_name(evjson *pr, const char *name) { put_name(pr, name); }

void evjson_xml_begin(evjson *pr) {
    static const char head[] = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                               "<recording xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\">\n"
                               "  <events>\n";
    ob_write(pr->o, head, sizeof head - 1);
    pr->indent = 4;
}

void evjson_xml_end(evjson *pr) {
    static const char tail[] = "  </events>\n</recording>\n";
    ob_write(pr->o, tail, sizeof tail - 1);
    pr->indent = 0;
}

const char *evjson_error_str(const evjson *pr) {
    if (pr->decode_error == JFR_LIMIT && pr->too_many)
        return "more than " JFR_STRINGIFY(EVJSON_MAX_OBJECTS)
               " objects and arrays in one event (references shared too often to print)";
    if (pr->decode_error == JFR_LIMIT)
        return "objects nested deeper than " JFR_STRINGIFY(EVJSON_MAX_NEST)
               " levels (a reference chain too deep to print)";
    return jfr_status_str(pr->decode_error);
}
