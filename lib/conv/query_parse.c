/*
 * query_parse.c — reading and printing queries (query.h), and views.ini.
 *
 * The tokenizer is the JDK's (jdk.jfr.internal.util.Tokenizer), whose
 * quirks decide what parses: a keyword is accepted when the input merely
 * starts with it, case-insensitively ("ASC" also accepts "ASCII"), a quote
 * may open anywhere inside a token and runs to the next same quote, and
 * separators end tokens. Positions are UTF-16 indexes, as the JDK's.
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#include "query.h"

#include "jformat.h"
#include "mem.h"
#include "views_ini.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const jq_agg_names[QA_N] = {
    " ", "AVG", "COUNT", "DIFF", "FIRST", "LAST", "LIST", "SET", "MAX", "MEDIAN", "MIN",
    "P90", "P95", "P99", "P999", "STDEV", "SUM", "UNIQUE", "LAST_BATCH"};
/* The enum constants' names, which Query.toString prints. */
static const char *const agg_enum_names[QA_N] = {
    "MISSING", "AVERAGE", "COUNT", "DIFFERENCE", "FIRST", "LAST", "LIST", "SET", "MAXIMUM",
    "MEDIAN", "MINIMUM", "P90", "P95", "P99", "P999", "STANDARD_DEVIATION", "SUM", "UNIQUE",
    "LAST_BATCH"};

/* ------------------------------------------------------------------ arena */

typedef struct jq_block {
    struct jq_block *next;
    size_t cap;
} jq_block;

void *jq_alloc(jq_arena *ar, size_t n) {
    n = (n + 7) & ~(size_t)7;
    if (!ar->head || ar->cap - ar->used < n) {
        size_t cap = n > 65536 - sizeof(jq_block) ? n : 65536 - sizeof(jq_block);
        jq_block *b = jfr__alloc(ar->a, sizeof(jq_block) + cap);
        if (!b)
            return NULL;
        b->next = ar->head;
        b->cap = cap;
        ar->head = b;
        ar->used = 0;
        ar->cap = cap;
        ar->bytes += sizeof(jq_block) + cap;
    }
    void *p = (char *)(ar->head + 1) + ar->used;
    ar->used += n;
    memset(p, 0, n);
    return p;
}

char *jq_strndup(jq_arena *ar, const char *s, size_t n) {
    char *d = jq_alloc(ar, n + 1);
    if (d && n)
        memcpy(d, s, n);
    return d;
}

void jq_arena_free(jq_arena *ar) {
    for (jq_block *b = ar->head, *n; b; b = n) {
        n = b->next;
        jfr__free(ar->a, b, sizeof(jq_block) + b->cap);
    }
    ar->head = NULL;
    ar->used = ar->cap = 0;
    ar->bytes = 0;
}

/* ------------------------------------------------------------ UTF-16 text */

int32_t jq_java_string_hash(const char *s, size_t len) {
    jfmt_u16_iter it;
    jfmt_u16_init(&it, s, len, false);
    uint32_t h = 0;
    for (int u; (u = jfmt_u16_next(&it)) >= 0;)
        h = 31 * h + (uint32_t)u;
    return (int32_t)h;
}

size_t jq_u16_offset(const char *s, size_t len, size_t units) {
    size_t i = 0;
    while (i < len && units > 0) {
        unsigned char c = (unsigned char)s[i];
        size_t n = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
        if (n == 4) {
            if (units == 1) /* inside a surrogate pair: the JDK cuts it; we keep it */
                return i + 4 > len ? len : i + 4;
            units -= 2;
        } else {
            units--;
        }
        i += n;
    }
    return i > len ? len : i;
}

/* -------------------------------------------------------------- tokenizer */

typedef struct tok {
    const char *s;
    size_t n, i;
    const char *seps;
    jq_arena *ar;
    char *msg;
    size_t msglen;
    size_t *pos;
    bool failed;
} tok;

