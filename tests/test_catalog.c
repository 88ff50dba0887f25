/* test_catalog.c -- Criterion tests of the GPU and model catalog (sim/core/catalog.c):
 * seeding, case-insensitive lookups and aliases, unknown names, user entries,
 * validation, the printed listing and the bytes per weight. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "core/catalog.h"

static sqlite3 *db;
static char err[512];

static void setup(void)
{
    cr_assert_eq(sqlite3_open(":memory:", &db), SQLITE_OK);
    err[0] = '\0';
    cr_assert_eq(catalog_init(db, err, sizeof err), 0, "catalog_init: %s", err);
}

static void teardown(void)
{
    sqlite3_close(db);
    db = NULL;
}

static long long count_rows(const char *sql)
{
    sqlite3_stmt *st = NULL;
    long long n = -1;
    cr_assert_eq(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
    if (sqlite3_step(st) == SQLITE_ROW)
        n = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return n;
}

static gpu_spec valid_gpu(void)
{
    gpu_spec g = { "MyGPU", "My GPU 96GB", 500, 1000, 96, 4000, 400, 2.5, "test", .fp4_tflops = 0 };
    return g;
}

static model_spec valid_model(void)
{
    model_spec m = { "Tiny-1B", 16, 2048, 32, 8, 64, 8192, 50000, 1.1e9, 2048, "test", "bf16", .experts = 0 };
    return m;
}

TestSuite(catalog, .init = setup, .fini = teardown);

Test(catalog, seeded_with_builtins)
{
    cr_assert_eq(count_rows("SELECT count(*) FROM gpus"), 16);
    cr_assert_eq(count_rows("SELECT count(*) FROM models"), 23);   /* 19 decoders, 4 encoders */
    cr_assert_eq(count_rows("SELECT count(*) FROM gpus WHERE builtin = 1"), 16);
    cr_assert_eq(count_rows("SELECT count(*) FROM models WHERE source = ''"), 0);
    cr_assert_eq(count_rows("SELECT count(*) FROM gpus WHERE source = ''"), 0);
}

Test(catalog, init_is_idempotent_and_keeps_user_entries)
{
    gpu_spec g;
    cr_assert_eq(catalog_gpu(db, "h100", &g, err, sizeof err), 0);
    g.price_hr = 9.75;
    cr_assert_eq(catalog_put_gpu(db, &g, err, sizeof err), 0, "%s", err);
    cr_assert_eq(catalog_init(db, err, sizeof err), 0, "%s", err);
    cr_assert_eq(count_rows("SELECT count(*) FROM gpus"), 16);
    cr_assert_eq(catalog_gpu(db, "h100", &g, err, sizeof err), 0);
    cr_assert_float_eq(g.price_hr, 9.75, 1e-12);
    cr_assert_eq(count_rows("SELECT builtin FROM gpus WHERE name = 'h100'"), 0);
}

Test(catalog, gpu_lookup_case_insensitive)
{
    gpu_spec g;
    cr_assert_eq(catalog_gpu(db, "H100", &g, err, sizeof err), 0, "%s", err);
    cr_assert_str_eq(g.name, "h100");
    cr_assert_str_eq(g.full_name, "H100-SXM5-80GB");
    cr_assert_float_eq(g.bf16_tflops, 989.0, 1e-9);
    cr_assert_float_eq(g.fp8_tflops, 1979.0, 1e-9);
    cr_assert_float_eq(g.mem_gib, 80.0, 1e-9);
    cr_assert_float_eq(g.mem_bw_gbs, 3350.0, 1e-9);
    cr_assert_float_eq(g.link_gbs, 900.0, 1e-9);
    cr_assert_gt(g.price_hr, 0);
    cr_assert_neq(strstr(g.source, "datasheet"), NULL);
    cr_assert_eq(catalog_gpu(db, "L40S", &g, err, sizeof err), 0);
    cr_assert_str_eq(g.name, "l40s");
    cr_assert_float_eq(g.link_gbs, 32.0, 1e-9);
}

Test(catalog, gpu_aliases)
{
    static const char *const alias[][2] = {
        { "a100-80gb", "a100" }, { "A100-SXM", "a100" }, { "h100-sxm", "h100" },
        { "H100-SXM5", "h100" }, { "h200-sxm", "h200" },
    };
    for (size_t i = 0; i < sizeof alias / sizeof alias[0]; i++) {
        gpu_spec g;
        cr_assert_eq(catalog_gpu(db, alias[i][0], &g, err, sizeof err), 0, "%s: %s",
                     alias[i][0], err);
        cr_assert_str_eq(g.name, alias[i][1]);
    }
}

