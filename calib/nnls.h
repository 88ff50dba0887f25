/* nnls.h -- weighted least squares with non-negative coefficients (GSL), term
 * selection by rank, and k-fold cross-validation.
 *
 * The caller gives a design matrix X (n points x p terms, in priority order), the
 * observations y and weights w (1/y^2 for relative errors).  nnls_fit():
 *   1. keeps a term only if its column is not (numerically) a combination of the
 *      columns of the terms kept before it; the others are "aliased": the data
 *      cannot separate them, and they are held at 0;
 *   2. solves min sum w (y - X b)^2 subject to b >= 0 by the Lawson-Hanson active
 *      set method, each unconstrained sub-problem by gsl_multifit_wlinear;
 *   3. gives standard errors from the covariance of the final unconstrained
 *      sub-problem, scaled by chi^2 / (n - free terms) (the weights are relative,
 *      so the noise scale is estimated from the residuals).
 */
#ifndef LATSIM_NNLS_H
#define LATSIM_NNLS_H

#include <stddef.h>
#include <gsl/gsl_matrix.h>
#include <gsl/gsl_vector.h>

#define NNLS_MAX_P 16

enum { NNLS_FITTED = 0, NNLS_BOUND = 1, NNLS_ALIASED = 2 };

typedef struct nnls_result {
    size_t p;                    /* terms */
    double b[NNLS_MAX_P];        /* coefficients (0 when bound or aliased) */
    double se[NNLS_MAX_P];       /* standard errors (0 when bound or aliased) */
    int status[NNLS_MAX_P];      /* NNLS_FITTED, NNLS_BOUND or NNLS_ALIASED */
    int aliased_with[NNLS_MAX_P];/* aliased: a kept term it is (partly) confounded with, or -1 */
    size_t kept;                 /* terms not aliased */
    size_t free;                 /* terms fitted (not at the bound) */
    double chi2;                 /* weighted residual sum of squares */
    double r2;                   /* 1 - SSres/SStot (unweighted) */
    double mape;                 /* mean |y - yhat| / y on the fitted points, % */
} nnls_result;

/* Fits as above; USE (length p, may be NULL = all) restricts the candidate terms
 * (a term with USE[j] == 0 is treated as aliased).  Returns 0, or -1 with a
 * message in ERR (out of memory, a GSL failure). */
int nnls_fit(const gsl_matrix *X, const gsl_vector *y, const gsl_vector *w, const int *use,
             nnls_result *r, char *err, size_t errlen);

/* X b for row I. */
double nnls_predict(const gsl_matrix *X, size_t i, const double *b);

/* K-fold cross-validated mean absolute percentage error: point i is in fold
 * i % K; each fold is predicted by a fit (with the terms USE) to the other folds
 * only.  Returns the MAPE in %, or NAN on failure (ERR says why). */
double nnls_cv_mape(const gsl_matrix *X, const gsl_vector *y, const gsl_vector *w, const int *use,
                    size_t k, char *err, size_t errlen);

#endif
