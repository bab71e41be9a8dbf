/* Test harness: run a parser over a byte buffer at a given slicing, with
 * optional pauses, and log every callback (with every value decoded) into a
 * text transcript. Two runs agree iff their transcripts are byte-identical. */
#ifndef JFR_TEST_HARNESS_H
#define JFR_TEST_HARNESS_H

#define JFRSTREAM_EXPERIMENTAL /* jfr_parser_set_threads */
#include "jfrstream.h"
#include "walk.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int g_failures __attribute__((unused));
#define CHECK(cond)                                                            \
    do {                                                                       \
        if (!(cond)) {                                                         \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__,   \
                    #cond);                                                    \
            g_failures++;                                                      \
        }                                                                      \
    } while (0)

/* A seeded generator for the randomized tests (SplitMix64). */
static inline uint64_t test_splitmix(uint64_t *s) {
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* ------------------------------------------------------- counting allocator
 *
 * A jfr_allocator for tests: every block carries its size, so that the sizes
 * the library gives free_fn/realloc_fn are checked; live bytes, peak and the
 * number of allocations are counted. Optional:
 *   cap       live bytes may not exceed it: the request fails (0: no cap)
 *   fail_at   the fail_at-th allocation fails, and every later one too
 *             (fail_once: only that one)
 *   die       a cap breach or a wrong size prints a message and aborts
 *             (fuzz targets: the input is then reported)
 *   lock      a mutex held around the accounting (parsers with threads)
 * Set up with talloc_init(), handed to jfr_options by talloc_options(). */
typedef struct talloc {
    size_t cur, peak, nalloc;
    size_t cap;
    size_t fail_at;
    bool fail_once;
    bool die;
    pthread_mutex_t *lock;
    size_t failed;   /* requests refused (fail_at or cap) */
    size_t bad_size; /* free/realloc told a size different from the block's */
    char bad_detail[128];
} talloc;

#define TALLOC_HDR 16 /* keeps malloc's 16-byte alignment */

static inline void talloc_init(talloc *a) { memset(a, 0, sizeof *a); }

/* Called when the library gives free/realloc a wrong size: `break talloc_bad`. */
__attribute__((noinline, unused)) static void talloc_bad(talloc *a, const char *fmt, ...) {
    if (a->bad_size++ == 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(a->bad_detail, sizeof a->bad_detail, fmt, ap);
        va_end(ap);
    }
    if (a->die) {
        fprintf(stderr, "ALLOCATOR CHECK FAILED: %s\n", a->bad_detail);
        abort();
    }
}

/* Whether one more request of `grow` live bytes is refused; counts it. */
static inline bool talloc_refuse(talloc *a, size_t grow) {
    a->nalloc++;
    if (a->fail_at && (a->fail_once ? a->nalloc == a->fail_at : a->nalloc >= a->fail_at)) {
        a->failed++;
        return true;
    }
    if (a->cap && (grow > a->cap || a->cur > a->cap - grow)) {
        if (a->die) {
            fprintf(stderr, "ALLOCATOR CHECK FAILED: %zu more bytes with %zu live exceed the cap "
                            "of %zu\n", grow, a->cur, a->cap);
            abort();
        }
        a->failed++;
        return true;
    }
    return false;
}

static inline void talloc_account(talloc *a, size_t minus, size_t plus) {
    a->cur = a->cur - minus + plus;
    if (a->cur > a->peak)
        a->peak = a->cur;
}

static inline void *talloc_alloc(void *ctx, size_t n) {
    talloc *a = ctx;
    unsigned char *p = NULL;
    if (a->lock)
        pthread_mutex_lock(a->lock);
    if (!talloc_refuse(a, n) && (p = malloc(n + TALLOC_HDR)) != NULL) {
        memcpy(p, &n, sizeof n);
        talloc_account(a, 0, n);
        p += TALLOC_HDR;
    }
    if (a->lock)
        pthread_mutex_unlock(a->lock);
    return p;
}

static inline void talloc_free(void *ctx, void *ptr, size_t n) {
    talloc *a = ctx;
    if (!ptr)
        return;
    unsigned char *p = (unsigned char *)ptr - TALLOC_HDR;
    size_t real;
    memcpy(&real, p, sizeof real);
    if (a->lock)
        pthread_mutex_lock(a->lock);
    if (real != n)
        talloc_bad(a, "free_fn(size %zu) of a %zu-byte block", n, real);
    talloc_account(a, real, 0);
    if (a->lock)
        pthread_mutex_unlock(a->lock);
    free(p);
}

static inline void *talloc_realloc(void *ctx, void *ptr, size_t old, size_t n) {
    talloc *a = ctx;
    if (!ptr)
        return talloc_alloc(ctx, n);
    unsigned char *p = (unsigned char *)ptr - TALLOC_HDR, *q = NULL;
    size_t real;
    memcpy(&real, p, sizeof real);
    if (a->lock)
        pthread_mutex_lock(a->lock);
    if (real != old)
        talloc_bad(a, "realloc_fn(old %zu, new %zu) of a %zu-byte block", old, n, real);
    if (!talloc_refuse(a, n > real ? n - real : 0) && (q = realloc(p, n + TALLOC_HDR)) != NULL) {
        memcpy(q, &n, sizeof n);
        talloc_account(a, real, n);
        q += TALLOC_HDR;
    }
    if (a->lock)
        pthread_mutex_unlock(a->lock);
    return q;
}

static inline jfr_allocator talloc_allocator(talloc *a) {
    return (jfr_allocator){talloc_alloc, talloc_realloc, talloc_free, a};
}
static inline void talloc_options(jfr_options *o, talloc *a) {
    o->allocator = talloc_allocator(a);
}

typedef struct tlog {
    char *d;
    size_t n, cap;
} tlog;

static inline void tlog_printf(tlog *l, const char *fmt, ...) {
    va_list ap;
    for (;;) {
        size_t room = l->cap - l->n;
        va_start(ap, fmt);
        int w = vsnprintf(l->d ? l->d + l->n : NULL, room, fmt, ap);
        va_end(ap);
        if (w < 0)
            abort();
        if ((size_t)w < room) {
            l->n += (size_t)w;
            return;
        }
        l->cap = (l->cap + (size_t)w + 1) * 2;
        l->d = realloc(l->d, l->cap);
        if (!l->d)
            abort();
    }
}

/* Append n raw bytes (faster than "%c" per byte). */
static inline void tlog_put(tlog *l, const char *s, size_t n) {
    if (l->cap - l->n <= n) {
        l->cap = (l->cap + n + 1) * 2;
        l->d = realloc(l->d, l->cap);
        if (!l->d)
            abort();
    }
    if (n)
        memcpy(l->d + l->n, s, n);
    l->n += n;
}

static inline void log_str(tlog *l, const char *s, size_t n) {
    if (!s)
        tlog_put(l, "-", 1);
    else
        tlog_put(l, s, n);
}

/* The transcript's rendering of the steps of test/walk.h: values as
 * null, true, I/U, cN, %.17g, "raw string", {item,item,} and [item,], "..."
 * past depth 12, "!errN" where iteration failed; stacks as
 * " stack<n>[<t>][class.methoddescriptor:line@bci type;...]". */
static inline void tlog_visit(jwalk *w, jw_step step, const jw_item *it) {
    tlog *l = w->user;
    switch (step) {
    case JW_VALUE: {
        const jfr_value *v = it->v;
        switch (v->kind) {
        case JFR_KIND_NULL: tlog_printf(l, "null"); break;
        case JFR_KIND_BOOLEAN: tlog_printf(l, v->b ? "true" : "false"); break;
        case JFR_KIND_INT: tlog_printf(l, "%" PRId64 "/%" PRIu64, v->i, v->u); break;
        case JFR_KIND_CHAR: tlog_printf(l, "c%" PRIu64, v->u); break;
        case JFR_KIND_FLOAT:
        case JFR_KIND_DOUBLE: tlog_printf(l, "%.17g", v->d); break;
        case JFR_KIND_STRING:
            tlog_put(l, "\"", 1);
            tlog_put(l, v->str, v->len);
            tlog_put(l, "\"", 1);
            break;
        case JFR_KIND_OBJECT:
        case JFR_KIND_ARRAY:
            if (!it->descend)
                tlog_printf(l, "...");
            else
                tlog_put(l, v->kind == JFR_KIND_OBJECT ? "{" : "[", 1);
            break;
        }
        break;
    }
    case JW_VALUE_END:
        if (it->descend) {
            if (it->status != JFR_OK)
                tlog_printf(l, "!err%d", it->status);
            tlog_put(l, it->v->kind == JFR_KIND_OBJECT ? "}" : "]", 1);
        }
        if (it->depth > 0)
            tlog_put(l, ",", 1);
        break;
    case JW_STACK:
        if (it->status != JFR_OK)
            tlog_printf(l, " stack!%d", it->status);
        else if (!it->stack->present)
            tlog_printf(l, " stack-");
        else
            tlog_printf(l, " stack%u%s[", it->stack->nframes, it->stack->truncated ? "t" : "");
        break;
    case JW_FRAME: {
        const jfr_frame *f = it->frame;
        if (!f) {
            tlog_printf(l, "!%d", it->status);
            break;
        }
        log_str(l, f->class_name, f->class_name_len);
        tlog_printf(l, ".");
        log_str(l, f->method_name, f->method_name_len);
        log_str(l, f->descriptor, f->descriptor_len);
        tlog_printf(l, ":%d@%d ", (int)f->line, (int)f->bci);
        log_str(l, f->frame_type, f->frame_type_len);
        tlog_printf(l, ";");
        break;
    }
    case JW_STACK_END: tlog_printf(l, "]"); break;
    default: break;
    }
}

static inline void tlog_walk_fail(jwalk *w, const char *message) {
    (void)w;
    fprintf(stderr, "walk check failed: %s\n", message);
    g_failures++;
}

/* A walk (test/walk.h) that writes into l: every value to depth 12, no
 * helpers, no random access. */
static inline jwalk tlog_walker(tlog *l) {
    jwalk w;
    jwalk_init(&w);
    w.max_depth = 13;
    w.helpers = false;
    w.ra_depth = -1;
    w.visit = tlog_visit;
    w.fail = tlog_walk_fail;
    w.user = l;
    return w;
}

/* Log a value and everything under it. */
static inline void log_value(tlog *l, const jfr_value *v) {
    jwalk w = tlog_walker(l);
    jwalk_value(&w, v, 0);
}

typedef struct run_cfg {
    size_t feed;        /* slice size; 0 = whole buffer */
    unsigned seed;      /* nonzero: random slice sizes 1..feed */
    int pause_every;    /* pause every Nth callback; 0 = never */
    bool ordered;
    bool values;        /* decode every value into the log */
    bool skip_errors;   /* on_error returns CONTINUE */
    bool stacks;        /* also log each event's stack frames (helpers) */
    int stop_at;        /* the Nth callback returns STOP; 0 = never */
    unsigned threads;   /* jfr_parser_set_threads */
    bool resync;        /* jfr_options.resync (END line adds skipped=N) */
    talloc *alloc;      /* counting allocator, or NULL: libc */
    uint64_t max_chunk_size; /* jfr_options.max_chunk_size (0: default) */
    uint64_t max_memory;     /* jfr_options.max_memory (0: none) */
    bool random_access;      /* values: also check jfr_value_field & co. against
                                iteration (test/walk.h), at every depth */
    bool no_value_cache;     /* jfr_parser_set_value_cache(p, false) */
    int max_depth;           /* values: objects at this depth not read into
                                (0: the transcript's 13) */
    unsigned skip_every;     /* every Nth event delivered calls */
    uint64_t skip_n;         /* jfr_parser_skip_events(p, skip_n) */
    bool skip_simulate;      /* ... or the next skip_n event callbacks return
                                at once, unlogged and uncounted: the same
                                transcript */
} run_cfg;

typedef struct run_ctx {
    tlog log;
    run_cfg cfg;
    int ncb;
    uint64_t nev;      /* events delivered */
    uint64_t sim_left; /* skip_simulate: events still to ignore */
} run_ctx;

static inline int maybe_pause(run_ctx *r) {
    r->ncb++;
    if (r->cfg.stop_at && r->ncb == r->cfg.stop_at)
        return JFR_CB_STOP;
    return r->cfg.pause_every && r->ncb % r->cfg.pause_every == 0 ? JFR_CB_PAUSE
                                                                   : JFR_CB_CONTINUE;
}
static inline int h_begin(jfr_parser *p, const jfr_chunk_info *c, void *u) {
    (void)p;
    run_ctx *r = u;
    tlog_printf(&r->log, "B %" PRIu64 " @%" PRIu64 " size=%" PRId64 " v%u.%u\n", c->index,
                c->offset, c->size, c->major, c->minor);
    return maybe_pause(r);
}
static inline int h_meta(jfr_parser *p, const jfr_metadata *m, void *u) {
    (void)p;
    run_ctx *r = u;
    tlog_printf(&r->log, "M types=%u id=%" PRIu64 "\n", m->ntypes, m->metadata_id);
    return maybe_pause(r);
}
static inline int h_record(jfr_parser *p, const jfr_record *rec, void *u) {
    (void)p;
    run_ctx *r = u;
    tlog_printf(&r->log, "R @%" PRIu64 " %" PRIu64 " t%" PRIu64 " %s\n", rec->offset,
                rec->size, rec->type_id, rec->type ? rec->type->name : "-");
    return maybe_pause(r);
}
/* The event's stack trace through jfr_event_stack / jfr_stack_frame. */
static inline void log_stack(tlog *l, const jfr_event *e) {
    jwalk w = tlog_walker(l);
    jfr_stack st;
    jw_item it = {.status = jfr_event_stack(e, &st)};
    if (it.status == JFR_OK)
        jwalk_stack(&w, &st, 0);
    else
        jw_visit(&w, JW_STACK, &it);
}
/* One event line: header fields, then every value, then the stack. */
static inline void log_event(run_ctx *r, const char *tag, const jfr_event *e) {
    tlog_printf(&r->log, "%s %s @%" PRIu64 " t=%" PRId64 " d=%" PRId64 " ns=%" PRId64 " ", tag,
                e->type->name, e->offset, e->start_ticks, e->duration_ticks, e->start_nanos);
    if (r->cfg.values) {
        jfr_value v;
        jfr_event_value(e, &v);
        jwalk w = tlog_walker(&r->log);
        if (r->cfg.random_access)
            w.ra_depth = INT_MAX;
        if (r->cfg.max_depth)
            w.max_depth = r->cfg.max_depth;
        jwalk_value(&w, &v, 0);
    }
    if (r->cfg.stacks)
        log_stack(&r->log, e);
    tlog_printf(&r->log, "\n");
}
static inline int h_event(jfr_parser *p, const jfr_event *e, void *u) {
    run_ctx *r = u;
    if (r->sim_left) {
        r->sim_left--;
        return JFR_CB_CONTINUE;
    }
    log_event(r, "E", e);
    if (r->cfg.skip_every && ++r->nev % r->cfg.skip_every == 0) {
        if (r->cfg.skip_simulate)
            r->sim_left = r->cfg.skip_n;
        else
            jfr_parser_skip_events(p, r->cfg.skip_n);
    }
    return maybe_pause(r);
}
static inline int h_end(jfr_parser *p, const jfr_chunk_info *c, void *u) {
    (void)p;
    run_ctx *r = u;
    tlog_printf(&r->log, "X %" PRIu64 "\n", c->index);
    return maybe_pause(r);
}
static inline int h_error(jfr_parser *p, jfr_status s, const char *msg, void *u) {
    (void)p;
    run_ctx *r = u;
    tlog_printf(&r->log, "ERR %s %s\n", jfr_status_name(s), msg);
    return r->cfg.skip_errors ? JFR_CB_CONTINUE : JFR_CB_STOP;
}

static inline unsigned rnd_next(unsigned *s) {
    *s = *s * 1103515245u + 12345u;
    return (*s >> 8) & 0xffffff;
}

/* Feed `buf` per cfg; returns the transcript (caller frees .d). */
static inline tlog run_parser(const uint8_t *buf, size_t len, run_cfg cfg) {
    run_ctx r = {.cfg = cfg};
    jfr_callbacks cb = {sizeof cb, h_begin, h_meta, h_record, h_event, h_end, h_error};
    jfr_options o;
    jfr_options_init(&o);
    o.ordered = cfg.ordered;
    o.resync = cfg.resync;
    o.max_chunk_size = cfg.max_chunk_size;
    o.max_memory = cfg.max_memory;
    if (cfg.alloc)
        talloc_options(&o, cfg.alloc);
    jfr_parser *p = jfr_parser_new(&o, &cb, &r);
    jfr_parser_set_threads(p, cfg.threads);
    if (cfg.no_value_cache)
        jfr_parser_set_value_cache(p, false);
    size_t pos = 0;
    unsigned seed = cfg.seed;
    jfr_status s = JFR_OK;
    int guard = 0;
    while (pos < len) {
        size_t n = cfg.feed ? cfg.feed : len;
        if (cfg.seed && cfg.feed)
            n = 1 + rnd_next(&seed) % cfg.feed;
        if (n > len - pos)
            n = len - pos;
        s = jfr_parser_feed(p, buf + pos, n);
        pos += jfr_parser_consumed(p);
        if (s == JFR_PAUSED) {
            if (++guard > 100000000)
                break;
            continue;
        }
        if (s != JFR_OK)
            break;
    }
    if (s == JFR_OK || s == JFR_PAUSED) {
        while ((s = jfr_parser_finish(p)) == JFR_PAUSED)
            ;
    }
    if (cfg.resync)
        tlog_printf(&r.log, "END %s skipped=%" PRIu64 "\n", jfr_status_name(s),
                    jfr_parser_skipped(p));
    else
        tlog_printf(&r.log, "END %s\n", jfr_status_name(s));
    jfr_parser_free(p);
    return r.log;
}

/* A transcript made comparable across positions in the input: each "@N"
 * becomes "@" and the chunk number of "B N" / "X N" lines is dropped. With
 * events_only, only the R and E lines are kept: what was delivered, whatever
 * chunk began (B, M lines) and failed around it. .d is never NULL. */
static inline tlog tlog_normalize(const char *s, size_t n, bool events_only) {
    tlog o = {0};
    tlog_put(&o, "", 0);
    size_t i = 0;
    while (i < n) {
        const char *l = s + i, *e = memchr(l, '\n', n - i);
        size_t len = e ? (size_t)(e - l) + 1 : n - i, k = 0;
        i += len;
        bool delivered = len >= 2 && (l[0] == 'R' || l[0] == 'E') && l[1] == ' ';
        if (events_only && !delivered)
            continue;
        if (len >= 2 && (l[0] == 'B' || l[0] == 'X') && l[1] == ' ') {
            tlog_put(&o, l, 2);
            for (k = 2; k < len && l[k] >= '0' && l[k] <= '9'; k++)
                ;
        }
        for (; k < len; k++) {
            tlog_put(&o, l + k, 1);
            if (l[k] == '@')
                while (k + 1 < len && l[k + 1] >= '0' && l[k + 1] <= '9')
                    k++;
        }
    }
    return o;
}

/* Transcripts can hold NUL bytes (strings are logged raw): no strstr. */
static inline bool tlog_ends_ok(const tlog *l) {
    return l->n >= 7 && memcmp(l->d + l->n - 7, "END OK\n", 7) == 0;
}

static inline uint8_t *read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    rewind(f);
    uint8_t *b = malloc(n > 0 ? (size_t)n : 1);
    if (!b || fread(b, 1, (size_t)n, f) != (size_t)n) {
        fclose(f);
        free(b);
        return NULL;
    }
    fclose(f);
    *len = (size_t)n;
    return b;
}

