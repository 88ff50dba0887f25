/* cost.c -- step-duration models of an LLM replica (see cost.h).
 *
 * Implements the two built-in cost models and the FLOP/byte accounting used
 * for MFU/MBU reporting.
 *
 * Linear (exactly the formula of cost.h, no rounding):
 *   step_ms = step_base_ms + prefill_ms_per_token * prefill_tokens
 *             + decode_ms_per_seq * decode_seqs + kv_ms_per_1k_tokens * kv_tokens / 1000
 *
 * Roofline, for one replica of tp GPUs, with P = params, L = layers,
 * H = heads, Hkv = kv_heads, d = head_dim, D = hidden and
 * tokens = prefill_tokens + decode_seqs (the tokens computed by the step):
 *   flops  = 2 * P * tokens + 4 * L * H * d * (prefill_pairs + kv_tokens)
 *            (a multiply-add per weight per token; QK^T and AV per
 *             (query, key) pair)
 *   kv_bpt = 2 * L * Hkv * d * kv_bytes                  (K and V, per token)
 *   bytes  = P * weight_bytes + kv_bpt * (kv_tokens + prefill_tokens + decode_seqs)
 *            (the weights once; the decode contexts read; the new KV written)
 *   peak   = fp8_tflops if use_fp8_compute else bf16_tflops
 *   t_compute = flops / tp / (peak * 1e12 * compute_eff)
 *   t_mem     = bytes / tp / (mem_bw_gbs * 1e9 * memory_eff)
 *   t_ar      = 0 when tp == 1, else two ring all-reduces per layer of the
 *               activations (tokens * D values of 2 bytes):
 *               2 * L * (allreduce_latency_us * 1e-6
 *                        + 2 * (tp - 1) / tp * tokens * D * 2 / (link_gbs * 1e9))
 *   step_ms   = 1000 * (max(t_compute, t_mem) + t_ar) + step_overhead_ms
 * Prompt tokens that attend to cached KV are counted in prefill_pairs (FLOPs)
 * but their reads of that cache are not counted in bytes.
 *
 * Both kinds: a step with no tokens (prefill_tokens == 0 and decode_seqs == 0)
 * takes 0 ms.  For robustness tp < 1 counts as 1 and an efficiency outside
 * (0, 1] counts as 1; the scenario loader is expected to reject such values.
 */
#include "cost.h"

#include <math.h>

/* Activations exchanged by the tensor-parallel all-reduces are bf16. */
#define ACT_BYTES 2.0

static int tp_of(const cost_model *m)
{
    return m->tp >= 1 ? m->tp : 1;
}

static double eff_of(double e)
{
    return (e > 0 && e <= 1) ? e : 1.0;
}

/* Peak dense tensor throughput of one GPU, FLOP/s. */
static double gpu_peak_flops(const cost_model *m)
{
    return (m->use_fp8_compute ? m->gpu.fp8_tflops : m->gpu.bf16_tflops) * 1e12;
}

static int step_is_empty(const cost_step *s)
{
    return s->prefill_tokens <= 0 && s->decode_seqs <= 0;
}

/* FLOPs and bytes of the whole replica; the formulas at the top of the file. */
static void roofline_work(const cost_model *m, const cost_step *s, double *flops,
                          double *bytes)
{
    const model_spec *md = &m->model;
    double tokens = (double)s->prefill_tokens + (double)s->decode_seqs;
    double attn_per_pair = 4.0 * md->layers * md->heads * md->head_dim;
    double kv_per_token = 2.0 * md->layers * md->kv_heads * md->head_dim * m->kv_bytes;

    *flops = 2.0 * md->params * tokens
             + attn_per_pair * (s->prefill_pairs + (double)s->kv_tokens);
    *bytes = md->params * m->weight_bytes
             + kv_per_token * ((double)s->kv_tokens + tokens);
}

static double roofline_ms(const cost_model *m, const cost_step *s)
{
    int tp = tp_of(m);
    double flops, bytes, t_compute, t_mem, t_ar = 0;
    double tokens = (double)s->prefill_tokens + (double)s->decode_seqs;

    roofline_work(m, s, &flops, &bytes);
    t_compute = flops / tp / (gpu_peak_flops(m) * eff_of(m->compute_eff));
    t_mem = bytes / tp / (m->gpu.mem_bw_gbs * 1e9 * eff_of(m->memory_eff));
    if (tp > 1) {
        double msg = tokens * m->model.hidden * ACT_BYTES;
        t_ar = 2.0 * m->model.layers
               * (m->allreduce_latency_us * 1e-6
                  + 2.0 * (tp - 1) / tp * msg / (m->gpu.link_gbs * 1e9));
    }
    return (fmax(t_compute, t_mem) + t_ar) * 1e3 + m->step_overhead_ms;
}

double cost_step_ms(const cost_model *m, const cost_step *s)
{
    if (step_is_empty(s))
        return 0;
    switch (m->kind) {
    case COST_LINEAR:
        return m->step_base_ms + m->prefill_ms_per_token * (double)s->prefill_tokens
               + m->decode_ms_per_seq * s->decode_seqs
               + m->kv_ms_per_1k_tokens * (double)s->kv_tokens / 1000.0;
    case COST_ROOFLINE:
        /* Without a GPU and a model there is nothing to compute from; the
         * scenario loader does not build such a model. */
        return m->have_hw ? roofline_ms(m, s) : 0;
    }
    return 0;
}

void cost_step_work(const cost_model *m, const cost_step *s, double *flops, double *bytes)
{
    double f = 0, b = 0;
    if (m->have_hw && !step_is_empty(s))
        roofline_work(m, s, &f, &b);
    if (flops)
        *flops = f;
    if (bytes)
        *bytes = b;
}

double cost_peak_flops(const cost_model *m)
{
    return m->have_hw ? tp_of(m) * gpu_peak_flops(m) : 0;
}

double cost_peak_bw(const cost_model *m)
{
    return m->have_hw ? tp_of(m) * m->gpu.mem_bw_gbs * 1e9 : 0;
}
