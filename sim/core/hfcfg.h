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
 * and gpt-oss (biased attention and experts, attention sinks, a biased router);
 * and encoder (BERT-style) models: model_type bert, roberta or xlm-roberta, or
 * an architecture BertModel, BertForSequenceClassification, XLMRobertaModel,
 * XLMRobertaForSequenceClassification... (model_spec.encoder = 1; their count:
 * hfcfg.c, encoder_geometry).
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

/* hf_moe and hf_config_read() are public (latsim/catalog.h). */

/* The same from the JSON TEXT; PATH names it in messages. */
int hf_config_parse(const char *path, const char *text, const char *name, const char *weights, model_spec *m,
                    hf_moe *moe, char *err, size_t errlen);

#endif
