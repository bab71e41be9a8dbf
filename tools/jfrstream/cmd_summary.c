/*
 * cmd_summary.c — `jfrstream summary FILE`: the text of `jfr summary`
 * (JDK 25): version and start of the first chunk, chunk count, total
 * duration, and per record type the count and summed size, sorted by count
 * (descending), then name, then the iteration order of the JDK's HashMap
 * (the table itself is in summary.c).
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#include "args.h"
#include "commands.h"
#include "frontend.h"
#include "report.h"
#include "usage.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int on_chunk_begin(jfr_parser *p, const jfr_chunk_info *c, void *user) {
    (void)p;
    jfrc_summary *s = user;
    if (jfrc_summary_nrows(s) == 0) /* the JDK names records 0 and 1 up front */
        jfrc_summary_chunk_begin(s, c, NULL, NULL);
    return jfrc_summary_ok(s) ? JFR_CB_CONTINUE : JFR_CB_STOP;
}

/* Chunks are counted when complete (a truncated last chunk is an error, not
 * a chunk); version and start come from the first complete one. */
static int on_chunk_end(jfr_parser *p, const jfr_chunk_info *c, void *user) {
    (void)p;
    jfrc_summary_chunk_end(user, c);
    return JFR_CB_CONTINUE;
}

static int on_metadata(jfr_parser *p, const jfr_metadata *m, void *user) {
    (void)p;
    jfrc_summary *s = user;
    jfrc_summary_metadata(s, m, NULL);
    return jfrc_summary_ok(s) ? JFR_CB_CONTINUE : JFR_CB_STOP;
}

static int on_record(jfr_parser *p, const jfr_record *r, void *user) {
    (void)p;
    jfrc_summary *s = user;
    /* the row of its type id: found, or added */
    return jfrc_summary_record(s, r) == JFRC_SUMMARY_NONE ? JFR_CB_STOP : JFR_CB_CONTINUE;
}

/* FILE, the only operand; no options. */
static int on_arg(void *ctx, const cli_arg *a) {
    const char **path = ctx;
    if (*path)
        return cli_usage_error("summary: too many arguments");
    *path = a->as;
    return CLI_EXIT_OK;
}

int cmd_summary(const cli_command *c, cli_global *g, int argc, char **argv) {
    const char *path = NULL;
    int r = cli_args(c, g, argc, argv, on_arg, &path);
    if (r != CLI_ARGS_RUN)
        return r;
    if (!path)
        return cli_usage_error("summary: missing FILE");

    jfrc_summary *s = jfrc_summary_new(false);
    if (!s) {
        cli_error("out of memory");
        return CLI_EXIT_ERROR;
    }
    jfr_callbacks cb = {.size = sizeof cb, .on_chunk_begin = on_chunk_begin,
                        .on_metadata = on_metadata,
                        .on_record = on_record,
                        .on_chunk_end = on_chunk_end,
                        .on_error = cli_on_error};
    int rc = cli_parse(g, path, NULL, &cb, s, NULL);
    if (!jfrc_summary_ok(s)) {
        cli_error("out of memory");
        rc = CLI_EXIT_ERROR;
    }
    if (jfrc_summary_has_chunks(s)) /* nothing to show without a complete chunk */
        jfrc_summary_print(s, cli_out);
    jfrc_summary_free(s);
    return rc;
}
