/* Metadata record -> type table + per-field decode ops. */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>

typedef struct node {
    uint32_t name;
    uint32_t attr, nattr; /* into attrs[] (pairs of string indexes) */
    uint32_t child, next; /* first child, next sibling: node index + 1, 0 = none */
} node;

typedef struct mdparse {
    const jfr_allocator *a;
    jfr_cur cur;
    const char **str; /* string table, UTF-8, NUL-terminated */
    uint32_t nstr;
    node *nodes;
    uint32_t nnodes, capnodes;
    uint32_t *attrs;
    uint32_t nattrs, capattrs;
    jfr_mdtab *md;
    char *why;
    size_t whylen;
    const uint8_t *err_at; /* the bytes a decoding error is about, or NULL */
} mdparse;

static void fail_(mdparse *m, const uint8_t *at, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    m->err_at = at;
    vsnprintf(m->why, m->whylen, fmt, ap);
    va_end(ap);
}
/* fail: an inconsistency of the decoded tree, no one byte to point at;
 * fail_at: bytes that cannot be decoded, starting at `at`. Both are
 * JFR_BAD_METADATA in the expression itself, so that the static analysers
 * (which do not follow variadic calls) see that a failed step never
 * returns JFR_OK and leaves its outputs unset only then. */
#define fail(m, ...) (fail_((m), NULL, __VA_ARGS__), JFR_BAD_METADATA)
#define fail_at(m, at, ...) (fail_((m), (at), __VA_ARGS__), JFR_BAD_METADATA)

static bool grow(const jfr_allocator *a, void **arr, uint32_t *cap, uint32_t need, size_t elem) {
    if (need <= *cap)
        return true;
    uint32_t nc = *cap ? *cap : 64;
    while (nc < need) {
        if (nc > UINT32_MAX / 2)
            return false;
        nc *= 2;
    }
    void *p = jfr__realloc(a, *arr, (size_t)*cap * elem, (size_t)nc * elem);
    if (!p)
        return false;
    *arr = p;
    *cap = nc;
    return true;
}

static char *arena_room(void *m, size_t n) {
    mdparse *mp = m;
    return jfr__arena_alloc(mp->a, &mp->md->arena, n, 1);
}

/* Read one string of the string table into the arena as UTF-8. */
static jfr_status read_string(mdparse *m, const char **out) {
    jfr_cur *c = &m->cur;
    const uint8_t *at = c->p;
    if (c->p < c->end && *c->p == JFR_STR_POOL) /* no pool to refer to yet */
        return fail_at(m, at, "string encoding %u not allowed in metadata", JFR_STR_POOL);
    jfr_wstr ws;
    switch (jfr__cur_string(c, JFR__STR_COPY, arena_room, m, &ws)) {
    case 0:
        *out = ws.str;
        return JFR_OK;
    case JFR__STR_END:
        return fail_at(m, at, "string table truncated");
    case JFR__STR_BAD_LEN:
        return fail_at(m, at, "string length out of range");
    case JFR__STR_TRUNCATED:
        return fail_at(m, at, "string truncated");
    case JFR__STR_NOMEM:
        return JFR_NOMEM;
    default:
        return fail_at(m, at, "string encoding %u not allowed in metadata", ws.enc);
    }
}

static jfr_status read_index(mdparse *m, uint32_t *idx) {
    const uint8_t *at = m->cur.p;
    uint64_t v;
    if (!jfr__cur_int(&m->cur, &v))
        return fail_at(m, at, "element truncated");
    if (v >= m->nstr)
        return fail_at(m, at, "string index %llu out of range (%u strings)",
                    (unsigned long long)v, m->nstr);
    *idx = (uint32_t)v;
    return JFR_OK;
}