static bool is_ws(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v' ||
           (c >= 0x1c && c <= 0x1f);
}
static bool is_sep(const tok *t, char c) { return c && strchr(t->seps, c) != NULL; }
static void skip_ws(tok *t) {
    while (t->i < t->n && is_ws(t->s[t->i]))
        t->i++;
}

static size_t u16_pos(const tok *t, size_t byte) {
    return jfmt_utf16_length(t->s, byte);
}

__attribute__((format(printf, 3, 4))) static int fail_at(tok *t, size_t byte, const char *fmt, ...) {
    if (!t->failed) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(t->msg, t->msglen, fmt, ap);
        va_end(ap);
        *t->pos = u16_pos(t, byte);
        t->failed = true;
    }
    return -1;
}

static bool accept(tok *t, const char *m) {
    skip_ws(t);
    size_t k = 0, mn = strlen(m);
    while (t->i + k < t->n && k < mn) {
        char c = (char)tolower((unsigned char)t->s[t->i + k]);
        char d = (char)tolower((unsigned char)m[k]);
        if (c != d)
            return false;
        k++;
        if (is_sep(t, c))
            break;
    }
    if (k == mn) {
        t->i += mn;
        return true;
    }
    return false;
}

static bool accept2(tok *t, const char *a, const char *b) {
    size_t at = t->i;
    if (accept(t, a) && accept(t, b))
        return true;
    t->i = at;
    return false;
}

static bool has_next(const tok *t) {
    for (size_t k = t->i; k < t->n; k++)
        if (!is_ws(t->s[k]))
            return true;
    return false;
}

static int expect(tok *t, const char *m) {
    if (!accept(t, m))
        return fail_at(t, t->i, "Expected %s", m);
    return 0;
}

/* peekChar: -1 (and the error) at the end. */
static int peek(tok *t) {
    skip_ws(t);
    if (t->i < t->n)
        return (unsigned char)t->s[t->i];
    return fail_at(t, t->i, "Unexpected EOF reached");
}

/* next(): the token, quotes removed, in the arena (NULL on error). */
static char *next(tok *t) {
    skip_ws(t);
    char *buf = jq_alloc(t->ar, t->n - t->i + 2);
    if (!buf) {
        fail_at(t, t->i, "out of memory");
        return NULL;
    }
    size_t bn = 0;
    while (t->i < t->n) {
        char c = t->s[t->i];
        if (c == '\'' || c == '"') {
            size_t p = t->i + 1;
            while (p < t->n && t->s[p] != c)
                p++;
            if (p >= t->n) {
                fail_at(t, t->i, "Could not find match %c", c);
                return NULL;
            }
            memcpy(buf + bn, t->s + t->i + 1, p - t->i - 1);
            bn += p - t->i - 1;
            t->i = p;
        } else {
            if (is_sep(t, c)) {
                if (bn == 0) {
                    t->i++;
                    buf[0] = c;
                    buf[1] = 0;
                    return buf;
                }
                buf[bn] = 0;
                return buf;
            }
            if (is_ws(c)) {
                buf[bn] = 0;
                return buf;
            }
            buf[bn++] = c;
        }
        t->i++;
    }
    if (bn == 0) {
        fail_at(t, t->i, "Unexpected EOF reached");
        return NULL;
    }
    buf[bn] = 0;
    return buf;
}

/* -------------------------------------------------------------- the parser */

/* Growable arena arrays: a small linked-free approach, doubling copies. */
#define PUSH(t, arr, n, cap, val)                                                          \
    do {                                                                                   \
        if ((n) == (cap)) {                                                                \
            size_t nc_ = (cap) ? 2 * (cap) : 4;                                            \
            void *na_ = jq_alloc((t)->ar, nc_ * sizeof *(arr));                            \
            if (!na_)                                                                      \
                return fail_at((t), (t)->i, "out of memory");                             \
            if (n)                                                                         \
                memcpy(na_, (arr), (n) * sizeof *(arr));                                   \
            (arr) = na_;                                                                   \
            (cap) = nc_;                                                                   \
        }                                                                                  \
        (arr)[(n)++] = (val);                                                              \
    } while (0)

