/*
 * test_hostile.c — hostile inputs (issue 5 §2), each a named case with a
 * documented result.
 *
 *   test_hostile [--cli JFRSTREAM_EXE] [--only NAME]   (HOSTILE_VERBOSE=1: transcripts)
 *
 * Every case is a chunk built with test/synth.h (or a patched copy of one),
 * put between two good chunks: good + hostile + good. It is parsed at feed
 * sizes 1, 7 (a prime), 4093 and whole (the 10^6 cases: 4093 and whole), and
 * whole with jfr_parser_set_threads(p, 3), with on_error returning STOP and then
 * CONTINUE, every callback and every value logged (harness.h transcripts:
 * values through jfr_iter, stacks through jfr_event_stack / jfr_stack_frame).
 * For each case:
 *   - the status is the one below; an error's message names chunk 1 and a
 *     byte offset, exact where the table gives one ("@+8": the header's size
 *     field, "@record": the bad record, "@meta": the first byte of the
 *     metadata record that cannot be decoded, "@count", "@string": the
 *     checkpoint's count or string at fault), else inside the hostile chunk; the detail text ("expect") is checked too;
 *   - chunk 0 is delivered intact: the transcript starts with the clean run's;
 *   - "skip": with on_error CONTINUE the parser goes on and chunk 2 is
 *     delivered, equal to the clean run but for offsets and chunk number;
 *     without skip, nothing after the error;
 *   - the transcript is identical at every feed size and with threads
 *     (pool-1e6-memcap: the NOMEM message names where memory ran out, which
 *     depends on them);
 *   - peak allocated bytes (harness.h counting allocator) and the wall time of
 *     each run are under the bounds; nothing leaks, no free is given a wrong
 *     size.
 * Errors inside an event's values are not chunk errors (values decode
 * lazily): the event is delivered and reading the value returns the status
 * (BAD_EVENT 15, BAD_STRING 11), checked in the transcript.
 *
 * case                 status / where           delivered; what the values read       peak; time
 * -------------------  -----------------------  ------------------------------------  ----------
 * truncate-every-      TRUNCATED at finish      every cut of good x3 (3588), fed      1 MiB; 1 s
 *   offset             (OK at chunk borders)    whole and by 7: a prefix of the whole
 *                                               run's transcript, ERR TRUNCATED
 *   (test_robust.c has truncation at every offset of the first 64 KiB and random
 *    bit flips of test/data/workload.jfr, fed whole and in random slices)
 * chunk-size-0         BAD_CHUNK_SIZE @+8       chunk 0; framing lost: no skip        1 MiB; 1 s
 * chunk-size-neg       BAD_CHUNK_SIZE @+8       (-1) the same                         1 MiB; 1 s
 * chunk-size-2^63      BAD_CHUNK_SIZE @+8       (INT64_MIN) the same                  1 MiB; 1 s
 * chunk-size-max       CHUNK_TOO_LARGE @+8      max_chunk_size 64 KiB, 11 MB chunk:   1 MiB; 5 s
 *                                               chunk 0; skip: chunk 2
 * record-size-0        BAD_RECORD @record       chunk 0; skip: chunk 2                1 MiB; 1 s
 * record-size-neg      BAD_RECORD @record       (2^64-1) the same                     1 MiB; 1 s
 * record-size-2^63     BAD_RECORD @record       the same                              1 MiB; 1 s
 * varint-10-size       BAD_RECORD @record       10-byte size varint (9 bytes read:    1 MiB; 1 s
 *                                               2^63+12): chunk 0; skip: chunk 2
 * varint-10-field      OK                       all; an event's startTime as a 10-    1 MiB; 1 s
 *                                               byte varint: 9 bytes read (the 9th
 *                                               gives 8 bits), the 10th is the next
 *                                               field: garbled values, no overread
 * varint-10-pool       BAD_CHECKPOINT           a pool key as 10 varint bytes: the    1 MiB; 1 s
 *                                               pools after it misparse ("unknown
 *                                               type id"): chunk 0; skip: chunk 2
 * varint-10-meta       BAD_METADATA @meta       string count as 10 varint bytes;      1 MiB; 1 s
 *                                               chunk 0; skip: chunk 2
 * pool-cycles          OK                       all; Node 2->3->2, 4->4, String 8->8  1 MiB; 1 s
 *                                               and 9->10->9, Class<->ClassLoader,
 *                                               a Symbol of a cyclic String: lazily
 *                                               one level per call, no depth limit;
 *                                               cyclic strings NULL; stacks read
 *                                               their frames
 * pool-cycles-api      OK                       the same through jfr_value_field      -;    1 s
 *                                               (1000 steps), jfr_iter (200 levels,
 *                                               all objects), jfr_stack_frame
 *   (test/cli/refchain.py: `print --json` of chains of 250 and 10^6 references
 *    and a cycle closing at depth 200)
 * cli-cycles           exit 0                   `jfrstream print --json` of good +    -;   20 s
 *                                               cycles + good: 12 events, 14 kB
 * array-count-2^31     OK                       all; the array reads BAD_EVENT        1 MiB; 1 s
 * pool-count-2^31      BAD_CHECKPOINT @count    "2147483648 entries cannot fit":      1 MiB; 1 s
 *                                               chunk 0; skip: chunk 2
 * npools-2^31          BAD_CHECKPOINT @count    "2147483648 constant pools cannot     1 MiB; 1 s
 *                                               fit": chunk 0; skip: chunk 2
 * string-long-event    OK                       all; a string declared 40 bytes in a  1 MiB; 1 s
 *                                               16-byte event reads on into the next
 *                                               record (inside the chunk, no error)
 * string-past-chunk    OK                       all; 2^20 bytes declared: the string  1 MiB; 1 s
 *                                               (and the stack after it) read
 *                                               BAD_STRING
 * string-long-pool     BAD_CHECKPOINT @string   chunk 0; skip: chunk 2                1 MiB; 1 s
 * string-long-meta     BAD_METADATA @meta       chunk 0; skip: chunk 2                1 MiB; 1 s
 * meta-string-index    BAD_METADATA @meta       "string index 7 out of range (2       1 MiB; 1 s
 *                                               strings)": chunk 0; skip: chunk 2
 * meta-deep-elements   BAD_METADATA @meta       100000 nested elements: "nested too   1 MiB; 1 s
 *                                               deeply" (limit 16): chunk 0; skip: 2
 * struct-self-inline   OK                       all; events of the type read          1 MiB; 1 s
 *                                               BAD_EVENT (values and stack)
 * struct-cycle-inline  OK                       A { B } / B { A } inline: the same    1 MiB; 1 s
 * struct-chain-long    OK                       200 nested structs (limit 64): same   4 MiB; 1 s
 * struct-wide-ops      OK                       2^20 decode steps (limit 10^5): same  1 MiB; 1 s
 * pool-1e6             OK                       all; 10^6 String pool entries, an     96 MiB; 20 s
 *                                               11 MB chunk (measured: 83 MiB, 1.2 s)
 * pool-1e6-memcap      NOMEM                    allocator capped at 8 MiB: "cannot    8 MiB; 20 s
 *                                               buffer the chunk" (fed by 4093) or
 *                                               "cannot grow the pool index" (whole,
 *                                               parsed in place): chunk 0
 * pool-1e6-max-memory  LIMIT                    jfr_options.max_memory 32 MiB:     32 MiB; 20 s
 *                                               "max_memory 33554432 bytes: ..."; the
 *                                               peak stays under it; chunk 0; skip:
 *                                               chunk 2
 * pool-1e6-maxchunk    CHUNK_TOO_LARGE @+8      max_chunk_size 1 MiB: chunk 0; skip:  1 MiB; 5 s
 *                                               chunk 2
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include "../harness.h"
#include "../synth.h"

#include <stdint.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define KIB ((size_t)1024)
#define MIB ((size_t)1 << 20)

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ------------------------------------------------------------ the chunks */

