/* llmcfg.h -- an LLM pool's configuration (keys, catalog look-up, derivation).
 *
 * The keys and their parsing, and llm_derive(): from the resolved model and
 * GPU, the KV-cache capacity, max_seq_len and the cost model's hardware.
 * The station itself is llm.h.
 */
#ifndef LATSIM_LLMCFG_H
#define LATSIM_LLMCFG_H

#include <sqlite3.h>
#include "core/poolcfg.h"
#include "core/power.h"
#include "core/scn.h"
#include "llm/cost.h"
#include "llm/sched.h"

typedef struct llm_cfg {
    char model_name[48];      /* catalog key */
    char gpu_name[48];        /* catalog key */
    model_spec model;         /* resolved by scenario_resolve() */
    gpu_spec gpu;             /* resolved by scenario_resolve() */
    int tp;                   /* GPUs per replica (tensor parallel; per DP rank with dp > 1) */
    int dp;                   /* data-parallel attention ranks per replica, each tp x pp GPUs with its
                                 own scheduler, token budget and KV cache (docs/llm.md, "Data-parallel
                                 attention"), >= 1 */
    int replicas;             /* replicas in the pool */
    const llm_sched *sched;   /* the scheduler: its row in the scheduler table (sched.h) */
    void *sched_cfg;          /* its own keys' values, as its parse hook read them (owned; NULL: none) */
    int max_batch;            /* max sequences in a batch */
    int64_t max_batch_tokens; /* max tokens per forward step (continuous, chunked) */
    char weights[8];          /* bf16 | fp16 | fp8 | int8 | int4 */
    char engine[16];          /* serving engine: vllm | sglang | trtllm | generic */
    int weights_given;        /* 1 when the pool set weights (else the model's precision) */
    char kv_dtype[8];         /* bf16 | fp8 */
    double mem_util;          /* share of GPU memory the server may use, (0,1] */
    double activation_gib;    /* per-GPU peak activations of the profiling pass, GiB (given, or
                                 derived: llm_profile_activation_gib) */
    int activation_given;     /* 1 when the scenario set activation_reserve_gib to a number */
    double non_torch_gib;     /* per-GPU memory outside torch's allocator (CUDA/NCCL/cuBLAS), GiB */
    int non_torch_given;      /* 1 when the scenario set non_torch_gib */
    double cuda_graph_gib;    /* per-GPU CUDA graph pool taken out of the KV budget, GiB */
    double usable_gib;        /* the GPU's memory as its driver reports it (derived), GiB */
    double kv_gib;            /* KV-cache memory per GPU of the fullest stage (derived), GiB */
    char kv_from[320];        /* how kv_blocks came about, one line (report, --verbose) */
    int64_t kv_blocks;        /* KV blocks per replica (per DP rank with dp > 1; given or derived) */
    int kv_blocks_given;      /* 1 when the scenario set kv_blocks to a number */
    int block_tokens;         /* tokens per KV block (16) */
    int64_t max_seq_len;      /* prompt + output cap per request, tokens */
    int max_seq_len_given;    /* 1 when the scenario set max_seq_len */
    int truncate;             /* 1: cut prompts to fit max_seq_len; 0: reject such requests */
    double request_overhead_ms; /* front-end work per request before it queues, ms */
    double cpu_tokenize_us_per_token; /* CPU time to tokenise one prompt token (a CPU job before it queues:
                                         fleet/cpunode.h), us; 0: none */
    double cpu_step_ms;       /* CPU time of each step before its GPU part (scheduling: a CPU job in the
                                 replica's cgroup, cpu.c), ms; 0: none */
    double cpu_sample_us_per_seq; /* CPU time after each step's GPU part per sequence in the step (sampling,
                                     detokenising: cpu.c), us; 0: none */
    const struct route_policy *routing;  /* NULL: one shared queue; else the policy that
                                            sends each request to a replica's own queue */
    cost_model cost;          /* step-time model */
    int op_shares;            /* op_shares = yes: the steps' time by operator is reported (opshare.h; issue 35) */
    char cost_coeffs[640];    /* cost_info.coeffs of cost once built (llm_resolve): the report
                                 points to it, so it lives as long as the scenario */
    double step_time_scale;   /* factor on every step time (1: as the cost model gives it) */
    int prefix_cache;         /* 1: replicas keep finished prompts' KV blocks for later hits (prefix.h) */
    int prefix_id_tokens;     /* prompt tokens per content id (the workload's hash_block_tokens) */
    double affinity_threshold;/* routing = prefix_affinity: least share of the prompt's content ids a
                                 replica's cached prefix must cover to count (0..1) */
    int pp;                   /* pipeline stages per replica (each tp GPUs), >= 1 */
    int ep;                   /* expert-parallel degree within a stage, divides tp, >= 1 */
    int pp_microbatches;      /* micro-batches a step is split into across the stages, >= 1 */
    double expert_imbalance;  /* busiest EP rank's routed load over the mean, >= 1 */
    power_curve power;        /* power_curve: W per GPU against busy share (n = 0: the GPU's
                                 idle_w..max_w line; power.h) */
    /* Disaggregated prefill and decode (kvlink.c) */
    int role;                 /* LLM_ROLE_*: colocated (both phases), prefill or decode */
    double kv_link_gbs;       /* decode pools: KV transfer link bandwidth, GB/s (1e9 bytes/s) */
    double kv_link_latency_ms;/* decode pools: latency added to each transfer, ms */
    int kv_link_streams;      /* decode pools: transfers sharing the link at once (the others wait, FIFO), >= 1 */
    char kv_link_profile[64]; /* decode pools: the stored send/recv profile pricing each transfer (its gpu name in
                                 the calibration store, e.g. Vidur's cluster h100_dgx), "" for none */
    int kv_link_profile_dpn;  /* its Vidur devices_per_node: 1 the two GPUs on different nodes, 2 on one node */
    cost_coll_prof *kv_prof;  /* the profile's rows in pieces of at most COST_COLL_MAX sizes, each piece's last
                                 size the next one's first (owned; NULL without a profile) */
    int kv_nprof;             /* pieces */
    double kv_bytes_token;    /* KV bytes per token of the whole model (all layers and KV heads), bytes */
    /* KV-cache offload tiers (offload.c), [LLM_TIER_CPU], [LLM_TIER_SSD] */
    struct {
        int on;               /* 1: kv_offload names this tier */
        double gib;           /* capacity per replica (or per pool, shared), GiB */
        double gbs;           /* load bandwidth back to the GPU, GB/s */
        double latency_ms;    /* fixed latency of each load, ms */
        int64_t blocks;       /* capacity in KV blocks (derived) */
    } tier[2];
    int kv_offload_shared;    /* 1: one set of tiers for all the pool's replicas (LMCache-style) */
    /* Speculative decoding (docs/llm.md, "Speculative decoding"); spec_method
     * LLM_SPEC_NONE leaves every step as it was. */
    int spec_method;          /* LLM_SPEC_NONE | DRAFT | MTP | NGRAM */
    int spec_tokens;          /* k: tokens speculated per sequence per step, tokens */
    double spec_acceptance;   /* a: probability each speculated token is accepted (the pool's), [0,1] */
    double *spec_accept_cls;  /* per [class NAME], in file order: its a (owned; NULL without classes) */
    int spec_ncls;            /* entries of spec_accept_cls */
    int spec_max_batch;       /* no speculation in a step whose running sequences exceed this, sequences */
    char draft_name[48];      /* draft: catalog key of the draft model */
    model_spec draft;         /* draft: resolved by llm_resolve() */
    cost_model draft_cost;    /* draft, mtp: prices one drafting forward pass (roofline on the
                                 draft model, or one layer of the target for mtp) */
    /* LoRA adapters (docs/llm.md, "LoRA adapters"); adapters = 0 leaves every step as it was. */
    int adapters;             /* distinct adapters requests use (0: none) */
    int adapter_rank;         /* LoRA rank r of every adapter */
    int adapter_all;          /* 1: q, k, v, o and the MLP's gate, up, down adapted; 0: q, k, v, o */
    double adapter_bytes;     /* bytes of one adapter (whole replica), from the rank and the model geometry */
    double adapter_zipf_s;    /* Zipf exponent of adapter popularity (requests whose class names none) */
    int32_t *adapter_cls;     /* per [class NAME], in file order: its adapter (0-based), -1 the base
                                 model, -2 drawn from the Zipf (owned) */
    int adapter_ncls;         /* entries of adapter_cls */
    int max_loras;            /* adapters resident per replica (and distinct adapters per step) */
    double lora_load_gbs;     /* host-to-GPU bandwidth an adapter loads at, GB/s (1e9 bytes/s) */
    double lora_step_overhead_ms; /* per distinct adapter in a step, ms */
    double lora_max_wait_ms;  /* a request passed over for a slot this long blocks those behind it, ms (0: never) */
} llm_cfg;

