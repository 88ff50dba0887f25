/* ccost.c -- resolution and evaluation of step-time models (see ccost.h), and
 * the calibrated rows of the cost-model table (auto, fitted, profile), which
 * ccost_register() adds to it. */
#include "ccost.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cdb.h"
#include "clearn.h"
#include "cprior.h"
#include "core/scn.h"
#include "engine/errmsg.h"
#include "engine/rowtab.h"

/* What a resolved model is, by name (cost_info.kind, `latsim cost`), indexed by cc_kind. */
static const char *const KIND_NAMES[] = { [CC_ROOFLINE] = "roofline", [CC_FITTED] = "fitted", [CC_PROFILE] = "profile",
                                          [CC_LEARNED] = "learned" };

const char *ccost_kind_name(cc_kind k)
{
    return k >= 0 && (size_t) k < sizeof KIND_NAMES / sizeof KIND_NAMES[0] ? KIND_NAMES[k] : KIND_NAMES[CC_ROOFLINE];
}

/* Token and sequence counts the profile tables cover (beyond: evaluated directly).
 * Steps of the default limits (max_batch_tokens 8192, max_batch 256) fall within;
 * entries are filled on use, so untouched pages of the tables cost no memory. */
#define CC_TAB_TOKENS 65536
#define CC_TAB_SEQS 4096

static void table_free(cc_table *t)
{
    free(t->tok);
    free(t->ar);
    free(t->cpu);
    memset(t, 0, sizeof *t);
}

/* Releases the calibrated model (not the roofline). */
static void release_model(ccost *c)
{
    if (c->kind == CC_PROFILE)
        cprofile_free(&c->profile);
    table_free(&c->tab);
    cost_free(&c->lm);
    c->kind = CC_ROOFLINE;
}

/* Makes C the learned model on its roofline's hardware.  Returns 0 or -1 (memory). */
static int use_learned(ccost *c)
{
    c->lm.hw = c->roof.hw;
    if (cost_init(&c->lm, "learned", NULL) != 0) return -1;
    cost_info ci;
    cost_describe(&c->lm, &ci);
    c->kind = CC_LEARNED;
    c->mape = ci.mape;
    c->carried = ci.extrapolated;
    snprintf(c->source, sizeof c->source, "learned (latsim calib train: %s engine %s)", c->roof.hw.gpu.name,
             c->roof.hw.engine[0] ? c->roof.hw.engine : llm_engine_default());
    snprintf(c->source_kind, sizeof c->source_kind, "learned");
    snprintf(c->range, sizeof c->range, "%s", ci.range);
    return 0;
}

/* The ratio that scales fitted term K (ccost.h: carried across GPUs). */
static double fitted_ratio(const ccost *c, int k)
{
    if (k == CF_PREFILL || k == CF_ATTN || k == CF_DECODE) return c->r_compute;
    if (k == CF_WEIGHTS || k == CF_KV) return c->r_memory;
    if (k == CF_AR_BYTES) return c->r_link;
    return 1;
}

/* Prepares the resolved model for per-step evaluation (ccost_step_ms without parts).
 * A table that cannot be allocated is left out: those steps are evaluated directly. */
static void prepare_eval(ccost *c)
{
    if (c->kind == CC_FITTED) {
        double r[CF_NTERMS];
        for (int k = 0; k < CF_NTERMS; k++)
            r[k] = fitted_ratio(c, k);
        cfitted_eval_init(&c->fitted, c->tp, r, &c->fev);
        c->fev.staged = cost_hw_stages(&c->roof.hw) > 1 || c->roof.hw.ep > 1;
    } else if (c->kind == CC_PROFILE) {
        cc_table *t = &c->tab;
        t->tok = calloc(CC_TAB_TOKENS, sizeof *t->tok);
        t->ar = c->profile.tp > 1 ? calloc(CC_TAB_TOKENS, sizeof *t->ar) : NULL;
        t->cpu = c->profile.cpu.n > 0 ? calloc(CC_TAB_SEQS, sizeof *t->cpu) : NULL;
        if (!t->tok || (c->profile.tp > 1 && !t->ar) || (c->profile.cpu.n > 0 && !t->cpu)) {
            table_free(t);
            return;
        }
        t->ntok = CC_TAB_TOKENS;
        t->nseq = CC_TAB_SEQS;
    }
}

void ccost_free(ccost *c)
{
    release_model(c);
    cost_free(&c->roof);
}

static double peak_of(const gpu_spec *g, int fp8)
{
    return fp8 ? g->fp8_tflops : g->bf16_tflops;
}

/* Carries fitted model C's terms from GPU FROM_G, model FROM_M and weights FROM_W
 * to GPU TO_G, model TO_M and the replica's weights: each term x the learned
 * structure's (cprior_learned_terms) there / here, under the replica's engine
 * (a change of precision: the compute terms by the dtype's peak and the learned
 * low-precision efficiency, the weights read by the dtype's bytes). */
static void carry_terms(ccost *c, const gpu_spec *from_g, const model_spec *from_m, const char *from_w,
                        const gpu_spec *to_g, const model_spec *to_m)
{
    double a[CF_NTERMS], b[CF_NTERMS];
    const char *wt = c->roof.hw.weights[0] ? c->roof.hw.weights : "bf16";
    cprior_learned_terms(from_g, c->roof.hw.engine, from_m, from_w && from_w[0] ? from_w : wt, a);
    cprior_learned_terms(to_g, c->roof.hw.engine, to_m, wt, b);
    for (int k = 0; k < CF_NTERMS; k++)
        if (a[k] > 0 && b[k] > 0) c->fitted.c[k] *= b[k] / a[k];
    c->fitted.weight_bytes = catalog_weight_bytes(wt);
}

/* 1 when weights A and B are one precision ("" is the model's own, bf16 here). */
static int same_weights(const char *a, const char *b)
{
    return strcasecmp(a && a[0] ? a : "bf16", b && b[0] ? b : "bf16") == 0;
}

/* Carries fitted model C, measured in weights FROM_W, to the replica's weights
 * when they differ (carry_terms, same GPU and model), and says so in its source
 * and note.  Returns 1 when carried. */
static int carry_precision(ccost *c, const char *from_w)
{
    const char *wt = c->roof.hw.weights[0] ? c->roof.hw.weights : "bf16";
    if (same_weights(from_w, wt)) return 0;
    carry_terms(c, &c->roof.hw.gpu, &c->fitted.model, from_w, &c->roof.hw.gpu, &c->fitted.model);
    c->carried = 1;
    size_t L = strlen(c->source);
    snprintf(c->source + L, sizeof c->source - L, ", carried from %s to %s weights", from_w, wt);
    L = strlen(c->note);
    snprintf(c->note + L, sizeof c->note - L, "%scarried from %s to %s weights by the learned model's dtype terms "
             "(the dtype's peak x lowp_eff, its bytes per weight)", L ? "; " : "", from_w, wt);
    return 1;
}

/* Fills the datasheet ratios from the measured GPU MEASURED to the replica's (a
 * fitted model: its terms carried by the learned prior's, carry_terms). */
