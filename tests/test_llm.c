/* test_llm.c -- Criterion tests of the LLM replicas (sim/llm/llm.c) driven end to
 * end through scenario_load_text / scenario_resolve / sim_run:
 *   - exact TTFT / TPOT of a lone request under the linear cost model, for
 *     every scheduler (static, dynamic, continuous, chunked) and with
 *     request_overhead_ms, plus the exact number of forward steps;
 *   - the derived KV-cache capacity (llama-3-8b on an H100, llama-3-70b at
 *     tp = 2, fp8 KV) against the hand computation;
 *   - continuous vs static batching: queueing at the same load and capacity;
 *   - preemption under a tiny KV cache, with request conservation (also with
 *     queue_limit and timeout_ms), and no preemption when KV is plentiful;
 *   - configuration errors naming the offending key;
 *   - dynamic vs static mean batch size, mean_batch <= max_batch;
 *   - output-token conservation; determinism;
 *   - overlapping requests replayed step by step (continuous, static,
 *     dynamic filling its batch, chunked sharing its budget, two replicas),
 *     one preemption traced step by step, no KV-block leak after thrashing,
 *     truncation, and the roofline model's step descriptions.
 * Expected values are derived by hand from llm.h / llm.c / cost.c; see the
 * comments of each test. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ccost.h"
#include "run/scenario.h"
#include "llm/llmcfg.h"
#include "run/sim.h"
#include "tsim.h"
#include "store/store.h"
#include "tcheck.h"

/* Full sanity checks, every step (tcheck.h). */
TestSuite(llm_batching, .init = tcheck_every_step);
TestSuite(llm_determinism, .init = tcheck_every_step);
TestSuite(llm_dynamic, .init = tcheck_every_step);
TestSuite(llm_errors, .init = tcheck_every_step);
TestSuite(llm_kv, .init = tcheck_every_step);
TestSuite(llm_lone, .init = tcheck_every_step);
TestSuite(llm_overlap, .init = tcheck_every_step);
TestSuite(llm_preempt, .init = tcheck_every_step);
TestSuite(llm_roofline, .init = tcheck_every_step);
TestSuite(llm_tokens, .init = tcheck_every_step);

#define GiB 1073741824.0

/* ---- helpers ---------------------------------------------------------------- */

/* Loads and resolves TEXT.  Returns 0, or -1 with the message in ERR.
 * On success *SC is loaded and must be scenario_free()d. */
static int load_resolve(const char *text, scenario *sc, char *err, size_t errlen)
{
    return tsim_load_resolve("/tmp/test_llm.ini", text, sc, err, errlen);
}

static char trace_path[64];   /* a temporary trace to remove after loading */

/* Loads, resolves and runs TEXT with SEED; fails the test on any error. */
static void run_text(const char *text, uint64_t seed, sim_result *res)
{
    scenario sc;
    char err[1024];
    int rc = load_resolve(text, &sc, err, sizeof err);
    if (trace_path[0]) {
        unlink(trace_path);
        trace_path[0] = '\0';
    }
    cr_assert_eq(rc, 0, "scenario: %s\n%s", err, text);
    cr_assert_eq(sim_run(&sc, seed, res, err, sizeof err), 0, "sim_run: %s", err);
    scenario_free(&sc);
}

/* Expects TEXT to fail loading or resolving; the message must contain every
 * string of the NULL-terminated list. */
static void expect_error(const char *text, ...)
{
    scenario sc;
    char err[1024];
    int rc = load_resolve(text, &sc, err, sizeof err);
    if (rc == 0) scenario_free(&sc);
    cr_assert_eq(rc, -1, "accepted:\n%s", text);
    va_list ap;
    va_start(ap, text);
    const char *want;
    while ((want = va_arg(ap, const char *)) != NULL)
        cr_expect_not_null(strstr(err, want), "message lacks '%s': %s", want, err);
    va_end(ap);
}

/* The linear cost model used by most tests (ms). */
#define BASE_MS 5.0
#define PF_MS 0.1        /* per prompt token */
#define DEC_MS 0.05      /* per decoding sequence */
#define KV_MS 0.01       /* per 1000 KV tokens */
#define LINEAR_KEYS \
    "cost = linear\nstep_base_ms = 5\nprefill_ms_per_token = 0.1\n" \
    "decode_ms_per_seq = 0.05\nkv_ms_per_1k_tokens = 0.01\n"

/* A scenario of N requests arriving 1000 s apart (they never overlap: each
 * takes well under a second), prompts of P and outputs of O tokens, and EXTRA
 * lines in the pool section. */
static void lone_text(char *buf, size_t n, int nreq, int P, int O, const char *extra)
{
    snprintf(buf, n,
             "[sim]\nrequests = %d\nwarmup = 0\n"
             "[workload]\narrival = constant\nrate = 0.001\n"
             "prompt_tokens = const(%d)\noutput_tokens = const(%d)\n"
             "[pool chat]\nkind = llm\nmodel = llama-3-8b\ngpu = h100\n" LINEAR_KEYS "%s",
             nreq, P, O, extra);
}

/* Hand-computed decode time of a lone sequence with a P-token prompt and O
 * output tokens: decode steps k = 1 .. O-1 each have decode_seqs = 1 and read
 * kv_tokens = P + k (P prompt tokens plus the k generated ones, the token
 * being decoded included: cost.h). */
static double lone_decode_ms(int P, int O)
{
    double sum = 0;
    for (int k = 1; k <= O - 1; k++)
        sum += BASE_MS + DEC_MS * 1 + KV_MS * (double) (P + k) / 1000.0;
    return sum;
}

/* Simulated time is integer ns: each step's duration is rounded to the
 * nearest ns, so allow 1e-6 ms per step (plus the overhead's rounding). */
#define STEP_TOL 1e-6

static void check_lone(const sim_result *res, int nreq, int O, double ttft, double tpot,
                       int64_t steps_per_req, int nsteps_ttft)
{
    cr_assert_eq(tsim_n(res, "served"), (uint64_t) nreq);
    cr_assert_eq(tsim_n(res, "rejected") + tsim_n(res, "timed_out"), 0);
    cr_assert_eq(tsim_sys(res, "ttft")->n, (uint64_t) nreq);
    cr_expect_float_eq(tsim_sys(res, "ttft")->mean, ttft, STEP_TOL * (nsteps_ttft + 1), "ttft %.9f vs %.9f",
                       tsim_sys(res, "ttft")->mean, ttft);
    cr_expect_float_eq(tsim_sys(res, "ttft")->max, ttft, STEP_TOL * (nsteps_ttft + 1), "ttft max %.9f vs %.9f",
                       tsim_sys(res, "ttft")->max, ttft);
    cr_expect_float_eq(tsim_sys(res, "tpot")->mean, tpot, STEP_TOL, "tpot %.9f vs %.9f", tsim_sys(res, "tpot")->mean,
                       tpot);
    cr_expect_float_eq(tsim_sys(res, "tpot")->max, tpot, STEP_TOL, "tpot max %.9f vs %.9f", tsim_sys(res, "tpot")->max,
                       tpot);
    /* e2e = TTFT + (O-1) * TPOT */
    cr_expect_float_eq(tsim_sys(res, "e2e")->mean, ttft + (O - 1) * tpot, STEP_TOL * (nsteps_ttft + O + 1),
                       "e2e %.9f", tsim_sys(res, "e2e")->mean);
    cr_assert_eq(tsim_npools(res), 1);
    /* Every step of the run is one of this request's steps. */
    cr_expect_eq(tsim_pv(res, 0, "steps"), (uint64_t) (nreq * steps_per_req), "steps %llu",
                 (unsigned long long) tsim_pv(res, 0, "steps"));
    cr_expect_float_eq(tsim_pv(res, 0, "mean_batch"), 1.0, 1e-12, "mean_batch %g", tsim_pv(res, 0, "mean_batch"));
    cr_expect_eq(tsim_pv(res, 0, "preemptions"), 0);
}

/* ---- 1. a lone request: exact TTFT and TPOT --------------------------------- */

/* P = 100, O = 11.  Prefill step: prefill_tokens = 100, decode_seqs = 0,
 * kv_tokens = 0 -> 5 + 0.1 * 100 = 15 ms; it yields the first token.
 * Then 10 decode steps of 5 + 0.05 + 0.01 * (100 + k) / 1000 ms, k = 1..10:
 * 50.5 + 0.01055 = 50.51055 ms, TPOT = 5.051055 ms. */
Test(llm_lone, continuous_exact)
{
    char text[2048];
    sim_result res;
    lone_text(text, sizeof text, 3, 100, 11, "scheduler = continuous\n");
    run_text(text, 1, &res);
    double tpot = lone_decode_ms(100, 11) / 10;
    cr_expect_float_eq(tpot, 5.051055, 1e-12);
    check_lone(&res, 3, 11, 15.0, tpot, 11, 1);
    cr_expect_float_eq(tsim_sys(&res, "queue")->mean, 0, 1e-12);
    sim_result_free(&res);
}

/* Static: the batch of one is prefilled (padded to its own prompt: 100
 * tokens) and decodes O-1 steps with kv_tokens = 1 * (maxp + k). */
Test(llm_lone, static_exact)
{
    char text[2048];
    sim_result res;
    lone_text(text, sizeof text, 3, 100, 11, "scheduler = static\n");
    run_text(text, 1, &res);
    check_lone(&res, 3, 11, 15.0, lone_decode_ms(100, 11) / 10, 11, 1);
    cr_expect_float_eq(tsim_sys(&res, "queue")->mean, 0, 1e-12);
    sim_result_free(&res);
}

/* Dynamic with max_wait_ms = 50: a lone request waits the full 50 ms for
 * company (max_batch = 256 never fills), so TTFT = 50 + 15 and its queueing
 * time is exactly 50 ms. */
Test(llm_lone, dynamic_waits_max_wait)
{
    char text[2048];
    sim_result res;
    lone_text(text, sizeof text, 3, 100, 11, "scheduler = dynamic\nmax_wait_ms = 50\n");
    run_text(text, 1, &res);
    check_lone(&res, 3, 11, 65.0, lone_decode_ms(100, 11) / 10, 11, 2);
    cr_expect_float_eq(tsim_sys(&res, "queue")->mean, 50.0, 1e-9, "queue %.9f", tsim_sys(&res, "queue")->mean);
    sim_result_free(&res);
}

