/* test_observed.c -- Criterion tests of observed runs (docs/observed.md):
 * `latsim calib import observed`, `calib list` / `calib show observed`, and
 * `latsim replay`.
 *
 *   observed_readers   each reader on a file in its tool's exact shape
 *                      (tests/data/observed/shapes/, made by make-shapes.py):
 *                      the format detected, the values it read (replay --json);
 *                      --plot drawn, or skipped with a note without gnuplot;
 *   observed_bad       every kind of bad input: one line naming the file, line
 *                      and field, exit 2, the database byte for byte unchanged;
 *   observed_real      the real vLLM run (RTX 4090, 300 requests): imported and
 *                      listed, replayed with its observed TTFT P50 computed here
 *                      from the JSON lines;
 *   observed_roundtrip requests timed by latsim itself replay to the same numbers.
 * Each case runs ./latsim in a forked child bounded by alarm(), in its own
 * temporary directory.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "tcli.h"
#include "cobserved.h"

#define SHAPES "tests/data/observed/shapes/"
#define REAL "tests/data/observed/vllm_rtx4090_llama31_8b_requests.jsonl"
#define REAL_INI "scenarios/replay_vllm_rtx4090.ini"

static void setup(void) { tcli_setup("/tmp/latsim_obs_", "obs.db"); }

TestSuite(observed_readers, .init = setup, .fini = tcli_teardown);
TestSuite(observed_bad, .init = setup, .fini = tcli_teardown);
TestSuite(observed_real, .init = setup, .fini = tcli_teardown);
TestSuite(observed_roundtrip, .init = setup, .fini = tcli_teardown);

/* A run with its stdout parsed as JSON (NULL when it is not). */
typedef struct jres {
    result r;
    json_t *j;
} jres;

static jres jrun_a(unsigned limit, char *const *args)
{
    jres x;
    x.r = run_argv(limit, args);
    x.j = json_loads(x.r.out, 0, NULL);
    return x;
}
#define jrun(limit, ...) jrun_a(limit, (char *[]) { __VA_ARGS__, NULL })

static void jfree(jres *x)
{
    result_free(&x->r);
    json_decref(x->j);
}

