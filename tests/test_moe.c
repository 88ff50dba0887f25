/* test_moe.c -- mixture of experts, MLA, pipeline and expert parallelism, FP4
 * (issue 20), checked against hand computations:
 *   - the expected distinct experts E (1 - (1 - k/E)^T) and the bytes a
 *     Qwen3-30B-A3B decode step reads at batch 1, 16 and 512 (the active
 *     parameters at 1, nearly all of them at 512), its step time;
 *   - an MoE decode step at batch 1 costs what a dense model of the active
 *     size costs (within 10 %), not what one of the total size costs;
 *   - DeepSeek-V3's KV bytes per token are its compressed latent's, and its
 *     KV capacity on H200 at tp 8 follows;
 *   - pipeline parallelism: a lone request's TTFT through pp = 2 is the two
 *     stage times plus the activation transfer, exactly; at saturation the
 *     throughput with m micro-batches is pp x the stage-serial rate x
 *     m / (m + pp - 1) (GPipe's bubble); stage memory;
 *   - expert parallelism: the all-to-all time is its byte formula, within a
 *     node and across; expert_imbalance scales the experts' compute;
 *   - a replica spanning nodes uses the node link (stage transfer, all-reduce);
 *   - fp4 weights at the GPU's FP4 peak, or dequantised to BF16 with a note;
 *   - the fitted model's MoE terms (fitted back from synthetic MoE steps),
 *     calibrated models refused for pp > 1 with one line, auto falling back;
 *   - the planner's --pp and --ep dimensions. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfitted.h"
#include "core/catalog.h"
#include "llm/cost.h"
#include "llm/llmcfg.h"
#include "run/scenario.h"
#include "run/sim.h"
#include "store/store.h"
#include "tbin.h"
#include "tcli.h"
#include "tsim.h"

#define GiB 1073741824.0

/* ---- helpers ------------------------------------------------------------------ */

static sqlite3 *catalog_db(void)
{
    sqlite3 *h = NULL;
    char err[256];
    cr_assert_eq(store_open(":memory:", &h, err, sizeof err), 0, "%s", err);
    return h;
}

/* A roofline (default parameters, or C) on MODEL and GPU from the catalog, bf16
 * weights and KV unless the model's own precision says otherwise. */
static void roofline_on(cost_model *m, const char *model, const char *gpu, int tp, const cost_roofline *c)
{
    sqlite3 *h = catalog_db();
    char err[256];
    memset(m, 0, sizeof *m);
    cr_assert_eq(cost_init(m, "roofline", c ? c : &cost_roofline_defaults), 0);
    m->hw.have_hw = 1;
    cr_assert_eq(catalog_model(h, model, &m->hw.model, err, sizeof err), 0, "%s", err);
    cr_assert_eq(catalog_gpu(h, gpu, &m->hw.gpu, err, sizeof err), 0, "%s", err);
    store_close(h);
    m->hw.tp = tp;
    m->hw.kv_bytes = 2;
    cr_assert_eq(cost_hw_set_weights(&m->hw, m->hw.model.weights[0] ? m->hw.model.weights : "bf16"), 0);
}

/* A decode step of B sequences, each with C tokens of context before its new one. */
static cost_step decode_step(int b, int c)
{
    return (cost_step) { .decode_seqs = b, .kv_tokens = (int64_t) b * (c + 1), .emitted_tokens = b };
}

/* A prefill step of B prompts of T tokens. */
static cost_step prefill_step(int b, int t)
{
    return (cost_step) { .prefill_tokens = (int64_t) b * t, .prefill_pairs = (double) b * t * (t + 1) / 2.0,
                         .prefill_seqs = b, .emitted_tokens = b };
}

#define MOE_PATH "/tmp/test_moe.ini"

/* Loads and resolves TEXT (tsim.h); runs it with seed 1, failing the test on any error. */
static int load_resolve(const char *text, scenario *sc, char *err, size_t errlen)
{
    return tsim_load_resolve(MOE_PATH, text, sc, err, errlen);
}

static void run_text(const char *text, sim_result *res) { tsim_run(MOE_PATH, text, 1, res); }

/* Expects TEXT to be refused when resolved, with NEEDLE in the message. */
static void expect_refused(const char *text, const char *needle)
{
    scenario sc;
    char err[1024];
    int rc = load_resolve(text, &sc, err, sizeof err);
    if (rc == 0) scenario_free(&sc);
    cr_expect_neq(rc, 0, "accepted:\n%s", text);
    cr_expect(strstr(err, needle) != NULL, "'%s' not in: %s", needle, err);
}

/* ---- the MoE roofline by hand ---------------------------------------------------- */

/* Qwen3-30B-A3B from its config.json: 48 layers, all MoE, 128 experts, 8 per
 * token, moe_intermediate 768, hidden 2048: one expert of one layer is
 * 3 x 2048 x 768 = 4,718,592 weights; the routed experts 48 x 128 x that =
 * 28,991,029,248; the rest (attention, norms, routers, embeddings)
 * 30,532,122,624 - 28,991,029,248 = 1,541,093,376. */
#define Q3_PARAMS 30532122624.0
#define Q3_EXPERT 4718592.0
#define Q3_REST 1541093376.0
#define Q3_ACTIVE 3353032704.0   /* rest + 48 x 8 x expert */

