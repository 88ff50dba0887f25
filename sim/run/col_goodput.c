/* col_goodput.c -- the run collector of goodput (collect.h): the measured
 * requests served within every per-request limit of the [slo] (slocfg.h). */
#include <math.h>
#include "run/collect.h"
#include "core/slocfg.h"

typedef struct goodput {
    const run_env *env;
    uint64_t good;            /* measured served requests within the limits */
} goodput;

static int good_init(void *self, const run_env *env, char *err, size_t errlen)
{
    (void) err;
    (void) errlen;
    goodput *x = self;
    x->env = env;
    return env->sc->slo.per_request ? 0 : COL_IDLE;
}

static void good_leave(void *self, const request *r, const leave_rec *l)
{
    goodput *x = self;
    if (!r->measured) return;
    x->good += (uint64_t) slo_request_ok(&x->env->sc->slo, x->env->ncls ? r->cls : -1, l->e2e_ms, l->ttft_ms, l->tpot_ms);
}

/* Its rows: goodput, the share of measured requests served within every
 * per-request limit (NAN: none measured), and goodput_rps, that share of the
 * throughput. */
static int good_emit(void *self, sim_result *out, char *err, size_t errlen)
{
    (void) err;
    (void) errlen;
    uint64_t requests = sim_result_count(out, "requests");   /* sim.c's */
    double share = requests ? (double) ((goodput *) self)->good / (double) requests : NAN;
    if (sim_rows_add(&out->rows, "", "goodput", share, 0) ||
        sim_rows_add(&out->rows, "", "goodput_rps", share * sim_result_value(out, "throughput_rps"), 0))
        return -1;
    return 0;
}

const run_collector col_goodput = {
    .name = "goodput",
    .size = sizeof(goodput),
    .init = good_init,
    .leave = good_leave,
    .emit = good_emit,
};
