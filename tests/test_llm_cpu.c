/* test_llm_cpu.c -- the CPU side of an LLM server (issue 35): an LLM pool's
 * prompt tokenisation as a CPU job (cpu_tokenize_us_per_token) in its front
 * end's cgroup (fleet/cpunode.h), before the request queues.
 *   - by hand: a lone request of P = 1000 tokens at 250 us/token is 250 ms of
 *     CPU; on a 0.5-core limit with 100 ms periods it runs 50 ms per period and
 *     ends at 450 ms (4 throttled periods of 50 ms), so TTFT = 450 + the
 *     prefill step (5 + 0.1 x 1000 = 105 ms) = 555 ms; on a 1-core limit
 *     250 + 105 = 355 ms; on a 1-core node with 0.5 cores of background load
 *     it runs at half a core: 500 + 105 = 605 ms;
 *   - under load, a tight limit makes the TTFT tail grow (throttling);
 *   - the steps' CPU parts (cpu.c), by hand: cpu_step_ms before and
 *     cpu_sample_us_per_seq per sequence after each step's GPU part, in the
 *     replica's own cgroup (below, steps_on_half_a_core_by_hand); two
 *     replicas' cgroups do not throttle each other; a replica's dp ranks share
 *     its pod's; with a routing policy a prompt is tokenised in the cgroup of
 *     the replica it is bound to; two pools' replicas on one node share its
 *     core by their cpu_request_cores;
 *   - bad input: one line with file, line and key; the program exits 2. */
#include <criterion/criterion.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "run/scenario.h"
#include "run/sim.h"
#include "tbin.h"
#include "tsim.h"

/* A scenario of N requests 1000 s apart (arrivals on CFS period boundaries, and
 * none overlapping), prompts of 1000 and outputs of 11 tokens, the linear cost
 * model, and EXTRA lines in the pool section (then the rest of the file). */
static void lone_text(char *buf, size_t n, int nreq, const char *extra)
{
    snprintf(buf, n,
             "[sim]\nrequests = %d\nwarmup = 0\n"
             "[workload]\narrival = constant\nrate = 0.001\n"
             "prompt_tokens = const(1000)\noutput_tokens = const(11)\n"
             "[pool chat]\nkind = llm\nmodel = llama-3-8b\ngpu = h100\nscheduler = continuous\n"
             "cost = linear\nstep_base_ms = 5\nprefill_ms_per_token = 0.1\n"
             "decode_ms_per_seq = 0.05\nkv_ms_per_1k_tokens = 0.01\n%s",
             nreq, extra);
}

/* Runs EXTRA's lone scenario (3 requests) and checks its TTFT (every request's),
 * the front-end overhead (TOK_MS) and the throttled periods per request. */
static void lone(const char *extra, double tok_ms, double periods_per_req, sim_result *res)
{
    char text[2048];
    lone_text(text, sizeof text, 3, extra);
    tsim_run("/tmp/test_llm_cpu.ini", text, 1, res);
    cr_assert_eq(tsim_n(res, "served"), 3);
    double ttft = tok_ms + 5 + 0.1 * 1000;
    cr_expect_float_eq(tsim_sys(res, "ttft")->mean, ttft, 1e-5, "ttft %.9f vs %.9f", tsim_sys(res, "ttft")->mean, ttft);
    cr_expect_float_eq(tsim_sys(res, "ttft")->max, ttft, 1e-5, "ttft max %.9f vs %.9f", tsim_sys(res, "ttft")->max,
                       ttft);
    cr_expect_float_eq(tsim_sys(res, "overhead")->mean, tok_ms, 1e-5, "overhead %.9f", tsim_sys(res, "overhead")->mean);
    if (periods_per_req >= 0)
        cr_expect_float_eq(tsim_pv(res, 0, "cpu_throttled_periods"), 3 * periods_per_req, 1e-9,
                           "throttled periods %g", tsim_pv(res, 0, "cpu_throttled_periods"));
}

