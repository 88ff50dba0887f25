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
    cr_assert_eq(res->served, 3);
    double ttft = tok_ms + 5 + 0.1 * 1000;
    cr_expect_float_eq(res->ttft.mean, ttft, 1e-5, "ttft %.9f vs %.9f", res->ttft.mean, ttft);
    cr_expect_float_eq(res->ttft.max, ttft, 1e-5, "ttft max %.9f vs %.9f", res->ttft.max, ttft);
    cr_expect_float_eq(res->overhead.mean, tok_ms, 1e-5, "overhead %.9f", res->overhead.mean);
    if (periods_per_req >= 0)
        cr_expect_float_eq(pool_metric_get(&res->pools[0], "cpu_throttled_periods"), 3 * periods_per_req, 1e-9,
                           "throttled periods %g", pool_metric_get(&res->pools[0], "cpu_throttled_periods"));
}

Test(llm_cpu, tokenize_on_half_a_core_by_hand)
{
    sim_result res;
    lone("cpu_tokenize_us_per_token = 250\ncpu_limit_cores = 0.5\ncfs_period_ms = 100\n", 450, 4, &res);
    /* Throttled 50 ms in each of the 4 periods before the last. */
    cr_expect_float_eq(pool_metric_get(&res.pools[0], "cpu_throttled_s"), 3 * 0.2, 1e-9);
    sim_result_free(&res);
    lone("cpu_tokenize_us_per_token = 250\ncpu_limit_cores = 1\n", 250, 0, &res);
    sim_result_free(&res);
    lone("", 0, -1, &res);   /* no CPU keys: as before */
    cr_expect(isnan(pool_metric_get(&res.pools[0], "cpu_throttled_periods")), "no CPU metrics without CPU keys");
    sim_result_free(&res);
}

Test(llm_cpu, noisy_node_by_hand)
{
    sim_result res;
    lone("cpu_tokenize_us_per_token = 250\nnode = n1\n[node n1]\ncores = 1\nbackground_cpu = const(0.5)\n", 500, -1,
         &res);
    cr_expect_float_eq(pool_metric_get(&res.pools[0], "node_background_cores"), 0.5, 1e-9);
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
    cr_expect_eq(pool_metric_get(&wide.pools[0], "cpu_throttled_periods"), 0);
    cr_expect_geq(wide.overhead.cdf[0], 100 * (1 - 1e-6), "tokenisation takes its 100 ms at least");
    cr_expect_gt(tight.overhead.mean, 400 - 1e-6, "4 periods of 25 ms of quota: %g", tight.overhead.mean);
    cr_expect_gt(tight.ttft.p99, wide.ttft.p99 + 300, "p99 %g vs %g", tight.ttft.p99, wide.ttft.p99);
    sim_result_free(&tight);
    sim_result_free(&wide);
}

/* The error EXTRA's scenario gives. */
static void load_error(const char *extra, char *err, size_t n)
{
    char text[2048];
    scenario sc;
    lone_text(text, sizeof text, 3, extra);
    if (tsim_load_resolve("bad.ini", text, &sc, err, n) == 0) {
        scenario_free(&sc);
        err[0] = '\0';
    }
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
    cr_expect_str_eq(err, "bad.ini:19: [pool chat] cpu_limit_cores: an llm pool's CPU work is its tokenisation: "
                          "needs cpu_tokenize_us_per_token > 0");
    load_error("cpu_tokenize_us_per_token = 250\ncfs_period_ms = 50\n", err, sizeof err);
    cr_expect_str_eq(err, "bad.ini:19: [pool chat] cpu_tokenize_us_per_token: needs cpu_limit_cores, "
                          "cpu_request_cores or node (the CPU it runs on); a fixed delay is request_overhead_ms");
    load_error("cpu_tokenize_us_per_token = 250\ncpu_request_cores = 1\ncfs_period_ms = 50\n", err, sizeof err);
    cr_expect_str_eq(err, "bad.ini:21: [pool chat] cfs_period_ms: needs cpu_limit_cores (the quota per period)");
    load_error("cpu_tokenize_us_per_token = 250\ncpu_limit_cores = 0.5\nservers_per_replica = 2\n", err, sizeof err);
    cr_expect_str_eq(err, "bad.ini:21: [pool chat] servers_per_replica: not modelled for kind = llm pools "
                          "(generic pools only)");
    load_error("cpu_tokenize_us_per_token = 250\ncpu_limit_cores = 0.5\ndp = 2\n", err, sizeof err);
    cr_expect_str_eq(err, "bad.ini:20: [pool chat] cpu_limit_cores: the CPU keys (tokenisation on a cgroup) are not "
                          "modelled with dp > 1 yet");
    load_error("cpu_tokenize_us_per_token = 250\ncpu_limit_cores = 0.5\n", err, sizeof err);
    cr_expect_str_eq(err, "");

    /* The program: the same line on stderr, exit 2. */
    char path[] = "/tmp/latsim_llm_cpu_XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    char text[2048];
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
