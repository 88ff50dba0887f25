/* opshare.c -- a step's time by operator (see opshare.h). */
#include "llm/opshare.h"

#include <math.h>
#include <string.h>
#include "core/result.h"

const char *const OP_NAMES[OP_N] = {
    "attention_prefill", "attention_decode", "qkv", "out_proj", "mlp", "experts", "norm_elementwise",
    "logits_sampling", "allreduce", "alltoall", "pipeline", "framework",
};

int op_of_part(const char *name)
{
    if (!strncmp(name, "allreduce", 9)) return OP_ALLREDUCE;
    if (!strcmp(name, "alltoall")) return OP_ALLTOALL;
    if (!strcmp(name, "pipeline") || !strcmp(name, "stage_transfer")) return OP_PIPELINE;
    if (!strcmp(name, "launch") || !strcmp(name, "cpu") || !strcmp(name, "overhead") || !strcmp(name, "fixed"))
        return OP_FRAMEWORK;
    return -1;
}

void op_work(const cost_hw *h, const cost_step *s, double flops[OP_N], double bytes[OP_N])
{
    const model_spec *m = &h->model;
    for (int k = 0; k < OP_N; k++) flops[k] = bytes[k] = 0;
    double L = m->layers, H = m->hidden, I = m->intermediate, V = m->vocab, d = m->head_dim;
    double nh = m->heads, nkv = m->kv_heads, w = h->weight_bytes > 0 ? h->weight_bytes : 2;
    double kvb = h->kv_bytes > 0 ? h->kv_bytes : 2;
    double td = (double) cost_step_decode_tokens(s), tp = (double) s->prefill_tokens, t = td + tp;
    double pd = s->decode_seqs > 0 ? cost_step_decode_pairs(s) : 0, pp = s->prefill_pairs;
    double act = t * H * 2 * 2;   /* activations in and out of a linear layer, bytes */
    /* KV bytes one token adds over all layers (MLA: the latent and the RoPE key). */
    double kvpt = m->kv_lora_rank > 0 ? L * (m->kv_lora_rank + m->qk_rope_head_dim) * kvb : 2 * L * nkv * d * kvb;
    double attn = 4 * L * nh * d;
    flops[OP_ATTN_PREFILL] = attn * pp;
    bytes[OP_ATTN_PREFILL] = 2 * tp * kvpt;                       /* written, and read by the chunk */
    flops[OP_ATTN_DECODE] = attn * pd;
    bytes[OP_ATTN_DECODE] = ((double) s->kv_tokens + td) * kvpt;  /* every context read, the new tokens written */
    double qkv = L * H * (nh + 2 * nkv) * d, out = L * nh * d * H;
    flops[OP_QKV] = 2 * qkv * t;
    bytes[OP_QKV] = qkv * w + act;
    flops[OP_OUT_PROJ] = 2 * out * t;
    bytes[OP_OUT_PROJ] = out * w + act;
    int moe = m->experts > 0 ? m->layers - m->first_dense_layers : 0;
    double dense_layers = moe > 0 ? m->first_dense_layers : L;
    double mlp = dense_layers * 3 * H * I;
    flops[OP_MLP] = 2 * mlp * t;
    bytes[OP_MLP] = mlp * w + (dense_layers > 0 ? act : 0);
    if (moe > 0) {
        double ep = m->expert_params > 0 ? m->expert_params : 3 * H * m->moe_intermediate;
        double shared = m->shared_experts * 3 * H * m->moe_intermediate;
        double tok = s->group_tokens > 0 ? s->group_tokens : t;
        flops[OP_EXPERTS] = 2 * moe * (m->experts_per_token * ep + shared) * t;
        bytes[OP_EXPERTS] = moe * (cost_distinct_experts(m->experts, m->experts_per_token, tok) * ep + shared) * w + act;
    }
    flops[OP_NORM] = L * t * (12 * H + 4 * I);
    bytes[OP_NORM] = L * t * (10 * H + 3 * I) * 2;
    double sampled = td + (s->prefill_seqs > 0 ? s->prefill_seqs : 0);
    flops[OP_LOGITS] = 2 * V * H * sampled;
    bytes[OP_LOGITS] = V * H * w + sampled * V * 4;
}

int op_rates_lm(const cost_hw *h, const cost_lm *lm, op_rates *r)
{
    const model_spec *m = &h->model;
    double attn = 4.0 * m->layers * m->heads * m->head_dim, wb = h->weight_bytes > 0 ? h->weight_bytes : 2;
    if (!lm || !(m->params > 0) || !(attn > 0) || !(lm->a_lin > 0)) return -1;
    r->flop_s = lm->a_lin / (2.0 * m->params);
    r->t_half = lm->a_half / lm->a_lin;
    r->attn_flop_s = lm->a_att / attn;
    r->byte_s = lm->w_s / (m->params * wb);
    r->kv_read = lm->kv_s > 0 ? lm->kvr_s / lm->kv_s : 1;
    return 0;
}

void op_times(const cost_hw *h, const op_rates *r, const cost_step *s, double t[OP_N])
{
    double flops[OP_N], bytes[OP_N];
    op_work(h, s, flops, bytes);
    double td = (double) cost_step_decode_tokens(s), T = td + (double) s->prefill_tokens;
    double gemm = T > 0 ? (T + r->t_half) / T : 1;
    /* The share of decode attention's bytes that are KV reads (the rest: the new tokens written). */
    double kv = (double) s->kv_tokens, read = kv + td > 0 ? kv / (kv + td) : 0;
    for (int k = 0; k < OP_N; k++) {
        t[k] = 0;
        if (k >= OP_ALLREDUCE) continue;
        double c = flops[k] * (k == OP_ATTN_PREFILL || k == OP_ATTN_DECODE ? r->attn_flop_s : r->flop_s);
        if (k == OP_QKV || k == OP_OUT_PROJ || k == OP_MLP || k == OP_EXPERTS || k == OP_LOGITS) c *= gemm;
        double b = bytes[k] * r->byte_s;
        if (k == OP_ATTN_DECODE) b *= 1 - read + read * r->kv_read;
        t[k] = c > b ? c : b;
    }
}

