/* cobsfit.c -- the fitted step model fitted to observed runs by replaying them
 * (see cobsfit.h for the objective, the start, the priors and the uncertainty). */
#include "cobsfit.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <gsl/gsl_blas.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_linalg.h>
#include <gsl/gsl_multimin.h>

#include "ccost.h"
#include "cfitrow.h"
#include "cobsdb.h"
#include "cobsreplay.h"
#include "cprior.h"
#include "engine/errmsg.h"
#include "llm/cost.h"
#include "latsim/scenario.h"

const char *const cobsfit_stat_names[COBSFIT_NSTATS] = {
    "ttft_mean", "ttft_p90", "tpot_mean", "tpot_p90", "e2e_mean", "e2e_p90",
};

#define SIGMA 0.01            /* the relative error that counts 1 in chi2 (cobsfit.h) */
#define PIN_SHARE 0.9          /* a term whose posterior sd is above this share of its prior width is not determined */
#define FD_STEP 0.05          /* central-difference step on log-coefficients */
#define NM_SIZE 0.001         /* Nelder-Mead stops below this simplex size */
#define NM_STEP 0.5           /* its initial steps, log */
#define NM_RESTARTS 6         /* starts at most */

/* One run being fitted. */
typedef struct frun {
    int64_t id;               /* stored run */
    int tp;                   /* its TP */
    cobs_prep *prep;          /* prepared for replay (its pool priced by the candidate) */
    cobs_replay rep;          /* observed side, and the last simulation's predicted side */
    int metric[3];            /* COBS_TTFT, COBS_TPOT (or COBS_ITL), COBS_E2E */
    double o[COBSFIT_NSTATS]; /* observed statistics, ms (NAN: not observed) */
    double sig[COBSFIT_NSTATS]; /* their relative standard errors */
    int k;                    /* statistics observed (a sweep: over all its levels) */
    int off;                  /* its first residual in the flat residual vector */
    long nreq;                /* requests */
    size_t nlv;               /* sweep levels (0: a request run) */
    double *lo;               /* a sweep's observed aggregates, LSTAT per level (NAN: not given; owned) */
    char engine[32];          /* its pool's engine ("" not stated: vLLM), the fit's prior */
} frun;

/* A sweep level's aggregates fitted: means of TTFT, ITL, TPOT, E2E, the P99 of
 * TTFT (ms) and the output tokens/s. */
#define LSTAT 6

static double level_obs(const cobs_level *L, int s)
{
    const double v[LSTAT] = { L->ttft_ms, L->itl_ms, L->tpot_ms, L->e2e_ms, L->ttft_p99_ms, L->output_tps };
    return v[s];
}

static double level_pred(const cobs_level_pred *P, int s)
{
    const double v[LSTAT] = { P->ttft_ms, P->itl_ms, P->tpot_ms, P->e2e_ms, P->ttft_p99_ms, P->output_tps };
    return v[s];
}

/* A whole step of the measurement store (an imported step time, an engine-log
 * window): its features at the fitted model's geometry and the time measured. */
typedef struct fstep {
    double f[CF_NTERMS];      /* cfitted_features, linear in a fractional batch between its neighbours */
    double ms;                /* measured step time, ms */
} fstep;

/* The objective's context. */
typedef struct fctx {
    frun *r;                  /* the runs */
    int nr;
    int skip;                 /* a run left out (-1: none) */
    double c[CF_NTERMS];      /* coefficients: the held ones at their priors */
    int fk[CF_NTERMS];        /* free terms */
    int nfree;
    double x0[CF_NTERMS];     /* prior centre of each free term, log */
    double psd[CF_NTERMS];    /* prior width of each free term, log-sd */
    double lo[CF_NTERMS];     /* floor of every term (cprior_floor) */
    int prior;                /* 1: the prior counts */
    int use_runs;             /* 1: the runs' statistics count */
    const fstep *st;          /* whole steps (calib_meas), NULL for none */
    int nst;
    int use_steps;            /* 1: the steps count */
    int skip_steps;           /* 1: the steps are left out */
    int step_off;             /* their first residual */
    double *step_pred;        /* the last evaluation's step times, ms (nst) */
    int evals;                /* simulations run */
    int failed;               /* a simulation failed (err) */
    double *scratch;          /* room for the most statistics of one run */
    const char *phase;        /* what the fit is doing (progress lines) */
    double pass_s;            /* s: the last full pass over the runs */
    char err[512];
} fctx;

static cobsfit_opts g_opts;            /* cobsfit_set_opts */
static struct timespec g_t0;           /* the fit's start */
static double g_last;                  /* s since g_t0 of the last progress line */

void cobsfit_set_opts(const cobsfit_opts *o)
{
    if (o) g_opts = *o;
    else memset(&g_opts, 0, sizeof g_opts);
}

static double since_start(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double) (t.tv_sec - g_t0.tv_sec) + 1e-9 * (double) (t.tv_nsec - g_t0.tv_nsec);
}

/* After each simulation: a progress line when due; past the time bound, F
 * fails with the message saying how far it got.  Returns 1 when stopped. */
static int check_time(fctx *f)
{
    double now = since_start();
    double every = g_opts.progress_s > 0 ? g_opts.progress_s : 1;
    if (g_opts.progress && now - g_last >= every) {
        g_last = now;
        fprintf(g_opts.progress, "latsim: calib fit observed: %s, %d simulations, %.3g s", f->phase ? f->phase : "fitting",
                f->evals, now);
        if (f->pass_s > 0) fprintf(g_opts.progress, " (one pass over the runs %.2g s)", f->pass_s);
        if (g_opts.max_s > 0) fprintf(g_opts.progress, ", stops at %.3g s", g_opts.max_s);
        fputc('\n', g_opts.progress);
        fflush(g_opts.progress);
    }
    if (g_opts.max_s > 0 && now > g_opts.max_s && !f->failed) {
        snprintf(f->err, sizeof f->err, "stopped at the time bound (--max-minutes %.4g) after %.3g s and %d simulations, "
                 "while %s (nothing stored): raise --max-minutes, or fit fewer runs or sweep levels (calib forget RUN)",
                 g_opts.max_s / 60, now, f->evals, f->phase ? f->phase : "fitting");
        f->failed = 1;
        return 1;
    }
    return 0;
}

