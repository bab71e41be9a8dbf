/* TCP listener: one jfr_parser per connection, fed from libuv reads. */
#include "jfrstream_uv.h"
#include "mem.h"
#include "noun.h"
#include "sized.h"
#include "tls.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

typedef struct listener listener;

typedef struct conn {
    jfr_uv_conn pub;
    uv_tcp_t tcp;
    uv_timer_t idle;    /* idle_ms, and the TLS handshake's timeout */
    listener *l;
    jfr_parser *parser; /* NULL for a refused connection */
    struct conn *prev, *next;
    uint64_t id, bytes;
    uint64_t last_ms;   /* loop time of the last read (or accept, resume) */
    unsigned handles;   /* open libuv handles of this conn: freed at 0 */
    char peer[64];
    jfr_buf pending;    /* bytes read but not taken by the parser yet */
    char limit_msg[160]; /* a limit ended the input: reported at the end */
    bool paused;        /* a callback paused the parser: wait for resume */
    bool kick;          /* resumed with nothing pending: feed(NULL, 0) */
    bool finishing;     /* input ended: jfr_parser_finish until not paused */
    bool eof;           /* no more input (peer closed, a limit, listener stop) */
    bool limited;       /* ... because of a limit (limit_msg) */
    bool running;       /* inside conn_run: re-entrant calls only set flags */
    bool closing, reading;
    bool spare;         /* the listener's own conn, for a refusal without memory */
    bool deferred;      /* on the listener's list of conns to read next turn */
    bool timer;         /* `idle` was initialised (closed with the conn) */
    /* TLS (l->tls set): none of the peer's bytes reaches the parser, and
     * on_conn_start is not called, until `admitted`; tls_more: ciphertext
     * fed to OpenSSL may hold plaintext not taken yet. */
    bool admitted, tls_more;
    jfr__tls *tls;
    struct conn *defer_next;
    /* The hello line (jfrstream_uv.h, ACKNOWLEDGEMENTS): gathered here until
     * its '\n'; its bytes never reach the parser. */
    char hello[JFR_UV_HELLO_MAX];
    size_t hello_len;   /* bytes of the hello line, '\n' included once done */
    bool hello_done;    /* the first byte was not 'J', or the line is done */
    bool acks;          /* the hello asked for acks: ackt is open */
    /* Acks: what the application handed on (ack_want), the last N written
     * (ack_sent, at loop time ack_ms), the last chunk end the parser met. */
    uv_timer_t ackt;
    uint64_t ack_want, ack_sent, ack_ms, chunk_end, linger_until;
    uint64_t alive_ms;  /* loop time of the last ack line written, or the hello */
    bool write_failed;  /* the peer is gone for writes: no more acks */
    bool lingering;     /* input ended cleanly: waiting for the last ack */
} conn;

struct listener {
    jfr_uv_listener pub;
    uv_tcp_t tcp;
    jfr_uv_listener_config cfg; /* cfg.options, cfg.callbacks: the two below */
    jfr_options options;        /* options.allocator: every allocation here */
    jfr_callbacks callbacks;   /* on_chunk_end: conn_chunk_end, which calls ... */
    jfr_chunk_cb app_chunk_end; /* ... the application's */
    conn *conns;
    unsigned nconns, peak;
    unsigned max_conns;
    uint64_t ack_keepalive_ms; /* resolved: the default for 0 */
    uint64_t refused;
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
    /* A peer that arrives when no conn can be allocated is accepted into
     * `spare` and closed at once (libuv stops watching the server socket
     * while an accepted peer waits for uv_accept). While the spare is busy,
     * the peer waits in libuv (accept_waiting) until it is free again. */
    conn spare;
    bool spare_busy, accept_waiting;
    unsigned open_handles;
    /* The turn's read budget: bytes read from all connections in this turn
     * of the loop; a conn over it is refused its read (an empty buffer: the
     * bytes stay in the socket) and read again after the poll, from `turn`. */
    uv_check_t turn;
    size_t turn_bytes;
    conn *deferred;
    /* TLS: the loaded config, refusals, and one buffer of decrypted bytes
     * for all connections (as `buf`); a connection fed from it while
     * another one's feed from it is under way (a callback resumed it)
     * decrypts into its own `pending` instead (pbuf_busy). */
    jfr__tls_ctx *tls;
    uint64_t tls_refused;
    char *pbuf;         /* bufcap bytes */
    bool pbuf_busy;
};

/* A TLS record carries at most 16 KiB of plaintext: what one decryption
 * into a conn's pending adds (the rare case beside pbuf). */
#define LISTEN_TLS_PLAIN 16384

#define LISTEN_BACKLOG 4096         /* a fleet of JVMs restarting together */
#define LISTEN_READ_BUFFER 65536    /* read_buffer 0: a typical receive window */
/* Bytes read from all connections in one turn of the loop, as the tail's
 * TAIL_TURN_BYTES: libuv reads a readable stream up to 32 times in a row and
 * serves every ready one in the same poll, so 1,000 JVMs sending at once
 * would otherwise hold the loop (timers, new peers, a metrics scrape's wake)
 * for the parse of everything they sent. */
#define LISTEN_TURN_BYTES (1u << 20)
#define ACK_INTERVAL_MS 50          /* at most one ack per 50 ms (coalesced) */

static void listener_accept(listener *l);
static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *b);
static void on_read(uv_stream_t *s, ssize_t n, const uv_buf_t *b);

static void listener_maybe_done(listener *l) {
    if (l->closing && l->open_handles == 0) {
        if (l->started && l->cfg.on_end)
            l->cfg.on_end(&l->pub, l->cfg.user);
        jfr_allocator a = l->options.allocator;
        jfr__tls_ctx_free(l->tls);
        jfr__free(&a, l->pbuf, l->bufcap);
        jfr__free(&a, l->buf, l->bufcap);
        jfr__free(&a, l, sizeof *l);
    }
}

