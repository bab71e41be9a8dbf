/* TCP listener: one jfr_parser per connection, fed from libuv reads. */
#include "jfrstream_uv.h"
#include "sized.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

typedef struct listener listener;

typedef struct conn {
    jfr_uv_conn pub;
    uv_tcp_t tcp;
    uv_timer_t idle;    /* idle_ms: started only when set */
    listener *l;
    jfr_parser *parser; /* NULL for a connection refused over max_connections */
    struct conn *prev, *next;
    uint64_t id, bytes;
    uint64_t last_ms;   /* loop time of the last read (or accept, resume) */
    unsigned handles;   /* open libuv handles of this conn: freed at 0 */
    char peer[64];
    char *pending;      /* bytes not taken while paused */
    size_t npending, cappending;
    bool paused, closing, reading, eof;
} conn;

struct listener {
    jfr_uv_listener pub;
    uv_tcp_t tcp;
    jfr_uv_listener_config cfg; /* cfg.options, cfg.callbacks: the two below */
    jfr_options options;
    jfr_callbacks callbacks;
    conn *conns;
    unsigned nconns, peak;
    unsigned max_conns;
    /* One read buffer for all connections: libuv calls alloc, read and
     * on_read back to back, and on_read hands every byte to the parser (which
     * copies what it keeps) or to the conn's pending copy. 1,000 idle peers
     * then cost no 64 KiB each. */
    char *buf;
    size_t bufcap;
    uint64_t next_id;
    int port;
    bool closing;
    bool started;       /* start succeeded: on_end is owed */
    unsigned open_handles;
};

static void listener_maybe_done(listener *l) {
    if (l->closing && l->open_handles == 0) {
        if (l->started && l->cfg.on_end)
            l->cfg.on_end(&l->pub, l->cfg.user);
        free(l->buf);
        free(l);
    }
}

static void conn_closed(uv_handle_t *h) {
    conn *c = h->data;
    listener *l = c->l;
    l->open_handles--;
    if (--c->handles == 0) {
        jfr_parser_free(c->parser);
        free(c->pending);
        free(c);
    }
    listener_maybe_done(l);
}

static void conn_close_handles(conn *c) {
    if (c->l->cfg.idle_ms && c->parser)
        uv_close((uv_handle_t *)&c->idle, conn_closed);
    uv_close((uv_handle_t *)&c->tcp, conn_closed);
}

/* End a connection once: report, unlink, close the socket. */
static void conn_end(conn *c, jfr_status st, const char *msg) {
    if (c->closing)
        return;
    c->closing = true;
    listener *l = c->l;
    /* unlink before calling out: on_conn_end may stop the listener */
    if (c->prev)
        c->prev->next = c->next;
    else
        l->conns = c->next;
    if (c->next)
        c->next->prev = c->prev;
    l->nconns--;
    uv_read_stop((uv_stream_t *)&c->tcp);
    char text[512];
    snprintf(text, sizeof text, "%s: %s", c->peer, msg);
    if (l->cfg.on_conn_end)
        l->cfg.on_conn_end(&c->pub, st, text, l->cfg.user);
    conn_close_handles(c);
}

/* The peer is done sending (or we stop): bytes held back by a pause are fed
 * first, then the parser decides whether the input ended cleanly. */
static void conn_finish(conn *c) {
    const char *p = c->pending;
    size_t n = c->npending;
    while (n) {
        jfr_status s = jfr_parser_feed(c->parser, p, n);
        size_t used = s == JFR_OK ? n : jfr_parser_consumed(c->parser);
        if (s != JFR_OK && s != JFR_PAUSED) {
            conn_end(c, s,
                     s == JFR_STOPPED ? "stopped by a callback" : jfr_parser_error(c->parser));
            return;
        }
        p += used;
        n -= used;
    }
    c->npending = 0;
    c->paused = false;
    jfr_status s = jfr_parser_finish(c->parser);
    while (s == JFR_PAUSED) /* no more input: let paused callbacks complete */
        s = jfr_parser_finish(c->parser);
    conn_end(c, s, s == JFR_OK ? "stream ended" : jfr_parser_error(c->parser));
}

/* A limit ends the connection: an unfinished chunk is still reported (the
 * parser's on_error gets JFR_TRUNCATED with what was dropped). */