static jfr_status read_element(mdparse *m, uint32_t depth, uint32_t *out) {
    const uint8_t *at = m->cur.p;
    if (depth > 16)
        return fail_at(m, at, "elements nested too deeply");
    jfr_status s;
    uint32_t name, nattr, nchild;
    if ((s = read_index(m, &name)))
        return s;
    at = m->cur.p;
    if (!jfr__cur_count(&m->cur, &nattr) || nattr > (size_t)(m->cur.end - m->cur.p))
        return fail_at(m, at, "attribute count out of range");
    if (!grow(m->a, (void **)&m->nodes, &m->capnodes, m->nnodes + 1, sizeof(node)) ||
        !grow(m->a, (void **)&m->attrs, &m->capattrs, m->nattrs + 2 * nattr, sizeof(uint32_t)))
        return JFR_NOMEM;
    uint32_t me = m->nnodes++;
    m->nodes[me] = (node){name, m->nattrs, nattr, 0, 0};
    for (uint32_t i = 0; i < 2 * nattr; i++)
        if ((s = read_index(m, &m->attrs[m->nattrs++])))
            return s;
    at = m->cur.p;
    if (!jfr__cur_count(&m->cur, &nchild) || nchild > (size_t)(m->cur.end - m->cur.p))
        return fail_at(m, at, "child count out of range");
    uint32_t prev = 0;
    for (uint32_t i = 0; i < nchild; i++) {
        uint32_t ch = 0; /* set when JFR_OK */
        if ((s = read_element(m, depth + 1, &ch)))
            return s;
        if (prev)
            m->nodes[prev - 1].next = ch + 1;
        else
            m->nodes[me].child = ch + 1;
        prev = ch + 1;
    }
    *out = me;
    return JFR_OK;
}

static const char *nname(const mdparse *m, const node *n) {
    const char *s = m->str[n->name];
    return s ? s : "";
}

static const char *attr(const mdparse *m, const node *n, const char *key) {
    for (uint32_t i = 0; i < n->nattr; i++) {
        const char *k = m->str[m->attrs[n->attr + 2 * i]];
        if (k && strcmp(k, key) == 0)
            return m->str[m->attrs[n->attr + 2 * i + 1]];
    }
    return NULL;
}

/* NOLINTBEGIN(bugprone-macro-parentheses): c is the name of the loop variable */
#define FOR_CHILDREN(m, n, c)                                                  \
    for (const node *c = (n)->child ? &(m)->nodes[(n)->child - 1] : NULL; c;   \
         c = c->next ? &(m)->nodes[c->next - 1] : NULL)
/* NOLINTEND(bugprone-macro-parentheses) */

static bool parse_u64(const char *s, uint64_t *v) {
    if (!s || !*s)
        return false;
    char *e;
    unsigned long long x = strtoull(s, &e, 10);
    if (*e || s[0] == '-')
        return false;
    *v = x;
    return true;
}

static uint32_t id_hash(uint64_t id) {
    id ^= id >> 33;
    id *= 0xff51afd7ed558ccdull;
    id ^= id >> 33;
    return (uint32_t)id;
}

const jfr_type *jfr__md_type_by_id_slow(const jfr_mdtab *m, uint64_t id) {
    if (!m->id_slots)
        return NULL;
    for (uint32_t h = id_hash(id) & m->id_mask;; h = (h + 1) & m->id_mask) {
        uint32_t s = m->id_slots[h];
        if (!s)
            return NULL;
        if (m->types[s - 1].id == id)
            return &m->types[s - 1];
    }
}

