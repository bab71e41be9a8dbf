/*
 * args.c — global options and the option parser of every command (see
 * args.h).
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#include "args.h"
#include "usage.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ----------------------------------------------------- global options */

static bool parse_u64(const char *s, uint64_t *out) {
    if (!s || !*s || *s == '-' || *s == '+')
        return false;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end)
        return false;
    *out = v;
    return true;
}

static int set_feed(cli_global *g, const char *v) {
    uint64_t n;
    if (strncmp(v, "random", 6) == 0 && (v[6] == '\0' || v[6] == ':')) {
        g->feed_mode = CLI_FEED_RANDOM;
        g->seed = 1;
        if (v[6] == ':' && !parse_u64(v + 7, &g->seed)) {
            cli_usage_error("--feed-size: bad seed '%s'", v + 7);
            return -1;
        }
        return 1;
    }
    if (!parse_u64(v, &n) || n == 0 || n > SIZE_MAX / 2) {
        cli_usage_error("--feed-size: expected a positive byte count or random[:SEED], got '%s'", v);
        return -1;
    }
    g->feed_mode = CLI_FEED_FIXED;
    g->feed_size = (size_t)n;
    return 1;
}

bool cli_parse_bytes(const char *s, uint64_t *out) {
    char *end;
    if (!s || *s < '0' || *s > '9')
        return false;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    int shift = 0;
    if (*end && !end[1])
        shift = *end == 'K' || *end == 'k' ? 10 : *end == 'M' ? 20 : *end == 'G' ? 30 : -1;
    else if (*end)
        shift = -1;
    if (errno || shift < 0 || v > (UINT64_MAX >> shift))
        return false;
    *out = (uint64_t)v << shift;
    return true;
}

int cli_take_global(cli_global *g, int argc, char **argv, int *i) {
    const char *a = argv[*i];
    if (strcmp(a, "--feed-size") == 0) {
        if (*i + 1 >= argc) {
            cli_usage_error("--feed-size needs a value");
            return -1;
        }
        *i += 1;
        int r = set_feed(g, argv[*i]);
        *i += 1;
        return r;
    }
    if (strncmp(a, "--feed-size=", 12) == 0) {
        *i += 1;
        return set_feed(g, a + 12);
    }
    if (strcmp(a, "--resync") == 0) {
        g->resync = true;
        *i += 1;
        return 1;
    }
    if (strcmp(a, "--jobs") == 0 || strcmp(a, "-j") == 0) {
        char *end;
        const char *v = *i + 1 < argc ? argv[*i + 1] : "";
        errno = 0;
        long n = strtol(v, &end, 10);
        if (errno || *end || end == v || n < 1 || n > 64) {
            cli_usage_error("%s needs a number of threads from 1 to 64", a);
            return -1;
        }
        g->jobs = (unsigned)n;
        *i += 2;
        return 1;
    }
    if (strcmp(a, "--max-memory") == 0) {
        if (*i + 1 >= argc || !cli_parse_bytes(argv[*i + 1], &g->max_memory) ||
            g->max_memory == 0) {
            cli_usage_error("--max-memory needs a byte count > 0 (K, M, G suffixes)");
            return -1;
        }
        *i += 2;
        return 1;
    }
    return 0;
}

bool cli_is_help(const char *a) { return strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0; }

/* ------------------------------------------------ a command's options */

/* The option spelt `a` (its name or alias), or NULL. */
static const cli_opt *find_opt(const cli_command *c, const char *a) {
    for (size_t g = 0; g < CLI_MAX_OPT_GROUPS && c->opts[g]; g++)
        for (const cli_opt *o = c->opts[g]; o->name; o++)
            if (strcmp(o->name, a) == 0 || (o->alias && strcmp(o->alias, a) == 0))
                return o;
    return NULL;
}

int cli_args(const cli_command *c, cli_global *g, int argc, char **argv, cli_arg_fn fn,
             void *ctx) {
    for (int i = 0; i < argc;) {
        int r = cli_take_global(g, argc, argv, &i);
        if (r < 0)
            return CLI_EXIT_USAGE;
        if (r > 0)
            continue;
        const char *a = argv[i];
        if (cli_is_help(a)) {
            cli_command_help(c, stdout);
            return CLI_EXIT_OK;
        }
        cli_arg arg = {c->name, NULL, a, NULL};
        if (a[0] == '-' && a[1] != '\0') {
            arg.opt = find_opt(c, a);
            if (!arg.opt)
                return cli_usage_error("%s: unknown option '%s'", c->name, a);
            if (arg.opt->arg && i + 1 < argc)
                arg.value = argv[++i];
        }
        i++;
        r = fn(ctx, &arg);
        if (r != CLI_EXIT_OK)
            return r;
    }
    return CLI_ARGS_RUN;
}
