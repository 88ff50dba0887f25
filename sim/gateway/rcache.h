/* rcache.h -- the semantic result cache of a gateway.
 *
 * Requests carry an intent key (the question they ask, up to paraphrase).  The
 * cache maps keys to stored answers:
 *   - a lookup of a key whose answer is stored and not expired is a hit;
 *   - a lookup that should miss matches another stored answer with probability
 *     false_hit_rate (a similarity threshold's false positive: the user gets an
 *     answer to a different question), counted as a false hit; such a draw is
 *     made only when false_hit_rate > 0 and the cache holds something;
 *   - an answer is stored when it comes back, with a time to live (TTL); an
 *     answer to a request asked before the latest flush is not stored (it comes
 *     from the model version the flush retired);
 *   - capacity bounds the number of stored answers (0 = unbounded); storing into
 *     a full cache evicts the least recently used one (hits count as uses);
 *   - flush times (model upgrades) empty the cache.
 * Expired entries are dropped when a lookup meets them (lazily).
 *
 * Intent popularity (which keys requests ask for) is drawn elsewhere (core/zipf.h).
 */
#ifndef LATSIM_RCACHE_H
#define LATSIM_RCACHE_H

#include <stddef.h>
#include <stdint.h>
#include <gsl/gsl_rng.h>

#include "engine/simtime.h"

typedef struct rcache rcache;

typedef enum { RCACHE_MISS, RCACHE_HIT, RCACHE_FALSE_HIT } rcache_result;

typedef struct rcache_stats {
    uint64_t lookups;         /* lookups, count */
    uint64_t hits;            /* true hits, count */
    uint64_t false_hits;      /* false hits, count */
    uint64_t expired;         /* lookups that found their entry expired (counted as misses), count */
    uint64_t stores;          /* answers stored (new or refreshed), count */
    uint64_t stale_stores;    /* answers not stored because a flush came after their request, count */
    uint64_t evictions;       /* entries evicted by capacity, count */
    uint64_t flushes;         /* flushes applied, count */
} rcache_stats;

/* A new cache of CAPACITY entries (0 = unbounded) with this false hit
 * probability and flush times FLUSH_AT[0..NFLUSH) (ns, ascending; copied).
 * Returns NULL when out of memory or when the arguments are invalid
 * (false_hit_rate outside [0, 1], flush times not ascending or negative). */
rcache *rcache_new(size_t capacity, double false_hit_rate,
                   const simtime_t *flush_at, size_t nflush);

/* Looks KEY up at time NOW (ns, never decreasing across calls).  R is used only
 * for the false-hit draw.  Cannot fail. */
rcache_result rcache_lookup(rcache *c, uint64_t key, simtime_t now, gsl_rng *r);

/* Stores the answer for KEY at time NOW, for a request asked at ASKED (ns <= NOW),
 * kept for TTL ns (SIMTIME_NEVER = forever; 0 = not stored).  Storing a key
 * already present refreshes its TTL and makes it most recently used.
 * Returns 0, or -1 when out of memory (the cache is unchanged). */
int rcache_store(rcache *c, uint64_t key, simtime_t asked, simtime_t now, simtime_t ttl);

/* Entries currently stored (expired ones not yet met included). */
size_t rcache_size(const rcache *c);

const rcache_stats *rcache_get_stats(const rcache *c);

/* Whole-structure check for assert(): the LRU list and the hash table hold the
 * same entries, their count is rcache_size, and the capacity is respected. */
int rcache_sane(const rcache *c);

void rcache_free(rcache *c);

/* Memory estimate for scenario_check_memory, bytes: a cache holding N entries
 * (an entry and its share of the buckets, doubled for growth: 80 bytes each). */
#define RCACHE_BYTES_PER_ENTRY 80.0

#endif
