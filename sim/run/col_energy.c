/* col_energy.c -- the run collector of the GPUs' energy (collect.h;
 * docs/metrics.md, "Energy"): over the pools whose GPUs have a known power
 * (pool_result.has_energy), the board energy over the measured window, its
 * mean power, per output token and per request, and its electricity's $ when
 * [sim] prices it (rows energy_kwh, mean_power_w, joules_per_output_token,
 * joules_per_request, electricity_usd).  It has no per-request hook: it reads
 * the pools' results when it emits.
 */
#include <math.h>
#include "run/collect.h"

static int energy_init(void *self, const run_env *env, char *err, size_t errlen)
{
    (void) err;
    (void) errlen;
    *(const run_env **) self = env;
    return 0;
}

static int energy_emit(void *self, sim_result *out, char *err, size_t errlen)
{
    (void) err;
    (void) errlen;
    const run_env *e = *(const run_env **) self;
    const scenario *sc = e->sc;
    int any = 0;
    double j = 0, usd = 0;    /* J, $ */
    for (int i = 0; i < e->nst; i++) {
        const pool_result *p = &e->pools[i];
        if (!p->has_energy) continue;
        any = 1;
        j += p->energy_j;
        if (sc->electricity_usd_per_kwh > 0) usd += p->energy_j / 3.6e6 * sc->pue * sc->electricity_usd_per_kwh;
    }
    if (!any) return 0;
    double win = sim_result_value(out, "window_s"), tps = sim_result_value(out, "output_tokens_per_s"),
           rps = sim_result_value(out, "throughput_rps");   /* the run's rows (sim.c); tps NAN without tokens */
    double w = win > 0 ? j / win : 0;   /* mean power, W */
    sim_rows *r = &out->rows;
    if (sim_rows_add(r, "", "energy_kwh", j / 3.6e6, 0) || sim_rows_add(r, "", "mean_power_w", w, 0) ||
        sim_rows_add(r, "", "joules_per_output_token", tps > 0 ? w / tps : NAN, 1) ||
        sim_rows_add(r, "", "joules_per_request", rps > 0 ? w / rps : NAN, 1) ||
        (sc->electricity_usd_per_kwh > 0 && sim_rows_add(r, "", "electricity_usd", usd, 0)))
        return -1;
    return 0;
}

const run_collector col_energy = {
    .name = "energy",
    .size = sizeof(const run_env *),
    .init = energy_init,
    .emit = energy_emit,
};