Test(moe_roofline, distinct_experts_by_hand)
{
    /* One token touches its k experts; 16 tokens 128 (1 - (15/16)^16); 512 all but 4.5e-13 of one. */
    cr_expect_float_eq(cost_distinct_experts(128, 8, 1), 8.0, 1e-12);
    double d16 = 128.0 * (1.0 - pow(15.0 / 16.0, 16));
    cr_expect_float_eq(d16, 82.42, 0.01, "hand value %g", d16);
    cr_expect_float_eq(cost_distinct_experts(128, 8, 16), d16, 1e-12 * d16);
    double d512 = 128.0 * (1.0 - pow(15.0 / 16.0, 512));
    cr_expect_float_eq(cost_distinct_experts(128, 8, 512), d512, 1e-12 * d512);
    cr_expect_gt(d512, 128.0 - 1e-9);
    /* Mixtral's top-2 of 8 at batch 4: 8 (1 - (3/4)^4) = 5.46875 exactly. */
    cr_expect_float_eq(cost_distinct_experts(8, 2, 4), 5.46875, 1e-12);
    /* Edges: k >= E touches every expert, nothing routed touches none. */
    cr_expect_eq(cost_distinct_experts(8, 8, 3), 8.0);
    cr_expect_eq(cost_distinct_experts(128, 8, 0), 0.0);
}

Test(moe_roofline, bytes_read_at_batch_1_16_512)
{
    cost_model m;
    roofline_on(&m, "qwen3-30b-a3b", "h100", 1, NULL);
    catalog_counts c;
    catalog_model_counts(&m.hw.model, &c);
    cr_assert_eq(m.hw.model.params, Q3_PARAMS);
    cr_assert_eq(c.expert, Q3_EXPERT);
    cr_assert_eq(c.active, Q3_ACTIVE);
    cr_assert_eq(Q3_REST + 48 * 8 * Q3_EXPERT, Q3_ACTIVE, "the hand constants agree");
    const double kv_per_token = 2.0 * 48 * 4 * 128 * 2;   /* K and V, 4 KV heads of 128, bf16 */
    const int batches[] = { 1, 16, 512 };
    for (int i = 0; i < 3; i++) {
        int b = batches[i];
        cost_step s = decode_step(b, 1000);
        double D = 128.0 * (1.0 - pow(1.0 - 8.0 / 128.0, b));   /* experts touched per MoE layer */
        double weights = (Q3_REST + 48 * D * Q3_EXPERT) * 2;
        double bytes_hand = weights + kv_per_token * ((double) s.kv_tokens + b);
        double flops_hand = 2.0 * Q3_ACTIVE * b + 4.0 * 48 * 32 * 128 * (double) s.kv_tokens;
        double flops, bytes;
        cost_step_work(&m, &s, &flops, &bytes);
        cr_expect_float_eq(bytes, bytes_hand, 1e-12 * bytes_hand, "batch %d: bytes %.17g vs %.17g", b, bytes, bytes_hand);
        cr_expect_float_eq(flops, flops_hand, 1e-12 * flops_hand, "batch %d: flops %.17g vs %.17g", b, flops, flops_hand);
        /* The step: the longer of its FLOPs and bytes, 48 launches of 20 us, 1 ms overhead. */
        double ms_hand = fmax(flops_hand / (989e12 * 0.6), bytes_hand / (3350e9 * 0.8)) * 1e3 + 48 * 0.020 + 1.0;
        cr_expect_float_eq(cost_step_ms(&m, &s), ms_hand, 1e-9 * ms_hand, "batch %d: %.12g vs %.12g ms", b,
                           cost_step_ms(&m, &s), ms_hand);
        /* The hot path gives the same bits. */
        cost_fast f;
        cost_fast_init(&f, &m);
        cr_expect(f.general && !f.roofline);
        double ff, fb;
        cr_expect_eq(cost_fast_ms_work(&f, &s, &ff, &fb), cost_step_ms(&m, &s));
        cr_expect(ff == flops && fb == bytes);
        if (b == 1) cr_expect_float_eq(weights, Q3_ACTIVE * 2, 1e-12 * weights, "batch 1 reads the active weights");
        if (b == 16) cr_expect(weights > Q3_ACTIVE * 2 * 5 && weights < Q3_PARAMS * 2 * 0.7, "batch 16: %g", weights);
        if (b == 512) cr_expect_float_eq(weights, Q3_PARAMS * 2, 1e-9 * weights, "batch 512 reads all of them");
    }
    cost_free(&m);
}

/* A decode step at batch 1 of the MoE model costs what a dense model of its
 * active size (same attention, params = active) costs, within 10 %, and far
 * less than a dense model of its total size. */
