/* test_opshare.c -- a step's time by operator (llm/opshare.h): the FLOPs and
 * bytes of each operator against the formulas by hand, the operators adding up
 * to the step for every cost model and step shape (`latsim cost`'s
 * calib_cost_eval), attention's share growing with context, and the
 * collectives and framework kept as the model gave them. */
#include <criterion/criterion.h>

#include <math.h>
#include <string.h>

#include "calib.h"
#include "clearn.h"
#include "core/catalog.h"
#include "llm/opshare.h"
#include "store/store.h"

/* A small dense model on a GPU of round figures. */
static cost_hw tiny(void)
{
    cost_hw h;
    memset(&h, 0, sizeof h);
    h.have_hw = 1;
    h.tp = 1;
    h.weight_bytes = 2;
    h.kv_bytes = 2;
    h.model = (model_spec) { .layers = 2, .hidden = 64, .heads = 4, .kv_heads = 2, .head_dim = 16,
                             .intermediate = 256, .vocab = 1000, .params = 1e6 };
    h.gpu = (gpu_spec) { .bf16_tflops = 100, .mem_bw_gbs = 1000 };
    return h;
}

Test(opshare, work_by_hand)
{
    cost_hw h = tiny();
    /* 10 decoding sequences of 100 tokens of context each (new token included), and
     * one prompt of 20 tokens. */
    cost_step s = { .prefill_tokens = 20, .prefill_pairs = 20.0 * 21 / 2, .prefill_seqs = 1, .decode_seqs = 10,
                    .kv_tokens = 1000 };
    double f[OP_N], b[OP_N];
    op_work(&h, &s, f, b);
    double T = 30, L = 2, H = 64;
    double qkv = L * H * (4 + 2 * 2) * 16;              /* 16 384 weights */
    cr_assert_float_eq(f[OP_QKV], 2 * qkv * T, 1e-9);
    cr_assert_float_eq(b[OP_QKV], qkv * 2 + T * H * 4, 1e-9);
    cr_assert_float_eq(f[OP_OUT_PROJ], 2 * L * 64 * H * T, 1e-9);
    cr_assert_float_eq(f[OP_MLP], 2 * L * 3 * H * 256 * T, 1e-9);
    cr_assert_float_eq(f[OP_ATTN_PREFILL], 4 * L * 4 * 16 * 210, 1e-9);
    cr_assert_float_eq(f[OP_ATTN_DECODE], 4 * L * 4 * 16 * 1000, 1e-9);
    double kvpt = 2 * L * 2 * 16 * 2;                    /* KV bytes per token, all layers */
    cr_assert_float_eq(b[OP_ATTN_DECODE], (1000 + 10) * kvpt, 1e-9);
    cr_assert_float_eq(b[OP_ATTN_PREFILL], 2 * 20 * kvpt, 1e-9);
    /* 11 sequences sample (10 decode tokens, one completed prompt). */
    cr_assert_float_eq(f[OP_LOGITS], 2 * 1000 * H * 11, 1e-9);
    cr_assert_float_eq(b[OP_LOGITS], 1000 * H * 2 + 11 * 1000 * 4, 1e-9);
    cr_assert_float_eq(f[OP_NORM], L * T * (12 * H + 4 * 256), 1e-9);
    cr_assert_eq(f[OP_EXPERTS], 0);
    for (int k = OP_ALLREDUCE; k < OP_N; k++) cr_assert_eq(f[k] + b[k], 0);
}

Test(opshare, split_adds_up_and_keeps_the_others)
{
    cost_hw h = tiny();
    cost_step s = { .decode_seqs = 8, .kv_tokens = 8 * 500 };
    double out[OP_N], sum = 0;
    op_split(&h, &s, 7.25, 1.5, 0.25, 0.125, 2, out);
    for (int k = 0; k < OP_N; k++) {
        cr_assert_geq(out[k], 0, "%s %g", OP_NAMES[k], out[k]);
        sum += out[k];
    }
    cr_assert_float_eq(sum, 7.25 + 1.5 + 0.25 + 0.125 + 2, 1e-12);
    cr_assert_eq(out[OP_ALLREDUCE], 1.5);
    cr_assert_eq(out[OP_ALLTOALL], 0.25);
    cr_assert_eq(out[OP_PIPELINE], 0.125);
    cr_assert_eq(out[OP_FRAMEWORK], 2);
    cr_assert_eq(out[OP_ATTN_PREFILL], 0, "no prompt, no prefill attention");
    /* The kernel operators share GPU_MS by their own roofline times: on this GPU
     * (100 TFLOP/s, 1000 GB/s) every one of them is memory bound here, so the
     * shares are those of their bytes. */
    double f[OP_N], b[OP_N], bsum = 0;
    op_work(&h, &s, f, b);
    for (int k = 0; k < OP_ALLREDUCE; k++) bsum += b[k];
    cr_assert_float_eq(out[OP_MLP], 7.25 * b[OP_MLP] / bsum, 1e-9);
    cr_assert_float_eq(out[OP_ATTN_DECODE], 7.25 * b[OP_ATTN_DECODE] / bsum, 1e-9);
}

