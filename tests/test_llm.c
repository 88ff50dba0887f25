/* test_llm.c -- Criterion tests of the LLM replicas (sim/llm.c) driven end to
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
 *   - output-token conservation; determinism.
 * Expected values are derived by hand from llm.h / llm.c / cost.c; see the
 * comments of each test. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scenario.h"
#include "sim.h"
#include "store.h"

#define GiB 1073741824.0

/* ---- helpers ---------------------------------------------------------------- */

/* Loads and resolves TEXT.  Returns 0, or -1 with the message in ERR.
 * On success *SC is loaded and must be scenario_free()d. */
static int load_resolve(const char *text, scenario *sc, char *err, size_t errlen)
{
    sqlite3 *db = NULL;
    char serr[256];
    err[0] = '\0';
    if (scenario_load_text(sc, "/tmp/test_llm.ini", text, NULL, 0, err, errlen) != 0) {
        scenario_free(sc);
        return -1;
    }
    cr_assert_eq(store_open(":memory:", &db, serr, sizeof serr), 0, "store_open: %s", serr);
    int rc = scenario_resolve(sc, db, err, errlen);
    store_close(db);
    if (rc != 0) scenario_free(sc);
    return rc;
}

/* Loads, resolves and runs TEXT with SEED; fails the test on any error. */
static void run_text(const char *text, uint64_t seed, sim_result *res)
{
    scenario sc;
    char err[1024];
    cr_assert_eq(load_resolve(text, &sc, err, sizeof err), 0, "scenario: %s\n%s", err, text);
    cr_assert_eq(sim_run(&sc, seed, res, err, sizeof err), 0, "sim_run: %s", err);
    scenario_free(&sc);
}

/* Expects TEXT to fail loading or resolving; the message must contain every
 * string of the NULL-terminated list. */
static void expect_error(const char *text, ...)
{
    scenario sc;
    char err[1024];
    cr_assert_eq(load_resolve(text, &sc, err, sizeof err), -1, "accepted:\n%s", text);
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
 * being decoded included: cost.h).  Also returns the rounding tolerance. */
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
    cr_assert_eq(res->served, (uint64_t) nreq);
    cr_assert_eq(res->rejected + res->timed_out, 0);
    cr_assert_eq(res->ttft.n, (uint64_t) nreq);
    cr_expect_float_eq(res->ttft.mean, ttft, STEP_TOL * (nsteps_ttft + 1), "ttft %.9f vs %.9f",
                       res->ttft.mean, ttft);
    cr_expect_float_eq(res->ttft.max, ttft, STEP_TOL * (nsteps_ttft + 1), "ttft max %.9f vs %.9f",
                       res->ttft.max, ttft);
    cr_expect_float_eq(res->tpot.mean, tpot, STEP_TOL, "tpot %.9f vs %.9f", res->tpot.mean, tpot);
    cr_expect_float_eq(res->tpot.max, tpot, STEP_TOL, "tpot max %.9f vs %.9f", res->tpot.max, tpot);
    /* e2e = TTFT + (O-1) * TPOT */
    cr_expect_float_eq(res->e2e.mean, ttft + (O - 1) * tpot, STEP_TOL * (nsteps_ttft + O + 1),
                       "e2e %.9f", res->e2e.mean);
    /* A lone request never waits in the queue (dynamic's hold is not queueing
     * from the replica's view, but it is in the queue: checked separately). */
    cr_assert_eq(res->npools, 1);
    /* Every step of the run is one of this request's steps. */
    cr_expect_eq(res->pools[0].steps, (uint64_t) (nreq * steps_per_req), "steps %llu",
                 (unsigned long long) res->pools[0].steps);
    cr_expect_float_eq(res->pools[0].mean_batch, 1.0, 1e-12, "mean_batch %g", res->pools[0].mean_batch);
    cr_expect_eq(res->pools[0].preemptions, 0);
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
    cr_expect_float_eq(res.queue.mean, 0, 1e-12);
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
    cr_expect_float_eq(res.queue.mean, 0, 1e-12);
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
    cr_expect_float_eq(res.queue.mean, 50.0, 1e-9, "queue %.9f", res.queue.mean);
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
    cr_expect_float_eq(res.overhead.mean, 2.5, 1e-9);
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
        cr_expect_eq(res.served, 2, "%s", sched[i]);
        cr_expect_float_eq(res.ttft.mean, 15.0, 2e-6, "%s ttft %.9f", sched[i], res.ttft.mean);
        cr_expect_float_eq(res.e2e.mean, 15.0, 2e-6, "%s e2e %.9f", sched[i], res.e2e.mean);
        cr_expect_eq(res.tpot.n, 0, "%s", sched[i]);
        cr_expect_eq(res.pools[0].steps, 2, "%s steps %llu", sched[i],
                     (unsigned long long) res.pools[0].steps);
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

