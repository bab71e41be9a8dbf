/* Parallel preparation of finished chunks (jfr_parser_set_threads > 1).
 *
 * When one feed call holds several whole finished chunks, the chunks after
 * the one being delivered are prepared on helper threads, each in a slot
 * with a private worker parser: jfr__chunk_prepare (dispatch.c) runs there
 * the same code the calling thread would (index_unit, map_subscriptions and
 * scan_unit: metadata, pools, the list of wanted events), with copies of the
 * callbacks and subscriptions as they are when the chunk is queued. The
 * calling thread adopts a successful preparation at that chunk's turn and
 * makes every callback itself; a failed one is dropped and the chunk is
 * processed serially, so the callbacks, errors included, are those of the
 * serial path.
 *
 * Slots: FREE -> QUEUED (calling thread, under the lock: the worker parser
 * is set up) -> RUNNING (a helper took it; only that helper touches the
 * worker parser) -> READY (helper done) -> ADOPTED (p->mt.prep: the calling
 * thread uses the results) -> FREE. The chunk bytes belong to the caller's
 * feed call: before feed returns, jfr__par_quiesce cancels the running
 * preparations, waits for them and drops every slot but the adopted one
 * (whose results are offsets and tables, no pointers into the buffer: a
 * paused chunk is resumed from the parser's own copy). */
#include "internal.h"

#include <pthread.h>

/* Helper threads per parser at most. */
#define JFR_MAX_THREADS 64

enum { SL_FREE, SL_QUEUED, SL_RUNNING, SL_READY, SL_ADOPTED };

typedef struct jfr_slot {
    int state;           /* under par->mu */
    bool ok;             /* READY: the preparation succeeded */
    atomic_bool cancel;  /* RUNNING: give up (the result is not wanted) */
    uint64_t offset;     /* absolute input offset of the chunk */
    const uint8_t *base; /* the chunk in the caller's buffer */
    jfr_parser *w;       /* worker parser: chunk state, md, pools, event list */
} jfr_slot;

typedef struct jfr_par {
    pthread_mutex_t mu;
    pthread_cond_t work; /* a slot was queued, or quit */
    pthread_cond_t done; /* a slot left RUNNING */
    bool quit;
    unsigned nslots, nthreads;
    jfr_slot *slots;
    pthread_t *threads;
} jfr_par;

/* Under the lock, slot QUEUED: prepare it (the lock released meanwhile). */
static void run_slot(jfr_par *par, jfr_slot *sl) {
    sl->state = SL_RUNNING;
    pthread_mutex_unlock(&par->mu);
    bool ok = jfr__chunk_prepare(sl->w, &sl->cancel) == JFR_OK;
    pthread_mutex_lock(&par->mu);
    sl->ok = ok;
    sl->state = SL_READY;
    pthread_cond_broadcast(&par->done);
}

/* Under the lock: the queued slot of the earliest chunk, or NULL. */
static jfr_slot *earliest_queued(jfr_par *par) {
    jfr_slot *sl = NULL;
    for (unsigned i = 0; i < par->nslots; i++)
        if (par->slots[i].state == SL_QUEUED && (!sl || par->slots[i].offset < sl->offset))
            sl = &par->slots[i];
    return sl;
}

static void *helper(void *arg) {
    jfr_par *par = arg;
    pthread_mutex_lock(&par->mu);
    for (;;) {
        jfr_slot *sl = earliest_queued(par); /* the earliest chunk first */
        if (par->quit)
            break;
        if (!sl) {
            pthread_cond_wait(&par->work, &par->mu);
            continue;
        }
        run_slot(par, sl);
    }
    pthread_mutex_unlock(&par->mu);
    return NULL;
}

/* Under the lock: a slot no longer wanted. A running one is cancelled and
 * stays RUNNING until its helper is done (then READY, dropped later). */
