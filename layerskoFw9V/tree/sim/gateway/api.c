/* api.c -- external model API: latency draws, price, error draws and the
 * integer token buckets of its rate limits (see api.h).
 */
#include "gateway/api.h"
#include "engine/errmsg.h"

#include <math.h>

int api_check(const api_cfg *c, char *err, size_t errlen)
{
    if (!(c->price_in_per_1k >= 0) || !isfinite(c->price_in_per_1k)) {
        errmsg_set(err, errlen, "price_in_per_1k: must be >= 0, got %g", c->price_in_per_1k);
        return -1;
    }
    if (!(c->price_out_per_1k >= 0) || !isfinite(c->price_out_per_1k)) {
        errmsg_set(err, errlen, "price_out_per_1k: must be >= 0, got %g", c->price_out_per_1k);
        return -1;
    }
    if (!(c->rpm >= 0 && c->rpm <= API_RATE_MAX) || c->rpm != floor(c->rpm)) {
        errmsg_set(err, errlen, "rpm: must be a whole number in 0..%g, got %g", API_RATE_MAX, c->rpm);
        return -1;
    }
    if (!(c->tpm >= 0 && c->tpm <= API_RATE_MAX) || c->tpm != floor(c->tpm)) {
        errmsg_set(err, errlen, "tpm: must be a whole number in 0..%g, got %g", API_RATE_MAX, c->tpm);
        return -1;
    }
    if (!(c->error_rate >= 0 && c->error_rate < 1)) {
        errmsg_set(err, errlen, "error_rate: must be in [0, 1), got %g", c->error_rate);
        return -1;
    }
    return 0;
}

void api_cfg_free(api_cfg *c)
{
    dist_free(&c->ttft_ms);
    dist_free(&c->tpot_ms);
    dist_free(&c->token_ms);
}

double api_price(const api_cfg *c, uint64_t prompt_tokens, uint64_t output_tokens)
{
    return (double) prompt_tokens / 1000.0 * c->price_in_per_1k
         + (double) output_tokens / 1000.0 * c->price_out_per_1k;
}

int api_sample(const api_cfg *c, uint64_t output_tokens, gsl_rng *r,
               double *first, double *last)
{
    double t = dist_sample(&c->ttft_ms, r);
    *first = *last = t;
    /* The error draw is made only when errors are configured, so that a scenario
     * without them draws the same latencies as before they existed. */
    if (c->error_rate > 0 && gsl_rng_uniform(r) < c->error_rate)
        return 1;
    if (output_tokens > 1) {
        if (c->has_token_ms) {
            for (uint64_t k = 1; k < output_tokens; k++)
                t += dist_sample(&c->token_ms, r);
        } else {
            t += (double) (output_tokens - 1) * dist_sample(&c->tpot_ms, r);
        }
    }
    *last = t;
    return 0;
}

void api_bucket_init(api_bucket *b, double rate)
{
    b->rate = (int64_t) rate;
    b->full = b->rate * API_UNIT;
    b->level = b->full;
    b->at = 0;
}

/* Adds what flowed in between b->at and NOW (never above full). */
static void refill(api_bucket *b, simtime_t now)
{
    if (now <= b->at)
        return;
    simtime_t dt = now - b->at;
    b->at = now;
    /* dt x rate overflows only beyond a minute of refill, when the bucket is full anyway */
    if (dt >= API_UNIT || dt * b->rate >= b->full - b->level)
        b->level = b->full;
    else
        b->level += dt * b->rate;
}

simtime_t api_bucket_wait(api_bucket *b, simtime_t now, uint64_t amount)
{
    if (b->rate == 0)
        return 0;
    if (amount > (uint64_t) b->rate)
        return SIMTIME_NEVER;
    refill(b, now);
    int64_t need = (int64_t) amount * API_UNIT;
    if (b->level >= need)
        return 0;
    return (need - b->level + b->rate - 1) / b->rate;    /* ceil: ns until enough */
}

int api_bucket_take(api_bucket *b, simtime_t now, uint64_t amount)
{
    if (b->rate == 0)
        return 0;
    if (api_bucket_wait(b, now, amount) != 0)
        return 1;
    b->level -= (int64_t) amount * API_UNIT;
    return 0;
}
