/*
 * cmd_scrub.c — `jfrstream scrub`, `disassemble` and `assemble`, as JDK 25's
 * `jfr scrub`, `jfr disassemble` and `jfr assemble`: their arguments,
 * checks, messages and output files. scrub writes through the library's
 * chunk writer (jfrstream.h); the other two move whole chunks and files.
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#include "args.h"
#include "commands.h"
#include "filter.h"
#include "frontend.h"
#include "outfile.h"
#include "report.h"
#include "usage.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static bool ends_with(const char *s, const char *suffix) {
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

static void out_printf(const char *fmt, ...) CLI_PRINTF(1, 2);
static void out_printf(const char *fmt, ...) {
    char buf[PATH_MAX + 256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n > 0)
        jfrc_out_write(cli_out, buf, (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1);
}

/* snprintf into a path buffer: false when it does not fit. */
static bool fmt_path(char *out, size_t cap, const char *fmt, ...) CLI_PRINTF(3, 4);
static bool fmt_path(char *out, size_t cap, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(out, cap, fmt, ap);
    va_end(ap);
    return n >= 0 && (size_t)n < cap;
}

/* An absolute form of path (as Java's toAbsolutePath: the working folder
 * joined, nothing resolved). */
static void absolute(const char *path, char *out, size_t cap) {
    char cwd[PATH_MAX];
    if (path[0] == '/' || !getcwd(cwd, sizeof cwd))
        snprintf(out, cap, "%s", path);
    else
        fmt_path(out, cap, "%s/%s", cwd, path);
}

/* ------------------------------------------------------------------ scrub */

/* A key -> value map (values 1..UINT32_MAX; 0: absent): the decisions the
 * JDK's filters cache per filter for the whole file (by event type id, by
 * thread id: 1 false, 2 true), and the removed table's row of each type id.
 * Bounded: past CACHE_MAX keys a filter decides again each time. */
#define CACHE_MAX (1u << 20)
typedef struct dcache {
    uint64_t *keys;
    uint32_t *val;
    size_t cap, n;
} dcache;

static uint32_t dmap_get(const dcache *c, uint64_t k) {
    if (!c->cap)
        return 0;
    for (size_t i = (size_t)(k * 0x9E3779B97F4A7C15ull) & (c->cap - 1);; i = (i + 1) & (c->cap - 1)) {
        if (!c->val[i] || c->keys[i] == k)
            return c->val[i];
    }
}

/* False when full or out of memory (the key is then not stored). */
static bool dmap_put(dcache *c, uint64_t k, uint32_t v) {
    if (c->n + 1 > c->cap / 2) {
        if (c->cap >= 2 * (size_t)CACHE_MAX)
            return false;
        size_t ncap = c->cap ? c->cap * 2 : 64;
        uint64_t *nk = calloc(ncap, sizeof *nk);
        uint32_t *nv = calloc(ncap, sizeof *nv);
        if (!nk || !nv) {
            free(nk);
            free(nv);
            return false;
        }
        dcache old = *c;
        *c = (dcache){nk, nv, ncap, 0};
        for (size_t i = 0; i < old.cap; i++)
            if (old.val[i])
                dmap_put(c, old.keys[i], old.val[i]);
        free(old.keys);
        free(old.val);
    }
    size_t i = (size_t)(k * 0x9E3779B97F4A7C15ull) & (c->cap - 1);
    while (c->val[i] && c->keys[i] != k)
        i = (i + 1) & (c->cap - 1);
    if (!c->val[i])
        c->n++;
    c->keys[i] = k;
    c->val[i] = v;
    return true;
}

static int dcache_get(const dcache *c, uint64_t k) {
    uint32_t v = dmap_get(c, k);
    return v ? v == 2 : -1;
}

static void dcache_put(dcache *c, uint64_t k, bool v) { (void)dmap_put(c, k, v ? 2 : 1); }

enum sf_kind { SF_EVENTS, SF_CATEGORIES, SF_THREADS };

