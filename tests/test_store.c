/* test_store.c -- Criterion tests of the run database (sim/store/store.c): schema
 * creation, save/list/show round trips, all-or-nothing saves, files that are
 * not databases, and the FNV-1a hash. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/catalog.h"
#include "store/store.h"

static char path[64];
static sqlite3 *db;
static char err[512];

/* A fresh temporary file name (the file itself is removed: store_open creates it). */
static void make_temp_path(void)
{
    int fd;
    strcpy(path, "/tmp/latsim_store_XXXXXX");
    fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    close(fd);
    unlink(path);
}

static void setup(void)
{
    make_temp_path();
    err[0] = '\0';
    cr_assert_eq(store_open(path, &db, err, sizeof err), 0, "store_open: %s", err);
    cr_assert_not_null(db);
}

static void teardown(void)
{
    store_close(db);
    db = NULL;
    unlink(path);
}

static long long count_rows(const char *sql)
{
    sqlite3_stmt *st = NULL;
    long long n = -1;
    cr_assert_eq(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK, "%s",
                 sqlite3_errmsg(db));
    if (sqlite3_step(st) == SQLITE_ROW)
        n = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return n;
}

/* Runs CALL with `out` open on a memory stream whose text ends up in BUF (malloc'd). */
#define CAPTURE(buf, call)                                      \
    do {                                                        \
        size_t len_ = 0;                                        \
        FILE *out = open_memstream(&(buf), &len_);              \
        cr_assert_not_null(out);                                \
        call;                                                   \
        fclose(out);                                            \
    } while (0)

static const store_kv sample_config[] = {
    { "", "seed", "18446744073709551615" },
    { "pool cpu", "servers", "4" },
    { "workload", "rate", "120" },
    { "pool cpu", "service", "exp(5)" },
};

static const store_stat sample_stats[] = {
    { 0, "", "e2e", "p99", 250.5, NAN, NULL },
    { 0, "", "e2e", "mean", 80.25, NAN, NULL },
    { 1, "", "e2e", "p99", 260.5, NAN, NULL },
    { -1, "", "e2e", "p99", 255.5, 4.25, NULL },
    { -1, "cpu", "utilization", "value", 0.75, 0.01, NULL },
};

static store_run sample_run(void)
{
    store_run r = {
        .scenario_path = "scenarios/default.ini",
        .scenario_text = "[workload]\nrate = 120\n",
        .scenario_hash = 0x0123456789abcdefULL,
        .seed = UINT64_MAX,
        .replications = 2,
        .version = "test-1.0",
        .started_at = "2025-01-02T03:04:05Z",
        .wall_s = 1.5,
        .status = "ok",
        .json = "{}",
        .config = sample_config, .nconfig = sizeof sample_config / sizeof sample_config[0],
        .stats = sample_stats, .nstats = sizeof sample_stats / sizeof sample_stats[0],
    };
    return r;
}

TestSuite(store, .init = setup, .fini = teardown);

Test(store, schema_and_catalog_created)
{
    cr_assert_eq(count_rows("PRAGMA user_version"), 2);   /* version 2: names in run_stats.text */
    cr_assert_eq(count_rows("PRAGMA foreign_keys"), 1);
    cr_assert_eq(count_rows("SELECT count(*) FROM runs"), 0);
    cr_assert_eq(count_rows("SELECT count(*) FROM gpus"), 16);
    cr_assert_eq(count_rows("SELECT count(*) FROM models"), 23);   /* 19 decoders, 4 encoders */

    /* Reopening an existing database works and adds nothing. */
    store_close(db);
    db = NULL;
    cr_assert_eq(store_open(path, &db, err, sizeof err), 0, "%s", err);
    cr_assert_eq(count_rows("SELECT count(*) FROM gpus"), 16);
}

Test(store, empty_list)
{
    char *buf = NULL;
    CAPTURE(buf, cr_assert_eq(store_list_runs(db, out, err, sizeof err), 0, "%s", err));
    cr_assert_neq(strstr(buf, "no runs in "), NULL, "%s", buf);
    cr_assert_neq(strstr(buf, path), NULL, "%s", buf);
    free(buf);
}

