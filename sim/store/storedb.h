/* storedb.h -- the run database's internals shared by its files: the statements
 * that insert a run's rows and the conversions of stored values.
 *
 * The run database is three files: store.c (the schema, its migration,
 * opening, transactions, the checks before a run, the scenario hash),
 * runsave.c (saving one run in one transaction) and runshow.c (the
 * `latsim runs` listing and `latsim show ID`).  Internal to them.
 */
#ifndef LATSIM_STOREDB_H
#define LATSIM_STOREDB_H

#include <sqlite3.h>
#include <stdint.h>
#define STATS_INSERT \
    "INSERT INTO run_stats (run_id, replication, scope, metric, stat, value, ci95, text)" \
    " VALUES (?,?,?,?,?,?,?,?)"
#define TIMESERIES_INSERT \
    "INSERT INTO run_timeseries (run_id, scope, t_start_s, t_end_s, arrivals, retries," \
    " served, errors, throughput_rps, ttft_p50_ms, ttft_p99_ms, e2e_p50_ms, e2e_p99_ms," \
    " queue, replicas, utilization) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"

/* The file name of DB for messages ("(memory)" for an in-memory database). */
const char *db_path(sqlite3 *db);

/* A seed as stored: the int64 with the same bit pattern, and back. */
int64_t seed_to_db(uint64_t seed);
uint64_t seed_from_db(int64_t v);

#endif