typedef struct scrub_filter {
    enum sf_kind kind;
    bool exclude;
    const char *option; /* as given, for the warning */
    const char *text;
    cli_filter f;       /* events/categories: its patterns */
    char **threads;     /* threads: its patterns */
    size_t nthreads;
    dcache cache;
    bool matched;       /* a type of the file matched (events, categories) */
} scrub_filter;

typedef struct removed_row {
    uint64_t id;
    char *name;
    uint64_t count, removed;
} removed_row;

typedef struct scrub_ctx {
    scrub_filter *filters;
    size_t nfilters;
    const char *in, *out;
    int nops;
    cli_outfile file;
    jfr_writer *w;
    bool failed;
    /* per chunk: per type index, the type filters' verdict (0 drop, 1 keep)
     * and the eventThread field index */
    uint8_t *keep;
    int32_t *thread_field;
    size_t ntypes;
    /* per event type id: its row of the removed table */
    removed_row *rows;
    size_t nrows, caprows;
    dcache row_by_id;  /* type id -> 1 + row */
    uint32_t *row_of; /* per type index: 1 + row */
    char *name_buf;
    size_t name_cap;
} scrub_ctx;

static bool sf_type_match(scrub_filter *sf, const jfr_type *t) {
    int v = dcache_get(&sf->cache, t->id);
    if (v < 0) {
        v = cli_filter_match(&sf->f, t);
        dcache_put(&sf->cache, t->id, v);
    }
    return v;
}

static int write_chunk(void *user, const void *buf, size_t len) {
    scrub_ctx *x = user;
    const uint8_t *b = buf;
    while (len) {
        ssize_t n = write(x->file.fd, b, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            cli_error("%s: %s", x->out, strerror(errno));
            return -1;
        }
        b += n;
        len -= (size_t)n;
    }
    return 0;
}

static int writer_failed(jfr_parser *p, scrub_ctx *x, jfr_status s) {
    (void)p;
    if (s != JFR_IO)
        cli_input_error("%s", jfr_writer_error(x->w));
    x->failed = true;
    return JFR_CB_STOP;
}

static int on_chunk_begin(jfr_parser *p, const jfr_chunk_info *c, void *user) {
    scrub_ctx *x = user;
    jfr_status s = jfr_writer_begin(x->w, p, c);
    return s ? writer_failed(p, x, s) : JFR_CB_CONTINUE;
}

static int on_chunk_end(jfr_parser *p, const jfr_chunk_info *c, void *user) {
    scrub_ctx *x = user;
    jfr_status s = jfr_writer_end(x->w, p, c);
    return s ? writer_failed(p, x, s) : JFR_CB_CONTINUE;
}

static removed_row *row_for(scrub_ctx *x, const jfr_type *t) {
    uint32_t r = dmap_get(&x->row_by_id, t->id);
    if (r)
        return &x->rows[r - 1];
    if (x->nrows >= UINT32_MAX - 1)
        return NULL;
    if (x->nrows == x->caprows) {
        size_t ncap = x->caprows ? 2 * x->caprows : 32;
        removed_row *nr = realloc(x->rows, ncap * sizeof *nr);
        if (!nr)
            return NULL;
        x->rows = nr;
        x->caprows = ncap;
    }
    char *name = strdup(t->name);
    if (!name)
        return NULL;
    if (!dmap_put(&x->row_by_id, t->id, (uint32_t)x->nrows + 1)) {
        free(name);
        return NULL;
    }
    x->rows[x->nrows] = (removed_row){t->id, name, 0, 0};
    return &x->rows[x->nrows++];
}