/* Llama-3-8B (8.03e9 params, 32 layers, 8 KV heads of 128) in bf16 on one
 * H100 (80 GiB) at gpu_memory_utilization 0.9, 1 GiB of activations:
 *   KV bytes = 80 GiB * 0.9 - 8.03e9 * 2 - 1 GiB = 71 * 2^30 - 16.06e9
 *            = 60175669504
 *   bytes per block = 16 tokens * (2 * 32 * 8 * 128 * 2) = 16 * 131072 = 2097152
 *   blocks = floor(60175669504 / 2097152) = floor(28693.6...) = 28693. */
Test(llm_kv, llama3_8b_h100_bf16)
{
    double kv_bytes = 80 * GiB * 0.9 - 8.03e9 * 2 - 1.0 * GiB;
    double per_block = 16.0 * (2.0 * 32 * 8 * 128 * 2);
    int64_t expect = (int64_t) floor(kv_bytes / per_block);
    cr_assert_eq(expect, 28693);

    sim_result res;
    kv_run("model = llama-3-8b\ngpu = h100\n", &res);
    cr_expect_eq(res.pools[0].kv_blocks, expect, "kv_blocks %lld", (long long) res.pools[0].kv_blocks);
    /* max_seq_len = min(model context 8192, KV tokens, max_batch_tokens 8192). */
    cr_expect_eq(res.pools[0].max_seq_len, 8192);
    cr_expect_eq(res.pools[0].gpus, 1);
    cr_expect_eq(res.served, 1);
    sim_result_free(&res);

    /* Explicit defaults give the same answer. */
    kv_run("model = llama-3-8b\ngpu = h100\ngpu_memory_utilization = 0.9\n"
           "activation_reserve_gib = 1.0\nblock_tokens = 16\nweights = bf16\nkv_dtype = bf16\n", &res);
    cr_expect_eq(res.pools[0].kv_blocks, expect);
    sim_result_free(&res);

    /* block_tokens = 32 halves the block count (floor of the same bytes). */
    kv_run("model = llama-3-8b\ngpu = h100\nblock_tokens = 32\n", &res);
    cr_expect_eq(res.pools[0].kv_blocks, (int64_t) floor(kv_bytes / (2 * per_block)));
    sim_result_free(&res);
}

/* Llama-3-70B (70.55e9 params, 80 layers, 8 KV heads) at tp = 2 on H100s:
 * each GPU holds half the weights and 4 of the 8 KV heads:
 *   KV bytes per GPU = 72 GiB - 70.55e9 * 2 / 2 - 1 GiB = 71 * 2^30 - 70.55e9
 *                    = 5685669504
 *   bytes per block per GPU = 16 * (2 * 80 * 4 * 128 * 2) = 16 * 163840 = 2621440
 *   blocks = floor(2168.9...) = 2168. */