static int text(tok *t, char **out) {
    int c = peek(t);
    if (c < 0)
        return -1;
    if (c != '\'')
        return fail_at(t, t->i, "Expected text to start with a single quote character");
    *out = next(t);
    return *out ? 0 : -1;
}

/* Character.isJavaIdentifierStart / Part for the ASCII range; other
 * characters (UTF-8 bytes) are letters to the JDK in practice. */
static bool jid_start(unsigned char c) { return isalpha(c) || c == '_' || c == '$' || c >= 0x80; }
static bool jid_part(unsigned char c) { return jid_start(c) || isdigit(c) || c == 0 || (c >= 1 && c <= 8) || (c >= 0x0e && c <= 0x1b) || c == 0x7f; }

static int event_field(tok *t, char **out) {
    if (!has_next(t))
        return fail_at(t, t->i, "Unexpected end when looking for event field");
    int c = peek(t);
    if (c < 0)
        return -1;
    if (c == '\'')
        return fail_at(t, t->i, "Expected unquoted symbolic name (not label)");
    char *name = next(t);
    if (!name)
        return -1;
    if (strcmp(name, "*") != 0)
        for (size_t k = 0; name[k]; k++) {
            unsigned char ch = (unsigned char)name[k];
            bool valid = k == 0 ? jid_start(ch) : jid_part(ch);
            if (ch != '.' && ch != '[' && ch != ']' && ch != '|' && !valid)
                return fail_at(t, t->i, "Not a valid field name: %s", name);
        }
    *out = name;
    return 0;
}

static int symbol(tok *t, char **out) {
    char *s = next(t);
    if (!s)
        return -1;
    for (size_t k = 0; s[k]; k++) {
        unsigned char ch = (unsigned char)s[k];
        if (!isalpha(ch) && ch < 0x80)
            return fail_at(t, t->i, "Symbol must consist of letters, found '%c' in '%s'", ch, s);
    }
    *out = s;
    return 0;
}

static int alias(tok *t, char **out) {
    *out = NULL;
    if (accept(t, "AS"))
        return symbol(t, out);
    return 0;
}

static int parse_int(const char *s, int64_t *v) {
    /* Integer.parseInt: optional sign, decimal digits, within int range */
    size_t k = 0;
    bool neg = false;
    if (s[0] == '-' || s[0] == '+') {
        neg = s[0] == '-';
        k = 1;
    }
    if (!s[k])
        return -1;
    int64_t r = 0;
    for (; s[k]; k++) {
        if (s[k] < '0' || s[k] > '9')
            return -1;
        r = r * 10 + (s[k] - '0');
        if (r > 2147483648LL)
            return -1;
    }
    if (neg)
        r = -r;
    if (r > 2147483647LL || r < -2147483648LL)
        return -1;
    *v = r;
    return 0;
}

static int property(tok *t, qprop *p) {
    char *s = next(t);
    if (!s)
        return -1;
    memset(p, 0, sizeof *p);
    p->text = s;
    size_t n = strlen(s);
    char *low = jq_strndup(t->ar, s, n);
    if (!low)
        return fail_at(t, t->i, "out of memory");
    for (size_t k = 0; k < n; k++)
        low[k] = (char)tolower((unsigned char)low[k]);
    if (!strcmp(low, "none") || !strcmp(low, "missing:")) {
        p->kind = QP_NONE;
    } else if (!strcmp(low, "normalized")) {
        p->kind = QP_NORMALIZED;
    } else if (!strcmp(low, "truncate-beginning")) {
        p->kind = QP_TRUNC_BEGIN;
    } else if (!strcmp(low, "truncate-end")) {
        p->kind = QP_TRUNC_END;
    } else if (!strncmp(s, "missing:", 8)) {
        p->kind = QP_MISSING;
        p->missing = !strcmp(s + 8, "whitespace") ? s + n : s + 8;
    } else if (!strncmp(s, "cell-height:", 12)) {
        int64_t h;
        if (parse_int(s + 12, &h))
            return fail_at(t, t->i, "Not valid number for 'cell-height:' %s", s + 12);
        if (h < 1)
            return fail_at(t, t->i, "Expected 'cell-height:' to be at least 1' ");
        p->kind = QP_CELL_HEIGHT;
        p->value = (int)h;
    } else if (!strncmp(s, "ms-precision:", 13)) {
        int64_t d;
        if (parse_int(s + 13, &d))
            return fail_at(t, t->i, "Not valid number for 'precision:' %s", s + 13);
        if (d < 0)
            return fail_at(t, t->i, "Expected 'precision:' to be at least 0' ");
        p->kind = QP_PRECISION;
        p->value = (int)d;
    } else {
        return fail_at(t, t->i, "Unknown formatter '%s'", s);
    }
    return 0;
}

