/*
 * metrics_http.c — the /metrics endpoint on libmicrohttpd (jfrstream_sink.h).
 * The server runs its own threads (one per connection); the registry lives
 * on the application's thread, so the exposition comes from its `scrape`
 * callback, called from those threads (several at once). HTTPS through
 * libmicrohttpd's TLS; basic auth checked against metrics_auth.c's users
 * before anything else of a request.
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#include "metrics.h"
#include "../sized.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef JFRS_HAVE_MHD

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <sys/socket.h>

/* the basic-auth calls of every version since 0.9.71, deprecated in later
 * ones in favour of their *3 forms */
#define MHD_NO_DEPRECATION 1
#include <microhttpd.h>

#define MAX_CONNECTIONS 64
#define IDLE_TIMEOUT_S 10
#define MEMORY_PER_CONNECTION (32 * 1024) /* request line and headers */
#define REALM "jfrstream"
/* GnuTLS priorities: its defaults without TLS 1.0 and 1.1 */
#define TLS_PRIORITIES "NORMAL:-VERS-TLS1.1:-VERS-TLS1.0:-VERS-SSL3.0"

struct jfrs_metrics_http {
    struct MHD_Daemon *d;
    bool (*scrape)(void *user, char **body, size_t *len);
    void *user;
    int port;
    char err[256]; /* libmicrohttpd's last message (the start error) */
    pthread_t starter; /* the thread of jfrs_metrics_http_start: writes err */
    jfr_allocator a;
    char *cert, *key;      /* the PEM copies (key wiped at stop) */
    metrics_users *users;  /* basic auth, or NULL */
    _Atomic uint64_t unauthorized;
};

static const char content_type[] = "text/plain; version=0.0.4; charset=utf-8";

/* libmicrohttpd's messages: the start error is kept, the rest dropped (a
 * bad request is answered, not logged). A start error is logged on the
 * thread calling MHD_start_daemon; the others come from the server's threads,
 * also while that call is returning, so the test is the thread, set before
 * the server's threads exist: `h->d` is stored by the starter unsynchronised
 * and must not be read here. */
static void logger(void *cls, const char *fmt, va_list ap) {
    jfrs_metrics_http *h = cls;
    if (pthread_equal(pthread_self(), h->starter))
        vsnprintf(h->err, sizeof h->err, fmt, ap);
}

static enum MHD_Result reply(struct MHD_Connection *c, unsigned code, const char *text,
                             const char *allow) {
    struct MHD_Response *r =
        MHD_create_response_from_buffer(strlen(text), (void *)text, MHD_RESPMEM_PERSISTENT);
    if (!r)
        return MHD_NO;
    MHD_add_response_header(r, "Content-Type", "text/plain; charset=utf-8");
    if (allow)
        MHD_add_response_header(r, "Allow", allow);
    enum MHD_Result ret = MHD_queue_response(c, code, r);
    MHD_destroy_response(r);
    return ret;
}

/* Whether the request carries a user's credentials; else queue the 401. */
static bool authorized(jfrs_metrics_http *h, struct MHD_Connection *c, enum MHD_Result *ret) {
    char *pass = NULL;
    char *user = MHD_basic_auth_get_username_password(c, &pass);
    bool ok = user && pass && metrics_users_check(h->users, user, pass);
    if (pass) {
        explicit_bzero(pass, strlen(pass));
        MHD_free(pass);
    }
    if (user)
        MHD_free(user);
    if (ok)
        return true;
    atomic_fetch_add(&h->unauthorized, 1);
    static const char text[] = "unauthorized: basic auth credentials needed\n";
    struct MHD_Response *r =
        MHD_create_response_from_buffer(sizeof text - 1, (void *)text, MHD_RESPMEM_PERSISTENT);
    *ret = MHD_NO;
    if (r) {
        MHD_add_response_header(r, "Content-Type", "text/plain; charset=utf-8");
        *ret = MHD_queue_basic_auth_fail_response(c, REALM, r);
        MHD_destroy_response(r);
    }
    return false;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
                                  const char *method, const char *version,
                                  const char *upload, size_t *upload_len, void **req) {
    (void)version;
    (void)upload;
    jfrs_metrics_http *h = cls;
    static int started;
    if (!*req) { /* the headers: answer once the body (if any) is read */
        *req = &started;
        return MHD_YES;
    }
    if (*upload_len) { /* a body: not for us, discard it */
        *upload_len = 0;
        return MHD_YES;
    }
    enum MHD_Result ret;
    if (h->users && !authorized(h, c, &ret))
        return ret;
    bool get = strcmp(method, MHD_HTTP_METHOD_GET) == 0;
    if (!get && strcmp(method, MHD_HTTP_METHOD_HEAD) != 0)
        return reply(c, MHD_HTTP_METHOD_NOT_ALLOWED, "only GET and HEAD\n", "GET, HEAD");
    if (strcmp(url, "/") == 0)
        return reply(c, MHD_HTTP_OK, "jfrstream: the metrics are at /metrics\n", NULL);
    if (strcmp(url, "/metrics") != 0)
        return reply(c, MHD_HTTP_NOT_FOUND, "not found: the metrics are at /metrics\n", NULL);
    char *body = NULL;
    size_t len = 0;
    bool ok = h->scrape(h->user, &body, &len);
    if (!ok) {
        free(body);
        return reply(c, MHD_HTTP_SERVICE_UNAVAILABLE, "metrics not available now\n", NULL);
    }
    struct MHD_Response *r = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
    if (!r) {
        free(body);
        return MHD_NO;
    }
    MHD_add_response_header(r, "Content-Type", content_type);
    ret = MHD_queue_response(c, MHD_HTTP_OK, r);
    MHD_destroy_response(r);
    return ret;
}

