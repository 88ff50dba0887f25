/* cfitpost.c -- the fitted step model fitted to whole steps, as a posterior
 * (see cfitpost.h for the objective, the prior and the uncertainty) or the
 * steps alone.
 *
 * A stored measurement becomes a cost_step the way the simulator describes a
 * step: a prefill row of B prompts of T tokens is prefill_tokens = B T,
 * prefill_pairs = B T (T + 1) / 2, prefill_seqs = B; a decode row of B sequences
 * with T tokens of context is decode_seqs = B, kv_tokens = B (T + 1).
 */
#include "cfitpost.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_linalg.h>

#include "engine/errmsg.h"
#include "cfitrow.h"
#include "cprior.h"
#include "nnls.h"

/* The prior's sd of term K in its units (0: held). */
static double prior_sd(const double *prior, const double *width, int k)
{
    return prior[k] > 0 && width[k] > 0 ? prior[k] * width[k] : 0;
}

/* One bounded least-squares solve with the terms HELD (1) at their priors:
 * the steps selected by ROWS and one row per free term pulling it toward its
 * prior, on c = lo + d, d >= 0.  Fills C and ST (CFPOST_FITTED or
 * CFPOST_FLOOR for the free terms, CFPOST_PRIOR for the held).  Returns 0 or -1. */
static int solve(const gsl_matrix *X, const gsl_vector *y, const int *rows, const double *prior, const double *width,
                 const double *lo, const double *sigma, const int *held, double *c, int *st, char *err, size_t errlen)
{
    size_t n = X->size1, m = 0, q = 0;
    for (size_t i = 0; i < n; i++) m += !rows || rows[i];
    for (int k = 0; k < CF_NTERMS; k++) q += !held[k];
    if (m + q == 0) {
        for (int k = 0; k < CF_NTERMS; k++) c[k] = prior[k], st[k] = CFPOST_PRIOR;
        return 0;
    }
    gsl_matrix *A = gsl_matrix_calloc(m + q, CF_NTERMS);
    gsl_vector *b = gsl_vector_alloc(m + q), *w = gsl_vector_alloc(m + q);
    int rc = -1;
    if (!A || !b || !w) {
        errmsg_set(err, errlen, "out of memory");
        goto done;
    }
    size_t r = 0;
    for (size_t i = 0; i < n; i++) {
        if (rows && !rows[i]) continue;
        double yi = gsl_vector_get(y, i), v = yi;
        for (int k = 0; k < CF_NTERMS; k++) {
            double x = gsl_matrix_get(X, i, (size_t)k);
            v -= x * (held[k] ? prior[k] : lo[k]);
            if (!held[k]) gsl_matrix_set(A, r, (size_t)k, x);
        }
        gsl_vector_set(b, r, v);
        gsl_vector_set(w, r, 1.0 / (yi * yi * sigma[i] * sigma[i]));
        r++;
    }
    int use[CF_NTERMS];
    for (int k = 0; k < CF_NTERMS; k++) {
        use[k] = !held[k];
        if (held[k]) continue;
        double sd = prior_sd(prior, width, k);
        gsl_matrix_set(A, r, (size_t)k, 1.0);
        gsl_vector_set(b, r, fmax(prior[k] - lo[k], 0));
        gsl_vector_set(w, r, 1.0 / (sd * sd));
        r++;
    }
    nnls_result nr;
    if (nnls_fit(A, b, w, use, &nr, err, errlen) != 0) goto done;
    for (int k = 0; k < CF_NTERMS; k++) {
        if (held[k]) {
            c[k] = prior[k];
            st[k] = CFPOST_PRIOR;
        } else {
            c[k] = lo[k] + nr.b[k];
            st[k] = nr.status[k] == NNLS_FITTED ? CFPOST_FITTED : CFPOST_FLOOR;
        }
    }
    rc = 0;
done:
    gsl_matrix_free(A);
    gsl_vector_free(b);
    gsl_vector_free(w);
    return rc;
}

/* The posterior sd of the fitted terms (ST == CFPOST_FITTED) into SD: the
 * inverse Hessian of the objective over them.  Returns 0 or -1. */
