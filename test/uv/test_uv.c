/* libuv front ends, no JVM needed (loopback only, bounded in time):
 *  - listener: 20 concurrent streams (finished and live-shaped chunks, sent in
 *    random write sizes), one peer that drops mid-record, one paused
 *    connection resumed by a timer (back-pressure), one over a byte limit;
 *  - the turn's read budget: 40 peers sending 1 MiB each at once are read
 *    at most 1 MiB (and the read crossing it) per turn of the loop;
 *  - tail: a simulated repository whose chunk files grow with header
 *    rewrites (state 255 guard, generations), ended by the final-chunk flag
 *    (on_end names the last file); a repository whose chunk file is removed
 *    (JVM exit) before the next one was opened: ended, reported; the idle
 *    limit on a half-written chunk: the unfinished chunk is reported;
 *  - the pause rule at the end of input: a listener stopped and a tail
 *    stopped (manual resume, and resumed by its poll) while a callback holds
 *    the parser: nothing is fed or finished before the resume, every event
 *    arrives, the end's status is JFR_OK, never JFR_PAUSED (both failed
 *    before the rule: the listener fed and finished behind the pause, the
 *    tail ended with JFR_PAUSED after 541 of 596 events);
 *  - repository scanning (jfr_uv_repo_*): a JVM folder only with chunk
 *    files (JDK 17's empty first folder is never chosen), names in order;
 *  - sized structs: both configs from an older caller (smaller size,
 *    garbage after it) and a newer one (bigger, zero extra bytes); NULL and
 *    uninitialised arguments refused, NULL handles harmless.
 * Usage: test_uv FIXTURE.jfr (a finished JDK chunk with flush checkpoints) */
#define UVPEER_NAME "test_uv"
#include "uvpeer.h"

#include <stddef.h>
#include <sys/stat.h>
#include <unistd.h>

static uint8_t *g_fix, *g_live;
static size_t g_len;
static uint64_t g_events; /* events in the fixture */

/* ---------------------------------------------------------------- listener */

#define NCLIENTS 20

typedef struct conn_stat {
    uint64_t events;
    jfr_status status;
    bool closed;
    int pauses;
} conn_stat;

static conn_stat g_stats[64];
static int g_closed, g_expected_closes, g_limit_closed;
static jfr_uv_listener *g_listener, *g_limited;
static uv_timer_t g_resume_timer, g_deadline;
static jfr_uv_conn *g_paused_conn;

static int on_conn_event(jfr_parser *p, const jfr_event *e, void *user) {
    (void)p;
    (void)e;
    jfr_uv_conn *c = user;
    conn_stat *st = c->data;
    st->events++;
    /* the connection with id 1 pauses every 50 events */
    if (jfr_uv_conn_id(c) == 1 && st->events % 50 == 0) {
        st->pauses++;
        g_paused_conn = c;
        return JFR_CB_PAUSE;
    }
    return JFR_CB_CONTINUE;
}

static void on_resume_timer(uv_timer_t *t) {
    (void)t;
    if (g_paused_conn) {
        jfr_uv_conn *c = g_paused_conn;
        g_paused_conn = NULL;
        jfr_uv_conn_resume(c);
    }
}

static void on_conn_start_srv(jfr_uv_conn *c, void *user) {
    (void)user;
    uint64_t id = jfr_uv_conn_id(c);
    c->data = &g_stats[id < 64 ? id : 63];
}

static int g_listeners_ended;
static void listener_ended(jfr_uv_listener *l, void *user) {
    (void)l;
    (void)user;
    g_listeners_ended++;
}

static void on_conn_end_srv(jfr_uv_conn *c, jfr_status s, const char *msg, void *user) {
    (void)user;
    conn_stat *st = c->data;
    st->status = s;
    st->closed = true;
    if (s != JFR_OK || getenv("TEST_UV_VERBOSE"))
        printf("  connection %llu closed: %s (%s)\n", (unsigned long long)jfr_uv_conn_id(c),
               jfr_status_name(s), msg);
    if (++g_closed == g_expected_closes) {
        jfr_uv_listener_stop(g_listener);
        uv_close((uv_handle_t *)&g_resume_timer, NULL);
    }
}

static void on_conn_end_limited(jfr_uv_conn *c, jfr_status s, const char *msg, void *user) {
    (void)c;
    (void)user;
    printf("  limited listener: %s (%s)\n", jfr_status_name(s), msg);
    CHECK(s == JFR_LIMIT);
    g_limit_closed++;
    jfr_uv_listener_stop(g_limited);
}

static void peer_free(uvpeer *p) { free(p); }

/* A peer sending `len` bytes of `data` in writes of 1 to 30,000 bytes (the
 * sizes seeded by `idx`), then shutting down; freed once closed. */
static void start_client(uv_loop_t *loop, int port, const uint8_t *data, size_t len, int idx) {
    uvpeer *p = calloc(1, sizeof *p);
    if (!p) {
        g_failures++;
        return;
    }
    p->seed = (unsigned)idx + 1;
    p->max_write = 30000;
    p->on_close = peer_free;
    uvpeer_start(p, loop, port, data, len);
}

