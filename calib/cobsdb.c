/* cobsdb.c -- observed runs in the calibration store (see cobsdb.h for the tables).
 *
 * Every function reports SQLite failures as one line in ERR and returns -1;
 * none of them exits or opens a transaction of its own.  A database made before
 * these tables existed (or opened read-only without them) lists no observed run.
 */
#include "cobsdb.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "engine/errmsg.h"

static const char *SCHEMA =
    "CREATE TABLE IF NOT EXISTS calib_observed_run ("
    " id INTEGER PRIMARY KEY, format TEXT NOT NULL, file TEXT NOT NULL, imported_at TEXT NOT NULL,"
    " tool TEXT NOT NULL DEFAULT '', source_tool TEXT NOT NULL DEFAULT '', note TEXT NOT NULL DEFAULT '',"
    " scenario_path TEXT NOT NULL, scenario_text TEXT NOT NULL, pool TEXT NOT NULL,"
    " model TEXT NOT NULL COLLATE NOCASE, gpu TEXT NOT NULL COLLATE NOCASE, weights TEXT NOT NULL,"
    " tp INTEGER NOT NULL, replicas INTEGER NOT NULL, scheduler TEXT NOT NULL, max_batch INTEGER NOT NULL,"
    " chunk_tokens INTEGER NOT NULL, kv_blocks INTEGER NOT NULL, block_tokens INTEGER NOT NULL,"
    " prefix_cache INTEGER NOT NULL, n_requests INTEGER NOT NULL, n_levels INTEGER NOT NULL);"
    "CREATE INDEX IF NOT EXISTS calib_observed_run_key ON calib_observed_run (model, gpu, weights);"
    "CREATE TABLE IF NOT EXISTS calib_observed_req ("
    " run_id INTEGER NOT NULL REFERENCES calib_observed_run(id), idx INTEGER NOT NULL, line INTEGER NOT NULL,"
    " arrival_s REAL NOT NULL, input_tokens INTEGER NOT NULL, output_tokens INTEGER NOT NULL,"
    " ttft_ms REAL NOT NULL, e2e_ms REAL NOT NULL, queue_ms REAL, itl_ms TEXT, class TEXT NOT NULL DEFAULT '',"
    " PRIMARY KEY (run_id, idx));"
    "CREATE TABLE IF NOT EXISTS calib_observed_level ("
    " run_id INTEGER NOT NULL REFERENCES calib_observed_run(id), idx INTEGER NOT NULL, line INTEGER NOT NULL,"
    " mode TEXT NOT NULL, load REAL NOT NULL, input_tokens INTEGER NOT NULL, output_tokens INTEGER NOT NULL,"
    " ttft_ms REAL, itl_ms REAL, tpot_ms REAL, e2e_ms REAL, ttft_p99_ms REAL, output_tokens_per_s REAL,"
    " PRIMARY KEY (run_id, idx));"
    "CREATE TABLE IF NOT EXISTS calib_fit_observed ("
    " fit_id INTEGER NOT NULL REFERENCES calib_fits(id),"
    " run_id INTEGER NOT NULL REFERENCES calib_observed_run(id));";

static int fail(sqlite3 *db, const char *what, char *err, size_t errlen)
{
    errmsg_set(err, errlen, "calibration store: %s: %s", what, sqlite3_errmsg(db));
    return -1;
}

int cobsdb_init(sqlite3 *db, char *err, size_t errlen)
{
    char *msg = NULL;
    if (sqlite3_exec(db, SCHEMA, NULL, NULL, &msg) != SQLITE_OK) {
        errmsg_set(err, errlen, "calibration store: cannot create the observed-run tables: %s", msg ? msg : sqlite3_errmsg(db));
        sqlite3_free(msg);
        return -1;
    }
    return 0;
}

