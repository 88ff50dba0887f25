/* result.c -- a pool's kind-specific result rows, and a run's family rows (result.h). */
#include "core/result.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The texts of name rows, kept for the life of the process: a result outlives
 * the stations and configuration whose strings it names (a cost model's
 * coefficients live in its pool's configuration), so each distinct text is
 * copied once here and the rows point at the copy. */
static char **texts;
static size_t ntexts, captexts;

/* The process's copy of S, or NULL when out of memory. */
static const char *intern(const char *s)
{
    for (size_t i = 0; i < ntexts; i++)
        if (!strcmp(texts[i], s)) return texts[i];
    if (ntexts == captexts) {
        size_t cap = captexts ? 2 * captexts : 64;
        char **t = realloc(texts, cap * sizeof *t);
        if (!t) return NULL;
        texts = t;
        captexts = cap;
    }
    size_t n = strlen(s) + 1;
    char *c = malloc(n);
    if (!c) return NULL;
    memcpy(c, s, n);
    return texts[ntexts++] = c;
}

int pool_result_add(pool_result *p, const char *name, double value)
{
    if (p->nmetrics == POOL_MAX_METRICS) return -1;
    p->metrics[p->nmetrics++] = (pool_metric) { name, value, NULL };
    return 0;
}

int pool_result_add_name(pool_result *p, const char *name, const char *text)
{
    if (p->nmetrics == POOL_MAX_METRICS) return -1;
    const char *t = text ? intern(text) : NULL;
    if (text && !t) return -1;
    p->metrics[p->nmetrics++] = (pool_metric) { name, NAN, t };
    return 0;
}

double pool_metric_get(const pool_result *p, const char *name)
{
    for (int i = 0; i < p->nmetrics; i++)
        if (!strcmp(p->metrics[i].name, name)) return p->metrics[i].value;
    return NAN;
}

/* ---- a run's family rows (sim_rows) ---- */

/* A copy of S, or NULL when out of memory. */
static char *dupstr(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d) memcpy(d, s, n);
    return d;
}

/* Appends a row of R's family with STAT (a string literal); its strings copied.
 * Returns it, or NULL when out of memory. */
static sim_row *row_new(sim_rows *r, const char *scope, const char *metric, const char *stat, double value, int hide)
{
    if (r->n == r->cap) {
        size_t cap = r->cap ? 2 * r->cap : 16;
        sim_row *x = realloc(r->row, cap * sizeof *x);
        if (!x) return NULL;
        r->row = x;
        r->cap = cap;
    }
    sim_row *w = &r->row[r->n];
    *w = (sim_row) { dupstr(scope), dupstr(metric), stat, value, NULL, r->family ? r->family : "", hide, NULL };
    if (!w->scope || !w->metric) {
        free(w->scope);
        free(w->metric);
        return NULL;
    }
    r->n++;
    return w;
}

int sim_rows_add(sim_rows *r, const char *scope, const char *metric, double value, int hide)
{
    return row_new(r, scope, metric, "value", value, hide) ? 0 : -1;
}

int sim_rows_add_text(sim_rows *r, const char *scope, const char *metric, const char *text)
{
    sim_row *w = row_new(r, scope, metric, "value", NAN, 0);
    return w && (w->text = dupstr(text)) ? 0 : -1;
}

int sim_rows_add_latency(sim_rows *r, const char *scope, const char *metric, const stat_summary *s)
{
    return sim_rows_add_latency_hide(r, scope, metric, s, 1);
}

int sim_rows_add_latency_hide(sim_rows *r, const char *scope, const char *metric, const stat_summary *s, int hide)
{
    static const char *const STATS[7] = { "mean", "p50", "p90", "p95", "p99", "p999", "max" };
    double v[7] = { s->mean, s->p50, s->p90, s->p95, s->p99, s->p999, s->max };
    for (int i = 0; i < 7; i++) {
        sim_row *w = row_new(r, scope, metric, STATS[i], s->n > 0 ? v[i] : NAN, hide);
        if (!w) return -1;
        if (i == 0 && s->n > 0) {
            if (!(w->dist = malloc(sizeof *w->dist))) return -1;
            *w->dist = *s;
        }
    }
    return 0;
}