static void test_listener(void) {
    uv_loop_t loop;
    uv_loop_init(&loop);
    /* start errors: a config not initialised; an address libuv refuses */
    jfr_uv_listener_config bad = {0};
    jfr_uv_listener *none = NULL;
    int uverr = 1;
    CHECK(jfr_uv_listener_start(&loop, &bad, &none, &uverr) == JFR_INVALID_ARG && uverr == 0);
    jfr_uv_listener_config_init(&bad);
    bad.host = "not an address";
    CHECK(jfr_uv_listener_start(&loop, &bad, &none, &uverr) == JFR_IO && uverr < 0 && !none);

    jfr_uv_listener_config cfg = JFR_UV_LISTENER_CONFIG_INIT;
    jfr_callbacks cb = {.size = sizeof cb, .on_event = on_conn_event};
    cfg.callbacks = &cb;
    cfg.on_conn_start = on_conn_start_srv;
    cfg.on_conn_end = on_conn_end_srv;
    cfg.on_end = listener_ended;
    CHECK(jfr_uv_listener_start(&loop, &cfg, &g_listener, NULL) == JFR_OK);
    int port = jfr_uv_listener_port(g_listener);
    CHECK(port > 0);
    jfr_uv_listener_config lim = cfg;
    jfr_callbacks lim_cb = {.size = sizeof lim_cb}; /* the limit comes before an event */
    lim.on_conn_end = on_conn_end_limited;
    lim.on_conn_start = NULL;
    lim.callbacks = &lim_cb;
    lim.max_bytes_per_conn = 1000;
    CHECK(jfr_uv_listener_start(&loop, &lim, &g_limited, NULL) == JFR_OK);

    uv_timer_init(&loop, &g_resume_timer);
    uv_timer_start(&g_resume_timer, on_resume_timer, 5, 5);

    g_expected_closes = NCLIENTS + 1;
    for (int i = 0; i < NCLIENTS; i++)
        start_client(&loop, port, i % 2 ? g_live : g_fix, g_len, i);
    /* a peer that drops in the middle of a record */
    start_client(&loop, port, g_fix, g_len / 2 + 3, NCLIENTS);
    start_client(&loop, jfr_uv_listener_port(g_limited), g_fix, g_len, 99);
    uvpeer_run(&loop, &g_deadline, 60000);

    int ok = 0, truncated = 0;
    for (int id = 1; id <= NCLIENTS + 1; id++) {
        conn_stat *st = &g_stats[id];
        CHECK(st->closed);
        if (st->status == JFR_OK && st->events == g_events)
            ok++;
        else if (st->status == JFR_TRUNCATED && st->events < g_events)
            truncated++;
        else
            fprintf(stderr, "  conn %d: status %s, %llu events\n", id,
                    jfr_status_name(st->status), (unsigned long long)st->events);
    }
    printf("listener: %d streams complete with %llu events each, %d truncated peer "
           "reported alone, %d pauses resumed, %d over the byte limit\n",
           ok, (unsigned long long)g_events, truncated, g_stats[1].pauses, g_limit_closed);
    CHECK(ok == NCLIENTS);
    CHECK(truncated == 1);
    CHECK(g_stats[1].pauses > 0);
    CHECK(g_limit_closed == 1);
    CHECK(g_listeners_ended == 2); /* on_end of both, after their stop */
    uvpeer_loop_close(&loop, &g_deadline);
}

/* The turn's read budget: many peers sending at once are read at most
 * 1 MiB (plus the read that crossed it) per turn of the loop, measured by a
 * check handle of ours between two polls; every stream still complete. */
#define TURN_CLIENTS 40
#define TURN_BUDGET (1u << 20)

static jfr_uv_conn *g_turn_conns[TURN_CLIENTS + 1];
static uint64_t g_turn_closed_bytes, g_turn_last, g_turn_max;
static unsigned g_turn_turns, g_turn_ended, g_turn_ok;
static uint64_t g_turn_events[TURN_CLIENTS + 1];

static int turn_event(jfr_parser *p, const jfr_event *e, void *user) {
    (void)p;
    (void)e;
    jfr_uv_conn *c = user;
    uint64_t id = jfr_uv_conn_id(c);
    if (id <= TURN_CLIENTS)
        g_turn_events[id]++;
    return JFR_CB_CONTINUE;
}

static void turn_conn_start(jfr_uv_conn *c, void *user) {
    (void)user;
    uint64_t id = jfr_uv_conn_id(c);
    if (id <= TURN_CLIENTS)
        g_turn_conns[id] = c;
}

static void turn_conn_end(jfr_uv_conn *c, jfr_status s, const char *msg, void *user) {
    uint64_t id = jfr_uv_conn_id(c), *want = user;
    if (id >= 1 && id <= TURN_CLIENTS) {
        g_turn_closed_bytes += jfr_uv_conn_bytes(c);
        g_turn_conns[id] = NULL;
        if (s == JFR_OK && g_turn_events[id] == *want)
            g_turn_ok++;
        else
            fprintf(stderr, "  turn conn %llu: %s (%s), %llu events\n", (unsigned long long)id,
                    jfr_status_name(s), msg, (unsigned long long)g_turn_events[id]);
    }
    if (++g_turn_ended == TURN_CLIENTS)
        jfr_uv_listener_stop(jfr_uv_conn_listener(c));
}

static void turn_check(uv_check_t *h) {
    (void)h;
    uint64_t total = g_turn_closed_bytes;
    for (int i = 1; i <= TURN_CLIENTS; i++)
        if (g_turn_conns[i])
            total += jfr_uv_conn_bytes(g_turn_conns[i]);
    if (total - g_turn_last > g_turn_max)
        g_turn_max = total - g_turn_last;
    if (total != g_turn_last)
        g_turn_turns++;
    g_turn_last = total;
}

static void test_listener_turns(void) {
    /* each peer: the fixture's chunk back to back up to 1 MiB and more */
    size_t copies = TURN_BUDGET / g_len + 1, len = copies * g_len;
    uint8_t *data = malloc(len);
    for (size_t i = 0; i < copies; i++)
        memcpy(data + i * g_len, g_fix, g_len);
    uint64_t want = g_events * copies;
    uv_loop_t loop;
    uv_loop_init(&loop);
    jfr_uv_listener_config cfg = JFR_UV_LISTENER_CONFIG_INIT;
    jfr_callbacks cb = {.size = sizeof cb, .on_event = turn_event};
    cfg.callbacks = &cb;
    cfg.on_conn_start = turn_conn_start;
    cfg.on_conn_end = turn_conn_end;
    cfg.user = &want;
    jfr_uv_listener *l = NULL;
    CHECK(jfr_uv_listener_start(&loop, &cfg, &l, NULL) == JFR_OK);
    uv_check_t chk;
    uv_check_init(&loop, &chk);
    uv_check_start(&chk, turn_check);
    uv_unref((uv_handle_t *)&chk);
    for (int i = 0; i < TURN_CLIENTS; i++)
        start_client(&loop, jfr_uv_listener_port(l), data, len, 1000 + i);
    uvpeer_run(&loop, &g_deadline, 60000);
    uint64_t bound = TURN_BUDGET + 65536; /* the budget and the read crossing it */
    printf("listener turns: %u peers x %zu bytes, %u complete; %u turns read bytes, at most "
           "%llu in one (bound %llu)\n",
           TURN_CLIENTS, len, g_turn_ok, g_turn_turns, (unsigned long long)g_turn_max,
           (unsigned long long)bound);
    CHECK(g_turn_ok == TURN_CLIENTS);
    CHECK(g_turn_closed_bytes == (uint64_t)TURN_CLIENTS * len);
    CHECK(g_turn_max > 0 && g_turn_max <= bound);
    uv_close((uv_handle_t *)&chk, NULL);
    uvpeer_loop_close(&loop, &g_deadline);
    free(data);
}

