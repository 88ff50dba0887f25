/* llmcfg.c -- an LLM pool's configuration: its keys, the catalog look-up of
 * its model and GPU, and what is derived from them (KV-cache capacity,
 * max_seq_len, the cost model's hardware).  Kept apart from the station
 * (llm.c) so that either can be built and tested without the other. */
#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include "core/kind.h"
#include "engine/simtime.h"
#include "llm/llmcfg.h"
#include "llm/engines.h"
#include "llm/sched.h"
#include "core/route.h"

const scn_key llm_keys[] = {
    { "model", "", "catalog model (required; see latsim catalog)" },
    { "gpu", "", "catalog GPU (required)" },
    { "tp", "1", "tensor-parallel degree: GPUs per pipeline stage (a replica has tp x pp GPUs)" },
    { "pp", "1", "pipeline-parallel stages per replica, the layers split evenly" },
    { "pp_microbatches", "pp", "micro-batches a step is split into across the pipeline stages" },
    { "ep", "1", "expert-parallel degree: each stage's experts sharded over ep of its tp GPUs (divides tp; MoE models); with dp > 1: 1 (experts sliced over the dp x tp GPUs) or dp x tp (vLLM --enable-expert-parallel)" },
    { "dp", "1", "data-parallel attention ranks per replica (vLLM --data-parallel-size, SGLang DP attention): each rank has tp GPUs, its own scheduler, max_batch, max_batch_tokens and kv_blocks; requests go to the rank with the fewest waiting x 4 + running; MoE models step the ranks in lockstep (an idle rank runs a dummy batch) with the experts over the dp x tp GPUs; a replica has dp x tp GPUs" },
    { "expert_imbalance", "1", "routed-token load of the busiest expert-parallel GPU over the mean (uniform routing: 1), scales the experts' compute when ep > 1" },
    { "replicas", "1", "replicas in the pool" },
    { "scheduler", "continuous", "a row of the scheduler table: {choices}; each one's own keys are listed below" },
    { "max_batch", "256", "max sequences in a batch (default 256: vLLM's max_num_seqs)" },
    { "max_batch_tokens", "8192", "max tokens per forward step (static/dynamic: of the padded prefill) (default 8192: vLLM V1's max_num_batched_tokens for its API server)" },
    { "weights", "model's", "weight precision: bf16 | fp16 | fp8 | int8 | int4 | fp4 (default: the catalog model's)" },
    { "kv_dtype", "bf16", "KV-cache precision: bf16 | fp16 | fp8" },
    { "gpu_memory_utilization", "0.9", "share of GPU memory the server uses; what weights and activations leave of it is KV cache (default 0.9: vLLM's gpu_memory_utilization)" },
    { "activation_reserve_gib", "profiled", "per-GPU peak activations taken out of the KV budget, GiB; profiled: as vLLM's profiling pass, the larger of a forward pass over the largest step's tokens and the sampler over min(max_batch, those tokens) rows of the vocabulary" },
    { "non_torch_gib", "0.13", "per-GPU memory outside torch's allocator taken out of the KV budget (CUDA context growth, cuBLAS, NCCL), GiB (default: 0.13 for an engine on one GPU, 0.55 when it spans several, tp x pp > 1, or its DP ranks share MoE layers: vLLM's logged non-torch memory)" },
    { "cuda_graph_gib", "0", "per-GPU CUDA graph pool taken out of the KV budget, GiB (default 0: vLLM before 0.21 captures its graphs after sizing the KV cache; set vLLM 0.21+'s logged estimate)" },
    { "kv_blocks", "derived", "KV blocks per replica (per DP rank with dp > 1); derived: gpu_memory_utilization x the GPU's usable memory - weights - activation_reserve_gib - non_torch_gib - cuda_graph_gib, in blocks (as vLLM sizes it); a number overrides the derivation" },
    { "block_tokens", "16", "tokens per KV block: KV capacity is rounded to it, a prefix cache reuses whole blocks (default 16: vLLM's block size on GPUs)" },
    { "max_seq_len", "model context", "cap on prompt + output tokens per request (also capped by KV capacity; default: the model's context length, as vLLM's max_model_len)" },
    { "truncate", "no", "yes: cut over-long prompts to fit max_seq_len; no: reject those requests" },
    { "op_shares", "no", "yes: report the steps' time by operator over the run (op_share_attention_decode, ...: "
                         "docs/llm.md, \"Time by operator\"; issue 35)" },
    { "request_overhead_ms", "0", "front-end work per request (tokenise, schedule) before queueing" },
    { "cpu_tokenize_us_per_token", "0", "CPU time to tokenise one prompt token, us: a CPU job of prompt x this in the "
                                         "front end's cgroup (cpu_limit_cores, cpu_request_cores, node: fleet/cpunode.h) "
                                         "before the request queues; needs one of those keys" },
    { "cpu_step_ms", "0", "CPU time of each step of a replica before its GPU part (scheduling, preparing the inputs), ms: "
                          "a CPU job in the replica's cgroup (cpu_limit_cores, cpu_request_cores, node), serial with the "
                          "GPU, so a throttled or shared CPU stretches the step; framework overhead" },
    { "cpu_sample_us_per_seq", "0", "CPU time after each step's GPU part per sequence in the step (sampling, "
                                    "detokenising and streaming its token), us: a CPU job in the replica's cgroup, "
                                    "as cpu_step_ms" },
    { "routing", "shared", "{choices}; shared: one queue feeds idle replicas; else a routing policy over per-replica queues" },
    { "affinity_threshold", "0.5", "prefix_affinity: a cached prefix counts only when it covers at least this share of the prompt blocks, else the least loaded target is chosen (as the cache_threshold of SGLang router, default 0.5)" },
    { "prefix_cache", "no", "yes: each replica keeps prompts' KV blocks, keyed by content, for requests sharing a prefix" },
    { "power_curve", "linear", "board power per GPU against busy share: \"u:w, u:w, ...\" (W, interpolated linearly), or csv(FILE) of measured samples (columns utilization 0..1, watts, optional gpu; averaged in bins of 0.05), or calib: the power samples stored for the pool's GPU (latsim calib import power; binned the same way, made non-decreasing); default: the GPU's idle_w + (max_w - idle_w) x busy share" },
    { "role", "both", "disaggregated serving: both (prefill and decode here) | prefill (prefill and first token, then next = the decode pool or a router over several) | decode (takes prefilled requests once their KV has crossed the link)" },
    { "kv_link", "ib-ndr", "role = decode: the link the prompts' KV arrives over, a preset: nvlink (450 GB/s, 0.001 ms) | ib-ndr (50 GB/s, 0.002 ms) | 100gbe (12.5 GB/s, 0.01 ms)" },
    { "kv_link_gbs", "preset's", "role = decode: KV link bandwidth between a prefill and a decode replica, GB/s (overrides kv_link's)" },
    { "kv_link_latency_ms", "preset's", "role = decode: fixed latency of each KV transfer, ms (overrides kv_link's)" },
    { "kv_link_profile", "none", "role = decode: price each KV transfer by a stored send/recv profile instead: the gpu name it is stored under in the calibration database (--db / [sim] cost_db), e.g. a Vidur network cluster h100_dgx (latsim calib import vidur); replaces kv_link, kv_link_gbs and kv_link_latency_ms" },
    { "kv_link_profile_dpn", "1", "role = decode: the Vidur devices_per_node of the profile's rows: 1 the two GPUs on different nodes, 2 on one node (ignored for nccl-tests rows)" },
    { "kv_link_streams", "4", "role = decode: transfers in flight at once, sharing the bandwidth equally; later ones wait FIFO" },
    { "kv_offload", "none", "prefix_cache = yes: where KV blocks evicted from the GPU go, to be loaded back on a later hit: none | cpu | ssd | cpu,ssd (the CPU tier's evictions go to the SSD)" },
    { "kv_offload_cpu_gib", "64", "kv_offload: the CPU tier's capacity per replica (per pool when shared), GiB" },
    { "kv_offload_cpu_gbs", "25", "kv_offload: CPU -> GPU load bandwidth, GB/s (PCIe 5.0 x16: 64 GB/s peak)" },
    { "kv_offload_cpu_latency_ms", "0.01", "kv_offload: fixed latency of a load from the CPU tier, ms" },
    { "kv_offload_ssd_gib", "1024", "kv_offload: the SSD tier's capacity per replica (per pool when shared), GiB" },
    { "kv_offload_ssd_gbs", "6", "kv_offload: SSD -> GPU load bandwidth, GB/s (a PCIe 4.0 NVMe drive: 7 GB/s sequential read)" },
    { "kv_offload_ssd_latency_ms", "0.1", "kv_offload: fixed latency of a load from the SSD tier, ms" },
    { "kv_offload_shared", "no", "kv_offload: yes: the pool's replicas share one set of tiers (LMCache-style), no: each replica has its own" },
    { "engine", "vllm", "serving engine: {choices} (the learned cost model's efficiencies are per engine; generic: the cross-engine mean)" },
    { "cost", "auto", "step-time model: a row of the cost-model table (latsim keys lists each with its keys)" },
    { "step_time_scale", "1", "factor on every step time the cost model gives (a what-if; the prediction band runs at both ends of its cost model's error: docs/bands.md)" },
    { "spec_method", "none", "speculative decoding: none | draft (a draft model) | mtp (multi-token-prediction heads) | ngram (prompt lookup, no GPU cost)" },
    { "spec_tokens", "4", "speculative decoding: tokens k proposed per sequence per step (a step verifies k + 1)" },
    { "spec_acceptance", "0.7", "speculative decoding: probability a that each proposed token is accepted (a [class NAME]'s spec_acceptance wins); tokens per step (1 - a^(k+1)) / (1 - a)" },
    { "draft_model", "", "spec_method = draft: catalog model proposing the tokens, on the same GPUs (its weights and KV take memory; its k passes priced by the roofline)" },
    { "spec_max_batch", "max_batch", "speculative decoding: off in a step whose running sequences exceed this (vLLM's disable-by-batch-size)" },
    { "adapters", "0", "LoRA: distinct adapters the pool's requests use (0: none, the base model only)" },
    { "adapter_rank", "16", "LoRA: rank r of every adapter (its bytes: r x (in + out) x 2 per target matrix per layer)" },
    { "adapter_targets", "attention", "LoRA: matrices adapted: attention (q, k, v, o) | all (q, k, v, o, gate, up, down)" },
    { "adapter_zipf_s", "1", "LoRA: Zipf exponent of adapter popularity for requests whose [class NAME] names no adapter" },
    { "max_loras", "1", "LoRA: adapters resident per replica, and distinct adapters in one batch (vLLM max_loras)" },
    { "lora_load_gbs", "25", "LoRA: bandwidth an adapter that is not resident loads at, GB/s (PCIe 4.0 x16 host-to-GPU, about 25 GB/s)" },
    { "lora_step_overhead_ms", "2", "LoRA: added to every step that runs an adapter, ms (Punica, arXiv 2310.18547: about 2 ms per token); each distinct adapter also reads its weights" },
    { "lora_max_wait_ms", "0", "LoRA: a request passed over this long for want of an adapter slot stops those behind it from joining, so the batch drains and it gets the next slot (as SGLang's LoRA draining); 0: no limit, requests whose adapter is in the batch keep passing (vLLM)" },
    { NULL, NULL, NULL },
};

