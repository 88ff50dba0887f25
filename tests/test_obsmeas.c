/* test_obsmeas.c -- Criterion tests of the measurements around observed runs
 * (docs/observed.md): `latsim calib forget`, `calib import engine-log` and the
 * server metadata (`--meta`).
 *
 *   obsmeas_forget   a stored run removed with its requests and its links to
 *                    the fits made from it; a missing run is one line, exit 2,
 *                    the database byte for byte unchanged;
 *   obsmeas_englog   the real run's engine log (RTX 4090): its decode windows,
 *                    one checked by hand; the same intervals written as vLLM
 *                    v1 and v0 log lines and as Prometheus scrapes give the
 *                    same steps; a prefill-saturated window; every kind of bad
 *                    input one line, exit 2, nothing stored;
 *   obsmeas_posterior with no data the fit is the prior exactly; the real run's
 *                    requests and engine log fitted alone and together, each
 *                    one's error on the other's data (docs/observed.md);
 *   obsmeas_meta     the real run's server metadata over a scenario that derives
 *                    its KV blocks and says max_batch 128: one warning line, one
 *                    note, the engine's values stored, the stored run replayed as
 *                    the hand-written scenario is; bad metadata one line, exit 2;
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
#include "cfitted.h"
#include "cprior.h"
#include "tsim.h"

#define REAL "tests/data/observed/vllm_rtx4090_llama31_8b_requests.jsonl"
#define REAL_INI "scenarios/replay_vllm_rtx4090.ini"
#define REAL_LOG "tests/data/observed/vllm_rtx4090_llama31_8b_timeseries.csv"

static void setup(void) { tcli_setup("/tmp/latsim_omeas_", "omeas.db"); }

TestSuite(obsmeas_forget, .init = setup, .fini = tcli_teardown);
TestSuite(obsmeas_englog, .init = setup, .fini = tcli_teardown);
TestSuite(obsmeas_meta, .init = setup, .fini = tcli_teardown);

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

/* ---- engine logs ------------------------------------------------------------- */

/* The step time (ms) of the stored engine-log step of SQL condition WHERE. */
static double step_where(const char *where)
{
    char sql[1024];
    snprintf(sql, sizeof sql, "SELECT CAST(round(time_ms * 1e6) AS INTEGER) FROM calib_meas WHERE source = 'engine-log' AND %s",
             where);
    return (double) db_count(db, sql) / 1e6;
}

Test(obsmeas_englog, real_csv_decode_windows)
{
    result r = run_db(60, "calib", "import", "engine-log", REAL_LOG, "--scenario", REAL_INI, NULL);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    cr_expect(strstr(r.out, "imported 25 step times") && strstr(r.out, "25 decode and 0 prefill windows"), "%s", r.out);
    result_free(&r);
    cr_expect_eq(db_count(db, "SELECT count(*) FROM calib_meas WHERE source = 'engine-log' AND what = 'step_decode'"
                              " AND model = 'llama-3.1-8b' AND gpu = 'rtx-4090' AND tp = 1"), 25);
    /* By hand, the intervals ending at t = 6..10 s (lines 7-11): running at their
     * ends 40 (t = 5), 39, 37, 36, 35, 33 -> mean batches 39.5, 38, 36.5, 35.5, 34
     * (sum 183.5, mean 36.7); generated 1522 + 1484 + 1436 + 1386 + 1310 = 7138
     * tokens; step = 1000 x 183.5 / 7138 ms; KV (99.865, 98.475, 97.74, 99.015,
     * 98.92) % x 2588 x 16 tokens / 183.5 = the context. */
    double want = 1000 * 183.5 / 7138;
    cr_expect(fabs(step_where("line = 7") - want) < 1e-5, "step %.6f, by hand %.6f", step_where("line = 7"), want);
    double kv = (99.865 + 98.475 + 97.74 + 99.015 + 98.92) / 100;
    long long ctx = db_count(db, "SELECT CAST(round(context * 1000) AS INTEGER) FROM calib_meas WHERE line = 7");
    cr_expect(llabs(ctx - llround(1000 * kv * 2588 * 16 / 183.5)) <= 1, "context %lld", ctx);
    cr_expect_eq(db_count(db, "SELECT CAST(round(batch * 10) AS INTEGER) FROM calib_meas WHERE line = 7"), 367);
    /* Every step is above the hardware floor: the weights (8.03e9 x 2 bytes) at 1008 GB/s. */
    cr_expect_eq(db_count(db, "SELECT count(*) FROM calib_meas WHERE source = 'engine-log' AND time_ms < 8.03e9 * 2 / 1008e9 * 1e3"), 0);
}

