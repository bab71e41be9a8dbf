/* test_tls.c — the listener's TLS (jfr_uv_tls_config), through the library's
 * API, against an OpenSSL client on a thread (blocking sockets):
 *   - load errors: a missing file (JFR_IO), a file that is not PEM and a key
 *     of another certificate (JFR_INVALID_ARG), no key, allow patterns
 *     without a client CA: each with config.error naming the member and
 *     file; older and newer callers' jfr_uv_tls_config;
 *   - a plaintext peer, another CA's certificate, no certificate, a subject
 *     not allowed, a silent peer (handshake_timeout_ms): on_conn_end with
 *     JFR_REFUSED and the reason, never on_conn_start nor a parser callback,
 *     counted in jfr_uv_listener_refused and _tls_refused;
 *   - the fixture sent in records of 1..7 bytes (and 1-byte records first)
 *     through mutual TLS gives every event, also with a callback pausing
 *     every 97th event (resumed from a timer);
 *   - the listener's allocator balanced over a mutual-TLS stream, then each
 *     of its 50 allocations refused in turn: no crash, no leak;
 *   - jfr_uv_listener_stop during a handshake: JFR_STOPPED, not a refusal.
 * The certificates come from test/certs.py (the openssl command).
 *
 *      test_tls FIXTURE.jfr test/certs.py
 *
 * Without OpenSSL in the library: the TLS config is refused with
 * JFR_UNSUPPORTED (checked), then SKIP (77). */
#define UVPEER_NAME "test_tls"
#include "uvpeer.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#ifdef TEST_HAVE_OPENSSL
#include <openssl/err.h>
#include <openssl/ssl.h>
#endif

/* (unused in a build without OpenSSL, which only checks JFR_UNSUPPORTED) */
__attribute__((unused)) static uint8_t *g_fix;
__attribute__((unused)) static size_t g_len;
__attribute__((unused)) static uint64_t g_events; /* of the fixture */
static char g_dir[256];   /* the certificates */

/* The path of a certificate file (the main thread's: a few at a time). */
static char *cert(const char *name) {
    static char buf[8][400];
    static int i;
    char *b = buf[i++ % 8];
    snprintf(b, sizeof buf[0], "%s/%.100s", g_dir, name);
    return b;
}

/* ------------------------------------------------------------ listener side */

typedef struct run {
    unsigned expect;    /* connections to end before the listener stops */
    unsigned ended, started;
    uint64_t events;
    jfr_status status;  /* of the last on_conn_end */
    char msg[512];
    bool pause;         /* pause every 97th event */
    jfr_uv_conn *paused;
    uv_timer_t resume;
    jfr_uv_listener *l;
    uint64_t refused, tls_refused; /* at the end */
} run;

static run *g_run;
static jfr_options *g_opts; /* the listener's (a counting allocator), or NULL */

static void resume_cb(uv_timer_t *t) {
    run *r = t->data;
    jfr_uv_conn *c = r->paused;
    r->paused = NULL;
    jfr_uv_conn_resume(c);
}

static int on_event(jfr_parser *p, const jfr_event *e, void *user) {
    (void)p, (void)e;
    run *r = g_run;
    r->events++;
    if (r->pause && r->events % 97 == 0) {
        r->paused = user;
        uv_timer_start(&r->resume, resume_cb, 0, 0);
        return JFR_CB_PAUSE;
    }
    return JFR_CB_CONTINUE;
}

static void on_conn_start(jfr_uv_conn *c, void *user) {
    (void)c;
    ((run *)user)->started++;
}

static void on_conn_end(jfr_uv_conn *c, jfr_status st, const char *msg, void *user) {
    (void)c;
    run *r = user;
    r->status = st;
    snprintf(r->msg, sizeof r->msg, "%s", msg);
    if (++r->ended == r->expect) {
        r->refused = jfr_uv_listener_refused(r->l);
        r->tls_refused = jfr_uv_listener_tls_refused(r->l);
        jfr_uv_listener_stop(r->l);
    }
}

static void on_end(jfr_uv_listener *l, void *user) {
    (void)l;
    uv_close((uv_handle_t *)&((run *)user)->resume, NULL);
}