/* Chunked with chunk_tokens = 32 < P = 100: chunks of 32, 32, 32, 4 in four
 * steps, each 5 + 0.1 * c ms: TTFT = 4 * 5 + 0.1 * 100 = 30 ms.  Decoding is
 * unchanged (kv_tokens = 100 + k).  Steps per request: 4 + 10. */
Test(llm_lone, chunked_splits_prefill)
{
    char text[2048];
    sim_result res;
    lone_text(text, sizeof text, 3, 100, 11, "scheduler = chunked\nchunk_tokens = 32\n");
    run_text(text, 1, &res);
    check_lone(&res, 3, 11, 30.0, lone_decode_ms(100, 11) / 10, 14, 4);
    sim_result_free(&res);
}

/* A chunk size that divides the prompt exactly: 100 = 4 * 25 -> 4 steps. */
Test(llm_lone, chunked_exact_division)
{
    char text[2048];
    sim_result res;
    lone_text(text, sizeof text, 2, 100, 11, "scheduler = chunked\nchunk_tokens = 25\n");
    run_text(text, 1, &res);
    check_lone(&res, 2, 11, 30.0, lone_decode_ms(100, 11) / 10, 14, 4);
    sim_result_free(&res);
}

/* Chunked with chunk_tokens >= P behaves as continuous. */
Test(llm_lone, chunked_big_chunk_is_continuous)
{
    char text[2048];
    sim_result res;
    lone_text(text, sizeof text, 2, 100, 11, "scheduler = chunked\nchunk_tokens = 512\n");
    run_text(text, 1, &res);
    check_lone(&res, 2, 11, 15.0, lone_decode_ms(100, 11) / 10, 11, 1);
    sim_result_free(&res);
}

/* request_overhead_ms = 2.5 is added to TTFT (and e2e) exactly; the overhead
 * statistic records it. */
Test(llm_lone, request_overhead_adds_to_ttft)
{
    char text[2048];
    sim_result res;
    lone_text(text, sizeof text, 3, 100, 11, "scheduler = continuous\nrequest_overhead_ms = 2.5\n");
    run_text(text, 1, &res);
    check_lone(&res, 3, 11, 17.5, lone_decode_ms(100, 11) / 10, 11, 1);
    cr_expect_float_eq(tsim_sys(&res, "overhead")->mean, 2.5, 1e-9);
    sim_result_free(&res);
}

/* A prompt that is a whole number of blocks (P = 96 = 6 * 16) and a long
 * output crossing several block boundaries: timing does not depend on block
 * allocation (kv_tokens = 96 + k), and nothing is preempted. */
Test(llm_lone, block_boundaries_do_not_change_timing)
{
    char text[2048];
    sim_result res;
    lone_text(text, sizeof text, 2, 96, 70, "scheduler = continuous\n");
    run_text(text, 1, &res);
    check_lone(&res, 2, 70, 5 + 0.1 * 96, lone_decode_ms(96, 70) / 69, 70, 1);
    sim_result_free(&res);
}

/* O = 1: the prefill step yields the only token: TTFT = e2e = 15 ms, one
 * step, no TPOT sample. */
Test(llm_lone, single_output_token)
{
    const char *sched[] = { "static", "continuous", "chunked" };
    for (int i = 0; i < 3; i++) {
        char text[2048], extra[64];
        sim_result res;
        snprintf(extra, sizeof extra, "scheduler = %s\n", sched[i]);
        lone_text(text, sizeof text, 2, 100, 1, extra);
        run_text(text, 1, &res);
        cr_expect_eq(tsim_n(&res, "served"), 2, "%s", sched[i]);
        cr_expect_float_eq(tsim_sys(&res, "ttft")->mean, 15.0, 2e-6, "%s ttft %.9f", sched[i],
                           tsim_sys(&res, "ttft")->mean);
        cr_expect_float_eq(tsim_sys(&res, "e2e")->mean, 15.0, 2e-6, "%s e2e %.9f", sched[i],
                           tsim_sys(&res, "e2e")->mean);
        cr_expect_eq(tsim_sys(&res, "tpot")->n, 0, "%s", sched[i]);
        cr_expect_eq(tsim_pv(&res, 0, "steps"), 2, "%s steps %llu", sched[i],
                     (unsigned long long) tsim_pv(&res, 0, "steps"));
        sim_result_free(&res);
    }
}

/* ---- 2. KV-cache capacity ---------------------------------------------------- */

static void kv_run(const char *pool_extra, sim_result *res)
{
    char text[2048];
    snprintf(text, sizeof text,
             "[sim]\nrequests = 1\nwarmup = 0\n"
             "[workload]\narrival = constant\nrate = 0.001\n"
             "prompt_tokens = const(100)\noutput_tokens = const(4)\n"
             "[pool chat]\nkind = llm\n%s", pool_extra);
    run_text(text, 1, res);
}

/* Llama-3-8B (8.03e9 params, 32 layers, 8 KV heads of 128, hidden 4096,
 * intermediate 14336, vocabulary 128256) in bf16 on one H100, vLLM's rule
 * (docs/llm.md, "KV capacity"):
 *   requested   = 0.9 x 79.18 GiB (the H100's usable memory, catalog)
 *   weights     = 8.03e9 x 2 = 16.06e9 bytes
 *   activations = the profiling pass at max_batch_tokens T = 8192, sampling
 *                 min(max_batch 256, T) = 256 rows:
 *                 sampler 256 x 128256 x 38.5 + 8192 x 4096 x 2 = 1331200000 bytes;
 *                 forward 8192 x (2 x 4096 + 3 x 14336) x 2 = 838860800: the sampler's
 *   non-torch   = 0.13 GiB (one GPU)
 *   KV bytes    = 0.9 x 79.18 GiB - 16.06e9 - 1331200000 - 0.13 GiB = 58986203424.8
 *   blocks      = floor(KV / (16 x 131072)) = floor(28126.8) = 28126. */
Test(llm_kv, llama3_8b_h100_bf16)
{
    double act = 256.0 * 128256 * 38.5 + 8192.0 * 4096 * 2;
    cr_assert_gt(act, 8192.0 * (2 * 4096 + 3 * 14336) * 2, "the sampler's peak is the larger");
    double kv_bytes = 79.18 * GiB * 0.9 - 8.03e9 * 2 - act - 0.13 * GiB;
    double per_block = 16.0 * (2.0 * 32 * 8 * 128 * 2);
    int64_t expect = (int64_t) floor(kv_bytes / per_block);
    cr_assert_eq(expect, 28126);

    sim_result res;
    kv_run("model = llama-3-8b\ngpu = h100\n", &res);
    cr_expect_eq(tsim_pv(&res, 0, "kv_blocks"), expect, "kv_blocks %lld", (long long) tsim_pv(&res, 0, "kv_blocks"));
    cr_expect_float_eq(tsim_pv(&res, 0, "kv_gib"), kv_bytes / GiB, 1e-9);
    /* max_seq_len = min(model context 8192, KV tokens, max_batch_tokens 8192). */
    cr_expect_eq(tsim_pv(&res, 0, "max_seq_len"), 8192);
    cr_expect_eq(tsim_pv(&res, 0, "gpus"), 1);
    cr_expect_eq(tsim_n(&res, "served"), 1);
    sim_result_free(&res);

    /* The listed defaults, written out, give the same answer. */
    kv_run("model = llama-3-8b\ngpu = h100\ngpu_memory_utilization = 0.9\nkv_blocks = derived\n"
           "activation_reserve_gib = profiled\ncuda_graph_gib = 0\nblock_tokens = 16\nweights = bf16\nkv_dtype = bf16\n", &res);
    cr_expect_eq(tsim_pv(&res, 0, "kv_blocks"), expect);
    sim_result_free(&res);

    /* block_tokens = 32 halves the block count (floor of the same bytes). */
    kv_run("model = llama-3-8b\ngpu = h100\nblock_tokens = 32\n", &res);
    cr_expect_eq(tsim_pv(&res, 0, "kv_blocks"), (int64_t) floor(kv_bytes / (2 * per_block)));
    sim_result_free(&res);

    /* Each term given: a set activation reserve, non-torch memory and CUDA graph pool. */
    kv_run("model = llama-3-8b\ngpu = h100\nactivation_reserve_gib = 2\nnon_torch_gib = 0.5\ncuda_graph_gib = 0.25\n", &res);
    cr_expect_eq(tsim_pv(&res, 0, "kv_blocks"),
                 (int64_t) floor((79.18 * GiB * 0.9 - 8.03e9 * 2 - 2.75 * GiB) / per_block));
    sim_result_free(&res);
}

/* The profiled activations follow the profiling pass: max_num_seqs rows of the
 * vocabulary in the sampler, the step's tokens in the forward pass.
 *   max_batch = 1024 (at T = 8192): sampler 1024 x 128256 x 38.5 + 8192 x 4096 x 2
 *   max_batch_tokens = 65536, max_batch = 256: forward 65536 x 51200 x 2 = 6710886400
 *     > sampler 256 x 128256 x 38.5 + 65536 x 4096 x 2 = 1800962048. */
Test(llm_kv, profiled_activations)
{
    double per_block = 16.0 * 131072;
    double act1 = 1024.0 * 128256 * 38.5 + 8192.0 * 4096 * 2;
    double act2 = 65536.0 * (2 * 4096 + 3 * 14336) * 2;
    cr_assert_gt(act2, 256.0 * 128256 * 38.5 + 65536.0 * 4096 * 2);
    sim_result res;
    kv_run("model = llama-3-8b\ngpu = h100\nmax_batch = 1024\n", &res);
    cr_expect_eq(tsim_pv(&res, 0, "kv_blocks"),
                 (int64_t) floor((79.18 * GiB * 0.9 - 16.06e9 - act1 - 0.13 * GiB) / per_block));
    sim_result_free(&res);
    kv_run("model = llama-3-8b\ngpu = h100\nmax_batch_tokens = 65536\n", &res);
    cr_expect_eq(tsim_pv(&res, 0, "kv_blocks"),
                 (int64_t) floor((79.18 * GiB * 0.9 - 16.06e9 - act2 - 0.13 * GiB) / per_block));
    sim_result_free(&res);
    /* chunked: its step is chunk_tokens (within max_batch_tokens): 512 tokens here. */
    kv_run("model = llama-3-8b\ngpu = h100\nscheduler = chunked\nmax_batch_tokens = 65536\n", &res);
    cr_expect_eq(tsim_pv(&res, 0, "kv_blocks"),
                 (int64_t) floor((79.18 * GiB * 0.9 - 16.06e9 - (256.0 * 128256 * 38.5 + 512.0 * 4096 * 2)
                                  - 0.13 * GiB) / per_block));
    sim_result_free(&res);
}