static int set_ratios(sqlite3 *db, ccost *c, const char *measured, const char *from_w, char *err, size_t errlen)
{
    gpu_spec g;
    char e2[512];
    const gpu_spec *t = &c->roof.hw.gpu;
    c->r_compute = c->r_memory = c->r_link = 1;
    if (catalog_gpu(db, measured, &g, e2, sizeof e2) != 0) {
        errmsg_set(err, errlen, "calibrated model %lld: %s", (long long)c->id, e2);
        return -1;
    }
    c->ridge = peak_of(&g, c->roof.hw.use_fp8_compute) * 1e12 / (g.mem_bw_gbs * 1e9);
    if (strcasecmp(g.name, t->name) == 0) {
        if (c->kind == CC_FITTED) carry_precision(c, from_w);
        return 0;
    }
    c->carried = 1;
    if (c->kind == CC_FITTED) {
        /* A fit carried by the learned model's structure: each term x the learned
         * structure's term on this GPU / on the measured one (cprior.h), not bare
         * datasheet ratios: the efficiencies the GPUs really reach differ. */
        carry_terms(c, &g, &c->fitted.model, from_w, t, &c->fitted.model);
        const char *wt = c->roof.hw.weights[0] ? c->roof.hw.weights : "bf16";
        snprintf(c->source + strlen(c->source), sizeof c->source - strlen(c->source),
                 ", carried from %s%s%s by the learned model's per-term ratios", g.name,
                 same_weights(from_w, wt) ? "" : " and ", same_weights(from_w, wt) ? "" : from_w);
        return 0;
    }
    c->r_compute = peak_of(&g, c->roof.hw.use_fp8_compute) / peak_of(t, c->roof.hw.use_fp8_compute);
    c->r_memory = g.mem_bw_gbs / t->mem_bw_gbs;
    c->r_link = g.link_gbs / t->link_gbs;
    snprintf(c->source + strlen(c->source), sizeof c->source - strlen(c->source),
             ", carried from %s by datasheet ratios", g.name);
    return 0;
}

/* Why a stored model of cross-validated error MAPE (%, NAN unknown) is unusable. */
static void unusable_why(double mape, char *buf, size_t n)
{
    if (isfinite(mape))
        snprintf(buf, n, "its cross-validated error %.3g %% is above the %.0f %% limit of a usable "
                 "model", mape, CDB_MAPE_LIMIT);
    else
        snprintf(buf, n, "its cross-validated error is unknown (a usable model's is at most %.0f %%)",
                 CDB_MAPE_LIMIT);
}

/* 1 when fitted model M has no measurement of a phase in NEED (why in WHY). */
static int phase_missing(const cfitted *m, int need, char *why, size_t wn)
{
    int pre = m->fit.tok_max > 0, dec = m->fit.seq_max > 0;
    if (((need & 2) && !dec) || ((need & 1) && !pre)) {
        errmsg_set(why, wn, "fitted model %lld of %s on %s was fitted on %s steps only: it cannot price %s steps "
                   "(import %s steps and fit again)", (long long)m->fit.id, m->fit.model, m->fit.gpu,
                   dec ? "decode" : "prefill", dec ? "prefill" : "decode", dec ? "prefill" : "decode");
        return 1;
    }
    return 0;
}

/* A fitted model on a replica with pp or ep > 1 (cfitted_staged_ms): its terms
 * were measured on single-stage replicas, so the step times are an extrapolation
 * along the roofline's structure, said in the source and the range. */
static void mark_staged(ccost *c, const cost_hw *h)
{
    if (cost_hw_stages(h) <= 1 && h->ep <= 1)
        return;
    size_t L = strlen(c->source);
    snprintf(c->source + L, sizeof c->source - L, ", pp/ep from the roofline's structure");
    snprintf(c->range, sizeof c->range, "extrapolated");
    L = strlen(c->note);
    snprintf(c->note + L, sizeof c->note - L, "%sfitted terms laid out on the roofline's pipeline and "
             "expert-parallel structure (pp %d, ep %d): an extrapolation from single-stage measurements",
             L ? "; " : "", cost_hw_stages(h), h->ep > 1 ? h->ep : 1);
}

/* ---- the stored step-time models, as rows ------------------------------------- */

/* Profile ID (F) cannot price hardware H: per-operator profiles are dense
 * single-stage measurements, without MoE or MLA operators; the roofline (or a
 * fitted model, laid out on the roofline's pipeline and expert-parallel
 * structure) does those.  Returns 1 with WHY set, or 0. */
static int profile_refuses(const cdb_fit *f, const cost_hw *h, char *why, size_t wn)
{
    if (cost_hw_stages(h) > 1 || h->ep > 1) {
        errmsg_set(why, wn, "profile %lld has no pipeline or expert-parallel terms (per-operator profiles are "
                   "dense single-stage), so it cannot price pp = %d, ep = %d: use cost = fitted or roofline",
                   (long long)f->id, cost_hw_stages(h), h->ep > 1 ? h->ep : 1);
        return 1;
    }
    if (h->model.experts > 0 || h->model.kv_lora_rank > 0) {
        errmsg_set(why, wn, "profile %lld has no operators for %s's %s: per-operator profiles are dense-only "
                   "(use cost = fitted or roofline)", (long long)f->id, h->model.name,
                   h->model.experts > 0 ? "experts" : "latent attention (MLA)");
        return 1;
    }
    return 0;
}

/* Loads profile F into C.  Returns 0, 1 when it does not fit C's tp (WHY), -1 on error. */
static int profile_load(sqlite3 *db, const cdb_fit *f, ccost *c, char *why, size_t wn, char *err, size_t errlen)
{
    if (!cdb_tp_listed(f->tps, c->tp, NULL, NULL)) {
        errmsg_set(why, wn, "profile %lld is for tp %s, not %d", (long long)f->id, f->tps, c->tp);
        return 1;
    }
    if (cprofile_load(db, f->id, &c->profile, err, errlen) != 0)
        return -1;
    c->kind = CC_PROFILE;
    /* Attention carried from another GPU (cprofile.c says so in its note). */
    snprintf(c->range, sizeof c->range, "%s", strstr(f->note, "carried from") ? "extrapolated" : "measured");
    return 0;
}

/* Loads fitted model F into C.  Returns 0, 1 when it cannot price C's phases or
 * tp (WHY), -1 on error. */
static int fitted_load(sqlite3 *db, const cdb_fit *f, ccost *c, char *why, size_t wn, char *err, size_t errlen)
{
    if (cfitted_load(db, f->id, &c->fitted, err, errlen) != 0)
        return -1;
    if (phase_missing(&c->fitted, c->need, why, wn))
        return 1;
    cf_range rg = cfitted_tp_range(&c->fitted, c->tp, why, wn);
    if (rg == CF_REFUSED)
        return 1;
    c->kind = CC_FITTED;
    snprintf(c->range, sizeof c->range, "%s", rg == CF_MEASURED ? "measured" :
             rg == CF_INTERPOLATED ? "interpolated" : "extrapolated");
    if (cfitted_tp_carried(&c->fitted, c->tp)) {
        /* Said where the step times come from: carried, and what was carried. */
        snprintf(c->source + strlen(c->source), sizeof c->source - strlen(c->source), ", carried to tp %d", c->tp);
        size_t L = strlen(c->note);
        snprintf(c->note + L, sizeof c->note - L, "%scarried: %s", L ? "; " : "", why);
        why[0] = '\0';
    }
    mark_staged(c, &c->roof.hw);
    return 0;
}