Test(store, save_list_show_round_trip)
{
    store_run r = sample_run();
    int64_t id1 = 0, id2 = 0;
    char *buf = NULL;

    cr_assert_eq(store_save_run(db, &r, &id1, err, sizeof err), 0, "%s", err);
    r.seed = 42;
    r.status = "saturated";
    r.stats = sample_stats;
    r.nstats = 2;                      /* replication 0 only: no aggregate */
    cr_assert_eq(store_save_run(db, &r, &id2, err, sizeof err), 0, "%s", err);
    cr_assert_eq(id2, id1 + 1);

    cr_assert_eq(count_rows("SELECT count(*) FROM runs"), 2);
    cr_assert_eq(count_rows("SELECT count(*) FROM run_config"), 8);
    cr_assert_eq(count_rows("SELECT count(*) FROM run_stats"), 7);
    cr_assert_eq(count_rows("SELECT count(*) FROM runs WHERE scenario_hash = "
                            "'0123456789abcdef'"), 2);
    cr_assert_eq(count_rows("SELECT count(*) FROM run_stats WHERE ci95 IS NULL"), 5);

    CAPTURE(buf, cr_assert_eq(store_list_runs(db, out, err, sizeof err), 0, "%s", err));
    cr_assert_neq(strstr(buf, "e2e p99"), NULL, "%s", buf);
    cr_assert_neq(strstr(buf, "18446744073709551615"), NULL, "%s", buf);
    cr_assert_neq(strstr(buf, "255.5"), NULL, "aggregate p99 of run 1:\n%s", buf);
    cr_assert_neq(strstr(buf, "250.5"), NULL, "replication-0 p99 of run 2:\n%s", buf);
    cr_assert_neq(strstr(buf, "saturated"), NULL, "%s", buf);
    cr_assert_neq(strstr(buf, "scenarios/default.ini"), NULL, "%s", buf);
    free(buf);

    CAPTURE(buf, cr_assert_eq(store_show_run(db, id1, out, err, sizeof err), 0, "%s", err));
    cr_assert_neq(strstr(buf, "seed          18446744073709551615"), NULL, "%s", buf);
    cr_assert_neq(strstr(buf, "0123456789abcdef"), NULL, "%s", buf);
    cr_assert_neq(strstr(buf, "test-1.0"), NULL, "%s", buf);
    cr_assert_neq(strstr(buf, "2025-01-02T03:04:05Z"), NULL, "%s", buf);
    /* INI grouped by section, global keys first. */
    cr_assert_neq(strstr(buf, "seed = 18446744073709551615\n\n[pool cpu]\nservers = 4\n"
                              "service = exp(5)\n\n[workload]\nrate = 120\n"),
                  NULL, "%s", buf);
    cr_assert_neq(strstr(buf, "\u00b14.25"), NULL, "%s", buf);
    cr_assert_neq(strstr(buf, "utilization"), NULL, "%s", buf);
    cr_assert_neq(strstr(buf, "260.5"), NULL, "%s", buf);
    free(buf);
}

Test(store, show_unknown_run)
{
    char *buf = NULL;
    CAPTURE(buf, cr_assert_eq(store_show_run(db, 99, out, err, sizeof err), 1));
    cr_assert_neq(strstr(err, "no run 99"), NULL, "%s", err);
    free(buf);
}

Test(store, failed_save_leaves_nothing)
{
    store_run r = sample_run();
    store_stat bad[] = {
        { -1, "", "e2e", "p99", 1.0, NAN, NULL },
        { -1, "", NULL, "p50", 1.0, NAN, NULL },   /* metric is required */
    };
    int64_t id = -7;

    cr_assert_eq(store_save_run(db, &r, &id, err, sizeof err), 0, "%s", err);
    long long runs = count_rows("SELECT count(*) FROM runs");
    long long cfg = count_rows("SELECT count(*) FROM run_config");
    long long stats = count_rows("SELECT count(*) FROM run_stats");

    r.stats = bad;
    r.nstats = 2;
    id = -7;
    cr_assert_eq(store_save_run(db, &r, &id, err, sizeof err), -1);
    cr_assert_neq(strstr(err, "cannot save run"), NULL, "%s", err);
    cr_assert_neq(strstr(err, "run_stats.metric"), NULL, "%s", err);
    cr_assert_eq(id, -7);
    cr_assert_eq(count_rows("SELECT count(*) FROM runs"), runs);
    cr_assert_eq(count_rows("SELECT count(*) FROM run_config"), cfg);
    cr_assert_eq(count_rows("SELECT count(*) FROM run_stats"), stats);

    /* A required run field missing fails the same way. */
    r = sample_run();
    r.status = NULL;
    cr_assert_eq(store_save_run(db, &r, &id, err, sizeof err), -1);
    cr_assert_eq(count_rows("SELECT count(*) FROM runs"), runs);

    /* The database is usable afterwards (no transaction left open). */
    cr_assert(sqlite3_get_autocommit(db));
    r = sample_run();
    cr_assert_eq(store_save_run(db, &r, &id, err, sizeof err), 0, "%s", err);
    cr_assert_eq(count_rows("SELECT count(*) FROM runs"), runs + 1);
}