/* A GPU without a measured usable memory: mem_gib x 0.98 (a [gpu] section's). */
Test(llm_kv, usable_memory_default)
{
    sim_result res;
    kv_run("model = llama-3-8b\ngpu = g24\nactivation_reserve_gib = 1\nnon_torch_gib = 0\n"
           "[gpu g24]\nbf16_tflops = 100\nmem_gib = 24\nmem_bw_gbs = 1000\n", &res);
    cr_expect_eq(tsim_pv(&res, 0, "kv_blocks"),
                 (int64_t) floor((24 * 0.98 * GiB * 0.9 - 16.06e9 - 1.0 * GiB) / (16.0 * 131072)));
    sim_result_free(&res);
    kv_run("model = llama-3-8b\ngpu = g24\nactivation_reserve_gib = 1\nnon_torch_gib = 0\n"
           "[gpu g24]\nbf16_tflops = 100\nmem_gib = 24\nmem_usable_gib = 23.5\nmem_bw_gbs = 1000\n", &res);
    cr_expect_eq(tsim_pv(&res, 0, "kv_blocks"),
                 (int64_t) floor((23.5 * GiB * 0.9 - 16.06e9 - 1.0 * GiB) / (16.0 * 131072)));
    sim_result_free(&res);
}

/* The real run (tests/data/observed: vLLM 0.19, Llama-3.1-8B bf16 on one RTX
 * 4090, max_num_batched_tokens 2048, max_num_seqs 256, utilisation 0.9) logged
 * 2588 blocks.  Derived: 0.9 x 25250627584 - 16.06e9 - (256 x 128256 x 38.5 +
 * 2048 x 4096 x 2) - 0.13 GiB = 5245110036 bytes = 2501 blocks, -3.4 % (the old
 * rule, 24 GiB x 0.9 - weights - 1 GiB, gave 2888: +11.6 %). */
Test(llm_kv, rtx4090_observed_run)
{
    double kv = 25250627584.0 * 0.9 - 8.03e9 * 2 - (256.0 * 128256 * 38.5 + 2048.0 * 4096 * 2) - 0.13 * GiB;
    int64_t expect = (int64_t) floor(kv / (16.0 * 131072));
    cr_assert_eq(expect, 2501);
    cr_expect_lt(fabs(expect - 2588.0) / 2588.0, 0.035, "within 3.5 %% of the engine's 2588");
    sim_result res;
    kv_run("model = llama-3-8b\ngpu = rtx-4090\nscheduler = chunked\nchunk_tokens = 2048\nmax_batch_tokens = 2048\n",
           &res);
    cr_expect_eq(tsim_pv(&res, 0, "kv_blocks"), expect, "kv_blocks %g", tsim_pv(&res, 0, "kv_blocks"));
    sim_result_free(&res);
}

/* Llama-3-70B (70.55e9 params, 80 layers, 8 KV heads) at tp = 2 on H100s:
 * each GPU holds half the weights and 4 of the 8 KV heads; a set activation
 * reserve of 1 GiB and no non-torch memory isolate the sharding:
 *   KV bytes per GPU = 0.9 x 79.18 GiB - 70.55e9 * 2 / 2 - 1 GiB
 *   bytes per block per GPU = 16 * (2 * 80 * 4 * 128 * 2) = 16 * 163840 = 2621440
 *   blocks = floor(1866.6...) = 1866.  Non-torch memory by default: 0.55 GiB on
 *   more than one GPU. */
Test(llm_kv, llama3_70b_h100_tp2)
{
    double kv_bytes = 79.18 * GiB * 0.9 - 70.55e9 * 2 / 2 - 1.0 * GiB;
    double per_block = 16.0 * (2.0 * 80 * (8 / 2) * 128 * 2);
    int64_t expect = (int64_t) floor(kv_bytes / per_block);
    cr_assert_eq(expect, 1866);

    sim_result res;
    kv_run("model = llama-3-70b\ngpu = h100\ntp = 2\nactivation_reserve_gib = 1\nnon_torch_gib = 0\n", &res);
    cr_expect_eq(tsim_pv(&res, 0, "kv_blocks"), expect, "kv_blocks %lld", (long long) tsim_pv(&res, 0, "kv_blocks"));
    cr_expect_eq(tsim_pv(&res, 0, "gpus"), 2);
    /* 1866 * 16 = 29856 tokens > 8192: max_seq_len is the model context. */
    cr_expect_eq(tsim_pv(&res, 0, "max_seq_len"), 8192);
    cr_expect_eq(tsim_n(&res, "served"), 1);
    sim_result_free(&res);

    kv_run("model = llama-3-70b\ngpu = h100\ntp = 2\nactivation_reserve_gib = 1\n", &res);
    cr_expect_eq(tsim_pv(&res, 0, "kv_blocks"), (int64_t) floor((kv_bytes - 0.55 * GiB) / per_block));
    sim_result_free(&res);

    /* tp = 4: a quarter of the weights and 2 KV heads per GPU. */
    kv_bytes = 79.18 * GiB * 0.9 - 70.55e9 * 2 / 4 - 1.0 * GiB;
    per_block = 16.0 * (2.0 * 80 * (8 / 4) * 128 * 2);
    kv_run("model = llama-3-70b\ngpu = h100\ntp = 4\nactivation_reserve_gib = 1\nnon_torch_gib = 0\n", &res);
    cr_expect_eq(tsim_pv(&res, 0, "kv_blocks"), (int64_t) floor(kv_bytes / per_block));
    cr_expect_eq(tsim_pv(&res, 0, "gpus"), 4);
    sim_result_free(&res);
}

/* fp8 KV: one byte per element, so the per-block size halves and the block
 * count is floor(2x) of bf16's floor(x): 2 * 28126 or 2 * 28126 + 1. */
Test(llm_kv, fp8_kv_doubles_capacity)
{
    double act = 256.0 * 128256 * 38.5 + 8192.0 * 4096 * 2;
    double kv_bytes = 79.18 * GiB * 0.9 - 8.03e9 * 2 - act - 0.13 * GiB;
    int64_t bf16 = (int64_t) floor(kv_bytes / (16.0 * 2 * 32 * 8 * 128 * 2));
    int64_t fp8 = (int64_t) floor(kv_bytes / (16.0 * 2 * 32 * 8 * 128 * 1));
    cr_assert_eq(fp8, 56253);

    sim_result res;
    kv_run("model = llama-3-8b\ngpu = h100\nkv_dtype = fp8\n", &res);
    cr_expect_eq(tsim_pv(&res, 0, "kv_blocks"), fp8, "kv_blocks %lld", (long long) tsim_pv(&res, 0, "kv_blocks"));
    cr_expect(tsim_pv(&res, 0, "kv_blocks") == 2 * bf16 || tsim_pv(&res, 0, "kv_blocks") == 2 * bf16 + 1);
    sim_result_free(&res);

    /* fp8 weights free half the weight memory: 8.03e9 bytes. */
    kv_run("model = llama-3-8b\ngpu = h100\nweights = fp8\n", &res);
    cr_expect_eq(tsim_pv(&res, 0, "kv_blocks"),
                 (int64_t) floor((79.18 * GiB * 0.9 - 8.03e9 - act - 0.13 * GiB) / (16.0 * 131072)));
    sim_result_free(&res);
}

/* kv_blocks given: it overrides the derivation; max_seq_len is capped by it. */
Test(llm_kv, given_kv_blocks_override)
{
    sim_result res;
    kv_run("model = llama-3-8b\ngpu = h100\nkv_blocks = 100\n", &res);
    cr_expect_eq(tsim_pv(&res, 0, "kv_blocks"), 100);
    cr_expect_eq(tsim_pv(&res, 0, "max_seq_len"), 1600);
    sim_result_free(&res);
}

/* ---- 3. continuous vs static batching ----------------------------------------- */

/* Capacity is measured by overload, not by bisection on the saturation flag
 * (which depends on a noisy queue-growth heuristic near the knee): every
 * request arrives within ~2 ms (constant arrivals at 1e6/s), so the queue
 * holds everything from the start and each replica runs flat out with full
 * batches; the measured window runs from the first measured arrival to the
 * last measured completion, so served / window_s is the service capacity.
 * The warm-up (2 * max_batch requests) skips static's first batch, formed
 * when only one request had arrived.  Arrivals keep coming behind the last
 * measured request (FIFO), so the last batches stay full too; there is no
 * tail bias.  Outputs (and prompts) vary, which is where continuous batching
 * wins: a static batch decodes until its longest output is done and is
 * prefilled padded to its longest prompt.
 *
 * Mean queueing is then compared at the same Poisson load, half of static's
 * capacity, where both are stable. */
static void batching_text(char *buf, size_t n, const char *sched, const char *arrival, double rate,
                          int nreq, int warmup)
{
    snprintf(buf, n,
             "[sim]\nrequests = %d\nwarmup = %d\n"
             "[workload]\narrival = %s\nrate = %.9g\n"
             "prompt_tokens = lognormal(mean=200, cv=1.0)\noutput_tokens = lognormal(mean=200, cv=1.0)\n"
             "[pool chat]\nkind = llm\nmodel = llama-3-8b\ngpu = h100\n"
             "cost = linear\nstep_base_ms = 5\nprefill_ms_per_token = 0.05\n"
             "decode_ms_per_seq = 0.05\nkv_ms_per_1k_tokens = 0.01\n"
             "scheduler = %s\nmax_batch = 32\n",
             nreq, warmup, arrival, rate, sched);
}