static double stat_of(const stat_summary *s, int which)
{
    return which ? s->p90 : s->mean;
}

/* The relative errors (predicted / observed - 1) of R's K statistics under its
 * last simulation into E, MISS where nothing was predicted; their observed
 * values into O when not NULL. */
static void run_err(const frun *r, double miss, double *e, double *o)
{
    int j = 0;
    if (r->nlv) {
        for (size_t l = 0; l < r->nlv; l++)
            for (int s = 0; s < LSTAT; s++) {
                double ob = r->lo[l * LSTAT + (size_t) s];
                if (!isfinite(ob)) continue;
                double p = r->rep.lv ? level_pred(&r->rep.lv[l], s) : NAN;
                if (o) o[j] = ob;
                e[j++] = isfinite(p) ? p / ob - 1 : miss;
            }
        return;
    }
    for (int s = 0; s < COBSFIT_NSTATS; s++)
        if (isfinite(r->o[s])) {
            int m = r->metric[s / 2];
            double p = r->rep.have_pred[m] ? stat_of(&r->rep.pred[m], s % 2) : NAN;
            if (o) o[j] = r->o[s];
            e[j++] = isfinite(p) ? p / r->o[s] - 1 : miss;
        }
}

/* Simulates every run (but the one skipped) with free coefficients exp(X);
 * fills RES (the weighted residuals of the statistics, run after run, each
 * run's K at its OFF) when not NULL.  Returns the statistics' chi2. */
static double simulate_all(fctx *f, const double *x, double *res)
{
    double c[CF_NTERMS];
    memcpy(c, f->c, sizeof c);
    for (int j = 0; j < f->nfree; j++) c[f->fk[j]] = fmax(exp(x[j]), f->lo[f->fk[j]]);
    double chi2 = 0;
    /* Steps: no simulation, the model's sum; all of them weigh as one run. */
    if (f->st && f->nst > 0 && f->step_pred) {
        double w = 6.0 / f->nst;
        for (int i = 0; i < f->nst; i++) {
            double p = 0;
            for (int k = 0; k < CF_NTERMS; k++) p += c[k] * f->st[i].f[k];
            f->step_pred[i] = p;
            if (!f->use_steps || f->skip_steps) continue;
            double v = sqrt(w) * (p / f->st[i].ms - 1) / SIGMA;
            chi2 += v * v;
            if (res) res[f->step_off + i] = v;
        }
    }
    double pass0 = since_start();
    int whole = f->skip < 0 && f->use_runs;
    for (int i = 0; i < f->nr; i++) {
        frun *r = &f->r[i];
        if (i == f->skip || !f->use_runs) continue;
        if (f->failed || check_time(f)) return 1e30;
        for (size_t l = 0; l < cobs_prep_count(r->prep); l++) ccost_set_coefs(cobs_prep_cost(r->prep, l), c);
        f->evals += (int) cobs_prep_count(r->prep);
        char msg[512];
        if (cobs_prep_sim(r->prep, &r->rep, msg, sizeof msg) != 0) {
            if (!f->failed) snprintf(f->err, sizeof f->err, "%s", msg);
            f->failed = 1;
            return 1e30;
        }
        double w = 6.0 / r->k, *e = f->scratch;
        run_err(r, 10, e, NULL);
        for (int s = 0; s < r->k; s++) {
            double v = sqrt(w) * e[s] / SIGMA;
            chi2 += v * v;
            if (res) res[r->off + s] = v;
        }
    }
    if (whole && f->nr > 0) f->pass_s = since_start() - pass0;
    return chi2;
}

static double objective(const gsl_vector *v, void *arg)
{
    fctx *f = arg;
    double x[CF_NTERMS];
    for (int j = 0; j < f->nfree; j++) x[j] = gsl_vector_get(v, (size_t) j);
    double chi2 = simulate_all(f, x, NULL);
    if (f->prior)
        for (int j = 0; j < f->nfree; j++) {
            double d = (x[j] - f->x0[j]) / f->psd[j];
            chi2 += d * d;
        }
    return chi2;
}

/* The common log-scale s on the start X (free terms), by golden section over
 * [-3, 3] on the statistics' chi2; X is moved by it. */
static double scale_start(fctx *f, double *x)
{
    double a = -3, b = 3, g = (sqrt(5.0) - 1) / 2;
    double xs[CF_NTERMS];
    double c1 = b - g * (b - a), c2 = a + g * (b - a), f1, f2;
#define AT(s, out) do { for (int j = 0; j < f->nfree; j++) xs[j] = x[j] + (s); (out) = simulate_all(f, xs, NULL); } while (0)
    AT(c1, f1);
    AT(c2, f2);
    while (b - a > 0.01 && !f->failed) {
        if (f1 < f2) {
            b = c2; c2 = c1; f2 = f1; c1 = b - g * (b - a); AT(c1, f1);
        } else {
            a = c1; c1 = c2; f1 = f2; c2 = a + g * (b - a); AT(c2, f2);
        }
    }
#undef AT
    double s = (a + b) / 2;
    for (int j = 0; j < f->nfree; j++) x[j] += s;
    return s;
}

/* Nelder-Mead from X (updated to the minimum), restarted from its minimum with a
 * fresh simplex (initial steps STEP) until a restart gains less than 0.1 % of
 * the objective (at most NM_RESTARTS): a simplex that collapsed along a valley
 * (a per-step cost traded against a per-token one) moves on.  MAX_ITER bounds
 * each start.  Returns 0 or -1 (ERR). */
