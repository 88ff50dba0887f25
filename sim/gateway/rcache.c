/* rcache.c -- semantic result cache (LRU + TTL + flushes) (see rcache.h).
 *
 * Entries live in one growable array, linked twice: into a hash chain (separate
 * chaining over a power-of-two bucket array, keys mixed with the splitmix64
 * finaliser) and into an LRU list (engine/lru.h: head = most recently used).
 * Unused slots form a free list through the chain link.  Every operation is
 * O(1) expected, except a flush, which is O(entries).
 */
#include "gateway/rcache.h"
#include "engine/lru.h"

#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_rng.h>

#define NIL UINT32_MAX

typedef struct entry {
    uint64_t key;             /* intent key */
    simtime_t expires;        /* ns; SIMTIME_NEVER = never */
    lru_link lru;             /* LRU neighbours (LRU_NIL at the ends) */
    uint32_t hnext;           /* next in the hash chain, or in the free list */
} entry;

struct rcache {
    entry *e;                 /* entry slots */
    uint32_t nslots;          /* slots allocated */
    uint32_t nused;           /* slots ever handed out (the rest are untouched) */
    uint32_t freelist;        /* first released slot, or NIL */
    uint32_t *bucket;         /* chain heads, nbuckets of them */
    uint32_t nbuckets;        /* power of two */
    lru_list lru;             /* every stored entry: head most, tail least recently used */
    size_t size;              /* entries stored */
    size_t capacity;          /* 0 = unbounded */
    double false_hit_rate;    /* probability, [0, 1] */
    simtime_t *flush_at;      /* flush times, ns, ascending */
    size_t nflush;            /* how many */
    size_t next_flush;        /* index of the first flush not yet applied */
    simtime_t last_flush;     /* ns of the latest applied flush; -1 = none */
    rcache_stats st;          /* counters */
};

