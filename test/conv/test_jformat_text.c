/* The value formats of the text `jfr print` (lib/conv/jformat_text.c)
 * against JDK 25:
 *  - always, a table of texts JDK 25 printed (String.format's %.Nf, the
 *    durations and data amounts of ValueFormatter, PrettyWriter's
 *    timestamps and addresses): the main cases without a JDK;
 *  - given JDK-OUTPUT (what JformatText.java printed: "KIND INPUT\tTEXT"
 *    lines; jformat_text.py runs it), every line of it, with the results'
 *    lengths checked against the buffer sizes of jformat.h.
 *
 *   test_jformat_text [JDK-OUTPUT]
 *
 * Exit status: 0 all agree, 1 a difference (the first ones printed). */
#include "../harness.h"
#include "jformat.h"

#include <errno.h>
#include <math.h>

static long g_compared, g_throws;

/* got[0..n) against want; max: the bound the header promises (< max). */
static void same(const char *input, const char *got, size_t n, size_t max, const char *want) {
    g_compared++;
    if (n >= max || strlen(got) != n) {
        printf("FAIL: %s: length %zu (strlen %zu, limit %zu)\n", input, n, strlen(got), max);
        g_failures++;
    } else if (strcmp(got, want) != 0) {
        if (g_failures < 30)
            printf("FAIL: %s: got \"%s\", JDK \"%s\"\n", input, got, want);
        g_failures++;
    }
}

/* Each check formats into a buffer larger than the bound, so that an
 * overlong result is reported rather than an overflow. */
#define BUF_EXTRA 64

static void check_fixed(const char *input, double v, int prec, const char *want) {
    char buf[JFMT_FIXED_MAX + BUF_EXTRA];
    size_t n = jfmt_fixed(v, prec, buf);
    same(input, buf, n, JFMT_FIXED_MAX, want);
}

static void check_duration(const char *input, int64_t s, int32_t ns, const char *want) {
    char buf[JFMT_NUM_MAX + BUF_EXTRA];
    size_t n = jfmt_pretty_duration(s, ns, buf);
    same(input, buf, n, JFMT_NUM_MAX, want);
}

static void check_amount(const char *input, int64_t v, bool bits, bool rate, const char *want) {
    char buf[JFMT_NUM_MAX + BUF_EXTRA];
    size_t n = jfmt_data_amount(v, bits, rate, buf);
    same(input, buf, n, JFMT_NUM_MAX, want);
}

static void check_time(const char *input, int64_t s, int32_t ns, int32_t off, bool exact,
                       const char *want) {
    char buf[JFMT_TIME_MAX + BUF_EXTRA];
    size_t n = jfmt_pretty_time(s, ns, off, exact, buf);
    same(input, buf, n, JFMT_TIME_MAX, want);
}

static void check_hex(const char *input, int64_t v, const char *want) {
    char buf[JFMT_NUM_MAX + BUF_EXTRA];
    size_t n = jfmt_hex_address(v, buf);
    same(input, buf, n, JFMT_NUM_MAX, want);
}

/* ------------------------------------------------------------ the table
 * Copied from JDK 25's output for these inputs. */

