/* step.c -- an LLM replica's forward steps: its scheduler plans a step, the
 * cost model prices it (with the fleet's slow replicas, cold starts, CPU
 * contention and pauses), the step ends and its scheduler completes it; idle
 * replicas wait on the pool's idle stack.  Also the per-class cost accounting
 * of a step, and the whole-structure sanity checks (LATSIM_CHECK). */
#include <stdio.h>
#include <stdlib.h>
#include "engine/errmsg.h"
#include "llm/replica.h"
#include "llm/opshare.h"

/* ---- whole-structure sanity checks ------------------------------------------------ */

void llm_check_failed(void)
{
    fputs("latsim: llm: a sanity check failed (the line above says which); aborting\n", stderr);
    abort();
}

int rep_sane(const replica *R, int planned)
{
    const llm *P = R->pool;
    const char *bad = NULL;
    int64_t s = R->steps, held = 0, base = 0, phases = 0;
    int nlist = 0;
    for (const request *r = R->run_head; r; r = seq_of(r)->rnext) nlist++;
    for (int i = 0; i < P->B; i++) phases += R->phase_cnt[i];
    for (int i = 0; i < R->ndec; i++) {
        const llm_seq *seq = R->heap[i];
        if (seq->heap_pos != (uint32_t) i) bad = "a decoding sequence's heap position";
        if (seq_of(seq->req) != seq) bad = "a decoding sequence's record";
        if (i > 0 && R->heap[(i - 1) / 2]->finish_step > seq->finish_step) bad = "the finish-heap order";
        base += seq->phase_base;
    }
    if (nlist != R->nrun) bad = "running-list length";
    else if (R->ndec > R->nrun) bad = "more decoding sequences than running ones";
    else if (P->cfg->sched->flags & LLM_SCHED_BATCHES) {
        if (R->nrun != R->ndec) bad = "batch: running sequences != finish-heap size";
        else if (phases != 0 || R->npf != 0) bad = "batch: phase counts or prefills in use";
        else if (R->free_blocks + R->batch_blocks != P->cfg->kv_blocks) bad = "batch: free + reserved KV blocks != capacity";
        else if (R->batch_n == 0 && R->batch_blocks != 0) bad = "batch: blocks reserved without a batch";
    } else {
        /* With a prefix cache, content blocks are shared: count each sequence's
         * anonymous blocks here, and let the cache check the rest. */
        held += R->xfer_blocks;     /* role = decode: reserved for KV on its way */
        for (int i = 0; i < R->npf; i++) held += seq_of(R->pf[i])->blocks - content_blocks(P, R->pf[i]);
        for (int i = 0; i < R->ndec; i++)
            held += blocks_for(P, R->heap[i]->phase_base + s + (planned ? 1 : 0)) - content_blocks(P, R->heap[i]->req);
        if (planned) held += R->spec_res;   /* a speculating step's k further tokens (spec.c) */
        if (R->pc) {
            /* The counters at every check; the whole structure (O(entries)) at every
             * 1024th (every 1024 steps with LATSIM_CHECK=1, 1024 x N with N). */
            if (prefix_free_blocks(R->pc) + prefix_held_blocks(R->pc) + prefix_cached_blocks(R->pc)
                != prefix_capacity(R->pc)) bad = "prefix cache: free + held + cached KV blocks != capacity";
            else if (s % (1024 * (int64_t) (P->check > 0 ? P->check : 1)) == 0 && !prefix_sane(R->pc))
                bad = "prefix cache: its structure";
            else if (R->free_blocks != (int64_t) prefix_available(R->pc)) bad = "prefix cache: free blocks";
            else if ((int64_t) prefix_anon_blocks(R->pc) != held) bad = "prefix cache: anonymous blocks != sequences' own";
            held = P->cfg->kv_blocks - R->free_blocks;   /* the check below then holds */
        }
        if (R->nrun != R->npf + R->ndec) bad = "running sequences != prefilling + decoding";
        else if (phases != R->ndec) bad = "phase counts do not sum to the decoding sequences";
        else if (base != R->base_sum) bad = "sum of phase bases";
        else if (R->free_blocks < 0 || R->free_blocks + held != P->cfg->kv_blocks) bad = "free + held KV blocks != capacity";
    }
    if (!bad && R->lora && (R->lora_active > R->lora_resident || R->lora_resident > P->cfg->max_loras))
        bad = "LoRA: adapters in use > resident, or resident > max_loras";
    uint64_t queued = P->st.queue.len;
    for (int i = 0; i < P->nrep; i++) queued += P->r[i].own.len;
    if (!bad && queued != P->st.qlen) bad = "queue lengths do not sum to the pool's";
    if (bad)
        fprintf(stderr, "latsim: llm pool %s replica %d, step %lld (%s): inconsistent %s\n", ERRMSG_SHOWN(P->st.cfg->name), R->index,
                (long long) s, planned ? "planned" : "between steps", bad);
    return bad == NULL;
}