/* A log of intervals (t, prompt/s, gen/s, running, waiting, kv %) written as CSV, vLLM v1 and v0 lines and Prometheus scrapes. */
static const double IV[][6] = {
    { 0, 0, 0, 0, 0, 0 }, { 10, 4000, 100, 4, 30, 20 }, { 20, 4000, 200, 8, 26, 40 }, { 30, 4000, 300, 12, 22, 60 },
    { 40, 0, 500, 20, 0, 80 }, { 50, 0, 480, 20, 0, 82 }, { 60, 0, 470, 19, 0, 84 }, { 70, 0, 400, 17, 0, 85 },
};
#define NIV (sizeof IV / sizeof IV[0])

static void write_shapes(char *csv, char *v1, char *v0, char *prom, size_t n)
{
    char *c = NULL, *a = NULL, *b = NULL, *p = NULL;
    size_t lc, la, lb, lp;
    FILE *fc = open_memstream(&c, &lc), *fa = open_memstream(&a, &la), *fb = open_memstream(&b, &lb),
         *fp = open_memstream(&p, &lp);
    fprintf(fc, "t,prompt_throughput,gen_throughput,running,waiting,kv_cache_pct\n");
    double cp = 1000, cg = 500;
    for (size_t i = 0; i < NIV; i++) {
        const double *v = IV[i];
        fprintf(fc, "%g,%g,%g,%g,%g,%g\n", v[0], v[1], v[2], v[3], v[4], v[5]);
        int s = (int) v[0];
        int m1 = 58 + s / 60, s1 = s % 60;   /* 08-31 23:58:00 + s */
        fprintf(fa, "noise line %zu\n(APIServer pid=1) INFO 08-31 23:%02d:%02d [loggers.py:123] Engine 000: Avg prompt throughput: "
                "%.1f tokens/s, Avg generation throughput: %.1f tokens/s, Running: %g reqs, Waiting: %g reqs, GPU KV cache "
                "usage: %.1f%%, Prefix cache hit rate: 0.0%%\n", i, m1, s1, v[1], v[2], v[3], v[4], v[5]);
        fprintf(fa, "INFO 08-31 23:%02d:%02d [loggers.py:123] Engine 001: Avg prompt throughput: 1.0 tokens/s, Avg generation "
                "throughput: 9.0 tokens/s, Running: 1 reqs, Waiting: 0 reqs, GPU KV cache usage: 1.0%%, Prefix cache hit rate: "
                "0.0%%\n", m1, s1);
        /* v0 across midnight and new year's eve: 12-31 23:59:00 + s. */
        int tt = 23 * 3600 + 59 * 60 + s, day = tt / 86400;
        tt %= 86400;
        fprintf(fb, "INFO %s %02d:%02d:%02d metrics.py:351] Avg prompt throughput: %.1f tokens/s, Avg generation throughput: %.1f "
                "tokens/s, Running: %g reqs, Swapped: 0 reqs, Pending: %g reqs, GPU KV cache usage: %.1f%%, CPU KV cache usage: "
                "0.0%%.\n", day ? "01-01" : "12-31", tt / 3600, tt / 60 % 60, tt % 60, v[1], v[2], v[3], v[4], v[5]);
        cp += v[1] * 10, cg += v[2] * 10;
        double ts = 1.7e12 + v[0] * 1000;
        fprintf(fp, "# HELP vllm:num_requests_running Number of requests in model execution batches.\n"
                "# TYPE vllm:num_requests_running gauge\n"
                "vllm:num_requests_running{engine=\"0\",model_name=\"m{x}\"} %g %.0f\n"
                "vllm:num_requests_waiting{engine=\"0\",model_name=\"m\"} %g %.0f\n"
                "vllm:kv_cache_usage_perc{engine=\"0\",model_name=\"m\"} %g %.0f\n"
                "vllm:prompt_tokens_total{engine=\"0\",model_name=\"m\"} %.1f %.0f\n"
                "vllm:generation_tokens_total{engine=\"0\",model_name=\"m\"} %.1f %.0f\n"
                "vllm:request_success_total{engine=\"0\"} 3 %.0f\n",
                v[3], ts, v[4], ts, v[5] / 100, ts, cp, ts, cg, ts, ts);
    }
    fclose(fc), fclose(fa), fclose(fb), fclose(fp);
    write_file("log.csv", c, csv, n);
    write_file("v1.log", a, v1, n);
    write_file("v0.log", b, v0, n);
    write_file("scrapes.prom", p, prom, n);
    free(c), free(a), free(b), free(p);
}

