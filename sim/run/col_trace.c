/* col_trace.c -- the run collector of `run --trace-events` (collect.h,
 * trevt.h): the spans of the run's first N requests, served or not, and the
 * LLM replicas' steps while they last, written once the run's results are
 * known (the last row of the table). */
#include "run/collect.h"
#include "run/trevt.h"

typedef struct trc {
    const run_env *env;
    trevt *t;                 /* the open trace, NULL once written */
} trc;

static int trc_init(void *self, const run_env *env, char *err, size_t errlen)
{
    trc *x = self;
    x->env = env;
    const scenario *sc = env->sc;
    if (!sc->trace_path) return COL_IDLE;
    if (!(x->t = trevt_open(sc->trace_path, sc->trace_requests, err, errlen))) return -1;
    for (int i = 0; i < sc->npools; i++) trevt_pool(x->t, i, sc->pools[i].name);
    return 0;
}

static void trc_leave(void *self, const request *r, const leave_rec *l)
{
    trevt_served(((trc *) self)->t, r, l->now + r->ret_last_ns - r->arrival, r->whole);
}

static void trc_error(void *self, const request *r, req_outcome outcome)
{
    trc *x = self;
    trevt_unserved(x->t, r, outcome, evq_now(x->env->q));
}

static void trc_step(void *self, int pool, int rep, simtime_t start, simtime_t dur, int64_t prefill_tokens,
                     int32_t prefill_seqs, int32_t decode_seqs)
{
    trevt_step(((trc *) self)->t, pool, rep, start, dur, prefill_tokens, prefill_seqs, decode_seqs);
}

/* Writes the trace.  Returns 0, or -1 with ERR when it cannot be written. */
static int trc_emit(void *self, sim_result *out, char *err, size_t errlen)
{
    trc *x = self;
    /* The requests traced, and whether more had an outcome (rows the report
     * leaves out: `run` says so in a note). */
    if (sim_rows_add(&out->rows, "", "trace_requests", (double) trevt_requests(x->t), 0) ||
        sim_rows_add(&out->rows, "", "trace_truncated", trevt_truncated(x->t), 0))
        return -1;
    int rc = trevt_close(x->t, 1, err, errlen);
    x->t = NULL;
    return rc;
}

/* A failed run writes no trace. */
static void trc_free(void *self)
{
    trc *x = self;
    if (x->t) trevt_close(x->t, 0, NULL, 0);
}

const run_collector col_trace = {
    .name = "trace",
    .size = sizeof(trc),
    .init = trc_init,
    .leave = trc_leave,
    .error = trc_error,
    .step = trc_step,
    .emit = trc_emit,
    .free = trc_free,
};
