/* admit.c -- a sequence joining an LLM replica (admission: its KV blocks, its
 * cached prefix) and leaving it early (preemption: back to the head of the
 * queue, to be recomputed).  Which sequences join, and when, is the
 * scheduler's (sched.h). */
#include <assert.h>
#include <stdlib.h>
#include <string.h>
#include "llm/replica.h"

void rep_admit(replica *R, request *r, int64_t blocks)
{
    llm *P = R->pool;
    request *d = R->lora_prev ? squeue_dequeue_after(R->wq, R->lora_prev) : squeue_dequeue(R->wq);
    assert(d == r);
    (void) d;
    load_changed(R, ROUTE_KEY_INSIDE);
    load_changed(R, ROUTE_KEY_KV);
    station_start(&P->st, r);
    r->fw_mark = R->fw_cum;
    r->prefill_len = r->prompt + (r->generated > 0 ? r->generated : 0);
    r->prefilled = 0;
    r->blocks = blocks;
    if (R->pc) {
        /* The content blocks are shared through the cache (plan checked the room). */
        uint32_t last = 0, hit = 0;
        int64_t n = rep_prompt_ids(P, r, &last);
        r->pfx_h = n > 0 ? malloc((size_t) n * sizeof *r->pfx_h) : NULL;
        prefix_clock(R->pc, evq_now(P->st.q));
        /* Offload tiers: the leading run past the GPU's, loaded back (looked up before
         * the acquire, whose evictions go to the tiers). */
        uint32_t run = 0;
        if ((R->tier[LLM_TIER_CPU] || R->tier[LLM_TIER_SSD]) && n > 0 && r->pfx_h)
            run = rep_offload_find(R, r, n, last, prefix_match(R->pc, P->ids, (uint32_t) n));
        if ((n > 0 && !r->pfx_h) || n < 0 ||
            prefix_acquire_cost(R->pc, P->ids, (uint32_t) (n > 0 ? n : 0), last, r->pfx_h, &hit) != 0) {
            P->st.sink->oom(P->st.sink->ctx);
            free(r->pfx_h);
            r->pfx_h = NULL;
            n = 0;
        }
        if (P->cfg->kv_offload_shared && (R->tier[LLM_TIER_CPU] || R->tier[LLM_TIER_SSD]) && n > 0 && r->pfx_h) rep_offload_share(R, n, last);
        r->pfx_n = (int32_t) n;
        r->pfx_blocks = n > 0 ? (int32_t) ((n - 1) * (P->cfg->prefix_id_tokens / P->B) + last) : 0;
        int rc = prefix_take(R->pc, (uint64_t) (blocks - content_blocks(P, r)));
        assert(rc == 0);
        (void) rc;
        R->free_blocks = (int64_t) prefix_available(R->pc);
        /* A hit skips the prefill of its cached prefix, all but the last token (vLLM). */
        int64_t found = (int64_t) hit * P->cfg->prefix_id_tokens;
        if (found > r->prompt) found = r->prompt;
        int64_t all = run > hit ? (int64_t) run * P->cfg->prefix_id_tokens : found;   /* with the tiers' */
        if (all > r->prompt) all = r->prompt;
        int64_t skip = rep_skip_tokens(P, all, r->prefill_len);
        r->prefilled = (int32_t) skip;
        if (!r->pfx_seen) {
            double x = r->prompt > 0 ? (double) all / (double) r->prompt : 0;
            P->cs_fill[0] += 1;
            P->cs_fill[1] += x;
            P->cs_fill[2] += x * x;
            if (!r->measured) r->pfx_seen = 1;   /* (a measured one: below) */
        }
        if (r->measured && !r->pfx_seen) {
            r->pfx_seen = 1;
            P->pfx_requests++;
            P->pfx_hit_requests += hit > 0;
            P->pfx_prompt += r->prompt;
            P->pfx_found += (double) found;
            P->pfx_skipped += (double) skip;
            cost_step a = { .prefill_tokens = r->prefill_len, .prefill_seqs = 1,
                            .prefill_pairs = (double) r->prefill_len * (r->prefill_len + 1.0) / 2.0 };
            int64_t c = r->prefill_len - skip;
            cost_step b = { .prefill_tokens = c, .prefill_seqs = 1,
                            .prefill_pairs = (double) c * (double) skip + (double) c * (c + 1.0) / 2.0 };
            if (skip > 0) P->pfx_saved_ms += (cost_fast_ms(&P->cf, &a) - cost_fast_ms(&P->cf, &b)) *
                                             P->cfg->step_time_scale;
        }
    } else
        R->free_blocks -= blocks;
    rep_run_append(R, r);
    R->pf[R->npf++] = r;
}

void rep_preempt_newest(replica *R)
{
    llm *P = R->pool;
    request *r = R->run_tail;
    assert(r != NULL);
    rep_run_remove(R, r);
    if (r->prefilled < r->prefill_len) {
        for (int i = 0; i < R->npf; i++)
            if (R->pf[i] == r) {
                memmove(&R->pf[i], &R->pf[i + 1], (size_t) (R->npf - i - 1) * sizeof *R->pf);
                R->npf--;
                break;
            }
    } else {
        /* Tokens produced so far: it has finish_step - s + 1 still to make. */
        int64_t s = R->steps;
        r->blocks = blocks_for(P, r->phase_base + s);
        r->generated = (int32_t) (r->output - (r->finish_step - s + 1));
        r->last_token = evq_now(P->st.q);   /* its last token came at the end of the step just done */
        rep_decode_leave(R, r);
        if (r->pd == 2) {                    /* joined after a KV transfer and not yet stepped: recomputed here */
            for (int i = 0; i < R->njoined; i++)
                if (R->joined[i] == r) {
                    R->joined[i] = R->joined[--R->njoined];
                    break;
                }
            r->pd = 0;
            r->last_token = r->first_token;  /* its last token is still the prefill pool's */
        }
    }
    rep_release_blocks(R, r, r->blocks);
    r->blocks = 0;
    simtime_t now = evq_now(P->st.q);
    r->service_ns += now - r->start;
    r->fw_ns += R->fw_cum - r->fw_mark;
    r->enq = now;
    if (*P->st.sink->measuring) P->preemptions++;
    squeue_push_front(R->wq, r);
    load_changed(R, ROUTE_KEY_INSIDE);
}
