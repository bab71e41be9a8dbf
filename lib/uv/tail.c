/* Tail of a JFR disk repository (or one chunk file): a libuv timer polls the
 * current chunk file's header and feeds each newly flushed byte once. */
#include "jfrstream_uv.h"
#include "header.h"
#include "sized.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef PATH_MAX
#define PATH_MAX 4096
#endif

typedef struct tail {
    jfr_uv_tail pub;
    jfr_uv_tail_config cfg; /* cfg.options, cfg.callbacks: the two below */
    jfr_options options;
    jfr_callbacks callbacks;
    uv_loop_t *loop;
    uv_timer_t timer;
    jfr_parser *parser;
    char root[PATH_MAX];
    char dir[PATH_MAX];     /* folder of chunk files being followed ("" = none yet) */
    char file[PATH_MAX];    /* current chunk file ("" = none) */
    char last[PATH_MAX];    /* name of the last finished chunk file */
    char lastpath[PATH_MAX]; /* its path: jfr_uv_tail_file() in on_end */
    uint64_t gone_since;    /* uv_now + 1 when `lastpath` was first seen gone */
    bool single;            /* root is one file */
    int fd;
    uint64_t chunk_off;     /* offset of the current chunk in the file */
    uint64_t fed;           /* bytes of the current chunk fed */
    bool header_fed;
    bool paused;
    bool resume;            /* jfr_uv_tail_resume was called (manual_resume) */
    bool ended;
    uint64_t last_activity; /* uv_now of the last byte fed */
    char *buf;
} tail;

#define TAIL_BLOCK (1u << 20)

static bool has_suffix(const char *s, const char *suf) {
    size_t n = strlen(s), m = strlen(suf);
    return n >= m && strcmp(s + n - m, suf) == 0;
}

/* Smallest entry name of `dir` (of the wanted kind) greater than `after`;
 * for folders, the greatest (the newest repository folder). */
static bool scan(uv_loop_t *loop, const char *dir, bool want_dir, const char *after,
                 char *out, size_t outlen) {
    uv_fs_t req;
    uv_dirent_t ent;
    bool found = false;
    if (uv_fs_scandir(loop, &req, dir, 0, NULL) < 0) {
        uv_fs_req_cleanup(&req);
        return false;
    }
    while (uv_fs_scandir_next(&req, &ent) != UV_EOF) {
        bool is_dir = ent.type == UV_DIRENT_DIR;
        if (want_dir) {
            if (!is_dir || ent.name[0] == '.')
                continue;
            if (!found || strcmp(ent.name, out) > 0) {
                snprintf(out, outlen, "%s", ent.name);
                found = true;
            }
        } else {
            if (is_dir || !has_suffix(ent.name, ".jfr"))
                continue;
            if (after[0] && strcmp(ent.name, after) <= 0)
                continue;
            if (!found || strcmp(ent.name, out) < 0) {
                snprintf(out, outlen, "%s", ent.name);
                found = true;
            }
        }
    }
    uv_fs_req_cleanup(&req);
    return found;
}

static void tail_closed(uv_handle_t *h) {
    tail *t = h->data;
    jfr_parser_free(t->parser);
    free(t->buf);
    free(t);
}

static void tail_end(tail *t, jfr_uv_tail_end why, jfr_status st, const char *msg) {
    if (t->ended)
        return;
    t->ended = true;
    uv_timer_stop(&t->timer);
    if (t->fd >= 0) {
        uv_fs_t req;
        uv_fs_close(t->loop, &req, t->fd, NULL);
        uv_fs_req_cleanup(&req);
        t->fd = -1;
    }
    if (!t->file[0]) /* between files: on_end is told the last one read */
        snprintf(t->file, sizeof t->file, "%s", t->lastpath);
    if (t->cfg.on_end)
        t->cfg.on_end(&t->pub, why, st, msg, t->cfg.user);
    uv_close((uv_handle_t *)&t->timer, tail_closed);
}

static ssize_t pread_at(tail *t, void *b, size_t n, int64_t off) {
    uv_fs_t req;
    uv_buf_t ub = uv_buf_init(b, (unsigned)n);
    ssize_t r = uv_fs_read(t->loop, &req, t->fd, &ub, 1, off, NULL);
    uv_fs_req_cleanup(&req);
    return r;
}

/* Feed; false when the tail ended. */
static bool feed(tail *t, const void *p, size_t n) {
    jfr_status s = jfr_parser_feed(t->parser, p, n);
    if (s == JFR_OK)
        return true;
    if (s == JFR_PAUSED) {
        /* bytes not taken are read again from the file after the pause */
        t->fed -= n - jfr_parser_consumed(t->parser);
        t->paused = true;
        return true;
    }
    tail_end(t, s == JFR_STOPPED ? JFR_UV_TAIL_STOPPED : JFR_UV_TAIL_ERROR, s,
             jfr_parser_error(t->parser));
    return false;
}

