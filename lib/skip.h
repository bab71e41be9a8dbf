/* Skipping one inline value by the decode ops compiled from the metadata:
 * the hot loop of pool indexing (pool.c) and of field access (value.c).
 * Static functions, included by both, so that each keeps its calls local
 * (no call across files per value). Include after internal.h. */
#ifndef JFR_SKIP_H
#define JFR_SKIP_H

static inline const jfr_tinfo *tinfo(const jfr_chunk *c, const jfr_type *t) {
    return &c->md->tinfo[t->index];
}

static jfr_status skip_one(const jfr_chunk *c, jfr_cur *cur, const jfr_type *t,
                           uint8_t op, uint32_t depth);

/* One field's value (array-aware: op may carry JFR_OP_ARRAY). */
static jfr_status skip_field(const jfr_chunk *c, jfr_cur *cur, const jfr_type *t,
                             uint8_t op, uint32_t depth) {
    if (!(op & JFR_OP_ARRAY))
        return skip_one(c, cur, t, op, depth);
    uint32_t n;
    if (!jfr__cur_count(cur, &n) || n > (size_t)(cur->end - cur->p))
        return JFR_BAD_EVENT;
    op &= (uint8_t)~JFR_OP_ARRAY;
    if (op == JFR_OP_STRUCT && c->compressed && n) {
        /* structs of integers only (stack frames): n * k varints at once */
        const jfr_tinfo *inf = tinfo(c, t);
        if (inf->nvarints) {
            if (inf->bad || depth > JFR_MAX_DEPTH)
                return JFR_BAD_EVENT;
            return jfr__cur_skip_varints(cur, (uint64_t)n * inf->nvarints) ? JFR_OK
                                                                           : JFR_BAD_VARINT;
        }
    }
    for (uint32_t k = 0; k < n; k++) {
        jfr_status s = skip_one(c, cur, t, op, depth);
        if (s)
            return s;
    }
    return JFR_OK;
}

/* The hot loop of pool indexing and field access: scalar ops inline. */
static jfr_status skip_struct(const jfr_chunk *c, jfr_cur *cur, const jfr_type *t,
                              uint32_t depth) {
    const jfr_tinfo *inf = tinfo(c, t);
    if (inf->bad || depth > JFR_MAX_DEPTH)
        return JFR_BAD_EVENT;
    const uint8_t *ops = inf->ops;
    bool varints = c->compressed;
    for (uint32_t i = 0; i < t->nfields; i++) {
        uint8_t op = ops[i];
        switch (op) {
        case JFR_OP_BOOLEAN:
        case JFR_OP_BYTE:
            if (cur->p >= cur->end)
                return JFR_BAD_EVENT;
            cur->p++;
            continue;
        case JFR_OP_CHAR:
        case JFR_OP_SHORT:
        case JFR_OP_INT:
        case JFR_OP_LONG:
        case JFR_OP_POOL:
            if (varints) {
                if (!jfr__cur_skip_varint(cur))
                    return JFR_BAD_VARINT;
                continue;
            }
            break;
        default:
            break;
        }
        jfr_status s = skip_field(c, cur, t->fields[i].type, op, depth + 1);
        if (s)
            return s;
    }
    return JFR_OK;
}

static jfr_status skip_one(const jfr_chunk *c, jfr_cur *cur, const jfr_type *t,
                           uint8_t op, uint32_t depth) {
    uint64_t v;
    switch (op) {
    case JFR_OP_BOOLEAN:
    case JFR_OP_BYTE:
        return jfr__cur_skip(cur, 1) ? JFR_OK : JFR_BAD_EVENT;
    case JFR_OP_CHAR:
    case JFR_OP_SHORT:
        return jfr__cur_short(cur, &v) ? JFR_OK : JFR_BAD_VARINT;
    case JFR_OP_INT:
        return jfr__cur_int(cur, &v) ? JFR_OK : JFR_BAD_VARINT;
    case JFR_OP_LONG:
    case JFR_OP_POOL:
        return jfr__cur_long(cur, &v) ? JFR_OK : JFR_BAD_VARINT;
    case JFR_OP_FLOAT:
        return jfr__cur_skip(cur, 4) ? JFR_OK : JFR_BAD_EVENT;
    case JFR_OP_DOUBLE:
        return jfr__cur_skip(cur, 8) ? JFR_OK : JFR_BAD_EVENT;
    case JFR_OP_STRING:
        return jfr__cur_skip_string(cur) ? JFR_OK : JFR_BAD_STRING;
    default:
        return skip_struct(c, cur, t, depth);
    }
}

#endif
