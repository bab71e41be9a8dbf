/*
 * kafka.h — the insides of the Kafka sink (jfrstream_sink.h, "Kafka"),
 * shared by kafka.c (the producer: its configuration, delivery reports,
 * poll, flush and end), kafka_topic.c (an event type's topic) and
 * kafka_src.c (a source's sender: the
 * event's message, hold-back and the queue of messages waiting for room).
 * Built with librdkafka only (JFRS_HAVE_KAFKA).
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#ifndef JFRSTREAM_SINK_KAFKA_H
#define JFRSTREAM_SINK_KAFKA_H

#include "jfrstream_sink.h"
#include "sink.h"

#include <librdkafka/rdkafka.h>
#include <stdio.h>
#include <string.h>

#define DEFAULT_HOLD_EVENTS 10000
#define DEFAULT_HOLD_BYTES (16u << 20)

struct krec;

/* Delivery tracking (jfrs_kafka_src_mark, _delivered). Each message of a
 * sender gets a slot, in the order its events came (held, pending or
 * produced): its address is the message's opaque, so a delivery report,
 * whatever its order across partitions, settles its own slot. The slots
 * live in blocks (a FIFO, never moved); the oldest unsettled one bounds
 * what is delivered. */
enum { KSLOT_WAIT = 0, KSLOT_DONE, KSLOT_FAILED };
#define KBLOCK 512

typedef struct kslot {
    struct krec *r;
    uint8_t state;
} kslot;

typedef struct kblock {
    struct kblock *next;
    kslot s[KBLOCK];
} kblock;

/* A position the application marked: every message before slot `seq`
 * covers the input before `pos`, i.e. chunk `cs` (start, ns) up to `off`
 * (cs_ok false: a position before the chunk the sender knows). */
typedef struct kmark {
    uint64_t seq, pos, off;
    int64_t cs;
    bool cs_ok;
} kmark;

/* A source id's watermark (dedupe): every event before (cs, off) of that
 * source was delivered. In the producer's LRU table; an entry that a live
 * sender uses (pins) is not evicted. */
typedef struct kwm {
    struct kwm *prev, *next; /* most recently used first */
    struct kwm *hnext;       /* its hash bucket */
    uint64_t hash;
    int64_t cs;
    uint64_t off;
    bool set;
    unsigned pins;
    char id[];
} kwm;

#define KWM_MAX 4096      /* source ids remembered */
#define KWM_BUCKETS 1024

/* A message waiting here: held (the event JSON, wrapped at release) or
 * pending (the whole message, waiting for room in librdkafka's queue). */
typedef struct kmsg {
    struct kmsg *next;
    rd_kafka_topic_t *rkt;
    kslot *slot;        /* its delivery slot */
    int64_t cs;         /* its id: the chunk's start (ns) ... */
    uint64_t off;       /* ... and the record's offset in the chunk */
    int64_t start_ns;   /* held: the event's start (OTLP) */
    size_t a, b;        /* held: type length, JSON length; pending: key, value */
    char data[];        /* held: type, JSON; pending: key, value */
} kmsg;

typedef struct kqueue {
    kmsg *head, *tail;
    uint64_t n, bytes;
} kqueue;

/* A source's record: its counts and its pending messages; outlives the
 * sender until every message is settled. */
typedef struct krec {
    struct krec *next;
    jfrs_kafka_stats st;
    kqueue pend;
    struct jfrs_kafka_src *ks; /* its sender; NULL once freed */
    /* delivery slots: seq_head the oldest unsettled, seq_next the next;
     * bhead holds seq bseq.. */
    kblock *bhead, *btail, *spare;
    uint64_t bseq, seq_head, seq_next;
    kmark *marks;       /* a ring: nmarks from mhead, capacity capmarks */
    size_t mhead, nmarks, capmarks;
    uint64_t marked;    /* the last position marked */
    uint64_t acked;     /* delivered through this position */
    bool failed;        /* a message failed for good: acked stops before it */
    kwm *wm;            /* its source id's watermark (pinned), or NULL */
    bool ended;         /* the sender was freed */
    bool done;          /* reported (on_source_done) */
    char *id, *origin;  /* set when the sender is freed */
} krec;

/* A topic handle per expanded name (cached per source by type index). */
typedef struct ktopic {
    struct ktopic *next;
    rd_kafka_topic_t *rkt;
    char name[];
} ktopic;