static int formatter(tok *t, qformat *f) {
    size_t cap = 0;
    qprop p;
    if (property(t, &p))
        return -1;
    PUSH(t, f->props, f->nprops, cap, p);
    while (accept(t, ";")) {
        if (property(t, &p))
            return -1;
        PUSH(t, f->props, f->nprops, cap, p);
    }
    return 0;
}

static int expression(tok *t, qexpr *e) {
    memset(e, 0, sizeof *e);
    for (int a = 0; a < QA_N; a++)
        if (accept2(t, jq_agg_names[a], "(")) {
            if (event_field(t, &e->name) || expect(t, ")"))
                return -1;
            e->agg = (qagg)a;
            return alias(t, &e->alias);
        }
    if (event_field(t, &e->name))
        return -1;
    e->agg = QA_MISSING;
    return alias(t, &e->alias);
}

bool jq_iequal(const char *a, const char *b) {
    if (!a || !b)
        return false;
    for (; *a && *b; a++, b++)
        if (tolower((unsigned char)*a) != tolower((unsigned char)*b))
            return false;
    return *a == *b;
}

static int parse_query(tok *t, jq_query *q) {
    size_t cap;
    memset(q, 0, sizeof *q);
    q->limit = INT32_MAX;
    if (accept(t, "COLUMN")) {
        cap = 0;
        char *s = NULL;
        if (text(t, &s))
            return -1;
        PUSH(t, q->column, q->ncolumn, cap, s);
        while (accept(t, ",")) {
            if (text(t, &s))
                return -1;
            PUSH(t, q->column, q->ncolumn, cap, s);
        }
    }
    if (accept(t, "FORMAT")) {
        cap = 0;
        do {
            qformat f = {0};
            if (formatter(t, &f))
                return -1;
            PUSH(t, q->format, q->nformat, cap, f);
        } while (accept(t, ","));
    }
    if (expect(t, "SELECT"))
        return -1;
    if (!accept(t, "*")) {
        if (accept(t, "FROM"))
            return fail_at(t, t->i, "Missing fields in SELECT statement");
        cap = 0;
        qexpr e;
        if (expression(t, &e))
            return -1;
        PUSH(t, q->select, q->nselect, cap, e);
        while (accept(t, ",")) {
            if (expression(t, &e))
                return -1;
            if (jq_iequal(e.name, "FROM"))
                return fail_at(t, t->i,
                               "Missing field name in SELECT statement, or qualify field with "
                               "event type if name is called '%s'",
                               e.name);
            PUSH(t, q->select, q->nselect, cap, e);
        }
    }
    if (expect(t, "FROM"))
        return -1;
    cap = 0;
    do {
        qsource s = {0};
        s.name = next(t);
        if (!s.name)
            return -1;
        if (accept(t, "SELECT"))
            return fail_at(t, t->i, "Subquery is not allowed");
        /* the JDK accepts the five words in sequence only */
        size_t at = t->i;
        if (accept(t, "INNER") && accept(t, "JOIN") && accept(t, "LEFT") && accept(t, "RIGHT") &&
            accept(t, "FULL"))
            return fail_at(t, t->i, "JOIN is not allowed");
        t->i = at;
        if (alias(t, &s.alias))
            return -1;
        PUSH(t, q->from, q->nfrom, cap, s);
    } while (accept(t, ","));
    if (accept(t, "WHERE")) {
        cap = 0;
        do {
            qcond c;
            if (event_field(t, &c.field))
                return -1;
            static const char *const ops[] = {"<", ">", "<>", ">=", "<=", "==", "BETWEEN", "LIKE", "IN"};
            for (size_t k = 0; k < sizeof ops / sizeof *ops; k++)
                if (accept(t, ops[k]))
                    return fail_at(t, t->i, "The only operator allowed in WHERE clause is '='");
            if (expect(t, "=") || text(t, &c.value))
                return -1;
            PUSH(t, q->where, q->nwhere, cap, c);
        } while (accept(t, "AND"));
    }
    if (accept(t, "HAVING"))
        return fail_at(t, t->i, "HAVING is not allowed");
    if (accept(t, "GROUP")) {
        if (expect(t, "BY"))
            return -1;
        cap = 0;
        do {
            char *g = NULL;
            if (event_field(t, &g))
                return -1;
            PUSH(t, q->group, q->ngroup, cap, g);
        } while (accept(t, ","));
    }
    if (accept(t, "ORDER")) {
        if (expect(t, "BY"))
            return -1;
        cap = 0;
        do {
            qorderel o;
            if (event_field(t, &o.name))
                return -1;
            o.order = accept(t, "ASC") ? QO_ASC : accept(t, "DESC") ? QO_DESC : QO_NONE;
            PUSH(t, q->order, q->norder, cap, o);
        } while (accept(t, ","));
    }
    if (accept(t, "LIMIT")) {
        int64_t v;
        char *num = has_next(t) ? next(t) : NULL;
        if (t->failed)
            return -1;
        if (!num || parse_int(num, &v))
            return fail_at(t, t->i, "Expected an integer after LIMIT");
        if (v < 0)
            return fail_at(t, t->i, "Expected a positive integer after LIMIT");
        q->limit = v;
    }
    skip_ws(t);
    if (t->i != t->n) {
        char *s = next(t);
        if (!s)
            return -1;
        return fail_at(t, t->i, "Unexpected token '%s' found", s);
    }
    return 0;
}

