/* result.c -- a pool's kind-specific result rows (result.h). */
#include "core/result.h"

#include <math.h>
#include <string.h>

int pool_result_add(pool_result *p, const char *name, double value)
{
    if (p->nmetrics == POOL_MAX_METRICS) return -1;
    p->metrics[p->nmetrics++] = (pool_metric) { name, value, NULL };
    return 0;
}

int pool_result_add_name(pool_result *p, const char *name, const char *text)
{
    if (p->nmetrics == POOL_MAX_METRICS) return -1;
    p->metrics[p->nmetrics++] = (pool_metric) { name, NAN, text };
    return 0;
}

double pool_metric_get(const pool_result *p, const char *name)
{
    for (int i = 0; i < p->nmetrics; i++)
        if (!strcmp(p->metrics[i].name, name)) return p->metrics[i].value;
    return NAN;
}
