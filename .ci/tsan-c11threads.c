/*
 * tsan-c11threads.c — C11 <threads.h> on the pthread functions, LD_PRELOADed
 * by .ci/run's ThreadSanitizer step (built there without the sanitizer).
 *
 * Why: librdkafka (Debian's 2.0) makes its threads, mutexes and condition
 * variables with C11's thrd_create / mtx_* / cnd_* / call_once. glibc
 * implements those without going through its exported pthread_* symbols, and
 * the ThreadSanitizer of clang 14 / gcc 12 intercepts only the pthread_*
 * ones: a librdkafka thread is unknown to it (its first malloc crashes in the
 * sanitizer's allocator) and its locks order nothing (a flood of false races
 * between librdkafka's threads and the delivery callbacks). Routed through
 * pthread_*, which the sanitizer intercepts, both are seen. Newer sanitizers
 * (LLVM 15+) intercept the C11 functions themselves.
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <threads.h>

struct start {
    thrd_start_t fn;
    void *arg;
};

static void *trampoline(void *p) {
    struct start s = *(struct start *)p;
    free(p);
    return (void *)(intptr_t)s.fn(s.arg);
}

static int status(int e) {
    switch (e) {
    case 0: return thrd_success;
    case EBUSY: return thrd_busy;
    case ETIMEDOUT: return thrd_timedout;
    case ENOMEM: return thrd_nomem;
    default: return thrd_error;
    }
}

int thrd_create(thrd_t *thr, thrd_start_t fn, void *arg) {
    struct start *s = malloc(sizeof *s);
    if (!s)
        return thrd_nomem;
    s->fn = fn;
    s->arg = arg;
    pthread_t t;
    int e = pthread_create(&t, NULL, trampoline, s);
    if (e) {
        free(s);
        return status(e);
    }
    *thr = (thrd_t)t;
    return thrd_success;
}

int thrd_join(thrd_t thr, int *res) {
    void *r = NULL;
    int e = pthread_join((pthread_t)thr, &r);
    if (!e && res)
        *res = (int)(intptr_t)r;
    return status(e);
}

int thrd_detach(thrd_t thr) { return status(pthread_detach((pthread_t)thr)); }

int mtx_init(mtx_t *m, int type) {
    pthread_mutexattr_t a;
    pthread_mutexattr_init(&a);
    if (type & mtx_recursive)
        pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE);
    int e = pthread_mutex_init((pthread_mutex_t *)m, &a);
    pthread_mutexattr_destroy(&a);
    return status(e);
}

int mtx_lock(mtx_t *m) { return status(pthread_mutex_lock((pthread_mutex_t *)m)); }
int mtx_trylock(mtx_t *m) { return status(pthread_mutex_trylock((pthread_mutex_t *)m)); }
int mtx_timedlock(mtx_t *restrict m, const struct timespec *restrict t) {
    return status(pthread_mutex_timedlock((pthread_mutex_t *)m, t));
}
int mtx_unlock(mtx_t *m) { return status(pthread_mutex_unlock((pthread_mutex_t *)m)); }
void mtx_destroy(mtx_t *m) { pthread_mutex_destroy((pthread_mutex_t *)m); }

int cnd_init(cnd_t *c) { return status(pthread_cond_init((pthread_cond_t *)c, NULL)); }
int cnd_signal(cnd_t *c) { return status(pthread_cond_signal((pthread_cond_t *)c)); }
int cnd_broadcast(cnd_t *c) { return status(pthread_cond_broadcast((pthread_cond_t *)c)); }
int cnd_wait(cnd_t *c, mtx_t *m) {
    return status(pthread_cond_wait((pthread_cond_t *)c, (pthread_mutex_t *)m));
}
int cnd_timedwait(cnd_t *restrict c, mtx_t *restrict m, const struct timespec *restrict t) {
    return status(pthread_cond_timedwait((pthread_cond_t *)c, (pthread_mutex_t *)m, t));
}
void cnd_destroy(cnd_t *c) { pthread_cond_destroy((pthread_cond_t *)c); }

void call_once(once_flag *f, void (*fn)(void)) { pthread_once((pthread_once_t *)f, fn); }
