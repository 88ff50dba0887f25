/* llm.c -- the LLM pool kind (llm.h): its row in the kind table, building and
 * destroying a pool of replicas, its measured-window counters and report.
 * The replicas' work is in the files replica.h lists. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "core/catalog.h"
#include "core/result.h"
#include "engine/rng.h"
#include "llm/llm.h"
#include "llm/replica.h"
#include "llm/opshare.h"
#include "llm/engines.h"

static void window_open(station *st)
{
    llm *P = (llm *) st;
    if (P->fl) fleet_window_open(P->fl);
    if (P->cpun) cpu_node_window_open(P->cpun);
    P->window_open = 1;
    P->window_start = evq_now(st->q);
    P->steps = 0;
    P->seqs_in_steps = 0;
    P->kv_area = 0;
    P->kv_peak = 0;
    P->flops = P->bytes = 0;
    if (P->ops) memset(P->ops, 0, OP_N * sizeof *P->ops);   /* opshare.h */
    P->preemptions = 0;
    P->truncated = 0;
    P->off_stored[0] = P->off_stored[1] = 0;
    if (P->link.act) {
        llm_link_account(P);
        kv_link *k = &P->link;
        k->busy_ns = k->sum_ms = k->max_ms = k->wait_ms = k->bytes = 0;
        k->n = k->nstart = 0;
    }
    P->spec_steps = 0;
    P->spec_verifs = P->spec_accepted = P->spec_emitted = P->spec_draft_ms = P->spec_tried = 0;
    P->lora_hits = P->lora_loads = P->lora_waits = 0;
    P->lora_load_total_ms = P->lora_steps_ms = 0;
    P->cpu_part_ms = P->cpu_steps_ms = 0;
    P->cpu_nsteps = 0;
}

static void window_close(station *st)
{
    llm *P = (llm *) st;
    for (int i = 0; i < P->nrep; i++)
        if (P->r[i].stepping) rep_account_step(&P->r[i]);
    llm_link_account(P);
    P->window_open = 0;
    if (P->fl) fleet_window_close(P->fl);
    if (P->cpun) cpu_node_window_close(P->cpun);
}

