/* Internal declarations shared by the library's translation units. */
#ifndef JFR_INTERNAL_H
#define JFR_INTERNAL_H

#define JFRSTREAM_EXPERIMENTAL /* the library defines the experimental API too */
#include "jfrstream.h"
#include "header.h"
#include "mem.h"
#include "sized.h"
#include "ticks.h"
#include "wire.h"

#include <stdarg.h>
#include <stdatomic.h>

#define JFR_DEFAULT_MAX_CHUNK (1ull << 30)
/* Inline struct nesting (structs and arrays inside one event or one pool
 * entry) deeper than this is treated as corrupt: bounds recursion on hostile
 * metadata. Pool references do not count: each one starts a new value, and
 * the library follows them one level per call. */
#define JFR_MAX_DEPTH 64
/* A type whose inline expansion needs more decode steps than this is refused. */
#define JFR_MAX_TYPE_OPS 100000u

/* ---------------------------------------------------------------- alloc.c */

/* The allocator wrapper of a parser: counts its bytes, enforces
 * jfr_options.max_memory (0: no limit). jfr__memcap_new replaces *a by the
 * wrapper (the caller's allocator inside). */
typedef struct jfr_memcap {
    jfr_allocator inner;
    uint64_t limit;
    _Atomic uint64_t used, peak;
    atomic_bool hit; /* an allocation was refused for the limit */
} jfr_memcap;
jfr_memcap *jfr__memcap_new(jfr_allocator *a, uint64_t limit);
void jfr__memcap_free(jfr_memcap *m);

/* Bump arena made of blocks that never move: pointers stay valid until
 * reset/free. Reset keeps the blocks for reuse (no allocation in steady state). */
typedef struct jfr_arena_block jfr_arena_block;
typedef struct jfr_arena {
    jfr_arena_block *head, *cur;
    size_t used; /* in cur */
} jfr_arena;
void *jfr__arena_alloc(const jfr_allocator *a, jfr_arena *ar, size_t n, size_t align);
char *jfr__arena_strndup(const jfr_allocator *a, jfr_arena *ar, const char *s, size_t n);
/* Inline: the dispatcher resets the scratch arena before every handler. */
static inline void jfr__arena_reset(jfr_arena *ar) {
    ar->cur = ar->head;
    ar->used = 0;
}
void jfr__arena_free(const jfr_allocator *a, jfr_arena *ar);

/* ------------------------------------------------------------- metadata.c */

/* Decode steps of a field, chosen once when metadata is compiled. */
typedef enum jfr_op {
    JFR_OP_BOOLEAN, JFR_OP_BYTE, JFR_OP_CHAR, JFR_OP_SHORT, JFR_OP_INT,
    JFR_OP_LONG, JFR_OP_FLOAT, JFR_OP_DOUBLE, JFR_OP_STRING,
    JFR_OP_STRUCT, /* inline struct of field->type */
    JFR_OP_POOL    /* constant-pool key */
} jfr_op;
/* Or-ed into a field's op when the field is an array (dimension 1). */
#define JFR_OP_ARRAY 0x80

typedef struct jfr_tinfo {
    uint8_t *ops;        /* per field: jfr_op, | JFR_OP_ARRAY for arrays */
    uint32_t min_size;   /* minimum bytes a value of this type occupies */
    uint32_t nops;       /* decode steps of one inline value (saturated) */
    bool bad;            /* recursive or too large: values can't be decoded */
    uint32_t nvarints;   /* every field an integer or pool key, no array: the
                            count (each a varint in compressed chunks), else 0 */
    uint32_t varint_prefix; /* how many fields from the first are so */
    bool has_duration;   /* field 1 is "duration" */
    int32_t thread_field; /* eventThread (or sampledThread), -1 */
    int32_t stack_field;  /* stackTrace, -1 */
} jfr_tinfo;

/* Types and field indexes the helpers use, found once per metadata. */
typedef struct jfr_known {
    const jfr_type *thread, *stacktrace, *frame, *method, *klass;
    int32_t th_os_name, th_os_id, th_java_name, th_java_id;
    int32_t st_truncated, st_frames;
    int32_t fr_method, fr_line, fr_bci, fr_type;
    int32_t m_type, m_name, m_desc;
    int32_t c_name;
} jfr_known;