/* calib_cost_eval of one step with a fresh in-memory catalog. */
static void cost_of(const char *model, const char *gpu, int tp, const char *kind, long prefill, long decode,
                    long context, calib_cost *out)
{
    sqlite3 *db = NULL;
    char err[512];
    cnccl_register();   /* the calibrated rows (learned, fitted...) and collective profiles, as the program does */
    cr_assert_eq(ccost_register(), 0);
    cr_assert_eq(store_open(":memory:", &db, err, sizeof err), 0, "%s", err);
    calib_cost_req q = { .model = model, .gpu = gpu, .tp = tp, .kind = kind, .prefill = prefill,
                         .pbatch = prefill ? 1 : 0, .decode = decode, .context = context };
    cr_assert_eq(calib_cost_eval(db, &q, out, err, sizeof err), 0, "%s", err);
    store_close(db);
}

Test(opshare, operators_add_up_to_the_step)
{
    static const struct { const char *model, *gpu; int tp; } hw[] = {
        { "llama-3-8b", "a100", 1 }, { "llama-3-70b", "h100", 4 }, { "qwen3-30b-a3b", "h100", 1 },
    };
    static const char *kinds[] = { "roofline", "learned" };
    static const long shapes[][3] = { { 2048, 0, 0 }, { 0, 64, 4000 }, { 512, 32, 1000 } };
    for (size_t i = 0; i < sizeof hw / sizeof hw[0]; i++)
        for (size_t j = 0; j < 2; j++)
            for (size_t k = 0; k < 3; k++) {
                calib_cost c;
                cost_of(hw[i].model, hw[i].gpu, hw[i].tp, kinds[j], shapes[k][0], shapes[k][1], shapes[k][2], &c);
                double sum = 0;
                cr_assert_eq(c.nops, OP_N);
                for (int o = 0; o < c.nops; o++) {
                    cr_assert_geq(c.op_ms[o], 0, "%s %s: %s %g", hw[i].model, kinds[j], c.op[o], c.op_ms[o]);
                    sum += c.op_ms[o];
                }
                cr_assert_float_eq(sum, c.step_ms, 1e-12 * c.step_ms, "%s %s shape %zu: ops %.17g, step %.17g",
                                   hw[i].model, kinds[j], k, sum, c.step_ms);
                /* The collectives are the model's own parts. */
                double ar = 0;
                for (int p = 0; p < c.nparts; p++)
                    if (!strncmp(c.part[p], "allreduce", 9)) ar += c.part_ms[p];
                cr_assert_float_eq(c.op_ms[OP_ALLREDUCE], ar, 1e-12 * (ar + 1));
                if (hw[i].tp > 1) cr_assert_gt(ar, 0);
                /* A dense model has no experts; the MoE model's MLP time is in its experts. */
                if (!strcmp(hw[i].model, "qwen3-30b-a3b")) cr_assert_gt(c.op_ms[OP_EXPERTS], c.op_ms[OP_QKV]);
                else cr_assert_eq(c.op_ms[OP_EXPERTS], 0);
            }
}

Test(opshare, attention_share_grows_with_context)
{
    /* 32 decoding sequences on Llama-3-8B / A100 (learned model): attention's
     * share of the step grows with every doubling of the context, as its KV
     * bytes do, and the weights' operators' shares fall. */
    double last = 0, last_mlp = 1;
    for (long ctx = 500; ctx <= 32000; ctx *= 2) {
        calib_cost c;
        cost_of("llama-3-8b", "a100", 1, "learned", 0, 32, ctx, &c);
        double share = c.op_ms[OP_ATTN_DECODE] / c.step_ms, mlp = c.op_ms[OP_MLP] / c.step_ms;
        cr_assert_gt(share, last, "context %ld: attention share %g after %g", ctx, share, last);
        cr_assert_lt(mlp, last_mlp);
        last = share;
        last_mlp = mlp;
    }
    cr_assert_gt(last, 0.8, "at 32k of context attention is most of the step: %g", last);
    /* Prefill: attention's share of a 16k-token prompt is larger than of a 1k one
     * (its pairs grow as the square of the length). */
    calib_cost a, b;
    cost_of("llama-3-8b", "a100", 1, "roofline", 1024, 0, 0, &a);
    cost_of("llama-3-8b", "a100", 1, "roofline", 16384, 0, 0, &b);
    cr_assert_gt(b.op_ms[OP_ATTN_PREFILL] / b.step_ms, 2 * a.op_ms[OP_ATTN_PREFILL] / a.step_ms);
}

