/*
 * cli.h — shared declarations of the jfrstream command-line tool.
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#ifndef JFRSTREAM_CLI_H
#define JFRSTREAM_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "jfrstream.h"
#include "jfrstream_conv.h"

#define CLI_NAME "jfrstream"

/* Exit statuses. */
enum { CLI_EXIT_OK = 0, CLI_EXIT_ERROR = 1, CLI_EXIT_USAGE = 2 };

/* How input bytes are handed to jfr_parser_feed. */
typedef enum cli_feed_mode {
    CLI_FEED_DEFAULT, /* whole file (mmap) or 1 MiB reads              */
    CLI_FEED_FIXED,   /* exactly feed_size bytes per call              */
    CLI_FEED_RANDOM   /* 1..65536 bytes per call from a seeded PRNG    */
} cli_feed_mode;

/* Options accepted before or after the command name. */
typedef struct cli_global {
    cli_feed_mode feed_mode;
    size_t feed_size;
    uint64_t seed;
    bool resync; /* --resync: jfr_options.resync */
    uint64_t max_memory; /* --max-memory: jfr_options.max_memory */
} cli_global;

/* Try to take a global option at argv[*i] (advancing *i past its value).
 * Returns 1 if taken, 0 if argv[*i] is not a global option, -1 on a usage
 * error (already reported). */
/* BYTES: a number with an optional K, M or G suffix (powers of 1024). */
bool cli_parse_bytes(const char *s, uint64_t *out);
int cli_take_global(cli_global *g, int argc, char **argv, int *i);

/* One command: its name, entry point and help (the table is in commands.c,
 * where a new option's help goes too). */
typedef struct cli_command {
    const char *name;
    int (*run)(cli_global *g, int argc, char **argv);
    const char *usage;   /* what follows "Usage: jfrstream " */
    const char *about;   /* one line, lower case, no full stop */
    const char *options; /* "  --option  what it does" lines, each ending in '\n' */
    const char *notes;   /* paragraphs after the options */
} cli_command;

/* The command of that name, or NULL. */
const cli_command *cli_command_find(const char *name);
/* The command being run (main sets it before running it): its help is
 * what cli_usage prints, its usage line follows a usage error. */
void cli_command_set(const cli_command *c);
/* "Usage: jfrstream <c's usage>" */
void cli_command_usage(const cli_command *c, FILE *out);

/* The --help text: the current command's usage, description and options,
 * or before a command is chosen the overview of all commands. */
void cli_usage(FILE *out);
/* True for -h / --help. */
bool cli_is_help(const char *arg);

/* "jfrstream: <message>" on stderr. */
void cli_error(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;
/* A usage error: the message, the current command's usage line, a hint to
 * --help; returns CLI_EXIT_USAGE. */
int cli_usage_error(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;

/* An error found by a command in the data (e.g. an event that cannot be
 * decoded): printed like cli_error, and the run's exit status becomes 1. */
void cli_data_error(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;

/* The on_error callback every command installs: prints the message and
 * returns JFR_CB_CONTINUE so later good chunks are still processed. */
int cli_on_error(jfr_parser *p, jfr_status s, const char *message, void *user);

/* Optional hook run after jfr_parser_new (e.g. to subscribe with
 * jfr_parser_on); non-zero status aborts. */
typedef jfr_status (*cli_setup_fn)(jfr_parser *p, void *user);

/*
 * Parse `path` ("-" = stdin): create a parser with opts/cb/user, feed it the
 * input as the global options say, finish and free it. cb->on_error should
 * be cli_on_error. Returns CLI_EXIT_OK, or CLI_EXIT_ERROR when any error was
 * reported (input, parse or finish).
 */
int cli_parse(const cli_global *g, const char *path, const jfr_options *opts,
              const jfr_callbacks *cb, void *user, cli_setup_fn setup);

/* Stdout, buffered; flushed by main before exit. */
extern jfrc_out *cli_out;

/* ------------------------------------------------------------- filters */

/*
 * Event-type filters of `jfr print` / `jfr metadata`: --events and
 * --categories, each a comma-separated list of names or globs (* and ?).
 * An event type matches --events when its full name or its simple name
 * (after the last '.') matches a pattern; --categories when one of its
 * @Category names matches a pattern (or, for a category containing spaces,
 * its acronym equals the pattern). Both given: both must match.
 */
typedef struct cli_filter {
    char **events;       /* patterns, NULL when --events absent      */
    size_t nevents;
    char **categories;   /* patterns, NULL when --categories absent  */
    size_t ncategories;
    bool has_events, has_categories;
} cli_filter;

/* Add the patterns of one option value. Returns false on allocation failure. */
bool cli_filter_add(cli_filter *f, bool categories, const char *text);
bool cli_filter_active(const cli_filter *f);
bool cli_filter_match(const cli_filter *f, const jfr_type *t);
/* True when every pattern is a literal qualified name (contains '.', no glob
 * characters) and there is no category filter: the matching types are
 * exactly those names, so they can be subscribed before parsing. */
bool cli_filter_literal(const cli_filter *f);
void cli_filter_free(cli_filter *f);
/* Glob match (Java jdk.jfr.internal.util.Matcher semantics). */
bool cli_glob_match(const char *text, const char *pattern);

/* ------------------------------------------------------------ commands */

int cmd_summary(cli_global *g, int argc, char **argv);
int cmd_print(cli_global *g, int argc, char **argv);
int cmd_metadata(cli_global *g, int argc, char **argv);
int cmd_listen(cli_global *g, int argc, char **argv);
int cmd_tail(cli_global *g, int argc, char **argv);
int cmd_collapsed(cli_global *g, int argc, char **argv);
int cmd_flamegraph(cli_global *g, int argc, char **argv);
int cmd_pprof(cli_global *g, int argc, char **argv);

/* ------------------------------------------------- profiles (cmd_profile.c) */

/*
 * Finish the profile and write each output given (NULL: not wanted):
 * collapsed text, flame graph HTML, pprof. Each file is written to
 * PATH.tmp and renamed over PATH, so a reader never sees a partial one.
 * Errors are reported (cli_error); returns false on any.
 */
bool prof_write_files(jfrc_profile *p, const char *collapsed, const char *flame,
                      const char *pprof, const char *title);

/* Shared by the commands: --event, --threads, --dot, --count at argv[*i].
 * *taken tells whether it was one of those; returns a CLI exit status (0 or
 * a usage error already reported). */
int prof_options_take(jfrc_profile *pr, const char *cmd, int argc, char **argv, int *i,
                      bool *taken);

#endif