/* 1 when the connection sees table NAME (in the file or its temporary schema). */
static int has_table(sqlite3 *db, const char *name)
{
    sqlite3_stmt *st = NULL;
    int n = 0;
    if (sqlite3_prepare_v2(db, "SELECT (SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?1)"
                           " + (SELECT count(*) FROM sqlite_temp_master WHERE type = 'table' AND name = ?1)",
                           -1, &st, NULL) == SQLITE_OK) {
        sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
        if (sqlite3_step(st) == SQLITE_ROW) n = sqlite3_column_int(st, 0);
    }
    sqlite3_finalize(st);
    return n > 0;
}

static int bind_real(sqlite3_stmt *st, int i, double v)
{
    return isfinite(v) ? sqlite3_bind_double(st, i, v) : sqlite3_bind_null(st, i);
}

static int bind_text(sqlite3_stmt *st, int i, const char *s)
{
    return sqlite3_bind_text(st, i, s ? s : "", -1, SQLITE_TRANSIENT);
}

/* The ITL gaps of Q as a JSON list (malloc'd), NULL for none or out of memory (*OOM). */
static char *gaps_json(const cobs_req *q, int *oom)
{
    if (!q->itl_ms || q->nitl == 0) return NULL;
    json_t *a = json_array();
    for (size_t k = 0; a && k < q->nitl; k++)
        if (json_array_append_new(a, json_real(q->itl_ms[k])) != 0) { json_decref(a); a = NULL; }
    char *s = a ? json_dumps(a, JSON_COMPACT | JSON_REAL_PRECISION(17)) : NULL;
    json_decref(a);
    if (!s) *oom = 1;
    return s;
}

