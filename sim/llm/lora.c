/* lora.c -- LoRA adapters on an LLM replica (docs/llm.md, "LoRA adapters").
 *
 * A request entering the pool takes the adapter its trace row names (the
 * workload's adapter_column), else its class's, else one drawn from a Zipf over
 * the pool's `adapters` (its own stream, "pool NAME lora").  Each
 * replica keeps up to max_loras adapters resident (vLLM's GPU LoRA slots):
 * admitting a sequence whose adapter is resident is a hit; otherwise the
 * adapter is loaded into a free slot, or into that of the least recently used
 * adapter no running sequence uses (the LRU list holds only those), and the
 * step that admits it waits for the load (bytes / lora_load_gbs), as vLLM
 * loads adapters before the forward pass.  When every slot holds an adapter in
 * use the request waits in its place while those behind it whose adapter is
 * in the batch join (vLLM's scheduler: sched_continuous.c), so a batch never
 * mixes more than max_loras adapters; with lora_max_wait_ms, one that has
 * waited that long stops them (the batch drains, it gets the next slot).  A step that runs adapters
 * costs lora_step_overhead_ms more, plus each distinct adapter's weights read
 * once from HBM (the LoRA matmuls are memory-bound: S-LoRA, Punica). */
#include "llm/replica.h"

void llm_lora_pick(llm *P, request *r)
{
    const llm_cfg *L = P->cfg;
    int32_t a = r->attrs.trace_adapter > 0 ? r->attrs.trace_adapter - 2   /* the trace row's: 0 the base model, k adapter k */
              : r->cls >= 0 && r->cls < L->adapter_ncls ? L->adapter_cls[r->cls] : -2;
    if (a == -2) a = (int32_t) zipf_sample(P->lora_zipf, P->lora_rng);
    seq_of(r)->lora.adapter = a;
}

static lru_slots slots(replica *R) { return LRU_SLOTS(R->lora, lora_slot, link); }

int rep_lora_take(replica *R, request *r)
{
    llm_seq *seq = seq_of(r);
    llm *P = R->pool;
    if (seq->lora.adapter < 0) return 0;
    lora_slot *s = &R->lora[seq->lora.adapter];
    int count = P->window_open && r->measured;
    if (s->resident) {
        if (count) P->lora_hits++;
        return 0;
    }
    if (R->lora_resident >= P->cfg->max_loras) {
        if (lru_empty(&R->lora_lru)) {
            if (count && !seq->lora.waited) P->lora_waits++;
            seq->lora.waited = 1;
            return -1;
        }
        uint32_t v = R->lora_lru.tail;
        lru_unlink(&R->lora_lru, slots(R), v);
        R->lora[v].listed = 0;
        R->lora[v].resident = 0;
        R->lora_resident--;
    }
    s->resident = 1;
    R->lora_resident++;
    R->lora_load_ms += P->lora_load_one_ms;
    if (count) {
        P->lora_loads++;
        P->lora_load_total_ms += P->lora_load_one_ms;
    }
    return 0;
}

int rep_lora_starved(const replica *R, const request *r)
{
    double lim = R->pool->cfg->lora_max_wait_ms;
    return lim > 0 && evq_now(R->pool->st.q) - r->enq >= simtime_from_ms(lim);
}

void rep_lora_use(replica *R, const request *r, int d)
{
    llm_seq *seq = seq_of(r);
    if (seq->lora.adapter < 0) return;
    lora_slot *s = &R->lora[seq->lora.adapter];
    if (d > 0) {
        if (s->ref++ == 0) {
            if (s->listed) lru_unlink(&R->lora_lru, slots(R), (uint32_t) seq->lora.adapter);
            s->listed = 0;
            R->lora_active++;
        }
    } else if (--s->ref == 0) {
        R->lora_active--;
        if (s->resident) {
            lru_push_front(&R->lora_lru, slots(R), (uint32_t) seq->lora.adapter);
            s->listed = 1;
        }
    }
}

double rep_lora_step_ms(replica *R)
{
    llm *P = R->pool;
    double ms = R->lora_load_ms;
    R->lora_load_ms = 0;
    if (R->lora_active > 0) {
        double c = P->cfg->lora_step_overhead_ms + R->lora_active * P->lora_read_ms;
        if (P->window_open) P->lora_steps_ms += c;
        ms += c;
    }
    return ms;
}

void rep_lora_reset(replica *R)
{
    for (int i = 0; i < R->pool->cfg->adapters; i++) {
        R->lora[i].resident = 0;
        R->lora[i].listed = 0;
    }
    lru_init(&R->lora_lru);
    R->lora_resident = 0;
    R->lora_load_ms = 0;
}
