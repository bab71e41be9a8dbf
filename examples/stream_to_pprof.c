/*
 * stream_to_pprof.c — turn a JFR stream into a pprof profile.
 *
 *   stream_to_pprof FILE|- [EVENTS] > profile.pb.gz
 *
 * Reads a recording (or any JFR byte stream: `-` is standard input) in
 * blocks, pushes each block into the parser, folds the stack traces of the
 * selected events (EVENTS: "cpu", the default, "alloc", "lock", "wall", ...
 * or full type names, comma-separated) with the converter library, and
 * writes a gzip-compressed pprof profile on standard output: the bytes of
 * `jfrstream pprof --event EVENTS -o OUT FILE`. Build it against an
 * installed jfrstream with
 *
 *   cc stream_to_pprof.c $(pkg-config --cflags --libs jfrstream-conv) -o stream_to_pprof
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#define _POSIX_C_SOURCE 200809L /* open, read, under -std=c11 */

#include <jfrstream.h>
#include <jfrstream_conv.h>

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* The parser's chunk callbacks keep the profile's per-chunk tables. */
static int on_chunk_begin(jfr_parser *p, const jfr_chunk_info *c, void *user) {
    (void)p;
    jfrc_profile_chunk_begin(user, c);
    return JFR_CB_CONTINUE;
}

static int on_chunk_end(jfr_parser *p, const jfr_chunk_info *c, void *user) {
    (void)p;
    (void)c;
    jfrc_profile_chunk_end(user);
    return JFR_CB_CONTINUE;
}

/* Report damage and go on: the good chunks after it still count. */
static int on_error(jfr_parser *p, jfr_status s, const char *message, void *user) {
    (void)p;
    (void)s;
    (void)user;
    fprintf(stderr, "stream_to_pprof: %s\n", message);
    return JFR_CB_CONTINUE;
}

int main(int argc, char **argv) {
    if (argc < 2 || argc > 3) {
        fputs("usage: stream_to_pprof FILE|- [EVENTS] > profile.pb.gz\n", stderr);
        return 2;
    }
    int fd = strcmp(argv[1], "-") == 0 ? STDIN_FILENO : open(argv[1], O_RDONLY);
    if (fd < 0) {
        perror(argv[1]);
        return 1;
    }
    jfrc_profile *prof = jfrc_profile_new();
    if (!prof) {
        fputs("stream_to_pprof: out of memory\n", stderr);
        return 1;
    }
    if (jfrc_profile_select(prof, argc > 2 ? argv[2] : "cpu") != JFR_OK) {
        fprintf(stderr, "stream_to_pprof: %s\n", jfrc_profile_error(prof));
        jfrc_profile_free(prof);
        return 2;
    }

    /* The profile subscribes its event types; events of other types are
     * skipped by their size, undecoded. */
    jfr_callbacks cb = {.size = sizeof cb, /* see "STRUCTS YOU HAND IN" in jfrstream.h */
                        .on_chunk_begin = on_chunk_begin,
                        .on_chunk_end = on_chunk_end,
                        .on_error = on_error};
    jfr_parser *p = jfr_parser_new(NULL, &cb, prof);
    jfr_status s = p ? jfrc_profile_subscribe(prof, p) : JFR_NOMEM;
    static char buf[1 << 16];
    ssize_t n = 0;
    while (s == JFR_OK && (n = read(fd, buf, sizeof buf)) > 0)
        s = jfr_parser_feed(p, buf, (size_t)n);
    if (n < 0)
        perror(argv[1]);
    if (s == JFR_OK)
        s = jfr_parser_finish(p);
    int failed = n < 0 || s != JFR_OK || jfrc_profile_error(prof) != NULL;
    if (s != JFR_OK)
        fprintf(stderr, "stream_to_pprof: %s\n", p ? jfr_parser_error(p) : jfr_status_str(s));
    else if (jfrc_profile_error(prof))
        fprintf(stderr, "stream_to_pprof: %s\n", jfrc_profile_error(prof));
    jfr_parser_free(p);
    if (fd != STDIN_FILENO)
        close(fd);

    /* Whatever was read: totals, then the pprof bytes through a buffered
     * writer on standard output. */
    jfrc_out *out = jfrc_out_new_fd(STDOUT_FILENO, 0);
    if (!out || jfrc_profile_finish(prof) != JFR_OK ||
        jfrc_profile_write_pprof(prof, out) != JFR_OK) {
        fputs("stream_to_pprof: out of memory\n", stderr);
        failed = 1;
    }
    if (jfrc_out_flush(out) != JFR_OK) {
        perror("stream_to_pprof: standard output");
        failed = 1;
    }
    fprintf(stderr, "stream_to_pprof: %llu events folded\n",
            (unsigned long long)jfrc_profile_events(prof));
    jfrc_out_free(out);
    jfrc_profile_free(prof);
    return failed;
}
