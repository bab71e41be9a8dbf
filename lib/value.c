/* Lazy value decoding: skip and read fields driven by the compiled metadata;
 * pool references resolve through the chunk's pool index on demand. */
#include "internal.h"

#include <math.h>

static inline jfr_cur cur_at(const jfr_chunk *c, uint64_t pos) {
    return jfr__cur_at(c, pos);
}
static inline uint64_t pos_of(const jfr_chunk *c, const jfr_cur *cur) {
    (void)c;
    return jfr__cur_pos(cur);
}

#include "skip.h"
#include "ticks.h"

jfr_status jfr__skip_value(const jfr_chunk *c, jfr_cur *cur, const jfr_type *t,
                           uint8_t op, uint32_t depth) {
    return skip_one(c, cur, t, op, depth);
}

/* ------------------------------------------------------------------ decode */

static jfr_status read_one(const jfr_chunk *c, jfr_cur *cur, const jfr_type *t,
                           uint8_t op, uint32_t depth, bool need_end, jfr_value *out);

/* The pool entry (t, key) as a value; NULL kind when absent. Following a
 * reference starts a new top-level value: its struct nesting counts from 0,
 * and references cost no depth (the caller follows them one level per call,
 * so chains of any length and cycles need no limit here). */
static jfr_status resolve(const jfr_chunk *c, const jfr_type *t, uint64_t key,
                          jfr_value *out) {
    out->pooled = true;
    out->key = key;
    /* key 0 is a real key in several HotSpot pools (FrameType 0 =
     * "Interpreted"); only a key absent from the pool reads as null */
    uint64_t pos = jfr__pool_get(&c->pool, t->index, key);
    if (!pos) {
        out->kind = JFR_KIND_NULL;
        return JFR_OK;
    }
    /* The pool index validated the entry's bytes: no need to find its end. */
    jfr_cur pc = cur_at(c, pos);
    jfr_status s = read_one(c, &pc, t, jfr__op_for_type(t), 0, false, out);
    out->pooled = true;
    out->key = key;
    return s;
}

/* The string pool entry a pooled string ends at: entries that are
 * themselves references to the string pool (no JDK writes them) are
 * followed in a loop; a cycle among them (Floyd's tortoise and hare, no
 * memory) or a dangling key gives 0, read as null. */
static uint64_t string_entry(const jfr_chunk *c, uint64_t key) {
    const jfr_type *ts = c->md->t_string;
    if (!ts)
        return 0;
    uint64_t slow = key, fast = key;
    for (;;) {
        for (int step = 0; step < 2; step++) {
            uint64_t pos = jfr__pool_get(&c->pool, ts->index, fast);
            if (!pos)
                return 0;
            jfr_cur pc = cur_at(c, pos);
            uint8_t enc;
            if (!jfr__cur_u8(&pc, &enc) || enc != JFR_STR_POOL || !jfr__cur_long(&pc, &fast))
                return pos; /* not a reference: read (and checked) by the caller */
        }
        jfr_cur sc = cur_at(c, jfr__pool_get(&c->pool, ts->index, slow));
        uint8_t enc;
        (void)jfr__cur_u8(&sc, &enc); /* slow trails fast: a valid reference */
        (void)jfr__cur_long(&sc, &slow);
        if (slow == fast)
            return 0;
    }
}

/* Room for a converted string in the parser's scratch arena (reset before
 * each event callback). */
static char *scratch_room(void *parser, size_t n) {
    jfr_parser *p = parser;
    return jfr__arena_alloc(&p->opt.allocator, &p->val.scratch, n ? n : 1, 1);
}

/* Compressed UTF-16 at cur left as its varints for jfr_iter_next_raw
 * (found by the skip, which also checks them): true and *out set, cur
 * after it; false for anything else, cur unmoved. */