/* Annotations of an element -> array; also fills label/description/units. */
static jfr_status read_annotations(mdparse *m, const node *n, uint32_t *nout,
                                   const jfr_annotation **out, const char **label,
                                   const char **desc, uint32_t *units) {
    uint32_t cnt = 0;
    FOR_CHILDREN(m, n, c) if (strcmp(nname(m, c), "annotation") == 0) cnt++;
    *nout = 0;
    *out = NULL;
    if (!cnt)
        return JFR_OK;
    jfr_annotation *arr = jfr__arena_alloc(m->a, &m->md->arena, cnt * sizeof *arr, _Alignof(jfr_annotation));
    if (!arr)
        return JFR_NOMEM;
    uint32_t k = 0;
    FOR_CHILDREN(m, n, c) {
        if (strcmp(nname(m, c), "annotation") != 0)
            continue;
        uint64_t tid;
        const jfr_type *t;
        if (!parse_u64(attr(m, c, "class"), &tid) || !(t = jfr__md_type_by_id(m->md, tid)))
            return fail(m, "annotation with unknown class");
        jfr_annotation *an = &arr[k++];
        an->type = t;
        an->value = attr(m, c, "value");
        an->nattrs = 0;
        jfr_attr *at = jfr__arena_alloc(m->a, &m->md->arena, (c->nattr ? c->nattr : 1) * sizeof *at, _Alignof(jfr_attr));
        if (!at)
            return JFR_NOMEM;
        for (uint32_t i = 0; i < c->nattr; i++) {
            const char *key = m->str[m->attrs[c->attr + 2 * i]];
            if (!key || strcmp(key, "class") == 0)
                continue;
            at[an->nattrs++] = (jfr_attr){key, m->str[m->attrs[c->attr + 2 * i + 1]]};
        }
        an->attrs = at;
        const char *tn = t->name, *v = an->value ? an->value : "";
        if (strncmp(tn, "jdk.jfr.", 8) != 0)
            continue;
        tn += 8;
        if (strcmp(tn, "Label") == 0) *label = an->value;
        else if (strcmp(tn, "Description") == 0) *desc = an->value;
        else if (strcmp(tn, "Timestamp") == 0)
            *units |= strcmp(v, "MILLISECONDS_SINCE_EPOCH") == 0 ? JFR_UNIT_TIMESTAMP_MILLIS : JFR_UNIT_TIMESTAMP_TICKS;
        else if (strcmp(tn, "Timespan") == 0)
            *units |= strcmp(v, "NANOSECONDS") == 0    ? JFR_UNIT_TIMESPAN_NANOS
                      : strcmp(v, "MICROSECONDS") == 0 ? JFR_UNIT_TIMESPAN_MICROS
                      : strcmp(v, "MILLISECONDS") == 0 ? JFR_UNIT_TIMESPAN_MILLIS
                      : strcmp(v, "SECONDS") == 0      ? JFR_UNIT_TIMESPAN_SECONDS
                                                       : JFR_UNIT_TIMESPAN_TICKS;
        else if (strcmp(tn, "Unsigned") == 0) *units |= JFR_UNIT_UNSIGNED;
        else if (strcmp(tn, "Percentage") == 0) *units |= JFR_UNIT_PERCENTAGE;
        else if (strcmp(tn, "MemoryAddress") == 0) *units |= JFR_UNIT_MEMORY_ADDRESS;
        else if (strcmp(tn, "DataAmount") == 0)
            *units |= strcmp(v, "BITS") == 0 ? JFR_UNIT_BITS : JFR_UNIT_BYTES;
        else if (strcmp(tn, "Frequency") == 0) *units |= JFR_UNIT_FREQUENCY;
        else if (strcmp(tn, "BooleanFlag") == 0) *units |= JFR_UNIT_BOOLEAN_FLAG;
    }
    *nout = k;
    *out = arr;
    return JFR_OK;
}

static jfr_base base_of(const char *name) {
    static const struct { const char *n; jfr_base b; } prim[] = {
        {"boolean", JFR_BASE_BOOLEAN}, {"byte", JFR_BASE_BYTE},
        {"char", JFR_BASE_CHAR},       {"short", JFR_BASE_SHORT},
        {"int", JFR_BASE_INT},         {"long", JFR_BASE_LONG},
        {"float", JFR_BASE_FLOAT},     {"double", JFR_BASE_DOUBLE},
        {"java.lang.String", JFR_BASE_STRING}};
    for (size_t i = 0; i < sizeof prim / sizeof prim[0]; i++)
        if (strcmp(name, prim[i].n) == 0)
            return prim[i].b;
    return JFR_BASE_STRUCT;
}

