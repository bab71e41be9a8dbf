/*
 * jfrbench — decoding throughput of jfrstream on one JFR file.
 *
 *   jfrbench --mode walk|type:NAME|all|field:TYPE.FIELD|stream [--repeat N] [--chunk-bytes N]
 *            [--live] [--loop N] [--release] [--frames batch|helper|iter] [--iter-copy] [--cache-stacks]
 *            [--types] [--threads N] [--no-value-cache] FILE|-
 *
 * Modes (see bench/run.sh for the side-by-side run with the JDK):
 *   walk        on_record only: records counted per type id, no event decoding.
 *               The file is mmapped and fed in one call (zero-copy path).
 *   type:NAME   jfr_parser_on(NAME) only; each event's stack trace resolved
 *               frame by frame to class and method names (jfr_event_stack +
 *               jfr_stack_frame), the names' bytes hashed.
 *   all         on_event for every event; every field decoded with jfr_iter,
 *               pool references (thread, class, ...) followed to depth 4, stack
 *               traces walked frame by frame with the frame helper; scalars and
 *               string bytes hashed. Mirrors RecordingFileBench.java's `all`.
 *   field:TYPE.FIELD  jfr_parser_on(TYPE) only; of each event, the one field
 *               FIELD (the name after the last dot) read and walked as `all`
 *               walks a field. What one field costs, e.g. the strings of
 *               field:jfrstream.Bulk.payload: a floor under `all`.
 *   stream      read(2) in 64 KiB slices (stdin when FILE is -), each slice
 *               fed (the buffering path); per-type record counts + on_event
 *               counting events.
 *
 * --chunk-bytes N  slice size: the read size of stream/--live (default 65536);
 *                  for the mmap modes, feed N bytes per call (default: all)
 * --live           stream the file as a JMX live stream would arrive: each
 *                  chunk header rewritten on the fly (size 68, checkpoint and
 *                  metadata offsets 0, duration 0, state 1), the body
 *                  unchanged; implies the read(2) path
 * --loop N         read the file N times in a row (not for stdin)
 * --release        mmap modes: feed one chunk per call and drop its pages
 *                  (MADV_DONTNEED) after it, as the CLI does: peak RSS is
 *                  then about one chunk instead of the whole mapping
 * --frames batch|helper|iter  stack frames read 32 at a time with
 *                  jfr_stack_frames (the default), one at a time with
 *                  jfr_stack_frame, or with jfr_iter (comparison only)
 * --iter-copy      all: fields read with jfr_iter_next (a copy of each
 *                  value) instead of jfr_iter_next_ref (comparison only)
 * --types          print the per-type counts (info lines)
 * --threads N      jfr_parser_set_threads(N) (parallel preparation of whole
 *                  chunks; N > 1 uses the libc allocator: the counting one
 *                  is not thread-safe, heap_peak_kb then reads 0)
 * --no-value-cache jfr_parser_set_value_cache(p, false): pooled objects
 *                  decoded from their bytes at every read (comparison only)
 * --cache-stacks   type:NAME / all: resolve each stack trace key once per
 *                  chunk and reuse the result (what an aggregating consumer,
 *                  or the JDK's RecordingFile internally, does); comparison only
 *
 * Time: CLOCK_MONOTONIC around parser_new..finish, after mmap + page warm-up
 * and one untimed warm-up run (a warm-up run over 1 s counts as timed);
 * --repeat N reports the median of N runs. CPU time (CLOCK_PROCESS_CPUTIME_ID)
 * is reported too: on a shared machine it is the steadier number.
 * MB/s = input bytes / time / 1e6. Info lines, then exactly one final line:
 *
 *   MB/s=<x> events/s=<y> events=<n>
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#define JFRSTREAM_EXPERIMENTAL /* jfr_parser_set_threads, set_value_cache */
#include <jfrstream.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#define MAX_DEPTH 4
#define HDR 68

enum mode { M_WALK, M_TYPE, M_ALL, M_FIELD, M_STREAM };

/* --------------------------------------------------------- per-type counts */

typedef struct count_slot {
    uint64_t id;
    uint64_t n;
} count_slot;

#define NSLOTS 4096 /* type ids seen in practice are well below this */