/* -------------------------------------------------------------------- tail */

typedef struct writer {
    char dir[256];
    int file;          /* 0, 1: two chunk files */
    size_t written;
    int gen;
    bool guard;        /* header left at 255 for one tick */
    unsigned seed;
} writer;

static writer g_w;
static uint64_t g_tail_events;
static jfr_uv_tail_end g_tail_why;
static uv_timer_t g_write_timer;

static void write_at(const char *path, const void *b, size_t n, off_t off) {
    FILE *f = fopen(path, off == 0 && n > 68 ? "wb" : "r+b");
    if (!f)
        f = fopen(path, "wb");
    fseek(f, off, SEEK_SET);
    fwrite(b, 1, n, f);
    fclose(f);
}

static void chunk_path(char *out, size_t n, int file) {
    snprintf(out, n, "%s/2026_11_21_10_00_0%d.jfr", g_w.dir, file);
}

/* One tick of a JVM writing: append bytes, then rewrite the header. */
static void on_write_tick(uv_timer_t *t) {
    char path[300];
    chunk_path(path, sizeof path, g_w.file);
    if (g_w.guard) { /* finish a header rewrite left half-done */
        g_w.guard = false;
    } else {
        size_t n = 1 + rnd_next(&g_w.seed) % 40000;
        if (g_w.written == 0) { /* new chunk file: header says live, size 68 */
            uint8_t h[68];
            memcpy(h, g_live, 68);
            write_at(path, h, 68, 0);
            g_w.written = 68;
            return;
        }
        if (n > g_len - g_w.written)
            n = g_len - g_w.written;
        write_at(path, g_fix + g_w.written, n, (off_t)g_w.written);
        g_w.written += n;
        uint8_t st = 255; /* the writer's guard, sometimes seen by the tail */
        write_at(path, &st, 1, 64);
        if (rnd_next(&g_w.seed) % 4 == 0) {
            g_w.guard = true;
            return;
        }
    }
    /* rewrite size and state (generation, or 0 when the chunk is complete) */
    uint8_t sz[8];
    for (int i = 0; i < 8; i++)
        sz[i] = (uint8_t)(g_w.written >> (56 - 8 * i));
    write_at(path, sz, 8, 8);
    bool done = g_w.written == g_len;
    uint8_t flags[2] = {0, (uint8_t)(done && g_w.file == 1 ? 0x03 : 0x01)};
    write_at(path, flags, 2, 66);
    g_w.gen = g_w.gen % 254 + 1;
    uint8_t st = done ? 0 : (uint8_t)g_w.gen;
    write_at(path, &st, 1, 64);
    if (done) {
        if (g_w.file == 1) {
            uv_timer_stop(t);
            return;
        }
        g_w.file++;
        g_w.written = 0;
    }
}

static void on_tail_end(jfr_uv_tail *t, jfr_uv_tail_end why, jfr_status s, const char *msg,
                        void *user) {
    (void)user;
    g_tail_why = why;
    printf("  tail ended: why=%d status=%s (%s) in %s\n", (int)why, jfr_status_name(s), msg,
           jfr_uv_tail_file(t));
    const char *f = jfr_uv_tail_file(t);
    CHECK(strlen(f) > 7 && strcmp(f + strlen(f) - 7, "_01.jfr") == 0);
    uv_timer_stop(&g_write_timer);
    uv_close((uv_handle_t *)&g_write_timer, NULL);
}

static void test_tail(void) {
    uv_loop_t loop;
    uv_loop_init(&loop);
    snprintf(g_w.dir, sizeof g_w.dir, "/tmp/jfrstream-tail-XXXXXX");
    CHECK(mkdtemp(g_w.dir) != NULL);
    g_w.seed = 7;
    uv_timer_init(&loop, &g_write_timer);
    uv_timer_start(&g_write_timer, on_write_tick, 0, 3);
    jfr_uv_tail_config cfg = JFR_UV_TAIL_CONFIG_INIT;
    jfr_callbacks cb = {.size = sizeof cb, .on_event = uvpeer_count_tail_event};
    cfg.path = g_w.dir;
    cfg.callbacks = &cb;
    cfg.poll_ms = 2;
    cfg.on_end = on_tail_end;
    jfr_uv_tail *t = NULL;
    CHECK(jfr_uv_tail_start(&loop, &cfg, &t, NULL) == JFR_OK);
    if (t)
        t->data = &g_tail_events;
    uvpeer_run(&loop, &g_deadline, 60000);
    printf("tail: %llu events from 2 growing chunk files (want %llu), ended by %s\n",
           (unsigned long long)g_tail_events, (unsigned long long)(2 * g_events),
           g_tail_why == JFR_UV_TAIL_FINAL ? "the final-chunk flag" : "something else");
    CHECK(g_tail_events == 2 * g_events);
    CHECK(g_tail_why == JFR_UV_TAIL_FINAL);
    uvpeer_loop_close(&loop, &g_deadline);
    char path[300];
    for (int i = 0; i < 2; i++) {
        chunk_path(path, sizeof path, i);
        unlink(path);
    }
    rmdir(g_w.dir);
}

/* A tail that ends on its own: removed files, idle on a partial chunk. */
typedef struct tail_end_rec {
    jfr_uv_tail_end why;
    jfr_status status;
    char msg[512], file[512];
    int errors, truncations;
    uint64_t events;
    bool ended;
} tail_end_rec;

static tail_end_rec g_te;
static char g_te_path[300];
static uv_timer_t g_unlink_timer;

