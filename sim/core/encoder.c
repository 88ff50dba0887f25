/* encoder.c -- encoder (BERT-style) models priced on a GPU or a CPU (encoder.h). */
#include "core/encoder.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

const char *const ENC_OP_NAMES[ENC_OP_N] = { "attention", "qkv", "out_proj", "mlp", "norm_elementwise", "head" };

/* PREFIX + KEY into BUF. */
static const char *pk(char *buf, size_t n, const char *prefix, const char *key)
{
    snprintf(buf, n, "%s%s", prefix, key);
    return buf;
}

int enc_parse(scn_ctx *x, const char *sec, const char *prefix, int roofline_keys, enc_cfg *c)
{
    static const char *const OWN[] = { "gpu", "cpu_tflops", "cpu_mem_gbs", "max_seq_len" };
    char k[64];
    memset(c, 0, sizeof *c);
    c->compute_eff = 0.6;
    c->memory_eff = 0.8;
    c->overhead_ms = 1.0;
    c->launch_us = 20;
    if (!scn_value(x, sec, pk(k, sizeof k, prefix, "model"))) {
        for (size_t i = 0; i < sizeof OWN / sizeof OWN[0]; i++)
            if (scn_value(x, sec, pk(k, sizeof k, prefix, OWN[i])))
                return scn_fail(x, sec, k, "needs %smodel (the encoder it runs)", prefix);
        return 1;
    }
    if (scn_str(x, sec, pk(k, sizeof k, prefix, "model"), "", c->model_name, sizeof c->model_name)) return -1;
    if (scn_str(x, sec, pk(k, sizeof k, prefix, "gpu"), "", c->gpu_name, sizeof c->gpu_name)) return -1;
    if (scn_num(x, sec, pk(k, sizeof k, prefix, "cpu_tflops"), 0, 0, 1, 1e6, &c->cpu_tflops) ||
        scn_num(x, sec, pk(k, sizeof k, prefix, "cpu_mem_gbs"), 0, 0, 1, 1e6, &c->cpu_mem_gbs))
        return -1;
    int gpu = c->gpu_name[0] != 0, cpu = c->cpu_tflops > 0 || c->cpu_mem_gbs > 0;
    if (gpu && cpu)
        return scn_fail(x, sec, pk(k, sizeof k, prefix, "gpu"), "give %sgpu (a GPU) or %scpu_tflops and %scpu_mem_gbs "
                        "(a CPU), not both", prefix, prefix, prefix);
    if (!gpu && !(c->cpu_tflops > 0 && c->cpu_mem_gbs > 0))
        return scn_fail(x, sec, pk(k, sizeof k, prefix, c->cpu_tflops > 0 ? "cpu_mem_gbs" : c->cpu_mem_gbs > 0 ? "cpu_tflops" : "gpu"),
                        "%smodel %s runs on a GPU (%sgpu = NAME) or a CPU (%scpu_tflops and %scpu_mem_gbs, both > 0)",
                        prefix, c->model_name, prefix, prefix, prefix);
    if (scn_int(x, sec, pk(k, sizeof k, prefix, "max_seq_len"), 0, 1, 100000000, &c->max_seq_len)) return -1;
    if (!roofline_keys) return 0;
    /* The roofline's keys and bounds (sim/llm/cost.c). */
    if (scn_num(x, sec, "compute_eff", 0.6, 1e-3, 0, 1.0, &c->compute_eff) ||
        scn_num(x, sec, "memory_eff", 0.8, 1e-3, 0, 1.0, &c->memory_eff) ||
        scn_num(x, sec, "step_overhead_ms", 1.0, 0, 0, 1e9, &c->overhead_ms) ||
        scn_num(x, sec, "launch_us_per_layer", 20, 0, 0, 1e9, &c->launch_us))
        return -1;
    return 0;
}

