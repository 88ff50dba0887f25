/* cfitted.c -- the fitted step-time model (see cfitted.h for its terms): its
 * features, evaluation, TP range and loading; fitting it is cfitpost.c's. */
#include "cfitted.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_matrix.h>
#include <gsl/gsl_vector.h>

#include "engine/errmsg.h"
#include "nnls.h"

const char *const cfitted_term_names[CF_NTERMS] = {
    "fixed_ms", "weights_ms_per_gb", "prefill_ms_per_tflop", "attn_ms_per_tflop", "kv_ms_per_gb",
    "decode_ms_per_tflop", "allreduce_ms_per_gb", "allreduce_ms_per_hop", "launch_ms_per_layer",
    "seq_ms",
};

/* The (query, key) pairs the attention term prices: the prompt's, plus those a
 * decoding sequence computing t > 1 tokens attends beyond the one token whose
 * context read is the KV term (cfitted.h). */
static inline double attn_pairs(const cost_step *s)
{
    if (cost_step_per_seq(s) == 1) return s->prefill_pairs;
    return s->prefill_pairs + (cost_step_decode_pairs(s) - (double)s->kv_tokens);
}

/* The MoE terms (cfitted.h): the parameters a token multiplies by (the active
 * ones), and those outside the routed experts and in one routed expert's layer
 * slice (moe_layers x expert), for the weights a step of T tokens reads. */
static void moe_params(const model_spec *m, double *active, double *rest, double *per_expert)
{
    catalog_counts c;
    catalog_model_counts(m, &c);
    *active = c.active;
    *per_expert = (double)c.moe_layers * c.expert;
    *rest = m->params - *per_expert * m->experts;
}

/* Parameters a step of TOKENS tokens of an MoE model reads: REST (outside the
 * routed experts) plus PER_EXPERT x the expected distinct experts of E, K each,
 * the tokens touch. */
static double weights_read(double rest, double per_expert, double e, double k, double tokens)
{
    return rest + per_expert * cost_distinct_experts(e, k, tokens);
}

/* KV elements per token on one GPU with MLA: the latent and RoPE key of every
 * layer (whole on every TP rank). */
static double mla_elems(const model_spec *m)
{
    return (double)m->layers * (m->kv_lora_rank + m->qk_rope_head_dim);
}

void cfitted_features(const model_spec *m, double wb, double kvb, int tp, const cost_step *s,
                      double *f)
{
    double t = tp >= 1 ? tp : 1, L = m->layers, P = m->params;
    double kvh = fmax(1.0, (double)m->kv_heads / t);
    double tokens = (double)s->prefill_tokens + (double)cost_step_decode_tokens(s);
    int phases = (s->prefill_tokens > 0) + (s->decode_seqs > 0);
    double Pw = P, Pf = P;    /* weights read, weights multiplied per token */
    if (m->experts > 0) {
        double rest, per_expert;
        moe_params(m, &Pf, &rest, &per_expert);
        Pw = weights_read(rest, per_expert, m->experts, m->experts_per_token, tokens);
    }
    f[CF_FIXED] = 1;
    f[CF_WEIGHTS] = Pw * wb / t / 1e9;
    f[CF_PREFILL] = 2 * Pf * (double)s->prefill_tokens / t / 1e12;
    f[CF_ATTN] = 4 * L * m->heads * m->head_dim * attn_pairs(s) / t / 1e12;
    if (m->kv_lora_rank > 0)
        f[CF_KV] = (double)s->kv_tokens * mla_elems(m) * kvb / 1e9;
    else
        f[CF_KV] = (double)s->kv_tokens * 2 * L * kvh * m->head_dim * kvb / 1e9;
    f[CF_DECODE] = 2 * Pf * (double)cost_step_decode_tokens(s) / t / 1e12;
    f[CF_AR_BYTES] = 2 * L * 2 * (t - 1) / t * tokens * m->hidden * 2 / 1e9;
    f[CF_AR_HOP] = 2 * L * (t - 1);
    f[CF_LAUNCH] = L * phases;
    f[CF_SEQ] = (double)s->prefill_seqs + (double)s->decode_seqs;
}