__attribute__((unused)) static jfr_uv_tls_config tls_cfg(const char *ca) {
    jfr_uv_tls_config t = JFR_UV_TLS_CONFIG_INIT;
    t.cert_file = cert("server.pem");
    t.key_file = cert("server.key");
    t.client_ca_file = ca;
    return t;
}

/* Start a listener; *err gets config.error. */
static jfr_status start(uv_loop_t *loop, run *r, const jfr_uv_tls_config *tls, char *err,
                        size_t errlen) {
    static jfr_callbacks cb;
    jfr_callbacks_init(&cb);
    cb.on_event = on_event;
    jfr_uv_listener_config cfg = JFR_UV_LISTENER_CONFIG_INIT;
    cfg.port = 0;
    cfg.callbacks = &cb;
    cfg.options = g_opts;
    cfg.on_conn_start = on_conn_start;
    cfg.on_conn_end = on_conn_end;
    cfg.on_end = on_end;
    cfg.user = r;
    cfg.tls = tls;
    cfg.error = err;
    cfg.error_size = errlen;
    g_run = r;
    jfr_status st = jfr_uv_listener_start(loop, &cfg, &r->l, NULL);
    if (st == JFR_OK) {
        uv_timer_init(loop, &r->resume);
        r->resume.data = r;
    }
    return st;
}

#ifdef TEST_HAVE_OPENSSL /* the client and the cases */
/* -------------------------------------------------------------- client side */

typedef enum { C_TLS, C_PLAIN, C_SILENT } client_kind;

typedef struct client {
    client_kind kind;
    int port;
    const char *cert; /* "client" -> client.pem, client.key; NULL: none */
    unsigned max_record; /* TLS records of 1..max_record bytes; 0: one write */
    pthread_t th;
} client;

static int tcp_connect(int port) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        perror("connect");
        if (fd >= 0)
            close(fd);
        return -1;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return fd;
}

static void drain(int fd) { /* until the listener closes */
    char b[256];
    struct timeval tv = {.tv_sec = 15};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    while (recv(fd, b, sizeof b, 0) > 0) {
    }
}

static void *client_main(void *arg) {
    client *c = arg;
    int fd = tcp_connect(c->port);
    if (fd < 0)
        return NULL;
    if (c->kind == C_PLAIN) {
        size_t off = 0;
        while (off < g_len) {
            ssize_t n = send(fd, g_fix + off, g_len - off, MSG_NOSIGNAL);
            if (n <= 0)
                break;
            off += (size_t)n;
        }
        shutdown(fd, SHUT_WR);
        drain(fd);
    } else if (c->kind == C_SILENT) {
        drain(fd);
    }
    else {
        SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
        char ca[400], pem[400], key[400];
        snprintf(ca, sizeof ca, "%s/ca.pem", g_dir);
        SSL_CTX_load_verify_locations(ctx, ca, NULL);
        SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
        if (c->cert) {
            snprintf(pem, sizeof pem, "%s/%.50s.pem", g_dir, c->cert);
            snprintf(key, sizeof key, "%s/%.50s.key", g_dir, c->cert);
            CHECK(SSL_CTX_use_certificate_chain_file(ctx, pem) == 1);
            CHECK(SSL_CTX_use_PrivateKey_file(ctx, key, SSL_FILETYPE_PEM) == 1);
        }
        SSL *ssl = SSL_new(ctx);
        SSL_set_fd(ssl, fd);
        SSL_set1_host(ssl, "127.0.0.1");
        if (SSL_connect(ssl) == 1) {
            unsigned seed = 7;
            size_t off = 0;
            while (off < g_len) {
                size_t n = !c->max_record ? g_len - off
                           : off < 4096   ? 1
                                          : 1 + rnd_next(&seed) % c->max_record;
                if (n > g_len - off)
                    n = g_len - off;
                if (SSL_write(ssl, g_fix + off, (int)n) <= 0)
                    break; /* refused after the handshake (TLS 1.3) */
                off += n;
            }
            SSL_shutdown(ssl);
        }
        shutdown(fd, SHUT_WR);
        drain(fd);
        SSL_free(ssl);
        SSL_CTX_free(ctx);
        ERR_clear_error();
    }
    close(fd);
    return NULL;
}

