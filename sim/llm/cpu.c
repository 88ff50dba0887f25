/* cpu.c -- the CPU side of an LLM pool (issue 35; docs/llm.md, "The CPU
 * side"): its work as CPU jobs on a node (fleet/cpunode.h), in cgroups with
 * the pool's cpu_limit_cores and cpu_request_cores:
 *   - the front end (one per pool: the API server process) tokenises each
 *     prompt (cpu_tokenize_us_per_token) when the pool has one shared queue
 *     (and with dp > 1: one front end balances the ranks); with a routing
 *     policy the request is bound to a replica when it arrives and tokenised
 *     in that replica's cgroup (its pod's API server; queue.c);
 *   - each replica (pod; its dp ranks together) has a cgroup of its own, in
 *     which every step of its engine runs cpu_step_ms of CPU before its GPU
 *     part (scheduling, preparing the inputs) and cpu_sample_us_per_seq per
 *     sequence in the step after it (sampling, detokenising, streaming the
 *     tokens), serially with the GPU as vLLM's engine core does without async
 *     scheduling: step = CPU before + GPU + CPU after, the CPU parts taking
 *     what the node's sharing and the cgroup's CFS quota give them.  Their
 *     time (throttled waits included) is the step's framework overhead
 *     (request.fw_ns), so the latency breakdown still sums.
 * All the pool's cgroups share its node (a host of its own with unlimited
 * cores when it names none: then only the limits act).
 */
#include "llm/replica.h"
#include "llm/opshare.h"
#include "core/result.h"
#include "fleet/cputier.h"

int llm_cpu_init(llm *P, const cpu_cfg *c, cpu_nodes *nodes)
{
    const llm_cfg *L = P->cfg;
    P->cpu_g = -1;
    for (int i = 0; i < P->nrep; i++) P->r[i].cpu_g = -1;
    if (!nodes || !(P->cpun = cpu_nodes_get(nodes, c))) return -1;
    P->cpu_steps = L->cpu_step_ms > 0 || L->cpu_sample_us_per_seq > 0;
    int tok = L->cpu_tokenize_us_per_token > 0;
    int at_replica = tok && P->routed && P->dp == 1;   /* tokenised in the replica it is bound to */
    if (tok && !at_replica && (P->cpu_g = cpu_group_new(P->cpun, c)) < 0) return -1;
    if (!P->cpu_steps && !at_replica) return 0;
    for (int i = 0, g = -1; i < P->nrep; i++) {
        if (i % P->dp == 0 && (g = cpu_group_new(P->cpun, c)) < 0) return -1;   /* a pod: its dp ranks */
        P->r[i].cpu_g = g;
    }
    return 0;
}

int llm_cpu_tok_group(const llm *P, const replica *R)
{
    return R && P->routed && P->dp == 1 ? R->cpu_g : P->cpu_g;
}

static void on_before_done(void *ctx, int64_t arg);
static void on_after_done(void *ctx, int64_t arg);

/* Starts a CPU job of MS ms in R's cgroup, DONE called when it is done. */
static void start_job(replica *R, double ms, cpu_done_fn done)
{
    llm *P = R->pool;
    R->cpu_from = evq_now(P->st.q);
    if (!(R->cpu_job = cpu_job_start(P->cpun, R->cpu_g, ms, done, R, 0))) P->st.sink->oom(P->st.sink->ctx);
}

/* The CPU job in flight is done: its time joins the step's CPU parts. */
static void job_done(replica *R)
{
    R->cpu_job = 0;
    R->cpu_ns += evq_now(R->pool->st.q) - R->cpu_from;
}

