/* test_costtab.c -- Criterion tests of the fast evaluation of calibrated step-time
 * models (calib/ccost.c): a simulation's steps (ccost_step_ms without parts) read a
 * profile's per-token tables and a fitted model's prepared form; with parts every
 * part is evaluated directly.  Both must give the same step time to the last bit,
 * at random steps (inside and beyond the tables, repeated and new token counts),
 * for profiles with and without all-reduces and CPU overheads, on the measured GPU
 * and carried to another one (ratios != 1).
 *
 * The models come from the repository's Vidur slice (tests/data/vidur) and a
 * synthetic steps CSV, in an in-memory database.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <gsl/gsl_rng.h>
#include <sqlite3.h>

#include "core/catalog.h"
#include "ccost.h"
#include "cdb.h"
#include "cfitted.h"
#include "cfitpost.h"
#include "cimport.h"
#include "cprofile.h"
#include "store/store.h"

#define VIDUR "tests/data/vidur"   /* a slice of ../shared/data/profiles/vidur */

static sqlite3 *db;                /* the in-memory store of this test */

/* Imports the Vidur slice (every model: the CPU overheads are CodeLlama's) and
 * builds three profiles: llama-3-8b on a100 at tp 1 (id 1), llama-2-7b on a100
 * at tp 2 (id 2) and on h100 at tp 2 (id 3, attention carried from the a100). */
static void setup(void)
{
    char err[512];
    cr_assert_eq(access(VIDUR, R_OK), 0, "%s not found: run from the repository root", VIDUR);
    cr_assert_eq(store_open(":memory:", &db, err, sizeof err), 0, "%s", err);
    cr_assert_eq(cdb_init(db, err, sizeof err), 0, "%s", err);
    cr_assert_eq(cdb_begin(db, err, sizeof err), 0, "%s", err);
    cimp_opts o = { .tool = "test" };
    long n = 0;
    cr_assert_eq(cimp_vidur(db, VIDUR, &o, &n, err, sizeof err), 0, "%s", err);
    static const struct { const char *model, *gpu; int tp; } P[] = {
        { "llama-3-8b", "a100", 1 }, { "llama-2-7b", "a100", 2 }, { "llama-2-7b", "h100", 2 } };
    for (int i = 0; i < 3; i++) {
        cprofile p;
        cr_assert_eq(cprofile_build(db, P[i].model, P[i].gpu, P[i].tp, "test", &p, err, sizeof err), 0, "%s", err);
        cr_assert_eq(p.fit.id, i + 1);
        cprofile_free(&p);
    }
    cr_assert_eq(cdb_commit(db, err, sizeof err), 0, "%s", err);
}

static void teardown(void)
{
    store_close(db);
    db = NULL;
}

TestSuite(costtab, .init = setup, .fini = teardown);

/* The replica the cost model is resolved for: MODEL on GPU at TP, bf16, default
 * roofline parameters (the fallback). */
static void replica(const char *model, const char *gpu, int tp, cost_model *roof)
{
    char err[256];
    memset(roof, 0, sizeof *roof);
    roof->hw.have_hw = 1;
    cr_assert_eq(catalog_gpu(db, gpu, &roof->hw.gpu, err, sizeof err), 0, "%s", err);
    cr_assert_eq(catalog_model(db, model, &roof->hw.model, err, sizeof err), 0, "%s", err);
    roof->hw.tp = tp;
    roof->hw.weight_bytes = 2;
    roof->hw.kv_bytes = 2;
    snprintf(roof->hw.weights, sizeof roof->hw.weights, "bf16");
    cr_assert_eq(cost_init(roof, "roofline", &cost_roofline_defaults), 0);
}

/* A random step: token counts from a small set (entries reused) or anywhere up to
 * 70 000 (some beyond the 65 536-token table), decodes up to 300 sequences. */
static cost_step random_step(gsl_rng *g)
{
    static const int64_t common[] = { 1, 2, 17, 255, 256, 512, 1000, 4096, 8192 };
    cost_step s = { 0 };
    int shape = (int)gsl_rng_uniform_int(g, 4);   /* 0 prefill, 1 decode, 2 mixed, 3 mixed with a common count */
    if (shape != 1) {
        s.prefill_tokens = shape == 3 ? common[gsl_rng_uniform_int(g, 9)] : 1 + (int64_t)gsl_rng_uniform_int(g, 70000);
        s.prefill_seqs = 1 + (int32_t)gsl_rng_uniform_int(g, s.prefill_tokens < 64 ? (unsigned long)s.prefill_tokens : 64);
        double k = (double)gsl_rng_uniform_int(g, 4000);      /* tokens cached before the chunk */
        s.prefill_pairs = (double)s.prefill_tokens * k + (double)s.prefill_tokens * (s.prefill_tokens + 1.0) / 2.0;
    }
    if (shape != 0) {
        s.decode_seqs = 1 + (int32_t)gsl_rng_uniform_int(g, 300);
        s.kv_tokens = s.decode_seqs * (1 + (int64_t)gsl_rng_uniform_int(g, 8000));
    }
    return s;
}

