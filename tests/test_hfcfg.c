/* test_hfcfg.c -- model geometry from Hugging Face config.json files
 * (core/hfcfg.h): the parameter count computed from the geometry equals each
 * checkpoint's published count (the safetensors total of its model page) to
 * the parameter, for dense, tied-embedding, qkv-bias, q/k-norm and
 * mixture-of-experts configs (tests/data/hf/, the configs as published);
 * bad files are one line naming the field. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "core/hfcfg.h"

static model_spec read_ok(const char *file, hf_moe *moe)
{
    char path[256], err[512] = "";
    snprintf(path, sizeof path, "tests/data/hf/%s", file);
    model_spec m;
    cr_assert_eq(hf_config_read(path, "m", NULL, &m, moe, err, sizeof err), 0, "%s: %s", file, err);
    return m;
}

/* Published totals: Llama-3.1-8B 8,030,261,248; Mistral-7B-v0.1 7,241,732,096;
 * Qwen2.5-7B 7,615,616,512 (q/k/v biases); Qwen2.5-0.5B 494,032,768 (tied
 * embeddings). */
Test(hfcfg, dense_counts_match_published)
{
    static const struct { const char *file; double params; int layers, kv, head_dim; } C[] = {
        { "llama-3.1-8b.json", 8030261248.0, 32, 8, 128 },
        { "mistral-7b-v0.1.json", 7241732096.0, 32, 8, 128 },
        { "qwen2.5-7b.json", 7615616512.0, 28, 4, 128 },
        { "qwen2.5-0.5b.json", 494032768.0, 24, 2, 64 },
    };
    for (size_t i = 0; i < sizeof C / sizeof C[0]; i++) {
        hf_moe moe;
        model_spec m = read_ok(C[i].file, &moe);
        cr_expect_eq(m.params, C[i].params, "%s: %.0f vs %.0f", C[i].file, m.params, C[i].params);
        cr_expect_eq(m.layers, C[i].layers);
        cr_expect_eq(m.kv_heads, C[i].kv);
        cr_expect_eq(m.head_dim, C[i].head_dim);
        cr_expect_eq(moe.experts, 0);
        cr_expect_eq(moe.active_params, m.params, "a dense model's tokens pass through every weight");
        cr_expect_str_eq(m.weights, "bf16");
    }
}

/* Mixtral-8x7B: 46,702,792,704 in all, 12.9 B active (2 of 8 experts);
 * Qwen3-30B-A3B: 30,532,122,624 in all, 3.3 B active (8 of 128), head_dim
 * 128 with a hidden size of 2048 (heads x head_dim != hidden). */
Test(hfcfg, moe_counts_match_published)
{
    hf_moe moe;
    model_spec m = read_ok("mixtral-8x7b.json", &moe);
    cr_expect_eq(m.params, 46702792704.0, "%.0f", m.params);
    cr_expect_eq(moe.experts, 8);
    cr_expect_eq(moe.experts_per_token, 2);
    cr_expect_eq(moe.moe_intermediate, 14336);
    cr_expect(fabs(moe.active_params - 12.9e9) < 0.05e9, "%.4g", moe.active_params);
    m = read_ok("qwen3-30b-a3b.json", &moe);
    cr_expect_eq(m.params, 30532122624.0, "%.0f", m.params);
    cr_expect_eq(moe.experts, 128);
    cr_expect_eq(moe.experts_per_token, 8);
    cr_expect_eq(moe.moe_intermediate, 768);
    cr_expect_eq(m.head_dim, 128);
    cr_expect(fabs(moe.active_params - 3.3e9) < 0.06e9, "%.4g", moe.active_params);
    cr_expect(strstr(m.source, "MoE: 128 experts, 8 per token"), "%s", m.source);
}

static void expect_bad(const char *text, const char *want)
{
    model_spec m;
    char err[512] = "";
    cr_expect_neq(hf_config_parse("x.json", text, "m", NULL, &m, NULL, err, sizeof err), 0, "accepted: %s", text);
    cr_expect(strstr(err, want), "'%s' lacks '%s'", err, want);
    cr_expect(!strchr(err, '\n'), "one line: %s", err);
}

Test(hfcfg, bad_configs_name_the_field)
{
    expect_bad("{", "x.json:");
    expect_bad("[1]", "expected a JSON object");
    expect_bad("{\"hidden_size\": 4096}", "field num_hidden_layers: missing");
    expect_bad("{\"num_hidden_layers\": 2, \"hidden_size\": 64, \"num_attention_heads\": 4, \"vocab_size\": 10}",
               "field intermediate_size: missing");
    expect_bad("{\"num_hidden_layers\": 2.5, \"hidden_size\": 64, \"num_attention_heads\": 4, \"vocab_size\": 10,"
               " \"intermediate_size\": 128}", "field num_hidden_layers: expected a whole number");
    expect_bad("{\"num_hidden_layers\": 2, \"hidden_size\": 64, \"num_attention_heads\": 4, \"num_key_value_heads\": 3,"
               " \"vocab_size\": 10, \"intermediate_size\": 128}", "num_key_value_heads: 3 does not divide");
    expect_bad("{\"num_hidden_layers\": 2, \"hidden_size\": 64, \"num_attention_heads\": 4, \"vocab_size\": 10,"
               " \"intermediate_size\": 128, \"torch_dtype\": \"float32\"}", "field torch_dtype");
    expect_bad("{\"num_hidden_layers\": 2, \"hidden_size\": 64, \"num_attention_heads\": 4, \"vocab_size\": 10,"
               " \"num_experts\": 4, \"num_experts_per_tok\": 8, \"moe_intermediate_size\": 32}",
               "num_experts_per_tok: 8 is more than the 4 experts");
}

/* --weights wins over torch_dtype; an fp8 quantization_config is fp8. */
Test(hfcfg, precision)
{
    model_spec m;
    char err[512] = "";
    const char *base = "{\"num_hidden_layers\": 2, \"hidden_size\": 64, \"num_attention_heads\": 4, \"vocab_size\": 10,"
                       " \"intermediate_size\": 128, \"torch_dtype\": \"float16\"%s}";
    char text[512];
    snprintf(text, sizeof text, base, "");
    cr_assert_eq(hf_config_parse("x.json", text, "m", NULL, &m, NULL, err, sizeof err), 0, "%s", err);
    cr_expect_str_eq(m.weights, "fp16");
    cr_assert_eq(hf_config_parse("x.json", text, "m", "int4", &m, NULL, err, sizeof err), 0, "%s", err);
    cr_expect_str_eq(m.weights, "int4");
    snprintf(text, sizeof text, base, ", \"quantization_config\": {\"quant_method\": \"fp8\"}");
    cr_assert_eq(hf_config_parse("x.json", text, "m", NULL, &m, NULL, err, sizeof err), 0, "%s", err);
    cr_expect_str_eq(m.weights, "fp8");
    cr_expect_eq(m.context, 4096, "max_position_embeddings defaults to 4096");
    cr_expect_eq(m.head_dim, 16);
}
