/* spec.h -- the records of the GPU and model catalog: what a GPU offers and
 * what a model's geometry is (types only).
 *
 * core/catalog.h stores and looks them up; core/hfcfg.h reads a model from a
 * Hugging Face config.json.  Both include this header, so that the reader of
 * configs does not depend on the catalog (the catalog builds its built-in
 * models with it).  Fields added after the first release come last in each
 * struct: 0 there means "not given" unless the comment says otherwise.
 */
#ifndef LATSIM_SPEC_H
#define LATSIM_SPEC_H

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
} model_spec;

#endif
