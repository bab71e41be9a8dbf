/*
 * commands.c — the table of jfrstream's commands: name, summary, usage
 * line, options (with their help) and handler of each, and `jfrstream
 * --help`, the overview of them all. A command's --help is generated from
 * its entry (usage.c); its arguments are parsed from it (args.c). See
 * args.h and commands.h.
 *
 * A new option goes into its command's option list below, with its help
 * (the profile options are shared by collapsed, flamegraph and pprof, the
 * live options by listen and tail, the filters by print, metadata, listen
 * and tail), and into the man page and its guide: doc/live.md for listen and
 * tail, doc/profiles.md for the profile commands (the cli-docs test checks
 * that every option is documented there).
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#include "commands.h"
#include "report.h"

#include <string.h>

/* ------------------------------------------------------------ options */

#define END CLI_OPT_END

/* Options shared by several commands: one list each. */
static const cli_opt filter_opts[] = {
    {"--events", "FILTER", OPT_EVENTS,
     "event types: a comma-separated list of names\n"
     "(qualified or simple) or quoted glob patterns", NULL, false},
    {"--categories", "FILTER", OPT_CATEGORIES, "event types of these @Category names (or globs)",
     NULL, false},
    END};

static const cli_opt profile_opts[] = {
    {"--event", "E", OPT_EVENT,
     "what to fold, comma-separated: cpu (jdk.ExecutionSample,\n"
     "the default), cputime (jdk.CPUTimeSample), wall\n"
     "(jdk.NativeMethodSample, profiler.WallClockSample by its\n"
     "samples), alloc (allocation events, weighted by bytes), live\n"
     "(profiler.LiveObject), nativemem (profiler.Malloc, by size),\n"
     "lock (jdk.JavaMonitorEnter, jdk.ThreadPark, weighted by\n"
     "duration in ns), or event type names", NULL, false},
    {"--events", "E", OPT_EVENT, NULL, NULL, true}, /* a slip for --event, accepted */
    {"--threads", NULL, OPT_THREADS, "a bottom frame per thread: [name tid=ID]", NULL, false},
    {"--dot", NULL, OPT_DOT, "pkg.Class.method instead of pkg/Class.method", NULL, false},
    {"--count", NULL, OPT_COUNT, "weight every event 1", NULL, false},
    {"--leak", NULL, OPT_LEAK, "nativemem: only allocations never freed", NULL, false},
    {"--state", "LIST", OPT_STATE,
     "only samples in these thread states (default, runnable,\n"
     "sleeping, ...: the names after STATE_)", NULL, false},
    {"--include", "RE", OPT_INCLUDE, NULL, NULL, false},
    {"--exclude", "RE", OPT_EXCLUDE,
     "keep / drop stacks with a frame matching RE as a whole\n"
     "(POSIX extended)", NULL, false},
    {"--from", "T", OPT_FROM, NULL, NULL, false},
    {"--to", "T", OPT_TO,
     "by start time: ms (from 1500000000000 absolute, else from\n"
     "the start, negative from the end), or\n"
     "[YYYY-MM-DDT]HH:MM[:SS[.mmm]] local time", NULL, false},
    {"--reverse", NULL, OPT_REVERSE, "stacks top first (collapsed, flamegraph)", NULL, false},
    {"--lines", NULL, OPT_LINES, "FRAME:LINE names", NULL, false},
    {"--minwidth", "PCT", OPT_MINWIDTH,
     "leave out frames below PCT % of the total (collapsed,\n"
     "flamegraph)", NULL, false},
    END};

