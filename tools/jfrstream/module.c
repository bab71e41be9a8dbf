/*
 * module.c — the command table's listen and tail: load jfrstream_live.so
 * (module.h) on first use and run its entry point. Looked for beside the
 * executable (a build tree), then where `meson install` puts it relative to
 * the executable (an installed tree, wherever it was moved or staged with
 * --destdir), then at its configured absolute path.
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#include "commands.h"
#include "module.h"
#include "report.h"

#ifdef CLI_LIVE_MODULE

#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define MODULE_FILE "jfrstream_live.so"

static char where[3][PATH_MAX + sizeof CLI_LIVE_REL + sizeof MODULE_FILE + 2];
static const char *loaded; /* which of them */

/* The module's handle, or NULL after reporting why it cannot be had. */
static void *module_open(void) {
    static void *handle;
    if (handle)
        return handle;
    char exe[PATH_MAX];
    unsigned n = 0;
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (len > 0) {
        exe[len] = '\0';
        char *slash = strrchr(exe, '/');
        if (slash) {
            *slash = '\0';
            snprintf(where[n++], sizeof where[0], "%s/%s", exe, MODULE_FILE);
            if (CLI_LIVE_REL[0])
                snprintf(where[n++], sizeof where[0], "%s/%s/%s", exe, CLI_LIVE_REL, MODULE_FILE);
        }
    }
    snprintf(where[n++], sizeof where[0], "%s/%s", CLI_LIVE_DIR, MODULE_FILE);
    for (unsigned i = 0; i < n; i++) {
        if (access(where[i], F_OK) != 0)
            continue;
        /* RTLD_NOW: a symbol the executable lacks is this error, not a
         * failure in the middle of a command */
        if (!(handle = dlopen(where[i], RTLD_NOW | RTLD_LOCAL)))
            cli_error("%s", dlerror()); /* names the file */
        loaded = where[i];
        return handle;
    }
    cli_error("listen and tail need %s, not found: %s%s%s%s%s", MODULE_FILE, where[0],
              n > 1 ? ", " : "", n > 1 ? where[1] : "", n > 2 ? ", " : "", n > 2 ? where[2] : "");
    return NULL;
}

static int run(const char *entry, const cli_command *c, cli_global *g, int argc, char **argv) {
    void *h = module_open();
    if (!h)
        return CLI_EXIT_ERROR;
    const char *(*stamp)(void);
    *(void **)&stamp = dlsym(h, "live_module_stamp");
    const char *theirs = stamp ? stamp() : "none";
    if (strcmp(theirs, CLI_LIVE_STAMP) != 0) {
        cli_error("%s is of another build (stamp %s, this jfrstream's %s): reinstall "
                  "jfrstream, or run the executable built with it", loaded, theirs,
                  CLI_LIVE_STAMP);
        return CLI_EXIT_ERROR;
    }
    cli_run_fn *f;
    *(void **)&f = dlsym(h, entry); /* POSIX's way to a function from dlsym */
    if (!f) {
        cli_error("%s: %s", loaded, dlerror());
        return CLI_EXIT_ERROR;
    }
    return f(c, g, argc, argv);
}

int cmd_listen(const cli_command *c, cli_global *g, int argc, char **argv) {
    return run("live_cmd_listen", c, g, argc, argv);
}

int cmd_tail(const cli_command *c, cli_global *g, int argc, char **argv) {
    return run("live_cmd_tail", c, g, argc, argv);
}

#else /* linked in */

int cmd_listen(const cli_command *c, cli_global *g, int argc, char **argv) {
    return live_cmd_listen(c, g, argc, argv);
}

int cmd_tail(const cli_command *c, cli_global *g, int argc, char **argv) {
    return live_cmd_tail(c, g, argc, argv);
}

#endif
