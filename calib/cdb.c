/* cdb.c -- the calibration store in SQLite (see cdb.h for the tables).
 *
 * Every function reports SQLite failures as one line in ERR and returns -1;
 * none of them exits.  Measurements are inserted through one prepared
 * statement (cdb_writer) so that importing a whole profile set stays fast.
 */
#include "cdb.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <csv.h>

#include "cobsdb.h"
#include "engine/errmsg.h"

static const char *SCHEMA =
    "CREATE TABLE IF NOT EXISTS calib_meas ("
    " id INTEGER PRIMARY KEY,"
    " source TEXT NOT NULL, what TEXT NOT NULL, name TEXT NOT NULL DEFAULT '',"
    " model TEXT NOT NULL DEFAULT '' COLLATE NOCASE, gpu TEXT NOT NULL DEFAULT '' COLLATE NOCASE,"
    " weights TEXT NOT NULL DEFAULT '', tp INTEGER NOT NULL DEFAULT 1,"
    " batch REAL NOT NULL DEFAULT 0, tokens REAL NOT NULL DEFAULT 0,"
    " context REAL NOT NULL DEFAULT 0, bytes REAL NOT NULL DEFAULT 0,"
    " time_ms REAL NOT NULL, std_ms REAL, repeats INTEGER NOT NULL DEFAULT 0,"
    " device TEXT NOT NULL DEFAULT '', driver TEXT NOT NULL DEFAULT '',"
    " measured_at TEXT NOT NULL DEFAULT '', tool TEXT NOT NULL DEFAULT '',"
    " file TEXT NOT NULL DEFAULT '', line INTEGER NOT NULL DEFAULT 0);"
    "CREATE INDEX IF NOT EXISTS calib_meas_key ON calib_meas (what, model, gpu, tp);"
    "CREATE TABLE IF NOT EXISTS calib_fits ("
    " id INTEGER PRIMARY KEY, kind TEXT NOT NULL,"
    " model TEXT NOT NULL DEFAULT '' COLLATE NOCASE, gpu TEXT NOT NULL DEFAULT '' COLLATE NOCASE,"
    " weights TEXT NOT NULL DEFAULT '', tps TEXT NOT NULL DEFAULT '', source TEXT NOT NULL DEFAULT '',"
    " n_points INTEGER NOT NULL, r2 REAL, mape REAL, folds INTEGER NOT NULL DEFAULT 0,"
    " tok_max REAL NOT NULL DEFAULT 0, seq_max REAL NOT NULL DEFAULT 0, ctx_max REAL NOT NULL DEFAULT 0,"
    " created_at TEXT NOT NULL, tool TEXT NOT NULL DEFAULT '', note TEXT NOT NULL DEFAULT '');"
    "CREATE TABLE IF NOT EXISTS calib_coefs ("
    " fit_id INTEGER NOT NULL REFERENCES calib_fits(id), idx INTEGER NOT NULL,"
    " name TEXT NOT NULL, value REAL NOT NULL, se REAL, status TEXT NOT NULL,"
    " PRIMARY KEY (fit_id, idx));"
    "CREATE TABLE IF NOT EXISTS calib_fit_meas ("
    " fit_id INTEGER NOT NULL REFERENCES calib_fits(id),"
    " meas_id INTEGER NOT NULL REFERENCES calib_meas(id));"
    "CREATE INDEX IF NOT EXISTS calib_fit_meas_fit ON calib_fit_meas (fit_id);";

static int exec(sqlite3 *db, const char *sql, const char *what, char *err, size_t errlen)
{
    char *msg = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK) {
        errmsg_set(err, errlen, "calibration store: %s: %s", what, msg ? msg : sqlite3_errmsg(db));
        sqlite3_free(msg);
        return -1;
    }
    return 0;
}

int cdb_init(sqlite3 *db, char *err, size_t errlen)
{
    if (exec(db, SCHEMA, "cannot create tables", err, errlen) != 0) return -1;
    return cobsdb_init(db, err, errlen);   /* the observed runs' tables (cobsdb.h) */
}

