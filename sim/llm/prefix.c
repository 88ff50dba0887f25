/* prefix.c -- per-replica prefix KV cache with shared, reference-counted content
 * blocks and LRU eviction (see prefix.h).
 *
 * Content blocks are entries in one growable array, chained into a hash table
 * (separate chaining, power-of-two buckets, keys mixed with the splitmix64
 * finaliser); unreferenced ones are also on an LRU list (engine/lru.h: head = most
 * recently released, tail = next to evict).  Free and held blocks are counters:
 * which physical block holds what does not matter to the timing model.
 * prefix_acquire first checks that the whole sequence fits and reserves the
 * memory it may need, so that a failure leaves everything as it was.
 */
#include "llm/prefix.h"
#include "engine/lru.h"

#include <stdlib.h>
#include <string.h>

#define NIL UINT32_MAX

typedef struct pentry {
    uint64_t key;             /* content id */
    uint32_t ref;             /* sequences referencing it */
    lru_link lru;             /* LRU neighbours when ref == 0 (LRU_NIL at the ends) */
    uint32_t hnext;           /* next in the hash chain, or in the free-slot list */
    uint32_t mark;            /* epoch of the last acquire that counted it */
    int64_t created;          /* clock when it was created, ns */
    uint32_t cost;            /* KV blocks it occupies (blocks_per_id, less for a partial last block) */
} pentry;

struct prefix_cache {
    pentry *e;                /* entry slots */
    uint32_t nslots;          /* slots allocated */
    uint32_t nused;           /* slots ever handed out */
    uint32_t freeslot;        /* first released slot, or NIL */
    uint32_t nfreeslots;      /* released slots on that list */
    uint32_t *bucket;         /* chain heads */
    uint32_t nbuckets;        /* power of two */
    uint32_t nentries;        /* content blocks present (held or cached) */
    lru_list lru;             /* LRU of cached content blocks: head newest, tail oldest */
    uint32_t epoch;           /* acquire counter, for de-duplicating ids */
    uint64_t *scratch;        /* missing ids of one acquire */
    uint32_t nscratch;        /* its size, ids */
    uint64_t capacity;        /* KV blocks */
    uint64_t free;            /* KV blocks free */
    uint64_t held;            /* KV blocks held (anonymous + referenced content) */
    uint64_t cached;          /* KV blocks in unreferenced content blocks */
    uint64_t anon;            /* KV blocks held anonymously */
    uint32_t bpi;             /* KV blocks per content id */
    int64_t now;              /* the clock (prefix_clock), ns */
    prefix_stats st;          /* counters */
    void (*on_evict)(void *ctx, uint64_t key, uint32_t cost);   /* told of each eviction (an offload tier), or NULL */
    void *evict_ctx;          /* its context */
};

