/*
 * views.c — live views (jfrstream_sink.h, "views"): per source a copy of
 * what the views read, written by the chunk writer; each frame reads the
 * copies again with fresh queries. Re-reading a copy costs little (only
 * the views' types are in it) and keeps every view exactly the view of a
 * file, where aggregates kept over a sliding window could not drop what
 * leaves it (MIN, MAX, medians, LAST_BATCH).
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#include "jfrstream_sink.h"
#include "sink.h"
#include "../sized.h"

#include <stdio.h>
#include <strings.h>

#define VIEWS_WINDOW_MS ((uint64_t)10 * 60 * 1000) /* JFR.view's maxage */
#define VIEWS_MAX_SOURCE ((uint64_t)64 << 20)

/* One written chunk, its bytes after the struct. */
typedef struct vchunk {
    struct vchunk *next;
    int64_t end_nanos; /* no event of it ends later */
    size_t len;
} vchunk;

struct jfrs_views_src {
    jfrs_views *v;
    jfrs_source *src;    /* NULL once ended */
    char *id;            /* jfrs_source_id when last seen (jfr__strdup) */
    jfr_writer *w;
    jfr_chunk_info info; /* of the chunk being copied */
    bool writing;        /* between begin and end, no error */
    jfrc_query **probe;  /* per name, resolved against the last metadata */
    uint8_t *want;       /* per type index of the chunk's metadata */
    size_t nwant;
    vchunk *head, *tail; /* oldest first */
    uint64_t bytes;      /* of the chunks kept */
    jfrs_views_src *next;
};

struct jfrs_views {
    jfr_allocator a;
    char **names;
    size_t count;
    jfrc_view_options opt;
    uint64_t window_ms, max_bytes;
    bool by_source;
    jfrs_views_src *head, *tail; /* in the order they began */
    size_t nsrc;
    char err[400];
};

void jfrs_views_config_init(jfrs_views_config *cfg) {
    if (!cfg)
        return;
    memset(cfg, 0, sizeof *cfg);
    cfg->size = sizeof *cfg;
    cfg->options = (jfrc_view_options)JFRC_VIEW_OPTIONS_INIT;
}

/* A view by name (case-insensitive), else an event type's table. */
static jfrc_query *make_query(const jfrs_views *v, const char *name, int64_t since) {
    jfrc_view_options o = v->opt;
    o.since_nanos = since;
    jfrc_query *q = jfrc_query_new_view(name, &o, &v->a);
    return q ? q : jfrc_query_new_type(name, &o, &v->a);
}

static bool is_view(const char *name) {
    const char *n;
    for (size_t k = 0; jfrc_view_info(k, NULL, &n, NULL, NULL); k++)
        if (!strcasecmp(n, name))
            return true;
    return false;
}

jfr_status jfrs_views_new(const jfrs_views_config *cfg, jfrs_views **out, char *err,
                          size_t errlen) {
    if (out)
        *out = NULL;
    if (err && errlen)
        err[0] = 0;
    jfrs_views_config c;
    jfrs_views_config_init(&c);
    if (!cfg || !out || !jfr__sized_copy(&c, sizeof c, cfg) || !c.names || !c.count)
        return JFR_INVALID_ARG;
    for (size_t k = 0; k < c.count; k++)
        if (!c.names[k] || (!is_view(c.names[k]) && !strchr(c.names[k], '.'))) {
            if (err && errlen)
                snprintf(err, errlen, "no view named '%s' (nor an event type: a dotted name)",
                         c.names[k] ? c.names[k] : "(null)");
            return JFR_INVALID_ARG;
        }
    jfr_allocator a = jfrs_allocator(c.allocator);
    jfrs_views *v = jfr__calloc(&a, sizeof *v);
    if (!v)
        return JFR_NOMEM;
    v->a = a;
    v->opt = c.options;
    v->opt.size = sizeof v->opt;
    v->window_ms = c.window_ms ? c.window_ms : VIEWS_WINDOW_MS;
    v->max_bytes = c.max_source_bytes ? c.max_source_bytes : VIEWS_MAX_SOURCE;
    v->by_source = c.by_source;
    v->names = jfr__calloc(&a, c.count * sizeof *v->names); // NOLINT(bugprone-sizeof-expression): an array of pointers
    if (!v->names) {
        jfr__free(&a, v, sizeof *v);
        return JFR_NOMEM;
    }
    v->count = c.count;
    for (size_t k = 0; k < c.count; k++)
        if (!(v->names[k] = jfr__strdup(&a, c.names[k]))) {
            jfrs_views_free(v);
            return JFR_NOMEM;
        }
    *out = v;
    return JFR_OK;
}

