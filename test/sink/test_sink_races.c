/*
 * test_sink_races.c — the sink library's shared state touched from several
 * threads, for the ThreadSanitizer build (suite tsan; plain builds run it
 * too and check the answers):
 *   metrics-http-logger  libmicrohttpd calls the endpoint's logger on its own
 *                        threads (a malformed request, an oversized header)
 *                        while jfrs_metrics_http_start stores the daemon it
 *                        got: the logger must not read that store;
 *   pyroscope-init       jfrs_pyroscope_new from 8 threads at once: libcurl's
 *                        global init done once, without a data race;
 *   metrics-basic-auth   8 clients at once with basic auth against the
 *                        endpoint's users (a plain one, a bcrypt one of cost
 *                        4: its cache written and read by the server's
 *                        threads together), good and wrong passwords: every
 *                        answer right, the 401 counter exact.
 * Each case SKIPs (exit 77 when all do) in a build without its library.
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#include "../harness.h"
#include "jfrstream_sink.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

static const char metrics_body[] = "# TYPE up gauge\nup 1\n";

static bool scrape(void *user, char **body, size_t *len) {
    (void)user;
    *body = malloc(sizeof metrics_body);
    if (!*body)
        return false;
    memcpy(*body, metrics_body, sizeof metrics_body);
    *len = sizeof metrics_body - 1;
    return true;
}

/* One request on a fresh connection to 127.0.0.1:port; the answer's status
 * code (0: no answer). */
static int http_status(int port, const char *req, size_t len) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0)
        return 0;
    struct timeval tv = {5, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int code = 0;
    if (connect(fd, (struct sockaddr *)&a, sizeof a) == 0) {
        size_t off = 0;
        while (off < len) {
            ssize_t w = send(fd, req + off, len - off, MSG_NOSIGNAL);
            if (w <= 0)
                break;
            off += (size_t)w;
        }
        char buf[256];
        size_t got = 0;
        ssize_t r;
        while (got < sizeof buf - 1 && (r = recv(fd, buf + got, sizeof buf - 1 - got, 0)) > 0)
            got += (size_t)r;
        buf[got] = '\0';
        if (sscanf(buf, "HTTP/1.%*d %d", &code) != 1)
            code = 0;
    }
    close(fd);
    return code;
}

/* The malformed requests come from a child process: ThreadSanitizer orders
 * every socket operation of one process after the previous ones (one sync
 * object for all sockets), so a client in this process would hide the race. */
static int malformed_requests(int port) {
    static const char garbage[] = "\x01\x02 not http\r\n\r\n";
    int bad = http_status(port, garbage, sizeof garbage - 1);
    size_t big = 64 * 1024; /* over the 32 KiB per connection */
    char *huge = malloc(big + 64);
    if (!huge)
        return 1;
    int n = snprintf(huge, 64, "GET /metrics HTTP/1.1\r\nX-Big: ");
    memset(huge + n, 'a', big);
    memcpy(huge + n + big, "\r\n\r\n", 4);
    int big_st = http_status(port, huge, (size_t)n + big + 4);
    free(huge);
    printf("metrics-http-logger: garbage answered %d, a 64 KiB header %d\n", bad, big_st);
    fflush(stdout);
    return bad == 400 && (big_st == 431 || big_st == 413 || big_st == 400 || big_st == 0) ? 0 : 1;
}

static int metrics_http_logger(void) {
    if (!jfrs_metrics_http_available()) {
        printf("SKIP metrics-http-logger: built without libmicrohttpd (libmicrohttpd-dev)\n");
        return 77;
    }
    int fds[2];
    CHECK(pipe(fds) == 0);
    fflush(stdout);
    pid_t pid = fork(); /* before any thread of this process */
    if (pid == 0) {
        close(fds[1]);
        int port = 0;
        _exit(read(fds[0], &port, sizeof port) == sizeof port ? malformed_requests(port) : 1);
    }
    CHECK(pid > 0);
    close(fds[0]);
    char err[256];
    jfrs_metrics_http *h = NULL;
    CHECK(jfrs_metrics_http_start("127.0.0.1", 0, scrape, NULL, &h, err, sizeof err) == JFR_OK);
    int port = h ? jfrs_metrics_http_port(h) : 0;
    CHECK(port > 0);
    /* the child's requests make libmicrohttpd log, on its threads */
    CHECK(write(fds[1], &port, sizeof port) == sizeof port);
    close(fds[1]);
    int ws = 0;
    CHECK(pid > 0 && waitpid(pid, &ws, 0) == pid && WIFEXITED(ws) && WEXITSTATUS(ws) == 0);
    static const char get[] = "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
    if (h)
        CHECK(http_status(port, get, sizeof get - 1) == 200);
    jfrs_metrics_http_stop(h);
    printf("metrics-http-logger: /metrics 200 after them\n");
    return 0;
}

#define NTHREADS 8
static pthread_barrier_t go;

/* bob's password's bcrypt hash (cost 4, made by Python's crypt) */
static const char users[] = "alice:al1ce\n"
                            "bob:$2b$04$PRmcY1soSIXwJp54r2/6IehjmAFIPKPNj29GIeFEwqS4XsiNMavd2\n";
#define AUTH_ROUNDS 4