#define WIDE_LEVELS 20 /* test.W<i> has two inline fields of test.W<i+1> */
#define CHAIN_LEN 200  /* test.C<i> has one inline field of test.C<i+1> */
#define MANY 1000000u  /* String pool entries of the 10^6 case */

enum cp_mode { CP_GOOD, CP_CYCLES, CP_POOL_COUNT, CP_NPOOLS, CP_LONG_STRING, CP_VARINT10,
               CP_MANY };
enum md_mode { MD_GOOD, MD_STRING_INDEX, MD_DEEP, MD_LONG_STRING, MD_VARINT10 };
enum x_mode { X_NONE, X_SELF, X_AB, X_CHAIN, X_WIDE };
enum ev_mode { EV_GOOD, EV_VARINT10, EV_ARRAY_2_31, EV_LONG_STRING, EV_LONG_STRING_PAST };

typedef struct hspec {
    enum cp_mode cp;
    enum md_mode md;
    enum x_mode x;
    enum ev_mode ev;     /* the last event of the chunk */
    const uint8_t *tail; /* raw bytes appended as a last record */
    size_t ntail;
} hspec;

/* Names that must live until the metadata is emitted. */
static char g_names[4 * CHAIN_LEN + 4 * WIDE_LEVELS + 16][20];
static int g_nnames;
static const char *keep(const char *fmt, int v) {
    char *s = g_names[g_nnames++];
    snprintf(s, sizeof g_names[0], fmt, v);
    return s;
}

static void emit_metadata(sbuf *out, const hspec *h) {
    g_nnames = 0;
    sel *root = sel_new("root");
    sel *meta = sel_add(root, sel_new("metadata"));
    sel_class(meta, "long", "20", NULL);
    sel_class(meta, "int", "21", NULL);
    sel_class(meta, "java.lang.String", "22", NULL);
    sel_class(meta, "boolean", "23", NULL);
    sel *c = sel_class(meta, "test.Node", "30", NULL);
    sel_field(c, "name", "22", false, false);
    sel_field(c, "next", "30", true, false);
    c = sel_class(meta, "jdk.types.Symbol", "31", NULL);
    sel_attr(c, "simpleType", "true");
    sel_field(c, "string", "22", false, false);
    c = sel_class(meta, "java.lang.Class", "32", NULL);
    sel_field(c, "classLoader", "33", true, false);
    sel_field(c, "name", "31", true, false);
    c = sel_class(meta, "jdk.types.ClassLoader", "33", NULL);
    sel_field(c, "type", "32", true, false);
    sel_field(c, "name", "31", true, false);
    c = sel_class(meta, "jdk.types.Method", "34", NULL);
    sel_field(c, "type", "32", true, false);
    sel_field(c, "name", "31", true, false);
    sel_field(c, "descriptor", "31", true, false);
    c = sel_class(meta, "jdk.types.FrameType", "35", NULL);
    sel_attr(c, "simpleType", "true");
    sel_field(c, "description", "22", false, false);
    c = sel_class(meta, "jdk.types.StackFrame", "36", NULL);
    sel_field(c, "method", "34", true, false);
    sel_field(c, "lineNumber", "21", false, false);
    sel_field(c, "bytecodeIndex", "21", false, false);
    sel_field(c, "type", "35", true, false);
    c = sel_class(meta, "jdk.types.StackTrace", "37", NULL);
    sel_field(c, "truncated", "23", false, false);
    sel_field(c, "frames", "36", false, true);
    c = sel_class(meta, "java.lang.Thread", "38", NULL);
    sel_field(c, "osName", "22", false, false);
    sel_field(c, "osThreadId", "20", false, false);
    sel_field(c, "javaName", "22", false, false);
    sel_field(c, "javaThreadId", "20", false, false);
    const char *xtype = NULL;
    switch (h->x) {
    case X_NONE: break;
    case X_SELF:
        c = sel_class(meta, "test.Self", "50", NULL);
        sel_field(c, "v", "21", false, false);
        sel_field(c, "me", "50", false, false);
        xtype = "50";
        break;
    case X_AB:
        c = sel_class(meta, "test.A", "51", NULL);
        sel_field(c, "b", "52", false, false);
        c = sel_class(meta, "test.B", "52", NULL);
        sel_field(c, "a", "51", false, false);
        xtype = "51";
        break;
    case X_CHAIN:
    case X_WIDE: {
        int n = h->x == X_CHAIN ? CHAIN_LEN : WIDE_LEVELS, base = h->x == X_CHAIN ? 1000 : 600;
        for (int i = 0; i <= n; i++) {
            c = sel_class(meta, keep(h->x == X_CHAIN ? "test.C%d" : "test.W%d", i),
                          keep("%d", base + i), NULL);
            if (i == n) {
                sel_field(c, "v", "21", false, false);
                continue;
            }
            const char *next = keep("%d", base + i + 1);
            sel_field(c, "l", next, false, false);
            if (h->x == X_WIDE)
                sel_field(c, "r", next, false, false);
        }
        xtype = h->x == X_CHAIN ? "1000" : "600";
        break;
    }
    }
    sel *ev = sel_class(meta, "test.Event", "100", "jdk.jfr.Event");
    sel_field(ev, "startTime", "20", false, false);
    sel_field(ev, "duration", "20", false, false);
    sel_field(ev, "s", "22", false, false);
    sel_field(ev, "node", "30", true, false);
    sel_field(ev, "eventThread", "38", true, false);
    sel_field(ev, "stackTrace", "37", true, false);
    sel_field(ev, "arr", "21", false, true);
    if (xtype)
        sel_field(ev, "x", xtype, false, false);
    sb_metadata(out, root, 1);
    sel_free(root);
}

