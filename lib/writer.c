/* The chunk writer (jfrstream.h, "chunk writer"): kept records copied into
 * one buffer per chunk, checkpoints re-chained, the metadata record the
 * chunk is read with appended and the header rewritten at the end, as the JDK's ChunkWriter
 * lays out a scrubbed chunk. The record bytes are read from the parser's
 * current chunk (the unit being dispatched), never from a copy of it. */
#include "internal.h"

#include <stdarg.h>
#include <stdio.h>

#define WRITER_DEFAULT_MAX ((uint64_t)1 << 30)

struct jfr_writer {
    jfr_writer_config cfg;
    jfr_buf out;          /* the chunk being written, header included */
    jfr_buf meta;         /* the last metadata record kept */
    jfr_chunk_info info;  /* the input chunk's header */
    bool open;            /* between begin and end, no error since begin */
    bool compressed;
    uint64_t last_cp;     /* offset of the last checkpoint written, 0: none */
    uint64_t chunks;
    char err[256];
};

static jfr_status fail(jfr_writer *w, jfr_status s, uint64_t offset, const char *fmt, ...) {
    int n = snprintf(w->err, sizeof w->err, "chunk %llu at byte %llu: ",
                     (unsigned long long)w->info.index, (unsigned long long)offset);
    if (n > 0 && (size_t)n < sizeof w->err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(w->err + n, sizeof w->err - (size_t)n, fmt, ap);
        va_end(ap);
    }
    w->open = false;
    return s;
}

void jfr_writer_config_init(jfr_writer_config *c) {
    memset(c, 0, sizeof *c);
    c->size = sizeof *c;
}

jfr_writer *jfr_writer_new(const jfr_writer_config *config) {
    jfr_writer_config c;
    jfr_writer_config_init(&c);
    if (!config || !jfr__sized_copy(&c, sizeof c, config) || !c.write)
        return NULL;
    if (!c.max_chunk_size)
        c.max_chunk_size = WRITER_DEFAULT_MAX;
    jfr_writer *w = jfr__calloc(&c.allocator, sizeof *w);
    if (!w)
        return NULL;
    w->cfg = c;
    return w;
}

void jfr_writer_free(jfr_writer *w) {
    if (!w)
        return;
    jfr_allocator a = w->cfg.allocator;
    jfr__buf_free(&a, &w->out);
    jfr__buf_free(&a, &w->meta);
    jfr__free(&a, w, sizeof *w);
}

const char *jfr_writer_error(const jfr_writer *w) { return w ? w->err : ""; }
uint64_t jfr_writer_chunks(const jfr_writer *w) { return w ? w->chunks : 0; }

static void put_be(uint8_t *b, uint64_t v, unsigned n) {
    for (unsigned i = 0; i < n; i++)
        b[i] = (uint8_t)(v >> (8 * (n - 1 - i)));
}

/* Room for n more bytes of the chunk (or of the metadata copy), within
 * max_chunk_size for the two together. */
static jfr_status reserve(jfr_writer *w, jfr_buf *b, uint64_t n, uint64_t offset) {
    uint64_t total = (uint64_t)w->out.len + w->meta.len;
    if (n > w->cfg.max_chunk_size || total > w->cfg.max_chunk_size - n)
        return fail(w, JFR_LIMIT, offset, "chunk writer: chunk larger than %llu bytes",
                    (unsigned long long)w->cfg.max_chunk_size);
    if (n > SIZE_MAX)
        return fail(w, JFR_LIMIT, offset, "chunk writer: record too large");
    size_t lim = w->cfg.max_chunk_size > SIZE_MAX ? SIZE_MAX : (size_t)w->cfg.max_chunk_size;
    jfr_status s = jfr__buf_reserve(&w->cfg.allocator, b, (size_t)n, lim); /* capacity too */
    if (s)
        return fail(w, s, offset, "chunk writer: %s", jfr_status_str(s));
    return JFR_OK;
}

jfr_status jfr_writer_begin(jfr_writer *w, jfr_parser *p, const jfr_chunk_info *c) {
    if (!w || !p || !c)
        return JFR_INVALID_ARG;
    w->info = *c;
    w->err[0] = 0;
    w->out.len = 0;
    w->meta.len = 0;
    w->last_cp = 0;
    w->compressed = (c->flags & JFR_CHUNK_COMPRESSED) != 0;
    w->open = true;
    jfr_status s = reserve(w, &w->out, JFR_HEADER_SIZE, c->offset);
    if (s)
        return s;
    memset(w->out.data, 0, JFR_HEADER_SIZE);
    w->out.len = JFR_HEADER_SIZE;
    return JFR_OK;
}

