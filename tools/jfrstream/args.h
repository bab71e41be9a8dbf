/*
 * args.h — the command line: global options, the description of a command
 * and its options (the table itself is in commands.c), and the one option
 * parser every command runs its arguments through.
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#ifndef JFRSTREAM_CLI_ARGS_H
#define JFRSTREAM_CLI_ARGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* How input bytes are handed to jfr_parser_feed. */
typedef enum cli_feed_mode {
    CLI_FEED_DEFAULT, /* whole file (mmap) or 1 MiB reads              */
    CLI_FEED_FIXED,   /* exactly feed_size bytes per call              */
    CLI_FEED_RANDOM   /* 1..65536 bytes per call from a seeded PRNG    */
} cli_feed_mode;

/* Options accepted before or after the command name. */
typedef struct cli_shared_file cli_shared_file; /* frontend.h */

typedef struct cli_global {
    cli_feed_mode feed_mode;
    size_t feed_size;
    uint64_t seed;
    bool resync; /* --resync: jfr_options.resync */
    uint64_t max_memory; /* --max-memory: jfr_options.max_memory */
    unsigned jobs;       /* --jobs: threads of print --json (0: automatic) */
    unsigned threads;    /* cli_parse's jfr_parser_set_threads (view, query) */
    cli_shared_file *shared; /* a parallel run's mapping of FILE, or NULL */
} cli_global;

/* With --max-memory M, a command that writes JSON gives this share of M to
 * the JSON writer's cache of pooled objects (a quarter, at most its default
 * 80 MiB) and the rest to the parser, so that both stay within M. 0 without
 * --max-memory: the writer's default limit, the parser unlimited. */
static inline uint64_t cli_json_cache_share(uint64_t max_memory) {
    uint64_t q = max_memory / 4, dflt = (uint64_t)80 << 20;
    return q < dflt ? q : dflt;
}

/* BYTES: a number with an optional K, M or G suffix (powers of 1024). */
bool cli_parse_bytes(const char *s, uint64_t *out);
/* Try to take a global option at argv[*i] (advancing *i past its value).
 * Returns 1 if taken, 0 if argv[*i] is not a global option, -1 on a usage
 * error (already reported). */
int cli_take_global(cli_global *g, int argc, char **argv, int *i);
/* True for -h / --help. */
bool cli_is_help(const char *arg);

/* One option of a command. */
typedef struct cli_opt {
    const char *name;  /* "--events", "-o" */
    const char *arg;   /* its value in the help ("FILTER"); NULL: a flag */
    int key;           /* what the command's handler acts on (commands.h) */
    /* help lines, '\n' between them, without the indent; NULL: described
     * with the next option, on one line ("--from T, --to T") */
    const char *help;
    const char *alias; /* an older spelling, also accepted (and named in the help) */
    bool hidden;       /* accepted, not documented (compatibility spellings) */
} cli_opt;

#define CLI_OPT_END {NULL, NULL, 0, NULL, NULL, false}
#define CLI_MAX_OPT_GROUPS 4

/* One command: its name, summary, options and handler. */
struct cli_command;
/* A command's entry point (the table's, and the module's, module.c). */
typedef int cli_run_fn(const struct cli_command *c, cli_global *g, int argc, char **argv);

typedef struct cli_command {
    const char *name;
    cli_run_fn *run;
    const char *usage;   /* what follows "Usage: jfrstream " */
    const char *about;   /* one line, lower case, no full stop */
    /* its options, in help order: up to four lists (shared lists are used by
     * several commands), each ended by CLI_OPT_END */
    const cli_opt *opts[CLI_MAX_OPT_GROUPS];
    unsigned help_col;   /* column of the option descriptions in the help */
    const char *notes;   /* paragraphs after the options */
} cli_command;

/* What the option parser hands to a command. */
typedef struct cli_arg {
    const char *cmd;   /* the command's name, for messages */
    const cli_opt *opt; /* the option, or NULL for an operand (a FILE, ...) */
    const char *as;    /* the spelling given (name, alias) or the operand */
    const char *value; /* the option's value; NULL when it takes none or
                        * none was given (the handler says what is missing) */
} cli_arg;

/* A command's handler of one option or operand: CLI_EXIT_OK to go on, else
 * the exit status (the error was reported). */
typedef int (*cli_arg_fn)(void *ctx, const cli_arg *a);

/* cli_args's result when the command should go on and run. */
#define CLI_ARGS_RUN (-1)

/*
 * Run a command's arguments through the parser: global options (into *g),
 * -h/--help (the command's help on stdout), its options (by name or alias;
 * an option with a value takes the next argument whatever it is) and its
 * operands ("-" is one), each handed to fn. Returns CLI_ARGS_RUN, or the
 * exit status to return at once (help shown, a usage error reported:
 * "CMD: unknown option 'X'", or fn's status).
 */
int cli_args(const cli_command *c, cli_global *g, int argc, char **argv, cli_arg_fn fn,
             void *ctx);

#endif
