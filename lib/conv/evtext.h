/*
 * evtext.h — events as the JDK's `jfr print` prints them (its PrettyWriter,
 * JDK 25 the reference), public as jfrc_text.
 *
 * Two parts: the text of one event (evtext_render: what PrettyWriter.print
 * writes for it), and the JDK's order. `jfr print` does not print events in
 * file order nor per chunk: it puts the end time of every event it reads on
 * one priority queue (java.util.PriorityQueue: a binary heap, which is not
 * stable: events that end at the same nanosecond come out in the heap's
 * order), prints the head whenever the queue holds more than
 * EVTEXT_WINDOW events, and empties it at the end. The writer runs the same
 * heap with the same operations in the same sequence, so the order is the
 * same to the tie; each queued event's text is kept (rendered when it is
 * read, in blocks of EVTEXT_BLOCK bytes freed as their last event is
 * printed) until it comes out.
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#ifndef JFRSTREAM_CONV_EVTEXT_H
#define JFRSTREAM_CONV_EVTEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "jformat.h"
#include "jfrstream.h"
#include "outbuf.h"

/* PrettyWriter's EVENT_WINDOW_SIZE. */
#define EVTEXT_WINDOW 1000000u
/* Nested objects and arrays in one event (hostile data: real events nest a
 * few levels; the JDK's recursion would overflow its stack): N/A from
 * there on, and the event reports JFR_LIMIT. */
#define EVTEXT_MAX_NEST 256
/* Objects and arrays printed in one event (a pooled object referred to
 * twice is printed twice: hostile pools would print 2^depth). */
#define EVTEXT_MAX_OBJECTS 1048576
/* The text store's block size. */
#define EVTEXT_BLOCK ((size_t)1 << 20)

/* What a type is to PrettyWriter (the Java class its values get). */
enum {
    EVT_PLAIN,
    EVT_THREAD,       /* java.lang.Thread: RecordedThread */
    EVT_CLASS,        /* java.lang.Class */
    EVT_LOADER,       /* jdk.types.ClassLoader */
    EVT_FRAME,        /* jdk.types.StackFrame */
    EVT_METHOD,       /* jdk.types.Method */
    EVT_STACK,        /* jdk.types.StackTrace */
    EVT_OLD_OBJECT    /* jdk.types.OldObject (by the field's declared type) */
};

/* The fields PrettyWriter asks its typed objects for by name, resolved once
 * per metadata (-1: absent). */
enum { TF_A, TF_B, TF_C, TF_D, TF_E, TF_N };

typedef struct evtext_tinfo {
    uint8_t kind;
    int32_t f[TF_N];
    const uint8_t *ctype;   /* per field: it has a @ContentType annotation */
    int32_t duration, thread, stack; /* events: "duration", "eventThread", "stackTrace" */
} evtext_tinfo;

/* One queued event: its end (seconds, 2 * nanos + 1, as the JDK's
 * Timestamp record compares) and its text. */
typedef struct evtext_entry {
    int64_t sec;
    int32_t ncmp;
    uint32_t block;
    size_t len;
    const char *text;
} evtext_entry;

typedef struct evtext_block {
    char *data;
    size_t cap, used, live;
} evtext_block;

typedef struct jfrc_text { /* jfrc_text of jfrstream_conv.h */
    outbuf *o;               /* where the events go, in the JDK's order */
    outbuf scratch;          /* one event's text while it is rendered */
    outbuf *w;               /* what the render writes to (&scratch) */
    uint32_t stack_depth;
    bool exact;
    size_t indent;
    jfmt_timebase tb;        /* the first chunk's, as the JDK converts */
    bool have_tb;
    int32_t zone;
    bool have_zone;
    /* per type of the current metadata */
    const jfr_metadata *md;
    evtext_tinfo *ti;
    size_t nti;
    uint8_t *ctypes;
    size_t nctypes;
    /* the event being rendered */
    jfr_status err;
    uint32_t depth;
    uint32_t nobjects;
    const jfr_event *ev;
    struct { const jfr_type *t; uint64_t key; } path[EVTEXT_MAX_NEST];
    uint32_t npath;
    /* the queue */
    evtext_entry *heap;
    size_t nheap, capheap;
    evtext_block *blocks;
    size_t nblocks, capblocks, cur; /* cur: the block being filled */
    size_t held;             /* bytes of blocks */
    bool nomem;
    jfr_allocator alloc;
} evtext;

void evtext_init(evtext *t, outbuf *o, uint32_t stack_depth, bool exact, const jfr_allocator *a);
void evtext_free(evtext *t);
size_t evtext_memory(const evtext *t);
void evtext_chunk_begin(evtext *t, const jfr_chunk_info *c);
/* False: out of memory (the type table). */
bool evtext_metadata(evtext *t, const jfr_metadata *m);
/* Render the event and queue it (printing what the window pushes out).
 * JFR_OK, the first decode error (the text is complete anyway, with N/A
 * for what could not be read), or JFR_NOMEM (the event is lost). */
jfr_status evtext_event(evtext *t, const jfr_event *e, const jfr_value *ev);
/* Print every queued event. */
void evtext_finish(evtext *t);
const char *evtext_error_str(const evtext *t);

#endif
