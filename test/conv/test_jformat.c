/* Java-compatible formatting (lib/conv/jformat_*.c), linked from its sources:
 *  - Double.toString / Float.toString for values whose text JDK 25 printed
 *    (and new String(bytes, UTF_8) for the JSON string), through every path: short decimals,
 *    powers of two, 16- and 17-digit values, subnormals, extremes;
 *  - random decimals n / 10^k of 1 to 17 digits and their neighbours one
 *    ulp away: the text reads back as the value (strtod), and a decimal of at
 *    most 15 digits prints with exactly its own digits;
 *  - JSON strings: \uXXXX escapes of two-, three- and four-byte UTF-8 and
 *    of bytes that are not UTF-8, into a 1-byte buffer and a large one;
 *    from UTF-16 units as varints (jfmt_json_chars) against each unit's
 *    escape and the UTF-8 path;
 *  - the integers' digits (lib/digits.h, shared with the sinks): 0, every
 *    power of ten and its neighbours, UINT64_MAX, and random values against
 *    printf, forwards and backwards. */
#include "../harness.h"
#include "digits.h"
#include "jformat.h"

#include <math.h>
#include <stdlib.h>

static void check_double(double v, const char *want) {
    char buf[64];
    size_t n = jfmt_double(v, buf);
    if (n != strlen(want) || memcmp(buf, want, n) != 0) {
        printf("FAIL: jfmt_double(%.17g) = %.*s, want %s\n", v, (int)n, buf, want);
        g_failures++;
    }
}

static void check_float(float v, const char *want) {
    char buf[64];
    size_t n = jfmt_float(v, buf);
    if (n != strlen(want) || memcmp(buf, want, n) != 0) {
        printf("FAIL: jfmt_float(%.9g) = %.*s, want %s\n", (double)v, (int)n, buf, want);
        g_failures++;
    }
}

static void test_known(void) {
    /* short decimals */
    check_double(0.1, "0.1");
    check_double(0.3, "0.3");
    check_double(0.5, "0.5");
    check_double(2.5, "2.5");
    check_double(12.5, "12.5");
    check_double(249.5, "249.5");
    check_double(1.0, "1.0");
    check_double(100.0, "100.0");
    check_double(1234567.0, "1234567.0");
    check_double(0.001, "0.001");
    check_double(1e-4, "1.0E-4");
    check_double(1e7, "1.0E7");
    check_double(1.5e300, "1.5E300");
    check_double(8.41e21, "8.41E21");
    check_double(1e23, "1.0E23");
    check_double(123456789012345.6, "1.234567890123456E14");
    check_double(-0.25, "-0.25");
    /* 16 and 17 digits */
    check_double(0.1 + 0.2, "0.30000000000000004");
    check_double(1.0 / 3, "0.3333333333333333");
    check_double(2.0 / 3, "0.6666666666666666");
    check_double(9007199254740992.0, "9.007199254740992E15");
    check_double(1.7976931348623157e308, "1.7976931348623157E308");
    /* powers of two, subnormals, zero, specials */
    check_double(0x1p-1074, "4.9E-324");
    check_double(0x1p-1022, "2.2250738585072014E-308");
    check_double(1024.0, "1024.0");
    check_double(0x1p60, "1.152921504606847E18");
    check_double(0.0, "0.0");
    check_double(-0.0, "-0.0");
    check_double(NAN, "NaN");
    check_double(INFINITY, "Infinity");
    check_double(-INFINITY, "-Infinity");
    /* floats */
    check_float(0.1f, "0.1");
    check_float(1.5f, "1.5");
    check_float(1e-5f, "1.0E-5");
    check_float(3.4028235e38f, "3.4028235E38");
    check_float(1.4e-45f, "1.4E-45");
    check_float(0.33333334f, "0.33333334");
    printf("jformat: known Double.toString / Float.toString outputs\n");
}

/* Significant digits of Java's text: the digits, without leading zeros
 * and without the zeros that end the mantissa. */
static int sig_digits(const char *s, size_t n, char *digits) {
    int k = 0;
    for (size_t i = 0; i < n && s[i] != 'E'; i++)
        if (s[i] >= '0' && s[i] <= '9' && (k || s[i] != '0'))
            digits[k++] = s[i];
    while (k > 1 && digits[k - 1] == '0')
        k--;
    digits[k] = 0;
    return k;
}

