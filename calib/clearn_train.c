/* clearn_train.c -- training and cross-validation of the learned step model
 * (clearn.h; the corpus and its provenance: tests/data/corpus/README.md).
 *
 * Each measurement becomes a list of steps with their counts, priced by
 * clearn_step_ms with the coefficients of its class (global + vendor + link
 * class + GPU + engine offsets):
 *   batch  B prompts of L tokens generating L tokens (Argonne's static batches):
 *          the prefill of B x L tokens in steps of the engine's token budget, then
 *          L - 1 decode steps of B sequences at contexts L + 1 .. 2L - 1 (their sum
 *          by Simpson's rule on 5 contexts: the step time is piecewise linear in
 *          the context); when B x 2L tokens do not fit the KV cache (0.9 of the
 *          memory less the weights and 1 GiB per GPU), in waves of the sequences
 *          that fit;
 *   ttft   the same prefill alone;
 *   step   one measured step (BLOOM-176B prefill and decode steps);
 *   log    a decode step from an engine's periodic metrics in a window without
 *          prompt tokens: running / generated tokens per second, at the mean
 *          context the KV usage gives;
 *   kernel one row of a Vidur operator profile (A100, H100): the kernels of the
 *          linear part of a layer on T tokens timed alone, x layers (engine level
 *          `kernel`; priced without launch, host or collective time).
 * Engines are told apart as the software they are: Argonne's vLLM of 2024
 * (`vllm-2024`) is not the vLLM of the shipped engine log (`vllm`, what `engine =
 * vllm` means), DeepSpeed-MII on A100 (`deepspeed-mii`) not Habana's DeepSpeed on
 * Gaudi2 (`deepspeed-gaudi`).
 * The residual of a row is log(predicted / measured), weighted so that every (GPU,
 * engine, kind) class weighs as much as the mean class; the offsets carry a ridge
 * penalty (LAMBDA), the global values a weak prior (PRIOR); a GPU's offsets are its
 * hardware's only (not the per-step, per-layer and per-sequence host costs or the
 * decode kernel's grouped-query reuse: those are the engine's and the vendor's
 * software), and the fit is GSL's
 * trust-region Levenberg-Marquardt for large systems (gsl_multilarge_nlinear: J^T J
 * accumulated row by row, each row touching at most LP_N (1 + LG_N) columns) with
 * the Jacobian by the chain rule from each row's derivatives in its LP_N
 * coefficients.  A held-out fit starts from the full fit, its held-out offsets 0
 * (its rows gone, the ridge takes them to 0).
 */
#include "clearn.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <gsl/gsl_blas.h>
#include <gsl/gsl_multilarge_nlinear.h>
#include <gsl/gsl_vector.h>

#include "ccsv.h"
#include "core/catalog.h"
#include "engine/errmsg.h"
#include "latsim/band.h"

#define MAXSTEP 16
#define MAXLEV 64
#define MAXMOD 32
#ifndef LAMBDA
#define LAMBDA 0.05         /* ridge weight of an offset (per unit on the learned scale): the
                               value of 8, 2, 0.5, 0.15, 0.05, 0.01 with the smallest held-out
                               errors (docs/learned.md; LATSIM_LEARN_LAMBDA re-runs one) */
#endif
#define NITER 60            /* Levenberg-Marquardt iterations at most */

/* The prior of the global values (learned scale) and its weight: weak where the
 * corpus measures the coefficient, strong where it cannot (lowp_eff: no fp8 rows). */
static const double PRIOR[LP_N] = {
    0.405,  /* compute_eff 0.6 */
    4.16,   /* t_half 64 tokens */
    1.10,   /* memory_eff 0.75 */
    -0.85,  /* overlap 0.3 */
    3.0,    /* launch_us 20 */
    1.6,    /* graph_us 5 */
    0.69,   /* fixed_ms 2 */
    3.0,    /* seq_us 20 */
    0.405,  /* link_eff 0.6 */
    2.3,    /* ar_lat_us 10 */
    0.0,    /* attn_eff 0.5 */
    0.0,    /* lowp_eff 0.5: fp8 kernels at half the share of their peak that bf16 reaches */
    0.0,    /* kv_eff 0.5 */
    0.0,    /* gqa_reuse 0.5 */
};
static const double PRIOR_W[LP_N] = { 0.01, 0.01, 0.01, 0.01, 0.01, 0.01, 0.01, 0.01, 0.01, 0.01, 0.01, 1.0, 0.01, 0.01 };

enum { K_BATCH, K_TTFT, K_STEP, K_LOG, K_KERNEL, K_N };
static const char *const KIND_NAMES[K_N] = { "batch", "ttft", "step", "log", "kernel" };

typedef struct trow {
    int kind;
    int lv[LG_N];           /* its level in each group (index into the level list) */
    int model;              /* index into the models */
    cost_hw hw;
    int n;
    cost_step st[MAXSTEP];
    double w[MAXSTEP];      /* how many steps each stands for */
    double meas_ms;         /* measured, ms */
    double wt;              /* its residual's weight in the fit */
} trow;

typedef struct tlevel {
    int group;
    char name[48];
    int rows;
} tlevel;

typedef struct tmodel {
    char name[48], hf[80];
    model_spec m;
} tmodel;

typedef struct corpus {
    sqlite3 *db;
    trow *rows;
    int n, cap;
    tlevel lev[MAXLEV];
    int nlev;
    tmodel mod[MAXMOD];
    int nmod;
    char map_hw[32][2][48];  /* hardware name -> catalog GPU */
    int nhw;
    char map_fw[16][2][32];  /* framework -> engine */
    const char *cur_gpu;     /* the GPU and model of the operator profile being read */
    const char *cur_model;
    int nfw;
    int skipped;             /* rows of unknown model or hardware */
    int floored;             /* rows measured faster than the hardware floor (broken runs) */
} corpus;

static int level(corpus *c, int group, const char *name)
{
    for (int i = 0; i < c->nlev; i++)
        if (c->lev[i].group == group && !strcasecmp(c->lev[i].name, name)) return i;
    if (c->nlev == MAXLEV) return -1;
    c->lev[c->nlev].group = group;
    snprintf(c->lev[c->nlev].name, sizeof c->lev[0].name, "%s", name);
    c->lev[c->nlev].rows = 0;
    return c->nlev++;
}

