/* Wire level: varints (minimal, padded, 9-byte), fixed widths, string skips
 * and UTF-16 / Latin-1 conversion. */
#include "../harness.h"
#include "../synth.h"
#include "wire.h"

static void varint_case(const uint8_t *b, size_t n, size_t want_len, uint64_t want) {
    uint64_t v = 0xdeadbeef;
    size_t got = jfr_varint_decode(b, b + n, &v);
    CHECK(got == want_len);
    if (want_len)
        CHECK(v == want);
    /* the same bytes with slack after them take the unrolled fast path */
    uint8_t big[32] = {0};
    memcpy(big, b, n);
    v = 0;
    if (want_len) {
        CHECK(jfr_varint_decode(big, big + sizeof big, &v) == want_len);
        CHECK(v == want);
    }
}

static void test_varints(void) {
    const uint8_t z[] = {0x00}, m127[] = {0x7f}, m128[] = {0x80, 0x01};
    varint_case(z, 1, 1, 0);
    varint_case(m127, 1, 1, 127);
    varint_case(m128, 2, 2, 128);
    /* padded forms HotSpot and async-profiler write */
    const uint8_t pad4[] = {0x80, 0x80, 0x80, 0x00};
    const uint8_t pad8[] = {0xb9, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00};
    const uint8_t pad5[] = {0xdf, 0x80, 0x80, 0x80, 0x00};
    varint_case(pad4, 4, 4, 0);
    varint_case(pad8, 8, 8, 57);
    varint_case(pad5, 5, 5, 95);
    /* 9 bytes: the last contributes 8 full bits */
    const uint8_t neg1[] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
    const uint8_t top[] = {0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0xff};
    const uint8_t min[] = {0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80};
    varint_case(neg1, 9, 9, UINT64_MAX);
    varint_case(top, 9, 9, 0xffull << 56);
    varint_case(min, 9, 9, 0x8000000000000000ull);
    /* int -1 is written zero-extended: FF FF FF FF 0F */
    const uint8_t int_neg1[] = {0xff, 0xff, 0xff, 0xff, 0x0f};
    varint_case(int_neg1, 5, 5, 0xffffffffu);
    /* truncated: every proper prefix of a long varint fails */
    for (size_t n = 0; n < 9; n++)
        varint_case(neg1, n, 0, 0);
    /* round trips, minimal and padded to every width that fits */
    uint64_t vals[] = {0, 1, 127, 128, 300, 16383, 16384, 0x7fffffff, 0xffffffffu,
                       1ull << 49, (1ull << 56) - 1, 1ull << 56, 1ull << 63, UINT64_MAX};
    int cases = 0;
    for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++) {
        for (int w = 0; w <= 9; w++) {
            sbuf b = {0};
            sb_var_w(&b, vals[i], w);
            if (w && b.n != (size_t)w) { /* value needs more bytes than w */
                free(b.d);
                continue;
            }
            uint64_t v;
            CHECK(jfr_varint_decode(b.d, b.d + b.n, &v) == b.n);
            CHECK(v == vals[i]);
            free(b.d);
            cases++;
        }
    }
    printf("varints: %d round trips\n", cases);
    CHECK(jfr_varint_decode(NULL, NULL, NULL) == 0);
}

static void test_fixed_widths(void) {
    const uint8_t b[] = {0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08};
    jfr_cur c = {b, b + 8, true, b, 0};
    uint64_t v;
    CHECK(jfr__cur_short(&c, &v) && v == 0x0102);
    CHECK(jfr__cur_int(&c, &v) && v == 0x03040506);
    CHECK(!jfr__cur_int(&c, &v)); /* only 2 bytes left */
    c = (jfr_cur){b, b + 8, true, b, 0};
    CHECK(jfr__cur_long(&c, &v) && v == 0x0102030405060708ull && c.p == b + 8);
    /* counts above 2^31 are refused */
    const uint8_t big[] = {0x80, 0x80, 0x80, 0x80, 0x08};
    jfr_cur cc = {big, big + 5, false, big, 0};
    uint32_t n;
    CHECK(!jfr__cur_count(&cc, &n));
}

