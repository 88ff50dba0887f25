/* dist.h -- random quantities written in scenario files.
 *
 * A distribution is written FAMILY(key=value, ...):
 *   const(X)                       always X (a bare number X means the same)
 *   exp(mean=M)                    exponential
 *   lognormal(mean=M, cv=C)        lognormal with that mean and coefficient of variation
 *   gamma(mean=M, cv=C)            gamma
 *   weibull(mean=M, cv=C)          Weibull; the shape is solved from C numerically
 *   uniform(min=A, max=B)          uniform on [A, B)
 *   empirical(file=F, column=K)    resampled uniformly from column K of CSV file F
 *                                  (K is a header name; F is relative to the scenario)
 * Sampling uses gsl_ran_*; the caller owns the gsl_rng.
 */
#ifndef LATSIM_DIST_H
#define LATSIM_DIST_H

#include <math.h>

#include <stddef.h>
#include <gsl/gsl_rng.h>

/* Largest coefficient of variation accepted (lognormal's sigma stays finite,
 * gamma's shape stays above 1e-12). */
#define DIST_CV_MAX 1e6
/* Smallest gamma cv: the shape 1/cv^2 stays at most 1e12 (a smaller cv is a
 * constant for every purpose, and cv^2 underflows below about 1e-154). */
#define DIST_GAMMA_CV_MIN 1e-6

typedef enum {
    DIST_CONST, DIST_EXP, DIST_LOGNORMAL, DIST_GAMMA, DIST_WEIBULL,
    DIST_UNIFORM, DIST_EMPIRICAL
} dist_family;

typedef struct dist {
    dist_family family;
    double mean;          /* mean of the distribution, in the quantity's unit */
    double cv;            /* coefficient of variation (sd / mean), >= 0 */
    double a, b;          /* family parameters in GSL's terms (e.g. lognormal zeta, sigma;
                             gamma shape, scale; weibull scale, shape; uniform min, max) */
    double *values;       /* empirical: the sample values (owned) */
    size_t nvalues;       /* empirical: how many */
} dist;

/* Parses SPEC into D.  BASEDIR resolves relative empirical file names (may be NULL).
 * Returns 0 on success; on error returns -1 and writes a one-line message (without
 * file/line, the caller adds those) into ERR. */
int dist_parse(dist *d, const char *spec, const char *basedir, char *err, size_t errlen);

/* One draw.  Never negative for the families above. */
double dist_sample(const dist *d, gsl_rng *r);

/* Largest value the distribution can produce, or INFINITY when unbounded. */
double dist_max(const dist *d);

/* Smallest value the distribution can produce (0 for the unbounded families). */
double dist_min(const dist *d);

/* Releases what dist_parse allocated (safe on a zeroed dist). */
void dist_free(dist *d);

/* The family name as written in scenario files ("exp", "lognormal", ...). */
const char *dist_family_name(dist_family f);

/* An exponential variate of mean MU from U in (0, 1) by inverse transform:
 * -MU log U, exactly what gsl_cdf_exponential_Qinv(U, MU) computes (GSL 2.x),
 * without the library call. */
static inline double dist_exp_qinv(double u, double mu)
{
    return -mu * log(u);
}

#endif
