/* test_calib_refusals.c -- Criterion tests of the calibrator under hostile input
 * (hardening issue): a fit refuses data it cannot fit (an outlier row, an absurd
 * stored time, an error above the limit) and names the rows; cost = auto never
 * uses a stored model whose cross-validated error is above the limit or unknown,
 * and says so; the importers refuse values outside physical ranges, non-decimal
 * numbers, duplicated header columns, zero operator times, files that are not
 * regular files, missing expected files and an unknown --model, all-or-nothing.
 * Each case runs ./latsim in a forked child bounded by alarm() in its own
 * temporary directory, and checks the exit status, that stderr is one line naming
 * the file:line and column (or the option), and that the database is
 * byte-identical to before (or absent).
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gsl/gsl_matrix.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <gsl/gsl_vector.h>
#include <sqlite3.h>

#include "core/catalog.h"
#include "cfitted.h"
#include "nnls.h"
#include "store/store.h"

#include "tbin.h"
#include "tcli.h"
#define VIDUR "tests/data/vidur"     /* the slice of the Vidur profile set (test_calib.c) */
#define LIMIT_S 60                   /* seconds any one run may take before alarm() kills it */

static void setup(void) { tcli_setup("/tmp/latsim_h2calib_", "c.db"); }

TestSuite(calib_refuse_fit, .init = setup, .fini = tcli_teardown);
TestSuite(calib_refuse_auto, .init = setup, .fini = tcli_teardown);
TestSuite(calib_refuse_import, .init = setup, .fini = tcli_teardown);
TestSuite(calib_refuse_vidur, .init = setup, .fini = tcli_teardown);

/* The database as it is now (NULL: absent), to compare after a refused command. */
typedef struct snap {
    char *bytes;   /* the file's bytes, NULL when there is no file */
    size_t n;      /* their count */
} snap;

static snap snap_db(void)
{
    snap s = { 0 };
    s.bytes = slurp_or_null(db, &s.n);
    return s;
}

/* Exit 2, one stderr line holding WANT, the database as in S (or still absent). */
static void expect_refused(result *r, const char *want, snap *s)
{
    cr_expect_eq(r->rc, 2, "exit %d, wanted 2; stderr: %s", r->rc, r->err);
    cr_expect_eq(lines(r->err), 1, "stderr is not one line: %s", r->err);
    cr_expect(strstr(r->err, want) != NULL, "stderr lacks '%s': %s", want, r->err);
    size_t n = 0;
    char *now = slurp_or_null(db, &n);
    if (!s->bytes)
        cr_expect_null(now, "the database was created");
    else
        cr_expect(now && n == s->n && memcmp(now, s->bytes, n) == 0, "the database changed");
    free(now);
}

/* One number from the database (NAN when no row). */
static double query(const char *sql)
{
    sqlite3 *h = NULL;
    cr_assert_eq(sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    sqlite3_stmt *st = NULL;
    cr_assert_eq(sqlite3_prepare_v2(h, sql, -1, &st, NULL), SQLITE_OK, "%s: %s", sql, sqlite3_errmsg(h));
    double v = NAN;
    if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL) v = sqlite3_column_double(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(h);
    return v;
}

/* Plants data by SQL, as an older latsim (or a hand edit) could have stored it. */
static void plant(const char *sql)
{
    sqlite3 *h = NULL;
    cr_assert_eq(sqlite3_open(db, &h), SQLITE_OK);
    char *msg = NULL;
    cr_assert_eq(sqlite3_exec(h, sql, NULL, NULL, &msg), SQLITE_OK, "%s: %s", sql, msg ? msg : "");
    sqlite3_close(h);
}

/* ---- steps: 32 sane rows of a known step model with 2 % noise ----------------------- */

static const double KNOWN[CF_NTERMS] = {
    [CF_FIXED] = 4.0, [CF_WEIGHTS] = 0.35, [CF_PREFILL] = 2.2, [CF_ATTN] = 3.5, [CF_KV] = 0.5,
    [CF_DECODE] = 6.0, [CF_AR_BYTES] = 20.0, [CF_AR_HOP] = 0.008, [CF_LAUNCH] = 0, [CF_SEQ] = 0.02,
};

static const char *HEAD = "model,gpu,tp,phase,batch_size,tokens,step_ms\n";

/* Appends the 32 rows (tp 1 and 2: 8 prefill and 8 decode shapes each) of
 * llama-3-8b on h100 to BUF; their times go to MS (may be NULL). */
static void known_rows(char *buf, size_t cap, double *ms)
{
    sqlite3 *h = NULL;
    char err[256];
    cr_assert_eq(store_open(":memory:", &h, err, sizeof err), 0, "%s", err);
    cfitted m = { 0 };
    cr_assert_eq(catalog_model(h, "llama-3-8b", &m.model, err, sizeof err), 0, "%s", err);
    store_close(h);
    m.weight_bytes = 2;
    m.kv_bytes = 2;
    memcpy(m.c, KNOWN, sizeof KNOWN);
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, 11);
    static const int toks[] = { 128, 512, 2048, 8192 }, batches[] = { 1, 8 };
    static const int dbatch[] = { 1, 8, 32, 128 }, ctxs[] = { 256, 2048 };
    size_t len = strlen(buf);
    int k = 0;
    for (int tp = 1; tp <= 2; tp++) {
        for (int i = 0; i < 4; i++)
            for (int b = 0; b < 2; b++) {
                cost_step s = { .prefill_tokens = (int64_t) batches[b] * toks[i],
                                .prefill_pairs = batches[b] * (double) toks[i] * (toks[i] + 1) / 2,
                                .prefill_seqs = batches[b] };
                double t = cfitted_step_ms(&m, tp, &s, NULL) * (1 + 0.02 * gsl_ran_gaussian(rng, 1));
                if (ms) ms[k] = t;
                k++;
                len += (size_t) snprintf(buf + len, cap - len, "llama-3-8b,h100,%d,prefill,%d,%d,%.9g\n", tp,
                                         batches[b], toks[i], t);
            }
        for (int i = 0; i < 2; i++)
            for (int b = 0; b < 4; b++) {
                cost_step s = { .decode_seqs = dbatch[b], .kv_tokens = (int64_t) dbatch[b] * (ctxs[i] + 1) };
                double t = cfitted_step_ms(&m, tp, &s, NULL) * (1 + 0.02 * gsl_ran_gaussian(rng, 1));
                if (ms) ms[k] = t;
                k++;
                len += (size_t) snprintf(buf + len, cap - len, "llama-3-8b,h100,%d,decode,%d,%d,%.9g\n", tp,
                                         dbatch[b], ctxs[i], t);
            }
    }
    cr_assert_eq(k, 32);
    cr_assert_lt(len, cap);
    gsl_rng_free(rng);
}

