/* The listener's acknowledged delivery (jfrstream_uv.h, ACKNOWLEDGEMENTS;
 * doc/protocol.md), loopback only, bounded in time:
 *  - peers sending "JFRS/1 ack\n" and the fixture (finished chunks, and the
 *    same as a live stream) in random writes, the hello and the first bytes
 *    one byte a write, then half-closing and reading: every event parsed,
 *    ACK lines well formed and growing, the last one the fixture's length;
 *    at most one per 50 ms plus one per chunk end plus the final one;
 *  - words the listener does not know are ignored ("source=x ack v2"); a
 *    hello without "ack" and a bare JFR stream: parsed, never written to;
 *  - a peer that reads nothing until its connection ended, with 100,000
 *    jfr_uv_conn_ack calls a turn: the lines waiting for it are bounded as
 *    above; a peer that never reads nor closes: jfr_uv_listener_stop ends
 *    it at once (nothing waits for the write);
 *  - bad hello lines (version 2, 300 bytes without '\n', a control byte,
 *    "JFRS1", the input ending inside the line): the connection ends with
 *    JFR_BAD_MAGIC, "PEER: bad hello line: ...", no byte parsed or written;
 *  - the application's own end (jfr_uv_conn_end, JFR_IO): its status and
 *    message, no final ack past what was acknowledged;
 *  - ack_linger_ms: after the clean end the connection stays until the
 *    application acknowledged every byte (acks held back for 300 ms here);
 *  - ack_keepalive_ms (150 ms here): a peer that sends its hello and then
 *    nothing gets "ACK 0" again and again (it shuts down after the third,
 *    5 s at most), the others at most one such repeat per 150 ms besides
 *    the bound above.
 * Usage: test_uv_ack FIXTURE.jfr */
#define UVPEER_NAME "test_uv_ack"
#include "uvpeer.h"

#include <stdlib.h>
#include <string.h>

#define MAXPEERS 16

typedef struct apeer {
    uvpeer p;            /* first: uvpeer* <-> apeer* */
    const char *name;
    uint8_t *buf;        /* hello + data */
    size_t len, hello_len;
    bool reads;          /* reads from the start (else after its conn ended) */
    bool keep_open;      /* never shuts down (ended by the listener stop) */
    bool hammer;         /* 100,000 acks a turn */
    bool fail_at_half;   /* the application ends it (JFR_IO) halfway */
    bool hold_acks;      /* acks only 300 ms after the input ended (linger) */
    bool quiet;          /* the hello only, shut down after 3 ACK lines (keepalive) */
    uv_shutdown_t shut;
    char got[1 << 16];
    size_t ngot;
    bool eof, closed;
    /* the listener's side */
    jfr_uv_conn *conn;
    uint64_t events, input_end_ms;
    bool ended, acks;
    jfr_status status;
    char msg[300];
    uint64_t end_ms;
} apeer;

static apeer g_peers[MAXPEERS];
static int g_npeers, g_ended;
static uv_loop_t g_loop;
static jfr_uv_listener *g_l;
static uv_timer_t g_tick, g_deadline;
static uint64_t g_start_ms, g_end_ms;
static int g_open_keep; /* keep_open peers: the listener is stopped for them */

static void on_peer_read(uv_stream_t *s, ssize_t n, const uv_buf_t *b);

static void peer_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *b) {
    (void)suggested;
    apeer *a = h->data;
    size_t room = sizeof a->got - a->ngot;
    b->base = a->got + a->ngot;
    b->len = room;
}

static void on_peer_read(uv_stream_t *s, ssize_t n, const uv_buf_t *b) {
    (void)b;
    apeer *a = s->data;
    if (n > 0) {
        a->ngot += (size_t)n;
        return;
    }
    if (n < 0) {
        a->eof = true;
        uvpeer_close(&a->p);
    }
}

static void peer_shut(uv_shutdown_t *req, int status) {
    (void)req;
    (void)status; /* the read side goes on: the acks, then EOF */
}

static void peer_connect(uvpeer *p) {
    apeer *a = (apeer *)p;
    uv_tcp_nodelay(&p->tcp, 1);
    if (a->reads)
        uv_read_start((uv_stream_t *)&p->tcp, peer_alloc, on_peer_read);
    /* the hello and the first 200 bytes one byte a write, then larger */
    size_t slow = a->hello_len + 200 < a->len ? a->hello_len + 200 : a->len;
    p->max_write = 1;
    uvpeer_send(p, slow);
    p->max_write = 4093;
    uvpeer_send(p, a->len);
    if (!a->keep_open && !a->quiet) {
        a->shut.data = a;
        uv_shutdown(&a->shut, (uv_stream_t *)&p->tcp, peer_shut);
    }
}