/* The file as a live stream: each chunk header says "68 bytes so far,
 * no checkpoint or metadata offsets yet, being written" (what bench/'s
 * --live does). NULL when the chunks do not frame the file. */
static inline uint8_t *as_live(const uint8_t *buf, size_t len) {
    uint8_t *o = malloc(len ? len : 1);
    if (!o)
        return NULL;
    memcpy(o, buf, len);
    size_t off = 0;
    while (off < len) {
        uint64_t size = jfr_chunk_size_at(o + off, len - off);
        if (size < 68 || size > len - off) {
            free(o);
            return NULL;
        }
        uint8_t *h = o + off;
        memset(h + 8, 0, 24); /* size, checkpoint and metadata offsets */
        h[15] = 68;
        memset(h + 40, 0, 8); /* duration */
        h[64] = 1;            /* state: being written */
        off += (size_t)size;
    }
    return o;
}

/* ------------------------------------------------------------ sized structs
 *
 * A struct a caller hands in starts with its size (jfrstream.h, "STRUCTS YOU
 * HAND IN"): one built against another version of a header is smaller or
 * bigger. SIZED_BUF(T) holds a T as such a caller has it: .c, and
 * SIZED_EXTRA bytes of the caller's own after it. */
#define SIZED_EXTRA 64
#define SIZED_BUF(T)                                                           \
    union {                                                                    \
        T c;                                                                   \
        unsigned char b[sizeof(T) + SIZED_EXTRA];                              \
    }

