/* Shared preparation (jfr_share): chunk preparations that several parsers
 * reading the same bytes copy instead of each making its own.
 *
 * Slots: FREE -> BUILDING (jfr__share_claim: a thread prepares the chunk on
 * its own worker parser) -> READY or FAILED (jfr__share_publish copies the
 * results in) -> reused for another chunk when one needs the slot and no
 * parser is copying out of it: first one that every parser has reached
 * (or a failed one), then, when the number of parsers is not known, the
 * oldest; a slot some parser has still to reach is kept (the chunk in
 * hand is then not prepared: a parser far ahead of the others does its
 * own work). A parser reaching a chunk whose slot is BUILDING waits for
 * it: its maker is preparing, never waiting. */
#include "internal.h"

#include <pthread.h>

enum { SH_FREE, SH_BUILDING, SH_READY, SH_FAILED };

typedef struct share_slot {
    int state;
    unsigned readers;      /* parsers copying out of it: not evicted */
    unsigned visits;       /* parsers that reached it (copied it or not) */
    uint64_t seq;          /* when it was claimed: the oldest goes first */
    const uint8_t *base;   /* the key: the chunk's address and size */
    uint64_t size;
    uint8_t head[JFR_HEADER_SIZE]; /* its header then: the bytes there now
                                      must still begin with it */
    /* what the preparation was made for */
    uint64_t fingerprint, md_len;
    bool ordered, on_record, use_list;
    uint32_t ntypes;
    uint8_t *want;         /* ntypes entries, want_cap allocated */
    size_t want_cap;
    /* what it made */
    jfr_pool pool;
    jfr_ord *ord;
    size_t nord, capord;
} share_slot;

struct jfr_share {
    jfr_allocator alloc;
    pthread_mutex_t mu;
    pthread_cond_t ready; /* a slot left BUILDING */
    unsigned nslots, parsers;
    share_slot *slots;
    uint64_t seq, prepared, adopted;
};

jfr_share *jfr_share_new(const jfr_allocator *a, unsigned parsers, unsigned slots) {
    jfr_allocator al = {0};
    if (a)
        al = *a;
    if (!slots)
        slots = 4;
    if (slots > 1024)
        slots = 1024;
    jfr_share *s = jfr__calloc(&al, sizeof *s);
    if (!s)
        return NULL;
    s->alloc = al;
    s->nslots = slots;
    s->parsers = parsers;
    if (!(s->slots = jfr__calloc(&al, slots * sizeof *s->slots)))
        goto fail;
    if (pthread_mutex_init(&s->mu, NULL))
        goto fail;
    if (pthread_cond_init(&s->ready, NULL)) {
        pthread_mutex_destroy(&s->mu);
        goto fail;
    }
    return s;
fail:
    jfr__free(&al, s->slots, slots * sizeof *s->slots);
    jfr__free(&al, s, sizeof *s);
    return NULL;
}

void jfr_share_free(jfr_share *s) {
    if (!s)
        return;
    const jfr_allocator *a = &s->alloc;
    for (unsigned i = 0; i < s->nslots; i++) {
        share_slot *sl = &s->slots[i];
        jfr__pool_free(a, &sl->pool);
        jfr__free(a, sl->ord, sl->capord * sizeof *sl->ord);
        jfr__free(a, sl->want, sl->want_cap);
    }
    pthread_cond_destroy(&s->ready);
    pthread_mutex_destroy(&s->mu);
    jfr__free(a, s->slots, s->nslots * sizeof *s->slots);
    jfr_allocator al = s->alloc;
    jfr__free(&al, s, sizeof *s);
}

void jfr_share_stats(jfr_share *s, uint64_t *prepared, uint64_t *adopted) {
    uint64_t pr = 0, ad = 0;
    if (s) {
        pthread_mutex_lock(&s->mu);
        pr = s->prepared;
        ad = s->adopted;
        pthread_mutex_unlock(&s->mu);
    }
    if (prepared)
        *prepared = pr;
    if (adopted)
        *adopted = ad;
}

jfr_status jfr_parser_set_share(jfr_parser *p, jfr_share *s) {
    if (!p)
        return JFR_INVALID_ARG;
    p->mt.share = s;
    return JFR_OK;
}

/* Under the lock: the slot of the chunk at base, or NULL. */
static share_slot *find(jfr_share *s, const uint8_t *base, uint64_t size) {
    for (unsigned i = 0; i < s->nslots; i++) {
        share_slot *sl = &s->slots[i];
        if (sl->state != SH_FREE && sl->base == base && sl->size == size)
            return sl;
    }
    return NULL;
}