/* Where in the metadata record (from its type id) the bad bytes start. */
static size_t g_md_bad;

/* Hand-made metadata records: what synth.h's writer cannot produce. */
static void emit_bad_metadata(sbuf *out, enum md_mode mode) {
    sbuf b = {0};
    sb_long(&b, 0);
    sb_long(&b, 1000);
    sb_long(&b, 0);
    sb_long(&b, 1);
    if (mode == MD_VARINT10) { /* string count: 10 varint bytes */
        g_md_bad = b.n;
        for (int i = 0; i < 9; i++)
            sb_u8(&b, 0x80);
        sb_u8(&b, 0x01);
    } else {
        sb_int(&b, 2);
    }
    sb_str_utf8(&b, "root");
    if (mode == MD_LONG_STRING) { /* 2^20 bytes declared, a few present */
        g_md_bad = b.n;
        sb_u8(&b, 3);
        sb_int(&b, 1u << 20);
        sb_raw(&b, "meta", 4);
    } else {
        sb_str_utf8(&b, "metadata");
    }
    if (mode == MD_STRING_INDEX) {
        sb_int(&b, 0);
        sb_int(&b, 1); /* one attribute: key index 1, value index 7 of 2 */
        sb_int(&b, 1);
        g_md_bad = b.n;
        sb_int(&b, 7);
        sb_int(&b, 0);
    } else if (mode == MD_DEEP) { /* 100000 nested elements, one child each */
        for (int i = 0; i < 100000; i++) {
            if (i == 17) /* the first element deeper than 16 */
                g_md_bad = b.n;
            sb_int(&b, 1);
            sb_int(&b, 0);
            sb_int(&b, 1);
        }
        sb_int(&b, 1);
        sb_int(&b, 0);
        sb_int(&b, 0);
    } else {
        sb_int(&b, 0);
        sb_int(&b, 0);
        sb_int(&b, 0);
    }
    sb_record(out, &b, 4);
    free(b.d);
}

static void put_frame(sbuf *b, uint64_t method, uint32_t line) {
    sb_long(b, method);
    sb_int(b, line);
    sb_int(b, 3);
    sb_long(b, 1);
}

static void put_pool(sbuf *b, uint64_t type, uint32_t n) {
    sb_long(b, type);
    sb_int(b, n);
}

/* The checkpoint record's offset in its chunk, and where in the record
 * (from its type id) the bad bytes start. */
static size_t g_cp_off, g_cp_bad;

static void emit_checkpoint(sbuf *out, enum cp_mode mode) {
    sbuf b = {0};
    bool cyc = mode == CP_CYCLES;
    sb_long(&b, 1);
    sb_long(&b, 1500);
    sb_long(&b, 0);
    sb_long(&b, 0);
    sb_var(&b, 1);
    if (mode == CP_NPOOLS) {
        g_cp_bad = b.n;
        sb_int(&b, 1u << 31);
        put_pool(&b, 22, 1);
        sb_long(&b, 7);
        sb_str_utf8(&b, "pooled");
        sb_record(out, &b, 4);
        free(b.d);
        return;
    }
    sb_int(&b, 9);
    /* String */
    if (mode == CP_POOL_COUNT) {
        sb_long(&b, 22);
        g_cp_bad = b.n;
        sb_int(&b, 1u << 31);
    } else
        put_pool(&b, 22, cyc ? 4 : mode == CP_MANY ? 1 + MANY : 1);
    if (mode == CP_VARINT10) { /* key: 10 varint bytes (9 used, the 10th is the value) */
        for (int i = 0; i < 9; i++)
            sb_u8(&b, 0x87);
        sb_u8(&b, 3);
    } else {
        sb_long(&b, 7);
    }
    if (mode == CP_LONG_STRING) {
        g_cp_bad = b.n;
        sb_u8(&b, 3);
        sb_int(&b, 4096);
        sb_raw(&b, "pooled", 6);
    } else {
        sb_str_utf8(&b, "pooled");
    }
    if (cyc) {
        sb_long(&b, 8); sb_str_pool(&b, 8);   /* self */
        sb_long(&b, 9); sb_str_pool(&b, 10);  /* 9 -> 10 -> 9 */
        sb_long(&b, 10); sb_str_pool(&b, 9);
    }
    if (mode == CP_MANY)
        for (uint32_t k = 0; k < MANY; k++) {
            char s[16];
            snprintf(s, sizeof s, "s%u", k);
            sb_long(&b, 1000 + k);
            sb_str_utf8(&b, s);
        }
    /* Symbol */
    put_pool(&b, 31, cyc ? 4 : 3);
    sb_long(&b, 1); sb_str_utf8(&b, "test/Foo");
    sb_long(&b, 2); sb_str_utf8(&b, "run");
    sb_long(&b, 3); sb_str_utf8(&b, "()V");
    if (cyc) {
        sb_long(&b, 4); sb_str_pool(&b, 8); /* a symbol whose string is self-referencing */
    }
    /* Class, ClassLoader: 2 -> loader 1 -> 2 */
    put_pool(&b, 32, cyc ? 2 : 1);
    sb_long(&b, 1); sb_long(&b, 0); sb_long(&b, 1);
    if (cyc) {
        sb_long(&b, 2); sb_long(&b, 1); sb_long(&b, 4);
    }
    put_pool(&b, 33, cyc ? 1 : 0);
    if (cyc) {
        sb_long(&b, 1); sb_long(&b, 2); sb_long(&b, 4);
    }
    /* Method */
    put_pool(&b, 34, cyc ? 2 : 1);
    sb_long(&b, 1); sb_long(&b, 1); sb_long(&b, 2); sb_long(&b, 3);
    if (cyc) {
        sb_long(&b, 2); sb_long(&b, 2); sb_long(&b, 4); sb_long(&b, 4);
    }
    put_pool(&b, 35, 1);
    sb_long(&b, 1); sb_str_utf8(&b, "Interpreted");
    /* StackTrace */
    put_pool(&b, 37, cyc ? 2 : 1);
    sb_long(&b, 1); sb_u8(&b, 0); sb_int(&b, 2);
    put_frame(&b, 1, 10);
    put_frame(&b, 1, 20);
    if (cyc) {
        sb_long(&b, 2); sb_u8(&b, 1); sb_int(&b, 2);
        put_frame(&b, 2, 30);
        put_frame(&b, 1, 40);
    }
    put_pool(&b, 38, 1);
    sb_long(&b, 1); sb_str_utf8(&b, "main"); sb_long(&b, 11); sb_str_utf8(&b, "main");
    sb_long(&b, 1);
    /* Node: 2 -> 3 -> 2, 4 -> 4 */
    put_pool(&b, 30, cyc ? 4 : 1);
    sb_long(&b, 1); sb_str_utf8(&b, "A"); sb_long(&b, 0);
    if (cyc) {
        sb_long(&b, 2); sb_str_utf8(&b, "B"); sb_long(&b, 3);
        sb_long(&b, 3); sb_str_utf8(&b, "C"); sb_long(&b, 2);
        sb_long(&b, 4); sb_str_utf8(&b, "self"); sb_long(&b, 4);
    }
    sb_record(out, &b, 4);
    free(b.d);
}