enum { ASK_FITTED = 1, ASK_PROFILE = 2 };   /* a stored kind, as a bit of cc_ask.takes */

/* A kind of stored step-time model (calib_fits.kind): how it is checked and loaded. */
typedef struct cc_stored {
    const char *name;         /* calib_fits.kind */
    unsigned bit;             /* ASK_*: the models asked for that may take it (cc_ask.takes) */
    /* 1 with WHY set when model F cannot price hardware H at all (NULL: it can). */
    int (*refuses)(const cdb_fit *f, const cost_hw *h, char *why, size_t wn);
    /* Loads F into C (its id, error and source set).  Returns 0, 1 when it is not
     * usable for C (WHY says why), -1 on error (ERR). */
    int (*load)(sqlite3 *db, const cdb_fit *f, ccost *c, char *why, size_t wn, char *err, size_t errlen);
} cc_stored;

static const cc_stored STORED[] = {
    { "fitted", ASK_FITTED, NULL, fitted_load },
    { "profile", ASK_PROFILE, profile_refuses, profile_load },
};
static rowtab stored_table = ROWTAB_STRUCTS(STORED, cc_stored);

/* The row of stored kind NAME, or NULL (not a step-time model). */
static const cc_stored *stored_row(const char *name) { return name ? rowtab_find(&stored_table, name) : NULL; }

/* Tries stored model ID for this replica.  Returns 0 usable (OUT filled), 1 not
 * usable (WHY says why), -1 on error. */
static int try_model(sqlite3 *db, int64_t id, ccost *c, char *why, size_t wn, char *err,
                     size_t errlen)
{
    cdb_fit f;
    int s = cdb_load_fit(db, id, &f, err, errlen);
    if (s != 0)
        return s == 1 ? (errmsg_set(why, wn, "%s", err), 1) : -1;
    const cost_model *r = &c->roof;
    if (strcasecmp(f.model, r->hw.model.name) != 0) {
        errmsg_set(why, wn, "calibrated model %lld is for %s, not %s", (long long)id, f.model,
                   r->hw.model.name);
        return 1;
    }
    const cc_stored *row = stored_row(f.kind);
    if (!row) {
        errmsg_set(why, wn, "calibrated model %lld is a %s model, not a step-time model", (long long)id, f.kind);
        return 1;
    }
    const cost_hw *h = &r->hw;
    if (row->refuses && row->refuses(&f, h, why, wn)) return 1;
    if (!CDB_MAPE_USABLE(f.mape)) {
        char e[96];
        unusable_why(f.mape, e, sizeof e);
        errmsg_set(why, wn, "calibrated model %lld (%s, %s on %s) is not used: %s (latsim calib show %lld)",
                   (long long)id, f.kind, f.model, f.gpu, e, (long long)id);
        return 1;
    }
    c->id = id;
    /* A fit to one observed run holds nothing out: its stored error is
     * in-sample, not the cross-validated one cost_info.mape is (prediction
     * bands stand on it: docs/bands.md). */
    c->mape = !strcmp(f.source, "observed") && f.folds < 2 ? NAN : f.mape;
    snprintf(c->source, sizeof c->source, "%s", f.source);
    snprintf(c->source_kind, sizeof c->source_kind, "%s", f.source);
    s = row->load(db, &f, c, why, wn, err, errlen);
    if (s != 0) return s;
    if (set_ratios(db, c, f.gpu, f.weights, err, errlen) != 0) {
        release_model(c);
        return -1;
    }
    if (c->carried)
        snprintf(c->range, sizeof c->range, "extrapolated");
    return 0;
}

static int resolve(sqlite3 *db, const char *kind, int64_t id, const cost_model *roof,
                   const char *weights, ccost *out, char *err, size_t errlen);

/* The usable fitted model of another LLM model on this GPU (in WEIGHTS first, in
 * other weights too when ANY_WEIGHTS; lowest cross-validated error first), its
 * terms evaluated with this replica's model geometry and carried by the learned
 * structure's model and dtype terms (ccost.h).  Returns 0 with OUT filled, 1 when
 * none, -1 on error. */
static int try_other_model(sqlite3 *db, const cost_model *roof, const char *weights, int any_weights, ccost *out,
                           char *why, size_t wn, char *err, size_t errlen)
{
    const cost_hw *h = &roof->hw;
    sqlite3_stmt *st = NULL;
    /* In these weights first; a model in other weights is carried to them as well. */
    if (sqlite3_prepare_v2(db, "SELECT id, weights FROM calib_fits WHERE kind = 'fitted' AND gpu = ? AND model <> ? AND"
                           " mape IS NOT NULL AND mape >= 0 AND mape <= ?3 AND (weights = ?4 OR ?5) ORDER BY weights <> ?4, mape, id", -1, &st,
                           NULL) != SQLITE_OK) {
        errmsg_set(err, errlen, "calibration store: %s", sqlite3_errmsg(db));
        return -1;
    }
    sqlite3_bind_text(st, 1, h->gpu.name, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, h->model.name, -1, SQLITE_STATIC);
    sqlite3_bind_double(st, 3, CDB_MAPE_LIMIT);
    sqlite3_bind_text(st, 4, weights, -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 5, any_weights);
    int rc = 1;
    while (rc == 1 && sqlite3_step(st) == SQLITE_ROW) {
        int64_t id = sqlite3_column_int64(st, 0);
        cfitted m;
        int s = cfitted_load(db, id, &m, err, errlen);
        if (s < 0) {
            rc = -1;
            break;
        }
        char w2[512] = "";
        if (s != 0 || phase_missing(&m, out->need, w2, sizeof w2) || cfitted_tp_range(&m, out->tp, w2, sizeof w2) == CF_REFUSED) {
            /* Kept for the note: every refusal states its reason. */
            size_t L = strlen(why);
            if (L + 32 < wn)
                snprintf(why + L, wn - L, "%snot carried from fitted model %lld of %s: %s", L ? "; " : "", (long long)id,
                         s == 0 ? m.fit.model : "another model", w2[0] ? w2 : "it cannot be loaded");
            continue;
        }
        char from[48], from_w[8];
        snprintf(from, sizeof from, "%s", m.fit.model);
        snprintf(from_w, sizeof from_w, "%s", (const char *) sqlite3_column_text(st, 1));
        model_spec src = m.model;
        m.model = h->model;   /* the terms are per TFLOP, per GB, per layer: this model's counts */
        out->kind = CC_FITTED;
        out->fitted = m;
        /* And the learned structure's model (and dtype) terms. */
        carry_terms(out, &h->gpu, &src, from_w, &h->gpu, &h->model);
        out->id = id;
        out->mape = m.fit.mape;
        out->carried = 1;
        snprintf(out->source_kind, sizeof out->source_kind, "%s", m.fit.source);
        int other_w = !same_weights(from_w, weights);
        snprintf(out->source, sizeof out->source, "%s, carried from %s%s%s by its normalised terms", m.fit.source, from,
                 other_w ? " in " : "", other_w ? from_w : "");
        snprintf(out->range, sizeof out->range, "extrapolated");
        snprintf(out->note, sizeof out->note, "no calibrated model of %s on %s at tp %d: fitted model %lld of %s "
                 "on the same GPU, carried by its normalised terms", h->model.name, h->gpu.name, out->tp,
                 (long long)id, from);
        mark_staged(out, h);
        rc = 0;
    }
    sqlite3_finalize(st);
    return rc;
}

