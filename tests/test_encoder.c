/* test_encoder.c -- encoder (BERT-style) models (issue 35): their geometry and
 * parameter counts from config.json (core/hfcfg.h), one forward pass priced
 * by the roofline over the encoder's operators (core/encoder.h) against a hand
 * computation at 1024 and 2048 tokens (attention's quadratic part), the
 * encoder pool's truncation and dynamic batching (kind = encoder), a result
 * cache's embed_model and a router's classifier_model pricing their lookups,
 * and bad input: one line naming file, line and key, exit 2, no database. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "core/encoder.h"
#include "clearn.h"
#include "core/hfcfg.h"
#include "tcli.h"
#include "tsim.h"

static model_spec read_hf(const char *file)
{
    char path[256], err[512] = "";
    snprintf(path, sizeof path, "tests/data/hf/%s", file);
    model_spec m;
    cr_assert_eq(hf_config_read(path, "m", NULL, &m, NULL, err, sizeof err), 0, "%s: %s", file, err);
    return m;
}

/* all-MiniLM-L6-v2 (BertModel): 22,713,216, the count sentence-transformers
 * publishes.  bge-m3 (XLMRobertaModel): XLM-RoBERTa-large's 559,890,432 with
 * its positions extended from 514 to 8194: + 7680 x 1024 = 567,754,752.  The
 * other two by hand from the formula (hfcfg.c, encoder_geometry). */
Test(encoder, hf_counts_and_geometry)
{
    model_spec m = read_hf("all-minilm-l6-v2.json");
    cr_expect_eq(m.encoder, 1);
    cr_expect_eq(m.params, 22713216.0, "%.0f", m.params);
    cr_expect_eq(m.context, 512);
    cr_expect_eq(m.head_dim, 32);
    cr_expect_eq(m.kv_heads, 12);
    m = read_hf("bge-m3.json");
    cr_expect_eq(m.params, 559890432.0 + 7680.0 * 1024, "%.0f", m.params);
    cr_expect_eq(m.context, 8192, "RoBERTa reserves 2 of its 8194 positions");
    /* bert-base-uncased (BertForMaskedLM): embeddings (30522 + 512 + 2) x 768 + LN,
     * 12 layers of 7,087,872, the MLM transform 768 x 768 + 768 + LN and the vocabulary bias. */
    m = read_hf("bert-base-uncased.json");
    double h = 768, layer = 4 * (h * h + h) + 2 * h + (h * 3072 + 3072) + (3072 * h + h) + 2 * h;
    cr_expect_eq(layer, 7087872.0);
    cr_expect_eq(m.params, (30522 + 512 + 2) * h + 2 * h + 12 * layer + h * h + h + 2 * h + 30522, "%.0f", m.params);
    /* bge-reranker-base: one label (id2label), a RoBERTa head: dense + 768 x 1 projection. */
    m = read_hf("bge-reranker-base.json");
    cr_expect_eq(m.params, (250002 + 514 + 1) * h + 2 * h + 12 * layer + h * h + h + h + 1, "%.0f", m.params);
    cr_expect_eq(m.context, 512);
    /* A decoder stays one. */
    m = read_hf("llama-3.1-8b.json");
    cr_expect_eq(m.encoder, 0);
}

/* Device: H100's catalog figures, the roofline's default efficiencies. */
static enc_cfg h100_bge_m3(void)
{
    enc_cfg c;
    memset(&c, 0, sizeof c);
    gpu_spec g;
    tsim_catalog("h100", "bge-m3", &g, &c.model);
    cr_assert_eq(c.model.encoder, 1);
    c.peak_flops = g.bf16_tflops * 1e12;
    c.mem_bw = g.mem_bw_gbs * 1e9;
    c.weight_bytes = 2;
    c.compute_eff = 0.6;
    c.memory_eff = 0.8;
    c.overhead_ms = 1.0;
    c.launch_us = 20;
    c.max_seq_len = 8192;
    return c;
}

/* One pass of B x n tokens by hand (encoder.h's formulas, written out for
 * bge-m3: L 24, H 1024, I 4096, 16 heads of 64). */
