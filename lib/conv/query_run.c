/*
 * query_run.c — resolving a query against the recording's first metadata
 * and aggregating its events (query_run.h), as JDK 25's QueryResolver,
 * FieldBuilder, Histogram and Function do.
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#define JFRSTREAM_EXPERIMENTAL /* jfr_event_ints */
#include "query_run.h"

#include "jformat.h"
#include "mem.h"
#include "ticks.h" /* jfr__java_d2l */

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

enum { G_PATH, G_FRAME, G_EVTYPE_LABEL, G_EVTYPE_NAME, G_SETTING_ID, G_ONE };
/* what a field's aggregate does with a value (fn_kind_of) */
enum { FN_FIRSTNN, FN_LIST, FN_SET, FN_TIMEDIFF, FN_DIFF, FN_STDEV, FN_MEDIAN, FN_PCT, FN_MAX,
       FN_MIN, FN_SUMDUR, FN_SUMDBL, FN_SUMLONG, FN_FIRST, FN_LASTBATCH, FN_LAST, FN_AVGDUR,
       FN_AVG, FN_COUNT, FN_UNIQUE, FN_NULL };
/* fold_ints' steps (qftype.int_op): the integer cases of fn_add_keyed,
 * and the values made and given to it (INT_START: the start time,
 * INT_VALUE: an integer or a timespan) */
enum { INT_COUNT, INT_KEY, INT_START, INT_SUM, INT_AVG, INT_MIN, INT_MAX, INT_VALUE };
enum { F_TOP, F_APP, F_NOTINIT };

#define PUSHR(run, arr, n, cap, val)                                                       \
    (jfr__array_reserve((run)->ar.a, (void **)&(arr), (n), &(cap), sizeof *(arr), 8)       \
         ? ((arr)[(n)++] = (val), true)                                                    \
         : false)

int jq_run_error(jq_run *r, bool syntax, const char *fmt, ...) {
    if (!r->failed) {
        static char oom[] = "out of memory";
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(NULL, 0, fmt, ap);
        va_end(ap);
        char *m = n >= 0 ? jq_alloc(&r->ar, (size_t)n + 1) : NULL;
        if (m) {
            va_start(ap, fmt);
            vsnprintf(m, (size_t)n + 1, fmt, ap);
            va_end(ap);
            /* names from the metadata, as Java decodes them */
            size_t dn;
            m = jq_utf8_decoded(&r->ar, m, (size_t)n, &dn);
        }
        r->err = m ? m : oom;
        r->failed = true;
        r->syntax_error = syntax;
    }
    return -1;
}

/* --------------------------------------------------------------- interning */

typedef struct qintern {
    qobj **slots;
    size_t cap, n;
    /* per chunk: pool key -> qobj */
    struct ckey {
        const jfr_type *t;
        uint64_t key;
        const qobj *o;
    } *ck;
    size_t ckcap, ckn;
    uint64_t chunk;
} qintern;

static const qobj *intern(jq_run *r, uint8_t kind, const void *eq, size_t eqlen, int32_t jhash,
                          const char *text, size_t tlen, const char *compact, size_t clen) {
    qintern *in = r->intern;
    static const uint8_t none = 0;
    if (!eqlen)
        eq = &none;
    uint64_t h = XXH3_64bits_withSeed(eq, eqlen, kind);
    if (in->cap && in->slots) {
        for (qobj *o = in->slots[h & (in->cap - 1)]; o; o = o->next)
            if (o->h == h && o->kind == kind && o->eqlen == eqlen && (!eqlen || !memcmp(o->eq, eq, eqlen)))
                return o;
    }
    if (in->n + 1 > in->cap / 2) {
        size_t nc = in->cap ? in->cap * 2 : 1024;
        qobj **ns = jfr__calloc(r->ar.a, nc * sizeof *ns); // NOLINT(bugprone-sizeof-expression): an array of pointers
        if (!ns)
            return NULL;
        for (size_t k = 0; k < in->cap; k++)
            for (qobj *o = in->slots[k], *nx; o; o = nx) {
                nx = o->next;
                o->next = ns[o->h & (nc - 1)];
                ns[o->h & (nc - 1)] = o;
            }
        jfr__free(r->ar.a, in->slots, in->cap * sizeof *in->slots); // NOLINT(bugprone-sizeof-expression): an array of pointers
        in->slots = ns;
        in->cap = nc;
    }
    qobj *o = jq_alloc(&r->ar, sizeof *o);
    uint8_t *e = jq_alloc(&r->ar, eqlen ? eqlen : 1);
    if (!o || !e)
        return NULL;
    if (eqlen)
        memcpy(e, eq, eqlen);
    o->kind = kind;
    o->jhash = kind == QK_STR ? jq_java_string_hash(eq, eqlen) : jhash; /* strings: made once */
    o->h = h;
    o->eq = e;
    o->eqlen = eqlen;
    if (text) {
        o->text = jq_strndup(&r->ar, text, tlen);
        o->tlen = tlen;
        if (compact == text) {
            o->compact = o->text;
            o->clen = tlen;
        } else {
            o->compact = jq_strndup(&r->ar, compact, clen);
            o->clen = clen;
        }
        if (!o->text || !o->compact)
            return NULL;
    }
    if (!in->slots)
        return NULL;
    o->next = in->slots[h & (in->cap - 1)];
    in->slots[h & (in->cap - 1)] = o;
    in->n++;
    return o;
}

static bool ck_grow(jq_run *r) {
    qintern *in = r->intern;
    if (in->ckn + 1 <= in->ckcap / 2)
        return true;
    size_t nc = in->ckcap ? in->ckcap * 2 : 1024;
    struct ckey *ns = jfr__calloc(r->ar.a, nc * sizeof *ns);
    if (!ns)
        return false;
    for (size_t k = 0; k < in->ckcap; k++)
        if (in->ck[k].t) {
            size_t s = (size_t)XXH3_64bits_withSeed(&in->ck[k].key, 8, (uintptr_t)in->ck[k].t) & (nc - 1);
            while (ns[s].t)
                s = (s + 1) & (nc - 1);
            ns[s] = in->ck[k];
        }
    jfr__free(r->ar.a, in->ck, in->ckcap * sizeof *in->ck);
    in->ck = ns;
    in->ckcap = nc;
    return true;
}

/* The qobj this chunk's pool key stands for, or NULL. */
static const qobj *ck_get(jq_run *r, const jfr_type *t, uint64_t key) {
    qintern *in = r->intern;
    if (!in->ckcap)
        return NULL;
    size_t s = (size_t)XXH3_64bits_withSeed(&key, 8, (uintptr_t)t) & (in->ckcap - 1);
    for (; in->ck[s].t; s = (s + 1) & (in->ckcap - 1))
        if (in->ck[s].t == t && in->ck[s].key == key)
            return in->ck[s].o;
    return NULL;
}

/* Remember it, once made (not before: making one may make others). */
static void ck_put(jq_run *r, const jfr_type *t, uint64_t key, const qobj *o) {
    qintern *in = r->intern;
    if (!o || !ck_grow(r))
        return; /* not cached: made again next time */
    size_t s = (size_t)XXH3_64bits_withSeed(&key, 8, (uintptr_t)t) & (in->ckcap - 1);
    for (; in->ck[s].t; s = (s + 1) & (in->ckcap - 1))
        if (in->ck[s].t == t && in->ck[s].key == key) {
            in->ck[s].o = o;
            return;
        }
    in->ck[s].t = t;
    in->ck[s].key = key;
    in->ck[s].o = o;
    in->ckn++;
}

void jq_run_chunk(jq_run *r) {
    r->chunk_gen++;
    qintern *in = r->intern;
    if (in->ck)
        memset(in->ck, 0, in->ckcap * sizeof *in->ck);
    in->ckn = 0;
}

static int32_t long_hash(int64_t v) { return (int32_t)((uint64_t)v ^ ((uint64_t)v >> 32)); }

/* --------------------------------------------------------- materializing */

/* Text scratch for building object texts: a jfr_buf kept NUL-terminated,
 * p and n its text and length. */
typedef struct sbuf {
    jfr_buf buf;
    char *p;
    size_t n;
    const jfr_allocator *a;
    bool oom;
} sbuf;
static void sb_put(sbuf *b, const char *s, size_t n) {
    if (b->oom || jfr__buf_reserve(b->a, &b->buf, n + 1, 0) != JFR_OK) {
        b->oom = true;
        return;
    }
    if (n)
        memcpy(b->buf.data + b->buf.len, s, n);
    b->buf.len += n;
    b->buf.data[b->buf.len] = 0;
    b->p = (char *)b->buf.data;
    b->n = b->buf.len;
}
static void sb_puts(sbuf *b, const char *s) { sb_put(b, s, strlen(s)); }

/* Class name with '/' as '.', arrays decoded as ValueFormatter.formatClass
 * ("[Ljava.lang.String;" -> "java.lang.String[]", "[[I" -> "int[][]"). */
static void decode_one(sbuf *b, const char *s, size_t n, size_t *i, bool simple) {
    jfmt_desc_type t;
    if (!jfmt_descriptor_type(s, n, i, simple, &t))
        return;
    for (size_t k = 0; k < t.len; k++)
        sb_put(b, t.name[k] == '/' ? "." : t.name + k, 1);
    for (size_t d = 0; d < t.dims; d++)
        sb_puts(b, "[]");
}

static void class_text(sbuf *b, const char *name, size_t n, bool format) {
    if (format && n && name[0] == '[') {
        size_t i = 0;
        decode_one(b, name, n, &i, false);
        return;
    }
    for (size_t k = 0; k < n; k++)
        sb_put(b, name[k] == '/' ? "." : name + k, 1);
}

static const char *last_dot(const char *s, size_t n) {
    for (size_t k = n; k-- > 0;)
        if (s[k] == '.')
            return s + k + 1;
    return s;
}

static bool utf8_valid(const unsigned char *s, size_t n) {
    for (size_t i = 0; i < n;) {
        unsigned char c = s[i];
        if (c < 0x80) {
            i++;
            continue;
        }
        size_t len = (c >= 0xC2 && c < 0xE0) ? 2 : (c >= 0xE0 && c < 0xF0) ? 3 : (c >= 0xF0 && c < 0xF5) ? 4 : 0;
        if (!len || i + len > n)
            return false;
        for (size_t k = 1; k < len; k++)
            if ((s[i + k] & 0xC0) != 0x80)
                return false;
        if ((c == 0xE0 && s[i + 1] < 0xA0) || (c == 0xF0 && s[i + 1] < 0x90) || (c == 0xF4 && s[i + 1] >= 0x90))
            return false;
        i += len;
    }
    return true;
}

/* A string stored as UTF-8 (encoding 3) is read by the JDK as new
 * String(bytes, UTF_8): malformed sequences become U+FFFD. The text goes
 * through the iterator that does that (jformat), back into UTF-8. */
static bool java_string(jq_run *r, jfr_value *u) {
    if (u->encoding != 3 || utf8_valid((const unsigned char *)u->str, u->len))
        return true;
    unsigned slot = r->ndec++ % 8;
    size_t need = 3 * u->len + 1;
    if (r->dec[slot].cap < need) {
        char *np = jfr__realloc(r->ar.a, r->dec[slot].p, r->dec[slot].cap, need);
        if (!np)
            return false;
        r->dec[slot].p = np;
        r->dec[slot].cap = need;
    }
    char *d = r->dec[slot].p;
    size_t o = 0;
    jfmt_u16_iter it;
    jfmt_u16_init(&it, u->str, u->len, true);
    for (int c; (c = jfmt_u16_next(&it)) >= 0;) {
        uint32_t cp = (uint32_t)c;
        if (cp >= 0xD800 && cp < 0xDC00) { /* a pair (the decoder makes no lone ones) */
            int lo = jfmt_u16_next(&it);
            if (lo < 0)
                break;
            cp = 0x10000 + ((cp - 0xD800) << 10) + ((uint32_t)lo - 0xDC00);
        }
        if (cp < 0x80) {
            d[o++] = (char)cp;
        } else if (cp < 0x800) {
            d[o++] = (char)(0xC0 | cp >> 6);
            d[o++] = (char)(0x80 | (cp & 63));
        } else if (cp < 0x10000) {
            d[o++] = (char)(0xE0 | cp >> 12);
            d[o++] = (char)(0x80 | ((cp >> 6) & 63));
            d[o++] = (char)(0x80 | (cp & 63));
        } else {
            d[o++] = (char)(0xF0 | cp >> 18);
            d[o++] = (char)(0x80 | ((cp >> 12) & 63));
            d[o++] = (char)(0x80 | ((cp >> 6) & 63));
            d[o++] = (char)(0x80 | (cp & 63));
        }
    }
    u->str = d;
    u->len = o;
    return true;
}

static bool str_of(jq_run *r, const jfr_value *v, jfr_value *out) {
    jfr_value u;
    if (jfr_value_unwrap(v, &u) != JFR_OK || u.kind != JFR_KIND_STRING)
        return false;
    if (!java_string(r, &u))
        return false;
    *out = u;
    return true;
}

static bool member(const jfr_value *obj, const char *name, jfr_value *out) {
    if (obj->kind != JFR_KIND_OBJECT)
        return false;
    if (jfr_value_field_named(obj, name, out) != JFR_OK)
        return false;
    return true;
}

static int64_t member_long(const jfr_value *obj, const char *name, int64_t dflt) {
    jfr_value v;
    if (member(obj, name, &v) && v.kind == JFR_KIND_INT)
        return v.i;
    return dflt;
}

static const qobj *mat_method(jq_run *r, const jfr_value *m);

