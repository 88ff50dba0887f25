/* ccli.c -- what the `latsim calib` subcommands and `latsim cost` do, behind
 * calib.h: fits by kind, the profile of every imported (model, TP), the
 * microbenchmark's plan, run and store, the network fit, and one step time
 * from a chosen cost model.  The front end (cli/calib.c) keeps the options,
 * the database transaction around each writing command and the printing. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <gsl/gsl_matrix.h>
#include <gsl/gsl_vector.h>
#include "calib.h"
#include "cbench.h"
#include "ccost.h"
#include "clearn.h"
#include "ccostops.h"
#include "cdb.h"
#include "cfitted.h"
#include "cfitpost.h"
#include "cobsfit.h"
#include "cprofile.h"
#include "nnls.h"
#include "core/catalog.h"
#include "llm/cost.h"
#include "llm/opshare.h"

int calib_fit(sqlite3 *db, const char *kind, const char *model, const char *gpu, int tp, const char *weights,
              size_t folds, int prior, const char *tool, int64_t *id, char *err, size_t errlen)
{
    if (!strcmp(kind, "fitted")) {
        cfitted m;
        if (cfitted_fit(db, model, gpu, weights, tool, folds, prior, &m, err, errlen) != 0) return -1;
        *id = m.fit.id;
        return 0;
    }
    cprofile p;
    if (cprofile_build(db, model, gpu, tp, tool, &p, err, errlen) != 0) return -1;
    *id = p.fit.id;
    cprofile_free(&p);
    return 0;
}

int calib_fit_observed(sqlite3 *db, const char *model, const char *gpu, const char *weights, int tp, int data, const char *tool,
                       FILE *report, int64_t *id, char *err, size_t errlen)
{
    cobsfit_result *r = malloc(sizeof *r);
    if (!r) {
        snprintf(err, errlen, "out of memory");
        return 1;
    }
    int rc = cobsfit_fit(db, model, gpu, weights, tp, data, tool, r, err, errlen);
    if (rc == 0) {
        *id = r->m.fit.id;
        if (report) cobsfit_print(r, report);
    }
    free(r);
    return rc;
}

void calib_fit_observed_bounds(double max_s, FILE *progress, double progress_s)
{
    cobsfit_opts o = { max_s, progress, progress_s };
    cobsfit_set_opts(&o);
}

int calib_fit_profiles(sqlite3 *db, const char *gpu, const char *tool, char *err, size_t errlen)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, "SELECT DISTINCT model, tp FROM calib_meas WHERE what = 'op' AND gpu = ?"
                           " ORDER BY model, tp", -1, &st, NULL) != SQLITE_OK) {
        snprintf(err, errlen, "cannot read the measurements: %s", sqlite3_errmsg(db));
        return -1;
    }
    sqlite3_bind_text(st, 1, gpu, -1, SQLITE_TRANSIENT);
    int fits = 0;
    while (sqlite3_step(st) == SQLITE_ROW) {
        char model[48];
        snprintf(model, sizeof model, "%s", (const char *) sqlite3_column_text(st, 0));
        cprofile p;
        if (cdb_begin(db, err, errlen) != 0) break;
        if (cprofile_build(db, model, gpu, sqlite3_column_int(st, 1), tool, &p, err, errlen) != 0) {
            cdb_rollback(db);
            break;
        }
        cprofile_free(&p);
        if (cdb_commit(db, err, errlen) != 0) break;
        fits++;
    }
    sqlite3_finalize(st);
    return fits;
}

/* ---- microbenchmarks ---------------------------------------------------------- */

struct calib_bench {
    int gpu;                  /* 1: calib gpu, 0: calib cpu */
    const char *cmd;          /* "calib gpu" or "calib cpu", for messages */
    int threads;              /* CPU: BLAS threads (0: default) */
    char gpu_name[48];        /* GPU: --gpu, "" for the device's own name */
    model_spec model;         /* the catalog model */
    int tp;                   /* its tensor-parallel degree */
    cb_plan plan;             /* what is timed */
    cb_device dev;            /* where it was timed (filled by calib_bench_run) */
    double gflops, gbs;       /* CPU: fp32 GEMM peak, GFLOP/s; memcpy bandwidth, GB/s */
    gpu_spec cpu;             /* CPU: this CPU as catalog GPU 'cpu' */
};

