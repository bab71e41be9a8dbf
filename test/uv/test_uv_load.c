/* The socket listener under load and abuse (loopback only, bounded in time):
 *  - load: N (default 1,000) connections open at once, each streaming the
 *    fixture (every 4th one live-shaped) in random write sizes; every one
 *    delivers exactly the fixture's events; the listener's peak is N. Time
 *    and peak RSS are printed.
 *  - slow: peers trickling one byte a second (with idle_ms 1.5 s: they are
 *    not idle) beside fast ones that finish in about their time alone (both
 *    times without the loop thread's wait for a CPU, so a loaded machine
 *    does not fail it); a silent peer is closed by the idle limit; the slow ones stay open and
 *    healthy until the test closes them.
 *  - garbage: bad magic, a valid header then junk (finished and live), a
 *    hostile huge and a negative chunk size: each closed alone, the reason
 *    naming the peer, the chunk and the byte offset; the good ones complete.
 *  - limits: max_connections (the extra ones are refused with a reason) and
 *    max_bytes_per_conn; a parser that cannot be allocated: refused, and the
 *    listener keeps accepting.
 * Usage: test_uv_load [--conns N] FIXTURE.jfr. Exit 77 (SKIP) when
 * RLIMIT_NOFILE cannot be raised to 2 * N + 100 descriptors. */
#include "uvpeer.h"

#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

static uint8_t *g_fix, *g_live;
static size_t g_len;
static uint64_t g_events;

enum { FAST, BARRIER, SLOW, SILENT, HOLD };

typedef struct client {
    uvpeer peer;        /* its data, len, sent and local port */
    uv_timer_t trickle; /* SLOW: one byte a second */
    int kind, idx;
    bool connected, trickling;
    bool remote; /* owned by the slow peers' thread */
    /* what the server saw */
    jfr_uv_conn *srv;
    bool srv_open, srv_closed, srv_refused;
    uint64_t srv_events, srv_bytes;
    jfr_status srv_status;
    char srv_msg[512];
} client;

static client *g_port[65536]; /* local port -> client */
static client *g_cl;          /* this phase's clients */
static int g_ncl, g_srv_closed, g_expect_srv_closes;
static jfr_uv_listener *g_l, *g_l2;
static bool g_go;
static uv_timer_t g_deadline;
static void (*g_hook_connect)(client *cl);
static void (*g_hook_close)(client *cl);

static int peer_port(const char *peer) {
    const char *p = strrchr(peer, ':');
    return p ? atoi(p + 1) : 0;
}

/* ------------------------------------------------------------ server side */

static int srv_event(jfr_parser *p, const jfr_event *e, void *user) {
    (void)p;
    (void)e;
    client *cl = ((jfr_uv_conn *)user)->data;
    cl->srv_events++;
    return JFR_CB_CONTINUE;
}

static void srv_connect(jfr_uv_conn *c, void *user) {
    (void)user;
    client *cl = g_port[peer_port(jfr_uv_conn_peer(c))];
    CHECK(cl != NULL);
    if (!cl) {
        jfr_uv_conn_stop(c);
        return;
    }
    c->data = cl;
    cl->srv = c;
    cl->srv_open = true;
    if (g_hook_connect)
        g_hook_connect(cl);
}

static void srv_close(jfr_uv_conn *c, jfr_status s, const char *msg, void *user) {
    (void)user;
    client *cl = c->data;
    if (!cl) { /* refused over max_connections: no on_conn_start */
        cl = g_port[peer_port(jfr_uv_conn_peer(c))];
        CHECK(cl != NULL && jfr_uv_conn_parser(c) == NULL);
        if (!cl)
            return;
        cl->srv_refused = true;
    }
    cl->srv_open = false;
    cl->srv_closed = true;
    cl->srv = NULL;
    cl->srv_status = s;
    cl->srv_bytes = jfr_uv_conn_bytes(c);
    snprintf(cl->srv_msg, sizeof cl->srv_msg, "%s", msg);
    if (getenv("TEST_UV_VERBOSE"))
        printf("  server: %s (%s)\n", msg, jfr_status_name(s));
    g_srv_closed++;
    if (g_hook_close)
        g_hook_close(cl);
}