int enc_resolve(scn_ctx *x, const char *sec, const char *prefix, enc_cfg *c, sqlite3 *db)
{
    const scn_facts *s = x->facts;
    char k[64], msg[512];
    int found = 0;
    for (int j = 0; s && j < s->nmodels; j++)
        if (!strcasecmp(s->models[j].name, c->model_name)) { c->model = s->models[j]; found = 1; }
    if (!found && catalog_model(db, c->model_name, &c->model, msg, sizeof msg) != 0)
        return scn_fail(x, sec, pk(k, sizeof k, prefix, "model"), "%s", msg);
    if (!c->model.encoder)
        return scn_fail(x, sec, pk(k, sizeof k, prefix, "model"), "model %s is a decoder (an LLM), not an encoder "
                        "(BERT-style: bert-base-uncased, all-minilm-l6-v2, bge-reranker-base, bge-m3, or catalog add "
                        "--hf of a BertModel/XLMRobertaModel config.json)", c->model.name);
    c->weight_bytes = catalog_weight_bytes(c->model.weights);
    if (!(c->weight_bytes > 0)) c->weight_bytes = 2;
    if (c->gpu_name[0]) {
        gpu_spec g;
        found = 0;
        for (int j = 0; s && j < s->ngpus; j++)
            if (!strcasecmp(s->gpus[j].name, c->gpu_name)) { g = s->gpus[j]; found = 1; }
        if (!found && catalog_gpu(db, c->gpu_name, &g, msg, sizeof msg) != 0)
            return scn_fail(x, sec, pk(k, sizeof k, prefix, "gpu"), "%s", msg);
        const char *w = c->model.weights;
        double tf = !strcasecmp(w, "fp8") || !strcasecmp(w, "int8") ? g.fp8_tflops
                    : !strcasecmp(w, "fp4") && g.fp4_tflops > 0 ? g.fp4_tflops : g.bf16_tflops;
        c->peak_flops = tf * 1e12;
        c->mem_bw = g.mem_bw_gbs * 1e9;
    } else {
        c->peak_flops = c->cpu_tflops * 1e12;
        c->mem_bw = c->cpu_mem_gbs * 1e9;
    }
    if (c->max_seq_len > c->model.context)
        return scn_fail(x, sec, pk(k, sizeof k, prefix, "max_seq_len"), "%d tokens is more than the %d positions of "
                        "%s (its context)", c->max_seq_len, c->model.context, c->model.name);
    if (c->max_seq_len <= 0) c->max_seq_len = c->model.context;
    return 0;
}

int64_t enc_len(const enc_cfg *c, int64_t prompt)
{
    int64_t n = prompt < c->max_seq_len ? prompt : c->max_seq_len;
    return n > 0 ? n : 1;
}

void enc_work(const model_spec *m, double w, int batch, int64_t len, double flops[ENC_OP_N], double bytes[ENC_OP_N])
{
    const double a = 2;   /* bytes per activation */
    double L = m->layers, H = m->hidden, I = m->intermediate, nh = m->heads, d = m->head_dim;
    double B = batch, n = (double) len, T = B * n;
    double act = T * H * a * 2;   /* a linear layer's activations in and out */
    flops[ENC_OP_ATTENTION] = 4 * L * nh * d * B * n * n;
    bytes[ENC_OP_ATTENTION] = T * 2 * 2 * L * nh * d * a;
    double qkv = 3 * L * H * nh * d, out = L * nh * d * H, mlp = 2 * L * H * I;
    flops[ENC_OP_QKV] = 2 * qkv * T;
    bytes[ENC_OP_QKV] = qkv * w + act;
    flops[ENC_OP_OUT_PROJ] = 2 * out * T;
    bytes[ENC_OP_OUT_PROJ] = out * w + act;
    flops[ENC_OP_MLP] = 2 * mlp * T;
    bytes[ENC_OP_MLP] = mlp * w + act;
    flops[ENC_OP_NORM] = L * T * (12 * H + 4 * I);
    bytes[ENC_OP_NORM] = L * T * (10 * H + 3 * I) * a + T * H * w;
    flops[ENC_OP_HEAD] = 2 * H * H * B;
    bytes[ENC_OP_HEAD] = H * H * w;
}

void enc_pass_parts(const enc_cfg *c, int batch, int64_t len, double *busy_ms, double *fixed_ms)
{
    double f[ENC_OP_N], b[ENC_OP_N], F = 0, By = 0;
    enc_work(&c->model, c->weight_bytes, batch, len, f, b);
    for (int k = 0; k < ENC_OP_N; k++) {
        F += f[k];
        By += b[k];
    }
    double tc = c->peak_flops > 0 ? F / (c->peak_flops * c->compute_eff) : 0;
    double tm = c->mem_bw > 0 ? By / (c->mem_bw * c->memory_eff) : 0;
    *busy_ms = fmax(tc, tm) * 1e3;
    *fixed_ms = c->overhead_ms + c->model.layers * c->launch_us * 1e-3;
}

double enc_pass_ms(const enc_cfg *c, int batch, int64_t len)
{
    double busy, fixed;
    enc_pass_parts(c, batch, len, &busy, &fixed);
    return busy + fixed;
}