int ccost_resolve(sqlite3 *db, const char *kind, int64_t id, const cost_model *roof,
                  const char *weights, ccost *out, char *err, size_t errlen)
{
    return ccost_resolve_for(db, kind, id, roof, weights, 3, out, err, errlen);
}

int ccost_resolve_for(sqlite3 *db, const char *kind, int64_t id, const cost_model *roof, const char *weights,
                      int need, ccost *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    out->need = need;
    out->roof.hw = roof->hw;
    if (cost_init(&out->roof, "roofline", roof->state) != 0) {
        errmsg_set(err, errlen, "out of memory");
        return -1;
    }
    int rc = resolve(db, kind, id, roof, weights, out, err, errlen);
    if (rc != 0) {
        ccost_free(out);
        return rc;
    }
    /* A profile's all-reduce: an imported nccl profile of this GPU and tp (loaded
     * into the roofline by cost_roofline_collectives) replaces Vidur's. */
    const cost_roofline *rp = out->roof.state;
    if (out->kind == CC_PROFILE && out->profile.tp > 1 && rp && rp->ar.n > 0 && strcmp(rp->ar.source, "vidur") != 0) {
        out->ar_meas = &rp->ar;
        size_t L = strlen(out->source);
        snprintf(out->source + L, sizeof out->source - L, ", all-reduce from the nccl profile (%d sizes)", rp->ar.n);
    }
    prepare_eval(out);
    return rc;
}

/* ---- what a pool may ask the resolver for, as rows ------------------------------ */

/* A cost model a pool (or `latsim cost`) may ask for by name: the stored models
 * it may take and what it is without one. */
typedef struct cc_ask {
    const char *name;         /* the model asked for (cost = NAME, latsim cost --kind) */
    unsigned takes;           /* ASK_* the stored models it may take (0: none, it is OTHERWISE) */
    cc_kind otherwise;        /* with none usable: CC_LEARNED (the learned model), CC_ROOFLINE
                                 (takes = 0: the roofline), CC_FITTED (an error: none stored) */
    const char *fit_what;     /* that error's command: "latsim calib fit<FIT_WHAT> ..." */
    const char *fit_tp;       /* and what it ends with (" --tp T") */
} cc_ask;

static const cc_ask ASKS[] = {
    { "auto", ASK_FITTED | ASK_PROFILE, CC_LEARNED, "", "" },
    { "fitted", ASK_FITTED, CC_FITTED, "", "" },
    { "profile", ASK_PROFILE, CC_FITTED, " profile", " --tp T" },
    { "learned", 0, CC_LEARNED, "", "" },
    { "roofline", 0, CC_ROOFLINE, "", "" },
};
static rowtab ask_table = ROWTAB_STRUCTS(ASKS, cc_ask);

int ccost_asked(const char *name) { return name && rowtab_find(&ask_table, name) != NULL; }

const char *ccost_ask_list(void)
{
    static char list[128];
    if (!list[0])
        for (int i = 0; i < rowtab_count(&ask_table); i++) {
            size_t len = strlen(list);
            snprintf(list + len, sizeof list - len, "%s%s", i ? ", " : "", ((const cc_ask *) rowtab_at(&ask_table, i))->name);
        }
    return list;
}

/* The row of the model asked for as NAME; a name of no row (which the cost-model
 * table has refused before) takes any stored model and errs without one. */
static const cc_ask *ask_row(const char *name)
{
    static const cc_ask ANY = { "", ASK_FITTED | ASK_PROFILE, CC_FITTED, "", "" };
    const cc_ask *a = rowtab_find(&ask_table, name);
    return a ? a : &ANY;
}