static int on_metadata(jfr_parser *p, const jfr_metadata *m, void *user) {
    (void)p;
    scrub_ctx *x = user;
    if (m->ntypes > x->ntypes) {
        uint8_t *k = realloc(x->keep, m->ntypes);
        int32_t *tf = k ? realloc(x->thread_field, m->ntypes * sizeof *tf) : NULL;
        uint32_t *ro = tf ? realloc(x->row_of, m->ntypes * sizeof *ro) : NULL;
        if (k)
            x->keep = k;
        if (tf)
            x->thread_field = tf;
        if (ro)
            x->row_of = ro;
        if (!ro) {
            cli_error("out of memory");
            x->failed = true;
            return JFR_CB_STOP;
        }
        x->ntypes = m->ntypes;
    }
    for (uint32_t i = 0; i < m->ntypes; i++) {
        const jfr_type *t = m->types[i];
        bool keep = true;
        x->thread_field[i] = jfr_type_field_index(t, "eventThread");
        x->row_of[i] = 0;
        if (!t->is_event)
            continue;
        for (size_t j = 0; j < x->nfilters; j++) {
            scrub_filter *sf = &x->filters[j];
            if (sf->kind == SF_THREADS)
                continue;
            bool hit = cli_filter_match(&sf->f, t);
            sf->matched |= hit;
            if (sf_type_match(sf, t) == sf->exclude)
                keep = false;
        }
        x->keep[i] = keep;
        removed_row *r = row_for(x, t);
        if (!r) {
            cli_error("out of memory");
            x->failed = true;
            return JFR_CB_STOP;
        }
        x->row_of[i] = (uint32_t)(r - x->rows) + 1;
    }
    return JFR_CB_CONTINUE;
}

static int on_record(jfr_parser *p, const jfr_record *r, void *user) {
    scrub_ctx *x = user;
    if (r->type_id > 1) /* events: on_event; unknown types are dropped, as by the JDK */
        return JFR_CB_CONTINUE;
    jfr_status s = jfr_writer_record(x->w, p, r);
    return s ? writer_failed(p, x, s) : JFR_CB_CONTINUE;
}

/* The JDK's thread filters: the event's eventThread and its javaName; an
 * event without them matches no thread filter. */
static bool thread_match(scrub_ctx *x, scrub_filter *sf, const jfr_event *e) {
    int32_t fi = x->thread_field[e->type->index];
    jfr_value v;
    if (fi < 0 || jfr_event_field(e, (uint32_t)fi, &v) || v.kind != JFR_KIND_OBJECT)
        return false;
    int c = v.pooled ? dcache_get(&sf->cache, v.key) : -1;
    if (c >= 0)
        return c;
    jfr_thread th;
    if (jfr_value_thread(&v, &th) || !th.present || !th.java_name)
        return false; /* null javaName: no match (and not cached: the JDK tests it first) */
    if (th.java_name_len + 1 > x->name_cap) {
        char *nb = realloc(x->name_buf, th.java_name_len + 1);
        if (!nb)
            return false;
        x->name_buf = nb;
        x->name_cap = th.java_name_len + 1;
    }
    memcpy(x->name_buf, th.java_name, th.java_name_len);
    x->name_buf[th.java_name_len] = 0;
    bool m = false;
    for (size_t i = 0; i < sf->nthreads && !m; i++)
        m = cli_glob_match(x->name_buf, sf->threads[i]);
    if (v.pooled)
        dcache_put(&sf->cache, v.key, m);
    return m;
}

static int on_event(jfr_parser *p, const jfr_event *e, void *user) {
    (void)p;
    scrub_ctx *x = user;
    uint32_t ti = e->type->index;
    if (ti >= x->ntypes || !x->row_of[ti])
        return JFR_CB_CONTINUE;
    removed_row *row = &x->rows[x->row_of[ti] - 1];
    row->count++;
    bool keep = x->keep[ti];
    for (size_t j = 0; j < x->nfilters && keep; j++) {
        scrub_filter *sf = &x->filters[j];
        if (sf->kind != SF_THREADS)
            continue;
        bool m = thread_match(x, sf, e);
        keep = sf->exclude ? !m : m;
    }
    if (!keep) {
        row->removed++;
        return JFR_CB_CONTINUE;
    }
    jfr_status s = jfr_writer_event(x->w, e);
    return s ? writer_failed(p, x, s) : JFR_CB_CONTINUE;
}

