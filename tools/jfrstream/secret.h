/*
 * secret.h — secrets and other small files the sink options name
 * (secret.c): passwords and tokens come from a file or the environment,
 * never from the command line itself, which `ps` shows to every user.
 * Messages name the option and the file, never what the file holds.
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#ifndef JFRSTREAM_CLI_SECRET_H
#define JFRSTREAM_CLI_SECRET_H

#include <stdbool.h>
#include <stddef.h>

#define CLI_SECRET_MAX 4096          /* a password, a token, a header's value */
#define CLI_SECRET_FILE_MAX (1u << 20) /* a PEM file, a users file */

/* The text of `path` (option `opt` of command `cmd` names it): at most
 * `max` bytes, no NUL byte, not empty; when `one_line`, one trailing "\n"
 * (or "\r\n") is dropped and no other line break may remain. CLI_EXIT_OK
 * and *out (free with cli_secret_free), or a usage error (exit status 2:
 * "CMD: OPT PATH: why"). */
int cli_secret_file(const char *cmd, const char *opt, const char *path, size_t max,
                    bool one_line, char **out);
/* The environment variable `var` as a one-line secret (a trailing newline
 * dropped): CLI_EXIT_OK and *out (NULL when unset), or a usage error when
 * it is set but empty or holds a line break. */
int cli_secret_env(const char *cmd, const char *var, char **out);
/* Whether `path` can be opened for reading: CLI_EXIT_OK, or a usage error
 * naming the option and the file (curl and libmicrohttpd read them later,
 * when a failure would be less clear). */
int cli_file_readable(const char *cmd, const char *opt, const char *path);
/* Wipe and free. NULL: nothing. */
void cli_secret_free(char *s);

#endif
