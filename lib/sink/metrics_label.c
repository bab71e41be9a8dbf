/*
 * metrics_label.c — a label of the Prometheus text exposition 0.0.4:
 * key="value", the value escaped (metrics.h). Below the registry, which
 * names the series by their labels, and the text, which writes them.
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#include "metrics.h"

#include <string.h>

/* Length of the valid UTF-8 sequence at s[0..n), 0 if invalid. */
static size_t utf8_len(const unsigned char *s, size_t n) {
    unsigned c = s[0];
    size_t k = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (!k || k > n || (k == 2 && c < 0xc2) || (k == 4 && c > 0xf4))
        return 0;
    for (size_t i = 1; i < k; i++)
        if ((s[i] & 0xc0) != 0x80)
            return 0;
    if (k == 3 && ((c == 0xe0 && s[1] < 0xa0) || (c == 0xed && s[1] >= 0xa0)))
        return 0; /* overlong; a surrogate (WTF-8) */
    if (k == 4 && ((c == 0xf0 && s[1] < 0x90) || (c == 0xf4 && s[1] >= 0x90)))
        return 0;
    return k;
}

/* A label value as the text format wants it: \\, \" and \n escaped, and
 * valid UTF-8 (anything else becomes U+FFFD). */
void metrics_put_label_value(jfrc_out *b, const char *s, size_t n) {
    jfrc_out_putc(b, '"');
    const unsigned char *u = (const unsigned char *)s;
    size_t i = 0;
    while (i < n) {
        size_t run = i;
        size_t k;
        while (i < n && u[i] != '\\' && u[i] != '"' && u[i] != '\n' &&
               (k = utf8_len(u + i, n - i)) != 0)
            i += k;
        jfrc_out_write(b, s + run, i - run);
        if (i == n)
            break;
        if (u[i] == '\\')
            jfrc_out_puts(b, "\\\\");
        else if (u[i] == '"')
            jfrc_out_puts(b, "\\\"");
        else if (u[i] == '\n')
            jfrc_out_puts(b, "\\n");
        else
            jfrc_out_puts(b, "\xef\xbf\xbd");
        i++;
    }
    jfrc_out_putc(b, '"');
}

void metrics_put_label(jfrc_out *b, bool *first, const char *key, const char *value) {
    if (!*first)
        jfrc_out_putc(b, ',');
    *first = false;
    jfrc_out_puts(b, key);
    jfrc_out_putc(b, '=');
    metrics_put_label_value(b, value, strlen(value));
}