static const cli_opt live_opts[] = {
    {"--json", NULL, OPT_JSON,
     "one event per line on stdout: an element of print\n"
     "--json's \"events\" array, compact; events of each\n"
     "flush segment in end-time order", NULL, false},
    {"--stack-depth", "N", OPT_STACK_DEPTH, "stack frames in --json (default 5)", NULL, false},
    {"--summary", NULL, OPT_SUMMARY,
     "the summary table (as `summary`, over all inputs) at\n"
     "the end: on stdout, or on stderr with --json", NULL, false},
    {"--collapsed", "FILE", OPT_COLLAPSED, NULL, NULL, false},
    {"--flamegraph", "FILE", OPT_FLAMEGRAPH, NULL, NULL, false},
    {"--pprof", "FILE", OPT_PPROF,
     "write a profile of the events of all inputs (as the\n"
     "commands of those names): at the end, or with\n"
     "--window every window", NULL, false},
    {"--event", "E", OPT_EVENT,
     "what to profile, as collapsed --event (default cpu);\n"
     "old spelling: --profile-event", "--profile-event", false},
    {"--profile-threads", NULL, OPT_THREADS, "a frame per thread, as --threads", NULL, false},
    {"--window", "SECONDS", OPT_WINDOW,
     "write the profile of each SECONDS window and start a\n"
     "new one; each file is replaced whole (written beside it,\n"
     "then renamed); also --pyroscope's window (default 10 s\n"
     "there)", NULL, false},
    {"--view", "NAME", OPT_LIVE_VIEW,
     "show a view of `view` (or an event type's table) over\n"
     "the events of the last --view-window, instead of the\n"
     "rates (repeatable)", NULL, false},
    {"--view-window", "SECONDS", OPT_VIEW_WINDOW,
     "the events a view reads: those that ended in the last\n"
     "SECONDS (default 600, as JFR.view's maxage)", NULL, false},
    {"--view-every", "SECONDS", OPT_VIEW_EVERY,
     "redraw the views every SECONDS (default 1 on a terminal,\n"
     "else print them every 10); and once at the end", NULL, false},
    {"--view-by", "source", OPT_VIEW_BY,
     "the views of each input apart, under \"Source: ID\"\n"
     "(default: one table over all inputs)", NULL, false},
    END};

/* The ingestion edge (listen, tail): labels and sinks. */
static const cli_opt sink_opts[] = {
    {"--label", "KEY=VALUE", OPT_LABEL,
     "a label of every input, beside those read from its\n"
     "recording (repeatable; KEY: letters, digits, _)", NULL, false},
    {"--kafka", "BROKERS", OPT_KAFKA,
     "send every event (those --events/--categories select)\n"
     "to Kafka, one message per event keyed by the source id\n"
     "(BROKERS: HOST:PORT,...; idempotent producer, acks=all)", NULL, false},
    {"--kafka-topic", "TOPIC", OPT_KAFKA_TOPIC,
     "the topic (default jfr-events); {type} in it expands to\n"
     "the event type", NULL, false},
    {"--kafka-format", "F", OPT_KAFKA_FORMAT,
     "json (the --json object plus \"source\": {labels}, the\n"
     "default) or otlp-json (an OTLP logs request per event)", NULL, false},
    {"--kafka-option", "KEY=VALUE", OPT_KAFKA_OPTION,
     "a librdkafka property (repeatable): security,\n"
     "compression, batching, queue size", NULL, false},
    {"--pyroscope", "URL", OPT_PYROSCOPE,
     "push each window's profiles (--event kinds: cpu, wall,\n"
     "alloc, lock, live, nativemem; default cpu) per input to\n"
     "Pyroscope's URL/ingest as pprof (--window, default 10 s)", NULL, false},
    {"--pyroscope-app", "NAME", OPT_PYROSCOPE_APP,
     "the application name in Pyroscope (default: the label\n"
     "service, else main_class, else jfrstream)", NULL, false},
    {"--pyroscope-basic-auth", "FILE", OPT_PYROSCOPE_BASIC_AUTH,
     "basic auth with the USER:PASSWORD in FILE (or in\n"
     "$JFRSTREAM_PYROSCOPE_BASIC_AUTH); Grafana Cloud: the\n"
     "instance id and an access token", NULL, false},
    {"--pyroscope-bearer", "FILE", OPT_PYROSCOPE_BEARER,
     "Authorization: Bearer with the token in FILE (or in\n"
     "$JFRSTREAM_PYROSCOPE_BEARER)", NULL, false},
    {"--pyroscope-tenant", "ID", OPT_PYROSCOPE_TENANT,
     "X-Scope-OrgID: ID, the tenant of a multi-tenant\n"
     "Pyroscope", NULL, false},
    {"--pyroscope-header", "'NAME: VALUE'", OPT_PYROSCOPE_HEADER,
     "one more header on every upload (repeatable)", NULL, false},
    {"--pyroscope-header-file", "NAME=FILE", OPT_PYROSCOPE_HEADER_FILE,
     "the header NAME with the value in FILE: for a secret\n"
     "(repeatable)", NULL, false},
    {"--pyroscope-ca", "FILE", OPT_PYROSCOPE_CA,
     "HTTPS: the CA certificates (PEM) that verify the\n"
     "server (default: the system's)", NULL, false},
    {"--pyroscope-cert", "FILE", OPT_PYROSCOPE_CERT, NULL, NULL, false},
    {"--pyroscope-key", "FILE", OPT_PYROSCOPE_KEY,
     "HTTPS: a client certificate and its key (PEM) for\n"
     "servers that want one (mutual TLS)", NULL, false},
    {"--metrics", "ADDR:PORT", OPT_METRICS,
     "serve Prometheus metrics of every input at\n"
     "http://ADDR:PORT/metrics (PORT alone: on 127.0.0.1;\n"
     "0: any free port): GC, CPU, memory, threads, classes,\n"
     "allocation, locks, safepoints, events per type", NULL, false},
    {"--metrics-ttl", "SECONDS", OPT_METRICS_TTL,
     "an ended input's series stay this long (default 300)", NULL, false},
    {"--metrics-max-sources", "N", OPT_METRICS_MAX_SOURCES,
     "inputs with series at most (default 10000)", NULL, false},
    {"--metrics-max-series", "N", OPT_METRICS_MAX_SERIES,
     "series of inputs at most (default 1000000)", NULL, false},
    {"--metrics-tls-cert", "FILE", OPT_METRICS_TLS_CERT, NULL, NULL, false},
    {"--metrics-tls-key", "FILE", OPT_METRICS_TLS_KEY,
     "serve /metrics over HTTPS (TLS 1.2+) with this\n"
     "certificate and key (PEM)", NULL, false},
    {"--metrics-basic-auth", "FILE", OPT_METRICS_BASIC_AUTH,
     "require basic auth: FILE has lines USER:PASSWORD\n"
     "(PASSWORD plain or a bcrypt hash, as htpasswd -B)", NULL, false},
    END};

