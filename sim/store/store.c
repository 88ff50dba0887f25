/* store.c -- runs and their results kept in SQLite (see store.h).
 *
 * Implements the database file: opening it and creating its schema (runs,
 * run_config, run_stats, run_timeseries, PRAGMA user_version = 2, then the
 * catalog tables) or migrating an older one (version 1: names stored as
 * numbers, see "Migration" below),
 * saving one run in a single transaction, the `latsim runs` listing and the
 * `latsim show ID` report, and the FNV-1a 64 scenario hash.
 *
 * Seeds are uint64_t; SQLite integers are int64, so a seed is stored as the
 * int64 with the same bit pattern and converted back when read.  Scenario
 * hashes are stored as 16 lower-case hex digits.  A NAN statistic (value or
 * ci95) is stored as NULL.
 */
#include "store/store.h"
#include "engine/errmsg.h"
#include "core/catalog.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define STORE_SCHEMA_VERSION 2

static const char schema_sql[] =
    "CREATE TABLE IF NOT EXISTS runs ("
    " id INTEGER PRIMARY KEY,"
    " scenario_path TEXT NOT NULL,"
    " scenario_text TEXT,"
    " scenario_hash TEXT NOT NULL,"
    " seed INTEGER NOT NULL,"
    " replications INTEGER NOT NULL,"
    " version TEXT NOT NULL,"
    " started_at TEXT NOT NULL,"
    " wall_s REAL,"
    " status TEXT NOT NULL,"
    " json TEXT);"
    "CREATE TABLE IF NOT EXISTS run_config ("
    " run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
    " section TEXT NOT NULL,"
    " key TEXT NOT NULL,"
    " value TEXT NOT NULL);"
    "CREATE INDEX IF NOT EXISTS run_config_run ON run_config(run_id);"
    "CREATE TABLE IF NOT EXISTS run_stats ("
    " run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
    " replication INTEGER NOT NULL,"
    " scope TEXT NOT NULL,"
    " metric TEXT NOT NULL,"
    " stat TEXT NOT NULL,"
    " value REAL,"
    " ci95 REAL,"
    " text TEXT);"       /* a name instead of a number (store_stat.text), else NULL */
    "CREATE INDEX IF NOT EXISTS run_stats_run ON run_stats(run_id, replication);";

/* The time series of a run (tseries.h), one row per interval and scope ("" =
 * the whole system).  Created also in databases made before it existed. */
static const char timeseries_sql[] =
    "CREATE TABLE IF NOT EXISTS run_timeseries ("
    " run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
    " scope TEXT NOT NULL,"
    " t_start_s REAL NOT NULL, t_end_s REAL NOT NULL,"
    " arrivals INTEGER, retries INTEGER, served INTEGER, errors INTEGER,"
    " throughput_rps REAL, ttft_p50_ms REAL, ttft_p99_ms REAL, e2e_p50_ms REAL,"
    " e2e_p99_ms REAL, queue REAL, replicas REAL, utilization REAL);"
    "CREATE INDEX IF NOT EXISTS run_timeseries_run ON run_timeseries(run_id, scope);";
#define STATS_INSERT \
    "INSERT INTO run_stats (run_id, replication, scope, metric, stat, value, ci95, text)" \
    " VALUES (?,?,?,?,?,?,?,?)"
#define TIMESERIES_INSERT \
    "INSERT INTO run_timeseries (run_id, scope, t_start_s, t_end_s, arrivals, retries," \
    " served, errors, throughput_rps, ttft_p50_ms, ttft_p99_ms, e2e_p50_ms, e2e_p99_ms," \
    " queue, replicas, utilization) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"


/* The file name of DB for messages ("(memory)" for an in-memory database). */
static const char *db_path(sqlite3 *db)
{
    const char *p = sqlite3_db_filename(db, "main");
    return p && p[0] ? p : "(memory)";
}

static int64_t seed_to_db(uint64_t seed)
{
    int64_t v;
    memcpy(&v, &seed, sizeof v);
    return v;
}

static uint64_t seed_from_db(int64_t v)
{
    uint64_t seed;
    memcpy(&seed, &v, sizeof seed);
    return seed;
}

/* Reads one integer from SQL (first column of the first row) into *V. */
static int query_int(sqlite3 *db, const char *sql, int64_t *v)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
    if (rc == SQLITE_OK) {
        rc = sqlite3_step(st);
        if (rc == SQLITE_ROW) {
            *v = sqlite3_column_int64(st, 0);
            rc = SQLITE_OK;
        }
    }
    sqlite3_finalize(st);
    return rc;
}

/* Message for a failure while opening PATH. */
static void open_error(sqlite3 *db, const char *path, char *err, size_t errlen)
{
    if (sqlite3_errcode(db) == SQLITE_NOTADB)
        errmsg_set(err, errlen, "%s: not a latsim database: file is not a database", path);
    else
        errmsg_set(err, errlen, "%s: cannot open database: %s", path, sqlite3_errmsg(db));
}

