/*
 * pyroscope.c — profiles to Pyroscope's /ingest through libcurl
 * (jfrstream_sink.h, section Pyroscope): per-source queues of windows, a
 * worker thread running libcurl's multi interface, retries with backoff,
 * drop-oldest when a queue is full, a bounded drain. Without libcurl
 * (JFRS_HAVE_CURL undefined) only the series name builder is real; the
 * rest are stubs.
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#include "jfrstream_sink.h"
#include "sink.h"

#include <stdio.h>
#include <string.h>

#include "../sized.h"

/* ------------------------------------------------------------ series name */

static bool app_char(char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
           c == '_' || c == '.' || c == '-' || c == '/';
}

static bool key_char(char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
           c == '_' || c == '.';
}

static bool skipped_label(const char *k) {
    static const char *const skip[] = {"peer", "path", "jvm_name", "jvm_version", "jvm_start"};
    for (size_t i = 0; i < sizeof skip / sizeof skip[0]; i++)
        if (strcmp(k, skip[i]) == 0)
            return true;
    return false;
}

JFRS_API char *jfrs_pyroscope_name(const jfrs_source *s, const char *app) {
    /* malloc'ed, as the header says: made with the default allocator */
    static const jfr_allocator libc = {0};
    jfrc_out *b = jfrc_out_new_memory_advanced(256, &libc);
    if (!b)
        return NULL;
    if (!app || !*app)
        app = s ? jfrs_source_get(s, "service") : NULL;
    if (!app || !*app)
        app = s ? jfrs_source_get(s, "main_class") : NULL;
    if (!app || !*app)
        app = "jfrstream";
    for (const char *c = app; *c; c++)
        jfrc_out_putc(b, (char)(app_char(*c) ? *c : '_'));
    jfrc_out_putc(b, '{');
    bool first = true;
    for (size_t i = 0; s && i < jfrs_source_nlabels(s); i++) {
        const char *k = jfrs_source_key(s, i), *v = jfrs_source_value(s, i);
        if (skipped_label(k) || !*k)
            continue;
        if (!first)
            jfrc_out_putc(b, ',');
        first = false;
        for (const char *c = k; *c; c++)
            jfrc_out_putc(b, (char)(key_char(*c) ? *c : '_'));
        jfrc_out_putc(b, '=');
        for (const char *c = v; *c; c++) {
            unsigned char u = (unsigned char)*c;
            bool bad = u < 0x20 || u == 0x7f || strchr("{},=\"", *c) != NULL;
            jfrc_out_putc(b, (char)(bad ? '_' : *c));
        }
    }
    jfrc_out_putc(b, '}');
    size_t len = 0;
    const char *d = jfrs_out_cstr(b, &len);
    char *r = d ? jfr__strndup(&libc, d, len) : NULL;
    jfrc_out_free(b);
    return r;
}

JFRS_API void jfrs_pyroscope_config_init(jfrs_pyroscope_config *c) {
    if (!c)
        return;
    memset(c, 0, sizeof *c);
    c->size = sizeof *c;
}

#ifndef JFRS_HAVE_CURL

JFRS_API bool jfrs_pyroscope_available(void) { return false; }

JFRS_API jfr_status jfrs_pyroscope_new(const jfrs_pyroscope_config *c, jfrs_pyroscope **out) {
    (void)c;
    if (!out)
        return JFR_INVALID_ARG;
    *out = NULL;
    return JFR_UNSUPPORTED;
}

JFRS_API void jfrs_pyroscope_free(jfrs_pyroscope *p) { (void)p; }

JFRS_API jfr_status jfrs_pyroscope_push(jfrs_pyroscope *p, const char *source, const char *name,
                                        const void *body, size_t len, int64_t from,
                                        int64_t until) {
    (void)p, (void)source, (void)name, (void)body, (void)len, (void)from, (void)until;
    return JFR_UNSUPPORTED;
}

JFRS_API void jfrs_pyroscope_end_source(jfrs_pyroscope *p, const char *source) {
    (void)p, (void)source;
}

JFRS_API uint64_t jfrs_pyroscope_drain(jfrs_pyroscope *p, uint32_t timeout_ms) {
    (void)p, (void)timeout_ms;
    return 0;
}