/* Under the learned model one step by hand: Llama-3-8B on an A100 (vllm), 32
 * sequences decoding at 2000 tokens of context and a prompt of 512.  Each
 * kernel operator's time is max(FLOPs x its rate, bytes x the byte rate): GEMMs
 * at 1 / (peak x compute_eff) times (T + t_half) / T, attention at attn_eff of
 * it, norms at compute_eff, bytes at memory_eff, decode attention's KV reads
 * at (heads / kv_heads)^(1 - gqa_reuse) / kv_eff; the GPU parts of the step
 * (compute, memory, overlap) are split in proportion. */
Test(opshare, learned_split_by_hand)
{
    calib_cost c;
    cost_of("llama-3-8b", "a100", 1, "learned", 512, 32, 2000, &c);
    cr_assert_str_eq(c.kind, "learned");
    sqlite3 *db = NULL;
    char err[512];
    cr_assert_eq(store_open(":memory:", &db, err, sizeof err), 0, "%s", err);
    cost_hw h;
    memset(&h, 0, sizeof h);
    cr_assert_eq(catalog_model(db, "llama-3-8b", &h.model, err, sizeof err), 0, "%s", err);
    cr_assert_eq(catalog_gpu(db, "a100", &h.gpu, err, sizeof err), 0, "%s", err);
    store_close(db);
    h.have_hw = 1;
    h.tp = 1;
    cr_assert_eq(cost_hw_set_weights(&h, "bf16"), 0);
    h.kv_bytes = 2;
    clearn_prior p;
    clearn_prior_for(NULL, &h.gpu, "vllm", &p);
    const clearn_coef *k = &p.c;
    /* The step calib_cost_eval prices (ccli.c): one prompt of 512, 32 x (2000 + 1) KV tokens. */
    cost_step s = { .prefill_tokens = 512, .prefill_pairs = 512.0 * 513 / 2, .prefill_seqs = 1, .decode_seqs = 32,
                    .kv_tokens = 32 * 2001 };
    double f[OP_N], b[OP_N], t[OP_N], sum = 0, T = 512 + 32;
    op_work(&h, &s, f, b);
    double flop = 1 / (h.gpu.bf16_tflops * 1e12 * k->compute_eff), byte = 1 / (h.gpu.mem_bw_gbs * 1e9 * k->memory_eff);
    double gqa = pow((double) h.model.heads / h.model.kv_heads, 1 - k->gqa_reuse) / k->kv_eff;
    double kvpt = 2.0 * h.model.layers * h.model.kv_heads * h.model.head_dim * 2;
    for (int o = 0; o < OP_ALLREDUCE; o++) {
        double tc = f[o] * flop, tm = b[o] * byte;
        if (o == OP_ATTN_PREFILL || o == OP_ATTN_DECODE) tc /= k->attn_eff;
        else if (o != OP_NORM) tc *= (T + k->t_half) / T;
        if (o == OP_ATTN_DECODE) tm = (32 * kvpt + 32 * 2001 * kvpt * gqa) * byte;
        t[o] = fmax(tc, tm);
        sum += t[o];
    }
    double gpu = 0;
    for (int i = 0; i < c.nparts; i++)
        if (!strcmp(c.part[i], "compute") || !strcmp(c.part[i], "memory") || !strcmp(c.part[i], "overlap"))
            gpu += c.part_ms[i];
    for (int o = 0; o < OP_ALLREDUCE; o++)
        cr_expect(fabs(c.op_ms[o] - gpu * t[o] / sum) < 1e-9 * gpu, "%s: %.12g ms vs %.12g by hand", OP_NAMES[o],
                  c.op_ms[o], gpu * t[o] / sum);
    /* Attention runs at attn_eff of the GEMMs' rate: its share is larger than the roofline's. */
    calib_cost r;
    cost_of("llama-3-8b", "a100", 1, "roofline", 512, 32, 2000, &r);
    cr_expect_gt(c.op_ms[OP_ATTN_PREFILL] / c.step_ms, r.op_ms[OP_ATTN_PREFILL] / r.step_ms);
}

/* ---- op_shares over a run ---------------------------------------------------- */

#include "run/scenario.h"
#include "run/sim.h"
#include "tsim.h"

static void simulate(const char *text, sim_result *out)
{
    char err[1024] = "";
    sqlite3 *db = NULL;
    scenario sc;
    cr_assert_eq(store_open(":memory:", &db, err, sizeof err), 0, "%s", err);
    cr_assert_eq(scenario_load_text(&sc, "ops.ini", text, NULL, 0, err, sizeof err), 0, "%s", err);
    cr_assert_eq(scenario_resolve(&sc, db, err, sizeof err), 0, "%s", err);
    cr_assert_eq(sim_run(&sc, 1, out, err, sizeof err), 0, "sim_run: %s", err);
    scenario_free(&sc);
    store_close(db);
}