/* ---- the idle stack ---------------------------------------------------------------- */

void llm_idle_push(llm *P, replica *R)
{
    R->idle_listed = 1;
    R->idle_pos = P->nidle;
    P->idle[P->nidle++] = R;
}

void llm_idle_remove(llm *P, replica *R)
{
    if (!R->idle_listed) return;
    replica *top = P->idle[--P->nidle];
    P->idle[R->idle_pos] = top;
    top->idle_pos = R->idle_pos;
    R->idle_listed = 0;
}

void rep_go_idle(replica *R)
{
    llm *P = R->pool;
    if (R->stepping) {
        R->stepping = 0;
        station_busy(&P->st, -1);
    }
    if (R->down) {                 /* it takes nothing new: off the idle stack */
        if (P->fl && R->nrun == 0 && fleet_state(P->fl, R->index) == UNIT_DRAINING)
            fleet_drained(P->fl, R->index);
        return;
    }
    if (!R->idle_listed) llm_idle_push(P, R);
}

/* ---- stepping ------------------------------------------------------------------------ */

static void on_wake(evq *q, void *subject, int64_t arg);

static void group_step(llm *P, int g0);

void rep_step(replica *R)
{
    llm *P = R->pool;
    if (P->lock) {
        group_step(P, R->index - R->index % P->dp);
        return;
    }
    simtime_t wake_at = P->cfg->sched->plan(R);
    if (wake_at != PLAN_STEP) {
        rep_go_idle(R);
        if (wake_at != SIMTIME_NEVER && !R->wait_ev)
            R->wait_ev = station_at(&P->st, wake_at, on_wake, R, 0);
        return;
    }
    if (check_due(P->check, R->steps)) llm_require(rep_sane(R, 1));
    if (!R->stepping) {
        R->stepping = 1;
        station_busy(&P->st, +1);
    }
    simtime_t now = evq_now(P->st.q);
    double ms = cost_fast_ms_work(&P->cf, &R->cur, &R->step_flops, &R->step_bytes);
    /* The framework-overhead part, scaled below by the factors that scale the whole step. */
    double fw = cost_fast_overhead_ms(&P->cf, &R->cur);
    if (R->spec) {   /* the drafting passes before the verification (spec.c) */
        double d = rep_spec_draft_ms(R);
        ms += d;
        if (P->window_open) P->spec_draft_ms += d;
    }
    if (R->lora) ms += rep_lora_step_ms(R);   /* adapter loads and LoRA compute (lora.c) */
    double ms0 = ms;
    if (P->cfg->step_time_scale != 1) ms *= P->cfg->step_time_scale;   /* step_time_scale (a what-if) */
    simtime_t dur;
    if (P->fl) {   /* slow replicas and pauses come with a fleet too */
        const fleet_cfg *fc = P->st.cfg->fleet;
        if (fc->cold) ms *= cold_factor(&fc->cs, R->since);
        if (R->slow) ms *= fc->fault.slow_factor;
        if (fc->contention) {
            /* Host CPU utilisation: the stepping share of the replicas up (this one
             * included); the curve multiplies the CPU overhead share of the step time. */
            ms *= fleet_contention(P->fl, P->st.busy, &P->cpu, &P->cpu_t);
        }
        fw *= ms0 > 0 ? ms / ms0 : 0;
        dur = simtime_from_ms(ms);
        if (dur < 1) dur = 1;
        if (R->paused_to > now) dur += R->paused_to - now;   /* it runs once the pause is over */
    } else {
        if (ms != ms0) fw *= ms0 > 0 ? ms / ms0 : 0;
        dur = simtime_from_ms(ms);
        if (dur < 1) dur = 1;
    }
    R->step_fw = fw > 0 ? simtime_from_ms(fw) : 0;
    if (R->step_fw > dur) R->step_fw = dur;
    if (P->ops && P->window_open) op_accumulate(P->ops, &P->cfg->cost.hw, P->cf.lm, &R->cur, ms, fw < ms ? fw : ms);   /* opshare.h */
    if (R->load_pending > 0) {   /* kv_offload: the step waits for its newcomers' loads */
        dur += R->load_pending;
        R->load_pending = 0;
    }
    R->step_start = now;
    R->step_dur = dur;
    R->step_used = P->cfg->kv_blocks - R->free_blocks;
    if (P->window_open) {
        P->steps++;
        P->seqs_in_steps += R->cur.decode_seqs + R->cur.prefill_seqs;
        double occ = (double) R->step_used / (double) P->cfg->kv_blocks;
        if (occ > P->kv_peak) P->kv_peak = occ;
    }
    if (P->cpu_steps && rep_cpu_step(R, dur)) return;   /* CPU parts before and after the GPU part (cpu.c) */
    if (P->step)   /* run --trace-events */
        P->step->fn(P->step->ctx, P->st.index, R->index, now, dur, R->cur.prefill_tokens,
                         R->cur.prefill_seqs, R->cur.decode_seqs);
    R->step_ev = station_after(&P->st, dur, rep_on_step_end, R, 0);
}

