/*
 * jformat_xml.c — strings escaped as the JDK's XMLWriter escapes them (see
 * jformat.h): `jfr print --xml`.
 *
 * Written from the observed output of JDK 25's `jfr print --xml`.
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#include "jformat.h"

#include <string.h>

static void xml_unit(outbuf *o, unsigned u) {
    switch (u) {
    case '"': ob_write(o, "&quot;", 6); return;
    case '&': ob_write(o, "&amp;", 5); return;
    case '\'': ob_write(o, "&apos;", 6); return;
    case '<': ob_write(o, "&lt;", 4); return;
    case '>': ob_write(o, "&gt;", 4); return;
    default: break;
    }
    if (u > 0x7F) {
        ob_write(o, "&#", 2);
        ob_u64(o, u);
        ob_putc(o, ';');
        return;
    }
    ob_putc(o, (char)u);
}

void jfmt_xml_char(outbuf *o, uint32_t unit) { xml_unit(o, unit & 0xFFFF); }

/* An ASCII byte written as it is. */
static bool xml_plain(unsigned char c) {
    return c < 0x80 && c != '"' && c != '&' && c != '\'' && c != '<' && c != '>';
}

void jfmt_xml_string(outbuf *o, const char *s, size_t len, bool java_utf8) {
    size_t i = 0;
    while (i < len) {
        size_t j = i;
        while (j < len && xml_plain((unsigned char)s[j]))
            j++;
        ob_write(o, s + i, j - i);
        if (j == len)
            return;
        if ((unsigned char)s[j] < 0x80) {
            xml_unit(o, (unsigned char)s[j]);
            i = j + 1;
            continue;
        }
        /* one character (one or two units, or U+FFFD for a malformed run) */
        jfmt_u16_iter it;
        jfmt_u16_init(&it, s + j, len - j, java_utf8);
        xml_unit(o, (unsigned)jfmt_u16_next(&it));
        if (it.pending >= 0)
            xml_unit(o, (unsigned)jfmt_u16_next(&it));
        i = (size_t)((const char *)it.p - s);
    }
}

void jfmt_xml_chars(outbuf *o, const char *s, size_t len) {
    const unsigned char *p = (const unsigned char *)s, *end = p + len;
    while (p < end) {
        size_t n = 1;
        unsigned u = *p < 0x80 ? *p : jfmt__varint_unit(p, end, &n);
        xml_unit(o, u);
        p += n;
    }
}
