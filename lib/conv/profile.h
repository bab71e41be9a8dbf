/*
 * profile.h — stack aggregation for `collapsed`, `flamegraph` and `pprof`.
 *
 * Events with a stack trace (CPU samples, allocations, monitor enter, park)
 * are folded into a trie of frames. Frame names follow async-profiler's JFR
 * converter (jfrconv / converter.jar, one.convert.JfrConverter + FlameGraph):
 *
 *   - a Java frame is "pkg/Class.method" (slashes; --dot: dots); a frame
 *     whose class name is empty, or whose type is "C++" or "Kernel", is the
 *     method name alone; so is a "Native" frame in a chunk whose frame-type
 *     pool declares key 5 ("Kernel"): async-profiler's own table, where
 *     Native means a C function and the class is its library
 *     ("libc.so.6"); in the JDK's table Native is a Java native method and
 *     keeps its class. Hidden and lambda classes keep their names
 *     ("Foo$$Lambda$14/0x0000000800c0b000.run"); --lines appends ":LINE"
 *     to frames with a line number;
 *   - collapsed lines and flame graphs add the frame-type suffix of
 *     async-profiler: _[0] interpreted, _[j] JIT compiled, _[i] inlined,
 *     _[1] C1 compiled, _[k] kernel, none for native / C++. As in its
 *     FlameGraph, Java frames of one call path are one node whatever their
 *     type, and the suffix is chosen from the node's weights: inlined if
 *     inlined*3 >= total, else C1 if c1*2 >= total, else interpreted if
 *     interpreted*2 >= total, else JIT;
 *   - allocation events get a top frame with the allocated class, Java name
 *     with dots and [] for arrays ("byte[]"), suffix _[i] for a new TLAB and
 *     _[k] outside a TLAB / jdk.ObjectAllocationSample; monitor enter and park
 *     get the monitor / parked class with _[i];
 *   - --threads adds a bottom frame "[javaName tid=KEY]" (the OS name when the
 *     thread has no Java name; KEY = the thread's constant-pool key), from
 *     sampledThread where the type has it, else eventThread;
 *   - --reverse inserts every stack top first (the class frame, the frames
 *     from the top, then the thread frame).
 *
 * Weights: CPU samples count 1; async-profiler's profiler.WallClockSample
 * its `samples` field; allocations their bytes (tlabSize for a new TLAB,
 * allocationSize outside one, `weight` for jdk.ObjectAllocationSample,
 * allocationSize for profiler.LiveObject); profiler.Malloc its `size`;
 * monitor enter and park their duration in ns. (async-profiler counts events
 * by default and uses these weights with --total.) Events without a stack
 * trace are left out, as in async-profiler.
 *
 * Filters, as async-profiler's converter: --state keeps events whose `state`
 * (jdk.types.ThreadState) is "STATE_" + a prefix from the list (types without
 * a state field are kept); --include / --exclude keep or drop whole stacks by
 * a frame name (without suffix) matching a POSIX extended regex entirely,
 * decided once per distinct stack; --from / --to keep events by start time;
 * --leak (nativemem) keeps only allocations never freed: per chunk, mallocs
 * and frees are replayed in time order on an address table, and the
 * addresses left at the end are counted.
 *
 * Cost per event: one hash probe keyed by the chunk's stack-trace (and
 * thread, class) constant keys; frames are walked and names built only the
 * first time a stack is seen in a chunk. No allocation per event once the
 * tables have grown.
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#ifndef JFRSTREAM_CONV_PROFILE_H
#define JFRSTREAM_CONV_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "jfrstream.h"
#include "outbuf.h"

/* Frame types (async-profiler's numbering). */
enum {
    PROF_T_INTERPRETED = 0,
    PROF_T_JIT = 1,
    PROF_T_INLINED = 2,
    PROF_T_NATIVE = 3,
    PROF_T_CPP = 4,
    PROF_T_KERNEL = 5,
    PROF_T_C1 = 6
};