static void peer_closed(uvpeer *p) { ((apeer *)p)->closed = true; }

static apeer *peer_add(const char *name, const char *hello, const uint8_t *data, size_t len) {
    apeer *a = &g_peers[g_npeers++];
    memset(a, 0, sizeof *a);
    a->name = name;
    a->hello_len = hello ? strlen(hello) : 0;
    a->len = a->hello_len + len;
    a->buf = malloc(a->len ? a->len : 1);
    memcpy(a->buf, hello ? hello : "", a->hello_len);
    memcpy(a->buf + a->hello_len, data, len);
    a->reads = true;
    a->p.seed = 7u + (unsigned)g_npeers;
    a->p.on_connect = peer_connect;
    a->p.on_close = peer_closed;
    return a;
}

/* ------------------------------------------------------------ the listener */

static int on_event(jfr_parser *p, const jfr_event *e, void *user) {
    (void)p;
    (void)e;
    apeer *a = ((jfr_uv_conn *)user)->data;
    if (a)
        a->events++;
    return JFR_CB_CONTINUE;
}

static void on_conn_start(jfr_uv_conn *c, void *user) {
    (void)user;
    const char *peer = jfr_uv_conn_peer(c);
    const char *colon = strrchr(peer, ':');
    int port = colon ? atoi(colon + 1) : -1;
    for (int i = 0; i < g_npeers; i++)
        if (g_peers[i].p.port == port) {
            c->data = &g_peers[i];
            g_peers[i].conn = c;
        }
    CHECK(c->data != NULL);
}

static void maybe_stop(void) {
    if (g_l && g_ended + g_open_keep == g_npeers) {
        jfr_uv_listener_stop(g_l); /* ends the keep_open ones */
        g_l = NULL;
    }
}

static void on_conn_end(jfr_uv_conn *c, jfr_status st, const char *msg, void *user) {
    (void)user;
    apeer *a = c->data;
    CHECK(a != NULL);
    if (!a)
        return;
    a->ended = true;
    a->acks = jfr_uv_conn_acks(c);
    a->status = st;
    a->end_ms = uv_now(&g_loop);
    snprintf(a->msg, sizeof a->msg, "%s", msg);
    a->conn = NULL;
    g_ended++;
    if (a->keep_open)
        g_open_keep--;
    if (!a->reads) /* now it reads what waited for it */
        uv_read_start((uv_stream_t *)&a->p.tcp, peer_alloc, on_peer_read);
    if (a->keep_open)
        uvpeer_close(&a->p);
    maybe_stop();
}

static void on_listener_end(jfr_uv_listener *l, void *user) {
    (void)l;
    (void)user;
    g_end_ms = uv_now(&g_loop);
    uv_close((uv_handle_t *)&g_tick, NULL);
}

/* The application: every turn, what each connection's parser has called
 * back is handed on. */
static void on_tick(uv_timer_t *t) {
    uint64_t now = uv_now(t->loop);
    for (int i = 0; i < g_npeers; i++) {
        apeer *a = &g_peers[i];
        jfr_uv_conn *c = a->conn;
        if (!c)
            continue;
        size_t lines = 0;
        for (size_t k = 0; a->quiet && k < a->ngot; k++)
            lines += a->got[k] == '\n';
        if (a->quiet && !a->shut.data && (lines >= 3 || now - g_start_ms >= 5000)) {
            a->shut.data = a;
            uv_shutdown(&a->shut, (uv_stream_t *)&a->p.tcp, peer_shut);
        }
        jfr_parser *p = jfr_uv_conn_parser(c);
        uint64_t n = jfr_parser_delivered(p);
        if (a->fail_at_half && n >= (a->len - a->hello_len) / 2) {
            jfr_uv_conn_ack(c, (a->len - a->hello_len) / 2); /* what was handed on */
            jfr_uv_conn_end(c, JFR_IO, "kafka: delivery failed (test)");
            continue;
        }
        if (a->hold_acks) {
            if (n < a->len - a->hello_len)
                continue;
            if (!a->input_end_ms)
                a->input_end_ms = now;
            if (now - a->input_end_ms < 300)
                continue;
        }
        if (a->hammer)
            for (uint64_t k = 0; k < 100000; k++)
                jfr_uv_conn_ack(c, n > 100000 ? n - 100000 + k : k);
        jfr_uv_conn_ack(c, n);
    }
    maybe_stop();
}

/* ------------------------------------------------------------ checks */