static void conn_closed(uv_handle_t *h) {
    conn *c = h->data;
    listener *l = c->l;
    l->open_handles--;
    if (--c->handles == 0) {
        jfr_parser_free(c->parser);
        jfr__tls_free(c->tls);
        jfr__buf_free(&l->options.allocator, &c->pending);
        if (c->spare) {
            l->spare_busy = false;
            if (l->accept_waiting && !l->closing) {
                l->accept_waiting = false;
                listener_accept(l);
            }
        } else {
            jfr__free(&l->options.allocator, c, sizeof *c);
        }
    }
    listener_maybe_done(l);
}

static void conn_close_handles(conn *c) {
    if (c->timer)
        uv_close((uv_handle_t *)&c->idle, conn_closed);
    if (c->acks)
        uv_close((uv_handle_t *)&c->ackt, conn_closed);
    uv_close((uv_handle_t *)&c->tcp, conn_closed);
}

static void conn_read_stop(conn *c) {
    if (c->reading) {
        uv_read_stop((uv_stream_t *)&c->tcp);
        c->reading = false;
    }
}

/* End a connection once: report, unlink, close the socket. */
static void ack_final(conn *c, jfr_status st);

static void conn_end(conn *c, jfr_status st, const char *msg) {
    if (c->closing)
        return;
    ack_final(c, st); /* before closing: conn_write refuses a closing conn */
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
    conn_read_stop(c);
    char text[512];
    snprintf(text, sizeof text, "%s: %s", c->peer, msg);
    if (l->cfg.on_conn_end)
        l->cfg.on_conn_end(&c->pub, st, text, l->cfg.user);
    conn_close_handles(c);
}

static void conn_failed(conn *c, jfr_status s) {
    conn_end(c, s, s == JFR_STOPPED ? "stopped by a callback" : jfr_parser_error(c->parser));
}

/* A TLS peer not admitted (jfrstream_uv.h, TLS): ended, counted. */
static void conn_refuse(conn *c, jfr_status st, const char *why) {
    if (c->closing)
        return;
    char msg[400];
    snprintf(msg, sizeof msg, "refused: %s", why);
    c->l->refused++;
    c->l->tls_refused++;
    conn_end(c, st, msg);
}

/* One queued write: the bytes are copied after the request. */
typedef struct conn_wreq {
    uv_write_t req;
    listener *l; /* outlives the request: its callback runs before the
                    conn's close callback (libuv cancels what is queued) */
    size_t len;
    char data[];
} conn_wreq;

static void conn_wrote(uv_write_t *req, int status) {
    (void)status; /* a failed write shows as a read error or EOF */
    conn_wreq *w = (conn_wreq *)req;
    jfr__free(&w->l->options.allocator, w, sizeof *w + w->len);
}

/* Send bytes on the socket as they are; with TLS, what OpenSSL wants sent
 * (from == NULL: taken from jfr__tls_out). First straight to the socket
 * with MSG_NOSIGNAL (libuv's write(2) would raise SIGPIPE when the peer has
 * gone, and a listener must not die of a peer: jfrstream_uv.h, TLS); what
 * the socket does not take at once is queued in libuv. */
