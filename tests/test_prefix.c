/* test_prefix.c -- tests of sim/llm/prefix.c: block accounting by hand, sharing,
 * LRU eviction, all-or-nothing acquisition, and, on a synthetic multi-turn
 * workload, exact equality of the hit share with an unlimited cache and with an
 * independent LRU simulation written here.  prefix_sane runs after every call. */
#include <criterion/criterion.h>

#include <stdlib.h>
#include <string.h>

#include "llm/prefix.h"
#include "engine/rng.h"
#include "tcheck.h"

/* Full sanity checks, every step (tcheck.h). */
TestSuite(prefix, .init = tcheck_every_step);

#define SANE(pc) cr_assert(prefix_sane(pc), "accounting broken at line %d", __LINE__)

static void counts(const prefix_cache *pc, uint64_t f, uint64_t h, uint64_t c)
{
    cr_assert_eq(prefix_free_blocks(pc), f, "free %lu, want %lu",
                 (unsigned long) prefix_free_blocks(pc), (unsigned long) f);
    cr_assert_eq(prefix_held_blocks(pc), h, "held %lu, want %lu",
                 (unsigned long) prefix_held_blocks(pc), (unsigned long) h);
    cr_assert_eq(prefix_cached_blocks(pc), c, "cached %lu, want %lu",
                 (unsigned long) prefix_cached_blocks(pc), (unsigned long) c);
    cr_assert(prefix_sane(pc));
}

Test(prefix, accounting_and_sharing_by_hand)
{
    prefix_cache *pc = prefix_new(100, 2);
    cr_assert_not_null(pc);
    uint64_t a[] = {1, 2, 3}, b[] = {1, 2, 9};
    uint32_t ha[3], hb[3], hit;
    cr_assert_eq(prefix_acquire(pc, a, 3, ha, &hit), 0);
    cr_assert_eq(hit, 0);
    counts(pc, 94, 6, 0);
    /* b shares 1 and 2 while a still runs: only 9 is new */
    cr_assert_eq(prefix_match(pc, b, 3), 2);
    cr_assert_eq(prefix_acquire(pc, b, 3, hb, &hit), 0);
    cr_assert_eq(hit, 2);
    cr_assert_eq(ha[0], hb[0]);
    counts(pc, 92, 8, 0);
    prefix_release(pc, ha, 3);               /* 3 is unreferenced now; 1, 2 still held by b */
    counts(pc, 92, 6, 2);
    prefix_release(pc, hb, 3);
    counts(pc, 92, 0, 8);
    cr_assert_eq(prefix_take(pc, 10), 0);    /* anonymous blocks */
    counts(pc, 82, 10, 8);
    prefix_give(pc, 10);
    counts(pc, 92, 0, 8);
    cr_assert_eq(prefix_get_stats(pc)->hit_ids, 2);
    cr_assert_eq(prefix_get_stats(pc)->ids, 6);
    prefix_free(pc);
    cr_assert_null(prefix_new(10, 0));
}

Test(prefix, evicts_least_recently_released)
{
    prefix_cache *pc = prefix_new(6, 1);
    uint64_t a[] = {1, 2, 3}, b[] = {4, 5, 6}, c[] = {7}, d[] = {2, 3};
    uint32_t h[3], hit;
    cr_assert_eq(prefix_acquire(pc, a, 3, h, &hit), 0);
    prefix_release(pc, h, 3);
    cr_assert_eq(prefix_acquire(pc, b, 3, h, &hit), 0);
    prefix_release(pc, h, 3);
    counts(pc, 0, 0, 6);
    cr_assert_eq(prefix_acquire(pc, c, 1, h, &hit), 0);   /* evicts 1, the oldest */
    counts(pc, 0, 1, 5);
    cr_assert_eq(prefix_get_stats(pc)->evictions, 1);
    cr_assert_eq(prefix_match(pc, a, 3), 0);
    cr_assert_eq(prefix_match(pc, d, 2), 2);
    /* using 2, 3 again makes 4 the oldest */
    uint32_t hd[2];
    cr_assert_eq(prefix_acquire(pc, d, 2, hd, &hit), 0);
    prefix_release(pc, hd, 2);
    cr_assert_eq(prefix_take(pc, 1), 0);                   /* evicts 4 */
    uint64_t four[] = {4}, five[] = {5};
    cr_assert_eq(prefix_match(pc, four, 1), 0);
    cr_assert_eq(prefix_match(pc, five, 1), 1);
    SANE(pc);
    prefix_free(pc);
}

