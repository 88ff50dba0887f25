/* test_provenance.c -- Criterion tests of what every number stands on: the
 * cost model of each LLM pool (kind, id, source, error, range) in the tables
 * and JSON of run, sweep, check, compare and plan; the one warning per command
 * when the step times are the uncalibrated roofline; check --junit's
 * properties; [sim] cost_db / --cost-db; the coefficients a stored run records
 * and a re-run from them without the calibration database; step_time_scale;
 * and plan's sensitivity check.  The calibrated model is fitted in each test
 * from tests/data/splitwise_bloom176b.csv (26 measured steps of BLOOM-176B on
 * A100 at TP 8, as docs/calibration.md does). */
#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tbin.h"
#include "tcli.h"

#define WARNING "latsim: warning: step times are datasheet estimates"

static void setup(void) { tcli_setup("/tmp/latsim_prov_", "c.db"); }
TestSuite(provenance, .init = setup, .fini = tcli_teardown);

static char cal[160];            /* dir/cal.db: the calibration database */

/* Occurrences of NEEDLE in HAY. */
static int count(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle)) n++;
    return n;
}

/* Adds BLOOM-176B to the catalog of database PATH. */
static void add_bloom(const char *path)
{
    result r = run(60, "catalog", "add", "tests/data/bloom-176b.ini", "--db", path, NULL);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    result_free(&r);
}

/* dir/cal.db: BLOOM-176B in the catalog, its steps imported and fitted (model 1). */
static void make_cal(void)
{
    snprintf(cal, sizeof cal, "%s/cal.db", dir);
    add_bloom(cal);
    result r = run(60, "calib", "import", "steps", "tests/data/splitwise_bloom176b.csv", "--db", cal, NULL);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    result_free(&r);
    r = run(120, "calib", "fit", "--model", "bloom-176b", "--gpu", "a100", "--db", cal, NULL);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    result_free(&r);
}

/* A small LLM scenario of MODEL on GPU at TP, with an [slo] when SLO; its roofline key
 * (compute_eff, at its default) makes auto fall back to the roofline, not the learned model. */
static void scenario(const char *name, const char *model, const char *gpu, int tp, double rate, int slo, char *path,
                     size_t n)
{
    char text[1024];
    snprintf(text, sizeof text,
             "[sim]\nrequests = 300\nwarmup = 30\n"
             "[workload]\nrate = %g\nprompt_tokens = const(500)\noutput_tokens = const(20)\n"
             "[pool chat]\nkind = llm\nmodel = %s\ngpu = %s\ntp = %d\ncompute_eff = 0.6\n%s",
             rate, model, gpu, tp, slo ? "[slo]\nttft_p99_ms = 3000\ntpot_p99_ms = 400\n" : "");
    write_file(name, text, path, n);
}

/* The JSON object of OUT (fails the test when it is not one). */
static json_t *parse(const char *out)
{
    json_error_t e;
    json_t *j = json_loads(out, 0, &e);
    cr_assert(j, "not JSON (%s): %.300s", e.text, out);
    return j;
}