Test(llm_cpu, tokenize_on_half_a_core_by_hand)
{
    sim_result res;
    lone("cpu_tokenize_us_per_token = 250\ncpu_limit_cores = 0.5\ncfs_period_ms = 100\n", 450, 4, &res);
    /* Throttled 50 ms in each of the 4 periods before the last. */
    cr_expect_float_eq(tsim_pv(&res, 0, "cpu_throttled_s"), 3 * 0.2, 1e-9);
    sim_result_free(&res);
    lone("cpu_tokenize_us_per_token = 250\ncpu_limit_cores = 1\n", 250, 0, &res);
    sim_result_free(&res);
    lone("", 0, -1, &res);   /* no CPU keys: as before */
    cr_expect(isnan(tsim_pv(&res, 0, "cpu_throttled_periods")), "no CPU metrics without CPU keys");
    sim_result_free(&res);
}

Test(llm_cpu, noisy_node_by_hand)
{
    sim_result res;
    lone("cpu_tokenize_us_per_token = 250\nnode = n1\n[node n1]\ncores = 1\nbackground_cpu = const(0.5)\n", 500, -1,
         &res);
    cr_expect_float_eq(tsim_pv(&res, 0, "node_background_cores"), 0.5, 1e-9);
    sim_result_free(&res);
}

/* Poisson arrivals at 2/s, 100 ms of tokenisation each (0.2 cores on average):
 * on a 0.25-core limit every request needs 4 periods of quota (at least 300 ms
 * of throttling) and often waits behind another's, so the TTFT p99 exceeds the
 * 4-core one (no throttling: 100 ms + prefill + a little queueing) by more than
 * the 300 ms each request is throttled at least. */
Test(llm_cpu, tight_limit_grows_the_tail)
{
    const char *base = "[sim]\nrequests = 2000\nwarmup = 200\n"
                       "[workload]\narrival = poisson\nrate = 2\n"
                       "prompt_tokens = const(1000)\noutput_tokens = const(11)\n"
                       "[pool chat]\nkind = llm\nmodel = llama-3-8b\ngpu = h100\nscheduler = continuous\n"
                       "cost = linear\nstep_base_ms = 5\nprefill_ms_per_token = 0.1\n"
                       "decode_ms_per_seq = 0.05\nkv_ms_per_1k_tokens = 0.01\n"
                       "cpu_tokenize_us_per_token = 100\ncpu_limit_cores = ";
    char text[2048];
    sim_result tight, wide;
    snprintf(text, sizeof text, "%s0.25\n", base);
    tsim_run("/tmp/test_llm_cpu.ini", text, 7, &tight);
    snprintf(text, sizeof text, "%s4\n", base);
    tsim_run("/tmp/test_llm_cpu.ini", text, 7, &wide);
    cr_expect_eq(tsim_pv(&wide, 0, "cpu_throttled_periods"), 0);
    cr_expect_geq(tsim_sys(&wide, "overhead")->cdf[0], 100 * (1 - 1e-6), "tokenisation takes its 100 ms at least");
    cr_expect_gt(tsim_sys(&tight, "overhead")->mean, 400 - 1e-6, "4 periods of 25 ms of quota: %g",
                 tsim_sys(&tight, "overhead")->mean);
    cr_expect_gt(tsim_sys(&tight, "ttft")->p99, tsim_sys(&wide, "ttft")->p99 + 300, "p99 %g vs %g",
                 tsim_sys(&tight, "ttft")->p99, tsim_sys(&wide, "ttft")->p99);
    sim_result_free(&tight);
    sim_result_free(&wide);
}

/* The linear model's decode step with one sequence reading KV tokens, ms. */
static double decode_ms(double kv) { return 5 + 0.05 + 0.01 * kv / 1000; }