static void by_hand(double B, double n, double *flops, double *bytes)
{
    double L = 24, H = 1024, I = 4096, T = B * n;
    double attn = 4 * L * H * B * n * n;                 /* 4 L n_h d per pair, B n^2 pairs */
    double wts = L * (3 * H * H + H * H + 2 * H * I);      /* QKV, output, plain MLP */
    *flops = attn + 2 * wts * T + L * T * (12 * H + 4 * I) + 2 * H * H * B;
    *bytes = T * 4 * L * H * 2 + wts * 2 + 3 * T * H * 4 + L * T * (10 * H + 3 * I) * 2 + T * H * 2 + H * H * 2;
}

Test(encoder, pass_1024_vs_2048_follows_flops_and_bytes)
{
    enc_cfg c = h100_bge_m3();
    double t[2];
    for (int i = 0; i < 2; i++) {
        double n = i ? 2048 : 1024, F, By;
        by_hand(1, n, &F, &By);
        double f[ENC_OP_N], b[ENC_OP_N], sf = 0, sb = 0;
        enc_work(&c.model, 2, 1, (int64_t) n, f, b);
        for (int k = 0; k < ENC_OP_N; k++) {
            sf += f[k];
            sb += b[k];
        }
        cr_expect(fabs(sf / F - 1) < 1e-12, "n %g: FLOPs %.6g vs %.6g by hand", n, sf, F);
        cr_expect(fabs(sb / By - 1) < 1e-12, "n %g: bytes %.6g vs %.6g by hand", n, sb, By);
        /* Compute-bound on an H100 at these lengths: FLOPs / (989e12 x 0.6) beats bytes / (3350e9 x 0.8). */
        cr_expect_gt(F / (989e12 * 0.6), By / (3350e9 * 0.8));
        double want = fmax(F / (989e12 * 0.6), By / (3350e9 * 0.8)) * 1e3 + 1.0 + 24 * 0.020;
        t[i] = enc_pass_ms(&c, 1, (int64_t) n);
        cr_expect(fabs(t[i] - want) < 1e-9 * want, "n %g: %.9g ms vs %.9g by hand", n, t[i], want);
    }
    /* Attention is quadratic in the length, the rest linear. */
    double f1[ENC_OP_N], f2[ENC_OP_N], b1[ENC_OP_N], b2[ENC_OP_N];
    enc_work(&c.model, 2, 1, 1024, f1, b1);
    enc_work(&c.model, 2, 1, 2048, f2, b2);
    cr_expect_eq(f2[ENC_OP_ATTENTION], 4 * f1[ENC_OP_ATTENTION]);
    cr_expect_eq(f1[ENC_OP_ATTENTION], 4.0 * 24 * 1024 * 1024.0 * 1024);
    cr_expect_eq(f2[ENC_OP_MLP], 2 * f1[ENC_OP_MLP]);
    /* 2048 -> 1024 tokens: 2.697 -> 4.262 ms, -36.7 % (the overhead of 1.48 ms does not shrink). */
    cr_expect(fabs(t[0] - 2.6972) < 1e-3 && fabs(t[1] - 4.2617) < 1e-3, "%.6g %.6g", t[0], t[1]);
    cr_expect(fabs((t[0] / t[1] - 1) * 100 - -36.7) < 0.05, "%.4g %%", (t[0] / t[1] - 1) * 100);
}

/* A small model on a slow memory: the bytes bound it. */
Test(encoder, memory_bound_pass)
{
    enc_cfg c = h100_bge_m3();
    c.peak_flops = 1e18;
    double F, By;
    by_hand(4, 300, &F, &By);
    double want = By / (3350e9 * 0.8) * 1e3 + 1.48;
    cr_expect(fabs(enc_pass_ms(&c, 4, 300) - want) < 1e-9 * want);
}

Test(encoder, truncation)
{
    enc_cfg c = h100_bge_m3();
    c.max_seq_len = 1024;
    cr_expect_eq(enc_len(&c, 5000), 1024);
    cr_expect_eq(enc_len(&c, 300), 300);
    cr_expect_eq(enc_len(&c, 0), 1);
}