/* At N random steps the fast evaluation of C equals the direct one bit for bit;
 * returns how many steps had a positive time. */
static int same_to_the_bit(const ccost *c, int n, unsigned long seed)
{
    gsl_rng *g = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(g, seed);
    int positive = 0;
    for (int i = 0; i < n; i++) {
        cost_step s = random_step(g);
        ccost_parts parts;
        double fast = ccost_step_ms(c, &s, NULL, NULL);
        double direct = ccost_step_ms(c, &s, &parts, NULL);
        double again = ccost_step_ms(c, &s, NULL, NULL);     /* now from a filled entry */
        cr_assert(memcmp(&fast, &direct, sizeof fast) == 0 && memcmp(&again, &direct, sizeof again) == 0,
                  "%s model, step %d (prefill %lld tokens %d seqs %.17g pairs, decode %d seqs %lld kv): "
                  "fast %.17g, again %.17g, direct %.17g", ccost_kind_name(c->kind), i,
                  (long long)s.prefill_tokens, s.prefill_seqs, s.prefill_pairs, s.decode_seqs,
                  (long long)s.kv_tokens, fast, again, direct);
        positive += direct > 0;
    }
    /* An empty step is 0 either way. */
    cost_step e = { 0 };
    cr_assert_eq(ccost_step_ms(c, &e, NULL, NULL), 0);
    gsl_rng_free(g);
    return positive;
}

/* Resolves stored model ID (kind KIND when ID is 0) for MODEL on GPU at TP. */
static void resolve(const char *kind, int64_t id, const char *model, const char *gpu, int tp, ccost *c)
{
    char err[512];
    cost_model roof;
    replica(model, gpu, tp, &roof);
    cr_assert_eq(ccost_resolve(db, kind, id, &roof, "bf16", c, err, sizeof err), 0, "%s", err);
    cost_free(&roof);
}

Test(costtab, profile_tables_equal_direct_evaluation)
{
    static const struct { int64_t id; const char *model, *gpu; int tp, carried, ar; } C[] = {
        { 1, "llama-3-8b", "a100", 1, 0, 0 },   /* no all-reduce */
        { 2, "llama-2-7b", "a100", 2, 0, 1 },   /* all-reduces */
        { 2, "llama-2-7b", "h100", 2, 1, 1 },   /* measured on the a100: every ratio != 1 */
        { 3, "llama-2-7b", "h100", 2, 0, 1 },   /* attention carried in the profile itself */
    };
    for (int i = 0; i < 4; i++) {
        ccost c;
        resolve("profile", C[i].id, C[i].model, C[i].gpu, C[i].tp, &c);
        cr_assert_eq(c.kind, CC_PROFILE);
        cr_assert_eq(c.carried, C[i].carried, "case %d", i);
        if (C[i].carried)
            cr_assert(c.r_compute != 1 && c.r_memory != 1 && c.r_link != 1, "case %d: ratios", i);
        cr_assert_gt(c.tab.ntok, 8192, "case %d: no token table", i);
        cr_assert_eq(c.tab.ar != NULL, C[i].ar, "case %d: all-reduce table", i);
        cr_assert_not_null(c.tab.cpu, "case %d: the CPU overheads (CodeLlama's rows) are part of it", i);
        cr_assert_gt(same_to_the_bit(&c, 20000, 11 + (unsigned long)i), 19000, "case %d", i);
        ccost_free(&c);
    }
}

/* Writes a steps CSV of llama-3-8b on a100 at tp 1, 2 and 4 to PATH: a plausible
 * step time with 3 % noise, so that every term can be fitted. */