static trow *new_row(corpus *c)
{
    if (c->n == c->cap) {
        int cap = c->cap ? 2 * c->cap : 1024;
        trow *r = realloc(c->rows, (size_t) cap * sizeof *r);
        if (!r) return NULL;
        c->rows = r;
        c->cap = cap;
    }
    trow *r = &c->rows[c->n];
    memset(r, 0, sizeof *r);
    return r;
}

/* Fills R's hardware and class for GPU, ENGINE, model index MI and TP.  Returns 0, 1 unknown GPU. */
static int set_class(corpus *c, trow *r, const char *gpu, const char *engine, int mi, int tp, char *err, size_t errlen)
{
    gpu_spec g;
    char e2[256];
    if (catalog_gpu(c->db, gpu, &g, e2, sizeof e2) != 0) {
        errmsg_set(err, errlen, "corpus: GPU %s: %s", gpu, e2);
        return -1;
    }
    r->hw.have_hw = 1;
    r->hw.gpu = g;
    r->hw.model = c->mod[mi].m;
    r->hw.tp = tp;
    r->hw.kv_bytes = 2;
    cost_hw_set_weights(&r->hw, "bf16");
    snprintf(r->hw.engine, sizeof r->hw.engine, "%s", engine);
    r->model = mi;
    const char *names[LG_N] = { clearn_vendor(&g), clearn_link_class(&g), g.name, engine };
    for (int k = 0; k < LG_N; k++)
        if ((r->lv[k] = level(c, k, names[k])) < 0) {
            errmsg_set(err, errlen, "corpus: more than %d classes", MAXLEV);
            return -1;
        }
    return 0;
}

/* Keeps row R (the next of C) unless it was measured faster than the hardware floor
 * of its steps: a run that did not do the work (Argonne's 2048-token prompts on a
 * 2048-token model, 0.05 s for a batch that cannot take under 13 s). */
static void keep(corpus *c, const trow *r)
{
    double floor_ms = 0;
    for (int i = 0; i < r->n; i++) floor_ms += r->w[i] * clearn_floor_ms(&r->hw, &r->st[i]);
    if (r->meas_ms < floor_ms) c->floored++;
    else c->n++;
}

static int find_model(const corpus *c, const char *key)
{
    for (int i = 0; i < c->nmod; i++)
        if (!strcasecmp(c->mod[i].hf, key) || !strcasecmp(c->mod[i].name, key)) return i;
    return -1;
}

static const char *cell(const ccsv_row *row, const char *col)
{
    int i = ccsv_col(row, col);
    return i >= 0 && (size_t) i < row->nfield ? row->field[i] : "";
}

/* ---- reading the corpus -------------------------------------------------------------- */

static int on_model(void *ctx, const ccsv_row *row, char *err, size_t errlen)
{
    corpus *c = ctx;
    if (c->nmod == MAXMOD) return errmsg_set(err, errlen, "%s:%ld: more than %d models", row->path, row->line, MAXMOD), -1;
    tmodel *t = &c->mod[c->nmod];
    memset(t, 0, sizeof *t);
    snprintf(t->name, sizeof t->name, "%s", cell(row, "name"));
    snprintf(t->hf, sizeof t->hf, "%s", cell(row, "hf_id"));
    const char *cat = cell(row, "catalog");
    if (cat[0]) {
        char e2[256];
        if (catalog_model(c->db, cat, &t->m, e2, sizeof e2) != 0)
            return errmsg_set(err, errlen, "%s:%ld: column catalog: %s", row->path, row->line, e2), -1;
    } else {
        static const char *cols[] = { "layers", "hidden", "heads", "kv_heads", "head_dim", "intermediate", "vocab" };
        int *dst[] = { &t->m.layers, &t->m.hidden, &t->m.heads, &t->m.kv_heads, &t->m.head_dim, &t->m.intermediate,
                       &t->m.vocab };
        for (int i = 0; i < 7; i++) {
            long v;
            if (ccsv_int(row, ccsv_col(row, cols[i]), 1, 1000000, &v, err, errlen)) return -1;
            *dst[i] = (int) v;
        }
        if (ccsv_range(row, ccsv_col(row, "params"), 1e6, 1e14, "", &t->m.params, err, errlen)) return -1;
        t->m.context = 4096;
        snprintf(t->m.weights, sizeof t->m.weights, "bf16");
    }
    snprintf(t->m.name, sizeof t->m.name, "%s", t->name);
    c->nmod++;
    return 0;
}

static int on_gpu(void *ctx, const ccsv_row *row, char *err, size_t errlen)
{
    corpus *c = ctx;
    (void) err;
    (void) errlen;
    if (c->nhw < 32) {
        snprintf(c->map_hw[c->nhw][0], 48, "%s", cell(row, "hardware"));
        snprintf(c->map_hw[c->nhw][1], 48, "%s", cell(row, "gpu"));
        c->nhw++;
    }
    return 0;
}

static int on_engine(void *ctx, const ccsv_row *row, char *err, size_t errlen)
{
    corpus *c = ctx;
    (void) err;
    (void) errlen;
    if (c->nfw < 16) {
        snprintf(c->map_fw[c->nfw][0], 32, "%s", cell(row, "framework"));
        snprintf(c->map_fw[c->nfw][1], 32, "%s", cell(row, "engine"));
        c->nfw++;
    }
    return 0;
}

/* The engine's prefill token budget: vLLM of Argonne's era (`vllm-2024`, no chunked
 * prefill) max(max_model_len, 2048), DeepSpeed-FastGen's SplitFuse budget 768
 * (`deepspeed-mii`), llama.cpp's micro-batch 512, else (TensorRT-LLM's max_num_tokens,
 * Gaudi's DeepSpeed) 8192. */
static double budget_of(const char *engine, const model_spec *m)
{
    if (!strcmp(engine, "vllm-2024") || !strcmp(engine, "vllm")) return m->context > 2048 ? m->context : 2048;
    if (!strcmp(engine, "deepspeed-mii")) return 768;
    if (!strcmp(engine, "llamacpp")) return 512;
    return 8192;
}

/* Sequences of CTX tokens the KV cache of R's replica holds: 0.9 of its memory less
 * the weights and 1 GiB of activations per GPU, at least 1. */