static uint8_t op_of(const jfr_field *f) {
    return f->pooled ? JFR_OP_POOL : jfr__op_for_type(f->type);
}

static uint32_t sat_add(uint32_t a, uint32_t b) {
    return a > UINT32_MAX - b ? UINT32_MAX : a + b;
}

/* Minimum size and decode steps of inline values; a type that contains
 * itself inline (not through an array or pool) can never be decoded. */
static void plan_type(jfr_mdtab *md, uint32_t ti, uint8_t *color, uint32_t depth) {
    jfr_tinfo *inf = &md->tinfo[ti];
    const jfr_type *t = &md->types[ti];
    if (color[ti] == 2)
        return;
    if (color[ti] == 1 || depth > JFR_MAX_DEPTH) {
        inf->bad = true;
        return;
    }
    color[ti] = 1;
    uint32_t min = 0, ops = 1;
    bool flat = t->nfields > 0;
    for (uint32_t i = 0; i < t->nfields; i++) {
        const jfr_field *f = &t->fields[i];
        uint8_t op = inf->ops[i] & (uint8_t)~JFR_OP_ARRAY;
        if (f->array || !(op == JFR_OP_CHAR || op == JFR_OP_SHORT || op == JFR_OP_INT ||
                          op == JFR_OP_LONG || op == JFR_OP_POOL))
            flat = false;
        else if (flat)
            inf->varint_prefix = i + 1;
        uint32_t fmin = 1;
        if (op == JFR_OP_FLOAT) fmin = 4;
        else if (op == JFR_OP_DOUBLE) fmin = 8;
        if (op == JFR_OP_STRUCT) {
            plan_type(md, f->type->index, color, depth + 1);
            const jfr_tinfo *sub = &md->tinfo[f->type->index];
            if (sub->bad && !f->array)
                inf->bad = true;
            if (!f->array) {
                fmin = sub->min_size;
                ops = sat_add(ops, sub->nops);
            }
        }
        if (f->array)
            fmin = 1;
        min = sat_add(min, fmin);
        ops = sat_add(ops, 1);
    }
    if (ops > JFR_MAX_TYPE_OPS)
        inf->bad = true;
    inf->min_size = min;
    inf->nops = ops;
    inf->nvarints = flat ? t->nfields : 0;
    color[ti] = 2;
}

/* jdk.types.NAME, or in a format 1.0 chunk (JDK 9, 10) com.oracle.jfr.types.NAME */
static const jfr_type *jdk_type(const jfr_metadata *pub, const char *name) {
    char full[64];
    snprintf(full, sizeof full, "jdk.types.%s", name);
    const jfr_type *t = jfr_metadata_type_named(pub, full);
    if (!t) {
        snprintf(full, sizeof full, "com.oracle.jfr.types.%s", name);
        t = jfr_metadata_type_named(pub, full);
    }
    return t;
}

/* The types and field indexes the helpers (helpers.c) use, and the per-type
 * thread and stack field indexes: found once per metadata. */
static void known_init(jfr_mdtab *m) {
    jfr_known *k = &m->known;
    const jfr_metadata *pub = &m->pub;
    k->thread = jfr_metadata_type_named(pub, "java.lang.Thread");
    k->stacktrace = jdk_type(pub, "StackTrace");
    k->frame = jdk_type(pub, "StackFrame");
    k->method = jdk_type(pub, "Method");
    k->klass = jfr_metadata_type_named(pub, "java.lang.Class");
    k->th_os_name = jfr_type_field_index(k->thread, "osName");
    k->th_os_id = jfr_type_field_index(k->thread, "osThreadId");
    k->th_java_name = jfr_type_field_index(k->thread, "javaName");
    k->th_java_id = jfr_type_field_index(k->thread, "javaThreadId");
    k->st_truncated = jfr_type_field_index(k->stacktrace, "truncated");
    k->st_frames = jfr_type_field_index(k->stacktrace, "frames");
    k->fr_method = jfr_type_field_index(k->frame, "method");
    k->fr_line = jfr_type_field_index(k->frame, "lineNumber");
    k->fr_bci = jfr_type_field_index(k->frame, "bytecodeIndex");
    k->fr_type = jfr_type_field_index(k->frame, "type");
    k->m_type = jfr_type_field_index(k->method, "type");
    k->m_name = jfr_type_field_index(k->method, "name");
    k->m_desc = jfr_type_field_index(k->method, "descriptor");
    k->c_name = jfr_type_field_index(k->klass, "name");
    for (uint32_t i = 0; i < pub->ntypes; i++) {
        const jfr_type *t = &m->types[i];
        int32_t th = jfr_type_field_index(t, "eventThread");
        if (th < 0)
            th = jfr_type_field_index(t, "sampledThread");
        m->tinfo[i].thread_field = th;
        m->tinfo[i].stack_field = jfr_type_field_index(t, "stackTrace");
    }
}

