/*
 * kafka_track.c — what a sender has delivered (jfrstream_sink.h, "Kafka",
 * DELIVERED; kafka.h): a slot per message in the order its events came,
 * the positions the application marked, and per source id the watermark
 * through which everything was delivered, which later senders of the same
 * id read to skip what was delivered already (an LRU table of KWM_MAX ids).
 * Built with librdkafka only (lib/sink/meson.build).
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#include "kafka.h"

/* ------------------------------------------------------------ slots */

kslot *kafka_slot_new(jfrs_kafka *k, krec *r) {
    uint64_t i = r->seq_next - r->bseq;
    if (!r->btail || i % KBLOCK == 0) { /* the last block is full (or none) */
        kblock *b = r->spare;
        if (b)
            r->spare = NULL;
        else if (!(b = jfr__alloc(&k->a, sizeof *b)))
            return NULL;
        b->next = NULL;
        if (r->btail)
            r->btail->next = b;
        else {
            r->bhead = b;
            r->bseq = r->seq_next;
            i = 0;
        }
        r->btail = b;
    }
    kslot *s = &r->btail->s[i % KBLOCK];
    s->r = r;
    s->state = KSLOT_WAIT;
    r->seq_next++;
    return s;
}

static void wm_raise(krec *r, const kmark *m) {
    kwm *w = r->wm;
    if (!w || !m->cs_ok)
        return;
    if (!w->set || m->cs > w->cs || (m->cs == w->cs && m->off > w->off)) {
        w->cs = m->cs;
        w->off = m->off;
        w->set = true;
    }
}

/* Past the settled slots at the head; then the marks they reach. */
void kafka_settle(jfrs_kafka *k, kslot *s, bool ok) {
    krec *r = s->r;
    s->state = ok ? KSLOT_DONE : KSLOT_FAILED;
    while (r->seq_head < r->seq_next && r->bhead) { /* unsettled slots: a block */
        uint64_t i = r->seq_head - r->bseq;
        kslot *h = &r->bhead->s[i];
        if (h->state == KSLOT_WAIT)
            break;
        if (h->state == KSLOT_FAILED) {
            r->failed = true;
            break;
        }
        r->seq_head++;
        if (i + 1 == KBLOCK) { /* the head block is all settled */
            kblock *b = r->bhead;
            r->bhead = b->next;
            r->bseq += KBLOCK;
            if (!r->bhead)
                r->btail = NULL;
            if (r->spare)
                jfr__free(&k->a, b, sizeof *b);
            else
                r->spare = b;
        }
    }
    while (r->nmarks && r->marks[r->mhead].seq <= r->seq_head) {
        const kmark *m = &r->marks[r->mhead];
        r->acked = m->pos;
        wm_raise(r, m);
        r->mhead = (r->mhead + 1) % r->capmarks;
        r->nmarks--;
    }
}

void kafka_track_free(jfrs_kafka *k, krec *r) {
    for (kblock *b = r->bhead, *next; b; b = next) {
        next = b->next;
        jfr__free(&k->a, b, sizeof *b);
    }
    jfr__free(&k->a, r->spare, sizeof *r->spare);
    jfr__free(&k->a, r->marks, r->capmarks * sizeof *r->marks);
    r->bhead = r->btail = r->spare = NULL;
    r->marks = NULL;
    r->capmarks = r->nmarks = 0;
    if (r->wm)
        r->wm->pins--;
    r->wm = NULL;
}

/* ------------------------------------------------------------ marks */

