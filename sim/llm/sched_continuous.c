/* sched_continuous.c -- iteration-level scheduling (Orca, vLLM), `scheduler =
 * continuous`: every step, finished sequences leave and waiting ones join,
 * within max_batch, max_batch_tokens and the free KV blocks; a joining prompt
 * is prefilled whole in the step that admits it, alongside the decodes.
 *
 * Its planning and completion (rep_plan_iteration, rep_complete_iteration) are
 * the replica interface's for every iteration-level variant: chunked
 * (sched_chunked.c) calls them with its own token budget and split prompts.
 */
#include <assert.h>
#include <string.h>
#include "llm/replica.h"

simtime_t rep_plan_iteration(replica *R, int64_t step_tokens, int split, int max_new)
{
    llm *P = R->pool;
    const llm_cfg *L = P->cfg;
    int64_t s = R->steps;
    if (R->nready > 0) rep_kv_join(R);      /* role = decode: sequences whose KV has arrived */
    /* Blocks the decodes of this step need; preempt the newest until they fit. */
    const int64_t phase = bmod(P, -s);
    int64_t need;
    R->spec = rep_spec_wanted(R);
    if (R->spec) {                          /* speculative decoding: k + 1 tokens each (spec.c) */
        need = rep_spec_reserve(R);
        R->spec = R->ndec > 0;
    } else {
        while (R->phase_cnt[phase] > R->free_blocks) rep_preempt_newest(R);
        need = R->phase_cnt[phase];
        rep_take_blocks(R, need);           /* taken now; decodes hold them from this step */
    }
    memset(&R->cur, 0, sizeof R->cur);
    R->cur.decode_seqs = R->ndec;
    R->cur.decode_tokens_per_seq = 1;
    R->cur.kv_tokens = R->base_sum + (int64_t) R->ndec * (s + 1);
    /* The step's token budget counts its decode tokens too (chunked: Sarathi-Serve,
     * vLLM max_num_batched_tokens). */
    int64_t cap = step_tokens < L->max_batch_tokens ? step_tokens : L->max_batch_tokens;
    int64_t pbudget = cap - R->ndec;
    if (R->spec) {
        R->cur.decode_tokens_per_seq = L->spec_tokens + 1;
        R->cur.kv_tokens += (int64_t) R->ndec * L->spec_tokens;
        pbudget -= (int64_t) R->ndec * L->spec_tokens;
    }
    /* Sequences already prefilling (split prompts) continue first. */
    for (int i = 0; i < R->npf && pbudget > 0; i++) {
        request *r = R->pf[i];
        llm_seq *seq = seq_of(r);
        int64_t c = seq->prefill_len - seq->prefilled;
        if (c > pbudget) c = pbudget;
        R->chunk[i] = (int32_t) c;
        pbudget -= c;
    }
    /* Then newcomers, first come first served: stop at the first that does not fit.
     * LoRA: one whose adapter can get no slot is passed over, keeping its place
     * (R->lora_prev, NULL without adapters), and those behind it are considered. */
    request *r;
    int admitted = 0;
    while (!R->down && pbudget > 0 && R->nrun + R->nxfer < L->max_batch && (max_new <= 0 || admitted < max_new) &&
           (r = R->lora_prev ? squeue_peek_after(R->wq, R->lora_prev) : squeue_peek(R->wq)) != NULL) {
        if (seq_of(r)->pd.state == 1) {
            if (R->lora_prev) break;        /* transfers start from the head only */
            /* Prefilled in a prefill pool: room for its prompt's KV and its first decode token, then the transfer. */
            int64_t b = blocks_for(P, (int64_t) r->prompt + 1);
            if (b > R->free_blocks) break;
            rep_kv_reserve(R, r, b);
            continue;
        }
        int64_t len = r->prompt + (seq_of(r)->generated > 0 ? seq_of(r)->generated : 0);
        int64_t blocks = blocks_for(P, len), skip = 0;
        if (R->pc) {
            /* Cached blocks it finds are not prefilled, nor taken again. */
            uint32_t last = 0;
            int64_t n = rep_prompt_ids(P, r, &last);
            if (n < 0) n = 0;
            uint32_t hit = prefix_match(R->pc, P->ids, (uint32_t) n);
            int64_t found = (int64_t) hit * P->cfg->prefix_id_tokens;
            if (found > r->prompt) found = r->prompt;
            skip = rep_skip_tokens(P, found, len);
            int64_t content = n > 0 ? (n - 1) * (P->cfg->prefix_id_tokens / P->B) + last : 0;
            int64_t room = (int64_t) prefix_need_cost(R->pc, P->ids, (uint32_t) n, last) + blocks - content;
            if (!split && len - skip > pbudget) break;
            if (room > R->free_blocks) break;
        } else {
            if (!split && len > pbudget) break;
            if (blocks > R->free_blocks) break;
        }
        if (R->lora && rep_lora_take(R, r) != 0) {   /* no adapter slot free: it waits in its place (lora.c) */
            if (rep_lora_starved(R, r)) break;   /* waited lora_max_wait_ms: the batch drains for it */
            R->lora_prev = r;
            continue;
        }
        rep_admit(R, r, blocks);
        admitted++;
        len -= seq_of(r)->prefilled;
        (void) skip;
        int64_t c = len < pbudget ? len : pbudget;
        R->chunk[R->npf - 1] = (int32_t) c;
        pbudget -= c;
    }
    R->lora_prev = NULL;
    int64_t firsts = 0;                     /* prompts completing in the step: each emits its first token */
    for (int i = 0; i < R->npf; i++) {
        int64_t c = R->chunk[i];
        if (c <= 0) continue;
        int64_t k = seq_of(R->pf[i])->prefilled;
        R->cur.prefill_tokens += c;
        R->cur.prefill_pairs += (double) c * (double) k + (double) c * (double) (c + 1) / 2.0;
        R->cur.prefill_seqs++;
        firsts += k + c >= seq_of(R->pf[i])->prefill_len;
    }
    R->cur.emitted_tokens = (R->spec ? rep_spec_draw(R) : R->ndec) + firsts;
    if (R->cur.decode_seqs == 0 && R->cur.prefill_seqs == 0) {
        rep_give_blocks(R, need);
        return SIMTIME_NEVER;
    }
    return PLAN_STEP;
}