static jfr_uv_listener *start_listener(uv_loop_t *loop, unsigned maxc, uint64_t maxb,
                                       uint64_t idle) {
    jfr_uv_listener_config cfg = JFR_UV_LISTENER_CONFIG_INIT;
    jfr_callbacks cb = {.size = sizeof cb, .on_event = srv_event};
    cfg.callbacks = &cb;
    cfg.on_conn_start = srv_connect;
    cfg.on_conn_end = srv_close;
    cfg.max_connections = maxc;
    cfg.max_bytes_per_conn = maxb;
    cfg.idle_ms = idle;
    jfr_uv_listener *l = NULL;
    CHECK(jfr_uv_listener_start(loop, &cfg, &l, NULL) == JFR_OK);
    return l;
}

/* ------------------------------------------------------------ client side */

static void cl_close(client *cl) {
    if (cl->trickling) {
        uv_close((uv_handle_t *)&cl->trickle, NULL);
        cl->trickling = false;
    }
    uvpeer_close(&cl->peer);
}

static void on_trickle(uv_timer_t *t) {
    client *cl = t->data;
    if (cl->peer.sent < cl->peer.len)
        uvpeer_send(&cl->peer, cl->peer.sent + 1);
}

static void on_cl_connect(uvpeer *p) {
    client *cl = p->user;
    cl->connected = true;
    switch (cl->kind) {
    case FAST:
        uvpeer_send_all(p);
        break;
    case BARRIER: /* a little now, the rest once all N are connected */
        if (g_go) {
            uvpeer_send_all(p);
        } else {
            unsigned seed = (unsigned)cl->idx + 3;
            uvpeer_send(p, 1 + rnd_next(&seed) % 1000);
        }
        break;
    case SLOW:
        uv_timer_init(p->tcp.loop, &cl->trickle);
        cl->trickle.data = cl;
        cl->trickling = true;
        uv_timer_start(&cl->trickle, on_trickle, 0, 1000);
        break;
    case HOLD:
        uvpeer_send(p, 10);
        break;
    default: /* SILENT */
        break;
    }
}

/* A peer of `kind` sending `len` bytes of `data` in random slices (records
 * split anywhere); the server finds it by its local port. */
static void cl_start(uv_loop_t *loop, client *cl, int port, int kind, const uint8_t *data,
                     size_t len) {
    cl->kind = kind;
    cl->peer.seed = (unsigned)cl->idx * 7919u + 1;
    cl->peer.max_write = 30000;
    cl->peer.on_connect = on_cl_connect;
    cl->peer.user = cl;
    int r = uvpeer_start(&cl->peer, loop, port, data, len);
    CHECK(r == 0);
    if (r == 0 && cl->peer.port)
        g_port[cl->peer.port] = cl;
}

/* ------------------------------------------------------------ phases */

static void on_deadline(uv_timer_t *t) {
    fprintf(stderr, "test_uv_load: deadline reached (%d of %d server closes)\n", g_srv_closed,
            g_expect_srv_closes);
    g_failures++;
    for (int i = 0; i < g_ncl; i++)
        if (!g_cl[i].remote)
            cl_close(&g_cl[i]);
    if (g_l)
        jfr_uv_listener_stop(g_l);
    if (g_l2)
        jfr_uv_listener_stop(g_l2);
    g_l = g_l2 = NULL;
    uv_close((uv_handle_t *)t, NULL);
}

static void phase_begin(uv_loop_t *loop, int n, uint64_t deadline_ms) {
    uv_loop_init(loop);
    memset(g_port, 0, sizeof g_port);
    g_cl = calloc((size_t)n, sizeof *g_cl);
    for (int i = 0; i < n; i++)
        g_cl[i].idx = i;
    g_ncl = n;
    g_srv_closed = 0;
    g_go = false;
    g_hook_connect = NULL;
    g_hook_close = NULL;
    uv_timer_init(loop, &g_deadline);
    uv_timer_start(&g_deadline, on_deadline, deadline_ms, 0);
}

