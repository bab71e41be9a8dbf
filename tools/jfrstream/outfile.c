/*
 * outfile.c — output files written whole or not at all (see outfile.h).
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#include "outfile.h"
#include "report.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The temporary files open now, for the signal handler to remove (a
 * command writes three at most; past the table they are not removed on a
 * signal, only on failure). */
#define PENDING 8
static _Atomic(char *) pending[PENDING];

static void on_fatal_signal(int sig) {
    int saved = errno;
    for (size_t i = 0; i < PENDING; i++) {
        char *t = atomic_load(&pending[i]);
        if (t)
            unlink(t);
    }
    errno = saved;
    raise(sig); /* SA_RESETHAND: the default action, once this handler returns */
}

/* Remove the temporary files on SIGINT/SIGTERM, unless the signal already
 * has a handler (listen and tail stop cleanly on it) or is ignored. */
static void watch_signals(void) {
    static const int sigs[] = {SIGINT, SIGTERM};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
        struct sigaction old, sa;
        if (sigaction(sigs[i], NULL, &old) != 0 || old.sa_handler != SIG_DFL ||
            (old.sa_flags & SA_SIGINFO))
            continue;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_fatal_signal;
        sa.sa_flags = SA_RESETHAND;
        sigemptyset(&sa.sa_mask);
        sigaction(sigs[i], &sa, NULL);
    }
}

static void track(char *tmp, bool on) {
    for (size_t i = 0; i < PENDING; i++) {
        char *want = on ? NULL : tmp;
        if (atomic_compare_exchange_strong(&pending[i], &want, on ? tmp : NULL))
            return;
    }
}

int cli_outfile_open(cli_outfile *f, const char *path) {
    f->path = NULL;
    f->tmp = NULL;
    f->fd = STDOUT_FILENO;
    if (!path || strcmp(path, "-") == 0)
        return f->fd;
    f->path = path;
    f->fd = -1;
    size_t cap = strlen(path) + 48;
    if (!(f->tmp = malloc(cap))) {
        cli_error("%s: out of memory", path);
        return -1;
    }
    watch_signals();
    /* a name no other writer uses: O_EXCL, and the next number if taken */
    static unsigned serial;
    for (unsigned tries = 0; f->fd < 0 && tries < 100; tries++) {
        snprintf(f->tmp, cap, "%s.tmp.%ld.%u", path, (long)getpid(), serial++);
        f->fd = open(f->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        if (f->fd < 0 && errno != EEXIST)
            break;
    }
    if (f->fd < 0) {
        cli_error("%s: %s", path, strerror(errno));
        free(f->tmp);
        f->tmp = NULL;
        return -1;
    }
    track(f->tmp, true);
    return f->fd;
}

/* Forget the temporary file (closed, and renamed or removed). */
static void drop(cli_outfile *f) {
    track(f->tmp, false);
    free(f->tmp);
    f->tmp = NULL;
    f->fd = -1;
}

bool cli_outfile_commit(cli_outfile *f) {
    if (!f->tmp)
        return f->fd == STDOUT_FILENO;
    bool ok = close(f->fd) == 0;
    if (!ok)
        cli_error("%s: write error: %s", f->path, strerror(errno));
    else if (rename(f->tmp, f->path) != 0) {
        cli_error("%s: %s", f->path, strerror(errno));
        ok = false;
    }
    if (!ok)
        unlink(f->tmp);
    drop(f);
    return ok;
}

void cli_outfile_abort(cli_outfile *f) {
    if (!f->tmp)
        return;
    close(f->fd);
    unlink(f->tmp);
    drop(f);
}
