/* verdict.h -- a pool's end-of-run verdict (run/sim.c's results): its
 * offered load, known beforehand or measured, whether it saturated, how many
 * relaxation times the measured window holds, and the cost of its energy.
 * Pure functions of the scenario, the stations and the sampled contents
 * (warmup.h's trend). */
#ifndef LATSIM_VERDICT_H
#define LATSIM_VERDICT_H

#include <stdint.h>
#include "core/station.h"
#include "run/scenario.h"
#include "run/warmup.h"
#include "latsim/sim.h"

/* Offered load of pool I of SC (stations ST): what its kind makes of the
 * workload's rate, 0 for a pool no request visits, NAN when it cannot be known
 * beforehand (a lossy or splitting station upstream, a kind without the hook,
 * client retries). */
double verdict_offered_load(const scenario *sc, station *const *st, int i);

/* 1 when pool I's (station ST's) backlog grew during the window by more than a
 * stable system's fluctuations allow (TR: its sampled contents), else 0. */
int verdict_backlog_grew(const station *st, const trend *tr, int i);

/* 1 when offered load RHO reaches capacity: RHO >= 1 when known beforehand
 * (N == 0), beyond 1 by more than its standard error when measured from N
 * window arrivals; else 0. */
int verdict_load_exceeds(double rho, uint64_t n);

/* The measured window in relaxation times of the pools' queues, the least over
 * the pools (OUT's pools have their offered load and service filled): the
 * value of sim_result.relax_windows (INFINITY: unknown). */
double verdict_relax_windows(const scenario *sc, station *const *st, const trend *tr, const pool_result *pools);

/* Pool I's saturation verdict into P (its offered load and window filled;
 * the offered load measured from its inflow where it was unknown beforehand):
 * load_saturated, and saturated (by its load, by its backlog's growth in TR,
 * or left with a queue by a run whose arrivals stopped at their cap: CAPPED). */
void verdict_pool_saturated(const scenario *sc, station *const *st, const trend *tr, int i, int capped, pool_result *p);

/* Why the clock of Q stopped the run (evq_overflowed: a stall, the horizon
 * passed, an event in the past), into ERR, naming what kept firing (its
 * module, else the pool of the stations ST whose event it is) and the ARRIVALS
 * so far. */
void verdict_clock_failed(const scenario *sc, evq *q, station *const *st, int nst, uint64_t arrivals, char *err,
                          size_t errlen);

/* Pool P's electricity added to its $ per hour and rows.  Returns 0, or -1
 * when P's metric table is full. */
int verdict_energy_cost(const scenario *sc, pool_result *p);

#endif
