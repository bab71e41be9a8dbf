/*
 * test_conv.c — the converter library through its public header only
 * (jfrstream_conv.h), writing through a callback jfrc_out with any buffer
 * size; test/conv/test_conv.sh compares its output with the CLI's.
 *
 *   test_conv json|summary|collapsed|pprof FILE [CAP]
 *
 *   json       `jfrstream print --json --stack-depth 64 FILE`
 *   summary    `jfrstream summary FILE`
 *   collapsed  `jfrstream collapsed --event cpu,alloc,lock --threads FILE`
 *   pprof      `jfrstream pprof --event alloc -o - FILE`
 *
 * CAP is the jfrc_out buffer size (0: the default; 1 and 7 make every
 * write larger than the buffer). The input is fed in 4093-byte slices.
 * TEST_CONV_JSON_CACHE=BYTES sets the JSON writer's cache limit
 * (jfrc_json_set_cache_limit); the writer's memory (jfrc_json_memory) is
 * then checked after every event: at most the limit plus its stack of open
 * objects (NEST_SLACK), and the peak is printed.
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#include "jfrstream.h"
#include "jfrstream_conv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NEST_SLACK ((uint64_t)256 << 10)

typedef struct run {
    jfrc_json *json;
    jfrc_summary *sum;
    jfrc_profile *prof;
    bool first;
    int errors;
    size_t writes; /* calls of the write callback */
    bool limited;
    uint64_t limit, peak; /* TEST_CONV_JSON_CACHE, jfrc_json_memory's peak */
} run;

static int write_stdout(void *user, const void *data, size_t len) {
    ((run *)user)->writes++;
    return fwrite(data, 1, len, stdout) == len ? 0 : -1;
}

static int on_chunk_begin(jfr_parser *p, const jfr_chunk_info *c, void *user) {
    (void)p;
    run *r = user;
    if (r->json)
        jfrc_json_chunk_begin(r->json, c);
    if (r->sum && jfrc_summary_nrows(r->sum) == 0)
        jfrc_summary_chunk_begin(r->sum, c, NULL, NULL);
    if (r->prof)
        jfrc_profile_chunk_begin(r->prof, c);
    return JFR_CB_CONTINUE;
}

static int on_chunk_end(jfr_parser *p, const jfr_chunk_info *c, void *user) {
    (void)p;
    run *r = user;
    if (r->sum)
        jfrc_summary_chunk_end(r->sum, c);
    if (r->prof)
        jfrc_profile_chunk_end(r->prof);
    return JFR_CB_CONTINUE;
}

static int on_metadata(jfr_parser *p, const jfr_metadata *m, void *user) {
    (void)p;
    run *r = user;
    if (r->json)
        jfrc_json_metadata(r->json, m);
    if (r->sum)
        jfrc_summary_metadata(r->sum, m, NULL);
    return JFR_CB_CONTINUE;
}

static int on_record(jfr_parser *p, const jfr_record *rec, void *user) {
    (void)p;
    run *r = user;
    return jfrc_summary_record(r->sum, rec) == JFRC_SUMMARY_NONE ? JFR_CB_STOP : JFR_CB_CONTINUE;
}

static jfrc_out *json_out; /* where the separators go */
static bool mem_out;      /* json_out is a memory writer */
static char *mem_buf;     /* the buffer handed to it next */
static size_t mem_cap;

/* Take a memory writer's bytes to stdout; hand it the previous buffer. */
static bool mem_take(jfrc_out *o, run *r) {
    size_t len = 0;
    if (!jfrc_out_swap(o, &mem_buf, &len, &mem_cap))
        return false;
    size_t held = 1;
    (void)jfrc_out_data(o, &held);
    if (held != 0) /* the writer goes on empty */
        return false;
    r->writes++;
    return fwrite(mem_buf, 1, len, stdout) == len;
}

static int on_event(jfr_parser *p, const jfr_event *e, void *user) {
    (void)p;
    run *r = user;
    jfr_value ev;
    if (jfr_event_value(e, &ev) != JFR_OK) {
        r->errors++;
        return JFR_CB_CONTINUE;
    }
    if (!r->first)
        jfrc_out_write(json_out, ", ", 2);
    r->first = false;
    if (jfrc_json_event(r->json, e, &ev) != JFR_OK) {
        fprintf(stderr, "test_conv: %s: %s\n", e->type->name, jfrc_json_error(r->json));
        r->errors++;
    }
    if (mem_out && !mem_take(json_out, r)) {
        fprintf(stderr, "test_conv: jfrc_out_swap failed\n");
        r->errors++;
    }
    uint64_t held = jfrc_json_memory(r->json);
    if (held > r->peak)
        r->peak = held;
    if (r->limited && held > r->limit + NEST_SLACK) {
        fprintf(stderr, "test_conv: the JSON writer holds %llu bytes, limit %llu\n",
                (unsigned long long)held, (unsigned long long)r->limit);
        r->errors++;
        return JFR_CB_STOP;
    }
    return JFR_CB_CONTINUE;
}

static int on_error(jfr_parser *p, jfr_status s, const char *message, void *user) {
    (void)p;
    (void)s;
    fprintf(stderr, "test_conv: %s\n", message);
    ((run *)user)->errors++;
    return JFR_CB_CONTINUE;
}

