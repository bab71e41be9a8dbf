/* jfr_parser_set_threads: the callback transcript (every callback and its
 * arguments, every value of every event read through jfr_iter, every stack
 * frame through jfr_stack_frame) must be byte-identical with threads = 1, 2,
 * 3 and 8: ordered or not, with on_record or per-type subscriptions (also
 * ones added in on_metadata), with pauses every 1, 2, 5, 97 callbacks, with
 * a stop in the middle, fed whole or in random slices, and with damaged
 * chunks in the middle (bytes flipped, last chunk truncated; errors skipped
 * or not).
 *
 *   test_parallel [--heavy | --robust SECONDS] FILE...
 *
 * Each FILE is checked alone, then all of them concatenated twice (many
 * chunks, metadata changing between chunks), then damaged copies of the
 * concatenation. --heavy (many big files): only their concatenation (once),
 * fewer combinations, transcripts compared by hash, no damaged copies. --robust: random damage of the
 * concatenation (flips, truncations) for the given time, and allocation
 * failures at every allocation of a threaded run (no crash, no leak). */
#include "../harness.h"

#include <time.h>

static int g_cases, g_fails;

static bool has(const tlog *t, const char *s) {
    size_t n = strlen(s);
    for (size_t i = 0; i + n <= t->n; i++)
        if (memcmp(t->d + i, s, n) == 0)
            return true;
    return false;
}

/* ------------------------------------------------------- chunk framing */

typedef struct span {
    size_t off, size;
} span;

static size_t chunks_of(const uint8_t *b, size_t len, span *out, size_t max) {
    size_t n = 0, off = 0;
    while (off + 68 <= len && n < max && memcmp(b + off, "FLR\0", 4) == 0) {
        uint64_t sz = 0;
        for (int i = 0; i < 8; i++)
            sz = sz << 8 | b[off + 8 + i];
        if (sz <= 68 || sz > len - off)
            break;
        out[n++] = (span){off, (size_t)sz};
        off += (size_t)sz;
    }
    return n;
}

static uint64_t be(const uint8_t *b, int n) {
    uint64_t v = 0;
    for (int i = 0; i < n; i++)
        v = v << 8 | b[i];
    return v;
}

/* --------------------------------------------------------------- runner */

enum shape {
    SH_ALL,  /* every callback: on_record and on_event */
    SH_SUBS, /* per-type subscriptions only (no on_event, no on_record) */
    SH_LATE, /* on_event, plus a subscription added in every on_metadata */
    SH_WALK, /* on_record only */
    NSHAPES
};
static const char *shape_name[] = {"all", "subs", "late", "walk"};

typedef struct pctx {
    run_ctx r; /* first: the harness callbacks take it as user */
    enum shape shape;
    unsigned nmeta;
    uint64_t hash, folded; /* --heavy: transcript bytes folded into a hash */
} pctx;

static bool g_fold; /* --heavy: transcripts of GBs are hashed as they grow */

static void fold(pctx *x, bool force) {
    tlog *l = &x->r.log;
    if (!g_fold || (!force && l->n < ((size_t)16 << 20)))
        return;
    uint64_t h = x->hash;
    for (size_t i = 0; i < l->n; i++)
        h = (h ^ (uint8_t)l->d[i]) * 0x100000001b3ull;
    x->hash = h;
    x->folded += l->n;
    l->n = 0;
}

#define WRAP(name, hname, T)                                                   \
    static int name(jfr_parser *p, T a, void *u) {                             \
        int rc = hname(p, a, u);                                               \
        fold(u, false);                                                        \
        return rc;                                                             \
    }
WRAP(w_begin, h_begin, const jfr_chunk_info *)
WRAP(w_record, h_record, const jfr_record *)
WRAP(w_event, h_event, const jfr_event *)
WRAP(w_end, h_end, const jfr_chunk_info *)

static int s_event(jfr_parser *p, const jfr_event *e, void *u) {
    (void)p;
    pctx *x = u;
    log_event(&x->r, "S", e);
    fold(x, false);
    return maybe_pause(&x->r);
}