/* The qobj of a pooled or inline object value of a known kind. */
static const qobj *mat_object(jq_run *r, uint8_t kind, const jfr_value *v) {
    if (v->pooled) {
        const qobj *c = ck_get(r, v->type, v->key);
        if (c)
            return c;
    }
    sbuf b = {.a = r->ar.a}, c = {.a = r->ar.a};
    const qobj *o = NULL;
    uint8_t eqb[64];
    switch (kind) {
    case QK_CLASS: {
        jfr_value n;
        const char *s = "";
        size_t len = 0;
        if (member(v, "name", &n) && str_of(r, &n, &n)) {
            s = n.str;
            len = n.len;
        }
        class_text(&b, s, len, true);
        const char *t = b.p ? b.p : "";
        const char *ld = last_dot(t, b.n);
        memcpy(eqb, &v->key, 8);
        o = intern(r, QK_CLASS, eqb, 8, long_hash((int64_t)v->key), t, b.n, ld, b.n - (size_t)(ld - t));
        break;
    }
    case QK_THREAD: {
        int64_t jid = member_long(v, "javaThreadId", 0);
        jfr_value n;
        const char *field = jid > 0 ? "javaName" : "osName";
        if (member(v, field, &n) && str_of(r, &n, &n))
            sb_put(&b, n.str, n.len);
        else
            sb_puts(&b, "null");
        memcpy(eqb, &v->key, 8);
        o = intern(r, QK_THREAD, eqb, 8, long_hash((int64_t)v->key), b.p, b.n, b.p, b.n);
        break;
    }
    case QK_METHOD:
        o = mat_method(r, v);
        break;
    case QK_LOADER: {
        jfr_value t;
        memcpy(eqb, &v->key, 8);
        if (member(v, "type", &t) && t.kind == JFR_KIND_OBJECT) {
            const qobj *cls = mat_object(r, QK_CLASS, &t);
            if (!cls)
                return NULL;
            o = intern(r, QK_LOADER, eqb, 8, long_hash((int64_t)v->key), cls->text, cls->tlen,
                       cls->compact, cls->clen);
        } else {
            o = intern(r, QK_LOADER, eqb, 8, long_hash((int64_t)v->key), NULL, 0, NULL, 0);
        }
        break;
    }
    case QK_GROUP: {
        jfr_value n, p, pn;
        if (member(v, "name", &n) && str_of(r, &n, &n))
            sb_put(&b, n.str, n.len);
        else
            sb_puts(&b, "null");
        sb_put(&c, b.p, b.n);
        sb_puts(&c, ":");
        if (member(v, "parent", &p) && p.kind == JFR_KIND_OBJECT && member(&p, "name", &pn) &&
            str_of(r, &pn, &pn))
            sb_put(&c, pn.str, pn.len);
        else
            sb_puts(&c, "null");
        o = intern(r, QK_GROUP, c.p, c.n, jq_java_string_hash(c.p, c.n), b.p, b.n, b.p, b.n);
        break;
    }
    case QK_STACK: {
        jfr_value frames, fr, m;
        uint32_t n = 0;
        if (member(v, "frames", &frames) && frames.kind == JFR_KIND_ARRAY)
            n = frames.count;
        const qobj **fs = n ? jfr__alloc(r->ar.a, n * sizeof *fs) : NULL; // NOLINT(bugprone-sizeof-expression): an array of pointers
        if (n && !fs)
            return NULL;
        int32_t h = 1;
        for (uint32_t k = 0; k < n; k++) {
            fs[k] = NULL;
            if (jfr_value_index(&frames, k, &fr) == JFR_OK && member(&fr, "method", &m) &&
                m.kind == JFR_KIND_OBJECT)
                fs[k] = mat_method(r, &m);
            h = (int32_t)(31u * (uint32_t)h + (uint32_t)(fs[k] ? fs[k]->jhash : 0));
        }
        const qobj *first = n ? fs[0] : NULL;
        o = intern(r, QK_STACK, fs, n * sizeof *fs, h, // NOLINT(bugprone-sizeof-expression): the frames' pointers are the key
                   first ? first->text : "", first ? first->tlen : 0,
                   first ? first->compact : "", first ? first->clen : 0);
        if (o && !o->frames && n) {
            qobj *w = (qobj *)o;
            w->frames = jq_alloc(&r->ar, n * sizeof *fs);
            if (!w->frames) {
                jfr__free(r->ar.a, fs, n * sizeof *fs);
                return NULL;
            }
            memcpy(w->frames, fs, n * sizeof *fs);
            w->nframes = n;
        }
        jfr__free(r->ar.a, fs, n * sizeof *fs);
        break;
    }
    default: { /* the type's name, read as Java reads it (a hostile one) */
        const char *tn = v->type ? v->type->name : "?";
        jfr_value u = {.kind = JFR_KIND_STRING, .str = tn, .len = strlen(tn), .encoding = 3};
        if (!java_string(r, &u)) {
            b.oom = true;
            break;
        }
        sb_put(&b, u.str, u.len);
        o = intern(r, QK_OTHER, b.p, b.n, 0, b.p, b.n, b.p, b.n);
        break;
    }
    }
    if (b.oom || c.oom)
        o = NULL;
    jfr__buf_free(r->ar.a, &b.buf);
    jfr__buf_free(r->ar.a, &c.buf);
    if (v->pooled)
        ck_put(r, v->type, v->key, o);
    return o;
}

/* ValueFormatter.formatMethod, full and compact; the key MethodEquality. */
static const qobj *mat_method(jq_run *r, const jfr_value *m) {
    if (m->pooled) {
        const qobj *c = ck_get(r, m->type, m->key);
        if (c)
            return c;
    }
    jfr_value cls, nm, ds;
    const char *cname = "null", *mname = "null", *desc = "";
    size_t cn = 4, mn = 4, dn = 0;
    uint64_t class_id = 0;
    if (member(m, "type", &cls) && cls.kind == JFR_KIND_OBJECT) {
        class_id = cls.key;
        jfr_value n;
        if (member(&cls, "name", &n) && str_of(r, &n, &n)) {
            cname = n.str;
            cn = n.len;
        }
    }
    if (member(m, "name", &nm) && str_of(r, &nm, &nm)) {
        mname = nm.str;
        mn = nm.len;
    }
    if (member(m, "descriptor", &ds) && str_of(r, &ds, &ds)) {
        desc = ds.str;
        dn = ds.len;
    }
    sbuf b = {.a = r->ar.a}, c = {.a = r->ar.a};
    class_text(&b, cname, cn, false);
    sb_puts(&b, ".");
    sb_put(&b, mname, mn);
    sb_puts(&b, "(");
    sb_put(&c, b.p, b.n);
    size_t close = dn;
    for (size_t k = dn; k-- > 0;)
        if (desc[k] == ')') {
            close = k;
            break;
        }
    bool any = false;
    for (size_t i = 1; i < close;) {
        if (any)
            sb_puts(&b, ", ");
        decode_one(&b, desc, close, &i, true);
        any = true;
    }
    sb_puts(&b, ")");
    sb_puts(&c, any ? "...)" : ")");
    int32_t h1 = long_hash((int64_t)class_id), h2 = jq_java_string_hash(mname, mn),
            h3 = jq_java_string_hash(desc, dn);
    uint32_t res = 31u + (uint32_t)h1;
    res += 31u * res + (uint32_t)h2;
    res += 31u * res + (uint32_t)h3;
    /* equality: class id, name, descriptor */
    size_t eqn = 8 + 4 + mn + dn;
    uint8_t stackbuf[512];
    uint8_t *eq = eqn <= sizeof stackbuf ? stackbuf : jfr__alloc(r->ar.a, eqn);
    const qobj *o = NULL;
    if (eq && !b.oom && !c.oom) {
        uint32_t mn32 = (uint32_t)mn;
        memcpy(eq, &class_id, 8);
        memcpy(eq + 8, &mn32, 4);
        if (mn)
            memcpy(eq + 12, mname, mn);
        if (dn)
            memcpy(eq + 12 + mn, desc, dn);
        o = intern(r, QK_METHOD, eq, eqn, (int32_t)res, b.p, b.n, c.p, c.n);
    }
    if (eq && eq != stackbuf)
        jfr__free(r->ar.a, eq, eqn);
    jfr__buf_free(r->ar.a, &b.buf);
    jfr__buf_free(r->ar.a, &c.buf);
    if (m->pooled)
        ck_put(r, m->type, m->key, o);
    return o;
}

static uint8_t kind_of_type(const char *name) {
    if (!strcmp(name, "java.lang.Class"))
        return QK_CLASS;
    if (!strcmp(name, "java.lang.Thread"))
        return QK_THREAD;
    if (!strcmp(name, "jdk.types.Method"))
        return QK_METHOD;
    if (!strcmp(name, "jdk.types.StackFrame"))
        return QK_METHOD; /* a Java frame is its method to every use here */
    if (!strcmp(name, "jdk.types.StackTrace"))
        return QK_STACK;
    if (!strcmp(name, "jdk.types.ClassLoader"))
        return QK_LOADER;
    if (!strcmp(name, "jdk.types.ThreadGroup"))
        return QK_GROUP;
    return QK_OTHER;
}

/* A string: its text as Java prints it to UTF-8 (a lone surrogate, WTF-8
 * here, as '?'), its hash of its UTF-16 units. */
static const qobj *mat_string(jq_run *r, const char *s, size_t n) {
    const char *t = s;
    char *rep = NULL;
    size_t tn = n;
    for (size_t i = 0; i + 2 < n; i++)
        if ((unsigned char)s[i] == 0xED && (unsigned char)s[i + 1] >= 0xA0) {
            rep = jfr__alloc(r->ar.a, n);
            break;
        }
    if (rep) {
        tn = 0;
        for (size_t i = 0; i < n;) {
            if (i + 2 < n && (unsigned char)s[i] == 0xED && (unsigned char)s[i + 1] >= 0xA0) {
                rep[tn++] = '?';
                i += 3;
            } else {
                rep[tn++] = s[i++];
            }
        }
        t = rep;
    }
    const qobj *o = intern(r, QK_STR, s, n, 0, t, tn, t, tn);
    if (rep)
        jfr__free(r->ar.a, rep, n);
    return o;
}

/* The class of an integer of this base type (a JDK Byte, Short, ...). */
static uint8_t int_class(jfr_base b) {
    return b == JFR_BASE_BYTE ? JV_BYTE : b == JFR_BASE_SHORT ? JV_SHORT
           : b == JFR_BASE_INT ? JV_INT : JV_LONG;
}

/* The Duration of an integer timespan field of e with these units. */
static jv span_jv(const jfr_event *e, uint32_t units, int64_t i) {
    jfmt_span_unit u = (units & JFR_UNIT_TIMESPAN_TICKS)     ? JFMT_SPAN_TICKS
                       : (units & JFR_UNIT_TIMESPAN_MICROS)  ? JFMT_SPAN_MICROS
                       : (units & JFR_UNIT_TIMESPAN_MILLIS)  ? JFMT_SPAN_MILLIS
                       : (units & JFR_UNIT_TIMESPAN_SECONDS) ? JFMT_SPAN_SECONDS
                                                             : JFMT_SPAN_NANOS;
    jfmt_timebase tb = {0, 0, 1000000000};
    int64_t s;
    int32_t ns;
    if (u == JFMT_SPAN_TICKS) {
        /* the event's chunk converts */
        if (i == INT64_MIN || i == INT64_MAX)
            jfmt_timespan_value(i, JFMT_SPAN_NANOS, &tb, &s, &ns);
        else
            jfmt_timespan_value(jfr_event_ticks_to_nanos(e, i), JFMT_SPAN_NANOS, &tb, &s, &ns);
    } else {
        jfmt_timespan_value(i, u, &tb, &s, &ns);
    }
    return (jv){.k = JV_DURATION, .i = s, .ns = ns};
}

/* A leaf value as the JDK's getValue / getInstant / getDuration gives it. */
static int to_jv(jq_run *r, const qfield *f, const jfr_value *v, const jfr_event *e, jv *out) {
    memset(out, 0, sizeof *out);
    if (v->kind == JFR_KIND_NULL)
        return 0;
    const jfr_field *fd = v->field;
    uint32_t units = fd ? fd->units : 0;
    if (f->timestamp && v->kind == JFR_KIND_INT) {
        int64_t nanos;
        if (v->i == INT64_MIN) { /* Instant.MIN */
            out->k = JV_INSTANT;
            out->i = -31557014167219200LL;
            out->ns = 0;
            return 0;
        }
        if (units & JFR_UNIT_TIMESTAMP_MILLIS) { /* Instant.ofEpochMilli */
            out->k = JV_INSTANT;
            out->i = v->i / 1000 - (v->i % 1000 < 0);
            out->ns = (int32_t)((v->i % 1000 + 1000) % 1000 * 1000000);
            return 0;
        }
        nanos = jfr_event_ticks_to_epoch_nanos(e, v->i);
        out->k = JV_INSTANT;
        out->i = nanos / 1000000000;
        out->ns = (int32_t)(nanos % 1000000000);
        if (out->ns < 0) {
            out->ns += 1000000000;
            out->i--;
        }
        return 0;
    }
    if (f->timespan && v->kind == JFR_KIND_INT) {
        *out = span_jv(e, units, v->i);
        return 0;
    }
    switch (v->kind) {
    case JFR_KIND_BOOLEAN:
        out->k = JV_BOOL;
        out->b = v->b;
        return 0;
    case JFR_KIND_INT: {
        out->k = int_class(v->type ? v->type->base : JFR_BASE_LONG);
        out->i = v->i;
        return 0;
    }
    case JFR_KIND_CHAR:
        out->k = JV_CHAR;
        out->i = (int64_t)v->u;
        return 0;
    case JFR_KIND_FLOAT:
        out->k = JV_FLOAT;
        out->d = v->d;
        return 0;
    case JFR_KIND_DOUBLE:
        out->k = JV_DOUBLE;
        out->d = v->d;
        return 0;
    case JFR_KIND_STRING: {
        jfr_value u = *v;
        if (!java_string(r, &u))
            return -1;
        const qobj *o = mat_string(r, u.str, u.len);
        if (!o)
            return -1;
        out->k = JV_OBJ;
        out->o = o;
        return 0;
    }
    case JFR_KIND_OBJECT: {
        if (v->type && v->type->simple) { /* a Symbol and such: its one field */
            jfr_value u;
            if (jfr_value_unwrap(v, &u) == JFR_OK && u.kind != JFR_KIND_OBJECT)
                return to_jv(r, f, &u, e, out);
        }
        const qobj *o = mat_object(r, kind_of_type(v->type ? v->type->name : ""), v);
        if (!o)
            return -1;
        out->k = JV_OBJ;
        out->o = o;
        return 0;
    }
    default:
        return 0;
    }
}

