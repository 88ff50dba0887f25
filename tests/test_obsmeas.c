/* test_obsmeas.c -- Criterion tests of the measurements around observed runs
 * (docs/observed.md): `latsim calib forget`, `calib import engine-log` and the
 * server metadata (`--meta`).
 *
 *   obsmeas_forget   a stored run removed with its requests and its links to
 *                    the fits made from it; a missing run is one line, exit 2,
 *                    the database byte for byte unchanged;
 * Each case runs ./latsim in a forked child bounded by alarm(), in its own
 * temporary directory.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "tcli.h"

#define REAL "tests/data/observed/vllm_rtx4090_llama31_8b_requests.jsonl"
#define REAL_INI "scenarios/replay_vllm_rtx4090.ini"

static void setup(void) { tcli_setup("/tmp/latsim_omeas_", "omeas.db"); }

TestSuite(obsmeas_forget, .init = setup, .fini = tcli_teardown);

/* Runs SQL on the database (read-write); fails the test when it fails. */
static void db_exec(const char *sql)
{
    sqlite3 *h = NULL;
    cr_assert_eq(sqlite3_open(db, &h), SQLITE_OK);
    cr_assert_eq(sqlite3_exec(h, sql, NULL, NULL, NULL), SQLITE_OK, "%s: %s", sql, sqlite3_errmsg(h));
    sqlite3_close(h);
}

Test(obsmeas_forget, removes_run_keeps_fits)
{
    for (int i = 0; i < 2; i++) {
        result r = run_db(60, "calib", "import", "observed", REAL, "--scenario", REAL_INI, NULL);
        cr_assert_eq(r.rc, 0, "%s", r.err);
        result_free(&r);
    }
    /* As if a fit had been made from run 1 (calib fit observed stores these links). */
    db_exec("INSERT INTO calib_fit_observed (fit_id, run_id) VALUES (7, 1)");
    result r = run_db(60, "calib", "forget", "1", NULL);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    cr_expect(strstr(r.out, "forgot observed run 1 (1 fitted model made from it kept") != NULL, "%s", r.out);
    result_free(&r);
    cr_expect_eq(db_count(db, "SELECT count(*) FROM calib_observed_run"), 1);
    cr_expect_eq(db_count(db, "SELECT count(*) FROM calib_observed_run WHERE id = 2"), 1);
    cr_expect_eq(db_count(db, "SELECT count(*) FROM calib_observed_req WHERE run_id = 1"), 0);
    cr_expect_eq(db_count(db, "SELECT count(*) FROM calib_observed_req WHERE run_id = 2"), 300);
    cr_expect_eq(db_count(db, "SELECT count(*) FROM calib_fit_observed"), 0);
    /* The remaining run is still replayed. */
    r = run_db(120, "replay", "--run", "2", "--json", NULL);
    cr_expect_eq(r.rc, 0, "%s", r.err);
    result_free(&r);
    r = run_db(60, "calib", "list", NULL);
    const char *obs = strstr(r.out, "observed runs");
    cr_expect(obs && strstr(obs, "\n     2 ") && !strstr(obs, "\n     1 "), "%s", r.out);
    result_free(&r);
}

Test(obsmeas_forget, bad_input_unchanged)
{
    result r = run_db(60, "calib", "import", "observed", REAL, "--scenario", REAL_INI, NULL);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    result_free(&r);
    size_t n;
    char *before = slurp_or_fail(db, &n);
    r = run_db(60, "calib", "forget", "5", NULL);
    expect_one_line(&r, 2, "no observed run with id 5", "forget a missing run");
    result_free(&r);
    r = run_db(60, "calib", "forget", "abc", NULL);
    expect_one_line(&r, 2, "calib forget: ", "forget a bad id");
    result_free(&r);
    r = run_db(60, "calib", "forget", NULL);
    expect_one_line(&r, 2, "expected one observed run ID", "forget nothing");
    result_free(&r);
    cr_expect(same_bytes(db, before, n), "a refused forget changed the database");
    free(before);
    char missing[256];
    snprintf(missing, sizeof missing, "%s/none.db", dir);
    r = run(60, "calib", "forget", "1", "--db", missing, NULL);
    expect_one_line(&r, 2, "no such database", "forget without a database");
    result_free(&r);
    cr_expect(access(missing, F_OK) != 0, "forget created a database");
}
