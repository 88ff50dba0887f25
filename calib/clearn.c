/* clearn.c -- the learned step model (see clearn.h): its evaluation, the
 * coefficients of a (GPU, engine) class from the trained table, and the
 * `learned` row of the cost-model table. */
#include "clearn.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/scn.h"

#define ACT_BYTES 2.0      /* activations exchanged by collectives are bf16 */
#define GRAPH_MAX_SEQS 512 /* decode batches engines capture as CUDA graphs (vLLM's largest) */

const char *const clearn_names[LP_N] = { "compute_eff", "t_half", "memory_eff", "overlap", "launch_us",
                                         "graph_us", "fixed_ms", "seq_us", "link_eff", "ar_lat_us",
                                         "attn_eff", "lowp_eff", "kv_eff", "gqa_reuse" };
const char *const clearn_group_names[LG_N] = { "vendor", "link", "gpu", "engine" };

static double logistic(double x) { return 1.0 / (1.0 + exp(-x)); }

void clearn_physical(const double *th, clearn_coef *o)
{
    o->compute_eff = logistic(th[LP_COMPUTE]);
    o->t_half = exp(th[LP_THALF]);
    o->memory_eff = logistic(th[LP_MEMORY]);
    o->overlap = logistic(th[LP_OVERLAP]);
    o->launch_us = exp(th[LP_LAUNCH]);
    o->graph_us = exp(th[LP_GRAPH]);
    o->fixed_ms = exp(th[LP_FIXED]);
    o->seq_us = exp(th[LP_SEQ]);
    o->link_eff = logistic(th[LP_LINK]);
    o->ar_lat_us = exp(th[LP_ARLAT]);
    o->attn_eff = logistic(th[LP_ATTN]);
    o->lowp_eff = logistic(th[LP_LOWP]);
    o->kv_eff = logistic(th[LP_KV]);
    o->gqa_reuse = logistic(th[LP_GQA]);
}

/* How many times the decode kernel reads each KV head: (heads / kv_heads)^(1 - reuse);
 * 1 without grouped-query attention (and with MLA's one latent). */
static double gqa_reads(const model_spec *m, const clearn_coef *c)
{
    if (m->kv_lora_rank > 0 || m->kv_heads <= 0 || m->heads <= m->kv_heads) return 1;
    return pow((double) m->heads / m->kv_heads, 1.0 - c->gqa_reuse);
}

/* ---- classes ----------------------------------------------------------------------- */

static const struct { const char *gpu, *vendor, *link; } KNOWN[] = {
    { "a100", "nvidia", "nvlink" },   { "h100", "nvidia", "nvlink" },   { "h200", "nvidia", "nvlink" },
    { "gh200", "nvidia", "nvlink" },  { "b200", "nvidia", "nvlink" },   { "gb200", "nvidia", "nvlink" },
    { "h20", "nvidia", "nvlink" },    { "l40s", "nvidia", "pcie" },     { "l4", "nvidia", "pcie" },
    { "rtx-4090", "nvidia", "pcie" }, { "rtx-pro-6000", "nvidia", "pcie" },
    { "mi250", "amd", "if" },         { "mi300x", "amd", "if" },        { "mi325x", "amd", "if" },
    { "gaudi2", "habana", "network" }, { "max-1550", "intel", "xelink" },
};
#define NKNOWN ((int) (sizeof KNOWN / sizeof KNOWN[0]))

static int known(const gpu_spec *g)
{
    for (int i = 0; i < NKNOWN; i++)
        if (!strcasecmp(g->name, KNOWN[i].gpu)) return i;
    return -1;
}

const char *clearn_vendor(const gpu_spec *g)
{
    int i = known(g);
    if (i >= 0) return KNOWN[i].vendor;
    if (!strncasecmp(g->name, "mi", 2)) return "amd";
    if (!strncasecmp(g->name, "gaudi", 5)) return "habana";
    if (!strncasecmp(g->name, "max", 3) || !strncasecmp(g->name, "pvc", 3)) return "intel";
    return "nvidia";
}

const char *clearn_link_class(const gpu_spec *g)
{
    int i = known(g);
    if (i >= 0) return KNOWN[i].link;
    const char *v = clearn_vendor(g);
    if (!strcmp(v, "amd")) return "if";
    if (!strcmp(v, "habana")) return "network";
    if (!strcmp(v, "intel")) return "xelink";
    return g->link_gbs > 100 ? "nvlink" : "pcie";
}

/* The level of group GROUP called NAME in T, or NULL. */
static const clearn_level *level_of(const clearn_table *t, int group, const char *name)
{
    for (int i = 0; i < t->nlevels; i++)
        if (t->levels[i].group == group && !strcasecmp(t->levels[i].name, name)) return &t->levels[i];
    return NULL;
}