typedef struct jfr_mdtab {
    jfr_metadata pub;
    jfr_arena arena;
    jfr_type *types;        /* pub.types points at an array of pointers into this */
    jfr_tinfo *tinfo;       /* by type index */
    uint32_t *id_slots;     /* open addressing: id -> index+1 */
    uint32_t id_mask;
    const jfr_type **by_id; /* direct table id -> type when ids are small */
    const jfr_type **ev_by_id; /* the same, event types only (else NULL) */
    uint32_t nby_id;
    const jfr_type *t_string; /* java.lang.String, or NULL */
    jfr_known known;
    size_t bytes;           /* approx memory held, for statistics */
} jfr_mdtab;

/* Compile the metadata record whose payload (after size and type id) is
 * [p, end). On error returns a status, writes a reason into why and sets
 * *err_off to the offset from p of the bytes that could not be decoded
 * (UINT64_MAX: the decoded tree is inconsistent, no one byte is at fault). */
jfr_status jfr__metadata_compile(const jfr_allocator *a, const uint8_t *p,
                                 const uint8_t *end, bool compressed,
                                 uint64_t fingerprint, jfr_mdtab **out,
                                 char *why, size_t whylen, uint64_t *err_off);
void jfr__metadata_free(const jfr_allocator *a, jfr_mdtab *m);
/* The decode op for a value of type t held inline (not pooled). */
static inline uint8_t jfr__op_for_type(const jfr_type *t) {
    switch (t->base) {
    case JFR_BASE_BOOLEAN: return JFR_OP_BOOLEAN;
    case JFR_BASE_BYTE: return JFR_OP_BYTE;
    case JFR_BASE_CHAR: return JFR_OP_CHAR;
    case JFR_BASE_SHORT: return JFR_OP_SHORT;
    case JFR_BASE_INT: return JFR_OP_INT;
    case JFR_BASE_LONG: return JFR_OP_LONG;
    case JFR_BASE_FLOAT: return JFR_OP_FLOAT;
    case JFR_BASE_DOUBLE: return JFR_OP_DOUBLE;
    case JFR_BASE_STRING: return JFR_OP_STRING;
    default: return JFR_OP_STRUCT;
    }
}
const jfr_type *jfr__md_type_by_id_slow(const jfr_mdtab *m, uint64_t id);
static inline const jfr_type *jfr__md_type_by_id(const jfr_mdtab *m, uint64_t id) {
    if (id < m->nby_id)
        return m->by_id[id];
    return m->by_id ? NULL : jfr__md_type_by_id_slow(m, id);
}

/* ---------------------------------------------------------------- pool.c */

typedef struct jfr_pool_slot {
    uint64_t key;
    uint64_t pos;      /* value offset in chunk; 0 = empty slot */
    uint32_t type;     /* type index */
    uint32_t pad_;
} jfr_pool_slot;

typedef struct jfr_pool {
    jfr_pool_slot *slots;
    size_t mask;       /* capacity - 1, capacity a power of two (or 0) */
    size_t count;
} jfr_pool;

/* Offset of the value for (type, key), or 0 if absent. */
uint64_t jfr__pool_get(const jfr_pool *pl, uint32_t type, uint64_t key);
void jfr__pool_clear(jfr_pool *pl);
void jfr__pool_free(const jfr_allocator *a, jfr_pool *pl);

/* ---------------------------------------------------------------- names.c */

/* The first member of cached entries: what they are looked up by. */
typedef struct jfr_keyed {
    uint64_t key;
    uint32_t type;        /* type index */
} jfr_keyed;

/* Strings resolved from one pooled value (a method: class, name, descriptor;
 * a frame type: its name), cached by (type index, key) for the chunk. */
typedef struct jfr_name_ent {
    jfr_keyed k;
    uint32_t len[3];
    const char *str[3];
} jfr_name_ent;

/* A resolved frame: name entries as index + 1 (0 = none). */
typedef struct jfr_cached_frame {
    uint32_t method, ftype;
    int32_t line, bci;
} jfr_cached_frame;

/* A pooled stack trace whose frames are in the frame cache. */
typedef struct jfr_stack_ent {
    jfr_keyed k;
    uint32_t first, n;
    bool truncated;
} jfr_stack_ent;

/* A slot of the value cache's index: the pooled object of type index
 * `type` whose bytes are at `pos` (unique in the chunk) has its fields at
 * jfr_names.vals[first1 - 1]; first1 0 marks an empty slot. */
