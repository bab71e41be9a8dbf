/*
 * cmd_profile.c — `jfrstream collapsed|flamegraph|pprof`: profiles of the
 * stack traces in a recording (aggregation in profile.c, the output formats
 * in profile_out.c).
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#include "cli.h"
#include "profile.h"
#include "profile_out.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef enum { OUT_COLLAPSED, OUT_FLAME, OUT_PPROF } out_kind;

static int on_chunk_begin(jfr_parser *p, const jfr_chunk_info *c, void *user) {
    (void)p;
    prof_chunk_begin(user, c);
    return JFR_CB_CONTINUE;
}

static int on_chunk_end(jfr_parser *p, const jfr_chunk_info *c, void *user) {
    (void)p;
    (void)c;
    prof_chunk_end(user);
    return JFR_CB_CONTINUE;
}

static jfr_status setup(jfr_parser *p, void *user) { return prof_subscribe(user, p); }

int prof_options_take(prof *pr, const char *cmd, int argc, char **argv, int *i, bool *taken) {
    const char *a = argv[*i];
    *taken = true;
    if (strcmp(a, "--event") == 0 || strcmp(a, "--events") == 0) {
        if (*i + 1 >= argc)
            return cli_usage_error("%s: %s needs a value", cmd, a);
        if (!prof_select(pr, argv[*i + 1]))
            return cli_usage_error("%s: %s", cmd, pr->err);
        *i += 2;
    } else if (strcmp(a, "--threads") == 0) {
        pr->threads = true;
        *i += 1;
    } else if (strcmp(a, "--dot") == 0) {
        pr->dot = true;
        *i += 1;
    } else if (strcmp(a, "--count") == 0) {
        pr->count = true;
        *i += 1;
    } else {
        *taken = false;
    }
    return CLI_EXIT_OK;
}

/* Open the output: "-" or NULL = stdout. Returns the fd or -1 (reported). */
static int open_out(const char *path) {
    if (!path || strcmp(path, "-") == 0)
        return STDOUT_FILENO;
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        cli_error("%s: %s", path, strerror(errno));
    return fd;
}

static bool write_one(prof *p, const char *path, out_kind kind, const char *title) {
    size_t n = strlen(path);
    char *tmp = malloc(n + 5);
    if (!tmp) {
        cli_error("out of memory");
        return false;
    }
    memcpy(tmp, path, n);
    memcpy(tmp + n, ".tmp", 5);
    bool ok = false;
    int fd = open_out(tmp);
    outbuf o;
    if (fd >= 0 && ob_init(&o, fd, (size_t)1 << 20)) {
        ok = kind == OUT_COLLAPSED ? (prof_write_collapsed(p, &o), true)
             : kind == OUT_FLAME   ? prof_write_flamegraph(p, &o, title)
                                   : prof_write_pprof(p, &o);
        if (!ok)
            cli_error("%s: out of memory", path);
        if (!ob_flush(&o) || o.failed) {
            cli_error("%s: write error: %s", tmp, strerror(errno));
            ok = false;
        }
        ob_free(&o);
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

bool prof_write_files(prof *p, const char *collapsed, const char *flame, const char *pprof,
                      const char *title) {
    if (!prof_finish(p)) {
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

static int run(cli_global *g, out_kind kind, const char *cmd, int argc, char **argv) {
    prof pr;
    prof_init(&pr);
    const char *path = NULL, *out = NULL, *title = NULL;
    int rc = CLI_EXIT_OK;
    for (int i = 0; i < argc;) {
        int r = cli_take_global(g, argc, argv, &i);
        if (r < 0) {
            rc = CLI_EXIT_USAGE;
            goto done;
        }
        if (r > 0)
            continue;
        bool taken;
        rc = prof_options_take(&pr, cmd, argc, argv, &i, &taken);
        if (rc)
            goto done;
        if (taken)
            continue;
        const char *a = argv[i];
        if (cli_is_help(a)) {
            cli_usage(stdout);
            goto done;
        }
        if ((strcmp(a, "-o") == 0 || strcmp(a, "--output") == 0) && i + 1 < argc) {
            out = argv[i + 1];
            i += 2;
            continue;
        }
        if (kind == OUT_FLAME && strcmp(a, "--title") == 0 && i + 1 < argc) {
            title = argv[i + 1];
            i += 2;
            continue;
        }
        if (a[0] == '-' && a[1] != '\0') {
            rc = cli_usage_error("%s: unknown option '%s'", cmd, a);
            goto done;
        }
        if (path) {
            rc = cli_usage_error("%s: too many arguments", cmd);
            goto done;
        }
        path = a;
        i++;
    }
    if (!path) {
        rc = cli_usage_error("%s: missing FILE", cmd);
        goto done;
    }
    if (pr.nsubs == 0 && !prof_select(&pr, "cpu")) {
        cli_error("%s", pr.err);
        rc = CLI_EXIT_ERROR;
        goto done;
    }
    if (pr.nomem) {
        cli_error("out of memory");
        rc = CLI_EXIT_ERROR;
        goto done;
    }
    /* the output is opened first: no parsing for nothing */
    int fd = open_out(out);
    if (fd < 0) {
        rc = CLI_EXIT_ERROR;
        goto done;
    }
    jfr_callbacks cb = {.on_chunk_begin = on_chunk_begin,
                        .on_chunk_end = on_chunk_end,
                        .on_error = cli_on_error};
    rc = cli_parse(g, path, NULL, &cb, &pr, setup);
    if (pr.err[0]) {
        cli_error("%s", pr.err);
        rc = CLI_EXIT_ERROR;
    }
    if (!prof_finish(&pr)) {
        cli_error("out of memory");
        if (fd != STDOUT_FILENO)
            close(fd);
        rc = CLI_EXIT_ERROR;
        goto done;
    }
    outbuf ob, *o = &cli_out;
    if (fd != STDOUT_FILENO) {
        if (!ob_init(&ob, fd, (size_t)1 << 20)) {
            close(fd);
            cli_error("out of memory");
            rc = CLI_EXIT_ERROR;
            goto done;
        }
        o = &ob;
    }
    bool ok = true;
    switch (kind) {
    case OUT_COLLAPSED:
        prof_write_collapsed(&pr, o);
        break;
    case OUT_FLAME:
        ok = prof_write_flamegraph(&pr, o, title ? title : "Flame Graph");
        break;
    case OUT_PPROF:
        ok = prof_write_pprof(&pr, o);
        break;
    }
    if (!ok) {
        cli_error("out of memory");
        rc = CLI_EXIT_ERROR;
    }
    if (o != &cli_out) {
        if (!ob_flush(o) || o->failed) {
            cli_error("%s: write error: %s", out, strerror(errno));
            rc = CLI_EXIT_ERROR;
        }
        ob_free(o);
        if (close(fd) != 0 && rc == CLI_EXIT_OK) {
            cli_error("%s: %s", out, strerror(errno));
            rc = CLI_EXIT_ERROR;
        }
    }
done:
    prof_free(&pr);
    return rc;
}

int cmd_collapsed(cli_global *g, int argc, char **argv) {
    return run(g, OUT_COLLAPSED, "collapsed", argc, argv);
}

int cmd_flamegraph(cli_global *g, int argc, char **argv) {
    return run(g, OUT_FLAME, "flamegraph", argc, argv);
}

int cmd_pprof(cli_global *g, int argc, char **argv) {
    return run(g, OUT_PPROF, "pprof", argc, argv);
}