static void emit_event(sbuf *out, const hspec *h, int k, bool last) {
    sbuf b = {0};
    enum ev_mode ev = last ? h->ev : EV_GOOD;
    bool cyc = h->cp == CP_CYCLES;
    sb_long(&b, 100);
    if (ev == EV_VARINT10) { /* startTime: 10 varint bytes */
        for (int i = 0; i < 9; i++)
            sb_u8(&b, 0x81);
        sb_u8(&b, 0x05);
    } else {
        sb_long(&b, 1000 + (uint64_t)k);
    }
    sb_long(&b, (uint64_t)k);
    if (ev == EV_LONG_STRING || ev == EV_LONG_STRING_PAST) {
        sb_u8(&b, 3);
        sb_int(&b, ev == EV_LONG_STRING ? 40 : 1u << 20);
        sb_raw(&b, "ab", 2);
    } else if (cyc) {
        sb_str_pool(&b, k % 2 ? 8 : 9);
    } else if (k % 2) {
        sb_str_pool(&b, 7);
    } else {
        char s[16];
        snprintf(s, sizeof s, "ev %d", k);
        sb_str_utf8(&b, s);
    }
    sb_long(&b, cyc ? (uint64_t)(k % 2 ? 2 : 4) : 1);
    sb_long(&b, 1);
    sb_long(&b, cyc ? 2 : 1);
    if (ev == EV_ARRAY_2_31) {
        sb_int(&b, 1u << 31);
    } else {
        sb_int(&b, 3);
        sb_int(&b, 1);
        sb_int(&b, 2);
        sb_int(&b, 3);
    }
    if (h->x != X_NONE) /* a few bytes: the type can't be decoded anyway */
        for (int i = 0; i < 8; i++)
            sb_u8(&b, 1);
    sb_record(out, &b, 0);
    free(b.d);
}

/* One chunk per spec; *meta_off / *tail_off: where those records start. */
static void build_chunk(sbuf *out, const hspec *h, size_t *tail_off) {
    sbuf body = {0};
    if (h->md == MD_GOOD)
        emit_metadata(&body, h);
    else
        emit_bad_metadata(&body, h->md);
    g_cp_off = 68 + body.n;
    emit_checkpoint(&body, h->cp);
    for (int k = 0; k < 4; k++)
        emit_event(&body, h, k, k == 1); /* the hostile event: not the last */
    if (tail_off)
        *tail_off = 68 + body.n;
    sb_raw(&body, h->tail, h->ntail);
    sb_chunk(out, &body, 1700000000000000000LL, 0, 1000000000);
    free(body.d);
}

/* --------------------------------------------------------------- checks */

typedef struct hcase {
    const char *name;
    hspec spec;
    jfr_status want;      /* status of the run (JFR_OK: no error at all) */
    int64_t err_at;       /* exact error offset relative to the hostile chunk;
                             -1: any offset inside it; -2: the tail record;
                             -3: the bad bytes of the metadata record;
                             -4: the bad bytes of the checkpoint */
    bool skip;            /* on_error CONTINUE: chunk 2 is delivered */
    size_t peak;          /* bound on peak allocated bytes */
    double secs;          /* bound on one run's wall time */
    bool big;             /* feed sizes 4093 and whole only */
    size_t cap;           /* allocator cap (0: none) */
    uint64_t max_chunk;   /* jfr_options.max_chunk_size (0: default) */
    uint64_t max_memory;  /* jfr_options.max_memory (0: none) */
    void (*patch)(uint8_t *chunk, size_t len); /* raw edits of the hostile chunk */
    bool feed_dependent;  /* the error message depends on the feed size */
    const char *expect;   /* in every transcript (the error's detail, or a
                             value read from the hostile event) */
} hcase;

static int g_cases, g_failed;
static const char *g_cli;

#define FAILC(...)                                                             \
    do {                                                                       \
        fprintf(stderr, "FAIL %s: ", c->name);                                 \
        fprintf(stderr, __VA_ARGS__);                                          \
        fputc('\n', stderr);                                                   \
        bad++;                                                                 \
    } while (0)

static const char *memfind(const char *h, size_t hn, const char *needle) {
    size_t nn = strlen(needle);
    for (size_t i = 0; i + nn <= hn; i++)
        if (!memcmp(h + i, needle, nn))
            return h + i;
    return NULL;
}

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;

