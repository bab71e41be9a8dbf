/*
 * cmd_summary.c — `jfrstream summary FILE`: the text of `jfr summary`
 * (JDK 25): version and start of the first chunk, chunk count, total
 * duration, and per record type the count and summed size, sorted by count
 * (descending), then name, then the iteration order of the JDK's HashMap.
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#include "cli.h"
#include "jformat.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct stat_row {
    uint64_t id;
    char *name;
    size_t width; /* name length in UTF-16 units */
    int64_t count;
    int64_t size;
    size_t order; /* insertion order */
    uint32_t bucket;
} stat_row;

typedef struct summary {
    stat_row *rows;
    size_t nrows, caprows;
    uint32_t *slots; /* open addressing: row index + 1, 0 = empty */
    size_t capslots;
    bool have_first;
    uint16_t major, minor;
    int64_t start_nanos;
    uint64_t total_duration; /* Java long arithmetic: wraps */
    int64_t chunks;
    size_t min_width;
    bool nomem;
} summary;

static uint64_t hash_id(uint64_t id) {
    id ^= id >> 33;
    id *= 0xff51afd7ed558ccdull;
    id ^= id >> 33;
    return id;
}

static stat_row *find(summary *s, uint64_t id) {
    if (!s->capslots)
        return NULL;
    size_t mask = s->capslots - 1;
    for (size_t i = hash_id(id) & mask;; i = (i + 1) & mask) {
        uint32_t v = s->slots[i];
        if (!v)
            return NULL;
        if (s->rows[v - 1].id == id)
            return &s->rows[v - 1];
    }
}

static bool rehash(summary *s, size_t cap) {
    uint32_t *slots = calloc(cap, sizeof *slots);
    if (!slots)
        return false;
    for (size_t r = 0; r < s->nrows; r++) {
        size_t i = hash_id(s->rows[r].id) & (cap - 1);
        while (slots[i])
            i = (i + 1) & (cap - 1);
        slots[i] = (uint32_t)(r + 1);
    }
    free(s->slots);
    s->slots = slots;
    s->capslots = cap;
    return true;
}

/* Insert a new row (id must be absent). NULL on allocation failure. */
static stat_row *insert(summary *s, uint64_t id, const char *name) {
    if (s->nrows == s->caprows) {
        size_t cap = s->caprows ? s->caprows * 2 : 256;
        stat_row *r = realloc(s->rows, cap * sizeof *r);
        if (!r)
            goto oom;
        s->rows = r;
        s->caprows = cap;
    }
    if ((s->nrows + 1) * 2 > s->capslots && !rehash(s, s->capslots ? s->capslots * 2 : 512))
        goto oom;
    char *copy = strdup(name);
    if (!copy)
        goto oom;
    stat_row *row = &s->rows[s->nrows];
    *row = (stat_row){id, copy, jfmt_utf16_length(copy, strlen(copy)), 0, 0, s->nrows, 0};
    s->nrows++;
    size_t i = hash_id(id) & (s->capslots - 1);
    while (s->slots[i])
        i = (i + 1) & (s->capslots - 1);
    s->slots[i] = (uint32_t)s->nrows;
    return row;
oom:
    s->nomem = true;
    return NULL;
}

static int on_chunk_begin(jfr_parser *p, const jfr_chunk_info *c, void *user) {
    (void)p;
    summary *s = user;
    if (s->nrows == 0) { /* the JDK names records 0 and 1 up front */
        const char *prefix = c->major == 1 ? "com.oracle.jdk." : "jdk.";
        char name[64];
        snprintf(name, sizeof name, "%sMetadata", prefix);
        insert(s, 0, name);
        snprintf(name, sizeof name, "%sCheckpoint", prefix);
        insert(s, 1, name);
    }
    return s->nomem ? JFR_CB_STOP : JFR_CB_CONTINUE;
}

/* Chunks are counted when complete (a truncated last chunk is an error, not
 * a chunk); version and start come from the first complete one. */
static int on_chunk_end(jfr_parser *p, const jfr_chunk_info *c, void *user) {
    (void)p;
    summary *s = user;
    if (!s->have_first) {
        s->have_first = true;
        s->major = c->major;
        s->minor = c->minor;
        s->start_nanos = c->start_nanos;
    }
    s->chunks++;
    s->total_duration += (uint64_t)c->duration_nanos;
    return JFR_CB_CONTINUE;
}

static int on_metadata(jfr_parser *p, const jfr_metadata *m, void *user) {
    (void)p;
    summary *s = user;
    for (uint32_t i = 0; i < m->ntypes; i++) {
        const jfr_type *t = m->types[i];
        if (!t->is_event)
            continue;
        if (!find(s, t->id) && !insert(s, t->id, t->name))
            return JFR_CB_STOP;
        size_t w = jfmt_utf16_length(t->name, strlen(t->name));
        if (w > s->min_width)
            s->min_width = w;
    }
    return JFR_CB_CONTINUE;
}