/* The catalog name of a CUDA device ("NVIDIA H200" -> h200), "" when unknown. */
static void gpu_catalog_name(const char *device, char *out, size_t n)
{
    static const char *const known[] = { "h200", "h100", "a100", "l40s", "l4" };
    char low[128];
    size_t i = 0;
    for (; device[i] && i + 1 < sizeof low; i++)
        low[i] = (char)(device[i] >= 'A' && device[i] <= 'Z' ? device[i] - 'A' + 'a' : device[i]);
    low[i] = '\0';
    out[0] = '\0';
    for (size_t k = 0; k < sizeof known / sizeof *known; k++)
        if (strstr(low, known[k])) {
            snprintf(out, n, "%s", known[k]);
            return;
        }
}

int calib_bench_plan(sqlite3 *db, const calib_bench_req *r, calib_bench **out, char *err, size_t errlen)
{
    char e2[512];
    *out = NULL;
    calib_bench *b = calloc(1, sizeof *b);
    if (!b) { snprintf(err, errlen, "out of memory"); return 1; }
    b->gpu = r->gpu;
    b->cmd = r->gpu ? "calib gpu" : "calib cpu";
    b->threads = r->threads;
    if (r->gpu_name) snprintf(b->gpu_name, sizeof b->gpu_name, "%s", r->gpu_name);
    b->tp = r->tp ? r->tp : 1;
    if (catalog_model(db, r->model, &b->model, e2, sizeof e2) != 0) {
        snprintf(err, errlen, "%s: --model: %s", b->cmd, e2);
        calib_bench_free(b);
        return 2;
    }
    if (cb_plan_build(&b->plan, &b->model, b->tp, r->tokens, r->ntok, r->batches, r->nbatch, r->contexts, r->nctx,
                      r->prompts, r->nprompt, r->gpu ? 1073741824.0 : 67108864.0, !r->gpu, e2, sizeof e2) != 0) {
        snprintf(err, errlen, "%s: %s", b->cmd, e2);
        calib_bench_free(b);
        return 2;
    }
    if (r->repeats) b->plan.repeats = r->repeats;
    *out = b;
    return 0;
}

int calib_bench_run(calib_bench *b, sqlite3 *db, char *err, size_t errlen)
{
    char e2[512];
    if (b->gpu ? cb_gpu_run(&b->plan, &b->dev, err, errlen)
               : cb_cpu_run(&b->plan, b->threads, &b->dev, &b->gflops, &b->gbs, err, errlen))
        return 1;
    if (b->gpu) {
        if (b->gpu_name[0]) snprintf(b->dev.gpu, sizeof b->dev.gpu, "%s", b->gpu_name);
        else gpu_catalog_name(b->dev.device, b->dev.gpu, sizeof b->dev.gpu);
        gpu_spec g;
        if (!b->dev.gpu[0] || catalog_gpu(db, b->dev.gpu, &g, e2, sizeof e2) != 0) {
            snprintf(err, errlen, "%s: device '%s' is not a catalog GPU: give --gpu NAME (latsim catalog)", b->cmd, b->dev.device);
            return 2;
        }
        snprintf(b->dev.gpu, sizeof b->dev.gpu, "%s", g.name);
        return 0;
    }
    /* This CPU as a catalog "GPU", from what was just measured. */
    gpu_spec g = { .name = "cpu", .bf16_tflops = b->gflops / 1000, .fp8_tflops = b->gflops / 1000,
                   .mem_gib = (double)sysconf(_SC_PHYS_PAGES) * (double)sysconf(_SC_PAGESIZE) / 1073741824.0,
                   .mem_bw_gbs = b->gbs, .link_gbs = b->gbs / 2, .price_hr = 0 };
    snprintf(g.full_name, sizeof g.full_name, "%.63s", b->dev.device);
    snprintf(g.source, sizeof g.source, "measured by latsim calib cpu: fp32 GEMM peak %.1f GFLOP/s (%s), memcpy %.1f GB/s",
             b->gflops, b->dev.driver, b->gbs);
    b->cpu = g;
    return 0;
}

