/*
 * test_robust.c — robustness tests of the jfrstream parser, through the public
 * API only (include/jfrstream.h).
 *
 *   test_robust [--quick] [--budget SECONDS] FILE.jfr
 *
 * FILE is a good recording (the committed fixture test/data/workload.jfr).
 * Every parse runs with callbacks that read everything: the metadata (every
 * type, field, annotation, attribute, setting) and every field of every event,
 * recursively (depth-limited), through jfr_iter, random access
 * (jfr_value_field / jfr_value_index), and the helpers (thread, stack, frames,
 * class names, methods), so that decode paths are exercised on damaged input too
 * (test/walk.h, the engine the harness and the fuzz targets share, hashing
 * everything it reads).
 * All memory goes through a counting allocator that checks the sizes given to
 * free/realloc, the peak, and that everything is freed by jfr_parser_free.
 *
 * Sections:
 *   baseline     whole-buffer parse: OK, events > 0; the same callback/value
 *                hash when fed 1 byte at a time, in 4096-byte slices, in random
 *                slices, with PAUSE every few events, and after jfr_parser_reset;
 *                random-access reads agree with iteration.
 *   stop         a callback returning STOP: feed returns JFR_STOPPED, and keeps
 *                returning it.
 *   truncate     every prefix length in the first 64 KiB, then a stride: finish
 *                must report JFR_TRUNCATED (never OK, never a crash); prefixes
 *                that end on a chunk boundary of a 2-chunk input are OK.
 *   shortened    the header's chunk size set to L and the input cut at L
 *                (records cut inside a "complete" chunk): any clean error.
 *   bitflip      random bit flips and byte overwrites (fixed seeds), fed whole or
 *                in random slices: no crash, no hang (alarm), and an error
 *                message that names the chunk and an offset.
 *   headers      hostile headers: sizes 0, -1, INT64_MIN, 2^63-1, 67, 68, larger
 *                than max_chunk_size (JFR_CHUNK_TOO_LARGE with a small peak
 *                allocation), a 512 MiB declared size with few bytes (no
 *                allocation from the declared size), bad magic, bad version,
 *                offsets out of range; versions: 1.0, 1.7, 2.9 read (the
 *                baseline's events, the version passed on), 0.9, 3.0, 9.0 and
 *                65535.65535 refused with BAD_VERSION naming the version.
 *   nomem        allocation failures at many points: clean JFR_NOMEM (or NULL
 *                parser), nothing leaked.
 *   resync       good + damaged + good chunk with on_error returning CONTINUE:
 *                the events of both good chunks are delivered; with STOP, the
 *                parse stops at the damaged chunk.
 *
 * Exit status: 0 all passed, 1 failures, 2 usage, 77 FILE missing (skip).
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include "../harness.h"
#include "../walk.h"
#include "jfrstream.h"

#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* ---------------------------------------------------------------- helpers */

static int failures;
static int section_failures;
static const char *section = "";

static void begin_section(const char *name)
{
    section = name;
    section_failures = 0;
}

/* Each distinct failure (digits ignored) is shown twice at most, and counted;
 * main() prints the counts at the end. */
#define MAX_SHAPES 64
static struct {
    char text[160];
    int count;
} shapes[MAX_SHAPES];
static int nshapes;

static void fail(const char *fmt, ...)
{
    char msg[600], shape[160];
    va_list ap;
    failures++;
    section_failures++;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    size_t k = (size_t)snprintf(shape, sizeof shape, "[%s] ", section);
    for (const char *m = msg; *m && k + 1 < sizeof shape; m++) {
        if (*m >= '0' && *m <= '9') {
            if (k == 0 || shape[k - 1] != 'N')
                shape[k++] = 'N';
        } else {
            shape[k++] = *m;
        }
    }
    shape[k] = 0;
    int i;
    for (i = 0; i < nshapes; i++)
        if (!strcmp(shapes[i].text, shape))
            break;
    if (i == nshapes && nshapes < MAX_SHAPES) {
        snprintf(shapes[i].text, sizeof shapes[i].text, "%s", shape);
        nshapes++;
    }
    int seen = i < MAX_SHAPES ? ++shapes[i].count : 99;
    if (seen <= 2)
        fprintf(stderr, "FAIL [%s]: %s\n", section, msg);
}

