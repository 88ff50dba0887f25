/* test_defaults.c -- defaults that must not change an answer silently (issue 22):
 * synthetic prompts are hashed at the pool's KV block granularity (block_tokens),
 * not at a trace's hash_block_tokens; a cache hit skips whole blocks only and
 * never the prompt's last token (vLLM); the automatic warm-up waits for caches
 * to fill, so a result cache's hit rate does not depend on the run's length. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "report/report.h"
#include "tsim.h"

/* A 2000-token system prompt before a 900-token user part, arrivals 2 s apart
 * (nothing in flight), room for everything: every measured request finds the
 * whole KV blocks of the system prompt.  16-token blocks: 125 whole blocks, all
 * 2000 tokens (the old 512-token hashing found 3 blocks, 1536); 32-token blocks:
 * 62 whole blocks, 1984 tokens; 512-token blocks: 3, 1536. */
Test(defaults, system_prompt_is_hashed_per_kv_block)
{
    static const struct { int block; double found; } cases[] = { { 16, 2000 }, { 32, 1984 }, { 512, 1536 } };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char text[1024];
        snprintf(text, sizeof text,
                 "[sim]\nrequests = 200\nwarmup = 20\n[workload]\narrival = constant\nrate = 0.5\n"
                 "prompt_tokens = const(900)\noutput_tokens = const(50)\nsystem_prompt_tokens = 2000\ntarget = chat\n"
                 "[pool chat]\nkind = llm\nmodel = llama-3-8b\ngpu = h100\nprefix_cache = yes\nblock_tokens = %d\n",
                 cases[i].block);
        sim_result res;
        tsim_run("/tmp/test_defaults.ini", text, 1, &res);
        cr_assert_float_eq(tsim_pv(&res, 0, "prefix_hit_rate"), cases[i].found / 2900.0, 1e-12,
                           "block_tokens %d: %g", cases[i].block, tsim_pv(&res, 0, "prefix_hit_rate"));
        cr_assert_eq(tsim_pv(&res, 0, "prefill_tokens_saved"), cases[i].found,
                     "block_tokens %d", cases[i].block);
        sim_result_free(&res);
    }
}

/* A trace whose 2000-token prompts all carry the same 125 hash ids of 16 tokens
 * (hash_block_tokens = 16): every prompt is found whole, but the last token must
 * be computed for its logits, and a hit skips whole KV blocks only: 1999 tokens
 * round down to 124 blocks, 1984 tokens skipped (vLLM's rule; 1534 was the mean
 * with 512-token hashing).  hash_block_tokens = 512 (4 ids, the last partial)
 * skips the same 1984. */
Test(defaults, a_whole_prompt_hit_skips_whole_blocks_but_the_last_token)
{
    static const int hbt[] = { 16, 512 };
    for (size_t i = 0; i < 2; i++) {
        const char *path = "/tmp/latsim_defaults_trace.jsonl";
        FILE *f = fopen(path, "w");
        cr_assert(f);
        int ids = (2000 + hbt[i] - 1) / hbt[i];
        for (int r = 0; r < 100; r++) {
            fprintf(f, "{\"timestamp\": %d, \"input_length\": 2000, \"output_length\": 20, \"hash_ids\": [", r * 2000);
            for (int k = 0; k < ids; k++) fprintf(f, "%s%d", k ? ", " : "", k);
            fprintf(f, "]}\n");
        }
        fclose(f);
        char text[1024];
        snprintf(text, sizeof text,
                 "[sim]\nrequests = 90\nwarmup = 10\n[workload]\narrival = trace\ntrace = %s\nhash_block_tokens = %d\n"
                 "target = chat\n[pool chat]\nkind = llm\nmodel = llama-3-8b\ngpu = h100\nprefix_cache = yes\n",
                 path, hbt[i]);
        sim_result res;
        tsim_run("/tmp/test_defaults.ini", text, 1, &res);
        cr_assert_eq(tsim_pv(&res, 0, "prefix_hit_rate"), 1, "hash_block_tokens %d", hbt[i]);
        cr_assert_eq(tsim_pv(&res, 0, "prefill_tokens_saved"), 1984, "hash_block_tokens %d: %g",
                     hbt[i], tsim_pv(&res, 0, "prefill_tokens_saved"));
        sim_result_free(&res);
        remove(path);
    }
}

/* hash_block_tokens names what a trace's hash ids stand for: set without a
 * trace it would do nothing, so it is refused, naming the file, line and key. */
Test(defaults, hash_block_tokens_without_a_trace_is_refused)
{
    char err[1024] = "";
    cr_assert_neq(tsim_load_error("s.ini", "[workload]\nrate = 1\nhash_block_tokens = 16\n"
                                  "[pool p]\nservice_ms = const(1)\n", err, sizeof err), 0);
    cr_assert(strstr(err, "s.ini:3: [workload] hash_block_tokens: applies to a trace's hash ids only"), "%s", err);
}