/* The number at O.K1.K2.K3 (NULL ends the path early); NAN when absent or null. */
static double jnum(const json_t *o, const char *k1, const char *k2, const char *k3)
{
    const json_t *v = json_object_get(o, k1);
    if (k2) v = json_object_get(v, k2);
    if (k3) v = json_object_get(v, k3);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

/* metrics.METRIC.STAT.observed (or .predicted) of a replay's JSON. */
static double obs(const json_t *j, const char *metric, const char *stat)
{
    return jnum(json_object_get(j, "metrics"), metric, stat, "observed");
}
static double pred(const json_t *j, const char *metric, const char *stat)
{
    return jnum(json_object_get(j, "metrics"), metric, stat, "predicted");
}

/* |A - B| <= REL |B| (REL 1e-9: equal up to the printed digits). */
static int near(double a, double b, double rel)
{
    return isfinite(a) && isfinite(b) && fabs(a - b) <= rel * fabs(b);
}

/* `latsim replay FILE --scenario REAL_INI --json`, the JSON checked to parse. */
static jres replay(const char *file)
{
    jres x = jrun(120, "replay", (char *) file, "--scenario", REAL_INI, "--json", "--db", db);
    cr_assert_eq(x.r.rc, 0, "replay %s: exit %d: %s", file, x.r.rc, x.r.err);
    cr_assert_not_null(x.j, "replay %s: stdout is not JSON: %s", file, x.r.out);
    return x;
}

static const char *jstr(const json_t *o, const char *k)
{
    const json_t *v = json_object_get(o, k);
    return json_is_string(v) ? json_string_value(v) : "";
}

/* ---- each reader on its tool's shape ---------------------------------------- */

/* The formats `replay --help`, `calib import observed --help` and --format's
 * error list are the readers' rows (calib/cobsread.c), in their order. */
Test(observed_readers, help_lists_the_format_rows)
{
    const char *list = cobs_format_list();
    cr_expect_str_eq(list, "generic, vllm, vllm-stats, aiperf, guidellm, sweep");
    result r = run(30, "replay", "--help", NULL);
    cr_expect(strstr(r.out, list) != NULL, "%s", r.out);
    result_free(&r);
    r = run(30, "calib", "import", "observed", "--help", NULL);
    cr_expect(strstr(r.out, list) != NULL, "%s", r.out);
    result_free(&r);
    r = run(30, "replay", SHAPES "generic.csv", "--scenario", REAL_INI, "--format", "csv", NULL);
    cr_expect_eq(r.rc, 2);
    cr_expect(strstr(r.err, list) != NULL, "%s", r.err);
    result_free(&r);
    cobs_format f;
    cr_expect_eq(cobs_format_parse("vllm-stats", &f), 0);
    cr_expect_eq(f, COBS_VLLM_STATS);
    cr_expect_str_eq(cobs_format_name(COBS_SWEEP), "sweep");
    cr_expect_neq(cobs_format_parse("csv", &f), 0);
}

Test(observed_readers, vllm_bench_serve)
{
    /* 4 requests, the third failed (errors[2]): 3 replayed; TTFT 50, 80, 40 ms;
     * E2E = latencies 72, 111, 60 ms; ITL: the 6 gaps of itls. */
    jres x = replay(SHAPES "vllm_bench_serve.json");
    cr_expect_str_eq(jstr(x.j, "format"), "vllm");
    cr_expect_eq(jnum(x.j, "requests", NULL, NULL), 3);
    cr_expect(near(obs(x.j, "ttft_ms", "mean"), 170.0 / 3, 1e-9), "ttft mean %g", obs(x.j, "ttft_ms", "mean"));
    cr_expect(near(obs(x.j, "e2e_ms", "p50"), 72, 1e-9), "e2e p50 %g", obs(x.j, "e2e_ms", "p50"));
    cr_expect(near(obs(x.j, "e2e_ms", "mean"), 81, 1e-9));
    cr_expect_eq(jnum(json_object_get(x.j, "metrics"), "itl_ms", "n", NULL), 6);
    cr_expect(near(obs(x.j, "itl_ms", "p99"), 20, 1e-9));
    /* TPOT = (e2e - ttft) / (output - 1): 11, 31/3, 20 */
    cr_expect(near(obs(x.j, "tpot_ms", "mean"), (11 + 31.0 / 3 + 20) / 3, 1e-9));
    cr_expect(isfinite(pred(x.j, "ttft_ms", "p50")) && pred(x.j, "ttft_ms", "p50") > 0);
    cr_expect(strstr(x.r.err, "1 failed request skipped") != NULL, "stderr: %s", x.r.err);
    jfree(&x);
}

Test(observed_readers, vllm_without_start_times)
{
    /* An older result: no latencies (E2E = ttft + the gaps: 72, 111, 60 ms), no
     * start_times: the arrivals are re-drawn, said on stderr and stored. */
    jres x = replay(SHAPES "vllm_bench_serve_v0.8.json");
    cr_expect_str_eq(jstr(x.j, "format"), "vllm");
    cr_expect(near(obs(x.j, "e2e_ms", "mean"), 81, 1e-9), "e2e mean %g", obs(x.j, "e2e_ms", "mean"));
    cr_expect(strstr(x.r.err, "arrivals re-drawn") != NULL, "stderr: %s", x.r.err);
    cr_expect(strstr(jstr(x.j, "note"), "request_rate 4/s, burstiness 0.5") != NULL, "note: %s", jstr(x.j, "note"));
    jfree(&x);
    result r = run_db(60, "calib", "import", "observed", SHAPES "vllm_bench_serve_v0.8.json", "--scenario", REAL_INI, NULL);
    cr_expect_eq(r.rc, 0, "import: %s", r.err);
    cr_expect_eq(db_count(db, "SELECT count(*) FROM calib_observed_run WHERE note LIKE '%arrivals re-drawn%'"), 1);
    result_free(&r);
}

Test(observed_readers, aiperf)
{
    /* 5 records: a warm-up one and a cancelled one are skipped; TTFT 25.5, 20, 40 ms;
     * inter_chunk_latency 8 + 3 + 1 gaps. */
    jres x = replay(SHAPES "aiperf_profile_export.jsonl");
    cr_expect_str_eq(jstr(x.j, "format"), "aiperf");
    cr_expect_eq(jnum(x.j, "requests", NULL, NULL), 3);
    cr_expect(near(obs(x.j, "ttft_ms", "mean"), 28.5, 1e-9));
    cr_expect(near(obs(x.j, "e2e_ms", "p99"), 66, 1e-9));
    cr_expect_eq(jnum(json_object_get(x.j, "metrics"), "itl_ms", "n", NULL), 12);
    cr_expect(strstr(jstr(x.j, "note"), "1 errored or cancelled request skipped") != NULL, "note: %s", jstr(x.j, "note"));
    /* request_start_ns 250 ms and 500 ms after the first: the window ends at 500 + 45 ms */
    cr_expect(near(jnum(x.j, "observed_window_s", NULL, NULL), 0.545, 1e-9), "window %g", jnum(x.j, "observed_window_s", NULL, NULL));
    jfree(&x);
}

Test(observed_readers, guidellm)
{
    jres x = replay(SHAPES "guidellm_benchmarks.json");
    cr_expect_str_eq(jstr(x.j, "format"), "guidellm");
    cr_expect(near(obs(x.j, "ttft_ms", "mean"), 370.0 / 3, 1e-9));
    cr_expect(near(obs(x.j, "e2e_ms", "p99"), 1500, 1e-9));
    cr_expect(isnan(jnum(json_object_get(x.j, "metrics"), "itl_ms", "n", NULL)), "GuideLLM keeps no per-token gaps");
    jfree(&x);
    /* A report that kept a sample of the requests cannot be replayed: one line, exit 2. */
    size_t n;
    char *text = slurp_or_fail(SHAPES "guidellm_benchmarks.json", &n);
    char *p = strstr(text, "\"request_totals\": {\n        \"successful\": 3");
    cr_assert_not_null(p);
    p = strstr(p, "3,");
    memcpy(p, "9,", 2);
    char path[256];
    write_file("sampled.json", text, path, sizeof path);
    free(text);
    result r = run_db(60, "replay", path, "--scenario", REAL_INI, NULL);
    expect_one_line(&r, 2, "holds 3 of the 9 successful requests", "sampled guidellm");
    result_free(&r);
}

Test(observed_readers, generic_csv_and_jsonl)
{
    /* The same three requests as CSV and as JSON lines. */
    const char *files[] = { SHAPES "generic.csv", SHAPES "generic.jsonl" };
    for (int i = 0; i < 2; i++) {
        jres x = replay(files[i]);
        cr_expect_str_eq(jstr(x.j, "format"), "generic");
        cr_expect(near(obs(x.j, "ttft_ms", "mean"), 133.5, 1e-9), "%s ttft mean", files[i]);
        cr_expect(near(obs(x.j, "e2e_ms", "p50"), 150.5, 1e-9), "%s e2e p50", files[i]);
        cr_expect_eq(jnum(json_object_get(x.j, "metrics"), "itl_ms", "n", NULL), 5, "%s itl n", files[i]);
        /* queue_ms: 2.5 and 0 in the CSV (one empty), only 2.5 in the JSON lines */
        cr_expect_eq(jnum(json_object_get(x.j, "metrics"), "queue_ms", "n", NULL), i == 0 ? 2 : 1, "%s queue n", files[i]);
        cr_expect(strstr(jstr(x.j, "replay_note"), "class labels are not replayed") != NULL);
        jfree(&x);
    }
}

Test(observed_readers, sweep)
{
    jres x = replay(SHAPES "sweep.csv");
    cr_expect_str_eq(jstr(x.j, "format"), "sweep");
    const json_t *lv = json_object_get(x.j, "levels");
    cr_assert_eq(json_array_size(lv), 3);
    const json_t *l1 = json_array_get(lv, 1);
    cr_expect_eq(jnum(l1, "concurrency", NULL, NULL), 4);
    cr_expect(near(jnum(l1, "metrics", "ttft_ms", "observed"), 60.8, 1e-9));
    double p1 = jnum(json_array_get(lv, 0), "metrics", "ttft_ms", "predicted");
    double p16 = jnum(json_array_get(lv, 2), "metrics", "ttft_ms", "predicted");
    cr_expect(p1 > 0 && p16 > p1, "predicted TTFT grows with the users: %g at 1, %g at 16", p1, p16);
    cr_expect(isnan(jnum(l1, "metrics", "tpot_ms", "observed")), "tpot_ms is not a column of the file");
    /* A sweep's levels have bands too (docs/bands.md): each level simulated at both step-time
     * factors; the band holds the prediction, a latency's lower end below it and its upper above
     * (longer steps, longer latencies), throughput the other way round, all finite at these loads. */
    const json_t *pb = json_object_get(x.j, "prediction_band");
    cr_assert_not_null(pb, "a sweep replay's prediction_band");
    double flo = json_number_value(json_array_get(json_object_get(pb, "step_time_factors"), 0));
    double fhi = json_number_value(json_array_get(json_object_get(pb, "step_time_factors"), 1));
    cr_expect(flo > 0 && flo < 1 && fhi > 1, "factors %g..%g", flo, fhi);
    for (size_t i = 0; i < json_array_size(lv); i++) {
        const json_t *m = json_object_get(json_array_get(lv, i), "metrics");
        const char *key;
        json_t *v;
        json_object_foreach((json_t *) m, key, v) {
            const json_t *b = json_object_get(v, "band");
            cr_assert(json_is_array(b), "level %zu %s: no band", i, key);
            double lo = json_number_value(json_array_get(b, 0)), hi = json_number_value(json_array_get(b, 1));
            double p = json_number_value(json_object_get(v, "predicted"));
            cr_expect(lo < p && p < hi, "level %zu %s: %g outside its band %g..%g", i, key, p, lo, hi);
            cr_expect(json_is_boolean(json_object_get(v, "covered")), "level %zu %s: covered", i, key);
        }
    }
    jfree(&x);
}

/* ---- bad input: one line, exit 2, nothing stored ----------------------------- */

Test(observed_bad, every_case)
{
    /* A database holding one good run; every refused import leaves it as it was. */
    result r = run_db(60, "calib", "import", "observed", SHAPES "generic.csv", "--scenario", REAL_INI, NULL);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    result_free(&r);
    size_t n;
    char *before = slurp_or_fail(db, &n);
    static const struct { const char *name, *text, *want; } cases[] = {
        { "miss.jsonl", "{\"arrival_s\": 0, \"input_tokens\": 5, \"output_tokens\": 2, \"ttft_ms\": 1, \"e2e_ms\": 2}\n"
                        "{\"arrival_s\": 1, \"input_tokens\": 5, \"output_tokens\": 2, \"e2e_ms\": 2}\n",
          "miss.jsonl:2: ttft_ms: missing" },
        { "neg.csv", "arrival_s,input_tokens,output_tokens,ttft_ms,e2e_ms\n0,5,2,1,2\n1,5,2,-5,2\n",
          "neg.csv:3: ttft_ms: negative" },
        { "negarr.jsonl", "{\"arrival_s\": -1, \"input_tokens\": 5, \"output_tokens\": 2, \"ttft_ms\": 1, \"e2e_ms\": 2}\n",
          "negarr.jsonl:1: arrival_s: negative" },
        { "nan.csv", "arrival_s,input_tokens,output_tokens,ttft_ms,e2e_ms\n0,5,2,1,2\n0.5,5,2,1,nan\n",
          "nan.csv:3: e2e_ms: not a finite number" },
        { "e2e.csv", "arrival_s,input_tokens,output_tokens,ttft_ms,e2e_ms\n0,5,2,10,2\n", "e2e.csv:2: e2e_ms: 2 ms is below ttft_ms" },
        { "out0.jsonl", "{\"arrival_s\": 0, \"input_tokens\": 5, \"output_tokens\": 0, \"ttft_ms\": 1, \"e2e_ms\": 2}\n",
          "out0.jsonl:1: output_tokens: 0" },
        { "sweep0.csv", "concurrency,input_tokens,output_tokens,ttft_ms\n", "sweep0.csv: a sweep without levels" },
        { "vllm_bad.json", "{\"input_lens\": [5, 6], \"output_lens\": [2, 2], \"ttfts\": [0.1, -0.2], \"itls\": [[0.01], [0.01]],"
                           " \"start_times\": [1, 2], \"request_rate\": 1}\n", "vllm_bad.json: ttfts[1]: negative" },
        { "aiperf_bad.jsonl", "{\"metadata\": {\"request_start_ns\": 1, \"benchmark_phase\": \"profiling\"}, \"metrics\": "
                              "{\"input_sequence_length\": {\"value\": 5, \"unit\": \"tokens\"}, \"output_sequence_length\": "
                              "{\"value\": 3, \"unit\": \"tokens\"}, \"time_to_first_token\": {\"value\": 9, \"unit\": \"ms\"}},"
                              " \"error\": null}\n", "aiperf_bad.jsonl:1: metrics.request_latency.value: missing" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char path[256];
        write_file(cases[i].name, cases[i].text, path, sizeof path);
        r = run_db(60, "calib", "import", "observed", path, "--scenario", REAL_INI, NULL);
        expect_one_line(&r, 2, cases[i].want, cases[i].name);
        cr_expect(same_bytes(db, before, n), "%s: the database changed", cases[i].name);
        result_free(&r);
    }
    /* A scenario without an LLM pool, an unknown --format, a pool that is none. */
    char ini[256], good[256];
    write_file("nollm.ini", "[workload]\nrate = 1\n[pool web]\nservice_ms = const(1)\n", ini, sizeof ini);
    write_file("good.csv", "arrival_s,input_tokens,output_tokens,ttft_ms,e2e_ms\n0,5,2,1,2\n", good, sizeof good);
    r = run_db(60, "calib", "import", "observed", good, "--scenario", ini, NULL);
    expect_one_line(&r, 2, "nollm.ini: no LLM pool (kind = llm)", "no LLM pool");
    result_free(&r);
    r = run_db(60, "calib", "import", "observed", good, "--scenario", REAL_INI, "--format", "xyz", NULL);
    expect_one_line(&r, 2, "--format: unknown format 'xyz'", "unknown format");
    result_free(&r);
    r = run_db(60, "calib", "import", "observed", good, "--scenario", REAL_INI, "--pool", "nope", NULL);
    expect_one_line(&r, 2, "--pool nope: no such pool", "unknown pool");
    result_free(&r);
    r = run_db(60, "calib", "import", "observed", good, "--scenario", REAL_INI, "--bogus", NULL);
    expect_one_line(&r, 2, "unknown option '--bogus'", "unknown option");
    result_free(&r);
    cr_expect(same_bytes(db, before, n), "the database changed");
    cr_expect_eq(db_count(db, "SELECT count(*) FROM calib_observed_run"), 1);
    free(before);
    /* Refused input creates no database. */
    char fresh[200];
    snprintf(fresh, sizeof fresh, "%s/fresh.db", dir);
    r = run(60, "calib", "import", "observed", good, "--scenario", ini, "--db", fresh, NULL);
    cr_expect_eq(r.rc, 2);
    cr_expect_neq(access(fresh, F_OK), 0, "a refused import created %s", fresh);
    result_free(&r);
}

/* ---- the real run ------------------------------------------------------------ */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *) a, y = *(const double *) b;
    return (x > y) - (x < y);
}

