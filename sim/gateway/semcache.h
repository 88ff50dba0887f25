/* semcache.h -- the semantic result cache station (`kind = result_cache`),
 * in front of the models at a gateway (the cache itself: rcache.h).
 *
 * A request asks its intent: from its class; or, drawn here, with probability
 * `repeat_share` an earlier request's (uniformly among the latest 2^20:
 * Simon's model, popular questions recur more) and else a new one; or, with
 * `intents` or `intent_zipf` given, from a Zipf popularity over `intents`
 * intents with exponent `intent_zipf`.  A hit (or a
 * false hit) answers after `hit_ms` without reaching a model: the request leaves
 * the system served from here.  A miss pays `miss_ms` and goes on to the
 * station at the cache's out-edge (`next`, required); when the answer comes back
 * (the request leaves the system served) it is stored for `cache_ttl_s`.  Both
 * lookup times count as overhead.  `flush_at` lists times (model upgrades) at
 * which the cache empties.
 */
#ifndef LATSIM_SEMCACHE_H
#define LATSIM_SEMCACHE_H

#include "core/kind.h"
#include "core/station.h"

/* The kind's row: `kind = result_cache`. */
extern const station_kind semcache_kind;

/* Creates the station for result_cache pool CFG.  NULL when out of memory. */
station *semcache_new(const pool_cfg *cfg, const station_env *env);

/* The hit rate result_cache pool P's own intents give over REQUESTS lookups
 * with unbounded capacity and no TTL (answers stored at once): repeat_share
 * itself (*REPEAT set to 1), or for `intents`/`intent_zipf` 1 - E[distinct
 * intents asked] / REQUESTS (*REPEAT 0; NAN for REQUESTS < 1). */
double semcache_expected_hit_rate(const pool_cfg *p, double requests, int *repeat);

/* Parses a list of times "30m, 2h, 90s" (units s, m, h; a bare number is
 * seconds) into ascending ns values.  Returns the count (>= 0) with *OUT
 * malloc'd (NULL for none), or -1 with a message in ERR. */
int semcache_parse_times(const char *s, simtime_t **out, char *err, size_t errlen);

#endif