/* feed SIZE_MAX: whole, with jfr_parser_set_threads(p, 3) */
static tlog run_one(const hcase *c, const uint8_t *in, size_t len, size_t feed, bool skip,
                    talloc *ta, double *secs) {
    bool threads = feed == SIZE_MAX;
    run_cfg cfg = {.feed = threads ? 0 : feed, .values = true, .stacks = true,
                   .skip_errors = skip, .alloc = ta, .max_chunk_size = c->max_chunk,
                   .max_memory = c->max_memory,
                   .threads = threads ? 3 : 0};
    talloc_init(ta);
    ta->cap = c->cap;
    ta->lock = threads ? &g_lock : NULL;
    double t0 = now_s();
    tlog t = run_parser(in, len, cfg);
    *secs = now_s() - t0;
    return t;
}

static int run_case(const hcase *c) {
    int bad = 0;
    sbuf good = {0}, hostile = {0}, in = {0};
    hspec gs = {0};
    build_chunk(&good, &gs, NULL);
    size_t tail_off = 0;
    build_chunk(&hostile, &c->spec, &tail_off);
    if (c->patch)
        c->patch(hostile.d, hostile.n);
    sb_raw(&in, good.d, good.n);
    sb_raw(&in, hostile.d, hostile.n);
    sb_raw(&in, good.d, good.n);
    const size_t h0 = good.n, h1 = good.n + hostile.n;

    /* the clean run of the good chunk alone */
    talloc ta;
    double secs;
    hcase plain = {.name = c->name};
    tlog ref = run_one(&plain, good.d, good.n, 0, false, &ta, &secs);
    if (!tlog_ends_ok(&ref))
        FAILC("the good chunk alone does not parse: %.*s", (int)ref.n, ref.d);
    size_t refbody = ref.n - strlen("END OK\n");
    tlog nref = tlog_normalize(ref.d, refbody, false);

    char want_err[96] = "";
    int64_t want_off = -1;
    if (c->err_at >= 0)
        want_off = (int64_t)h0 + c->err_at;
    else if (c->err_at == -2)
        want_off = (int64_t)(h0 + tail_off);
    else if (c->err_at == -3) /* header, 4-byte record size */
        want_off = (int64_t)(h0 + 68 + 4 + g_md_bad);
    else if (c->err_at == -4)
        want_off = (int64_t)(h0 + g_cp_off + 4 + g_cp_bad);
    if (c->want != JFR_OK)
        snprintf(want_err, sizeof want_err, "ERR %s chunk 1 at byte ", jfr_status_name(c->want));

    static const size_t feeds_small[] = {1, 7, 4093, 0, SIZE_MAX},
                        feeds_big[] = {4093, 0, SIZE_MAX};
    const size_t *feeds = c->big ? feeds_big : feeds_small;
    size_t nfeeds = c->big ? 3 : 5;
    size_t peak = 0;
    double worst = 0;
    for (int skip = 0; skip < (c->want == JFR_OK ? 1 : 2); skip++) { /* OK: no error to skip */
        tlog first = {0};
        for (size_t fi = 0; fi < nfeeds; fi++) {
            tlog t = run_one(c, in.d, in.n, feeds[fi], skip, &ta, &secs);
            if (ta.peak > peak)
                peak = ta.peak;
            if (secs > worst)
                worst = secs;
            if (ta.cur || ta.bad_size)
                FAILC("feed %zu: %zu bytes leaked, %zu wrong sizes %s", feeds[fi], ta.cur,
                      ta.bad_size, ta.bad_detail);
            /* chunk 0 intact */
            if (t.n < refbody || memcmp(t.d, ref.d, refbody) != 0)
                FAILC("feed %zu: chunk 0 not delivered intact", feeds[fi]);
            const char *err = memfind(t.d, t.n, "ERR ");
            if (err && getenv("HOSTILE_VERBOSE"))
                fprintf(stderr, "feed %zu skip %d: %.*s\n", feeds[fi], skip,
                        (int)strcspn(err, "\n"), err);
            if (c->expect && !memfind(t.d, t.n, c->expect))
                FAILC("feed %zu: \"%s\" not in the transcript", feeds[fi], c->expect);
            if (c->want == JFR_OK) {
                if (err || !tlog_ends_ok(&t))
                    FAILC("feed %zu: want OK, got: %.300s", feeds[fi],
                          err ? err : t.d + t.n - (t.n < 60 ? t.n : 60));
            } else if (!err || strncmp(err, want_err, strlen(want_err)) != 0) {
                FAILC("feed %zu: want \"%s...\", got: %.200s", feeds[fi], want_err,
                      err ? err : "(no error)");
            } else {
                unsigned long long off = strtoull(err + strlen(want_err), NULL, 10);
                if (want_off >= 0 ? off != (unsigned long long)want_off : off < h0 || off >= h1)
                    FAILC("feed %zu: error at byte %llu, want %lld (hostile chunk %zu..%zu): "
                          "%.200s", feeds[fi], off, (long long)want_off, h0, h1, err);
                if (skip && c->skip) {
                    /* chunk 2 = the good chunk, offsets and number aside */
                    const char *b2 = memfind(err, t.n - (size_t)(err - t.d), "\nB 2 ");
                    tlog nt = {0};
                    if (b2)
                        nt = tlog_normalize(b2 + 1, t.n - (size_t)(b2 + 1 - t.d), false);
                    if (!b2 || nt.n < nref.n || memcmp(nt.d, nref.d, nref.n) != 0)
                        FAILC("feed %zu: chunk 2 not delivered after skipping", feeds[fi]);
                    free(nt.d);
                }
                if (!skip && memfind(t.d, t.n, "\nB 2 "))
                    FAILC("feed %zu: chunk 2 delivered although on_error said STOP", feeds[fi]);
            }
            if (fi == 0) {
                first = t;
            } else {
                if (!c->feed_dependent && (t.n != first.n || memcmp(t.d, first.d, t.n)))
                    FAILC("transcript at feed %zu differs from feed %zu", feeds[fi], feeds[0]);
                free(t.d);
            }
        }
        if (getenv("HOSTILE_VERBOSE"))
            fprintf(stderr, "--- %s skip=%d\n%.*s\n", c->name, skip,
                    (int)(first.n > 4000 ? 4000 : first.n), first.d);
        free(first.d);
    }
    if (peak > c->peak)
        FAILC("peak allocation %zu bytes > bound %zu", peak, c->peak);
    if (worst > c->secs)
        FAILC("a run took %.2f s > bound %.2f s", worst, c->secs);
    printf("%-22s %-16s peak %9zu B (bound %9zu)  worst run %.3f s (bound %.0f s)  %s\n",
           c->name, jfr_status_name(c->want), peak, c->peak, worst, c->secs,
           bad ? "FAIL" : "ok");
    free(ref.d);
    free(nref.d);
    free(good.d);
    free(hostile.d);
    free(in.d);
    return bad;
}

