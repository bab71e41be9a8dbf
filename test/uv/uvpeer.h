/* uvpeer.h — the other end of the libuv front ends' tests (test/uv/) and
 * of bench/uv_stall.c, on one libuv loop:
 *   - the fixture: a recording's first chunk, its events counted; a
 *     tail's events counted;
 *   - a peer: a loopback TCP client that connects to a listener and writes
 *     a buffer in writes of random sizes (records split anywhere), then
 *     shuts down; or, with hooks, what a test makes it do;
 *   - a deadline: a test's loop runs until it has nothing left to do, or
 *     fails and stops after so many milliseconds.
 * Header-only, as harness.h. A file may define UVPEER_NAME (its program's
 * name, for the deadline's message) before including it. */
#ifndef JFR_TEST_UVPEER_H
#define JFR_TEST_UVPEER_H

#include "../harness.h"
#include "jfrstream_uv.h"

#ifndef UVPEER_NAME
#define UVPEER_NAME "uvpeer"
#endif

/* ----------------------------------------------------------------- fixture */

static inline int uvpeer_count_event(jfr_parser *p, const jfr_event *e, void *u) {
    (void)p;
    (void)e;
    ++*(uint64_t *)u;
    return JFR_CB_CONTINUE;
}

/* A jfr_uv_tail's on_event counting into the uint64_t its handle's data
 * points to (set it once the tail has started: it reads in the loop). */
static inline int uvpeer_count_tail_event(jfr_parser *p, const jfr_event *e, void *u) {
    return uvpeer_count_event(p, e, ((jfr_uv_tail *)u)->data);
}

/* The file at `path` (malloc), `*len` cut to its first chunk, whose events
 * are counted into `*events` (NULL: not parsed; the parse must succeed,
 * CHECKed). NULL when the file cannot be read. */
static inline uint8_t *uvpeer_fixture(const char *path, size_t *len, uint64_t *events) {
    uint8_t *b = read_file(path, len);
    if (!b)
        return NULL;
    uint64_t size = jfr_chunk_size_at(b, *len);
    if (size && size < *len)
        *len = (size_t)size;
    if (events) {
        *events = 0;
        jfr_callbacks cb = {.size = sizeof cb, .on_event = uvpeer_count_event};
        jfr_parser *p = jfr_parser_new(NULL, &cb, events);
        CHECK(jfr_parser_feed(p, b, *len) == JFR_OK && jfr_parser_finish(p) == JFR_OK);
        jfr_parser_free(p);
    }
    return b;
}

/* -------------------------------------------------------------------- peer */

typedef struct uvpeer uvpeer;
struct uvpeer {
    uv_tcp_t tcp;
    uv_connect_t connect;
    uv_shutdown_t shutdown;
    const uint8_t *data; /* what it sends */
    size_t len;
    size_t sent;        /* bytes handed to libuv so far */
    unsigned seed;      /* each uvpeer_send's write sizes start from it */
    unsigned max_write; /* writes of 1 .. max_write bytes; 0: one write */
    int port;           /* its local port, once uvpeer_start returned 0 */
    /* Hooks, each optional. */
    void (*on_connect)(uvpeer *p);             /* connected; NULL: uvpeer_send_all */
    void (*on_written)(uvpeer *p, int status); /* a uvpeer_send's last write done */
    void (*on_close)(uvpeer *p);               /* its handle closed: may free p */
    void *user;
};

typedef struct uvpeer_write {
    uv_write_t req;
    uvpeer *peer;
    bool last; /* of its uvpeer_send */
} uvpeer_write;

static inline void uvpeer_closed(uv_handle_t *h) {
    uvpeer *p = h->data;
    if (p->on_close)
        p->on_close(p);
}

/* Closes the peer's handle (a pending write is cancelled); once only. */
static inline void uvpeer_close(uvpeer *p) {
    if (!uv_is_closing((uv_handle_t *)&p->tcp))
        uv_close((uv_handle_t *)&p->tcp, uvpeer_closed);
}

static inline void uvpeer_wrote(uv_write_t *req, int status) {
    uvpeer_write *w = (uvpeer_write *)req;
    /* a peer the listener dropped gets EPIPE: fine */
    if (w->last && w->peer->on_written)
        w->peer->on_written(w->peer, status);
    free(w);
}

/* Writes bytes [p->sent, to) in writes of random sizes (the generator
 * seeded with p->seed each call). */
