/* seq.c -- an LLM replica's sequences: the running list (oldest first), the
 * finish heap of decoding sequences (keyed by the step they finish in), the
 * phase counts that give each step's KV growth in O(1) (replica.h), and a
 * sequence leaving the replica (and the pool: its record goes back). */
#include <assert.h>
#include "llm/replica.h"

/* ---- a request leaving the pool: its record goes back (seqrec.h) ---------------- */

void llm_leave(station *st, request *r) { llm_seq_detach(&((llm *) st)->seqs, r); }

/* ---- the running list, the finish heap ------------------------------------------ */

void rep_run_append(replica *R, request *r)
{
    llm_seq *seq = seq_of(r);
    seq->rnext = NULL;
    seq->rprev = R->run_tail;
    if (R->run_tail) seq_of(R->run_tail)->rnext = r;
    else R->run_head = r;
    R->run_tail = r;
    R->nrun++;
    if (R->lora) rep_lora_use(R, r, +1);
    load_changed(R, ROUTE_KEY_INSIDE);
}

void rep_run_remove(replica *R, request *r)
{
    llm_seq *seq = seq_of(r);
    if (seq->rprev) seq_of(seq->rprev)->rnext = seq->rnext;
    else R->run_head = seq->rnext;
    if (seq->rnext) seq_of(seq->rnext)->rprev = seq->rprev;
    else R->run_tail = seq->rprev;
    seq->rprev = seq->rnext = NULL;
    R->nrun--;
    if (R->lora) rep_lora_use(R, r, -1);
    load_changed(R, ROUTE_KEY_INSIDE);
}

static void heap_swap(replica *R, int i, int j)
{
    llm_seq *t = R->heap[i];
    R->heap[i] = R->heap[j];
    R->heap[j] = t;
    R->heap[i]->heap_pos = (uint32_t) i;
    R->heap[j]->heap_pos = (uint32_t) j;
}

static void heap_up(replica *R, int i)
{
    while (i > 0) {
        int p = (i - 1) / 2;
        if (R->heap[p]->finish_step <= R->heap[i]->finish_step) break;
        heap_swap(R, i, p);
        i = p;
    }
}

static void heap_down(replica *R, int i)
{
    for (;;) {
        int c = 2 * i + 1, m = i;
        if (c < R->ndec && R->heap[c]->finish_step < R->heap[m]->finish_step) m = c;
        if (c + 1 < R->ndec && R->heap[c + 1]->finish_step < R->heap[m]->finish_step) m = c + 1;
        if (m == i) break;
        heap_swap(R, i, m);
        i = m;
    }
}

void rep_heap_push(replica *R, request *r)
{
    llm_seq *seq = seq_of(r);
    seq->heap_pos = (uint32_t) R->ndec;
    R->heap[R->ndec++] = seq;
    heap_up(R, R->ndec - 1);
    R->ndec_meas += r->measured;
    if (R->ndec_cls && r->measured) R->ndec_cls[r->cls]++;
    seq->cost_mark = R->dec_sum;
}

request *rep_heap_pop(replica *R)
{
    request *r = R->heap[0]->req;
    R->ndec_meas -= r->measured;
    if (R->ndec_cls && r->measured) R->ndec_cls[r->cls]--;
    R->ndec--;
    if (R->ndec > 0) {
        heap_swap(R, 0, R->ndec);
        heap_down(R, 0);
    }
    rep_charge_decode(R, r);
    return r;
}

void rep_decode_join(replica *R, request *r, int64_t s, int64_t c0)
{
    llm_seq *seq = seq_of(r);
    int64_t f = s + 1;
    seq->phase_base = c0 - f;
    seq->finish_step = (int64_t) r->output - seq->generated + f - 1;
    R->base_sum += seq->phase_base;
    R->phase_cnt[bmod(R->pool, seq->phase_base)]++;
    rep_heap_push(R, r);
}

void rep_charge_decode(replica *R, request *r)
{
    if (R->pool->acct) station_charge(&R->pool->st, r, R->dec_sum - seq_of(r)->cost_mark);
}

