/* latsim/store.h -- the run database (public): runs and their results kept
 * in SQLite, the planner's tables (SLO terms, CDF points, sweeps, plans,
 * baselines), and simulation tasks run in forked worker processes.
 *
 * One database file (default ./latsim.db) holds every run: the scenario text
 * and its hash, the effective configuration (after --set), the seed, the
 * program version, start time, wall time, status, and every reported
 * statistic, plus the catalog tables (latsim/catalog.h).  A run is written in
 * one transaction: either all of it is there or none of it is.
 *
 * A task (scenario file, --set overrides, seed) is self-contained: a worker
 * loads the scenario, applies the overrides, resolves the catalog from the
 * database file (read only), simulates and flattens the results.  The result
 * depends only on the task: not on the number of workers or their order.
 */
#ifndef LATSIM_PUBLIC_STORE_H
#define LATSIM_PUBLIC_STORE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sqlite3.h>
#include "latsim/catalog.h"   /* gpu_spec, model_spec */
#include "latsim/report.h"    /* report, store_stat */
#include "latsim/scenario.h"  /* scenario */
#include "latsim/slo.h"       /* slo_result */
#include "latsim/tseries.h"   /* ts_row */

/* ---- runs ------------------------------------------------------------------ */

typedef struct store_kv {        /* one effective configuration entry */
    const char *section;         /* e.g. "pool cpu" */
    const char *key;             /* e.g. "servers" */
    const char *value;           /* as written */
} store_kv;

typedef struct store_run {
    const char *scenario_path;
    const char *scenario_text;   /* the file as read */
    uint64_t scenario_hash;      /* FNV-1a 64 of the effective configuration */
    uint64_t seed;
    int replications;
    const char *version;         /* LATSIM_VERSION */
    const char *started_at;      /* ISO 8601 UTC */
    double wall_s;               /* wall-clock seconds of the run */
    const char *status;          /* "ok" or "saturated" */
    const char *json;            /* the report as printed by --json */
    const store_kv *config; size_t nconfig;
    const store_stat *stats; size_t nstats;
    const gpu_spec *gpus; size_t ngpus;       /* catalog additions stored with the run */
    const model_spec *models; size_t nmodels;
    const ts_row *ts; size_t nts;             /* the time series (run_timeseries), if any */
    /* Called inside the run's transaction after its rows, to store more about
     * it (planstore_run_extra: SLO terms, CDF points); NULL for none.  Returns 0 or -1 + ERR. */
    int (*extra)(sqlite3 *db, int64_t run_id, void *arg, char *err, size_t errlen);
    void *extra_arg;
} store_run;

/* Opens (creating if needed) the database at PATH and its schema, including the
 * catalog (catalog_init); a database of an older schema is migrated (one
 * transaction: see store.c, Migration).  Returns 0 with *DB set, or -1 with a
 * message naming PATH in ERR (and *DB NULL). */
int store_open(const char *path, sqlite3 **db, char *err, size_t errlen);
void store_close(sqlite3 *db);

/* 1 when DB holds a table named NAME; 0 when it does not, or when the query
 * fails (an unreadable database has none). */
int store_has_table(sqlite3 *db, const char *name);

/* Opens an existing latsim database at PATH read-only (SQLITE_OPEN_READONLY):
 * nothing is created or written, not even into an empty or foreign file, which
 * is refused ("not a latsim database").  Nothing is written: a database of an
 * older schema (version 1, names stored as numbers) is read converted (a
 * temporary view).  Returns 0 with *DB set, or -1 + ERR. */
int store_open_readonly(const char *path, sqlite3 **db, char *err, size_t errlen);

/* Opens (creating the file if needed) the database at PATH and begins a write
 * transaction (BEGIN IMMEDIATE) in which the schema is created when missing:
 * nothing reaches the file until the caller's COMMIT, and after a ROLLBACK the
 * file is byte for byte what it was (a file that did not exist is left empty:
 * callers that must not create it validate first, e.g. on ":memory:").  An
 * existing PATH that is not a regular file is refused.  Returns 0 with *DB set
 * and the transaction open, or -1 + ERR (*DB NULL, the file unchanged). */
int store_open_tx(const char *path, sqlite3 **db, char *err, size_t errlen);

