/* spec.c -- speculative decoding in an LLM replica (docs/llm.md, "Speculative
 * decoding").  A speculating step verifies k + 1 tokens of every decoding
 * sequence (k proposed by a draft model, MTP heads or n-gram lookup, and the
 * bonus token the target model computes anyway): the step description has
 * decode_tokens_per_seq = k + 1, so every cost model prices it as prefill-like
 * attention over the new tokens.  Each sequence accepts a truncated-geometric
 * number of the proposals (each accepted with probability a, independently,
 * until the first rejection), so it emits min(k, first rejection) + 1 tokens,
 * E = (1 - a^(k+1)) / (1 - a) on average, never beyond its output length.
 *
 * The phase bookkeeping (replica.h) stays exact: a sequence that emits m tokens
 * in step s has its phase base and finish step moved by m - 1, as if it had
 * joined m - 1 steps earlier.  The step reserves KV for k + 1 tokens per
 * sequence (fewer when its output ends sooner) and gives back the blocks of
 * the rejected ones when it ends.  The
 * draws come from the pool's own stream ("pool NAME spec"), so no other random
 * number shifts; a speculating step costs O(decoding sequences x k), a plain
 * step is untouched. */
#include "llm/replica.h"

int rep_spec_wanted(const replica *R)
{
    const llm_cfg *L = R->pool->cfg;
    return L->spec_method != LLM_SPEC_NONE && R->ndec > 0 && R->nrun <= L->spec_max_batch;
}

/* Tokens of sequence r step S keeps KV room for: k + 1, or fewer when its output
 * ends sooner (so that a request that fits max_seq_len never needs more than
 * the KV capacity). */
static int64_t room_tokens(const request *r, int64_t s, int k)
{
    int64_t left = seq_of(r)->finish_step - s + 1;
    return left < k + 1 ? left : k + 1;
}

/* Blocks sequence r needs beyond those it holds before step S for its room. */
static int64_t extra_blocks(const llm *P, const request *r, int64_t s, int k)
{
    llm_seq *seq = seq_of(r);
    return blocks_for(P, seq->phase_base + s + room_tokens(r, s, k)) - blocks_for(P, seq->phase_base + s);
}

static int decoding(const request *r) { return seq_of(r)->prefilled >= seq_of(r)->prefill_len; }

int64_t rep_spec_reserve(replica *R)
{
    llm *P = R->pool;
    int64_t s = R->steps, need = 0;
    int k = P->cfg->spec_tokens;
    for (int i = 0; i < R->ndec; i++) need += extra_blocks(P, R->heap[i]->req, s, k);
    while (need > R->free_blocks) {
        request *t = R->run_tail;
        if (decoding(t)) need -= extra_blocks(P, t, s, k);
        rep_preempt_newest(R);
    }
    rep_take_blocks(R, need);
    R->spec_res = need - R->phase_cnt[bmod(P, -s)];
    return need;
}

int64_t rep_spec_draw(replica *R)
{
    llm *P = R->pool;
    const llm_cfg *L = P->cfg;
    int64_t s = R->steps, emitted = 0;
    int k = L->spec_tokens;
    double accepted = 0, tried = 0;
    for (int i = 0; i < R->ndec; i++) {
        llm_seq *seq = R->heap[i];
        request *r = seq->req;
        double a = r->cls >= 0 && r->cls < L->spec_ncls ? L->spec_accept_cls[r->cls] : L->spec_acceptance;
        int j = 0;
        while (j < k && gsl_rng_uniform(P->spec_rng) < a) j++;
        tried += j < k ? j + 1 : j;   /* the first rejected proposal was tried too */
        int64_t left = seq->finish_step - s + 1, m = j + 1;
        if (m > left) m = left;
        seq->spec.m = (int32_t) m;
        emitted += m;
        accepted += j;
    }
    if (P->window_open) {
        P->spec_steps++;
        P->spec_verifs += R->ndec;
        P->spec_accepted += accepted;
        P->spec_tried += tried;
        P->spec_emitted += (double) emitted;
    }
    return emitted;
}

double rep_spec_draft_ms(const replica *R)
{
    const llm *P = R->pool;
    const llm_cfg *L = P->cfg;
    if (L->spec_method == LLM_SPEC_NGRAM || L->spec_method == LLM_SPEC_NONE) return 0;
    /* k passes, each one token per sequence over a context one longer. */
    cost_step d = { .decode_seqs = R->ndec, .decode_tokens_per_seq = 1 };
    double ms = 0;
    int64_t kv = R->base_sum + (int64_t) R->ndec * (R->steps + 1);
    for (int j = 0; j < L->spec_tokens; j++) {
        d.kv_tokens = kv + (int64_t) j * R->ndec;
        ms += cost_step_ms(&L->draft_cost, &d);
    }
    return ms;
}

void rep_spec_advance(replica *R)
{
    llm *P = R->pool;
    int64_t s = R->steps, give = 0;
    int k = P->cfg->spec_tokens;
    for (int i = 0; i < R->ndec; i++) {
        llm_seq *seq = R->heap[i];
        request *r = seq->req;
        int64_t d = seq->spec.m - 1;
        give += blocks_for(P, seq->phase_base + s + room_tokens(r, s, k)) - blocks_for(P, seq->phase_base + s + 1 + d);
        if (d == 0) continue;
        R->phase_cnt[bmod(P, seq->phase_base)]--;
        seq->phase_base += d;
        R->phase_cnt[bmod(P, seq->phase_base)]++;
        R->base_sum += d;
        seq->finish_step -= d;
    }
    rep_give_blocks(R, give);
    R->spec_res = 0;
    R->spec = 0;
    rep_heap_rebuild(R);
    /* The tokens of one verification reach the client as one streamed chunk: the
     * step's gap is the one ITL sample (rep_itl_decodes), as benchmark clients
     * measure ITL between chunks; no zero gaps for the tokens that came with it. */
}
