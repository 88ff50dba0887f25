/* test_llm_checked.c -- every LLM scheduler and every LLM feature under load
 * with the whole-structure sanity checks at every step (LATSIM_CHECK=1:
 * sim/engine/check.h, rep_sane in sim/llm/step.c; any broken invariant aborts
 * the run and so fails the test), whatever period the rest of `make test`
 * samples them at.  The schedulers are read from their table (llm_sched_at),
 * so a new row is checked without a new test; the features (prefix cache,
 * speculative decoding, LoRA, KV offload, data, pipeline and expert
 * parallelism, disaggregated prefill/decode, patience, CPU tokenisation) each
 * run under a KV cache of 400 blocks that a dozen sequences fill.  Each run must serve every
 * request. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "engine/check.h"
#include "llm/sched.h"
#include "tcheck.h"
#include "tsim.h"

TestSuite(llm_checked, .init = tcheck_every_step);

#define NREQ 300

/* The linear step cost every pool here uses: 8 ms a step, 0.05 ms per prompt
 * token, 0.2 ms per decoding sequence. */
#define LIN "cost = linear\nstep_base_ms = 8\nprefill_ms_per_token = 0.05\ndecode_ms_per_seq = 0.2\n"

/* A Poisson load of NREQ requests (prompts 50-600 tokens, answers 5-120) on
 * pool chat: Llama-3-8B (unless POOL names a model) on an H100 with 400 KV
 * blocks (6400 tokens: full, sequences preempted), the linear cost, POOL's lines and then WORKLOAD's
 * under [workload] (the text ends in that section). */
static void text_of(char *buf, size_t n, const char *pool, const char *workload)
{
    snprintf(buf, n,
             "[sim]\nrequests = %d\nwarmup = 0\nseed = 7\n"
             "[pool chat]\nkind = llm\ngpu = h100\nkv_blocks = 400\n" LIN "%s%s"
             "[workload]\narrival = poisson\nrate = 30\n"
             "prompt_tokens = uniform(min=50, max=600)\noutput_tokens = uniform(min=5, max=120)\n%s",
             NREQ, strstr(pool, "model =") ? "" : "model = llama-3-8b\n", pool, workload);
}

/* Runs TEXT (labelled WHAT) and checks that every request was served; returns
 * the first pool's preemptions. */
static double run_served(const char *what, const char *text)
{
    sim_result res;
    cr_assert_eq(check_period(), 1, "LATSIM_CHECK is not 1 in %s", what);
    tsim_run("llm_checked.ini", text, 7, &res);
    cr_expect_eq(tsim_n(&res, "requests"), NREQ, "%s: %lld requests", what, (long long) tsim_n(&res, "requests"));
    cr_expect_eq(tsim_n(&res, "served"), NREQ, "%s: %lld of %d served", what, (long long) tsim_n(&res, "served"), NREQ);
    double preempted = tsim_pv(&res, 0, "preemptions");
    sim_result_free(&res);
    return preempted;
}

/* Every row of the scheduler table, and with a prefix cache each row that supports one. */
Test(llm_checked, every_scheduler_every_step)
{
    int n = llm_sched_count(), pfx = 0;
    double preempted = 0;
    cr_assert_geq(n, 4, "static, dynamic, continuous and chunked at least: %d rows", n);
    for (int i = 0; i < n; i++) {
        const llm_sched *s = llm_sched_at(i);
        char pool[256], text[2048];
        snprintf(pool, sizeof pool, "scheduler = %s\n", s->name);
        text_of(text, sizeof text, pool, "");
        preempted += run_served(s->name, text);
        if (s->flags & LLM_SCHED_PREFIX_CACHE) {
            snprintf(pool, sizeof pool, "scheduler = %s\nprefix_cache = yes\n", s->name);
            text_of(text, sizeof text, pool, "system_prompt_tokens = 300\n");
            run_served(s->name, text);
            pfx++;
        }
    }
    cr_expect_geq(pfx, 2, "continuous and chunked take a prefix cache: %d rows did", pfx);
    cr_expect_gt(preempted, 0, "the KV cache is small enough to preempt (continuous: 38 preemptions)");
}