static int scrub_arg(void *ctx, const cli_arg *a) {
    scrub_ctx *x = ctx;
    if (!a->opt) {
        if (x->nops == 2)
            return cli_usage_error("scrub: too many arguments");
        if (x->nops == 0)
            x->in = a->as;
        else
            x->out = a->as;
        x->nops++;
        return CLI_EXIT_OK;
    }
    if (!a->value || strncmp(a->value, "--", 2) == 0)
        return cli_usage_error("scrub: missing filter after %s", a->as);
    scrub_filter *nf = realloc(x->filters, (x->nfilters + 1) * sizeof *nf);
    if (!nf) {
        cli_error("out of memory");
        return CLI_EXIT_ERROR;
    }
    x->filters = nf;
    scrub_filter *sf = &nf[x->nfilters++];
    memset(sf, 0, sizeof *sf);
    sf->option = a->as;
    sf->text = a->value;
    switch (a->opt->key) {
    case OPT_INCLUDE_EVENTS: case OPT_EXCLUDE_EVENTS:
        sf->kind = SF_EVENTS;
        break;
    case OPT_INCLUDE_CATEGORIES: case OPT_EXCLUDE_CATEGORIES:
        sf->kind = SF_CATEGORIES;
        break;
    default:
        sf->kind = SF_THREADS;
        break;
    }
    sf->exclude = a->opt->key == OPT_EXCLUDE_EVENTS || a->opt->key == OPT_EXCLUDE_CATEGORIES ||
                  a->opt->key == OPT_EXCLUDE_THREADS;
    /* Users should quote their wildcards: the JDK refuses a filter that
     * names a file of the working folder (or holds the path separator) */
    struct stat st;
    char here[PATH_MAX];
    fmt_path(here, sizeof here, "./%s", a->value);
    if (strchr(a->value, ':') || stat(here, &st) == 0) {
        cli_error("scrub: wildcards should be quoted, for example %s \"Foo*\"", a->as);
        return CLI_EXIT_ERROR;
    }
    if (sf->kind == SF_THREADS) {
        cli_filter tf = {0};
        if (!cli_filter_add(&tf, false, a->value)) {
            cli_error("out of memory");
            return CLI_EXIT_ERROR;
        }
        sf->threads = tf.events;
        sf->nthreads = tf.nevents;
    } else if (!cli_filter_add(&sf->f, sf->kind == SF_CATEGORIES, a->value)) {
        cli_error("out of memory");
        return CLI_EXIT_ERROR;
    }
    return CLI_EXIT_OK;
}

static int cmp_row(const void *a, const void *b) {
    return strcmp(((const removed_row *)a)->name, ((const removed_row *)b)->name);
}

static void scrub_report(scrub_ctx *x, const char *out_path) {
    char real[PATH_MAX];
    if (!realpath(out_path, real))
        absolute(out_path, real, sizeof real);
    out_printf("Scrubbed recording file written to:\n%s\n", real);
    size_t n = 0, wname = 0, wshare = 0;
    qsort(x->rows, x->nrows, sizeof *x->rows, cmp_row);
    for (size_t i = 0; i < x->nrows; i++) {
        removed_row *r = &x->rows[i];
        if (!r->removed)
            continue;
        char share[48];
        size_t sl = (size_t)snprintf(share, sizeof share, "%llu/%llu",
                                     (unsigned long long)r->removed,
                                     (unsigned long long)r->count);
        size_t nl = strlen(r->name);
        wname = nl > wname ? nl : wname;
        wshare = sl > wshare ? sl : wshare;
        n++;
    }
    if (!n) {
        out_printf("No events removed.\n");
        return;
    }
    out_printf("Removed events:\n");
    for (size_t i = 0; i < x->nrows; i++) {
        removed_row *r = &x->rows[i];
        if (!r->removed)
            continue;
        char share[48];
        snprintf(share, sizeof share, "%llu/%llu", (unsigned long long)r->removed,
                 (unsigned long long)r->count);
        out_printf("%-*s %*s\n", (int)wname, r->name, (int)wshare, share);
    }
}

