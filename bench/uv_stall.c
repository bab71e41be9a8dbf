/*
 * uv_stall.c — the worst stall of the libuv loop that serves a listener and
 * a repository tail, while the tail replays 64 chunk files already on disk.
 *
 *   uv_stall [--files N] [--conns N] FIXTURE.jfr
 *
 * On one loop: jfr_uv_tail of a folder holding N copies of FIXTURE's first
 * chunk (the last one final: the tail ends there), a jfr_uv_listener served
 * by `conns` loopback clients each sending FIXTURE every 20 ms until the
 * tail ends, and a 1 ms repeating timer. The clients stream alone for
 * 300 ms, then the tail starts. The gap between two ticks of that timer is
 * how long the loop was kept from anything else (a scrape of the metrics
 * endpoint, a peer's bytes): the worst gap and the 99th percentile are
 * printed for the listener alone and during the replay, with the replay's
 * time and MB/s and the bytes the listener parsed.
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#define _POSIX_C_SOURCE 200809L
#define UVPEER_NAME "uv_stall"
#include "../test/uv/uvpeer.h" /* the fixture, the loopback peers */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_CONNS 16
#define MAX_TICKS (1u << 20)
#define WARMUP_MS 300
#define PACE_MS 20

static uint8_t *g_fix;
static size_t g_len;
static uint64_t *g_gaps, *g_cpu; /* wall and CPU time between ticks */
static size_t g_ngaps;
static uint64_t g_last_tick, g_last_cpu, g_tail_events, g_tail_ns, g_listen_bytes;
static bool g_done;
static uv_timer_t g_tick;
static jfr_uv_listener *g_listener;

typedef struct client {
    uvpeer peer;     /* FIXTURE in one write, again and again */
    uv_timer_t pace; /* one FIXTURE every PACE_MS */
} client;
static client g_cl[MAX_CONNS];
static int g_ncl;

/* CPU time of this thread (the loop's): a gap in it is work the loop did
 * between two ticks, whatever else the machine runs (wall-clock gaps also
 * count the time the scheduler gave to other processes). */
static uint64_t cpu_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void on_tick(uv_timer_t *t) {
    uint64_t now = uv_hrtime(), cpu = cpu_ns();
    if (g_last_tick && g_ngaps < MAX_TICKS) {
        g_gaps[g_ngaps] = now - g_last_tick;
        g_cpu[g_ngaps++] = cpu - g_last_cpu;
    }
    g_last_tick = now;
    g_last_cpu = cpu;
    (void)t;
}

static void send_fixture(uvpeer *p) {
    p->sent = 0;
    uvpeer_send(p, p->len);
}

static void on_pace(uv_timer_t *tm) {
    client *c = tm->data;
    if (!g_done)
        send_fixture(&c->peer);
}

static void on_written(uvpeer *p, int status) {
    client *c = p->user;
    if (status == 0 && !g_done)
        uv_timer_start(&c->pace, on_pace, PACE_MS, 0);
    else
        uvpeer_close(p);
}

static void on_connect(uvpeer *p) {
    if (!g_done)
        send_fixture(p);
    else
        uvpeer_close(p);
}

static void on_conn_end(jfr_uv_conn *c, jfr_status s, const char *msg, void *user) {
    (void)s;
    (void)msg;
    (void)user;
    jfr_parser *p = jfr_uv_conn_parser(c);
    if (p)
        g_listen_bytes += jfr_parser_bytes(p);
}

static void on_tail_end(jfr_uv_tail *t, jfr_uv_tail_end why, jfr_status s, const char *msg,
                        void *user) {
    (void)t;
    (void)user;
    g_tail_ns = uv_hrtime() - *(uint64_t *)user;
    if (why != JFR_UV_TAIL_FINAL)
        fprintf(stderr, "uv_stall: the tail ended early: %s (%s)\n", jfr_status_name(s), msg);
    g_done = true;
    on_tick(&g_tick); /* the gap that ends here */
    uv_timer_stop(&g_tick);
    uv_close((uv_handle_t *)&g_tick, NULL);
    jfr_uv_listener_stop(g_listener);
    for (int i = 0; i < g_ncl; i++) { /* a pending write is cancelled */
        uvpeer_close(&g_cl[i].peer);
        uv_close((uv_handle_t *)&g_cl[i].pace, NULL);
    }
}


static uint64_t g_t0;   /* the tail started */
static size_t g_nbase; /* gaps before the tail started */

static void on_start(uv_timer_t *tm) {
    jfr_uv_tail *t;
    g_nbase = g_ngaps;
    g_t0 = uv_hrtime();
    if (jfr_uv_tail_start(tm->loop, tm->data, &t, NULL) != JFR_OK) {
        fprintf(stderr, "uv_stall: cannot start the tail\n");
        exit(1);
    }
    t->data = &g_tail_events;
    uv_close((uv_handle_t *)tm, NULL);
}

static int cmp_u64(const void *a, const void *b);

