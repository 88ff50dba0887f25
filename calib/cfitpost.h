/* cfitpost.h -- `latsim calib fit`: the fitted step model (cfitted.h) fitted to
 * the whole steps stored, by default as a posterior: it starts from the
 * learned default (cprior.h) and is regularised toward it, so that a term the steps cannot determine stays at
 * the prior (status "prior") instead of at 0 or at a wild value.
 *
 * The model is linear in its terms, so the posterior's maximum is a bounded
 * weighted least-squares problem, solved exactly (nnls.h on an augmented
 * design):
 *   minimise  sum over steps ((y_i - x_i c) / y_i)^2 / sigma_i^2
 *           + sum over free terms ((c_k - p_k) / (p_k w_k))^2
 *   subject to c_k >= lo_k (cprior_floor: no rate faster than the datasheet peak)
 * where p_k is the prior, w_k its width (the log-sd of cprior_terms, used as a
 * relative sd: ln 2 = 0.69 of the prior for the rates, ln 4 = 1.39 for the
 * fixed, launch and all-reduce latency terms) and sigma_i the relative noise
 * of step i, estimated by the caller per phase (prefill, decode) from the
 * data-only fit's residuals, never below CFPOST_SIGMA_MIN: a phase the model
 * prices well counts for more than one it prices badly.  A term of width 0 (the per-sequence term) or of
 * prior 0 is held at its prior.
 *
 * Posterior sd of the fitted terms: the inverse of the objective's Hessian
 * (the steps' information plus the prior's) over the terms not at their floor.
 * A term whose posterior sd is above CFPOST_PIN of its prior sd is not
 * determined by the steps: it is held at the prior and the others are fitted
 * again without it (as calib fit observed does, cobsfit.h).
 */
#ifndef LATSIM_CFITPOST_H
#define LATSIM_CFITPOST_H

#include <stddef.h>
#include <gsl/gsl_matrix.h>
#include <gsl/gsl_vector.h>

#include "cfitted.h"

#define CFPOST_SIGMA_MIN 0.01   /* the least relative noise of a step (1 %) */
#define CFPOST_PIN 0.9          /* posterior sd above this share of the prior's: not determined */

enum { CFPOST_FITTED, CFPOST_PRIOR, CFPOST_FLOOR };

typedef struct cfpost {
    double c[CF_NTERMS];      /* posterior coefficients, units as the terms */
    double se[CF_NTERMS];     /* posterior sd, same units (a held term: its prior's sd; at the floor: 0) */
    int status[CF_NTERMS];    /* CFPOST_FITTED, CFPOST_PRIOR or CFPOST_FLOOR */
    double mape;              /* mean |error| on the steps fitted, % */
} cfpost;

/* The posterior's maximum for the steps of X (rows: cfitted_features) and Y
 * (measured ms) with ROWS (length X's rows; NULL: all) selecting those fitted,
 * PRIOR, WIDTH and LO (CF_NTERMS each: cprior_terms, cprior_floor) and the
 * relative noise SIGMA of each step (length X's rows).  Returns 0, or -1 with ERR (out of memory, GSL). */
int cfpost_fit(const gsl_matrix *X, const gsl_vector *y, const int *rows, const double *prior, const double *width,
               const double *lo, const double *sigma, cfpost *out, char *err, size_t errlen);

/* K-fold cross-validated MAPE of cfpost_fit (step i in fold i % K), %; NAN on
 * failure (ERR says why). */
double cfpost_cv_mape(const gsl_matrix *X, const gsl_vector *y, const double *prior, const double *width,
                      const double *lo, const double *sigma, size_t k, char *err, size_t errlen);

/* Fits the steps stored for (MODEL, GPU, WEIGHTS) (all TP degrees) and stores the
 * fit in the caller's transaction; fills OUT (id included).  PRIOR 1: as a
 * posterior toward the learned default (cfitpost.h; terms the steps do not
 * determine stay at the prior, status "prior"; every term at or above the
 * datasheet floor, status "floor" there); 0: the data alone (non-negative
 * least squares; a term the steps cannot separate is "aliased", at 0, and a
 * singular design is refused).  Returns 0, or -1 with one line in ERR: no
 * measurements, too few points, a singular design (PRIOR 0), an outlier, a
 * useless error, a GSL failure. */
int cfitted_fit(sqlite3 *db, const char *model, const char *gpu, const char *weights,
                const char *tool, size_t folds, int prior, cfitted *out, char *err, size_t errlen);

#endif
