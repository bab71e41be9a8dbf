/* Well-known shapes (thread, stack trace, frame, method, class) read through
 * the value API with field indexes found once per metadata, so no string
 * comparison happens per event. */
#include "internal.h"

#include <stdio.h>

static const jfr_known *known_of(const jfr_value *v) {
    return &v->chunk_->md->known;
}

/* Field idx of obj as a string, through simpleType wrappers (Symbol...). */
static void field_string(const jfr_value *obj, int32_t idx, const char **s, size_t *len) {
    jfr_value v, u;
    *s = NULL;
    *len = 0;
    if (idx < 0 || jfr_value_field(obj, (uint32_t)idx, &v) || jfr_value_unwrap(&v, &u))
        return;
    if (u.kind == JFR_KIND_STRING) {
        *s = u.str;
        *len = u.len;
    }
}

static int64_t field_int(const jfr_value *obj, int32_t idx, int64_t dflt) {
    jfr_value v;
    if (idx < 0 || jfr_value_field(obj, (uint32_t)idx, &v) || v.kind != JFR_KIND_INT)
        return dflt;
    return v.i;
}

jfr_status jfr_value_thread(const jfr_value *v, jfr_thread *out) {
    if (!v || !out)
        return JFR_INVALID_ARG;
    memset(out, 0, sizeof *out);
    if (v->kind == JFR_KIND_NULL)
        return JFR_OK;
    const jfr_known *k = known_of(v);
    if (v->kind != JFR_KIND_OBJECT || !k->thread || v->type != k->thread)
        return JFR_TYPE_MISMATCH;
    out->present = true;
    field_string(v, k->th_os_name, &out->os_name, &out->os_name_len);
    field_string(v, k->th_java_name, &out->java_name, &out->java_name_len);
    out->os_thread_id = field_int(v, k->th_os_id, -1);
    out->java_thread_id = field_int(v, k->th_java_id, -1);
    return JFR_OK;
}

jfr_status jfr_value_stack(const jfr_value *v, jfr_stack *out) {
    if (!v || !out)
        return JFR_INVALID_ARG;
    memset(out, 0, sizeof *out);
    if (v->kind == JFR_KIND_NULL)
        return JFR_OK;
    const jfr_known *k = known_of(v);
    if (v->kind != JFR_KIND_OBJECT || !k->stacktrace || v->type != k->stacktrace)
        return JFR_TYPE_MISMATCH;
    if (v->pooled) {
        const jfr_chunk *c = v->chunk_;
        const jfr_stack_ent *se = jfr__stack_get(c->names, c, k->stacktrace->index, v->key);
        out->keyed_ = true;
        out->key_ = v->key;
        if (se) {
            out->present = true;
            out->truncated = se->truncated;
            out->nframes = se->n;
            out->cached_ = se->first + 1;
            out->frames_.chunk_ = c;
            return JFR_OK;
        }
    }
    jfr_value t;
    if (k->st_truncated >= 0 && !jfr_value_field(v, (uint32_t)k->st_truncated, &t))
        out->truncated = t.b;
    if (k->st_frames < 0)
        return JFR_OK;
    jfr_status s = jfr_value_field(v, (uint32_t)k->st_frames, &out->frames_);
    if (s)
        return s;
    if (out->frames_.kind != JFR_KIND_ARRAY)
        return JFR_TYPE_MISMATCH;
    out->present = true;
    out->nframes = out->frames_.count;
    out->next_ = 0;
    out->next_pos_ = out->frames_.pos_;
    return JFR_OK;
}

static jfr_status event_field_at(const jfr_event *e, int32_t idx, jfr_value *out) {
    if (idx < 0) {
        memset(out, 0, sizeof *out);
        out->kind = JFR_KIND_NULL;
        return JFR_OK;
    }
    return jfr_event_field(e, (uint32_t)idx, out);
}

jfr_status jfr_event_thread(const jfr_event *e, jfr_thread *out) {
    if (!e || !out)
        return JFR_INVALID_ARG;
    jfr_value v; /* a NULL value (no such field, key undefined) gives !present */
    jfr_status s = event_field_at(e, e->chunk_->md->tinfo[e->type->index].thread_field, &v);
    return s ? s : jfr_value_thread(&v, out);
}