/* One request of 1000 prompt and 3 output tokens at a time (arrivals 1000 s
 * apart, on CFS period boundaries); each step runs 80 ms of CPU before its GPU
 * part and 10 ms (one sequence) after it, on a 0.5-core limit with 100 ms
 * periods (50 ms of quota per period).  From the arrival at t = 0:
 *   step 1: CPU 0-50, throttled to 100, 100-130; GPU prefill 130-235 (5 + 0.1
 *           x 1000); CPU 235-245 (a new period): TTFT = 245 ms;
 *   step 2: CPU 245-285 (the period's 40 ms left), throttled to 300, 300-340;
 *           GPU decode 340-345.06001 (d2: 1001 KV tokens); CPU to 355.06001
 *           (the period's last 10 ms);
 *   step 3: throttled to 400, CPU 400-450, throttled to 500, 500-530; GPU
 *           decode d3 (1002 KV tokens); CPU 10 ms: E2E = 540 + d3 ms.
 * Periods throttled: those beginning at 0, 200, 300 and 400 ms, for 50 + 15 +
 * (400 - 355.06001) + 50 ms.  The CPU parts (throttled waits included) are
 * the steps' framework overhead: overhead = E2E - the GPU parts, service =
 * the GPU parts; ITL = the steps' lengths. */
Test(llm_cpu, steps_on_half_a_core_by_hand)
{
    char text[2048];
    sim_result res;
    lone_text(text, sizeof text, 3, "cpu_step_ms = 80\ncpu_sample_us_per_seq = 10000\ncpu_limit_cores = 0.5\n");
    char *o = strstr(text, "const(11)");
    cr_assert_not_null(o);
    memcpy(o, "const(3) ", 9);
    tsim_run("/tmp/test_llm_cpu.ini", text, 1, &res);
    cr_assert_eq(tsim_n(&res, "served"), 3);
    double d2 = decode_ms(1001), d3 = decode_ms(1002), e2e = 540 + d3, gpu = 105 + d2 + d3;
    cr_expect_float_eq(tsim_sys(&res, "ttft")->max, 245, 1e-6, "ttft %.9f", tsim_sys(&res, "ttft")->max);
    cr_expect_float_eq(tsim_sys(&res, "ttft")->mean, 245, 1e-6, "ttft %.9f", tsim_sys(&res, "ttft")->mean);
    cr_expect_float_eq(tsim_sys(&res, "e2e")->max, e2e, 1e-6, "e2e %.9f vs %.9f", tsim_sys(&res, "e2e")->max, e2e);
    cr_expect_float_eq(tsim_sys(&res, "e2e")->mean, e2e, 1e-6, "e2e %.9f vs %.9f", tsim_sys(&res, "e2e")->mean, e2e);
    cr_expect_float_eq(tsim_sys(&res, "tpot")->mean, (e2e - 245) / 2, 1e-6);
    cr_expect_float_eq(tsim_sys(&res, "itl")->max, e2e - (350 + d2), 1e-6, "step 3: %.9f", tsim_sys(&res, "itl")->max);
    cr_expect_float_eq(tsim_sys(&res, "overhead")->mean, e2e - gpu, 1e-6, "overhead %.9f vs %.9f",
                       tsim_sys(&res, "overhead")->mean, e2e - gpu);
    cr_expect_float_eq(tsim_sys(&res, "service")->mean, gpu, 1e-6, "service %.9f vs %.9f",
                       tsim_sys(&res, "service")->mean, gpu);
    tsim_pr p = tsim_pool_at(&res, 0);
    cr_expect_float_eq(tsim_prv(p, "cpu_throttled_periods"), 3 * 4, 1e-9);
    cr_expect_float_eq(tsim_prv(p, "cpu_throttled_s"), 3 * (50 + 15 + (400 - (350 + d2)) + 50) / 1e3,
                       1e-9, "throttled %.9f s", tsim_prv(p, "cpu_throttled_s"));
    cr_expect_float_eq(tsim_prv(p, "cpu_step_share"), (e2e - gpu) / e2e, 1e-9);
    sim_result_free(&res);
    /* Without a limit (a host of its own: the request only weighs) the CPU
     * parts take their CPU time: TTFT = 80 + 105 + 10, E2E = 3 x 90 + GPU. */
    lone_text(text, sizeof text, 3, "cpu_step_ms = 80\ncpu_sample_us_per_seq = 10000\ncpu_request_cores = 1\n");
    memcpy(strstr(text, "const(11)"), "const(3) ", 9);
    tsim_run("/tmp/test_llm_cpu.ini", text, 1, &res);
    cr_expect_float_eq(tsim_sys(&res, "ttft")->mean, 195, 1e-6, "ttft %.9f", tsim_sys(&res, "ttft")->mean);
    cr_expect_float_eq(tsim_sys(&res, "e2e")->mean, 270 + gpu, 1e-6, "e2e %.9f", tsim_sys(&res, "e2e")->mean);
    cr_expect(isnan(tsim_pv(&res, 0, "cpu_throttled_periods")), "no limit, no throttling metrics");
    sim_result_free(&res);
}

