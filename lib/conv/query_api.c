/*
 * query_api.c — jfrc_query (jfrstream_conv.h): a parsed query, its run and
 * the parser subscriptions that feed it.
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#include "query_run.h"

#include "../sized.h"
#include "mem.h"

#include <stdio.h>
#include <string.h>

int jq_render_table(jq_run *r, outbuf *o, const char *title, const jfrc_view_options *opt,
                    int64_t *width);
int jq_render_form(jq_run *r, outbuf *o, const char *title, const jfrc_view_options *opt,
                   int64_t *width);

struct jfrc_query {
    jfr_allocator alloc;
    jq_run run;
    jfrc_view_options opt;
    char *title;
    const char *view; /* the view's name, for the JDK's missing-event line */
    bool form, subscribed;
    bool type_title; /* title: the label of the first field's type */
};

JFRC_API jfrc_query *jfrc_query_new(const char *text, const char *title, bool form,
                                    const jfrc_view_options *opt, const jfr_allocator *a,
                                    char *err, size_t errlen) {
    const jfr_allocator zero = {0};
    if (!a)
        a = &zero;
    if (errlen)
        err[0] = 0;
    jfrc_query *q = jfr__calloc(a, sizeof *q);
    if (!q)
        return NULL;
    q->alloc = *a;
    q->opt.size = sizeof q->opt;
    if (opt && !jfr__sized_copy(&q->opt, sizeof q->opt, opt))
        q->opt = (jfrc_view_options)JFRC_VIEW_OPTIONS_INIT;
    q->form = form;
    if (jq_run_init(&q->run, &q->alloc)) {
        jfrc_query_free(q);
        return NULL;
    }
    q->run.since_nanos = q->opt.since_nanos;
    char msg[400];
    size_t pos = 0;
    size_t tn;
    if (title && !(q->title = jq_utf8_decoded(&q->run.ar, title, strlen(title), &tn))) {
        jfrc_query_free(q);
        return NULL;
    }
    if (jq_parse(&q->run.ar, text, strlen(text), &q->run.q, msg, sizeof msg, &pos)) {
        if (errlen && strcmp(msg, "out of memory") != 0) /* else err stays empty */
            snprintf(err, errlen, "position %zu: %s", pos, msg);
        jfrc_query_free(q);
        return NULL;
    }
    return q;
}

JFRC_API jfrc_query *jfrc_query_new_view(const char *name, const jfrc_view_options *opt,
                                         const jfr_allocator *a) {
    size_t n;
    const jq_view *v = jq_views(&n);
    for (size_t k = 0; v && k < n; k++)
        if (jq_iequal(v[k].name, name)) {
            jfrc_query *q = jfrc_query_new(v[k].query, v[k].label, v[k].form, opt, a, NULL, 0);
            if (q)
                q->view = v[k].name;
            return q;
        }
    return NULL;
}

JFRC_API jfrc_query *jfrc_query_new_type(const char *type, const jfrc_view_options *opt,
                                         const jfr_allocator *a) {
    size_t n = strlen(type);
    const jfr_allocator zero = {0};
    char *text = jfr__alloc(a ? a : &zero, n + 16);
    if (!text)
        return NULL;
    snprintf(text, n + 16, "SELECT * FROM %s", type);
    jfrc_query *q = jfrc_query_new(text, NULL, false, opt, a, NULL, 0);
    jfr__free(a ? a : &zero, text, n + 16);
    if (q)
        q->type_title = true;
    return q;
}

JFRC_API size_t jfrc_query_type_count(const jfrc_query *q) { return q->run.nftall; }

JFRC_API const char *jfrc_query_type_name(const jfrc_query *q, size_t i) {
    return i < q->run.nftall ? q->run.ftall[i]->name : NULL;
}

JFRC_API bool jfrc_query_failed(const jfrc_query *q) { return q->run.failed; }

JFRC_API bool jfrc_query_order_free_checked(const jfrc_query *q) {
    return q && q->run.resolved && !q->run.failed && q->run.order_free;
}

JFRC_API bool jfrc_query_order_free(const jfrc_query *q) {
    return jfrc_query_order_free_checked(q) && !q->run.order_checked;
}

JFRC_API bool jfrc_query_order_lost(const jfrc_query *q) { return q && jq_run_order_lost(&q->run); }

