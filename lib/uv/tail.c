/* Tail of a JFR disk repository (or one chunk file): a libuv timer polls the
 * current chunk file's header and feeds each newly flushed byte once; and
 * the repository scanning the tail and the CLI share (jfr_uv_repo_*). */
#include "jfrstream_uv.h"
#include "header.h"
#include "mem.h"
#include "sized.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#ifndef PATH_MAX
#define PATH_MAX 4096
#endif

#define TAIL_POLL_MS 50              /* poll_ms 0 */
#define TAIL_READ_BLOCK (256u << 10) /* bytes per read (the tail's one buffer) */
/* What one turn of the loop reads and feeds at most: the loop's other
 * handles (a listener's peers, metrics scrapes) wait for no longer than the
 * parse of this much (about 1 ms). More is read in the next turn (an idle
 * handle: no poll period lost), so a replay of files already on disk still
 * runs at the parser's speed. */
#define TAIL_TURN_BYTES (1u << 20)
#define TAIL_TURN_FILES 64           /* chunk files finished per turn, likewise */
#define TAIL_GONE_MS 250             /* see check_removed */
#define TAIL_STATE_BYTE 64           /* header offset of the state byte */
#define TAIL_STATE_WRITING 255       /* the writer is rewriting the header */
#define TAIL_CHUNK_SUFFIX ".jfr"

typedef struct tail {
    jfr_uv_tail pub;
    jfr_uv_tail_config cfg; /* cfg.options, cfg.callbacks: the two below */
    jfr_options options;    /* options.allocator: every allocation here */
    jfr_callbacks callbacks;
    uv_loop_t *loop;
    uv_timer_t timer;
    uv_idle_t more;         /* the next turn, when a turn's budget ran out */
    unsigned open_handles;
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
    size_t budget;          /* bytes this turn may still read */
    bool header_fed;
    bool paused;            /* a callback paused the parser: wait for resume */
    bool resume;            /* jfr_uv_tail_resume was called (manual_resume) */
    bool finishing;         /* input ended (end_why): finish once not paused */
    bool in_feed;           /* inside the parser: a stop only sets finishing */
    bool ended;
    jfr_uv_tail_end end_why;
    uint64_t last_activity; /* uv_now of the last byte fed */
    char *buf;
} tail;

/* ------------------------------------------------------ repository scanning */

static bool is_chunk_name(const char *s) {
    size_t n = strlen(s), m = sizeof TAIL_CHUNK_SUFFIX - 1;
    return n > m && strcmp(s + n - m, TAIL_CHUNK_SUFFIX) == 0;
}

/* The one folder walk: fn(entry, ctx) for every entry of `dir`; 0, or
 * libuv's error when `dir` cannot be read. Every entry is read, even after
 * the answer is known: libuv 1.44 leaks the entries left unread. */
static int scan_each(uv_loop_t *loop, const char *dir, void (*fn)(const uv_dirent_t *, void *),
                     void *ctx) {
    uv_fs_t req;
    uv_dirent_t ent;
    int r = uv_fs_scandir(loop, &req, dir, 0, NULL);
    if (r >= 0)
        while (uv_fs_scandir_next(&req, &ent) != UV_EOF)
            fn(&ent, ctx);
    uv_fs_req_cleanup(&req);
    return r < 0 ? r : 0;
}

typedef struct pick {
    uv_loop_t *loop;
    const char *dir, *after;
    char *out;
    size_t outlen;
    int found;
    int64_t bytes; /* folder_bytes */
} pick;

/* smallest chunk file name after p->after */
static void pick_next(const uv_dirent_t *e, void *ctx) {
    pick *p = ctx;
    if (e->type == UV_DIRENT_DIR || !is_chunk_name(e->name) || strlen(e->name) >= p->outlen ||
        (p->after && p->after[0] && strcmp(e->name, p->after) <= 0) ||
        (p->found && strcmp(e->name, p->out) >= 0))
        return;
    snprintf(p->out, p->outlen, "%s", e->name);
    p->found = 1;
}