static int report(station *st, pool_result *out)
{
    llm *P = (llm *) st;
    const llm_cfg *L = P->cfg;
    int gpus = L->replicas * llm_gpus_per_replica(L);
    /* Units of the counters below: the ranks (a replica's dp of them, each tp x pp GPUs). */
    int ranks = L->replicas * llm_ranks(L), rank_gpus = llm_gpus_per_replica(L) / llm_ranks(L);
    double kv_occupancy = 0, mfu = 0, mbu = 0, mfu_busy = 0, mbu_busy = 0;
    double span_ns = out->window_s * 1e9;
    if (span_ns > 0) {
        kv_occupancy = P->kv_area / (span_ns * (double) L->kv_blocks * ranks);
        double span_s = span_ns / 1e9;
        double pf = cost_peak_flops(&L->cost), pb = cost_peak_bw(&L->cost);
        mfu = pf > 0 ? P->flops / (pf * ranks * span_s) : 0;
        mbu = pb > 0 ? P->bytes / (pb * ranks * span_s) : 0;
        /* The same over the replica-seconds spent stepping (the steps' own). */
        double busy_s = (st->busy_area - st->area_at_start) / 1e9;
        mfu_busy = pf > 0 && busy_s > 0 ? P->flops / (pf * busy_s) : 0;
        mbu_busy = pb > 0 && busy_s > 0 ? P->bytes / (pb * busy_s) : 0;
    }
    out->cost_per_hour = gpus * L->gpu.price_hr;
    fleet_result fr = { 0 };
    if (P->fl) {
        /* Paid for: the replica-seconds that ran (starting, up or draining). */
        fleet_results(P->fl, &fr);
        if (out->window_s > 0) out->cost_per_hour = fr.running_s * llm_gpus_per_replica(L) * L->gpu.price_hr / out->window_s;
        double up_ns = fr.up_mean * span_ns;
        out->utilization = up_ns > 0 ? (st->busy_area - st->area_at_start) / up_ns : 0;
    }
    const struct { const char *name; double value; } rows[] = {
        { "replicas", L->replicas },
        { "gpus", gpus },
        { "kv_blocks", (double) L->kv_blocks },
        { "max_seq_len", (double) L->max_seq_len },
        { "steps", (double) P->steps },
        { "mean_batch", P->steps ? P->seqs_in_steps / (double) P->steps : 0 },
        { "kv_occupancy", kv_occupancy },
        { "kv_peak", P->kv_peak },
        { "preemptions", (double) P->preemptions },
        { "truncated", (double) P->truncated },
        { "too_long", (double) P->too_long },
        { "mfu", mfu },
        { "mbu", mbu },
        { "mfu_busy", mfu_busy },
        { "mbu_busy", mbu_busy },
        { "cost_per_hour", out->cost_per_hour },
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        if (pool_result_add(out, rows[i].name, rows[i].value)) return -1;
    if (L->dp > 1 && pool_result_add(out, "dp", L->dp)) return -1;
    if (st->cancelled && pool_result_add(out, "cancelled_prefill_tokens", P->cancelled_tokens)) return -1;   /* patience_s */
    if (P->ops && op_report(P->ops, out)) return -1;   /* op_shares (opshare.h) */   /* ranks per replica; kv_blocks is per rank */
    /* How kv_blocks came about (docs/llm.md, "KV capacity"). */
    if (pool_result_add(out, "kv_gib", L->kv_gib) || pool_result_add_name(out, "kv_blocks_from", L->kv_from)) return -1;
    if (P->fl) {
        const fleet_cfg *fc = st->cfg->fleet;
        int rc = 0;
        rc |= pool_result_add(out, "failed", (double) st->failed);
        rc |= pool_result_add(out, "availability", fr.availability);
        rc |= pool_result_add(out, "replicas_up_mean", fr.up_mean);
        rc |= pool_result_add(out, "replica_seconds", fr.running_s);
        rc |= pool_result_add(out, "cost_usd", fr.running_s * llm_gpus_per_replica(L) * L->gpu.price_hr / 3600.0);
        if (fc->fault.failures) rc |= pool_result_add(out, "failures", (double) fr.failures);
        if (fc->autoscale) {
            rc |= pool_result_add(out, "scale_ups", (double) fr.scale_ups);
            rc |= pool_result_add(out, "scale_downs", (double) fr.scale_downs);
        }
        if (fleet_starts(fc)) rc |= pool_result_add(out, "cold_served", (double) P->cold);
        if (rc) return -1;
    }
    if (P->cpun && llm_cpu_report(P, out) != 0) return -1;   /* the CPU side (cpu.c) */
    if (L->prefix_cache) {
        double n = P->pfx_requests ? (double) P->pfx_requests : NAN;
        uint64_t ev = 0;
        for (int i = 0; i < P->nrep; i++) ev += prefix_get_stats(P->r[i].pc)->evictions;
        int rc = 0;
        rc |= pool_result_add(out, "prefix_hit_rate", P->pfx_prompt > 0 ? P->pfx_found / P->pfx_prompt : NAN);
        rc |= pool_result_add(out, "prefix_request_hit_rate", (double) P->pfx_hit_requests / n);
        rc |= pool_result_add(out, "prefill_tokens_saved", P->pfx_skipped / n);
        rc |= pool_result_add(out, "ttft_saved_ms", P->pfx_saved_ms / n);
        rc |= pool_result_add(out, "prefix_evictions", (double) ev);
        if (rc) return -1;
    }
    if (L->tier[LLM_TIER_CPU].on || L->tier[LLM_TIER_SSD].on) {
        /* Names are kept by pointer (result.h): static strings. */
        static const char *const M[LLM_TIERS][4] = {
            { "kv_offload_cpu_hit_rate", "kv_offload_cpu_request_hit_rate", "kv_offload_cpu_stored", "kv_offload_cpu_blocks" },
            { "kv_offload_ssd_hit_rate", "kv_offload_ssd_request_hit_rate", "kv_offload_ssd_stored", "kv_offload_ssd_blocks" } };
        double pr = P->pfx_prompt > 0 ? P->pfx_prompt : NAN;
        double tot = P->off_gpu_tokens;
        int rc = 0;
        for (int t = 0; t < LLM_TIERS; t++) {
            if (!L->tier[t].on) continue;
            tot += P->off_tokens[t];
            rc |= pool_result_add(out, M[t][0], P->off_tokens[t] / pr);
            rc |= pool_result_add(out, M[t][1], (double) P->off_requests[t] / (P->pfx_requests ? (double) P->pfx_requests : NAN));
            rc |= pool_result_add(out, M[t][2], (double) P->off_stored[t]);
            rc |= pool_result_add(out, M[t][3], (double) L->tier[t].blocks);
        }
        rc |= pool_result_add(out, "kv_offload_gpu_hit_rate", P->off_gpu_tokens / pr);
        rc |= pool_result_add(out, "kv_offload_total_hit_rate", tot / pr);
        rc |= pool_result_add(out, "kv_loads", (double) P->off_loads);
        rc |= pool_result_add(out, "kv_load_ms", P->off_loads ? P->off_load_ms / (double) P->off_loads : NAN);
        if (rc) return -1;
    }
    if (L->role != LLM_ROLE_BOTH &&
        pool_result_add_name(out, "role", L->role == LLM_ROLE_PREFILL ? "prefill" : "decode")) return -1;
    if (L->role == LLM_ROLE_DECODE) {
        const kv_link *k = &P->link;
        double n = k->n ? (double) k->n : NAN, ns = k->nstart ? (double) k->nstart : NAN;
        int rc = 0;
        rc |= pool_result_add(out, "kv_transfers", (double) k->n);
        rc |= pool_result_add(out, "kv_transfer_ms", k->sum_ms / n);
        rc |= pool_result_add(out, "kv_transfer_max_ms", k->n ? k->max_ms : NAN);
        rc |= pool_result_add(out, "kv_link_wait_ms", k->wait_ms / ns);
        rc |= pool_result_add(out, "kv_transfer_mb", k->bytes / ns / 1e6);
        rc |= pool_result_add(out, "kv_link_gbs", L->kv_prof ? NAN : L->kv_link_gbs);   /* NAN: priced by kv_link_profile */
        rc |= pool_result_add(out, "kv_link_utilization", span_ns > 0 ? k->busy_ns / span_ns : NAN);
        if (rc) return -1;
    }
    if (L->spec_method != LLM_SPEC_NONE) {
        /* Speculative decoding: acceptance of the proposals (before the cap at the
         * output length), tokens emitted per verification, share of steps that
         * speculated, drafting time per speculating step. */
        double v = P->spec_verifs, n = (double) P->spec_steps;
        int rc = 0;
        rc |= pool_result_add(out, "spec_acceptance_rate", v > 0 ? P->spec_accepted / (v * L->spec_tokens) : NAN);
        /* accepted / judged: the per-token acceptance, the configured spec_acceptance's estimate */
        rc |= pool_result_add(out, "spec_token_acceptance", P->spec_tried > 0 ? P->spec_accepted / P->spec_tried : NAN);
        rc |= pool_result_add(out, "spec_tokens_per_step", v > 0 ? P->spec_emitted / v : NAN);
        rc |= pool_result_add(out, "spec_verifications", v);
        rc |= pool_result_add(out, "spec_step_share", P->steps ? n / (double) P->steps : NAN);
        rc |= pool_result_add(out, "spec_draft_ms", n > 0 ? P->spec_draft_ms / n : NAN);
        if (rc) return -1;
    }
    if (L->adapters > 0) {
        /* LoRA: admissions that found their adapter resident, loads and their time. */
        double n = (double) (P->lora_hits + P->lora_loads);
        int rc = 0;
        rc |= pool_result_add(out, "lora_hit_rate", n > 0 ? (double) P->lora_hits / n : NAN);
        rc |= pool_result_add(out, "lora_loads", (double) P->lora_loads);
        rc |= pool_result_add(out, "lora_load_ms", P->lora_load_one_ms);
        rc |= pool_result_add(out, "lora_load_s", P->lora_load_total_ms / 1000.0);
        rc |= pool_result_add(out, "lora_waits", (double) P->lora_waits);
        rc |= pool_result_add(out, "lora_compute_s", P->lora_steps_ms / 1000.0);
        rc |= pool_result_add(out, "adapter_mib", L->adapter_bytes / 1048576.0);
        if (rc) return -1;
    }
    /* Which cost model produced the step times (report.c prints them as one object). */
    cost_info ci;
    cost_describe(&L->cost, &ci);
    const cost_ops *row = cost_find(ci.kind);
    const pool_metric cm[] = {
        { "cost_model.kind", NAN, row ? row->name : "" },
        { "cost_model.id", ci.id > 0 ? (double) ci.id : NAN, NULL },
        { "cost_model.source", NAN, cost_source_known(ci.source) },
        { "cost_model.mape", ci.mape, NULL },
        { "cost_model.extrapolated", ci.extrapolated, NULL },
        { "cost_model.range", NAN, ci.range },
        { "cost_model.coefficients", NAN, L->cost_coeffs },
    };
    for (size_t i = 0; i < sizeof cm / sizeof cm[0]; i++)
        if (cm[i].text ? pool_result_add_name(out, cm[i].name, cm[i].text)
                       : pool_result_add(out, cm[i].name, cm[i].value)) return -1;
    /* Energy over the window (power.h): every GPU of a replica draws idle power
     * while the replica is powered (all of them; with fleet keys, its powered
     * seconds: starting, up or draining) and the busy increment while it steps. */
    double busy_s = (st->busy_area - st->area_at_start) / 1e9;
    double powered_s = P->fl ? fr.powered_s : ranks * out->window_s;
    double ej = power_energy_j(&L->gpu, &L->power, rank_gpus, powered_s, busy_s);
    if (!isnan(ej)) {
        out->has_energy = 1;
        out->energy_j = ej;
        if (pool_result_add(out, "energy_kwh", ej / 3.6e6)) return -1;
        if (pool_result_add(out, "mean_power_w", out->window_s > 0 ? ej / out->window_s : 0)) return -1;
    }
    return 0;
}

static void snapshot(const station *st, station_snap *out)
{
    const llm *P = (const llm *) st;
    int64_t free_blocks = 0;
    uint64_t running = 0;
    for (int i = 0; i < P->nrep; i++) {
        free_blocks += P->r[i].free_blocks;
        running += (uint64_t) P->r[i].nrun;
    }
    out->running = running;
    out->kv_free = (double) free_blocks / ((double) P->cfg->kv_blocks * P->nrep);
    if (P->fl) {
        out->capacity = fleet_up(P->fl);
        out->cap_area = fleet_up_area(P->fl);
    }
}

/* Each replica's load: with dp > 1 a replica is its dp consecutive ranks
 * (running and waiting summed, KV blocks pooled); waiting counts the replica's
 * own queues only (an unrouted pool's shared queue belongs to no replica). */
static int replicas(const station *st, station_snap *out, int max)
{
    const llm *P = (const llm *) st;
    int dp = P->dp > 0 ? P->dp : 1, n = P->nrep / dp;
    for (int k = 0; k < n && k < max; k++) {
        station_snap s = { 0 };
        int64_t free_blocks = 0;
        for (int j = k * dp; j < (k + 1) * dp; j++) {
            s.running += (uint64_t) P->r[j].nrun;
            s.waiting += P->r[j].own.len;
            free_blocks += P->r[j].free_blocks;
        }
        s.inside = s.running + s.waiting;
        s.capacity = 1;
        s.cap_area = NAN;
        s.kv_free = (double) free_blocks / ((double) P->cfg->kv_blocks * dp);
        out[k] = s;
    }
    return n;
}

static void destroy(station *st)
{
    llm *P = (llm *) st;
    for (int i = 0; P->r && i < P->nrep; i++) {
        for (request *r = P->r[i].run_head; r; r = seq_of(r)->rnext) {   /* still running at the end */
            free(seq_of(r)->pfx.h);
            seq_of(r)->pfx.h = NULL;
        }
        prefix_free(P->r[i].pc);
        free(P->r[i].pf);
        free(P->r[i].chunk);
        free(P->r[i].heap);
        free(P->r[i].phase_cnt);
        free(P->r[i].ready);
        free(P->r[i].joined);
        free(P->r[i].lora);
        free(P->r[i].ndec_cls);
    }
    free(P->link.act);
    llm_seq_pool_free(&P->seqs);
    llm_offload_free(P);
    fleet_free(P->fl);
    if (P->spec_rng) gsl_rng_free(P->spec_rng);
    if (P->lora_rng) gsl_rng_free(P->lora_rng);
    zipf_free(P->lora_zipf);
    free(P->ids);
    free(P->r);
    free(P->ops);
    free(P->idle);
    free(P->snaps);
    free(P->dirty);
    route_index_free(&P->ix);
    if (P->routed) route_close(&P->rc);
    station_fini(st);
    free(P);
}

/* The prefix cache's first admissions (llm.cs_fill), or -1 without one. */
static int cache_fill(const station *st, double out[3])
{
    const llm *P = (const llm *) st;
    if (!P->cfg->prefix_cache) return -1;
    for (int k = 0; k < 3; k++) out[k] = P->cs_fill[k];
    return 0;
}

static const station_ops LLM_OPS = {
    .arrive = llm_arrive,
    .prefix_match = llm_prefix_match,
    .window_open = window_open,
    .window_close = window_close,
    .snapshot = snapshot,
    .replicas = replicas,
    .report = report,
    .cache_fill = cache_fill,
    .cancel = llm_cancel,
    .leave = llm_leave,
    .destroy = destroy,
};

/* The kind's footprint hook (kind.h): the replicas' records and per-sequence
 * arrays (an autoscaled pool allocates its replicas up to max_replicas). */
static double footprint(scn_ctx *x, const pool_cfg *p, const char **key, char *what, size_t n)
{
    llm_cfg L = *llm_cfg_of(p);
    char sec[80];
    snprintf(sec, sizeof sec, "pool %s", p->name);
    *key = scn_value(x, sec, "replicas") ? "replicas" : "max_batch";
    if (p->fleet && p->fleet->autoscale && p->fleet->as.max_replicas > L.replicas) {
        L.replicas = p->fleet->as.max_replicas;
        *key = "max_replicas";
    }
    snprintf(what, n, "%d replicas with max_batch %d", L.replicas, L.max_batch);
    return llm_footprint(&L);
}

/* 1 when the fleet keys C ask for more than the CPU keys: a fleet controller
 * (replica failures, autoscaling, cold starts, slow replicas, pauses, the
 * contention curve).  The CPU keys alone need none (cpu.c). */
static int fleet_dynamic(const fleet_cfg *c)
{
    return !c->cpu.on || fleet_starts(c) || c->fault.slow_fraction > 0 || c->fault.pauses || c->contention;
}

/* The kind's check_fleet hook (kind.h): host-memory swapping and given weight
 * bytes are generic pools' keys; replica dynamics need one shared queue and a
 * scheduler whose row supports them (LLM_SCHED_FLEET: continuous, chunked);
 * the CPU keys alone need none of that (cpu.c), only work for the CPU. */
static int check_fleet(scn_ctx *x, const char *sec, const pool_cfg *p, const char *const *keys, int n)
{
    for (int i = 0; i < n; i++) {
        if (!strncmp(keys[i], "memory_", 7) || !strcmp(keys[i], "swap_factor"))
            return scn_fail(x, sec, keys[i], "not modelled for kind = llm pools yet (generic pools only)");
        if (!strcmp(keys[i], "servers_per_replica"))   /* cpunode.h: a replica's cgroup runs its engine, not servers */
            return scn_fail(x, sec, keys[i], "not modelled for kind = llm pools (generic pools only)");
        if (!strcmp(keys[i], "weights_gb"))
            return scn_fail(x, sec, keys[i], "an llm pool's weight bytes come from its model, weights and tp");
    }
    const llm_cfg *L = llm_cfg_of(p);
    int cpu_only = 1, kc = -1;   /* the CPU keys alone: no fleet controller, none of its limits (cpu.c) */
    for (int i = 0; i < n; i++) {
        cpu_only &= cpucfg_pool_key(keys[i]);
        if (kc < 0 && cpucfg_pool_key(keys[i])) kc = i;
    }
    if (kc >= 0 && !(L->cpu_tokenize_us_per_token > 0 || L->cpu_step_ms > 0 || L->cpu_sample_us_per_seq > 0))
        return scn_fail(x, sec, keys[kc], "an llm pool's CPU work is its tokenisation and its steps' CPU parts: "
                        "needs cpu_tokenize_us_per_token, cpu_step_ms or cpu_sample_us_per_seq > 0");
    if (cpu_only) return 0;
    int k0 = 0;   /* the first key asking for the fleet controller */
    while (k0 < n && cpucfg_pool_key(keys[k0])) k0++;
    const char *what = "replica failures, autoscaling and cold starts";
    if (L->dp > 1)
        return scn_fail(x, sec, keys[k0], "%s are not modelled with dp > 1 yet", what);
    if (L->role != LLM_ROLE_BOTH)
        return scn_fail(x, sec, keys[k0], "%s are not modelled for disaggregated pools (role = prefill or decode) yet",
                        what);
    if (L->routing || !L->sched || !(L->sched->flags & LLM_SCHED_FLEET)) {
        char names[256];
        llm_sched_names_with(LLM_SCHED_FLEET, names, sizeof names);
        return scn_fail(x, sec, keys[k0], "%s are modelled for scheduler = %s with routing = shared only", what, names);
    }
    return 0;
}

/* The kind's usd_per_hour hook (kind.h): every GPU of every replica. */
static double usd_per_hour(const pool_cfg *p)
{
    const llm_cfg *L = llm_cfg_of(p);
    return (double) L->replicas * llm_gpus_per_replica(L) * L->gpu.price_hr;
}

/* The kind's defaults hook (kind.h): the keys whose defaults set the batches and
 * the KV capacity, the capacity derived and how, and the keys of what the pool
 * turned on (a scheduler that splits prompts, a policy over cached prefixes,
 * offload tiers). */
static void defaults(const pool_cfg *p, const cfg *raw, const char *sec, double requests, FILE *out)
{
    (void) requests;
    const llm_cfg *L = llm_cfg_of(p);
    const station_kind *k = p->kind;
    station_kind_default_line(out, k, raw, sec, "block_tokens", NULL);
    station_kind_default_line(out, k, raw, sec, "scheduler", "how steps are batched (default continuous: what vLLM and SGLang do)");
    for (const scn_key *q = L->sched->keys; (L->sched->flags & LLM_SCHED_SPLITS_PROMPTS) && q && q->key; q++)
        station_kind_default_line(out, k, raw, sec, q->key, NULL);
    static const char *const SHOWN[] = { "max_batch", "max_batch_tokens", "gpu_memory_utilization", "activation_reserve_gib",
                                         "max_seq_len", "engine" };
    for (size_t i = 0; i < sizeof SHOWN / sizeof SHOWN[0]; i++) station_kind_default_line(out, k, raw, sec, SHOWN[i], NULL);
    fprintf(out, "  [%s] kv_blocks = %lld (%s)\n", sec, (long long) L->kv_blocks, L->kv_from);
    if (L->routing && L->routing->uses_prefix) station_kind_default_line(out, k, raw, sec, "affinity_threshold", NULL);
    if (L->tier[LLM_TIER_CPU].on) station_kind_default_line(out, k, raw, sec, "kv_offload_cpu_gib", NULL);
    if (L->tier[LLM_TIER_SSD].on) station_kind_default_line(out, k, raw, sec, "kv_offload_ssd_gib", NULL);
}

/* The kind's key_choices hook (kind.h): the scheduler, engine and routing
 * tables' rows (routing: shared, or a policy that routes over any number of
 * replicas). */
static int key_choices(const char *key, char *buf, size_t n)
{
    if (!strcmp(key, "scheduler")) llm_sched_choices(buf, n);
    else if (!strcmp(key, "engine")) llm_engine_choices(buf, n);
    else if (!strcmp(key, "routing")) {
        size_t len = (size_t) snprintf(buf, n, "shared");
        for (int i = 0; i < route_count() && len < n; i++)
            if (!route_at(i)->uses_complexity) len += (size_t) snprintf(buf + len, n - len, "|%s", route_at(i)->name);
    } else return -1;
    return 0;
}

/* The kind's check_graph hook (kind.h): disaggregated serving that cannot
 * serve a request as configured.  A role = prefill pool's requests must reach,
 * through any pools that pass them on (routers, gateways), role = decode pools
 * only, of the same model; a role = decode pool must be reached from an LLM
 * pool (alone it would prefill the prompts itself: the results of role =
 * both, under another name; behind a role = both pool it passes the finished
 * requests on, pd_disagg.ini's colocated comparison).  Returns 0 or -1. */
static int check_graph(scn_ctx *x, const char *sec, const pool_cfg *pools, int n, int self)
{
    const pool_cfg *p = &pools[self];
    const llm_cfg *L = llm_cfg_of(p);
    if (L->role == LLM_ROLE_BOTH) return 0;
    char sec2[80];
    char *seen = calloc((size_t) n + 1, 1);
    int *stk = calloc((size_t) n + 1, sizeof *stk), rc = 0;
    if (!seen || !stk) { free(seen); free(stk); return scn_fail(x, sec, "role", "out of memory"); }
    if (L->role == LLM_ROLE_PREFILL) {
        int top = 0;
        for (int k = 0; k < p->nnext; k++) if (!seen[p->next[k]]) seen[p->next[k]] = 1, stk[top++] = p->next[k];
        while (top > 0 && !rc) {
            const pool_cfg *q = &pools[stk[--top]];
            snprintf(sec2, sizeof sec2, "pool %s", q->name);
            if (q->kind == p->kind) {
                const llm_cfg *D = llm_cfg_of(q);
                if (D->role != LLM_ROLE_DECODE)
                    rc = scn_fail(x, sec, "next", "a role = prefill pool's requests must go on to a role = decode pool, "
                                  "but they reach [%s] (role = %s), which would prefill them again", sec2,
                                  D->role == LLM_ROLE_PREFILL ? "prefill" : "both");
                else if (strcasecmp(D->model_name, L->model_name))
                    rc = scn_fail(x, sec2, "model", "%s, but its prefill pool [%s] serves %s: a decode pool continues the "
                                  "prefill pool's KV, so both must serve one model", D->model_name, sec, L->model_name);
                continue;
            }
            if (q->nnext == 0)
                rc = scn_fail(x, sec, "next", "a role = prefill pool's requests must go on to a role = decode pool, but they "
                              "end at [%s] (kind = %s), which generates no output tokens", sec2, q->kind->name);
            for (int k = 0; k < q->nnext; k++) if (!seen[q->next[k]]) seen[q->next[k]] = 1, stk[top++] = q->next[k];
        }
    } else {
        /* A decode pool: some LLM pool (not itself decode) leads here, through pools that pass requests on. */
        int reached = 0;
        for (int i = 0; i < n && !reached; i++) {
            if (pools[i].kind != p->kind || llm_cfg_of(&pools[i])->role == LLM_ROLE_DECODE) continue;
            memset(seen, 0, (size_t) n);
            int top = 0;
            for (int k = 0; k < pools[i].nnext; k++) if (!seen[pools[i].next[k]]) seen[pools[i].next[k]] = 1, stk[top++] = pools[i].next[k];
            while (top > 0 && !reached) {
                int j = stk[--top];
                if (j == self) { reached = 1; break; }
                if (pools[j].kind == p->kind) continue;
                for (int k = 0; k < pools[j].nnext; k++) if (!seen[pools[j].next[k]]) seen[pools[j].next[k]] = 1, stk[top++] = pools[j].next[k];
            }
        }
        if (!reached)
            rc = scn_fail(x, sec, "role", "decode: no LLM pool's next leads here, so no prompt's KV would arrive (alone it "
                          "would prefill the prompts itself, as role = both): add a role = prefill pool with next = %s, or "
                          "use role = both", p->name);
    }
    free(seen);
    free(stk);
    return rc;
}

/* The model pool P serves (its catalog entry's name). */
static const char *model_name(const pool_cfg *p) { return ((const llm_cfg *) p->ext)->model.name; }

const station_kind llm_kind = {
    .name = "llm",
    .help = "LLM serving replicas (schedulers, paged KV cache, cost model)",
    .keys = llm_keys,
    .parse = llm_parse,
    .more_keys = llm_more_keys,
    .resolve = llm_resolve,
    .make = llm_new,
    .free_cfg = llm_free_cfg,
    .footprint = footprint,
    .check_fleet = check_fleet,
    .usd_per_hour = usd_per_hour,
    .units_key = "replicas",
    .min_next = 0,
    .max_next = 1,
    .flags = KIND_TOKENS | KIND_FLEET | KIND_EMITS | KIND_DECODES,
    .defaults = defaults,
    .key_choices = key_choices,
    .check_graph = check_graph,
    .model_name = model_name,
};

double llm_footprint(const llm_cfg *L)
{
    const replica *R = NULL;   /* only for sizeof */
    double per = (double) sizeof *R + sizeof R + (double) L->max_batch * (double) (sizeof *R->pf + sizeof *R->chunk + sizeof *R->heap)
                 + (double) L->block_tokens * (double) sizeof *R->phase_cnt
                 + (double) L->adapters * (double) sizeof *R->lora;
    return (double) L->replicas * llm_ranks(L) * per;
}

station *llm_new(const pool_cfg *cfg, const station_env *env)
{
    llm *P = calloc(1, sizeof *P);
    if (!P) return NULL;
    const llm_cfg *L = llm_cfg_of(cfg);
    if (station_init(&P->st, &LLM_OPS, cfg, env) != 0) goto fail;
    P->cfg = L;
    cost_fast_init(&P->cf, &L->cost);
    if (L->op_shares && !(P->ops = calloc(OP_N, sizeof *P->ops))) goto fail;   /* opshare.h */
    P->B = L->block_tokens;
    P->Bmask = P->B > 0 && (P->B & (P->B - 1)) == 0 ? P->B - 1 : -1;
    P->acct = P->st.cls_use && L->gpu.price_hr > 0;
    const fleet_cfg *fc = cfg->fleet;
    P->dp = llm_ranks(L);
    P->lock = llm_dp_lockstep(L);
    /* With dp > 1 (no fleet keys then) each replica is dp ranks, each a replica record. */
    P->nrep = fc && fc->autoscale ? fc->as.max_replicas : L->replicas * P->dp;
    P->st.capacity = L->replicas * P->dp;
    P->st.queue_stat_at_finish = 1;
    P->r = calloc((size_t) P->nrep, sizeof *P->r);
    P->idle = calloc((size_t) P->nrep, sizeof *P->idle);
    if (!P->r || !P->idle) goto fail;
    if (L->routing) {
        char stream[96];
        route_stream_name(stream, sizeof stream, cfg->name);
        P->snaps = calloc((size_t) L->replicas, sizeof *P->snaps);
        if (!P->snaps || route_open(&P->rc, L->routing, L->replicas, rng_stream(env->seed, stream)) != 0) goto fail;
        P->routed = 1;
        if (L->routing->key != ROUTE_KEY_NONE) {
            /* Keys set once the replicas are (below). */
            if (!(P->dirty = calloc((size_t) P->nrep, sizeof *P->dirty)) ||
                route_index_init(&P->ix, L->replicas, 0) != 0)
                goto fail;
            P->ix_key = L->routing->key;
        }
    }
    if (L->spec_method != LLM_SPEC_NONE) {
        char stream[96];
        snprintf(stream, sizeof stream, "pool %s spec", cfg->name);
        if (!(P->spec_rng = rng_stream(env->seed, stream))) goto fail;
    }
    if (L->adapters > 0) {
        char stream[96];
        snprintf(stream, sizeof stream, "pool %s lora", cfg->name);
        if (!(P->lora_rng = rng_stream(env->seed, stream)) ||
            !(P->lora_zipf = zipf_new((size_t) L->adapters, L->adapter_zipf_s)))
            goto fail;
        P->lora_load_one_ms = L->adapter_bytes / (L->lora_load_gbs * 1e9) * 1e3;
        /* Each GPU reads its tp-th share at the roofline's memory efficiency. */
        double bw = L->gpu.mem_bw_gbs * 1e9 * cost_roofline_defaults.memory_eff;
        P->lora_read_ms = bw > 0 ? L->adapter_bytes / L->tp / bw * 1e3 : 0;
    }
    P->check = check_period();
    const tap_set *taps = env->sink ? env->sink->taps : NULL;
    P->itl_run = tap_take(taps, "itl", TAP_RUN);
    P->itl_pool = tap_take(taps, "itl", env->index);
    P->cls_itl = env->nclasses > 0 ? tap_take(taps, "cls_itl", TAP_RUN) : NULL;
    P->cls_pfx = tap_take(taps, "cls_pfx", TAP_RUN);
    P->step = tap_take(taps, "step", TAP_RUN);
    for (int i = 0; i < P->nrep; i++) {
        replica *R = &P->r[i];
        R->pool = P;
        R->index = i;
        R->free_blocks = L->kv_blocks;
        squeue_init(&R->own, &P->st);
        if (P->ix_key == ROUTE_KEY_INSIDE) R->own.timed_out = rep_own_timed_out;
        R->wq = L->routing || P->dp > 1 ? &R->own : &P->st.queue;
        R->pf = calloc((size_t) L->max_batch, sizeof *R->pf);
        R->chunk = calloc((size_t) L->max_batch, sizeof *R->chunk);
        R->heap = calloc((size_t) L->max_batch, sizeof *R->heap);
        R->phase_cnt = calloc((size_t) P->B, sizeof *R->phase_cnt);
        if (!R->pf || !R->chunk || !R->heap || !R->phase_cnt) goto fail;
        lru_init(&R->lora_lru);
        if (L->adapters > 0 && !(R->lora = calloc((size_t) L->adapters, sizeof *R->lora))) goto fail;
        if (P->cls_itl &&
            !(R->ndec_cls = calloc((size_t) env->nclasses, sizeof *R->ndec_cls)))
            goto fail;
        if (L->prefix_cache &&
            !(R->pc = prefix_new((uint64_t) L->kv_blocks, (uint32_t) (L->prefix_id_tokens / L->block_tokens))))
            goto fail;
    }
    if (L->role == LLM_ROLE_DECODE && llm_link_init(P) != 0) goto fail;
    if ((L->tier[LLM_TIER_CPU].on || L->tier[LLM_TIER_SSD].on) && llm_offload_init(P) != 0) goto fail;
    for (int i = 0; P->ix_key != ROUTE_KEY_NONE && i < P->nrep; i++) {
        station_snap s;
        rep_snap(&P->r[i], &s);
        route_index_set(&P->ix, i, route_key(L->routing, &s));
    }
    int up = P->nrep;
    if (fc && fleet_dynamic(fc)) {
        char name[96];
        snprintf(name, sizeof name, "pool %s", cfg->name);
        fleet_units ops = llm_fleet_units(P);
        fleet_cfg f = *fc;
        f.units = L->replicas;
        /* A start loads the weights: each GPU its tp-th share of its stage's, in
         * parallel (the largest stage's with pp > 1). */
        f.weight_bytes = L->model.params * catalog_weight_bytes(L->weights) / L->tp;
        for (int s = 0; L->pp > 1 && s < L->pp; s++) {
            double w = cost_stage_params(&L->cost.hw, s) * catalog_weight_bytes(L->weights) / L->tp;
            if (s == 0 || w > f.weight_bytes) f.weight_bytes = w;
        }
        if (!(P->fl = fleet_new(&f, env->q, env->seed, name, &ops))) goto fail;
        up = fleet_initial_up(P->fl);
        P->st.capacity = P->nrep;
        for (int i = 0; i < P->nrep; i++) {
            P->r[i].down = i >= up;
            P->r[i].since = UINT64_MAX / 2;   /* up at the start: warm */
        }
        if (fc->fault.slow_fraction > 0) {    /* chosen from a stream of their own */
            unsigned char *slow = calloc((size_t) P->nrep, 1);
            if (!slow || fleet_pick_slow(fc, env->seed, cfg->name, P->nrep, slow) != 0) {
                free(slow);
                goto fail;
            }
            for (int i = 0; i < P->nrep; i++) P->r[i].slow = slow[i];
            free(slow);
        }
    }
    if (fc && fc->cpu.on && llm_cpu_init(P, &fc->cpu, env->cpu_nodes) != 0) goto fail;   /* cgroups (cpu.c) */
    /* Idle stack: replica 0 on top, so a lone request goes to replica 0. */
    for (int i = up - 1; i >= 0; i--) llm_idle_push(P, &P->r[i]);
    return &P->st;
fail:
    destroy(&P->st);
    return NULL;
}