static void conn_limit(conn *c, const char *msg) {
    jfr_status s = jfr_parser_finish(c->parser);
    while (s == JFR_PAUSED)
        s = jfr_parser_finish(c->parser);
    conn_end(c, JFR_LIMIT, msg);
}

static bool keep_pending(conn *c, const char *p, size_t n) {
    if (n == 0)
        return true;
    if (c->npending + n > c->cappending) {
        size_t cap = (c->npending + n) * 2;
        char *q = realloc(c->pending, cap);
        if (!q)
            return false;
        c->pending = q;
        c->cappending = cap;
    }
    /* NOLINTNEXTLINE(clang-analyzer-core.NonNullParamChecker): p is NULL only when n is 0 */
    memmove(c->pending + c->npending, p, n);
    c->npending += n;
    return true;
}

/* Feed bytes; on pause keep the rest and stop reading (back-pressure).
 * Returns false when the connection was ended. */
static bool conn_feed(conn *c, const char *p, size_t n) {
    jfr_status s = jfr_parser_feed(c->parser, p, n);
    if (s == JFR_OK)
        return true;
    if (s == JFR_PAUSED) {
        size_t used = jfr_parser_consumed(c->parser);
        if (!keep_pending(c, p + used, n - used)) {
            conn_end(c, JFR_NOMEM, "out of memory");
            return false;
        }
        c->paused = true;
        if (c->reading) {
            uv_read_stop((uv_stream_t *)&c->tcp);
            c->reading = false;
        }
        return true;
    }
    conn_end(c, s, s == JFR_STOPPED ? "stopped by a callback" : jfr_parser_error(c->parser));
    return false;
}

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *b) {
    (void)suggested;
    conn *c = h->data;
    b->base = c->l->buf;
    b->len = c->l->bufcap;
}

/* Fires idle_ms after the last read; re-armed for the time left when bytes
 * came in meanwhile (cheaper than restarting a timer on every read). A
 * connection paused by the application is not idle: we stopped reading. */
static void on_idle(uv_timer_t *t) {
    conn *c = t->data;
    uint64_t idle = c->l->cfg.idle_ms, now = uv_now(t->loop);
    if (c->closing)
        return;
    if (c->paused)
        c->last_ms = now;
    /* a loop kept busy past the limit has not read yet what did arrive */
    uv_os_fd_t fd;
    int avail = 0;
    if (now - c->last_ms >= idle && uv_fileno((uv_handle_t *)&c->tcp, &fd) == 0 &&
        ioctl(fd, FIONREAD, &avail) == 0 && avail > 0)
        c->last_ms = now;
    if (now - c->last_ms < idle) {
        uv_timer_start(t, on_idle, idle - (now - c->last_ms), 0);
        return;
    }
    char msg[160];
    snprintf(msg, sizeof msg, "idle limit: no bytes for %llu ms (after %llu bytes)",
             (unsigned long long)(now - c->last_ms), (unsigned long long)c->bytes);
    conn_limit(c, msg);
}

static void on_read(uv_stream_t *s, ssize_t n, const uv_buf_t *b) {
    conn *c = s->data;
    if (c->closing)
        return;
    if (n < 0) {
        if (n == UV_EOF && c->paused)
            c->eof = true; /* finish once the pending bytes are taken */
        else if (n == UV_EOF)
            conn_finish(c);
        else
            conn_end(c, JFR_TRUNCATED, uv_strerror((int)n));
        return;
    }
    if (n == 0)
        return;
    c->bytes += (uint64_t)n;
    c->last_ms = uv_now(s->loop);
    uint64_t cap = c->l->cfg.max_bytes_per_conn;
    if (cap && c->bytes > cap) {
        char msg[160];
        snprintf(msg, sizeof msg, "byte limit %llu reached (chunk %llu, %llu bytes parsed)",
                 (unsigned long long)cap, (unsigned long long)jfr_parser_chunks(c->parser),
                 (unsigned long long)jfr_parser_bytes(c->parser));
        conn_limit(c, msg);
        return;
    }
    if (c->paused) { /* a read already in flight when we paused */
        if (!keep_pending(c, b->base, (size_t)n))
            conn_end(c, JFR_NOMEM, "out of memory");
        return;
    }
    conn_feed(c, b->base, (size_t)n);
}