Test(moe_roofline, batch1_decode_costs_the_active_size)
{
    cost_model moe, act, tot;
    roofline_on(&moe, "qwen3-30b-a3b", "h100", 1, NULL);
    roofline_on(&act, "qwen3-30b-a3b", "h100", 1, NULL);
    roofline_on(&tot, "qwen3-30b-a3b", "h100", 1, NULL);
    model_spec *d[2] = { &act.hw.model, &tot.hw.model };
    for (int i = 0; i < 2; i++) {
        d[i]->experts = d[i]->experts_per_token = d[i]->moe_intermediate = 0;
        d[i]->expert_params = 0;
    }
    act.hw.model.params = Q3_ACTIVE;
    cr_assert(cost_hw_plain(&act.hw) && cost_hw_plain(&tot.hw) && !cost_hw_plain(&moe.hw));
    for (int ctx = 100; ctx <= 4000; ctx *= 40) {
        cost_step s = decode_step(1, ctx);
        double m = cost_step_ms(&moe, &s), a = cost_step_ms(&act, &s), t = cost_step_ms(&tot, &s);
        cr_expect(fabs(m - a) <= 0.10 * a, "context %d: MoE %g ms vs dense of the active size %g ms", ctx, m, a);
        cr_expect(m < 0.5 * t, "context %d: MoE %g ms vs dense of the total size %g ms", ctx, m, t);
    }
    /* A large prefill reads them all: the same bytes as the dense model of the total size. */
    cost_step p = prefill_step(4, 2048);
    double fm, bm, ft, bt;
    cost_step_work(&moe, &p, &fm, &bm);
    cost_step_work(&tot, &p, &ft, &bt);
    cr_expect_float_eq(bm, bt, 1e-9 * bt, "all experts read: %g vs %g", bm, bt);
    cr_expect_float_eq(fm / ft, Q3_ACTIVE / Q3_PARAMS, 0.02, "FLOPs from the active parameters");
    cost_free(&moe);
    cost_free(&act);
    cost_free(&tot);
}

/* ---- MLA: DeepSeek-V3's KV cache is the compressed latent ------------------------------- */

Test(moe_mla, deepseek_v3_kv_is_the_latent)
{
    sqlite3 *h = catalog_db();
    char err[256];
    llm_cfg l;
    memset(&l, 0, sizeof l);
    cr_assert_eq(catalog_model(h, "deepseek-v3", &l.model, err, sizeof err), 0, "%s", err);
    store_close(h);
    /* 61 layers x (kv_lora_rank 512 + qk_rope_head_dim 64) elements, whole on every TP rank. */
    const double latent = 61.0 * (512 + 64);
    for (int tp = 1; tp <= 8; tp *= 2) {
        l.tp = tp;
        l.pp = 1;
        snprintf(l.kv_dtype, sizeof l.kv_dtype, "bf16");
        cr_expect_eq(llm_kv_bytes_per_token(&l), latent * 2, "tp %d: %g", tp, llm_kv_bytes_per_token(&l));
        snprintf(l.kv_dtype, sizeof l.kv_dtype, "fp8");
        cr_expect_eq(llm_kv_bytes_per_token(&l), latent, "fp8 KV, tp %d", tp);
    }
    /* The old formula's 2 x 61 x 128 heads x 192 x 2 bytes per token was 85x the latent. */
    cr_expect_gt(2.0 * 61 * 128 * 192 * 2 / (latent * 2), 80.0);

    /* Its KV capacity at tp 8 on H200s (fp8 weights, 1 byte each: 671,026,419,200 / 8 per GPU). */
    sim_result res;
    run_text("[sim]\nrequests = 1\nwarmup = 0\n[workload]\narrival = constant\nrate = 0.001\n"
             "prompt_tokens = const(100)\noutput_tokens = const(4)\n"
             "[pool chat]\nkind = llm\nmodel = deepseek-v3\ngpu = h200\ntp = 8\nactivation_reserve_gib = 1\n"
             "non_torch_gib = 0\n", &res);
    double room = 141 * 0.98 * GiB * 0.9 - 671026419200.0 / 8 - 1.0 * GiB;   /* no usable figure: 0.98 x mem_gib */
    int64_t blocks = (int64_t) floor(room / (16 * latent * 2));
    cr_expect_eq(tsim_pv(&res, 0, "kv_blocks"), blocks, "kv_blocks %g vs %lld",
                 tsim_pv(&res, 0, "kv_blocks"), (long long) blocks);
    cr_expect_eq(tsim_n(&res, "served"), 1);
    sim_result_free(&res);
}

/* ---- pipeline parallelism ------------------------------------------------------------- */

/* Llama-3-8B (8.03e9 parameters, 32 layers, 32 heads and 8 KV heads of 128,
 * hidden 4096) in two stages of 16 layers on H100s.  A lone 1000-token prompt
 * is one micro-batch: stage s computes 2 x (8.03e9 / 32) x 16 x 1000 + 4 x 32
 * x 128 x 16 x 500500 FLOPs and reads (8.03e9 / 32) x 16 x 2 + (2 x 16 x 8 x
 * 128 x 2) x 1000 bytes; its time is the longer at 0.6 x 989 TFLOP/s and 0.8 x
 * 3350 GB/s, plus 16 launches of 20 us; the activations, 1000 x 4096 x 2 bytes,
 * cross NVLink (900 GB/s, 8 us); the step adds its 1 ms of overhead. */
static double stage_s(double params, int layers, int n, double tokens, double pairs, double kv_per_layer_gpu)
{
    double f = 2.0 * (params / layers) * n * tokens + 4.0 * 32 * 128 * n * pairs;
    double b = (params / layers) * n * 2 + kv_per_layer_gpu * n * tokens;
    return fmax(f / (989e12 * 0.6), b / (3350e9 * 0.8)) + n * 20e-6;
}

