/* queue.c -- requests reaching an LLM pool: the per-request checks (max_seq_len,
 * truncation), the front-end overhead, and the queue they wait in: the pool's
 * shared one, or with `routing` the own queue of the replica a routing policy
 * picks (over the replicas' snapshots, or a least-loaded index of them). */
#include <assert.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "llm/replica.h"

void rep_snap(const replica *R, station_snap *out)
{
    out->waiting = R->own.len;
    out->inside = R->own.len + (uint64_t) R->nrun + (uint64_t) R->nxfer + (uint64_t) R->ntok;
    out->running = (uint64_t) R->nrun;
    out->busy = R->stepping;
    out->capacity = 1;
    out->kv_free = (double) R->free_blocks / (double) R->pool->cfg->kv_blocks;
}

/* Replica I's snapshot for the routing policy (route_view.snap); with
 * prefix_affinity, how much of the routed request's prompt its cache holds, as it
 * is now (the pool's own router sees its replicas' caches). */
static const station_snap *routed_snap(void *ctx, int i)
{
    llm *P = ctx;
    station_snap *s = &P->snaps[i];
    rep_snap(&P->r[i], s);
    if (P->route_pfx) {
        int64_t n = P->route_nids;
        uint32_t h = n > 0 ? prefix_match(P->r[i].pc, P->ids, (uint32_t) n) : 0;
        /* Only a prefix covering affinity_threshold of the prompt counts. */
        s->prefix_ids = (double) h >= P->cfg->affinity_threshold * (double) n ? h : 0;
    }
    return s;
}

/* Brings the routing index up to date: the replicas marked since the last request. */
static void refresh_index(llm *P)
{
    for (int k = 0; k < P->ndirty; k++) {
        replica *R = &P->r[P->dirty[k]];
        station_snap s;
        rep_snap(R, &s);
        route_index_set(&P->ix, R->index, route_key(P->rc.policy, &s));
        R->ix_dirty = 0;
    }
    P->ndirty = 0;
}

/* Sanity check: every replica's key in the index is that of its snapshot now,
 * and the policy reading every snapshot, from the same turn, picks GOT too.
 * Returns 0 (with a line on stderr) when not.  O(replicas): run only when the
 * pool's check flag is on. */
static int index_sane(llm *P, const request *r, uint64_t turn, int got)
{
    for (int i = 0; i < P->nrep; i++) {
        station_snap s;
        rep_snap(&P->r[i], &s);
        if (route_index_key(&P->ix, i) != route_key(P->rc.policy, &s)) {
            fprintf(stderr, "latsim: llm pool %s replica %d: routing index key %g, load %g\n", P->st.cfg->name, i,
                    route_index_key(&P->ix, i), route_key(P->rc.policy, &s));
            return 0;
        }
    }
    route_ctx scan = P->rc;
    scan.turn = turn;
    route_view all = { routed_snap, P, NULL };
    route_counts tally = route_tally;          /* the check's own reads are not counted */
    int want = scan.policy->pick(&scan, r, &all, scan.n);
    route_tally = tally;
    if (want != got)
        fprintf(stderr, "latsim: llm pool %s: routing index picked replica %d, a scan of every replica %d\n",
                P->st.cfg->name, got, want);
    return want == got;
}

/* dp > 1: the rank vLLM's internal balancer (DPLBAsyncMPClient) picks: the
 * fewest waiting x 4 + running sequences, the lowest rank on a tie; over every
 * rank of the pool (one front end).  vLLM reads counts its coordinator
 * publishes every 100 ms, raised by each assignment in between; these are the
 * ranks' counts now. */
static replica *dp_pick(llm *P)
{
    replica *best = &P->r[0];
    uint64_t min = UINT64_MAX;
    for (int i = 0; i < P->nrep; i++) {
        const replica *R = &P->r[i];
        uint64_t score = R->own.len * 4 + (uint64_t) R->nrun;
        if (score < min) {
            min = score;
            best = &P->r[i];
        }
    }
    return best;
}

/* The replica the routing policy sends r to (routed pools). */
static replica *route_to(llm *P, request *r)
{
    if (P->rc.policy->uses_prefix && P->cfg->prefix_cache) {
        P->route_nids = rep_prompt_ids(P, r, NULL);
        P->route_pfx = 1;
    }
    if (P->ix_key != ROUTE_KEY_NONE) refresh_index(P);
    route_view v = { routed_snap, P, P->ix_key != ROUTE_KEY_NONE ? &P->ix : NULL };
    uint64_t turn = P->rc.turn;
    int e = route_pick(&P->rc, r, &v);
    if (check_due(P->check, (int64_t) r->id) && P->ix_key != ROUTE_KEY_NONE) llm_require(index_sane(P, r, turn, e));
    P->route_pfx = 0;
    return &P->r[e];
}

/* r joins routed replica R's own queue. */
static void enqueue_at(replica *R, request *r)
{
    if (squeue_enqueue(&R->own, r) == 0) {
        load_changed(R, ROUTE_KEY_INSIDE);
        if (R->idle_listed) rep_wake(R);
    }
}

static void enter_queue(llm *P, request *r)
{
    if (P->dp > 1) {
        replica *R = dp_pick(P);
        if (squeue_enqueue(&R->own, r) == 0 && R->idle_listed) rep_wake(R);
        return;
    }
    if (!P->routed) {
        if (station_enqueue(&P->st, r) == 0) llm_kick(P);
        return;
    }
    enqueue_at(route_to(P, r), r);
}

