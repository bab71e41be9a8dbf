/*
 * filter.h — event-type filters of `jfr print` / `jfr metadata`, shared by
 * print, metadata, listen and tail: the --events and --categories options
 * (parsed here, once), the matching rules, and the per-type table a command
 * builds from each metadata and looks up per event.
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#ifndef JFRSTREAM_CLI_FILTER_H
#define JFRSTREAM_CLI_FILTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "args.h"
#include "jfrstream.h"

/*
 * --events and --categories, each a comma-separated list of names or globs
 * (* and ?). An event type matches --events when its full name or its
 * simple name (after the last '.') matches a pattern; --categories when one
 * of its @Category names matches a pattern (or, for a category containing
 * spaces, its acronym equals the pattern). Both given: both must match.
 */
typedef struct cli_filter {
    char **events;       /* patterns, NULL when --events absent      */
    size_t nevents;
    char **categories;   /* patterns, NULL when --categories absent  */
    size_t ncategories;
    bool has_events, has_categories;
} cli_filter;

/* The option --events or --categories (a->opt->key OPT_EVENTS or
 * OPT_CATEGORIES) with its value: "CMD: missing filter after X" (no value,
 * or one starting with "--"), "CMD: use X A,B,C to give several" (given
 * twice). Returns a CLI exit status (0: taken). */
int cli_filter_option(cli_filter *f, const cli_arg *a);

/* Add the patterns of one option value. Returns false on allocation failure. */
bool cli_filter_add(cli_filter *f, bool categories, const char *text);
bool cli_filter_active(const cli_filter *f);
bool cli_filter_match(const cli_filter *f, const jfr_type *t);
/* True when every pattern is a literal qualified name (contains '.', no glob
 * characters) and there is no category filter: the matching types are
 * exactly those names, so they can be subscribed before parsing. */
bool cli_filter_literal(const cli_filter *f);
/* Subscribe cb to each distinct --events name (for a literal filter). */
jfr_status cli_filter_subscribe(const cli_filter *f, jfr_parser *p, jfr_event_cb cb,
                                void *user);
void cli_filter_free(cli_filter *f);
/* Glob match (Java jdk.jfr.internal.util.Matcher semantics). */
bool cli_glob_match(const char *text, const char *pattern);

/* Per type index of the current metadata: is it an event type the filter
 * selects (every event type when the filter is not active)? Built at each
 * metadata, looked up per event (no allocation, no string comparison). */
typedef struct cli_type_set {
    uint8_t *in;
    size_t cap;
} cli_type_set;

/* Rebuild the set for m. False on no memory (the set is then unchanged). */
bool cli_type_set_build(cli_type_set *s, const cli_filter *f, const jfr_metadata *m);
static inline bool cli_type_set_has(const cli_type_set *s, const jfr_type *t) {
    return t->index < s->cap && s->in[t->index];
}
void cli_type_set_free(cli_type_set *s);

#endif
