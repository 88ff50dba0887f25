/* hfcfg.c -- a model's geometry from its Hugging Face config.json (hfcfg.h). */
#include "core/hfcfg.h"
#include "latsim/infile.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Reads integer field KEY of O into *OUT: DEF when absent or null (DEF < 0:
 * required).  Returns 0, or -1 with ERR naming PATH and KEY. */
static int int_field(const json_t *o, const char *path, const char *key, long long def, long long lo, int *out,
                     char *err, size_t errlen)
{
    const json_t *v = json_object_get(o, key);
    if (!v || json_is_null(v)) {
        if (def < 0) {
            snprintf(err, errlen, "%s: field %s: missing (required)", path, key);
            return -1;
        }
        *out = (int) def;
        return 0;
    }
    double d = json_is_integer(v) ? (double) json_integer_value(v) : json_is_real(v) ? json_real_value(v) : NAN;
    if (!(d == floor(d)) || d < (double) lo || d > 2e9) {
        snprintf(err, errlen, "%s: field %s: expected a whole number >= %lld", path, key, lo);
        return -1;
    }
    *out = (int) d;
    return 0;
}

static int bool_field(const json_t *o, const char *key, int def)
{
    const json_t *v = json_object_get(o, key);
    return json_is_boolean(v) ? json_is_true(v) : def;
}

static const char *str_field(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    return json_is_string(v) ? json_string_value(v) : "";
}

/* 1 when O has KEY with a value other than null. */
static int has(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    return v && !json_is_null(v);
}

/* The weights' precision of integers or floats of BITS bits (FLOAT 1), "" when
 * latsim prices none such. */
static const char *bits_precision(long long bits, int fl)
{
    if (fl) return bits == 8 ? "fp8" : bits == 4 ? "fp4" : bits == 16 ? "bf16" : "";
    return bits == 8 ? "int8" : bits == 4 ? "int4" : "";
}

/* The precision a quantization_config Q names: "" when there is none (Q not
 * an object), NULL when it names a scheme or width latsim does not price (ERR
 * then says which, naming PATH).  Schemes: fp8, mxfp4, modelopt (FP8, NVFP4),
 * gptq / awq (bits), bitsandbytes (load_in_4bit / load_in_8bit),
 * compressed-tensors (config_groups' weights: num_bits and type). */
static const char *quant_precision(const json_t *q, const char *path, char *err, size_t errlen)
{
    if (!json_is_object(q)) return "";
    const char *m = str_field(q, "quant_method"), *r = "";
    char what[200] = "";
    if (!strcmp(m, "fp8")) return "fp8";
    if (!strcmp(m, "mxfp4")) return "fp4";
    if (!strcmp(m, "modelopt")) {
        const char *a = str_field(q, "quant_algo");
        r = !strcmp(a, "NVFP4") ? "fp4" : !strcmp(a, "FP8") ? "fp8" : "";
        snprintf(what, sizeof what, "modelopt quant_algo '%.60s'", a);
    } else if (!strcmp(m, "gptq") || !strcmp(m, "awq")) {
        const json_t *b = json_object_get(q, "bits");
        long long bits = json_is_integer(b) ? json_integer_value(b) : 0;
        r = bits_precision(bits, 0);
        snprintf(what, sizeof what, "%s with bits = %lld", m, bits);
    } else if (!strcmp(m, "bitsandbytes")) {
        r = bool_field(q, "load_in_4bit", 0) ? "int4" : bool_field(q, "load_in_8bit", 0) ? "int8" : "";
        snprintf(what, sizeof what, "bitsandbytes without load_in_4bit or load_in_8bit");
    } else if (!strcmp(m, "compressed-tensors")) {
        /* The widest weights of any group (a mixed model is priced by its largest). */
        const json_t *groups = json_object_get(q, "config_groups"), *g;
        const char *key;
        long long best = 0;
        int fl = 0, n = 0;
        json_object_foreach((json_t *) groups, key, g) {
            const json_t *w = json_object_get(g, "weights");
            const json_t *b = json_object_get(w, "num_bits");
            if (!json_is_integer(b)) continue;
            n++;
            if (json_integer_value(b) > best) {
                best = json_integer_value(b);
                fl = !strcmp(str_field(w, "type"), "float");
            }
        }
        r = n ? bits_precision(best, fl) : "";
        if (n) snprintf(what, sizeof what, "compressed-tensors %s weights of %lld bits", fl ? "float" : "int", best);
        else snprintf(what, sizeof what, "compressed-tensors without config_groups' weights num_bits");
    } else {
        snprintf(what, sizeof what, "quant_method '%.60s'", m);
    }
    if (*r) return r;
    snprintf(err, errlen, "%s: field quantization_config: %s: not a weight precision latsim prices (bf16|fp16|fp8|int8|int4|fp4); "
             "give --weights P to say how the weights are stored", path, what);
    return NULL;
}

