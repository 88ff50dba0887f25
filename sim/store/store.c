/* store.c -- runs and their results kept in SQLite (see store.h): the database
 * file, its schema and migration.
 *
 * Implements the database file: opening it and creating its schema (runs,
 * run_config, run_stats, run_timeseries, PRAGMA user_version = 2, then the
 * catalog tables) or migrating an older one (version 1: names stored as
 * numbers, see "Migration" below), the transactions, the checks before a run
 * and the FNV-1a 64 scenario hash.  Saving one run in a single transaction is
 * runsave.c's, the `latsim runs` listing and the `latsim show ID` report
 * runshow.c's (storedb.h: what they share).
 *
 * Seeds are uint64_t; SQLite integers are int64, so a seed is stored as the
 * int64 with the same bit pattern and converted back when read.  Scenario
 * hashes are stored as 16 lower-case hex digits.  A NAN statistic (value or
 * ci95) is stored as NULL.
 */
#include "store/store.h"
#include "store/storedb.h"
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


/* The file name of DB for messages ("(memory)" for an in-memory database). */
const char *db_path(sqlite3 *db)
{
    const char *p = sqlite3_db_filename(db, "main");
    return p && p[0] ? p : "(memory)";
}

int64_t seed_to_db(uint64_t seed)
{
    int64_t v;
    memcpy(&v, &seed, sizeof v);
    return v;
}

uint64_t seed_from_db(int64_t v)
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


uint64_t store_hash(const void *data, size_t n, uint64_t h)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 0x100000001b3ULL;   /* FNV-1a 64 prime */
    }
    return h;
}