/* 1 when the database file itself (schema "main", not "temp") holds TABLE. */
static int main_has(sqlite3 *db, const char *table)
{
    sqlite3_stmt *st = NULL;
    int n = 0;
    if (sqlite3_prepare_v2(db, "SELECT count(*) FROM main.sqlite_master WHERE type = 'table' AND name = ?",
                           -1, &st, NULL) == SQLITE_OK) {
        sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC);
        if (sqlite3_step(st) == SQLITE_ROW)
            n = sqlite3_column_int(st, 0);
    }
    sqlite3_finalize(st);
    return n > 0;
}

int cdb_init_readonly(sqlite3 *db, char *err, size_t errlen)
{
    if (main_has(db, "calib_meas") && main_has(db, "calib_fits") && main_has(db, "calib_coefs") &&
        main_has(db, "calib_fit_meas"))
        return 0;
    /* The same tables, empty, in the connection's own temporary schema: nothing
     * reaches the file, and the readers find no measurements and no models. */
    size_t n = strlen(SCHEMA) + 256;
    char *sql = malloc(n), *o = sql;
    if (!sql) {
        errmsg_set(err, errlen, "out of memory");
        return -1;
    }
    for (const char *p = SCHEMA; *p;) {
        static const char tab[] = "CREATE TABLE IF NOT EXISTS ", idx[] = "CREATE INDEX IF NOT EXISTS ";
        if (!strncmp(p, tab, sizeof tab - 1)) {
            o += sprintf(o, "CREATE TEMP TABLE IF NOT EXISTS ");
            p += sizeof tab - 1;
        } else if (!strncmp(p, idx, sizeof idx - 1)) {
            o += sprintf(o, "CREATE INDEX IF NOT EXISTS temp.");
            p += sizeof idx - 1;
        } else {
            *o++ = *p++;
        }
    }
    *o = '\0';
    int rc = exec(db, sql, "cannot read the calibration tables", err, errlen);
    free(sql);
    return rc;
}

int cdb_begin(sqlite3 *db, char *err, size_t errlen)
{
    return exec(db, "BEGIN IMMEDIATE", "cannot start a transaction", err, errlen);
}

int cdb_commit(sqlite3 *db, char *err, size_t errlen)
{
    return exec(db, "COMMIT", "cannot commit", err, errlen);
}

void cdb_rollback(sqlite3 *db)
{
    if (!sqlite3_get_autocommit(db))
        sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
}

