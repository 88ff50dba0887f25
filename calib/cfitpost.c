/* cfitpost.c -- the fitted step model on whole steps as a posterior (see
 * cfitpost.h for the objective, the prior and the uncertainty). */
#include "cfitpost.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_linalg.h>

#include "engine/errmsg.h"
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