/* The frame the getter picks, as the frame's OBJECT value. */
static bool pick_frame(jq_run *r, const jfr_event *e, int which, jfr_value *frame) {
    jfr_value st, frames;
    if (jfr_event_field_named(e, "stackTrace", &st) != JFR_OK || st.kind != JFR_KIND_OBJECT)
        return false;
    if (!member(&st, "frames", &frames) || frames.kind != JFR_KIND_ARRAY)
        return false;
    for (uint32_t k = 0; k < frames.count; k++) {
        jfr_value fr, m;
        if (jfr_value_index(&frames, k, &fr) != JFR_OK || fr.kind != JFR_KIND_OBJECT)
            continue;
        if (which == F_TOP) {
            *frame = fr;
            return true;
        }
        if (!member(&fr, "method", &m) || m.kind != JFR_KIND_OBJECT)
            continue;
        if (which == F_NOTINIT) {
            jfr_value n;
            if (member(&m, "name", &n) && str_of(r, &n, &n) && n.len == 6 && !memcmp(n.str, "<init>", 6))
                continue;
            *frame = fr;
            return true;
        }
        jfr_value cls, cl, ln;
        if (!member(&m, "type", &cls) || cls.kind != JFR_KIND_OBJECT)
            continue;
        if (!member(&cls, "classLoader", &cl) || cl.kind != JFR_KIND_OBJECT)
            continue;
        if (member(&cl, "name", &ln) && str_of(r, &ln, &ln) && ln.len == 9 && !memcmp(ln.str, "bootstrap", 9))
            continue;
        *frame = fr;
        return true;
    }
    return false;
}

/* Follow a resolved index path from `v`. */
static bool follow(const qfield *f, jfr_value *v) {
    for (int k = 0; k < f->depth; k++) {
        if (v->kind != JFR_KIND_OBJECT)
            return false;
        jfr_value n;
        if (jfr_value_field(v, (uint32_t)f->idx[k], &n) != JFR_OK)
            return false;
        *v = n;
    }
    return true;
}


/* The event's start time as to_jv's Instant of its ticks, from what the
 * parser read (jfr_event.start_nanos): false for ticks of 0 (a record cut
 * short, or read as 0), which the value itself gives. */
static inline bool start_jv(const jfr_event *e, jv *out) {
    if (e->start_ticks == 0 || e->start_ticks == INT64_MIN)
        return false;
    *out = (jv){.k = JV_INSTANT, .i = e->start_nanos / 1000000000,
                .ns = (int32_t)(e->start_nanos % 1000000000)};
    if (out->ns < 0) {
        out->ns += 1000000000;
        out->i--;
    }
    return true;
}

int jq_field_value(jq_run *r, const qfield *f, const jfr_event *e, jv *out) {
    memset(out, 0, sizeof *out);
    switch (f->getter) {
    case G_ONE:
        out->k = JV_INT;
        out->i = 1;
        return 0;
    case G_EVTYPE_LABEL:
    case G_EVTYPE_NAME: {
        const char *s = f->getter == G_EVTYPE_NAME ? e->type->name : e->type->label;
        if (!s)
            return 0;
        /* once per type and chunk: the type itself is the cache's key */
        uint64_t key = f->getter == G_EVTYPE_NAME ? 1 : 2;
        const qobj *o = ck_get(r, e->type, key);
        if (!o) {
            jfr_value u = {.kind = JFR_KIND_STRING, .str = s, .len = strlen(s), .encoding = 3};
            if (!java_string(r, &u))
                return -1;
            o = mat_string(r, u.str, u.len);
            if (!o)
                return -1;
            ck_put(r, e->type, key, o);
        }
        out->k = JV_OBJ;
        out->o = o;
        return 0;
    }
    case G_SETTING_ID: {
        jfr_value v;
        if (jfr_event_field_named(e, "id", &v) != JFR_OK || v.kind != JFR_KIND_INT)
            return 0;
        const char *s = jq_setting_label(r, v.i);
        if (!s)
            return 0;
        const qobj *o = mat_string(r, s, strlen(s));
        if (!o)
            return -1;
        out->k = JV_OBJ;
        out->o = o;
        return 0;
    }
    case G_FRAME: {
        jfr_value fr;
        if (!pick_frame(r, e, f->frame, &fr))
            return 0;
        if (f->depth < 0)
            return 0;
        if (f->depth == 0) { /* the frame itself: its method */
            jfr_value m;
            if (!member(&fr, "method", &m) || m.kind != JFR_KIND_OBJECT)
                return 0;
            const qobj *o = mat_method(r, &m);
            if (!o)
                return -1;
            out->k = JV_OBJ;
            out->o = o;
            return 0;
        }
        if (!follow(f, &fr))
            return 0;
        return to_jv(r, f, &fr, e, out);
    }
    default: {
        if (f->depth < 0)
            return 0;
        if (f->start_ticks && start_jv(e, out))
            return 0;
        jfr_value v;
        if (jfr_event_value(e, &v) != JFR_OK || !follow(f, &v))
            return 0;
        return to_jv(r, f, &v, e, out);
    }
    }
}

/* Resolve a field's dotted path in `t` (EventType.getField): the index path
 * into r->idx and the leaf jfr_field, or NULL. */
static const jfr_field *path_in(const jfr_type *t, const char *path, int32_t *idx, int *depth) {
    *depth = 0;
    const jfr_field *fd = NULL;
    const char *p = path;
    while (t && *p) {
        const char *dot = strchr(p, '.');
        size_t n = dot ? (size_t)(dot - p) : strlen(p);
        fd = NULL;
        for (uint32_t k = 0; k < t->nfields; k++)
            if (strlen(t->fields[k].name) == n && !memcmp(t->fields[k].name, p, n)) {
                fd = &t->fields[k];
                break;
            }
        if (!fd || *depth >= 16)
            return NULL;
        idx[(*depth)++] = (int32_t)fd->index;
        if (!dot)
            return fd;
        if (fd->array)
            return NULL;
        t = fd->type;
        p = dot + 1;
    }
    return NULL;
}

/* Do fields a and b of one type read the same value from an event? */
static bool same_read(const qfield *a, const qfield *b) {
    return a->getter == b->getter && a->frame == b->frame && a->depth == b->depth &&
           a->timestamp == b->timestamp && a->timespan == b->timespan && b->depth >= 0 &&
           !memcmp(a->idx, b->idx, (size_t)b->depth * sizeof *b->idx);
}

/* For each field a type's events feed, the first earlier one that reads the
 * same value the same way (its own index: none). */
static void find_same_reads(jq_run *r, qftype *ft) {
    if (!ft->feedsame && ft->nfeed)
        ft->feedsame = jfr__alloc(r->ar.a, ft->nfeed * sizeof *ft->feedsame);
    if (!ft->feedsame)
        return; /* each reads its own */
    for (size_t k = 0; k < ft->nfeed; k++) {
        const qfield *src = ft->feedsrc[k], *pf = ft->feed[k];
        size_t same = k;
        for (size_t j = 0; j < k && same == k; j++) {
            const qfield *o = ft->feedsrc[j], *pj = ft->feed[j];
            if (same_read(o, src) && !pj->to_string && !pf->to_string &&
                !(pj->agg == QA_COUNT && !pj->grouper))
                same = j;
        }
        ft->feedsame[k] = (uint32_t)same;
    }
}

/* The group key that feed k of ft, no aggregate, reads again (its index
 * among ft's GROUP BY keys), or -1. */
static int key_read(const qftype *ft, size_t k) {
    const qfield *pf = ft->feed[k];
    if (pf->grouper || pf->agg != QA_MISSING || pf->to_string)
        return -1;
    for (size_t j = 0, i = 0; j < ft->nfeed; j++) {
        if (!ft->feed[j]->grouper)
            continue;
        if (!ft->feed[j]->to_string && same_read(ft->feedsrc[j], ft->feedsrc[k]))
            return (int)i;
        i++;
    }
    return -1;
}

/* The pooled top-level field of t through which all of ft's GROUP BY keys
 * that are not of the event type are read (a path through it, or a frame
 * of stackTrace), or -1. */
static int32_t keys_ref(const qftype *ft, const jfr_type *t) {
    int32_t ref = -1;
    for (size_t k = 0; k < ft->nfeed; k++) {
        const qfield *src = ft->feedsrc[k];
        if (!ft->feed[k]->grouper || src->getter == G_ONE || src->getter == G_EVTYPE_LABEL ||
            src->getter == G_EVTYPE_NAME)
            continue;
        int32_t i = src->getter == G_FRAME && src->depth >= 0 ? jfr_type_field_index(t, "stackTrace")
                    : src->getter == G_PATH && src->depth >= 1 ? src->idx[0]
                                                               : -1;
        if (i < 0 || (uint32_t)i >= t->nfields || !t->fields[i].pooled || t->fields[i].array ||
            (ref >= 0 && i != ref))
            return -1;
        ref = i;
    }
    return ref;
}

/* ft's integers read at once, if it can (qftype.int_type): each value
 * it feeds is COUNT's, its group's key, or to_jv's of an integer
 * top-level field (a timespan's Duration too). First the fields, in the
 * ascending order jfr_event_ints wants, then each feed's slot and step. */
static void plan_ints(const jq_run *r, qftype *ft, const jfr_metadata *m) {
    ft->int_type = NULL;
    ft->nint = 0;
    ft->ref_slot = -1;
    const jfr_type *t = jfr_metadata_type_named(m, ft->name);
    if (!t || !r->order_free || ft->nfilters || ft->nfeed > 64 || ft->type_keyed)
        return;
    int32_t ref = ft->group_const ? -1 : keys_ref(ft, t);
    if (!ft->group_const && ref < 0)
        return;
    uint32_t n = 0;
    if (ref >= 0) { /* its key, not a value: no feed reads it as one */
        ft->int_idx[0] = (uint32_t)ref;
        ft->int_kind[0] = JV_NULL;
        ft->int_units[0] = 0;
        n = 1;
    }
    for (size_t k = 0; k < ft->nfeed; k++) {
        const qfield *pf = ft->feed[k], *src = ft->feedsrc[k];
        if (pf->grouper || (pf->agg == QA_COUNT && !pf->to_string) || (src->start_ticks && !pf->to_string) ||
            key_read(ft, k) >= 0)
            continue; /* reads nothing, the start time the parser read, or a key */
        if (pf->to_string || src->getter != G_PATH || src->depth != 1 || src->timestamp ||
            src->idx[0] < 0 || (uint32_t)src->idx[0] >= t->nfields)
            return;
        const jfr_field *fd = &t->fields[src->idx[0]];
        jfr_base b = fd->type ? fd->type->base : JFR_BASE_STRUCT;
        if (fd->array || fd->pooled ||
            !(b == JFR_BASE_BYTE || b == JFR_BASE_SHORT || b == JFR_BASE_INT || b == JFR_BASE_LONG))
            return;
        uint32_t i = (uint32_t)src->idx[0], s = n;
        /* a timespan: its Duration (to_jv's), made from the integer */
        uint8_t c = src->timespan ? JV_DURATION : int_class(b);
        while (s > 0 && ft->int_idx[s - 1] > i)
            s--;
        if (s > 0 && ft->int_idx[s - 1] == i) {
            if (ft->int_kind[s - 1] != c)
                return; /* one field read two ways: not here */
            continue;
        }
        if (n == 16)
            return;
        memmove(&ft->int_idx[s + 1], &ft->int_idx[s], (n - s) * sizeof *ft->int_idx);
        memmove(&ft->int_kind[s + 1], &ft->int_kind[s], (n - s) * sizeof *ft->int_kind);
        memmove(&ft->int_units[s + 1], &ft->int_units[s], (n - s) * sizeof *ft->int_units);
        ft->int_idx[s] = i;
        ft->int_kind[s] = c;
        ft->int_units[s] = fd->units;
        n++;
    }
    uint32_t ngroupers = 0;
    for (size_t k = 0; k < ft->nfeed; k++) {
        const qfield *pf = ft->feed[k];
        int kind = pf->fnk, key = key_read(ft, k);
        uint8_t op, s = 0;
        if (pf->grouper) { /* the group's key (of the type, or of the pooled field) */
            op = INT_KEY;
            s = (uint8_t)ngroupers++;
        } else if (pf->agg == QA_COUNT && !pf->to_string) {
            op = INT_COUNT;
        } else if (ft->feedsrc[k]->start_ticks) {
            op = INT_START;
        } else if (key >= 0) { /* the group's key, read again */
            op = INT_KEY;
            s = (uint8_t)key;
        } else {
            while (ft->int_idx[s] != (uint32_t)ft->feedsrc[k]->idx[0])
                s++;
            op = ft->int_kind[s] == JV_DURATION ? INT_VALUE
                 : kind == FN_SUMLONG           ? INT_SUM
                 : kind == FN_AVG               ? INT_AVG
                 : kind == FN_MIN               ? INT_MIN
                 : kind == FN_MAX               ? INT_MAX
                                                : INT_VALUE;
        }
        ft->int_op[k] = op;
        ft->int_slot[k] = s;
    }
    for (uint32_t s = 0; ref >= 0 && s < n; s++)
        if (ft->int_idx[s] == (uint32_t)ref)
            ft->ref_slot = (int8_t)s;
    ft->nint = n;
    ft->int_type = t;
}

/* Per chunk: index paths for the chunk's types. */
void jq_run_metadata(jq_run *r, const jfr_metadata *m) {
    for (size_t k = 0; k < r->nall; k++) {
        qfield *f = r->all[k];
        f->depth = -1;
        const jfr_type *t = jfr_metadata_type_named(m, f->type->name);
        if (!t)
            continue;
        f->start_ticks = false;
        if (f->getter == G_PATH) {
            const jfr_field *fd = path_in(t, f->path, f->idx, &f->depth);
            if (fd == NULL)
                f->depth = -1;
            /* an event's start time: the parser read it (jfr_event.start_*) */
            f->start_ticks = fd && f->depth == 1 && f->idx[0] == 0 && f->timestamp && !fd->array &&
                             !fd->pooled && (fd->units & JFR_UNIT_TIMESTAMP) == JFR_UNIT_TIMESTAMP_TICKS &&
                             fd->type && fd->type->name && !strcmp(fd->type->name, "long");
        } else if (f->getter == G_FRAME) {
            if (!f->path || !*f->path) {
                f->depth = 0;
                continue;
            }
            const jfr_type *st = NULL;
            int32_t tmp[16];
            int d;
            const jfr_field *sf = path_in(t, "stackTrace.frames", tmp, &d);
            st = sf ? sf->type : NULL;
            if (!st || path_in(st, f->path, f->idx, &f->depth) == NULL)
                f->depth = -1;
        } else {
            f->depth = 0;
        }
    }
    for (size_t k = 0; k < r->ntypes; k++) {
        find_same_reads(r, r->types[k]);
        plan_ints(r, r->types[k], m);
    }
    jq_run_chunk(r);
}

/* ------------------------------------------------------------ resolution */