/* Requests of 1000 prompt tokens and 1 output token arriving at 0, 1 ms and
 * 99.999 s (a trace: times from its first row; the last alone): the file the
 * scenarios below read. */
/* The trace's file name in /tmp, one per test process (Criterion runs tests
 * in parallel: a shared name would be unlinked under another test). */
static const char *trace_name(void)
{
    static char name[64];
    snprintf(name, sizeof name, "test_llm_cpu_w%d.csv", (int) getpid());
    return name;
}

static const char *trace_path(void)
{
    static char path[80];
    snprintf(path, sizeof path, "/tmp/%s", trace_name());
    return path;
}

static void write_trace(void)
{
    FILE *f = fopen(trace_path(), "w");
    cr_assert_not_null(f);
    fputs("TIMESTAMP,ContextTokens,GeneratedTokens\n0.001,1000,1\n0.002,1000,1\n100,1000,1\n", f);
    fclose(f);
}

/* EXTRA's lone scenario (outputs of 1 token) over write_trace()'s arrivals. */
static void traced(const char *extra, sim_result *res)
{
    write_trace();
    char text[2048], rest[2048];
    lone_text(text, sizeof text, 3, extra);
    memcpy(strstr(text, "const(11)"), "const(1) ", 9);
    char *w = strstr(text, "arrival = constant\nrate = 0.001\n");
    cr_assert_not_null(w);
    snprintf(rest, sizeof rest, "%s", w + strlen("arrival = constant\nrate = 0.001\n"));
    snprintf(w, sizeof text - (size_t) (w - text), "arrival = trace\ntrace = %s\ntime_format = seconds\n%s",
             trace_name(), rest);
    tsim_run("/tmp/test_llm_cpu.ini", text, 1, res);
    unlink(trace_path());
}

/* Two replicas, each a pod with its own 0.5-core limit: the requests at 0 and
 * 1 ms go to replica 0 and 1 (the idle stack), and each prefill step's 80 ms
 * of CPU runs 50 ms in the first period and 30 ms after 100 ms, as if alone
 * (one shared cgroup would give each half its quota): TTFT = 130 + 105 + 10 -
 * arrival = 245 and 244 ms; the lone third, 1 ms before a period, 1 ms then
 * 50 ms then 29 ms: 245 ms.  One throttled period each. */
Test(llm_cpu, replicas_do_not_throttle_each_other)
{
    sim_result res;
    traced("replicas = 2\ncpu_step_ms = 80\ncpu_sample_us_per_seq = 10000\ncpu_limit_cores = 0.5\n", &res);
    cr_assert_eq(tsim_n(&res, "served"), 3);
    cr_expect_float_eq(tsim_sys(&res, "ttft")->max, 245, 1e-6, "ttft max %.9f", tsim_sys(&res, "ttft")->max);
    cr_expect_float_eq(tsim_sys(&res, "ttft")->cdf[0], 244, 1e-6, "ttft min %.9f", tsim_sys(&res, "ttft")->cdf[0]);
    cr_expect_float_eq(tsim_sys(&res, "ttft")->mean, (245 + 244 + 245) / 3.0, 1e-6, "ttft mean %.9f",
                       tsim_sys(&res, "ttft")->mean);
    cr_expect_float_eq(tsim_pv(&res, 0, "cpu_throttled_periods"), 3, 1e-9);
    sim_result_free(&res);
}

