/* cprior.c -- the prior and the floor of a fitted step model (see cprior.h). */
#include "cprior.h"

#include "clearn.h"

#include <math.h>
#include <string.h>

/* The dense peak of WEIGHTS' precision on G, TFLOP/s. */
static double peak_of(const gpu_spec *g, const char *weights)
{
    int w8 = weights && (!strcmp(weights, "fp8") || !strcmp(weights, "int8"));
    return w8 && g->fp8_tflops > 0 ? g->fp8_tflops : g->bf16_tflops;
}

void cprior_terms(const gpu_spec *g, const char *engine, const model_spec *m, int tp, const char *weights, double *terms,
                  double *width)
{
    (void) tp;   /* the terms are per GPU and per collective: the TP degree enters the features */
    cprior_learned_terms(g, engine, m, weights, terms);
    const double l2 = log(2.0), l4 = log(4.0);
    for (int k = 0; k < CF_NTERMS; k++) width[k] = l2;
    width[CF_FIXED] = width[CF_LAUNCH] = width[CF_AR_HOP] = l4;
    width[CF_SEQ] = 0;
}

void cprior_learned_terms(const gpu_spec *g, const char *engine, const model_spec *m, const char *weights,
                          double *terms)
{
    /* The learned default of (G, ENGINE) (clearn.h) in the fitted model's terms. */
    clearn_prior lp;
    clearn_prior_for(NULL, g, engine, &lp);
    const clearn_coef *c = &lp.c;
    int w8 = weights && (!strcmp(weights, "fp8") || !strcmp(weights, "int8"));
    double peak = peak_of(g, weights) * c->compute_eff * (w8 && g->fp8_tflops > 0 ? c->lowp_eff : 1);
    double rc = 1000 / peak, rm = 1000 / (g->mem_bw_gbs * c->memory_eff);
    double gqa = 1;
    if (m && m->kv_lora_rank <= 0 && m->kv_heads > 0 && m->heads > m->kv_heads)
        gqa = pow((double) m->heads / m->kv_heads, 1.0 - c->gqa_reuse);
    terms[CF_FIXED] = c->fixed_ms;
    terms[CF_WEIGHTS] = rm;
    terms[CF_PREFILL] = rc;
    terms[CF_ATTN] = rc / c->attn_eff;
    terms[CF_KV] = rm / c->kv_eff * gqa;
    terms[CF_DECODE] = rc;
    terms[CF_AR_BYTES] = g->link_gbs > 0 ? 1000 / (g->link_gbs * c->link_eff) : 0;
    terms[CF_AR_HOP] = c->ar_lat_us * 1e-3;
    terms[CF_LAUNCH] = c->launch_us * 1e-3;
    terms[CF_SEQ] = c->seq_us * 1e-3;
}

void cprior_floor(const gpu_spec *g, const char *weights, double *lo)
{
    for (int k = 0; k < CF_NTERMS; k++) lo[k] = 0;
    lo[CF_PREFILL] = lo[CF_ATTN] = lo[CF_DECODE] = 1000 / peak_of(g, weights);
    lo[CF_WEIGHTS] = lo[CF_KV] = 1000 / g->mem_bw_gbs;
}