void jfr_uv_conn_resume(jfr_uv_conn *pc) {
    conn *c = (conn *)pc;
    if (c->closing || !c->paused)
        return;
    c->paused = false;
    c->last_ms = uv_now(c->tcp.loop);
    /* feed what piled up; a new pause keeps the remainder again */
    char *p = c->pending;
    size_t n = c->npending;
    c->pending = NULL;
    c->npending = c->cappending = 0;
    bool alive = n ? conn_feed(c, p, n) : conn_feed(c, NULL, 0);
    free(p);
    if (alive && !c->paused && c->eof) {
        conn_finish(c);
        return;
    }
    if (alive && !c->paused && !c->reading) {
        uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read);
        c->reading = true;
    }
}

void jfr_uv_conn_stop(jfr_uv_conn *pc) {
    conn *c = (conn *)pc;
    if (!c->closing)
        conn_end(c, JFR_STOPPED, "closed by the application");
}

static void conn_name(conn *c) {
    struct sockaddr_storage ss;
    int len = sizeof ss;
    snprintf(c->peer, sizeof c->peer, "connection %llu", (unsigned long long)c->id);
    if (uv_tcp_getpeername(&c->tcp, (struct sockaddr *)&ss, &len) == 0) {
        char ip[48] = "?";
        int port = 0;
        if (ss.ss_family == AF_INET6) {
            struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;
            uv_ip6_name(a, ip, sizeof ip);
            port = ntohs(a->sin6_port);
        } else {
            struct sockaddr_in *a = (struct sockaddr_in *)&ss;
            uv_ip4_name(a, ip, sizeof ip);
            port = ntohs(a->sin_port);
        }
        snprintf(c->peer, sizeof c->peer, "%s:%d", ip, port);
    }
}

static void on_connection(uv_stream_t *server, int status) {
    listener *l = server->data;
    if (status < 0 || l->closing)
        return; /* e.g. EMFILE: libuv has accepted and dropped the peer */
    conn *c = calloc(1, sizeof *c);
    if (!c)
        return;
    c->l = l;
    uv_tcp_init(server->loop, &c->tcp);
    c->tcp.data = c;
    c->handles = 1;
    l->open_handles++;
    bool over = l->nconns >= l->max_conns;
    if (!over) {
        c->parser = jfr_parser_new(&l->options, &l->callbacks, c);
        if (c->parser && l->cfg.idle_ms) {
            uv_timer_init(server->loop, &c->idle);
            c->idle.data = c;
            c->handles++;
            l->open_handles++;
        }
    }
    /* accept even what we refuse: libuv stops accepting while one waits */
    if (uv_accept(server, (uv_stream_t *)&c->tcp) != 0) {
        c->closing = true;
        conn_close_handles(c);
        return;
    }
    c->id = ++l->next_id;
    conn_name(c);
    if (over || !c->parser) { /* closed at once: the peer sees the close */
        char msg[160];
        c->closing = true;
        if (over)
            snprintf(msg, sizeof msg, "%s: connection limit %u reached: refused", c->peer,
                     l->max_conns);
        else
            snprintf(msg, sizeof msg, "%s: out of memory: refused", c->peer);
        if (l->cfg.on_conn_end)
            l->cfg.on_conn_end(&c->pub, over ? JFR_LIMIT : JFR_NOMEM, msg, l->cfg.user);
        conn_close_handles(c);
        return;
    }
    c->next = l->conns;
    if (l->conns)
        l->conns->prev = c;
    l->conns = c;
    if (++l->nconns > l->peak)
        l->peak = l->nconns;
    c->last_ms = uv_now(server->loop);
    if (l->cfg.idle_ms)
        uv_timer_start(&c->idle, on_idle, l->cfg.idle_ms, 0);
    if (l->cfg.on_conn_start)
        l->cfg.on_conn_start(&c->pub, l->cfg.user);
    if (!c->closing && uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read) == 0)
        c->reading = true;
}

static void server_closed(uv_handle_t *h);

void jfr_uv_listener_config_init(jfr_uv_listener_config *cfg) {
    memset(cfg, 0, sizeof *cfg);
    cfg->size = sizeof *cfg;
}