int cobsdb_save(sqlite3 *db, const cobs_run *run, const char *scenario_path, const char *scenario_text,
                const cobs_server *srv, const char *tool, int64_t *id, char *err, size_t errlen)
{
    sqlite3_stmt *st = NULL;
    char when[32];
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
    int rc = sqlite3_prepare_v2(db, "INSERT INTO calib_observed_run (format, file, imported_at, tool, source_tool, note,"
                                " scenario_path, scenario_text, pool, model, gpu, weights, tp, replicas, scheduler,"
                                " max_batch, chunk_tokens, kv_blocks, block_tokens, prefix_cache, n_requests, n_levels)"
                                " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", -1, &st, NULL);
    const char *t[] = { cobs_format_name(run->format), run->file, when, tool, run->tool, run->note, scenario_path,
                        scenario_text, srv->pool, srv->model, srv->gpu, srv->weights };
    for (int i = 0; i < 12 && rc == SQLITE_OK; i++) rc = bind_text(st, i + 1, t[i]);
    if (rc == SQLITE_OK) rc = sqlite3_bind_int(st, 13, srv->tp);
    if (rc == SQLITE_OK) rc = sqlite3_bind_int(st, 14, srv->replicas);
    if (rc == SQLITE_OK) rc = bind_text(st, 15, srv->scheduler);
    if (rc == SQLITE_OK) rc = sqlite3_bind_int(st, 16, srv->max_batch);
    if (rc == SQLITE_OK) rc = sqlite3_bind_int64(st, 17, srv->chunk_tokens);
    if (rc == SQLITE_OK) rc = sqlite3_bind_int64(st, 18, srv->kv_blocks);
    if (rc == SQLITE_OK) rc = sqlite3_bind_int(st, 19, srv->block_tokens);
    if (rc == SQLITE_OK) rc = sqlite3_bind_int(st, 20, srv->prefix_cache);
    if (rc == SQLITE_OK) rc = sqlite3_bind_int64(st, 21, (sqlite3_int64) run->nreq);
    if (rc == SQLITE_OK) rc = sqlite3_bind_int64(st, 22, (sqlite3_int64) run->nlvl);
    if (rc == SQLITE_OK && sqlite3_step(st) != SQLITE_DONE) rc = SQLITE_ERROR;
    sqlite3_finalize(st);
    st = NULL;
    if (rc != SQLITE_OK) return fail(db, "cannot store the observed run", err, errlen);
    *id = sqlite3_last_insert_rowid(db);
    if (run->nreq) {
        rc = sqlite3_prepare_v2(db, "INSERT INTO calib_observed_req (run_id, idx, line, arrival_s, input_tokens,"
                                " output_tokens, ttft_ms, e2e_ms, queue_ms, itl_ms, class) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                                -1, &st, NULL);
        for (size_t i = 0; i < run->nreq && rc == SQLITE_OK; i++) {
            const cobs_req *q = &run->req[i];
            int oom = 0;
            char *gaps = gaps_json(q, &oom);
            if (oom) {
                sqlite3_finalize(st);
                errmsg_set(err, errlen, "out of memory storing the observed run");
                return -1;
            }
            sqlite3_reset(st);
            rc = sqlite3_bind_int64(st, 1, *id);
            if (rc == SQLITE_OK) rc = sqlite3_bind_int64(st, 2, (sqlite3_int64) i);
            if (rc == SQLITE_OK) rc = sqlite3_bind_int64(st, 3, q->line);
            if (rc == SQLITE_OK) rc = sqlite3_bind_double(st, 4, q->arrival_s);
            if (rc == SQLITE_OK) rc = sqlite3_bind_int(st, 5, q->input_tokens);
            if (rc == SQLITE_OK) rc = sqlite3_bind_int(st, 6, q->output_tokens);
            if (rc == SQLITE_OK) rc = sqlite3_bind_double(st, 7, q->ttft_ms);
            if (rc == SQLITE_OK) rc = sqlite3_bind_double(st, 8, q->e2e_ms);
            if (rc == SQLITE_OK) rc = bind_real(st, 9, q->queue_ms);
            if (rc == SQLITE_OK) rc = gaps ? sqlite3_bind_text(st, 10, gaps, -1, SQLITE_TRANSIENT) : sqlite3_bind_null(st, 10);
            if (rc == SQLITE_OK) rc = bind_text(st, 11, q->cls);
            if (rc == SQLITE_OK && sqlite3_step(st) != SQLITE_DONE) rc = SQLITE_ERROR;
            free(gaps);
        }
        sqlite3_finalize(st);
        st = NULL;
        if (rc != SQLITE_OK) return fail(db, "cannot store the observed requests", err, errlen);
    }
    if (run->nlvl) {
        rc = sqlite3_prepare_v2(db, "INSERT INTO calib_observed_level (run_id, idx, line, mode, load, input_tokens,"
                                " output_tokens, ttft_ms, itl_ms, tpot_ms, e2e_ms, ttft_p99_ms, output_tokens_per_s)"
                                " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)", -1, &st, NULL);
        for (size_t i = 0; i < run->nlvl && rc == SQLITE_OK; i++) {
            const cobs_level *L = &run->lvl[i];
            sqlite3_reset(st);
            rc = sqlite3_bind_int64(st, 1, *id);
            if (rc == SQLITE_OK) rc = sqlite3_bind_int64(st, 2, (sqlite3_int64) i);
            if (rc == SQLITE_OK) rc = sqlite3_bind_int64(st, 3, L->line);
            if (rc == SQLITE_OK) rc = bind_text(st, 4, L->closed ? "concurrency" : "rate");
            if (rc == SQLITE_OK) rc = sqlite3_bind_double(st, 5, L->load);
            if (rc == SQLITE_OK) rc = sqlite3_bind_int(st, 6, L->input_tokens);
            if (rc == SQLITE_OK) rc = sqlite3_bind_int(st, 7, L->output_tokens);
            const double m[] = { L->ttft_ms, L->itl_ms, L->tpot_ms, L->e2e_ms, L->ttft_p99_ms, L->output_tps };
            for (int k = 0; k < 6 && rc == SQLITE_OK; k++) rc = bind_real(st, 8 + k, m[k]);
            if (rc == SQLITE_OK && sqlite3_step(st) != SQLITE_DONE) rc = SQLITE_ERROR;
        }
        sqlite3_finalize(st);
        if (rc != SQLITE_OK) return fail(db, "cannot store the sweep levels", err, errlen);
    }
    return 0;
}

static void col(sqlite3_stmt *st, int c, char *dst, size_t n)
{
    const unsigned char *t = sqlite3_column_text(st, c);
    snprintf(dst, n, "%s", t ? (const char *) t : "");
}

static double col_real(sqlite3_stmt *st, int c)
{
    return sqlite3_column_type(st, c) == SQLITE_NULL ? NAN : sqlite3_column_double(st, c);
}

/* Reads the requests of run ID into RUN.  Returns 0 or -1 + ERR. */
static int load_requests(sqlite3 *db, int64_t id, cobs_run *run, size_t n, char *err, size_t errlen)
{
    sqlite3_stmt *st = NULL;
    run->req = calloc(n ? n : 1, sizeof *run->req);
    if (!run->req) { errmsg_set(err, errlen, "out of memory"); return -1; }
    if (sqlite3_prepare_v2(db, "SELECT line, arrival_s, input_tokens, output_tokens, ttft_ms, e2e_ms, queue_ms, itl_ms,"
                           " class FROM calib_observed_req WHERE run_id = ? ORDER BY idx", -1, &st, NULL) != SQLITE_OK)
        return fail(db, "cannot read the observed requests", err, errlen);
    sqlite3_bind_int64(st, 1, id);
    int s;
    while ((s = sqlite3_step(st)) == SQLITE_ROW && run->nreq < n) {
        cobs_req *q = &run->req[run->nreq++];
        q->line = sqlite3_column_int64(st, 0);
        q->arrival_s = sqlite3_column_double(st, 1);
        q->input_tokens = sqlite3_column_int(st, 2);
        q->output_tokens = sqlite3_column_int(st, 3);
        q->ttft_ms = sqlite3_column_double(st, 4);
        q->e2e_ms = sqlite3_column_double(st, 5);
        q->queue_ms = col_real(st, 6);
        col(st, 8, q->cls, sizeof q->cls);
        const char *g = (const char *) sqlite3_column_text(st, 7);
        if (g) {
            json_t *a = json_loads(g, 0, NULL);
            size_t k = json_is_array(a) ? json_array_size(a) : 0;
            q->itl_ms = k ? malloc(k * sizeof *q->itl_ms) : NULL;
            if (k && !q->itl_ms) { json_decref(a); sqlite3_finalize(st); errmsg_set(err, errlen, "out of memory"); return -1; }
            for (size_t j = 0; j < k; j++) q->itl_ms[j] = json_number_value(json_array_get(a, j));
            q->nitl = k;
            json_decref(a);
        }
    }
    sqlite3_finalize(st);
    if (s != SQLITE_DONE && s != SQLITE_ROW) return fail(db, "cannot read the observed requests", err, errlen);
    return 0;
}

static int load_levels(sqlite3 *db, int64_t id, cobs_run *run, size_t n, char *err, size_t errlen)
{
    sqlite3_stmt *st = NULL;
    run->lvl = calloc(n ? n : 1, sizeof *run->lvl);
    if (!run->lvl) { errmsg_set(err, errlen, "out of memory"); return -1; }
    if (sqlite3_prepare_v2(db, "SELECT line, mode, load, input_tokens, output_tokens, ttft_ms, itl_ms, tpot_ms, e2e_ms,"
                           " ttft_p99_ms, output_tokens_per_s FROM calib_observed_level WHERE run_id = ? ORDER BY idx",
                           -1, &st, NULL) != SQLITE_OK)
        return fail(db, "cannot read the sweep levels", err, errlen);
    sqlite3_bind_int64(st, 1, id);
    int s;
    while ((s = sqlite3_step(st)) == SQLITE_ROW && run->nlvl < n) {
        cobs_level *L = &run->lvl[run->nlvl++];
        L->line = sqlite3_column_int64(st, 0);
        const unsigned char *m = sqlite3_column_text(st, 1);
        L->closed = m && !strcmp((const char *) m, "concurrency");
        L->load = sqlite3_column_double(st, 2);
        L->input_tokens = sqlite3_column_int(st, 3);
        L->output_tokens = sqlite3_column_int(st, 4);
        L->ttft_ms = col_real(st, 5);
        L->itl_ms = col_real(st, 6);
        L->tpot_ms = col_real(st, 7);
        L->e2e_ms = col_real(st, 8);
        L->ttft_p99_ms = col_real(st, 9);
        L->output_tps = col_real(st, 10);
    }
    sqlite3_finalize(st);
    if (s != SQLITE_DONE && s != SQLITE_ROW) return fail(db, "cannot read the sweep levels", err, errlen);
    return 0;
}

int cobsdb_load(sqlite3 *db, int64_t id, cobs_stored *h, cobs_run *run, char **text, char *err, size_t errlen)
{
    cobs_stored tmp;
    if (!h) h = &tmp;
    memset(h, 0, sizeof *h);
    if (run) memset(run, 0, sizeof *run);
    if (text) *text = NULL;
    if (!has_table(db, "calib_observed_run")) {
        errmsg_set(err, errlen, "no observed run %lld (none imported: latsim calib import observed FILE --scenario S.ini)",
                   (long long) id);
        return 1;
    }
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, "SELECT format, file, imported_at, tool, source_tool, note, scenario_path, pool, model, gpu,"
                           " weights, tp, replicas, scheduler, max_batch, chunk_tokens, kv_blocks, block_tokens,"
                           " prefix_cache, n_requests, n_levels, scenario_text FROM calib_observed_run WHERE id = ?",
                           -1, &st, NULL) != SQLITE_OK)
        return fail(db, "cannot read the observed runs", err, errlen);
    sqlite3_bind_int64(st, 1, id);
    int s = sqlite3_step(st);
    if (s == SQLITE_DONE) {
        sqlite3_finalize(st);
        errmsg_set(err, errlen, "no observed run with id %lld (see latsim calib list)", (long long) id);
        return 1;
    }
    if (s != SQLITE_ROW) {
        sqlite3_finalize(st);
        return fail(db, "cannot read the observed runs", err, errlen);
    }
    h->id = id;
    col(st, 0, h->format, sizeof h->format);
    col(st, 1, h->file, sizeof h->file);
    col(st, 2, h->imported_at, sizeof h->imported_at);
    col(st, 3, h->tool, sizeof h->tool);
    col(st, 4, h->source_tool, sizeof h->source_tool);
    col(st, 5, h->note, sizeof h->note);
    col(st, 6, h->scenario_path, sizeof h->scenario_path);
    col(st, 7, h->srv.pool, sizeof h->srv.pool);
    col(st, 8, h->srv.model, sizeof h->srv.model);
    col(st, 9, h->srv.gpu, sizeof h->srv.gpu);
    col(st, 10, h->srv.weights, sizeof h->srv.weights);
    h->srv.tp = sqlite3_column_int(st, 11);
    h->srv.replicas = sqlite3_column_int(st, 12);
    col(st, 13, h->srv.scheduler, sizeof h->srv.scheduler);
    h->srv.max_batch = sqlite3_column_int(st, 14);
    h->srv.chunk_tokens = sqlite3_column_int64(st, 15);
    h->srv.kv_blocks = sqlite3_column_int64(st, 16);
    h->srv.block_tokens = sqlite3_column_int(st, 17);
    h->srv.prefix_cache = sqlite3_column_int(st, 18);
    h->n_requests = (long) sqlite3_column_int64(st, 19);
    h->n_levels = (long) sqlite3_column_int64(st, 20);
    if (text) {
        const unsigned char *t = sqlite3_column_text(st, 21);
        *text = strdup(t ? (const char *) t : "");
        if (!*text) { sqlite3_finalize(st); errmsg_set(err, errlen, "out of memory"); return -1; }
    }
    sqlite3_finalize(st);
    if (!run) return 0;
    if (cobs_format_parse(h->format, &run->format) != 0) run->format = COBS_GENERIC;
    snprintf(run->file, sizeof run->file, "%s", h->file);
    snprintf(run->tool, sizeof run->tool, "%s", h->source_tool);
    snprintf(run->note, sizeof run->note, "%s", h->note);
    int r = 0;
    if (h->n_requests > 0) r = load_requests(db, id, run, (size_t) h->n_requests, err, errlen);
    if (r == 0 && h->n_levels > 0) r = load_levels(db, id, run, (size_t) h->n_levels, err, errlen);
    if (r != 0) {
        cobs_free(run);
        if (text) { free(*text); *text = NULL; }
        return -1;
    }
    return 0;
}

