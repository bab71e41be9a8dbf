/*
 * cmd_metadata.c — `jfrstream metadata`: the type system of a recording in
 * the Java-like layout of `jfr metadata` (JDK 25): every type once (first
 * chunk that declares its id wins), sorted like the JDK tool (group by
 * super type, then package, then name), with annotations and fields.
 *
 *   --ids        type ids as the JDK tool's hidden --ids option shows them
 *   --per-chunk  every chunk's metadata separately, with ids, field flags
 *                and the region (time zone) of the chunk
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#include "args.h"
#include "commands.h"
#include "filter.h"
#include "frontend.h"
#include "report.h"
#include "usage.h"
/* Java's Double/Float.toString and String.length/compareTo: lib/conv's
 * private jformat_decimal.c and jformat_utf16.c, compiled into the CLI */
#include "jformat.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ------------------------------------------------------ string builder */

typedef struct sbuf {
    char *s;
    size_t len, cap;
    size_t line; /* offset where the current line starts */
    bool nomem;
} sbuf;

static void sb_add(sbuf *b, const char *s, size_t n) {
    if (b->nomem)
        return;
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n + 1)
            cap *= 2;
        char *p = realloc(b->s, cap);
        if (!p) {
            b->nomem = true;
            return;
        }
        b->s = p;
        b->cap = cap;
    }
    memcpy(b->s + b->len, s, n);
    b->len += n;
    b->s[b->len] = '\0';
}

static void sb_puts(sbuf *b, const char *s) { sb_add(b, s, strlen(s)); }

static void sb_nl(sbuf *b) {
    sb_add(b, "\n", 1);
    b->line = b->len;
}

static void sb_spaces(sbuf *b, size_t n) {
    while (n--)
        sb_add(b, " ", 1);
}

static void sb_u64(sbuf *b, uint64_t v) {
    char tmp[24];
    snprintf(tmp, sizeof tmp, "%llu", (unsigned long long)v);
    sb_puts(b, tmp);
}

static size_t sb_column(const sbuf *b) {
    return jfmt_utf16_length(b->s + b->line, b->len - b->line);
}

/* ----------------------------------------------------------- rendering */

typedef struct render {
    sbuf *b;
    bool ids;   /* "// id" comments */
    bool flags; /* field flags in the comments (per-chunk mode) */
    size_t comment_col;
    size_t indent;
} render;

static const char *simple_name(const char *name) {
    const char *dot = strrchr(name, '.');
    return dot ? dot + 1 : name;
}

/* End of a line that may carry an id comment (MetadataWriter's
 * printCommentRef). */
static void comment_ref(render *r, uint64_t id, const char *extra) {
    if (r->ids) {
        size_t col = sb_column(r->b);
        if (col > r->comment_col)
            sb_puts(r->b, "  ");
        else
            sb_spaces(r->b, r->comment_col - col);
        sb_puts(r->b, " // id=");
        sb_u64(r->b, id);
        if (extra && *extra) {
            sb_puts(r->b, " ");
            sb_puts(r->b, extra);
        }
    }
    sb_nl(r->b);
}

/* Collect the attribute values of annotation element `name`: the scalar
 * "name" or the array "name-0", "name-1", ... (in index order). */
static size_t element_values(const jfr_annotation *a, const char *name, bool array,
                             const char **out, size_t cap) {
    size_t n = 0, nl = strlen(name);
    if (!array) {
        for (uint32_t i = 0; i < a->nattrs; i++)
            if (a->attrs[i].key && strcmp(a->attrs[i].key, name) == 0 && n < cap)
                out[n++] = a->attrs[i].value ? a->attrs[i].value : "";
        return n > 1 ? 1 : n;
    }
    for (size_t want = 0; want < cap; want++) {
        bool found = false;
        for (uint32_t i = 0; i < a->nattrs; i++) {
            const char *k = a->attrs[i].key;
            if (!k || strncmp(k, name, nl) != 0 || k[nl] != '-')
                continue;
            char *end;
            unsigned long idx = strtoul(k + nl + 1, &end, 10);
            if (*end == '\0' && idx == want) {
                out[n++] = a->attrs[i].value ? a->attrs[i].value : "";
                found = true;
                break;
            }
        }
        if (!found)
            break;
    }
    return n;
}

/* One annotation element value as the JDK tool shows it (quoteIfNeeded of
 * the value parsed into the element's Java type). */