/* The step's last part is done: its length is known now; it ends. */
static void step_done(replica *R)
{
    llm *P = R->pool;
    simtime_t now = evq_now(P->st.q);
    R->step_dur = now - R->step_start;
    if (R->step_dur < 1) R->step_dur = 1;
    R->step_fw += R->cpu_ns;   /* framework overhead: the CPU parts, throttled waits included */
    if (R->step_fw > R->step_dur) R->step_fw = R->step_dur;
    if (P->window_open && R->step_start >= P->window_start) {
        P->cpu_part_ms += simtime_to_ms(R->cpu_ns);
        P->cpu_steps_ms += simtime_to_ms(R->step_dur);
        P->cpu_nsteps++;
        if (P->ops) P->ops[OP_FRAMEWORK] += simtime_to_ms(R->cpu_ns);   /* op_shares: framework (opshare.h) */
    }
    if (P->step)   /* run --trace-events: the whole step, once its length is known */
        P->step->fn(P->step->ctx, P->st.index, R->index, R->step_start, R->step_dur, R->cur.prefill_tokens,
                         R->cur.prefill_seqs, R->cur.decode_seqs);
    rep_on_step_end(P->st.q, R, 0);
}

/* The GPU part has ended: sampling and detokenising each sequence of the step. */
static void on_gpu_end(evq *q, void *subject, int64_t arg)
{
    (void) q;
    (void) arg;
    replica *R = subject;
    R->step_ev = 0;
    double ms = R->pool->cfg->cpu_sample_us_per_seq * (double) (R->cur.decode_seqs + R->cur.prefill_seqs) / 1e3;
    if (ms > 0) start_job(R, ms, on_after_done);
    else step_done(R);
}

static void on_before_done(void *ctx, int64_t arg)
{
    (void) arg;
    replica *R = ctx;
    job_done(R);
    R->step_ev = station_after(&R->pool->st, R->cpu_gpu, on_gpu_end, R, 0);
}

static void on_after_done(void *ctx, int64_t arg)
{
    (void) arg;
    replica *R = ctx;
    job_done(R);
    step_done(R);
}

int rep_cpu_step(replica *R, simtime_t gpu)
{
    llm *P = R->pool;
    if (!P->cpu_steps || R->cpu_g < 0) return 0;
    const llm_cfg *L = P->cfg;
    R->cpu_gpu = gpu;
    R->cpu_ns = 0;
    /* Until it ends, its length as if the CPU parts ran unhindered on a core. */
    double cpu_ms = L->cpu_step_ms + L->cpu_sample_us_per_seq * (double) (R->cur.decode_seqs + R->cur.prefill_seqs) / 1e3;
    R->step_dur = gpu + simtime_from_ms(cpu_ms);
    if (L->cpu_step_ms > 0) start_job(R, L->cpu_step_ms, on_before_done);
    else R->step_ev = station_after(&P->st, gpu, on_gpu_end, R, 0);
    return 1;
}

void rep_cpu_cancel(replica *R)
{
    if (!R->cpu_job) return;
    cpu_job_cancel(R->pool->cpun, R->cpu_job);
    R->cpu_job = 0;
}

int llm_cpu_report(const llm *P, pool_result *out)
{
    uint64_t periods = 0;   /* summed over its cgroups: the front end's and its pods' */
    double s = 0;
    for (int i = -1; i < P->nrep; i++) {
        int g = i < 0 ? P->cpu_g : (i % P->dp == 0 ? P->r[i].cpu_g : -1);
        if (g < 0) continue;
        periods += cpu_group_throttled_periods(P->cpun, g);
        s += cpu_group_throttled_s(P->cpun, g);
    }
    int rc = cpu_report(P->cpun, &P->st.cfg->fleet->cpu, periods, s, out);
    if (P->cpu_steps) {
        rc |= pool_result_add(out, "cpu_step_share", P->cpu_steps_ms > 0 ? P->cpu_part_ms / P->cpu_steps_ms : 0);
        rc |= pool_result_add(out, "cpu_step_part_ms", P->cpu_nsteps > 0 ? P->cpu_part_ms / (double) P->cpu_nsteps : 0);
    }
    return rc;
}