typedef struct bench {
    enum mode mode;
    const char *type_name;
    const char *field_name; /* field:TYPE.FIELD */
    bool frames_iter;
    bool frames_one; /* jfr_stack_frame per frame, not jfr_stack_frames */
    bool iter_copy;  /* jfr_iter_next, not jfr_iter_next_ref */
    uint64_t events;
    uint64_t records;
    uint64_t frames;
    uint64_t hash;
    uint64_t errors;
    const jfr_type *st_type; /* jdk.types.StackTrace of the current metadata */
    const jfr_type *method_type; /* jdk.types.Method */
    /* --cache-stacks: stack trace key -> (hash, frames), per chunk */
    bool cache_stacks;
    struct stack_slot *cache;
    size_t cache_mask, cache_count;
    uint64_t cache_hits;
    const jfr_type *last_type;
    int32_t last_idx;
    count_slot *slots;
    uint64_t direct[4096]; /* counts of small type ids (all HotSpot ones) */
} bench;

static inline void count_id_n(bench *b, uint64_t id, uint64_t n) {
    uint32_t i = (uint32_t)((id * 0x9E3779B97F4A7C15ull) >> 52);
    for (;; i = (i + 1) & (NSLOTS - 1)) {
        count_slot *s = &b->slots[i];
        if (!s->n || s->id == id) {
            s->id = id;
            s->n += n;
            return;
        }
    }
}

/* What an application counting per type would do: a direct table for small
 * ids, a hash table beyond. */
static inline void count_id(bench *b, uint64_t id) {
    if (id < 4096) {
        b->direct[id]++;
        return;
    }
    count_id_n(b, id, 1);
}

static inline void mix(bench *b, uint64_t v) {
    b->hash = (b->hash ^ v) * 0x100000001B3ull + (b->hash >> 29);
}

/* A string is touched (length, first and last byte), not hashed in full:
 * the JDK side's String.hashCode() is computed once per String object and
 * cached, and its strings are shared through the constant pools, so hashing
 * every byte here would charge jfrstream for work the JDK does not repeat. */
static inline void mix_str(bench *b, const char *s, size_t n) {
    mix(b, !s ? 0x5bd1e995u
              : n ? (uint64_t)n | (uint64_t)(uint8_t)s[0] << 32 | (uint64_t)(uint8_t)s[n - 1] << 40
                  : 0);
}

/* ------------------------------------------------------------- allocator */

typedef struct heap_stat {
    size_t cur, peak;
} heap_stat;

static void *h_alloc(void *ctx, size_t n) {
    heap_stat *h = ctx;
    void *p = malloc(n);
    if (p && (h->cur += n) > h->peak)
        h->peak = h->cur;
    return p;
}

static void *h_realloc(void *ctx, void *ptr, size_t old_n, size_t new_n) {
    heap_stat *h = ctx;
    void *p = realloc(ptr, new_n ? new_n : 1);
    if (p) {
        h->cur = h->cur - (ptr ? old_n : 0) + new_n;
        if (h->cur > h->peak)
            h->peak = h->cur;
    }
    return p;
}

static void h_free(void *ctx, void *ptr, size_t n) {
    heap_stat *h = ctx;
    if (ptr)
        h->cur -= n;
    free(ptr);
}

/* ------------------------------------------------------------- callbacks */

static int on_metadata(jfr_parser *p, const jfr_metadata *m, void *user) {
    (void)p;
    bench *b = user;
    b->last_type = NULL;
    b->st_type = jfr_metadata_type_named(m, "jdk.types.StackTrace");
    b->method_type = jfr_metadata_type_named(m, "jdk.types.Method");
    return JFR_CB_CONTINUE;
}

static int on_record_count(jfr_parser *p, const jfr_record *r, void *user) {
    (void)p;
    bench *b = user;
    b->records++;
    if (r->type_id > 1) {
        b->events++;
        count_id(b, r->type_id);
    }
    return JFR_CB_CONTINUE;
}

static int on_event_count(jfr_parser *p, const jfr_event *e, void *user) {
    (void)p;
    bench *b = user;
    mix(b, (uint64_t)e->start_ticks);
    return JFR_CB_CONTINUE;
}

/* A stack trace value: every frame's names, line, bci and frame type
 * (`all`), or class and method names and line (`type:NAME`). */
