/* hfcfg.c -- a model's geometry from its Hugging Face config.json (hfcfg.h). */
#include "core/hfcfg.h"

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

/* The weights' precision: WEIGHTS when given, else a quantization_config's
 * method (fp8), else torch_dtype.  Returns 0 or -1 + ERR. */
static int precision(const json_t *o, const char *path, const char *weights, char *out, size_t n, char *err,
                     size_t errlen)
{
    if (weights) {
        snprintf(out, n, "%s", weights);
        return 0;
    }
    const json_t *q = json_object_get(o, "quantization_config");
    if (json_is_object(q) && !strcmp(str_field(q, "quant_method"), "fp8")) {
        snprintf(out, n, "fp8");
        return 0;
    }
    const char *t = str_field(o, "torch_dtype");
    if (!*t || !strcmp(t, "bfloat16")) snprintf(out, n, "bf16");
    else if (!strcmp(t, "float16")) snprintf(out, n, "fp16");
    else {
        snprintf(err, errlen, "%s: field torch_dtype: '%s' is not a serving precision (give --weights bf16|fp16|fp8|int8|int4)",
                 path, t);
        return -1;
    }
    return 0;
}

int hf_config_parse(const char *path, const char *text, const char *name, const char *weights, model_spec *m,
                    hf_moe *moe, char *err, size_t errlen)
{
    json_error_t je;
    json_t *o = json_loads(text, 0, &je);
    hf_moe mo = { 0 };
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
    if (int_field(c, path, "num_local_experts", 0, 0, &mo.experts, err, errlen)) goto out;
    if (!mo.experts && int_field(c, path, "num_experts", 0, 0, &mo.experts, err, errlen)) goto out;
    int inter_def = mo.experts && json_object_get(c, "moe_intermediate_size") ? 0 : -1;
    if (int_field(c, path, "intermediate_size", inter_def, 0, &m->intermediate, err, errlen)) goto out;
    if (mo.experts) {
        if (int_field(c, path, "num_experts_per_tok", -1, 1, &mo.experts_per_token, err, errlen) ||
            int_field(c, path, "moe_intermediate_size", m->intermediate, 1, &mo.moe_intermediate, err, errlen) ||
            int_field(c, path, "shared_expert_intermediate_size", 0, 0, &mo.shared_intermediate, err, errlen))
            goto out;
        if (mo.experts_per_token > mo.experts) {
            snprintf(err, errlen, "%s: field num_experts_per_tok: %d is more than the %d experts", path,
                     mo.experts_per_token, mo.experts);
            goto out;
        }
        if (!m->intermediate) m->intermediate = mo.moe_intermediate;
    } else if (m->intermediate < 1) {
        snprintf(err, errlen, "%s: field intermediate_size: expected a whole number >= 1", path);
        goto out;
    }
    if (m->heads % m->kv_heads) {
        snprintf(err, errlen, "%s: field num_key_value_heads: %d does not divide the %d attention heads", path,
                 m->kv_heads, m->heads);
        goto out;
    }
    if (precision(c == o ? o : (json_object_get(c, "torch_dtype") ? c : o), path, weights, m->weights,
                  sizeof m->weights, err, errlen))
        goto out;

    /* The parameter count, weight by weight (hfcfg.h). */
    const char *type = str_field(c, "model_type");
    int qwen2 = !strncmp(type, "qwen2", 5), qwen3 = !strncmp(type, "qwen3", 5);
    double h = m->hidden, hd = m->head_dim, q = (double) m->heads * hd, kv = (double) m->kv_heads * hd;
    double attn = h * q + 2 * h * kv + q * h;
    if (bool_field(c, "attention_bias", qwen2)) attn += q + 2 * kv;   /* q, k, v biases (qwen2: always) */
    if (qwen3) attn += 2 * hd;                                        /* q and k RMS norms per head */
    double norms = 2 * h, mlp, active_mlp;
    if (mo.experts) {
        double expert = 3 * h * mo.moe_intermediate, shared = 0;
        if (mo.shared_intermediate) shared = 3 * h * mo.shared_intermediate + h;   /* and its gate */
        mlp = mo.experts * expert + h * mo.experts + shared;                         /* and the router */
        active_mlp = mo.experts_per_token * expert + h * mo.experts + shared;
    } else
        mlp = active_mlp = 3 * h * m->intermediate;
    int tied = bool_field(c, "tie_word_embeddings", bool_field(o, "tie_word_embeddings", 0));
    double embed = (double) m->vocab * h * (tied ? 1 : 2) + h;   /* and the final norm */
    m->params = embed + m->layers * (attn + norms + mlp);
    mo.active_params = embed + m->layers * (attn + norms + active_mlp);
    if (mo.experts)
        snprintf(m->source, sizeof m->source, "%s (config.json; MoE: %d experts, %d per token, %.4g active)", path,
                 mo.experts, mo.experts_per_token, mo.active_params);
    else
        snprintf(m->source, sizeof m->source, "%s (config.json)", path);
    if (catalog_check_model(m, err, errlen) != 0) goto out;
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
    json_t *o = json_load_file(path, 0, &je);
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