/* A lone request at a time (0.2/s against a few ms): its service is one pass
 * of 1 x min(prompt, max_seq_len) exactly; every prompt of 1500 is truncated. */
Test(encoder, pool_lone_requests_take_one_pass)
{
    const char *text = "[sim]\nrequests = 300\nwarmup = 10\n[workload]\narrival = constant\nrate = 0.2\n"
                       "prompt_tokens = const(1500)\noutput_tokens = const(1)\n"
                       "[pool e]\nkind = encoder\nmodel = bge-m3\ngpu = h100\nmax_seq_len = 1024\n";
    sim_result res;
    tsim_run("enc.ini", text, 1, &res);
    tsim_pr p = tsim_pool_at(&res, 0);
    enc_cfg c = h100_bge_m3();
    double want = enc_pass_ms(&c, 1, 1024);
    cr_expect(fabs(tsim_prl(p, "service")->mean - want) < 1e-5, "%.9g vs %.9g", tsim_prl(p, "service")->mean, want);
    cr_expect(fabs(tsim_prl(p, "service")->max - want) < 1e-5);
    cr_expect_eq(tsim_prv(p, "truncated"), 300);
    cr_expect_eq(tsim_prv(p, "batch_mean"), 1);
    cr_expect_eq(tsim_prv(p, "passes"), 300);
    cr_expect_eq(tsim_prl(p, "queue")->max, 0);
    double shares = 0;
    static const char *const N[] = { "enc_share_attention", "enc_share_qkv", "enc_share_out_proj", "enc_share_mlp",
                                     "enc_share_norm_elementwise", "enc_share_head", "enc_share_framework" };
    for (int k = 0; k < 7; k++) shares += tsim_prv(p, N[k]);
    cr_expect(fabs(shares - 1) < 1e-12, "%.15g", shares);
    cr_expect(fabs(tsim_prv(p, "enc_share_framework") - 1.48 / want) < 1e-9);
    sim_result_free(&res);
}

/* Dynamic batching: requests every 1 ms, a pass of 8 x 512 taking longer than
 * 8 ms, max_wait_ms 50: the replica always finds 8 waiting, every pass is full. */
Test(encoder, pool_batches_up_to_max_batch)
{
    const char *text = "[sim]\nrequests = 4000\nwarmup = 100\n[workload]\narrival = constant\nrate = 1000\n"
                       "prompt_tokens = const(512)\noutput_tokens = const(1)\n"
                       "[pool e]\nkind = encoder\nmodel = bge-m3\ngpu = l4\nservers = 8\nmax_batch = 8\nmax_wait_ms = 50\n";
    sim_result res;
    tsim_run("enc.ini", text, 1, &res);
    tsim_pr p = tsim_pool_at(&res, 0);
    double passes = tsim_prv(p, "passes"), seqs = tsim_prv(p, "batch_mean") * passes;
    cr_expect(passes > 400 && seqs <= 8 * passes + 1e-6 && seqs > 8 * passes - 8, "%g passes of %g",
              passes, seqs / passes);   /* full, but for the last one as the arrivals end */
    cr_expect_eq(tsim_prv(p, "padding_share"), 0);
    /* With max_wait_ms a lone replica takes what waited that long: the first
     * wait of a request at 1/s is exactly 50 ms. */
    sim_result_free(&res);
    text = "[sim]\nrequests = 50\nwarmup = 5\n[workload]\narrival = constant\nrate = 1\n"
           "prompt_tokens = const(100)\noutput_tokens = const(1)\n"
           "[pool e]\nkind = encoder\nmodel = all-minilm-l6-v2\ngpu = l4\nmax_batch = 8\nmax_wait_ms = 50\n";
    tsim_run("enc.ini", text, 1, &res);
    p = tsim_pool_at(&res, 0);
    cr_expect(fabs(tsim_prl(p, "queue")->mean - 50) < 1e-6 && fabs(tsim_prl(p, "queue")->max - 50) < 1e-6, "%.9g", tsim_prl(p, "queue")->mean);
    cr_expect_eq(tsim_prv(p, "batch_mean"), 1);
    sim_result_free(&res);
}

