/* result.c -- a pool's kind-specific result rows (result.h). */
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