JFRS_API void jfrs_pyroscope_stats_total(jfrs_pyroscope *p, jfrs_pyroscope_stats *out) {
    (void)p;
    if (out)
        memset(out, 0, sizeof *out);
}

JFRS_API bool jfrs_pyroscope_stats_source(jfrs_pyroscope *p, const char *source,
                                          jfrs_pyroscope_stats *out) {
    (void)p, (void)source;
    if (out)
        memset(out, 0, sizeof *out);
    return false;
}

#else /* JFRS_HAVE_CURL */

#include "pyroscope.h"

#include <errno.h>
#include <pthread.h>
#include <time.h>

#define MAX_ACTIVE 4 /* requests at once (one per source) */

typedef struct psrc psrc;

/* One window of one source and kind. */
typedef struct upload {
    struct upload *next;
    psrc *src;
    char *url;
    void *body;
    size_t len;
    unsigned attempts;
    uint64_t not_before; /* monotonic ms: retry not before */
    bool in_flight;
    CURL *easy;
    char errbuf[CURL_ERROR_SIZE];
} upload;

/* One source's queue and counts. */
struct psrc {
    psrc *next;
    char *key;
    upload *head, *tail;
    size_t n;  /* queued, the one in flight included */
    bool ended;
    jfrs_pyroscope_stats st;
};

struct jfrs_pyroscope {
    jfrs_pyroscope_config cfg;
    char *url, *spy;
    pthread_mutex_t mu;
    pthread_cond_t cv;   /* the worker waits here when idle     */
    pthread_cond_t idle; /* drain waits here for an empty queue */
    pthread_t th;
    bool started, quit, drained;
    CURLM *multi;
    pyro_auth auth; /* headers, credentials, TLS files (pyroscope_auth.c) */
    psrc *srcs;
    unsigned active;
    uint64_t pending; /* uploads queued over all sources */
    jfrs_pyroscope_stats total;
    jfr_allocator a; /* every allocation: the loop's thread and the worker's */
    size_t url_n;    /* bytes allocated for url */
};

/* CLOCK_MONOTONIC (the condition variables' clock) `ms` from now: the
 * deadline of pthread_cond_timedwait. */
static struct timespec deadline_after(uint64_t ms) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    ts.tv_sec += (time_t)(ms / 1000);
    ts.tv_nsec += (long)(ms % 1000) * 1000000L;
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    return ts;
}

static void set_error(jfrs_pyroscope_stats *st, const char *msg) {
    snprintf(st->last_error, sizeof st->last_error, "%s", msg);
}

JFRS_API bool jfrs_pyroscope_available(void) { return true; }

static void str_free(jfrs_pyroscope *p, char *s) {
    if (s)
        jfr__free(&p->a, s, strlen(s) + 1);
}

static void upload_free(jfrs_pyroscope *p, upload *u) {
    if (!u)
        return;
    str_free(p, u->url);
    jfr__free(&p->a, u->body, u->len);
    jfr__free(&p->a, u, sizeof *u);
}

/* Unlink u from its source (mu held). */
static void unlink_upload(jfrs_pyroscope *p, upload *u) {
    psrc *s = u->src;
    upload **l = &s->head, *prev = NULL;
    while (*l && *l != u) {
        prev = *l;
        l = &(*l)->next;
    }
    if (!*l)
        return;
    *l = u->next;
    if (s->tail == u)
        s->tail = prev;
    s->n--;
    p->pending--;
}

/* Forget ended sources with nothing queued (mu held). */
static void reap_sources(jfrs_pyroscope *p) {
    for (psrc **l = &p->srcs; *l;) {
        psrc *s = *l;
        if (s->ended && s->n == 0) {
            *l = s->next;
            str_free(p, s->key);
            jfr__free(&p->a, s, sizeof *s);
        } else {
            l = &s->next;
        }
    }
}

static size_t discard_body(char *ptr, size_t size, size_t nmemb, void *user) {
    (void)ptr, (void)user;
    return size * nmemb;
}