static void scrub_free(scrub_ctx *x) {
    for (size_t i = 0; i < x->nfilters; i++) {
        scrub_filter *sf = &x->filters[i];
        cli_filter_free(&sf->f);
        cli_filter tf = {.events = sf->threads, .nevents = sf->nthreads, .has_events = true};
        cli_filter_free(&tf);
        free(sf->cache.keys);
        free(sf->cache.val);
    }
    free(x->filters);
    for (size_t i = 0; i < x->nrows; i++)
        free(x->rows[i].name);
    free(x->rows);
    free(x->row_by_id.keys);
    free(x->row_by_id.val);
    free(x->keep);
    free(x->thread_field);
    free(x->row_of);
    free(x->name_buf);
    jfr_writer_free(x->w);
}

int cmd_scrub(const cli_command *c, cli_global *g, int argc, char **argv) {
    scrub_ctx x = {0};
    x.file.fd = -1;
    int r = cli_args(c, g, argc, argv, scrub_arg, &x);
    char defout[PATH_MAX];
    if (r != CLI_ARGS_RUN)
        goto done;
    r = CLI_EXIT_ERROR;
    if (x.nops == 0) {
        r = cli_usage_error("scrub: too few arguments");
        goto done;
    }
    const char *last = x.nops == 2 ? x.out : x.in;
    if (x.nops == 2 && !ends_with(x.in, ".jfr")) {
        r = cli_usage_error("scrub: unknown option %s", x.in);
        goto done;
    }
    if (!ends_with(last, ".jfr")) {
        cli_error("scrub: filename must end with '.jfr'");
        goto done;
    }
    if (x.nops == 1) { /* IN-scrubbed.jfr beside IN */
        const char *slash = strrchr(x.in, '/');
        const char *base = slash ? slash + 1 : x.in;
        const char *dot = strrchr(base, '.');
        snprintf(defout, sizeof defout, "%.*s-scrubbed.jfr", (int)(dot - x.in), x.in);
        x.out = defout;
    }
    struct stat si, so;
    if (stat(x.out, &so) == 0 && stat(x.in, &si) == 0 && si.st_dev == so.st_dev &&
        si.st_ino == so.st_ino) {
        char abs[PATH_MAX];
        absolute(x.in, abs, sizeof abs);
        r = cli_usage_error("scrub: output file can't be same as input file %s", abs);
        goto done;
    }
    jfr_writer_config wc = JFR_WRITER_CONFIG_INIT;
    wc.write = write_chunk;
    wc.user = &x;
    x.w = jfr_writer_new(&wc);
    if (!x.w) {
        cli_error("out of memory");
        goto done;
    }
    if (cli_outfile_open(&x.file, x.out) < 0)
        goto done;
    jfr_callbacks cb = {.size = sizeof cb, .on_chunk_begin = on_chunk_begin,
                        .on_metadata = on_metadata, .on_record = on_record,
                        .on_event = on_event, .on_chunk_end = on_chunk_end,
                        .on_error = cli_on_error};
    r = cli_parse(g, x.in, NULL, &cb, &x, NULL);
    if (r == CLI_EXIT_OK && x.failed)
        r = CLI_EXIT_ERROR;
    if (r == CLI_EXIT_OK && jfr_writer_chunks(x.w) == 0) {
        cli_error("%s: no complete chunk", x.in);
        r = CLI_EXIT_ERROR;
    }
    if (r != CLI_EXIT_OK) {
        cli_outfile_abort(&x.file);
        goto done;
    }
    if (!cli_outfile_commit(&x.file)) {
        r = CLI_EXIT_ERROR;
        goto done;
    }
    for (size_t i = 0; i < x.nfilters; i++) {
        scrub_filter *sf = &x.filters[i];
        if (sf->kind != SF_THREADS && !sf->matched && x.nrows)
            out_printf("Warning, no event type matched %sfilter: %s\n",
                       sf->kind == SF_CATEGORIES ? "category " : "", sf->text);
    }
    scrub_report(&x, x.out);
done:
    scrub_free(&x);
    return r;
}