static void walk_stack(bench *b, const jfr_value *v, bool full) {
    jfr_stack st;
    if (jfr_value_stack(v, &st) != JFR_OK) {
        b->errors++;
        return;
    }
    if (full)
        mix(b, st.truncated);
    if (!st.present)
        return;
    enum { BATCH = 32 };
    jfr_frame fr[BATCH];
    for (uint32_t i = 0; i < st.nframes;) {
        uint32_t got = 0;
        jfr_status s;
        if (b->frames_one) {
            s = jfr_stack_frame(&st, i, &fr[0]);
            got = s == JFR_OK;
        } else {
            s = jfr_stack_frames(&st, i, fr, BATCH, &got);
        }
        for (uint32_t k = 0; k < got; k++) {
            const jfr_frame *f = &fr[k];
            mix_str(b, f->class_name, f->class_name_len);
            mix_str(b, f->method_name, f->method_name_len);
            if (full) {
                mix_str(b, f->descriptor, f->descriptor_len);
                mix_str(b, f->frame_type, f->frame_type_len);
                mix(b, (uint64_t)(uint32_t)f->line << 32 | (uint32_t)f->bci);
            } else {
                mix(b, (uint64_t)(uint32_t)f->line);
            }
        }
        i += got;
        if (s != JFR_OK) { /* that frame is counted and passed over */
            b->errors++;
            i++;
        }
    }
    b->frames += st.nframes;
}

/* --cache-stacks: what an aggregating consumer (or the JDK, which turns each
 * constant pool into objects once per chunk) does: a stack trace key seen
 * before in this chunk is not resolved again. */
typedef struct stack_slot {
    uint64_t key;
    uint64_t hash;
    uint64_t frames;
    bool used;
} stack_slot;

static void cache_clear(bench *b) {
    if (b->cache && b->cache_count)
        memset(b->cache, 0, (b->cache_mask + 1) * sizeof *b->cache);
    b->cache_count = 0;
}

static stack_slot *cache_find(bench *b, uint64_t key) {
    if (!b->cache || (b->cache_count + 1) * 2 > b->cache_mask + 1) {
        size_t cap = b->cache ? (b->cache_mask + 1) * 2 : 4096;
        stack_slot *ns = calloc(cap, sizeof *ns);
        if (!ns) {
            fprintf(stderr, "jfrbench: out of memory\n");
            exit(1);
        }
        for (size_t i = 0; b->cache && i <= b->cache_mask; i++) {
            if (!b->cache[i].used)
                continue;
            size_t h = (size_t)(b->cache[i].key * 0x9E3779B97F4A7C15ull >> 20) & (cap - 1);
            while (ns[h].used)
                h = (h + 1) & (cap - 1);
            ns[h] = b->cache[i];
        }
        free(b->cache);
        b->cache = ns;
        b->cache_mask = cap - 1;
    }
    size_t h = (size_t)(key * 0x9E3779B97F4A7C15ull >> 20) & b->cache_mask;
    while (b->cache[h].used && b->cache[h].key != key)
        h = (h + 1) & b->cache_mask;
    return &b->cache[h];
}

static void stack_value(bench *b, const jfr_value *v, bool full) {
    if (!b->cache_stacks || !v->pooled) {
        walk_stack(b, v, full);
        return;
    }
    stack_slot *sl = cache_find(b, v->key);
    if (!sl->used) {
        uint64_t h0 = b->hash, f0 = b->frames;
        b->hash = 0;
        walk_stack(b, v, full);
        sl->used = true;
        sl->key = v->key;
        sl->hash = b->hash;
        sl->frames = b->frames - f0;
        b->cache_count++;
        b->hash = h0;
        b->frames = f0;
    } else {
        b->cache_hits++;
    }
    mix(b, sl->hash);
    b->frames += sl->frames;
}

static int on_chunk_begin(jfr_parser *p, const jfr_chunk_info *c, void *user) {
    (void)p;
    (void)c;
    cache_clear(user);
    return JFR_CB_CONTINUE;
}

static void walk_value(bench *b, const jfr_value *v, int depth);

/* The same through jfr_iter: one pass over the frames array instead of
 * jfr_stack_frame(i), which skips i frames to reach frame i. */