Test(moe_pp, lone_request_ttft_is_two_stages_plus_transfer)
{
    const char *text = "[sim]\nrequests = 1\nwarmup = 0\n[workload]\narrival = constant\nrate = 0.001\n"
                       "prompt_tokens = const(1000)\noutput_tokens = const(3)\n"
                       "[pool chat]\nkind = llm\nmodel = llama-3-8b\ngpu = h100\npp = 2\n";
    sim_result res;
    run_text(text, &res);
    double t = stage_s(8.03e9, 32, 16, 1000, 1000.0 * 1001 / 2, 2.0 * 8 * 128 * 2);
    double x = 8e-6 + 1000.0 * 4096 * 2 / 900e9;
    double ttft = (t + x + t) * 1e3 + 1.0;
    cr_expect_float_eq(tsim_sys(&res, "ttft")->mean, ttft, 2e-6, "TTFT %.9f ms vs two stages + transfer %.9f ms",
                       tsim_sys(&res, "ttft")->mean, ttft);
    cr_expect_eq(tsim_pv(&res, 0, "gpus"), 2);
    sim_result_free(&res);

    /* One stage: the same work in one step, without the transfer. */
    cost_model one, two;
    roofline_on(&one, "llama-3-8b", "h100", 1, NULL);
    roofline_on(&two, "llama-3-8b", "h100", 1, NULL);
    two.hw.pp = 2;
    cost_step p = prefill_step(1, 1000);
    cr_expect_float_eq(cost_step_ms(&two, &p) - cost_step_ms(&one, &p), x * 1e3, 1e-9, "pp 2 - pp 1 = the transfer");
    cost_breakdown b;
    cr_expect_float_eq(cost_roofline_breakdown(&two.hw, &cost_roofline_defaults, &p, &b), cost_step_ms(&two, &p), 1e-12);
    cr_expect_float_eq(b.transfer_ms, x * 1e3, 1e-12);
    cr_expect_eq(b.microbatches, 1, "one sequence is one micro-batch");
    cr_expect_eq(b.pipeline_ms, 0);
    cost_free(&one);
    cost_free(&two);
}

/* Saturated by 2048-token prompts of one output token, four to a step
 * (max_batch_tokens 8192), in pp = 2 stages with m micro-batches, without step
 * overhead or launches: a step is m + pp - 1 stage times (and a transfer), so
 * the throughput is pp x the stage-serial rate (one prompt through both stages
 * one after the other, what pp = 1 takes) x m / (m + pp - 1). */
Test(moe_pp, saturated_throughput_follows_the_bubble)
{
    cost_model serial;
    cost_roofline c = cost_roofline_defaults;
    c.step_overhead_ms = 0;
    c.launch_us_per_layer = 0;
    roofline_on(&serial, "llama-3-8b", "h100", 1, &c);
    cost_step one = prefill_step(1, 2048);
    double x_serial = 2048.0 / (cost_step_ms(&serial, &one) / 1e3);   /* prompt tokens per second */
    cost_free(&serial);
    const int ms[] = { 1, 2, 4 };
    double got[3];
    for (int i = 0; i < 3; i++) {
        char text[1024];
        snprintf(text, sizeof text,
                 "[sim]\nrequests = 600\nwarmup = 100\n[workload]\narrival = poisson\nrate = 200\n"
                 "prompt_tokens = const(2048)\noutput_tokens = const(1)\n"
                 "[pool chat]\nkind = llm\nmodel = llama-3-8b\ngpu = h100\npp = 2\npp_microbatches = %d\n"
                 "max_batch_tokens = 8192\nstep_overhead_ms = 0\nlaunch_us_per_layer = 0\ncost = roofline\n", ms[i]);
        sim_result res;
        run_text(text, &res);
        cr_expect(tsim_sat(&res), "m = %d: the pool should be saturated", ms[i]);
        cr_expect_float_eq(tsim_pv(&res, 0, "mean_batch"), 4.0, 1e-9, "four prompts a step");
        got[i] = tsim_v(&res, "throughput_rps") * 2048;
        double want = 2 * x_serial * ms[i] / (ms[i] + 2 - 1);
        cr_expect(fabs(got[i] - want) <= 0.01 * want, "m = %d: %g tokens/s vs the bubble formula's %g", ms[i],
                  got[i], want);
        sim_result_free(&res);
    }
    cr_expect(got[0] < got[1] && got[1] < got[2], "more micro-batches, a smaller bubble");
}

/* Each stage holds its layers' weights and KV: llama-3-70b (80 layers) in two
 * stages at tp 2 on H100s has 40 layers per GPU pair. */