static uint64_t mix64(uint64_t z)
{
    z += UINT64_C(0x9e3779b97f4a7c15);
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

static uint32_t bucket_of(const rcache *c, uint64_t key)
{
    return (uint32_t) (mix64(key) & (c->nbuckets - 1));
}

/* Allocates NB (power of two) empty buckets and re-chains every stored entry.
 * Returns 0, or -1 when out of memory (nothing changed). */
static int rehash(rcache *c, uint32_t nb)
{
    uint32_t *b = malloc((size_t) nb * sizeof *b);
    if (!b)
        return -1;
    for (uint32_t i = 0; i < nb; i++)
        b[i] = NIL;
    free(c->bucket);
    c->bucket = b;
    c->nbuckets = nb;
    for (uint32_t i = c->lru.head; i != LRU_NIL; i = c->e[i].lru.next) {
        uint32_t h = bucket_of(c, c->e[i].key);
        c->e[i].hnext = b[h];
        b[h] = i;
    }
    return 0;
}

rcache *rcache_new(size_t capacity, double false_hit_rate,
                   const simtime_t *flush_at, size_t nflush)
{
    if (!(false_hit_rate >= 0 && false_hit_rate <= 1) || capacity >= NIL)
        return NULL;
    for (size_t i = 0; i < nflush; i++)
        if (flush_at[i] < 0 || (i > 0 && flush_at[i] < flush_at[i - 1]))
            return NULL;
    rcache *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->capacity = capacity;
    c->false_hit_rate = false_hit_rate;
    lru_init(&c->lru);
    c->freelist = NIL;
    c->last_flush = -1;
    if (nflush > 0) {
        c->flush_at = malloc(nflush * sizeof *c->flush_at);
        if (!c->flush_at)
            goto fail;
        memcpy(c->flush_at, flush_at, nflush * sizeof *flush_at);
        c->nflush = nflush;
    }
    c->nslots = 64;
    c->e = malloc(c->nslots * sizeof *c->e);
    if (!c->e || rehash(c, 128) != 0)
        goto fail;
    return c;
fail:
    rcache_free(c);
    return NULL;
}

void rcache_free(rcache *c)
{
    if (!c)
        return;
    free(c->e);
    free(c->bucket);
    free(c->flush_at);
    free(c);
}

/* Entry I off / onto the head of the LRU list. */
static inline void lru_out(rcache *c, uint32_t i)
{
    lru_unlink(&c->lru, LRU_SLOTS(c->e, entry, lru), i);
}

static inline void lru_in(rcache *c, uint32_t i)
{
    lru_push_front(&c->lru, LRU_SLOTS(c->e, entry, lru), i);
}

/* The slot holding KEY, or NIL; *PREVLINK gets the chain link pointing at it. */
static uint32_t find(rcache *c, uint64_t key, uint32_t **prevlink)
{
    uint32_t *link = &c->bucket[bucket_of(c, key)];
    while (*link != NIL && c->e[*link].key != key)
        link = &c->e[*link].hnext;
    if (prevlink)
        *prevlink = link;
    return *link;
}

/* Removes entry I (found through LINK) from the chain, the list and the count. */
static void drop(rcache *c, uint32_t i, uint32_t *link)
{
    *link = c->e[i].hnext;
    lru_out(c, i);
    c->e[i].hnext = c->freelist;
    c->freelist = i;
    c->size--;
}

static void drop_key(rcache *c, uint32_t i)
{
    uint32_t *link;
    uint32_t j = find(c, c->e[i].key, &link);
    (void) j;
    drop(c, i, link);
}

/* Applies every flush at or before NOW. */
static void apply_flushes(rcache *c, simtime_t now)
{
    while (c->next_flush < c->nflush && c->flush_at[c->next_flush] <= now) {
        c->last_flush = c->flush_at[c->next_flush++];
        while (!lru_empty(&c->lru))
            drop_key(c, c->lru.head);
        c->st.flushes++;
    }
}

rcache_result rcache_lookup(rcache *c, uint64_t key, simtime_t now, gsl_rng *r)
{
    apply_flushes(c, now);
    c->st.lookups++;
    uint32_t *link;
    uint32_t i = find(c, key, &link);
    if (i != NIL) {
        if (c->e[i].expires > now) {
            lru_touch(&c->lru, LRU_SLOTS(c->e, entry, lru), i);
            c->st.hits++;
            return RCACHE_HIT;
        }
        drop(c, i, link);
        c->st.expired++;
    }
    if (c->false_hit_rate > 0 && c->size > 0 && gsl_rng_uniform(r) < c->false_hit_rate) {
        c->st.false_hits++;
        return RCACHE_FALSE_HIT;
    }
    return RCACHE_MISS;
}

/* A free slot (growing the array and the buckets as needed), or NIL when out of memory. */
static uint32_t take_slot(rcache *c)
{
    if (c->freelist != NIL) {
        uint32_t i = c->freelist;
        c->freelist = c->e[i].hnext;
        return i;
    }
    if (c->nused == c->nslots) {
        if (c->nslots >= NIL / 2)
            return NIL;
        entry *e = realloc(c->e, 2 * (size_t) c->nslots * sizeof *e);
        if (!e)
            return NIL;
        c->e = e;
        c->nslots *= 2;
    }
    if ((c->size + 1) * 4 > (size_t) c->nbuckets * 3 && c->nbuckets < NIL / 2
        && rehash(c, 2 * c->nbuckets) != 0)
        return NIL;
    return c->nused++;
}

int rcache_store(rcache *c, uint64_t key, simtime_t asked, simtime_t now, simtime_t ttl)
{
    apply_flushes(c, now);
    if (ttl <= 0)
        return 0;
    if (asked < c->last_flush) {
        c->st.stale_stores++;
        return 0;
    }
    simtime_t expires = ttl >= SIMTIME_NEVER - now ? SIMTIME_NEVER : now + ttl;
    uint32_t i = find(c, key, NULL);
    if (i == NIL) {
        if (c->capacity > 0 && c->size >= c->capacity) {
            drop_key(c, c->lru.tail);
            c->st.evictions++;
        }
        i = take_slot(c);
        if (i == NIL)
            return -1;
        uint32_t h = bucket_of(c, key);   /* after take_slot: it may rehash */
        c->e[i].key = key;
        c->e[i].hnext = c->bucket[h];
        c->bucket[h] = i;
        c->size++;
    } else {
        lru_out(c, i);
    }
    c->e[i].expires = expires;
    lru_in(c, i);
    c->st.stores++;
    return 0;
}

size_t rcache_size(const rcache *c)
{
    return c->size;
}

const rcache_stats *rcache_get_stats(const rcache *c)
{
    return &c->st;
}

int rcache_sane(const rcache *c)
{
    long n = lru_check(&c->lru, LRU_SLOTS(c->e, entry, lru), (uint32_t) c->size);
    if (n < 0 || (size_t) n != c->size)
        return 0;
    for (uint32_t i = c->lru.head; i != LRU_NIL; i = c->e[i].lru.next) {
        /* each listed entry is reachable through its chain */
        uint32_t j = c->bucket[bucket_of(c, c->e[i].key)];
        while (j != NIL && j != i)
            j = c->e[j].hnext;
        if (j != i)
            return 0;
    }
    size_t chained = 0;
    for (uint32_t b = 0; b < c->nbuckets; b++)
        for (uint32_t j = c->bucket[b]; j != NIL; j = c->e[j].hnext)
            if (++chained > c->size)
                return 0;
    return chained == c->size && (c->capacity == 0 || c->size <= c->capacity);
}