#define CHAT(ops, prompt) "[sim]\nrequests = 2000\nwarmup = 200\n[workload]\nrate = 4\n" \
    "prompt_tokens = lognormal(mean=" prompt ", cv=0.5)\noutput_tokens = lognormal(mean=200, cv=0.5)\n" \
    "[pool chat]\nkind = llm\nmodel = llama-3-8b\ngpu = h100\ncost = roofline\n" ops

Test(opshare, shares_over_a_run)
{
    sim_result a, b, c;
    simulate(CHAT("", "500"), &a);
    simulate(CHAT("op_shares = yes\n", "500"), &b);
    /* Reporting changes no number, and adds the rows only when asked. */
    cr_assert(isnan(tsim_pv(&a, 0, "op_step_ms")));
    cr_assert_eq(tsim_sys(&a, "e2e")->p99, tsim_sys(&b, "e2e")->p99);
    cr_assert_eq(tsim_n(&a, "events"), tsim_n(&b, "events"));
    tsim_pr p = tsim_pool_at(&b, 0);
    double sum = 0;
    for (int k = 0; k < OP_N; k++) {
        char name[64];
        snprintf(name, sizeof name, "op_share_%s", OP_NAMES[k]);
        double v = tsim_prv(p, name);
        cr_assert(v >= 0 && v <= 1, "%s %g", name, v);
        sum += v;
    }
    cr_assert_float_eq(sum, 1, 1e-9);
    /* The steps' time summed is the replica's stepping time in the window (one
     * replica, no pauses): busy_share x window, but for the steps that straddle
     * the window's edges (a few of some 10^5). */
    double stepping_ms = tsim_prv(p, "busy_share") * tsim_v(&b, "window_s") * 1e3;
    cr_assert_float_eq(tsim_prv(p, "op_step_ms"), stepping_ms, 1e-3 * stepping_ms, "%g vs %g",
                       tsim_prv(p, "op_step_ms"), stepping_ms);
    cr_assert_eq(tsim_prv(p, "op_share_allreduce"), 0, "tp 1: no all-reduce");
    cr_assert_gt(tsim_prv(p, "op_share_framework"), 0);
    /* Longer prompts: more of the time in attention. */
    simulate(CHAT("op_shares = yes\n", "8000"), &c);
    double att_b = tsim_prv(p, "op_share_attention_prefill") + tsim_prv(p, "op_share_attention_decode");
    double att_c = tsim_pv(&c, 0, "op_share_attention_prefill") +
                   tsim_pv(&c, 0, "op_share_attention_decode");
    cr_assert_gt(att_c, 2 * att_b, "attention share %g at 8000-token prompts, %g at 500", att_c, att_b);
    sim_result_free(&a);
    sim_result_free(&b);
    sim_result_free(&c);
}

/* Under the learned model (the default with the calibrator) the run's shares add
 * up to 1 and weigh attention at attn_eff: more of the time than the roofline's
 * split of the same run gives it, and it grows with the prompts. */
#define CHAT_LEARNED(prompt) "[sim]\nrequests = 2000\nwarmup = 200\n[workload]\nrate = 4\n" \
    "prompt_tokens = lognormal(mean=" prompt ", cv=0.5)\noutput_tokens = lognormal(mean=200, cv=0.5)\n" \
    "[pool chat]\nkind = llm\nmodel = llama-3-8b\ngpu = h100\ncost = learned\nop_shares = yes\n"

Test(opshare, learned_shares_over_a_run)
{
    cr_assert_eq(ccost_register(), 0);
    sim_result a, b, r;
    simulate(CHAT_LEARNED("500"), &a);
    simulate(CHAT_LEARNED("8000"), &b);
    simulate(CHAT("op_shares = yes\n", "500"), &r);
    double sum = 0, att[3];
    const sim_result *x[3] = { &a, &b, &r };
    for (int k = 0; k < OP_N; k++) {
        char name[64];
        snprintf(name, sizeof name, "op_share_%s", OP_NAMES[k]);
        sum += tsim_pv(&a, 0, name);
    }
    cr_assert_float_eq(sum, 1, 1e-9);
    for (int i = 0; i < 3; i++)
        att[i] = tsim_pv(x[i], 0, "op_share_attention_prefill") + tsim_pv(x[i], 0, "op_share_attention_decode");
    cr_assert_gt(att[1], att[0], "attention share %g at 8000-token prompts, %g at 500", att[1], att[0]);
    cr_assert_gt(att[0], att[2], "learned %g vs roofline %g", att[0], att[2]);
    sim_result_free(&a);
    sim_result_free(&b);
    sim_result_free(&r);
}