/* Opens the database at PATH for look-ups only (catalog, baselines, stored
 * runs): an existing latsim database read-only (store_open_readonly); when PATH
 * is NULL, "", does not exist or is an empty file, an in-memory database with
 * the schema and the built-in catalog.  PATH is never written.  Returns 0 with
 * *DB set, or -1 + ERR. */
int store_open_lookup(const char *path, sqlite3 **db, char *err, size_t errlen);

/* Checks, before a run, that store_save_run() will be able to write to DB
 * (PATH names it in messages): runs PRAGMA quick_check, takes and releases the
 * write lock, and prepares the inserts against the schema.  Returns 0, or -1 + ERR. */
int store_check_writable(sqlite3 *db, const char *path, char *err, size_t errlen);

/* The same check on the existing database file PATH without changing it: the
 * schema is created and the inserts prepared inside a write transaction that is
 * rolled back (an empty file stays empty).  Returns 0, or -1 + ERR. */
int store_check_path(const char *path, char *err, size_t errlen);

/* Writes one run in a single transaction (inside a transaction the caller
 * opened, e.g. store_open_tx, a savepoint of it).  Returns 0 with *ID set, or
 * -1 + ERR (nothing written). */
int store_save_run(sqlite3 *db, const store_run *r, int64_t *id, char *err, size_t errlen);

/* A transaction around several writes (a sweep: its header, points and runs),
 * so that a failure part-way leaves the database as it was: BEGIN IMMEDIATE.
 * Returns 0 or -1 + ERR. */
int store_begin(sqlite3 *db, char *err, size_t errlen);
/* Commits it.  Returns 0 or -1 + ERR (the transaction is then rolled back). */
int store_commit(sqlite3 *db, char *err, size_t errlen);
/* Rolls back the open transaction, if any (SQLite may have done so itself
 * after a disk-full error). */
void store_rollback(sqlite3 *db);

/* `latsim runs`: one line per run, newest last.  Returns 0 or -1 + ERR. */
int store_list_runs(sqlite3 *db, FILE *out, char *err, size_t errlen);

/* `latsim show ID`: the run's metadata, configuration and statistics.  Returns 0,
 * 1 when there is no such run (ERR says so), -1 on error. */
int store_show_run(sqlite3 *db, int64_t id, FILE *out, char *err, size_t errlen);

/* FNV-1a 64-bit hash of a byte string (the scenario hash). */
uint64_t store_hash(const void *data, size_t n, uint64_t h);
#define STORE_HASH_INIT 0xcbf29ce484222325ULL

/* The effective configuration a run is stored with: every entry of its
 * scenario file after the --set overrides, in file order, their hash (FNV-1a 64
 * of each section, key and value with its NUL, in order: the "scenario_hash"
 * of the JSON) and the file's text as read. */
typedef struct store_config {
    store_kv *kv;             /* the entries (strings owned by the scenario, or by own) */
    size_t n;                 /* how many */
    uint64_t hash;            /* their hash */
    const char *text;         /* the scenario file as read */
    void *own;                /* the file read again by store_config_read, else NULL */
} store_config;

/* The configuration of loaded scenario S (its strings are S's: free OUT before
 * S).  Returns 0, or -1 + ERR (out of memory); OUT must be store_config_free()d
 * either way. */
int store_config_of(const scenario *s, store_config *out, char *err, size_t errlen);

/* The configuration of scenario file PATH with the NSETS overrides SETS, read
 * again as written (not validated: a task's, which was).  Returns 0, or -1 +
 * ERR (an unreadable file, a bad override, out of memory); OUT must be
 * store_config_free()d either way. */
int store_config_read(const char *path, const char *const *sets, int nsets, store_config *out,
                      char *err, size_t errlen);
void store_config_free(store_config *c);

/* ---- the planner's tables --------------------------------------------------- */

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

/* Starts a sweep or plan row; *ID is set.  Returns 0 or -1 + ERR. */
int planstore_sweep_begin(sqlite3 *db, const char *kind, const char *path, const char *args,
                          const char *started_at, int64_t *id, char *err, size_t errlen);
/* Completes it with its wall time, simulation count, result (goodput rate or
 * $/h, NAN none) and JSON.  Returns 0 or -1 + ERR. */
int planstore_sweep_end(sqlite3 *db, int64_t id, double wall_s, int sims, double result, const char *json,
                        char *err, size_t errlen);

