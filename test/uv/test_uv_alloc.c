/* uv-alloc: the libuv front ends allocate through the jfr_allocator of the
 * config's options (jfrstream_uv.h, MEMORY), and survive a refusal at every
 * point (expat style):
 *  - a counting allocator sees every allocation of a listener serving two
 *    peers and of a tail reading a repository, and is balanced at the end
 *    (every block freed, with the size it was allocated with);
 *  - listener: allocation k refused, for k = 1 .. every allocation made
 *    until the first peer's end (the listener's own, the peer's connection,
 *    its parser's, the bytes held back while it is paused every 100
 *    events): start fails with JFR_NOMEM, or the first peer ends
 *    (JFR_NOMEM, or refused) and a second peer is then accepted and parsed
 *    completely: the listener keeps accepting. Nothing leaks;
 *  - tail: allocation k refused, for every k of a whole tail: start fails
 *    with JFR_NOMEM or the tail ends with JFR_NOMEM; nothing leaks.
 * Run it under ASan too (no crash, no leak: LeakSanitizer).
 * Usage: test_uv_alloc FIXTURE.jfr */
#define UVPEER_NAME "test_uv_alloc"
#include "uvpeer.h"

#include <unistd.h>

static uint8_t *g_fix;
static size_t g_len;
static uint64_t g_events;

/* ------------------------------------------------------------ the listener */

typedef struct lrun {
    talloc a;
    jfr_uv_listener *l;
    uvpeer cl[2];           /* the peers: the fixture in one write each */
    int ends;               /* connections ended */
    jfr_status status[2];
    uint64_t events[2];     /* of the connections that started */
    size_t nalloc_first;    /* allocations until the first peer's end */
    bool refused_first;     /* the first peer never got on_conn_start */
    bool ended;             /* the listener's on_end */
    uv_timer_t deadline, resume;
    jfr_uv_conn *paused;
} lrun;

static lrun *g_lrun;

/* The first peer pauses every 100 events (bytes are held back, through the
 * allocator); a 1 ms timer resumes it. */
static int l_event(jfr_parser *p, const jfr_event *e, void *user) {
    (void)p;
    (void)e;
    jfr_uv_conn *c = user;
    uint64_t *n = c->data;
    if (++*n % 100 == 0 && n == &g_lrun->events[0]) {
        g_lrun->paused = c;
        return JFR_CB_PAUSE;
    }
    return JFR_CB_CONTINUE;
}

static void l_resume(uv_timer_t *t) {
    lrun *r = t->data;
    jfr_uv_conn *c = r->paused;
    r->paused = NULL;
    if (c)
        jfr_uv_conn_resume(c);
}

static void l_conn_start(jfr_uv_conn *c, void *user) {
    lrun *r = user;
    c->data = &r->events[r->ends < 2 ? r->ends : 1];
}

static void l_conn_end(jfr_uv_conn *c, jfr_status s, const char *msg, void *user) {
    lrun *r = user;
    int i = r->ends++;
    if (i >= 2) {
        fprintf(stderr, "  unexpected connection end: %s\n", msg);
        g_failures++;
        return;
    }
    r->status[i] = s;
    if (r->paused == c)
        r->paused = NULL;
    if (getenv("TEST_UV_VERBOSE"))
        printf("  peer %d: %s (%s)\n", i + 1, jfr_status_name(s), msg);
    if (i == 0) {
        r->refused_first = c->data == NULL;
        r->nalloc_first = r->a.nalloc;
        r->a.fail_at = 0; /* no more refusals: the second peer must be served */
        uvpeer_start(&r->cl[1], r->deadline.loop, jfr_uv_listener_port(r->l), g_fix, g_len);
    } else {
        jfr_uv_listener_stop(r->l);
    }
}

static void l_end(jfr_uv_listener *l, void *user) {
    (void)l;
    lrun *r = user;
    r->ended = true;
    uv_close((uv_handle_t *)&r->resume, NULL);
}

/* Options whose allocator, `a` (reset), refuses allocation `k` alone (0:
 * none). */
static jfr_options refusing_options(talloc *a, size_t k) {
    talloc_init(a);
    a->fail_at = k;
    a->fail_once = true;
    jfr_options opts = JFR_OPTIONS_INIT;
    talloc_options(&opts, a);
    return opts;
}

/* One listener run with allocation `k` refused (0: none). Returns false when
 * start itself was refused. */