static void test_random(void) {
    static const double p10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,
                                 1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17,
                                 1e18, 1e19, 1e20, 1e21, 1e22, 1e23, 1e24, 1e25};
    uint64_t seed = 42;
    unsigned shortest = 0, cases = 0;
    for (int t = 0; t < 300000; t++) {
        int p = 1 + (int)(test_splitmix(&seed) % 17), k = (int)(test_splitmix(&seed) % 26);
        uint64_t m = test_splitmix(&seed) % (uint64_t)p10[p];
        double d = (double)m / p10[k];
        int nb = (int)(test_splitmix(&seed) % 3);
        if (nb == 1)
            d = nextafter(d, INFINITY);
        else if (nb == 2)
            d = nextafter(d, 0);
        char buf[64], got[32], want[32];
        size_t n = jfmt_double(d, buf);
        buf[n] = 0;
        cases++;
        /* Java's text for the value reads back as the value */
        CHECK(strtod(buf, NULL) == d || (d == 0 && strtod(buf, NULL) == 0));
        /* (10^23 and up are not exact doubles: d is then not the double
         * nearest to m / 10^k) */
        if (nb || m == 0 || p > 15 || k > 22)
            continue;
        /* a decimal of at most 15 digits is the only one that short */
        snprintf(want, sizeof want, "%llu", (unsigned long long)m);
        int wn = sig_digits(want, strlen(want), want);
        int gn = sig_digits(buf, n, got);
        if (gn != wn || strcmp(got, want) != 0) {
            printf("FAIL: %llu / 10^%d printed as %s\n", (unsigned long long)m, k, buf);
            g_failures++;
        }
        shortest++;
    }
    printf("jformat: %u random decimals and neighbours read back, %u short ones exact\n", cases,
           shortest);
}

/* The fast shortest-decimal search against the exact one (printf and
 * strtod, itself checked above): random bit patterns (every exponent,
 * subnormals and specials included), decimals of up to 17 digits and their
 * neighbours, powers of two and their neighbours, integers. A mutation of
 * the fast search (its tie to even, an interval end, a power of two's
 * narrower interval below) shows here. */
static void test_fast_vs_exact(void) {
    uint64_t seed = 7;
    unsigned cases = 0, differ = 0;
    char a[64], b[64];
    for (int t = 0; t < 240000; t++) {
        uint64_t r = test_splitmix(&seed), bits;
        double d;
        float f;
        uint32_t fb;
        switch (t % 6) {
        case 0: /* any double */
            bits = r;
            memcpy(&d, &bits, sizeof d);
            break;
        case 1: { /* a short decimal, or a neighbour */
            int p = 1 + (int)(r % 17), k = (int)((r >> 8) % 40) - 20;
            uint64_t m = test_splitmix(&seed) % 100000000000000000ull;
            for (int i = p; i < 17; i++)
                m /= 10;
            d = (double)m * pow(10, k);
            if (r >> 62 == 1)
                d = nextafter(d, INFINITY);
            else if (r >> 62 == 2)
                d = nextafter(d, 0);
            break;
        }
        case 2: { /* a power of two, or a neighbour */
            d = ldexp(1.0, (int)(r % 2098) - 1074);
            if (r >> 62 == 1)
                d = nextafter(d, INFINITY);
            else if (r >> 62 == 2)
                d = nextafter(d, 0);
            break;
        }
        case 3: /* an integer */
            d = (double)(r >> (r % 64));
            break;
        case 4: /* any float */
            fb = (uint32_t)r;
            memcpy(&f, &fb, sizeof f);
            d = f;
            break;
        default: { /* a float power of two or short decimal, or a neighbour */
            f = (r & 1) ? ldexpf(1.0f, (int)((r >> 1) % 277) - 149)
                        : (float)((double)((r >> 8) % 10000000) * pow(10, (int)((r >> 40) % 60) - 30));
            if (r >> 62 == 1)
                f = nextafterf(f, INFINITY);
            else if (r >> 62 == 2)
                f = nextafterf(f, 0);
            d = f;
            break;
        }
        }
        size_t na, nb;
        if (t % 6 >= 4) {
            f = (float)d;
            na = jfmt_float(f, a);
            nb = jfmt_float_exact(f, b);
        } else {
            na = jfmt_double(d, a);
            nb = jfmt_double_exact(d, b);
        }
        cases++;
        if (na != nb || memcmp(a, b, na) != 0) {
            if (differ++ < 10)
                printf("FAIL: %s %a: fast %.*s, exact %.*s\n", t % 6 >= 4 ? "float" : "double",
                       d, (int)na, a, (int)nb, b);
            g_failures++;
        }
    }
    printf("jformat: %u doubles and floats, fast search against the exact one: %u differ\n",
           cases, differ);
}

