/* cprofile.h -- `cost = profile`: step times summed from per-operator measurements.
 *
 * For one (model, GPU, TP degree), from the calibration store:
 *   linear     the per-layer operators of the model (Vidur's mlp.csv: layer norms,
 *              QKV/output projections, rotary, MLP, residual add) summed at each
 *              measured token count, interpolated over the step's tokens (prompt
 *              tokens + decoding sequences) by GSL's Steffen method (monotone
 *              between measured points, passes through them); beyond the largest
 *              count it grows in proportion to the tokens (marked extrapolated);
 *              times layers, plus the embedding operator once per step;
 *   attention  its own fitted model per layer (nnls.h), from attention kernel
 *              measurements of the same GPU, scaled by heads per GPU and head_dim
 *              when they were taken on another geometry:
 *                prefill  a0 + a1 * attended pairs + a2 * prompt tokens
 *                decode   b0 + b1 * KV tokens read + b2 * sequences;
 *   allreduce  two all-reduces per layer of tokens x hidden x 2 bytes over TP GPUs,
 *              interpolated (Steffen) in bytes from the GPU's network profile;
 *   cpu        per-step CPU overhead (schedule, sample, prepare inputs, process
 *              outputs) interpolated over the sequences in the step.
 * Its cross-validated error is that of the linear interpolation: every k-th token
 * count held out and predicted from the others.
 */
#ifndef LATSIM_CPROFILE_H
#define LATSIM_CPROFILE_H

#include <stddef.h>
#include <sqlite3.h>
#include <gsl/gsl_interp.h>
#include "core/catalog.h"
#include "cdb.h"
#include "llm/cost.h"

/* A measured curve y(x), x strictly increasing. */
typedef struct cp_curve {
    size_t n;               /* points */
    double *x;              /* abscissae (tokens, bytes or sequences) */
    double *y;              /* ms */
    gsl_interp *it;         /* Steffen (n >= 3) or linear (n == 2); NULL when n < 2 */
    int proportional;       /* beyond x[n-1]: 1 = y grows as x, 0 = last slope */
} cp_curve;

enum { CP_LINEAR, CP_EMB, CP_ATTN_PREFILL, CP_ATTN_DECODE, CP_ALLREDUCE, CP_CPU, CP_NPARTS };
extern const char *const cprofile_part_names[CP_NPARTS];

/* The per-layer operator rows by the operator they time (llm/opshare.h): QKV
 * (attn_pre_proj), the output projection (attn_post_proj), the MLP
 * (mlp_up_proj, mlp_down_proj, mlp_act) and norms and element-wise work
 * (input_layernorm, post_attention_layernorm, attn_rope, add, any other). */
enum { CP_CLS_QKV, CP_CLS_OUT, CP_CLS_MLP, CP_CLS_NORM, CP_NCLS };

/* The class of operator row NAME (CP_CLS_NORM for a name not listed). */
int cprofile_op_class(const char *name);

enum { CP_A0, CP_A1, CP_A2, CP_B0, CP_B1, CP_B2, CP_NATTN };
extern const char *const cprofile_attn_names[CP_NATTN];

typedef struct cprofile {
    cdb_fit fit;            /* the stored model (kind "profile") */
    model_spec model;       /* its geometry */
    int tp;                 /* the TP degree it is for */
    cp_curve lin;           /* per-layer operator sum vs tokens, ms */
    cp_curve emb;           /* embedding vs tokens, ms per step (n == 0: none) */
    cp_curve ar;            /* one all-reduce vs bytes, ms (n == 0 when tp == 1) */
    cp_curve cpu;           /* CPU overhead vs sequences, ms (n == 0: none) */
    cp_curve cls[CP_NCLS];  /* the per-layer rows of each class vs tokens, ms (they sum to lin
                               at every measured token count) */
    double attn[CP_NATTN];  /* attention coefficients at the measured geometry */
    double q_scale;         /* (heads/tp * head_dim) of the model over the measured geometry's */
    double kv_scale;        /* (max(1, kv_heads/tp) * head_dim) likewise */
} cprofile;

/* Builds the profile of (MODEL, GPU, TP) from the stored measurements and stores
 * it (in the caller's transaction); fills OUT.  Returns 0, or -1 with one line in
 * ERR (no operator measurements for that TP, no attention or all-reduce
 * measurements for the GPU, ...). */
int cprofile_build(sqlite3 *db, const char *model, const char *gpu, int tp, const char *tool,
                   cprofile *out, char *err, size_t errlen);

/* Loads stored profile ID.  Returns 0, 1 if there is none of kind profile, -1. */
int cprofile_load(sqlite3 *db, int64_t id, cprofile *out, char *err, size_t errlen);
void cprofile_free(cprofile *p);

/* The per-layer operator rows of each class at TOKENS, ms, into OUT[CP_NCLS]
 * (their sum is cprofile_linear_ms's at a measured token count). */
void cprofile_linear_classes(const cprofile *p, double tokens, double out[CP_NCLS]);

/* Step time in ms; PARTS (CP_NPARTS, may be NULL) receives each part; *EXTRAP (may
 * be NULL) is set to 1 when a curve was extended beyond its measurements. */
double cprofile_step_ms(const cprofile *p, const cost_step *s, double *parts, int *extrap);

/* The attention parts of step S, ms: prefill (0 without prompt tokens) and decode
 * (0 without decoding sequences: each context read once, plus a per-query term
 * for each decode token, decode_seqs x decode_tokens_per_seq).  cprofile_step_ms
 * and the tabulated evaluation (ccost.c) both use these, so they compute the
 * same numbers. */
static inline double cprofile_attn_prefill_ms(const cprofile *p, const cost_step *s)
{
    if (s->prefill_tokens <= 0)
        return 0;
    return (double)p->model.layers * (p->attn[CP_A0] + p->q_scale * (p->attn[CP_A1] * s->prefill_pairs / 1e6 +
                                                                  p->attn[CP_A2] * (double)s->prefill_tokens / 1e3));
}

static inline double cprofile_attn_decode_ms(const cprofile *p, const cost_step *s)
{
    if (s->decode_seqs <= 0)
        return 0;
    return (double)p->model.layers * (p->attn[CP_B0] + p->kv_scale * p->attn[CP_B1] * (double)s->kv_tokens / 1e6 +
                                      p->q_scale * p->attn[CP_B2] * (double)cost_step_decode_tokens(s));
}

/* Per-layer linear-operator time at TOKENS (ms). */
double cprofile_linear_ms(const cprofile *p, double tokens);

/* Curves: build from N points (sorted and duplicate x averaged here), evaluate. */
int cp_curve_build(cp_curve *c, const double *x, const double *y, size_t n, int proportional);
double cp_curve_eval(const cp_curve *c, double x, int *extrap);
void cp_curve_free(cp_curve *c);

#endif
