/* cost.h -- how long one forward step of an LLM replica takes.
 *
 * The scheduler describes a step by what it computes (cost_step: prompt tokens
 * and the (query, key) pairs they attend, decoding sequences and the tokens
 * each computes, KV-cache tokens read, tokens emitted) and asks the cost model
 * for its duration; that is the whole interface, so a calibrated model can
 * replace the built-in ones without touching any scheduler, and a scheduler
 * that computes more tokens per decoding sequence (speculative verification)
 * is priced by every model without touching any.  Models are rows of a table
 * (cost_ops), chosen by name, each owning its state: the built-in rows (linear,
 * roofline) are here; a model defined elsewhere adds its row with
 * cost_register() (calib/ccost.c registers the calibrated auto, fitted and
 * profile).
 *
 * Built-in models (D = decode tokens = decode_seqs x decode_tokens_per_seq):
 *   linear    step_ms = step_base_ms + prefill_ms_per_token * prefill_tokens
 *                       + decode_ms_per_seq * D
 *                       + kv_ms_per_1k_tokens * kv_tokens / 1000
 *   roofline  from the catalog's GPU and model: the step takes the longer of
 *             its FLOPs at (peak * compute_eff) and its bytes at
 *             (bandwidth * memory_eff), plus the tensor-parallel all-reduces,
 *             plus step_overhead_ms.  FLOPs: 2 * params per token computed
 *             (prompt and decode), plus attention 4 * layers * heads * head_dim
 *             per (query, key) pair (the prompt's, and the decode tokens' over
 *             their contexts).  Bytes: the weights once per step, plus the KV
 *             cache read (once per decoding sequence) and written.
 *             That is the whole formula for a dense model on one stage
 *             within one node (pp = ep = 1, no MLA, tp <= gpus_per_node);
 *             otherwise the general roofline below.
 *
 * The general roofline (mixture of experts, MLA, pipeline and expert
 * parallelism; docs/llm.md, "Mixture of experts, pipeline and expert parallelism";
 * with dp > 1 data-parallel attention ranks, docs/llm.md, "Data-parallel
 * attention with expert parallelism (`dp`)"):
 *   - the step is split into m = min(pp_microbatches, its sequences)
 *     micro-batches (m = 1 without pipeline parallelism), each priced alone;
 *   - layers are split evenly over the pp stages (the first L mod pp stages
 *     one more), the weights outside the routed experts spread evenly over
 *     the layers;
 *   - per stage and micro-batch of T tokens: FLOPs from the ACTIVE
 *     parameters (2 x (params - routed experts + k x experts per MoE layer)
 *     per token), the routed experts' share on the busiest EP rank times
 *     expert_imbalance; weight bytes from the dense part plus, per MoE layer,
 *     the expected distinct experts the T routed tokens touch, E (1 - (1 -
 *     k/E)^T) (uniform routing: cost_distinct_experts); KV bytes from the
 *     compressed latent for MLA (replicated on every TP rank, as vLLM keeps
 *     it); stage time = max(compute, memory) + its collectives + launches;
 *   - collectives per layer: two all-reduces over tp, except that with ep > 1
 *     an MoE layer's MLP all-reduce becomes an all-to-all dispatch and
 *     combine over ep, each moving T x hidden x 2 bytes x (ep - 1) / ep per
 *     GPU (kept too when ep < tp: the experts' tp/ep slices); a stage whose
 *     tp GPUs span nodes (gpu.gpus_per_node) uses node_link_gbs and adds
 *     node_link_latency_us to each collective's latency; an imported
 *     all-reduce (tp GPUs) or all-to-all (ep GPUs) profile replaces the
 *     formula of its collective (the message: T x hidden x 2 bytes);
 *   - between stages: T x hidden x 2 bytes per GPU over the link (the node
 *     link where the two stages' GPUs sit on different nodes), or the
 *     imported send/recv profile of that link at those bytes;
 *   - step = sum of the stage times + the transfers (the first micro-batch's
 *     path) + (m - 1) x the slowest of them (GPipe: (m + pp - 1) stage times
 *     for equal stages) + step_overhead_ms.
 */