Test(moe_pp, stage_memory)
{
    sim_result res;
    run_text("[sim]\nrequests = 1\nwarmup = 0\n[workload]\narrival = constant\nrate = 0.001\n"
             "prompt_tokens = const(100)\noutput_tokens = const(2)\n"
             "[pool chat]\nkind = llm\nmodel = llama-3-70b\ngpu = h100\ntp = 2\npp = 2\nactivation_reserve_gib = 1\n"
             "non_torch_gib = 0\n", &res);
    double room = 79.18 * GiB * 0.9 - 70.55e9 / 2 * 2 / 2 - 1.0 * GiB;
    double per_token = 2.0 * 40 * 4 * 128 * 2;   /* 40 layers, 4 of the 8 KV heads */
    int64_t blocks = (int64_t) floor(room / (16 * per_token));
    cr_expect_eq(tsim_pv(&res, 0, "kv_blocks"), blocks, "kv_blocks %g vs %lld",
                 tsim_pv(&res, 0, "kv_blocks"), (long long) blocks);
    cr_expect_eq(tsim_pv(&res, 0, "gpus"), 4);
    cr_expect_float_eq(tsim_pv(&res, 0, "cost_per_hour"), 4 * 2.99, 1e-9);
    sim_result_free(&res);
    /* Uneven stages: 61 layers in 2 stages are 31 + 30. */
    cost_hw h = { .model = { .layers = 61 }, .pp = 2 };
    int first, n;
    cost_stage_layers(&h, 0, &first, &n);
    cr_expect(first == 0 && n == 31);
    cost_stage_layers(&h, 1, &first, &n);
    cr_expect(first == 31 && n == 30);
}

/* ---- nodes ---------------------------------------------------------------------------- */

/* H100 nodes hold 8 GPUs: llama-3-70b at tp 8 in two stages sends the
 * activations between nodes (50 GB/s, 8 + 5 us); with 16 GPUs to a node it
 * would use NVLink.  At tp 16 the all-reduces cross nodes too. */
Test(moe_nodes, spanning_replica_uses_the_node_link)
{
    cost_model m;
    roofline_on(&m, "llama-3-70b", "h100", 8, NULL);
    m.hw.pp = 2;
    cost_step p = prefill_step(1, 1000);
    double act = 1000.0 * 8192 * 2;
    cost_breakdown b;
    cost_roofline_breakdown(&m.hw, &cost_roofline_defaults, &p, &b);
    cr_expect_float_eq(b.transfer_ms, ((8 + 5) * 1e-6 + act / 50e9) * 1e3, 1e-12, "across nodes: %g ms", b.transfer_ms);
    /* Each stage's all-reduces stay within its node: 2 x 40 layers of (8 us + 2 x 7/8 x act / 900 GB/s). */
    cr_expect_float_eq(b.allreduce_ms, 2 * 2 * 40 * (8e-6 + 2.0 * 7 / 8 * act / 900e9) * 1e3, 1e-9);
    double across = cost_step_ms(&m, &p);
    m.hw.gpu.gpus_per_node = 16;
    cost_roofline_breakdown(&m.hw, &cost_roofline_defaults, &p, &b);
    cr_expect_float_eq(b.transfer_ms, (8e-6 + act / 900e9) * 1e3, 1e-12, "within a node: %g ms", b.transfer_ms);
    cr_expect_float_eq(across - cost_step_ms(&m, &p), (5e-6 + act / 50e9 - act / 900e9) * 1e3, 1e-9);

    /* tp 16, one stage: both all-reduces of each of the 80 layers cross nodes. */
    m.hw.gpu.gpus_per_node = 8;
    m.hw.pp = 1;
    m.hw.tp = 16;
    cr_expect(!cost_hw_plain(&m.hw), "a tp group across nodes takes the general roofline");
    cost_roofline_breakdown(&m.hw, &cost_roofline_defaults, &p, &b);
    cr_expect_float_eq(b.allreduce_ms, 2 * 80 * ((8 + 5) * 1e-6 + 2.0 * 15 / 16 * act / 50e9) * 1e3, 1e-9,
                       "across nodes: %g ms", b.allreduce_ms);
    cost_free(&m);

    /* A scenario: 16 GPUs per replica, across two nodes. */
    sim_result res;
    run_text("[sim]\nrequests = 1\nwarmup = 0\n[workload]\narrival = constant\nrate = 0.001\n"
             "prompt_tokens = const(100)\noutput_tokens = const(2)\n"
             "[pool chat]\nkind = llm\nmodel = llama-3-70b\ngpu = h100\ntp = 8\npp = 2\n", &res);
    cr_expect_eq(tsim_pv(&res, 0, "gpus"), 16);
    sim_result_free(&res);
    /* Without a node link such a replica cannot be built. */
    expect_refused("[sim]\nrequests = 1\n[workload]\nrate = 1\nprompt_tokens = const(100)\noutput_tokens = const(2)\n"
                   "[gpu slow]\nbf16_tflops = 100\nfp8_tflops = 200\nmem_gib = 80\nmem_bw_gbs = 1000\nlink_gbs = 100\n"
                   "price_hr = 1\ngpus_per_node = 2\nnode_link_gbs = 0\n"
                   "[pool chat]\nkind = llm\nmodel = llama-3-8b\ngpu = slow\ntp = 2\npp = 2\n", "node_link_gbs");
}

/* ---- expert parallelism ----------------------------------------------------------------- */

/* Qwen3-30B-A3B at tp 4, ep 4, decode of 64 sequences: each of the 48 MoE
 * layers dispatches and combines 64 x 2048 x 2 bytes x 3/4 per GPU over NVLink
 * (8 us each); its MLP all-reduce is gone, the attention's stays. */
