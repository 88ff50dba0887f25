/* units.c -- an LLM pool's replicas as fleet units (fleet.h): a replica going
 * down (drained, or failed with what it held lost), coming up, pausing, and
 * the load the autoscaler reads. */
#include "llm/replica.h"

static void unit_down(void *ctx, int u, int failed)
{
    llm *P = ctx;
    replica *R = &P->r[u];
    station *st = &P->st;
    R->down = 1;
    llm_idle_remove(P, R);
    if (R->wait_ev) {
        evq_cancel(st->q, R->wait_ev);
        R->wait_ev = 0;
    }
    if (!failed) return;                       /* draining: its steps go on without newcomers */
    /* It crashed: the step in flight is lost, and every sequence it held goes back
     * to the head of the queue to be recomputed elsewhere (as after a preemption),
     * or fails. */
    if (R->step_ev) {
        evq_cancel(st->q, R->step_ev);
        R->step_ev = 0;
        rep_account_step(R);
    }
    else if (R->cpu_job) {                     /* in a CPU part of its step (cpu.c) */
        rep_cpu_cancel(R);
        rep_account_step(R);
    }
    if (R->stepping) {
        R->stepping = 0;
        station_busy(st, -1);
    }
    int n = 0;
    while (R->run_tail) {
        rep_preempt_newest(R);
        if (*st->sink->measuring) P->preemptions--;   /* not a preemption: a failure */
        n++;
    }
    R->npf = 0;
    if (R->pc) prefix_clear(R->pc);             /* its cached prefixes are gone too */
    R->free_blocks = P->cfg->kv_blocks;        /* its KV cache is gone */
    R->spec = 0;
    R->spec_res = 0;
    if (R->lora) rep_lora_reset(R);
    load_changed(R, ROUTE_KEY_KV);
    if (st->cfg->fleet->fault.on_failure == FAULT_FAIL)
        for (int i = 0; i < n; i++) {
            request *r = squeue_dequeue(R->wq);
            station_drop(st, r, OUT_FAILED);
        }
    else
        llm_kick(P);
}

static void unit_up(void *ctx, int u)
{
    llm *P = ctx;
    replica *R = &P->r[u];
    R->down = 0;
    R->since = 0;
    R->up_at = evq_now(P->st.q);
    rep_go_idle(R);
    llm_kick(P);
}

static uint64_t unit_held(void *ctx, int u)
{
    return (uint64_t) ((llm *) ctx)->r[u].nrun;
}

/* Replica U stalls for LEN (GC, stop-the-world): the step in flight ends LEN
 * later; a step planned during the pause runs after it (rep_step). */
static void unit_pause(void *ctx, int u, simtime_t len)
{
    llm *P = ctx;
    replica *R = &P->r[u];
    simtime_t now = evq_now(P->st.q);
    R->paused_to = now + len;
    if (R->step_ev) {
        evq_cancel(P->st.q, R->step_ev);
        R->step_dur += len;
        R->step_ev = station_at(&P->st, R->step_start + R->step_dur, rep_on_step_end, R, 0);
    }
}

/* The autoscaler's load: requests in the pool, mean stepping replicas since the
 * last evaluation, or KV blocks in use in units of one replica's capacity. */
static double unit_load(void *ctx, as_metric m)
{
    llm *P = ctx;
    station *st = &P->st;
    if (m == AS_QUEUE) return (double) st->inside;
    /* Scaled to zero with requests waiting, nothing is busy and no KV is held,
     * but the load is not nothing (the autoscaler then wants one replica). */
    double least = st->inside > 0 ? 1e-9 : 0;
    if (m == AS_KV) {
        double used = 0;
        for (int i = 0; i < P->nrep; i++)
            used += (double) (P->cfg->kv_blocks - P->r[i].free_blocks) / (double) P->cfg->kv_blocks;
        return used > least ? used : least;
    }
    station_busy(st, 0);
    simtime_t now = evq_now(st->q);
    double busy = now > P->as_t ? (st->busy_area - P->as_area) / (double) (now - P->as_t) : st->busy;
    P->as_area = st->busy_area;
    P->as_t = now;
    return busy > least ? busy : least;
}

fleet_units llm_fleet_units(llm *P)
{
    return (fleet_units) { .ctx = P, .down = unit_down, .up = unit_up, .held = unit_held, .load = unit_load,
                           .pause = unit_pause };
}