int jfr__share_claim(jfr_share *s, const uint8_t *base, uint64_t size) {
    int got = -1;
    pthread_mutex_lock(&s->mu);
    if (!find(s, base, size)) {
        share_slot *pick = NULL;
        for (unsigned i = 0; i < s->nslots; i++) {
            share_slot *sl = &s->slots[i];
            if (sl->state == SH_FREE) {
                pick = sl;
                break;
            }
            bool done = sl->state == SH_FAILED || !s->parsers || sl->visits >= s->parsers;
            if (sl->state != SH_BUILDING && !sl->readers && done &&
                (!pick || sl->seq < pick->seq))
                pick = sl;
        }
        if (pick) {
            pick->state = SH_BUILDING;
            pick->seq = ++s->seq;
            pick->visits = 0;
            pick->base = base;
            pick->size = size;
            memcpy(pick->head, base, sizeof pick->head);
            got = (int)(pick - s->slots);
        }
    }
    pthread_mutex_unlock(&s->mu);
    return got;
}

/* Copy n elements of `size` bytes into *dst (capacity *cap, grown with a). */
static bool copy_array(const jfr_allocator *a, void **dst, size_t *cap, const void *src,
                       size_t n, size_t size) {
    if (n > *cap) {
        void *q = jfr__realloc(a, *dst, *cap * size, n * size);
        if (!q)
            return false;
        *dst = q;
        *cap = n;
    }
    if (n)
        memcpy(*dst, src, n * size);
    return true;
}

/* dst = src, with dst's slots held through a. */
static bool copy_pool(const jfr_allocator *a, jfr_pool *dst, const jfr_pool *src) {
    if (!src->count) {
        jfr__pool_clear(dst);
        return true;
    }
    size_t n = src->mask + 1;
    if (!dst->slots || dst->mask != src->mask) {
        jfr__pool_free(a, dst);
        if (!(dst->slots = jfr__alloc(a, n * sizeof *dst->slots)))
            return false;
        dst->mask = src->mask;
    }
    memcpy(dst->slots, src->slots, n * sizeof *dst->slots);
    dst->count = src->count;
    return true;
}

void jfr__share_publish(jfr_share *s, int slot, const jfr_parser *w, bool ok) {
    share_slot *sl = &s->slots[slot];
    const jfr_allocator *a = &s->alloc;
    const jfr_mdtab *md = w->chunk.md;
    if (ok && md) { /* this thread owns the slot until it leaves BUILDING */
        sl->fingerprint = md->pub.fingerprint;
        sl->md_len = w->meta.md_len;
        sl->ordered = w->opt.ordered;
        sl->on_record = w->cb.on_record != NULL;
        sl->use_list = w->disp.use_list;
        sl->ntypes = md->pub.ntypes;
        size_t wc = sl->want_cap;
        ok = copy_array(a, (void **)&sl->want, &wc, w->sub.want, sl->ntypes, 1) &&
             copy_pool(a, &sl->pool, &w->chunk.pool) &&
             copy_array(a, (void **)&sl->ord, &sl->capord, w->disp.ord, w->disp.nord, sizeof *w->disp.ord);
        sl->want_cap = wc;
        sl->nord = w->disp.nord;
    }
    pthread_mutex_lock(&s->mu);
    sl->state = ok && md ? SH_READY : SH_FAILED;
    s->prepared += sl->state == SH_READY;
    pthread_cond_broadcast(&s->ready);
    pthread_mutex_unlock(&s->mu);
}

bool jfr__share_adopt(jfr_parser *p) {
    jfr_share *s = p->mt.share;
    jfr_chunk *c = &p->chunk;
    const jfr_mdtab *md = c->md;
    share_slot *sl;
    pthread_mutex_lock(&s->mu);
    while ((sl = find(s, c->base, c->size)) && sl->state == SH_BUILDING)
        pthread_cond_wait(&s->ready, &s->mu);
    if (sl)
        sl->visits++;
    bool fits = sl && sl->state == SH_READY && md && c->size >= sizeof sl->head &&
                memcmp(sl->head, c->base, sizeof sl->head) == 0 &&
                sl->fingerprint == md->pub.fingerprint &&
                sl->md_len == p->meta.md_len && sl->ntypes == md->pub.ntypes &&
                sl->ordered == p->opt.ordered && sl->on_record == (p->cb.on_record != NULL) &&
                (!sl->ntypes || memcmp(sl->want, p->sub.want, sl->ntypes) == 0); /* none: NULL */
    if (fits)
        sl->readers++;
    pthread_mutex_unlock(&s->mu);
    if (!fits)
        return false;
    const jfr_allocator *a = &p->opt.allocator;
    bool ok = copy_pool(a, &c->pool, &sl->pool) &&
              copy_array(a, (void **)&p->disp.ord, &p->disp.capord, sl->ord, sl->nord, sizeof *p->disp.ord);
    if (ok) {
        p->disp.nord = sl->nord;
        p->disp.use_list = sl->use_list;
    } else {
        jfr__pool_clear(&c->pool); /* the parser indexes it itself */
    }
    pthread_mutex_lock(&s->mu);
    sl->readers--;
    s->adopted += ok;
    pthread_mutex_unlock(&s->mu);
    return ok;
}