#ifndef LATSIM_COST_H
#define LATSIM_COST_H

#include <stddef.h>
#include <stdint.h>
#include <sqlite3.h>
#include "core/catalog.h"

/* One forward step, by what it computes.  A zeroed step is empty; a decoding
 * sequence that computes one token (plain decoding) may leave
 * decode_tokens_per_seq 0: it counts as 1. */
typedef struct cost_step {
    int64_t prefill_tokens;   /* prompt tokens computed in this step, all sequences, tokens */
    double  prefill_pairs;    /* (query, key) pairs attended by those prompt tokens, pairs:
                                 for a chunk of c tokens after k cached ones,
                                 c*k + c*(c+1)/2 */
    int32_t prefill_seqs;     /* sequences with prompt tokens in this step */
    int32_t decode_seqs;      /* decoding sequences in this step */
    int32_t decode_tokens_per_seq; /* tokens each decoding sequence computes, tokens: 1 for
                                 plain decoding (0 counts as 1), k + 1 to verify k
                                 speculated tokens */
    int64_t kv_tokens;        /* KV-cache tokens read by the decoding sequences, tokens:
                                 the sum of their context lengths, the tokens computed
                                 in this step included (each context is read once) */
    int64_t emitted_tokens;   /* output tokens the step emits, tokens: one per decoding
                                 sequence per accepted token, and one per sequence whose
                                 prompt completes in it.  A description of the step: no
                                 built-in model prices it */
    double group_tokens;      /* dp > 1 (cost_hw.dp): tokens all the DP group's ranks route
                                 through the expert layers in this lockstep step, this
                                 rank's included (an idle rank's dummy batch counts 1);
                                 0: this step's own.  Only the general roofline reads it */
} cost_step;

/* Tokens each decoding sequence of S computes (decode_tokens_per_seq, at least 1). */
static inline int64_t cost_step_per_seq(const cost_step *s)
{
    return s->decode_tokens_per_seq > 1 ? s->decode_tokens_per_seq : 1;
}

/* Decode tokens S computes: decode_seqs x tokens per decoding sequence.  (The
 * common case, one token per sequence, is the branch expected on the hot path.) */
static inline int64_t cost_step_decode_tokens(const cost_step *s)
{
    if (__builtin_expect(s->decode_tokens_per_seq <= 1, 1)) return s->decode_seqs;
    return (int64_t) s->decode_seqs * s->decode_tokens_per_seq;
}

/* (query, key) pairs the decode tokens of S attend: a sequence with context C
 * (its t new tokens included) computing t tokens attends t*C - t(t-1)/2 pairs
 * (its new tokens attend each other causally); kv_tokens itself for t = 1. */
static inline double cost_step_decode_pairs(const cost_step *s)
{
    if (__builtin_expect(s->decode_tokens_per_seq <= 1, 1)) return (double) s->kv_tokens;
    int64_t t = s->decode_tokens_per_seq;
    return (double) t * (double) s->kv_tokens - (double) s->decode_seqs * (double) (t * (t - 1) / 2);
}

/* The hardware of one replica, as the pool resolved it: what the roofline
 * model computes from, and what MFU/MBU accounting uses for every model. */