Test(store, delete_cascades)
{
    store_run r = sample_run();
    int64_t id;
    cr_assert_eq(store_save_run(db, &r, &id, err, sizeof err), 0, "%s", err);
    cr_assert_eq(sqlite3_exec(db, "DELETE FROM runs", NULL, NULL, NULL), SQLITE_OK);
    cr_assert_eq(count_rows("SELECT count(*) FROM run_config"), 0);
    cr_assert_eq(count_rows("SELECT count(*) FROM run_stats"), 0);
}

Test(store, not_a_database)
{
    char junk[64];
    sqlite3 *h = (sqlite3 *)1;
    FILE *f;
    int fd;

    strcpy(junk, "/tmp/latsim_junk_XXXXXX");
    fd = mkstemp(junk);
    cr_assert_geq(fd, 0);
    f = fdopen(fd, "w");
    cr_assert_not_null(f);
    for (int i = 0; i < 200; i++)
        fprintf(f, "this is a text file, not an SQLite database (line %d)\n", i);
    fclose(f);

    cr_assert_eq(store_open(junk, &h, err, sizeof err), -1);
    cr_assert_null(h);
    cr_assert_neq(strstr(err, junk), NULL, "%s", err);
    cr_assert_neq(strstr(err, "not a latsim database: file is not a database"), NULL,
                  "%s", err);
    unlink(junk);
}

Test(store, cannot_open)
{
    sqlite3 *h = NULL;
    cr_assert_eq(store_open("/nonexistent-dir/x/latsim.db", &h, err, sizeof err), -1);
    cr_assert_null(h);
    cr_assert_neq(strstr(err, "/nonexistent-dir/x/latsim.db: cannot open database: "), NULL,
                  "%s", err);
}

Test(store, foreign_sqlite_database_rejected)
{
    char other[64];
    sqlite3 *h = NULL;
    int fd;

    strcpy(other, "/tmp/latsim_other_XXXXXX");
    fd = mkstemp(other);
    cr_assert_geq(fd, 0);
    close(fd);
    cr_assert_eq(sqlite3_open(other, &h), SQLITE_OK);
    cr_assert_eq(sqlite3_exec(h, "CREATE TABLE photos (id INTEGER)", NULL, NULL, NULL),
                 SQLITE_OK);
    sqlite3_close(h);
    h = NULL;
    cr_assert_eq(store_open(other, &h, err, sizeof err), -1);
    cr_assert_null(h);
    cr_assert_neq(strstr(err, "not a latsim database"), NULL, "%s", err);
    unlink(other);
}

Test(store, memory_database)
{
    sqlite3 *h = NULL;
    gpu_spec g;
    cr_assert_eq(store_open(":memory:", &h, err, sizeof err), 0, "%s", err);
    cr_assert_eq(catalog_gpu(h, "h200", &g, err, sizeof err), 0, "%s", err);
    store_close(h);
}

Test(store, fnv1a_hash)
{
    /* Published FNV-1a 64 test vectors. */
    cr_assert_eq(store_hash("", 0, STORE_HASH_INIT), 0xcbf29ce484222325ULL);
    cr_assert_eq(store_hash("a", 1, STORE_HASH_INIT), 0xaf63dc4c8601ec8cULL);
    cr_assert_eq(store_hash("foobar", 6, STORE_HASH_INIT), 0x85944171f73967e8ULL);
    /* Incremental hashing equals hashing the concatenation. */
    cr_assert_eq(store_hash("bar", 3, store_hash("foo", 3, STORE_HASH_INIT)),
                 0x85944171f73967e8ULL);
}