static int te_error(jfr_parser *p, jfr_status s, const char *msg, void *u) {
    (void)p;
    (void)msg;
    (void)u;
    g_te.errors++;
    g_te.truncations += s == JFR_TRUNCATED;
    return JFR_CB_STOP;
}

static void te_end(jfr_uv_tail *t, jfr_uv_tail_end why, jfr_status s, const char *msg,
                   void *user) {
    (void)user;
    g_te.why = why;
    g_te.status = s;
    g_te.ended = true;
    snprintf(g_te.msg, sizeof g_te.msg, "%s", msg);
    snprintf(g_te.file, sizeof g_te.file, "%s", jfr_uv_tail_file(t));
    if (!uv_is_closing((uv_handle_t *)&g_unlink_timer))
        uv_close((uv_handle_t *)&g_unlink_timer, NULL);
}

/* once the whole chunk was read, remove the file (the JVM exits) */
static void on_unlink_tick(uv_timer_t *t) {
    if (g_te.events == g_events) {
        unlink(g_te_path);
        uv_timer_stop(t);
    }
}

static uint64_t run_tail_alone(const char *path, unsigned idle_ms, bool unlink_after) {
    uv_loop_t loop;
    uv_loop_init(&loop);
    memset(&g_te, 0, sizeof g_te);
    jfr_uv_tail_config cfg;
    jfr_uv_tail_config_init(&cfg);
    jfr_callbacks cb = JFR_CALLBACKS_INIT;
    cb.on_event = uvpeer_count_tail_event;
    cb.on_error = te_error;
    cfg.path = path;
    cfg.callbacks = &cb;
    cfg.poll_ms = 5;
    cfg.idle_ms = idle_ms;
    cfg.on_end = te_end;
    jfr_uv_tail *t = NULL;
    CHECK(jfr_uv_tail_start(&loop, &cfg, &t, NULL) == JFR_OK);
    if (t)
        t->data = &g_te.events;
    /* a path that cannot be read: libuv's error; no config: invalid */
    int uverr = 0;
    jfr_uv_tail *none = NULL;
    cfg.path = "/nonexistent/jfrstream-test";
    CHECK(jfr_uv_tail_start(&loop, &cfg, &none, &uverr) == JFR_IO && uverr == UV_ENOENT && !none);
    CHECK(jfr_uv_tail_start(&loop, NULL, &none, &uverr) == JFR_INVALID_ARG && uverr == 0);
    uv_timer_init(&loop, &g_unlink_timer);
    if (unlink_after)
        uv_timer_start(&g_unlink_timer, on_unlink_tick, 5, 5);
    uint64_t t0 = uv_hrtime();
    uvpeer_run(&loop, &g_deadline, 10000);
    if (!g_te.ended) /* deadline: stop the tail, then let it close */
        jfr_uv_tail_stop(t);
    uvpeer_loop_close(&loop, &g_deadline);
    return (uv_hrtime() - t0) / 1000000;
}

static void test_tail_ends(void) {
    char dir[] = "/tmp/jfrstream-tail-end-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    /* a finished, non-final chunk file, removed once read: no next file */
    snprintf(g_te_path, sizeof g_te_path, "%s/2026_11_21_10_00_00.jfr", dir);
    uint8_t *nf = malloc(g_len);
    memcpy(nf, g_fix, g_len);
    nf[67] &= (uint8_t)~0x02;
    write_at(g_te_path, nf, g_len, 0);
    uint64_t ms = run_tail_alone(dir, 0, true);
    printf("tail: chunk file removed after its %llu events, no next file: ended after %llu ms: "
           "why=%d %s (%s) last file %s\n",
           (unsigned long long)g_te.events, (unsigned long long)ms, (int)g_te.why,
           jfr_status_name(g_te.status), g_te.msg, g_te.file);
    CHECK(g_te.ended && g_te.why == JFR_UV_TAIL_ERROR && g_te.status == JFR_TRUNCATED);
    CHECK(strstr(g_te.msg, "removed (JVM exit)") && strstr(g_te.msg, "2026_11_21_10_00_00.jfr"));
    CHECK(strcmp(g_te.file, g_te_path) == 0 && g_te.events == g_events);

    /* half a chunk, then nothing: the idle end reports the unfinished chunk */
    write_at(g_te_path, g_fix, g_len / 2, 0);
    ms = run_tail_alone(g_te_path, 300, false);
    printf("tail: half a chunk, idle 300 ms: ended after %llu ms: why=%d %s (%s), %d "
           "truncation reported to on_error\n",
           (unsigned long long)ms, (int)g_te.why, jfr_status_name(g_te.status), g_te.msg,
           g_te.truncations);
    CHECK(g_te.ended && g_te.why == JFR_UV_TAIL_IDLE && g_te.status == JFR_TRUNCATED);
    CHECK(strstr(g_te.msg, "bytes short of the declared chunk size") != NULL);
    CHECK(g_te.truncations == 1 && g_te.errors == 1 && g_te.events == 0);
    CHECK(strcmp(g_te.file, g_te_path) == 0 && ms >= 250 && ms < 5000);
    unlink(g_te_path);
    rmdir(dir);
    free(nf);
}

/* manual_resume: a callback pauses every 50th event; only a timer of ours
 * resumes, 30 ms later (longer than the poll and than idle_ms would allow
 * if held time counted). Every event arrives once, in order. */
typedef struct held {
    jfr_uv_tail *t;
    uint64_t events, pauses, resumes;
    bool waiting;
    uv_timer_t resume;
} held;
static held g_h;

static int held_event(jfr_parser *p, const jfr_event *e, void *u) {
    (void)p;
    (void)e;
    (void)u;
    CHECK(!g_h.waiting); /* nothing may arrive while we hold the tail */
    if (++g_h.events % 50 == 0) {
        g_h.pauses++;
        g_h.waiting = true;
        return JFR_CB_PAUSE;
    }
    return JFR_CB_CONTINUE;
}
static void held_resume(uv_timer_t *tm) {
    (void)tm;
    if (g_h.waiting) {
        g_h.waiting = false;
        g_h.resumes++;
        jfr_uv_tail_resume(g_h.t);
    }
}
static void held_end(jfr_uv_tail *t, jfr_uv_tail_end why, jfr_status s, const char *msg,
                     void *user) {
    (void)t;
    (void)s;
    (void)msg;
    (void)user;
    g_te.ended = true;
    g_te.why = why;
    uv_timer_stop(&g_h.resume);
    uv_close((uv_handle_t *)&g_h.resume, NULL);
}