/* The observed TTFT P50 of the real run, ms, computed here from its JSON lines
 * (TTFT = first_token_ts - queued_ts) by the rule of make-trace.py and latsim's
 * reports: the value of rank ceil(0.5 n). */
static double real_ttft_p50(void)
{
    FILE *f = fopen(REAL, "r");
    cr_assert_not_null(f);
    double v[1000];
    size_t n = 0;
    char line[4096];
    while (fgets(line, sizeof line, f) && n < 1000) {
        json_t *o = json_loads(line, 0, NULL);
        cr_assert_not_null(o, "not JSON: %s", line);
        v[n++] = 1000 * (json_number_value(json_object_get(o, "first_token_ts")) -
                         json_number_value(json_object_get(o, "queued_ts")));
        json_decref(o);
    }
    fclose(f);
    cr_assert_eq(n, 300);
    qsort(v, n, sizeof *v, cmp_double);
    return v[(size_t) ceil(0.5 * (double) n) - 1];
}

Test(observed_real, import_list_show)
{
    result r = run_db(60, "calib", "import", "observed", REAL, "--scenario", REAL_INI, NULL);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    cr_expect(strstr(r.out, "imported observed run 1: 300 requests") != NULL, "%s", r.out);
    result_free(&r);
    cr_expect_eq(db_count(db, "SELECT count(*) FROM calib_observed_req WHERE run_id = 1"), 300);
    cr_expect_eq(db_count(db, "SELECT count(*) FROM calib_observed_run WHERE model = 'llama-3.1-8b' AND gpu = 'rtx-4090'"
                              " AND tp = 1 AND weights = 'bf16' AND scheduler = 'chunked' AND max_batch = 256"
                              " AND kv_blocks = 2588 AND length(scenario_text) > 100"), 1);
    r = run_db(60, "calib", "list", NULL);
    cr_expect_eq(r.rc, 0);
    const char *row = strstr(r.out, "observed runs");
    cr_expect(row && strstr(row, "vllm-stats") && strstr(row, "llama-3.1-8b") && strstr(row, "300"), "%s", r.out);
    result_free(&r);
    r = run_db(60, "calib", "show", "observed", "1", NULL);
    cr_expect_eq(r.rc, 0, "%s", r.err);
    cr_expect(strstr(r.out, "scheduler chunked, max_batch 256, chunk_tokens 2048") != NULL, "%s", r.out);
    result_free(&r);
    r = run_db(60, "calib", "show", "observed", "7", NULL);
    expect_one_line(&r, 2, "no observed run with id 7", "show a missing run");
    result_free(&r);
}