static bool raw_chars(jfr_cur *cur, jfr_value *out) {
    const uint8_t *at = cur->p;
    uint32_t n;
    if (cur->fixed || at >= cur->end || *at != JFR_STR_CHARS)
        return false;
    cur->p++;
    if (jfr__cur_count(cur, &n) && n <= (size_t)(cur->end - cur->p)) {
        const uint8_t *s = cur->p;
        if (jfr__cur_skip_varints(cur, n)) {
            out->kind = JFR_KIND_STRING;
            out->encoding = JFR_ENCODING_RAW_CHARS;
            out->str = (const char *)s;
            out->len = (size_t)(cur->p - s);
            out->count = n;
            return true;
        }
    }
    cur->p = at;
    return false;
}

static jfr_status read_string(const jfr_chunk *c, jfr_cur *cur, jfr_value *out);
static jfr_status read_string_raw(const jfr_chunk *c, jfr_cur *cur, jfr_value *out);

/* A string value at cur. With raw (jfr_iter_next_raw), compressed UTF-16,
 * inline or the entry a pool reference names, is left as its varints; any
 * other string, and every error, reads as without. One body, the choice a
 * constant in each of the two below. */
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
static inline jfr_status read_string_as(const jfr_chunk *c, jfr_cur *cur, jfr_value *out,
                                        bool raw) {
    if (raw && raw_chars(cur, out))
        return JFR_OK;
    jfr_wstr ws;
    int r = jfr__cur_string(cur, JFR__STR_BORROW, scratch_room, c->parser, &ws);
    if (r == JFR__STR_END)
        return JFR_BAD_STRING;
    out->encoding = ws.enc;
    out->kind = JFR_KIND_STRING;
    out->str = "";
    out->len = 0;
    if (r)
        return r == JFR__STR_NOMEM ? JFR_NOMEM : JFR_BAD_STRING;
    if (ws.enc == JFR_STR_NULL) {
        out->kind = JFR_KIND_NULL;
    } else if (ws.enc == JFR_STR_POOL) {
        uint64_t pos = string_entry(c, ws.key);
        if (!pos) {
            out->kind = JFR_KIND_NULL;
        } else {
            jfr_cur pc = cur_at(c, pos);
            jfr_status s = raw ? read_string_raw(c, &pc, out) : read_string(c, &pc, out);
            if (s)
                return s;
        }
        out->pooled = true;
        out->key = ws.key;
    } else {
        out->str = ws.str;
        out->len = ws.len;
    }
    return JFR_OK;
}

static jfr_status read_string(const jfr_chunk *c, jfr_cur *cur, jfr_value *out) {
    return read_string_as(c, cur, out, false);
}

static jfr_status read_string_raw(const jfr_chunk *c, jfr_cur *cur, jfr_value *out) {
    return read_string_as(c, cur, out, true);
}

static float be_float(uint32_t b) {
    float f;
    memcpy(&f, &b, sizeof f);
    return f;
}

/* need_end: leave the cursor after the value (a struct is skipped to find
 * its end, which also validates it); otherwise only its start is needed. */
