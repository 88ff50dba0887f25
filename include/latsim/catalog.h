/* latsim/catalog.h -- the GPU and model catalog (public): the records of a
 * GPU and of a model's geometry, and looking them up, adding, validating and
 * listing them in a run database (sqlite3 *: from store_open, latsim/store.h).
 *
 * Names are case-insensitive keys such as "h100" or "llama-3-8b"; a few
 * aliases ("h100-sxm", "a100-80gb", "4090") resolve too.  The built-in entries
 * and their sources: docs/catalog.md.  Fields added after the first release
 * come last in each struct: 0 there means "not given" unless the comment says
 * otherwise.  (sim/core/catalog.h adds what only the library uses: readying a
 * database's tables, parameter counts, KV elements per token.)
 */
#ifndef LATSIM_PUBLIC_CATALOG_H
#define LATSIM_PUBLIC_CATALOG_H

#include <stdio.h>
#include <sqlite3.h>

typedef struct gpu_spec {
    char name[48];          /* catalog key, lower case, e.g. "h100" */
    char full_name[64];     /* e.g. "H100-SXM5-80GB" */
    double bf16_tflops;     /* dense BF16 tensor throughput, TFLOP/s */
    double fp8_tflops;      /* dense FP8 (or INT8 where no FP8) throughput, TFLOP/s */
    double mem_gib;         /* device memory, GiB (2^30 bytes) */
    double mem_bw_gbs;      /* memory bandwidth, GB/s (10^9 bytes/s) */
    double link_gbs;        /* per-GPU interconnect bandwidth for tensor parallelism, GB/s */
    double price_hr;        /* on-demand price, $ per GPU-hour */
    char source[400];       /* where the figures come from */
    double fp4_tflops;      /* dense FP4 (NVFP4/MXFP4) throughput, TFLOP/s; 0: no FP4 */
    double idle_w;          /* board power of an idle GPU holding a model, W; 0: unknown */
    double max_w;           /* maximum board power (TDP/TBP), W; 0: unknown */
    int gpus_per_node;      /* GPUs that share the link_gbs fabric (a node, or an NVLink
                               domain such as an NVL72 rack); 0 on input: 8 */
    double node_link_gbs;   /* per-GPU bandwidth between nodes, GB/s (InfiniBand NDR
                               400 Gb/s = 50) */
    double node_link_latency_us; /* one message's latency between nodes, microseconds */
    double mem_usable_gib;  /* device memory the driver reports (cudaMemGetInfo's total, what
                               vLLM's gpu_memory_utilization multiplies), GiB; 0: not
                               measured, mem_gib x 0.98 assumed (docs/llm.md, "KV capacity") */
} gpu_spec;

typedef struct model_spec {
    char name[48];          /* catalog key, lower case, e.g. "llama-3-8b" */
    int layers;             /* transformer layers */
    int hidden;             /* hidden size */
    int heads;              /* query heads */
    int kv_heads;           /* key/value heads (== heads without GQA) */
    int head_dim;           /* per-head dimension (MLA: the query/key one, nope + rope) */
    int intermediate;       /* MLP intermediate size (MoE: of the dense layers, if any) */
    int vocab;              /* vocabulary size */
    double params;          /* parameter count (all weights, embeddings included) */
    int context;            /* maximum context length, tokens */
    char source[400];       /* where the figures come from */
    char weights[8];        /* precision the weights are published in: bf16, fp16, fp8,
                               int8, int4, fp4 (a pool's default `weights`) */
    /* Mixture of experts (all 0 for a dense model). */
    int experts;            /* routed experts per MoE layer */
    int experts_per_token;  /* routed experts each token uses (top-k) */
    int shared_experts;     /* always-used experts per MoE layer, each moe_intermediate wide */
    int moe_intermediate;   /* intermediate size of one expert */
    int first_dense_layers; /* layers before the MoE ones that have a dense MLP */
    double expert_params;   /* parameters of one routed expert of one layer, count;
                               0: 3 x hidden x moe_intermediate (gated MLP, no biases) */
    /* Multi-head latent attention (DeepSeek-V2/V3; 0 without). */
    int kv_lora_rank;       /* width of the compressed KV latent a token caches per layer */
    int qk_rope_head_dim;   /* width of the decoupled RoPE key cached beside it, per layer */
    /* Encoder (BERT-style) models: embeddings, classifiers, rerankers. */
    int encoder;            /* 1: an encoder (bidirectional attention, one forward pass over the
                               whole sequence, no KV cache, no decoding: kind = encoder, a result
                               cache's embed_model, a router's classifier_model); 0: a decoder */
} model_spec;

