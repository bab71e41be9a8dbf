/* Real recordings replayed at many slicings (1 byte, primes, 4096, random)
 * and pause patterns: the full callback transcript, every value of every
 * event included, must equal the whole-buffer run. The same with events
 * passed over (jfr_parser_skip_events), ordered and in file order: the
 * events left are exactly the expected ones of the full run, the rest of
 * the transcript unchanged. jfr_parser_delivered, finished and live, at
 * several slicings: never past an event being called back (ordered
 * delivery), only growing, the whole input after finish. Usage: test_feed
 * FILE... */
#include "../harness.h"

/* c fed in slices of `feed` bytes (random 1..feed with a seed), pausing at
 * every `pause`-th callback. */
static run_cfg sliced(run_cfg c, size_t feed, unsigned seed, int pause) {
    c.feed = feed;
    c.seed = seed;
    c.pause_every = pause;
    return c;
}

static bool same_log(const tlog *a, const tlog *b) {
    return a->n == b->n && memcmp(a->d, b->d, a->n) == 0;
}

/* jfr_parser_skip_events: every `every`-th event passes over the next `n`,
 * ordered (the list) and in file order (the record walk). The reference is
 * the full run with those events' callbacks returning at once, unlogged. */
static int skipping(const char *path, const uint8_t *buf, size_t len, int *cases) {
    struct { unsigned every; uint64_t n; } sk[] = {{1, 1}, {3, 5}, {10, 1000}, {7, 0}};
    struct { size_t feed; unsigned seed; int pause; } sl[] = {
        {0, 0, 0}, {1, 0, 0}, {13, 0, 97}, {4096, 0, 1}, {65536, 2, 5}};
    int fails = 0;
    for (int ord = 0; ord < 2; ord++)
        for (size_t k = 0; k < sizeof sk / sizeof sk[0]; k++) {
            run_cfg c = {.values = true, .ordered = ord == 1, .skip_every = sk[k].every,
                         .skip_n = sk[k].n};
            run_cfg sim = c;
            sim.skip_simulate = true;
            tlog ref = run_parser(buf, len, sim);
            for (size_t j = 0; j < sizeof sl / sizeof sl[0]; j++) {
                run_cfg cj = sliced(c, sl[j].feed, sl[j].seed, sl[j].pause);
                tlog t = run_parser(buf, len, cj);
                (*cases)++;
                if (!same_log(&t, &ref) || !tlog_ends_ok(&t)) {
                    fprintf(stderr, "%s: %s, skip %" PRIu64 " every %u, feed %zu pause %d: "
                            "transcript differs\n", path, ord ? "ordered" : "file order",
                            sk[k].n, sk[k].every, cj.feed, cj.pause_every);
                    fails++;
                }
                free(t.d);
            }
            free(ref.d);
        }
    return fails;
}

typedef struct dcheck {
    uint64_t last, bad, events, after_feeds;
} dcheck;

static int d_event(jfr_parser *p, const jfr_event *e, void *u) {
    dcheck *d = u;
    uint64_t n = jfr_parser_delivered(p);
    if (n > e->offset || n < d->last)
        d->bad++;
    d->last = n;
    d->events++;
    return JFR_CB_CONTINUE;
}

static int d_chunk_end(jfr_parser *p, const jfr_chunk_info *c, void *u) {
    dcheck *d = u;
    if (jfr_parser_delivered(p) >= c->offset + (uint64_t)c->size)
        d->bad++; /* the chunk's own callbacks are not done yet */
    return JFR_CB_CONTINUE;
}

/* jfr_parser_delivered at slicings 1, 7, 4096 and whole, for buf as it is
 * and as a live stream: returns the failures. */