static result import_steps(const char *name, const char *text)
{
    char path[256];
    write_file(name, text, path, sizeof path);
    return run_db(LIMIT_S, "calib", "import", "steps", path, NULL);
}

/* A good import, so that refusals can be checked against an existing database. */
static void seed_db(void)
{
    result r = import_steps("seed.csv", "model,gpu,tp,phase,batch_size,tokens,step_ms\n"
                            "llama-2-7b,a100,1,prefill,1,128,12.5\n");
    cr_assert_eq(r.rc, 0, "%s", r.err);
    result_free(&r);
}

/* One wildly wrong row among 32 sane ones: the fit refuses, naming the row by its
 * file and line (too slow by 100x, or in seconds instead of ms); nothing stored. */
Test(calib_refuse_fit, one_outlier_row_is_named_and_refused)
{
    static char csv[8192];
    double ms[32];
    static const double factor[2] = { 100, 0.001 };
    for (int v = 0; v < 2; v++) {
        if (v) unlink(db);
        snprintf(csv, sizeof csv, "%s", HEAD);
        known_rows(csv, sizeof csv, ms);
        /* Line 34 of the file: a prefill step of the same shape as line 4 (8 x 128). */
        size_t len = strlen(csv);
        snprintf(csv + len, sizeof csv - len, "llama-3-8b,h100,1,prefill,8,128,%.9g\n", ms[1] * factor[v]);
        result r = import_steps("steps.csv", csv);
        cr_assert_eq(r.rc, 0, "%s", r.err);
        result_free(&r);
        snap s = snap_db();
        r = run_db(LIMIT_S, "calib", "fit", "--model", "llama-3-8b", "--gpu", "h100", NULL);
        expect_refused(&r, "steps.csv:34 (prefill, step_ms ", &s);
        cr_expect(strstr(r.err, "1 of the 33 steps of llama-3-8b on h100 is an outlier"), "%s", r.err);
        cr_expect(!strstr(r.err, "steps.csv:4 "), "a sane row named: %s", r.err);
        cr_expect_eq(query("SELECT count(*) FROM calib_fits"), 0);
        result_free(&r);
        free(s.bytes);
    }
}

/* The example: a step_ms of 1e300 among 32 sane rows is refused at import
 * (row and column); one stored by an older latsim (planted here) is refused by
 * the fit, naming its file:line, instead of a model whose every coefficient is 0. */
Test(calib_refuse_fit, absurd_time_refused_at_import_and_fit)
{
    static char csv[8192];
    snprintf(csv, sizeof csv, "%s", HEAD);
    known_rows(csv, sizeof csv, NULL);
    size_t len = strlen(csv);
    snprintf(csv + len, sizeof csv - len, "llama-3-8b,h100,1,prefill,4,512,1e300\n");
    seed_db();
    snap s = snap_db();
    result r = import_steps("steps.csv", csv);
    expect_refused(&r, "steps.csv:34: column step_ms: '1e300' is out of range (expected 1e-06 to 1e+07 ms)", &s);
    result_free(&r);
    free(s.bytes);

    csv[len] = '\0';
    r = import_steps("steps.csv", csv);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    result_free(&r);
    plant("UPDATE calib_meas SET time_ms = 1e300 WHERE line = 9 AND model = 'llama-3-8b'");
    s = snap_db();
    r = run_db(LIMIT_S, "calib", "fit", "--model", "llama-3-8b", "--gpu", "h100", NULL);
    expect_refused(&r, "steps.csv:9: step_ms 1e+300 is out of range", &s);
    result_free(&r);
    free(s.bytes);
    cr_expect_eq(query("SELECT count(*) FROM calib_fits"), 0);
}

