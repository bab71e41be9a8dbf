/*
 * profile.c — stack aggregation (see profile.h for the naming rules); the
 * selection and the filters are parsed in profile_select.c.
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#include "profile.h"

#include <regex.h>
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

static bool map_grow(const jfr_allocator *a, prof_map *m) {
    size_t ncap = m->cap ? m->cap * 2 : 1024;
    if (ncap > SIZE_MAX / (4 * sizeof(uint64_t)))
        return false;
    prof_map n = {jfr__calloc(a, ncap * 4 * sizeof(uint64_t)),
                  jfr__calloc(a, ncap * sizeof(uint32_t)), ncap, m->n};
    if (!n.keys || !n.vals) {
        jfr__free(a, n.keys, ncap * 4 * sizeof(uint64_t));
        jfr__free(a, n.vals, ncap * sizeof(uint32_t));
        return false;
    }
    for (size_t i = 0; i < m->cap; i++) {
        if (!m->vals[i])
            continue;
        size_t j = map_slot(&n, m->keys + 4 * i);
        memcpy(n.keys + 4 * j, m->keys + 4 * i, 4 * sizeof(uint64_t));
        n.vals[j] = m->vals[i];
    }
    prof_map_free(a, m);
    *m = n;
    return true;
}

/* v must be non-zero. */
bool prof_map_put(const jfr_allocator *a, prof_map *m, const uint64_t k[4], uint32_t v) {
    if ((m->n + 1) * 4 > m->cap * 3 && !map_grow(a, m))
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

void prof_map_free(const jfr_allocator *a, prof_map *m) {
    jfr__free(a, m->keys, m->cap * 4 * sizeof(uint64_t));
    jfr__free(a, m->vals, m->cap * sizeof(uint32_t));
    memset(m, 0, sizeof *m);
}

/* Room for `need` elements in *buf (*cap of them; 64 at first, doubling). */
static bool grow(prof *p, void **buf, size_t *cap, size_t need, size_t elem) {
    return jfr__array_reserve(&p->alloc, buf, need - 1, cap, elem, 64);
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
    if (len > UINT32_MAX / 2 || p->arena_len + len + 1 > UINT32_MAX ||
        !grow(p, (void **)&p->arena, &p->arena_cap, p->arena_len + len + 1, 1))
        return UINT32_MAX;
    /* two arrays, each with its capacity: one may grow when the other is refused */
    size_t c1 = p->names_cap, c2 = p->name_len_cap;
    if (!grow(p, (void **)&p->name_off, &c1, (size_t)p->nnames + 1, sizeof(uint32_t)))
        return UINT32_MAX;
    p->names_cap = (uint32_t)c1;
    if (!grow(p, (void **)&p->name_len, &c2, (size_t)p->nnames + 1, sizeof(uint32_t)))
        return UINT32_MAX;
    p->name_len_cap = (uint32_t)c2;
    uint32_t id = p->nnames;
    memcpy(p->arena + p->arena_len, s, len);
    p->arena[p->arena_len + len] = '\0';
    p->name_off[id] = (uint32_t)p->arena_len;
    p->name_len[id] = (uint32_t)len;
    if (!prof_map_put(&p->alloc, &p->name_map, k, id + 1))
        return UINT32_MAX;
    p->arena_len += len + 1;
    p->nnames++;
    return id;
}

/* Scratch string builder. */
static bool sb_put(prof *p, size_t *len, const char *s, size_t n) {
    if (!grow(p, (void **)&p->sbuf, &p->sbuf_cap, *len + n + 1, 1))
        return false;
    if (n)
        memcpy(p->sbuf + *len, s, n);
    *len += n;
    return true;
}

/* ------------------------------------------------------------- setup */

void prof_init(prof *p, const jfr_allocator *a) {
    memset(p, 0, sizeof *p);
    if (a)
        p->alloc = *a;
    p->start_nanos = INT64_MAX;
    p->end_nanos = INT64_MIN;
    p->from_nanos = INT64_MIN;
    p->to_nanos = INT64_MAX;
    /* node 0: the root */
    p->nodes = jfr__calloc(&p->alloc, 64 * sizeof(prof_node));
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
    const jfr_allocator a = p->alloc;
    for (uint32_t i = 0; i < p->nsubs; i++) {
        jfr__free(&a, p->subs[i].name, strlen(p->subs[i].name) + 1);
        prof_map_free(&a, &p->subs[i].states);
    }
    for (uint32_t i = 0; i < p->nstates; i++)
        jfr__free(&a, p->states[i], strlen(p->states[i]) + 1);
    jfr__free(&a, p->states, p->nstates * sizeof *p->states);
    if (p->include)
        regfree(p->include);
    if (p->exclude)
        regfree(p->exclude);
    jfr__free(&a, p->include, sizeof(regex_t));
    jfr__free(&a, p->exclude, sizeof(regex_t));
    jfr__free(&a, p->mem, p->mem_cap * sizeof *p->mem);
    jfr__free(&a, p->live, p->live_cap * sizeof *p->live);
    prof_map_free(&a, &p->addr_map);
    jfr__free(&a, p->arena, p->arena_cap);
    jfr__free(&a, p->name_off, p->names_cap * sizeof *p->name_off);
    jfr__free(&a, p->name_len, p->name_len_cap * sizeof *p->name_len);
    prof_map_free(&a, &p->name_map);
    jfr__free(&a, p->nodes, p->nodes_cap * sizeof *p->nodes);
    prof_map_free(&a, &p->child_map);
    prof_map_free(&a, &p->stack_cache);
    jfr__free(&a, p->mnodes, p->mnodes_cap * sizeof *p->mnodes);
    jfr__free(&a, p->sbuf, p->sbuf_cap);
    jfr__free(&a, p->path, p->path_cap * sizeof *p->path);
    memset(p, 0, sizeof *p);
    p->alloc = a;
}

static int on_prof_event(jfr_parser *parser, const jfr_event *e, void *user) {
    (void)parser;
    prof_sub *s = user;
    prof_add(s->owner, e, s->owner->cur_source);
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
    jfr__free(&p->alloc, p->mnodes, p->mnodes_cap * sizeof *p->mnodes);
    p->mnodes = NULL;
    p->nmnodes = p->mnodes_cap = 0;
    memset(&p->nodes[0], 0, sizeof p->nodes[0]);
    p->nnodes = 1;
    p->events = p->skipped = 0;
    p->start_nanos = INT64_MAX;
    p->end_nanos = INT64_MIN;
    for (uint32_t i = 0; i < p->nsubs; i++)
        p->subs[i].type = NULL;
    p->nmem = p->nlive = 0;
    prof_map_clear(&p->addr_map);
}

/* --from / --to milliseconds -> epoch ns, as the converter's toTicks: from
 * 1500000000000 on absolute, else after the start (negative: before the
 * end) of the chunks seen so far. */
static int64_t range_nanos(const prof *p, int64_t ms) {
    int64_t ns = ms * 1000000;
    if (ms < 0)
        return p->end_nanos == INT64_MIN ? ns : p->end_nanos + ns;
    if (ms < 1500000000000LL)
        return p->start_nanos == INT64_MAX ? ns : p->start_nanos + ns;
    return ns;
}

void prof_chunk_begin(prof *p, const jfr_chunk_info *c) {
    if (c->start_nanos < p->start_nanos)
        p->start_nanos = c->start_nanos;
    if (c->duration_nanos >= 0 && c->start_nanos + c->duration_nanos > p->end_nanos)
        p->end_nanos = c->start_nanos + c->duration_nanos;
    p->from_nanos = p->have_from ? range_nanos(p, p->from_ms) : INT64_MIN;
    p->to_nanos = p->have_to ? range_nanos(p, p->to_ms) : INT64_MAX;
}

static int mem_cmp(const void *a, const void *b) {
    const prof_mem_ev *x = a, *y = b;
    if (x->time != y->time)
        return x->time < y->time ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* --leak: replay the chunk's mallocs and frees in time order (the
 * converter sorts each chunk's events) on the table of live addresses. */
static void leak_replay(prof *p) {
    if (!p->nmem)
        return;
    qsort(p->mem, p->nmem, sizeof *p->mem, mem_cmp);
    for (size_t i = 0; i < p->nmem && !p->nomem; i++) {
        const prof_mem_ev *m = &p->mem[i];
        uint64_t k[4] = {m->addr, 0, 0, 0};
        uint32_t v = prof_map_get(&p->addr_map, k);
        if (m->size == 0) { /* a free (or a malloc of 0 bytes, as the converter) */
            if (v)
                p->live[v - 1].leaf = UINT32_MAX;
            continue;
        }
        if (!v) {
            if (p->nlive >= UINT32_MAX - 1 ||
                !grow(p, (void **)&p->live, &p->live_cap, p->nlive + 1, sizeof *p->live) ||
                !prof_map_put(&p->alloc, &p->addr_map, k, (uint32_t)p->nlive + 1)) {
                p->nomem = true;
                break;
            }
            v = (uint32_t)++p->nlive;
        }
        p->live[v - 1].leaf = m->leaf;
        p->live[v - 1].size = m->size;
    }
    p->nmem = 0;
}

void prof_chunk_end(prof *p) {
    leak_replay(p);
    /* constant keys are per chunk */
    prof_map_clear(&p->stack_cache);
    for (uint32_t i = 0; i < p->nsubs; i++)
        p->subs[i].type = NULL;
}

/* ------------------------------------------------------------- folding */

/* The type of field `name` of t, or NULL. */
static const jfr_type *field_type(const jfr_type *t, const char *name) {
    int32_t i = t ? jfr_type_field_index(t, name) : -1;
    return i < 0 ? NULL : t->fields[i].type;
}

/* Does the chunk declare async-profiler's frame types? Its FrameType pool
 * has key 5 ("Kernel"); the JDK's stops at 3 ("Native"). */
static bool ap_frame_types(const jfr_event *e, const jfr_type *t) {
    const jfr_type *ft =
        field_type(field_type(field_type(t, "stackTrace"), "frames"), "type");
    jfr_value v;
    return ft && jfr_event_constant(e, ft, 5, &v) == JFR_OK && v.kind != JFR_KIND_NULL;
}

static void resolve(prof_sub *s, const jfr_event *e) {
    static const char *const class_field[] = {
        [PROF_RULE_TLAB] = "objectClass",     [PROF_RULE_OUTSIDE] = "objectClass",
        [PROF_RULE_ALLOC_SAMPLE] = "objectClass", [PROF_RULE_MONITOR] = "monitorClass",
        [PROF_RULE_PARK] = "parkedClass",     [PROF_RULE_LIVE] = "objectClass",
    };
    const jfr_type *t = e->type;
    s->type = t;
    s->stack_idx = jfr_type_field_index(t, "stackTrace");
    s->thread_idx = jfr_type_field_index(t, "sampledThread");
    if (s->thread_idx < 0)
        s->thread_idx = jfr_type_field_index(t, "eventThread");
    s->class_idx = s->rule < sizeof class_field / sizeof class_field[0] && class_field[s->rule]
                       ? jfr_type_field_index(t, class_field[s->rule])
                       : -1;
    s->state_idx = s->owner->nstates ? jfr_type_field_index(t, "state") : -1;
    s->addr_idx = jfr_type_field_index(t, "address");
    s->ap_frames = s->stack_idx >= 0 && ap_frame_types(e, t);
    prof_map_clear(&s->states);
    s->w_idx = s->w2_idx = -1;
    switch (s->rule) {
    case PROF_RULE_WALL:
        s->w_idx = jfr_type_field_index(t, "samples");
        break;
    case PROF_RULE_LIVE:
        s->w_idx = jfr_type_field_index(t, "allocationSize");
        break;
    case PROF_RULE_MALLOC:
        s->w_idx = jfr_type_field_index(t, "size");
        break;
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
    if (!grow(p, (void **)&p->nodes, &cap, (size_t)p->nnodes + 1, sizeof(prof_node)))
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
    if (!prof_map_put(&p->alloc, &p->child_map, k, id))
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

/* The name of a thread frame, into p->sbuf; returns its length, SIZE_MAX
 * when out of memory (a refused piece would leave a wrong name). */
static size_t thread_frame(prof *p, const jfr_value *tv, uint64_t key) {
    jfr_thread th;
    char num[32];
    size_t len = 0;
    int n = snprintf(num, sizeof num, "tid=%llu]", (unsigned long long)key);
    if (jfr_value_thread(tv, &th) != JFR_OK || !th.present ||
        (!th.java_name && !th.os_name)) {
        return sb_put(p, &len, "[", 1) && sb_put(p, &len, num, (size_t)n) ? len : SIZE_MAX;
    }
    const char *nm = th.java_name ? th.java_name : th.os_name;
    size_t nl = th.java_name ? th.java_name_len : th.os_name_len;
    if (nl >= 5 && memcmp(nm, "[tid=", 5) == 0) {
        return sb_put(p, &len, nm, nl) ? len : SIZE_MAX;
    }
    bool ok = sb_put(p, &len, "[", 1) && sb_put(p, &len, nm, nl) && sb_put(p, &len, " ", 1) &&
              sb_put(p, &len, num, (size_t)n);
    return ok ? len : SIZE_MAX;
}

/* The Java name of a class ("java.lang.String", "byte[][]"), into p->sbuf;
 * SIZE_MAX when out of memory. */
static size_t class_frame(prof *p, const jfr_value *cv) {
    const char *s = NULL;
    size_t n = 0, len = 0;
    if (jfr_value_class_name(cv, &s, &n) != JFR_OK || !s) {
        return sb_put(p, &len, "null", 4) ? len : SIZE_MAX;
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
    bool ok;
    if (prim) {
        ok = sb_put(p, &len, prim, strlen(prim));
    } else {
        size_t at = len;
        ok = sb_put(p, &len, s + start, end - start);
        for (size_t i = at; i < len; i++)
            if (p->sbuf[i] == '/')
                p->sbuf[i] = '.';
    }
    for (size_t i = 0; i < depth; i++)
        ok = ok && sb_put(p, &len, "[]", 2);
    return ok ? len : SIZE_MAX;
}

/* build_path's result for a stack --include / --exclude leave out. */
#define PROF_EXCLUDED (UINT32_MAX - 1)

static bool name_matches(const void *re, const char *s) {
    return regexec(re, s, 0, NULL, 0) == 0;
}

/* The converter's rule: a stack goes when a frame matches --exclude, or
 * when --include is given and no frame matches it. */
static bool stack_excluded(const prof *p, const uint32_t *path, size_t n) {
    bool need_include = p->include != NULL;
    for (size_t i = 0; i < n; i++) {
        const char *nm = prof_name(p, path[4 * i]);
        if (p->exclude && name_matches(p->exclude, nm))
            return true;
        if (need_include && name_matches(p->include, nm)) {
            if (!p->exclude)
                return false;
            need_include = false;
        }
    }
    return need_include;
}

/* Walk the stack (and the thread and class values) into the trie; returns
 * the leaf node, PROF_EXCLUDED, or UINT32_MAX (no memory, or a decode error:
 * p->err). `ap` says Native frames are C functions (async-profiler). */
static uint32_t build_path(prof *p, const jfr_event *e, jfr_stack *st, const jfr_value *tv,
                           uint64_t tkey, const jfr_value *cv, uint8_t ctype, bool ap) {
    /* the path bottom first, 4 words a frame: name, type, line, thread? */
    size_t n = 0, len;
    uint32_t nm;
    if (!grow(p, (void **)&p->path, &p->path_cap, 4 * ((size_t)st->nframes + 2), sizeof(uint32_t)))
        goto nomem;
    if (tv) {
        len = thread_frame(p, tv, tkey);
        if (len == SIZE_MAX || (nm = name_intern(p, p->sbuf, len)) == UINT32_MAX)
            goto nomem;
        uint32_t *q = p->path + 4 * n++;
        q[0] = nm, q[1] = PROF_T_NATIVE, q[2] = 0, q[3] = 1;
    }
    /* frames are read top first (cheap in that order), stored bottom first */
    for (uint32_t i = 0; i < st->nframes; i++) {
        jfr_frame f;
        jfr_status s = jfr_stack_frame(st, i, &f);
        if (s != JFR_OK) {
            note_error(p, e, s);
            return UINT32_MAX;
        }
        uint8_t t = frame_type_code(&f);
        bool ok;
        len = 0;
        if (!f.class_name && !f.method_name) {
            ok = sb_put(p, &len, "unknown", 7);
        } else if (f.class_name_len == 0 || t == PROF_T_CPP || t == PROF_T_KERNEL ||
                   (t == PROF_T_NATIVE && ap)) {
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
        if (ok && p->lines && f.line > 0) {
            char num[16];
            int k = snprintf(num, sizeof num, ":%d", (int)f.line);
            ok = sb_put(p, &len, num, (size_t)k);
        }
        if (!ok || (nm = name_intern(p, p->sbuf, len)) == UINT32_MAX)
            goto nomem;
        uint32_t *q = p->path + 4 * (n + st->nframes - 1 - i);
        q[0] = nm, q[1] = t, q[2] = (uint32_t)(f.line > 0 ? f.line : 0), q[3] = 0;
    }
    n += st->nframes;
    if (cv) {
        len = class_frame(p, cv);
        if (len == SIZE_MAX || (nm = name_intern(p, p->sbuf, len)) == UINT32_MAX)
            goto nomem;
        uint32_t *q = p->path + 4 * n++;
        q[0] = nm, q[1] = ctype, q[2] = 0, q[3] = 0;
    }
    if ((p->include || p->exclude) && stack_excluded(p, p->path, n))
        return PROF_EXCLUDED;
    uint32_t node = 0;
    for (size_t k = 0; k < n; k++) {
        const uint32_t *q = p->path + 4 * (p->reverse ? n - 1 - k : k);
        node = child(p, node, q[0], (uint8_t)q[1], (int32_t)q[2], q[3] != 0);
        if (node == UINT32_MAX)
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

/* --state: is the event's thread state one of the list? Decided once per
 * state key and chunk. */
static bool state_kept(prof *p, prof_sub *s, const jfr_event *e) {
    jfr_value v, u;
    if (jfr_event_field(e, (uint32_t)s->state_idx, &v) != JFR_OK)
        return false;
    bool pooled = v.pooled;
    uint64_t k[4] = {v.key, 0, 0, 0};
    uint32_t c = pooled ? prof_map_get(&s->states, k) : 0;
    if (c)
        return c == 1;
    /* jdk.types.ThreadState is a struct of one string, "name" */
    if (v.kind == JFR_KIND_OBJECT && jfr_value_field(&v, 0, &u) == JFR_OK)
        v = u;
    bool keep = false;
    if (v.kind == JFR_KIND_STRING && v.len >= 6 && memcmp(v.str, "STATE_", 6) == 0)
        for (uint32_t i = 0; i < p->nstates && !keep; i++) {
            size_t n = strlen(p->states[i]);
            keep = v.len - 6 >= n && memcmp(v.str + 6, p->states[i], n) == 0;
        }
    if (pooled && !prof_map_put(&p->alloc, &s->states, k, keep ? 1 : 2))
        p->nomem = true;
    return keep;
}

/* The subscription for e's type: by type pointer, or for the first event of
 * a type in the chunk by name (then resolved); NULL when not subscribed. */
static prof_sub *find_sub(prof *p, const jfr_event *e) {
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
            return NULL;
        resolve(s, e);
    }
    return s;
}

/* --leak: a free, remembered by its address. */
static void add_free(prof *p, const prof_sub *s, const jfr_event *e) {
    if (p->leak) {
        uint64_t a = int_field(e, s->addr_idx);
        if (!grow(p, (void **)&p->mem, &p->mem_cap, p->nmem + 1, sizeof *p->mem)) {
            p->nomem = true;
            return;
        }
        p->mem[p->nmem] = (prof_mem_ev){e->start_nanos, a, 0, 0, (uint32_t)p->nmem};
        p->nmem++;
    }
}

/* The event's weight by its subscription's rule, and in *ctype the type of
 * the class frame (kernel: allocated outside a TLAB). */
static uint64_t event_weight(const prof_sub *s, const jfr_event *e, uint8_t *ctype) {
    uint64_t w = 1;
    switch (s->rule) {
    case PROF_RULE_TLAB:
        w = int_field(e, s->w_idx);
        if (w == 0) {
            w = int_field(e, s->w2_idx);
            *ctype = PROF_T_KERNEL;
        }
        break;
    case PROF_RULE_OUTSIDE:
    case PROF_RULE_ALLOC_SAMPLE:
        w = int_field(e, s->w_idx);
        *ctype = PROF_T_KERNEL;
        break;
    case PROF_RULE_WALL:
    case PROF_RULE_LIVE:
    case PROF_RULE_MALLOC:
        w = int_field(e, s->w_idx);
        break;
    case PROF_RULE_MONITOR:
    case PROF_RULE_PARK:
        w = e->duration_nanos > 0 ? (uint64_t)e->duration_nanos : 0;
        break;
    default:
        break;
    }
    return w;
}

/* The leaf node of the event's stack (with its thread and class frames):
 * from the stack cache when every constant is pooled, else walked into the
 * trie and cached. Returns the leaf, PROF_EXCLUDED, or UINT32_MAX when the
 * event is dropped (no memory, or a decode error: p->err). */
static uint32_t stack_leaf(prof *p, const prof_sub *s, const jfr_event *e, jfr_value *sv,
                           uint8_t ctype, uint64_t source) {
    jfr_value tv, cv;
    jfr_status st;
    bool cacheable = sv->pooled;
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
    uint64_t k[4] = {sv->key, tkey, ckey,
                     (uint64_t)s->rule << 8 | (uint64_t)ctype << 2 | (uint64_t)have_class << 1 |
                         have_thread | source << 16};
    uint32_t leaf = cacheable ? prof_map_get(&p->stack_cache, k) : 0;
    if (!leaf) {
        jfr_stack stack;
        st = jfr_value_stack(sv, &stack);
        if (st != JFR_OK) {
            note_error(p, e, st);
            return UINT32_MAX;
        }
        leaf = build_path(p, e, &stack, have_thread ? &tv : NULL, tkey, have_class ? &cv : NULL,
                          ctype, s->ap_frames);
        if (leaf == UINT32_MAX)
            return UINT32_MAX;
        if (leaf != 0 && cacheable && !prof_map_put(&p->alloc, &p->stack_cache, k, leaf)) {
            p->nomem = true;
            return UINT32_MAX;
        }
    }
    return leaf;
}

/* --leak: a malloc, counted at the end if never freed. */
static void add_malloc(prof *p, const prof_sub *s, const jfr_event *e, uint64_t size,
                       uint32_t leaf) {
    if (!grow(p, (void **)&p->mem, &p->mem_cap, p->nmem + 1, sizeof *p->mem)) {
        p->nomem = true;
        return;
    }
    p->mem[p->nmem] =
        (prof_mem_ev){e->start_nanos, int_field(e, s->addr_idx), size, leaf, (uint32_t)p->nmem};
    p->nmem++;
}

void prof_add(prof *p, const jfr_event *e, uint64_t source) {
    prof_sub *s = find_sub(p, e);
    if (!s)
        return;
    if (e->start_nanos < p->from_nanos || e->start_nanos > p->to_nanos)
        return;
    if (s->state_idx >= 0 && !state_kept(p, s, e))
        return;
    if (s->rule == PROF_RULE_FREE) { /* only --leak uses frees: an address */
        add_free(p, s, e);
        return;
    }
    if (s->stack_idx < 0) {
        p->skipped++;
        return;
    }
    jfr_value sv;
    jfr_status st = jfr_event_field(e, (uint32_t)s->stack_idx, &sv);
    if (st != JFR_OK) {
        note_error(p, e, st);
        return;
    }
    if (sv.kind == JFR_KIND_NULL) {
        p->skipped++;
        return;
    }
    uint8_t ctype = PROF_T_INLINED;
    uint64_t w = event_weight(s, e, &ctype);
    uint64_t size = w; /* --leak: the malloc's size, whatever --count says */
    if (p->count)
        w = 1;
    uint32_t leaf = stack_leaf(p, s, e, &sv, ctype, source);
    if (leaf == UINT32_MAX || leaf == PROF_EXCLUDED)
        return;
    if (s->rule == PROF_RULE_MALLOC && p->leak) { /* counted at the end if never freed */
        add_malloc(p, s, e, size, leaf);
        return;
    }
    /* leaf 0: an empty stack and no extra frame, counted at the root */
    p->nodes[leaf].self_count++;
    p->nodes[leaf].self_weight += w;
    p->events++;
}

/* ------------------------------------------------------------- merging */

static uint8_t type_class(uint8_t t) {
    return t == PROF_T_INTERPRETED || t == PROF_T_INLINED || t == PROF_T_C1 ? PROF_T_JIT : t;
}

bool prof_finish(prof *p) {
    leak_replay(p); /* a chunk cut short has no chunk end */
    if (p->nomem)
        return false;
    prof_node *n = p->nodes;
    /* --leak: the allocations never freed */
    for (size_t i = 0; i < p->nlive; i++) {
        if (p->live[i].leaf == UINT32_MAX)
            continue;
        n[p->live[i].leaf].self_count++;
        n[p->live[i].leaf].self_weight += p->count ? 1 : p->live[i].size;
        p->events++;
    }
    p->nlive = 0;
    prof_map_clear(&p->addr_map);
    for (uint32_t i = 0; i < p->nnodes; i++)
        n[i].total = 0;
    for (uint32_t i = p->nnodes; i-- > 1;) { /* children come after parents */
        n[i].total += n[i].self_weight;
        n[n[i].parent].total += n[i].total;
    }
    n[0].total += n[0].self_weight;
    const jfr_allocator *a = &p->alloc;
    size_t nmid = p->nnodes;
    uint32_t *mid = jfr__alloc(a, nmid * sizeof *mid);
    jfr__free(a, p->mnodes, p->mnodes_cap * sizeof *p->mnodes);
    p->mnodes = jfr__calloc(a, (size_t)p->nnodes * sizeof(prof_mnode));
    p->mnodes_cap = p->mnodes ? p->nnodes : 0;
    if (!mid || !p->mnodes) {
        jfr__free(a, mid, nmid * sizeof *mid);
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
            if (!prof_map_put(a, &p->stack_cache, k, j)) {
                jfr__free(a, mid, nmid * sizeof *mid);
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
    jfr__free(a, mid, nmid * sizeof *mid);
    if (p->minwidth > 0) {
        /* --minwidth: unlink subtrees narrower than that share of the total,
         * as the converter skips them (children come after parents) */
        uint64_t min = (uint64_t)((double)m[0].total * p->minwidth / 100);
        for (uint32_t i = 0; i < p->nmnodes; i++) {
            uint32_t *link = &m[i].first_child;
            while (*link) {
                if (m[*link].total < min)
                    *link = m[*link].next_sibling;
                else
                    link = &m[*link].next_sibling;
            }
        }
    }
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

bool prof_write_collapsed(const prof *p, outbuf *o) {
    const prof_mnode *m = p->mnodes;
    if (!m || p->nmnodes < 2)
        return true;
    /* iterative pre-order walk; the line prefix is rebuilt from the path */
    const jfr_allocator *a = &p->alloc;
    size_t cap = 64, depth = 0;
    uint32_t *path = jfr__alloc(a, cap * sizeof *path);
    if (!path)
        return false;
    bool ok = true;
    uint32_t cur = m[0].first_child;
    while (cur) {
        if (depth == cap) {
            uint32_t *np = jfr__realloc(a, path, cap * sizeof *path, 2 * cap * sizeof *path);
            if (!np) {
                ok = false;
                break;
            }
            path = np;
            cap *= 2;
        }
        path[depth] = cur;
        if (m[cur].self > 0) {
            for (size_t i = 0; i <= depth; i++) {
                if (i)
                    ob_putc(o, ';');
                const prof_mnode *x = &m[path[i]];
                /* a ';' inside a name would split the frame: '|' instead */
                const char *nm = prof_name(p, x->name), *end = nm + p->name_len[x->name];
                for (const char *c; (c = memchr(nm, ';', (size_t)(end - nm))) != NULL;
                     nm = c + 1) {
                    ob_write(o, nm, (size_t)(c - nm));
                    ob_putc(o, '|');
                }
                ob_write(o, nm, (size_t)(end - nm));
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
    jfr__free(a, path, cap * sizeof *path);
    return ok;
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
    case PROF_RULE_WALL:
        *type = "samples";
        *unit = "count";
        break;
    case PROF_RULE_TLAB:
    case PROF_RULE_OUTSIDE:
    case PROF_RULE_ALLOC_SAMPLE:
    case PROF_RULE_LIVE:
    case PROF_RULE_MALLOC:
    case PROF_RULE_FREE:
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
