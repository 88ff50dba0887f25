/* col_cold.c -- the run collector of cold and warm requests (collect.h): with
 * a pool that starts replicas or servers cold (fleet.h), the E2E and TTFT of
 * the measured served requests that met a cold unit, and of the others (rows
 * served_cold, served_warm, e2e_cold, e2e_warm, ttft_cold, ttft_warm). */
#include <math.h>
#include "run/collect.h"
#include "fleet/fleet.h"

typedef struct cold {
    int ttft;                        /* an LLM pool: the TTFT rows are reported too */
    stat_acc *e2e_cold, *e2e_warm;   /* E2E of requests served cold / warm, ms */
    stat_acc *ttft_cold, *ttft_warm; /* their TTFT, ms */
} cold;

static int cold_init(void *self, const run_env *env, char *err, size_t errlen)
{
    (void) err;
    (void) errlen;
    cold *x = self;
    int starts = 0;
    for (int i = 0; i < env->sc->npools; i++) starts |= fleet_starts(env->sc->pools[i].fleet);
    if (!starts) return COL_IDLE;
    x->ttft = env->has_llm;
    x->e2e_cold = stat_new();
    x->e2e_warm = stat_new();
    x->ttft_cold = stat_new();
    x->ttft_warm = stat_new();
    return x->e2e_cold && x->e2e_warm && x->ttft_cold && x->ttft_warm ? 0 : -1;
}

static void cold_leave(void *self, const request *r, const leave_rec *l)
{
    cold *x = self;
    if (!r->measured) return;
    stat_add(r->cold ? x->e2e_cold : x->e2e_warm, l->e2e_ms);
    if (l->first >= 0) stat_add(r->cold ? x->ttft_cold : x->ttft_warm, l->ttft_ms);
}

/* Its rows, the system's: served_cold, served_warm, then the latencies e2e_cold,
 * e2e_warm (and with an LLM pool ttft_cold, ttft_warm). */
static int cold_emit(void *self, sim_result *out, char *err, size_t errlen)
{
    (void) err;
    (void) errlen;
    cold *x = self;
    static const char *const NAME[4] = { "e2e_cold", "e2e_warm", "ttft_cold", "ttft_warm" };
    stat_acc *acc[4] = { x->e2e_cold, x->e2e_warm, x->ttft_cold, x->ttft_warm };
    stat_summary s;
    if (sim_rows_add(&out->rows, "", "served_cold", (double) stat_count(x->e2e_cold), 0) ||
        sim_rows_add(&out->rows, "", "served_warm", (double) stat_count(x->e2e_warm), 0))
        return -1;
    for (int k = 0; k < (x->ttft ? 4 : 2); k++) {
        stat_summarize(acc[k], &s);
        if (sim_rows_add_latency(&out->rows, "", NAME[k], &s)) return -1;
    }
    return 0;
}

static void cold_free(void *self)
{
    cold *x = self;
    stat_free(x->e2e_cold);
    stat_free(x->e2e_warm);
    stat_free(x->ttft_cold);
    stat_free(x->ttft_warm);
}

const run_collector col_cold = {
    .name = "cold",
    .size = sizeof(cold),
    .init = cold_init,
    .leave = cold_leave,
    .emit = cold_emit,
    .free = cold_free,
};
