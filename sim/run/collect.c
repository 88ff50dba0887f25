/* collect.c -- the table of run collectors (collect.h): the built-in metric
 * families, then those registered at run time. */
#include <string.h>
#include "run/collect.h"

/* The built-in families, in the order their hooks run and their results are
 * emitted: the system's latency first (the per-pool rows of a single pool copy
 * it), the trace last (it writes its file once the results are known).  A new
 * built-in family is one row here (and its own file, run/col_NAME.c). */
static const run_collector *const BUILTIN[] = { &col_latency, &col_breakdown, &col_itl, &col_paths, &col_cold,
                                                &col_goodput, &col_classes, &col_tseries, &col_trace };
#define NBUILTIN ((int) (sizeof BUILTIN / sizeof BUILTIN[0]))
#define MAX_REGISTERED 16

static const run_collector *registered[MAX_REGISTERED];
static int nregistered;

int run_collector_count(void) { return NBUILTIN + nregistered; }

const run_collector *run_collector_at(int i)
{
    if (i < 0 || i >= run_collector_count()) return NULL;
    return i < NBUILTIN ? BUILTIN[i] : registered[i - NBUILTIN];
}

int run_collector_register(const run_collector *c)
{
    if (!c || !c->name || !c->init) return -1;
    for (int i = 0; i < run_collector_count(); i++) {
        const run_collector *x = run_collector_at(i);
        if (x == c) return 0;
        if (!strcmp(x->name, c->name)) return -1;
    }
    if (nregistered == MAX_REGISTERED) return -1;
    registered[nregistered++] = c;
    return 0;
}
