/*
 * usage.c — a command's help from its table entry, and usage errors (see
 * usage.h). The options part is laid out from the option lists: the label
 * ("  --name ARG", options without a help of their own joined to the next
 * with ", "), then the help lines at the command's column, on the label's
 * line when it ends before that column.
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#include "usage.h"

#include <ctype.h>
#include <stdarg.h>
#include <string.h>

/* The command being run, for the usage line after a usage error. */
static const cli_command *current;

void cli_command_set(const cli_command *c) { current = c; }

void cli_command_usage(const cli_command *c, FILE *out) {
    fprintf(out, "Usage: " CLI_NAME " %s\n", c->usage);
}

static void put_spaces(FILE *out, size_t n) {
    while (n--)
        fputc(' ', out);
}

/* One option (or a group joined on one label) and its help lines. */
static void option_help(const cli_command *c, const cli_opt *const *group, size_t n,
                        FILE *out) {
    size_t col = 2;
    fputs("  ", out);
    for (size_t k = 0; k < n; k++) {
        const cli_opt *o = group[k];
        if (k) {
            fputs(", ", out);
            col += 2;
        }
        fputs(o->name, out);
        col += strlen(o->name);
        if (o->arg) {
            fprintf(out, " %s", o->arg);
            col += 1 + strlen(o->arg);
        }
    }
    if (col < c->help_col) {
        put_spaces(out, c->help_col - col);
    } else {
        fputc('\n', out);
        put_spaces(out, c->help_col);
    }
    for (const char *h = group[n - 1]->help; *h;) {
        const char *nl = strchr(h, '\n');
        size_t len = nl ? (size_t)(nl - h) : strlen(h);
        fwrite(h, 1, len, out);
        fputc('\n', out);
        if (!nl)
            break;
        h = nl + 1;
        put_spaces(out, c->help_col);
    }
}

static void options_help(const cli_command *c, FILE *out) {
    const cli_opt *group[8];
    size_t n = 0;
    for (size_t g = 0; g < CLI_MAX_OPT_GROUPS && c->opts[g]; g++)
        for (const cli_opt *o = c->opts[g]; o->name; o++) {
            if (o->hidden)
                continue;
            if (n < sizeof group / sizeof group[0])
                group[n++] = o;
            if (o->help) {
                option_help(c, group, n, out);
                n = 0;
            }
        }
}

static bool has_options(const cli_command *c) {
    for (size_t g = 0; g < CLI_MAX_OPT_GROUPS && c->opts[g]; g++)
        for (const cli_opt *o = c->opts[g]; o->name; o++)
            if (!o->hidden)
                return true;
    return false;
}

void cli_command_help(const cli_command *c, FILE *out) {
    cli_command_usage(c, out);
    fprintf(out, "\n%c%s.\n", toupper((unsigned char)c->about[0]), c->about + 1);
    if (has_options(c)) {
        fputs("\nOptions:\n", out);
        options_help(c, out);
    }
    fprintf(out, "\n%s", c->notes);
}

int cli_usage_error(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fputs(CLI_NAME ": ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    if (current) {
        cli_command_usage(current, stderr);
        fprintf(stderr, "Try '" CLI_NAME " %s --help' for more information.\n", current->name);
    } else {
        fputs("Try '" CLI_NAME " --help' for more information.\n", stderr);
    }
    return CLI_EXIT_USAGE;
}