/* A result cache's embed_model: every lookup takes the encoder's pass over the
 * prompt (all-MiniLM-L6-v2 on an L4, prompts of 700 truncated to 256). */
Test(encoder, result_cache_embed_model_prices_the_lookup)
{
    const char *text = "[sim]\nrequests = 2000\nwarmup = 100\n[workload]\nrate = 5\n"
                       "prompt_tokens = const(700)\noutput_tokens = const(1)\ntarget = cache\n"
                       "[pool cache]\nkind = result_cache\nembed_model = all-minilm-l6-v2\nembed_gpu = l4\n"
                       "embed_max_seq_len = 256\nnext = app\n"
                       "[pool app]\nservice_ms = const(10)\n";
    sim_result res;
    tsim_run("enc.ini", text, 1, &res);
    enc_cfg c;
    memset(&c, 0, sizeof c);
    gpu_spec g;
    tsim_catalog("l4", "all-minilm-l6-v2", &g, &c.model);
    c.peak_flops = g.bf16_tflops * 1e12;
    c.mem_bw = g.mem_bw_gbs * 1e9;
    c.weight_bytes = 2;
    c.compute_eff = 0.6;
    c.memory_eff = 0.8;
    c.overhead_ms = 1.0;
    c.launch_us = 20;
    c.max_seq_len = 256;
    double want = enc_pass_ms(&c, 1, 256);
    tsim_pr p = tsim_pool_at(&res, 0);
    cr_expect(fabs(tsim_prl(p, "service")->mean - want) < 1e-5 && fabs(tsim_prl(p, "service")->max - want) < 1e-5, "%.9g vs %.9g",
              tsim_prl(p, "service")->mean, want);
    cr_expect_gt(want, 1.0, "more than the default hit_ms of 1 ms");
    sim_result_free(&res);
}

/* A router's classifier_model: its latency is the classifier's pass. */
Test(encoder, router_classifier_model_prices_the_classifier)
{
    const char *text = "[sim]\nrequests = 2000\nwarmup = 100\n[workload]\nrate = 5\n"
                       "prompt_tokens = const(300)\noutput_tokens = const(1)\ntarget = gw\n"
                       "[pool gw]\nkind = router\npolicy = complexity\nclassifier_model = bert-base-uncased\n"
                       "classifier_cpu_tflops = 2\nclassifier_cpu_mem_gbs = 100\nnext = a, b\n"
                       "[pool a]\nservice_ms = const(10)\n[pool b]\nservice_ms = const(10)\n";
    sim_result res;
    tsim_run("enc.ini", text, 1, &res);
    enc_cfg c;
    memset(&c, 0, sizeof c);
    gpu_spec g;
    tsim_catalog("l4", "bert-base-uncased", &g, &c.model);
    c.peak_flops = 2e12;
    c.mem_bw = 100e9;
    c.weight_bytes = 2;
    c.compute_eff = 0.6;
    c.memory_eff = 0.8;
    c.overhead_ms = 1.0;
    c.launch_us = 20;
    c.max_seq_len = 512;
    double want = enc_pass_ms(&c, 1, 300);
    tsim_pr p = tsim_pool_at(&res, 0);
    cr_expect(fabs(tsim_prl(p, "service")->mean - want) < 1e-5, "%.9g vs %.9g", tsim_prl(p, "service")->mean, want);
    sim_result_free(&res);
}

/* ---- bad input: one line naming file, line and key, exit 2, no database ---- */

static void cli_setup(void) { tcli_setup("/tmp/latsim_enc_", "runs.db"); }

TestSuite(encoder_cli, .init = cli_setup, .fini = tcli_teardown);