int cdb_writer_open(cdb_writer *w, sqlite3 *db, char *err, size_t errlen)
{
    w->db = db;
    w->st = NULL;
    if (sqlite3_prepare_v2(db,
                           "INSERT INTO calib_meas (source, what, name, model, gpu, weights, tp,"
                           " batch, tokens, context, bytes, time_ms, std_ms, repeats, device,"
                           " driver, measured_at, tool, file, line) VALUES"
                           " (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                           -1, &w->st, NULL) != SQLITE_OK) {
        errmsg_set(err, errlen, "calibration store: %s", sqlite3_errmsg(db));
        return -1;
    }
    return 0;
}

static int bind_s(sqlite3_stmt *st, int i, const char *s)
{
    return sqlite3_bind_text(st, i, s ? s : "", -1, SQLITE_STATIC);
}

int cdb_put(cdb_writer *w, const cdb_meas *m, int64_t *id, char *err, size_t errlen)
{
    sqlite3_stmt *st = w->st;
    int rc = SQLITE_OK;
    sqlite3_reset(st);
    const char *txt[] = { m->source, m->what, m->name, m->model, m->gpu, m->weights };
    for (int i = 0; i < 6 && rc == SQLITE_OK; i++)
        rc = bind_s(st, i + 1, txt[i]);
    if (rc == SQLITE_OK) rc = sqlite3_bind_int(st, 7, m->tp);
    if (rc == SQLITE_OK) rc = sqlite3_bind_double(st, 8, m->batch);
    if (rc == SQLITE_OK) rc = sqlite3_bind_double(st, 9, m->tokens);
    if (rc == SQLITE_OK) rc = sqlite3_bind_double(st, 10, m->context);
    if (rc == SQLITE_OK) rc = sqlite3_bind_double(st, 11, m->bytes);
    if (rc == SQLITE_OK) rc = sqlite3_bind_double(st, 12, m->time_ms);
    if (rc == SQLITE_OK)
        rc = isfinite(m->std_ms) ? sqlite3_bind_double(st, 13, m->std_ms) : sqlite3_bind_null(st, 13);
    if (rc == SQLITE_OK) rc = sqlite3_bind_int(st, 14, m->repeats);
    const char *prov[] = { m->device, m->driver, m->measured_at, m->tool, m->file };
    for (int i = 0; i < 5 && rc == SQLITE_OK; i++)
        rc = bind_s(st, 15 + i, prov[i]);
    if (rc == SQLITE_OK) rc = sqlite3_bind_int64(st, 20, m->line);
    if (rc == SQLITE_OK && sqlite3_step(st) != SQLITE_DONE)
        rc = SQLITE_ERROR;
    if (rc != SQLITE_OK) {
        errmsg_set(err, errlen, "calibration store: cannot insert a measurement: %s",
                   sqlite3_errmsg(w->db));
        return -1;
    }
    if (id)
        *id = sqlite3_last_insert_rowid(w->db);
    return 0;
}

void cdb_writer_close(cdb_writer *w)
{
    sqlite3_finalize(w->st);
    w->st = NULL;
}

static void now_iso(char *buf, size_t n)
{
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, n, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static int bind_real_or_null(sqlite3_stmt *st, int i, double v)
{
    return isfinite(v) ? sqlite3_bind_double(st, i, v) : sqlite3_bind_null(st, i);
}

int cdb_save_fit(sqlite3 *db, cdb_fit *f, const int64_t *meas, size_t nmeas, char *err,
                 size_t errlen)
{
    sqlite3_stmt *st = NULL;
    int rc;
    if (!f->created_at[0])
        now_iso(f->created_at, sizeof f->created_at);
    rc = sqlite3_prepare_v2(db,
                            "INSERT INTO calib_fits (kind, model, gpu, weights, tps, source, n_points,"
                            " r2, mape, folds, tok_max, seq_max, ctx_max, created_at, tool, note)"
                            " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", -1, &st, NULL);
    const char *t1[] = { f->kind, f->model, f->gpu, f->weights, f->tps, f->source };
    for (int i = 0; i < 6 && rc == SQLITE_OK; i++)
        rc = bind_s(st, i + 1, t1[i]);
    if (rc == SQLITE_OK) rc = sqlite3_bind_int(st, 7, f->n_points);
    if (rc == SQLITE_OK) rc = bind_real_or_null(st, 8, f->r2);
    if (rc == SQLITE_OK) rc = bind_real_or_null(st, 9, f->mape);
    if (rc == SQLITE_OK) rc = sqlite3_bind_int(st, 10, f->folds);
    if (rc == SQLITE_OK) rc = sqlite3_bind_double(st, 11, f->tok_max);
    if (rc == SQLITE_OK) rc = sqlite3_bind_double(st, 12, f->seq_max);
    if (rc == SQLITE_OK) rc = sqlite3_bind_double(st, 13, f->ctx_max);
    if (rc == SQLITE_OK) rc = bind_s(st, 14, f->created_at);
    if (rc == SQLITE_OK) rc = bind_s(st, 15, f->tool);
    if (rc == SQLITE_OK) rc = bind_s(st, 16, f->note);
    if (rc == SQLITE_OK && sqlite3_step(st) != SQLITE_DONE)
        rc = SQLITE_ERROR;
    sqlite3_finalize(st);
    st = NULL;
    if (rc != SQLITE_OK)
        goto fail;
    f->id = sqlite3_last_insert_rowid(db);
    rc = sqlite3_prepare_v2(db, "INSERT INTO calib_coefs (fit_id, idx, name, value, se, status)"
                            " VALUES (?,?,?,?,?,?)", -1, &st, NULL);
    for (int i = 0; i < f->ncoef && rc == SQLITE_OK; i++) {
        sqlite3_reset(st);
        rc = sqlite3_bind_int64(st, 1, f->id);
        if (rc == SQLITE_OK) rc = sqlite3_bind_int(st, 2, i);
        if (rc == SQLITE_OK) rc = bind_s(st, 3, f->coef[i].name);
        if (rc == SQLITE_OK) rc = sqlite3_bind_double(st, 4, f->coef[i].value);
        if (rc == SQLITE_OK) rc = bind_real_or_null(st, 5, f->coef[i].se);
        if (rc == SQLITE_OK) rc = bind_s(st, 6, f->coef[i].status);
        if (rc == SQLITE_OK && sqlite3_step(st) != SQLITE_DONE)
            rc = SQLITE_ERROR;
    }
    sqlite3_finalize(st);
    st = NULL;
    if (rc != SQLITE_OK)
        goto fail;
    rc = sqlite3_prepare_v2(db, "INSERT INTO calib_fit_meas (fit_id, meas_id) VALUES (?,?)", -1,
                            &st, NULL);
    for (size_t i = 0; i < nmeas && rc == SQLITE_OK; i++) {
        sqlite3_reset(st);
        rc = sqlite3_bind_int64(st, 1, f->id);
        if (rc == SQLITE_OK) rc = sqlite3_bind_int64(st, 2, meas[i]);
        if (rc == SQLITE_OK && sqlite3_step(st) != SQLITE_DONE)
            rc = SQLITE_ERROR;
    }
    sqlite3_finalize(st);
    if (rc == SQLITE_OK)
        return 0;
fail:
    errmsg_set(err, errlen, "calibration store: cannot store the fit: %s", sqlite3_errmsg(db));
    return -1;
}

static void col_copy(sqlite3_stmt *st, int c, char *dst, size_t n)
{
    const unsigned char *t = sqlite3_column_text(st, c);
    snprintf(dst, n, "%s", t ? (const char *)t : "");
}

static double col_real(sqlite3_stmt *st, int c)
{
    return sqlite3_column_type(st, c) == SQLITE_NULL ? NAN : sqlite3_column_double(st, c);
}

int cdb_load_fit(sqlite3 *db, int64_t id, cdb_fit *f, char *err, size_t errlen)
{
    sqlite3_stmt *st = NULL;
    memset(f, 0, sizeof *f);
    if (!main_has(db, "calib_fits")) {
        const char *path = sqlite3_db_filename(db, "main");
        if (path && path[0])
            errmsg_set(err, errlen, "no stored model %lld (no calibration in DB %s: run latsim calib import"
                       " steps FILE.csv, then latsim calib fit)", (long long)id, path);
        else
            errmsg_set(err, errlen, "no stored model %lld (no calibration database: the database file does"
                       " not exist; run latsim calib import steps FILE.csv, then latsim calib fit)", (long long)id);
        return 1;
    }
    if (sqlite3_prepare_v2(db, "SELECT kind, model, gpu, weights, tps, source, n_points, r2, mape,"
                           " folds, tok_max, seq_max, ctx_max, created_at, tool, note"
                           " FROM calib_fits WHERE id = ?", -1, &st, NULL) != SQLITE_OK)
        goto fail;
    sqlite3_bind_int64(st, 1, id);
    int s = sqlite3_step(st);
    if (s == SQLITE_DONE) {
        sqlite3_finalize(st);
        errmsg_set(err, errlen, "no calibrated model with id %lld (see latsim calib list)",
                   (long long)id);
        return 1;
    }
    if (s != SQLITE_ROW)
        goto fail;
    f->id = id;
    col_copy(st, 0, f->kind, sizeof f->kind);
    col_copy(st, 1, f->model, sizeof f->model);
    col_copy(st, 2, f->gpu, sizeof f->gpu);
    col_copy(st, 3, f->weights, sizeof f->weights);
    col_copy(st, 4, f->tps, sizeof f->tps);
    col_copy(st, 5, f->source, sizeof f->source);
    f->n_points = sqlite3_column_int(st, 6);
    f->r2 = col_real(st, 7);
    f->mape = col_real(st, 8);
    f->folds = sqlite3_column_int(st, 9);
    f->tok_max = col_real(st, 10);
    f->seq_max = col_real(st, 11);
    f->ctx_max = col_real(st, 12);
    col_copy(st, 13, f->created_at, sizeof f->created_at);
    col_copy(st, 14, f->tool, sizeof f->tool);
    col_copy(st, 15, f->note, sizeof f->note);
    sqlite3_finalize(st);
    st = NULL;
    if (sqlite3_prepare_v2(db, "SELECT name, value, se, status FROM calib_coefs WHERE fit_id = ?"
                           " ORDER BY idx", -1, &st, NULL) != SQLITE_OK)
        goto fail;
    sqlite3_bind_int64(st, 1, id);
    while ((s = sqlite3_step(st)) == SQLITE_ROW && f->ncoef < CDB_MAX_COEF) {
        cdb_coef *c = &f->coef[f->ncoef++];
        col_copy(st, 0, c->name, sizeof c->name);
        c->value = sqlite3_column_double(st, 1);
        c->se = col_real(st, 2);
        col_copy(st, 3, c->status, sizeof c->status);
    }
    if (s != SQLITE_ROW && s != SQLITE_DONE)
        goto fail;
    sqlite3_finalize(st);
    return 0;
fail:
    errmsg_set(err, errlen, "calibration store: %s", sqlite3_errmsg(db));
    sqlite3_finalize(st);
    return -1;
}

int cdb_tp_listed(const char *tps, int tp, int *lo, int *hi)
{
    int found = 0, mn = 0, mx = 0;
    const char *p = tps;
    while (*p) {
        char *end;
        long v = strtol(p, &end, 10);
        if (end == p)
            break;
        if (mn == 0 || v < mn) mn = (int)v;
        if (v > mx) mx = (int)v;
        if (v == tp) found = 1;
        p = *end == ',' ? end + 1 : end;
    }
    if (lo) *lo = mn;
    if (hi) *hi = mx;
    return found;
}

int cdb_best_fit(sqlite3 *db, const char *kind, const char *model, const char *gpu,
                 const char *weights, int tp, int64_t *id, char *err, size_t errlen)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, "SELECT id, kind, tps, mape FROM calib_fits WHERE model = ? AND gpu = ?"
                           " AND weights = ? AND kind IN ('fitted', 'profile') AND mape >= 0 AND mape <= ?4"
                           " ORDER BY mape, id", -1, &st, NULL) != SQLITE_OK) {
        errmsg_set(err, errlen, "calibration store: %s", sqlite3_errmsg(db));
        return -1;
    }
    sqlite3_bind_text(st, 1, model, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, gpu, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, weights, -1, SQLITE_STATIC);
    sqlite3_bind_double(st, 4, CDB_MAPE_LIMIT);
    int s, found = 0;
    while (!found && (s = sqlite3_step(st)) == SQLITE_ROW) {
        const char *k = (const char *)sqlite3_column_text(st, 1);
        const char *tps = (const char *)sqlite3_column_text(st, 2);
        if (kind && kind[0] && strcmp(kind, k) != 0)
            continue;
        int lo, hi, listed = cdb_tp_listed(tps ? tps : "", tp, &lo, &hi);
        /* A profile is for its own TP degree; a fitted model covers its measured range. */
        if (listed || (strcmp(k, "fitted") == 0 && lo < hi && tp >= lo && tp <= hi)) {
            *id = sqlite3_column_int64(st, 0);
            found = 1;
        }
    }
    sqlite3_finalize(st);
    return found;
}