/* With a routing policy a request is tokenised in the cgroup of the replica it
 * is bound to: the requests at 0 and 1 ms (round robin: replicas 0 and 1) each
 * take 250 ms of CPU on their own 0.5-core limit, 50 ms a period, done at
 * 450 ms: TTFT = 450 + 105 - arrival = 555 and 554 ms; the third (replica 0,
 * 1 ms before a period: 1 + 4 x 50 + 49 ms) 555 ms.  With one shared queue
 * both share the front end's quota: the second waits for the first's. */
Test(llm_cpu, routed_tokenisation_in_the_replica)
{
    sim_result res;
    traced("replicas = 2\nrouting = round_robin\ncpu_tokenize_us_per_token = 250\ncpu_limit_cores = 0.5\n", &res);
    cr_assert_eq(tsim_n(&res, "served"), 3);
    cr_expect_float_eq(tsim_sys(&res, "ttft")->max, 555, 1e-6, "ttft max %.9f", tsim_sys(&res, "ttft")->max);
    cr_expect_float_eq(tsim_sys(&res, "ttft")->cdf[0], 554, 1e-6, "ttft min %.9f", tsim_sys(&res, "ttft")->cdf[0]);
    cr_expect_float_eq(tsim_sys(&res, "overhead")->mean, (450 + 449 + 450) / 3.0, 1e-6, "tokenising %.9f",
                       tsim_sys(&res, "overhead")->mean);
    sim_result_free(&res);
    traced("replicas = 2\ncpu_tokenize_us_per_token = 250\ncpu_limit_cores = 0.5\n", &res);
    cr_expect_gt(tsim_sys(&res, "ttft")->max, 555 + 200, "one front end: %.9f", tsim_sys(&res, "ttft")->max);
    sim_result_free(&res);
}

/* dp = 2 (a dense model: two independent ranks, one pod): the ranks' step CPU
 * shares the pod's 0.5-core quota.  The requests at 0 and 1 ms go to ranks 0
 * and 1 (the balancer); on a host of its own each job runs at a core while
 * the quota lasts: 1 ms alone, then both until 50 ms of quota are used at
 * 25.5 ms (24.5 ms each since 1 ms); 25 ms each in [100, 125] and [200, 225];
 * rank 0's last 4.5 ms end at 304.5 ms, rank 1's 5.5 ms at 305.5 ms.  Prefill
 * 105 ms, then 10 ms of sampling each (20 ms of the next period's quota):
 * TTFT 419.5 ms for both; the third, alone on rank 0, 245 ms. */
Test(llm_cpu, dp_ranks_share_their_pod)
{
    sim_result res;
    traced("dp = 2\ncpu_step_ms = 80\ncpu_sample_us_per_seq = 10000\ncpu_limit_cores = 0.5\n", &res);
    cr_assert_eq(tsim_n(&res, "served"), 3);
    cr_expect_float_eq(tsim_sys(&res, "ttft")->max, 419.5, 1e-6, "ttft max %.9f", tsim_sys(&res, "ttft")->max);
    cr_expect_float_eq(tsim_sys(&res, "ttft")->cdf[0], 245, 1e-6, "ttft min %.9f", tsim_sys(&res, "ttft")->cdf[0]);
    cr_expect_float_eq(tsim_sys(&res, "ttft")->mean, (419.5 * 2 + 245) / 3, 1e-6, "ttft mean %.9f",
                       tsim_sys(&res, "ttft")->mean);
    sim_result_free(&res);
}

/* Two pools' replicas on one 1-core node, requesting 0.75 and 0.25 cores (no
 * limits): requests at 0 (to a) and 1 ms (to b) through a round-robin router,
 * a third at 99.999 s (to a, alone).  a's step CPU runs alone for 1 ms, then
 * at 0.75 cores: 79 / 0.75 ms (105333334 ns: work is rounded up to whole ns),
 * done at 106.333334 ms, GPU 105 ms, its 10 ms after alone (b is in its GPU
 * part): TTFT 221.333334 ms.  b ran at 0.25 cores meanwhile (26.333 ms of
 * work), then alone: done at 160 ms, GPU to 265, CPU to 275: TTFT 274 ms.  The
 * lone third: 80 + 105 + 10 = 195 ms.  (Equal weights would give a 241 ms.) */