static void test_tail_manual_resume(void) {
    char dir[] = "/tmp/jfrstream-tail-held-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char path[300];
    snprintf(path, sizeof path, "%s/2026_11_21_10_00_00.jfr", dir);
    write_at(path, g_fix, g_len, 0); /* the final-chunk flag ends the tail */
    memset(&g_h, 0, sizeof g_h);
    memset(&g_te, 0, sizeof g_te);
    uv_loop_t loop;
    uv_loop_init(&loop);
    jfr_uv_tail_config cfg;
    jfr_uv_tail_config_init(&cfg);
    jfr_callbacks cb = JFR_CALLBACKS_INIT;
    cb.on_event = held_event;
    cfg.path = dir;
    cfg.callbacks = &cb;
    cfg.poll_ms = 2;
    cfg.idle_ms = 20; /* shorter than a hold: held time must not count */
    cfg.manual_resume = true;
    cfg.on_end = held_end;
    CHECK(jfr_uv_tail_start(&loop, &cfg, &g_h.t, NULL) == JFR_OK);
    uv_timer_init(&loop, &g_h.resume);
    uv_timer_start(&g_h.resume, held_resume, 30, 30);
    uvpeer_run(&loop, &g_deadline, 60000);
    printf("tail manual_resume: %llu events (want %llu), %llu pauses, %llu resumes, ended why=%d\n",
           (unsigned long long)g_h.events, (unsigned long long)g_events,
           (unsigned long long)g_h.pauses, (unsigned long long)g_h.resumes, (int)g_te.why);
    CHECK(g_te.ended && g_te.why == JFR_UV_TAIL_FINAL);
    CHECK(g_h.events == g_events && g_h.pauses == g_events / 50);
    CHECK(g_h.resumes >= g_h.pauses - (g_events % 50 == 0 ? 1 : 0));
    uvpeer_loop_close(&loop, &g_deadline);
    unlink(path);
    rmdir(dir);
}

/* ------------------------------------------------- pause at the end of input
 *
 * The one rule (jfrstream_uv.h, PAUSE): when the input ends while a callback
 * holds the parser paused, nothing is fed or finished until the application
 * resumes; the end's status is never JFR_PAUSED. A callback pauses at every
 * event from the 540th on; a 2 ms timer resumes; the input ends at the first
 * pause (the listener is stopped, the tail is stopped). Every event must
 * arrive, none while held, and the end come after the last one. */
#define PZ_FROM 540 /* of the fixture's 596 events */
typedef struct pz {
    uint64_t events, resumes;
    bool waiting, stop_now, stopped, ended;
    bool poll; /* a tail resumed by its own poll: held only until then */
    jfr_status status;
    int why;
    uint64_t events_at_end;
    jfr_uv_listener *l;
    jfr_uv_conn *c;
    jfr_uv_tail *t;
    uv_timer_t timer;
} pz;
static pz g_pz;

static int pz_event(jfr_parser *p, const jfr_event *e, void *u) {
    (void)p;
    (void)e;
    (void)u;
    CHECK(g_pz.poll || !g_pz.waiting); /* nothing may arrive while held */
    CHECK(!g_pz.ended);
    if (++g_pz.events < PZ_FROM)
        return JFR_CB_CONTINUE;
    if (!g_pz.stopped)
        g_pz.stop_now = true;
    g_pz.waiting = true;
    return JFR_CB_PAUSE;
}

static void pz_tick(uv_timer_t *t) {
    (void)t;
    if (g_pz.stop_now) { /* the input ends while held */
        g_pz.stop_now = false;
        g_pz.stopped = true;
        if (g_pz.l)
            jfr_uv_listener_stop(g_pz.l);
        else
            jfr_uv_tail_stop(g_pz.t);
        CHECK(!g_pz.ended); /* waits for the resume */
        return;
    }
    if (g_pz.waiting && !g_pz.ended && !g_pz.poll) {
        g_pz.waiting = false;
        g_pz.resumes++;
        if (g_pz.l)
            jfr_uv_conn_resume(g_pz.c);
        else
            jfr_uv_tail_resume(g_pz.t);
    }
}

static void pz_conn_start(jfr_uv_conn *c, void *user) {
    (void)user;
    g_pz.c = c;
}

static void pz_conn_end(jfr_uv_conn *c, jfr_status s, const char *msg, void *user) {
    (void)c;
    (void)user;
    printf("  paused connection ended: %s (%s)\n", jfr_status_name(s), msg);
    g_pz.ended = true;
    g_pz.status = s;
    g_pz.events_at_end = g_pz.events;
}

static void pz_listener_end(jfr_uv_listener *l, void *user) {
    (void)l;
    (void)user;
    uv_close((uv_handle_t *)&g_pz.timer, NULL);
}

static void test_listener_pause_at_end(void) {
    memset(&g_pz, 0, sizeof g_pz);
    uv_loop_t loop;
    uv_loop_init(&loop);
    jfr_uv_listener_config cfg = JFR_UV_LISTENER_CONFIG_INIT;
    jfr_callbacks cb = {.size = sizeof cb, .on_event = pz_event};
    cfg.callbacks = &cb;
    cfg.on_conn_start = pz_conn_start;
    cfg.on_conn_end = pz_conn_end;
    cfg.on_end = pz_listener_end;
    CHECK(jfr_uv_listener_start(&loop, &cfg, &g_pz.l, NULL) == JFR_OK);
    uv_timer_init(&loop, &g_pz.timer);
    uv_timer_start(&g_pz.timer, pz_tick, 2, 2);
    start_client(&loop, jfr_uv_listener_port(g_pz.l), g_fix, g_len, 7);
    uvpeer_run(&loop, &g_deadline, 60000);
    printf("listener stopped while a connection was paused: %llu events (want %llu), %llu "
           "resumes, ended %s with %llu events\n",
           (unsigned long long)g_pz.events, (unsigned long long)g_events,
           (unsigned long long)g_pz.resumes, jfr_status_name(g_pz.status),
           (unsigned long long)g_pz.events_at_end);
    CHECK(g_pz.stopped && g_pz.ended && g_pz.status == JFR_OK);
    CHECK(g_pz.events == g_events && g_pz.events_at_end == g_events);
    CHECK(g_pz.resumes >= g_events - PZ_FROM);
    uvpeer_loop_close(&loop, &g_deadline);
}

