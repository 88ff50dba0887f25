/* cost.c -- step-duration models of an LLM replica (see cost.h).
 *
 * Implements the cost-model table (the two built-in models and the rows
 * registered by others), and the FLOP/byte accounting used for MFU/MBU
 * reporting.  With decode_tokens = decode_seqs x decode_tokens_per_seq and
 * decode_pairs = cost_step_decode_pairs (kv_tokens for one token per sequence):
 *
 * Linear (exactly the formula of cost.h, no rounding):
 *   step_ms = step_base_ms + prefill_ms_per_token * prefill_tokens
 *             + decode_ms_per_seq * decode_tokens + kv_ms_per_1k_tokens * kv_tokens / 1000
 *
 * Roofline, for one replica of tp GPUs, with P = params, L = layers,
 * H = heads, Hkv = kv_heads, d = head_dim, D = hidden and
 * tokens = prefill_tokens + decode_tokens (the tokens computed by the step):
 *   flops  = 2 * P * tokens + 4 * L * H * d * (prefill_pairs + decode_pairs)
 *            (a multiply-add per weight per token; QK^T and AV per
 *             (query, key) pair)
 *   kv_bpt = 2 * L * Hkv * d * kv_bytes                  (K and V, per token)
 *   bytes  = P * weight_bytes + kv_bpt * (kv_tokens + tokens)
 *            (the weights once; the decode contexts read once; the new KV written)
 *   peak   = fp8_tflops if use_fp8_compute else bf16_tflops
 *   t_compute = flops / tp / (peak * 1e12 * compute_eff)
 *   t_mem     = bytes / tp / (mem_bw_gbs * 1e9 * memory_eff)
 *   t_ar      = 0 when tp == 1, else two ring all-reduces per layer of the
 *               activations (tokens * D values of 2 bytes):
 *               2 * L * (allreduce_latency_us * 1e-6
 *                        + 2 * (tp - 1) / tp * tokens * D * 2 / (link_gbs * 1e9))
 *   step_ms   = 1000 * (max(t_compute, t_mem) + t_ar) + step_overhead_ms
 *               + L * launch_us_per_layer / 1000
 * Prompt tokens that attend to cached KV are counted in prefill_pairs (FLOPs)
 * but their reads of that cache are not counted in bytes.
 *
 * Both kinds: a step with no tokens (prefill_tokens == 0 and decode_seqs == 0)
 * takes 0 ms.  For robustness tp < 1 counts as 1 and an efficiency outside
 * (0, 1] counts as 1; the scenario loader is expected to reject such values.
 *
 * Size: over 800 lines, one file: the roofline, the general roofline, the table's
 * rows and the hot path (cost_fast) share this file's private helpers (tp_of,
 * eff_of, general) and inline them.
 */
#include "llm/cost.h"
#include "engine/rowtab.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "core/scn.h"

/* Activations exchanged by the tensor-parallel all-reduces are bf16. */
#define ACT_BYTES 2.0

static int tp_of(const cost_hw *h)
{
    return h->tp >= 1 ? h->tp : 1;
}

static double eff_of(double e)
{
    return (e > 0 && e <= 1) ? e : 1.0;
}

/* Peak dense tensor throughput of one GPU, FLOP/s. */
static double gpu_peak_flops(const cost_hw *h)
{
    if (h->use_fp4_compute && h->gpu.fp4_tflops > 0) return h->gpu.fp4_tflops * 1e12;
    return (h->use_fp8_compute ? h->gpu.fp8_tflops : h->gpu.bf16_tflops) * 1e12;
}

static int pp_of(const cost_hw *h) { return h->pp >= 1 ? h->pp : 1; }
static int ep_of(const cost_hw *h) { return h->ep >= 1 ? h->ep : 1; }

int cost_hw_stages(const cost_hw *h) { return pp_of(h); }
int cost_hw_gpus(const cost_hw *h) { return tp_of(h) * pp_of(h); }

int cost_hw_plain(const cost_hw *h)
{
    int gpn = h->gpu.gpus_per_node > 0 ? h->gpu.gpus_per_node : 8;
    return h->model.experts <= 0 && h->model.kv_lora_rank <= 0 && pp_of(h) == 1 && ep_of(h) == 1 &&
           tp_of(h) <= gpn;
}

int cost_hw_set_weights(cost_hw *h, const char *weights)
{
    double wb = catalog_weight_bytes(weights);
    if (!(wb > 0)) return -1;
    h->weight_bytes = wb;
    h->use_fp8_compute = !strcmp(weights, "fp8") || !strcmp(weights, "int8");
    h->use_fp4_compute = !strcmp(weights, "fp4") && h->gpu.fp4_tflops > 0;
    snprintf(h->weights, sizeof h->weights, "%s", weights);
    return 0;
}

int cost_hw_note(const cost_hw *h, char *buf, size_t n)
{
    if (n) buf[0] = '\0';
    if (strcmp(h->weights, "fp4") != 0 || h->gpu.fp4_tflops > 0) return 0;
    snprintf(buf, n, "fp4 weights on %s, which has no FP4: dequantised to bf16 in the kernels "
             "(W4A16), computed at its bf16 %.4g TFLOP/s; bytes read at 0.5625 per weight",
             h->gpu.name, h->gpu.bf16_tflops);
    return 1;
}

