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
    llm_seq *seq = seq_of(r);
    llm *P = R->pool;
    request *d = R->lora_prev ? squeue_dequeue_after(R->wq, R->lora_prev) : squeue_dequeue(R->wq);
    assert(d == r);
    (void) d;
    load_changed(R, ROUTE_KEY_INSIDE);
    load_changed(R, ROUTE_KEY_KV);
    seq->run_rep = R->index;
    seq->leaving = 0;
    station_start(&P->st, r);
    seq->fw_mark = R->fw_cum;
    seq->prefill_len = r->prompt + (seq->generated > 0 ? seq->generated : 0);
    seq->prefilled = 0;
    seq->blocks = blocks;
    if (R->pc) {
        /* The content blocks are shared through the cache (plan checked the room). */
        uint32_t last = 0, hit = 0;
        int64_t n = rep_prompt_ids(P, r, &last);
        seq->pfx.h = n > 0 ? malloc((size_t) n * sizeof *seq->pfx.h) : NULL;
        prefix_clock(R->pc, evq_now(P->st.q));
        /* Offload tiers: the leading run past the GPU's, loaded back (looked up before
         * the acquire, whose evictions go to the tiers). */
        uint32_t run = 0;
        if ((R->tier[LLM_TIER_CPU] || R->tier[LLM_TIER_SSD]) && n > 0 && seq->pfx.h)
            run = rep_offload_find(R, r, n, last, prefix_match(R->pc, P->ids, (uint32_t) n));
        if ((n > 0 && !seq->pfx.h) || n < 0 ||
            prefix_acquire_cost(R->pc, P->ids, (uint32_t) (n > 0 ? n : 0), last, seq->pfx.h, &hit) != 0) {
            P->st.sink->oom(P->st.sink->ctx);
            free(seq->pfx.h);
            seq->pfx.h = NULL;
            n = 0;
        }
        if (P->cfg->kv_offload_shared && (R->tier[LLM_TIER_CPU] || R->tier[LLM_TIER_SSD]) && n > 0 && seq->pfx.h) rep_offload_share(R, n, last);
        seq->pfx.n = (int32_t) n;
        seq->pfx.blocks = n > 0 ? (int32_t) ((n - 1) * (P->cfg->prefix_id_tokens / P->B) + last) : 0;
        int rc = prefix_take(R->pc, (uint64_t) (blocks - content_blocks(P, r)));
        assert(rc == 0);
        (void) rc;
        R->free_blocks = (int64_t) prefix_available(R->pc);
        /* A hit skips the prefill of its cached prefix, all but the last token (vLLM). */
        int64_t found = (int64_t) hit * P->cfg->prefix_id_tokens;
        if (found > r->prompt) found = r->prompt;
        int64_t all = run > hit ? (int64_t) run * P->cfg->prefix_id_tokens : found;   /* with the tiers' */
        if (all > r->prompt) all = r->prompt;
        int64_t skip = rep_skip_tokens(P, all, seq->prefill_len);
        seq->prefilled = (int32_t) skip;
        if (!seq->pfx.seen) {
            double x = r->prompt > 0 ? (double) all / (double) r->prompt : 0;
            P->cs_fill[0] += 1;
            P->cs_fill[1] += x;
            P->cs_fill[2] += x * x;
            if (!r->measured) seq->pfx.seen = 1;   /* (a measured one: below) */
        }
        if (r->measured && !seq->pfx.seen) {
            seq->pfx.seen = 1;
            P->pfx_requests++;
            P->pfx_hit_requests += hit > 0;
            P->pfx_prompt += r->prompt;
            P->pfx_found += (double) found;
            if (P->cls_pfx) {   /* per class (run/col_classes.c) */
                P->cls_pfx[2 * r->cls] += r->prompt;
                P->cls_pfx[2 * r->cls + 1] += (double) found;
            }
            P->pfx_skipped += (double) skip;
            cost_step a = { .prefill_tokens = seq->prefill_len, .prefill_seqs = 1,
                            .prefill_pairs = (double) seq->prefill_len * (seq->prefill_len + 1.0) / 2.0 };
            int64_t c = seq->prefill_len - skip;
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
    llm_seq *seq = seq_of(r);
    rep_run_remove(R, r);
    if (seq->prefilled < seq->prefill_len) {
        for (int i = 0; i < R->npf; i++)
            if (R->pf[i] == r) {
                memmove(&R->pf[i], &R->pf[i + 1], (size_t) (R->npf - i - 1) * sizeof *R->pf);
                R->npf--;
                break;
            }
    } else {
        /* Tokens produced so far: it has finish_step - s + 1 still to make. */
        int64_t s = R->steps;
        seq->blocks = blocks_for(P, seq->phase_base + s);
        seq->generated = (int32_t) (r->output - (seq->finish_step - s + 1));
        r->last_token = evq_now(P->st.q);   /* its last token came at the end of the step just done */
        rep_decode_leave(R, r);
        if (seq->pd.state == 2) {                    /* joined after a KV transfer and not yet stepped: recomputed here */
            for (int i = 0; i < R->njoined; i++)
                if (R->joined[i] == r) {
                    R->joined[i] = R->joined[--R->njoined];
                    break;
                }
            seq->pd.state = 0;
            r->last_token = r->first_token;  /* its last token is still the prefill pool's */
        }
    }
    rep_release_blocks(R, r, seq->blocks);
    seq->blocks = 0;
    simtime_t now = evq_now(P->st.q);
    r->service_ns += now - r->start;
    r->fw.ns += R->fw_cum - seq->fw_mark;
    r->enq = now;
    if (*P->st.sink->measuring) P->preemptions++;
    squeue_push_front(R->wq, r);
    load_changed(R, ROUTE_KEY_INSIDE);
}

/* ---- clients who leave in service (patience_s) ----------------------------------- */

/* Takes R's finish-heap entry r out (a batch's sequence, which keeps no phase counts). */
static void heap_delete(replica *R, request *r)
{
    R->ndec_meas -= r->measured;
    if (R->ndec_cls && r->measured) R->ndec_cls[r->cls]--;
    int i = (int) seq_of(r)->heap_pos;
    R->ndec--;
    if (i != R->ndec) {
        R->heap[i] = R->heap[R->ndec];
        R->heap[i]->heap_pos = (uint32_t) i;
    }
    rep_heap_rebuild(R);
}

void rep_drop_leaving(replica *R, int step_done)
{
    if (R->nleaving == 0) return;
    llm *P = R->pool;
    simtime_t now = evq_now(P->st.q);
    int batch = (P->cfg->sched->flags & LLM_SCHED_BATCHES) != 0;
    int k = 0;
    for (int i = 0; i < R->npf; i++) {   /* iteration-level: its prefill ends; the others keep their chunks */
        request *r = R->pf[i];
        llm_seq *seq = seq_of(r);
        if (!seq->leaving) {
            R->chunk[k] = R->chunk[i];
            R->pf[k++] = r;
        } else if (r->measured)
            P->cancelled_tokens += seq->prefilled + (step_done ? R->chunk[i] : 0);
    }
    for (int i = k; i < R->npf; i++) R->chunk[i] = 0;
    R->npf = k;
    request *next;
    for (request *r = R->run_head; r; r = next) {
        llm_seq *seq = seq_of(r);
        next = seq->rnext;
        if (!seq->leaving) continue;
        rep_run_remove(R, r);
        if (batch) {
            heap_delete(R, r);           /* its KV blocks stay reserved until the batch ends */
            R->batch_live--;
            if (r->measured && step_done) P->cancelled_tokens += r->prompt;
        } else {
            rep_release_blocks(R, r, seq->blocks);
            seq->blocks = 0;
        }
        seq->leaving = 0;
        r->service_ns += now - r->start;
        r->fw.ns += R->fw_cum - seq->fw_mark;
        station_drop(&P->st, r, OUT_ABANDONED);
    }
    R->nleaving = 0;
    if (batch && R->batch_n > 0 && R->batch_live == 0) {   /* nobody left in the batch: it ends */
        R->free_blocks += R->batch_blocks;
        R->batch_blocks = 0;
        R->batch_n = 0;
        load_changed(R, ROUTE_KEY_KV);
    }
}

void llm_cancel(station *st, request *r)
{
    llm_seq *seq = seq_of(r);
    llm *P = (llm *) st;
    replica *R = &P->r[seq->run_rep];
    if (seq->leaving) return;
    seq->leaving = 1;
    R->nleaving++;
    if (P->lock || R->nleaving < R->nrun || !R->step_ev) return;   /* it leaves when the step ends */
    /* The step in flight serves only sequences whose clients left: it stops now.
     * Its time so far is spent (busy, energy, charged to them), its work lost. */
    evq_cancel(st->q, R->step_ev);
    R->step_ev = 0;
    rep_account_step(R);
    if (P->acct)
        for (request *q = R->run_head; q; q = seq_of(q)->rnext)
            station_charge(st, q, (double) (evq_now(st->q) - R->step_start) / R->nrun);
    if (R->spec_res > 0) {   /* a speculating step's reserve (none: no decodes; kept for safety) */
        rep_give_blocks(R, R->spec_res);
        R->spec_res = 0;
    }
    R->spec = 0;
    rep_drop_leaving(R, 0);
    rep_step(R);   /* its next step (the stopped one's index again), or idle */
    if (!P->routed && P->dp == 1 && P->nidle > 0 && P->st.qlen > 0) llm_kick(P);
}