/* Start u's request (mu held); false when libcurl refused. */
static bool start_upload(jfrs_pyroscope *p, upload *u) {
    CURL *e = curl_easy_init();
    if (!e)
        return false;
    u->errbuf[0] = '\0';
    curl_easy_setopt(e, CURLOPT_URL, u->url);
    curl_easy_setopt(e, CURLOPT_POST, 1L);
    curl_easy_setopt(e, CURLOPT_POSTFIELDS, u->body);
    curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)u->len);
    pyro_auth_apply(&p->auth, e);
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, (long)p->cfg.timeout_ms);
    curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, (long)p->cfg.connect_timeout_ms);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, discard_body);
    curl_easy_setopt(e, CURLOPT_ERRORBUFFER, u->errbuf);
    curl_easy_setopt(e, CURLOPT_PRIVATE, u);
    curl_easy_setopt(e, CURLOPT_USERAGENT, "jfrstream");
    if (curl_multi_add_handle(p->multi, e) != CURLM_OK) {
        curl_easy_cleanup(e);
        return false;
    }
    u->easy = e;
    u->in_flight = true;
    u->attempts++;
    p->active++;
    return true;
}

/* u's request ended (mu held): pushed, retried later, or failed. */
static void finish_upload(jfrs_pyroscope *p, upload *u, CURLcode rc) {
    psrc *s = u->src;
    long status = 0;
    char msg[256];
    curl_easy_getinfo(u->easy, CURLINFO_RESPONSE_CODE, &status);
    curl_multi_remove_handle(p->multi, u->easy);
    curl_easy_cleanup(u->easy);
    u->easy = NULL;
    u->in_flight = false;
    p->active--;
    if (status) {
        s->st.last_status = p->total.last_status = status;
    }
    if (rc == CURLE_OK && status >= 200 && status < 300) {
        s->st.pushed++;
        p->total.pushed++;
        unlink_upload(p, u);
        upload_free(p, u);
        return;
    }
    bool retry;
    if (rc != CURLE_OK) {
        snprintf(msg, sizeof msg, "%s", u->errbuf[0] ? u->errbuf : curl_easy_strerror(rc));
        pyro_auth_conn_hint(&p->auth, strncmp(p->url, "https://", 8) == 0, rc, msg, sizeof msg);
        retry = !pyro_tls_permanent(rc);
    } else if (status == 401 || status == 403) { /* credentials: no retry mends them */
        pyro_auth_refusal(&p->auth, status, msg, sizeof msg);
        retry = false;
    } else {
        snprintf(msg, sizeof msg, "HTTP %ld", status);
        retry = status == 429 || (status >= 500 && status <= 599);
    }
    set_error(&s->st, msg);
    set_error(&p->total, msg);
    if (retry && u->attempts < p->cfg.max_attempts) {
        uint64_t wait = p->cfg.backoff_ms;
        for (unsigned i = 1; i < u->attempts && wait < p->cfg.max_backoff_ms; i++)
            wait *= 2;
        if (wait > p->cfg.max_backoff_ms)
            wait = p->cfg.max_backoff_ms;
        u->not_before = jfrs_mono_ms() + wait;
        s->st.retried++;
        p->total.retried++;
        return;
    }
    s->st.failed++;
    p->total.failed++;
    unlink_upload(p, u);
    upload_free(p, u);
}

/* Move s to the end of the list (mu held): the sources just served wait
 * behind the others (round robin when more are ready than may start). */
static void move_to_tail(jfrs_pyroscope *p, psrc *s) {
    psrc **l = &p->srcs;
    while (*l && *l != s)
        l = &(*l)->next;
    if (!*l)
        return;
    *l = s->next;
    while (*l)
        l = &(*l)->next;
    *l = s;
    s->next = NULL;
}

/* Start what may start (mu held); returns how long to wait at most (ms). */
static uint64_t start_ready(jfrs_pyroscope *p) {
    uint64_t now = jfrs_mono_ms(), wait = 1000;
    psrc *started[MAX_ACTIVE];
    size_t nstarted = 0;
    for (psrc *s = p->srcs; s && p->active < MAX_ACTIVE; s = s->next) {
        upload *u = s->head;
        if (!u || u->in_flight)
            continue;
        if (u->not_before > now) {
            if (u->not_before - now < wait)
                wait = u->not_before - now;
            continue;
        }
        if (start_upload(p, u)) {
            started[nstarted++] = s;
        } else { /* libcurl out of memory: try later */
            u->not_before = now + 100;
            if (wait > 100)
                wait = 100;
        }
    }
    for (size_t i = 0; i < nstarted; i++)
        move_to_tail(p, started[i]);
    return wait;
}