double cost_distinct_experts(double e, double k, double t)
{
    if (!(e > 0) || !(k > 0) || !(t > 0)) return 0;
    if (k >= e) return e;
    /* E (1 - (1 - k/E)^T), without the cancellation of 1 - pow() for small T k/E. */
    return -e * expm1(t * log1p(-k / e));
}

void cost_stage_layers(const cost_hw *h, int s, int *first, int *n)
{
    int L = h->model.layers, pp = pp_of(h);
    int base = L / pp, extra = L % pp;
    *n = base + (s < extra);
    *first = s * base + (s < extra ? s : extra);
}

/* MoE layers among layers [FIRST, FIRST + N) of H's model. */
static int moe_layers_in(const cost_hw *h, int first, int n)
{
    if (h->model.experts <= 0) return 0;
    int lo = first > h->model.first_dense_layers ? first : h->model.first_dense_layers;
    return first + n > lo ? first + n - lo : 0;
}

double cost_stage_params(const cost_hw *h, int s)
{
    const model_spec *md = &h->model;
    if (pp_of(h) == 1) return md->params;
    catalog_counts c;
    catalog_model_counts(md, &c);
    double routed = (double) c.moe_layers * md->experts * c.expert;
    int first, n;
    cost_stage_layers(h, s, &first, &n);
    return (md->params - routed) * n / md->layers + (double) moe_layers_in(h, first, n) * md->experts * c.expert;
}

double cost_stage_kv_elems(const cost_hw *h, int s)
{
    const model_spec *md = &h->model;
    int first, n, tp = tp_of(h);
    cost_stage_layers(h, s, &first, &n);
    if (md->kv_lora_rank > 0) return (double) n * (md->kv_lora_rank + md->qk_rope_head_dim);
    int kvh = md->kv_heads >= tp ? md->kv_heads / tp : 1;
    return 2.0 * n * kvh * md->head_dim;
}

static int step_is_empty(const cost_step *s)
{
    return s->prefill_tokens <= 0 && s->decode_seqs <= 0;
}

/* The tokens S computes (prompt and decode) and the (query, key) pairs they
 * attend, with one test of decode_tokens_per_seq (the helpers' values). */
static inline void tokens_pairs(const cost_step *s, double *tokens, double *pairs)
{
    if (__builtin_expect(s->decode_tokens_per_seq <= 1, 1)) {
        *tokens = (double)s->prefill_tokens + (double)s->decode_seqs;
        *pairs = s->prefill_pairs + (double)s->kv_tokens;
    } else {
        *tokens = (double)s->prefill_tokens + (double)cost_step_decode_tokens(s);
        *pairs = s->prefill_pairs + cost_step_decode_pairs(s);
    }
}

/* FLOPs and bytes of the whole replica; the formulas at the top of the file. */
static void roofline_work(const cost_hw *h, const cost_step *s, double *flops,
                          double *bytes)
{
    const model_spec *md = &h->model;
    double tokens, pairs;
    tokens_pairs(s, &tokens, &pairs);
    double attn_per_pair = 4.0 * md->layers * md->heads * md->head_dim;
    double kv_per_token = 2.0 * md->layers * md->kv_heads * md->head_dim * h->kv_bytes;

    *flops = 2.0 * md->params * tokens + attn_per_pair * pairs;
    *bytes = md->params * h->weight_bytes
             + kv_per_token * ((double)s->kv_tokens + tokens);
}

/* ---- the general roofline (MoE, MLA, pp, ep) ---------------------------------------- */

/* The node of GPU G of a replica whose GPUs are numbered from a node boundary. */
static int node_of(int g, int gpn) { return g / gpn; }

/* The GPUs per node of H (0: 8). */
static int gpn_of(const cost_hw *h) { return h->gpu.gpus_per_node > 0 ? h->gpu.gpus_per_node : 8; }

/* One collective's latency (s) and link (bytes/s), within a node or across. */
static void link_of(const cost_hw *h, const cost_roofline *c, int across, double *lat, double *bw)
{
    *lat = c->allreduce_latency_us * 1e-6 + (across ? h->gpu.node_link_latency_us * 1e-6 : 0);
    *bw = (across ? h->gpu.node_link_gbs : h->gpu.link_gbs) * 1e9;
}

static cost_coll_fn coll_loader;   /* the calibrator's (cost_set_collective) */

void cost_set_collective(cost_coll_fn fn) { coll_loader = fn; }

double cost_coll_time(const cost_coll_prof *p, double bytes)
{
    int n = p->n;
    if (n < 1) return 0;
    if (bytes <= p->bytes[0]) return p->sec[0];
    if (n == 1) return p->sec[0] * bytes / p->bytes[0];
    if (bytes >= p->bytes[n - 1])
        return p->sec[n - 1] + (bytes - p->bytes[n - 1]) * (p->sec[n - 1] - p->sec[n - 2])
                                   / (p->bytes[n - 1] - p->bytes[n - 2]);
    int i = 1;
    while (p->bytes[i] < bytes) i++;
    double f = (log(bytes) - log(p->bytes[i - 1])) / (log(p->bytes[i]) - log(p->bytes[i - 1]));
    return p->sec[i - 1] + f * (p->sec[i] - p->sec[i - 1]);
}