/* Every expected server close seen: close the listeners and the deadline. */
static void phase_maybe_end(void) {
    if (g_srv_closed < g_expect_srv_closes)
        return;
    if (g_l)
        jfr_uv_listener_stop(g_l);
    if (g_l2)
        jfr_uv_listener_stop(g_l2);
    g_l = g_l2 = NULL;
    if (!uv_is_closing((uv_handle_t *)&g_deadline))
        uv_close((uv_handle_t *)&g_deadline, NULL);
}

static void phase_end(uv_loop_t *loop) {
    for (int i = 0; i < g_ncl; i++) /* after a deadline, or peers left open */
        if (!g_cl[i].remote)
            cl_close(&g_cl[i]);
    uv_run(loop, UV_RUN_DEFAULT);
    CHECK(uv_loop_close(loop) == 0);
    free(g_cl);
    g_cl = NULL;
}

static bool complete(const client *cl) {
    return cl->srv_closed && cl->srv_status == JFR_OK && cl->srv_events == g_events;
}

static double peak_rss_mib(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_maxrss / 1024.0;
}

/* --- load: N at once */

static int g_nload;

static void load_connect(client *cl) {
    (void)cl;
    if (jfr_uv_listener_connections(g_l) < (unsigned)g_nload)
        return;
    g_go = true; /* all N open at once: let them all finish */
    for (int i = 0; i < g_ncl; i++)
        if (g_cl[i].connected)
            uvpeer_send_all(&g_cl[i].peer);
}

static unsigned g_peak;

static void load_close(client *cl) {
    (void)cl;
    if (g_srv_closed == g_expect_srv_closes) /* read before the listener goes */
        g_peak = jfr_uv_listener_peak(g_l);
    phase_maybe_end();
}

static void test_load(int n) {
    uv_loop_t loop;
    phase_begin(&loop, n, 170000);
    g_nload = n;
    g_l = start_listener(&loop, (unsigned)n, 0, 0);
    g_peak = 0;
    g_hook_connect = load_connect;
    g_hook_close = load_close;
    g_expect_srv_closes = n;
    int port = jfr_uv_listener_port(g_l);
    uint64_t t0 = uv_hrtime();
    for (int i = 0; i < n; i++)
        cl_start(&loop, &g_cl[i], port, BARRIER, i % 4 == 3 ? g_live : g_fix, g_len);
    uv_run(&loop, UV_RUN_DEFAULT);
    double secs = (double)(uv_hrtime() - t0) / 1e9;
    int ok = 0, shown = 0;
    for (int i = 0; i < n; i++) {
        client *cl = &g_cl[i];
        if (complete(cl))
            ok++;
        else if (shown++ < 5)
            fprintf(stderr, "  load conn %d: closed %d status %s, %llu events: %s\n", i,
                    cl->srv_closed, jfr_status_name(cl->srv_status),
                    (unsigned long long)cl->srv_events, cl->srv_msg);
    }
    double mib = (double)n * (double)g_len / 1048576.0;
    printf("load: %d connections (listener peak %u), %d complete with %llu events each "
           "(%d live-shaped); %.1f MiB in %.2f s (%.0f MiB/s), peak RSS %.0f MiB\n",
           n, g_peak, ok, (unsigned long long)g_events, n / 4, mib, secs, mib / secs,
           peak_rss_mib());
    CHECK(ok == n);
    CHECK(g_peak == (unsigned)n);
    phase_end(&loop);
}

/* --- slow peers beside fast ones */

#define NFAST 100
#define NSLOW 8

static uint64_t g_fast_done_ns, g_t0, g_wait0, g_fast_wait_ns;
static int g_fast_left;

/* Nanoseconds this thread has spent runnable but waiting for a CPU
 * (/proc/thread-self/schedstat's second field; 0 where the kernel does not
 * keep it). The fast streams' time is measured without it: on a loaded
 * machine the loop waits for a core, which says nothing about the listener,
 * while a listener that let slow peers hold up fast ones would make the loop
 * sleep in epoll, which still counts. */