static const cli_opt print_opts[] = {
    {"--json", NULL, OPT_JSON, "JSON, as `jfr print --json` (default: text, as `jfr print`)",
     NULL, false},
    {"--exact", NULL, OPT_EXACT,
     "text with every digit of durations, times, percentages\n"
     "and data amounts", NULL, false},
    {"--xml", NULL, OPT_XML, "XML, as `jfr print --xml`", NULL, false},
    END};

static const cli_opt print_depth_opts[] = {
    {"--stack-depth", "N", OPT_STACK_DEPTH, "stack frames per stack trace (default 5)", NULL,
     false},
    END};

static const cli_opt view_opts[] = {
    {"--verbose", NULL, OPT_VERBOSE, "field names under the headers, and the query", NULL, false},
    {"--width", "N", OPT_WIDTH, "width of the table or form (default: 80 to 120)", NULL, false},
    {"--truncate", "beginning|end", OPT_TRUNCATE, "where texts too long for a cell are cut",
     NULL, false},
    {"--cell-height", "N", OPT_CELL_HEIGHT, "lines per table cell (default: the view's)", NULL,
     false},
    END};

static const cli_opt metadata_opts[] = {
    {"--ids", NULL, OPT_IDS, "add type ids", NULL, false},
    {"--per-chunk", NULL, OPT_PER_CHUNK,
     "every chunk's metadata separately, with ids and field\n"
     "flags", NULL, false},
    END};

static const cli_opt collapsed_opts[] = {
    {"-o", "OUT", OPT_OUTPUT,
     "output file (default: standard output); written beside\n"
     "it and renamed, not written when the command fails", NULL, false},
    {"--output", "OUT", OPT_OUTPUT, NULL, NULL, true},
    END};

static const cli_opt flamegraph_opts[] = {
    {"--title", "TEXT", OPT_TITLE, "the page's title", NULL, false},
    {"-o", "OUT.html", OPT_OUTPUT,
     "output file (default: standard output); written beside\n"
     "it and renamed, not written when the command fails", NULL, false},
    {"--output", "OUT.html", OPT_OUTPUT, NULL, NULL, true},
    END};

static const cli_opt pprof_opts[] = {
    {"-o", "OUT.pb.gz", OPT_OUTPUT,
     "output file (default: standard output); written beside\n"
     "it and renamed, not written when the command fails", NULL, false},
    {"--output", "OUT.pb.gz", OPT_OUTPUT, NULL, NULL, true},
    END};

