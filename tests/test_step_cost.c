/* test_step_cost.c -- the step description (cost.h: what a step computes) priced
 * by every cost model when a decoding sequence computes more than one token
 * (decode_tokens_per_seq = 2, as speculative verification of one token would):
 * it costs more than one token per sequence, the linear model gives exactly its
 * formula, the roofline's work grows by exactly the extra tokens and pairs, and
 * the fast paths (cost_fast, a fitted model's prepared form, a profile's tables)
 * give the same bits as the direct evaluation.  Also the cost-model table as a
 * registry: the default of `cost` with and without calib's rows. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "ccost.h"
#include "cdb.h"
#include "cfitted.h"
#include "cimport.h"
#include "core/catalog.h"
#include "cprofile.h"
#include "llm/cost.h"
#include "store/store.h"

#define VIDUR "tests/data/vidur"   /* a slice of the Vidur profiles */

static int same_bits(double a, double b) { return memcmp(&a, &b, sizeof a) == 0; }

/* A step of 100 prompt tokens and 4 decoding sequences reading 3000 KV tokens,
 * each computing T tokens. */
static cost_step mixed(int t)
{
    return (cost_step) { .prefill_tokens = 100, .prefill_pairs = 5050, .prefill_seqs = 1,
                         .decode_seqs = 4, .decode_tokens_per_seq = t, .kv_tokens = 3000,
                         .emitted_tokens = 4 * t };
}

static void llama3_8b(sqlite3 *db, const char *gpu, cost_hw *hw)
{
    char err[256];
    memset(hw, 0, sizeof *hw);
    hw->have_hw = 1;
    cr_assert_eq(catalog_gpu(db, gpu, &hw->gpu, err, sizeof err), 0, "%s", err);
    cr_assert_eq(catalog_model(db, "llama-3-8b", &hw->model, err, sizeof err), 0, "%s", err);
    hw->tp = 1;
    hw->weight_bytes = 2;
    hw->kv_bytes = 2;
    snprintf(hw->weights, sizeof hw->weights, "bf16");
}

static sqlite3 *catalog_db(void)
{
    sqlite3 *db = NULL;
    char err[256];
    cr_assert_eq(store_open(":memory:", &db, err, sizeof err), 0, "%s", err);
    return db;
}

Test(step_cost, helpers)
{
    cost_step s = mixed(0);
    cr_expect_eq(cost_step_per_seq(&s), 1, "0 counts as 1");
    cr_expect_eq(cost_step_decode_tokens(&s), 4);
    cr_expect_eq(cost_step_decode_pairs(&s), 3000.0);
    s = mixed(3);
    cr_expect_eq(cost_step_decode_tokens(&s), 12);
    /* Each context C (its 3 new tokens included): 3 C - 3; summed: 3 x 3000 - 4 x 3. */
    cr_expect_eq(cost_step_decode_pairs(&s), 9000.0 - 12.0);
}

Test(step_cost, linear_prices_decode_tokens)
{
    cost_linear c = { .step_base_ms = 1.5, .prefill_ms_per_token = 0.25,
                      .decode_ms_per_seq = 0.5, .kv_ms_per_1k_tokens = 0.125 };
    cost_model m = { 0 };
    cr_assert_eq(cost_init(&m, "linear", &c), 0);
    cost_step one = mixed(1), zero = mixed(0), two = mixed(2);
    /* 1.5 + 0.25 x 100 + 0.5 x 4 x T + 0.125 x 3000 / 1000, exact in binary. */
    cr_expect_eq(cost_step_ms(&m, &one), 28.875);
    cr_expect_eq(cost_step_ms(&m, &zero), 28.875);
    cr_expect_eq(cost_step_ms(&m, &two), 30.875);
    cr_expect_gt(cost_step_ms(&m, &two), cost_step_ms(&m, &one));
    cost_fast f;
    cost_fast_init(&f, &m);
    cr_expect(same_bits(cost_fast_ms(&f, &two), 30.875));
    cost_free(&m);
}

Test(step_cost, roofline_prices_decode_tokens)
{
    sqlite3 *db = catalog_db();
    cost_model m = { 0 };
    cr_assert_eq(cost_init(&m, "roofline", &cost_roofline_defaults), 0);
    llama3_8b(db, "h100", &m.hw);
    store_close(db);
    /* Decodes alone (memory-bound) and with a prompt. */
    for (int k = 0; k < 2; k++) {
        cost_step one = mixed(1), two = mixed(2);
        if (k == 0) one.prefill_tokens = two.prefill_tokens = 0, one.prefill_pairs = two.prefill_pairs = 0,
                    one.prefill_seqs = two.prefill_seqs = 0;
        double f1, b1, f2, b2;
        cost_step_work(&m, &one, &f1, &b1);
        cost_step_work(&m, &two, &f2, &b2);
        const model_spec *md = &m.hw.model;
        /* 4 more tokens through the weights, their pairs (2 x 3000 - 4 - 3000 more), their KV written. */
        double attn = 4.0 * md->layers * md->heads * md->head_dim;
        double kvpt = 2.0 * md->layers * md->kv_heads * md->head_dim * m.hw.kv_bytes;
        cr_expect_float_eq(f2 - f1, 2.0 * md->params * 4 + attn * (3000.0 - 4.0), 1e-6 * f2);
        cr_expect_float_eq(b2 - b1, kvpt * 4, 1e-9 * b2);
        cr_expect_gt(cost_step_ms(&m, &two), cost_step_ms(&m, &one), "case %d", k);
        /* The hot path prices it the same, to the bit. */
        cost_fast f;
        cost_fast_init(&f, &m);
        cr_assert(f.roofline);
        double ff, fb;
        cr_expect(same_bits(cost_fast_ms_work(&f, &two, &ff, &fb), cost_step_ms(&m, &two)));
        cr_expect(same_bits(ff, f2) && same_bits(fb, b2));
        cr_expect(same_bits(cost_fast_ms(&f, &one), cost_step_ms(&m, &one)));
    }
    cost_free(&m);
}