Test(llm_batching, continuous_beats_static)
{
    char text[2048];
    sim_result st, ct;

    batching_text(text, sizeof text, "static", "constant", 1e6, 1500, 64);
    run_text(text, 7, &st);
    batching_text(text, sizeof text, "continuous", "constant", 1e6, 1500, 64);
    run_text(text, 7, &ct);
    cr_assert_eq(tsim_n(&st, "served"), 1500);
    cr_assert_eq(tsim_n(&ct, "served"), 1500);
    double cap_static = tsim_v(&st, "throughput_rps"), cap_cont = tsim_v(&ct, "throughput_rps");
    cr_log_info("capacity: static %.3f rps (mean batch %.2f), continuous %.3f rps (mean batch %.2f)",
                cap_static, tsim_pv(&st, 0, "mean_batch"), cap_cont, tsim_pv(&ct, 0, "mean_batch"));
    cr_expect_gt(cap_static, 0);
    cr_expect_geq(cap_cont, 1.5 * cap_static, "continuous %.3f rps vs static %.3f rps", cap_cont, cap_static);
    /* Flat out, both keep their batches (nearly) full, never above max_batch. */
    cr_expect_leq(tsim_pv(&st, 0, "mean_batch"), 32.0 + 1e-9);
    cr_expect_leq(tsim_pv(&ct, 0, "mean_batch"), 32.0 + 1e-9);
    cr_expect_gt(tsim_pv(&ct, 0, "mean_batch"), 30.0);
    sim_result_free(&st);
    sim_result_free(&ct);

    /* The same load for both: half of static's capacity. */
    double rate = 0.5 * cap_static;
    batching_text(text, sizeof text, "static", "poisson", rate, 3000, 300);
    run_text(text, 11, &st);
    batching_text(text, sizeof text, "continuous", "poisson", rate, 3000, 300);
    run_text(text, 11, &ct);
    cr_log_info("at %.3f rps: queue static %.1f ms, continuous %.3f ms; sat %d %d", rate, tsim_sys(&st, "queue")->mean,
                tsim_sys(&ct, "queue")->mean, tsim_sat(&st), tsim_sat(&ct));
    cr_expect_eq(tsim_sat(&st), 0, "static saturated at half its capacity");
    cr_expect_eq(tsim_sat(&ct), 0);
    cr_expect_eq(tsim_n(&st, "served"), 3000);
    cr_expect_eq(tsim_n(&ct, "served"), 3000);
    cr_expect_lt(tsim_sys(&ct, "queue")->mean, tsim_sys(&st, "queue")->mean,
                 "queue: continuous %.3f ms vs static %.3f ms", tsim_sys(&ct, "queue")->mean,
                 tsim_sys(&st, "queue")->mean);
    cr_expect_lt(tsim_sys(&ct, "ttft")->mean, tsim_sys(&st, "ttft")->mean);
    sim_result_free(&st);
    sim_result_free(&ct);
}

/* ---- 4. preemption -------------------------------------------------------------- */

/* kv_blocks = 64 (1024 tokens): prompts of 100 tokens take 7 blocks each, so
 * 9 sequences are admitted; each grows to 100 + 400 tokens (32 blocks), so the
 * cache runs out and the newest are preempted and recomputed later. */
static void preempt_text(char *buf, size_t n, const char *sched, const char *extra, int kv_blocks)
{
    char kv[64] = "";
    if (kv_blocks > 0) snprintf(kv, sizeof kv, "kv_blocks = %d\n", kv_blocks);
    snprintf(buf, n,
             "[sim]\nrequests = 150\nwarmup = 10\n"
             "[workload]\narrival = poisson\nrate = 20\n"
             "prompt_tokens = const(100)\noutput_tokens = const(400)\n"
             "[pool chat]\nkind = llm\nmodel = llama-3-8b\ngpu = h100\n" LINEAR_KEYS
             "scheduler = %s\n%sblock_tokens = 16\n%s",
             sched, kv, extra);
}

static void check_conservation(const sim_result *res)
{
    cr_expect_eq(tsim_n(res, "served") + tsim_n(res, "rejected") + tsim_n(res, "timed_out"), tsim_n(res, "requests"),
                 "served %llu + rejected %llu + timed out %llu != %llu", (unsigned long long) tsim_n(res, "served"),
                 (unsigned long long) tsim_n(res, "rejected"), (unsigned long long) tsim_n(res, "timed_out"),
                 (unsigned long long) tsim_n(res, "requests"));
    tsim_pr p = tsim_pool_at(res, 0);
    cr_expect_eq(tsim_prv(p, "arrivals"), tsim_n(res, "requests"));
    cr_expect_eq(tsim_prv(p, "served") + tsim_prv(p, "rejected") + tsim_prv(p, "timed_out"), tsim_prv(p, "arrivals"));
    cr_expect_eq(tsim_prv(p, "served"), tsim_n(res, "served"));
    /* Every served request produced all its tokens and its first token once. */
    cr_expect_eq(tsim_sys(res, "ttft")->n, tsim_n(res, "served"));
    /* Throughput counts every request leaving during the window (warm-up ones
     * included), each with its 400 tokens. */
    cr_expect_float_eq(tsim_v(res, "output_tokens_per_s") * tsim_v(res, "window_s"),
                       (double) tsim_n(res, "departures") * 400,
                       1e-6 * tsim_n(res, "departures") * 400);
    cr_expect_float_eq(tsim_v(res, "throughput_rps") * tsim_v(res, "window_s"), (double) tsim_n(res, "departures"),
                       1e-6 * tsim_n(res, "departures"));
}

Test(llm_preempt, small_kv_preempts_and_loses_nothing)
{
    const char *sched[] = { "continuous", "chunked" };
    for (int i = 0; i < 2; i++) {
        char text[2048];
        sim_result res;
        preempt_text(text, sizeof text, sched[i], i == 1 ? "chunk_tokens = 64\n" : "", 64);
        run_text(text, 3, &res);
        cr_log_info("%s: preemptions %llu, served %llu, kv_peak %.3f", sched[i],
                    (unsigned long long) tsim_pv(&res, 0, "preemptions"),
                    (unsigned long long) tsim_n(&res, "served"),
                    tsim_pv(&res, 0, "kv_peak"));
        cr_expect_eq(tsim_pv(&res, 0, "kv_blocks"), 64);
        cr_expect_gt(tsim_pv(&res, 0, "preemptions"), 0, "%s: no preemption", sched[i]);
        cr_expect_eq(tsim_n(&res, "served"), 150, "%s", sched[i]);
        check_conservation(&res);
        cr_expect_leq(tsim_pv(&res, 0, "kv_peak"), 1.0 + 1e-12);
        /* A preempted request is recomputed, so it takes longer than alone:
         * no request is faster than a lone one (15 ms + 399 decode steps). */
        cr_expect_geq(tsim_sys(&res, "e2e")->max, 15 + lone_decode_ms(100, 400) - 1e-3);
        sim_result_free(&res);
    }
}

/* With queue_limit and timeout_ms as well: every measured request still has
 * exactly one outcome. */
Test(llm_preempt, conservation_with_limits)
{
    const char *sched[] = { "continuous", "chunked" };
    for (int i = 0; i < 2; i++) {
        char text[2048], extra[128];
        sim_result res;
        snprintf(extra, sizeof extra, "queue_limit = 8\ntimeout_ms = 3000\n%s",
                 i == 1 ? "chunk_tokens = 64\n" : "");
        preempt_text(text, sizeof text, sched[i], extra, 64);
        run_text(text, 5, &res);
        cr_log_info("%s limits: served %llu rejected %llu timed out %llu preemptions %llu", sched[i],
                    (unsigned long long) tsim_n(&res, "served"), (unsigned long long) tsim_n(&res, "rejected"),
                    (unsigned long long) tsim_n(&res, "timed_out"),
                    (unsigned long long) tsim_pv(&res, 0, "preemptions"));
        cr_expect_gt(tsim_pv(&res, 0, "preemptions"), 0, "%s", sched[i]);
        cr_expect_gt(tsim_n(&res, "rejected") + tsim_n(&res, "timed_out"), 0, "%s: limits never hit", sched[i]);
        check_conservation(&res);
        sim_result_free(&res);
    }
}

/* Static and dynamic reserve prompt + output blocks at admission: they never
 * preempt, even with a tiny cache, and lose nothing. */
Test(llm_preempt, static_reserves_never_preempts)
{
    const char *sched[] = { "static", "dynamic" };
    for (int i = 0; i < 2; i++) {
        char text[2048];
        sim_result res;
        preempt_text(text, sizeof text, sched[i], "", 64);
        run_text(text, 3, &res);
        cr_expect_eq(tsim_pv(&res, 0, "preemptions"), 0, "%s", sched[i]);
        cr_expect_eq(tsim_n(&res, "served"), 150, "%s", sched[i]);
        check_conservation(&res);
        sim_result_free(&res);
    }
}

/* The same load with the derived cache (28126 blocks; chunked's 64-token steps
 * profile 64 sampler rows: 28610): no preemption. */
Test(llm_preempt, plentiful_kv_never_preempts)
{
    const char *sched[] = { "continuous", "chunked" };
    for (int i = 0; i < 2; i++) {
        char text[2048];
        sim_result res;
        preempt_text(text, sizeof text, sched[i], i == 1 ? "chunk_tokens = 64\n" : "", 0);
        run_text(text, 3, &res);
        cr_expect_eq(tsim_pv(&res, 0, "kv_blocks"), i == 0 ? 28126 : 28610);
        cr_expect_eq(tsim_pv(&res, 0, "preemptions"), 0, "%s", sched[i]);
        cr_expect_eq(tsim_n(&res, "served"), 150);
        check_conservation(&res);
        sim_result_free(&res);
    }
}

/* ---- 5. configuration errors ------------------------------------------------------ */

#define ERR_HEAD \
    "[sim]\nrequests = 10\nwarmup = 0\n[workload]\narrival = constant\nrate = 1\n"

Test(llm_errors, unknown_model_lists_valid)
{
    expect_error(ERR_HEAD "[pool chat]\nkind = llm\nmodel = gpt-9\ngpu = h100\n",
                 "[pool chat] model", "gpt-9", "valid", "llama-3-8b", "llama-3-70b", NULL);
}

Test(llm_errors, unknown_gpu_lists_valid)
{
    expect_error(ERR_HEAD "[pool chat]\nkind = llm\nmodel = llama-3-8b\ngpu = tpu-v9\n",
                 "[pool chat] gpu", "tpu-v9", "valid", "h100", "a100", "l4", NULL);
}