Test(provenance, roofline_line_json_and_one_warning_per_command)
{
    char ini[256];
    scenario("s.ini", "llama-3-8b", "h100", 1, 5, 0, ini, sizeof ini);
    result r = run_db(60, "run", ini, "--no-store", NULL);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    cr_expect(strstr(r.out, "  cost_model           roofline (datasheet)\n"), "%s", r.out);
    cr_expect(strstr(r.out, "  cost_coefficients    compute_eff=0.6 memory_eff=0.8 step_overhead_ms=1 "
                            "allreduce_latency_us=8 launch_us_per_layer=20\n"), "%s", r.out);
    cr_expect_eq(count(r.err, WARNING), 1, "%s", r.err);
    cr_expect(strstr(r.err, "calib fit observed"), "%s", r.err);
    cr_expect(strstr(r.err, "E2E +32 %"), "%s", r.err);
    result_free(&r);

    r = run_db(60, "run", ini, "--no-store", "--json", NULL);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    json_t *j = parse(r.out), *pr = json_object_get(json_object_get(json_object_get(j, "pools"), "chat"), "cost_provenance");
    cr_assert(pr, "%s", r.out);
    cr_expect(json_is_false(json_object_get(pr, "calibrated")));
    cr_expect_str_eq(json_string_value(json_object_get(pr, "coefficients")),
                     "compute_eff=0.6 memory_eff=0.8 step_overhead_ms=1 allreduce_latency_us=8 launch_us_per_layer=20");
    json_decref(j);
    cr_expect_eq(count(r.err, WARNING), 1, "%s", r.err);
    result_free(&r);

    /* A sweep of three points (three runs) warns once, and says it in the table and JSON. */
    r = run_db(120, "sweep", ini, "--vary", "workload.rate=2:6:2", "--no-store", NULL);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    cr_expect(strstr(r.out, "\ncost model [pool chat]: roofline (datasheet, uncalibrated)\n"), "%s", r.out);
    cr_expect_eq(count(r.err, WARNING), 1, "%s", r.err);
    result_free(&r);
    r = run_db(120, "sweep", ini, "--vary", "workload.rate=2:6:2", "--no-store", "--json", NULL);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    j = parse(r.out);
    json_t *cm = json_object_get(json_object_get(j, "cost_models"), "chat");
    cr_expect_str_eq(json_string_value(json_object_get(cm, "kind")), "roofline");
    cr_expect_str_eq(json_string_value(json_object_get(cm, "source")), "datasheet");
    cr_expect(json_is_false(json_object_get(cm, "calibrated")));
    json_decref(j);
    cr_expect_eq(count(r.err, WARNING), 1, "%s", r.err);
    result_free(&r);

    /* compare: both sides named, one warning for the two of them. */
    r = run_db(120, "compare", ini, ini, "--replications", "2", NULL);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    cr_expect(strstr(r.out, "  A cost model [pool chat]: roofline (datasheet, uncalibrated)\n"
                            "  B cost model [pool chat]: roofline (datasheet, uncalibrated)\n"), "%s", r.out);
    cr_expect_eq(count(r.err, WARNING), 1, "%s", r.err);
    result_free(&r);

    /* A model given by the scenario (linear) is not the datasheet: no warning. */
    r = run_db(60, "run", ini, "--no-store", "--set", "pool chat.cost=linear", "--set", "pool chat.step_base_ms=5",
               "--set", "pool chat.prefill_ms_per_token=0.01", "--set", "pool chat.decode_ms_per_seq=0.1", NULL);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    cr_expect(strstr(r.out, "  cost_model           linear (scenario)\n"), "%s", r.out);
    cr_expect_eq(count(r.err, WARNING), 0, "%s", r.err);
    result_free(&r);
}

Test(provenance, fitted_model_named_and_cost_db_selects_it)
{
    make_cal();
    add_bloom(db);               /* the run's own database: the catalog, no calibrated model */
    char ini[256];
    scenario("b.ini", "bloom-176b", "a100", 8, 1, 0, ini, sizeof ini);

    /* auto against the run's database: the roofline, and the warning. */
    result r = run_db(60, "run", ini, "--no-store", NULL);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    cr_expect(strstr(r.out, "  cost_model           roofline (datasheet)\n"), "%s", r.out);
    cr_expect_eq(count(r.err, WARNING), 1, "%s", r.err);
    result_free(&r);

    /* --cost-db: the fitted model of that database, said in the table; no warning. */
    r = run_db(60, "run", ini, "--no-store", "--cost-db", cal, NULL);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    cr_expect(strstr(r.out, "  cost_model           fitted 1 (steps-csv, cv_mape 10.3 %, measured)\n"), "%s", r.out);
    cr_expect(strstr(r.out, "  cost_coefficients    cost=fitted cost_terms="), "%s", r.out);
    cr_expect_eq(count(r.err, WARNING), 0, "%s", r.err);
    result_free(&r);

    /* The scenario key does the same, relative to the scenario's folder. */
    r = run_db(60, "run", ini, "--no-store", "--json", "--set", "sim.cost_db=cal.db", NULL);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    json_t *j = parse(r.out), *chat = json_object_get(json_object_get(j, "pools"), "chat");
    json_t *cm = json_object_get(chat, "cost_model");
    cr_expect_str_eq(json_string_value(json_object_get(cm, "kind")), "fitted");
    cr_expect_eq(json_integer_value(json_object_get(cm, "id")), 1);
    cr_expect_str_eq(json_string_value(json_object_get(cm, "source")), "steps-csv");
    json_t *pr = json_object_get(chat, "cost_provenance");
    cr_expect_str_eq(json_string_value(json_object_get(pr, "range")), "measured");
    cr_expect(json_is_true(json_object_get(pr, "calibrated")));
    json_decref(j);
    result_free(&r);

    /* A calibration database that is not there: one line naming the option or the key, exit 2. */
    char missing[200];
    snprintf(missing, sizeof missing, "%s/none.db", dir);
    r = run_db(60, "run", ini, "--no-store", "--cost-db", missing, NULL);
    expect_one_line(&r, 2, "--cost-db", "latsim: run: --cost-db");
    result_free(&r);
    r = run_db(60, "run", ini, "--no-store", "--set", "sim.cost_db=none.db", NULL);
    expect_one_line(&r, 2, "[sim] cost_db: cannot open the calibration database", "latsim: ");
    result_free(&r);

    /* check --junit carries the model as a property; the roofline's warning too. */
    char xml[200];
    snprintf(xml, sizeof xml, "%s/j.xml", dir);
    r = run_db(120, "check", ini, "--no-store", "--junit", xml, "--cost-db", cal, NULL);
    cr_assert_eq(r.rc, 0, "%s %s", r.out, r.err);
    char *x = slurp_or_fail(xml, NULL);
    cr_expect(strstr(x, "<property name=\"cost_model.chat\" value=\"fitted 1 (steps-csv, cv_mape 10.3 %, measured)\"/>"), "%s", x);
    cr_expect(!strstr(x, "cost_model_warning"), "%s", x);
    free(x);
    cr_expect(strstr(r.out, "    cost model [pool chat]: fitted 1 (steps-csv"), "%s", r.out);
    cr_expect_eq(count(r.err, WARNING), 0, "%s", r.err);
    result_free(&r);
    r = run_db(120, "check", ini, "--no-store", "--junit", xml, NULL);
    cr_assert_eq(r.rc, 0, "%s %s", r.out, r.err);
    x = slurp_or_fail(xml, NULL);
    cr_expect(strstr(x, "<property name=\"cost_model.chat\" value=\"roofline (datasheet, uncalibrated)\"/>"), "%s", x);
    cr_expect(strstr(x, "<property name=\"cost_model_warning\" value=\"step times are datasheet estimates"), "%s", x);
    free(x);
    cr_expect_eq(count(r.err, WARNING), 1, "%s", r.err);
    result_free(&r);
}

