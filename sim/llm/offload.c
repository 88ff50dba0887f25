/* offload.c -- KV-cache offload tiers (`kv_offload = cpu | ssd | cpu,ssd`):
 * content blocks evicted from a replica's GPU prefix cache (prefix.h) go to its
 * first tier, and those the CPU tier evicts to the SSD tier; each tier is itself
 * a content-keyed LRU cache (a prefix_cache of its capacity in KV blocks).  A
 * request whose prompt's leading blocks are found, past the GPU's, in a tier has
 * them loaded back at that tier's bandwidth (prompt tokens x the model's KV bytes
 * per token / kv_offload_*_gbs + kv_offload_*_latency_ms, the tiers one after
 * the other) before its prefill: the load is added to the step that admits it
 * (a synchronous load, as vLLM's KV connectors by default) and is the request's
 * kv_load time; those tokens are not prefilled.  A tier keeps what it loads
 * (inclusive).  With kv_offload_shared the pool's replicas share one set of
 * tiers (LMCache's shared CPU/disk backends), written through: a prompt's
 * blocks go to the first tier as they are computed, so that every replica
 * finds every replica's prefixes there. */
#include <math.h>
#include <stdlib.h>
#include "llm/replica.h"

/* The CPU tier's eviction hook: its victims go to the SSD tier of replica CTX. */
static void to_ssd(void *ctx, uint64_t key, uint32_t cost)
{
    replica *R = ctx;
    if (prefix_put(R->tier[LLM_TIER_SSD], key, cost) == 0 && R->pool->window_open) R->pool->off_stored[LLM_TIER_SSD]++;
}

/* The GPU cache's eviction hook: the replica's first tier keeps the block. */
static void from_gpu(void *ctx, uint64_t key, uint32_t cost)
{
    replica *R = ctx;
    for (int t = 0; t < LLM_TIERS; t++)   /* the first tier it fits (a block larger than the CPU tier: the SSD) */
        if (R->tier[t] && prefix_put(R->tier[t], key, cost) == 0) {
            if (R->pool->window_open) R->pool->off_stored[t]++;
            return;
        }
}

static prefix_cache *tier_new(const llm_cfg *L, int t)
{
    return prefix_new((uint64_t) L->tier[t].blocks, (uint32_t) (L->prefix_id_tokens / L->block_tokens));
}

int llm_offload_init(llm *P)
{
    const llm_cfg *L = P->cfg;
    int shared = L->kv_offload_shared;
    for (int i = 0; i < P->nrep; i++) {
        replica *R = &P->r[i];
        for (int t = 0; t < LLM_TIERS; t++)
            if (L->tier[t].on) {
                R->tier[t] = shared && i > 0 ? P->r[0].tier[t] : tier_new(L, t);
                if (!R->tier[t]) return -1;
            }
        if (R->tier[LLM_TIER_CPU] && R->tier[LLM_TIER_SSD] && (!shared || i == 0))
            prefix_on_evict(R->tier[LLM_TIER_CPU], to_ssd, R);
        prefix_on_evict(R->pc, from_gpu, R);
    }
    return 0;
}

void llm_offload_free(llm *P)
{
    for (int i = 0; P->r && i < P->nrep; i++)
        for (int t = 0; t < LLM_TIERS; t++) {
            if (!P->cfg->kv_offload_shared || i == 0) prefix_free(P->r[i].tier[t]);
            P->r[i].tier[t] = NULL;
        }
}

uint32_t rep_offload_find(replica *R, request *r, int64_t n, uint32_t last, uint32_t hit)
{
    llm *P = R->pool;
    const llm_cfg *L = P->cfg;
    int64_t T = L->prefix_id_tokens;
    uint32_t bpi = (uint32_t) (T / L->block_tokens);
    double tokens[LLM_TIERS] = { 0, 0 }, gpu = (double) hit * T;
    uint32_t k = hit;
    while ((int64_t) k < n) {
        uint64_t id = P->ids[k];
        /* The id's prompt tokens (the last one's: what is left of the prompt). */
        int64_t tok = (int64_t) r->prompt - (int64_t) k * T;
        if (tok > T) tok = T;
        if (tok < 0) tok = 0;
        uint32_t cost = (int64_t) k == n - 1 && last > 0 ? last : bpi;
        if (prefix_has(R->pc, id)) gpu += (double) tok;
        else {
            int t = R->tier[LLM_TIER_CPU] && prefix_has(R->tier[LLM_TIER_CPU], id) ? LLM_TIER_CPU
                  : R->tier[LLM_TIER_SSD] && prefix_has(R->tier[LLM_TIER_SSD], id) ? LLM_TIER_SSD : -1;
            if (t < 0) break;
            tokens[t] += (double) tok;
            prefix_put(R->tier[t], id, cost);   /* used again: the most recent there */
        }
        k++;
    }
    double ns = 0;
    for (int t = 0; t < LLM_TIERS; t++)
        if (tokens[t] > 0) ns += tokens[t] * L->kv_bytes_token / L->tier[t].gbs + L->tier[t].latency_ms * 1e6;
    simtime_t load = simtime_from_ns_ceil(ns);
    R->load_pending = simtime_add(R->load_pending, load);
    r->kv.load_ns = simtime_add(r->kv.load_ns, load);
    if (r->measured && !seq_of(r)->pfx.seen) {
        P->off_gpu_tokens += gpu;
        for (int t = 0; t < LLM_TIERS; t++) {
            P->off_tokens[t] += tokens[t];
            P->off_requests[t] += tokens[t] > 0;
        }
        if (load > 0) {
            P->off_loads++;
            P->off_load_ms += simtime_to_ms(load);
        }
    }
    return k;
}

void rep_offload_share(replica *R, int64_t n, uint32_t last)
{
    llm *P = R->pool;
    int t = R->tier[LLM_TIER_CPU] ? LLM_TIER_CPU : LLM_TIER_SSD;
    uint32_t bpi = (uint32_t) (P->cfg->prefix_id_tokens / P->cfg->block_tokens);
    for (int64_t k = 0; k < n; k++)
        if (prefix_put(R->tier[t], P->ids[k], k == n - 1 && last > 0 ? last : bpi) == 0 && P->window_open)
            P->off_stored[t]++;
}