/* Loads collective COLL over NGPUS GPUs of H's GPU into *P (emptied when none).
 * Returns 1 when loaded. */
static int load_one(sqlite3 *db, const cost_hw *h, const char *coll, int ngpus, cost_coll_prof *p)
{
    if (coll_loader(db, coll, h->gpu.name, ngpus, p) == 1 && p->n >= 1) return 1;
    memset(p, 0, sizeof *p);
    return 0;
}

int cost_roofline_collectives(cost_roofline *c, const cost_hw *h, sqlite3 *db)
{
    memset(&c->ar, 0, sizeof c->ar);
    memset(&c->a2a, 0, sizeof c->a2a);
    memset(&c->sr, 0, sizeof c->sr);
    memset(&c->sr_nodes, 0, sizeof c->sr_nodes);
    if (!coll_loader || !db || !h->have_hw) return 0;
    int n = 0;
    if (tp_of(h) >= 2) n += load_one(db, h, "allreduce", tp_of(h), &c->ar);
    if (ep_of(h) >= 2) n += load_one(db, h, "alltoall", ep_of(h), &c->a2a);
    if (pp_of(h) >= 2) {
        n += load_one(db, h, "send_recv", 2, &c->sr);
        n += load_one(db, h, "send_recv_nodes", 2, &c->sr_nodes);
    }
    return n;
}

int cost_roofline_measured(const cost_roofline *c)
{
    return c->ar.n > 0 || c->a2a.n > 0 || c->sr.n > 0 || c->sr_nodes.n > 0;
}

const char *cost_roofline_source(const cost_roofline *c)
{
    if (!c || !cost_roofline_measured(c)) return "datasheet";
    const cost_coll_prof *p[] = { &c->ar, &c->a2a, &c->sr, &c->sr_nodes };
    for (int i = 0; i < 4; i++)
        if (p[i]->n > 0 && strcmp(p[i]->source, "vidur") != 0) return "datasheet+nccl";
    return "datasheet+vidur";
}

/* One all-reduce of BYTES over tp GPUs (s): the measured profile when C has
 * one, else LAT + the ring's 2 (tp - 1) / tp of BYTES over BW. */
static double allreduce_s(const cost_roofline *c, int tp, double lat, double bw, double bytes)
{
    if (c->ar.n > 0) return cost_coll_time(&c->ar, bytes);
    return lat + 2.0 * (tp - 1) / tp * bytes / bw;
}

int cost_stage_moe_layers(const cost_hw *h, int s)
{
    int first, n;
    cost_stage_layers(h, s, &first, &n);
    return moe_layers_in(h, first, n);
}

int cost_step_microbatches(const cost_hw *h, const cost_step *s)
{
    int pp = pp_of(h);
    int64_t seqs = (int64_t) s->prefill_seqs + s->decode_seqs;
    int want = h->pp_microbatches >= 1 ? h->pp_microbatches : pp;
    return pp > 1 ? (int) (seqs < want ? (seqs > 1 ? seqs : 1) : want) : 1;
}

double cost_stage_alltoall_s(const cost_hw *h, const cost_roofline *c, int st, double act)
{
    int tp = tp_of(h), ep = ep_of(h), gpn = gpn_of(h);
    double lat, lbw;
    link_of(h, c, node_of(st * tp, gpn) != node_of(st * tp + tp - 1, gpn), &lat, &lbw);
    return c->a2a.n > 0 ? cost_coll_time(&c->a2a, act) : lat + act * (ep - 1) / ep / lbw;
}

double cost_stage_send_s(const cost_hw *h, const cost_roofline *c, int st, double act)
{
    int tp = tp_of(h), gpn = gpn_of(h);
    /* Each of the stage's GPUs sends the activations to its peer in the next. */
    int across = 0;
    for (int i = 0; i < tp; i++)
        across |= node_of(st * tp + i, gpn) != node_of((st + 1) * tp + i, gpn);
    double lat, lbw;
    link_of(h, c, across, &lat, &lbw);
    const cost_coll_prof *sp = across ? &c->sr_nodes : &c->sr;   /* a measured send/recv */
    return sp->n > 0 ? cost_coll_time(sp, act) : lat + act / lbw;
}

/* What the general roofline computes for a step: the first micro-batch's stage
 * and transfer times, and the replica's work (all micro-batches). */