Test(step_cost, fitted_prices_decode_tokens)
{
    sqlite3 *db = catalog_db();
    cost_hw hw;
    llama3_8b(db, "h100", &hw);
    store_close(db);
    cfitted m;
    memset(&m, 0, sizeof m);
    m.model = hw.model;
    m.weight_bytes = 2;
    m.kv_bytes = 2;
    for (int k = 0; k < CF_NTERMS; k++) m.c[k] = 0.25 + 0.125 * k;
    cost_step one = mixed(1), two = mixed(2);
    double p1[CF_NTERMS], p2[CF_NTERMS];
    double ms1 = cfitted_step_ms(&m, 1, &one, p1), ms2 = cfitted_step_ms(&m, 1, &two, p2);
    cr_expect_gt(ms2, ms1);
    cr_expect_eq(p2[CF_KV], p1[CF_KV], "each context is read once");
    cr_expect_eq(p2[CF_SEQ], p1[CF_SEQ], "as many sequences");
    cr_expect_gt(p2[CF_DECODE], p1[CF_DECODE]);
    cr_expect_gt(p2[CF_ATTN], p1[CF_ATTN], "the second token's attention is computed");
    double r[CF_NTERMS];
    for (int k = 0; k < CF_NTERMS; k++) r[k] = 1;
    cfitted_eval e;
    cfitted_eval_init(&m, 1, r, &e);
    cr_expect(same_bits(cfitted_eval_ms(&e, &two), ms2), "%.17g vs %.17g", cfitted_eval_ms(&e, &two), ms2);
    cr_expect(same_bits(cfitted_eval_ms(&e, &one), ms1));
}

/* A Vidur profile of llama-3-8b on the a100 (tables and direct evaluation). */
Test(step_cost, profile_prices_decode_tokens)
{
    char err[512];
    cr_assert_eq(access(VIDUR, R_OK), 0, "%s not found: run from the repository root", VIDUR);
    sqlite3 *db = catalog_db();
    cr_assert_eq(cdb_init(db, err, sizeof err), 0, "%s", err);
    cr_assert_eq(cdb_begin(db, err, sizeof err), 0, "%s", err);
    cimp_opts o = { .tool = "test" };
    long n = 0;
    cr_assert_eq(cimp_vidur(db, VIDUR, &o, &n, err, sizeof err), 0, "%s", err);
    cprofile p;
    cr_assert_eq(cprofile_build(db, "llama-3-8b", "a100", 1, "test", &p, err, sizeof err), 0, "%s", err);
    cprofile_free(&p);
    cr_assert_eq(cdb_commit(db, err, sizeof err), 0, "%s", err);
    cost_model roof = { 0 };
    llama3_8b(db, "a100", &roof.hw);
    cr_assert_eq(cost_init(&roof, "roofline", &cost_roofline_defaults), 0);
    ccost c;
    cr_assert_eq(ccost_resolve(db, "profile", 0, &roof, "bf16", &c, err, sizeof err), 0, "%s", err);
    cr_assert_eq(c.kind, CC_PROFILE);
    cost_step one = mixed(1), two = mixed(2);
    ccost_parts parts;
    double fast1 = ccost_step_ms(&c, &one, NULL, NULL), fast2 = ccost_step_ms(&c, &two, NULL, NULL);
    cr_expect_gt(fast2, fast1);
    cr_expect(same_bits(fast2, ccost_step_ms(&c, &two, &parts, NULL)), "tables and direct evaluation agree");
    cr_expect(same_bits(fast1, ccost_step_ms(&c, &one, &parts, NULL)));
    ccost_free(&c);
    cost_free(&roof);
    store_close(db);
}

/* Without calib's rows the default is the roofline (what auto gives with no
 * calibrated model stored); with them, auto.  Registering is idempotent and a
 * taken name is refused. */
Test(step_cost, registry_default)
{
    cr_expect_null(cost_find("auto"));
    cr_expect_eq(cost_default(), cost_find("roofline"));
    cr_expect_eq(cost_row_count(), 2);
    cr_assert_eq(ccost_register(), 0);
    cr_assert_eq(ccost_register(), 0, "twice is harmless");
    cr_assert_eq(latsim_use_calib(), 0, "the one registration of calib/ after it: nothing more");
    cr_expect_eq(cost_row_count(), 6);
    cr_expect_str_eq(cost_default()->name, "auto");
    char buf[256];
    cost_choices(buf, sizeof buf);
    cr_expect_str_eq(buf, "linear|roofline|auto|fitted|profile|learned");
    cr_expect_eq(cost_row_index(cost_find("profile")), 4);
    cost_ops clash = *cost_find("linear");
    cr_expect_eq(cost_register(&clash), -1);
    clash.name = "mine";
    cr_expect_eq(cost_register(&clash), 0);
    cr_expect_eq(cost_find("MINE"), &clash);
}
