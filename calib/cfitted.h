/* cfitted.h -- `cost = fitted`: a parametric step-time model fitted to whole-step
 * measurements of one (model, GPU, weights) across TP degrees.
 *
 * step_ms = sum_k c_k f_k(step, tp), every c_k >= 0, with the terms (t = tp,
 * L = layers, P = params, D = hidden, H = heads, d = head_dim,
 * kvh = max(1, kv_heads / t)):
 *   fixed_ms              1                                   fixed per step
 *   weights_ms_per_gb     P * weight_bytes / t / 1e9          weights read, per GPU
 *   prefill_ms_per_tflop  2 P prefill_tokens / t / 1e12       prompt GEMMs, per GPU
 *   attn_ms_per_tflop     4 L H d pairs / t / 1e12            prompt attention, per GPU
 *   kv_ms_per_gb          kv_tokens 2 L kvh d kv_bytes / 1e9  KV cache read, per GPU
 *   decode_ms_per_tflop   2 P decode_tokens / t / 1e12        decode GEMMs, per GPU
 *   allreduce_ms_per_gb   2 L 2 (t-1)/t tokens D 2 / 1e9      ring all-reduce bytes (grows with t)
 *   allreduce_ms_per_hop  2 L (t-1)                           all-reduce latency (grows with t)
 *   launch_ms_per_layer   L x phases (prefill and/or decode)  kernel launches per layer
 *   seq_ms                prefill_seqs + decode_seqs          per-sequence CPU work
 * where tokens = prefill_tokens + decode_tokens, decode_tokens = decode_seqs x
 * decode_tokens_per_seq (cost.h), and pairs = prefill_pairs, plus, when a
 * decoding sequence computes t > 1 tokens (speculative verification), the pairs
 * its tokens attend beyond kv_tokens (cost_step_decode_pairs - kv_tokens): the
 * first token's attention rides on the KV read, the others' are computed like a
 * prompt's.
 * A mixture-of-experts model (experts > 0) has the same terms with P in the
 * FLOP terms the active parameters (catalog_counts.active) and in the weights
 * term the parameters a step reads: those outside the routed experts plus
 * moe_layers x expert_params x the expected distinct experts its tokens touch,
 * E (1 - (1 - k/E)^tokens) (uniform routing, cost_distinct_experts); with MLA
 * (kv_lora_rank > 0) the KV term reads layers x (kv_lora_rank +
 * qk_rope_head_dim) elements per token, whole on every GPU.  Pipeline and
 * expert parallelism (pp, ep > 1) have no terms of their own: such a replica
 * is priced by cfitted_staged_ms, the same terms laid out on the general
 * roofline's structure (cost.h).
 * Terms the data cannot separate (e.g. the TP terms when one degree was measured,
 * or per-layer launches when every step has one phase) are reported "aliased"
 * and held at 0; the term they are confounded with carries their cost.  With
 * two or more TP degrees but an all-reduce term still aliased (TP 2 and 8),
 * the all-reduce terms and the launches are instead held at physical priors
 * (status "prior": the roofline's all-reduce latency per hop, 1000 / link_gbs
 * ms per GB, its launch cost per layer) and the rest refitted, so that a degree
 * between the measured ones is interpolated rather than refused.  A model with
 * no step of a phase (tok_max or seq_max 0) refuses that phase (ccost.c).
 * Weights are 1/y^2 (relative errors); see nnls.h for the solver.
 */
#ifndef LATSIM_CFITTED_H
#define LATSIM_CFITTED_H

#include <stddef.h>
#include <sqlite3.h>
#include "core/catalog.h"
#include "cdb.h"
#include "llm/cost.h"

enum { CF_FIXED, CF_WEIGHTS, CF_PREFILL, CF_ATTN, CF_KV, CF_DECODE, CF_AR_BYTES, CF_AR_HOP,
       CF_LAUNCH, CF_SEQ, CF_NTERMS };

extern const char *const cfitted_term_names[CF_NTERMS];

/* Where a prediction stands relative to the measurements. */
typedef enum { CF_MEASURED, CF_INTERPOLATED, CF_EXTRAPOLATED, CF_REFUSED } cf_range;

typedef struct cfitted {
    cdb_fit fit;              /* the stored fit (kind "fitted") */
    model_spec model;         /* geometry of the fitted model */
    double weight_bytes;      /* bytes per weight */
    double kv_bytes;          /* bytes per KV element (2: the measurements' bf16 KV) */
    double c[CF_NTERMS];      /* coefficients, units as the term names */
} cfitted;

/* The feature values of STEP at TP (F has CF_NTERMS entries). */
void cfitted_features(const model_spec *m, double weight_bytes, double kv_bytes, int tp,
                      const cost_step *s, double *f);

/* Loads fit ID (kind "fitted") with its model's geometry.  Returns 0, 1 when
 * there is no such fit or it is not of kind fitted, -1 on error. */
int cfitted_load(sqlite3 *db, int64_t id, cfitted *out, char *err, size_t errlen);

/* Step time in ms at TP; PARTS (CF_NTERMS, may be NULL) receives each term's ms. */
double cfitted_step_ms(const cfitted *m, int tp, const cost_step *s, double *parts);

