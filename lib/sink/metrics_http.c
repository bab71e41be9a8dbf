/*
 * metrics_http.c — the /metrics endpoint on libmicrohttpd (jfrstream_sink.h).
 * The server runs its own threads (one per connection); the registry lives
 * on the application's thread, so the exposition comes from its `scrape`
 * callback, called from those threads (several at once).
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#include "jfrstream_sink.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef JFRS_HAVE_MHD

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <sys/socket.h>

#include <microhttpd.h>

#define MAX_CONNECTIONS 64
#define IDLE_TIMEOUT_S 10
#define MEMORY_PER_CONNECTION (32 * 1024) /* request line and headers */

struct jfrs_metrics_http {
    struct MHD_Daemon *d;
    bool (*scrape)(void *user, char **body, size_t *len);
    void *user;
    int port;
    char err[256]; /* libmicrohttpd's last message (the start error) */
    pthread_t starter; /* the thread of jfrs_metrics_http_start: writes err */
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
    enum MHD_Result ret = MHD_queue_response(c, MHD_HTTP_OK, r);
    MHD_destroy_response(r);
    return ret;
}

bool jfrs_metrics_http_available(void) { return true; }

jfr_status jfrs_metrics_http_start(const char *host, int port,
                                   bool (*scrape)(void *user, char **body, size_t *len),
                                   void *user, jfrs_metrics_http **out, char *errbuf,
                                   size_t errlen) {
    if (errbuf && errlen)
        errbuf[0] = '\0';
    if (out)
        *out = NULL;
    if (!out || !scrape || port < 0 || port > 65535)
        return JFR_INVALID_ARG;
    if (!host)
        host = "127.0.0.1";
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
        if (errbuf && errlen)
            snprintf(errbuf, errlen, "not a numeric IPv4 or IPv6 address: %s", host);
        return JFR_INVALID_ARG;
    }
    jfrs_metrics_http *h = calloc(1, sizeof *h);
    if (!h)
        return JFR_NOMEM;
    h->scrape = scrape;
    h->user = user;
    h->starter = pthread_self();
    h->d = MHD_start_daemon(flags, (uint16_t)port, NULL, NULL, on_request, h,
                            MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
                            MHD_OPTION_CONNECTION_LIMIT, (unsigned)MAX_CONNECTIONS,
                            MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)IDLE_TIMEOUT_S,
                            MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)MEMORY_PER_CONNECTION,
                            MHD_OPTION_EXTERNAL_LOGGER, logger, h, MHD_OPTION_END);
    if (!h->d) {
        if (errbuf && errlen) {
            size_t n = strlen(h->err);
            while (n && (h->err[n - 1] == '\n' || h->err[n - 1] == '.'))
                h->err[--n] = '\0';
            snprintf(errbuf, errlen, "cannot listen on %s port %d%s%s", host, port,
                     n ? ": " : "", h->err);
        }
        free(h);
        return JFR_IO;
    }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(h->d, MHD_DAEMON_INFO_BIND_PORT);
    h->port = info ? (int)info->port : port;
    *out = h;
    return JFR_OK;
}

int jfrs_metrics_http_port(const jfrs_metrics_http *h) { return h ? h->port : 0; }

void jfrs_metrics_http_stop(jfrs_metrics_http *h) {
    if (!h)
        return;
    MHD_stop_daemon(h->d);
    free(h);
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

#endif