Test(llm_cpu, one_node_split_by_weights)
{
    write_trace();
    char text[4096];
    const char *pool = "kind = llm\nmodel = llama-3-8b\ngpu = h100\ncost = linear\nstep_base_ms = 5\n"
                       "prefill_ms_per_token = 0.1\ndecode_ms_per_seq = 0.05\nkv_ms_per_1k_tokens = 0.01\n"
                       "cpu_step_ms = 80\ncpu_sample_us_per_seq = 10000\nnode = n1\n";
    snprintf(text, sizeof text,
             "[sim]\nrequests = 3\nwarmup = 0\n[workload]\narrival = trace\ntrace = %s\n"
             "time_format = seconds\ntarget = lb\n[pool lb]\nkind = router\npolicy = round_robin\nnext = a, b\n"
             "[pool a]\n%scpu_request_cores = 0.75\n[pool b]\n%scpu_request_cores = 0.25\n[node n1]\ncores = 1\n",
             trace_name(), pool, pool);
    sim_result res;
    tsim_run("/tmp/test_llm_cpu.ini", text, 1, &res);
    cr_assert_eq(tsim_n(&res, "served"), 3);
    tsim_pr a = tsim_pool_named(&res, "a"), b = tsim_pool_named(&res, "b");
    cr_expect_float_eq(tsim_prl(a, "ttft")->max, 1 + 105.333334 + 105 + 10, 1e-9, "a %.9f", tsim_prl(a, "ttft")->max);
    cr_expect_float_eq(tsim_prl(a, "ttft")->cdf[0], 195, 1e-6, "a alone %.9f", tsim_prl(a, "ttft")->cdf[0]);
    cr_expect_float_eq(tsim_prl(b, "ttft")->max, 274, 1e-6, "b %.9f", tsim_prl(b, "ttft")->max);
    sim_result_free(&res);
    unlink(trace_path());
}

/* The error EXTRA's scenario gives. */
static void load_error(const char *extra, char *err, size_t n)
{
    char text[2048];
    lone_text(text, sizeof text, 3, extra);
    tsim_load_error("bad.ini", text, err, n);
}