typedef struct jfr_obj_slot {
    uint64_t pos;
    uint32_t type, first1;
} jfr_obj_slot;

/* Cached object fields allowed per chunk (a jfr_value each, about 100
 * bytes: 25 MiB), and at most 1/16 of max_memory. Beyond, objects are
 * decoded on each read. */
#define JFR_MAX_CACHED_VALUES ((size_t)1 << 18)

typedef struct jfr_names {
    jfr_allocator alloc;
    uint32_t *slots;      /* (type, key) -> ents index + 1 */
    size_t mask, count, capents;
    jfr_name_ent *ents;
    uint32_t *sslots;     /* (type, key) -> stacks index + 1 */
    size_t smask, nstacks, capstacks;
    jfr_stack_ent *stacks;
    jfr_cached_frame *frames;
    size_t nframes, capframes;
    bool no_stacks;       /* a stack of this chunk could not be cached */
    jfr_obj_slot *oslots; /* (type, position) -> fields in vals */
    size_t omask, nobjs;
    jfr_value *vals;      /* the cached objects' fields, as jfr_iter reads them */
    size_t nvals, capvals;
    size_t max_vals;      /* the value cache's bound (0: off) */
    bool no_objs;         /* the value cache is full for this chunk */
    jfr_arena arena;      /* strings that were not in the pool bytes */
    const uint8_t *pbase; /* pool store the cached strings point into */
} jfr_names;

/* Entry index + 1 of (type, key), or 0. */
uint32_t jfr__names_get(jfr_names *n, const jfr_chunk *c, uint32_t type, uint64_t key);
/* Best effort: returns the entry index + 1, or 0 when it was not cached
 * (memory, bounds). */
uint32_t jfr__names_put(jfr_names *n, const jfr_chunk *c, uint32_t type, uint64_t key,
                        const char *const str[3], const size_t len[3]);
const jfr_stack_ent *jfr__stack_get(jfr_names *n, const jfr_chunk *c, uint32_t type,
                                    uint64_t key);
/* Room for nframes frames at the end of the frame cache (NULL: over the
 * bound or out of memory); jfr__stack_commit then adds the stack and returns
 * 1 + its first frame's index (0 on failure). */
jfr_cached_frame *jfr__stack_reserve(jfr_names *n, const jfr_chunk *c, uint32_t nframes);
uint32_t jfr__stack_commit(jfr_names *n, uint32_t type, uint64_t key, uint32_t nframes,
                           bool truncated);
/* The value cache of pooled objects: fields index + 1 of the object of type
 * index `type` whose bytes are at `pos`, or 0. */
uint32_t jfr__obj_get(jfr_names *n, const jfr_chunk *c, uint32_t type, uint64_t pos);
/* Room for nfields values at the end of the value cache (NULL: over the
 * bound or out of memory, and no_objs is set); jfr__obj_commit then adds
 * the object and returns 1 + its first field's index (0 on failure). */
jfr_value *jfr__obj_reserve(jfr_names *n, const jfr_chunk *c, uint32_t nfields);
uint32_t jfr__obj_commit(jfr_names *n, uint32_t type, uint64_t pos, uint32_t nfields);
/* A string that stays valid for the rest of the chunk: s itself when it
 * lies in the chunk's pool bytes, else a copy (NULL: out of memory). */
const char *jfr__names_keep(jfr_names *n, const jfr_chunk *c, const char *s, size_t len);
/* Empty the value cache only (its values point at the metadata's types). */
void jfr__names_clear_values(jfr_names *n);
void jfr__names_clear(jfr_names *n);
void jfr__names_free(const jfr_allocator *a, jfr_names *n);

/* ---------------------------------------------------------------- chunk */

/* Offsets with this bit set point into the pool store (live chunks keep
 * their checkpoint records there after the segment's bytes are released). */
#define JFR_POOL_TAG (1ull << 63)

/* What values need to decode themselves: the bytes, the types, the pools. */
struct jfr_chunk {
    const uint8_t *base;    /* the records being dispatched: the whole chunk
                               (header included), or one live segment */
    uint64_t size;
    uint64_t base_off;      /* chunk-relative offset of base[0] */
    uint64_t first_rec;     /* offset of the first record in base */
    const uint8_t *pbase;   /* pool store of a live chunk (JFR_POOL_TAG) */
    uint64_t psize;
    bool compressed;
    const jfr_mdtab *md;
    jfr_pool pool;
    jfr_names *names;       /* resolved names of pooled values (mutable) */
    jfr_parser *parser;     /* scratch arena for converted strings */
    uint64_t index;
    uint64_t offset;        /* absolute input offset of the chunk */
    /* time base used for conversions */
    int64_t tb_start_nanos, tb_start_ticks;
    double tb_divisor;      /* ticks per ns */
};