static double kv_fit(const cost_hw *h, double ctx)
{
    double tp = h->tp >= 1 ? h->tp : 1;
    double free_b = tp * (0.9 * h->gpu.mem_gib - 1.0) * 1073741824.0 - h->model.params * h->weight_bytes;
    double per_tok = catalog_kv_elems_per_token(&h->model) * h->kv_bytes;
    double n = floor(free_b / per_tok / ctx);
    return n >= 1 ? n : 1;
}

/* The prefill of B prompts of L tokens as steps of the engine's budget into R, REP
 * times (nothing when REP is 0). */
static void add_prefill(trow *r, double B, double L, double rep)
{
    if (rep <= 0 || B <= 0) return;
    double N = B * L, budget = budget_of(r->hw.engine, &r->hw.model);
    double steps = ceil(N / budget);
    cost_step s = { 0 };
    s.prefill_tokens = (int64_t) llround(N / steps);
    s.prefill_pairs = B * L * (L + 1) / 2 / steps;
    double seqs = ceil(B / steps);
    s.prefill_seqs = (int32_t) (seqs < 1 ? 1 : seqs);
    r->st[r->n] = s;
    r->w[r->n++] = steps * rep;
}

/* L - 1 decode steps of B sequences at contexts L + 1 .. 2L - 1, REP times: Simpson's
 * rule on the midpoint integral over [0.5, n + 0.5]. */
static void add_decode(trow *r, double B, double L, double rep)
{
    double n = L - 1;
    if (n < 1 || rep <= 0 || B <= 0) return;
    static const double SW[5] = { 1, 4, 2, 4, 1 };
    for (int j = 0; j < 5; j++) {
        double i = 0.5 + n * j / 4.0;
        cost_step s = { 0 };
        s.decode_seqs = (int32_t) B;
        s.kv_tokens = (int64_t) llround(B * (L + i));
        r->st[r->n] = s;
        r->w[r->n++] = rep * n * SW[j] / 12.0;
    }
}

static int on_argonne(void *ctx, const ccsv_row *row, char *err, size_t errlen)
{
    corpus *c = ctx;
    const char *hw = cell(row, "hardware"), *fw = cell(row, "framework");
    const char *gpu = NULL, *engine = NULL;
    for (int i = 0; i < c->nhw; i++)
        if (!strcmp(c->map_hw[i][0], hw)) gpu = c->map_hw[i][1];
    for (int i = 0; i < c->nfw; i++)
        if (!strcmp(c->map_fw[i][0], fw)) engine = c->map_fw[i][1];
    int mi = find_model(c, cell(row, "model"));
    if (!gpu || !engine || mi < 0) {
        c->skipped++;
        return 0;
    }
    long tp, L, B;
    double lat;
    if (ccsv_int(row, ccsv_col(row, "tp"), 1, 64, &tp, err, errlen)) return -1;
    if (ccsv_int(row, ccsv_col(row, "length"), 1, 1000000, &L, err, errlen)) return -1;
    if (ccsv_int(row, ccsv_col(row, "batch"), 1, 100000, &B, err, errlen)) return -1;
    if (ccsv_range(row, ccsv_col(row, "latency_s"), 1e-6, 1e6, "s", &lat, err, errlen)) return -1;
    trow *r = new_row(c);
    if (!r) return errmsg_set(err, errlen, "out of memory"), -1;
    if (set_class(c, r, gpu, engine, mi, (int) tp, err, errlen)) return -1;
    r->kind = strcmp(cell(row, "kind"), "ttft") ? K_BATCH : K_TTFT;
    /* The KV cache holds the whole batch only when B x 2L tokens fit: otherwise the
     * engine runs it in waves of the sequences that fit (preempting the others). */
    double waves = 1, b = (double) B;
    if (r->kind == K_BATCH) {
        double fit = kv_fit(&r->hw, 2.0 * L);
        if (fit < B) {
            waves = ceil((double) B / fit);
            b = fit;
        }
    }
    double last = (double) B - (waves - 1) * b;
    if (r->kind == K_BATCH) {
        add_prefill(r, b, (double) L, waves - 1);
        add_decode(r, b, (double) L, waves - 1);
        add_prefill(r, last, (double) L, 1);
        add_decode(r, last, (double) L, 1);
    } else
        add_prefill(r, (double) B, (double) L, 1);
    r->meas_ms = lat * 1e3;
    keep(c, r);
    return 0;
}

static int on_steps(void *ctx, const ccsv_row *row, char *err, size_t errlen)
{
    corpus *c = ctx;
    int mi = find_model(c, cell(row, "model"));
    if (mi < 0) {
        c->skipped++;
        return 0;
    }
    long tp, B, T;
    double ms;
    if (ccsv_int(row, ccsv_col(row, "tp"), 1, 64, &tp, err, errlen)) return -1;
    if (ccsv_int(row, ccsv_col(row, "batch_size"), 1, 100000, &B, err, errlen)) return -1;
    if (ccsv_int(row, ccsv_col(row, "tokens"), 1, 10000000, &T, err, errlen)) return -1;
    if (ccsv_range(row, ccsv_col(row, "step_ms"), 1e-6, 1e9, "ms", &ms, err, errlen)) return -1;
    trow *r = new_row(c);
    if (!r) return errmsg_set(err, errlen, "out of memory"), -1;
    if (set_class(c, r, cell(row, "gpu"), "splitwise", mi, (int) tp, err, errlen)) return -1;
    r->kind = K_STEP;
    cost_step s = { 0 };
    if (!strcmp(cell(row, "phase"), "prefill")) {
        s.prefill_tokens = B * T;
        s.prefill_pairs = (double) B * T * (T + 1) / 2;
        s.prefill_seqs = (int32_t) B;
    } else {
        s.decode_seqs = (int32_t) B;
        s.kv_tokens = B * T;
    }
    r->st[0] = s;
    r->w[0] = 1;
    r->n = 1;
    r->meas_ms = ms;
    keep(c, r);
    return 0;
}

/* The engine log of the real vLLM run (RTX 4090, Llama-3.1-8B, 2588 KV blocks of 16
 * tokens: its meta.json): windows without prompt tokens are decode steps. */