int64_t cdb_count(sqlite3 *db, const char *what, const char *model, const char *gpu)
{
    sqlite3_stmt *st = NULL;
    int64_t n = -1;
    if (sqlite3_prepare_v2(db, "SELECT count(*) FROM calib_meas WHERE (?1 IS NULL OR what = ?1)"
                           " AND (?2 IS NULL OR model = ?2) AND (?3 IS NULL OR gpu = ?3)", -1, &st,
                           NULL) != SQLITE_OK)
        return -1;
    if (what) sqlite3_bind_text(st, 1, what, -1, SQLITE_STATIC);
    if (model) sqlite3_bind_text(st, 2, model, -1, SQLITE_STATIC);
    if (gpu) sqlite3_bind_text(st, 3, gpu, -1, SQLITE_STATIC);
    if (sqlite3_step(st) == SQLITE_ROW)
        n = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return n;
}

static void fmt_real(char *buf, size_t n, double v)
{
    if (isfinite(v))
        snprintf(buf, n, "%.4g", v);
    else
        snprintf(buf, n, "-");
}

/* Text column I of ST as it may be shown on a terminal (ERRMSG_SHOWN). */
#define SHOWN_COL(st, i) ERRMSG_SHOWN((const char *)sqlite3_column_text(st, i))

int cdb_list(sqlite3 *db, FILE *out, char *err, size_t errlen)
{
    sqlite3_stmt *st = NULL;
    int s;
    if (sqlite3_prepare_v2(db, "SELECT source, what, model, gpu, tp, count(*), min(id), max(id)"
                           " FROM calib_meas GROUP BY source, what, model, gpu, tp"
                           " ORDER BY source, what, model, gpu, tp", -1, &st, NULL) != SQLITE_OK)
        goto fail;
    fprintf(out, "measurements\n  %-10s %-13s %-14s %-16s %4s %7s  %s\n", "source", "what", "model",
            "gpu", "tp", "count", "ids");
    int rows = 0;
    while ((s = sqlite3_step(st)) == SQLITE_ROW) {
        rows++;
        fprintf(out, "  %-10s %-13s %-14s %-16s %4d %7d  %lld-%lld\n", SHOWN_COL(st, 0),
                SHOWN_COL(st, 1), SHOWN_COL(st, 2), SHOWN_COL(st, 3),
                sqlite3_column_int(st, 4), sqlite3_column_int(st, 5),
                (long long)sqlite3_column_int64(st, 6), (long long)sqlite3_column_int64(st, 7));
    }
    if (s != SQLITE_DONE)
        goto fail;
    if (!rows)
        fprintf(out, "  (none: latsim calib import vidur DIR | import steps FILE.csv | cpu | gpu | net)\n");
    sqlite3_finalize(st);
    if (sqlite3_prepare_v2(db, "SELECT id, kind, model, gpu, weights, tps, source, n_points, r2, mape,"
                           " created_at FROM calib_fits ORDER BY id", -1, &st, NULL) != SQLITE_OK)
        goto fail;
    fprintf(out, "\nmodels\n  %4s %-8s %-14s %-16s %-7s %-12s %-10s %6s %7s %8s  %s\n", "id", "kind",
            "model", "gpu", "weights", "tp", "source", "points", "r2", "cv_mape%", "created");
    rows = 0;
    while ((s = sqlite3_step(st)) == SQLITE_ROW) {
        char r2[16], mape[16];
        rows++;
        fmt_real(r2, sizeof r2, col_real(st, 8));
        fmt_real(mape, sizeof mape, col_real(st, 9));
        /* A step-time model cost never uses (cdb.h) says so, as cost would. */
        const char *kind = (const char *)sqlite3_column_text(st, 1);
        int step = kind && (strcmp(kind, "fitted") == 0 || strcmp(kind, "profile") == 0);
        double mv = col_real(st, 9);
        char unused[64] = "";
        if (step && !CDB_MAPE_USABLE(mv))
            snprintf(unused, sizeof unused, isfinite(mv) ? "  not used: cv_mape above %.0f %%"
                     : "  not used: cv_mape unknown", CDB_MAPE_LIMIT);
        fprintf(out, "  %4lld %-8s %-14s %-16s %-7s %-12s %-10s %6d %7s %8s  %s%s\n",
                (long long)sqlite3_column_int64(st, 0), SHOWN_COL(st, 1),
                SHOWN_COL(st, 2), SHOWN_COL(st, 3), SHOWN_COL(st, 4),
                SHOWN_COL(st, 5), SHOWN_COL(st, 6), sqlite3_column_int(st, 7), r2,
                mape, SHOWN_COL(st, 10), unused);
    }
    if (s != SQLITE_DONE)
        goto fail;
    if (!rows)
        fprintf(out, "  (none: latsim calib fit ...)\n");
    sqlite3_finalize(st);
    return cobsdb_list(db, out, err, errlen);
fail:
    errmsg_set(err, errlen, "calibration store: %s", sqlite3_errmsg(db));
    sqlite3_finalize(st);
    return -1;
}