static void drop_oldest(jfrs_views_src *s) {
    vchunk *c = s->head;
    s->head = c->next;
    if (!s->head)
        s->tail = NULL;
    s->bytes -= c->len;
    jfr__free(&s->v->a, c, sizeof *c + c->len);
}

static void src_free(jfrs_views_src *s) {
    jfrs_views *v = s->v;
    while (s->head)
        drop_oldest(s);
    for (size_t k = 0; s->probe && k < v->count; k++)
        jfrc_query_free(s->probe[k]);
    jfr__free(&v->a, s->probe, v->count * sizeof *s->probe); // NOLINT(bugprone-sizeof-expression): an array of pointers
    jfr__free(&v->a, s->want, s->nwant);
    jfr_writer_free(s->w);
    if (s->id)
        jfr__free(&v->a, s->id, strlen(s->id) + 1);
    jfr__free(&v->a, s, sizeof *s);
}

void jfrs_views_free(jfrs_views *v) {
    if (!v)
        return;
    jfr_allocator a = v->a;
    for (jfrs_views_src *s = v->head, *n; s; s = n) {
        n = s->next;
        src_free(s);
    }
    for (size_t k = 0; k < v->count; k++)
        if (v->names[k])
            jfr__free(&a, v->names[k], strlen(v->names[k]) + 1);
    jfr__free(&a, v->names, v->count * sizeof *v->names); // NOLINT(bugprone-sizeof-expression): an array of pointers
    jfr__free(&a, v, sizeof *v);
}

/* The last copy error, naming the source. */
static void views_error(jfrs_views_src *s, const char *msg) {
    jfrs_views *v = s->v;
    snprintf(v->err, sizeof v->err, "%s: %s", s->id ? s->id : "?", msg);
}

/* The source's id as it is now (identified once jdk.JVMInformation came). */
static void update_id(jfrs_views_src *s) {
    const char *id = s->src ? jfrs_source_id(s->src) : NULL;
    if (!id || (s->id && !strcmp(id, s->id)))
        return;
    char *d = jfr__strdup(&s->v->a, id);
    if (!d)
        return; /* the old name stays */
    if (s->id)
        jfr__free(&s->v->a, s->id, strlen(s->id) + 1);
    s->id = d;
}

/* Keep a chunk: the writer's output (or a snapshot of it). */
static jfr_status keep(jfrs_views_src *s, const void *data, size_t len, int64_t end) {
    jfrs_views *v = s->v;
    if (len > v->max_bytes) {
        char m[160];
        snprintf(m, sizeof m,
                 "a chunk of %zu bytes is over the %llu bytes kept per source: left out", len,
                 (unsigned long long)v->max_bytes);
        views_error(s, m);
        return JFR_LIMIT;
    }
    while (s->head && s->bytes + len > v->max_bytes)
        drop_oldest(s);
    vchunk *c = jfr__alloc(&v->a, sizeof *c + len);
    if (!c) {
        char m[100];
        snprintf(m, sizeof m, "out of memory: a chunk of %zu bytes left out", len);
        views_error(s, m);
        return JFR_NOMEM;
    }
    c->next = NULL;
    c->end_nanos = end;
    c->len = len;
    memcpy(c + 1, data, len);
    if (s->tail)
        s->tail->next = c;
    else
        s->head = c;
    s->tail = c;
    s->bytes += len;
    return JFR_OK;
}

