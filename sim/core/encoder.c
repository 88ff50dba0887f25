/* encoder.c -- encoder (BERT-style) models priced on a GPU or a CPU (encoder.h). */
#include "core/encoder.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

/* The calibrator's learned coefficients (enc_set_learned); NULL: none. */
static enc_learned_fn learned_fn;

void enc_set_learned(enc_learned_fn fn) { learned_fn = fn; }

const char *const ENC_OP_NAMES[ENC_OP_N] = { "attention", "qkv", "out_proj", "mlp", "norm_elementwise", "head" };

/* PREFIX + KEY into BUF. */
static const char *pk(char *buf, size_t n, const char *prefix, const char *key)
{
    snprintf(buf, n, "%s%s", prefix, key);
    return buf;
}

int enc_parse(scn_ctx *x, const char *sec, const char *prefix, int roofline_keys, enc_cfg *c)
{
    static const char *const OWN[] = { "gpu", "cpu_tflops", "cpu_mem_gbs", "max_seq_len", "cost", "engine" };
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
    if (scn_str(x, sec, pk(k, sizeof k, prefix, "cost"), "", c->cost_name, sizeof c->cost_name) ||
        scn_str(x, sec, pk(k, sizeof k, prefix, "engine"), "", c->engine, sizeof c->engine))
        return -1;
    const char *cn = c->cost_name;
    if (!strcasecmp(cn, "fitted") || !strcasecmp(cn, "profile") || !strcasecmp(cn, "linear"))
        return scn_fail(x, sec, pk(k, sizeof k, prefix, "cost"), "%s does not apply to an encoder: %s (use learned or "
                        "roofline)", cn, !strcasecmp(cn, "fitted") ? "a fitted model is fitted to a decoder's measured "
                        "steps (prefill, decode, KV terms), which an encoder pass has none of"
                        : !strcasecmp(cn, "profile") ? "the operator profiles (Vidur's) time a decoder's layers, causal "
                        "attention and its KV cache, not an encoder's bidirectional pass" : "it prices decode steps");
    if (cn[0] && strcasecmp(cn, "auto") && strcasecmp(cn, "roofline") && strcasecmp(cn, "learned"))
        return scn_fail(x, sec, pk(k, sizeof k, prefix, "cost"), "unknown cost model '%s' (an encoder's: auto, learned, "
                        "roofline)", cn);
    if (!roofline_keys) return 0;
    static const char *const ROOF[] = { "compute_eff", "memory_eff", "step_overhead_ms", "launch_us_per_layer" };
    for (size_t i = 0; i < sizeof ROOF / sizeof ROOF[0] && !c->roof_key; i++)
        if (scn_value(x, sec, ROOF[i])) c->roof_key = ROOF[i];
    /* The roofline's keys and bounds (sim/llm/cost.c). */
    if (scn_num(x, sec, "compute_eff", 0.6, 1e-3, 0, 1.0, &c->compute_eff) ||
        scn_num(x, sec, "memory_eff", 0.8, 1e-3, 0, 1.0, &c->memory_eff) ||
        scn_num(x, sec, "step_overhead_ms", 1.0, 0, 0, 1e9, &c->overhead_ms) ||
        scn_num(x, sec, "launch_us_per_layer", 20, 0, 0, 1e9, &c->launch_us))
        return -1;
    return 0;
}

/* 1 when C's weights compute at a low-precision peak on G (fp8, int8; fp4 where
 * G has FP4: elsewhere dequantised to BF16, as enc_resolve's peak). */
static int lowp_weights(const enc_cfg *c, const gpu_spec *g)
{
    const char *w = c->model.weights;
    return !strcasecmp(w, "fp8") || !strcasecmp(w, "int8") || (!strcasecmp(w, "fp4") && g->fp4_tflops > 0);
}

/* Settles C's cost model (the file's head comment): G is its GPU, NULL on a CPU. */
static int resolve_cost(scn_ctx *x, const char *sec, const char *prefix, enc_cfg *c, const gpu_spec *g)
{
    char k[64], err[256] = "";
    int given = c->cost_name[0] && strcasecmp(c->cost_name, "auto");
    int learned = given ? !strcasecmp(c->cost_name, "learned") : learned_fn && g && !c->roof_key;
    c->cost = ENC_COST_ROOFLINE;
    if (!learned) {
        if (c->engine[0])
            return scn_fail(x, sec, pk(k, sizeof k, prefix, "engine"), "selects the learned model's efficiencies, and "
                            "this encoder is priced by the roofline (%s)", given ? "cost = roofline"
                            : !g ? "on a CPU" : c->roof_key ? "its roofline keys are given" : "no calibrator");
        return 0;
    }
    if (!g)
        return scn_fail(x, sec, pk(k, sizeof k, prefix, "cost"), "learned: the learned model is trained on GPU "
                        "measurements and knows no CPU (%scpu_tflops): use cost = roofline", prefix);
    if (c->roof_key)
        return scn_fail(x, sec, c->roof_key, "is the roofline's key: cost = learned learns the efficiencies "
                        "(give cost = roofline to set them)");
    if (!learned_fn)
        return scn_fail(x, sec, pk(k, sizeof k, prefix, "cost"), "learned needs the calibrator's trained table "
                        "(the simulator alone has the roofline only)");
    if (learned_fn(g, c->engine, &c->lc, err, sizeof err) != 0)
        return scn_fail(x, sec, pk(k, sizeof k, prefix, "engine"), "%s", err);
    if (!lowp_weights(c, g)) c->lc.lowp_eff = 1;
    c->cost = ENC_COST_LEARNED;
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
    gpu_spec g_used;
    memset(&g_used, 0, sizeof g_used);
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
        g_used = g;
    } else {
        c->peak_flops = c->cpu_tflops * 1e12;
        c->mem_bw = c->cpu_mem_gbs * 1e9;
    }
    if (c->max_seq_len > c->model.context)
        return scn_fail(x, sec, pk(k, sizeof k, prefix, "max_seq_len"), "%d tokens is more than the %d positions of "
                        "%s (its context)", c->max_seq_len, c->model.context, c->model.name);
    if (c->max_seq_len <= 0) c->max_seq_len = c->model.context;
    return resolve_cost(x, sec, prefix, c, c->gpu_name[0] ? &g_used : NULL);
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