static int s_late(jfr_parser *p, const jfr_event *e, void *u) {
    (void)p;
    pctx *x = u;
    log_event(&x->r, "L", e);
    fold(x, false);
    return maybe_pause(&x->r);
}

static int p_meta(jfr_parser *p, const jfr_metadata *m, void *u) {
    pctx *x = u;
    int rc = h_meta(p, m, u);
    if (x->shape == SH_LATE) {
        /* one more event type each time, chosen from this table */
        uint32_t nev = 0, k = 0;
        for (uint32_t i = 0; i < m->ntypes; i++)
            nev += m->types[i]->is_event;
        for (uint32_t i = 0; nev && i < m->ntypes; i++) {
            const jfr_type *t = m->types[i];
            if (t->is_event && k++ == (x->nmeta * 7 + 3) % nev) {
                jfr_status s = jfr_parser_on(p, t->name, s_late, u);
                tlog_printf(&x->r.log, "SUB %s %s\n", t->name, jfr_status_name(s));
                break;
            }
        }
    }
    x->nmeta++;
    return rc;
}

typedef struct pcfg {
    unsigned threads;
    bool ordered, skip_errors;
    enum shape shape;
    int pause_every, stop_at;
    size_t feed;   /* max slice (random sizes 1..feed); 0 = whole buffer */
    unsigned seed;
    int share;     /* a jfr_share: enum share_mode */
} pcfg;

/* jfr_share: the parser prepares every chunk into a share before it is fed
 * (room for all; or room for 2 and the number of parsers not given: older
 * ones evicted before they are reached);
 * or two parsers on two threads share one, each feeding chunk by chunk and
 * preparing its next chunk, or the one after when the other has it, as
 * jfrstream print --jobs does. */
enum share_mode { SHARE_NONE, SHARE_ALL, SHARE_TWO, SHARE_PAIR };
static const char *share_name[] = {"none", "all", "two", "pair"};

static const jfr_allocator *g_alloc; /* NULL: libc */

static size_t chunk_len(const uint8_t *b, size_t left) {
    uint64_t k = jfr_chunk_size_at(b, left);
    return k >= 68 && k <= left ? (size_t)k : left;
}

static tlog run_with(const uint8_t *buf, size_t len, pcfg c, int *ncb, jfr_share *sh);
static bool same(const tlog *ref, const tlog *t, const char *what, pcfg c);

typedef struct pair_arg {
    const uint8_t *buf;
    size_t len;
    pcfg c;
    jfr_share *sh;
    tlog out;
} pair_arg;

static void *pair_main(void *arg) {
    pair_arg *a = arg;
    a->out = run_with(a->buf, a->len, a->c, NULL, a->sh);
    return NULL;
}

static uint64_t g_adopted; /* copies taken from shares, all runs */

/* A run as pcfg says; with a share, its preparations and their copies are
 * counted in g_adopted. SHARE_PAIR: the other parser's transcript must be
 * the same as this one's. */
static tlog run(const uint8_t *buf, size_t len, pcfg c, int *ncb) {
    if (c.share == SHARE_NONE)
        return run_with(buf, len, c, ncb, NULL);
    jfr_share *sh = jfr_share_new(g_alloc, c.share == SHARE_PAIR ? 2 : c.share == SHARE_ALL,
                                   c.share == SHARE_TWO ? 2 : c.share == SHARE_ALL ? 64 : 0);
    if (!sh) {
        tlog t = {0};
        tlog_printf(&t, "SHARE failed\n");
        return t;
    }
    pair_arg other = {buf, len, c, sh, {0}};
    pthread_t th;
    bool two = c.share == SHARE_PAIR && pthread_create(&th, NULL, pair_main, &other) == 0;
    tlog t = run_with(buf, len, c, ncb, sh);
    if (two) {
        pthread_join(th, NULL);
        if (!g_alloc) /* failures injected: only one of the two sees each */
            same(&t, &other.out, "the other parser of a pair", c);
        free(other.out.d);
    }
    uint64_t adopted = 0;
    jfr_share_stats(sh, NULL, &adopted);
    g_adopted += adopted;
    jfr_share_free(sh);
    return t;
}

