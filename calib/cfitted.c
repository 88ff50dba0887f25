/* cfitted.c -- the fitted step-time model (see cfitted.h for its terms).
 *
 * A stored measurement becomes a cost_step the way the simulator describes a
 * step: a prefill row of B prompts of T tokens is prefill_tokens = B T,
 * prefill_pairs = B T (T + 1) / 2, prefill_seqs = B; a decode row of B sequences
 * with T tokens of context is decode_seqs = B, kv_tokens = B (T + 1).
 */
#include "cfitted.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_matrix.h>
#include <gsl/gsl_vector.h>

#include "engine/errmsg.h"
#include "cfitpost.h"
#include "cprior.h"
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

static void step_of_row(int prefill, double batch, double tokens, double context, cost_step *s)
{
    memset(s, 0, sizeof *s);
    if (prefill) {
        s->prefill_tokens = (int64_t)(batch * tokens);
        s->prefill_pairs = batch * tokens * (tokens + 1) / 2;
        s->prefill_seqs = (int32_t)batch;
    } else {
        s->decode_seqs = (int32_t)batch;
        s->kv_tokens = (int64_t)(batch * (context + 1));
    }
}

typedef struct row {
    int64_t id;              /* measurement id */
    int prefill;             /* 1 prefill, 0 decode */
    int tp;                  /* TP degree */
    double batch, tokens, context, ms;  /* as stored */
} row;

/* "FILE:LINE" of measurement ID (the file and line it was imported from), else
 * "measurement ID", into BUF; returns BUF. */
static const char *meas_where(sqlite3 *db, int64_t id, char *buf, size_t n)
{
    char f[256] = "";
    long line = 0;
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, "SELECT file, line FROM calib_meas WHERE id = ?", -1, &st, NULL) == SQLITE_OK) {
        sqlite3_bind_int64(st, 1, id);
        if (sqlite3_step(st) == SQLITE_ROW) {
            const unsigned char *t = sqlite3_column_text(st, 0);
            errmsg_field(t ? (const char *)t : "", f, sizeof f);
            line = sqlite3_column_int(st, 1);
        }
    }
    sqlite3_finalize(st);
    if (f[0] && line > 0)
        snprintf(buf, n, "%s:%ld", f, line);
    else
        snprintf(buf, n, "measurement %lld", (long long)id);
    return buf;
}

/* "fit: N of the M steps ... outlier(s): FILE:LINE (phase, step_ms X, Rx the Y ms
 * a robust fit to the other steps predicts), ..." into ERR, at most 4 listed. */
static void outlier_message(sqlite3 *db, const row *rows, size_t n, const int *flag,
                            const double *pred, int nout, const char *model, const char *gpu,
                            char *err, size_t errlen)
{
    char list[1400] = "";
    size_t len = 0;
    int shown = 0;
    for (size_t i = 0; i < n && len < sizeof list; i++) {
        if (!flag[i])
            continue;
        if (shown == 4) {
            len += (size_t)snprintf(list + len, sizeof list - len, ", and %d more", nout - shown);
            break;
        }
        char where[320], ratio[96];
        if (pred[i] > 0)
            snprintf(ratio, sizeof ratio, "%.3gx the %.4g ms", rows[i].ms / pred[i], pred[i]);
        else
            snprintf(ratio, sizeof ratio, "where no positive time");
        len += (size_t)snprintf(list + len, sizeof list - len, "%s%s (%s, step_ms %.4g, %s a robust "
                                "fit to the other steps predicts)", shown ? ", " : "",
                                meas_where(db, rows[i].id, where, sizeof where),
                                rows[i].prefill ? "prefill" : "decode", rows[i].ms, ratio);
        shown++;
    }
    errmsg_set(err, errlen, "fit: %d of the %zu steps of %s on %s %s no fit of the step model "
               "explains: %s; correct or remove %s and import again into a fresh database "
               "(nothing stored)", nout, n, model, gpu, nout == 1 ? "is an outlier" : "are outliers",
               list, nout == 1 ? "it" : "them");
}