static void print_failure_shapes(void)
{
    if (!nshapes)
        return;
    fprintf(stderr, "failures by kind (digits shown as N):\n");
    for (int i = 0; i < nshapes; i++)
        fprintf(stderr, "  %6d  %s\n", shapes[i].count, shapes[i].text);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint64_t rng_state;
static uint64_t rnd(void)
{ /* xorshift64* */
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 2685821657736338717ULL;
}
static void seed(uint64_t s) { rng_state = s * 0x9E3779B97F4A7C15ULL + 1; }

static void put_be64(uint8_t *p, int64_t v)
{
    uint64_t u = (uint64_t)v;
    for (int i = 7; i >= 0; i--) {
        p[i] = (uint8_t)u;
        u >>= 8;
    }
}

static int64_t get_be64(const uint8_t *p)
{
    uint64_t u = 0;
    for (int i = 0; i < 8; i++)
        u = u << 8 | p[i];
    return (int64_t)u;
}

/* Current iteration, printed when the alarm fires (a hang). */
static char current_case[256];
static void on_alarm(int sig)
{
    (void)sig;
    static const char msg[] = "FAIL: timeout (hang?) in case: ";
    ssize_t r = write(2, msg, sizeof msg - 1);
    r = write(2, current_case, strlen(current_case));
    r = write(2, "\n", 1);
    (void)r;
    _exit(1);
}

/* -------------------------------------------------------------- allocator */

/* The counting allocator of harness.h (sizes checked, peak, fail_at). */
typedef talloc counter;

/* ------------------------------------------------------ reading everything */

typedef struct run {
    jwalk w;                  /* the reading (test/walk.h): hash, values, decode errors */
    uint64_t events, records, chunks_begun, chunks_ended, metadata, errors_cb;
    uint64_t events_in_copy[4];   /* by event offset / copy_len (see resync) */
    int on_error_ret;         /* what on_error returns */
    uint64_t pause_every;     /* return PAUSE every n-th event (0: never) */
    uint64_t stop_at;         /* return STOP at this event number (0: never) */
    int error_msg_ok;         /* every on_error message named chunk + offset */
    char last_cb_msg[256];
    uint16_t major0, minor0;  /* chunk 0's version */
} run;

static size_t copy_len; /* inputs made of copies of the file: its length */
static uint64_t baseline_events;
static uint64_t baseline_hash;
static char some_type[256]; /* an event type of the file, for jfr_parser_on */

static void walk_fail(jwalk *w, const char *message)
{
    (void)w;
    fail("%s", message);
}

static int message_names_chunk(const char *m)
{
    if (!m || !strstr(m, "chunk"))
        return 0;
    for (; *m; m++)
        if (*m >= '0' && *m <= '9')
            return 1;
    return 0;
}

static int cb_metadata(jfr_parser *p, const jfr_metadata *m, void *user)
{
    run *r = user;
    (void)p;
    r->metadata++;
    jwalk_metadata(&r->w, m);
    return JFR_CB_CONTINUE;
}

static int cb_chunk_begin(jfr_parser *p, const jfr_chunk_info *c, void *user)
{
    run *r = user;
    (void)p;
    r->chunks_begun++;
    jw_mix_u64(&r->w, c->index);
    jw_mix_u64(&r->w, c->offset);
    jw_mix_u64(&r->w, (uint64_t)c->size);
    jw_mix_u64(&r->w, c->major << 16 | c->minor);
    if (c->index == 0) {
        r->major0 = c->major;
        r->minor0 = c->minor;
    }
    return JFR_CB_CONTINUE;
}

static int cb_chunk_end(jfr_parser *p, const jfr_chunk_info *c, void *user)
{
    run *r = user;
    (void)p;
    r->chunks_ended++;
    jw_mix_u64(&r->w, c->index ^ 0xe4d);
    return JFR_CB_CONTINUE;
}

/* Records of the first chunk (from the baseline run), for test_shortened. */
static uint64_t rec_off[1 << 16], rec_type[1 << 16];
static size_t nrec;
static int collect_records;

static int cb_record(jfr_parser *p, const jfr_record *rec, void *user)
{
    run *r = user;
    (void)p;
    r->records++;
    if (collect_records && rec->chunk_index == 0 && nrec < sizeof rec_off / sizeof rec_off[0]) {
        rec_off[nrec] = rec->offset;
        rec_type[nrec++] = rec->type_id;
    }
    jw_mix_u64(&r->w, rec->offset);
    jw_mix_u64(&r->w, rec->size);
    jw_mix_u64(&r->w, rec->type_id);
    return JFR_CB_CONTINUE;
}

static int cb_event(jfr_parser *p, const jfr_event *e, void *user)
{
    run *r = user;
    (void)p;
    r->events++;
    if (!some_type[0] && e->type && e->type->name && strlen(e->type->name) < sizeof some_type)
        strcpy(some_type, e->type->name);
    if (copy_len && e->offset / copy_len < 4)
        r->events_in_copy[e->offset / copy_len]++;
    jwalk_event(&r->w, e);
    if (r->stop_at && r->events == r->stop_at)
        return JFR_CB_STOP;
    if (r->pause_every && r->events % r->pause_every == 0)
        return JFR_CB_PAUSE;
    return JFR_CB_CONTINUE;
}

static int cb_error(jfr_parser *p, jfr_status s, const char *message, void *user)
{
    run *r = user;
    (void)p;
    r->errors_cb++;
    if (!message_names_chunk(message))
        r->error_msg_ok = 0;
    snprintf(r->last_cb_msg, sizeof r->last_cb_msg, "%s", message ? message : "(null)");
    jw_mix_u64(&r->w, (uint64_t)s);
    return r->on_error_ret;
}

/* ------------------------------------------------------------ parse driver */

typedef struct result {
    jfr_status feed, finish; /* first non-OK feed status (or OK), finish status */
    jfr_status status;       /* jfr_parser_status at the end */
    char error[512];
    uint64_t chunks, errors;
    int nomem_parser;        /* jfr_parser_new returned NULL */
} result;

enum feed_mode { FEED_WHOLE, FEED_FIXED, FEED_RANDOM };

/* Parse buf[0..len) and free the parser. slice: FEED_FIXED slice size. */
static result parse(const uint8_t *buf, size_t len, enum feed_mode mode, size_t slice,
                    run *r, jfr_options *opts_in, counter *cnt)
{
    result res;
    memset(&res, 0, sizeof res);
    jfr_callbacks cb = {
        .size = sizeof cb,
        .on_chunk_begin = cb_chunk_begin,
        .on_metadata = cb_metadata,
        .on_record = cb_record,
        .on_event = cb_event,
        .on_chunk_end = cb_chunk_end,
        .on_error = cb_error,
    };
    jfr_options opts;
    if (opts_in)
        opts = *opts_in;
    else
        jfr_options_init(&opts);
    counter local;
    if (!cnt) {
        talloc_init(&local);
        cnt = &local;
    }
    talloc_options(&opts, cnt);
    r->error_msg_ok = 1;

    jfr_parser *p = jfr_parser_new(&opts, &cb, r);
    if (!p) {
        res.nomem_parser = 1;
        res.feed = res.finish = res.status = JFR_NOMEM;
        if (cnt->cur != 0)
            fail("jfr_parser_new failed and leaked %zu bytes", cnt->cur);
        return res;
    }
    size_t off = 0;
    res.feed = JFR_OK;
    int guard = 0;
    while (off < len) {
        size_t n = len - off;
        if (mode == FEED_FIXED && n > slice)
            n = slice;
        else if (mode == FEED_RANDOM) {
            size_t k = (size_t)(rnd() % 5);
            size_t m = k == 0 ? 1 : k == 1 ? (size_t)(rnd() % 16) + 1
                     : k == 2 ? (size_t)(rnd() % 4096) + 1 : (size_t)(rnd() % 65536) + 1;
            if (n > m)
                n = m;
        }
        jfr_status s = jfr_parser_feed(p, buf + off, n);
        size_t used = jfr_parser_consumed(p);
        if (s == JFR_PAUSED) {
            if (used > n) {
                fail("consumed %zu > fed %zu after PAUSED", used, n);
                used = n;
            }
            off += used;
            if (used == 0 && ++guard > 1000000) {
                fail("PAUSED without progress forever");
                break;
            }
            continue;
        }
        if (s != JFR_OK) {
            res.feed = s;
            if (used > n)
                fail("consumed %zu > fed %zu after status %s", used, n, jfr_status_name(s));
            /* feeding again must give the same status */
            jfr_status again = jfr_parser_feed(p, buf + off, n);
            if (again != s)
                fail("feed after %s returned %s", jfr_status_name(s), jfr_status_name(again));
            break;
        }
        if (used != n)
            fail("feed returned OK but consumed %zu of %zu", used, n);
        off += n;
    }
    if (res.feed == JFR_OK) {
        /* a pause may be pending on the last bytes: resume with (NULL, 0) */
        jfr_status s;
        int k = 0;
        while ((s = jfr_parser_feed(p, NULL, 0)) == JFR_PAUSED && ++k < 1000000) {
        }
        if (s != JFR_OK)
            res.feed = s;
    }
    res.finish = jfr_parser_finish(p);
    res.status = jfr_parser_status(p);
    const char *e = jfr_parser_error(p);
    snprintf(res.error, sizeof res.error, "%s", e ? e : "");
    res.chunks = jfr_parser_chunks(p);
    res.errors = jfr_parser_errors(p);
    (void)jfr_parser_bytes(p);
    (void)jfr_parser_metadata(p);
    jfr_parser_free(p);
    if (cnt->cur != 0)
        fail("%zu bytes still allocated after jfr_parser_free", cnt->cur);
    if (cnt->bad_size)
        fail("free/realloc was given a wrong old size %zu times, first: %s%s", cnt->bad_size,
             cnt->bad_detail, cnt->failed ? " (after an allocation failure)" : "");
    return res;
}

static int is_error(jfr_status s) { return s != JFR_OK && s != JFR_PAUSED && s != JFR_STOPPED; }

static jfr_status final_status(const result *res)
{
    return res->feed != JFR_OK ? res->feed : res->finish;
}

/* ------------------------------------------------------------------ tests */

static uint8_t *file;
static size_t file_len;
static int quick;
static double budget = 25.0; /* seconds for the bit-flip section */

static run new_run(void)
{
    run r;
    memset(&r, 0, sizeof r);
    jwalk_init(&r.w);
    r.w.visit = jwalk_hash_visit;
    r.w.fail = walk_fail;
    r.w.ra_depth = 1;           /* random access near the top (each is O(items)) */
    r.w.stack_frames = 8;       /* the first frames and the last one */
    r.w.max_items = 1000000;
    r.w.max_items_fails = true;
    r.on_error_ret = JFR_CB_STOP;
    return r;
}


static void test_baseline(void)
{
    begin_section("baseline");
    double t0 = now_s();
    run r = new_run();
    r.w.ra_strict = true;       /* a good file: random access everywhere */
    r.w.ra_depth = INT_MAX;
    counter cnt;
    talloc_init(&cnt);
    collect_records = 1;
    result res = parse(file, file_len, FEED_WHOLE, 0, &r, NULL, &cnt);
    collect_records = 0;
    if (res.feed != JFR_OK || res.finish != JFR_OK)
        fail("good file: feed %s finish %s: %s", jfr_status_name(res.feed),
             jfr_status_name(res.finish), res.error);
    if (r.events == 0)
        fail("good file: no events");
    if (r.w.decode_errors)
        fail("good file: %" PRIu64 " decode errors while reading values", r.w.decode_errors);
    if (r.chunks_begun != r.chunks_ended || r.chunks_begun != res.chunks || r.metadata != r.chunks_begun)
        fail("good file: chunks begun %" PRIu64 " ended %" PRIu64 " metadata %" PRIu64
             " jfr_parser_chunks %" PRIu64, r.chunks_begun, r.chunks_ended, r.metadata, res.chunks);
    if (r.errors_cb || res.errors)
        fail("good file: errors reported");
    baseline_events = r.events;
    baseline_hash = r.w.hash;
    printf("baseline: %" PRIu64 " chunks, %" PRIu64 " records, %" PRIu64 " events, %" PRIu64
           " values read (%" PRIu64 " UTF-16 strings also unconverted), peak alloc %zu bytes (%zu "
           "allocations), %.2f s\n",
           r.chunks_begun, r.records, r.events, r.w.values, r.w.raw_strings, cnt.peak, cnt.nalloc,
           now_s() - t0);

    struct {
        const char *name;
        enum feed_mode mode;
        size_t slice;
        uint64_t pause;
    } v[] = {
        {"1-byte slices", FEED_FIXED, 1, 0},
        {"7-byte slices", FEED_FIXED, 7, 0},
        {"4096-byte slices", FEED_FIXED, 4096, 0},
        {"random slices", FEED_RANDOM, 0, 0},
        {"whole, PAUSE every 3 events", FEED_WHOLE, 0, 3},
        {"random slices, PAUSE every event", FEED_RANDOM, 0, 1},
    };
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        if (quick && v[i].slice == 1)
            continue;
        t0 = now_s();
        seed(1000 + i);
        run r2 = new_run();
        r2.pause_every = v[i].pause;
        res = parse(file, file_len, v[i].mode, v[i].slice, &r2, NULL, NULL);
        if (final_status(&res) != JFR_OK)
            fail("%s: %s: %s", v[i].name, jfr_status_name(final_status(&res)), res.error);
        if (r2.events != baseline_events || r2.w.hash != baseline_hash)
            fail("%s: %" PRIu64 " events, hash %016" PRIx64 "; whole buffer: %" PRIu64
                 " events, hash %016" PRIx64, v[i].name, r2.events, r2.w.hash,
                 baseline_events, baseline_hash);
        printf("baseline: %-34s same callbacks and values: %s (%.2f s)\n", v[i].name,
               r2.w.hash == baseline_hash ? "yes" : "NO", now_s() - t0);
    }

    /* jfr_parser_reset: a second input through the same parser */
    {
        run r3 = new_run();
        jfr_callbacks cb = {.size = sizeof cb, .on_event = cb_event, .on_metadata = cb_metadata,
                            .on_record = cb_record, .on_chunk_begin = cb_chunk_begin,
                            .on_chunk_end = cb_chunk_end, .on_error = cb_error};
        r3.w.max_depth = 10;
        jfr_parser *p = jfr_parser_new(NULL, &cb, &r3);
        if (!p) {
            fail("jfr_parser_new(NULL opts) returned NULL");
        } else {
            if (jfr_parser_user(p) != &r3)
                fail("jfr_parser_user is not the user pointer");
            jfr_status s = jfr_parser_feed(p, file, file_len / 2);
            jfr_parser_reset(p);
            run r4 = new_run();
            r4.w.max_depth = 10;
            jfr_parser_set_user(p, &r4);
            s = jfr_parser_feed(p, file, file_len);
            jfr_status f = jfr_parser_finish(p);
            if (s != JFR_OK || f != JFR_OK || r4.w.hash != baseline_hash)
                fail("after jfr_parser_reset: feed %s finish %s, same hash: %s",
                     jfr_status_name(s), jfr_status_name(f), r4.w.hash == baseline_hash ? "yes" : "no");
            jfr_parser_free(p);
        }
    }

    /* subscription by name: only that type is delivered */
    {
        run r5 = new_run();
        r5.w.max_depth = 3;
        jfr_callbacks cb = {.size = sizeof cb, .on_error = cb_error};
        jfr_parser *p = jfr_parser_new(NULL, &cb, &r5);
        if (p) {
            if (jfr_parser_on(p, some_type, cb_event, &r5) != JFR_OK)
                fail("jfr_parser_on failed");
            jfr_status s = jfr_parser_feed(p, file, file_len);
            jfr_status f = jfr_parser_finish(p);
            if (s != JFR_OK || f != JFR_OK)
                fail("jfr_parser_on run: feed %s finish %s", jfr_status_name(s), jfr_status_name(f));
            printf("baseline: jfr_parser_on(\"%s\") delivered %" PRIu64 " of %" PRIu64 " events\n",
                   some_type, r5.events, baseline_events);
            if (r5.events == 0 || r5.events >= baseline_events)
                fail("jfr_parser_on(%s) delivered %" PRIu64 " events (all: %" PRIu64 ")", some_type,
                     r5.events, baseline_events);
            jfr_parser_free(p);
        }
    }

    /* max_chunk_size slightly above the file: still fine */
    {
        run r6 = new_run();
        jfr_options o;
        jfr_options_init(&o);
        o.max_chunk_size = file_len + 1;
        o.ordered = true;
        o.jdk_time_base = true;
        res = parse(file, file_len, FEED_WHOLE, 0, &r6, &o, NULL);
        if (final_status(&res) != JFR_OK || r6.events != baseline_events)
            fail("ordered + jdk_time_base + max_chunk_size=%zu: %s, %" PRIu64 " events",
                 file_len + 1, jfr_status_name(final_status(&res)), r6.events);
    }
}