/* The same 32 rows without the outlier fit, and the outlier screen leaves the fit
 * as it was: the stored coefficients of the steps-alone fit (--prior none) are
 * the plain non-negative fit of all rows. */
Test(calib_refuse_fit, sane_rows_fit_as_before)
{
    static char csv[8192];
    double ms[32];
    snprintf(csv, sizeof csv, "%s", HEAD);
    known_rows(csv, sizeof csv, ms);
    result r = import_steps("steps.csv", csv);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    result_free(&r);
    r = run_db(LIMIT_S, "calib", "fit", "--model", "llama-3-8b", "--gpu", "h100", "--prior", "none", NULL);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    cr_expect_eq(lines(r.err), 0, "%s", r.err);
    result_free(&r);
    double cv = query("SELECT mape FROM calib_fits WHERE id = 1");
    cr_expect(cv > 0.5 && cv < 5, "cv mape %g", cv);

    /* The same rows fitted here with the solver directly. */
    sqlite3 *h = NULL;
    char err[256];
    cr_assert_eq(store_open(":memory:", &h, err, sizeof err), 0, "%s", err);
    model_spec m;
    cr_assert_eq(catalog_model(h, "llama-3-8b", &m, err, sizeof err), 0, "%s", err);
    store_close(h);
    gsl_matrix *X = gsl_matrix_alloc(32, CF_NTERMS);
    gsl_vector *y = gsl_vector_alloc(32), *w = gsl_vector_alloc(32);
    const char *p = strchr(csv, '\n') + 1;
    for (size_t i = 0; i < 32; i++) {
        int tp, b, t;
        char phase[16];
        double v;
        cr_assert_eq(sscanf(p, "llama-3-8b,h100,%d,%15[a-z],%d,%d,%lf", &tp, phase, &b, &t, &v), 5);
        p = strchr(p, '\n') + 1;
        cost_step s = { 0 };
        if (!strcmp(phase, "prefill")) {
            s.prefill_tokens = (int64_t) b * t;
            s.prefill_pairs = (double) b * t * (t + 1.0) / 2;
            s.prefill_seqs = b;
        } else {
            s.decode_seqs = b;
            s.kv_tokens = (int64_t) b * (t + 1);
        }
        double f[CF_NTERMS];
        cfitted_features(&m, 2, 2, tp, &s, f);
        for (int k = 0; k < CF_NTERMS; k++) gsl_matrix_set(X, i, (size_t) k, f[k]);
        gsl_vector_set(y, i, v);
        gsl_vector_set(w, i, 1 / (v * v));
    }
    nnls_result nr;
    cr_assert_eq(nnls_fit(X, y, w, NULL, &nr, err, sizeof err), 0, "%s", err);
    /* Several TP degrees with an all-reduce term not separable: the all-reduce and
     * launch terms that are aliased are held at their priors (cfitted.h) and the
     * others refitted to what they leave. */
    double held[CF_NTERMS] = { 0 };
    if (nr.status[CF_AR_BYTES] == NNLS_ALIASED || nr.status[CF_AR_HOP] == NNLS_ALIASED) {
        gpu_spec g;
        cr_assert_eq(store_open(":memory:", &h, err, sizeof err), 0, "%s", err);
        cr_assert_eq(catalog_gpu(h, "h100", &g, err, sizeof err), 0, "%s", err);
        store_close(h);
        double prior[CF_NTERMS] = { 0 };
        prior[CF_AR_BYTES] = 1000 / g.link_gbs;
        prior[CF_AR_HOP] = cost_roofline_defaults.allreduce_latency_us * 1e-3;
        prior[CF_LAUNCH] = cost_roofline_defaults.launch_us_per_layer * 1e-3;
        int use[CF_NTERMS];
        for (int k = 0; k < CF_NTERMS; k++) {
            use[k] = !((k == CF_AR_BYTES || k == CF_AR_HOP || k == CF_LAUNCH) && nr.status[k] == NNLS_ALIASED);
            if (!use[k]) held[k] = prior[k];
        }
        for (size_t i = 0; i < 32; i++) {
            double v = gsl_vector_get(y, i);
            for (int k = 0; k < CF_NTERMS; k++) v -= held[k] * gsl_matrix_get(X, i, (size_t) k);
            gsl_vector_set(y, i, v);
        }
        cr_assert_eq(nnls_fit(X, y, w, use, &nr, err, sizeof err), 0, "%s", err);
        for (int k = 0; k < CF_NTERMS; k++)
            if (held[k] > 0) nr.b[k] = held[k];
    }
    for (int k = 0; k < CF_NTERMS; k++) {
        char sql[160];
        snprintf(sql, sizeof sql, "SELECT value FROM calib_coefs WHERE fit_id = 1 AND name = '%s'", cfitted_term_names[k]);
        double stored = query(sql);
        cr_expect(fabs(stored - nr.b[k]) <= 1e-9 * fmax(fabs(nr.b[k]), 1e-12), "%s: stored %.12g, solver %.12g",
                  cfitted_term_names[k], stored, nr.b[k]);
    }
    gsl_matrix_free(X);
    gsl_vector_free(y);
    gsl_vector_free(w);
}