static jfr_status conn_send(conn *c, const void *from, size_t n) {
    listener *l = c->l;
    char tmp[4096];
    uv_os_fd_t fd;
    if (n == 0)
        return JFR_OK;
    if (uv_stream_get_write_queue_size((uv_stream_t *)&c->tcp) == 0 &&
        uv_fileno((uv_handle_t *)&c->tcp, &fd) == 0) {
        const char *p = from;
        size_t len = n;
        if (!p) { /* small ones (handshake flights, alerts) need no allocation */
            if (n > sizeof tmp)
                goto queue;
            len = jfr__tls_out(c->tls, tmp, n);
            p = tmp;
        }
        ssize_t k;
        do
            k = send(fd, p, len, MSG_NOSIGNAL | MSG_DONTWAIT);
        while (k < 0 && errno == EINTR);
        if (k < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
            return JFR_IO; /* the peer is gone: its read side ends the conn */
        if (k < 0)
            k = 0;
        if ((size_t)k == len)
            return JFR_OK;
        from = p + k;
        n = len - (size_t)k;
    }
queue:;
    conn_wreq *w = n > SIZE_MAX - sizeof *w ? NULL : jfr__alloc(&l->options.allocator, sizeof *w + n);
    if (!w)
        return JFR_NOMEM;
    w->l = l;
    w->len = n; /* the allocation's */
    size_t len = n;
    if (from)
        memcpy(w->data, from, n);
    else
        len = jfr__tls_out(c->tls, w->data, n); /* all of it: it was pending */
    uv_buf_t b = uv_buf_init(w->data, (unsigned)len);
    if (uv_write(&w->req, (uv_stream_t *)&c->tcp, &b, 1, conn_wrote) != 0) {
        jfr__free(&l->options.allocator, w, sizeof *w + n);
        return JFR_IO;
    }
    return JFR_OK;
}

/* Send what OpenSSL produced (handshake replies, alerts, records). */
static jfr_status conn_tls_flush(conn *c) {
    size_t n = jfr__tls_out_pending(c->tls);
    return n ? conn_send(c, NULL, n) : JFR_OK;
}

/*
 * THE write path from the listener to a peer (for messages back to the
 * sender on the same connection, e.g. acknowledgements): encrypted when the
 * listener serves TLS, as is otherwise. The bytes are copied (the caller's
 * buffer is free when this returns) and queued in libuv, which sends them
 * as the socket takes them; nothing here bounds that queue: a caller that
 * writes to a peer which may never read checks
 * uv_stream_get_write_queue_size((uv_stream_t *)&c->tcp) first. JFR_OK,
 * JFR_INVALID_STATE (the conn is closing, or a TLS peer not admitted yet),
 * JFR_NOMEM, JFR_IO (libuv or OpenSSL refused: the connection is broken).
 */
static jfr_status conn_write(conn *c, const void *p, size_t n) {
    if (c->closing || (c->tls && !c->admitted))
        return JFR_INVALID_STATE;
    if (!c->tls)
        return conn_send(c, p, n);
    jfr_status st = jfr__tls_write(c->tls, p, n);
    jfr_status fl = conn_tls_flush(c);
    return st != JFR_OK ? st : fl;
}

/* A callback paused the parser: stop reading (TCP back-pressure) until
 * jfr_uv_conn_resume. */
static void conn_pause(conn *c) {
    c->paused = true;
    conn_read_stop(c);
}

/* Keep bytes the parser did not take (a pause) for after the resume. */
static bool conn_keep(conn *c, const char *p, size_t n) {
    if (n == 0)
        return true;
    if (jfr__buf_reserve(&c->l->options.allocator, &c->pending, n, 0) != JFR_OK) {
        conn_end(c, JFR_NOMEM, "out of memory");
        return false;
    }
    memcpy(c->pending.data + c->pending.len, p, n);
    c->pending.len += n;
    return true;
}

static void conn_input_end(conn *c, const char *limit_msg);

/* Decrypt up to a read buffer's worth (records until pbuf is full or
 * OpenSSL needs more bytes) and feed it in one call, as a plain read's
 * bytes (the parser then buffers as few records split across calls as for
 * plain TCP); what the parser does not take (a pause) waits in pending.
 * False: the conn ended. */
static bool conn_hello(conn *c, const char **data, size_t *len);

static bool conn_tls_step(conn *c) {
    listener *l = c->l;
    char why[200];
    long k = 0;
    if (l->pbuf_busy) { /* another conn's feed from pbuf is under way */
        if (jfr__buf_reserve(&l->options.allocator, &c->pending, LISTEN_TLS_PLAIN, 0) != JFR_OK) {
            conn_end(c, JFR_NOMEM, "out of memory");
            return false;
        }
        k = jfr__tls_read(c->tls, c->pending.data + c->pending.len, LISTEN_TLS_PLAIN, why,
                          sizeof why);
        if (k > 0) {
            char *at = (char *)c->pending.data + c->pending.len;
            const char *d = at;
            size_t n = (size_t)k;
            if (!c->hello_done && !conn_hello(c, &d, &n)) {
                if (c->closing)
                    return false; /* a bad hello line */
                n = 0;            /* all of it was hello */
            }
            memmove(at, d, n);
            c->pending.len += n;
        }
    } else {
        size_t got = 0;
        while (got < l->bufcap &&
               (k = jfr__tls_read(c->tls, l->pbuf + got, l->bufcap - got, why, sizeof why)) > 0)
            got += (size_t)k;
        if (k >= 0 && got) /* k 0: nothing more for now, after these */
            k = (long)got;
        else if (k >= 0)
            k = 0;
    }
    /* (JFR_IO: the peer is gone, which its read side reports) */
    if (conn_tls_flush(c) == JFR_NOMEM && k >= 0) {
        conn_end(c, JFR_NOMEM, "out of memory");
        return false;
    }
    if (k < 0) {
        conn_end(c, JFR_IO, why);
        return false;
    }
    if (k == 0) {
        c->tls_more = false;
        if (jfr__tls_peer_closed(c->tls))
            conn_input_end(c, NULL); /* as a FIN: conn_run finishes */
        return true;
    }
    if (l->pbuf_busy)
        return true; /* in pending: fed by conn_run's next step */
    const char *data = l->pbuf;
    size_t len = (size_t)k;
    if (!c->hello_done && !conn_hello(c, &data, &len))
        return !c->closing; /* all of it was hello, or a bad one */
    l->pbuf_busy = true;
    jfr_status st = jfr_parser_feed(c->parser, data, len);
    l->pbuf_busy = false;
    if (st == JFR_PAUSED) {
        size_t used = jfr_parser_consumed(c->parser);
        if (used > len)
            used = len;
        if (!conn_keep(c, data + used, len - used))
            return false;
        conn_pause(c);
    } else if (st != JFR_OK) {
        conn_failed(c, st);
        return false;
    }
    return true;
}

static bool ack_linger(conn *c);

/* The one pause rule (jfrstream_uv.h): feed what is pending; once the input
 * ended, jfr_parser_finish. A pause (JFR_PAUSED from either) stops here until
 * jfr_uv_conn_resume, which comes back here; nothing is fed or finished
 * behind the application's back. Then read again, or end the connection. */
static void conn_run(conn *c) {
    if (c->running)
        return; /* called from a callback of this conn: the outer run goes on */
    c->running = true;
    while (!c->closing && !c->paused) {
        jfr_status s;
        if (c->finishing || (c->eof && !c->pending.len && !c->kick && !c->tls_more)) {
            c->finishing = true;
            c->kick = false;
            s = jfr_parser_finish(c->parser);
            if (s == JFR_PAUSED) {
                conn_pause(c);
                break;
            }
            if (c->limited)
                conn_end(c, JFR_LIMIT, c->limit_msg);
            else if (s == JFR_OK && ack_linger(c))
                ; /* ended by jfr_uv_conn_ack or the linger's end */
            else
                conn_end(c, s, s == JFR_OK ? "stream ended" : jfr_parser_error(c->parser));
            break;
        }
        if (c->pending.len || c->kick) {
            c->kick = false;
            size_t n = c->pending.len;
            s = jfr_parser_feed(c->parser, c->pending.data, n);
            size_t used = s == JFR_OK ? n : jfr_parser_consumed(c->parser);
            if (s != JFR_OK && s != JFR_PAUSED) {
                conn_failed(c, s);
                break;
            }
            if (used > n)
                used = n;
            if (used < n)
                memmove(c->pending.data, c->pending.data + used, n - used);
            c->pending.len = n - used;
            if (s == JFR_PAUSED)
                conn_pause(c);
            continue;
        }
        if (c->tls_more) {
            if (!conn_tls_step(c))
                break;
            continue;
        }
        if (!c->reading && uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read) == 0)
            c->reading = true;
        break;
    }
    c->running = false;
}