int cobsdb_forget(sqlite3 *db, int64_t id, int *fits, char *err, size_t errlen)
{
    if (fits) *fits = 0;
    if (!has_table(db, "calib_observed_run")) {
        errmsg_set(err, errlen, "no observed run %lld (none imported: latsim calib import observed FILE --scenario S.ini)",
                   (long long) id);
        return 1;
    }
    sqlite3_stmt *st = NULL;
    int n = 0;
    if (sqlite3_prepare_v2(db, "SELECT count(*) FROM calib_observed_run WHERE id = ?", -1, &st, NULL) != SQLITE_OK)
        return fail(db, "cannot read the observed runs", err, errlen);
    sqlite3_bind_int64(st, 1, id);
    if (sqlite3_step(st) == SQLITE_ROW) n = sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    if (n == 0) {
        errmsg_set(err, errlen, "no observed run with id %lld (see latsim calib list)", (long long) id);
        return 1;
    }
    static const char *const DEL[] = {
        "SELECT count(DISTINCT fit_id) FROM calib_fit_observed WHERE run_id = ?",
        "DELETE FROM calib_fit_observed WHERE run_id = ?",
        "DELETE FROM calib_observed_req WHERE run_id = ?",
        "DELETE FROM calib_observed_level WHERE run_id = ?",
        "DELETE FROM calib_observed_run WHERE id = ?",
    };
    for (size_t i = 0; i < sizeof DEL / sizeof DEL[0]; i++) {
        if (sqlite3_prepare_v2(db, DEL[i], -1, &st, NULL) != SQLITE_OK)
            return fail(db, "cannot remove the observed run", err, errlen);
        sqlite3_bind_int64(st, 1, id);
        int s = sqlite3_step(st);
        if (i == 0 && s == SQLITE_ROW && fits) *fits = sqlite3_column_int(st, 0);
        sqlite3_finalize(st);
        if (s != SQLITE_DONE && s != SQLITE_ROW) return fail(db, "cannot remove the observed run", err, errlen);
    }
    return 0;
}