void clearn_prior_for(const clearn_table *t, const gpu_spec *g, const char *engine, clearn_prior *out)
{
    if (!t) t = &clearn_trained;
    if (!engine || !engine[0]) engine = llm_engine_default();
    memset(out, 0, sizeof *out);
    memcpy(out->th, t->global, sizeof out->th);
    const char *names[LG_N] = { clearn_vendor(g), clearn_link_class(g), g->name, engine };
    for (int k = 0; k < LG_N; k++) {
        const clearn_level *l = level_of(t, k, names[k]);
        if (!l) continue;
        for (int j = 0; j < LP_N; j++) out->th[j] += l->off[j];
        if (k == LG_GPU) out->gpu_measured = l->rows > 0;
        if (k == LG_ENGINE) out->engine_measured = l->rows > 0;
    }
    clearn_physical(out->th, &out->c);
    out->extrapolated = !out->gpu_measured || !out->engine_measured;
    out->mape = NAN;
    for (int i = 0; i < t->ncv; i++)
        if (!strcasecmp(t->cv[i].gpu, g->name) && !strcasecmp(t->cv[i].engine, engine)) out->mape = t->cv[i].mape;
    if (!isfinite(out->mape)) {
        /* No measurement of this class: the error of a held-out GPU or engine. */
        double e = 0;
        if (!out->gpu_measured) e = fmax(e, t->mape_gpu);
        if (!out->engine_measured) e = fmax(e, t->mape_engine);
        if (out->gpu_measured && out->engine_measured) e = t->mape_model;
        out->mape = e;
    }
    if (out->extrapolated)
        snprintf(out->note, sizeof out->note, "%s%s%s%s%s", !out->gpu_measured ? "no measurement of " : "",
                 !out->gpu_measured ? g->name : "", !out->gpu_measured ? ": its vendor's and link class's efficiencies" : "",
                 !out->gpu_measured && !out->engine_measured ? "; " : "",
                 !out->engine_measured ? "no measurement of this engine: the cross-engine mean" : "");
}

/* ---- evaluation --------------------------------------------------------------------- */

static int tp_of(const cost_hw *h) { return h->tp >= 1 ? h->tp : 1; }
static int ep_of(const cost_hw *h) { return h->ep >= 1 ? h->ep : 1; }

static double peak_of(const cost_hw *h, const clearn_coef *c)
{
    if (h->use_fp4_compute && h->gpu.fp4_tflops > 0) return h->gpu.fp4_tflops * 1e12 * c->lowp_eff;
    if (h->use_fp8_compute) return h->gpu.fp8_tflops * 1e12 * c->lowp_eff;
    return h->gpu.bf16_tflops * 1e12;
}