static int on_log(void *ctx, const ccsv_row *row, char *err, size_t errlen)
{
    corpus *c = ctx;
    double pt, gt, run, kv;
    if (ccsv_num(row, ccsv_col(row, "prompt_throughput"), &pt, err, errlen)) return -1;
    if (ccsv_num(row, ccsv_col(row, "gen_throughput"), &gt, err, errlen)) return -1;
    if (ccsv_num(row, ccsv_col(row, "running"), &run, err, errlen)) return -1;
    if (ccsv_num(row, ccsv_col(row, "kv_cache_pct"), &kv, err, errlen)) return -1;
    if (pt != 0 || !(gt > 0) || run < 1) return 0;
    int mi = find_model(c, "llama-3.1-8b");
    if (mi < 0) return 0;
    trow *r = new_row(c);
    if (!r) return errmsg_set(err, errlen, "out of memory"), -1;
    if (set_class(c, r, "rtx-4090", "vllm", mi, 1, err, errlen)) return -1;
    r->kind = K_LOG;
    cost_step s = { 0 };
    s.decode_seqs = (int32_t) run;
    s.kv_tokens = (int64_t) llround(kv / 100.0 * 2588 * 16);
    r->st[0] = s;
    r->w[0] = 1;
    r->n = 1;
    r->meas_ms = 1e3 * run / gt;
    keep(c, r);
    return 0;
}

/* One row of a Vidur operator profile (tests/data/vidur/compute): the kernels of one
 * layer's linear part (projections, MLP, norms, rotary, residual adds; no attention
 * kernel, no all-reduce) on NUM_TOKENS tokens at TP, timed with CUDA events: their
 * medians' sum x the model's layers is the GEMM part of a prefill of that many
 * tokens without attention, engine level `kernel`. */
static int on_vidur(void *ctx, const ccsv_row *row, char *err, size_t errlen)
{
    corpus *c = ctx;
    if (row->line % 4) return 0;   /* every fourth token count: the profile is dense in it */
    static const char *const OPS[] = { "input_layernorm", "attn_pre_proj", "attn_rope", "attn_post_proj",
                                       "post_attention_layernorm", "mlp_up_proj", "mlp_act", "mlp_down_proj", "add" };
    long T, tp;
    if (ccsv_int(row, ccsv_col(row, "num_tokens"), 1, 10000000, &T, err, errlen)) return -1;
    if (ccsv_int(row, ccsv_col(row, "num_tensor_parallel_workers"), 1, 64, &tp, err, errlen)) return -1;
    double layer = 0;
    for (size_t i = 0; i < sizeof OPS / sizeof OPS[0]; i++) {
        char col[64];
        double v;
        snprintf(col, sizeof col, "time_stats.%s.median", OPS[i]);
        int k = ccsv_col(row, col);
        if (k < 0 || (size_t) k >= row->nfield || !row->field[k][0]) continue;   /* an op the model has not */
        if (ccsv_num(row, k, &v, err, errlen)) return -1;
        layer += v;
    }
    int mi = find_model(c, c->cur_model);
    if (mi < 0 || !(layer > 0)) {
        c->skipped++;
        return 0;
    }
    trow *r = new_row(c);
    if (!r) return errmsg_set(err, errlen, "out of memory"), -1;
    if (set_class(c, r, c->cur_gpu, "kernel", mi, (int) tp, err, errlen)) return -1;
    r->kind = K_KERNEL;
    cost_step s = { 0 };
    s.prefill_tokens = T;
    s.prefill_seqs = 1;
    r->st[0] = s;
    r->w[0] = 1;
    r->n = 1;
    r->meas_ms = layer * r->hw.model.layers;
    keep(c, r);
    return 0;
}

static void corpus_free(corpus *c)
{
    free(c->rows);
    if (c->db) sqlite3_close(c->db);
    memset(c, 0, sizeof *c);
}

static int corpus_read(const char *dir, corpus *c, char *err, size_t errlen)
{
    memset(c, 0, sizeof *c);
    /* The built-in catalog alone (an in-memory database): the user's entries never
     * change what is trained. */
    if (sqlite3_open(":memory:", &c->db) != SQLITE_OK || catalog_init(c->db, err, errlen) != 0) {
        if (!err[0]) errmsg_set(err, errlen, "cannot open an in-memory catalog");
        return -1;
    }
    char p[1024];
    struct { const char *file; ccsv_fn fn; } parts[] = {
        { "models.csv", on_model }, { "gpus.csv", on_gpu }, { "engines.csv", on_engine },
        { "argonne.csv", on_argonne }, { "../splitwise_bloom176b.csv", on_steps },
        { "vllm_rtx4090_llama31_8b_timeseries.csv", on_log },
    };
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
        snprintf(p, sizeof p, "%s/%s", dir, parts[i].file);
        if (ccsv_read(p, parts[i].fn, c, err, errlen) != 0) return -1;
    }
    static const char *const VIDUR[][3] = {
        { "a100", "llama-2-7b", "a100/meta-llama/Llama-2-7b-hf" },
        { "a100", "llama-3-8b", "a100/meta-llama/Meta-Llama-3-8B" },
        { "h100", "llama-2-7b", "h100/meta-llama/Llama-2-7b-hf" },
    };
    for (size_t i = 0; i < sizeof VIDUR / sizeof VIDUR[0]; i++) {
        snprintf(p, sizeof p, "%s/../vidur/compute/%s/mlp.csv", dir, VIDUR[i][2]);
        c->cur_gpu = VIDUR[i][0];
        c->cur_model = VIDUR[i][1];
        if (ccsv_read(p, on_vidur, c, err, errlen) != 0) return -1;
    }
    for (int i = 0; i < c->n; i++)
        for (int k = 0; k < LG_N; k++) c->lev[c->rows[i].lv[k]].rows++;
    /* Each row's weight: every (GPU, engine, kind) class weighs as much in all as
     * the mean class (A100's 700 static batches do not outvote one engine log). */
    int ncls = 0;
    for (int i = 0; i < c->n; i++) {
        int same = 0, first = 1;
        for (int j = 0; j < c->n; j++) {
            const trow *a = &c->rows[i], *b = &c->rows[j];
            if (a->lv[LG_GPU] == b->lv[LG_GPU] && a->lv[LG_ENGINE] == b->lv[LG_ENGINE] && a->kind == b->kind) {
                same++;
                if (j < i) first = 0;
            }
        }
        ncls += first;
        c->rows[i].wt = same;
    }
    for (int i = 0; i < c->n; i++)
        c->rows[i].wt = sqrt((double) c->n / ncls / c->rows[i].wt);
    return 0;
}

/* ---- the model of a row ------------------------------------------------------------ */

