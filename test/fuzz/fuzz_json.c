/*
 * fuzz_json.c — libFuzzer target: the converter library's JSON writer
 * (lib/conv/evjson.c, with outbuf.c and jformat_*.c; public as jfrc_json in
 * jfrstream_conv.h) over every event of the input, with
 * the options of `jfrstream print --json` (ordered, the JDK's time base).
 * Events alternate between the pretty and the compact layout and between
 * stack depths 5, 64 and 0.
 *
 * Checked for each event whose JSON fits the 1 MiB buffer: the text is one
 * valid JSON object (evjson promises valid JSON even when the event cannot
 * be fully decoded) and ASCII without control characters but newlines (every other
 * character is escaped as \uXXXX).
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#include "fuzz_common.h"

#include "evjson.h"

#define JSON_BUF ((size_t)1 << 20)
#define JSON_MAX_NEST 4096

/* ------------------------------------------------------- JSON validator */

typedef struct jcur {
    const char *p, *end;
} jcur;

static void ws(jcur *c) {
    while (c->p < c->end && (*c->p == ' ' || *c->p == '\n' || *c->p == '\t' || *c->p == '\r'))
        c->p++;
}

static bool lit(jcur *c, const char *s) {
    size_t n = strlen(s);
    if ((size_t)(c->end - c->p) < n || memcmp(c->p, s, n) != 0)
        return false;
    c->p += n;
    return true;
}

static bool is_hex(char ch) {
    return (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f') || (ch >= 'A' && ch <= 'F');
}

static bool string(jcur *c) {
    if (c->p >= c->end || *c->p != '"')
        return false;
    c->p++;
    while (c->p < c->end) {
        unsigned char ch = (unsigned char)*c->p++;
        if (ch == '"')
            return true;
        if (ch < 0x20)
            return false;
        if (ch == '\\') {
            if (c->p >= c->end)
                return false;
            char e = *c->p++;
            if (e == 'u') {
                for (int i = 0; i < 4; i++)
                    if (c->p >= c->end || !is_hex(*c->p++))
                        return false;
            } else if (!strchr("\"\\/bfnrt", e) || e == 0) {
                return false;
            }
        }
    }
    return false;
}

static bool digits(jcur *c) {
    const char *s = c->p;
    while (c->p < c->end && *c->p >= '0' && *c->p <= '9')
        c->p++;
    return c->p > s;
}

static bool number(jcur *c) {
    if (c->p < c->end && *c->p == '-')
        c->p++;
    if (c->p < c->end && *c->p == '0')
        c->p++;
    else if (!digits(c))
        return false;
    if (c->p < c->end && *c->p == '.') {
        c->p++;
        if (!digits(c))
            return false;
    }
    if (c->p < c->end && (*c->p == 'e' || *c->p == 'E')) {
        c->p++;
        if (c->p < c->end && (*c->p == '+' || *c->p == '-'))
            c->p++;
        if (!digits(c))
            return false;
    }
    return true;
}

static bool value(jcur *c, int depth) {
    if (depth > JSON_MAX_NEST)
        return false;
    ws(c);
    if (c->p >= c->end)
        return false;
    char ch = *c->p;
    if (ch == '{' || ch == '[') {
        char close = ch == '{' ? '}' : ']';
        c->p++;
        ws(c);
        if (c->p < c->end && *c->p == close) {
            c->p++;
            return true;
        }
        for (;;) {
            if (ch == '{') {
                ws(c);
                if (!string(c))
                    return false;
                ws(c);
                if (c->p >= c->end || *c->p++ != ':')
                    return false;
            }
            if (!value(c, depth + 1))
                return false;
            ws(c);
            if (c->p >= c->end)
                return false;
            if (*c->p == ',') {
                c->p++;
                continue;
            }
            if (*c->p++ != close)
                return false;
            return true;
        }
    }
    if (ch == '"')
        return string(c);
    if (ch == 't')
        return lit(c, "true");
    if (ch == 'f')
        return lit(c, "false");
    if (ch == 'n')
        return lit(c, "null");
    return number(c);
}

static void check_json(const char *s, size_t n, const char *type) {
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        if ((ch < 0x20 && ch != '\n') || ch > 0x7f)
            fuzz_die("JSON of a %s event has byte 0x%02x at %zu (not escaped)", type, ch, i);
    }
    jcur c = {s, s + n};
    if (!value(&c, 0) || (ws(&c), c.p != c.end))
        fuzz_die("JSON of a %s event is not valid JSON (at byte %zu of %zu): %.*s", type,
                 (size_t)(c.p - s), n, (int)(n < 2000 ? n : 2000), s);
}

/* ------------------------------------------------------------ callbacks */

typedef struct jrun {
    evjson ej;
    outbuf ob;
    uint64_t events;
} jrun;

static int on_chunk_begin(jfr_parser *p, const jfr_chunk_info *c, void *user) {
    (void)p;
    jrun *r = user;
    evjson_chunk_begin(&r->ej, c);
    return JFR_CB_CONTINUE;
}

static int on_metadata(jfr_parser *p, const jfr_metadata *m, void *user) {
    (void)p;
    jrun *r = user;
    evjson_metadata(&r->ej, m);
    return JFR_CB_CONTINUE;
}

static int on_event(jfr_parser *p, const jfr_event *e, void *user) {
    (void)p;
    jrun *r = user;
    jfr_value ev;
    if (jfr_event_value(e, &ev) != JFR_OK)
        return JFR_CB_CONTINUE;
    static const uint32_t depths[3] = {5, 64, 0};
    r->ej.compact = r->events & 1;
    r->ej.stack_depth = depths[r->events % 3];
    r->ej.indent = 0;
    r->events++;
    /* fd -1: a flush fails and sets `failed`, so an event larger than the
     * buffer is noticed (and not checked) */
    r->ob.len = 0;
    r->ob.failed = false;
    (void)evjson_event(&r->ej, e, &ev);
    if (!r->ob.failed)
        check_json(r->ob.buf, r->ob.len, e->type->name);
    r->ob.len = 0;
    return JFR_CB_CONTINUE;
}

static int on_error(jfr_parser *p, jfr_status s, const char *message, void *user) {
    (void)p;
    (void)s;
    (void)message;
    (void)user;
    return JFR_CB_CONTINUE;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    jrun r;
    memset(&r, 0, sizeof r);
    if (!ob_init(&r.ob, -1, JSON_BUF, NULL))
        return 0;
    evjson_init(&r.ej, &r.ob, 5, false, NULL);
    fuzz_alloc a;
    jfr_options o;
    fuzz_options(&o, &a, size);
    o.ordered = true;
    o.jdk_time_base = true;
    jfr_callbacks cb = {.size = sizeof cb, .on_chunk_begin = on_chunk_begin,
                        .on_metadata = on_metadata,
                        .on_event = on_event,
                        .on_error = on_error};
    jfr_parser *p = jfr_parser_new(&o, &cb, &r);
    if (!p)
        fuzz_die("jfr_parser_new failed");
    (void)jfr_parser_feed(p, data, size);
    (void)jfr_parser_finish(p);
    jfr_parser_free(p);
    fuzz_check_freed(&a);
    ob_free(&r.ob);
    evjson_free(&r.ej);
    return 0;
}
