/* jfr_options.resync: after damage the parser scans for the next plausible
 * "FLR\0" header and goes on, reporting the bytes it skipped.
 *
 * Each case builds an input from the committed fixtures (synthetic.jfr's two
 * chunks S0 and S1, workload.jfr's one chunk W; V0 and V1: S0 and S1 with the
 * format 1.0 version of JDK 9 and 10) plus damage, and checks:
 *   - the events delivered equal those of a clean file of the chunks that
 *     should survive (transcripts compared with offsets and chunk indexes
 *     removed, every value and stack frame included);
 *   - the total of skipped bytes, the final status, the SKIPPED reports;
 *   - the transcript, errors included, is byte-identical at every feed size
 *     (1, 7, 61, 4096, random), with pauses, and with 2 and 3 threads. */
#include "../harness.h"

static const uint8_t *S0, *S1, *W, *V0, *V1;
static size_t nS0, nS1, nW, nV0, nV1;

typedef struct want {
    const char *name;
    const uint8_t *good[4]; /* chunks that must be delivered, in order */
    size_t ngood[4];
    int64_t skipped;       /* -1: not checked */
    const char *end;       /* final status name */
    int nskip_reports;     /* SKIPPED reports; -1: not checked */
    const char *has;       /* a substring the transcript must hold, or NULL */
} want;

static void put(tlog *b, const void *d, size_t n) { tlog_put(b, d, n); }

/* Pseudo-random bytes without 'F' (so no magic), deterministic. */
static void garbage(tlog *b, size_t n, unsigned seed) {
    for (size_t i = 0; i < n; i++) {
        uint8_t c = (uint8_t)rnd_next(&seed);
        if (c == 'F')
            c = 'G';
        tlog_put(b, (const char *)&c, 1);
    }
}

static uint64_t get_be64(const uint8_t *d) {
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v = v << 8 | d[i];
    return v;
}

static void set_be(uint8_t *d, int w, uint64_t v) {
    for (int i = w - 1; i >= 0; i--, v >>= 8)
        d[i] = (uint8_t)v;
}

static size_t count(const tlog *t, const char *s) {
    size_t n = 0, m = strlen(s);
    for (size_t i = 0; i + m <= t->n; i++)
        if (memcmp(t->d + i, s, m) == 0)
            n++;
    return n;
}

static bool holds(const tlog *t, const char *s) { return count(t, s) > 0; }

