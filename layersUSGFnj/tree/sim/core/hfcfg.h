/* hfcfg.h -- a model's geometry from its Hugging Face `config.json`, and its
 * parameter count computed from that geometry (`latsim catalog add --hf`).
 *
 * Dense decoder-only models in the Llama family (Llama, Mistral, Qwen2/2.5,
 * Qwen3, Gemma-style fields) and their mixture-of-experts cousins (Mixtral,
 * Qwen2-MoE/Qwen3-MoE: num_experts / num_local_experts, num_experts_per_tok,
 * moe_intermediate_size, shared_expert_intermediate_size).  The count is every
 * weight of the checkpoint: embeddings (and an untied LM head), per layer
 * the attention projections (with q/k/v biases for qwen2-family models and
 * q/k norms for qwen3-family ones), the gated MLP (three hidden x intermediate
 * matrices) or the experts with their router, and the RMS norms.
 * docs/catalog.md lists the published counts it is checked against.
 */
#ifndef LATSIM_HFCFG_H
#define LATSIM_HFCFG_H

#include <stddef.h>
#include "core/catalog.h"

/* The mixture-of-experts fields of a config (all 0 for a dense model). */
typedef struct hf_moe {
    int experts;              /* routed experts per MoE layer (num_experts, num_local_experts) */
    int experts_per_token;    /* experts each token is routed to (num_experts_per_tok) */
    int moe_intermediate;     /* intermediate size of one expert (moe_intermediate_size; Mixtral: intermediate_size) */
    int shared_intermediate;  /* intermediate size of the shared expert (shared_expert_intermediate_size), 0: none */
    double active_params;     /* parameters a token passes through (the routed experts it uses), count */
} hf_moe;

/* Reads the config.json at PATH into *M (name NAME, weights WEIGHTS or, when
 * NULL, the config's torch_dtype: bfloat16 -> bf16, float16 -> fp16) and *MOE
 * (may be NULL).  Returns 0, or -1 with one line in ERR naming PATH and the
 * field that is missing or wrong. */
int hf_config_read(const char *path, const char *name, const char *weights, model_spec *m, hf_moe *moe,
                   char *err, size_t errlen);

/* The same from the JSON TEXT; PATH names it in messages. */
int hf_config_parse(const char *path, const char *text, const char *name, const char *weights, model_spec *m,
                    hf_moe *moe, char *err, size_t errlen);

#endif