static double general(const cost_hw *h, const cost_roofline *c, const cost_step *s, cost_breakdown *b,
                      double *flops_out, double *bytes_out)
{
    const model_spec *md = &h->model;
    int tp = tp_of(h), pp = pp_of(h), ep = ep_of(h), gpn = gpn_of(h);
    int D = h->dp > 1 && md->experts > 0 && pp == 1 ? h->dp : 1;   /* DP ranks sharing the experts */
    double tokens, pairs;
    tokens_pairs(s, &tokens, &pairs);
    int m = cost_step_microbatches(h, s);
    /* One micro-batch: the step's tokens, pairs and KV reads split evenly. */
    double T = tokens / m, P = pairs / m, KV = (double) s->kv_tokens / m;

    catalog_counts cc;
    catalog_model_counts(md, &cc);
    double E = md->experts, k = md->experts_per_token;
    double routed_all = (double) cc.moe_layers * E * cc.expert;
    double rest_layer = (md->params - routed_all) / md->layers;   /* weights outside the routed experts, per layer */
    double touched = md->experts > 0 ? cost_distinct_experts(E, k, T) : 0;
    double imb = ep > 1 && h->expert_imbalance > 1 ? h->expert_imbalance : 1;
    double peak = gpu_peak_flops(h) * eff_of(c->compute_eff);
    double bw = h->gpu.mem_bw_gbs * 1e9 * eff_of(c->memory_eff);
    double attn_layer = 4.0 * md->heads * md->head_dim;
    double act = T * md->hidden * ACT_BYTES;           /* one micro-batch's activations, bytes */
    double flops = 0, bytes = 0, slowest = 0, t_path = 0;
    double gpu_ms = 0, mem_ms = 0, ar_ms = 0, a2a_ms = 0, x_ms = 0, launch_ms = 0;

    for (int st = 0; st < pp; st++) {
        int first, n;
        cost_stage_layers(h, st, &first, &n);
        int nm = moe_layers_in(h, first, n);
        /* Compute: the dense part split over tp; the routed experts' too, their
         * busiest EP rank expert_imbalance times the mean. */
        double f_dense = 2.0 * rest_layer * n * T + attn_layer * n * P;
        double f_exp = 2.0 * nm * k * cc.expert * T;
        double tc = (f_dense + f_exp * imb) / tp / peak;
        /* Memory per GPU: its share of the stage's dense weights and of the touched
         * experts (E/ep experts on each EP rank, sliced tp/ep ways), and its KV. */
        double w = (rest_layer * n + nm * touched * cc.expert) * h->weight_bytes / tp;
        double kv = cost_stage_kv_elems(h, st) * h->kv_bytes * (KV + T);
        double tm = (w + kv) / bw;
        /* Collectives: within the stage's tp GPUs, across nodes when they span two. */
        double t_ar = 0, t_a2a = 0;
        if (D > 1) {
            /* Data-parallel attention ranks (pp = 1): this rank's attention and dense
             * layers over its tp GPUs; the group's Tg routed tokens over the experts
             * of all D x tp GPUs (E / (D tp) each with ep, a 1 / (D tp) slice of
             * every expert without); each MoE layer moves the mean rank's
             * activations (Tg / D tokens) by all-to-all dispatch and combine over the
             * ep = D x tp GPUs, or all-reduces the group's Tg tokens' over them. */
            int G = D * tp;
            double Tg = s->group_tokens > T ? s->group_tokens : T;
            double tg_touched = cost_distinct_experts(E, k, Tg);
            tc = (f_dense / tp + 2.0 * nm * k * cc.expert * Tg * imb / G) / peak;
            w = rest_layer * n * h->weight_bytes / tp + nm * tg_touched * cc.expert * h->weight_bytes / G;
            tm = (w + kv) / bw;
            double lat, lbw;
            link_of(h, c, G > gpn, &lat, &lbw);
            if (tp > 1) {
                double tlat, tbw;
                link_of(h, c, tp > gpn, &tlat, &tbw);
                t_ar = (2 * n - nm) * allreduce_s(c, tp, tlat, tbw, act);   /* attention, dense MLPs */
            }
            double gact = Tg * md->hidden * ACT_BYTES;
            if (ep > 1)
                t_a2a = 2.0 * nm * (c->a2a.n > 0 ? cost_coll_time(&c->a2a, gact / D)
                                                 : lat + gact / D * (ep - 1) / ep / lbw);
            else
                t_ar += nm * (lat + 2.0 * (G - 1) / G * gact / lbw);
        } else if (tp > 1) {
            double lat, lbw;
            link_of(h, c, node_of(st * tp, gpn) != node_of(st * tp + tp - 1, gpn), &lat, &lbw);
            double ar = allreduce_s(c, tp, lat, lbw, act);
            double a2a = ep > 1 ? cost_stage_alltoall_s(h, c, st, act) : 0;
            int n_ar = 2 * (n - nm) + nm * (ep > 1 ? (ep < tp ? 2 : 1) : 2);
            t_ar = n_ar * ar;
            t_a2a = ep > 1 ? 2.0 * nm * a2a : 0;
        }
        double t_launch = n * c->launch_us_per_layer * 1e-6;
        double t = (tc > tm ? tc : tm) + t_ar + t_a2a + t_launch;
        t_path += t;
        if (t > slowest) slowest = t;
        gpu_ms += (tc > tm ? tc : tm) * 1e3;
        mem_ms += (tm >= tc ? tm : 0) * 1e3;
        ar_ms += t_ar * 1e3;
        a2a_ms += t_a2a * 1e3;
        launch_ms += t_launch * 1e3;
        flops += (f_dense + f_exp) * m;
        bytes += (w + kv) * tp * m;
        if (st + 1 < pp) {
            double x = cost_stage_send_s(h, c, st, act);
            t_path += x;
            x_ms += x * 1e3;
            if (x > slowest) slowest = x;
        }
    }
    double pipe = (m - 1) * slowest;
    if (b) {
        *b = (cost_breakdown) { gpu_ms, mem_ms * 2 >= gpu_ms, ar_ms, a2a_ms, x_ms, pipe * 1e3, launch_ms,
                                c->step_overhead_ms, m };
    }
    if (flops_out) *flops_out = flops;
    if (bytes_out) *bytes_out = bytes;
    return (t_path + pipe) * 1e3 + c->step_overhead_ms;
}

