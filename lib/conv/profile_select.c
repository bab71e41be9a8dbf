/*
 * profile_select.c — what a profile takes, from the command line: the event
 * types (--event), and the filters set before any event is read (--state,
 * --include / --exclude, --from / --to). The folding is in profile.c.
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#include "profile.h"

#include <ctype.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const struct {
    const char *name;
    prof_rule rule;
} known_types[] = {
    {"jdk.ExecutionSample", PROF_RULE_SAMPLE},
    {"jdk.NativeMethodSample", PROF_RULE_SAMPLE},
    {"jdk.ObjectAllocationInNewTLAB", PROF_RULE_TLAB},
    {"jdk.ObjectAllocationOutsideTLAB", PROF_RULE_OUTSIDE},
    {"jdk.ObjectAllocationSample", PROF_RULE_ALLOC_SAMPLE},
    {"jdk.JavaMonitorEnter", PROF_RULE_MONITOR},
    {"jdk.ThreadPark", PROF_RULE_PARK},
    {"jdk.CPUTimeSample", PROF_RULE_SAMPLE},
    {"profiler.WallClockSample", PROF_RULE_WALL},
    {"profiler.LiveObject", PROF_RULE_LIVE},
    {"profiler.Malloc", PROF_RULE_MALLOC},
    {"profiler.Free", PROF_RULE_FREE},
    /* JDK 9 and 10 (format 1.0): the same events and fields, other names */
    {"com.oracle.jdk.ExecutionSample", PROF_RULE_SAMPLE},
    {"com.oracle.jdk.NativeMethodSample", PROF_RULE_SAMPLE},
    {"com.oracle.jdk.ObjectAllocationInNewTLAB", PROF_RULE_TLAB},
    {"com.oracle.jdk.ObjectAllocationOutsideTLAB", PROF_RULE_OUTSIDE},
    {"com.oracle.jdk.JavaMonitorEnter", PROF_RULE_MONITOR},
    {"com.oracle.jdk.ThreadPark", PROF_RULE_PARK},
};

static bool add_sub(prof *p, const char *name, size_t len) {
    for (uint32_t i = 0; i < p->nsubs; i++)
        if (strlen(p->subs[i].name) == len && memcmp(p->subs[i].name, name, len) == 0)
            return true;
    if (p->nsubs == PROF_MAX_TYPES) {
        snprintf(p->err, sizeof p->err, "too many event types (at most %d)", PROF_MAX_TYPES);
        return false;
    }
    prof_sub *s = &p->subs[p->nsubs];
    memset(s, 0, sizeof *s);
    s->owner = p;
    s->rule = PROF_RULE_COUNT;
    s->name = jfr__strndup(&p->alloc, name, len);
    if (!s->name) {
        snprintf(p->err, sizeof p->err, "out of memory");
        p->nomem = true;
        return false;
    }
    for (size_t k = 0; k < sizeof known_types / sizeof known_types[0]; k++)
        if (strcmp(known_types[k].name, s->name) == 0)
            s->rule = known_types[k].rule;
    p->nsubs++;
    return true;
}

bool prof_select(prof *p, const char *spec) {
    static const struct {
        const char *word;
        const char *types[5];
    } words[] = {
        {"cpu", {"jdk.ExecutionSample", "com.oracle.jdk.ExecutionSample"}},
        {"alloc",
         {"jdk.ObjectAllocationInNewTLAB", "jdk.ObjectAllocationOutsideTLAB",
          "jdk.ObjectAllocationSample", "com.oracle.jdk.ObjectAllocationInNewTLAB",
          "com.oracle.jdk.ObjectAllocationOutsideTLAB"}},
        {"lock",
         {"jdk.JavaMonitorEnter", "jdk.ThreadPark", "com.oracle.jdk.JavaMonitorEnter",
          "com.oracle.jdk.ThreadPark"}},
        {"wall",
         {"jdk.NativeMethodSample", "profiler.WallClockSample",
          "com.oracle.jdk.NativeMethodSample"}},
        {"cputime", {"jdk.CPUTimeSample"}},
        {"live", {"profiler.LiveObject"}},
        {"nativemem", {"profiler.Malloc", "profiler.Free"}},
    };
    const char *s = spec;
    while (*s) {
        const char *e = strchr(s, ',');
        size_t len = e ? (size_t)(e - s) : strlen(s);
        bool done = false;
        for (size_t w = 0; w < sizeof words / sizeof words[0] && !done; w++) {
            if (strlen(words[w].word) != len || memcmp(words[w].word, s, len) != 0)
                continue;
            for (int t = 0; t < 5 && words[w].types[t]; t++)
                if (!add_sub(p, words[w].types[t], strlen(words[w].types[t])))
                    return false;
            done = true;
        }
        if (!done) {
            if (len == 0 || !memchr(s, '.', len)) {
                snprintf(p->err, sizeof p->err,
                         "unknown event '%.*s' (cpu, cputime, wall, alloc, live, nativemem, "
                         "lock or a type name)",
                         (int)(len > 60 ? 60 : len), s);
                return false;
            }
            if (!add_sub(p, s, len))
                return false;
        }
        if (!e)
            break;
        s = e + 1;
    }
    if (p->nsubs == 0) {
        snprintf(p->err, sizeof p->err, "no event type given");
        return false;
    }
    return true;
}

