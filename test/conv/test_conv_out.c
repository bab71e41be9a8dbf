/*
 * test_conv_out.c — jfrc_out through a caller's allocator (the *_advanced
 * constructors): every byte allocated is freed, an allocation refused at
 * any point fails cleanly (NULL or a failed writer, no leak), a memory
 * writer's swapped buffer comes from that allocator; jfrc_out_on_write's
 * hook gets its user pointer before each write that has bytes; and
 * jfrc_out_json_string's escapes and its policy for malformed UTF-8.
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#include "jfrstream_conv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;
#define CHECK(c)                                                                      \
    do {                                                                              \
        if (!(c)) {                                                                   \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #c);    \
            failures++;                                                               \
        }                                                                             \
    } while (0)

/* A counting allocator that refuses the allocation numbered fail_at. */
typedef struct counter {
    long calls, fail_at;
    long long live; /* bytes allocated and not freed */
} counter;

static void *c_alloc(void *ctx, size_t n) {
    counter *c = ctx;
    if (++c->calls == c->fail_at)
        return NULL;
    c->live += (long long)n;
    return malloc(n);
}

static void *c_realloc(void *ctx, void *p, size_t old_n, size_t new_n) {
    counter *c = ctx;
    if (++c->calls == c->fail_at)
        return NULL;
    void *q = realloc(p, new_n);
    if (q)
        c->live += (long long)new_n - (long long)old_n;
    return q;
}

static void c_free(void *ctx, void *p, size_t n) {
    counter *c = ctx;
    c->live -= (long long)n;
    free(p);
}

static int sink(void *user, const void *data, size_t len) {
    *(size_t *)user += len;
    (void)data;
    return 0;
}

/* Write 1 MiB of lines through a memory writer; returns whether it failed. */
static bool fill(jfrc_out *o) {
    for (int i = 0; i < 16384; i++)
        jfrc_out_printf(o, "%05d %s\n", i, "0123456789abcdef0123456789abcdef0123456789abcdef0123456");
    return jfrc_out_failed(o);
}

static void allocator_runs(void) {
    /* a full run: the number of allocations it makes */
    counter c = {0};
    jfr_allocator a = {c_alloc, c_realloc, c_free, &c};
    jfrc_out *o = jfrc_out_new_memory_advanced(16, &a);
    CHECK(o && !fill(o));
    size_t len = 0;
    const char *d = jfrc_out_data(o, &len);
    CHECK(d && len == 16384u * 62u && memcmp(d, "00000 ", 6) == 0);
    char *buf = NULL;
    size_t cap = 0;
    CHECK(jfrc_out_swap(o, &buf, &len, &cap) && buf && len == 16384u * 62u);
    jfr_allocator same = a;
    same.free_fn(same.ctx, buf, cap); /* the swapped buffer is the allocator's */
    jfrc_out_free(o);
    long total = c.calls;
    if (getenv("TEST_VERBOSE"))
        printf("memory writer: %ld allocations\n", total);
    CHECK(c.live == 0 && total > 2);
    /* every allocation refused in turn: NULL or a failed writer, no leak */
    for (long k = 1; k <= total; k++) {
        counter f = {.fail_at = k};
        jfr_allocator fa = {c_alloc, c_realloc, c_free, &f};
        jfrc_out *m = jfrc_out_new_memory_advanced(16, &fa);
        if (m) {
            CHECK(fill(m)); /* a refused growth fails the writer */
            jfrc_out_free(m);
        }
        CHECK(f.live == 0);
    }
    /* the fd and callback writers allocate through it too */
    counter g = {0};
    jfr_allocator ga = {c_alloc, c_realloc, c_free, &g};
    size_t n = 0;
    jfrc_out *cb = jfrc_out_new_advanced(sink, &n, 0, &ga);
    jfrc_out *fd = jfrc_out_new_fd_advanced(1, 0, &ga);
    CHECK(cb && fd && g.calls == 4 && g.live > 0);
    jfrc_out_printf(cb, "%s", "hello");
    CHECK(jfrc_out_flush(cb) == JFR_OK && n == 5);
    jfrc_out_free(cb);
    jfrc_out_free(fd);
    CHECK(g.live == 0);
    /* NULL allocator: libc */
    jfrc_out *plain = jfrc_out_new_memory_advanced(0, NULL);
    CHECK(plain && !fill(plain));
    jfrc_out_free(plain);
}

/* The hook records how many bytes had reached the sink when it ran. */
typedef struct hook_seen {
    size_t *sent;
    size_t at[4];
    int calls;
} hook_seen;

static void hook(void *user) {
    hook_seen *h = user;
    if (h->calls < 4)
        h->at[h->calls] = *h->sent;
    h->calls++;
}

static void on_write_hook(void) {
    size_t sent = 0;
    hook_seen h = {&sent, {0}, 0};
    jfrc_out *o = jfrc_out_new(sink, &sent, 8);
    CHECK(o != NULL);
    jfrc_out_on_write(o, hook, &h);
    CHECK(jfrc_out_flush(o) == JFR_OK && h.calls == 0); /* nothing to write */
    jfrc_out_puts(o, "abc");
    CHECK(h.calls == 0 && sent == 0); /* buffered */
    CHECK(jfrc_out_flush(o) == JFR_OK && h.calls == 1 && h.at[0] == 0 && sent == 3);
    static char big[JFRC_OUT_DIRECT];
    jfrc_out_write(o, big, sizeof big); /* straight to the sink */
    CHECK(h.calls == 2 && h.at[1] == 3 && sent == 3 + sizeof big);
    jfrc_out_on_write(o, NULL, NULL);
    jfrc_out_puts(o, "x");
    CHECK(jfrc_out_flush(o) == JFR_OK && h.calls == 2 && sent == 4 + sizeof big);
    jfrc_out_free(o);
}

static void expect_json(const char *in, size_t len, const char *want) {
    jfrc_out *o = jfrc_out_new_memory(0);
    jfrc_out_json_string(o, in, len);
    size_t n;
    const char *d = jfrc_out_data(o, &n);
    if (!d || n != strlen(want) || memcmp(d, want, n) != 0) {
        fprintf(stderr, "json string: want %s, got %.*s\n", want, (int)n, d ? d : "");
        failures++;
    }
    jfrc_out_free(o);
}

static void json_strings(void) {
    expect_json("", 0, "\"\"");
    expect_json("plain text", 10, "\"plain text\"");
    expect_json("q\"b\\s/", 6, "\"q\\\"b\\\\s\\/\"");
    expect_json("\b\f\n\r\t\x01\x7f", 7, "\"\\b\\f\\n\\r\\t\\u0001\x7f\"");
    expect_json("\xc3\xa9\xe4\xb8\xad", 5, "\"\\u00e9\\u4e2d\"");        /* é 中 */
    expect_json("\xf0\x9f\x98\x80", 4, "\"\\ud83d\\ude00\"");            /* U+1F600: a pair */
    expect_json("a\xff" "b", 3, "\"a\\ufffdb\"");                         /* malformed */
    expect_json("\xed\xa0\x80", 3, "\"\\ufffd\"");  /* an encoded surrogate: one U+FFFD, as JDK 25 */
    expect_json("x\0y", 3, "\"x\\u0000y\"");                               /* NUL inside */
}

int main(void) {
    allocator_runs();
    on_write_hook();
    json_strings();
    if (failures) {
        fprintf(stderr, "test_conv_out: %d failures\n", failures);
        return 1;
    }
    printf("test_conv_out: OK\n");
    return 0;
}