void rep_complete_iteration(replica *R)
{
    llm *P = R->pool;
    const llm_cfg *L = P->cfg;
    int64_t s = R->steps;
    simtime_t now = evq_now(P->st.q);
    if (R->spec) rep_spec_advance(R);
    rep_itl_decodes(R);
    /* Decoders: new blocks were taken at planning; sequences ending now leave. */
    while (R->ndec > 0 && R->heap[0]->finish_step <= s) {
        llm_seq *seq = R->heap[0];
        request *r = seq->req;
        assert(seq->finish_step == s);
        rep_decode_leave(R, r);
        rep_run_remove(R, r);
        seq->generated = r->output;
        rep_release_context(R, r, blocks_for(P, seq->phase_base + s + 1));
        seq->blocks = 0;
        rep_finish(R, r);
    }
    /* Prefills: those completing now produce a token and start decoding. */
    int k = 0;
    for (int i = 0; i < R->npf; i++) {
        request *r = R->pf[i];
        llm_seq *seq = seq_of(r);
        seq->prefilled += R->chunk[i];
        R->chunk[i] = 0;
        if (seq->prefilled < seq->prefill_len) { R->pf[k++] = r; continue; }
        if (seq->generated == 0) {
            req_first_token(r, now, P->st.index);
            r->tf_rep = R->index / P->dp;
            r->tf.fw_ns = r->fw.ns + (R->fw_cum - seq->fw_mark);
        }
        else if (r->measured) {   /* recomputed after a preemption */
            if (P->itl_run) stat_add(P->itl_run, simtime_to_ms(now - r->last_token));
            if (P->itl_pool) stat_add(P->itl_pool, simtime_to_ms(now - r->last_token));
            if (R->ndec_cls) stat_add(P->cls_itl[r->cls], simtime_to_ms(now - r->last_token));
        }
        seq->generated++;
        if (L->role == LLM_ROLE_PREFILL) {
            /* Disaggregated: its KV goes to the decode pool (next), the blocks here are free again. */
            rep_run_remove(R, r);
            rep_release_blocks(R, r, seq->blocks);
            seq->blocks = 0;
            rep_finish(R, r);
        } else if (seq->generated >= r->output) {
            rep_run_remove(R, r);
            rep_release_context(R, r, seq->blocks);
            seq->blocks = 0;
            rep_finish(R, r);
        } else {
            rep_decode_join(R, r, s, seq->prefill_len);
            /* From now on its blocks are counted by the phase formula. */
            seq->blocks = 0;
        }
    }
    R->npf = k;
}

static simtime_t plan_continuous(replica *R) { return rep_plan_iteration(R, INT64_MAX, 0, 0); }

const llm_sched llm_sched_continuous = {
    .name = "continuous",
    .help = "iteration-level: every step finished sequences leave and waiting ones join; a prompt is prefilled whole",
    .flags = LLM_SCHED_FLEET | LLM_SCHED_PREFIX_CACHE,
    .plan = plan_continuous,
    .complete = rep_complete_iteration,
};
