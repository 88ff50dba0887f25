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
 */
#include "llm/cost.h"

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
    return (h->use_fp8_compute ? h->gpu.fp8_tflops : h->gpu.bf16_tflops) * 1e12;
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
    int tp = tp_of(h);
    double flops, bytes, t_compute, t_mem, t_ar = 0;
    double tokens = (double)s->prefill_tokens + (double)cost_step_decode_tokens(s);

    roofline_work(h, s, &flops, &bytes);
    t_compute = flops / tp / (gpu_peak_flops(h) * eff_of(c->compute_eff));
    t_mem = bytes / tp / (h->gpu.mem_bw_gbs * 1e9 * eff_of(c->memory_eff));
    if (tp > 1) {
        double msg = tokens * h->model.hidden * ACT_BYTES;
        t_ar = 2.0 * h->model.layers
               * (c->allreduce_latency_us * 1e-6
                  + 2.0 * (tp - 1) / tp * msg / (h->gpu.link_gbs * 1e9));
    }
    return (fmax(t_compute, t_mem) + t_ar) * 1e3 + c->step_overhead_ms
           + h->model.layers * c->launch_us_per_layer * 1e-3;
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

const cost_roofline cost_roofline_defaults = { 0.6, 0.8, 1.0, 8, 20 };

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
    (void) m;
    *out = (cost_info) { "roofline", 0, "datasheet", NAN, 0 };
}

/* ---- the table ------------------------------------------------------------------- */

/* The built-in rows; registered rows come after them (cost_register). */
static const cost_ops BUILTIN[] = {
    { "linear", "step_base_ms + prefill_ms_per_token x prompt tokens + decode_ms_per_seq x decode tokens + kv_ms_per_1k_tokens x KV tokens / 1000",
      LINEAR_KEYS, linear_parse, NULL, linear_init, linear_ms, NULL, NULL, NULL },
    { "roofline", "from the catalog's GPU and model: max(FLOPs, bytes) at the efficiencies, plus all-reduces and overhead",
      ROOFLINE_KEYS, roofline_parse, NULL, roofline_init, roofline_ms, NULL, roofline_describe, NULL },
};
#define NBUILTIN ((int) (sizeof BUILTIN / sizeof BUILTIN[0]))

#define MAX_EXTRA 16
static const cost_ops *extra[MAX_EXTRA];   /* registered rows, in order */
static int nextra;

int cost_row_count(void) { return NBUILTIN + nextra; }

const cost_ops *cost_row_at(int i)
{
    if (i < 0 || i >= NBUILTIN + nextra) return NULL;
    return i < NBUILTIN ? &BUILTIN[i] : extra[i - NBUILTIN];
}

const cost_ops *cost_find(const char *name)
{
    for (int i = 0; i < NBUILTIN + nextra; i++)
        if (!strcasecmp(cost_row_at(i)->name, name)) return cost_row_at(i);
    return NULL;
}

int cost_row_index(const cost_ops *row)
{
    for (int i = 0; i < NBUILTIN + nextra; i++)
        if (cost_row_at(i) == row) return i;
    return -1;
}

int cost_register(const cost_ops *row)
{
    const cost_ops *had = cost_find(row->name);
    if (had) return had == row ? 0 : -1;
    if (nextra == MAX_EXTRA) return -1;
    extra[nextra++] = row;
    return 0;
}

const cost_ops *cost_default(void)
{
    const cost_ops *a = cost_find("auto");
    return a ? a : &BUILTIN[1];
}

void cost_choices(char *buf, size_t n)
{
    size_t len = 0;
    buf[0] = '\0';
    for (int i = 0; i < NBUILTIN + nextra && len < n; i++)
        len += (size_t) snprintf(buf + len, n - len, "%s%s", i ? "|" : "", cost_row_at(i)->name);
}

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

static const char *const SOURCES[] = { "datasheet", "scenario", "steps-csv", "vidur", "cuda", "cpu", "net", "other" };
#define NSOURCES ((int) (sizeof SOURCES / sizeof SOURCES[0]))

const char *cost_source_known(const char *source)
{
    for (int i = 0; i < NSOURCES - 1; i++)
        if (source && !strcmp(source, SOURCES[i])) return SOURCES[i];
    return SOURCES[NSOURCES - 1];
}

void cost_describe(const cost_model *m, cost_info *out)
{
    if (m->ops && m->ops->describe) m->ops->describe(m, out);
    else *out = (cost_info) { m->ops ? m->ops->name : "", 0, "scenario", NAN, 0 };
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

void cost_step_work(const cost_model *m, const cost_step *s, double *flops, double *bytes)
{
    double f = 0, b = 0;
    if (m->hw.have_hw && !step_is_empty(s))
        roofline_work(&m->hw, s, &f, &b);
    if (flops)
        *flops = f;
    if (bytes)
        *bytes = b;
}

double cost_peak_flops(const cost_model *m)
{
    return m->hw.have_hw ? tp_of(&m->hw) * gpu_peak_flops(&m->hw) : 0;
}

double cost_peak_bw(const cost_model *m)
{
    return m->hw.have_hw ? tp_of(&m->hw) * m->hw.gpu.mem_bw_gbs * 1e9 : 0;
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
    }
    const cost_hw *h = &m->hw;
    f->have_hw = h->have_hw;
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
    if (f->roofline) return fast_roofline(f, s, &fl, &by);
    return f->m->ops->step_ms(f->m, s);
}

double cost_fast_ms_work(const cost_fast *f, const cost_step *s, double *flops, double *bytes)
{
    if (step_is_empty(s)) {
        *flops = *bytes = 0;
        return 0;
    }
    if (f->roofline) return fast_roofline(f, s, flops, bytes);
    if (f->have_hw) {
        double tokens, pairs;
        tokens_pairs(s, &tokens, &pairs);
        *flops = f->two_params * tokens + f->attn_per_pair * pairs;
        *bytes = f->weight_bytes + f->kv_per_token * ((double)s->kv_tokens + tokens);
    } else
        *flops = *bytes = 0;
    return f->m->ops ? f->m->ops->step_ms(f->m, s) : 0;
}