/* FLOPs and bytes of the general roofline, without the times (any cost model's
 * MFU/MBU accounting: the efficiencies do not enter them). */
static void general_work(const cost_hw *h, const cost_step *s, double *flops, double *bytes)
{
    static const cost_roofline unit = { .compute_eff = 1, .memory_eff = 1 };
    general(h, &unit, s, NULL, flops, bytes);
}

double cost_roofline_breakdown(const cost_hw *h, const cost_roofline *c, const cost_step *s, cost_breakdown *b)
{
    if (b) memset(b, 0, sizeof *b);
    if (!h->have_hw || step_is_empty(s)) return 0;
    if (!cost_hw_plain(h)) return general(h, c, s, b, NULL, NULL);
    /* The plain formula (roofline_ms), in parts. */
    int tp = tp_of(h);
    double flops, bytes, t_ar = 0;
    double tokens = (double)s->prefill_tokens + (double)cost_step_decode_tokens(s);
    roofline_work(h, s, &flops, &bytes);
    double tc = flops / tp / (gpu_peak_flops(h) * eff_of(c->compute_eff));
    double tm = bytes / tp / (h->gpu.mem_bw_gbs * 1e9 * eff_of(c->memory_eff));
    if (tp > 1) {
        double msg = tokens * h->model.hidden * ACT_BYTES;
        t_ar = c->ar.n > 0 ? 2.0 * h->model.layers * cost_coll_time(&c->ar, msg)
               : 2.0 * h->model.layers
                     * (c->allreduce_latency_us * 1e-6 + 2.0 * (tp - 1) / tp * msg / (h->gpu.link_gbs * 1e9));
    }
    double launch = h->model.layers * c->launch_us_per_layer * 1e-3;
    if (b)
        *b = (cost_breakdown) { fmax(tc, tm) * 1e3, tm >= tc, t_ar * 1e3, 0, 0, 0, launch, c->step_overhead_ms, 1 };
    return (fmax(tc, tm) + t_ar) * 1e3 + c->step_overhead_ms + launch;
}

/* ---- linear ---------------------------------------------------------------- */

static double linear_ms(const cost_model *m, const cost_step *s)
{
    const cost_linear *c = m->state;
    return c->step_base_ms + c->prefill_ms_per_token * (double)s->prefill_tokens
           + c->decode_ms_per_seq * (double)cost_step_decode_tokens(s)
           + c->kv_ms_per_1k_tokens * (double)s->kv_tokens / 1000.0;
}

static int copy_state(cost_model *m, const void *params, size_t size)
{
    void *st = malloc(size);
    if (!st) return -1;
    memcpy(st, params, size);
    m->state = st;
    return 0;
}

static int linear_init(cost_model *m, const void *params) { return copy_state(m, params, sizeof(cost_linear)); }

static const scn_key LINEAR_KEYS[] = {
    { "step_base_ms", "", "linear: ms per step" },
    { "prefill_ms_per_token", "", "linear: ms per prompt token" },
    { "decode_ms_per_seq", "", "linear: ms per decoding sequence (per token it computes)" },
    { "kv_ms_per_1k_tokens", "0", "linear: ms per 1000 KV-cache tokens read" },
    { NULL, NULL, NULL },
};

static int linear_parse(cost_model *m, scn_ctx *x, const char *sec)
{
    cost_linear c = { 0 };
    const char *req[] = { "step_base_ms", "prefill_ms_per_token", "decode_ms_per_seq" };
    for (int i = 0; i < 3; i++)
        if (!scn_value(x, sec, req[i])) return scn_fail_sec(x, sec, req[i], "missing (required with cost = linear)");
    if (scn_num(x, sec, "step_base_ms", 0, 0, 0, 1e9, &c.step_base_ms)) return -1;
    if (scn_num(x, sec, "prefill_ms_per_token", 0, 0, 0, 1e9, &c.prefill_ms_per_token)) return -1;
    if (scn_num(x, sec, "decode_ms_per_seq", 0, 0, 0, 1e9, &c.decode_ms_per_seq)) return -1;
    if (scn_num(x, sec, "kv_ms_per_1k_tokens", 0, 0, 0, 1e9, &c.kv_ms_per_1k_tokens)) return -1;
    if (c.step_base_ms + c.prefill_ms_per_token + c.decode_ms_per_seq <= 0)
        return scn_fail_sec(x, sec, "step_base_ms", "a linear cost model must make steps take time");
    if (linear_init(m, &c)) return scn_fail_sec(x, sec, "cost", "out of memory");
    return 0;
}

/* ---- roofline ---------------------------------------------------------------- */