static void test_strings(void) {
    for (int fixed = 0; fixed < 2; fixed++) {
        sbuf b = {.fixed = fixed};
        const uint16_t u[] = {'a', 0xd83d, 0xde00, 0xdc00, 0xd800};
        const uint8_t l1[] = {'c', 0xe9, 0xff};
        sb_str_null(&b);
        sb_str_empty(&b);
        sb_str_pool(&b, 12345);
        sb_str_utf8(&b, "h\xc3\xa9");
        sb_str_chars(&b, u, 5);
        sb_str_latin1(&b, l1, 3);
        jfr_cur c = {b.d, b.d + b.n, fixed, b.d, 0};
        for (int i = 0; i < 6; i++)
            CHECK(jfr__cur_skip_string(&c));
        CHECK(c.p == b.d + b.n);
        /* the char array converts to UTF-8: pair combined, lone ones WTF-8 */
        jfr_cur s = {b.d, b.d + b.n, fixed, b.d, 0};
        for (int i = 0; i < 4; i++)
            jfr__cur_skip_string(&s);
        uint8_t enc = 0;
        uint32_t n = 0;
        CHECK(jfr__cur_u8(&s, &enc) && enc == JFR_STR_CHARS);
        CHECK(jfr__cur_count(&s, &n) && n == 5);
        uint8_t out[32];
        long w = jfr__wire_chars_to_utf8(&s, n, out);
        const char *want = "a\xf0\x9f\x98\x80\xed\xb0\x80\xed\xa0\x80";
        CHECK(w == (long)strlen(want) && memcmp(out, want, (size_t)w) == 0);
        CHECK(jfr__cur_u8(&s, &enc) && enc == JFR_STR_LATIN1);
        CHECK(jfr__cur_count(&s, &n) && n == 3);
        size_t lw = jfr__wire_latin1_to_utf8(s.p, n, out);
        CHECK(lw == 5 && memcmp(out, "c\xc3\xa9\xc3\xbf", 5) == 0);
        /* every truncation of the sequence fails to skip somewhere, never overruns */
        for (size_t cut = 0; cut < b.n; cut++) {
            jfr_cur t = {b.d, b.d + cut, fixed, b.d, 0};
            int ok = 0;
            while (ok < 6 && jfr__cur_skip_string(&t))
                ok++;
            CHECK(ok < 6 && t.p <= b.d + cut);
        }
        /* bad encoding byte */
        const uint8_t bad[] = {6, 0};
        jfr_cur bc = {bad, bad + 2, fixed, bad, 0};
        CHECK(!jfr__cur_skip_string(&bc));
        free(b.d);
    }
    printf("strings: six encodings, compressed and uncompressed\n");
}

/* Byte soup: random varints of 1 to 4 bytes, some not minimal, some above
 * U+FFFF (a unit keeps the low 16 bits), in long strings, so that the
 * converter's 16-byte blocks meet every byte pattern. Against the units
 * read one varint at a time and the definition. */
static void test_chars_soup(void) {
    uint64_t seed = 0x2545f4914f6cdd1dull;
    unsigned cases = 0;
    for (int round = 0; round < 20000; round++) {
        enum { MAXN = 200 };
        uint8_t enc[MAXN * 4];
        size_t len = 0, n = (size_t)(test_splitmix(&seed) % MAXN);
        for (size_t i = 0; i < n; i++) {
            uint64_t r = test_splitmix(&seed);
            unsigned bytes = 1 + (unsigned)(r % 7 < 3 ? 0 : r % 7 - 3); /* 1..4 */
            for (unsigned b = 0; b + 1 < bytes; b++) {
                r >>= 3;
                enc[len++] = (uint8_t)(0x80 | (r % 5 == 0 ? 0 : r & 0x7f));
            }
            r >>= 8;
            enc[len++] = (uint8_t)(r % 4 == 0 ? (r >> 2) % 4 : (r >> 2) & 0x7f);
        }
        uint16_t u[MAXN];
        jfr_cur rc = {enc, enc + len, false, enc, 0};
        for (size_t i = 0; i < n; i++) {
            uint64_t v = 0;
            CHECK(jfr__cur_varint(&rc, &v));
            u[i] = (uint16_t)v;
        }
        uint8_t want[MAXN * 3 + 1];
        size_t wn = jw_utf16_to_wtf8(u, n, want);
        uint8_t *in = malloc(len ? len : 1), *out = malloc(n * 3 + 1);
        memcpy(in, enc, len);
        for (int wide = 0; wide < 2; wide++) { /* 16- and 32-byte blocks */
            jfr_cur c = {in, in + len, false, in, 0};
            long w = jfr__wire_chars_varint_at(&c, (uint32_t)n, out, wide);
            CHECK(w == (long)wn && memcmp(out, want, wn) == 0 && c.p == in + len);
        }
        free(in);
        free(out);
        cases++;
    }
    printf("strings: %u byte soups of 1- to 4-byte varints against the definition\n", cases);
}