static int delivered(const char *path, const uint8_t *buf, size_t len) {
    uint8_t *live = as_live(buf, len);
    int fails = 0;
    size_t feeds[] = {1, 7, 4096, len};
    for (int lv = 0; lv < 2; lv++) {
        const uint8_t *b = lv ? live : buf;
        if (!b)
            continue;
        for (size_t i = 0; i < sizeof feeds / sizeof *feeds; i++) {
            dcheck d = {0};
            jfr_options o;
            jfr_options_init(&o);
            o.ordered = true;
            jfr_callbacks cb = {.size = sizeof cb, .on_event = d_event,
                                .on_chunk_end = d_chunk_end};
            jfr_parser *p = jfr_parser_new(&o, &cb, &d);
            for (size_t at = 0; at < len; at += feeds[i]) {
                size_t n = len - at < feeds[i] ? len - at : feeds[i];
                if (jfr_parser_feed(p, b + at, n) != JFR_OK)
                    d.bad++;
                if (jfr_parser_delivered(p) < d.last || jfr_parser_delivered(p) > at + n)
                    d.bad++;
                d.last = jfr_parser_delivered(p);
            }
            d.after_feeds = jfr_parser_delivered(p);
            bool ok = jfr_parser_finish(p) == JFR_OK && jfr_parser_delivered(p) == len &&
                      !d.bad && d.events > 0 && d.after_feeds > 0;
            if (!ok) {
                fprintf(stderr, "%s%s: feed %zu: jfr_parser_delivered: %llu bad, %llu after "
                        "the feeds, %llu after finish (of %zu)\n", path, lv ? " (live)" : "",
                        feeds[i], (unsigned long long)d.bad,
                        (unsigned long long)d.after_feeds,
                        (unsigned long long)jfr_parser_delivered(p), len);
                fails++;
            }
            jfr_parser_free(p);
        }
    }
    free(live);
    return fails;
}

static int replay(const char *path) {
    size_t len;
    uint8_t *buf = read_file(path, &len);
    if (!buf) {
        fprintf(stderr, "cannot read %s\n", path);
        return 1;
    }
    run_cfg base = {.values = true, .ordered = true};
    tlog ref = run_parser(buf, len, base);
    int fails = 0, cases = 0;
    struct { size_t feed; unsigned seed; int pause; } cfgs[] = {
        {1, 0, 0}, {7, 0, 0}, {13, 0, 97}, {4096, 0, 0}, {4096, 0, 1},
        {65536, 1, 0}, {65536, 2, 5}, {1000, 3, 0}, {len, 0, 2}};
    for (size_t i = 0; i < sizeof cfgs / sizeof cfgs[0]; i++) {
        run_cfg c = sliced(base, cfgs[i].feed, cfgs[i].seed, cfgs[i].pause);
        tlog t = run_parser(buf, len, c);
        cases++;
        if (t.n != ref.n || memcmp(t.d, ref.d, t.n) != 0) {
            size_t k = 0;
            while (k < t.n && k < ref.n && t.d[k] == ref.d[k])
                k++;
            fprintf(stderr, "%s: feed %zu seed %u pause %d: transcript differs at byte %zu\n",
                    path, c.feed, c.seed, c.pause_every, k);
            fails++;
        }
        free(t.d);
    }
    fails += skipping(path, buf, len, &cases);
    fails += delivered(path, buf, len);
    size_t events = 0;
    for (size_t k = 0; k + 1 < ref.n; k++)
        if (ref.d[k] == '\n' && ref.d[k + 1] == 'E')
            events++;
    printf("%s: %zu bytes, %zu events, %d slicings identical, %d differ (%s)\n", path, len,
           events, cases - fails, fails, tlog_ends_ok(&ref) ? "parsed OK" : "NOT OK");
    if (!tlog_ends_ok(&ref))
        fails++;
    free(ref.d);
    free(buf);
    return fails;
}

int main(int argc, char **argv) {
    int fails = 0;
    if (argc < 2) {
        fprintf(stderr, "usage: test_feed FILE...\n");
        return 2;
    }
    for (int i = 1; i < argc; i++)
        fails += replay(argv[i]);
    printf("%d passed, %d failed\n", argc - 1 - (fails ? 1 : 0), fails ? 1 : 0);
    return fails || g_failures ? 1 : 0;
}