/* A feature: the pool's and the workload's lines (or a whole scenario). */
typedef struct feature {
    const char *name;       /* what it is */
    const char *pool;       /* lines of [pool chat] */
    const char *workload;   /* lines of [workload] */
} feature;

static const feature FEATURES[] = {
    { "chunked prefill, small chunks", "scheduler = chunked\nmax_batch_tokens = 256\n", "" },
    { "speculative decoding", "spec_method = ngram\nspec_tokens = 4\nspec_acceptance = 0.7\n", "" },
    { "speculative decoding, chunked", "scheduler = chunked\nspec_method = ngram\nspec_tokens = 3\nspec_acceptance = 0.5\n", "" },
    { "LoRA, fewer slots than adapters", "adapters = 6\nmax_loras = 2\nlora_max_wait_ms = 20\n", "" },
    { "prefix cache with CPU offload", "prefix_cache = yes\nkv_offload = cpu\nkv_offload_cpu_gib = 0.01\n",
      "system_prompt_tokens = 300\n" },
    { "prefix cache with CPU and SSD offload",
      "scheduler = chunked\nprefix_cache = yes\nkv_offload = cpu,ssd\nkv_offload_cpu_gib = 0.005\n",
      "system_prompt_tokens = 200\n" },
    { "data parallel ranks", "dp = 2\n", "" },
    { "pipeline stages", "pp = 2\n", "" },
    { "MoE, data parallel in lockstep, expert parallel", "model = qwen3-30b-a3b\ntp = 2\ndp = 2\nep = 4\n", "" },
    { "patience, cancelled in service", "", "patience_s = exp(mean=2)\n" },
    { "CPU tokenisation on a limit", "cpu_tokenize_us_per_token = 20\ncpu_limit_cores = 1\n", "" },
};

Test(llm_checked, every_feature_every_step)
{
    for (size_t i = 0; i < sizeof FEATURES / sizeof FEATURES[0]; i++) {
        char text[2048];
        text_of(text, sizeof text, FEATURES[i].pool, FEATURES[i].workload);
        if (strstr(FEATURES[i].workload, "patience_s")) {
            /* Some clients leave: served + abandoned make the requests. */
            sim_result res;
            tsim_run("llm_checked.ini", text, 7, &res);
            cr_expect_eq(tsim_n(&res, "requests"), NREQ, "%s", FEATURES[i].name);
            cr_expect_gt(tsim_n(&res, "abandoned"), 0, "%s: nobody left", FEATURES[i].name);
            cr_expect_eq(tsim_n(&res, "served") + tsim_n(&res, "abandoned"), NREQ, "%s: %llu served, %llu abandoned",
                         FEATURES[i].name,
                         (unsigned long long) tsim_n(&res, "served"), (unsigned long long) tsim_n(&res, "abandoned"));
            sim_result_free(&res);
        } else {
            run_served(FEATURES[i].name, text);
        }
    }
}

/* Disaggregated serving: prefill pool, KV transfer, decode pool (two replicas each). */
Test(llm_checked, disaggregated_every_step)
{
    char text[2048];
    snprintf(text, sizeof text,
             "[sim]\nrequests = %d\nwarmup = 0\nseed = 7\n"
             "[workload]\narrival = poisson\nrate = 30\ntarget = pre\n"
             "prompt_tokens = uniform(min=50, max=600)\noutput_tokens = uniform(min=5, max=120)\n"
             "[pool pre]\nkind = llm\nmodel = llama-3-8b\ngpu = h100\nrole = prefill\nreplicas = 2\nnext = dec\n"
             "kv_blocks = 400\n" LIN
             "[pool dec]\nkind = llm\nmodel = llama-3-8b\ngpu = h100\nrole = decode\nreplicas = 2\nkv_blocks = 400\n"
             "kv_link_gbs = 10\nkv_link_latency_ms = 0.5\n" LIN, NREQ);
    run_served("prefill/decode", text);
}