Test(llm_kv, llama3_70b_h100_tp2)
{
    double kv_bytes = 80 * GiB * 0.9 - 70.55e9 * 2 / 2 - 1.0 * GiB;
    double per_block = 16.0 * (2.0 * 80 * (8 / 2) * 128 * 2);
    int64_t expect = (int64_t) floor(kv_bytes / per_block);
    cr_assert_eq(expect, 2168);

    sim_result res;
    kv_run("model = llama-3-70b\ngpu = h100\ntp = 2\n", &res);
    cr_expect_eq(res.pools[0].kv_blocks, expect, "kv_blocks %lld", (long long) res.pools[0].kv_blocks);
    cr_expect_eq(res.pools[0].gpus, 2);
    /* 2168 * 16 = 34688 tokens > 8192: max_seq_len is the model context. */
    cr_expect_eq(res.pools[0].max_seq_len, 8192);
    cr_expect_eq(res.served, 1);
    sim_result_free(&res);

    /* tp = 4: a quarter of the weights and 2 KV heads per GPU. */
    kv_bytes = 80 * GiB * 0.9 - 70.55e9 * 2 / 4 - 1.0 * GiB;
    per_block = 16.0 * (2.0 * 80 * (8 / 4) * 128 * 2);
    kv_run("model = llama-3-70b\ngpu = h100\ntp = 4\n", &res);
    cr_expect_eq(res.pools[0].kv_blocks, (int64_t) floor(kv_bytes / per_block));
    cr_expect_eq(res.pools[0].gpus, 4);
    sim_result_free(&res);
}

/* fp8 KV: one byte per element, so the per-block size halves and the block
 * count is floor(2x) of bf16's floor(x): 2 * 28693 or 2 * 28693 + 1.
 * Exactly: floor(60175669504 / 1048576) = floor(57387.2...) = 57387. */
Test(llm_kv, fp8_kv_doubles_capacity)
{
    double kv_bytes = 80 * GiB * 0.9 - 8.03e9 * 2 - 1.0 * GiB;
    int64_t bf16 = (int64_t) floor(kv_bytes / (16.0 * 2 * 32 * 8 * 128 * 2));
    int64_t fp8 = (int64_t) floor(kv_bytes / (16.0 * 2 * 32 * 8 * 128 * 1));
    cr_assert_eq(fp8, 57387);

    sim_result res;
    kv_run("model = llama-3-8b\ngpu = h100\nkv_dtype = fp8\n", &res);
    cr_expect_eq(res.pools[0].kv_blocks, fp8, "kv_blocks %lld", (long long) res.pools[0].kv_blocks);
    cr_expect(res.pools[0].kv_blocks == 2 * bf16 || res.pools[0].kv_blocks == 2 * bf16 + 1);
    sim_result_free(&res);

    /* fp8 weights free half the weight memory: 71 GiB - 8.03e9 bytes. */
    kv_run("model = llama-3-8b\ngpu = h100\nweights = fp8\n", &res);
    cr_expect_eq(res.pools[0].kv_blocks,
                 (int64_t) floor((80 * GiB * 0.9 - 8.03e9 - 1.0 * GiB) / (16.0 * 131072)));
    sim_result_free(&res);
}