/* The learned-scale coefficients of row R from parameters X (global, then LP_N per
 * level), leaving out level SKIP (-1: none). */
static void row_theta(const corpus *c, const trow *r, const double *x, int skip, double *th)
{
    (void) c;
    for (int j = 0; j < LP_N; j++) th[j] = x[j];
    for (int k = 0; k < LG_N; k++) {
        int l = r->lv[k];
        if (l == skip) continue;
        for (int j = 0; j < LP_N; j++) th[j] += x[LP_N * (1 + l) + j];
    }
}

static double row_pred(const trow *r, const double *th)
{
    clearn_coef co;
    clearn_physical(th, &co);
    double t = 0;
    for (int i = 0; i < r->n; i++) {
        clearn_parts p;
        double s = clearn_step_ms(&r->hw, &co, &r->st[i], &p);
        /* An operator profile times the kernels alone: no launch gaps, host work or collectives. */
        if (r->kind == K_KERNEL) s -= p.launch + p.cpu + p.allreduce + p.alltoall;
        t += r->w[i] * s;
    }
    return t;
}

static double row_roofline(const trow *r)
{
    double t = 0;
    for (int i = 0; i < r->n; i++) t += r->w[i] * cost_roofline_breakdown(&r->hw, &cost_roofline_defaults, &r->st[i], NULL);
    return t;
}

/* ---- the fit ----------------------------------------------------------------------- */

typedef struct fitctx {
    const corpus *c;
    const char *use;    /* rows in the fit (1) */
    int nuse;
    int np;             /* parameters: LP_N (1 + levels) */
    double *d;          /* d log(pred) / d coefficient, LP_N per row (at xd) */
    double *xd;         /* the parameters d was computed at */
    int have_d;
} fitctx;

/* 1 when the offset of coefficient J applies to group G.  The link class carries
 * the collectives' coefficients only; a GPU's offsets are its hardware's (how much
 * of its peaks and link it reaches), not the host software's per-step, per-layer
 * and per-sequence costs or the decode kernel's grouped-query reuse, which are the
 * engine's and the vendor's software stack's.  (A GPU measured under one engine
 * only would otherwise take that engine's costs with it.) */
static int applies(int g, int j)
{
    if (g == LG_LINK) return j == LP_LINK || j == LP_ARLAT;
    if (g == LG_GPU)
        return j != LP_LAUNCH && j != LP_GRAPH && j != LP_FIXED && j != LP_SEQ && j != LP_GQA;
    return 1;
}

/* The weight of the penalty on parameter K (> LP_N: an offset; an offset that does
 * not apply is held at 0). */
static double pen_of(const corpus *c, int k)
{
    if (k < LP_N) return sqrt(PRIOR_W[k]);
    int l = k / LP_N - 1, j = k % LP_N;
    static double lam = -1;
    if (lam < 0) {
        const char *e = getenv("LATSIM_LEARN_LAMBDA");   /* choosing the ridge: another weight */
        lam = e && atof(e) > 0 ? atof(e) : LAMBDA;
    }
    return applies(c->lev[l].group, j) ? sqrt(lam) : 1e3;
}

static double prior_of(int k) { return k < LP_N ? PRIOR[k] : 0; }

static int fit_f(const gsl_vector *xv, void *p, gsl_vector *f)
{
    const fitctx *F = p;
    const corpus *c = F->c;
    const double *x = xv->data;
    size_t k = 0;
    for (int i = 0; i < c->n; i++) {
        if (!F->use[i]) continue;
        double th[LP_N];
        row_theta(c, &c->rows[i], x, -1, th);
        gsl_vector_set(f, k++, c->rows[i].wt * log(row_pred(&c->rows[i], th) / c->rows[i].meas_ms));
    }
    for (int q = 0; q < F->np; q++) gsl_vector_set(f, k++, pen_of(c, q) * (x[q] - prior_of(q)));
    return GSL_SUCCESS;
}

/* Each used row's derivatives in its LP_N coefficients at X (forward differences). */
static void derivs(fitctx *F, const double *x)
{
    if (F->have_d && !memcmp(F->xd, x, (size_t) F->np * sizeof *x)) return;
    const corpus *c = F->c;
    for (int i = 0; i < c->n; i++) {
        if (!F->use[i]) continue;
        const trow *r = &c->rows[i];
        double th[LP_N], *d = F->d + (size_t) i * LP_N;
        row_theta(c, r, x, -1, th);
        double base = log(row_pred(r, th));
        for (int j = 0; j < LP_N; j++) {
            double h = 1e-6, s = th[j];
            th[j] = s + h;
            d[j] = (log(row_pred(r, th)) - base) / h;
            th[j] = s;
        }
    }
    memcpy(F->xd, x, (size_t) F->np * sizeof *x);
    F->have_d = 1;
}

/* The columns of row R's nonzero Jacobian entries for coefficient J, into COL; returns how many. */
static int cols_of(const trow *r, int j, int *col)
{
    int n = 0;
    col[n++] = j;
    for (int g = 0; g < LG_N; g++)
        if (applies(g, j)) col[n++] = LP_N * (1 + r->lv[g]) + j;
    return n;
}

/* gsl_multilarge_nlinear's Jacobian: v = J u (or J^T u) and J^T J, from the rows'
 * derivatives (each row touches at most LP_N (1 + LG_N) columns). */