static void pz_tail_end(jfr_uv_tail *t, jfr_uv_tail_end why, jfr_status s, const char *msg,
                        void *user) {
    (void)t;
    (void)user;
    printf("  paused tail ended: why=%d %s (%s)\n", (int)why, jfr_status_name(s), msg);
    g_pz.ended = true;
    g_pz.status = s;
    g_pz.why = (int)why;
    g_pz.events_at_end = g_pz.events;
    uv_close((uv_handle_t *)&g_pz.timer, NULL);
}

static void test_tail_pause_at_end(bool manual) {
    memset(&g_pz, 0, sizeof g_pz);
    g_pz.poll = !manual;
    char dir[] = "/tmp/jfrstream-tail-pz-XXXXXX", path[300];
    CHECK(mkdtemp(dir) != NULL);
    snprintf(path, sizeof path, "%s/2026_11_21_10_00_00.jfr", dir);
    uint8_t *nf = malloc(g_len); /* not final: only the stop ends the tail */
    memcpy(nf, g_fix, g_len);
    nf[67] &= (uint8_t)~0x02;
    write_at(path, nf, g_len, 0);
    uv_loop_t loop;
    uv_loop_init(&loop);
    jfr_uv_tail_config cfg = JFR_UV_TAIL_CONFIG_INIT;
    jfr_callbacks cb = {.size = sizeof cb, .on_event = pz_event};
    cfg.path = dir;
    cfg.callbacks = &cb;
    cfg.poll_ms = manual ? 50 : 3;
    cfg.manual_resume = manual;
    cfg.on_end = pz_tail_end;
    CHECK(jfr_uv_tail_start(&loop, &cfg, &g_pz.t, NULL) == JFR_OK);
    uv_timer_init(&loop, &g_pz.timer);
    uv_timer_start(&g_pz.timer, pz_tick, 2, 2);
    uvpeer_run(&loop, &g_deadline, 60000);
    printf("tail (%s resume) stopped while paused: %llu events (want %llu), ended why=%d %s "
           "with %llu events\n",
           manual ? "manual" : "poll", (unsigned long long)g_pz.events,
           (unsigned long long)g_events, g_pz.why, jfr_status_name(g_pz.status),
           (unsigned long long)g_pz.events_at_end);
    CHECK(g_pz.stopped && g_pz.ended && g_pz.why == JFR_UV_TAIL_STOPPED);
    CHECK(g_pz.status == JFR_OK && g_pz.events_at_end == g_events);
    uvpeer_loop_close(&loop, &g_deadline);
    unlink(path);
    rmdir(dir);
    free(nf);
}

/* --------------------------------------------- sized structs, NULL checks
 *
 * An older caller's config (smaller size: what lies after it in its memory
 * is not the library's) and a newer caller's (bigger size, extra bytes
 * zero) both start and work; NULL and uninitialised arguments are refused
 * as jfrstream_uv.h says, and NULL handles are harmless. */
static uint64_t g_sz_events;
static jfr_status g_sz_status;
static bool g_sz_ended, g_sz_l_ended; /* the peer's end; the listener's on_end */
static jfr_uv_listener *g_sz_l;

static int sz_event(jfr_parser *p, const jfr_event *e, void *u) {
    (void)p;
    (void)e;
    (void)u;
    g_sz_events++;
    return JFR_CB_CONTINUE;
}
/* the tail's: pauses every 50th event; only a poll may resume it */
static int sz_tail_event(jfr_parser *p, const jfr_event *e, void *u) {
    (void)p;
    (void)e;
    (void)u;
    return ++g_sz_events % 50 == 0 ? JFR_CB_PAUSE : JFR_CB_CONTINUE;
}
static void sz_conn_end(jfr_uv_conn *c, jfr_status s, const char *msg, void *user) {
    (void)c;
    (void)msg;
    (void)user;
    g_sz_status = s;
    g_sz_ended = true;
    jfr_uv_listener_stop(g_sz_l);
}
static void sz_listener_end(jfr_uv_listener *l, void *user) {
    (void)l;
    (void)user;
    g_sz_l_ended = true;
}
static void sz_tail_end(jfr_uv_tail *t, jfr_uv_tail_end why, jfr_status s, const char *msg,
                        void *user) {
    (void)t;
    (void)msg;
    (void)user;
    g_sz_status = why == JFR_UV_TAIL_FINAL ? s : JFR_INVALID_STATE;
    g_sz_ended = true;
}

/* Serve one peer sending the fixture with `cfg`; true when it came through. */
static bool sz_listen(const jfr_uv_listener_config *cfg) {
    uv_loop_t loop;
    uv_loop_init(&loop);
    g_sz_events = 0;
    g_sz_ended = g_sz_l_ended = false;
    jfr_status st = jfr_uv_listener_start(&loop, cfg, &g_sz_l, NULL);
    CHECK(st == JFR_OK);
    if (st != JFR_OK) {
        uv_run(&loop, UV_RUN_DEFAULT);
        uv_loop_close(&loop);
        return false;
    }
    start_client(&loop, jfr_uv_listener_port(g_sz_l), g_fix, g_len, 3);
    uvpeer_run(&loop, &g_deadline, 20000);
    uvpeer_loop_close(&loop, &g_deadline);
    return g_sz_ended && g_sz_l_ended && g_sz_status == JFR_OK && g_sz_events == g_events;
}

