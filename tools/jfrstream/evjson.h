/*
 * evjson.h — one event as JSON, the way `jfr print --json` prints an element
 * of its "events" array (shared by `print` and the live commands).
 *
 * Two layouts: pretty (the JDK's: two-space indentation, ", " and ": "
 * separators, one field per line) and compact (the same tokens with no
 * whitespace outside strings, on one line: what test/compact-json.py makes
 * of the pretty layout).
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#ifndef JFRSTREAM_CLI_EVJSON_H
#define JFRSTREAM_CLI_EVJSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "jformat.h"
#include "jfrstream.h"
#include "outbuf.h"

#define EVJSON_MAX_PATH 256 /* pooled objects open on the current print path */

typedef struct evjson {
    outbuf *o;
    bool compact;
    size_t indent;
    uint32_t stack_depth;
    jfmt_timebase tb; /* the first chunk's, as the JDK converts every chunk */
    bool have_tb;
    int32_t zone;     /* the first chunk's zone offset */
    bool have_zone;
    struct {
        const jfr_type *type;
        uint64_t key;
    } path[EVJSON_MAX_PATH];
    size_t npath;
    jfr_status decode_error; /* first decode error of the current event */
} evjson;

void evjson_init(evjson *pr, outbuf *o, uint32_t stack_depth, bool compact);
/* Feed every chunk header and metadata table (time base and zone are taken
 * from the first ones). */
void evjson_chunk_begin(evjson *pr, const jfr_chunk_info *c);
void evjson_metadata(evjson *pr, const jfr_metadata *m);
/* Print `{"type": ..., "values": {...}}` for the event `e` whose value is
 * `ev` (jfr_event_value). Returns JFR_OK, or the first decode error (the
 * JSON is complete and valid anyway, with null for what could not be read). */
jfr_status evjson_event(evjson *pr, const jfr_event *e, const jfr_value *ev);

/* Layout pieces, for the document around the events (pretty layout). */
void evjson_object_begin(evjson *pr);
void evjson_object_end(evjson *pr);
void evjson_put_name(evjson *pr, const char *name);

#endif
