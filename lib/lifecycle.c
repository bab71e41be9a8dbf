/* The parser's public life cycle: jfr_parser_new, _reset and _free, which
 * add the parallel helpers (parallel.c) around the parser object
 * (parser.c). Worker parsers of the helpers are parser objects alone. */
#include "internal.h"

jfr_parser *jfr_parser_new(const jfr_options *opts, const jfr_callbacks *cb, void *user) {
    return jfr__parser_create(opts, cb, user); /* the helpers start on demand */
}

void jfr_parser_reset(jfr_parser *p) {
    if (!p)
        return;
    if (p->mt.par) { /* parallel: drop every preparation */
        jfr__par_release(p);
        jfr__par_quiesce(p);
    }
    jfr__parser_clear(p);
}

void jfr_parser_free(jfr_parser *p) {
    if (!p)
        return;
    jfr__par_free(p); /* parallel: join the helpers first */
    jfr__parser_destroy(p);
}