Test(moe_ep, alltoall_is_its_byte_formula)
{
    cost_model m;
    roofline_on(&m, "qwen3-30b-a3b", "h100", 4, NULL);
    cost_step s = decode_step(64, 1000);
    double act = 64.0 * 2048 * 2;
    cost_breakdown b1, b4;
    cost_roofline_breakdown(&m.hw, &cost_roofline_defaults, &s, &b1);
    cr_expect_eq(b1.alltoall_ms, 0, "ep 1: no all-to-all");
    double ar = 8e-6 + 2.0 * 3 / 4 * act / 900e9;
    cr_expect_float_eq(b1.allreduce_ms, 2 * 48 * ar * 1e3, 1e-9);
    m.hw.ep = 4;
    cost_roofline_breakdown(&m.hw, &cost_roofline_defaults, &s, &b4);
    double a2a = 8e-6 + act * 3 / 4 / 900e9;
    cr_expect_float_eq(b4.alltoall_ms, 2 * 48 * a2a * 1e3, 1e-9, "%g ms", b4.alltoall_ms);
    cr_expect_float_eq(b4.allreduce_ms, 48 * ar * 1e3, 1e-9);
    /* Uniform routing: the same expected bytes and FLOPs per GPU as tensor-sliced experts. */
    cr_expect_float_eq(b4.gpu_ms, b1.gpu_ms, 1e-9);
    cr_expect_float_eq(cost_step_ms(&m, &s), b4.gpu_ms + b4.allreduce_ms + b4.alltoall_ms + b4.launch_ms + 1.0, 1e-9);

    /* ep 2 of tp 4: each expert sliced over 2 GPUs, both all-reduces kept. */
    m.hw.ep = 2;
    cost_breakdown b2;
    cost_roofline_breakdown(&m.hw, &cost_roofline_defaults, &s, &b2);
    cr_expect_float_eq(b2.alltoall_ms, 2 * 48 * (8e-6 + act / 2 / 900e9) * 1e3, 1e-9);
    cr_expect_float_eq(b2.allreduce_ms, b1.allreduce_ms, 1e-9);

    /* tp = ep = 16: across two H100 nodes, 50 GB/s and 8 + 5 us. */
    m.hw.tp = m.hw.ep = 16;
    cost_breakdown b16;
    cost_roofline_breakdown(&m.hw, &cost_roofline_defaults, &s, &b16);
    cr_expect_float_eq(b16.alltoall_ms, 2 * 48 * ((8 + 5) * 1e-6 + act * 15 / 16 / 50e9) * 1e3, 1e-9,
                       "%g ms", b16.alltoall_ms);
    cost_free(&m);
}

/* The busiest EP rank does expert_imbalance x its share of the experts'
 * FLOPs: a compute-bound prefill grows by exactly (imbalance - 1) x the routed
 * experts' FLOPs per GPU. */
Test(moe_ep, imbalance_scales_expert_compute)
{
    cost_model m;
    roofline_on(&m, "qwen3-30b-a3b", "h100", 4, NULL);
    m.hw.ep = 4;
    cost_step p = prefill_step(4, 2048);
    cost_breakdown b1, b2;
    cost_roofline_breakdown(&m.hw, &cost_roofline_defaults, &p, &b1);
    cr_assert(!b1.memory_bound, "a compute-bound prefill");
    m.hw.expert_imbalance = 2;
    cost_roofline_breakdown(&m.hw, &cost_roofline_defaults, &p, &b2);
    double f_exp = 2.0 * 48 * 8 * Q3_EXPERT * 8192;
    cr_expect_float_eq(b2.gpu_ms - b1.gpu_ms, f_exp / 4 / (989e12 * 0.6) * 1e3, 1e-9);
    /* Without expert parallelism every GPU computes a slice of every expert: no effect. */
    m.hw.ep = 1;
    cost_roofline_breakdown(&m.hw, &cost_roofline_defaults, &p, &b2);
    cr_expect_float_eq(b2.gpu_ms, b1.gpu_ms, 1e-9);
    cost_free(&m);
}

Test(moe_ep, configuration_errors)
{
    const char *head = "[sim]\nrequests = 1\n[workload]\nrate = 1\nprompt_tokens = const(100)\noutput_tokens = const(2)\n"
                       "[pool chat]\nkind = llm\ngpu = h100\n";
    char text[1024];
    snprintf(text, sizeof text, "%smodel = qwen3-30b-a3b\ntp = 4\nep = 3\n", head);
    expect_refused(text, "ep = 3 does not divide tp = 4");
    snprintf(text, sizeof text, "%smodel = llama-3-8b\ntp = 2\nep = 2\n", head);
    expect_refused(text, "needs a mixture-of-experts model");
    snprintf(text, sizeof text, "%smodel = llama-3-8b\npp = 40\n", head);
    expect_refused(text, "pp = 40 stages exceed llama-3-8b's 32 layers");
}

/* ---- FP4 -------------------------------------------------------------------------------- */

/* gpt-oss-120b (fp4) prefilling 8192 tokens is compute-bound on a B200: at its
 * 9000 FP4 TFLOP/s; an H100 has no FP4: dequantised, at its 989 BF16. */
