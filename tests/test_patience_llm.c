/* test_patience_llm.c -- clients who leave an LLM pool while their request is
 * served (patience_s, issue 34): the sequence's work stops, its KV blocks are
 * freed and it leaves the batch.  A probe scheduler (continuous, registered at
 * run time as tests/test_sched_reg.c does) records every plan of the replica:
 * when it admits, and how many KV blocks are free then.  Runs go in-process
 * with LATSIM_CHECK=1, so the replica's whole-structure checks (KV blocks held
 * + free = capacity, running = prefilling + decoding) run at every step. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llm/replica.h"
#include "llm/sched.h"
#include "tsim.h"

/* ---- the probe: continuous scheduling, every plan recorded ------------------------ */

enum { MAX_PLANS = 256 };
typedef struct plan_rec {
    simtime_t at;            /* when, ns */
    int nrun_before;         /* running sequences before the plan */
    int64_t free_before;     /* free KV blocks before the plan */
    int admitted;            /* sequences it admitted */
} plan_rec;
static plan_rec plans[MAX_PLANS];
static int nplans;
static int64_t kv_blocks;    /* the replica's capacity, blocks */

static simtime_t probe_plan(replica *R)
{
    int before = R->nrun;
    int64_t free_before = R->free_blocks;
    simtime_t rc = rep_plan_iteration(R, INT64_MAX, 0, 0);
    if (nplans < MAX_PLANS)
        plans[nplans++] = (plan_rec) { evq_now(R->pool->st.q), before, free_before, R->nrun - before };
    kv_blocks = R->pool->cfg->kv_blocks;
    return rc;
}

static const llm_sched PROBE = {
    .name = "probe_cancel",
    .help = "continuous, every plan recorded (tests/test_patience_llm.c)",
    .plan = probe_plan,
    .complete = rep_complete_iteration,
};

static void setup(void)
{
    cr_assert_eq(llm_sched_register(&PROBE), 0);
    setenv("LATSIM_CHECK", "1", 1);
    nplans = 0;
}

static tsim_pr chat(const sim_result *r)
{
    cr_assert_eq(tsim_npools(r), 1);
    return tsim_pool_at(r, 0);
}

/* One replica, one sequence at a time (max_batch = 1), a prefill step of
 * 5 + 0.1 x 2000 = 205 ms, arrivals 100 ms apart, every client's patience
 * 150 ms.  By hand: request 0 is admitted at its arrival a0 and cancelled at
 * a0 + 150 ms, where its step stops; request 1 (arrived at a0 + 100) is admitted
 * then, at a0 + 150, and cancelled at its own patience, a0 + 250, when request
 * 2 (arrived at a0 + 200) starts; in general request k >= 1 starts at
 * a0 + 100 k + 50.  Every admission finds the KV cache empty (the cancelled
 * sequence's blocks came back), nobody is served, every request is abandoned in
 * service, and no step completed, so no prompt token was prefilled for them. */
Test(patience_llm, cancelled_at_patience_next_starts_then, .init = setup)
{
    const int N = 12;
    char text[1024];
    snprintf(text, sizeof text,
             "[sim]\nrequests = %d\nwarmup = 0\n"
             "[workload]\narrival = constant\nrate = 10\nprompt_tokens = const(2000)\noutput_tokens = const(4)\n"
             "patience_s = const(0.15)\n"
             "[pool chat]\nkind = llm\nmodel = llama-3-8b\ngpu = h100\nscheduler = probe_cancel\nmax_batch = 1\n"
             "cost = linear\nstep_base_ms = 5\nprefill_ms_per_token = 0.1\ndecode_ms_per_seq = 0.05\n",
             N);
    sim_result res;
    tsim_run("/tmp/test_patience_llm.ini", text, 1, &res);
    cr_assert_eq(tsim_n(&res, "requests"), (uint64_t) N);
    cr_assert_eq(tsim_n(&res, "served"), 0);
    cr_assert_eq(tsim_n(&res, "abandoned"), (uint64_t) N);
    tsim_pr p =chat(&res);
    cr_assert_eq(tsim_prv(p, "cancelled"), (double) N, "every one left in service");
    cr_assert_eq(tsim_prv(p, "abandoned"), (double) N);
    cr_assert_eq(tsim_prv(p, "cancelled_prefill_tokens"), 0.0, "no prefill step completed");
    /* The admissions, at the times computed above. */
    int k = 0;
    simtime_t a0 = -1;
    for (int i = 0; i < nplans; i++) {
        if (plans[i].admitted == 0) continue;
        cr_assert_eq(plans[i].admitted, 1);
        cr_assert_eq(plans[i].nrun_before, 0);
        cr_assert_eq(plans[i].free_before, kv_blocks, "admission %d: %lld of %lld KV blocks free", k,
                     (long long) plans[i].free_before, (long long) kv_blocks);
        if (k == 0) a0 = plans[i].at;
        else {
            simtime_t want = a0 + simtime_from_ms(100.0 * k + 50);
            cr_assert(llabs(plans[i].at - want) <= 1, "request %d admitted at %lld ns, want %lld", k,
                      (long long) (plans[i].at - a0), (long long) (want - a0));
        }
        k++;
    }
    /* Request N (not measured) arrived before the last cancellation and was admitted at it, as the run stopped. */
    cr_assert(k == N || k == N + 1, "%d admissions", k);
    /* The last plan came after the last cancellation, with the cache empty. */
    cr_assert_eq(plans[nplans - 1].free_before, kv_blocks);
    cr_assert(llabs(plans[nplans - 1].at - (a0 + simtime_from_ms(100.0 * (N - 1) + 150))) <= 1);
    /* The replica was busy from a0 to the last cancellation: its steps' time is spent. */
    cr_assert_float_eq(tsim_prv(p, "busy_share"), 1.0, 1e-9, "utilisation %g", tsim_prv(p, "busy_share"));
    sim_result_free(&res);
}