void jfrs_kafka_src_mark(jfrs_kafka_src *ks, uint64_t pos) {
    if (!ks)
        return;
    krec *r = ks->r;
    if (pos <= r->marked)
        return;
    r->marked = pos;
    kmark m = {r->seq_next, pos, 0, 0, false};
    if (ks->have_chunk && pos >= ks->chunk_off) {
        m.cs = ks->chunk_ns;
        m.off = pos - ks->chunk_off;
        m.cs_ok = true;
    } else if (ks->have_chunk && ks->prev_off < ks->chunk_off && pos >= ks->prev_off &&
               ks->prev_ns) {
        m.cs = ks->prev_ns;
        m.off = pos - ks->prev_off;
        m.cs_ok = true;
    }
    if (r->seq_head == r->seq_next && !r->nmarks) { /* nothing unsettled: at once */
        r->acked = pos;
        wm_raise(r, &m);
        return;
    }
    if (r->nmarks == r->capmarks) {
        size_t cap = r->capmarks ? r->capmarks * 2 : 16;
        kmark *n = jfr__alloc(&ks->k->a, cap * sizeof *n);
        if (!n)
            return; /* this mark is lost: a later one covers it */
        for (size_t i = 0; i < r->nmarks; i++)
            n[i] = r->marks[(r->mhead + i) % r->capmarks];
        jfr__free(&ks->k->a, r->marks, r->capmarks * sizeof *r->marks);
        r->marks = n;
        r->capmarks = cap;
        r->mhead = 0;
    } else if (r->nmarks && r->marks[(r->mhead + r->nmarks - 1) % r->capmarks].seq == m.seq) {
        /* no message since the last mark: it moves on */
        r->marks[(r->mhead + r->nmarks - 1) % r->capmarks] = m;
        return;
    }
    r->marks[(r->mhead + r->nmarks) % r->capmarks] = m;
    r->nmarks++;
}

jfr_status jfrs_kafka_src_delivered(const jfrs_kafka_src *ks, uint64_t *pos) {
    if (pos)
        *pos = ks ? ks->r->acked : 0;
    return ks && ks->r->failed ? JFR_IO : JFR_OK;
}

/* ------------------------------------------------------------ watermarks */

static uint64_t hash_id(const char *s) {
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static void lru_unlink(jfrs_kafka *k, kwm *w) {
    if (w->prev)
        w->prev->next = w->next;
    else
        k->wm_head = w->next;
    if (w->next)
        w->next->prev = w->prev;
    else
        k->wm_tail = w->prev;
    w->prev = w->next = NULL;
}

static void lru_front(jfrs_kafka *k, kwm *w) {
    w->next = k->wm_head;
    w->prev = NULL;
    if (k->wm_head)
        k->wm_head->prev = w;
    k->wm_head = w;
    if (!k->wm_tail)
        k->wm_tail = w;
}

static void wm_drop(jfrs_kafka *k, kwm *w) {
    kwm **pp = &k->wm_hash[w->hash % KWM_BUCKETS];
    while (*pp != w)
        pp = &(*pp)->hnext;
    *pp = w->hnext;
    lru_unlink(k, w);
    k->nwm--;
    jfr__free(&k->a, w, sizeof *w + strlen(w->id) + 1);
}

void kafka_wm_pin(jfrs_kafka *k, krec *r, const char *id) {
    if (r->wm) {
        r->wm->pins--;
        r->wm = NULL;
    }
    uint64_t h = hash_id(id);
    kwm *w = k->wm_hash[h % KWM_BUCKETS];
    while (w && (w->hash != h || strcmp(w->id, id) != 0))
        w = w->hnext;
    if (w) {
        lru_unlink(k, w);
    } else {
        if (k->nwm >= KWM_MAX) /* the least recently used one not in use */
            for (kwm *old = k->wm_tail; old; old = old->prev)
                if (!old->pins) {
                    wm_drop(k, old);
                    break;
                }
        size_t n = strlen(id);
        if (!(w = jfr__calloc(&k->a, sizeof *w + n + 1)))
            return;
        memcpy(w->id, id, n + 1);
        w->hash = h;
        w->hnext = k->wm_hash[h % KWM_BUCKETS];
        k->wm_hash[h % KWM_BUCKETS] = w;
        k->nwm++;
    }
    lru_front(k, w);
    w->pins++;
    r->wm = w;
}

void kafka_wm_free(jfrs_kafka *k) {
    while (k->wm_head)
        wm_drop(k, k->wm_head);
}