static inline void uvpeer_send(uvpeer *p, size_t to) {
    unsigned seed = p->seed;
    while (p->sent < to) {
        size_t n = p->max_write ? 1 + rnd_next(&seed) % p->max_write : to - p->sent;
        if (n > to - p->sent)
            n = to - p->sent;
        uvpeer_write *w = malloc(sizeof *w);
        if (!w) {
            fprintf(stderr, "  peer (local port %d): out of memory\n", p->port);
            g_failures++;
            return;
        }
        uv_buf_t b = uv_buf_init((char *)p->data + p->sent, (unsigned)n);
        p->sent += n;
        w->peer = p;
        w->last = p->sent == to;
        int r = uv_write(&w->req, (uv_stream_t *)&p->tcp, &b, 1, uvpeer_wrote);
        if (r != 0) /* not queued: done at once */
            uvpeer_wrote(&w->req, r);
    }
}

static inline void uvpeer_shut(uv_shutdown_t *req, int status) {
    (void)status;
    uvpeer_close(req->data);
}

/* Writes the rest of the bytes, then shuts down; closes when done. */
static inline void uvpeer_send_all(uvpeer *p) {
    uvpeer_send(p, p->len);
    p->shutdown.data = p;
    if (uv_shutdown(&p->shutdown, (uv_stream_t *)&p->tcp, uvpeer_shut) != 0)
        uvpeer_close(p);
}

static inline void uvpeer_connected(uv_connect_t *req, int status) {
    uvpeer *p = req->data;
    if (status) { /* a failure of the test */
        fprintf(stderr, "  peer (local port %d): connect: %s\n", p->port,
                uv_strerror(status));
        g_failures++;
        uvpeer_close(p);
    } else if (p->on_connect) {
        p->on_connect(p);
    } else {
        uvpeer_send_all(p);
    }
}

/* Connects `p` (its seed, max_write and hooks set) to 127.0.0.1:`port`,
 * to send `len` bytes of `data`. Returns libuv's status (0: connecting). */
static inline int uvpeer_start(uvpeer *p, uv_loop_t *loop, int port, const uint8_t *data,
                               size_t len) {
    p->data = data;
    p->len = len;
    p->sent = 0;
    uv_tcp_init(loop, &p->tcp);
    p->tcp.data = p;
    p->connect.data = p;
    struct sockaddr_in a;
    uv_ip4_addr("127.0.0.1", port, &a);
    int r = uv_tcp_connect(&p->connect, &p->tcp, (struct sockaddr *)&a, uvpeer_connected);
    struct sockaddr_storage ss;
    int n = sizeof ss;
    /* connect() has bound the local port: the listener sees the peer by it */
    if (r == 0 && uv_tcp_getsockname(&p->tcp, (struct sockaddr *)&ss, &n) == 0)
        p->port = ntohs(((struct sockaddr_in *)&ss)->sin_port);
    return r;
}

/* ---------------------------------------------------------------- deadline */

static inline void uvpeer_expired(uv_timer_t *t) {
    fprintf(stderr, UVPEER_NAME ": deadline reached\n");
    g_failures++;
    uv_close((uv_handle_t *)t, NULL);
    uv_stop(t->loop);
}

/* Runs `loop` until it has nothing left to do, under a deadline of `ms`
 * (`deadline`, which does not keep the loop running): when it expires the
 * test fails and the loop stops. The deadline is a hang guard, so it grows
 * by 1 / test_scale() where the tests run slowed down (valgrind: 10x). */
static inline void uvpeer_run(uv_loop_t *loop, uv_timer_t *deadline, uint64_t ms) {
    uv_timer_init(loop, deadline);
    uv_timer_start(deadline, uvpeer_expired, (uint64_t)((double)ms / test_scale()), 0);
    uv_unref((uv_handle_t *)deadline);
    uv_run(loop, UV_RUN_DEFAULT);
}

/* The end of a test's loop: its deadline (NULL: none) closed unless it
 * expired, the handles closing closed, the loop closed (CHECKed: nothing
 * left open). */
static inline void uvpeer_loop_close(uv_loop_t *loop, uv_timer_t *deadline) {
    if (deadline && !uv_is_closing((uv_handle_t *)deadline))
        uv_close((uv_handle_t *)deadline, NULL);
    uv_run(loop, UV_RUN_DEFAULT);
    CHECK(uv_loop_close(loop) == 0);
}

#endif
