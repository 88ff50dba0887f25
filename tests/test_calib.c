/* test_calib.c -- Criterion tests of the calibrator: the non-negative weighted
 * least-squares fit (calib/nnls.c), the fitted step model (calib/cfitted.c), the
 * importers (calib/cimport.c) and `latsim calib ...` / `latsim cost ...` run as a
 * program from the repository root.  Each CLI test works in its own mkdtemp()
 * directory under /tmp, removed afterwards.
 */
#include <criterion/criterion.h>
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <jansson.h>
#include <sqlite3.h>

#include "core/catalog.h"
#include "cdb.h"
#include "cfitted.h"
#include "cimport.h"
#include "cprofile.h"
#include "cprior.h"
#include "tsim.h"
#include "nnls.h"
#include "store/store.h"

#include "tbin.h"
#include "tcli.h"
#define VIDUR "tests/data/vidur"                 /* a slice of ../shared/data/profiles/vidur (make-slice.py) */
#define STEPS "tests/data/splitwise_bloom176b.csv" /* ../shared/data/steps, unchanged */

static void setup(void) { tcli_setup("/tmp/latsim_calib_", "c.db"); }

TestSuite(calib_fit);
TestSuite(calib_cli, .init = setup, .fini = tcli_teardown);

/* Runs "./latsim ARGS --db dir/c.db" with its output captured. */
__attribute__((format(printf, 1, 2)))
static result latsim(const char *fmt, ...)
{
    char tail[160];
    snprintf(tail, sizeof tail, "--db '%s'", db);
    va_list ap;
    va_start(ap, fmt);
    result r = vrun_sh(tail, fmt, ap);
    va_end(ap);
    return r;
}

