/*
 * profile.c — stack aggregation (see profile.h for the naming rules).
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#include "profile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

/* ------------------------------------------------------------- hash map */

static uint64_t mix64(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static uint64_t key_hash(const uint64_t k[4]) {
    return mix64(k[0] ^ mix64(k[1] ^ mix64(k[2] ^ mix64(k[3] + 0x9E3779B97F4A7C15ull))));
}

/* The slot holding k, or the empty slot where it would go. */
static size_t map_slot(const prof_map *m, const uint64_t k[4]) {
    size_t mask = m->cap - 1, i = (size_t)key_hash(k) & mask;
    while (m->vals[i]) {
        const uint64_t *s = m->keys + 4 * i;
        if (s[0] == k[0] && s[1] == k[1] && s[2] == k[2] && s[3] == k[3])
            return i;
        i = (i + 1) & mask;
    }
    return i;
}

uint32_t prof_map_get(const prof_map *m, const uint64_t k[4]) {
    return m->cap ? m->vals[map_slot(m, k)] : 0;
}

static bool map_grow(prof_map *m) {
    size_t ncap = m->cap ? m->cap * 2 : 1024;
    prof_map n = {calloc(ncap, 4 * sizeof(uint64_t)), calloc(ncap, sizeof(uint32_t)), ncap, m->n};
    if (!n.keys || !n.vals) {
        free(n.keys);
        free(n.vals);
        return false;
    }
    for (size_t i = 0; i < m->cap; i++) {
        if (!m->vals[i])
            continue;
        size_t j = map_slot(&n, m->keys + 4 * i);
        memcpy(n.keys + 4 * j, m->keys + 4 * i, 4 * sizeof(uint64_t));
        n.vals[j] = m->vals[i];
    }
    free(m->keys);
    free(m->vals);
    *m = n;
    return true;
}

/* v must be non-zero. */
bool prof_map_put(prof_map *m, const uint64_t k[4], uint32_t v) {
    if ((m->n + 1) * 4 > m->cap * 3 && !map_grow(m))
        return false;
    size_t i = map_slot(m, k);
    if (!m->vals[i]) {
        memcpy(m->keys + 4 * i, k, 4 * sizeof(uint64_t));
        m->n++;
    }
    m->vals[i] = v;
    return true;
}

void prof_map_clear(prof_map *m) {
    if (m->n) {
        memset(m->vals, 0, m->cap * sizeof(uint32_t));
        m->n = 0;
    }
}

void prof_map_free(prof_map *m) {
    free(m->keys);
    free(m->vals);
    memset(m, 0, sizeof *m);
}

static bool grow(void **buf, size_t *cap, size_t need, size_t elem) {
    if (need <= *cap)
        return true;
    size_t n = *cap ? *cap : 64;
    while (n < need)
        n *= 2;
    void *b = realloc(*buf, n * elem);
    if (!b)
        return false;
    *buf = b;
    *cap = n;
    return true;
}

/* ------------------------------------------------------------- names */

/* Intern s[0..len) and return its id; UINT32_MAX on no memory. Collisions
 * of the 64-bit hash are resolved by comparing the strings (a salt moves
 * the colliding string to another key). */
static uint32_t name_intern(prof *p, const char *s, size_t len) {
    uint64_t k[4] = {XXH3_64bits(s, len), len, 0, 0};
    for (uint32_t v; (v = prof_map_get(&p->name_map, k)) != 0; k[2]++) {
        if (p->name_len[v - 1] == len && memcmp(prof_name(p, v - 1), s, len) == 0)
            return v - 1;
        if (k[2] > 64)
            return UINT32_MAX;
    }
    size_t cap32 = p->names_cap;
    if (len > UINT32_MAX / 2 || p->arena_len + len + 1 > UINT32_MAX ||
        !grow((void **)&p->arena, &p->arena_cap, p->arena_len + len + 1, 1))
        return UINT32_MAX;
    if (p->nnames == cap32) {
        size_t c1 = cap32, c2 = cap32;
        if (!grow((void **)&p->name_off, &c1, cap32 + 1, sizeof(uint32_t)))
            return UINT32_MAX;
        if (!grow((void **)&p->name_len, &c2, cap32 + 1, sizeof(uint32_t)))
            return UINT32_MAX;
        if (c1 != c2)
            return UINT32_MAX;
        p->names_cap = (uint32_t)c1;
    }
    uint32_t id = p->nnames;
    memcpy(p->arena + p->arena_len, s, len);
    p->arena[p->arena_len + len] = '\0';
    p->name_off[id] = (uint32_t)p->arena_len;
    p->name_len[id] = (uint32_t)len;
    if (!prof_map_put(&p->name_map, k, id + 1))
        return UINT32_MAX;
    p->arena_len += len + 1;
    p->nnames++;
    return id;
}

/* Scratch string builder. */
static bool sb_put(prof *p, size_t *len, const char *s, size_t n) {
    if (!grow((void **)&p->sbuf, &p->sbuf_cap, *len + n + 1, 1))
        return false;
    if (n)
        memcpy(p->sbuf + *len, s, n);
    *len += n;
    return true;
}

/* ------------------------------------------------------------- setup */

void prof_init(prof *p) {
    memset(p, 0, sizeof *p);
    p->start_nanos = INT64_MAX;
    p->end_nanos = INT64_MIN;
    /* node 0: the root */
    p->nodes = calloc(64, sizeof(prof_node));
    if (!p->nodes) {
        p->nomem = true;
        return;
    }
    p->nodes_cap = 64;
    p->nnodes = 1;
    if (name_intern(p, "all", 3) == UINT32_MAX) /* name 0 */
        p->nomem = true;
}

void prof_free(prof *p) {
    for (uint32_t i = 0; i < p->nsubs; i++)
        free(p->subs[i].name);
    free(p->arena);
    free(p->name_off);
    free(p->name_len);
    prof_map_free(&p->name_map);
    free(p->nodes);
    prof_map_free(&p->child_map);
    prof_map_free(&p->stack_cache);
    free(p->mnodes);
    free(p->sbuf);
    free(p->path);
    memset(p, 0, sizeof *p);
}

static const struct {
    const char *name;
    prof_rule rule;
} known_types[] = {
    {"jdk.ExecutionSample", PROF_RULE_SAMPLE},
    {"jdk.NativeMethodSample", PROF_RULE_SAMPLE},
    {"jdk.ObjectAllocationInNewTLAB", PROF_RULE_TLAB},
    {"jdk.ObjectAllocationOutsideTLAB", PROF_RULE_OUTSIDE},
    {"jdk.ObjectAllocationSample", PROF_RULE_ALLOC_SAMPLE},
    {"jdk.JavaMonitorEnter", PROF_RULE_MONITOR},
    {"jdk.ThreadPark", PROF_RULE_PARK},
};

static bool add_sub(prof *p, const char *name, size_t len) {
    for (uint32_t i = 0; i < p->nsubs; i++)
        if (strlen(p->subs[i].name) == len && memcmp(p->subs[i].name, name, len) == 0)
            return true;
    if (p->nsubs == PROF_MAX_TYPES) {
        snprintf(p->err, sizeof p->err, "too many event types (at most %d)", PROF_MAX_TYPES);
        return false;
    }
    prof_sub *s = &p->subs[p->nsubs];
    memset(s, 0, sizeof *s);
    s->owner = p;
    s->rule = PROF_RULE_COUNT;
    s->name = malloc(len + 1);
    if (!s->name) {
        snprintf(p->err, sizeof p->err, "out of memory");
        return false;
    }
    memcpy(s->name, name, len);
    s->name[len] = '\0';
    for (size_t k = 0; k < sizeof known_types / sizeof known_types[0]; k++)
        if (strcmp(known_types[k].name, s->name) == 0)
            s->rule = known_types[k].rule;
    p->nsubs++;
    return true;
}

bool prof_select(prof *p, const char *spec) {
    static const struct {
        const char *word;
        const char *types[3];
    } words[] = {
        {"cpu", {"jdk.ExecutionSample"}},
        {"alloc",
         {"jdk.ObjectAllocationInNewTLAB", "jdk.ObjectAllocationOutsideTLAB",
          "jdk.ObjectAllocationSample"}},
        {"lock", {"jdk.JavaMonitorEnter", "jdk.ThreadPark"}},
        {"wall", {"jdk.NativeMethodSample"}},
    };
    const char *s = spec;
    while (*s) {
        const char *e = strchr(s, ',');
        size_t len = e ? (size_t)(e - s) : strlen(s);
        bool done = false;
        for (size_t w = 0; w < sizeof words / sizeof words[0] && !done; w++) {
            if (strlen(words[w].word) != len || memcmp(words[w].word, s, len) != 0)
                continue;
            for (int t = 0; t < 3 && words[w].types[t]; t++)
                if (!add_sub(p, words[w].types[t], strlen(words[w].types[t])))
                    return false;
            done = true;
        }
        if (!done) {
            if (len == 0 || !memchr(s, '.', len)) {
                snprintf(p->err, sizeof p->err,
                         "unknown event '%.*s' (cpu, alloc, lock, wall or a type name)",
                         (int)(len > 60 ? 60 : len), s);
                return false;
            }
            if (!add_sub(p, s, len))
                return false;
        }
        if (!e)
            break;
        s = e + 1;
    }
    if (p->nsubs == 0) {
        snprintf(p->err, sizeof p->err, "no event type given");
        return false;
    }
    return true;
}

static int on_prof_event(jfr_parser *parser, const jfr_event *e, void *user) {
    (void)parser;
    prof_sub *s = user;
    prof_add(s->owner, e, 0);
    return s->owner->nomem ? JFR_CB_STOP : JFR_CB_CONTINUE;
}

jfr_status prof_subscribe(prof *p, jfr_parser *parser) {
    for (uint32_t i = 0; i < p->nsubs; i++) {
        jfr_status st = jfr_parser_on(parser, p->subs[i].name, on_prof_event, &p->subs[i]);
        if (st)
            return st;
    }
    return JFR_OK;
}

void prof_reset(prof *p) {
    prof_map_clear(&p->child_map);
    prof_map_clear(&p->stack_cache);
    free(p->mnodes);
    p->mnodes = NULL;
    p->nmnodes = 0;
    memset(&p->nodes[0], 0, sizeof p->nodes[0]);
    p->nnodes = 1;
    p->events = p->skipped = 0;
    p->start_nanos = INT64_MAX;
    p->end_nanos = INT64_MIN;
    for (uint32_t i = 0; i < p->nsubs; i++)
        p->subs[i].type = NULL;
}

void prof_chunk_begin(prof *p, const jfr_chunk_info *c) {
    if (c->start_nanos < p->start_nanos)
        p->start_nanos = c->start_nanos;
    if (c->duration_nanos >= 0 && c->start_nanos + c->duration_nanos > p->end_nanos)
        p->end_nanos = c->start_nanos + c->duration_nanos;
}

void prof_chunk_end(prof *p) {
    /* constant keys are per chunk */
    prof_map_clear(&p->stack_cache);
    for (uint32_t i = 0; i < p->nsubs; i++)
        p->subs[i].type = NULL;
}

/* ------------------------------------------------------------- folding */

static void resolve(prof_sub *s, const jfr_type *t) {
    static const char *const class_field[] = {
        [PROF_RULE_TLAB] = "objectClass",     [PROF_RULE_OUTSIDE] = "objectClass",
        [PROF_RULE_ALLOC_SAMPLE] = "objectClass", [PROF_RULE_MONITOR] = "monitorClass",
        [PROF_RULE_PARK] = "parkedClass",
    };
    s->type = t;
    s->stack_idx = jfr_type_field_index(t, "stackTrace");
    s->thread_idx = jfr_type_field_index(t, s->rule == PROF_RULE_SAMPLE ? "sampledThread"
                                                                        : "eventThread");
    s->class_idx = s->rule < sizeof class_field / sizeof class_field[0] && class_field[s->rule]
                       ? jfr_type_field_index(t, class_field[s->rule])
                       : -1;
    s->w_idx = s->w2_idx = -1;
    switch (s->rule) {
    case PROF_RULE_TLAB:
        s->w_idx = jfr_type_field_index(t, "tlabSize");
        s->w2_idx = jfr_type_field_index(t, "allocationSize");
        break;
    case PROF_RULE_OUTSIDE:
        s->w_idx = jfr_type_field_index(t, "allocationSize");
        break;
    case PROF_RULE_ALLOC_SAMPLE:
        s->w_idx = jfr_type_field_index(t, "weight");
        break;
    default:
        break;
    }
}

static uint8_t frame_type_code(const jfr_frame *f) {
    static const struct {
        const char *s;
        uint8_t t;
    } map[] = {{"Interpreted", PROF_T_INTERPRETED}, {"JIT compiled", PROF_T_JIT},
               {"Inlined", PROF_T_INLINED},         {"Native", PROF_T_NATIVE},
               {"C++", PROF_T_CPP},                 {"Kernel", PROF_T_KERNEL},
               {"C1 compiled", PROF_T_C1}};
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (f->frame_type && strlen(map[i].s) == f->frame_type_len &&
            memcmp(map[i].s, f->frame_type, f->frame_type_len) == 0)
            return map[i].t;
    return PROF_T_JIT; /* unknown or absent: treat as Java code */
}

/* Child of `parent` with this name/type/line, created when missing;
 * UINT32_MAX on no memory. */
static uint32_t child(prof *p, uint32_t parent, uint32_t name, uint8_t type, int32_t line,
                      bool thread) {
    uint64_t k[4] = {parent, name, type, (uint32_t)line};
    uint32_t v = prof_map_get(&p->child_map, k);
    if (v)
        return v;
    if (p->nnodes == UINT32_MAX - 1)
        return UINT32_MAX;
    size_t cap = p->nodes_cap;
    if (!grow((void **)&p->nodes, &cap, (size_t)p->nnodes + 1, sizeof(prof_node)))
        return UINT32_MAX;
    p->nodes_cap = (uint32_t)cap;
    uint32_t id = p->nnodes;
    prof_node *n = &p->nodes[id];
    memset(n, 0, sizeof *n);
    n->parent = parent;
    n->name = name;
    n->type = type;
    n->line = line;
    n->thread = thread;
    if (!prof_map_put(&p->child_map, k, id))
        return UINT32_MAX;
    p->nnodes++;
    return id;
}

static void note_error(prof *p, const jfr_event *e, jfr_status st) {
    if (!p->err[0])
        snprintf(p->err, sizeof p->err,
                 "%s: cannot read the stack trace: %s (chunk %llu, offset %llu)", e->type->name,
                 jfr_status_str(st), (unsigned long long)e->chunk_index,
                 (unsigned long long)e->offset);
}

/* The name of a thread frame, into p->sbuf; returns its length. */
static size_t thread_frame(prof *p, const jfr_value *tv, uint64_t key) {
    jfr_thread th;
    char num[32];
    size_t len = 0;
    int n = snprintf(num, sizeof num, "tid=%llu]", (unsigned long long)key);
    if (jfr_value_thread(tv, &th) != JFR_OK || !th.present ||
        (!th.java_name && !th.os_name)) {
        sb_put(p, &len, "[", 1);
        sb_put(p, &len, num, (size_t)n);
        return len;
    }
    const char *nm = th.java_name ? th.java_name : th.os_name;
    size_t nl = th.java_name ? th.java_name_len : th.os_name_len;
    if (nl >= 5 && memcmp(nm, "[tid=", 5) == 0) {
        sb_put(p, &len, nm, nl);
        return len;
    }
    sb_put(p, &len, "[", 1);
    sb_put(p, &len, nm, nl);
    sb_put(p, &len, " ", 1);
    sb_put(p, &len, num, (size_t)n);
    return len;
}

/* The Java name of a class ("java.lang.String", "byte[][]"), into p->sbuf. */
static size_t class_frame(prof *p, const jfr_value *cv) {
    const char *s = NULL;
    size_t n = 0, len = 0;
    if (jfr_value_class_name(cv, &s, &n) != JFR_OK || !s) {
        sb_put(p, &len, "null", 4);
        return len;
    }
    size_t depth = 0;
    while (depth < n && s[depth] == '[')
        depth++;
    const char *prim = NULL;
    size_t start = depth, end = n;
    if (depth > 0 && depth < n) {
        switch (s[depth]) {
        case 'B': prim = "byte"; break;
        case 'C': prim = "char"; break;
        case 'S': prim = "short"; break;
        case 'I': prim = "int"; break;
        case 'J': prim = "long"; break;
        case 'Z': prim = "boolean"; break;
        case 'F': prim = "float"; break;
        case 'D': prim = "double"; break;
        case 'L':
            start++;
            if (end > start)
                end--; /* the ';' */
            break;
        default: break;
        }
    }
    if (prim) {
        sb_put(p, &len, prim, strlen(prim));
    } else {
        size_t at = len;
        sb_put(p, &len, s + start, end - start);
        for (size_t i = at; i < len; i++)
            if (p->sbuf[i] == '/')
                p->sbuf[i] = '.';
    }
    for (size_t i = 0; i < depth; i++)
        sb_put(p, &len, "[]", 2);
    return len;
}

/* Walk the stack (and the thread and class values) into the trie; returns
 * the leaf node or UINT32_MAX (no memory, or a decode error: p->err). */
static uint32_t build_path(prof *p, const jfr_event *e, jfr_stack *st, const jfr_value *tv,
                           uint64_t tkey, const jfr_value *cv, uint8_t ctype) {
    uint32_t node = 0;
    if (tv) {
        size_t len = thread_frame(p, tv, tkey);
        uint32_t nm = name_intern(p, p->sbuf, len);
        if (nm == UINT32_MAX || (node = child(p, node, nm, PROF_T_NATIVE, 0, true)) == UINT32_MAX)
            goto nomem;
    }
    /* frames are read top first (cheap in that order), inserted bottom first */
    if (!grow((void **)&p->path, &p->path_cap, 3 * (size_t)st->nframes + 3, sizeof(uint32_t)))
        goto nomem;
    for (uint32_t i = 0; i < st->nframes; i++) {
        jfr_frame f;
        jfr_status s = jfr_stack_frame(st, i, &f);
        if (s != JFR_OK) {
            note_error(p, e, s);
            return UINT32_MAX;
        }
        uint8_t t = frame_type_code(&f);
        size_t len = 0;
        bool ok;
        if (!f.class_name && !f.method_name) {
            ok = sb_put(p, &len, "unknown", 7);
        } else if (f.class_name_len == 0 || t == PROF_T_CPP || t == PROF_T_KERNEL) {
            ok = sb_put(p, &len, f.method_name, f.method_name_len);
        } else {
            ok = sb_put(p, &len, f.class_name, f.class_name_len);
            if (ok && p->dot)
                for (size_t k = 0; k < len; k++)
                    if (p->sbuf[k] == '/')
                        p->sbuf[k] = '.';
            if (ok && f.method_name_len)
                ok = sb_put(p, &len, ".", 1) && sb_put(p, &len, f.method_name, f.method_name_len);
        }
        uint32_t nm = ok ? name_intern(p, p->sbuf, len) : UINT32_MAX;
        if (nm == UINT32_MAX)
            goto nomem;
        p->path[3 * i] = nm;
        p->path[3 * i + 1] = t;
        p->path[3 * i + 2] = (uint32_t)(f.line > 0 ? f.line : 0);
    }
    for (uint32_t i = st->nframes; i-- > 0;) {
        node = child(p, node, p->path[3 * i], (uint8_t)p->path[3 * i + 1],
                     (int32_t)p->path[3 * i + 2], false);
        if (node == UINT32_MAX)
            goto nomem;
    }
    if (cv) {
        size_t len = class_frame(p, cv);
        uint32_t nm = name_intern(p, p->sbuf, len);
        if (nm == UINT32_MAX || (node = child(p, node, nm, ctype, 0, false)) == UINT32_MAX)
            goto nomem;
    }
    return node;
nomem:
    p->nomem = true;
    return UINT32_MAX;
}

static uint64_t int_field(const jfr_event *e, int32_t idx) {
    jfr_value v;
    if (idx < 0 || jfr_event_field(e, (uint32_t)idx, &v) != JFR_OK || v.kind != JFR_KIND_INT)
        return 0;
    return v.i < 0 ? 0 : (uint64_t)v.i;
}

void prof_add(prof *p, const jfr_event *e, uint64_t source) {
    prof_sub *s = NULL;
    for (uint32_t i = 0; i < p->nsubs && !s; i++)
        if (p->subs[i].type == e->type)
            s = &p->subs[i];
    if (!s) {
        /* first event of this type in the chunk: find the subscription by
         * name once, then by type pointer */
        for (uint32_t i = 0; i < p->nsubs && !s; i++)
            if (strcmp(p->subs[i].name, e->type->name) == 0)
                s = &p->subs[i];
        if (!s)
            return;
        resolve(s, e->type);
    }
    if (s->stack_idx < 0) {
        p->skipped++;
        return;
    }
    jfr_value sv, tv, cv;
    jfr_status st = jfr_event_field(e, (uint32_t)s->stack_idx, &sv);
    if (st != JFR_OK) {
        note_error(p, e, st);
        return;
    }
    if (sv.kind == JFR_KIND_NULL) {
        p->skipped++;
        return;
    }
    /* weight */
    uint64_t w = 1;
    uint8_t ctype = PROF_T_INLINED;
    switch (s->rule) {
    case PROF_RULE_TLAB:
        w = int_field(e, s->w_idx);
        if (w == 0) {
            w = int_field(e, s->w2_idx);
            ctype = PROF_T_KERNEL;
        }
        break;
    case PROF_RULE_OUTSIDE:
    case PROF_RULE_ALLOC_SAMPLE:
        w = int_field(e, s->w_idx);
        ctype = PROF_T_KERNEL;
        break;
    case PROF_RULE_MONITOR:
    case PROF_RULE_PARK:
        w = e->duration_nanos > 0 ? (uint64_t)e->duration_nanos : 0;
        break;
    default:
        break;
    }
    if (p->count)
        w = 1;
    bool cacheable = sv.pooled;
    bool have_thread = false, have_class = false;
    uint64_t tkey = 0, ckey = 0;
    if (p->threads) {
        have_thread = true;
        if (s->thread_idx < 0 || jfr_event_field(e, (uint32_t)s->thread_idx, &tv) != JFR_OK)
            tv.kind = JFR_KIND_NULL, tv.pooled = false, tv.key = 0;
        tkey = tv.pooled ? tv.key : 0;
        cacheable = cacheable && (tv.pooled || tv.kind == JFR_KIND_NULL);
    }
    if (s->class_idx >= 0 && jfr_event_field(e, (uint32_t)s->class_idx, &cv) == JFR_OK &&
        !(cv.kind == JFR_KIND_NULL && (!cv.pooled || cv.key == 0))) {
        have_class = true;
        ckey = cv.key;
        cacheable = cacheable && cv.pooled;
    }
    /* constant keys are per chunk of one source: the source is in the key */
    uint64_t k[4] = {sv.key, tkey, ckey,
                     (uint64_t)s->rule << 8 | (uint64_t)ctype << 2 | (uint64_t)have_class << 1 |
                         have_thread | source << 16};
    uint32_t leaf = cacheable ? prof_map_get(&p->stack_cache, k) : 0;
    if (!leaf) {
        jfr_stack stack;
        st = jfr_value_stack(&sv, &stack);
        if (st != JFR_OK) {
            note_error(p, e, st);
            return;
        }
        leaf = build_path(p, e, &stack, have_thread ? &tv : NULL, tkey, have_class ? &cv : NULL,
                          ctype);
        if (leaf == UINT32_MAX)
            return;
        if (leaf == 0) { /* empty stack and no extra frame: count at the root */
            p->nodes[0].self_count++;
            p->nodes[0].self_weight += w;
            p->events++;
            return;
        }
        if (cacheable && !prof_map_put(&p->stack_cache, k, leaf)) {
            p->nomem = true;
            return;
        }
    }
    p->nodes[leaf].self_count++;
    p->nodes[leaf].self_weight += w;
    p->events++;
}

/* ------------------------------------------------------------- merging */

static uint8_t type_class(uint8_t t) {
    return t == PROF_T_INTERPRETED || t == PROF_T_INLINED || t == PROF_T_C1 ? PROF_T_JIT : t;
}

bool prof_finish(prof *p) {
    if (p->nomem)
        return false;
    prof_node *n = p->nodes;
    for (uint32_t i = 0; i < p->nnodes; i++)
        n[i].total = 0;
    for (uint32_t i = p->nnodes; i-- > 1;) { /* children come after parents */
        n[i].total += n[i].self_weight;
        n[n[i].parent].total += n[i].total;
    }
    n[0].total += n[0].self_weight;
    uint32_t *mid = malloc((size_t)p->nnodes * sizeof *mid);
    free(p->mnodes);
    p->mnodes = calloc(p->nnodes, sizeof(prof_mnode));
    if (!mid || !p->mnodes) {
        free(mid);
        p->nomem = true;
        return false;
    }
    /* the per-chunk cache is done with: reuse it for the merged children */
    prof_map_clear(&p->stack_cache);
    prof_mnode *m = p->mnodes;
    m[0].total = n[0].total;
    m[0].self = n[0].self_weight;
    p->nmnodes = 1;
    mid[0] = 0;
    for (uint32_t i = 1; i < p->nnodes; i++) {
        uint32_t par = mid[n[i].parent];
        uint8_t cls = n[i].thread ? PROF_T_NATIVE : type_class(n[i].type);
        uint64_t k[4] = {par, n[i].name, cls, 1};
        uint32_t j = prof_map_get(&p->stack_cache, k);
        if (!j) {
            j = p->nmnodes++;
            m[j].parent = par;
            m[j].name = n[i].name;
            m[j].cls = cls;
            /* append, keeping the children in first-seen order */
            if (!m[par].first_child) {
                m[par].first_child = j;
            } else {
                uint32_t c = m[par].first_child;
                while (m[c].next_sibling)
                    c = m[c].next_sibling;
                m[c].next_sibling = j;
            }
            if (!prof_map_put(&p->stack_cache, k, j)) {
                free(mid);
                p->nomem = true;
                return false;
            }
        }
        mid[i] = j;
        m[j].total += n[i].total;
        m[j].self += n[i].self_weight;
        if (n[i].type == PROF_T_INTERPRETED)
            m[j].interpreted += n[i].total;
        else if (n[i].type == PROF_T_INLINED)
            m[j].inlined += n[i].total;
        else if (n[i].type == PROF_T_C1)
            m[j].c1 += n[i].total;
    }
    free(mid);
    return true;
}

uint8_t prof_mtype(const prof_mnode *m) {
    if (m->cls != PROF_T_JIT)
        return m->cls;
    if (m->inlined * 3 >= m->total)
        return PROF_T_INLINED;
    if (m->c1 * 2 >= m->total)
        return PROF_T_C1;
    if (m->interpreted * 2 >= m->total)
        return PROF_T_INTERPRETED;
    return PROF_T_JIT;
}

const char *prof_suffix(const prof_mnode *m) {
    static const char *const suffix[] = {"_[0]", "_[j]", "_[i]", "", "", "_[k]", "_[1]"};
    return suffix[prof_mtype(m)];
}

void prof_write_collapsed(const prof *p, outbuf *o) {
    const prof_mnode *m = p->mnodes;
    if (!m || p->nmnodes < 2)
        return;
    /* iterative pre-order walk; the line prefix is rebuilt from the path */
    size_t cap = 64, depth = 0;
    uint32_t *path = malloc(cap * sizeof *path);
    if (!path)
        return;
    uint32_t cur = m[0].first_child;
    while (cur) {
        if (depth == cap) {
            uint32_t *np = realloc(path, 2 * cap * sizeof *path);
            if (!np)
                break;
            path = np;
            cap *= 2;
        }
        path[depth] = cur;
        if (m[cur].self > 0) {
            for (size_t i = 0; i <= depth; i++) {
                if (i)
                    ob_putc(o, ';');
                const prof_mnode *x = &m[path[i]];
                ob_write(o, prof_name(p, x->name), p->name_len[x->name]);
                ob_puts(o, prof_suffix(x));
            }
            ob_putc(o, ' ');
            ob_u64(o, m[cur].self);
            ob_putc(o, '\n');
        }
        if (m[cur].first_child) {
            depth++;
            cur = m[cur].first_child;
            continue;
        }
        while (cur && !m[cur].next_sibling) {
            cur = m[cur].parent;
            if (cur == 0)
                break;
            depth--;
        }
        if (cur)
            cur = m[cur].next_sibling;
    }
    free(path);
}

void prof_value_type(const prof *p, const char **type, const char **unit) {
    prof_rule r = p->nsubs ? p->subs[0].rule : PROF_RULE_COUNT;
    if (p->count) {
        *type = "events";
        *unit = "count";
        return;
    }
    switch (r) {
    case PROF_RULE_SAMPLE:
        *type = "samples";
        *unit = "count";
        break;
    case PROF_RULE_TLAB:
    case PROF_RULE_OUTSIDE:
    case PROF_RULE_ALLOC_SAMPLE:
        *type = "alloc_space";
        *unit = "bytes";
        break;
    case PROF_RULE_MONITOR:
    case PROF_RULE_PARK:
        *type = "delay";
        *unit = "nanoseconds";
        break;
    default:
        *type = "events";
        *unit = "count";
        break;
    }
}