Test(prefix, acquire_is_all_or_nothing)
{
    prefix_cache *pc = prefix_new(4, 1);
    uint64_t a[] = {1, 2, 3}, b[] = {3, 4, 5}, dup[] = {8, 8, 8, 8};
    uint32_t ha[3], hb[4], hit;
    cr_assert_eq(prefix_acquire(pc, a, 3, ha, &hit), 0);
    counts(pc, 1, 3, 0);
    cr_assert_eq(prefix_acquire(pc, b, 3, hb, &hit), 1);   /* needs 4 and 5: one free */
    counts(pc, 1, 3, 0);
    cr_assert_eq(prefix_take(pc, 2), 1);
    counts(pc, 1, 3, 0);
    prefix_release(pc, ha, 3);
    counts(pc, 1, 0, 3);
    /* 3 is cached and re-referenced, so only 1 and 2 may be evicted for 4 and 5 */
    cr_assert_eq(prefix_acquire(pc, b, 3, hb, &hit), 0);
    cr_assert_eq(hit, 1);
    counts(pc, 0, 3, 1);
    prefix_release(pc, hb, 3);
    /* one id repeated in a sequence needs one block */
    cr_assert_eq(prefix_acquire(pc, dup, 4, hb, &hit), 0);
    counts(pc, 0, 1, 3);
    prefix_release(pc, hb, 4);
    counts(pc, 0, 0, 4);
    prefix_free(pc);
}

/* ---- a synthetic multi-turn workload ------------------------------------
 * Sessions share a system prompt of 3 blocks; each turn's prompt is the previous
 * turn's prompt and answer plus 1-3 new blocks, ids chained as in Mooncake traces
 * (a new block's id is new; equal ids mean equal content).  A request's prompt is
 * (blocks - 1) x 512 tokens plus a partial last block of 1..512 tokens. */
#define BT 512
#define NSESS 40
#define MAXB 64

typedef struct req { uint64_t ids[MAXB]; uint32_t n; uint64_t tokens; } req;

static int gen(req *out, int nreq, uint64_t seed)
{
    static uint64_t sess[NSESS][MAXB];
    static uint32_t slen[NSESS];
    gsl_rng *r = rng_stream(seed, "sessions");
    uint64_t next_id = 100;
    for (int s = 0; s < NSESS; s++)
        slen[s] = 0;
    for (int i = 0; i < nreq; i++) {
        int s = (int) gsl_rng_uniform_int(r, NSESS);
        if (slen[s] == 0 || slen[s] + 3 > MAXB || gsl_rng_uniform(r) < 0.15) {
            slen[s] = 3;                               /* a new conversation */
            for (uint32_t k = 0; k < 3; k++)
                sess[s][k] = k + 1;                    /* the shared system prompt */
        }
        uint32_t add = 1 + (uint32_t) gsl_rng_uniform_int(r, 3);
        for (uint32_t k = 0; k < add; k++)
            sess[s][slen[s]++] = next_id++;
        memcpy(out[i].ids, sess[s], slen[s] * sizeof(uint64_t));
        out[i].n = slen[s];
        out[i].tokens = (uint64_t) (slen[s] - 1) * BT + 1 + gsl_rng_uniform_int(r, BT);
    }
    gsl_rng_free(r);
    return 0;
}