static void test_table(void) {
    static const struct {
        double v;
        int prec;
        const char *want;
    } fixed[] = {
        /* the shortest decimal rounded half up (printf: 0.12, 1.00, 2.67, 1.4, 4.3) */
        {0.125, 0, "0"},
        {0.125, 1, "0.1"},
        {0.125, 2, "0.13"},
        {1.005, 2, "1.01"},
        {2.675, 2, "2.68"},
        {1.45, 1, "1.5"},
        {4.35, 1, "4.4"},
        {123456.785, 2, "123456.79"},
        {1e-7, 6, "0.000000"},
        {5e-7, 6, "0.000001"},
        {1e22, 1, "10000000000000000000000.0"},
        {1e23, 0, "100000000000000000000000"}, /* printf: 99999999999999991611392 */
        /* the sign of every negative, zero or not */
        {-0.0, 2, "-0.00"},
        {-0.001, 2, "-0.00"},
        {-0.005, 2, "-0.01"},
        {0.5, 0, "1"},
        {1.5, 0, "2"},
        {2.5, 0, "3"},
        {-0.5, 0, "-1"},
        {9.995, 2, "10.00"},
        {0.1 + 0.2, 17, "0.30000000000000004"},
        {1.0 / 3, 17, "0.33333333333333330"},
        {5e-324, 17, "0.00000000000000000"},
        {12.3, 9, "12.300000000"},
        {NAN, 2, "NaN"},
        {INFINITY, 1, "Infinity"},
        {-INFINITY, 1, "-Infinity"},
        {0.0, 0, "0"},
    };
    static const struct {
        int64_t s;
        int32_t ns;
        const char *want;
    } dur[] = {
        {0, 0, "0 s"},
        {0, 1, "0.000001 ms"},
        {0, 123, "0.000123 ms"},
        {0, 1005, "0.00101 ms"},
        {0, 9995, "0.0100 ms"},
        {0, 12300000, "12.3 ms"},
        {0, 123456789, "123 ms"},
        {0, 999499999, "999 ms"},
        {0, 999500000, "1.00 s"},
        {0, 999999999, "1.00 s"},
        {1, 5000000, "1.01 s"},
        {9, 995000000, "10.0 s"},
        {12, 345000000, "12.3 s"},
        {59, 949999999, "59.9 s"},
        {59, 995000000, "1 m 0 s"},
        {62, 0, "1 m 2 s"},
        {3599, 500000000, "1 h 0 m"},
        {3720, 0, "1 h 2 m"},
        {86370, 0, "1 d 0 h"},
        {93600, 0, "1 d 2 h"},
        {-1, 999999999, "-0.000001 ms"},
        {-13, 650000000, "-12.4 s"},
        {-62, 0, "-1 m 2 s"},
        /* the JDK throws ArithmeticException: the rounded value */
        {INT64_MAX, 0, "106751991167300 d 16 h"},
        {INT64_MIN, 0, "-106751991167300 d 16 h"},
    };
    static const struct {
        int64_t v;
        bool bits, rate;
        const char *want;
    } amount[] = {
        {0, false, false, "0 bytes"},
        {1, false, false, "1 byte"},
        {-1, false, false, "-1 byte"},
        {12, false, false, "12 bytes"},
        {1023, false, false, "1023 bytes"},
        {1024, false, false, "1.0 kB"},
        {1048575, false, false, "1024.0 kB"},
        {1048576, false, false, "1.0 MB"},
        {1125899906842623LL, false, false, "1.0 PB"}, /* 2^50 - 1 */
        {2304, false, false, "2.3 kB"},               /* 2.25 half up */
        {-2304, false, false, "-2.3 kB"},
        {INT64_MAX, false, false, "8.0 EB"},
        {INT64_MIN, false, false, "N/A"},
        {1, true, false, "1 bit"},
        {12, true, false, "12 bits"},
        {-1024, true, false, "-1.0 kbit"},
        {1048575, true, false, "1024.0 kbit"},
        {1, false, true, "1 byte/s"},
        {12, false, true, "12 byte/s"},
        {1127, false, true, "1.1 kB/s"},
        {1, true, true, "1 bps"},
        {12, true, true, "12 bps"},
        {1127, true, true, "1.1 kbps"},
        {INT64_MIN, true, true, "N/A"},
    };
    static const struct {
        int64_t s;
        int32_t ns, off;
        bool exact;
        const char *want;
    } time[] = {
        {0, 0, 0, false, "00:00:00.000 (1970-01-01)"},
        {0, 0, 0, true, "00:00:00.000000000 (1970-01-01)"},
        /* the year of era: year 0 is 0001 (a leap year), -1 is 0002 */
        {-62167219200LL, 0, 0, false, "00:00:00.000 (0001-01-01)"},
        {-62162078400LL, 0, 0, false, "12:00:00.000 (0001-02-29)"},
        {-62167219201LL, 999999999, 0, false, "23:59:59.999 (0002-12-31)"},
        {-62167219201LL, 999999999, 0, true, "23:59:59.999999999 (0002-12-31)"},
        {-62198755200LL, 0, 0, false, "00:00:00.000 (0002-01-01)"},
        {-62198755200LL, 0, 64800, false, "18:00:00.000 (0002-01-01)"},
        {253402300799LL, 999999999, 0, false, "23:59:59.999 (9999-12-31)"},
        {253402300800LL, 0, 0, false, "00:00:00.000 (+10000-01-01)"},
        {253402300800LL, 0, -1, false, "23:59:59.000 (9999-12-31)"},
        /* the milliseconds of Long.MAX_VALUE and MIN_VALUE */
        {9223372036854775LL, 807000000, 0, false, "07:12:55.807 (+292278994-08-17)"},
        {-9223372036854776LL, 192000000, 0, false, "16:47:04.192 (+292275056-05-16)"},
    };
    static const struct {
        int64_t v;
        const char *want;
    } hex[] = {
        {0, "0x00000000"},
        {255, "0x000000FF"},
        {-1, "0xFFFFFFFFFFFFFFFF"},
        {545766266488LL, "0x7F12345678"},
        {INT64_MIN, "0x8000000000000000"},
        {4294967295LL, "0xFFFFFFFF"},
    };
    char in[96];
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++) {
        snprintf(in, sizeof in, "table fixed %d %.17g", fixed[i].prec, fixed[i].v);
        check_fixed(in, fixed[i].v, fixed[i].prec, fixed[i].want);
    }
    for (size_t i = 0; i < sizeof dur / sizeof dur[0]; i++) {
        snprintf(in, sizeof in, "table duration %" PRId64 " %" PRId32, dur[i].s, dur[i].ns);
        check_duration(in, dur[i].s, dur[i].ns, dur[i].want);
    }
    for (size_t i = 0; i < sizeof amount / sizeof amount[0]; i++) {
        snprintf(in, sizeof in, "table %s%s %" PRId64, amount[i].bits ? "bits" : "bytes",
                 amount[i].rate ? "/s" : "", amount[i].v);
        check_amount(in, amount[i].v, amount[i].bits, amount[i].rate, amount[i].want);
    }
    for (size_t i = 0; i < sizeof time / sizeof time[0]; i++) {
        snprintf(in, sizeof in, "table time%s %" PRId64 " %" PRId32 " %" PRId32,
                 time[i].exact ? "x" : "", time[i].s, time[i].ns, time[i].off);
        check_time(in, time[i].s, time[i].ns, time[i].off, time[i].exact, time[i].want);
    }
    for (size_t i = 0; i < sizeof hex / sizeof hex[0]; i++) {
        snprintf(in, sizeof in, "table hex %" PRId64, hex[i].v);
        check_hex(in, hex[i].v, hex[i].want);
    }
}

