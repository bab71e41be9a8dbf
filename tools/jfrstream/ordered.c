/*
 * ordered.c — N workers, one ordered output (see ordered.h).
 *
 * A message raised after event c-1 and before event c (c events delivered
 * so far) goes with batch (c-1)/B, after the bytes written so far: that
 * batch is the one its owner still has open then, and the order of bytes
 * and messages is the serial one either way (a data error raised inside
 * event c-1's callback lands there too). One lock guards the slots; it is
 * taken once per batch, not per event. A worker writes into a memory
 * jfrc_out; a finished batch takes that writer's buffer (jfrc_out_swap)
 * and is handed to stdout in one write: the JSON is not copied on its way
 * (a copy of every byte cost 30% on output-bound files).
 *
 * Who writes: whichever thread holds the write token (r->writing), taken
 * under the lock. A worker that publishes a batch takes it if it is free
 * and writes every batch that is next in order and ready, its own or
 * another's; the calling thread takes it only to draw the progress line
 * and at the end. So stdout, stderr and the progress line have one writer
 * at a time, and no thread is woken to write a batch: a writer thread woken
 * per batch cost about 2,000 context switches on a 600 MB print, each one
 * taking a core from a worker.
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#include "ordered.h"
#include "progress.h"
#include "report.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define ORDERED_QUEUE 4 /* batches a worker may have waiting */
#define WORKER_OUT_CAP (1u << 20) /* its writer's first buffer (it grows) */

enum { SLOT_FREE, SLOT_FILLING, SLOT_READY };

typedef struct message {
    size_t at; /* after this many bytes of the batch */
    char *text;
} message;

typedef struct slot {
    int state;
    uint64_t batch;
    char *buf;
    size_t len, cap;
    message *msgs;
    size_t nmsgs, capmsgs;
} slot;

typedef struct run run;

struct cli_worker {
    run *r;
    unsigned k;
    uint64_t count;   /* events delivered so far */
    uint64_t decided; /* batches 0 .. decided-1 are someone's, known here */
    bool owns_last;   /* batch decided-1 is this worker's */
    slot *cur;        /* the open batch, or NULL */
    bool nomem;
    bool finished;    /* under r->mu */
    int status;
    jfrc_out *out;
    slot slots[ORDERED_QUEUE];
    _Atomic uint64_t progress;
    cli_worker_fn fn;
    void *arg;
    pthread_t thread;
};

struct run {
    pthread_mutex_t mu;
    pthread_cond_t freed; /* a slot became free (workers wait for one) */
    pthread_cond_t done;  /* a worker finished (the calling thread waits) */
    unsigned n;
    uint64_t batch;
    _Atomic uint64_t claimed; /* batches 0 .. claimed-1 have their worker */
    cli_worker *w;
    /* under mu */
    bool writing;   /* the write token is taken */
    bool go;        /* every worker started: batches may be written */
    bool discard;   /* a worker could not start: nothing is written */
    size_t strip;   /* bytes at the start of all still to be dropped */
    uint64_t next;  /* the next batch to write */
};

static void drain(run *r, cli_worker *self);

/* ------------------------------------------------------- worker side */

static bool grow(void **p, size_t *cap, size_t need, size_t elem) {
    if (need <= *cap)
        return true;
    size_t c = *cap ? *cap : 16;
    while (c < need)
        c *= 2;
    void *q = realloc(*p, c * elem);
    if (!q)
        return false;
    *p = q;
    *cap = c;
    return true;
}

/* Drop what the writer holds: bytes written while no batch is open (the
 * document's head, which the calling thread writes itself). Two swaps
 * give the writer its own buffer back, empty. */
static void discard(cli_worker *w) {
    char *b = NULL;
    size_t len = 0, cap = 0;
    jfrc_out_swap(w->out, &b, &len, &cap);
    jfrc_out_swap(w->out, &b, &len, &cap);
}

/* The open batch goes to the writer: the slot takes the writer's buffer
 * (no copy) and the writer goes on in the slot's old one. */
static void publish(cli_worker *w) {
    slot *s = w->cur;
    if (!s)
        return;
    if (!jfrc_out_swap(w->out, &s->buf, &s->len, &s->cap))
        w->nomem = true;
    run *r = w->r;
    pthread_mutex_lock(&r->mu);
    s->state = SLOT_READY;
    if (!r->writing && s->batch == r->next)
        drain(r, w);
    pthread_mutex_unlock(&r->mu);
    w->cur = NULL;
}