/* The weights' precision: WEIGHTS when given, else a quantization_config's
 * (of the top level O, or of the language model's part C), else torch_dtype.
 * Returns 0 or -1 + ERR. */
static int precision(const json_t *o, const json_t *c, const char *path, const char *weights, char *out, size_t n,
                     char *err, size_t errlen)
{
    if (weights) {
        if (strlen(weights) >= n) {
            snprintf(err, errlen, "%s: weights '%s' is not a precision (bf16|fp16|fp8|int8|int4|fp4)", path, weights);
            return -1;
        }
        snprintf(out, n, "%s", weights);
        return 0;
    }
    const char *q = quant_precision(json_object_get(o, "quantization_config"), path, err, errlen);
    if (q && !*q) q = quant_precision(json_object_get(c, "quantization_config"), path, err, errlen);
    if (!q) return -1;
    if (*q) {
        snprintf(out, n, "%s", q);
        return 0;
    }
    const char *t = str_field(c, "torch_dtype");
    if (!*t) t = str_field(o, "torch_dtype");
    if (!*t || !strcmp(t, "bfloat16")) snprintf(out, n, "bf16");
    else if (!strcmp(t, "float16")) snprintf(out, n, "fp16");
    else {
        snprintf(err, errlen, "%s: field torch_dtype: '%s' is not a serving precision (give --weights bf16|fp16|fp8|int8|int4|fp4)",
                 path, t);
        return -1;
    }
    return 0;
}

/* Multi-head latent attention's widths (DeepSeek-V2/V3), all 0 without it. */
typedef struct mla_geom {
    int q_lora;               /* rank of the query's down-projection, 0: queries projected directly */
    int kv_lora;              /* rank of the compressed KV latent */
    int nope, rope;           /* per-head query/key widths without and with RoPE */
    int v;                    /* per-head value width */
} mla_geom;

/* The config's mixture-of-experts layout beyond hf_moe. */
typedef struct moe_geom {
    int dense_layers;         /* first_k_dense_replace: layers with a dense MLP first */
    int n_shared;             /* n_shared_experts (DeepSeek: ungated, moe_intermediate each) */
    int gated_shared;         /* 1: one shared expert of shared_expert_intermediate_size behind a gate (Qwen-MoE) */
} moe_geom;

/* Reads the MLA fields of C into *A when C has kv_lora_rank.  Returns 0 or -1 + ERR. */
static int read_mla(const json_t *c, const char *path, mla_geom *a, char *err, size_t errlen)
{
    memset(a, 0, sizeof *a);
    if (!has(c, "kv_lora_rank")) return 0;
    if (int_field(c, path, "kv_lora_rank", -1, 1, &a->kv_lora, err, errlen) ||
        int_field(c, path, "q_lora_rank", 0, 0, &a->q_lora, err, errlen) ||
        int_field(c, path, "qk_nope_head_dim", -1, 0, &a->nope, err, errlen) ||
        int_field(c, path, "qk_rope_head_dim", -1, 1, &a->rope, err, errlen) ||
        int_field(c, path, "v_head_dim", -1, 1, &a->v, err, errlen))
        return -1;
    return 0;
}

/* Reads the MoE fields of C into *MO and *G (M: the dense geometry read so far;
 * its intermediate may be 0 when C gives only moe_intermediate_size).  Returns
 * 0 or -1 + ERR. */
