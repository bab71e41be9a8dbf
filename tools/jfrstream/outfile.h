/*
 * outfile.h — an output file (-o OUT, --collapsed FILE, ...) written whole
 * or not at all: the bytes go to a new file of a unique name beside it
 * (OUT.tmp.PID.N, in OUT's folder, so that the rename stays on one file
 * system), which is renamed over OUT when the command succeeds and removed
 * when it fails. SIGINT and SIGTERM remove it too, unless the command
 * handles them itself (listen and tail: they stop cleanly, and the file is
 * then renamed or removed as usual). Every command that writes a file uses
 * it; standard output ("-") is passed through.
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#ifndef JFRSTREAM_CLI_OUTFILE_H
#define JFRSTREAM_CLI_OUTFILE_H

#include <stdbool.h>

typedef struct cli_outfile {
    const char *path; /* OUT; NULL for standard output */
    char *tmp;        /* the file being written, or NULL */
    int fd;           /* where to write: the temporary file or STDOUT_FILENO; -1 closed */
} cli_outfile;

/* Start OUT (NULL or "-": standard output). Returns f->fd, or -1 when the
 * file cannot be created (reported, naming OUT). */
int cli_outfile_open(cli_outfile *f, const char *path);

/* Close the file and rename it over OUT. False on an error (reported; the
 * temporary file is removed). Standard output is left open. */
bool cli_outfile_commit(cli_outfile *f);

/* Close the file and remove it: OUT stays as it was. */
void cli_outfile_abort(cli_outfile *f);

#endif