static void refused(const char *body, const char *want)
{
    char path[160];
    snprintf(path, sizeof path, "%s/bad.ini", dir);
    FILE *f = fopen(path, "w");
    cr_assert(f);
    fputs("[sim]\nrequests = 100\n[workload]\nrate = 5\n", f);
    fputs(body, f);
    fclose(f);
    result r = run_scenario(60, path, NULL);
    cr_expect_eq(r.rc, 2, "rc %d: %s", r.rc, r.err);
    char line[256];
    snprintf(line, sizeof line, "%s%s", path, want);
    cr_expect(strstr(r.err, line) != NULL, "want '%s' in: %s", line, r.err);
    int lines = 0;
    for (const char *s = r.err; *s; s++) lines += *s == '\n';
    cr_expect_eq(lines, 1, "one line: %s", r.err);
    cr_expect_neq(access(db, F_OK), 0, "the refused run created %s", db);
    result_free(&r);
}

Test(encoder_cli, bad_input_is_one_line_with_file_line_key)
{
    /* lines: 5 [pool ...], 6 kind, 7 the key */
    refused("[pool cache]\nkind = result_cache\nembed_model = no-such-encoder\nembed_gpu = l4\nnext = app\n"
            "[pool app]\nservice_ms = const(1)\n",
            ":7: [pool cache] embed_model: unknown model 'no-such-encoder'");
    refused("[pool e]\nkind = encoder\nmax_seq_len = 0\nmodel = bge-m3\ngpu = h100\n", ":7: [pool e] max_seq_len:");
    refused("[pool e]\nkind = encoder\nmax_seq_len = -5\nmodel = bge-m3\ngpu = h100\n", ":7: [pool e] max_seq_len:");
    refused("[pool e]\nkind = encoder\nmodel = bge-m3\ngpu = h100\nmax_seq_len = 9000\n",
            ":9: [pool e] max_seq_len: 9000 tokens is more than the 8192 positions of bge-m3");
    refused("[pool e]\nkind = encoder\nmodel = llama-3-8b\ngpu = h100\n",
            ":7: [pool e] model: model llama-3-8b is a decoder");
    refused("[pool e]\nkind = llm\nmodel = bge-m3\ngpu = h100\n", ":7: [pool e] model: bge-m3 is an encoder");
    refused("[pool cache]\nkind = result_cache\nhit_ms = const(2)\nembed_model = all-minilm-l6-v2\nembed_gpu = l4\n"
            "next = app\n[pool app]\nservice_ms = const(1)\n", ":7: [pool cache] hit_ms: give hit_ms or embed_model");
    refused("[pool gw]\nkind = router\npolicy = complexity\nclassifier_model = bert-base-uncased\n"
            "classifier_max_seq_len = 0\nclassifier_gpu = l4\nnext = a, b\n[pool a]\nservice_ms = const(1)\n"
            "[pool b]\nservice_ms = const(1)\n", ":9: [pool gw] classifier_max_seq_len:");
}

/* ---- report --html: the step time by operator of each pool ---------------- */

/* The rows of the table starting at AT: each row's operator (its <th>) into
 * NAMES and its first number (the share, %) into SHARE, at most MAX; returns
 * how many rows. */
static int table_rows(const char *at, char names[][40], double *share, int max)
{
    const char *end = strstr(at, "</table>");
    cr_assert_not_null(end);
    int n = 0;
    const char *body = strstr(at, "<tbody>");
    cr_assert(body && body < end);
    for (const char *p = strstr(body, "<tr><th>"); p && p < end && n < max; p = strstr(p + 1, "<tr><th>")) {
        const char *q = p + 8, *e = strstr(q, "</th>");
        snprintf(names[n], 40, "%.*s", (int) (e - q), q);
        share[n] = strtod(e + 9, NULL);   /* "</th><td>" */
        n++;
    }
    return n;
}

