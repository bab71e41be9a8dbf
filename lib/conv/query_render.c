/*
 * query_render.c — a query's rows as text (query_run.h): JDK 25's
 * FieldFormatter, TableSorter, TableRenderer, TableCell and FormRenderer.
 * Widths and cuts count UTF-16 units, as Java's String.length does.
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#include "query_run.h"

#include "jformat.h"
#include "mem.h"
#include "ticks.h" /* jfr__java_d2l */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---------------------------------------------------------------- sorting */


/* TableSorter.compareObjects */
static int compare_objects(const jv *a, const jv *b) {
    if (a->k == JV_NULL && b->k == JV_NULL)
        return 0;
    if (a->k == JV_NULL)
        return -1;
    if (b->k == JV_NULL)
        return 1;
    if (jq_is_number(a) && jq_is_number(b))
        return jq_jv_compare(a, b);
    if (jq_is_number(a))
        return 1;
    if (jq_is_number(b))
        return -1;
    bool ca = jq_jv_comparable(a), cb = jq_jv_comparable(b);
    if (ca && cb && a->k == b->k)
        return jq_jv_compare(a, b);
    if (ca)
        return 1;
    if (cb)
        return -1;
    return 0; /* the JDK falls back on identity hashes here */
}

typedef struct sorter {
    int index;
    int factor;
    bool lexical;
} sorter;

static int row_cmp(const void *a, const void *b, void *ctx) {
    const sorter *s = ctx;
    const qrow *x = a, *y = b;
    if (s->lexical)
        return s->factor * jfmt_utf16_compare(x->text[s->index], y->text[s->index]);
    return s->factor * compare_objects(&x->v[s->index], &y->v[s->index]);
}

static bool sort_rows(jq_run *r, const qfield *f, qorder order) {
    if (order == QO_NONE)
        order = (f->timespan || f->percentage) ? QO_DESC : QO_ASC;
    sorter s = {f->index, order == QO_DESC ? -1 : 1, f->lexical};
    return jq_stable_sort(r->ar.a, r->rows, r->nrows, sizeof *r->rows, row_cmp, &s);
}

static bool sort_table(jq_run *r) {
    if (!r->nfields)
        return true;
    const jq_query *q = &r->q;
    if (q->norder) {
        for (size_t k = q->norder; k-- > 0;)
            for (size_t i = 0; i < r->nfields; i++)
                if (r->fields[i]->orderer == (int)k &&
                    !sort_rows(r, r->fields[i], q->order[k].order))
                    return false;
        return true;
    }
    bool sorted = false;
    for (size_t i = 0; i < r->nfields; i++)
        if (r->fields[i]->agg != QA_MISSING) {
            const qfield *f = r->fields[i];
            if (!sort_rows(r, f, f->orderer < 0 ? QO_NONE : q->order[f->orderer].order))
                return false;
            sorted = true;
        }
    if (sorted)
        return true;
    for (size_t i = 0; i < r->nfields; i++)
        if (r->fields[i]->grouper && q->ngroup) {
            if (!sort_rows(r, r->fields[i], QO_NONE))
                return false;
            sorted = true;
        }
    if (sorted)
        return true;
    return sort_rows(r, r->fields[0], QO_NONE);
}

/* -------------------------------------------------------------- rendering */

typedef struct cell {
    const qfield *f;
    int64_t width, preferred;
    int height;     /* cell height */
    int truncate;   /* 0/1 beginning/2 end */
    /* lines of the current row */
    char **lines;
    size_t *lens;
    size_t nlines, cap;
} cell;

static size_t u16len(const char *s, size_t n) { return jfmt_utf16_length(s, n); }

static bool cell_line(jq_run *r, cell *c, const char *s, size_t n) {
    if (c->nlines == c->cap) {
        size_t nc = c->cap ? c->cap * 2 : 8;
        char **nl = jq_alloc(&r->ar, nc * sizeof *nl);
        size_t *ln = jq_alloc(&r->ar, nc * sizeof *ln);
        if (!nl || !ln)
            return false;
        if (c->nlines) {
            memcpy(nl, c->lines, c->nlines * sizeof *nl);
            memcpy(ln, c->lens, c->nlines * sizeof *ln);
        }
        c->lines = nl;
        c->lens = ln;
        c->cap = nc;
    }
    char *d = jq_strndup(&r->ar, s, n);
    if (!d)
        return false;
    c->lines[c->nlines] = d;
    c->lens[c->nlines++] = n;
    return true;
}