/* The text as Java decodes a command-line argument: each malformed UTF-8
 * sequence becomes U+FFFD (NULL when out of memory). */
char *jq_utf8_decoded(jq_arena *ar, const char *s, size_t n, size_t *out_len) {
    char *d = jq_alloc(ar, 3 * n + 1);
    if (!d)
        return NULL;
    size_t o = 0;
    for (size_t i = 0; i < n;) {
        unsigned char c = (unsigned char)s[i];
        size_t len = c < 0x80 ? 1 : (c >= 0xC2 && c < 0xE0) ? 2 : (c >= 0xE0 && c < 0xF0) ? 3
                                                                 : (c >= 0xF0 && c < 0xF5) ? 4 : 0;
        bool ok = len && i + len <= n;
        for (size_t k = 1; ok && k < len; k++)
            ok = ((unsigned char)s[i + k] & 0xC0) == 0x80;
        if (ok && len == 3) { /* overlong and surrogate forms */
            unsigned char c1 = (unsigned char)s[i + 1];
            ok = !(c == 0xE0 && c1 < 0xA0) && !(c == 0xED && c1 >= 0xA0);
        }
        if (ok && len == 4) {
            unsigned char c1 = (unsigned char)s[i + 1];
            ok = !(c == 0xF0 && c1 < 0x90) && !(c == 0xF4 && c1 >= 0x90);
        }
        if (!ok) {
            memcpy(d + o, "\xEF\xBF\xBD", 3);
            o += 3;
            i++;
            continue;
        }
        memcpy(d + o, s + i, len);
        o += len;
        i += len;
    }
    d[o] = 0;
    *out_len = o;
    return d;
}

