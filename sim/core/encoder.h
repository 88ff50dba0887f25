/* encoder.h -- encoder (BERT-style) models priced on a GPU or a CPU: the
 * embeddings, classifiers and rerankers a gateway runs on every request.
 *
 * An encoder computes one forward pass over the whole sequence (no KV cache,
 * no decoding); a batch of B sequences is padded to its longest, n tokens
 * after truncation to max_seq_len, and runs as one pass of T = B n tokens.
 * Its time is the LLM roofline's (sim/llm/cost.h, `cost = roofline`) with the
 * encoder's operators: the longer of its FLOPs at peak x compute_eff and its
 * bytes at bandwidth x memory_eff, plus step_overhead_ms and
 * launch_us_per_layer per layer (the roofline's keys and defaults).  Per
 * operator (L layers, H hidden, I intermediate, n_h heads of d, w bytes per
 * weight, a = 2 bytes per activation):
 *   attention   4 L n_h d FLOPs per (query, key) pair, B n^2 pairs
 *               (bidirectional: quadratic in n); bytes: K and V of every
 *               token written and read, 2 x 2 L n_h d a per token
 *   QKV         3 L H n_h d weights: 2 x weights x T FLOPs, weights x w bytes
 *               plus T H a in and out
 *   output      L n_h d H weights, likewise
 *   MLP         2 L H I weights (plain, ungated), likewise
 *   norms, element-wise   L T (12 H + 4 I) FLOPs, L T (10 H + 3 I) a bytes
 *               (as the LLM's operator table); the embedding rows read,
 *               T H w bytes
 *   head        the pooler or classifier, H x H weights per sequence:
 *               2 H^2 B FLOPs, H^2 w bytes
 * The embedding table is looked up, not multiplied: it adds only the rows
 * read.  The layer reads none of sim/llm: result caches (gateway) and routers
 * (stations) use it too.
 *
 * Cost models (`cost =`, docs/scenario-files.md): `roofline` is the above;
 * `learned` prices the same operators at the learned step model's
 * efficiencies for the GPU and engine (calib/clearn.h, docs/learned.md),
 * which the calibrator hands in (enc_set_learned): T = B n tokens,
 *   tc  = (F_gemm (T + t_half) / T + F_norm) / (peak x compute_eff x lowp)
 *         + F_attn / (peak x compute_eff x lowp x attn_eff)
 *   tm  = bytes / (bandwidth x memory_eff)         (no KV cache: no kv_eff)
 *   busy = max(tc, tm) + overlap x min(tc, tm)
 *   fixed = fixed_ms + layers x launch_us + seq_us x B   (eager launches: a
 *           pass is not a decode step captured in a CUDA graph)
 * with F_gemm the QKV, output, MLP and head FLOPs and lowp = lowp_eff for
 * fp8/int8/fp4 weights (else 1).  The default (`auto`) is `learned` on a GPU
 * when the calibrator is there, as for the LLM pools; the roofline where the
 * pool gives the roofline's own keys (compute_eff ...), on a CPU (the learned
 * model knows no CPU) and without the calibrator.  `fitted` and `profile`
 * are fitted to a decoder's measured steps and operators: refused.
 */
#ifndef LATSIM_ENCODER_H
#define LATSIM_ENCODER_H

#include <stddef.h>
#include <stdint.h>
#include <sqlite3.h>
#include "core/scn.h"

typedef enum {
    ENC_OP_ATTENTION, ENC_OP_QKV, ENC_OP_OUT_PROJ, ENC_OP_MLP, ENC_OP_NORM, ENC_OP_HEAD, ENC_OP_N
} enc_op;

/* The operators' names ("attention", "qkv", "out_proj", "mlp", "norm_elementwise", "head"). */
extern const char *const ENC_OP_NAMES[ENC_OP_N];

/* How a pass is priced. */
typedef enum { ENC_COST_ROOFLINE, ENC_COST_LEARNED } enc_cost;

/* The learned step model's coefficients for one GPU and engine (calib/clearn.h's
 * clearn_coef, physical), as an encoder pass uses them. */
typedef struct enc_learned {
    double compute_eff;       /* share of the dense peak at large GEMMs, (0, 1) */
    double t_half;            /* tokens per pass at which GEMMs reach half of compute_eff, tokens */
    double memory_eff;        /* share of peak bandwidth, (0, 1) */
    double overlap;           /* share of min(compute, memory) that adds, (0, 1) */
    double attn_eff;          /* attention's share of compute_eff, (0, 1) */
    double lowp_eff;          /* fp8/int8/fp4 kernels' share of compute_eff at their peak, (0, 1) */
    double launch_us;         /* per layer per pass (eager), microseconds */
    double fixed_ms;          /* per pass, ms */
    double seq_us;            /* per sequence in the pass, microseconds */
    int extrapolated;         /* 1: the GPU or engine has no training rows */
    char engine[16];          /* the engine whose coefficients these are */
} enc_learned;

