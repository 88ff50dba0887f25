/* api.h -- an external model API (a hosted GPT-4-class endpoint): its latency,
 * its price, its rate limits and its errors.
 *
 * Latency: a request's first token comes TTFT after it is sent (drawn from
 * ttft_ms); each further token TPOT later, with TPOT drawn once per request from
 * tpot_ms, or, when token_ms is set instead, each token's gap drawn on its own.
 * The provider's capacity is not modelled: it is assumed large next to this
 * client's traffic, which is what the rate limits are for.
 *
 * Rate limits: two token buckets, requests per minute (rpm) and tokens per minute
 * (tpm, counting prompt + output tokens), each holding at most one minute's
 * allowance and refilled continuously; 0 = no limit.  A request needs both.
 * Buckets are kept in integer units (1 request or token = 60e9 units, refill =
 * rate units per ns), so the admitted count over any run is exact: a bucket
 * that starts full admits at most rate x (1 + T / 60 s) over T seconds, and an
 * overloaded one exactly that, to within one request.  A request the buckets
 * cannot admit now is rejected (HTTP 429) or queued until they can, as
 * configured.
 *
 * Errors: with probability error_rate a request fails (a 5xx) after its TTFT,
 * produces nothing and is not charged.
 */
#ifndef LATSIM_API_H
#define LATSIM_API_H

#include <stddef.h>
#include <stdint.h>
#include <gsl/gsl_rng.h>

#include "core/dist.h"
#include "engine/simtime.h"

/* Largest rate a bucket accepts (per minute), so that 60e9 x rate fits int64. */
#define API_RATE_MAX 1e8

typedef enum { API_LIMIT_REJECT, API_LIMIT_QUEUE } api_on_limit;

typedef struct api_cfg {
    dist ttft_ms;             /* time to first token, ms (owned) */
    dist tpot_ms;             /* time per further token, ms, one draw per request (owned) */
    dist token_ms;            /* per-token gap, ms, one draw per token (owned; used when has_token_ms) */
    int has_token_ms;         /* 1 = token_ms replaces tpot_ms */
    double price_in_per_1k;   /* $ per 1000 prompt tokens */
    double price_out_per_1k;  /* $ per 1000 output tokens */
    double rpm;               /* requests per minute allowed, 0 = unlimited */
    double tpm;               /* tokens per minute allowed, 0 = unlimited */
    api_on_limit on_limit;    /* reject (429) or queue */
    double error_rate;        /* probability a request fails, [0, 1) */
} api_cfg;

/* Checks C's numbers.  Returns 0, or -1 with "KEY: what is wrong" in ERR. */
int api_check(const api_cfg *c, char *err, size_t errlen);

/* Releases the distributions (safe on a zeroed api_cfg). */
void api_cfg_free(api_cfg *c);

/* $ charged for a successful request of these sizes. */
double api_price(const api_cfg *c, uint64_t prompt_tokens, uint64_t output_tokens);

/* One request's timing, ms from sending it: first token and last token (equal
 * for one output token).  Returns 1 when the request fails (then *FIRST is when
 * the error comes back and *LAST equals it), else 0. */
int api_sample(const api_cfg *c, uint64_t output_tokens, gsl_rng *r,
               double *first, double *last);

/* ---- token buckets ----------------------------------------------------- */

typedef struct api_bucket {
    int64_t rate;             /* allowance per minute (0 = unlimited), requests or tokens */
    int64_t level;            /* units in the bucket (1 request/token = API_UNIT units) */
    int64_t full;             /* capacity, units = rate x API_UNIT (one minute's worth) */
    simtime_t at;             /* ns of the last refill */
} api_bucket;

#define API_UNIT INT64_C(60000000000)   /* units per request/token: ns per minute */

/* A full bucket for RATE per minute (0 = unlimited) at time 0. */
void api_bucket_init(api_bucket *b, double rate);

/* Nanoseconds from NOW until AMOUNT can be taken (0 = now); SIMTIME_NEVER when
 * AMOUNT exceeds what a full bucket holds.  Refills up to NOW. */
simtime_t api_bucket_wait(api_bucket *b, simtime_t now, uint64_t amount);

/* Takes AMOUNT at NOW.  Returns 0, or 1 when not enough is there (nothing taken). */
int api_bucket_take(api_bucket *b, simtime_t now, uint64_t amount);

#endif
