/* opshare.h -- a step's time by operator: attention (prefill, decode), the
 * linear layers (QKV, output projection, MLP, routed and shared experts),
 * norms and element-wise kernels, the logits and sampling, the collectives
 * (all-reduce, all-to-all, pipeline transfers and bubbles) and the framework
 * (launches, fixed per-step and CPU overhead).
 *
 * A cost model gives a step's time in parts (calib/ccost.c, `latsim cost`):
 * GPU kernel time (compute, memory, overlap; a fitted model's weights,
 * prefill, attention, kv, decode; a profile's rows), collectives and
 * framework.  The collectives and the framework are operators of their own;
 * the GPU kernel time is apportioned over the kernel operators in proportion
 * to each one's own roofline time, max(FLOPs / peak, bytes / bandwidth), from
 * the per-operator FLOPs and bytes below (whole replica, one step; L layers, H
 * hidden, I intermediate, V vocabulary, n_h and n_kv heads of d, T tokens
 * computed, w bytes per weight):
 *   attention   4 L n_h d FLOPs per (query, key) pair (prefill: the prompt's
 *               pairs; decode: the decode tokens' over their contexts); bytes:
 *               the KV cache read (decode: every context once) and written
 *   QKV         L H (n_h + 2 n_kv) d weights: 2 x weights x T FLOPs, weights x w
 *               bytes, plus T x H activations in and out (2 bytes each)
 *   output      L n_h d H weights, likewise
 *   MLP         3 H I per dense layer, likewise
 *   experts     per MoE layer: FLOPs of the k routed and the shared experts per
 *               token; bytes of the shared ones and of the distinct routed
 *               experts the T tokens touch (cost_distinct_experts)
 *   norms, element-wise   per layer and token: two norms, two residual adds
 *               and the gated activation: (12 H + 4 I) FLOPs, (10 H + 3 I) x 2
 *               bytes
 *   logits, sampling      the LM head (V H weights) for each sequence that
 *               samples (decode tokens and prompts that complete): 2 V H FLOPs
 *               each, its weights once plus V x 4 bytes of logits each
 * The parts add up to the step: the kernel operators to the GPU time exactly
 * (up to rounding), the others as the model gave them.  Attention's share
 * grows with context as its bytes do.
 */
#ifndef LATSIM_OPSHARE_H
#define LATSIM_OPSHARE_H

#include "llm/cost.h"

typedef enum {
    OP_ATTN_PREFILL, OP_ATTN_DECODE, OP_QKV, OP_OUT_PROJ, OP_MLP, OP_EXPERTS, OP_NORM, OP_LOGITS,
    OP_ALLREDUCE, OP_ALLTOALL, OP_PIPELINE, OP_FRAMEWORK, OP_N
} op_kind;

/* The operators' names, as reported ("attention_prefill", ...). */
extern const char *const OP_NAMES[OP_N];

/* Where a cost model's part named NAME goes: OP_ALLREDUCE (allreduce,
 * allreduce_bytes, allreduce_hops), OP_ALLTOALL, OP_PIPELINE (pipeline,
 * stage_transfer), OP_FRAMEWORK (launch, cpu, overhead, fixed), or -1: GPU
 * kernel time, apportioned over the kernel operators. */
int op_of_part(const char *name);

/* The kernel operators' FLOPs and bytes of step S on H (the formulas above;
 * the collectives and framework entries 0). */
void op_work(const cost_hw *h, const cost_step *s, double flops[OP_N], double bytes[OP_N]);

/* How fast a cost model turns each kernel operator's FLOPs and bytes into
 * time, for apportioning (op_split_rates).  The roofline's: every FLOP at the
 * peak, every byte at the bandwidth.  The learned model's (calib/clearn.h):
 * GEMMs (QKV, output, MLP, experts, logits) at compute_eff T / (T + t_half),
 * attention at attn_eff of compute_eff, norms and element-wise at
 * compute_eff, bytes at memory_eff, and decode attention's KV reads at kv_eff
 * of it with the grouped-query re-reads. */
typedef struct op_rates {
    double flop_s;            /* s per FLOP of a large GEMM, whole replica (1 / (tp x peak x compute_eff)) */
    double t_half;            /* tokens per step at which GEMMs run at half that rate, tokens (0: always) */
    double attn_flop_s;       /* s per attention FLOP */
    double byte_s;            /* s per byte (1 / (tp x bandwidth x memory_eff)) */
    double kv_read;           /* time of a KV byte decode attention reads, in bytes' time (>= 1) */
} op_rates;

/* The learned form's rates from its constants LM (cost.h's cost_lm: a plain
 * replica of H).  Returns 0, or -1 when LM is NULL or H has no parameters. */
int op_rates_lm(const cost_hw *h, const cost_lm *lm, op_rates *r);

/* The kernel operators' own times of S on H under R, s (t[k] = max(compute,
 * memory); the collectives and framework 0): the apportioning weights. */
void op_times(const cost_hw *h, const op_rates *r, const cost_step *s, double t[OP_N]);

/* As op_split, with the kernel operators weighted by their times under R
 * (NULL: the roofline's, op_split itself). */
void op_split_rates(const cost_hw *h, const op_rates *r, const cost_step *s, double gpu_ms, double ar_ms,
                    double a2a_ms, double pipe_ms, double fw_ms, double out[OP_N]);

/* Splits a step of S on H into OUT[OP_N], ms: GPU_MS over the kernel
 * operators by their roofline times, and AR_MS, A2A_MS, PIPE_MS, FW_MS as
 * they are.  A step with no kernel work puts GPU_MS into MLP. */
void op_split(const cost_hw *h, const cost_step *s, double gpu_ms, double ar_ms, double a2a_ms, double pipe_ms,
              double fw_ms, double out[OP_N]);

/* op_shares = yes (an LLM pool): adds one step of S on H, MS long of which
 * FW_MS is framework overhead, to ACC[OP_N] (ms summed over the window).
 * Under the learned model (LM, its constants: not NULL) the rest is its
 * all-reduces (ar_n (ar_lat + ar_tok T)) and its GPU time, apportioned over
 * the kernel operators at the learned rates (op_rates_lm); else (LM NULL)
 * the rest is apportioned as the roofline's parts of S (cost_roofline_breakdown
 * with its defaults: GPU, all-reduce, all-to-all, transfers and bubbles), its
 * GPU part over the kernel operators by their roofline times.  Cannot fail. */
void op_accumulate(double acc[OP_N], const cost_hw *h, const cost_lm *lm, const cost_step *s, double ms, double fw_ms);

/* Adds ACC's shares to a pool's result: op_share_NAME = ACC[k] / the sum (0
 * when nothing stepped), and op_step_ms, the sum.  Returns 0, or -1 when out of
 * memory. */
struct pool_result;
int op_report(const double acc[OP_N], struct pool_result *out);

#endif