jfr_status jfr_event_stack(const jfr_event *e, jfr_stack *out) {
    if (!e || !out)
        return JFR_INVALID_ARG;
    jfr_value v; /* a NULL value (no such field, key undefined) gives !present */
    jfr_status s = event_field_at(e, e->chunk_->md->tinfo[e->type->index].stack_field, &v);
    return s ? s : jfr_value_stack(&v, out);
}

jfr_status jfr_value_class_name(const jfr_value *cls, const char **name, size_t *len) {
    if (!cls || !name || !len)
        return JFR_INVALID_ARG;
    *name = NULL;
    *len = 0;
    if (cls->kind == JFR_KIND_NULL)
        return JFR_OK;
    const jfr_known *k = known_of(cls);
    if (cls->kind != JFR_KIND_OBJECT || !k->klass || cls->type != k->klass)
        return JFR_TYPE_MISMATCH;
    field_string(cls, k->c_name, name, len);
    return JFR_OK;
}

/* The uncached body of jfr_value_method. */
static jfr_status method_names(const jfr_value *m, const jfr_known *k, jfr_frame *out) {
    field_string(m, k->m_name, &out->method_name, &out->method_name_len);
    field_string(m, k->m_desc, &out->descriptor, &out->descriptor_len);
    jfr_value cls;
    if (k->m_type >= 0 && !jfr_value_field(m, (uint32_t)k->m_type, &cls))
        return jfr_value_class_name(&cls, &out->class_name, &out->class_name_len);
    return JFR_OK;
}

static void method_from_cache(const jfr_chunk *c, uint32_t e1, jfr_frame *out) {
    const jfr_name_ent *e = &c->names->ents[e1 - 1];
    out->class_name = e->str[0];
    out->class_name_len = e->len[0];
    out->method_name = e->str[1];
    out->method_name_len = e->len[1];
    out->descriptor = e->str[2];
    out->descriptor_len = e->len[2];
}

static uint32_t method_to_cache(const jfr_chunk *c, uint64_t key, const jfr_frame *f) {
    const char *str[3] = {f->class_name, f->method_name, f->descriptor};
    size_t len[3] = {f->class_name_len, f->method_name_len, f->descriptor_len};
    return jfr__names_put(c->names, c, c->md->known.method->index, key, str, len);
}

/* A pooled method by key: one cache probe once it has been seen. mv is the
 * method's value when the caller has it, else NULL (resolved here on a
 * miss). *e1 receives its cache entry (index + 1, 0 when not cached or
 * absent). */
static jfr_status method_by_key(const jfr_chunk *c, uint64_t key,
                                const jfr_value *mv, jfr_frame *out, uint32_t *e1) {
    const jfr_known *k = &c->md->known;
    if ((*e1 = jfr__names_get(c->names, c, k->method->index, key))) {
        method_from_cache(c, *e1, out);
        return JFR_OK;
    }
    jfr_value rv;
    jfr_status s;
    if (!mv) {
        if ((s = jfr__value_resolve(c, k->method, key, &rv)) || rv.kind == JFR_KIND_NULL)
            return s;
        mv = &rv;
    }
    if ((s = method_names(mv, k, out)))
        return s;
    *e1 = method_to_cache(c, key, out);
    return JFR_OK;
}

jfr_status jfr_value_method(const jfr_value *m, jfr_frame *out) {
    if (!m || !out)
        return JFR_INVALID_ARG;
    /* the method's members are always written; line/bci/type are not ours */
    out->class_name = out->method_name = out->descriptor = NULL;
    out->class_name_len = out->method_name_len = out->descriptor_len = 0;
    if (m->kind == JFR_KIND_NULL)
        return JFR_OK;
    const jfr_known *k = known_of(m);
    if (m->kind != JFR_KIND_OBJECT || !k->method || m->type != k->method)
        return JFR_TYPE_MISMATCH;
    if (!m->pooled)
        return method_names(m, k, out);
    uint32_t e1;
    return method_by_key(m->chunk_, m->key, m, out, &e1);
}

static void frame_type_from_cache(const jfr_chunk *c, uint32_t e1, jfr_frame *out) {
    const jfr_name_ent *e = &c->names->ents[e1 - 1];
    out->frame_type = e->str[0];
    out->frame_type_len = e->len[0];
}