bool jfrs_metrics_http_available(void) { return true; }

bool jfrs_metrics_http_tls_available(void) {
    return MHD_is_feature_supported(MHD_FEATURE_TLS) == MHD_YES;
}

static void http_free(jfrs_metrics_http *h) {
    jfr_allocator a = h->a;
    jfrs_wipe_free(&a, h->cert);
    jfrs_wipe_free(&a, h->key);
    metrics_users_free(h->users);
    jfr__free(&a, h, sizeof *h);
}

static void say(char *errbuf, size_t errlen, const char *fmt, const char *arg) {
    if (errbuf && errlen)
        snprintf(errbuf, errlen, fmt, arg);
}

/* c's PEM texts and users copied into h; JFR_OK, or the status (errbuf
 * says why). */
static jfr_status take_config(jfrs_metrics_http *h, const jfrs_metrics_http_config *c,
                              char *errbuf, size_t errlen) {
    if (!c->tls_cert_pem != !c->tls_key_pem) {
        say(errbuf, errlen, "%s", "TLS needs both a certificate and its key");
        return JFR_INVALID_ARG;
    }
    if (c->tls_cert_pem) {
        if (!jfrs_metrics_http_tls_available()) {
            say(errbuf, errlen, "%s", "this libmicrohttpd was built without TLS");
            return JFR_UNSUPPORTED;
        }
        h->cert = jfr__strdup(&h->a, c->tls_cert_pem);
        h->key = jfr__strdup(&h->a, c->tls_key_pem);
        if (!h->cert || !h->key)
            return JFR_NOMEM;
    }
    if (c->basic_auth) {
        char why[200];
        jfr_status st = metrics_users_new(c->basic_auth, &h->a, &h->users, why, sizeof why);
        if (st == JFR_INVALID_ARG)
            say(errbuf, errlen, "basic auth users: %s", why);
        if (st != JFR_OK)
            return st;
    }
    return JFR_OK;
}

void jfrs_metrics_http_config_init(jfrs_metrics_http_config *c) {
    if (!c)
        return;
    memset(c, 0, sizeof *c);
    c->size = sizeof *c;
}