static uint64_t run_delay_ns(void) {
    FILE *f = fopen("/proc/thread-self/schedstat", "r");
    unsigned long long run = 0, wait = 0;
    if (f) {
        if (fscanf(f, "%llu %llu", &run, &wait) != 2)
            wait = 0;
        fclose(f);
    }
    return wait;
}
static uv_timer_t g_check;

static void fast_close(client *cl) {
    if (cl->kind == FAST && --g_fast_left == 0) {
        g_fast_done_ns = uv_hrtime() - g_t0;
        g_fast_wait_ns = run_delay_ns() - g_wait0;
    }
    phase_maybe_end();
}

/* The slow and silent peers run on their own thread and loop, as remote
 * peers would: a test loop busy with the fast ones (under a sanitizer, for
 * seconds) must not delay their bytes. */
static uv_loop_t g_slow_loop;
static uv_async_t g_slow_stop;
static uv_sem_t g_slow_ready;
static int g_slow_port;

static void slow_stop(uv_async_t *a) {
    for (int i = NFAST; i <= NFAST + NSLOW; i++)
        cl_close(&g_cl[i]);
    uv_close((uv_handle_t *)a, NULL);
}

static void slow_thread(void *arg) {
    (void)arg;
    uv_loop_init(&g_slow_loop);
    uv_async_init(&g_slow_loop, &g_slow_stop, slow_stop);
    for (int i = NFAST; i <= NFAST + NSLOW; i++) {
        g_cl[i].remote = true;
        cl_start(&g_slow_loop, &g_cl[i], g_slow_port, i < NFAST + NSLOW ? SLOW : SILENT, g_fix,
                 g_len);
    }
    uv_sem_post(&g_slow_ready); /* g_port[] is filled in */
    uv_run(&g_slow_loop, UV_RUN_DEFAULT);
    CHECK(uv_loop_close(&g_slow_loop) == 0);
}

static void on_check(uv_timer_t *t) {
    /* 3.6 s after the start: the slow peers sent 4 bytes, 2+ idle periods
     * went by, the fast ones are done */
    if (g_fast_left > 0 || uv_hrtime() - g_t0 < 3600000000ull)
        return;
    uv_close((uv_handle_t *)t, NULL);
    client *silent = &g_cl[NFAST + NSLOW];
    int healthy = 0;
    for (int i = NFAST; i < NFAST + NSLOW; i++) {
        client *cl = &g_cl[i];
        if (cl->srv_open && !cl->srv_closed && jfr_uv_conn_bytes(cl->srv) >= 3 &&
            jfr_parser_status(jfr_uv_conn_parser(cl->srv)) == JFR_OK)
            healthy++;
        else
            fprintf(stderr, "  slow peer %d: open %d: %s\n", i, cl->srv_open, cl->srv_msg);
    }
    char want[64];
    snprintf(want, sizeof want, "127.0.0.1:%d: idle limit", silent->peer.port);
    printf("slow: %d of %d peers at 1 B/s open and healthy after %llu bytes (idle limit "
           "1.5 s); silent peer: %s\n",
           healthy, NSLOW,
           (unsigned long long)(g_cl[NFAST].srv ? jfr_uv_conn_bytes(g_cl[NFAST].srv) : 0),
           silent->srv_msg);
    CHECK(healthy == NSLOW);
    CHECK(silent->srv_closed && silent->srv_status == JFR_LIMIT &&
          strncmp(silent->srv_msg, want, strlen(want)) == 0);
    uv_async_send(&g_slow_stop); /* the server sees the end: the header is incomplete */
}

