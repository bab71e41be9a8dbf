/* Status names, and error reporting: every file that can fail reports
 * through jfr__fail, so it sits low (parser.c, dispatch.c and pool.c call
 * it alike). */
#include "internal.h"

#include <stdio.h>

unsigned jfr_version_number(void) { return JFR_VERSION_NUMBER; }
const char *jfr_version_string(void) { return JFR_VERSION_STRING; }

const char *jfr_status_name(jfr_status s) {
    switch (s) {
#define JFR_STATUS_NAME_(n, name, msg) case JFR_##name: return #name;
        JFR_STATUS_MAP(JFR_STATUS_NAME_)
#undef JFR_STATUS_NAME_
    }
    return NULL;
}

const char *jfr_status_str(jfr_status s) {
    switch (s) {
#define JFR_STATUS_STR_(n, name, msg) case JFR_##name: return msg;
        JFR_STATUS_MAP(JFR_STATUS_STR_)
#undef JFR_STATUS_STR_
    }
    return "unknown status";
}

bool jfr__fail(jfr_parser *p, jfr_status s, uint64_t offset, const char *fmt, ...) {
    char detail[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof detail, fmt, ap);
    va_end(ap);
    if (s == JFR_NOMEM && atomic_exchange(&p->memcap->hit, false)) {
        /* refused by max_memory, not by the system: say so */
        s = JFR_LIMIT;
        snprintf(p->err.msg, sizeof p->err.msg, "chunk %llu at byte %llu: %s: max_memory %llu bytes: %s",
                 (unsigned long long)p->info.index, (unsigned long long)offset,
                 jfr_status_str(s), (unsigned long long)p->memcap->limit, detail);
    } else {
        snprintf(p->err.msg, sizeof p->err.msg, "chunk %llu at byte %llu: %s: %s",
                 (unsigned long long)p->info.index, (unsigned long long)offset,
                 jfr_status_str(s), detail);
    }
    p->err.status = s;
    p->err.nerrors++;
    return false;
}

/* After an error: ask on_error whether to skip the chunk and go on. */
bool jfr__error_continue(jfr_parser *p) {
    return p->cb.on_error &&
           p->cb.on_error(p, p->err.status, p->err.msg, p->user) == JFR_CB_CONTINUE;
}

jfr_status jfr__fatal(jfr_parser *p) {
    p->state = ST_ERROR;
    return p->err.status;
}

/* An error that cannot be skipped (framing lost, no memory): on_error is
 * told all the same; its answer does not matter. */
jfr_status jfr__fatal_told(jfr_parser *p) {
    (void)jfr__error_continue(p);
    return jfr__fatal(p);
}