static void *worker(void *arg) {
    jfrs_pyroscope *p = arg;
    pthread_mutex_lock(&p->mu);
    while (!p->quit) {
        uint64_t wait = start_ready(p);
        reap_sources(p);
        if (p->pending == 0)
            pthread_cond_broadcast(&p->idle);
        if (p->active == 0) {
            struct timespec ts = deadline_after(wait);
            pthread_cond_timedwait(&p->cv, &p->mu, &ts);
            continue;
        }
        pthread_mutex_unlock(&p->mu);
        int running = 0;
        curl_multi_perform(p->multi, &running);
        pthread_mutex_lock(&p->mu);
        CURLMsg *m;
        int left;
        while ((m = curl_multi_info_read(p->multi, &left)) != NULL) {
            if (m->msg != CURLMSG_DONE)
                continue;
            upload *u = NULL;
            curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, (char **)&u);
            if (u)
                finish_upload(p, u, m->data.result);
        }
        if (p->quit)
            break;
        if (p->active) {
            pthread_mutex_unlock(&p->mu);
            curl_multi_poll(p->multi, NULL, 0, (int)(wait < 200 ? wait : 200), NULL);
            pthread_mutex_lock(&p->mu);
        }
    }
    /* stop: abort what is in flight */
    for (psrc *s = p->srcs; s; s = s->next)
        for (upload *u = s->head; u; u = u->next)
            if (u->in_flight) {
                curl_multi_remove_handle(p->multi, u->easy);
                curl_easy_cleanup(u->easy);
                u->easy = NULL;
                u->in_flight = false;
                p->active--;
            }
    pthread_cond_broadcast(&p->idle);
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

/* libcurl's global init, once per process whichever thread starts a sink
 * first (sinks may be started from several threads) */
static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static CURLcode curl_init_result;
static void curl_init_once(void) { curl_init_result = curl_global_init(CURL_GLOBAL_DEFAULT); }

JFRS_API jfr_status jfrs_pyroscope_new(const jfrs_pyroscope_config *c, jfrs_pyroscope **out) {
    if (!out)
        return JFR_INVALID_ARG;
    *out = NULL;
    jfrs_pyroscope_config cfg;
    if (!c || !jfr__sized_copy(&cfg, sizeof cfg, c) || !cfg.url ||
        (strncmp(cfg.url, "http://", 7) != 0 && strncmp(cfg.url, "https://", 8) != 0))
        return JFR_INVALID_ARG;
    if (pthread_once(&curl_once, curl_init_once) != 0 || curl_init_result != CURLE_OK)
        return JFR_IO;
    jfr_allocator a = jfrs_allocator(cfg.allocator);
    jfrs_pyroscope *p = jfr__calloc(&a, sizeof *p);
    if (!p)
        return JFR_NOMEM;
    p->a = a;
    p->cfg = cfg;
    p->cfg.allocator = NULL; /* the caller's: borrowed for the call only */
    if (!p->cfg.queue_windows)
        p->cfg.queue_windows = 8;
    if (!p->cfg.max_attempts)
        p->cfg.max_attempts = 5;
    if (!p->cfg.backoff_ms)
        p->cfg.backoff_ms = 1000;
    if (!p->cfg.max_backoff_ms)
        p->cfg.max_backoff_ms = 16000;
    if (!p->cfg.timeout_ms)
        p->cfg.timeout_ms = 10000;
    if (!p->cfg.connect_timeout_ms)
        p->cfg.connect_timeout_ms = 3000;
    p->url = jfr__strdup(&a, cfg.url);
    p->url_n = strlen(cfg.url) + 1;
    p->spy = jfr__strdup(&a, cfg.spy_name ? cfg.spy_name : "jfrstream");
    p->cfg.url = p->url;
    p->cfg.spy_name = p->spy;
    if (p->url) { /* no trailing slash: ".../ingest" is appended */
        size_t n = strlen(p->url);
        while (n > 0 && p->url[n - 1] == '/')
            p->url[--n] = '\0';
    }
    jfr_status ast = pyro_auth_init(&p->auth, &cfg, &a);
    /* the caller's strings are borrowed for the call: the copies only */
    p->cfg.basic_auth = p->cfg.bearer_token = p->cfg.tenant = NULL;
    p->cfg.headers = NULL;
    p->cfg.nheaders = 0;
    p->cfg.ca_file = p->cfg.cert_file = p->cfg.key_file = NULL;
    p->multi = ast == JFR_OK ? curl_multi_init() : NULL;
    if (!p->url || !p->spy || ast != JFR_OK || !p->multi) {
        pyro_auth_free(&p->auth, &a);
        if (p->multi)
            curl_multi_cleanup(p->multi);
        if (p->url)
            jfr__free(&a, p->url, p->url_n);
        str_free(p, p->spy);
        jfr__free(&a, p, sizeof *p);
        return ast == JFR_INVALID_ARG ? JFR_INVALID_ARG : JFR_NOMEM;
    }
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->cv, &ca);
    pthread_cond_init(&p->idle, &ca);
    pthread_condattr_destroy(&ca);
    if (pthread_create(&p->th, NULL, worker, p) != 0) {
        p->drained = true;
        jfrs_pyroscope_free(p);
        return JFR_IO;
    }
    p->started = true;
    *out = p;
    return JFR_OK;
}