Test(llm_errors, tp_must_divide_heads)
{
    expect_error(ERR_HEAD "[pool chat]\nkind = llm\nmodel = llama-3-8b\ngpu = h100\ntp = 3\n",
                 "[pool chat] tp", "tp = 3", "32", NULL);
}

Test(llm_errors, model_does_not_fit)
{
    /* 70.55e9 * 2 bytes = 131 GiB of weights against 24 GiB * 0.9. */
    expect_error(ERR_HEAD "[pool chat]\nkind = llm\nmodel = llama-3-70b\ngpu = l4\n",
                 "[pool chat] tp", "does not fit", "llama-3-70b", NULL);
}

Test(llm_errors, prompt_longer_than_kv)
{
    /* 10 blocks of 16 = 160 tokens; every prompt has 200. */
    expect_error("[sim]\nrequests = 10\nwarmup = 0\n[workload]\narrival = constant\nrate = 1\n"
                 "prompt_tokens = const(200)\noutput_tokens = const(10)\n"
                 "[pool chat]\nkind = llm\nmodel = llama-3-8b\ngpu = h100\nkv_blocks = 10\n",
                 "[workload] prompt_tokens", "160", NULL);
}

Test(llm_errors, max_seq_len_beyond_kv)
{
    expect_error(ERR_HEAD "prompt_tokens = const(20)\noutput_tokens = const(10)\n"
                 "[pool chat]\nkind = llm\nmodel = llama-3-8b\ngpu = h100\nkv_blocks = 10\nmax_seq_len = 200\n",
                 "[pool chat] max_seq_len", "200", "160", NULL);
}

/* Sanity: the same pools with valid values load. */
Test(llm_errors, valid_variants_load)
{
    scenario sc;
    char err[1024];
    cr_expect_eq(load_resolve(ERR_HEAD "prompt_tokens = const(20)\noutput_tokens = const(10)\n"
                              "[pool chat]\nkind = llm\nmodel = llama-3-8b\ngpu = h100\nkv_blocks = 10\n"
                              "max_seq_len = 160\n", &sc, err, sizeof err), 0, "%s", err);
    scenario_free(&sc);
    cr_expect_eq(load_resolve(ERR_HEAD "[pool chat]\nkind = llm\nmodel = llama-3-8b\ngpu = h100\ntp = 4\n",
                              &sc, err, sizeof err), 0, "%s", err);
    scenario_free(&sc);
    cr_expect_eq(load_resolve(ERR_HEAD "[pool chat]\nkind = llm\nmodel = llama-3-70b\ngpu = l4\ntp = 8\n"
                              "weights = int4\n", &sc, err, sizeof err), 0, "%s", err);
    scenario_free(&sc);
}

/* ---- 6. static vs dynamic batch size ------------------------------------------------- */

/* At 20 requests/s, a lone batch takes 15 + 10 * 5.05 = 65.5 ms: static
 * starts a batch with whatever is waiting (often one request), dynamic holds
 * a batch for up to 50 ms so that more requests join. */
Test(llm_dynamic, dynamic_batches_more_than_static)
{
    const char *sched[] = { "static", "dynamic" };
    double mb[2];
    for (int i = 0; i < 2; i++) {
        char text[2048];
        sim_result res;
        snprintf(text, sizeof text,
                 "[sim]\nrequests = 3000\nwarmup = 300\n"
                 "[workload]\narrival = poisson\nrate = 20\n"
                 "prompt_tokens = const(100)\noutput_tokens = const(11)\n"
                 "[pool chat]\nkind = llm\nmodel = llama-3-8b\ngpu = h100\n" LINEAR_KEYS
                 "scheduler = %s\nmax_batch = 16\n%s",
                 sched[i], i ? "max_wait_ms = 50\n" : "");
        run_text(text, 2, &res);
        mb[i] = tsim_pv(&res, 0, "mean_batch");
        cr_expect_eq(tsim_n(&res, "served"), 3000);
        cr_expect_eq(tsim_sat(&res), 0, "%s", sched[i]);
        cr_expect_geq(mb[i], 1.0);
        cr_expect_leq(mb[i], 16.0);
        sim_result_free(&res);
    }
    cr_log_info("mean batch: static %.3f, dynamic %.3f", mb[0], mb[1]);
    cr_expect_gt(mb[1], mb[0], "dynamic %.3f vs static %.3f", mb[1], mb[0]);
}

/* mean_batch <= max_batch for every scheduler, flat out. */
Test(llm_dynamic, mean_batch_at_most_max_batch)
{
    const char *sched[] = { "static", "dynamic", "continuous", "chunked" };
    for (int i = 0; i < 4; i++) {
        char text[2048];
        sim_result res;
        snprintf(text, sizeof text,
                 "[sim]\nrequests = 600\nwarmup = 50\n"
                 "[workload]\narrival = poisson\nrate = 2000\n"
                 "prompt_tokens = uniform(min=50, max=300)\noutput_tokens = uniform(min=1, max=60)\n"
                 "[pool chat]\nkind = llm\nmodel = llama-3-8b\ngpu = h100\n" LINEAR_KEYS
                 "scheduler = %s\nmax_batch = 8\n%s",
                 sched[i], i == 1 ? "max_wait_ms = 5\n" : i == 3 ? "chunk_tokens = 128\n" : "");
        run_text(text, 4, &res);
        cr_log_info("%s: mean batch %.3f", sched[i], tsim_pv(&res, 0, "mean_batch"));
        cr_expect_leq(tsim_pv(&res, 0, "mean_batch"), 8.0 + 1e-9, "%s: %g", sched[i], tsim_pv(&res, 0, "mean_batch"));
        cr_expect_gt(tsim_pv(&res, 0, "mean_batch"), 4.0, "%s: %g", sched[i], tsim_pv(&res, 0, "mean_batch"));
        cr_expect_eq(tsim_n(&res, "served") + tsim_n(&res, "rejected") + tsim_n(&res, "timed_out"),
                     tsim_n(&res, "requests"));
        sim_result_free(&res);
    }
}

/* ---- 7. token conservation ------------------------------------------------------------ */

Test(llm_tokens, output_tokens_conserved)
{
    const char *sched[] = { "continuous", "chunked" };
    for (int i = 0; i < 2; i++) {
        char text[2048];
        sim_result res;
        snprintf(text, sizeof text,
                 "[sim]\nrequests = 2000\nwarmup = 200\n"
                 "[workload]\narrival = poisson\nrate = 30\n"
                 "prompt_tokens = const(200)\noutput_tokens = const(50)\n"
                 "[pool chat]\nkind = llm\nmodel = llama-3-8b\ngpu = h100\n" LINEAR_KEYS
                 "scheduler = %s\n%s",
                 sched[i], i ? "chunk_tokens = 64\n" : "");
        run_text(text, 9, &res);
        cr_expect_eq(tsim_n(&res, "served"), 2000);
        /* Departures in the window include the 2000 measured requests and any
         * other request leaving between the first measured arrival and the last
         * measured outcome; throughput and token rate are exactly those over it. */
        cr_expect_geq(tsim_n(&res, "departures"), 2000);
        double tokens = tsim_v(&res, "output_tokens_per_s") * tsim_v(&res, "window_s");
        cr_expect_float_eq(tokens, (double) tsim_n(&res, "departures") * 50, 1e-6 * tsim_n(&res, "departures") * 50,
                           "%s: %.9f tokens", sched[i], tokens);
        cr_expect_float_eq(tsim_v(&res, "throughput_rps") * tsim_v(&res, "window_s"),
                           (double) tsim_n(&res, "departures"),
                           1e-6 * tsim_n(&res, "departures"));
        cr_expect_eq(tsim_sys(&res, "tpot")->n, 2000);
        sim_result_free(&res);
    }
}

/* ---- 8. determinism -------------------------------------------------------------------- */

static void expect_same_summary(const stat_summary *a, const stat_summary *b, const char *what)
{
    cr_expect_eq(a->n, b->n, "%s n", what);
    cr_expect_eq(a->mean, b->mean, "%s mean", what);
    cr_expect_eq(a->sd, b->sd, "%s sd", what);
    cr_expect_eq(a->p50, b->p50, "%s p50", what);
    cr_expect_eq(a->p99, b->p99, "%s p99", what);
    cr_expect_eq(a->max, b->max, "%s max", what);
}

Test(llm_determinism, same_seed_same_results)
{
    const char *sched[] = { "static", "dynamic", "continuous", "chunked" };
    for (int i = 0; i < 4; i++) {
        char text[2048];
        sim_result a, b, c;
        /* Variable lengths and a small cache, so that preemption is exercised too. */
        snprintf(text, sizeof text,
                 "[sim]\nrequests = 400\nwarmup = 40\n"
                 "[workload]\narrival = poisson\nrate = 8\n"
                 "prompt_tokens = lognormal(mean=150, cv=0.8)\noutput_tokens = lognormal(mean=80, cv=1.0)\n"
                 "[pool chat]\nkind = llm\nmodel = llama-3-8b\ngpu = h100\nkv_blocks = 200\n"
                 "scheduler = %s\n%s",
                 sched[i], i == 1 ? "max_wait_ms = 10\n" : i == 3 ? "chunk_tokens = 128\n" : "");
        run_text(text, 42, &a);
        run_text(text, 42, &b);
        run_text(text, 43, &c);
        expect_same_summary(tsim_sys(&a, "ttft"), tsim_sys(&b, "ttft"), "ttft");
        expect_same_summary(tsim_sys(&a, "tpot"), tsim_sys(&b, "tpot"), "tpot");
        expect_same_summary(tsim_sys(&a, "e2e"), tsim_sys(&b, "e2e"), "e2e");
        expect_same_summary(tsim_sys(&a, "queue"), tsim_sys(&b, "queue"), "queue");
        cr_expect_eq(tsim_n(&a, "events"), tsim_n(&b, "events"));
        cr_expect_eq(tsim_n(&a, "served"), tsim_n(&b, "served"));
        cr_expect_eq(tsim_v(&a, "window_s"), tsim_v(&b, "window_s"));
        cr_expect_eq(tsim_pv(&a, 0, "steps"), tsim_pv(&b, 0, "steps"));
        cr_expect_eq(tsim_pv(&a, 0, "preemptions"), tsim_pv(&b, 0, "preemptions"));
        cr_expect_eq(tsim_pv(&a, 0, "mean_batch"), tsim_pv(&b, 0, "mean_batch"));
        /* Another seed gives another run. */
        cr_expect_neq(tsim_sys(&a, "ttft")->mean, tsim_sys(&c, "ttft")->mean, "%s: seeds 42 and 43 agree", sched[i]);
        sim_result_free(&a);
        sim_result_free(&b);
        sim_result_free(&c);
    }
}

