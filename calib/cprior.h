/* cprior.h -- the prior of a fitted step model (cfitted.h terms): where a fit
 * of (GPU, engine, model, TP, weights) starts and what it is regularised toward,
 * with a stated width per term, and the hardware floor no fitted term may go
 * below.
 *
 * The prior is the learned default of the GPU and engine (clearn.h) in the
 * fitted model's terms (cprior_learned_terms below): what latsim predicts
 * with nothing calibrated, so a term the data cannot determine stays there
 * (status `prior`) and carries to another GPU, model or precision exactly as
 * the learned model does.  Widths (standard deviations of the log-coefficient):
 * ln 2 (a factor 2) for the rates, ln 4 for the fixed, launch and all-reduce
 * latency terms, the per-sequence term held (width 0).  They are wider than
 * the learned model's held-out step-time errors (12-27 %, docs/accuracy.md)
 * because one term can be off by more than the step it is part of.
 *
 * Floor (cprior_floor): the rates at 100 % of the datasheet peak (compute at
 * the dense peak of the weights' precision, bytes at peak bandwidth); every
 * step of a model whose rates are at or above them takes at least the time of
 * its GEMMs at peak and of its weights read at peak bandwidth.
 */
#ifndef LATSIM_CPRIOR_H
#define LATSIM_CPRIOR_H

#include "cfitted.h"

/* The prior of (GPU, ENGINE (NULL: vLLM), MODEL, TP, WEIGHTS) into TERMS
 * and WIDTH (CF_NTERMS each; WIDTH the log-sd, 0 for a term held where it is). */
void cprior_terms(const gpu_spec *g, const char *engine, const model_spec *m, int tp, const char *weights, double *terms,
                  double *width);

/* The learned default of (G, ENGINE (NULL: vLLM), M, WEIGHTS) (clearn.h) in the fitted
 * model's terms, into TERMS (CF_NTERMS): 1000 / (peak x compute_eff) ms per TFLOP for
 * the prefill and decode GEMMs (fp8/int8 at their peak x lowp_eff), that / attn_eff
 * for attention, 1000 / (bandwidth x memory_eff) ms per GB for the weights, that /
 * kv_eff x the grouped-query re-reads for the KV cache, 1000 / (link_gbs x link_eff)
 * ms per GB and ar_lat_us per hop, launch_us per layer, fixed_ms per step and seq_us
 * per sequence.  What carries a fit to another GPU or model (ccost.c): each term x
 * this structure's term there / here; and every fit's prior (cprior_terms). */
void cprior_learned_terms(const gpu_spec *g, const char *engine, const model_spec *m, const char *weights,
                          double *terms);

/* The lowest value of each term (CF_NTERMS): the rates at peak, 0 for the rest. */
void cprior_floor(const gpu_spec *g, const char *weights, double *lo);

#endif
