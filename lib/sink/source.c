/*
 * source.c — a source's identity and labels (jfrstream_sink.h): the origin,
 * what jdk.JVMInformation and jdk.InitialSystemProperty say, and the user's
 * labels, kept in one small ordered table with a cached JSON rendering.
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#include "jfrstream_sink.h"
#include "sink.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define MAX_KEY 64
#define MAX_VALUE 1024
#define MAX_USER 64

/* Derived labels, in their order after "source" and the origin. */
enum { L_PID, L_JVM_NAME, L_JVM_VERSION, L_MAIN_CLASS, L_JVM_START, L_SERVICE, NDERIVED };
static const char *const derived_key[NDERIVED] = {"pid",        "jvm_name",  "jvm_version",
                                                   "main_class", "jvm_start", "service"};

typedef struct label {
    char *key, *value;
} label;

struct jfrs_source {
    jfr_allocator a;
    char *origin_key, *origin, *host;
    char *id;
    char *derived[NDERIVED];
    bool service_from_otel; /* service came from otel.service.name */
    label user[MAX_USER];
    size_t nuser;
    /* the table in order (pointers into the fields above), rebuilt on change */
    const char *keys[2 + NDERIVED + MAX_USER], *values[2 + NDERIVED + MAX_USER];
    size_t n;
    jfrc_out *json; /* the labels as JSON, when json_ok */
    const char *json_str;
    bool json_ok;
    bool identified;
    uint64_t generation;
    const jfr_type *last_type; /* the last event type seen, and */
    int last_kind;             /* what it is: 0 other, 1 JVMInformation, 2 property */
};


/* Free a string of the source's (NULL: nothing). */
static void str_free(const jfrs_source *src, char *s) {
    if (s)
        jfr__free(&src->a, s, strlen(s) + 1);
}

/* Replace *slot with a copy of s[0..n); false when out of memory. */
static bool set_str(jfrs_source *src, char **slot, const char *s, size_t n) {
    if (*slot && strlen(*slot) == n && memcmp(*slot, s, n) == 0)
        return true;
    char *d = jfr__strndup(&src->a, s, n);
    if (!d)
        return false;
    str_free(src, *slot);
    *slot = d;
    return true;
}

static bool user_has(const jfrs_source *s, const char *key) {
    for (size_t i = 0; i < s->nuser; i++)
        if (strcmp(s->user[i].key, key) == 0)
            return true;
    return false;
}

static void rebuild(jfrs_source *s) {
    size_t n = 0;
    s->keys[n] = "source";
    s->values[n++] = s->id;
    if (!user_has(s, s->origin_key)) {
        s->keys[n] = s->origin_key;
        s->values[n++] = s->origin;
    }
    for (int i = 0; i < NDERIVED; i++)
        if (s->derived[i] && !user_has(s, derived_key[i])) {
            s->keys[n] = derived_key[i];
            s->values[n++] = s->derived[i];
        }
    for (size_t i = 0; i < s->nuser; i++)
        if (strcmp(s->user[i].key, "source") != 0) {
            s->keys[n] = s->user[i].key;
            s->values[n++] = s->user[i].value;
        }
    s->n = n;
    s->json_ok = false;
    s->generation++;
}

/* HOST of "ADDR:PORT" or "[V6]:PORT"; NULL when not in that form. */
static char *peer_host(const jfr_allocator *a, const char *peer) {
    if (peer[0] == '[') {
        const char *close = strchr(peer, ']');
        return close ? jfr__strndup(a, peer + 1, (size_t)(close - peer - 1)) : NULL;
    }
    const char *colon = strrchr(peer, ':');
    if (!colon || strchr(peer, ':') != colon)
        return NULL;
    return jfr__strndup(a, peer, (size_t)(colon - peer));
}

static bool make_id(jfrs_source *s) {
    char *id;
    if (s->identified) {
        const char *pid = s->derived[L_PID] ? s->derived[L_PID] : "0";
        const char *start = s->derived[L_JVM_START] ? s->derived[L_JVM_START] : "0";
        size_t n = strlen(s->host) + strlen(pid) + strlen(start) + 3;
        id = jfr__alloc(&s->a, n);
        if (!id)
            return false;
        snprintf(id, n, "%s:%s:%s", s->host, pid, start); /* n - 1 bytes */
    } else if (!(id = jfr__strdup(&s->a, s->origin))) {
        return false;
    }
    str_free(s, s->id);
    s->id = id;
    return true;
}

jfrs_source *jfrs_source_new(const char *origin_key, const char *origin, const char *host) {
    return jfrs_source_new_advanced(origin_key, origin, host, NULL);
}

