/*
 * frontend.c — the file front end (see frontend.h): a regular file is
 * mapped and fed chunk by chunk (or in --feed-size slices), a pipe or a
 * compressed file is read through input.c; errors of the parser, of the
 * input and of the commands decide the exit status.
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#define JFRSTREAM_EXPERIMENTAL /* jfr_share, jfr_parser_prepare */
#include "frontend.h"
#include "input.h"
#include "progress.h"
#include "report.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define READ_BLOCK ((size_t)1 << 20) /* default read size: 1 MiB */
#define RANDOM_MAX 65536u            /* largest random feed slice */

/* -------------------------------------------------------------- input */

typedef struct slicer {
    cli_feed_mode mode;
    size_t fixed;
    uint64_t state; /* splitmix64 */
} slicer;

static uint64_t splitmix64(uint64_t *s) {
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static size_t next_slice(slicer *sl) {
    switch (sl->mode) {
    case CLI_FEED_FIXED:
        return sl->fixed;
    case CLI_FEED_RANDOM:
        return 1 + (size_t)(splitmix64(&sl->state) % RANDOM_MAX);
    default:
        return SIZE_MAX;
    }
}

#define SHARED_MAX 64 /* workers of a shared file at most */

struct cli_shared_file {
    int fd;
    uint8_t *map;
    size_t size;
    unsigned workers;
    atomic_uint joined;
    atomic_size_t populated; /* [0, populated): mapped in, or being */
    atomic_size_t released;  /* [0, released): released */
    atomic_size_t pos[SHARED_MAX]; /* each worker's bytes fed (SIZE_MAX: done) */
    jfr_share *share; /* the chunks' preparations (NULL: each worker its own) */
};

typedef struct feeder {
    jfr_parser *p;
    uint64_t cb_errors_at_start;
    bool error;   /* something was reported */
    bool stopped; /* no more feeding: stopped or fatal error */
    unsigned window; /* whole chunks per feed call of a mapped file */
} feeder;

static bool is_error(jfr_status s) {
    return s != JFR_OK && s != JFR_PAUSED && s != JFR_STOPPED;
}

/* A status returned by feed/finish: print it unless on_error already did. */
static void report(feeder *f, jfr_status s) {
    if (!is_error(s))
        return;
    f->error = true;
    uint64_t lib = jfr_parser_errors(f->p);
    uint64_t seen = cli_errors_parse() - f->cb_errors_at_start;
    if (lib > seen || seen == 0) {
        const char *m = jfr_parser_error(f->p);
        cli_input_error("%s", m && *m ? m : jfr_status_str(s));
        cli_count_error(); /* count it as reported */
    }
}

/* Feed one slice; resumes after JFR_PAUSED. */
static void feed(feeder *f, const uint8_t *buf, size_t len) {
    if (f->stopped)
        return;
    jfr_status s = jfr_parser_feed(f->p, buf, len);
    while (s == JFR_PAUSED) {
        size_t c = jfr_parser_consumed(f->p);
        if (c > len)
            c = len;
        buf += c;
        len -= c;
        s = jfr_parser_feed(f->p, buf, len);
    }
    if (s != JFR_OK) {
        f->stopped = true;
        report(f, s);
    }
}

static size_t page_size(void) {
    long pg = sysconf(_SC_PAGESIZE);
    return pg > 0 ? (size_t)pg : 4096;
}

/* Map [lo, hi) of data in at once (page-aligned down), rather than fault by
 * fault; with a shared file only the first worker to get there does it. */
static void populate(cli_shared_file *sf, const uint8_t *data, size_t lo, size_t hi) {
#ifdef MADV_POPULATE_READ
    if (sf) {
        size_t had = atomic_load_explicit(&sf->populated, memory_order_relaxed);
        do {
            if (had >= hi)
                return;
        } while (!atomic_compare_exchange_weak(&sf->populated, &had, hi));
        if (had > lo)
            lo = had;
    }
    size_t page = page_size(), from = lo / page * page;
    (void)madvise((void *)(uintptr_t)(data + from), hi - from, MADV_POPULATE_READ);
#else
    (void)sf;
    (void)data;
    (void)lo;
    (void)hi;
#endif
}

/* This feeder is `done` bytes in: release the whole pages before that (a
 * shared file: before the last of its workers). *released: own pages. */
static void release(cli_shared_file *sf, unsigned slot, const uint8_t *data, size_t done,
                    size_t *released) {
    size_t page = page_size();
    if (!sf) {
        size_t upto = done / page * page;
        if (upto > *released) {
            (void)madvise((void *)(uintptr_t)(data + *released), upto - *released,
                          MADV_DONTNEED);
            *released = upto;
        }
        return;
    }
    atomic_store_explicit(&sf->pos[slot], done, memory_order_relaxed);
    size_t low = SIZE_MAX;
    for (unsigned k = 0; k < sf->workers; k++) {
        size_t at = atomic_load_explicit(&sf->pos[k], memory_order_relaxed);
        low = at < low ? at : low;
    }
    if (low > sf->size)
        low = sf->size;
    size_t upto = low / page * page;
    size_t had = atomic_load_explicit(&sf->released, memory_order_relaxed);
    do {
        if (had >= upto)
            return;
    } while (!atomic_compare_exchange_weak(&sf->released, &had, upto));
    (void)madvise((void *)(uintptr_t)(data + had), upto - had, MADV_DONTNEED);
}

/* The size the chunk header at data + at declares when it fits in
 * [at, size) and is at least a header; 0 otherwise (damaged, or cut). */
static size_t chunk_extent(const uint8_t *data, size_t at, size_t size) {
    uint64_t k = jfr_chunk_size_at(data + at, size - at);
    return k >= 68 && k <= size - at ? (size_t)k : 0;
}

/* A shared file's chunks are indexed once between the workers (jfr_share):
 * before feeding the chunk [off, off + k) a worker prepares it, unless
 * another worker has or is at it; then it prepares the next chunk instead,
 * which the others reach next, rather than wait. */
static void prepare_ahead(feeder *f, cli_shared_file *sf, const uint8_t *data, size_t off,
                          size_t k, size_t size) {
    bool made = false;
    (void)jfr_parser_prepare(f->p, data + off, k, &made);
    size_t at = off + k;
    if (made || at >= size)
        return;
    size_t next = chunk_extent(data, at, size);
    if (!next)
        return;
    populate(sf, data, at, at + next);
    (void)jfr_parser_prepare(f->p, data + at, next, NULL);
}

static void feed_memory(feeder *f, slicer *sl, const uint8_t *data, size_t size,
                        cli_shared_file *sf) {
    size_t off = 0;
    if (sl->mode == CLI_FEED_DEFAULT) {
        /* one chunk per call, parsed in place; then its pages are dropped
         * from this process (they stay in the page cache), so resident
         * memory is about one chunk however large the file (a shared
         * file: from the first worker's chunk to the last one's) */
        unsigned slot = 0;
        if (sf)
            slot = atomic_fetch_add(&sf->joined, 1) % sf->workers;
        size_t released = 0;
        while (off < size && !f->stopped) {
            size_t k = chunk_extent(data, off, size);
            if (!k)
                k = size - off; /* damaged or last: the parser reports it */
            /* helper threads (cli_global.threads): as many whole chunks
             * per call, the parser prepares those after the first on them */
            for (unsigned w = 1; w < f->window && off + k < size; w++) {
                size_t more = chunk_extent(data, off + k, size);
                if (!more)
                    break;
                k += more;
            }
            populate(sf, data, off, off + k);
            if (sf && sf->share)
                prepare_ahead(f, sf, data, off, k, size);
            feed(f, data + off, k);
            off += k;
            cli_progress_update(off);
            release(sf, slot, data, off, &released);
        }
        if (sf) /* done: hold the others back no more */
            release(sf, slot, data, SIZE_MAX, &released);
        return;
    }
    while (off < size && !f->stopped) {
        size_t k = next_slice(sl);
        if (k > size - off)
            k = size - off;
        feed(f, data + off, k);
        off += k;
        cli_progress_update(off);
    }
}

/* Read the input to the end, feeding as the slicer says. Returns false on a
 * read or decompression error (reported). */
static bool feed_input(feeder *f, slicer *sl, cli_input *in) {
    size_t cap = READ_BLOCK;
    if (sl->mode == CLI_FEED_FIXED && sl->fixed > cap)
        cap = sl->fixed;
    uint8_t *buf = malloc(cap);
    if (!buf) {
        cli_error("out of memory");
        return false;
    }
    bool ok = true, eof = false;
    size_t have = 0;
    size_t want = sl->mode == CLI_FEED_DEFAULT ? 1 : next_slice(sl);
    while (!f->stopped) {
        /* fill the buffer up to one slice (default mode: one read) */
        while (have < want && !eof) {
            long n = cli_input_read(in, buf + have, cap - have);
            if (n < 0) {
                ok = false;
                eof = true;
                break;
            }
            if (n == 0)
                eof = true;
            have += (size_t)n;
            uint64_t done, total;
            cli_input_progress(in, &done, &total);
            cli_progress_update(done);
            if (sl->mode == CLI_FEED_DEFAULT)
                break;
        }
        size_t off = 0;
        if (sl->mode == CLI_FEED_DEFAULT) {
            feed(f, buf, have);
            off = have;
        } else {
            while (!f->stopped && (have - off >= want || (eof && off < have))) {
                size_t k = want < have - off ? want : have - off;
                feed(f, buf + off, k);
                off += k;
                want = next_slice(sl);
            }
        }
        memmove(buf, buf + off, have - off);
        have -= off;
        if (eof && have == 0)
            break;
    }
    /* the parser gave up: corrupt compressed data may be the cause */
    if (ok && !eof && f->error && !cli_input_check(in, buf, cap))
        ok = false;
    free(buf);
    return ok;
}

/* A parser with the command's options and callbacks, and the global
 * options; NULL on a failure (reported). */
static jfr_parser *new_parser(const cli_global *g, const jfr_options *opts,
                              const jfr_callbacks *cb, void *user, cli_setup_fn setup) {
    jfr_options o;
    if (opts)
        o = *opts;
    else
        jfr_options_init(&o);
    o.resync = g->resync;
    o.max_memory = g->max_memory;
    jfr_parser *p = jfr_parser_new(&o, cb, user);
    if (!p) {
        cli_error("out of memory");
        return NULL;
    }
    if (setup) {
        jfr_status s = setup(p, user);
        if (s) {
            cli_error("%s", jfr_status_str(s));
            jfr_parser_free(p);
            return NULL;
        }
    }
    return p;
}

/* An opened input and what its first bytes say. */
typedef struct source {
    int fd;
    bool is_stdin;
    const char *name;        /* for messages: the path or "<stdin>" */
    void *map;               /* a plain regular file, mapped; else MAP_FAILED */
    size_t map_size;
    cli_input_format fmt;
    uint8_t head[CLI_INPUT_HEAD]; /* a pipe's first bytes, fed afterwards */
    size_t nhead;
    bool usable;             /* a recording (or --resync): to be fed */
    cli_shared_file *shared; /* map is a parallel run's (not unmapped here) */
} source;

/* Map a regular file, or read a pipe's first bytes; recognise the format.
 * A compressed or unusable file is not left mapped. */
static void probe(source *src, const cli_global *g) {
    struct stat st;
    src->map = MAP_FAILED;
    src->map_size = 0;
    src->nhead = 0;
    src->shared = NULL;
    if (g->shared && !src->is_stdin &&
        cli_input_detect(g->shared->map, g->shared->size) == CLI_INPUT_PLAIN) {
        src->shared = g->shared; /* mapped once for the run */
        src->map = g->shared->map;
        src->map_size = g->shared->size;
        src->fmt = CLI_INPUT_PLAIN;
        src->usable =
            g->resync || cli_input_usable(src->fmt, src->map, src->map_size, src->name);
        return;
    }
    if (fstat(src->fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 &&
        (uint64_t)st.st_size <= SIZE_MAX) {
        src->map_size = (size_t)st.st_size;
        src->map = mmap(NULL, src->map_size, PROT_READ, MAP_PRIVATE, src->fd, 0);
    }
    if (src->map != MAP_FAILED) {
        src->fmt = cli_input_detect(src->map, src->map_size);
        /* --resync looks for a chunk after any garbage: no check of the start */
        src->usable =
            g->resync || cli_input_usable(src->fmt, src->map, src->map_size, src->name);
        if (src->fmt != CLI_INPUT_PLAIN || !src->usable) { /* compressed: read through the decoder */
            munmap(src->map, src->map_size);
            src->map = MAP_FAILED;
        }
        return;
    }
    /* a pipe: its first bytes say the format, and are fed afterwards */
    while (src->nhead < sizeof src->head) {
        ssize_t n = read(src->fd, src->head + src->nhead, sizeof src->head - src->nhead);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break; /* a read error shows again at the next read */
        src->nhead += (size_t)n;
    }
    src->fmt = cli_input_detect(src->head, src->nhead);
    src->usable = g->resync || cli_input_usable(src->fmt, src->head, src->nhead, src->name);
}

/* Feed the whole input: from the mapping, or read (and decompressed)
 * through input.c. False on a read or decompression error (reported). */
static bool feed_source(feeder *f, slicer *sl, source *src) {
    bool read_ok = true;
    if (!src->usable) {
        read_ok = false;
    } else if (src->map != MAP_FAILED) {
        if (!src->shared)
            (void)madvise(src->map, src->map_size, MADV_SEQUENTIAL);
        cli_progress_begin(src->name, src->map_size);
        feed_memory(f, sl, src->map, src->map_size, src->shared);
    } else {
        cli_input *in = cli_input_open(src->fmt, src->fd, src->name, src->head, src->nhead);
        if (in) {
            uint64_t done, total;
            cli_input_progress(in, &done, &total);
            cli_progress_begin(src->name, total);
            read_ok = feed_input(f, sl, in);
            cli_input_close(in);
        } else {
            read_ok = false;
        }
    }
    cli_progress_end();
    return read_ok;
}

int cli_parse(const cli_global *g, const char *path, const jfr_options *opts,
              const jfr_callbacks *cb, void *user, cli_setup_fn setup) {
    uint64_t cb_errors_at_start = cli_errors_parse();
    uint64_t data_errors_at_start = cli_errors_data();
    jfr_parser *p = new_parser(g, opts, cb, user, setup);
    if (!p)
        return CLI_EXIT_ERROR;
    feeder f = {p, cb_errors_at_start, false, false, 1};
    source src;
    src.is_stdin = strcmp(path, "-") == 0;
    src.fd = src.is_stdin ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC);
    if (src.fd < 0) {
        cli_error("%s: %s", path, strerror(errno));
        jfr_parser_free(p);
        return CLI_EXIT_ERROR;
    }
    src.name = src.is_stdin ? "<stdin>" : path;
    cli_report_input(src.name); /* the parser's messages name it */
    slicer sl = {g->feed_mode, g->feed_size, g->seed};
    probe(&src, g);
    if (src.shared && src.shared->share && sl.mode == CLI_FEED_DEFAULT)
        (void)jfr_parser_set_share(p, src.shared->share);
    if (g->threads > 1 && src.map != MAP_FAILED && !src.shared && sl.mode == CLI_FEED_DEFAULT &&
        jfr_parser_set_threads(p, g->threads) == JFR_OK)
        f.window = g->threads + 1; /* what the parser prepares at once */
    if (!feed_source(&f, &sl, &src))
        f.error = true;
    /* always finish: it reports a truncated last chunk */
    jfr_status s = jfr_parser_finish(p);
    if (!f.stopped)
        report(&f, s);
    if (src.map != MAP_FAILED && !src.shared)
        munmap(src.map, src.map_size);
    if (!src.is_stdin)
        close(src.fd);
    if (!f.error && jfr_parser_bytes(p) == 0 && jfr_parser_chunks(p) == 0) {
        cli_input_error("chunk 0 at byte 0: empty input, no JFR chunk");
        f.error = true;
    }
    cli_report_input(NULL);
    if (cli_errors_parse() > f.cb_errors_at_start || cli_errors_data() > data_errors_at_start)
        f.error = true;
    jfr_parser_free(p);
    return f.error ? CLI_EXIT_ERROR : CLI_EXIT_OK;
}

unsigned cli_jobs(const cli_global *g, const char *path, uint64_t *size) {
    if (g->jobs == 1 || g->feed_mode != CLI_FEED_DEFAULT || strcmp(path, "-") == 0)
        return 1;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 1;
    struct stat st;
    unsigned char magic[4] = {0};
    bool plain = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
                 pread(fd, magic, 4, 0) == 4 && memcmp(magic, "FLR", 4) == 0;
    close(fd);
    if (!plain)
        return 1;
    *size = (uint64_t)st.st_size;
    if (g->jobs)
        return g->jobs;
    if (g->max_memory || *size < CLI_JOBS_MIN_SIZE)
        return 1;
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > 8 ? 8 : (unsigned)n;
}

cli_shared_file *cli_shared_file_open(const char *path, unsigned workers, bool share) {
    if (workers == 0 || workers > SHARED_MAX || strcmp(path, "-") == 0)
        return NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0 ||
        (uint64_t)st.st_size > SIZE_MAX) {
        close(fd);
        return NULL;
    }
    cli_shared_file *sf = calloc(1, sizeof *sf);
    void *map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (!sf || map == MAP_FAILED) {
        if (map != MAP_FAILED)
            munmap(map, (size_t)st.st_size);
        free(sf);
        close(fd);
        return NULL;
    }
    (void)madvise(map, (size_t)st.st_size, MADV_SEQUENTIAL);
    if (share) /* NULL: each worker prepares every chunk itself */
        sf->share = jfr_share_new(NULL, workers, workers + 2);
    sf->fd = fd;
    sf->map = map;
    sf->size = (size_t)st.st_size;
    sf->workers = workers;
    atomic_init(&sf->joined, 0);
    atomic_init(&sf->populated, 0);
    atomic_init(&sf->released, 0);
    for (unsigned k = 0; k < SHARED_MAX; k++)
        atomic_init(&sf->pos[k], 0);
    return sf;
}

void cli_shared_file_close(cli_shared_file *sf) {
    if (!sf)
        return;
    munmap(sf->map, sf->size);
    close(sf->fd);
    /* JFRSTREAM_SHARE_STATS=1: say how the chunks were prepared (a test aid) */
    const char *st = getenv("JFRSTREAM_SHARE_STATS");
    if (st && strcmp(st, "1") == 0 && sf->share) {
        uint64_t prepared = 0, adopted = 0;
        jfr_share_stats(sf->share, &prepared, &adopted);
        fprintf(stderr, "jfrstream: %u %s, %llu %s prepared, %llu %s copied\n", sf->workers,
                cli_noun(sf->workers, "worker", "workers"), (unsigned long long)prepared,
                cli_noun(prepared, "chunk", "chunks"), (unsigned long long)adopted,
                cli_noun(adopted, "preparation", "preparations"));
    }
    jfr_share_free(sf->share);
    free(sf);
}