/* Worst and 99th percentile of the gaps [from, to), wall clock and CPU. */
static void report(const char *what, size_t from, size_t to) {
    size_t n = to - from;
    qsort(g_gaps + from, n, sizeof *g_gaps, cmp_u64);
    qsort(g_cpu + from, n, sizeof *g_cpu, cmp_u64);
    printf("uv_stall: %s: %zu ticks of a 1 ms timer; gap between ticks: worst %.1f ms, p99 "
           "%.1f ms (wall clock); worst %.1f ms, p99 %.1f ms (the loop's CPU time)\n",
           what, n, n ? (double)g_gaps[to - 1] / 1e6 : 0,
           n ? (double)g_gaps[from + n * 99 / 100] / 1e6 : 0, n ? (double)g_cpu[to - 1] / 1e6 : 0,
           n ? (double)g_cpu[from + n * 99 / 100] / 1e6 : 0);
}

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
    int files = 64, a = 1;
    g_ncl = 4;
    for (; a + 1 < argc && argv[a][0] == '-'; a += 2) {
        if (strcmp(argv[a], "--files") == 0)
            files = atoi(argv[a + 1]);
        else if (strcmp(argv[a], "--conns") == 0)
            g_ncl = atoi(argv[a + 1]);
        else
            break;
    }
    /* the first chunk only */
    if (a >= argc || files < 1 || g_ncl < 0 || g_ncl > MAX_CONNS ||
        !(g_fix = uvpeer_fixture(argv[a], &g_len, NULL))) {
        fprintf(stderr, "usage: uv_stall [--files N] [--conns N<=%d] FIXTURE.jfr\n", MAX_CONNS);
        return 2;
    }

    char dir[] = "/tmp/jfrstream-uv-stall-XXXXXX";
    if (!mkdtemp(dir))
        return 1;
    for (int i = 0; i < files; i++) {
        char path[128];
        snprintf(path, sizeof path, "%s/2026_11_28_12_%02d_%02d.jfr", dir, i / 60, i % 60);
        uint8_t flags = g_fix[67];
        g_fix[67] = i == files - 1 ? (uint8_t)(flags | 0x02) : (uint8_t)(flags & ~0x02);
        FILE *o = fopen(path, "wb");
        if (!o || fwrite(g_fix, 1, g_len, o) != g_len)
            return 1;
        fclose(o);
        g_fix[67] = flags;
    }
    g_fix[67] &= (uint8_t)~0x02; /* the clients send non-final chunks */
    g_gaps = malloc(MAX_TICKS * sizeof *g_gaps);
    g_cpu = malloc(MAX_TICKS * sizeof *g_cpu);

    uv_loop_t loop;
    uv_loop_init(&loop);
    jfr_uv_listener_config lc = JFR_UV_LISTENER_CONFIG_INIT;
    lc.on_conn_end = on_conn_end;
    if (jfr_uv_listener_start(&loop, &lc, &g_listener, NULL) != JFR_OK)
        return 1;
    for (int i = 0; i < g_ncl; i++) {
        client *c = &g_cl[i];
        uv_timer_init(&loop, &c->pace);
        c->pace.data = c;
        c->peer.on_connect = on_connect;
        c->peer.on_written = on_written;
        c->peer.user = c;
        uvpeer_start(&c->peer, &loop, jfr_uv_listener_port(g_listener), g_fix, g_len);
    }
    /* the clients stream alone for WARMUP_MS (the baseline), then the tail
     * starts */
    uv_timer_init(&loop, &g_tick);
    uv_timer_start(&g_tick, on_tick, 1, 1);
    uv_timer_t start;
    uv_timer_init(&loop, &start);
    jfr_uv_tail_config tc = JFR_UV_TAIL_CONFIG_INIT;
    jfr_callbacks cb = {.size = sizeof cb, .on_event = uvpeer_count_tail_event};
    tc.path = dir;
    tc.callbacks = &cb;
    tc.on_end = on_tail_end;
    tc.user = &g_t0;
    start.data = &tc;
    uv_timer_start(&start, on_start, WARMUP_MS, 0);
    uv_run(&loop, UV_RUN_DEFAULT);
    uv_loop_close(&loop);

    double mb = (double)g_len * files / 1e6, s = (double)g_tail_ns / 1e9;
    printf("uv_stall: %d files (%.1f MB, %llu events) replayed in %.0f ms (%.0f MB/s) beside "
           "%d streaming peers (%.1f MB parsed in all)\n",
           files, mb, (unsigned long long)g_tail_events, s * 1e3, s > 0 ? mb / s : 0, g_ncl,
           (double)g_listen_bytes / 1e6);
    report("listener alone", 0, g_nbase);
    report("during the replay", g_nbase, g_ngaps);
    for (int i = 0; i < files; i++) {
        char path[128];
        snprintf(path, sizeof path, "%s/2026_11_28_12_%02d_%02d.jfr", dir, i / 60, i % 60);
        unlink(path);
    }
    rmdir(dir);
    free(g_gaps);
    free(g_cpu);
    free(g_fix);
    return 0;
}