/* greatest folder name after p->after that holds a chunk file */
static void pick_newest(const uv_dirent_t *e, void *ctx) {
    pick *p = ctx;
    if (e->type != UV_DIRENT_DIR || e->name[0] == '.' || strlen(e->name) >= p->outlen ||
        (p->after && p->after[0] && strcmp(e->name, p->after) <= 0) ||
        (p->found && strcmp(e->name, p->out) <= 0))
        return;
    /* only a folder holding chunk files: JDK 17 creates an empty repository
     * folder at startup and removes it a few ms later */
    char sub[PATH_MAX], name[PATH_MAX];
    int w = snprintf(sub, sizeof sub, "%s/%s", p->dir, e->name);
    if (w < 0 || (size_t)w >= sizeof sub ||
        jfr_uv_repo_next(p->loop, sub, "", name, sizeof name) != 1)
        return;
    snprintf(p->out, p->outlen, "%s", e->name);
    p->found = 1;
}

/* sum of the chunk files' sizes */
static void add_bytes(const uv_dirent_t *e, void *ctx) {
    pick *p = ctx;
    char path[PATH_MAX];
    uv_fs_t st;
    if (e->type == UV_DIRENT_DIR || !is_chunk_name(e->name))
        return;
    int w = snprintf(path, sizeof path, "%s/%s", p->dir, e->name);
    if (w < 0 || (size_t)w >= sizeof path)
        return;
    if (uv_fs_stat(p->loop, &st, path, NULL) == 0)
        p->bytes = (p->bytes < 0 ? 0 : p->bytes) + (int64_t)st.statbuf.st_size;
    uv_fs_req_cleanup(&st);
}

static int repo_pick(uv_loop_t *loop, const char *dir, const char *after, char *out,
                     size_t outlen, void (*fn)(const uv_dirent_t *, void *)) {
    if (!loop || !dir || !out || !outlen)
        return UV_EINVAL;
    pick p = {loop, dir, after, out, outlen, 0, -1};
    int r = scan_each(loop, dir, fn, &p);
    return r < 0 ? r : p.found;
}

int jfr_uv_repo_next(uv_loop_t *loop, const char *dir, const char *after, char *out,
                     size_t outlen) {
    return repo_pick(loop, dir, after, out, outlen, pick_next);
}

int jfr_uv_repo_newest(uv_loop_t *loop, const char *dir, const char *after, char *out,
                       size_t outlen) {
    return repo_pick(loop, dir, after, out, outlen, pick_newest);
}

/* Bytes of the chunk files in folder `dir`; -1 when it holds none. */
static int64_t folder_bytes(uv_loop_t *loop, const char *dir) {
    pick p = {loop, dir, NULL, NULL, 0, 0, -1};
    scan_each(loop, dir, add_bytes, &p);
    return p.bytes;
}

int64_t jfr_uv_repo_bytes(uv_loop_t *loop, const char *path) {
    uv_fs_t req;
    if (!loop || !path)
        return -1;
    int r = uv_fs_stat(loop, &req, path, NULL);
    bool file = r == 0 && !S_ISDIR(req.statbuf.st_mode);
    int64_t n = file ? (int64_t)req.statbuf.st_size : -1;
    uv_fs_req_cleanup(&req);
    if (r < 0 || file)
        return n;
    if ((n = folder_bytes(loop, path)) >= 0)
        return n;
    char name[PATH_MAX], sub[PATH_MAX];
    if (jfr_uv_repo_newest(loop, path, "", name, sizeof name) != 1)
        return -1;
    int w = snprintf(sub, sizeof sub, "%s/%s", path, name);
    return w < 0 || (size_t)w >= sizeof sub ? -1 : folder_bytes(loop, sub);
}

/* --------------------------------------------------------------------- tail */

static void tail_free(tail *t) {
    jfr_allocator a = t->options.allocator;
    jfr_parser_free(t->parser);
    jfr__free(&a, t->buf, TAIL_READ_BLOCK);
    jfr__free(&a, t, sizeof *t);
}