static void test_slow(void) {
    uv_loop_t *loop = malloc(sizeof *loop);
    /* fast ones alone */
    phase_begin(loop, NFAST, 60000);
    g_l = start_listener(loop, 0, 0, 1500);
    g_hook_close = fast_close;
    g_expect_srv_closes = NFAST;
    g_fast_left = NFAST;
    int port = jfr_uv_listener_port(g_l);
    g_wait0 = run_delay_ns();
    g_t0 = uv_hrtime();
    for (int i = 0; i < NFAST; i++)
        cl_start(loop, &g_cl[i], port, FAST, i % 2 ? g_live : g_fix, g_len);
    uv_run(loop, UV_RUN_DEFAULT);
    double alone_wall = (double)g_fast_done_ns / 1e9;
    double alone = (double)(g_fast_done_ns - g_fast_wait_ns) / 1e9;
    int n_ok = 0;
    for (int i = 0; i < NFAST; i++)
        n_ok += complete(&g_cl[i]);
    CHECK(n_ok == NFAST);
    phase_end(loop);

    /* the same beside slow and silent peers */
    int n = NFAST + NSLOW + 1;
    phase_begin(loop, n, 60000);
    g_l = start_listener(loop, 0, 0, 1500);
    g_hook_close = fast_close;
    g_expect_srv_closes = n;
    g_fast_left = NFAST;
    g_fast_done_ns = 0;
    port = jfr_uv_listener_port(g_l);
    g_wait0 = run_delay_ns();
    g_t0 = uv_hrtime();
    g_slow_port = port;
    uv_sem_init(&g_slow_ready, 0);
    uv_thread_t th;
    CHECK(uv_thread_create(&th, slow_thread, NULL) == 0);
    uv_sem_wait(&g_slow_ready);
    for (int i = 0; i < NFAST; i++)
        cl_start(loop, &g_cl[i], port, FAST, i % 2 ? g_live : g_fix, g_len);
    uv_timer_init(loop, &g_check);
    uv_timer_start(&g_check, on_check, 100, 100);
    uv_run(loop, UV_RUN_DEFAULT);
    uv_thread_join(&th);
    uv_sem_destroy(&g_slow_ready);
    double beside_wall = (double)g_fast_done_ns / 1e9;
    double beside = (double)(g_fast_done_ns - g_fast_wait_ns) / 1e9;
    int n_ok2 = 0, slow_trunc = 0;
    for (int i = 0; i < NFAST; i++)
        n_ok2 += complete(&g_cl[i]);
    for (int i = NFAST; i < NFAST + NSLOW; i++)
        slow_trunc += g_cl[i].srv_status == JFR_TRUNCATED &&
                      g_cl[i].srv_bytes == g_cl[i].peer.sent &&
                      strstr(g_cl[i].srv_msg, "of the 68 header bytes missing") != NULL;
    printf("slow: %d fast streams complete in %.3f s alone, %.3f s beside %d slow peers and a "
           "silent one (bound 2 x + 1 s; not counting the loop's wait for a CPU, wall %.3f s "
           "and %.3f s); slow ones reported at their close: %d (%s)\n",
           n_ok2, alone, beside, NSLOW, alone_wall, beside_wall, slow_trunc,
           g_cl[NFAST].srv_msg);
    CHECK(n_ok2 == NFAST);
    CHECK(g_fast_done_ns > 0 && beside <= 2 * alone + 1.0);
    CHECK(slow_trunc == NSLOW);
    phase_end(loop);
    free(loop);
}

/* --- garbage and limits */

#define NGOOD 50
enum { G_MAGIC, G_JUNK, G_LIVEJUNK, G_HUGE, G_NEGATIVE, NGARBAGE };
static uint8_t *g_garbage[NGARBAGE];
static size_t g_garbage_len[NGARBAGE];
static const char *const g_garbage_name[NGARBAGE] = {
    "bad magic", "valid header then junk", "live header then junk", "huge chunk size",
    "negative chunk size"};

/* limits listener: 3 holders, 2 refused, holder 0 then over the byte limit */
#define LIM_FIRST (NGOOD + NGARBAGE)
static int g_refused;

static void lim_connect(client *cl) {
    if (cl->idx < LIM_FIRST || jfr_uv_listener_connections(g_l2) != 3)
        return;
    int port = jfr_uv_listener_port(g_l2);
    for (int i = 3; i < 5; i++)
        cl_start(cl->peer.tcp.loop, &g_cl[LIM_FIRST + i], port, HOLD, g_fix, g_len);
}