/* A pooled frame type ("Interpreted", "JIT compiled"...) by key; returns its
 * cache entry (index + 1, 0 when not cached or absent). */
static uint32_t frame_type_by_key(const jfr_chunk *c, const jfr_type *t, uint64_t key,
                                  jfr_frame *out) {
    uint32_t e1 = jfr__names_get(c->names, c, t->index, key);
    if (e1) {
        frame_type_from_cache(c, e1, out);
        return e1;
    }
    jfr_value v, u;
    if (jfr__value_resolve(c, t, key, &v) || jfr_value_unwrap(&v, &u) ||
        u.kind != JFR_KIND_STRING)
        return 0;
    out->frame_type = u.str;
    out->frame_type_len = u.len;
    const char *str[3] = {u.str, NULL, NULL};
    size_t len[3] = {u.len, 0, 0};
    return jfr__names_put(c->names, c, t->index, key, str, len);
}

static int32_t raw_int(uint8_t op, uint64_t raw) {
    switch (op) {
    case JFR_OP_BYTE: return (int8_t)(uint8_t)raw;
    case JFR_OP_SHORT: return (int16_t)(uint16_t)raw;
    case JFR_OP_CHAR: return (uint16_t)raw;
    case JFR_OP_BOOLEAN: return raw != 0;
    default: return (int32_t)(int64_t)raw; /* int, long: Java's (int) */
    }
}

/* Frame i of s from where its bytes start, in one pass over the frame.
 * When cf is not NULL it receives the frame in cache form; *cacheable is
 * cleared if some part of it could not be cached. */
static jfr_status frame_at(jfr_stack *s, uint32_t i, uint64_t pos, jfr_frame *out,
                           jfr_cached_frame *cf, bool *cacheable) {
    const jfr_value *arr = &s->frames_;
    const jfr_chunk *c = arr->chunk_;
    const jfr_known *k = &c->md->known;
    uint32_t depth = arr->depth_; /* elements sit at their array's depth */
    const int32_t want[4] = {k->fr_method, k->fr_line, k->fr_bci, k->fr_type};
    uint64_t raw[4], end;
    uint8_t ops[4];
    jfr_status st = jfr__struct_scan(c, pos, k->frame, depth, want, raw, ops, &end);
    if (st)
        return st;
    s->next_ = i + 1;
    s->next_pos_ = end;
    uint32_t fte = 0, me = 0;
    if (ops[1] != 0xff)
        out->line = raw_int(ops[1], raw[1]);
    if (ops[2] != 0xff)
        out->bci = raw_int(ops[2], raw[2]);
    if (ops[3] == JFR_OP_POOL && !(fte = frame_type_by_key(c, k->frame->fields[k->fr_type].type,
                                                          raw[3], out)))
        *cacheable = false;
    if (ops[0] == JFR_OP_POOL && k->frame->fields[k->fr_method].type == k->method) {
        st = method_by_key(c, raw[0], NULL, out, &me);
        if (st || !me)
            *cacheable = false;
    } else {
        /* an inline method or frame type: the general path, not cached */
        *cacheable = false;
        jfr_value fr = {.kind = JFR_KIND_OBJECT, .type = k->frame, .chunk_ = c, .pos_ = pos,
                        .depth_ = depth}, mv;
        if (ops[3] != JFR_OP_POOL)
            field_string(&fr, k->fr_type, &out->frame_type, &out->frame_type_len);
        if (k->fr_method >= 0 && !(st = jfr_value_field(&fr, (uint32_t)k->fr_method, &mv)))
            st = jfr_value_method(&mv, out);
    }
    if (cf)
        *cf = (jfr_cached_frame){me, fte, out->line, out->bci};
    return st;
}

/* Every field of *out from a cached frame (no method or frame type: NULL). */
static void frame_from_cache(const jfr_chunk *c, const jfr_cached_frame *cf, jfr_frame *out) {
    if (cf->method) {
        method_from_cache(c, cf->method, out);
    } else {
        out->class_name = out->method_name = out->descriptor = NULL;
        out->class_name_len = out->method_name_len = out->descriptor_len = 0;
    }
    if (cf->ftype) {
        frame_type_from_cache(c, cf->ftype, out);
    } else {
        out->frame_type = NULL;
        out->frame_type_len = 0;
    }
    out->line = cf->line;
    out->bci = cf->bci;
}