/* kv_blocks given: it overrides the derivation; max_seq_len is capped by it. */
Test(llm_kv, given_kv_blocks_override)
{
    sim_result res;
    kv_run("model = llama-3-8b\ngpu = h100\nkv_blocks = 100\n", &res);
    cr_expect_eq(res.pools[0].kv_blocks, 100);
    cr_expect_eq(res.pools[0].max_seq_len, 1600);
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

Test(llm_batching, continuous_beats_static, .timeout = 60)
{
    char text[2048];
    sim_result st, ct;

    batching_text(text, sizeof text, "static", "constant", 1e6, 1500, 64);
    run_text(text, 7, &st);
    batching_text(text, sizeof text, "continuous", "constant", 1e6, 1500, 64);
    run_text(text, 7, &ct);
    cr_assert_eq(st.served, 1500);
    cr_assert_eq(ct.served, 1500);
    double cap_static = st.throughput_rps, cap_cont = ct.throughput_rps;
    cr_log_info("capacity: static %.3f rps (mean batch %.2f), continuous %.3f rps (mean batch %.2f)",
                cap_static, st.pools[0].mean_batch, cap_cont, ct.pools[0].mean_batch);
    cr_expect_gt(cap_static, 0);
    cr_expect_geq(cap_cont, 1.5 * cap_static, "continuous %.3f rps vs static %.3f rps", cap_cont, cap_static);
    /* Flat out, both keep their batches (nearly) full, never above max_batch. */
    cr_expect_leq(st.pools[0].mean_batch, 32.0 + 1e-9);
    cr_expect_leq(ct.pools[0].mean_batch, 32.0 + 1e-9);
    cr_expect_gt(ct.pools[0].mean_batch, 30.0);
    sim_result_free(&st);
    sim_result_free(&ct);

    /* The same load for both: half of static's capacity. */
    double rate = 0.5 * cap_static;
    batching_text(text, sizeof text, "static", "poisson", rate, 3000, 300);
    run_text(text, 11, &st);
    batching_text(text, sizeof text, "continuous", "poisson", rate, 3000, 300);
    run_text(text, 11, &ct);
    cr_log_info("at %.3f rps: queue static %.1f ms, continuous %.3f ms; sat %d %d", rate, st.queue.mean,
                ct.queue.mean, st.saturated, ct.saturated);
    cr_expect_eq(st.saturated, 0, "static saturated at half its capacity");
    cr_expect_eq(ct.saturated, 0);
    cr_expect_eq(st.served, 3000);
    cr_expect_eq(ct.served, 3000);
    cr_expect_lt(ct.queue.mean, st.queue.mean, "queue: continuous %.3f ms vs static %.3f ms", ct.queue.mean,
                 st.queue.mean);
    cr_expect_lt(ct.ttft.mean, st.ttft.mean);
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
    cr_expect_eq(res->served + res->rejected + res->timed_out, res->requests,
                 "served %llu + rejected %llu + timed out %llu != %llu", (unsigned long long) res->served,
                 (unsigned long long) res->rejected, (unsigned long long) res->timed_out,
                 (unsigned long long) res->requests);
    const pool_result *p = &res->pools[0];
    cr_expect_eq(p->arrivals, res->requests);
    cr_expect_eq(p->served + p->rejected + p->timed_out, p->arrivals);
    cr_expect_eq(p->served, res->served);
    /* Every served request produced all its tokens and its first token once. */
    cr_expect_eq(res->ttft.n, res->served);
    cr_expect_float_eq(res->output_tps * res->window_s, (double) res->served * 400, 1e-6 * res->served * 400);
}

Test(llm_preempt, small_kv_preempts_and_loses_nothing, .timeout = 60)
{
    const char *sched[] = { "continuous", "chunked" };
    for (int i = 0; i < 2; i++) {
        char text[2048];
        sim_result res;
        preempt_text(text, sizeof text, sched[i], i == 1 ? "chunk_tokens = 64\n" : "", 64);
        run_text(text, 3, &res);
        cr_log_info("%s: preemptions %llu, served %llu, kv_peak %.3f", sched[i],
                    (unsigned long long) res.pools[0].preemptions, (unsigned long long) res.served,
                    res.pools[0].kv_peak);
        cr_expect_eq(res.pools[0].kv_blocks, 64);
        cr_expect_gt(res.pools[0].preemptions, 0, "%s: no preemption", sched[i]);
        cr_expect_eq(res.served, 150, "%s", sched[i]);
        check_conservation(&res);
        cr_expect_leq(res.pools[0].kv_peak, 1.0 + 1e-12);
        /* A preempted request is recomputed, so it takes longer than alone:
         * no request is faster than a lone one (15 ms + 399 decode steps). */
        cr_expect_geq(res.e2e.max, 15 + lone_decode_ms(100, 400) - 1e-3);
        sim_result_free(&res);
    }
}

/* With queue_limit and timeout_ms as well: every measured request still has
 * exactly one outcome. */
Test(llm_preempt, conservation_with_limits, .timeout = 60)
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
                    (unsigned long long) res.served, (unsigned long long) res.rejected,
                    (unsigned long long) res.timed_out, (unsigned long long) res.pools[0].preemptions);
        cr_expect_gt(res.pools[0].preemptions, 0, "%s", sched[i]);
        cr_expect_gt(res.rejected + res.timed_out, 0, "%s: limits never hit", sched[i]);
        check_conservation(&res);
        sim_result_free(&res);
    }
}

/* Static and dynamic reserve prompt + output blocks at admission: they never
 * preempt, even with a tiny cache, and lose nothing. */