/* Step 1: the record's header, its string table and its element tree;
 * *root receives the root element. */
static jfr_status read_tree(mdparse *m, const uint8_t *p, uint32_t *root) {
    jfr_status s;
    uint64_t v;
    uint32_t nstr;
    if (!jfr__cur_long(&m->cur, &v) || !jfr__cur_long(&m->cur, &v) ||
        !jfr__cur_long(&m->cur, &m->md->pub.metadata_id))
        return fail_at(m, p, "header truncated");
    const uint8_t *at = m->cur.p;
    if (!jfr__cur_count(&m->cur, &nstr) || nstr > (size_t)(m->cur.end - m->cur.p))
        return fail_at(m, at, "string count out of range");
    m->str = jfr__calloc(m->a, (size_t)(nstr ? nstr : 1) * sizeof *m->str);
    if (!m->str)
        return JFR_NOMEM;
    m->nstr = nstr;
    for (uint32_t i = 0; i < nstr; i++)
        if ((s = read_string(m, &m->str[i])))
            return s;
    *root = 0; /* as ch in read_element */
    return read_element(m, 0, root);
}

/* Step 2: the root's <metadata> element (*meta) and its <region>. */
static jfr_status read_root(mdparse *m, uint32_t root, const node **meta) {
    jfr_mdtab *md = m->md;
    const node *rn = &m->nodes[root];
    *meta = NULL;
    FOR_CHILDREN(m, rn, c) {
        const char *nm = nname(m, c);
        if (strcmp(nm, "metadata") == 0 && !*meta)
            *meta = c;
        else if (strcmp(nm, "region") == 0) {
            const char *g = attr(m, c, "gmtOffset"), *d = attr(m, c, "dst");
            md->pub.gmt_offset_ms = g ? strtoll(g, NULL, 10) : 0;
            md->pub.dst_ms = d ? strtoll(d, NULL, 10) : 0;
            md->pub.locale = attr(m, c, "locale");
        }
    }
    return *meta ? JFR_OK : fail(m, "no <metadata> element");
}

/* Step 3: the tables of one type per <class>; *tptr receives the array of
 * pointers that becomes pub.types. */
static jfr_status alloc_types(mdparse *m, const node *meta, const jfr_type ***tptr) {
    const jfr_allocator *a = m->a;
    jfr_mdtab *md = m->md;
    uint32_t ntypes = 0;
    FOR_CHILDREN(m, meta, c) if (strcmp(nname(m, c), "class") == 0) ntypes++;
    md->types = jfr__arena_alloc(a, &md->arena, (ntypes ? ntypes : 1) * sizeof(jfr_type), _Alignof(jfr_type));
    *tptr = jfr__arena_alloc(a, &md->arena, (ntypes ? ntypes : 1) * sizeof(jfr_type *), _Alignof(jfr_type *));
    md->tinfo = jfr__calloc(a, (ntypes ? ntypes : 1) * sizeof(jfr_tinfo));
    md->pub.ntypes = ntypes; /* metadata_free sizes tinfo by it */
    uint32_t cap = 16;
    while (cap < ntypes * 2u)
        cap *= 2;
    md->id_slots = jfr__calloc(a, cap * sizeof(uint32_t));
    md->id_mask = cap - 1;
    if (!md->types || !*tptr || !md->tinfo || !md->id_slots)
        return JFR_NOMEM;
    return JFR_OK;
}

