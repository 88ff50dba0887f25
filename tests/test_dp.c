/* test_dp.c -- issue 32: KV capacity as the engine resolves it, and
 * data-parallel attention ranks (`dp`) with expert parallelism, by hand:
 *   - the sampler's bytes per logit (LLM_SAMPLER_BYTES) against the peaks vLLM
 *     logged on H100 (tests/data/vllm_memory); kv_blocks = derived; bad values;
 *   - dp: a lone request, two equal halves, an idle rank (lockstep steps, the
 *     experts sharded over dp x tp GPUs), the load balancer, the KV capacity
 *     per rank, GPUs and cost, and bad input (one line, file, line and key). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/catalog.h"
#include "core/csvread.h"
#include "llm/cost.h"
#include "llm/llmcfg.h"
#include "run/scenario.h"
#include "run/sim.h"
#include "store/store.h"
#include "tsim.h"
#include "tcheck.h"

/* Full sanity checks, every step (tcheck.h). */
TestSuite(dp, .init = tcheck_every_step);
TestSuite(kvcap, .init = tcheck_every_step);

#define GiB 1073741824.0

/* ---- helpers ------------------------------------------------------------------ */

static sqlite3 *catalog_db(void)
{
    sqlite3 *h = NULL;
    char err[256];
    cr_assert_eq(store_open(":memory:", &h, err, sizeof err), 0, "%s", err);
    return h;
}

#define DP_PATH "/tmp/test_dp.ini"

/* Loads and resolves TEXT (tsim.h); runs it with seed 1, failing the test on any error. */
static int load_resolve(const char *text, scenario *sc, char *err, size_t errlen)
{
    return tsim_load_resolve(DP_PATH, text, sc, err, errlen);
}

static void run_text(const char *text, sim_result *res) { tsim_run(DP_PATH, text, 1, res); }

/* Expects TEXT refused at load or resolve with one line holding NEEDLE (and the
 * file's name). */
static void expect_refused(const char *text, const char *needle)
{
    scenario sc;
    char err[1024];
    int rc = load_resolve(text, &sc, err, sizeof err);
    if (rc == 0) scenario_free(&sc);
    cr_expect_neq(rc, 0, "accepted:\n%s", text);
    cr_expect(strstr(err, needle) != NULL, "'%s' not in: %s", needle, err);
    cr_expect(strstr(err, "test_dp.ini") != NULL && strchr(err, '\n') == NULL, "one line naming the file: %s", err);
}

static double metric(const sim_result *r, const char *name) { return tsim_pv(r, 0, name); }

/* ---- KV capacity ------------------------------------------------------------------ */

typedef struct fit_rows {
    double lo, hi;            /* implied bytes per logit, smallest and largest */
    int n;                    /* rows read */
} fit_rows;

static int on_fit_row(void *ctx, const csvread_row *row, char *err, size_t errlen)
{
    fit_rows *f = ctx;
    int v = csvread_need_col(row, "vocab", err, errlen), p = csvread_need_col(row, "peak_activation_gib", err, errlen);
    if (v < 0 || p < 0) return -1;
    /* vLLM's serve defaults on a >= 70 GiB GPU: 1024 sampled rows; the sampler is the peak. */
    double b = atof(row->field[p]) * GiB / (1024.0 * atof(row->field[v]));
    if (f->n == 0 || b < f->lo) f->lo = b;
    if (f->n == 0 || b > f->hi) f->hi = b;
    f->n++;
    return 0;
}

/* The sampler's 38.5 bytes per logit lies within what the six logged peaks
 * imply (docs/llm.md: 38.4..39.6), each of them between 4.76 and 7.38 GiB. */
Test(kvcap, sampler_bytes_fit)
{
    fit_rows f = { 0 };
    char err[512];
    cr_assert_eq(csvread_file("tests/data/vllm_memory/peak_activation.csv", NULL, on_fit_row, &f, err, sizeof err), 0,
                 "%s", err);
    cr_assert_eq(f.n, 6);
    cr_expect(fabs(f.lo - 38.4) < 0.05 && fabs(f.hi - 39.6) < 0.05, "implied %.3f..%.3f", f.lo, f.hi);
    cr_expect(LLM_SAMPLER_BYTES >= f.lo && LLM_SAMPLER_BYTES <= f.hi);
}

/* kv_blocks = derived (what `latsim keys` lists) is the derivation; other words
 * are refused with one line. */