static void lim_close(client *cl) {
    if (cl->idx >= LIM_FIRST) {
        if (cl->srv_refused && ++g_refused == 2)
            uvpeer_send_all(&g_cl[LIM_FIRST].peer); /* now over the byte limit */
        if (cl->idx == LIM_FIRST)
            for (int i = 1; i < 3; i++)
                cl_close(&g_cl[LIM_FIRST + i]);
    }
    phase_maybe_end();
}

static void test_garbage(void) {
    uv_loop_t loop;
    int n = NGOOD + NGARBAGE + 5;
    phase_begin(&loop, n, 60000);
    g_l = start_listener(&loop, 0, 0, 0);
    g_l2 = start_listener(&loop, 3, 100000, 0);
    g_hook_connect = lim_connect;
    g_hook_close = lim_close;
    g_expect_srv_closes = n;
    g_refused = 0;
    int port = jfr_uv_listener_port(g_l);
    for (int i = 0; i < NGOOD; i++)
        cl_start(&loop, &g_cl[i], port, FAST, i % 2 ? g_live : g_fix, g_len);
    for (int k = 0; k < NGARBAGE; k++)
        cl_start(&loop, &g_cl[NGOOD + k], port, FAST, g_garbage[k], g_garbage_len[k]);
    for (int i = 0; i < 3; i++)
        cl_start(&loop, &g_cl[LIM_FIRST + i], jfr_uv_listener_port(g_l2), HOLD, g_fix, g_len);
    uv_run(&loop, UV_RUN_DEFAULT);

    int ok = 0;
    for (int i = 0; i < NGOOD; i++)
        ok += complete(&g_cl[i]);
    printf("garbage: %d of %d good streams complete beside %d bad ones\n", ok, NGOOD, NGARBAGE);
    CHECK(ok == NGOOD);
    for (int k = 0; k < NGARBAGE; k++) {
        client *cl = &g_cl[NGOOD + k];
        char want[64];
        snprintf(want, sizeof want, "127.0.0.1:%d: chunk 0 at byte ", cl->peer.port);
        bool named = strncmp(cl->srv_msg, want, strlen(want)) == 0;
        printf("  %s: %s: %s\n", g_garbage_name[k], jfr_status_name(cl->srv_status),
               cl->srv_msg);
        CHECK(cl->srv_closed && cl->srv_status != JFR_OK && cl->srv_status != JFR_TRUNCATED);
        CHECK(named);
    }
    CHECK(g_cl[NGOOD + G_MAGIC].srv_status == JFR_BAD_MAGIC);
    CHECK(g_cl[NGOOD + G_HUGE].srv_status == JFR_CHUNK_TOO_LARGE);
    /* limits */
    client *lim = &g_cl[LIM_FIRST];
    printf("limits: %s\n", lim[0].srv_msg);
    CHECK(lim[0].srv_status == JFR_LIMIT && strstr(lim[0].srv_msg, "byte limit 100000") &&
          lim[0].srv_bytes > 100000);
    for (int i = 1; i < 3; i++)
        CHECK(lim[i].srv_status == JFR_TRUNCATED && !lim[i].srv_refused);
    for (int i = 3; i < 5; i++) {
        char want[96];
        snprintf(want, sizeof want, "127.0.0.1:%d: connection limit 3 reached: refused",
                 lim[i].peer.port);
        printf("limits: %s\n", lim[i].srv_msg);
        CHECK(lim[i].srv_refused && lim[i].srv_status == JFR_LIMIT &&
              strcmp(lim[i].srv_msg, want) == 0);
    }
    phase_end(&loop);
}

/* --- a parser that cannot be made: refused, and the listener goes on */

static uint64_t g_nomem_refused;
static void nomem_close(client *cl) {
    if (cl->idx == 0) /* the listener must still accept after a refusal */
        cl_start(cl->peer.tcp.loop, &g_cl[1], jfr_uv_listener_port(g_l), HOLD, g_fix, g_len);
    g_nomem_refused = jfr_uv_listener_refused(g_l);
    phase_maybe_end();
}