enum { LLM_TIER_CPU = 0, LLM_TIER_SSD = 1, LLM_TIERS = 2 };

/* An LLM pool's part in disaggregated serving (`role`). */
enum { LLM_ROLE_BOTH = 0, LLM_ROLE_PREFILL = 1, LLM_ROLE_DECODE = 2 };

enum { LLM_SPEC_NONE = 0, LLM_SPEC_DRAFT, LLM_SPEC_MTP, LLM_SPEC_NGRAM };

/* GPUs of one replica of L: dp x tp x pp. */
static inline int llm_gpus_per_replica(const llm_cfg *l)
{
    return (l->dp > 1 ? l->dp : 1) * l->tp * (l->pp > 1 ? l->pp : 1);
}

/* Schedulers (replica records) per replica of L: its dp ranks. */
static inline int llm_ranks(const llm_cfg *l) { return l->dp > 1 ? l->dp : 1; }

/* 1 when L's dp ranks step in lockstep: an MoE model with dp > 1 (its expert
 * layers span the ranks; an idle rank runs a dummy batch). */
static inline int llm_dp_lockstep(const llm_cfg *l) { return l->dp > 1 && l->model.experts > 0; }

/* The LLM configuration of pool P (kind = llm): its ext. */
static inline llm_cfg *llm_cfg_of(const pool_cfg *p) { return (llm_cfg *) p->ext; }