Test(obsmeas_englog, shapes_agree)
{
    char f[4][256];
    write_shapes(f[0], f[1], f[2], f[3], sizeof f[0]);
    double first = NAN;
    for (int k = 0; k < 4; k++) {
        char q[512];
        result r = run_db(60, "calib", "import", "engine-log", f[k], "--scenario", REAL_INI, NULL);
        cr_assert_eq(r.rc, 0, "%s: %s", f[k], r.err);
        /* Intervals 2-3: prompts with a queue at both ends, KV 30 and 50 % (prefill; interval 1
         * starts without a queue); 4-7 pure decode (mean batches 16, 20, 19.5, 18: within a
         * quarter of the first). */
        cr_expect(strstr(r.out, "1 decode and 1 prefill windows") != NULL, "%s: %s", f[k], r.out);
        cr_expect(k != 1 || strstr(r.out, "engines other than 000 left out"), "%s", r.out);
        result_free(&r);
        snprintf(q, sizeof q, "what = 'step_prefill' AND file = '%s'", f[k]);
        /* Prefill: 2048 tokens x 20 s / ((4200 + 4300) x 10 s) of tokens. */
        double pre = step_where(q), want = 1000.0 * 2048 * 20 / (10 * (4200 + 4300));
        cr_expect(fabs(pre - want) < 1e-5, "%s: prefill %.6f, by hand %.6f", f[k], pre, want);
        snprintf(q, sizeof q, "what = 'step_decode' AND file = '%s'", f[k]);
        /* Decode: batches 16 + 20 + 19.5 + 18 = 73.5 over 500 + 480 + 470 + 400 tokens/s. */
        double dec = step_where(q);
        cr_expect(fabs(dec - 1000 * 73.5 / 1850) < 1e-5, "%s: decode %.6f", f[k], dec);
        if (k == 0) first = dec;
        else cr_expect(fabs(dec - first) < 1e-9);
    }
}