static void drop(jfr_slot *sl) {
    if (sl->state == SL_RUNNING)
        atomic_store_explicit(&sl->cancel, true, memory_order_relaxed);
    else
        sl->state = SL_FREE;
}

static void par_destroy(jfr_parser *p, jfr_par *par) {
    const jfr_allocator *a = &p->opt.allocator;
    if (par->threads) {
        pthread_mutex_lock(&par->mu);
        for (unsigned i = 0; par->slots && i < par->nslots; i++)
            if (par->slots[i].state == SL_RUNNING)
                drop(&par->slots[i]);
        par->quit = true;
        pthread_cond_broadcast(&par->work);
        pthread_mutex_unlock(&par->mu);
        for (unsigned i = 0; i < par->nthreads; i++)
            pthread_join(par->threads[i], NULL);
    }
    for (unsigned i = 0; par->slots && i < par->nslots; i++)
        if (par->slots[i].w)
            jfr__parser_destroy(par->slots[i].w);
    jfr__free(a, par->slots, par->nslots * sizeof *par->slots);
    jfr__free(a, par->threads, par->nslots * sizeof *par->threads);
    pthread_cond_destroy(&par->done);
    pthread_cond_destroy(&par->work);
    pthread_mutex_destroy(&par->mu);
    jfr__free(a, par, sizeof *par);
}

/* threads + 1 slots (the adopted chunk, one per helper, and one the calling
 * thread prepares while it waits), threads - 1 helpers.
 * NULL when anything fails: the parser then stays serial. */
static jfr_par *par_new(jfr_parser *p) {
    const jfr_allocator *a = &p->opt.allocator;
    unsigned n = p->mt.threads > JFR_MAX_THREADS + 1 ? JFR_MAX_THREADS + 1 : p->mt.threads;
    jfr_par *par = jfr__calloc(a, sizeof *par);
    if (!par)
        return NULL;
    if (pthread_mutex_init(&par->mu, NULL)) {
        jfr__free(a, par, sizeof *par);
        return NULL;
    }
    if (pthread_cond_init(&par->work, NULL)) {
        pthread_mutex_destroy(&par->mu);
        jfr__free(a, par, sizeof *par);
        return NULL;
    }
    if (pthread_cond_init(&par->done, NULL)) {
        pthread_cond_destroy(&par->work);
        pthread_mutex_destroy(&par->mu);
        jfr__free(a, par, sizeof *par);
        return NULL;
    }
    par->nslots = n + 1;
    par->slots = jfr__calloc(a, par->nslots * sizeof *par->slots);
    if (!par->slots) {
        par_destroy(p, par);
        return NULL;
    }
    for (unsigned i = 0; i < par->nslots; i++) { /* workers are serial (threads 0) */
        atomic_init(&par->slots[i].cancel, false);
        /* the callbacks are copied for what scan_unit decides from them
         * (never called there) */
        if (!(par->slots[i].w = jfr__parser_create(&p->opt, &p->cb, NULL))) {
            par_destroy(p, par);
            return NULL;
        }
    }
    par->threads = jfr__calloc(a, par->nslots * sizeof *par->threads);
    if (!par->threads) {
        par_destroy(p, par);
        return NULL;
    }
    while (par->nthreads < n - 1 &&
           pthread_create(&par->threads[par->nthreads], NULL, helper, par) == 0)
        par->nthreads++;
    if (!par->nthreads) {
        par_destroy(p, par);
        return NULL;
    }
    return par;
}

/* A header that the serial path would accept as a whole finished chunk of
 * `left` bytes or fewer; its size (and *ci decoded), or 0. */
static uint64_t finished_chunk(const jfr_parser *p, const uint8_t *h, size_t left,
                               jfr_chunk_info *ci) {
    if (left < JFR_HEADER_SIZE || !jfr__header_magic(h))
        return 0;
    jfr__header_decode(h, ci);
    if (!jfr__major_ok(ci->major) || ci->state != 0)
        return 0;
    int64_t size = ci->size;
    if (size <= JFR_HEADER_SIZE || (uint64_t)size > p->opt.max_chunk_size ||
        (uint64_t)size > left)
        return 0;
    return (uint64_t)size;
}