/* The iteration-level schedulers ("continuous or chunked") in BUF (N bytes), for messages. */
static const char *iteration_level(char *buf, size_t n)
{
    llm_sched_names_without(LLM_SCHED_BATCHES, buf, n);
    return buf;
}

/* Speculative decoding keys of [SEC] into L; with classes, each [class NAME]'s
 * spec_acceptance (default the pool's), indexed as the workload numbers its
 * classes (their sections in file order).  Returns 0 or -1 (error set). */
static int parse_spec(scn_ctx *x, const char *sec, llm_cfg *l)
{
    if (scn_enum(x, sec, "spec_method", "none|draft|mtp|ngram", 0, &l->spec_method)) return -1;
    if (scn_int(x, sec, "spec_tokens", 4, 1, 64, &l->spec_tokens)) return -1;
    if (scn_num(x, sec, "spec_acceptance", 0.7, 0, 0, 1, &l->spec_acceptance)) return -1;
    if (scn_int(x, sec, "spec_max_batch", l->max_batch, 0, 1000000, &l->spec_max_batch)) return -1;
    if (scn_str(x, sec, "draft_model", "", l->draft_name, sizeof l->draft_name)) return -1;
    if (l->spec_method == LLM_SPEC_NONE) return 0;
    if (l->spec_method == LLM_SPEC_DRAFT && !l->draft_name[0])
        return scn_fail_sec(x, sec, "draft_model", "missing (required for spec_method = draft; see latsim catalog)");
    /* draft_model may stay in the file with another method (ignored), so --set can switch. */
    char names[256];
    if (l->sched->flags & LLM_SCHED_BATCHES)
        return scn_fail(x, sec, "spec_method", "needs an iteration-level scheduler (%s), not %s",
                        iteration_level(names, sizeof names), llm_sched_name(l->sched));
    int n = 0;
    for (size_t i = 0; i < x->raw->ns; i++) n += !strncmp(x->raw->s[i].name, "class ", 6);
    if (n == 0) return 0;
    if (!(l->spec_accept_cls = calloc((size_t) n, sizeof *l->spec_accept_cls)))
        return scn_fail_sec(x, sec, NULL, "out of memory");
    for (size_t i = 0; i < x->raw->ns; i++) {
        const char *c = x->raw->s[i].name;
        if (strncmp(c, "class ", 6)) continue;
        if (scn_num(x, c, "spec_acceptance", l->spec_acceptance, 0, 0, 1, &l->spec_accept_cls[l->spec_ncls++]))
            return -1;
    }
    return 0;
}