/* Make batch j the open one (the previous one goes to the writer). */
static void open_batch(cli_worker *w, uint64_t j) {
    publish(w);
    discard(w);
    run *r = w->r;
    pthread_mutex_lock(&r->mu);
    slot *s = NULL;
    for (;;) {
        for (unsigned i = 0; i < ORDERED_QUEUE && !s; i++)
            if (w->slots[i].state == SLOT_FREE)
                s = &w->slots[i];
        if (s)
            break;
        pthread_cond_wait(&r->freed, &r->mu);
    }
    s->state = SLOT_FILLING;
    pthread_mutex_unlock(&r->mu);
    s->batch = j;
    s->nmsgs = 0;
    w->cur = s;
}

/* Is batch j this worker's? Each batch goes to the first worker that
 * reaches it: every worker passes every batch in order, so when one reaches
 * batch b all before b are claimed, and claiming b is one compare-and-swap
 * of the count of claimed batches. A worker that fell behind (it printed
 * a heavy batch) finds the next ones taken and skips them, so the work
 * balances itself. j is never below the last batch decided here. */
static bool owns(cli_worker *w, uint64_t j) {
    while (w->decided <= j) {
        uint64_t b = w->decided++, expect = b;
        w->owns_last = atomic_compare_exchange_strong(&w->r->claimed, &expect, b + 1);
        if (w->owns_last && b < j) /* passed without an event: still written */
            open_batch(w, b);
    }
    return w->owns_last;
}

bool cli_worker_event(cli_worker *w) {
    uint64_t j = w->count++ / w->r->batch;
    if (!owns(w, j)) {
        /* this worker's open batch can take nothing more (a message now
         * goes with batch j): to the writer now, not when its next batch
         * opens, so that it does not hold the output up meanwhile (e.g.
         * while this worker prepares a chunk ahead, frontend.c) */
        publish(w);
        return false;
    }
    if (!w->cur || w->cur->batch != j)
        open_batch(w, j);
    return true;
}

uint64_t cli_worker_pass(cli_worker *w) {
    uint64_t b = w->r->batch, left = (b - w->count % b) % b;
    w->count += left;
    return left;
}

jfrc_out *cli_worker_out(cli_worker *w) { return w->out; }
unsigned cli_worker_index(const cli_worker *w) { return w->k; }
unsigned cli_worker_count(const cli_worker *w) { return w->r->n; }

/* A message of this worker's thread (report.h): kept by the owner of its
 * place, dropped by the others (who raised the same one). */
static void on_message(void *user, const char *text) {
    cli_worker *w = user;
    uint64_t j = w->count ? (w->count - 1) / w->r->batch : 0;
    if (!owns(w, j))
        return;
    if (!w->cur || w->cur->batch != j)
        open_batch(w, j);
    slot *s = w->cur;
    char *t = strdup(text);
    if (!t || !grow((void **)&s->msgs, &s->capmsgs, s->nmsgs + 1, sizeof *s->msgs)) {
        free(t);
        w->nomem = true;
        return;
    }
    s->msgs[s->nmsgs++] = (message){jfrc_out_pending(w->out), t};
}

static void *worker_main(void *arg) {
    cli_worker *w = arg;
    cli_report_redirect(on_message, w);
    cli_progress_forward(&w->progress);
    w->status = w->fn(w, w->arg);
    publish(w);
    cli_report_redirect(NULL, NULL);
    cli_progress_forward(NULL);
    pthread_mutex_lock(&w->r->mu);
    w->finished = true;
    pthread_cond_signal(&w->r->done);
    pthread_mutex_unlock(&w->r->mu);
    return NULL;
}

/* ------------------------------------------------------- writer side */

/* Under r->mu: batch j if it is ready, else NULL. */
static slot *ready_batch(run *r, uint64_t j) {
    for (unsigned k = 0; k < r->n; k++)
        for (unsigned i = 0; i < ORDERED_QUEUE; i++)
            if (r->w[k].slots[i].state == SLOT_READY && r->w[k].slots[i].batch == j)
                return &r->w[k].slots[i];
    return NULL;
}

/* Write a batch: its bytes, its messages where they were raised. The
 * first event of all has no separator before it: the workers write one
 * (JSON's ", ") before each event, and the first `strip` bytes of all are
 * dropped. */
static void write_batch(slot *s, size_t *strip) {
    size_t off = 0;
    for (size_t m = 0; m <= s->nmsgs; m++) {
        size_t end = m < s->nmsgs ? s->msgs[m].at : s->len;
        if (*strip && end > off) {
            size_t k = end - off < *strip ? end - off : *strip;
            off += k;
            *strip -= k;
        }
        if (end > off)
            jfrc_out_write(cli_out, s->buf + off, end - off);
        off = end;
        if (m < s->nmsgs) {
            cli_error("%s", s->msgs[m].text);
            free(s->msgs[m].text);
        }
    }
    s->nmsgs = 0;
}