static void test_stop(void)
{
    begin_section("stop");
    run r = new_run();
    r.stop_at = 10;
    jfr_callbacks cb = {.size = sizeof cb, .on_event = cb_event, .on_error = cb_error};
    r.w.max_depth = 2;
    jfr_parser *p = jfr_parser_new(NULL, &cb, &r);
    if (!p)
        return;
    jfr_status s = jfr_parser_feed(p, file, file_len);
    if (s != JFR_STOPPED)
        fail("callback returned STOP: feed returned %s", jfr_status_name(s));
    if (r.events != 10)
        fail("callback returned STOP at event 10, got %" PRIu64 " events", r.events);
    s = jfr_parser_feed(p, file, 100);
    if (s != JFR_STOPPED)
        fail("feed after STOP returned %s", jfr_status_name(s));
    if (r.events != 10)
        fail("events delivered after STOP");
    jfr_parser_finish(p);
    jfr_parser_free(p);
    printf("stop: ok\n");
}

/* Byte ranges of the chunks of `buf` (by header sizes); returns the count. */
static size_t chunk_ends(const uint8_t *buf, size_t len, size_t *ends, size_t max)
{
    size_t n = 0, off = 0;
    while (off + 68 <= len && n < max) {
        int64_t sz = get_be64(buf + off + 8);
        if (sz < 68 || (uint64_t)sz > len - off)
            break;
        off += (size_t)sz;
        ends[n++] = off;
    }
    return n;
}