JFRC_API bool jfrc_query_set_file_order(jfrc_query *q, bool on) {
    jq_run *r = q ? &q->run : NULL;
    if (!jfrc_query_order_free_checked(q) || (r->any_call && !r->keyed))
        return false;
    r->keyed = true;
    r->file_order = on;
    r->any_file_order |= on;
    return true;
}

JFRC_API void jfrc_query_free(jfrc_query *q) {
    if (!q)
        return;
    jfr_allocator a = q->alloc;
    jq_run_free(&q->run);
    jfr__free(&a, q, sizeof *q);
}

static int on_type_event(jfr_parser *p, const jfr_event *e, void *user) {
    (void)p;
    qftype *ft = user;
    jq_run_event(ft->run, ft, e);
    return ft->run->failed ? JFR_CB_STOP : JFR_CB_CONTINUE;
}

JFRC_API jfr_status jfrc_query_resolve(jfrc_query *q, const jfr_metadata *m) {
    if (!q || !m)
        return JFR_INVALID_ARG;
    jq_run *r = &q->run;
    if (!r->resolved && !r->failed && jq_resolve(r, m))
        return strcmp(r->err, "out of memory") ? JFR_OK : JFR_NOMEM;
    return JFR_OK;
}

JFRC_API jfr_status jfrc_query_metadata(jfrc_query *q, jfr_parser *p, const jfr_metadata *m) {
    jq_run *r = &q->run;
    jfr_status s = jfrc_query_resolve(q, m);
    if (s || r->failed)
        return s;
    if (!q->subscribed) {
        for (size_t k = 0; k < r->ntypes; k++)
            if (jfr_parser_on(p, r->types[k]->name, on_type_event, r->types[k]) != JFR_OK)
                return JFR_NOMEM;
        q->subscribed = true;
    }
    jq_run_metadata(r, m);
    return JFR_OK;
}

JFRC_API jfr_status jfrc_query_render(jfrc_query *q, jfrc_out *o) {
    jq_run *r = &q->run;
    if (r->failed) {
        if (r->syntax_error)
            return JFR_INVALID_ARG;
        if (!strcmp(r->err, "out of memory"))
            return JFR_NOMEM;
        /* the JDK prints a missing type or field and goes on */
        ob_puts(o, r->err);
        ob_putc(o, '\n');
        if (q->view)
            ob_printf(o, "Missing event found for %s\n", q->view);
        return JFR_OK;
    }
    if (!r->resolved)
        return JFR_OK;
    if (jq_run_finish(r))
        return JFR_NOMEM;
    int64_t width = 0;
    if (q->type_title && !q->title && r->nfields) {
        /* QueryPrinter's title; TableRenderer may add "(Experimental)" again */
        const qftype *t = r->fields[0]->type;
        const char *l = t->label ? t->label : "null";
        size_t n = strlen(l) + 16;
        q->title = jq_alloc(&r->ar, n);
        if (!q->title)
            return JFR_NOMEM;
        snprintf(q->title, n, "%s%s", l, t->experimental ? " (Experimental)" : "");
    }
    int rc = q->form ? jq_render_form(r, o, q->title, &q->opt, &width)
                     : jq_render_table(r, o, q->title, &q->opt, &width);
    if (rc)
        return JFR_NOMEM;
    if (q->view && width && q->opt.verbose && r->nrows) {
        ob_putc(o, '\n');
        if (!jq_print_wrapped(&r->q, o, width, &r->ar))
            return JFR_NOMEM;
    }
    return JFR_OK;
}

JFRC_API void jfrc_query_text(const jfrc_query *q, jfrc_out *o) { jq_print(&q->run.q, o); }

JFRC_API bool jfrc_query_is_view(const jfrc_query *q) { return q->view != NULL; }

JFRC_API const char *jfrc_query_error(const jfrc_query *q) { return q->run.err; }

JFRC_API uint64_t jfrc_query_memory(const jfrc_query *q) { return q->run.ar.bytes; }

JFRC_API size_t jfrc_view_count(void) {
    size_t n;
    return jq_views(&n) ? n : 0;
}

JFRC_API bool jfrc_view_info(size_t i, const char **category, const char **name,
                             const char **label, const char **query) {
    size_t n;
    const jq_view *v = jq_views(&n);
    if (!v || i >= n)
        return false;
    if (category)
        *category = v[i].category;
    if (name)
        *name = v[i].name;
    if (label)
        *label = v[i].label;
    if (query)
        *query = v[i].query;
    return true;
}