static int minimise(fctx *f, double *x, int max_iter, char *err, size_t errlen)
{
    size_t n = (size_t) f->nfree;
    gsl_multimin_function fn = { objective, n, f };
    gsl_vector *v = gsl_vector_alloc(n), *step = gsl_vector_alloc(n);
    gsl_multimin_fminimizer *m = gsl_multimin_fminimizer_alloc(gsl_multimin_fminimizer_nmsimplex2, n);
    int rc = -1;
    if (!v || !step || !m) {
        errmsg_set(err, errlen, "out of memory");
        goto out;
    }
    double last = INFINITY;
    for (int start = 0; start < NM_RESTARTS; start++) {
        for (size_t j = 0; j < n; j++) {
            gsl_vector_set(v, j, x[j]);
            gsl_vector_set(step, j, NM_STEP);
        }
        gsl_multimin_fminimizer_set(m, &fn, v, step);
        for (int it = 0; it < max_iter && !f->failed; it++) {
            if (gsl_multimin_fminimizer_iterate(m) != GSL_SUCCESS) break;
            if (gsl_multimin_test_size(gsl_multimin_fminimizer_size(m), NM_SIZE) == GSL_SUCCESS) break;
        }
        if (f->failed) break;
        for (size_t j = 0; j < n; j++) x[j] = gsl_vector_get(m->x, j);
        double now = m->fval;
        if (!(now < last * (1 - 1e-3))) break;
        last = now;
    }
    if (f->failed) {
        errmsg_set(err, errlen, "fit observed: %s", f->err);
        goto out;
    }
    rc = 0;
out:
    gsl_multimin_fminimizer_free(m);
    gsl_vector_free(v);
    gsl_vector_free(step);
    return rc;
}

/* Standard errors of the free log-coefficients at X into SE (Gauss-Newton, see
 * cobsfit.h); NAN when the curvature cannot be inverted. */
static void uncertainty(fctx *f, const double *x, double *se, double *info)
{
    int np = f->nfree, m = 0;
    if (f->use_runs)
        for (int i = 0; i < f->nr; i++) m += f->r[i].k;
    if (f->use_steps) m += f->nst;
    size_t rows = (size_t) (m + np);
    gsl_matrix *J = gsl_matrix_calloc(rows, (size_t) np), *A = gsl_matrix_alloc((size_t) np, (size_t) np);
    double *rp = calloc((size_t) m + 1, sizeof *rp), *rm = calloc((size_t) m + 1, sizeof *rm);
    for (int j = 0; j < np; j++) se[j] = info[j] = NAN;
    if (!J || !A || !rp || !rm) goto out;
    double xs[CF_NTERMS], chi2 = simulate_all(f, x, NULL);
    for (int j = 0; j < np; j++) {
        memcpy(xs, x, sizeof xs);
        xs[j] = x[j] + FD_STEP;
        simulate_all(f, xs, rp);
        xs[j] = x[j] - FD_STEP;
        simulate_all(f, xs, rm);
        for (int row = 0; row < m; row++) gsl_matrix_set(J, (size_t) row, (size_t) j, (rp[row] - rm[row]) / (2 * FD_STEP));
        gsl_matrix_set(J, (size_t) (m + j), (size_t) j, 1 / f->psd[j]);
    }
    if (f->failed) goto out;
    gsl_blas_dgemm(CblasTrans, CblasNoTrans, 1.0, J, J, 0.0, A);
    gsl_error_handler_t *old = gsl_set_error_handler_off();
    int bad = gsl_linalg_cholesky_decomp1(A) != GSL_SUCCESS || gsl_linalg_cholesky_invert(A) != GSL_SUCCESS;
    gsl_set_error_handler(old);
    if (bad) goto out;
    double s2 = chi2 / (m - np > 1 ? m - np : 1);
    if (s2 < 1) s2 = 1;
    for (int j = 0; j < np; j++) {
        info[j] = sqrt(gsl_matrix_get(A, (size_t) j, (size_t) j));
        se[j] = info[j] * sqrt(s2);
    }
out:
    gsl_matrix_free(J);
    gsl_matrix_free(A);
    free(rp);
    free(rm);
}

/* Observed statistics and their errors of R (RUN: its levels, for a sweep).
 * Returns 0, or 1 when out of memory. */
static int observe(frun *r, const cobs_run *run)
{
    if (run->nlvl) {
        r->nlv = run->nlvl;
        r->lo = malloc(run->nlvl * LSTAT * sizeof *r->lo);
        if (!r->lo) return 1;
        r->k = 0;
        for (size_t l = 0; l < run->nlvl; l++)
            for (int s = 0; s < LSTAT; s++) {
                double v = level_obs(&run->lvl[l], s);
                r->lo[l * LSTAT + (size_t) s] = v > 0 ? v : NAN;
                if (v > 0) r->k++;
            }
        for (int s = 0; s < COBSFIT_NSTATS; s++) r->o[s] = NAN;
        return 0;
    }
    r->metric[0] = COBS_TTFT;
    r->metric[1] = r->rep.obs[COBS_TPOT].n > 0 ? COBS_TPOT : COBS_ITL;
    r->metric[2] = COBS_E2E;
    r->k = 0;
    for (int s = 0; s < COBSFIT_NSTATS; s++) {
        int m = r->metric[s / 2];
        const cobs_stats *o = &r->rep.obs[m];
        r->o[s] = NAN;
        if (o->n == 0) continue;
        double v = s % 2 ? o->p90 : o->mean;
        if (!(v > 0)) continue;
        r->o[s] = v;
        r->sig[s] = SIGMA;
        r->k++;
    }
    return 0;
}

/* The signed error, %, of the level worst predicted in aggregate S of sweep R (NAN: none). */
static double worst_level(const frun *r, int s)
{
    double w = NAN;
    for (size_t l = 0; l < r->nlv; l++) {
        double o = r->lo[l * LSTAT + (size_t) s], p = r->rep.lv ? level_pred(&r->rep.lv[l], s) : NAN;
        double e = 100 * (p / o - 1);
        if (isfinite(e) && !(fabs(e) <= fabs(w))) w = e;
    }
    return w;
}

/* Signed errors, %, of every run's statistics under the current predictions
 * into E (a sweep: its worst level's error of the mean TTFT, TPOT (ITL when
 * TPOT is not given) and E2E; P90 columns NAN). */
