/*
 * evjson.h — one event as JSON, the way `jfr print --json` prints an element
 * of its "events" array (public as jfrc_json; `print` and the live commands
 * use it).
 *
 * Two layouts: pretty (the JDK's: two-space indentation, ", " and ": "
 * separators, one field per line) and compact (the same tokens with no
 * whitespace outside strings, on one line: what test/compact-json.py makes
 * of the pretty layout).
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#ifndef JFRSTREAM_CONV_EVJSON_H
#define JFRSTREAM_CONV_EVJSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "jformat.h"
#include "jfrstream.h"
#include "outbuf.h"

/* Objects and arrays nested in one event's JSON. Pool references are
 * followed as deep as the data goes (HotSpot's jdk.OldObjectSample chains:
 * up to about 200 references, two levels each). The printer iterates (no
 * recursion); this bounds its memory (a frame per level) and the quadratic
 * indentation of hostile chains: the value at the limit prints as null and
 * the event reports JFR_LIMIT. */
#define EVJSON_MAX_NEST 4096
/* Objects and arrays in one event's JSON. A pooled object referred to twice
 * is printed twice (as the JDK prints it), so a few hundred hostile bytes
 * (entry i referring twice to entry i + 1) would print 2^depth objects:
 * past this many, values print as null and the event reports JFR_LIMIT.
 * Real events print a few thousand (a 2048-frame stack trace: ~12,000). */
#define EVJSON_MAX_OBJECTS 1048576

/* An object (its fields) or an array (its elements) being printed. */
typedef struct evjson_frame {
    jfr_iter it;            /* it.parent: the object or array */
    uint32_t next, limit;   /* next member; arrays: members to print */
    uint8_t kind;
    bool structs;           /* arrays: elements printed as objects */
    bool broken;            /* objects: a decode error, the rest is null */
} evjson_frame;

typedef struct jfrc_json { /* jfrc_json of jfrstream_conv.h */
    outbuf *o;
    bool compact;
    size_t indent;
    uint32_t stack_depth;
    jfmt_timebase tb; /* the first chunk's, as the JDK converts every chunk */
    bool have_tb;
    int32_t zone;     /* the first chunk's zone offset */
    bool have_zone;
    /* the open objects and arrays, outermost first: the pooled objects
     * among them are the path a cycle is detected on (grown on demand,
     * kept across events) */
    evjson_frame *frames;
    size_t nframes, capframes;
    uint32_t nopened;        /* objects and arrays opened in the current event */
    bool too_many;           /* the JFR_LIMIT was EVJSON_MAX_OBJECTS */
    jfr_status decode_error; /* first decode error of the current event */
} evjson;

void evjson_init(evjson *pr, outbuf *o, uint32_t stack_depth, bool compact);
void evjson_free(evjson *pr);
/* Feed every chunk header and metadata table (time base and zone are taken
 * from the first ones). */
void evjson_chunk_begin(evjson *pr, const jfr_chunk_info *c);
void evjson_metadata(evjson *pr, const jfr_metadata *m);
/* Print `{"type": ..., "values": {...}}` for the event `e` whose value is
 * `ev` (jfr_event_value). Returns JFR_OK, or the first decode error (the
 * JSON is complete and valid anyway, with null for what could not be read). */
jfr_status evjson_event(evjson *pr, const jfr_event *e, const jfr_value *ev);
/* What the last event's error means, for messages: the status text, or for
 * JFR_LIMIT the nesting limit. */
const char *evjson_error_str(const evjson *pr);

/* Layout pieces, for the document around the events (pretty layout). */
void evjson_object_begin(evjson *pr);
void evjson_object_end(evjson *pr);
void evjson_put_name(evjson *pr, const char *name);

#endif