jfr_status jfrs_metrics_http_start_with(const jfrs_metrics_http_config *cfg,
                                        bool (*scrape)(void *user, char **body, size_t *len),
                                        void *user, jfrs_metrics_http **out, char *errbuf,
                                        size_t errlen) {
    if (errbuf && errlen)
        errbuf[0] = '\0';
    if (out)
        *out = NULL;
    jfrs_metrics_http_config c;
    if (!cfg || !jfr__sized_copy(&c, sizeof c, cfg) || !out || !scrape || c.port < 0 ||
        c.port > 65535)
        return JFR_INVALID_ARG;
    const char *host = c.host ? c.host : "127.0.0.1";
    int port = c.port;
    struct sockaddr_storage ss;
    memset(&ss, 0, sizeof ss);
    struct sockaddr_in *v4 = (struct sockaddr_in *)&ss;
    struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)&ss;
    unsigned flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD |
                     MHD_USE_ERROR_LOG;
    if (inet_pton(AF_INET, host, &v4->sin_addr) == 1) {
        v4->sin_family = AF_INET;
        v4->sin_port = htons((uint16_t)port);
    } else if (inet_pton(AF_INET6, host, &v6->sin6_addr) == 1) {
        v6->sin6_family = AF_INET6;
        v6->sin6_port = htons((uint16_t)port);
        flags |= MHD_USE_IPv6;
    } else {
        say(errbuf, errlen, "not a numeric IPv4 or IPv6 address: %s", host);
        return JFR_INVALID_ARG;
    }
    jfr_allocator a = jfrs_allocator(c.allocator);
    jfrs_metrics_http *h = jfr__calloc(&a, sizeof *h);
    if (!h)
        return JFR_NOMEM;
    h->a = a;
    jfr_status st = take_config(h, &c, errbuf, errlen);
    if (st != JFR_OK) {
        http_free(h);
        return st;
    }
    h->scrape = scrape;
    h->user = user;
    h->starter = pthread_self();
    struct MHD_OptionItem tls[] = {
        {MHD_OPTION_HTTPS_MEM_CERT, 0, h->cert},
        {MHD_OPTION_HTTPS_MEM_KEY, 0, h->key},
        {MHD_OPTION_HTTPS_PRIORITIES, 0, (void *)TLS_PRIORITIES},
        {MHD_OPTION_END, 0, NULL},
    };
    if (h->cert)
        flags |= MHD_USE_TLS;
    h->d = MHD_start_daemon(flags, (uint16_t)port, NULL, NULL, on_request, h,
                            MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
                            MHD_OPTION_CONNECTION_LIMIT, (unsigned)MAX_CONNECTIONS,
                            MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)IDLE_TIMEOUT_S,
                            MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)MEMORY_PER_CONNECTION,
                            MHD_OPTION_EXTERNAL_LOGGER, logger, h,
                            MHD_OPTION_ARRAY, h->cert ? tls : tls + 3, MHD_OPTION_END);
    if (!h->d) {
        if (errbuf && errlen) {
            size_t n = strlen(h->err);
            while (n && (h->err[n - 1] == '\n' || h->err[n - 1] == '.'))
                h->err[--n] = '\0';
            snprintf(errbuf, errlen, "cannot listen on %s port %d%s%s", host, port,
                     n ? ": " : "", h->err);
        }
        http_free(h);
        return JFR_IO;
    }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(h->d, MHD_DAEMON_INFO_BIND_PORT);
    h->port = info ? (int)info->port : port;
    *out = h;
    return JFR_OK;
}

jfr_status jfrs_metrics_http_start(const char *host, int port,
                                   bool (*scrape)(void *user, char **body, size_t *len),
                                   void *user, jfrs_metrics_http **out, char *errbuf,
                                   size_t errlen) {
    jfrs_metrics_http_config c;
    jfrs_metrics_http_config_init(&c);
    c.host = host;
    c.port = port;
    return jfrs_metrics_http_start_with(&c, scrape, user, out, errbuf, errlen);
}

int jfrs_metrics_http_port(const jfrs_metrics_http *h) { return h ? h->port : 0; }

uint64_t jfrs_metrics_http_unauthorized(const jfrs_metrics_http *h) {
    return h ? atomic_load(&((jfrs_metrics_http *)h)->unauthorized) : 0;
}

void jfrs_metrics_http_stop(jfrs_metrics_http *h) {
    if (!h)
        return;
    MHD_stop_daemon(h->d);
    http_free(h);
}

#else /* without libmicrohttpd */

bool jfrs_metrics_http_available(void) { return false; }

jfr_status jfrs_metrics_http_start(const char *host, int port,
                                   bool (*scrape)(void *user, char **body, size_t *len),
                                   void *user, jfrs_metrics_http **out, char *errbuf,
                                   size_t errlen) {
    (void)host;
    (void)port;
    (void)scrape;
    (void)user;
    if (out)
        *out = NULL;
    if (errbuf && errlen)
        snprintf(errbuf, errlen, "built without libmicrohttpd (meson feature -Dmicrohttpd)");
    return JFR_UNSUPPORTED;
}

int jfrs_metrics_http_port(const jfrs_metrics_http *h) {
    (void)h;
    return 0;
}

void jfrs_metrics_http_stop(jfrs_metrics_http *h) { (void)h; }

bool jfrs_metrics_http_tls_available(void) { return false; }

void jfrs_metrics_http_config_init(jfrs_metrics_http_config *c) {
    if (!c)
        return;
    memset(c, 0, sizeof *c);
    c->size = sizeof *c;
}

jfr_status jfrs_metrics_http_start_with(const jfrs_metrics_http_config *c,
                                        bool (*scrape)(void *user, char **body, size_t *len),
                                        void *user, jfrs_metrics_http **out, char *errbuf,
                                        size_t errlen) {
    (void)c;
    return jfrs_metrics_http_start(NULL, 0, scrape, user, out, errbuf, errlen);
}

uint64_t jfrs_metrics_http_unauthorized(const jfrs_metrics_http *h) {
    (void)h;
    return 0;
}

#endif
