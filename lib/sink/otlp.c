/*
 * otlp.c — the OTLP JSON envelope of the Kafka sink (jfrstream_sink.h,
 * "Kafka"): an ExportLogsServiceRequest with the source's labels as resource
 * attributes and one log record whose body is the event's values, converted
 * from the event's JSON (objects -> kvlistValue, arrays -> arrayValue, ...).
 * Field names as OTLP/JSON spells them (lowerCamelCase; 64-bit integers as
 * decimal strings).
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#include "jfrstream_sink.h"
#include "sink.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* Writes that a NULL writer drops (a member skipped, see jfrs_otlp_record). */
static void oputs(jfrc_out *b, const char *s) {
    if (b)
        jfrc_out_puts(b, s);
}
static void oputc(jfrc_out *b, char c) {
    if (b)
        jfrc_out_putc(b, c);
}
static void owrite(jfrc_out *b, const char *s, size_t n) {
    if (b)
        jfrc_out_write(b, s, n);
}

/* ------------------------------------------------------- resource attributes */

static void attr_begin(jfrc_out *b, bool *first, const char *key, size_t klen) {
    if (!*first)
        oputc(b, ',');
    *first = false;
    oputs(b, "{\"key\":");
    jfrc_out_json_string(b, key, klen);
    oputs(b, ",\"value\":");
}

static void attr_string(jfrc_out *b, bool *first, const char *key, const char *value) {
    attr_begin(b, first, key, strlen(key));
    oputs(b, "{\"stringValue\":");
    jfrc_out_json_string(b, value, strlen(value));
    oputs(b, "}}");
}

static bool is_int(const char *s) {
    size_t n = strlen(s);
    if (*s == '-')
        s++, n--;
    if (n == 0 || n > 18) /* 18 digits always fit int64 */
        return false;
    for (size_t i = 0; i < n; i++)
        if (s[i] < '0' || s[i] > '9')
            return false;
    return true;
}

void jfrs_otlp_begin(jfrc_out *b, const jfrs_source *s) {
    static const struct {
        const char *label, *attr;
    } names[] = {
        {"source", "jfr.source.id"},
        {"pid", "process.pid"},
        {"jvm_name", "process.runtime.name"},
        {"jvm_version", "process.runtime.version"},
        {"service", NULL}, /* service.name, first */
        {"peer", "jfr.source.peer"},
        {"path", "jfr.source.path"},
        {"main_class", "jfr.source.main_class"},
        {"jvm_start", "jfr.source.jvm_start"},
    };
    oputs(b, "{\"resourceLogs\":[{\"resource\":{\"attributes\":[");
    bool first = true;
    const char *service = jfrs_source_get(s, "service");
    if (!service)
        service = jfrs_source_get(s, "main_class");
    attr_string(b, &first, "service.name", service ? service : "unknown_service:java");
    size_t n = jfrs_source_nlabels(s);
    for (size_t i = 0; i < n; i++) {
        const char *k = jfrs_source_key(s, i), *v = jfrs_source_value(s, i);
        const char *attr = k;
        for (size_t j = 0; j < sizeof names / sizeof *names; j++)
            if (strcmp(names[j].label, k) == 0) {
                attr = names[j].attr;
                break;
            }
        if (!attr)
            continue;
        if (strcmp(attr, "process.pid") == 0 && is_int(v)) {
            attr_begin(b, &first, attr, strlen(attr));
            oputs(b, "{\"intValue\":\"");
            oputs(b, v);
            oputs(b, "\"}}");
        } else {
            attr_string(b, &first, attr, v);
        }
    }
    oputs(b, "]},\"scopeLogs\":[{\"scope\":{\"name\":\"jfrstream\",\"version\":\"" JFR_VERSION_STRING
                     "\"},\"logRecords\":[");
}

/* ------------------------------------------------------- JSON -> AnyValue */

typedef struct reader {
    const char *p, *end;
} reader;

static void ws(reader *r) {
    while (r->p < r->end && (*r->p == ' ' || *r->p == '\t' || *r->p == '\n' || *r->p == '\r'))
        r->p++;
}