static int64_t content_width(const cell *c) { return c->width - 1; }
static int64_t content_size(const cell *c) { return c->height * content_width(c); }

/* TableCell.add: the text cut into lines of the content width, the last
 * padded. */
static bool cell_add(jq_run *r, cell *c, const char *s, size_t n) {
    int64_t cw = content_width(c), cs = content_size(c);
    size_t units = u16len(s, n);
    jq_fbuf b = {.r = r};
    for (int64_t index = 0; index < cs; index += cw) {
        int64_t end = index + cw;
        size_t from = jq_u16_offset(s, n, (size_t)index);
        if (end >= (int64_t)units) {
            b.n = 0;
            jq_fput(&b, s + from, n - from);
            int64_t have = (int64_t)units - index;
            for (int64_t k = have; k < cw; k++)
                jq_fput(&b, " ", 1);
            if (b.oom)
                return false;
            return cell_line(r, c, b.p, b.n);
        }
        size_t to = jq_u16_offset(s, n, (size_t)end);
        if (!cell_line(r, c, s + from, to - from))
            return false;
    }
    return true;
}

static bool cell_truncated(jq_run *r, cell *c, const char *s, size_t n, int64_t size, jq_fbuf *out) {
    (void)r;
    out->n = 0;
    if (size < 3) {
        jq_fput(out, "...", (size_t)(3 - size));
        return !out->oom;
    }
    int64_t keep = size - 3;
    size_t units = u16len(s, n);
    if (c->truncate == 1) {
        jq_fput(out, "...", 3);
        size_t from = jq_u16_offset(s, n, units - (size_t)keep);
        jq_fput(out, s + from, n - from);
    } else {
        size_t to = jq_u16_offset(s, n, (size_t)keep);
        jq_fput(out, s, to);
        jq_fput(out, "...", 3);
    }
    return !out->oom;
}

static bool cell_aligned(jq_run *r, cell *c, const char *s, size_t n) {
    jq_fbuf b = {.r = r};
    int64_t pad = content_width(c) - (int64_t)u16len(s, n);
    if (c->f->align_left)
        jq_fput(&b, s, n);
    for (int64_t k = 0; k < pad; k++)
        jq_fput(&b, " ", 1);
    if (!c->f->align_left)
        jq_fput(&b, s, n);
    jq_fput(&b, "", 0);
    return !b.oom && cell_add(r, c, b.p, b.n);
}

static bool cell_set(jq_run *r, cell *c, const char *s, size_t n) {
    c->nlines = 0;
    int64_t cs = content_size(c), units = (int64_t)u16len(s, n);
    if (units == cs)
        return cell_add(r, c, s, n);
    if (units >= cs) {
        jq_fbuf b = {.r = r};
        return cell_truncated(r, c, s, n, cs, &b) && cell_add(r, c, b.p, b.n);
    }
    if (units < content_width(c))
        return cell_aligned(r, c, s, n);
    return cell_add(r, c, s, n);
}

static bool cell_addline(jq_run *r, cell *c, const char *s, size_t n) {
    if ((int64_t)u16len(s, n) > content_width(c)) {
        jq_fbuf b = {.r = r};
        return cell_truncated(r, c, s, n, content_width(c), &b) && cell_add(r, c, b.p, b.n);
    }
    return cell_aligned(r, c, s, n);
}

static void print_cells(outbuf *o, cell *cells, size_t n) {
    size_t maxh = 0;
    for (size_t k = 0; k < n; k++)
        if (cells[k].nlines > maxh)
            maxh = cells[k].nlines;
    for (size_t row = 0; row < maxh; row++) {
        for (size_t k = 0; k < n; k++) {
            if (row < cells[k].nlines)
                ob_write(o, cells[k].lines[row], cells[k].lens[row]);
            else
                ob_fill(o, ' ', (size_t)content_width(&cells[k]));
            if (k + 1 < n)
                ob_putc(o, ' ');
        }
        ob_putc(o, '\n');
    }
}