int jq_parse(jq_arena *ar, const char *text_, size_t len, jq_query *q, char *msg, size_t msglen,
             size_t *pos) {
    size_t dummy;
    text_ = jq_utf8_decoded(ar, text_, len, &len);
    if (!text_) {
        snprintf(msg, msglen, "out of memory");
        if (pos)
            *pos = 0;
        return -1;
    }
    tok t = {text_, len, 0, "=,;()", ar, msg, msglen, pos ? pos : &dummy, false};
    if (msglen)
        msg[0] = 0;
    return parse_query(&t, q) || t.failed ? -1 : 0;
}

/* ---------------------------------------------------------------- printing */

void jq_print(const jq_query *q, outbuf *o) {
    if (q->ncolumn) {
        ob_puts(o, "COLUMN ");
        for (size_t k = 0; k < q->ncolumn; k++) {
            if (k)
                ob_puts(o, ", ");
            ob_putc(o, '\'');
            ob_puts(o, q->column[k]);
            ob_putc(o, '\'');
        }
        ob_putc(o, ' ');
    }
    if (q->nformat) {
        ob_puts(o, "FORMAT ");
        for (size_t k = 0; k < q->nformat; k++) {
            if (k)
                ob_puts(o, ", ");
            for (size_t j = 0; j < q->format[k].nprops; j++) {
                if (j)
                    ob_putc(o, ';');
                ob_puts(o, q->format[k].props[j].text);
            }
        }
        ob_putc(o, ' ');
    }
    ob_puts(o, "SELECT ");
    if (!q->nselect)
        ob_putc(o, '*');
    for (size_t k = 0; k < q->nselect; k++) {
        const qexpr *e = &q->select[k];
        if (k)
            ob_puts(o, ", ");
        if (e->agg != QA_MISSING) {
            ob_puts(o, agg_enum_names[e->agg]);
            ob_putc(o, '(');
        }
        ob_puts(o, e->name);
        if (e->agg != QA_MISSING)
            ob_putc(o, ')');
        if (e->alias) {
            ob_puts(o, " AS ");
            ob_puts(o, e->alias);
        }
    }
    ob_puts(o, " FROM ");
    for (size_t k = 0; k < q->nfrom; k++) {
        if (k)
            ob_puts(o, ", ");
        ob_puts(o, q->from[k].name);
        if (q->from[k].alias) {
            ob_puts(o, " AS ");
            ob_puts(o, q->from[k].alias);
        }
    }
    if (q->nwhere) {
        ob_puts(o, " WHERE");
        for (size_t k = 0; k < q->nwhere; k++) {
            if (k)
                ob_puts(o, " AND");
            ob_putc(o, ' ');
            ob_puts(o, q->where[k].field);
            ob_puts(o, " = '");
            ob_puts(o, q->where[k].value);
            ob_putc(o, '\'');
        }
    }
    if (q->ngroup) {
        ob_puts(o, " GROUP BY ");
        for (size_t k = 0; k < q->ngroup; k++) {
            if (k)
                ob_puts(o, ", ");
            ob_puts(o, q->group[k]);
        }
    }
    if (q->norder) {
        ob_puts(o, " ORDER BY ");
        for (size_t k = 0; k < q->norder; k++) {
            if (k)
                ob_puts(o, ", ");
            ob_puts(o, q->order[k].name);
            if (q->order[k].order == QO_ASC)
                ob_puts(o, " ASC");
            if (q->order[k].order == QO_DESC)
                ob_puts(o, " DESC");
        }
    }
    if (q->limit != INT32_MAX)
        ob_printf(o, " LIMIT %lld", (long long)q->limit);
}

/* ViewPrinter.printQuery: tokens of the printed query (separators '=' and
 * ','; quoted texts get their quotes back) laid out by its LineBuilder. */
