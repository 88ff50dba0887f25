/* test_fitpp.c -- `cost = fitted` on pipeline-parallel and expert-parallel
 * replicas (pp, ep > 1): the fitted terms laid out on the general roofline's
 * structure (cfitted_staged_ms, docs/calibration.md).
 *
 * The exact check: a fitted model whose coefficients are the roofline's own
 * effective ones (ms per GB = 1000 / (bandwidth x memory_eff), ms per TFLOP =
 * 1000 / (peak x compute_eff), the all-reduce's link and latency, the launch
 * cost and step overhead) gives the roofline's step time for pp = 2 and for
 * ep = 2 within 1e-9 relative.  Two structural differences of the additive
 * fitted model are asserted by hand rather than hidden: (1) the roofline takes
 * max(compute, memory) per stage where the fitted model adds them, so a
 * memory-bound step is compared with the FLOP coefficients at 0 and a
 * compute-bound one with the byte coefficients at 0; (2) the roofline's KV
 * bytes count the step's new tokens written (KV + T) where the fitted KV term
 * reads kv_tokens only: the difference is that write, (pp + m - 1) x one
 * stage's KV write for equal stages.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "ccost.h"
#include "cfitted.h"
#include "core/catalog.h"
#include "llm/cost.h"
#include "store/store.h"

/* HW from the catalog: MODEL on GPU at tp TP, pp PP, ep EP, bf16 weights and KV. */
static void hw_on(cost_hw *hw, const char *model, const char *gpu, int tp, int pp, int ep)
{
    sqlite3 *h = NULL;
    char err[256];
    cr_assert_eq(store_open(":memory:", &h, err, sizeof err), 0, "%s", err);
    memset(hw, 0, sizeof *hw);
    hw->have_hw = 1;
    cr_assert_eq(catalog_model(h, model, &hw->model, err, sizeof err), 0, "%s", err);
    cr_assert_eq(catalog_gpu(h, gpu, &hw->gpu, err, sizeof err), 0, "%s", err);
    store_close(h);
    hw->tp = tp;
    hw->pp = pp;
    hw->ep = ep;
    hw->kv_bytes = 2;
    cr_assert_eq(cost_hw_set_weights(hw, "bf16"), 0);
}

/* The roofline's effective coefficients on HW (default parameters): MEMORY
 * and COMPUTE select which side's terms are on. */
static void roofline_terms(const cost_hw *hw, int memory, int compute, double *c)
{
    const cost_roofline *r = &cost_roofline_defaults;
    memset(c, 0, CF_NTERMS * sizeof *c);
    double ms_per_gb = 1e3 / (hw->gpu.mem_bw_gbs * r->memory_eff);
    double ms_per_tflop = 1e3 / (hw->gpu.bf16_tflops * r->compute_eff);
    c[CF_FIXED] = r->step_overhead_ms;
    c[CF_WEIGHTS] = memory ? ms_per_gb : 0;
    c[CF_KV] = memory ? ms_per_gb : 0;
    c[CF_PREFILL] = c[CF_ATTN] = c[CF_DECODE] = compute ? ms_per_tflop : 0;
    c[CF_AR_BYTES] = 1e3 / hw->gpu.link_gbs;
    c[CF_AR_HOP] = r->allreduce_latency_us * 1e-3;   /* per hop: one hop at tp = 2 */
    c[CF_LAUNCH] = r->launch_us_per_layer * 1e-3;    /* one phase per step below */
    c[CF_SEQ] = 0;
}

/* A fitted model of coefficients C on HW (as an observed-run fit is built). */
static void fitted_on(cost_model *m, const cost_hw *hw, const double *c)
{
    cr_assert_eq(ccost_register(), 0);
    memset(m, 0, sizeof *m);
    m->hw = *hw;
    cfitted f;
    memset(&f, 0, sizeof f);
    f.model = hw->model;
    f.weight_bytes = hw->weight_bytes;
    f.kv_bytes = hw->kv_bytes;
    memcpy(f.c, c, sizeof f.c);
    cr_assert_eq(ccost_use_fitted(m, &f, "scenario"), 0);
}

static double roofline_ms(const cost_hw *hw, const cost_step *s)
{
    return cost_roofline_breakdown(hw, &cost_roofline_defaults, s, NULL);
}