static void test_truncate(void)
{
    begin_section("truncate");
    double t0 = now_s();
    /* two copies: cuts in the second chunk must deliver the first chunk */
    size_t len2 = file_len * 2;
    uint8_t *two = malloc(len2);
    memcpy(two, file, file_len);
    memcpy(two + file_len, file, file_len);
    size_t ends[64];
    size_t nends = chunk_ends(two, len2, ends, 64);
    /* cut points: every offset of the first 64 KiB (of the first copy for small
     * files) and of the 512 bytes after each chunk boundary; elsewhere a
     * stride, larger in the second copy (those cuts parse the whole first copy);
     * plus both sides of every boundary */
    size_t cap = 400000, ncut = 0;
    size_t *cuts = malloc(cap * sizeof *cuts);
    size_t stride1 = quick ? 997 : 61, stride2 = quick ? 9973 : 997;
    size_t last_boundary = 0;
    for (size_t L = 0; L <= len2 && ncut < cap;) {
        for (size_t k = 0; k < nends; k++)
            if (ends[k] <= L && ends[k] > last_boundary)
                last_boundary = ends[k];
        cuts[ncut++] = L;
        int dense = (L < 65536 && L < file_len) || (L < file_len && file_len <= 131072) || L - last_boundary < 512;
        size_t step = dense ? 1 : (L < file_len ? stride1 : stride2);
        if (quick && dense)
            step = 7;
        L += step;
    }
    for (size_t k = 0; k < nends && ncut + 2 <= cap; k++) {
        cuts[ncut++] = ends[k] - 1;
        cuts[ncut++] = ends[k];
    }
    size_t cases = 0;
    for (size_t ci = 0; ci < ncut; ci++) {
        size_t L = cuts[ci];
        int boundary = L == 0;
        for (size_t k = 0; k < nends; k++)
            if (ends[k] == L)
                boundary = 1;
        run r = new_run();
        r.w.max_depth = 2; /* the chunks are complete or absent: keep it quick */
        snprintf(current_case, sizeof current_case, "truncate at %zu", L);
        alarm(20);
        seed(L);
        result res = parse(two, L, (L & 1) ? FEED_RANDOM : FEED_WHOLE, 0, &r, NULL, NULL);
        cases++;
        jfr_status s = final_status(&res);
        if (boundary) {
            if (s != JFR_OK)
                fail("cut at chunk boundary %zu: %s: %s", L, jfr_status_name(s), res.error);
        } else {
            if (s != JFR_TRUNCATED)
                fail("cut at %zu: expected TRUNCATED, got %s (feed %s): %s", L, jfr_status_name(s),
                     jfr_status_name(res.feed), res.error);
            else if (!message_names_chunk(res.error))
                fail("cut at %zu: message does not name the chunk and an offset: \"%s\"", L, res.error);
        }
        if (L >= file_len && r.events < baseline_events)
            fail("cut at %zu (in the second copy): %" PRIu64 " events of the first copy delivered, want %" PRIu64,
                 L, r.events, baseline_events);
    }
    free(cuts);
    /* L == len2 was the last case: a complete 2-chunk input */
    alarm(0);
    free(two);
    printf("truncate: %zu cut points, %.2f s\n", cases, now_s() - t0);
}