/* Skip one inline value of type t (decode op `op`) at the cursor. */
jfr_status jfr__skip_value(const jfr_chunk *c, jfr_cur *cur, const jfr_type *t,
                           uint8_t op, uint32_t depth);
/* The pool entry (t, key) as a value (NULL kind when absent). */
jfr_status jfr__value_resolve(const jfr_chunk *c, const jfr_type *t, uint64_t key,
                              jfr_value *out);
/* One pass over the inline struct of type t at pos: the integer or pool-key
 * fields whose indexes are in want[] (-1: none) are read raw into raw[], and
 * their ops into ops[] (0xff: absent or not an integer); *end_pos receives
 * where the struct ends. */
jfr_status jfr__struct_scan(const jfr_chunk *c, uint64_t pos, const jfr_type *t,
                            uint32_t depth, const int32_t want[4], uint64_t raw[4],
                            uint8_t ops[4], uint64_t *end_pos);
/* A cursor at an offset of the chunk, or of the pool store (JFR_POOL_TAG). */
static inline jfr_cur jfr__cur_at(const jfr_chunk *c, uint64_t pos) {
    if (pos & JFR_POOL_TAG) {
        uint64_t o = pos & ~JFR_POOL_TAG;
        return (jfr_cur){c->pbase + o, c->pbase + c->psize, !c->compressed, c->pbase,
                         JFR_POOL_TAG};
    }
    return (jfr_cur){c->base + pos, c->base + c->size, !c->compressed, c->base, 0};
}
static inline uint64_t jfr__cur_pos(const jfr_cur *cur) {
    return (uint64_t)(cur->p - cur->base) | cur->tag;
}
/* Inline: every delivered event converts its start and duration. */
static inline int64_t jfr__ticks_to_epoch_nanos(const jfr_chunk *c, int64_t ticks) {
    int64_t diff = (int64_t)((uint64_t)ticks - (uint64_t)c->tb_start_ticks);
    return (int64_t)((uint64_t)c->tb_start_nanos + (uint64_t)jfr__ticks_div(diff, c->tb_divisor));
}
static inline int64_t jfr__ticks_to_nanos(const jfr_chunk *c, int64_t ticks) {
    return jfr__ticks_div(ticks, c->tb_divisor);
}

/* ------------------------------------------------------- the parser itself */

typedef struct jfr_sub {
    char *name;
    size_t name_len;
    jfr_event_cb cb;
    void *user;
} jfr_sub;

typedef struct jfr_ord {
    int64_t end;   /* end ticks: the sort key */
    uint64_t pos;  /* record offset in the chunk */
} jfr_ord;

enum jfr_state { ST_HEADER, ST_BODY, ST_SKIP, ST_DISPATCH, ST_LIVE, ST_LIVE_DISPATCH,
                 ST_RESYNC, ST_STOPPED, ST_ERROR };
enum jfr_phase { PH_BEGIN, PH_INDEX, PH_META, PH_MAP, PH_RECORDS, PH_END, PH_DONE };

/* The parser's state, grouped by job; the settings the caller gave, the
 * state machine and the current chunk are at the top. */
struct jfr_parser {
    jfr_options opt;      /* opt.allocator: the memcap wrapper */
    jfr_memcap *memcap;   /* counts and caps the memory (max_memory) */
    jfr_callbacks cb;
    void *user;
    int state;            /* enum jfr_state (feed.c) */
    int phase;            /* enum jfr_phase (dispatch.c) */
    jfr_chunk_info info;  /* the current chunk's header */
    jfr_chunk chunk;      /* the current chunk's bytes, types and pools */

    /* input: framing the bytes fed into chunks (feed.c, header.c) */
    struct jfr_input {
        uint8_t hdr[JFR_HEADER_SIZE];
        size_t hdr_have;
        jfr_buf chunkbuf;     /* the chunk when it spans feed calls (header included) */
        uint64_t need;        /* body bytes still missing */
        uint64_t skip_left;
        uint64_t input_off;   /* absolute offset of the next input byte */
        size_t consumed;
        /* jfr_parser_delivered: the end of the last chunk or live segment
         * whose callbacks all ran (only grows) */
        uint64_t delivered;
    } in;

