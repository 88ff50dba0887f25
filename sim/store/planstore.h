/* planstore.h -- the planner's tables in the run database: SLO terms and CDF
 * points of a run, sweeps and plans (their points are ordinary runs), and
 * accepted baselines.
 *
 * The tables are created (IF NOT EXISTS) the first time something is written,
 * so databases made by earlier versions keep working unchanged; readers treat
 * a missing table as empty.
 *   run_slo(run_id, class, term, limit_value, value, margin, met)
 *   run_cdf(run_id, metric, p, value)                       -- ms
 *   sweeps(id, kind 'sweep'|'plan', scenario_path, args, started_at, wall_s,
 *          simulations, result, json)
 *   sweep_points(sweep_id, idx, run_id, role, settings, seed, rate, usd_per_hour, slo_met)
 *   sweep_claims(sweep_id, idx, owner)                      -- explore's task claims
 *   baselines(id, scenario_path, run_id, accepted_at)
 */
#ifndef LATSIM_PLANSTORE_H
#define LATSIM_PLANSTORE_H

#include <stdint.h>
#include <stdio.h>
#include <sqlite3.h>
#include "report/report.h"
#include "report/slo.h"
#include "latsim/store.h"   /* planstore_extra and the planner's reads and writes: public */

/* Creates the planner's tables when missing.  Returns 0 or -1 + ERR. */
int planstore_init(sqlite3 *db, char *err, size_t errlen);

/* A stored run's or sweep's kind: 'r' run, 's' sweep, 'p' plan, 0 none. */
int planstore_kind_of(sqlite3 *db, int64_t id, int want_sweep);

#endif