Test(obsmeas_englog, bad_input)
{
    result r = run_db(60, "calib", "import", "engine-log", REAL_LOG, "--scenario", REAL_INI, NULL);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    result_free(&r);
    size_t n;
    char *before = slurp_or_fail(db, &n);
    static const struct { const char *name, *text, *want; } cases[] = {
        { "nocol.csv", "t,prompt_throughput,gen_throughput,running,waiting\n1,0,5,1,0\n", "nocol.csv:1: column kv_cache_pct: missing" },
        { "neg.csv", "t,prompt_throughput,gen_throughput,running,waiting,kv_cache_pct\n1,0,5,1,0,5\n2,0,-5,1,0,5\n3,0,5,1,0,5\n",
          "neg.csv:3: column gen_throughput" },
        { "kv.csv", "t,prompt_throughput,gen_throughput,running,waiting,kv_cache_pct\n1,0,5,1,0,5\n2,0,5,1,0,101\n",
          "kv.csv:3: column kv_cache_pct" },
        { "back.csv", "t,prompt_throughput,gen_throughput,running,waiting,kv_cache_pct\n2,0,5,1,0,5\n1,0,5,1,0,5\n",
          "back.csv:3: column t: 1 s is not after" },
        { "frac.csv", "t,prompt_throughput,gen_throughput,running,waiting,kv_cache_pct\n1,0,5,1.5,0,5\n", "frac.csv:2: column running" },
        { "miss.log", "INFO 01-02 03:04:05 x] Avg prompt throughput: 1.0 tokens/s, Avg generation throughput: 2.0 tokens/s, "
                      "Running: 3 reqs, Waiting: 0 reqs\n", "miss.log:1: GPU KV cache usage: missing" },
        { "notime.log", "Avg prompt throughput: 1.0 tokens/s, Avg generation throughput: 2.0 tokens/s, Running: 3 reqs, "
                        "Waiting: 0 reqs, GPU KV cache usage: 1.0%\n", "notime.log:1: time: no MM-DD HH:MM:SS" },
        { "nots.prom", "vllm:num_requests_running 3\n", "nots.prom:1: vllm:num_requests_running: no timestamp" },
        { "down.prom", "vllm:num_requests_running 3 1000\nvllm:num_requests_waiting 0 1000\nvllm:gpu_cache_usage_perc 0.5 1000\n"
                       "vllm:prompt_tokens_total 10 1000\nvllm:generation_tokens_total 10 1000\n"
                       "vllm:num_requests_running 3 2000\nvllm:num_requests_waiting 0 2000\nvllm:gpu_cache_usage_perc 0.5 2000\n"
                       "vllm:prompt_tokens_total 5 2000\nvllm:generation_tokens_total 20 2000\n",
          "down.prom:6: vllm:prompt_tokens_total: the counter went down" },
        { "gap.prom", "vllm:num_requests_running 3 1000\nvllm:num_requests_waiting 0 1000\nvllm:gpu_cache_usage_perc 0.5 1000\n"
                      "vllm:prompt_tokens_total 10 1000\n", "gap.prom:1: vllm:generation_tokens_total: missing from the scrape" },
        { "steady.csv", "t,prompt_throughput,gen_throughput,running,waiting,kv_cache_pct\n1,100,5,1,0,5\n2,100,5,1,0,5\n3,100,5,1,0,5\n",
          "steady.csv: no steady window" },
        { "what.txt", "hello\n", "what.txt: not an engine log" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char path[256];
        write_file(cases[i].name, cases[i].text, path, sizeof path);
        r = run_db(60, "calib", "import", "engine-log", path, "--scenario", REAL_INI, NULL);
        expect_one_line(&r, 2, cases[i].want, cases[i].name);
        result_free(&r);
    }
    r = run_db(60, "calib", "import", "engine-log", REAL_LOG, NULL);
    expect_one_line(&r, 2, "--scenario S.ini is required", "no scenario");
    result_free(&r);
    cr_expect(same_bytes(db, before, n), "a refused import changed the database");
    free(before);
}

/* ---- server metadata ----------------------------------------------------------- */

#define REAL_META "tests/data/observed/vllm_rtx4090_llama31_8b_meta.json"

/* REAL_INI without kv_blocks, with max_batch = 128 and the trace's absolute path, into PATH. */
static void loose_scenario(char *path, size_t n)
{
    size_t len;
    char *t = slurp_or_fail(REAL_INI, &len), cwd[512], line[1024];
    cr_assert_not_null(getcwd(cwd, sizeof cwd));
    char *out = NULL;
    size_t ol;
    FILE *f = open_memstream(&out, &ol);
    for (char *p = strtok(t, "\n"); p; p = strtok(NULL, "\n")) {
        if (!strncmp(p, "kv_blocks", 9)) continue;
        if (!strncmp(p, "max_batch ", 10)) p = "max_batch = 128";
        if (!strncmp(p, "trace ", 6)) {
            snprintf(line, sizeof line, "trace = %s/tests/data/observed/vllm_rtx4090_llama31_8b.csv", cwd);
            p = line;
        }
        fprintf(f, "%s\n", p);
    }
    fclose(f);
    write_file("loose.ini", out, path, n);
    free(out);
    free(t);
}

Test(obsmeas_meta, fills_and_checks, .timeout = 240)
{
    char ini[256];
    loose_scenario(ini, sizeof ini);
    result r = run_db(120, "calib", "import", "observed", REAL, "--scenario", ini, "--meta", REAL_META, NULL);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    cr_expect_eq(lines(r.err), 2, "one warning and one note: %s", r.err);
    cr_expect(strstr(r.err, "latsim: warning: " REAL_META " contradicts pool vllm") && strstr(r.err, "max_batch 256 (max_num_seqs) vs 128"),
              "%s", r.err);
    cr_expect(strstr(r.err, "latsim: note: " REAL_META ": kv_blocks 2588 (the engine's num_gpu_blocks) replaces the derived"),
              "%s", r.err);
    result_free(&r);
    cr_expect_eq(db_count(db, "SELECT count(*) FROM calib_observed_run WHERE kv_blocks = 2588 AND max_batch = 256 AND block_tokens = 16"
                              " AND chunk_tokens = 2048 AND tp = 1"), 1);
    /* The stored run replays as the hand-written scenario (kv_blocks 2588, max_batch 256) does. */
    r = run_db(120, "replay", "--run", "1", "--json", NULL);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    result r2 = run_db(120, "replay", REAL, "--scenario", REAL_INI, "--json", NULL);
    cr_assert_eq(r2.rc, 0, "%s", r2.err);
    const char *a = strstr(r.out, "\"metrics\""), *b = strstr(r2.out, "\"metrics\"");
    cr_expect(a && b && !strcmp(a, b), "stored with --meta: %s\nhand-written: %s", a, b);
    result_free(&r2);
    result_free(&r);
    /* replay FILE --meta lays the same values over the loose scenario. */
    r = run_db(120, "replay", REAL, "--scenario", ini, "--meta", REAL_META, "--json", NULL);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    r2 = run_db(120, "replay", REAL, "--scenario", REAL_INI, "--json", NULL);
    a = strstr(r.out, "\"metrics\""), b = strstr(r2.out, "\"metrics\"");
    cr_expect(a && b && !strcmp(a, b), "replay --meta: %s\nhand-written: %s", a, b);
    result_free(&r2);
    result_free(&r);
}

Test(obsmeas_meta, bad_input)
{
    char p1[256], p2[256], p3[256];
    write_file("notjson.json", "{\"kv_cache\": ", p1, sizeof p1);
    write_file("str.json", "{\"resolved_config\": {\"cache_config\": {\"num_gpu_blocks\": \"many\"}}}", p2, sizeof p2);
    write_file("none.json", "{\"model\": \"x\"}", p3, sizeof p3);
    static const char *const want[3] = { ": not JSON", ": resolved_config.cache_config.num_gpu_blocks: expected a whole number",
                                         ": none of num_gpu_blocks" };
    const char *const files[3] = { p1, p2, p3 };
    for (int i = 0; i < 3; i++) {
        result r = run_db(60, "calib", "import", "observed", REAL, "--scenario", REAL_INI, "--meta", files[i], NULL);
        expect_one_line(&r, 2, want[i], files[i]);
        result_free(&r);
        cr_expect(access(db, F_OK) != 0, "a refused import created the database");
    }
}

/* ---- posteriors ----------------------------------------------------------------- */

TestSuite(obsmeas_posterior, .init = setup, .fini = tcli_teardown);

/* Stored coefficient NAME of fit ID (its value exactly), NAN when absent. */
static double coef_of(int id, const char *name)
{
    sqlite3 *h = NULL;
    sqlite3_stmt *st = NULL;
    double v = NAN;
    cr_assert_eq(sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    cr_assert_eq(sqlite3_prepare_v2(h, "SELECT value FROM calib_coefs WHERE fit_id = ? AND name = ?", -1, &st, NULL), SQLITE_OK);
    sqlite3_bind_int(st, 1, id);
    sqlite3_bind_text(st, 2, name, -1, SQLITE_STATIC);
    if (sqlite3_step(st) == SQLITE_ROW) v = sqlite3_column_double(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(h);
    return v;
}

Test(obsmeas_posterior, no_data_is_the_prior_exactly)
{
    result r = run_db(60, "calib", "import", "observed", REAL, "--scenario", REAL_INI, NULL);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    result_free(&r);
    r = run_db(120, "calib", "fit", "observed", "--model", "llama-3.1-8b", "--gpu", "rtx-4090", "--data", "none", NULL);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    cr_expect(strstr(r.out, "fitted on: none") != NULL, "%s", r.out);
    result_free(&r);
    /* The prior: the learned default of rtx-4090 under the run's engine (vLLM) in the fitted
     * model's terms (cprior.h), every term exactly. */
    gpu_spec g;
    model_spec m;
    double want[CF_NTERMS];
    tsim_catalog("rtx-4090", "llama-3.1-8b", &g, &m);
    cprior_learned_terms(&g, "vllm", &m, "bf16", want);
    for (int k = 0; k < CF_NTERMS; k++) {
        double v = coef_of(1, cfitted_term_names[k]);
        cr_expect(fabs(v - want[k]) <= 1e-12 * fabs(want[k]), "%s: %.17g, the prior %.17g", cfitted_term_names[k], v, want[k]);
    }
    /* Not the datasheet roofline's (compute_eff 0.6 on 165.2 TFLOP/s): the learned efficiency. */
    cr_expect(fabs(want[CF_DECODE] - 1000 / (165.2 * 0.6)) > 0.01 * want[CF_DECODE], "decode %g", want[CF_DECODE]);
    cr_expect_eq(db_count(db, "SELECT count(*) FROM calib_coefs WHERE fit_id = 1 AND status = 'prior'"), CF_NTERMS);
    /* --data steps without any step: one line, exit 2, nothing stored. */
    size_t n;
    char *before = slurp_or_fail(db, &n);
    r = run_db(60, "calib", "fit", "observed", "--model", "llama-3.1-8b", "--gpu", "rtx-4090", "--data", "steps", NULL);
    expect_one_line(&r, 2, "no whole steps", "fit steps without steps");
    result_free(&r);
    r = run_db(60, "calib", "fit", "observed", "--model", "llama-3.1-8b", "--gpu", "rtx-4090", "--data", "x", NULL);
    expect_one_line(&r, 2, "--data: expected both, requests, steps or none", "bad --data");
    result_free(&r);
    cr_expect(same_bytes(db, before, n));
    free(before);
}

/* The mean |error| % of the row starting with LABEL in a fit's table (NAN: no such row). */
static double row_mean(const char *out, const char *label)
{
    const char *p = strstr(out, label);
    if (!p) return NAN;
    p += strlen(label);
    double s = 0;
    int k = 0;
    while (*p && *p != '\n') {
        char *end;
        double v = strtod(p, &end);
        if (end == p) { p++; continue; }
        s += fabs(v), k++;
        p = end;
    }
    return k ? s / k : NAN;
}

/* The real run's requests and its engine log: fitted alone and together (docs/observed.md). */
Test(obsmeas_posterior, real_requests_and_engine_log, .timeout = 240)
{
    result r = run_db(60, "calib", "import", "engine-log", REAL_LOG, "--scenario", REAL_INI, NULL);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    result_free(&r);
    r = run_db(60, "calib", "import", "observed", REAL, "--scenario", REAL_INI, NULL);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    result_free(&r);
    const char *data[3] = { "requests", "steps", "both" };
    double run_err[3], step_err[3];
    char *both = NULL;
    for (int d = 0; d < 3; d++) {
        r = run_db(200, "calib", "fit", "observed", "--model", "llama-3.1-8b", "--gpu", "rtx-4090", "--data", data[d], NULL);
        cr_assert_eq(r.rc, 0, "%s", r.err);
        cr_log_info("%s", r.out);
        run_err[d] = row_mean(r.out, "run 1 fitted");
        const char *w = strstr(r.out, "whole steps: 25, mean |error| ");
        step_err[d] = w ? strtod(w + strlen("whole steps: 25, mean |error| "), NULL) : NAN;
        if (d == 2) both = strdup(r.out);
        result_free(&r);
    }
    /* Fitted on the requests: the replay within 10 %, the engine log's steps (not fitted) within 10 %.
     * Fitted on the log alone: its steps within 8 %, the requests 25-40 % off (the log has no
     * prefill window to price the prompts: the prompt terms stay at the prior).  Both: each within 10 %. */
    cr_expect(run_err[0] < 10 && step_err[0] < 10, "requests: run %.2f %%, steps %.2f %%", run_err[0], step_err[0]);
    cr_expect(step_err[1] < 8 && run_err[1] > 20 && run_err[1] < 45, "log: run %.2f %%, steps %.2f %%", run_err[1], step_err[1]);
    cr_expect(run_err[2] < 10 && step_err[2] < 10, "both: run %.2f %%, steps %.2f %%", run_err[2], step_err[2]);
    /* Together better than the log alone on the requests: the both-fit's replay error below its
     * leave-one-out row (the requests predicted by the fit to the log's steps). */
    double left = row_mean(both, "run 1 left out");
    cr_expect(isfinite(left) && run_err[2] < left, "both fitted %.2f %%, requests left out %.2f %%", run_err[2], left);
    cr_expect(strstr(both, "prefill_ms_per_tflop") && strstr(both, "floor"), "%s", both);
    free(both);
}

/* ---- carrying across TP ------------------------------------------------------------ */

TestSuite(obsmeas_carry, .init = setup, .fini = tcli_teardown);

/* `latsim cost --json` of 32 decoding sequences at context 1000 on rtx-4090 at TP: step_ms, and its source into SRC. */
static double cost_at(const char *tp, char *src, size_t n)
{
    result r = run_db(60, "cost", "--model", "llama-3.1-8b", "--gpu", "rtx-4090", "--tp", tp, "--decode", "32", "--context",
                      "1000", "--json", NULL);
    cr_assert_eq(r.rc, 0, "tp %s: %s", tp, r.err);
    const char *s = strstr(r.out, "\"source\": \"");
    snprintf(src, n, "%.*s", s ? (int) strcspn(s + 11, "\"") : 0, s ? s + 11 : "");
    double ms = strtod(strstr(r.out, "\"step_ms\": ") + 11, NULL);
    result_free(&r);
    return ms;
}

Test(obsmeas_carry, tp1_fit_predicts_tp2_and_4, .timeout = 240)
{
    result r = run_db(60, "calib", "import", "engine-log", REAL_LOG, "--scenario", REAL_INI, NULL);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    result_free(&r);
    r = run_db(120, "calib", "fit", "observed", "--model", "llama-3.1-8b", "--gpu", "rtx-4090", "--data", "steps", NULL);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    result_free(&r);
    char s1[256], s2[256], s4[256];
    double t1 = cost_at("1", s1, sizeof s1), t2 = cost_at("2", s2, sizeof s2), t4 = cost_at("4", s4, sizeof s4);
    cr_expect(strstr(s1, "observed") && !strstr(s1, "carried"), "tp 1: %s", s1);
    cr_expect(strstr(s2, "observed, carried to tp 2") != NULL, "tp 2: %s", s2);
    cr_expect(strstr(s4, "observed, carried to tp 4") != NULL, "tp 4: %s", s4);
    /* By hand from the stored terms: per GPU the weights, GEMMs and KV shrink by the TP degree, the
     * fixed cost stays, and each of the 2 x 32 layers' all-reduces of 32 tokens x 4096 x 2 bytes
     * (x 2 (t - 1) / t on the ring) costs allreduce_ms_per_gb per GB plus a hop latency per (t - 1);
     * each of the 32 sequences seq_ms. */
    double fixed = coef_of(1, "fixed_ms"), w = coef_of(1, "weights_ms_per_gb"), dec = coef_of(1, "decode_ms_per_tflop"),
           kv = coef_of(1, "kv_ms_per_gb"), arb = coef_of(1, "allreduce_ms_per_gb"), hop = coef_of(1, "allreduce_ms_per_hop"),
           launch = coef_of(1, "launch_ms_per_layer"), seq = coef_of(1, "seq_ms");
    const double P = 8.03e9, L = 32, D = 4096, kvb = 32.0 * 1001 * 2 * L * 8 * 128 * 2;
    for (int t = 1; t <= 4; t *= 2) {
        int kvh = 8 / t < 1 ? 1 : 8 / t;
        double want = fixed + w * P * 2 / t / 1e9 + dec * 2 * P * 32 / t / 1e12 + kv * kvb * kvh / 8 / 1e9 +
                      arb * 2 * L * 2.0 * (t - 1) / t * 32 * D * 2 / 1e9 + hop * 2 * L * (t - 1) + launch * L + seq * 32;
        double got = t == 1 ? t1 : t == 2 ? t2 : t4;
        cr_expect(fabs(got / want - 1) < 2e-3, "tp %d: %.6g ms, by hand %.6g ms", t, got, want);
    }
    cr_expect(t2 < t1 && t4 < t2, "tp 1 %.4g, 2 %.4g, 4 %.4g ms", t1, t2, t4);
}