jfrs_source *jfrs_source_new_advanced(const char *origin_key, const char *origin,
                                      const char *host, const jfr_allocator *alloc) {
    if (!origin_key || !origin)
        return NULL;
    jfr_allocator a = jfrs_allocator(alloc);
    jfrs_source *s = jfr__calloc(&a, sizeof *s);
    if (!s)
        return NULL;
    s->a = a;
    s->origin_key = jfr__strdup(&a, origin_key);
    s->origin = jfr__strdup(&a, origin);
    if (host)
        s->host = jfr__strdup(&a, host);
    else if (strcmp(origin_key, "peer") == 0 && (s->host = peer_host(&a, origin)) != NULL)
        ;
    else
        s->host = jfr__strdup(&a, "localhost");
    if (!s->origin_key || !s->origin || !s->host || !make_id(s)) {
        jfrs_source_free(s);
        return NULL;
    }
    rebuild(s);
    s->generation = 1;
    return s;
}

void jfrs_source_free(jfrs_source *s) {
    if (!s)
        return;
    str_free(s, s->origin_key);
    str_free(s, s->origin);
    str_free(s, s->host);
    str_free(s, s->id);
    for (int i = 0; i < NDERIVED; i++)
        str_free(s, s->derived[i]);
    for (size_t i = 0; i < s->nuser; i++) {
        str_free(s, s->user[i].key);
        str_free(s, s->user[i].value);
    }
    jfrc_out_free(s->json);
    jfr_allocator a = s->a;
    jfr__free(&a, s, sizeof *s);
}

static bool key_ok(const char *k) {
    size_t n = strlen(k);
    if (n == 0 || n > MAX_KEY || (k[0] >= '0' && k[0] <= '9'))
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = k[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_'))
            return false;
    }
    return true;
}

jfr_status jfrs_source_set(jfrs_source *s, const char *key, const char *value) {
    if (!s || !key || !value || !key_ok(key) || strlen(value) > MAX_VALUE)
        return JFR_INVALID_ARG;
    for (size_t i = 0; i < s->nuser; i++)
        if (strcmp(s->user[i].key, key) == 0) {
            if (!set_str(s, &s->user[i].value, value, strlen(value)))
                return JFR_NOMEM;
            rebuild(s);
            return JFR_OK;
        }
    if (s->nuser == MAX_USER)
        return JFR_LIMIT;
    char *k = jfr__strdup(&s->a, key), *v = jfr__strdup(&s->a, value);
    if (!k || !v) {
        str_free(s, k);
        str_free(s, v);
        return JFR_NOMEM;
    }
    s->user[s->nuser++] = (label){k, v};
    rebuild(s);
    return JFR_OK;
}

/* ------------------------------------------------------- the identity events */

/* A string field of `ev` into *slot (first word only when `word`); true when
 * it changed something. */
static bool take_string(jfrs_source *s, const jfr_value *ev, const char *name, char **slot,
                        bool word) {
    jfr_value v;
    if (jfr_value_field_named(ev, name, &v) != JFR_OK || v.kind != JFR_KIND_STRING || !v.str)
        return false;
    size_t n = v.len;
    if (word) {
        const char *sp = memchr(v.str, ' ', n);
        if (sp)
            n = (size_t)(sp - v.str);
    }
    if (n == 0)
        return false;
    char *old = *slot;
    bool same = old && strlen(old) == n && memcmp(old, v.str, n) == 0;
    return !same && set_str(s, slot, v.str, n);
}

static bool take_long(jfrs_source *s, const jfr_value *ev, const char *name, char **slot) {
    jfr_value v;
    if (jfr_value_field_named(ev, name, &v) != JFR_OK || v.kind != JFR_KIND_INT)
        return false;
    char buf[32];
    int n = snprintf(buf, sizeof buf, "%lld", (long long)v.i);
    char *old = *slot;
    bool same = old && strcmp(old, buf) == 0;
    return !same && set_str(s, slot, buf, (size_t)n);
}

static void jvm_information(jfrs_source *s, const jfr_value *ev) {
    bool changed = take_long(s, ev, "pid", &s->derived[L_PID]);
    changed |= take_string(s, ev, "jvmName", &s->derived[L_JVM_NAME], false);
    changed |= take_string(s, ev, "jvmVersion", &s->derived[L_JVM_VERSION], false);
    changed |= take_string(s, ev, "javaArguments", &s->derived[L_MAIN_CLASS], true);
    changed |= take_long(s, ev, "jvmStartTime", &s->derived[L_JVM_START]);
    if (!s->identified) {
        s->identified = true;
        changed = true;
    }
    if (changed && make_id(s))
        rebuild(s);
}