static int fit_df(CBLAS_TRANSPOSE_t tr, const gsl_vector *xv, const gsl_vector *u, void *p, gsl_vector *v,
                  gsl_matrix *JTJ)
{
    fitctx *F = p;
    const corpus *c = F->c;
    derivs(F, xv->data);
    if (v) gsl_vector_set_zero(v);
    if (JTJ) gsl_matrix_set_zero(JTJ);
    size_t k = 0;
    int col[LP_N][1 + LG_N], nc[LP_N];
    for (int i = 0; i < c->n; i++) {
        if (!F->use[i]) continue;
        const trow *r = &c->rows[i];
        double d[LP_N];
        for (int j = 0; j < LP_N; j++) d[j] = r->wt * F->d[(size_t) i * LP_N + j];
        for (int j = 0; j < LP_N; j++) nc[j] = cols_of(r, j, col[j]);
        if (u && v) {
            if (tr == CblasNoTrans) {
                double s = 0;
                for (int j = 0; j < LP_N; j++)
                    for (int a = 0; a < nc[j]; a++) s += d[j] * gsl_vector_get(u, (size_t) col[j][a]);
                gsl_vector_set(v, k, s);
            } else {
                double uk = gsl_vector_get(u, k);
                for (int j = 0; j < LP_N; j++)
                    for (int a = 0; a < nc[j]; a++) *gsl_vector_ptr(v, (size_t) col[j][a]) += d[j] * uk;
            }
        }
        if (JTJ)
            for (int j = 0; j < LP_N; j++)
                for (int a = 0; a < nc[j]; a++)
                    for (int j2 = 0; j2 < LP_N; j2++)
                        for (int b = 0; b < nc[j2]; b++)
                            *gsl_matrix_ptr(JTJ, (size_t) col[j][a], (size_t) col[j2][b]) += d[j] * d[j2];
        k++;
    }
    for (int q = 0; q < F->np; q++, k++) {
        double w = pen_of(c, q);
        if (u && v) {
            if (tr == CblasNoTrans) gsl_vector_set(v, k, w * gsl_vector_get(u, (size_t) q));
            else *gsl_vector_ptr(v, (size_t) q) += w * gsl_vector_get(u, k);
        }
        if (JTJ) *gsl_matrix_ptr(JTJ, (size_t) q, (size_t) q) += w * w;
    }
    return GSL_SUCCESS;
}

/* Fits parameters X (np values, started at X0, or at the prior when X0 is NULL) to
 * the rows in USE.  Returns 0 or -1 + ERR. */
static int fit(const corpus *c, const char *use, const double *x0v, double *x, char *err, size_t errlen)
{
    fitctx F = { c, use, 0, LP_N * (1 + c->nlev), NULL, NULL, 0 };
    for (int i = 0; i < c->n; i++) F.nuse += use[i] != 0;
    size_t nres = (size_t) F.nuse + (size_t) F.np;
    F.d = calloc((size_t) c->n * LP_N, sizeof *F.d);
    F.xd = calloc((size_t) F.np, sizeof *F.xd);
    gsl_multilarge_nlinear_parameters fp = gsl_multilarge_nlinear_default_parameters();
    fp.solver = gsl_multilarge_nlinear_solver_cholesky;
    gsl_multilarge_nlinear_workspace *w =
        F.d && F.xd ? gsl_multilarge_nlinear_alloc(gsl_multilarge_nlinear_trust, &fp, nres, (size_t) F.np) : NULL;
    gsl_vector *x0 = gsl_vector_calloc((size_t) F.np);
    if (!w || !x0) {
        if (w) gsl_multilarge_nlinear_free(w);
        gsl_vector_free(x0);
        free(F.d);
        free(F.xd);
        return errmsg_set(err, errlen, "out of memory"), -1;
    }
    for (int q = 0; q < F.np; q++) gsl_vector_set(x0, (size_t) q, x0v ? x0v[q] : prior_of(q));
    gsl_multilarge_nlinear_fdf fdf = { fit_f, fit_df, NULL, nres, (size_t) F.np, &F, 0, 0, 0, 0 };
    gsl_multilarge_nlinear_init(x0, &fdf, w);
    int info;
    gsl_multilarge_nlinear_driver(NITER, 1e-8, 1e-8, 1e-8, NULL, NULL, &info, w);
    memcpy(x, gsl_multilarge_nlinear_position(w)->data, (size_t) F.np * sizeof *x);
    gsl_multilarge_nlinear_free(w);
    gsl_vector_free(x0);
    free(F.d);
    free(F.xd);
    return 0;
}

/* ---- cross-validation ---------------------------------------------------------------- */

typedef struct cvres {
    double *pred_full;      /* in-sample prediction, ms */
    double *pred_gpu;       /* with the row's GPU held out */
    double *pred_engine;    /* with its engine held out */
    double *pred_model;     /* with its model held out */
    double *roof;           /* the roofline's (defaults), ms */
    double *x;              /* the full fit's parameters */
} cvres;

static void cv_free(cvres *v)
{
    free(v->pred_full);
    free(v->pred_gpu);
    free(v->pred_engine);
    free(v->pred_model);
    free(v->roof);
    free(v->x);
    memset(v, 0, sizeof *v);
}

/* Fits without the rows of level HOLD (group G) -- or of model HOLD when G < 0 -- and
 * predicts them into PRED with the held-out level's offsets left out. */
static int hold_out(const corpus *c, int g, int hold, const double *xfull, double *pred, char *err, size_t errlen)
{
    char *use = malloc((size_t) c->n);
    double *x = calloc((size_t) LP_N * (1 + c->nlev), sizeof *x);
    if (!use || !x) {
        free(use);
        free(x);
        return errmsg_set(err, errlen, "out of memory"), -1;
    }
    int any = 0;
    for (int i = 0; i < c->n; i++) {
        int out = g < 0 ? c->rows[i].model == hold : c->rows[i].lv[g] == hold;
        use[i] = !out;
        any |= out;
    }
    int rc = 0;
    if (any && (rc = fit(c, use, xfull, x, err, errlen)) == 0)
        for (int i = 0; i < c->n; i++)
            if (!use[i]) {
                double th[LP_N];
                row_theta(c, &c->rows[i], x, g < 0 ? -1 : hold, th);
                pred[i] = row_pred(&c->rows[i], th);
            }
    free(use);
    free(x);
    return rc;
}