    /* resynchronisation (opt.resync; resync.c): scanning for the next chunk
     * magic */
    struct jfr_resync {
        uint64_t rs_from;     /* absolute offset where the skipped bytes begin */
        uint64_t skipped;     /* bytes skipped in all */
        bool cand;            /* p->in.hdr holds a candidate header found by the scan */
        int cand_prev, rs_prev; /* the byte before the candidate / the next byte
                                   to scan (-1: unknown) */
        bool chunk_failed;    /* the last chunk ended in an error passed over */
        bool rp_final;        /* draining at finish: candidates must fit the input */
        jfr_buf replay;       /* bytes taken but to be scanned again (own copy) */
        size_t rp_pos;        /* next replay byte */
        int want_push;        /* bytes for the replay buffer, once run_input returned */
        size_t push_len;
    } rs;

    /* metadata: the current type table (metadata.c) */
    struct jfr_meta {
        jfr_mdtab *md;        /* current type table (kept for reuse) */
        uint64_t md_len;      /* byte length behind md's fingerprint */
    } meta;

    /* dispatch: where the delivery of the unit's records stands, to resume
     * after a pause (dispatch.c) */
    struct jfr_dispatch {
        uint64_t rec_pos;
        bool rec_done;        /* on_record called for the record at rec_pos */
        uint32_t ev_stage;    /* handlers already called for the current event */
        uint64_t skip_ev;     /* events still to pass over (jfr_parser_skip_events) */
        size_t ord_i;
        bool use_list;        /* deliver the listed events, not every record */
        jfr_ord *ord;         /* wanted events of the unit (end ticks, offset) */
        size_t nord, capord;
        uint64_t meta_pos;    /* last metadata record in the unit */
        bool md_changed;      /* the unit brought new metadata: on_metadata */
        bool deferred;        /* live segment kept: no metadata yet */
        int8_t ordered_next;  /* jfr_parser_set_ordered: -1 none, else the value
                                 for opt.ordered from the next PH_MAP on */
    } disp;

    /* live chunks: records framed one by one, dispatched per flush segment
     * (live.c) */
    struct jfr_live {
        bool live;
        bool seg_ends_chunk;  /* the segment ends with the state-0 header checkpoint */
        jfr_buf segbuf;       /* records of the current segment */
        jfr_buf poolbuf;      /* checkpoint records of the chunk (pool store) */
        uint64_t seg_start;   /* chunk-relative offset of segbuf[0] */
        uint64_t chunk_pos;   /* chunk bytes taken so far */
        uint64_t rec_need;    /* bytes of the current record still missing */
        uint64_t rec_start;   /* offset in segbuf of the current record */
        uint8_t varlen;       /* bytes of the size field read so far */
        uint64_t segments;    /* live segments completed in this chunk */
    } lv;

    /* subscriptions (jfr_parser_on) and the wanted types they map to */
    struct jfr_subs {
        jfr_sub *subs;
        size_t nsubs, capsubs;
        bool subs_dirty;      /* subscriptions changed since the last mapping */
        uint32_t *tsub_start; /* per type index: range into tsub_list (ntypes+1) */
        uint32_t *tsub_list;
        uint8_t *want;        /* per type index: deliver events of this type */
        uint8_t *want_id;     /* the same by type id, when md->by_id exists */
        size_t want_id_cap;
        size_t tcap;          /* capacity of the per-type arrays */
    } sub;

    /* the time base of the first chunk (jdk_time_base) */
    struct jfr_timebase {
        bool have_tb;
        int64_t tb_nanos, tb_ticks;
        double tb_div;
    } tb;

    /* decoded values: resolved names and the value cache (names.c), scratch
     * for converted strings */
    struct jfr_values {
        jfr_arena scratch;
        jfr_names names;      /* chunk.names points here */
    } val;

    /* errors and counts (status.c) */
    struct jfr_errors {
        jfr_status status;
        char msg[320];
        uint64_t nerrors, nchunks;
    } err;