/* Cost accounting (docs/metrics.md, "Cost per 1000 requests, overall and per class"): the step in flight has ended;
 * its time goes to its sequences.  A step with both prompt tokens and decodes
 * is split between the two in proportion to their standalone step times (the
 * cost model's time of its prefill alone and of its decodes alone); the decode
 * part is shared equally by the decoding sequences (through dec_sum, O(1)), the
 * prefill part by the prefilling sequences in proportion to their chunks (a
 * static or dynamic batch's padded prefill: equally). */
static void charge_step(replica *R)
{
    llm *P = R->pool;
    const cost_step *c = &R->cur;
    double dur = (double) R->step_dur, dec = 0;
    int decodes = c->decode_seqs > 0 && R->ndec > 0;
    if (decodes && c->prefill_seqs > 0) {
        cost_step pf = { .prefill_tokens = c->prefill_tokens, .prefill_pairs = c->prefill_pairs,
                         .prefill_seqs = c->prefill_seqs };
        cost_step dc = { .decode_seqs = c->decode_seqs, .decode_tokens_per_seq = c->decode_tokens_per_seq,
                         .kv_tokens = c->kv_tokens };
        double a = cost_fast_ms(&P->cf, &pf), b = cost_fast_ms(&P->cf, &dc);
        dec = a + b > 0 ? dur * b / (a + b) : dur / 2;
    } else if (decodes)
        dec = dur;
    if (decodes) R->dec_sum += dec / R->ndec;
    double pre = dur - dec;
    if (c->prefill_seqs <= 0 || pre <= 0) return;
    if (P->cfg->sched->flags & LLM_SCHED_BATCHES) {
        for (request *q = R->run_head; q; q = seq_of(q)->rnext) station_charge(&P->st, q, pre / R->batch_n);
        return;
    }
    if (c->prefill_tokens <= 0) return;
    for (int i = 0; i < R->npf; i++)
        if (R->chunk[i] > 0) station_charge(&P->st, R->pf[i], pre * R->chunk[i] / (double) c->prefill_tokens);
}

void rep_account_step(replica *R)
{
    llm *P = R->pool;
    if (!P->window_open) return;
    simtime_t from = R->step_start > P->window_start ? R->step_start : P->window_start;
    double in = (double) (evq_now(P->st.q) - from);
    if (in <= 0) return;
    double frac = in / (double) R->step_dur;
    P->kv_area += (double) R->step_used * in;
    P->flops += R->step_flops * frac;
    P->bytes += R->step_bytes * frac;
}

void rep_on_step_end(evq *q, void *subject, int64_t arg)
{
    (void) q;
    (void) arg;
    replica *R = subject;
    R->step_ev = 0;
    rep_account_step(R);
    R->fw_cum += R->step_fw;   /* before complete: the sequences leaving now were in this step */
    if (R->pool->acct) charge_step(R);
    rep_drop_leaving(R, 1);   /* clients who left during the step (patience_s) */
    R->pool->cfg->sched->complete(R);
    R->steps++;
    if (check_due(R->pool->check, R->steps - 1)) llm_require(rep_sane(R, 0));   /* the step that ended */
    rep_step(R);
    if (!R->pool->routed && R->pool->dp == 1 && R->pool->nidle > 0 && R->pool->st.qlen > 0)
        llm_kick(R->pool);   /* e.g. a preempted request */
}

void rep_wake(replica *R)
{
    llm_idle_remove(R->pool, R);
    rep_step(R);
}

/* The time a plan asked to be woken at (a dynamic batch's wait) has come. */
static void on_wake(evq *q, void *subject, int64_t arg)
{
    (void) q;
    (void) arg;
    replica *R = subject;
    R->wait_ev = 0;
    if (!R->stepping) rep_wake(R);
    if (!R->pool->routed && R->pool->dp == 1) llm_kick(R->pool);   /* a batch may not take everything: other idle replicas may */
}