/* ---- Migration ---------------------------------------------------------------
 *
 * Schema version 1 (latsim up to commit e102f15) stored three names as numbers in
 * run_stats.value (rows of stat 'value'): the position of the name in a table of
 * the code, so that adding a row in the middle of a table would have relabelled
 * every stored run.  Version 2 stores the names themselves (run_stats.text, value
 * and ci95 NULL).  A version-1 database is migrated when it is opened for
 * writing, in one transaction (the text column added, the rows converted,
 * user_version = 2); a read-only open reads it through a temporary view that
 * converts the same way (SQLite looks up unqualified names in "temp" before
 * "main") and never writes the file.
 *
 * FROZEN HISTORY: the tables below are the code's tables as version 1 numbered
 * them (each only ever grew at its end, so one order serves every version-1
 * file).  They describe files already written, not today's tables: never edit
 * them, whatever becomes of the kind table (core/kind.c) or the cost-model
 * table (llm/cost.c). */
static const char *const V1_KINDS[] = { "generic", "llm", "net", "api", "result_cache", "router" };
static const char *const V1_COST_MODELS[] = { "linear", "roofline", "auto", "fitted", "profile" };
static const char *const V1_COST_SOURCES[] = { "datasheet", "scenario", "steps-csv", "vidur", "cuda", "cpu",
                                               "net", "other" };
#define V1_N(a) ((int) (sizeof (a) / sizeof (a)[0]))
static const struct v1_named {
    const char *metric;               /* run_stats.metric of the rows holding a number for a name */
    const char *const *names;         /* the table, by number */
    int n;                            /* its rows */
    const char *other;                /* the name of any other number, as version 1 showed it */
} V1_NAMED[] = {
    { "kind", V1_KINDS, V1_N(V1_KINDS), "unknown" },          /* beyond: a kind registered at run time */
    { "cost_model.kind", V1_COST_MODELS, V1_N(V1_COST_MODELS), "" },   /* -1: no row */
    { "cost_model.source", V1_COST_SOURCES, V1_N(V1_COST_SOURCES), "" },
};

/* The SQL of version 1's conversion: into *WHERE the condition that picks the
 * rows holding a number for a name, into *TEXT the expression of that name (both
 * sqlite3_malloc'ed).  Returns SQLITE_OK or SQLITE_NOMEM. */
static int v1_sql(char **where, char **text)
{
    sqlite3_str *w = sqlite3_str_new(NULL), *t = sqlite3_str_new(NULL);
    sqlite3_str_appendall(w, "stat = 'value' AND metric IN (");
    sqlite3_str_appendall(t, "CASE metric");
    for (int i = 0; i < V1_N(V1_NAMED); i++) {
        const struct v1_named *m = &V1_NAMED[i];
        sqlite3_str_appendf(w, "%s%Q", i ? ", " : "", m->metric);
        sqlite3_str_appendf(t, " WHEN %Q THEN CASE CAST(value AS INTEGER)", m->metric);
        for (int k = 0; k < m->n; k++)
            sqlite3_str_appendf(t, " WHEN %d THEN %Q", k, m->names[k]);
        sqlite3_str_appendf(t, " ELSE %Q END", m->other);
    }
    sqlite3_str_appendall(w, ")");
    sqlite3_str_appendall(t, " END");
    int rc = sqlite3_str_errcode(w) != SQLITE_OK ? sqlite3_str_errcode(w) : sqlite3_str_errcode(t);
    *where = sqlite3_str_finish(w);
    *text = sqlite3_str_finish(t);
    if (rc == SQLITE_OK && (!*where || !*text))
        rc = SQLITE_NOMEM;
    if (rc != SQLITE_OK) {
        sqlite3_free(*where);
        sqlite3_free(*text);
        *where = *text = NULL;
    }
    return rc;
}

/* Runs SQL (sqlite3_mprintf'ed, freed here; NULL: out of memory).  Returns an SQLite code. */
static int exec_free(sqlite3 *db, char *sql)
{
    int rc = sql ? sqlite3_exec(db, sql, NULL, NULL, NULL) : SQLITE_NOMEM;
    sqlite3_free(sql);
    return rc;
}

/* Migrates version 1 to version 2 inside the caller's write transaction (which
 * keeps it or undoes it whole).  Returns an SQLite code. */
