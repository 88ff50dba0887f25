/* test_honest.c -- honest numbers (issue 29): the framework overhead of an LLM
 * server's steps reported as overhead, not service; breakdown shares that are
 * shares of the mean (a component's mean over the mean e2e); requests that
 * waited for a start counted cold.
 *
 * The LLM cases run scenarios/chat_plan.ini (Llama-3-70B on 3 x H100 tp 8 at
 * 50 req/s, Azure conversation lengths; 8000 requests) in-process, with one key
 * added to its pool; the suite runs from the repository root. */
#include <criterion/criterion.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run/breakdown.h"
#include "run/scenario.h"
#include "run/sim.h"
#include "tsim.h"

#define CHAT "scenarios/chat_plan.ini"

/* Runs chat_plan.ini with EXTRA (key lines) added at the top of its [pool chat]. */
static void run_chat(const char *extra, sim_result *res)
{
    FILE *f = fopen(CHAT, "r");
    cr_assert_not_null(f, "cannot read %s (run from the repository root)", CHAT);
    static char text[65536];
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = 0;
    char *at = strstr(text, "[pool chat]\n");
    cr_assert_not_null(at);
    at += strlen("[pool chat]\n");
    static char full[70000];
    snprintf(full, sizeof full, "%.*s%s%s", (int) (at - text), text, extra, at);
    tsim_run(CHAT, full, 1, res);
}

/* Raising the per-step overhead from 1 to 5 ms makes steps slower by the same
 * 4 ms each; all of that is framework overhead, so the overhead share of e2e
 * and of TTFT must rise (before issue 29 it stayed 0.0 %: step overheads were
 * reported as service).  Each step has 1 + 80 layers x 20 us = 2.6 ms of
 * overhead at the default, 6.6 ms at 5 ms: the TTFT breakdown's overhead of a
 * request whose prompt took one prefill step is that. */
Test(honest, step_overhead_is_overhead_not_service)
{
    sim_result a, b;
    run_chat("", &a);
    run_chat("step_overhead_ms = 5\n", &b);
    cr_assert(!tsim_sat(&a) && !tsim_sat(&b));
    double oa = tsim_bd(&a, "breakdown.all", BD_OVERHEAD), ob = tsim_bd(&b, "breakdown.all", BD_OVERHEAD);
    /* chat_plan's steps are tens of ms: 2.6 ms of each is several per cent */
    cr_expect_gt(oa, 0.05, "overhead share %.4f at step_overhead_ms = 1", oa);
    cr_expect_gt(ob, oa + 0.05, "overhead share %.4f at 5 ms, %.4f at 1 ms", ob, oa);
    cr_expect_lt(tsim_bd(&b, "breakdown.all", BD_SERVICE), tsim_bd(&a, "breakdown.all", BD_SERVICE));
    double ta = tsim_bd(&a, "ttft_breakdown.all", TB_OVERHEAD), tb = tsim_bd(&b, "ttft_breakdown.all", TB_OVERHEAD);
    cr_expect_gt(tb, ta + 0.02, "TTFT overhead %.4f vs %.4f", tb, ta);
    /* The overhead statistic carries it too, and the parts still add up to e2e. */
    cr_expect_gt(tsim_sys(&b, "overhead")->mean, tsim_sys(&a, "overhead")->mean + 100);
    for (int k = 0; k < 2; k++) {
        const sim_result *r = k ? &b : &a;
        double sum = tsim_sys(r, "queue")->mean + tsim_sys(r, "service")->mean + tsim_sys(r, "overhead")->mean;
        cr_expect_float_eq(sum, tsim_sys(r, "e2e")->mean, 1e-9 * tsim_sys(r, "e2e")->mean, "parts %.9g e2e %.9g", sum,
                           tsim_sys(r, "e2e")->mean);
    }
    sim_result_free(&a);
    sim_result_free(&b);
}

/* A cost model without an overhead split (linear) counts its steps as compute:
 * the LLM pool's overhead is then its request_overhead_ms alone. */
Test(honest, linear_model_steps_are_compute)
{
    sim_result r;
    run_chat("cost = linear\nstep_base_ms = 5\nprefill_ms_per_token = 0.02\ndecode_ms_per_seq = 0.05\n"
             "kv_ms_per_1k_tokens = 0.01\nrequest_overhead_ms = 0\n", &r);
    cr_assert(!tsim_sat(&r));
    cr_expect_eq(tsim_bd(&r, "breakdown.all", BD_OVERHEAD), 0.0);
    cr_expect_eq(tsim_sys(&r, "overhead")->mean, 0.0);
    sim_result_free(&r);
}

/* One definition: a share is the component's mean over the mean e2e (not the
 * mean of per-request ratios), so share x mean e2e is the component's mean;
 * the same for the TTFT breakdown. */
Test(honest, shares_are_shares_of_the_mean)
{
    sim_result r;
    run_chat("", &r);
    double e = tsim_sys(&r, "e2e")->mean;
    cr_expect_float_eq(tsim_bd(&r, "breakdown.all", BD_QUEUE) * e, tsim_sys(&r, "queue")->mean, 1e-9 * e);
    cr_expect_float_eq(tsim_bd(&r, "breakdown.all", BD_SERVICE) * e, tsim_sys(&r, "service")->mean, 1e-9 * e);
    cr_expect_float_eq(tsim_bd(&r, "breakdown.all", BD_OVERHEAD) * e, tsim_sys(&r, "overhead")->mean, 1e-9 * e);
    double t = tsim_sys(&r, "ttft")->mean, sum = 0;
    for (int k = 0; k < TB_N; k++) sum += tsim_bd(&r, "ttft_breakdown.all", k) * t;
    cr_expect_float_eq(sum, t, 1e-9 * t);
    cr_expect_float_eq(tsim_bd(&r, "ttft_breakdown.all", TB_QUEUE) * t, tsim_bd(&r, "ttft_breakdown.mean_ms", TB_QUEUE),
                       1e-9 * t);
    sim_result_free(&r);
}