Test(moe_fp4, fp4_peak_or_dequantised)
{
    const char *gpus[2] = { "b200", "h100" };
    const double peak[2] = { 9000e12, 989e12 };
    for (int i = 0; i < 2; i++) {
        cost_model m;
        roofline_on(&m, "gpt-oss-120b", gpus[i], 1, NULL);
        cr_assert_str_eq(m.hw.weights, "fp4");
        cr_expect_eq(m.hw.weight_bytes, 0.5625);
        cost_step p = prefill_step(2, 4096);
        double flops, bytes;
        cost_step_work(&m, &p, &flops, &bytes);
        cost_breakdown b;
        cost_roofline_breakdown(&m.hw, &cost_roofline_defaults, &p, &b);
        cr_expect(!b.memory_bound, "%s: compute-bound", gpus[i]);
        cr_expect_float_eq(b.gpu_ms, flops / (peak[i] * 0.6) * 1e3, 1e-9, "%s: %g ms", gpus[i], b.gpu_ms);
        char note[256];
        cr_expect_eq(cost_hw_note(&m.hw, note, sizeof note), i == 1, "%s: %s", gpus[i], note);
        if (i == 1) cr_expect(strstr(note, "dequantised to bf16"), "%s", note);
        cost_free(&m);
    }
}

/* ---- calibrated models ------------------------------------------------------------------- */

/* The fitted model's MoE terms: FLOP terms from the active parameters, the
 * weights term from the experts a step touches; the prepared evaluation gives
 * the direct one's bits. */
Test(moe_calib, fitted_terms)
{
    sqlite3 *h = catalog_db();
    char err[256];
    cfitted m;
    memset(&m, 0, sizeof m);
    cr_assert_eq(catalog_model(h, "qwen3-30b-a3b", &m.model, err, sizeof err), 0, "%s", err);
    store_close(h);
    m.weight_bytes = m.kv_bytes = 2;
    double f[CF_NTERMS];
    cost_step s1 = decode_step(1, 500), s512 = decode_step(512, 500);
    cfitted_features(&m.model, 2, 2, 2, &s1, f);
    cr_expect_float_eq(f[CF_WEIGHTS], Q3_ACTIVE * 2 / 2 / 1e9, 1e-12, "batch 1: the active weights, per GPU");
    cr_expect_float_eq(f[CF_DECODE], 2 * Q3_ACTIVE * 1 / 2 / 1e12, 1e-15);
    cfitted_features(&m.model, 2, 2, 2, &s512, f);
    cr_expect_float_eq(f[CF_WEIGHTS], Q3_PARAMS * 2 / 2 / 1e9, 1e-9, "batch 512: all of them");
    for (int k = 0; k < CF_NTERMS; k++) m.c[k] = 0.5 + 0.25 * k;
    double r[CF_NTERMS];
    for (int k = 0; k < CF_NTERMS; k++) r[k] = 1;
    cfitted_eval e;
    cfitted_eval_init(&m, 2, r, &e);
    cost_step mixed = { .prefill_tokens = 300, .prefill_pairs = 45150, .prefill_seqs = 1, .decode_seqs = 9,
                        .kv_tokens = 9000, .emitted_tokens = 10 };
    cr_expect_eq(cfitted_eval_ms(&e, &mixed), cfitted_step_ms(&m, 2, &mixed, NULL), "the same bits");
}

static void cli_setup(void) { tcli_setup("/tmp/latsim_moe_", "c.db"); }
TestSuite(moe_cli, .init = cli_setup, .fini = tcli_teardown);

__attribute__((format(printf, 1, 2)))
static result latsim(const char *fmt, ...)
{
    char tail[160];
    snprintf(tail, sizeof tail, "--db '%s'", db);
    va_list ap;
    va_start(ap, fmt);
    result r = vrun_sh(tail, fmt, ap);
    va_end(ap);
    return r;
}

/* Whole-step measurements of Qwen3-30B-A3B made by a fitted model with known
 * coefficients (its MoE features): the fit finds them back, `latsim cost`
 * predicts with them, and a pipeline replica refuses the fitted model in one
 * line while `auto` falls back to the roofline. */