static int cmp_str(const void *a, const void *b) {
    return jfmt_utf16_compare(*(char *const *)a, *(char *const *)b);
}

/* One row's cell (TableRenderer.setCellContent). */
static bool set_content(jq_run *r, cell *c, const qrow *row, int idx) {
    const char *text = row->text[idx];
    size_t tn = row->tlen[idx];
    const jv *v = &row->v[idx];
    if (c->height > 1) {
        const qlist *l = NULL;
        qlist frames;
        jv *fv = NULL;
        if (v->k == JV_OBJ && ((const qobj *)v->o)->kind == QK_STACK) {
            const qobj *st = v->o;
            fv = jq_alloc(&r->ar, (st->nframes ? st->nframes : 1) * sizeof *fv);
            if (!fv)
                return false;
            for (uint32_t k = 0; k < st->nframes; k++)
                fv[k] = st->frames[k] ? (jv){.k = JV_OBJ, .o = st->frames[k]} : (jv){0};
            frames.n = st->nframes;
            frames.v = fv;
            l = &frames;
        } else if (v->k == JV_LIST) {
            l = v->o;
        }
        if (l) {
            c->nlines = 0;
            for (size_t k = 0; k < l->n && (int)k < c->height; k++) {
                size_t n;
                const char *t = jq_format(r, c->f, &l->v[k], false, &n);
                if (t && (int64_t)u16len(t, n) > content_width(c))
                    t = jq_format(r, c->f, &l->v[k], true, &n);
                if (!t || !cell_addline(r, c, t, n))
                    return false;
            }
            /* the JDK returns at the cell's height before its sort */
            if (c->f->lexical && c->nlines > 1 && l->n <= (size_t)c->height) {
                /* Collections.sort of the lines, lengths follow */
                qsort(c->lines, c->nlines, sizeof *c->lines, cmp_str);
                for (size_t k = 0; k < c->nlines; k++)
                    c->lens[k] = strlen(c->lines[k]);
            }
            return true;
        }
    }
    if ((int64_t)u16len(text, tn) > content_size(c)) {
        size_t n;
        const char *t = jq_format(r, c->f, v, true, &n);
        return t && cell_set(r, c, t, n);
    }
    return cell_set(r, c, text, tn);
}

#define MAX_PREFERRED_WIDTH 120
#define MIN_PREFERRED_WIDTH 40
#define PREFERRED_WIDTH 80

static void distribute(cell *cells, size_t n, int64_t preferred, int64_t *width, int cond) {
    int64_t left = preferred - *width, last = -1;
    while (left > 0 && left != last) {
        last = left;
        for (size_t k = 0; k < n; k++) {
            const cell *c = &cells[k];
            bool ok = cond == 0 ? c->width < 2
                      : cond == 1 ? c->width < c->preferred
                      : cond == 2 ? !c->f->fixed_width : true;
            if (ok) {
                cells[k].width++;
                (*width)++;
                left--;
            }
        }
    }
}

static bool format_rows(jq_run *r, cell *cells, size_t ncells) {
    double *max = jq_alloc(&r->ar, (ncells ? ncells : 1) * sizeof *max);
    if (!max)
        return false;
    for (size_t k = 0; k < ncells; k++)
        if (cells[k].f->normalized)
            for (size_t i = 0; i < r->nrows; i++) {
                const jv *v = &r->rows[i].v[k];
                if (jq_is_number(v))
                    max[k] += v->k <= JV_LONG ? (double)v->i : v->d;
            }
    for (size_t i = 0; i < r->nrows; i++) {
        qrow *row = &r->rows[i];
        row->text = jq_alloc(&r->ar, r->nfields * sizeof *row->text);
        row->tlen = jq_alloc(&r->ar, r->nfields * sizeof *row->tlen);
        if (!row->text || !row->tlen)
            return false;
        for (size_t k = 0; k < r->nfields; k++) {
            const qfield *f = r->fields[k];
            jv v = row->v[k];
            if (f->normalized && jq_is_number(&v) && k < ncells) {
                double d = v.k <= JV_LONG ? (double)v.i : v.d;
                v = (jv){.k = JV_DOUBLE, .d = d / max[k]};

            }
            size_t n;
            const char *t = jq_format(r, f, &v, false, &n);
            if (!t)
                return false;
            row->text[k] = (char *)t;
            row->tlen[k] = n;
            if (k < ncells) {
                int64_t w = (int64_t)u16len(t, n) + 1;
                if (w > cells[k].preferred)
                    cells[k].preferred = w;
            }
        }
    }
    return true;
}