/* No more input: the pending bytes are fed, then the parser is finished,
 * each after the application's resume when a callback paused. A limit
 * drops what is pending; an unfinished chunk is still reported (the
 * parser's on_error gets JFR_TRUNCATED with what was dropped). */
static void conn_input_end(conn *c, const char *limit_msg) {
    if (c->closing || c->eof)
        return;
    if (c->tls && !c->admitted) { /* nothing was parsed: no finish */
        if (limit_msg)
            conn_refuse(c, JFR_LIMIT, limit_msg);
        else if (c->l->closing)
            conn_end(c, JFR_STOPPED, "listener stopped during the TLS handshake");
        else
            conn_refuse(c, JFR_REFUSED, "closed during the TLS handshake");
        return;
    }
    if (!limit_msg && c->hello_len && !c->hello_done) {
        conn_end(c, JFR_BAD_MAGIC, "bad hello line: the stream ended inside it");
        return;
    }
    c->eof = true;
    conn_read_stop(c);
    if (limit_msg) {
        c->limited = true;
        snprintf(c->limit_msg, sizeof c->limit_msg, "%s", limit_msg);
        c->pending.len = 0;
        c->finishing = true;
    }
    if (!c->paused)
        conn_run(c);
}

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *b) {
    (void)suggested;
    conn *c = h->data;
    listener *l = c->l;
    /* over the turn's budget: no buffer, so libuv reads nothing and calls
     * on_read with UV_ENOBUFS (conn_defer) */
    b->base = l->turn_bytes < LISTEN_TURN_BYTES ? l->buf : NULL;
    b->len = b->base ? l->bufcap : 0;
}

/* Read this conn again next turn (on_turn): its bytes wait in the socket. */
static void conn_defer(conn *c) {
    listener *l = c->l;
    conn_read_stop(c);
    if (!c->deferred) {
        c->deferred = true;
        c->defer_next = l->deferred;
        l->deferred = c;
    }
}

/* After each poll: a new budget, and the conns deferred in it read again
 * (their sockets are readable, so the next poll does not wait). A conn on
 * the list is freed no earlier than the close callbacks, which run after
 * this in the same turn. */
static void on_turn(uv_check_t *h) {
    listener *l = h->data;
    l->turn_bytes = 0;
    conn *c = l->deferred, *next;
    l->deferred = NULL;
    for (; c; c = next) {
        next = c->defer_next;
        c->defer_next = NULL;
        c->deferred = false;
        if (!c->closing && !c->eof && !c->paused && !c->pending.len && !c->reading &&
            uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read) == 0)
            c->reading = true;
    }
}

/* Fires idle_ms after the last read; re-armed for the time left when bytes
 * came in meanwhile (cheaper than restarting a timer on every read). A
 * connection paused by the application is not idle: we stopped reading. */
static void on_idle(uv_timer_t *t) {
    conn *c = t->data;
    uint64_t idle = c->l->cfg.idle_ms, now = uv_now(t->loop);
    if (c->closing || c->eof)
        return;
    if (c->tls && !c->admitted) {
        char why[80];
        snprintf(why, sizeof why, "TLS handshake timeout (%llu ms)",
                 (unsigned long long)jfr__tls_ctx_timeout_ms(c->l->tls));
        conn_refuse(c, JFR_REFUSED, why);
        return;
    }
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
    snprintf(msg, sizeof msg, "idle limit: no bytes for %llu ms (after %llu %s)",
             (unsigned long long)(now - c->last_ms), (unsigned long long)c->bytes,
             jfr__noun(c->bytes, "byte", "bytes"));
    conn_input_end(c, msg);
}

/* The handshake is done and the client admitted: announce the conn, and
 * the timer goes from the handshake's timeout to idle_ms. */
static void conn_admit(conn *c) {
    listener *l = c->l;
    c->admitted = true;
    c->last_ms = uv_now(c->tcp.loop);
    if (l->cfg.idle_ms)
        uv_timer_start(&c->idle, on_idle, l->cfg.idle_ms, 0);
    else
        uv_timer_stop(&c->idle);
    if (l->cfg.on_conn_start)
        l->cfg.on_conn_start(&c->pub, l->cfg.user);
}

/* Ciphertext read: to OpenSSL, the handshake first; then the plaintext is
 * fed by conn_run (which waits while paused: the rest is kept by tls.c,
 * bounded by the one read that may be in flight). */