Test(llm_preempt, static_reserves_never_preempts, .timeout = 60)
{
    const char *sched[] = { "static", "dynamic" };
    for (int i = 0; i < 2; i++) {
        char text[2048];
        sim_result res;
        preempt_text(text, sizeof text, sched[i], "", 64);
        run_text(text, 3, &res);
        cr_expect_eq(res.pools[0].preemptions, 0, "%s", sched[i]);
        cr_expect_eq(res.served, 150, "%s", sched[i]);
        check_conservation(&res);
        sim_result_free(&res);
    }
}

/* The same load with the derived cache (28693 blocks): no preemption. */
Test(llm_preempt, plentiful_kv_never_preempts, .timeout = 60)
{
    const char *sched[] = { "continuous", "chunked" };
    for (int i = 0; i < 2; i++) {
        char text[2048];
        sim_result res;
        preempt_text(text, sizeof text, sched[i], i == 1 ? "chunk_tokens = 64\n" : "", 0);
        run_text(text, 3, &res);
        cr_expect_eq(res.pools[0].kv_blocks, 28693);
        cr_expect_eq(res.pools[0].preemptions, 0, "%s", sched[i]);
        cr_expect_eq(res.served, 150);
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
Test(llm_dynamic, dynamic_batches_more_than_static, .timeout = 60)
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
        mb[i] = res.pools[0].mean_batch;
        cr_expect_eq(res.served, 3000);
        cr_expect_eq(res.saturated, 0, "%s", sched[i]);
        cr_expect_geq(mb[i], 1.0);
        cr_expect_leq(mb[i], 16.0);
        sim_result_free(&res);
    }
    cr_log_info("mean batch: static %.3f, dynamic %.3f", mb[0], mb[1]);
    cr_expect_gt(mb[1], mb[0], "dynamic %.3f vs static %.3f", mb[1], mb[0]);
}

/* mean_batch <= max_batch for every scheduler, flat out. */
Test(llm_dynamic, mean_batch_at_most_max_batch, .timeout = 60)
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
        cr_log_info("%s: mean batch %.3f", sched[i], res.pools[0].mean_batch);
        cr_expect_leq(res.pools[0].mean_batch, 8.0 + 1e-9, "%s: %g", sched[i], res.pools[0].mean_batch);
        cr_expect_gt(res.pools[0].mean_batch, 4.0, "%s: %g", sched[i], res.pools[0].mean_batch);
        cr_expect_eq(res.served + res.rejected + res.timed_out, res.requests);
        sim_result_free(&res);
    }
}

/* ---- 7. token conservation ------------------------------------------------------------ */

Test(llm_tokens, output_tokens_conserved, .timeout = 60)
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
        cr_expect_eq(res.served, 2000);
        double tokens = res.output_tps * res.window_s;
        cr_expect_float_eq(tokens, 2000.0 * 50, 1e-6, "%s: %.9f tokens", sched[i], tokens);
        cr_expect_float_eq(res.throughput_rps * res.window_s, 2000.0, 1e-9);
        cr_expect_eq(res.tpot.n, 2000);
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

Test(llm_determinism, same_seed_same_results, .timeout = 60)
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
        expect_same_summary(&a.ttft, &b.ttft, "ttft");
        expect_same_summary(&a.tpot, &b.tpot, "tpot");
        expect_same_summary(&a.e2e, &b.e2e, "e2e");
        expect_same_summary(&a.queue, &b.queue, "queue");
        cr_expect_eq(a.events, b.events);
        cr_expect_eq(a.served, b.served);
        cr_expect_eq(a.window_s, b.window_s);
        cr_expect_eq(a.pools[0].steps, b.pools[0].steps);
        cr_expect_eq(a.pools[0].preemptions, b.pools[0].preemptions);
        cr_expect_eq(a.pools[0].mean_batch, b.pools[0].mean_batch);
        /* Another seed gives another run. */
        cr_expect_neq(a.ttft.mean, c.ttft.mean, "%s: seeds 42 and 43 agree", sched[i]);
        sim_result_free(&a);
        sim_result_free(&b);
        sim_result_free(&c);
    }
}