/* Random runs of ASCII, two- and three-byte units, paired and lone
 * surrogates, varints padded with an extra byte, in exact-size buffers
 * (the sanitizers see any over-read): the converter's fast paths against
 * the definition, and every truncation fails without overrunning. */
static void test_chars_random(void) {
    uint64_t seed = 0x9e3779b97f4a7c15ull;
    unsigned cases = 0;
    for (int round = 0; round < 20000; round++) {
        uint16_t u[80];
        size_t n = (size_t)(test_splitmix(&seed) % 80);
        for (size_t i = 0; i < n; i++) {
            uint64_t r = test_splitmix(&seed);
            switch (r % 8) {
            case 0: case 1: case 2: u[i] = (uint16_t)(0x20 + (r >> 8) % 0x5f); break;
            case 3: u[i] = (uint16_t)(0x80 + (r >> 8) % 0x780); break;
            case 4: u[i] = (uint16_t)(0x800 + (r >> 8) % 0xd000); break;
            case 5: u[i] = (uint16_t)(0xd800 + (r >> 8) % 0x400); break;
            case 6: u[i] = (uint16_t)(0xdc00 + (r >> 8) % 0x400); break;
            default:
                if (r >> 8 & 1 && i + 1 < n) { /* a pair: U+10000 and up */
                    u[i++] = (uint16_t)(0xd800 + (r >> 9) % 0x400);
                    u[i] = (uint16_t)(0xdc00 + (r >> 19) % 0x400);
                } else {
                    u[i] = (uint16_t)(r >> 8);
                }
                break;
            }
        }
        uint8_t want[80 * 3 + 1];
        size_t wn = jw_utf16_to_wtf8(u, n, want);
        for (int fixed = 0; fixed < 2; fixed++) {
            uint8_t enc[80 * 4];
            size_t len = 0;
            for (size_t i = 0; i < n; i++) {
                uint32_t v = u[i];
                if (fixed) {
                    enc[len++] = (uint8_t)(v >> 8);
                    enc[len++] = (uint8_t)v;
                    continue;
                }
                bool pad = test_splitmix(&seed) % 16 == 0; /* a non-minimal varint */
                while (v >= 0x80 || pad) {
                    enc[len++] = (uint8_t)(0x80 | (v & 0x7f));
                    if (v < 0x80)
                        pad = false;
                    v >>= 7;
                }
                enc[len++] = (uint8_t)v;
            }
            uint8_t *in = malloc(len ? len : 1), *out = malloc(n * 3 + 1);
            memcpy(in, enc, len);
            jfr_cur c = {in, in + len, fixed, in, 0};
            long w = jfr__wire_chars_to_utf8(&c, (uint32_t)n, out);
            CHECK(w == (long)wn && memcmp(out, want, wn) == 0 && c.p == in + len);
            for (int wide = 0; !fixed && wide < 2; wide++) { /* 16- and 32-byte blocks */
                jfr_cur v = {in, in + len, fixed, in, 0};
                w = jfr__wire_chars_varint_at(&v, (uint32_t)n, out, wide);
                CHECK(w == (long)wn && memcmp(out, want, wn) == 0 && v.p == in + len);
                if (len) { /* one byte short */
                    jfr_cur t = {in, in + len - 1, fixed, in, 0};
                    CHECK(jfr__wire_chars_varint_at(&t, (uint32_t)n, out, wide) == -1);
                }
            }
            if (!fixed) { /* skipped as n varints (16, 8 and 1 at a time) */
                jfr_cur k = {in, in + len, fixed, in, 0};
                CHECK(jfr__cur_skip_varints(&k, n) && k.p == in + len);
            }
            if (len) { /* one byte short */
                jfr_cur t = {in, in + len - 1, fixed, in, 0};
                CHECK(jfr__wire_chars_to_utf8(&t, (uint32_t)n, out) == -1);
                jfr_cur k = {in, in + len - 1, fixed, in, 0};
                CHECK(fixed || !jfr__cur_skip_varints(&k, n));
            }
            free(in);
            free(out);
            cases++;
        }
    }
    printf("strings: %u random UTF-16 strings against the definition\n", cases);
}