Test(kvcap, derived_word_and_bad_values)
{
    const char *base = "[sim]\nrequests = 1\nwarmup = 0\n[workload]\narrival = constant\nrate = 0.001\n"
                       "prompt_tokens = const(100)\noutput_tokens = const(4)\n"
                       "[pool chat]\nkind = llm\nmodel = llama-3-8b\ngpu = h100\n";
    char text[1024];
    sim_result a, b;
    run_text(base, &a);
    snprintf(text, sizeof text, "%skv_blocks = derived\nactivation_reserve_gib = profiled\n", base);
    run_text(text, &b);
    cr_expect_eq(metric(&a, "kv_blocks"), metric(&b, "kv_blocks"));
    cr_expect_eq(metric(&a, "kv_blocks"), 28126);
    sim_result_free(&a);
    sim_result_free(&b);
    snprintf(text, sizeof text, "%skv_blocks = lots\n", base);
    expect_refused(text, "kv_blocks");
    snprintf(text, sizeof text, "%sactivation_reserve_gib = big\n", base);
    expect_refused(text, "activation_reserve_gib");
    snprintf(text, sizeof text, "%scuda_graph_gib = -1\n", base);
    expect_refused(text, "cuda_graph_gib");
    /* A GPU whose usable memory exceeds its memory. */
    snprintf(text, sizeof text, "%s[gpu g]\nbf16_tflops = 100\nmem_gib = 24\nmem_usable_gib = 25\nmem_bw_gbs = 1000\n", base);
    expect_refused(text, "mem_usable_gib");
}

/* ---- data-parallel attention ranks: the step's price by hand ---------------------- */

/* Qwen3-30B-A3B (config.json): 48 layers, all MoE, 128 experts, 8 per token,
 * one expert 3 x 2048 x 768 = 4718592 weights, the rest (attention, norms,
 * routers, embeddings) 1541093376; 32 heads and 4 KV heads of 128, hidden 2048. */
#define Q3_EXPERT 4718592.0
#define Q3_REST 1541093376.0

/* A roofline (default parameters) on qwen3-30b-a3b and one H100 per rank, bf16. */
static void q3_roofline(cost_model *m, int tp, int dp, int ep)
{
    sqlite3 *h = catalog_db();
    char err[256];
    memset(m, 0, sizeof *m);
    cr_assert_eq(cost_init(m, "roofline", &cost_roofline_defaults), 0);
    m->hw.have_hw = 1;
    cr_assert_eq(catalog_model(h, "qwen3-30b-a3b", &m->hw.model, err, sizeof err), 0, "%s", err);
    cr_assert_eq(catalog_gpu(h, "h100", &m->hw.gpu, err, sizeof err), 0, "%s", err);
    store_close(h);
    m->hw.tp = tp;
    m->hw.dp = dp;
    m->hw.ep = ep;
    m->hw.kv_bytes = 2;
    cr_assert_eq(cost_hw_set_weights(&m->hw, "bf16"), 0);
}

/* One decoding sequence with 1000 tokens of context on rank 0 of dp = 2 (tp 1),
 * rank 1 idle with its dummy token: the group routes 2 tokens, touching
 * 128 (1 - (120/128)^2) = 15.5 experts per layer, half of them on this GPU:
 *   bytes  = 1541093376 x 2 + 48 x 15.5 x 4718592 x 2 / 2 + 49152 x 2 x 1001
 *   t_mem  = bytes / (3350e9 x 0.8)   (the step is memory-bound)
 *   ep = 2: 2 all-to-alls per layer of the mean rank's 1 token x 2048 x 2 bytes:
 *           48 x 2 x (8 us + 4096 x 1/2 / 900e9)
 *   ep = 1: one all-reduce per layer of the group's 2 tokens over 2 GPUs:
 *           48 x (8 us + 2 x 1/2 x 8192 / 900e9)
 *   step   = t_mem + collectives + 48 x 20 us + 1 ms. */
