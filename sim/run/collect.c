/* collect.c -- the table of run collectors (collect.h): the built-in metric
 * families, then those registered at run time; and a run's set of them (the
 * engine's side: set up, the lists of active hooks, the per-run calls). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "run/collect.h"
#include "engine/rowtab.h"

/* The built-in families, in the order their hooks run and their results are
 * emitted: the system's latency first (the per-pool rows of a single pool copy
 * it), the cost before the classes (which read whether it is reported), the
 * trace last (it writes its file once the results are known).  A new
 * built-in family is one row here (and its own file, run/col_NAME.c). */
static const run_collector *const BUILTIN[] = { &col_latency, &col_cost, &col_breakdown, &col_itl, &col_paths, &col_cold,
                                                &col_goodput, &col_classes, &col_tseries, &col_trace,
                                                &col_seednoise, &col_over, &col_client,
                                                &col_energy };
static rowtab table = ROWTAB_POINTERS(BUILTIN, run_collector);

int run_collector_count(void) { return rowtab_count(&table); }
const run_collector *run_collector_at(int i) { return rowtab_at(&table, i); }

int run_collector_register(const run_collector *c)
{
    if (!c || !c->init) return -1;
    return rowtab_add(&table, c);
}

/* Appends C to the hook list L (N entries). */
static void list_add(col_run **l, int *n, col_run *c) { l[(*n)++] = c; }

int col_set_init(col_set *cs, const run_env *env, char *err, size_t errlen)
{
    memset(cs, 0, sizeof *cs);
    int n = run_collector_count();
    col_run ***lists[7] = { &cs->on_arrive, &cs->on_leave, &cs->on_error, &cs->on_outcome, &cs->on_retry,
                            &cs->on_wasted, &cs->on_step };
    if (!(cs->col = calloc((size_t) n + 1, sizeof *cs->col))) goto oom;
    for (int k = 0; k < 7; k++)
        if (!(*lists[k] = calloc((size_t) n + 1, sizeof **lists[k]))) goto oom;
    for (int i = 0; i < n; i++) {
        col_run *x = &cs->col[i];
        x->c = run_collector_at(i);
        if (x->c->size > 0 && !(x->self = calloc(1, x->c->size))) goto oom;
        cs->ncol++;
        err[0] = '\0';
        int rc = x->c->init(x->self, env, err, errlen);
        if (rc < 0) {
            if (!err[0]) goto oom;
            return -1;
        }
        if (rc == COL_IDLE) continue;
        x->active = 1;
        if (x->c->arrive) list_add(cs->on_arrive, &cs->narrive, x);
        if (x->c->leave) list_add(cs->on_leave, &cs->nleave, x);
        if (x->c->error) list_add(cs->on_error, &cs->nerror, x);
        if (x->c->outcome) list_add(cs->on_outcome, &cs->noutcome, x);
        if (x->c->retry) list_add(cs->on_retry, &cs->nretry, x);
        if (x->c->wasted) list_add(cs->on_wasted, &cs->nwasted, x);
        if (x->c->step) list_add(cs->on_step, &cs->nstep, x);
    }
    return 0;
oom:
    snprintf(err, errlen, "out of memory");
    return -1;
}

int col_set_call(col_set *cs, int which, sim_result *out, char *err, size_t errlen)
{
    for (int i = 0; i < cs->ncol; i++) {
        const col_run *x = &cs->col[i];
        if (!x->active) continue;
        int rc = 0;
        if (which == COL_START && x->c->start) rc = x->c->start(x->self, err, errlen);
        if (which == COL_END && x->c->end) rc = x->c->end(x->self, out, err, errlen);
        if (which == COL_EMIT && x->c->emit) {
            out->rows.family = x->c->name;   /* the family of the rows it adds */
            err[0] = '\0';
            rc = x->c->emit(x->self, out, err, errlen);
            out->rows.family = NULL;
            if (rc != 0 && !err[0]) snprintf(err, errlen, "out of memory");
        }
        if (rc != 0) return -1;
    }
    return 0;
}

void col_set_window(col_set *cs, int open)
{
    for (int i = 0; i < cs->ncol; i++) {
        const col_run *x = &cs->col[i];
        if (!x->active) continue;
        if (open && x->c->window_open) x->c->window_open(x->self);
        if (!open && x->c->window_close) x->c->window_close(x->self);
    }
}

int col_set_lost(const col_set *cs)
{
    int lost = 0;
    for (int i = 0; i < cs->ncol; i++)
        if (cs->col[i].active && cs->col[i].c->lost) lost |= cs->col[i].c->lost(cs->col[i].self);
    return lost;
}

void col_set_free(col_set *cs)
{
    for (int i = 0; i < cs->ncol; i++) {
        if (cs->col[i].c->free) cs->col[i].c->free(cs->col[i].self);
        free(cs->col[i].self);
    }
    free(cs->col);
    free(cs->on_arrive);
    free(cs->on_leave);
    free(cs->on_error);
    free(cs->on_outcome);
    free(cs->on_retry);
    free(cs->on_wasted);
    free(cs->on_step);
    memset(cs, 0, sizeof *cs);
}