double clearn_step_ms(const cost_hw *h, const clearn_coef *c, const cost_step *s, clearn_parts *p)
{
    if (p) memset(p, 0, sizeof *p);
    if (!h->have_hw || (s->prefill_tokens <= 0 && s->decode_seqs <= 0)) return 0;
    const model_spec *md = &h->model;
    int tp = tp_of(h), ep = ep_of(h), pp = cost_hw_stages(h);
    int gpn = h->gpu.gpus_per_node > 0 ? h->gpu.gpus_per_node : 8;
    double dtok = (double) cost_step_decode_tokens(s);
    double tokens = (double) s->prefill_tokens + dtok;
    double pairs = s->prefill_pairs + cost_step_decode_pairs(s);
    int m = cost_step_microbatches(h, s);
    double T = tokens / m, P = pairs / m, KV = (double) s->kv_tokens / m;
    catalog_counts cc;
    catalog_model_counts(md, &cc);
    double E = md->experts, k = md->experts_per_token;
    double rest_layer = (md->params - (double) cc.moe_layers * E * cc.expert) / md->layers;
    double touched = md->experts > 0 ? cost_distinct_experts(E, k, T) : 0;
    double imb = ep > 1 && h->expert_imbalance > 1 ? h->expert_imbalance : 1;
    double peak = peak_of(h, c) * c->compute_eff;
    double bw = h->gpu.mem_bw_gbs * 1e9 * c->memory_eff;
    double gemm = (T + c->t_half) / T;               /* 1 / (T / (T + t_half)) */
    double act = T * md->hidden * ACT_BYTES;
    int graph = s->prefill_tokens <= 0 && s->decode_seqs <= GRAPH_MAX_SEQS;
    double launch_us = graph ? c->graph_us : c->launch_us;
    double t_path = 0, slowest = 0;
    for (int st = 0; st < pp; st++) {
        int first, n;
        cost_stage_layers(h, st, &first, &n);
        int nm = cost_stage_moe_layers(h, st);
        double f_lin = 2.0 * rest_layer * n * T + 2.0 * nm * k * cc.expert * T * imb;
        double f_att = 4.0 * md->heads * md->head_dim * n * P;
        double tc = (f_lin * gemm + f_att / c->attn_eff) / tp / peak;
        double w = (rest_layer * n + nm * touched * cc.expert) * h->weight_bytes / tp;
        double kvb = cost_stage_kv_elems(h, st) * h->kv_bytes;
        double tm = (w + kvb * T) / bw + kvb * KV * gqa_reads(md, c) / (bw * c->kv_eff);
        double gpu = fmax(tc, tm) + c->overlap * fmin(tc, tm);
        double t_ar = 0, t_a2a = 0;
        if (tp > 1) {
            int across = st * tp / gpn != (st * tp + tp - 1) / gpn;
            double lat = c->ar_lat_us * 1e-6 + (across ? h->gpu.node_link_latency_us * 1e-6 : 0);
            double lbw = (across ? h->gpu.node_link_gbs : h->gpu.link_gbs) * 1e9 * c->link_eff;
            double ar = lat + 2.0 * (tp - 1) / tp * act / lbw;
            int n_ar = 2 * (n - nm) + nm * (ep > 1 ? (ep < tp ? 2 : 1) : 2);
            t_ar = n_ar * ar;
            if (ep > 1) t_a2a = 2.0 * nm * (lat + act * (ep - 1) / ep / lbw);
        }
        double t_launch = n * launch_us * 1e-6;
        double t = gpu + t_ar + t_a2a + t_launch;
        t_path += t;
        if (t > slowest) slowest = t;
        if (st + 1 < pp) {
            double x = h->gpu.link_gbs > 0 ? c->ar_lat_us * 1e-6 + act / (h->gpu.link_gbs * 1e9 * c->link_eff) : 0;
            t_path += x;
            if (x > slowest) slowest = x;
        }
        if (p) {
            p->compute += (tc >= tm ? tc : 0) * 1e3;
            p->memory += (tm > tc ? tm : 0) * 1e3;
            p->overlap_ms += c->overlap * fmin(tc, tm) * 1e3;
            p->allreduce += t_ar * 1e3;
            p->alltoall += t_a2a * 1e3;
            p->launch += t_launch * 1e3;
        }
    }
    double pipe = (m - 1) * slowest;
    double cpu = c->fixed_ms + c->seq_us * 1e-3 * ((double) s->prefill_seqs + s->decode_seqs);
    if (p) {
        p->pipeline = pipe * 1e3;
        p->cpu = cpu;
    }
    return (t_path + pipe) * 1e3 + cpu;
}

double clearn_floor_ms(const cost_hw *h, const cost_step *s)
{
    if (!h->have_hw || (s->prefill_tokens <= 0 && s->decode_seqs <= 0)) return 0;
    cost_model m = { .hw = *h };
    double flops, bytes;
    cost_step_work(&m, s, &flops, &bytes);
    double peak = cost_peak_flops(&m), bw = cost_peak_bw(&m);
    /* Weight bytes only: the weights (the touched experts) every step reads once. */
    cost_step one = { .decode_seqs = 1, .kv_tokens = 0 };
    double f1, wbytes;
    cost_step_work(&m, &one, &f1, &wbytes);
    double kv1 = catalog_kv_elems_per_token(&h->model) * h->kv_bytes;   /* the one token's KV write */
    wbytes -= kv1 * cost_hw_stages(h) > 0 ? kv1 : 0;
    return fmax(flops / peak, fmax(wbytes, 0) / bw) * 1e3;
}

/* ---- the `learned` row ------------------------------------------------------------- */

/* State: the class's coefficients and, for a plain replica (cost_hw_plain), the
 * constants of its step time computed once. */
typedef struct learned_state {
    clearn_prior prior;
    char engine[16];
    int plain;
    cost_lm lm;        /* the step time's constants (plain replicas): cost.h's cost_lm_ms */
} learned_state;