static int resolve(sqlite3 *db, const char *kind, int64_t id, const cost_model *roof,
                   const char *weights, ccost *out, char *err, size_t errlen)
{
    out->kind = CC_ROOFLINE;
    out->tp = roof->hw.tp >= 1 ? roof->hw.tp : 1;
    out->mape = NAN;
    out->r_compute = out->r_memory = out->r_link = 1;
    snprintf(out->source, sizeof out->source, "datasheet");
    char why[512] = "";
    if (id > 0) {
        int s = try_model(db, id, out, why, sizeof why, err, errlen);
        if (s == 1)
            errmsg_set(err, errlen, "%s", why);
        return s == 0 ? 0 : -1;
    }
    if (!kind || !kind[0])
        kind = "auto";
    const cc_ask *ask = ask_row(kind);
    if (!ask->takes)
        return ask->otherwise == CC_LEARNED && use_learned(out) != 0 ? (errmsg_set(err, errlen, "out of memory"), -1) : 0;
    int want_fitted = (ask->takes & ASK_FITTED) != 0, want_profile = (ask->takes & ASK_PROFILE) != 0;
    /* Candidates, best first by (this GPU, within range, MAPE); the first usable wins. */
    sqlite3_stmt *st = NULL;
    int have_tables = 0;
    if (sqlite3_prepare_v2(db, "SELECT count(*) FROM sqlite_master WHERE name = 'calib_fits'", -1,
                           &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
        have_tables = sqlite3_column_int(st, 0) > 0;
    sqlite3_finalize(st);
    st = NULL;
    int64_t best = 0;
    double best_key = INFINITY;
    char skipped[400] = "";   /* the unusable models passed over: "ID (kind, cv_mape X %), ..." */
    int nskipped = 0;
    if (have_tables &&
        sqlite3_prepare_v2(db, "SELECT id, kind, gpu, tps, mape, weights FROM calib_fits WHERE model = ?"
                           " ORDER BY id", -1, &st, NULL) != SQLITE_OK) {
        errmsg_set(err, errlen, "calibration store: %s", sqlite3_errmsg(db));
        return -1;
    }
    if (st) {
        sqlite3_bind_text(st, 1, roof->hw.model.name, -1, SQLITE_STATIC);
        while (sqlite3_step(st) == SQLITE_ROW) {
            const char *k = (const char *)sqlite3_column_text(st, 1);
            const char *g = (const char *)sqlite3_column_text(st, 2);
            const char *tps = (const char *)sqlite3_column_text(st, 3);
            const char *w = (const char *)sqlite3_column_text(st, 5);
            const cc_stored *sk = stored_row(k);
            int fitted = sk && sk->bit == ASK_FITTED, profile = sk && sk->bit == ASK_PROFILE;
            if (!((fitted && want_fitted) || (profile && want_profile)))
                continue;
            /* Another precision: a fitted model is carried by the learned dtype terms
             * (carry_precision), after every model in these weights; a per-operator
             * profile is not carried across precisions. */
            int other_w = !same_weights(w, weights);
            if (other_w && profile)
                continue;
            int lo, hi, listed = cdb_tp_listed(tps, out->tp, &lo, &hi);
            if (profile && !listed)
                continue;
            /* Useless (error above the limit, or unknown): skipped, and said. */
            double mape = sqlite3_column_type(st, 4) == SQLITE_NULL ? NAN : sqlite3_column_double(st, 4);
            if (!CDB_MAPE_USABLE(mape)) {
                if (other_w) continue;   /* said only for models in these weights */
                size_t L = strlen(skipped);
                if (L + 64 < sizeof skipped)
                    snprintf(skipped + L, sizeof skipped - L, isfinite(mape) ? "%s%lld (%s, cv_mape %.3g %%)"
                             : "%s%lld (%s, cv_mape unknown)", L ? ", " : "",
                             (long long)sqlite3_column_int64(st, 0), k, mape);
                nskipped++;
                if (!why[0]) {
                    char e[96];
                    unusable_why(mape, e, sizeof e);
                    snprintf(why, sizeof why, "stored %s model %lld of %s on %s is not used: %s "
                             "(latsim calib show %lld)", k, (long long)sqlite3_column_int64(st, 0),
                             roof->hw.model.name, g, e, (long long)sqlite3_column_int64(st, 0));
                }
                continue;
            }
            int inside = listed || (out->tp > lo && out->tp < hi);
            double key = other_w * 2e6 + (strcasecmp(g, roof->hw.gpu.name) != 0) * 1e6 + (!inside) * 1e3 +
                         fmin(mape, 999);
            if (key < best_key) {
                /* Check usability now (a fitted model may refuse this TP). */
                ccost trial;
                memset(&trial, 0, sizeof trial);
                trial.roof = *roof;
                trial.tp = out->tp;
                trial.need = out->need;
                char w2[512];
                int s = try_model(db, sqlite3_column_int64(st, 0), &trial, w2, sizeof w2, err, errlen);
                if (s < 0) {
                    sqlite3_finalize(st);
                    return -1;
                }
                if (s == 0) {
                    best_key = key;
                    best = trial.id;
                    release_model(&trial);
                } else if (!why[0])
                    snprintf(why, sizeof why, "%s", w2);
            }
        }
        sqlite3_finalize(st);
    }
    if (nskipped)
        errmsg_set(out->warn, sizeof out->warn, "cost %s: skipped stored model%s %s of %s: "
                 "a usable model's cross-validated error is known and at most %.0f %% "
                 "(latsim calib list)", kind, nskipped > 1 ? "s" : "", skipped, roof->hw.model.name,
                 CDB_MAPE_LIMIT);
    /* Before a model of this model on another GPU: a fitted model of another
     * model on this GPU, by its normalised terms. */
    if (want_fitted && have_tables && (best == 0 || best_key >= 1e6)) {
        /* Models in other weights only when this model has no candidate at all. */
        int s = try_other_model(db, roof, weights, best == 0, out, why, sizeof why, err, errlen);
        if (s <= 0)
            return s;
    }
    if (best > 0) {
        int s = try_model(db, best, out, why, sizeof why, err, errlen);
        return s == 0 ? 0 : -1;
    }
    if (ask->otherwise == CC_LEARNED) {
        /* Nothing of the user's own: the learned model, whose held-out errors (by GPU,
         * by engine, by model) are below the roofline's (docs/accuracy.md). */
        if (use_learned(out) != 0) return errmsg_set(err, errlen, "out of memory"), -1;
        snprintf(out->note, sizeof out->note, "no calibrated model of %s on %s at tp %d%s%s: the learned model",
                 roof->hw.model.name, roof->hw.gpu.name, out->tp, why[0] ? " (" : "", why);
        if (why[0]) {
            size_t L = strlen(out->note);
            snprintf(out->note + L, sizeof out->note - L, ")");
        }
        return 0;
    }
    if (why[0])
        errmsg_set(err, errlen, "%s", why);
    else
        errmsg_set(err, errlen, "no %s model stored for %s (weights %s) at tp %d: build one with "
                   "latsim calib fit%s --model %s --gpu %s%s", kind, roof->hw.model.name, weights,
                   out->tp, ask->fit_what, roof->hw.model.name, roof->hw.gpu.name, ask->fit_tp);
    return -1;
}

static void add(ccost_parts *p, const char *name, double ms)
{
    if (p && p->n < CC_MAX_PARTS) {
        p->name[p->n] = name;
        p->ms[p->n++] = ms;
    }
}

/* The ratio of a profile's linear part at TOKENS (compute- or memory-bound side of
 * the measured GPU's ridge). */
static double linear_ratio(const ccost *c, double tokens)
{
    return tokens >= c->ridge ? c->r_compute : c->r_memory;
}

/* A profile's all-reduce part for a step of TOKENS tokens (ms) from its own
 * part P_AR (ms, at the measured GPU): the imported nccl all-reduce of this GPU
 * when there is one (2 per layer of tokens x hidden x 2 bytes, not carried:
 * measured here), else P_AR carried by the link ratio. */
static double profile_ar_ms(const ccost *c, double tokens, double p_ar)
{
    if (c->ar_meas)
        return 2.0 * c->profile.model.layers * cost_coll_time(c->ar_meas, tokens * c->profile.model.hidden * 2) * 1e3;
    return p_ar * c->r_link;
}

/* Fills entry T of the token table: the direct evaluation's first two terms and its
 * all-reduce term for a step of T tokens (those parts depend on the tokens alone). */
static double fill_tok(const ccost *c, int64_t t) __attribute__((noinline, cold));
static double fill_cpu(const ccost *c, int64_t n) __attribute__((noinline, cold));

static double fill_tok(const ccost *c, int64_t t)
{
    double p[CP_NPARTS];
    cost_step s = { .prefill_tokens = t };
    cprofile_step_ms(&c->profile, &s, p, NULL);
    double sum = 0;
    sum += p[CP_LINEAR] * linear_ratio(c, (double)t);
    sum += p[CP_EMB] * c->r_memory;
    c->tab.tok[t] = sum;         /* the table is the model's cache: written through const */
    if (c->tab.ar)
        c->tab.ar[t] = profile_ar_ms(c, (double)t, p[CP_ALLREDUCE]);
    return sum;
}

static double fill_cpu(const ccost *c, int64_t n)
{
    double p[CP_NPARTS];
    cost_step s = { .prefill_tokens = 1, .prefill_seqs = (int32_t)n };
    cprofile_step_ms(&c->profile, &s, p, NULL);
    return c->tab.cpu[n] = p[CP_CPU];
}

/* A profile's step time from its tables: the sum of ccost_step_ms's direct branch,
 * term for term and in its order (each term of a part that is 0 adds +0 there: left
 * out here).  Returns -1 when the step lies outside the tables. */
static double profile_tabulated(const ccost *c, const cost_step *s)
{
    const cc_table *t = &c->tab;
    int64_t tok = s->prefill_tokens + cost_step_decode_tokens(s), seqs = (int64_t)s->prefill_seqs + s->decode_seqs;
    /* 1 <= tok < ntok and 0 <= seqs < nseq (a step of no tokens has no parts at all). */
    if ((uint64_t)tok - 1 >= (uint64_t)t->ntok - 1 || (uint64_t)seqs >= (uint64_t)t->nseq)
        return -1;
    double sum = t->tok[tok];
    if (sum == 0)
        sum = fill_tok(c, tok);
    if (s->prefill_tokens > 0)
        sum += cprofile_attn_prefill_ms(&c->profile, s) * c->r_compute;
    if (s->decode_seqs > 0)
        sum += cprofile_attn_decode_ms(&c->profile, s) * c->r_memory;
    if (t->ar)
        sum += t->ar[tok];        /* filled with tok[] */
    if (t->cpu) {
        double u = t->cpu[seqs];
        sum += u != 0 ? u : fill_cpu(c, seqs);
    }
    return sum;
}

static double step_direct(const ccost *c, const cost_step *s, ccost_parts *parts, int *extrap)
    __attribute__((noinline));

double ccost_step_ms(const ccost *c, const cost_step *s, ccost_parts *parts, int *extrap)
{
    if (!parts && !extrap && c->kind == CC_ROOFLINE)
        return cost_step_ms(&c->roof, s);
    if (!parts && !extrap && c->kind == CC_LEARNED)
        return cost_step_ms(&c->lm, s);
    if (!parts && !extrap && (s->prefill_tokens > 0 || s->decode_seqs > 0)) {
        if (c->kind == CC_FITTED && !c->fev.staged)
            return cfitted_eval_ms(&c->fev, s);
        if (c->kind == CC_PROFILE && c->tab.ntok > 0) {
            double ms = profile_tabulated(c, s);
            if (ms >= 0)
                return ms;
        }
    }
    return step_direct(c, s, parts, extrap);
}

/* Every part evaluated (the tables' reference). */
static double step_direct(const ccost *c, const cost_step *s, ccost_parts *parts, int *extrap)
{
    if (parts)
        parts->n = 0;
    if (extrap)
        *extrap = 0;
    if (s->prefill_tokens <= 0 && s->decode_seqs <= 0)
        return 0;
    double sum = 0;
    if (c->kind == CC_LEARNED) {
        clearn_parts p;
        sum = cost_step_ms(&c->lm, s);
        clearn_step_ms(&c->lm.hw, &clearn_model_prior(&c->lm)->c, s, &p);
        add(parts, "compute", p.compute);
        add(parts, "memory", p.memory);
        add(parts, "overlap", p.overlap_ms);
        add(parts, "allreduce", p.allreduce);
        if (c->lm.hw.ep > 1) add(parts, "alltoall", p.alltoall);
        if (cost_hw_stages(&c->lm.hw) > 1) add(parts, "pipeline", p.pipeline);
        add(parts, "launch", p.launch);
        add(parts, "cpu", p.cpu);
        return sum;
    }
    if (c->kind == CC_FITTED && c->fev.staged) {
        /* pp or ep > 1: the terms on the roofline's structure; the two all-reduce
         * terms as one part (the parts' limit). */
        double r[CF_NTERMS], p[CF_ST_NPARTS];
        for (int k = 0; k < CF_NTERMS; k++)
            r[k] = fitted_ratio(c, k);
        sum = cfitted_staged_ms(&c->fitted, &c->roof.hw, c->roof.state, r, s, p);
        static const char *names[CF_NTERMS] = { "fixed", "weights", "prefill", "attention", "kv",
                                                "decode", "allreduce", NULL, "launch", "cpu" };
        for (int k = 0; k < CF_NTERMS; k++)
            if (k != CF_AR_HOP)
                add(parts, names[k], k == CF_AR_BYTES ? p[k] + p[CF_AR_HOP] : p[k]);
        if (c->roof.hw.ep > 1) add(parts, "alltoall", p[CF_ST_ALLTOALL]);
        if (cost_hw_stages(&c->roof.hw) > 1) {
            add(parts, "stage_transfer", p[CF_ST_TRANSFER]);
            add(parts, "pipeline", p[CF_ST_PIPELINE]);
        }
        if (extrap && !cfitted_step_in_range(&c->fitted, s))
            *extrap = 1;
        return sum;
    }
    if (c->kind == CC_FITTED) {
        double p[CF_NTERMS];
        cfitted_step_ms(&c->fitted, c->tp, s, p);
        static const char *names[CF_NTERMS] = { "fixed", "weights", "prefill", "attention", "kv",
                                                "decode", "allreduce_bytes", "allreduce_hops",
                                                "launch", "cpu" };
        for (int k = 0; k < CF_NTERMS; k++) {
            double r = fitted_ratio(c, k);
            add(parts, names[k], p[k] * r);
            sum += p[k] * r;
        }
        if (extrap && !cfitted_step_in_range(&c->fitted, s))
            *extrap = 1;
        return sum;
    }
    if (c->kind == CC_PROFILE) {
        double p[CP_NPARTS];
        cprofile_step_ms(&c->profile, s, p, extrap);
        double tokens = (double)s->prefill_tokens + (double)cost_step_decode_tokens(s);
        for (int k = 0; k < CP_NPARTS; k++) {
            double r = 1;
            if (k == CP_LINEAR) r = linear_ratio(c, tokens);
            else if (k == CP_EMB || k == CP_ATTN_DECODE) r = c->r_memory;
            else if (k == CP_ATTN_PREFILL) r = c->r_compute;
            double v = k == CP_ALLREDUCE && c->profile.tp > 1 ? profile_ar_ms(c, tokens, p[k]) : p[k] * r;
            add(parts, cprofile_part_names[k], v);
            sum += v;
        }
        return sum;
    }
    /* Roofline: the GPU part (compute or memory bound), all-reduces, fixed overhead. */
    const cost_model *m = &c->roof;
    if (!parts)
        return cost_step_ms(m, s);
    const cost_roofline *rp = m->state;   /* the roofline's parameters (cost.h) */
    if (!cost_hw_plain(&m->hw)) {
        /* MoE, MLA, pp or ep: the general roofline's own parts. */
        cost_breakdown b;
        double total = cost_roofline_breakdown(&m->hw, rp, s, &b);
        add(parts, b.memory_bound ? "memory" : "compute", b.gpu_ms);
        add(parts, "allreduce", b.allreduce_ms);
        if (m->hw.ep > 1) add(parts, "alltoall", b.alltoall_ms);
        if (cost_hw_stages(&m->hw) > 1) {
            add(parts, "stage_transfer", b.transfer_ms);
            add(parts, "pipeline", b.pipeline_ms);
        }
        add(parts, "overhead", b.overhead_ms);
        add(parts, "launch", b.launch_ms);
        return total;
    }
    double total = cost_step_ms(m, s), flops, bytes;
    cost_step_work(m, s, &flops, &bytes);
    double tc = flops / cost_peak_flops(m) / (rp->compute_eff > 0 && rp->compute_eff <= 1 ? rp->compute_eff : 1) * 1e3;
    double tm = bytes / cost_peak_bw(m) / (rp->memory_eff > 0 && rp->memory_eff <= 1 ? rp->memory_eff : 1) * 1e3;
    double gpu = fmax(tc, tm);
    add(parts, tc >= tm ? "compute" : "memory", gpu);
    double launch = m->hw.model.layers * rp->launch_us_per_layer * 1e-3;
    add(parts, "allreduce", fmax(total - gpu - rp->step_overhead_ms - launch, 0));
    add(parts, "overhead", rp->step_overhead_ms);
    add(parts, "launch", launch);
    return total;
}

double ccost_overhead_ms(const ccost *c, const cost_step *s)
{
    if (s->prefill_tokens <= 0 && s->decode_seqs <= 0)
        return 0;
    if (c->kind == CC_ROOFLINE)
        return cost_step_overhead_ms(&c->roof, s);
    if (c->kind == CC_LEARNED)
        return cost_step_overhead_ms(&c->lm, s);
    if (c->kind == CC_FITTED && !c->fev.staged) {
        double p[CF_NTERMS];
        cfitted_step_ms(&c->fitted, c->tp, s, p);
        return p[CF_FIXED] * fitted_ratio(c, CF_FIXED) + p[CF_LAUNCH] * fitted_ratio(c, CF_LAUNCH)
               + p[CF_SEQ] * fitted_ratio(c, CF_SEQ);
    }
    if (c->kind == CC_PROFILE) {
        const cc_table *t = &c->tab;
        if (c->profile.cpu.n == 0) return 0;
        int64_t seqs = (int64_t)s->prefill_seqs + s->decode_seqs;
        if (t->cpu && seqs >= 0 && seqs < t->nseq) {
            double u = t->cpu[seqs];
            return u != 0 ? u : fill_cpu(c, seqs);
        }
    }
    /* A staged fitted model, or a step past a profile's tables: every part evaluated. */
    ccost_parts parts;
    step_direct(c, s, &parts, NULL);
    double o = 0;
    for (int i = 0; i < parts.n; i++)
        if (!strcmp(parts.name[i], "fixed") || !strcmp(parts.name[i], "launch") || !strcmp(parts.name[i], "cpu")
            || !strcmp(parts.name[i], "overhead"))
            o += parts.ms[i];
    return o;
}

/* ---- the calibrated rows of the cost-model table: auto, fitted, profile -------- */

/* State of the calibrated rows: what the pool asked for, and once built the
 * resolved model (which owns its interpolation tables). */
typedef struct cost_calib {
    int64_t id;                   /* cost_id: a stored model, 0 = the best stored one */
    cost_roofline roof;           /* the roofline's parameters (auto's fallback) */
    ccost *c;                     /* the resolved model (NULL until built) */
    int nterms;                   /* cost_terms given: CF_NTERMS, else 0 */
    double terms[CF_NTERMS];      /* cost_terms: the fitted coefficients, units as cfitted_term_names */
    double ratios[3];             /* cost_ratios: compute, memory, link ratios of a carried model */
    int roof_set;                 /* 1: the pool gives the roofline's own keys (compute_eff, ...):
                                     auto's fallback is then that roofline, not the learned model */
} cost_calib;

static const scn_key CALIB_KEYS[] = {
    { "cost_id", "0", "fitted/profile/auto: a stored calibrated model (latsim calib list); 0 = the best for the pool" },
    { "cost_terms", "", "fitted: its coefficients instead of a stored model, in the order of latsim calib show "
      "(fixed_ms weights_ms_per_gb prefill_ms_per_tflop attn_ms_per_tflop kv_ms_per_gb decode_ms_per_tflop "
      "allreduce_ms_per_gb allreduce_ms_per_hop launch_ms_per_layer seq_ms): what a stored run records "
      "(latsim show ID), to re-run it with the same step times without the calibration database" },
    { "cost_ratios", "1 1 1", "fitted with cost_terms: the datasheet ratios (compute, memory, link) of a model "
      "carried from another GPU, as a stored run records them" },
    { NULL, NULL, NULL },
};

/* Reads the LIST of N numbers (blank- or comma-separated, each finite and >= 0)
 * of KEY into V.  Returns 0, or -1 (error set in X). */
static int read_numbers(scn_ctx *x, const char *sec, const char *key, int n, double *v)
{
    char buf[1024];
    if (scn_str(x, sec, key, "", buf, sizeof buf)) return -1;
    char *p = buf, *end;
    for (int i = 0; i < n; i++) {
        while (*p == ' ' || *p == ',' || *p == '\t') p++;
        v[i] = strtod(p, &end);
        if (end == p || !isfinite(v[i]) || v[i] < 0)
            return scn_fail(x, sec, key, "expected %d non-negative numbers, got '%s'", n, buf);
        p = end;
    }
    while (*p == ' ' || *p == ',' || *p == '\t') p++;
    if (*p) return scn_fail(x, sec, key, "expected %d non-negative numbers, got '%s'", n, buf);
    return 0;
}

static int calib_parse(cost_model *m, scn_ctx *x, const char *sec)
{
    /* The roofline's keys (the fallback's parameters), read by the roofline's own row. */
    cost_model r = { 0 };
    if (cost_find("roofline")->parse(&r, x, sec)) return -1;
    cost_calib *c = calloc(1, sizeof *c);
    if (!c) {
        cost_free(&r);
        return scn_fail_sec(x, sec, "cost", "out of memory");
    }
    c->roof = *(const cost_roofline *) r.state;
    cost_free(&r);
    m->state = c;
    for (const scn_key *k = cost_find("roofline")->keys; k && k->key; k++)
        if (scn_value(x, sec, k->key)) c->roof_set = 1;
    if (scn_i64(x, sec, "cost_id", 0, 0, INT64_MAX, &c->id)) return -1;
    c->ratios[0] = c->ratios[1] = c->ratios[2] = 1;
    if (scn_value(x, sec, "cost_terms")) {
        if (strcmp(m->ops->name, "fitted") != 0)
            return scn_fail(x, sec, "cost_terms", "needs cost = fitted (not %s)", m->ops->name);
        if (c->id > 0) return scn_fail(x, sec, "cost_terms", "give cost_terms or cost_id, not both");
        if (read_numbers(x, sec, "cost_terms", CF_NTERMS, c->terms)) return -1;
        c->nterms = CF_NTERMS;
    }
    if (scn_value(x, sec, "cost_ratios")) {
        if (!c->nterms) return scn_fail(x, sec, "cost_ratios", "needs cost_terms");
        if (read_numbers(x, sec, "cost_ratios", 3, c->ratios)) return -1;
        for (int i = 0; i < 3; i++)
            if (!(c->ratios[i] > 0)) return scn_fail(x, sec, "cost_ratios", "each ratio must be > 0");
    }
    return 0;
}

/* A fitted model from its coefficients TERMS and ratios R (cost_terms): the
 * replica of ROOF, the model's geometry its own.  Returns 0 or -1 (memory). */
static int from_terms(const cost_model *roof, const double *terms, const double *r, ccost *out)
{
    memset(out, 0, sizeof *out);
    out->roof.hw = roof->hw;
    if (cost_init(&out->roof, "roofline", roof->state) != 0) return -1;
    out->kind = CC_FITTED;
    out->tp = roof->hw.tp >= 1 ? roof->hw.tp : 1;
    out->mape = NAN;
    snprintf(out->source, sizeof out->source, "cost_terms");
    snprintf(out->source_kind, sizeof out->source_kind, "scenario");
    out->fitted.model = roof->hw.model;
    out->fitted.weight_bytes = roof->hw.weight_bytes;
    out->fitted.kv_bytes = 2;
    memcpy(out->fitted.c, terms, sizeof out->fitted.c);
    out->r_compute = r[0];
    out->r_memory = r[1];
    out->r_link = r[2];
    out->carried = r[0] != 1 || r[1] != 1 || r[2] != 1;
    snprintf(out->range, sizeof out->range, "%s", out->carried ? "extrapolated" : "");
    mark_staged(out, &roof->hw);
    prepare_eval(out);
    return 0;
}

static int calib_build(cost_model *m, scn_ctx *x, const char *sec, sqlite3 *db)
{
    cost_calib *c = m->state;
    cost_model roof = { .hw = m->hw };
    char err[1024];
    cost_roofline_collectives(&c->roof, &m->hw, db);   /* an imported all-reduce profile, if any */
    if (cost_init(&roof, "roofline", &c->roof)) return scn_fail_sec(x, sec, "cost", "out of memory");
    c->c = calloc(1, sizeof *c->c);
    if (!c->c) {
        cost_free(&roof);
        return scn_fail_sec(x, sec, "cost", "out of memory");
    }
    const char *w = m->hw.weights[0] ? m->hw.weights : "bf16";
    int rc;
    if (c->nterms) {
        rc = from_terms(&roof, c->terms, c->ratios, c->c);
        if (rc) snprintf(err, sizeof err, "out of memory");
    } else
        rc = ccost_resolve(db, m->ops->name, c->id, &roof, w, c->c, err, sizeof err);
    cost_free(&roof);
    if (rc != 0) {
        free(c->c);
        c->c = NULL;
        /* At the key's own line (the [pool] header when the key is absent). */
        return scn_fail(x, sec, c->id ? "cost_id" : "cost", "%s", err);
    }
    if (c->c->kind == CC_LEARNED && c->roof_set && strcmp(m->ops->name, "auto") == 0) {
        /* The pool calibrated the roofline by its own keys: auto keeps it. */
        cost_free(&c->c->lm);
        c->c->kind = CC_ROOFLINE;
        c->c->mape = NAN;
        c->c->carried = 0;
        snprintf(c->c->source, sizeof c->c->source, "datasheet");
        c->c->source_kind[0] = c->c->range[0] = '\0';
        snprintf(c->c->note, sizeof c->c->note, "no calibrated model of %s on %s at tp %d: the roofline with the "
                 "pool's own efficiencies", m->hw.model.name, m->hw.gpu.name, c->c->tp);
    }
    if (c->c->warn[0])   /* stored models passed over as unusable (ccost.h) */
        fprintf(stderr, "latsim: warning: [%s] %s\n", sec, c->c->warn);
    return 0;
}

static double calib_ms(const cost_model *m, const cost_step *s)
{
    const cost_calib *c = m->state;
    return c->c ? ccost_step_ms(c->c, s, NULL, NULL) : 0;
}

static double calib_overhead_ms(const cost_model *m, const cost_step *s)
{
    const cost_calib *c = m->state;
    return c->c ? ccost_overhead_ms(c->c, s) : 0;
}

static void calib_free(cost_model *m)
{
    cost_calib *c = m->state;
    if (c && c->c) {
        ccost_free(c->c);
        free(c->c);
    }
    free(c);
}

static void calib_describe(const cost_model *m, cost_info *out)
{
    const cost_calib *c = m->state;
    if (!c || !c->c) {
        *out = (cost_info) { m->ops->name, 0, "", NAN, 0, "", "" };
        return;
    }
    const ccost *cc = c->c;
    *out = (cost_info) { ccost_kind_name(cc->kind), cc->id, cc->kind == CC_ROOFLINE
                         ? cost_roofline_source(cc->roof.state)
                         : cc->source_kind,
                         cc->mape, cc->carried || !strcmp(cc->range, "extrapolated"), cc->range, "" };
    /* The keys that give the same step times without the calibration database. */
    if (cc->kind == CC_LEARNED) {
        cost_info li;
        cost_describe(&cc->lm, &li);
        memcpy(out->coeffs, li.coeffs, sizeof out->coeffs);
    } else if (cc->kind == CC_ROOFLINE)
        cost_roofline_coeffs(cc->roof.state, out->coeffs, sizeof out->coeffs);
    else if (cc->kind == CC_FITTED) {
        char *b = out->coeffs;
        size_t n = sizeof out->coeffs;
        snprintf(b, n, "cost=fitted cost_terms=");
        for (int k = 0; k < CF_NTERMS; k++) {
            if (k) strncat(b, ",", n - strnlen(b, n) - 1);
            cost_fmt_exact(b, n, cc->fitted.c[k]);
        }
        if (cc->carried) {
            const double r[3] = { cc->r_compute, cc->r_memory, cc->r_link };
            strncat(b, " cost_ratios=", n - strnlen(b, n) - 1);
            for (int k = 0; k < 3; k++) {
                if (k) strncat(b, ",", n - strnlen(b, n) - 1);
                cost_fmt_exact(b, n, r[k]);
            }
        }
    } else
        snprintf(out->coeffs, sizeof out->coeffs, "cost=profile cost_id=%lld (per-operator curves: in the "
                 "calibration database)", (long long) cc->id);
}

/* Resolved to the roofline or the learned model (auto with no usable calibrated
 * model): that model. */
static const cost_model *calib_delegate(const cost_model *m)
{
    const cost_calib *c = m->state;
    if (c && c->c && c->c->kind == CC_LEARNED) return &c->c->lm;
    return c && c->c && c->c->kind == CC_ROOFLINE ? &c->c->roof : NULL;
}

static const cost_ops CALIB_ROWS[] = {
    { "auto", "the best calibrated model stored for the pool's model, GPU, tp and weights (lowest cross-validated error), "
      "else the learned model (the roofline where the pool gives its keys: compute_eff, memory_eff, ...)",
      CALIB_KEYS, calib_parse, calib_build, NULL, calib_ms, calib_free, calib_describe, calib_delegate,
      calib_overhead_ms, NULL },
    { "fitted", "the parametric step model fitted to measured steps (latsim calib fit); cost_id picks one",
      CALIB_KEYS, calib_parse, calib_build, NULL, calib_ms, calib_free, calib_describe, calib_delegate,
      calib_overhead_ms, NULL },
    { "profile", "per-operator measurements interpolated (latsim calib fit profile); cost_id picks one",
      CALIB_KEYS, calib_parse, calib_build, NULL, calib_ms, calib_free, calib_describe, calib_delegate,
      calib_overhead_ms, NULL },
};

int ccost_register(void)
{
    for (size_t i = 0; i < sizeof CALIB_ROWS / sizeof CALIB_ROWS[0]; i++)
        if (cost_register(&CALIB_ROWS[i]) != 0) return -1;
    return clearn_register();
}

/* ---- a fitted model given by its coefficients (the observed-run fit) ------------ */

int ccost_use_fitted(cost_model *m, const cfitted *f, const char *source)
{
    cost_calib *c = calloc(1, sizeof *c);
    ccost *cc = c ? calloc(1, sizeof *cc) : NULL;
    if (!cc) {
        free(c);
        return -1;
    }
    c->roof = cost_roofline_defaults;
    cc->roof.hw = m->hw;
    if (cost_init(&cc->roof, "roofline", &c->roof) != 0) {
        free(cc);
        free(c);
        return -1;
    }
    cc->kind = CC_FITTED;
    cc->tp = m->hw.tp >= 1 ? m->hw.tp : 1;
    cc->fitted = *f;
    cc->mape = NAN;
    cc->r_compute = cc->r_memory = cc->r_link = 1;
    snprintf(cc->source, sizeof cc->source, "%s", source);
    snprintf(cc->source_kind, sizeof cc->source_kind, "%s", source);
    snprintf(cc->range, sizeof cc->range, "measured");
    mark_staged(cc, &m->hw);
    c->c = cc;
    cost_free(m);
    m->ops = cost_find("fitted");
    m->state = c;
    prepare_eval(cc);
    return 0;
}

void ccost_set_coefs(cost_model *m, const double *coef)
{
    cost_calib *c = m->state;
    if (!c || !c->c || c->c->kind != CC_FITTED) return;
    memcpy(c->c->fitted.c, coef, sizeof c->c->fitted.c);
    prepare_eval(c->c);
}