static void *auth_client(void *arg) {
    int port = *(int *)arg;
    static const char *const req[] = {
        "GET /metrics HTTP/1.1\r\nHost: x\r\nAuthorization: Basic Ym9iOmIwYi1wdw==\r\n"
        "Connection: close\r\n\r\n", /* bob:b0b-pw */
        "GET /metrics HTTP/1.1\r\nHost: x\r\nAuthorization: Basic YWxpY2U6YWwxY2U=\r\n"
        "Connection: close\r\n\r\n", /* alice:al1ce */
        "GET /metrics HTTP/1.1\r\nHost: x\r\nAuthorization: Basic Ym9iOndyb25n\r\n"
        "Connection: close\r\n\r\n", /* bob:wrong */
    };
    static const int want[] = {200, 200, 401};
    pthread_barrier_wait(&go);
    intptr_t bad = 0;
    for (int r = 0; r < AUTH_ROUNDS; r++)
        for (int i = 0; i < 3; i++)
            if (http_status(port, req[i], strlen(req[i])) != want[i])
                bad++;
    return (void *)bad;
}

/* The clients, in a child process (see malformed_requests). */
static int auth_clients(int port) {
    pthread_t t[NTHREADS];
    pthread_barrier_init(&go, NULL, NTHREADS);
    for (int i = 0; i < NTHREADS; i++)
        if (pthread_create(&t[i], NULL, auth_client, &port) != 0)
            return 1;
    intptr_t bad = 0;
    for (int i = 0; i < NTHREADS; i++) {
        void *r;
        pthread_join(t[i], &r);
        bad += (intptr_t)r;
    }
    pthread_barrier_destroy(&go);
    printf("metrics-basic-auth: %d requests from %d clients at once, %ld wrong answers\n",
           NTHREADS * AUTH_ROUNDS * 3, NTHREADS, (long)bad);
    fflush(stdout);
    return bad ? 1 : 0;
}

static int metrics_basic_auth(void) {
    if (!jfrs_metrics_http_available()) {
        printf("SKIP metrics-basic-auth: built without libmicrohttpd (libmicrohttpd-dev)\n");
        return 77;
    }
    int fds[2];
    CHECK(pipe(fds) == 0);
    fflush(stdout);
    pid_t pid = fork(); /* before any thread of this process (TSan forbids threads
                         * in the child of a threaded process) */
    if (pid == 0) {
        close(fds[1]);
        int port = 0;
        _exit(read(fds[0], &port, sizeof port) == sizeof port && port > 0 ? auth_clients(port)
                                                                            : 77);
    }
    CHECK(pid > 0);
    close(fds[0]);
    jfrs_metrics_http_config c;
    jfrs_metrics_http_config_init(&c);
    c.basic_auth = users;
    char err[256];
    jfrs_metrics_http *h = NULL;
    jfr_status st = jfrs_metrics_http_start_with(&c, scrape, NULL, &h, err, sizeof err);
    int port = h ? jfrs_metrics_http_port(h) : 0;
    CHECK(write(fds[1], &port, sizeof port) == sizeof port); /* 0: the child stops */
    close(fds[1]);
    int ws = 0;
    CHECK(pid > 0 && waitpid(pid, &ws, 0) == pid && WIFEXITED(ws));
    if (st == JFR_INVALID_ARG && strstr(err, "bcrypt")) {
        printf("SKIP metrics-basic-auth: %s\n", err);
        return 77;
    }
    CHECK(st == JFR_OK && h && WEXITSTATUS(ws) == 0);
    uint64_t n = jfrs_metrics_http_unauthorized(h);
    CHECK(n == NTHREADS * AUTH_ROUNDS);
    jfrs_metrics_http_stop(h);
    printf("metrics-basic-auth: %llu answered 401, as sent\n", (unsigned long long)n);
    return 0;
}

static void *pyroscope_thread(void *arg) {
    jfr_status *st = arg;
    jfrs_pyroscope_config c;
    jfrs_pyroscope_config_init(&c);
    c.url = "http://127.0.0.1:9"; /* never contacted: nothing is pushed */
    pthread_barrier_wait(&go);
    jfrs_pyroscope *p = NULL;
    *st = jfrs_pyroscope_new(&c, &p);
    jfrs_pyroscope_free(p);
    return NULL;
}

static int pyroscope_init(void) {
    if (!jfrs_pyroscope_available()) {
        printf("SKIP pyroscope-init: built without libcurl (libcurl4-openssl-dev)\n");
        return 77;
    }
    pthread_t t[NTHREADS];
    jfr_status st[NTHREADS];
    pthread_barrier_init(&go, NULL, NTHREADS);
    for (int i = 0; i < NTHREADS; i++)
        CHECK(pthread_create(&t[i], NULL, pyroscope_thread, &st[i]) == 0);
    for (int i = 0; i < NTHREADS; i++) {
        pthread_join(t[i], NULL);
        CHECK(st[i] == JFR_OK);
    }
    pthread_barrier_destroy(&go);
    printf("pyroscope-init: %d sinks started at once\n", NTHREADS);
    return 0;
}

int main(int argc, char **argv) {
    static const struct {
        const char *name;
        int (*run)(void);
    } cases[] = {{"metrics-http-logger", metrics_http_logger},
                 {"pyroscope-init", pyroscope_init},
                 {"metrics-basic-auth", metrics_basic_auth}};
    int ran = 0, skipped = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        if (argc > 1 && strcmp(argv[1], cases[i].name) != 0)
            continue;
        int rc = cases[i].run();
        ran++;
        if (rc == 77)
            skipped++;
        else if (rc)
            g_failures++;
    }
    if (!ran) {
        fprintf(stderr, "usage: %s [metrics-http-logger|pyroscope-init|metrics-basic-auth]\n",
                argv[0]);
        return 2;
    }
    if (g_failures) {
        fprintf(stderr, "%d failure(s)\n", g_failures);
        return 1;
    }
    return skipped == ran ? 77 : 0;
}