/* Run one listener with TLS config `tls` and one client; r gets the end. */
static void one(run *r, const jfr_uv_tls_config *tls, client *c, bool stop_in_handshake) {
    uv_loop_t loop;
    uv_timer_t deadline;
    uv_loop_init(&loop);
    char err[300];
    r->expect = 1;
    jfr_status st = start(&loop, r, tls, err, sizeof err);
    CHECK(st == JFR_OK || (g_opts && st == JFR_NOMEM));
    if (st != JFR_OK) {
        if (!g_opts)
            fprintf(stderr, "  start: %s\n", err);
        uv_run(&loop, UV_RUN_DEFAULT);
        uv_loop_close(&loop);
        return;
    }
    c->port = jfr_uv_listener_port(r->l);
    pthread_create(&c->th, NULL, client_main, c);
    if (stop_in_handshake) {
        while (jfr_uv_listener_connections(r->l) == 0)
            uv_run(&loop, UV_RUN_ONCE);
        r->refused = jfr_uv_listener_refused(r->l);
        r->tls_refused = jfr_uv_listener_tls_refused(r->l);
        jfr_uv_listener_stop(r->l);
    }
    uvpeer_run(&loop, &deadline, 30000);
    uvpeer_loop_close(&loop, &deadline);
    pthread_join(c->th, NULL);
}

/* ------------------------------------------------------------------- cases */