static uint64_t mix64(uint64_t z)
{
    z += UINT64_C(0x9e3779b97f4a7c15);
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

static uint32_t bucket_of(const prefix_cache *pc, uint64_t key)
{
    return (uint32_t) (mix64(key) & (pc->nbuckets - 1));
}

static uint32_t find(const prefix_cache *pc, uint64_t key)
{
    uint32_t i = pc->bucket[bucket_of(pc, key)];
    while (i != NIL && pc->e[i].key != key)
        i = pc->e[i].hnext;
    return i;
}

/* Re-chains every entry into NB fresh buckets.  Returns 0, or -1 when out of memory. */
static int rehash(prefix_cache *pc, uint32_t nb)
{
    uint32_t *b = malloc((size_t) nb * sizeof *b);
    if (!b)
        return -1;
    for (uint32_t i = 0; i < nb; i++)
        b[i] = NIL;
    /* Live entries are the used slots not on the free-slot list: mark those first. */
    for (uint32_t i = pc->freeslot; i != NIL; i = pc->e[i].hnext)
        pc->e[i].ref = UINT32_MAX;
    uint32_t fs = NIL;
    for (uint32_t i = 0; i < pc->nused; i++) {
        if (pc->e[i].ref == UINT32_MAX) {          /* a free slot: rebuild its list */
            pc->e[i].ref = 0;
            pc->e[i].hnext = fs;
            fs = i;
            continue;
        }
        uint32_t h = (uint32_t) (mix64(pc->e[i].key) & (nb - 1));
        pc->e[i].hnext = b[h];
        b[h] = i;
    }
    pc->freeslot = fs;
    free(pc->bucket);
    pc->bucket = b;
    pc->nbuckets = nb;
    return 0;
}

prefix_cache *prefix_new(uint64_t capacity, uint32_t blocks_per_id)
{
    if (blocks_per_id == 0)
        return NULL;
    prefix_cache *pc = calloc(1, sizeof *pc);
    if (!pc)
        return NULL;
    pc->capacity = pc->free = capacity;
    pc->bpi = blocks_per_id;
    lru_init(&pc->lru);
    pc->freeslot = NIL;
    pc->nslots = 64;
    pc->e = malloc(pc->nslots * sizeof *pc->e);
    pc->nbuckets = 128;
    pc->bucket = malloc(pc->nbuckets * sizeof *pc->bucket);
    if (!pc->e || !pc->bucket) {
        prefix_free(pc);
        return NULL;
    }
    for (uint32_t i = 0; i < pc->nbuckets; i++)
        pc->bucket[i] = NIL;
    return pc;
}

void prefix_free(prefix_cache *pc)
{
    if (!pc)
        return;
    free(pc->e);
    free(pc->bucket);
    free(pc->scratch);
    free(pc);
}

/* Entry I off / onto the head of the LRU list. */
static inline void lru_out(prefix_cache *pc, uint32_t i)
{
    lru_unlink(&pc->lru, LRU_SLOTS(pc->e, pentry, lru), i);
}

static inline void lru_in(prefix_cache *pc, uint32_t i)
{
    lru_push_front(&pc->lru, LRU_SLOTS(pc->e, pentry, lru), i);
}

/* Evicts the least recently released content block.  The caller knows one exists. */
static void evict_one(prefix_cache *pc)
{
    uint32_t i = pc->lru.tail;
    lru_out(pc, i);
    uint32_t *link = &pc->bucket[bucket_of(pc, pc->e[i].key)];
    while (*link != i)
        link = &pc->e[*link].hnext;
    *link = pc->e[i].hnext;
    pc->e[i].hnext = pc->freeslot;
    pc->freeslot = i;
    pc->nfreeslots++;
    pc->nentries--;
    pc->cached -= pc->e[i].cost;
    pc->free += pc->e[i].cost;
    pc->st.evictions++;
    if (pc->on_evict) pc->on_evict(pc->evict_ctx, pc->e[i].key, pc->e[i].cost);
}

void prefix_on_evict(prefix_cache *pc, void (*fn)(void *ctx, uint64_t key, uint32_t cost), void *ctx)
{
    pc->on_evict = fn;
    pc->evict_ctx = ctx;
}

int prefix_has(const prefix_cache *pc, uint64_t key)
{
    return find(pc, key) != NIL;
}

int prefix_put(prefix_cache *pc, uint64_t key, uint32_t cost)
{
    uint32_t h, hit;
    int rc = prefix_acquire_cost(pc, &key, 1, cost, &h, &hit);
    if (rc == 0) prefix_release(pc, &h, 1);
    return rc;
}

uint32_t prefix_match(const prefix_cache *pc, const uint64_t *ids, uint32_t n)
{
    uint32_t k = 0;
    while (k < n && find(pc, ids[k]) != NIL)
        k++;
    return k;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *) a, y = *(const uint64_t *) b;
    return (x > y) - (x < y);
}

/* Makes room for NEW more entries (slots and buckets).  Returns 0, or -1 when out
 * of memory (nothing changed that matters). */
static int reserve(prefix_cache *pc, uint32_t new)
{
    uint64_t want_slots = (uint64_t) pc->nused + new;       /* worst case: no free slot reused */
    if (want_slots > pc->nslots) {
        uint64_t ns = pc->nslots;
        while (ns < want_slots)
            ns *= 2;
        if (ns >= NIL)
            return -1;
        pentry *e = realloc(pc->e, ns * sizeof *e);
        if (!e)
            return -1;
        pc->e = e;
        pc->nslots = (uint32_t) ns;
    }
    uint64_t live = (uint64_t) pc->nentries + new;
    if (live * 4 > (uint64_t) pc->nbuckets * 3) {
        uint64_t nb = pc->nbuckets;
        while (live * 4 > nb * 3)
            nb *= 2;
        if (nb >= NIL || rehash(pc, (uint32_t) nb) != 0)
            return -1;
    }
    return 0;
}