int cdb_show(sqlite3 *db, int64_t id, FILE *out, char *err, size_t errlen)
{
    cdb_fit f;
    int s = cdb_load_fit(db, id, &f, err, errlen);
    if (s != 0)
        return s;
    char r2[16], mape[16];
    fmt_real(r2, sizeof r2, f.r2);
    fmt_real(mape, sizeof mape, f.mape);
    fprintf(out, "model %lld: %s\n", (long long)f.id, ERRMSG_SHOWN(f.kind));
    if (f.model[0])
        fprintf(out, "  for            %s on %s, weights %s, tp %s\n", ERRMSG_SHOWN(f.model), ERRMSG_SHOWN(f.gpu),
                ERRMSG_SHOWN(f.weights), ERRMSG_SHOWN(f.tps));
    else if (f.gpu[0])
        fprintf(out, "  target         %s\n", ERRMSG_SHOWN(f.gpu));
    int observed = !strcmp(f.source, "observed");   /* fitted to observed runs (cobsfit.h) */
    if (observed) {
        fprintf(out, "  source         observed, %d requests replayed\n", f.n_points);
        if (f.folds >= 2)
            fprintf(out, "  r2             %s (statistics, log scale)\n  cv_mape        %s %% (leave-one-run-out, %d runs)\n",
                    r2, mape, f.folds);
        else
            fprintf(out, "  r2             %s (statistics, log scale)\n  cv_mape        %s %% (the fit's own error: one run, "
                    "nothing held out)\n", r2, mape);
    } else {
        fprintf(out, "  source         %s, %d measurements\n", ERRMSG_SHOWN(f.source), f.n_points);
        fprintf(out, "  r2             %s\n  cv_mape        %s %% (%d-fold, held-out points)\n", r2, mape,
                f.folds);
    }
    if (f.tok_max > 0 || f.seq_max > 0)
        fprintf(out, "  measured up to %.0f prompt tokens per step, %.0f decoding sequences, context %.0f\n",
                f.tok_max, f.seq_max, f.ctx_max);
    fprintf(out, "  created        %s by latsim %s\n", ERRMSG_SHOWN(f.created_at), ERRMSG_SHOWN(f.tool));
    if (f.note[0])
        fprintf(out, "  note           %s\n", ERRMSG_SHOWN(f.note));
    if (f.ncoef) {
        fprintf(out, "\n  %-24s %14s %14s  %s\n", "coefficient", "value", "std_error", "status");
        for (int i = 0; i < f.ncoef; i++) {
            char se[24];
            if (isfinite(f.coef[i].se))
                snprintf(se, sizeof se, "%.6g", f.coef[i].se);
            else
                snprintf(se, sizeof se, "-");
            fprintf(out, "  %-24s %14.6g %14s  %s\n", ERRMSG_SHOWN(f.coef[i].name), f.coef[i].value, se,
                    ERRMSG_SHOWN(f.coef[i].status));
        }
    }
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, "SELECT m.source, m.file, m.device, m.driver, m.measured_at, m.tool,"
                           " count(*), min(m.line), max(m.line), min(m.id), max(m.id)"
                           " FROM calib_fit_meas f JOIN calib_meas m ON m.id = f.meas_id"
                           " WHERE f.fit_id = ? GROUP BY m.source, m.file, m.device, m.driver,"
                           " m.measured_at, m.tool ORDER BY min(m.id)", -1, &st, NULL) != SQLITE_OK) {
        errmsg_set(err, errlen, "calibration store: %s", sqlite3_errmsg(db));
        return -1;
    }
    sqlite3_bind_int64(st, 1, id);
    if (!observed) fprintf(out, "\n  measurements (provenance)\n");
    while ((s = sqlite3_step(st)) == SQLITE_ROW) {
        const char *file = (const char *)sqlite3_column_text(st, 1);
        const char *dev = (const char *)sqlite3_column_text(st, 2);
        const char *drv = (const char *)sqlite3_column_text(st, 3);
        const char *when = (const char *)sqlite3_column_text(st, 4);
        fprintf(out, "  %5d x %s", sqlite3_column_int(st, 6), SHOWN_COL(st, 0));
        if (file && file[0])
            fprintf(out, " %s lines %d-%d", ERRMSG_SHOWN(file), sqlite3_column_int(st, 7), sqlite3_column_int(st, 8));
        if (dev && dev[0]) fprintf(out, ", device %s", ERRMSG_SHOWN(dev));
        if (drv && drv[0]) fprintf(out, ", driver %s", ERRMSG_SHOWN(drv));
        if (when && when[0]) fprintf(out, ", %s", ERRMSG_SHOWN(when));
        fprintf(out, ", %s, ids %lld-%lld\n", SHOWN_COL(st, 5),
                (long long)sqlite3_column_int64(st, 9), (long long)sqlite3_column_int64(st, 10));
    }
    sqlite3_finalize(st);
    if (s != SQLITE_DONE) {
        errmsg_set(err, errlen, "calibration store: %s", sqlite3_errmsg(db));
        return -1;
    }
    /* A model fitted to observed runs (cobsfit.h): the runs it replays. */
    st = NULL;
    if (sqlite3_prepare_v2(db, "SELECT r.id, r.format, r.file, r.n_requests, r.imported_at FROM calib_fit_observed f"
                           " JOIN calib_observed_run r ON r.id = f.run_id WHERE f.fit_id = ? ORDER BY r.id", -1, &st,
                           NULL) == SQLITE_OK) {
        sqlite3_bind_int64(st, 1, id);
        int first = 1;
        while (sqlite3_step(st) == SQLITE_ROW) {
            if (first) fprintf(out, "\n  observed runs (provenance)\n");
            first = 0;
            fprintf(out, "  run %lld: %s, %d requests from %s, imported %s\n", (long long)sqlite3_column_int64(st, 0),
                    SHOWN_COL(st, 1), sqlite3_column_int(st, 3), SHOWN_COL(st, 2), SHOWN_COL(st, 4));
        }
    }
    sqlite3_finalize(st);
    return 0;
}

