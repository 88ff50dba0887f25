/* prefix.h -- a replica's prefix (KV) cache: KV blocks keyed by content, shared
 * by reference between sequences, kept after use and evicted least recently used.
 *
 * Capacity is counted in KV blocks.  A content block (one hash id of a trace,
 * e.g. 512 prompt tokens) costs blocks_per_id KV blocks (a partial last one of
 * a prompt, fewer: prefix_acquire_cost); a sequence's other
 * blocks (its unshared tail, its output) are anonymous and cost one each.  Every
 * block is in exactly one state:
 *   free     unused;
 *   held     referenced by at least one running sequence (content blocks count once,
 *            whatever their number of references);
 *   cached   a content block no sequence references, kept for later hits,
 *            evictable (least recently released first).
 * free + held + cached = capacity at all times (prefix_sane checks it).  When a
 * sequence needs blocks and none is free, cached blocks are evicted.
 *
 * A content block is shareable from the moment it is acquired (the prefill that
 * computes it runs in the step that admits its sequence).
 */
#ifndef LATSIM_PREFIX_H
#define LATSIM_PREFIX_H

#include <stddef.h>
#include <stdint.h>

typedef struct prefix_cache prefix_cache;

typedef struct prefix_stats {
    uint64_t acquires;        /* prefix_acquire calls that succeeded, count */
    uint64_t ids;             /* content ids they asked for, count */
    uint64_t hit_ids;         /* of which in the leading cached run, count */
    uint64_t evictions;       /* content blocks evicted, count */
} prefix_stats;

/* A cache of CAPACITY KV blocks in which one content id costs BLOCKS_PER_ID (>= 1)
 * KV blocks.  Returns NULL on bad arguments or when out of memory. */
prefix_cache *prefix_new(uint64_t capacity, uint32_t blocks_per_id);

/* The number of leading ids of IDS[0..N) that are cached or held: a sequence
 * with these ids would find that many content blocks computed.  Changes nothing. */
uint32_t prefix_match(const prefix_cache *pc, const uint64_t *ids, uint32_t n);

/* Takes a reference on the content blocks of IDS[0..N) for one sequence, creating
 * the missing ones (evicting cached blocks when no block is free), and writes one
 * handle per id into HANDLES (for prefix_release).  *HIT gets the leading run
 * that was already there (prefix_match before the call).
 * Returns 0; or 1 when there is not enough room (free + evictable) even after
 * evicting (nothing changed); or -1 when out of memory (nothing changed). */
int prefix_acquire(prefix_cache *pc, const uint64_t *ids, uint32_t n,
                   uint32_t *handles, uint32_t *hit);

/* The same, the last id costing LAST_COST KV blocks (a partial last block;
 * 0 or more than blocks_per_id: blocks_per_id). */
int prefix_acquire_cost(prefix_cache *pc, const uint64_t *ids, uint32_t n, uint32_t last_cost,
                        uint32_t *handles, uint32_t *hit);

/* Drops one reference on each of HANDLES[0..N) (from prefix_acquire); a content
 * block nobody references becomes cached, most recently used last in HANDLES. */
void prefix_release(prefix_cache *pc, const uint32_t *handles, uint32_t n);

/* KV blocks prefix_acquire(IDS, N) would take out of the available ones (free +
 * cached): its distinct ids not present, and its distinct cached ones (no longer
 * evictable), times blocks_per_id.  Changes nothing. */
uint64_t prefix_need(prefix_cache *pc, const uint64_t *ids, uint32_t n);
uint64_t prefix_need_cost(prefix_cache *pc, const uint64_t *ids, uint32_t n, uint32_t last_cost);

/* Sets the clock (ns): content blocks created from now on carry this time. */
void prefix_clock(prefix_cache *pc, int64_t now);

/* prefix_match counting only blocks created at or before VISIBLE (ns): what a
 * router with a view VISIBLE old sees.  Changes nothing. */
uint32_t prefix_match_seen(const prefix_cache *pc, const uint64_t *ids, uint32_t n, int64_t visible);

/* Evicts every cached content block (a replica lost its memory).  Held blocks stay. */
void prefix_clear(prefix_cache *pc);

/* Takes BLOCKS anonymous blocks (free -> held), evicting cached content blocks as
 * needed.  Returns 0, or 1 when free + cached < BLOCKS (nothing changed). */
int prefix_take(prefix_cache *pc, uint64_t blocks);

/* Returns BLOCKS anonymous blocks (held -> free); at most what was taken. */
void prefix_give(prefix_cache *pc, uint64_t blocks);

/* Blocks available to a new sequence: free + cached (all of them evictable). */
uint64_t prefix_available(const prefix_cache *pc);

uint64_t prefix_capacity(const prefix_cache *pc);
uint64_t prefix_free_blocks(const prefix_cache *pc);
uint64_t prefix_held_blocks(const prefix_cache *pc);
uint64_t prefix_cached_blocks(const prefix_cache *pc);
uint64_t prefix_anon_blocks(const prefix_cache *pc);    /* held anonymously (prefix_take) */

const prefix_stats *prefix_get_stats(const prefix_cache *pc);

/* Whole-structure check for assert(): free + held + cached = capacity, the held
 * count equals the anonymous blocks plus the referenced content blocks, the LRU
 * list holds exactly the unreferenced content blocks, every content block is in
 * the hash table.  Returns 1 when all hold.  O(entries). */
int prefix_sane(const prefix_cache *pc);

/* Prompt tokens a request finds cached: min(prompt tokens, HIT_IDS x ID_TOKENS). */
static inline uint64_t prefix_found_tokens(uint32_t hit_ids, uint32_t id_tokens,
                                           uint64_t prompt_tokens)
{
    uint64_t t = (uint64_t) hit_ids * id_tokens;
    return t < prompt_tokens ? t : prompt_tokens;
}

/* From now on FN(CTX, key, cost) is told of each content block evicted (its id
 * and KV blocks), after the eviction: an offload tier keeps it (NULL: none). */
void prefix_on_evict(prefix_cache *pc, void (*fn)(void *ctx, uint64_t key, uint32_t cost), void *ctx);

/* 1 when content id KEY is present (held or cached), else 0.  Changes nothing. */
int prefix_has(const prefix_cache *pc, uint64_t key);

/* Keeps content id KEY (COST KV blocks) cached, the most recently used, creating
 * it (evicting the least recently used when full) or refreshing it: an offload
 * tier's store.  Returns 0, 1 when it cannot fit (nothing changed), -1 when out
 * of memory. */
int prefix_put(prefix_cache *pc, uint64_t key, uint32_t cost);

void prefix_free(prefix_cache *pc);

#endif
