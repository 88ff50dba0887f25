/* test_verbose.c -- `latsim run --verbose`: the answer-changing settings on
 * stderr with their values, marked set or default, and the report unchanged. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include "tbin.h"
#include "tcli.h"

static void setup(void) { tcli_setup("/tmp/latsim_verbose_", NULL); }
TestSuite(verbose, .init = setup, .fini = tcli_teardown);

Test(verbose, defaults_listed_report_unchanged, .timeout = 120)
{
    result a = run(110, "run", "scenarios/gateway_prefix_cache.ini", "--no-store", "--json", "--set", "sim.requests=300", NULL);
    result b = run(110, "run", "scenarios/gateway_prefix_cache.ini", "--no-store", "--json", "--set", "sim.requests=300",
                   "--verbose", NULL);
    cr_assert_eq(a.rc, 0, "%s", a.err);
    cr_assert_eq(b.rc, 0, "%s", b.err);
    cr_expect(strstr(b.err, "[pool chat] block_tokens = 16 (default)") != NULL, "%s", b.err);
    cr_expect(strstr(b.err, "[sim] warmup = automatic (default)") != NULL, "%s", b.err);
    cr_expect(strstr(b.err, "max_batch_tokens = ") != NULL, "%s", b.err);
    /* Each default with its value and why it has it (the scenario reference's text). */
    cr_expect(strstr(b.err, "[pool chat] gpu_memory_utilization = 0.9 (default): ") != NULL, "%s", b.err);
    cr_expect(strstr(b.err, "vLLM's gpu_memory_utilization") != NULL, "%s", b.err);
    cr_expect(strstr(b.err, "[pool chat] max_batch = 256 (default): max sequences in a batch (default 256: vLLM's max_num_seqs)") != NULL,
              "%s", b.err);
    cr_expect(strstr(b.err, "[pool chat] activation_reserve_gib = profiled (default)") != NULL, "%s", b.err);
    /* The derived KV capacity and how (docs/llm.md, "KV capacity"). */
    cr_expect(strstr(b.err, "[pool chat] kv_blocks = ") != NULL && strstr(b.err, " (derived: 0.90 x 79.18 GiB - 14.96 weights - ")
              != NULL, "%s", b.err);
    cr_expect(strstr(b.err, "its caches' hit rates have settled") != NULL, "%s", b.err);
    cr_expect(strstr(a.err, "settings that change answers") == NULL, "without --verbose nothing is listed");
    /* The report does not depend on --verbose, wall time aside. */
    const char *wa = strstr(a.out, "\"wall_time_s\""), *wb = strstr(b.out, "\"wall_time_s\"");
    cr_assert(wa && wb);
    cr_expect(wa - a.out == wb - b.out && !strncmp(a.out, b.out, (size_t) (wa - a.out)), "reports differ before wall_time_s");
    result_free(&a);
    result_free(&b);
    result c = run(110, "run", "scenarios/gateway_prefix_cache.ini", "--no-store", "--set", "sim.requests=300", "--set",
                   "pool chat.block_tokens=32", "--set", "pool chat.scheduler=chunked", "--set", "sim.warmup=50", "--verbose", NULL);
    cr_assert_eq(c.rc, 0, "%s", c.err);
    cr_expect(strstr(c.err, "[pool chat] block_tokens = 32 (set)") != NULL, "%s", c.err);
    cr_expect(strstr(c.err, "[pool chat] chunk_tokens = 512 (default)") != NULL, "%s", c.err);
    cr_expect(strstr(c.err, "[sim] warmup = 50 (set)") != NULL, "%s", c.err);
    result_free(&c);
}

/* Result caches' and traces' answer-changing defaults are listed too, and every
 * line the scenario reference documents carries its reason there. */
Test(verbose, cache_and_trace_defaults)
{
    result a = run(110, "run", "scenarios/gateway_three_models.ini", "--no-store", "--set", "sim.requests=300", "--verbose", NULL);
    cr_assert_eq(a.rc, 0, "%s", a.err);
    cr_expect(strstr(a.err, "[pool cache] capacity = 20000 (set)") != NULL, "%s", a.err);
    cr_expect(strstr(a.err, "[pool cache] intent_zipf = 1 (default): ") != NULL, "%s", a.err);
    result_free(&a);
    result b = run(110, "run", "scenarios/gateway_mooncake.ini", "--no-store", "--verbose", NULL);
    cr_assert_eq(b.rc, 0, "%s", b.err);
    cr_expect(strstr(b.err, "[workload] hash_block_tokens = 512 (default): ") != NULL, "%s", b.err);
    cr_expect(strstr(b.err, "Mooncake") != NULL, "%s", b.err);
    cr_expect(strstr(b.err, "[pool chat] chunk_tokens = 512 (default): ") != NULL, "%s", b.err);
    result_free(&b);
    char *ref = slurp_or_fail("docs/scenarios.md", NULL);
    static const char *const WHY[] = { "vLLM's block size", "vLLM's max_num_seqs", "max_num_batched_tokens for its API server",
                                       "vLLM's gpu_memory_utilization", "vLLM V0's max_num_batched_tokens with chunked prefill",
                                       "the block size of the Mooncake traces", "hit rate has settled", "vLLM's max_model_len" };
    for (size_t i = 0; i < sizeof WHY / sizeof WHY[0]; i++) cr_expect(strstr(ref, WHY[i]) != NULL, "scenario reference lacks: %s", WHY[i]);
    free(ref);
}