/* A JSON string token at r->p: its bytes with the quotes (escapes kept). */
static bool string_token(reader *r, const char **s, size_t *n) {
    if (r->p >= r->end || *r->p != '"')
        return false;
    const char *q = r->p + 1;
    while (q < r->end && *q != '"')
        q += *q == '\\' ? 2 : 1;
    if (q >= r->end)
        return false;
    *s = r->p;
    *n = (size_t)(q + 1 - r->p);
    r->p = q + 1;
    return true;
}

/* The code unit of a \\uXXXX escape at s (6 bytes available), or -1. */
static long escape_unit(const char *s, const char *end) {
    if (end - s < 6 || s[0] != '\\' || s[1] != 'u')
        return -1;
    long u = 0;
    for (int i = 2; i < 6; i++) {
        char c = s[i];
        int d = c >= '0' && c <= '9' ? c - '0'
                : c >= 'a' && c <= 'f' ? c - 'a' + 10
                : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                       : -1;
        if (d < 0)
            return -1;
        u = u * 16 + d;
    }
    return u;
}

/* A string token, escapes kept, but a lone UTF-16 surrogate (which the
 * JSON of `jfr print` keeps, as Java strings may hold one) becomes U+FFFD:
 * OTLP/JSON is protobuf JSON, whose strings must be valid Unicode. */
static void put_string(jfrc_out *b, const char *s, size_t n) {
    const char *p = s, *end = s + n, *run = s;
    while (p < end) {
        if (*p != '\\') {
            p++;
            continue;
        }
        long u = escape_unit(p, end);
        if (u < 0xD800 || u > 0xDFFF) { /* not a surrogate (or not \\u) */
            p += u < 0 ? 2 : 6;
            continue;
        }
        long lo = u <= 0xDBFF ? escape_unit(p + 6, end) : -1;
        if (lo >= 0xDC00 && lo <= 0xDFFF) { /* a pair: kept */
            p += 12;
            continue;
        }
        owrite(b, run, (size_t)(p - run));
        oputs(b, "\\uFFFD");
        p += 6;
        run = p;
    }
    owrite(b, run, (size_t)(end - run));
}

/* An integer literal that fits int64 (by its digits). */
static bool fits_int64(const char *s, size_t n) {
    bool neg = n && *s == '-';
    const char *d = s + neg;
    size_t k = n - neg;
    if (k == 0 || k > 19)
        return false;
    for (size_t i = 0; i < k; i++)
        if (d[i] < '0' || d[i] > '9')
            return false;
    if (k < 19)
        return true;
    return memcmp(d, neg ? "9223372036854775808" : "9223372036854775807", 19) <= 0;
}

/* One scalar at r->p as an AnyValue. */
static bool scalar(reader *r, jfrc_out *b) {
    const char *s;
    size_t n;
    char c = *r->p;
    if (c == '"') {
        if (!string_token(r, &s, &n))
            return false;
        oputs(b, "{\"stringValue\":");
        put_string(b, s, n);
        oputc(b, '}');
        return true;
    }
    static const struct {
        const char *lit, *out;
    } lits[] = {{"true", "{\"boolValue\":true}"},
                {"false", "{\"boolValue\":false}"},
                {"null", "{}"}};
    for (size_t i = 0; i < 3; i++) {
        size_t k = strlen(lits[i].lit);
        if ((size_t)(r->end - r->p) >= k && memcmp(r->p, lits[i].lit, k) == 0) {
            r->p += k;
            oputs(b, lits[i].out);
            return true;
        }
    }
    s = r->p;
    while (r->p < r->end && strchr("+-0123456789.eE", *r->p) && *r->p)
        r->p++;
    n = (size_t)(r->p - s);
    if (n == 0)
        return false;
    if (fits_int64(s, n)) {
        oputs(b, "{\"intValue\":\"");
        owrite(b, s, n);
        oputs(b, "\"}");
    } else if (memchr(s, '.', n) || memchr(s, 'e', n) || memchr(s, 'E', n)) {
        oputs(b, "{\"doubleValue\":");
        owrite(b, s, n);
        oputc(b, '}');
    } else { /* an integer beyond int64: kept exact, as text */
        oputs(b, "{\"stringValue\":\"");
        owrite(b, s, n);
        oputs(b, "\"}");
    }
    return true;
}