static bool sz_tail(const jfr_uv_tail_config *cfg) {
    uv_loop_t loop;
    uv_loop_init(&loop);
    g_sz_events = 0;
    g_sz_ended = false;
    jfr_uv_tail *t;
    jfr_status st = jfr_uv_tail_start(&loop, cfg, &t, NULL);
    CHECK(st == JFR_OK);
    if (st != JFR_OK) {
        uv_loop_close(&loop);
        return false;
    }
    uvpeer_run(&loop, &g_deadline, 5000);
    if (!g_sz_ended) { /* held for good: a manual_resume read from beyond size */
        jfr_uv_tail_stop(t);
        jfr_uv_tail_resume(t);
    }
    uvpeer_loop_close(&loop, &g_deadline);
    return g_sz_ended && g_sz_status == JFR_OK && g_sz_events == g_events;
}

static void test_sized(void) {
    jfr_callbacks cb = {.size = sizeof cb, .on_event = sz_event};
    jfr_uv_listener_config base = JFR_UV_LISTENER_CONFIG_INIT;
    base.callbacks = &cb;
    base.on_conn_end = sz_conn_end;
    base.on_end = sz_listener_end;
    /* older caller: its struct ends before max_connections; the bytes after
     * it are its own (0xA5...: read_buffer would be 12 EB, start NOMEM) */
    SIZED_BUF(jfr_uv_listener_config) older, newer;
    size_t old_size = offsetof(jfr_uv_listener_config, max_connections);
    bool l_old = sz_listen(sized_older(&older, &base, sizeof base, old_size, 0xA5));
    /* newer caller: 64 more bytes, zero */
    newer.c = base;
    bool l_new = sz_listen(sized_newer(&newer, sizeof newer.c));

    char dir[] = "/tmp/jfrstream-tail-sz-XXXXXX", path[300];
    CHECK(mkdtemp(dir) != NULL);
    snprintf(path, sizeof path, "%s/2026_11_21_10_00_00.jfr", dir);
    write_at(path, g_fix, g_len, 0); /* final: ends the tail */
    jfr_callbacks tcb = {.size = sizeof tcb, .on_event = sz_tail_event};
    jfr_uv_tail_config tbase = JFR_UV_TAIL_CONFIG_INIT;
    tbase.path = dir;
    tbase.callbacks = &tcb;
    tbase.poll_ms = 2;
    tbase.on_end = sz_tail_end;
    /* older caller: no manual_resume member (the byte after is 1: read, it
     * would hold the tail at the first pause for good) */
    SIZED_BUF(jfr_uv_tail_config) told, tnew;
    size_t told_size = offsetof(jfr_uv_tail_config, manual_resume);
    bool t_old = sz_tail(sized_older(&told, &tbase, sizeof tbase, told_size, 1));
    tnew.c = tbase;
    bool t_new = sz_tail(sized_newer(&tnew, sizeof tnew.c));
    unlink(path);
    rmdir(dir);
    printf("sized structs: listener config older (%zu of %zu bytes) %s, newer (%zu bytes) %s; "
           "tail config older (%zu of %zu bytes) %s, newer (%zu bytes) %s\n",
           old_size, sizeof base, l_old ? "ok" : "FAILED", sizeof newer, l_new ? "ok" : "FAILED",
           told_size, sizeof tbase, t_old ? "ok" : "FAILED", sizeof tnew,
           t_new ? "ok" : "FAILED");
    CHECK(l_old && l_new && t_old && t_new);

    /* NULL and uninitialised arguments */
    uv_loop_t loop;
    uv_loop_init(&loop);
    jfr_uv_listener *l = NULL;
    jfr_uv_tail *t = NULL;
    int e = 1;
    CHECK(jfr_uv_listener_start(NULL, &base, &l, &e) == JFR_INVALID_ARG && e == 0 && !l);
    CHECK(jfr_uv_listener_start(&loop, NULL, &l, NULL) == JFR_INVALID_ARG && !l);
    CHECK(jfr_uv_listener_start(&loop, &base, NULL, NULL) == JFR_INVALID_ARG);
    jfr_uv_listener_config bad = base;
    jfr_options zero_opts = {0};
    jfr_callbacks zero_cb = {0};
    bad.options = &zero_opts;
    CHECK(jfr_uv_listener_start(&loop, &bad, &l, NULL) == JFR_INVALID_ARG && !l);
    bad = base;
    bad.callbacks = &zero_cb;
    CHECK(jfr_uv_listener_start(&loop, &bad, &l, NULL) == JFR_INVALID_ARG && !l);
    CHECK(jfr_uv_tail_start(NULL, &tbase, &t, NULL) == JFR_INVALID_ARG && !t);
    CHECK(jfr_uv_tail_start(&loop, NULL, &t, NULL) == JFR_INVALID_ARG && !t);
    CHECK(jfr_uv_tail_start(&loop, &tbase, NULL, NULL) == JFR_INVALID_ARG);
    jfr_uv_tail_config tbad = tbase;
    tbad.path = NULL;
    CHECK(jfr_uv_tail_start(&loop, &tbad, &t, NULL) == JFR_INVALID_ARG && !t);
    tbad = tbase;
    tbad.size = 0;
    CHECK(jfr_uv_tail_start(&loop, &tbad, &t, NULL) == JFR_INVALID_ARG && !t);
    tbad = tbase;
    tbad.options = &zero_opts;
    CHECK(jfr_uv_tail_start(&loop, &tbad, &t, NULL) == JFR_INVALID_ARG && !t);
    CHECK(jfr_uv_listener_port(NULL) == 0 && jfr_uv_listener_connections(NULL) == 0 &&
          jfr_uv_listener_peak(NULL) == 0 && jfr_uv_listener_refused(NULL) == 0);
    CHECK(jfr_uv_conn_parser(NULL) == NULL && jfr_uv_conn_listener(NULL) == NULL &&
          strcmp(jfr_uv_conn_peer(NULL), "") == 0 && jfr_uv_conn_id(NULL) == 0 &&
          jfr_uv_conn_bytes(NULL) == 0);
    CHECK(jfr_uv_tail_parser(NULL) == NULL && strcmp(jfr_uv_tail_file(NULL), "") == 0);
    jfr_uv_listener_stop(NULL);
    jfr_uv_conn_stop(NULL);
    jfr_uv_conn_end(NULL, JFR_IO, "x");
    jfr_uv_conn_ack(NULL, 1);
    CHECK(!jfr_uv_conn_acks(NULL) && jfr_uv_conn_acked(NULL) == 0);
    jfr_uv_conn_resume(NULL);
    jfr_uv_tail_stop(NULL);
    jfr_uv_tail_resume(NULL);
    char name[64];
    CHECK(jfr_uv_repo_next(NULL, "/tmp", "", name, sizeof name) == UV_EINVAL);
    CHECK(jfr_uv_repo_newest(&loop, NULL, "", name, sizeof name) == UV_EINVAL);
    CHECK(jfr_uv_repo_bytes(&loop, NULL) == -1);
    CHECK(uv_loop_close(&loop) == 0);
    printf("NULL and uninitialised arguments: refused (JFR_INVALID_ARG); NULL handles: no-ops\n");
}