int calib_bench_store(sqlite3 *db, const calib_bench *b, const char *tool, long *n, char *err, size_t errlen)
{
    char e2[512];
    if (cdb_init(db, err, errlen) != 0)
        return 2;
    if (cb_store(db, &b->plan, b->gpu ? "cuda" : "cpu", &b->dev, tool, n, err, errlen) != 0)
        return 1;
    if (!b->gpu && catalog_put_gpu(db, &b->cpu, e2, sizeof e2) != 0) {
        snprintf(err, errlen, "calib cpu: %s", e2);
        return 2;
    }
    return 0;
}

void calib_bench_info_of(const calib_bench *b, calib_bench_info *out)
{
    *out = (calib_bench_info) { .model = b->model.name, .tp = b->tp, .gpu = b->dev.gpu, .device = b->dev.device,
                                .driver = b->dev.driver, .gflops = b->gflops, .gbs = b->gbs };
}

void calib_bench_free(calib_bench *b)
{
    if (!b) return;
    cb_plan_free(&b->plan);
    free(b);
}

/* ---- network timing --------------------------------------------------------------- */

int calib_net_store(sqlite3 *db, const calib_net_meas *m, calib_net_fit *out, char *err, size_t errlen)
{
    const cnet_rtt *rtt = m->rtt;
    const int ns = m->ns;
    int rc = 2;
    cdb_writer w = { 0 };
    int64_t ids[32];
    if (ns > 32) { snprintf(err, errlen, "calib net: at most 32 sizes"); return 2; }
    gsl_matrix *X = gsl_matrix_alloc((size_t)ns, 2);
    gsl_vector *y = gsl_vector_alloc((size_t)ns), *wt = gsl_vector_alloc((size_t)ns);
    if (!X || !y || !wt) { snprintf(err, errlen, "out of memory"); rc = 1; goto out; }
    if (cdb_init(db, err, errlen) != 0 || cdb_writer_open(&w, db, err, errlen) != 0) goto out;
    for (int i = 0; i < ns; i++) {
        const double v[3] = { rtt[i].p50, rtt[i].p90, rtt[i].p99 };
        static const char *const nm[3] = { "p50", "p90", "p99" };
        for (int k = 0; k < 3; k++) {
            cdb_meas me = { .source = "net", .what = "rtt", .name = nm[k], .gpu = m->label, .bytes = (double)rtt[i].bytes,
                            .time_ms = v[k], .std_ms = NAN, .repeats = m->reps, .device = m->hostname,
                            .measured_at = m->when, .tool = m->tool };
            if (cdb_put(&w, &me, k == 0 ? &ids[i] : NULL, err, errlen) != 0) goto out;
        }
        gsl_matrix_set(X, (size_t)i, 0, 1);
        gsl_matrix_set(X, (size_t)i, 1, (double)rtt[i].bytes / 1e6);
        gsl_vector_set(y, (size_t)i, rtt[i].p50);
        gsl_vector_set(wt, (size_t)i, 1 / (rtt[i].p50 * rtt[i].p50));
    }
    const cnet_codec *cod = m->cod;
    const struct { const char *what, *name; double us; size_t bytes; } codec[4] = {
        { "encode", "json", cod->json_encode_us, cod->json_bytes }, { "decode", "json", cod->json_decode_us, cod->json_bytes },
        { "encode", "binary", cod->bin_encode_us, cod->bin_bytes }, { "decode", "binary", cod->bin_decode_us, cod->bin_bytes } };
    for (int k = 0; k < 4; k++) {
        cdb_meas me = { .source = "net", .what = codec[k].what, .name = codec[k].name, .tokens = 4096,
                        .bytes = (double)codec[k].bytes, .time_ms = codec[k].us / 1000, .std_ms = NAN, .repeats = 2000,
                        .device = m->hostname, .measured_at = m->when, .tool = m->tool };
        if (cdb_put(&w, &me, NULL, err, errlen) != 0) goto out;
    }
    nnls_result r;
    if (nnls_fit(X, y, wt, NULL, &r, err, errlen) != 0) goto out;
    cdb_fit f = { .kind = "net", .n_points = ns, .r2 = r.r2, .folds = ns < 5 ? ns : 5 };
    f.mape = nnls_cv_mape(X, y, wt, NULL, (size_t)f.folds, err, errlen);
    snprintf(f.gpu, sizeof f.gpu, "%.47s", m->label);
    snprintf(f.source, sizeof f.source, "net");
    snprintf(f.tool, sizeof f.tool, "%s", m->tool);
    snprintf(f.note, sizeof f.note, "latency = base_ms + ms_per_mb x bytes / 1e6 (p50 round trips); bandwidth %.4g GB/s",
             r.b[1] > 0 ? 1.0 / r.b[1] : INFINITY);
    static const char *const cn[2] = { "base_ms", "ms_per_mb" };
    for (int k = 0; k < 2; k++) {
        snprintf(f.coef[k].name, sizeof f.coef[k].name, "%s", cn[k]);
        f.coef[k].value = r.b[k];
        f.coef[k].se = r.status[k] == NNLS_FITTED ? r.se[k] : 0;
        snprintf(f.coef[k].status, sizeof f.coef[k].status, "%s", r.status[k] == NNLS_FITTED ? "fitted" : "bound");
    }
    f.ncoef = 2;
    if (cdb_save_fit(db, &f, ids, (size_t)ns, err, errlen) != 0) goto out;
    *out = (calib_net_fit) { .base_ms = r.b[0], .ms_per_mb = r.b[1], .r2 = r.r2, .mape = f.mape, .id = f.id };
    rc = 0;
out:
    cdb_writer_close(&w);
    gsl_matrix_free(X);
    gsl_vector_free(y);
    gsl_vector_free(wt);
    return rc;
}