/* Text column I of ST as it may be shown on a terminal. */
#define SHOWN_COL(st, i) ERRMSG_SHOWN((const char *) sqlite3_column_text(st, i))

int cobsdb_list(sqlite3 *db, FILE *out, char *err, size_t errlen)
{
    fprintf(out, "\nobserved runs\n  %4s %-10s %-14s %-16s %-7s %3s %8s  %-20s  %s\n", "id", "format", "model", "gpu",
            "weights", "tp", "requests", "imported", "file");
    if (!has_table(db, "calib_observed_run")) {
        fprintf(out, "  (none: latsim calib import observed FILE --scenario S.ini)\n");
        return 0;
    }
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, "SELECT id, format, model, gpu, weights, tp, n_requests, n_levels, imported_at, file"
                           " FROM calib_observed_run ORDER BY id", -1, &st, NULL) != SQLITE_OK)
        return fail(db, "cannot list the observed runs", err, errlen);
    int s, rows = 0;
    while ((s = sqlite3_step(st)) == SQLITE_ROW) {
        char count[32];
        long long nl = sqlite3_column_int64(st, 7);
        if (nl > 0) snprintf(count, sizeof count, "%lld lv", nl);
        else snprintf(count, sizeof count, "%lld", (long long) sqlite3_column_int64(st, 6));
        fprintf(out, "  %4lld %-10s %-14s %-16s %-7s %3d %8s  %-20s  %s\n", (long long) sqlite3_column_int64(st, 0),
                SHOWN_COL(st, 1), SHOWN_COL(st, 2), SHOWN_COL(st, 3), SHOWN_COL(st, 4), sqlite3_column_int(st, 5), count,
                SHOWN_COL(st, 8), SHOWN_COL(st, 9));
        rows++;
    }
    sqlite3_finalize(st);
    if (s != SQLITE_DONE) return fail(db, "cannot list the observed runs", err, errlen);
    if (!rows) fprintf(out, "  (none: latsim calib import observed FILE --scenario S.ini)\n");
    return 0;
}