static void tail_closed(uv_handle_t *h) {
    tail *t = h->data;
    if (--t->open_handles == 0)
        tail_free(t);
}

static void close_fd(tail *t) {
    if (t->fd >= 0) {
        uv_fs_t req;
        uv_fs_close(t->loop, &req, t->fd, NULL);
        uv_fs_req_cleanup(&req);
        t->fd = -1;
    }
}

static void tail_end(tail *t, jfr_uv_tail_end why, jfr_status st, const char *msg) {
    if (t->ended)
        return;
    t->ended = true;
    uv_timer_stop(&t->timer);
    uv_idle_stop(&t->more);
    close_fd(t);
    if (!t->file[0]) /* between files: on_end is told the last one read */
        snprintf(t->file, sizeof t->file, "%s", t->lastpath);
    if (t->cfg.on_end)
        t->cfg.on_end(&t->pub, why, st, msg, t->cfg.user);
    uv_close((uv_handle_t *)&t->timer, tail_closed);
    uv_close((uv_handle_t *)&t->more, tail_closed);
}

/* The input ended (idle_ms, jfr_uv_tail_stop): finish the parser, an
 * unfinished chunk is reported. A pause waits for the resume, then finish
 * again (the one pause rule, jfrstream_uv.h). */
static void tail_finish(tail *t) {
    jfr_status s = jfr_parser_finish(t->parser);
    if (s == JFR_PAUSED) {
        t->paused = true;
        return;
    }
    const char *msg = s ? jfr_parser_error(t->parser)
                        : t->end_why == JFR_UV_TAIL_IDLE ? "no new data" : "stopped";
    tail_end(t, t->end_why, s, msg);
}

static void tail_input_end(tail *t, jfr_uv_tail_end why) {
    if (t->ended || t->finishing)
        return;
    t->finishing = true;
    t->end_why = why;
    if (!t->paused && !t->in_feed)
        tail_finish(t);
}

static ssize_t pread_at(tail *t, void *b, size_t n, int64_t off) {
    uv_fs_t req;
    uv_buf_t ub = uv_buf_init(b, (unsigned)n);
    ssize_t r = uv_fs_read(t->loop, &req, t->fd, &ub, 1, off, NULL);
    uv_fs_req_cleanup(&req);
    return r;
}

/* Feed; false when the tail cannot go on now (ended, paused, finishing). */
static bool feed(tail *t, const void *p, size_t n) {
    t->in_feed = true;
    jfr_status s = jfr_parser_feed(t->parser, p, n);
    t->in_feed = false;
    if (s == JFR_PAUSED) {
        /* bytes not taken are read again from the file after the pause */
        t->fed -= n - jfr_parser_consumed(t->parser);
        t->paused = true;
    } else if (s != JFR_OK) {
        tail_end(t, s == JFR_STOPPED ? JFR_UV_TAIL_STOPPED : JFR_UV_TAIL_ERROR, s,
                 jfr_parser_error(t->parser));
    }
    return !t->ended && !t->paused && !t->finishing;
}

