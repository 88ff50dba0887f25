/* sched_batch.c -- whole-batch scheduling, `scheduler = static` and `dynamic`.
 *
 *   static   a batch is formed from what is waiting; it prefills (prompts
 *            padded to the longest) and decodes until its longest output is
 *            done; newcomers wait for the next batch.  Each sequence reserves
 *            the KV blocks of its prompt and output at admission, until the
 *            batch ends.
 *   dynamic  the same, but a batch starts only when max_batch requests wait or
 *            the oldest has waited max_wait_ms.
 */
#include <assert.h>
#include <stdlib.h>
#include <string.h>
#include "llm/replica.h"

/* dynamic's keys' values (llm_cfg.sched_cfg). */
typedef struct dynamic_cfg {
    double max_wait_ms;       /* longest wait to fill a batch, ms */
} dynamic_cfg;

/* DYNAMIC: a batch starts only when max_batch requests wait or the oldest has
 * waited max_wait_ms; until then the plan asks to be woken at that time. */
static simtime_t plan_batch(replica *R, int dynamic)
{
    llm *P = R->pool;
    const llm_cfg *L = P->cfg;
    memset(&R->cur, 0, sizeof R->cur);
    R->cur.decode_tokens_per_seq = 1;
    if (R->batch_n == 0) {
        /* Form a batch from what is waiting. */
        request *h = squeue_peek(R->wq);
        if (!h) return SIMTIME_NEVER;
        if (dynamic && R->wq->len < (uint64_t) L->max_batch) {
            const dynamic_cfg *d = L->sched_cfg;
            simtime_t due = simtime_add(h->enq, simtime_from_ms(d->max_wait_ms));
            if (evq_now(P->st.q) < due) return due;
        }
        int32_t maxp = 0, maxo = 0;
        request *r;
        while (R->batch_n < L->max_batch && (r = squeue_peek(R->wq)) != NULL) {
            int64_t len = r->prompt + r->output;
            int64_t blocks = blocks_for(P, len);
            /* The padded prefill (batch size x longest prompt) must fit max_batch_tokens. */
            int64_t padded = (int64_t) (R->batch_n + 1) * (r->prompt > maxp ? r->prompt : maxp);
            if (blocks > R->free_blocks || (R->batch_n > 0 && padded > L->max_batch_tokens)) break;
            rep_admit(R, r, blocks);
            R->batch_blocks += blocks;
            seq_of(r)->prefilled = seq_of(r)->prefill_len;
            if (r->prompt > maxp) maxp = r->prompt;
            if (r->output > maxo) maxo = r->output;
            R->batch_n++;
        }
        assert(R->batch_n > 0);
        R->batch_live = R->batch_n;
        R->batch_maxp = maxp;
        R->batch_first = R->steps;
        R->batch_last = R->steps + maxo - 1;
        R->npf = 0;
        /* Finishing order: each sequence ends at the step of its own last token. */
        for (request *q = R->run_head; q; q = seq_of(q)->rnext) {
            seq_of(q)->finish_step = R->batch_first + q->output - 1;
            rep_heap_push(R, q);
        }
        /* The prefill step, prompts padded to the longest; each emits its first token. */
        R->cur.prefill_tokens = (int64_t) R->batch_n * maxp;
        R->cur.prefill_pairs = (double) R->batch_n * maxp * (maxp + 1.0) / 2.0;
        R->cur.prefill_seqs = R->batch_n;
        R->cur.emitted_tokens = R->batch_n;
        return PLAN_STEP;
    }
    /* A decode step of the whole padded batch; the sequences not yet done emit a token. */
    int64_t k = R->steps - R->batch_first;     /* decode steps done + 1 */
    R->cur.decode_seqs = R->batch_n;
    R->cur.kv_tokens = (int64_t) R->batch_n * (R->batch_maxp + k);
    R->cur.emitted_tokens = R->batch_live;
    return PLAN_STEP;
}

static simtime_t plan_static(replica *R) { return plan_batch(R, 0); }
static simtime_t plan_dynamic(replica *R) { return plan_batch(R, 1); }

static void complete_batch(replica *R)
{
    llm *P = R->pool;
    int64_t s = R->steps;
    simtime_t now = evq_now(P->st.q);
    if (s == R->batch_first)
        for (request *q = R->run_head; q; q = seq_of(q)->rnext) {
            req_first_token(q, now, P->st.index);
            q->tf_rep = R->index / P->dp;
            q->tf.fw_ns = q->fw.ns + (R->fw_cum - seq_of(q)->fw_mark);
            seq_of(q)->generated = 1;
        }
    else
        rep_itl_decodes(R);
    while (R->ndec > 0 && R->heap[0]->finish_step <= s) {
        request *r = rep_heap_pop(R);
        seq_of(r)->generated = r->output;
        rep_run_remove(R, r);       /* its KV blocks stay reserved until the batch ends */
        R->batch_live--;
        rep_finish(R, r);
    }
    if (s == R->batch_last) {
        assert(R->batch_live == 0);
        R->free_blocks += R->batch_blocks;
        load_changed(R, ROUTE_KEY_KV);
        R->batch_blocks = 0;
        assert(R->free_blocks == P->cfg->kv_blocks);
        R->batch_n = 0;
    }
}

static const scn_key DYNAMIC_KEYS[] = {
    { "max_wait_ms", "20", "dynamic: wait at most this long to fill a batch" },
    { NULL, NULL, NULL },
};

static int parse_dynamic(scn_ctx *x, const char *sec, llm_cfg *l)
{
    dynamic_cfg *d = calloc(1, sizeof *d);
    if (!d) return scn_fail_sec(x, sec, NULL, "out of memory");
    l->sched_cfg = d;
    return scn_num(x, sec, "max_wait_ms", 20, 0, 0, 1e12, &d->max_wait_ms);
}

const llm_sched llm_sched_static = {
    .name = "static",
    .help = "whole batches of what waits: padded prefill, then decodes until the longest output is done",
    .flags = LLM_SCHED_BATCHES,
    .plan = plan_static,
    .complete = complete_batch,
};

const llm_sched llm_sched_dynamic = {
    .name = "dynamic",
    .help = "static, but a batch starts only when max_batch requests wait or the oldest has waited max_wait_ms",
    .flags = LLM_SCHED_BATCHES,
    .keys = DYNAMIC_KEYS,
    .parse = parse_dynamic,
    .plan = plan_dynamic,
    .complete = complete_batch,
};