static void test_load_errors(void) {
    struct {
        const char *cert, *key, *ca;
        size_t nallow;
        jfr_status want;
        const char *msg; /* start of config.error */
    } cases[] = {
        {"/nonexistent.pem", "server.key", NULL, 0, JFR_IO,
         "cert_file /nonexistent.pem: No such file or directory"},
        {"server.pem", "/nonexistent.key", NULL, 0, JFR_IO,
         "key_file /nonexistent.key: No such file or directory"},
        {"server.pem", "server.key", "/nonexistent-ca", 0, JFR_IO,
         "client_ca_file /nonexistent-ca: No such file or directory"},
        {"ca.srl", "server.key", NULL, 0, JFR_INVALID_ARG, "cert_file "},
        {"server.pem", "other.key", NULL, 0, JFR_INVALID_ARG, "key_file "},
        {"server.pem", NULL, NULL, 0, JFR_INVALID_ARG, "TLS: key_file not set"},
        {"server.pem", "server.key", NULL, 1, JFR_INVALID_ARG,
         "TLS: allow patterns need client_ca_file"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        uv_loop_t loop;
        uv_loop_init(&loop);
        jfr_uv_tls_config t = JFR_UV_TLS_CONFIG_INIT;
        const char *pat = "x";
        t.cert_file = cases[i].cert[0] == '/' ? cases[i].cert : cert(cases[i].cert);
        t.key_file = !cases[i].key          ? NULL
                     : cases[i].key[0] == '/' ? cases[i].key
                                              : cert(cases[i].key);
        t.client_ca_file = cases[i].ca;
        t.allow = &pat;
        t.allow_count = cases[i].nallow;
        run r;
        memset(&r, 0, sizeof r);
        char err[300] = "unset";
        jfr_status st = start(&loop, &r, &t, err, sizeof err);
        printf("load error %zu: %s: %s\n", i, jfr_status_name(st), err);
        CHECK(st == cases[i].want);
        CHECK(strncmp(err, cases[i].msg, strlen(cases[i].msg)) == 0);
        if (i == 3 || i == 4) /* the file, then OpenSSL's reason */
            CHECK(strstr(err, i == 3 ? "ca.srl: " : "other.key: ") != NULL);
        uv_run(&loop, UV_RUN_DEFAULT);
        CHECK(uv_loop_close(&loop) == 0);
    }
}

/* Older caller: a jfr_uv_tls_config ending before handshake_timeout_ms,
 * 0xA5 after it (read, the timeout would be ~12 EB and a silent peer never
 * refused in time); newer: 64 zero bytes more. Both time a silent peer out
 * (older: at the default, so only checked to start and stop cleanly). */
static void test_sized(void) {
    SIZED_BUF(jfr_uv_tls_config) older, newer;
    jfr_uv_tls_config base = tls_cfg(NULL);
    base.handshake_timeout_ms = 150;
    size_t old_size = offsetof(jfr_uv_tls_config, handshake_timeout_ms);
    uv_loop_t loop;
    uv_loop_init(&loop);
    run r;
    memset(&r, 0, sizeof r);
    char err[300];
    CHECK(start(&loop, &r, sized_older(&older, &base, sizeof base, old_size, 0xA5), err,
                sizeof err) == JFR_OK);
    jfr_uv_listener_stop(r.l);
    uv_run(&loop, UV_RUN_DEFAULT);
    CHECK(uv_loop_close(&loop) == 0);

    newer.c = base;
    memset(&r, 0, sizeof r);
    client c = {.kind = C_SILENT};
    uint64_t t0 = uv_hrtime();
    one(&r, sized_newer(&newer, sizeof newer.c), &c, false);
    double ms = (double)(uv_hrtime() - t0) / 1e6;
    printf("sized: older (%zu of %zu bytes) started; newer: silent peer refused after %.0f ms: "
           "%s\n", old_size, sizeof base, ms, r.msg);
    CHECK(r.status == JFR_REFUSED && strstr(r.msg, "refused: TLS handshake timeout (150 ms)"));
    CHECK(ms >= 140 && ms < 5000);
}

/* The listener's allocator (jfr_options) balanced over a mutual-TLS
 * stream; then each of its allocations refused in turn (the listener's
 * TLS state, decryption buffer, connection, parser, writes): no crash, no
 * leak, every free with its size. OpenSSL's own memory is not in it (see
 * jfrstream_uv.h, TLS). */
static void test_alloc(const jfr_uv_tls_config *t) {
    talloc a;
    talloc_init(&a);
    jfr_options o;
    jfr_options_init(&o);
    talloc_options(&o, &a);
    g_opts = &o;
    run r;
    memset(&r, 0, sizeof r);
    client c = {.kind = C_TLS, .cert = "client"};
    one(&r, t, &c, false);
    size_t n = a.nalloc;
    CHECK(r.events == g_events && r.status == JFR_OK && a.cur == 0 && a.bad_size == 0);
    unsigned ok = 0, nomem = 0;
    for (size_t k = 1; k <= n; k++) {
        talloc_init(&a);
        a.fail_at = k;
        a.fail_once = true;
        memset(&r, 0, sizeof r);
        client ck = {.kind = C_TLS, .cert = "client"};
        one(&r, t, &ck, false);
        ok += r.status == JFR_OK && r.events == g_events;
        nomem += r.status == JFR_NOMEM || r.ended == 0;
        if (a.cur != 0 || a.bad_size != 0)
            fprintf(stderr, "  allocation %zu refused: %zu bytes left, %s\n", k, a.cur,
                    a.bad_detail);
        CHECK(a.cur == 0 && a.bad_size == 0);
    }
    g_opts = NULL;
    printf("allocator: %zu allocations for a mutual-TLS stream, balanced; each refused in "
           "turn: %u runs still delivered every event, %u ended short (NOMEM or a failed "
           "start), no leak\n", n, ok, nomem);
}

static void refused(const char *what, const jfr_uv_tls_config *t, client c, const char *reason) {
    run r;
    memset(&r, 0, sizeof r);
    one(&r, t, &c, false);
    printf("%s: %s: %s (refused %llu, tls %llu)\n", what, jfr_status_name(r.status), r.msg,
           (unsigned long long)r.refused, (unsigned long long)r.tls_refused);
    CHECK(r.ended == 1 && r.status == JFR_REFUSED);
    CHECK(strstr(r.msg, "127.0.0.1:") == r.msg && strstr(r.msg, reason));
    CHECK(r.started == 0 && r.events == 0);
    CHECK(r.refused == 1 && r.tls_refused == 1);
}

static void delivered(const char *what, const jfr_uv_tls_config *t, client c, bool pause) {
    run r;
    memset(&r, 0, sizeof r);
    r.pause = pause;
    uint64_t t0 = uv_hrtime();
    one(&r, t, &c, false);
    printf("%s: %llu of %llu events, %s: %s (%.0f ms)\n", what, (unsigned long long)r.events,
           (unsigned long long)g_events, jfr_status_name(r.status), r.msg,
           (double)(uv_hrtime() - t0) / 1e6);
    CHECK(r.started == 1 && r.ended == 1 && r.status == JFR_OK && r.events == g_events);
    CHECK(r.refused == 0 && r.tls_refused == 0);
}

#endif /* TEST_HAVE_OPENSSL */

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: test_tls FIXTURE.jfr certs.py\n");
        return 2;
    }
    signal(SIGPIPE, SIG_IGN); /* the client writing into a refusal */
    if (!jfr_uv_tls_available()) {
        uv_loop_t loop;
        uv_loop_init(&loop);
        jfr_uv_tls_config t = JFR_UV_TLS_CONFIG_INIT;
        t.cert_file = t.key_file = "x";
        run r;
        memset(&r, 0, sizeof r);
        char err[300] = "";
        CHECK(start(&loop, &r, &t, err, sizeof err) == JFR_UNSUPPORTED);
        CHECK(strstr(err, "built without OpenSSL (-Dtls, Debian package libssl-dev)") != NULL);
        uv_run(&loop, UV_RUN_DEFAULT);
        uv_loop_close(&loop);
        if (g_failures)
            return 1;
        printf("SKIP: built without OpenSSL (-Dtls, Debian package libssl-dev); the TLS "
               "config is refused with JFR_UNSUPPORTED: %s\n", err);
        return 77;
    }