Test(encoder_cli, report_html_shows_op_shares_per_pool_escaped)
{
    char ini[160], html[160];
    snprintf(ini, sizeof ini, "%s/ops.ini", dir);
    snprintf(html, sizeof html, "%s/ops.html", dir);
    FILE *f = fopen(ini, "w");
    cr_assert(f);
    fputs("[sim]\nrequests = 1500\nwarmup = 150\n[workload]\nrate = 2\nprompt_tokens = lognormal(mean=800, cv=1.0)\n"
          "output_tokens = lognormal(mean=100, cv=1.0)\n[pool chat<&>]\nkind = llm\nmodel = llama-3-8b\ngpu = h100\n"
          "op_shares = yes\n", f);
    fclose(f);
    result r = run(300, "report", ini, "scenarios/encoder_max_seq_len.ini", "--db", db, "--html", html, NULL);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    result_free(&r);
    char *page = slurp_or_fail(html, NULL);
    /* The LLM pool's table: its name escaped, its shares (%) summing to 100, each the run's op_share_NAME. */
    const char *h = strstr(page, ": chat&lt;&amp;&gt;, time by operator</h3>");
    cr_assert_not_null(h, "no escaped heading of the LLM pool's table");
    cr_expect_null(strstr(page, "chat<&>"), "the pool's name unescaped in the page");
    char names[16][40];
    double v[16], sum = 0;
    int n = table_rows(strstr(h, "<table class=\"opshares\">"), names, v, 16);
    cr_expect_eq(n, 12, "the 12 operators of an LLM step");
    cr_expect_str_eq(names[0], "attention_prefill");
    cr_expect_str_eq(names[11], "framework");
    for (int i = 0; i < n; i++) sum += v[i];
    cr_expect(fabs(sum - 100) < 0.01 * n, "shares sum to %g %%", sum);
    r = run(120, "run", ini, "--json", "--no-store", NULL);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    const char *mlp = strstr(r.out, "\"op_share_mlp\": ");
    cr_assert_not_null(mlp);
    double want = strtod(mlp + 16, NULL) * 100;
    cr_expect(fabs(v[4] - want) < 1e-3 * want, "mlp %g %% in the page, %g %% in the run", v[4], want);
    result_free(&r);
    /* The encoder pool's: its 7 operators. */
    h = strstr(page, ": embed, time by operator</h3>");
    cr_assert_not_null(h);
    n = table_rows(strstr(h, "<table class=\"opshares\">"), names, v, 16);
    cr_expect_eq(n, 7);
    cr_expect_str_eq(names[0], "attention");
    free(page);
}

/* catalog add --hf of an encoder's config.json (a BertForSequenceClassification
 * classifier of 3 labels): stored as an encoder, a kind = encoder pool runs it
 * and an LLM pool refuses it. */
Test(encoder_cli, catalog_add_hf_encoder)
{
    char cfgp[160], ini[160];
    snprintf(cfgp, sizeof cfgp, "%s/config.json", dir);
    FILE *f = fopen(cfgp, "w");
    cr_assert(f);
    fputs("{\"architectures\": [\"BertForSequenceClassification\"], \"hidden_size\": 256, \"num_hidden_layers\": 4,"
          " \"num_attention_heads\": 4, \"intermediate_size\": 1024, \"max_position_embeddings\": 512,"
          " \"vocab_size\": 30522, \"id2label\": {\"0\": \"a\", \"1\": \"b\", \"2\": \"c\"}}", f);
    fclose(f);
    result r = run_db(60, "catalog", "add", "--hf", cfgp, "--name", "tiny-cls", NULL);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    /* embeddings (30522 + 512 + 2) x 256 + LN; 4 layers; the pooler and 256 x 3 + 3 */
    double h = 256, layer = 4 * (h * h + h) + 2 * h + (h * 1024 + 1024) + (1024 * h + h) + 2 * h;
    char want[64];
    snprintf(want, sizeof want, "%.4g parameters", (30522 + 512 + 2) * h + 2 * h + 4 * layer + h * h + h + 3 * h + 3);
    cr_expect(strstr(r.out, want) != NULL, "want '%s' in: %s", want, r.out);
    result_free(&r);
    snprintf(ini, sizeof ini, "%s/cls.ini", dir);
    f = fopen(ini, "w");
    cr_assert(f);
    fputs("[sim]\nrequests = 200\nwarmup = 10\n[workload]\nrate = 5\nprompt_tokens = const(100)\n"
          "output_tokens = const(1)\n[pool c]\nkind = encoder\nmodel = tiny-cls\ncpu_tflops = 1\ncpu_mem_gbs = 50\n", f);
    fclose(f);
    r = run_db(60, "run", ini, "--json", NULL);
    cr_expect_eq(r.rc, 0, "%s", r.err);
    cr_expect(strstr(r.out, "\"passes\": 200") != NULL, "%.400s", r.out);
    result_free(&r);
    f = fopen(ini, "w");
    cr_assert(f);
    fputs("[sim]\nrequests = 200\n[workload]\nrate = 5\n[pool c]\nkind = llm\nmodel = tiny-cls\ngpu = h100\n", f);
    fclose(f);
    r = run_db(60, "run", ini, NULL);
    cr_expect_eq(r.rc, 2);
    cr_expect(strstr(r.err, "[pool c] model: tiny-cls is an encoder") != NULL, "%s", r.err);
    result_free(&r);
}