static jfr_status read_one(const jfr_chunk *c, jfr_cur *cur, const jfr_type *t,
                           uint8_t op, uint32_t depth, bool need_end, jfr_value *out) {
    uint64_t v;
    out->type = t;
    out->chunk_ = c;
    out->depth_ = depth;
    switch (op) {
    case JFR_OP_BOOLEAN:
        if (!jfr__cur_be(cur, 1, &v))
            return JFR_BAD_EVENT;
        out->kind = JFR_KIND_BOOLEAN;
        out->b = v != 0;
        out->i = out->b;
        out->u = out->b;
        return JFR_OK;
    case JFR_OP_BYTE:
        if (!jfr__cur_be(cur, 1, &v))
            return JFR_BAD_EVENT;
        out->kind = JFR_KIND_INT;
        /* NOLINTNEXTLINE(bugprone-signed-char-misuse,cert-str34-c): a Java byte is signed */
        out->i = (int8_t)(uint8_t)v;
        out->u = (uint8_t)v;
        return JFR_OK;
    case JFR_OP_SHORT:
        if (!jfr__cur_short(cur, &v))
            return JFR_BAD_VARINT;
        out->kind = JFR_KIND_INT;
        out->i = (int16_t)(uint16_t)v;
        out->u = (uint16_t)v;
        return JFR_OK;
    case JFR_OP_CHAR:
        if (!jfr__cur_short(cur, &v))
            return JFR_BAD_VARINT;
        out->kind = JFR_KIND_CHAR;
        out->u = (uint16_t)v;
        out->i = (int64_t)out->u;
        return JFR_OK;
    case JFR_OP_INT:
        if (!jfr__cur_int(cur, &v))
            return JFR_BAD_VARINT;
        out->kind = JFR_KIND_INT;
        out->i = (int32_t)(uint32_t)v;
        out->u = (uint32_t)v;
        return JFR_OK;
    case JFR_OP_LONG:
        if (!jfr__cur_long(cur, &v))
            return JFR_BAD_VARINT;
        out->kind = JFR_KIND_INT;
        out->i = (int64_t)v;
        out->u = v;
        return JFR_OK;
    case JFR_OP_FLOAT:
        if (!jfr__cur_be(cur, 4, &v))
            return JFR_BAD_EVENT;
        out->kind = JFR_KIND_FLOAT;
        out->d = be_float((uint32_t)v);
        return JFR_OK;
    case JFR_OP_DOUBLE:
        if (!jfr__cur_be(cur, 8, &v))
            return JFR_BAD_EVENT;
        out->kind = JFR_KIND_DOUBLE;
        memcpy(&out->d, &v, sizeof out->d);
        return JFR_OK;
    case JFR_OP_STRING:
        return read_string(c, cur, out);
    case JFR_OP_POOL:
        if (!jfr__cur_long(cur, &v))
            return JFR_BAD_VARINT;
        return resolve(c, t, v, out);
    default: /* inline struct */
        out->kind = JFR_KIND_OBJECT;
        out->pos_ = pos_of(c, cur);
        if (need_end)
            return skip_struct(c, cur, t, depth);
        return tinfo(c, t)->bad || depth > JFR_MAX_DEPTH ? JFR_BAD_EVENT : JFR_OK;
    }
}

/* Reset what a fresh value must not inherit. */
static inline void value_init(jfr_value *out, const jfr_field *f) {
    out->field = f;
    out->pooled = false;
    out->key = 0;
    out->count = 0;
    out->encoding = 0;
    out->str = NULL;
    out->len = 0;
    out->b = false;
    out->i = 0;
    out->u = 0;
    out->d = 0;
}

static jfr_status read_field(const jfr_chunk *c, jfr_cur *cur, const jfr_field *f,
                             uint8_t op, uint32_t depth, bool need_end, jfr_value *out) {
    value_init(out, f);
    op &= (uint8_t)~JFR_OP_ARRAY;
    if (!f->array)
        return read_one(c, cur, f->type, op, depth, need_end, out);
    uint32_t n;
    if (!jfr__cur_count(cur, &n) || n > (size_t)(cur->end - cur->p))
        return JFR_BAD_EVENT;
    out->kind = JFR_KIND_ARRAY;
    out->type = f->type;
    out->count = n;
    out->chunk_ = c;
    out->depth_ = depth;
    out->pos_ = pos_of(c, cur);
    /* elements are checked when read; skip them only to find the end */
    for (uint32_t k = 0; need_end && k < n; k++) {
        jfr_status s = skip_one(c, cur, f->type, op, depth);
        if (s)
            return s;
    }
    return JFR_OK;
}

jfr_status jfr__value_resolve(const jfr_chunk *c, const jfr_type *t, uint64_t key,
                              jfr_value *out) {
    value_init(out, NULL);
    out->type = t;
    out->chunk_ = c;
    out->depth_ = 0;
    return resolve(c, t, key, out);
}