/* Step 4 (pass 1): each class's name, id and kind, indexed by id. */
static jfr_status read_classes(mdparse *m, const node *meta, const jfr_type **tptr) {
    jfr_mdtab *md = m->md;
    uint32_t ti = 0;
    FOR_CHILDREN(m, meta, c) {
        if (strcmp(nname(m, c), "class") != 0)
            continue;
        jfr_type *t = &md->types[ti];
        memset(t, 0, sizeof *t);
        t->index = ti;
        t->name = attr(m, c, "name");
        if (!t->name || !parse_u64(attr(m, c, "id"), &t->id))
            return fail(m, "class without name or id");
        if (jfr__md_type_by_id(md, t->id))
            return fail(m, "duplicate type id %llu", (unsigned long long)t->id);
        t->super_type = attr(m, c, "superType");
        const char *simple = attr(m, c, "simpleType");
        t->simple = simple && strcmp(simple, "true") == 0;
        t->is_event = t->super_type && strcmp(t->super_type, "jdk.jfr.Event") == 0;
        uint32_t h = id_hash(t->id) & md->id_mask;
        while (md->id_slots[h])
            h = (h + 1) & md->id_mask;
        md->id_slots[h] = ti + 1;
        tptr[ti] = t;
        if (strcmp(t->name, "java.lang.String") == 0)
            md->t_string = t;
        ti++;
    }
    md->pub.types = tptr;
    return JFR_OK;
}

/* A <field> element f of type t. */
static jfr_status read_field(mdparse *m, const node *f, const jfr_type *t, jfr_field *fd,
                             uint32_t fi) {
    uint64_t tid;
    const jfr_type *ft;
    memset(fd, 0, sizeof *fd);
    fd->name = attr(m, f, "name");
    if (!fd->name || !parse_u64(attr(m, f, "class"), &tid) ||
        !(ft = jfr__md_type_by_id(m->md, tid)))
        return fail(m, "field %s.%s has an unknown type", t->name, fd->name ? fd->name : "?");
    fd->type = ft;
    fd->index = fi;
    const char *dim = attr(m, f, "dimension");
    if (dim && strcmp(dim, "0") != 0) {
        if (strcmp(dim, "1") != 0)
            return fail(m, "field %s.%s: dimension %s unsupported", t->name, fd->name, dim);
        fd->array = true;
    }
    fd->pooled = attr(m, f, "constantPool") != NULL;
    return read_annotations(m, f, &fd->nannotations, &fd->annotations, &fd->label,
                            &fd->description, &fd->units);
}

/* A <setting> element f. */
static jfr_status read_setting(mdparse *m, const node *f, jfr_setting *st) {
    uint64_t tid;
    memset(st, 0, sizeof *st);
    st->name = attr(m, f, "name");
    st->default_value = attr(m, f, "defaultValue");
    st->type = parse_u64(attr(m, f, "class"), &tid) ? jfr__md_type_by_id(m->md, tid) : NULL;
    const char *l = NULL, *d = NULL;
    uint32_t u = 0;
    return read_annotations(m, f, &st->nannotations, &st->annotations, &l, &d, &u);
}