typedef struct cost_hw {
    int have_hw;                  /* gpu and model below are filled */
    gpu_spec gpu;
    model_spec model;
    int tp;                       /* tensor-parallel degree, GPUs per replica */
    double weight_bytes;          /* bytes per weight (bf16 2, fp8/int8 1, int4 0.5) */
    double kv_bytes;              /* bytes per KV element (bf16 2, fp8 1) */
    int use_fp8_compute;          /* 1: peak is gpu.fp8_tflops (fp8/int8 W8A8) */
    char weights[8];              /* weight precision name (bf16, fp8, ...): calibrated
                                     models are looked up by it */
    /* Added for MoE and parallelism; 0 (zeroed) means the default in brackets. */
    int pp;                       /* pipeline stages per replica, each tp GPUs [1] */
    int ep;                       /* expert-parallel degree: a stage's MoE experts sharded over
                                     ep of its tp GPUs, ep divides tp [1] */
    int pp_microbatches;          /* micro-batches a step is split into across the stages [pp] */
    double expert_imbalance;      /* routed-token load of the busiest EP rank over the mean,
                                     >= 1: scales the experts' compute time when ep > 1 [1] */
    int use_fp4_compute;          /* 1: peak is gpu.fp4_tflops (fp4 weights on a GPU with FP4) */
    int dp;                       /* data-parallel attention ranks sharing the MoE layers, each of
                                     tp GPUs: the routed experts over dp x tp GPUs (sharded when
                                     ep = dp x tp, sliced when ep = 1) [1] */
    char engine[16];              /* the serving engine (`engine =`: vllm, sglang, trtllm,
                                     generic): the learned model's efficiencies are per engine;
                                     "" (zeroed): vllm */
} cost_hw;

/* Sets H's weight precision from its name WEIGHTS (bf16, fp16, fp8, int8, int4,
 * fp4; H->gpu already set): bytes per weight, the name, and the peak used:
 * fp8/int8 compute at fp8_tflops, fp4 at fp4_tflops on a GPU that has FP4,
 * else dequantised to BF16 (as the W4A16 kernels vLLM runs on Hopper, Ampere
 * and Ada do).  Returns 0, or -1 for an unknown name (H unchanged). */
int cost_hw_set_weights(cost_hw *h, const char *weights);

/* A sentence about how H's weights are computed when that is not what their
 * name says (fp4 weights on a GPU without FP4: dequantised to BF16), in BUF;
 * returns 1 when there is one, else 0 (BUF empty). */
int cost_hw_note(const cost_hw *h, char *buf, size_t n);

/* 1 when the first formula of the file applies to H: a dense model without
 * MLA on one stage without expert parallelism (pp, ep <= 1) whose tp GPUs
 * share one node (tp <= gpu.gpus_per_node). */
int cost_hw_plain(const cost_hw *h);

/* Pipeline stages and GPUs of a replica of H (tp x pp), at least 1. */
int cost_hw_stages(const cost_hw *h);
int cost_hw_gpus(const cost_hw *h);

/* The expected number of distinct experts T routed tokens touch when each
 * picks K of E experts uniformly (without replacement for one token,
 * independently across tokens): E (1 - (1 - K/E)^T); K for T = 1, E when
 * K >= E, 0 when any argument is <= 0. */
double cost_distinct_experts(double e, double k, double t);

/* Stage S of H's pipeline (0 <= S < pp): its first layer and its layer count. */
void cost_stage_layers(const cost_hw *h, int s, int *first, int *n);

/* Parameters stage S holds (all its tp GPUs together): H's model's params when
 * pp = 1, else the stage's share of the weights outside the routed experts
 * (by layers) plus its MoE layers' routed experts. */
double cost_stage_params(const cost_hw *h, int s);

/* KV-cache elements one token adds on one GPU of stage S (its layers; K and V
 * of that GPU's KV heads, at least one head; MLA: the latent and the RoPE key,
 * whole on every TP rank). */
double cost_stage_kv_elems(const cost_hw *h, int s);


/* Which model produced a replica's step times (for the report and database). */
typedef struct cost_info {
    const char *kind;             /* the row in use: "roofline", "linear", "fitted", "profile" */
    int64_t id;                   /* stored calibrated model id, 0 for none */
    const char *source;           /* "datasheet", "scenario", "steps-csv", "vidur", "cuda", "cpu", "observed", "engine-log" */
    double mape;                  /* its cross-validated MAPE, %, NAN for none */
    int extrapolated;             /* 1: carried from another GPU or outside its measured TP */
    /* Filled by cost_describe after the row's describe hook (zero before). */
    const char *range;            /* "measured", "interpolated", "extrapolated", or "" (a model
                                     that is not measured: roofline, linear) */
    char coeffs[640];             /* the pool keys that reproduce its step times exactly
                                     (values %.17g), e.g. "compute_eff=0.6 memory_eff=0.8 ...":
                                     what a stored run records (docs/calibration.md) */
} cost_info;