jfr_status jfr__struct_scan(const jfr_chunk *c, uint64_t pos, const jfr_type *t,
                            uint32_t depth, const int32_t want[4], uint64_t raw[4],
                            uint8_t ops[4], uint64_t *end_pos) {
    const jfr_tinfo *inf = tinfo(c, t);
    if (inf->bad || depth > JFR_MAX_DEPTH)
        return JFR_BAD_EVENT;
    for (int k = 0; k < 4; k++)
        ops[k] = 0xff;
    jfr_cur cur = cur_at(c, pos);
    for (uint32_t i = 0; i < t->nfields; i++) {
        uint8_t op = inf->ops[i];
        int k = 0;
        while (k < 4 && want[k] != (int32_t)i)
            k++;
        if (k < 4 && (op <= JFR_OP_LONG || op == JFR_OP_POOL)) {
            bool ok;
            switch (op) {
            case JFR_OP_BOOLEAN:
            case JFR_OP_BYTE: ok = jfr__cur_be(&cur, 1, &raw[k]); break;
            case JFR_OP_CHAR:
            case JFR_OP_SHORT: ok = jfr__cur_short(&cur, &raw[k]); break;
            case JFR_OP_INT: ok = jfr__cur_int(&cur, &raw[k]); break;
            default: ok = jfr__cur_long(&cur, &raw[k]); break;
            }
            if (!ok)
                return JFR_BAD_VARINT;
            ops[k] = op;
            continue;
        }
        jfr_status s = skip_field(c, &cur, t->fields[i].type, op, depth + 1);
        if (s)
            return s;
    }
    *end_pos = pos_of(c, &cur);
    return JFR_OK;
}

/* --------------------------------------------------------- value cache */

/* An iterator over a cached object: its parent's encoding (an object has
 * none) says so, and pos_ holds the index of its first field in the cache. */
#define ITER_CACHED 0xca

/* The fields of the pooled object v in the chunk's value cache (index + 1
 * of the first), decoded on first iteration (`fill`): the thousandth event
 * naming the same thread or class then costs a lookup and copies. 0 when v
 * is not a pooled object, when some field does not decode (the lazy path
 * then reports it where it is), or when the cache is off or full. A pooled
 * object starts a new top-level value (depth 0), so its fields do not
 * depend on where it was referenced from; they are keyed by the position
 * of its bytes. Reading one field (jfr_value_field) only looks: filling
 * would decode fields nobody asked for (the stack helpers read one or two
 * fields of each method and class once per chunk). */
static uint32_t cached_fields(const jfr_value *v, bool fill) {
    if (v->kind != JFR_KIND_OBJECT || !v->pooled || v->depth_ != 0 || !v->chunk_)
        return 0;
    const jfr_chunk *c = v->chunk_;
    const jfr_type *t = v->type;
    jfr_names *n = c->names;
    uint32_t e = jfr__obj_get(n, c, t->index, v->pos_);
    if (e || !fill || n->no_objs || !t->nfields)
        return e;
    const jfr_tinfo *inf = tinfo(c, t);
    jfr_value *dst;
    if (inf->bad || !(dst = jfr__obj_reserve(n, c, t->nfields)))
        return 0;
    jfr_cur cur = cur_at(c, v->pos_);
    for (uint32_t i = 0; i < t->nfields; i++) {
        jfr_value *f = &dst[i];
        if (read_field(c, &cur, &t->fields[i], inf->ops[i], 1, true, f))
            return 0;
        /* a converted string sits in the per-callback scratch */
        if (f->kind == JFR_KIND_STRING && f->len && !(f->str = jfr__names_keep(n, c, f->str, f->len)))
            return 0;
    }
    return jfr__obj_commit(n, t->index, v->pos_, t->nfields);
}

/* Field `index` of v from the value cache, if v is cached there (kept out
 * of line: jfr_value_field's own skip loop stays inlined). */
__attribute__((noinline)) static bool field_cached(const jfr_value *v, uint32_t index,
                                                   jfr_value *out) {
    uint32_t e = cached_fields(v, false);
    if (!e)
        return false;
    *out = v->chunk_->names->vals[e - 1 + index];
    return true;
}

