/*
 * filter.c — --events / --categories event-type filters, with the matching
 * rules of the JDK's `jfr` tool (names, simple names, globs, category
 * acronyms), the option that gives them, the per-type table.
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#include "filter.h"
#include "report.h"
#include "usage.h"

#include <stdlib.h>
#include <string.h>

/* Length of the UTF-8 sequence starting with byte c (1 for stray bytes). */
static size_t u8len(unsigned char c) {
    if (c >= 0xF0 && c <= 0xF7)
        return 4;
    if (c >= 0xE0)
        return c <= 0xEF ? 3 : 1;
    if (c >= 0xC0)
        return 2;
    return 1;
}

bool cli_glob_match(const char *t, const char *p) {
    /* iterative '*' with backtracking to the last star: same language as
     * the JDK's recursive matcher ('*' any run, '?' one character) */
    const char *star = NULL, *resume = NULL;
    while (*t) {
        if (*p == '*') {
            star = ++p;
            resume = t;
            continue;
        }
        if (*p == '?') {
            size_t k = u8len((unsigned char)*t);
            size_t n = strnlen(t, k);
            t += n;
            p++;
            continue;
        }
        if (*p && *p == *t) {
            p++;
            t++;
            continue;
        }
        if (!star)
            return false;
        p = star;
        resume += strnlen(resume, u8len((unsigned char)*resume));
        t = resume;
    }
    while (*p == '*')
        p++;
    return *p == '\0';
}

static bool add_pattern(char ***list, size_t *n, const char *s, size_t len) {
    char **l = realloc(*list, (*n + 1) * sizeof *l);
    if (!l)
        return false;
    *list = l;
    char *c = malloc(len + 1);
    if (!c)
        return false;
    memcpy(c, s, len);
    c[len] = '\0';
    l[(*n)++] = c;
    return true;
}

static bool is_space(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

bool cli_filter_add(cli_filter *f, bool categories, const char *text) {
    char ***list = categories ? &f->categories : &f->events;
    size_t *n = categories ? &f->ncategories : &f->nevents;
    if (categories)
        f->has_categories = true;
    else
        f->has_events = true;
    const char *s = text;
    for (;;) {
        const char *e = strchr(s, ',');
        size_t len = e ? (size_t)(e - s) : strlen(s);
        const char *a = s, *b = s + len;
        while (a < b && is_space(*a))
            a++;
        while (b > a && is_space(b[-1]))
            b--;
        if (b > a && !add_pattern(list, n, a, (size_t)(b - a)))
            return false;
        if (!e)
            break;
        s = e + 1;
    }
    return true;
}

bool cli_filter_active(const cli_filter *f) { return f->has_events || f->has_categories; }

bool cli_filter_literal(const cli_filter *f) {
    if (f->has_categories || !f->has_events)
        return false;
    for (size_t i = 0; i < f->nevents; i++) {
        const char *p = f->events[i];
        if (strpbrk(p, "*?") || !strchr(p, '.'))
            return false;
    }
    return true;
}

static bool match_event(const cli_filter *f, const char *name) {
    const char *dot = strrchr(name, '.');
    const char *simple = dot ? dot + 1 : name;
    for (size_t i = 0; i < f->nevents; i++) {
        if (cli_glob_match(name, f->events[i]) || cli_glob_match(simple, f->events[i]))
            return true;
    }
    return false;
}

/* Upper-case initials of the words of a multi-word category name. */
static void acronym(const char *s, char *out, size_t cap) {
    bool new_word = true;
    size_t n = 0;
    for (; *s; s++) {
        char c = *s;
        if (new_word && c >= 'A' && c <= 'Z' && n + 1 < cap)
            out[n++] = c;
        new_word = is_space(c);
    }
    out[n] = '\0';
}

static bool match_category(const cli_filter *f, const char *category) {
    char acr[256];
    bool spaced = strchr(category, ' ') != NULL;
    if (spaced)
        acronym(category, acr, sizeof acr);
    for (size_t i = 0; i < f->ncategories; i++) {
        if (cli_glob_match(category, f->categories[i]))
            return true;
        if (spaced && strcmp(acr, f->categories[i]) == 0)
            return true;
    }
    return false;
}

static bool match_categories(const cli_filter *f, const jfr_type *t) {
    const jfr_annotation *a =
        jfr_annotation_find(t->annotations, t->nannotations, "jdk.jfr.Category");
    if (!a)
        return false;
    for (uint32_t i = 0; i < a->nattrs; i++) {
        const char *k = a->attrs[i].key;
        if (k && strncmp(k, "value", 5) == 0 && (k[5] == '\0' || k[5] == '-') &&
            a->attrs[i].value && match_category(f, a->attrs[i].value))
            return true;
    }
    return false;
}

bool cli_filter_match(const cli_filter *f, const jfr_type *t) {
    if (f->has_events && !match_event(f, t->name))
        return false;
    if (f->has_categories && !match_categories(f, t))
        return false;
    return true;
}

void cli_filter_free(cli_filter *f) {
    for (size_t i = 0; i < f->nevents; i++)
        free(f->events[i]);
    for (size_t i = 0; i < f->ncategories; i++)
        free(f->categories[i]);
    free(f->events);
    free(f->categories);
    memset(f, 0, sizeof *f);
}

int cli_filter_option(cli_filter *f, const cli_arg *a) {
    bool cat = a->opt->name[2] == 'c'; /* --categories */
    if (!a->value || strncmp(a->value, "--", 2) == 0)
        return cli_usage_error("%s: missing filter after %s", a->cmd, a->as);
    if (cat ? f->has_categories : f->has_events)
        return cli_usage_error("%s: use %s A,B,C to give several", a->cmd, a->as);
    if (!cli_filter_add(f, cat, a->value)) {
        cli_error("out of memory");
        return CLI_EXIT_ERROR;
    }
    return CLI_EXIT_OK;
}

jfr_status cli_filter_subscribe(const cli_filter *f, jfr_parser *p, jfr_event_cb cb,
                                void *user) {
    for (size_t i = 0; i < f->nevents; i++) {
        bool dup = false;
        for (size_t k = 0; k < i; k++)
            if (strcmp(f->events[k], f->events[i]) == 0)
                dup = true;
        if (dup)
            continue;
        jfr_status s = jfr_parser_on(p, f->events[i], cb, user);
        if (s)
            return s;
    }
    return JFR_OK;
}

bool cli_type_set_build(cli_type_set *s, const cli_filter *f, const jfr_metadata *m) {
    size_t n = m->ntypes;
    if (n > s->cap) {
        uint8_t *w = realloc(s->in, n);
        if (!w)
            return false;
        s->in = w;
        s->cap = n;
    }
    if (s->cap)
        memset(s->in, 0, s->cap);
    bool active = cli_filter_active(f);
    for (uint32_t i = 0; i < m->ntypes; i++) {
        const jfr_type *t = m->types[i];
        if (t->is_event && t->index < s->cap)
            s->in[t->index] = !active || cli_filter_match(f, t);
    }
    return true;
}

void cli_type_set_free(cli_type_set *s) {
    free(s->in);
    s->in = NULL;
    s->cap = 0;
}
