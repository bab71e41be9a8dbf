/*
 * metrics_serve.c — a registry served over HTTP (jfrstream_sink.h,
 * jfrs_metrics_server): the hand-off between the server's threads and the
 * thread that owns the registry.
 *
 * The registry is fed with no lock per event, so only its own thread may
 * render it. A scrape (on one of libmicrohttpd's threads, several at once)
 * takes a number, wakes that thread through the application's `wake` and
 * waits on a condition variable; jfrs_metrics_server_service renders once
 * for every scrape that asked before it, so a scrape sees whole events and
 * chunks. A thread that does not answer within the wait (a huge chunk being
 * parsed, stdout blocked) gets that scrape a 503, not a stuck server.
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#include "metrics.h"
#include "../sized.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct jfrs_metrics_server {
    jfrs_metrics *m;
    jfrs_metrics_http *http;
    jfr_allocator a;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    /* under mu: the application's wake (set by _serve: until then a scrape
     * gets its 503), renders asked for and made (a scrape that asked as
     * number N takes the text of render N or later), the last text;
     * closing: no more */
    void (*wake)(void *user);
    void *user;
    uint64_t asked, made;
    char *body;
    size_t len, cap;
    bool closing;
};

#define SCRAPE_WAIT_MS 10000

/* On a server thread. */
static bool scrape(void *user, char **body, size_t *len) {
    jfrs_metrics_server *s = user;
    struct timespec dl;
    clock_gettime(CLOCK_MONOTONIC, &dl);
    dl.tv_sec += SCRAPE_WAIT_MS / 1000;
    pthread_mutex_lock(&s->mu);
    bool ok = false;
    if (s->wake && !s->closing) {
        uint64_t want = ++s->asked;
        s->wake(s->user);
        while (s->made < want && !s->closing)
            if (pthread_cond_timedwait(&s->cv, &s->mu, &dl) == ETIMEDOUT)
                break;
        /* the server frees the body with free(): malloc, not the allocator */
        if (s->made >= want && s->body && (*body = malloc(s->len ? s->len : 1)) != NULL) {
            memcpy(*body, s->body, s->len);
            *len = s->len;
            ok = true;
        }
    }
    pthread_mutex_unlock(&s->mu);
    return ok;
}

static void server_free(jfrs_metrics_server *s) {
    pthread_cond_destroy(&s->cv);
    pthread_mutex_destroy(&s->mu);
    if (s->body)
        jfr__free(&s->a, s->body, s->cap);
    jfr__free(&s->a, s, sizeof *s);
}

jfr_status jfrs_metrics_server_start_with(jfrs_metrics *m, const jfrs_metrics_http_config *c,
                                          jfrs_metrics_server **out, char *errbuf,
                                          size_t errlen) {
    if (errbuf && errlen)
        *errbuf = '\0';
    if (out)
        *out = NULL;
    if (!m || !c || !out)
        return JFR_INVALID_ARG;
    jfrs_metrics_http_config hc;
    if (!jfr__sized_copy(&hc, sizeof hc, c))
        return JFR_INVALID_ARG;
    if (!hc.allocator)
        hc.allocator = &m->a;
    jfrs_metrics_server *s = jfr__calloc(&m->a, sizeof *s);
    if (!s)
        return JFR_NOMEM;
    s->m = m;
    s->a = m->a;
    pthread_mutex_init(&s->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&s->cv, &ca);
    pthread_condattr_destroy(&ca);
    jfr_status st = jfrs_metrics_http_start_with(&hc, scrape, s, &s->http, errbuf, errlen);
    if (st != JFR_OK) {
        server_free(s);
        return st;
    }
    *out = s;
    return JFR_OK;
}

jfr_status jfrs_metrics_server_start(jfrs_metrics *m, const char *host, int port,
                                     jfrs_metrics_server **out, char *errbuf, size_t errlen) {
    jfrs_metrics_http_config c;
    jfrs_metrics_http_config_init(&c);
    c.host = host;
    c.port = port;
    return jfrs_metrics_server_start_with(m, &c, out, errbuf, errlen);
}

uint64_t jfrs_metrics_server_unauthorized(const jfrs_metrics_server *s) {
    return s ? jfrs_metrics_http_unauthorized(s->http) : 0;
}

void jfrs_metrics_server_serve(jfrs_metrics_server *s, void (*wake)(void *user), void *user) {
    if (!s || !wake)
        return;
    pthread_mutex_lock(&s->mu);
    s->wake = wake;
    s->user = user;
    pthread_mutex_unlock(&s->mu);
}

int jfrs_metrics_server_port(const jfrs_metrics_server *s) {
    return s ? jfrs_metrics_http_port(s->http) : 0;
}

void jfrs_metrics_server_service(jfrs_metrics_server *s) {
    if (!s)
        return;
    pthread_mutex_lock(&s->mu);
    uint64_t asked = s->asked;
    bool want = asked > s->made;
    pthread_mutex_unlock(&s->mu);
    if (!want)
        return;
    size_t n = 0;
    const char *text = jfrs_metrics_render(s->m, &n);
    /* the copy the scrapes take theirs from: kept, grown when too small */
    char *copy = NULL;
    size_t cap = 0;
    if (text) {
        cap = n ? n : 1;
        copy = jfr__alloc(&s->a, cap);
        if (copy)
            memcpy(copy, text, n);
    }
    pthread_mutex_lock(&s->mu);
    char *old = s->body;
    size_t oldcap = s->cap;
    s->body = copy; /* NULL (no memory): those scrapes get a 503 */
    s->cap = copy ? cap : 0;
    s->len = n;
    s->made = asked;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
    if (old)
        jfr__free(&s->a, old, oldcap);
}

void jfrs_metrics_server_stop(jfrs_metrics_server *s) {
    if (!s)
        return;
    pthread_mutex_lock(&s->mu);
    s->closing = true;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
    jfrs_metrics_http_stop(s->http); /* waits for the scrapes' threads */
    server_free(s);
}