double cfitted_step_ms(const cfitted *m, int tp, const cost_step *s, double *parts)
{
    double f[CF_NTERMS], sum = 0;
    if (s->prefill_tokens <= 0 && s->decode_seqs <= 0) {
        if (parts)
            memset(parts, 0, CF_NTERMS * sizeof *parts);
        return 0;
    }
    cfitted_features(&m->model, m->weight_bytes, m->kv_bytes, tp, s, f);
    for (int k = 0; k < CF_NTERMS; k++) {
        double v = m->c[k] * f[k];
        if (parts)
            parts[k] = v;
        sum += v;
    }
    return sum;
}

double cfitted_staged_ms(const cfitted *m, const cost_hw *h, const cost_roofline *rc, const double *r,
                         const cost_step *s, double *parts)
{
    double path[CF_ST_NPARTS] = { 0 };
    if (parts)
        memset(parts, 0, CF_ST_NPARTS * sizeof *parts);
    if (s->prefill_tokens <= 0 && s->decode_seqs <= 0)
        return 0;
    const model_spec *md = &m->model;
    double t = h->tp >= 1 ? h->tp : 1, L = md->layers;
    int pp = cost_hw_stages(h), ep = h->ep >= 1 ? h->ep : 1, tp = (int)t;
    double kvh = fmax(1.0, (double)md->kv_heads / t);
    int mb = cost_step_microbatches(h, s);
    double tokens = (double)s->prefill_tokens + (double)cost_step_decode_tokens(s);
    /* One micro-batch: the step's tokens, pairs and KV reads split evenly. */
    double T = tokens / mb, pre = (double)s->prefill_tokens / mb, dec = (double)cost_step_decode_tokens(s) / mb;
    double pairs = attn_pairs(s) / mb, kv = (double)s->kv_tokens / mb;
    int phases = (s->prefill_tokens > 0) + (s->decode_seqs > 0);
    catalog_counts cc;
    catalog_model_counts(md, &cc);
    double E = md->experts, k = md->experts_per_token, expert = md->experts > 0 ? cc.expert : 0;
    double rest = md->params - (double)cc.moe_layers * E * expert;   /* outside the routed experts */
    double touched = md->experts > 0 ? cost_distinct_experts(E, k, T) : 0;
    double imb = ep > 1 && h->expert_imbalance > 1 ? h->expert_imbalance : 1;
    double act = T * md->hidden * 2;   /* one micro-batch's activations (bf16), bytes */
    double slowest = 0, sum = 0;
    for (int st = 0; st < pp; st++) {
        int first, n;
        cost_stage_layers(h, st, &first, &n);
        int nm = cost_stage_moe_layers(h, st);
        double pf = rest * n / L + nm * k * expert * imb;   /* FLOP parameters per token */
        double pw = rest * n / L + nm * touched * expert;   /* parameters read */
        double n_ar = 2.0 * (n - nm) + nm * (ep > 1 ? (ep < tp ? 2 : 1) : 2);
        double f[CF_NTERMS] = { 0 };
        f[CF_WEIGHTS] = pw * m->weight_bytes / t / 1e9;
        f[CF_PREFILL] = 2 * pf * pre / t / 1e12;
        f[CF_ATTN] = 4 * n * md->heads * md->head_dim * pairs / t / 1e12;
        if (md->kv_lora_rank > 0)
            f[CF_KV] = kv * n * (md->kv_lora_rank + md->qk_rope_head_dim) * m->kv_bytes / 1e9;
        else
            f[CF_KV] = kv * 2 * n * kvh * md->head_dim * m->kv_bytes / 1e9;
        f[CF_DECODE] = 2 * pf * dec / t / 1e12;
        f[CF_AR_BYTES] = n_ar * 2 * (t - 1) / t * T * md->hidden * 2 / 1e9;
        f[CF_AR_HOP] = n_ar * (t - 1);
        f[CF_LAUNCH] = (double)n * phases;
        double stage = 0;
        for (int j = CF_WEIGHTS; j < CF_SEQ; j++) {
            double v = m->c[j] * f[j] * r[j];
            path[j] += v;
            stage += v;
        }
        if (ep > 1 && tp > 1 && nm > 0) {
            double a = 2.0 * nm * cost_stage_alltoall_s(h, rc, st, act) * 1e3;
            path[CF_ST_ALLTOALL] += a;
            stage += a;
        }
        sum += stage;
        if (stage > slowest) slowest = stage;
        if (st + 1 < pp) {
            double x = cost_stage_send_s(h, rc, st, act) * 1e3;
            path[CF_ST_TRANSFER] += x;
            sum += x;
            if (x > slowest) slowest = x;
        }
    }
    path[CF_ST_PIPELINE] = (mb - 1) * slowest;
    path[CF_FIXED] = m->c[CF_FIXED] * r[CF_FIXED];
    path[CF_SEQ] = m->c[CF_SEQ] * ((double)s->prefill_seqs + (double)s->decode_seqs) * r[CF_SEQ];
    sum += path[CF_ST_PIPELINE] + path[CF_FIXED] + path[CF_SEQ];
    if (parts)
        memcpy(parts, path, sizeof path);
    return sum;
}

