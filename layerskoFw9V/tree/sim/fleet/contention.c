/* contention.c -- the CPU-contention curve (parsing, validation, linear
 * interpolation with GSL) and the swapping multiplier (see contention.h). */
#include "fleet/contention.h"
#include "engine/errmsg.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <gsl/gsl_interp.h>

/* Reads a number at *P (skipping spaces), advancing *P.  Returns 0 or -1. */
static int read_num(const char **p, double *v)
{
    char *end;
    while (isspace((unsigned char) **p))
        (*p)++;
    errno = 0;
    *v = strtod(*p, &end);
    if (end == *p || errno || !isfinite(*v))
        return -1;
    *p = end;
    while (isspace((unsigned char) **p))
        (*p)++;
    return 0;
}

int contention_parse(contention_curve *c, const char *spec, char *err, size_t errlen)
{
    const char *p = spec;
    c->n = 0;
    while (*p) {
        double u, f;
        if (c->n == CONTENTION_MAX_POINTS) {
            errmsg_set(err, errlen, "more than %d points", CONTENTION_MAX_POINTS);
            return -1;
        }
        if (read_num(&p, &u) != 0 || *p++ != ':' || read_num(&p, &f) != 0 ||
            (*p != ',' && *p != '\0')) {
            errmsg_set(err, errlen, "expected points UTIL:FACTOR separated by commas, "
                       "as in '" CONTENTION_DEFAULT "', got '%s'", spec);
            return -1;
        }
        if (*p == ',')
            p++;
        if (!(u >= 0 && u <= 1)) {
            errmsg_set(err, errlen, "utilisation %g is not in [0, 1]", u);
            return -1;
        }
        if (!(f >= 1)) {
            errmsg_set(err, errlen, "factor %g at %g is below 1 (contention only slows down)", f, u);
            return -1;
        }
        if (c->n > 0 && !(u > c->util[c->n - 1])) {
            errmsg_set(err, errlen, "not increasing: utilisation %g follows %g", u,
                       c->util[c->n - 1]);
            return -1;
        }
        if (c->n > 0 && f < c->factor[c->n - 1]) {
            errmsg_set(err, errlen, "not increasing: factor %g at %g is below %g at %g", f, u,
                       c->factor[c->n - 1], c->util[c->n - 1]);
            return -1;
        }
        c->util[c->n] = u;
        c->factor[c->n] = f;
        c->n++;
    }
    if (c->n < 2) {
        errmsg_set(err, errlen, "needs at least 2 points UTIL:FACTOR, as in '" CONTENTION_DEFAULT "'");
        return -1;
    }
    return 0;
}

double contention_factor(const contention_curve *c, double u)
{
    if (!(u > c->util[0]))
        return c->factor[0];
    if (u >= c->util[c->n - 1])
        return c->factor[c->n - 1];
    /* gsl_interp_eval without an accelerator: a binary search over <= 32 points.
     * The interpolation object is built per call: the curve is small and this is
     * called once per evaluation, not per event. */
    double y = c->factor[0];
    gsl_interp *in = gsl_interp_alloc(gsl_interp_linear, c->n);
    if (in != NULL && gsl_interp_init(in, c->util, c->factor, c->n) == 0)
        y = gsl_interp_eval(in, c->util, c->factor, u, NULL);
    else {
        /* Out of memory: the same line by hand. */
        size_t i = 1;
        while (u > c->util[i])
            i++;
        double w = (u - c->util[i - 1]) / (c->util[i] - c->util[i - 1]);
        y = c->factor[i - 1] + w * (c->factor[i] - c->factor[i - 1]);
    }
    gsl_interp_free(in);
    return y;
}

double contention_swap(double used, double limit, double swap_factor)
{
    return used > limit ? swap_factor : 1.0;
}