/* The first chunk cut at L with its header rewritten to match: size L, and the
 * metadata / checkpoint offsets of the last such records that start below L.
 * The chunk then looks complete but its last record is cut (or, with
 * `keep_offsets`, the original offsets may point past the end). */
static void test_shortened(void)
{
    begin_section("shortened");
    double t0 = now_s();
    uint8_t *buf = malloc(file_len);
    size_t cases = 0, errors = 0, events = 0;
    size_t step = quick ? 8009 : 509;
    int64_t orig_meta = get_be64(file + 24), orig_cp = get_be64(file + 16);
    for (int keep_offsets = 0; keep_offsets < 2; keep_offsets++) {
        for (size_t L = 68; L < file_len; L += (L < 4096 ? (quick ? 17 : 3) : step * (keep_offsets ? 4 : 1))) {
            memcpy(buf, file, L);
            put_be64(buf + 8, (int64_t)L);
            if (!keep_offsets) {
                int64_t meta = 0, cp = 0;
                for (size_t k = 0; k < nrec; k++) {
                    if (rec_off[k] >= L)
                        break;
                    if (rec_type[k] == 0)
                        meta = (int64_t)rec_off[k];
                    else if (rec_type[k] == 1)
                        cp = (int64_t)rec_off[k];
                }
                put_be64(buf + 24, meta);
                put_be64(buf + 16, cp);
            } else {
                put_be64(buf + 24, orig_meta);
                put_be64(buf + 16, orig_cp);
            }
            run r = new_run();
            r.w.max_depth = 4;
            r.on_error_ret = (L & 1) ? JFR_CB_CONTINUE : JFR_CB_STOP;
            snprintf(current_case, sizeof current_case, "chunk size set to %zu (%s offsets)", L,
                     keep_offsets ? "original" : "adjusted");
            alarm(20);
            result res = parse(buf, L, FEED_WHOLE, 0, &r, NULL, NULL);
            cases++;
            events += r.events;
            jfr_status s = final_status(&res);
            if (is_error(s)) {
                errors++;
                if (!message_names_chunk(res.error))
                    fail("size %zu: %s: message does not name the chunk and an offset: \"%s\"", L,
                         jfr_status_name(s), res.error);
            } else if (s != JFR_OK) {
                fail("size %zu: status %s", L, jfr_status_name(s));
            }
            if (r.errors_cb)
                errors += s == JFR_OK;
            if (!r.error_msg_ok)
                fail("size %zu: on_error message without chunk/offset: \"%s\"", L, r.last_cb_msg);
        }
    }
    alarm(0);
    free(buf);
    printf("shortened: %zu sizes, %zu gave an error, %zu events delivered before errors, %.2f s\n",
           cases, errors, events, now_s() - t0);
    if (errors == 0)
        fail("no shortened chunk gave an error");
}

static void test_bitflip(void)
{
    begin_section("bitflip");
    double t0 = now_s();
    uint8_t *buf = malloc(file_len);
    size_t iters = 0, errors = 0, ok = 0;
    size_t max_iters = quick ? 300 : 5000;
    uint64_t by_status[32] = {0};
    /* offsets of interest: header, first records, metadata record */
    int64_t meta = get_be64(file + 24);
    int64_t cp = get_be64(file + 16);
    for (uint64_t it = 0; it < max_iters; it++) {
        if (now_s() - t0 > budget)
            break;
        seed(0xB17F11Bu + it);
        memcpy(buf, file, file_len);
        int nflips = 1 + (int)(rnd() % 8);
        for (int k = 0; k < nflips; k++) {
            size_t pos;
            uint64_t where = rnd() % 10;
            if (where == 0)
                pos = (size_t)(rnd() % 68);
            else if (where <= 3 && meta > 0 && (uint64_t)meta < file_len)
                pos = (size_t)meta + (size_t)(rnd() % 4096);
            else if (where == 4 && cp > 0 && (uint64_t)cp < file_len)
                pos = (size_t)cp + (size_t)(rnd() % 128);
            else
                pos = (size_t)(rnd() % file_len);
            if (pos >= file_len)
                pos = file_len - 1;
            if (rnd() % 4 == 0)
                buf[pos] = (uint8_t)rnd(); /* overwrite a byte */
            else
                buf[pos] ^= (uint8_t)(1u << (rnd() % 8));
        }
        run r = new_run();
        r.w.max_depth = 6;
        r.on_error_ret = (it & 1) ? JFR_CB_CONTINUE : JFR_CB_STOP;
        snprintf(current_case, sizeof current_case, "bitflip iteration %" PRIu64, it);
        alarm(30);
        result res = parse(buf, file_len, (it % 3 == 0) ? FEED_RANDOM : FEED_WHOLE, 0, &r, NULL, NULL);
        iters++;
        jfr_status s = final_status(&res);
        if ((unsigned)s < 32)
            by_status[s]++;
        if (is_error(s) || r.errors_cb) {
            errors++;
            if (is_error(s) && !message_names_chunk(res.error))
                fail("iteration %" PRIu64 ": %s: message does not name the chunk and an offset: \"%s\"",
                     it, jfr_status_name(s), res.error);
            if (!r.error_msg_ok)
                fail("iteration %" PRIu64 ": on_error message without chunk/offset: \"%s\"", it,
                     r.last_cb_msg);
        } else {
            ok++;
        }
    }
    alarm(0);
    free(buf);
    printf("bitflip: %zu iterations (%zu ended in an error, %zu parsed), %.2f s; statuses:",
           iters, errors, ok, now_s() - t0);
    for (int i = 0; i < 32; i++)
        if (by_status[i])
            printf(" %s=%" PRIu64, jfr_status_name((jfr_status)i) ? jfr_status_name((jfr_status)i) : "?",
                   by_status[i]);
    printf("\n");
}

