/*
 * profile_files.c — a finished profile written to files by the CLI (see
 * profile_files.h): each output whole or not at all (outfile.h).
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#include "profile_files.h"
#include "outfile.h"
#include "report.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static bool write_one(jfrc_profile *p, const char *path, out_kind kind, const char *title) {
    cli_outfile f;
    if (cli_outfile_open(&f, path) < 0)
        return false;
    bool ok = false;
    jfrc_out *o = jfrc_out_new_fd(f.fd, (size_t)1 << 20);
    if (!o) {
        cli_error("%s: out of memory", path);
    } else {
        ok = (kind == OUT_COLLAPSED ? jfrc_profile_write_collapsed(p, o)
              : kind == OUT_FLAME   ? jfrc_profile_write_flamegraph(p, o, title)
                                    : jfrc_profile_write_pprof(p, o)) == JFR_OK;
        if (!ok)
            cli_error("%s: out of memory", path);
        if (jfrc_out_flush(o) != JFR_OK) {
            cli_error("%s: write error: %s", path, strerror(errno));
            ok = false;
        }
        jfrc_out_free(o);
    }
    if (ok)
        return cli_outfile_commit(&f);
    cli_outfile_abort(&f);
    return false;
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
