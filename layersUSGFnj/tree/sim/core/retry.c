/* retry.c -- client retry policy: validation and the backoff before each retry
 * (see retry.h). */
#include "core/retry.h"
#include "engine/errmsg.h"

#include <math.h>

#define RETRY_MAX 100   /* more retries than this is a typo, not a policy */

int retry_check(const retry_cfg *c, const char **key, char *err, size_t errlen)
{
    const char *k = NULL;
    if (!(c->timeout_ms >= 0) || !isfinite(c->timeout_ms)) {
        k = "timeout_ms";
        errmsg_set(err, errlen, "must be >= 0 (0 = none), got %g", c->timeout_ms);
    } else if (c->retries < 0 || c->retries > RETRY_MAX) {
        k = "retries";
        errmsg_set(err, errlen, "must be between 0 and %d, got %d", RETRY_MAX, c->retries);
    } else if (c->retries > 0 && c->timeout_ms == 0) {
        k = "retries";
        errmsg_set(err, errlen, "retries need a timeout_ms to give up on an attempt");
    } else if (!(c->backoff_ms >= 0) || !isfinite(c->backoff_ms)) {
        k = "backoff_ms";
        errmsg_set(err, errlen, "must be >= 0 (a delay), got %g", c->backoff_ms);
    } else if (!(c->multiplier >= 1) || !isfinite(c->multiplier)) {
        k = "backoff_multiplier";
        errmsg_set(err, errlen, "must be >= 1, got %g", c->multiplier);
    } else if (!(c->backoff_max_ms >= c->backoff_ms) || !isfinite(c->backoff_max_ms)) {
        k = "backoff_max_ms";
        errmsg_set(err, errlen, "must be >= backoff_ms (%g), got %g", c->backoff_ms,
                   c->backoff_max_ms);
    }
    if (key)
        *key = k;
    return k ? -1 : 0;
}

double retry_backoff_ms(const retry_cfg *c, int k, gsl_rng *r)
{
    double w = c->backoff_ms * pow(c->multiplier, k > 1 ? k - 1 : 0);
    if (!(w <= c->backoff_max_ms))
        w = c->backoff_max_ms;
    return c->jitter ? w * gsl_rng_uniform(r) : w;
}