/* The fields, settings and annotations of the <class> element c (type t). */
static jfr_status read_members(mdparse *m, const node *c, jfr_type *t, jfr_tinfo *inf) {
    const jfr_allocator *a = m->a;
    jfr_mdtab *md = m->md;
    jfr_status s;
    uint32_t nf = 0, ns = 0;
    FOR_CHILDREN(m, c, f) {
        if (strcmp(nname(m, f), "field") == 0) nf++;
        else if (strcmp(nname(m, f), "setting") == 0) ns++;
    }
    jfr_field *fields = jfr__arena_alloc(a, &md->arena, (nf ? nf : 1) * sizeof *fields, _Alignof(jfr_field));
    jfr_setting *settings = jfr__arena_alloc(a, &md->arena, (ns ? ns : 1) * sizeof *settings, _Alignof(jfr_setting));
    inf->ops = jfr__arena_alloc(a, &md->arena, nf ? nf : 1, 1);
    if (!fields || !settings || !inf->ops)
        return JFR_NOMEM;
    uint32_t fi = 0, si = 0;
    FOR_CHILDREN(m, c, f) {
        const char *en = nname(m, f);
        if (strcmp(en, "field") == 0) {
            if ((s = read_field(m, f, t, &fields[fi], fi)))
                return s;
            fi++;
        } else if (strcmp(en, "setting") == 0) {
            if ((s = read_setting(m, f, &settings[si++])))
                return s;
        }
    }
    t->nfields = nf;
    t->fields = fields;
    t->nsettings = ns;
    t->settings = settings;
    if ((s = read_annotations(m, c, &t->nannotations, &t->annotations, &t->label,
                              &t->description, &t->units)))
        return s;
    t->base = nf == 0 ? base_of(t->name) : JFR_BASE_STRUCT;
    inf->has_duration = nf > 1 && strcmp(fields[1].name, "duration") == 0;
    return JFR_OK;
}

/* Step 5 (pass 2): every class's members. */
static jfr_status read_all_members(mdparse *m, const node *meta) {
    jfr_status s;
    uint32_t ti = 0;
    FOR_CHILDREN(m, meta, c) {
        if (strcmp(nname(m, c), "class") != 0)
            continue;
        if ((s = read_members(m, c, &m->md->types[ti], &m->md->tinfo[ti])))
            return s;
        ti++;
    }
    return JFR_OK;
}

/* Step 6: the decode ops of every field, and each type's plan (*color: the
 * marks of the walk, freed by the caller). */
static jfr_status plan_types(const jfr_allocator *a, jfr_mdtab *md, uint8_t **color_out) {
    uint32_t ntypes = md->pub.ntypes;
    for (uint32_t i = 0; i < ntypes; i++)
        for (uint32_t f = 0; f < md->types[i].nfields; f++)
            md->tinfo[i].ops[f] = (uint8_t)(op_of(&md->types[i].fields[f]) |
                                            (md->types[i].fields[f].array ? JFR_OP_ARRAY : 0));
    uint8_t *color = *color_out = jfr__calloc(a, ntypes ? ntypes : 1);
    if (!color)
        return JFR_NOMEM;
    for (uint32_t i = 0; i < ntypes; i++)
        plan_type(md, i, color, 0);
    return JFR_OK;
}

/* Step 7: ids are small in every writer seen (HotSpot < 10^4,
 * async-profiler < 10^3): a direct table makes the per-record lookup one
 * load. */
static jfr_status index_ids(const jfr_allocator *a, jfr_mdtab *md) {
    uint32_t ntypes = md->pub.ntypes;
    uint64_t maxid = 0;
    for (uint32_t i = 0; i < ntypes; i++)
        if (md->types[i].id > maxid)
            maxid = md->types[i].id;
    if (!ntypes || maxid >= 65536)
        return JFR_OK;
    /* NOLINTBEGIN(bugprone-sizeof-expression): arrays of pointers */
    md->by_id = jfr__calloc(a, (size_t)(maxid + 1) * sizeof *md->by_id);
    md->ev_by_id = jfr__calloc(a, (size_t)(maxid + 1) * sizeof *md->ev_by_id);
    /* NOLINTEND(bugprone-sizeof-expression) */
    md->nby_id = (uint32_t)maxid + 1;
    if (!md->by_id || !md->ev_by_id)
        return JFR_NOMEM;
    for (uint32_t i = 0; i < ntypes; i++) {
        const jfr_type *t = &md->types[i];
        md->by_id[t->id] = t;
        /* records of type 0 and 1 are metadata and checkpoints, whatever
         * class the metadata gives those ids */
        md->ev_by_id[t->id] = t->is_event && t->id > 1 ? t : NULL;
    }
    return JFR_OK;
}