static int posterior_sd(const gsl_matrix *X, const gsl_vector *y, const int *rows, const double *prior,
                        const double *width, const double *sigma, const int *st, double *sd, char *err, size_t errlen)
{
    int idx[CF_NTERMS], p = 0;
    for (int k = 0; k < CF_NTERMS; k++) {
        sd[k] = 0;
        if (st[k] == CFPOST_FITTED) idx[p++] = k;
    }
    if (p == 0) return 0;
    gsl_matrix *H = gsl_matrix_calloc((size_t)p, (size_t)p);
    if (!H) {
        errmsg_set(err, errlen, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < X->size1; i++) {
        if (rows && !rows[i]) continue;
        double yi = gsl_vector_get(y, i), s = 1.0 / (yi * yi * sigma[i] * sigma[i]);
        for (int a = 0; a < p; a++)
            for (int b = 0; b < p; b++)
                *gsl_matrix_ptr(H, (size_t)a, (size_t)b) +=
                    gsl_matrix_get(X, i, (size_t)idx[a]) * gsl_matrix_get(X, i, (size_t)idx[b]) * s;
    }
    for (int a = 0; a < p; a++) {
        double ps = prior_sd(prior, width, idx[a]);
        if (ps > 0) *gsl_matrix_ptr(H, (size_t)a, (size_t)a) += 1.0 / (ps * ps);
    }
    gsl_error_handler_t *old = gsl_set_error_handler_off();
    int s = gsl_linalg_cholesky_decomp1(H);
    if (s == 0) s = gsl_linalg_cholesky_invert(H);
    gsl_set_error_handler(old);
    if (s == 0)
        for (int a = 0; a < p; a++) sd[idx[a]] = sqrt(fmax(gsl_matrix_get(H, (size_t)a, (size_t)a), 0));
    gsl_matrix_free(H);
    if (s != 0) {
        errmsg_set(err, errlen, "fit: the posterior's covariance is singular (%s)", gsl_strerror(s));
        return -1;
    }
    return 0;
}

int cfpost_fit(const gsl_matrix *X, const gsl_vector *y, const int *rows, const double *prior, const double *width,
               const double *lo, const double *sigma, cfpost *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    int held[CF_NTERMS];
    for (int k = 0; k < CF_NTERMS; k++) held[k] = prior_sd(prior, width, k) == 0;
    double sd[CF_NTERMS];
    /* Fit; hold the terms the steps do not determine; fit the rest again. */
    if (solve(X, y, rows, prior, width, lo, sigma, held, out->c, out->status, err, errlen) != 0 ||
        posterior_sd(X, y, rows, prior, width, sigma, out->status, sd, err, errlen) != 0)
        return -1;
    int more = 0;
    for (int k = 0; k < CF_NTERMS; k++)
        if (out->status[k] == CFPOST_FITTED && !(sd[k] <= CFPOST_PIN * prior_sd(prior, width, k)))
            held[k] = 1, more = 1;
    if (more && (solve(X, y, rows, prior, width, lo, sigma, held, out->c, out->status, err, errlen) != 0 ||
                 posterior_sd(X, y, rows, prior, width, sigma, out->status, sd, err, errlen) != 0))
        return -1;
    size_t m = 0;
    double sum = 0;
    for (int k = 0; k < CF_NTERMS; k++)
        out->se[k] = out->status[k] == CFPOST_FITTED ? sd[k] : out->status[k] == CFPOST_PRIOR ? prior_sd(prior, width, k) : 0;
    for (size_t i = 0; i < X->size1; i++) {
        if (rows && !rows[i]) continue;
        double yi = gsl_vector_get(y, i);
        sum += fabs(nnls_predict(X, i, out->c) - yi) / yi;
        m++;
    }
    out->mape = m ? 100 * sum / (double)m : 0;
    return 0;
}

double cfpost_cv_mape(const gsl_matrix *X, const gsl_vector *y, const double *prior, const double *width,
                      const double *lo, const double *sigma, size_t k, char *err, size_t errlen)
{
    size_t n = X->size1;
    if (k < 2 || k > n) {
        errmsg_set(err, errlen, "cross-validation: %zu folds for %zu steps", k, n);
        return NAN;
    }
    int *rows = malloc(n * sizeof *rows);
    if (!rows) {
        errmsg_set(err, errlen, "out of memory");
        return NAN;
    }
    double sum = 0;
    for (size_t f = 0; f < k; f++) {
        for (size_t i = 0; i < n; i++) rows[i] = i % k != f;
        cfpost p;
        if (cfpost_fit(X, y, rows, prior, width, lo, sigma, &p, err, errlen) != 0) {
            free(rows);
            return NAN;
        }
        for (size_t i = f; i < n; i += k) {
            double yi = gsl_vector_get(y, i);
            sum += fabs(nnls_predict(X, i, p.c) - yi) / yi;
        }
    }
    free(rows);
    return 100 * sum / (double)n;
}

/* ---- the fit of the stored steps (cfitted_fit) ----------------------------------- */

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
    cfitrow_ident(f, out->model.name, g.name, weights, "steps-csv", tool, tpseen);
    f->n_points = (int)n;
    size_t len;
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
        out->c[j] = post.c[j];
        cfitrow_coef(f, j, post.c[j], post.se[j], post.status[j] == CFPOST_FITTED ? "fitted"
                     : post.status[j] == CFPOST_PRIOR ? "prior" : "floor");
    }
    for (int j = 0; j < CF_NTERMS && !prior; j++) {
        cdb_coef *c = cfitrow_coef(f, j, r.b[j], r.status[j] == NNLS_FITTED ? r.se[j] : 0,
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