static const cli_opt listen_opts[] = {
    {"--once", NULL, OPT_ONCE, "exit when the first connection ends", NULL, false},
    {"--max-connections", "N", OPT_MAX_CONNECTIONS,
     "connections open at once (default 1024); one more\n"
     "is accepted and closed (\"connection limit N reached\")", NULL, false},
    {"--max-bytes", "BYTES", OPT_MAX_BYTES,
     "bytes per connection, K/M/G suffixes (default 0:\n"
     "unlimited)", NULL, false},
    {"--idle-timeout", "SECONDS", OPT_IDLE_TIMEOUT,
     "close a connection that sent nothing for SECONDS\n"
     "(default 0: never); a slow peer is not idle", NULL, false},
    {"--tls-cert", "FILE", OPT_TLS_CERT,
     "serve TLS 1.2+ with this certificate chain (PEM,\n"
     "leaf first); needs --tls-key", NULL, false},
    {"--tls-key", "FILE", OPT_TLS_KEY, "the private key of --tls-cert (PEM)", NULL, false},
    {"--tls-client-ca", "FILE", OPT_TLS_CLIENT_CA,
     "mutual TLS: require a client certificate signed\n"
     "by a CA of FILE (PEM)", NULL, false},
    {"--tls-allow", "PATTERN", OPT_TLS_ALLOW,
     "with --tls-client-ca: admit only a certificate whose\n"
     "CN or a SAN (DNS, URI, email, IP) matches PATTERN\n"
     "(fnmatch: *, ?, [...]); repeatable, any one admits", NULL, false},
    END};

static const cli_opt tail_opts[] = {
    {"--exit-when-done", NULL, OPT_EXIT_WHEN_DONE,
     "exit when the JVM has finished writing (its final\n"
     "chunk); without it, a tail of a parent folder waits\n"
     "for the next JVM's folder", NULL, false},
    {"--idle-timeout", "SECONDS", OPT_IDLE_TIMEOUT,
     "exit after SECONDS without new data;\n"
     "old spelling: --idle", "--idle", false},
    END};

/* scrub, disassemble, assemble (cmd_scrub.c; guide: doc/scrub.md) */
static const cli_opt scrub_opts[] = {
    {"--include-events", "FILTER", OPT_INCLUDE_EVENTS, "keep events of these types", NULL, false},
    {"--exclude-events", "FILTER", OPT_EXCLUDE_EVENTS, "drop events of these types", NULL, false},
    {"--include-categories", "FILTER", OPT_INCLUDE_CATEGORIES,
     "keep events of these @Category names", NULL, false},
    {"--exclude-categories", "FILTER", OPT_EXCLUDE_CATEGORIES,
     "drop events of these @Category names", NULL, false},
    {"--include-threads", "FILTER", OPT_INCLUDE_THREADS,
     "keep events whose eventThread's Java name matches", NULL, false},
    {"--exclude-threads", "FILTER", OPT_EXCLUDE_THREADS,
     "drop events whose eventThread's Java name matches", NULL, false},
    END};

static const cli_opt disassemble_opts[] = {
    {"--output", "DIR", OPT_OUTPUT, "folder of the files (default: the working folder)", NULL,
     false},
    {"--max-chunks", "N", OPT_MAX_CHUNKS, "at most N chunks a file (default 5)", NULL, false},
    {"--max-size", "S", OPT_MAX_SIZE,
     "at most S bytes a file (a chunk larger than S gets\n"
     "a file of its own)", NULL, false},
    END};

/* ------------------------------------------------------------- notes */

#define LIVE_NOTE                                                                         \
    "Without --json, --summary and --view: per-type rates once a second on stdout\n"      \
    "(redrawn on a terminal, else one line per second): the events that arrived\n"       \
    "over the last 3 seconds (fewer at the start), per second; what was already\n"       \
    "there when the run began (a file sent whole, a repository's existing chunks)\n"     \
    "is counted apart, as \"replayed\". The line counts connections (listen:\n"          \
    "conns=OPEN/TOTAL) or chunk files (tail: files=N).\n"                                \
    "Per-connection messages go to stderr as \"" CLI_NAME ": SOURCE: message\".\n"        \
    "SIGINT/SIGTERM stop cleanly (an unfinished chunk is reported); a second signal\n"    \
    "exits at once.\n"

#define FILE_NOTE                                                                         \
    "FILE is a recording, or - for standard input; gzip, zip, lz4 and zstd are\n"         \
    "read as they are decompressed (of a zip, its single entry or first *.jfr).\n"

