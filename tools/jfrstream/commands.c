/*
 * commands.c — the table of jfrstream's commands and their help: `jfrstream
 * --help` (an overview), `jfrstream COMMAND --help` and `jfrstream help
 * COMMAND` (that command's usage, description and options), and the short
 * usage printed after a usage error. See cli.h.
 *
 * A new option's help goes into its command's `options` text below (the
 * profile options are shared by collapsed, flamegraph and pprof, the live
 * options by listen and tail).
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#include "cli.h"

#include <ctype.h>
#include <string.h>

/* Options shared by several commands: one text each. */
#define FILTER_OPTIONS                                                                    \
    "  --events FILTER      event types: a comma-separated list of names\n"               \
    "                       (qualified or simple) or quoted glob patterns\n"              \
    "  --categories FILTER  event types of these @Category names (or globs)\n"

#define PROFILE_OPTIONS                                                                   \
    "  --event E    what to fold, comma-separated: cpu (jdk.ExecutionSample,\n"          \
    "               the default), cputime (jdk.CPUTimeSample), wall\n"                   \
    "               (jdk.NativeMethodSample, profiler.WallClockSample by its\n"          \
    "               samples), alloc (allocation events, weighted by bytes), live\n"      \
    "               (profiler.LiveObject), nativemem (profiler.Malloc, by size),\n"      \
    "               lock (jdk.JavaMonitorEnter, jdk.ThreadPark, weighted by\n"            \
    "               duration in ns), or event type names\n"                              \
    "  --threads    a bottom frame per thread: [name tid=ID]\n"                           \
    "  --dot        pkg.Class.method instead of pkg/Class.method\n"                       \
    "  --count      weight every event 1\n"                                               \
    "  --leak       nativemem: only allocations never freed\n"                            \
    "  --state LIST only samples in these thread states (default, runnable,\n"           \
    "               sleeping, ...: the names after STATE_)\n"                             \
    "  --include RE, --exclude RE\n"                                                      \
    "               keep / drop stacks with a frame matching RE as a whole\n"             \
    "               (POSIX extended)\n"                                                   \
    "  --from T, --to T\n"                                                                \
    "               by start time: ms (from 1500000000000 absolute, else from\n"          \
    "               the start, negative from the end), or\n"                              \
    "               [YYYY-MM-DDT]HH:MM[:SS[.mmm]] local time\n"                           \
    "  --reverse    stacks top first (collapsed, flamegraph)\n"                           \
    "  --lines      FRAME:LINE names\n"                                                   \
    "  --minwidth PCT\n"                                                                  \
    "               leave out frames below PCT % of the total (collapsed,\n"             \
    "               flamegraph)\n"

#define LIVE_OPTIONS                                                                      \
    FILTER_OPTIONS                                                                        \
    "  --json               one event per line on stdout: an element of print\n"          \
    "                       --json's \"events\" array, compact; events of each\n"         \
    "                       flush segment in end-time order\n"                            \
    "  --stack-depth N      stack frames in --json (default 5)\n"                         \
    "  --summary            the summary table (as `summary`, over all inputs) at\n"       \
    "                       the end: on stdout, or on stderr with --json\n"               \
    "  --collapsed FILE, --flamegraph FILE, --pprof FILE\n"                               \
    "                       write a profile of the events of all inputs (as the\n"        \
    "                       commands of those names): at the end, or with\n"              \
    "                       --window every window\n"                                      \
    "  --profile-event E    what to profile, as --event (default cpu)\n"                  \
    "  --profile-threads    a frame per thread, as --threads\n"                           \
    "  --window SECONDS     write the profile of each SECONDS window and start a\n"       \
    "                       new one; each file is replaced whole (FILE.tmp, renamed)\n"

#define LIVE_NOTE                                                                         \
    "Without --json and --summary: per-type rates once a second on stdout\n"              \
    "(redrawn on a terminal, else one line per second) of the events that arrived\n"      \
    "in that second; what was already there when the run began (a file sent\n"           \
    "whole, a repository's existing chunks) is counted apart, as \"replayed\".\n"         \
    "Per-connection messages go to stderr as \"" CLI_NAME ": SOURCE: message\".\n"        \
    "SIGINT/SIGTERM stop cleanly (an unfinished chunk is reported); a second signal\n"    \
    "exits at once.\n"

