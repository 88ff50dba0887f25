/* clearn_ops.c -- the learned model's rates per operator (llm/opshare.h's
 * op_rates) from its coefficients, for any replica (a plain one's constants
 * give the same: op_rates_lm): `latsim cost`'s time by operator under
 * `cost = learned` apportions the GPU time at these rates. */
#include "clearn.h"

#include <math.h>
#include <strings.h>

int clearn_op_rates(const cost_hw *h, const clearn_coef *c, op_rates *r)
{
    const model_spec *m = &h->model;
    double tp = h->tp >= 1 ? h->tp : 1, peak;
    if (h->use_fp4_compute && h->gpu.fp4_tflops > 0) peak = h->gpu.fp4_tflops * 1e12 * c->lowp_eff;
    else if (h->use_fp8_compute) peak = h->gpu.fp8_tflops * 1e12 * c->lowp_eff;
    else peak = h->gpu.bf16_tflops * 1e12;
    double bw = h->gpu.mem_bw_gbs * 1e9;
    if (!(peak > 0) || !(bw > 0) || !(c->compute_eff > 0) || !(c->memory_eff > 0)) return -1;
    r->flop_s = 1.0 / (tp * peak * c->compute_eff);
    r->t_half = c->t_half;
    r->attn_flop_s = r->flop_s / c->attn_eff;
    r->byte_s = 1.0 / (tp * bw * c->memory_eff);
    double gqa = m->kv_lora_rank > 0 || m->kv_heads <= 0 || m->heads <= m->kv_heads
                 ? 1 : pow((double) m->heads / m->kv_heads, 1.0 - c->gqa_reuse);
    r->kv_read = gqa / c->kv_eff;
    return 0;
}