Test(catalog, model_lookup)
{
    model_spec m;
    cr_assert_eq(catalog_model(db, "Llama-3-70B", &m, err, sizeof err), 0, "%s", err);
    cr_assert_str_eq(m.name, "llama-3-70b");
    cr_assert_eq(m.layers, 80);
    cr_assert_eq(m.hidden, 8192);
    cr_assert_eq(m.heads, 64);
    cr_assert_eq(m.kv_heads, 8);
    cr_assert_eq(m.head_dim, 128);
    cr_assert_eq(m.intermediate, 28672);
    cr_assert_eq(m.vocab, 128256);
    cr_assert_float_eq(m.params, 70.55e9, 1e3);
    cr_assert_eq(m.context, 8192);
    cr_assert_neq(strstr(m.source, "HF config.json of"), NULL);
}

Test(catalog, unknown_names_list_valid_ones)
{
    gpu_spec g;
    model_spec m;
    cr_assert_eq(catalog_gpu(db, "b300", &g, err, sizeof err), 1);
    cr_assert_str_eq(err, "unknown gpu 'b300' (valid: a100, b200, gaudi2, gb200, gh200, h100, h20, h200, l4, l40s, "
                          "max-1550, mi250, mi300x, mi325x, rtx-4090, rtx-pro-6000)");
    cr_assert_eq(catalog_model(db, "gpt-5", &m, err, sizeof err), 1);
    cr_assert_str_eq(err, "unknown model 'gpt-5' (valid: all-minilm-l6-v2, bert-base-uncased, bge-m3, bge-reranker-base, codellama-34b, deepseek-v3, gpt-oss-120b, gpt-oss-20b, "
                          "llama-2-70b, llama-2-7b, llama-3-70b, llama-3-8b, llama-3.1-405b, llama-3.1-70b, "
                          "llama-3.1-8b, llama-3.3-70b, mistral-7b, mixtral-8x7b, qwen-72b, qwen3-235b-a22b, "
                          "qwen3-30b-a3b, qwen3-32b, qwen3-8b)");
}

Test(catalog, long_valid_list_is_cut)
{
    gpu_spec g = valid_gpu(), got;
    char big[1024];
    for (int i = 0; i < 60; i++) {
        snprintf(g.name, sizeof g.name, "user-gpu-%03d", i);
        cr_assert_eq(catalog_put_gpu(db, &g, err, sizeof err), 0, "%s", err);
    }
    cr_assert_eq(catalog_gpu(db, "zzz", &got, big, sizeof big), 1);
    cr_assert_eq(strncmp(big, "unknown gpu 'zzz' (valid: a100, b200, ", 38), 0, "%s", big);
    cr_assert_neq(strstr(big, ", ...)"), NULL, "%s", big);
}

Test(catalog, put_get_round_trip)
{
    gpu_spec g = valid_gpu(), got;
    model_spec m = valid_model(), mgot;

    cr_assert_eq(catalog_put_gpu(db, &g, err, sizeof err), 0, "%s", err);
    cr_assert_eq(catalog_gpu(db, "MYGPU", &got, err, sizeof err), 0, "%s", err);
    cr_assert_str_eq(got.name, "mygpu");
    cr_assert_str_eq(got.full_name, g.full_name);
    cr_assert_float_eq(got.bf16_tflops, g.bf16_tflops, 1e-12);
    cr_assert_float_eq(got.fp8_tflops, g.fp8_tflops, 1e-12);
    cr_assert_float_eq(got.mem_gib, g.mem_gib, 1e-12);
    cr_assert_float_eq(got.mem_bw_gbs, g.mem_bw_gbs, 1e-12);
    cr_assert_float_eq(got.link_gbs, g.link_gbs, 1e-12);
    cr_assert_float_eq(got.price_hr, g.price_hr, 1e-12);
    cr_assert_str_eq(got.source, "test");
    cr_assert_eq(count_rows("SELECT builtin FROM gpus WHERE name = 'mygpu'"), 0);

    cr_assert_eq(catalog_put_model(db, &m, err, sizeof err), 0, "%s", err);
    cr_assert_eq(catalog_model(db, "tiny-1b", &mgot, err, sizeof err), 0, "%s", err);
    cr_assert_str_eq(mgot.name, "tiny-1b");
    cr_assert_eq(mgot.layers, 16);
    cr_assert_eq(mgot.hidden, 2048);
    cr_assert_eq(mgot.heads, 32);
    cr_assert_eq(mgot.kv_heads, 8);
    cr_assert_eq(mgot.head_dim, 64);
    cr_assert_eq(mgot.intermediate, 8192);
    cr_assert_eq(mgot.vocab, 50000);
    cr_assert_float_eq(mgot.params, 1.1e9, 1e-3);
    cr_assert_eq(mgot.context, 2048);

    /* Replacing keeps one row; the new name shows up in the valid list. */
    g.price_hr = 3.0;
    cr_assert_eq(catalog_put_gpu(db, &g, err, sizeof err), 0, "%s", err);
    cr_assert_eq(count_rows("SELECT count(*) FROM gpus"), 17);
    cr_assert_eq(catalog_gpu(db, "nope", &got, err, sizeof err), 1);
    cr_assert_neq(strstr(err, "mygpu"), NULL, "%s", err);
}