static void walk_stack_iter(bench *b, const jfr_value *v) {
    jfr_iter it, fit, fld;
    jfr_value f, fr, x;
    jfr_status r;
    jfr_iter_init(&it, v);
    while ((r = jfr_iter_next(&it, &f)) == JFR_OK) {
        if (f.kind != JFR_KIND_ARRAY) {
            walk_value(b, &f, 2);
            continue;
        }
        jfr_iter_init(&fit, &f);
        while ((r = jfr_iter_next(&fit, &fr)) == JFR_OK) {
            b->frames++;
            jfr_iter_init(&fld, &fr);
            while ((r = jfr_iter_next(&fld, &x)) == JFR_OK) {
                if (x.kind == JFR_KIND_OBJECT && x.type == b->method_type) {
                    jfr_frame m;
                    memset(&m, 0, sizeof m);
                    if (jfr_value_method(&x, &m) != JFR_OK)
                        b->errors++;
                    mix_str(b, m.class_name, m.class_name_len);
                    mix_str(b, m.method_name, m.method_name_len);
                    mix_str(b, m.descriptor, m.descriptor_len);
                } else {
                    walk_value(b, &x, 2);
                }
            }
            if (r != JFR_END)
                b->errors++;
        }
        if (r != JFR_END)
            b->errors++;
    }
    if (r != JFR_END)
        b->errors++;
}

static void walk_children(bench *b, const jfr_value *v, int depth) {
    jfr_iter it;
    jfr_value c;
    const jfr_value *cp;
    jfr_status r;
    jfr_iter_init(&it, v);
    if (b->iter_copy) {
        while ((r = jfr_iter_next(&it, &c)) == JFR_OK)
            walk_value(b, &c, depth + 1);
    } else { /* cp is read before the next call on the parser */
        while ((r = jfr_iter_next_ref(&it, &c, &cp)) == JFR_OK)
            walk_value(b, cp, depth + 1);
    }
    if (r != JFR_END)
        b->errors++;
}

static void walk_value(bench *b, const jfr_value *v, int depth) {
    switch (v->kind) {
    case JFR_KIND_NULL:
        mix(b, 0x9e37u);
        break;
    case JFR_KIND_BOOLEAN:
    case JFR_KIND_INT:
    case JFR_KIND_CHAR:
        mix(b, v->u);
        break;
    case JFR_KIND_FLOAT:
    case JFR_KIND_DOUBLE: {
        uint64_t bits;
        memcpy(&bits, &v->d, sizeof bits);
        mix(b, bits);
        break;
    }
    case JFR_KIND_STRING:
        mix_str(b, v->str, v->len);
        break;
    case JFR_KIND_OBJECT:
        if (v->type == b->st_type && b->st_type) {
            if (b->frames_iter) { /* comparison: frames through jfr_iter */
                walk_stack_iter(b, v);
            } else {
                stack_value(b, v, true);
            }
        } else if (depth < MAX_DEPTH) {
            walk_children(b, v, depth);
        } else {
            mix(b, v->key);
        }
        break;
    case JFR_KIND_ARRAY:
        mix(b, v->count);
        if (depth < MAX_DEPTH)
            walk_children(b, v, depth);
        break;
    }
}

static int on_event_all(jfr_parser *p, const jfr_event *e, void *user) {
    (void)p;
    bench *b = user;
    jfr_value root;
    b->events++;
    if (jfr_event_value(e, &root) != JFR_OK) {
        b->errors++;
        return JFR_CB_CONTINUE;
    }
    walk_children(b, &root, 0);
    return JFR_CB_CONTINUE;
}

static int on_type(jfr_parser *p, const jfr_event *e, void *user) {
    (void)p;
    bench *b = user;
    b->events++;
    if (!b->cache_stacks) { /* the helper path, as an application would */
        jfr_stack st;
        if (jfr_event_stack(e, &st) != JFR_OK) {
            b->errors++;
            return JFR_CB_CONTINUE;
        }
        if (!st.present)
            return JFR_CB_CONTINUE;
        for (uint32_t i = 0; i < st.nframes; i++) {
            jfr_frame fr;
            if (jfr_stack_frame(&st, i, &fr) != JFR_OK) {
                b->errors++;
                continue;
            }
            mix_str(b, fr.class_name, fr.class_name_len);
            mix_str(b, fr.method_name, fr.method_name_len);
            mix(b, (uint64_t)(uint32_t)fr.line);
        }
        b->frames += st.nframes;
        return JFR_CB_CONTINUE;
    }
    /* --cache-stacks: the stackTrace field's pool key first */
    jfr_value sv;
    if (e->type != b->last_type) {
        b->last_type = e->type;
        b->last_idx = jfr_type_field_index(e->type, "stackTrace");
    }
    int32_t idx = b->last_idx;
    if (idx < 0 || jfr_event_field(e, (uint32_t)idx, &sv) != JFR_OK) {
        b->errors++;
        return JFR_CB_CONTINUE;
    }
    if (sv.kind != JFR_KIND_NULL)
        stack_value(b, &sv, false);
    return JFR_CB_CONTINUE;
}