/* ------------------------------------------------------------ public API */

jfr_status jfr_value_field(const jfr_value *obj, uint32_t index, jfr_value *out) {
    if (!obj || !out)
        return JFR_INVALID_ARG;
    if (obj->kind != JFR_KIND_OBJECT)
        return JFR_TYPE_MISMATCH;
    const jfr_type *t = obj->type;
    if (index >= t->nfields)
        return JFR_NOT_FOUND;
    const jfr_chunk *c = obj->chunk_;
    if (obj->pooled && c && c->names->nobjs && field_cached(obj, index, out))
        return JFR_OK;
    const jfr_tinfo *inf = tinfo(c, t);
    if (inf->bad)
        return JFR_BAD_EVENT;
    jfr_cur cur = cur_at(c, obj->pos_);
    uint32_t i = 0;
    if (c->compressed && inf->varint_prefix && index) { /* leading varints at once */
        i = index < inf->varint_prefix ? index : inf->varint_prefix;
        if (!jfr__cur_skip_varints(&cur, i))
            return JFR_BAD_VARINT;
    }
    for (; i < index; i++) {
        jfr_status s = skip_field(c, &cur, t->fields[i].type, inf->ops[i], obj->depth_ + 1);
        if (s)
            return s;
    }
    return read_field(c, &cur, &t->fields[index], inf->ops[index], obj->depth_ + 1, false, out);
}

jfr_status jfr_event_ints(const jfr_event *e, const uint32_t *idx, uint32_t n, int64_t *out) {
    if (!e || !e->chunk_ || !e->type || (n && (!idx || !out)))
        return JFR_INVALID_ARG;
    const jfr_chunk *c = e->chunk_;
    const jfr_type *t = e->type;
    const jfr_tinfo *inf = tinfo(c, t);
    if (inf->bad)
        return JFR_BAD_EVENT;
    jfr_cur cur = cur_at(c, e->pos_);
    uint32_t at = 0; /* the field cur is at */
    for (uint32_t k = 0; k < n; k++) {
        uint32_t i = idx[k];
        if (i >= t->nfields || (k && i <= idx[k - 1]))
            return JFR_INVALID_ARG;
        uint8_t op = inf->ops[i];
        if (!(op == JFR_OP_BYTE || op == JFR_OP_CHAR || op == JFR_OP_SHORT || op == JFR_OP_INT ||
              op == JFR_OP_LONG || op == JFR_OP_POOL))
            return JFR_TYPE_MISMATCH; /* an array carries JFR_OP_ARRAY */
        if (c->compressed && i <= inf->varint_prefix) { /* the fields before: one varint each */
            if (!jfr__cur_skip_varints(&cur, i - at))
                return JFR_BAD_VARINT;
        } else {
            for (; at < i; at++) {
                jfr_status s = skip_field(c, &cur, t->fields[at].type, inf->ops[at], 1);
                if (s)
                    return s;
            }
        }
        uint64_t v;
        switch (op) {
        case JFR_OP_BYTE:
            if (!jfr__cur_be(&cur, 1, &v))
                return JFR_BAD_EVENT;
            /* NOLINTNEXTLINE(bugprone-signed-char-misuse,cert-str34-c): a Java byte is signed */
            out[k] = (int8_t)(uint8_t)v;
            break;
        case JFR_OP_SHORT:
        case JFR_OP_CHAR:
            if (!jfr__cur_short(&cur, &v))
                return JFR_BAD_VARINT;
            out[k] = op == JFR_OP_SHORT ? (int64_t)(int16_t)(uint16_t)v : (int64_t)(uint16_t)v;
            break;
        case JFR_OP_INT:
            if (!jfr__cur_int(&cur, &v))
                return JFR_BAD_VARINT;
            out[k] = (int32_t)(uint32_t)v;
            break;
        default: /* long, pool key */
            if (!jfr__cur_long(&cur, &v))
                return JFR_BAD_VARINT;
            out[k] = (int64_t)v;
            break;
        }
        at = i + 1;
    }
    return JFR_OK;
}

