/*
 * test_sink_source.c — a source's labels (jfrstream_sink.h): the identity read
 * from test/data/workload.jfr (a JDK 17 recording: its jdk.JVMInformation
 * says pid 14951, the source launcher's main class), at every feed size the
 * same; the user's labels, their override and their checks; the JSON.
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#include "../harness.h"
#include "jfrstream_sink.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static jfrs_source *labels_of(const uint8_t *data, size_t len, size_t slice) {
    jfrs_source *s = jfrs_source_new("peer", "127.0.0.1:40000", NULL);
    CHECK(s);
    jfr_parser *p = jfr_parser_new(NULL, NULL, NULL);
    CHECK(p);
    CHECK(jfrs_source_subscribe(s, p) == JFR_OK);
    for (size_t off = 0; off < len; off += slice) {
        size_t n = len - off < slice ? len - off : slice;
        CHECK(jfr_parser_feed(p, data + off, n) == JFR_OK);
    }
    CHECK(jfr_parser_finish(p) == JFR_OK);
    jfr_parser_free(p);
    return s;
}

int main(int argc, char **argv) {
    CHECK(argc == 3);
    size_t len = 0, len2 = 0;
    uint8_t *data = read_file(argv[1], &len);
    uint8_t *synth = read_file(argv[2], &len2);
    CHECK(data && synth);

    /* before any event: the origin names the source */
    jfrs_source *s = jfrs_source_new("peer", "[::1]:5000", NULL);
    CHECK(s && !jfrs_source_identified(s));
    CHECK(strcmp(jfrs_source_id(s), "[::1]:5000") == 0);
    CHECK(strcmp(jfrs_source_json(s), "{\"source\":\"[::1]:5000\",\"peer\":\"[::1]:5000\"}") == 0);
    jfrs_source_free(s);

    const char *want_json = NULL;
    static const size_t slices[] = {1, 7, 4096, 1u << 30};
    for (size_t k = 0; k < sizeof slices / sizeof *slices; k++) {
        s = labels_of(data, len, slices[k]);
        CHECK(jfrs_source_identified(s));
        CHECK(strcmp(jfrs_source_get(s, "pid"), "14951") == 0);
        CHECK(strcmp(jfrs_source_get(s, "main_class"),
                     "jdk.compiler/com.sun.tools.javac.launcher.Main") == 0);
        CHECK(strcmp(jfrs_source_get(s, "jvm_name"), "OpenJDK 64-Bit Server VM") == 0);
        CHECK(strncmp(jfrs_source_get(s, "jvm_version"), "OpenJDK 64-Bit Server VM (17.", 29) == 0);
        const char *start = jfrs_source_get(s, "jvm_start");
        CHECK(start && strlen(start) == 13); /* epoch milliseconds */
        char id[64];
        snprintf(id, sizeof id, "127.0.0.1:14951:%s", start);
        CHECK(strcmp(jfrs_source_id(s), id) == 0);
        CHECK(strcmp(jfrs_source_get(s, "source"), id) == 0);
        CHECK(strcmp(jfrs_source_key(s, 0), "source") == 0);
        CHECK(strcmp(jfrs_source_key(s, 1), "peer") == 0);
        CHECK(jfrs_source_get(s, "service") == NULL); /* the workload sets none */
        if (!want_json)
            want_json = strdup(jfrs_source_json(s));
        CHECK(strcmp(jfrs_source_json(s), want_json) == 0);

        /* user labels: checked, appended, overriding a derived one */
        uint64_t g = jfrs_source_generation(s);
        CHECK(jfrs_source_set(s, "env", "prod \"eu\"\n") == JFR_OK);
        CHECK(jfrs_source_generation(s) > g);
        CHECK(jfrs_source_set(s, "main_class", "Mine") == JFR_OK);
        CHECK(strcmp(jfrs_source_get(s, "main_class"), "Mine") == 0);
        CHECK(jfrs_source_set(s, "9lives", "x") == JFR_INVALID_ARG);
        CHECK(jfrs_source_set(s, "a-b", "x") == JFR_INVALID_ARG);
        CHECK(jfrs_source_set(s, "", "x") == JFR_INVALID_ARG);
        size_t n = jfrs_source_nlabels(s);
        CHECK(strcmp(jfrs_source_key(s, n - 2), "env") == 0);
        CHECK(strcmp(jfrs_source_key(s, n - 1), "main_class") == 0);
        CHECK(strstr(jfrs_source_json(s), "\"env\":\"prod \\\"eu\\\"\\n\"") != NULL);
        CHECK(jfrs_source_set(s, "ctl", "a\x01\\b") == JFR_OK);
        CHECK(strstr(jfrs_source_json(s), "\"ctl\":\"a\\u0001\\\\b\"") != NULL);
        /* escaped as the event JSON's strings (jfrc_out_json_string): '/' as
         * \/, non-ASCII as \uXXXX (UTF-16), malformed UTF-8 as U+FFFD as
         * JDK 25's new String(bytes, UTF_8) decodes it (checked with it:
         * ff, c3 28, ed a0 80 -> FFFD, FFFD '(', FFFD) */
        CHECK(jfrs_source_set(s, "team", "caf\xc3\xa9/\xf0\x9f\x98\x80 \xff\xc3(\xed\xa0\x80z") ==
              JFR_OK);
        CHECK(strstr(jfrs_source_json(s),
                     "\"team\":\"caf\\u00e9\\/\\ud83d\\ude00 \\ufffd\\ufffd(\\ufffdz\"") != NULL);
        jfrs_source_free(s);
    }

    /* a recording without jdk.JVMInformation: the origin stays the id */
    jfrs_source *t = jfrs_source_new("path", "/tmp/repo", NULL);
    jfr_parser *p = jfr_parser_new(NULL, NULL, NULL);
    CHECK(t && p && jfrs_source_subscribe(t, p) == JFR_OK);
    CHECK(jfr_parser_feed(p, synth, len2) == JFR_OK && jfr_parser_finish(p) == JFR_OK);
    CHECK(!jfrs_source_identified(t) && strcmp(jfrs_source_id(t), "/tmp/repo") == 0);
    CHECK(strcmp(jfrs_source_get(t, "path"), "/tmp/repo") == 0);
    jfr_parser_free(p);
    jfrs_source_free(t);

    free((void *)want_json);
    free(data);
    free(synth);
    if (g_failures)
        return 1;
    puts("source: ok");
    return 0;
}