/* The latency statistics of a run's JSON (its "latency_ms" object), as text. */
static char *latencies(const char *out)
{
    json_t *j = parse(out);
    char *s = json_dumps(json_object_get(j, "latency_ms"), JSON_SORT_KEYS | JSON_REAL_PRECISION(17));
    json_decref(j);
    cr_assert(s);
    return s;
}

Test(provenance, stored_coefficients_rerun_identically_without_the_calibration_database)
{
    make_cal();
    char ini[256];
    scenario("b.ini", "bloom-176b", "a100", 8, 1, 0, ini, sizeof ini);
    /* Stored in the calibration database (it is the run's --db here). */
    result r = run(60, "run", ini, "--db", cal, NULL);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    result_free(&r);
    r = run(60, "run", ini, "--db", cal, "--json", "--no-store", NULL);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    char *want = latencies(r.out);
    result_free(&r);

    /* The database keeps the coefficients with the run, and show prints them. */
    char sql[200];
    snprintf(sql, sizeof sql, "SELECT count(*) FROM run_stats WHERE run_id = 1 AND scope = 'chat' AND "
             "metric = 'cost_model.coefficients' AND text LIKE 'cost=fitted cost_terms=%%'");
    cr_expect_eq(db_count(cal, sql), 1);
    r = run(60, "show", "1", "--db", cal, NULL);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    static const char lead[] = "cost=fitted cost_terms=";
    const char *co = strstr(r.out, lead);
    cr_assert(co, "%s", r.out);
    co += strlen(lead);
    cr_expect(strstr(r.out, "cost_model.coefficients"), "%s", r.out);
    cr_expect(strstr(r.out, "cost_model.range "), "%s", r.out);
    char terms[700];
    snprintf(terms, sizeof terms, "pool chat.cost_terms=%.*s", (int) strcspn(co, " \n"), co);
    result_free(&r);

    /* Another machine: a database with the catalog entry only. */
    char other[200];
    snprintf(other, sizeof other, "%s/other.db", dir);
    add_bloom(other);
    r = run(60, "run", ini, "--db", other, "--json", "--no-store", NULL);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    char *roof = latencies(r.out);
    cr_expect(strcmp(roof, want) != 0, "the roofline should differ from the fitted model");
    result_free(&r);
    r = run(60, "run", ini, "--db", other, "--json", "--no-store", "--set", "pool chat.cost=fitted", "--set", terms, NULL);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    char *got = latencies(r.out);
    cr_expect_str_eq(got, want);
    cr_expect(strstr(r.out, "\"cost_model\": {\"kind\": \"fitted\", \"id\": null, \"source\": \"scenario\""), "%s", r.out);
    result_free(&r);
    free(want);
    free(roof);
    free(got);

    /* cost_terms is checked: the count, and the model it needs. */
    r = run(60, "run", ini, "--db", other, "--no-store", "--set", "pool chat.cost=fitted", "--set",
            "pool chat.cost_terms=1,2,3", NULL);
    expect_one_line(&r, 2, "cost_terms: expected 10 non-negative numbers", "latsim: ");
    result_free(&r);
    r = run(60, "run", ini, "--db", other, "--no-store", "--set", "pool chat.cost_terms=1,0,0,0,0,0,0,0,0,0", NULL);
    expect_one_line(&r, 2, "cost_terms: needs cost = fitted (not auto)", "latsim: ");
    result_free(&r);
}

