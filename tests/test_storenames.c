/* test_storenames.c -- the database stores names, not positions in the code's
 * tables (store.c, "Migration"): a pool's kind and its cost model's kind and
 * source are TEXT in run_stats.text; a database of schema version 1 (those names
 * as numbers in run_stats.value, as latsim wrote them up to e102f15) is migrated
 * when opened, once, and reads exactly as the same runs stored by this program;
 * one that cannot be written at that moment is read converted and left as it was.
 *
 * The version-1 file is made by SQL from a database this program wrote: its
 * run_stats is rebuilt with version 1's CREATE TABLE (e102f15's store.c) and
 * the names turned back into version 1's numbers (the tables as they were then:
 * kinds generic, llm, net, api, result_cache, router; cost models linear,
 * roofline, auto, fitted, profile; sources datasheet, scenario, steps-csv,
 * vidur, cuda, cpu, net, other), the aggregate rows with the 0 interval that
 * version 1's aggregation gave them. */
#include <criterion/criterion.h>

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tbin.h"
#include "tcli.h"

static void setup(void) { tcli_setup("/tmp/latsim_names_", "new.db"); }

TestSuite(storenames, .init = setup, .fini = tcli_teardown);

#define GATEWAY "scenarios/gateway_three_models.ini"   /* net, result_cache, router, llm, api */
#define GENERIC "scenarios/default.ini"                 /* generic */

/* Runs SQL on the database at PATH (read-write); fails the test on an error. */
static void exec_sql(const char *path, const char *sql)
{
    sqlite3 *h;
    cr_assert_eq(sqlite3_open(path, &h), SQLITE_OK);
    char *msg = NULL;
    cr_assert_eq(sqlite3_exec(h, sql, NULL, NULL, &msg), SQLITE_OK, "%s: %s", path, msg ? msg : "");
    sqlite3_close(h);
}

/* Every row of run_stats, all columns quoted, in rowid order, as one string
 * (malloc'ed): two databases whose strings are equal hold the same statistics. */