static void errors_of(const frun *r, double *e)
{
    if (r->nlv) {
        for (int s = 0; s < COBSFIT_NSTATS; s++) e[s] = NAN;
        e[0] = worst_level(r, 0);
        e[2] = worst_level(r, 2);
        if (!isfinite(e[2])) e[2] = worst_level(r, 1);
        e[4] = worst_level(r, 3);
        return;
    }
    for (int s = 0; s < COBSFIT_NSTATS; s++) {
        int m = r->metric[s / 2];
        e[s] = isfinite(r->o[s]) && r->rep.have_pred[m] ? 100 * (stat_of(&r->rep.pred[m], s % 2) / r->o[s] - 1) : NAN;
    }
}

static void close_runs(frun *r, int n)
{
    for (int i = 0; i < n; i++) {
        cobs_prep_close(r[i].prep);
        cobs_replay_free(&r[i].rep);
        free(r[i].lo);
    }
    free(r);
}

/* Loads and prepares stored run ID into R (its pool priced by F), and the
 * roofline's errors on it into START.  Returns 0, 2 or 1 (ERR). */
static int open_run(sqlite3 *db, int64_t id, const cfitted *f, frun *r, double *start, char *err, size_t errlen)
{
    cobs_stored h;
    cobs_run run;
    char *text = NULL, e2[2048];
    memset(&run, 0, sizeof run);
    r->id = id;
    int s = cobsdb_load(db, id, &h, &run, &text, err, errlen);
    if (s != 0) return s == 1 ? 2 : 1;
    int rc = 0;
    scenario *sc = scenario_new();
    if (!sc) rc = 1, errmsg_set(err, errlen, "out of memory");
    if (!rc && scenario_load_text(sc, h.scenario_path, text, NULL, 0, e2, sizeof e2) != 0) {
        rc = strstr(e2, "out of memory") ? 1 : 2;
        errmsg_set(err, errlen, "fit observed: observed run %lld: %s", (long long) id, e2);
    }
    if (!rc && (rc = cobs_check_replayable(&run, sc, 1, e2, sizeof e2)) != 0)   /* stored before the import checked it */
        errmsg_set(err, errlen, "fit observed: observed run %lld: %s", (long long) id, e2);
    if (!rc && (rc = cobs_prep_open(&run, sc, h.srv.pool, db, &r->prep, e2, sizeof e2)) != 0)
        errmsg_set(err, errlen, "fit observed: observed run %lld: %s", (long long) id, e2);
    if (!rc) {
        int pi;
        if (cobs_find_pool(sc, h.srv.pool, &pi, e2, sizeof e2) == 0) {
            const char *e = scenario_pool_value(sc, pi, "engine");
            snprintf(r->engine, sizeof r->engine, "%s", e ? e : "");
        }
    }
    if (!rc && (rc = cobs_replay_observed(&run, &r->rep, err, errlen)) == 0)
        rc = observe(r, &run) ? (errmsg_set(err, errlen, "out of memory"), 1) : 0;
    if (!rc && cobs_prep_sim(r->prep, &r->rep, err, errlen) != 0) rc = 1;
    if (!rc) {
        errors_of(r, start);
        const char *w;
        cobs_prep_model(r->prep, &r->tp, &w);
        r->nreq = (long) run.nreq;
        for (size_t l = 0; l < cobs_prep_count(r->prep) && !rc; l++)
            if (ccost_use_fitted(cobs_prep_cost(r->prep, l), f, "observed") != 0) rc = 1, errmsg_set(err, errlen, "out of memory");
    }
    scenario_delete(sc);
    free(text);
    cobs_free(&run);
    return rc;
}

/* The runs of (MODEL, GPU, WEIGHTS[, TP]): ids into IDS (at most COBSFIT_MAX_RUNS),
 * with the prompt, batch and context they reach.  Returns the count or -1 (ERR). */
static int find_runs(sqlite3 *db, const char *model, const gpu_spec *g, const char *weights, int tp, int64_t *ids,
                     cdb_fit *fit, char *err, size_t errlen)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, "SELECT r.id, r.gpu, r.max_batch, r.chunk_tokens, r.n_requests,"
                           " coalesce((SELECT max(input_tokens) FROM calib_observed_req q WHERE q.run_id = r.id),"
                           "  (SELECT max(input_tokens) FROM calib_observed_level l WHERE l.run_id = r.id)),"
                           " coalesce((SELECT max(input_tokens + output_tokens) FROM calib_observed_req q WHERE q.run_id = r.id),"
                           "  (SELECT max(input_tokens + output_tokens) FROM calib_observed_level l WHERE l.run_id = r.id)),"
                           " (SELECT max(load) FROM calib_observed_level l WHERE l.run_id = r.id AND l.mode = 'concurrency')"
                           " FROM calib_observed_run r WHERE r.model = ? AND r.weights = ?"
                           " AND (r.n_requests > 0 OR r.n_levels > 0)"
                           " AND (? = 0 OR r.tp = ?) ORDER BY r.id", -1, &st, NULL) != SQLITE_OK) {
        errmsg_set(err, errlen, "calibration store: %s", sqlite3_errmsg(db));
        return -1;
    }
    sqlite3_bind_text(st, 1, model, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, weights, -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 3, tp);
    sqlite3_bind_int(st, 4, tp);
    int n = 0;
    while (sqlite3_step(st) == SQLITE_ROW && n < COBSFIT_MAX_RUNS) {
        /* The run's GPU as the scenario names it: the same catalog GPU (an alias) counts. */
        const char *rg = (const char *) sqlite3_column_text(st, 1);
        gpu_spec q;
        char e2[256];
        int same = !strcasecmp(rg, g->name) || (catalog_gpu(db, rg, &q, e2, sizeof e2) == 0 && !strcasecmp(q.name, g->name));
        if (!same) continue;
        ids[n++] = sqlite3_column_int64(st, 0);
        double mb = sqlite3_column_double(st, 2), ck = sqlite3_column_double(st, 3), nq = sqlite3_column_double(st, 4);
        fit->tok_max = fmax(fit->tok_max, fmax(ck, sqlite3_column_double(st, 5)));
        if (nq > 0) fit->seq_max = fmax(fit->seq_max, fmin(mb, nq));
        else fit->seq_max = fmax(fit->seq_max, sqlite3_column_type(st, 7) == SQLITE_NULL ? mb : fmin(mb, sqlite3_column_double(st, 7)));
        fit->ctx_max = fmax(fit->ctx_max, sqlite3_column_double(st, 6));
    }
    sqlite3_finalize(st);
    return n;
}