/* LoRA keys of [SEC] into L; with classes, each [class NAME]'s adapter (1..N,
 * 0: the base model; absent: drawn), in the workload's class order.  Returns 0
 * or -1 (error set). */
static int parse_lora(scn_ctx *x, const char *sec, llm_cfg *l)
{
    if (scn_int(x, sec, "adapters", 0, 0, 1000000, &l->adapters)) return -1;
    if (scn_int(x, sec, "adapter_rank", 16, 1, 4096, &l->adapter_rank)) return -1;
    if (scn_enum(x, sec, "adapter_targets", "attention|all", 0, &l->adapter_all)) return -1;
    if (scn_num(x, sec, "adapter_zipf_s", 1, 0, 1, 100, &l->adapter_zipf_s)) return -1;
    if (scn_int(x, sec, "max_loras", 1, 1, 1000000, &l->max_loras)) return -1;
    if (scn_num(x, sec, "lora_load_gbs", 25, 0, 1, 1e6, &l->lora_load_gbs)) return -1;
    if (scn_num(x, sec, "lora_step_overhead_ms", 2, 0, 0, 1e6, &l->lora_step_overhead_ms)) return -1;
    if (scn_num(x, sec, "lora_max_wait_ms", 0, 0, 0, 1e9, &l->lora_max_wait_ms)) return -1;
    if (l->adapters == 0) return 0;
    char names[256];
    if (l->sched->flags & LLM_SCHED_BATCHES)
        return scn_fail(x, sec, "adapters", "needs an iteration-level scheduler (%s), not %s",
                        iteration_level(names, sizeof names), llm_sched_name(l->sched));
    int n = 0;
    for (size_t i = 0; i < x->raw->ns; i++) n += !strncmp(x->raw->s[i].name, "class ", 6);
    if (n == 0) return 0;
    if (!(l->adapter_cls = calloc((size_t) n, sizeof *l->adapter_cls))) return scn_fail_sec(x, sec, NULL, "out of memory");
    for (size_t i = 0; i < x->raw->ns; i++) {
        const char *c = x->raw->s[i].name;
        if (strncmp(c, "class ", 6)) continue;
        int a = -1;
        if (scn_value(x, c, "adapter") && scn_int(x, c, "adapter", 0, 0, l->adapters, &a)) return -1;
        l->adapter_cls[l->adapter_ncls++] = a < 0 ? -2 : a - 1;   /* -2: drawn, -1: the base model */
    }
    return 0;
}

double llm_adapter_bytes(const llm_cfg *l)
{
    const model_spec *m = &l->model;
    double q = (double) m->heads * m->head_dim, kv = (double) m->kv_heads * m->head_dim, h = m->hidden;
    double io = (h + q) + 2 * (h + kv) + (q + h);          /* q, k, v, o: in + out */
    if (l->adapter_all) io += 3.0 * (h + m->intermediate);  /* gate, up, down */
    return (double) m->layers * l->adapter_rank * io * 2.0;  /* A and B in bf16 */
}