/* ------------------------------------------------------ special cases */

/* Every prefix of good + good + good: TRUNCATED (OK at chunk borders), the
 * transcript a prefix of the whole run's. */
static int case_truncate(void) {
    int bad = 0;
    const hcase cc = {.name = "truncate-every-offset"}, *c = &cc;
    sbuf good = {0}, in = {0};
    hspec gs = {0};
    build_chunk(&good, &gs, NULL);
    for (int i = 0; i < 3; i++)
        sb_raw(&in, good.d, good.n);
    talloc ta;
    double secs, worst = 0;
    size_t peak = 0;
    tlog full = run_one(c, in.d, in.n, 0, false, &ta, &secs);
    size_t fullbody = full.n - strlen("END OK\n");
    for (size_t cut = 0; cut < in.n; cut++) {
        for (int f = 0; f < 2; f++) {
            tlog t = run_one(c, in.d, cut, f ? 7 : 0, false, &ta, &secs);
            peak = ta.peak > peak ? ta.peak : peak;
            worst = secs > worst ? secs : worst;
            bool border = cut % good.n == 0;
            const char *end = memfind(t.d, t.n, "END ");
            const char *err = memfind(t.d, t.n, "ERR TRUNCATED chunk ");
            size_t body = err ? (size_t)(err - t.d) : end ? (size_t)(end - t.d) : t.n;
            if (!border && !err)
                FAILC("cut %zu: no ERR TRUNCATED line", cut);
            if (!end || strncmp(end, border ? "END OK" : "END TRUNCATED",
                                border ? 6 : 13) != 0)
                FAILC("cut %zu: %.60s", cut, end ? end : "(no END)");
            if (body > fullbody || memcmp(t.d, full.d, body) != 0)
                FAILC("cut %zu: transcript not a prefix of the whole run's", cut);
            if (ta.cur)
                FAILC("cut %zu: leak", cut);
            free(t.d);
        }
    }
    if (peak > MIB || worst > 1)
        FAILC("peak %zu, worst %.3f s", peak, worst);
    printf("%-22s %-16s peak %9zu B (bound %9zu)  worst run %.3f s (bound 1 s)  %s  (%zu cuts)\n",
           c->name, "TRUNCATED", peak, MIB, worst, bad ? "FAIL" : "ok", in.n);
    free(full.d);
    free(good.d);
    free(in.d);
    return bad;
}

/* Direct API checks of the cycles: values, iteration, stacks. */
static int cyc_event(jfr_parser *p, const jfr_event *e, void *u) {
    (void)p;
    int *bad = u;
#define CBAD() (fprintf(stderr, "  check at line %d failed\n", __LINE__), (*bad)++)
    jfr_value v, x, y;
    /* node: follow `next` 1000 times: 2 -> 3 -> 2 ... never fails, never loops */
    if (jfr_event_field_named(e, "node", &v) != JFR_OK || v.kind != JFR_KIND_OBJECT)
        CBAD();
    for (int i = 0; i < 1000 && v.kind == JFR_KIND_OBJECT; i++) {
        if (jfr_value_field(&v, 1, &x) != JFR_OK) {
            CBAD();
            break;
        }
        if (x.kind == JFR_KIND_OBJECT && x.key != (v.key == 2 ? 3u : v.key == 3 ? 2u : 4u))
            CBAD();
        v = x;
    }
    /* pooled strings 8 -> 8 and 9 -> 10 -> 9: NULL, no error */
    if (jfr_event_field_named(e, "s", &y) != JFR_OK || y.kind != JFR_KIND_NULL)
        CBAD();
    /* stack 2: frame 0's method name is the self-referencing symbol: NULL */
    jfr_stack st;
    jfr_frame f;
    if (jfr_event_stack(e, &st) != JFR_OK || !st.present || st.nframes != 2)
        CBAD();
    else if (jfr_stack_frame(&st, 0, &f) != JFR_OK || f.method_name != NULL || f.line != 30)
        CBAD();
    else if (jfr_stack_frame(&st, 1, &f) != JFR_OK || f.line != 40 || f.method_name_len != 3 ||
             memcmp(f.method_name, "run", 3) != 0)
        CBAD();
    /* class 2 -> loader 1 -> class 2: iterate 200 levels */
    if (jfr_stack_frame(&st, 0, &f) == JFR_OK) {
        jfr_value fr, m, cl;
        jfr_event_field_named(e, "stackTrace", &fr);
        jfr_value_field_named(&fr, "frames", &x);
        jfr_value_index(&x, 0, &fr);
        jfr_value_field_named(&fr, "method", &m);
        jfr_value_field_named(&m, "type", &cl);
        int depth = 0;
        while (cl.kind == JFR_KIND_OBJECT && depth < 200) {
            jfr_iter it;
            jfr_value kid;
            jfr_status r;
            jfr_value next = {.kind = JFR_KIND_NULL};
            jfr_iter_init(&it, &cl);
            while ((r = jfr_iter_next(&it, &kid)) == JFR_OK)
                if (kid.kind == JFR_KIND_OBJECT && kid.field && kid.field->index == 0)
                    next = kid;
            if (r != JFR_END)
                CBAD();
            cl = next;
            depth++;
        }
        /* references cost no depth: the cycle is followed all 200 steps,
         * alternating class 2 and loader 1, never NULL */
        if (depth != 200 || cl.kind != JFR_KIND_OBJECT || cl.key != 2)
            CBAD();
        if (getenv("HOSTILE_VERBOSE"))
            fprintf(stderr, "class/loader chain: %d references followed\n", depth);
    }
    return JFR_CB_CONTINUE;
}