static bool listener_run(lrun *r, size_t k) {
    memset(r, 0, sizeof *r);
    g_lrun = r;
    jfr_options opts = refusing_options(&r->a, k);
    uv_loop_t loop;
    uv_loop_init(&loop);
    jfr_callbacks cb = {.size = sizeof cb, .on_event = l_event};
    jfr_uv_listener_config cfg = JFR_UV_LISTENER_CONFIG_INIT;
    cfg.options = &opts;
    cfg.callbacks = &cb;
    cfg.on_conn_start = l_conn_start;
    cfg.on_conn_end = l_conn_end;
    cfg.on_end = l_end;
    cfg.user = r;
    cfg.read_buffer = 4096; /* many reads: the held-back copy grows in steps */
    jfr_status st = jfr_uv_listener_start(&loop, &cfg, &r->l, NULL);
    if (st != JFR_OK) {
        CHECK(st == JFR_NOMEM && r->a.failed == 1);
        uv_run(&loop, UV_RUN_DEFAULT);
        CHECK(uv_loop_close(&loop) == 0);
        CHECK(r->a.cur == 0);
        return false;
    }
    uv_timer_init(&loop, &r->resume);
    r->resume.data = r;
    uv_timer_start(&r->resume, l_resume, 1, 1);
    uvpeer_start(&r->cl[0], &loop, jfr_uv_listener_port(r->l), g_fix, g_len);
    uvpeer_run(&loop, &r->deadline, 20000);
    CHECK(r->ended);
    if (!r->ended) { /* deadline: end what is left */
        jfr_uv_listener_stop(r->l);
        uv_close((uv_handle_t *)&r->resume, NULL);
    }
    uvpeer_loop_close(&loop, &r->deadline);
    return true;
}

static void test_listener(void) {
    lrun r;
    /* counting: every allocation through the allocator, balanced */
    CHECK(listener_run(&r, 0));
    size_t n = r.nalloc_first;
    printf("listener: %zu allocations (%zu until the first peer's end), peak %zu bytes, %zu "
           "live at the end (%zu wrong sizes); peers: %s %llu events, %s %llu events\n",
           r.a.nalloc, n, r.a.peak, r.a.cur, r.a.bad_size, jfr_status_name(r.status[0]),
           (unsigned long long)r.events[0], jfr_status_name(r.status[1]),
           (unsigned long long)r.events[1]);
    CHECK(r.a.cur == 0 && r.a.bad_size == 0 && n >= 4);
    CHECK(r.status[0] == JFR_OK && r.events[0] == g_events);
    CHECK(r.status[1] == JFR_OK && r.events[1] == g_events);

    unsigned start_refused = 0, conn_refused = 0, ended_nomem = 0, unaffected = 0, bad = 0;
    for (size_t k = 1; k <= n; k++) {
        if (!listener_run(&r, k)) {
            start_refused++;
            continue;
        }
        bool ok = r.a.cur == 0 && r.a.bad_size == 0 && r.ends == 2 &&
                  r.status[1] == JFR_OK && r.events[1] == g_events;
        if (r.refused_first && r.status[0] == JFR_NOMEM)
            conn_refused++;
        else if (r.status[0] == JFR_NOMEM)
            ended_nomem++;
        else if (r.status[0] == JFR_OK && r.events[0] == g_events && !r.a.failed)
            unaffected++;
        else
            ok = false;
        if (!ok) {
            bad++;
            fprintf(stderr, "  allocation %zu refused: %zu live bytes, %d ends, first %s (%llu "
                            "events), second %s (%llu events)\n",
                    k, r.a.cur, r.ends, jfr_status_name(r.status[0]),
                    (unsigned long long)r.events[0], jfr_status_name(r.status[1]),
                    (unsigned long long)r.events[1]);
        }
    }
    printf("listener: allocation k refused for k = 1..%zu: start refused %u times, the first "
           "peer refused %u times (no memory for its connection or parser), ended with "
           "JFR_NOMEM %u times, unaffected %u; every time the second peer complete, nothing "
           "leaked; %u bad\n",
           n, start_refused, conn_refused, ended_nomem, unaffected, bad);
    CHECK(bad == 0 && start_refused >= 2 && conn_refused >= 2 && ended_nomem >= 1);
}

/* ---------------------------------------------------------------- the tail */

typedef struct trun {
    talloc a;
    jfr_uv_tail_end why;
    jfr_status status;
    uint64_t events;
    bool ended;
} trun;

static void t_end(jfr_uv_tail *t, jfr_uv_tail_end why, jfr_status s, const char *msg,
                  void *user) {
    (void)t;
    trun *r = user;
    r->why = why;
    r->status = s;
    r->ended = true;
    if (getenv("TEST_UV_VERBOSE"))
        printf("  tail: why=%d %s (%s)\n", (int)why, jfr_status_name(s), msg);
}