static int run_all(const corpus *c, cvres *v, FILE *log, char *err, size_t errlen)
{
    size_t n = (size_t) c->n;
    memset(v, 0, sizeof *v);
    v->pred_full = calloc(n, sizeof(double));
    v->pred_gpu = calloc(n, sizeof(double));
    v->pred_engine = calloc(n, sizeof(double));
    v->pred_model = calloc(n, sizeof(double));
    v->roof = calloc(n, sizeof(double));
    v->x = calloc((size_t) LP_N * (1 + c->nlev), sizeof(double));
    char *use = malloc(n);
    if (!v->pred_full || !v->pred_gpu || !v->pred_engine || !v->pred_model || !v->roof || !v->x || !use) {
        free(use);
        cv_free(v);
        return errmsg_set(err, errlen, "out of memory"), -1;
    }
    memset(use, 1, n);
    int rc = fit(c, use, NULL, v->x, err, errlen);
    free(use);
    for (int i = 0; rc == 0 && i < c->n; i++) {
        double th[LP_N];
        row_theta(c, &c->rows[i], v->x, -1, th);
        v->pred_full[i] = row_pred(&c->rows[i], th);
        v->roof[i] = row_roofline(&c->rows[i]);
    }
    int fast = getenv("LATSIM_LEARN_FAST") != NULL;   /* debugging: the full fit alone */
    for (int l = 0; rc == 0 && !fast && l < c->nlev; l++) {
        int g = c->lev[l].group;
        if (g != LG_GPU && g != LG_ENGINE) continue;
        if (log) fprintf(log, "holding out %s %s (%d rows)\n", clearn_group_names[g], c->lev[l].name, c->lev[l].rows);
        rc = hold_out(c, g, l, v->x, g == LG_GPU ? v->pred_gpu : v->pred_engine, err, errlen);
    }
    for (int m = 0; rc == 0 && !fast && m < c->nmod; m++) {
        if (log) fprintf(log, "holding out model %s\n", c->mod[m].name);
        rc = hold_out(c, -1, m, v->x, v->pred_model, err, errlen);
    }
    if (rc) cv_free(v);
    return rc;
}

/* MAPE (%) of PRED over the rows where SEL (may be NULL: all) holds. */
static double mape(const corpus *c, const double *pred, int g, int lev, int *count)
{
    double s = 0;
    int n = 0;
    for (int i = 0; i < c->n; i++) {
        if (g >= 0 && c->rows[i].lv[g] != lev) continue;
        if (!(pred[i] > 0)) continue;
        s += fabs(pred[i] - c->rows[i].meas_ms) / c->rows[i].meas_ms;
        n++;
    }
    if (count) *count = n;
    return n ? 100.0 * s / n : NAN;
}

/* MAPE (%) of PRED over the rows of GPU level LG and engine level LE. */
static double mape_class(const corpus *c, const double *pred, int lg, int le, int *count)
{
    double s = 0;
    int n = 0;
    for (int i = 0; i < c->n; i++) {
        if (c->rows[i].lv[LG_GPU] != lg || c->rows[i].lv[LG_ENGINE] != le || !(pred[i] > 0)) continue;
        s += fabs(pred[i] - c->rows[i].meas_ms) / c->rows[i].meas_ms;
        n++;
    }
    *count = n;
    return n ? 100.0 * s / n : NAN;
}

/* ---- the outputs --------------------------------------------------------------------- */

static void put_d(FILE *o, double v) { fprintf(o, "%.17g", v); }

static void write_table(const corpus *c, const cvres *v, FILE *o)
{
    fprintf(o, "/* clearn_coef.c -- the learned step model's trained table (clearn.h).\n"
               " * Generated by `latsim calib train --corpus tests/data/corpus --out calib/clearn_coef.c`\n"
               " * from the corpus in tests/data/corpus (README.md there): do not edit; tests/test_learned.c\n"
               " * re-runs the training and compares. */\n#include \"clearn.h\"\n\n");
    fprintf(o, "static const clearn_level LEVELS[] = {\n");
    for (int l = 0; l < c->nlev; l++) {
        fprintf(o, "    { LG_%s, \"%s\", %d, { ", c->lev[l].group == LG_VENDOR ? "VENDOR" : c->lev[l].group == LG_LINK ? "LINK"
                   : c->lev[l].group == LG_GPU ? "GPU" : "ENGINE", c->lev[l].name, c->lev[l].rows);
        for (int j = 0; j < LP_N; j++) {
            if (j) fprintf(o, ", ");
            put_d(o, v->x[LP_N * (1 + l) + j]);
        }
        fprintf(o, " } },\n");
    }
    fprintf(o, "};\n\nstatic const clearn_cv CV[] = {\n");
    int ncv = 0;
    for (int lg = 0; lg < c->nlev; lg++) {
        if (c->lev[lg].group != LG_GPU) continue;
        for (int le = 0; le < c->nlev; le++) {
            if (c->lev[le].group != LG_ENGINE) continue;
            int n;
            double e = mape_class(c, v->pred_model, lg, le, &n);
            if (!n) continue;
            fprintf(o, "    { \"%s\", \"%s\", %d, ", c->lev[lg].name, c->lev[le].name, n);
            put_d(o, e);
            fprintf(o, " },\n");
            ncv++;
        }
    }
    fprintf(o, "};\n\nconst clearn_table clearn_trained = {\n    { ");
    for (int j = 0; j < LP_N; j++) {
        if (j) fprintf(o, ", ");
        put_d(o, v->x[j]);
    }
    fprintf(o, " },\n    LEVELS, %d, CV, %d,\n    ", c->nlev, ncv);
    put_d(o, mape(c, v->pred_gpu, -1, 0, NULL));
    fprintf(o, ", ");
    put_d(o, mape(c, v->pred_engine, -1, 0, NULL));
    fprintf(o, ", ");
    put_d(o, mape(c, v->pred_model, -1, 0, NULL));
    fprintf(o, ",\n    \"latsim calib train --corpus tests/data/corpus --out calib/clearn_coef.c\",\n};\n");
}

int clearn_train(const char *dir, FILE *out, FILE *log, char *err, size_t errlen)
{
    corpus c;
    if (corpus_read(dir, &c, err, errlen) != 0) {
        corpus_free(&c);
        return -1;
    }
    if (log) fprintf(log, "corpus %s: %d rows (%d skipped: model, hardware or engine not in it; %d measured faster than "
                     "the hardware floor), %d classes, %d models\n", dir, c.n, c.skipped, c.floored, c.nlev, c.nmod);
    cvres v;
    if (run_all(&c, &v, log, err, errlen) != 0) {
        corpus_free(&c);
        return -1;
    }
    if (log) {
        fprintf(log, "in-sample MAPE %.2f %%; leave-one-GPU-out %.2f %%, -engine-out %.2f %%, -model-out %.2f %% "
                     "(roofline %.2f %%)\n", mape(&c, v.pred_full, -1, 0, NULL), mape(&c, v.pred_gpu, -1, 0, NULL),
                mape(&c, v.pred_engine, -1, 0, NULL), mape(&c, v.pred_model, -1, 0, NULL), mape(&c, v.roof, -1, 0, NULL));
        clearn_coef g;
        clearn_physical(v.x, &g);
        const double *pv = &g.compute_eff;
        for (int j = 0; j < LP_N; j++) fprintf(log, "  global %-12s %.4g\n", clearn_names[j], pv[j]);
    }
    if (out) write_table(&c, &v, out);
    const char *dump = getenv("LATSIM_LEARN_DUMP");   /* every row's measured and predicted times */
    FILE *df = dump ? fopen(dump, "w") : NULL;
    if (df) {
        fprintf(df, "kind,gpu,engine,model,tp,steps,meas_ms,pred_ms,pred_model_ms,roof_ms,pred_gpu_ms,pred_engine_ms\n");
        for (int i = 0; i < c.n; i++) {
            const trow *r = &c.rows[i];
            fprintf(df, "%s,%s,%s,%s,%d,%d,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g\n", KIND_NAMES[r->kind], c.lev[r->lv[LG_GPU]].name,
                    c.lev[r->lv[LG_ENGINE]].name, c.mod[r->model].name, r->hw.tp, r->n, r->meas_ms, v.pred_full[i],
                    v.pred_model[i], v.roof[i], v.pred_gpu[i], v.pred_engine[i]);
        }
        fclose(df);
    }
    cv_free(&v);
    corpus_free(&c);
    return 0;
}