Test(moe_cli, fitted_moe_and_pipeline_refusal)
{
    sqlite3 *h = catalog_db();
    char err[256];
    cfitted m;
    memset(&m, 0, sizeof m);
    cr_assert_eq(catalog_model(h, "qwen3-30b-a3b", &m.model, err, sizeof err), 0, "%s", err);
    store_close(h);
    m.weight_bytes = m.kv_bytes = 2;
    static const double known[CF_NTERMS] = { [CF_FIXED] = 3.0, [CF_WEIGHTS] = 0.4, [CF_PREFILL] = 2.0,
                                             [CF_ATTN] = 3.0, [CF_KV] = 0.5, [CF_DECODE] = 5.0 };
    memcpy(m.c, known, sizeof known);
    char csv[256];
    snprintf(csv, sizeof csv, "%s/steps.csv", dir);
    FILE *fp = fopen(csv, "w");
    cr_assert_not_null(fp);
    fprintf(fp, "model,gpu,tp,phase,batch_size,tokens,step_ms,source\n");
    static const int toks[] = { 128, 512, 2048, 8192 }, pb[] = { 1, 4 }, db_[] = { 1, 4, 16, 64, 256 }, ctx[] = { 256, 2048 };
    for (int i = 0; i < 4; i++)
        for (int b = 0; b < 2; b++) {
            cost_step s = prefill_step(pb[b], toks[i]);
            fprintf(fp, "qwen3-30b-a3b,h100,1,prefill,%d,%d,%.12g,synthetic\n", pb[b], toks[i], cfitted_step_ms(&m, 1, &s, NULL));
        }
    for (int i = 0; i < 2; i++)
        for (int b = 0; b < 5; b++) {
            cost_step s = { .decode_seqs = db_[b], .kv_tokens = (int64_t) db_[b] * (ctx[i] + 1) };
            fprintf(fp, "qwen3-30b-a3b,h100,1,decode,%d,%d,%.12g,synthetic\n", db_[b], ctx[i], cfitted_step_ms(&m, 1, &s, NULL));
        }
    fclose(fp);
    result r = latsim("calib import steps '%s'", csv);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    result_free(&r);
    r = latsim("calib fit --model qwen3-30b-a3b --gpu h100");
    cr_assert_eq(r.rc, 0, "%s", r.err);
    result_free(&r);
    /* A decode of 8 sequences (about 50 experts per layer touched) predicted as the generator does. */
    cost_step s = { .decode_seqs = 8, .kv_tokens = 8 * 1001 };
    double truth = cfitted_step_ms(&m, 1, &s, NULL);
    r = latsim("cost --model qwen3-30b-a3b --gpu h100 --tp 1 --decode 8 --context 1000 --cost fitted");
    cr_assert_eq(r.rc, 0, "%s", r.err);
    double ms = atof(r.out + strlen("step_ms "));
    cr_expect(fabs(ms - truth) < 0.01 * truth, "predicted %g, truth %g: %s", ms, truth, r.out);
    result_free(&r);

    /* pp = 2 with the fitted model: its terms on the roofline's pipeline structure,
     * marked extrapolated (tests/test_fitpp.c checks the numbers). */
    char ini[256];
    write_file("pp.ini", "[sim]\nrequests = 20\nwarmup = 0\n[workload]\nrate = 1\nprompt_tokens = const(100)\n"
               "output_tokens = const(4)\n[pool chat]\nkind = llm\nmodel = qwen3-30b-a3b\ngpu = h100\npp = 2\n"
               "cost = fitted\n", ini, sizeof ini);
    r = latsim("run '%s' --no-store --json", ini);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    cr_expect(strstr(r.out, "\"cost_model\": {\"kind\": \"fitted\""), "%s", r.out);
    cr_expect(strstr(r.out, "\"range\": \"extrapolated\""), "%s", r.out);
    result_free(&r);
    /* A per-operator profile stays refused there, in one line naming the key. */
    r = latsim("run '%s' --no-store --set 'pool chat.cost=profile'", ini);
    cr_expect_eq(r.rc, 2, "%s", r.err);
    result_free(&r);
    /* auto: the fitted model too. */
    r = latsim("run '%s' --no-store --json --set 'pool chat.cost=auto'", ini);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    cr_expect(strstr(r.out, "\"cost_model\": {\"kind\": \"fitted\""), "%s", r.out);
    result_free(&r);
    /* One stage: auto picks the fitted model. */
    r = latsim("run '%s' --no-store --json --set 'pool chat.cost=auto' --set 'pool chat.pp=1'", ini);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    cr_expect(strstr(r.out, "\"cost_model\": {\"kind\": \"fitted\""), "%s", r.out);
    result_free(&r);
}

/* `latsim cost` says when fp4 weights are dequantised. */
Test(moe_cli, cost_fp4_note)
{
    result r = latsim("cost --model gpt-oss-20b --gpu h100 --tp 1 --decode 1 --context 100");
    cr_assert_eq(r.rc, 0, "%s", r.err);
    cr_expect(strstr(r.out, "note: fp4 weights on h100, which has no FP4: dequantised to bf16"), "%s", r.out);
    result_free(&r);
    r = latsim("cost --model gpt-oss-20b --gpu b200 --tp 1 --decode 1 --context 100");
    cr_assert_eq(r.rc, 0, "%s", r.err);
    cr_expect(!strstr(r.out, "dequantised"), "%s", r.out);
    result_free(&r);
}

/* The planner searches pp and ep like tp; a configuration whose ep does not
 * divide its tp is refused, not fatal. */
Test(moe_cli, plan_searches_pp_and_ep)
{
    char ini[256];
    write_file("plan.ini", "[sim]\nrequests = 300\nwarmup = 50\n[workload]\nrate = 1\n"
               "prompt_tokens = const(200)\noutput_tokens = const(20)\n"
               "[pool chat]\nkind = llm\nmodel = qwen3-30b-a3b\ngpu = h100\n"
               "[slo]\nttft_p99_ms = 2000\n", ini, sizeof ini);
    result r = latsim("plan '%s' --target-rate 2 --tp 1,2 --pp 1,2 --ep 1,2 --replicas 1:4 --seeds 1 --jobs 2 --json", ini);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    cr_expect(strstr(r.out, "\"pool chat.pp\": \"2\""), "%s", r.out);
    cr_expect(strstr(r.out, "\"pool chat.ep\": \"2\""), "%s", r.out);
    /* ep 2 at tp 1 (two of the eight): refused by the scenario. */
    cr_expect(strstr(r.out, "\"infeasible\": 2"), "%s", r.out);
    /* The cheapest: one H100, one stage. */
    cr_expect(strstr(r.out, "\"usd_per_hour\": 2.99"), "%s", r.out);
    result_free(&r);
}