static bool tail_run(trun *r, const char *dir, size_t k) {
    memset(r, 0, sizeof *r);
    jfr_options opts = refusing_options(&r->a, k);
    uv_loop_t loop;
    uv_loop_init(&loop);
    jfr_callbacks cb = {.size = sizeof cb, .on_event = uvpeer_count_tail_event};
    jfr_uv_tail_config cfg = JFR_UV_TAIL_CONFIG_INIT;
    cfg.path = dir;
    cfg.options = &opts;
    cfg.callbacks = &cb;
    cfg.poll_ms = 2;
    cfg.on_end = t_end;
    cfg.user = r;
    jfr_uv_tail *t;
    jfr_status st = jfr_uv_tail_start(&loop, &cfg, &t, NULL);
    if (st != JFR_OK) {
        CHECK(st == JFR_NOMEM && r->a.failed == 1 && r->a.cur == 0);
        CHECK(uv_loop_close(&loop) == 0);
        return false;
    }
    t->data = &r->events;
    uv_timer_t deadline;
    uvpeer_run(&loop, &deadline, 20000);
    if (!r->ended)
        jfr_uv_tail_stop(t);
    uvpeer_loop_close(&loop, &deadline);
    return true;
}

static void test_tail(void) {
    char dir[] = "/tmp/jfrstream-uv-alloc-XXXXXX", path[128];
    CHECK(mkdtemp(dir) != NULL);
    /* two chunk files: the first not final, the second final */
    for (int i = 0; i < 2; i++) {
        snprintf(path, sizeof path, "%s/2026_11_28_12_00_0%d.jfr", dir, i);
        FILE *f = fopen(path, "wb");
        uint8_t flags = g_fix[67];
        g_fix[67] = i ? (uint8_t)(flags | 0x02) : (uint8_t)(flags & ~0x02);
        CHECK(f && fwrite(g_fix, 1, g_len, f) == g_len);
        g_fix[67] = flags;
        if (f)
            fclose(f);
    }
    trun r;
    CHECK(tail_run(&r, dir, 0));
    size_t n = r.a.nalloc;
    printf("tail: %zu allocations, peak %zu bytes, %zu live at the end (%zu wrong sizes); ended "
           "why=%d %s with %llu events\n",
           n, r.a.peak, r.a.cur, r.a.bad_size, (int)r.why, jfr_status_name(r.status),
           (unsigned long long)r.events);
    CHECK(r.a.cur == 0 && r.a.bad_size == 0 && n >= 3);
    CHECK(r.why == JFR_UV_TAIL_FINAL && r.status == JFR_OK && r.events == 2 * g_events);
    unsigned start_refused = 0, ended_nomem = 0, bad = 0;
    for (size_t k = 1; k <= n; k++) {
        if (!tail_run(&r, dir, k)) {
            start_refused++;
            continue;
        }
        bool ok = r.ended && r.a.cur == 0 && r.a.bad_size == 0;
        if (r.why == JFR_UV_TAIL_ERROR && r.status == JFR_NOMEM)
            ended_nomem++;
        else if (!(r.why == JFR_UV_TAIL_FINAL && r.events == 2 * g_events && !r.a.failed))
            ok = false;
        if (!ok) {
            bad++;
            fprintf(stderr, "  allocation %zu refused: %zu live bytes, ended %d why=%d %s\n", k,
                    r.a.cur, r.ended, (int)r.why, jfr_status_name(r.status));
        }
    }
    printf("tail: allocation k refused for k = 1..%zu: start refused %u times, ended with "
           "JFR_NOMEM %u times, nothing leaked; %u bad\n",
           n, start_refused, ended_nomem, bad);
    CHECK(bad == 0 && start_refused >= 2 && ended_nomem >= 1);
    for (int i = 0; i < 2; i++) {
        snprintf(path, sizeof path, "%s/2026_11_28_12_00_0%d.jfr", dir, i);
        unlink(path);
    }
    rmdir(dir);
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IONBF, 0);
    if (argc < 2 || !(g_fix = uvpeer_fixture(argv[1], &g_len, &g_events))) {
        fprintf(stderr, "usage: test_uv_alloc FIXTURE.jfr\n");
        return 2;
    }
    g_fix[67] |= 0x02; /* final: a peer's stream ends cleanly with it */
    test_listener();
    test_tail();
    free(g_fix);
    printf("%d failed checks\n", g_failures);
    return g_failures ? 1 : 0;
}