/* Under r->mu, the write token free: take it and write the batches that
 * are next in order and ready (none before r->go; dropped when
 * r->discard), then give it back. The lock is let go while writing. A
 * worker (`self`; NULL: the calling thread) writes here with its messages
 * and progress sent to stderr, not to itself. */
static void drain(run *r, cli_worker *self) {
    if (!r->go)
        return;
    r->writing = true;
    slot *s;
    while ((s = ready_batch(r, r->next)) != NULL) {
        pthread_mutex_unlock(&r->mu);
        if (r->discard) {
            for (size_t m = 0; m < s->nmsgs; m++)
                free(s->msgs[m].text);
            s->nmsgs = 0;
        } else {
            if (self) {
                cli_report_redirect(NULL, NULL);
                cli_progress_forward(NULL);
            }
            write_batch(s, &r->strip);
            if (self) {
                cli_report_redirect(on_message, self);
                cli_progress_forward(&self->progress);
            }
        }
        pthread_mutex_lock(&r->mu);
        s->state = SLOT_FREE;
        r->next++;
        pthread_cond_broadcast(&r->freed);
    }
    r->writing = false;
}

/* Under r->mu: every worker finished? */
static bool all_finished(const run *r, unsigned started) {
    for (unsigned k = 0; k < started; k++)
        if (!r->w[k].finished)
            return false;
    return true;
}

int cli_ordered_run(unsigned n, uint64_t batch, size_t strip, cli_worker_fn fn, void **args,
                    const char *name, uint64_t total) {
    run r;
    memset(&r, 0, sizeof r);
    r.n = n;
    r.batch = batch ? batch : 1;
    atomic_init(&r.claimed, 0);
    r.w = calloc(n, sizeof *r.w);
    if (!r.w) {
        cli_error("out of memory");
        return CLI_EXIT_ERROR;
    }
    pthread_mutex_init(&r.mu, NULL);
    pthread_cond_init(&r.freed, NULL);
    pthread_cond_init(&r.done, NULL);
    int rc = CLI_EXIT_OK;
    unsigned started = 0;
    for (unsigned k = 0; k < n; k++) {
        cli_worker *w = &r.w[k];
        w->r = &r;
        w->k = k;
        w->fn = fn;
        w->arg = args[k];
        atomic_init(&w->progress, 0);
        if (!(w->out = jfrc_out_new_memory(WORKER_OUT_CAP))) {
            cli_error("out of memory");
            rc = CLI_EXIT_ERROR;
            break;
        }
    }
    cli_progress_begin(name, total);
    for (unsigned k = 0; rc == CLI_EXIT_OK && k < n; k++, started++)
        if (pthread_create(&r.w[k].thread, NULL, worker_main, &r.w[k])) {
            cli_error("cannot start a thread");
            rc = CLI_EXIT_ERROR;
            break;
        }
    /* batches are written from now on (by the workers, mostly), or
     * dropped when a worker could not start; this thread draws the
     * progress line while it waits for the workers to finish */
    pthread_mutex_lock(&r.mu);
    r.strip = strip;
    r.discard = started < n;
    r.go = true;
    for (;;) {
        if (!r.writing) { /* progress, then what was published meanwhile */
            r.writing = true;
            pthread_mutex_unlock(&r.mu);
            cli_progress_update(atomic_load_explicit(&r.w[0].progress, memory_order_relaxed));
            pthread_mutex_lock(&r.mu);
            r.writing = false;
            drain(&r, NULL);
        }
        if (all_finished(&r, started))
            break;
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 250000000;
        if (ts.tv_nsec >= 1000000000) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000;
        }
        pthread_cond_timedwait(&r.done, &r.mu, &ts);
    }
    pthread_mutex_unlock(&r.mu);
    for (unsigned k = 0; k < started; k++)
        pthread_join(r.w[k].thread, NULL);
    cli_progress_end();
    bool nomem = false;
    for (unsigned k = 0; k < n; k++) {
        cli_worker *w = &r.w[k];
        if (k < started && w->status > rc)
            rc = w->status;
        nomem |= w->nomem;
        for (unsigned i = 0; i < ORDERED_QUEUE; i++) {
            for (size_t m = 0; m < w->slots[i].nmsgs; m++)
                free(w->slots[i].msgs[m].text);
            free(w->slots[i].msgs);
            free(w->slots[i].buf);
        }
        jfrc_out_free(w->out);
    }
    if (nomem) {
        cli_error("out of memory");
        rc = CLI_EXIT_ERROR;
    }
    pthread_cond_destroy(&r.done);
    pthread_cond_destroy(&r.freed);
    pthread_mutex_destroy(&r.mu);
    free(r.w);
    return rc;
}
