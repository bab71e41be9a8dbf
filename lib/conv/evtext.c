/*
 * evtext.c — events as `jfr print` prints them (see evtext.h; JDK 25's
 * PrettyWriter is the reference for every rule below).
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#include "evtext.h"
#include "evjson.h" /* evjson_widen, evjson_span_unit */
#include "ticks.h" /* jfr__java_d2l */

#include <math.h>
#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------------ output */

static const char spaces[64] = "                                                                ";

static void put(evtext *t, const char *s, size_t n) { ob_write(t->w, s, n); }
static void puts_(evtext *t, const char *s) { ob_write(t->w, s, strlen(s)); }
static void putc_(evtext *t, char c) { ob_putc(t->w, c); }
static void nl(evtext *t) { ob_putc(t->w, '\n'); }

static void indent(evtext *t) {
    if (t->indent <= sizeof spaces)
        put(t, spaces, t->indent);
    else
        ob_fill(t->w, ' ', t->indent);
}

/* A Java String as PrintWriter(UTF_8) writes it: the recording's bytes
 * decoded as the JDK decodes them (malformed UTF-8: U+FFFD), a lone
 * surrogate as '?'. `slash`: '/' as '.' (class names). */
static void put_jstring(evtext *t, const char *s, size_t n, bool java, bool slash) {
    size_t i = 0;
    while (i < n && (unsigned char)s[i] < 0x80 && (!slash || s[i] != '/'))
        i++;
    put(t, s, i); /* the ASCII run: as it is */
    if (i == n)
        return;
    jfmt_u16_iter it;
    jfmt_u16_init(&it, s + i, n - i, java);
    int u, pend = -1;
    for (;;) {
        u = pend >= 0 ? pend : jfmt_u16_next(&it);
        pend = -1;
        if (u < 0)
            break;
        uint32_t cp = (uint32_t)u;
        if (u >= 0xd800 && u <= 0xdbff) {
            int lo = jfmt_u16_next(&it);
            if (lo >= 0xdc00 && lo <= 0xdfff) {
                cp = 0x10000 + (((uint32_t)u - 0xd800) << 10) + ((uint32_t)lo - 0xdc00);
            } else {
                putc_(t, '?');
                pend = lo;
                continue;
            }
        } else if (u >= 0xdc00 && u <= 0xdfff) {
            putc_(t, '?');
            continue;
        }
        char b[4];
        size_t k;
        if (cp < 0x80) {
            b[0] = (char)(slash && cp == '/' ? '.' : cp);
            k = 1;
        } else if (cp < 0x800) {
            b[0] = (char)(0xc0 | (cp >> 6));
            b[1] = (char)(0x80 | (cp & 0x3f));
            k = 2;
        } else if (cp < 0x10000) {
            b[0] = (char)(0xe0 | (cp >> 12));
            b[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
            b[2] = (char)(0x80 | (cp & 0x3f));
            k = 3;
        } else {
            b[0] = (char)(0xf0 | (cp >> 18));
            b[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
            b[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
            b[3] = (char)(0x80 | (cp & 0x3f));
            k = 4;
        }
        put(t, b, k);
    }
}

/* A name of the metadata (a type's, a field's): read as the JSON writer
 * reads them (not Java's decoder: encoded surrogates are themselves). */
static void put_name(evtext *t, const char *name) { put_jstring(t, name, strlen(name), false, false); }

static void put_str(evtext *t, const jfr_value *v, bool slash) {
    put_jstring(t, v->str, v->len, v->encoding == 3, slash);
}

static void note(evtext *t, jfr_status s) {
    if (t->err == JFR_OK)
        t->err = s;
}

/* ------------------------------------------------- typed objects' fields */

/* What RecordedObject.getTyped gives: the field's value when the field
 * exists (idx >= 0) and holds the asked class; `out` NULL kind else. */
static void field_of(evtext *t, const jfr_value *obj, int32_t idx, jfr_value *out) {
    memset(out, 0, sizeof *out);
    out->kind = JFR_KIND_NULL;
    if (idx < 0 || !obj || obj->kind != JFR_KIND_OBJECT)
        return;
    jfr_status s = jfr_value_field(obj, (uint32_t)idx, out);
    if (s == JFR_OK && out->kind == JFR_KIND_OBJECT && out->type && out->type->simple) {
        jfr_value w = *out; /* a simpleType (jdk.types.Symbol): its one value */
        s = jfr_value_unwrap(&w, out);
    }
    if (s) {
        note(t, s);
        out->kind = JFR_KIND_NULL;
    }
}

static const evtext_tinfo *tinfo(const evtext *t, const jfr_type *ty) {
    return ty && t->ti && ty->index < t->nti && t->md && ty->index < t->md->ntypes &&
                   t->md->types[ty->index] == ty
               ? &t->ti[ty->index]
               : NULL;
}

/* The Java class of a value: a pooled object of a typed pool, or a frame
 * in a frames array. */
static uint8_t kind_of(const evtext *t, const jfr_value *v, bool frame_elem) {
    if (v->kind != JFR_KIND_OBJECT)
        return EVT_PLAIN;
    const evtext_tinfo *ti = tinfo(t, v->type);
    if (!ti)
        return EVT_PLAIN;
    if (frame_elem && ti->kind == EVT_FRAME)
        return EVT_FRAME;
    return v->pooled && ti->kind != EVT_OLD_OBJECT ? ti->kind : EVT_PLAIN;
}

/* getTyped(name, CLASS, null) of an object field: out is the object, or
 * NULL kind. */
static void typed_field(evtext *t, const jfr_value *obj, int32_t idx, uint8_t kind, jfr_value *out) {
    field_of(t, obj, idx, out);
    if (out->kind != JFR_KIND_OBJECT || kind_of(t, out, false) != kind)
        out->kind = JFR_KIND_NULL;
}

static const evtext_tinfo *tinfo_v(const evtext *t, const jfr_value *obj) {
    static const evtext_tinfo none = {EVT_PLAIN, {-1, -1, -1, -1, -1}, NULL, -1, -1, -1};
    const evtext_tinfo *ti = tinfo(t, obj->type);
    return ti ? ti : &none;
}

static int64_t get_long(evtext *t, const jfr_value *obj, int32_t idx, int64_t dflt) {
    jfr_value v;
    field_of(t, obj, idx, &v);
    return v.kind == JFR_KIND_INT && v.type && v.type->base == JFR_BASE_LONG && !(v.field && v.field->array) ? v.i : dflt;
}

static int64_t get_int(evtext *t, const jfr_value *obj, int32_t idx, int64_t dflt) {
    jfr_value v;
    field_of(t, obj, idx, &v);
    return v.kind == JFR_KIND_INT && v.type && v.type->base == JFR_BASE_INT ? (int32_t)v.i : dflt;
}

static bool get_bool(evtext *t, const jfr_value *obj, int32_t idx, bool dflt) {
    jfr_value v;
    field_of(t, obj, idx, &v);
    return v.kind == JFR_KIND_BOOLEAN ? v.b : dflt;
}

/* A String field: true and *out, or false (null, absent, not a String). */
static bool get_string(evtext *t, const jfr_value *obj, int32_t idx, jfr_value *out) {
    field_of(t, obj, idx, out);
    return out->kind == JFR_KIND_STRING;
}

/* RecordedClass.getName(): "name" with '/' as '.' ("null" for none). */
static void class_name(evtext *t, const jfr_value *cls) {
    jfr_value n;
    if (cls && get_string(t, cls, tinfo_v(t, cls)->f[TF_A], &n))
        put_str(t, &n, true);
    else
        puts_(t, "null");
}

/* One type of a descriptor from s[*i]: "[]" per dimension (the first with
 * `size` inside), the type's name (simple: after its last '.'). */
static void descriptor_type(evtext *t, const char *s, size_t n, size_t *i, bool simple,
                            const char *size) {
    jfmt_desc_type d0;
    if (!jfmt_descriptor_type(s, n, i, simple, &d0))
        return; /* the JDK's charAt throws here; nothing more to print */
    if (d0.is_class)
        put_jstring(t, d0.name, d0.len, true, true);
    else
        puts_(t, d0.name);
    for (size_t d = 0; d < d0.dims; d++) {
        putc_(t, '[');
        if (d == 0 && size)
            puts_(t, size);
        putc_(t, ']');
    }
}

/* ValueFormatter.formatMethod(m, false): TYPE.NAME(SIMPLE, TYPES). */
static void format_method(evtext *t, const jfr_value *m) {
    const evtext_tinfo *ti = tinfo_v(t, m);
    jfr_value cls, name, desc;
    typed_field(t, m, ti->f[TF_A], EVT_CLASS, &cls);
    class_name(t, cls.kind == JFR_KIND_OBJECT ? &cls : NULL);
    putc_(t, '.');
    if (get_string(t, m, ti->f[TF_B], &name))
        put_str(t, &name, false);
    else
        puts_(t, "null");
    putc_(t, '(');
    if (get_string(t, m, ti->f[TF_C], &desc)) {
        const char *s = desc.str;
        size_t n = desc.len, close = n;
        for (size_t k = n; k-- > 0;)
            if (s[k] == ')') {
                close = k;
                break;
            }
        for (size_t i = 1, first = 1; i < close; first = 0) {
            if (!first)
                put(t, ", ", 2);
            descriptor_type(t, s, close, &i, true, NULL);
        }
    }
    putc_(t, ')');
}

static void print_thread(evtext *t, const jfr_value *th, const char *post) {
    const evtext_tinfo *ti = tinfo_v(t, th);
    int64_t id = get_long(t, th, ti->f[TF_A], -1);
    bool virt = get_bool(t, th, ti->f[TF_C], false);
    jfr_value name;
    char num[24];
    putc_(t, '"');
    if (id == 0)
        id = -1;
    if (id > 0) {
        if (get_string(t, th, ti->f[TF_B], &name))
            put_str(t, &name, false);
        else
            puts_(t, "null");
        snprintf(num, sizeof num, "%lld", (long long)id);
        puts_(t, "\" (javaThreadId = ");
        puts_(t, num);
        if (virt)
            puts_(t, ", virtual");
    } else {
        if (get_string(t, th, ti->f[TF_D], &name))
            put_str(t, &name, false);
        else
            puts_(t, "null");
        int64_t os = virt ? -1 : get_long(t, th, ti->f[TF_E], -1);
        snprintf(num, sizeof num, "%lld", (long long)os);
        puts_(t, "\" (osThreadId = ");
        puts_(t, num);
    }
    putc_(t, ')');
    puts_(t, post);
    nl(t);
}

static void print_class(evtext *t, const jfr_value *cls, const char *post) {
    const evtext_tinfo *ti = tinfo_v(t, cls);
    jfr_value name, loader;
    if (get_string(t, cls, ti->f[TF_A], &name)) {
        if (name.len && name.str[0] == '[') {
            size_t i = 0;
            descriptor_type(t, name.str, name.len, &i, false, NULL);
        } else {
            put_str(t, &name, true);
        }
    } else {
        puts_(t, "null");
    }
    puts_(t, " (classLoader = ");
    typed_field(t, cls, ti->f[TF_B], EVT_LOADER, &loader);
    if (loader.kind == JFR_KIND_OBJECT) {
        const evtext_tinfo *li = tinfo_v(t, &loader);
        jfr_value ln, lt;
        if (get_string(t, &loader, li->f[TF_B], &ln)) {
            put_str(t, &ln, false);
        } else {
            typed_field(t, &loader, li->f[TF_A], EVT_CLASS, &lt);
            class_name(t, lt.kind == JFR_KIND_OBJECT ? &lt : NULL);
        }
    } else {
        puts_(t, "null");
    }
    putc_(t, ')');
    puts_(t, post);
    nl(t);
}

static void print_loader(evtext *t, const jfr_value *ld, const char *post) {
    jfr_value ty;
    typed_field(t, ld, tinfo_v(t, ld)->f[TF_A], EVT_CLASS, &ty);
    if (ty.kind == JFR_KIND_OBJECT) {
        char num[32];
        class_name(t, &ty);
        snprintf(num, sizeof num, " (id = %lld)", (long long)ld->key);
        puts_(t, num);
    } else {
        puts_(t, "null");
    }
    puts_(t, post);
    nl(t);
}

static bool java_frame(evtext *t, const jfr_value *fr) {
    return get_bool(t, fr, tinfo_v(t, fr)->f[TF_C], true);
}

static void print_java_frame(evtext *t, const jfr_value *fr, const char *post) {
    const evtext_tinfo *ti = tinfo_v(t, fr);
    jfr_value m;
    typed_field(t, fr, ti->f[TF_A], EVT_METHOD, &m);
    if (m.kind == JFR_KIND_OBJECT)
        format_method(t, &m);
    else
        puts_(t, "null");
    int64_t line = get_int(t, fr, ti->f[TF_B], -1);
    if (line >= 0) {
        char num[24];
        snprintf(num, sizeof num, " line: %lld", (long long)line);
        puts_(t, num);
    }
    puts_(t, post);
}

/* ------------------------------------------------------------- scalars */

static void put_fixed(evtext *t, double v, int prec, const char *suffix) {
    char buf[JFMT_FIXED_MAX];
    put(t, buf, jfmt_fixed(v, prec, buf));
    puts_(t, suffix);
}

/* A Java long's decimal, or a BigInteger's (unsigned > Long.MAX_VALUE). */
static void put_long(evtext *t, int64_t v, bool big) {
    if (big)
        ob_u64(t->w, (uint64_t)v);
    else
        ob_i64(t->w, v);
}

/* A boxed Number: as long, as double, and its String.valueOf. */
typedef struct jnum {
    int64_t l;
    double d;
    bool big;      /* BigInteger (unsigned long > Long.MAX_VALUE) */
    bool fp;       /* Float or Double */
    bool is_float;
} jnum;

static void put_jnum(evtext *t, const jnum *n) {
    char buf[JFMT_NUM_MAX];
    if (n->fp)
        put(t, buf, n->is_float ? jfmt_float((float)n->d, buf) : jfmt_double(n->d, buf));
    else
        put_long(t, n->l, n->big);
}

/* printFormatted for a Number; false when no annotation applies. */
static bool print_number_formatted(evtext *t, uint32_t units, const jnum *n) {
    char buf[JFMT_TIME_MAX];
    if (units & JFR_UNIT_PERCENTAGE) {
        put_fixed(t, 100 * n->d, t->exact ? 9 : 2, "%\n");
        return true;
    }
    if (units & (JFR_UNIT_BYTES | JFR_UNIT_BITS)) {
        bool bytes = (units & JFR_UNIT_BYTES) != 0, freq = (units & JFR_UNIT_FREQUENCY) != 0;
        int64_t v = n->l;
        if (t->exact) {
            ob_i64(t->w, v);
            puts_(t, bytes ? " byte" : " bit");
            if (v > 1)
                putc_(t, 's');
            if (freq)
                puts_(t, "/s");
        } else {
            put(t, buf, jfmt_data_amount(v, !bytes, freq, buf));
        }
        nl(t);
        return true;
    }
    if (units & JFR_UNIT_MEMORY_ADDRESS) {
        put(t, buf, jfmt_hex_address(n->l, buf));
        nl(t);
        return true;
    }
    if (units & JFR_UNIT_FREQUENCY) {
        put_jnum(t, n);
        puts_(t, " Hz\n");
        return true;
    }
    return false;
}

/* ValueDescriptor.getContentType() != null: one of the field's annotations
 * is itself annotated @ContentType (in the recording's metadata). */
static bool has_ctype(const evtext *t, const jfr_field *f) {
    (void)t;
    if (!f || !f->type)
        return false;
    for (uint32_t i = 0; i < f->nannotations; i++) {
        const jfr_type *at = f->annotations[i].type;
        if (at && jfr_annotation_find(at->annotations, at->nannotations, "jdk.jfr.ContentType"))
            return true;
    }
    return false;
}

/* A scalar as printValue prints it (after getValue's conversions when the
 * value is a field's: `f` NULL for an array element). */
static void print_scalar(evtext *t, const jfr_field *f, bool ctype, const jfr_value *raw) {
    jfr_value u;
    const jfr_value *v = raw;
    char buf[JFMT_FIXED_MAX];
    if (raw->kind == JFR_KIND_OBJECT && raw->type && raw->type->simple) {
        jfr_status s = jfr_value_unwrap(raw, &u);
        if (s) {
            note(t, s);
            puts_(t, "N/A\n");
            return;
        }
        v = &u;
    }
    uint32_t units = f ? f->units : 0;
    bool is_unsigned = (units & JFR_UNIT_UNSIGNED) != 0;
    int64_t w;
    if (v->kind == JFR_KIND_NULL) {
        puts_(t, "N/A\n");
        return;
    }
    if ((units & JFR_UNIT_TIMESPAN) && evjson_widen(v, is_unsigned, &w)) {
        int64_t sec;
        int32_t ns;
        jfmt_timespan_value(w, evjson_span_unit(units), &t->tb, &sec, &ns);
        if (!ctype)
            put(t, buf, jfmt_duration(sec, ns, buf));
        else if (sec == INT64_MIN && ns == 0)
            puts_(t, "N/A");
        else if (sec == INT64_MAX && ns == 999999999)
            puts_(t, "Forever");
        else if (t->exact) /* Duration.toNanos(): overflow throws, beyond ~292 years */
            put_fixed(t, (double)(int64_t)((uint64_t)sec * 1000000000u + (uint64_t)ns) / 1000000000, 9, " s");
        else
            put(t, buf, jfmt_pretty_duration(sec, ns, buf));
        nl(t);
        return;
    }
    if ((units & JFR_UNIT_TIMESTAMP) && evjson_widen(v, is_unsigned, &w)) {
        int64_t sec;
        int32_t ns;
        bool millis = (units & JFR_UNIT_TIMESTAMP_TICKS) == 0;
        if (!ctype)
            put(t, buf, jfmt_timestamp(w, millis, &t->tb, t->zone, buf));
        else if (!jfmt_timestamp_value(w, millis, &t->tb, &sec, &ns))
            puts_(t, "N/A");
        else
            put(t, buf, jfmt_pretty_time(sec, ns, t->zone, t->exact, buf));
        nl(t);
        return;
    }
    jnum n = {0};
    switch (v->kind) {
    case JFR_KIND_INT: {
        jfr_base b = v->type ? v->type->base : JFR_BASE_LONG;
        if (is_unsigned && b >= JFR_BASE_BYTE && b <= JFR_BASE_LONG && b != JFR_BASE_CHAR) {
            evjson_widen(v, true, &n.l);
            if (b == JFR_BASE_BYTE) /* getLong: & 0xff (getValue's widening goes through short) */
                n.l = (uint8_t)v->i;
            n.big = n.l < 0;
            n.d = n.big ? (double)(uint64_t)n.l : (double)n.l;
        } else {
            switch (b) {
            case JFR_BASE_BYTE: n.l = (int64_t)(((uint64_t)v->i & 0xff) ^ 0x80) - 0x80; break;
            case JFR_BASE_SHORT: n.l = (int16_t)v->i; break;
            case JFR_BASE_INT:
                n.l = (int32_t)v->i;
                if (n.l == INT32_MIN) {
                    puts_(t, "N/A\n");
                    return;
                }
                break;
            default:
                n.l = v->i;
                if (n.l == INT64_MIN) {
                    puts_(t, "N/A\n");
                    return;
                }
                break;
            }
            n.d = (double)n.l;
        }
        break;
    }
    case JFR_KIND_FLOAT:
    case JFR_KIND_DOUBLE:
        if (isnan(v->d) || (isinf(v->d) && v->d < 0)) {
            puts_(t, "N/A\n");
            return;
        }
        n.fp = true;
        n.is_float = v->kind == JFR_KIND_FLOAT;
        n.d = n.is_float ? (double)(float)v->d : v->d;
        n.l = jfr__java_d2l(n.d);
        break;
    case JFR_KIND_BOOLEAN:
        puts_(t, v->b ? "true\n" : "false\n");
        return;
    case JFR_KIND_CHAR: {
        uint32_t c = (uint32_t)(uint16_t)v->u;
        if (c >= 0xd800 && c <= 0xdfff) {
            putc_(t, '?');
        } else {
            char s[4];
            size_t k;
            if (c < 0x80) {
                s[0] = (char)c;
                k = 1;
            } else if (c < 0x800) {
                s[0] = (char)(0xc0 | (c >> 6));
                s[1] = (char)(0x80 | (c & 0x3f));
                k = 2;
            } else {
                s[0] = (char)(0xe0 | (c >> 12));
                s[1] = (char)(0x80 | ((c >> 6) & 0x3f));
                s[2] = (char)(0x80 | (c & 0x3f));
                k = 3;
            }
            put(t, s, k);
        }
        nl(t);
        return;
    }
    case JFR_KIND_STRING:
        putc_(t, '"');
        put_str(t, v, false);
        puts_(t, "\"\n");
        return;
    default:
        puts_(t, "N/A\n");
        return;
    }
    if (ctype && print_number_formatted(t, units, &n))
        return;
    put_jnum(t, &n);
    nl(t);
}

/* ------------------------------------------------------------ objects */

static void print_value(evtext *t, const jfr_field *f, const jfr_value *v, const char *post,
                        bool frame_elem);

/* Objects open on the printed path: a pooled object met again inside
 * itself is the JDK's nulled cycle. */
static bool path_push(evtext *t, const jfr_value *v) {
    if (t->depth >= EVTEXT_MAX_NEST || t->nobjects >= EVTEXT_MAX_OBJECTS) {
        note(t, JFR_LIMIT);
        return false;
    }
    if (v->pooled)
        for (uint32_t i = 0; i < t->npath; i++)
            if (t->path[i].t == v->type && t->path[i].key == v->key)
                return false;
    t->depth++;
    t->nobjects++;
    if (v->pooled) {
        t->path[t->npath].t = v->type;
        t->path[t->npath].key = v->key;
        t->npath++;
    }
    return true;
}

static void path_pop(evtext *t, const jfr_value *v) {
    t->depth--;
    if (v->pooled)
        t->npath--;
}

static void print_array(evtext *t, const jfr_field *f, const jfr_value *arr) {
    if (!path_push(t, arr)) {
        puts_(t, "N/A\n");
        return;
    }
    const evtext_tinfo *et = f ? tinfo(t, f->type) : NULL;
    bool frames = et && et->kind == EVT_FRAME;
    puts_(t, "[\n");
    t->indent += 2;
    jfr_iter it;
    jfr_iter_init(&it, arr);
    jfr_value e;
    jfr_status s;
    for (uint32_t i = 0; (s = jfr_iter_next(&it, &e)) == JFR_OK; i++) {
        indent(t);
        print_value(t, NULL, &e, i + 1 < arr->count ? ", " : "", frames);
    }
    if (s != JFR_END)
        note(t, s);
    t->indent -= 2;
    indent(t);
    puts_(t, "]\n");
    path_pop(t, arr);
}

static void print_struct(evtext *t, const jfr_value *obj, const char *post) {
    if (!obj->type || !path_push(t, obj)) {
        puts_(t, "N/A");
        puts_(t, post);
        nl(t);
        return;
    }
    puts_(t, "{\n");
    t->indent += 2;
    jfr_iter it;
    jfr_iter_init(&it, obj);
    jfr_value v;
    jfr_status s = JFR_OK;
    for (uint32_t i = 0; i < obj->type->nfields; i++) {
        const jfr_field *f = &obj->type->fields[i];
        indent(t);
        put_name(t, f->name);
        put(t, " = ", 3);
        if (s == JFR_OK && (s = jfr_iter_next(&it, &v)) == JFR_OK) {
            if (f->array)
                v.kind == JFR_KIND_ARRAY ? print_array(t, f, &v) : puts_(t, "N/A\n");
            else
                print_value(t, f, &v, "", false);
        } else {
            note(t, s == JFR_END ? JFR_BAD_EVENT : s);
            puts_(t, "N/A\n");
        }
    }
    t->indent -= 2;
    indent(t);
    putc_(t, '}');
    puts_(t, post);
    nl(t);
    path_pop(t, obj);
}

/* printObject of an old object: its class (arrays with their size), its
 * description. False: a field PrettyWriter asks for is missing (it stops
 * there). */
static bool print_object(evtext *t, const jfr_value *obj, int64_t array_size, bool have_size) {
    const evtext_tinfo *ti = tinfo_v(t, obj);
    if (ti->f[TF_A] < 0 || ti->f[TF_B] < 0)
        return false;
    jfr_value cls, desc, name;
    field_of(t, obj, ti->f[TF_A], &cls);
    if (cls.kind == JFR_KIND_OBJECT) {
        if (get_string(t, &cls, tinfo_v(t, &cls)->f[TF_A], &name) && name.len && name.str[0] == '[') {
            char size[24] = "";
            if (have_size && array_size > 0)
                snprintf(size, sizeof size, "%lld", (long long)array_size);
            size_t i = 0;
            descriptor_type(t, name.str, name.len, &i, false, size);
        } else {
            class_name(t, &cls);
        }
        if (get_string(t, obj, ti->f[TF_B], &desc)) {
            putc_(t, ' ');
            put_str(t, &desc, false);
        }
    }
    nl(t);
    return true;
}

static int32_t named(const jfr_value *obj, const char *name) {
    return obj->kind == JFR_KIND_OBJECT ? jfr_type_field_index(obj->type, name) : -1;
}

/* printOldObject: the object and the chain of its referrers. */
static void print_old_object(evtext *t, const jfr_value *obj) {
    puts_(t, " [\n");
    t->indent += 2;
    indent(t);
    jfr_value cur = *obj, ref, x;
    int32_t ae = t->ev ? jfr_type_field_index(t->ev->type, "arrayElements") : -1;
    int64_t elems = 0;
    if (ae >= 0) {
        jfr_status s = jfr_event_field(t->ev, (uint32_t)ae, &x);
        if (s == JFR_OK && x.kind == JFR_KIND_INT)
            evjson_widen(&x, false, &elems);
    }
    uint32_t steps = 0;
    if (ae >= 0 && print_object(t, &cur, elems, true)) {
        for (;;) {
            int32_t ri = named(&cur, "referrer");
            if (ri < 0 || ++steps > EVTEXT_MAX_OBJECTS)
                break;
            field_of(t, &cur, ri, &ref);
            if (ref.kind != JFR_KIND_OBJECT)
                break;
            int32_t si = named(&ref, "skip"), ai = named(&ref, "array"), fi = named(&ref, "field"),
                    oi = named(&ref, "object");
            if (si < 0)
                break;
            field_of(t, &ref, si, &x);
            int64_t skip = 0;
            if (x.kind == JFR_KIND_INT)
                evjson_widen(&x, false, &skip);
            if (skip > 0) {
                indent(t);
                puts_(t, "...\n");
            }
            if (ai < 0)
                break;
            int64_t size = INT64_MIN;
            char holder[48] = "";
            jfr_value arr, fld, fname;
            field_of(t, &ref, ai, &arr);
            if (arr.kind == JFR_KIND_OBJECT) {
                int32_t ii = named(&arr, "index"), zi = named(&arr, "size");
                if (ii < 0 || zi < 0)
                    break;
                int64_t index = 0;
                field_of(t, &arr, ii, &x);
                if (x.kind == JFR_KIND_INT)
                    evjson_widen(&x, false, &index);
                field_of(t, &arr, zi, &x);
                if (x.kind == JFR_KIND_INT)
                    evjson_widen(&x, false, &size);
                snprintf(holder, sizeof holder, "[%lld]", (long long)index);
            }
            if (fi < 0)
                break;
            field_of(t, &ref, fi, &fld);
            bool fname_ok = false;
            if (fld.kind == JFR_KIND_OBJECT) {
                int32_t ni = named(&fld, "name");
                if (ni < 0)
                    break;
                fname_ok = true;
                holder[0] = '\0';
                if (!get_string(t, &fld, ni, &fname))
                    fname.kind = JFR_KIND_NULL;
            }
            indent(t);
            if (fname_ok)
                fname.kind == JFR_KIND_STRING ? put_str(t, &fname, false) : puts_(t, "null");
            else
                puts_(t, holder);
            put(t, " : ", 3);
            if (oi < 0)
                break;
            field_of(t, &ref, oi, &x);
            if (x.kind != JFR_KIND_OBJECT)
                break; /* the JDK's next step would throw */
            cur = x;
            if (!print_object(t, &cur, size, size != INT64_MIN))
                break;
        }
    }
    t->indent -= 2;
    indent(t);
    puts_(t, "]\n");
}

static void print_value(evtext *t, const jfr_field *f, const jfr_value *v, const char *post,
                        bool frame_elem) {
    if (v->kind == JFR_KIND_NULL) {
        puts_(t, "N/A");
        puts_(t, post);
        nl(t);
        return;
    }
    if (v->kind == JFR_KIND_OBJECT && !(v->type && v->type->simple)) {
        switch (kind_of(t, v, frame_elem)) {
        case EVT_THREAD:
            print_thread(t, v, post);
            return;
        case EVT_CLASS:
            print_class(t, v, post);
            return;
        case EVT_LOADER:
            print_loader(t, v, post);
            return;
        case EVT_FRAME:
            if (java_frame(t, v)) {
                print_java_frame(t, v, post);
                return;
            }
            break;
        case EVT_METHOD:
            format_method(t, v);
            nl(t);
            return;
        default:
            break;
        }
        const evtext_tinfo *ft = f ? tinfo(t, f->type) : NULL;
        if (ft && ft->kind == EVT_OLD_OBJECT) {
            print_old_object(t, v);
            return;
        }
        print_struct(t, v, post);
        return;
    }
    if (v->kind == JFR_KIND_ARRAY) {
        print_array(t, NULL, v);
        return;
    }
    print_scalar(t, f, f && has_ctype(t, f), v);
}

static void print_stack(evtext *t, const jfr_value *st) {
    const evtext_tinfo *ti = tinfo_v(t, st);
    puts_(t, "[\n");
    t->indent += 2;
    jfr_value frames;
    field_of(t, st, ti->f[TF_A], &frames);
    uint32_t i = 0, depth = 0;
    if (frames.kind == JFR_KIND_ARRAY) {
        jfr_iter it;
        jfr_iter_init(&it, &frames);
        jfr_value fr;
        jfr_status s = JFR_OK;
        while (i < frames.count && depth < t->stack_depth) {
            if ((s = jfr_iter_next(&it, &fr)) != JFR_OK)
                break;
            if (fr.kind == JFR_KIND_OBJECT && java_frame(t, &fr)) {
                jfr_value m;
                typed_field(t, &fr, tinfo_v(t, &fr)->f[TF_A], EVT_METHOD, &m);
                if (!(m.kind == JFR_KIND_OBJECT && get_bool(t, &m, tinfo_v(t, &m)->f[TF_D], false))) {
                    indent(t);
                    print_java_frame(t, &fr, "");
                    nl(t);
                    depth++;
                }
            }
            i++;
        }
        if (s != JFR_OK && s != JFR_END)
            note(t, s);
    }
    if (get_bool(t, st, ti->f[TF_B], true) || i == t->stack_depth) {
        indent(t);
        puts_(t, "...\n");
    }
    t->indent -= 2;
    indent(t);
    puts_(t, "]\n");
}

/* PrettyWriter.print(RecordedEvent). */
static void render(evtext *t, const jfr_event *e, const jfr_value *ev) {
    const evtext_tinfo *ti = tinfo(t, e->type);
    const jfr_type *ty = e->type;
    put_name(t, ty->name);
    puts_(t, " {\n");
    t->indent = 2;
    jfr_iter it;
    jfr_iter_init(&it, ev);
    jfr_value v;
    jfr_status s = JFR_OK;
    for (uint32_t i = 0; i < ty->nfields; i++) {
        const jfr_field *f = &ty->fields[i];
        if (s == JFR_OK && (s = jfr_iter_next(&it, &v)) != JFR_OK)
            note(t, s == JFR_END ? JFR_BAD_EVENT : s);
        if (ti && ((int32_t)i == ti->thread || (int32_t)i == ti->stack))
            continue;
        if (ti && (int32_t)i == ti->duration && s == JFR_OK && v.kind == JFR_KIND_INT && v.type &&
            v.type->base == JFR_BASE_LONG && v.i == 0)
            continue;
        indent(t);
        put_name(t, f->name);
        put(t, " = ", 3);
        if (s != JFR_OK)
            puts_(t, "N/A\n");
        else if (f->array)
            v.kind == JFR_KIND_ARRAY ? print_array(t, f, &v) : puts_(t, "N/A\n");
        else
            print_value(t, f, &v, "", false);
    }
    if (ti && ti->thread >= 0) {
        typed_field(t, ev, ti->thread, EVT_THREAD, &v);
        if (v.kind == JFR_KIND_OBJECT) {
            indent(t);
            puts_(t, "eventThread = ");
            print_thread(t, &v, "");
        }
    }
    if (ti && ti->stack >= 0) {
        typed_field(t, ev, ti->stack, EVT_STACK, &v);
        if (v.kind == JFR_KIND_OBJECT) {
            indent(t);
            puts_(t, "stackTrace = ");
            print_stack(t, &v);
        }
    }
    t->indent = 0;
    puts_(t, "}\n\n");
}

/* ------------------------------------------------------------ metadata */

static uint8_t kind_named(const char *n) {
    static const struct { const char *name; uint8_t kind; } k[] = {
        {"java.lang.Thread", EVT_THREAD},
        {"java.lang.Class", EVT_CLASS},
        {"jdk.types.ClassLoader", EVT_LOADER},
        {"com.oracle.jfr.types.ClassLoader", EVT_LOADER},
        {"jdk.types.StackFrame", EVT_FRAME},
        {"com.oracle.jfr.types.StackFrame", EVT_FRAME},
        {"jdk.types.Method", EVT_METHOD},
        {"com.oracle.jfr.types.Method", EVT_METHOD},
        {"jdk.types.StackTrace", EVT_STACK},
        {"com.oracle.jfr.types.StackTrace", EVT_STACK},
        {"jdk.types.OldObject", EVT_OLD_OBJECT},
    };
    for (size_t i = 0; i < sizeof k / sizeof k[0]; i++)
        if (strcmp(n, k[i].name) == 0)
            return k[i].kind;
    return EVT_PLAIN;
}

/* The fields each kind reads, in TF_ order. */
static const char *const kind_fields[][TF_N] = {
    [EVT_PLAIN] = {NULL},
    [EVT_THREAD] = {"javaThreadId", "javaName", "virtual", "osName", "osThreadId"},
    [EVT_CLASS] = {"name", "classLoader"},
    [EVT_LOADER] = {"type", "name"},
    [EVT_FRAME] = {"method", "lineNumber", "javaFrame"},
    [EVT_METHOD] = {"type", "name", "descriptor", "hidden"},
    [EVT_STACK] = {"frames", "truncated"},
    [EVT_OLD_OBJECT] = {"type", "description"},
};

bool evtext_metadata(evtext *t, const jfr_metadata *m) {
    if (!t->have_zone) { /* the first chunk's, like the time base */
        t->have_zone = true;
        t->zone = jfmt_zone_offset_seconds(m->gmt_offset_ms, m->dst_ms);
    }
    jfr__free(&t->alloc, t->ti, t->nti * sizeof *t->ti);
    t->ti = NULL;
    t->nti = 0;
    t->md = NULL;
    evtext_tinfo *ti = jfr__calloc(&t->alloc, (m->ntypes ? m->ntypes : 1) * sizeof *ti);
    if (!ti)
        return false;
    for (uint32_t i = 0; i < m->ntypes; i++) {
        const jfr_type *ty = m->types[i];
        evtext_tinfo *x = &ti[i];
        x->kind = kind_named(ty->name);
        for (int k = 0; k < TF_N; k++)
            x->f[k] = kind_fields[x->kind][k] ? jfr_type_field_index(ty, kind_fields[x->kind][k]) : -1;
        x->duration = jfr_type_field_index(ty, "duration");
        x->thread = jfr_type_field_index(ty, "eventThread");
        x->stack = jfr_type_field_index(ty, "stackTrace");
    }
    t->ti = ti;
    t->nti = m->ntypes;
    t->md = m;
    return true;
}

/* --------------------------------------------------------------- queue */

static bool before(const evtext_entry *a, const evtext_entry *b) {
    return a->sec != b->sec ? a->sec < b->sec : a->ncmp < b->ncmp;
}

/* java.util.PriorityQueue's siftUp and siftDown, to the letter: ties come
 * out in its order. */
static void heap_push(evtext *t, const evtext_entry *x) {
    size_t k = t->nheap++;
    while (k > 0) {
        size_t parent = (k - 1) >> 1;
        if (!before(x, &t->heap[parent]))
            break;
        t->heap[k] = t->heap[parent];
        k = parent;
    }
    t->heap[k] = *x;
}

static evtext_entry heap_pop(evtext *t) {
    evtext_entry top = t->heap[0];
    size_t n = --t->nheap;
    if (n > 0) {
        evtext_entry x = t->heap[n];
        size_t k = 0, half = n >> 1;
        while (k < half) {
            size_t child = (k << 1) + 1, right = child + 1;
            if (right < n && before(&t->heap[right], &t->heap[child]))
                child = right;
            if (!before(&t->heap[child], &x))
                break;
            t->heap[k] = t->heap[child];
            k = child;
        }
        t->heap[k] = x;
    }
    return top;
}

static void block_release(evtext *t, uint32_t b) {
    evtext_block *bl = &t->blocks[b];
    if (--bl->live > 0 || b == t->cur)
        return;
    jfr__free(&t->alloc, bl->data, bl->cap);
    t->held -= bl->cap;
    bl->data = NULL;
    bl->cap = bl->used = 0;
}

static void print_head(evtext *t) {
    evtext_entry e = heap_pop(t);
    ob_write(t->o, e.text, e.len);
    block_release(t, e.block);
}

/* Room for n bytes of text: *b the block. */
static char *store(evtext *t, size_t n, uint32_t *b) {
    evtext_block *bl = t->nblocks ? &t->blocks[t->cur] : NULL;
    if (!bl || !bl->data || bl->cap - bl->used < n) {
        if (bl && bl->data && bl->live == 0) { /* the current one, emptied */
            jfr__free(&t->alloc, bl->data, bl->cap);
            t->held -= bl->cap;
            bl->data = NULL;
        }
        size_t slot = t->nblocks;
        for (size_t i = 0; t->blocks && i < t->nblocks; i++)
            if (!t->blocks[i].data) {
                slot = i;
                break;
            }
        if (slot == t->nblocks) {
            void *v = t->blocks;
            if (!jfr__array_reserve(&t->alloc, &v, t->nblocks, &t->capblocks, sizeof *t->blocks, 16))
                return NULL;
            t->blocks = v;
            t->nblocks++;
        }
        size_t cap = n > EVTEXT_BLOCK ? n : EVTEXT_BLOCK;
        bl = &t->blocks[slot];
        if (!(bl->data = jfr__alloc(&t->alloc, cap)))
            return NULL;
        bl->cap = cap;
        bl->used = bl->live = 0;
        t->held += cap;
        t->cur = slot;
    }
    char *p = bl->data + bl->used;
    bl->used += n;
    bl->live++;
    *b = (uint32_t)t->cur;
    return p;
}

/* ----------------------------------------------------------------- API */

void evtext_init(evtext *t, outbuf *o, uint32_t stack_depth, bool exact, const jfr_allocator *a) {
    memset(t, 0, sizeof *t);
    if (a)
        t->alloc = *a;
    t->o = o;
    t->stack_depth = stack_depth;
    t->exact = exact;
    ob_init(&t->scratch, -1, 4096, &t->alloc);
    t->scratch.grow = true;
    t->w = &t->scratch;
}

void evtext_free(evtext *t) {
    for (size_t i = 0; i < t->nblocks; i++)
        jfr__free(&t->alloc, t->blocks[i].data, t->blocks[i].cap);
    jfr__free(&t->alloc, t->blocks, t->capblocks * sizeof *t->blocks);
    jfr__free(&t->alloc, t->heap, t->capheap * sizeof *t->heap);
    jfr__free(&t->alloc, t->ti, t->nti * sizeof *t->ti);
    ob_free(&t->scratch);
    t->blocks = NULL;
    t->heap = NULL;
    t->ti = NULL;
    t->nblocks = t->capblocks = t->nheap = t->capheap = t->nti = 0;
}

size_t evtext_memory(const evtext *t) {
    return t->held + t->capheap * sizeof *t->heap + t->capblocks * sizeof *t->blocks +
           t->scratch.cap + t->nti * sizeof *t->ti;
}

void evtext_chunk_begin(evtext *t, const jfr_chunk_info *c) {
    if (!t->have_tb) { /* the JDK converts every chunk with the first one's base */
        t->have_tb = true;
        t->tb = (jfmt_timebase){c->start_nanos, c->start_ticks, c->ticks_per_second};
    }
}

jfr_status evtext_event(evtext *t, const jfr_event *e, const jfr_value *ev) {
    t->err = JFR_OK;
    t->depth = t->nobjects = t->npath = 0;
    t->ev = e;
    t->scratch.len = 0;
    t->scratch.failed = false;
    render(t, e, ev);
    t->ev = NULL;
    if (t->scratch.failed)
        return JFR_NOMEM;
    /* RecordedEvent.getEndTime(): the end's ticks converted */
    int64_t end = jfmt_ticks_to_epoch_nanos(
        &t->tb, (int64_t)((uint64_t)e->start_ticks + (uint64_t)e->duration_ticks));
    int64_t sec = end / 1000000000, ns = end % 1000000000;
    if (ns < 0) {
        sec--;
        ns += 1000000000;
    }
    evtext_entry x = {sec, (int32_t)(2 * ns + 1), 0, t->scratch.len, NULL};
    if (t->nheap == t->capheap) {
        void *v = t->heap;
        if (!jfr__array_reserve(&t->alloc, &v, t->nheap, &t->capheap, sizeof *t->heap, 1024))
            return JFR_NOMEM;
        t->heap = v;
    }
    char *p = store(t, x.len, &x.block);
    if (!p)
        return JFR_NOMEM;
    memcpy(p, t->scratch.buf, x.len);
    x.text = p;
    heap_push(t, &x);
    while (t->nheap > EVTEXT_WINDOW)
        print_head(t);
    return t->err;
}

void evtext_finish(evtext *t) {
    while (t->nheap)
        print_head(t);
}

const char *evtext_error_str(const evtext *t) {
    if (t->err == JFR_LIMIT)
        return "objects nested deeper than " JFR_STRINGIFY(EVTEXT_MAX_NEST)
               " levels or more than " JFR_STRINGIFY(EVTEXT_MAX_OBJECTS) " in one event";
    return jfr_status_str(t->err);
}