static void stat_row(FILE *out, const char *name, const cobs_run *run, cobs_metric m)
{
    double *v;
    size_t n;
    if (cobs_values(run, m, &v, &n) != 0 || n == 0) {
        free(v);
        return;
    }
    cobs_stats s;
    cobs_summarize(v, n, &s);
    fprintf(out, "  %-10s %8zu %12.6g %12.6g %12.6g %12.6g\n", name, n, s.mean, s.p50, s.p90, s.p99);
    free(v);
}

int cobsdb_show(sqlite3 *db, int64_t id, FILE *out, char *err, size_t errlen)
{
    cobs_stored h;
    cobs_run run;
    int s = cobsdb_load(db, id, &h, &run, NULL, err, errlen);
    if (s != 0) return s;
    const cobs_server *v = &h.srv;
    fprintf(out, "observed run %lld: %s\n", (long long) id, ERRMSG_SHOWN(h.format));
    fprintf(out, "  file           %s\n", ERRMSG_SHOWN(h.file));
    if (h.source_tool[0]) fprintf(out, "  written by     %s\n", ERRMSG_SHOWN(h.source_tool));
    fprintf(out, "  imported       %s by %s\n", ERRMSG_SHOWN(h.imported_at), ERRMSG_SHOWN(h.tool));
    if (h.note[0]) fprintf(out, "  note           %s\n", ERRMSG_SHOWN(h.note));
    fprintf(out, "  scenario       %s, [pool %s]\n", ERRMSG_SHOWN(h.scenario_path), ERRMSG_SHOWN(v->pool));
    fprintf(out, "  server         %s on %s, weights %s, tp %d, %d replica%s, scheduler %s, max_batch %d", ERRMSG_SHOWN(v->model),
            ERRMSG_SHOWN(v->gpu), ERRMSG_SHOWN(v->weights), v->tp, v->replicas, v->replicas == 1 ? "" : "s",
            ERRMSG_SHOWN(v->scheduler), v->max_batch);
    if (v->chunk_tokens > 0) fprintf(out, ", chunk_tokens %lld", v->chunk_tokens);
    fprintf(out, ", kv_blocks %lld x %d tokens, prefix cache %s\n", v->kv_blocks, v->block_tokens, v->prefix_cache ? "on" : "off");
    if (run.nreq) {
        double rps, tps;
        cobs_throughput(&run, &rps, &tps);
        fprintf(out, "  requests       %zu over %.4g s: %.4g requests/s, %.4g output tokens/s\n\n", run.nreq,
                run.req[run.nreq - 1].arrival_s, rps, tps);
        fprintf(out, "  %-10s %8s %12s %12s %12s %12s\n", "ms", "n", "mean", "p50", "p90", "p99");
        stat_row(out, "ttft", &run, COBS_TTFT);
        stat_row(out, "tpot", &run, COBS_TPOT);
        stat_row(out, "itl", &run, COBS_ITL);
        stat_row(out, "e2e", &run, COBS_E2E);
        stat_row(out, "queue", &run, COBS_QUEUE);
    }
    if (run.nlvl) {
        fprintf(out, "  levels         %zu\n\n  %-12s %7s %7s %10s %10s %10s %10s %11s %10s\n", run.nlvl,
                run.lvl[0].closed ? "concurrency" : "rate", "input", "output", "ttft_ms", "itl_ms", "tpot_ms", "e2e_ms",
                "ttft_p99_ms", "out_tok/s");
        for (size_t i = 0; i < run.nlvl; i++) {
            const cobs_level *L = &run.lvl[i];
            fprintf(out, "  %-12g %7d %7d %10.5g %10.5g %10.5g %10.5g %11.5g %10.5g\n", L->load, (int) L->input_tokens,
                    (int) L->output_tokens, L->ttft_ms, L->itl_ms, L->tpot_ms, L->e2e_ms, L->ttft_p99_ms, L->output_tps);
        }
    }
    cobs_free(&run);
    return 0;
}