static int fail(const char *what) {
    fprintf(stderr, "test_conv: %s\n", what);
    return 1;
}

int main(int argc, char **argv) {
    if (argc < 3 || argc > 4)
        return fail("usage: test_conv json|summary|collapsed|pprof FILE [CAP]");
    const char *mode = argv[1];
    size_t cap = argc > 3 ? (size_t)strtoul(argv[3], NULL, 10) : 0;
    FILE *f = fopen(argv[2], "rb");
    if (!f)
        return fail("cannot open the input");
    run r = {.first = true};
    /* CAP "mem": a memory writer (from 7 bytes, so it grows), its bytes
     * taken with jfrc_out_swap after every event and at the end */
    mem_out = argc > 3 && strcmp(argv[3], "mem") == 0;
    jfrc_out *out = mem_out ? jfrc_out_new_memory(7) : jfrc_out_new(write_stdout, &r, cap);
    if (!out)
        return fail("jfrc_out_new");
    jfr_callbacks cb = {.size = sizeof cb,
                        .on_chunk_begin = on_chunk_begin,
                        .on_chunk_end = on_chunk_end,
                        .on_metadata = on_metadata,
                        .on_error = on_error};
    jfr_options o;
    jfr_options_init(&o);
    if (strcmp(mode, "json") == 0) {
        r.json = jfrc_json_new(out, 64, false);
        json_out = out;
        const char *lim = getenv("TEST_CONV_JSON_CACHE");
        if (r.json && lim && *lim) {
            r.limited = true;
            r.limit = strtoull(lim, NULL, 10);
            jfrc_json_set_cache_limit(r.json, r.limit);
        }
        cb.on_event = on_event;
        o.ordered = true;
        o.jdk_time_base = true;
    } else if (strcmp(mode, "summary") == 0) {
        r.sum = jfrc_summary_new(false);
        cb.on_record = on_record;
    } else if (strcmp(mode, "collapsed") == 0 || strcmp(mode, "pprof") == 0) {
        r.prof = jfrc_profile_new();
        bool pprof = mode[0] == 'p';
        if (r.prof && jfrc_profile_select(r.prof, pprof ? "alloc" : "cpu,alloc,lock") != JFR_OK)
            return fail(jfrc_profile_error(r.prof));
        if (r.prof && !pprof)
            jfrc_profile_set_flags(r.prof, JFRC_PROFILE_THREADS);
    } else {
        return fail("unknown mode");
    }
    if (!r.json && !r.sum && !r.prof)
        return fail("out of memory");
    jfr_parser *p = jfr_parser_new(&o, &cb, &r);
    if (!p || (r.prof && jfrc_profile_subscribe(r.prof, p) != JFR_OK))
        return fail("jfr_parser_new / subscribe");
    if (r.json) {
        jfrc_json_object_begin(r.json);
        jfrc_json_name(r.json, "recording");
        jfrc_json_object_begin(r.json);
        jfrc_json_name(r.json, "events");
        jfrc_out_putc(out, '[');
    }
    static char buf[4093];
    size_t n;
    jfr_status s = JFR_OK;
    while (s == JFR_OK && (n = fread(buf, 1, sizeof buf, f)) > 0)
        s = jfr_parser_feed(p, buf, n);
    if (s == JFR_OK)
        s = jfr_parser_finish(p);
    if (s != JFR_OK)
        fprintf(stderr, "test_conv: %s\n", jfr_parser_error(p));
    jfr_parser_free(p);
    fclose(f);
    if (r.json) {
        jfrc_out_putc(out, ']');
        jfrc_json_object_end(r.json);
        jfrc_json_object_end(r.json);
    } else if (r.sum) {
        if (!jfrc_summary_ok(r.sum) || !jfrc_summary_has_chunks(r.sum))
            return fail("summary: no memory or no complete chunk");
        jfrc_summary_print(r.sum, out);
    } else {
        if (jfrc_profile_finish(r.prof) != JFR_OK)
            return fail("jfrc_profile_finish");
        jfr_status w = strcmp(mode, "pprof") == 0 ? jfrc_profile_write_pprof(r.prof, out)
                                                  : jfrc_profile_write_collapsed(r.prof, out);
        if (w != JFR_OK)
            return fail("profile writer");
    }
    if (mem_out && !mem_take(out, &r))
        return fail("jfrc_out_swap");
    if (jfrc_out_flush(out) != JFR_OK || jfrc_out_failed(out) || jfrc_out_pending(out) != 0)
        return fail("jfrc_out_flush");
    if (fflush(stdout) != 0)
        return fail("stdout");
    if (r.json)
        fprintf(stderr, "test_conv: %s, buffer %zu, JSON writer peak %llu bytes: %zu writes\n", mode,
                cap, (unsigned long long)r.peak, r.writes);
    else
        fprintf(stderr, "test_conv: %s, buffer %zu: %zu writes\n", mode, cap, r.writes);
    jfrc_out_free(out);
    free(mem_buf);
    jfrc_json_free(r.json);
    jfrc_summary_free(r.sum);
    jfrc_profile_free(r.prof);
    return s != JFR_OK || r.errors;
}