/* The learned model's time of operator K of FLOPS and BYTES in a pass of T
 * tokens: compute (*TC) and memory (*TM), s. */
static void learned_op_s(const enc_cfg *c, int k, double flops, double bytes, double T, double *tc, double *tm)
{
    const enc_learned *l = &c->lc;
    double peak = c->peak_flops * l->compute_eff * l->lowp_eff;
    double f = k == ENC_OP_ATTENTION ? flops / l->attn_eff : k == ENC_OP_NORM ? flops : flops * (T + l->t_half) / T;
    *tc = peak > 0 ? f / peak : 0;
    *tm = c->mem_bw > 0 ? bytes / (c->mem_bw * l->memory_eff) : 0;
}

/* A pass under the learned model (the file's head comment). */
static void learned_parts(const enc_cfg *c, int batch, int64_t len, double *busy_ms, double *fixed_ms)
{
    double f[ENC_OP_N], b[ENC_OP_N], tc = 0, tm = 0, T = (double) batch * (double) len;
    enc_work(&c->model, c->weight_bytes, batch, len, f, b);
    for (int k = 0; k < ENC_OP_N; k++) {
        double kc, km;
        learned_op_s(c, k, f[k], b[k], T, &kc, &km);
        tc += kc;
        tm += km;
    }
    const enc_learned *l = &c->lc;
    *busy_ms = (fmax(tc, tm) + l->overlap * fmin(tc, tm)) * 1e3;
    *fixed_ms = l->fixed_ms + c->model.layers * l->launch_us * 1e-3 + l->seq_us * 1e-3 * batch;
}

void enc_pass_parts(const enc_cfg *c, int batch, int64_t len, double *busy_ms, double *fixed_ms)
{
    if (c->cost == ENC_COST_LEARNED) {
        learned_parts(c, batch, len, busy_ms, fixed_ms);
        return;
    }
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

void enc_pass_ops(const enc_cfg *c, int batch, int64_t len, double busy_ms, double out[ENC_OP_N])
{
    double f[ENC_OP_N], b[ENC_OP_N], t[ENC_OP_N], sum = 0, T = (double) batch * (double) len;
    enc_work(&c->model, c->weight_bytes, batch, len, f, b);
    for (int k = 0; k < ENC_OP_N; k++) {
        double tc, tm;
        if (c->cost == ENC_COST_LEARNED) learned_op_s(c, k, f[k], b[k], T, &tc, &tm);
        else {
            tc = f[k] / (c->peak_flops * c->compute_eff);
            tm = b[k] / (c->mem_bw * c->memory_eff);
        }
        t[k] = tc > tm ? tc : tm;
        sum += t[k];
    }
    for (int k = 0; k < ENC_OP_N; k++) out[k] += sum > 0 ? busy_ms * t[k] / sum : 0;
}

/* V as %.17g appended after " NAME=" to BUF. */
static void coef(char *buf, size_t n, const char *name, double v)
{
    size_t at = strnlen(buf, n);
    snprintf(buf + at, n - at, "%s%s=%.17g", at ? " " : "", name, v);
}

const char *enc_cost_describe(const enc_cfg *c, char *buf, size_t n)
{
    if (n) buf[0] = '\0';
    if (c->cost == ENC_COST_LEARNED) {
        const enc_learned *l = &c->lc;
        snprintf(buf, n, "cost=learned engine=%s", l->engine);
        coef(buf, n, "compute_eff", l->compute_eff);
        coef(buf, n, "t_half", l->t_half);
        coef(buf, n, "memory_eff", l->memory_eff);
        coef(buf, n, "overlap", l->overlap);
        coef(buf, n, "attn_eff", l->attn_eff);
        coef(buf, n, "lowp_eff", l->lowp_eff);
        coef(buf, n, "launch_us", l->launch_us);
        coef(buf, n, "fixed_ms", l->fixed_ms);
        coef(buf, n, "seq_us", l->seq_us);
        return "learned";
    }
    coef(buf, n, "compute_eff", c->compute_eff);
    coef(buf, n, "memory_eff", c->memory_eff);
    coef(buf, n, "step_overhead_ms", c->overhead_ms);
    coef(buf, n, "launch_us_per_layer", c->launch_us);
    return "roofline";
}
