/* test_sched_reg.c -- a scheduler defined outside sim/llm, added to the
 * scheduler table at run time (llm_sched_register), as docs/architecture.md ("Adding a scheduler")
 * shows: "fifo_one", iteration-level like continuous but admitting at most
 * admit_per_step (its own key, default 1) new sequences per step.  Runs go
 * in-process with LATSIM_CHECK=1, so the replica's whole-structure checks
 * (KV blocks held + free = capacity, never negative) run at every step and
 * abort the run on any inconsistency. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llm/replica.h"
#include "llm/sched.h"
#include "run/scenario.h"
#include "tsim.h"

/* ---- the scheduler: one file's worth ------------------------------------------- */

typedef struct fifo_one_cfg {
    int admit_per_step;       /* new sequences admitted per step, at most */
} fifo_one_cfg;

static const scn_key FIFO_ONE_KEYS[] = {
    { "admit_per_step", "1", "fifo_one: new sequences admitted per step, at most" },
    { NULL, NULL, NULL },
};

static int fifo_one_parse(scn_ctx *x, const char *sec, llm_cfg *l)
{
    fifo_one_cfg *c = calloc(1, sizeof *c);
    if (!c) return scn_fail_sec(x, sec, NULL, "out of memory");
    l->sched_cfg = c;
    return scn_int(x, sec, "admit_per_step", 1, 1, 1000000, &c->admit_per_step);
}

static simtime_t fifo_one_plan(replica *R)
{
    const fifo_one_cfg *c = R->pool->cfg->sched_cfg;
    return rep_plan_iteration(R, INT64_MAX, 0, c->admit_per_step);
}

static const llm_sched FIFO_ONE = {
    .name = "fifo_one",
    .help = "continuous, admitting at most admit_per_step new sequences per step",
    .flags = LLM_SCHED_FLEET | LLM_SCHED_PREFIX_CACHE,
    .keys = FIFO_ONE_KEYS,
    .parse = fifo_one_parse,
    .plan = fifo_one_plan,
    .complete = rep_complete_iteration,
};

static void setup(void)
{
    cr_assert_eq(llm_sched_register(&FIFO_ONE), 0);
    setenv("LATSIM_CHECK", "1", 1);
}

/* ---- helpers --------------------------------------------------------------------- */

/* A load on one replica where several requests arrive during a step (20 ms of
 * fixed time per step, 40 requests/s):
 * SCHED_LINES picks the scheduler. */
static void scenario_text(char *buf, size_t n, const char *sched_lines)
{
    snprintf(buf, n,
             "[sim]\nrequests = 400\nwarmup = 0\nseed = 3\n"
             "[workload]\narrival = poisson\nrate = 40\n"
             "prompt_tokens = uniform(min=50, max=400)\noutput_tokens = uniform(min=10, max=120)\n"
             "[pool chat]\nkind = llm\nmodel = llama-3-8b\ngpu = h100\nkv_blocks = 4000\n"
             "cost = linear\nstep_base_ms = 20\nprefill_ms_per_token = 0.02\ndecode_ms_per_seq = 0.1\n%s",
             sched_lines);
}

static void run(const char *sched_lines, sim_result *res)
{
    char text[2048];
    scenario_text(text, sizeof text, sched_lines);
    tsim_run("sched_reg.ini", text, 1, res);
}

/* ---- tests ----------------------------------------------------------------------- */

Test(sched_reg, fifo_one_admits_one_per_step, .init = setup)
{
    sim_result one, cont, wide;
    run("scheduler = fifo_one\n", &one);
    run("scheduler = continuous\n", &cont);
    run("scheduler = fifo_one\nadmit_per_step = 100000\n", &wide);
    /* Everyone is served, within the KV cache (and the checks ran every step). */
    cr_expect_eq(tsim_n(&one, "requests"), 400);
    cr_expect_eq(tsim_n(&one, "served"), 400);
    cr_expect_eq(tsim_n(&cont, "served"), 400);
    cr_expect_leq(tsim_pv(&one, 0, "kv_peak"), 1.0);
    cr_expect_gt(tsim_pv(&one, 0, "kv_peak"), 0.0);
    /* Admitting one newcomer per step, prompts wait steps longer than with continuous. */
    cr_expect_gt(tsim_sys(&one, "ttft")->mean, tsim_sys(&cont, "ttft")->mean * 1.05,
                 "fifo_one TTFT %.3f ms, continuous %.3f ms",
                 tsim_sys(&one, "ttft")->mean, tsim_sys(&cont, "ttft")->mean);
    /* Without the limit it is continuous, step for step. */
    cr_expect_eq(tsim_sys(&wide, "ttft")->mean, tsim_sys(&cont, "ttft")->mean);
    cr_expect_eq(tsim_sys(&wide, "e2e")->mean, tsim_sys(&cont, "e2e")->mean);
    cr_expect_eq(tsim_pv(&wide, 0, "steps"), tsim_pv(&cont, 0, "steps"));
    sim_result_free(&one);
    sim_result_free(&cont);
    sim_result_free(&wide);
}