static void make_header(uint8_t *h, int64_t size, int64_t cp, int64_t meta)
{
    memset(h, 0, 68);
    memcpy(h, "FLR\0", 4);
    h[5] = 2; /* major 2 */
    h[7] = 1; /* minor 1 */
    put_be64(h + 8, size);
    put_be64(h + 16, cp);
    put_be64(h + 24, meta);
    put_be64(h + 32, 1700000000000000000LL);
    put_be64(h + 40, 1000000000LL);
    put_be64(h + 48, 12345);
    put_be64(h + 56, 1000000000LL);
    h[67] = 1; /* compressed integers */
}

static void test_headers(void)
{
    begin_section("headers");
    uint8_t buf[4096];
    memset(buf, 0, sizeof buf);
    struct {
        const char *name;
        int64_t size, cp, meta;
        size_t feed;            /* bytes fed */
        uint64_t max_chunk;     /* options.max_chunk_size, 0 default */
        jfr_status want;        /* exact status wanted, or OK = any error */
        jfr_status alt;         /* also accepted */
        size_t peak_limit;      /* allocation peak must stay below */
    } c[] = {
        {"size 0", 0, 0, 0, 68, 0, JFR_BAD_CHUNK_SIZE, JFR_BAD_CHUNK_SIZE, 1 << 20},
        {"size -1", -1, 0, 0, 68, 0, JFR_BAD_CHUNK_SIZE, JFR_CHUNK_TOO_LARGE, 1 << 20},
        {"size INT64_MIN", INT64_MIN, 0, 0, 68, 0, JFR_BAD_CHUNK_SIZE, JFR_CHUNK_TOO_LARGE, 1 << 20},
        {"size 2^63-1", INT64_MAX, 68, 68, 4096, 0, JFR_CHUNK_TOO_LARGE, JFR_BAD_CHUNK_SIZE, 1 << 20},
        {"size 67", 67, 0, 0, 68, 0, JFR_BAD_CHUNK_SIZE, JFR_BAD_CHUNK_SIZE, 1 << 20},
        {"size 68 (no records)", 68, 0, 0, 68, 0, JFR_OK, JFR_OK, 1 << 20},
        {"size 2 MiB > max_chunk_size 1 MiB", 2 << 20, 100, 200, 4096, 1 << 20,
         JFR_CHUNK_TOO_LARGE, JFR_CHUNK_TOO_LARGE, 256 << 10},
        {"size 512 MiB > max_chunk_size 64 KiB", 512 << 20, 100, 200, 4096, 64 << 10,
         JFR_CHUNK_TOO_LARGE, JFR_CHUNK_TOO_LARGE, 256 << 10},
        {"size 512 MiB, 4 KiB given (default max)", 512 << 20, 100, 200, 4096, 0,
         JFR_TRUNCATED, JFR_BAD_RECORD, 1 << 20},
        {"size 1 GiB + 1 (default max 1 GiB)", (1LL << 30) + 1, 100, 200, 4096, 0,
         JFR_CHUNK_TOO_LARGE, JFR_CHUNK_TOO_LARGE, 1 << 20},
        {"metadata offset beyond size", 200, 0, 5000, 200, 0, JFR_OK, JFR_OK, 1 << 20},
        {"metadata offset negative", 200, 0, -5, 200, 0, JFR_OK, JFR_OK, 1 << 20},
        {"cp offset beyond size", 200, 9000, 100, 200, 0, JFR_OK, JFR_OK, 1 << 20},
        {"zeros after the header", 200, 0, 0, 200, 0, JFR_OK, JFR_OK, 1 << 20},
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        memset(buf, 0, sizeof buf);
        make_header(buf, c[i].size, c[i].cp, c[i].meta);
        jfr_options o;
        jfr_options_init(&o);
        o.max_chunk_size = c[i].max_chunk;
        counter cnt;
        talloc_init(&cnt);
        run r = new_run();
        snprintf(current_case, sizeof current_case, "header: %s", c[i].name);
        alarm(20);
        result res = parse(buf, c[i].feed, FEED_WHOLE, 0, &r, &o, &cnt);
        jfr_status s = final_status(&res);
        int good = c[i].want == JFR_OK ? is_error(s) : (s == c[i].want || s == c[i].alt);
        if (c[i].want == JFR_OK && s == JFR_OK)
            good = 0;
        if (!good)
            fail("%s: got %s (%s)", c[i].name, jfr_status_name(s), res.error);
        if (is_error(s) && !message_names_chunk(res.error))
            fail("%s: %s: message does not name the chunk and an offset: \"%s\"", c[i].name,
                 jfr_status_name(s), res.error);
        if (cnt.peak > c[i].peak_limit)
            fail("%s: peak allocation %zu bytes (limit %zu)", c[i].name, cnt.peak, c[i].peak_limit);
        printf("headers: %-42s -> %-16s peak %7zu B  \"%s\"\n", c[i].name, jfr_status_name(s),
               cnt.peak, res.error);
    }
    /* bad magic, bad version */
    {
        memcpy(buf, file, 68);
        buf[0] = 'X';
        run r = new_run();
        result res = parse(buf, 68, FEED_WHOLE, 0, &r, NULL, NULL);
        if (final_status(&res) != JFR_BAD_MAGIC)
            fail("bad magic: got %s", jfr_status_name(final_status(&res)));
        memcpy(buf, file, 68);
        buf[5] = 9;
        r = new_run();
        res = parse(buf, 68, FEED_WHOLE, 0, &r, NULL, NULL);
        if (final_status(&res) != JFR_BAD_VERSION)
            fail("major version 9: got %s", jfr_status_name(final_status(&res)));
        static const uint8_t gz[] = {0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3};
        r = new_run();
        res = parse(gz, sizeof gz, FEED_WHOLE, 0, &r, NULL, NULL);
        if (!is_error(final_status(&res)))
            fail("gzip bytes: got %s", jfr_status_name(final_status(&res)));
        r = new_run();
        res = parse(file, 0, FEED_WHOLE, 0, &r, NULL, NULL);
        if (final_status(&res) != JFR_OK)
            fail("empty input: got %s", jfr_status_name(final_status(&res)));
    }
    /* chunk 0's version: the JDK reads majors 1 (JDK 9, 10) and 2, any minor,
     * with one layout; others are refused with the version named */
    {
        static const struct {
            uint16_t major, minor;
            const char *says; /* NULL: read */
        } vv[] = {
            {1, 0, NULL},
            {1, 7, NULL},
            {2, 9, NULL},
            {0, 9, "chunk 0 at byte 4: unsupported JFR version: version 0.9 (a JDK 7 or 8 recording; "},
            {3, 0, "chunk 0 at byte 4: unsupported JFR version: version 3.0 (only 1.x and 2.x"},
            {9, 0, "version 9.0 ("},
            {65535, 65535, "version 65535.65535 ("},
        };
        uint8_t *cp = malloc(file_len);
        if (!cp) {
            fprintf(stderr, "out of memory\n");
            exit(2);
        }
        memcpy(cp, file, file_len);
        seed(4242);
        for (size_t i = 0; i < sizeof vv / sizeof vv[0]; i++) {
            cp[4] = (uint8_t)(vv[i].major >> 8);
            cp[5] = (uint8_t)vv[i].major;
            cp[6] = (uint8_t)(vv[i].minor >> 8);
            cp[7] = (uint8_t)vv[i].minor;
            run r = new_run();
            result res = parse(cp, file_len, FEED_RANDOM, 0, &r, NULL, NULL);
            jfr_status s = final_status(&res);
            if (!vv[i].says) {
                if (s != JFR_OK || r.events != baseline_events || r.major0 != vv[i].major ||
                    r.minor0 != vv[i].minor)
                    fail("version %u.%u: %s, %" PRIu64 " events (baseline %" PRIu64
                         "), chunk 0 says %u.%u: %s", vv[i].major, vv[i].minor,
                         jfr_status_name(s), r.events, baseline_events, r.major0, r.minor0,
                         res.error);
            } else if (s != JFR_BAD_VERSION || r.events || !strstr(res.error, vv[i].says)) {
                fail("version %u.%u: %s, %" PRIu64 " events: \"%s\" (want BAD_VERSION, \"%s\")",
                     vv[i].major, vv[i].minor, jfr_status_name(s), r.events, res.error,
                     vv[i].says);
            }
            printf("headers: version %u.%u -> %s%s%s\n", vv[i].major, vv[i].minor,
                   jfr_status_name(s), s ? ": " : "", s ? res.error : "");
        }
        free(cp);
    }
    /* the fixture with a small max_chunk_size: too large, nothing big allocated */
    {
        jfr_options o;
        jfr_options_init(&o);
        o.max_chunk_size = 4096;
        counter cnt;
        talloc_init(&cnt);
        run r = new_run();
        result res = parse(file, file_len, FEED_WHOLE, 0, &r, &o, &cnt);
        if (final_status(&res) != JFR_CHUNK_TOO_LARGE)
            fail("fixture with max_chunk_size 4096: got %s", jfr_status_name(final_status(&res)));
        if (cnt.peak > file_len / 2)
            fail("fixture with max_chunk_size 4096: peak allocation %zu", cnt.peak);
        printf("headers: fixture with max_chunk_size 4096 -> %s, peak %zu B\n",
               jfr_status_name(final_status(&res)), cnt.peak);
    }
    alarm(0);
    /* API misuse */
    {
        jfr_parser *p = jfr_parser_new(NULL, NULL, NULL);
        if (!p) {
            fail("jfr_parser_new(NULL, NULL, NULL) returned NULL");
        } else {
            if (jfr_parser_feed(p, NULL, 10) != JFR_INVALID_ARG)
                fail("feed(NULL, 10) is not JFR_INVALID_ARG");
            if (jfr_parser_feed(p, file, file_len) != JFR_OK)
                fail("feed without callbacks failed");
            if (jfr_parser_finish(p) != JFR_OK)
                fail("finish without callbacks failed");
            jfr_parser_free(p);
        }
        jfr_parser_free(NULL);
        for (int s = 0; s <= 20; s++)
            if (!jfr_status_name((jfr_status)s) || !jfr_status_str((jfr_status)s))
                fail("status %d has no name/str", s);
        if (jfr_status_name((jfr_status)999) != NULL || jfr_status_str((jfr_status)999) == NULL)
            fail("status 999: name must be NULL, str non-NULL");
        if (jfr_version_number() != JFR_VERSION_NUMBER || strcmp(jfr_version_string(), JFR_VERSION_STRING))
            fail("version mismatch between header and library");
        static const uint8_t v9[] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
        uint64_t u = 0;
        if (jfr_varint_decode(v9, v9 + 9, &u) != 9 || u != UINT64_MAX)
            fail("9-byte varint");
        if (jfr_varint_decode(v9, v9 + 8, &u) != 0)
            fail("incomplete varint must return 0");
    }
    printf("headers: done\n");
}

