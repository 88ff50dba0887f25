/* col_cost.c -- the run collector of the system's cost (collect.h): the GPU
 * pools' $ per hour and per million output tokens, the external API and
 * network egress charges, and $ per 1000 served requests (the system's rows
 * cost_per_hour, cost_per_mtok, api_usd, egress_usd, cost_per_1k_requests:
 * docs/metrics.md, "Cost"), from the pools' results.
 */
#include <math.h>
#include "run/collect.h"

typedef struct cost {
    const run_env *env;
} cost;

static int cost_init(void *self, const run_env *env, char *err, size_t errlen)
{
    (void) err;
    (void) errlen;
    ((cost *) self)->env = env;
    return 0;
}

/* After the engine's results (the pools' cost_per_hour, api_usd and egress_usd
 * metrics, throughput, served).  Its rows, the system's: with a kind that
 * needs token counts (an LLM pool), cost_per_hour ($ per hour of all pools)
 * and cost_per_mtok ($ per million output tokens at the measured throughput;
 * NAN in a saturated run); with a gateway kind, api_usd (the measured served
 * requests' API charges, $); with egress on a hop, egress_usd ($); with a
 * gateway kind or a priced pool, cost_per_1k_requests (GPU $ at the measured
 * throughput plus the API and egress charges per measured served request,
 * x 1000; NAN in a saturated run). */
static int cost_emit(void *self, sim_result *out, char *err, size_t errlen)
{
    (void) err;
    (void) errlen;
    const run_env *e = ((cost *) self)->env;
    double per_hour = 0, api = 0, egress = 0;
    for (int i = 0; i < e->nst; i++) {
        const pool_result *p = &e->pools[i];
        per_hour += p->cost_per_hour;
        double usd = pool_metric_get(p, "api_usd");
        if (!isnan(usd)) api += usd;
        usd = pool_metric_get(p, "egress_usd");                 /* network egress (issue 34) */
        if (!isnan(usd)) egress += usd;
    }
    /* The run's rates and counts (sim.c's rows; no output tokens/s row without tokens: NAN). */
    double tps = sim_result_value(out, "output_tokens_per_s"), rps = sim_result_value(out, "throughput_rps");
    uint64_t served = sim_result_count(out, "served");
    double per_mtok = tps > 0 ? per_hour / (tps * 3600.0 / 1e6) : NAN;
    /* GPU $ per request = $/h / (requests/h served); API $ per measured served request. */
    double gpu = per_hour > 0 ? (rps > 0 ? per_hour / (rps * 3600.0) : NAN) : 0.0;
    double per_1k = served > 0 ? 1000.0 * (gpu + (api + egress) / (double) served) : NAN;
    sim_rows *w = &out->rows;
    if (e->has_llm && (sim_rows_add(w, "", "cost_per_hour", per_hour, 0) ||
                       sim_rows_add(w, "", "cost_per_mtok", per_mtok, 1))) return -1;
    if (e->has_gateway && sim_rows_add(w, "", "api_usd", api, 0)) return -1;
    if (egress > 0 && sim_rows_add(w, "", "egress_usd", egress, 0)) return -1;
    if ((e->has_gateway || per_hour > 0) && sim_rows_add(w, "", "cost_per_1k_requests", per_1k, 1)) return -1;
    return 0;
}

const run_collector col_cost = {
    .name = "cost",
    .size = sizeof(cost),
    .init = cost_init,
    .emit = cost_emit,
};