jfr_status jfr_value_field_named(const jfr_value *obj, const char *name, jfr_value *out) {
    if (!obj || !name)
        return JFR_INVALID_ARG;
    if (obj->kind != JFR_KIND_OBJECT)
        return JFR_TYPE_MISMATCH;
    int32_t i = jfr_type_field_index(obj->type, name);
    if (i < 0)
        return JFR_NOT_FOUND;
    return jfr_value_field(obj, (uint32_t)i, out);
}

/* Element i of an array, starting the skip from element `from` whose bytes
 * start at from_pos (0 / arr->pos_ for the beginning); *next_pos receives
 * where element i+1 starts. */
static jfr_status value_index_from(const jfr_value *arr, uint32_t i, uint32_t from,
                                   uint64_t from_pos, jfr_value *out, uint64_t *next_pos) {
    if (!arr || !out)
        return JFR_INVALID_ARG;
    if (arr->kind != JFR_KIND_ARRAY || !arr->field)
        return JFR_TYPE_MISMATCH;
    if (i >= arr->count)
        return JFR_NOT_FOUND;
    const jfr_chunk *c = arr->chunk_;
    const jfr_field *f = arr->field;
    uint8_t op = f->pooled ? JFR_OP_POOL : jfr__op_for_type(f->type);
    if (from > i) {
        from = 0;
        from_pos = arr->pos_;
    }
    jfr_cur cur = cur_at(c, from_pos);
    for (uint32_t k = from; k < i; k++) {
        jfr_status s = skip_one(c, &cur, f->type, op, arr->depth_);
        if (s)
            return s;
    }
    value_init(out, f);
    jfr_status s = read_one(c, &cur, f->type, op, arr->depth_, next_pos != NULL, out);
    if (!s && next_pos)
        *next_pos = pos_of(c, &cur);
    return s;
}

jfr_status jfr_value_index(const jfr_value *arr, uint32_t i, jfr_value *out) {
    return value_index_from(arr, i, 0, arr ? arr->pos_ : 0, out, NULL);
}

jfr_status jfr_value_unwrap(const jfr_value *v, jfr_value *out) {
    if (!v || !out)
        return JFR_INVALID_ARG;
    if (v->kind == JFR_KIND_OBJECT && v->type && v->type->simple && v->type->nfields == 1) {
        jfr_status s = jfr_value_field(v, 0, out);
        if (!s && v->pooled && !out->pooled) {
            out->pooled = true;
            out->key = v->key;
        }
        return s;
    }
    *out = *v;
    return JFR_OK;
}

void jfr_iter_init(jfr_iter *it, const jfr_value *v) {
    it->parent = *v;
    it->next = 0;
    it->pos_ = v->pos_;
    /* the copy: v may point into the value cache, which filling can move */
    uint32_t e = cached_fields(&it->parent, true);
    if (e) {
        it->parent.encoding = ITER_CACHED;
        it->pos_ = e - 1;
    }
}

/* The next field of an object iterated from the value cache, where it is
 * in the cache; NULL at the end (also when the chunk is gone). */
static inline const jfr_value *cached_next(jfr_iter *it) {
    const jfr_names *n = it->parent.chunk_->names;
    if (it->next >= it->parent.type->nfields || it->pos_ + it->next >= n->nvals)
        return NULL;
    return &n->vals[it->pos_ + it->next++];
}

/* A string field or element for jfr_iter_next_raw (read_one's start, then
 * read_string_raw). */
static jfr_status read_raw_item(const jfr_chunk *c, jfr_cur *cur, const jfr_field *f,
                                uint32_t depth, jfr_value *out) {
    value_init(out, f);
    out->type = f->type;
    out->chunk_ = c;
    out->depth_ = depth;
    return read_string_raw(c, cur, out);
}

