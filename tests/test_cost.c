/* test_cost.c -- Criterion tests of the step cost models (sim/llm/cost.c): the
 * linear formula, and the roofline model checked against hand computations
 * for llama-3-8b on an H100 from the built-in catalog. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "core/catalog.h"
#include "llm/cost.h"
#include "run/scenario.h"

/* Relative closeness, for results computed in a different order than here. */
#define cr_assert_close(a, b) \
    cr_assert_float_eq((a), (b), 1e-12 * fabs(b) + 1e-15, "%.17g vs %.17g", (double)(a), \
                       (double)(b))

static cost_model llama3_8b_on_h100(int tp)
{
    sqlite3 *db = NULL;
    char err[256];
    cost_model m = { 0 };
    const cost_roofline params = { .compute_eff = 0.6, .memory_eff = 0.8, .step_overhead_ms = 0.5,
                                   .allreduce_latency_us = 10 };

    cr_assert_eq(cost_init(&m, "roofline", &params), 0);
    cr_assert_eq(sqlite3_open(":memory:", &db), SQLITE_OK);
    cr_assert_eq(catalog_init(db, err, sizeof err), 0, "%s", err);
    cr_assert_eq(catalog_gpu(db, "h100", &m.hw.gpu, err, sizeof err), 0, "%s", err);
    cr_assert_eq(catalog_model(db, "llama-3-8b", &m.hw.model, err, sizeof err), 0, "%s", err);
    sqlite3_close(db);
    m.hw.have_hw = 1;
    m.hw.tp = tp;
    m.hw.weight_bytes = 2;
    m.hw.kv_bytes = 2;
    m.hw.use_fp8_compute = 0;
    return m;
}

Test(cost, linear_exact)
{
    cost_linear c = { .step_base_ms = 1.5, .prefill_ms_per_token = 0.25,
                      .decode_ms_per_seq = 0.5, .kv_ms_per_1k_tokens = 0.125 };
    cost_model m = { 0 };
    cr_assert_eq(cost_init(&m, "linear", &c), 0);
    cost_step s = { .prefill_tokens = 100, .prefill_pairs = 5050, .prefill_seqs = 1,
                    .decode_seqs = 4, .kv_tokens = 3000 };
    /* 1.5 + 0.25*100 + 0.5*4 + 0.125*3000/1000, all exact in binary. */
    cr_assert_eq(cost_step_ms(&m, &s), 28.875);

    c.prefill_ms_per_token = 0.1;
    c.kv_ms_per_1k_tokens = 0.03;
    cr_assert_eq(cost_init(&m, "linear", &c), 0);   /* replaces the state */
    s.kv_tokens = 1234;
    cr_assert_eq(cost_step_ms(&m, &s), 1.5 + 0.1 * 100 + 0.5 * 4 + 0.03 * 1234 / 1000.0);

    /* Without hardware there is no FLOP/byte accounting. */
    double f = -1, b = -1;
    cost_step_work(&m, &s, &f, &b);
    cr_assert_eq(f, 0);
    cr_assert_eq(b, 0);
    cr_assert_eq(cost_peak_flops(&m), 0);
    cr_assert_eq(cost_peak_bw(&m), 0);
    cost_free(&m);
    cost_free(&m);                                  /* harmless twice */
    cr_assert_null(m.state);
}

Test(cost, empty_step_is_free)
{
    cost_linear c = { .step_base_ms = 1.5 };
    cost_model lin = { 0 };
    cr_assert_eq(cost_init(&lin, "linear", &c), 0);
    cost_model roof = llama3_8b_on_h100(1);
    cost_step s = { 0 };
    cr_assert_eq(cost_step_ms(&lin, &s), 0);
    cr_assert_eq(cost_step_ms(&roof, &s), 0);
    cost_free(&lin);
    cost_free(&roof);
}

Test(cost, roofline_decode_memory_bound)
{
    cost_model m = llama3_8b_on_h100(1);
    /* One sequence decoding with a 1000-token context (new token included). */
    cost_step s = { .decode_seqs = 1, .kv_tokens = 1000 };
    double flops, bytes;

    /* KV bytes per token: 2 * 32 layers * 8 kv heads * 128 * 2 bytes = 131072.
     * bytes = 8.03e9 * 2 + 131072 * (1000 + 0 + 1) = 16191203072
     * flops = 2 * 8.03e9 * 1 + 4 * 32 * 32 * 128 * 1000 = 16584288000 */
    cost_step_work(&m, &s, &flops, &bytes);
    cr_assert_close(bytes, 16191203072.0);
    cr_assert_close(flops, 16584288000.0);

    double t_mem = 16191203072.0 / (3350e9 * 0.8);
    double t_compute = 16584288000.0 / (989e12 * 0.6);
    cr_assert_gt(t_mem, 100 * t_compute, "memory-bound");
    cr_assert_close(cost_step_ms(&m, &s), t_mem * 1e3 + 0.5);   /* about 6.5415 ms */
    cr_assert_float_eq(cost_step_ms(&m, &s), 6.5415, 1e-4);
    cost_free(&m);
}