/* Looks NAME up.  Returns 0 when found (filling OUT), 1 when there is no such
 * entry (ERR then says "unknown gpu 'x' (valid: a100, h100, ...)"), -1 on a
 * database error (message in ERR). */
int catalog_gpu(sqlite3 *db, const char *name, gpu_spec *out, char *err, size_t errlen);
int catalog_model(sqlite3 *db, const char *name, model_spec *out, char *err, size_t errlen);

/* Inserts or replaces an entry.  Validates it first (positive sizes, heads
 * divisible by kv_heads, heads*head_dim consistent...).  Returns 0 or -1 + ERR. */
int catalog_put_gpu(sqlite3 *db, const gpu_spec *g, char *err, size_t errlen);
int catalog_put_model(sqlite3 *db, const model_spec *m, char *err, size_t errlen);

/* The one set of geometry limits of a model, whether from a [model NAME]
 * section or a Hugging Face config.json (catalog_check_model applies them). */
#define CATALOG_MAX_LAYERS   100000      /* layers */
#define CATALOG_MAX_HIDDEN   10000000    /* hidden width */
#define CATALOG_MAX_HEADS    100000      /* attention heads, KV heads */
#define CATALOG_MAX_HEAD_DIM 100000      /* width of one head */
#define CATALOG_MAX_WIDE     100000000   /* intermediate, vocab, context, moe_intermediate */
/* How far a model's stated params may lie from what its geometry counts
 * (catalog_model_params_range): a factor either way. */
#define CATALOG_PARAMS_TOLERANCE 10.0

/* The parameter count M's geometry implies, as [*LO, *HI] before the
 * tolerance (tied or untied embeddings; a gated or plain MLP); both 0 when it
 * cannot say (multi-head latent attention). */
void catalog_model_params_range(const model_spec *m, double *lo, double *hi);

/* The validation catalog_put_*() applies, without writing: 0, or -1 + ERR. */
int catalog_check_gpu(const gpu_spec *g, char *err, size_t errlen);
int catalog_check_model(const model_spec *m, char *err, size_t errlen);

/* Prints both tables as readable text.  Returns 0 or -1 + ERR. */
int catalog_print(sqlite3 *db, FILE *out, char *err, size_t errlen);

/* ---- a model from its Hugging Face config.json (sim/core/hfcfg.c) ---------- */

/* The mixture-of-experts fields of a config (all 0 for a dense model); the
 * model_spec gets the same geometry in its MoE fields. */
typedef struct hf_moe {
    int experts;              /* routed experts per MoE layer (num_experts, num_local_experts, n_routed_experts) */
    int experts_per_token;    /* experts each token is routed to (num_experts_per_tok) */
    int moe_intermediate;     /* intermediate size of one expert (moe_intermediate_size; Mixtral, gpt-oss: intermediate_size) */
    int shared_intermediate;  /* intermediate size of the shared expert(s) together, 0: none */
    double active_params;     /* parameters a token passes through (the routed experts it uses; the
                                 embedding table counted whole, as catalog_counts.active), count */
} hf_moe;

/* Reads the config.json at PATH into *M (name NAME, weights WEIGHTS or, when
 * NULL, the config's quantization_config (fp8, mxfp4/nvfp4 -> fp4, 4- or 8-bit
 * gptq/awq -> int4/int8) or torch_dtype: bfloat16 -> bf16, float16 -> fp16)
 * and *MOE (may be NULL).  Returns 0, or -1 with one line in ERR naming PATH and
 * the field that is missing or wrong.  The result is consistent (heads divide
 * evenly, experts_per_token <= experts...); the caller still validates it as
 * any entry (catalog_check_model) before storing it. */
int hf_config_read(const char *path, const char *name, const char *weights, model_spec *m, hf_moe *moe,
                   char *err, size_t errlen);

#endif