#ifndef TEST_HAVE_OPENSSL
    (void)argv;
    printf("SKIP: the test was built without OpenSSL (-Dtls, Debian package libssl-dev)\n");
    return 77;
#else
    snprintf(g_dir, sizeof g_dir, "/tmp/jfrstream-tls-test-XXXXXX");
    if (!mkdtemp(g_dir)) {
        perror("mkdtemp");
        return 1;
    }
    char cmd[700];
    snprintf(cmd, sizeof cmd, "python3 '%s' '%s' >&2", argv[2], g_dir);
    int rc = system(cmd);
    if (rc != 0) {
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
        (void)!system(cmd);
        if (WIFEXITED(rc) && WEXITSTATUS(rc) == 77) {
            printf("SKIP: no openssl command (Debian package openssl)\n");
            return 77;
        }
        fprintf(stderr, "test/certs.py failed\n");
        return 1;
    }
    g_fix = uvpeer_fixture(argv[1], &g_len, &g_events);
    if (!g_fix) {
        fprintf(stderr, "cannot read %s\n", argv[1]);
        return 1;
    }
    test_load_errors();
    test_sized();

    jfr_uv_tls_config mtls = tls_cfg(cert("ca.pem"));
    jfr_uv_tls_config server_only = tls_cfg(NULL);
    const char *pats[] = {"nomatch", "app-?.example"};
    jfr_uv_tls_config allow = mtls;
    allow.allow = pats;
    allow.allow_count = 2;
    refused("plaintext", &mtls, (client){.kind = C_PLAIN}, "refused: not TLS (a plaintext client?)");
    refused("plaintext, server-only", &server_only, (client){.kind = C_PLAIN},
            "refused: not TLS (a plaintext client?)");
    refused("another CA", &mtls, (client){.kind = C_TLS, .cert = "other"},
            "refused: certificate verify failed: unable to get local issuer certificate");
    refused("no certificate", &mtls, (client){.kind = C_TLS},
            "refused: TLS handshake: peer did not return a certificate");
    refused("not allowed", &allow, (client){.kind = C_TLS, .cert = "intruder"},
            "refused: subject CN=intruder.example not allowed");
    delivered("allowed (app-?.example)", &allow, (client){.kind = C_TLS, .cert = "client"},
              false);
    delivered("server-only, one write", &server_only, (client){.kind = C_TLS}, false);
    delivered("mutual TLS, records of 1..7 bytes", &mtls,
              (client){.kind = C_TLS, .cert = "client", .max_record = 7}, false);
    delivered("mutual TLS, records of 1..300 bytes, paused every 97th event", &mtls,
              (client){.kind = C_TLS, .cert = "client", .max_record = 300}, true);

    test_alloc(&mtls);

    run r;
    memset(&r, 0, sizeof r);
    client c = {.kind = C_SILENT};
    one(&r, &mtls, &c, true);
    printf("stop during the handshake: %s: %s (refused %llu)\n", jfr_status_name(r.status), r.msg,
           (unsigned long long)r.tls_refused);
    CHECK(r.ended == 1 && r.status == JFR_STOPPED && r.started == 0 && r.tls_refused == 0);

    free(g_fix);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
    (void)!system(cmd);
    if (g_failures) {
        fprintf(stderr, "test_tls: %d failures\n", g_failures);
        return 1;
    }
    puts("test_tls: OK");
    return 0;
#endif
}
