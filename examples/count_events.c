/*
 * count_events.c — count the events of a JFR file per type.
 *
 *   count_events FILE|-        prints "COUNT TYPE" lines, most frequent first
 *
 * The smallest complete use of the parser: read the file in blocks, push
 * each block into the parser, count in a callback. Build it against an
 * installed jfrstream with
 *
 *   cc count_events.c $(pkg-config --cflags --libs jfrstream) -o count_events
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#define _POSIX_C_SOURCE 200809L /* strdup, open, read, under -std=c11 */

#include <jfrstream.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Counts by type name, over all chunks. A chunk numbers its types densely
 * (jfr_type.index), so on_metadata maps each index to a slot once per chunk
 * and the event callback only indexes arrays: no string work per event. */
typedef struct counts {
    char **names;
    uint64_t *n;
    size_t len, cap;
    size_t *slot_of; /* jfr_type.index -> slot, for the current chunk */
    int failed;      /* an error was reported: exit status 1 */
} counts;

static size_t slot_for(counts *c, const char *name) {
    for (size_t i = 0; i < c->len; i++)
        if (strcmp(c->names[i], name) == 0)
            return i;
    if (c->len == c->cap) {
        c->cap = c->cap ? 2 * c->cap : 64;
        c->names = realloc(c->names, c->cap * sizeof *c->names);
        c->n = realloc(c->n, c->cap * sizeof *c->n);
        if (!c->names || !c->n) {
            perror("count_events");
            exit(1);
        }
    }
    c->names[c->len] = strdup(name);
    c->n[c->len] = 0;
    return c->len++;
}

static int on_metadata(jfr_parser *p, const jfr_metadata *m, void *user) {
    counts *c = user;
    (void)p;
    free(c->slot_of);
    c->slot_of = calloc(m->ntypes ? m->ntypes : 1, sizeof *c->slot_of);
    if (!c->slot_of)
        return JFR_CB_STOP;
    for (uint32_t i = 0; i < m->ntypes; i++)
        if (m->types[i]->is_event)
            c->slot_of[m->types[i]->index] = slot_for(c, m->types[i]->name);
    return JFR_CB_CONTINUE;
}

static int on_event(jfr_parser *p, const jfr_event *e, void *user) {
    counts *c = user;
    (void)p;
    c->n[c->slot_of[e->type->index]]++;
    return JFR_CB_CONTINUE;
}

/* Damaged data: print the message (it names the chunk and byte offset) and
 * go on with the next chunk when the framing allows it. */
static int on_error(jfr_parser *p, jfr_status s, const char *message, void *user) {
    (void)p;
    (void)s;
    ((counts *)user)->failed = 1;
    fprintf(stderr, "count_events: %s\n", message);
    return JFR_CB_CONTINUE;
}

static counts *sort_ctx;
static int by_count(const void *a, const void *b) {
    uint64_t x = sort_ctx->n[*(const size_t *)a], y = sort_ctx->n[*(const size_t *)b];
    if (x != y)
        return x < y ? 1 : -1;
    return strcmp(sort_ctx->names[*(const size_t *)a], sort_ctx->names[*(const size_t *)b]);
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: count_events FILE|-\n");
        return 2;
    }
    int fd = strcmp(argv[1], "-") == 0 ? 0 : open(argv[1], O_RDONLY);
    if (fd < 0) {
        perror(argv[1]);
        return 1;
    }
    counts c = {0};
    jfr_callbacks cb = {.size = sizeof cb, /* see "STRUCTS YOU HAND IN" in jfrstream.h */
                        .on_metadata = on_metadata, .on_event = on_event, .on_error = on_error};
    jfr_parser *p = jfr_parser_new(NULL, &cb, &c);
    if (!p)
        return 1;

    /* push the bytes in whatever slices read() returns */
    static unsigned char buf[1 << 16];
    ssize_t got;
    jfr_status s = JFR_OK;
    while (s == JFR_OK && (got = read(fd, buf, sizeof buf)) > 0)
        s = jfr_parser_feed(p, buf, (size_t)got);
    if (s == JFR_OK)
        s = jfr_parser_finish(p); /* reports a chunk cut short */
    if (s != JFR_OK && !c.failed) {
        fprintf(stderr, "count_events: %s\n", jfr_parser_error(p));
        c.failed = 1;
    }

    size_t *order = malloc((c.len ? c.len : 1) * sizeof *order);
    for (size_t i = 0; order && i < c.len; i++)
        order[i] = i;
    sort_ctx = &c;
    if (order)
        qsort(order, c.len, sizeof *order, by_count);
    for (size_t i = 0; order && i < c.len; i++)
        if (c.n[order[i]])
            printf("%8llu %s\n", (unsigned long long)c.n[order[i]], c.names[order[i]]);

    for (size_t i = 0; i < c.len; i++)
        free(c.names[i]);
    free(c.names);
    free(c.n);
    free(c.slot_of);
    free(order);
    jfr_parser_free(p);
    if (fd > 0)
        close(fd);
    return c.failed;
}