/* A fitted model at one TP with each term scaled by a ratio, prepared for evaluation
 * per step: what does not depend on the step is computed once (cfitted_eval_init),
 * and cfitted_eval_ms performs the remaining operations of cfitted_features,
 * cfitted_step_ms and the caller's scaled sum (sum over k, in order, of
 * (c_k f_k) r_k) in the same order on the same values: its result is that sum to
 * the last bit (tests/test_costtab.c). */
typedef struct cfitted_eval {
    double c[CF_NTERMS];      /* coefficients, units as the term names */
    double r[CF_NTERMS];      /* per-term ratios (1: same GPU) */
    double head;              /* fixed and weights terms: (0 + (c0 f0) r0) + (c1 f1) r1, ms */
    double t;                 /* TP degree as the features use it (>= 1) */
    double k_prefill;         /* 2 P */
    double k_attn;            /* 4 L heads head_dim */
    double layers;            /* L */
    double kvh;               /* KV heads per GPU, max(1, kv_heads / t) */
    double head_dim;          /* d */
    double kv_bytes;          /* bytes per KV element */
    double k_ar;              /* 2 L 2 (t - 1) / t */
    double hidden;            /* D */
    double hop;               /* all-reduce latency term (c7 f7) r7, ms */
    double launch[3];         /* launch term (c8 L phases) r8 for 0, 1, 2 phases, ms */
    int moe;                  /* 1: a mixture of experts (weights term per step) */
    int mla;                  /* 1: MLA (KV term from the latent) */
    double wb;                /* bytes per weight */
    double rest;              /* MoE: parameters outside the routed experts, count */
    double per_expert;        /* MoE: moe_layers x one routed expert's parameters, count */
    double experts, k;        /* MoE: routed experts per layer, and per token */
    double mla_elems;         /* MLA: KV elements per token, layers x (latent + RoPE key) */
    int staged;               /* 1: pp or ep > 1, priced by cfitted_staged_ms (not cfitted_eval_ms) */
} cfitted_eval;

/* Prepares E for M at TP with term ratios R[CF_NTERMS]. */
void cfitted_eval_init(const cfitted *m, int tp, const double *r, cfitted_eval *e);

/* Sum over terms of (c_k f_k(S)) r_k, ms, for a non-empty step S. */
double cfitted_eval_ms(const cfitted_eval *e, const cost_step *s);

/* Parts of cfitted_staged_ms: the CF_NTERMS terms on the first micro-batch's
 * path, then the all-to-alls and stage transfers on it, then the other
 * micro-batches. */
enum { CF_ST_ALLTOALL = CF_NTERMS, CF_ST_TRANSFER, CF_ST_PIPELINE, CF_ST_NPARTS };

/* Step time of S (ms) of fitted model M on a replica H with pipeline stages or
 * expert parallelism (pp or ep > 1), each term k scaled by R[k], built as the
 * general roofline builds its step (cost.h): S is split into m micro-batches
 * (cost_step_microbatches), tokens, pairs and KV reads evenly; a stage of n of
 * the L layers (nm of them MoE) costs the per-layer terms for its layers -
 * weights (rest n / L + nm x expert x the distinct experts of the micro-batch's
 * tokens, over tp), FLOP terms with the active parameters rest n / L + nm k
 * expert (the experts' share times expert_imbalance when ep > 1), attention, KV
 * and launches x n / L, all-reduces per all-reduce the stage makes (two per
 * layer, one per MoE layer when ep = tp) - plus, when ep > 1, two all-to-alls
 * per MoE layer priced as the roofline prices them (RC's profile or link);
 * step = the stages and the transfers between them (RC: cost_stage_send_s),
 * plus (m - 1) x the slowest of them, plus fixed_ms and seq_ms once per step.
 * PARTS (CF_ST_NPARTS, may be NULL) receives where the time goes; they sum to
 * the result.  0 for an empty step. */
double cfitted_staged_ms(const cfitted *m, const cost_hw *h, const cost_roofline *rc, const double *r,
                         const cost_step *s, double *parts);

/* 1 when M, measured at other TP degrees (TP outside them), carries to TP:
 * its all-reduce terms are held at physical priors (status "prior": an
 * observed fit, cobsfit.h) or M is a posterior measured at one TP degree
 * (cfitpost.h: no term aliased, the all-reduce terms fitted toward the
 * learned link model), so the link model prices TP's all-reduces and its
 * other terms are per GPU. */
int cfitted_tp_carried(const cfitted *m, int tp);

/* How TP relates to the measured degrees: measured, interpolated (between two),
 * extrapolated (outside, within a factor 2, with >= 2 degrees measured), or
 * refused (further out, or another degree when only one was measured and the TP
 * terms are aliased).  WHY receives a sentence for refused/extrapolated. */
cf_range cfitted_tp_range(const cfitted *m, int tp, char *why, size_t n);

/* Whether STEP lies within 2x the measured token, batch and context ranges. */
int cfitted_step_in_range(const cfitted *m, const cost_step *s);

#endif
