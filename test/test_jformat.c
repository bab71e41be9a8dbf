/* Java-compatible formatting (lib/conv/jformat.c), linked from its sources:
 *  - Double.toString / Float.toString for values whose text JDK 25 printed
 *    (and new String(bytes, UTF_8) for the JSON string), through every path: short decimals,
 *    powers of two, 16- and 17-digit values, subnormals, extremes;
 *  - random decimals n / 10^k of 1 to 17 digits and their neighbours one
 *    ulp away: the text reads back as the value (strtod), and a decimal of at
 *    most 15 digits prints with exactly its own digits;
 *  - JSON strings: \uXXXX escapes of two-, three- and four-byte UTF-8 and
 *    of bytes that are not UTF-8, into a 1-byte buffer and a large one. */
#include "harness.h"
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
        CHECK(ob_init(&big, -1, 1024));
        big.grow = true;
        CHECK(ob_init(&o, -1, tiny ? 1 : 4096));
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
        CHECK(ob_init(&o, -1, cap));
        o.write_fn = sink;
        o.write_user = big;
    } else {
        CHECK(ob_init(&o, -1, 16));
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
    CHECK(ob_init(&big, -1, 1024));
    CHECK(ob_init(&ref, -1, 1024));
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

int main(void) {
    test_known();
    test_random();
    test_fast_vs_exact();
    test_json_strings();
    test_json_random();
    printf("%d failures\n", g_failures);
    return g_failures ? 1 : 0;
}