static bool glob(const char *text, const char *pat) {
    if (!*pat)
        return !*text;
    if (*pat == '*') {
        for (const char *t = text;; t++) {
            if (glob(t, pat + 1))
                return true;
            if (!*t)
                return false;
        }
    }
    if (!*text)
        return false;
    if (*pat == '?' || *pat == *text)
        return glob(text + 1, pat + 1);
    return false;
}

static const char *simple_name(const char *n) {
    const char *d = strrchr(n, '.');
    return d ? d + 1 : n;
}

/* SpellChecker.check. */
static const char *spell(const char *name, const char *const *alts, size_t nalts, char *low) {
    size_t n = strlen(name);
    for (size_t k = 0; k <= n; k++)
        low[k] = (char)((name[k] >= 'A' && name[k] <= 'Z') ? name[k] + 32 : name[k]);
    size_t sl = jfmt_utf16_length(low, n);
    for (size_t a = 0; a < nalts; a++) {
        const char *e = alts[a];
        size_t el = jfmt_utf16_length(e, strlen(e));
        long diff = (long)el - (long)sl;
        bool err = false;
        if (diff == 0) {
            if (!strcmp(e, low)) {
                err = true;
            } else {
                size_t cnt = el;
                for (size_t k = 0; k < el && e[k] && low[k]; k++)
                    if (e[k] == low[k])
                        cnt--;
                err = cnt < (sl < 6 ? 2u : 3u);
            }
        }
        if (diff == 1 || diff == -1) {
            const char *lo = diff == 1 ? e : low, *sh = diff == 1 ? low : e;
            size_t l = 0, s = 0, ln = strlen(lo), sn = strlen(sh);
            while (l < ln && s < sn) {
                if (lo[l] == sh[s])
                    s++;
                l++;
            }
            err = s == sn;
        }
        if (err)
            return e;
    }
    return NULL;
}

static qftype *new_ftype(jq_run *r, const jfr_type *t) {
    qftype *ft = jq_alloc(&r->ar, sizeof *ft);
    if (!ft)
        return NULL;
    ft->type = t;
    ft->run = r;
    size_t n;
    ft->name = jq_strndup(&r->ar, t->name, strlen(t->name));
    ft->simple = jq_utf8_decoded(&r->ar, simple_name(t->name), strlen(simple_name(t->name)), &n);
    ft->label = t->label ? jq_utf8_decoded(&r->ar, t->label, strlen(t->label), &n) : NULL;
    ft->experimental = jfr_annotation_find(t->annotations, t->nannotations, "jdk.jfr.Experimental") != NULL;
    if (!ft->name || !ft->simple || (t->label && !ft->label) || !PUSHR(r, r->ftall, r->nftall, r->capftall, ft))
        return NULL;
    return ft;
}

static bool is_event_type(const jfr_type *t) { return t->is_event; }

typedef struct alias_t {
    const char *name;
    void *p;
} alias_t;

typedef struct resolver {
    jq_run *r;
    const jfr_metadata *m;
    qftype **from;
    size_t nfrom, capfrom;
    alias_t *talias; /* type aliases, insertion order */
    size_t ntalias, captalias;
    alias_t *falias; /* field aliases */
    size_t nfalias, capfalias;
} resolver;

static void *alias_get(alias_t *a, size_t n, const char *name) {
    for (size_t k = 0; k < n; k++)
        if (!strcmp(a[k].name, name))
            return a[k].p;
    return NULL;
}
static bool alias_put(jq_run *r, alias_t **a, size_t *n, size_t *cap, const char *name, void *p) {
    for (size_t k = 0; k < *n; k++)
        if (!strcmp((*a)[k].name, name)) {
            (*a)[k].p = p;
            return true;
        }
    alias_t al = {name, p};
    return PUSHR(r, *a, *n, *cap, al);
}

static const char *const known_types[] = {"java.lang.String", "java.lang.Thread", "java.lang.Class",
                                          "jdk.types.ThreadGroup", "jdk.types.ClassLoader",
                                          "jdk.types.Method", "jdk.types.StackFrame",
                                          "jdk.types.StackTrace"};
static bool known_type(const char *n) {
    for (size_t k = 0; k < sizeof known_types / sizeof *known_types; k++)
        if (!strcmp(known_types[k], n))
            return true;
    return false;
}

static bool has_field(const jfr_type *t, const char *n) {
    return jfr_type_field_index(t, n) != JFR_NO_FIELD;
}

/* FieldBuilder.makeLabel. */
static char *make_label(jq_run *r, const jfr_field *fd, bool has_duration) {
    const char *l;
    if (!strcmp(fd->type->name, "jdk.types.StackFrame"))
        l = "Method";
    else if (!fd->label)
        l = fd->name;
    else if (!strcmp(fd->name, "gcId"))
        l = "GC ID";
    else if (!strcmp(fd->name, "compilerId"))
        l = "Compiler ID";
    else if (!strcmp(fd->name, "startTime") && !has_duration)
        l = "Time";
    else
        l = fd->label;
    size_t n;
    return jq_utf8_decoded(&r->ar, l, strlen(l), &n);
}

static qfield *new_field(jq_run *r, qftype *ft, const char *name) {
    qfield *f = jq_alloc(&r->ar, sizeof *f);
    if (!f)
        return NULL;
    size_t n;
    f->type = ft;
    f->name = jq_utf8_decoded(&r->ar, name, strlen(name), &n);
    f->cell_height = 1;
    f->missing = "N/A";
    f->precision = -1;
    f->orderer = -1;
    f->depth = -1;
    if (!PUSHR(r, r->all, r->nall, r->capall, f))
        return NULL;
    return f;
}

/* FieldBuilder.build: the field named `name` of `ft`, or NULL (*oom on
 * allocation failure). */
static qfield *build_field(jq_run *r, qftype *ft, const char *name, bool *oom) {
    const jfr_type *t = ft->type;
    qfield *f;
    if ((!strcmp(name, "id") && !strcmp(t->name, "jdk.ActiveSetting")) ||
        !strcmp(name, "eventType.label") || !strcmp(name, "eventType.name")) {
        if (!(f = new_field(r, ft, name)))
            goto oom;
        f->align_left = true;
        f->data_type = "java.lang.String";
        f->label = "Event Type";
        f->lexical = true;
        f->getter = !strcmp(name, "id") ? G_SETTING_ID
                    : !strcmp(name, "eventType.label") ? G_EVTYPE_LABEL : G_EVTYPE_NAME;
        return f;
    }
    const jfr_field *fd;
    int32_t idx[16];
    int depth;
    int getter = G_PATH, frame = 0;
    const char *path = name;
    static const char *const frames[] = {"stackTrace.topFrame", "stackTrace.topApplicationFrame",
                                         "stackTrace.topNotInitFrame"};
    const jfr_field *framefd = NULL;
    for (int k = 0; k < 3; k++) {
        size_t fl = strlen(frames[k]);
        if (strncmp(name, frames[k], fl) != 0)
            continue;
        const jfr_field *sf = path_in(t, "stackTrace.frames", idx, &depth);
        if (!sf)
            continue;
        if (name[fl] == 0) {
            framefd = sf;
            getter = G_FRAME;
            frame = k;
            path = "";
        } else if (name[fl] == '.') {
            const jfr_field *sub = path_in(sf->type, name + fl + 1, idx, &depth);
            if (sub) {
                framefd = sub;
                getter = G_FRAME;
                frame = k;
                path = name + fl + 1;
            }
        }
    }
    fd = framefd ? framefd : path_in(t, name, idx, &depth);
    if (!fd)
        return NULL;
    if (!(f = new_field(r, ft, name)))
        goto oom;
    f->getter = getter;
    f->frame = frame;
    f->path = jq_strndup(&r->ar, path, strlen(path));
    /* a simpleType field (jdk.types.GCName, ...) is its one field to the JDK */
    const jfr_type *vt = fd->type;
    if (vt->simple && vt->nfields == 1 && !fd->array)
        vt = vt->fields[0].type;
    const char *tn = vt->name;
    f->fixed_width = strcmp(tn, "java.lang.String") != 0;
    f->data_type = tn;
    f->label = make_label(r, fd, has_field(t, "duration"));
    f->align_left = true;
    if (!f->path || !f->label)
        goto oom;
    switch (vt->base) {
    case JFR_BASE_INT: case JFR_BASE_LONG: case JFR_BASE_SHORT: case JFR_BASE_BYTE:
        f->integral = true;
        f->align_left = false;
        break;
    case JFR_BASE_FLOAT: case JFR_BASE_DOUBLE:
        f->fractional = true;
        f->align_left = false;
        break;
    case JFR_BASE_BOOLEAN:
        f->align_left = false;
        break;
    default:
        break;
    }
    if (fd->units & JFR_UNIT_TIMESTAMP) {
        f->align_left = true;
        f->data_type = "java.time.Instant";
        f->timestamp = true;
    }
    if (fd->units & JFR_UNIT_TIMESPAN) {
        f->align_left = false;
        f->data_type = "java.time.Duration";
        f->timespan = true;
    }
    if (fd->units & JFR_UNIT_PERCENTAGE)
        f->percentage = true;
    if (fd->units & JFR_UNIT_BITS)
        f->bits = true;
    if (fd->units & JFR_UNIT_BYTES)
        f->bytes = true;
    if (fd->units & JFR_UNIT_FREQUENCY)
        f->frequency = true;
    if (fd->units & JFR_UNIT_MEMORY_ADDRESS) {
        f->memaddr = true;
        f->align_left = true;
    }
    if (known_type(tn)) {
        f->lexical = true;
        f->fixed_width = false;
    }
    return f;
oom:
    *oom = true;
    return NULL;
}

typedef struct flist {
    qfield **v;
    size_t n, cap;
} flist;

static int resolve_fields(resolver *rs, const char *name, qftype **types, size_t ntypes, flist *out);

static int resolve_fields(resolver *rs, const char *name, qftype **types, size_t ntypes, flist *out) {
    jq_run *r = rs->r;
    bool oom = false;
    if (!strcmp(name, "*"))
        name = "startTime";
    if (name[0] == '[') {
        const char *close = strchr(name, ']');
        if (close) {
            const char *suffix = close + 1;
            const char *p = name + 1;
            while (p <= close) {
                const char *bar = memchr(p, '|', (size_t)(close - p));
                const char *end = bar ? bar : close;
                size_t tn = (size_t)(end - p), sn = strlen(suffix);
                char *full = jq_alloc(&r->ar, tn + sn + 1);
                if (!full)
                    return -1;
                memcpy(full, p, tn);
                memcpy(full + tn, suffix, sn);
                if (resolve_fields(rs, full, types, ntypes, out))
                    return -1;
                if (!bar)
                    break;
                p = bar + 1;
            }
            return 0;
        }
    }
    if (strchr(name, '.')) {
        for (size_t k = 0; k < ntypes; k++) {
            qftype *et = types[k];
            size_t fl = strlen(et->name), sl = strlen(et->simple);
            if (!strncmp(name, et->name, fl) && name[fl] == '.') {
                qfield *f = build_field(r, et, name + fl + 1, &oom);
                if (f && !PUSHR(r, out->v, out->n, out->cap, f))
                    return -1;
            }
            if (!strncmp(name, et->simple, sl) && name[sl] == '.') {
                qfield *f = build_field(r, et, name + sl + 1, &oom);
                if (f && !PUSHR(r, out->v, out->n, out->cap, f))
                    return -1;
            }
            if (oom)
                return -1;
        }
    }
    for (size_t k = 0; k < rs->ntalias; k++) {
        size_t al = strlen(rs->talias[k].name);
        if (!strncmp(name, rs->talias[k].name, al) && name[al] == '.') {
            qftype *s = rs->talias[k].p;
            const char *rest = strchr(name, '.') + 1;
            size_t nl = strlen(s->name), rl = strlen(rest);
            char *un = jq_alloc(&r->ar, nl + rl + 2);
            if (!un)
                return -1;
            memcpy(un, s->name, nl);
            un[nl] = '.';
            memcpy(un + nl + 1, rest, rl);
            if (resolve_fields(rs, un, &s, 1, out))
                return -1;
        }
    }
    for (size_t k = 0; k < ntypes; k++) {
        qfield *f = build_field(r, types[k], name, &oom);
        if (oom)
            return -1;
        if (f && !PUSHR(r, out->v, out->n, out->cap, f))
            return -1;
    }
    return 0;
}

static int unknown_field(resolver *rs, const char *name, qftype **types, size_t ntypes) {
    jq_run *r = rs->r;
    size_t nalts = 0, cap = 0;
    const char **alts = NULL;
    size_t jcap = 1;
    for (size_t k = 0; k < ntypes; k++)
        jcap += strlen(types[k]->type->name) + 2;
    char *joined = jq_alloc(&r->ar, jcap);
    if (!joined)
        return jq_run_error(r, false, "out of memory");
    size_t jl = 0;
    for (size_t k = 0; k < ntypes; k++) {
        const jfr_type *t = types[k]->type;
        for (uint32_t j = 0; j < t->nfields; j++) {
            const char *fn = t->fields[j].name;
            char *a = jq_alloc(&r->ar, strlen(fn) + 1);
            char *b = jq_alloc(&r->ar, strlen(t->name) + strlen(fn) + 2);
            char *c = jq_alloc(&r->ar, strlen(types[k]->simple) + strlen(fn) + 2);
            if (!a || !b || !c)
                return jq_run_error(r, false, "out of memory");
            strcpy(a, fn);
            sprintf(b, "%s.%s", t->name, fn);
            sprintf(c, "%s.%s", types[k]->simple, fn);
            if (!PUSHR(r, alts, nalts, cap, a) || !PUSHR(r, alts, nalts, cap, b) ||
                !PUSHR(r, alts, nalts, cap, c))
                return jq_run_error(r, false, "out of memory");
        }
        jl += (size_t)snprintf(joined + jl, jcap - jl, "%s%s", k ? ", " : "", t->name);
    }
    char *low = jq_alloc(&r->ar, strlen(name) + 1);
    const char *alt = low ? spell(name, alts, nalts, low) : NULL;
    jfr__free(r->ar.a, alts, cap * sizeof *alts);
    if (alt)
        return jq_run_error(r, false, "Can't find field named '%s' in %s.\nDid you mean '%s'?", name,
                            joined, alt);
    return jq_run_error(r, false,
                        "Can't find field named '%s' in %s.\nUse 'SHOW FIELDS %s' to list available fields.",
                        name, joined, ntypes ? types[0]->simple : "");
}