#define GLOBAL_NOTE                                                                       \
    "\n"                                                                                  \
    "Global options (see " CLI_NAME " --help): --feed-size N|random[:SEED],\n"            \
    "--resync, --max-memory BYTES, --jobs N.\n"

/* ------------------------------------------------------------- table */

static const cli_command commands[] = {
    {"summary", cmd_summary, "summary FILE",
     "version, chunks, per-type event counts and sizes (as `jfr summary`)",
     {NULL}, 23, FILE_NOTE GLOBAL_NOTE},
    {"print", cmd_print,
     "print [--json|--xml|--exact] [--events FILTER] [--categories FILTER]\n"
     "                 [--stack-depth N] FILE",
     "events as text, as `jfr print` prints them (--json, --xml:\n"
     "as `jfr print --json`, `--xml`; text is the default since 0.2)",
     {print_opts, filter_opts, print_depth_opts}, 23, FILE_NOTE GLOBAL_NOTE},
    {"view", cmd_view,
     "view [--verbose] [--width N] [--truncate beginning|end]\n"
     "                 [--cell-height N] VIEW FILE",
     "a view of the recording, as `jfr view` (hot-methods, gc, ...)",
     {view_opts}, 23,
     "VIEW is one of the 83 views of JDK 25's `jfr view` (doc/views.md lists them),\n"
     "an event type's name (all its events, one row each), types (the event types\n"
     "and their counts), all-views or all-events.\n"
     FILE_NOTE GLOBAL_NOTE},
    {"query", cmd_query,
     "query [--verbose] [--width N] [--truncate beginning|end]\n"
     "                 [--cell-height N] 'SELECT ...' FILE",
     "run a query of `jfr view`'s language (doc/views.md)",
     {view_opts}, 23,
     "A query that does not parse is a usage error naming the position and reason.\n"
     FILE_NOTE GLOBAL_NOTE},
    {"metadata", cmd_metadata,
     "metadata [--events FILTER] [--categories FILTER] [--ids]\n"
     "                 [--per-chunk] FILE",
     "the types, fields and annotations (as `jfr metadata`)",
     {filter_opts, metadata_opts}, 23, FILE_NOTE GLOBAL_NOTE},
    {"collapsed", cmd_collapsed, "collapsed [PROFILE OPTIONS] [-o OUT] FILE...",
     "folded stacks for flamegraph.pl and speedscope",
     {profile_opts, collapsed_opts}, 15,
     "One line per call path, \"frame;frame;frame weight\", with the frame names of\n"
     "async-profiler's converter (pkg/Class.method_[j], ...). Several FILEs make\n"
     "one profile.\n"
     FILE_NOTE GLOBAL_NOTE},
    {"flamegraph", cmd_flamegraph, "flamegraph [PROFILE OPTIONS] [--title TEXT] -o OUT.html FILE...",
     "a self-contained interactive HTML flame graph",
     {profile_opts, flamegraph_opts}, 15,
     "Click to zoom; a regular-expression search (#search=REGEX in the address).\n"
     FILE_NOTE GLOBAL_NOTE},
    {"pprof", cmd_pprof, "pprof [PROFILE OPTIONS] -o OUT.pb.gz FILE...",
     "a gzip-compressed pprof profile (pprof, Pyroscope)",
     {profile_opts, pprof_opts}, 15, FILE_NOTE GLOBAL_NOTE},
    {"listen", cmd_listen,
     "listen [LIVE OPTIONS] [--once] [--max-connections N]\n"
     "                 [--max-bytes BYTES] [--idle-timeout SECONDS]\n"
     "                 [--tls-cert FILE --tls-key FILE [--tls-client-ca FILE]\n"
     "                 [--tls-allow PATTERN]...] [ADDR:PORT]",
     "accept JFR streams from JVMs (or .jfr files) on a TCP socket",
     {listen_opts, filter_opts, live_opts, sink_opts}, 23,
     "ADDR:PORT is PORT, ADDR:PORT or [IPV6]:PORT; default 127.0.0.1:7091 (port 0:\n"
     "any free port); \"listening on ADDR:PORT\" is printed on stderr. Many\n"
     "connections at once: a JVM's FlightRecorderMXBean stream (tools/jfr-pump)\n"
     "or plain .jfr files. Bad data closes that connection only, with the reason\n"
     "(peer, chunk, byte offset) on stderr (--resync: skips to the next chunk).\n"
     "With --tls-cert every connection must speak TLS; one that does not, fails\n"
     "the handshake or the client certificate checks is closed before any of its\n"
     "bytes is parsed: \"PEER: refused: REASON\" on stderr, counted (--metrics:\n"
     "jfrstream_connections_refused_total, jfrstream_tls_refused_total).\n\n"
     LIVE_NOTE
     "\nGlobal options: --resync, --max-memory BYTES, --jobs N (see " CLI_NAME " --help).\n"},
    {"tail", cmd_tail,
     "tail [LIVE OPTIONS] [--exit-when-done] [--idle-timeout SECONDS]\n"
     "                 DIR|FILE",
     "follow a JVM's disk repository as it is written",
     {tail_opts, filter_opts, live_opts, sink_opts}, 23,
     "DIR is the folder of chunk files, or its parent (-XX:FlightRecorderOptions:\n"
     "repository=DIR; the newest JVM folder is followed); FILE one chunk file\n"
     "being written (for a saved live stream, use print).\n\n"
     LIVE_NOTE
     "\nGlobal options: --resync, --max-memory BYTES, --jobs N (see " CLI_NAME " --help).\n"},
    {"scrub", cmd_scrub,
     "scrub [--include-events FILTER] [--exclude-events FILTER]\n"
     "                 [--include-categories FILTER] [--exclude-categories FILTER]\n"
     "                 [--include-threads FILTER] [--exclude-threads FILTER]\n"
     "                 IN.jfr [OUT.jfr]",
     "a copy of a recording without the events filtered out (as `jfr scrub`)",
     {scrub_opts}, 31,
     "A filter is a comma-separated list of names (qualified or simple) or quoted\n"
     "glob patterns (* and ?); a category of several words also matches its\n"
     "acronym. Options may repeat: an event is kept when it passes every one.\n"
     "OUT defaults to IN with \"-scrubbed\" before \".jfr\". Constant pools are\n"
     "copied whole, with the metadata record the header points at; events of\n"
     "unknown types are dropped. OUT is written beside itself and renamed: not\n"
     "written on error.\n"
     GLOBAL_NOTE},
    {"disassemble", cmd_disassemble,
     "disassemble [--output DIR] [--max-chunks N] [--max-size S] FILE.jfr",
     "split a recording into files of whole chunks (as `jfr disassemble`)",
     {disassemble_opts}, 23,
     "The files are FILE_0.jfr, FILE_1.jfr, ... (the number zero-padded to the\n"
     "width of the last), as JDK 25's `jfr disassemble` names and splits them.\n"},
    {"assemble", cmd_assemble, "assemble REPOSITORY FILE.jfr",
     "join a repository's *.jfr files, by name, into FILE (as `jfr assemble`)",
     {NULL}, 23,
     "FILE must not exist; it is written beside itself and renamed.\n"},
};

