/*
 * profile_files.c — a finished profile written to files by the CLI (see
 * profile_files.h): each output to PATH.tmp, renamed over PATH.
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#include "profile_files.h"
#include "report.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int prof_open_out(const char *path) {
    if (!path || strcmp(path, "-") == 0)
        return STDOUT_FILENO;
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        cli_error("%s: %s", path, strerror(errno));
    return fd;
}

static bool write_one(jfrc_profile *p, const char *path, out_kind kind, const char *title) {
    size_t n = strlen(path);
    char *tmp = malloc(n + 5);
    if (!tmp) {
        cli_error("out of memory");
        return false;
    }
    memcpy(tmp, path, n);
    memcpy(tmp + n, ".tmp", 5);
    bool ok = false;
    int fd = prof_open_out(tmp);
    jfrc_out *o;
    if (fd >= 0 && (o = jfrc_out_new_fd(fd, (size_t)1 << 20))) {
        ok = (kind == OUT_COLLAPSED ? jfrc_profile_write_collapsed(p, o)
              : kind == OUT_FLAME   ? jfrc_profile_write_flamegraph(p, o, title)
                                    : jfrc_profile_write_pprof(p, o)) == JFR_OK;
        if (!ok)
            cli_error("%s: out of memory", path);
        if (jfrc_out_flush(o) != JFR_OK) {
            cli_error("%s: write error: %s", tmp, strerror(errno));
            ok = false;
        }
        jfrc_out_free(o);
    }
    if (fd >= 0 && close(fd) != 0)
        ok = false;
    if (ok && rename(tmp, path) != 0) {
        cli_error("%s: %s", path, strerror(errno));
        ok = false;
    }
    if (!ok && fd >= 0)
        unlink(tmp);
    free(tmp);
    return ok;
}

bool prof_write_files(jfrc_profile *p, const char *collapsed, const char *flame,
                      const char *pprof, const char *title) {
    if (jfrc_profile_finish(p) != JFR_OK) {
        cli_error("profile: out of memory");
        return false;
    }
    bool ok = true;
    if (collapsed)
        ok = write_one(p, collapsed, OUT_COLLAPSED, title) && ok;
    if (flame)
        ok = write_one(p, flame, OUT_FLAME, title) && ok;
    if (pprof)
        ok = write_one(p, pprof, OUT_PPROF, title) && ok;
    return ok;
}