struct cost_ops;
typedef struct scn_ctx scn_ctx;   /* core/scn.h: reading a section's keys */
typedef struct scn_key scn_key;

/* A step-time model: its row in the table, its hardware, and its own state
 * (owned: cost_free() releases it; a model may keep anything there, e.g.
 * interpolation tables).  Zero-initialise before cost_init/cost_parse. */
typedef struct cost_model {
    const struct cost_ops *ops;   /* its row in the cost-model table; NULL: none yet */
    void *state;                  /* the model's own state, NULL when none */
    cost_hw hw;                   /* filled by the pool's derivation (llmcfg.c) */
} cost_model;

/* One row of the cost-model table: `cost = NAME` of an LLM pool.  Adding a
 * model is its functions plus one row: a built-in one in cost.c, or
 * cost_register() for a model defined elsewhere (calib/ccost.c). */
typedef struct cost_ops {
    const char *name;             /* the value of `cost =` */
    const char *help;             /* one line for `latsim keys` */
    const scn_key *keys;          /* its keys in the pool section, ended by a NULL key (NULL: none) */
    /* Reads its keys of section SEC into M->state.  Returns 0, or -1 with the
     * error set in X (scn_fail).  Runs when the scenario is loaded. */
    int (*parse)(cost_model *m, scn_ctx *x, const char *sec);
    /* Runs once M->hw is resolved, with the catalog database DB (may be NULL
     * outside a scenario): loads or fits what the model needs.  NULL: nothing.
     * Returns 0 or -1 (error set in X). */
    int (*build)(cost_model *m, scn_ctx *x, const char *sec, sqlite3 *db);
    /* Sets M->state from PARAMS (the model's parameter struct), for tools and
     * tests.  NULL: the model cannot be made that way.  Returns 0 or -1. */
    int (*init)(cost_model *m, const void *params);
    /* Duration of a non-empty step, ms. */
    double (*step_ms)(const cost_model *m, const cost_step *s);
    void (*free)(cost_model *m);  /* releases M->state (NULL: free(M->state)) */
    /* Fills OUT: which model produces the step times (NULL: the row itself,
     * with source "scenario" and no id or error). */
    void (*describe)(const cost_model *m, cost_info *out);
    /* The model whose step times M's are, exactly (a calibrated row that fell
     * back to the roofline: its roofline), so that the hot path can call that
     * one directly (cost_fast); NULL (or a NULL hook): M's own. */
    const cost_model *(*delegate)(const cost_model *m);
    /* The framework-overhead part of step_ms of a non-empty step S, ms: the
     * model's per-step fixed cost, kernel launches and per-sequence CPU work
     * (roofline: step_overhead_ms + layers x launch_us_per_layer; fitted: its
     * fixed, launch and per-sequence terms; profile: its CPU part).  The rest
     * of the step is model compute.  NULL: a model without that split (linear),
     * whose steps count as compute throughout (docs/metrics.md). */
    double (*overhead_ms)(const cost_model *m, const cost_step *s);
    /* The constants of M's step time when it has the learned model's form
     * (cost_lm below, exactly), so that the hot path evaluates it inline
     * (cost_fast); NULL (or a NULL hook): it has not. */
    const struct cost_lm *(*lm)(const cost_model *m);
} cost_ops;