/* `{"key":K,"value":` for the member at r->p (after '{' or ','). */
static bool member_key(reader *r, jfrc_out *b) {
    const char *k;
    size_t kn;
    ws(r);
    if (!string_token(r, &k, &kn))
        return false;
    ws(r);
    if (r->p >= r->end || *r->p != ':')
        return false;
    r->p++;
    oputs(b, "{\"key\":");
    owrite(b, k, kn);
    oputs(b, ",\"value\":");
    return true;
}

/* One JSON value at r->p as an AnyValue, without recursion: `stack` holds
 * the open containers ('{' or '['). */
static bool any_value(reader *r, jfrc_out *b, const jfr_allocator *a) {
    char local[64], *stack = local;
    size_t depth = 0, cap = sizeof local;
    bool ok = false;
    for (;;) {
        /* a value */
        ws(r);
        if (r->p >= r->end)
            goto out;
        char c = *r->p;
        if (c == '{' || c == '[') {
            if (depth == cap) {
                size_t nc = cap * 2;
                char *ns = stack == local ? jfr__alloc(a, nc) : jfr__realloc(a, stack, cap, nc);
                if (!ns)
                    goto out;
                if (stack == local)
                    memcpy(ns, local, cap);
                stack = ns;
                cap = nc;
            }
            stack[depth++] = c;
            r->p++;
            oputs(b, c == '{' ? "{\"kvlistValue\":{\"values\":[" : "{\"arrayValue\":{\"values\":[");
            ws(r);
            if (r->p < r->end && *r->p == (c == '{' ? '}' : ']')) {
                r->p++;
                depth--;
                oputs(b, "]}}");
            } else {
                if (c == '{' && !member_key(r, b))
                    goto out;
                continue;
            }
        } else if (!scalar(r, b)) {
            goto out;
        }
        /* after a value: close what ends here, or go on with the next one */
        for (;;) {
            if (depth == 0) {
                ok = true;
                goto out;
            }
            char top = stack[depth - 1];
            if (top == '{')
                oputc(b, '}'); /* the KeyValue */
            ws(r);
            if (r->p >= r->end)
                goto out;
            if (*r->p == ',') {
                r->p++;
                oputc(b, ',');
                if (top == '{' && !member_key(r, b))
                    goto out;
                break;
            }
            if (*r->p != (top == '{' ? '}' : ']'))
                goto out;
            r->p++;
            depth--;
            oputs(b, "]}}");
        }
    }
out:
    if (stack != local)
        jfr__free(a, stack, cap);
    return ok;
}

bool jfrs_otlp_record(jfrc_out *b, const jfr_allocator *a, const char *type, size_t tlen,
                      int64_t start_ns, int64_t observed_ns, const char *json, size_t len,
                      const char *id, size_t idlen) {
    char num[48];
    oputs(b, "{\"timeUnixNano\":\"");
    snprintf(num, sizeof num, "%" PRIu64, (uint64_t)(start_ns > 0 ? start_ns : 0));
    oputs(b, num);
    oputs(b, "\",\"observedTimeUnixNano\":\"");
    snprintf(num, sizeof num, "%" PRIu64, (uint64_t)(observed_ns > 0 ? observed_ns : 0));
    oputs(b, num);
    oputs(b, "\",\"eventName\":");
    jfrc_out_json_string(b, type, tlen);
    oputs(b, ",\"attributes\":[{\"key\":\"event.name\",\"value\":{\"stringValue\":");
    jfrc_out_json_string(b, type, tlen);
    oputs(b, "}},{\"key\":\"jfr.id\",\"value\":{\"stringValue\":");
    jfrc_out_json_string(b, id, idlen);
    oputs(b, "}}],\"body\":");
    /* the "values" member of the event object */
    reader r = {json, json + len};
    ws(&r);
    if (r.p >= r.end || *r.p != '{')
        return false;
    r.p++;
    for (;;) {
        const char *k;
        size_t kn;
        ws(&r);
        if (!string_token(&r, &k, &kn))
            return false;
        ws(&r);
        if (r.p >= r.end || *r.p != ':')
            return false;
        r.p++;
        ws(&r);
        if (kn == 8 && memcmp(k, "\"values\"", 8) == 0) {
            if (!any_value(&r, b, a))
                return false;
            break;
        }
        /* skip another member's value: converted, written nowhere */
        if (!any_value(&r, NULL, a))
            return false;
        ws(&r);
        if (r.p >= r.end || *r.p != ',')
            return false;
        r.p++;
    }
    oputc(b, '}');
    return true;
}