/* How an event type is weighted and decorated. */
typedef enum prof_rule {
    PROF_RULE_SAMPLE,     /* weight 1, thread in sampledThread            */
    PROF_RULE_TLAB,       /* tlabSize (else allocationSize), class _[i]   */
    PROF_RULE_OUTSIDE,    /* allocationSize, class _[k]                   */
    PROF_RULE_ALLOC_SAMPLE, /* weight, class _[k]                         */
    PROF_RULE_MONITOR,    /* duration ns, monitorClass _[i]               */
    PROF_RULE_PARK,       /* duration ns, parkedClass _[i]                */
    PROF_RULE_WALL,       /* samples field, thread in sampledThread       */
    PROF_RULE_LIVE,       /* allocationSize, objectClass _[i]             */
    PROF_RULE_MALLOC,     /* size; --leak: kept until freed               */
    PROF_RULE_FREE,       /* --leak only: frees an address                */
    PROF_RULE_COUNT       /* any other type: weight 1                     */
} prof_rule;

#define PROF_MAX_TYPES 16

/* Node of the exact trie: one per (parent, name, frame type, line). */
typedef struct prof_node {
    uint32_t parent;
    uint32_t name;      /* index in the name table                     */
    int32_t line;       /* line number, 0 unknown                      */
    uint8_t type;       /* PROF_T_*                                    */
    bool thread;        /* a --threads frame                           */
    uint64_t self_count, self_weight;
    uint64_t total;     /* filled by prof_finish                       */
} prof_node;

/* Node of the merged tree (what collapsed / flame graphs show). */
typedef struct prof_mnode {
    uint32_t parent, name;
    uint8_t cls;        /* type class: PROF_T_JIT for all Java frames  */
    uint32_t first_child, next_sibling; /* 0 = none                     */
    uint64_t self, total, interpreted, inlined, c1;
} prof_mnode;

typedef struct prof_map prof_map; /* open addressing, 4 x u64 -> u32 */
struct prof_map {
    uint64_t *keys; /* 4 per slot */
    uint32_t *vals; /* 0 = empty  */
    size_t cap, n;
};
/* Value for key k (0: absent). */
uint32_t prof_map_get(const prof_map *m, const uint64_t k[4]);
/* Set k -> v (v != 0). False on no memory. */
bool prof_map_put(const jfr_allocator *a, prof_map *m, const uint64_t k[4], uint32_t v);
void prof_map_clear(prof_map *m);
void prof_map_free(const jfr_allocator *a, prof_map *m);

typedef struct jfrc_profile prof; /* jfrc_profile of jfrstream_conv.h */

typedef struct prof_sub {
    prof *owner;
    prof_rule rule;
    char *name;
    const jfr_type *type; /* resolved for the current chunk */
    int32_t stack_idx, thread_idx, class_idx, w_idx, w2_idx, state_idx, addr_idx;
    bool ap_frames;       /* the chunk has async-profiler's frame types   */
    prof_map states;      /* state key -> 1 kept / 2 dropped (per chunk)  */
} prof_sub;

/* --leak: one malloc or free of the current chunk, replayed at its end. */
typedef struct prof_mem_ev {
    int64_t time;
    uint64_t addr, size;
    uint32_t leaf, seq;
} prof_mem_ev;

struct jfrc_profile {
    /* options */
    bool threads, dot, count; /* count: weight 1 for every event */
    bool reverse, lines, leak;
    double minwidth;          /* percent of the total, 0 = all            */
    char **states;            /* --state: upper-case prefixes, NULL: all  */
    uint32_t nstates;
    void *include, *exclude;  /* regex_t *, NULL: none                    */
    bool have_from, have_to;  /* --from / --to, milliseconds as given     */
    int64_t from_ms, to_ms;
    int64_t from_nanos, to_nanos; /* resolved at the first chunk           */
    bool range_ready;
    uint64_t cur_source;      /* source of events from prof_subscribe     */
    /* subscriptions */
    prof_sub subs[PROF_MAX_TYPES];
    uint32_t nsubs;
    /* names: one arena of NUL-terminated strings */
    char *arena;
    size_t arena_len, arena_cap;
    uint32_t *name_off, *name_len;
    uint32_t nnames, names_cap, name_len_cap; /* names_cap: name_off's */
    prof_map name_map;  /* (hash, len) -> name id + 1 */
    /* exact trie; node 0 is the root */
    prof_node *nodes;
    uint32_t nnodes, nodes_cap;
    prof_map child_map; /* (parent, name, type, line) -> node          */
    prof_map stack_cache; /* (stack key, thread key, class key, rule)  */
    /* merged tree, built by prof_finish */
    prof_mnode *mnodes;
    uint32_t nmnodes, mnodes_cap;
    /* scratch */
    char *sbuf;
    size_t sbuf_cap;
    uint32_t *path;
    size_t path_cap;
    /* --leak: this chunk's mallocs and frees; the allocations alive */
    prof_mem_ev *mem;
    size_t nmem, mem_cap;
    prof_map addr_map;  /* address -> index + 1 in live[]               */
    struct prof_live { uint32_t leaf; uint64_t size; } *live;
    size_t nlive, live_cap;
    uint64_t events, skipped; /* events folded / without a stack trace */
    int64_t start_nanos, end_nanos; /* over all chunks seen             */
    bool nomem;
    char err[160];      /* first decode problem, "" if none            */
    jfr_allocator alloc; /* every allocation, the struct's own (conv.c) */
};

