/*
 * cmd_profile.c — `jfrstream collapsed|flamegraph|pprof`: profiles of the
 * stack traces in a recording (aggregation in profile.c, the output formats
 * in profile_out.c).
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#include "args.h"
#include "commands.h"
#include "frontend.h"
#include "report.h"
#include "usage.h"
#include "outfile.h"
#include "profile_files.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The profile and, for the message about an empty one, the event types with
 * a stackTrace field the inputs have events of. Per type index of the
 * current metadata: its pointer (compared, never dereferenced once the
 * metadata may be gone) and its slot in the list of names (0: not yet),
 * filled at the type's first record; then one increment per record. */
typedef struct run_ctx {
    jfrc_profile *pr;
    const jfr_type **tptr; /* NULL: not a type with a stackTrace field */
    uint32_t *slot;
    uint32_t ntypes;
    char **seen;           /* type names with events, and their counts */
    uint64_t *nseen_ev;
    size_t nseen;
} run_ctx;

static int on_metadata(jfr_parser *p, const jfr_metadata *m, void *user) {
    (void)p;
    run_ctx *x = user;
    free(x->tptr);
    free(x->slot);
    x->tptr = calloc(m->ntypes ? m->ntypes : 1, sizeof *x->tptr);
    x->slot = calloc(m->ntypes ? m->ntypes : 1, sizeof *x->slot);
    x->ntypes = x->tptr && x->slot ? m->ntypes : 0;
    for (uint32_t i = 0; i < x->ntypes; i++)
        if (m->types[i]->is_event && jfr_type_field_index(m->types[i], "stackTrace") >= 0)
            x->tptr[i] = m->types[i];
    return JFR_CB_CONTINUE;
}

/* The slot of a type name in the list, added when new; 0 on no memory. */
static uint32_t seen_slot(run_ctx *x, const char *nm) {
    size_t j = 0;
    while (j < x->nseen && strcmp(x->seen[j], nm) != 0)
        j++;
    if (j == x->nseen) {
        if (j >= UINT32_MAX - 1)
            return 0;
        char **ns = realloc(x->seen, (j + 1) * sizeof *ns);
        if (ns)
            x->seen = ns;
        uint64_t *nc = ns ? realloc(x->nseen_ev, (j + 1) * sizeof *nc) : NULL;
        if (nc)
            x->nseen_ev = nc;
        char *d = nc ? strdup(nm) : NULL;
        if (!d)
            return 0;
        x->seen[j] = d;
        x->nseen_ev[j] = 0;
        x->nseen++;
    }
    return (uint32_t)j + 1;
}

static int on_record(jfr_parser *p, const jfr_record *r, void *user) {
    (void)p;
    run_ctx *x = user;
    if (!r->type || r->type->index >= x->ntypes || x->tptr[r->type->index] != r->type)
        return JFR_CB_CONTINUE;
    uint32_t *sl = &x->slot[r->type->index];
    if (!*sl)
        *sl = seen_slot(x, r->type->name);
    if (*sl)
        x->nseen_ev[*sl - 1]++;
    return JFR_CB_CONTINUE;
}

static int on_chunk_begin(jfr_parser *p, const jfr_chunk_info *c, void *user) {
    (void)p;
    jfrc_profile_chunk_begin(((run_ctx *)user)->pr, c);
    return JFR_CB_CONTINUE;
}

static int on_chunk_end(jfr_parser *p, const jfr_chunk_info *c, void *user) {
    (void)p;
    (void)c;
    jfrc_profile_chunk_end(((run_ctx *)user)->pr);
    return JFR_CB_CONTINUE;
}

static jfr_status setup(jfr_parser *p, void *user) {
    run_ctx *x = user;
    x->ntypes = 0; /* a new parser: its metadata comes with its first chunk */
    return jfrc_profile_subscribe(x->pr, p);
}

/* An empty profile: say so, and name the event types with a stack trace
 * the inputs do have. */
static void tell_empty(const run_ctx *x, const char *cmd) {
    const jfrc_profile *pr = x->pr;
    char sel[256];
    size_t n = 0;
    sel[0] = '\0';
    for (size_t i = 0; i < jfrc_profile_ntypes(pr) && n < sizeof sel; i++)
        n += (size_t)snprintf(sel + n, sizeof sel - n, "%s%s", i ? "," : "",
                              jfrc_profile_type(pr, i));
    if (x->nseen == 0) {
        cli_error("%s: empty profile: no %s event matched (the input has no event of a type "
                  "with a stackTrace field)", cmd, sel);
        return;
    }
    char have[512];
    n = 0;
    have[0] = '\0';
    /* the most frequent first (a selection over a short list) */
    uint64_t below = UINT64_MAX;
    for (size_t i = 0; i < x->nseen && n < sizeof have; i++) {
        size_t best = SIZE_MAX;
        for (size_t j = 0; j < x->nseen; j++)
            if (x->nseen_ev[j] < below && (best == SIZE_MAX || x->nseen_ev[j] > x->nseen_ev[best]))
                best = j;
        if (best == SIZE_MAX)
            break;
        for (size_t j = 0; j < x->nseen && n < sizeof have; j++)
            if (x->nseen_ev[j] == x->nseen_ev[best])
                n += (size_t)snprintf(have + n, sizeof have - n, "%s%s (%llu)", n ? ", " : "",
                                      x->seen[j], (unsigned long long)x->nseen_ev[j]);
        below = x->nseen_ev[best];
    }
    if (n >= sizeof have)
        memcpy(have + sizeof have - 4, "...", 4);
    cli_error("%s: empty profile: no %s event matched; the input's events with a stackTrace "
              "field: %s", cmd, sel, have);
}

