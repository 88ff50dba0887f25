/* cplx.c -- complexity routing decision (see cplx.h). */
#include "core/cplx.h"
#include "engine/errmsg.h"

#include <math.h>

int cplx_check(const cplx_cfg *c, char *err, size_t errlen)
{
    if (!(c->cut >= 0 && c->cut <= 1)) {
        errmsg_set(err, errlen, "complexity_cut: must be in [0, 1], got %g", c->cut);
        return -1;
    }
    if (!(c->error >= 0 && c->error <= 1)) {
        errmsg_set(err, errlen, "classifier_error: must be in [0, 1], got %g", c->error);
        return -1;
    }
    if (!(c->band >= 0 && c->band <= 1)) {
        errmsg_set(err, errlen, "uncertain_band: must be in [0, 1], got %g", c->band);
        return -1;
    }
    return 0;
}

cplx_side cplx_route(const cplx_cfg *c, double score, gsl_rng *r)
{
    if (c->band > 0 && score >= c->cut - c->band && score < c->cut + c->band)
        return CPLX_LARGE;
    cplx_side s = cplx_truth(c, score);
    if (c->error > 0 && gsl_rng_uniform(r) < c->error)
        s = s == CPLX_SMALL ? CPLX_LARGE : CPLX_SMALL;
    return s;
}