bool jq_print_wrapped(const jq_query *q, outbuf *o, int64_t width, jq_arena *ar) {
    outbuf tmp;
    if (!ob_init(&tmp, -1, 256, ar->a))
        return false;
    tmp.grow = true; /* a memory buffer */
    jq_print(q, &tmp);
    size_t len = tmp.len;
    char msg[8];
    size_t pos;
    tok t = {tmp.buf, len, 0, "=,", ar, msg, sizeof msg, &pos, false};
    int64_t position = 0;
    bool ok = !tmp.failed;
    while (ok && has_next(&t)) {
        int c = peek(&t);
        char *s = next(&t);
        char *piece = s ? jq_alloc(ar, strlen(s) + 4) : NULL;
        if (!piece) {
            ok = false;
            break;
        }
        size_t sn = strlen(s);
        size_t pn = 0;
        bool comma = !strcmp(s, ",") || !strcmp(s, ";");
        if (!comma && position != 0)
            piece[pn++] = ' ';
        size_t orig_at = pn;
        if (c == '\'')
            piece[pn++] = '\'';
        memcpy(piece + pn, s, sn); // NOLINT(bugprone-not-null-terminated-result): piece is zeroed, room for its NUL
        pn += sn;
        if (c == '\'')
            piece[pn++] = '\'';
        int64_t plen = (int64_t)jfmt_utf16_length(piece, pn);
        if (plen > width) {
            /* character by character, a new line every width units */
            jfmt_u16_iter it;
            jfmt_u16_init(&it, piece, pn, false);
            size_t at = 0;
            while (at < pn) {
                if (position % width == 0 && position != 0)
                    ob_putc(o, '\n');
                size_t nx = jq_u16_offset(piece + at, pn - at, 1);
                ob_write(o, piece + at, nx);
                at += nx;
                position++;
            }
            continue;
        }
        if (plen + position > width) {
            ob_putc(o, '\n');
            position = 0;
            memmove(piece, piece + orig_at, pn - orig_at);
            pn -= orig_at;
            plen = (int64_t)jfmt_utf16_length(piece, pn);
        }
        ob_write(o, piece, pn);
        position += plen;
    }
    ob_putc(o, '\n');
    ob_free(&tmp);
    return ok;
}

/* -------------------------------------------------------------- views.ini */

static jq_view *g_views;
static size_t g_nviews;

const jq_view *jq_views(size_t *n) {
    /* parsed into static storage once; the text is compiled in */
    if (!g_views) {
        static jq_view views[128];
        static char text[sizeof views_ini];
        memcpy(text, views_ini, sizeof views_ini);
        size_t nv = 0;
        char *query_end = NULL;
        for (char *line = text; line && *line;) {
            char *nl = strchr(line, '\n');
            if (nl)
                *nl = 0;
            if (!strncmp(line, "view ", 5) && nv < sizeof views / sizeof *views) {
                if (query_end)
                    *query_end = 0;
                jq_view *v = &views[nv++];
                char *full = line + 5, *sp = strchr(full, ' ');
                char *kind = sp ? sp + 1 : NULL, *sp2 = kind ? strchr(kind, ' ') : NULL;
                char *dot = NULL;
                for (char *c = full; sp && c < sp; c++)
                    if (*c == '.')
                        dot = c;
                if (!sp2 || !dot) { /* not a view line: views.ini is ours, never */
                    nv--;
                    line = nl ? nl + 1 : NULL;
                    continue;
                }
                *sp = 0;
                *sp2 = 0;
                v->label = sp2 + 1;
                v->form = !strcmp(kind, "form");
                *dot = 0;
                v->category = full;
                v->name = dot + 1;
                v->query = NULL;
                query_end = NULL;
            } else if (line[0] == ' ' && nv) {
                jq_view *v = &views[nv - 1];
                char *q = line;
                while (*q == ' ')
                    q++;
                if (!v->query) {
                    v->query = q;
                } else {
                    /* join to the previous query line with a newline */
                    size_t ql = strlen(q);
                    memmove(query_end + 1, q, ql + 1);
                    *query_end = '\n';
                    q = query_end + 1;
                }
                query_end = q + strlen(q);
            }
            line = nl ? nl + 1 : NULL;
        }
        g_nviews = nv;
        g_views = views;
    }
    *n = g_nviews;
    return g_views;
}