/* The learned step model's form on a plain replica (calib/clearn.h), as
 * constants computed once per pool: every learned step is
 *   tc  = a_lin T + a_half + a_att pairs,   tm = w_s + kv_s T + kvr_s kv_tokens
 *   gpu = max(tc, tm) + ov min(tc, tm)
 *   ar  = ar_n (ar_lat + ar_tok T)
 *   ms  = 1000 (gpu + ar + graph_s or launch_s) + fixed_ms + seq_ms x sequences
 * with T the tokens computed and graph_s for a decode-only step of at most
 * graph_max sequences.  cost_lm_ms is the one evaluation (the learned row's and
 * cost_fast's), so both give the same bits. */
typedef struct cost_lm {
    double a_lin;      /* s per token computed */
    double a_half;     /* the small-GEMM cost per step, s */
    double a_att;      /* s per attended (query, key) pair */
    double w_s;        /* weight read per step, s */
    double kv_s;       /* s per KV token written */
    double kvr_s;      /* s per KV token read by decode attention */
    double ov;         /* overlap: the share of min(tc, tm) that adds */
    double ar_n;       /* all-reduces per step (tp > 1), 0 otherwise */
    double ar_lat;     /* s per all-reduce */
    double ar_tok;     /* s per token per all-reduce */
    double launch_s;   /* kernel launches of a step outside a CUDA graph, s */
    double graph_s;    /* the same inside a CUDA graph, s */
    double fixed_ms;   /* per step, ms */
    double seq_ms;     /* per sequence in the step, ms */
    int graph_max;     /* decode-only steps of at most this many sequences run as a graph */
} cost_lm;

/* Step time of S under L, ms (S not empty). */
static inline double cost_lm_ms(const cost_lm *L, const cost_step *s)
{
    double dtok, pairs;
    if (__builtin_expect(s->decode_tokens_per_seq <= 1, 1)) {
        dtok = (double) s->decode_seqs;
        pairs = s->prefill_pairs + (double) s->kv_tokens;
    } else {
        dtok = (double) cost_step_decode_tokens(s);
        pairs = s->prefill_pairs + cost_step_decode_pairs(s);
    }
    double T = (double) s->prefill_tokens + dtok;
    double tc = L->a_lin * T + L->a_half + L->a_att * pairs;
    double tm = L->w_s + L->kv_s * T + L->kvr_s * (double) s->kv_tokens;
    double gpu = tc >= tm ? tc + L->ov * tm : tm + L->ov * tc;
    double ar = L->ar_n * (L->ar_lat + L->ar_tok * T);
    int graph = s->prefill_tokens <= 0 && s->decode_seqs <= L->graph_max;
    return (gpu + ar + (graph ? L->graph_s : L->launch_s)) * 1e3 + L->fixed_ms
           + L->seq_ms * ((double) s->prefill_seqs + s->decode_seqs);
}

/* The framework-overhead part of cost_lm_ms (launches, fixed and per-sequence), ms. */
static inline double cost_lm_overhead_ms(const cost_lm *L, const cost_step *s)
{
    int graph = s->prefill_tokens <= 0 && s->decode_seqs <= L->graph_max;
    return (graph ? L->graph_s : L->launch_s) * 1e3 + L->fixed_ms + L->seq_ms * ((double) s->prefill_seqs + s->decode_seqs);
}

/* Parameters of the built-in models (their states are copies of these). */
typedef struct cost_linear {
    double step_base_ms;          /* ms per step */
    double prefill_ms_per_token;  /* ms per prompt token */
    double decode_ms_per_seq;     /* ms per decoding sequence per token it computes */
    double kv_ms_per_1k_tokens;   /* ms per 1000 KV tokens read */
} cost_linear;

/* A measured collective (nccl-tests, imported by `latsim calib import nccl`;
 * or Vidur's network profiles, `latsim calib import vidur`): the time of one
 * call at each measured size.  (Vidur's send_recv.csv has 994 sizes.) */
#define COST_COLL_MAX 1024
typedef struct cost_coll_prof {
    int n;                        /* measured sizes (0: no profile) */
    double bytes[COST_COLL_MAX];  /* message sizes, bytes, ascending */
    double sec[COST_COLL_MAX];    /* time of one collective at each, s */
    char source[8];               /* where the times came from: "nccl", "vidur" ("": unknown) */
} cost_coll_prof;