Test(dp, roofline_decode_by_hand)
{
    double touched = 128.0 * (1 - pow(120.0 / 128, 2));
    cr_assert_float_eq(touched, 15.5, 1e-12);
    double bytes = Q3_REST * 2 + 48 * touched * Q3_EXPERT * 2 / 2 + 49152.0 * 2 * 1001;
    double f = 2 * Q3_REST + 4.0 * 32 * 128 * 48 * 1000 + 2.0 * 48 * 8 * Q3_EXPERT * 2 / 2;
    double t_mem = bytes / (3350e9 * 0.8), t_comp = f / (989e12 * 0.6);
    cr_assert_lt(t_comp, t_mem);
    double a2a = 48 * 2 * (8e-6 + 4096 * 0.5 / 900e9), ar = 48 * (8e-6 + 2 * 0.5 * 8192 / 900e9);
    double tail = 48 * 20e-6 * 1e3 + 1.0;
    cost_step s = { .decode_seqs = 1, .kv_tokens = 1000, .emitted_tokens = 1, .group_tokens = 2 };
    cost_model m;
    q3_roofline(&m, 1, 2, 2);
    double ep2 = cost_step_ms(&m, &s);
    cr_expect(fabs(ep2 - ((t_mem + a2a) * 1e3 + tail)) < 1e-9, "ep 2: %.12g vs %.12g", ep2, (t_mem + a2a) * 1e3 + tail);
    cost_free(&m);
    q3_roofline(&m, 1, 2, 1);
    double ep1 = cost_step_ms(&m, &s);
    cr_expect(fabs(ep1 - ((t_mem + ar) * 1e3 + tail)) < 1e-9, "ep 1: %.12g vs %.12g", ep1, (t_mem + ar) * 1e3 + tail);
    /* Two replicas (dp = 1) each read their own 8 experts of 128 whole: more bytes per GPU. */
    cost_free(&m);
    q3_roofline(&m, 1, 1, 1);
    s.group_tokens = 0;
    double one = cost_step_ms(&m, &s);
    double bytes1 = Q3_REST * 2 + 48 * 8 * Q3_EXPERT * 2 + 49152.0 * 2 * 1001;
    cr_expect(fabs(one - (bytes1 / (3350e9 * 0.8) * 1e3 + tail)) < 1e-9, "dp 1: %.12g", one);
    /* At batch 1 the 0.25 experts per layer a rank saves weigh less than its collectives. */
    cr_expect_lt(one, ep1);
    cost_free(&m);
}

/* Two equal halves: 256 decoding sequences split 128 + 128 over dp = 2 rank
 * each with its own 128 (group 256 routed tokens), against one replica of tp 1
 * stepping all 256: the experts' weights are read once per GPU from the group's
 * distinct experts, halved over the two GPUs, and each rank reads only its
 * own sequences' KV: each rank's step is under the single replica's. */
Test(dp, two_equal_halves)
{
    cost_model m;
    cost_step half = { .decode_seqs = 128, .kv_tokens = 128 * 1000, .emitted_tokens = 128, .group_tokens = 256 };
    cost_step all = { .decode_seqs = 256, .kv_tokens = 256 * 1000, .emitted_tokens = 256 };
    q3_roofline(&m, 1, 2, 2);
    double h = cost_step_ms(&m, &half);
    cost_free(&m);
    q3_roofline(&m, 1, 1, 1);
    double a = cost_step_ms(&m, &all);
    cost_free(&m);
    /* By hand: per GPU, 48 x 128 (1 - (120/128)^256) experts / 2 of 4718592 bf16 weights, the rest whole, 128 contexts. */
    double touched = 128.0 * (1 - pow(120.0 / 128, 256));
    double bytes = Q3_REST * 2 + 48 * touched * Q3_EXPERT * 2 / 2 + 49152.0 * 2 * 128 * 1001;
    double f = 2 * Q3_REST * 128 + 4.0 * 32 * 128 * 48 * 128000 + 2.0 * 48 * 8 * Q3_EXPERT * 256 / 2;
    double t = fmax(bytes / (3350e9 * 0.8), f / (989e12 * 0.6));
    double a2a = 48 * 2 * (8e-6 + 128 * 2048 * 2.0 * 0.5 / 900e9);
    double want = (t + a2a) * 1e3 + 48 * 20e-6 * 1e3 + 1.0;
    cr_expect(fabs(h - want) < 1e-9 * want, "half: %.12g vs %.12g", h, want);
    cr_expect_lt(h, a, "a rank's half (%.4g ms) under one replica's whole batch (%.4g ms)", h, a);
}

/* ---- dp in the simulation ------------------------------------------------------------ */

#define LIN "cost = linear\nstep_base_ms = 5\nprefill_ms_per_token = 0.1\ndecode_ms_per_seq = 0.05\nkv_ms_per_1k_tokens = 0.01\n"

/* A request of P prompt and O output tokens every 1000 s on an MoE pool
 * (qwen3-30b-a3b, h100) with EXTRA keys. */
static void burst_text(char *buf, size_t n, int nreq, int apart, int P, int O, const char *extra)
{
    (void) apart;
    snprintf(buf, n,
             "[sim]\nrequests = %d\nwarmup = 0\n"
             "[workload]\narrival = constant\nrate = 0.001\nprompt_tokens = const(%d)\noutput_tokens = const(%d)\n"
             "[pool chat]\nkind = llm\nmodel = qwen3-30b-a3b\ngpu = h100\n" LIN "%s",
             nreq, P, O, extra);
}