Test(observed_real, replay_p50)
{
    double want = real_ttft_p50();
    jres x = replay(REAL);
    cr_expect_str_eq(jstr(x.j, "format"), "vllm-stats");
    cr_expect(near(obs(x.j, "ttft_ms", "p50"), want, 1e-9), "observed TTFT p50 %.6f, computed %.6f", obs(x.j, "ttft_ms", "p50"), want);
    double p = pred(x.j, "ttft_ms", "p50");
    cr_expect(isfinite(p) && p > 0, "predicted TTFT p50 %g", p);
    cr_expect_eq(jnum(x.j, "simulated", "served", NULL), 300);
    cr_expect(json_is_true(json_object_get(json_object_get(x.j, "simulated"), "backlog_grew")));
    jfree(&x);
    /* The same from the stored run. */
    result r = run_db(60, "calib", "import", "observed", REAL, "--scenario", REAL_INI, NULL);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    result_free(&r);
    x = jrun(120, "replay", "--run", "1", "--json", "--db", db);
    cr_assert_eq(x.r.rc, 0, "%s", x.r.err);
    cr_expect(near(obs(x.j, "ttft_ms", "p50"), want, 1e-9));
    cr_expect(near(pred(x.j, "ttft_ms", "p50"), p, 1e-9), "the stored run predicts the same");
    jfree(&x);
}