void rep_own_timed_out(squeue *q)
{
    load_changed((replica *) (void *) ((char *) q - offsetof(replica, own)), ROUTE_KEY_INSIDE);
}

/* R's tokenisation is done (cpunode.h): its time, from r->enq, is front-end
 * overhead; it queues. */
static void on_tokenized(void *ctx, int64_t arg)
{
    llm *P = ctx;
    request *r = (request *) (intptr_t) arg;
    simtime_t now = evq_now(P->st.q);
    r->overhead_ns = simtime_add(r->overhead_ns, now - r->enq);
    r->enq = now;
    enter_queue(P, r);
}

/* The same for a request bound to replica CTX (routed): it joins its queue. */
static void on_tokenized_at(void *ctx, int64_t arg)
{
    replica *R = ctx;
    request *r = (request *) (intptr_t) arg;
    simtime_t now = evq_now(R->pool->st.q);
    r->overhead_ns = simtime_add(r->overhead_ns, now - r->enq);
    r->enq = now;
    R->ntok--;
    enqueue_at(R, r);
}

/* After the fixed front-end overhead: with cpu_tokenize_us_per_token, R's
 * prompt is tokenised by a CPU job (cpunode.h, cpu.c), throttled by its
 * cgroup's limit and sharing its node, before it queues: in the front end's
 * cgroup (one shared queue, or dp > 1), or, with a routing policy, in the
 * cgroup of the replica the policy binds it to now (its pod's API server),
 * counted there as inside meanwhile. */
static void tokenize_then_queue(llm *P, request *r)
{
    r->enq = evq_now(P->st.q);
    if (!P->cpun || !(P->cfg->cpu_tokenize_us_per_token > 0)) {
        enter_queue(P, r);
        return;
    }
    double ms = P->cfg->cpu_tokenize_us_per_token * r->prompt / 1e3;
    uint64_t id;
    if (P->routed && P->dp == 1) {
        replica *R = route_to(P, r);
        R->ntok++;
        load_changed(R, ROUTE_KEY_INSIDE);
        id = cpu_job_start(P->cpun, llm_cpu_tok_group(P, R), ms, on_tokenized_at, R, (int64_t) (intptr_t) r);
    } else
        id = cpu_job_start(P->cpun, llm_cpu_tok_group(P, NULL), ms, on_tokenized, P, (int64_t) (intptr_t) r);
    if (!id) P->st.sink->oom(P->st.sink->ctx);
}

static void on_overhead_done(evq *q, void *subject, int64_t arg)
{
    (void) q;
    tokenize_then_queue(subject, (request *) (intptr_t) arg);
}

void llm_arrive(station *st, request *r)
{
    llm *P = (llm *) st;
    const llm_cfg *L = P->cfg;
    int32_t before = r->emitted;   /* tokens an LLM pool before this one produced (0 at the first) */
    llm_seq *q = llm_seq_attach(&P->seqs, r);   /* its sequence here, zeroed (seqrec.h) */
    if (!q) {
        st->sink->oom(st->sink->ctx);
        station_reject(st, r);
        return;
    }
    q->queue0 = r->queue_ns;
    q->service0 = r->service_ns;
    q->fw0 = r->fw.ns;
    if (P->lora_rng) llm_lora_pick(P, r);
    if ((int64_t) r->prompt + r->output > L->max_seq_len) {
        if (!L->truncate) {
            if (r->measured) P->too_long++;
            station_reject(st, r);
            return;
        }
        int64_t o = r->output < L->max_seq_len - 1 ? r->output : L->max_seq_len - 1;
        r->output = (int32_t) o;
        r->prompt = (int32_t) (L->max_seq_len - o < r->prompt ? L->max_seq_len - o : r->prompt);
        r->truncated = 1;
        if (r->measured) P->truncated++;
    }
    if (L->role == LLM_ROLE_DECODE && r->first_token >= 0) {
        /* Prefilled in a prefill pool, its first token emitted there: its KV is to cross the link. */
        q->generated = 1;
        r->enq = evq_now(st->q);
        if (r->output <= 1 || before >= r->output) {   /* nothing left to decode (or all done upstream) */
            station_start(st, r);
            station_forward(st, r, 0);
            return;
        }
        q->pd.state = 1;
        enter_queue(P, r);
        return;
    }
    if (L->request_overhead_ms > 0) {
        simtime_t d = simtime_from_ms(L->request_overhead_ms);
        r->overhead_ns = simtime_add(r->overhead_ns, d);
        station_after(st, d, on_overhead_done, P, (int64_t) (intptr_t) r);
        return;
    }
    tokenize_then_queue(P, r);
}

/* The longest leading run of R's prompt blocks one of the replicas holds, as
 * cached at or before VISIBLE (a router's view). */
uint32_t llm_prefix_match(const station *st, const request *r, simtime_t visible, uint32_t *nids)
{
    llm *P = (llm *) st;                    /* the id scratch is written, nothing else */
    *nids = 0;
    if (!P->cfg->prefix_cache) return 0;
    int64_t n = rep_prompt_ids(P, r, NULL);
    if (n > 0) *nids = (uint32_t) n;
    uint32_t best = 0;
    for (int i = 0; n > 0 && i < P->nrep; i++) {
        uint32_t h = prefix_match_seen(P->r[i].pc, P->ids, (uint32_t) n, visible);
        if (h > best) best = h;
    }
    return best;
}