/* A lone request on dp = 2 (linear cost: 5 ms + 0.1 ms per prompt token +
 * 0.05 per decoding sequence + 0.01 per 1000 KV tokens): it goes to rank 0 (the
 * balancer's tie), prefills 100 tokens in 5 + 10 = 15 ms while rank 1 runs its
 * dummy token (5.1 ms), then decodes: each step takes the slower of its decode
 * (5.05 + 0.01 x context / 1000 ms, context 101..104) and rank 1's dummy
 * (5.1 ms): 5.1 ms.  E2E = 15 + 4 x 5.1 = 35.4 ms; TTFT 15 ms. */
Test(dp, lone_request_idle_rank)
{
    char text[2048];
    sim_result r;
    burst_text(text, sizeof text, 1, 1, 100, 5, "dp = 2\n");
    run_text(text, &r);
    cr_expect_eq(tsim_n(&r, "served"), 1);
    cr_expect_float_eq(tsim_sys(&r, "ttft")->mean, 15.0, 1e-9, "ttft %.12g", tsim_sys(&r, "ttft")->mean);
    cr_expect_float_eq(tsim_sys(&r, "e2e")->mean, 35.4, 1e-9, "e2e %.12g", tsim_sys(&r, "e2e")->mean);
    cr_expect_eq(metric(&r, "gpus"), 2);
    cr_expect_eq(metric(&r, "dp"), 2);
    sim_result_free(&r);
    /* The dense twin (llama-3-8b): dp ranks are independent, no dummy: 15 + 5.0501..5.0504 x 4. */
    snprintf(text, sizeof text,
             "[sim]\nrequests = 1\nwarmup = 0\n[workload]\narrival = constant\nrate = 0.001\n"
             "prompt_tokens = const(100)\noutput_tokens = const(5)\n"
             "[pool chat]\nkind = llm\nmodel = llama-3-8b\ngpu = h100\n" LIN "dp = 2\n");
    run_text(text, &r);
    double dec = 4 * 5.05 + 0.01 * (101 + 102 + 103 + 104) / 1000.0;
    cr_expect_float_eq(tsim_sys(&r, "e2e")->mean, 15.0 + dec, 1e-6, "dense e2e %.12g", tsim_sys(&r, "e2e")->mean);
    sim_result_free(&r);
}

/* Lockstep, by hand (linear cost: 5 ms + 0.1 ms per prompt token + 0.05 per
 * decoding sequence + 0.01 per 1000 KV tokens), dp = 2: requests A and B
 * arrive together at t = 0 (a trace), C at 1000 s, each 100 + 5 tokens.
 *   A goes to rank 0 and starts at once: step 1 = max(A's prefill 15, rank
 *     1's dummy 5.1) = 15 ms.  B goes to rank 1 (rank 0 scores 1 running,
 *     rank 1 0) and waits for the step: it prefills in step 2 beside A's first
 *     decode: max(15, 5.05101) = 15 ms, so B's TTFT is 30 ms.
 *   Steps 3..5: both decode, max of A's (context 102..104) and B's
 *     (101..103): 5.05102, 5.05103, 5.05104; A ends (E2E 45.15309 ms).
 *   Step 6: B's last decode (104) against rank 0's dummy: 5.1 ms (E2E 50.25309).
 *   C alone: 15 + 4 x 5.1 = 35.4 ms (every decode waits for the dummy). */