/* Set the worker parser w up to prepare the finished chunk at h for p.
 * False when the subscriptions cannot be copied (memory). */
static bool setup_worker(const jfr_parser *p, jfr_parser *w, const uint8_t *h,
                         const jfr_chunk_info *hi, uint64_t offset, uint64_t index) {
    uint64_t size = (uint64_t)hi->size;
    /* subscriptions only grow: copy the new ones, so that the worker lists
     * the events of the types wanted now (adopt_scan and jfr__share_adopt
     * check that this is still so at the chunk's turn) */
    while (w->sub.nsubs < p->sub.nsubs) {
        const jfr_sub *sub = &p->sub.subs[w->sub.nsubs];
        if (jfr_parser_on(w, sub->name, sub->cb, NULL) != JFR_OK)
            return false;
    }
    memset(&w->info, 0, sizeof w->info);
    w->info.index = index; /* messages only: a failure is redone serially */
    w->info.offset = offset;
    w->info.size = (int64_t)size;
    w->info.metadata_offset = hi->metadata_offset;
    w->info.flags = hi->flags;
    w->lv.live = false;
    w->opt.ordered = p->disp.ordered_next >= 0 ? p->disp.ordered_next != 0 : p->opt.ordered;
    jfr_chunk *c = &w->chunk;
    c->base = h;
    c->size = size;
    c->base_off = 0;
    c->first_rec = JFR_HEADER_SIZE;
    c->compressed = (w->info.flags & JFR_CHUNK_COMPRESSED) != 0;
    c->index = index;
    c->offset = offset;
    c->md = NULL;
    c->tb_start_nanos = c->tb_start_ticks = 0; /* conversions unused */
    c->tb_divisor = 1.0;
    return true;
}

/* Under the lock, slot FREE: set its worker parser up for the chunk at h.
 * False when the subscriptions cannot be copied (memory). */
static bool queue(jfr_parser *p, jfr_slot *sl, const uint8_t *h, const jfr_chunk_info *hi,
                  uint64_t offset, uint64_t index) {
    if (!setup_worker(p, sl->w, h, hi, offset, index))
        return false;
    sl->base = h;
    sl->offset = offset;
    sl->ok = false;
    atomic_store_explicit(&sl->cancel, false, memory_order_relaxed);
    sl->state = SL_QUEUED;
    pthread_cond_signal(&p->mt.par->work);
    return true;
}

/* Under the lock: queue the whole finished chunks of this feed call after
 * the one at `at` (nearest first) into the free slots. */
static void queue_following(jfr_parser *p, jfr_par *par, const uint8_t *at, size_t avail) {
    const uint8_t *h = at;
    size_t left = avail;
    uint64_t off = p->info.offset, size = p->chunk.size, index = p->info.index;
    for (;;) {
        h += size;
        left -= size;
        off += size;
        index++;
        jfr_chunk_info hi;
        if (!(size = finished_chunk(p, h, left, &hi)))
            break;
        jfr_slot *fr = NULL;
        bool have = false;
        for (unsigned i = 0; i < par->nslots && !have; i++) {
            jfr_slot *sl = &par->slots[i];
            if (sl->state == SL_FREE)
                fr = fr ? fr : sl;
            else
                have = sl->offset == off && sl->base == h;
        }
        if (have)
            continue;
        if (!fr || !queue(p, fr, h, &hi, off, index))
            break;
    }
}