/* n varints skipped at once (64, 16, 8 bytes a step) end where n single
 * skips end: random mixes of 1- to 9-byte varints, the 9-byte ones with a
 * last byte that has its sign bit set (it ends them all the same), in
 * exact-size buffers; one byte short fails. */
static void test_skip_varints_random(void) {
    uint64_t seed = 7;
    unsigned cases = 0;
    for (int round = 0; round < 20000; round++) {
        enum { MAXN = 400 };
        uint8_t buf[9 * MAXN];
        size_t len = 0, at[MAXN + 1];
        /* short runs with many 9-byte varints; long runs (the 64-byte
         * blocks) of short varints with rare 8- and 9-byte ones, so that
         * long ones also meet block boundaries */
        bool long_run = round % 2;
        uint64_t n = test_splitmix(&seed) % (long_run ? MAXN : 64);
        for (uint64_t i = 0; i < n; i++) {
            uint64_t r = test_splitmix(&seed);
            unsigned bytes = 1 + (unsigned)(r % 9);
            if (long_run)
                bytes = r % 97 == 0 ? 9 : r % 89 == 0 ? 8 : 1 + (unsigned)(r % 3);
            else if (r % 5 == 0)
                bytes = 9; /* many long ones: -1 as a long is 9 bytes */
            at[i] = len;
            for (unsigned b = 0; b + 1 < bytes; b++)
                buf[len++] = (uint8_t)(0x80 | (r >> (8 + b)));
            buf[len++] = (uint8_t)(bytes == 9 ? (r >> 40) | (r % 2 ? 0x80 : 0) : (r >> 40) & 0x7f);
        }
        at[n] = len;
        uint8_t *in = malloc(len ? len : 1);
        memcpy(in, buf, len);
        jfr_cur one = {in, in + len, false, in, 0};
        for (uint64_t i = 0; i < n; i++)
            CHECK(jfr__cur_skip_varint(&one));
        CHECK(one.p == in + len);
        jfr_cur all = {in, in + len, false, in, 0};
        CHECK(jfr__cur_skip_varints(&all, n) && all.p == in + len);
        if (n) { /* some of them: ends where the next one starts */
            uint64_t k = test_splitmix(&seed) % n;
            jfr_cur some = {in, in + len, false, in, 0};
            CHECK(jfr__cur_skip_varints(&some, k) && some.p == in + at[k]);
        }
        /* every count of a short run (fewer varints wanted than a 16- or
         * 8-byte load ends: up to the k-th terminator), from every start */
        for (uint64_t from = 0; !long_run && from < n; from++)
            for (uint64_t k = 0; from + k <= n; k++) {
                jfr_cur few = {in + at[from], in + len, false, in, 0};
                CHECK(jfr__cur_skip_varints(&few, k) && few.p == in + at[from + k]);
            }
        if (len) {
            jfr_cur cut = {in, in + len - 1, false, in, 0};
            CHECK(!jfr__cur_skip_varints(&cut, n));
        }
#if defined(__SSE2__) && defined(__GNUC__)
        if (n >= 64 && len >= 64) { /* the block loop alone, both widths: the
                                     * varints it took end at its stop */
            const uint8_t *stop[2];
            uint64_t left[2];
            for (int wide = 0; wide < 2; wide++) {
                unsigned open = 0;
                left[wide] = n;
                stop[wide] = jfr__skip_varint_blocks(in, in + len, &left[wide], &open, wide);
                CHECK(left[wide] <= n && stop[wide] - open == in + at[n - left[wide]]);
            }
            CHECK(stop[0] == stop[1] && left[0] == left[1]);
        }
#endif
        free(in);
        cases++;
    }
    printf("varints: %u random runs of 1- to 9-byte varints skipped at once\n", cases);
}

static void test_status_table(void) {
    CHECK(strcmp(jfr_status_name(JFR_BAD_MAGIC), "BAD_MAGIC") == 0);
    CHECK(strcmp(jfr_status_str(JFR_OK), "ok") == 0);
    CHECK(jfr_status_name((jfr_status)999) == NULL);
    CHECK(jfr_version_number() == JFR_VERSION_NUMBER);
    CHECK(strcmp(jfr_version_string(), JFR_VERSION_STRING) == 0);
}

int main(void) {
    test_varints();
    test_fixed_widths();
    test_strings();
    test_chars_random();
    test_chars_soup();
    test_skip_varints_random();
    test_status_table();
    printf("%d failures\n", g_failures);
    return g_failures ? 1 : 0;
}