/* This process's name as the owner of task claims: "host pid start" (the
 * start time of the process, so that a reused pid is another owner). */
void planstore_owner(char *buf, size_t n);

/* Claims task IDX of sweep SWEEP_ID for OWNER (planstore_owner) in one
 * transaction of its own (BEGIN IMMEDIATE: two processes' claims are
 * serialised): granted when the task is not stored (sweep_points) and not
 * claimed by another process that is still running on this host (a killed
 * one's claims are taken over; one of another host counts as running).
 * Must be called outside a transaction.  Returns 1 claimed, 0 not (stored, or
 * another's), -1 + ERR. */
int planstore_claim(sqlite3 *db, int64_t sweep_id, int idx, const char *owner, char *err, size_t errlen);

/* Records RUN_ID as the baseline of its scenario path.  Returns 0, 1 when there
 * is no such run (ERR says so), -1 on error. */
int planstore_baseline_accept(sqlite3 *db, int64_t run_id, char *err, size_t errlen);

/* The last accepted baseline run of scenario PATH: 1 with *RUN_ID set, 0 when
 * there is none, -1 on error + ERR. */
int planstore_baseline_of(sqlite3 *db, const char *path, int64_t *run_id, char *err, size_t errlen);

/* One simulated point of a stored plan (planstore_plan_of_run). */
typedef struct plan_point {
    char settings[400];       /* its --set overrides, "; "-separated */
    char role[16];            /* "candidate", "confirm", "goodput" ... */
    double usd_per_hour;      /* the configuration's cost, $/h */
    int slo_met;              /* 1 met, 0 missed */
} plan_point;

/* The latest stored plan that simulated run RUN_ID: 1 with *PLAN_ID, *JSON (the
 * plan's JSON as `plan --json` prints it, malloc'd; NULL when the plan did not
 * finish) and *PTS (malloc'd, *NPTS of them, by cost) set; 0 when RUN_ID comes
 * from no plan; -1 on error + ERR. */
int planstore_plan_of_run(sqlite3 *db, int64_t run_id, int64_t *plan_id, char **json, plan_point **pts, int *npts,
                          char *err, size_t errlen);

/* Reads run RUN_ID's aggregate rows (replication -1) and CDF points into OUT
 * (report_free it), with *PATH (malloc'd, may be NULL) its scenario path.
 * Returns 0, 1 when there is no such run, -1 on error + ERR. */
int planstore_load_run(sqlite3 *db, int64_t run_id, report *out, char **path, char *err, size_t errlen);

/* Prints run RUN_ID's stored SLO terms to OUT as `latsim run` does ("slo MET" /
 * "slo NOT MET", a line per term); nothing when it has none (or the database
 * predates the table).  Returns 0, or -1 with ERR on a database error. */
int planstore_show_slo(sqlite3 *db, int64_t run_id, FILE *out, char *err, size_t errlen);

/* ---- tasks ------------------------------------------------------------------ */

#define TASK_MAX_SETS 64

typedef struct task {
    const char *path;             /* scenario file */
    const char *sets[TASK_MAX_SETS]; /* overrides "section.key=value" (not owned) */
    int nsets;
    uint64_t seed;                /* run seed (0: the scenario's [sim] seed) */
} task;

typedef struct task_out {
    int status;                   /* 0 done, 1 runtime failure, 2 bad input */
    char err[512];                /* the one-line message when status != 0 */
    report rep;                   /* rows and CDF points (status 0) */
    uint64_t seed;                /* the seed used */
    double rate;                  /* the workload's mean arrival rate, req/s */
    double usd_per_hour;          /* cost of the configuration, $/h: GPUs x price + generic servers x usd_per_hour */
    double wall_s;                /* wall-clock seconds of the simulation */
} task_out;

void task_out_free(task_out *o);

/* Stores task T's result O as a run (its configuration re-read from T's file
 * and overrides, the version and time it was stored at), with the SLO terms
 * SLO and the sweep or plan point X (may be NULL).  Returns 0 with *ID set,
 * or -1 + ERR. */
int task_save_run(sqlite3 *db, const task *t, const task_out *o, const slo_result *slo, planstore_extra *x,
                  int64_t *id, char *err, size_t errlen);

/* Progress callback of task_run_all: DONE of N tasks finished. */
typedef void (*task_progress)(int done, int n, void *arg);