/* Scale from zero (min_replicas = 0, cold_factor = 1): one request every 100 s
 * on average finds no server up (it scaled down after 1 s of cooldown), waits
 * for one to be provisioned (1 s) and started (2 s), and is served in 450 ms
 * on average: nearly every request is cold, at about 3.5 s, and the counts
 * add up. */
Test(honest, scale_from_zero_requests_are_cold)
{
    const char *text =
        "[sim]\nrequests = 400\nwarmup = 20\nseed = 1\n[workload]\narrival = poisson\nrate = 0.01\n"
        "[pool cpu]\nservers = 1\nservice_ms = exp(mean=450)\nmin_replicas = 0\nmax_replicas = 1\n"
        "autoscale = queue\nautoscale_target = 1\nautoscale_interval_s = 1\ncooldown_s = 1\nprovision_s = 1\n"
        "startup_s = 2\ncold_factor = 1\n";
    sim_result r;
    tsim_run("/tmp/test_honest_zero.ini", text, 1, &r);
    double cold = sim_result_get(&r, "", "served_cold", "value"), warm = sim_result_get(&r, "", "served_warm", "value");
    cr_assert(!isnan(cold), "a pool that scales from zero reports cold and warm apart");
    cr_expect_eq(cold + warm, (double) tsim_n(&r, "served"));
    cr_expect_geq(cold, (double) (tsim_n(&r, "served") * 9 / 10), "cold %g of %llu", cold,
                  (unsigned long long) tsim_n(&r, "served"));
    double cold_ms = sim_result_get(&r, "", "e2e_cold", "mean");
    cr_expect_gt(cold_ms, 3000.0, "cold mean %.1f ms (3 s of start)", cold_ms);
    cr_expect_lt(sim_result_get(&r, "", "e2e_warm", "mean"), cold_ms - 2000.0);
    sim_result_free(&r);
}

/* The same for an LLM pool scaled from zero: every request waits for a replica
 * to load its weights (llama-3-8b bf16, 16 GB over network storage, about 15 s). */
Test(honest, llm_scale_from_zero_requests_are_cold)
{
    const char *text =
        "[sim]\nrequests = 100\nwarmup = 5\nseed = 1\n[workload]\narrival = poisson\nrate = 0.005\n"
        "prompt_tokens = const(500)\noutput_tokens = const(50)\n"
        "[pool chat]\nkind = llm\nmodel = llama-3-8b\ngpu = h100\nreplicas = 1\nmin_replicas = 0\nmax_replicas = 1\n"
        "autoscale = queue\nautoscale_target = 1\nautoscale_interval_s = 1\ncooldown_s = 1\nstorage = network\n"
        "cold_factor = 1\n";
    sim_result r;
    tsim_run("/tmp/test_honest_zero_llm.ini", text, 1, &r);
    double cold = sim_result_get(&r, "", "served_cold", "value"), warm = sim_result_get(&r, "", "served_warm", "value");
    cr_assert(!isnan(cold));
    cr_expect_eq(cold + warm, (double) tsim_n(&r, "served"));
    cr_expect_geq(cold, (double) (tsim_n(&r, "served") * 9 / 10));
    double ttft = sim_result_get(&r, "", "ttft_cold", "mean");
    cr_expect_gt(ttft, 10000.0, "cold TTFT %.1f ms", ttft);
    sim_result_free(&r);
}

/* A result cache's hit rate by the knob users think in: repeat_share, the share
 * of requests that repeat an earlier one.  The defaults give 0.3; 0.6 gives 0.6
 * (unbounded capacity, no TTL: a repeat misses only while the earlier answer is
 * still on its way, 10 ms of 200 ms between requests here).  18 000 measured
 * lookups: a binomial share's standard error is 0.0037 at most; 0.02 is over 5. */
Test(honest, result_cache_repeat_share_is_its_hit_rate)
{
    const char *text =
        "[sim]\nrequests = 20000\nwarmup = 2000\n[workload]\nrate = 5\ntarget = cache\n"
        "[pool cache]\nkind = result_cache\nnext = work\n%s"
        "[pool work]\nservice_ms = const(10)\n";
    const char *extra[] = { "", "repeat_share = 0.6\n", "repeat_share = 0\n" };
    const double want[] = { 0.3, 0.6, 0 };
    for (int i = 0; i < 3; i++) {
        char t[1024];
        snprintf(t, sizeof t, text, extra[i]);
        sim_result r;
        tsim_run("/tmp/test_honest_rc.ini", t, 1, &r);
        double h = tsim_pv(&r, 0, "hit_rate");
        cr_expect_float_eq(h, want[i], 0.02, "%s: hit rate %.4f, want %.2f", extra[i][0] ? extra[i] : "defaults", h, want[i]);
        sim_result_free(&r);
    }
    scenario sc;
    char err[1024];
    snprintf(err, sizeof err, "%s", "");
    char t[1024];
    snprintf(t, sizeof t, text, "repeat_share = 0.5\nintents = 100\n");
    cr_expect_neq(tsim_load_resolve("/tmp/test_honest_rc.ini", t, &sc, err, sizeof err), 0);
    cr_expect(strstr(err, "repeat_share") && strstr(err, "not both"), "%s", err);
}