/* The features of a step of BATCH sequences (PREFILL: of TOKENS each; else
 * decoding at CONTEXT) at TP into F: a fractional batch (an engine-log window's
 * mean) linear between its two whole neighbours. */
static void step_features(const cfitted *m, int tp, int prefill, double batch, double tokens, double context, double *f)
{
    double lo = floor(batch), a = batch - lo, g[2][CF_NTERMS];
    for (int side = 0; side < 2; side++) {
        double b = lo + side;
        cost_step st;
        memset(&st, 0, sizeof st);
        if (b < 1) b = 1;
        if (prefill) {
            st.prefill_tokens = (int64_t) (b * tokens);
            st.prefill_pairs = b * tokens * (tokens + 1) / 2;
            st.prefill_seqs = (int32_t) b;
        } else {
            st.decode_seqs = (int32_t) b;
            st.kv_tokens = (int64_t) llround(b * (context + 1));
        }
        cfitted_features(&m->model, m->weight_bytes, m->kv_bytes, tp, &st, g[side]);
    }
    for (int k = 0; k < CF_NTERMS; k++) f[k] = (1 - a) * g[0][k] + a * g[1][k];
}

/* The whole steps stored for (MODEL, GPU, WEIGHTS[, TP]) (calib_meas
 * step_prefill / step_decode, any source) into *OUT (malloc'd), their count in
 * *N; their TP degrees marked in TPSEEN and their ranges widened in FIT.
 * Returns 0, or 1 (ERR). */
static int find_steps(sqlite3 *db, const cfitted *m, const gpu_spec *g, const char *weights, int tp, fstep **out, int *n,
                      int *tpseen, cdb_fit *fit, char *err, size_t errlen)
{
    sqlite3_stmt *st = NULL;
    *out = NULL;
    *n = 0;
    if (sqlite3_prepare_v2(db, "SELECT what, batch, tokens, context, time_ms, tp, gpu FROM calib_meas"
                           " WHERE what IN ('step_prefill', 'step_decode') AND model = ? AND (weights = ? OR weights = '')"
                           " AND (? = 0 OR tp = ?) ORDER BY id", -1, &st, NULL) != SQLITE_OK) {
        errmsg_set(err, errlen, "calibration store: %s", sqlite3_errmsg(db));
        return 1;
    }
    sqlite3_bind_text(st, 1, m->model.name, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, weights, -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 3, tp);
    sqlite3_bind_int(st, 4, tp);
    size_t cap = 0;
    int rc = 0;
    while (sqlite3_step(st) == SQLITE_ROW) {
        const char *rg = (const char *) sqlite3_column_text(st, 6);
        gpu_spec q;
        char e2[256];
        if (!(rg && (!strcasecmp(rg, g->name) || (catalog_gpu(db, rg, &q, e2, sizeof e2) == 0 && !strcasecmp(q.name, g->name)))))
            continue;
        if ((size_t) *n == cap) {
            cap = cap ? 2 * cap : 64;
            fstep *x = realloc(*out, cap * sizeof *x);
            if (!x) {
                rc = 1;
                errmsg_set(err, errlen, "out of memory");
                break;
            }
            *out = x;
        }
        int prefill = !strcmp((const char *) sqlite3_column_text(st, 0), "step_prefill"), t = sqlite3_column_int(st, 5);
        double b = sqlite3_column_double(st, 1), tok = sqlite3_column_double(st, 2), ctx = sqlite3_column_double(st, 3);
        fstep *x = &(*out)[(*n)++];
        step_features(m, t, prefill, b, tok, ctx, x->f);
        x->ms = sqlite3_column_double(st, 4);
        if (t >= 1 && t <= 1024) tpseen[t]++;
        if (prefill) fit->tok_max = fmax(fit->tok_max, b * tok);
        else {
            fit->seq_max = fmax(fit->seq_max, b);
            fit->ctx_max = fmax(fit->ctx_max, ctx);
        }
    }
    sqlite3_finalize(st);
    return rc;
}

/* Mean |predicted / measured - 1| of the steps under F's last evaluation, %. */
static double steps_mape(const fctx *f)
{
    double s = 0;
    for (int i = 0; i < f->nst; i++) s += fabs(f->step_pred[i] / f->st[i].ms - 1);
    return f->nst ? 100 * s / f->nst : NAN;
}

const char *cobsfit_data_name(int data)
{
    return data == COBSFIT_REQUESTS ? "requests" : data == COBSFIT_STEPS ? "steps" : data == COBSFIT_NONE ? "none" : "both";
}