/* ---- round trip ----------------------------------------------------------------- */

/* TTFT and E2E of a lone request of PROMPT/OUTPUT tokens on the scenario server,
 * as `latsim run` reports them (every request of a slow constant stream is
 * alone, so all have the same times). */
static void lone_request(const char *ini, int prompt, int output, double *ttft, double *e2e)
{
    char ptok[64], otok[64];
    snprintf(ptok, sizeof ptok, "workload.prompt_tokens=const(%d)", prompt);
    snprintf(otok, sizeof otok, "workload.output_tokens=const(%d)", output);
    jres x = jrun(60, "run", (char *) ini, "--no-store", "--json", "--set", ptok, "--set", otok);
    cr_assert_eq(x.r.rc, 0, "%s", x.r.err);
    cr_assert_not_null(x.j);
    const json_t *lat = json_object_get(x.j, "latency_ms");
    *ttft = jnum(lat, "ttft", "mean", NULL);
    *e2e = jnum(lat, "e2e", "mean", NULL);
    cr_assert(near(jnum(lat, "ttft", "p99", NULL), *ttft, 1e-3) && near(jnum(lat, "e2e", "p50", NULL), *e2e, 1e-3),
              "the requests are not alike: ttft mean %g p99 %g", *ttft, jnum(lat, "ttft", "p99", NULL));
    jfree(&x);
}