/* Times with no relation to the step sizes (alternately 1 and 1000 ms): no row is
 * an outlier of the others, but no model fits them: refused with its error. */
Test(calib_refuse_fit, useless_error_refused)
{
    static char csv[8192];
    snprintf(csv, sizeof csv, "%s", HEAD);
    size_t len = strlen(csv);
    int k = 0;
    for (int t = 64; t <= 8192; t *= 2)
        for (int b = 1; b <= 8; b *= 2, k++)
            len += (size_t) snprintf(csv + len, sizeof csv - len, "llama-3-8b,h100,1,%s,%d,%d,%d\n",
                                     k % 3 ? "prefill" : "decode", b, t, k % 2 ? 1000 : 1);
    result r = import_steps("steps.csv", csv);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    result_free(&r);
    snap s = snap_db();
    r = run_db(LIMIT_S, "calib", "fit", "--model", "llama-3-8b", "--gpu", "h100", NULL);
    expect_refused(&r, "above the 50 % limit of a usable model", &s);
    cr_expect(strstr(r.err, "error of the step model of llama-3-8b on h100 is "), "%s", r.err);
    result_free(&r);
    free(s.bytes);
    cr_expect_eq(query("SELECT count(*) FROM calib_fits"), 0);
}

/* ---- cost = auto never uses a useless stored model ------------------------------------ */

/* A fitted model planted with every coefficient 0 and an error of 100 % (what the
 * 1e300 row used to store): auto skips it with one warning line and uses the
 * roofline; cost = fitted and cost_id refuse it; a scenario run does the same.
 * With a good model beside it, auto picks the good one and still warns. */
Test(calib_refuse_auto, skips_a_planted_bad_model)
{
    static char csv[8192];
    snprintf(csv, sizeof csv, "%s", HEAD);
    known_rows(csv, sizeof csv, NULL);
    result r = import_steps("steps.csv", csv);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    result_free(&r);
    r = run_db(LIMIT_S, "calib", "fit", "--model", "llama-3-8b", "--gpu", "h100", NULL);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    result_free(&r);
    plant("UPDATE calib_fits SET mape = 100 WHERE id = 1; UPDATE calib_coefs SET value = 0 WHERE fit_id = 1");

    r = run_db(LIMIT_S, "cost", "--model", "llama-3-8b", "--gpu", "h100", "--tp", "1", "--prefill", "512", "--json", NULL);
    cr_expect_eq(r.rc, 0, "%s", r.err);
    cr_expect(strstr(r.out, "\"kind\": \"learned\""), "%s", r.out);
    cr_expect_eq(lines(r.err), 1, "%s", r.err);
    cr_expect(strstr(r.err, "latsim: warning: cost auto: skipped stored model 1 (fitted, cv_mape 100 %)"), "%s", r.err);
    result_free(&r);

    snap s = snap_db();
    r = run_db(LIMIT_S, "cost", "--model", "llama-3-8b", "--gpu", "h100", "--tp", "1", "--prefill", "512", "--cost", "fitted", NULL);
    expect_refused(&r, "stored fitted model 1 of llama-3-8b on h100 is not used: its cross-validated error 100 % "
                   "is above the 50 % limit", &s);
    result_free(&r);
    r = run_db(LIMIT_S, "cost", "--model", "llama-3-8b", "--gpu", "h100", "--tp", "1", "--prefill", "512", "--cost-id", "1", NULL);
    expect_refused(&r, "calibrated model 1 (fitted, llama-3-8b on h100) is not used", &s);
    result_free(&r);
    r = run_db(LIMIT_S, "calib", "list", NULL);
    cr_expect_eq(r.rc, 0, "%s", r.err);
    cr_expect(strstr(r.out, "not used: cv_mape above 50 %"), "%s", r.out);
    result_free(&r);

    /* A simulation: the pool uses the learned model, one warning line, exit 0. */
    char ini[256];
    write_file("s.ini", "[sim]\nrequests = 3\nwarmup = 0\n[workload]\narrival = constant\nrate = 0.001\n"
               "prompt_tokens = const(1000)\noutput_tokens = const(2)\n"
               "[pool chat]\nkind = llm\nmodel = llama-3-8b\ngpu = h100\n", ini, sizeof ini);
    r = run_db(LIMIT_S, "run", ini, "--json", "--no-store", NULL);
    cr_expect_eq(r.rc, 0, "%s", r.err);
    cr_expect(strstr(r.out, "\"cost_model\": {\"kind\": \"learned\""), "%s", r.out);
    /* That line alone (the learned model is not the uncalibrated roofline: no warning of that). */
    cr_expect_eq(lines(r.err), 1, "%s", r.err);
    cr_expect(strstr(r.err, "warning: [pool chat] cost auto: skipped stored model 1"), "%s", r.err);
    result_free(&r);

    /* A good model beside it wins, and the bad one is still said. */
    r = run_db(LIMIT_S, "calib", "fit", "--model", "llama-3-8b", "--gpu", "h100", NULL);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    result_free(&r);
    r = run_db(LIMIT_S, "cost", "--model", "llama-3-8b", "--gpu", "h100", "--tp", "1", "--prefill", "512", "--json", NULL);
    cr_expect_eq(r.rc, 0, "%s", r.err);
    cr_expect(strstr(r.out, "\"kind\": \"fitted\", \"id\": 2"), "%s", r.out);
    cr_expect(strstr(r.err, "skipped stored model 1 "), "%s", r.err);
    result_free(&r);
    free(s.bytes);
}