/* step_time_scale multiplies every step: with a linear model of 10 ms per step
 * and requests that arrive one at a time, TTFT is one step (10 ms), and 25 ms at
 * x2.5; E2E of 4 output tokens is 4 steps. */
Test(provenance, step_time_scale_multiplies_every_step)
{
    char ini[256];
    write_file("l.ini", "[sim]\nrequests = 20\nwarmup = 0\n[workload]\narrival = constant\nrate = 1\n"
               "prompt_tokens = const(100)\noutput_tokens = const(4)\n"
               "[pool chat]\nkind = llm\nmodel = llama-3-8b\ngpu = h100\ncost = linear\nstep_base_ms = 10\n"
               "prefill_ms_per_token = 0\ndecode_ms_per_seq = 0\n", ini, sizeof ini);
    const char *scale[] = { NULL, "pool chat.step_time_scale=2.5" };
    double want[] = { 10, 25 };
    for (int k = 0; k < 2; k++) {
        result r = scale[k] ? run_db(60, "run", ini, "--no-store", "--json", "--set", scale[k], NULL)
                            : run_db(60, "run", ini, "--no-store", "--json", NULL);
        cr_assert_eq(r.rc, 0, "%s", r.err);
        json_t *j = parse(r.out), *lat = json_object_get(j, "latency_ms");
        double ttft = json_number_value(json_object_get(json_object_get(lat, "ttft"), "max"));
        double e2e = json_number_value(json_object_get(json_object_get(lat, "e2e"), "mean"));
        cr_expect(fabs(ttft - want[k]) < 1e-6 * want[k], "ttft %g, want %g", ttft, want[k]);
        cr_expect(fabs(e2e - 4 * want[k]) < 1e-6 * want[k], "e2e %g, want %g", e2e, 4 * want[k]);
        json_decref(j);
        result_free(&r);
    }
}

/* The settings of a plan's JSON answer as text. */
static char *settings_of(json_t *answer)
{
    char *s = json_dumps(json_object_get(answer, "settings"), JSON_SORT_KEYS);
    cr_assert(s);
    return s;
}

/* The plan's best settings with every step time x F (no sensitivity check). */
static char *best_at(const char *ini, const char *extra, double f)
{
    char set[80];
    snprintf(set, sizeof set, "pool chat.step_time_scale=%.10g", f);
    result r = extra ? run_db(300, "plan", ini, "--target-rate", "2", "--replicas", "1:6", "--no-store", "--json",
                              "--no-sensitivity", "--set", set, "--cost-db", extra, NULL)
                     : run_db(300, "plan", ini, "--target-rate", "2", "--replicas", "1:6", "--no-store", "--json",
                              "--no-sensitivity", "--set", set, NULL);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    json_t *j = parse(r.out);
    char *s = settings_of(json_object_get(j, "best"));
    cr_expect(!json_object_get(j, "sensitivity"));
    json_decref(j);
    result_free(&r);
    return s;
}

/* The sensitivity check's answers are those of plans searched at the scaled
 * step times, and its verdict says whether they are the plan's own. */