static double roofline_ms(const cost_model *m, const cost_step *s)
{
    const cost_hw *h = &m->hw;
    const cost_roofline *c = m->state;
    /* Without a GPU and a model there is nothing to compute from; the
     * scenario loader does not build such a model. */
    if (!h->have_hw) return 0;
    if (!cost_hw_plain(h)) return general(h, c, s, NULL, NULL, NULL);
    int tp = tp_of(h);
    double flops, bytes, t_compute, t_mem, t_ar = 0;
    double tokens = (double)s->prefill_tokens + (double)cost_step_decode_tokens(s);

    roofline_work(h, s, &flops, &bytes);
    t_compute = flops / tp / (gpu_peak_flops(h) * eff_of(c->compute_eff));
    t_mem = bytes / tp / (h->gpu.mem_bw_gbs * 1e9 * eff_of(c->memory_eff));
    if (tp > 1) {
        double msg = tokens * h->model.hidden * ACT_BYTES;
        t_ar = c->ar.n > 0 ? 2.0 * h->model.layers * cost_coll_time(&c->ar, msg)
               : 2.0 * h->model.layers
                     * (c->allreduce_latency_us * 1e-6
                        + 2.0 * (tp - 1) / tp * msg / (h->gpu.link_gbs * 1e9));
    }
    return (fmax(t_compute, t_mem) + t_ar) * 1e3 + c->step_overhead_ms
           + h->model.layers * c->launch_us_per_layer * 1e-3;
}

/* The roofline's framework overhead of a step: step_overhead_ms plus the kernel
 * launches of every layer (on the general roofline's path too: each stage
 * launches its own layers once), ms. */
static double roofline_overhead_ms(const cost_model *m, const cost_step *s)
{
    (void) s;
    const cost_roofline *c = m->state;
    if (!m->hw.have_hw) return 0;
    return c->step_overhead_ms + m->hw.model.layers * c->launch_us_per_layer * 1e-3;
}

static int roofline_init(cost_model *m, const void *params) { return copy_state(m, params, sizeof(cost_roofline)); }

static const scn_key ROOFLINE_KEYS[] = {
    { "compute_eff", "0.6", "roofline: share of peak FLOP/s reached" },
    { "memory_eff", "0.8", "roofline: share of peak bandwidth reached" },
    { "step_overhead_ms", "1.0", "roofline: fixed CPU/launch overhead per step" },
    { "allreduce_latency_us", "8", "roofline: fixed latency of one all-reduce" },
    { "launch_us_per_layer", "20", "roofline: fixed kernel-launch cost per layer per step" },
    { NULL, NULL, NULL },
};

const cost_roofline cost_roofline_defaults = { .compute_eff = 0.6, .memory_eff = 0.8, .step_overhead_ms = 1.0,
                                              .allreduce_latency_us = 8, .launch_us_per_layer = 20 };

static int roofline_parse(cost_model *m, scn_ctx *x, const char *sec)
{
    cost_roofline c = { 0 };
    /* No GPU runs at under a thousandth of its peak (1e-3); smaller values only
     * make step times that pass the clock's range. */
    if (scn_num(x, sec, "compute_eff", 0.6, 1e-3, 0, 1.0, &c.compute_eff)) return -1;
    if (scn_num(x, sec, "memory_eff", 0.8, 1e-3, 0, 1.0, &c.memory_eff)) return -1;
    if (scn_num(x, sec, "step_overhead_ms", 1.0, 0, 0, 1e9, &c.step_overhead_ms)) return -1;
    if (scn_num(x, sec, "allreduce_latency_us", 8, 0, 0, 1e9, &c.allreduce_latency_us)) return -1;
    if (scn_num(x, sec, "launch_us_per_layer", 20, 0, 0, 1e9, &c.launch_us_per_layer)) return -1;
    if (roofline_init(m, &c)) return scn_fail_sec(x, sec, "cost", "out of memory");
    return 0;
}

static void roofline_describe(const cost_model *m, cost_info *out)
{
    const cost_roofline *c = m->state;
    *out = (cost_info) { "roofline", 0, cost_roofline_source(c), NAN, 0, "", "" };
}

/* The roofline's collective profiles, when stored for its GPU and tp, ep, pp. */
static int roofline_build(cost_model *m, scn_ctx *x, const char *sec, sqlite3 *db)
{
    (void) x;
    (void) sec;
    cost_roofline_collectives(m->state, &m->hw, db);
    return 0;
}

/* ---- the table ------------------------------------------------------------------- */

/* The built-in rows; registered rows come after them (cost_register). */
static const cost_ops BUILTIN[] = {
    { "linear", "step_base_ms + prefill_ms_per_token x prompt tokens + decode_ms_per_seq x decode tokens + kv_ms_per_1k_tokens x KV tokens / 1000",
      LINEAR_KEYS, linear_parse, NULL, linear_init, linear_ms, NULL, NULL, NULL, NULL, NULL },
    { "roofline", "from the catalog's GPU and model: max(FLOPs, bytes) at the efficiencies, plus all-reduces and overhead",
      ROOFLINE_KEYS, roofline_parse, roofline_build, roofline_init, roofline_ms, NULL, roofline_describe, NULL,
      roofline_overhead_ms, NULL },
};
static rowtab table = ROWTAB_STRUCTS(BUILTIN, cost_ops);

int cost_row_count(void) { return rowtab_count(&table); }
const cost_ops *cost_row_at(int i) { return rowtab_at(&table, i); }
const cost_ops *cost_find(const char *name) { return rowtab_find(&table, name); }
int cost_row_index(const cost_ops *row) { return rowtab_index(&table, row); }
int cost_register(const cost_ops *row) { return row ? rowtab_add(&table, row) : -1; }

const cost_ops *cost_default(void)
{
    const cost_ops *a = cost_find("auto");
    return a ? a : &BUILTIN[1];
}

void cost_choices(char *buf, size_t n) { rowtab_choices(&table, buf, n); }