/* ---- cost = learned (the default on a GPU with the calibrator) ------------- */

/* bge-m3 on an H100 under the learned coefficients C: one pass of B x n by
 * hand (encoder.h: GEMMs at compute_eff T / (T + t_half), attention at
 * attn_eff of it, norms at compute_eff, bytes at memory_eff, overlap, then
 * fixed_ms + layers x launch_us + seq_us x B). */
static double learned_by_hand(const enc_learned *c, double B, double n)
{
    double L = 24, H = 1024, I = 4096, T = B * n;
    double attn = 4 * L * H * B * n * n;
    double wts = L * (3 * H * H + H * H + 2 * H * I);
    double gemm = 2 * wts * T + 2 * H * H * B, norm = L * T * (12 * H + 4 * I), F, By;
    by_hand(B, n, &F, &By);
    double peak = 989e12 * c->compute_eff;
    double tc = gemm * (T + c->t_half) / T / peak + norm / peak + attn / (peak * c->attn_eff);
    double tm = By / (3350e9 * c->memory_eff);
    return (fmax(tc, tm) + c->overlap * fmin(tc, tm)) * 1e3 + c->fixed_ms + L * c->launch_us * 1e-3 + c->seq_us * 1e-3 * B;
}

Test(encoder, learned_pass_by_hand_and_in_a_pool)
{
    cr_assert_eq(clearn_register(), 0);
    gpu_spec g;
    model_spec m;
    tsim_catalog("h100", "bge-m3", &g, &m);
    clearn_prior p;
    clearn_prior_for(NULL, &g, "vllm", &p);
    enc_cfg c = h100_bge_m3();
    c.cost = ENC_COST_LEARNED;
    c.lc = (enc_learned) { .compute_eff = p.c.compute_eff, .t_half = p.c.t_half, .memory_eff = p.c.memory_eff,
                           .overlap = p.c.overlap, .attn_eff = p.c.attn_eff, .lowp_eff = 1, .launch_us = p.c.launch_us,
                           .fixed_ms = p.c.fixed_ms, .seq_us = p.c.seq_us };
    for (int i = 0; i < 3; i++) {
        double B = i == 2 ? 8 : 1, n = i == 1 ? 2048 : 1024, want = learned_by_hand(&c.lc, B, n);
        double got = enc_pass_ms(&c, (int) B, (int64_t) n);
        cr_expect(fabs(got - want) < 1e-9 * want, "%g x %g: %.9g ms vs %.9g by hand", B, n, got, want);
    }
    /* The operators' split adds up to the busy time exactly (up to rounding). */
    double busy, fixed, ops[ENC_OP_N] = { 0 }, sum = 0;
    enc_pass_parts(&c, 1, 2048, &busy, &fixed);
    enc_pass_ops(&c, 1, 2048, busy, ops);
    for (int k = 0; k < ENC_OP_N; k++) sum += ops[k];
    cr_expect(fabs(sum - busy) < 1e-12 * busy, "%.17g vs %.17g", sum, busy);
    /* A pool on a GPU with the calibrator there: learned by default, its lone pass the same. */
    const char *text = "[sim]\nrequests = 200\nwarmup = 10\n[workload]\narrival = constant\nrate = 0.2\n"
                       "prompt_tokens = const(1500)\noutput_tokens = const(1)\n"
                       "[pool e]\nkind = encoder\nmodel = bge-m3\ngpu = h100\nmax_seq_len = 1024\n";
    sim_result res;
    tsim_run("enc.ini", text, 1, &res);
    double want = learned_by_hand(&c.lc, 1, 1024);
    cr_expect(fabs(tsim_pl(&res, 0, "service")->mean - want) < 1e-5, "%.9g vs %.9g", tsim_pl(&res, 0, "service")->mean, want);
    sim_result_free(&res);
}