static void conn_tls_in(conn *c, const char *p, size_t n) {
    char why[200];
    jfr_status st = jfr__tls_in(c->tls, p, n, why, sizeof why);
    if (st != JFR_OK) {
        if (c->admitted)
            conn_end(c, st, why);
        else
            conn_refuse(c, st, why);
        return;
    }
    if (!c->admitted) {
        st = jfr__tls_handshake(c->tls, why, sizeof why);
        /* its replies, or the alert (JFR_IO: the peer is gone, which its
         * read side reports) */
        jfr_status fl = conn_tls_flush(c);
        if (fl == JFR_IO)
            fl = JFR_OK;
        if (st == JFR_PAUSED && fl == JFR_OK)
            return;
        if (st != JFR_OK || fl != JFR_OK) {
            conn_refuse(c, st != JFR_OK ? st : fl, st != JFR_OK ? why : "out of memory");
            return;
        }
        conn_admit(c);
        if (c->closing || c->eof)
            return;
    }
    c->tls_more = true;
    if (!c->paused)
        conn_run(c);
}

/* ------------------------------------------------------------ hello, acks */

static void ack_send(conn *c);
static void on_ack_timer(uv_timer_t *t);

/* Arm the ack timer for `ms` from now unless it fires sooner already. */
static void ack_arm(conn *c, uint64_t ms) {
    uint64_t due = uv_timer_get_due_in(&c->ackt);
    if (!uv_is_active((uv_handle_t *)&c->ackt) || due > ms)
        uv_timer_start(&c->ackt, on_ack_timer, ms, 0);
}

/* The line "ACK N" to the peer (conn_write's status). */
static jfr_status ack_write(conn *c, uint64_t n) {
    char line[32];
    int k = snprintf(line, sizeof line, "ACK %llu\n", (unsigned long long)n);
    return conn_write(c, line, (size_t)k);
}

/* Write "ACK N" when N grew: at once after a chunk end, else at most one per
 * ACK_INTERVAL_MS (the timer sends the newest N then). */
static void ack_send(conn *c) {
    if (!c->acks || c->closing || c->write_failed || c->ack_want <= c->ack_sent)
        return;
    uint64_t now = uv_now(c->tcp.loop);
    /* one write at a time: the last one still queued (a peer not reading):
     * the newest N once it has gone */
    if (uv_stream_get_write_queue_size((uv_stream_t *)&c->tcp) != 0) {
        ack_arm(c, ACK_INTERVAL_MS);
        return;
    }
    bool chunk = c->chunk_end > c->ack_sent && c->ack_want >= c->chunk_end;
    if (!chunk && c->ack_ms && now - c->ack_ms < ACK_INTERVAL_MS) {
        ack_arm(c, ACK_INTERVAL_MS - (now - c->ack_ms));
        return;
    }
    jfr_status st = ack_write(c, c->ack_want);
    if (st == JFR_OK) {
        c->ack_sent = c->ack_want;
        c->ack_ms = now ? now : 1;
        c->alive_ms = now;
    } else {
        c->write_failed = true; /* broken, or no memory: no more acks */
    }
}

/* The end of an acks connection: after a clean end of input the last N at
 * once (the peer may wait for it before closing), when nothing is queued:
 * it goes straight to the socket, and the close waits for nothing. */
static void ack_final(conn *c, jfr_status st) {
    if (!c->acks || st != JFR_OK || c->ack_want <= c->ack_sent || c->write_failed ||
        uv_stream_get_write_queue_size((uv_stream_t *)&c->tcp) != 0)
        return;
    if (ack_write(c, c->ack_want) == JFR_OK)
        c->ack_sent = c->ack_want;
}

/* The input ended cleanly: wait up to ack_linger_ms for the application to
 * hand on every byte (true: waiting, the end comes later). */
static bool ack_linger(conn *c) {
    uint64_t total = jfr_parser_bytes(c->parser);
    if (!c->acks || !c->l->cfg.ack_linger_ms || c->ack_want >= total || c->write_failed)
        return false;
    c->lingering = true;
    c->linger_until = uv_now(c->tcp.loop) + c->l->cfg.ack_linger_ms;
    ack_arm(c, c->l->cfg.ack_linger_ms);
    return true;
}

static void linger_end(conn *c) {
    char msg[160];
    uint64_t total = jfr_parser_bytes(c->parser);
    if (c->ack_want >= total)
        snprintf(msg, sizeof msg, "stream ended");
    else
        snprintf(msg, sizeof msg, "stream ended (%llu of %llu bytes handed on when the ack "
                 "wait ended)", (unsigned long long)c->ack_want, (unsigned long long)total);
    conn_end(c, JFR_OK, msg);
}

/* No ack line for keepalive ms: the last N again, the sender's sign that
 * the connection lives (a queued write means a peer that does not read:
 * nothing more is queued, it is tried again a keepalive later). */
static void ack_keepalive(conn *c) {
    uint64_t ka = c->l->ack_keepalive_ms, now = uv_now(c->tcp.loop);
    if (ka == UINT64_MAX || c->closing || c->write_failed)
        return;
    if (now - c->alive_ms >= ka) {
        if (uv_stream_get_write_queue_size((uv_stream_t *)&c->tcp) == 0 &&
            ack_write(c, c->ack_sent) != JFR_OK) {
            c->write_failed = true;
            return;
        }
        c->alive_ms = now;
    }
    ack_arm(c, ka - (now - c->alive_ms));
}

static void on_ack_timer(uv_timer_t *t) {
    conn *c = t->data;
    if (c->closing)
        return;
    if (c->lingering && uv_now(t->loop) >= c->linger_until) {
        linger_end(c);
        return;
    }
    ack_send(c);
    if (c->lingering)
        ack_arm(c, c->linger_until - uv_now(t->loop));
    ack_keepalive(c);
}

/* The parser finished a chunk: an ack that reaches its end goes at once. */
static int conn_chunk_end(jfr_parser *p, const jfr_chunk_info *info, void *user) {
    conn *c = (conn *)user;
    c->chunk_end = info->offset + (uint64_t)info->size;
    jfr_chunk_cb app = c->l->app_chunk_end;
    return app ? app(p, info, user) : JFR_CB_CONTINUE;
}