int llm_parse(scn_ctx *x, const char *sec, pool_cfg *p)
{
    llm_cfg *l = calloc(1, sizeof *l);
    if (!l) return scn_fail_sec(x, sec, NULL, "out of memory");
    p->ext = l;
    if (!scn_value(x, sec, "model")) return scn_fail_sec(x, sec, "model", "missing (required for kind = llm; see latsim catalog)");
    if (!scn_value(x, sec, "gpu")) return scn_fail_sec(x, sec, "gpu", "missing (required for kind = llm; see latsim catalog)");
    if (scn_str(x, sec, "model", "", l->model_name, sizeof l->model_name)) return -1;
    if (scn_str(x, sec, "gpu", "", l->gpu_name, sizeof l->gpu_name)) return -1;
    if (scn_int(x, sec, "tp", 1, 1, 64, &l->tp)) return -1;
    if (scn_int(x, sec, "pp", 1, 1, 1024, &l->pp)) return -1;
    if (scn_int(x, sec, "pp_microbatches", l->pp, 1, 1024, &l->pp_microbatches)) return -1;
    if (scn_int(x, sec, "ep", 1, 1, 4096, &l->ep)) return -1;
    if (scn_int(x, sec, "dp", 1, 1, 1024, &l->dp)) return -1;
    if (scn_num(x, sec, "expert_imbalance", 1, 1, 0, 1e6, &l->expert_imbalance)) return -1;
    if (scn_int(x, sec, "replicas", 1, 1, 1000000, &l->replicas)) return -1;
    p->units = l->replicas;
    int k;
    char scheds[256];
    llm_sched_choices(scheds, sizeof scheds);
    if (scn_enum(x, sec, "scheduler", scheds, llm_sched_index(&llm_sched_continuous), &k)) return -1;
    l->sched = llm_sched_at(k);
    /* Its own keys; the other schedulers' keys may stay in the file (ignored), so --set can switch. */
    if (l->sched->parse && l->sched->parse(x, sec, l)) return -1;
    if (scn_int(x, sec, "max_batch", 256, 1, 1000000, &l->max_batch)) return -1;
    if (scn_i64(x, sec, "max_batch_tokens", 8192, 1, INT64_MAX, &l->max_batch_tokens)) return -1;
    l->weights_given = scn_value(x, sec, "weights") != NULL;
    if (scn_enum(x, sec, "weights", "bf16|fp16|fp8|int8|int4|fp4", 0, &k)) return -1;
    static const char *W[] = { "bf16", "fp16", "fp8", "int8", "int4", "fp4" };
    snprintf(l->weights, sizeof l->weights, "%s", W[k]);
    if (scn_enum(x, sec, "kv_dtype", "bf16|fp16|fp8", 0, &k)) return -1;
    snprintf(l->kv_dtype, sizeof l->kv_dtype, "%s", W[k]);
    char engines[256];
    llm_engine_choices(engines, sizeof engines);
    if (scn_enum(x, sec, "engine", engines, 0, &k)) return -1;
    snprintf(l->engine, sizeof l->engine, "%s", llm_engine_at(k)->name);
    if (scn_num(x, sec, "gpu_memory_utilization", 0.9, 0, 1, 1.0, &l->mem_util)) return -1;
    {
        /* "profiled" / "derived" (the listed defaults) or numbers that override them. */
        const char *v = scn_value(x, sec, "activation_reserve_gib");
        l->activation_given = v && strcasecmp(v, "profiled") != 0;
        if (l->activation_given && scn_num(x, sec, "activation_reserve_gib", 0, 0, 0, 1e6, &l->activation_gib))
            return -1;
        l->non_torch_given = scn_value(x, sec, "non_torch_gib") != NULL;   /* else by the GPUs (llm_derive) */
        if (l->non_torch_given && scn_num(x, sec, "non_torch_gib", 0, 0, 0, 1e6, &l->non_torch_gib)) return -1;
        if (scn_num(x, sec, "cuda_graph_gib", 0, 0, 0, 1e6, &l->cuda_graph_gib)) return -1;
        v = scn_value(x, sec, "kv_blocks");
        l->kv_blocks_given = v && strcasecmp(v, "derived") != 0;
        if (l->kv_blocks_given && scn_i64(x, sec, "kv_blocks", 0, 1, 1000000000000LL, &l->kv_blocks)) return -1;
    }
    if (scn_int(x, sec, "block_tokens", 16, 1, 1 << 20, &l->block_tokens)) return -1;
    l->max_seq_len_given = scn_value(x, sec, "max_seq_len") != NULL;
    if (scn_i64(x, sec, "max_seq_len", 0, 2, 1000000000, &l->max_seq_len)) return -1;
    if (scn_bool(x, sec, "truncate", 0, &l->truncate)) return -1;
    if (scn_bool(x, sec, "op_shares", 0, &l->op_shares)) return -1;   /* opshare.h (issue 35) */
    if (scn_num(x, sec, "request_overhead_ms", 0, 0, 0, 1e12, &l->request_overhead_ms)) return -1;
    if (scn_num(x, sec, "cpu_tokenize_us_per_token", 0, 0, 0, 1e9, &l->cpu_tokenize_us_per_token)) return -1;
    if (scn_num(x, sec, "cpu_step_ms", 0, 0, 0, 1e9, &l->cpu_step_ms)) return -1;   /* cpu.c */
    if (scn_num(x, sec, "cpu_sample_us_per_seq", 0, 0, 0, 1e9, &l->cpu_sample_us_per_seq)) return -1;
    static const char *const CPU_WORK[] = { "cpu_tokenize_us_per_token", "cpu_step_ms", "cpu_sample_us_per_seq" };
    for (size_t i = 0; i < sizeof CPU_WORK / sizeof CPU_WORK[0]; i++)
        if (scn_value(x, sec, CPU_WORK[i]) && !scn_value(x, sec, "cpu_limit_cores") &&
            !scn_value(x, sec, "cpu_request_cores") && !scn_value(x, sec, "node"))   /* cpunode.h */
            return scn_fail(x, sec, CPU_WORK[i], "needs cpu_limit_cores, cpu_request_cores or node "
                            "(the CPU it runs on)%s", i == 0 ? "; a fixed delay is request_overhead_ms" : "");
    char choices[256] = "shared|";
    route_choices(choices + strlen(choices), sizeof choices - strlen(choices));
    if (scn_enum(x, sec, "routing", choices, 0, &k)) return -1;
    l->routing = k == 0 ? NULL : route_at(k - 1);
    if (scn_bool(x, sec, "prefix_cache", 0, &l->prefix_cache)) return -1;
    if (scn_num(x, sec, "step_time_scale", 1, 0, 1, 1e6, &l->step_time_scale)) return -1;
    if (scn_num(x, sec, "affinity_threshold", 0.5, 0, 0, 1, &l->affinity_threshold)) return -1;
    if (l->prefix_cache && !(l->sched->flags & LLM_SCHED_PREFIX_CACHE)) {
        char names[256];
        llm_sched_names_with(LLM_SCHED_PREFIX_CACHE, names, sizeof names);
        return scn_fail(x, sec, "prefix_cache", "needs an iteration-level scheduler (%s), not %s", names,
                        llm_sched_name(l->sched));
    }
    if (scn_enum(x, sec, "kv_offload", "none|cpu|ssd|cpu,ssd", 0, &k)) return -1;
    l->tier[LLM_TIER_CPU].on = k == 1 || k == 3;
    l->tier[LLM_TIER_SSD].on = k == 2 || k == 3;
    if (k && !l->prefix_cache) return scn_fail(x, sec, "kv_offload", "offloads the prefix cache's blocks: needs prefix_cache = yes");
    {
        static const char *const TK[LLM_TIERS][3] = {
            { "kv_offload_cpu_gib", "kv_offload_cpu_gbs", "kv_offload_cpu_latency_ms" },
            { "kv_offload_ssd_gib", "kv_offload_ssd_gbs", "kv_offload_ssd_latency_ms" } };
        static const double DEF[LLM_TIERS][3] = { { 64, 25, 0.01 }, { 1024, 6, 0.1 } };
        /* A tier's keys may stay in the file when kv_offload leaves it out (ignored), so --set can switch. */
        for (int t = 0; t < LLM_TIERS; t++) {
            if (scn_num(x, sec, TK[t][0], DEF[t][0], 0, 1, 1e12, &l->tier[t].gib)) return -1;
            if (scn_num(x, sec, TK[t][1], DEF[t][1], 0, 1, 1e9, &l->tier[t].gbs)) return -1;
            if (scn_num(x, sec, TK[t][2], DEF[t][2], 0, 0, 1e9, &l->tier[t].latency_ms)) return -1;
        }
        if (scn_bool(x, sec, "kv_offload_shared", 0, &l->kv_offload_shared)) return -1;
        if (!k) l->kv_offload_shared = 0;   /* no tier to share (the key may stay, for --set) */
    }
    if (scn_enum(x, sec, "role", "both|prefill|decode", 0, &l->role)) return -1;
    if (l->role != LLM_ROLE_BOTH && !(l->sched->flags & LLM_SCHED_PREFIX_CACHE)) {
        char names[256];
        llm_sched_names_with(LLM_SCHED_PREFIX_CACHE, names, sizeof names);
        return scn_fail(x, sec, "role", "disaggregated serving needs an iteration-level scheduler (%s), not %s", names,
                        llm_sched_name(l->sched));
    }
    if (l->role == LLM_ROLE_DECODE && l->prefix_cache)
        return scn_fail(x, sec, "prefix_cache", "a role = decode pool receives each prompt's KV: its prefix cache is the prefill pool's");
    {
        /* Link presets: NVLink 4 on H100 (450 GB/s per direction), InfiniBand NDR
         * (400 Gb/s = 50 GB/s), 100 GbE (12.5 GB/s); docs/llm.md cites them. */
        static const double GBS[] = { 450.0, 50.0, 12.5 }, LAT[] = { 0.001, 0.002, 0.01 };
        static const char *const LINK_KEYS[] = { "kv_link", "kv_link_gbs", "kv_link_latency_ms", "kv_link_streams",
                                                 "kv_link_profile", "kv_link_profile_dpn" };
        for (int i = 0; l->role != LLM_ROLE_DECODE && i < 6; i++)
            if (scn_value(x, sec, LINK_KEYS[i]))
                return scn_fail(x, sec, LINK_KEYS[i], "only for role = decode pools (the link their KV arrives over)");
        if (scn_str(x, sec, "kv_link_profile", "none", l->kv_link_profile, sizeof l->kv_link_profile)) return -1;
        if (!strcmp(l->kv_link_profile, "none")) l->kv_link_profile[0] = '\0';
        for (int i = 0; l->kv_link_profile[0] && i < 3; i++)
            if (scn_value(x, sec, LINK_KEYS[i]))
                return scn_fail(x, sec, LINK_KEYS[i], "kv_link_profile prices the transfers: drop %s", LINK_KEYS[i]);
        if (scn_int(x, sec, "kv_link_profile_dpn", 1, 1, 64, &l->kv_link_profile_dpn)) return -1;
        if (scn_enum(x, sec, "kv_link", "nvlink|ib-ndr|100gbe", 1, &k)) return -1;
        if (scn_num(x, sec, "kv_link_gbs", GBS[k], 0, 1, 1e9, &l->kv_link_gbs)) return -1;
        if (scn_num(x, sec, "kv_link_latency_ms", LAT[k], 0, 0, 1e9, &l->kv_link_latency_ms)) return -1;
        if (scn_int(x, sec, "kv_link_streams", 4, 1, 1 << 20, &l->kv_link_streams)) return -1;
    }
    if (l->routing && l->routing->uses_complexity)
        return scn_fail(x, sec, "routing", "%s routes between two models: use a router with two next pools", l->routing->name);

    if (scn_value(x, sec, "power_curve")) {
        char pc[1024], msg[1024];
        if (scn_str(x, sec, "power_curve", "", pc, sizeof pc)) return -1;
        size_t n = strlen(pc);
        if (!strncmp(pc, "csv(", 4) && n > 5 && pc[n - 1] == ')') {   /* measured samples (power.h) */
            char file[1024];
            snprintf(file, sizeof file, "%.*s", (int) (n - 5), pc + 4);
            if (power_curve_load(file, x->raw->dir, l->gpu_name, &l->power, msg, sizeof msg))
                return scn_fail(x, sec, "power_curve", "%s", msg);
        } else if (!strcmp(pc, "calib")) {
            memset(&l->power, 0, sizeof l->power);
            l->power.from_db = 1;   /* the stored samples of the pool's GPU, read by llm_resolve */
        } else if (strcmp(pc, "linear") && power_curve_parse(pc, &l->power, msg, sizeof msg))
            return scn_fail(x, sec, "power_curve", "%s", msg);
    }
    if (l->dp > 1) {
        /* What dp ranks are not modelled with (yet): each is refused at its key. */
        char names[256];
        if (l->sched->flags & LLM_SCHED_BATCHES)
            return scn_fail(x, sec, "dp", "data-parallel ranks need an iteration-level scheduler (%s), not %s",
                            iteration_level(names, sizeof names), llm_sched_name(l->sched));
        if (l->routing)
            return scn_fail(x, sec, "routing", "with dp > 1 the pool's balancer assigns every request to a rank (fewest "
                            "waiting x 4 + running): routing = shared only");
        if (l->pp > 1) return scn_fail(x, sec, "pp", "pipeline stages with dp > 1 are not modelled yet");
        if (l->role != LLM_ROLE_BOTH) return scn_fail(x, sec, "role", "disaggregated pools with dp > 1 are not modelled yet");
    }
    if (parse_spec(x, sec, l)) return -1;
    if (parse_lora(x, sec, l)) return -1;

    /* The other models' keys may stay in the file (ignored), so --set can switch. */
    char models[256];
    cost_choices(models, sizeof models);
    /* The default is auto once calib has registered it (cost_default). */
    if (scn_enum(x, sec, "cost", models, cost_row_index(cost_default()), &k)) return -1;
    l->cost.ops = cost_row_at(k);
    if (l->cost.ops->parse && l->cost.ops->parse(&l->cost, x, sec)) return -1;
    return 0;
}