static tlog run_with(const uint8_t *buf, size_t len, pcfg c, int *ncb, jfr_share *sh) {
    pctx x = {.shape = c.shape, .hash = 0xcbf29ce484222325ull};
    x.r.cfg = (run_cfg){.values = true, .stacks = true, .pause_every = c.pause_every,
                        .stop_at = c.stop_at, .skip_errors = c.skip_errors};
    jfr_callbacks cb = {sizeof cb, w_begin, p_meta, w_record, w_event, w_end, h_error};
    if (c.shape == SH_SUBS || c.shape == SH_WALK)
        cb.on_event = NULL;
    if (c.shape != SH_ALL && c.shape != SH_WALK)
        cb.on_record = NULL;
    jfr_options o;
    jfr_options_init(&o);
    o.ordered = c.ordered;
    if (g_alloc)
        o.allocator = *g_alloc;
    jfr_parser *p = jfr_parser_new(&o, &cb, &x);
    if (!p) {
        tlog_printf(&x.r.log, "NEW failed\n");
        return x.r.log;
    }
    jfr_parser_set_threads(p, c.threads);
    if (sh)
        jfr_parser_set_share(p, sh);
    if (c.shape == SH_SUBS) {
        /* two per-type handlers for one type, one for others */
        static const char *names[] = {"jdk.ExecutionSample", "jdk.ObjectAllocationSample",
                                      "jdk.ExecutionSample", "jdk.ThreadPark",
                                      "jdk.JavaMonitorWait", "jdk.ObjectAllocationInNewTLAB",
                                      "test.Plain", "test.AllKinds"};
        for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
            if (jfr_parser_on(p, names[i], s_event, &x) != JFR_OK)
                tlog_printf(&x.r.log, "ON failed\n");
    }
    size_t pos = 0;
    unsigned seed = c.seed;
    jfr_status s = JFR_OK;
    if (sh && c.share != SHARE_PAIR) /* every chunk prepared, then fed */
        for (size_t at = 0; at < len; at += chunk_len(buf + at, len - at))
            if (jfr_parser_prepare(p, buf + at, len - at, NULL) != JFR_OK)
                tlog_printf(&x.r.log, "PREPARE failed\n");
    while (pos < len) {
        size_t n = len - pos;
        if (c.share == SHARE_PAIR) { /* a chunk at a time, prepared ahead */
            n = chunk_len(buf + pos, len - pos);
            bool made = false;
            jfr_parser_prepare(p, buf + pos, n, &made);
            if (!made && pos + n < len)
                jfr_parser_prepare(p, buf + pos + n, len - pos - n, NULL);
        } else if (c.feed) {
            n = 1 + rnd_next(&seed) % c.feed;
            if (n > len - pos)
                n = len - pos;
        }
        s = jfr_parser_feed(p, buf + pos, n);
        pos += jfr_parser_consumed(p);
        if (s != JFR_OK && s != JFR_PAUSED)
            break;
    }
    if (s == JFR_OK || s == JFR_PAUSED)
        while ((s = jfr_parser_finish(p)) == JFR_PAUSED)
            ;
    tlog_printf(&x.r.log, "END %s chunks=%" PRIu64 " errors=%" PRIu64 " msg=%s\n",
                jfr_status_name(s), jfr_parser_chunks(p), jfr_parser_errors(p),
                s != JFR_OK ? jfr_parser_error(p) : "");
    jfr_parser_free(p);
    if (g_fold) {
        fold(&x, true);
        tlog_printf(&x.r.log, "HASH %016" PRIx64 " of %" PRIu64 " bytes\n", x.hash, x.folded);
    }
    if (ncb)
        *ncb = x.r.ncb;
    return x.r.log;
}