int cost_init(cost_model *m, const char *name, const void *params)
{
    const cost_ops *ops = cost_find(name);
    if (!ops || !ops->init) return -1;
    cost_free(m);
    m->ops = ops;
    if (ops->init(m, params) != 0) {
        m->ops = NULL;
        return -1;
    }
    return 0;
}

static const char *const SOURCES[] = { "datasheet", "scenario", "steps-csv", "vidur", "cuda", "cpu", "net", "observed",
                                       "engine-log", "learned", "other" };
#define NSOURCES ((int) (sizeof SOURCES / sizeof SOURCES[0]))

const char *cost_source_known(const char *source)
{
    for (int i = 0; i < NSOURCES - 1; i++)
        if (source && !strcmp(source, SOURCES[i])) return SOURCES[i];
    return SOURCES[NSOURCES - 1];
}

size_t cost_fmt_exact(char *buf, size_t n, double v)
{
    size_t at = strnlen(buf, n);
    if (at + 1 >= n) return at;
    char t[40];
    for (int p = 6; p <= 17; p++) {
        snprintf(t, sizeof t, "%.*g", p, v);
        if (strtod(t, NULL) == v) break;
    }
    snprintf(buf + at, n - at, "%s", t);
    return strnlen(buf, n);
}

/* Appends " NAME=V" (no blank first) of each of the N NAMES and VALUES to BUF. */
static void keys_exact(char *buf, size_t n, const char *const *names, const double *v, int k)
{
    buf[0] = '\0';
    for (int i = 0; i < k; i++) {
        size_t at = strnlen(buf, n);
        snprintf(buf + at, n - at, "%s%s=", i ? " " : "", names[i]);
        cost_fmt_exact(buf, n, v[i]);
    }
}

void cost_roofline_coeffs(const cost_roofline *c, char *buf, size_t n)
{
    static const char *const names[] = { "compute_eff", "memory_eff", "step_overhead_ms", "allreduce_latency_us",
                                         "launch_us_per_layer" };
    const double v[] = { c->compute_eff, c->memory_eff, c->step_overhead_ms, c->allreduce_latency_us,
                         c->launch_us_per_layer };
    keys_exact(buf, n, names, v, 5);
}

void cost_describe(const cost_model *m, cost_info *out)
{
    if (m->ops && m->ops->describe) m->ops->describe(m, out);
    else *out = (cost_info) { m->ops ? m->ops->name : "", 0, "scenario", NAN, 0, NULL, "" };
    if (!out->range) out->range = "";
    if (out->coeffs[0] || !m->ops || !m->state) return;
    if (m->ops->step_ms == roofline_ms) cost_roofline_coeffs(m->state, out->coeffs, sizeof out->coeffs);
    else if (m->ops->step_ms == linear_ms) {
        const cost_linear *c = m->state;
        static const char *const names[] = { "step_base_ms", "prefill_ms_per_token", "decode_ms_per_seq",
                                             "kv_ms_per_1k_tokens" };
        const double v[] = { c->step_base_ms, c->prefill_ms_per_token, c->decode_ms_per_seq, c->kv_ms_per_1k_tokens };
        keys_exact(out->coeffs, sizeof out->coeffs, names, v, 4);
    }
}

void cost_free(cost_model *m)
{
    if (m->ops && m->ops->free) m->ops->free(m);
    else free(m->state);
    m->state = NULL;
}

/* ---- what every model shares ------------------------------------------------------ */

double cost_step_ms(const cost_model *m, const cost_step *s)
{
    if (step_is_empty(s) || !m->ops)
        return 0;
    return m->ops->step_ms(m, s);
}

double cost_step_overhead_ms(const cost_model *m, const cost_step *s)
{
    if (step_is_empty(s) || !m->ops || !m->ops->overhead_ms)
        return 0;
    double o = m->ops->overhead_ms(m, s);
    return o > 0 ? o : 0;
}

void cost_step_work(const cost_model *m, const cost_step *s, double *flops, double *bytes)
{
    double f = 0, b = 0;
    if (m->hw.have_hw && !step_is_empty(s)) {
        if (cost_hw_plain(&m->hw)) roofline_work(&m->hw, s, &f, &b);
        else general_work(&m->hw, s, &f, &b);
    }
    if (flops)
        *flops = f;
    if (bytes)
        *bytes = b;
}

double cost_peak_flops(const cost_model *m)
{
    return m->hw.have_hw ? cost_hw_gpus(&m->hw) * gpu_peak_flops(&m->hw) : 0;
}

double cost_peak_bw(const cost_model *m)
{
    return m->hw.have_hw ? cost_hw_gpus(&m->hw) * m->hw.gpu.mem_bw_gbs * 1e9 : 0;
}

/* ---- the hot path: a model resolved once (cost_fast) -------------------------------- */

/* The larger of A and B as fmax() gives it (a NaN loses), without the call. */
static inline double max_of(double a, double b)
{
    return (a >= b || b != b) ? a : b;
}