/* ---- overlapping requests, step by step ------------------------------------------------ */

/* The duration of one step of the linear model above, rounded to ns exactly
 * as llm.c does (same expression as cost.c, so the same double). */
static simtime_t lin_ns(int64_t pf, int dec, int64_t kv)
{
    double ms = BASE_MS + PF_MS * (double) pf + DEC_MS * dec + KV_MS * (double) kv / 1000.0;
    return simtime_from_ms(ms);
}

#define NS_MS(t) simtime_to_ms(t)
/* Times below are replicated to the ns, so only double rounding remains. */
#define EXACT_TOL 1e-9

/* Two requests, P = 100, O = 11, A at 0 and B at 25 ms (constant rate 40/s).
 * Continuous:
 *   s0      A prefill 100                       -> A's first token
 *   s1, s2  A decodes (kv 101, 102); B arrives during s2 and waits for it
 *   s3      A decodes (kv 103) + B prefill 100  -> B's first token
 *   s4..10  both decode: kv (100 + s) + (97 + s)   (B: 100 cached at s4, base 96)
 *   s11..13 B alone: kv 97 + s; B's last token at the end of s13. */
/* Arrivals at fixed times and nothing else: a constant-rate source would keep
 * sending (unmeasured) requests while the measured ones are in the system
 * (sim.h), so overlap tests replay a trace of exactly N rows (times in ms, P
 * prompt and O output tokens each) and the source then ends.  The trace file
 * is a fresh temporary file, named in the scenario by its absolute path; it is
 * removed once the scenario is loaded (scenario_load_text reads it at once). */
/* Rows i = 0..nreq-1 arrive at ms[i] with P[i] prompt and O[i] output tokens. */
static void trace_text_rows(char *buf, size_t n, int nreq, const double *ms, const int *P, const int *O,
                            const char *extra)
{
    strcpy(trace_path, "/tmp/latsim_test_llm_XXXXXX");
    int fd = mkstemp(trace_path);
    cr_assert_geq(fd, 0);
    FILE *f = fdopen(fd, "w");
    cr_assert_not_null(f);
    fprintf(f, "t,prompt,output\n");
    for (int i = 0; i < nreq; i++) fprintf(f, "%.17g,%d,%d\n", ms[i], P[i], O[i]);
    fclose(f);
    snprintf(buf, n,
             "[sim]\nrequests = %d\nwarmup = 0\n"
             "[workload]\narrival = trace\ntrace = %s\ntime_column = t\ntime_format = milliseconds\n"
             "prompt_column = prompt\noutput_column = output\n"
             "[pool chat]\nkind = llm\nmodel = llama-3-8b\ngpu = h100\n" LINEAR_KEYS "%s",
             nreq, trace_path, extra);
}

static void trace_text(char *buf, size_t n, int nreq, const double *ms, int P, int O, const char *extra)
{
    int Ps[8], Os[8];
    cr_assert_leq(nreq, 8);
    for (int i = 0; i < nreq; i++) Ps[i] = P, Os[i] = O;
    trace_text_rows(buf, n, nreq, ms, Ps, Os, extra);
}

static void two_text(char *buf, size_t n, const char *extra)
{
    trace_text(buf, n, 2, (const double[]) { 0, 25 }, 100, 11, extra);
}

Test(llm_overlap, continuous_two_requests_exact)
{
    simtime_t t = 0, tB = simtime_from_ms(25), a_first, a_last, b_first, b_last, b_start;
    t += lin_ns(100, 0, 0);
    a_first = t;
    t += lin_ns(0, 1, 101);
    t += lin_ns(0, 1, 102);
    cr_assert(t > tB && t - lin_ns(0, 1, 102) < tB, "B must arrive during s2");
    b_start = t;
    t += lin_ns(100, 1, 103);
    b_first = t;
    for (int s = 4; s <= 10; s++) t += lin_ns(0, 2, (100 + s) + (97 + s));
    a_last = t;
    for (int s = 11; s <= 13; s++) t += lin_ns(0, 1, 97 + s);
    b_last = t;

    char text[2048];
    sim_result res;
    two_text(text, sizeof text, "scheduler = continuous\n");
    run_text(text, 1, &res);
    cr_assert_eq(tsim_n(&res, "served"), 2);
    cr_expect_float_eq(tsim_sys(&res, "ttft")->mean, (NS_MS(a_first) + NS_MS(b_first - tB)) / 2, EXACT_TOL, "ttft %.9f",
                       tsim_sys(&res, "ttft")->mean);
    cr_expect_float_eq(tsim_sys(&res, "tpot")->mean, (NS_MS(a_last - a_first) / 10 + NS_MS(b_last - b_first) / 10) / 2,
                       EXACT_TOL, "tpot %.9f", tsim_sys(&res, "tpot")->mean);
    cr_expect_float_eq(tsim_sys(&res, "e2e")->mean, (NS_MS(a_last) + NS_MS(b_last - tB)) / 2, EXACT_TOL, "e2e %.9f",
                       tsim_sys(&res, "e2e")->mean);
    cr_expect_float_eq(tsim_sys(&res, "e2e")->max, NS_MS(a_last), EXACT_TOL, "e2e max %.9f",
                       tsim_sys(&res, "e2e")->max);
    cr_expect_float_eq(tsim_sys(&res, "queue")->mean, NS_MS(b_start - tB) / 2, EXACT_TOL, "queue %.9f",
                       tsim_sys(&res, "queue")->mean);
    cr_expect_eq(tsim_pv(&res, 0, "steps"), 14);
    /* Sequences per step: 1, 1, 1, then 2 x 8 (s3..s10), then 1 x 3. */
    cr_expect_float_eq(tsim_pv(&res, 0, "mean_batch"), 22.0 / 14.0, 1e-12, "%g", tsim_pv(&res, 0, "mean_batch"));
    sim_result_free(&res);
}

/* Static: B waits for A's whole batch (s0..s10), then runs its own. */
Test(llm_overlap, static_two_requests_exact)
{
    simtime_t t = 0, tB = simtime_from_ms(25), a_first, a_last, b_first, b_last, b_start;
    t += lin_ns(100, 0, 0);
    a_first = t;
    for (int k = 1; k <= 10; k++) t += lin_ns(0, 1, 100 + k);
    a_last = b_start = t;
    t += lin_ns(100, 0, 0);
    b_first = t;
    for (int k = 1; k <= 10; k++) t += lin_ns(0, 1, 100 + k);
    b_last = t;

    char text[2048];
    sim_result res;
    two_text(text, sizeof text, "scheduler = static\n");
    run_text(text, 1, &res);
    cr_assert_eq(tsim_n(&res, "served"), 2);
    cr_expect_float_eq(tsim_sys(&res, "ttft")->mean, (NS_MS(a_first) + NS_MS(b_first - tB)) / 2, EXACT_TOL, "ttft %.9f",
                       tsim_sys(&res, "ttft")->mean);
    cr_expect_float_eq(tsim_sys(&res, "tpot")->mean, (NS_MS(a_last - a_first) + NS_MS(b_last - b_first)) / 20,
                       EXACT_TOL);
    cr_expect_float_eq(tsim_sys(&res, "queue")->mean, NS_MS(b_start - tB) / 2, EXACT_TOL, "queue %.9f",
                       tsim_sys(&res, "queue")->mean);
    cr_expect_eq(tsim_pv(&res, 0, "steps"), 22);
    cr_expect_float_eq(tsim_pv(&res, 0, "mean_batch"), 1.0, 1e-12);
    sim_result_free(&res);
}

/* Dynamic with max_batch = 2 and max_wait_ms = 100: A waits; B's arrival at
 * 25 ms fills the batch, which starts at once (not at A's 100 ms deadline):
 * prefill 2 x 100 tokens, then 10 decode steps of 2 sequences reading
 * 2 * (100 + k) KV tokens. */
Test(llm_overlap, dynamic_starts_when_batch_full)
{
    simtime_t t = simtime_from_ms(25), tB = t, first, last;
    t += lin_ns(200, 0, 0);
    first = t;
    for (int k = 1; k <= 10; k++) t += lin_ns(0, 2, 2 * (100 + k));
    last = t;

    char text[2048];
    sim_result res;
    two_text(text, sizeof text, "scheduler = dynamic\nmax_batch = 2\nmax_wait_ms = 100\n");
    run_text(text, 1, &res);
    cr_assert_eq(tsim_n(&res, "served"), 2);
    cr_expect_float_eq(tsim_sys(&res, "ttft")->mean, (NS_MS(first) + NS_MS(first - tB)) / 2, EXACT_TOL, "ttft %.9f",
                       tsim_sys(&res, "ttft")->mean);
    cr_expect_float_eq(tsim_sys(&res, "tpot")->mean, NS_MS(last - first) / 10, EXACT_TOL, "tpot %.9f",
                       tsim_sys(&res, "tpot")->mean);
    cr_expect_float_eq(tsim_sys(&res, "queue")->mean, NS_MS(tB) / 2, EXACT_TOL, "queue %.9f",
                       tsim_sys(&res, "queue")->mean);
    cr_expect_eq(tsim_pv(&res, 0, "steps"), 11);
    cr_expect_float_eq(tsim_pv(&res, 0, "mean_batch"), 2.0, 1e-12);
    sim_result_free(&res);
}

/* Two replicas: B goes to the idle second replica at once; both see lone
 * timings. */
Test(llm_overlap, two_replicas_serve_in_parallel)
{
    char text[2048];
    sim_result res;
    two_text(text, sizeof text, "scheduler = continuous\nreplicas = 2\n");
    run_text(text, 1, &res);
    cr_assert_eq(tsim_n(&res, "served"), 2);
    check_lone(&res, 2, 11, 15.0, lone_decode_ms(100, 11) / 10, 11, 1);
    cr_expect_float_eq(tsim_sys(&res, "queue")->mean, 0, 1e-12);
    cr_expect_eq(tsim_pv(&res, 0, "gpus"), 2);
    sim_result_free(&res);
}