static int read_moe(const json_t *c, const char *path, model_spec *m, hf_moe *mo, moe_geom *g, char *err,
                    size_t errlen)
{
    memset(g, 0, sizeof *g);
    if (int_field(c, path, "num_local_experts", 0, 0, &mo->experts, err, errlen)) return -1;
    if (!mo->experts && int_field(c, path, "num_experts", 0, 0, &mo->experts, err, errlen)) return -1;
    if (!mo->experts && int_field(c, path, "n_routed_experts", 0, 0, &mo->experts, err, errlen)) return -1;
    int inter_def = mo->experts && has(c, "moe_intermediate_size") ? 0 : -1;
    if (int_field(c, path, "intermediate_size", inter_def, 0, &m->intermediate, err, errlen)) return -1;
    if (!mo->experts) {
        if (m->intermediate < 1) {
            snprintf(err, errlen, "%s: field intermediate_size: expected a whole number >= 1", path);
            return -1;
        }
        return 0;
    }
    int step = 1, freq = 1;
    if (int_field(c, path, "num_experts_per_tok", -1, 1, &mo->experts_per_token, err, errlen) ||
        int_field(c, path, "moe_intermediate_size", m->intermediate, 1, &mo->moe_intermediate, err, errlen) ||
        int_field(c, path, "shared_expert_intermediate_size", 0, 0, &mo->shared_intermediate, err, errlen) ||
        int_field(c, path, "n_shared_experts", 0, 0, &g->n_shared, err, errlen) ||
        int_field(c, path, "first_k_dense_replace", 0, 0, &g->dense_layers, err, errlen) ||
        int_field(c, path, "decoder_sparse_step", 1, 1, &step, err, errlen) ||
        int_field(c, path, "moe_layer_freq", 1, 1, &freq, err, errlen))
        return -1;
    if (mo->experts_per_token > mo->experts) {
        snprintf(err, errlen, "%s: field num_experts_per_tok: %d is more than the %d experts", path,
                 mo->experts_per_token, mo->experts);
        return -1;
    }
    const json_t *only = json_object_get(c, "mlp_only_layers");
    if (step != 1 || freq != 1 || (json_is_array(only) && json_array_size(only) > 0)) {
        snprintf(err, errlen, "%s: field %s: dense layers between MoE layers are not supported (only first_k_dense_replace)",
                 path, step != 1 ? "decoder_sparse_step" : freq != 1 ? "moe_layer_freq" : "mlp_only_layers");
        return -1;
    }
    if (g->dense_layers >= m->layers) {
        snprintf(err, errlen, "%s: field first_k_dense_replace: %d leaves none of the %d layers to the experts", path,
                 g->dense_layers, m->layers);
        return -1;
    }
    if (g->dense_layers && m->intermediate < 1) {
        snprintf(err, errlen, "%s: field intermediate_size: missing (the %d dense layers need it)", path, g->dense_layers);
        return -1;
    }
    if (mo->shared_intermediate) g->gated_shared = 1;
    else mo->shared_intermediate = g->n_shared * mo->moe_intermediate;
    if (!m->intermediate) m->intermediate = mo->moe_intermediate;
    return 0;
}

/* 1 when config O describes an encoder (BERT-style) model: its model_type is
 * bert, roberta or xlm-roberta, or its first architecture's name begins with
 * Bert, Roberta or XLMRoberta (BertModel, XLMRobertaForSequenceClassification...). */
static int encoder_arch(const json_t *o)
{
    const char *t = str_field(o, "model_type");
    if (!strcmp(t, "bert") || !strcmp(t, "roberta") || !strcmp(t, "xlm-roberta")) return 1;
    const json_t *a = json_array_get(json_object_get(o, "architectures"), 0);
    const char *n = json_is_string(a) ? json_string_value(a) : "";
    return !strncmp(n, "Bert", 4) || !strncmp(n, "Roberta", 7) || !strncmp(n, "XLMRoberta", 10);
}

/* An encoder's geometry and parameter count (M holds what the common fields
 * gave; MOE_OR_MLA: the config had experts or MLA, which no encoder has).
 * Count (hfcfg.h): embeddings (vocab + max_position_embeddings +
 * type_vocab_size rows of hidden, and their LayerNorm), per layer the biased
 * Q, K, V and output projections, two LayerNorms and the plain (ungated) MLP
 * with biases; then the head of the first architecture: *Model a pooler
 * (hidden x hidden + bias), Bert*ForSequenceClassification the pooler and a
 * hidden x labels classifier, Roberta/XLMRoberta*ForSequenceClassification a
 * dense layer and the hidden x labels projection, *ForMaskedLM the transform
 * (dense, LayerNorm) and the vocabulary's bias (its weights tied).  labels:
 * the size of id2label (2 when absent).  The context is
 * max_position_embeddings, less the 2 positions RoBERTa-family models reserve
 * (padding_idx + 1). Returns 0 or -1 + ERR. */
