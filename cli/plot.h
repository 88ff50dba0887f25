/* plot.h -- the parts of `latsim plot` (cli/plot.c, plotrun.c, plotsweep.c):
 * the gnuplot helpers and reads of stored statistics its pictures share, and
 * each picture. */
#ifndef LATSIM_CLI_PLOT_H
#define LATSIM_CLI_PLOT_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "gp.h"

/* ---- plot.c: gnuplot and the stored data ----------------------------------- */

/* Writes S as a double-quoted field of a datablock (quotes and controls dropped). */
void dq(FILE *f, const char *s);

/* Starts gnuplot (gp.h) with its output set to OUT.  Returns 0 or -1 (printed). */
int gp_start(gp_proc *g, const char *out, const char *dir);

/* Loads SCRIPT, ends gnuplot and checks OUT was written.  Returns 0 or the exit status. */
int gp_finish(gp_proc *g, const char *dir, const char *script, const char *out);

double stat_of(sqlite3 *db, int64_t run, const char *scope, const char *metric, const char *stat);

/* The probability of a stat name (p99 -> 0.99), NAN for mean/max. */
double stat_p(const char *s);

/* Splits an SLO term key "ttft_p99_ms" into METRIC and STAT.  Returns 0 or -1. */
int split_term(const char *key, char *metric, size_t nm, char *stat, size_t ns);

/* The run's scenario path and seed into PATH / *SEED.  Returns 1 found, 0 not. */
int run_info(sqlite3 *db, int64_t id, char *path, size_t n, long long *seed);

/* One bar: label and mean network / queue / service / overhead of SCOPE in run ID. */
void bar(FILE *f, sqlite3 *db, int64_t id, const char *scope, const char *label);

/* ---- the pictures: run ID's (plotrun.c), sweep or plan ID's (plotsweep.c) --- */
/* Each draws into OUT (its terminal by the extension) with a script of DIR
 * (plots/) and returns 0 or the exit status (after one line). */

int plot_cdf(sqlite3 *db, int64_t id, const char *out, const char *dir);

/* The CDFs of TTFT, TPOT and E2E (queue and E2E without an LLM pool) of the N
 * runs IDS in one picture, a curve per run and metric, with run IDS[0]'s [slo]
 * latency limits.  Returns 0 or the exit status. */
int plot_cdf_runs(sqlite3 *db, const int64_t *ids, int n, const char *out, const char *dir);

/* The run's time series (run_timeseries, `latsim run --timeseries/--interval`):
 * P50/P99 of E2E and TTFT, throughput and replicas up per interval, with the
 * [slo] limits on those percentiles as dashed lines. */
int plot_timeseries_run(sqlite3 *db, int64_t id, const char *out, const char *dir);

int plot_breakdown_run(sqlite3 *db, int64_t id, const char *out, const char *dir);

int plot_sweep(sqlite3 *db, int64_t id, int breakdown, const char *out, const char *dir);

int plot_plan(sqlite3 *db, int64_t id, const char *out, const char *dir);

#endif
