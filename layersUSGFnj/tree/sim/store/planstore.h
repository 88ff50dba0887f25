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
 *   baselines(id, scenario_path, run_id, accepted_at)
 */
#ifndef LATSIM_PLANSTORE_H
#define LATSIM_PLANSTORE_H

#include <stdint.h>
#include <stdio.h>
#include <sqlite3.h>
#include "report/report.h"
#include "report/slo.h"

/* What store_run.extra writes with a run (planstore_run_extra's ARG). */
typedef struct planstore_extra {
    const slo_result *slo;    /* SLO terms, or NULL */
    const report *rep;        /* CDF points of rep, or NULL */
    int64_t sweep_id;         /* > 0: also add a sweep_points row */
    int idx;                  /* its index in the sweep */
    const char *role;         /* "point", "bisect", "candidate", "confirm" */
    const char *settings;     /* the --set overrides, "; "-separated */
    uint64_t seed;
    double rate;              /* workload rate of the point, req/s (NAN unknown) */
    double usd_per_hour;      /* cost of the configuration, $/h */
} planstore_extra;

/* store_run.extra callback: ARG is a planstore_extra.  Returns 0 or -1 + ERR. */
int planstore_run_extra(sqlite3 *db, int64_t run_id, void *arg, char *err, size_t errlen);

/* Creates the planner's tables when missing.  Returns 0 or -1 + ERR. */
int planstore_init(sqlite3 *db, char *err, size_t errlen);

/* Starts a sweep or plan row; *ID is set.  Returns 0 or -1 + ERR. */
int planstore_sweep_begin(sqlite3 *db, const char *kind, const char *path, const char *args,
                          const char *started_at, int64_t *id, char *err, size_t errlen);
/* Completes it with its wall time, simulation count, result (goodput rate or
 * $/h, NAN none) and JSON.  Returns 0 or -1 + ERR. */
int planstore_sweep_end(sqlite3 *db, int64_t id, double wall_s, int sims, double result, const char *json,
                        char *err, size_t errlen);

/* Records RUN_ID as the baseline of its scenario path.  Returns 0, 1 when there
 * is no such run (ERR says so), -1 on error. */
int planstore_baseline_accept(sqlite3 *db, int64_t run_id, char *err, size_t errlen);

/* The last accepted baseline run of scenario PATH: 1 with *RUN_ID set, 0 when
 * there is none, -1 on error + ERR. */
int planstore_baseline_of(sqlite3 *db, const char *path, int64_t *run_id, char *err, size_t errlen);

/* Reads run RUN_ID's aggregate rows (replication -1) and CDF points into OUT
 * (report_free it), with *PATH (malloc'd, may be NULL) its scenario path.
 * Returns 0, 1 when there is no such run, -1 on error + ERR. */
int planstore_load_run(sqlite3 *db, int64_t run_id, report *out, char **path, char *err, size_t errlen);

/* A stored run's or sweep's kind: 'r' run, 's' sweep, 'p' plan, 0 none. */
int planstore_kind_of(sqlite3 *db, int64_t id, int want_sweep);

/* Prints run RUN_ID's stored SLO terms to OUT as `latsim run` does ("slo MET" /
 * "slo NOT MET", a line per term); nothing when it has none (or the database
 * predates the table).  Returns 0, or -1 with ERR on a database error. */
int planstore_show_slo(sqlite3 *db, int64_t run_id, FILE *out, char *err, size_t errlen);

#endif