static int case_cycles_api(void) {
    int bad = 0, cbad = 0;
    const hcase cc = {.name = "pool-cycles-api"}, *c = &cc;
    sbuf ch = {0};
    hspec hs = {.cp = CP_CYCLES};
    build_chunk(&ch, &hs, NULL);
    jfr_callbacks cb = {.size = sizeof cb, .on_event = cyc_event};
    jfr_parser *p = jfr_parser_new(NULL, &cb, &cbad);
    double t0 = now_s();
    if (jfr_parser_feed(p, ch.d, ch.n) != JFR_OK || jfr_parser_finish(p) != JFR_OK)
        FAILC("status %s", jfr_parser_error(p));
    double dt = now_s() - t0;
    jfr_parser_free(p);
    if (cbad)
        FAILC("%d value/stack checks failed", cbad);
    if (dt > 1)
        FAILC("%.2f s", dt);
    printf("%-22s %-16s values, iteration and stacks through the cycles: %.3f s  %s\n",
           c->name, "OK", dt, bad ? "FAIL" : "ok");
    free(ch.d);
    return bad;
}

/* `jfrstream print --json` over the cycles input. */
static int case_cli(void) {
    int bad = 0;
    const hcase cc = {.name = "cli-cycles"}, *c = &cc;
    if (!g_cli) {
        printf("%-22s skipped (no --cli)\n", c->name);
        return 0;
    }
    sbuf good = {0}, ch = {0}, in = {0};
    hspec gs = {0}, hs = {.cp = CP_CYCLES};
    build_chunk(&good, &gs, NULL);
    build_chunk(&ch, &hs, NULL);
    sb_raw(&in, good.d, good.n);
    sb_raw(&in, ch.d, ch.n);
    sb_raw(&in, good.d, good.n);
    char path[] = "/tmp/test-hostile-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0 || write(fd, in.d, in.n) != (ssize_t)in.n) {
        FAILC("cannot write %s", path);
        return bad;
    }
    close(fd);
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "timeout 20 '%s' print --json --stack-depth 64 '%s' > '%s.out'",
             g_cli, path, path);
    double t0 = now_s();
    int rc = system(cmd);
    double dt = now_s() - t0;
    char outp[64];
    snprintf(outp, sizeof outp, "%s.out", path);
    size_t olen = 0;
    uint8_t *out = read_file(outp, &olen);
    int nev = 0;
    for (const char *q = (const char *)out; out && (q = memfind(q, olen - (size_t)(q - (const char *)out),
                                                                "\"test.Event\"")); q++)
        nev++;
    if (!WIFEXITED(rc) || WEXITSTATUS(rc) != 0)
        FAILC("exit status %d", rc);
    if (nev != 12)
        FAILC("%d events in the JSON, want 12", nev);
    if (olen > MIB)
        FAILC("output %zu bytes", olen);
    if (dt > 20)
        FAILC("%.2f s", dt);
    printf("%-22s %-16s %d events, %zu bytes of JSON, %.3f s  %s\n", c->name, "exit 0", nev,
           olen, dt, bad ? "FAIL" : "ok");
    free(out);
    unlink(path);
    unlink(outp);
    free(good.d);
    free(ch.d);
    free(in.d);
    return bad;
}

/* ------------------------------------------------------------- the cases */

static void put_be64(uint8_t *p, uint64_t v) {
    for (int i = 7; i >= 0; i--, v >>= 8)
        p[i] = (uint8_t)v;
}
static void patch_size_0(uint8_t *d, size_t n) { (void)n; put_be64(d + 8, 0); }
static void patch_size_neg(uint8_t *d, size_t n) { (void)n; put_be64(d + 8, (uint64_t)-1); }
static void patch_size_2_63(uint8_t *d, size_t n) { (void)n; put_be64(d + 8, 1ull << 63); }

/* record size 0; 2^64-1 (-1); 2^63; then the type byte */
static const uint8_t tail_size_0[] = {0x00, 0x05};
static const uint8_t tail_size_neg[] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x05};
static const uint8_t tail_size_2_63[] = {0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x05};
/* a 10-byte size varint: 9 bytes make 2^63 + 12, the 10th is left over */
static const uint8_t tail_varint10[] = {0x8c, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00,
                                        0x64, 0x01};

#define TAIL(a) .tail = a, .ntail = sizeof a

