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
 */
#ifndef LATSIM_ENCODER_H
#define LATSIM_ENCODER_H

#include <stdint.h>
#include <sqlite3.h>
#include "core/scn.h"

typedef enum {
    ENC_OP_ATTENTION, ENC_OP_QKV, ENC_OP_OUT_PROJ, ENC_OP_MLP, ENC_OP_NORM, ENC_OP_HEAD, ENC_OP_N
} enc_op;

/* The operators' names ("attention", "qkv", "out_proj", "mlp", "norm_elementwise", "head"). */
extern const char *const ENC_OP_NAMES[ENC_OP_N];

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
    /* Resolved (enc_resolve). */
    model_spec model;         /* the encoder's geometry */
    double peak_flops;        /* FLOP/s at 100 % (GPU: its weights' precision's peak) */
    double mem_bw;            /* bytes/s at 100 % */
    double weight_bytes;      /* bytes per weight */
} enc_cfg;

/* Reads the encoder keys of SEC named PREFIX + "model", "gpu", "cpu_tflops",
 * "cpu_mem_gbs", "max_seq_len" (and, when ROOFLINE_KEYS is 1, the roofline's
 * compute_eff, memory_eff, step_overhead_ms, launch_us_per_layer unprefixed;
 * else their defaults) into *C.  Returns 1 when PREFIX + "model" is absent
 * (nothing else of them may be given then), 0 when read, -1 on bad input
 * (scn_fail: file, line and key). */
int enc_parse(scn_ctx *x, const char *sec, const char *prefix, int roofline_keys, enc_cfg *c);

/* Looks C's model (an encoder) and GPU up: the scenario's [model] and [gpu]
 * sections first, then DB's catalog; sets the peak, bandwidth and weight
 * bytes, and max_seq_len (at most the model's context).  Returns 0 or -1
 * (scn_fail at PREFIX + the key). */
int enc_resolve(scn_ctx *x, const char *sec, const char *prefix, enc_cfg *c, sqlite3 *db);

/* The tokens of a PROMPT-token sequence C computes: min(prompt, max_seq_len), at least 1. */
int64_t enc_len(const enc_cfg *c, int64_t prompt);

/* FLOPs and bytes of each operator of one pass of BATCH sequences of LEN
 * tokens (padded) of model M with W bytes per weight (the formulas above). */
void enc_work(const model_spec *m, double w, int batch, int64_t len, double flops[ENC_OP_N], double bytes[ENC_OP_N]);

/* One pass of BATCH sequences padded to LEN tokens on C's device, ms. */
double enc_pass_ms(const enc_cfg *c, int batch, int64_t len);

/* Its parts, ms: the GPU/CPU time max(compute, memory) in *BUSY_MS and the
 * fixed overhead (step_overhead_ms + launches) in *FIXED_MS (their sum is
 * enc_pass_ms). */
void enc_pass_parts(const enc_cfg *c, int batch, int64_t len, double *busy_ms, double *fixed_ms);

#endif
