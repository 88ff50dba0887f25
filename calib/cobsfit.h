/* cobsfit.h -- `latsim calib fit observed`: the coefficients of the fitted step
 * model (cfitted.h) found by replaying stored observed runs (cobsdb.h) with the
 * simulation in the loop, so that the replays reproduce what was observed.
 *
 * Data: every stored run, request run or sweep, of (model, GPU, weights) [at
 * TP T], each prepared once for replay (cobsreplay.h: loaded and resolved once,
 * its pool's cost model replaced by the candidate coefficients before each
 * simulation; a sweep level as `latsim replay` simulates it, closed-loop users
 * or Poisson rate, with fewer requests: COBS_PREP_LEVEL_MAX).
 *
 * Data (cobsfit_fit's DATA): the runs, the whole steps stored for the model
 * and GPU (calib_meas step_prefill / step_decode of any source: imported
 * steps, engine-log windows; evaluated as the model's sum, no simulation), both,
 * or none (the prior itself).  What is not fitted is still predicted.
 *
 * Objective, on x = log(coefficient) of the free terms (a posterior):
 *   chi2(x) = sum over runs of (6 / K_run) sum over its K_run statistics
 *             ((predicted / observed - 1) / sigma)^2
 *           + (6 / N_steps) sum over the steps ((predicted / measured - 1) / sigma)^2
 *           + sum over free terms ((x - log prior) / width)^2
 * The statistics are the mean and P90 of TTFT, TPOT (ITL when TPOT is not
 * observed) and E2E; for a sweep, every level's aggregates it gives (mean
 * TTFT, ITL, TPOT, E2E, TTFT P99, output tokens/s), all K_run of them sharing
 * the run's weight; sigma = 1 % (a relative error of 1 % counts 1), so that
 * every run (and the steps together) counts once whatever its size.  The prior
 * and its widths are cprior_terms' (cprior.h); every term is bounded below by
 * cprior_floor (no rate faster than the hardware's peak).
 *
 * Start: the prior scaled by one common factor found by a golden-section search
 * on the objective; then GSL's Nelder-Mead (nmsimplex2), initial steps 0.5 in
 * log, stopped when the simplex is below 0.001 or after COBSFIT_MAX_ITER
 * iterations, restarted from its minimum while that gains.
 *
 * Free terms: fixed_ms, weights_ms_per_gb, prefill_ms_per_tflop, kv_ms_per_gb,
 * decode_ms_per_tflop, attn_ms_per_tflop.  After the fit, a term at its floor is
 * held there (status "floor"), one the data do not determine (posterior sd
 * before the misfit scaling above 0.9 of its prior width) at the prior (status
 * "prior"), and the rest fitted again.  Always at the prior (the learned
 * default's): allreduce_ms_per_gb, allreduce_ms_per_hop, launch_ms_per_layer,
 * seq_ms.  The prior is that of the first run's pool's engine (vLLM without
 * runs).
 *
 * Uncertainty: Gauss-Newton at the optimum, the Jacobian of the weighted
 * residuals (statistics and prior) by central differences (step 0.05 in log),
 * covariance (J^T J)^-1 scaled by the reduced chi2 of the statistics
 * (chi2 / (statistics - free terms)) when above 1, i.e. by the residual
 * errors when they exceed 1 %; a coefficient's standard error is
 * c x sqrt(var(log c)).
 * With two or more parts (runs, and the steps as one), each is also predicted
 * by a fit to the others (the leave-one-out error, stored as the model's
 * cross-validated MAPE; with one the stored error is the fit's own).
 */
#ifndef LATSIM_COBSFIT_H
#define LATSIM_COBSFIT_H

#include <stdint.h>
#include <stdio.h>
#include <sqlite3.h>

#include "cfitted.h"

#define COBSFIT_MAX_RUNS 64
#define COBSFIT_MAX_ITER 400
/* The statistics fitted: (TTFT, TPOT, E2E) x (mean, P90). */
#define COBSFIT_NSTATS 6

extern const char *const cobsfit_stat_names[COBSFIT_NSTATS];