int cobsfit_fit(sqlite3 *db, const char *model, const char *gpu, const char *weights, int tp, int data, const char *tool,
                cobsfit_result *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    g_t0 = t0;
    g_last = -INFINITY;       /* the first line at the first simulation */
    cfitted *m = &out->m;
    gpu_spec g;
    char e2[512];
    out->data = data;
    if (catalog_model(db, model, &m->model, e2, sizeof e2) != 0 || catalog_gpu(db, gpu, &g, e2, sizeof e2) != 0) {
        errmsg_set(err, errlen, "fit observed: %s", e2);
        return 2;
    }
    if (!weights || !weights[0]) weights = m->model.weights[0] ? m->model.weights : "bf16";
    m->weight_bytes = catalog_weight_bytes(weights);
    m->kv_bytes = 2;
    if (m->weight_bytes <= 0) {
        errmsg_set(err, errlen, "fit observed: --weights: unknown precision '%s' (valid: bf16, fp16, fp8, int8, int4)", weights);
        return 2;
    }
    cdb_fit *fit = &m->fit;
    int n = find_runs(db, m->model.name, &g, weights, tp, out->run, fit, err, errlen);
    if (n < 0) return 1;
    int tpseen[1025] = { 0 }, nst = 0;
    fstep *steps = NULL;
    if (find_steps(db, m, &g, weights, tp, &steps, &nst, tpseen, fit, err, errlen) != 0) return 1;
    char tps_s[32] = "";
    if (tp > 0) snprintf(tps_s, sizeof tps_s, " at tp %d", tp);
    if ((n == 0 && nst == 0) || (data == COBSFIT_REQUESTS && n == 0) || (data == COBSFIT_STEPS && nst == 0)) {
        errmsg_set(err, errlen, "fit observed: no %s of %s on %s (weights %s)%s are stored: import %s (nothing stored)",
                   data == COBSFIT_STEPS ? "whole steps (calib import steps, calib import engine-log)"
                   : data == COBSFIT_REQUESTS || nst == 0 ? "observed runs (requests or sweeps)" : "observed runs or steps",
                   m->model.name, g.name, weights, tps_s,
                   data == COBSFIT_STEPS ? "some with latsim calib import engine-log FILE --scenario S.ini"
                                         : "one with latsim calib import observed FILE --scenario S.ini");
        free(steps);
        return 2;
    }
    out->nruns = n;
    out->nsteps = nst;
    double prior[CF_NTERMS], width[CF_NTERMS], lo[CF_NTERMS];
    cprior_terms(&g, NULL, &m->model, tp > 0 ? tp : 1, weights, prior, width);
    cprior_floor(&g, weights, lo);
    memcpy(m->c, prior, sizeof m->c);
    memcpy(out->prior, prior, sizeof out->prior);
    memcpy(out->width, width, sizeof out->width);
    frun *r = calloc((size_t) n + 1, sizeof *r);
    double *spred = calloc((size_t) nst + 1, sizeof *spred);
    if (!r || !spred) {
        free(r);
        free(spred);
        free(steps);
        errmsg_set(err, errlen, "out of memory");
        return 1;
    }
    int rc = 0;
    for (int i = 0; i < n && !rc; i++)
        rc = open_run(db, out->run[i], m, &r[i], out->start_err[i], err, errlen);
    if (rc) {
        close_runs(r, n);
        free(spred);
        free(steps);
        return rc;
    }
    /* The prior of the runs' engine (the first run's pool; the learned default's vLLM without runs). */
    if (n > 0 && r[0].engine[0]) {
        cprior_terms(&g, r[0].engine, &m->model, tp > 0 ? tp : 1, weights, prior, width);
        memcpy(m->c, prior, sizeof m->c);
        memcpy(out->prior, prior, sizeof out->prior);
        memcpy(out->width, width, sizeof out->width);
    }
    /* Free terms (cobsfit.h): weights only when two TP degrees separate it from the fixed term. */
    int tps = 0;
    for (int i = 0; i < n; i++)
        if (r[i].tp >= 1 && r[i].tp <= 1024) tpseen[r[i].tp]++;
    for (int t = 1; t <= 1024; t++) tps += tpseen[t] > 0;
    static const int FREE[] = { CF_FIXED, CF_WEIGHTS, CF_PREFILL, CF_KV, CF_DECODE, CF_ATTN };
    int use_runs = data != COBSFIT_STEPS && data != COBSFIT_NONE, use_steps = data != COBSFIT_REQUESTS && data != COBSFIT_NONE;
    int mtot = 0, kmax = 0;
    long nlev = 0;
    for (int i = 0; i < n; i++) {
        r[i].off = mtot;
        mtot += r[i].k;
        if (r[i].k > kmax) kmax = r[i].k;
        nlev += (long) r[i].nlv;
    }
    double *sbuf = calloc((size_t) kmax + 1, sizeof *sbuf), *eo = calloc(3 * ((size_t) mtot + 1), sizeof *eo);
    if (!sbuf || !eo) {
        free(sbuf);
        free(eo);
        close_runs(r, n);
        free(spred);
        free(steps);
        errmsg_set(err, errlen, "out of memory");
        return 1;
    }
    double *ef = eo, *el = eo + mtot + 1, *ob = eo + 2 * (mtot + 1);   /* fitted errors, left-out errors, observed */
    for (int j = 0; j < mtot; j++) ef[j] = el[j] = NAN;
    fctx f = { .r = r, .nr = n, .skip = -1, .scratch = sbuf, .use_runs = use_runs, .st = steps, .nst = nst,
               .use_steps = use_steps, .step_off = use_runs ? mtot : 0, .step_pred = spred };
    if (!use_runs)   /* the runs are only predicted: their residuals are not the fit's */
        for (int i = 0; i < n; i++) r[i].off = 0;
    memcpy(f.c, prior, sizeof f.c);
    memcpy(f.lo, lo, sizeof f.lo);
    if (data != COBSFIT_NONE)
        for (size_t j = 0; j < sizeof FREE / sizeof FREE[0]; j++)
            f.fk[f.nfree++] = FREE[j];   /* weights and fixed alias at one TP: the prior separates them */
    double x[CF_NTERMS], se[CF_NTERMS], info[CF_NTERMS];
    for (int j = 0; j < f.nfree; j++) {
        x[j] = f.x0[j] = log(prior[f.fk[j]]);
        f.psd[j] = width[f.fk[j]];
        se[j] = info[j] = NAN;
    }
    /* The start: the prior scaled by one factor (the prior's centre stays where it is). */
    f.phase = "starting";
    out->start_scale = f.nfree ? exp(scale_start(&f, x)) : 1;
    f.prior = 1;
    if (!f.failed) f.phase = "fitting";
    if (f.nfree && (f.failed || minimise(&f, x, COBSFIT_MAX_ITER, err, errlen) != 0)) {
        if (f.failed) errmsg_set(err, errlen, "fit observed: %s", f.err);
        rc = 1;
        goto done;
    }
    f.phase = "estimating the uncertainty";
    if (f.nfree) uncertainty(&f, x, se, info);
    if (f.failed) {
        errmsg_set(err, errlen, "fit observed: %s", f.err);
        rc = 1;
        goto done;
    }
    /* A term at its floor is held there; one the data do not determine (its
     * posterior sd without the misfit scaling above PIN_SHARE of the prior's)
     * is held at the prior; the others are fitted again without them. */
    int held[CF_NTERMS] = { 0 };   /* by term: 1 floor, 2 prior */
    for (int round = 0; round < 2 && f.nfree; round++) {
        int nh = 0;
        for (int j = 0; j < f.nfree; j++) {
            int t = f.fk[j];
            if (exp(x[j]) <= lo[t]) held[t] = 1, f.c[t] = lo[t], nh++;
            else if (!(info[j] <= PIN_SHARE * f.psd[j])) held[t] = 2, f.c[t] = prior[t], nh++;
        }
        if (!nh) break;
        int nf = 0;
        for (int j = 0; j < f.nfree; j++)
            if (!held[f.fk[j]]) {
                f.fk[nf] = f.fk[j], f.x0[nf] = f.x0[j], f.psd[nf] = f.psd[j], x[nf] = x[j];
                nf++;
            }
        f.nfree = nf;
        if (!nf || round == 1) break;
        f.phase = "refitting without the held terms";
        if (minimise(&f, x, COBSFIT_MAX_ITER, err, errlen) != 0) {
            rc = 1;
            goto done;
        }
        uncertainty(&f, x, se, info);
        if (f.failed) {
            errmsg_set(err, errlen, "fit observed: %s", f.err);
            rc = 1;
            goto done;
        }
    }
    /* Leave one out: each run (and the steps, as one more) predicted by a fit to the others. */
    double sum = 0, lsum = 0, sl = 0, slo = 0;
    int cnt = 0, lcnt = 0, parts = (use_runs ? n : 0) + (use_steps && nst > 0);
    for (int i = 0; i < n; i++)
        for (int s2 = 0; s2 < COBSFIT_NSTATS; s2++) out->loro[i][s2] = NAN;
    out->steps_loro = NAN;
    char ph[64];
    if (parts >= 2 && f.nfree) {
        for (int i = 0; i < (use_runs ? n : 0) + (use_steps && nst > 0) && !f.failed; i++) {
            double xl[CF_NTERMS];
            memcpy(xl, x, sizeof xl);
            int steps_out = !use_runs || i == n;
            snprintf(ph, sizeof ph, "leaving out part %d of %d", i + 1, parts);
            f.phase = ph;
            f.skip = steps_out ? -1 : i;
            f.skip_steps = steps_out;
            if (minimise(&f, xl, COBSFIT_MAX_ITER / 2, err, errlen) != 0) break;
            f.skip_steps = 0;
            if (steps_out) {
                fctx one = f;
                one.skip = -1;
                one.use_runs = 0;
                simulate_all(&one, xl, NULL);
                out->steps_loro = steps_mape(&one);
                continue;
            }
            fctx one = f;
            one.skip = -1;
            one.r = &r[i];
            one.nr = 1;
            one.st = NULL;
            simulate_all(&one, xl, NULL);
            f.evals = one.evals;
            if (one.failed && !f.failed) memcpy(f.err, one.err, sizeof f.err);
            f.failed |= one.failed;
            errors_of(&r[i], out->loro[i]);
            run_err(&r[i], NAN, el + r[i].off, NULL);
        }
        f.skip = -1;
        f.skip_steps = 0;
        f.phase = "computing the errors";
        if (f.failed) {
            errmsg_set(err, errlen, "fit observed: %s", f.err);
            rc = 1;
            goto done;
        }
    }
    /* The fitted model's errors on every run and step, used or not (R2 over the used statistics). */
    {
        fctx all = f;
        all.use_runs = 1;
        all.use_steps = 1;
        simulate_all(&all, x, NULL);
        f.evals = all.evals;
        if (all.failed) {
            errmsg_set(err, errlen, "fit observed: %s", all.err);
            rc = 1;
            goto done;
        }
    }
    out->steps_err = steps_mape(&f);
    double lo_mean = 0;
    int k = 0;
    for (int i = 0; i < n; i++) {
        errors_of(&r[i], out->err[i]);
        run_err(&r[i], NAN, ef + r[i].off, ob + r[i].off);
        if (r[i].nlv) {
            out->nlv[i] = (int) r[i].nlv;
            out->sweep_p99[i] = worst_level(&r[i], 4);
            out->sweep_tps[i] = worst_level(&r[i], 5);
        }
    }
    for (int j = 0; j < mtot; j++) lo_mean += log(ob[j]), k++;
    if (k) lo_mean /= k;
    for (int j = 0; j < mtot; j++) {
        double e = 100 * ef[j], l = 100 * el[j];
        if (isfinite(e)) {
            sum += fabs(e), cnt++;
            double d = log1p(e / 100), t = log(ob[j]) - lo_mean;
            sl += d * d, slo += t * t;
        }
        if (isfinite(l)) lsum += fabs(l), lcnt++;
    }
    if (isfinite(out->steps_loro)) lsum += out->steps_loro, lcnt++;
    out->mean_abs = cnt ? sum / cnt : NAN;
    out->loro_abs = lcnt ? lsum / lcnt : NAN;
    out->evals = f.evals;
    /* The model as stored. */
    cfitrow_ident(fit, m->model.name, g.name, weights, "observed", tool, tpseen);
    long nreq = 0;
    for (int i = 0; i < n; i++) nreq += r[i].nreq;
    fit->n_points = (int) ((use_runs ? nreq + nlev : 0) + (use_steps ? nst : 0));
    fit->r2 = slo > 0 && use_runs ? 1 - sl / slo : NAN;
    double in_sample = use_runs ? out->mean_abs : out->steps_err;
    if (use_runs && use_steps && nst > 0 && isfinite(out->steps_err))
        in_sample = (out->mean_abs * n + out->steps_err) / (n + 1);
    fit->mape = parts >= 2 ? out->loro_abs : data == COBSFIT_NONE ? (n ? out->mean_abs : out->steps_err) : in_sample;
    fit->folds = parts >= 2 ? parts : 0;
    char lvs[48] = "", sts[64] = "";
    if (nlev) snprintf(lvs, sizeof lvs, ", %ld sweep levels", nlev);
    if (nst) snprintf(sts, sizeof sts, "%s%d whole steps", use_runs && n ? " and " : "", nst);
    char runs_s[128] = "";
    if (use_runs) snprintf(runs_s, sizeof runs_s, "replays of %d observed run%s (%ld requests%s)", n, n == 1 ? "" : "s", nreq, lvs);
    if (data == COBSFIT_NONE)
        snprintf(fit->note, sizeof fit->note, "the prior alone (cprior.h: the learned default's terms), no data fitted; "
                 "error on the stored %s", n ? "runs" : "steps");
    else
        snprintf(fit->note, sizeof fit->note, "posterior: %s%s, Nelder-Mead on log-coefficients toward the prior (cprior.h; "
                 "%d simulations); error %s", runs_s, use_steps ? sts : "", f.evals,
                 parts >= 2 ? "leave-one-out" : "of the fit itself (one run or step set)");
    memcpy(m->c, f.c, sizeof m->c);
    for (int j = 0; j < f.nfree; j++) m->c[f.fk[j]] = fmax(exp(x[j]), lo[f.fk[j]]);
    for (int t = 0; t < CF_NTERMS; t++) {
        cdb_coef *c = cfitrow_coef(fit, t, m->c[t], width[t] > 0 && held[t] != 1 ? m->c[t] * width[t] : 0,
                                   held[t] == 1 ? "floor" : "prior");
        for (int j = 0; j < f.nfree; j++)
            if (f.fk[j] == t) {
                int at_floor = exp(x[j]) <= lo[t];
                c->se = at_floor ? 0 : m->c[t] * se[j];
                snprintf(c->status, sizeof c->status, "%s", at_floor ? "floor" : "fitted");
            }
    }
    fit->ncoef = CF_NTERMS;
    memcpy(out->lo, lo, sizeof out->lo);
    if (cdb_save_fit(db, fit, NULL, 0, err, errlen) != 0) {
        rc = 1;
        goto done;
    }
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, "INSERT INTO calib_fit_observed (fit_id, run_id) VALUES (?,?)", -1, &st, NULL) != SQLITE_OK) {
        errmsg_set(err, errlen, "calibration store: %s", sqlite3_errmsg(db));
        rc = 1;
        goto done;
    }
    for (int i = 0; i < n && use_runs; i++) {
        sqlite3_reset(st);
        sqlite3_bind_int64(st, 1, fit->id);
        sqlite3_bind_int64(st, 2, out->run[i]);
        if (sqlite3_step(st) != SQLITE_DONE) {
            errmsg_set(err, errlen, "calibration store: %s", sqlite3_errmsg(db));
            rc = 1;
            break;
        }
    }
    sqlite3_finalize(st);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    out->wall_s = (double) (t1.tv_sec - t0.tv_sec) + 1e-9 * (double) (t1.tv_nsec - t0.tv_nsec);