static int64_t wall_nanos(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* A chunk's end: its header's, else (a live chunk) the time it ended. */
static int64_t chunk_end_nanos(const jfr_chunk_info *c) {
    return c->duration_nanos > 0 ? c->start_nanos + c->duration_nanos : wall_nanos();
}

static int on_written(void *user, const void *buf, size_t len) {
    jfrs_views_src *s = user;
    return keep(s, buf, len, chunk_end_nanos(&s->info)) == JFR_OK ? 0 : -1;
}

jfr_status jfrs_views_src_new(jfrs_views *v, jfrs_source *src, jfrs_views_src **out) {
    if (out)
        *out = NULL;
    if (!v || !src || !out)
        return JFR_INVALID_ARG;
    jfrs_views_src *s = jfr__calloc(&v->a, sizeof *s);
    if (!s)
        return JFR_NOMEM;
    s->v = v;
    s->src = src;
    jfr_writer_config wc = JFR_WRITER_CONFIG_INIT;
    wc.allocator = v->a;
    wc.write = on_written;
    wc.user = s;
    wc.max_chunk_size = v->max_bytes;
    s->probe = jfr__calloc(&v->a, v->count * sizeof *s->probe); // NOLINT(bugprone-sizeof-expression): an array of pointers
    if (!s->probe || !(s->w = jfr_writer_new(&wc))) {
        src_free(s);
        return JFR_NOMEM;
    }
    update_id(s);
    if (v->tail)
        v->tail->next = s;
    else
        v->head = s;
    v->tail = s;
    v->nsrc++;
    *out = s;
    return JFR_OK;
}

void jfrs_views_src_chunk_begin(jfrs_views_src *vs, jfr_parser *p, const jfr_chunk_info *c) {
    if (!vs || !p || !c || !vs->src)
        return;
    vs->info = *c;
    vs->writing = jfr_writer_begin(vs->w, p, c) == JFR_OK;
}

void jfrs_views_src_metadata(jfrs_views_src *vs, const jfr_metadata *m) {
    if (!vs || !m || !vs->src)
        return;
    jfrs_views *v = vs->v;
    /* the types each view reads in this metadata (a live chunk's later
     * segment may declare more: a frame reads the copy's last metadata) */
    for (size_t k = 0; k < v->count; k++) {
        jfrc_query_free(vs->probe[k]);
        if (!(vs->probe[k] = make_query(v, v->names[k], 0)) ||
            jfrc_query_resolve(vs->probe[k], m) != JFR_OK) {
            views_error(vs, "out of memory");
            vs->writing = false;
            return;
        }
    }
    if (m->ntypes > vs->nwant) {
        uint8_t *w = jfr__realloc(&v->a, vs->want, vs->nwant, m->ntypes);
        if (!w) {
            views_error(vs, "out of memory");
            vs->writing = false;
            return;
        }
        vs->want = w;
        vs->nwant = m->ntypes;
    }
    memset(vs->want, 0, vs->nwant);
    /* by name once per metadata, so that a record costs one lookup */
    for (uint32_t i = 0; i < m->ntypes; i++) {
        const jfr_type *t = m->types[i];
        for (size_t k = 0; t->is_event && !vs->want[i] && k < v->count; k++) {
            const jfrc_query *q = vs->probe[k];
            for (size_t j = 0; q && j < jfrc_query_type_count(q); j++)
                if (!strcmp(jfrc_query_type_name(q, j), t->name))
                    vs->want[i] = 1;
        }
    }
}

void jfrs_views_src_record(jfrs_views_src *vs, jfr_parser *p, const jfr_record *r) {
    if (!vs || !vs->writing || !r)
        return;
    bool keep_it = r->type_id <= 1 || (r->type && r->type->index < vs->nwant &&
                                       vs->want[r->type->index]);
    if (keep_it && jfr_writer_record(vs->w, p, r) != JFR_OK) {
        views_error(vs, jfr_writer_error(vs->w));
        vs->writing = false;
    }
}

void jfrs_views_src_chunk_end(jfrs_views_src *vs, jfr_parser *p) {
    if (!vs || !p)
        return;
    update_id(vs);
    if (!vs->writing)
        return;
    vs->writing = false;
    jfr_status st = jfr_writer_end(vs->w, p, &vs->info);
    if (st != JFR_OK && st != JFR_IO) /* JFR_IO: keep said why */
        views_error(vs, jfr_writer_error(vs->w));
}

/* The chunk being copied, as far as it came (writer unchanged). */
typedef struct snap {
    const jfr_allocator *a;
    jfr_buf b;
    bool oom;
} snap;

static int snap_put(void *user, const void *buf, size_t len) {
    snap *x = user;
    if (jfr__buf_reserve(x->a, &x->b, len, SIZE_MAX) != JFR_OK) {
        x->oom = true;
        return -1;
    }
    memcpy(x->b.data + x->b.len, buf, len);
    x->b.len += len;
    return 0;
}

void jfrs_views_src_end(jfrs_views_src *vs) {
    if (!vs || !vs->src)
        return;
    update_id(vs);
    if (vs->writing) { /* cut short: keep what came */
        snap x = {.a = &vs->v->a};
        if (jfr_writer_snapshot(vs->w, snap_put, &x) == JFR_OK)
            keep(vs, x.b.data, x.b.len, wall_nanos());
        jfr__buf_free(&vs->v->a, &x.b);
        vs->writing = false;
    }
    vs->src = NULL;
}

uint64_t jfrs_views_memory(const jfrs_views *v) {
    uint64_t n = 0;
    for (const jfrs_views_src *s = v ? v->head : NULL; s; s = s->next)
        n += s->bytes + jfr_writer_pending(s->w);
    return n;
}

size_t jfrs_views_sources(const jfrs_views *v) { return v ? v->nsrc : 0; }

const char *jfrs_views_error(const jfrs_views *v) { return v && v->err[0] ? v->err : NULL; }

/* ---------------------------------------------------------------- frames */

typedef struct frame {
    jfrc_query **q;
    size_t n;
    bool oom;
} frame;

static int frame_metadata(jfr_parser *p, const jfr_metadata *m, void *user) {
    frame *f = user;
    for (size_t k = 0; k < f->n; k++)
        if (jfrc_query_metadata(f->q[k], p, m) != JFR_OK)
            f->oom = true;
    return JFR_CB_CONTINUE;
}

static int frame_error(jfr_parser *p, jfr_status st, const char *message, void *user) {
    (void)p;
    (void)st;
    (void)message;
    (void)user;
    return JFR_CB_CONTINUE; /* a copy we wrote: skip what cannot be read */
}

static int feed_piece(void *user, const void *buf, size_t len) {
    jfr_parser_feed(user, buf, len);
    return 0;
}

/* Feed one source's copies (and the chunk it is writing) to p. */
static void feed_src(jfr_parser *p, const jfrs_views_src *s) {
    for (const vchunk *c = s->head; c; c = c->next)
        jfr_parser_feed(p, c + 1, c->len);
    if (s->writing)
        jfr_writer_snapshot(s->w, feed_piece, p);
    jfr_parser_finish(p);
}

/* The views over `only` (NULL: every source). */
static jfr_status render_group(jfrs_views *v, jfrc_out *o, const jfrs_views_src *only,
                               int64_t since) {
    frame f = {0};
    f.q = jfr__calloc(&v->a, v->count * sizeof *f.q); // NOLINT(bugprone-sizeof-expression): an array of pointers
    if (!f.q)
        return JFR_NOMEM;
    f.n = v->count;
    jfr_status st = JFR_OK;
    for (size_t k = 0; k < v->count; k++)
        if (!(f.q[k] = make_query(v, v->names[k], since)))
            st = JFR_NOMEM;
    jfr_options po = JFR_OPTIONS_INIT;
    po.allocator = v->a;
    po.ordered = true;       /* as `jfrstream view` reads a file */
    po.jdk_time_base = true;
    jfr_callbacks cb = {.size = sizeof cb, .on_metadata = frame_metadata, .on_error = frame_error};
    jfr_parser *p = st ? NULL : jfr_parser_new(&po, &cb, &f);
    if (!st && !p)
        st = JFR_NOMEM;
    bool first = true;
    for (const jfrs_views_src *s = v->head; p && s; s = s->next) {
        if (only && s != only)
            continue;
        if (!first)
            jfr_parser_reset(p); /* its own time base; subscriptions kept */
        first = false;
        feed_src(p, s);
    }
    if (f.oom)
        st = JFR_NOMEM;
    for (size_t k = 0; !st && k < v->count; k++) {
        jfr_status rs = jfrc_query_render(f.q[k], o);
        if (rs == JFR_INVALID_ARG) /* invalid against the recording: say so, go on */
            jfrc_out_printf(o, "%s: %s\n", v->names[k], jfrc_query_error(f.q[k]));
        else if (rs)
            st = rs;
    }
    jfr_parser_free(p);
    for (size_t k = 0; k < v->count; k++)
        jfrc_query_free(f.q[k]);
    jfr__free(&v->a, f.q, v->count * sizeof *f.q); // NOLINT(bugprone-sizeof-expression): an array of pointers
    return st;
}

jfr_status jfrs_views_render(jfrs_views *v, jfrc_out *o, int64_t now_nanos) {
    if (!v || !o)
        return JFR_INVALID_ARG;
    int64_t since = now_nanos - (int64_t)(v->window_ms * 1000000u);
    /* what left the window; a source that ended and has nothing left goes */
    jfrs_views_src **link = &v->head, *last = NULL;
    while (*link) {
        jfrs_views_src *s = *link;
        /* identified inside a chunk (jdk.JVMInformation comes early in it,
         * and a JVM's live chunk may last for hours): named by its id now */
        update_id(s);
        while (s->head && s->head->end_nanos < since)
            drop_oldest(s);
        if (!s->src && !s->head) {
            *link = s->next;
            v->nsrc--;
            src_free(s);
            continue;
        }
        last = s;
        link = &s->next;
    }
    v->tail = last;
    if (!v->by_source)
        return render_group(v, o, NULL, since);
    for (const jfrs_views_src *s = v->head; s; s = s->next) {
        jfrc_out_printf(o, "Source: %s\n", s->id ? s->id : "?");
        jfr_status st = render_group(v, o, s, since);
        if (st)
            return st;
    }
    return JFR_OK;
}