static void describe(char *d, size_t n, const char *what, pcfg c) {
    snprintf(d, n,
             "%s: threads=%u ordered=%d shape=%s pause=%d stop=%d feed=%zu seed=%u skip=%d "
             "share=%s",
             what, c.threads, c.ordered, shape_name[c.shape], c.pause_every, c.stop_at, c.feed,
             c.seed, c.skip_errors, share_name[c.share]);
}

static bool same(const tlog *ref, const tlog *t, const char *what, pcfg c) {
    g_cases++;
    if (t->n == ref->n && memcmp(t->d, ref->d, t->n) == 0)
        return true;
    size_t k = 0;
    while (k < t->n && k < ref->n && t->d[k] == ref->d[k])
        k++;
    size_t ls = k;
    while (ls > 0 && ref->d[ls - 1] != '\n')
        ls--;
    char d[300];
    describe(d, sizeof d, what, c);
    fprintf(stderr, "DIFF %s: at byte %zu of %zu/%zu\n  ref: %.200s\n  got: %.200s\n", d, k,
            ref->n, t->n, ref->d + ls, t->d + ls);
    g_fails++;
    return false;
}

static const unsigned threads_list[] = {2, 3, 8};
#define NTHREADS (sizeof threads_list / sizeof threads_list[0])

enum level {
    LV_FULL,    /* every combination */
    LV_HEAVY,   /* a big buffer: fewer combinations */
    LV_DAMAGED, /* a damaged buffer: errors skipped or not, fewer combinations */
};

static void vs(const tlog *ref, const uint8_t *buf, size_t len, const char *what, pcfg c) {
    tlog t = run(buf, len, c, NULL);
    same(ref, &t, what, c);
    free(t.d);
}

/* One buffer, every configuration against the serial transcript. */
static void check_buffer(const uint8_t *buf, size_t len, const char *what, enum level lv) {
    static const int pauses[] = {0, 1, 2, 5, 97};
    if (lv == LV_FULL && test_scale() < 1)
        lv = LV_HEAVY; /* scaled down (valgrind): the smaller matrix */
    for (int ordered = 0; ordered < 2; ordered++) {
        for (int sh = 0; sh < NSHAPES; sh++) {
            if (lv != LV_FULL && sh == SH_WALK)
                continue;
            if (lv == LV_HEAVY && sh == SH_SUBS)
                continue;
            for (int skip = 0; skip < (lv == LV_DAMAGED ? 2 : 1); skip++) {
                pcfg base = {.threads = 1, .ordered = ordered, .shape = (enum shape)sh,
                             .skip_errors = lv == LV_DAMAGED ? skip : true};
                int ncb = 0;
                tlog ref = run(buf, len, base, &ncb);
                for (size_t ti = 0; ti < NTHREADS; ti++) {
                    pcfg c = base;
                    c.threads = threads_list[ti];
                    for (size_t pi = 0; pi < sizeof pauses / sizeof pauses[0]; pi++) {
                        c.pause_every = pauses[pi];
                        if (lv == LV_HEAVY && pauses[pi] != (ti == 1 ? 97 : 0))
                            continue;
                        if (lv == LV_DAMAGED && pauses[pi] != (ti == 0 ? 5 : 0))
                            continue;
                        vs(&ref, buf, len, what, c);
                    }
                    /* random slices: some calls hold several whole chunks */
                    if (lv == LV_FULL || (lv == LV_DAMAGED && ti == 1)) {
                        c.pause_every = ti == 1 ? 5 : 0;
                        c.feed = len / 3 + 1;
                        c.seed = 1 + (unsigned)ti;
                        vs(&ref, buf, len, what, c);
                    }
                }
                /* shared preparations (whole feed; a pair: chunk by chunk) */
                for (int m = SHARE_ALL; m <= SHARE_PAIR; m++) {
                    if ((lv == LV_HEAVY && m != SHARE_PAIR) || (lv == LV_DAMAGED && m == SHARE_TWO))
                        continue;
                    pcfg c = base;
                    c.share = m;
                    uint64_t a0 = g_adopted;
                    vs(&ref, buf, len, what, c);
                    /* every chunk of a sound buffer is copied, not made again */
                    span ch[4096];
                    size_t nch = chunks_of(buf, len, ch, 4096);
                    if (lv != LV_DAMAGED && m == SHARE_ALL && sh == SH_ALL && nch < 64 &&
                        g_adopted - a0 != nch) {
                        fprintf(stderr, "%s: %" PRIu64 " of %zu chunks copied from the share\n",
                                what, g_adopted - a0, nch);
                        g_fails++;
                    }
                    if (m == SHARE_PAIR && lv == LV_FULL && ordered) { /* helpers, pauses */
                        c.threads = 2;
                        c.pause_every = 5;
                        vs(&ref, buf, len, what, c);
                    }
                }
                free(ref.d);
                /* a stop in the middle (and at a third, with pauses) */
                if (ncb > 2 && lv != LV_DAMAGED && (lv == LV_FULL || (sh == SH_ALL && ordered))) {
                    for (int k = 2; k <= (lv == LV_HEAVY ? 2 : 3); k++) {
                        pcfg sb = base;
                        sb.stop_at = ncb / k;
                        tlog sref = run(buf, len, sb, NULL);
                        for (size_t ti = 0; ti < (lv == LV_HEAVY ? 1 : NTHREADS); ti++) {
                            pcfg c = sb;
                            c.threads = threads_list[ti];
                            c.pause_every = k == 3 ? 97 : 0;
                            vs(&sref, buf, len, what, c);
                        }
                        pcfg c = sb;
                        c.share = SHARE_PAIR;
                        vs(&sref, buf, len, what, c);
                        free(sref.d);
                    }
                }
            }
        }
    }
}