/* ------------------------------------------------------------ disassemble */

typedef struct dis_args {
    const char *file, *output;
    const char *max_chunks, *max_size;
    int nops;
} dis_args;

static int dis_arg(void *ctx, const cli_arg *a) {
    dis_args *d = ctx;
    if (!a->opt) {
        if (d->nops++)
            return cli_usage_error("disassemble: unknown option %s", d->file);
        d->file = a->as;
        return CLI_EXIT_OK;
    }
    if (!a->value)
        return cli_usage_error("disassemble: missing value after %s", a->as);
    if (a->opt->key == OPT_OUTPUT)
        d->output = a->value;
    else if (a->opt->key == OPT_MAX_CHUNKS)
        d->max_chunks = a->value;
    else
        d->max_size = a->value;
    return CLI_EXIT_OK;
}

/* Java's Integer.parseInt of a decimal (sign allowed), into *v. */
static bool parse_int(const char *s, long long *v) {
    char *end;
    errno = 0;
    long long n = strtoll(s, &end, 10);
    if (!*s || *end || errno || n < INT32_MIN || n > INT32_MAX || s[0] == ' ')
        return false;
    *v = n;
    return true;
}

static bool read_full(int fd, void *buf, size_t n, uint64_t at) {
    uint8_t *b = buf;
    while (n) {
        ssize_t k = pread(fd, b, n, (off_t)at);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return false;
        b += k;
        n -= (size_t)k;
        at += (uint64_t)k;
    }
    return true;
}

static bool copy_range(int in, int out, uint64_t at, uint64_t n) {
    static uint8_t buf[1 << 16];
    while (n) {
        size_t k = n < sizeof buf ? (size_t)n : sizeof buf;
        if (!read_full(in, buf, k, at))
            return false;
        for (size_t done = 0; done < k;) {
            ssize_t w = write(out, buf + done, k - done);
            if (w < 0 && errno == EINTR)
                continue;
            if (w <= 0)
                return false;
            done += (size_t)w;
        }
        at += k;
        n -= k;
    }
    return true;
}