Test(llm_cpu, bad_input)
{
    char err[1024];
    load_error("cpu_tokenize_us_per_token = -1\ncpu_limit_cores = 0.5\n", err, sizeof err);
    cr_expect_str_eq(err, "bad.ini:19: [pool chat] cpu_tokenize_us_per_token: must be >= 0, got '-1'");
    load_error("cpu_tokenize_us_per_token = 250\n", err, sizeof err);
    cr_expect_str_eq(err, "bad.ini:19: [pool chat] cpu_tokenize_us_per_token: needs cpu_limit_cores, "
                          "cpu_request_cores or node (the CPU it runs on); a fixed delay is request_overhead_ms");
    load_error("cpu_limit_cores = 0.5\n", err, sizeof err);
    cr_expect_str_eq(err, "bad.ini:19: [pool chat] cpu_limit_cores: an llm pool's CPU work is its tokenisation and "
                          "its steps' CPU parts: needs cpu_tokenize_us_per_token, cpu_step_ms or cpu_sample_us_per_seq > 0");
    load_error("cpu_tokenize_us_per_token = 250\ncfs_period_ms = 50\n", err, sizeof err);
    cr_expect_str_eq(err, "bad.ini:19: [pool chat] cpu_tokenize_us_per_token: needs cpu_limit_cores, "
                          "cpu_request_cores or node (the CPU it runs on); a fixed delay is request_overhead_ms");
    load_error("cpu_tokenize_us_per_token = 250\ncpu_request_cores = 1\ncfs_period_ms = 50\n", err, sizeof err);
    cr_expect_str_eq(err, "bad.ini:21: [pool chat] cfs_period_ms: needs cpu_limit_cores (the quota per period)");
    load_error("cpu_tokenize_us_per_token = 250\ncpu_limit_cores = 0.5\nservers_per_replica = 2\n", err, sizeof err);
    cr_expect_str_eq(err, "bad.ini:21: [pool chat] servers_per_replica: not modelled for kind = llm pools "
                          "(generic pools only)");
    /* The CPU keys alone build no fleet controller: dp > 1, other schedulers,
     * routing and roles take them; with failures the fleet's limits stay. */
    load_error("cpu_tokenize_us_per_token = 250\ncpu_step_ms = 1\ncpu_limit_cores = 0.5\ndp = 2\n", err, sizeof err);
    cr_expect_str_eq(err, "");
    load_error("cpu_step_ms = 1\ncpu_limit_cores = 0.5\nrouting = least_outstanding\nreplicas = 2\n", err, sizeof err);
    cr_expect_str_eq(err, "");
    load_error("cpu_step_ms = 1\ncpu_limit_cores = 0.5\ndp = 2\nfail_after_s = exp(mean=100)\n", err, sizeof err);
    cr_expect_str_eq(err, "bad.ini:22: [pool chat] fail_after_s: replica failures, autoscaling and cold starts are not "
                          "modelled with dp > 1 yet");
    load_error("cpu_step_ms = -1\ncpu_limit_cores = 0.5\n", err, sizeof err);
    cr_expect_str_eq(err, "bad.ini:19: [pool chat] cpu_step_ms: must be >= 0, got '-1'");
    load_error("cpu_sample_us_per_seq = x\ncpu_limit_cores = 0.5\n", err, sizeof err);
    cr_expect_not_null(strstr(err, "bad.ini:19: [pool chat] cpu_sample_us_per_seq: "), "%s", err);
    load_error("cpu_sample_us_per_seq = 20\n", err, sizeof err);
    cr_expect_str_eq(err, "bad.ini:19: [pool chat] cpu_sample_us_per_seq: needs cpu_limit_cores, cpu_request_cores or "
                          "node (the CPU it runs on)");
    /* An MoE model's dp ranks step in lockstep: their CPU parts are not modelled. */
    char text[2048];
    lone_text(text, sizeof text, 3, "dp = 2\ncpu_step_ms = 1\ncpu_limit_cores = 0.5\n");
    char *m = strstr(text, "llama-3-8b\n");
    cr_assert_not_null(m);
    char rest[2048];
    snprintf(rest, sizeof rest, "%s", m + strlen("llama-3-8b"));
    snprintf(m, sizeof text - (size_t) (m - text), "qwen3-30b-a3b%s", rest);
    cr_assert_neq(tsim_load_error("bad.ini", text, err, sizeof err), 0);
    cr_expect_str_eq(err, "bad.ini:20: [pool chat] cpu_step_ms: the steps' CPU parts are not modelled for ranks in "
                          "lockstep (dp > 1 with an MoE model) yet");
    load_error("cpu_tokenize_us_per_token = 250\ncpu_limit_cores = 0.5\n", err, sizeof err);
    cr_expect_str_eq(err, "");

    /* The program: the same line on stderr, exit 2. */
    char path[] = "/tmp/latsim_llm_cpu_XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    lone_text(text, sizeof text, 3, "cpu_limit_cores = 0.5\n");
    cr_assert_eq(write(fd, text, strlen(text)), (ssize_t) strlen(text));
    close(fd);
    char cmd[512];
    snprintf(cmd, sizeof cmd, LATSIM_SH " run %s --no-store >/dev/null 2>%s.err", path, path);
    int st = system(cmd);
    cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 2, "status %d", st);
    char errpath[64], line[512] = "";
    snprintf(errpath, sizeof errpath, "%s.err", path);
    FILE *f = fopen(errpath, "r");
    cr_assert_not_null(f);
    cr_expect_not_null(fgets(line, sizeof line, f));
    fclose(f);
    cr_expect_not_null(strstr(line, ":19: [pool chat] cpu_limit_cores: an llm pool's CPU work"), "%s", line);
    unlink(errpath);
    unlink(path);
}