static void check_case(const want *w, const uint8_t *in, size_t n) {
    int before = g_failures;
    run_cfg base = {.values = true, .stacks = true, .skip_errors = true, .resync = true};
    for (int ordered = 0; ordered < 2; ordered++) {
        run_cfg c = base;
        c.ordered = ordered;
        tlog ref = run_parser(in, n, c);

        /* what survives equals a clean file of the good chunks */
        tlog clean = {0};
        for (int i = 0; i < 4 && w->good[i]; i++)
            put(&clean, w->good[i], w->ngood[i]);
        run_cfg cc = c;
        cc.resync = false;
        tlog exp = run_parser((const uint8_t *)clean.d, clean.n, cc);
        tlog a = tlog_normalize(ref.d, ref.n, true), b = tlog_normalize(exp.d, exp.n, true);
        if (a.n != b.n || (a.n && memcmp(a.d, b.d, a.n) != 0)) {
            fprintf(stderr, "%s (ordered=%d): delivered %zu bytes of transcript, expected %zu\n",
                    w->name, ordered, a.n, b.n);
            g_failures++;
        }
        /* the END line: status and skipped bytes */
        char endl[96];
        if (w->skipped >= 0)
            snprintf(endl, sizeof endl, "END %s skipped=%lld\n", w->end, (long long)w->skipped);
        else
            snprintf(endl, sizeof endl, "END %s skipped=", w->end);
        if (!holds(&ref, endl)) {
            fprintf(stderr, "%s: no '%s' in:\n%.*s\n", w->name, endl,
                    (int)(ref.n > 2000 ? 2000 : ref.n), ref.d + (ref.n > 2000 ? ref.n - 2000 : 0));
            g_failures++;
        }
        if (w->nskip_reports >= 0 && count(&ref, "ERR SKIPPED ") != (size_t)w->nskip_reports) {
            fprintf(stderr, "%s: %zu SKIPPED reports, expected %d\n", w->name,
                    count(&ref, "ERR SKIPPED "), w->nskip_reports);
            g_failures++;
        }
        if (w->has && !holds(&ref, w->has)) {
            fprintf(stderr, "%s: transcript lacks '%s'\n", w->name, w->has);
            g_failures++;
        }

        /* the same transcript, errors included, at every feed size */
        static const struct { size_t feed; unsigned seed; int pause; unsigned threads; } v[] = {
            {1, 0, 0, 0},    {7, 0, 0, 0},  {61, 0, 3, 0}, {4096, 0, 0, 0}, {300, 5, 0, 0},
            {2000, 9, 2, 0}, {0, 0, 1, 0},  {0, 0, 0, 2},  {0, 0, 5, 3},    {65536, 0, 0, 2},
        };
        for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
            /* scaled down (valgrind): the big inputs at 61 and 300 bytes,
             * a pause every callback and 3 threads with pauses; the small
             * ones at every feed */
            if (test_scale() < 1 && n > (64u << 10) && i != 2 && i != 4 && i != 6 && i != 8)
                continue;
            run_cfg d = c;
            d.feed = v[i].feed;
            d.seed = v[i].seed;
            d.pause_every = v[i].pause;
            d.threads = v[i].threads;
            tlog t = run_parser(in, n, d);
            if (t.n != ref.n || memcmp(t.d, ref.d, t.n) != 0) {
                fprintf(stderr, "%s (ordered=%d): feed %zu seed %u pause %d threads %u differs\n",
                        w->name, ordered, v[i].feed, v[i].seed, v[i].pause, v[i].threads);
                g_failures++;
            }
            free(t.d);
        }
        free(ref.d);
        free(clean.d);
        free(exp.d);
        free(a.d);
        free(b.d);
    }
    printf("%-22s %s\n", w->name, g_failures == before ? "ok" : "FAILED");
}