/* A model stored with no cross-validated error (an older latsim stored the
 * all-zero profile so): calib list and cost agree that it is there and unused. */
Test(calib_refuse_auto, unknown_error_listed_and_refused_alike)
{
    result r = run_db(LIMIT_S, "calib", "import", "vidur", VIDUR, "--model", "llama-2-7b", "--gpu", "a100", NULL);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    result_free(&r);
    r = run_db(LIMIT_S, "calib", "fit", "profile", "--model", "llama-2-7b", "--gpu", "a100", "--tp", "2", NULL);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    result_free(&r);
    plant("UPDATE calib_fits SET mape = NULL");
    r = run_db(LIMIT_S, "calib", "list", NULL);
    cr_expect_eq(r.rc, 0, "%s", r.err);
    cr_expect(strstr(r.out, "not used: cv_mape unknown"), "%s", r.out);
    result_free(&r);
    snap s = snap_db();
    r = run_db(LIMIT_S, "cost", "--model", "llama-2-7b", "--gpu", "a100", "--tp", "2", "--prefill", "100", "--cost", "profile", NULL);
    expect_refused(&r, "stored profile model 1 of llama-2-7b on a100 is not used: its cross-validated error is unknown", &s);
    cr_expect(!strstr(r.err, "no profile model stored"), "%s", r.err);
    result_free(&r);
    free(s.bytes);
}

/* ---- steps and measurement CSVs: ranges, decimal numbers, duplicated columns ---------- */