/* ------------------------------------------------------------ the JDK's lines */

/* The next integer of a line (base 10, or 16 for the double's bits). */
static bool next_int(char **p, int base, int64_t *out) {
    char *end;
    errno = 0;
    *out = base == 16 ? (int64_t)strtoull(*p, &end, 16) : strtoll(*p, &end, 10);
    if (end == *p || errno != 0)
        return false;
    *p = end;
    return true;
}

static bool in_range(int64_t v, int64_t lo, int64_t hi) { return v >= lo && v <= hi; }

/* One "KIND INPUT\tTEXT" line; false when it does not parse. */
static bool check_line(char *line) {
    char *tab = strchr(line, '\t');
    if (!tab)
        return false;
    *tab = '\0';
    const char *want = tab + 1, *input = line;
    char *sp = strchr(line, ' ');
    if (!sp)
        return false;
    size_t kl = (size_t)(sp - line);
    char *p = sp + 1;
    int64_t a, b, c;
    if (want[0] == '!') { /* the JDK throws: no text to compare */
        if (g_throws++ < 10)
            printf("note: JDK throws %s for %s\n", want + 1, input);
        return true;
    }
#define KIND(s) (kl == sizeof s - 1 && memcmp(line, s, kl) == 0)
    if (KIND("fixed")) {
        if (!next_int(&p, 10, &a) || !in_range(a, 0, 17) || !next_int(&p, 16, &b))
            return false;
        double v;
        uint64_t bits = (uint64_t)b;
        memcpy(&v, &bits, sizeof v);
        check_fixed(input, v, (int)a, want);
    } else if (KIND("duration")) {
        if (!next_int(&p, 10, &a) || !next_int(&p, 10, &b) || !in_range(b, 0, 999999999))
            return false;
        check_duration(input, a, (int32_t)b, want);
    } else if (KIND("bytes") || KIND("bits") || KIND("bytes/s") || KIND("bits/s")) {
        if (!next_int(&p, 10, &a))
            return false;
        check_amount(input, a, line[1] == 'i', line[kl - 1] == 's' && line[kl - 2] == '/', want);
    } else if (KIND("time") || KIND("timex")) {
        if (!next_int(&p, 10, &a) || !next_int(&p, 10, &b) || !in_range(b, 0, 999999999) ||
            !next_int(&p, 10, &c) || !in_range(c, -64800, 64800))
            return false;
        check_time(input, a, (int32_t)b, (int32_t)c, KIND("timex"), want);
    } else if (KIND("hex")) {
        if (!next_int(&p, 10, &a))
            return false;
        check_hex(input, a, want);
    } else {
        return false;
    }
#undef KIND
    return *p == '\0';
}

static void test_jdk_output(const char *path) {
    FILE *f = fopen(path, "r");
    if (!f) {
        printf("FAIL: cannot open %s\n", path);
        g_failures++;
        return;
    }
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    long lines = 0, before = g_compared;
    while ((len = getline(&line, &cap, f)) > 0) {
        lines++;
        if (line[len - 1] == '\n')
            line[--len] = '\0';
        if (!check_line(line)) {
            printf("FAIL: %s:%ld does not parse\n", path, lines);
            g_failures++;
        }
    }
    free(line);
    fclose(f);
    long n = g_compared - before;
    printf("%ld lines of the JDK: %ld texts compared, %ld where the JDK throws\n", lines, n,
           g_throws);
    if (n < 10000) { /* JformatText.java prints far more: a truncated run */
        printf("FAIL: only %ld cases from %s\n", n, path);
        g_failures++;
    }
}

int main(int argc, char **argv) {
    if (argc > 2) {
        fprintf(stderr, "usage: %s [JDK-OUTPUT]\n", argv[0]);
        return 2;
    }
    test_table();
    printf("table: %ld texts compared\n", g_compared);
    if (argc == 2)
        test_jdk_output(argv[1]);
    printf("%s: %d difference(s)\n", g_failures ? "FAIL" : "ok", g_failures);
    return g_failures ? 1 : 0;
}