/* jfr_iter_next and, with raw, jfr_iter_next_raw: one body, the choice a
 * constant in each. */
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
static inline jfr_status iter_next(jfr_iter *it, jfr_value *out, bool raw) {
    const jfr_value *pv = &it->parent;
    const jfr_chunk *c = pv->chunk_;
    jfr_cur cur;
    jfr_status s;
    if (pv->kind == JFR_KIND_OBJECT) {
        const jfr_type *t = pv->type;
        if (it->next >= t->nfields)
            return JFR_END;
        if (pv->encoding == ITER_CACHED) {
            const jfr_value *v = cached_next(it);
            if (!v)
                return JFR_END;
            *out = *v;
            return JFR_OK;
        }
        const jfr_tinfo *inf = tinfo(c, t);
        if (inf->bad)
            return JFR_BAD_EVENT;
        cur = cur_at(c, it->pos_);
        const jfr_field *f = &t->fields[it->next];
        uint8_t op = inf->ops[it->next];
        if (raw && op == JFR_OP_STRING && !f->array)
            s = read_raw_item(c, &cur, f, pv->depth_ + 1, out);
        else
            s = read_field(c, &cur, f, op, pv->depth_ + 1, true, out);
    } else if (pv->kind == JFR_KIND_ARRAY && pv->field) {
        if (it->next >= pv->count)
            return JFR_END;
        const jfr_field *f = pv->field;
        uint8_t op = f->pooled ? JFR_OP_POOL : jfr__op_for_type(f->type);
        cur = cur_at(c, it->pos_);
        if (raw && op == JFR_OP_STRING) {
            s = read_raw_item(c, &cur, f, pv->depth_, out);
        } else {
            value_init(out, f);
            s = read_one(c, &cur, f->type, op, pv->depth_, true, out);
        }
    } else {
        return JFR_END;
    }
    if (s)
        return s;
    it->pos_ = pos_of(c, &cur);
    it->next++;
    return JFR_OK;
}

jfr_status jfr_iter_next(jfr_iter *it, jfr_value *out) { return iter_next(it, out, false); }

jfr_status jfr_iter_next_raw(jfr_iter *it, jfr_value *out) { return iter_next(it, out, true); }

jfr_status jfr_iter_next_ref(jfr_iter *it, jfr_value *scratch, const jfr_value **out) {
    if (it->parent.kind == JFR_KIND_OBJECT && it->parent.encoding == ITER_CACHED)
        return (*out = cached_next(it)) ? JFR_OK : JFR_END;
    *out = scratch;
    return jfr_iter_next(it, scratch);
}

/* ----------------------------------------------------------------- events */

jfr_status jfr_event_value(const jfr_event *e, jfr_value *out) {
    if (!e || !out)
        return JFR_INVALID_ARG;
    memset(out, 0, sizeof *out);
    out->kind = JFR_KIND_OBJECT;
    out->type = e->type;
    out->chunk_ = e->chunk_;
    out->pos_ = e->pos_;
    return JFR_OK;
}

jfr_status jfr_event_field(const jfr_event *e, uint32_t index, jfr_value *out) {
    jfr_value root;
    jfr_status s = jfr_event_value(e, &root);
    return s ? s : jfr_value_field(&root, index, out);
}

jfr_status jfr_event_field_named(const jfr_event *e, const char *name, jfr_value *out) {
    jfr_value root;
    jfr_status s = jfr_event_value(e, &root);
    return s ? s : jfr_value_field_named(&root, name, out);
}

jfr_status jfr_event_constant(const jfr_event *e, const jfr_type *t, uint64_t key,
                              jfr_value *out) {
    if (!e || !t || !out || !e->chunk_)
        return JFR_INVALID_ARG;
    return jfr__value_resolve(e->chunk_, t, key, out);
}

int64_t jfr_event_ticks_to_epoch_nanos(const jfr_event *e, int64_t ticks) {
    return jfr__ticks_to_epoch_nanos(e->chunk_, ticks);
}

int64_t jfr_event_ticks_to_nanos(const jfr_event *e, int64_t ticks) {
    return jfr__ticks_to_nanos(e->chunk_, ticks);
}