static void close_file(tail *t, bool finished) {
    close_fd(t);
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
            /* the root itself holds chunks, or one folder per JVM: the
             * newest holding chunk files (jfr_uv_repo_newest) */
            if (jfr_uv_repo_next(t->loop, t->root, "", name, sizeof name) == 1) {
                snprintf(t->dir, sizeof t->dir, "%s", t->root);
            } else if (jfr_uv_repo_newest(t->loop, t->root, "", name, sizeof name) == 1) {
                int w = snprintf(t->dir, sizeof t->dir, "%s/%s", t->root, name);
                if (w < 0 || (size_t)w >= sizeof t->dir)
                    return false;
            } else {
                return false;
            }
        }
        if (jfr_uv_repo_next(t->loop, t->dir, t->last, name, sizeof name) != 1) {
            /* the folder was removed before anything was read from it:
             * choose again */
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

/* One poll of the open file: read the header with the writer's guard, feed
 * what was flushed, within the turn's budget. */
static void poll_file(tail *t) {
    for (;;) {
        uint8_t h[JFR_HEADER_SIZE], again;
        int64_t at = (int64_t)t->chunk_off;
        if (pread_at(t, h, sizeof h, at) != (ssize_t)sizeof h)
            return; /* header not written yet */
        if (h[TAIL_STATE_BYTE] == TAIL_STATE_WRITING ||
            pread_at(t, &again, 1, at + TAIL_STATE_BYTE) != 1 || again != h[TAIL_STATE_BYTE])
            return; /* being rewritten: next poll */
        if (!jfr__header_magic(h)) {
            char m[96]; /* as the parser names a place: chunk and byte */
            snprintf(m, sizeof m, "chunk %llu at byte %llu: not a JFR chunk (bad magic)",
                     (unsigned long long)(t->parser ? jfr_parser_chunks(t->parser) : 0),
                     (unsigned long long)t->chunk_off);
            tail_end(t, JFR_UV_TAIL_ERROR, JFR_BAD_MAGIC, m);
            return;
        }
        jfr_chunk_info ci;
        jfr__header_decode(h, &ci);
        uint64_t size = (uint64_t)ci.size;
        if (!t->header_fed) {
            t->header_fed = true;
            t->fed = sizeof h;
            t->last_activity = uv_now(t->loop);
            if (!feed(t, h, sizeof h))
                return;
        }
        while (t->fed < size && t->budget) {
            uint64_t want = size - t->fed;
            size_t n = TAIL_READ_BLOCK < t->budget ? TAIL_READ_BLOCK : t->budget;
            if (want < n)
                n = (size_t)want;
            ssize_t r = pread_at(t, t->buf, n, at + (int64_t)t->fed);
            if (r <= 0)
                break;
            t->budget -= (size_t)r;
            t->fed += (uint64_t)r;
            t->last_activity = uv_now(t->loop);
            if (!feed(t, t->buf, (size_t)r))
                return;
        }
        if (ci.state != 0 || t->fed < size)
            return;
        /* another chunk after this one in the same file (a finished
         * multi-chunk recording)? Repository files hold one chunk each. */
        uint8_t magic[4];
        if (pread_at(t, magic, 4, at + (int64_t)size) == 4 && jfr__header_magic(magic)) {
            t->chunk_off += size;
            t->fed = 0;
            t->header_fed = false;
            continue;
        }
        close_file(t, true);
        if (ci.flags & JFR_CHUNK_FINAL)
            tail_end(t, JFR_UV_TAIL_FINAL, JFR_OK, "the JVM finished writing (final chunk)");
        return;
    }
}

/* The JVM removes its chunk files at exit. One created just before can be
 * gone before we open it: the chunk after the last one read never comes.
 * Seen from here: no file open and the last file read gone too, for two
 * polls and TAIL_GONE_MS. (A file already open stays readable once
 * removed.) */
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
    if (now + 1 - t->gone_since < TAIL_GONE_MS)
        return;
    char msg[PATH_MAX + 160];
    snprintf(msg, sizeof msg,
             "the chunk files were removed (JVM exit) before the last ones could be read: "
             "data after %s is lost", t->last);
    tail_end(t, JFR_UV_TAIL_ERROR, JFR_TRUNCATED, msg);
}

/* One turn: resume after a pause, then read what was flushed, at most
 * TAIL_TURN_BYTES and TAIL_TURN_FILES; what is left waits for the next
 * turn of the loop (t->more), not for the next poll. */
static void on_more(uv_idle_t *h);