void sim_rows_free(sim_rows *r)
{
    for (size_t i = 0; i < r->n; i++) {
        free(r->row[i].scope);
        free(r->row[i].metric);
        free(r->row[i].text);
        free(r->row[i].dist);
    }
    free(r->row);
    free(r->by_key);
    free(r->pool);
    memset(r, 0, sizeof *r);
}

/* A row as sim_rows_index sorts it. */
typedef struct row_key {
    const sim_row *w;         /* the row */
    size_t i;                 /* its position */
} row_key;

/* The order of two row_keys by scope, metric, stat, then position. */
static int key_cmp(const void *a, const void *b)
{
    const row_key *p = a, *q = b;
    int c = strcmp(p->w->scope, q->w->scope);
    if (!c) c = strcmp(p->w->metric, q->w->metric);
    if (!c) c = strcmp(p->w->stat, q->w->stat);
    return c ? c : (p->i > q->i) - (p->i < q->i);
}

int sim_rows_index(sim_rows *r)
{
    free(r->by_key);
    free(r->pool);
    r->by_key = r->pool = NULL;
    r->nkey = 0;
    r->npool = 0;
    size_t *k = malloc((r->n + 1) * sizeof *k), *p = malloc((r->n + 1) * sizeof *p);
    row_key *t = malloc((r->n + 1) * sizeof *t);
    if (!k || !p || !t) {
        free(k);
        free(p);
        free(t);
        return -1;
    }
    int np = 0;
    for (size_t i = 0; i < r->n; i++) {
        t[i] = (row_key) { &r->row[i], i };
        if (!strcmp(r->row[i].family, "pool") && (np == 0 || strcmp(r->row[p[np - 1]].scope, r->row[i].scope)))
            p[np++] = i;
    }
    qsort(t, r->n, sizeof *t, key_cmp);
    for (size_t i = 0; i < r->n; i++) k[i] = t[i].i;
    free(t);
    r->by_key = k;
    r->nkey = r->n;
    r->pool = p;
    r->npool = np;
    return 0;
}

const sim_row *sim_result_row(const sim_result *x, const char *scope, const char *metric, const char *stat)
{
    const sim_rows *R = &x->rows;
    if (R->by_key && R->nkey == R->n) {   /* the first of the key's rows, by binary search */
        size_t lo = 0, hi = R->n;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            const sim_row *w = &R->row[R->by_key[mid]];
            int c = strcmp(w->scope, scope);
            if (!c) c = strcmp(w->metric, metric);
            if (!c) c = strcmp(w->stat, stat);
            if (c < 0) lo = mid + 1;
            else hi = mid;
        }
        if (lo < R->n) {
            const sim_row *w = &R->row[R->by_key[lo]];
            if (!strcmp(w->scope, scope) && !strcmp(w->metric, metric) && !strcmp(w->stat, stat)) return w;
        }
        return NULL;
    }
    for (size_t i = 0; i < x->rows.n; i++) {
        const sim_row *w = &x->rows.row[i];
        if (!strcmp(w->scope, scope) && !strcmp(w->metric, metric) && !strcmp(w->stat, stat)) return w;
    }
    return NULL;
}

double sim_result_get(const sim_result *x, const char *scope, const char *metric, const char *stat)
{
    const sim_row *w = sim_result_row(x, scope, metric, stat);
    return w ? w->value : NAN;
}

uint64_t sim_result_count(const sim_result *x, const char *metric)
{
    const sim_row *w = sim_result_row(x, "", metric, "value");
    return w && w->value >= 0 ? (uint64_t) w->value : 0;
}

double sim_result_value(const sim_result *x, const char *metric)
{
    return sim_result_get(x, "", metric, "value");
}

int sim_result_latency(const sim_result *x, const char *scope, const char *metric, stat_summary *s)
{
    const sim_row *w = sim_result_row(x, scope, metric, "mean");
    if (w && w->dist) *s = *w->dist;
    else memset(s, 0, sizeof *s);
    return w ? 0 : -1;
}

const char *sim_result_pool(const sim_result *x, int i)
{
    const sim_rows *R = &x->rows;
    if (R->pool && R->nkey == R->n) return i >= 0 && i < R->npool ? R->row[R->pool[i]].scope : NULL;
    for (size_t k = 0; i >= 0 && k < x->rows.n; k++) {
        const sim_row *w = &x->rows.row[k];
        if (!strcmp(w->family, "pool") && !strcmp(w->metric, "kind") && i-- == 0) return w->scope;
    }
    return NULL;
}