/* The command's options and FILE operands. */
typedef struct args_ctx {
    jfrc_profile *pr;
    const char *out, *title;
    const char **paths;
    int npaths;
} args_ctx;

/* Add a JFRC_PROFILE_* flag. */
static void prof_flag(jfrc_profile *pr, unsigned flag) {
    jfrc_profile_set_flags(pr, jfrc_profile_flags(pr) | flag);
}

static int on_arg(void *ctx, const cli_arg *a) {
    args_ctx *x = ctx;
    jfrc_profile *pr = x->pr;
    const char *cmd = a->cmd, *v = a->value;
    if (!a->opt) {
        x->paths[x->npaths++] = a->as;
        return CLI_EXIT_OK;
    }
    int key = a->opt->key;
    if (a->opt->arg && !v)
        return cli_usage_error("%s: %s needs a value", cmd, a->as);
    bool ok = true;
    switch (key) {
    case OPT_EVENT:
        ok = jfrc_profile_select(pr, v) == JFR_OK;
        break;
    case OPT_THREADS:
        prof_flag(pr, JFRC_PROFILE_THREADS);
        break;
    case OPT_DOT:
        prof_flag(pr, JFRC_PROFILE_DOT);
        break;
    case OPT_COUNT:
        prof_flag(pr, JFRC_PROFILE_COUNT);
        break;
    case OPT_REVERSE:
        prof_flag(pr, JFRC_PROFILE_REVERSE);
        break;
    case OPT_LINES:
        prof_flag(pr, JFRC_PROFILE_LINES);
        break;
    case OPT_LEAK:
        prof_flag(pr, JFRC_PROFILE_LEAK);
        break;
    case OPT_STATE:
        ok = jfrc_profile_set_state(pr, v) == JFR_OK;
        break;
    case OPT_INCLUDE:
    case OPT_EXCLUDE:
        ok = (key == OPT_INCLUDE ? jfrc_profile_set_include(pr, v)
                                 : jfrc_profile_set_exclude(pr, v)) == JFR_OK;
        break;
    case OPT_MINWIDTH: {
        char *end;
        double w = strtod(v, &end);
        if (end == v || *end || jfrc_profile_set_minwidth(pr, w) != JFR_OK)
            return cli_usage_error("%s: --minwidth: a percentage from 0 to 100", cmd);
        break;
    }
    case OPT_FROM:
    case OPT_TO:
        ok = (key == OPT_TO ? jfrc_profile_set_to(pr, v)
                            : jfrc_profile_set_from(pr, v)) == JFR_OK;
        break;
    case OPT_OUTPUT:
        x->out = v;
        break;
    default: /* OPT_TITLE */
        x->title = v;
        break;
    }
    if (!ok)
        return cli_usage_error("%s: %s", cmd, jfrc_profile_error(pr));
    return CLI_EXIT_OK;
}

/* What the options leave to check before any input is read: pprof cannot
 * take --reverse, a FILE is needed, and no --event means cpu. */
static int check_options(const char *cmd, jfrc_profile *pr, out_kind kind, int npaths) {
    /* pprof viewers turn stacks themselves */
    if (kind == OUT_PPROF && (jfrc_profile_flags(pr) & JFRC_PROFILE_REVERSE))
        return cli_usage_error("%s: --reverse is for collapsed stacks and flame graphs", cmd);
    if (!npaths)
        return cli_usage_error("%s: missing FILE", cmd);
    if (jfrc_profile_ntypes(pr) == 0 && jfrc_profile_select(pr, "cpu") != JFR_OK) {
        cli_error("%s", jfrc_profile_error(pr));
        return CLI_EXIT_ERROR;
    }
    return CLI_EXIT_OK;
}