/* The source of that key (mu held), created when `create`. */
static psrc *find_src(jfrs_pyroscope *p, const char *key, bool create) {
    for (psrc *s = p->srcs; s; s = s->next)
        if (strcmp(s->key, key) == 0)
            return s;
    if (!create)
        return NULL;
    psrc *s = jfr__calloc(&p->a, sizeof *s);
    if (!s || !(s->key = jfr__strdup(&p->a, key))) {
        jfr__free(&p->a, s, sizeof *s);
        return NULL;
    }
    s->next = p->srcs;
    p->srcs = s;
    return s;
}

/* name, from, until, spyName into the query, URL-encoded. */
static char *make_url(jfrs_pyroscope *p, const char *name, int64_t from, int64_t until) {
    char *ename = curl_easy_escape(NULL, name, 0), *espy = curl_easy_escape(NULL, p->spy, 0);
    char *url = NULL;
    if (ename && espy) {
        static const char fmt[] = "%s/ingest?name=%s&from=%lld&until=%lld&format=pprof&spyName=%s";
        int n = snprintf(NULL, 0, fmt, p->url, ename, (long long)from, (long long)until, espy);
        /* exactly strlen + 1 bytes: freed as a string */
        if (n > 0 && (url = jfr__alloc(&p->a, (size_t)n + 1)) != NULL)
            snprintf(url, (size_t)n + 1, fmt, p->url, ename, (long long)from, (long long)until,
                     espy);
    }
    curl_free(ename);
    curl_free(espy);
    return url;
}

JFRS_API jfr_status jfrs_pyroscope_push(jfrs_pyroscope *p, const char *source, const char *name,
                                        const void *body, size_t len, int64_t from,
                                        int64_t until) {
    if (!p || !source || !name || (!body && len))
        return JFR_INVALID_ARG;
    upload *u = jfr__calloc(&p->a, sizeof *u);
    if (!u)
        return JFR_NOMEM;
    u->url = make_url(p, name, from, until);
    u->body = jfr__alloc(&p->a, len); /* len 0: 1 byte, freed as such */
    u->len = len;
    if (!u->url || !u->body) {
        upload_free(p, u);
        return JFR_NOMEM;
    }
    if (len)
        memcpy(u->body, body, len);
    pthread_mutex_lock(&p->mu);
    if (p->drained) {
        pthread_mutex_unlock(&p->mu);
        upload_free(p, u);
        return JFR_INVALID_STATE;
    }
    psrc *s = find_src(p, source, true);
    if (!s) {
        pthread_mutex_unlock(&p->mu);
        upload_free(p, u);
        return JFR_NOMEM;
    }
    s->ended = false;
    /* full: drop the oldest window waiting (not the one being sent) */
    size_t waiting = s->n - (s->head && s->head->in_flight ? 1 : 0);
    if (waiting >= p->cfg.queue_windows) {
        upload *old = s->head && s->head->in_flight ? s->head->next : s->head;
        if (old) {
            unlink_upload(p, old);
            upload_free(p, old);
            s->st.dropped++;
            p->total.dropped++;
        }
    }
    u->src = s;
    if (s->tail)
        s->tail->next = u;
    else
        s->head = u;
    s->tail = u;
    s->n++;
    p->pending++;
    s->st.queued++;
    p->total.queued++;
    pthread_cond_signal(&p->cv);
    pthread_mutex_unlock(&p->mu);
    curl_multi_wakeup(p->multi);
    return JFR_OK;
}