void llm_kick(llm *P)
{
    while (P->nidle > 0 && P->st.qlen > 0) {
        replica *R = P->idle[P->nidle - 1];
        rep_wake(R);
        if (!R->stepping) break;    /* it stayed idle (a dynamic batch still filling): so would others */
    }
}

/* ---- data-parallel ranks in lockstep (dp > 1, MoE) ------------------------------------- */

/* Tokens the step S routes through the expert layers. */
static double step_tokens(const cost_step *s)
{
    return (double) s->prefill_tokens + (double) cost_step_decode_tokens(s);
}

static void on_group_end(evq *q, void *subject, int64_t arg);

/* Plans and starts the lockstep step of the DP group whose first rank is G0
 * (docs/llm.md, "Data-parallel attention"): every rank plans its own step
 * (its scheduler, token budget and KV cache); when none has work they all
 * idle; else each rank's step is priced with the group's routed tokens (an
 * idle rank's dummy batch of one token, as vLLM's execute_dummy_batch), and
 * the group's step takes the slowest rank's time. */
static void group_step(llm *P, int g0)
{
    int D = P->dp, any = 0;
    double group = 0;
    for (int i = g0; i < g0 + D; i++) {
        replica *Q = &P->r[i];
        Q->dummy = P->cfg->sched->plan(Q) != PLAN_STEP;   /* iteration-level plans idle until an arrival */
        any |= !Q->dummy;
        group += Q->dummy ? 1.0 : step_tokens(&Q->cur);
    }
    if (!any) {
        for (int i = g0; i < g0 + D; i++) rep_go_idle(&P->r[i]);
        return;
    }
    simtime_t now = evq_now(P->st.q), pending = 0;
    double ms = 0;
    for (int i = g0; i < g0 + D; i++) {
        replica *Q = &P->r[i];
        if (Q->dummy) Q->cur = (cost_step) { .prefill_tokens = 1, .prefill_pairs = 1, .prefill_seqs = 1 };
        else if (check_due(P->check, Q->steps)) llm_require(rep_sane(Q, 1));
        Q->cur.group_tokens = group;
        double m = cost_fast_ms_work(&P->cf, &Q->cur, &Q->step_flops, &Q->step_bytes);
        if (!Q->dummy && Q->spec) {   /* the drafting passes before the verification (spec.c) */
            double d = rep_spec_draft_ms(Q);
            m += d;
            if (P->window_open) P->spec_draft_ms += d;
        }
        if (!Q->dummy && Q->lora) m += rep_lora_step_ms(Q);
        if (m > ms) ms = m;
        if (Q->load_pending > pending) pending = Q->load_pending;
        Q->load_pending = 0;
    }
    if (P->cfg->step_time_scale != 1) ms *= P->cfg->step_time_scale;
    simtime_t dur = simtime_from_ms(ms);
    if (dur < 1) dur = 1;
    dur += pending;   /* kv_offload: the slowest rank's loads hold the group */
    for (int i = g0; i < g0 + D; i++) {
        replica *Q = &P->r[i];
        llm_idle_remove(P, Q);
        if (!Q->stepping) {
            Q->stepping = 1;
            station_busy(&P->st, +1);
        }
        Q->step_start = now;
        Q->step_dur = dur;
        Q->step_used = P->cfg->kv_blocks - Q->free_blocks;
        if (Q->dummy) continue;
        if (P->window_open) {
            P->steps++;
            P->seqs_in_steps += Q->cur.decode_seqs + Q->cur.prefill_seqs;
            double occ = (double) Q->step_used / (double) P->cfg->kv_blocks;
            if (occ > P->kv_peak) P->kv_peak = occ;
        }
        if (P->step)   /* run --trace-events */
            P->step->fn(P->step->ctx, P->st.index, Q->index, now, dur, Q->cur.prefill_tokens,
                             Q->cur.prefill_seqs, Q->cur.decode_seqs);
    }
    P->r[g0].step_ev = station_after(&P->st, dur, on_group_end, &P->r[g0], 0);
}

/* The group step of the ranks from SUBJECT on has ended: each rank's step
 * completes (a dummy one only counts), then the group plans its next. */
static void on_group_end(evq *q, void *subject, int64_t arg)
{
    (void) q;
    (void) arg;
    replica *R0 = subject;
    llm *P = R0->pool;
    R0->step_ev = 0;
    for (int i = R0->index; i < R0->index + P->dp; i++) {
        replica *Q = &P->r[i];
        rep_account_step(Q);
        if (!Q->dummy) {
            if (P->acct) charge_step(Q);
            rep_drop_leaving(Q, 1);
            P->cfg->sched->complete(Q);
        }
        Q->steps++;
        if (check_due(P->check, Q->steps - 1)) llm_require(rep_sane(Q, 0));
    }
    group_step(P, R0->index);
}