/* One stage's KV write of a micro-batch of T tokens on HW, ms: the roofline's
 * (KV + T) less the fitted model's KV. */
static double kv_write_ms(const cost_hw *hw, int stage, double T)
{
    return cost_stage_kv_elems(hw, stage) * hw->kv_bytes * T / (hw->gpu.mem_bw_gbs * 1e9 * cost_roofline_defaults.memory_eff) * 1e3;
}

static void expect_rel(double got, double want, const char *what)
{
    cr_expect(fabs(got - want) <= 1e-9 * fabs(want), "%s: %.17g, want %.17g (rel %.3g)", what, got, want,
              fabs(got - want) / fabs(want));
}

static const cost_step decode8 = { .decode_seqs = 8, .kv_tokens = 8 * 1001, .emitted_tokens = 8 };
static const cost_step prefill4k = { .prefill_tokens = 4096, .prefill_pairs = 4096.0 * 4097 / 2, .prefill_seqs = 1 };
static const cost_step prefill4x1k = { .prefill_tokens = 4096, .prefill_pairs = 4 * 1024.0 * 1025 / 2, .prefill_seqs = 4 };

Test(fitpp, pp2_memory_bound_decode_is_the_roofline_less_the_kv_write)
{
    cost_hw hw;
    hw_on(&hw, "llama-3.1-8b", "h100", 2, 2, 1);
    double c[CF_NTERMS];
    roofline_terms(&hw, 1, 0, c);
    cost_model m;
    fitted_on(&m, &hw, c);
    cost_breakdown b;
    double roof = cost_roofline_breakdown(&hw, &cost_roofline_defaults, &decode8, &b);
    cr_assert_eq(b.microbatches, 2);
    cr_assert(b.memory_bound);
    /* Equal stages (16 layers each), the transfers far below a stage: the path is
     * two stages, the pipeline one more; each carries one stage's KV write. */
    double dkv = kv_write_ms(&hw, 0, 8.0 / 2);
    cr_assert_eq(kv_write_ms(&hw, 1, 8.0 / 2), dkv);
    double got = cost_step_ms(&m, &decode8);
    expect_rel(got, roof - (2 + 2 - 1) * dkv, "pp 2 decode");
    cr_expect(got < roof && roof - got > 1e-4, "the KV write is a real difference: %g vs %g", got, roof);
    cost_free(&m);
}

Test(fitpp, pp2_compute_bound_prefill_is_the_roofline)
{
    cost_hw hw;
    hw_on(&hw, "llama-3.1-8b", "h100", 2, 2, 1);
    double c[CF_NTERMS];
    roofline_terms(&hw, 0, 1, c);
    cost_model m;
    fitted_on(&m, &hw, c);
    cost_breakdown b;
    double roof = cost_roofline_breakdown(&hw, &cost_roofline_defaults, &prefill4x1k, &b);
    cr_assert_eq(b.microbatches, 2);
    cr_assert(!b.memory_bound);
    expect_rel(cost_step_ms(&m, &prefill4x1k), roof, "pp 2 prefill (4 prompts, 2 micro-batches)");
    /* One prompt: one micro-batch, no bubble. */
    expect_rel(cost_step_ms(&m, &prefill4k), roofline_ms(&hw, &prefill4k), "pp 2 prefill (1 prompt)");
    /* pp = 3 over 32 layers (11, 11, 10): unequal stages, the slowest is the bubble's. */
    hw.pp = 3;
    cost_model m3;
    fitted_on(&m3, &hw, c);
    expect_rel(cost_step_ms(&m3, &prefill4x1k), roofline_ms(&hw, &prefill4x1k), "pp 3 prefill");
    cost_free(&m3);
    cost_free(&m);
}

Test(fitpp, ep2_moe_is_the_roofline_with_its_alltoall)
{
    cost_hw hw;
    hw_on(&hw, "qwen3-30b-a3b", "h100", 2, 1, 2);
    hw.expert_imbalance = 1.3;
    double c[CF_NTERMS];
    /* Compute-bound prefill: the experts' FLOPs x imbalance, the all-to-alls. */
    roofline_terms(&hw, 0, 1, c);
    cost_model m;
    fitted_on(&m, &hw, c);
    cost_breakdown b;
    double roof = cost_roofline_breakdown(&hw, &cost_roofline_defaults, &prefill4k, &b);
    cr_assert(!b.memory_bound);
    cr_assert(b.alltoall_ms > 0);
    expect_rel(cost_step_ms(&m, &prefill4k), roof, "ep 2 prefill");
    cost_free(&m);
    /* Memory-bound decode: each GPU's share of the distinct experts touched. */
    roofline_terms(&hw, 1, 0, c);
    fitted_on(&m, &hw, c);
    roof = cost_roofline_breakdown(&hw, &cost_roofline_defaults, &decode8, &b);
    cr_assert(b.memory_bound);
    expect_rel(cost_step_ms(&m, &decode8), roof - kv_write_ms(&hw, 0, 8), "ep 2 decode");
    cost_free(&m);
}