struct jfrs_kafka {
    rd_kafka_t *rk;
    rd_kafka_queue_t *mainq;
    int evfd[2];        /* readable when delivery reports wait (-1: none) */
    jfrs_kafka_format format;
    char *topic;        /* the pattern */
    bool per_type;      /* it holds "{type}" */
    rd_kafka_topic_t *fixed; /* the topic when not per type */
    ktopic *topics;
    uint32_t stack_depth;
    uint64_t hold_events, hold_bytes;
    void (*on_log)(void *user, int level, const char *message);
    void (*on_source_done)(void *user, const char *id, const char *origin,
                           const jfrs_kafka_stats *st);
    void *user;
    krec *recs;         /* every record, live or ended */
    kwm *wm_head, *wm_tail;          /* the watermarks, LRU order */
    kwm *wm_hash[KWM_BUCKETS];
    size_t nwm;
    jfrs_kafka_stats tot;
    jfrc_out *scratch;  /* a message being made for a release */
    jfrc_out *idb;      /* an event's id, SOURCE/CHUNKSTART/OFFSET */
    jfr_allocator a;    /* every allocation of the producer and its senders */
};

struct jfrs_kafka_src {
    jfrs_kafka *k;
    krec *r;
    jfrs_source *src;
    jfrc_out *out;      /* the event JSON */
    jfrc_json *json;
    jfrc_out *msg;      /* the message */
    jfrc_out *res;      /* OTLP: the resource part, of label generation resgen */
    uint64_t resgen;
    jfrc_out *idkey;    /* JSON: the source id as a JSON string, of generation idkeygen */
    uint64_t idkeygen;
    bool holding;       /* not identified, not released yet */
    kqueue hold;
    rd_kafka_topic_t **rkt_by_type; /* per type index (per-type topics) */
    size_t ntypes;
    const jfr_type *last_type; /* the last event's type and topic */
    rd_kafka_topic_t *last_rkt;
    bool decode_failed;
    char decode_err[256];
    /* the current chunk (its input offset, start ns) and the one before */
    uint64_t chunk_off, prev_off;
    int64_t chunk_ns, prev_ns;
    bool have_chunk;
    uint64_t wmgen;     /* source generation r->wm was looked up for */
};

static inline void set_error(jfrs_kafka_stats *st, const char *what) {
    snprintf(st->last_error, sizeof st->last_error, "%s", what);
}

static inline kmsg *msg_new(jfrs_kafka *k, size_t a, size_t b) {
    kmsg *m = jfr__alloc(&k->a, sizeof *m + a + b);
    if (m) {
        m->a = a;
        m->b = b;
    }
    return m;
}

static inline void msg_free(jfrs_kafka *k, kmsg *m) {
    if (m)
        jfr__free(&k->a, m, sizeof *m + m->a + m->b);
}

static inline void str_free(jfrs_kafka *k, char *s) {
    if (s)
        jfr__free(&k->a, s, strlen(s) + 1);
}

static inline void copy_stats(jfrs_kafka_stats *out, const jfrs_kafka_stats *in) {
    *out = *in;
}

/* ---- kafka_track.c: slots, marks, watermarks */
/* A new slot (KSLOT_WAIT) for the next message of r; NULL without memory. */
kslot *kafka_slot_new(jfrs_kafka *k, krec *r);
/* A slot settled (delivered, failed): move r's delivered position on. */
void kafka_settle(jfrs_kafka *k, kslot *s, bool ok);
/* Free r's slots and marks; unpin its watermark. */
void kafka_track_free(jfrs_kafka *k, krec *r);
/* The watermark entry of source id `id` (made, moved to the front, the
 * least recently used unpinned one evicted past KWM_MAX), pinned for r;
 * NULL without memory. */
void kafka_wm_pin(jfrs_kafka *k, krec *r, const char *id);
/* Free the watermark table. */
void kafka_wm_free(jfrs_kafka *k);

/* ---- kafka_topic.c */
/* The topic of events of type `name` (per-type topics); NULL when it cannot
 * be made. */
rd_kafka_topic_t *kafka_topic_for(jfrs_kafka *k, const char *name);

/* ---- kafka_src.c */
/* Hand over a record's pending messages, in order: JFR_OK when none is
 * left, JFR_PAUSED when the queue is full again. */
jfr_status kafka_drain(jfrs_kafka *k, krec *r);
/* Release a sender's held events: made with the labels known now, sent in
 * order. */
jfr_status kafka_release(jfrs_kafka_src *ks);

#endif