static void close_file(tail *t, bool finished) {
    uv_fs_t req;
    if (t->fd >= 0) {
        uv_fs_close(t->loop, &req, t->fd, NULL);
        uv_fs_req_cleanup(&req);
    }
    t->fd = -1;
    if (finished) {
        const char *slash = strrchr(t->file, '/');
        snprintf(t->last, sizeof t->last, "%s", slash ? slash + 1 : t->file);
        memcpy(t->lastpath, t->file, sizeof t->lastpath);
    }
    t->file[0] = 0;
    t->fed = t->chunk_off = 0;
    t->header_fed = false;
}

/* Pick the chunk file to read next. */
static bool open_next(tail *t) {
    char name[PATH_MAX];
    if (t->single) {
        if (t->last[0])
            return false;
        snprintf(t->file, sizeof t->file, "%s", t->root);
    } else {
        if (!t->dir[0]) {
            /* the root itself holds chunks, or one folder per JVM */
            if (scan(t->loop, t->root, false, "", name, sizeof name)) {
                snprintf(t->dir, sizeof t->dir, "%s", t->root);
            } else if (scan(t->loop, t->root, true, "", name, sizeof name)) {
                int w = snprintf(t->dir, sizeof t->dir, "%s/%s", t->root, name);
                if (w < 0 || (size_t)w >= sizeof t->dir)
                    return false;
            } else {
                return false;
            }
        }
        if (!scan(t->loop, t->dir, false, t->last, name, sizeof name)) {
            /* A JVM can create an empty folder, remove it and write its
             * chunks in another: re-pick while nothing was read from it. */
            if (!t->last[0] && strcmp(t->dir, t->root) != 0)
                t->dir[0] = 0;
            return false;
        }
        int w = snprintf(t->file, sizeof t->file, "%s/%s", t->dir, name);
        if (w < 0 || (size_t)w >= sizeof t->file)
            return false;
    }
    uv_fs_t req;
    int fd = uv_fs_open(t->loop, &req, t->file, UV_FS_O_RDONLY, 0, NULL);
    uv_fs_req_cleanup(&req);
    if (fd < 0) {
        t->file[0] = 0;
        return false;
    }
    t->fd = fd;
    t->fed = t->chunk_off = 0;
    t->header_fed = false;
    return true;
}

/* One poll: read the header with the writer's guard, feed what was flushed. */
static void poll_file(tail *t) {
    uint8_t h[JFR_HEADER_SIZE], again;
    int64_t at = (int64_t)t->chunk_off;
    if (pread_at(t, h, sizeof h, at) != (ssize_t)sizeof h)
        return; /* header not written yet */
    if (h[64] == 255 || pread_at(t, &again, 1, at + 64) != 1 || again != h[64])
        return; /* being rewritten: next poll */
    if (!jfr__header_magic(h)) {
        tail_end(t, JFR_UV_TAIL_ERROR, JFR_BAD_MAGIC, "not a JFR chunk file");
        return;
    }
    jfr_chunk_info ci;
    jfr__header_decode(h, &ci);
    uint64_t size = (uint64_t)ci.size;
    uint8_t state = ci.state;
    uint16_t flags = ci.flags;
    if (!t->header_fed) {
        t->header_fed = true;
        t->fed = sizeof h;
        t->last_activity = uv_now(t->loop);
        if (!feed(t, h, sizeof h) || t->paused)
            return;
    }
    while (t->fed < size && !t->ended && !t->paused) {
        uint64_t want = size - t->fed;
        size_t n = want < TAIL_BLOCK ? (size_t)want : TAIL_BLOCK;
        ssize_t r = pread_at(t, t->buf, n, at + (int64_t)t->fed);
        if (r <= 0)
            break;
        t->fed += (uint64_t)r;
        t->last_activity = uv_now(t->loop);
        if (!feed(t, t->buf, (size_t)r))
            return;
    }
    if (t->ended || t->paused)
        return;
    if (state == 0 && t->fed >= size) {
        /* another chunk after this one in the same file (a finished
         * multi-chunk recording)? Repository files hold one chunk each. */
        uint8_t magic[4];
        if (pread_at(t, magic, 4, at + (int64_t)size) == 4 && jfr__header_magic(magic)) {
            t->chunk_off += size;
            t->fed = 0;
            t->header_fed = false;
            poll_file(t);
            return;
        }
        close_file(t, true);
        if (flags & JFR_CHUNK_FINAL)
            tail_end(t, JFR_UV_TAIL_FINAL, JFR_OK, "the JVM finished writing (final chunk)");
    }
}

/* The JVM removes its chunk files at exit. One created just before can be
 * gone before we open it: the chunk after the last one read never comes.
 * Seen from here: no file open and the last file read gone too, for two
 * polls and 250 ms. (A file already open stays readable once removed.) */