/* field:TYPE.FIELD: that one field, walked as `all` walks a top-level one */
static int on_field(jfr_parser *p, const jfr_event *e, void *user) {
    (void)p;
    bench *b = user;
    b->events++;
    if (e->type != b->last_type) {
        b->last_type = e->type;
        b->last_idx = jfr_type_field_index(e->type, b->field_name);
    }
    jfr_value v;
    if (b->last_idx < 0 || jfr_event_field(e, (uint32_t)b->last_idx, &v) != JFR_OK) {
        b->errors++;
        return JFR_CB_CONTINUE;
    }
    walk_value(b, &v, 1);
    return JFR_CB_CONTINUE;
}

/* ---------------------------------------------------------------- input */

typedef struct input {
    const char *path;
    int fd;             /* 0 for stdin */
    bool is_stdin;
    const uint8_t *map; /* mmap modes */
    size_t size;        /* file size (0 for stdin) */
} input;

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double cpu_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void die(const char *fmt, const char *arg) {
    fprintf(stderr, "jfrbench: ");
    fprintf(stderr, fmt, arg);
    fputc('\n', stderr);
    exit(1);
}

static ssize_t read_full(int fd, uint8_t *buf, size_t n) {
    size_t got = 0;
    while (got < n) {
        ssize_t r = read(fd, buf + got, n - got);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        if (r == 0)
            break;
        got += (size_t)r;
    }
    return (ssize_t)got;
}

static bool feed_or_fail(jfr_parser *p, const void *buf, size_t n) {
    jfr_status s = jfr_parser_feed(p, buf, n);
    if (s != JFR_OK) {
        fprintf(stderr, "jfrbench: feed: %s\n", jfr_parser_error(p));
        return false;
    }
    return true;
}

static inline uint64_t be64(const uint8_t *h) {
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v = v << 8 | h[i];
    return v;
}

typedef struct run_cfg {
    bool use_read;   /* stream / --live: read(2) slices */
    bool live;
    size_t slice;    /* 0: whole mapping in one call */
    unsigned loops;
    bool release;    /* mmap modes: one chunk per call, its pages dropped after */
} run_cfg;

/* One pass over the input (all loops). Returns input bytes fed, or 0 on
 * failure. */