/* First read of a pooled stack: resolve all its frames into the cache.
 * Returns false (nothing cached) when some frame cannot be. */
static bool cache_stack(jfr_stack *s) {
    const jfr_chunk *c = s->frames_.chunk_;
    jfr_names *n = c->names;
    const jfr_known *k = &c->md->known;
    jfr_cached_frame *cf = jfr__stack_reserve(n, c, s->nframes);
    if (!cf)
        return false;
    bool ok = true;
    uint64_t pos = s->frames_.pos_;
    for (uint32_t j = 0; j < s->nframes && ok; j++) {
        jfr_frame tmp;
        memset(&tmp, 0, sizeof tmp);
        tmp.line = tmp.bci = -1;
        /* names_put never moves the frame cache: cf stays valid */
        if (frame_at(s, j, pos, &tmp, &cf[j], &ok))
            ok = false;
        pos = s->next_pos_;
    }
    if (!ok) {
        n->no_stacks = true; /* this chunk's frames do not cache: stop trying */
        s->next_ = 0;
        s->next_pos_ = s->frames_.pos_;
        return false;
    }
    s->cached_ = jfr__stack_commit(n, k->stacktrace->index, s->key_, s->nframes, s->truncated);
    return s->cached_ != 0;
}

/* jfr_stack_frame of a stack not (yet) in the frame cache; out of line, so
 * that the cached read stays a leaf function without a frame of its own. */
__attribute__((noinline)) static jfr_status stack_frame_uncached(jfr_stack *s, uint32_t i,
                                                                 jfr_frame *out) {
    const jfr_value *arr = &s->frames_;
    const jfr_chunk *c = arr->chunk_;
    memset(out, 0, sizeof *out);
    out->line = -1;
    out->bci = -1;
    const jfr_known *k = known_of(arr);
    if (!k->frame || arr->type != k->frame || !arr->field || arr->field->pooled)
        return JFR_TYPE_MISMATCH;
    if (s->keyed_ && s->next_ == 0 && !c->names->no_stacks && cache_stack(s)) {
        frame_from_cache(c, &c->names->frames[s->cached_ - 1 + i], out);
        return JFR_OK;
    }
    /* frames are usually read in order: start from the last one read */
    uint32_t from = s->next_;
    uint64_t pos = s->next_pos_;
    if (from > i) {
        from = 0;
        pos = arr->pos_;
    }
    if (from < i) {
        uint8_t op = jfr__op_for_type(k->frame);
        jfr_cur cur = jfr__cur_at(c, pos);
        for (; from < i; from++) {
            jfr_status st = jfr__skip_value(c, &cur, k->frame, op, arr->depth_);
            if (st)
                return st;
        }
        pos = jfr__cur_pos(&cur);
    }
    bool unused = true;
    return frame_at(s, i, pos, out, NULL, &unused);
}

jfr_status jfr_stack_frames(jfr_stack *s, uint32_t first, jfr_frame *out, uint32_t max,
                            uint32_t *n) {
    if (!s || !out || !n)
        return JFR_INVALID_ARG;
    *n = 0;
    if (!s->present || first >= s->nframes)
        return JFR_OK;
    uint32_t count = s->nframes - first < max ? s->nframes - first : max, k = 0;
    while (k < count) {
        if (s->cached_) { /* from the start, or since its first frame's read */
            const jfr_chunk *c = s->frames_.chunk_;
            const jfr_cached_frame *cf = &c->names->frames[s->cached_ - 1 + first];
            for (; k < count; k++)
                frame_from_cache(c, &cf[k], &out[k]);
            break;
        }
        jfr_status st = jfr_stack_frame(s, first + k, &out[k]);
        if (st) {
            *n = k;
            return st;
        }
        k++;
    }
    *n = k;
    return JFR_OK;
}

jfr_status jfr_stack_frame(jfr_stack *s, uint32_t i, jfr_frame *out) {
    if (!s || !out)
        return JFR_INVALID_ARG;
    if (!s->present || i >= s->nframes)
        return JFR_NOT_FOUND;
    if (!s->cached_)
        return stack_frame_uncached(s, i, out);
    const jfr_chunk *c = s->frames_.chunk_; /* the common case: sets every field */
    frame_from_cache(c, &c->names->frames[s->cached_ - 1 + i], out);
    return JFR_OK;
}