/* Damaged copies of a buffer of at least 3 chunks: bytes of chunk 2 flipped
 * (in its metadata record, its last checkpoint, its first record, a run in
 * its middle, its last record), the last chunk truncated, and a chunk in the
 * middle shortened. */
static void check_damage(const uint8_t *buf, size_t len, const char *what) {
    span ch[4096];
    size_t n = chunks_of(buf, len, ch, 4096);
    if (n < 3)
        return;
    const span c2 = ch[2];
    uint64_t mo = be(buf + c2.off + 24, 8), co = be(buf + c2.off + 16, 8);
    size_t where[] = {(size_t)mo + 5, (size_t)co + 3, (size_t)co + 9, 68, c2.size / 2,
                      c2.size - 3};
    uint8_t *d = malloc(len);
    char w[200];
    int nerr = 0;
    for (size_t i = 0; i < sizeof where / sizeof where[0]; i++) {
        if (where[i] >= c2.size || (test_scale() < 1 && i != 1 && i != 3))
            continue; /* scaled down (valgrind): the two flips that raise errors */
        memcpy(d, buf, len);
        size_t run_len = i == 4 ? 64 : 1;
        for (size_t k = 0; k < run_len && where[i] + k < c2.size; k++)
            d[c2.off + where[i] + k] ^= (uint8_t)(0x5a + k);
        snprintf(w, sizeof w, "%s, chunk 2 byte %zu flipped", what, where[i]);
        check_buffer(d, len, w, LV_DAMAGED);
        tlog t = run(d, len, (pcfg){.threads = 1, .skip_errors = true, .shape = SH_ALL}, NULL);
        nerr += has(&t, "\nERR ");
        free(t.d);
    }
    /* the last chunk truncated: feed ends inside it */
    size_t cut = ch[n - 1].off + ch[n - 1].size / 2;
    snprintf(w, sizeof w, "%s, truncated at %zu", what, cut);
    check_buffer(buf, cut, w, LV_DAMAGED);
    /* a chunk in the middle cut short and followed by the rest: framing lost */
    memcpy(d, buf, len);
    size_t gap = ch[n / 2].size / 3;
    memmove(d + ch[n / 2].off + gap, buf + ch[n / 2].off + 2 * gap,
            len - ch[n / 2].off - 2 * gap);
    snprintf(w, sizeof w, "%s, chunk %zu shortened", what, n / 2);
    check_buffer(d, len - gap, w, LV_DAMAGED);
    printf("%s: damaged variants checked (%d of the flips raise errors)\n", what, nerr);
    free(d);
}

