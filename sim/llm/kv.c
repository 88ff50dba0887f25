/* kv.c -- an LLM replica's paged KV cache: blocks taken and given back, and
 * the glue to the prefix cache (prefix.h), which shares the content blocks of
 * prompts (and of a session's earlier turns) between sequences. */
#include <assert.h>
#include <stdlib.h>
#include "llm/replica.h"

/* The content ids of R's first TOKENS context tokens (its prompt, then for a
 * session turn its answer) into P->ids: its trace's hash ids (each covering
 * prefix_id_tokens prompt tokens, the last possibly fewer), or, without them (or
 * with a truncated prompt), its class's system-prompt blocks and then ids of its own.
 * *LAST_COST gets the KV blocks of the last id (fewer than a whole id's for a
 * partial last block).  Returns their number, or -1 when out of memory. */
int64_t rep_context_ids(llm *P, const request *r, int64_t tokens, uint32_t *last_cost)
{
    int64_t T = P->cfg->prefix_id_tokens;
    int64_t n = (tokens + T - 1) / T;
    int own = !r->attrs.hash_ids || r->truncated;
    if (!own && n > r->attrs.nhash) n = r->attrs.nhash;
    if (n > (int64_t) P->nids) {
        uint64_t *x = realloc(P->ids, (size_t) n * sizeof *x);
        if (!x) return -1;
        P->ids = x;
        P->nids = (uint32_t) n;
    }
    /* Without trace ids: the whole blocks of its class's shared system prompt,
     * then, for a turn of a multi-turn session, its whole blocks keyed by the
     * session (the same tokens in every later turn), then blocks of its own. */
    int64_t shared = own && !r->truncated ? r->attrs.sys_tokens / T : 0;
    for (int64_t k = 0; k < n; k++)
        P->ids[k] = !own ? (uint64_t) r->attrs.hash_ids[k]
                  : k < shared ? (UINT64_C(1) << 62) | ((uint64_t) r->cls << 32) | (uint64_t) k
                  : r->attrs.session && !r->truncated && (k + 1) * T <= tokens
                    ? (UINT64_C(1) << 61) | (r->attrs.session << 20) | (uint64_t) k
                  : (UINT64_C(1) << 63) | (r->id << 20) | (uint64_t) k;
    int64_t rest = tokens - (n - 1) * T;          /* tokens of the last id */
    if (last_cost) *last_cost = (uint32_t) (rest > 0 && rest < T ? blocks_for(P, rest) : T / P->B);
    return n;
}

int64_t rep_prompt_ids(llm *P, const request *r, uint32_t *last_cost)
{
    return rep_context_ids(P, r, r->prompt, last_cost);
}

void rep_release_blocks(replica *R, request *r, int64_t total)
{
    llm_seq *seq = seq_of(r);
    load_changed(R, ROUTE_KEY_KV);
    if (!R->pc) {
        R->free_blocks += total;
        return;
    }
    prefix_give(R->pc, (uint64_t) (total - content_blocks(R->pool, r)));
    prefix_release(R->pc, seq->pfx.h, (uint32_t) seq->pfx.n);
    free(seq->pfx.h);
    seq->pfx.h = NULL;
    seq->pfx.n = 0;
    seq->pfx.blocks = 0;
    R->free_blocks = (int64_t) prefix_available(R->pc);
}

/* A turn of a multi-turn session R finished with its TOTAL blocks: as
 * rep_release_blocks, but the whole blocks of its context (prompt and answer,
 * all but the last token, whose KV is never computed) stay cached under the
 * session's keys, for the next turn, whose prompt starts with them (vLLM keeps
 * the full blocks of generated tokens too).  Without room they are not kept. */
void rep_release_context(replica *R, request *r, int64_t total)
{
    llm_seq *seq = seq_of(r);
    llm *P = R->pool;
    int64_t T = P->cfg->prefix_id_tokens;
    int64_t n = T > 0 ? ((int64_t) r->prompt + r->output - 1) / T : 0;   /* T = 0 without a prefix cache */
    if (!R->pc || !r->attrs.session || r->truncated || r->attrs.hash_ids || n <= 0) {
        rep_release_blocks(R, r, total);
        return;
    }
    load_changed(R, ROUTE_KEY_KV);
    prefix_give(R->pc, (uint64_t) (total - content_blocks(P, r)));
    uint32_t *h = malloc((size_t) n * sizeof *h), hit = 0;
    int got = 0;
    if (!h || rep_context_ids(P, r, n * T, NULL) < 0)
        P->st.sink->oom(P->st.sink->ctx);
    else {
        prefix_clock(R->pc, evq_now(P->st.q));
        got = prefix_acquire(R->pc, P->ids, (uint32_t) n, h, &hit) == 0;
    }
    /* The prompt's references first, so that the context is the most recent. */
    prefix_release(R->pc, seq->pfx.h, (uint32_t) seq->pfx.n);
    if (got) prefix_release(R->pc, h, (uint32_t) n);
    free(h);
    free(seq->pfx.h);
    seq->pfx.h = NULL;
    seq->pfx.n = 0;
    seq->pfx.blocks = 0;
    R->free_blocks = (int64_t) prefix_available(R->pc);
}

void rep_take_blocks(replica *R, int64_t n)
{
    load_changed(R, ROUTE_KEY_KV);
    if (!R->pc) {
        R->free_blocks -= n;
        return;
    }
    int rc = prefix_take(R->pc, (uint64_t) n);
    assert(rc == 0);
    (void) rc;
    R->free_blocks = (int64_t) prefix_available(R->pc);
}

void rep_give_blocks(replica *R, int64_t n)
{
    load_changed(R, ROUTE_KEY_KV);
    if (!R->pc) {
        R->free_blocks += n;
        return;
    }
    prefix_give(R->pc, (uint64_t) n);
    R->free_blocks = (int64_t) prefix_available(R->pc);
}