void rep_decode_leave(replica *R, request *r)
{
    llm_seq *seq = seq_of(r);
    int i = (int) seq->heap_pos;
    assert(i < R->ndec && R->heap[i] == seq);
    rep_charge_decode(R, r);
    R->base_sum -= seq->phase_base;
    R->phase_cnt[bmod(R->pool, seq->phase_base)]--;
    R->ndec_meas -= r->measured;
    if (R->ndec_cls && r->measured) R->ndec_cls[r->cls]--;
    R->ndec--;
    if (i != R->ndec) {
        heap_swap(R, i, R->ndec);
        heap_down(R, i);
        heap_up(R, i);
    }
}

/* Adds this step's gap DUR ms once per measured decoding sequence of each class
 * (ndec_cls), those of JOINED (N of them, counted apart) left out. */
static void rep_itl_classes(replica *R, double dur, request *const *joined, int n)
{
    stat_acc *const *k = R->pool->cls_itl;
    for (int i = 0; i < n; i++)
        if (joined[i]->measured) R->ndec_cls[joined[i]->cls]--;
    for (int c = 0; c < R->pool->st.ncls; c++)
        if (R->ndec_cls[c] > 0) stat_add_n(k[c], dur, (uint64_t) R->ndec_cls[c]);
    for (int i = 0; i < n; i++)
        if (joined[i]->measured) R->ndec_cls[joined[i]->cls]++;
}

void rep_itl_decodes(replica *R)
{
    stat_acc *itl = R->pool->itl_run;
    int64_t n = R->ndec_meas;
    int nj = R->njoined;
    if (R->njoined > 0) {
        /* Joined after a KV transfer: the gap since its first token, in the prefill pool. */
        simtime_t now = evq_now(R->pool->st.q);
        for (int i = 0; i < R->njoined; i++) {
            request *r = R->joined[i];
            seq_of(r)->pd.state = 0;
            if (r->measured) {
                n--;
                double g = simtime_to_ms(now - r->last_token);
                if (itl) stat_add(itl, g);
                if (R->pool->itl_pool) stat_add(R->pool->itl_pool, g);
                if (R->ndec_cls) stat_add(R->pool->cls_itl[r->cls], g);
            }
        }
        R->njoined = 0;
    }
    if (itl && n > 0)
        stat_add_n(itl, simtime_to_ms(R->step_dur), (uint64_t) n);
    if (R->pool->itl_pool && n > 0) stat_add_n(R->pool->itl_pool, simtime_to_ms(R->step_dur), (uint64_t) n);
    if (R->ndec_cls && n > 0) rep_itl_classes(R, simtime_to_ms(R->step_dur), R->joined, nj);
}

void rep_finish(replica *R, request *r)
{
    llm_seq *seq = seq_of(r);
    llm *P = R->pool;
    station *st = &P->st;
    simtime_t now = evq_now(st->q);
    r->last_token = now;
    r->service_ns += now - r->start;
    r->fw.ns += R->fw_cum - seq->fw_mark;
    /* Cold: it waited for this replica's start (it entered the pool before the
     * replica came up), or was among its first cold_requests slowed by cold_factor. */
    if (P->fl && ((r->entered < R->up_at) ||
                  (P->st.cfg->fleet->cold && R->since < (uint64_t) P->st.cfg->fleet->cs.cold_requests &&
                   P->st.cfg->fleet->cs.cold_factor > 1))) {
        r->cold = 1;
        if (r->measured) P->cold++;
    }
    R->since++;
    if (r->measured) {
        /* All its waits and all its service in this pool, preemptions included. */
        stat_add(st->queue_ms, simtime_to_ms(r->queue_ns - seq->queue0));
        stat_add(st->service_ms, simtime_to_ms(r->service_ns - seq->service0 - (r->fw.ns - seq->fw0)));
    }
    station_forward(st, r, 0);
}

void rep_heap_rebuild(replica *R)
{
    for (int i = R->ndec / 2 - 1; i >= 0; i--) heap_down(R, i);
}