static char *stats_dump(const char *path)
{
    sqlite3 *h;
    sqlite3_stmt *st;
    cr_assert_eq(sqlite3_open_v2(path, &h, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    cr_assert_eq(sqlite3_prepare_v2(h,
        "SELECT group_concat(quote(run_id) || ' ' || quote(replication) || ' ' || quote(scope) || ' ' ||"
        " quote(metric) || ' ' || quote(stat) || ' ' || quote(value) || ' ' || quote(ci95) || ' ' ||"
        " quote(text), char(10)) FROM (SELECT * FROM run_stats ORDER BY rowid)", -1, &st, NULL), SQLITE_OK,
        "%s", sqlite3_errmsg(h));
    cr_assert_eq(sqlite3_step(st), SQLITE_ROW);
    char *s = strdup((const char *) sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    sqlite3_close(h);
    cr_assert_not_null(s);
    return s;
}

static void copy_file(const char *from, const char *to)
{
    size_t n;
    char *b = slurp_or_fail(from, &n);
    FILE *f = fopen(to, "wb");
    cr_assert_not_null(f);
    cr_assert_eq(fwrite(b, 1, n, f), n);
    fclose(f);
    free(b);
}

/* Turns the database at PATH (written by this program) into schema version 1. */
static void make_v1(const char *path)
{
    exec_sql(path,
        "BEGIN;"
        /* e102f15's run_stats, as sim/store/store.c created it */
        "CREATE TABLE run_stats_v1 ("
        " run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
        " replication INTEGER NOT NULL,"
        " scope TEXT NOT NULL,"
        " metric TEXT NOT NULL,"
        " stat TEXT NOT NULL,"
        " value REAL,"
        " ci95 REAL);"
        "INSERT INTO run_stats_v1 (rowid, run_id, replication, scope, metric, stat, value, ci95)"
        " SELECT rowid, run_id, replication, scope, metric, stat,"
        "  CASE WHEN text IS NULL THEN value ELSE CASE metric"
        "   WHEN 'kind' THEN CASE text WHEN 'generic' THEN 0 WHEN 'llm' THEN 1 WHEN 'net' THEN 2"
        "    WHEN 'api' THEN 3 WHEN 'result_cache' THEN 4 WHEN 'router' THEN 5 END"
        "   WHEN 'cost_model.kind' THEN CASE text WHEN 'linear' THEN 0 WHEN 'roofline' THEN 1"
        "    WHEN 'auto' THEN 2 WHEN 'fitted' THEN 3 WHEN 'profile' THEN 4 ELSE -1 END"
        "   WHEN 'cost_model.source' THEN CASE text WHEN 'datasheet' THEN 0 WHEN 'scenario' THEN 1"
        "    WHEN 'steps-csv' THEN 2 WHEN 'vidur' THEN 3 WHEN 'cuda' THEN 4 WHEN 'cpu' THEN 5"
        "    WHEN 'net' THEN 6 WHEN 'other' THEN 7 END END END,"
        "  CASE WHEN text IS NULL THEN ci95 WHEN replication = -1 THEN 0.0 END"
        " FROM run_stats;"
        "DROP TABLE run_stats;"
        "ALTER TABLE run_stats_v1 RENAME TO run_stats;"
        "CREATE INDEX run_stats_run ON run_stats(run_id, replication);"
        "PRAGMA user_version = 1;"
        "COMMIT;");
    cr_assert_eq(db_count(path, "PRAGMA user_version"), 1);
    cr_assert_eq(db_count(path, "SELECT count(*) FROM pragma_table_info('run_stats') WHERE name = 'text'"), 0);
    cr_assert_gt(db_count(path, "SELECT count(*) FROM run_stats WHERE metric = 'kind' AND value = 4"), 0,
                 "a result_cache pool stored as 4");
}

/* 1 when some line of S holds both A and B, A first. */
static int has_line(const char *s, const char *a, const char *b)
{
    for (const char *l = s; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
        const char *end = strchr(l, '\n'), *x = strstr(l, a);
        if (!end) end = l + strlen(l);
        if (x && x < end) {
            const char *y = strstr(x + strlen(a), b);
            if (y && y < end) return 1;
        }
    }
    return 0;
}

/* Stdout of one command on database PATH (exit 0 expected), malloc'ed. */
static char *out_of(const char *path, const char *a, const char *b, const char *c)
{
    result r = c ? run(120, a, b, c, "--db", path, NULL) : b ? run(120, a, b, "--db", path, NULL)
                                                              : run(120, a, "--db", path, NULL);
    cr_assert_eq(r.rc, 0, "%s %s: exit %d: %s", a, b ? b : "", r.rc, r.err);
    char *s = strdup(r.out);
    result_free(&r);
    return s;
}

/* Removes from the database at PATH the rows that version 1 could not have
 * held and version 2 did not have at first either: an LLM pool's
 * cost_model.range and cost_model.coefficients (names, added with the cost
 * model's provenance), so that the version-1 file made from it is one that
 * version 1 wrote. */
static void v1_rows_only(const char *path)
{
    /* rows of names added after version 1: a cost model's range and coefficients, a route's ends,
     * an LLM pool's KV derivation, the note of replications' intervals not given */
    exec_sql(path, "DELETE FROM run_stats WHERE metric IN ('cost_model.range', 'cost_model.coefficients', 'kv_blocks_from',"
                   " 'interval_note')"
                   " OR (scope LIKE 'route:%' AND metric IN ('router', 'target'))");
}

/* Two runs stored by this program: the gateway (2 replications) and the M/M/c. */
static void two_runs(void)
{
    result r = run(120, "run", GATEWAY, "--replications", "2", "--db", db, NULL);
    cr_assert_eq(r.rc, 0, "exit %d: %s", r.rc, r.err);
    result_free(&r);
    r = run(120, "run", GENERIC, "--db", db, NULL);
    cr_assert_eq(r.rc, 0, "exit %d: %s", r.rc, r.err);
    result_free(&r);
}

/* The same two runs with the cost models a version-1 database could name (the
 * roofline: `learned` came after version 2). */
static void two_runs_v1(void)
{
    result r = run(120, "run", GATEWAY, "--replications", "2", "--set", "pool small.cost=roofline", "--set",
                   "pool big.cost=roofline", "--db", db, NULL);
    cr_assert_eq(r.rc, 0, "exit %d: %s", r.rc, r.err);
    result_free(&r);
    r = run(120, "run", GENERIC, "--db", db, NULL);
    cr_assert_eq(r.rc, 0, "exit %d: %s", r.rc, r.err);
    result_free(&r);
}

Test(storenames, kinds_and_cost_models_are_stored_as_names)
{
    two_runs();
    cr_expect_eq(db_count(db, "PRAGMA user_version"), 2);
    long long kinds = db_count(db, "SELECT count(*) FROM run_stats WHERE metric = 'kind'");
    cr_expect_gt(kinds, 0);
    cr_expect_eq(db_count(db, "SELECT count(*) FROM run_stats WHERE metric = 'kind' AND typeof(text) = 'text'"
                              " AND value IS NULL AND ci95 IS NULL"), kinds, "every kind row holds a name, no number");
    const char *names[] = { "generic", "llm", "net", "api", "result_cache", "router" };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char sql[160];
        snprintf(sql, sizeof sql, "SELECT count(*) FROM run_stats WHERE metric = 'kind' AND text = '%s'", names[i]);
        cr_expect_gt(db_count(db, sql), 0, "no pool of kind %s stored by name", names[i]);
    }
    cr_expect_gt(db_count(db, "SELECT count(*) FROM run_stats WHERE metric = 'cost_model.kind' AND text = 'learned'"), 0);
    cr_expect_gt(db_count(db, "SELECT count(*) FROM run_stats WHERE metric = 'cost_model.source' AND text = 'learned'"), 0);
    cr_expect_eq(db_count(db, "SELECT count(*) FROM run_stats WHERE text IS NOT NULL AND metric NOT IN"
                              " ('kind', 'cost_model.kind', 'cost_model.source', 'cost_model.range',"
                              " 'cost_model.coefficients', 'kv_blocks_from', 'interval_note') AND NOT (scope LIKE 'route:%' AND metric IN ('router', 'target'))"),
                 0, "numbers stay numbers");
    cr_expect_gt(db_count(db, "SELECT count(*) FROM run_stats WHERE scope LIKE 'route:%' AND metric = 'target'"
                              " AND typeof(text) = 'text' AND value IS NULL"), 0, "a route's target is stored by name");
    cr_expect_eq(db_count(db, "SELECT count(*) FROM run_stats WHERE metric = 'cost_model.id' AND value IS NULL"
                              " AND text IS NULL"), db_count(db, "SELECT count(*) FROM run_stats WHERE metric = 'cost_model.id'"));
    /* `show` prints the names in the value column. */
    char *s = out_of(db, "show", "1", NULL);
    cr_expect(has_line(s, " kind ", " result_cache"), "%s", s);
    cr_expect(has_line(s, " cost_model.kind ", " learned"), "%s", s);
    cr_expect(has_line(s, " cost_model.source ", " learned"), "%s", s);
    free(s);
}

/* A version-1 database opened by `runs`, `show` and `compare` reads exactly as
 * the same runs stored by this program, is migrated by the first open (its
 * run_stats then equal to this program's, row for row), and not again. */
Test(storenames, version_1_database_is_migrated_once)
{
    two_runs_v1();
    v1_rows_only(db);
    char old[192];
    snprintf(old, sizeof old, "%s/old.db", dir);
    copy_file(db, old);
    make_v1(old);

    char *want_runs = out_of(db, "runs", NULL, NULL);
    char *want_show1 = out_of(db, "show", "1", NULL), *want_show2 = out_of(db, "show", "2", NULL);
    char *want_cmp = out_of(db, "compare", "1", "2");
    char *want_dump = stats_dump(db);

    size_t n0;
    char *orig = slurp_or_fail(old, &n0);
    char *got = out_of(old, "runs", NULL, NULL);        /* read converted, the file untouched */
    cr_expect_str_eq(got, want_runs);
    free(got);
    cr_expect(same_bytes(old, orig, n0), "`latsim runs` (a reading command) wrote to the database");
    free(orig);
    cr_expect_eq(db_count(old, "PRAGMA user_version"), 1);
    result w = run(120, "baseline", "accept", "1", "--db", old, NULL);   /* the first writing open migrates */
    cr_expect_eq(w.rc, 0, "%s", w.err);
    result_free(&w);
    exec_sql(old, "DELETE FROM baselines");
    cr_expect_eq(db_count(old, "PRAGMA user_version"), 2, "not migrated by a writing command");
    char *dump = stats_dump(old);
    cr_expect_str_eq(dump, want_dump, "migrated run_stats differs from this program's");
    free(dump);
    got = out_of(old, "show", "1", NULL);
    cr_expect_str_eq(got, want_show1);
    cr_expect(strstr(got, "result_cache"), "%s", got);
    free(got);
    got = out_of(old, "show", "2", NULL);
    cr_expect_str_eq(got, want_show2);
    cr_expect(strstr(got, "generic"), "%s", got);
    free(got);
    got = out_of(old, "compare", "1", "2");
    cr_expect_str_eq(got, want_cmp);
    free(got);

    /* A second open finds version 2 and converts nothing: a number planted in a
     * kind row stays a number, and reading leaves the file byte for byte. */
    exec_sql(old, "INSERT INTO run_stats (run_id, replication, scope, metric, stat, value)"
                  " VALUES (2, 0, 'planted', 'kind', 'value', 1)");
    size_t n;
    char *before = slurp_or_fail(old, &n);
    free(out_of(old, "runs", NULL, NULL));
    free(out_of(old, "show", "2", NULL));
    cr_expect(same_bytes(old, before, n), "a second open wrote to the database");
    free(before);
    result r = run(120, "run", GENERIC, "--db", old, NULL);   /* a writing open too */
    cr_expect_eq(r.rc, 0, "%s", r.err);
    result_free(&r);
    cr_expect_eq(db_count(old, "SELECT count(*) FROM run_stats WHERE scope = 'planted' AND value = 1 AND text IS NULL"), 1,
                 "migrated a second time");
    cr_expect_eq(db_count(old, "SELECT count(*) FROM run_stats WHERE run_id = 3 AND metric = 'kind' AND text = 'generic'"), 1);
    free(want_runs);
    free(want_show1);
    free(want_show2);
    free(want_cmp);
    free(want_dump);
}

/* A writing command (run) on a version-1 database migrates it in the same
 * transaction as its run: the old rows converted, the new run stored by name. */
Test(storenames, writing_open_migrates)
{
    two_runs_v1();
    v1_rows_only(db);
    char *want = stats_dump(db);
    char old[192];
    snprintf(old, sizeof old, "%s/old.db", dir);
    copy_file(db, old);
    make_v1(old);
    result r = run(120, "run", GENERIC, "--db", old, NULL);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    result_free(&r);
    cr_expect_eq(db_count(old, "PRAGMA user_version"), 2);
    char *got = stats_dump(old);
    cr_expect_eq(strncmp(got, want, strlen(want)), 0, "the old runs' rows differ from this program's");
    free(got);
    free(want);
    cr_expect_eq(db_count(old, "SELECT count(*) FROM run_stats WHERE run_id = 3 AND metric = 'kind' AND text = 'generic'"), 1);
    cr_expect_eq(db_count(old, "SELECT count(*) FROM run_stats WHERE metric = 'kind' AND value IS NOT NULL"), 0);
}

/* When the version-1 file cannot be written at the moment (another connection
 * holds its write lock), `show` and `runs` read it converted without waiting and
 * leave it at version 1; the next open, the lock gone, migrates it. */
Test(storenames, locked_version_1_database_is_read_converted)
{
    two_runs_v1();
    v1_rows_only(db);
    char old[192];
    snprintf(old, sizeof old, "%s/old.db", dir);
    copy_file(db, old);
    make_v1(old);
    char *want_show = out_of(db, "show", "1", NULL), *want_runs = out_of(db, "runs", NULL, NULL);

    sqlite3 *lock;
    cr_assert_eq(sqlite3_open(old, &lock), SQLITE_OK);
    cr_assert_eq(sqlite3_exec(lock, "BEGIN IMMEDIATE", NULL, NULL, NULL), SQLITE_OK);
    char *got = out_of(old, "show", "1", NULL);
    cr_expect_str_eq(got, want_show);
    free(got);
    got = out_of(old, "runs", NULL, NULL);
    cr_expect_str_eq(got, want_runs);
    free(got);
    got = out_of(old, "compare", "1", "1");
    cr_expect(strstr(got, "0 metrics differ"), "%s", got);
    free(got);
    sqlite3_exec(lock, "ROLLBACK", NULL, NULL, NULL);
    sqlite3_close(lock);
    cr_expect_eq(db_count(old, "PRAGMA user_version"), 1, "migrated while another held the lock");

    free(out_of(old, "runs", NULL, NULL));
    cr_expect_eq(db_count(old, "PRAGMA user_version"), 1, "a reading command migrated the file");
    free(want_show);
    free(want_runs);
}