static int migrate_v1(sqlite3 *db)
{
    int64_t has_text = 0;
    int rc = sqlite3_exec(db, schema_sql, NULL, NULL, NULL);   /* tables it lacks, if any */
    if (rc == SQLITE_OK)
        rc = query_int(db, "SELECT count(*) FROM pragma_table_info('run_stats') WHERE name = 'text'", &has_text);
    if (rc == SQLITE_OK && !has_text)
        rc = sqlite3_exec(db, "ALTER TABLE run_stats ADD COLUMN text TEXT", NULL, NULL, NULL);
    char *where = NULL, *text = NULL;
    if (rc == SQLITE_OK)
        rc = v1_sql(&where, &text);
    if (rc == SQLITE_OK)
        rc = exec_free(db, sqlite3_mprintf("UPDATE run_stats SET text = %s, value = NULL, ci95 = NULL WHERE %s",
                                           text, where));
    if (rc == SQLITE_OK)
        rc = sqlite3_exec(db, "PRAGMA user_version = 2", NULL, NULL, NULL);
    sqlite3_free(where);
    sqlite3_free(text);
    return rc;
}

/* Makes the version-1 database DB, which cannot be written, read as version 2:
 * a temporary view run_stats (rowid kept) that converts its rows.  Returns an
 * SQLite code. */
static int translate_v1(sqlite3 *db)
{
    char *where, *text;
    int rc = v1_sql(&where, &text);
    if (rc == SQLITE_OK)
        rc = exec_free(db, sqlite3_mprintf(
                "CREATE TEMP VIEW IF NOT EXISTS run_stats AS SELECT rowid AS rowid, run_id, replication,"
                " scope, metric, stat, CASE WHEN %s THEN NULL ELSE value END AS value,"
                " CASE WHEN %s THEN NULL ELSE ci95 END AS ci95, CASE WHEN %s THEN %s END AS text"
                " FROM main.run_stats", where, where, where, text));
    sqlite3_free(where);
    sqlite3_free(text);
    return rc;
}


/* Creates the schema when the file has none, in a transaction of its own, or,
 * when IN_TX, inside the caller's open write transaction (left open).
 * Returns 0 or -1 + ERR. */