JFRS_API void jfrs_pyroscope_end_source(jfrs_pyroscope *p, const char *source) {
    if (!p || !source)
        return;
    pthread_mutex_lock(&p->mu);
    psrc *s = find_src(p, source, false);
    if (s)
        s->ended = true;
    if (p->drained)
        reap_sources(p);
    pthread_mutex_unlock(&p->mu);
}

JFRS_API uint64_t jfrs_pyroscope_drain(jfrs_pyroscope *p, uint32_t timeout_ms) {
    if (!p)
        return 0;
    pthread_mutex_lock(&p->mu);
    if (!p->drained && p->started) {
        struct timespec ts = deadline_after(timeout_ms);
        while (p->pending > 0) {
            pthread_cond_signal(&p->cv);
            if (pthread_cond_timedwait(&p->idle, &p->mu, &ts) == ETIMEDOUT)
                break;
        }
    }
    p->drained = true;
    p->quit = true;
    pthread_cond_signal(&p->cv);
    pthread_mutex_unlock(&p->mu);
    if (p->started) {
        curl_multi_wakeup(p->multi);
        pthread_join(p->th, NULL);
        p->started = false;
    }
    /* the worker is gone: what is queued is left */
    uint64_t left = 0;
    for (psrc *s = p->srcs; s; s = s->next) {
        while (s->head) {
            upload *u = s->head;
            s->head = u->next;
            s->n--;
            p->pending--;
            upload_free(p, u);
            s->st.left++;
            left++;
        }
        s->tail = NULL;
    }
    p->total.left += left;
    reap_sources(p);
    return left;
}

static void fill(jfrs_pyroscope_stats *out, const jfrs_pyroscope_stats *st, uint64_t pending) {
    *out = *st;
    out->pending = pending;
}

JFRS_API void jfrs_pyroscope_stats_total(jfrs_pyroscope *p, jfrs_pyroscope_stats *out) {
    if (!out)
        return;
    if (!p) {
        memset(out, 0, sizeof *out);
        return;
    }
    pthread_mutex_lock(&p->mu);
    fill(out, &p->total, p->pending);
    pthread_mutex_unlock(&p->mu);
}

JFRS_API bool jfrs_pyroscope_stats_source(jfrs_pyroscope *p, const char *source,
                                          jfrs_pyroscope_stats *out) {
    if (!out)
        return false;
    if (!p || !source) {
        memset(out, 0, sizeof *out);
        return false;
    }
    pthread_mutex_lock(&p->mu);
    psrc *s = find_src(p, source, false);
    if (s)
        fill(out, &s->st, s->n);
    else
        memset(out, 0, sizeof *out);
    pthread_mutex_unlock(&p->mu);
    return s != NULL;
}

JFRS_API void jfrs_pyroscope_free(jfrs_pyroscope *p) {
    if (!p)
        return;
    jfrs_pyroscope_drain(p, 0);
    for (psrc *s = p->srcs, *n; s; s = n) {
        n = s->next;
        str_free(p, s->key);
        jfr__free(&p->a, s, sizeof *s);
    }
    pyro_auth_free(&p->auth, &p->a);
    curl_multi_cleanup(p->multi);
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->cv);
    pthread_cond_destroy(&p->idle);
    jfr__free(&p->a, p->url, p->url_n);
    str_free(p, p->spy);
    jfr_allocator a = p->a;
    jfr__free(&a, p, sizeof *p);
}

#endif /* JFRS_HAVE_CURL */
