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

/* Measurements that no fit of this model can explain, found by the residuals of
 * a robust fit on the log scale, r_i = log(y_i / yhat_i):
 *   1. starts: the fit to all points, and fits leaving out each (and all) of the
 *      few points with the smallest y (the most weight under 1/y^2), the largest
 *      y and the largest |r| under the fit to all; the start with the smallest
 *      median |r| over all points wins (one bad point cannot win it);
 *   2. from there, iteratively reweighted non-negative fits with Tukey's bisquare
 *      weights (1 - (r/R)^2)^2, 0 beyond R, where R = max(NNLS_OUTLIER_K s,
 *      log NNLS_OUTLIER_RATIO) and s = 1.4826 median |r| (the MAD scale);
 *   3. an outlier is a point with |r| >= R at convergence.
 * FLAG (length n) receives 1 for an outlier, PRED (length n, may be NULL) the
 * robust fit's prediction of each point.  With fewer than p + 3 points nothing can
 * be told apart and none is flagged.  Returns the number of outliers, or -1 with
 * ERR (out of memory, a GSL failure). */
/* The threshold R: a point is an outlier only when it is both 6 robust standard
 * deviations from the fit to the others (Gaussian noise goes that far with
 * probability 2e-9: never among thousands of honest points) and off by more than
 * a factor 3 either way (the worst honest step of the BLOOM-176B validation is
 * off by a factor 1.6, docs/calibration.md, "Commands", so systematic misfit of the model is
 * not taken for bad data; a unit error is 1000x, a misplaced digit 10x). */
#define NNLS_OUTLIER_K 6.0
#define NNLS_OUTLIER_RATIO 3.0
int nnls_outliers(const gsl_matrix *X, const gsl_vector *y, const gsl_vector *w, const int *use,
                  int *flag, double *pred, char *err, size_t errlen);

#endif