/* Counts the distinct ids of IDS[0..N) not present (*DISTINCT) and the distinct
 * present ones nobody references (*REREFS).  Returns 0, or -1 when out of memory. */
static int count_need(prefix_cache *pc, const uint64_t *ids, uint32_t n, uint32_t last_cost,
                      uint64_t *need, uint64_t *reref)
{
    if (n > pc->nscratch) {
        uint64_t *s = realloc(pc->scratch, (size_t) n * sizeof *s);
        if (!s)
            return -1;
        pc->scratch = s;
        pc->nscratch = n;
    }
    if (++pc->epoch == 0) {                   /* wrapped: clear every mark once */
        for (uint32_t i = 0; i < pc->nused; i++)
            pc->e[i].mark = 0;
        pc->epoch = 1;
    }
    uint32_t nmiss = 0;
    uint64_t rr = 0;
    int last_missing = 0;
    for (uint32_t k = 0; k < n; k++) {
        uint32_t i = find(pc, ids[k]);
        if (i == NIL) {
            pc->scratch[nmiss++] = ids[k];
            last_missing = k == n - 1;
        } else if (pc->e[i].mark != pc->epoch) {
            pc->e[i].mark = pc->epoch;
            if (pc->e[i].ref == 0)
                rr += pc->e[i].cost;
        }
    }
    qsort(pc->scratch, nmiss, sizeof *pc->scratch, cmp_u64);
    uint64_t d = 0;
    for (uint32_t k = 0; k < nmiss; k++)
        d += k == 0 || pc->scratch[k] != pc->scratch[k - 1];
    /* a missing last id costs last_cost (when it is not also an earlier id) */
    uint64_t blocks = d * pc->bpi;
    if (last_missing && last_cost > 0 && last_cost < pc->bpi) {
        int dup = 0;
        for (uint32_t k = 0; k + 1 < n; k++)
            dup |= ids[k] == ids[n - 1];
        if (!dup)
            blocks -= pc->bpi - last_cost;
    }
    *need = blocks;
    *reref = rr;
    return 0;
}

uint64_t prefix_need_cost(prefix_cache *pc, const uint64_t *ids, uint32_t n, uint32_t last_cost)
{
    uint64_t need, rr;
    if (count_need(pc, ids, n, last_cost, &need, &rr) != 0)
        return UINT64_MAX;
    return need + rr;
}

uint64_t prefix_need(prefix_cache *pc, const uint64_t *ids, uint32_t n)
{
    return prefix_need_cost(pc, ids, n, 0);
}

void prefix_clock(prefix_cache *pc, int64_t now)
{
    pc->now = now;
}

uint32_t prefix_match_seen(const prefix_cache *pc, const uint64_t *ids, uint32_t n, int64_t visible)
{
    uint32_t k = 0;
    for (; k < n; k++) {
        uint32_t i = find(pc, ids[k]);
        if (i == NIL || pc->e[i].created > visible)
            break;
    }
    return k;
}

void prefix_clear(prefix_cache *pc)
{
    while (!lru_empty(&pc->lru))
        evict_one(pc);
}

int prefix_acquire(prefix_cache *pc, const uint64_t *ids, uint32_t n,
                   uint32_t *handles, uint32_t *hit)
{
    return prefix_acquire_cost(pc, ids, n, 0, handles, hit);
}