#define NCOMMANDS (sizeof commands / sizeof commands[0])

const cli_command *cli_commands(size_t *n) {
    *n = NCOMMANDS;
    return commands;
}

const cli_command *cli_command_find(const char *name) {
    for (size_t i = 0; i < NCOMMANDS; i++)
        if (strcmp(commands[i].name, name) == 0)
            return &commands[i];
    return NULL;
}

void cli_overview(FILE *out) {
    fputs("Usage: " CLI_NAME " [GLOBAL OPTIONS] COMMAND [OPTIONS] FILE|-\n"
          "       " CLI_NAME " listen|tail [OPTIONS] ...\n"
          "       " CLI_NAME " COMMAND --help      (or: " CLI_NAME " help COMMAND)\n"
          "\n"
          "Read a Java Flight Recorder recording (FILE, or - for standard input;\n"
          "plain, or compressed with gzip, zip, lz4 or zstd), or follow live JFR data.\n"
          "\n"
          "Commands:\n",
          out);
    for (size_t i = 0; i < NCOMMANDS; i++)
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
          "                       one is tried. With JSON output a quarter of it\n"
          "                       (at most 80 MiB) goes to the JSON writer's cache\n"
          "  -j, --jobs N         threads of print --json (1..64): each reads the\n"
          "                       whole file and writes every Nth batch of events;\n"
          "                       of view and query: N - 1 prepare the chunks ahead\n"
          "                       of the one being read. The output is the same.\n"
          "                       Default: the cores (at most 8) for a plain file of\n"
          "                       4 MiB or more, else 1\n"
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