jfr_status jfr__metadata_compile(const jfr_allocator *a, const uint8_t *p,
                                 const uint8_t *end, bool compressed,
                                 uint64_t fingerprint, jfr_mdtab **out,
                                 char *why, size_t whylen, uint64_t *err_off) {
    mdparse m = {.a = a, .cur = {p, end, !compressed, p, 0}, .why = why, .whylen = whylen};
    jfr_mdtab *md = jfr__calloc(a, sizeof *md);
    if (!md)
        return JFR_NOMEM;
    m.md = md;
    md->pub.fingerprint = fingerprint;
    uint32_t root;
    const node *meta;
    const jfr_type **tptr;
    uint8_t *color = NULL;
    jfr_status s = read_tree(&m, p, &root);
    if (!s)
        s = read_root(&m, root, &meta);
    if (!s)
        s = alloc_types(&m, meta, &tptr);
    if (!s)
        s = read_classes(&m, meta, tptr);
    if (!s)
        s = read_all_members(&m, meta);
    if (!s)
        s = plan_types(a, md, &color);
    if (!s)
        s = index_ids(a, md);
    if (!s)
        known_init(md);
    jfr__free(a, color, md->pub.ntypes ? md->pub.ntypes : 1);
    if (m.str)
        jfr__free(a, m.str, (size_t)(m.nstr ? m.nstr : 1) * sizeof *m.str);
    jfr__free(a, m.nodes, (size_t)m.capnodes * sizeof(node));
    jfr__free(a, m.attrs, (size_t)m.capattrs * sizeof(uint32_t));
    if (s) {
        *err_off = m.err_at ? (uint64_t)(m.err_at - p) : UINT64_MAX;
        jfr__metadata_free(a, md);
        return s;
    }
    *out = md;
    return JFR_OK;
}

void jfr__metadata_free(const jfr_allocator *a, jfr_mdtab *m) {
    if (!m)
        return;
    jfr__free(a, m->tinfo, (m->pub.ntypes ? m->pub.ntypes : 1) * sizeof(jfr_tinfo));
    jfr__free(a, m->id_slots, ((size_t)m->id_mask + 1) * sizeof(uint32_t));
    /* NOLINTBEGIN(bugprone-sizeof-expression): arrays of pointers */
    jfr__free(a, m->by_id, (size_t)m->nby_id * sizeof *m->by_id);
    jfr__free(a, m->ev_by_id, (size_t)m->nby_id * sizeof *m->ev_by_id);
    /* NOLINTEND(bugprone-sizeof-expression) */
    jfr__arena_free(a, &m->arena);
    jfr__free(a, m, sizeof *m);
}

/* ------------------------------------------------------------ public lookups */

const jfr_type *jfr_metadata_type_named(const jfr_metadata *m, const char *name) {
    if (!m || !name)
        return NULL;
    for (uint32_t i = 0; i < m->ntypes; i++)
        if (strcmp(m->types[i]->name, name) == 0)
            return m->types[i];
    return NULL;
}

const jfr_type *jfr_metadata_type_by_id(const jfr_metadata *m, uint64_t id) {
    return m ? jfr__md_type_by_id((const jfr_mdtab *)m, id) : NULL;
}

int32_t jfr_type_field_index(const jfr_type *t, const char *name) {
    if (!t || !name)
        return JFR_NO_FIELD;
    for (uint32_t i = 0; i < t->nfields; i++)
        if (strcmp(t->fields[i].name, name) == 0)
            return (int32_t)i;
    return JFR_NO_FIELD;
}

const jfr_annotation *jfr_annotation_find(const jfr_annotation *a, uint32_t n,
                                          const char *type_name) {
    for (uint32_t i = 0; a && i < n; i++)
        if (strcmp(a[i].type->name, type_name) == 0)
            return &a[i];
    return NULL;
}