static const hcase cases[] = {
    {.name = "chunk-size-0", .spec = {0}, .want = JFR_BAD_CHUNK_SIZE, .err_at = 8,
     .skip = false, .peak = MIB, .secs = 1, .patch = patch_size_0,
     .expect = "chunk size 0\n"},
    {.name = "chunk-size-neg", .spec = {0}, .want = JFR_BAD_CHUNK_SIZE, .err_at = 8,
     .skip = false, .peak = MIB, .secs = 1, .patch = patch_size_neg,
     .expect = "chunk size -1\n"},
    {.name = "chunk-size-2^63", .spec = {0}, .want = JFR_BAD_CHUNK_SIZE, .err_at = 8,
     .skip = false, .peak = MIB, .secs = 1, .patch = patch_size_2_63,
     .expect = "chunk size -9223372036854775808\n"},
    {.name = "chunk-size-max", .spec = {.cp = CP_MANY}, .want = JFR_CHUNK_TOO_LARGE, .err_at = 8,
     .skip = true, .peak = MIB, .secs = 5, .big = true,
     .max_chunk = 64 * KIB,
     .expect = "exceeds the maximum 65536"},
    {.name = "record-size-0", .spec = {TAIL(tail_size_0)}, .want = JFR_BAD_RECORD, .err_at = -2,
     .skip = true, .peak = MIB, .secs = 1,
     .expect = "record size out of range (2 bytes left)"},
    {.name = "record-size-neg", .spec = {TAIL(tail_size_neg)}, .want = JFR_BAD_RECORD, .err_at = -2,
     .skip = true, .peak = MIB, .secs = 1,
     .expect = "record size out of range (10 bytes left)"},
    {.name = "record-size-2^63", .spec = {TAIL(tail_size_2_63)}, .want = JFR_BAD_RECORD, .err_at = -2,
     .skip = true, .peak = MIB, .secs = 1,
     .expect = "record size out of range (10 bytes left)"},
    {.name = "varint-10-size", .spec = {TAIL(tail_varint10)}, .want = JFR_BAD_RECORD, .err_at = -2,
     .skip = true, .peak = MIB, .secs = 1,
     .expect = "record size out of range (12 bytes left)"},
    {.name = "varint-10-field", .spec = {.ev = EV_VARINT10}, .want = JFR_OK, .err_at = 0,
     .skip = false, .peak = MIB, .secs = 1,
     .expect = "t=-9150747060186627967 d=5 "},
    {.name = "varint-10-pool", .spec = {.cp = CP_VARINT10}, .want = JFR_BAD_CHECKPOINT, .err_at = -1,
     .skip = true, .peak = MIB, .secs = 1,
     .expect = "constant pool of unknown type id 111"},
    {.name = "varint-10-meta", .spec = {.md = MD_VARINT10}, .want = JFR_BAD_METADATA, .err_at = -3,
     .skip = true, .peak = MIB, .secs = 1,
     .expect = "string count out of range"},
    {.name = "pool-cycles", .spec = {.cp = CP_CYCLES}, .want = JFR_OK, .err_at = 0,
     .skip = false, .peak = MIB, .secs = 1,
     .expect = "{\"B\",{\"C\",{\"B\",{\"C\","},
    {.name = "array-count-2^31", .spec = {.ev = EV_ARRAY_2_31}, .want = JFR_OK, .err_at = 0,
     .skip = false, .peak = MIB, .secs = 1,
     .expect = ",],},!err15} stack2["},
    {.name = "pool-count-2^31", .spec = {.cp = CP_POOL_COUNT}, .want = JFR_BAD_CHECKPOINT, .err_at = -4,
     .skip = true, .peak = MIB, .secs = 1,
     .expect = "pool java.lang.String: 2147483648 entries cannot fit in the record"},
    {.name = "npools-2^31", .spec = {.cp = CP_NPOOLS}, .want = JFR_BAD_CHECKPOINT, .err_at = -4,
     .skip = true, .peak = MIB, .secs = 1,
     .expect = "2147483648 constant pools cannot fit in the record"},
    {.name = "string-long-event", .spec = {.ev = EV_LONG_STRING}, .want = JFR_OK, .err_at = 0,
     .skip = false, .peak = MIB, .secs = 1,
     .expect = "1001/1001,1/1,\"ab"},
    {.name = "string-past-chunk", .spec = {.ev = EV_LONG_STRING_PAST}, .want = JFR_OK, .err_at = 0,
     .skip = false, .peak = MIB, .secs = 1,
     .expect = "{1001/1001,1/1,!err11} stack!11"},
    {.name = "string-long-pool", .spec = {.cp = CP_LONG_STRING}, .want = JFR_BAD_CHECKPOINT, .err_at = -4,
     .skip = true, .peak = MIB, .secs = 1,
     .expect = "pool java.lang.String entry 0: value does not match its type"},
    {.name = "string-long-meta", .spec = {.md = MD_LONG_STRING}, .want = JFR_BAD_METADATA, .err_at = -3,
     .skip = true, .peak = MIB, .secs = 1,
     .expect = "string length out of range"},
    {.name = "meta-string-index", .spec = {.md = MD_STRING_INDEX}, .want = JFR_BAD_METADATA, .err_at = -3,
     .skip = true, .peak = MIB, .secs = 1,
     .expect = "string index 7 out of range (2 strings)"},
    {.name = "meta-deep-elements", .spec = {.md = MD_DEEP}, .want = JFR_BAD_METADATA, .err_at = -3,
     .skip = true, .peak = MIB, .secs = 1,
     .expect = "elements nested too deeply"},
    {.name = "struct-self-inline", .spec = {.x = X_SELF}, .want = JFR_OK, .err_at = 0,
     .skip = false, .peak = MIB, .secs = 1,
     .expect = " {!err15} stack!15"},
    {.name = "struct-cycle-inline", .spec = {.x = X_AB}, .want = JFR_OK, .err_at = 0,
     .skip = false, .peak = MIB, .secs = 1,
     .expect = " {!err15} stack!15"},
    {.name = "struct-chain-long", .spec = {.x = X_CHAIN}, .want = JFR_OK, .err_at = 0,
     .skip = false, .peak = 4 * MIB, .secs = 1,
     .expect = " {!err15} stack!15"},
    {.name = "struct-wide-ops", .spec = {.x = X_WIDE}, .want = JFR_OK, .err_at = 0,
     .skip = false, .peak = MIB, .secs = 1,
     .expect = " {!err15} stack!15"},
    {.name = "pool-1e6", .spec = {.cp = CP_MANY}, .want = JFR_OK, .err_at = 0,
     .skip = false, .peak = 96 * MIB, .secs = 20, .big = true},
    {.name = "pool-1e6-memcap", .spec = {.cp = CP_MANY}, .want = JFR_NOMEM, .err_at = -1,
     .skip = false, .peak = 8 * MIB, .secs = 20, .big = true,
     .cap = 8 * MIB, .feed_dependent = true,
     .expect = "ERR NOMEM chunk 1 at byte "},
    {.name = "pool-1e6-max-memory", .spec = {.cp = CP_MANY}, .want = JFR_LIMIT, .err_at = -1,
     .skip = true, .peak = 32 * MIB, .secs = 20, .big = true,
     .max_memory = 32 * MIB, .feed_dependent = true,
     .expect = "ERR LIMIT chunk 1 at byte "},
    {.name = "pool-1e6-maxchunk", .spec = {.cp = CP_MANY}, .want = JFR_CHUNK_TOO_LARGE, .err_at = 8,
     .skip = true, .peak = MIB, .secs = 5, .big = true,
     .max_chunk = MIB,
     .expect = "exceeds the maximum 1048576"},
};

int main(int argc, char **argv) {
    const char *only = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--cli") && i + 1 < argc)
            g_cli = argv[++i];
        else if (!strcmp(argv[i], "--only") && i + 1 < argc)
            only = argv[++i];
        else {
            fprintf(stderr, "usage: test_hostile [--cli JFRSTREAM] [--only NAME]\n");
            return 2;
        }
    }
    double t0 = now_s();
#define RUN(name, call)                                                        \
    if (!only || !strcmp(only, name)) {                                        \
        g_cases++;                                                             \
        g_failed += (call) != 0;                                               \
    }
    RUN("truncate-every-offset", case_truncate());
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        RUN(cases[i].name, run_case(&cases[i]));
    RUN("pool-cycles-api", case_cycles_api());
    RUN("cli-cycles", case_cli());
    printf("%d cases, %d failed, %.2f s\n", g_cases, g_failed, now_s() - t0);
    return g_failed || g_failures ? 1 : 0;
}
