/* sinktest.h — helpers of the sink library's tests (test/sink/test_*.c):
 * parser callbacks that feed a metrics source, the exposition without the
 * lines that hold the time, a loopback port nobody listens on. */
#ifndef JFR_TEST_SINKTEST_H
#define JFR_TEST_SINKTEST_H

#include "../harness.h"
#include "jfrstream_sink.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static inline int sinktest_begin(jfr_parser *p, const jfr_chunk_info *c, void *u) {
    (void)p;
    jfrs_metrics_src_chunk_begin(u, c);
    return JFR_CB_CONTINUE;
}
static inline int sinktest_meta(jfr_parser *p, const jfr_metadata *m, void *u) {
    (void)p;
    jfrs_metrics_src_metadata(u, m);
    return JFR_CB_CONTINUE;
}
static inline int sinktest_record(jfr_parser *p, const jfr_record *r, void *u) {
    (void)p;
    jfrs_metrics_src_record(u, r);
    return JFR_CB_CONTINUE;
}
static inline int sinktest_end(jfr_parser *p, const jfr_chunk_info *c, void *u) {
    (void)p;
    (void)c;
    jfrs_metrics_src_chunk_end(u);
    return JFR_CB_CONTINUE;
}
static inline int sinktest_error(jfr_parser *p, jfr_status st, const char *m, void *u) {
    (void)p;
    (void)m;
    jfrs_metrics_src_error(u, st);
    return JFR_CB_CONTINUE;
}

/* Callbacks whose user pointer is a jfrs_metrics_src: every record,
 * chunk, metadata and error reaches it. */
static inline void sinktest_metrics_callbacks(jfr_callbacks *cb) {
    jfr_callbacks_init(cb);
    cb->on_chunk_begin = sinktest_begin;
    cb->on_metadata = sinktest_meta;
    cb->on_record = sinktest_record;
    cb->on_chunk_end = sinktest_end;
    cb->on_error = sinktest_error;
}

/* A copy (malloc) of the exposition `t` without the lines that hold the
 * time; NULL for NULL. */
static inline char *sinktest_stable(const char *t) {
    if (!t)
        return NULL;
    char *out = malloc(strlen(t) + 1), *o = out;
    CHECK(out);
    if (!out)
        return NULL;
    for (const char *l = t; *l;) {
        const char *nl = strchr(l, '\n');
        size_t n = nl ? (size_t)(nl - l) + 1 : strlen(l);
        char line[4096];
        snprintf(line, sizeof line, "%.*s", (int)n, l);
        if (!strstr(line, "timestamp_seconds") && !strstr(line, "start_time_seconds")) {
            memcpy(o, l, n);
            o += n;
        }
        l += n;
    }
    *o = '\0';
    return out;
}

/* A loopback port nobody listens on (bound, then closed). */
static inline int sinktest_closed_port(void) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t al = sizeof a;
    CHECK(fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof a) == 0 &&
          getsockname(fd, (struct sockaddr *)&a, &al) == 0);
    close(fd);
    return ntohs(a.sin_port);
}

#endif
