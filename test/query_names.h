/* query_names.h — the query language's aggregates back under the names its
 * parser takes: JDK 25 prints the enum's names (AVERAGE(x)), which its own
 * parser refuses. For the tests that print a query and parse it again
 * (test/conv/test_query.c, test/fuzz/fuzz_query.c). Test code. */
#ifndef JFR_TEST_QUERY_NAMES_H
#define JFR_TEST_QUERY_NAMES_H

#include <string.h>

/* AVERAGE( -> AVG( and the like, in place, outside quoted texts. */
static inline void query_short_names(char *s) {
    static const char *const map[][2] = {{"AVERAGE(", "AVG("}, {"DIFFERENCE(", "DIFF("},
                                         {"MAXIMUM(", "MAX("}, {"MINIMUM(", "MIN("},
                                         {"STANDARD_DEVIATION(", "STDEV("}};
    char quote = 0;
    for (char *at = s; *at; at++) {
        if (quote) {
            if (*at == quote)
                quote = 0;
            continue;
        }
        if (*at == '\'' || *at == '"') {
            quote = *at;
            continue;
        }
        for (size_t m = 0; m < sizeof map / sizeof *map; m++) {
            size_t ll = strlen(map[m][0]), sl = strlen(map[m][1]);
            if (!strncmp(at, map[m][0], ll)) {
                memcpy(at, map[m][1], sl);
                memmove(at + sl, at + ll, strlen(at + ll) + 1);
                break;
            }
        }
    }
}

#endif