static void system_property(jfrs_source *s, const jfr_value *ev) {
    jfr_value k;
    if (jfr_value_field_named(ev, "key", &k) != JFR_OK || k.kind != JFR_KIND_STRING)
        return;
    bool service = k.len == 12 && memcmp(k.str, "service.name", 12) == 0;
    bool otel = k.len == 17 && memcmp(k.str, "otel.service.name", 17) == 0;
    /* service.name wins over otel.service.name, whichever comes first */
    if (!(service || (otel && (!s->derived[L_SERVICE] || s->service_from_otel))))
        return;
    if (take_string(s, ev, "value", &s->derived[L_SERVICE], false)) {
        s->service_from_otel = otel;
        rebuild(s);
    } else if (service) {
        s->service_from_otel = false;
    }
}

static bool is_type(const jfr_type *t, const char *jdk_name) {
    /* JDK 9 and 10 wrote com.oracle.jdk.X for jdk.X */
    const char *n = t->name;
    if (strncmp(n, "com.oracle.", 11) == 0)
        n += 11;
    return strcmp(n, jdk_name) == 0;
}

void jfrs_source_event(jfrs_source *s, const jfr_event *e) {
    if (!s || !e || !e->type)
        return;
    const jfr_type *t = e->type;
    int kind;
    if (t == s->last_type) {
        kind = s->last_kind;
    } else {
        kind = is_type(t, "jdk.JVMInformation")         ? 1
               : is_type(t, "jdk.InitialSystemProperty") ? 2
                                                          : 0;
        s->last_type = t;
        s->last_kind = kind;
    }
    if (!kind)
        return;
    jfr_value ev;
    if (jfr_event_value(e, &ev) != JFR_OK)
        return;
    if (kind == 1)
        jvm_information(s, &ev);
    else
        system_property(s, &ev);
}

static int on_identity(jfr_parser *p, const jfr_event *e, void *user) {
    (void)p;
    jfrs_source_event(user, e);
    return JFR_CB_CONTINUE;
}

jfr_status jfrs_source_subscribe(jfrs_source *s, jfr_parser *p) {
    static const char *const names[] = {"jdk.JVMInformation", "com.oracle.jdk.JVMInformation",
                                        "jdk.InitialSystemProperty",
                                        "com.oracle.jdk.InitialSystemProperty"};
    if (!s || !p)
        return JFR_INVALID_ARG;
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        jfr_status st = jfr_parser_on(p, names[i], on_identity, s);
        if (st)
            return st;
    }
    return JFR_OK;
}

/* ------------------------------------------------------------------ getters */

bool jfrs_source_identified(const jfrs_source *s) { return s && s->identified; }
uint64_t jfrs_source_generation(const jfrs_source *s) { return s ? s->generation : 0; }
const char *jfrs_source_id(const jfrs_source *s) { return s ? s->id : NULL; }
size_t jfrs_source_nlabels(const jfrs_source *s) { return s ? s->n : 0; }
const char *jfrs_source_key(const jfrs_source *s, size_t i) {
    return s && i < s->n ? s->keys[i] : NULL;
}
const char *jfrs_source_value(const jfrs_source *s, size_t i) {
    return s && i < s->n ? s->values[i] : NULL;
}
const char *jfrs_source_get(const jfrs_source *s, const char *key) {
    for (size_t i = 0; s && key && i < s->n; i++)
        if (strcmp(s->keys[i], key) == 0)
            return s->values[i];
    return NULL;
}

const char *jfrs_source_json(const jfrs_source *cs) {
    jfrs_source *s = (jfrs_source *)cs; /* the cache is not part of the value */
    if (!s)
        return NULL;
    if (s->json_ok)
        return s->json_str;
    if (!s->json && !(s->json = jfrc_out_new_memory_advanced(256, &s->a)))
        return NULL;
    jfrc_out *o = s->json;
    jfrs_out_reset(o);
    jfrc_out_putc(o, '{');
    for (size_t i = 0; i < s->n; i++) {
        if (i)
            jfrc_out_putc(o, ',');
        jfrc_out_json_string(o, s->keys[i], strlen(s->keys[i]));
        jfrc_out_putc(o, ':');
        jfrc_out_json_string(o, s->values[i], strlen(s->values[i]));
    }
    jfrc_out_putc(o, '}');
    if (!(s->json_str = jfrs_out_cstr(o, NULL)))
        return NULL;
    s->json_ok = true;
    return s->json_str;
}