static void test_nomem(void)
{
    begin_section("nomem");
    double t0 = now_s();
    /* count allocations of a normal run first */
    counter cnt;
    talloc_init(&cnt);
    run r = new_run();
    r.w.max_depth = 3;
    parse(file, file_len, FEED_FIXED, 65536, &r, NULL, &cnt);
    size_t total = cnt.nalloc;
    size_t cases = 0, nomem = 0;
    size_t step = total > 400 ? total / 200 : 1;
    if (quick)
        step = total > 40 ? total / 20 : 1;
    for (size_t k = 1; k <= total + 1; k += step) {
        talloc_init(&cnt);
        cnt.fail_at = k;
        run r2 = new_run();
        r2.w.max_depth = 3;
        snprintf(current_case, sizeof current_case, "allocation %zu fails", k);
        alarm(20);
        result res = parse(file, file_len, FEED_FIXED, 65536, &r2, NULL, &cnt);
        cases++;
        jfr_status s = final_status(&res);
        if (cnt.failed) {
            if (s == JFR_NOMEM || res.nomem_parser)
                nomem++;
            else if (s != JFR_OK)
                fail("allocation %zu failed: status %s (want NOMEM): %s", k, jfr_status_name(s), res.error);
        }
    }
    alarm(0);
    printf("nomem: %zu allocations in a run; %zu failure points tried, %zu gave JFR_NOMEM, %.2f s\n",
           total, cases, nomem, now_s() - t0);
}