void cost_fast_init(cost_fast *f, const cost_model *m)
{
    memset(f, 0, sizeof *f);
    f->m = m;
    const cost_model *r = NULL;           /* the roofline the step times come from, if any */
    if (m->ops && m->ops->step_ms == roofline_ms) r = m;
    else if (m->ops && m->ops->delegate) {
        const cost_model *d = m->ops->delegate(m);
        if (d && d->ops && d->ops->step_ms == roofline_ms) r = d;
        /* Another model (auto resolved to the learned one): called directly, on the
         * same hardware. */
        else if (d && d->ops && d->ops->step_ms && memcmp(&d->hw, &m->hw, sizeof m->hw) == 0) f->m = m = d;
    }
    const cost_hw *h = &m->hw;
    f->have_hw = h->have_hw;
    f->general = h->have_hw && !cost_hw_plain(h);
    if (!r && m->ops && m->ops->lm) f->lm = m->ops->lm(m);   /* the learned form, inline */
    if (f->general) {
        /* The general roofline is called as it is (its work per step is a loop over
         * the stages); the roofline's parameters when the step times are its. */
        if (r && r->hw.have_hw && memcmp(&r->hw, h, sizeof *h) == 0) f->rp = r->state;
        return;
    }
    if (h->have_hw) {
        /* Each constant is the same expression, in the same order, as in roofline_work. */
        const model_spec *md = &h->model;
        f->two_params = 2.0 * md->params;
        f->attn_per_pair = 4.0 * md->layers * md->heads * md->head_dim;
        f->weight_bytes = md->params * h->weight_bytes;
        f->kv_per_token = 2.0 * md->layers * md->kv_heads * md->head_dim * h->kv_bytes;
    }
    /* The roofline's own hardware must be the work's (it is: auto copies it). */
    if (!r || !r->hw.have_hw || !h->have_hw || memcmp(&r->hw, h, sizeof *h) != 0) return;
    const cost_roofline *c = r->state;
    if (c->ar.n > 0) return;   /* a measured all-reduce: the row's own step_ms */
    f->roofline = 1;
    f->tp = tp_of(h);
    f->tp_d = f->tp;
    f->peak = gpu_peak_flops(h) * eff_of(c->compute_eff);
    f->bw = h->gpu.mem_bw_gbs * 1e9 * eff_of(c->memory_eff);
    f->ar_layers = 2.0 * h->model.layers;
    f->ar_latency_s = c->allreduce_latency_us * 1e-6;
    f->ar_ring = 2.0 * (f->tp - 1) / f->tp;
    f->ar_link = h->gpu.link_gbs * 1e9;
    f->act_per_token = h->model.hidden;
    f->overhead_ms = c->step_overhead_ms;
    f->launch_ms = h->model.layers * c->launch_us_per_layer * 1e-3;
}

/* roofline_work and roofline_ms with F's constants (same operations, same order). */
static inline double fast_roofline(const cost_fast *f, const cost_step *s, double *flops, double *bytes)
{
    double tokens, pairs;
    tokens_pairs(s, &tokens, &pairs);
    double fl = f->two_params * tokens + f->attn_per_pair * pairs;
    double by = f->weight_bytes + f->kv_per_token * ((double)s->kv_tokens + tokens);
    double t_compute = fl / f->tp_d / f->peak;
    double t_mem = by / f->tp_d / f->bw;
    double t_ar = 0;
    if (f->tp > 1) {
        double msg = tokens * f->act_per_token * ACT_BYTES;
        t_ar = f->ar_layers * (f->ar_latency_s + f->ar_ring * msg / f->ar_link);
    }
    *flops = fl;
    *bytes = by;
    return (max_of(t_compute, t_mem) + t_ar) * 1e3 + f->overhead_ms + f->launch_ms;
}

double cost_fast_ms(const cost_fast *f, const cost_step *s)
{
    if (step_is_empty(s) || !f->m->ops) return 0;
    double fl, by;
    if (f->rp) return general(&f->m->hw, f->rp, s, NULL, NULL, NULL);
    if (f->roofline) return fast_roofline(f, s, &fl, &by);
    if (f->lm) return cost_lm_ms(f->lm, s);
    return f->m->ops->step_ms(f->m, s);
}

double cost_fast_overhead_ms(const cost_fast *f, const cost_step *s)
{
    if (step_is_empty(s) || !f->m->ops) return 0;
    if (f->roofline) return f->overhead_ms + f->launch_ms;   /* never above the step time */
    if (f->lm) return cost_lm_overhead_ms(f->lm, s);
    return cost_step_overhead_ms(f->m, s);
}

double cost_fast_ms_work(const cost_fast *f, const cost_step *s, double *flops, double *bytes)
{
    if (step_is_empty(s)) {
        *flops = *bytes = 0;
        return 0;
    }
    if (f->roofline) return fast_roofline(f, s, flops, bytes);
    if (f->general) {
        if (f->rp) return general(&f->m->hw, f->rp, s, NULL, flops, bytes);
        general_work(&f->m->hw, s, flops, bytes);
        return f->m->ops ? f->m->ops->step_ms(f->m, s) : 0;
    }
    if (f->have_hw) {
        double tokens, pairs;
        tokens_pairs(s, &tokens, &pairs);
        *flops = f->two_params * tokens + f->attn_per_pair * pairs;
        *bytes = f->weight_bytes + f->kv_per_token * ((double)s->kv_tokens + tokens);
    } else
        *flops = *bytes = 0;
    if (f->lm) return cost_lm_ms(f->lm, s);
    return f->m->ops ? f->m->ops->step_ms(f->m, s) : 0;
}