/* The roofline's keys keep the roofline under auto (a roofline the user calibrated, as an LLM pool's). */
Test(encoder, roofline_keys_keep_the_roofline)
{
    cr_assert_eq(clearn_register(), 0);
    const char *text = "[sim]\nrequests = 200\nwarmup = 10\n[workload]\narrival = constant\nrate = 0.2\n"
                       "prompt_tokens = const(1500)\noutput_tokens = const(1)\n"
                       "[pool e]\nkind = encoder\nmodel = bge-m3\ngpu = h100\nmax_seq_len = 1024\ncompute_eff = 0.6\n";
    sim_result res;
    tsim_run("enc.ini", text, 1, &res);
    enc_cfg c = h100_bge_m3();
    double want = enc_pass_ms(&c, 1, 1024);
    cr_expect(fabs(tsim_pl(&res, 0, "service")->mean - want) < 1e-5, "%.9g vs %.9g", tsim_pl(&res, 0, "service")->mean, want);
    sim_result_free(&res);
}

Test(encoder_cli, cost_models_that_do_not_apply_are_refused)
{
    refused("[pool e]\nkind = encoder\nmodel = bge-m3\ngpu = h100\ncost = fitted\n",
            ":9: [pool e] cost: fitted does not apply to an encoder");
    refused("[pool e]\nkind = encoder\nmodel = bge-m3\ngpu = h100\ncost = profile\n",
            ":9: [pool e] cost: profile does not apply to an encoder");
    refused("[pool e]\nkind = encoder\nmodel = bge-m3\ngpu = h100\ncost = magic\n",
            ":9: [pool e] cost: unknown cost model 'magic'");
    refused("[pool e]\nkind = encoder\nmodel = bge-m3\ncpu_tflops = 2\ncpu_mem_gbs = 100\ncost = learned\n",
            ":10: [pool e] cost: learned: the learned model is trained on GPU measurements");
    refused("[pool e]\nkind = encoder\nmodel = bge-m3\ngpu = h100\ncost = learned\ncompute_eff = 0.5\n",
            ":10: [pool e] compute_eff: is the roofline's key");
    refused("[pool e]\nkind = encoder\nmodel = bge-m3\ngpu = h100\ncost = roofline\nengine = vllm\n",
            ":10: [pool e] engine: selects the learned model's efficiencies");
    refused("[pool e]\nkind = encoder\nmodel = bge-m3\ngpu = h100\nengine = tei\n",
            ":9: [pool e] engine: unknown engine 'tei'");
    refused("[pool cache]\nkind = result_cache\nembed_model = all-minilm-l6-v2\nembed_cpu_tflops = 2\n"
            "embed_cpu_mem_gbs = 50\nembed_cost = learned\nnext = app\n[pool app]\nservice_ms = const(1)\n",
            ":10: [pool cache] embed_cost: learned: the learned model is trained on GPU measurements");
}

/* The run reports the pool's cost model as an LLM pool's: learned by default on a GPU. */
Test(encoder_cli, run_reports_the_cost_model)
{
    result r = run_scenario(120, "scenarios/encoder_max_seq_len.ini", "--json", "--no-store", NULL);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    cr_expect_not_null(strstr(r.out, "\"cost_model\": {\"kind\": \"learned\", \"id\": null, \"source\": \"learned\""),
                       "%.400s", r.out);
    cr_expect_not_null(strstr(r.out, "cost=learned engine=vllm compute_eff="));
    result_free(&r);
    r = run_scenario(120, "scenarios/encoder_max_seq_len.ini", "--json", "--no-store", "--set", "pool embed.cost=roofline",
                     NULL);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    cr_expect_not_null(strstr(r.out, "\"cost_model\": {\"kind\": \"roofline\", \"id\": null, \"source\": \"datasheet\""));
    result_free(&r);
}