/* ------------------------------------------------------ repository scanning
 *
 * jfr_uv_repo_*: a parent folder holding an empty JVM folder (JDK 17's
 * first one, the newest by name) and one with two chunk files and a file
 * that is not one: the JVM folder with chunks is the newest, its files come
 * in name order, the bytes are theirs; a tail of the parent follows that
 * folder (the empty one is never chosen). */
static void test_repo_scan(void) {
    char parent[] = "/tmp/jfrstream-repo-XXXXXX", jvm[300], empty[300], path[400];
    CHECK(mkdtemp(parent) != NULL);
    snprintf(jvm, sizeof jvm, "%s/2026_11_21_10_00_00_1", parent);
    snprintf(empty, sizeof empty, "%s/2026_11_21_10_00_05_2", parent);
    CHECK(mkdir(jvm, 0700) == 0 && mkdir(empty, 0700) == 0);
    const char *files[] = {"2026_11_21_10_00_00.jfr", "2026_11_21_10_00_01.jfr", "notes.txt"};
    for (int i = 0; i < 3; i++) {
        snprintf(path, sizeof path, "%s/%s", jvm, files[i]);
        uint8_t *b = malloc(g_len);
        memcpy(b, g_fix, g_len);
        if (i == 0)
            b[67] &= (uint8_t)~0x02; /* the first chunk not final */
        write_at(path, b, i == 2 ? 100 : g_len, 0);
        free(b);
    }
    uv_loop_t loop;
    uv_loop_init(&loop);
    char name[256], tiny[8];
    CHECK(jfr_uv_repo_newest(&loop, parent, "", name, sizeof name) == 1 &&
          strcmp(name, "2026_11_21_10_00_00_1") == 0);
    CHECK(jfr_uv_repo_newest(&loop, parent, "2026_11_21_10_00_00_1", name, sizeof name) == 0);
    CHECK(jfr_uv_repo_next(&loop, parent, "", name, sizeof name) == 0);
    CHECK(jfr_uv_repo_next(&loop, jvm, NULL, name, sizeof name) == 1 &&
          strcmp(name, files[0]) == 0);
    CHECK(jfr_uv_repo_next(&loop, jvm, files[0], name, sizeof name) == 1 &&
          strcmp(name, files[1]) == 0);
    CHECK(jfr_uv_repo_next(&loop, jvm, files[1], name, sizeof name) == 0);
    CHECK(jfr_uv_repo_next(&loop, jvm, "", tiny, sizeof tiny) == 0); /* names too long */
    CHECK(jfr_uv_repo_next(&loop, "/nonexistent/jfrstream", "", name, sizeof name) == UV_ENOENT);
    CHECK(jfr_uv_repo_bytes(&loop, parent) == (int64_t)(2 * g_len));
    CHECK(jfr_uv_repo_bytes(&loop, jvm) == (int64_t)(2 * g_len));
    CHECK(jfr_uv_repo_bytes(&loop, empty) == -1);
    snprintf(path, sizeof path, "%s/%s", jvm, files[2]);
    CHECK(jfr_uv_repo_bytes(&loop, path) == 100);
    CHECK(jfr_uv_repo_bytes(&loop, "/nonexistent/jfrstream") == -1);
    CHECK(uv_loop_close(&loop) == 0);
    /* the tail of the parent: both chunks of the JVM folder, then final */
    memset(&g_te, 0, sizeof g_te);
    run_tail_alone(parent, 0, false);
    printf("repository scan: the JVM folder with chunk files chosen over a newer empty one, "
           "2 chunk files in order, %lld bytes; tail of the parent: why=%d %s, %llu events "
           "(want %llu), last file %s\n",
           (long long)(2 * g_len), (int)g_te.why, jfr_status_name(g_te.status),
           (unsigned long long)g_te.events, (unsigned long long)(2 * g_events),
           strrchr(g_te.file, '/') ? strrchr(g_te.file, '/') + 1 : g_te.file);
    CHECK(g_te.why == JFR_UV_TAIL_FINAL && g_te.events == 2 * g_events);
    CHECK(strstr(g_te.file, "_00_00_1/2026_11_21_10_00_01.jfr") != NULL);
    for (int i = 0; i < 3; i++) {
        snprintf(path, sizeof path, "%s/%s", jvm, files[i]);
        unlink(path);
    }
    rmdir(jvm);
    rmdir(empty);
    rmdir(parent);
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IONBF, 0);
    /* one chunk only; the live-shaped copy (the JMX live stream's rewritten
     * header: size 68, offsets 0, state 1) is the fixture's first chunk */
    if (argc < 2 || !(g_fix = uvpeer_fixture(argv[1], &g_len, &g_events)) ||
        !(g_live = as_live(g_fix, g_len))) {
        fprintf(stderr, "usage: test_uv FIXTURE.jfr\n");
        return 2;
    }
    test_listener();
    test_listener_turns();
    test_tail();
    test_tail_ends();
    test_tail_manual_resume();
    test_listener_pause_at_end();
    test_tail_pause_at_end(true);
    test_tail_pause_at_end(false);
    test_sized();
    test_repo_scan();
    free(g_fix);
    free(g_live);
    printf("%d failed checks\n", g_failures);
    return g_failures ? 1 : 0;
}
