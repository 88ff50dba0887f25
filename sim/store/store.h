/* store.h -- runs and their results, kept in SQLite.
 *
 * One database file (default ./latsim.db) holds every run: the scenario text and
 * its hash, the effective configuration (after --set), the seed, the program
 * version, start time, wall time, status, and every reported statistic, plus the
 * catalog tables (catalog.h).  A run is written in one transaction: either all
 * of it is there or none of it is.  Names are stored as names (a pool's kind, its
 * cost model: run_stats.text), never as positions in a table of the code.
 */
#ifndef LATSIM_STORE_H
#define LATSIM_STORE_H

#include <stdint.h>
#include <stdio.h>
#include <sqlite3.h>
#include "core/catalog.h"
#include "run/tseries.h"
#include "report/row.h"

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
     * it (planstore.h: SLO terms, CDF points); NULL for none.  Returns 0 or -1 + ERR. */
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
 * is refused ("not a latsim database").  The one write: a database of an older
 * schema (version 1, names stored as numbers) is first migrated in place, in one
 * transaction of a connection of its own, when the file can be written; when it
 * cannot, its rows are read converted (a temporary view), so that it reads the
 * same either way.  Returns 0 with *DB set, or -1 + ERR. */
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

/* How long a connection waits for another's lock, retrying, before failing:
 * STORE_LOCK_WAIT_S seconds, or $LATSIM_LOCK_WAIT_S (0..86400).  Returns ms. */
#define STORE_LOCK_WAIT_S 120
int store_lock_wait_ms(void);

/* Checks, before a run, that store_save_run() will be able to write to DB
 * (PATH names it in messages): runs PRAGMA quick_check, takes and releases the
 * write lock, and prepares the inserts against the schema.  Returns 0, or -1 + ERR. */
int store_check_writable(sqlite3 *db, const char *path, char *err, size_t errlen);

/* Writes one run in a single transaction (a savepoint inside the caller's
 * transaction when one is open: store_begin).  Returns 0 with *ID set, or -1 +
 * ERR (nothing of the run written). */
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

#endif