int cmd_disassemble(const cli_command *c, cli_global *g, int argc, char **argv) {
    dis_args d = {0};
    int r = cli_args(c, g, argc, argv, dis_arg, &d);
    if (r != CLI_ARGS_RUN)
        return r;
    if (!d.file)
        return cli_usage_error("disassemble: missing file");
    char abs[PATH_MAX];
    absolute(d.file, abs, sizeof abs);
    int fd = open(d.file, O_RDONLY);
    struct stat st;
    if (fd < 0) {
        cli_error("disassemble: could not open file %s: %s", abs, strerror(errno));
        return CLI_EXIT_ERROR;
    }
    if (fstat(fd, &st) != 0 || st.st_size == 0) {
        cli_error("disassemble: file is empty '%s'", abs);
        close(fd);
        return CLI_EXIT_ERROR;
    }
    r = CLI_EXIT_ERROR;
    uint64_t *sizes = NULL, *parts = NULL;
    size_t nsizes = 0, nparts = 0;
    long long max_chunks = INT32_MAX, max_size = INT32_MAX;
    if (!ends_with(abs, ".jfr")) {
        cli_error("disassemble: filename must end with '.jfr'");
        goto out;
    }
    if (d.max_size && (!parse_int(d.max_size, &max_size) || max_size < 1)) {
        cli_error("disassemble: %s", parse_int(d.max_size, &max_size)
                                         ? "max size must be at least 1"
                                         : "not a valid value for --max-size.");
        goto out;
    }
    if (d.max_chunks && (!parse_int(d.max_chunks, &max_chunks) || max_chunks < 1)) {
        cli_error("disassemble: %s", parse_int(d.max_chunks, &max_chunks)
                                         ? "max chunks must be at least 1."
                                         : "not a valid value for --max-size.");
        goto out;
    }
    char dir[PATH_MAX];
    if (d.output)
        absolute(d.output, dir, sizeof dir);
    else if (!getcwd(dir, sizeof dir))
        snprintf(dir, sizeof dir, ".");
    struct stat sd;
    if (stat(dir, &sd) != 0) {
        cli_error("disassemble: directory does not exist, %s", d.output ? d.output : dir);
        goto out;
    }
    if (!S_ISDIR(sd.st_mode)) {
        cli_error("disassemble: path must be directory, %s", d.output ? d.output : dir);
        goto out;
    }
    out_printf("\nExamining recording %s ...\n", abs);
    uint64_t fsize = (uint64_t)st.st_size;
    if (max_size != INT32_MAX && max_chunks == INT32_MAX && (uint64_t)max_size >= fsize) {
        out_printf("\nFile size (%llu) does not exceed max size (%lld)\n",
                   (unsigned long long)fsize, max_size);
        r = CLI_EXIT_OK;
        goto out;
    }
    if (max_size == INT32_MAX && max_chunks == INT32_MAX)
        max_chunks = 5;
    /* the chunks' sizes, header to header */
    size_t cap = 0;
    for (uint64_t at = 0; at < fsize;) {
        uint8_t h[68];
        uint64_t size;
        if (fsize - at < sizeof h || !read_full(fd, h, sizeof h, at) ||
            !(size = jfr_chunk_size_at(h, sizeof h)) || size < sizeof h ||
            size > fsize - at) {
            cli_error("%s: chunk %zu at byte %llu: not a complete chunk header or chunk", d.file,
                      nsizes, (unsigned long long)at);
            goto out;
        }
        if (nsizes == cap) {
            cap = cap ? 2 * cap : 64;
            uint64_t *ns = realloc(sizes, cap * sizeof *ns);
            if (!ns) {
                cli_error("out of memory");
                goto out;
            }
            sizes = ns;
        }
        sizes[nsizes++] = size;
        at += size;
    }
    if ((max_size == INT32_MAX) == (nsizes <= (uint64_t)max_chunks)) {
        cli_error("disassemble: number of chunks in recording (%zu) doesn't exceed max chunks "
                  "(%lld)", nsizes, max_chunks);
        goto out;
    }
    out_printf("\n");
    parts = malloc(nsizes * sizeof *parts);
    if (!parts) {
        cli_error("out of memory");
        goto out;
    }
    uint64_t fsz = sizes[0];
    long long chunks = 1;
    for (size_t i = 1; i < nsizes; i++) {
        if (fsz + sizes[i] > (uint64_t)max_size || chunks == max_chunks) {
            parts[nparts++] = fsz;
            chunks = 1;
            fsz = sizes[i];
            continue;
        }
        fsz += sizes[i];
        chunks++;
    }
    if (fsz)
        parts[nparts++] = fsz;
    out_printf("File consists of %zu chunks. The recording will be split into %zu files\n\n",
               nsizes, nparts);
    int pad = snprintf(NULL, 0, "%zu", nparts - 1);
    const char *slash = strrchr(d.file, '/');
    const char *base = slash ? slash + 1 : d.file;
    size_t stem = strlen(base) - 4;
    char path[PATH_MAX];
    for (size_t i = 0; i < nparts; i++) {
        fmt_path(path, sizeof path, "%s/%.*s_%0*zu.jfr", dir, (int)stem, base, pad, i);
        if (access(path, F_OK) == 0) {
            cli_error("disassemble: can't create disassembled file %s, a file with that name "
                      "already exist", path);
            goto out;
        }
    }
    uint64_t at = 0;
    for (size_t i = 0; i < nparts; i++) {
        fmt_path(path, sizeof path, "%s/%.*s_%0*zu.jfr", dir, (int)stem, base, pad, i);
        cli_outfile of;
        if (cli_outfile_open(&of, path) < 0)
            goto out;
        if (!copy_range(fd, of.fd, at, parts[i])) {
            cli_error("disassemble: i/o error writing file %s", abs);
            cli_outfile_abort(&of);
            goto out;
        }
        if (!cli_outfile_commit(&of))
            goto out;
        out_printf("Writing %s ... %llu\n", path, (unsigned long long)parts[i]);
        at += parts[i];
    }
    r = CLI_EXIT_OK;
out:
    free(sizes);
    free(parts);
    close(fd);
    return r;
}