static qfield *add_field(resolver *rs, const char *name, qftype **types, size_t ntypes) {
    jq_run *r = rs->r;
    flist l = {0};
    if (resolve_fields(rs, name, types, ntypes, &l)) {
        jfr__free(r->ar.a, l.v, l.cap * sizeof *l.v);
        jq_run_error(r, false, "out of memory");
        return NULL;
    }
    if (!l.n) {
        unknown_field(rs, name, types, ntypes);
        return NULL;
    }
    qfield *primary = l.v[0];
    bool mixed = false;
    for (size_t k = 0; k < l.n; k++)
        if (strcmp(l.v[k]->data_type, primary->data_type))
            mixed = true;
    for (size_t k = 0; k < l.n; k++) {
        if (!PUSHR(r, primary->sources, primary->nsources, primary->capsources, l.v[k])) {
            jq_run_error(r, false, "out of memory");
            primary = NULL;
            break;
        }
        if (mixed) {
            l.v[k]->to_string = true;
            l.v[k]->lexical = true;
            l.v[k]->data_type = "java.lang.String";
            l.v[k]->align_left = true;
        }
    }
    jfr__free(r->ar.a, l.v, l.cap * sizeof *l.v);
    if (primary && !PUSHR(r, r->fields, r->nfields, r->capfields, primary)) {
        jq_run_error(r, false, "out of memory");
        return NULL;
    }
    return primary;
}

static const char *agg_label(jq_run *r, qagg a, const char *l) {
    const char *pre = "", *post = "";
    switch (a) {
    case QA_COUNT: return "Count";
    case QA_AVG: pre = "Avg. "; break;
    case QA_MAX: pre = "Max. "; break;
    case QA_MIN: pre = "Min. "; break;
    case QA_SUM: pre = "Total "; break;
    case QA_UNIQUE: pre = "Unique Count "; break;
    case QA_LIST: case QA_SET: post = "s"; break;
    case QA_DIFF: pre = "Difference "; break;
    case QA_MEDIAN: pre = "Median "; break;
    case QA_P90: pre = "P90 "; break;
    case QA_P95: pre = "P95 "; break;
    case QA_P99: pre = "P99 "; break;
    case QA_P999: pre = "P99.9 "; break;
    case QA_STDEV: pre = "Std. Dev. "; break;
    default: return l;
    }
    size_t n = strlen(pre) + strlen(l) + strlen(post);
    char *s = jq_alloc(&r->ar, n + 1);
    if (s)
        snprintf(s, n + 1, "%s%s%s", pre, l, post);
    return s ? s : l;
}

static void configure_aggregator(jq_run *r, qfield *f) {
    qagg a = f->agg;
    if (a == QA_COUNT || a == QA_UNIQUE) {
        f->integral = true;
        f->timestamp = f->timespan = f->fractional = f->bytes = f->bits = f->frequency = false;
        f->memaddr = f->percentage = f->align_left = f->lexical = false;
    }
    if (a == QA_LIST || a == QA_SET) {
        f->align_left = true;
        f->lexical = true;
    }
    f->label = (char *)agg_label(r, a, f->label);
}

/* Wildcard fields of SELECT * (FieldBuilder.createWildcardFields). */
static int wildcard(resolver *rs, qftype *ft) {
    jq_run *r = rs->r;
    typedef struct we {
        char *name, *label;
        const jfr_field *fd;
    } we;
    we *stack = NULL, *out = NULL;
    size_t ns = 0, cs = 0, no = 0, co = 0;
    const jfr_field **visited = NULL;
    size_t nv = 0, cv = 0;
    const jfr_type *t = ft->type;
    bool hd = has_field(t, "duration");
    int rc = -1;
    for (uint32_t k = t->nfields; k-- > 0;) {
        we w = {(char *)t->fields[k].name, make_label(r, &t->fields[k], hd), &t->fields[k]};
        if (!w.label || !PUSHR(r, stack, ns, cs, w))
            goto done;
    }
    while (ns) {
        we w = stack[--ns];
        bool seen = false;
        for (size_t k = 0; k < nv; k++)
            if (visited[k] == w.fd)
                seen = true;
        if (seen)
            continue;
        if (!PUSHR(r, visited, nv, cv, w.fd))
            goto done;
        const jfr_type *st = w.fd->type;
        if (st->nfields && st->base == JFR_BASE_STRUCT && !st->simple && !known_type(st->name)) {
            for (uint32_t k = st->nfields; k-- > 0;) {
                if (strchr(w.name, '.'))
                    continue;
                const jfr_field *sf = &st->fields[k];
                char *l2 = make_label(r, sf, false);
                size_t nl = strlen(w.name) + strlen(sf->name) + 2;
                char *n2 = jq_alloc(&r->ar, nl);
                size_t ll = strlen(w.label) + strlen(l2 ? l2 : "") + 4;
                char *lab = jq_alloc(&r->ar, ll);
                if (!l2 || !n2 || !lab)
                    goto done;
                snprintf(n2, nl, "%s.%s", w.name, sf->name);
                snprintf(lab, ll, "%s : %s", w.label, l2);
                we x = {n2, lab, sf};
                if (!PUSHR(r, stack, ns, cs, x))
                    goto done;
            }
        } else if (!PUSHR(r, out, no, co, w)) {
            goto done;
        }
    }
    for (size_t k = 0; k < no; k++) {
        bool oom = false;
        qfield *f = build_field(r, ft, out[k].name, &oom);
        if (!f)
            goto done;
        f->label = out[k].label;
        f->visible = true;
        if (!PUSHR(r, f->sources, f->nsources, f->capsources, f) ||
            !PUSHR(r, r->fields, r->nfields, r->capfields, f))
            goto done;
    }
    rc = 0;
done:
    jfr__free(r->ar.a, stack, cs * sizeof *stack);
    jfr__free(r->ar.a, out, co * sizeof *out);
    jfr__free(r->ar.a, visited, cv * sizeof *visited);
    if (rc)
        jq_run_error(r, false, "out of memory");
    return rc;
}

/* ActiveSetting ids -> the label (or name) of the event type. */
const char *jq_setting_label(jq_run *r, int64_t id) {
    for (size_t k = 0; k < r->nsetlab; k++)
        if (r->setlab[k].id == id)
            return r->setlab[k].label;
    return NULL;
}

/* Does feed k of ft, no aggregate, read what a GROUP BY key of ft reads:
 * its event type's label or name, in every event of the group the value
 * the group holds? */
static bool is_key(const qftype *ft, size_t k) {
    const qfield *pf = ft->feed[k];
    int g = ft->feedsrc[k]->getter;
    if (pf->grouper || pf->agg != QA_MISSING || pf->to_string || (g != G_EVTYPE_LABEL && g != G_EVTYPE_NAME))
        return false;
    for (size_t j = 0; j < ft->nfeed; j++)
        if (ft->feed[j]->grouper && !ft->feed[j]->to_string && ft->feedsrc[j]->getter == g)
            return true;
    return false;
}

static int field_order_free(const qfield *f);
static int fn_kind_of(const qfield *f);

int jq_resolve(jq_run *r, const jfr_metadata *m) {
    resolver rs = {.r = r, .m = m};
    jq_query *q = &r->q;
    int rc = -1;
    /* FROM */
    for (size_t k = 0; k < q->nfrom; k++) {
        const char *name = q->from[k].name;
        size_t before = rs.nfrom;
        for (uint32_t j = 0; j < m->ntypes; j++) {
            const jfr_type *t = m->types[j];
            if (is_event_type(t) && glob(t->name, name)) {
                qftype *ft = new_ftype(r, t);
                if (!ft || !PUSHR(r, rs.from, rs.nfrom, rs.capfrom, ft))
                    goto oom;
            }
        }
        size_t nl = strlen(name);
        for (uint32_t j = 0; j < m->ntypes; j++) {
            const jfr_type *t = m->types[j];
            size_t tl = strlen(t->name);
            if (is_event_type(t) && tl > nl && t->name[tl - nl - 1] == '.' &&
                !strcmp(t->name + tl - nl, name)) {
                qftype *ft = new_ftype(r, t);
                if (!ft || !PUSHR(r, rs.from, rs.nfrom, rs.capfrom, ft))
                    goto oom;
                break;
            }
        }
        if (rs.nfrom == before) {
            size_t na = 0, ca = 0;
            const char **alts = NULL;
            for (uint32_t j = 0; j < m->ntypes; j++)
                if (is_event_type(m->types[j]) && !PUSHR(r, alts, na, ca, simple_name(m->types[j]->name)))
                    goto oom;
            char *low = jq_alloc(&r->ar, strlen(name) + 1);
            const char *alt = low ? spell(name, alts, na, low) : NULL;
            jfr__free(r->ar.a, alts, ca * sizeof *alts);
            if (alt)
                jq_run_error(r, false, "Can't find event type named '%s'. Did you mean '%s'?", name, alt);
            else
                jq_run_error(r, false, "Can't find event type named '%s'. 'SHOW EVENTS' will list available event types.", name);
            goto done;
        }
        if (q->from[k].alias && rs.nfrom - before > 1) {
            jq_run_error(r, false, "Alias can only refer to a single event type");
            goto done;
        }
        if (q->from[k].alias)
            if (!alias_put(r, &rs.talias, &rs.ntalias, &rs.captalias, q->from[k].alias, rs.from[before]))
                goto oom;
    }
    /* SELECT */
    if (!q->nselect) {
        for (size_t k = 0; k < rs.nfrom; k++)
            if (wildcard(&rs, rs.from[k]))
                goto done;
    }
    for (size_t k = 0; k < q->nselect; k++) {
        qexpr *e = &q->select[k];
        qfield *f = add_field(&rs, e->name, rs.from, rs.nfrom);
        if (!f)
            goto done;
        f->visible = true;
        f->agg = e->agg;
        configure_aggregator(r, f);
        if (e->alias && !alias_put(r, &rs.falias, &rs.nfalias, &rs.capfalias, e->alias, f))
            goto oom;
        if (!strcmp(e->name, "*") && f->agg != QA_COUNT) {
            jq_run_error(r, true, "Wildcard ('*') can only be used with aggregator function COUNT");
            goto done;
        }
    }
    /* GROUP BY */
    if (!q->ngroup) {
        bool any = false;
        for (size_t k = 0; k < q->nselect; k++)
            if (q->select[k].agg != QA_MISSING)
                any = true;
        if (any) {
            for (size_t k = 0; k < rs.nfrom; k++) {
                qfield *f = add_field(&rs, "startTime", &rs.from[k], 1);
                if (!f)
                    goto done;
                f->getter = G_ONE;
                f->grouper = true;
            }
            static char st[] = "startTime";
            char **g = jq_alloc(&r->ar, sizeof *g);
            if (!g)
                goto oom;
            g[0] = st;
            q->group = g;
            q->ngroup = 1;
            r->implicit_group = true;
        }
    } else {
        for (size_t gi = 0; gi < q->ngroup; gi++)
            for (size_t k = 0; k < rs.nfrom; k++) {
                const char *fname = q->group[gi];
                qfield *al = alias_get(rs.falias, rs.nfalias, fname);
                if (al) {
                    fname = al->name;
                    if (al->agg != QA_MISSING) {
                        jq_run_error(r, false, "Aggregate funtion can't be used together with an alias");
                        goto done;
                    }
                }
                qfield *f = add_field(&rs, fname, &rs.from[k], 1);
                if (!f)
                    goto done;
                f->grouper = true;
            }
    }
    /* ORDER BY */
    for (size_t k = 0; k < q->norder; k++) {
        qfield *f = alias_get(rs.falias, rs.nfalias, q->order[k].name);
        if (!f)
            f = add_field(&rs, q->order[k].name, rs.from, rs.nfrom);
        if (!f)
            goto done;
        f->orderer = (int)k;
    }
    /* WHERE */
    for (size_t k = 0; k < q->nwhere; k++) {
        flist l = {0};
        qfield *al = alias_get(rs.falias, rs.nfalias, q->where[k].field);
        if (al) {
            if (!PUSHR(r, l.v, l.n, l.cap, al))
                goto oom;
        } else if (resolve_fields(&rs, q->where[k].field, rs.from, rs.nfrom, &l)) {
            jfr__free(r->ar.a, l.v, l.cap * sizeof *l.v);
            goto oom;
        }
        for (size_t j = 0; j < l.n; j++) {
            qftype *ft = l.v[j]->type;
            qfilter fl = {l.v[j], q->where[k].value};
            if (!PUSHR(r, ft->filters, ft->nfilters, ft->capfilters, fl)) {
                jfr__free(r->ar.a, l.v, l.cap * sizeof *l.v);
                goto oom;
            }
        }
        jfr__free(r->ar.a, l.v, l.cap * sizeof *l.v);
    }
    for (size_t k = 0; k < r->nfields; k++)
        r->fields[k]->index = (int)k;
    /* COLUMN, FORMAT */
    if (q->ncolumn) {
        if (q->ncolumn != q->nselect) {
            jq_run_error(r, true, "Number of fields in COLUMN clause doesn't match SELECT");
            goto done;
        }
        for (size_t k = 0; k < r->nfields; k++)
            if (r->fields[k]->visible)
                r->fields[k]->label = q->column[r->fields[k]->index];
    }
    if (q->nformat) {
        if (q->nformat != q->nselect) {
            jq_run_error(r, false, "Number of fields in FORMAT doesn't match SELECT");
            goto done;
        }
        for (size_t k = 0; k < r->nfields; k++) {
            qfield *f = r->fields[k];
            if (!f->visible)
                continue;
            const qformat *fm = &q->format[f->index];
            for (size_t j = 0; j < fm->nprops; j++) {
                const qprop *p = &fm->props[j];
                switch (p->kind) {
                case QP_NORMALIZED: f->normalized = f->percentage = true; break;
                case QP_TRUNC_BEGIN: f->truncate = 1; break;
                case QP_TRUNC_END: f->truncate = 2; break;
                case QP_MISSING: f->missing = p->missing; break;
                case QP_CELL_HEIGHT: f->cell_height = p->value; break;
                case QP_PRECISION: f->precision = p->value; break;
                default: break;
                }
            }
        }
    }
    /* the types whose events feed the fields (equal FilteredTypes merge) */
    for (size_t k = 0; k < rs.nfrom; k++) {
        qftype *a = rs.from[k];
        for (size_t j = 0; j < k && !a->same; j++) {
            qftype *b = rs.from[j];
            if (b->same || b->type != a->type || b->nfilters != a->nfilters)
                continue;
            bool eq = true;
            for (size_t i = 0; i < a->nfilters; i++)
                if (strcmp(a->filters[i].field->name, b->filters[i].field->name) ||
                    strcmp(a->filters[i].value, b->filters[i].value))
                    eq = false;
            if (eq)
                a->same = b;
        }
    }
    for (size_t k = 0; k < r->nfields; k++) {
        qfield *f = r->fields[k];
        for (size_t j = 0; j < f->nsources; j++) {
            qfield *src = f->sources[j];
            qftype *ft = src->type;
            while (ft->same)
                ft = ft->same;
            size_t capsrc = ft->capfeed;
            if (!PUSHR(r, ft->feed, ft->nfeed, ft->capfeed, f))
                goto oom;
            if (ft->capfeed != capsrc) {
                const qfield **ns = jfr__realloc(r->ar.a, ft->feedsrc, capsrc * sizeof(qfield *),
                                                 ft->capfeed * sizeof(qfield *));
                if (!ns)
                    goto oom;
                ft->feedsrc = ns;
            }
            ft->feedsrc[ft->nfeed - 1] = src;
            /* the primary's getter reads it: its conversions */
            if (src != f) {
                src->timestamp = f->timestamp;
                src->timespan = f->timespan;
            }
            if (f->getter == G_ONE)
                src->getter = G_ONE;
        }
    }
    for (size_t k = 0; k < rs.nfrom; k++) {
        rs.from[k]->sub = (uint32_t)r->ntypes;
        if (!rs.from[k]->same && !PUSHR(r, r->types, r->ntypes, r->captypes, rs.from[k]))
            goto oom;
    }
    /* ActiveSetting labels */
    r->setlab = jq_alloc(&r->ar, (m->ntypes + 1) * sizeof *r->setlab);
    if (!r->setlab)
        goto oom;
    for (uint32_t j = 0; j < m->ntypes; j++)
        if (m->types[j]->is_event) {
            const char *l = m->types[j]->label ? m->types[j]->label : m->types[j]->name;
            r->setlab[r->nsetlab].id = (int64_t)m->types[j]->id;
            size_t ln;
            r->setlab[r->nsetlab].label = jq_utf8_decoded(&r->ar, l, strlen(l), &ln);
            if (!r->setlab[r->nsetlab++].label)
                goto oom;
        }
    /* the data types of the first metadata are gone after this chunk */
    for (size_t k = 0; k < r->nall; k++) {
        qfield *f = r->all[k];
        if (f->data_type)
            f->data_type = jq_strndup(&r->ar, f->data_type, strlen(f->data_type));
    }
    for (size_t k = 0; k < rs.nfrom; k++)
        rs.from[k]->type = NULL;
    for (size_t k = 0; k < r->nall; k++)
        r->all[k]->fnk = (int8_t)fn_kind_of(r->all[k]);
    r->order_free = q->ngroup > 0;
    for (size_t k = 0; k < r->nfields && r->order_free; k++) {
        int of = field_order_free(r->fields[k]);
        r->order_free = of != 0;
        r->order_checked |= of == 2;
    }
    for (size_t k = 0; k < r->ntypes; k++) {
        qftype *ft = r->types[k];
        ft->group_const = !ft->nfilters && ft->nfeed <= 64;
        ft->type_keyed = r->order_free && ft->group_const;
        ft->count_only = true;
        for (size_t i = 0; i < ft->nfeed; i++) {
            const qfield *pf = ft->feed[i];
            int g = ft->feedsrc[i]->getter;
            bool by_type = g == G_ONE || g == G_EVTYPE_LABEL || g == G_EVTYPE_NAME;
            ft->type_keyed &= by_type || (pf->agg == QA_COUNT && !pf->grouper && !pf->to_string);
            ft->count_only &= pf->grouper || pf->agg == QA_COUNT || is_key(ft, i);
            if (pf->grouper)
                ft->group_const &= by_type;
        }
        ft->count_only &= ft->type_keyed;
        if (ft->type_keyed && !(ft->tvals = jq_alloc(&r->ar, (ft->nfeed ? ft->nfeed : 1) * sizeof *ft->tvals)))
            goto oom;
    }
    r->resolved = true;
    rc = 0;
    goto done;
oom:
    jq_run_error(r, false, "out of memory");
done:
    jfr__free(r->ar.a, rs.from, rs.capfrom * sizeof *rs.from);
    jfr__free(r->ar.a, rs.talias, rs.captalias * sizeof *rs.talias);
    jfr__free(r->ar.a, rs.falias, rs.capfalias * sizeof *rs.falias);
    return rc;
}