Test(fitpp, pp2_ep2_together)
{
    cost_hw hw;
    hw_on(&hw, "qwen3-30b-a3b", "h100", 2, 2, 2);
    double c[CF_NTERMS];
    roofline_terms(&hw, 1, 0, c);
    cost_model m;
    fitted_on(&m, &hw, c);
    cost_breakdown b;
    double roof = cost_roofline_breakdown(&hw, &cost_roofline_defaults, &decode8, &b);
    cr_assert(b.memory_bound);
    double dkv = kv_write_ms(&hw, 0, 4);
    expect_rel(cost_step_ms(&m, &decode8), roof - 3 * dkv, "pp 2 ep 2 decode");
    cost_info ci;
    cost_describe(&m, &ci);
    cr_expect_str_eq(ci.range, "extrapolated");
    /* The parts (ccost_step_ms's direct evaluation) sum to the step time and
     * name the pipeline's and the experts' pieces. */
    ccost cc;
    memset(&cc, 0, sizeof cc);
    cc.roof.hw = hw;
    cr_assert_eq(cost_init(&cc.roof, "roofline", &cost_roofline_defaults), 0);
    cc.kind = CC_FITTED;
    cc.tp = 2;
    cc.r_compute = cc.r_memory = cc.r_link = 1;
    cc.fitted.model = hw.model;
    cc.fitted.weight_bytes = hw.weight_bytes;
    cc.fitted.kv_bytes = hw.kv_bytes;
    memcpy(cc.fitted.c, c, sizeof cc.fitted.c);
    cc.fev.staged = 1;
    ccost_parts p;
    double total = ccost_step_ms(&cc, &decode8, &p, NULL);
    expect_rel(total, cost_step_ms(&m, &decode8), "parts' total");
    double sum = 0;
    int seen = 0;
    for (int i = 0; i < p.n; i++) {
        sum += p.ms[i];
        if (!strcmp(p.name[i], "alltoall")) {
            seen |= 1;
            cr_expect(p.ms[i] > 0, "alltoall");
        }
        if (!strcmp(p.name[i], "stage_transfer")) {
            seen |= 2;
            cr_expect(p.ms[i] > 0, "stage_transfer");
        }
        if (!strcmp(p.name[i], "pipeline")) {
            seen |= 4;
            cr_expect(p.ms[i] > 0, "pipeline");
        }
    }
    cr_expect_eq(seen, 7, "parts seen %d of %d", seen, p.n);
    expect_rel(sum, total, "parts sum");
    cost_free(&cc.roof);
    cost_free(&m);
}

Test(fitpp, one_stage_is_unchanged)
{
    /* pp = ep = 1: the single-stage evaluation, to the bit. */
    cost_hw hw;
    hw_on(&hw, "qwen3-30b-a3b", "h100", 2, 1, 1);
    double c[CF_NTERMS];
    roofline_terms(&hw, 1, 1, c);
    c[CF_SEQ] = 0.01;
    cost_model m;
    fitted_on(&m, &hw, c);
    cfitted f;
    memset(&f, 0, sizeof f);
    f.model = hw.model;
    f.weight_bytes = hw.weight_bytes;
    f.kv_bytes = hw.kv_bytes;
    memcpy(f.c, c, sizeof f.c);
    cr_expect_eq(cost_step_ms(&m, &decode8), cfitted_step_ms(&f, 2, &decode8, NULL));
    cr_expect_eq(cost_step_ms(&m, &prefill4k), cfitted_step_ms(&f, 2, &prefill4k, NULL));
    cost_info ci;
    cost_describe(&m, &ci);
    cr_expect_str_eq(ci.range, "measured");
    cost_free(&m);
}