/* Share (%) of the rows whose measured latency lies in the 90 % band latsim gives
 * (latsim/band.h) around held-out prediction PRED: a band of cross-validated error
 * MAPE_ALL (% , every row) widened as carried, or with CLASS set the row's own
 * (GPU, engine) class error; N rows counted into *N. */
static double covered(const corpus *c, const double *pred, double mape_all, int extrapolated, int class, int *count)
{
    int n = 0, in = 0;
    for (int i = 0; i < c->n; i++) {
        if (!(pred[i] > 0)) continue;
        double m = mape_all;
        if (class) {
            int k;
            m = mape_class(c, pred, c->rows[i].lv[LG_GPU], c->rows[i].lv[LG_ENGINE], &k);
        }
        band_model b;
        band_of_model("learned", m, extrapolated, &b);
        double y = c->rows[i].meas_ms;
        in += y >= pred[i] * b.lo && y <= pred[i] * b.hi;
        n++;
    }
    *count = n;
    return n ? 100.0 * in / n : NAN;
}

/* The prediction bands' coverage on the cross-validation (docs/bands.md): each
 * held-out prediction with the band latsim would give it. */
static void band_coverage(const corpus *c, const cvres *v, FILE *out)
{
    int n;
    double eg = mape(c, v->pred_gpu, -1, 0, NULL), ee = mape(c, v->pred_engine, -1, 0, NULL);
    band_model bg, be;
    band_of_model("learned", eg, 1, &bg);
    band_of_model("learned", ee, 1, &be);
    fprintf(out, "\n## Prediction bands\n\nThe 90 %% band latsim gives each held-out prediction (docs/bands.md), and the share "
                 "of rows whose\nmeasured latency it holds: a held-out GPU or engine is an unmeasured one, its band "
                 "from the\nleave-one-out error widened x1.5 (carried); a held-out model on a measured GPU and engine "
                 "has\nthe band of that (GPU, engine) class's cross-validated error.\n\n");
    fprintf(out, "| band, held out | rows | step-time factors | covered %% |\n|---|---:|---|---:|\n");
    double cg = covered(c, v->pred_gpu, eg, 1, 0, &n);
    fprintf(out, "| band, each GPU | %d | x%.3g..x%.3g | %.1f |\n", n, bg.lo, bg.hi, cg);
    double ce = covered(c, v->pred_engine, ee, 1, 0, &n);
    fprintf(out, "| band, each engine | %d | x%.3g..x%.3g | %.1f |\n", n, be.lo, be.hi, ce);
    double cm = covered(c, v->pred_model, NAN, 0, 1, &n);
    fprintf(out, "| band, each model | %d | its class's | %.1f |\n", n, cm);
}

int clearn_validate(const char *dir, FILE *out, char *err, size_t errlen)
{
    corpus c;
    if (corpus_read(dir, &c, err, errlen) != 0) {
        corpus_free(&c);
        return -1;
    }
    cvres v;
    if (run_all(&c, &v, NULL, err, errlen) != 0) {
        corpus_free(&c);
        return -1;
    }
    fprintf(out, "| held out | rows | learned MAPE %% | roofline MAPE %% |\n|---|---:|---:|---:|\n");
    fprintf(out, "| nothing (in-sample) | %d | %.1f | %.1f |\n", c.n, mape(&c, v.pred_full, -1, 0, NULL),
            mape(&c, v.roof, -1, 0, NULL));
    fprintf(out, "| each GPU | %d | %.1f | %.1f |\n", c.n, mape(&c, v.pred_gpu, -1, 0, NULL), mape(&c, v.roof, -1, 0, NULL));
    fprintf(out, "| each engine | %d | %.1f | %.1f |\n", c.n, mape(&c, v.pred_engine, -1, 0, NULL),
            mape(&c, v.roof, -1, 0, NULL));
    fprintf(out, "| each model | %d | %.1f | %.1f |\n", c.n, mape(&c, v.pred_model, -1, 0, NULL),
            mape(&c, v.roof, -1, 0, NULL));
    for (int g = LG_GPU; g <= LG_ENGINE; g++)
        for (int l = 0; l < c.nlev; l++) {
            if (c.lev[l].group != g) continue;
            int n;
            double e = mape(&c, g == LG_GPU ? v.pred_gpu : v.pred_engine, g, l, &n);
            fprintf(out, "| %s %s | %d | %.1f | %.1f |\n", clearn_group_names[g], c.lev[l].name, n, e,
                    mape(&c, v.roof, g, l, NULL));
        }
    for (int k = 0; k < K_N; k++) {
        double s = 0, sr = 0;
        int n = 0;
        for (int i = 0; i < c.n; i++)
            if (c.rows[i].kind == k) {
                s += fabs(v.pred_model[i] - c.rows[i].meas_ms) / c.rows[i].meas_ms;
                sr += fabs(v.roof[i] - c.rows[i].meas_ms) / c.rows[i].meas_ms;
                n++;
            }
        if (n) fprintf(out, "| kind %s, each model | %d | %.1f | %.1f |\n", KIND_NAMES[k], n, 100 * s / n, 100 * sr / n);
    }
    band_coverage(&c, &v, out);
    cv_free(&v);
    corpus_free(&c);
    return 0;
}