static void check_removed(tail *t) {
    uv_fs_t req;
    bool gone = uv_fs_stat(t->loop, &req, t->lastpath, NULL) == UV_ENOENT;
    uv_fs_req_cleanup(&req);
    uint64_t now = uv_now(t->loop);
    if (!gone) {
        t->gone_since = 0;
        return;
    }
    if (!t->gone_since) {
        t->gone_since = now + 1;
        return;
    }
    if (now + 1 - t->gone_since < 250)
        return;
    char msg[PATH_MAX + 160];
    snprintf(msg, sizeof msg,
             "the chunk files were removed (JVM exit) before the last ones could be read: "
             "data after %s is lost", t->last);
    tail_end(t, JFR_UV_TAIL_ERROR, JFR_TRUNCATED, msg);
}

static void on_timer(uv_timer_t *tm) {
    tail *t = tm->data;
    if (t->paused && t->cfg.manual_resume && !t->resume) {
        t->last_activity = uv_now(t->loop); /* held by the application: not idle */
        return;
    }
    t->resume = false;
    if (t->paused) {
        t->paused = false;
        if (!feed(t, NULL, 0) || t->paused)
            return;
    }
    for (int guard = 0; guard < 64 && !t->ended && !t->paused; guard++) {
        if (t->fd < 0 && !open_next(t))
            break;
        poll_file(t);
        if (t->fd >= 0) /* still following this file: wait for the next flush */
            break;
    }
    if (!t->ended && t->fd < 0 && !t->single && t->last[0])
        check_removed(t);
    if (!t->ended && t->cfg.idle_ms &&
        uv_now(t->loop) - t->last_activity >= t->cfg.idle_ms) {
        /* an unfinished chunk is reported (on_error), as at a stop */
        jfr_status s = jfr_parser_finish(t->parser);
        tail_end(t, JFR_UV_TAIL_IDLE, s, s ? jfr_parser_error(t->parser) : "no new data");
    }
}

void jfr_uv_tail_config_init(jfr_uv_tail_config *cfg) {
    memset(cfg, 0, sizeof *cfg);
    cfg->size = sizeof *cfg;
}

jfr_status jfr_uv_tail_start(uv_loop_t *loop, const jfr_uv_tail_config *config,
                             jfr_uv_tail **out, int *uv_error) {
    if (uv_error)
        *uv_error = 0;
    if (!loop || !config || !out)
        return JFR_INVALID_ARG;
    tail *t = calloc(1, sizeof *t);
    if (!t)
        return JFR_NOMEM;
    jfr_uv_tail_config *cfg = &t->cfg;
    jfr_options_init(&t->options);
    jfr_callbacks_init(&t->callbacks);
    if (!jfr__sized_copy(cfg, sizeof *cfg, config) || !cfg->path ||
        (cfg->options && !jfr__sized_copy(&t->options, sizeof t->options, cfg->options)) ||
        (cfg->callbacks &&
         !jfr__sized_copy(&t->callbacks, sizeof t->callbacks, cfg->callbacks))) {
        free(t);
        return JFR_INVALID_ARG;
    }
    cfg->options = &t->options;
    cfg->callbacks = &t->callbacks;
    uv_fs_t req;
    int r = uv_fs_stat(loop, &req, cfg->path, NULL);
    bool is_dir = r == 0 && (req.statbuf.st_mode & S_IFMT) == S_IFDIR;
    uv_fs_req_cleanup(&req);
    if (r < 0) {
        free(t);
        if (uv_error)
            *uv_error = r;
        return JFR_IO;
    }
    t->loop = loop;
    t->fd = -1;
    t->single = !is_dir;
    snprintf(t->root, sizeof t->root, "%s", cfg->path);
    t->buf = malloc(TAIL_BLOCK);
    t->parser = jfr_parser_new(&t->options, &t->callbacks, t);
    if (!t->buf || !t->parser) {
        jfr_parser_free(t->parser);
        free(t->buf);
        free(t);
        return JFR_NOMEM;
    }
    uv_timer_init(loop, &t->timer);
    t->timer.data = t;
    t->last_activity = uv_now(loop);
    uint64_t every = cfg->poll_ms ? cfg->poll_ms : 50;
    uv_timer_start(&t->timer, on_timer, 0, every);
    *out = &t->pub;
    return JFR_OK;
}

void jfr_uv_tail_stop(jfr_uv_tail *pt) {
    tail *t = (tail *)pt;
    if (t->ended)
        return;
    jfr_status s = jfr_parser_finish(t->parser);
    tail_end(t, JFR_UV_TAIL_STOPPED, s, s ? jfr_parser_error(t->parser) : "stopped");
}

void jfr_uv_tail_resume(jfr_uv_tail *pt) {
    tail *t = (tail *)pt;
    if (t->ended || !t->paused)
        return;
    t->resume = true;
    uv_timer_start(&t->timer, on_timer, 0, t->cfg.poll_ms ? t->cfg.poll_ms : 50);
}

jfr_parser *jfr_uv_tail_parser(jfr_uv_tail *t) { return ((tail *)t)->parser; }
const char *jfr_uv_tail_file(const jfr_uv_tail *t) { return ((const tail *)t)->file; }