#define GOOD1(a) {a}, {n##a}
#define GOOD2(a, b) {a, b}, {n##a, n##b}
#define GOOD3(a, b, c) {a, b, c}, {n##a, n##b, n##c}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: %s synthetic.jfr workload.jfr\n", argv[0]);
        return 2;
    }
    size_t ns, nw;
    uint8_t *syn = read_file(argv[1], &ns), *wl = read_file(argv[2], &nw);
    if (!syn || !wl) {
        fprintf(stderr, "cannot read the fixtures\n");
        return 2;
    }
    nS0 = jfr_chunk_size_at(syn, ns);
    if (nS0 < 68 || nS0 >= ns) {
        fprintf(stderr, "synthetic.jfr: expected two chunks\n");
        return 2;
    }
    S0 = syn;
    S1 = syn + nS0;
    nS1 = ns - nS0;
    W = wl;
    nW = nw;
    uint8_t *v1 = malloc(ns); /* the synthetic chunks as format 1.0 */
    if (!v1) {
        fprintf(stderr, "out of memory\n");
        return 2;
    }
    memcpy(v1, syn, ns);
    set_be(v1 + 4, 4, 0x00010000);
    set_be(v1 + nS0 + 4, 4, 0x00010000);
    V0 = v1;
    nV0 = nS0;
    V1 = v1 + nS0;
    nV1 = nS1;
    char msg[160];

    { /* garbage between two chunks: reported once, by offset and count */
        tlog b = {0};
        put(&b, S0, nS0);
        garbage(&b, 1000, 1);
        put(&b, S1, nS1);
        snprintf(msg, sizeof msg, "ERR SKIPPED chunk 1 at byte %zu: bytes skipped to the next "
                 "chunk magic: 1000 bytes skipped; next chunk magic at byte %zu\n", nS0, nS0 + 1000);
        want w = {"garbage-between", GOOD2(S0, S1), 1000, "OK", 1, msg};
        check_case(&w, (uint8_t *)b.d, b.n);
        free(b.d);
    }
    { /* garbage first */
        tlog b = {0};
        garbage(&b, 1000, 2);
        put(&b, S0, nS0);
        put(&b, S1, nS1);
        want w = {"garbage-before", GOOD2(S0, S1), 1000, "OK", 1, "ERR BAD_MAGIC chunk 0 at byte 0"};
        check_case(&w, (uint8_t *)b.d, b.n);
        free(b.d);
    }
    { /* garbage last, longer and shorter than a header */
        tlog b = {0};
        put(&b, S0, nS0);
        put(&b, S1, nS1);
        garbage(&b, 1000, 3);
        want w = {"garbage-after", GOOD2(S0, S1), 1000, "OK", 1,
                  "1000 bytes skipped to the end of the input (no further chunk)"};
        check_case(&w, (uint8_t *)b.d, b.n);
        b.n -= 1000 - 30;
        want w2 = {"garbage-after-short", GOOD2(S0, S1), 30, "OK", 1,
                   "30 bytes skipped to the end of the input"};
        check_case(&w2, (uint8_t *)b.d, b.n);
        free(b.d);
    }
    { /* only garbage */
        tlog b = {0};
        garbage(&b, 5000, 4);
        want w = {"garbage-only", {0}, {0}, 5000, "OK", 1, NULL};
        check_case(&w, (uint8_t *)b.d, b.n);
        free(b.d);
    }
    { /* false magics: bare, with the version, a whole plausible header that
       * points past the real chunk, and a magic cut at a slice end */
        tlog b = {0};
        put(&b, S0, nS0);
        garbage(&b, 100, 5);
        put(&b, "FLR\0", 4);
        garbage(&b, 100, 6);
        put(&b, "FLR\0\0\2\0\1", 8);
        garbage(&b, 100, 7);
        put(&b, "FLR\0\0\1\0\0", 8);
        garbage(&b, 100, 12);
        uint8_t fake[68] = "FLR";
        set_be(fake + 4, 2, 2);
        set_be(fake + 8, 8, 4000);  /* size: swallows S1's start */
        set_be(fake + 16, 8, 100);  /* checkpoint offset */
        set_be(fake + 24, 8, 200);  /* metadata offset */
        set_be(fake + 56, 8, 1000000000);
        put(&b, fake, 68);
        garbage(&b, 100, 8);
        put(&b, "FL", 2);
        put(&b, S1, nS1);
        want w = {"false-magics", GOOD2(S0, S1), (int64_t)(b.n - nS0 - nS1), "OK", -1, NULL};
        check_case(&w, (uint8_t *)b.d, b.n);
        free(b.d);
    }
    /* a damaged header of the first chunk: the second is found */
    static const struct { const char *name; int at, w; uint64_t v; const char *err; } hd[] = {
        {"bad-magic", 0, 1, 'X', "ERR BAD_MAGIC chunk 0 at byte 0"},
        {"bad-version", 4, 2, 3, "ERR BAD_VERSION chunk 0 at byte 4"},
        {"version-0.9", 4, 4, 9, "version 0.9 (a JDK 7 or 8 recording"},
        {"version-3.0", 4, 4, 0x30000, "version 3.0 (only 1.x and 2.x"},
        {"size-zero", 8, 8, 0, "ERR BAD_CHUNK_SIZE chunk 0 at byte 8"},
        {"size-negative", 8, 8, (uint64_t)-1, "ERR BAD_CHUNK_SIZE chunk 0 at byte 8"},
        {"size-2^63", 8, 8, 1ull << 63, "ERR BAD_CHUNK_SIZE chunk 0 at byte 8"},
        {"size-2^63-1", 8, 8, (1ull << 63) - 1, "ERR CHUNK_TOO_LARGE chunk 0 at byte 8"},
        {"size-short", 8, 8, 0, NULL},  /* nS0 - 100 */
        {"size-long", 8, 8, 0, NULL},   /* nS0 + 2000: ends inside S1 */
        {"size-beyond", 8, 8, 0, "ERR TRUNCATED"}, /* nS0 + 5000: past the end */
    };
    for (size_t i = 0; i < sizeof hd / sizeof hd[0]; i++) {
        tlog b = {0};
        put(&b, S0, nS0);
        put(&b, S1, nS1);
        uint64_t v = hd[i].v;
        if (strcmp(hd[i].name, "size-short") == 0)
            v = nS0 - 100;
        else if (strcmp(hd[i].name, "size-long") == 0)
            v = nS0 + 2000;
        else if (strcmp(hd[i].name, "size-beyond") == 0)
            v = nS0 + 5000;
        set_be((uint8_t *)b.d + hd[i].at, hd[i].w, v);
        want w = {hd[i].name, GOOD1(S1), (int64_t)nS0, "OK", 1, hd[i].err};
        check_case(&w, (uint8_t *)b.d, b.n);
        free(b.d);
    }
    { /* format 1.0 chunks (JDK 9, 10) are found as 2.x ones: after garbage,
       * among 2.x chunks, and after a damaged 1.0 header */
        tlog b = {0};
        put(&b, V0, nV0);
        garbage(&b, 1000, 13);
        put(&b, V1, nV1);
        snprintf(msg, sizeof msg, "ERR SKIPPED chunk 1 at byte %zu: bytes skipped to the next "
                 "chunk magic: 1000 bytes skipped; next chunk magic at byte %zu\n", nV0, nV0 + 1000);
        want w = {"format-1.0", GOOD2(V0, V1), 1000, "OK", 1, msg};
        check_case(&w, (uint8_t *)b.d, b.n);
        b.n = 0;
        put(&b, S0, nS0);
        garbage(&b, 333, 14);
        put(&b, V1, nV1);
        garbage(&b, 5, 15);
        put(&b, S1, nS1);
        want w2 = {"format-1.0-among-2.x", GOOD3(S0, V1, S1), 338, "OK", 2, NULL};
        check_case(&w2, (uint8_t *)b.d, b.n);
        b.n = 0;
        put(&b, V0, nV0);
        put(&b, V1, nV1);
        b.d[0] = 'X';
        want w3 = {"format-1.0-bad-magic", GOOD1(V1), (int64_t)nV0, "OK", 1,
                   "ERR BAD_MAGIC chunk 0 at byte 0"};
        check_case(&w3, (uint8_t *)b.d, b.n);
        b.n = 0; /* the input ends inside a 1.0 header: cut, not garbage */
        put(&b, V0, nV0);
        put(&b, V1, 30);
        snprintf(msg, sizeof msg, "ERR TRUNCATED chunk 1 at byte %zu: input ended inside a chunk: "
                 "38 of the 68 header bytes missing", nV0 + 30);
        want w4 = {"format-1.0-cut-header", GOOD1(V0), 0, "TRUNCATED", 0, msg};
        check_case(&w4, (uint8_t *)b.d, b.n);
        free(b.d);
    }
    { /* a damaged body (the metadata record) between good chunks */
        tlog b = {0};
        put(&b, S0, nS0);
        size_t at = b.n;
        put(&b, W, nW);
        put(&b, S1, nS1);
        uint64_t md = get_be64((uint8_t *)b.d + at + 24);
        memset(b.d + at + md + 1, 0xff, 12);
        /* the skip is of chunk 1's bytes: it has chunk 1's number, as its
         * error had (it said "chunk 2" once) */
        snprintf(msg, sizeof msg, "ERR SKIPPED chunk 1 at byte %zu: bytes skipped to the next "
                 "chunk magic: %zu bytes skipped; next chunk magic at byte %zu\n", at, nW,
                 at + nW);
        want w = {"damaged-body", GOOD2(S0, S1), (int64_t)nW, "OK", 1, msg};
        check_case(&w, (uint8_t *)b.d, b.n);
        free(b.d);
    }
    { /* the last chunk cut short: reported, then its bytes skipped */
        tlog b = {0};
        put(&b, S0, nS0);
        put(&b, S1, 1500);
        want w = {"truncated-last", GOOD1(S0), 1500, "OK", 1, "ERR TRUNCATED chunk 1"};
        check_case(&w, (uint8_t *)b.d, b.n);
        snprintf(msg, sizeof msg, "ERR SKIPPED chunk 1 at byte %zu: bytes skipped to the next "
                 "chunk magic: 1500 bytes skipped to the end of the input (no further chunk)\n",
                 nS0);
        want w2 = {"truncated-last-skip", GOOD1(S0), 1500, "OK", 1, msg};
        check_case(&w2, (uint8_t *)b.d, b.n);
        free(b.d);
    }
    { /* several kinds of damage in one input */
        tlog b = {0};
        garbage(&b, 77, 9);
        put(&b, S0, nS0);
        garbage(&b, 3, 10);
        size_t at = b.n;
        put(&b, W, nW);
        b.d[at] = 'x';
        put(&b, W, nW);
        garbage(&b, 500, 11);
        put(&b, S1, nS1);
        put(&b, S0, 300);
        want w = {"mixed", GOOD3(S0, W, S1), (int64_t)(77 + 3 + nW + 500 + 300), "OK", 4, NULL};
        check_case(&w, (uint8_t *)b.d, b.n);
        free(b.d);
    }
    { /* live framing broken: the live chunk is lost, the next one is found */
        tlog b = {0};
        put(&b, S0, nS0);
        b.d[64] = 1; /* state: being written */
        uint8_t bad[10] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f, 0};
        put(&b, bad, sizeof bad);
        put(&b, S1, nS1);
        want w = {"live-broken", GOOD2(S0, S1), -1, "OK", 1, "ERR BAD_RECORD"};
        check_case(&w, (uint8_t *)b.d, b.n);
        free(b.d);
    }
    { /* a live chunk (a JMX stream's shape) cut inside a segment, then a
       * whole chunk: its header sits in the bytes taken as the live chunk's
       * records and is found there (the scan went on after them before). Not
       * when the cut is in the chunk's last record, whose end then comes from
       * the next header: that segment passes and the header is gone. */
        static const char *names[] = {"live-cut-third", "live-cut-half", "live-cut-2/3"};
        size_t cuts[] = {nS0 / 3, nS0 / 2, 2 * nS0 / 3};
        for (int k = 0; k < 3; k++) {
            tlog b = {0};
            put(&b, S0, cuts[k]);
            memset(b.d + 8, 0, 24); /* size, checkpoint and metadata offsets */
            b.d[15] = 68;
            memset(b.d + 40, 0, 8); /* duration */
            b.d[64] = 1;            /* state: being written */
            put(&b, W, nW);
            want w = {names[k], GOOD1(W), -1, "OK", 1, NULL};
            check_case(&w, (uint8_t *)b.d, b.n);
            free(b.d);
        }
    }
    { /* without resync the same damage ends the input (unchanged default) */
        tlog b = {0};
        put(&b, S0, nS0);
        garbage(&b, 1000, 1);
        put(&b, S1, nS1);
        run_cfg c = {.skip_errors = true};
        tlog t = run_parser((uint8_t *)b.d, b.n, c);
        CHECK(holds(&t, "END BAD_MAGIC"));
        CHECK(!holds(&t, "B 1 "));
        free(t.d);
        free(b.d);
        /* and a stop from on_error at the SKIPPED report stops */
    }
    free(syn);
    free(wl);
    free(v1);
    if (g_failures) {
        fprintf(stderr, "%d failures\n", g_failures);
        return 1;
    }
    printf("all resync cases passed\n");
    return 0;
}
