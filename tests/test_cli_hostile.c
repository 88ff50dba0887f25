/* test_cli_hostile.c -- Criterion tests of the command line under hostile
 * arguments (hardening issue, part "cli"): sweep/plan ranges and lists (NaN,
 * inf, empty parts, huge counts), run IDs past INT64_MAX, errors that name the
 * option that caused them (not "--set"), and the sweep/plan/check database
 * transaction (a failure part-way leaves the database byte-identical).  Each
 * case runs ./latsim in its own temporary directory, in a forked child bounded
 * by alarm(), and checks the exit status, that stderr is exactly one line (a
 * crash or a sanitizer report would add more or none), and the database.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sqlite3.h>

#include "tbin.h"
#include "tcli.h"

static void setup(void) { tcli_setup("/tmp/latsim_h2cli_", "runs.db"); }

TestSuite(cli_hostile_range, .init = setup, .fini = tcli_teardown);
TestSuite(cli_hostile_ids, .init = setup, .fini = tcli_teardown);
TestSuite(cli_hostile_labels, .init = setup, .fini = tcli_teardown);
TestSuite(cli_hostile_txn, .init = setup, .fini = tcli_teardown);

/* Exit status RC, stderr one line containing every string of the
 * NULL-terminated list after R, none of them "--set". */
static void expect_line_naming(const result *r, int rc, ...)
{
    cr_expect_eq(r->rc, rc, "exit %d, wanted %d; stderr: %s", r->rc, rc, r->err);
    cr_expect_eq(lines(r->err), 1, "stderr is not one line: '%s'", r->err);
    cr_expect(strstr(r->err, "--set") == NULL, "mislabelled --set: %s", r->err);
    va_list ap;
    va_start(ap, rc);
    for (const char *w; (w = va_arg(ap, const char *)) != NULL;)
        cr_expect(strstr(r->err, w) != NULL, "stderr lacks '%s': %s", w, r->err);
    va_end(ap);
}

static void expect_no_db(void)
{
    cr_expect_neq(access(db, F_OK), 0, "the database was created");
}

/* The database is byte-identical to BEFORE (LEN bytes), with no journal left. */
static void expect_same_db(const char *before, size_t len)
{
    size_t n = 0;
    char *now = slurp_or_null(db, &n);
    cr_assert_not_null(now, "the database is gone");
    cr_expect(n == len && memcmp(now, before, len) == 0, "the database changed (%zu bytes, was %zu)", n, len);
    free(now);
    char j[160];
    snprintf(j, sizeof j, "%s-journal", db);
    cr_expect_neq(access(j, F_OK), 0, "a journal was left behind");
}