/* The same, but with patience_in_service = no: the client waits once its prefill
 * has begun, so each request is served; request 1, queued behind request 0 for
 * longer than its patience, leaves the queue. */
Test(patience_llm, queue_only_patience_serves_what_has_begun, .init = setup)
{
    char text[1024];
    snprintf(text, sizeof text,
             "[sim]\nrequests = 12\nwarmup = 0\n"
             "[workload]\narrival = constant\nrate = 10\nprompt_tokens = const(2000)\noutput_tokens = const(4)\n"
             "patience_s = const(0.15)\npatience_in_service = no\n"
             "[pool chat]\nkind = llm\nmodel = llama-3-8b\ngpu = h100\nscheduler = probe_cancel\nmax_batch = 1\n"
             "cost = linear\nstep_base_ms = 5\nprefill_ms_per_token = 0.1\ndecode_ms_per_seq = 0.05\n");
    sim_result res;
    tsim_run("/tmp/test_patience_llm2.ini", text, 1, &res);
    tsim_pr p =chat(&res);
    cr_assert_gt(tsim_n(&res, "served"), 0);
    cr_assert_gt(tsim_n(&res, "abandoned"), 0);
    cr_assert_eq(tsim_prv(p, "cancelled"), 0.0, "nobody leaves in service");
    cr_assert_eq(tsim_n(&res, "served") + tsim_n(&res, "abandoned"), 12);
    cr_assert_gt(tsim_sys(&res, "ttft")->max, 150.0, "those who began were served beyond their patience");
    sim_result_free(&res);
}

/* Cancelling in service frees capacity.  One replica at about 1.2 x its
 * capacity (12 requests/s of 2000-token prompts, prefilled in chunks, and 100
 * output tokens), every client's patience 1 s; the stayers are the requests
 * served with their first token within 1 s ([slo] ttft limit 1000 ms: the run's
 * goodput).  With the work of those who left cancelled (patience_in_service =
 * yes, the default) the replica serves the others: 3.74 stayers per second,
 * against 1.74 when the prefills already begun run to their end (no) and
 * mostly finish too late.  Asserted: at least 1.5 x, with every step's sanity
 * checks on (sequences leaving shared steps at their end). */
Test(patience_llm, cancelling_in_service_frees_capacity, .init = setup, .timeout = 60)
{
    const char *text =
        "[sim]\nrequests = 4000\nwarmup = 500\n"
        "[workload]\nrate = 12\nprompt_tokens = lognormal(mean=2000, cv=0.5)\noutput_tokens = const(100)\n"
        "patience_s = const(1.0)\npatience_in_service = %s\n"
        "[pool chat]\nkind = llm\nmodel = llama-3-8b\ngpu = h100\nscheduler = chunked\nmax_batch = 8\n"
        "cost = linear\nstep_base_ms = 5\nprefill_ms_per_token = 0.05\ndecode_ms_per_seq = 0.2\n"
        "[slo]\nttft_p99_ms = 1000\n";
    double rate[2];
    for (int i = 0; i < 2; i++) {
        char buf[1024];
        snprintf(buf, sizeof buf, text, i == 0 ? "yes" : "no");
        sim_result res;
        tsim_run("/tmp/test_patience_llm3.ini", buf, 1, &res);
        double good = sim_result_get(&res, "", "goodput", "value") * (double) tsim_n(&res, "requests");
        cr_assert(!isnan(good), "an [slo] with per-request limits: goodput is reported");
        cr_assert_eq(tsim_n(&res, "served") + tsim_n(&res, "abandoned") + tsim_n(&res, "rejected"),
                     tsim_n(&res, "requests"));
        if (i == 0) {
            cr_assert_float_eq(good, (double) tsim_n(&res, "served"), 1e-9 * good,
                               "every stayer began within its patience");
            cr_assert_gt(tsim_prv(chat(&res), "cancelled"), 0.0);
            cr_assert_gt(tsim_prv(chat(&res), "cancelled_prefill_tokens"), 0.0, "chunks done for them are spent");
        } else
            cr_assert_lt(good, (double) tsim_n(&res, "served") - 0.5, "some began in time and were served too late");
        rate[i] = good / tsim_v(&res, "window_s");
        sim_result_free(&res);
    }
    cr_assert_gt(rate[0], 1.5 * rate[1], "stayers %g/s with cancelling, %g/s without", rate[0], rate[1]);
}

/* Disaggregated serving (scenarios/pd_disagg.ini) with impatient clients: they
 * leave the prefill pool (queued, or cancelled while prefilling), never the
 * decode pool, whose requests have had their first token. */
Test(patience_llm, nobody_leaves_after_the_first_token, .init = setup, .timeout = 60)
{
    const char *sets[] = { "workload.patience_s=exp(mean=0.3)", "sim.requests=3000" };
    sim_result res;
    tsim_run_file("scenarios/pd_disagg.ini", sets, 2, 1, &res);
    tsim_pr pre = tsim_pool_named(&res, "prefill"), dec = tsim_pool_named(&res, "decode");
    cr_assert_gt(tsim_prv(pre, "cancelled"), 0.0, "some prefills were cancelled");
    cr_assert_eq(tsim_prv(pre, "abandoned"), (double) tsim_n(&res, "abandoned"),
                 "all who left, left the prefill pool");
    cr_assert_eq(tsim_prv(dec, "abandoned"), 0.0);
    cr_assert_eq(tsim_n(&res, "served") + tsim_n(&res, "abandoned") + tsim_n(&res, "rejected"),
                 tsim_n(&res, "requests"));
    sim_result_free(&res);
}