/* ---- derivation ------------------------------------------------------------ */

double llm_kv_bytes_per_token(const llm_cfg *l)
{
    double b = (!strcmp(l->kv_dtype, "fp8")) ? 1.0 : 2.0;
    if (l->pp > 1 || l->model.kv_lora_rank > 0) {
        cost_hw h = { .model = l->model, .tp = l->tp, .pp = l->pp };
        return cost_stage_kv_elems(&h, 0) * b;
    }
    int kvh = l->model.kv_heads >= l->tp ? l->model.kv_heads / l->tp : 1;
    return 2.0 * l->model.layers * kvh * l->model.head_dim * b;
}

double llm_profile_activation_gib(const llm_cfg *l)
{
    const model_spec *m = &l->model;
    int64_t T = l->sched && l->sched->step_tokens ? l->sched->step_tokens(l) : l->max_batch_tokens;
    double rows = (double) (l->max_batch < T ? l->max_batch : T);
    /* Sampler: full-vocabulary logits on every rank (vLLM gathers them to all),
     * beside the pass's hidden states (bf16). */
    double sampler = rows * m->vocab * LLM_SAMPLER_BYTES + (double) T * m->hidden * 2.0;
    /* Forward: per token, the residual and the normed input (2 x hidden) and the
     * widest layer output: the gated MLP's gate/up and activation (3 x
     * intermediate / tp), or the fused MoE's per-expert caches (k x (3 x
     * moe_intermediate, sliced tp ways without ep, + hidden)); bf16. */
    double mlp = 3.0 * m->intermediate / l->tp;
    if (m->experts > 0) {
        double moe = m->experts_per_token * (3.0 * m->moe_intermediate / (l->ep > 1 ? 1 : l->tp) + m->hidden);
        if (moe > mlp) mlp = moe;
    }
    double forward = (double) T * (2.0 * m->hidden + mlp) * 2.0;
    return (sampler > forward ? sampler : forward) / 1073741824.0;
}

/* Fills the cost model's hardware from L (its model, GPU, parallelism, precisions). */
static void fill_hw(llm_cfg *l)
{
    cost_hw *c = &l->cost.hw;
    c->have_hw = 1;
    c->gpu = l->gpu;
    c->model = l->model;
    c->tp = l->tp;
    c->pp = l->pp;
    c->ep = l->ep;
    c->dp = llm_dp_lockstep(l) ? l->dp : 1;   /* dense ranks are independent replicas to the cost model */
    c->pp_microbatches = l->pp_microbatches;
    c->expert_imbalance = l->expert_imbalance;
    c->kv_bytes = (!strcmp(l->kv_dtype, "fp8")) ? 1.0 : 2.0;
    cost_hw_set_weights(c, l->weights);
    snprintf(c->engine, sizeof c->engine, "%s", l->engine);
}

/* Checks L's pipeline and expert parallelism against its model and GPU.
 * Returns 0, or -1 with ERR and *KEY. */