/* repeat_token_share by its definition: leading ids carried by any earlier request. */
static uint64_t repeated_tokens(const req *q, int nreq)
{
    uint64_t *seen = calloc(1 << 20, sizeof *seen);   /* open addressing, id + 1 stored */
    uint64_t total = 0;
    for (int i = 0; i < nreq; i++) {
        uint32_t run = 0;
        for (; run < q[i].n; run++) {
            uint64_t h = q[i].ids[run] * 0x9E3779B97F4A7C15u >> 44;
            while (seen[h] && seen[h] != q[i].ids[run] + 1)
                h = (h + 1) & ((1 << 20) - 1);
            if (!seen[h])
                break;
        }
        uint64_t t = (uint64_t) run * BT;
        total += t < q[i].tokens ? t : q[i].tokens;
        for (uint32_t k = 0; k < q[i].n; k++) {
            uint64_t h = q[i].ids[k] * 0x9E3779B97F4A7C15u >> 44;
            while (seen[h] && seen[h] != q[i].ids[k] + 1)
                h = (h + 1) & ((1 << 20) - 1);
            seen[h] = q[i].ids[k] + 1;
        }
    }
    free(seen);
    return total;
}

/* Runs the requests one at a time through a cache of CAPACITY ids (nothing in
 * flight: each releases before the next arrives), each also taking OUT anonymous
 * blocks for its output while it runs; returns the found tokens. */
static uint64_t cached_tokens(const req *q, int nreq, uint64_t capacity, uint64_t out,
                              uint64_t *prompt)
{
    prefix_cache *pc = prefix_new(capacity * 32, 32);     /* 512-token ids, 16-token KV blocks */
    uint64_t found = 0;
    *prompt = 0;
    for (int i = 0; i < nreq; i++) {
        uint32_t h[MAXB], hit;
        cr_assert_eq(prefix_acquire(pc, q[i].ids, q[i].n, h, &hit), 0);
        found += prefix_found_tokens(hit, BT, q[i].tokens);
        *prompt += q[i].tokens;
        cr_assert_eq(prefix_take(pc, out), 0);
        prefix_give(pc, out);
        prefix_release(pc, h, q[i].n);
        if (i % 101 == 0)
            SANE(pc);
    }
    SANE(pc);
    prefix_free(pc);
    return found;
}

Test(prefix, unlimited_cache_equals_repeat_share_exactly)
{
    enum { N = 3000 };
    static req q[N];
    gen(q, N, 1);
    uint64_t prompt, found = cached_tokens(q, N, 1u << 22, 8, &prompt);
    uint64_t rep = repeated_tokens(q, N);
    cr_assert_eq(found, rep, "found %lu, repeat share %lu", (unsigned long) found,
                 (unsigned long) rep);
    cr_assert_gt(rep, prompt / 4, "the workload should repeat a lot");
}

/* An independent LRU over ids (most recent first), touched in prompt order. */
static uint64_t lru_tokens(const req *q, int nreq, size_t cap)
{
    uint64_t *keys = calloc(cap, sizeof *keys);
    size_t n = 0;
    uint64_t found = 0;
    for (int i = 0; i < nreq; i++) {
        uint32_t run = 0;
        for (; run < q[i].n; run++) {
            size_t j = 0;
            while (j < n && keys[j] != q[i].ids[run])
                j++;
            if (j == n)
                break;
        }
        uint64_t t = (uint64_t) run * BT;
        found += t < q[i].tokens ? t : q[i].tokens;
        for (uint32_t k = 0; k < q[i].n; k++) {
            size_t j = 0;
            while (j < n && keys[j] != q[i].ids[k])
                j++;
            if (j == n) {
                if (n == cap)
                    n--;
                j = n++;
            }
            memmove(keys + 1, keys, j * sizeof *keys);
            keys[0] = q[i].ids[k];
        }
    }
    free(keys);
    return found;
}

Test(prefix, small_cache_is_lower_and_equals_an_independent_lru)
{
    enum { N = 3000 };
    static req q[N];
    gen(q, N, 2);
    uint64_t prompt, unlimited = cached_tokens(q, N, 1u << 22, 8, &prompt);
    const size_t cap = 120;                              /* ids; the longest prompt is <= 64 */
    uint64_t small = cached_tokens(q, N, cap, 0, &prompt);
    cr_assert_lt(small, unlimited);
    cr_assert_gt(small, 0);
    cr_assert_eq(small, lru_tokens(q, N, cap));
    /* output blocks taken while a request runs can only evict more */
    cr_assert_leq(cached_tokens(q, N, cap, 8, &prompt), small);
}
