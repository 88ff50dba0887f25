/* test_json_utf8.c -- every JSON output is valid UTF-8 JSON when the scenario's
 * file name is Latin-1 (a byte 0xE9, "é" in ISO 8859-1, not valid UTF-8): run,
 * sweep (stored and not), plan and compare --json all go through the one JSON
 * string writer (report_json_str), which writes such a byte as the code point
 * of the same value (U+00E9); jansson, which refuses invalid UTF-8, parses each
 * output and the JSON stored in the database, and reads the name back as UTF-8. */
#include <criterion/criterion.h>

#include <jansson.h>
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>

#include "tbin.h"
#include "tcli.h"

static void setup(void) { tcli_setup("/tmp/latsim_jsonutf8_", "runs.db"); }

TestSuite(json_utf8, .init = setup, .fini = tcli_teardown);

static const char *SCENARIO =
    "[sim]\nrequests = 1500\nwarmup = 100\nseed = 3\n"
    "[workload]\narrival = poisson\nrate = 20\n"
    "[pool cpu]\nkind = generic\nservers = 2\nservice_ms = exp(mean=40)\n"
    "[slo]\ne2e_p99_ms = 5000\n";

/* Parses R's stdout (exit 0 expected, no raw 0xE9 byte) as one JSON object and
 * checks that member KEY is WANT. */
static void expect_json(result *r, const char *what, const char *key, const char *want)
{
    cr_assert_eq(r->rc, 0, "%s: exit %d: %s", what, r->rc, r->err);
    cr_expect_null(memchr(r->out, 0xE9, r->nout), "%s: a raw 0xE9 byte in the JSON", what);
    json_error_t je;
    json_t *j = json_loadb(r->out, r->nout, 0, &je);
    cr_assert_not_null(j, "%s: not valid JSON (%s, line %d): %.300s", what, je.text, je.line, r->out);
    cr_expect_str_eq(json_string_value(json_object_get(j, key)), want, "%s", what);
    json_decref(j);
    result_free(r);
}

Test(json_utf8, latin1_file_name)
{
    char s[256], want[300];
    write_file("caf\xe9.ini", SCENARIO, s, sizeof s);
    snprintf(want, sizeof want, "%s/caf\xc3\xa9.ini", dir);    /* U+00E9 in UTF-8 */

    result r = run(60, "run", s, "--json", "--db", db, NULL);
    expect_json(&r, "run --json", "scenario", want);
    r = run(60, "run", s, "--json", "--replications", "2", "--no-store", NULL);
    expect_json(&r, "run --json --replications 2", "scenario", want);
    r = run(60, "sweep", s, "--vary", "workload.rate=10,20", "--json", "--db", db, NULL);
    expect_json(&r, "sweep --json", "scenario", want);
    r = run(60, "sweep", s, "--vary", "workload.rate=10,20", "--json", "--no-store", NULL);
    expect_json(&r, "sweep --json --no-store", "scenario", want);
    r = run(120, "plan", s, "--target-rate", "10", "--json", "--no-store", "--db", db, NULL);
    expect_json(&r, "plan --json", "scenario", want);
    r = run(60, "compare", s, s, "--replications", "2", "--json", "--db", db, NULL);
    expect_json(&r, "compare --json", "a", want);

    /* The JSON stored with the runs (run, the sweep's points) and the sweep. */
    sqlite3 *h;
    sqlite3_stmt *st;
    cr_assert_eq(sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    cr_assert_eq(sqlite3_prepare_v2(h, "SELECT json FROM runs UNION ALL SELECT json FROM sweeps", -1, &st, NULL),
                 SQLITE_OK);
    int n = 0;
    while (sqlite3_step(st) == SQLITE_ROW) {
        json_error_t je;
        json_t *x = json_loads((const char *) sqlite3_column_text(st, 0), 0, &je);
        cr_expect_not_null(x, "stored JSON %d is not valid: %s", n, je.text);
        if (x) cr_expect_str_eq(json_string_value(json_object_get(x, "scenario")), want);
        json_decref(x);
        n++;
    }
    sqlite3_finalize(st);
    sqlite3_close(h);
    cr_expect_eq(n, 4, "the run, the sweep's two points and the sweep: %d", n);
}
