/* hfcfg.h -- a model's geometry from its Hugging Face `config.json`, and its
 * parameter count computed from that geometry (`latsim catalog add --hf`, and
 * the catalog's built-in models, which are read from such files).
 *
 * Dense decoder-only models in the Llama family (Llama, Mistral, Qwen2/2.5,
 * Qwen3, Gemma-style fields) and the mixture-of-experts ones: Mixtral
 * (num_local_experts), Qwen2-MoE/Qwen3-MoE (num_experts, moe_intermediate_size,
 * shared_expert_intermediate_size), DeepSeek-V2/V3 (n_routed_experts,
 * n_shared_experts, first_k_dense_replace, and multi-head latent attention:
 * q_lora_rank, kv_lora_rank, qk_nope_head_dim, qk_rope_head_dim, v_head_dim)
 * and gpt-oss (biased attention and experts, attention sinks, a biased router).
 * The count is every weight of the checkpoint: embeddings (and an untied LM
 * head), per layer the attention projections (with q/k/v biases for
 * qwen2-family models, and the output's too where attention_bias says so
 * elsewhere; q/k norms for qwen3-family ones; MLA's down/up projections and
 * their norms), the gated MLP (three hidden x intermediate matrices) or the
 * experts with their router, and the RMS norms.  Not counted: DeepSeek's
 * multi-token-prediction module (num_nextn_predict_layers; the published
 * 671 B leaves it out) and the block scales of quantised checkpoints.
 * docs/catalog.md lists the published counts it is checked against.
 */
#ifndef LATSIM_HFCFG_H
#define LATSIM_HFCFG_H

#include <stddef.h>
#include "core/spec.h"

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

/* The same from the JSON TEXT; PATH names it in messages. */
int hf_config_parse(const char *path, const char *text, const char *name, const char *weights, model_spec *m,
                    hf_moe *moe, char *err, size_t errlen);

#endif