/* An older caller's struct in `buf` (a SIZED_BUF): the first `size` bytes of
 * `base` (a T of `base_size` bytes), size `size`, and `fill` in every byte
 * after them. Returns buf. */
static inline void *sized_older(void *buf, const void *base, size_t base_size, size_t size,
                                int fill) {
    memset(buf, fill, base_size + SIZED_EXTRA);
    memcpy(buf, base, size);
    memcpy(buf, &size, sizeof size);
    return buf;
}

/* A newer caller's: the T in `buf` (a SIZED_BUF; `size` bytes) as it is, the
 * SIZED_EXTRA bytes after it zero, its size the whole. Returns buf. */
static inline void *sized_newer(void *buf, size_t size) {
    memset((unsigned char *)buf + size, 0, SIZED_EXTRA);
    size += SIZED_EXTRA;
    memcpy(buf, &size, sizeof size);
    return buf;
}

/* JFRSTREAM_TEST_SCALE (0.1 under `meson test --setup valgrind`): the factor
 * slow tests apply to their random and repetition budgets; 1 when unset. */
static inline double test_scale(void) {
    const char *e = getenv("JFRSTREAM_TEST_SCALE");
    double f = e ? atof(e) : 1;
    return f > 0 && f < 1 ? f : 1;
}

#endif