#define FILE_NOTE                                                                         \
    "FILE is a recording, or - for standard input; gzip, zip, lz4 and zstd are\n"         \
    "read as they are decompressed (of a zip, its single entry or first *.jfr).\n"

#define GLOBAL_NOTE                                                                       \
    "\n"                                                                                  \
    "Global options (see " CLI_NAME " --help): --feed-size N|random[:SEED],\n"            \
    "--resync, --max-memory BYTES.\n"

static const cli_command commands[] = {
    {"summary", cmd_summary, "summary FILE",
     "version, chunks, per-type event counts and sizes (as `jfr summary`)",
     "", FILE_NOTE GLOBAL_NOTE},
    {"print", cmd_print,
     "print [--json] [--events FILTER] [--categories FILTER]\n"
     "                 [--stack-depth N] FILE",
     "events as JSON, as `jfr print --json` prints them",
     "  --json               JSON (the only format; the default)\n"
     FILTER_OPTIONS
     "  --stack-depth N      stack frames per stack trace (default 5)\n",
     FILE_NOTE GLOBAL_NOTE},
    {"metadata", cmd_metadata,
     "metadata [--events FILTER] [--categories FILTER] [--ids]\n"
     "                 [--per-chunk] FILE",
     "the types, fields and annotations (as `jfr metadata`)",
     FILTER_OPTIONS
     "  --ids                add type ids\n"
     "  --per-chunk          every chunk's metadata separately, with ids and field\n"
     "                       flags\n",
     FILE_NOTE GLOBAL_NOTE},
    {"collapsed", cmd_collapsed, "collapsed [PROFILE OPTIONS] [-o OUT] FILE...",
     "folded stacks for flamegraph.pl and speedscope",
     PROFILE_OPTIONS
     "  -o OUT       output file (default: standard output)\n",
     "One line per call path, \"frame;frame;frame weight\", with the frame names of\n"
     "async-profiler's converter (pkg/Class.method_[j], ...). Several FILEs make\n"
     "one profile.\n"
     FILE_NOTE GLOBAL_NOTE},
    {"flamegraph", cmd_flamegraph, "flamegraph [PROFILE OPTIONS] [--title TEXT] -o OUT.html FILE...",
     "a self-contained interactive HTML flame graph",
     PROFILE_OPTIONS
     "  --title TEXT the page's title\n"
     "  -o OUT.html  output file (default: standard output)\n",
     "Click to zoom; a regular-expression search (#search=REGEX in the address).\n"
     FILE_NOTE GLOBAL_NOTE},
    {"pprof", cmd_pprof, "pprof [PROFILE OPTIONS] -o OUT.pb.gz FILE...",
     "a gzip-compressed pprof profile (pprof, Pyroscope)",
     PROFILE_OPTIONS
     "  -o OUT.pb.gz output file (default: standard output)\n",
     FILE_NOTE GLOBAL_NOTE},
    {"listen", cmd_listen,
     "listen [LIVE OPTIONS] [--once] [--max-connections N]\n"
     "                 [--max-bytes BYTES] [--idle-timeout SECONDS] [ADDR:PORT]",
     "accept JFR streams from JVMs (or .jfr files) on a TCP socket",
     "  --once               exit when the first connection ends\n"
     "  --max-connections N  connections open at once (default 1024); one more\n"
     "                       is accepted and closed (\"connection limit N reached\")\n"
     "  --max-bytes BYTES    bytes per connection, K/M/G suffixes (default 0:\n"
     "                       unlimited)\n"
     "  --idle-timeout SECONDS\n"
     "                       close a connection that sent nothing for SECONDS\n"
     "                       (default 0: never); a slow peer is not idle\n"
     LIVE_OPTIONS,
     "ADDR:PORT is PORT, ADDR:PORT or [IPV6]:PORT; default 127.0.0.1:7091 (port 0:\n"
     "any free port); \"listening on ADDR:PORT\" is printed on stderr. Many\n"
     "connections at once: a JVM's FlightRecorderMXBean stream (tools/jfr-pump)\n"
     "or plain .jfr files. Bad data closes that connection only, with the reason\n"
     "(peer, chunk, byte offset) on stderr (--resync: skips to the next chunk).\n\n"
     LIVE_NOTE
     "\nGlobal options: --resync, --max-memory BYTES (see " CLI_NAME " --help).\n"},
    {"tail", cmd_tail, "tail [LIVE OPTIONS] [--exit-when-done] [--idle SECONDS] DIR|FILE",
     "follow a JVM's disk repository as it is written",
     "  --exit-when-done     exit when the JVM has finished writing (its final\n"
     "                       chunk); without it, a tail of a parent folder waits\n"
     "                       for the next JVM's folder\n"
     "  --idle SECONDS       exit after SECONDS without new data\n"
     LIVE_OPTIONS,
     "DIR is the folder of chunk files, or its parent (-XX:FlightRecorderOptions:\n"
     "repository=DIR; the newest JVM folder is followed); FILE one chunk file\n"
     "being written (for a saved live stream, use print).\n\n"
     LIVE_NOTE
     "\nGlobal options: --resync, --max-memory BYTES (see " CLI_NAME " --help).\n"},
};

