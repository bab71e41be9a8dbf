/*
 * fuzz_json.c — libFuzzer target: the converter library's event writers
 * over every event of the input: JSON (lib/conv/evjson.c, with outbuf.c and
 * jformat_*.c; public as jfrc_json in jfrstream_conv.h), with the options of
 * `jfrstream print --json` (ordered, the JDK's time base), and the text of
 * `print` (lib/conv/evtext.c, jfrc_text: its queue, its blocks, --exact on
 * inputs of odd size), and the XML of `print --xml` (evjson's XML layout).
 * JSON events alternate between the pretty and the compact layout and
 * between stack depths 5, 64 and 0.
 *
 * Checked for each event whose JSON fits the 1 MiB buffer: the text is one
 * valid JSON object (evjson promises valid JSON even when the event cannot
 * be fully decoded) and ASCII without control characters but newlines (every other
 * character is escaped as \uXXXX). The text of all events, when it fits
 * 1 MiB, is valid UTF-8; each event's XML, when it fits, is one <event>
 * element whose tags balance (text and attributes escape < and >) (Java's strings are written as UTF-8, a lone
 * surrogate as '?'), and the writer holds no event and at most one block once it has finished.
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#include "fuzz_common.h"

#include "evjson.h"
#include "evtext.h"

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
    evjson ex;
    outbuf xob;
    evtext et;
    outbuf tob;
    uint64_t events;
} jrun;

/* The tags of one event's XML balance: <event ...> ... </event>, every
 * <struct>/<array>/<value> closed or self-closed, nothing outside. */
static void check_xml(const char *s, size_t n, const char *type) {
    static const char *names[] = {"event", "struct", "array", "value"};
    uint8_t stack[EVJSON_MAX_NEST + 8];
    size_t depth = 0, i = 0, elements = 0;
    while (i < n) {
        if (s[i] != '<') {
            if (depth == 0 && s[i] != ' ' && s[i] != '\n')
                fuzz_die("XML of a %s event: text outside the event at %zu", type, i);
            i++;
            continue;
        }
        const char *gt = memchr(s + i, '>', n - i);
        if (!gt)
            fuzz_die("XML of a %s event: tag at %zu not closed", type, i);
        size_t end = (size_t)(gt - s);
        bool closing = i + 1 < n && s[i + 1] == '/';
        bool self = s[end - 1] == '/';
        size_t k = 0;
        while (k < 4) {
            size_t len = strlen(names[k]);
            size_t at = i + 1 + (closing ? 1 : 0);
            if (at + len <= end && memcmp(s + at, names[k], len) == 0 &&
                (s[at + len] == ' ' || s[at + len] == '>' || s[at + len] == '/'))
                break;
            k++;
        }
        if (k == 4)
            fuzz_die("XML of a %s event: unknown tag at %zu: %.*s", type, i,
                     (int)(end - i + 1 < 80 ? end - i + 1 : 80), s + i);
        if ((k == 0) != (depth == 0 && !closing) && !(k == 0 && closing && depth == 1))
            fuzz_die("XML of a %s event: <event> misplaced at %zu", type, i);
        if (closing) {
            if (depth == 0 || stack[depth - 1] != k)
                fuzz_die("XML of a %s event: </%s> at %zu closes nothing open", type, names[k], i);
            depth--;
            if (depth == 0)
                elements++;
        } else if (!self) {
            if (depth >= sizeof stack)
                fuzz_die("XML of a %s event: deeper than the writer's limit", type);
            stack[depth++] = (uint8_t)k;
        }
        i = end + 1;
    }
    if (depth != 0 || elements != 1)
        fuzz_die("XML of a %s event: %zu elements, %zu left open", type, elements, depth);
}

/* Well-formed UTF-8 (no overlong forms, no surrogates, at most U+10FFFF). */
static void check_utf8(const unsigned char *s, size_t n) {
    size_t i = 0;
    while (i < n) {
        unsigned c = s[i];
        size_t k = c < 0x80 ? 1 : (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3
                 : (c & 0xf8) == 0xf0 ? 4 : 0;
        if (k == 0 || i + k > n)
            fuzz_die("text: bad UTF-8 lead byte 0x%02x at %zu of %zu", c, i, n);
        uint32_t cp = k == 1 ? c : c & (0x7fu >> k);
        for (size_t j = 1; j < k; j++) {
            if ((s[i + j] & 0xc0) != 0x80)
                fuzz_die("text: bad UTF-8 continuation at %zu", i + j);
            cp = cp << 6 | (s[i + j] & 0x3fu);
        }
        static const uint32_t least[5] = {0, 0, 0x80, 0x800, 0x10000};
        if (cp < least[k] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
            fuzz_die("text: bad UTF-8 code point U+%04X at %zu", (unsigned)cp, i);
        i += k;
    }
}

static int on_chunk_begin(jfr_parser *p, const jfr_chunk_info *c, void *user) {
    (void)p;
    jrun *r = user;
    evjson_chunk_begin(&r->ej, c);
    evjson_chunk_begin(&r->ex, c);
    evtext_chunk_begin(&r->et, c);
    return JFR_CB_CONTINUE;
}

static int on_metadata(jfr_parser *p, const jfr_metadata *m, void *user) {
    (void)p;
    jrun *r = user;
    evjson_metadata(&r->ej, m);
    evjson_metadata(&r->ex, m);
    (void)evtext_metadata(&r->et, m);
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
    r->ex.stack_depth = depths[(r->events + 1) % 3];
    r->xob.len = 0;
    r->xob.failed = false;
    (void)evjson_event(&r->ex, e, &ev);
    if (!r->xob.failed)
        check_xml(r->xob.buf, r->xob.len, e->type->name);
    r->xob.len = 0;
    (void)evtext_event(&r->et, e, &ev);
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
    if (!ob_init(&r.tob, -1, JSON_BUF, NULL)) {
        ob_free(&r.ob);
        return 0;
    }
    evtext_init(&r.et, &r.tob, 5, size & 1, NULL);
    if (!ob_init(&r.xob, -1, JSON_BUF, NULL)) {
        ob_free(&r.ob);
        ob_free(&r.tob);
        return 0;
    }
    evjson_init(&r.ex, &r.xob, 5, false, NULL);
    r.ex.xml = true;
    r.ex.indent = 4;
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
    evtext_finish(&r.et);
    if (!r.tob.failed)
        check_utf8((const unsigned char *)r.tob.buf, r.tob.len);
    /* the block being filled is kept for the next events */
    size_t kept = 0;
    for (size_t i = 0; i < r.et.nblocks; i++)
        kept += r.et.blocks[i].data ? 1 : 0;
    if (r.et.nheap != 0 || kept > 1)
        fuzz_die("text: %zu events and %zu blocks still held after finish", r.et.nheap, kept);
    jfr_parser_free(p);
    fuzz_check_freed(&a);
    ob_free(&r.ob);
    evjson_free(&r.ej);
    ob_free(&r.tob);
    evtext_free(&r.et);
    ob_free(&r.xob);
    evjson_free(&r.ex);
    return 0;
}