    /* parallel preparation (threads > 1; parallel.c) and shared preparation
     * (share.c, jfr_parser_prepare in parallel.c) */
    struct jfr_helpers {
        unsigned threads;     /* jfr_parser_set_threads */
        struct jfr_par *par;  /* helper threads and their slots, or NULL */
        jfr_parser *prep;     /* the current chunk's preparation (a worker parser
                                 holding md, pools and event list), or NULL */
        struct jfr_share *share; /* jfr_parser_set_share, or NULL */
        jfr_parser *share_w;  /* the worker parser jfr_parser_prepare runs on */
    } mt;
};

/* status.c: record an error at an absolute input offset (p->err.status,
 * p->err.msg, the error count); returns false. */
bool jfr__fail(jfr_parser *p, jfr_status s, uint64_t offset, const char *fmt, ...);
/* After an error: ask on_error whether to skip the chunk and go on. */
bool jfr__error_continue(jfr_parser *p);
/* The parser stops for good (ST_ERROR); returns p->err.status. */
jfr_status jfr__fatal(jfr_parser *p);
/* The same for an error that cannot be skipped (framing lost, no memory):
 * on_error is told all the same; its answer does not matter. */
jfr_status jfr__fatal_told(jfr_parser *p);

/* The one rule for a callback's answer, for every callback (jfr_callbacks'
 * and jfr_parser_on's; not on_error, see jfr__error_continue):
 * JFR_CB_CONTINUE -> JFR_OK; JFR_CB_PAUSE -> JFR_PAUSED, also in p->err.status
 * until the next feed or finish call resumes (feed.c); anything else ->
 * JFR_STOPPED for good (ST_STOPPED). The caller has saved where to resume
 * (the callback that paused counts as made) and returns what this says. */
static inline jfr_status jfr__cb_result(jfr_parser *p, int rc) {
    if (rc == JFR_CB_CONTINUE)
        return JFR_OK;
    if (rc == JFR_CB_PAUSE)
        return p->err.status = JFR_PAUSED;
    p->state = ST_STOPPED;
    return p->err.status = JFR_STOPPED;
}

/* parser.c: the parser object without its parallel helpers (lifecycle.c
 * adds them; the helpers' worker parsers are such objects). */
jfr_parser *jfr__parser_create(const jfr_options *opts, const jfr_callbacks *cb, void *user);
void jfr__parser_clear(jfr_parser *p); /* back to the state of a new parser */
void jfr__parser_destroy(jfr_parser *p);

/* The absolute input offset of chunk offset pos of the unit. */
/* Every record before input offset `off` was called back. */
static inline void jfr__delivered(jfr_parser *p, uint64_t off) {
    if (off > p->in.delivered)
        p->in.delivered = off;
}

static inline uint64_t jfr__abs_off(const jfr_parser *p, uint64_t pos) {
    return p->chunk.offset + p->chunk.base_off + pos;
}

/* A record header, as dispatch.c reads it. */
typedef struct jfr_rec {
    uint64_t pos, size, type, payload; /* payload: offset after size and type */
} jfr_rec;

/* pool.c: index the pool entries of the checkpoint record r of the unit. */
jfr_status jfr__pool_index_checkpoint(jfr_parser *p, const jfr_rec *r);

/* dispatch.c: run the chunk's phases from p->phase (chunk bytes complete). */
jfr_status jfr__chunk_process(jfr_parser *p);

/* header.c: what jfr__header_done found. */
enum { HD_GO, HD_SKIP, HD_RESCAN, HD_REJECT };
/* A header is complete in p->in.hdr or at `h`; p->in.input_off is its offset.
 * Sets up p->info and p->chunk and says in *act what comes next. */
jfr_status jfr__header_done(jfr_parser *p, const uint8_t *h, int *act);

/* resync.c (opt.resync): what the state machine left to copy to the replay
 * buffer once it has returned (p->rs.want_push). */
enum { PUSH_NONE, PUSH_HDR, PUSH_CHUNK, PUSH_SEG };
/* A header found by the scan: plausible enough to try. `left` input bytes
 * follow from its first byte; `prev` is the byte before it (-1: unknown). */
bool jfr__resync_candidate_ok(const jfr_parser *p, const uint8_t *h, uint64_t left, int prev);
/* Can the n bytes at h begin a header of a version we read (magic, major)? */
bool jfr__header_lead(const uint8_t *h, size_t n);
/* Skip from `from`, the first byte of the damaged header or chunk. */
void jfr__resync_begin(jfr_parser *p, uint64_t from);
/* The scan found a chunk at `at` (or the input ended there): say how many
 * bytes were skipped. False when on_error wants to stop. */