/* Every input into the one profile; the exit code so far. */
static int read_inputs(cli_global *g, run_ctx *x, const args_ctx *ax) {
    jfrc_profile *pr = x->pr;
    int rc = CLI_EXIT_OK;
    jfr_callbacks cb = {.size = sizeof cb, .on_chunk_begin = on_chunk_begin,
                        .on_metadata = on_metadata,
                        .on_record = on_record,
                        .on_chunk_end = on_chunk_end,
                        .on_error = cli_on_error};
    /* several inputs, one profile: each its own source of constant keys */
    for (int k = 0; k < ax->npaths && jfrc_profile_ok(pr); k++) {
        jfrc_profile_set_source(pr, (uint64_t)k);
        int r = cli_parse(g, ax->paths[k], NULL, &cb, x, setup);
        x->ntypes = 0; /* the parser and its metadata are gone */
        if (r != CLI_EXIT_OK)
            rc = r;
    }
    if (jfrc_profile_error(pr)) {
        cli_error("%s", jfrc_profile_error(pr));
        rc = CLI_EXIT_ERROR;
    }
    return rc;
}

/* The finished profile in the command's format; false on no memory. */
static bool write_format(jfrc_profile *pr, out_kind kind, jfrc_out *o, const char *title) {
    bool ok = true;
    switch (kind) {
    case OUT_COLLAPSED:
        jfrc_profile_write_collapsed(pr, o);
        break;
    case OUT_FLAME:
        ok = jfrc_profile_write_flamegraph(pr, o, title ? title : "Flame Graph") == JFR_OK;
        break;
    case OUT_PPROF:
        ok = jfrc_profile_write_pprof(pr, o) == JFR_OK;
        break;
    }
    return ok;
}

/* The finished profile written to the output (stdout, or the --output
 * file, renamed over OUT only when the command succeeds: no partial file),
 * or the message about an empty one; the exit code, given the one so far. */
static int write_profile(const char *cmd, run_ctx *x, out_kind kind, cli_outfile *f,
                         const char *title, int rc) {
    jfrc_profile *pr = x->pr;
    jfrc_out *o = cli_out;
    if (f->fd != STDOUT_FILENO && !(o = jfrc_out_new_fd(f->fd, (size_t)1 << 20))) {
        cli_outfile_abort(f);
        cli_error("out of memory");
        return CLI_EXIT_ERROR;
    }
    if (!write_format(pr, kind, o, title)) {
        cli_error("out of memory");
        rc = CLI_EXIT_ERROR;
    }
    if (jfrc_profile_total(pr) == 0 && jfrc_profile_events(pr) == 0 && rc == CLI_EXIT_OK)
        tell_empty(x, cmd);
    if (o != cli_out) {
        if (jfrc_out_flush(o) != JFR_OK) {
            cli_error("%s: write error: %s", f->path, strerror(errno));
            rc = CLI_EXIT_ERROR;
        }
        jfrc_out_free(o);
    }
    if (rc != CLI_EXIT_OK) {
        if (f->path)
            cli_error("%s: not written, as the command failed", f->path);
        cli_outfile_abort(f);
    } else if (!cli_outfile_commit(f)) {
        rc = CLI_EXIT_ERROR;
    }
    return rc;
}

static void run_ctx_free(run_ctx *x) {
    for (size_t k = 0; k < x->nseen; k++)
        free(x->seen[k]);
    free(x->seen);
    free(x->nseen_ev);
    free(x->tptr);
    free(x->slot);
}

static int run(const cli_command *c, cli_global *g, out_kind kind, int argc, char **argv) {
    const char *cmd = c->name;
    jfrc_profile *pr = jfrc_profile_new();
    run_ctx x = {.pr = pr};
    args_ctx ax = {.pr = pr};
    int rc = CLI_EXIT_OK;
    ax.paths = calloc((size_t)argc + 1, sizeof *ax.paths);
    if (!ax.paths || !pr) {
        cli_error("out of memory");
        rc = CLI_EXIT_ERROR;
        goto done;
    }
    rc = cli_args(c, g, argc, argv, on_arg, &ax);
    if (rc != CLI_ARGS_RUN)
        goto done;
    rc = check_options(cmd, pr, kind, ax.npaths);
    if (rc != CLI_EXIT_OK)
        goto done;
    /* the output is opened first: no parsing for nothing */
    cli_outfile out;
    if (cli_outfile_open(&out, ax.out) < 0) {
        rc = CLI_EXIT_ERROR;
        goto done;
    }
    rc = read_inputs(g, &x, &ax);
    if (jfrc_profile_finish(pr) != JFR_OK) {
        cli_error("out of memory");
        cli_outfile_abort(&out);
        rc = CLI_EXIT_ERROR;
        goto done;
    }
    rc = write_profile(cmd, &x, kind, &out, ax.title, rc);
done:
    jfrc_profile_free(pr);
    run_ctx_free(&x);
    free(ax.paths);
    return rc;
}

int cmd_collapsed(const cli_command *c, cli_global *g, int argc, char **argv) {
    return run(c, g, OUT_COLLAPSED, argc, argv);
}

int cmd_flamegraph(const cli_command *c, cli_global *g, int argc, char **argv) {
    return run(c, g, OUT_FLAME, argc, argv);
}

int cmd_pprof(const cli_command *c, cli_global *g, int argc, char **argv) {
    return run(c, g, OUT_PPROF, argc, argv);
}