static int check_parallel(const llm_cfg *l, const char **key, char *err, size_t errlen)
{
    const model_spec *m = &l->model;
    if (l->pp > m->layers) {
        *key = "pp";
        snprintf(err, errlen, "pp = %d stages exceed %s's %d layers", l->pp, m->name, m->layers);
        return -1;
    }
    if (l->dp > 1 && l->ep > 1 && l->ep != l->dp * l->tp) {
        *key = "ep";
        snprintf(err, errlen, "ep = %d with dp = %d and tp = %d: the experts are sharded over all dp x tp = %d GPUs "
                 "(vLLM --enable-expert-parallel) or sliced over them (ep = 1)", l->ep, l->dp, l->tp, l->dp * l->tp);
        return -1;
    }
    if (l->dp == 1 && l->tp % l->ep != 0) {
        *key = "ep";
        snprintf(err, errlen, "ep = %d does not divide tp = %d (the experts of a stage are sharded over ep of its "
                 "tp GPUs)", l->ep, l->tp);
        return -1;
    }
    if (l->ep > 1 && m->experts <= 0) {
        *key = "ep";
        snprintf(err, errlen, "ep = %d needs a mixture-of-experts model, and %s is dense", l->ep, m->name);
        return -1;
    }
    if (l->ep > 1 && m->experts % l->ep != 0) {
        *key = "ep";
        snprintf(err, errlen, "ep = %d does not divide %s's %d experts", l->ep, m->name, m->experts);
        return -1;
    }
    if (llm_dp_lockstep(l) && (l->cpu_step_ms > 0 || l->cpu_sample_us_per_seq > 0)) {   /* cpu.c */
        *key = l->cpu_step_ms > 0 ? "cpu_step_ms" : "cpu_sample_us_per_seq";
        snprintf(err, errlen, "the steps' CPU parts are not modelled for ranks in lockstep (dp > 1 with an MoE "
                 "model) yet");
        return -1;
    }
    int gpn = l->gpu.gpus_per_node > 0 ? l->gpu.gpus_per_node : 8;
    int gpus = llm_gpus_per_replica(l);
    if (gpus > gpn && !(l->gpu.node_link_gbs > 0)) {
        *key = l->pp > 1 ? "pp" : "tp";
        snprintf(err, errlen, "a replica of %d GPUs (tp %d x pp %d) spans nodes of %d %s GPUs, and %s has no "
                 "node_link_gbs (set it in a [gpu %s] section)", gpus, l->tp, l->pp, gpn, l->gpu.name, l->gpu.name,
                 l->gpu.name);
        return -1;
    }
    return 0;
}