bool jfr__resync_report(jfr_parser *p, uint64_t at, bool at_end);
/* Scan for the next plausible chunk header; returns the bytes taken. */
size_t jfr__resync_scan(jfr_parser *p, const uint8_t *in, size_t len, jfr_status *st);
/* Queue the bytes p->rs.want_push asks for ahead of the replay buffer. */
jfr_status jfr__replay_push(jfr_parser *p);
/* The chunk just run failed and was passed over: scan it again from its
 * second byte, from our buffer. */
void jfr__rescan_buffered_chunk(jfr_parser *p, uint64_t len);

/* live.c: a live chunk's header was taken: frame its records. */
void jfr__live_begin(jfr_parser *p);
/* Take bytes of a live chunk: frame records, dispatch at segment ends.
 * Returns bytes taken (stops early when dispatch pauses/stops/fails). */
size_t jfr__live_take(jfr_parser *p, const uint8_t *in, size_t avail, jfr_status *st);
/* resync: end the live chunk and scan its unfinished segment again from its
 * second byte (p->rs.want_push set when there are bytes to push). */
void jfr__live_rescan(jfr_parser *p);
/* Run (or resume) the dispatch of the buffered segment. */
jfr_status jfr__live_dispatch(jfr_parser *p);

/* ------------------------------------------------- parallel preparation
 * With p->mt.threads > 1, the whole finished chunks that follow the current
 * one in the same feed call are prepared on helper threads, each on a
 * private "worker parser" w: what the calling thread would do before the
 * chunk's first record callback: index_unit, map_subscriptions and
 * scan_unit, with the callbacks and subscriptions as they are when the chunk
 * is queued. The calling thread adopts a successful preparation at that
 * chunk's turn (PH_INDEX and PH_MAP of dispatch.c) and makes every callback
 * itself; when the wanted types changed meanwhile (a subscription in
 * on_chunk_begin/on_metadata), it runs scan_unit itself. A failed
 * preparation is dropped: the chunk is then processed serially, so damage is
 * reported exactly as without threads. */

/* dispatch.c, on a helper thread: prepare the chunk set up in w->chunk and
 * w->info. Returns JFR_OK, an error (w->err.msg), or JFR_STOPPED when *cancel
 * was set. */
jfr_status jfr__chunk_prepare(jfr_parser *w, atomic_bool *cancel);
/* parallel.c, on the calling thread. feed's zero-copy path is about to run
 * the finished chunk of p->info / p->chunk at `at` (avail bytes of the feed
 * call from there): set p->mt.prep to its preparation if one is ready (waiting
 * for it if it runs), and queue the following whole finished chunks. */
void jfr__par_chunk(jfr_parser *p, const uint8_t *at, size_t avail);
/* The current chunk's preparation is no longer needed: p->mt.prep = NULL. */
void jfr__par_release(jfr_parser *p);
/* Before feed returns: no helper may read the caller's bytes afterwards.
 * Queued and ready preparations are dropped, running ones cancelled and
 * waited for; p->mt.prep is kept when a chunk is paused (ST_DISPATCH). */
void jfr__par_quiesce(jfr_parser *p);
/* Join the helpers and free everything (jfr_parser_free). */
void jfr__par_free(jfr_parser *p);

/* ------------------------------------------------- shared preparation
 * share.c. A jfr_share holds chunk preparations keyed by the chunk's
 * address and size. jfr_parser_prepare (parallel.c) claims a slot, runs
 * jfr__chunk_prepare on the parser's own worker parser and publishes the
 * results (copies); a parser with that share copies them at PH_MAP of a
 * finished chunk instead of running scan_unit (dispatch.c). */

/* A slot for preparing the chunk at base (size bytes): its index, or -1
 * when the share holds it, someone makes it, or no slot is free. */
int jfr__share_claim(struct jfr_share *s, const uint8_t *base, uint64_t size);
/* The claimed slot is done: w's pool index and event list are copied in
 * when ok (else, or when copying fails, the slot says FAILED). */
void jfr__share_publish(struct jfr_share *s, int slot, const jfr_parser *w, bool ok);
/* At PH_MAP of p's finished chunk, after map_subscriptions: copy the
 * preparation of this chunk if the share holds one made for what p wants
 * (waiting while it is being made). False: p must scan the chunk itself. */
bool jfr__share_adopt(jfr_parser *p);

#endif /* JFR_INTERNAL_H */