static void put_scalar(render *r, const jfr_type *t, const char *text) {
    char buf[JFMT_NUM_MAX];
    switch (t ? t->base : JFR_BASE_STRING) {
    case JFR_BASE_STRING:
        sb_puts(r->b, "\"");
        sb_puts(r->b, text);
        sb_puts(r->b, "\"");
        return;
    case JFR_BASE_BOOLEAN:
        sb_puts(r->b, strcasecmp(text, "true") == 0 ? "true" : "false");
        return;
    case JFR_BASE_BYTE:
    case JFR_BASE_SHORT:
    case JFR_BASE_INT:
    case JFR_BASE_LONG: {
        char *end;
        long long v = strtoll(text, &end, 10);
        if (*end || end == text) {
            sb_puts(r->b, text);
            return;
        }
        snprintf(buf, sizeof buf, "%lld", v);
        sb_puts(r->b, buf);
        return;
    }
    case JFR_BASE_FLOAT:
        jfmt_float(strtof(text, NULL), buf);
        sb_puts(r->b, buf);
        return;
    case JFR_BASE_DOUBLE:
        jfmt_double(strtod(text, NULL), buf);
        sb_puts(r->b, buf);
        return;
    default:
        sb_puts(r->b, text);
        return;
    }
}

#define MAX_ELEMS 256

static void put_annotations(render *r, const jfr_annotation *as, uint32_t n) {
    for (uint32_t i = 0; i < n; i++) {
        const jfr_annotation *a = &as[i];
        const char *tn = a->type ? a->type->name : "";
        if (strcmp(tn, "jdk.jfr.Name") == 0)
            continue;
        sb_spaces(r->b, r->indent);
        sb_puts(r->b, "@");
        sb_puts(r->b, simple_name(tn));
        const jfr_type *at = a->type;
        if (!at || at->nfields == 0) {
            sb_nl(r->b);
            continue;
        }
        sb_puts(r->b, "(");
        for (uint32_t k = 0; k < at->nfields; k++) {
            const jfr_field *f = &at->fields[k];
            if (k)
                sb_puts(r->b, ", ");
            if (!(at->nfields == 1 && strcmp(f->name, "value") == 0)) {
                sb_puts(r->b, f->name);
                sb_puts(r->b, "=");
            }
            const char *vals[MAX_ELEMS];
            size_t nv = element_values(a, f->name, f->array, vals, MAX_ELEMS);
            if (!f->array) {
                if (nv)
                    put_scalar(r, f->type, vals[0]);
                else
                    sb_puts(r->b, "null");
            } else if (nv == 1) {
                put_scalar(r, f->type, vals[0]);
            } else {
                sb_puts(r->b, "{");
                for (size_t j = 0; j < nv; j++) {
                    if (j)
                        sb_puts(r->b, ", ");
                    put_scalar(r, f->type, vals[j]);
                }
                sb_puts(r->b, "}");
            }
        }
        sb_puts(r->b, ")");
        comment_ref(r, at->id, NULL);
    }
}

static void render_type(render *r, const jfr_type *t) {
    sbuf *b = r->b;
    if (r->ids) {
        sb_puts(b, "// id: ");
        sb_u64(b, t->id);
        sb_nl(b);
    }
    r->comment_col = jfmt_utf16_length(t->name, strlen(t->name)) + 10;
    r->indent = 0;
    if (strchr(t->name, '.')) {
        sb_puts(b, "@Name(\"");
        sb_puts(b, t->name);
        sb_puts(b, "\")");
        sb_nl(b);
    }
    put_annotations(r, t->annotations, t->nannotations);
    sb_puts(b, "class ");
    sb_puts(b, simple_name(t->name));
    if (t->super_type) {
        sb_puts(b, " extends ");
        sb_puts(b, t->super_type);
    }
    sb_puts(b, " {");
    sb_nl(b);
    r->indent = 2;
    for (uint32_t i = 0; i < t->nfields; i++) {
        const jfr_field *f = &t->fields[i];
        if (i)
            sb_nl(b);
        put_annotations(r, f->annotations, f->nannotations);
        sb_spaces(b, r->indent);
        const jfr_type *ft = f->type;
        if (ft && ft->super_type && strcmp(ft->super_type, "jdk.jfr.SettingControl") == 0)
            sb_puts(b, "static ");
        /* ValueDescriptor.getTypeName(): a simpleType shows as its field's type */
        const jfr_type *shown = ft;
        for (int k = 0; shown && shown->simple && shown->nfields == 1 && k < 8; k++)
            shown = shown->fields[0].type;
        sb_puts(b, shown ? simple_name(shown->name) : "?");
        if (f->array)
            sb_puts(b, "[]");
        sb_puts(b, " ");
        sb_puts(b, f->name);
        sb_puts(b, ";");
        const char *extra = NULL;
        if (r->flags)
            extra = f->pooled ? "constantPool" : NULL;
        comment_ref(r, ft ? ft->id : 0, extra);
    }
    r->indent = 0;
    sb_puts(b, "}");
    sb_nl(b);
    sb_nl(b);
}