static int on_record(jfr_parser *p, const jfr_record *r, void *user) {
    (void)p;
    summary *s = user;
    stat_row *row = find(s, r->type_id);
    if (!row) {
        char name[64];
        snprintf(name, sizeof name, "%lld (missing event metadata)", (long long)(int64_t)r->type_id);
        if (!(row = insert(s, r->type_id, name)))
            return JFR_CB_STOP;
    }
    row->count++;
    row->size += (int32_t)(uint32_t)r->size; /* the JDK reads the size as an int */
    return JFR_CB_CONTINUE;
}

/* java.util.HashMap<Long, ?> bucket of a key at table size cap. */
static uint32_t java_bucket(uint64_t id, size_t cap) {
    uint32_t h = (uint32_t)(id ^ (id >> 32));
    h ^= h >> 16;
    return h & (uint32_t)(cap - 1);
}

static int cmp_rows(const void *a, const void *b) {
    const stat_row *x = a, *y = b;
    if (x->count != y->count)
        return x->count > y->count ? -1 : 1;
    int c = jfmt_utf16_compare(x->name, y->name);
    if (c)
        return c;
    if (x->bucket != y->bucket)
        return x->bucket < y->bucket ? -1 : 1;
    return x->order < y->order ? -1 : x->order > y->order;
}

static void pad_right(outbuf *o, const char *s, size_t width, size_t to) {
    ob_puts(o, s);
    if (width < to)
        ob_fill(o, ' ', to - width);
}

static void pad_left_i64(outbuf *o, int64_t v, size_t to) {
    char tmp[24];
    int n = snprintf(tmp, sizeof tmp, "%lld", (long long)v);
    if (n > 0 && (size_t)n < to)
        ob_fill(o, ' ', to - (size_t)n);
    ob_puts(o, tmp);
}

static void print_summary(summary *s, outbuf *o) {
    /* Java HashMap table size for nrows entries (load factor 0.75) */
    size_t cap = 16;
    while (s->nrows > cap / 4 * 3)
        cap *= 2;
    for (size_t i = 0; i < s->nrows; i++)
        s->rows[i].bucket = java_bucket(s->rows[i].id, cap);
    qsort(s->rows, s->nrows, sizeof *s->rows, cmp_rows);

    char date[JFMT_TIME_MAX];
    int64_t secs = s->start_nanos / 1000000000;
    if (s->start_nanos % 1000000000 < 0)
        secs--;
    jfmt_utc_date_time(secs, date);
    uint64_t rounded = s->total_duration + 500000000u;
    int64_t total = rounded > INT64_MAX ? -(int64_t)(~rounded) - 1 : (int64_t)rounded;

    ob_putc(o, '\n');
    ob_printf(o, " Version: %u.%u\n", (unsigned)s->major, (unsigned)s->minor);
    ob_printf(o, " Chunks: %lld\n", (long long)s->chunks);
    ob_printf(o, " Start: %s (UTC)\n", date);
    ob_printf(o, " Duration: %lld s\n", (long long)(total / 1000000000));
    ob_putc(o, '\n');
    static const char header[] = "      Count  Size (bytes) ";
    static const char type_header[] = " Event Type";
    size_t w = s->min_width;
    if (w < sizeof type_header - 1)
        w = sizeof type_header - 1;
    pad_right(o, type_header, sizeof type_header - 1, w);
    ob_puts(o, header);
    ob_putc(o, '\n');
    ob_fill(o, '=', w + sizeof header - 1);
    ob_putc(o, '\n');
    for (size_t i = 0; i < s->nrows; i++) {
        const stat_row *r = &s->rows[i];
        ob_putc(o, ' ');
        pad_right(o, r->name, r->width, w);
        pad_left_i64(o, r->count, 10);
        ob_puts(o, "  ");
        pad_left_i64(o, r->size, 12);
        ob_putc(o, '\n');
    }
}

int cmd_summary(cli_global *g, int argc, char **argv) {
    const char *path = NULL;
    for (int i = 0; i < argc;) {
        int r = cli_take_global(g, argc, argv, &i);
        if (r < 0)
            return CLI_EXIT_USAGE;
        if (r > 0)
            continue;
        const char *a = argv[i];
        if (cli_is_help(a)) {
            cli_usage(stdout);
            return CLI_EXIT_OK;
        }
        if (a[0] == '-' && a[1] != '\0')
            return cli_usage_error("summary: unknown option '%s'", a);
        if (path)
            return cli_usage_error("summary: too many arguments");
        path = a;
        i++;
    }
    if (!path)
        return cli_usage_error("summary: missing FILE");

    summary s;
    memset(&s, 0, sizeof s);
    jfr_callbacks cb = {.on_chunk_begin = on_chunk_begin,
                        .on_metadata = on_metadata,
                        .on_record = on_record,
                        .on_chunk_end = on_chunk_end,
                        .on_error = cli_on_error};
    int rc = cli_parse(g, path, NULL, &cb, &s, NULL);
    if (s.nomem) {
        cli_error("out of memory");
        rc = CLI_EXIT_ERROR;
    }
    if (s.have_first) /* nothing to show without a complete chunk */
        print_summary(&s, &cli_out);
    for (size_t i = 0; i < s.nrows; i++)
        free(s.rows[i].name);
    free(s.rows);
    free(s.slots);
    return rc;
}
