/*
 * module.h — listen and tail, the commands on the sinks' and the front
 * ends' libraries (librdkafka, libcurl, libmicrohttpd, OpenSSL, libuv and
 * the thirty libraries they bring), are built into a module,
 * jfrstream_live.so, that only they load (module.c): every other command
 * starts without mapping and binding those libraries.
 *
 * The module's files (cmd_listen.c, cmd_tail.c, live.c, secret.c and the
 * sink_*.c) call the rest of the CLI (args.c, report.c, filter.c, ...) in
 * the executable, which exports its symbols for them. With a static build
 * (meson's default_library=static) they are linked into the executable and
 * module.c calls them directly.
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#ifndef JFRSTREAM_CLI_MODULE_H
#define JFRSTREAM_CLI_MODULE_H

#include "args.h"

/* The module's entry points, resolved by name (module.c): what the command
 * table's cmd_listen and cmd_tail run. */
int live_cmd_listen(const cli_command *c, cli_global *g, int argc, char **argv);
int live_cmd_tail(const cli_command *c, cli_global *g, int argc, char **argv);

#ifdef CLI_LIVE_STAMP
/* The module's stamp (live.c): the version and the hashes of the headers it
 * shares with the executable (meson.build). module.c runs a module only if
 * its stamp is the executable's CLI_LIVE_STAMP: one of another build, met
 * beside a copied executable or in an older installation, is refused with a
 * message rather than called with structures it does not know. */
const char *live_module_stamp(void);
#endif

#endif
