/*
 * profile_files.h — writing a profile's outputs to files, with errors
 * reported on stderr: used by collapsed, flamegraph and pprof
 * (cmd_profile.c) and by listen and tail (live.c). The output formats
 * themselves are in profile_out.h.
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#ifndef JFRSTREAM_CLI_PROFILE_FILES_H
#define JFRSTREAM_CLI_PROFILE_FILES_H

#include <stdbool.h>

#include "jfrstream_conv.h"

/* The output formats of a profile. */
typedef enum { OUT_COLLAPSED, OUT_FLAME, OUT_PPROF } out_kind;

/*
 * Finish the profile and write each output given (NULL: not wanted):
 * collapsed text, flame graph HTML, pprof. Each file is written beside
 * PATH and renamed over it (outfile.h), so a reader never sees a partial one.
 * Errors are reported (cli_error); returns false on any.
 */
bool prof_write_files(jfrc_profile *p, const char *collapsed, const char *flame,
                      const char *pprof, const char *title);

#endif
