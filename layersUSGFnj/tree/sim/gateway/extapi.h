/* extapi.h -- the external model API station (`kind = api`): a hosted model
 * reached over the internet, with its latency, price, rate limits and errors
 * (the model itself: api.h).
 *
 * A request is sent when both rate-limit buckets (requests and tokens per
 * minute) hold enough; otherwise it is rejected with a 429 (`on_limit =
 * reject`) or waits in the station's FIFO queue (`on_limit = queue`, subject to
 * queue_limit and timeout_ms) until they do.  Once sent, its first token comes
 * TTFT later and its last token after the remaining TPOTs (service time); the
 * provider is assumed to have capacity for any number of requests at once.  A
 * failed request (error_rate) is dropped as rejected after its TTFT and is not
 * charged.  Served requests are charged price_in_per_1k / price_out_per_1k.
 */
#ifndef LATSIM_EXTAPI_H
#define LATSIM_EXTAPI_H

#include "gateway/api.h"
#include "core/kind.h"
#include "core/station.h"

/* The kind's row: `kind = api`. */
extern const station_kind extapi_kind;

/* Creates the station for api pool CFG (cfg->ext is its api_cfg).  NULL when out of memory. */
station *extapi_new(const pool_cfg *cfg, const station_env *env);

#endif