Test(catalog, invalid_put_rejected)
{
    gpu_spec g = valid_gpu();
    model_spec m = valid_model();

    g.bf16_tflops = -1;
    cr_assert_eq(catalog_put_gpu(db, &g, err, sizeof err), -1);
    cr_assert_neq(strstr(err, "bf16_tflops must be a positive number"), NULL, "%s", err);
    g = valid_gpu();
    g.mem_bw_gbs = 0;
    cr_assert_eq(catalog_put_gpu(db, &g, err, sizeof err), -1);
    cr_assert_neq(strstr(err, "mem_bw_gbs"), NULL, "%s", err);
    g = valid_gpu();
    g.name[0] = '\0';
    cr_assert_eq(catalog_put_gpu(db, &g, err, sizeof err), -1);
    cr_assert_neq(strstr(err, "name is empty"), NULL, "%s", err);
    g = valid_gpu();
    strcpy(g.name, "bad name");
    cr_assert_eq(catalog_put_gpu(db, &g, err, sizeof err), -1);

    m.kv_heads = 5;
    cr_assert_eq(catalog_put_model(db, &m, err, sizeof err), -1);
    cr_assert_str_eq(err, "model 'tiny-1b': heads (32) must be a multiple of kv_heads (5)");
    m = valid_model();
    m.head_dim = 0;
    cr_assert_eq(catalog_put_model(db, &m, err, sizeof err), -1);
    cr_assert_neq(strstr(err, "head_dim"), NULL, "%s", err);
    m = valid_model();
    m.params = 0;
    cr_assert_eq(catalog_put_model(db, &m, err, sizeof err), -1);

    /* heads * head_dim need not equal hidden (32 * 64 != 2048 * 2 here). */
    m = valid_model();
    m.hidden = 3000;
    cr_assert_eq(catalog_put_model(db, &m, err, sizeof err), 0, "%s", err);

    cr_assert_eq(count_rows("SELECT count(*) FROM gpus"), 16);
    cr_assert_eq(count_rows("SELECT count(*) FROM models"), 24);
}

Test(catalog, print_lists_everything)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    cr_assert_not_null(f);
    cr_assert_eq(catalog_print(db, f, err, sizeof err), 0, "%s", err);
    fclose(f);
    cr_assert_neq(strstr(buf, "H100-SXM5-80GB"), NULL);
    cr_assert_neq(strstr(buf, "link GB/s"), NULL);
    cr_assert_neq(strstr(buf, "llama-3-70b"), NULL);
    cr_assert_neq(strstr(buf, "params (B)"), NULL);
    cr_assert_neq(strstr(buf, "Sources"), NULL);
    cr_assert_neq(strstr(buf, "HF config.json of Qwen/"), NULL);
    free(buf);
}

Test(catalog, weight_bytes)
{
    cr_assert_eq(catalog_weight_bytes("bf16"), 2.0);
    cr_assert_eq(catalog_weight_bytes("FP16"), 2.0);
    cr_assert_eq(catalog_weight_bytes("fp8"), 1.0);
    cr_assert_eq(catalog_weight_bytes("int8"), 1.0);
    cr_assert_eq(catalog_weight_bytes("int4"), 0.5);
    cr_assert_eq(catalog_weight_bytes("fp64"), 0.0);
    cr_assert_eq(catalog_weight_bytes(NULL), 0.0);
}