static bool is_experimental(const jq_run *r) {
    for (size_t k = 0; k < r->nfields; k++)
        if (r->fields[k]->visible)
            for (size_t j = 0; j < r->fields[k]->nsources; j++)
                if (r->fields[k]->sources[j]->type->experimental)
                    return true;
    return false;
}

int jq_render_table(jq_run *r, outbuf *o, const char *title, const jfrc_view_options *opt,
                    int64_t *width_out) {
    size_t ncells = 0;
    for (size_t k = 0; k < r->nfields; k++)
        if (r->fields[k]->visible)
            ncells++;
    *width_out = 0;
    if (!ncells || !r->nrows) {
        if (title)
            ob_printf(o, "\nNo events found for '%s'.\n", title);
        return 0;
    }
    int64_t cfg_width = opt ? opt->width : 0;
    if ((cfg_width && (int64_t)ncells * 2 > cfg_width) || (!cfg_width && ncells * 2 > MAX_PREFERRED_WIDTH)) {
        ob_puts(o, "\nToo many columns to fit width.\n");
        return 0;
    }
    cell *cells = jq_alloc(&r->ar, ncells * sizeof *cells);
    if (!cells)
        return -1;
    for (size_t k = 0, c = 0; k < r->nfields; k++)
        if (r->fields[k]->visible) {
            cells[c].f = r->fields[k];
            cells[c].truncate = opt && opt->truncate ? opt->truncate : r->fields[k]->truncate;
            cells[c].height = opt && opt->cell_height ? (int)opt->cell_height : r->fields[k]->cell_height;
            c++;
        }
    if (!format_rows(r, cells, ncells) || !sort_table(r))
        return -1;
    /* widths */
    int64_t limit = r->q.limit;
    for (size_t i = 0; i < r->nrows && (int64_t)i != limit; i++)
        for (size_t k = 0; k < ncells; k++) {
            int64_t w = (int64_t)u16len(r->rows[i].text[k], r->rows[i].tlen[k]) + 1;
            if (w > cells[k].preferred)
                cells[k].preferred = w;
        }
    bool verbose = opt && opt->verbose;
    for (size_t k = 0; k < ncells; k++) {
        int64_t hw = (int64_t)u16len(cells[k].f->label, strlen(cells[k].f->label));
        if (verbose) {
            int64_t nw = (int64_t)u16len(cells[k].f->name, strlen(cells[k].f->name)) + 2;
            if (nw > hw)
                hw = nw;
        }
        hw += 1;
        if (hw > cells[k].preferred)
            cells[k].preferred = hw;
    }
    int64_t preferred;
    if (!cfg_width) {
        int64_t p = 0;
        for (size_t k = 0; k < ncells; k++)
            p += cells[k].preferred;
        preferred = p > MAX_PREFERRED_WIDTH                          ? MAX_PREFERRED_WIDTH
                    : (p < MIN_PREFERRED_WIDTH && ncells < 3)        ? MIN_PREFERRED_WIDTH
                    : p < PREFERRED_WIDTH                            ? PREFERRED_WIDTH
                                                                     : p;
    } else {
        preferred = cfg_width;
    }
    int64_t width = 0;
    for (int cond = 0; cond < 4; cond++)
        distribute(cells, ncells, preferred, &width, cond);
    /* title */
    if (title) {
        char *t = NULL;
        size_t tl = strlen(title);
        if (is_experimental(r)) {
            t = jq_alloc(&r->ar, tl + 16);
            if (!t)
                return -1;
            snprintf(t, tl + 16, "%s (Experimental)", title);
            title = t;
            tl = strlen(t);
        }
        int64_t pos = width - (int64_t)u16len(title, tl);
        if (pos < 0)
            pos = 0;
        pos /= 2;
        ob_putc(o, '\n');
        ob_fill(o, ' ', (size_t)pos);
        ob_puts(o, title);
        ob_puts(o, "\n\n");
    }
    for (size_t k = 0; k < ncells; k++)
        if (!cell_set(r, &cells[k], cells[k].f->label, strlen(cells[k].f->label)))
            return -1;
    print_cells(o, cells, ncells);
    if (verbose) {
        for (size_t k = 0; k < ncells; k++) {
            size_t nl = strlen(cells[k].f->name);
            char *s = jq_alloc(&r->ar, nl + 3);
            if (!s)
                return -1;
            snprintf(s, nl + 3, "(%s)", cells[k].f->name);
            if (!cell_set(r, &cells[k], s, nl + 2))
                return -1;
        }
        print_cells(o, cells, ncells);
    }
    for (size_t k = 0; k < ncells; k++) {
        int64_t cw = content_width(&cells[k]);
        char *dash = jq_alloc(&r->ar, (size_t)(cw > 0 ? cw : 0) + 1);
        if (!dash)
            return -1;
        memset(dash, '-', (size_t)(cw > 0 ? cw : 0));
        if (!cell_set(r, &cells[k], dash, (size_t)(cw > 0 ? cw : 0)))
            return -1;
    }
    print_cells(o, cells, ncells);
    for (size_t i = 0; i < r->nrows && (int64_t)i != limit; i++) {
        for (size_t k = 0; k < ncells; k++)
            if (!set_content(r, &cells[k], &r->rows[i], (int)k))
                return -1;
        print_cells(o, cells, ncells);
    }
    *width_out = width;
    return 0;
}