bool prof_set_state(prof *p, const char *list) {
    for (const char *s = list; *s;) {
        const char *e = strchr(s, ',');
        size_t len = e ? (size_t)(e - s) : strlen(s);
        if (len == 0) {
            snprintf(p->err, sizeof p->err, "--state: empty state name");
            return false;
        }
        /* "STATE_RUNNABLE" given whole is the same as "RUNNABLE" */
        size_t skip = 6;
        for (size_t i = 0; i < 6 && skip; i++)
            if (len <= 6 || toupper((unsigned char)s[i]) != "STATE_"[i])
                skip = 0;
        char *w = jfr__alloc(&p->alloc, len - skip + 1);
        char **ns = w ? jfr__realloc(&p->alloc, p->states, p->nstates * sizeof *ns,
                                     (p->nstates + 1) * sizeof *ns)
                      : NULL;
        if (!ns) {
            jfr__free(&p->alloc, w, len - skip + 1);
            snprintf(p->err, sizeof p->err, "out of memory");
            p->nomem = true;
            return false;
        }
        p->states = ns;
        for (size_t i = skip; i < len; i++)
            w[i - skip] = (char)toupper((unsigned char)s[i]);
        w[len - skip] = '\0';
        p->states[p->nstates++] = w;
        if (!e)
            break;
        s = e + 1;
    }
    if (!p->nstates) {
        snprintf(p->err, sizeof p->err, "--state: no state given");
        return false;
    }
    return true;
}

bool prof_set_regex(prof *p, bool include, const char *re) {
    void **slot = include ? &p->include : &p->exclude;
    size_t n = strlen(re);
    const jfr_allocator *a = &p->alloc;
    char *whole = n < SIZE_MAX - 5 ? jfr__alloc(a, n + 5) : NULL;
    regex_t *r = jfr__calloc(a, sizeof *r);
    if (!whole || !r) {
        if (whole)
            jfr__free(a, whole, n + 5);
        jfr__free(a, r, sizeof *r);
        snprintf(p->err, sizeof p->err, "out of memory");
        p->nomem = true;
        return false;
    }
    /* the converter matches a frame name as a whole (Matcher.matches) */
    memcpy(whole, "^(", 2);
    memcpy(whole + 2, re, n);
    memcpy(whole + 2 + n, ")$", 3);
    int rc = regcomp(r, whole, REG_EXTENDED | REG_NOSUB);
    jfr__free(a, whole, n + 5);
    if (rc != 0) {
        char msg[100];
        regerror(rc, r, msg, sizeof msg);
        jfr__free(a, r, sizeof *r);
        snprintf(p->err, sizeof p->err, "--%s: bad regular expression: %s",
                 include ? "include" : "exclude", msg);
        return false;
    }
    if (*slot) {
        regfree(*slot);
        jfr__free(a, *slot, sizeof *r);
    }
    *slot = r;
    return true;
}

bool prof_set_time(prof *p, bool to, const char *spec) {
    int64_t ms = 0;
    if (!strchr(spec, ':')) {
        char *end;
        long long v = strtoll(spec, &end, 10);
        if (end == spec || *end || v < -9000000000000000LL / 1000000 ||
            v > 9000000000000000LL / 1000000)
            goto bad;
        ms = v;
    } else {
        /* HH:MM[:SS[.mmm]] today, or YYYY-MM-DDTHH:MM[:SS[.mmm]], local time */
        time_t now = time(NULL);
        struct tm tm;
        if (!localtime_r(&now, &tm))
            goto bad;
        int y = tm.tm_year + 1900, mo = tm.tm_mon + 1, d = tm.tm_mday, h = 0, mi = 0, sec = 0,
            milli = 0, n = 0;
        const char *t = spec;
        if (strchr(spec, 'T')) {
            if (sscanf(spec, "%4d-%2d-%2dT%n", &y, &mo, &d, &n) != 3 || n == 0)
                goto bad;
            t = spec + n;
        }
        n = 0;
        int got = sscanf(t, "%2d:%2d%n", &h, &mi, &n);
        if (got != 2)
            goto bad;
        t += n;
        if (*t == ':') {
            n = 0;
            if (sscanf(t, ":%2d%n", &sec, &n) != 1)
                goto bad;
            t += n;
            if (*t == '.') {
                n = 0;
                if (sscanf(t, ".%3d%n", &milli, &n) != 1)
                    goto bad;
                t += n;
            }
        }
        if (*t)
            goto bad;
        struct tm lt = {0};
        lt.tm_year = y - 1900;
        lt.tm_mon = mo - 1;
        lt.tm_mday = d;
        lt.tm_hour = h;
        lt.tm_min = mi;
        lt.tm_sec = sec;
        lt.tm_isdst = -1;
        time_t at = mktime(&lt);
        if (at == (time_t)-1)
            goto bad;
        ms = (int64_t)at * 1000 + milli;
    }
    if (to) {
        p->have_to = ms != 0; /* 0 means "not given", as in the converter */
        p->to_ms = ms;
    } else {
        p->have_from = ms != 0;
        p->from_ms = ms;
    }
    return true;
bad:
    snprintf(p->err, sizeof p->err, "--%s: bad time '%.40s' (milliseconds, HH:MM:SS or "
             "YYYY-MM-DDTHH:MM:SS)", to ? "to" : "from", spec);
    return false;
}
