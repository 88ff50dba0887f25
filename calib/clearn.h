/* clearn.h -- the learned step model: physical in form, learned in its efficiencies.
 *
 * A step's FLOPs and bytes per GPU come from the model geometry exactly as the
 * roofline counts them (sim/llm/cost.h: the general roofline's stages, MoE
 * experts touched, KV heads per TP rank); how fast the GPU turns them into time
 * is learned from public measurements (docs/learned.md):
 *
 *   tc  = F_lin (T + t_half) / T / (peak x compute_eff x lowp)
 *         + F_attn / (peak x compute_eff x lowp x attn_eff)   GEMMs of T tokens run at
 *                                                             compute_eff T / (T + t_half)
 *   tm  = (weight bytes + KV written) / (bandwidth x memory_eff)
 *         + KV read by decode attention x (heads / kv_heads)^(1 - gqa_reuse)
 *           / (bandwidth x memory_eff x kv_eff)
 *   gpu = max(tc, tm) + overlap x min(tc, tm)                 0: full overlap, 1: a sum
 *   ar  = all-reduces x (ar_lat_us + ring bytes / (link x link_eff))   (tp > 1)
 *   a2a = 2 x MoE layers x (ar_lat_us + bytes (ep-1)/ep / (link x link_eff))   (ep > 1)
 *   launch = layers x (graph_us for a decode-only step of <= 512 sequences, the
 *            batches engines capture in CUDA graphs; else launch_us)
 *   step = stages (pp: the roofline's pipeline) + fixed_ms + seq_us x sequences
 *
 * Every efficiency is a logistic of its learned value, so none reaches 1; the
 * times (t_half, launch, fixed, per-sequence, latency) are exponentials, so none
 * is negative.  A coefficient is a sum of offsets on the log/logit scale:
 * global + vendor + link class + GPU + engine, each offset shrunk toward 0 by a
 * ridge penalty in training (`latsim calib train`), so a GPU or engine with few
 * measurements keeps its vendor's and the cross-engine mean, and one with none
 * (a catalog GPU never measured, `engine = sglang`) takes them whole: marked
 * `extrapolated`.  The trained table is compiled in (calib/clearn_coef.c).
 */
#ifndef LATSIM_CLEARN_H
#define LATSIM_CLEARN_H

#include <stddef.h>
#include <stdio.h>
#include "llm/cost.h"
#include "llm/engines.h"
#include "llm/opshare.h"

/* The learned coefficients, on their learned (unbounded) scale, in this order. */
enum {
    LP_COMPUTE,    /* compute_eff: share of the dtype's dense peak at large GEMMs, logit */
    LP_THALF,      /* t_half: tokens per step at which GEMMs reach half of it, log tokens */
    LP_MEMORY,     /* memory_eff: share of peak bandwidth, logit */
    LP_OVERLAP,    /* overlap: how much of the smaller of compute and memory adds, logit */
    LP_LAUNCH,     /* launch_us: per layer per step without CUDA graphs, log microseconds */
    LP_GRAPH,      /* graph_us: per layer per decode step in a CUDA graph, log microseconds */
    LP_FIXED,      /* fixed_ms: per step (scheduler, sampler), log ms */
    LP_SEQ,        /* seq_us: per sequence in the step (input preparation), log microseconds */
    LP_LINK,       /* link_eff: share of the link's bandwidth an all-reduce reaches, logit */
    LP_ARLAT,      /* ar_lat_us: latency of one collective, log microseconds */
    LP_ATTN,       /* attn_eff: attention kernels' share of compute_eff, logit */
    LP_LOWP,       /* lowp_eff: fp8/int8/fp4 kernels' share of compute_eff at their own peak, logit */
    LP_KV,         /* kv_eff: decode attention's KV reads' share of memory_eff, logit */
    LP_GQA,        /* gqa_reuse: how much a decode kernel reuses a KV head across its query heads, logit */
    LP_N
};

/* The coefficients in physical units (clearn_physical). */
typedef struct clearn_coef {
    double compute_eff;   /* share of the dense peak at large GEMMs, (0, 1) */
    double t_half;        /* tokens per step at which GEMM efficiency is half compute_eff, tokens */
    double memory_eff;    /* share of the peak bandwidth reached, (0, 1) */
    double overlap;       /* share of min(compute, memory) time that adds to the max, (0, 1) */
    double launch_us;     /* launch/framework cost per layer per step, microseconds */
    double graph_us;      /* the same for a decode step run as a CUDA graph, microseconds */
    double fixed_ms;      /* fixed cost per step, ms */
    double seq_us;        /* cost per sequence in the step, microseconds */
    double link_eff;      /* share of link_gbs a collective reaches, (0, 1) */
    double ar_lat_us;     /* latency of one collective, microseconds */
    double attn_eff;      /* attention FLOPs' efficiency relative to compute_eff, (0, 1) */
    double lowp_eff;      /* low-precision (fp8/int8/fp4) kernels' efficiency relative to
                             compute_eff, at their own peak, (0, 1) */
    double kv_eff;        /* decode attention's KV-cache reads: their share of memory_eff
                             (paged-attention kernels read the cache in small blocks), (0, 1) */
    double gqa_reuse;     /* share of grouped-query reuse a decode kernel achieves, (0, 1): the
                             KV is read as if by kv_heads x (heads / kv_heads)^(1 - gqa_reuse)
                             heads (a kernel that loads K and V once per query head: 0) */
} clearn_coef;