static const cli_command *current;

const cli_command *cli_command_find(const char *name) {
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp(commands[i].name, name) == 0)
            return &commands[i];
    return NULL;
}

void cli_command_set(const cli_command *c) { current = c; }

void cli_command_usage(const cli_command *c, FILE *out) {
    fprintf(out, "Usage: " CLI_NAME " %s\n", c->usage);
}

static void command_help(const cli_command *c, FILE *out) {
    cli_command_usage(c, out);
    fprintf(out, "\n%c%s.\n", toupper((unsigned char)c->about[0]), c->about + 1);
    if (*c->options)
        fprintf(out, "\nOptions:\n%s", c->options);
    fprintf(out, "\n%s", c->notes);
}

static void overview(FILE *out) {
    fputs("Usage: " CLI_NAME " [GLOBAL OPTIONS] COMMAND [OPTIONS] FILE|-\n"
          "       " CLI_NAME " listen|tail [OPTIONS] ...\n"
          "       " CLI_NAME " COMMAND --help      (or: " CLI_NAME " help COMMAND)\n"
          "\n"
          "Read a Java Flight Recorder recording (FILE, or - for standard input;\n"
          "plain, or compressed with gzip, zip, lz4 or zstd), or follow live JFR data.\n"
          "\n"
          "Commands:\n",
          out);
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(out, "  %-11s %s\n", commands[i].name, commands[i].about);
    fputs("\n"
          "Global options (before or after the command):\n"
          "  --feed-size N        feed the parser N bytes per call (a test aid; the\n"
          "                       output is the same for every size)\n"
          "  --feed-size random[:SEED]\n"
          "                       random slices of 1..65536 bytes (default seed 1)\n"
          "  --resync             after damage, scan on for the next chunk header\n"
          "                       (FLR\\0) and go on; the skipped bytes are reported\n"
          "  --max-memory BYTES   the most memory one parser may hold (K, M, G\n"
          "                       suffixes); past it the chunk fails and the next\n"
          "                       one is tried\n"
          "  -h, --help           this help\n"
          "  -V, --version        the library version\n"
          "\n"
          "When stderr is a terminal, a run over a file that lasts more than a\n"
          "second shows a progress line there.\n"
          "\n"
          "Exit status: 0 success; 1 bad input, with the output of the good chunks\n"
          "before it (listen, tail: any connection that ended with an error); 2 usage\n"
          "error. See jfrstream(1).\n",
          out);
}

void cli_usage(FILE *out) {
    if (current)
        command_help(current, out);
    else
        overview(out);
}