/* One number from the database at db. */
static double query(const char *sql)
{
    sqlite3 *h = NULL;
    cr_assert_eq(sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    sqlite3_stmt *st = NULL;
    cr_assert_eq(sqlite3_prepare_v2(h, sql, -1, &st, NULL), SQLITE_OK, "%s: %s", sql, sqlite3_errmsg(h));
    double v = NAN;
    if (sqlite3_step(st) == SQLITE_ROW) v = sqlite3_column_double(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(h);
    return v;
}

/* ---- the solver ----------------------------------------------------------------------- */

/* y = 2 + 0.5 x1 + 3 x2 + 0 x3 (x3 is a real column whose true coefficient is 0, so
 * NNLS may hold it at the bound) with 1 % relative Gaussian noise, 400 points, fixed
 * seed.  Each estimate must be within 4 of its reported standard errors of the truth
 * (a 4-sigma band: a correct SE fails it with probability 6e-5 per coefficient), and
 * the SEs must be small (the design is well conditioned: < 2 % of the value). */
Test(calib_fit, recovers_known_coefficients_within_standard_errors)
{
    const size_t n = 400, p = 4;
    const double truth[4] = { 2.0, 0.5, 3.0, 0.0 };
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, 42);
    gsl_matrix *X = gsl_matrix_alloc(n, p);
    gsl_vector *y = gsl_vector_alloc(n), *w = gsl_vector_alloc(n);
    for (size_t i = 0; i < n; i++) {
        double x1 = gsl_rng_uniform(rng) * 100, x2 = gsl_rng_uniform(rng) * 10, x3 = gsl_rng_uniform(rng);
        gsl_matrix_set(X, i, 0, 1);
        gsl_matrix_set(X, i, 1, x1);
        gsl_matrix_set(X, i, 2, x2);
        gsl_matrix_set(X, i, 3, x3);
        double mu = truth[0] + truth[1] * x1 + truth[2] * x2;
        double v = mu * (1 + 0.01 * gsl_ran_gaussian(rng, 1.0));
        gsl_vector_set(y, i, v);
        gsl_vector_set(w, i, 1 / (v * v));
    }
    nnls_result r;
    char err[256];
    cr_assert_eq(nnls_fit(X, y, w, NULL, &r, err, sizeof err), 0, "%s", err);
    cr_assert_eq(r.kept, 4);
    for (size_t j = 0; j < 3; j++) {
        cr_assert_eq(r.status[j], NNLS_FITTED);
        cr_assert(r.se[j] > 0 && r.se[j] < 0.02 * truth[j], "se[%zu] = %g", j, r.se[j]);
        cr_assert(fabs(r.b[j] - truth[j]) < 4 * r.se[j], "b[%zu] = %g, truth %g, se %g", j, r.b[j], truth[j], r.se[j]);
    }
    cr_assert(r.b[3] >= 0);
    cr_assert(r.status[3] == NNLS_BOUND || fabs(r.b[3]) < 4 * r.se[3]);
    cr_assert(r.r2 > 0.99);
    /* Cross-validation holds points out: its error is at least the in-sample one and,
     * with 1 % Gaussian noise, near E|e| = 0.8 %. */
    double cv = nnls_cv_mape(X, y, w, NULL, 5, err, sizeof err);
    cr_assert(cv >= r.mape, "cv %g < in-sample %g", cv, r.mape);
    cr_assert(cv > 0.6 && cv < 1.1, "cv mape %g %%", cv);
    gsl_matrix_free(X);
    gsl_vector_free(y);
    gsl_vector_free(w);
    gsl_rng_free(rng);
}

/* A coefficient that least squares would make negative is held at 0. */
Test(calib_fit, non_negative)
{
    const size_t n = 20;
    gsl_matrix *X = gsl_matrix_alloc(n, 2);
    gsl_vector *y = gsl_vector_alloc(n), *w = gsl_vector_alloc(n);
    for (size_t i = 0; i < n; i++) {
        gsl_matrix_set(X, i, 0, 1);
        gsl_matrix_set(X, i, 1, (double)i);
        gsl_vector_set(y, i, 10 - 0.1 * (double)i);   /* slope -0.1 */
        gsl_vector_set(w, i, 1);
    }
    nnls_result r;
    char err[256];
    cr_assert_eq(nnls_fit(X, y, w, NULL, &r, err, sizeof err), 0, "%s", err);
    cr_assert_eq(r.status[1], NNLS_BOUND);
    cr_assert_eq(r.b[1], 0);
    cr_assert_float_eq(r.b[0], 10 - 0.1 * 9.5, 1e-9);   /* the mean */
    gsl_matrix_free(X);
    gsl_vector_free(y);
    gsl_vector_free(w);
}

/* A column that is a multiple of an earlier one is reported aliased and held at 0. */
Test(calib_fit, aliased_terms)
{
    const size_t n = 10;
    gsl_matrix *X = gsl_matrix_alloc(n, 3);
    gsl_vector *y = gsl_vector_alloc(n), *w = gsl_vector_alloc(n);
    for (size_t i = 0; i < n; i++) {
        gsl_matrix_set(X, i, 0, 1);
        gsl_matrix_set(X, i, 1, (double)i);
        gsl_matrix_set(X, i, 2, 3.0 * (double)i);
        gsl_vector_set(y, i, 1 + 2 * (double)i);
        gsl_vector_set(w, i, 1);
    }
    nnls_result r;
    char err[256];
    cr_assert_eq(nnls_fit(X, y, w, NULL, &r, err, sizeof err), 0, "%s", err);
    cr_assert_eq(r.status[2], NNLS_ALIASED);
    cr_assert_eq(r.aliased_with[2], 1);
    cr_assert_float_eq(r.b[1], 2, 1e-9);
    cr_assert_float_eq(r.b[0], 1, 1e-9);
    gsl_matrix_free(X);
    gsl_vector_free(y);
    gsl_vector_free(w);
}

/* ---- steps: import, fit, round trip ------------------------------------------------- */

/* Known coefficients of the fitted model for llama-3-8b on h100 (units as the term
 * names); the launch term is 0 because pure prefill/decode steps cannot separate
 * it from the fixed term. */
static const double KNOWN[CF_NTERMS] = {
    [CF_FIXED] = 4.0, [CF_WEIGHTS] = 0.35, [CF_PREFILL] = 2.2, [CF_ATTN] = 3.5, [CF_KV] = 0.5,
    [CF_DECODE] = 6.0, [CF_AR_BYTES] = 20.0, [CF_AR_HOP] = 0.008, [CF_LAUNCH] = 0, [CF_SEQ] = 0.02,
};

/* Writes a steps CSV of llama-3-8b on h100 generated from the coefficients C
 * for TP in TPS (NTP of them), relative noise NOISE (0 = exact), to dir/NAME. */
static void write_steps_of(const double *c, const char *name, const int *tps, int ntp, double noise, char *path,
                           size_t n)
{
    sqlite3 *h = NULL;
    char err[256];
    cr_assert_eq(store_open(":memory:", &h, err, sizeof err), 0);
    cfitted m = { 0 };
    cr_assert_eq(catalog_model(h, "llama-3-8b", &m.model, err, sizeof err), 0);
    store_close(h);
    m.weight_bytes = 2;
    m.kv_bytes = 2;
    memcpy(m.c, c, sizeof m.c);
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, 7);
    snprintf(path, n, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fprintf(f, "model,gpu,tp,phase,batch_size,tokens,step_ms,source\n");
    static const int toks[] = { 128, 512, 2048, 8192 }, batches[] = { 1, 4, 16 };
    static const int dbatch[] = { 1, 8, 32, 128 }, ctxs[] = { 256, 2048 };
    for (int t = 0; t < ntp; t++) {
        for (int i = 0; i < 4; i++)
            for (int b = 0; b < 3; b++) {
                cost_step s = { .prefill_tokens = (int64_t)batches[b] * toks[i],
                                .prefill_pairs = batches[b] * (double)toks[i] * (toks[i] + 1) / 2,
                                .prefill_seqs = batches[b] };
                double ms = cfitted_step_ms(&m, tps[t], &s, NULL) * (1 + noise * gsl_ran_gaussian(rng, 1));
                fprintf(f, "llama-3-8b,h100,%d,prefill,%d,%d,%.9g,synthetic\n", tps[t], batches[b], toks[i], ms);
            }
        for (int i = 0; i < 2; i++)
            for (int b = 0; b < 4; b++) {
                cost_step s = { .decode_seqs = dbatch[b], .kv_tokens = (int64_t)dbatch[b] * (ctxs[i] + 1) };
                double ms = cfitted_step_ms(&m, tps[t], &s, NULL) * (1 + noise * gsl_ran_gaussian(rng, 1));
                fprintf(f, "llama-3-8b,h100,%d,decode,%d,%d,%.9g,synthetic\n", tps[t], dbatch[b], ctxs[i], ms);
            }
    }
    fclose(f);
    gsl_rng_free(rng);
}

/* Writes a steps CSV generated from KNOWN (see write_steps_of). */
static void write_known_steps(const char *name, const int *tps, int ntp, double noise, char *path, size_t n)
{
    write_steps_of(KNOWN, name, tps, ntp, noise, path, n);
}

/* The value of coefficient NAME of fit ID. */
static double coef(int id, const char *name)
{
    char sql[256];
    snprintf(sql, sizeof sql, "SELECT value FROM calib_coefs WHERE fit_id = %d AND name = '%s'", id, name);
    return query(sql);
}

Test(calib_cli, steps_round_trip_recovers_known_model)
{
    char csv[256];
    const int tps[] = { 1, 2, 4, 8 };
    write_known_steps("known.csv", tps, 4, 0, csv, sizeof csv);
    result r = latsim("calib import steps '%s'", csv);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    cr_assert(strstr(r.out, "imported 80 measurements"), "%s", r.out);
    result_free(&r);
    /* The steps alone: with the learned prior the aliased launch term would sit at
     * the prior, not at KNOWN's 0 (calib_fit/posterior_* test that). */
    r = latsim("calib fit --model llama-3-8b --gpu h100 --prior none");
    cr_assert_eq(r.rc, 0, "%s", r.err);
    result_free(&r);
    for (int k = 0; k < CF_NTERMS; k++) {
        double v = coef(1, cfitted_term_names[k]);
        if (KNOWN[k] == 0)
            cr_assert(fabs(v) < 1e-6, "%s = %g, expected 0", cfitted_term_names[k], v);
        else
            cr_assert(fabs(v - KNOWN[k]) < 0.01 * KNOWN[k], "%s = %g, expected %g within 1 %%",
                      cfitted_term_names[k], v, KNOWN[k]);
    }
    cr_assert_lt(query("SELECT mape FROM calib_fits WHERE id = 1"), 0.01);
    cr_assert_eq(query("SELECT count(*) FROM calib_fit_meas WHERE fit_id = 1"), 80);
    cr_assert_eq(query("SELECT count(*) FROM calib_coefs WHERE fit_id = 1 AND status = 'aliased'"), 1);
    r = latsim("calib show 1");
    cr_assert_eq(r.rc, 0);
    cr_assert(strstr(r.out, "launch_ms_per_layer"), "%s", r.out);
    cr_assert(strstr(r.out, "known.csv lines 2-81"), "%s", r.out);
    result_free(&r);
}

/* ---- steps as a posterior (cfitpost.h) ------------------------------------------------ */

/* The learned prior of llama-3-8b on h100 (bf16), PRIOR and WIDTH (CF_NTERMS each). */
static void h100_prior(double *prior, double *width, double *lo)
{
    gpu_spec g;
    model_spec m;
    tsim_catalog("h100", "llama-3-8b", &g, &m);
    cprior_terms(&g, NULL, &m, 1, "bf16", prior, width);
    cprior_floor(&g, "bf16", lo);
}

/* The status of coefficient NAME of fit ID. */
static void coef_status(int id, const char *name, char *out, size_t n)
{
    sqlite3 *h = NULL;
    cr_assert_eq(sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    sqlite3_stmt *st = NULL;
    cr_assert_eq(sqlite3_prepare_v2(h, "SELECT status FROM calib_coefs WHERE fit_id = ? AND name = ?", -1, &st, NULL),
                 SQLITE_OK);
    sqlite3_bind_int(st, 1, id);
    sqlite3_bind_text(st, 2, name, -1, SQLITE_STATIC);
    cr_assert_eq(sqlite3_step(st), SQLITE_ROW, "no coefficient %s of fit %d", name, id);
    snprintf(out, n, "%s", (const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    sqlite3_close(h);
}

/* Imports the steps CSV at CSV and fits them (`calib fit` with OPTS, "" for
 * none); asserts both succeed and, when EXPECT is not NULL, that the fit's
 * output contains it. */
static void import_and_fit(const char *csv, const char *opts, const char *expect)
{
    result r = latsim("calib import steps '%s'", csv);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    result_free(&r);
    r = latsim("calib fit --model llama-3-8b --gpu h100 %s", opts);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    if (expect) cr_assert(strstr(r.out, expect), "%s", r.out);
    result_free(&r);
}

/* Round trip of the default fit: steps generated at TP 1 with 1 % noise from the
 * learned prior with its rates perturbed (x0.8 to x1.5) come back
 * within 3 of their reported posterior sds (Gaussian: each fails with p 0.003)
 * plus 2 % (the prior's pull at this noise); the all-reduce terms, which TP 1
 * steps do not touch, are reported as "prior" at exactly the prior; and no term
 * is below the datasheet floor. */
Test(calib_cli, posterior_round_trip_keeps_the_undetermined_at_the_prior)
{
    double prior[CF_NTERMS], width[CF_NTERMS], lo[CF_NTERMS], truth[CF_NTERMS];
    h100_prior(prior, width, lo);
    static const double perturb[CF_NTERMS] = {
        /* At one TP the fixed and weights terms are one column (the prior splits
         * them): the fixed cost is left at the prior, the weights rate moved. */
        [CF_FIXED] = 1.0, [CF_WEIGHTS] = 1.3, [CF_PREFILL] = 1.25, [CF_ATTN] = 0.8, [CF_KV] = 1.5, [CF_DECODE] = 1.2,
        [CF_AR_BYTES] = 1, [CF_AR_HOP] = 1, [CF_LAUNCH] = 1, [CF_SEQ] = 1,
    };
    for (int k = 0; k < CF_NTERMS; k++) truth[k] = prior[k] * perturb[k];
    char csv[256];
    const int tps[] = { 1 };
    write_steps_of(truth, "post.csv", tps, 1, 0.01, csv, sizeof csv);
    import_and_fit(csv, "", "posterior toward the learned default");
    int fitted = 0;
    for (int k = 0; k < CF_NTERMS; k++) {
        const char *name = cfitted_term_names[k];
        char st[32], sql[200];
        coef_status(1, name, st, sizeof st);
        double v = coef(1, name);
        snprintf(sql, sizeof sql, "SELECT se FROM calib_coefs WHERE fit_id = 1 AND name = '%s'", name);
        double se = query(sql);
        cr_assert_geq(v, lo[k] * (1 - 1e-12), "%s = %g below the floor %g", name, v, lo[k]);
        if (k == CF_AR_BYTES || k == CF_AR_HOP || k == CF_SEQ) {
            cr_assert_str_eq(st, "prior", "%s", name);
            cr_assert_eq(v, prior[k], "%s = %.17g, prior %.17g", name, v, prior[k]);
        }
        if (!strcmp(st, "fitted")) {
            fitted++;
            cr_assert(fabs(v - truth[k]) <= 3 * se + 0.02 * truth[k], "%s = %g +- %g, truth %g", name, v, se, truth[k]);
        }
    }
    /* The rates the steps do determine at TP 1: prefill, attention, KV, decode or weights. */
    cr_assert_geq(fitted, 4, "only %d terms fitted", fitted);
    cr_assert_lt(query("SELECT mape FROM calib_fits WHERE id = 1"), 2.0);

    /* Carried to TP 2 (marked so): the stored terms, the all-reduces priced by
     * the learned link model (the prior), summed by hand from the features. */
    cfitted m = { 0 };
    gpu_spec g;
    tsim_catalog("h100", "llama-3-8b", &g, &m.model);
    m.weight_bytes = m.kv_bytes = 2;
    for (int k = 0; k < CF_NTERMS; k++) m.c[k] = coef(1, cfitted_term_names[k]);
    cost_step s = { .decode_seqs = 16, .kv_tokens = 16 * 501 };
    double f[CF_NTERMS], want = 0;
    cfitted_features(&m.model, 2, 2, 2, &s, f);
    for (int k = 0; k < CF_NTERMS; k++) want += m.c[k] * f[k];
    cr_assert_gt(f[CF_AR_BYTES] * prior[CF_AR_BYTES] + f[CF_AR_HOP] * prior[CF_AR_HOP], 0);
    result r = latsim("cost --model llama-3-8b --gpu h100 --tp 2 --decode 16 --context 500 --cost fitted --json");
    cr_assert_eq(r.rc, 0, "%s", r.err);
    cr_assert(strstr(r.err, "extrapolated"), "%s", r.err);
    double ms = atof(r.out + strlen("{\"step_ms\": "));
    cr_assert(fabs(ms - want) < 1e-5 * want, "tp 2: %.9g ms, by hand %.9g", ms, want);
    result_free(&r);
    r = latsim("cost --model llama-3-8b --gpu h100 --tp 2 --decode 16 --context 500 --cost fitted");
    cr_assert(strstr(r.out, "carried to tp 2"), "%s", r.out);
    result_free(&r);
}

/* Steps that cannot separate a term are no longer refused: the prefill steps
 * all of one size leave the prefill rates at the prior (cf. --prior none,
 * fit_refuses_singular_design). */
Test(calib_cli, posterior_holds_an_unseparable_term_at_the_prior)
{
    char csv[256];
    write_file("one.csv", "model,gpu,tp,phase,batch_size,tokens,step_ms\n"
               "llama-3-8b,h100,1,prefill,1,128,12.5\nllama-3-8b,h100,1,prefill,1,128,12.7\n"
               "llama-3-8b,h100,1,prefill,1,128,12.4\nllama-3-8b,h100,1,decode,4,128,8\n"
               "llama-3-8b,h100,1,decode,8,128,8.5\nllama-3-8b,h100,1,decode,16,256,9.5\n", csv, sizeof csv);
    import_and_fit(csv, "", NULL);
    double prior[CF_NTERMS], width[CF_NTERMS], lo[CF_NTERMS];
    h100_prior(prior, width, lo);
    char st[32];
    coef_status(1, "attn_ms_per_tflop", st, sizeof st);
    cr_assert_str_eq(st, "prior");
    cr_assert_eq(coef(1, "attn_ms_per_tflop"), prior[CF_ATTN]);
}

/* Steps faster than the hardware can go (a unit slip: the prefill GEMMs at
 * twice the datasheet peak) leave the prefill rate at its floor, 1000 / peak
 * ms per TFLOP, status "floor", never below it. */
Test(calib_cli, posterior_never_below_the_datasheet_floor)
{
    double prior[CF_NTERMS], width[CF_NTERMS], lo[CF_NTERMS], c[CF_NTERMS];
    h100_prior(prior, width, lo);
    memcpy(c, prior, sizeof c);
    c[CF_PREFILL] = 0.5 * lo[CF_PREFILL];
    c[CF_ATTN] = 0.5 * lo[CF_ATTN];
    char csv[256];
    const int tps[] = { 1 };
    write_steps_of(c, "fast.csv", tps, 1, 0.01, csv, sizeof csv);
    import_and_fit(csv, "", NULL);
    char st[32];
    coef_status(1, "prefill_ms_per_tflop", st, sizeof st);
    cr_assert_str_eq(st, "floor");
    cr_assert_float_eq(coef(1, "prefill_ms_per_tflop"), lo[CF_PREFILL], 1e-9 * lo[CF_PREFILL]);
    for (int k = 0; k < CF_NTERMS; k++)
        cr_assert_geq(coef(1, cfitted_term_names[k]), lo[k] * (1 - 1e-12), "%s", cfitted_term_names[k]);
}

/* With 2 % noise the cross-validated error is reported near the noise level (E|e| =
 * 1.6 %), not the in-sample error. */
Test(calib_cli, steps_noisy_cv_error_reported)
{
    char csv[256];
    const int tps[] = { 2, 4, 8 };
    write_known_steps("noisy.csv", tps, 3, 0.02, csv, sizeof csv);
    result r = latsim("calib import steps '%s'", csv);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    result_free(&r);
    r = latsim("calib fit --model llama-3-8b --gpu h100 --folds 5");
    cr_assert_eq(r.rc, 0, "%s", r.err);
    result_free(&r);
    double cv = query("SELECT mape FROM calib_fits WHERE id = 1");
    cr_assert(cv > 1.0 && cv < 3.5, "cv mape %g", cv);
}

/* Bad input: one line naming the file, the line and the column; exit 2; nothing
 * stored. */
static void bad_steps(const char *text, const char *expect)
{
    char csv[256];
    write_file("bad.csv", text, csv, sizeof csv);
    result r = latsim("calib import steps '%s'", csv);
    cr_assert_eq(r.rc, 2, "rc %d: %s", r.rc, r.err);
    cr_assert_eq(lines(r.err), 1, "%s", r.err);
    cr_assert(strstr(r.err, expect), "expected '%s' in: %s", expect, r.err);
    cr_assert(strstr(r.err, "bad.csv:"), "%s", r.err);
    cr_assert_eq(access(db, F_OK), -1, "refused input created the database %s", db);
    result_free(&r);
}

Test(calib_cli, bad_steps_input)
{
    const char *head = "model,gpu,tp,phase,batch_size,tokens,step_ms\n";
    char buf[1024];
    bad_steps("model,gpu,tp,phase,batch_size,tokens\nllama-3-8b,h100,1,prefill,1,128\n",
              "bad.csv:1: column step_ms: missing");
    snprintf(buf, sizeof buf, "%sllama-3-8b,h100,1,prefill,1,128,12.5\nllama-3-8b,h100,1,decode,1,128,fast\n", head);
    bad_steps(buf, "bad.csv:3: column step_ms: 'fast' is not a number");
    snprintf(buf, sizeof buf, "%sllama-3-8b,h100,1,prefill,1,128,12.5\nllama-9-8b,h100,1,decode,1,128,9\n", head);
    bad_steps(buf, "bad.csv:3: column model: unknown model 'llama-9-8b'");
    snprintf(buf, sizeof buf, "%sllama-3-8b,h100,1,prefil,1,128,12.5\n", head);
    bad_steps(buf, "bad.csv:2: column phase: expected prefill or decode");
    snprintf(buf, sizeof buf, "%sllama-3-8b,h100,3,prefill,1,128,12.5\n", head);
    bad_steps(buf, "bad.csv:2: column tp: 3 does not divide the 32 attention heads");
    snprintf(buf, sizeof buf, "%sllama-3-8b,h100,1,prefill,1,128\n", head);
    bad_steps(buf, "bad.csv:2: 6 fields, but the header has 7 columns");
}

/* Bytes of the file at PATH (NUL bytes too), without a terminating NUL added. */
static void write_bytes(const char *name, const char *bytes, size_t n, char *path, size_t pn)
{
    snprintf(path, pn, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f, "cannot write %s", path);
    cr_assert_eq(fwrite(bytes, 1, n, f), n);
    fclose(f);
}

/* A cell holding a NUL byte is refused naming file, line and column (it used to
 * import as the text before the NUL: tokens=12 for "12<NUL>8"); a quoted cell with
 * newlines and an escape sequence is quoted escaped on one line, and the row is
 * named by the line it starts on.  Nothing is stored either way. */
Test(calib_cli, steps_csv_nul_and_multiline_cells)
{
    const char *good = "model,gpu,tp,phase,batch_size,tokens,step_ms\nllama-3-8b,h100,1,prefill,1,128,12.5\n";
    char csv[256];
    write_file("good.csv", good, csv, sizeof csv);
    result r = latsim("calib import steps '%s'", csv);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    result_free(&r);

    static const char nul[] = "model,gpu,tp,phase,batch_size,tokens,step_ms\n"
                              "llama-3-8b,h100,1,prefill,1,12\0" "8,12.5\n";
    write_bytes("nul.csv", nul, sizeof nul - 1, csv, sizeof csv);
    r = latsim("calib import steps '%s'", csv);
    cr_assert_eq(r.rc, 2, "rc %d: %s", r.rc, r.out);
    cr_assert_eq(lines(r.err), 1, "%s", r.err);
    cr_assert(strstr(r.err, "nul.csv:2: column tokens: a NUL byte (byte 3 of the cell, after '12'): not text"),
              "%s", r.err);
    result_free(&r);
    /* The same in the header names the column by its position. */
    static const char hnul[] = "model,gpu,t\0p,phase\n";
    write_bytes("hnul.csv", hnul, sizeof hnul - 1, csv, sizeof csv);
    r = latsim("calib import meas '%s'", csv);
    cr_assert_eq(r.rc, 2);
    cr_assert(strstr(r.err, "hnul.csv:1: column header 3: a NUL byte"), "%s", r.err);
    result_free(&r);

    /* Line 3 starts the row; its quoted tp cell runs to line 5. */
    write_file("multi.csv", "model,gpu,tp,phase,batch_size,tokens,step_ms\n"
               "llama-3-8b,h100,1,prefill,1,128,12.5\n"
               "llama-3-8b,h100,\"8\nx\x1b[31mred\ny\",prefill,1,128,12.5\n", csv, sizeof csv);
    r = latsim("calib import steps '%s'", csv);
    cr_assert_eq(r.rc, 2);
    cr_assert_eq(lines(r.err), 1, "%s", r.err);
    cr_assert(strchr(r.err, '\x1b') == NULL, "raw escape on stderr: %s", r.err);
    cr_assert(strstr(r.err, "multi.csv:3: column tp: '8\\nx\\x1b[31mred\\ny' is not a whole number"), "%s", r.err);
    result_free(&r);
    /* A long cell is cut (64 bytes shown), the message stays short. */
    char longcsv[2048];
    int k = snprintf(longcsv, sizeof longcsv, "model,gpu,tp,phase,batch_size,tokens,step_ms\n"
                     "llama-3-8b,h100,1,prefill,1,128,\"");
    for (int i = 0; i < 1000; i++) longcsv[k++] = i % 50 == 49 ? '\n' : '7';
    snprintf(longcsv + k, sizeof longcsv - (size_t)k, "x\"\n");
    write_file("long.csv", longcsv, csv, sizeof csv);
    r = latsim("calib import steps '%s'", csv);
    cr_assert_eq(r.rc, 2);
    cr_assert_eq(lines(r.err), 1, "%s", r.err);
    cr_assert(strstr(r.err, "long.csv:2: column step_ms: '7777"), "%s", r.err);
    cr_assert(strstr(r.err, "...' is not a number"), "%s", r.err);
    cr_assert(strlen(r.err) < 200, "cell not shortened: %s", r.err);
    result_free(&r);
    cr_assert_eq(query("SELECT count(*) FROM calib_meas"), 1);
}

static void bad_fit(const char *csvtext, const char *expect)
{
    char csv[256];
    write_file("few.csv", csvtext, csv, sizeof csv);
    result r = latsim("calib import steps '%s'", csv);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    result_free(&r);
    double before = query("SELECT count(*) FROM calib_fits");
    r = latsim("calib fit --model llama-3-8b --gpu h100 --prior none");
    cr_assert_eq(r.rc, 2, "rc %d: %s", r.rc, r.err);
    cr_assert_eq(lines(r.err), 1, "%s", r.err);
    cr_assert(strstr(r.err, expect), "expected '%s' in: %s", expect, r.err);
    cr_assert_eq(query("SELECT count(*) FROM calib_fits"), before);
    result_free(&r);
}

Test(calib_cli, fit_refuses_too_few_points)
{
    bad_fit("model,gpu,tp,phase,batch_size,tokens,step_ms\n"
            "llama-3-8b,h100,1,prefill,1,128,12.5\nllama-3-8b,h100,1,prefill,1,1024,30\n",
            "2 measurements of llama-3-8b on h100 for 2 coefficients: need at least 3");
}

Test(calib_cli, fit_refuses_singular_design)
{
    bad_fit("model,gpu,tp,phase,batch_size,tokens,step_ms\n"
            "llama-3-8b,h100,1,prefill,1,128,12.5\nllama-3-8b,h100,1,prefill,1,128,12.7\n"
            "llama-3-8b,h100,1,prefill,1,128,12.4\nllama-3-8b,h100,1,decode,4,128,8\n"
            "llama-3-8b,h100,1,decode,8,128,8.5\nllama-3-8b,h100,1,decode,16,256,9.5\n",
            "singular design: the prefill steps of llama-3-8b on h100 all have the same size");
}

Test(calib_cli, fit_without_measurements)
{
    result r = latsim("calib import steps '%s' --model llama-3-8b", STEPS);
    cr_assert_eq(r.rc, 2, "bloom-176b is not in the catalog: %s", r.err);
    cr_assert(strstr(r.err, "splitwise_bloom176b.csv:2: column model: unknown model 'bloom-176b'"), "%s", r.err);
    result_free(&r);
}

/* ---- latsim cost -------------------------------------------------------------------- */

/* MODEL on h100 at tp 2 (16 decoding sequences at context 500) priced in fp8 with
 * only a bf16 fit of llama-3-8b stored: its source says SOURCE, and each part is
 * its bf16 part x the learned structure's fp8 / bf16 term (cprior_learned_terms),
 * the weights read halved (1 byte per weight, not 2). */
static void expect_fp8_carry(const char *model, const char *source)
{
    static const char *const part[] = { "fixed", "weights", "kv", "decode", "allreduce_bytes", "allreduce_hops", "cpu" };
    static const int term[] = { CF_FIXED, CF_WEIGHTS, CF_KV, CF_DECODE, CF_AR_BYTES, CF_AR_HOP, CF_SEQ };
    result a = latsim("cost --model %s --gpu h100 --tp 2 --decode 16 --context 500 --json", model);
    result b = latsim("cost --model %s --gpu h100 --tp 2 --weights fp8 --decode 16 --context 500 --json", model);
    cr_assert(a.rc == 0 && b.rc == 0, "%s%s", a.err, b.err);
    cr_assert(strstr(b.out, source), "%s", b.out);
    json_t *ja = json_loads(a.out, 0, NULL), *jb = json_loads(b.out, 0, NULL);
    cr_assert(ja && jb);
    gpu_spec h100;
    model_spec m;
    tsim_catalog("h100", model, &h100, &m);
    double tb[CF_NTERMS], t8[CF_NTERMS];
    cprior_learned_terms(&h100, "vllm", &m, "bf16", tb);
    cprior_learned_terms(&h100, "vllm", &m, "fp8", t8);
    cr_expect(t8[CF_DECODE] != tb[CF_DECODE], "the dtype changes the compute term");
    for (size_t k = 0; k < sizeof part / sizeof part[0]; k++) {
        double pb = json_number_value(json_object_get(json_object_get(ja, "parts"), part[k]));
        double p8 = json_number_value(json_object_get(json_object_get(jb, "parts"), part[k]));
        double want = pb * t8[term[k]] / tb[term[k]] * (term[k] == CF_WEIGHTS ? 0.5 : 1);
        cr_expect(fabs(p8 - want) <= 1e-9 * fmax(1, fabs(want)), "%s %s: %.12g in fp8, %.12g in bf16", model, part[k], p8, pb);
    }
    json_decref(ja);
    json_decref(jb);
    result_free(&a);
    result_free(&b);
}

/* The fitted model predicts a TP degree it was not fitted on (marked interpolated)
 * within 1 % of the generating model, flags a degree outside the measured range and
 * refuses one far outside it. */
Test(calib_cli, cost_fitted_interpolates_unseen_tp)
{
    char csv[256];
    const int tps[] = { 1, 2, 8 };
    write_known_steps("known.csv", tps, 3, 0, csv, sizeof csv);
    result r = latsim("calib import steps '%s'", csv);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    result_free(&r);
    r = latsim("calib fit --model llama-3-8b --gpu h100");
    cr_assert_eq(r.rc, 0, "%s", r.err);
    result_free(&r);

    sqlite3 *h = NULL;
    char err[256];
    cr_assert_eq(store_open(":memory:", &h, err, sizeof err), 0);
    cfitted m = { 0 };
    cr_assert_eq(catalog_model(h, "llama-3-8b", &m.model, err, sizeof err), 0);
    store_close(h);
    m.weight_bytes = m.kv_bytes = 2;
    memcpy(m.c, KNOWN, sizeof KNOWN);
    cost_step s = { .prefill_tokens = 1000, .prefill_pairs = 1000.0 * 1001 / 2, .prefill_seqs = 1,
                    .decode_seqs = 16, .kv_tokens = 16 * 501 };
    double truth = cfitted_step_ms(&m, 4, &s, NULL);

    r = latsim("cost --model llama-3-8b --gpu h100 --tp 4 --prefill 1000 --decode 16 --context 500 --cost fitted");
    cr_assert_eq(r.rc, 0, "%s", r.err);
    cr_assert(strstr(r.out, "interpolated"), "%s", r.out);
    double ms = atof(r.out + strlen("step_ms "));
    cr_assert(fabs(ms - truth) < 0.01 * truth, "predicted %g, truth %g", ms, truth);
    result_free(&r);

    r = latsim("cost --model llama-3-8b --gpu h100 --tp 4 --prefill 1000 --decode 16 --context 500 --json");
    cr_assert_eq(r.rc, 0, "%s", r.err);
    cr_assert(strncmp(r.out, "{\"step_ms\": ", 12) == 0, "%s", r.out);
    cr_assert(strstr(r.out, ", \"cost_model\": {\"kind\": \"fitted\", \"id\": 1, \"source\": \"steps-csv\", \"mape\": "), "%s", r.out);
    cr_assert(strstr(r.out, "}, \"parts\": {\"fixed\": "), "%s", r.out);
    cr_assert(fabs(atof(r.out + 12) - truth) < 0.01 * truth);
    result_free(&r);

    r = latsim("cost --model llama-3-8b --gpu h100 --tp 16 --decode 16 --context 500 --cost fitted");
    cr_assert_eq(r.rc, 0, "%s", r.err);
    cr_assert(strstr(r.out, "extrapolated"), "%s", r.out);
    cr_assert(strstr(r.err, "extrapolated"), "%s", r.err);
    result_free(&r);

    r = latsim("cost --model llama-3-8b --gpu h100 --tp 32 --decode 16 --context 500 --cost fitted");
    cr_assert_eq(r.rc, 2, "%s", r.out);
    cr_assert_eq(lines(r.err), 1, "%s", r.err);
    cr_assert(strstr(r.err, "tp 32 is far outside the measured tp 1,2,8"), "%s", r.err);
    result_free(&r);

    /* auto falls back to the learned model where nothing is stored for the TP. */
    r = latsim("cost --model llama-3-8b --gpu h100 --tp 32 --decode 16 --context 500 --json");
    cr_assert_eq(r.rc, 0, "%s", r.err);
    cr_assert(strstr(r.out, "\"cost_model\": {\"kind\": \"learned\", \"id\": null, \"source\": \"learned"), "%s", r.out);
    result_free(&r);

    /* A model measured on H100 carried to A100 by the learned per-term ratios is marked extrapolated. */
    r = latsim("cost --model llama-3-8b --gpu a100 --tp 2 --decode 16 --context 500");
    cr_assert_eq(r.rc, 0, "%s", r.err);
    cr_assert(strstr(r.out, "fitted model 1, steps-csv, carried from h100 by the learned model's per-term ratios"), "%s", r.out);
    cr_assert(strstr(r.out, "extrapolated"), "%s", r.out);
    result_free(&r);
    /* By hand: each term's part on A100 is its part on H100 x the learned structure's
     * term there / here (cprior_learned_terms), the step's features being the same. */
    {
        static const char *const part[] = { "fixed", "weights", "kv", "decode", "allreduce_bytes", "allreduce_hops", "cpu" };
        static const int term[] = { CF_FIXED, CF_WEIGHTS, CF_KV, CF_DECODE, CF_AR_BYTES, CF_AR_HOP, CF_SEQ };
        result a = latsim("cost --model llama-3-8b --gpu h100 --tp 2 --decode 16 --context 500 --json");
        result b = latsim("cost --model llama-3-8b --gpu a100 --tp 2 --decode 16 --context 500 --json");
        cr_assert(a.rc == 0 && b.rc == 0, "%s%s", a.err, b.err);
        json_t *ja = json_loads(a.out, 0, NULL), *jb = json_loads(b.out, 0, NULL);
        cr_assert(ja && jb);
        sqlite3 *cat;
        char e2[256];
        gpu_spec h100, a100;
        model_spec m;
        cr_assert_eq(sqlite3_open(":memory:", &cat), SQLITE_OK);
        cr_assert_eq(catalog_init(cat, e2, sizeof e2), 0, "%s", e2);
        cr_assert_eq(catalog_gpu(cat, "h100", &h100, e2, sizeof e2), 0, "%s", e2);
        cr_assert_eq(catalog_gpu(cat, "a100", &a100, e2, sizeof e2), 0, "%s", e2);
        cr_assert_eq(catalog_model(cat, "llama-3-8b", &m, e2, sizeof e2), 0, "%s", e2);
        sqlite3_close(cat);
        double th[CF_NTERMS], ta[CF_NTERMS];
        cprior_learned_terms(&h100, NULL, &m, "bf16", th);
        cprior_learned_terms(&a100, NULL, &m, "bf16", ta);
        for (size_t k = 0; k < sizeof part / sizeof part[0]; k++) {
            double ph = json_number_value(json_object_get(json_object_get(ja, "parts"), part[k]));
            double pa = json_number_value(json_object_get(json_object_get(jb, "parts"), part[k]));
            double want = ph * ta[term[k]] / th[term[k]];
            cr_expect(fabs(pa - want) <= 1e-9 * fmax(1, fabs(want)), "%s: %.12g on a100, %.12g x %.6g on h100",
                      part[k], pa, ph, ta[term[k]] / th[term[k]]);
        }
        /* Not the datasheet ratio: the weights term moves by more than the bandwidths' 3350/2039. */
        double rw = ta[CF_WEIGHTS] / th[CF_WEIGHTS];
        cr_expect(fabs(rw - 3350.0 / 2039) > 1e-3, "weights ratio %g", rw);
        json_decref(ja);
        json_decref(jb);
        result_free(&a);
        result_free(&b);
    }

    /* Carried to fp8 weights on the same GPU by the learned dtype terms: the compute terms x the
     * bf16 peak / (the fp8 peak x lowp_eff), the weights read halved (1 byte per weight, not 2),
     * the rest as measured; marked carried (extrapolated), after every model in bf16. */
    expect_fp8_carry("llama-3-8b", "steps-csv, carried from bf16 to fp8 weights");
    result t = latsim("cost --model llama-3-8b --gpu h100 --tp 2 --weights fp8 --decode 16 --context 500");
    cr_assert(t.rc == 0 && strstr(t.out, "extrapolated") && strstr(t.out, "lowp_eff"), "%s%s", t.out, t.err);
    result_free(&t);
    /* Another model in another precision (llama-3-70b in fp8, nothing of it stored): the 8B's bf16
     * fit carried by the learned model and dtype terms at once; the same as carried in bf16, each
     * part x the 70B's fp8 / bf16 learned term (the weights read halved). */
    expect_fp8_carry("llama-3-70b", "carried from llama-3-8b in bf16 by its normalised terms");
}

Test(calib_cli, cost_bad_input)
{
    result r = latsim("cost --model llama-3-8b --gpu h100 --tp 3 --prefill 10");
    cr_assert_eq(r.rc, 2);
    cr_assert_eq(lines(r.err), 1, "%s", r.err);
    cr_assert(strstr(r.err, "--tp 3 does not divide the 32 attention heads"), "%s", r.err);
    result_free(&r);
    r = latsim("cost --model llama-3-8b --gpu h100 --tp 1 --decode 4");
    cr_assert_eq(r.rc, 2);
    cr_assert(strstr(r.err, "--decode needs --context"), "%s", r.err);
    result_free(&r);
    r = latsim("cost --model llama-3-8b --gpu h100 --tp 1 --prefill 10 --cost-id 7");
    cr_assert_eq(r.rc, 2);
    cr_assert_eq(lines(r.err), 1, "%s", r.err);
    result_free(&r);
    r = latsim("cost --model llama-3-8b --gpu h100 --tp 1 --prefill 10 --cost magic");
    cr_assert_eq(r.rc, 2);
    cr_assert(strstr(r.err, "unknown kind 'magic'"), "%s", r.err);
    cr_expect(strstr(r.err, "(valid: auto, fitted, profile, learned, roofline)"), "the rows of calib/ccost.c: %s", r.err);
    result_free(&r);
}

/* ---- cost = profile: the Vidur A100 profile of Llama-3-8B ------------------------- */

/* Sums of the per-layer operator medians (x layers) plus the embedding, read
 * straight from the CSV, one per data row with num_tensor_parallel_workers == TP. */
static size_t vidur_sums(const char *path, int tp, int layers, double *tok, double *sum, size_t cap)
{
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f, "%s", path);
    char line[16384];
    cr_assert_not_null(fgets(line, sizeof line, f));
    char *cols[128];
    int nc = 0;
    static char hdr[16384];
    strcpy(hdr, line);
    for (char *p = strtok(hdr, ",\n"); p && nc < 128; p = strtok(NULL, ",\n")) cols[nc++] = p;
    size_t n = 0;
    while (fgets(line, sizeof line, f) && n < cap) {
        double v[128];
        int k = 0;
        for (char *p = strtok(line, ",\n"); p && k < 128; p = strtok(NULL, ",\n")) v[k++] = atof(p);
        double s = 0, t = 0;
        int rowtp = 0;
        for (int c = 0; c < k && c < nc; c++) {
            size_t L = strlen(cols[c]);
            if (!strcmp(cols[c], "num_tokens")) t = v[c];
            else if (!strcmp(cols[c], "num_tensor_parallel_workers")) rowtp = (int)v[c];
            else if (L > 7 && !strcmp(cols[c] + L - 7, ".median"))
                s += strncmp(cols[c], "time_stats.emb.", 15) == 0 ? v[c] : layers * v[c];
        }
        if (rowtp == tp) { tok[n] = t; sum[n] = s; n++; }
    }
    fclose(f);
    return n;
}

Test(calib_cli, vidur_profile_reproduces_operator_sums_and_is_monotone)
{
    sqlite3 *h = NULL;
    char err[512];
    cr_assert_eq(store_open(db, &h, err, sizeof err), 0, "%s", err);
    cr_assert_eq(cdb_init(h, err, sizeof err), 0, "%s", err);
    cr_assert_eq(cdb_begin(h, err, sizeof err), 0);
    cimp_opts o = { .model = "llama-3-8b", .gpu = "a100", .tool = "test" };
    long n = 0;
    cr_assert_eq(cimp_vidur(h, VIDUR, &o, &n, err, sizeof err), 0, "%s", err);
    cprofile p;
    cr_assert_eq(cprofile_build(h, "llama-3-8b", "a100", 1, "test", &p, err, sizeof err), 0, "%s", err);
    cr_assert_eq(cdb_commit(h, err, sizeof err), 0);

    static double tok[600], sum[600];
    size_t m = vidur_sums(VIDUR "/compute/a100/meta-llama/Meta-Llama-3-8B/mlp.csv", 1, p.model.layers, tok, sum, 600);
    cr_assert_eq(m, 456);
    /* At every measured token count the linear + embedding parts are the profile's own
     * sum within 2 % (duplicate rows at one count are averaged). */
    for (size_t i = 0; i < m; i++) {
        cost_step s = { .prefill_tokens = (int64_t)tok[i], .prefill_pairs = 1, .prefill_seqs = 1 };
        double parts[CP_NPARTS];
        cprofile_step_ms(&p, &s, parts, NULL);
        double got = parts[CP_LINEAR] + parts[CP_EMB];
        cr_assert(fabs(got - sum[i]) <= 0.02 * sum[i], "%g tokens: %g ms, profile sum %g", tok[i], got, sum[i]);
    }
    /* Between measured points each curve stays monotone (Steffen). */
    const cp_curve *cv[2] = { &p.lin, &p.emb };
    for (int c = 0; c < 2; c++) {
        cr_assert_gt(cv[c]->n, 400);
        for (size_t i = 0; i + 1 < cv[c]->n; i++) {
            double a = cv[c]->x[i], b = cv[c]->x[i + 1], ya = cv[c]->y[i], yb = cv[c]->y[i + 1];
            double prev = ya;
            for (int k = 1; k <= 8; k++) {
                double y = cp_curve_eval(cv[c], a + (b - a) * k / 9.0, NULL);
                cr_assert(y >= fmin(ya, yb) - 1e-12 && y <= fmax(ya, yb) + 1e-12, "curve %d at %g", c, a + (b - a) * k / 9.0);
                cr_assert(yb >= ya ? y >= prev - 1e-12 : y <= prev + 1e-12, "curve %d not monotone in [%g, %g]", c, a, b);
                prev = y;
            }
        }
    }
    /* Stored with its measurements: the profile loads back identically. */
    cprofile q;
    cr_assert_eq(cprofile_load(h, p.fit.id, &q, err, sizeof err), 0, "%s", err);
    cost_step s = { .prefill_tokens = 3000, .prefill_pairs = 3000.0 * 3001 / 2, .prefill_seqs = 1,
                    .decode_seqs = 40, .kv_tokens = 40 * 2001 };
    cr_assert_eq(cprofile_step_ms(&p, &s, NULL, NULL), cprofile_step_ms(&q, &s, NULL, NULL));
    cr_assert(isfinite(p.fit.mape) && p.fit.mape < 5, "cv mape %g", p.fit.mape);
    cprofile_free(&p);
    cprofile_free(&q);
    store_close(h);
}

/* ---- simulations use the calibrated models -------------------------------------------- */

/* A number after KEY in TEXT (NAN when absent). */
static double json_num_after(const char *text, const char *key)
{
    const char *p = strstr(text, key);
    return p ? atof(p + strlen(key)) : NAN;
}

/* Measure (a steps CSV), fit, simulate: with cost = auto (the default) the pool uses
 * the fitted model, says so in its JSON, and a lone request's TTFT is the fitted
 * model's prefill step, as latsim cost predicts it. */
Test(calib_cli, simulation_uses_fitted_model_and_reports_it)
{
    char csv[256], ini[256];
    const int tps[] = { 1, 2, 4, 8 };
    write_known_steps("known.csv", tps, 4, 0, csv, sizeof csv);
    result r = latsim("calib import steps '%s'", csv);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    result_free(&r);
    r = latsim("calib fit --model llama-3-8b --gpu h100");
    cr_assert_eq(r.rc, 0, "%s", r.err);
    result_free(&r);
    write_file("s.ini", "[sim]\nrequests = 3\nwarmup = 0\n[workload]\narrival = constant\nrate = 0.001\n"
               "prompt_tokens = const(1000)\noutput_tokens = const(2)\n"
               "[pool chat]\nkind = llm\nmodel = llama-3-8b\ngpu = h100\ntp = 2\n", ini, sizeof ini);

    r = latsim("cost --model llama-3-8b --gpu h100 --tp 2 --prefill 1000 --json");
    cr_assert_eq(r.rc, 0, "%s", r.err);
    double step = json_num_after(r.out, "{\"step_ms\": ");
    result_free(&r);

    r = latsim("run '%s' --json --no-store", ini);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    cr_assert(strstr(r.out, "\"cost_model\": {\"kind\": \"fitted\", \"id\": 1, \"source\": \"steps-csv\", \"mape\": "), "%s", r.out);
    cr_assert(strstr(r.out, "\"extrapolated\": false}"), "%s", r.out);
    double ttft = json_num_after(strstr(r.out, "\"ttft\""), "\"mean\": ");
    /* The JSON report prints 6 significant digits. */
    cr_assert(fabs(ttft - step) < 1e-5 * step, "ttft %.9f vs step %.9f", ttft, step);
    result_free(&r);

    /* The table says it too, and the database keeps it with the run. */
    r = latsim("run '%s'", ini);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    cr_assert(strstr(r.out, "cost_model           fitted 1 (steps-csv, cv_mape "), "%s", r.out);
    result_free(&r);
    cr_assert_eq(query("SELECT value FROM run_stats WHERE scope = 'chat' AND metric = 'cost_model.id'"), 1);

    /* cost = roofline still there; cost = profile without a stored profile is bad input. */
    r = latsim("run '%s' --json --no-store --set 'pool chat.cost=roofline'", ini);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    cr_assert(strstr(r.out, "\"cost_model\": {\"kind\": \"roofline\", \"id\": null, \"source\": \"datasheet\", \"mape\": null, \"extrapolated\": false}"), "%s", r.out);
    result_free(&r);
    r = latsim("run '%s' --json --no-store --set 'pool chat.cost=profile'", ini);
    cr_assert_eq(r.rc, 2, "%s", r.out);
    cr_assert_eq(lines(r.err), 1, "%s", r.err);
    cr_assert(strstr(r.err, "[pool chat] cost: no profile model stored for llama-3-8b"), "%s", r.err);
    result_free(&r);
    /* cost_id picks a model; one of another LLM model is refused. */
    r = latsim("run '%s' --json --no-store --set 'pool chat.cost=fitted' --set 'pool chat.cost_id=1'", ini);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    result_free(&r);
    r = latsim("run '%s' --json --no-store --set 'pool chat.cost=fitted' --set 'pool chat.cost_id=9'", ini);
    cr_assert_eq(r.rc, 2, "%s", r.out);
    cr_assert(strstr(r.err, "[pool chat] cost_id: no calibrated model with id 9"), "%s", r.err);
    result_free(&r);
}

/* cost_id naming a model that cannot exist (no database, or one without any
 * calibration) says so instead of SQLite's "no such table", at the key's own line;
 * cost = fitted without a model names the cost key's line, not the [pool] header. */
Test(calib_cli, scenario_cost_id_without_calibration)
{
    char ini[256];
    write_file("s.ini", "[sim]\nrequests = 3\nwarmup = 0\n[workload]\narrival = constant\nrate = 0.001\n"
               "prompt_tokens = const(1000)\noutput_tokens = const(2)\n"
               "[pool chat]\nkind = llm\nmodel = llama-3-8b\ngpu = h100\ntp = 2\ncost = fitted\ncost_id = 5\n",
               ini, sizeof ini);
    result r = latsim("run '%s' --no-store", ini);
    cr_assert_eq(r.rc, 2, "%s", r.out);
    cr_assert_eq(lines(r.err), 1, "%s", r.err);
    cr_assert(strstr(r.err, "s.ini:15: [pool chat] cost_id: no stored model 5 (no calibration database"), "%s", r.err);
    cr_assert(!strstr(r.err, "no such table"), "%s", r.err);
    result_free(&r);
    cr_assert_neq(access(db, F_OK), 0, "the run created %s", db);

    /* A latsim database without calibration tables (a catalog entry only). */
    r = latsim("catalog add tests/data/bloom-176b.ini");
    cr_assert_eq(r.rc, 0, "%s", r.err);
    result_free(&r);
    r = latsim("run '%s' --no-store", ini);
    cr_assert_eq(r.rc, 2, "%s", r.out);
    cr_assert_eq(lines(r.err), 1, "%s", r.err);
    char want[256];
    snprintf(want, sizeof want, "s.ini:15: [pool chat] cost_id: no stored model 5 (no calibration in DB ");
    cr_assert(strstr(r.err, want), "%s", r.err);
    cr_assert(strstr(r.err, "c.db: run latsim calib import"), "%s", r.err);
    result_free(&r);

    r = latsim("run '%s' --no-store --set 'pool chat.cost_id=0'", ini);
    cr_assert_eq(r.rc, 2, "%s", r.out);
    cr_assert(strstr(r.err, "s.ini:14: [pool chat] cost: no fitted model stored for llama-3-8b"), "%s", r.err);
    result_free(&r);
}

/* The read-only commands on a latsim database without calibration tables: list
 * shows none, show says there is no calibration, export writes the header, cost
 * uses the learned model, and the file is unchanged byte for byte.  Without any file,
 * cost still works (built-in catalog, learned model) and creates none. */
Test(calib_cli, read_only_commands_leave_database_alone)
{
    result r = latsim("cost --model llama-3-8b --gpu h100 --tp 1 --decode 8 --context 100");
    cr_assert_eq(r.rc, 0, "%s", r.err);
    cr_assert(strstr(r.out, "(learned, learned"), "%s", r.out);
    result_free(&r);
    cr_assert_neq(access(db, F_OK), 0, "cost created %s", db);
    r = latsim("calib list");
    cr_assert_eq(r.rc, 2);
    cr_assert(strstr(r.err, "no such database"), "%s", r.err);
    result_free(&r);
    cr_assert_neq(access(db, F_OK), 0, "calib list created %s", db);

    r = latsim("catalog add tests/data/bloom-176b.ini");
    cr_assert_eq(r.rc, 0, "%s", r.err);
    result_free(&r);
    char *before = slurp_or_fail(db, NULL);
    FILE *f = fopen(db, "rb");
    cr_assert_not_null(f);
    fseek(f, 0, SEEK_END);
    long n0 = ftell(f);
    fclose(f);
    r = latsim("calib list");
    cr_assert_eq(r.rc, 0, "%s", r.err);
    cr_assert(strstr(r.out, "(none: latsim calib fit ...)"), "%s", r.out);
    result_free(&r);
    r = latsim("calib show 1");
    cr_assert_eq(r.rc, 2);
    cr_assert_eq(lines(r.err), 1, "%s", r.err);
    cr_assert(strstr(r.err, "no stored model 1 (no calibration in DB "), "%s", r.err);
    result_free(&r);
    r = latsim("calib export -");
    cr_assert_eq(r.rc, 0, "%s", r.err);
    cr_assert_eq(lines(r.out), 1, "%s", r.out);
    cr_assert(!strncmp(r.out, "source,what,", 12), "%s", r.out);
    result_free(&r);
    r = latsim("cost --model bloom-176b --gpu a100 --tp 8 --prefill 128");
    cr_assert_eq(r.rc, 0, "%s", r.err);
    cr_assert(strstr(r.out, "(learned, learned"), "%s", r.out);
    result_free(&r);
    f = fopen(db, "rb");
    cr_assert_not_null(f);
    fseek(f, 0, SEEK_END);
    long n1 = ftell(f);
    fclose(f);
    char *after = slurp_or_fail(db, NULL);
    cr_assert(n0 == n1 && memcmp(before, after, (size_t)n0) == 0, "%s was changed", db);
    free(before);
    free(after);
}

/* ---- microbenchmarks -------------------------------------------------------------------- */

/* Without a CUDA build, or without a GPU, calib gpu says so in one line and exits 2.
 * .ci/run builds build/release-cuda/latsim where nvcc exists (make CUDA=1); on a
 * machine with a GPU that binary measures instead (tiny lists keep it short). */
Test(calib_cli, gpu_without_cuda_or_gpu)
{
    result r = latsim("calib gpu --model llama-3-8b");
    cr_assert_eq(r.rc, 2);
    cr_assert_eq(lines(r.err), 1, "%s", r.err);
    cr_assert(strstr(r.err, "latsim: calib gpu: this latsim was built without CUDA"), "%s", r.err);
    cr_assert_eq(r.out[0], '\0');
    result_free(&r);
    if (access("build/release-cuda/latsim", X_OK) != 0) return;
    char cmd[512];
    snprintf(cmd, sizeof cmd, "build/release-cuda/latsim calib gpu --model llama-3-8b --tp 8 --tokens 1 --batches 1 "
             "--contexts 128 --prompts 128 --repeats 1 --db '%s' >'%s/o' 2>'%s/e'", db, dir, dir);
    int st = system(cmd);
    char path[128];
    snprintf(path, sizeof path, "%s/e", dir);
    char *err = slurp_or_fail(path, NULL);
    cr_assert(WIFEXITED(st));
    if (WEXITSTATUS(st) == 2) {
        cr_assert_eq(lines(err), 1, "%s", err);
        cr_assert(strstr(err, "latsim: calib gpu: no CUDA GPU found"), "%s", err);
    } else {
        cr_assert_eq(WEXITSTATUS(st), 0, "%s", err);
        cr_assert_gt(query("SELECT count(*) FROM calib_meas WHERE source = 'cuda'"), 4);
    }
    free(err);
}

/* Measure (OpenBLAS GEMMs, attention, bandwidth, shared-memory all-reduce on this
 * CPU), fit (a profile), simulate (gpu = cpu, cost = profile): the whole path on
 * any machine.  Then the measurements survive export and import.  Seven token
 * counts: with the default four (1, 4, 16, 64) the held-out interpolation error of
 * the operator sums on a loaded machine can pass the 50 % limit of a usable model
 * (CDB_MAPE_LIMIT), and the profile is then refused. */
Test(calib_cli, cpu_measure_fit_simulate)
{
    result r = latsim("calib cpu --model llama-3-8b --tp 8 --threads 1 --repeats 3 --tokens 1,2,4,8,16,32,64");
    cr_assert_eq(r.rc, 0, "%s", r.err);
    cr_assert(strstr(r.out, "stored 45 measurements of llama-3-8b (tp 8) on cpu"), "%s", r.out);
    result_free(&r);
    cr_assert_eq(query("SELECT count(*) FROM calib_meas WHERE source = 'cpu' AND what = 'op' AND time_ms > 0"), 28);
    cr_assert_eq(query("SELECT count(*) FROM gpus WHERE name = 'cpu' AND bf16_tflops > 0 AND mem_bw_gbs > 0"), 1);
    r = latsim("calib fit profile --model llama-3-8b --gpu cpu --tp 8");
    cr_assert_eq(r.rc, 0, "%s", r.err);
    cr_assert(strstr(r.out, "source         cpu, "), "%s", r.out);
    result_free(&r);
    char ini[256];
    write_file("s.ini", "[sim]\nrequests = 3\nwarmup = 0\n[workload]\narrival = constant\nrate = 0.0001\n"
               "prompt_tokens = const(32)\noutput_tokens = const(3)\n"
               "[pool chat]\nkind = llm\nmodel = llama-3-8b\ngpu = cpu\ntp = 8\ncost = profile\n", ini, sizeof ini);
    r = latsim("run '%s' --json --no-store", ini);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    cr_assert(strstr(r.out, "\"cost_model\": {\"kind\": \"profile\", \"id\": 1, \"source\": \"cpu\", \"mape\": "), "%s", r.out);
    result_free(&r);

    char csv[256];
    snprintf(csv, sizeof csv, "%s/cpu.csv", dir);
    r = latsim("calib export '%s' --source cpu", csv);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    cr_assert(strstr(r.out, "exported 45 measurements"), "%s", r.out);
    result_free(&r);
    r = latsim("calib import meas '%s'", csv);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    result_free(&r);
    cr_assert_eq(query("SELECT count(*) FROM calib_meas a JOIN calib_meas b ON b.id = a.id + 45 AND"
                       " a.time_ms = b.time_ms AND a.what = b.what AND a.name = b.name AND a.device = b.device"), 45);
}

/* ---- network hops ------------------------------------------------------------------------ */

#include <signal.h>
#include "cnet.h"

/* calib net starts its own echo server on loopback, times round trips, fits
 * base + bytes / bandwidth and stores it all; the codec timings come with it. */
Test(calib_cli, net_loopback)
{
    result r = latsim("calib net --sizes 64,1024,16384,65536 --repeats 20");
    cr_assert_eq(r.rc, 0, "%s", r.err);
    cr_assert(strstr(r.out, "round trips to loopback (127.0.0.1:"), "%s", r.out);
    cr_assert(strstr(r.out, "fit: latency = "), "%s", r.out);
    cr_assert(strstr(r.out, "chat request (4096-character prompt): JSON "), "%s", r.out);
    result_free(&r);
    cr_assert_eq(query("SELECT count(*) FROM calib_meas WHERE source = 'net' AND what = 'rtt' AND time_ms > 0"), 12);
    cr_assert_eq(query("SELECT count(*) FROM calib_meas WHERE source = 'net' AND what IN ('encode', 'decode')"), 4);
    cr_assert_eq(query("SELECT count(*) FROM calib_fits WHERE kind = 'net' AND gpu = 'loopback'"), 1);
    cr_assert_geq(query("SELECT value FROM calib_coefs WHERE name = 'base_ms'"), 0);
    cr_assert_eq(query("SELECT count(*) FROM calib_fit_meas WHERE fit_id = 1"), 4);
}

/* A port nobody listens on: one line naming it, exit 2, nothing stored. */
Test(calib_cli, net_closed_port)
{
    char err[256];
    int port, fd = cnet_listen("127.0.0.1", 0, &port, err, sizeof err);
    cr_assert_geq(fd, 0, "%s", err);
    close(fd);   /* now closed */
    result r = latsim("calib net --target 127.0.0.1:%d", port);
    cr_assert_eq(r.rc, 2, "%s", r.out);
    cr_assert_eq(lines(r.err), 1, "%s", r.err);
    char want[128];
    snprintf(want, sizeof want, "latsim: calib net: cannot connect to 127.0.0.1:%d: Connection refused", port);
    cr_assert(strstr(r.err, want), "%s", r.err);
    result_free(&r);
    cr_assert_neq(access(db, F_OK), 0, "nothing stored: no database created");
}

/* latsim echo serves calib net --target. */
Test(calib_cli, net_to_echo_server)
{
    int fds[2];
    cr_assert_eq(pipe(fds), 0);
    pid_t pid = fork();
    cr_assert_neq(pid, -1);
    if (pid == 0) {
        dup2(fds[1], 1);
        close(fds[0]);
        close(fds[1]);
        execl(LATSIM, "latsim", "echo", "--port", "0", (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    char line[128] = "";
    FILE *f = fdopen(fds[0], "r");
    cr_assert_not_null(fgets(line, sizeof line, f));
    const char *colon = strrchr(line, ':');
    cr_assert_not_null(colon, "%s", line);
    int port = atoi(colon + 1);
    result r = latsim("calib net --target 127.0.0.1:%d --sizes 64,4096,65536 --repeats 10", port);
    kill(pid, SIGTERM);
    waitpid(pid, NULL, 0);
    fclose(f);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    char want[64];
    snprintf(want, sizeof want, "round trips to 127.0.0.1:%d", port);
    cr_assert(strstr(r.out, want), "%s", r.out);
    result_free(&r);
}

/* Vidur publishes attention timings for the A100 only: an H100 profile carries them
 * over by datasheet ratios (prefill by peak FLOP/s, decode by bandwidth), says so,
 * and is marked extrapolated wherever it is used. */
Test(calib_cli, profile_carries_attention_across_gpus)
{
    result r = latsim("calib import vidur '%s' --model llama-2-7b", VIDUR);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    result_free(&r);
    r = latsim("calib fit profile --model llama-2-7b --gpu h100 --tp 2");
    cr_assert_eq(r.rc, 0, "%s", r.err);
    cr_assert(strstr(r.out, "carried from a100 by datasheet ratios 0.315 (compute) 0.609 (memory)"), "%s", r.out);
    result_free(&r);
    r = latsim("cost --model llama-2-7b --gpu h100 --tp 2 --decode 8 --context 1000 --cost profile");
    cr_assert_eq(r.rc, 0, "%s", r.err);
    cr_assert(strstr(r.out, "(profile model 1, vidur, cv_mape "), "%s", r.out);
    cr_assert(strstr(r.out, "extrapolated)"), "%s", r.out);
    result_free(&r);
}

/* docs/calibration.md's per-phase table of the BLOOM-176B fit is what the
 * program gives: each GPU's 26 steps priced by `latsim cost --json` with the
 * fitted model and with the roofline, the mean absolute percentage error per
 * phase (and the fitted model's largest) printed as the table prints them,
 * must be the table's row for that GPU. */
Test(calib_cli, bloom_phase_errors_are_the_documented_ones, .timeout = 300)
{
    result r = latsim("catalog add tests/data/bloom-176b.ini");
    cr_assert_eq(r.rc, 0, "%s", r.err);
    result_free(&r);
    r = latsim("calib import steps " STEPS);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    result_free(&r);
    static const char *gpus[] = { "a100", "h100" }, *names[] = { "A100", "H100" };
    for (int g = 0; g < 2; g++) {
        r = latsim("calib fit --model bloom-176b --gpu %s", gpus[g]);
        cr_assert_eq(r.rc, 0, "%s", r.err);
        result_free(&r);
    }
    FILE *f = fopen(STEPS, "r");
    cr_assert_not_null(f);
    /* [gpu][phase: 0 prefill, 1 decode][kind: 0 fitted, 1 roofline]: sum of |error| %, max, count */
    double sum[2][2][2] = { { { 0 } } }, max[2][2][2] = { { { 0 } } }, logr[2][2] = { { 0 } };
    int n[2][2] = { { 0 } };
    char line[512];
    cr_assert_not_null(fgets(line, sizeof line, f));   /* the header */
    while (fgets(line, sizeof line, f)) {
        char gpu[16], phase[16];
        int tp, batch, tokens;
        double ms;
        cr_assert_eq(sscanf(line, "bloom-176b,%15[^,],%d,%15[^,],%d,%d,%lf", gpu, &tp, phase, &batch, &tokens, &ms), 6, "%s", line);
        int gi = !strcmp(gpu, "h100"), ph = !strcmp(phase, "decode");
        for (int k = 0; k < 2; k++) {
            char args[200];
            if (ph) snprintf(args, sizeof args, "--decode %d --context %d", batch, tokens);
            else snprintf(args, sizeof args, "--prefill %d --prefill-batch %d", tokens, batch);
            r = latsim("cost --model bloom-176b --gpu %s --tp %d %s --cost %s --json", gpu, tp, args, k ? "roofline" : "fitted");
            cr_assert_eq(r.rc, 0, "%s", r.err);
            const char *at = strstr(r.out, "\"step_ms\": ");
            cr_assert_not_null(at, "%s", r.out);
            double pred = strtod(at + 11, NULL), e = 100 * fabs(pred / ms - 1);
            if (k) logr[gi][ph] += log(pred / ms);
            sum[gi][ph][k] += e;
            if (e > max[gi][ph][k]) max[gi][ph][k] = e;
            result_free(&r);
        }
        n[gi][ph]++;
    }
    fclose(f);
    char *page = slurp_or_fail("docs/calibration.md", NULL);
    for (int g = 0; g < 2; g++) {
        cr_assert(n[g][0] > 0 && n[g][1] > 0);
        char row[200];
        snprintf(row, sizeof row, "| %s | %.1f %% (%.0f %%) | %.1f %% (%.1f %%) | %.1f %% / %.1f %% |", names[g],
                 sum[g][0][0] / n[g][0], max[g][0][0], sum[g][1][0] / n[g][1], max[g][1][0], sum[g][0][1] / n[g][0],
                 sum[g][1][1] / n[g][1]);
        cr_expect(strstr(page, row) != NULL, "docs/calibration.md lacks the row %s", row);
    }
    /* The page's opening: the roofline's geometric mean of predicted / measured per GPU and phase. */
    double gm[2][2];
    for (int g = 0; g < 2; g++)
        for (int ph = 0; ph < 2; ph++) gm[g][ph] = exp(logr[g][ph] / n[g][ph]);
    char want[400], flat[4096];
    snprintf(want, sizeof want, "predicts A100 prefill steps %.0f %% too fast and decode steps %.0f %% too fast (H100: %.0f %% "
             "and %.0f %%; geometric means of predicted/measured %.2f, %.2f, %.2f, %.2f)", 100 * (1 - gm[0][0]),
             100 * (1 - gm[0][1]), 100 * (1 - gm[1][0]), 100 * (1 - gm[1][1]), gm[0][0], gm[0][1], gm[1][0], gm[1][1]);
    size_t k = 0;
    for (const char *c = page; *c && k + 1 < sizeof flat && c < page + 2000; c++)
        if (!isspace((unsigned char) *c)) flat[k++] = *c;
        else if (k && flat[k - 1] != ' ') flat[k++] = ' ';
    flat[k] = 0;
    cr_expect(strstr(flat, want) != NULL, "docs/calibration.md's opening does not say: %s", want);
    free(page);
}