static size_t put_varint(uint8_t *b, uint64_t v) {
    size_t n = 0;
    while (n < 8 && v >= 0x80) {
        b[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    b[n++] = (uint8_t)v; /* the 9th byte carries 8 bits */
    return n;
}

/* v in `width` bytes (4 or 8), every byte but the last with its
 * continuation bit: the size field HotSpot back-patches. */
static void put_padded(uint8_t *b, uint64_t v, unsigned width) {
    for (unsigned i = 0; i + 1 < width; i++)
        b[i] = (uint8_t)(((v >> (7 * i)) & 0x7f) | 0x80);
    b[width - 1] = (uint8_t)((v >> (7 * (width - 1))) & 0x7f);
}

/* A checkpoint record `rec` (n bytes, input offset `off`) appended with its
 * delta to the previous checkpoint written. */
static jfr_status add_checkpoint(jfr_writer *w, const uint8_t *rec, uint64_t n, uint64_t off) {
    uint64_t here = w->out.len;
    uint64_t delta = w->last_cp ? w->last_cp - here : 0; /* negative, two's complement */
    jfr_cur cur = {rec, rec + n, !w->compressed, rec, 0};
    uint64_t size, type, v;
    if (!jfr__cur_int(&cur, &size) || !jfr__cur_long(&cur, &type) || type != 1)
        return fail(w, JFR_BAD_CHECKPOINT, off, "chunk writer: not a checkpoint record");
    const uint8_t *times = cur.p;
    if (!jfr__cur_long(&cur, &v) || !jfr__cur_long(&cur, &v))
        return fail(w, JFR_BAD_CHECKPOINT, off, "chunk writer: checkpoint cut short");
    const uint8_t *delta_at = cur.p;
    if (!jfr__cur_long(&cur, &v))
        return fail(w, JFR_BAD_CHECKPOINT, off, "chunk writer: checkpoint cut short");
    const uint8_t *rest = cur.p;
    if (!w->compressed) { /* fixed widths: the delta patched in place */
        jfr_status s = reserve(w, &w->out, n, off);
        if (s)
            return s;
        uint8_t *d = w->out.data + w->out.len;
        memcpy(d, rec, (size_t)n);
        put_be(d + (delta_at - rec), delta, 8);
        w->out.len += (size_t)n;
        w->last_cp = here;
        return JFR_OK;
    }
    uint8_t dv[9];
    size_t dn = put_varint(dv, delta);
    uint64_t body = 1 + (uint64_t)(delta_at - times) + dn + (uint64_t)(rec + n - rest);
    unsigned width = body + 4 < ((uint64_t)1 << 28) ? 4 : 8;
    uint64_t total = width + body;
    if (total >= (uint64_t)1 << 56)
        return fail(w, JFR_LIMIT, off, "chunk writer: checkpoint too large");
    jfr_status s = reserve(w, &w->out, total, off);
    if (s)
        return s;
    uint8_t *d = w->out.data + w->out.len;
    put_padded(d, total, width);
    d += width;
    *d++ = 1;
    memcpy(d, times, (size_t)(delta_at - times));
    d += delta_at - times;
    memcpy(d, dv, dn);
    d += dn;
    memcpy(d, rest, (size_t)(rec + n - rest));
    w->out.len += (size_t)total;
    w->last_cp = here;
    return JFR_OK;
}

/* The record at input offset abs (n bytes) of chunk c, the unit being
 * dispatched. meta_pos: where in c->base the metadata record the parser
 * reads the chunk with is (the header's, else the last: dispatch.c); other
 * metadata records are passed over, as the JDK's writer does. */
static jfr_status add(jfr_writer *w, const jfr_chunk *c, uint64_t abs, uint64_t n,
                      uint64_t type, uint64_t meta_pos) {
    if (!w->open)
        return w->err[0] ? JFR_INVALID_STATE
                         : fail(w, JFR_INVALID_STATE, abs, "chunk writer: no chunk begun");
    uint64_t start = c->offset + c->base_off;
    if (c->index != w->info.index || abs < start || abs - start > c->size ||
        n > c->size - (abs - start) || n == 0)
        return fail(w, JFR_INVALID_ARG, abs, "chunk writer: not a record of the chunk begun");
    const uint8_t *rec = c->base + (abs - start);
    if (type == 0 && abs - start != meta_pos)
        return JFR_OK;
    if (type == 1)
        return add_checkpoint(w, rec, n, abs);
    jfr_buf *b = type == 0 ? &w->meta : &w->out;
    if (type == 0)
        b->len = 0; /* a live chunk's later segment: its metadata replaces */
    jfr_status s = reserve(w, b, n, abs);
    if (s)
        return s;
    memcpy(b->data + b->len, rec, (size_t)n);
    b->len += (size_t)n;
    return JFR_OK;
}

jfr_status jfr_writer_record(jfr_writer *w, jfr_parser *p, const jfr_record *r) {
    if (!w || !p || !r)
        return JFR_INVALID_ARG;
    return add(w, &p->chunk, r->offset, r->size, r->type_id, p->disp.meta_pos);
}

jfr_status jfr_writer_event(jfr_writer *w, const jfr_event *e) {
    if (!w || !e || !e->chunk_)
        return JFR_INVALID_ARG;
    if (e->chunk_->parser && e->chunk_->parser->opt.ordered)
        return fail(w, JFR_INVALID_STATE, e->offset,
                    "chunk writer: events of an ordered parser are not in file order");
    return add(w, e->chunk_, e->offset, e->size, 2, UINT64_MAX);
}

/* The 68 bytes of a finished chunk's header into h, for a chunk of `size`
 * bytes whose metadata record is at meta_at; the rest from c. */
static void put_header(const jfr_writer *w, uint8_t *h, const jfr_chunk_info *c, uint64_t size,
                       uint64_t meta_at) {
    memcpy(h, "FLR", 4);
    put_be(h + 4, c->major, 2);
    put_be(h + 6, c->minor, 2);
    put_be(h + 8, size, 8);
    put_be(h + 16, w->last_cp, 8);
    put_be(h + 24, meta_at, 8);
    put_be(h + 32, (uint64_t)c->start_nanos, 8);
    put_be(h + 40, (uint64_t)c->duration_nanos, 8);
    put_be(h + 48, (uint64_t)c->start_ticks, 8);
    put_be(h + 56, (uint64_t)c->ticks_per_second, 8);
    h[64] = 0; /* finished */
    h[65] = 0;
    put_be(h + 66, c->flags, 2);
}

jfr_status jfr_writer_end(jfr_writer *w, jfr_parser *p, const jfr_chunk_info *c) {
    if (!w || !p || !c)
        return JFR_INVALID_ARG;
    uint64_t end_off = c->offset + (c->size > 0 ? (uint64_t)c->size : 0);
    if (!w->open)
        return w->err[0] ? JFR_INVALID_STATE
                         : fail(w, JFR_INVALID_STATE, end_off, "chunk writer: no chunk begun");
    if (!w->meta.len)
        return fail(w, JFR_NO_METADATA, end_off, "chunk writer: no metadata record kept");
    uint64_t meta_at = w->out.len;
    jfr_status s = reserve(w, &w->out, w->meta.len, end_off);
    if (s)
        return s;
    memcpy(w->out.data + w->out.len, w->meta.data, w->meta.len);
    w->out.len += w->meta.len;
    w->meta.len = 0;
    put_header(w, w->out.data, c, w->out.len, meta_at);
    w->open = false;
    if (w->cfg.write(w->cfg.user, w->out.data, w->out.len) != 0)
        return fail(w, JFR_IO, end_off, "chunk writer: writing the chunk failed");
    w->chunks++;
    return JFR_OK;
}

jfr_status jfr_writer_snapshot(const jfr_writer *w, jfr_writer_write_fn write, void *user) {
    if (!w || !write)
        return JFR_INVALID_ARG;
    if (!w->open)
        return JFR_INVALID_STATE;
    if (!w->meta.len)
        return JFR_NO_METADATA;
    uint8_t h[JFR_HEADER_SIZE];
    jfr_chunk_info c = w->info;
    c.duration_nanos = 0; /* not known before the chunk ends */
    put_header(w, h, &c, (uint64_t)w->out.len + w->meta.len, w->out.len);
    if (write(user, h, sizeof h) != 0 ||
        (w->out.len > sizeof h &&
         write(user, w->out.data + sizeof h, w->out.len - sizeof h) != 0) ||
        write(user, w->meta.data, w->meta.len) != 0)
        return JFR_IO;
    return JFR_OK;
}

uint64_t jfr_writer_pending(const jfr_writer *w) {
    return w && w->open ? (uint64_t)w->out.len + w->meta.len : 0;
}