/* The hello line's words after "JFRS/1" (the line is checked printable). */
static bool hello_words(conn *c, const char *w, size_t n) {
    if (n < 6 || memcmp(w, "JFRS/", 5) != 0 || (n > 6 && w[6] != ' ') || w[5] != '1')
        return false;
    for (size_t i = 6; i < n;) {
        while (i < n && w[i] == ' ')
            i++;
        size_t j = i;
        while (j < n && w[j] != ' ')
            j++;
        if (j - i == 3 && memcmp(w + i, "ack", 3) == 0)
            c->acks = true; /* other words: ignored (a later version's) */
        i = j;
    }
    return true;
}

static void hello_bad(conn *c, const char *why) {
    char msg[200];
    snprintf(msg, sizeof msg, "bad hello line: %s", why);
    conn_end(c, JFR_BAD_MAGIC, msg);
}

/* The first bytes of a connection: 'J' starts the hello line, the 'F' of
 * "FLR" a bare JFR stream. Takes the line's bytes from data, len; false
 * when nothing is left to feed (more hello to come, or the conn ended). */
static bool conn_hello(conn *c, const char **data, size_t *len) {
    if (c->hello_len == 0 && (*data)[0] != 'J') {
        c->hello_done = true;
        return true;
    }
    const char *nl = memchr(*data, '\n', *len);
    size_t take = nl ? (size_t)(nl - *data) + 1 : *len;
    if (c->hello_len + take > sizeof c->hello) {
        hello_bad(c, "longer than 256 bytes");
        return false;
    }
    memcpy(c->hello + c->hello_len, *data, take);
    c->hello_len += take;
    *data += take;
    *len -= take;
    if (!nl)
        return false;
    size_t n = c->hello_len - 1;
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)c->hello[i] < 0x20 || (unsigned char)c->hello[i] > 0x7e) {
            char why[64];
            snprintf(why, sizeof why, "byte 0x%02x at %zu is not printable ASCII",
                     (unsigned char)c->hello[i], i);
            hello_bad(c, why);
            return false;
        }
    if (!hello_words(c, c->hello, n)) {
        char why[120];
        snprintf(why, sizeof why, "'%.*s' (this listener speaks JFRS/1)", (int)(n < 60 ? n : 60),
                 c->hello);
        hello_bad(c, why);
        return false;
    }
    c->hello_done = true;
    if (c->acks) {
        uv_timer_init(c->tcp.loop, &c->ackt);
        c->ackt.data = c;
        c->alive_ms = uv_now(c->tcp.loop);
        c->handles++;
        c->l->open_handles++;
        ack_keepalive(c); /* arms the timer for the first one */
    }
    return *len > 0;
}

static void on_read(uv_stream_t *s, ssize_t n, const uv_buf_t *b) {
    conn *c = s->data;
    if (c->closing || c->eof)
        return;
    if (n == UV_ENOBUFS) { /* on_alloc: the turn's budget is spent */
        conn_defer(c);
        return;
    }
    if (n < 0) {
        if (n == UV_EOF)
            conn_input_end(c, NULL); /* pending bytes first, then finish */
        else if (c->tls && !c->admitted)
            conn_refuse(c, JFR_REFUSED, uv_strerror((int)n));
        else
            conn_end(c, JFR_TRUNCATED, uv_strerror((int)n));
        return;
    }
    if (n == 0)
        return;
    c->bytes += (uint64_t)n;
    c->l->turn_bytes += (size_t)n;
    c->last_ms = uv_now(s->loop);
    uint64_t cap = c->l->cfg.max_bytes_per_conn;
    if (cap && c->bytes > cap) {
        char msg[160];
        snprintf(msg, sizeof msg, "byte limit %llu reached (chunk %llu, %llu %s parsed)",
                 (unsigned long long)cap, (unsigned long long)jfr_parser_chunks(c->parser),
                 (unsigned long long)jfr_parser_bytes(c->parser),
                 jfr__noun(jfr_parser_bytes(c->parser), "byte", "bytes"));
        conn_input_end(c, msg);
        return;
    }
    if (c->tls) {
        conn_tls_in(c, b->base, (size_t)n);
        /* b->base is the listener's one read buffer: OpenSSL's unread rest
         * of it is kept (the conn may have ended: then it is freed unread) */
        if (jfr__tls_in_end(c->tls) != JFR_OK && !c->closing)
            conn_end(c, JFR_NOMEM, "out of memory");
        return;
    }
    const char *data = b->base;
    size_t len = (size_t)n;
    if (!c->hello_done && !conn_hello(c, &data, &len))
        return; /* all of it was hello (or a bad one ended the conn) */
    if (c->paused || c->pending.len) { /* a read already in flight when we paused */
        conn_keep(c, data, len);
        return;
    }
    /* the usual case: straight from the read buffer, no copy */
    c->running = true;
    jfr_status st = jfr_parser_feed(c->parser, data, len);
    c->running = false;
    if (st == JFR_PAUSED) {
        size_t used = jfr_parser_consumed(c->parser);
        if (used > len)
            used = len;
        if (conn_keep(c, data + used, len - used))
            conn_pause(c);
    } else if (st != JFR_OK) {
        conn_failed(c, st);
    } else if (c->eof) {
        conn_run(c); /* the listener was stopped from a callback */
    }
}

void jfr_uv_conn_resume(jfr_uv_conn *pc) {
    conn *c = (conn *)pc;
    if (!c || c->closing || !c->paused)
        return;
    c->paused = false;
    c->kick = !c->pending.len && !c->finishing;
    c->last_ms = uv_now(c->tcp.loop);
    conn_run(c);
}