int cfitted_fit(sqlite3 *db, const char *model, const char *gpu, const char *weights,
                const char *tool, size_t folds, int prior, cfitted *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    char e2[512];
    if (catalog_model(db, model, &out->model, e2, sizeof e2) != 0) {
        errmsg_set(err, errlen, "fit: %s", e2);
        return -1;
    }
    if (!weights || !weights[0])
        weights = out->model.weights[0] ? out->model.weights : "bf16";
    out->weight_bytes = catalog_weight_bytes(weights);
    out->kv_bytes = 2;
    if (out->weight_bytes <= 0) {
        errmsg_set(err, errlen, "fit: unknown weights '%s' (valid: bf16, fp16, fp8, int8, int4)",
                   weights);
        return -1;
    }
    gpu_spec g;
    if (catalog_gpu(db, gpu, &g, e2, sizeof e2) != 0) {
        errmsg_set(err, errlen, "fit: %s", e2);
        return -1;
    }
    sqlite3_stmt *st = NULL;
    row *rows = NULL;
    size_t n = 0, cap = 0;
    if (sqlite3_prepare_v2(db, "SELECT id, what, tp, batch, tokens, context, time_ms FROM calib_meas"
                           " WHERE what IN ('step_prefill', 'step_decode') AND model = ? AND gpu = ?"
                           " AND weights = ? ORDER BY id", -1, &st, NULL) != SQLITE_OK) {
        errmsg_set(err, errlen, "fit: %s", sqlite3_errmsg(db));
        return -1;
    }
    sqlite3_bind_text(st, 1, out->model.name, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, g.name, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, weights, -1, SQLITE_STATIC);
    int s;
    while ((s = sqlite3_step(st)) == SQLITE_ROW) {
        if (n == cap) {
            cap = cap ? 2 * cap : 64;
            row *r2 = realloc(rows, cap * sizeof *rows);
            if (!r2) {
                sqlite3_finalize(st);
                free(rows);
                errmsg_set(err, errlen, "out of memory");
                return -1;
            }
            rows = r2;
        }
        row *r = &rows[n++];
        r->id = sqlite3_column_int64(st, 0);
        r->prefill = strcmp((const char *)sqlite3_column_text(st, 1), "step_prefill") == 0;
        r->tp = sqlite3_column_int(st, 2);
        r->batch = sqlite3_column_double(st, 3);
        r->tokens = sqlite3_column_double(st, 4);
        r->context = sqlite3_column_double(st, 5);
        r->ms = sqlite3_column_double(st, 6);
    }
    sqlite3_finalize(st);
    if (s != SQLITE_DONE) {
        free(rows);
        errmsg_set(err, errlen, "fit: %s", sqlite3_errmsg(db));
        return -1;
    }
    if (n == 0) {
        errmsg_set(err, errlen, "fit: no whole-step measurements of %s on %s (weights %s): import "
                   "some with latsim calib import steps FILE.csv", out->model.name, g.name, weights);
        return -1;
    }
    /* A database written before the importers checked ranges may hold any number. */
    for (size_t i = 0; i < n; i++) {
        const row *q = &rows[i];
        const char *bad = !(q->ms >= CDB_MS_MIN && q->ms <= CDB_MS_MAX) ? "step_ms"
                          : !(q->batch >= 1 && q->batch <= 1e6) ? "batch_size"
                          : !(q->tokens >= 0 && q->tokens <= 1e7 && q->context >= 0 && q->context <= 1e7)
                          ? "tokens" : NULL;
        if (bad) {
            char where[320];
            errmsg_set(err, errlen, "fit: %s: %s %.4g is out of range (step_ms %g to %g ms, batch_size 1 "
                       "to 1e6, tokens 1 to 1e7): correct it and import again into a fresh database "
                       "(nothing stored)", meas_where(db, q->id, where, sizeof where), bad,
                       !strcmp(bad, "step_ms") ? q->ms : !strcmp(bad, "batch_size") ? q->batch
                       : q->prefill ? q->tokens : q->context, CDB_MS_MIN, CDB_MS_MAX);
            free(rows);
            return -1;
        }
    }
    int rc = -1;
    int *flag = NULL;         /* outliers */
    double *pred = NULL;      /* the robust fit's predictions */
    double *sigma = NULL;     /* the posterior's relative noise of each step */
    gsl_matrix *X = gsl_matrix_alloc(n, CF_NTERMS);
    gsl_vector *y = gsl_vector_alloc(n), *w = gsl_vector_alloc(n);
    int64_t *ids = malloc(n * sizeof *ids);
    if (!X || !y || !w || !ids) {
        errmsg_set(err, errlen, "out of memory");
        goto done;
    }
    int has_pre = 0, has_dec = 0, tpseen[1025] = { 0 };
    for (size_t i = 0; i < n; i++) {
        cost_step cs;
        double f[CF_NTERMS];
        step_of_row(rows[i].prefill, rows[i].batch, rows[i].tokens, rows[i].context, &cs);
        cfitted_features(&out->model, out->weight_bytes, out->kv_bytes, rows[i].tp, &cs, f);
        for (int k = 0; k < CF_NTERMS; k++)
            gsl_matrix_set(X, i, (size_t)k, f[k]);
        gsl_vector_set(y, i, rows[i].ms);
        gsl_vector_set(w, i, 1.0 / (rows[i].ms * rows[i].ms));
        ids[i] = rows[i].id;
        has_pre |= rows[i].prefill;
        has_dec |= !rows[i].prefill;
        if (rows[i].tp >= 1 && rows[i].tp <= 1024)
            tpseen[rows[i].tp] = 1;
        if (rows[i].prefill)
            out->fit.tok_max = fmax(out->fit.tok_max, rows[i].batch * rows[i].tokens);
        else {
            out->fit.seq_max = fmax(out->fit.seq_max, rows[i].batch);
            out->fit.ctx_max = fmax(out->fit.ctx_max, rows[i].context);
        }
    }
    nnls_result r;
    if (nnls_fit(X, y, w, NULL, &r, err, errlen) != 0)
        goto done;
    /* Two or more TP degrees, but a TP term the data cannot separate (e.g. tp 2
     * and 8: fixed, 1/t and t - 1 from two degrees): it is held at its physical
     * prior (cfitted.h) rather than at 0, so that a degree between them is
     * predicted (interpolated) instead of refused; the others are refitted to
     * what it leaves. */
    double held[CF_NTERMS] = { 0 };
    int nheld = 0, ntp = 0, tp0 = 0;
    for (int t = 1; t <= 1024; t++) {
        ntp += tpseen[t];
        if (tpseen[t] && !tp0) tp0 = t;
    }
    if (ntp >= 2 && !prior) {
        double prior[CF_NTERMS] = { 0 };
        prior[CF_AR_BYTES] = g.link_gbs > 0 ? 1000 / g.link_gbs : 0;
        prior[CF_AR_HOP] = cost_roofline_defaults.allreduce_latency_us * 1e-3;
        prior[CF_LAUNCH] = cost_roofline_defaults.launch_us_per_layer * 1e-3;
        int usep[CF_NTERMS];
        /* The launch term only with an all-reduce term (else it stays as it was: 0, aliased). */
        int tp_aliased = r.status[CF_AR_BYTES] == NNLS_ALIASED || r.status[CF_AR_HOP] == NNLS_ALIASED;
        for (int k = 0; k < CF_NTERMS; k++) {
            usep[k] = 1;
            if (tp_aliased && (k == CF_AR_BYTES || k == CF_AR_HOP || k == CF_LAUNCH) && r.status[k] == NNLS_ALIASED &&
                prior[k] > 0) {
                held[k] = prior[k];
                usep[k] = 0;
                nheld++;
            }
        }
        if (nheld) {
            for (size_t i = 0; i < n; i++) {
                double v = gsl_vector_get(y, i);
                for (int k = 0; k < CF_NTERMS; k++)
                    v -= held[k] * gsl_matrix_get(X, i, (size_t)k);
                gsl_vector_set(y, i, v);
            }
            if (nnls_fit(X, y, w, usep, &r, err, errlen) != 0)
                goto done;
        }
    }
    if (prior ? n < 2 : n <= r.kept) {
        if (prior) {
            errmsg_set(err, errlen, "fit: one measurement of %s on %s: need at least 2 to cross-validate the fit",
                       out->model.name, g.name);
            goto done;
        }
        errmsg_set(err, errlen, "fit: %zu measurements of %s on %s for %zu coefficients: need at "
                   "least %zu (more step sizes, batch sizes or TP degrees)", n, out->model.name,
                   g.name, r.kept, r.kept + 1);
        goto done;
    }
    /* Shapes: a phase whose steps all have one size cannot separate its per-token
     * cost from the fixed cost, whatever the rank of the whole design says. */
    int pre_shapes = 0, dec_shapes = 0;
    for (size_t i = 0; i < n; i++) {
        int seen = 0;
        for (size_t j = 0; j < i && !seen; j++)
            seen = rows[j].prefill == rows[i].prefill && rows[j].batch == rows[i].batch &&
                   rows[j].tokens == rows[i].tokens && rows[j].context == rows[i].context;
        if (!seen) {
            pre_shapes += rows[i].prefill;
            dec_shapes += !rows[i].prefill;
        }
    }
    if (!prior && has_pre && (pre_shapes < 2 ||
                    (r.status[CF_PREFILL] == NNLS_ALIASED && r.status[CF_ATTN] == NNLS_ALIASED))) {
        errmsg_set(err, errlen, "fit: singular design: the prefill steps of %s on %s all have the "
                   "same size, so their per-token cost cannot be separated from the fixed cost "
                   "(measure several prompt lengths or batch sizes)", out->model.name, g.name);
        goto done;
    }
    if (!prior && has_dec && (dec_shapes < 2 || (r.status[CF_KV] == NNLS_ALIASED &&
                                       r.status[CF_DECODE] == NNLS_ALIASED &&
                                       r.status[CF_SEQ] == NNLS_ALIASED))) {
        errmsg_set(err, errlen, "fit: singular design: the decode steps of %s on %s all have the "
                   "same batch and context, so their per-sequence cost cannot be separated from "
                   "the fixed cost (measure several batch sizes or contexts)", out->model.name,
                   g.name);
        goto done;
    }
    int use[CF_NTERMS];
    for (int k = 0; k < CF_NTERMS; k++)
        use[k] = r.status[k] != NNLS_ALIASED;
    /* A measurement no fit can explain (a typo, a unit error, a broken run) would
     * drag every coefficient with it (one step of 1e300 ms made them all 0): it is
     * named and the fit refused. */
    flag = calloc(n, sizeof *flag);
    pred = calloc(n, sizeof *pred);
    if (!flag || !pred) {
        errmsg_set(err, errlen, "out of memory");
        goto done;
    }
    int nout = nnls_outliers(X, y, w, use, flag, pred, err, errlen);
    if (nout < 0)
        goto done;
    if (nout > 0) {
        outlier_message(db, rows, n, flag, pred, nout, out->model.name, g.name, err, errlen);
        goto done;
    }
    size_t k = folds < 2 ? 5 : folds;
    if (k > n)
        k = n;
    cdb_fit *f = &out->fit;
    /* The posterior (cfitpost.h): the learned default's terms as the prior, the
     * step's relative noise from the data-only fit's residuals. */
    cfpost post;
    double pr[CF_NTERMS], width[CF_NTERMS], lo[CF_NTERMS], sph[2] = { 0, 0 };
    if (prior) {
        cprior_terms(&g, NULL, &out->model, tp0 ? tp0 : 1, weights, pr, width);
        cprior_floor(&g, weights, lo);
        /* Each phase's relative noise: its share of the data-only fit's residual
         * sum over its share of the degrees of freedom. */
        double ss[2] = { 0, 0 }, cnt[2] = { 0, 0 };
        for (size_t i = 0; i < n; i++) {
            double e = nnls_predict(X, i, r.b) / gsl_vector_get(y, i) - 1;
            ss[rows[i].prefill] += e * e;
            cnt[rows[i].prefill]++;
        }
        double dof = n > r.kept ? (double)(n - r.kept) / (double)n : 1.0 / (double)n;
        sigma = malloc(n * sizeof *sigma);
        if (!sigma) {
            errmsg_set(err, errlen, "out of memory");
            goto done;
        }
        for (int ph = 0; ph < 2; ph++)
            sph[ph] = cnt[ph] > 0 ? fmax(sqrt(ss[ph] / fmax(cnt[ph] * dof, 1)), CFPOST_SIGMA_MIN) : CFPOST_SIGMA_MIN;
        for (size_t i = 0; i < n; i++) sigma[i] = sph[rows[i].prefill];
        if (cfpost_fit(X, y, NULL, pr, width, lo, sigma, &post, err, errlen) != 0)
            goto done;
        f->mape = cfpost_cv_mape(X, y, pr, width, lo, sigma, k, err, errlen);
        r.mape = post.mape;
        double mean = 0, ssr = 0, sst = 0;
        for (size_t i = 0; i < n; i++) mean += gsl_vector_get(y, i) / (double)n;
        for (size_t i = 0; i < n; i++) {
            double yi = gsl_vector_get(y, i), e = yi - nnls_predict(X, i, post.c);
            ssr += e * e;
            sst += (yi - mean) * (yi - mean);
        }
        r.r2 = sst > 0 ? 1 - ssr / sst : 1;
    } else
        f->mape = nnls_cv_mape(X, y, w, use, k, err, errlen);
    f->folds = (int)k;
    /* Never a model whose error makes it useless (cdb.h). */
    if (!(r.mape <= CDB_MAPE_LIMIT) || !CDB_MAPE_USABLE(f->mape)) {
        int in = !(r.mape <= CDB_MAPE_LIMIT);
        char e2[256] = "";
        if (!in && !isfinite(f->mape))
            snprintf(e2, sizeof e2, "%s", err);
        errmsg_set(err, errlen, "fit: the %s error of the step model of %s on %s is %s%.3g %% "
                   "(%zu steps), above the %.0f %% limit of a usable model%s%s: nothing stored "
                   "(check the measurements: latsim calib export)", in ? "fit (MAPE)" :
                   isfinite(f->mape) ? "cross-validated (MAPE)" : "cross-validated", out->model.name,
                   g.name, in || isfinite(f->mape) ? "" : "unknown, not ", in ? r.mape : f->mape, n,
                   CDB_MAPE_LIMIT, e2[0] ? ": " : "", e2);
        goto done;
    }
    snprintf(f->kind, sizeof f->kind, "fitted");
    snprintf(f->model, sizeof f->model, "%s", out->model.name);
    snprintf(f->gpu, sizeof f->gpu, "%s", g.name);
    snprintf(f->weights, sizeof f->weights, "%s", weights);
    snprintf(f->source, sizeof f->source, "steps-csv");
    snprintf(f->tool, sizeof f->tool, "%s", tool ? tool : "");
    size_t len = 0;
    for (int t = 1; t <= 1024; t++)
        if (tpseen[t] && len < sizeof f->tps - 8)
            len += (size_t)snprintf(f->tps + len, sizeof f->tps - len, "%s%d", len ? "," : "", t);
    f->n_points = (int)n;
    f->r2 = r.r2;
    if (prior)
        len = (size_t)snprintf(f->note, sizeof f->note, "posterior toward the learned default (cprior.h, cfitpost.h): "
                               "WLS (weights 1/y^2, step noise %.2g %% prefill, %.2g %% decode) bounded below by the datasheet "
                               "peak; fit MAPE %.2f %%", 100 * sph[1], 100 * sph[0], r.mape);
    else
        len = (size_t)snprintf(f->note, sizeof f->note, "WLS (weights 1/y^2), non-negative, no prior; fit MAPE %.2f %%%s",
                               r.mape, nheld ? "; not separable, held at priors (roofline all-reduce latency per hop, "
                               "bytes over link_gbs, launch per layer):" : "");
    for (int j = 0; j < CF_NTERMS && len < sizeof f->note - 1; j++)
        if (held[j] > 0)
            len += (size_t)snprintf(f->note + len, sizeof f->note - len, " %s", cfitted_term_names[j]);
    for (int j = 0; j < CF_NTERMS && prior; j++) {
        cdb_coef *c = &f->coef[j];
        snprintf(c->name, sizeof c->name, "%s", cfitted_term_names[j]);
        c->value = out->c[j] = post.c[j];
        c->se = post.se[j];
        snprintf(c->status, sizeof c->status, "%s", post.status[j] == CFPOST_FITTED ? "fitted"
                 : post.status[j] == CFPOST_PRIOR ? "prior" : "floor");
    }
    for (int j = 0; j < CF_NTERMS && !prior; j++) {
        cdb_coef *c = &f->coef[j];
        snprintf(c->name, sizeof c->name, "%s", cfitted_term_names[j]);
        c->value = r.b[j];
        c->se = r.status[j] == NNLS_FITTED ? r.se[j] : 0;
        snprintf(c->status, sizeof c->status, "%s",
                 r.status[j] == NNLS_FITTED ? "fitted" : r.status[j] == NNLS_BOUND ? "bound" : "aliased");
        out->c[j] = r.b[j];
        if (held[j] > 0) {
            c->value = out->c[j] = held[j];
            c->se = 0;
            snprintf(c->status, sizeof c->status, "prior");
            continue;
        }
        if (r.status[j] == NNLS_ALIASED && r.aliased_with[j] >= 0 && len < sizeof f->note - 1)
            len += (size_t)snprintf(f->note + len, sizeof f->note - len, "; %s aliased with %s",
                                    cfitted_term_names[j], cfitted_term_names[r.aliased_with[j]]);
    }
    f->ncoef = CF_NTERMS;
    if (cdb_save_fit(db, f, ids, n, err, errlen) != 0)
        goto done;
    rc = 0;
done:
    gsl_matrix_free(X);
    gsl_vector_free(y);
    gsl_vector_free(w);
    free(ids);
    free(rows);
    free(flag);
    free(pred);
    free(sigma);
    return rc;
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