int prefix_acquire_cost(prefix_cache *pc, const uint64_t *ids, uint32_t n, uint32_t last_cost,
                        uint32_t *handles, uint32_t *hit)
{
    uint32_t h = prefix_match(pc, ids, n);
    if (last_cost == 0 || last_cost > pc->bpi)
        last_cost = pc->bpi;
    uint64_t need, rerefs;
    if (count_need(pc, ids, n, last_cost, &need, &rerefs) != 0)
        return -1;
    uint64_t avail = pc->free + pc->cached - rerefs;
    uint32_t distinct = n;          /* an upper bound on new entries, for reserve() */
    if (need > avail)
        return 1;
    if (reserve(pc, distinct) != 0)
        return -1;

    for (uint32_t k = 0; k < n; k++) {
        uint32_t i = find(pc, ids[k]);
        if (i != NIL) {
            if (pc->e[i].ref == 0) {
                lru_out(pc, i);
                pc->cached -= pc->e[i].cost;
                pc->held += pc->e[i].cost;
            }
            pc->e[i].ref++;
        } else {
            uint32_t cost = k == n - 1 ? last_cost : pc->bpi;
            while (pc->free < cost)
                evict_one(pc);
            if (pc->freeslot != NIL) {
                i = pc->freeslot;
                pc->freeslot = pc->e[i].hnext;
                pc->nfreeslots--;
            } else {
                i = pc->nused++;
            }
            uint32_t b = bucket_of(pc, ids[k]);
            pc->e[i] = (pentry) {.key = ids[k], .ref = 1, .lru = {LRU_NIL, LRU_NIL},
                                 .hnext = pc->bucket[b], .mark = pc->epoch,
                                 .created = pc->now, .cost = cost};
            pc->bucket[b] = i;
            pc->nentries++;
            pc->free -= cost;
            pc->held += cost;
        }
        handles[k] = i;
    }
    pc->st.acquires++;
    pc->st.ids += n;
    pc->st.hit_ids += h;
    if (hit)
        *hit = h;
    return 0;
}

void prefix_release(prefix_cache *pc, const uint32_t *handles, uint32_t n)
{
    for (uint32_t k = 0; k < n; k++) {
        uint32_t i = handles[k];
        if (--pc->e[i].ref == 0) {
            lru_in(pc, i);
            pc->held -= pc->e[i].cost;
            pc->cached += pc->e[i].cost;
        }
    }
}

int prefix_take(prefix_cache *pc, uint64_t blocks)
{
    if (pc->free + pc->cached < blocks)
        return 1;
    while (pc->free < blocks)
        evict_one(pc);
    pc->free -= blocks;
    pc->held += blocks;
    pc->anon += blocks;
    return 0;
}

void prefix_give(prefix_cache *pc, uint64_t blocks)
{
    if (blocks > pc->anon)
        blocks = pc->anon;
    pc->anon -= blocks;
    pc->held -= blocks;
    pc->free += blocks;
}

uint64_t prefix_available(const prefix_cache *pc) { return pc->free + pc->cached; }
uint64_t prefix_capacity(const prefix_cache *pc) { return pc->capacity; }
uint64_t prefix_free_blocks(const prefix_cache *pc) { return pc->free; }
uint64_t prefix_held_blocks(const prefix_cache *pc) { return pc->held; }
uint64_t prefix_cached_blocks(const prefix_cache *pc) { return pc->cached; }
uint64_t prefix_anon_blocks(const prefix_cache *pc) { return pc->anon; }
const prefix_stats *prefix_get_stats(const prefix_cache *pc) { return &pc->st; }

int prefix_sane(const prefix_cache *pc)
{
    if (pc->free + pc->held + pc->cached != pc->capacity)
        return 0;
    long nlru = lru_check(&pc->lru, LRU_SLOTS(pc->e, pentry, lru), pc->nentries);
    if (nlru < 0)
        return 0;
    uint64_t lru_cost = 0;
    for (uint32_t i = pc->lru.head; i != LRU_NIL; i = pc->e[i].lru.next) {
        if (pc->e[i].ref != 0)
            return 0;
        lru_cost += pc->e[i].cost;
    }
    if (lru_cost != pc->cached)
        return 0;
    uint64_t nent = 0, nref = 0, ref_cost = 0;
    for (uint32_t b = 0; b < pc->nbuckets; b++)
        for (uint32_t i = pc->bucket[b]; i != NIL; i = pc->e[i].hnext) {
            if (++nent > pc->nentries || bucket_of(pc, pc->e[i].key) != b)
                return 0;
            nref += pc->e[i].ref > 0;
            ref_cost += pc->e[i].ref > 0 ? pc->e[i].cost : 0;
        }
    return nent == pc->nentries && nent == (uint64_t) nlru + nref
        && pc->held == pc->anon + ref_cost
        && pc->nused - pc->nfreeslots == pc->nentries;
}