int llm_derive(llm_cfg *l, const scn_facts *w, const char **key, char *err, size_t errlen)
{
    const model_spec *m = &l->model;
    const double GiB = 1073741824.0;
    if (m->heads % l->tp != 0) {
        *key = "tp";
        snprintf(err, errlen, "tp = %d does not divide %s's %d attention heads", l->tp, m->name, m->heads);
        return -1;
    }
    if (m->kv_heads >= l->tp ? m->kv_heads % l->tp != 0 : l->tp % m->kv_heads != 0) {
        *key = "tp";
        snprintf(err, errlen, "tp = %d does not divide (or evenly replicate) %s's %d KV heads", l->tp, m->name, m->kv_heads);
        return -1;
    }
    if (check_parallel(l, key, err, errlen)) return -1;
    fill_hw(l);
    double wb = catalog_weight_bytes(l->weights);
    double weights_gib = m->params * wb / l->tp / GiB;
    if (llm_dp_lockstep(l)) {
        /* The routed experts are spread over all dp x tp GPUs (sharded with ep, sliced without). */
        catalog_counts cc;
        catalog_model_counts(m, &cc);
        double routed = (double) cc.moe_layers * m->experts * cc.expert;
        weights_gib = ((m->params - routed) / l->tp + routed / ((double) l->dp * l->tp)) * wb / GiB;
    }
    /* vLLM's rule (docs/llm.md, "KV capacity"): gpu_memory_utilization x the
     * device total the driver reports, less the weights, the profiling pass's
     * peak activations, non-torch memory and the CUDA graph pool. */
    l->usable_gib = l->gpu.mem_usable_gib > 0 ? l->gpu.mem_usable_gib : l->gpu.mem_gib * 0.98;
    if (!l->activation_given) l->activation_gib = llm_profile_activation_gib(l);
    /* NCCL and custom all-reduce buffers where an engine spans GPUs: tp x pp > 1,
     * or DP ranks sharing their MoE layers. */
    if (!l->non_torch_given)
        l->non_torch_gib = l->tp * (l->pp > 1 ? l->pp : 1) > 1 || llm_dp_lockstep(l) ? 0.55 : 0.13;
    double reserve_gib = l->activation_gib + l->non_torch_gib + l->cuda_graph_gib;
    double usable_gib = l->usable_gib * l->mem_util;
    double kv_gib = usable_gib - weights_gib - reserve_gib;
    double per_token = llm_kv_bytes_per_token(l);
    if (l->spec_method == LLM_SPEC_DRAFT) {
        /* The draft model shares the GPUs: its weights (tp-sharded) and its own
         * KV cache for every token of every sequence. */
        llm_cfg d = *l;
        d.model = l->draft;
        d.pp = 1;
        weights_gib += l->draft.params * wb / l->tp / GiB;
        kv_gib -= l->draft.params * wb / l->tp / GiB;
        per_token += llm_kv_bytes_per_token(&d);
    }
    if (l->adapters > 0) {
        /* The max_loras adapter slots (tp-sharded) are kept on the GPUs (vLLM). */
        l->adapter_bytes = llm_adapter_bytes(l);
        kv_gib -= l->max_loras * l->adapter_bytes / l->tp / GiB;
    }
    if (l->pp > 1) {
        /* Every stage holds its weights and its layers' KV for every token: the
         * replica's capacity is its fullest stage's (the least KV tokens). */
        double best = INFINITY;
        for (int s = 0; s < l->pp; s++) {
            double w = cost_stage_params(&l->cost.hw, s) * wb / l->tp / GiB;
            double pt = cost_stage_kv_elems(&l->cost.hw, s) * l->cost.hw.kv_bytes;
            double room = usable_gib - w - reserve_gib;
            double tokens = room > 0 && pt > 0 ? room * GiB / pt : room;
            if (tokens < best) {
                best = tokens;
                weights_gib = w;
                kv_gib = room;
                per_token = pt;
            }
        }
    }
    double draft_gib = l->spec_method == LLM_SPEC_DRAFT ? l->draft.params * wb / l->tp / GiB : 0;
    if (kv_gib <= 0 && draft_gib > 0 && kv_gib + draft_gib > 0 && l->pp <= 1) {
        /* The target alone fits: the draft model is what does not. */
        *key = "draft_model";
        snprintf(err, errlen, "draft model %s does not fit beside %s: its %.1f GiB of weights per GPU at tp = %d and "
                 "%s's %.1f GiB leave no KV room in %s's %.1f GiB (%.2f GiB x %.2f) minus %.2f GiB for activations, "
                 "non-torch memory and CUDA graphs; use a smaller draft model, spec_method = ngram, a larger tp or a "
                 "bigger GPU",
                 l->draft.name, m->name, draft_gib, l->tp, m->name, weights_gib - draft_gib, l->gpu.name, usable_gib,
                 l->usable_gib, l->mem_util, reserve_gib);
        return -1;
    }
    if (kv_gib <= 0) {
        *key = "tp";
        char at[32] = "";
        if (l->pp > 1) snprintf(at, sizeof at, ", pp = %d", l->pp);
        snprintf(err, errlen, "%s in %s does not fit: %.1f GiB of weights per GPU at tp = %d%s, but %s offers %.1f GiB "
                 "(%.2f GiB x %.2f) minus %.2f GiB for activations, non-torch memory and CUDA graphs; use a larger "
                 "tp%s, smaller weights or a bigger GPU",
                 m->name, l->weights, weights_gib, l->tp, at, l->gpu.name, usable_gib, l->usable_gib, l->mem_util,
                 reserve_gib, l->pp > 1 ? " or pp" : "");
        return -1;
    }
    if (!(per_token > 0)) {
        *key = "model";
        snprintf(err, errlen, "%s has no KV cache (0 bytes per token): check its layers, kv_heads and head_dim", m->name);
        return -1;
    }
    double blocks = floor(kv_gib * GiB / (per_token * l->block_tokens));
    int64_t derived = blocks < 1e12 ? (int64_t) blocks : (int64_t) 1e12;
    l->kv_gib = kv_gib;
    if (!l->kv_blocks_given) {
        l->kv_blocks = derived;
        snprintf(l->kv_from, sizeof l->kv_from, "derived: %.2f x %.2f GiB - %.2f weights - %.2f activations%s - %.2f "
                 "non-torch - %.2f CUDA graphs = %.3f GiB per GPU, / %.0f bytes per block", l->mem_util, l->usable_gib,
                 weights_gib, l->activation_gib, l->activation_given ? " (set)" : " (profiled)", l->non_torch_gib,
                 l->cuda_graph_gib, kv_gib, per_token * l->block_tokens);
    } else
        snprintf(l->kv_from, sizeof l->kv_from, "set (the derivation would give %lld)", (long long) derived);
    if (l->kv_blocks < 1) {
        *key = "gpu_memory_utilization";
        snprintf(err, errlen, "no room for a single KV block of %d tokens (%.0f bytes per token)", l->block_tokens, per_token);
        return -1;
    }
    int64_t cap_tokens = l->kv_blocks * l->block_tokens;
    int64_t step_cap = (l->sched->flags & LLM_SCHED_SPLITS_PROMPTS) ? INT64_MAX : l->max_batch_tokens;
    if (l->max_seq_len_given) {
        if (l->max_seq_len > m->context) {
            *key = "max_seq_len";
            snprintf(err, errlen, "%lld tokens exceed %s's context of %d tokens",
                     (long long) l->max_seq_len, m->name, m->context);
            return -1;
        }
        if (l->max_seq_len > cap_tokens) {
            *key = "max_seq_len";
            snprintf(err, errlen, "%lld tokens exceed the KV capacity of %lld tokens per replica (%lld blocks of %d)",
                     (long long) l->max_seq_len, (long long) cap_tokens, (long long) l->kv_blocks, l->block_tokens);
            return -1;
        }
        if (l->max_seq_len > step_cap) {
            *key = "max_seq_len";
            snprintf(err, errlen, "%lld tokens exceed max_batch_tokens = %lld, so such a prompt could never be scheduled "
                     "(raise max_batch_tokens or use scheduler = chunked)", (long long) l->max_seq_len, (long long) step_cap);
            return -1;
        }
    } else {
        l->max_seq_len = m->context;
        if (l->max_seq_len > cap_tokens) l->max_seq_len = cap_tokens;
        if (l->max_seq_len > step_cap) l->max_seq_len = step_cap;
    }
    /* A request that can never be served is a configuration error, not a run-time
     * rejection: the shortest prompt plus the shortest output must fit
     * max_seq_len (which is at most the KV capacity), unless prompts are truncated. */
    double pmin = ceil(dist_min(w->prompt)), omin = ceil(dist_min(w->output));
    if (pmin < 1) pmin = 1;
    if (omin < 1) omin = 1;
    if (!w->trace_tokens && !l->truncate && pmin + omin > (double) l->max_seq_len) {
        *key = "workload.prompt_tokens";
        if (pmin + 1 > (double) cap_tokens)
            snprintf(err, errlen, "every prompt (at least %.0f tokens) is longer than the KV capacity of %lld tokens per replica of %s on %s",
                     pmin, (long long) cap_tokens, m->name, l->gpu.name);
        else
            snprintf(err, errlen, "every request (at least %.0f prompt + %.0f output tokens) exceeds max_seq_len = %lld "
                     "(KV capacity %lld tokens, max_batch_tokens %lld); set truncate = yes to cut prompts",
                     pmin, omin, (long long) l->max_seq_len, (long long) cap_tokens, (long long) l->max_batch_tokens);
        return -1;
    }
    return 0;
}