/* -------------------------------------------------------------- sorting */

typedef struct entry {
    uint64_t id;
    char *name;
    char *super_type; /* NULL for none */
    char *text;       /* rendered */
    size_t order;
} entry;

static int group_of(const char *super) {
    if (!super)
        return 1;
    if (strcmp(super, "java.lang.annotation.Annotation") == 0)
        return 3;
    if (strcmp(super, "jdk.jfr.SettingControl") == 0)
        return 4;
    if (strcmp(super, "jdk.jfr.Event") == 0)
        return 5;
    return 2;
}

/* Length of the package prefix, trailing '.' included. */
static size_t package_len(const char *name) {
    const char *dot = strrchr(name, '.');
    return dot ? (size_t)(dot - name) + 1 : 0;
}

static int cmp_prefix(const char *a, size_t na, const char *b, size_t nb) {
    char *x = strndup(a, na), *y = strndup(b, nb);
    int c = (x && y) ? jfmt_utf16_compare(x, y) : 0;
    free(x);
    free(y);
    return c;
}

static int cmp_entries(const void *pa, const void *pb) {
    const entry *a = pa, *b = pb;
    int ga = group_of(a->super_type), gb = group_of(b->super_type);
    int c;
    if (ga != gb) {
        c = ga < gb ? -1 : 1;
    } else {
        size_t la = package_len(a->name), lb = package_len(b->name);
        if (la == lb && strncmp(a->name, b->name, la) == 0)
            c = jfmt_utf16_compare(a->name, b->name);
        else
            c = cmp_prefix(a->name, la, b->name, lb);
    }
    if (c)
        return c;
    return a->order < b->order ? -1 : a->order > b->order; /* stable */
}

/* ------------------------------------------------------------- command */

typedef struct metacmd {
    cli_filter filter;
    bool ids, per_chunk;
    entry *entries;
    size_t nentries, capentries;
    bool nomem;
    const char *path; /* FILE */
} metacmd;

static bool seen_id(const metacmd *mc, uint64_t id) {
    for (size_t i = 0; i < mc->nentries; i++)
        if (mc->entries[i].id == id)
            return true;
    return false;
}

static bool wanted(const metacmd *mc, const jfr_type *t) {
    if (!cli_filter_active(&mc->filter))
        return true;
    return t->is_event && cli_filter_match(&mc->filter, t);
}

static char *dup_or_null(const char *s) { return s ? strdup(s) : NULL; }

static void print_chunk(metacmd *mc, const jfr_metadata *m) {
    entry *list = calloc(m->ntypes ? m->ntypes : 1, sizeof *list);
    if (!list) {
        mc->nomem = true;
        return;
    }
    size_t n = 0;
    for (uint32_t i = 0; i < m->ntypes; i++) {
        const jfr_type *t = m->types[i];
        if (!wanted(mc, t))
            continue;
        /* order = declaration index: stable ties, and finds the type back */
        list[n++] = (entry){t->id, (char *)t->name, (char *)t->super_type, NULL, i};
    }
    qsort(list, n, sizeof *list, cmp_entries);
    jfrc_out *o = cli_out;
    jfrc_out_printf(o, "// metadata id %llu, %u types, gmtOffset %lld ms, dst %lld ms, locale %s%s\n\n",
              (unsigned long long)m->metadata_id, (unsigned)m->ntypes,
              (long long)m->gmt_offset_ms, (long long)m->dst_ms, m->locale ? m->locale : "-",
              m->reused ? " (same as previous chunk)" : "");
    sbuf b = {0};
    render r = {&b, true, true, 0, 0};
    for (size_t k = 0; k < n; k++) {
        b.len = 0;
        b.line = 0;
        render_type(&r, m->types[list[k].order]);
        if (b.nomem) {
            mc->nomem = true;
            break;
        }
        jfrc_out_write(o, b.s, b.len);
    }
    free(b.s);
    free(list);
}