Test(sched_reg, the_table_takes_it_once, .init = setup)
{
    cr_expect_eq(llm_sched_find("FIFO_ONE"), &FIFO_ONE);
    cr_expect_eq(llm_sched_index(&FIFO_ONE), llm_sched_count() - 1);
    cr_expect_eq(llm_sched_register(&FIFO_ONE), 0, "registering twice is harmless");
    llm_sched other = FIFO_ONE;
    cr_expect_eq(llm_sched_register(&other), -1, "a second row named fifo_one");
    other.name = "continuous";
    cr_expect_eq(llm_sched_register(&other), -1, "a built-in's name");
    other.name = "no_hooks";
    other.plan = NULL;
    cr_expect_eq(llm_sched_register(&other), -1, "a row without a plan hook");
    char buf[256];
    llm_sched_choices(buf, sizeof buf);
    cr_expect_str_eq(buf, "static|dynamic|continuous|chunked|fifo_one");
    llm_sched_names_with(LLM_SCHED_FLEET, buf, sizeof buf);
    cr_expect_str_eq(buf, "continuous, chunked or fifo_one");
}

/* Its key is read by its own parse hook (a bad value names the key), accepted in
 * any LLM pool (so --set can switch schedulers) and listed by `latsim keys`. */
Test(sched_reg, its_keys, .init = setup)
{
    char text[2048], err[1024];
    scenario_text(text, sizeof text, "scheduler = fifo_one\nadmit_per_step = 0\n");
    cr_expect_neq(tsim_load_error("sched_reg.ini", text, err, sizeof err), 0);
    cr_expect(strstr(err, "admit_per_step") != NULL && !strchr(err, '\n'), "%s", err);
    scenario_text(text, sizeof text, "scheduler = continuous\nadmit_per_step = 4\n");
    cr_expect_eq(tsim_load_error("sched_reg.ini", text, err, sizeof err), 0, "%s", err);
    scenario_text(text, sizeof text, "scheduler = fifo\n");
    cr_expect_neq(tsim_load_error("sched_reg.ini", text, err, sizeof err), 0);
    cr_expect(strstr(err, "valid: static,dynamic,continuous,chunked,fifo_one") != NULL, "%s", err);

    char *keys = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&keys, &len);
    cr_assert_not_null(f);
    scenario_print_keys(f, 0);
    fclose(f);
    cr_expect(strstr(keys, "admit_per_step") != NULL, "latsim keys lists the registered row's key");
    cr_expect(strstr(keys, "chunk_tokens") != NULL && strstr(keys, "max_wait_ms") != NULL);
    cr_expect(strstr(keys, "a row of the scheduler table: static | dynamic | continuous | chunked | fifo_one;") != NULL,
              "the scheduler key's help lists the rows, the registered one too");
    free(keys);
}

/* A scheduler without the flag cannot serve a prefix-cached or fleet pool; the
 * message lists the rows that can. */
Test(sched_reg, flags_decide_support, .init = setup)
{
    char text[2048], err[1024];
    scenario_text(text, sizeof text, "scheduler = static\nprefix_cache = yes\n");
    cr_expect_neq(tsim_load_error("sched_reg.ini", text, err, sizeof err), 0);
    cr_expect(strstr(err, "(continuous, chunked or fifo_one), not static") != NULL, "%s", err);
    /* The iteration-level ones (no LLM_SCHED_BATCHES): speculative decoding, LoRA, dp ranks. */
    char names[256];
    llm_sched_names_without(LLM_SCHED_BATCHES, names, sizeof names);
    cr_expect_str_eq(names, "continuous, chunked or fifo_one");
    static const char *const ITER[] = { "spec_method = ngram\n", "adapters = 2\n", "dp = 2\n" };
    for (size_t i = 0; i < sizeof ITER / sizeof ITER[0]; i++) {
        char body[128];
        snprintf(body, sizeof body, "scheduler = dynamic\n%s", ITER[i]);
        scenario_text(text, sizeof text, body);
        cr_expect_neq(tsim_load_error("sched_reg.ini", text, err, sizeof err), 0, "%s", body);
        cr_expect(strstr(err, "(continuous, chunked or fifo_one), not dynamic") != NULL, "%s: %s", body, err);
    }
    scenario_text(text, sizeof text, "scheduler = fifo_one\nprefix_cache = yes\n");
    cr_expect_eq(tsim_load_error("sched_reg.ini", text, err, sizeof err), 0, "%s", err);
}