static uint64_t count_chunks(const uint8_t *b, size_t len) {
    uint64_t n = 0;
    for (size_t off = 0; off < len; n++) {
        uint64_t size = jfr_chunk_size_at(b + off, len - off);
        if (!size)
            break;
        off += (size_t)size;
    }
    return n;
}

/* The ACK lines a peer got: well formed, growing or the same again (a
 * keepalive); their count, the repeats among them and the last. */
static bool parse_acks(apeer *a, uint64_t *count, uint64_t *last, uint64_t *repeats) {
    *count = *last = *repeats = 0;
    size_t i = 0;
    while (i < a->ngot) {
        if (a->ngot - i < 6 || memcmp(a->got + i, "ACK ", 4) != 0)
            return false;
        i += 4;
        size_t d = i;
        uint64_t v = 0;
        while (i < a->ngot && a->got[i] >= '0' && a->got[i] <= '9')
            v = v * 10 + (uint64_t)(a->got[i++] - '0');
        if (i == d || i >= a->ngot || a->got[i] != '\n' || (a->got[d] == '0' && i - d > 1))
            return false;
        i++;
        if (*count && v < *last)
            return false;
        if (*count && v == *last)
            ++*repeats;
        *last = v;
        ++*count;
    }
    return true;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: test_uv_ack FIXTURE.jfr\n");
        return 2;
    }
    size_t len = 0;
    uint8_t *fix = read_file(argv[1], &len);
    CHECK(fix != NULL);
    if (!fix)
        return 1;
    uint8_t *live = as_live(fix, len);
    CHECK(live != NULL);
    uint64_t chunks = count_chunks(fix, len);
    uint64_t want_events = 0;
    {
        jfr_callbacks cb = {.size = sizeof cb, .on_event = uvpeer_count_event};
        jfr_parser *p = jfr_parser_new(NULL, &cb, &want_events);
        CHECK(jfr_parser_feed(p, fix, len) == JFR_OK && jfr_parser_finish(p) == JFR_OK);
        CHECK(jfr_parser_delivered(p) == len);
        jfr_parser_free(p);
    }
    static const char big[] = "JFRS/1 ack xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
                              "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
                              "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
                              "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx";
    apeer *acked = peer_add("ack", "JFRS/1 ack\n", fix, len);
    apeer *acked_live = peer_add("ack, live", "JFRS/1 ack\n", live, len);
    apeer *words = peer_add("unknown words", "JFRS/1 source=x ack v2\n", fix, len);
    apeer *noack = peer_add("hello without ack", "JFRS/1\n", fix, len);
    apeer *plain = peer_add("plain", NULL, fix, len);
    apeer *late = peer_add("late reader, 100,000 acks a turn", "JFRS/1 ack\n", fix, len);
    late->reads = false;
    late->hammer = true;
    apeer *never = peer_add("never reads nor closes", "JFRS/1 ack\n", fix, len);
    never->reads = false;
    never->keep_open = true;
    never->hammer = true;
    g_open_keep = 1;
    apeer *failed = peer_add("ended by the application", "JFRS/1 ack\n", fix, len);
    failed->fail_at_half = true;
    apeer *linger = peer_add("acks 300 ms late (linger)", "JFRS/1 ack\n", fix, len);
    linger->hold_acks = true;
    apeer *quiet = peer_add("hello, then nothing", "JFRS/1 ack\n", fix, 0);
    quiet->quiet = true;
    const char *bad[][2] = {{"version 2", "JFRS/2 ack\n"},
                            {"300 bytes", big},
                            {"a control byte", "JFRS/1 a\x01" "ck\n"},
                            {"JFRS1", "JFRS1 ack\n"},
                            {"cut", "JFRS/1 ac"}};
    apeer *bads[5];
    for (int i = 0; i < 5; i++)
        bads[i] = peer_add(bad[i][0], bad[i][1], fix, i == 4 ? 0 : len);

    CHECK(uv_loop_init(&g_loop) == 0);
    jfr_callbacks cb = {.size = sizeof cb, .on_event = on_event};
    jfr_uv_listener_config cfg;
    jfr_uv_listener_config_init(&cfg);
    cfg.callbacks = &cb;
    cfg.on_conn_start = on_conn_start;
    cfg.on_conn_end = on_conn_end;
    cfg.on_end = on_listener_end;
    cfg.ack_linger_ms = 5000;
    cfg.ack_keepalive_ms = 150;
    CHECK(jfr_uv_listener_start(&g_loop, &cfg, &g_l, NULL) == JFR_OK);
    int port = jfr_uv_listener_port(g_l);
    uv_timer_init(&g_loop, &g_tick);
    uv_timer_start(&g_tick, on_tick, 2, 2);
    g_start_ms = uv_now(&g_loop);
    for (int i = 0; i < g_npeers; i++)
        CHECK(uvpeer_start(&g_peers[i].p, &g_loop, port, g_peers[i].buf, g_peers[i].len) == 0);
    uvpeer_run(&g_loop, &g_deadline, 30000);
    uvpeer_loop_close(&g_loop, &g_deadline);

    uint64_t elapsed = g_end_ms - g_start_ms;
    /* at most one per 50 ms, one more per chunk end, the final one */
    /* at most one per 50 ms, one more per chunk end, the final one; and
     * a keepalive per 150 ms */
    uint64_t bound = elapsed / 50 + chunks + 2, kbound = elapsed / 150 + 1;
    apeer *good[] = {acked, acked_live, words, late, linger};
    for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
        apeer *a = good[i];
        uint64_t n = 0, last = 0, rep = 0;
        bool ok = parse_acks(a, &n, &last, &rep);
        printf("%-34s %s, %llu events, %llu ACK lines (bound %llu), %llu repeated (bound %llu), "
               "last ACK %llu of %zu\n",
               a->name, jfr_status_name(a->status), (unsigned long long)a->events,
               (unsigned long long)n, (unsigned long long)(bound + kbound), (unsigned long long)rep,
               (unsigned long long)kbound, (unsigned long long)last, len);
        CHECK(a->ended && a->status == JFR_OK && a->acks);
        CHECK(a->events == want_events);
        CHECK(ok && n >= 1 && n - rep <= bound && rep <= kbound && last == len);
        CHECK(a->eof);
    }
    {
        uint64_t n = 0, last = 0, rep = 0;
        bool ok = parse_acks(quiet, &n, &last, &rep);
        printf("%-34s %s, %llu ACK lines, all \"ACK 0\": %s, ended %llu ms in\n", quiet->name,
               jfr_status_name(quiet->status), (unsigned long long)n,
               ok && last == 0 && rep + 1 == n ? "yes" : "no",
               (unsigned long long)(quiet->end_ms - g_start_ms));
        CHECK(quiet->ended && quiet->status == JFR_OK && quiet->acks && quiet->eof);
        CHECK(ok && last == 0 && n >= 3 && rep + 1 == n && n <= kbound);
    }
    /* the linger: the end came after the held-back acks */
    CHECK(linger->end_ms >= linger->input_end_ms + 300);
    apeer *silent[] = {noack, plain};
    for (size_t i = 0; i < 2; i++) {
        apeer *a = silent[i];
        printf("%-34s %s, %llu events, %zu bytes back\n", a->name, jfr_status_name(a->status),
               (unsigned long long)a->events, a->ngot);
        CHECK(a->ended && a->status == JFR_OK && !a->acks && a->events == want_events);
        CHECK(a->ngot == 0 && a->eof);
    }
    {
        uint64_t n = 0, last = 0, rep = 0;
        bool ok = parse_acks(never, &n, &last, &rep);
        printf("%-34s %s, ended %llu ms after the start, %llu ACK lines\n", never->name,
               jfr_status_name(never->status),
               (unsigned long long)(never->end_ms - g_start_ms), (unsigned long long)n);
        CHECK(never->ended && never->events == want_events && ok);
    }
    {
        uint64_t n = 0, last = 0, rep = 0;
        bool ok = parse_acks(failed, &n, &last, &rep);
        printf("%-34s %s \"%s\", last ACK %llu\n", failed->name, jfr_status_name(failed->status),
               failed->msg, (unsigned long long)last);
        CHECK(failed->ended && failed->status == JFR_IO && ok && last <= len / 2);
        CHECK(strstr(failed->msg, ": kafka: delivery failed (test)") != NULL);
    }
    for (int i = 0; i < 5; i++) {
        apeer *a = bads[i];
        printf("bad hello (%s): %s \"%s\", %zu bytes back, %llu events\n", a->name,
               jfr_status_name(a->status), a->msg, a->ngot, (unsigned long long)a->events);
        char peer[32];
        snprintf(peer, sizeof peer, "127.0.0.1:%d: bad hello line: ", a->p.port);
        CHECK(a->ended && a->status == JFR_BAD_MAGIC && a->ngot == 0 && a->events == 0);
        CHECK(strncmp(a->msg, peer, strlen(peer)) == 0);
    }
    for (int i = 0; i < g_npeers; i++)
        free(g_peers[i].buf);
    free(fix);
    free(live);
    printf("test_uv_ack: %d peers, %s\n", g_npeers, g_failures ? "FAILED" : "ok");
    return g_failures ? 1 : 0;
}