/* Time of one collective of BYTES from profile P (P->n >= 1), s: linear in
 * log(bytes) between measured sizes, the smallest size's time below them, and
 * the last segment's bandwidth (bytes per s) beyond the largest. */
double cost_coll_time(const cost_coll_prof *p, double bytes);

/* Loads the stored profile of collective COLL over NGPUS GPUs of catalog GPU
 * GPU from DB into *OUT: "allreduce" and "alltoall" (the NGPUS GPUs packed onto
 * nodes of gpus_per_node, as a replica's are: within one node when NGPUS <=
 * gpus_per_node), "send_recv" (NGPUS = 2 GPUs of one node) or "send_recv_nodes"
 * (2 GPUs on two nodes: the inter-node link).  Returns 1 when one is stored, 0
 * when none (or DB holds no calibration tables). */
typedef int (*cost_coll_fn)(sqlite3 *db, const char *coll, const char *gpu, int ngpus, cost_coll_prof *out);

/* The calibrator registers its loader here (calib/cnccl.c, cnccl_register): the
 * simulator reads no calibration table itself.  Without one the roofline prices
 * every collective with its link formula. */
void cost_set_collective(cost_coll_fn fn);

typedef struct cost_roofline {
    double compute_eff;           /* fraction of peak FLOP/s reached, (0,1] */
    double memory_eff;            /* fraction of peak bandwidth reached, (0,1] */
    double step_overhead_ms;      /* fixed CPU/launch overhead per step, ms */
    double allreduce_latency_us;  /* fixed latency per all-reduce, microseconds */
    double launch_us_per_layer;   /* fixed kernel-launch cost per layer per step, microseconds */
    cost_coll_prof ar;            /* measured all-reduce of the tp GPUs (ar.n == 0: the link
                                     formula allreduce_latency_us + ring bytes / link_gbs) */
    cost_coll_prof a2a;           /* measured all-to-all of the ep GPUs (a2a.n == 0: latency
                                     + bytes x (ep - 1) / ep / link) */
    cost_coll_prof sr;            /* measured send/recv between two GPUs of one node: the
                                     stage-to-stage transfer within a node (sr.n == 0:
                                     latency + bytes / link_gbs) */
    cost_coll_prof sr_nodes;      /* the same between two nodes (sr_nodes.n == 0: latency +
                                     node_link_latency_us + bytes / node_link_gbs) */
} cost_roofline;

/* Fills C's profiles from DB through the registered loader (none, or DB NULL:
 * all empty): C->ar with the all-reduce of H's GPU at H's tp (tp > 1), C->a2a
 * with its all-to-all at H's ep (ep > 1), C->sr and C->sr_nodes with its
 * send/recv within a node and across two (pp > 1).  Returns the number of
 * profiles loaded (0: the link formulas throughout). */
int cost_roofline_collectives(cost_roofline *c, const cost_hw *h, sqlite3 *db);

/* 1 when C prices some collective from a measured profile (cost_info's source
 * is then "datasheet+nccl", or "datasheet+vidur" when all are Vidur's). */
int cost_roofline_measured(const cost_roofline *c);

/* The source cost_info gives for a roofline of parameters C: "datasheet",
 * "datasheet+nccl" or "datasheet+vidur" (static strings). */
const char *cost_roofline_source(const cost_roofline *c);

/* Default roofline parameters (the `roofline` keys' defaults). */
extern const cost_roofline cost_roofline_defaults;

/* Where the time of one step goes (cost_breakdown): the first micro-batch's
 * path through the stages, then the other micro-batches. */