/* --------------------------------------------------------------- assemble */

typedef struct asm_args {
    const char *ops[3];
    int nops;
} asm_args;

static int asm_arg(void *ctx, const cli_arg *a) {
    asm_args *x = ctx;
    if (x->nops < 3)
        x->ops[x->nops] = a->as;
    x->nops++;
    return CLI_EXIT_OK;
}

static int cmp_name(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int cmd_assemble(const cli_command *c, cli_global *g, int argc, char **argv) {
    asm_args x = {0};
    int r = cli_args(c, g, argc, argv, asm_arg, &x);
    if (r != CLI_ARGS_RUN)
        return r;
    if (x.nops < 2)
        return cli_usage_error("assemble: too few arguments");
    if (x.nops > 2)
        return cli_usage_error("assemble: too many arguments");
    char dir[PATH_MAX];
    absolute(x.ops[0], dir, sizeof dir);
    struct stat st;
    if (stat(dir, &st) != 0) {
        cli_error("assemble: directory does not exist, %s", x.ops[0]);
        return CLI_EXIT_ERROR;
    }
    if (!S_ISDIR(st.st_mode)) {
        cli_error("assemble: path must be directory, %s", x.ops[0]);
        return CLI_EXIT_ERROR;
    }
    const char *file = x.ops[1];
    if (access(file, F_OK) == 0) {
        cli_error("assemble: file '%s' already exists", file);
        return CLI_EXIT_ERROR;
    }
    if (!ends_with(file, ".jfr")) {
        cli_error("assemble: filename must end with '.jfr'");
        return CLI_EXIT_ERROR;
    }
    DIR *dp = opendir(dir);
    if (!dp) {
        cli_error("assemble: could not list *.jfr for directory %s. %s", dir, strerror(errno));
        return CLI_EXIT_ERROR;
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *de;
    r = CLI_EXIT_ERROR;
    while ((de = readdir(dp))) {
        char p[PATH_MAX];
        if (!ends_with(de->d_name, ".jfr"))
            continue;
        fmt_path(p, sizeof p, "%s/%s", dir, de->d_name);
        struct stat fs;
        if (stat(p, &fs) != 0 || S_ISDIR(fs.st_mode) || access(p, R_OK) != 0)
            continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 64;
            char **nn = realloc(names, cap * sizeof *nn);
            if (!nn)
                break;
            names = nn;
        }
        if (!(names[n] = strdup(de->d_name)))
            break;
        n++;
    }
    closedir(dp);
    cli_outfile of = {.fd = -1};
    if (!n) {
        cli_error("assemble: no *.jfr files found at %s", dir);
        goto out;
    }
    qsort(names, n, sizeof *names, cmp_name);
    if (cli_outfile_open(&of, file) < 0)
        goto out;
    out_printf("\nAssembling files... \n\n");
    for (size_t i = 0; i < n; i++) {
        char p[PATH_MAX];
        fmt_path(p, sizeof p, "%s/%s", dir, names[i]);
        out_printf(" %s\n", p);
        int fd = open(p, O_RDONLY);
        struct stat fs;
        bool ok = fd >= 0 && fstat(fd, &fs) == 0 && copy_range(fd, of.fd, 0, (uint64_t)fs.st_size);
        if (fd >= 0)
            close(fd);
        if (!ok) {
            cli_error("assemble: could not copy recording chunk %s to new file. %s", p,
                      strerror(errno));
            cli_outfile_abort(&of);
            goto out;
        }
    }
    if (!cli_outfile_commit(&of))
        goto out;
    out_printf("\nFinished.\n");
    r = CLI_EXIT_OK;
out:
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
    return r;
}
