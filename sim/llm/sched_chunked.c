/* sched_chunked.c -- `scheduler = chunked`: continuous batching with
 * Sarathi-style chunked prefill.  Each step runs the decodes first, then
 * prompt chunks, within chunk_tokens tokens per step (its decodes counted, as
 * vLLM's max_num_batched_tokens); a long prompt is prefilled over several
 * steps, alongside the decodes, so it stalls them less.  The planning is the
 * iteration-level one of sched_continuous.c with that budget and split prompts.
 */
#include <stdlib.h>
#include "llm/replica.h"

/* Its keys' values (llm_cfg.sched_cfg). */
typedef struct chunked_cfg {
    int64_t chunk_tokens;     /* token budget per step, decodes included, tokens */
} chunked_cfg;

static const scn_key CHUNKED_KEYS[] = {
    { "chunk_tokens", "512", "chunked: token budget per step, trading TTFT against TPOT (default 512: vLLM V0's max_num_batched_tokens with chunked prefill)" },
    { NULL, NULL, NULL },
};

static int parse_chunked(scn_ctx *x, const char *sec, llm_cfg *l)
{
    chunked_cfg *c = calloc(1, sizeof *c);
    if (!c) return scn_fail_sec(x, sec, NULL, "out of memory");
    l->sched_cfg = c;
    return scn_i64(x, sec, "chunk_tokens", 512, 1, INT64_MAX, &c->chunk_tokens);
}

static simtime_t plan_chunked(replica *R)
{
    const chunked_cfg *c = R->pool->cfg->sched_cfg;
    return rep_plan_iteration(R, c->chunk_tokens, 1, 0);
}

/* Its largest step: chunk_tokens, within max_batch_tokens (rep_plan_iteration's cap). */
static int64_t step_tokens_chunked(const llm_cfg *l)
{
    const chunked_cfg *c = l->sched_cfg;
    return c && c->chunk_tokens < l->max_batch_tokens ? c->chunk_tokens : l->max_batch_tokens;
}

const llm_sched llm_sched_chunked = {
    .name = "chunked",
    .help = "continuous with chunked prefill: decodes first, then prompt chunks up to chunk_tokens per step",
    .flags = LLM_SCHED_SPLITS_PROMPTS | LLM_SCHED_FLEET | LLM_SCHED_PREFIX_CACHE,
    .keys = CHUNKED_KEYS,
    .parse = parse_chunked,
    .plan = plan_chunked,
    .complete = rep_complete_iteration,
    .step_tokens = step_tokens_chunked,
};