jfr_status jfr_uv_listener_start(uv_loop_t *loop, const jfr_uv_listener_config *config,
                                 jfr_uv_listener **out, int *uv_error) {
    if (uv_error)
        *uv_error = 0;
    if (!loop || !config || !out)
        return JFR_INVALID_ARG;
    listener *l = calloc(1, sizeof *l);
    if (!l)
        return JFR_NOMEM;
    jfr_uv_listener_config *cfg = &l->cfg;
    jfr_options_init(&l->options);
    jfr_callbacks_init(&l->callbacks);
    if (!jfr__sized_copy(cfg, sizeof *cfg, config) ||
        (cfg->options && !jfr__sized_copy(&l->options, sizeof l->options, cfg->options)) ||
        (cfg->callbacks &&
         !jfr__sized_copy(&l->callbacks, sizeof l->callbacks, cfg->callbacks))) {
        free(l);
        return JFR_INVALID_ARG;
    }
    cfg->options = &l->options;
    cfg->callbacks = &l->callbacks;
    l->max_conns = cfg->max_connections ? cfg->max_connections : JFR_UV_DEFAULT_MAX_CONNECTIONS;
    l->bufcap = cfg->read_buffer ? cfg->read_buffer : 65536;
    if (!(l->buf = malloc(l->bufcap))) {
        free(l);
        return JFR_NOMEM;
    }
    const char *host = cfg->host ? cfg->host : "127.0.0.1";
    struct sockaddr_storage addr;
    int r = strchr(host, ':') ? uv_ip6_addr(host, cfg->port, (struct sockaddr_in6 *)&addr)
                              : uv_ip4_addr(host, cfg->port, (struct sockaddr_in *)&addr);
    if (r) {
        free(l->buf);
        free(l);
        if (uv_error)
            *uv_error = r;
        return JFR_IO;
    }
    uv_tcp_init(loop, &l->tcp);
    l->tcp.data = l;
    l->open_handles = 1;
    /* backlog: a burst of peers (a fleet of JVMs restarting together) must
     * not overflow the accept queue; the kernel caps it at somaxconn */
    if ((r = uv_tcp_bind(&l->tcp, (struct sockaddr *)&addr, 0)) ||
        (r = uv_listen((uv_stream_t *)&l->tcp, 4096, on_connection))) {
        l->closing = true; /* freed when the loop has closed the handle */
        uv_close((uv_handle_t *)&l->tcp, server_closed);
        if (uv_error)
            *uv_error = r;
        return JFR_IO;
    }
    struct sockaddr_storage name;
    int len = sizeof name;
    uv_tcp_getsockname(&l->tcp, (struct sockaddr *)&name, &len);
    l->port = ntohs(name.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&name)->sin6_port
                                                : ((struct sockaddr_in *)&name)->sin_port);
    l->started = true;
    *out = &l->pub;
    return JFR_OK;
}

int jfr_uv_listener_port(const jfr_uv_listener *pl) {
    return ((const listener *)pl)->port;
}

unsigned jfr_uv_listener_connections(const jfr_uv_listener *pl) {
    return ((const listener *)pl)->nconns;
}

unsigned jfr_uv_listener_peak(const jfr_uv_listener *pl) {
    return ((const listener *)pl)->peak;
}

static void server_closed(uv_handle_t *h) {
    listener *l = h->data;
    l->open_handles--;
    listener_maybe_done(l);
}

void jfr_uv_listener_stop(jfr_uv_listener *pl) {
    listener *l = (listener *)pl;
    if (l->closing)
        return;
    l->closing = true;
    while (l->conns)
        conn_finish(l->conns); /* reports partial chunks, unlinks */
    uv_close((uv_handle_t *)&l->tcp, server_closed);
}

jfr_parser *jfr_uv_conn_parser(jfr_uv_conn *c) { return ((conn *)c)->parser; }
jfr_uv_listener *jfr_uv_conn_listener(jfr_uv_conn *c) { return &((conn *)c)->l->pub; }
const char *jfr_uv_conn_peer(const jfr_uv_conn *c) { return ((const conn *)c)->peer; }
uint64_t jfr_uv_conn_id(const jfr_uv_conn *c) { return ((const conn *)c)->id; }
uint64_t jfr_uv_conn_bytes(const jfr_uv_conn *c) { return ((const conn *)c)->bytes; }