static uint64_t run_once(input *in, const run_cfg *cfg, jfr_parser *p, uint8_t *buf) {
    uint64_t total = 0;
    for (unsigned l = 0; l < cfg->loops; l++) {
        if (!cfg->use_read && cfg->release) {
            /* resident memory of about one chunk: what jfrstream's CLI does */
            size_t off = 0, done = 0, page = (size_t)sysconf(_SC_PAGESIZE);
            while (off < in->size) {
                uint64_t k = jfr_chunk_size_at(in->map + off, in->size - off);
                if (k < HDR || k > in->size - off)
                    k = in->size - off;
#ifdef MADV_POPULATE_READ
                /* map the chunk's pages in one call rather than fault by fault */
                size_t lo = off / page * page;
                (void)madvise((void *)(uintptr_t)(in->map + lo), off + (size_t)k - lo,
                              MADV_POPULATE_READ);
#endif
                if (!feed_or_fail(p, in->map + off, (size_t)k))
                    return 0;
                off += (size_t)k;
                size_t upto = off / page * page;
                (void)madvise((void *)(uintptr_t)(in->map + done), upto - done, MADV_DONTNEED);
                done = upto;
            }
            total += in->size;
            continue;
        }
        if (!cfg->use_read) {
            size_t step = cfg->slice ? cfg->slice : in->size;
            for (size_t off = 0; off < in->size; off += step) {
                size_t n = in->size - off < step ? in->size - off : step;
                if (!feed_or_fail(p, in->map + off, n))
                    return 0;
            }
            total += in->size;
            continue;
        }
        if (!in->is_stdin && lseek(in->fd, 0, SEEK_SET) != 0)
            die("lseek: %s", strerror(errno));
        uint64_t left = 0; /* bytes of the current chunk's body still to come */
        for (;;) {
            ssize_t n;
            if (cfg->live && left == 0) {
                uint8_t h[HDR];
                n = read_full(in->fd, h, HDR);
                if (n == 0)
                    break;
                if (n != HDR || memcmp(h, "FLR\0", 4) != 0) {
                    fprintf(stderr, "jfrbench: --live: bad chunk header at byte %llu\n",
                            (unsigned long long)(total));
                    return 0;
                }
                uint64_t size = be64(h + 8);
                if (size <= HDR) {
                    fprintf(stderr, "jfrbench: --live: chunk size %llu\n",
                            (unsigned long long)size);
                    return 0;
                }
                memset(h + 8, 0, 24); /* size, checkpoint and metadata offsets */
                h[15] = HDR;          /* size = 68: only the header so far */
                memset(h + 40, 0, 8); /* duration */
                h[64] = 1;            /* state: being written */
                if (!feed_or_fail(p, h, HDR))
                    return 0;
                total += HDR;
                left = size - HDR;
                continue;
            }
            size_t want = cfg->slice;
            if (cfg->live && left < want)
                want = (size_t)left;
            n = read(in->fd, buf, want);
            if (n < 0) {
                if (errno == EINTR)
                    continue;
                die("read: %s", strerror(errno));
            }
            if (n == 0) {
                if (cfg->live && left) {
                    fprintf(stderr, "jfrbench: --live: input ends inside a chunk\n");
                    return 0;
                }
                break;
            }
            if (!feed_or_fail(p, buf, (size_t)n))
                return 0;
            total += (uint64_t)n;
            if (cfg->live)
                left -= (uint64_t)n;
        }
    }
    return total;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Sorts a[0..n) and returns the median. */
static double median(double *a, unsigned n) {
    qsort(a, n, sizeof *a, cmp_double);
    return n % 2 ? a[n / 2] : (a[n / 2 - 1] + a[n / 2]) / 2;
}

static void usage(void) {
    fprintf(stderr,
            "usage: jfrbench --mode walk|type:NAME|all|field:TYPE.FIELD|stream [--repeat N] "
            "[--chunk-bytes N]\n"
            "                [--live] [--loop N] [--release] [--frames batch|helper|iter] [--iter-copy] [--cache-stacks]\n"
            "                [--types] [--threads N] [--no-value-cache] FILE|-\n");
    exit(2);
}

static unsigned long long parse_num(const char *s) {
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s || *end || v == 0)
        usage();
    return v;
}

static int cmp_slot(const void *a, const void *b) {
    const count_slot *x = a, *y = b;
    return x->n < y->n ? 1 : x->n > y->n ? -1 : 0;
}