/* Each line below is the matching line of cfitted_features with its step-independent
 * leading factors (left-associated, so evaluated first there too) taken from E. */
void cfitted_eval_init(const cfitted *m, int tp, const double *r, cfitted_eval *e)
{
    const model_spec *md = &m->model;
    double t = tp >= 1 ? tp : 1, L = md->layers, P = md->params;
    memset(e, 0, sizeof *e);
    memcpy(e->c, m->c, sizeof e->c);
    memcpy(e->r, r, sizeof e->r);
    e->t = t;
    e->moe = md->experts > 0;
    e->mla = md->kv_lora_rank > 0;
    e->wb = m->weight_bytes;
    e->experts = md->experts;
    e->k = md->experts_per_token;
    e->mla_elems = e->mla ? mla_elems(md) : 0;
    if (e->moe)   /* the FLOP terms' P: the active parameters */
        moe_params(md, &P, &e->rest, &e->per_expert);
    e->k_prefill = 2 * P;
    e->k_attn = 4 * L * md->heads * md->head_dim;
    e->layers = L;
    e->kvh = fmax(1.0, (double)md->kv_heads / t);
    e->head_dim = md->head_dim;
    e->kv_bytes = m->kv_bytes;
    e->k_ar = 2 * L * 2 * (t - 1) / t;
    e->hidden = md->hidden;
    double fw = md->params * m->weight_bytes / t / 1e9, fhop = 2 * L * (t - 1);
    double sum = 0;
    sum += m->c[CF_FIXED] * 1 * r[CF_FIXED];
    if (!e->moe)   /* an MoE model's weights term depends on the step's tokens: per step */
        sum += m->c[CF_WEIGHTS] * fw * r[CF_WEIGHTS];
    e->head = sum;
    e->hop = m->c[CF_AR_HOP] * fhop * r[CF_AR_HOP];
    for (int ph = 0; ph < 3; ph++)
        e->launch[ph] = m->c[CF_LAUNCH] * (L * ph) * r[CF_LAUNCH];
}

double cfitted_eval_ms(const cfitted_eval *e, const cost_step *s)
{
    const double *c = e->c, *r = e->r;
    double t = e->t, pt = (double)s->prefill_tokens, ds = (double)cost_step_decode_tokens(s);
    double tokens = pt + ds;
    int phases = (s->prefill_tokens > 0) + (s->decode_seqs > 0);
    double sum = e->head;
    if (e->moe)
        sum += c[CF_WEIGHTS] * (weights_read(e->rest, e->per_expert, e->experts, e->k, tokens) * e->wb / t / 1e9) * r[CF_WEIGHTS];
    sum += c[CF_PREFILL] * (e->k_prefill * pt / t / 1e12) * r[CF_PREFILL];
    sum += c[CF_ATTN] * (e->k_attn * attn_pairs(s) / t / 1e12) * r[CF_ATTN];
    if (e->mla)
        sum += c[CF_KV] * ((double)s->kv_tokens * e->mla_elems * e->kv_bytes / 1e9) * r[CF_KV];
    else
        sum += c[CF_KV] * ((double)s->kv_tokens * 2 * e->layers * e->kvh * e->head_dim * e->kv_bytes / 1e9) * r[CF_KV];
    sum += c[CF_DECODE] * (e->k_prefill * ds / t / 1e12) * r[CF_DECODE];
    sum += c[CF_AR_BYTES] * (e->k_ar * tokens * e->hidden * 2 / 1e9) * r[CF_AR_BYTES];
    sum += e->hop;
    sum += e->launch[phases];
    sum += c[CF_SEQ] * ((double)s->prefill_seqs + (double)s->decode_seqs) * r[CF_SEQ];
    return sum;
}