/* One preemption, step by step.  kv_blocks = 4 (64 tokens), P = 16, O = 40,
 * A at 0, B at 5 ms (during A's prefill).  Decode step s writes cache
 * position base + s (A: base 15, B: base 14), taking a new block when that
 * position is a multiple of 16.
 *   s0       A prefill 16 (1 block)                       free 3
 *   s1       A decode, takes block 2 (pos 16); B admitted, prefill 16 (1 block)
 *                                                          free 1
 *   s2..16   both decode; B takes block 2 at s2 (pos 16)   free 0
 *   s17      A needs block 3 (pos 32): B, the newest, is preempted with 16
 *            tokens generated (1 + 15) and 2 blocks freed; A takes one, free 1;
 *            B needs blocks_for(16 + 16) = 2 to restart: it waits
 *   s17..39  A alone (block 4 at s33), finishes at s39, frees 4 blocks
 *   s40      B recomputes 32 tokens (prefill), producing token 17
 *   s41..63  B decodes its 23 remaining tokens, kv = 33 .. 55. */
Test(llm_preempt, one_preemption_exact)
{
    simtime_t T[64], t = 0, tB = simtime_from_ms(5);
    for (int s = 0; s < 64; s++) {
        simtime_t d;
        if (s == 0) d = lin_ns(16, 0, 0);
        else if (s == 1) d = lin_ns(16, 1, 15 + s + 1);
        else if (s <= 16) d = lin_ns(0, 2, (15 + s + 1) + (14 + s + 1));
        else if (s <= 39) d = lin_ns(0, 1, 15 + s + 1);
        else if (s == 40) d = lin_ns(32, 0, 0);
        else d = lin_ns(0, 1, -9 + s + 1);
        t += d;
        T[s] = t;          /* end of step s */
    }
    cr_assert(T[0] > tB, "B must arrive during s0");

    char text[2048];
    sim_result res;
    trace_text(text, sizeof text, 2, (const double[]) { 0, 5 }, 16, 40,
               "scheduler = continuous\nkv_blocks = 4\nblock_tokens = 16\n");
    run_text(text, 1, &res);
    cr_assert_eq(tsim_n(&res, "served"), 2);
    cr_expect_eq(tsim_pv(&res, 0, "preemptions"), 1);
    cr_expect_eq(tsim_pv(&res, 0, "steps"), 64, "steps %llu", (unsigned long long) tsim_pv(&res, 0, "steps"));
    cr_expect_float_eq(tsim_pv(&res, 0, "kv_peak"), 1.0, 1e-12);
    cr_expect_float_eq(tsim_sys(&res, "ttft")->mean, (NS_MS(T[0]) + NS_MS(T[1] - tB)) / 2, EXACT_TOL, "ttft %.9f",
                       tsim_sys(&res, "ttft")->mean);
    cr_expect_float_eq(tsim_sys(&res, "tpot")->mean, (NS_MS(T[39] - T[0]) / 39 + NS_MS(T[63] - T[1]) / 39) / 2,
                       EXACT_TOL,
                       "tpot %.9f", tsim_sys(&res, "tpot")->mean);
    cr_expect_float_eq(tsim_sys(&res, "e2e")->mean, (NS_MS(T[39]) + NS_MS(T[63] - tB)) / 2, EXACT_TOL, "e2e %.9f",
                       tsim_sys(&res, "e2e")->mean);
    cr_expect_float_eq(tsim_sys(&res, "e2e")->max, NS_MS(T[63] - tB), EXACT_TOL);
    /* The system's queueing counts both of B's waits: before its first start
     * (T0 - 5 ms) and after the preemption (from s17's start, T16, to s40's
     * start, T39). */
    cr_expect_float_eq(tsim_sys(&res, "queue")->mean, (NS_MS(T[0] - tB) + NS_MS(T[39] - T[16])) / 2, EXACT_TOL,
                       "queue %.9f",
                       tsim_sys(&res, "queue")->mean);
    sim_result_free(&res);
}

/* ---- roofline: the steps llm.c describes to the cost model ------------------------------ */

/* With the roofline model the prefill's attention pairs matter: a lone
 * request's prefill step is { prefill_tokens P, prefill_pairs P(P+1)/2,
 * prefill_seqs 1 }, a chunk of c after k cached tokens has pairs
 * c*k + c(c+1)/2, and decode step k is { decode_seqs 1, kv_tokens P + k }.
 * The expected times come from cost_step_ms on the scenario's own resolved
 * cost model, rounded per step like the simulator. */
static void roofline_lone(const char *sched_lines, int chunk)
{
    const int P = 1000, O = 20;
    char text[2048];
    snprintf(text, sizeof text,
             "[sim]\nrequests = 2\nwarmup = 0\n"
             "[workload]\narrival = constant\nrate = 0.001\n"
             "prompt_tokens = const(%d)\noutput_tokens = const(%d)\n"
             "[pool chat]\nkind = llm\nmodel = llama-3-8b\ngpu = h100\ncost = roofline\n%s",
             P, O, sched_lines);
    scenario sc;
    char err[1024];
    cr_assert_eq(load_resolve(text, &sc, err, sizeof err), 0, "%s", err);
    const cost_model *m = &llm_cfg_of(&sc.pools[0])->cost;
    /* The roofline (pinned: auto's default is the learned model, test_learned.c). */
    cost_info ci;
    cost_describe(m, &ci);
    cr_assert_str_eq(ci.kind, "roofline");

    simtime_t ttft = 0, dec = 0;
    int nsteps = 0;
    for (int k = 0; k < P; k += chunk) {
        int c = P - k < chunk ? P - k : chunk;
        cost_step st = { .prefill_tokens = c, .prefill_seqs = 1,
                         .prefill_pairs = (double) c * k + (double) c * (c + 1) / 2.0 };
        ttft += simtime_from_ms(cost_step_ms(m, &st));
        nsteps++;
    }
    for (int k = 1; k <= O - 1; k++) {
        cost_step st = { .decode_seqs = 1, .kv_tokens = P + k };
        dec += simtime_from_ms(cost_step_ms(m, &st));
        nsteps++;
    }

    sim_result res;
    cr_assert_eq(sim_run(&sc, 1, &res, err, sizeof err), 0, "%s", err);
    cr_expect_eq(tsim_n(&res, "served"), 2);
    cr_expect_float_eq(tsim_sys(&res, "ttft")->mean, NS_MS(ttft), EXACT_TOL, "%s ttft %.9f vs %.9f", sched_lines,
                       tsim_sys(&res, "ttft")->mean, NS_MS(ttft));
    cr_expect_float_eq(tsim_sys(&res, "tpot")->mean, NS_MS(dec) / (O - 1), EXACT_TOL, "%s tpot %.9f vs %.9f",
                       sched_lines,
                       tsim_sys(&res, "tpot")->mean, NS_MS(dec) / (O - 1));
    cr_expect_eq(tsim_pv(&res, 0, "steps"), (uint64_t) (2 * nsteps));
    cr_expect_gt(tsim_pv(&res, 0, "mfu"), 0);
    cr_expect_leq(tsim_pv(&res, 0, "mfu"), 1);
    cr_expect_leq(tsim_pv(&res, 0, "mbu"), 1);
    sim_result_free(&res);
    scenario_free(&sc);
}

/* cost = auto, the default, is calib's row: registered as latsim's main does. */
static void register_calibrated(void) { cr_assert_eq(ccost_register(), 0); }

Test(llm_roofline, lone_request_steps, .init = register_calibrated)
{
    roofline_lone("scheduler = continuous\n", 1000000);
    roofline_lone("scheduler = static\n", 1000000);
    roofline_lone("scheduler = chunked\nchunk_tokens = 256\n", 256);
}

/* KV blocks are neither leaked nor double-counted across many preemptions:
 * 300 requests of varied lengths thrash a 64-block cache, then, long after,
 * one request needing the whole cache (prompt 1000 + output 24 = 1024 tokens
 * = 64 blocks; 63 to be admitted) arrives.  With a single leaked block it
 * could never be admitted and the run would end with it unserved; served
 * alone, its timing is exactly a lone request's. */
Test(llm_preempt, no_block_leak_after_thrashing)
{
    enum { N = 301 };
    static double ms[N];
    static int P[N], O[N];
    uint32_t x = 12345;
    for (int i = 0; i < N - 1; i++) {
        x = x * 1664525u + 1013904223u;
        P[i] = 1 + (int) ((x >> 8) % 600);
        x = x * 1664525u + 1013904223u;
        O[i] = 1 + (int) ((x >> 8) % 400);
        ms[i] = 10.0 * i;
    }
    ms[N - 1] = 1e6;
    P[N - 1] = 1000;
    O[N - 1] = 24;
    /* The lone big request: prefill 1000 tokens (one step, or 16 chunks of at
     * most 64), then 23 decode steps. */
    double ttfts[2] = { BASE_MS + PF_MS * 1000, 16 * BASE_MS + PF_MS * 1000 }, dec = lone_decode_ms(1000, 24);

    const char *sched[] = { "continuous", "chunked" };
    const char *lines[] = { "scheduler = continuous\nkv_blocks = 64\n",
                            "scheduler = chunked\nchunk_tokens = 64\nkv_blocks = 64\n" };
    for (int i = 0; i < 2; i++) {
        char text[2048];
        sim_result res;
        double ttft = ttfts[i];
        trace_text_rows(text, sizeof text, N, ms, P, O, lines[i]);
        run_text(text, 1, &res);
        cr_log_info("%s: preemptions %llu, served %llu", sched[i], (unsigned long long) tsim_pv(&res, 0, "preemptions"),
                    (unsigned long long) tsim_n(&res, "served"));
        cr_expect_gt(tsim_pv(&res, 0, "preemptions"), 50, "%s", sched[i]);
        cr_expect_eq(tsim_n(&res, "served"), N, "%s: served %llu of %d", sched[i],
                     (unsigned long long) tsim_n(&res, "served"), N);
        cr_expect_leq(tsim_pv(&res, 0, "kv_peak"), 1.0);
        /* The big request is the last to finish, and it ran alone with the
         * lone timing: the window (first arrival at 0 to its last token)
         * is exactly 1e6 ms + its TTFT + 23 decode steps. */
        cr_expect_float_eq(tsim_v(&res, "window_s") * 1000, 1e6 + ttft + dec, 30 * STEP_TOL,
                           "%s: window %.9f ms vs %.9f",
                           sched[i], tsim_v(&res, "window_s") * 1000, 1e6 + ttft + dec);
        sim_result_free(&res);
    }
}