/* ------------------------------------------------------------- robust */

static unsigned g_rnd = 12345;

static void robust_random(const uint8_t *buf, size_t len, double seconds) {
    uint8_t *d = malloc(len);
    span ch[4096];
    size_t n = chunks_of(buf, len, ch, 4096);
    time_t t0 = time(NULL);
    int iters = 0;
    while (difftime(time(NULL), t0) < seconds) {
        memcpy(d, buf, len);
        size_t dl = len;
        unsigned kind = rnd_next(&g_rnd) % 4;
        if (kind < 2 && n) { /* flips in one chunk */
            const span c = ch[rnd_next(&g_rnd) % n];
            unsigned flips = 1 + rnd_next(&g_rnd) % 8;
            for (unsigned f = 0; f < flips; f++)
                d[c.off + rnd_next(&g_rnd) % c.size] ^= (uint8_t)(1u << (rnd_next(&g_rnd) % 8));
        } else if (kind == 2) { /* flips anywhere */
            unsigned flips = 1 + rnd_next(&g_rnd) % 16;
            for (unsigned f = 0; f < flips; f++)
                d[(size_t)(((uint64_t)rnd_next(&g_rnd) << 24 | rnd_next(&g_rnd)) % len)] ^=
                    (uint8_t)(1u << (rnd_next(&g_rnd) % 8));
        } else { /* truncated */
            dl = (size_t)(((uint64_t)rnd_next(&g_rnd) << 24 | rnd_next(&g_rnd)) % len);
        }
        pcfg base = {.threads = 1, .ordered = rnd_next(&g_rnd) % 2,
                     .shape = (enum shape)(rnd_next(&g_rnd) % NSHAPES),
                     .skip_errors = rnd_next(&g_rnd) % 4 != 0};
        tlog ref = run(d, dl, base, NULL);
        pcfg c = base;
        c.threads = 2 + rnd_next(&g_rnd) % 3;
        c.pause_every = (int)(rnd_next(&g_rnd) % 3 ? 0 : 1 + rnd_next(&g_rnd) % 50);
        c.share = (int)(rnd_next(&g_rnd) % 4); /* none, all, two, pair */
        tlog t = run(d, dl, c, NULL);
        same(&ref, &t, "robust random damage", c);
        free(t.d);
        free(ref.d);
        iters++;
    }
    printf("robust: %d random damaged inputs\n", iters);
    free(d);
}

static void robust_alloc(const uint8_t *buf, size_t len) {
    /* the counting allocator of harness.h, thread-safe, failing only the
     * Nth allocation; no realloc_fn: the library's alloc+copy+free path */
    pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    talloc f;
    talloc_init(&f);
    f.lock = &lock;
    f.fail_once = true;
    jfr_allocator a = {talloc_alloc, NULL, talloc_free, &f};
    g_alloc = &a;
    pcfg c = {.threads = 3, .ordered = true, .shape = SH_ALL, .skip_errors = true};
    tlog t = run(buf, len, c, NULL);
    free(t.d);
    long total = (long)f.nalloc;
    int bad = 0, nomem = 0;
    long points = (long)(300 * test_scale());
    if (points < 1)
        points = 1;
    long step = total > points ? total / points : 1;
    for (long k = 1; k <= total + 1; k += (k < points ? 1 : step)) {
        pthread_mutex_lock(&lock);
        f.nalloc = 0;
        f.fail_at = (size_t)k;
        pthread_mutex_unlock(&lock);
        c.threads = 2 + (unsigned)(k % 3);
        c.shape = (enum shape)(k % NSHAPES);
        c.share = (int)(k % 4); /* the share allocates through it too */
        t = run(buf, len, c, NULL);
        nomem += has(&t, "NOMEM");
        free(t.d);
        if (f.cur || f.bad_size) {
            fprintf(stderr, "allocation failure %ld: %zu bytes not freed, %zu wrong sizes%s%s\n",
                    k, f.cur, f.bad_size, f.bad_size ? ", first: " : "", f.bad_detail);
            bad++;
            f.cur = 0;
            f.bad_size = 0;
        }
    }
    g_alloc = NULL;
    g_cases++;
    g_fails += bad != 0;
    printf("robust: allocation failures injected over %ld allocations (%d reported NOMEM), "
           "%d leaks\n", total, nomem, bad);
}