void jfr_uv_conn_stop(jfr_uv_conn *pc) {
    conn *c = (conn *)pc;
    if (c && !c->closing)
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

/* Take the peer libuv accepted. Every peer is uv_accept'ed, even one we
 * refuse: libuv stops watching the server socket while one waits. */
static void listener_accept(listener *l) {
    uv_loop_t *loop = l->tcp.loop;
    conn *c = jfr__calloc(&l->options.allocator, sizeof *c);
    if (!c) {
        if (l->spare_busy) { /* the peer waits in libuv for the spare */
            l->accept_waiting = true;
            return;
        }
        c = &l->spare;
        memset(c, 0, sizeof *c);
        c->spare = true;
        l->spare_busy = true;
    }
    c->l = l;
    uv_tcp_init(loop, &c->tcp);
    c->tcp.data = c;
    c->handles = 1;
    l->open_handles++;
    bool over = l->nconns >= l->max_conns;
    if (!over && !c->spare) {
        c->parser = jfr_parser_new(&l->options, &l->callbacks, c);
        if (c->parser && l->tls && !(c->tls = jfr__tls_new(l->tls))) {
            jfr_parser_free(c->parser);
            c->parser = NULL; /* refused below, for lack of memory */
        }
        if (c->parser && (l->cfg.idle_ms || l->tls)) {
            uv_timer_init(loop, &c->idle);
            c->idle.data = c;
            c->timer = true;
            c->handles++;
            l->open_handles++;
        }
    }
    if (uv_accept((uv_stream_t *)&l->tcp, (uv_stream_t *)&c->tcp) != 0) {
        c->closing = true;
        conn_close_handles(c);
        return;
    }
    c->id = ++l->next_id;
    conn_name(c);
    if (over || !c->parser) { /* closed at once: the peer sees the close */
        char msg[160];
        c->closing = true;
        l->refused++;
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
    c->last_ms = uv_now(loop);
    if (c->tls) { /* announced once admitted (conn_admit) */
        uv_timer_start(&c->idle, on_idle, jfr__tls_ctx_timeout_ms(l->tls), 0);
    } else {
        c->admitted = true;
        if (l->cfg.idle_ms)
            uv_timer_start(&c->idle, on_idle, l->cfg.idle_ms, 0);
        if (l->cfg.on_conn_start)
            l->cfg.on_conn_start(&c->pub, l->cfg.user);
    }
    if (!c->closing && !c->eof && uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read) == 0)
        c->reading = true;
}

static void on_connection(uv_stream_t *server, int status) {
    listener *l = server->data;
    if (status < 0 || l->closing)
        return; /* e.g. EMFILE: libuv has accepted and dropped the peer */
    listener_accept(l);
}

static void server_closed(uv_handle_t *h);

void jfr_uv_listener_config_init(jfr_uv_listener_config *cfg) {
    memset(cfg, 0, sizeof *cfg);
    cfg->size = sizeof *cfg;
}

void jfr_uv_tls_config_init(jfr_uv_tls_config *cfg) {
    memset(cfg, 0, sizeof *cfg);
    cfg->size = sizeof *cfg;
}

/* Free a listener whose start failed before its handles. */
static jfr_status start_failed(listener *l, jfr_status st) {
    jfr_allocator a = l->options.allocator;
    jfr__tls_ctx_free(l->tls);
    jfr__free(&a, l->pbuf, l->bufcap);
    jfr__free(&a, l->buf, l->bufcap);
    jfr__free(&a, l, sizeof *l);
    return st;
}

/* config.error: the message of a failed start. */
static void start_error(const jfr_uv_listener_config *cfg, const char *host, int port,
                        const char *msg) {
    if (!cfg->error || !cfg->error_size)
        return;
    if (host)
        snprintf(cfg->error, cfg->error_size, "%s:%d: %s", host, port, msg);
    else
        snprintf(cfg->error, cfg->error_size, "%s", msg);
}

jfr_status jfr_uv_listener_start(uv_loop_t *loop, const jfr_uv_listener_config *config,
                                 jfr_uv_listener **out, int *uv_error) {
    if (uv_error)
        *uv_error = 0;
    if (!loop || !config || !out)
        return JFR_INVALID_ARG;
    /* the caller's structs first: the options carry the allocator */
    jfr_uv_listener_config cfg;
    jfr_options options;
    jfr_callbacks callbacks;
    jfr_options_init(&options);
    jfr_callbacks_init(&callbacks);
    jfr_uv_tls_config tls;
    if (!jfr__sized_copy(&cfg, sizeof cfg, config))
        return JFR_INVALID_ARG;
    if (cfg.error && cfg.error_size)
        cfg.error[0] = '\0';
    if ((cfg.options && !jfr__sized_copy(&options, sizeof options, cfg.options)) ||
        (cfg.callbacks && !jfr__sized_copy(&callbacks, sizeof callbacks, cfg.callbacks)) ||
        (cfg.tls && !jfr__sized_copy(&tls, sizeof tls, cfg.tls))) {
        start_error(&cfg, NULL, 0, "uninitialised config (size)");
        return JFR_INVALID_ARG;
    }
    const jfr_allocator *al = &options.allocator;
    listener *l = jfr__calloc(al, sizeof *l);
    if (!l)
        return JFR_NOMEM;
    l->cfg = cfg;
    l->options = options;
    l->callbacks = callbacks;
    al = &l->options.allocator;
    l->cfg.options = &l->options;
    l->cfg.callbacks = &l->callbacks;
    l->app_chunk_end = l->callbacks.on_chunk_end;
    l->callbacks.on_chunk_end = conn_chunk_end;
    l->max_conns = cfg.max_connections ? cfg.max_connections : JFR_UV_DEFAULT_MAX_CONNECTIONS;
    l->ack_keepalive_ms = cfg.ack_keepalive_ms ? cfg.ack_keepalive_ms : JFR_UV_DEFAULT_ACK_KEEPALIVE_MS;
    l->bufcap = cfg.read_buffer ? cfg.read_buffer : LISTEN_READ_BUFFER;
    if (!(l->buf = jfr__alloc(al, l->bufcap)))
        return start_failed(l, JFR_NOMEM);
    l->cfg.tls = NULL; /* the caller's; loaded into l->tls */
    l->cfg.error = NULL;
    if (cfg.tls) {
        char msg[512] = "";
        jfr_status st = jfr__tls_ctx_new(&tls, al, &l->tls, msg, sizeof msg);
        if (st == JFR_OK && !(l->pbuf = jfr__alloc(al, l->bufcap))) {
            st = JFR_NOMEM;
            snprintf(msg, sizeof msg, "out of memory");
        }
        if (st != JFR_OK) {
            start_error(&cfg, NULL, 0, msg);
            return start_failed(l, st);
        }
    }
    const char *host = cfg.host ? cfg.host : "127.0.0.1";
    struct sockaddr_storage addr;
    int r = strchr(host, ':') ? uv_ip6_addr(host, cfg.port, (struct sockaddr_in6 *)&addr)
                              : uv_ip4_addr(host, cfg.port, (struct sockaddr_in *)&addr);
    if (r) {
        start_error(&cfg, host, cfg.port, uv_strerror(r));
        if (uv_error)
            *uv_error = r;
        return start_failed(l, JFR_IO);
    }
    uv_tcp_init(loop, &l->tcp);
    l->tcp.data = l;
    l->open_handles = 1;
    /* backlog: the kernel caps it at somaxconn */
    if ((r = uv_tcp_bind(&l->tcp, (struct sockaddr *)&addr, 0)) ||
        (r = uv_listen((uv_stream_t *)&l->tcp, LISTEN_BACKLOG, on_connection))) {
        start_error(&cfg, host, cfg.port, uv_strerror(r));
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
    uv_check_init(loop, &l->turn);
    l->turn.data = l;
    uv_check_start(&l->turn, on_turn);
    uv_unref((uv_handle_t *)&l->turn); /* the server socket keeps the loop alive */
    l->open_handles++;
    l->started = true;
    *out = &l->pub;
    return JFR_OK;
}

int jfr_uv_listener_port(const jfr_uv_listener *pl) {
    return pl ? ((const listener *)pl)->port : 0;
}

unsigned jfr_uv_listener_connections(const jfr_uv_listener *pl) {
    return pl ? ((const listener *)pl)->nconns : 0;
}

unsigned jfr_uv_listener_peak(const jfr_uv_listener *pl) {
    return pl ? ((const listener *)pl)->peak : 0;
}

uint64_t jfr_uv_listener_refused(const jfr_uv_listener *pl) {
    return pl ? ((const listener *)pl)->refused : 0;
}

uint64_t jfr_uv_listener_tls_refused(const jfr_uv_listener *pl) {
    return pl ? ((const listener *)pl)->tls_refused : 0;
}

static void server_closed(uv_handle_t *h) {
    listener *l = h->data;
    l->open_handles--;
    listener_maybe_done(l);
}

void jfr_uv_listener_stop(jfr_uv_listener *pl) {
    listener *l = (listener *)pl;
    if (!l || l->closing)
        return;
    l->closing = true;
    /* each connection's input ends: pending bytes fed, partial chunks
     * reported; a paused one ends after its resume. on_conn_end may end
     * others: they stay valid (freed by the loop) and are skipped. */
    conn *c = l->conns, *next;
    for (; c; c = next) {
        next = c->next;
        if (c->lingering)
            linger_end(c);
        else
            conn_input_end(c, NULL);
    }
    uv_close((uv_handle_t *)&l->tcp, server_closed);
    uv_close((uv_handle_t *)&l->turn, server_closed);
}

jfr_parser *jfr_uv_conn_parser(jfr_uv_conn *c) { return c ? ((conn *)c)->parser : NULL; }
jfr_uv_listener *jfr_uv_conn_listener(jfr_uv_conn *c) {
    return c ? &((conn *)c)->l->pub : NULL;
}
const char *jfr_uv_conn_peer(const jfr_uv_conn *c) { return c ? ((const conn *)c)->peer : ""; }
uint64_t jfr_uv_conn_id(const jfr_uv_conn *c) { return c ? ((const conn *)c)->id : 0; }
uint64_t jfr_uv_conn_bytes(const jfr_uv_conn *c) { return c ? ((const conn *)c)->bytes : 0; }

bool jfr_uv_conn_acks(const jfr_uv_conn *c) { return c && ((const conn *)c)->acks; }

uint64_t jfr_uv_conn_acked(const jfr_uv_conn *c) { return c ? ((const conn *)c)->ack_want : 0; }

void jfr_uv_conn_ack(jfr_uv_conn *pc, uint64_t n) {
    conn *c = (conn *)pc;
    if (!c || !c->acks || c->closing)
        return;
    uint64_t total = jfr_parser_bytes(c->parser);
    if (n > total)
        n = total;
    if (n <= c->ack_want)
        return;
    c->ack_want = n;
    if (c->lingering && n >= total)
        linger_end(c); /* the final ack goes out in conn_end */
    else
        ack_send(c);
}

void jfr_uv_conn_end(jfr_uv_conn *pc, jfr_status st, const char *message) {
    conn *c = (conn *)pc;
    if (c && !c->closing)
        conn_end(c, st, message && *message ? message : jfr_status_str(st));
}