/* Chunked, chunk_tokens = 64, P = 100, O = 11; A at 0, B at 5 ms (during
 * A's first chunk).  Decodes go first, then the chunk budget goes to the
 * prefill in progress, then to newcomers:
 *   s0      A chunk 64                              (11.4 ms; B arrives)
 *   s1      A chunk 36 + B chunk 28 (budget shared)  -> A's first token
 *   s2      A decode (kv 101) + B chunk 64
 *   s3      A decode (kv 102) + B chunk 8           -> B's first token
 *   s4..11  both decode: kv (99 + s) + (97 + s)     (A's last at s11)
 *   s12..13 B alone: kv 97 + s                      (B's last at s13) */
Test(llm_overlap, chunked_shares_budget_exact)
{
    simtime_t t = 0, tB = simtime_from_ms(5), a_first, a_last, b_first, b_last;
    t += lin_ns(64, 0, 0);
    cr_assert(t > tB, "B must arrive during s0");
    t += lin_ns(64, 0, 0);
    a_first = t;
    t += lin_ns(64, 1, 101);
    t += lin_ns(8, 1, 102);
    b_first = t;
    for (int s = 4; s <= 11; s++) t += lin_ns(0, 2, (99 + s) + (97 + s));
    a_last = t;
    for (int s = 12; s <= 13; s++) t += lin_ns(0, 1, 97 + s);
    b_last = t;

    char text[2048];
    sim_result res;
    trace_text(text, sizeof text, 2, (const double[]) { 0, 5 }, 100, 11, "scheduler = chunked\nchunk_tokens = 64\n");
    run_text(text, 1, &res);
    cr_assert_eq(tsim_n(&res, "served"), 2);
    cr_expect_float_eq(tsim_sys(&res, "ttft")->mean, (NS_MS(a_first) + NS_MS(b_first - tB)) / 2, EXACT_TOL, "ttft %.9f",
                       tsim_sys(&res, "ttft")->mean);
    cr_expect_float_eq(tsim_sys(&res, "tpot")->mean, (NS_MS(a_last - a_first) + NS_MS(b_last - b_first)) / 20,
                       EXACT_TOL,
                       "tpot %.9f", tsim_sys(&res, "tpot")->mean);
    cr_expect_float_eq(tsim_sys(&res, "e2e")->mean, (NS_MS(a_last) + NS_MS(b_last - tB)) / 2, EXACT_TOL, "e2e %.9f",
                       tsim_sys(&res, "e2e")->mean);
    cr_expect_eq(tsim_pv(&res, 0, "steps"), 14);
    /* Sequences per step: 1, 2, 2, 2, then 2 x 8, then 1 x 2 = 25 / 14. */
    cr_expect_float_eq(tsim_pv(&res, 0, "mean_batch"), 25.0 / 14.0, 1e-12, "%g", tsim_pv(&res, 0, "mean_batch"));
    sim_result_free(&res);
}

/* The chunked token budget counts the step's decode tokens (Sarathi-Serve, vLLM
 * max_num_batched_tokens): chunk_tokens = 50, P = 100, O = 11; A at 0, B at 5 ms.
 *   s0      A chunk 50                      (10 ms; B arrives)
 *   s1      A chunk 50                      -> A's first token
 *   s2, s3  A decode + B chunk 49 (50 - 1)  kv 101, 102
 *   s4      A decode + B chunk 2            -> B's first token (a budget of 50
 *           prompt tokens on top of the decode would have finished B at s3)
 *   s5..11  both decode: kv (99 + s) + (96 + s)   (A's last at s11)
 *   s12..14 B alone: kv 96 + s                    (B's last at s14)
 * ITL: every token after the first, its gap since the previous one: 20 gaps
 * that add up to each request's last - first token times. */
Test(llm_overlap, chunked_budget_counts_decodes)
{
    simtime_t t = 0, tB = simtime_from_ms(5), a_first, a_last, b_first, b_last, maxgap = 0;
    t += lin_ns(50, 0, 0);
    cr_assert(t > tB, "B must arrive during s0");
    t += lin_ns(50, 0, 0);
    a_first = t;
    t += lin_ns(49, 1, 101);
    t += lin_ns(49, 1, 102);
    t += lin_ns(2, 1, 103);
    b_first = t;
    for (int s = 5; s <= 11; s++) t += lin_ns(0, 2, (99 + s) + (96 + s));
    a_last = t;
    for (int s = 12; s <= 14; s++) t += lin_ns(0, 1, 96 + s);
    b_last = t;
    maxgap = lin_ns(49, 1, 102);   /* s3: A waits for the larger of the two chunk steps */

    char text[2048];
    sim_result res;
    trace_text(text, sizeof text, 2, (const double[]) { 0, 5 }, 100, 11, "scheduler = chunked\nchunk_tokens = 50\n");
    run_text(text, 1, &res);
    cr_assert_eq(tsim_n(&res, "served"), 2);
    cr_expect_float_eq(tsim_sys(&res, "ttft")->mean, (NS_MS(a_first) + NS_MS(b_first - tB)) / 2, EXACT_TOL, "ttft %.9f",
                       tsim_sys(&res, "ttft")->mean);
    cr_expect_float_eq(tsim_sys(&res, "e2e")->mean, (NS_MS(a_last) + NS_MS(b_last - tB)) / 2, EXACT_TOL, "e2e %.9f",
                       tsim_sys(&res, "e2e")->mean);
    cr_expect_eq(tsim_pv(&res, 0, "steps"), 15);
    cr_expect_eq(tsim_sys(&res, "itl")->n, 20);
    cr_expect_float_eq(tsim_sys(&res, "itl")->mean, (NS_MS(a_last - a_first) + NS_MS(b_last - b_first)) / 20, EXACT_TOL,
                       "itl %.9f", tsim_sys(&res, "itl")->mean);
    cr_expect_float_eq(tsim_sys(&res, "itl")->max, NS_MS(maxgap), EXACT_TOL, "itl max %.9f",
                       tsim_sys(&res, "itl")->max);
    sim_result_free(&res);
}

/* ITL under load with preemptions: each request's gaps add up to its last - first
 * token time (a recomputed sequence's gap spans its preemption), so with every
 * output 400 tokens long the mean ITL equals the mean TPOT exactly, and there are
 * 399 gaps per measured request; a gap is at least one step, so the smallest
 * ITL is at most the smallest TPOT and the largest at least the largest TPOT. */
Test(llm_preempt, itl_adds_up_to_tpot)
{
    const char *sched[] = { "continuous", "chunked", "static" };
    for (int i = 0; i < 3; i++) {
        char text[2048];
        sim_result res;
        preempt_text(text, sizeof text, sched[i], i == 1 ? "chunk_tokens = 64\n" : "", i == 2 ? 0 : 64);
        run_text(text, 1, &res);
        if (i < 2) cr_expect_gt(tsim_pv(&res, 0, "preemptions"), 0, "%s", sched[i]);
        cr_expect_eq(tsim_sys(&res, "itl")->n, tsim_n(&res, "served") * 399, "%s: %llu gaps", sched[i],
                     (unsigned long long) tsim_sys(&res, "itl")->n);
        cr_expect_float_eq(tsim_sys(&res, "itl")->mean, tsim_sys(&res, "tpot")->mean,
                           1e-9 * tsim_sys(&res, "tpot")->mean, "%s: itl %.12g tpot %.12g", sched[i],
                           tsim_sys(&res, "itl")->mean, tsim_sys(&res, "tpot")->mean);
        cr_expect_geq(tsim_sys(&res, "itl")->max, tsim_sys(&res, "tpot")->max * (1 - 1e-12), "%s", sched[i]);
        sim_result_free(&res);
    }
}

/* truncate = yes with max_seq_len = 100: a 200-token prompt with 11 output
 * tokens keeps its output and is cut to 100 - 11 = 89 prompt tokens, so the
 * lone timings are those of P = 89.  With truncate = no it is rejected. */
Test(llm_lone, truncate_cuts_prompt)
{
    char text[2048];
    sim_result res;
    lone_text(text, sizeof text, 2, 200, 11, "scheduler = continuous\nmax_seq_len = 100\ntruncate = yes\n");
    run_text(text, 1, &res);
    check_lone(&res, 2, 11, BASE_MS + PF_MS * 89, lone_decode_ms(89, 11) / 10, 11, 1);
    cr_expect_eq(tsim_pv(&res, 0, "truncated"), 2);
    cr_expect_eq(tsim_pv(&res, 0, "max_seq_len"), 100);
    sim_result_free(&res);

    /* Without truncation no request could ever be served: a configuration error. */
    lone_text(text, sizeof text, 2, 200, 11, "scheduler = continuous\nmax_seq_len = 100\n");
    expect_error(text, "[workload] prompt_tokens", "max_seq_len = 100", NULL);

    /* With room for prompt + output nothing is cut or rejected. */
    lone_text(text, sizeof text, 2, 200, 11, "scheduler = continuous\nmax_seq_len = 300\n");
    run_text(text, 1, &res);
    cr_expect_eq(tsim_n(&res, "served"), 2);
    cr_expect_eq(tsim_n(&res, "rejected"), 0);
    cr_expect_eq(tsim_pv(&res, 0, "truncated"), 0);
    sim_result_free(&res);
}

/* A prompt that can never fit the KV cache is refused whatever its
 * distribution (here uniform with a minimum above the 160-token capacity),
 * not only for const(N). */
Test(llm_errors, nonconst_prompt_longer_than_kv)
{
    expect_error("[sim]\nrequests = 10\nwarmup = 0\n[workload]\narrival = constant\nrate = 1\n"
                 "prompt_tokens = uniform(min=200, max=300)\noutput_tokens = const(10)\n"
                 "[pool chat]\nkind = llm\nmodel = llama-3-8b\ngpu = h100\nkv_blocks = 10\n",
                 "[workload] prompt_tokens", "160", NULL);
}