int main(int argc, char **argv) {
    const char *mode_s = NULL, *path = NULL;
    unsigned repeat = 1;
    run_cfg cfg = {false, false, 0, 1, false};
    size_t chunk_bytes = 0;
    bool print_types = false, frames_iter = false, frames_one = false, iter_copy = false,
         cache_stacks = false, no_value_cache = false;
    unsigned threads = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--mode") && i + 1 < argc)
            mode_s = argv[++i];
        else if (!strcmp(a, "--repeat") && i + 1 < argc)
            repeat = (unsigned)parse_num(argv[++i]);
        else if (!strcmp(a, "--chunk-bytes") && i + 1 < argc)
            chunk_bytes = (size_t)parse_num(argv[++i]);
        else if (!strcmp(a, "--loop") && i + 1 < argc)
            cfg.loops = (unsigned)parse_num(argv[++i]);
        else if (!strcmp(a, "--threads") && i + 1 < argc)
            threads = (unsigned)parse_num(argv[++i]);
        else if (!strcmp(a, "--live"))
            cfg.live = true;
        else if (!strcmp(a, "--release"))
            cfg.release = true;
        else if (!strcmp(a, "--cache-stacks"))
            cache_stacks = true;
        else if (!strcmp(a, "--no-value-cache"))
            no_value_cache = true;
        else if (!strcmp(a, "--types"))
            print_types = true;
        else if (!strcmp(a, "--frames") && i + 1 < argc) {
            const char *f = argv[++i];
            if (!strcmp(f, "iter"))
                frames_iter = true;
            else if (!strcmp(f, "helper"))
                frames_one = true;
            else if (strcmp(f, "batch"))
                usage();
        } else if (!strcmp(a, "--iter-copy")) {
            iter_copy = true;
        } else if (a[0] == '-' && a[1] == '-')
            usage();
        else if (!path)
            path = a;
        else
            usage();
    }
    if (!mode_s || !path)
        usage();

    bench b;
    memset(&b, 0, sizeof b);
    b.frames_iter = frames_iter;
    b.frames_one = frames_one;
    b.iter_copy = iter_copy;
    b.cache_stacks = cache_stacks;
    if (!strcmp(mode_s, "walk"))
        b.mode = M_WALK;
    else if (!strcmp(mode_s, "all"))
        b.mode = M_ALL;
    else if (!strcmp(mode_s, "stream"))
        b.mode = M_STREAM;
    else if (!strncmp(mode_s, "type:", 5) && mode_s[5]) {
        b.mode = M_TYPE;
        b.type_name = mode_s + 5;
    } else if (!strncmp(mode_s, "field:", 6)) {
        static char tname[512];
        const char *dot = strrchr(mode_s + 6, '.');
        size_t tl = dot ? (size_t)(dot - (mode_s + 6)) : 0;
        if (!tl || !dot[1] || tl >= sizeof tname)
            usage();
        memcpy(tname, mode_s + 6, tl);
        tname[tl] = 0;
        b.mode = M_FIELD;
        b.type_name = tname;
        b.field_name = dot + 1;
    } else
        usage();
    b.slots = calloc(NSLOTS, sizeof *b.slots);
    if (!b.slots)
        die("%s", "out of memory");

    input in = {path, -1, !strcmp(path, "-"), NULL, 0};
    cfg.use_read = b.mode == M_STREAM || cfg.live || in.is_stdin;
    if (in.is_stdin) {
        in.fd = 0;
        if (repeat > 1 || cfg.loops > 1) {
            fprintf(stderr, "jfrbench: stdin: one run, one loop\n");
            repeat = 1;
            cfg.loops = 1;
        }
    } else {
        in.fd = open(path, O_RDONLY);
        if (in.fd < 0)
            die("cannot open %s", path);
        struct stat stt;
        if (fstat(in.fd, &stt) != 0)
            die("cannot stat %s", path);
        in.size = (size_t)stt.st_size;
    }
    if (cfg.use_read) {
        cfg.slice = chunk_bytes ? chunk_bytes : 65536;
    } else {
        cfg.slice = chunk_bytes;
        if (in.size == 0)
            die("%s is empty", path);
        /* --release maps lazily: pages come in chunk by chunk, and leave */
        void *m = mmap(NULL, in.size, PROT_READ, MAP_PRIVATE | (cfg.release ? 0 : MAP_POPULATE),
                       in.fd, 0);
        if (m == MAP_FAILED)
            die("mmap: %s", strerror(errno));
        in.map = m;
        /* warm-up: every page resident and mapped before any timing */
        volatile uint8_t sink = 0;
        for (size_t off = 0; !cfg.release && off < in.size; off += 4096)
            sink ^= in.map[off];
        (void)sink;
    }
    uint8_t *buf = malloc(cfg.use_read ? cfg.slice : 1);
    if (!buf)
        die("%s", "out of memory");

    jfr_callbacks cb;
    jfr_callbacks_init(&cb);
    cb.on_metadata = on_metadata;
    if (cache_stacks)
        cb.on_chunk_begin = on_chunk_begin;
    switch (b.mode) {
    case M_WALK:
        cb.on_record = on_record_count;
        break;
    case M_TYPE:
    case M_FIELD:
        break;
    case M_ALL:
        cb.on_event = on_event_all;
        break;
    case M_STREAM:
        cb.on_record = on_record_count;
        cb.on_event = on_event_count;
        break;
    }

    heap_stat heap = {0, 0};
    jfr_options opt;
    jfr_options_init(&opt);
    opt.allocator.alloc_fn = h_alloc;
    opt.allocator.realloc_fn = h_realloc;
    opt.allocator.free_fn = h_free;
    opt.allocator.ctx = &heap;
    if (threads > 1) /* the counting allocator is not thread-safe */
        memset(&opt.allocator, 0, sizeof opt.allocator);

    /* One untimed warm-up run (caches, branch predictors, page cache) unless
     * the input cannot be read twice; a warm-up run longer than 1 s counts
     * as the first timed run (nothing left to warm at that length). */
    double *wall = calloc(repeat, sizeof *wall), *cpu = calloc(repeat, sizeof *cpu);
    if (!wall || !cpu)
        die("%s", "out of memory");
    uint64_t bytes = 0, events = 0, chunks = 0;
    bool warm = !in.is_stdin;
    for (unsigned r = 0; r < repeat;) {
        b.events = b.records = b.frames = b.cache_hits = 0;
        for (size_t i = 0; i < NSLOTS; i++)
            b.slots[i].n = 0;
        memset(b.direct, 0, sizeof b.direct);
        double c0 = cpu_now(), t0 = now();
        jfr_parser *p = jfr_parser_new(&opt, &cb, &b);
        if (!p)
            die("%s", "jfr_parser_new failed");
        if (jfr_parser_set_threads(p, threads) != JFR_OK)
            die("%s", "jfr_parser_set_threads failed");
        if (no_value_cache && jfr_parser_set_value_cache(p, false) != JFR_OK)
            die("%s", "jfr_parser_set_value_cache failed");
        if (b.mode == M_TYPE && jfr_parser_on(p, b.type_name, on_type, &b) != JFR_OK)
            die("%s", "jfr_parser_on failed");
        if (b.mode == M_FIELD && jfr_parser_on(p, b.type_name, on_field, &b) != JFR_OK)
            die("%s", "jfr_parser_on failed");
        uint64_t n = run_once(&in, &cfg, p, buf);
        jfr_status s = n ? jfr_parser_finish(p) : jfr_parser_status(p);
        double t1 = now(), c1 = cpu_now();
        if (!n || s != JFR_OK) {
            fprintf(stderr, "jfrbench: %s\n", jfr_parser_error(p));
            return 1;
        }
        chunks = jfr_parser_chunks(p);
        jfr_parser_free(p);
        bytes = n;
        events = b.events;
        if (warm) {
            warm = false;
            if (t1 - t0 < 1.0)
                continue;
        }
        wall[r] = t1 - t0;
        cpu[r] = c1 - c0;
        r++;
    }
    double med = median(wall, repeat), cmed = median(cpu, repeat);

    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("mode=%s file=%s bytes=%llu chunks=%llu loops=%u live=%d slice=%zu runs=%u "
           "min_s=%.4f median_s=%.4f max_s=%.4f\n",
           mode_s, path, (unsigned long long)bytes, (unsigned long long)chunks, cfg.loops,
           cfg.live, cfg.slice, repeat, wall[0], med, wall[repeat - 1]);
    printf("cpu_median_s=%.4f cpu_MB/s=%.1f\n", cmed, (double)bytes / cmed / 1e6);
    printf("rss_kb=%ld heap_peak_kb=%zu records=%llu frames=%llu stack_cache_hits=%llu "
           "errors=%llu hash=%016llx\n",
           ru.ru_maxrss, heap.peak / 1024, (unsigned long long)b.records,
           (unsigned long long)b.frames, (unsigned long long)b.cache_hits,
           (unsigned long long)b.errors, (unsigned long long)b.hash);
    if (print_types) {
        for (uint64_t id = 0; id < 4096; id++)
            if (b.direct[id])
                count_id_n(&b, id, b.direct[id]);
        qsort(b.slots, NSLOTS, sizeof *b.slots, cmp_slot);
        for (size_t i = 0; i < NSLOTS && b.slots[i].n; i++)
            printf("type_id=%llu count=%llu\n", (unsigned long long)b.slots[i].id,
                   (unsigned long long)b.slots[i].n);
    }
    printf("MB/s=%.1f events/s=%.0f events=%llu\n", (double)bytes / med / 1e6,
           (double)events / med, (unsigned long long)events);
    free(wall);
    free(cpu);
    free(b.cache);
    free(buf);
    free(b.slots);
    if (in.map)
        munmap((void *)in.map, in.size);
    if (in.fd > 0)
        close(in.fd);
    return b.errors ? 1 : 0;
}