Test(cost, roofline_prefill_compute_bound)
{
    cost_model m = llama3_8b_on_h100(1);
    /* One 8192-token prompt, no cache: pairs = 8192 * 8193 / 2 = 33558528. */
    cost_step s = { .prefill_tokens = 8192, .prefill_pairs = 33558528.0, .prefill_seqs = 1 };
    double flops, bytes;

    /* flops = 2 * 8.03e9 * 8192 + 524288 * 33558528 = 149157853528064
     * bytes = 8.03e9 * 2 + 131072 * 8192 = 17133741824 */
    cost_step_work(&m, &s, &flops, &bytes);
    cr_assert_close(flops, 149157853528064.0);
    cr_assert_close(bytes, 17133741824.0);

    double t_compute = 149157853528064.0 / (989e12 * 0.6);
    double t_mem = 17133741824.0 / (3350e9 * 0.8);
    cr_assert_gt(t_compute, 10 * t_mem, "compute-bound");
    cr_assert_close(cost_step_ms(&m, &s), t_compute * 1e3 + 0.5);  /* about 251.86 ms */

    /* FP8 compute uses the fp8 peak: the compute part halves (1979 vs 989). */
    m.hw.use_fp8_compute = 1;
    cr_assert_close(cost_step_ms(&m, &s), 149157853528064.0 / (1979e12 * 0.6) * 1e3 + 0.5);
    cost_free(&m);
}

Test(cost, roofline_tensor_parallel)
{
    cost_model m1 = llama3_8b_on_h100(1), m2 = llama3_8b_on_h100(2);
    cost_step s = { .decode_seqs = 1, .kv_tokens = 1000 };
    double f1, b1, f2, b2;

    /* Two all-reduces per layer of 1 token * 4096 * 2 bytes; ring factor
     * 2 * (2 - 1) / 2 = 1. */
    double t_ar = 2 * 32 * (10e-6 + 1.0 * (1 * 4096 * 2) / 900e9);
    double roof1 = cost_step_ms(&m1, &s) - 0.5;
    double ms2 = cost_step_ms(&m2, &s);
    cr_assert_close(ms2, roof1 / 2 + t_ar * 1e3 + 0.5);
    cr_assert_close(ms2, 16191203072.0 / 2 / (3350e9 * 0.8) * 1e3 + t_ar * 1e3 + 0.5);

    /* The work is the whole replica's, independent of tp; the peaks scale. */
    cost_step_work(&m1, &s, &f1, &b1);
    cost_step_work(&m2, &s, &f2, &b2);
    cr_assert_eq(f1, f2);
    cr_assert_eq(b1, b2);
    cr_assert_close(cost_peak_flops(&m1), 989e12);
    cr_assert_close(cost_peak_flops(&m2), 2 * 989e12);
    cr_assert_close(cost_peak_bw(&m1), 3350e9);
    cr_assert_close(cost_peak_bw(&m2), 2 * 3350e9);
    cost_free(&m1);
    cost_free(&m2);
}

Test(cost, utilization_at_most_one)
{
    static const cost_step steps[] = {
        { .decode_seqs = 1, .kv_tokens = 1000 },
        { .decode_seqs = 256, .kv_tokens = 256 * 2000 },
        { .prefill_tokens = 8192, .prefill_pairs = 33558528.0, .prefill_seqs = 1 },
        { .prefill_tokens = 512, .prefill_pairs = 512.0 * 4000 + 512.0 * 513 / 2,
          .prefill_seqs = 1, .decode_seqs = 64, .kv_tokens = 64 * 3000 },
    };
    for (int tp = 1; tp <= 8; tp *= 2)
        for (int fp8 = 0; fp8 <= 1; fp8++)
            for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
                cost_model m = llama3_8b_on_h100(tp);
                double flops, bytes, t;
                m.hw.use_fp8_compute = fp8;
                ((cost_roofline *) m.state)->compute_eff = 1.0;
                ((cost_roofline *) m.state)->memory_eff = 1.0;
                t = cost_step_ms(&m, &steps[i]) / 1e3;
                cost_step_work(&m, &steps[i], &flops, &bytes);
                cr_assert_gt(t, 0);
                cr_assert_leq(flops / (cost_peak_flops(&m) * t), 1.0 + 1e-12);
                cr_assert_leq(bytes / (cost_peak_bw(&m) * t), 1.0 + 1e-12);
                cost_free(&m);
            }
}

/* The table: names in order for the error message, rows by name, a model's
 * keys; cost_init refuses unknown names. */
Test(cost, table)
{
    char buf[256];
    cost_choices(buf, sizeof buf);
    cr_assert(!strncmp(buf, "linear|roofline", 15), "%s", buf);
    cr_assert_eq(cost_find("ROOFLINE"), cost_row_at(1));
    cr_assert_null(cost_find("quantum"));
    cr_assert_str_eq(cost_find("linear")->keys[0].key, "step_base_ms");
    cost_model m = { 0 };
    cr_assert_eq(cost_init(&m, "quantum", NULL), -1);
    cr_assert_null(m.ops);
    cost_step s = { .decode_seqs = 1 };
    cr_assert_eq(cost_step_ms(&m, &s), 0);     /* no model: no time */
}