/* Splits GPU_MS over the kernel operators in proportion to T (their own times),
 * the others as given, into OUT. */
static void split_by(const double t[OP_N], double gpu_ms, double ar_ms, double a2a_ms, double pipe_ms, double fw_ms,
                     double out[OP_N])
{
    double sum = 0;
    for (int k = 0; k < OP_ALLREDUCE; k++) sum += t[k];
    for (int k = 0; k < OP_N; k++) out[k] = 0;
    if (!(sum > 0)) out[OP_MLP] = gpu_ms;
    else {
        double given = 0;   /* the last kernel operator with time takes what is left: they sum to GPU_MS */
        int last = 0;
        for (int k = 0; k < OP_ALLREDUCE; k++)
            if (t[k] > 0) last = k;
        for (int k = 0; k < OP_ALLREDUCE; k++) {
            if (k == last) continue;
            out[k] = gpu_ms * (t[k] / sum);
            given += out[k];
        }
        out[last] = gpu_ms - given;
    }
    out[OP_ALLREDUCE] = ar_ms;
    out[OP_ALLTOALL] = a2a_ms;
    out[OP_PIPELINE] = pipe_ms;
    out[OP_FRAMEWORK] = fw_ms;
}

void op_split_rates(const cost_hw *h, const op_rates *r, const cost_step *s, double gpu_ms, double ar_ms,
                    double a2a_ms, double pipe_ms, double fw_ms, double out[OP_N])
{
    if (!r) {
        op_split(h, s, gpu_ms, ar_ms, a2a_ms, pipe_ms, fw_ms, out);
        return;
    }
    double t[OP_N];
    op_times(h, r, s, t);
    split_by(t, gpu_ms, ar_ms, a2a_ms, pipe_ms, fw_ms, out);
}

void op_split(const cost_hw *h, const cost_step *s, double gpu_ms, double ar_ms, double a2a_ms, double pipe_ms,
              double fw_ms, double out[OP_N])
{
    double flops[OP_N], bytes[OP_N], t[OP_N];
    op_work(h, s, flops, bytes);
    double peak = (h->use_fp4_compute && h->gpu.fp4_tflops > 0 ? h->gpu.fp4_tflops
                   : h->use_fp8_compute ? h->gpu.fp8_tflops : h->gpu.bf16_tflops) * 1e12;
    double bw = h->gpu.mem_bw_gbs * 1e9;
    for (int k = 0; k < OP_N; k++) {
        t[k] = 0;
        if (k >= OP_ALLREDUCE) continue;
        double c = peak > 0 ? flops[k] / peak : 0, b = bw > 0 ? bytes[k] / bw : 0;
        t[k] = c > b ? c : b;
    }
    split_by(t, gpu_ms, ar_ms, a2a_ms, pipe_ms, fw_ms, out);
}

void op_accumulate(double acc[OP_N], const cost_hw *h, const cost_lm *lm, const cost_step *s, double ms, double fw_ms)
{
    double out[OP_N], rest = ms - fw_ms;
    op_rates r;
    if (lm && op_rates_lm(h, lm, &r) == 0) {
        /* The learned step's own parts: its all-reduces' share of its non-framework
         * time (the step may be scaled: slow replicas, contention), the rest GPU. */
        double T = (double) s->prefill_tokens + (double) cost_step_decode_tokens(s);
        double ar = lm->ar_n * (lm->ar_lat + lm->ar_tok * T) * 1e3;
        double own = cost_lm_ms(lm, s) - cost_lm_overhead_ms(lm, s);
        double ar_ms = ar > 0 && own > 0 ? rest * fmin(ar / own, 1) : 0;
        op_split_rates(h, &r, s, rest - ar_ms, ar_ms, 0, 0, fw_ms, out);
    } else {
        cost_breakdown b;
        cost_roofline_breakdown(h, &cost_roofline_defaults, s, &b);
        double parts = b.gpu_ms + b.allreduce_ms + b.alltoall_ms + b.transfer_ms + b.pipeline_ms;
        double f = parts > 0 ? rest / parts : 0;
        op_split(h, s, parts > 0 ? b.gpu_ms * f : rest, b.allreduce_ms * f, b.alltoall_ms * f,
                 (b.transfer_ms + b.pipeline_ms) * f, fw_ms, out);
    }
    for (int k = 0; k < OP_N; k++) acc[k] += out[k];
}

/* The result rows' names (kept by pointer: static). */
static const char *const SHARE_NAMES[OP_N] = {
    "op_share_attention_prefill", "op_share_attention_decode", "op_share_qkv", "op_share_out_proj", "op_share_mlp",
    "op_share_experts", "op_share_norm_elementwise", "op_share_logits_sampling", "op_share_allreduce",
    "op_share_alltoall", "op_share_pipeline", "op_share_framework",
};

int op_report(const double acc[OP_N], struct pool_result *out)
{
    double sum = 0;
    for (int k = 0; k < OP_N; k++) sum += acc[k];
    int rc = pool_result_add(out, "op_step_ms", sum);
    for (int k = 0; k < OP_N; k++) rc |= pool_result_add(out, SHARE_NAMES[k], sum > 0 ? acc[k] / sum : 0);
    return rc ? -1 : 0;
}