static int create_schema(sqlite3 *db, const char *path, int in_tx, char *err, size_t errlen)
{
    int ret = -1, began = 0;
    int64_t version = 0, foreign = 0;
    char sql[64], cerr[256];

    /* The first statement that reads the file: SQLITE_NOTADB shows here. */
    if (query_int(db, "PRAGMA user_version", &version) != SQLITE_OK)
        goto db_error;
    if (version > STORE_SCHEMA_VERSION) {
        errmsg_set(err, errlen,
                "%s: database schema version %" PRId64 " is newer than this latsim's (%d)",
                path, version, STORE_SCHEMA_VERSION);
        goto done;
    }
    if (version == 0) {
        /* A new file, or an SQLite database of some other program. */
        if (query_int(db,
                      "SELECT count(*) FROM sqlite_master WHERE type = 'table'"
                      " AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' AND name NOT IN"
                      " ('runs', 'run_config', 'run_stats', 'run_timeseries', 'gpus', 'models')",
                      &foreign) != SQLITE_OK)
            goto db_error;
        if (foreign > 0) {
            errmsg_set(err, errlen, "%s: not a latsim database: it holds other tables", path);
            goto done;
        }
        /* IMMEDIATE: two processes creating the same file do not deadlock. */
        if (!in_tx) {
            if (sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
                goto db_error;
            began = 1;
        }
        snprintf(sql, sizeof sql, "PRAGMA user_version = %d", STORE_SCHEMA_VERSION);
        if (sqlite3_exec(db, schema_sql, NULL, NULL, NULL) != SQLITE_OK ||
            sqlite3_exec(db, sql, NULL, NULL, NULL) != SQLITE_OK)
            goto db_error;
    } else if (version < STORE_SCHEMA_VERSION) {
        /* An older schema (see Migration): converted in the same transaction as
         * the rest, or read translated when the file cannot be written. */
        if (sqlite3_db_readonly(db, "main") == 1) {
            if (translate_v1(db) != SQLITE_OK)
                goto db_error;
        } else {
            if (!in_tx) {
                if (sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
                    goto db_error;
                began = 1;
            }
            /* Read again under the write lock: another process may have migrated it. */
            if (query_int(db, "PRAGMA user_version", &version) != SQLITE_OK ||
                (version < STORE_SCHEMA_VERSION && migrate_v1(db) != SQLITE_OK))
                goto db_error;
        }
    }
    /* A database made before the time series existed gets its table (a
     * read-only one opens without it: only saving needs it). */
    if (query_int(db, "SELECT count(*) FROM sqlite_master WHERE name = 'run_timeseries'",
                  &foreign) != SQLITE_OK)
        goto db_error;
    if (foreign == 0 && sqlite3_db_readonly(db, "main") != 1 &&
        sqlite3_exec(db, timeseries_sql, NULL, NULL, NULL) != SQLITE_OK)
        goto db_error;
    /* Outside a transaction when the schema exists, so that a read-only file
     * with its tables in place still opens. */
    if (catalog_init(db, cerr, sizeof cerr) != 0) {
        errmsg_set(err, errlen, "%s: %s", path, cerr);
        goto done;
    }
    if (began) {
        if (sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
            goto db_error;
        began = 0;
    }
    ret = 0;
    goto done;

db_error:
    open_error(db, path, err, errlen);
done:
    if (began)
        sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
    return ret;
}

int store_lock_wait_ms(void)
{
    const char *e = getenv("LATSIM_LOCK_WAIT_S");
    char *end;
    double v = e && e[0] ? strtod(e, &end) : NAN;
    if (!(v >= 0 && v <= 86400) || *end) v = STORE_LOCK_WAIT_S;
    return (int) (v * 1000);
}

int store_open_readonly(const char *path, sqlite3 **db, char *err, size_t errlen)
{
    int ret = -1;
    int64_t version = 0;
    sqlite3 *h = NULL;
    struct stat sb;
    *db = NULL;
    if (stat(path, &sb) != 0) {
        errmsg_set(err, errlen, "%s: no such database (run a scenario first, or give --db PATH)", path);
        goto done;
    }
    if (!S_ISREG(sb.st_mode)) {
        errmsg_set(err, errlen, "%s: not a latsim database: not a regular file", path);
        goto done;
    }
    int rc = sqlite3_open_v2(path, &h, SQLITE_OPEN_READONLY, NULL);
    if (rc != SQLITE_OK) {
        errmsg_set(err, errlen, "%s: cannot open database: %s", path, h ? sqlite3_errmsg(h) : sqlite3_errstr(rc));
        goto done;
    }
    sqlite3_busy_timeout(h, store_lock_wait_ms());
    if (query_int(h, "PRAGMA user_version", &version) != SQLITE_OK) {
        open_error(h, path, err, errlen);
        goto done;
    }
    if (version == 0) {
        errmsg_set(err, errlen, "%s: not a latsim database: %s", path,
                   sb.st_size == 0 ? "the file is empty" : "it has no latsim schema");
        goto done;
    }
    if (version > STORE_SCHEMA_VERSION) {
        errmsg_set(err, errlen, "%s: database schema version %" PRId64 " is newer than this latsim's (%d)", path,
                   version, STORE_SCHEMA_VERSION);
        goto done;
    }
    /* The catalog of an older file is read through TEMP tables (catalog.h):
     * the file itself is not written. */
    char cerr[256];
    if (catalog_init(h, cerr, sizeof cerr) != 0) {
        errmsg_set(err, errlen, "%s: %s", path, cerr);
        goto done;
    }
    /* An older schema (see Migration) is read translated: a command that only
     * reads never writes the file; the first command that writes migrates it. */
    if (version < STORE_SCHEMA_VERSION && translate_v1(h) != SQLITE_OK) {
        open_error(h, path, err, errlen);
        goto done;
    }
    *db = h;
    h = NULL;
    ret = 0;
done:
    sqlite3_close(h);
    return ret;
}

/* Opens PATH for reading and writing (created if absent) with the lock wait
 * and foreign keys on; with REGULAR, a path that exists and is not a regular
 * file is refused first.  Returns 0 with *H, or -1 + ERR (*H NULL). */
static int open_rw(const char *path, int regular, sqlite3 **h, char *err, size_t errlen)
{
    struct stat sb;
    *h = NULL;
    if (!path || !path[0]) {
        errmsg_set(err, errlen, "store: no database path given");
        return -1;
    }
    if (regular && strcmp(path, ":memory:") != 0 && stat(path, &sb) == 0 && !S_ISREG(sb.st_mode)) {
        errmsg_set(err, errlen, "%s: not a latsim database: not a regular file", path);
        return -1;
    }
    int rc = sqlite3_open_v2(path, h, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL);
    if (rc != SQLITE_OK) {
        errmsg_set(err, errlen, "%s: cannot open database: %s", path,
                *h ? sqlite3_errmsg(*h) : sqlite3_errstr(rc));
        sqlite3_close(*h);
        *h = NULL;
        return -1;
    }
    /* SQLite's busy handler retries, sleeping between tries, until the lock is
     * free or the wait is over (store_lock_wait_ms).  Foreign keys are set
     * outside any transaction: inside one, the pragma does nothing. */
    sqlite3_busy_timeout(*h, store_lock_wait_ms());
    if (sqlite3_exec(*h, "PRAGMA foreign_keys = ON", NULL, NULL, NULL) != SQLITE_OK) {
        open_error(*h, path, err, errlen);
        sqlite3_close(*h);
        *h = NULL;
        return -1;
    }
    return 0;
}

int store_open(const char *path, sqlite3 **db, char *err, size_t errlen)
{
    sqlite3 *h;
    *db = NULL;
    if (open_rw(path, 0, &h, err, errlen) != 0) return -1;
    if (create_schema(h, path, 0, err, errlen) != 0) {
        sqlite3_close(h);
        return -1;
    }
    *db = h;
    return 0;
}

int store_open_tx(const char *path, sqlite3 **db, char *err, size_t errlen)
{
    sqlite3 *h;
    *db = NULL;
    if (open_rw(path, 1, &h, err, errlen) != 0) return -1;
    if (sqlite3_exec(h, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK) {
        open_error(h, path, err, errlen);
        sqlite3_close(h);
        return -1;
    }
    if (create_schema(h, path, 1, err, errlen) != 0) {
        sqlite3_exec(h, "ROLLBACK", NULL, NULL, NULL);
        sqlite3_close(h);
        return -1;
    }
    *db = h;
    return 0;
}

int store_open_lookup(const char *path, sqlite3 **db, char *err, size_t errlen)
{
    struct stat sb;
    if (!path || !path[0] || stat(path, &sb) != 0 || (S_ISREG(sb.st_mode) && sb.st_size == 0))
        return store_open(":memory:", db, err, errlen);
    return store_open_readonly(path, db, err, errlen);
}

void store_close(sqlite3 *db)
{
    sqlite3_close(db);
}

int store_has_table(sqlite3 *db, const char *name)
{
    sqlite3_stmt *st = NULL;
    int found = 0;
    if (sqlite3_prepare_v2(db, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", -1, &st, NULL) == SQLITE_OK) {
        sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
        found = sqlite3_step(st) == SQLITE_ROW;
    }
    sqlite3_finalize(st);
    return found;
}

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

/* PRAGMA quick_check of DB (PATH names it): a corrupt file would be found only
 * when the run is stored, so it is found before simulating (quick_check reads
 * every page once, without the index cross-checks of integrity_check).
 * Returns 0, or -1 + ERR. */
static int quick_check(sqlite3 *db, const char *path, char *err, size_t errlen)
{
    sqlite3_stmt *qc = NULL;
    int rc = sqlite3_prepare_v2(db, "PRAGMA quick_check(1)", -1, &qc, NULL);
    if (rc == SQLITE_OK) rc = sqlite3_step(qc);
    const char *res = rc == SQLITE_ROW ? (const char *) sqlite3_column_text(qc, 0) : NULL;
    int ret = 0;
    if (rc != SQLITE_ROW || !res || strcmp(res, "ok") != 0) {
        errmsg_set(err, errlen, "%s: the database is damaged (%s): not simulating; give another --db", path,
                   res ? res : sqlite3_errmsg(db));
        ret = -1;
    }
    sqlite3_finalize(qc);
    return ret;
}

/* Inside an open write transaction of DB: writes the schema version in place
 * (SQLite then opens its journal, as a real save would: a directory that
 * forbids that fails here, not after the run) and prepares the inserts against
 * the schema.  The caller rolls back.  Returns 0, or -1 + ERR. */
static int writable_in_tx(sqlite3 *db, const char *path, char *err, size_t errlen)
{
    static const char *sql[] = {
        "INSERT INTO runs (scenario_path, scenario_text, scenario_hash, seed, replications, version,"
        " started_at, wall_s, status, json) VALUES (?,?,?,?,?,?,?,?,?,?)",
        "INSERT INTO run_config (run_id, section, key, value) VALUES (?,?,?,?)",
        STATS_INSERT,
        TIMESERIES_INSERT,
    };
    char pragma[64];
    snprintf(pragma, sizeof pragma, "PRAGMA user_version = %d", STORE_SCHEMA_VERSION);
    if (sqlite3_exec(db, pragma, NULL, NULL, NULL) != SQLITE_OK) {
        errmsg_set(err, errlen, "%s: cannot write to the database: %s", path, sqlite3_errmsg(db));
        return -1;
    }
    for (size_t i = 0; i < sizeof sql / sizeof sql[0]; i++) {
        sqlite3_stmt *st = NULL;
        if (sqlite3_prepare_v2(db, sql[i], -1, &st, NULL) != SQLITE_OK) {
            errmsg_set(err, errlen, "%s: not a latsim database: %s", path, sqlite3_errmsg(db));
            return -1;
        }
        sqlite3_finalize(st);
    }
    return 0;
}

int store_check_writable(sqlite3 *db, const char *path, char *err, size_t errlen)
{
    if (sqlite3_db_readonly(db, "main") == 1) {
        errmsg_set(err, errlen, "%s: cannot write to the database: it is read-only", path);
        return -1;
    }
    if (quick_check(db, path, err, errlen) != 0)
        return -1;
    if (sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK) {
        errmsg_set(err, errlen, "%s: cannot write to the database: %s", path, sqlite3_errmsg(db));
        return -1;
    }
    int ret = writable_in_tx(db, path, err, errlen);
    sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
    return ret;
}

int store_begin(sqlite3 *db, char *err, size_t errlen)
{
    if (sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL) == SQLITE_OK) return 0;
    errmsg_set(err, errlen, "%s: cannot start a transaction: %s", db_path(db), sqlite3_errmsg(db));
    return -1;
}

int store_commit(sqlite3 *db, char *err, size_t errlen)
{
    if (sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) == SQLITE_OK) return 0;
    errmsg_set(err, errlen, "%s: cannot commit: %s", db_path(db), sqlite3_errmsg(db));
    store_rollback(db);
    return -1;
}

void store_rollback(sqlite3 *db)
{
    if (!sqlite3_get_autocommit(db)) sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
}

int store_check_path(const char *path, char *err, size_t errlen)
{
    sqlite3 *db = NULL;
    if (store_open_tx(path, &db, err, errlen) != 0)
        return -1;
    int ret = -1;
    if (sqlite3_db_readonly(db, "main") == 1)
        errmsg_set(err, errlen, "%s: cannot write to the database: it is read-only", path);
    else if (quick_check(db, path, err, errlen) == 0)
        ret = writable_in_tx(db, path, err, errlen);
    sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
    sqlite3_close(db);
    return ret;
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

/* ---- text tables ---------------------------------------------------------- */

/* A table of text cells printed with aligned columns. */
#define TABLE_MAX_COLS 16
typedef struct text_table {
    int ncols;             /* at most TABLE_MAX_COLS */
    const char *align;     /* per column: 'l' or 'r' */
    char **cells;          /* row-major, ncols per row; row 0 is the header */
    size_t nrows, cap;
} text_table;

/* Display width of a UTF-8 string (code points, so that "±" counts once). */
static int text_width(const char *s)
{
    int w = 0;
    for (; *s; s++)
        if (((unsigned char)*s & 0xC0) != 0x80)
            w++;
    return w;
}

/* A copy of S as it may be shown on a terminal (errmsg_field: control bytes
 * and invalid UTF-8 as \xNN, never cut), or NULL when out of memory. */
static char *shown_dup(const char *s)
{
    size_t n = 4 * strlen(s) + 5;          /* each byte becomes at most 4 */
    char *d = malloc(n);
    if (d)
        errmsg_field(s, d, n);
    return d;
}

/* Appends a row of t->ncols cells, given as that many const char * arguments
 * (NULL counts as empty), each as shown_dup() shows it.  Returns 0, or -1 when
 * out of memory. */
static int table_add(text_table *t, ...)
{
    va_list ap;
    int ret = -1;

    if (t->nrows == t->cap) {
        size_t ncap = t->cap ? 2 * t->cap : 16;
        char **p = realloc(t->cells, ncap * (size_t)t->ncols * sizeof *p);
        if (!p)
            return -1;
        t->cells = p;
        t->cap = ncap;
    }
    va_start(ap, t);
    for (int c = 0; c < t->ncols; c++) {
        const char *s = va_arg(ap, const char *);
        char *copy = shown_dup(s ? s : "");
        if (!copy) {
            while (c-- > 0)
                free(t->cells[t->nrows * (size_t)t->ncols + (size_t)c]);
            goto done;
        }
        t->cells[t->nrows * (size_t)t->ncols + (size_t)c] = copy;
    }
    t->nrows++;
    ret = 0;
done:
    va_end(ap);
    return ret;
}

static void table_print(const text_table *t, FILE *out, const char *indent)
{
    int width[TABLE_MAX_COLS] = { 0 };
    for (size_t r = 0; r < t->nrows; r++)
        for (int c = 0; c < t->ncols; c++) {
            int w = text_width(t->cells[r * (size_t)t->ncols + (size_t)c]);
            if (w > width[c])
                width[c] = w;
        }
    for (size_t r = 0; r < t->nrows; r++) {
        const char *const *row = (const char *const *)t->cells + r * (size_t)t->ncols;
        int end = t->ncols;          /* no trailing blanks: drop empty last cells */
        while (end > 1 && row[end - 1][0] == '\0' && t->align[end - 1] == 'l')
            end--;
        fputs(indent, out);
        for (int c = 0; c < end; c++) {
            int pad = width[c] - text_width(row[c]);
            if (c > 0)
                fputs("  ", out);
            if (t->align[c] == 'r')
                fprintf(out, "%*s%s", pad, "", row[c]);
            else
                fprintf(out, "%s%*s", row[c], c == end - 1 ? 0 : pad, "");
        }
        fputc('\n', out);
    }
}

static void table_free(text_table *t)
{
    for (size_t i = 0; i < t->nrows * (size_t)t->ncols; i++)
        free(t->cells[i]);
    free(t->cells);
    t->cells = NULL;
    t->nrows = t->cap = 0;
}

static const char *col_text(sqlite3_stmt *st, int col)
{
    const unsigned char *s = sqlite3_column_text(st, col);
    return s ? (const char *)s : "";
}

/* Formats a REAL column (NULL -> "-") with %.6g. */
static const char *col_real(sqlite3_stmt *st, int col, char *buf, size_t size)
{
    if (sqlite3_column_type(st, col) == SQLITE_NULL)
        snprintf(buf, size, "-");
    else
        snprintf(buf, size, "%.6g", sqlite3_column_double(st, col));
    return buf;
}

/* ---- listing and showing --------------------------------------------------- */

int store_list_runs(sqlite3 *db, FILE *out, char *err, size_t errlen)
{
    int ret = -1, rc;
    sqlite3_stmt *st = NULL;
    text_table t = { 7, "rllrrlr", NULL, 0, 0 };
    char id[24], seed[24], wall[32], p99[32];

    /* e2e p99 of the whole system: the aggregate (-1) when there is one, else
     * replication 0. */
    if (sqlite3_prepare_v2(db,
            "SELECT r.id, r.started_at, r.status, r.seed, r.wall_s, r.scenario_path,"
            " (SELECT s.value FROM run_stats s WHERE s.run_id = r.id"
            "  AND s.replication IN (-1, 0) AND s.scope = '' AND s.metric = 'e2e'"
            "  AND s.stat = 'p99' ORDER BY s.replication LIMIT 1)"
            " FROM runs r ORDER BY r.id", -1, &st, NULL) != SQLITE_OK)
        goto db_error;
    if (table_add(&t, "id", "started", "status", "seed", "wall s", "scenario",
                  "e2e p99 ms") != 0)
        goto oom;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        snprintf(id, sizeof id, "%" PRId64, (int64_t)sqlite3_column_int64(st, 0));
        snprintf(seed, sizeof seed, "%" PRIu64,
                 seed_from_db((int64_t)sqlite3_column_int64(st, 3)));
        if (sqlite3_column_type(st, 4) == SQLITE_NULL)
            snprintf(wall, sizeof wall, "-");
        else
            snprintf(wall, sizeof wall, "%.2f", sqlite3_column_double(st, 4));
        if (table_add(&t, id, col_text(st, 1), col_text(st, 2), seed, wall,
                      col_text(st, 5), col_real(st, 6, p99, sizeof p99)) != 0)
            goto oom;
    }
    if (rc != SQLITE_DONE)
        goto db_error;
    if (t.nrows == 1)
        fprintf(out, "no runs in %s\n", ERRMSG_SHOWN(db_path(db)));
    else
        table_print(&t, out, "");
    ret = 0;
    goto done;

oom:
    errmsg_set(err, errlen, "store: out of memory");
    goto done;
db_error:
    errmsg_set(err, errlen, "%s: cannot list runs: %s", db_path(db), sqlite3_errmsg(db));
done:
    table_free(&t);
    sqlite3_finalize(st);
    return ret;
}

/* Prints the metadata of run ID; returns 0, 1 when there is no such run, -1 on
 * error (SQLite's message is then current). */
static int show_meta(sqlite3 *db, int64_t id, FILE *out)
{
    int ret = -1, rc;
    sqlite3_stmt *st = NULL;

    if (sqlite3_prepare_v2(db,
            "SELECT scenario_path, scenario_hash, seed, replications, version,"
            " started_at, wall_s, status FROM runs WHERE id = ?", -1, &st, NULL) != SQLITE_OK ||
        sqlite3_bind_int64(st, 1, id) != SQLITE_OK)
        goto done;
    rc = sqlite3_step(st);
    if (rc == SQLITE_DONE) {
        ret = 1;
        goto done;
    }
    if (rc != SQLITE_ROW)
        goto done;
    fprintf(out, "run %" PRId64 "\n", id);
    fprintf(out, "  scenario      %s\n", ERRMSG_SHOWN(col_text(st, 0)));
    fprintf(out, "  hash          %s\n", ERRMSG_SHOWN(col_text(st, 1)));
    fprintf(out, "  seed          %" PRIu64 "\n",
            seed_from_db((int64_t)sqlite3_column_int64(st, 2)));
    fprintf(out, "  replications  %d\n", sqlite3_column_int(st, 3));
    fprintf(out, "  version       %s\n", ERRMSG_SHOWN(col_text(st, 4)));
    fprintf(out, "  started       %s\n", ERRMSG_SHOWN(col_text(st, 5)));
    if (sqlite3_column_type(st, 6) == SQLITE_NULL)
        fprintf(out, "  wall          -\n");
    else
        fprintf(out, "  wall          %.3f s\n", sqlite3_column_double(st, 6));
    fprintf(out, "  status        %s\n", ERRMSG_SHOWN(col_text(st, 7)));
    ret = 0;
done:
    sqlite3_finalize(st);
    return ret;
}

/* Prints the effective configuration as INI: keys without a section first,
 * then each section (in order of first appearance) with its keys in order. */
static int show_config(sqlite3 *db, int64_t id, FILE *out, int *oom)
{
    int ret = -1, rc, first = 1;
    sqlite3_stmt *st = NULL;
    char *section = NULL;

    if (sqlite3_prepare_v2(db,
            "SELECT c.section, c.key, c.value FROM run_config c WHERE c.run_id = ?1"
            " ORDER BY c.section <> '',"
            " (SELECT min(d.rowid) FROM run_config d"
            "  WHERE d.run_id = ?1 AND d.section = c.section), c.rowid",
            -1, &st, NULL) != SQLITE_OK ||
        sqlite3_bind_int64(st, 1, id) != SQLITE_OK)
        goto done;
    fprintf(out, "\nconfiguration\n");
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *sec = col_text(st, 0);
        if (sec[0] && (!section || strcmp(section, sec) != 0)) {
            free(section);
            section = strdup(sec);
            if (!section) {
                *oom = 1;
                goto done;
            }
            fprintf(out, "%s[%s]\n", first ? "" : "\n", ERRMSG_SHOWN(sec));
        }
        fprintf(out, "%s = %s\n", ERRMSG_SHOWN(col_text(st, 1)), ERRMSG_SHOWN(col_text(st, 2)));
        first = 0;
    }
    if (rc != SQLITE_DONE)
        goto done;
    if (first)
        fprintf(out, "(none recorded)\n");
    ret = 0;
done:
    free(section);
    sqlite3_finalize(st);
    return ret;
}

/* Prints the statistics: the aggregate over replications first, then each
 * replication in order. */
static int show_stats(sqlite3 *db, int64_t id, FILE *out, int *oom)
{
    int ret = -1, rc;
    sqlite3_stmt *st = NULL;
    text_table t = { 6, "rlllrl", NULL, 0, 0 };
    char rep[24], value[32], ci[40];

    if (sqlite3_prepare_v2(db,
            "SELECT replication, scope, metric, stat, value, ci95, text FROM run_stats"
            " WHERE run_id = ? ORDER BY replication >= 0, replication, rowid",
            -1, &st, NULL) != SQLITE_OK ||
        sqlite3_bind_int64(st, 1, id) != SQLITE_OK)
        goto done;
    if (table_add(&t, "rep", "scope", "metric", "stat", "value", "ci95") != 0)
        goto no_memory;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int r = sqlite3_column_int(st, 0);
        if (r < 0)
            snprintf(rep, sizeof rep, "all");
        else
            snprintf(rep, sizeof rep, "%d", r);
        if (sqlite3_column_type(st, 5) == SQLITE_NULL)
            ci[0] = '\0';
        else
            snprintf(ci, sizeof ci, "\u00b1%.3g", sqlite3_column_double(st, 5));
        /* a name (a pool's kind, its cost model) in the value column */
        const char *shown = sqlite3_column_type(st, 6) != SQLITE_NULL ? col_text(st, 6)
                            : col_real(st, 4, value, sizeof value);
        if (table_add(&t, rep, col_text(st, 1)[0] ? col_text(st, 1) : "(system)",
                      col_text(st, 2), col_text(st, 3), shown, ci) != 0)
            goto no_memory;
    }
    if (rc != SQLITE_DONE)
        goto done;
    fprintf(out, "\nstatistics\n");
    if (t.nrows == 1)
        fprintf(out, "(none recorded)\n");
    else
        table_print(&t, out, "");
    ret = 0;
    goto done;

no_memory:
    *oom = 1;
done:
    table_free(&t);
    sqlite3_finalize(st);
    return ret;
}

int store_show_run(sqlite3 *db, int64_t id, FILE *out, char *err, size_t errlen)
{
    int rc, oom = 0;

    rc = show_meta(db, id, out);
    if (rc == 1) {
        errmsg_set(err, errlen, "no run %" PRId64 " in %s", id, db_path(db));
        return 1;
    }
    if (rc != 0 || show_config(db, id, out, &oom) != 0 || show_stats(db, id, out, &oom) != 0) {
        if (oom)
            errmsg_set(err, errlen, "store: out of memory");
        else
            errmsg_set(err, errlen, "%s: cannot show run %" PRId64 ": %s", db_path(db), id,
                    sqlite3_errmsg(db));
        return -1;
    }
    return 0;
}

uint64_t store_hash(const void *data, size_t n, uint64_t h)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 0x100000001b3ULL;   /* FNV-1a 64 prime */
    }
    return h;
}