/* ------------------------------------------------------------ aggregation */

typedef struct qfn {
    jv a, b;
    jq_key ka, kb; /* order_free: the keys of a and b */
    int64_t n, ls, lns;
    double d;
    uint64_t mag; /* FN_AVG: the sum of |v| of its integers (saturated) */
    bool frac;    /* FN_AVG: a value that is not an integer */
    bool has, has_b;
    jv *vals;
    uint32_t nv, cv;
    bool ts_set;
    int64_t ts_s;
    int32_t ts_ns;
} qfn;

typedef struct qgroup {
    struct qgroup *next;
    uint64_t h;
    int32_t jhash;
    uint32_t nkeys;
    jv *keys;
    qfn *fn;
    jq_key first; /* order_free: the key of its first event */
} qgroup;

typedef struct qgroups {
    qgroup **slots;
    size_t cap, n;
    bool trailing; /* the JDK's HashMap had a call after the last group's */
    qgroup **all;
    size_t nall, capall;
} qgroups;


static int fn_kind_of(const qfield *f) {
    switch (f->grouper ? QA_MISSING : f->agg) {
    case QA_MISSING: return FN_FIRSTNN;
    case QA_LIST: return FN_LIST;
    case QA_SET: return FN_SET;
    case QA_DIFF: return f->timestamp ? FN_TIMEDIFF : FN_DIFF;
    case QA_STDEV: return FN_STDEV;
    case QA_MEDIAN: return FN_MEDIAN;
    case QA_P90: case QA_P95: case QA_P99: case QA_P999: return FN_PCT;
    case QA_MAX: return FN_MAX;
    case QA_MIN: return FN_MIN;
    case QA_SUM:
        return f->timespan ? FN_SUMDUR : f->fractional ? FN_SUMDBL : f->integral ? FN_SUMLONG : FN_NULL;
    case QA_FIRST: return FN_FIRST;
    case QA_LAST_BATCH: return FN_LASTBATCH;
    case QA_LAST: return FN_LAST;
    case QA_AVG: return f->timespan ? FN_AVGDUR : FN_AVG;
    case QA_COUNT: return FN_COUNT;
    case QA_UNIQUE: return FN_UNIQUE;
    default: return FN_NULL;
    }
}
static inline int fn_kind(const qfield *f) { return f->fnk; }

static jv dur_nanos(int64_t n) {
    jv r = {.k = JV_DURATION};
    r.i = n / 1000000000;
    r.ns = (int32_t)(n % 1000000000);
    if (r.ns < 0) {
        r.ns += 1000000000;
        r.i--;
    }
    return r;
}

static bool push_val(jq_run *r, qfn *fn, const jv *v) {
    if (fn->nv == fn->cv) {
        uint32_t nc = fn->cv ? fn->cv * 2 : 4;
        jv *nv = jfr__realloc(r->ar.a, fn->vals, fn->cv * sizeof *nv, nc * sizeof *nv);
        if (!nv)
            return false;
        fn->vals = nv;
        fn->cv = nc;
    }
    fn->vals[fn->nv++] = *v;
    return true;
}

/* AVG of integers, exactly too (avg_exact), which does not depend on the
 * order: the sum and the sum of the magnitudes. */
static inline void avg_exact_add(qfn *fn, int64_t i) {
    uint64_t m = i < 0 ? 0 - (uint64_t)i : (uint64_t)i;
    fn->ls = (int64_t)((uint64_t)fn->ls + (uint64_t)i);
    fn->mag = fn->mag + m < m ? UINT64_MAX : fn->mag + m;
}

/* Inline: its switch in each event's loop, not a call per aggregate. */
static inline __attribute__((always_inline)) bool fn_add(jq_run *r, qfield *f, qfn *fn, const jv *v,
                                                         const jfr_event *e) {
    switch (fn_kind(f)) {
    case FN_FIRSTNN:
        if (v->k != JV_NULL)
            fn->a = *v;
        return true;
    case FN_LIST:
        return push_val(r, fn, v);
    case FN_SET:
    case FN_UNIQUE:
        for (uint32_t k = 0; k < fn->nv; k++)
            if (jq_jv_equal(&fn->vals[k], v))
                return true;
        return push_val(r, fn, v);
    case FN_TIMEDIFF:
        if (v->k == JV_INSTANT) {
            if (!fn->has) {
                fn->a = *v;
                fn->has = true;
            } else {
                fn->b = *v;
                fn->has_b = true;
            }
        }
        return true;
    case FN_DIFF:
        if (jq_is_number(v) && isfinite(jq_num_d(v))) {
            if (!fn->has)
                fn->a = *v;
            fn->has = true;
            fn->b = *v;
        }
        return true;
    case FN_STDEV:
    case FN_MEDIAN:
    case FN_PCT:
        if (f->timespan) {
            if (v->k != JV_DURATION)
                return true;
            jv n = {.k = JV_LONG, .i = (int64_t)((uint64_t)v->i * 1000000000u + (uint64_t)v->ns)};
            return push_val(r, fn, &n);
        }
        if (jq_is_number(v) && (fn_kind(f) == FN_MEDIAN || isfinite(jq_num_d(v))))
            return push_val(r, fn, v);
        return true;
    case FN_MAX:
    case FN_MIN:
        if (fn->has && v->k == fn->a.k && jq_is_integral(v)) { /* jq_jv_compare's first case */
            if (fn_kind(f) == FN_MAX ? v->i > fn->a.i : v->i < fn->a.i)
                fn->a = *v;
            return true;
        }
        if (!jq_jv_comparable(v))
            return true;
        if (!fn->has) {
            fn->a = *v;
            fn->has = true;
        } else {
            int c = jq_jv_compare(v, &fn->a);
            if (fn_kind(f) == FN_MAX ? c > 0 : c < 0)
                fn->a = *v;
        }
        return true;
    case FN_SUMDUR:
        if (v->k == JV_DURATION) {
            fn->ls += v->i;
            fn->lns += v->ns;
            fn->has = true;
        }
        return true;
    case FN_SUMDBL:
        if (jq_is_number(v) && isfinite(jq_num_d(v))) {
            fn->d += jq_num_d(v);
            fn->has = true;
        }
        return true;
    case FN_SUMLONG:
        if (jq_is_number(v)) {
            fn->ls = (int64_t)((uint64_t)fn->ls + (uint64_t)jq_num_l(v));
            fn->has = true;
        }
        return true;
    case FN_FIRST:
        if (!fn->has) {
            fn->a = *v;
            fn->has = true;
        }
        return true;
    case FN_LASTBATCH:
        fn->a = *v;
        fn->has = true;
        fn->ts_set = true;
        fn->ts_s = e->end_nanos / 1000000000;
        fn->ts_ns = (int32_t)(e->end_nanos % 1000000000);
        f->last_s = fn->ts_s;
        f->last_ns = fn->ts_ns;
        return true;
    case FN_LAST:
        fn->a = *v;
        fn->has = true;
        return true;
    case FN_AVGDUR:
        if (v->k == JV_DURATION) {
            fn->ls += v->i;
            fn->lns += v->ns;
            fn->n++;
        }
        return true;
    case FN_AVG:
        if (jq_is_number(v) && isfinite(jq_num_d(v))) {
            fn->d += jq_num_d(v);
            fn->n++;
            if (jq_is_integral(v)) {
                avg_exact_add(fn, v->i);
            } else {
                fn->frac = true;
            }
        }
        return true;
    case FN_COUNT:
        fn->n++;
        return true;
    default:
        return true;
    }
}

static inline __attribute__((always_inline)) int key_cmp(const jq_key *x, const jq_key *y) {
    if (x->a != y->a)
        return x->a < y->a ? -1 : 1;
    if (x->b != y->b)
        return x->b < y->b ? -1 : 1;
    if (x->c != y->c)
        return x->c < y->c ? -1 : 1;
    return x->d < y->d ? -1 : x->d > y->d;
}

/* fn_add of an order_free run: what fn_add keeps by arrival, kept by key
 * (the earliest or the latest event's value; MIN and MAX ties: the
 * earliest), so that any arrival order gives the result of the JDK's.
 * Inline, as fn_add, in both of its callers' loops. */
static inline __attribute__((always_inline)) bool fn_add_keyed(jq_run *r, qfield *f, qfn *fn,
                                                               const jv *v, const jfr_event *e,
                                                               const jq_key *k) {
    int kind = fn_kind(f);
    switch (kind) {
    case FN_FIRSTNN: /* the latest non-null */
        if (v->k != JV_NULL && (!fn->has || key_cmp(k, &fn->ka) > 0)) {
            fn->a = *v;
            fn->ka = *k;
            fn->has = true;
        }
        return true;
    case FN_FIRST:
    case FN_LAST:
        if (!fn->has || (kind == FN_FIRST ? key_cmp(k, &fn->ka) < 0 : key_cmp(k, &fn->ka) > 0)) {
            fn->a = *v;
            fn->ka = *k;
            fn->has = true;
        }
        return true;
    case FN_TIMEDIFF: /* the first and the last Instant, b once there are two */
    case FN_DIFF:     /* the first and the last finite number */
        if (kind == FN_TIMEDIFF ? v->k != JV_INSTANT : !jq_is_number(v) || !isfinite(jq_num_d(v)))
            return true;
        if (!fn->has) {
            fn->a = fn->b = *v;
            fn->ka = fn->kb = *k;
            fn->has = true;
            return true;
        }
        if (key_cmp(k, &fn->ka) < 0) {
            fn->a = *v;
            fn->ka = *k;
        }
        if (key_cmp(k, &fn->kb) > 0) {
            fn->b = *v;
            fn->kb = *k;
        }
        fn->has_b = true;
        return true;
    case FN_MAX:
    case FN_MIN: {
        if (fn->has && v->k == fn->a.k && jq_is_integral(v)) {
            /* equal integers of one class print alike: which is kept does not matter */
            if (kind == FN_MAX ? v->i > fn->a.i : v->i < fn->a.i) {
                fn->a = *v;
                fn->ka = *k;
            }
            return true;
        }
        if (!jq_jv_comparable(v))
            return true;
        int c = fn->has ? jq_jv_compare(v, &fn->a) : 0;
        if (!fn->has || (kind == FN_MAX ? c > 0 : c < 0) || (c == 0 && key_cmp(k, &fn->ka) < 0)) {
            fn->a = *v;
            fn->ka = *k;
            fn->has = true;
        }
        return true;
    }
    default:
        return fn_add(r, f, fn, v, e);
    }
}