typedef struct cost_breakdown {
    double gpu_ms;                /* sum over stages of max(compute, memory), ms */
    int memory_bound;             /* 1 when memory is the larger in most of that time */
    double allreduce_ms;          /* tensor-parallel all-reduces on the path, ms */
    double alltoall_ms;           /* expert-parallel dispatch and combine on the path, ms */
    double transfer_ms;           /* activations sent between stages on the path, ms */
    double pipeline_ms;           /* (m - 1) x the slowest stage or transfer: the other
                                     micro-batches, ms */
    double launch_ms;             /* kernel launches on the path, ms */
    double overhead_ms;           /* step_overhead_ms */
    int microbatches;             /* m */
} cost_breakdown;

/* The pieces of the general roofline's structure, for a calibrated model that
 * prices pipeline and expert parallelism the same way (calib/ccost.c):
 * MoE layers among stage S's layers; the micro-batches m a step S is split
 * into (1 when pp = 1); one all-to-all of ACT bytes among the ep GPUs of
 * stage ST (the imported profile, else latency + ACT (ep - 1) / ep over the
 * link, the node link when the stage spans nodes), s; and the transfer of ACT
 * bytes from stage ST to ST + 1 (the send/recv profile, else latency + ACT
 * over the link), s. */
int cost_stage_moe_layers(const cost_hw *h, int s);
int cost_step_microbatches(const cost_hw *h, const cost_step *s);
double cost_stage_alltoall_s(const cost_hw *h, const cost_roofline *c, int st, double act);
double cost_stage_send_s(const cost_hw *h, const cost_roofline *c, int st, double act);

/* The roofline's step time of S on hardware H with roofline parameters C, ms,
 * with where it goes in B (may be NULL); the same number cost_step_ms gives for
 * `cost = roofline` on H.  0 for an empty step or without hardware. */
double cost_roofline_breakdown(const cost_hw *h, const cost_roofline *c, const cost_step *s,
                               cost_breakdown *b);

/* The table: rows by name (case-insensitive; NULL when none), in order (the
 * built-in rows linear and roofline, then the registered ones in the order of
 * registration), and the names joined by '|'. */
const cost_ops *cost_find(const char *name);
int cost_row_count(void);
const cost_ops *cost_row_at(int i);
int cost_row_index(const cost_ops *row);   /* its place in the table; -1 when not there */
void cost_choices(char *buf, size_t n);

/* Adds ROW (which must outlive every use) after the rows there.  Returns 0
 * (also when ROW is in the table already: registering twice is harmless), or
 * -1 when another row has its name or the table is full.  Not thread-safe:
 * register before anything loads a scenario. */
int cost_register(const cost_ops *row);

/* The default of `cost =`: the row "auto" once registered (ccost_register in
 * calib/ccost.c: the best stored calibrated model, else the learned model,
 * calib/clearn.c), else "roofline" (the simulator alone, without calib's rows).
 * Never NULL. */
const cost_ops *cost_default(void);

/* Makes M the model NAME with PARAMS (cost_linear, cost_roofline...), keeping
 * M->hw.  Returns 0, or -1 (unknown name, no init, out of memory). */
int cost_init(cost_model *m, const char *name, const void *params);

/* Which model produces M's step times (cost_info). */
void cost_describe(const cost_model *m, cost_info *out);

/* "compute_eff=V memory_eff=V step_overhead_ms=V allreduce_latency_us=V
 * launch_us_per_layer=V" of C (values %.17g) into BUF. */
void cost_roofline_coeffs(const cost_roofline *c, char *buf, size_t n);

/* V as the shortest %.Ng text that reads back as V exactly, appended to BUF
 * (N bytes, NUL-terminated); returns BUF's new length. */
size_t cost_fmt_exact(char *buf, size_t n, double v);

/* A cost_info source as the report names it: SOURCE's entry in the list
 * datasheet, scenario, steps-csv, vidur, cuda, cpu, net, observed, engine-log (a static string that
 * outlives the model), "other" for any other source or NULL. */
const char *cost_source_known(const char *source);

/* Releases M's state (safe on a zeroed model and twice). */
void cost_free(cost_model *m);