Test(observed_roundtrip, latsim_timed_requests)
{
    /* A server that sees one request at a time (a request every 2 s, each done in
     * well under a second): latsim's own TTFT and E2E of two request sizes,
     * written as a generic run of 20 requests alternating the sizes, replay to
     * the same statistics.  Tolerance 0.1 %: the observed values are the
     * simulated times as `run --json` prints them (6 significant digits: within
     * 0.0005 %); the predicted percentiles come from latsim's histogram,
     * within 0.049 % of the exact sample quantile (sim/engine/stats.c), and by
     * the same rank rule.  A replay that mixed up the two sizes, or queued
     * them, would be off by far more (TTFT 4x apart). */
    char ini[256];
    write_file("server.ini", "[sim]\nrequests = 10\nwarmup = 0\nseed = 1\n"
               "[workload]\narrival = constant\nrate = 0.5\n"
               "[pool llm]\nkind = llm\nmodel = llama-3-8b\ngpu = h100\nreplicas = 1\nscheduler = continuous\n",
               ini, sizeof ini);
    double ta, ea, tb, eb;
    lone_request(ini, 512, 32, &ta, &ea);
    lone_request(ini, 2048, 8, &tb, &eb);
    cr_assert(ea < 1000 && eb < 1000, "requests overlap: e2e %g, %g ms", ea, eb);
    char text[8192] = "", row[256], gen[256];
    for (int i = 0; i < 20; i++) {
        int a = i % 2 == 0;
        snprintf(row, sizeof row, "{\"arrival_s\": %d, \"input_tokens\": %d, \"output_tokens\": %d, \"ttft_ms\": %.10g, "
                 "\"e2e_ms\": %.10g}\n", 2 * i, a ? 512 : 2048, a ? 32 : 8, a ? ta : tb, a ? ea : eb);
        strcat(text, row);
    }
    write_file("selftimed.jsonl", text, gen, sizeof gen);
    jres x = jrun(120, "replay", gen, "--scenario", ini, "--json", "--db", db);
    cr_assert_eq(x.r.rc, 0, "%s", x.r.err);
    cr_assert_not_null(x.j);
    const char *metrics[] = { "ttft_ms", "tpot_ms", "e2e_ms" }, *stats[] = { "mean", "p50", "p90", "p99" };
    for (int m = 0; m < 3; m++)
        for (int s = 0; s < 4; s++) {
            double o = obs(x.j, metrics[m], stats[s]), p = pred(x.j, metrics[m], stats[s]);
            cr_expect(near(p, o, 1e-3), "%s %s: observed %.10g, predicted %.10g", metrics[m], stats[s], o, p);
        }
    cr_expect(near(jnum(x.j, "throughput", "output_tokens_per_s", "predicted"),
                   jnum(x.j, "throughput", "output_tokens_per_s", "observed"), 1e-3));
    jfree(&x);
}