static int on_metadata(jfr_parser *p, const jfr_metadata *m, void *user) {
    (void)p;
    metacmd *mc = user;
    if (mc->per_chunk) {
        print_chunk(mc, m);
        return mc->nomem ? JFR_CB_STOP : JFR_CB_CONTINUE;
    }
    if (m->reused) /* same type system as the previous chunk: no new ids */
        return JFR_CB_CONTINUE;
    for (uint32_t i = 0; i < m->ntypes; i++) {
        const jfr_type *t = m->types[i];
        if (seen_id(mc, t->id))
            continue;
        if (mc->nentries == mc->capentries) {
            size_t cap = mc->capentries ? mc->capentries * 2 : 512;
            entry *e = realloc(mc->entries, cap * sizeof *e);
            if (!e) {
                mc->nomem = true;
                return JFR_CB_STOP;
            }
            mc->entries = e;
            mc->capentries = cap;
        }
        entry *e = &mc->entries[mc->nentries];
        *e = (entry){t->id, strdup(t->name), dup_or_null(t->super_type), NULL, mc->nentries};
        mc->nentries++;
        if (!e->name || (t->super_type && !e->super_type)) {
            mc->nomem = true;
            return JFR_CB_STOP;
        }
        if (!wanted(mc, t))
            continue; /* remembered (first id wins) but not shown */
        sbuf b = {0};
        render r = {&b, mc->ids, false, 0, 0};
        render_type(&r, t);
        if (b.nomem) {
            free(b.s);
            mc->nomem = true;
            return JFR_CB_STOP;
        }
        e->text = b.s;
    }
    return JFR_CB_CONTINUE;
}

static int on_chunk_begin(jfr_parser *p, const jfr_chunk_info *c, void *user) {
    (void)p;
    metacmd *mc = user;
    if (mc->per_chunk)
        jfrc_out_printf(cli_out, "// chunk %llu at byte %llu: version %u.%u, %lld bytes\n",
                  (unsigned long long)c->index, (unsigned long long)c->offset, (unsigned)c->major,
                  (unsigned)c->minor, (long long)c->size);
    return JFR_CB_CONTINUE;
}

static int on_arg(void *ctx, const cli_arg *a) {
    metacmd *mc = ctx;
    if (!a->opt) {
        if (mc->path)
            return cli_usage_error("metadata: too many arguments");
        mc->path = a->as;
        return CLI_EXIT_OK;
    }
    switch (a->opt->key) {
    case OPT_IDS:
        mc->ids = true;
        return CLI_EXIT_OK;
    case OPT_PER_CHUNK:
        mc->per_chunk = true;
        return CLI_EXIT_OK;
    default: /* OPT_EVENTS, OPT_CATEGORIES */
        return cli_filter_option(&mc->filter, a);
    }
}

int cmd_metadata(const cli_command *c, cli_global *g, int argc, char **argv) {
    metacmd mc;
    memset(&mc, 0, sizeof mc);
    const char *path;
    int rc = cli_args(c, g, argc, argv, on_arg, &mc);
    if (rc != CLI_ARGS_RUN)
        goto out;
    path = mc.path;
    if (!path) {
        rc = cli_usage_error("metadata: missing FILE");
        goto out;
    }
    jfr_callbacks cb = {.size = sizeof cb, .on_chunk_begin = on_chunk_begin,
                        .on_metadata = on_metadata,
                        .on_error = cli_on_error};
    rc = cli_parse(g, path, NULL, &cb, &mc, NULL);
    if (!mc.per_chunk && !mc.nomem && mc.nentries) { /* (none: entries is NULL) */
        qsort(mc.entries, mc.nentries, sizeof *mc.entries, cmp_entries);
        for (size_t i = 0; i < mc.nentries; i++)
            if (mc.entries[i].text)
                jfrc_out_puts(cli_out, mc.entries[i].text);
    }
    if (mc.nomem) {
        cli_error("out of memory");
        rc = CLI_EXIT_ERROR;
    }
out:
    for (size_t i = 0; i < mc.nentries; i++) {
        free(mc.entries[i].name);
        free(mc.entries[i].super_type);
        free(mc.entries[i].text);
    }
    free(mc.entries);
    cli_filter_free(&mc.filter);
    return rc;
}
