/* cplx.h -- the complexity router's decision: which of two models a request goes
 * to, given its complexity score, as a pure function of the score, the
 * configuration and one uniform draw from the router's own random stream.
 *
 * A request's true side is SMALL when score < cut, else LARGE.  A score within
 * the uncertain band (cut - band <= score < cut + band, band > 0) goes to LARGE
 * whatever its side (the classifier is not confident, so the safe model answers).
 * Any other request is put on the wrong side with probability error (the
 * classifier's error), drawn only when error > 0.
 */
#ifndef LATSIM_CPLX_H
#define LATSIM_CPLX_H

#include <stddef.h>
#include <gsl/gsl_rng.h>

typedef enum { CPLX_SMALL = 0, CPLX_LARGE = 1 } cplx_side;

typedef struct cplx_cfg {
    double cut;               /* score threshold, [0, 1] */
    double error;             /* probability of the wrong side, [0, 1] */
    double band;              /* half-width of the uncertain band around cut, score units, >= 0 */
} cplx_cfg;

/* Checks C.  Returns 0, or -1 with "KEY: what is wrong" in ERR. */
int cplx_check(const cplx_cfg *c, char *err, size_t errlen);

/* The side request of complexity SCORE truly belongs to. */
static inline cplx_side cplx_truth(const cplx_cfg *c, double score)
{
    return score < c->cut ? CPLX_SMALL : CPLX_LARGE;
}

/* The side the classifier sends it to (R: the router's stream; used only when
 * error > 0 and the score is outside the band).  Cannot fail. */
cplx_side cplx_route(const cplx_cfg *c, double score, gsl_rng *r);

#endif