/* ---- --plot ------------------------------------------------------------------------ */

Test(observed_readers, plot_or_skip)
{
    char out[200], png[240];
    snprintf(out, sizeof out, "%s/plots", dir);
    snprintf(png, sizeof png, "%s/replay-cdf.png", out);
    if (access("/usr/bin/gnuplot", X_OK) == 0) {
        result r = run_db(120, "replay", SHAPES "aiperf_profile_export.jsonl", "--scenario", REAL_INI, "--plot", out, NULL);
        cr_expect_eq(r.rc, 0, "%s", r.err);
        cr_expect_eq(access(png, R_OK), 0, "no %s: %s", png, r.err);
        result_free(&r);
        unlink(png);
    }
    /* Without gnuplot on PATH: the table, a note, exit 0, no picture. */
    char *path = strdup(getenv("PATH") ? getenv("PATH") : "/usr/bin:/bin");
    cr_assert_not_null(path);
    setenv("PATH", "/nonexistent", 1);
    result r = run_db(120, "replay", SHAPES "aiperf_profile_export.jsonl", "--scenario", REAL_INI, "--plot", out, NULL);
    setenv("PATH", path, 1);   /* the teardown's shell needs it */
    free(path);
    cr_expect_eq(r.rc, 0, "%s", r.err);
    cr_expect(strstr(r.err, "gnuplot not found") != NULL, "stderr: %s", r.err);
    cr_expect(strstr(r.out, "ttft_ms") != NULL);
    cr_expect_neq(access(png, F_OK), 0);
    result_free(&r);
}