static int encoder_geometry(const json_t *o, const char *path, model_spec *m, int moe_or_mla, char *err, size_t errlen)
{
    int types = 2;
    if (moe_or_mla) {
        snprintf(err, errlen, "%s: an encoder (BERT-style) config with experts or latent attention is not supported", path);
        return -1;
    }
    if (int_field(o, path, "type_vocab_size", 2, 0, &types, err, errlen)) return -1;
    if (m->heads * m->head_dim != m->hidden || m->kv_heads != m->heads) {
        snprintf(err, errlen, "%s: field num_attention_heads: an encoder's %d heads must split its hidden size %d evenly "
                 "(and have no grouped KV heads)", path, m->heads, m->hidden);
        return -1;
    }
    const json_t *a0 = json_array_get(json_object_get(o, "architectures"), 0);
    const char *arch = json_is_string(a0) ? json_string_value(a0) : "";
    const char *t = str_field(o, "model_type");
    int roberta = !strncmp(arch, "Roberta", 7) || !strncmp(arch, "XLMRoberta", 10) || !strcmp(t, "roberta") ||
                  !strcmp(t, "xlm-roberta");
    const json_t *labels = json_object_get(o, "id2label");
    double nl = json_is_object(labels) && json_object_size(labels) > 0 ? (double) json_object_size(labels) : 2;
    double h = m->hidden, I = m->intermediate, V = m->vocab;
    double embed = (V + m->context + types) * h + 2 * h;
    double layer = 4 * (h * h + h) + 2 * h + (h * I + I) + (I * h + h) + 2 * h;
    double head = h * h + h;   /* a pooler, or a RoBERTa classification head's dense layer */
    if (strstr(arch, "ForSequenceClassification")) head += h * nl + nl;
    else if (strstr(arch, "ForMaskedLM")) head += 2 * h + V;
    if (roberta) {
        if (m->context <= 2) {
            snprintf(err, errlen, "%s: field max_position_embeddings: %d leaves no position (RoBERTa reserves 2)", path,
                     m->context);
            return -1;
        }
        m->context -= 2;
    }
    m->params = embed + m->layers * layer + head;
    m->encoder = 1;
    snprintf(m->source, sizeof m->source, "%s (config.json; encoder %s)", path, *arch ? arch : t);
    return 0;
}