/* May a run with this field be order_free (fn_add_keyed, or a result that
 * does not depend on the order of its values)? 0: not: LIST and SET (their
 * order), LAST_BATCH (the batches), sums of floating-point numbers (AVG,
 * STDEV, SUM of fractions: rounding follows the order), MEDIAN and the
 * percentiles of values of different classes (equal ones stay in arrival
 * order, and print by their class). 2: AVG of integers, while their sum is
 * exact (avg_exact). 1: yes. */
static int field_order_free(const qfield *f) {
    switch (fn_kind(f)) {
    case FN_AVG:
        return f->integral ? 2 : 0;
    case FN_LIST: case FN_SET: case FN_LASTBATCH: case FN_STDEV: case FN_SUMDBL:
        return 0;
    case FN_MEDIAN: case FN_PCT:
        if (f->timespan)
            return 1; /* read as nanoseconds, one class */
        for (size_t k = 1; k < f->nsources; k++)
            if (!f->sources[k]->data_type || !f->sources[0]->data_type ||
                strcmp(f->sources[k]->data_type, f->sources[0]->data_type))
                return 0;
        return 1;
    default:
        return 1;
    }
}

/* The JDK adds an AVG's values to a double as they come: while their
 * magnitudes sum to at most 2^53, every partial sum in any order is an
 * integer a double holds, and that double is the exact integer sum. */
static bool avg_exact(const qfn *fn) { return !fn->frac && fn->mag <= (UINT64_C(1) << 53); }

bool jq_run_order_lost(const jq_run *r) {
    if (!r->resolved || r->failed || !r->order_checked || !r->any_file_order || !r->groups)
        return false;
    for (size_t k = 0; k < r->groups->nall; k++)
        for (size_t i = 0; i < r->nfields; i++)
            if (fn_kind(r->fields[i]) == FN_AVG && !avg_exact(&r->groups->all[k]->fn[i]))
                return true;
    return false;
}

static int cmp_natural(const void *a, const void *b, void *ctx) {
    (void)ctx;
    return jq_jv_compare(a, b);
}
static int cmp_double(const void *a, const void *b, void *ctx) {
    (void)ctx;
    return jq_cmp_d(jq_num_d(a), jq_num_d(b));
}