int jq_render_form(jq_run *r, outbuf *o, const char *title, const jfrc_view_options *opt,
                   int64_t *width_out) {
    int64_t width = opt && opt->width ? opt->width : PREFERRED_WIDTH;
    *width_out = width;
    if (!r->nrows) {
        if (title)
            ob_printf(o, "\nNo events found for '%s'.\n", title);
        return 0;
    }
    int64_t maxw = 0;
    for (size_t k = 0; k < r->nfields; k++) {
        int64_t l = (int64_t)u16len(r->fields[k]->label, strlen(r->fields[k]->label)) + 2 + 1;
        if (l > maxw)
            maxw = l;
    }
    ob_putc(o, '\n');
    if (maxw + 2 > width) {
        ob_printf(o, "Columns are too wide to fit width %lld.\n", (long long)(opt ? opt->width : 0));
        return 0;
    }
    if (title) {
        ob_puts(o, title);
        ob_putc(o, '\n');
        ob_fill(o, '-', u16len(title, strlen(title)));
        ob_putc(o, '\n');
    }
    const qrow *row = &r->rows[0];
    for (size_t k = 0; k < r->nfields; k++) {
        const qfield *f = r->fields[k];
        if (!f->visible)
            continue;
        ob_putc(o, '\n');
        size_t n;
        const char *text = jq_format(r, f, &row->v[k], false, &n);
        if (!text)
            return -1;
        size_t ll = strlen(f->label);
        int64_t lu = (int64_t)u16len(f->label, ll) + 2;
        ob_puts(o, f->label);
        ob_puts(o, ": ");
        int64_t p = width - lu - 1;
        bool newline = false;
        size_t at = 0;
        for (int64_t i = 0; at < n; i++) {
            if (newline) {
                ob_fill(o, ' ', (size_t)lu);
                newline = false;
            }
            size_t nx = jq_u16_offset(text + at, n - at, 1);
            ob_write(o, text + at, nx);
            at += nx;
            if (p > 0 && i % p == p - 1) {
                newline = true;
                ob_putc(o, '\n');
            }
        }
        ob_putc(o, '\n');
    }
    return 0;
}
