/*
 * test_conv_alloc.c — the converter library through a caller's allocator
 * (the *_new_advanced constructors of jfrstream_conv.h):
 *
 *   test_conv_alloc FILE...
 *
 * For each FILE, one run reads it into a JSON writer (pretty, stack depth
 * 64, its pooled-object cache on), a summary table and a profile (cpu,
 * alloc and lock; threads; a --state, --include and --exclude), then writes
 * the events' JSON, the summary, the folded stacks, the flame graph and the
 * pprof (gzip through zlib) into one memory writer, all five objects
 * allocating through harness.h's talloc, which counts the live bytes and
 * checks every free against the size allocated. A full run gives the
 * reference bytes and N, its allocation count; then each allocation 1..N
 * is refused in turn: the run must either report it (a constructor's NULL,
 * JFR_NOMEM from an option, an event, finish or a writer, jfrc_*_ok false,
 * a failed writer) or, where the library does without (the JSON cache),
 * give the reference bytes; and every run ends with nothing held. ASan
 * (the CI's sanitizer build) sees what the counter cannot: use after free,
 * frees of foreign memory.
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#include "../harness.h" /* CHECK, read_file and talloc, the counting allocator */
#include "jfrstream_conv.h"

/* One run's objects and what it noticed. */
typedef struct run {
    jfrc_out *out;
    jfrc_json *json;
    jfrc_summary *sum;
    jfrc_profile *prof;
    bool first;
    bool nomem;       /* a refusal was reported */
    int other_errors; /* anything else: a test failure */
} run;

static int on_chunk_begin(jfr_parser *p, const jfr_chunk_info *c, void *user) {
    (void)p;
    run *r = user;
    jfrc_json_chunk_begin(r->json, c);
    if (jfrc_summary_nrows(r->sum) == 0)
        jfrc_summary_chunk_begin(r->sum, c, NULL, NULL);
    jfrc_profile_chunk_begin(r->prof, c);
    return JFR_CB_CONTINUE;
}

static int on_chunk_end(jfr_parser *p, const jfr_chunk_info *c, void *user) {
    (void)p;
    run *r = user;
    jfrc_summary_chunk_end(r->sum, c);
    jfrc_profile_chunk_end(r->prof);
    return JFR_CB_CONTINUE;
}

static int on_metadata(jfr_parser *p, const jfr_metadata *m, void *user) {
    (void)p;
    run *r = user;
    jfrc_json_metadata(r->json, m);
    jfrc_summary_metadata(r->sum, m, NULL);
    return JFR_CB_CONTINUE;
}

static int on_record(jfr_parser *p, const jfr_record *rec, void *user) {
    (void)p;
    run *r = user;
    if (jfrc_summary_record(r->sum, rec) == JFRC_SUMMARY_NONE)
        r->nomem = true;
    return JFR_CB_CONTINUE;
}

static int on_event(jfr_parser *p, const jfr_event *e, void *user) {
    (void)p;
    run *r = user;
    jfr_value ev;
    if (jfr_event_value(e, &ev) != JFR_OK) {
        r->other_errors++;
        return JFR_CB_CONTINUE;
    }
    if (!r->first)
        jfrc_out_write(r->out, ", ", 2);
    r->first = false;
    jfr_status s = jfrc_json_event(r->json, e, &ev);
    if (s == JFR_NOMEM)
        r->nomem = true;
    else if (s != JFR_OK)
        r->other_errors++, fprintf(stderr, "test_conv_alloc: %s: %s\n", e->type->name,
                                   jfrc_json_error(r->json));
    return JFR_CB_CONTINUE;
}

static int on_error(jfr_parser *p, jfr_status s, const char *message, void *user) {
    (void)p;
    (void)s;
    fprintf(stderr, "test_conv_alloc: %s\n", message);
    ((run *)user)->other_errors++;
    return JFR_CB_CONTINUE;
}

/* A status of the library: OK, or a refusal noted; anything else fails. */
static void status(run *r, jfr_status s) {
    if (s == JFR_NOMEM)
        r->nomem = true;
    else if (s != JFR_OK)
        r->other_errors++, fprintf(stderr, "test_conv_alloc: %s\n", jfr_status_str(s));
}

/* Everything through `a`; the output bytes in *out (malloc'd, the caller
 * frees) when the run reported nothing, else *out NULL. Returns whether a
 * refusal was reported. */