/* ---------------------------------------------------------------- main */

int main(int argc, char **argv) {
    double robust = 0;
    bool heavy = false;
    int first = 1;
    if (argc > 2 && !strcmp(argv[1], "--robust")) {
        robust = atof(argv[2]);
        first = 3;
    } else if (argc > 1 && !strcmp(argv[1], "--heavy")) {
        heavy = g_fold = true;
        first = 2;
    }
    if (first >= argc) {
        fprintf(stderr, "usage: test_parallel [--heavy | --robust SECONDS] FILE...\n");
        return 2;
    }
    robust *= test_scale();
    if (heavy && test_scale() < 1) /* scaled down (valgrind): the first files only */
        argc = first + (int)((argc - first) * test_scale() + 1);
    uint8_t *cat = NULL, *rev = NULL;
    size_t catlen = 0;
    for (int i = first; i < argc; i++) {
        size_t len;
        uint8_t *buf = read_file(argv[i], &len);
        if (!buf) {
            fprintf(stderr, "cannot read %s\n", argv[i]);
            return 1;
        }
        if (!robust && !heavy) {
            int before = g_fails;
            check_buffer(buf, len, argv[i], heavy || len > (4u << 20) ? LV_HEAVY : LV_FULL);
            printf("%s: %zu bytes, %s\n", argv[i], len,
                   g_fails == before ? "identical transcripts" : "DIFFERENT");
        }
        cat = realloc(cat, catlen + len);
        rev = realloc(rev, catlen + len); /* the files in reverse order */
        memcpy(cat + catlen, buf, len);
        memmove(rev + len, rev, catlen);
        memcpy(rev, buf, len);
        catlen += len;
        free(buf);
    }
    /* the whole set twice: many chunks, types changing between them; for
     * damage, in reverse order then in order (a fixture's big chunk 2nd) */
    if (!heavy) {
        cat = realloc(cat, 2 * catlen);
        rev = realloc(rev, 2 * catlen);
        memcpy(cat + catlen, cat, catlen);
        memcpy(rev + catlen, cat, catlen);
        catlen *= 2;
    }
    span ch[4096];
    size_t n = chunks_of(cat, catlen, ch, 4096);
    char what[64];
    snprintf(what, sizeof what, "concatenation (%zu chunks)", n);
    if (!robust) {
        int before = g_fails;
        check_buffer(cat, catlen, what, heavy || catlen > (4u << 20) ? LV_HEAVY : LV_FULL);
        printf("%s: %zu bytes, %s\n", what, catlen,
               g_fails == before ? "identical transcripts" : "DIFFERENT");
        if (!heavy)
            check_damage(rev, catlen, "reversed+forward");
    } else {
        robust_random(cat, catlen, robust);
        size_t pre = n ? ch[0].size : catlen; /* up to 6 chunks, 2 MiB */
        for (size_t k = 1; k < n && k < 6 && ch[k].off + ch[k].size <= (2u << 20); k++)
            pre = ch[k].off + ch[k].size;
        robust_alloc(cat, pre);
    }
    free(cat);
    free(rev);
    printf("%" PRIu64 " chunk preparations copied from shares\n", g_adopted);
    printf("%d cases, %d differ\n", g_cases, g_fails);
    return g_fails || g_failures ? 1 : 0;
}