int llm_resolve(scn_ctx *x, const char *sec, pool_cfg *p, sqlite3 *db)
{
    const scn_facts *s = x->facts;
    llm_cfg *l = llm_cfg_of(p);
    char msg[512];
    int found = 0;
    if (l->adapters > 0 && s->trace_adapter_max > l->adapters)   /* the trace's adapter column */
        return scn_fail(x, sec, "adapters", "%s names adapter %d, but the pool has adapters = %d (1..%d; 0: the base model)",
                        s->trace_adapter_at ? s->trace_adapter_at : "the trace", (int) s->trace_adapter_max, l->adapters,
                        l->adapters);
    for (int j = 0; j < s->nmodels; j++)
        if (!strcasecmp(s->models[j].name, l->model_name)) { l->model = s->models[j]; found = 1; }
    if (!found && catalog_model(db, l->model_name, &l->model, msg, sizeof msg) != 0)
        return scn_fail(x, sec, "model", "%s", msg);
    if (l->model.encoder)
        return scn_fail(x, sec, "model", "%s is an encoder (BERT-style: no decoding, no KV cache): serve it with "
                        "kind = encoder", l->model.name);
    found = 0;
    for (int j = 0; j < s->ngpus; j++)
        if (!strcasecmp(s->gpus[j].name, l->gpu_name)) { l->gpu = s->gpus[j]; found = 1; }
    if (!found && catalog_gpu(db, l->gpu_name, &l->gpu, msg, sizeof msg) != 0)
        return scn_fail(x, sec, "gpu", "%s", msg);
    if (!l->weights_given && l->model.weights[0])
        snprintf(l->weights, sizeof l->weights, "%s", l->model.weights);
    if (l->spec_method == LLM_SPEC_DRAFT) {
        found = 0;
        for (int j = 0; j < s->nmodels; j++)
            if (!strcasecmp(s->models[j].name, l->draft_name)) { l->draft = s->models[j]; found = 1; }
        if (!found && catalog_model(db, l->draft_name, &l->draft, msg, sizeof msg) != 0)
            return scn_fail(x, sec, "draft_model", "%s", msg);
        if (l->draft.vocab > 0 && l->model.vocab > 0 && l->draft.vocab != l->model.vocab)
            return scn_fail(x, sec, "draft_model", "%s has a vocabulary of %d tokens and %s of %d: a draft model must "
                            "share the target's tokenizer", l->draft.name, l->draft.vocab, l->model.name, l->model.vocab);
    }
    const char *key = NULL;
    if (llm_derive(l, s, &key, msg, sizeof msg) != 0) {
        if (!strncmp(key, "workload.", 9)) return scn_fail(x, "workload", key + 9, "%s", msg);
        return scn_fail(x, sec, key, "%s", msg);
    }
    if (l->role == LLM_ROLE_PREFILL && p->nnext == 0)
        return scn_fail(x, sec, "role", "a role = prefill pool needs next = its decode pool (or a router over several)");
    {
        /* What crosses the KV link per prompt token: every layer's K and V, all KV heads (or the MLA latent). */
        llm_cfg whole = *l;
        whole.tp = 1;
        whole.pp = 1;
        l->kv_bytes_token = llm_kv_bytes_per_token(&whole);
    }
    if (l->role == LLM_ROLE_DECODE && !l->kv_link_profile[0]) {
        /* Every request's KV crosses the link (shared by the transfers in flight,
         * so their times add up): the expected total (the prompts' mean, at
         * least one token; one token a request with a trace's counts) must
         * finish within the clock's range, as a generic pool's service_ms. */
        double pmin = s->trace_tokens || !s->prompt ? 1 : s->prompt->mean;
        if (!(pmin >= 1)) pmin = 1;
        double nreq = s->run_requests > 1 ? s->run_requests : 1;
        double ns = nreq * pmin * l->kv_bytes_token / l->kv_link_gbs;   /* GB/s = bytes per ns */
        if (!(ns <= (double) SIMTIME_HORIZON))
            return scn_fail(x, sec, scn_value(x, sec, "kv_link_gbs") ? "kv_link_gbs" : "kv_link",
                            "%g requests x %g prompt tokens x %.0f KV bytes per token at %g GB/s take %.3g s on the "
                            "KV link, beyond the simulated clock's range (%.3g s, about 146 years)", nreq, pmin,
                            l->kv_bytes_token, l->kv_link_gbs, ns / 1e9, SIMTIME_HORIZON_S);
    }
    for (int t = 0; t < LLM_TIERS; t++) {
        double b = l->tier[t].gib * 1073741824.0 / (l->kv_bytes_token * l->block_tokens);
        l->tier[t].blocks = !l->tier[t].on ? 0 : b < 1e15 ? (int64_t) b : (int64_t) 1e15;
        if (l->tier[t].on && l->tier[t].blocks < 1)
            return scn_fail(x, sec, t ? "kv_offload_ssd_gib" : "kv_offload_cpu_gib", "no room for one KV block (%.0f bytes)",
                            l->kv_bytes_token * l->block_tokens);
    }
    if (l->prefix_cache) {
        /* A trace's hash ids stand for hash_block_tokens tokens each; synthetic
         * prompts (system prompts, session turns) are hashed per KV block, as vLLM. */
        l->prefix_id_tokens = s->hash_block_tokens > 0 ? s->hash_block_tokens : l->block_tokens;
        if (l->prefix_id_tokens % l->block_tokens != 0)
            return scn_fail(x, sec, "prefix_cache", "the workload's hash_block_tokens (%d) must be a multiple of "
                            "block_tokens (%d)", l->prefix_id_tokens, l->block_tokens);
    }
    /* A [sim] cost_db names the calibration database; else the catalog's. */
    sqlite3 *cdb = s->cost_db ? s->cost_db : db;
    if (l->cost.ops->build && l->cost.ops->build(&l->cost, x, sec, cdb)) return -1;
    if (l->power.from_db && power_curve_stored(cdb, l->gpu.name, &l->power, msg, sizeof msg))
        return scn_fail(x, sec, "power_curve", "%s", msg);
    if (l->kv_link_profile[0] && !l->kv_prof) {
        char m[512];
        if (llm_link_profile_load(l, cdb, m, sizeof m) != 0) return scn_fail(x, sec, "kv_link_profile", "%s", m);
    }
    cost_info ci;
    cost_describe(&l->cost, &ci);
    snprintf(l->cost_coeffs, sizeof l->cost_coeffs, "%s", ci.coeffs);
    if ((l->spec_method == LLM_SPEC_DRAFT || l->spec_method == LLM_SPEC_MTP) && llm_build_draft_cost(l) != 0)
        return scn_fail(x, sec, "spec_method", "out of memory");
    return 0;
}

int llm_build_draft_cost(llm_cfg *l)
{
    /* The pool's roofline parameters when it prices with the roofline, else the
     * defaults; no per-step overhead: the drafting passes run inside the step. */
    cost_roofline rp = cost_roofline_defaults;
    if (l->cost.ops && !strcmp(l->cost.ops->name, "roofline") && l->cost.state)
        rp = *(const cost_roofline *) l->cost.state;
    rp.step_overhead_ms = 0;
    cost_free(&l->draft_cost);
    l->draft_cost.hw = l->cost.hw;
    cost_hw *h = &l->draft_cost.hw;
    h->pp = h->ep = h->pp_microbatches = 1;
    h->expert_imbalance = 1;
    if (l->spec_method == LLM_SPEC_DRAFT)
        h->model = l->draft;
    else {
        /* MTP: each proposed token is one more pass through one layer of the
         * target (DeepSeek-V3's MTP module is one transformer block). */
        h->model.params = l->model.params / (l->model.layers > 0 ? l->model.layers : 1);
        h->model.layers = 1;
        h->model.first_dense_layers = 0;
    }
    return cost_init(&l->draft_cost, "roofline", &rp);
}

void llm_free_cfg(pool_cfg *p)
{
    llm_cfg *l = llm_cfg_of(p);
    if (!l) return;
    cost_free(&l->cost);
    cost_free(&l->draft_cost);
    free(l->spec_accept_cls);
    free(l->adapter_cls);
    free(l->kv_prof);
    free(l->sched_cfg);
    free(l);
    p->ext = NULL;
}

const scn_key *llm_more_keys(int set)
{
    static const scn_key none[] = { { NULL, NULL, NULL } };
    int n = llm_sched_count();
    if (set < n) {
        const llm_sched *s = llm_sched_at(set);
        return s && s->keys ? s->keys : s ? none : NULL;
    }
    const cost_ops *c = cost_row_at(set - n);
    return c ? (c->keys ? c->keys : none) : NULL;
}