/* The kind's keys (kind.h), ended by a NULL row. */
extern const scn_key llm_keys[];

/* Reads the keys of [SEC] into a new llm_cfg, P->ext.  Returns 0 or -1 (error set in X). */
int llm_parse(scn_ctx *x, const char *sec, pool_cfg *p);

/* Frees what llm_parse allocated (the scheduler's keys, the cost model's state). */
void llm_free_cfg(pool_cfg *p);

/* The schedulers' keys, row by row, then the cost models' (kind.h's more_keys). */
const scn_key *llm_more_keys(int set);

/* Looks the model and GPU up (the scenario's sections first, then the catalog
 * in DB) and derives (llm_derive).  Returns 0 or -1 (error set in X). */
int llm_resolve(scn_ctx *x, const char *sec, pool_cfg *p, sqlite3 *db);

/* Fills the derived parts of L from its resolved model and gpu: the KV-cache
 * capacity, max_seq_len, and the cost model.  Checks TP against the heads, that
 * the weights fit, and that a request can fit the KV cache.  Returns 0, or -1
 * with a message in ERR and the offending key in *KEY ("tp", "kv_blocks"...;
 * "workload.prompt_tokens" names a [workload] key). */
int llm_derive(llm_cfg *l, const scn_facts *w, const char **key, char *err, size_t errlen);

/* spec_method = draft or mtp: L->draft_cost made the roofline of one drafting
 * pass (the draft model, or one layer of the target) on L's GPUs, with the
 * pool's roofline parameters (or the defaults) and no per-step overhead.
 * Returns 0, or -1 when out of memory. */
int llm_build_draft_cost(llm_cfg *l);

/* The loader of stored send/recv profiles (calib registers it: calib/cimport.c,
 * cimp_link_register): the measured time of one point-to-point transfer between
 * two GPUs of stored gpu NAME (Vidur's devices_per_node DPN), the latest at each
 * size, sizes ascending: *N rows in malloc'd *BYTES (bytes) and *SEC (s).
 * Returns 1 when rows are stored, 0 when none, -1 on an error (ERR set). */
typedef int (*llm_link_prof_fn)(sqlite3 *db, const char *name, int dpn, double **bytes, double **sec, int *n,
                                char *err, size_t errlen);
void llm_set_link_profile(llm_link_prof_fn fn);
/* Loads L's kv_link_profile from DB into L->kv_prof (kvlink.c).  Returns 0, or
 * -1 with a message in ERR (none stored, no loader, out of memory). */
int llm_link_profile_load(llm_cfg *l, sqlite3 *db, char *err, size_t errlen);
/* The time of one transfer of BYTES alone on L's profiled link, s: the
 * profile's interpolation (cost_coll_time) in the piece holding BYTES; past
 * the largest size S, t(S) + (BYTES - S) x (t(S) - t(S/2)) / (S/2). */
double llm_link_profile_s(const llm_cfg *l, double bytes);

/* Bytes of one LoRA adapter of L (all the replica's GPUs together): per layer,
 * for each adapted matrix of in x out, A (in x r) and B (r x out) in bf16. */
double llm_adapter_bytes(const llm_cfg *l);

/* The peak activation memory of one GPU of L in vLLM's profiling pass, GiB
 * (docs/llm.md, "KV capacity"): a forward pass of the scheduler's largest step
 * (max_num_batched_tokens), then the sampler over min(max_batch, those tokens)
 * rows of the vocabulary: the larger of the two. */
double llm_profile_activation_gib(const llm_cfg *l);

/* Bytes the profiling sampler holds per sampled row per vocabulary entry: the
 * bf16 and fp32 logits, the sort's values and int64 indices, softmax,
 * probabilities, the exponential draws (fit to vLLM's logged peaks: docs/llm.md). */
#define LLM_SAMPLER_BYTES 38.5

/* KV-cache bytes per token on one GPU of a replica: K and V of that GPU's
 * share of the KV heads (at least one), or with MLA the compressed latent and
 * RoPE key, whole on every TP rank; over the layers of its pipeline stage (the
 * first, which has the most). */
double llm_kv_bytes_per_token(const llm_cfg *l);

#endif