static void learned_prepare(learned_state *L, const cost_hw *h)
{
    clearn_prior_for(NULL, &h->gpu, h->engine, &L->prior);
    snprintf(L->engine, sizeof L->engine, "%s", h->engine[0] ? h->engine : llm_engine_default());
    L->plain = h->have_hw && cost_hw_plain(h);
    if (!L->plain) return;
    const clearn_coef *c = &L->prior.c;
    const model_spec *md = &h->model;
    double tp = tp_of(h), peak = peak_of(h, c) * c->compute_eff;
    cost_lm *lm = &L->lm;
    lm->a_lin = 2.0 * md->params / tp / peak;
    lm->a_half = lm->a_lin * c->t_half;
    lm->a_att = 4.0 * md->layers * md->heads * md->head_dim / tp / peak / c->attn_eff;
    double bw = h->gpu.mem_bw_gbs * 1e9 * c->memory_eff;
    lm->w_s = md->params * h->weight_bytes / tp / bw;
    lm->kv_s = cost_stage_kv_elems(h, 0) * h->kv_bytes / bw;
    lm->kvr_s = lm->kv_s * gqa_reads(md, c) / c->kv_eff;
    lm->ov = c->overlap;
    if (tp > 1) {
        lm->ar_n = 2.0 * md->layers;
        lm->ar_lat = c->ar_lat_us * 1e-6;
        lm->ar_tok = 2.0 * (tp - 1) / tp * md->hidden * ACT_BYTES / (h->gpu.link_gbs * 1e9 * c->link_eff);
    }
    lm->launch_s = md->layers * c->launch_us * 1e-6;
    lm->graph_s = md->layers * c->graph_us * 1e-6;
    lm->fixed_ms = c->fixed_ms;
    lm->seq_ms = c->seq_us * 1e-3;
    lm->graph_max = GRAPH_MAX_SEQS;
}

static double learned_ms(const cost_model *m, const cost_step *s)
{
    const learned_state *L = m->state;
    if (!L->plain) return clearn_step_ms(&m->hw, &L->prior.c, s, NULL);
    if (s->prefill_tokens <= 0 && s->decode_seqs <= 0) return 0;
    return cost_lm_ms(&L->lm, s);
}

/* The row's lm hook (cost.h): its constants on a plain replica. */
static const cost_lm *learned_lm(const cost_model *m)
{
    const learned_state *L = m->state;
    return L && L->plain ? &L->lm : NULL;
}

static int learned_parse(cost_model *m, scn_ctx *x, const char *sec)
{
    m->state = calloc(1, sizeof(learned_state));
    return m->state ? 0 : scn_fail_sec(x, sec, "cost", "out of memory");
}

static int learned_build(cost_model *m, scn_ctx *x, const char *sec, sqlite3 *db)
{
    (void) x;
    (void) sec;
    (void) db;
    learned_prepare(m->state, &m->hw);
    return 0;
}

static int learned_init(cost_model *m, const void *params)
{
    (void) params;
    learned_state *L = calloc(1, sizeof *L);
    if (!L) return -1;
    learned_prepare(L, &m->hw);
    m->state = L;
    return 0;
}

/* "learned engine=E compute_eff=... " into BUF: the class and its coefficients. */
static void learned_coeffs(const learned_state *L, char *buf, size_t n)
{
    snprintf(buf, n, "cost=learned engine=%s", L->engine);
    const double *v = &L->prior.c.compute_eff;
    for (int j = 0; j < LP_N; j++) {
        size_t at = strnlen(buf, n);
        snprintf(buf + at, n - at, " %s=", clearn_names[j]);
        cost_fmt_exact(buf, n, v[j]);
    }
}

static void learned_describe(const cost_model *m, cost_info *out)
{
    const learned_state *L = m->state;
    *out = (cost_info) { "learned", 0, "learned", L->prior.mape, L->prior.extrapolated,
                         L->prior.extrapolated ? "extrapolated" : "measured", "" };
    learned_coeffs(L, out->coeffs, sizeof out->coeffs);
}

/* The row's overhead_ms hook (cost.h): the step's kernel launches, fixed cost and
 * per-sequence CPU work; the rest is model compute. */
static double learned_overhead_ms(const cost_model *m, const cost_step *s)
{
    const learned_state *L = m->state;
    if (L->plain) {   /* learned_ms's own terms, without the GPU's */
        if (s->prefill_tokens <= 0 && s->decode_seqs <= 0) return 0;
        return cost_lm_overhead_ms(&L->lm, s);
    }
    clearn_parts p = { 0 };
    clearn_step_ms(&m->hw, &L->prior.c, s, &p);
    return p.launch + p.cpu;
}

static const cost_ops LEARNED_ROW = {
    "learned", "physical FLOPs and bytes at efficiencies learned per GPU and engine from public measurements "
    "(latsim calib train; docs/learned.md)",
    NULL, learned_parse, learned_build, learned_init, learned_ms, NULL, learned_describe, NULL, learned_overhead_ms,
    learned_lm,
};

const clearn_prior *clearn_model_prior(const cost_model *m) { return &((const learned_state *) m->state)->prior; }

int clearn_register(void)
{
    clearn_enc_register();   /* encoders priced by the same coefficients (clearn_enc.c) */
    return cost_register(&LEARNED_ROW);
}