/* Runs N tasks on up to JOBS worker processes (JOBS <= 0: one per online CPU;
 * under mpirun one) and, under mpirun, on every other rank: task_run_stream
 * with the tasks in order, so a batch of sweep or plan is handed out as an
 * exploration's is.  Fills OUTS[i] for TS[i]; PROGRESS (may be NULL) after
 * each.  A lost rank's tasks run elsewhere (taskmpi_lost names it).  Returns
 * 0, or -1 (out of memory: the unfinished OUTS say so in their status 1). */
int task_run_all(const task *ts, int n, int jobs, const char *dbpath, task_out *outs,
                 task_progress progress, void *arg);

/* Checks that task T would run (its scenario loads, resolves against the
 * catalog of DB and fits in memory) without simulating; *WEIGHT (may be NULL)
 * is its expected request count (arrival rate x duration), for handing out the
 * largest first.  Returns 0, or -1 with the reason in ERR. */
int task_check(const task *t, sqlite3 *db, double *weight, char *err, size_t errlen);

/* Called by task_run_stream as each task completes: I its index, O its
 * outcome (the callee's: task_out_free it); BATCH_END 1 on the last of the
 * results that arrived together (commit then).  Returns 0, or -1 to stop. */
typedef int (*task_sink)(int i, task_out *o, int batch_end, void *arg);

/* Runs the NORDER tasks TS[ORDER[k]] (of N), in that order, on JOBS local
 * worker processes (<= 0: one per CPU; under MPI one) and, under mpirun, on
 * every other rank (taskmpi_serve), calling SINK as each completes.  Every
 * result goes through task_out_encode/decode, as a worker's does, so results
 * do not depend on where a task ran.  A rank that fails or is silent for
 * task_rank_timeout_s() is lost: its task runs elsewhere and its number is
 * added to LOST ("1, 3").  Returns the number of ranks lost (0: none), or -1
 * (out of memory, or SINK stopped it). */
int task_run_stream(const task *ts, int n, const int *order, int norder, int jobs, const char *dbpath,
                    task_sink sink, void *arg, char *lost, size_t lostlen);

/* Called by task_run_stream_claimed just before task I is handed out (ARG:
 * the sink's): 1 to run it here, 0 when another process has it (it counts as
 * finished, with no SINK call), -1 to stop (the run returns -1). */
typedef int (*task_claim)(int i, void *arg);

/* task_run_stream, each task claimed first (CLAIM, may be NULL: all run here),
 * so that processes sharing a database (two `explore --resume`) never run one
 * task twice. */
int task_run_stream_claimed(const task *ts, int n, const int *order, int norder, int jobs, const char *dbpath,
                            task_claim claim, task_sink sink, void *arg, char *lost, size_t lostlen);

/* ---- MPI (make MPI=1; otherwise one process) -------------------------------- */

/* Starts MPI when the program was built with it and started by mpirun; else
 * nothing.  Returns the world size (1 without MPI). */
int taskmpi_init(int *argc, char ***argv);
/* This process's rank (0 without MPI) and the world size (1 without MPI). */
int taskmpi_rank(void);
int taskmpi_size(void);
/* 1 when built with MPI (make MPI=1). */
int taskmpi_built(void);
/* Rank 0: tells every worker rank to finish; then MPI_Finalize, or, when a
 * rank was lost (Open MPI would wait for it), _exit(STATUS) after flushing.
 * Any rank; nothing without MPI. */
void taskmpi_finalize(int status);
/* Ranks > 0: runs the tasks rank 0 hands out (each arrives whole: any
 * command's, batch after batch) until it says stop.  Returns 0, or -1 (rank 0
 * lost or MPI failed). */
int taskmpi_serve(void);
/* Rank 0: the ranks lost so far, "1, 3" into BUF (LEN bytes).  Returns their number. */
int taskmpi_lost(char *buf, size_t len);
/* The command named in the warnings about lost ranks ("explore" unless set). */
void taskmpi_set_command(const char *name);

/* $ per hour of a resolved scenario's configuration: every LLM pool's GPUs x
 * their catalog price, plus every generic pool's servers x usd_per_hour. */
double task_config_cost(const scenario *sc);

/* The number of online CPUs (at least 1). */
int task_cpus(void);

#endif