/* COUNT(*) of SQL's single row in the database, -1 on error. */
static long long count(const char *sql)
{
    sqlite3 *h;
    long long n = -1;
    if (sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK) {
        sqlite3_stmt *st;
        if (sqlite3_prepare_v2(h, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
            n = sqlite3_column_int64(st, 0);
        sqlite3_finalize(st);
    }
    sqlite3_close(h);
    return n;
}

/* Runs SQL on the database (the test plants triggers with it). */
static void exec_sql(const char *sql)
{
    sqlite3 *h;
    cr_assert_eq(sqlite3_open(db, &h), SQLITE_OK);
    char *msg = NULL;
    cr_assert_eq(sqlite3_exec(h, sql, NULL, NULL, &msg), SQLITE_OK, "%s: %s", sql, msg ? msg : "");
    sqlite3_close(h);
}

/* M/M/1, mean service 100 ms, a priced server and an SLO: sweeps and plans. */
static const char *MM1 =
    "[sim]\nrequests = 2000\nwarmup = 200\n"
    "[workload]\nrate = 5\n"
    "[pool cpu]\nservers = 1\nservice_ms = exp(mean=100)\nusd_per_hour = 1\n"
    "[slo]\ne2e_p99_ms = 1000\n";

/* An LLM pool with an SLO: plan --gpus, --tp, --replicas. */
static const char *LLM =
    "[sim]\nrequests = 300\nwarmup = 30\n"
    "[workload]\narrival = poisson\nrate = 2\nprompt_tokens = const(200)\noutput_tokens = const(20)\n"
    "[pool chat]\nkind = llm\nmodel = llama-3-8b\ngpu = h100\n"
    "[slo]\nttft_p99_ms = 2000\n";

/* ---- ranges and lists ------------------------------------------------------------ */

/* The crashing sweeps (a NaN bound gave a range of 0 points, and the
 * sweep read point 0; an infinite STEP gave "-nan"): one line naming --vary and
 * the bad part, exit 2, no database. */
Test(cli_hostile_range, sweep_nan_and_inf_bounds_are_refused)
{
    char s[256];
    write_file("s.ini", MM1, s, sizeof s);
    static const struct { const char *vary, *want; } cases[] = {
        { "workload.rate=nan:1:1", "FROM 'nan' is not a finite number" },
        { "workload.rate=1:nan:1", "TO 'nan' is not a finite number" },
        { "pool cpu.servers=nan:4:1", "FROM 'nan' is not a finite number" },
        { "workload.rate=1:9:inf", "STEP 'inf' is not a finite number" },
        { "workload.rate=1:9:nan", "STEP 'nan' is not a finite number" },
        { "workload.rate=-inf:9:1", "FROM '-inf' is not a finite number" },
        { "workload.rate=1:1e999:1", "TO '1e999' is not a finite number" },
        { "workload.rate=1:9:0", "STEP must be > 0" },
        { "workload.rate=1:9:-2", "STEP must be > 0" },
        { "workload.rate=9:1:1", "empty range: TO 1 is below FROM 9" },
        { "workload.rate=1:x:1", "TO 'x' is not a number" },
        { "workload.rate=:9:1", "FROM is empty" },
        { "workload.rate=1:9:", "STEP is empty" },
        { "workload.rate=1:9", "expected FROM:TO:STEP" },
        { "workload.rate=1:2:3:4", "more than three parts" },
        /* The bound is stated, also when the count overflows. */
        { "workload.rate=1:100000:1", "100000 values (at most 10000)" },
        { "workload.rate=-1e308:1e308:1", "too many values (at most 10000)" },
        { "workload.rate=1:1e300:1e-300", "too many values (at most 10000)" },
        /* A STEP below the values' precision repeats them. */
        { "workload.rate=1:1.000000001:1e-12", "the values repeat" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char vary[128];
        snprintf(vary, sizeof vary, "%s", cases[i].vary);
        result r = run(60, "sweep", s, "--vary", vary, "--db", db, NULL);
        expect_line_naming(&r, 2, "sweep: --vary", cases[i].vary, cases[i].want, NULL);
        result_free(&r);
        expect_no_db();
    }
}

/* Comma lists: empty entries and numbers that are not finite are refused by
 * the sweep; a word or a fraction for a whole-number key by the scenario,
 * named --vary. */
Test(cli_hostile_range, sweep_bad_list_values_are_refused)
{
    char s[256];
    write_file("s.ini", MM1, s, sizeof s);
    static const struct { const char *vary, *want; } cases[] = {
        { "workload.rate=1,,2", "empty value in the list" },
        { "workload.rate=1,", "empty value in the list" },
        { "workload.rate=,", "empty value in the list" },
        { "workload.rate=", "empty value in the list" },
        { "workload.rate=1,nan", "value 'nan' is not a finite number" },
        { "workload.rate=INF,1", "value 'INF' is not a finite number" },
        { "workload.rate=1,1e999", "value '1e999' is not a finite number" },
        { "workload.rate=1,abc", "--vary: [workload] rate:" },
        { "pool cpu.servers=1.5,2", "--vary: [pool cpu] servers: expected a whole number, got '1.5'" },
        { "pool cpu.servers=1:3:0.5", "--vary: [pool cpu] servers: expected a whole number, got '1.5'" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char vary[128];
        snprintf(vary, sizeof vary, "%s", cases[i].vary);
        result r = run(60, "sweep", s, "--vary", vary, "--db", db, NULL);
        expect_line_naming(&r, 2, "--vary", cases[i].want, NULL);
        result_free(&r);
        expect_no_db();
    }
}

/* The checks refuse only what is wrong: an ordinary range, a one-point range
 * and a list still sweep (the count of simulations is the grid's, no SLO
 * boundary in these ranges to narrow down). */
Test(cli_hostile_range, sweep_good_ranges_still_run)
{
    char s[256];
    write_file("s.ini", MM1, s, sizeof s);
    static const struct { const char *vary; const char *sims; } cases[] = {
        { "workload.rate=1:2:0.5", "\"simulations\": 3" },
        { "workload.rate=2:2:1", "\"simulations\": 1" },
        { "workload.rate=1,2", "\"simulations\": 2" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char vary[64];
        snprintf(vary, sizeof vary, "%s", cases[i].vary);
        result r = run(60, "sweep", s, "--vary", vary, "--json", "--no-store", NULL);
        cr_expect_eq(r.rc, 0, "%s: exit %d: %s", vary, r.rc, r.err);
        cr_expect(strstr(r.out, cases[i].sims) != NULL, "%s: %s", vary, r.out);
        result_free(&r);
    }
    expect_no_db();
}

/* The crashing plans (atoi of the first of 0 values) and the same
 * checks for --search, --tp and --gpus lists. */
Test(cli_hostile_range, plan_nan_bounds_and_bad_lists_are_refused)
{
    char s[256], l[256];
    write_file("s.ini", MM1, s, sizeof s);
    write_file("l.ini", LLM, l, sizeof l);
    static const struct { int llm; const char *opt, *val, *want; } cases[] = {
        { 0, "--search", "pool cpu.servers=nan:4", "--search pool cpu.servers=nan:4: FROM 'nan' is not a finite number" },
        { 0, "--search", "pool cpu.servers=1:nan", "--search pool cpu.servers=1:nan: TO 'nan' is not a finite number" },
        { 0, "--search", "pool cpu.servers=1:4:inf", "STEP 'inf' is not a finite number" },
        { 0, "--search", "pool cpu.servers=4:1", "empty range: TO 1 is below FROM 4" },
        { 0, "--search", "pool cpu.servers=1.5:4", "--search pool cpu.servers=1.5:4: expected whole numbers" },
        { 0, "--search", "pool cpu.servers=1e10,2e10", "expected whole numbers from 1 to" },
        { 0, "--search", "pool cpu.servers=1,,4", "empty value in the list" },
        { 0, "--search", "pool cpu.servers=1,nan", "value 'nan' is not a finite number" },
        { 0, "--search", "pool cpu.queue_limit=1:1000", "1000 values (at most 256)" },
        { 0, "--search", "pool cpu.queue_limit=0.5,1", "--search: [pool cpu] queue_limit:" },
        { 1, "--tp", "1:nan", "--tp 1:nan: TO 'nan' is not a finite number" },
        { 1, "--tp", "nan", "--tp nan: value 'nan' is not a finite number" },
        { 1, "--tp", "1,,2", "--tp 1,,2: empty value in the list" },
        { 1, "--gpus", "h100,", "--gpus h100,: empty value in the list" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char opt[32], val[128];
        snprintf(opt, sizeof opt, "%s", cases[i].opt);
        snprintf(val, sizeof val, "%s", cases[i].val);
        result r = run(60, "plan", cases[i].llm ? l : s, "--target-rate", "5", opt, val, "--db", db, NULL);
        expect_line_naming(&r, 2, cases[i].opt, cases[i].want, NULL);
        result_free(&r);
        expect_no_db();
    }
}

/* ---- IDs ---------------------------------------------------------------------------- */

/* 9223372036854775808 and 99999999999999999999 were read as run
 * 9223372036854775807 (strtoll saturates); signs, blanks, hex and 0 are no IDs
 * either.  Every command that takes one refuses them, one line, exit 2, the
 * database unchanged. */
Test(cli_hostile_ids, out_of_range_and_malformed_ids_are_refused)
{
    char s[256];
    write_file("s.ini", MM1, s, sizeof s);
    result r = run(60, "run", s, "--db", db, NULL);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    result_free(&r);
    size_t len;
    char *before = slurp_or_null(db, &len);
    cr_assert_not_null(before);
    const char *bad[] = { "9223372036854775808", "99999999999999999999", "0", "-1", "+1", " 1", "1x", "0x1", "", "1.0" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char id[64], quoted[80];
        snprintf(id, sizeof id, "%s", bad[i]);
        snprintf(quoted, sizeof quoted, "'%s'", bad[i]);
        result a = run(60, "show", id, "--db", db, NULL);
        expect_line_naming(&a, 2, "show: expected a run ID", quoted, NULL);
        /* plot and calib read "-1" as an option: refused as one. */
        int opt = bad[i][0] == '-';
        result b = run(60, "plot", "sweep", id, "--db", db, NULL);
        expect_line_naming(&b, 2, opt ? "plot: unknown option '-1'" : "plot: expected a sweep ID", quoted, NULL);
        result c = run(60, "baseline", "accept", id, "--db", db, NULL);
        expect_line_naming(&c, 2, "baseline accept: expected a run ID", quoted, NULL);
        result d = run(60, "calib", "show", id, "--db", db, NULL);
        expect_line_naming(&d, 2, opt ? "calib" : "calib show: expected a model ID", opt ? "-1" : quoted, NULL);
        result_free(&a); result_free(&b); result_free(&c); result_free(&d);
        expect_same_db(before, len);
    }
    /* plot run ID: "-1" reads as an option there; the others as IDs. */
    result p = run(60, "plot", "99999999999999999999", "--db", db, NULL);
    expect_line_naming(&p, 2, "plot: expected a run ID", "'99999999999999999999'", NULL);
    result_free(&p);
    /* compare: digits with no such file are an ID. */
    const char *cbad[] = { "99999999999999999999", "9223372036854775808", "0" };
    for (size_t i = 0; i < 3; i++) {
        char id[64];
        snprintf(id, sizeof id, "%s", cbad[i]);
        result c = run(60, "compare", id, "1", "--db", db, NULL);
        expect_line_naming(&c, 2, "compare:", id, "neither a scenario file nor a run ID", NULL);
        result_free(&c);
    }
    /* The largest ID is an ID: there is no such run (exit 2, not a parse error). */
    result m = run(60, "show", "9223372036854775807", "--db", db, NULL);
    expect_line_naming(&m, 2, "no run 9223372036854775807", NULL);
    result_free(&m);
    result ok = run(60, "show", "1", "--db", db, NULL);
    cr_expect_eq(ok.rc, 0, "%s", ok.err);
    result_free(&ok);
    expect_same_db(before, len);
    free(before);
}

/* show checks its argument before the database: a bad ID is named even when
 * there is no database (and none is made). */
Test(cli_hostile_ids, show_checks_the_id_first)
{
    result r = run(60, "show", "9223372036854775808", "--db", db, NULL);
    expect_line_naming(&r, 2, "show: expected a run ID", NULL);
    result_free(&r);
    expect_no_db();
}

/* ---- errors name their option ------------------------------------------------------- */

/* plan's own options set scenario keys; the scenario's error names the option
 * (it said --set, an option not given). */
Test(cli_hostile_labels, plan_errors_name_their_option)
{
    char l[256], s[256];
    write_file("l.ini", LLM, l, sizeof l);
    write_file("s.ini", MM1, s, sizeof s);
    static const struct { int llm; const char *opt, *val, *prefix, *want; } cases[] = {
        { 1, "--gpus", "zz", "latsim: --gpus: ", "unknown gpu 'zz' (valid: " },
        { 1, "--gpus", "h100,zz", "latsim: --gpus: ", "unknown gpu 'zz'" },
        { 1, "--tp", "1.5", "latsim: --tp: ", "expected a whole number, got '1.5'" },
        { 1, "--tp", "0", "latsim: --tp: ", "tp: must be between 1 and 64" },
        { 1, "--replicas", "1:2000000", "latsim: --replicas: ", "replicas: must be between 1 and 1000000, got '2000000'" },
        { 1, "--replicas", "1:99999999999", "latsim: plan: --replicas 1:99999999999: ", "B '99999999999' is not a whole number" },
        { 1, "--replicas", "nan:4", "latsim: plan: --replicas nan:4: ", "A 'nan' is not a whole number" },
        { 1, "--replicas", "1.5:4", "latsim: plan: --replicas 1.5:4: ", "A '1.5'" },
        { 1, "--replicas", "4:1", "latsim: plan: --replicas 4:1: ", "empty range" },
        { 1, "--replicas", "1:2:3", "latsim: plan: --replicas 1:2:3: ", "more than two parts" },
        { 1, "--target-rate", "1e-300", "latsim: --target-rate: ", "[workload] rate:" },
        { 0, "--target-rate", "1e-300", "latsim: --target-rate: ", "beyond the simulated clock's range" },
        { 0, "--search", "pool cpu.servers=1,200000000", "latsim: --search: ", "[pool cpu] servers: must be between" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char opt[32], val[64];
        snprintf(opt, sizeof opt, "%s", cases[i].opt);
        snprintf(val, sizeof val, "%s", cases[i].val);
        result r = !strcmp(opt, "--target-rate") ? run(60, "plan", cases[i].llm ? l : s, opt, val, "--db", db, NULL)
                                                 : run(60, "plan", cases[i].llm ? l : s, "--target-rate", "5", opt, val, "--db", db, NULL);
        expect_line_naming(&r, 2, cases[i].want, NULL);
        cr_expect(!strncmp(r.err, cases[i].prefix, strlen(cases[i].prefix)), "%s %s: '%s' does not start with '%s'",
                  opt, val, r.err, cases[i].prefix);
        result_free(&r);
        expect_no_db();
    }
}

/* ---- the sweep/plan transaction ----------------------------------------------------- */

/* A sweep, then a trigger that refuses the SECOND point of the next sweep,
 * or the final update of its header: the failed sweep stores nothing (it left
 * a sweeps row with NULL results and no points), exit 1, one line. */
Test(cli_hostile_txn, sweep_failing_part_way_leaves_the_database_as_it_was)
{
    char s[256];
    write_file("s.ini", MM1, s, sizeof s);
    result r = run(60, "sweep", s, "--vary", "workload.rate=1:3:1", "--db", db, NULL);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    result_free(&r);
    cr_assert_eq(count("SELECT count(*) FROM sweep_points"), 3);
    const char *triggers[] = {
        "CREATE TRIGGER full BEFORE INSERT ON sweep_points"
        " WHEN (SELECT count(*) FROM sweep_points WHERE sweep_id = NEW.sweep_id) >= 1"
        " BEGIN SELECT RAISE(ABORT, 'disk full'); END",
        "CREATE TRIGGER full BEFORE UPDATE ON sweeps BEGIN SELECT RAISE(ABORT, 'disk full'); END",
        "CREATE TRIGGER full BEFORE INSERT ON runs"
        " WHEN (SELECT count(*) FROM runs) >= 5 BEGIN SELECT RAISE(ABORT, 'disk full'); END",
    };
    for (size_t i = 0; i < sizeof triggers / sizeof triggers[0]; i++) {
        exec_sql("DROP TRIGGER IF EXISTS full");
        exec_sql(triggers[i]);
        size_t len;
        char *before = slurp_or_null(db, &len);
        cr_assert_not_null(before);
        result f = run(60, "sweep", s, "--vary", "workload.rate=1:4:1", "--db", db, NULL);
        expect_line_naming(&f, 1, "sweep not stored: ", "disk full", NULL);
        cr_expect(strstr(f.out, "stored in") == NULL, "claims to be stored: %s", f.out);
        result_free(&f);
        expect_same_db(before, len);
        free(before);
        cr_expect_eq(count("SELECT count(*) FROM sweeps"), 1);
    }
    /* The same sweep without the trigger is stored whole. */
    exec_sql("DROP TRIGGER full");
    result g = run(60, "sweep", s, "--vary", "workload.rate=1:4:1", "--db", db, NULL);
    cr_expect_eq(g.rc, 0, "%s", g.err);
    cr_expect(strstr(g.out, "sweep 2 stored in") != NULL, "%s", g.out);
    result_free(&g);
    cr_expect_eq(count("SELECT count(*) FROM sweep_points WHERE sweep_id = 2"), 4);
    cr_expect_eq(count("SELECT count(*) FROM sweeps WHERE result IS NULL AND json IS NULL"), 0);
}

/* A real write failure: the file may not grow past its size + 4 KiB
 * (RLIMIT_FSIZE, writes fail with EFBIG as on a full disk).  sweep, plan and
 * check each fail with one line, exit 1, and the database is byte-identical. */
Test(cli_hostile_txn, full_disk_leaves_the_database_byte_identical)
{
    char s[256];
    write_file("s.ini", MM1, s, sizeof s);
    result r = run(60, "run", s, "--db", db, NULL);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    result_free(&r);
    size_t len;
    char *before = slurp_or_null(db, &len);
    cr_assert_not_null(before);
    child_limits.fsize = (rlim_t) len + 4096;
    result a = run(60, "sweep", s, "--vary", "workload.rate=1:12:1", "--db", db, NULL);
    expect_line_naming(&a, 1, "sweep not stored: ", db, NULL);
    result_free(&a);
    expect_same_db(before, len);
    result b = run(60, "plan", s, "--target-rate", "5", "--search", "pool cpu.servers=1:8", "--db", db, NULL);
    expect_line_naming(&b, 1, "plan not stored: ", db, NULL);
    result_free(&b);
    expect_same_db(before, len);
    /* check stores its runs together too (the scenario has no baseline). */
    char s2[256], s3[256];
    write_file("s2.ini", MM1, s2, sizeof s2);
    write_file("s3.ini", MM1, s3, sizeof s3);
    result c = run(60, "check", s, s2, s3, "--db", db, NULL);
    cr_expect_eq(c.rc, 1, "exit %d: %s", c.rc, c.err);
    cr_expect_eq(lines(c.err), 1, "%s", c.err);
    cr_expect(strstr(c.err, db) != NULL, "%s", c.err);
    result_free(&c);
    expect_same_db(before, len);
    /* Room again: the same plan is stored. */
    child_limits.fsize = 0;
    result d = run(60, "plan", s, "--target-rate", "5", "--search", "pool cpu.servers=1:8", "--db", db, NULL);
    cr_expect_eq(d.rc, 0, "%s", d.err);
    result_free(&d);
    cr_expect_eq(count("SELECT count(*) FROM sweeps WHERE kind = 'plan' AND json IS NOT NULL"), 1);
    free(before);
}