Test(dp, lockstep_by_hand)
{
    const char *csv = "/tmp/test_dp_three.csv";
    FILE *f = fopen(csv, "w");
    cr_assert(f);
    fputs("TIMESTAMP,ContextTokens,GeneratedTokens\n0,100,5\n0,100,5\n1000,100,5\n", f);
    fclose(f);
    char text[2048];
    sim_result r;
    snprintf(text, sizeof text,
             "[sim]\nrequests = 3\nwarmup = 0\n[workload]\narrival = trace\ntrace = %s\n"
             "time_column = TIMESTAMP\ntime_format = seconds\n"
             "[pool chat]\nkind = llm\nmodel = qwen3-30b-a3b\ngpu = h100\n" LIN "dp = 2\n", csv);
    run_text(text, &r);
    cr_expect_eq(tsim_n(&r, "served"), 3);
    cr_expect_float_eq(tsim_sys(&r, "ttft")->mean, (15.0 + 30.0 + 15.0) / 3, 1e-9, "ttft %.12g",
                       tsim_sys(&r, "ttft")->mean);
    cr_expect_float_eq(tsim_sys(&r, "ttft")->max, 30.0, 1e-9, "ttft max %.12g", tsim_sys(&r, "ttft")->max);
    double a = 15 + 15 + 5.05102 + 5.05103 + 5.05104, b = 30 + 5.05102 + 5.05103 + 5.05104 + 5.1, c = 35.4;
    cr_expect_float_eq(tsim_sys(&r, "e2e")->mean, (a + b + c) / 3, 1e-6, "e2e %.12g vs %.12g",
                       tsim_sys(&r, "e2e")->mean, (a + b + c) / 3);
    cr_expect_float_eq(tsim_sys(&r, "e2e")->max, b, 1e-6, "e2e max %.12g", tsim_sys(&r, "e2e")->max);
    cr_expect_float_eq(tsim_sys(&r, "e2e")->sd * tsim_sys(&r, "e2e")->sd * 2,
                       (a - (a + b + c) / 3) * (a - (a + b + c) / 3)
                       + (b - (a + b + c) / 3) * (b - (a + b + c) / 3) + (c - (a + b + c) / 3) * (c - (a + b + c) / 3),
                       1e-4, "the three E2E's spread (sample variance)");
    sim_result_free(&r);
    remove(csv);
}

/* The KV cache per rank: qwen3-30b-a3b at dp = 2, ep = 2 on H100s: each GPU
 * holds the dense part whole (1541093376 x 2 bytes) and half the routed
 * experts (48 x 128 x 4718592 x 2 / 2), and its rank's KV (4 KV heads of 128
 * in 48 layers, 2 bytes: 98304 bytes a token); a set reserve of 1 GiB and no
 * non-torch memory:
 *   blocks = floor((0.9 x 79.18 GiB - weights - 1 GiB) / (16 x 98304)). */
Test(dp, kv_per_rank_and_gpus)
{
    char text[2048];
    sim_result r;
    burst_text(text, sizeof text, 1, 1, 100, 5, "dp = 2\nep = 2\nactivation_reserve_gib = 1\nnon_torch_gib = 0\n");
    run_text(text, &r);
    double w = Q3_REST * 2 + 48 * 128 * Q3_EXPERT * 2 / 2;
    int64_t want = (int64_t) floor((0.9 * 79.18 * GiB - w - 1.0 * GiB) / (16 * 98304.0));
    cr_expect_eq(metric(&r, "kv_blocks"), want, "kv_blocks %g vs %lld", metric(&r, "kv_blocks"), (long long) want);
    cr_expect_eq(metric(&r, "gpus"), 2);
    cr_expect_float_eq(metric(&r, "cost_per_hour"), 2 * 2.99, 1e-9);
    sim_result_free(&r);
    /* tp 2 x dp 2 x 3 replicas: 12 GPUs. */
    burst_text(text, sizeof text, 1, 1, 100, 5, "dp = 2\ntp = 2\nep = 4\nreplicas = 3\n");
    run_text(text, &r);
    cr_expect_eq(metric(&r, "gpus"), 12);
    sim_result_free(&r);
}

/* Bad input: one line with the file, line and key; nothing runs. */
Test(dp, bad_input)
{
    char text[2048];
    burst_text(text, sizeof text, 1, 1, 100, 5, "dp = 2\nep = 4\n");
    expect_refused(text, "ep");
    burst_text(text, sizeof text, 1, 1, 100, 5, "dp = 2\nep = 3\n");
    expect_refused(text, "dp x tp = 2");
    burst_text(text, sizeof text, 1, 1, 100, 5, "dp = 0\n");
    expect_refused(text, "dp");
    burst_text(text, sizeof text, 1, 1, 100, 5, "dp = 2\nrouting = round_robin\n");
    expect_refused(text, "routing");
    burst_text(text, sizeof text, 1, 1, 100, 5, "dp = 2\nscheduler = static\n");
    expect_refused(text, "dp");
    burst_text(text, sizeof text, 1, 1, 100, 5, "dp = 2\npp = 2\n");
    expect_refused(text, "pp");
    burst_text(text, sizeof text, 1, 1, 100, 5, "dp = 2\nfail_after_s = exp(mean=100)\n");
    expect_refused(text, "dp > 1");
    /* dp with ep on a dense model. */
    snprintf(text, sizeof text,
             "[sim]\nrequests = 1\nwarmup = 0\n[workload]\narrival = constant\nrate = 0.001\n"
             "prompt_tokens = const(100)\noutput_tokens = const(5)\n"
             "[pool chat]\nkind = llm\nmodel = llama-3-8b\ngpu = h100\ndp = 2\nep = 2\n");
    expect_refused(text, "dense");
}