/* Names of the LP_ coefficients (physical names, as docs/learned.md lists them). */
extern const char *const clearn_names[LP_N];

/* The physical coefficients of learned values TH (LP_N). */
void clearn_physical(const double *th, clearn_coef *out);

/* Groups of offsets (a coefficient = global + one offset per group). */
enum { LG_VENDOR, LG_LINK, LG_GPU, LG_ENGINE, LG_N };
extern const char *const clearn_group_names[LG_N];

/* One row of the trained table: the offsets of one level of one group. */
typedef struct clearn_level {
    int group;            /* LG_ */
    const char *name;     /* vendor (nvidia, amd, intel, habana), link class (nvlink, pcie,
                             if, network), catalog GPU or engine */
    int rows;             /* training rows of this level */
    double off[LP_N];     /* offsets, on the learned scale */
} clearn_level;

/* A class's cross-validated error (the scoreboard's). */
typedef struct clearn_cv {
    const char *gpu;      /* catalog GPU */
    const char *engine;   /* engine */
    int rows;             /* rows of that class in the corpus */
    double mape;          /* its error when its model is held out (leave-one-model-out), % */
} clearn_cv;

/* The trained table (clearn_coef.c, generated by `latsim calib train`). */
typedef struct clearn_table {
    double global[LP_N];          /* the cross-GPU, cross-engine values */
    const clearn_level *levels;   /* offsets by level */
    int nlevels;
    const clearn_cv *cv;          /* cross-validated errors by (GPU, engine) */
    int ncv;
    double mape_gpu;              /* leave-one-GPU-out MAPE, all rows, % (an unmeasured GPU's error) */
    double mape_engine;           /* leave-one-engine-out MAPE, % (an unmeasured engine's error) */
    double mape_model;            /* leave-one-model-out MAPE, % */
    const char *command;          /* the command that regenerates it */
} clearn_table;

extern const clearn_table clearn_trained;

/* The GPU's vendor and link class (catalog names first, then its name and link). */
const char *clearn_vendor(const gpu_spec *g);
const char *clearn_link_class(const gpu_spec *g);

/* The engine names a pool may give (`engine =`) are the rows of sim/llm's
 * engine table (llm/engines.h); a pool without one has its default. */

/* What the learned model is for one pool: its coefficients and where they come from. */
typedef struct clearn_prior {
    double th[LP_N];              /* learned-scale values (global + offsets) */
    clearn_coef c;                /* the same, physical */
    int gpu_measured;             /* 1: the GPU has training rows */
    int engine_measured;          /* 1: the engine has training rows */
    int extrapolated;             /* !gpu_measured || !engine_measured */
    double mape;                  /* its cross-validated error, %: the class's when measured,
                                     else the leave-one-GPU-out / -engine-out error */
    char note[200];               /* what was carried, when extrapolated ("" else) */
} clearn_prior;

/* The learned coefficients for GPU G under ENGINE (NULL or "": the default) from
 * table T (NULL: clearn_trained), in OUT. */
void clearn_prior_for(const clearn_table *t, const gpu_spec *g, const char *engine, clearn_prior *out);

/* Where a learned step's time goes (ms). */
typedef struct clearn_parts {
    double compute, memory, overlap_ms, allreduce, alltoall, launch, cpu, pipeline;
} clearn_parts;

/* Step time of S on H with coefficients C, ms (0 for an empty step or no
 * hardware); where it goes in P (may be NULL; its parts add up to the time). */
double clearn_step_ms(const cost_hw *h, const clearn_coef *c, const cost_step *s, clearn_parts *p);

/* The hardware floor of S on H: its FLOPs at the dtype's dense peak and its
 * weight bytes at peak bandwidth, the larger, ms.  No learned step is faster. */
double clearn_floor_ms(const cost_hw *h, const cost_step *s);

/* The class coefficients of M, a `learned` model (built). */
const clearn_prior *clearn_model_prior(const cost_model *m);

/* The learned rates per operator of H under C (llm/opshare.h: GEMMs at
 * compute_eff with t_half, attention at attn_eff of it, bytes at memory_eff,
 * decode KV reads at kv_eff with the grouped-query re-reads), per replica.
 * Returns 0, or -1 when H has no peak or bandwidth (clearn_ops.c). */
int clearn_op_rates(const cost_hw *h, const clearn_coef *c, op_rates *r);

/* Registers the `learned` row of the cost-model table, and the learned
 * coefficients of encoder passes (clearn_enc_register).  Returns 0 or -1. */
int clearn_register(void);

/* Hands the simulator's encoders the learned coefficients (core/encoder.h,
 * enc_set_learned; calib/clearn_enc.c). */
void clearn_enc_register(void);

/* Training and the scoreboard (clearn_train.c): clearn_train and clearn_validate,
 * declared in calib.h for the front end. */
#include "calib.h"

#endif