int hf_config_parse(const char *path, const char *text, const char *name, const char *weights, model_spec *m,
                    hf_moe *moe, char *err, size_t errlen)
{
    json_error_t je;
    json_t *o = json_loads(text, 0, &je);
    hf_moe mo = { 0 };
    mla_geom a;
    moe_geom g;
    int rc = -1;
    memset(m, 0, sizeof *m);
    if (!o) {
        snprintf(err, errlen, "%s:%d: not JSON: %s", path, je.line, je.text);
        return -1;
    }
    if (!json_is_object(o)) {
        snprintf(err, errlen, "%s: not a config.json (expected a JSON object)", path);
        goto out;
    }
    /* Multimodal configs keep the language model's fields in text_config. */
    const json_t *tc = json_object_get(o, "text_config");
    const json_t *c = json_is_object(tc) && json_object_get(tc, "hidden_size") ? tc : o;
    if (strlen(name) >= sizeof m->name) {
        snprintf(err, errlen, "%s: name '%s' is too long (at most %zu characters)", path, name, sizeof m->name - 1);
        goto out;
    }
    snprintf(m->name, sizeof m->name, "%s", name);
    if (int_field(c, path, "num_hidden_layers", -1, 1, &m->layers, err, errlen) ||
        int_field(c, path, "hidden_size", -1, 1, &m->hidden, err, errlen) ||
        int_field(c, path, "num_attention_heads", -1, 1, &m->heads, err, errlen) ||
        int_field(c, path, "num_key_value_heads", m->heads, 1, &m->kv_heads, err, errlen) ||
        int_field(c, path, "head_dim", m->hidden / m->heads, 1, &m->head_dim, err, errlen) ||
        int_field(c, path, "vocab_size", -1, 1, &m->vocab, err, errlen) ||
        int_field(c, path, "max_position_embeddings", 4096, 1, &m->context, err, errlen))
        goto out;
    if (read_mla(c, path, &a, err, errlen) || read_moe(c, path, m, &mo, &g, err, errlen)) goto out;
    if (a.kv_lora) m->head_dim = a.nope + a.rope;   /* the query/key width; values are a.v wide */
    if (m->heads % m->kv_heads) {
        snprintf(err, errlen, "%s: field num_key_value_heads: %d does not divide the %d attention heads", path,
                 m->kv_heads, m->heads);
        goto out;
    }
    if (precision(o, c, path, weights, m->weights, sizeof m->weights, err, errlen)) goto out;
    if (encoder_arch(o)) {
        rc = encoder_geometry(o, path, m, mo.experts || a.kv_lora, err, errlen);
        goto out;
    }

    /* The parameter count, weight by weight (hfcfg.h). */
    const char *type = str_field(c, "model_type");
    int qwen2 = !strncmp(type, "qwen2", 5), qwen3 = !strncmp(type, "qwen3", 5), gptoss = !strcmp(type, "gpt_oss");
    double h = m->hidden, H = m->heads, attn;
    if (a.kv_lora) {
        double qk = a.nope + a.rope;
        attn = (a.q_lora ? h * a.q_lora + a.q_lora + a.q_lora * H * qk : h * H * qk)   /* q (down, norm, up) */
             + h * (a.kv_lora + a.rope) + a.kv_lora + a.kv_lora * H * (a.nope + a.v)  /* kv (down, norm, up) */
             + H * a.v * h;                                                           /* o */
    } else {
        double hd = m->head_dim, q = H * hd, kv = (double) m->kv_heads * hd;
        attn = h * q + 2 * h * kv + q * h;
        if (qwen2) attn += q + 2 * kv;                                  /* q, k, v biases (always) */
        else if (bool_field(c, "attention_bias", 0)) attn += q + 2 * kv + h;   /* and the output's */
        if (qwen3) attn += 2 * hd;                                      /* q and k RMS norms per head */
        if (gptoss) attn += H;                                          /* an attention sink per head */
    }
    double norms = 2 * h;
    double dense_mlp = 3 * h * m->intermediate;
    if (bool_field(c, "mlp_bias", 0)) dense_mlp += 2.0 * m->intermediate + h;
    double moe_mlp = dense_mlp, moe_active = dense_mlp, expert = 0;
    if (mo.experts) {
        double mi = mo.moe_intermediate, E = mo.experts;
        expert = 3 * h * mi + (gptoss ? 2 * mi + h : 0);                /* gpt-oss: gate/up and down biases */
        double router = h * E + (gptoss || !strcmp(str_field(c, "topk_method"), "noaux_tc") ? E : 0);
        double shared = 3 * h * mo.shared_intermediate + (g.gated_shared ? h : 0);
        moe_mlp = E * expert + router + shared;
        moe_active = mo.experts_per_token * expert + router + shared;
    }
    int tied = bool_field(c, "tie_word_embeddings", bool_field(o, "tie_word_embeddings", 0));
    double embed = (double) m->vocab * h * (tied ? 1 : 2) + h;   /* and the final norm */
    int nmoe = mo.experts ? m->layers - g.dense_layers : 0;
    double dense_layer = attn + norms + dense_mlp;
    m->params = embed + (m->layers - nmoe) * dense_layer + nmoe * (attn + norms + moe_mlp);
    mo.active_params = embed + (m->layers - nmoe) * dense_layer + nmoe * (attn + norms + moe_active);

    m->experts = mo.experts;
    m->experts_per_token = mo.experts_per_token;
    m->moe_intermediate = mo.moe_intermediate;
    m->first_dense_layers = mo.experts ? g.dense_layers : 0;
    m->expert_params = expert;
    if (g.n_shared) m->shared_experts = g.n_shared;
    else if (mo.shared_intermediate)   /* Qwen-MoE: one wide shared expert, as moe_intermediate-wide ones */
        m->shared_experts = mo.shared_intermediate % mo.moe_intermediate ? 1 : mo.shared_intermediate / mo.moe_intermediate;
    m->kv_lora_rank = a.kv_lora;
    m->qk_rope_head_dim = a.rope;
    if (mo.experts)
        snprintf(m->source, sizeof m->source, "%s (config.json; MoE: %d experts, %d per token, %.4g active)", path,
                 mo.experts, mo.experts_per_token, mo.active_params);
    else
        snprintf(m->source, sizeof m->source, "%s (config.json)", path);
    if (moe) *moe = mo;
    rc = 0;
out:
    json_decref(o);
    return rc;
}

int hf_config_read(const char *path, const char *name, const char *weights, model_spec *m, hf_moe *moe,
                   char *err, size_t errlen)
{
    json_error_t je;
    FILE *f = infile_open(path, INFILE_MAX_JSON, err, errlen);
    if (!f) return -1;
    json_t *o = json_loadf(f, 0, &je);
    fclose(f);
    if (!o) {
        if (je.line <= 0) snprintf(err, errlen, "%s: cannot read: %s", path, je.text);
        else snprintf(err, errlen, "%s:%d: not JSON: %s", path, je.line, je.text);
        return -1;
    }
    char *text = json_dumps(o, 0);
    json_decref(o);
    if (!text) {
        snprintf(err, errlen, "%s: out of memory", path);
        return -1;
    }
    int rc = hf_config_parse(path, text, name, weights, m, moe, err, errlen);
    free(text);
    return rc;
}