static void tail_turn(tail *t) {
    uv_idle_stop(&t->more);
    if (t->ended)
        return;
    if (t->paused) {
        if (t->cfg.manual_resume && !t->resume) {
            t->last_activity = uv_now(t->loop); /* held by the application: not idle */
            return;
        }
        t->paused = false;
        t->resume = false;
        if (t->finishing) {
            tail_finish(t);
            return;
        }
        if (!feed(t, NULL, 0)) {
            if (t->finishing && !t->paused && !t->ended)
                tail_finish(t); /* stopped from a callback */
            return;
        }
    }
    if (t->finishing) {
        tail_finish(t);
        return;
    }
    t->budget = TAIL_TURN_BYTES;
    unsigned files = 0;
    while (!t->ended && !t->paused && !t->finishing && t->budget) {
        if (t->fd < 0) {
            if (files == TAIL_TURN_FILES || !open_next(t))
                break;
            files++;
        }
        poll_file(t);
        if (t->fd >= 0 && t->budget) /* still following this file: wait for the next flush */
            break;
    }
    if (t->finishing && !t->paused && !t->ended) {
        tail_finish(t); /* stopped from a callback */
        return;
    }
    if (t->ended || t->paused)
        return;
    if (!t->budget || files == TAIL_TURN_FILES)
        uv_idle_start(&t->more, on_more);
    if (t->fd < 0 && !t->single && t->last[0])
        check_removed(t);
    if (!t->ended && t->cfg.idle_ms &&
        uv_now(t->loop) - t->last_activity >= t->cfg.idle_ms)
        tail_input_end(t, JFR_UV_TAIL_IDLE);
}

static void on_timer(uv_timer_t *tm) { tail_turn(tm->data); }
static void on_more(uv_idle_t *h) { tail_turn(h->data); }

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
    /* the caller's structs first: the options carry the allocator */
    jfr_uv_tail_config cfg;
    jfr_options options;
    jfr_callbacks callbacks;
    jfr_options_init(&options);
    jfr_callbacks_init(&callbacks);
    if (!jfr__sized_copy(&cfg, sizeof cfg, config) || !cfg.path ||
        (cfg.options && !jfr__sized_copy(&options, sizeof options, cfg.options)) ||
        (cfg.callbacks && !jfr__sized_copy(&callbacks, sizeof callbacks, cfg.callbacks)))
        return JFR_INVALID_ARG;
    uv_fs_t req;
    int r = uv_fs_stat(loop, &req, cfg.path, NULL);
    bool is_dir = r == 0 && S_ISDIR(req.statbuf.st_mode);
    uv_fs_req_cleanup(&req);
    if (r < 0) {
        if (uv_error)
            *uv_error = r;
        return JFR_IO;
    }
    tail *t = jfr__calloc(&options.allocator, sizeof *t);
    if (!t)
        return JFR_NOMEM;
    t->cfg = cfg;
    t->options = options;
    t->callbacks = callbacks;
    t->cfg.options = &t->options;
    t->cfg.callbacks = &t->callbacks;
    t->loop = loop;
    t->fd = -1;
    t->single = !is_dir;
    snprintf(t->root, sizeof t->root, "%s", cfg.path);
    t->buf = jfr__alloc(&t->options.allocator, TAIL_READ_BLOCK);
    if (t->buf)
        t->parser = jfr_parser_new(&t->options, &t->callbacks, t);
    if (!t->parser) {
        tail_free(t);
        return JFR_NOMEM;
    }
    uv_timer_init(loop, &t->timer);
    uv_idle_init(loop, &t->more);
    t->timer.data = t->more.data = t;
    t->open_handles = 2;
    t->last_activity = uv_now(loop);
    uv_timer_start(&t->timer, on_timer, 0, cfg.poll_ms ? cfg.poll_ms : TAIL_POLL_MS);
    *out = &t->pub;
    return JFR_OK;
}

void jfr_uv_tail_stop(jfr_uv_tail *pt) {
    if (pt)
        tail_input_end((tail *)pt, JFR_UV_TAIL_STOPPED);
}

void jfr_uv_tail_resume(jfr_uv_tail *pt) {
    tail *t = (tail *)pt;
    if (!t || t->ended || !t->paused)
        return;
    t->resume = true;
    uv_timer_start(&t->timer, on_timer, 0, t->cfg.poll_ms ? t->cfg.poll_ms : TAIL_POLL_MS);
}

jfr_parser *jfr_uv_tail_parser(jfr_uv_tail *t) { return t ? ((tail *)t)->parser : NULL; }
const char *jfr_uv_tail_file(const jfr_uv_tail *t) { return t ? ((const tail *)t)->file : ""; }