static void test_nomem(void) {
    uv_loop_t loop;
    phase_begin(&loop, 2, 20000);
    jfr_uv_listener_config cfg = JFR_UV_LISTENER_CONFIG_INIT;
    jfr_callbacks cb = {.size = sizeof cb, .on_event = srv_event};
    jfr_options opts = JFR_OPTIONS_INIT;
    talloc a;
    talloc_init(&a);
    talloc_options(&opts, &a);
    cfg.callbacks = &cb;
    cfg.options = &opts;
    cfg.on_conn_start = srv_connect;
    cfg.on_conn_end = srv_close;
    CHECK(jfr_uv_listener_start(&loop, &cfg, &g_l, NULL) == JFR_OK);
    /* the listener allocates through the same allocator: refuse every
     * allocation after its start (the first peer has no memory even for
     * its connection, the second arrives while the first is refused) */
    a.fail_at = a.nalloc + 1;
    g_hook_close = nomem_close;
    g_expect_srv_closes = 2;
    cl_start(&loop, &g_cl[0], jfr_uv_listener_port(g_l), HOLD, g_fix, g_len);
    uv_run(&loop, UV_RUN_DEFAULT);
    printf("nomem: %s; then %s\n", g_cl[0].srv_msg, g_cl[1].srv_msg);
    for (int i = 0; i < 2; i++)
        CHECK(g_cl[i].srv_refused && g_cl[i].srv_status == JFR_NOMEM &&
              strstr(g_cl[i].srv_msg, ": out of memory: refused"));
    CHECK(g_nomem_refused == 2);
    phase_end(&loop);
    CHECK(a.cur == 0 && a.bad_size == 0); /* all freed, with the sizes allocated */
}

static void make_garbage(void) {
    for (int k = 0; k < NGARBAGE; k++) {
        size_t n = k == G_JUNK || k == G_LIVEJUNK ? g_len : 4096;
        uint8_t *b = malloc(n);
        unsigned seed = 99u + (unsigned)k;
        for (size_t i = 0; i < n; i++)
            b[i] = (uint8_t)rnd_next(&seed);
        if (k != G_MAGIC)
            memcpy(b, k == G_LIVEJUNK ? g_live : g_fix, 68);
        if (k == G_MAGIC)
            memcpy(b, "GARBAGE!", 8);
        if (k == G_HUGE || k == G_NEGATIVE)
            for (int i = 0; i < 8; i++)
                b[8 + i] = k == G_HUGE ? (i == 0 ? 0x40 : 0) : 0xff;
        g_garbage[k] = b;
        g_garbage_len[k] = n;
    }
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IONBF, 0);
    signal(SIGPIPE, SIG_IGN); /* writes to peers the server dropped */
    int n = 1000;
    int a = 1;
    if (argc > 2 && strcmp(argv[1], "--conns") == 0) {
        n = atoi(argv[2]);
        a = 3;
    }
    /* one chunk: the live copy is the first chunk */
    if (a >= argc || n < 1 || !(g_fix = uvpeer_fixture(argv[a], &g_len, &g_events)) ||
        !(g_live = as_live(g_fix, g_len))) {
        fprintf(stderr, "usage: test_uv_load [--conns N] FIXTURE.jfr\n");
        return 2;
    }
    /* two descriptors a connection (client and server ends) and some spare */
    struct rlimit rl;
    rlim_t need = (rlim_t)n * 2 + 100;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < need) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
        getrlimit(RLIMIT_NOFILE, &rl);
    }
    if (rl.rlim_cur < need) {
        printf("SKIP: RLIMIT_NOFILE is %llu (hard %llu), %llu needed for %d connections\n",
               (unsigned long long)rl.rlim_cur, (unsigned long long)rl.rlim_max,
               (unsigned long long)need, n);
        free(g_fix);
        free(g_live);
        return 77;
    }
    make_garbage();

    test_load(n);
    test_slow();
    test_garbage();
    test_nomem();
    for (int k = 0; k < NGARBAGE; k++)
        free(g_garbage[k]);
    free(g_fix);
    free(g_live);
    printf("%d failed checks\n", g_failures);
    return g_failures ? 1 : 0;
}