long cdb_export(sqlite3 *db, const char *source, FILE *out, char *err, size_t errlen)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, "SELECT " CDB_CSV_COLUMNS " FROM calib_meas WHERE (?1 IS NULL OR source = ?1)"
                           " ORDER BY id", -1, &st, NULL) != SQLITE_OK) {
        errmsg_set(err, errlen, "calibration store: %s", sqlite3_errmsg(db));
        return -1;
    }
    if (source)
        sqlite3_bind_text(st, 1, source, -1, SQLITE_STATIC);
    fprintf(out, "%s\n", CDB_CSV_COLUMNS);
    long n = 0;
    int s;
    while ((s = sqlite3_step(st)) == SQLITE_ROW) {
        for (int c = 0; c < 18; c++) {
            if (c) fputc(',', out);
            if (sqlite3_column_type(st, c) == SQLITE_NULL) continue;
            if (sqlite3_column_type(st, c) == SQLITE_FLOAT)
                fprintf(out, "%.17g", sqlite3_column_double(st, c));
            else
                csv_fwrite(out, sqlite3_column_text(st, c), (size_t)sqlite3_column_bytes(st, c));
        }
        fputc('\n', out);
        n++;
    }
    sqlite3_finalize(st);
    if (s != SQLITE_DONE) {
        errmsg_set(err, errlen, "calibration store: %s", sqlite3_errmsg(db));
        return -1;
    }
    return n;
}