static int sink(void *user, const void *data, size_t len) {
    outbuf *big = user;
    ob_write(big, data, len);
    return 0;
}

static void test_json_strings(void) {
    /* é (2 bytes), 中 (3), 😀 (4: a surrogate pair), a lone continuation
     * byte, a truncated sequence, an encoded surrogate (CESU) */
    const char s[] = "a\xc3\xa9 \xe4\xb8\xad\xf0\x9f\x98\x80 \x80 \xe4\xb8 \xed\xa0\x80 z\"";
    const char *want_java = "a\\u00e9 \\u4e2d\\ud83d\\ude00 \\ufffd \\ufffd \\ufffd z\\\"";
    for (int tiny = 0; tiny < 2; tiny++) {
        outbuf big, o;
        CHECK(ob_init(&big, -1, 1024, NULL));
        big.grow = true;
        CHECK(ob_init(&o, -1, tiny ? 1 : 4096, NULL));
        o.write_fn = sink;
        o.write_user = &big;
        jfmt_json_string(&o, s, sizeof s - 1, true);
        ob_flush(&o);
        if (big.len != strlen(want_java) || memcmp(big.buf, want_java, big.len) != 0) {
            printf("FAIL: JSON string (buffer %zu): %.*s\n", o.cap, (int)big.len, big.buf);
            g_failures++;
        }
        ob_free(&o);
        ob_free(&big);
    }
    printf("jformat: JSON string escapes through 1-byte and 4 KiB buffers\n");
}

/* One string through a writer of `cap` bytes (0: a growing memory writer);
 * the JSON lands in *big. */
static void json_through(outbuf *big, const char *s, size_t n, bool java, size_t cap) {
    outbuf o;
    big->len = 0;
    if (cap) {
        CHECK(ob_init(&o, -1, cap, NULL));
        o.write_fn = sink;
        o.write_user = big;
    } else {
        CHECK(ob_init(&o, -1, 16, NULL));
        o.grow = true;
    }
    jfmt_json_string(&o, s, n, java);
    if (cap)
        ob_flush(&o);
    else
        ob_write(big, o.buf, o.len);
    ob_free(&o);
}

/* Random strings of pieces: well-formed ones, whose JSON is known (so the
 * string's JSON is the pieces' in a row), and damaged ones, whose JSON must
 * at least be the same through every buffer size (the word-at-a-time paths
 * store up to the buffer's last bytes). */
