/*
 * commands.h — the command table (commands.c): every command with its name,
 * summary, options and handler, and the keys its handler gets for its
 * options.
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#ifndef JFRSTREAM_CLI_COMMANDS_H
#define JFRSTREAM_CLI_COMMANDS_H

#include <stddef.h>
#include <stdio.h>

#include "args.h"

/* cli_opt.key: one per option, whatever its spelling and command. */
enum cli_opt_key {
    OPT_NONE,
    /* filters (print, metadata, listen, tail) */
    OPT_EVENTS,
    OPT_CATEGORIES,
    /* print */
    OPT_JSON,
    OPT_STACK_DEPTH,
    /* view, query */
    OPT_VERBOSE,
    OPT_WIDTH,
    OPT_TRUNCATE,
    OPT_CELL_HEIGHT,
    OPT_EXACT,
    OPT_XML,
    /* metadata */
    OPT_IDS,
    OPT_PER_CHUNK,
    /* profiles (collapsed, flamegraph, pprof; --event and --threads also
     * listen and tail) */
    OPT_EVENT,
    OPT_THREADS,
    OPT_DOT,
    OPT_COUNT,
    OPT_LEAK,
    OPT_STATE,
    OPT_INCLUDE,
    OPT_EXCLUDE,
    OPT_FROM,
    OPT_TO,
    OPT_REVERSE,
    OPT_LINES,
    OPT_MINWIDTH,
    OPT_TITLE,
    OPT_OUTPUT,
    /* listen, tail */
    OPT_SUMMARY,
    OPT_COLLAPSED,
    OPT_FLAMEGRAPH,
    OPT_PPROF,
    OPT_WINDOW,
    OPT_LIVE_VIEW,
    OPT_VIEW_WINDOW,
    OPT_VIEW_EVERY,
    OPT_VIEW_BY,
    OPT_ONCE,
    OPT_MAX_CONNECTIONS,
    OPT_MAX_BYTES,
    OPT_IDLE_TIMEOUT,
    OPT_TLS_CERT,
    OPT_TLS_KEY,
    OPT_TLS_CLIENT_CA,
    OPT_TLS_ALLOW,
    OPT_EXIT_WHEN_DONE,
    /* the sinks of listen and tail (lib/sink) */
    OPT_LABEL,
    OPT_KAFKA,
    OPT_KAFKA_TOPIC,
    OPT_KAFKA_FORMAT,
    OPT_KAFKA_OPTION,
    OPT_PYROSCOPE,
    OPT_PYROSCOPE_APP,
    OPT_PYROSCOPE_BASIC_AUTH,
    OPT_PYROSCOPE_BEARER,
    OPT_PYROSCOPE_TENANT,
    OPT_PYROSCOPE_HEADER,
    OPT_PYROSCOPE_HEADER_FILE,
    OPT_PYROSCOPE_CA,
    OPT_PYROSCOPE_CERT,
    OPT_PYROSCOPE_KEY,
    OPT_METRICS,
    OPT_METRICS_TTL,
    OPT_METRICS_MAX_SOURCES,
    OPT_METRICS_MAX_SERIES,
    OPT_METRICS_TLS_CERT,
    OPT_METRICS_TLS_KEY,
    OPT_METRICS_BASIC_AUTH,
    /* scrub, disassemble */
    OPT_INCLUDE_EVENTS,
    OPT_EXCLUDE_EVENTS,
    OPT_INCLUDE_CATEGORIES,
    OPT_EXCLUDE_CATEGORIES,
    OPT_INCLUDE_THREADS,
    OPT_EXCLUDE_THREADS,
    OPT_MAX_CHUNKS,
    OPT_MAX_SIZE,
};

/* The command of that name, or NULL. */
const cli_command *cli_command_find(const char *name);
/* The table: *n commands. */
const cli_command *cli_commands(size_t *n);
/* `jfrstream --help`: the overview of all commands and the global options. */
void cli_overview(FILE *out);

/* The handlers (cmd_*.c; listen and tail: module.c). */
int cmd_summary(const cli_command *c, cli_global *g, int argc, char **argv);
int cmd_print(const cli_command *c, cli_global *g, int argc, char **argv);
int cmd_view(const cli_command *c, cli_global *g, int argc, char **argv);
int cmd_query(const cli_command *c, cli_global *g, int argc, char **argv);
int cmd_metadata(const cli_command *c, cli_global *g, int argc, char **argv);
int cmd_listen(const cli_command *c, cli_global *g, int argc, char **argv);
int cmd_tail(const cli_command *c, cli_global *g, int argc, char **argv);
int cmd_collapsed(const cli_command *c, cli_global *g, int argc, char **argv);
int cmd_flamegraph(const cli_command *c, cli_global *g, int argc, char **argv);
int cmd_pprof(const cli_command *c, cli_global *g, int argc, char **argv);
int cmd_scrub(const cli_command *c, cli_global *g, int argc, char **argv);
int cmd_disassemble(const cli_command *c, cli_global *g, int argc, char **argv);
int cmd_assemble(const cli_command *c, cli_global *g, int argc, char **argv);

#endif