/* `a`: every allocation of the profile (NULL: libc; regcomp's own memory
 * is libc's); p->nomem when its first allocations were refused. */
void prof_init(prof *p, const jfr_allocator *a);
void prof_free(prof *p);

/*
 * Select event types: "cpu" (jdk.ExecutionSample), "alloc"
 * (jdk.ObjectAllocationInNewTLAB, jdk.ObjectAllocationOutsideTLAB,
 * jdk.ObjectAllocationSample), "lock" (jdk.JavaMonitorEnter,
 * jdk.ThreadPark), "wall" (jdk.NativeMethodSample, profiler.WallClockSample),
 * "cputime" (jdk.CPUTimeSample), "live" (profiler.LiveObject), "nativemem"
 * (profiler.Malloc, and profiler.Free for --leak), or a comma-separated list
 * of these words and full type names. Returns false with a message in
 * p->err on an unknown word or too many types.
 */
bool prof_select(prof *p, const char *spec);

/* --state LIST (comma-separated, case-insensitive prefixes of the state
 * names after "STATE_"); --include / --exclude REGEX; --from / --to TIME
 * (milliseconds: absolute epoch ms from 1500000000000, else relative to the
 * recording's start, negative relative to its end; or HH:MM[:SS[.mmm]] /
 * YYYY-MM-DDTHH:MM[:SS[.mmm]] in local time). False with p->err set. */
bool prof_set_state(prof *p, const char *list);
bool prof_set_regex(prof *p, bool include, const char *re);
bool prof_set_time(prof *p, bool to, const char *spec);

/* Subscribe the selected types on a parser (jfr_parser_on). */
jfr_status prof_subscribe(prof *p, jfr_parser *parser);

/* Per-chunk bookkeeping: call from on_chunk_begin / on_chunk_end. */
void prof_chunk_begin(prof *p, const jfr_chunk_info *c);
void prof_chunk_end(prof *p);

/* Fold one event (the callback prof_subscribe installs calls this with
 * source 0). Several inputs may feed one profile: `source` (a number
 * below 2^47 per input) tells their constant keys apart. */
void prof_add(prof *p, const jfr_event *e, uint64_t source);

/* Empty the profile for a new window, keeping the options, the selected
 * types and the name table. */
void prof_reset(prof *p);

/* After the last event: totals and the merged tree. False on no memory. */
bool prof_finish(prof *p);

/* The name of node `name` id, NUL-terminated. */
static inline const char *prof_name(const prof *p, uint32_t name) {
    return p->arena + p->name_off[name];
}

/* The async-profiler suffix of a merged node ("_[j]", "" ...). */
const char *prof_suffix(const prof_mnode *m);
/* The node's displayed type (after the majority rule). */
uint8_t prof_mtype(const prof_mnode *m);

/* Folded stacks, one line per merged node with self weight > 0. */
/* False when out of memory (the output is then incomplete). */
bool prof_write_collapsed(const prof *p, outbuf *o);

/* Sample type name / unit of the weights ("samples"/"count", ...). */
void prof_value_type(const prof *p, const char **type, const char **unit);

#endif