static void test_json_random(void) {
    static const struct {
        const char *in, *json;
    } good[] = {
        {"a", "a"}, {"Z9", "Z9"}, {" ", " "}, {"\"", "\\\""}, {"\\", "\\\\"}, {"/", "\\/"},
        {"\n", "\\n"}, {"\t", "\\t"}, {"\x01", "\\u0001"}, {"\x1f", "\\u001f"},
        {"\xc3\xa9", "\\u00e9"}, {"\xd1\x80", "\\u0440"}, {"\xe4\xb8\xad", "\\u4e2d"},
        {"\xef\xbf\xbf", "\\uffff"}, {"\xf0\x9f\x98\x80", "\\ud83d\\ude00"},
        {"\xf4\x8f\xbf\xbf", "\\udbff\\udfff"}, {"long ascii run 0123456789 ", "long ascii run 0123456789 "},
    };
    static const char *bad[] = {"\x80", "\xbf", "\xc3", "\xe4\xb8", "\xed\xa0\x80", "\xf4\x90\x80\x80",
                                "\xf0\x80\x80", "\xc0\xaf", "\xe0\x80\xaf", "\xff", "\xf0\x9f\x98", "\x7f"};
    const size_t ngood = sizeof good / sizeof *good, nbad = sizeof bad / sizeof *bad;
    static const size_t caps[] = {0, 1, 7, 8, 13, 64, 4096};
    outbuf big, ref;
    CHECK(ob_init(&big, -1, 1024, NULL));
    CHECK(ob_init(&ref, -1, 1024, NULL));
    big.grow = ref.grow = true;
    uint64_t seed = 15;
    unsigned cases = 0, known = 0;
    for (int t = 0; t < 40000; t++) {
        char s[512], want[4096];
        size_t n = 0, wn = 0;
        bool damaged = test_splitmix(&seed) % 3 == 0;
        int np = (int)(test_splitmix(&seed) % 48);
        for (int k = 0; k < np; k++) {
            uint64_t r = test_splitmix(&seed);
            const char *in, *json = NULL;
            if (damaged && r % 5 == 0) {
                in = bad[(r >> 8) % nbad];
            } else {
                in = good[(r >> 8) % ngood].in;
                json = good[(r >> 8) % ngood].json;
            }
            size_t l = strlen(in);
            if (n + l > sizeof s)
                break;
            memcpy(s + n, in, l);
            n += l;
            if (json) {
                memcpy(want + wn, json, strlen(json));
                wn += strlen(json);
            }
        }
        bool java = test_splitmix(&seed) & 1;
        json_through(&ref, s, n, java, 4096);
        for (size_t c = 0; c < sizeof caps / sizeof *caps; c++) {
            json_through(&big, s, n, java, caps[c]);
            if (big.len != ref.len || memcmp(big.buf, ref.buf, ref.len) != 0) {
                printf("FAIL: JSON of random string %d differs through a %zu-byte buffer\n", t,
                       caps[c]);
                g_failures++;
            }
        }
        if (!damaged) {
            known++;
            if (ref.len != wn || memcmp(ref.buf, want, wn) != 0) {
                printf("FAIL: JSON of random string %d: %.*s\n", t, (int)ref.len, ref.buf);
                g_failures++;
            }
        }
        cases++;
    }
    ob_free(&big);
    ob_free(&ref);
    printf("jformat: %u random strings through 7 buffer sizes, %u of them against their known "
           "JSON\n",
           cases, known);
}

/* A varint of v, at least minlen bytes (zero groups added), at most 9
 * (the ninth takes eight bits): the encoding of compressed integers. */
static size_t put_varint(unsigned char *o, uint64_t v, int minlen) {
    size_t n = 0;
    for (;;) {
        if (n == 8) {
            o[n++] = (unsigned char)v;
            return n;
        }
        unsigned char b = v & 0x7f;
        v >>= 7;
        if (v == 0 && (int)n + 1 >= minlen) {
            o[n++] = b;
            return n;
        }
        o[n++] = b | 0x80;
    }
}

/* jfmt_json_chars against two definitions, through every buffer size:
 * each unit escaped alone (jfmt_json_char) and the string's UTF-8 (WTF-8)
 * through jfmt_json_string. Random units of every class (ASCII, escapes,
 * two- and three-byte UTF-8, surrogates paired and alone), as shortest
 * varints and, one in eight, as longer ones (up to nine bytes, bits above
 * the unit set). */
