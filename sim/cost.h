/* cost.h -- how long one forward step of an LLM replica takes.
 *
 * The scheduler describes a step by what it computes (cost_step) and asks the
 * cost model for its duration; that is the whole interface, so a calibrated
 * model can replace the built-in ones without touching any scheduler.
 *
 * Built-in models:
 *   linear    step_ms = step_base_ms + prefill_ms_per_token * prefill_tokens
 *                       + decode_ms_per_seq * decode_seqs
 *                       + kv_ms_per_1k_tokens * kv_tokens / 1000
 *   roofline  from the catalog's GPU and model: the step takes the longer of
 *             its FLOPs at (peak * compute_eff) and its bytes at
 *             (bandwidth * memory_eff), plus the tensor-parallel all-reduces,
 *             plus step_overhead_ms.  FLOPs: 2 * params per token, plus attention
 *             4 * layers * heads * head_dim per (query, key) pair.  Bytes: the
 *             weights once per step, plus the KV cache read and written.
 */
#ifndef LATSIM_COST_H
#define LATSIM_COST_H

#include <stdint.h>
#include "catalog.h"

typedef struct cost_step {
    int64_t prefill_tokens;   /* prompt tokens computed in this step (all sequences) */
    double  prefill_pairs;    /* (query, key) pairs attended by those prompt tokens:
                                 for a chunk of c tokens after k cached ones,
                                 c*k + c*(c+1)/2 */
    int32_t prefill_seqs;     /* sequences with prompt tokens in this step */
    int32_t decode_seqs;      /* sequences producing one output token */
    int64_t kv_tokens;        /* KV-cache tokens read by the decoding sequences
                                 (sum of their context lengths, the new token included) */
} cost_step;

typedef enum { COST_LINEAR, COST_ROOFLINE } cost_kind;

typedef struct cost_model {
    cost_kind kind;
    /* linear */
    double step_base_ms;          /* ms per step */
    double prefill_ms_per_token;  /* ms per prompt token */
    double decode_ms_per_seq;     /* ms per decoding sequence */
    double kv_ms_per_1k_tokens;   /* ms per 1000 KV tokens read */
    /* roofline (also used by both kinds for FLOP and byte accounting when set) */
    int have_hw;                  /* gpu and model below are filled */
    gpu_spec gpu;
    model_spec model;
    int tp;                       /* tensor-parallel degree, GPUs per replica */
    double weight_bytes;          /* bytes per weight (bf16 2, fp8/int8 1, int4 0.5) */
    double kv_bytes;              /* bytes per KV element (bf16 2, fp8 1) */
    int use_fp8_compute;          /* 1: peak is gpu.fp8_tflops (fp8/int8 W8A8) */
    double compute_eff;           /* fraction of peak FLOP/s reached, (0,1] */
    double memory_eff;            /* fraction of peak bandwidth reached, (0,1] */
    double step_overhead_ms;      /* fixed CPU/launch overhead per step, ms */
    double allreduce_latency_us;  /* fixed latency per all-reduce, microseconds */
} cost_model;

/* Duration of one step, in milliseconds (> 0 for a non-empty step). */
double cost_step_ms(const cost_model *m, const cost_step *s);

/* FLOPs and HBM bytes of one step for the whole replica (all TP shards), from the
 * model geometry; both 0 when !m->have_hw.  Used for MFU/MBU reporting. */
void cost_step_work(const cost_model *m, const cost_step *s, double *flops, double *bytes);

/* Peak FLOP/s and bytes/s of the whole replica (tp GPUs); 0 when !have_hw. */
double cost_peak_flops(const cost_model *m);
double cost_peak_bw(const cost_model *m);

#endif