static void test_resync(void)
{
    begin_section("resync");
    size_t len3 = file_len * 3;
    uint8_t *three = malloc(len3);
    for (int i = 0; i < 3; i++)
        memcpy(three + i * file_len, file, file_len);
    /* damage the middle copy's metadata record (header intact: framing holds) */
    uint8_t *mid = three + file_len;
    int64_t meta = get_be64(mid + 24);
    if (meta <= 68 || (uint64_t)meta + 300 > file_len) {
        fail("fixture metadata offset %" PRId64 " unusable", meta);
        free(three);
        return;
    }
    memset(mid + meta + 8, 0xff, 200);
    copy_len = file_len;
    for (int mode = 0; mode < 2; mode++) {
        run r = new_run();
        r.w.max_depth = 4;
        r.on_error_ret = mode == 0 ? JFR_CB_CONTINUE : JFR_CB_STOP;
        seed(77);
        result res = parse(three, len3, mode == 0 ? FEED_RANDOM : FEED_WHOLE, 0, &r, NULL, NULL);
        if (mode == 0) {
            if (r.events_in_copy[0] != baseline_events || r.events_in_copy[2] != baseline_events)
                fail("CONTINUE: events of copy 1: %" PRIu64 ", copy 3: %" PRIu64 " (want %" PRIu64 " each)",
                     r.events_in_copy[0], r.events_in_copy[2], baseline_events);
            if (r.errors_cb != 1 || res.errors != 1)
                fail("CONTINUE: on_error called %" PRIu64 " times, jfr_parser_errors %" PRIu64 " (want 1)",
                     r.errors_cb, res.errors);
            if (!r.error_msg_ok || !strstr(r.last_cb_msg, "chunk"))
                fail("CONTINUE: error message \"%s\"", r.last_cb_msg);
            printf("resync: CONTINUE: events of copies 1/2/3: %" PRIu64 "/%" PRIu64 "/%" PRIu64
                   ", errors %" PRIu64 ", final %s, message \"%s\"\n",
                   r.events_in_copy[0], r.events_in_copy[1], r.events_in_copy[2], r.errors_cb,
                   jfr_status_name(final_status(&res)), r.last_cb_msg);
        } else {
            if (!is_error(final_status(&res)))
                fail("STOP: final status %s, want the error", jfr_status_name(final_status(&res)));
            if (r.events_in_copy[0] != baseline_events || r.events_in_copy[2] != 0)
                fail("STOP: events of copy 1: %" PRIu64 ", copy 3: %" PRIu64,
                     r.events_in_copy[0], r.events_in_copy[2]);
            printf("resync: STOP: final %s \"%s\"\n", jfr_status_name(final_status(&res)), res.error);
        }
    }
    copy_len = 0;
    free(three);
}

static int load_input(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    size_t cap = 1 << 20;
    file = malloc(cap);
    size_t n;
    while ((n = fread(file + file_len, 1, cap - file_len, f)) > 0) {
        file_len += n;
        if (file_len == cap)
            file = realloc(file, cap *= 2);
    }
    fclose(f);
    return 0;
}

int main(int argc, char **argv)
{
    const char *path = NULL;
    const char *only = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--quick"))
            quick = 1;
        else if (!strcmp(argv[i], "--budget") && i + 1 < argc)
            budget = atof(argv[++i]);
        else if (!strcmp(argv[i], "--only") && i + 1 < argc)
            only = argv[++i];
        else if (argv[i][0] == '-') {
            fprintf(stderr, "usage: %s [--quick] [--budget SECONDS] [--only SECTION] FILE.jfr\n", argv[0]);
            return 2;
        } else
            path = argv[i];
    }
    if (!path) {
        fprintf(stderr, "usage: %s [--quick] [--budget SECONDS] [--only SECTION] FILE.jfr\n", argv[0]);
        return 2;
    }
    if (load_input(path) != 0) {
        printf("SKIP: cannot read %s\n", path);
        return 77;
    }
    /* JFRSTREAM_TEST_SCALE (0.1 under `meson test --setup valgrind`): the quick
     * strides and a scaled bit-flip budget */
    const char *scale = getenv("JFRSTREAM_TEST_SCALE");
    if (scale && atof(scale) > 0 && atof(scale) < 1) {
        quick = 1;
        budget *= atof(scale);
    }
    signal(SIGALRM, on_alarm);
    setvbuf(stdout, NULL, _IOLBF, 0);
    double t0 = now_s();
    printf("test_robust: %s, %zu bytes, jfrstream %s\n", path, file_len, jfr_version_string());
    test_baseline();
    if (baseline_events == 0) {
        print_failure_shapes();
        printf("FAILED: the good file does not parse; other sections skipped\n");
        return 1;
    }
#define RUN(name)                                                                 \
    if (!only || !strcmp(only, #name))                                            \
    test_##name()
    RUN(stop);
    RUN(headers);
    RUN(resync);
    RUN(truncate);
    RUN(shortened);
    RUN(nomem);
    RUN(bitflip);
    free(file);
    print_failure_shapes();
    printf("test_robust: %d failures, %.1f s\n", failures, now_s() - t0);
    return failures ? 1 : 0;
}