static void test_json_chars(void) {
    static const size_t caps[] = {0, 1, 7, 8, 13, 64, 4096};
    outbuf got, want, via;
    CHECK(ob_init(&got, -1, 1024, NULL));
    CHECK(ob_init(&want, -1, 1024, NULL));
    CHECK(ob_init(&via, -1, 1024, NULL));
    got.grow = want.grow = via.grow = true;
    uint64_t seed = 84;
    unsigned cases = 0, long_varints = 0;
    for (int t = 0; t < 40000; t++) {
        uint16_t units[200];
        unsigned char raw[200 * 9];
        uint8_t wtf[200 * 4];
        size_t nu = test_splitmix(&seed) % 200, nr = 0;
        int ascii_run = (int)(test_splitmix(&seed) % 4); /* some strings mostly ASCII */
        for (size_t i = 0; i < nu; i++) {
            uint64_t r = test_splitmix(&seed);
            uint32_t u;
            switch (ascii_run && r % 8 != 0 ? 0 : (r >> 3) % 9) {
            case 0: u = 0x20 + (uint32_t)(r >> 8) % 0x5f; break; /* printable ASCII */
            case 1: u = "\"\\/\b\n\t\f\r\x7f\x01\x1f"[(r >> 8) % 11]; break;
            case 2: u = (uint32_t)(r >> 8) % 0x20; break;           /* controls, NUL */
            case 3: u = 0x80 + (uint32_t)(r >> 8) % 0x780; break;   /* two-byte UTF-8 */
            case 4: u = 0x800 + (uint32_t)(r >> 8) % 0x3800; break; /* two-byte varint */
            case 5: u = 0x4000 + (uint32_t)(r >> 8) % 0x9800; break;
            case 6: u = 0xe000 + (uint32_t)(r >> 8) % 0x2000; break;
            case 7: /* a pair, or a lone surrogate */
                u = 0xd800 + (uint32_t)(r >> 8) % 0x400;
                if ((r >> 20) % 3 && i + 1 < nu)
                    units[i++] = (uint16_t)u, u = 0xdc00 + (uint32_t)(r >> 32) % 0x400;
                break;
            default: u = 0xdc00 + (uint32_t)(r >> 8) % 0x400; break;
            }
            units[i] = (uint16_t)u;
        }
        for (size_t i = 0; i < nu; i++) {
            uint64_t r = test_splitmix(&seed);
            uint64_t v = units[i];
            int minlen = 1;
            if (r % 8 == 0) { /* longer than needed */
                v |= (r >> 16) << 16 >> ((r >> 3) % 48);
                v = (v & ~0xffffull) | units[i];
                minlen = 1 + (int)((r >> 8) % 9);
                long_varints++;
            }
            nr += put_varint(raw + nr, v, minlen);
        }
        size_t nw = jw_utf16_to_wtf8(units, nu, wtf);
        want.len = 0;
        for (size_t i = 0; i < nu; i++)
            jfmt_json_char(&want, units[i]);
        json_through(&via, (const char *)wtf, nw, false, 4096);
        if (via.len != want.len || memcmp(via.buf, want.buf, want.len) != 0) {
            printf("FAIL: chars %d: jfmt_json_string of the WTF-8 is not the units' escapes\n", t);
            g_failures++;
        }
        for (size_t c = 0; c < sizeof caps / sizeof *caps; c++) {
            outbuf o;
            got.len = 0;
            if (caps[c]) {
                CHECK(ob_init(&o, -1, caps[c], NULL));
                o.write_fn = sink;
                o.write_user = &got;
            } else {
                CHECK(ob_init(&o, -1, 16, NULL));
                o.grow = true;
            }
            jfmt_json_chars(&o, (const char *)raw, nr);
            if (caps[c])
                ob_flush(&o);
            else
                ob_write(&got, o.buf, o.len);
            ob_free(&o);
            if (got.len != want.len || memcmp(got.buf, want.buf, want.len) != 0) {
                printf("FAIL: jfmt_json_chars of string %d through a %zu-byte buffer: %.*s\n", t,
                       caps[c], (int)got.len, got.buf);
                g_failures++;
            }
        }
        cases++;
    }
    ob_free(&got);
    ob_free(&want);
    ob_free(&via);
    printf("jformat: %u random UTF-16 strings as varints (%u longer varints) through 7 buffer "
           "sizes, against each unit's escape and the WTF-8 path\n",
           cases, long_varints);
}

static void check_digits(uint64_t v) {
    char want[32], fwd[JFR_DIGITS_MAX + 1], back[JFR_DIGITS_MAX];
    int wn = snprintf(want, sizeof want, "%llu", (unsigned long long)v);
    size_t fn = (size_t)(jfr__digits(fwd, v) - fwd);
    char *b = jfr__digits_back(back + sizeof back, v);
    size_t bn = (size_t)(back + sizeof back - b);
    if (fn != (size_t)wn || memcmp(fwd, want, fn) != 0 || bn != (size_t)wn ||
        memcmp(b, want, bn) != 0) {
        printf("FAIL: digits of %s: %.*s / %.*s\n", want, (int)fn, fwd, (int)bn, b);
        g_failures++;
    }
}

static void test_digits(void) {
    check_digits(0);
    check_digits(UINT64_MAX);
    for (uint64_t p = 1;; p *= 10) {
        check_digits(p - 1);
        check_digits(p);
        check_digits(p + 1);
        if (p > UINT64_MAX / 10)
            break;
    }
    uint64_t x = 0x9E3779B97F4A7C15u;
    for (int i = 0; i < 100000; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        check_digits(x >> (i % 64));
    }
}

int main(void) {
    test_digits();
    test_known();
    test_random();
    test_fast_vs_exact();
    test_json_strings();
    test_json_random();
    test_json_chars();
    printf("%d failures\n", g_failures);
    return g_failures ? 1 : 0;
}