Test(calib_refuse_import, steps_values_refused_with_row_and_column)
{
    seed_db();
    snap s = snap_db();
    static const struct { const char *rows, *want; } cases[] = {
        { "llama-3-8b,h100,1,prefill,1,128,1e308\nllama-3-8b,h100,1,prefill,1,512,1e308\n",
          "bad.csv:2: column step_ms: '1e308' is out of range (expected 1e-06 to 1e+07 ms)" },
        { "llama-3-8b,h100,1,prefill,1,128,1e-300\nllama-3-8b,h100,1,prefill,1,512,1e-300\n",
          "bad.csv:2: column step_ms: '1e-300' is out of range" },
        { "llama-3-8b,h100,1,prefill,1,128,12.5\nllama-3-8b,h100,1,decode,1,128,1e-320\n",
          "bad.csv:3: column step_ms: '1e-320' is out of range" },
        { "llama-3-8b,h100,1,prefill,1,128,1e400\n", "bad.csv:2: column step_ms: '1e400' is out of range" },
        { "llama-3-8b,h100,1,prefill,1,128,0\n", "bad.csv:2: column step_ms: '0' is out of range" },
        { "llama-3-8b,h100,1,prefill,1,128,-3\n", "bad.csv:2: column step_ms: '-3' is out of range" },
        { "llama-3-8b,h100,1,prefill,1,128,0x10\n", "bad.csv:2: column step_ms: '0x10' is not a number" },
        { "llama-3-8b,h100,1,prefill,1,128,inf\n", "bad.csv:2: column step_ms: 'inf' is not a number" },
        { "llama-3-8b,h100,1,prefill,1,128,nan\n", "bad.csv:2: column step_ms: 'nan' is not a number" },
        { "llama-3-8b,h100,1,prefill,1,128,1.5e\n", "bad.csv:2: column step_ms: '1.5e' is not a number" },
        { "llama-3-8b,h100,1,prefill,1,128,.\n", "bad.csv:2: column step_ms: '.' is not a number" },
        { "llama-3-8b,h100,1,prefill,1,0x80,12\n", "bad.csv:2: column tokens: '0x80' is not a number" },
        { "llama-3-8b,h100,1,prefill,1,1e-300,12\n", "bad.csv:2: column tokens: '1e-300' is out of range (expected 1 to 1e+07 tokens)" },
        { "llama-3-8b,h100,1,prefill,1,1e308,12\n", "bad.csv:2: column tokens: '1e308' is out of range" },
        { "llama-3-8b,h100,1,prefill,1e300,128,12\n", "bad.csv:2: column batch_size: '1e300' is not a whole number in 1..1000000" },
        { "llama-3-8b,h100,99999999999,prefill,1,128,12\n", "bad.csv:2: column tp: '99999999999' is not a whole number in 1..1024" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char text[512];
        snprintf(text, sizeof text, "%s%s", HEAD, cases[i].rows);
        result r = import_steps("bad.csv", text);
        expect_refused(&r, cases[i].want, &s);
        result_free(&r);
    }
    /* A column named twice: both named, whichever way round. */
    result r = import_steps("bad.csv", "model,gpu,tp,phase,batch_size,tokens,step_ms,step_ms\n"
                            "llama-3-8b,h100,1,prefill,1,128,12.5,1250\n");
    expect_refused(&r, "bad.csv:1: column step_ms: named twice in the header (columns 7 and 8)", &s);
    result_free(&r);
    r = import_steps("bad.csv", "model,model,gpu,tp,phase,batch_size,tokens,step_ms\n"
                     "llama-3-8b,llama-2-7b,h100,1,prefill,1,128,12.5\n");
    expect_refused(&r, "bad.csv:1: column model: named twice in the header (columns 1 and 2)", &s);
    result_free(&r);
    /* --model / --gpu naming nothing in the catalog. */
    char path[256];
    write_file("good.csv", "model,gpu,tp,phase,batch_size,tokens,step_ms\nllama-3-8b,h100,1,prefill,1,128,12.5\n",
               path, sizeof path);
    r = run_db(LIMIT_S, "calib", "import", "steps", path, "--model", "zz", NULL);
    expect_refused(&r, "--model: unknown model 'zz' (valid: ", &s);
    result_free(&r);
    free(s.bytes);
}

/* `import meas` (the export format) checks the same. */
Test(calib_refuse_import, measurement_csv_values_refused)
{
    seed_db();
    char out[256];
    snprintf(out, sizeof out, "%s/export.csv", dir);
    result r = run_db(LIMIT_S, "calib", "export", out, NULL);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    result_free(&r);
    size_t n;
    char *text = slurp_or_null(out, &n);
    cr_assert_not_null(text);
    char *row = strchr(text, '\n');
    cr_assert_not_null(row);
    *row++ = '\0';   /* TEXT: the header, ROW: the exported row */
    cr_assert(strstr(row, ",12.5,"), "%s", row);
    snap s = snap_db();
    static const struct { const char *from, *to, *want; } cases[] = {
        { ",12.5,", ",0x10,", "bad.csv:2: column time_ms: '0x10' is not a number" },
        { ",12.5,", ",1e-320,", "bad.csv:2: column time_ms: '1e-320' is out of range" },
        { ",12.5,", ",1e308,", "bad.csv:2: column time_ms: '1e308' is out of range" },
        { ",12.5,", ",0,", "bad.csv:2: column time_ms: '0' is out of range" },
        { "\"bf16\",\"1\",", "\"bf16\",\"1e300\",", "bad.csv:2: column tp: '1e300' is not a whole number" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char bad[2048], *at = strstr(row, cases[i].from);
        cr_assert_not_null(at, "%s in %s", cases[i].from, row);
        snprintf(bad, sizeof bad, "%s\n%.*s%s%s", text, (int) (at - row), row, cases[i].to, at + strlen(cases[i].from));
        char path[256];
        write_file("bad.csv", bad, path, sizeof path);
        r = run_db(LIMIT_S, "calib", "import", "meas", path, NULL);
        expect_refused(&r, cases[i].want, &s);
        result_free(&r);
    }
    char bad[2048], path[256];
    snprintf(bad, sizeof bad, "%s,time_ms\n%s", text, row);   /* time_ms twice */
    write_file("bad.csv", bad, path, sizeof path);
    r = run_db(LIMIT_S, "calib", "import", "meas", path, NULL);
    expect_refused(&r, "bad.csv:1: column time_ms: named twice in the header (columns 12 and 19)", &s);
    result_free(&r);
    free(text);
    free(s.bytes);
}

/* ---- Vidur sets ------------------------------------------------------------------------ */

/* Writes a small Vidur set under dir/NAME for llama-2-7b on the A100 (8 token
 * counts at tp 1, attention, CPU overheads, one network cluster) with every
 * operator median OP (e.g. "0.05", or "0"). */
static void write_vidur(const char *name, const char *op)
{
    char path[512], rel[256], buf[4096];
    size_t len = (size_t) snprintf(buf, sizeof buf, "time_stats.mlp_up_proj.median,time_stats.mlp_up_proj.std,"
                                   "time_stats.emb.median,n_head,n_kv_head,n_embd,n_expanded_embd,vocab_size,"
                                   "num_tokens,num_tensor_parallel_workers\n");
    for (int t = 1; t <= 128; t *= 2)
        len += (size_t) snprintf(buf + len, sizeof buf - len, "%s,0.001,%s,32,32,4096,11008,32768,%d,1\n", op, op, t);
    snprintf(rel, sizeof rel, "%s/compute/a100/meta-llama/Llama-2-7b-hf/mlp.csv", name);
    write_file(rel, buf, path, sizeof path);
    len = (size_t) snprintf(buf, sizeof buf, "time_stats.attn_prefill.median,time_stats.attn_decode.median,"
                            "time_stats.attn_input_reshape.median,time_stats.attn_output_reshape.median,n_embd,"
                            "n_q_head,n_kv_head,num_tensor_parallel_workers,batch_size,prefill_chunk_size,"
                            "kv_cache_size,is_prefill\n");
    for (int b = 1; b <= 16; b *= 2) {
        len += (size_t) snprintf(buf + len, sizeof buf - len, "%.4f,,0.0,0.001,4096,32,32,1,%d,%d,0,True\n",
                                 0.01 + 0.002 * b * b, b, 64 * b);
        len += (size_t) snprintf(buf + len, sizeof buf - len, ",%.4f,0.0,0.001,4096,32,32,1,%d,0,%d,False\n",
                                 0.01 + 0.003 * b, b, 128 * b);
    }
    snprintf(rel, sizeof rel, "%s/attention_a100/attention.csv", name);
    write_file(rel, buf, path, sizeof path);
    snprintf(rel, sizeof rel, "%s/attention_a100/cpu_overheads.csv", name);
    write_file(rel, ",schedule_median,sampler_e2e_median,prepare_inputs_e2e_median,process_model_outputs_median,"
               "model_name,batch_size,tensor_parallel_degree\n0,0.04,0.6,0.1,0.3,meta-llama/Llama-2-7b-hf,8,1\n"
               "1,0.06,0.7,0.2,0.6,meta-llama/Llama-2-7b-hf,16,1\n", path, sizeof path);
    snprintf(rel, sizeof rel, "%s/network/a100_dgx/all_reduce.csv", name);
    write_file(rel, ",time_stats.all_reduce.median,time_stats.all_reduce.std,num_workers,size,devices_per_node\n"
               "0,0.043,0.01,2,2048,2\n1,0.050,0.01,2,4096,2\n2,0.070,0.01,2,65536,2\n", path, sizeof path);
}

static result import_vidur(const char *name, const char *extra)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return extra ? run_db(LIMIT_S, "calib", "import", "vidur", path, "--model", extra, NULL)
                 : run_db(LIMIT_S, "calib", "import", "vidur", path, NULL);
}

/* Operator times of 0 are refused at import (row and column); stored ones (an
 * older latsim imported them) make `fit profile` refuse, naming the row. */
Test(calib_refuse_vidur, zero_operator_times_refused)
{
    seed_db();
    snap s = snap_db();
    write_vidur("zero", "0");
    result r = import_vidur("zero", NULL);
    expect_refused(&r, "zero/compute/a100/meta-llama/Llama-2-7b-hf/mlp.csv:2: column time_stats.mlp_up_proj.median: "
                   "'0' is out of range (expected 1e-06 to 1e+07 ms)", &s);
    result_free(&r);
    write_vidur("neg", "-0.5");
    r = import_vidur("neg", NULL);
    expect_refused(&r, "mlp.csv:2: column time_stats.mlp_up_proj.median: '-0.5' is out of range", &s);
    result_free(&r);
    write_vidur("nan", "nan");
    r = import_vidur("nan", NULL);
    expect_refused(&r, "mlp.csv:2: column time_stats.mlp_up_proj.median: 'nan' is not a number", &s);
    result_free(&r);

    write_vidur("good", "0.05");
    r = import_vidur("good", NULL);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    result_free(&r);
    plant("UPDATE calib_meas SET time_ms = 0 WHERE what = 'op'");
    free(s.bytes);
    s = snap_db();
    r = run_db(LIMIT_S, "calib", "fit", "profile", "--model", "llama-2-7b", "--gpu", "a100", "--tp", "1", NULL);
    expect_refused(&r, "good/compute/a100/meta-llama/Llama-2-7b-hf/mlp.csv:2: op mlp_up_proj took 0 ms, outside 1e-06 to 1e+07 ms", &s);
    result_free(&r);
    cr_expect_eq(query("SELECT count(*) FROM calib_fits"), 0);
    free(s.bytes);
}

/* The synthetic set itself imports and builds a profile (so the refusals above
 * and below are about what was broken). */
Test(calib_refuse_vidur, synthetic_set_builds_a_profile)
{
    write_vidur("good", "0.05");
    result r = import_vidur("good", "llama-2-7b");
    cr_assert_eq(r.rc, 0, "%s", r.err);
    result_free(&r);
    r = run_db(LIMIT_S, "calib", "fit", "profile", "--model", "llama-2-7b", "--gpu", "a100", "--tp", "1", NULL);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    result_free(&r);
    cr_expect_eq(query("SELECT count(*) FROM calib_fits WHERE kind = 'profile'"), 1);
}

/* Every file read is a regular file (symbolic links followed): a link to
 * /dev/zero, a FIFO (without blocking: alarm() bounds the run) or a directory is
 * refused, as is a missing expected file; nothing is imported in part. */
Test(calib_refuse_vidur, files_must_be_regular_and_present)
{
    seed_db();
    snap s = snap_db();
    char p[512];
    write_vidur("zero", "0.05");
    snprintf(p, sizeof p, "%s/zero/attention_a100/attention.csv", dir);
    cr_assert_eq(unlink(p), 0);
    cr_assert_eq(symlink("/dev/zero", p), 0);
    result r = import_vidur("zero", NULL);
    expect_refused(&r, "zero/attention_a100/attention.csv: not a regular file (a character device)", &s);
    result_free(&r);

    write_vidur("fifo", "0.05");
    snprintf(p, sizeof p, "%s/fifo/attention_a100/attention.csv", dir);
    cr_assert_eq(unlink(p), 0);
    cr_assert_eq(mkfifo(p, 0644), 0);
    r = import_vidur("fifo", NULL);
    expect_refused(&r, "fifo/attention_a100/attention.csv: not a regular file (a FIFO)", &s);
    result_free(&r);

    write_vidur("dir", "0.05");
    snprintf(p, sizeof p, "%s/dir/compute/a100/meta-llama/Llama-2-7b-hf/mlp.csv", dir);
    cr_assert_eq(unlink(p), 0);
    cr_assert_eq(mkdir(p, 0755), 0);
    r = import_vidur("dir", NULL);
    expect_refused(&r, "dir/compute/a100/meta-llama/Llama-2-7b-hf/mlp.csv: not a regular file (a directory)", &s);
    result_free(&r);

    write_vidur("missing", "0.05");
    snprintf(p, sizeof p, "%s/missing/attention_a100/cpu_overheads.csv", dir);
    cr_assert_eq(unlink(p), 0);
    r = import_vidur("missing", NULL);
    expect_refused(&r, "missing/attention_a100/cpu_overheads.csv: missing (expected the A100 CPU overheads", &s);
    result_free(&r);

    if (geteuid() != 0) {   /* root reads anything */
        write_vidur("unreadable", "0.05");
        snprintf(p, sizeof p, "%s/unreadable/network/a100_dgx/all_reduce.csv", dir);
        cr_assert_eq(chmod(p, 0), 0);
        r = import_vidur("unreadable", NULL);
        expect_refused(&r, "unreadable/network/a100_dgx/all_reduce.csv: cannot open: Permission denied", &s);
        result_free(&r);
    }

    /* All or nothing: the last file read has a bad row, the earlier ones are fine. */
    write_vidur("last", "0.05");
    char path[512];
    write_file("last/network/a100_dgx/all_reduce.csv", ",time_stats.all_reduce.median,time_stats.all_reduce.std,"
               "num_workers,size,devices_per_node\n0,0.043,0.01,2,2048,2\n1,0x1p-3,0.01,2,4096,2\n", path, sizeof path);
    r = import_vidur("last", NULL);
    expect_refused(&r, "last/network/a100_dgx/all_reduce.csv:3: column time_stats.all_reduce.median: '0x1p-3' is not a number", &s);
    result_free(&r);
    free(s.bytes);
}

/* An unknown --model is refused like an unknown --gpu (one line, the known ones),
 * before anything is read: attention and network rows are not imported alone. */
Test(calib_refuse_vidur, unknown_model_or_gpu_refused)
{
    seed_db();
    snap s = snap_db();
    result r = run_db(LIMIT_S, "calib", "import", "vidur", VIDUR, "--model", "zz", NULL);
    expect_refused(&r, "--model: unknown model 'zz' (valid: ", &s);
    cr_expect(strstr(r.err, "llama-2-7b"), "%s", r.err);
    result_free(&r);
    r = run_db(LIMIT_S, "calib", "import", "vidur", VIDUR, "--gpu", "zz", NULL);
    expect_refused(&r, "--gpu: unknown gpu 'zz' (valid: ", &s);
    result_free(&r);
    /* A catalog model with no operator profile in the set: nothing imported. */
    r = run_db(LIMIT_S, "calib", "import", "vidur", VIDUR, "--model", "mistral-7b", NULL);
    expect_refused(&r, "compute: no operator profile (mlp.csv) of mistral-7b: nothing imported", &s);
    result_free(&r);
    free(s.bytes);
}
