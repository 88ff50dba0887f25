/* col_over.c -- the run collector of the shares over a threshold (collect.h):
 * for each [slo] term `e2e_over_<T>ms` / `ttft_over_<T>ms` (overall, or of
 * [slo CLASS]'s class), the share of the measured served requests slower than
 * T, read from their full distribution (a streaming histogram of the term's
 * metric and requests: stat_share_above); one row each, named by the term's
 * key.  Idle without such terms.
 */
#include <math.h>
#include <string.h>
#include "run/collect.h"
#include "latsim/report.h"   /* REPORT_CLASS_SCOPE */

typedef struct over_term {
    const slo_term *t;        /* the [slo] term */
    int cls;                  /* its class (index), -1: every request */
    int ttft;                 /* 1: TTFT, 0: E2E */
    stat_acc *acc;            /* the values of its requests, ms */
} over_term;

typedef struct over {
    over_term *term;
    int n;
} over;

static int over_init(void *self, const run_env *env, char *err, size_t errlen)
{
    (void) err;
    (void) errlen;
    over *x = self;
    const slo_spec *slo = &env->sc->slo;
    int n = 0;
    for (int k = 0; k < slo->n; k++) n += slo->t[k].kind == SLO_OVER;
    if (n == 0) return COL_IDLE;
    if (!(x->term = calloc((size_t) n, sizeof *x->term))) return -1;
    for (int k = 0; k < slo->n && x->n < n; k++) {
        const slo_term *t = &slo->t[k];
        if (t->kind != SLO_OVER) continue;
        over_term *o = &x->term[x->n++];
        o->t = t;
        o->cls = -1;
        for (int j = 0; t->cls[0] && j < env->ncls; j++)
            if (!strcmp(env->sc->wl.classes[j].name, t->cls)) o->cls = j;
        o->ttft = !strcmp(t->metric, "ttft");
        if (!(o->acc = stat_new())) return -1;
    }
    return 0;
}

static void over_leave(void *self, const request *r, const leave_rec *l)
{
    over *x = self;
    if (!r->measured) return;
    for (int k = 0; k < x->n; k++) {
        over_term *o = &x->term[k];
        if (o->cls >= 0 && o->cls != r->cls) continue;
        double v = o->ttft ? l->ttft_ms : l->e2e_ms;
        if (!isnan(v)) stat_add(o->acc, v);
    }
}

static int over_lost(const void *self)
{
    const over *x = self;
    for (int k = 0; k < x->n; k++)
        if (stat_failed(x->term[k].acc)) return 1;
    return 0;
}

/* Its rows: per term, the share (NAN when none served; in a saturated run too),
 * in the system's scope or its class's ("class:NAME"). */
static int over_emit(void *self, sim_result *out, char *err, size_t errlen)
{
    (void) err;
    (void) errlen;
    over *x = self;
    for (int k = 0; k < x->n; k++) {
        const over_term *o = &x->term[k];
        char scope[80];
        snprintf(scope, sizeof scope, "%s%s", o->t->cls[0] ? REPORT_CLASS_SCOPE : "", o->t->cls);
        double share = stat_count(o->acc) ? stat_share_above(o->acc, o->t->over_ms) : NAN;
        if (sim_rows_add(&out->rows, scope, o->t->key, share, 1)) return -1;
    }
    return 0;
}

static void over_free(void *self)
{
    over *x = self;
    for (int k = 0; k < x->n; k++) stat_free(x->term[k].acc);
    free(x->term);
}

const run_collector col_over = {
    .name = "over",
    .size = sizeof(over),
    .init = over_init,
    .leave = over_leave,
    .lost = over_lost,
    .emit = over_emit,
    .free = over_free,
};
