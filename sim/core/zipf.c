/* zipf.c -- Zipf draws through GSL's discrete sampler (see zipf.h). */
#include "core/zipf.h"

#include <math.h>
#include <stdlib.h>

#include <gsl/gsl_randist.h>

struct zipf {
    gsl_ran_discrete_t *table;   /* Walker alias table over the K weights */
    double *p;                   /* normalised probabilities, K of them */
    size_t k;                    /* items */
};

zipf *zipf_new(size_t k, double s)
{
    if (k == 0 || !(s > 0) || !(s < 1e6))
        return NULL;
    zipf *z = calloc(1, sizeof *z);
    if (!z)
        return NULL;
    z->k = k;
    z->p = malloc(k * sizeof *z->p);
    if (!z->p)
        goto fail;
    double sum = 0;
    for (size_t i = 0; i < k; i++)
        sum += z->p[i] = pow((double) (i + 1), -s);
    for (size_t i = 0; i < k; i++)
        z->p[i] /= sum;
    z->table = gsl_ran_discrete_preproc(k, z->p);
    if (!z->table)
        goto fail;
    return z;
fail:
    zipf_free(z);
    return NULL;
}

size_t zipf_sample(const zipf *z, gsl_rng *r)
{
    return gsl_ran_discrete(r, z->table);
}

double zipf_prob(const zipf *z, size_t i)
{
    return i < z->k ? z->p[i] : 0.0;
}

void zipf_free(zipf *z)
{
    if (!z)
        return;
    if (z->table)
        gsl_ran_discrete_free(z->table);
    free(z->p);
    free(z);
}