done:
    close_runs(r, n);
    free(sbuf);
    free(eo);
    free(spred);
    free(steps);
    return rc;
}

static void print_row(FILE *o, const char *label, const double *e)
{
    fprintf(o, "  %-22s", label);
    for (int s = 0; s < COBSFIT_NSTATS; s++)
        if (isfinite(e[s])) fprintf(o, " %+9.1f%%", e[s]);
        else fprintf(o, " %10s", "-");
    fputc('\n', o);
}

void cobsfit_print(const cobsfit_result *r, FILE *o)
{
    fprintf(o, "\nfitted on: %s; prior (cprior.h) and posterior per term\n  %-22s %12s %8s %12s %12s  %s\n",
            cobsfit_data_name(r->data), "term", "prior", "width", "posterior", "std_error", "status");
    for (int t = 0; t < CF_NTERMS; t++) {
        const cdb_coef *c = &r->m.fit.coef[t];
        fprintf(o, "  %-22s %12.5g %8s %12.5g %12.4g  %s\n", c->name, r->prior[t],
                r->width[t] > 0 ? (fabs(r->width[t] - log(4.0)) < 1e-12 ? "x4" : "x2") : "-", c->value, c->se, c->status);
    }
    if (r->nruns) {
        fprintf(o, "\nreplay error (predicted / observed - 1) per run and statistic%s\n  %-22s",
                r->data == COBSFIT_STEPS || r->data == COBSFIT_NONE ? " (the runs not fitted: predicted)" : "", "");
        for (int s = 0; s < COBSFIT_NSTATS; s++) fprintf(o, " %10s", cobsfit_stat_names[s]);
        fputc('\n', o);
    }
    for (int i = 0; i < r->nruns; i++) {
        char lab[64];
        snprintf(lab, sizeof lab, "run %lld fitted", (long long) r->run[i]);
        print_row(o, lab, r->err[i]);
        snprintf(lab, sizeof lab, "run %lld roofline", (long long) r->run[i]);
        print_row(o, lab, r->start_err[i]);
        if (isfinite(r->loro[i][0]) || isfinite(r->loro[i][2])) {
            snprintf(lab, sizeof lab, "run %lld left out", (long long) r->run[i]);
            print_row(o, lab, r->loro[i]);
        }
        if (r->nlv[i])
            fprintf(o, "  run %lld is a sweep of %d levels: worst level's error shown; ttft_p99 %+.1f%%, output tokens/s %+.1f%%\n",
                    (long long) r->run[i], r->nlv[i], r->sweep_p99[i], r->sweep_tps[i]);
    }
    if (r->nsteps) {
        fprintf(o, "whole steps: %d, mean |error| %.2f %%%s", r->nsteps, r->steps_err,
                r->data == COBSFIT_REQUESTS || r->data == COBSFIT_NONE ? " (not fitted: predicted)" : "");
        if (isfinite(r->steps_loro)) fprintf(o, ", %.2f %% left out", r->steps_loro);
        fputc('\n', o);
    }
    if (r->nruns) fprintf(o, "mean |error| %.2f %% over the runs", r->mean_abs);
    if (isfinite(r->loro_abs)) fprintf(o, ", %.2f %% leave-one-out", r->loro_abs);
    fprintf(o, "; start: the prior's terms x %.3g; %d simulations in %.2f s\n", r->start_scale, r->evals, r->wall_s);
}