/* The calibrator's learned coefficients of GPU G under ENGINE ("": the
 * default) into *OUT.  Returns 0, or -1 with a sentence in ERR (an unknown
 * engine: the choices). */
typedef int (*enc_learned_fn)(const gpu_spec *g, const char *engine, enc_learned *out, char *err, size_t n);

/* The calibrator registers its learned coefficients here (calib/clearn_enc.c);
 * without them `cost = learned` is refused and the default is the roofline. */
void enc_set_learned(enc_learned_fn fn);

/* An encoder and the device it runs on, as a scenario names them. */
typedef struct enc_cfg {
    char model_name[48];      /* catalog model (an encoder) */
    char gpu_name[48];        /* catalog GPU it runs on; "" on a CPU */
    double cpu_tflops;        /* on a CPU: the cores' peak together, TFLOP/s (0 on a GPU) */
    double cpu_mem_gbs;       /* on a CPU: memory bandwidth, GB/s */
    int max_seq_len;          /* tokens a sequence is truncated to, tokens (resolved: the model's context
                                 when not given) */
    double compute_eff;       /* share of peak FLOP/s reached */
    double memory_eff;        /* share of peak bandwidth reached */
    double overhead_ms;       /* fixed overhead per pass, ms */
    double launch_us;         /* kernel-launch cost per layer per pass, microseconds */
    char cost_name[16];       /* PREFIX + "cost" as given: "" or "auto" (the default), "roofline", "learned" */
    char engine[16];          /* PREFIX + "engine": whose learned efficiencies ("": the default engine) */
    const char *roof_key;     /* the first roofline key given (compute_eff, ...), NULL: none */
    /* Resolved (enc_resolve). */
    enc_cost cost;            /* the cost model in use */
    enc_learned lc;           /* its coefficients when learned */
    model_spec model;         /* the encoder's geometry */
    double peak_flops;        /* FLOP/s at 100 % (GPU: its weights' precision's peak) */
    double mem_bw;            /* bytes/s at 100 % */
    double weight_bytes;      /* bytes per weight */
} enc_cfg;

/* Reads the encoder keys of SEC named PREFIX + "model", "gpu", "cpu_tflops",
 * "cpu_mem_gbs", "max_seq_len", "cost", "engine" (and, when ROOFLINE_KEYS is 1, the roofline's
 * compute_eff, memory_eff, step_overhead_ms, launch_us_per_layer unprefixed;
 * else their defaults) into *C.  Returns 1 when PREFIX + "model" is absent
 * (nothing else of them may be given then), 0 when read, -1 on bad input
 * (scn_fail: file, line and key). */
int enc_parse(scn_ctx *x, const char *sec, const char *prefix, int roofline_keys, enc_cfg *c);

/* Looks C's model (an encoder) and GPU up: the scenario's [model] and [gpu]
 * sections first, then DB's catalog; sets the peak, bandwidth and weight
 * bytes, and max_seq_len (at most the model's context); resolves the cost
 * model (learned: its coefficients).  Returns 0 or -1 (scn_fail at PREFIX +
 * the key). */
int enc_resolve(scn_ctx *x, const char *sec, const char *prefix, enc_cfg *c, sqlite3 *db);

/* The tokens of a PROMPT-token sequence C computes: min(prompt, max_seq_len), at least 1. */
int64_t enc_len(const enc_cfg *c, int64_t prompt);

/* FLOPs and bytes of each operator of one pass of BATCH sequences of LEN
 * tokens (padded) of model M with W bytes per weight (the formulas above). */
void enc_work(const model_spec *m, double w, int batch, int64_t len, double flops[ENC_OP_N], double bytes[ENC_OP_N]);

/* The cost model's name ("roofline", "learned") and, in BUF, the keys that
 * reproduce C's pass times ("cost=learned engine=vllm compute_eff=... " or
 * "compute_eff=0.6 memory_eff=0.8 step_overhead_ms=1 launch_us_per_layer=20",
 * values %.17g). */
const char *enc_cost_describe(const enc_cfg *c, char *buf, size_t n);

/* One pass of BATCH sequences padded to LEN tokens on C's device, ms. */
double enc_pass_ms(const enc_cfg *c, int batch, int64_t len);

/* Its parts, ms: the GPU/CPU time max(compute, memory) in *BUSY_MS and the
 * fixed overhead (step_overhead_ms + launches) in *FIXED_MS (their sum is
 * enc_pass_ms). */
void enc_pass_parts(const enc_cfg *c, int batch, int64_t len, double *busy_ms, double *fixed_ms);

/* BUSY_MS of a pass of BATCH x LEN split over the operators into OUT[ENC_OP_N]
 * (added to it), in proportion to each operator's own time under C's cost
 * model: max(FLOPs / its compute rate, bytes / its memory rate), the rates the
 * model's (learned: GEMMs at compute_eff T / (T + t_half), attention at
 * attn_eff of it, norms at compute_eff). */
void enc_pass_ops(const enc_cfg *c, int batch, int64_t len, double busy_ms, double out[ENC_OP_N]);

#endif