void jfr__par_chunk(jfr_parser *p, const uint8_t *at, size_t avail) {
    if (p->mt.prep)
        jfr__par_release(p);
    if (!p->mt.par && !(p->mt.par = par_new(p)))
        return; /* no threads: serial */
    jfr_par *par = p->mt.par;
    uint64_t off = p->info.offset;
    pthread_mutex_lock(&par->mu);
    /* drop the preparations of chunks already behind, and this chunk's
     * if no helper has started it (serial is as fast) */
    jfr_slot *cur = NULL;
    for (unsigned i = 0; i < par->nslots; i++) {
        jfr_slot *sl = &par->slots[i];
        if (sl->state == SL_FREE || sl->offset > off)
            continue;
        if (sl->offset < off || sl->base != at || sl->state == SL_QUEUED)
            drop(sl);
        else
            cur = sl;
    }
    /* the helpers get the following chunks first; then, while a helper
     * prepares this one, the calling thread prepares a later one that no
     * helper has started (a consumer whose callbacks are light, a view of a
     * few types, would else wait for the helpers one chunk at a time) */
    queue_following(p, par, at, avail);
    if (cur) {
        while (cur->state == SL_RUNNING) {
            jfr_slot *later = earliest_queued(par);
            if (later)
                run_slot(par, later);
            else
                pthread_cond_wait(&par->done, &par->mu);
        }
        if (cur->state == SL_READY && cur->ok) {
            cur->state = SL_ADOPTED;
            p->mt.prep = cur->w;
        } else {
            cur->state = SL_FREE; /* failed: the serial path reports why */
        }
    }
    pthread_mutex_unlock(&par->mu);
}

void jfr__par_release(jfr_parser *p) {
    jfr_par *par = p->mt.par;
    if (!p->mt.prep || !par)
        return;
    pthread_mutex_lock(&par->mu);
    for (unsigned i = 0; i < par->nslots; i++)
        if (par->slots[i].w == p->mt.prep)
            par->slots[i].state = SL_FREE;
    pthread_mutex_unlock(&par->mu);
    p->mt.prep = NULL;
}

void jfr__par_quiesce(jfr_parser *p) {
    jfr_par *par = p->mt.par;
    if (!par)
        return;
    if (p->mt.prep && p->state != ST_DISPATCH)
        jfr__par_release(p);
    pthread_mutex_lock(&par->mu);
    for (;;) {
        bool running = false;
        for (unsigned i = 0; i < par->nslots; i++) {
            jfr_slot *sl = &par->slots[i];
            if (sl->state == SL_ADOPTED)
                continue;
            drop(sl);
            running |= sl->state == SL_RUNNING;
        }
        if (!running)
            break;
        pthread_cond_wait(&par->done, &par->mu);
    }
    pthread_mutex_unlock(&par->mu);
}

void jfr__par_free(jfr_parser *p) {
    if (p->mt.share_w) {
        jfr__parser_destroy(p->mt.share_w);
        p->mt.share_w = NULL;
    }
    if (!p->mt.par)
        return;
    par_destroy(p, p->mt.par);
    p->mt.par = NULL;
    p->mt.prep = NULL;
}

/* ------------------------------------------------- shared preparation */

jfr_status jfr_parser_prepare(jfr_parser *p, const void *buf, size_t len, bool *made) {
    if (made)
        *made = false;
    if (!p || !p->mt.share || !buf)
        return JFR_INVALID_ARG;
    jfr_chunk_info hi;
    uint64_t size = finished_chunk(p, buf, len, &hi);
    if (!size)
        return JFR_OK; /* not a whole finished chunk: the parsers' business */
    if (!p->mt.share_w && !(p->mt.share_w = jfr__parser_create(&p->opt, &p->cb, NULL)))
        return JFR_NOMEM;
    int slot = jfr__share_claim(p->mt.share, buf, size);
    if (slot < 0)
        return JFR_OK;
    jfr_parser *w = p->mt.share_w;
    bool ok = setup_worker(p, w, buf, &hi, 0, 0) && jfr__chunk_prepare(w, NULL) == JFR_OK;
    jfr__share_publish(p->mt.share, slot, w, ok);
    if (made)
        *made = true;
    return JFR_OK;
}
