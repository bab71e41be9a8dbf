/*
 * main.c — jfrstream's entry point: global options, -h/--help and
 * -V/--version before the command, `help [COMMAND]`, and dispatch to the
 * command of the table (commands.c).
 *
 *   jfrstream [--feed-size N|random[:SEED]] [--resync] COMMAND [options] FILE|-
 *   jfrstream listen|tail [options] ...      (cmd_listen.c, cmd_tail.c)
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#include "args.h"
#include "commands.h"
#include "progress.h"
#include "report.h"
#include "usage.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void erase_progress(void *user) {
    (void)user;
    cli_progress_stdout();
}

int main(int argc, char **argv) {
    cli_global g = {.feed_mode = CLI_FEED_DEFAULT, .seed = 1};
    if (!(cli_out = jfrc_out_new_fd(STDOUT_FILENO, (size_t)1 << 20))) {
        fputs(CLI_NAME ": out of memory\n", stderr);
        return CLI_EXIT_ERROR;
    }
    jfrc_out_on_write(cli_out, erase_progress, NULL); /* erase the progress line first */
    int i = 1;
    while (i < argc) {
        const char *a = argv[i];
        if (cli_is_help(a)) {
            cli_overview(stdout);
            return CLI_EXIT_OK;
        }
        if (strcmp(a, "-V") == 0 || strcmp(a, "--version") == 0) {
            printf("%s %s\n", CLI_NAME, jfr_version_string());
            return CLI_EXIT_OK;
        }
        int r = cli_take_global(&g, argc, argv, &i);
        if (r < 0)
            return CLI_EXIT_USAGE;
        if (r == 0)
            break;
    }
    if (i >= argc)
        return cli_usage_error("missing command");
    const char *cmd = argv[i];
    const cli_command *c = cli_command_find(cmd);
    int rc;
    if (c) {
        cli_command_set(c);
        rc = c->run(c, &g, argc - i - 1, argv + i + 1);
    } else if (strcmp(cmd, "help") == 0) {
        /* help [COMMAND] */
        if (i + 2 < argc)
            return cli_usage_error("help: too many arguments");
        if (i + 1 < argc && !(c = cli_command_find(argv[i + 1])))
            return cli_usage_error("help: unknown command '%s'", argv[i + 1]);
        if (c)
            cli_command_help(c, stdout);
        else
            cli_overview(stdout);
        rc = CLI_EXIT_OK;
    } else if (cmd[0] == '-') {
        return cli_usage_error("unknown option '%s'", cmd);
    } else {
        return cli_usage_error("unknown command '%s'", cmd);
    }
    bool told = rc != CLI_EXIT_OK && jfrc_out_failed(cli_out); /* the command said so */
    if (jfrc_out_flush(cli_out) != JFR_OK) {
        if (!told)
            fprintf(stderr, CLI_NAME ": write error: %s\n", strerror(errno));
        rc = CLI_EXIT_ERROR;
    }
    jfrc_out_free(cli_out);
    return rc;
}
