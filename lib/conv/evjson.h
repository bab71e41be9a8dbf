/*
 * evjson.h — one event as JSON, the way `jfr print --json` prints an element
 * of its "events" array (public as jfrc_json; `print` and the live commands
 * use it).
 *
 * Two layouts: pretty (the JDK's: two-space indentation, ", " and ": "
 * separators, one field per line) and compact (the same tokens with no
 * whitespace outside strings, on one line: what test/compact-json.py makes
 * of the pretty layout). And XML (`xml`, public as jfrc_xml_new): the same
 * walk of the same values written as `jfr print --xml` writes them, an
 * element per value (<value>, <struct>, <array size=N>, named by the field
 * or indexed in an array; xsi:nil for null), the JDK's XMLWriter escapes.
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
    bool captured;          /* its JSON is being captured for the cache */
    uint8_t hbit;           /* pooled objects: bit of (type, key) in a reach set */
    uint8_t xkind;          /* XML: the element it was opened as */
} evjson_frame;

/* The JSON of pooled objects, kept for the rest of a chunk: a constant
 * (thread, stack trace, method, class...) printed again at the same depth
 * and indentation is a copy of the bytes printed the first time. An entry
 * is used only where printing it again would give the same bytes: no
 * decode error or limit inside it, no cycle cut outside it, and none of the
 * pooled objects open around it visited inside it (a 256-bit set of what it
 * visited, so a false "maybe" only costs the normal path).
 *
 * All of the cache's memory (entries, their bytes, the table of objects met
 * once, the capture buffer) stays within its limit, EVJSON_CACHE_LIMIT
 * unless evjson_set_cache_limit says otherwise; once there, nothing more
 * is added in that chunk (the output is the same, only slower). */
#define EVJSON_CACHE_LIMIT ((size_t)80 << 20)
/* An object is captured the second time it is met (one-off stack traces
 * would fill the cache); the table that remembers the objects met once
 * takes at most a fifth of the limit (8 bytes an object, kept at most 3/4
 * full), beyond every object is captured. */
/* Objects captured larger than this (or than a sixteenth of the limit) are
 * not cached. */
#define EVJSON_CAPTURE_MAX ((size_t)1 << 20)
/* Below this limit the cache is off. */
#define EVJSON_CACHE_MIN ((size_t)64 << 10)

typedef struct evjson_cent {
    const jfr_type *type;
    uint64_t key;
    uint32_t depth, indent;  /* frames open, indentation where it was printed */
    uint32_t nopened;        /* objects and arrays it opens, itself included */
    uint32_t len;
    uint64_t reach[4];       /* pooled objects visited inside (hbit set) */
    const char *bytes;
} evjson_cent;

/* A pooled object whose JSON is being captured (nested ones too). */
typedef struct evjson_cap {
    size_t frame;            /* its frame index */
    size_t start;            /* where its bytes start in the capture buffer */
    uint32_t nopened0, nerr0;
    bool bad;
    uint64_t reach[4];
} evjson_cap;

typedef struct evjson_cache {
    bool on;                 /* the current chunk is cacheable */
    bool use;                /* the current event is of that chunk */
    bool bound;              /* chunk_ and index of its events are known */
    const void *chunk;       /* the events' jfr_event.chunk_ */
    uint64_t index;          /* their chunk_index */
    uint32_t *slots;         /* entry index + 1; power-of-two table */
    size_t mask;
    evjson_cent *ents;
    size_t nents, capents;
    uint64_t *seen;          /* admission: objects met once (hash | 1), so */
    size_t smask, nseen;     /* that only those met again are captured */
    char **blocks;           /* byte store: blocks of `capmax` bytes */
    size_t nblocks, capblocks, bused; /* bused: bytes used in the last block */
    size_t limit;            /* most bytes held; 0: the cache is off */
    size_t held;             /* bytes allocated now, every table included */
    size_t capmax;           /* capture buffer and store block size */
    /* capture */
    outbuf capo;             /* what is printed while a capture is open */
    outbuf *real;            /* the printer's own output meanwhile */
    bool spilled;            /* capo overflowed into real: captures void */
    evjson_cap *caps;
    size_t ncaps, capcaps;
    uint32_t nerr;           /* errors noted (captures compare) */
    uint64_t hits, misses;   /* statistics */
    jfr_allocator alloc;     /* the writer's (kept by cache_free) */
} evjson_cache;

typedef struct jfrc_json { /* jfrc_json of jfrstream_conv.h */
    outbuf *o;
    bool compact;
    bool xml;                /* the XML layout (set before the first event) */
    uint8_t xkind;           /* XML: the element the next value is (XK_*), */
    const char *xname;       /* its name attribute (NULL: index = xindex) */
    uint32_t xindex;
    bool xopen;              /* its start tag is written up to the '>' */
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
    evjson_cache cache;
    /* the array element types of the current event's chunk known to be or
     * not to be stack frames (is_frame_type): a type's name is compared once
     * per chunk, not per stack; a chunk's types live as long as it does */
    const jfr_chunk *ft_chunk;
    uint64_t ft_index;
    const jfr_type *ft_type[4];
    bool ft_is[4];
    uint32_t ft_n;
    jfr_allocator alloc; /* frames, the cache, and the struct itself (conv.c) */
} evjson;

/* `a`: every allocation of the writer (NULL: libc); allocates nothing. */
void evjson_init(evjson *pr, outbuf *o, uint32_t stack_depth, bool compact,
                 const jfr_allocator *a);
void evjson_free(evjson *pr);
/* The cache's limit in bytes (call before the first event; 0 or less than
 * EVJSON_CACHE_MIN turns it off). */
void evjson_set_cache_limit(evjson *pr, size_t bytes);
/* Bytes the writer holds now (its cache and its stack of open objects). */
size_t evjson_memory(const evjson *pr);
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

/* The widened integer the JDK's getDuration / getOffsetDateTime / getLong
 * start from (unsigned byte, short and int as the JDK widens them): false
 * for a value that is not an integer or a char. */
bool evjson_widen(const jfr_value *v, bool is_unsigned, int64_t *out);
/* The unit of a field's @Timespan (its JFR_UNIT_TIMESPAN_* bit). */
jfmt_span_unit evjson_span_unit(uint32_t units);

/* Layout pieces, for the document around the events (pretty layout). */
void evjson_object_begin(evjson *pr);
void evjson_object_end(evjson *pr);
void evjson_put_name(evjson *pr, const char *name);
/* The XML document around the events: its head (up to `<events>`, with the
 * indentation of an event) and its tail. */
void evjson_xml_begin(evjson *pr);
void evjson_xml_end(evjson *pr);

#endif
