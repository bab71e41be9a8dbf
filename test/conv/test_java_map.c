/*
 * test_java_map.c — lib/conv/java_map.c against java.util.HashMap.
 *
 * usage: test_java_map CASES.txt  (the lines MapOrder.java prints: "n
 * trailing h0 .. h(n-1) | i0 .. i(n-1)"). Each case's keys go through
 * jq_java_map_order, whose order must be the JDK's; and once with every
 * allocation refused in turn (false, nothing held: the counting allocator).
 */
#include "../harness.h" /* CHECK and talloc, the counting allocator */
#include "query_run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: test_java_map CASES.txt\n");
        return 2;
    }
    FILE *f = fopen(argv[1], "r");
    if (!f) {
        perror(argv[1]);
        return 1;
    }
    size_t cases = 0, bad = 0, keys = 0;
    size_t n;
    int trailing;
    while (fscanf(f, "%zu %d", &n, &trailing) == 2) {
        int32_t *hash = malloc((n ? n : 1) * sizeof *hash);
        size_t *want = malloc((n ? n : 1) * sizeof *want), *got = malloc((n ? n : 1) * sizeof *got);
        CHECK(hash && want && got);
        for (size_t k = 0; k < n; k++)
            CHECK(fscanf(f, "%d", &hash[k]) == 1);
        CHECK(fscanf(f, " |") == 0);
        for (size_t k = 0; k < n; k++)
            CHECK(fscanf(f, "%zu", &want[k]) == 1);
        jfr_allocator plain = {0};
        CHECK(jq_java_map_order(&plain, hash, n, trailing != 0, got));
        if (memcmp(got, want, n * sizeof *got) != 0) {
            size_t k = 0;
            while (got[k] == want[k])
                k++;
            if (bad++ < 5)
                fprintf(stderr, "case %zu (%zu keys, trailing %d): place %zu is key %zu, the JDK's %zu\n",
                        cases, n, trailing, k, got[k], want[k]);
        }
        if (cases < 8) /* every allocation refused in turn */
            for (size_t fail = 1;; fail++) {
                talloc t;
                talloc_init(&t);
                t.fail_at = fail;
                t.fail_once = true;
                jfr_allocator a = talloc_allocator(&t);
                bool ok = jq_java_map_order(&a, hash, n, trailing != 0, got);
                CHECK(t.cur == 0 && t.bad_size == 0);
                CHECK(ok == (t.failed == 0));
                if (ok) {
                    CHECK(memcmp(got, want, n * sizeof *got) == 0);
                    break;
                }
            }
        keys += n;
        cases++;
        free(hash);
        free(want);
        free(got);
    }
    fclose(f);
    CHECK(cases > 0);
    printf("java-map: %zu cases, %zu keys, %zu differ\n", cases, keys, bad);
    return bad || g_failures ? 1 : 0;
}