/* Duration of one step, in milliseconds (> 0 for a non-empty step; 0 for an
 * empty one or a model with no row). */
double cost_step_ms(const cost_model *m, const cost_step *s);

/* The framework-overhead part of cost_step_ms(M, S), ms (cost_ops.overhead_ms):
 * >= 0, and no more than the step time for the built-in and calibrated models
 * (their parts are non-negative); 0 for an empty step or a model without the split. */
double cost_step_overhead_ms(const cost_model *m, const cost_step *s);

/* FLOPs and HBM bytes of one step for the whole replica (all its GPUs), from the
 * model geometry (the general roofline's for an MoE, MLA, pp or ep replica);
 * both 0 when !m->have_hw.  Used for MFU/MBU reporting. */
void cost_step_work(const cost_model *m, const cost_step *s, double *flops, double *bytes);

/* Peak FLOP/s and bytes/s of the whole replica (tp x pp GPUs); 0 when !hw.have_hw. */
double cost_peak_flops(const cost_model *m);
double cost_peak_bw(const cost_model *m);

/* A model resolved for the hot path (an LLM replica's every step): the row's
 * dispatch settled once, and for step times that are the roofline's (`cost =
 * roofline`, or `auto` without a calibrated model) its constants computed once
 * and the roofline called directly.  cost_fast_ms and cost_fast_ms_work give
 * exactly (to the bit) what cost_step_ms and cost_step_work give for the model. */
typedef struct cost_fast {
    const cost_model *m;          /* the model (its row's step_ms unless roofline) */
    const cost_lm *lm;            /* the model's constants when it has the learned form, else NULL */
    int roofline;                 /* 1: the step times are the roofline's, from the fields below */
    int general;                  /* 1: the hardware needs the general roofline (not
                                     cost_hw_plain): work (and, with roofline, step times)
                                     from cost_roofline_breakdown's formulas */
    const cost_roofline *rp;      /* the roofline's parameters when roofline and general */
    int have_hw;                  /* m->hw.have_hw: FLOPs and bytes are counted */
    double two_params;            /* 2 x params: FLOPs per token computed */
    double attn_per_pair;         /* 4 x layers x heads x head_dim: FLOPs per (query, key) pair */
    double weight_bytes;          /* params x bytes per weight: read once per step */
    double kv_per_token;          /* 2 x layers x kv_heads x head_dim x KV bytes: KV bytes per token */
    int tp;                       /* tensor-parallel degree (>= 1) */
    double tp_d;                  /* the same as a double (what the divisions convert it to) */
    double peak;                  /* GPU peak FLOP/s x compute efficiency */
    double bw;                    /* GPU bandwidth (bytes/s) x memory efficiency */
    double ar_layers;             /* 2 x layers: all-reduces per step (tp > 1) */
    double ar_latency_s;          /* all-reduce latency, s */
    double ar_ring;               /* 2 (tp - 1) / tp: the ring's share of the message */
    double ar_link;               /* link bandwidth, bytes/s */
    double act_per_token;         /* hidden: activations per token (times ACT_BYTES in the message) */
    double overhead_ms;           /* step_overhead_ms */
    double launch_ms;             /* layers x launch_us_per_layer / 1000 */
} cost_fast;

/* Resolves M (built, and kept alive and unchanged while F is used) into F. */
void cost_fast_init(cost_fast *f, const cost_model *m);

/* cost_step_ms(f->m, s), exactly. */
double cost_fast_ms(const cost_fast *f, const cost_step *s);

/* cost_step_overhead_ms(f->m, s): the framework-overhead part of the step, ms. */
double cost_fast_overhead_ms(const cost_fast *f, const cost_step *s);

/* cost_step_ms(f->m, s), with cost_step_work(f->m, s, flops, bytes) (FLOPS and
 * BYTES not NULL): the roofline's work computed once for both. */
double cost_fast_ms_work(const cost_fast *f, const cost_step *s, double *flops, double *bytes);

#endif
