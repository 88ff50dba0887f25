/* runsave.c -- saving one run and its results (configuration, statistics, time
 * series) in the run database, in a single transaction. */
#include "store/store.h"
#include "store/storedb.h"
#include "engine/errmsg.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Binds a text, or NULL for a NULL pointer (NOT NULL columns then reject it). */
static int bind_text(sqlite3_stmt *st, int i, const char *s)
{
    return s ? sqlite3_bind_text(st, i, s, -1, SQLITE_STATIC) : sqlite3_bind_null(st, i);
}

/* Binds a double, or NULL for a NAN. */
static int bind_real(sqlite3_stmt *st, int i, double v)
{
    return isnan(v) ? sqlite3_bind_null(st, i) : sqlite3_bind_double(st, i, v);
}

/* Readies ST, an INSERT run once per row, for the next row's bindings. */
static void next_row(sqlite3_stmt *st)
{
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
}

/* Inserts the row bound to ST when binding it went well (RC is SQLITE_OK).
 * Returns SQLITE_OK, or the first failing SQLite code (a bind's or the step's). */
static int insert_row(sqlite3_stmt *st, int rc)
{
    if (rc == SQLITE_OK) rc = sqlite3_step(st);
    return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

static int insert_run(sqlite3_stmt *st, const store_run *r)
{
    char hash[17];
    int rc = SQLITE_OK;

    snprintf(hash, sizeof hash, "%016" PRIx64, r->scenario_hash);
    if (rc == SQLITE_OK) rc = bind_text(st, 1, r->scenario_path);
    if (rc == SQLITE_OK) rc = bind_text(st, 2, r->scenario_text);
    if (rc == SQLITE_OK) rc = sqlite3_bind_text(st, 3, hash, -1, SQLITE_TRANSIENT);
    if (rc == SQLITE_OK) rc = sqlite3_bind_int64(st, 4, seed_to_db(r->seed));
    if (rc == SQLITE_OK) rc = sqlite3_bind_int(st, 5, r->replications);
    if (rc == SQLITE_OK) rc = bind_text(st, 6, r->version);
    if (rc == SQLITE_OK) rc = bind_text(st, 7, r->started_at);
    if (rc == SQLITE_OK) rc = bind_real(st, 8, r->wall_s);
    if (rc == SQLITE_OK) rc = bind_text(st, 9, r->status);
    if (rc == SQLITE_OK) rc = bind_text(st, 10, r->json);
    return insert_row(st, rc);
}

static int insert_kv(sqlite3_stmt *st, int64_t id, const store_kv *kv)
{
    int rc = SQLITE_OK;
    next_row(st);
    if (rc == SQLITE_OK) rc = sqlite3_bind_int64(st, 1, id);
    if (rc == SQLITE_OK) rc = bind_text(st, 2, kv->section);
    if (rc == SQLITE_OK) rc = bind_text(st, 3, kv->key);
    if (rc == SQLITE_OK) rc = bind_text(st, 4, kv->value);
    return insert_row(st, rc);
}

static int insert_ts(sqlite3_stmt *st, int64_t id, const ts_row *t)
{
    int rc = SQLITE_OK;
    next_row(st);
    if (rc == SQLITE_OK) rc = sqlite3_bind_int64(st, 1, id);
    if (rc == SQLITE_OK) rc = sqlite3_bind_text(st, 2, "", -1, SQLITE_STATIC);
    if (rc == SQLITE_OK) rc = bind_real(st, 3, t->t0_s);
    if (rc == SQLITE_OK) rc = bind_real(st, 4, t->t1_s);
    if (rc == SQLITE_OK) rc = sqlite3_bind_int64(st, 5, (int64_t) t->arrivals);
    if (rc == SQLITE_OK) rc = sqlite3_bind_int64(st, 6, (int64_t) t->retries);
    if (rc == SQLITE_OK) rc = sqlite3_bind_int64(st, 7, (int64_t) t->served);
    if (rc == SQLITE_OK) rc = sqlite3_bind_int64(st, 8, (int64_t) t->errors);
    if (rc == SQLITE_OK) rc = bind_real(st, 9, t->throughput_rps);
    if (rc == SQLITE_OK) rc = bind_real(st, 10, t->ttft_p50_ms);
    if (rc == SQLITE_OK) rc = bind_real(st, 11, t->ttft_p99_ms);
    if (rc == SQLITE_OK) rc = bind_real(st, 12, t->e2e_p50_ms);
    if (rc == SQLITE_OK) rc = bind_real(st, 13, t->e2e_p99_ms);
    if (rc == SQLITE_OK) rc = bind_real(st, 14, t->queue);
    if (rc == SQLITE_OK) rc = bind_real(st, 15, t->replicas);
    if (rc == SQLITE_OK) rc = bind_real(st, 16, t->utilization);
    return insert_row(st, rc);
}

static int insert_stat(sqlite3_stmt *st, int64_t id, const store_stat *s)
{
    int rc = SQLITE_OK;
    next_row(st);
    if (rc == SQLITE_OK) rc = sqlite3_bind_int64(st, 1, id);
    if (rc == SQLITE_OK) rc = sqlite3_bind_int(st, 2, s->replication);
    if (rc == SQLITE_OK) rc = bind_text(st, 3, s->scope);
    if (rc == SQLITE_OK) rc = bind_text(st, 4, s->metric);
    if (rc == SQLITE_OK) rc = bind_text(st, 5, s->stat);
    if (rc == SQLITE_OK) rc = bind_real(st, 6, s->value);
    if (rc == SQLITE_OK) rc = bind_real(st, 7, s->ci95);
    if (rc == SQLITE_OK) rc = bind_text(st, 8, s->text);
    return insert_row(st, rc);
}

int store_save_run(sqlite3 *db, const store_run *r, int64_t *id, char *err, size_t errlen)
{
    /* Inside a caller's transaction (store_begin) a savepoint: the run is
     * undone alone on error, and kept or undone with the rest by the caller. */
    int ret = -1, began = 0, nested = !sqlite3_get_autocommit(db);
    int64_t run_id;
    sqlite3_stmt *run_st = NULL, *kv_st = NULL, *stat_st = NULL, *ts_st = NULL;

    if (!r || (r->nconfig && !r->config) || (r->nstats && !r->stats) || (r->nts && !r->ts)) {
        errmsg_set(err, errlen, "cannot save run: incomplete run record");
        goto done;
    }
    if (sqlite3_exec(db, nested ? "SAVEPOINT store_save_run" : "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
        goto db_error;
    began = 1;
    if (sqlite3_prepare_v2(db,
            "INSERT INTO runs (scenario_path, scenario_text, scenario_hash, seed,"
            " replications, version, started_at, wall_s, status, json)"
            " VALUES (?,?,?,?,?,?,?,?,?,?)", -1, &run_st, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(db,
            "INSERT INTO run_config (run_id, section, key, value) VALUES (?,?,?,?)",
            -1, &kv_st, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(db, STATS_INSERT, -1, &stat_st, NULL) != SQLITE_OK)
        goto db_error;

    /* A scenario's entry named like a built-in one overrode it for that run
     * only (its text is stored with the run): the built-in entry stays. */
    for (size_t i = 0; i < r->ngpus; i++)
        if (!catalog_is_builtin(db, "gpus", r->gpus[i].name) &&
            catalog_put_gpu(db, &r->gpus[i], err, errlen) != 0)
            goto done;
    for (size_t i = 0; i < r->nmodels; i++)
        if (!catalog_is_builtin(db, "models", r->models[i].name) &&
            catalog_put_model(db, &r->models[i], err, errlen) != 0)
            goto done;
    if (insert_run(run_st, r) != SQLITE_OK)
        goto db_error;
    run_id = sqlite3_last_insert_rowid(db);
    for (size_t i = 0; i < r->nconfig; i++)
        if (insert_kv(kv_st, run_id, &r->config[i]) != SQLITE_OK)
            goto db_error;
    for (size_t i = 0; i < r->nstats; i++)
        if (insert_stat(stat_st, run_id, &r->stats[i]) != SQLITE_OK)
            goto db_error;
    if (r->nts > 0 && sqlite3_prepare_v2(db, TIMESERIES_INSERT, -1, &ts_st, NULL) != SQLITE_OK)
        goto db_error;
    for (size_t i = 0; i < r->nts; i++)
        if (insert_ts(ts_st, run_id, &r->ts[i]) != SQLITE_OK)
            goto db_error;
    if (r->extra && r->extra(db, run_id, r->extra_arg, err, errlen) != 0)
        goto done;
    if (sqlite3_exec(db, nested ? "RELEASE store_save_run" : "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
        goto db_error;
    began = 0;
    if (id)
        *id = run_id;
    ret = 0;
    goto done;

db_error:
    errmsg_set(err, errlen, "%s: cannot save run: %s", db_path(db), sqlite3_errmsg(db));
done:
    sqlite3_finalize(run_st);
    sqlite3_finalize(kv_st);
    sqlite3_finalize(stat_st);
    sqlite3_finalize(ts_st);
    /* A disk-full error may have rolled the whole transaction back already:
     * then there is no savepoint left, and the statements fail harmlessly. */
    if (began)
        sqlite3_exec(db, nested ? "ROLLBACK TO store_save_run; RELEASE store_save_run" : "ROLLBACK", NULL, NULL, NULL);
    return ret;
}
