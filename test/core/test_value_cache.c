/* The value cache (jfr_parser_set_value_cache): every value of every event,
 * read by iteration and by random access (jfr_value_field & co., checked
 * against iteration) to depth 5, with the stacks, must be the same with the
 * cache on and off: whole buffers, slices of 7 and 4096 bytes, the file
 * streamed as a live JMX stream would arrive (each chunk's header rewritten
 * to "being written", so its pools land in the growing pool store), pauses,
 * and a max_memory small enough that the cache fills up mid-chunk and the
 * rest is decoded lazily. Also checks that the cache is used: the parser
 * holds more memory with it on. Usage: test_value_cache FILE... */
#include "../harness.h"

static uint64_t peak_with(const uint8_t *buf, size_t len, bool cache) {
    talloc a;
    talloc_init(&a);
    run_cfg c = {.values = true, .alloc = &a, .no_value_cache = !cache};
    tlog t = run_parser(buf, len, c);
    free(t.d);
    return a.peak;
}

/* Returns the runs that differ; *used is set when the parser held more
 * memory with the cache on (it was filled). */
static int check_file(const char *path, bool *used) {
    size_t len;
    uint8_t *buf = read_file(path, &len);
    if (!buf) {
        fprintf(stderr, "cannot read %s\n", path);
        return 1;
    }
    uint8_t *live = as_live(buf, len);
    struct {
        const char *name;
        size_t feed;
        unsigned seed;
        int pause;
        bool live, ordered;
    } cfgs[] = {
        {"whole", 0, 0, 0, false, false},
        {"ordered, 7-byte slices", 7, 0, 0, false, true},
        {"4096-byte slices, pauses", 4096, 0, 3, false, false},
        {"live, 4096-byte slices", 4096, 0, 0, true, false},
        {"live, random slices", 65536, 5, 0, true, true},
        {"max_memory 4 chunks + 1 MiB", 0, 0, 0, false, false},
    };
    int fails = 0, cases = 0;
    for (size_t i = 0; i < sizeof cfgs / sizeof cfgs[0]; i++) {
        if (cfgs[i].live && !live)
            continue;
        run_cfg c = {.values = true, .stacks = true, .random_access = true, .max_depth = 6,
                     .skip_errors = true, .feed = cfgs[i].feed, .seed = cfgs[i].seed,
                     .pause_every = cfgs[i].pause, .ordered = cfgs[i].ordered};
        if (i == sizeof cfgs / sizeof cfgs[0] - 1) {
            /* the largest chunk plus 1 MiB: the cache's bound (1/16) is
             * then small enough to run out inside a chunk */
            uint64_t big = 0;
            for (size_t off = 0; off < len;) {
                uint64_t s = jfr_chunk_size_at(buf + off, len - off);
                if (s < 68 || s > len - off)
                    break;
                if (s > big)
                    big = s;
                off += (size_t)s;
            }
            c.max_memory = 4 * big + (1u << 20);
        }
        const uint8_t *in = cfgs[i].live ? live : buf;
        tlog on = run_parser(in, len, c);
        c.no_value_cache = true;
        tlog off = run_parser(in, len, c);
        cases++;
        if (on.n != off.n || memcmp(on.d, off.d, on.n) != 0) {
            size_t k = 0;
            while (k < on.n && k < off.n && on.d[k] == off.d[k])
                k++;
            fprintf(stderr, "%s: %s: the transcript with the cache differs at byte %zu\n", path,
                    cfgs[i].name, k);
            size_t from = k > 80 ? k - 80 : 0;
            fprintf(stderr, "  on:  %.*s\n  off: %.*s\n", (int)(on.n - from < 240 ? on.n - from : 240),
                    on.d + from, (int)(off.n - from < 240 ? off.n - from : 240), off.d + from);
            fails++;
        }
        free(on.d);
        free(off.d);
    }
    uint64_t with = peak_with(buf, len, true), without = peak_with(buf, len, false);
    if (with > without)
        *used = true;
    printf("%s: %zu bytes, %d runs identical with the value cache on and off, %d differ; "
           "peak memory %llu KiB with it, %llu KiB without\n",
           path, len, cases - fails, fails, (unsigned long long)(with >> 10),
           (unsigned long long)(without >> 10));
    free(live);
    free(buf);
    return fails;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: test_value_cache FILE...\n");
        return 2;
    }
    int fails = 0;
    bool used = false;
    for (int i = 1; i < argc; i++)
        fails += check_file(argv[i], &used);
    /* a recording with pooled objects (every JDK one) fills the cache */
    CHECK(used);
    return fails || g_failures ? 1 : 0;
}