static void check_sensitivity(const char *ini, const char *costdb, const char *basis, double f0, double f1)
{
    result r = costdb ? run_db(300, "plan", ini, "--target-rate", "2", "--replicas", "1:6", "--no-store", "--json",
                               "--cost-db", costdb, NULL)
                      : run_db(300, "plan", ini, "--target-rate", "2", "--replicas", "1:6", "--no-store", "--json", NULL);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    cr_expect_eq(count(r.err, WARNING), costdb ? 0 : 1, "%s", r.err);
    json_t *j = parse(r.out), *s = json_object_get(j, "sensitivity");
    cr_assert(s, "%s", r.out);
    cr_expect_str_eq(json_string_value(json_object_get(s, "basis")), basis);
    char *best = settings_of(json_object_get(j, "best"));
    json_t *ans = json_object_get(s, "answers");
    cr_assert_eq(json_array_size(ans), 2);
    double f[2] = { f0, f1 };
    int same = 1;
    char first[1024] = "";
    for (int k = 0; k < 2; k++) {
        json_t *a = json_array_get(ans, k);
        double fk = json_number_value(json_object_get(a, "step_time_scale"));
        cr_expect(fabs(fk - f[k]) < 1e-6, "x%.10g, want %.10g", fk, f[k]);
        cr_assert(json_is_true(json_object_get(a, "met")), "%s", r.out);
        char *got = settings_of(a), *alone = best_at(ini, costdb, fk);
        cr_expect_str_eq(got, alone, "x%g", f[k]);
        if (k == 0) snprintf(first, sizeof first, "%s", got);
        else same = !strcmp(got, first);       /* robust: both ends choose the same configuration */
        free(got);
        free(alone);
    }
    cr_expect_eq(json_is_true(json_object_get(s, "robust")), same);
    const char *v = json_string_value(json_object_get(s, "verdict"));
    const char *lead = same ? "robust: same configuration at x" : "not robust: x";
    cr_expect(v && !strncmp(v, lead, strlen(lead)), "%s", v);
    free(best);
    json_decref(j);
    result_free(&r);

    /* The table prints it after the answer. */
    r = costdb ? run_db(300, "plan", ini, "--target-rate", "2", "--replicas", "1:6", "--no-store", "--cost-db", costdb, NULL)
               : run_db(300, "plan", ini, "--target-rate", "2", "--replicas", "1:6", "--no-store", NULL);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    const char *b = strstr(r.out, "\nbest: "), *sv = strstr(r.out, "\nsensitivity (step times ");
    cr_expect(b && sv && sv > b, "%s", r.out);
    cr_expect(strstr(r.out, same ? "\nrobust: same configuration at x" : "\nnot robust: x"), "%s", r.out);
    result_free(&r);
}

Test(provenance, plan_band_uncalibrated_default, .timeout = 600)
{
    char ini[256];
    scenario("s.ini", "llama-3-8b", "l40s", 1, 2, 1, ini, sizeof ini);
    check_sensitivity(ini, NULL, "x0.527 and x1.9: the 90 % band of roofline: no validated error, the default (median "
                      "step-time error 30 %, the roofline's on real runs)", 0.5273883, 1.8961361);
}

Test(provenance, plan_band_calibrated_error, .timeout = 600)
{
    make_cal();
    add_bloom(db);
    char ini[256];
    scenario("b.ini", "bloom-176b", "a100", 8, 2, 1, ini, sizeof ini);
    /* BLOOM's fitted model: cross-validated MAPE 10.1923 % (docs/calibration.md). */
    check_sensitivity(ini, cal, "x0.816 and x1.22: the 90 % band of fitted model's cross-validated error 10.3 %", 0.816482042, 1.22476668);
}

/* run --from-run ID: the stored configuration with the recorded coefficients,
 * after the calibration database is gone: the same latencies, to the digit. */
Test(provenance, from_run_reruns_a_stored_run_without_its_calibration_database)
{
    make_cal();
    add_bloom(db);
    char ini[256];
    scenario("b.ini", "bloom-176b", "a100", 8, 1, 0, ini, sizeof ini);
    result r = run_db(60, "run", ini, "--cost-db", cal, NULL);          /* run 1 */
    cr_assert_eq(r.rc, 0, "%s", r.err);
    result_free(&r);
    r = run_db(60, "run", ini, "--no-store", "--json", "--cost-db", cal, NULL);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    char *want = latencies(r.out);
    result_free(&r);
    char moved[200];
    snprintf(moved, sizeof moved, "%s/moved.db", dir);
    cr_assert_eq(rename(cal, moved), 0);
    r = run_db(60, "run", "--from-run", "1", "--no-store", "--json", NULL);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    char *got = latencies(r.out);
    cr_expect_str_eq(got, want);
    cr_expect(strstr(r.out, "\"cost_model\": {\"kind\": \"fitted\""), "%s", r.out);
    cr_expect_eq(count(r.err, WARNING), 0, "%s", r.err);
    free(got);
    free(want);
    result_free(&r);
    r = run_db(60, "run", "--from-run", "9", NULL);
    expect_one_line(&r, 2, "--from-run 9: no such run", "latsim: run: ");
    result_free(&r);
    r = run_db(60, "run", ini, "--from-run", "1", NULL);
    expect_one_line(&r, 2, "give FILE or --from-run ID, not both", "latsim: run: ");
    result_free(&r);
}