/* ---- one step's time ----------------------------------------------------------------- */

int calib_cost_eval(sqlite3 *db, const calib_cost_req *q, calib_cost *out, char *err, size_t errlen)
{
    const cost_roofline roof_params = cost_roofline_defaults;
    cost_model roof = { .hw = { .have_hw = 1, .tp = q->tp, .kv_bytes = 2 } };
    memset(out, 0, sizeof *out);
    if (cost_init(&roof, "roofline", &roof_params) != 0) {
        snprintf(err, errlen, "cost: out of memory");
        return 1;
    }
    char e2[512];
    ccost c;
    int have_c = 0, rc = 2;
    const char *weights = q->weights;
    if (catalog_model(db, q->model, &roof.hw.model, e2, sizeof e2) != 0 || catalog_gpu(db, q->gpu, &roof.hw.gpu, e2, sizeof e2) != 0) {
        snprintf(err, errlen, "cost: %s", e2);
        goto out;
    }
    if (!weights) weights = roof.hw.model.weights[0] ? roof.hw.model.weights : "bf16";
    snprintf(roof.hw.engine, sizeof roof.hw.engine, "%s", q->engine ? q->engine : "vllm");
    if (cost_hw_set_weights(&roof.hw, weights) != 0) {
        snprintf(err, errlen, "cost: --weights: unknown precision '%s' (valid: bf16, fp16, fp8, int8, int4, fp4)", weights);
        goto out;
    }
    if (roof.hw.model.heads % q->tp != 0) {
        snprintf(err, errlen, "cost: --tp %d does not divide the %d attention heads of %s", q->tp, roof.hw.model.heads, roof.hw.model.name);
        goto out;
    }
    /* Imported collective profiles of this GPU (all-reduce at tp; all-to-all at ep, send/recv
     * with pp: not set here) replace the link formulas. */
    int profiled = cost_roofline_collectives(roof.state, &roof.hw, db);
    int need = (q->prefill > 0 ? 1 : 0) | (q->decode > 0 ? 2 : 0);
    if (ccost_resolve_for(db, q->kind, q->id, &roof, weights, need ? need : 3, &c, err, errlen) != 0)
        goto out;
    have_c = 1;
    cost_step s = { .prefill_tokens = q->prefill * q->pbatch, .prefill_pairs = (double)q->pbatch * q->prefill * (q->prefill + 1) / 2.0,
                    .prefill_seqs = q->prefill ? (int32_t)q->pbatch : 0, .decode_seqs = (int32_t)q->decode,
                    .kv_tokens = q->decode * (q->context + 1) };
    ccost_parts parts;
    int extrap = 0;
    out->step_ms = ccost_step_ms(&c, &s, &parts, &extrap);
    out->kind = ccost_kind_name(c.kind);
    out->id = c.id;
    snprintf(out->source, sizeof out->source, "%s", c.source);
    if (profiled && c.kind == CC_ROOFLINE) {
        /* Each collective priced from a measured profile, by name. */
        const cost_roofline *rp = roof.state;
        const cost_coll_prof *pr[] = { &rp->ar, &rp->a2a, &rp->sr, &rp->sr_nodes };
        static const char *const what[] = { "all-reduce", "all-to-all", "stage transfer within a node",
                                            "stage transfer across nodes" };
        static const char *const coll[] = { "", "", " send_recv", " send_recv" };
        for (int k = 0; k < 4; k++) {
            size_t L = strlen(out->source);
            if (pr[k]->n > 0 && L + 1 < sizeof out->source)
                snprintf(out->source + L, sizeof out->source - L, ", %s from the %s%s profile (%d sizes)", what[k],
                         pr[k]->source, coll[k], pr[k]->n);
        }
    }
    out->mape = c.mape;
    snprintf(out->range, sizeof out->range, "%s", c.kind == CC_ROOFLINE ? "" : extrap ? "extrapolated" : c.range);
    snprintf(out->note, sizeof out->note, "%s", c.note);
    if (c.kind == CC_LEARNED && c.carried) {
        const clearn_prior *lp = clearn_model_prior(&c.lm);
        size_t L = strlen(out->note);
        snprintf(out->note + L, sizeof out->note - L, "%s%s", L ? "; " : "", lp->note);
    }
    out->hwnote[0] = '\0';
    cost_hw_note(&roof.hw, out->hwnote, sizeof out->hwnote);   /* e.g. fp4 dequantised on a GPU without it */
    snprintf(out->warn, sizeof out->warn, "%s", c.warn);
    out->nparts = parts.n < CALIB_COST_MAX_PARTS ? parts.n : CALIB_COST_MAX_PARTS;
    for (int k = 0; k < out->nparts; k++) {
        out->part[k] = parts.name[k];
        out->part_ms[k] = parts.ms[k];
    }
    /* By operator (llm/opshare.h): collectives and framework parts as they are,
     * the GPU kernel parts over the kernel operators. */
    double ops[OP_N];
    ccost_op_split(&c, &roof.hw, &s, out->part, out->part_ms, out->nparts, ops);   /* ccostops.h */
    out->nops = OP_N;
    for (int k = 0; k < OP_N; k++) {
        out->op[k] = OP_NAMES[k];
        out->op_ms[k] = ops[k];
    }
    rc = 0;
out:
    if (have_c) ccost_free(&c);
    cost_free(&roof);
    return rc;
}

int celog_store(sqlite3 *db, const char *file, const celog_window *w, size_t n, const char *model, const char *gpu,
                const char *weights, int tp, const char *tool, char *err, size_t errlen)
{
    cdb_writer wr;
    if (cdb_writer_open(&wr, db, err, errlen) != 0) return -1;
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        const celog_window *x = &w[i];
        char name[96];
        snprintf(name, sizeof name, "window %.6g..%.6g s, %d intervals", x->t0, x->t1, x->rows);
        cdb_meas m = { .source = "engine-log", .what = x->prefill ? "step_prefill" : "step_decode", .name = name,
                       .model = model, .gpu = gpu, .weights = weights, .tp = tp, .batch = x->batch, .tokens = x->tokens,
                       .context = x->context, .time_ms = x->step_ms, .std_ms = x->sd_ms, .repeats = x->rows,
                       .device = "", .driver = "", .measured_at = "", .tool = tool, .file = file, .line = x->line0 };
        if (cdb_put(&wr, &m, NULL, err, errlen) != 0) rc = -1;
    }
    cdb_writer_close(&wr);
    return rc;
}