static void write_steps(const char *path)
{
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f, "cannot write %s", path);
    fprintf(f, "model,gpu,tp,phase,batch_size,tokens,step_ms,source\n");
    gsl_rng *g = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(g, 3);
    static const int tps[] = { 1, 2, 4 }, toks[] = { 128, 512, 2048, 8192 }, batches[] = { 1, 4, 16 };
    static const int dbatch[] = { 1, 8, 32, 128 }, ctxs[] = { 256, 2048 };
    for (int t = 0; t < 3; t++) {
        double tp = tps[t];
        for (int i = 0; i < 4; i++)
            for (int b = 0; b < 3; b++) {
                double tok = (double)batches[b] * toks[i];
                double ms = (5 + 8 / tp + 0.03 * tok / tp + 1e-6 * tok * toks[i] / tp + 0.4 * (tp - 1)) *
                            (1 + 0.03 * (gsl_rng_uniform(g) - 0.5));
                fprintf(f, "llama-3-8b,a100,%d,prefill,%d,%d,%.9g,synthetic\n", tps[t], batches[b], toks[i], ms);
            }
        for (int i = 0; i < 2; i++)
            for (int b = 0; b < 4; b++) {
                double ms = (6 + 8 / tp + 0.02 * dbatch[b] + 2e-5 * dbatch[b] * ctxs[i] / tp + 0.3 * (tp - 1)) *
                            (1 + 0.03 * (gsl_rng_uniform(g) - 0.5));
                fprintf(f, "llama-3-8b,a100,%d,decode,%d,%d,%.9g,synthetic\n", tps[t], dbatch[b], ctxs[i], ms);
            }
    }
    gsl_rng_free(g);
    fclose(f);
}

Test(costtab, fitted_prepared_form_equals_direct_evaluation)
{
    char dir[] = "/tmp/latsim_costtab_XXXXXX", path[64], err[512];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/steps.csv", dir);
    write_steps(path);
    cr_assert_eq(cdb_begin(db, err, sizeof err), 0, "%s", err);
    cimp_opts o = { .tool = "test" };
    long n = 0;
    cr_assert_eq(cimp_steps(db, path, &o, &n, err, sizeof err), 0, "%s", err);
    cr_assert_eq(n, 60);
    cfitted m;
    cr_assert_eq(cfitted_fit(db, "llama-3-8b", "a100", "bf16", "test", 5, 1, &m, err, sizeof err), 0, "%s", err);
    cr_assert_eq(cdb_commit(db, err, sizeof err), 0, "%s", err);
    unlink(path);
    rmdir(dir);
    int nonzero = 0;
    for (int k = 0; k < CF_NTERMS; k++)
        nonzero += m.c[k] != 0;
    cr_assert_geq(nonzero, 5, "too few fitted terms to test with");
    /* Term by term (a model of one term: any difference in it shows in the sum),
     * with ratios != 1, against cfitted_step_ms's parts scaled and summed in order. */
    gsl_rng *g = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(g, 5);
    static const int tps[] = { 1, 2, 3, 6, 8 };
    for (int k = 0; k < CF_NTERMS; k++)
        for (int ti = 0; ti < 5; ti++) {
            int tp = tps[ti];
            cfitted one = m;
            memset(one.c, 0, sizeof one.c);
            one.c[k] = 0.5 + gsl_rng_uniform(g);
            double r[CF_NTERMS];
            for (int j = 0; j < CF_NTERMS; j++)
                r[j] = 0.3 + gsl_rng_uniform(g);
            cfitted_eval e;
            cfitted_eval_init(&one, tp, r, &e);
            for (int i = 0; i < 2000; i++) {
                cost_step s = random_step(g);
                double p[CF_NTERMS], want = 0;
                cfitted_step_ms(&one, tp, &s, p);
                for (int j = 0; j < CF_NTERMS; j++)
                    want += p[j] * r[j];
                double got = cfitted_eval_ms(&e, &s);
                cr_assert(memcmp(&got, &want, sizeof got) == 0, "term %s at tp %d, step %d: %.17g, direct %.17g",
                          cfitted_term_names[k], tp, i, got, want);
            }
        }
    gsl_rng_free(g);
    static const struct { const char *gpu; int tp, carried; } C[] = {
        { "a100", 1, 0 }, { "a100", 2, 0 }, { "a100", 3, 0 },   /* 3: interpolated */
        { "h100", 4, 1 },                                       /* carried: ratios != 1 */
    };
    for (int i = 0; i < 4; i++) {
        ccost c;
        resolve("fitted", m.fit.id, "llama-3-8b", C[i].gpu, C[i].tp, &c);
        cr_assert_eq(c.kind, CC_FITTED);
        cr_assert_eq(c.carried, C[i].carried, "case %d", i);
        cr_assert_gt(same_to_the_bit(&c, 20000, 101 + (unsigned long)i), 19000, "case %d", i);
        ccost_free(&c);
    }
}