static bool one_run(const uint8_t *data, size_t len, const jfr_allocator *a, char **out,
                    size_t *out_len) {
    run r = {.first = true};
    *out = NULL;
    *out_len = 0;
    r.out = jfrc_out_new_memory_advanced(7, a);
    if (!r.out)
        return true;
    r.json = jfrc_json_new_advanced(r.out, 64, false, a);
    r.sum = jfrc_summary_new_advanced(false, a);
    r.prof = jfrc_profile_new_advanced(a);
    jfr_parser *p = NULL;
    if (!r.json || !r.sum || !r.prof) {
        r.nomem = true;
        goto done;
    }
    status(&r, jfrc_profile_select(r.prof, "cpu,alloc,lock"));
    status(&r, jfrc_profile_set_state(r.prof, "state_runnable,Waiting"));
    status(&r, jfrc_profile_set_include(r.prof, ".*"));
    status(&r, jfrc_profile_set_exclude(r.prof, "no\\.such\\.Frame"));
    jfrc_profile_set_flags(r.prof, JFRC_PROFILE_THREADS);
    if (r.nomem || r.other_errors)
        goto done;
    jfr_callbacks cb = {.size = sizeof cb,
                        .on_chunk_begin = on_chunk_begin,
                        .on_chunk_end = on_chunk_end,
                        .on_metadata = on_metadata,
                        .on_record = on_record,
                        .on_event = on_event,
                        .on_error = on_error};
    jfr_options o;
    jfr_options_init(&o);
    o.ordered = true;
    o.jdk_time_base = true;
    p = jfr_parser_new(&o, &cb, &r); /* the parser itself: libc */
    if (!p || jfrc_profile_subscribe(r.prof, p) != JFR_OK) {
        r.other_errors++;
        goto done;
    }
    jfrc_json_object_begin(r.json);
    jfrc_json_name(r.json, "recording");
    jfrc_json_object_begin(r.json);
    jfrc_json_name(r.json, "events");
    jfrc_out_putc(r.out, '[');
    jfr_status s = JFR_OK;
    for (size_t off = 0; s == JFR_OK && off < len; off += 4093)
        s = jfr_parser_feed(p, data + off, len - off < 4093 ? len - off : 4093);
    if (s == JFR_OK)
        s = jfr_parser_finish(p);
    /* the profile's callback stops the parser once it is short of memory */
    if (s != JFR_OK && !(s == JFR_STOPPED && !jfrc_profile_ok(r.prof)))
        r.other_errors++, fprintf(stderr, "test_conv_alloc: parser: %s\n", jfr_parser_error(p));
    jfrc_out_putc(r.out, ']');
    jfrc_json_object_end(r.json);
    jfrc_json_object_end(r.json);
    jfrc_out_putc(r.out, '\n');
    if (!jfrc_summary_ok(r.sum) || !jfrc_profile_ok(r.prof))
        r.nomem = true;
    if (!r.nomem && !jfrc_summary_has_chunks(r.sum))
        r.other_errors++, fprintf(stderr, "test_conv_alloc: no chunk counted\n");
    jfrc_summary_print(r.sum, r.out);
    status(&r, jfrc_profile_finish(r.prof));
    if (!r.nomem) {
        status(&r, jfrc_profile_write_collapsed(r.prof, r.out));
        status(&r, jfrc_profile_write_flamegraph(r.prof, r.out, "conv-alloc"));
        status(&r, jfrc_profile_write_pprof(r.prof, r.out));
    }
    if (jfrc_out_failed(r.out))
        r.nomem = true;
    if (!r.nomem) {
        size_t n = 0;
        const char *d = jfrc_out_data(r.out, &n);
        *out = malloc(n ? n : 1);
        if (*out && d)
            memcpy(*out, d, n);
        *out_len = n;
    }
done:
    jfr_parser_free(p);
    jfrc_json_free(r.json);
    jfrc_summary_free(r.sum);
    jfrc_profile_free(r.prof);
    jfrc_out_free(r.out);
    if (r.other_errors)
        g_failures++, fprintf(stderr, "test_conv_alloc: %d unexpected errors\n", r.other_errors);
    return r.nomem;
}

/* The reference run of one file, then each of its allocations refused. */
static void one_file(const char *path) {
    size_t len;
    uint8_t *data = read_file(path, &len);
    if (!data) {
        fprintf(stderr, "test_conv_alloc: cannot read %s\n", path);
        g_failures++;
        return;
    }
    /* the reference: libc (NULL allocator) and the counter give the same bytes */
    char *plain, *ref;
    size_t plain_len, ref_len;
    CHECK(!one_run(data, len, NULL, &plain, &plain_len) && plain);
    talloc c;
    talloc_init(&c);
    jfr_allocator a = talloc_allocator(&c);
    CHECK(!one_run(data, len, &a, &ref, &ref_len) && ref);
    CHECK(plain && ref && plain_len == ref_len && memcmp(plain, ref, ref_len) == 0);
    CHECK(c.cur == 0 && c.bad_size == 0);
    size_t total = c.nalloc;
    printf("%s: %zu output bytes, %zu allocations, peak %zu bytes\n", path, ref_len, total, c.peak);
    CHECK(total > 20 && ref_len > 1000);
    /* each allocation refused in turn */
    long reported = 0, unchanged = 0;
    for (size_t k = 1; k <= total && ref; k++) {
        talloc f;
        talloc_init(&f);
        f.fail_at = k;
        f.fail_once = true;
        jfr_allocator fa = talloc_allocator(&f);
        char *got;
        size_t got_len;
        bool nomem = one_run(data, len, &fa, &got, &got_len);
        if (f.failed != 1) {
            fprintf(stderr, "allocation %zu: %zu refused\n", k, f.failed);
            g_failures++;
        }
        if (nomem) {
            reported++;
        } else if (got && got_len == ref_len && memcmp(got, ref, ref_len) == 0) {
            unchanged++; /* done without (the JSON cache) */
        } else {
            fprintf(stderr, "allocation %zu refused: not reported, and the output differs\n", k);
            g_failures++;
        }
        if (f.cur != 0 || f.bad_size != 0) {
            fprintf(stderr, "allocation %zu refused: %zu bytes left, %zu wrong sizes (%s)\n", k,
                    f.cur, f.bad_size, f.bad_detail);
            g_failures++;
        }
        free(got);
    }
    printf("  refused in turn: %ld reported (JFR_NOMEM, NULL or not ok), %ld without effect "
           "on the output\n",
           reported, unchanged);
    CHECK(reported > 0);
    free(plain);
    free(ref);
    free(data);
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: test_conv_alloc FILE...\n");
        return 2;
    }
    for (int i = 1; i < argc; i++)
        one_file(argv[i]);
    if (g_failures) {
        fprintf(stderr, "test_conv_alloc: %d failures\n", g_failures);
        return 1;
    }
    printf("test_conv_alloc: OK\n");
    return 0;
}