static int cmp_long(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* fn's values as jq_stable_sort orders them (by cmp_natural or cmp_double),
 * when they are integers of one class of magnitude at most 2^53 (durations
 * in nanoseconds): the order is then the integers', and equal values are
 * alike, so there is no order among them to keep. Their integers are
 * sorted instead of 32-byte values through a comparison function. false:
 * other values (or no memory), not sorted. */
static bool sort_alike_ints(jq_run *r, qfn *fn) {
    uint32_t n = fn->nv;
    jv *v = fn->vals;
    uint8_t k = v[0].k;
    if (!jq_is_integral(&v[0]))
        return false;
    for (uint32_t i = 0; i < n; i++)
        if (v[i].k != k || v[i].b || v[i].ns || v[i].d != 0 || v[i].o ||
            v[i].i > (INT64_C(1) << 53) || v[i].i < -(INT64_C(1) << 53))
            return false;
    int64_t *a = jfr__alloc(r->ar.a, (size_t)n * sizeof *a);
    if (!a)
        return false;
    for (uint32_t i = 0; i < n; i++)
        a[i] = v[i].i;
    qsort(a, n, sizeof *a, cmp_long);
    for (uint32_t i = 0; i < n; i++)
        v[i].i = a[i];
    jfr__free(r->ar.a, a, (size_t)n * sizeof *a);
    return true;
}

static double pct_of(const qfield *f) {
    return f->agg == QA_P90 ? 0.90 : f->agg == QA_P95 ? 0.95 : f->agg == QA_P99 ? 0.99 : 0.999;
}

static bool fn_result(jq_run *r, qfield *f, qfn *fn, jv *out) {
    memset(out, 0, sizeof *out);
    int kind = fn_kind(f);
    switch (kind) {
    case FN_FIRSTNN: case FN_FIRST: case FN_LAST: case FN_LASTBATCH: case FN_MAX: case FN_MIN:
        *out = fn->a;
        return true;
    case FN_LIST:
    case FN_SET: {
        qlist *l = jq_alloc(&r->ar, sizeof *l);
        jv *v = jq_alloc(&r->ar, (fn->nv ? fn->nv : 1) * sizeof *v);
        if (!l || !v)
            return false;
        if (fn->nv)
            memcpy(v, fn->vals, fn->nv * sizeof *v);
        l->n = fn->nv;
        l->v = v;
        out->k = JV_LIST;
        out->o = l;
        return true;
    }
    case FN_UNIQUE:
        out->k = JV_INT;
        out->i = fn->nv;
        return true;
    case FN_TIMEDIFF:
        if (!fn->has)
            return true;
        if (!fn->has_b) {
            out->k = JV_DURATION;
            out->i = INT64_MAX;
            out->ns = 999999999;
            return true;
        }
        out->k = JV_DURATION;
        out->i = fn->b.i - fn->a.i;
        out->ns = fn->b.ns - fn->a.ns;
        if (out->ns < 0) {
            out->ns += 1000000000;
            out->i--;
        }
        return true;
    case FN_DIFF:
        if (!fn->has)
            return true;
        if (jq_is_integral(&fn->a) && jq_is_integral(&fn->b)) {
            out->k = JV_LONG;
            out->i = (int64_t)((uint64_t)fn->b.i - (uint64_t)fn->a.i);
        } else if (fn->a.k == JV_FLOAT && fn->b.k == JV_FLOAT) {
            out->k = JV_FLOAT;
            out->d = (double)((float)fn->b.d - (float)fn->a.d);
        } else {
            out->k = JV_DOUBLE;
            out->d = jq_num_d(&fn->b) - jq_num_d(&fn->a);
        }
        return true;
    case FN_STDEV: case FN_MEDIAN: case FN_PCT: {
        if (!fn->nv)
            return true;
        jv res;
        if (kind == FN_STDEV) {
            double sum = 0;
            for (uint32_t k = 0; k < fn->nv; k++)
                sum += jq_num_d(&fn->vals[k]);
            double avg = sum / (double)fn->nv, s2 = 0;
            for (uint32_t k = 0; k < fn->nv; k++) {
                double d = jq_num_d(&fn->vals[k]) - avg;
                s2 = s2 + d * d;
            }
            res = (jv){.k = JV_DOUBLE, .d = sqrt(s2 / (double)fn->nv)};
        } else if (fn->nv == 1) {
            res = fn->vals[0];
        } else if (kind == FN_MEDIAN) {
            if (!sort_alike_ints(r, fn) &&
                !jq_stable_sort(r->ar.a, fn->vals, fn->nv, sizeof *fn->vals, cmp_natural, NULL))
                return false;
            if (fn->nv % 2 == 1)
                res = fn->vals[fn->nv / 2];
            else
                res = (jv){.k = JV_DOUBLE,
                           .d = (jq_num_d(&fn->vals[fn->nv / 2 - 1]) + jq_num_d(&fn->vals[fn->nv / 2])) / 2};
        } else {
            if (!sort_alike_ints(r, fn) &&
                !jq_stable_sort(r->ar.a, fn->vals, fn->nv, sizeof *fn->vals, cmp_double, NULL))
                return false;
            int size = (int)fn->nv;
            double di = (size + 1) * pct_of(f);
            int vi = (int)di - 1, vn = (int)di;
            double frac = di - (int)di;
            if (vi < 0)
                res = fn->vals[0];
            else if (vn >= size)
                res = fn->vals[size - 1];
            else {
                double a = jq_num_d(&fn->vals[vi]), b = jq_num_d(&fn->vals[vn]);
                res = (jv){.k = JV_DOUBLE, .d = a + frac * (b - a)};
            }
        }
        if (f->timespan)
            *out = dur_nanos(jq_num_l(&res));
        else
            *out = res;
        return true;
    }
    case FN_SUMDUR: {
        if (!fn->has)
            return true;
        int64_t s = fn->ls + fn->lns / 1000000000, ns = fn->lns % 1000000000;
        out->k = JV_DURATION;
        out->i = s;
        out->ns = (int32_t)ns;
        return true;
    }
    case FN_SUMDBL:
        if (fn->has) {
            out->k = JV_DOUBLE;
            out->d = fn->d;
        }
        return true;
    case FN_SUMLONG:
        if (fn->has) {
            out->k = JV_LONG;
            out->i = fn->ls;
        }
        return true;
    case FN_AVGDUR:
        if (fn->n) {
            double total = 1e9 * (double)fn->ls + (double)fn->lns;
            *out = dur_nanos(jfr__java_d2l(floor(total / (double)fn->n + 0.5)));
        }
        return true;
    case FN_AVG:
        if (fn->n) {
            out->k = JV_DOUBLE;
            out->d = (avg_exact(fn) ? (double)fn->ls : fn->d) / (double)fn->n;
        }
        return true;
    case FN_COUNT:
        out->k = JV_LONG;
        out->i = fn->n;
        return true;
    default:
        return true;
    }
}

static void free_fns(jq_run *r, qfn *fn, size_t n) {
    for (size_t k = 0; k < n; k++)
        jfr__free(r->ar.a, fn[k].vals, fn[k].cv * sizeof *fn[k].vals);
}

/* The group of these keys, made when new; ck: the call's key (order_free:
 * the new group's first, keyed_add keeps it; else NULL: the calls come in
 * the JDK's order, which the table follows). */
static inline __attribute__((always_inline)) qgroup *group_for(jq_run *r, const jv *keys,
                                                               uint32_t nkeys, const jq_key *ck) {
    qgroups *g = r->groups;
    if (!ck)
        g->trailing = true;
    uint64_t h = XXH3_64bits_withSeed(NULL, 0, nkeys);
    int32_t jh = 0;
    for (uint32_t k = 0; k < nkeys; k++) {
        jv kv = keys[k];
        h = h * 0x9E3779B97F4A7C15ULL + (uint64_t)(uint32_t)jq_jv_hash(&kv) + kv.k;
        bool dup = false;
        for (uint32_t j = 0; j < k; j++)
            if (jq_jv_equal(&keys[j], &keys[k]))
                dup = true;
        if (!dup)
            jh = (int32_t)((uint32_t)jh + (uint32_t)jq_jv_hash(&kv));
    }
    if (g->cap) {
        for (qgroup *q = g->slots[h & (g->cap - 1)]; q; q = q->next) {
            if (q->h != h || q->nkeys != nkeys)
                continue;
            bool eq = true;
            for (uint32_t i = 0; i < nkeys && eq; i++)
                eq = jq_jv_equal(&q->keys[i], &keys[i]);
            if (eq)
                return q;
        }
    }
    if (g->n + 1 > g->cap / 2) {
        size_t nc = g->cap ? g->cap * 2 : 256;
        qgroup **ns = jfr__calloc(r->ar.a, nc * sizeof *ns);
        if (!ns)
            return NULL;
        for (size_t k = 0; k < g->cap; k++)
            for (qgroup *q = g->slots[k], *nx; q; q = nx) {
                nx = q->next;
                q->next = ns[q->h & (nc - 1)];
                ns[q->h & (nc - 1)] = q;
            }
        jfr__free(r->ar.a, g->slots, g->cap * sizeof *g->slots);
        g->slots = ns;
        g->cap = nc;
    }
    int32_t qjh = nkeys == 1 ? jq_jv_hash(&keys[0]) : jh;
    g->trailing = false;
    qgroup *q = jq_alloc(&r->ar, sizeof *q);
    jv *kc = jq_alloc(&r->ar, (nkeys ? nkeys : 1) * sizeof *kc);
    qfn *fn = jq_alloc(&r->ar, (r->nfields ? r->nfields : 1) * sizeof *fn);
    if (!q || !kc || !fn)
        return NULL;
    if (nkeys)
        memcpy(kc, keys, nkeys * sizeof *kc);
    q->keys = kc;
    q->nkeys = nkeys;
    q->h = h;
    q->jhash = qjh;
    q->fn = fn;
    if (ck)
        q->first = *ck;
    q->next = g->slots[h & (g->cap - 1)];
    g->slots[h & (g->cap - 1)] = q;
    g->n++;
    if (!PUSHR(r, g->all, g->nall, g->capall, q))
        return NULL;
    return q;
}

/* This chunk's group of ft's events (group_const), once the first made it. */
static inline qgroup *type_group(const jq_run *r, const qftype *ft, const jfr_event *e) {
    return ft->tgroup && ft->tgroup_type == e->type && ft->tgroup_gen == r->chunk_gen ? ft->tgroup : NULL;
}

/* The call's place in the JDK's order (jq_key). */
static inline jq_key call_key(jq_run *r, const qftype *ft, const jfr_event *e) {
    if (r->keyed && r->file_order)
        return (jq_key){e->chunk_index, (int64_t)((uint64_t)e->start_ticks + (uint64_t)e->duration_ticks),
                        e->offset, ft->sub};
    /* in the JDK's order already: the order of the calls */
    return (jq_key){r->keyed ? e->chunk_index : 0, (int64_t)r->seq++, 0, ft->sub};
}

/* An order_free call's values into its group g, with the call's place:
 * the run's latest call, the group's first. groupers: feed the GROUP BY
 * fields too (not needed once the group holds their values). */
static inline void note_call(jq_run *r, qgroup *g, const jq_key *ck) {
    if (!r->any_call || key_cmp(ck, &r->last) > 0)
        r->last = *ck;
    r->any_call = true;
    if (key_cmp(ck, &g->first) < 0)
        g->first = *ck;
}

static int keyed_add(jq_run *r, qftype *ft, qgroup *g, const jv *vals, size_t nf,
                     const jfr_event *e, const jq_key *ck, bool groupers) {
    note_call(r, g, ck);
    for (size_t k = 0; k < nf; k++) {
        qfield *pf = ft->feed[k];
        if ((groupers || !pf->grouper) && !fn_add_keyed(r, pf, &g->fn[pf->index], &vals[k], e, ck))
            return jq_run_error(r, false, "out of memory");
    }
    return 0;
}

typedef struct qref {
    uint64_t key, gen;
    qgroup *g;
} qref;

enum { REF_BITS = 14, REF_CAP = 1 << REF_BITS }; /* entries of a refmap; half of them used at most */

static inline size_t ref_hash(uint64_t key) {
    return (size_t)((key * 0x9E3779B97F4A7C15ULL) >> (64 - REF_BITS));
}

/* The chunk's group of the events whose pooled field (qftype.ref_slot)
 * holds key, if one was found. */
static inline qgroup *ref_get(const jq_run *r, const qftype *ft, uint64_t key) {
    if (!ft->refmap)
        return NULL;
    for (size_t s = ref_hash(key);; s = (s + 1) & (REF_CAP - 1)) {
        const qref *q = &ft->refmap[s];
        if (q->gen != r->chunk_gen)
            return NULL;
        if (q->key == key)
            return q->g;
    }
}

/* Remember g as key's group for the rest of the chunk, unless a key of g
 * is null (a constant that a later flush segment may still define). */
static void ref_put(jq_run *r, qftype *ft, uint64_t key, qgroup *g) {
    for (uint32_t j = 0; j < g->nkeys; j++)
        if (g->keys[j].k == JV_NULL)
            return;
    if (!ft->refmap && !(ft->refmap = jfr__calloc(r->ar.a, REF_CAP * sizeof *ft->refmap)))
        return; /* each event then finds its group the long way */
    if (ft->refgen != r->chunk_gen) {
        ft->refgen = r->chunk_gen;
        ft->nref = 0;
    }
    if (ft->nref >= REF_CAP / 2)
        return;
    size_t s = ref_hash(key);
    while (ft->refmap[s].gen == r->chunk_gen)
        s = (s + 1) & (REF_CAP - 1);
    ft->refmap[s] = (qref){key, r->chunk_gen, g};
    ft->nref++;
}

/* keyed_add of the integers plan_ints read (x), kept as integers: the
 * integer cases of fn_add_keyed's SUM, AVG, MIN and MAX here, the others
 * through it. A group's key fed to its own FIRST (a type's one group, its
 * label) is the value it holds already: only the key of the call, which
 * nothing else reads, would change. */
static int fold_ints(jq_run *r, qftype *ft, qgroup *g, const int64_t *x, size_t nf,
                     const jfr_event *e) {
    jq_key ck = call_key(r, ft, e);
    note_call(r, g, &ck);
    for (size_t k = 0; k < nf; k++) {
        qfield *pf = ft->feed[k];
        qfn *fn = &g->fn[pf->index];
        uint8_t s = ft->int_slot[k], op = ft->int_op[k];
        jv v;
        switch (op) {
        case INT_COUNT:
            fn->n++;
            continue;
        case INT_KEY:
            if (fn->has)
                continue;
            v = g->keys[s];
            break;
        case INT_START:
            if (!start_jv(e, &v) && jq_field_value(r, ft->feedsrc[k], e, &v))
                return jq_run_error(r, false, "out of memory");
            break;
        case INT_SUM:
            fn->ls = (int64_t)((uint64_t)fn->ls + (uint64_t)x[s]);
            fn->has = true;
            continue;
        case INT_AVG:
            fn->d += (double)x[s];
            fn->n++;
            avg_exact_add(fn, x[s]);
            continue;
        case INT_MIN:
        case INT_MAX:
            if (fn->has && fn->a.k == ft->int_kind[s]) {
                if (op == INT_MAX ? x[s] > fn->a.i : x[s] < fn->a.i) {
                    fn->a = (jv){.k = fn->a.k, .i = x[s]};
                    fn->ka = ck;
                }
                continue;
            }
            /* fall through */
        default:
            v = ft->int_kind[s] == JV_DURATION ? span_jv(e, ft->int_units[s], x[s])
                                                : (jv){.k = ft->int_kind[s], .i = x[s]};
        }
        if (!fn_add_keyed(r, pf, fn, &v, e, &ck))
            return jq_run_error(r, false, "out of memory");
    }
    return 0;
}

int jq_run_event(jq_run *r, qftype *ft, const jfr_event *e) {
    if (!r->resolved || r->failed)
        return -1;
    if (r->since_nanos && e->end_nanos < r->since_nanos)
        return 0;
    jv vals[64], keys[64];
    /* WHERE: the formatted value must equal the text */
    for (size_t k = 0; k < ft->nfilters; k++) {
        jv v;
        if (jq_field_value(r, ft->filters[k].field, e, &v))
            return jq_run_error(r, false, "out of memory");
        size_t n;
        const char *t = jq_format(r, ft->filters[k].field, &v, false, &n);
        if (!t)
            return jq_run_error(r, false, "out of memory");
        if (strlen(ft->filters[k].value) != n || memcmp(t, ft->filters[k].value, n))
            return 0;
    }
    r->events++;
    size_t nf = ft->nfeed < 64 ? ft->nfeed : 64;
    qgroup *g = type_group(r, ft, e);
    if (g && ft->type_keyed) {
        /* its group and values: nothing to read */
        jq_key ck = call_key(r, ft, e);
        if (!ft->count_only)
            return keyed_add(r, ft, g, ft->tvals, nf, e, &ck, false);
        /* keyed_add's outcome without its switch: the counts go up; a
         * group's key read again (is_key) is the value it holds already */
        note_call(r, g, &ck);
        for (size_t k = 0; k < nf; k++) {
            qfield *pf = ft->feed[k];
            qfn *fn = &g->fn[pf->index];
            if (pf->grouper)
                continue;
            if (fn_kind(pf) == FN_COUNT)
                fn->n++;
            else if (!fn->has && !fn_add_keyed(r, pf, fn, &ft->tvals[k], e, &ck))
                return jq_run_error(r, false, "out of memory");
        }
        return 0;
    }
    bool remember = false; /* ref_put once its group is found */
    uint64_t ref = 0;
    if (ft->int_type == e->type && (g || ft->ref_slot >= 0)) {
        /* its group, and integers read at once (plan_ints): the values
         * jq_field_value would give; a record cut short goes the long way,
         * as does the chunk's first event of each group found by a key */
        int64_t x[16];
        if (jfr_event_ints(e, ft->int_idx, ft->nint, x) == JFR_OK) {
            if (!g) {
                ref = (uint64_t)x[ft->ref_slot];
                remember = !(g = ref_get(r, ft, ref));
            }
            if (g)
                return fold_ints(r, ft, g, x, nf, e);
        }
    }
    uint32_t nkeys = 0;
    for (size_t k = 0; k < nf; k++) {
        qfield *pf = ft->feed[k];
        /* COUNT counts the events, whatever the value */
        if (pf->agg == QA_COUNT && !pf->grouper && !pf->to_string) {
            vals[k] = (jv){0};
            continue;
        }
        /* the value is read by the field of this type (set up by
         * jq_resolve with the primary's conversions) */
        const qfield *src = ft->feedsrc[k];
        /* several aggregates of one field (MIN(x), AVG(x), MAX(x)): read once
         * (jq_run_metadata found the earlier reader) */
        size_t same = ft->feedsame ? ft->feedsame[k] : k;
        if (same != k) {
            vals[k] = vals[same];
            if (pf->grouper)
                keys[nkeys++] = vals[k];
            continue;
        }
        if (jq_field_value(r, src, e, &vals[k]))
            return jq_run_error(r, false, "out of memory");
        if (pf->to_string) {
            size_t n;
            const char *t = jq_format(r, pf, &vals[k], false, &n);
            const qobj *o = t ? mat_string(r, t, n) : NULL;
            if (!o)
                return jq_run_error(r, false, "out of memory");
            vals[k] = (jv){.k = JV_OBJ, .o = o};
        }
        if (pf->grouper)
            keys[nkeys++] = vals[k];
    }
    if (!r->q.ngroup) {
        qrow row;
        row.v = jq_alloc(&r->ar, (r->nfields ? r->nfields : 1) * sizeof *row.v);
        if (!row.v)
            return jq_run_error(r, false, "out of memory");
        for (size_t k = 0; k < nf; k++)
            row.v[ft->feed[k]->index] = vals[k];
        row.text = NULL;
        row.tlen = NULL;
        if (!PUSHR(r, r->rows, r->nrows, r->caprows, row))
            return jq_run_error(r, false, "out of memory");
        return 0;
    }
    jq_key ck = {0};
    if (r->order_free)
        ck = call_key(r, ft, e);
    if (!g) {
        if (!(g = group_for(r, keys, nkeys, r->order_free ? &ck : NULL)))
            return jq_run_error(r, false, "out of memory");
        if (remember)
            ref_put(r, ft, ref, g);
        if (ft->group_const) { /* the chunk's next events of the type find it here */
            ft->tgroup = g;
            ft->tgroup_type = e->type;
            ft->tgroup_gen = r->chunk_gen;
            if (ft->type_keyed)
                memcpy(ft->tvals, vals, nf * sizeof *vals);
        }
    }
    if (r->order_free)
        return keyed_add(r, ft, g, vals, nf, e, &ck, true);
    for (size_t k = 0; k < nf; k++) {
        qfield *pf = ft->feed[k];
        if (!fn_add(r, pf, &g->fn[pf->index], &vals[k], e))
            return jq_run_error(r, false, "out of memory");
    }
    return 0;
}

static int cmp_first(const void *a, const void *b) {
    const qgroup *x = *(qgroup *const *)a, *y = *(qgroup *const *)b;
    return key_cmp(&x->first, &y->first);
}

/* An order_free run's groups in the order of their first events, and
 * whether the JDK's HashMap had a call after the last one's (its table
 * grows at a call: one per group made, and one more when a call came
 * after the last group's first). */
static void replay_calls(jq_run *r) {
    qgroups *g = r->groups;
    size_t n = g->nall;
    if (n > 1)
        qsort(g->all, n, sizeof *g->all, cmp_first);
    g->trailing = n && key_cmp(&r->last, &g->all[n - 1]->first) > 0;
}

int jq_run_finish(jq_run *r) {
    if (!r->resolved || r->failed || !r->q.ngroup)
        return r->failed ? -1 : 0;
    qgroups *g = r->groups;
    if (r->order_free)
        replay_calls(r);
    /* the groups in the order the JDK's HashMap gives them (java_map.c) */
    if (g->nall > 1) {
        size_t n = g->nall;
        int32_t *hash = jfr__alloc(r->ar.a, n * sizeof *hash);
        size_t *order = jfr__alloc(r->ar.a, n * sizeof *order);
        qgroup **sorted = jfr__alloc(r->ar.a, n * sizeof *sorted);
        bool ok = hash && order && sorted;
        for (size_t k = 0; ok && k < n; k++)
            hash[k] = g->all[k]->jhash;
        if ((ok = ok && jq_java_map_order(r->ar.a, hash, n, g->trailing, order))) {
            for (size_t k = 0; k < n; k++)
                sorted[k] = g->all[order[k]];
            memcpy(g->all, sorted, n * sizeof *sorted);
        }
        jfr__free(r->ar.a, hash, n * sizeof *hash);
        jfr__free(r->ar.a, order, n * sizeof *order);
        jfr__free(r->ar.a, sorted, n * sizeof *sorted);
        if (!ok)
            return jq_run_error(r, false, "out of memory");
    }

    for (size_t k = 0; k < g->nall; k++) {
        qgroup *q = g->all[k];
        qrow row = {0};
        row.v = jq_alloc(&r->ar, (r->nfields ? r->nfields : 1) * sizeof *row.v);
        if (!row.v)
            return jq_run_error(r, false, "out of memory");
        bool valid = true;
        for (size_t i = 0; i < r->nfields; i++) {
            qfield *f = r->fields[i];
            qfn *fn = &q->fn[i];
            if (fn_kind(f) == FN_LASTBATCH && fn->ts_set &&
                (fn->ts_s != f->last_s || fn->ts_ns != f->last_ns))
                valid = false;
            if (!fn_result(r, f, fn, &row.v[i]))
                return jq_run_error(r, false, "out of memory");
        }
        free_fns(r, q->fn, r->nfields);
        memset(q->fn, 0, r->nfields * sizeof *q->fn);
        if (valid && !PUSHR(r, r->rows, r->nrows, r->caprows, row))
            return jq_run_error(r, false, "out of memory");
    }
    return 0;
}

int jq_run_init(jq_run *r, const jfr_allocator *a) {
    memset(r, 0, sizeof *r);
    r->ar.a = a;
    static char none[] = "";
    r->err = none;
    r->groups = jq_alloc(&r->ar, sizeof *r->groups);
    r->intern = jq_alloc(&r->ar, sizeof *r->intern);
    return r->groups && r->intern ? 0 : -1;
}

void jq_run_free(jq_run *r) {
    const jfr_allocator *a = r->ar.a;
    if (r->groups) {
        for (size_t k = 0; k < r->groups->nall; k++)
            free_fns(r, r->groups->all[k]->fn, r->nfields);
        jfr__free(a, r->groups->slots, r->groups->cap * sizeof *r->groups->slots);
        jfr__free(a, r->groups->all, r->groups->capall * sizeof *r->groups->all);
    }
    if (r->intern) {
        jfr__free(a, r->intern->slots, r->intern->cap * sizeof *r->intern->slots);
        jfr__free(a, r->intern->ck, r->intern->ckcap * sizeof *r->intern->ck);
    }
    for (size_t k = 0; k < r->nall; k++)
        jfr__free(a, r->all[k]->sources, r->all[k]->capsources * sizeof *r->all[k]->sources);
    for (size_t k = 0; k < r->nftall; k++) {
        qftype *t = r->ftall[k];
        jfr__free(a, t->feed, t->capfeed * sizeof *t->feed);
        jfr__free(a, t->feedsrc, t->capfeed * sizeof(qfield *));
        if (t->feedsame)
            jfr__free(a, t->feedsame, t->nfeed * sizeof *t->feedsame);
        if (t->refmap)
            jfr__free(a, t->refmap, REF_CAP * sizeof *t->refmap);
        jfr__free(a, t->filters, t->capfilters * sizeof *t->filters);
    }
    jfr__free(a, r->ftall, r->capftall * sizeof *r->ftall);
    jfr__free(a, r->types, r->captypes * sizeof *r->types);
    jfr__free(a, r->fields, r->capfields * sizeof *r->fields);
    jfr__free(a, r->all, r->capall * sizeof *r->all);
    jfr__free(a, r->rows, r->caprows * sizeof *r->rows);
    for (size_t k = 0; k < 8; k++)
        jfr__free(a, r->dec[k].p, r->dec[k].cap);
    jq_arena_free(&r->ar);
}