/* What a fit fits: both the observed runs and the whole steps (calib_meas
 * step_prefill / step_decode of any source: imported steps, engine-log
 * windows), the runs alone, the steps alone, or nothing (the prior itself). */
enum { COBSFIT_BOTH, COBSFIT_REQUESTS, COBSFIT_STEPS, COBSFIT_NONE };

/* "both", "requests", "steps", "none". */
const char *cobsfit_data_name(int data);

typedef struct cobsfit_result {
    cfitted m;                /* the fitted model (its fit stored, m.fit.id set) */
    int data;                 /* COBSFIT_BOTH ... */
    double prior[CF_NTERMS];  /* the prior (cprior_terms), units as the terms */
    double width[CF_NTERMS];  /* its width, log-sd */
    double lo[CF_NTERMS];     /* the floor (cprior_floor) */
    int nsteps;               /* whole steps stored for the model and GPU */
    double steps_err;         /* the fitted model's mean |error| on them, % (fitted or not) */
    double steps_loro;        /* and when they are left out of the fit, % (NAN: not done) */
    int nruns;                /* runs fitted */
    int64_t run[COBSFIT_MAX_RUNS];       /* their ids */
    double err[COBSFIT_MAX_RUNS][COBSFIT_NSTATS];   /* fitted replay's signed error, % (NAN: not observed) */
    double start_err[COBSFIT_MAX_RUNS][COBSFIT_NSTATS]; /* the roofline's error, %, on the same run */
    double loro[COBSFIT_MAX_RUNS][COBSFIT_NSTATS];  /* leave-one-run-out error, % (NAN with one run) */
    int nlv[COBSFIT_MAX_RUNS];           /* sweep levels of each run (0: a request run) */
    double sweep_p99[COBSFIT_MAX_RUNS];  /* a sweep's worst level's fitted error of TTFT P99, % (NAN: not given) */
    double sweep_tps[COBSFIT_MAX_RUNS];  /* and of output tokens/s, % */
    double mean_abs;          /* mean |err| over runs and statistics, % */
    double loro_abs;          /* mean |loro|, % (NAN with one run) */
    double start_scale;       /* the common factor on the roofline's terms at the start */
    int evals;                /* simulations run */
    double wall_s;            /* wall-clock time of the fit, s */
} cobsfit_result;

/* A fit's bounds and progress (calib fit observed --max-minutes, --progress):
 * a fit replays every run (every level of a sweep) per evaluation of the
 * objective, hundreds of times, so a large sweep can take long.  The fit stops
 * when its wall-clock time passes MAX_S (returns 1, nothing stored, the
 * message says how far it got); PROGRESS, when not NULL, gets a line at the
 * first simulation and then about every PROGRESS_S seconds: the phase,
 * simulations run, elapsed time and the time one pass over the runs takes. */
typedef struct cobsfit_opts {
    double max_s;             /* s: wall-clock bound of the whole fit (<= 0: none) */
    FILE *progress;           /* progress lines (NULL: none) */
    double progress_s;        /* s: between progress lines (<= 0: 1) */
} cobsfit_opts;

/* The bounds of the fits that follow (default: none, no progress). */
void cobsfit_set_opts(const cobsfit_opts *o);

/* Fits the request runs stored for MODEL on GPU (catalog names or aliases),
 * WEIGHTS (NULL: the model's) and, when TP > 0, that TP; stores the model
 * (source "observed", its runs in calib_fit_observed) in the caller's
 * transaction and fills OUT.  Returns 0; 2 on bad input (unknown model or GPU,
 * no stored run matches, a run that cannot be replayed: ERR one line, nothing
 * stored); 1 on a runtime failure. */
int cobsfit_fit(sqlite3 *db, const char *model, const char *gpu, const char *weights, int tp, int data, const char *tool,
                cobsfit_result *out, char *err, size_t errlen);

/* Prints R's errors (per run and statistic, against the roofline's, and left
 * out) and time to OUT. */
void cobsfit_print(const cobsfit_result *r, FILE *out);

#endif