static int aliased_tp(const cfitted *m)
{
    for (int i = 0; i < m->fit.ncoef; i++)
        if (strcmp(m->fit.coef[i].name, "allreduce_ms_per_hop") == 0 ||
            strcmp(m->fit.coef[i].name, "weights_ms_per_gb") == 0)
            if (strcmp(m->fit.coef[i].status, "aliased") == 0)
                return 1;
    return 0;
}

/* 1 when fit M is a posterior (cfitpost.h): no term aliased or at the
 * non-negativity bound, every one fitted, at its prior or at its floor. */
static int posterior_fit(const cfitted *m)
{
    for (int i = 0; i < m->fit.ncoef; i++)
        if (!strcmp(m->fit.coef[i].status, "aliased") || !strcmp(m->fit.coef[i].status, "bound"))
            return 0;
    return m->fit.ncoef > 0;
}

int cfitted_tp_carried(const cfitted *m, int tp)
{
    int lo, hi, k = 0;
    if (cdb_tp_listed(m->fit.tps, tp, &lo, &hi) || (tp > lo && tp < hi) || aliased_tp(m))
        return 0;
    for (int i = 0; i < m->fit.ncoef; i++)
        if ((!strcmp(m->fit.coef[i].name, "allreduce_ms_per_gb") || !strcmp(m->fit.coef[i].name, "allreduce_ms_per_hop")) &&
            !strcmp(m->fit.coef[i].status, "prior"))
            k++;
    /* A posterior measured at one degree has nothing else to go by; measured at
     * several, it is interpolated, extrapolated or refused by distance. */
    return k == 2 || (posterior_fit(m) && lo == hi);
}

cf_range cfitted_tp_range(const cfitted *m, int tp, char *why, size_t n)
{
    int lo, hi;
    if (cdb_tp_listed(m->fit.tps, tp, &lo, &hi))
        return CF_MEASURED;
    if (cfitted_tp_carried(m, tp)) {
        errmsg_set(why, n, "carried from tp %s to tp %d: its all-reduce terms %s (the learned link "
                   "model), its other terms per GPU", m->fit.tps, tp,
                   posterior_fit(m) ? "a posterior toward physical priors" : "held at physical priors");
        return CF_EXTRAPOLATED;
    }
    if (lo == hi || aliased_tp(m)) {
        errmsg_set(why, n, "model %lld was fitted on tp %s only: its TP-dependent terms are not "
                   "separable, so it cannot predict tp %d", (long long)m->fit.id, m->fit.tps, tp);
        return CF_REFUSED;
    }
    if (tp > lo && tp < hi)
        return CF_INTERPOLATED;
    if (2 * tp >= lo && tp <= 2 * hi) {
        errmsg_set(why, n, "tp %d is outside the measured tp %s (extrapolated)", tp, m->fit.tps);
        return CF_EXTRAPOLATED;
    }
    errmsg_set(why, n, "tp %d is far outside the measured tp %s of model %lld (more than 2x): "
               "refusing to extrapolate", tp, m->fit.tps, (long long)m->fit.id);
    return CF_REFUSED;
}

int cfitted_step_in_range(const cfitted *m, const cost_step *s)
{
    double ctx = s->decode_seqs > 0 ? (double)s->kv_tokens / s->decode_seqs : 0;
    return (double)s->prefill_tokens <= 2 * fmax(m->fit.tok_max, 1) &&
           (double)s->decode_seqs <= 2 * fmax(m->fit.seq_max, 1) &&
           ctx <= 2 * fmax(m->fit.ctx_max, 1);
}

int cfitted_load(sqlite3 *db, int64_t id, cfitted *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    int s = cdb_load_fit(db, id, &out->fit, err, errlen);
    if (s != 0)
        return s;
    if (strcmp(out->fit.kind, "fitted") != 0) {
        errmsg_set(err, errlen, "calibrated model %lld is of kind %s, not fitted", (long long)id,
                   out->fit.kind);
        return 1;
    }
    char e2[512];
    if (catalog_model(db, out->fit.model, &out->model, e2, sizeof e2) != 0) {
        errmsg_set(err, errlen, "calibrated model %lld: %s", (long long)id, e2);
        return -1;
    }
    out->weight_bytes = catalog_weight_bytes(out->fit.weights);
    out->kv_bytes = 2;
    for (int i = 0; i < out->fit.ncoef; i++)
        for (int k = 0; k < CF_NTERMS; k++)
            if (strcmp(out->fit.coef[i].name, cfitted_term_names[k]) == 0)
                out->c[k] = out->fit.coef[i].value;
    return 0;
}
