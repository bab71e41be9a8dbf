/*
 * usage.h — a command's help, generated from its entry in the command table
 * (usage line, description, options, notes), and usage errors.
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#ifndef JFRSTREAM_CLI_USAGE_H
#define JFRSTREAM_CLI_USAGE_H

#include <stdio.h>

#include "args.h"
#include "report.h"

/* The command being run (main sets it before running it): its usage line
 * follows a usage error. */
void cli_command_set(const cli_command *c);
/* "Usage: jfrstream <c's usage>" */
void cli_command_usage(const cli_command *c, FILE *out);
/* The command's --help text: usage, description, options, notes. */
void cli_command_help(const cli_command *c, FILE *out);

/* A usage error: the message, the current command's usage line, a hint to
 * --help; returns CLI_EXIT_USAGE. */
int cli_usage_error(const char *fmt, ...) CLI_PRINTF(1, 2);

#endif
