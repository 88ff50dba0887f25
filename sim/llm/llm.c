/* llm.c -- LLM serving replicas: schedulers, paged KV cache, preemption.
 *
 * Step bookkeeping (see llm.h for the policies).  A replica counts its
 * completed steps in `steps`.  Every decoding sequence advances one token in
 * every step, so its state is a function of the step index: a sequence that
 * entered decoding with c0 tokens cached, first decoding in step f, writes
 * cache position base + s in step s, where base = c0 - f.  Hence, per step:
 *   KV tokens read         = sum(base) + ndec * (s + 1)
 *   new KV blocks needed   = #{ decoding sequences with (base + s) % B == 0 }
 *                            (kept as counts of base % B: O(1) per step)
 *   finishing sequences    = heap entries whose finish_step == s.
 * No step touches a sequence that does not start, finish, or get preempted in it.
 */
#include <assert.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "core/catalog.h"
#include "engine/errmsg.h"
#include "fleet/fleet.h"
#include "llm/llm.h"
#include "llm/prefix.h"
#include "engine/rng.h"
#include "core/route.h"
#include "run/sim.h"

typedef struct llm llm;

typedef struct replica {
    llm *pool;                /* owner */
    int index;                /* replica number */
    int stepping;             /* a step is in flight */
    int idle_listed;          /* on the pool's idle stack */
    int idle_pos;             /* its place there (when idle_listed) */
    int ix_dirty;             /* routed with an index: its load may have changed since the index last read it */
    squeue *wq;               /* the queue it takes requests from: the pool's, or its own */
    squeue own;               /* its own queue (routed pools) */
    evq_id wait_ev;           /* pending wake-up its scheduler's plan asked for (dynamic: a batch's wait) */
    int64_t steps;            /* completed steps */
    int64_t free_blocks;      /* KV blocks not held (with a prefix cache: free + cached, all evictable) */
    prefix_cache *pc;         /* prefix_cache = yes: content blocks kept for later hits, else NULL */

    request *run_head;        /* running sequences, oldest first (prefilling and decoding) */
    request *run_tail;
    int nrun;                 /* running sequences */
    request **pf;             /* sequences still prefilling, admission order */
    int npf;
    int32_t *chunk;           /* tokens each pf[] sequence prefills in the step in flight */

    request **heap;           /* decoding sequences, min-heap on finish_step */
    int ndec;
    int64_t base_sum;         /* sum of decoding sequences' phase_base */
    int64_t *phase_cnt;       /* decoding sequences by phase_base mod block_tokens */
    int ndec_meas;            /* of the decoding sequences (heap), the measured ones */
    double dec_sum;           /* cost accounting: decode time of the steps so far per decoding
                                 sequence, summed over steps (each sequence takes its increase
                                 between joining and leaving the decodes), ns */

    /* static / dynamic batches */
    int batch_n;              /* sequences in the batch in flight (0: none) */
    int batch_live;           /* of those, not yet finished */
    int64_t batch_first;      /* step index of the batch's prefill */
    int64_t batch_last;       /* step index of its last decode */
    int64_t batch_blocks;     /* KV blocks reserved by the batch (freed when it ends) */
    int32_t batch_maxp;       /* longest prompt (padding) */

    cost_step cur;            /* the step in flight */
    simtime_t step_start;     /* ns */
    simtime_t step_dur;       /* ns */
    int64_t step_used;        /* KV blocks held during the step in flight */
    double step_flops;        /* its FLOPs */
    double step_bytes;        /* its HBM bytes */
    /* fleet (fleet.h) */
    int down;                 /* 1: takes no new requests (failed, off, or draining what it holds) */
    evq_id step_ev;           /* the step-end event in flight, or 0 */
    uint64_t since;           /* requests it finished since it last came up (cold factor) */
    int slow;                 /* 1: one of the slow replicas (slow_fraction) */
    simtime_t paused_to;      /* end of its pause in progress, ns (0: none): a step begun before it waits */
} replica;

struct llm {
    station st;               /* common part; must be first */
    const llm_cfg *cfg;
    cost_fast cf;             /* cfg->cost resolved for the steps (cost.h) */
    replica *r;               /* replicas */
    int nrep;
    replica **idle;           /* stack of replicas not stepping */
    int nidle;
    int routed;               /* 1: a routing policy sends each request to a replica's own queue */
    route_ctx rc;             /* routed: the policy's view and state */
    station_snap *snaps;      /* routed: one per replica, taken when the policy asks */
    /* routed by a least-loaded policy (its key, route.h): the replicas' loads */
    route_key_kind ix_key;    /* what the index orders by; ROUTE_KEY_NONE: no index */
    route_index ix;           /* every replica's key, as of its last refresh */
    int *dirty;               /* replicas whose load may have changed since (ix_dirty set) */
    int ndirty;
    int route_pfx;            /* 1 while a request is routed by prefix_affinity over the caches */
    int64_t route_nids;       /* then its prompt's content ids in ids (prompt_ids: -1 out of memory) */
    int check;                /* 1: assert the whole-structure sanity checks at every step */
    int acct;                 /* 1: per-class cost accounting (classes and a price): each step's
                                 time is charged to its sequences (acct_step) */
    int B;                    /* tokens per KV block */
    int64_t Bmask;            /* B - 1 when B is a power of two (a modulo is a mask), else -1 */
    /* measured-window counters */
    int window_open;          /* between llm_window_start() and llm_window_end() */
    simtime_t window_start;   /* ns */
    uint64_t steps;           /* steps of all replicas */
    double seqs_in_steps;     /* sum over steps of sequences in the step */
    double kv_area;           /* integral of used blocks over the window, block-ns */
    double kv_peak;           /* most blocks used by one replica / blocks */
    double flops, bytes;      /* work done */
    uint64_t preemptions;
    uint64_t truncated;
    uint64_t too_long;        /* measured requests rejected for exceeding max_seq_len */
    fleet *fl;                /* failures, autoscaling, cold starts (NULL: none configured) */
    double cpu;               /* cpu_contention: stepping share of the replicas up, averaged over about 10 s */
    simtime_t cpu_t;          /* when cpu was last updated, ns */
    double as_area;           /* busy_area at the last autoscaler evaluation, replica-ns */
    simtime_t as_t;           /* its time, ns */
    uint64_t cold;            /* measured requests finished by a cold replica */
    /* prefix cache (measured requests, first admission) */
    uint64_t *ids;            /* scratch: a prompt's content ids */
    uint32_t nids;            /* its size */
    uint64_t pfx_requests;    /* requests admitted */
    uint64_t pfx_hit_requests;/* of which found any cached block */
    double pfx_prompt;        /* their prompt tokens */
    double pfx_found;         /* prompt tokens found cached: min(prompt, hit ids x id tokens) */
    double pfx_skipped;       /* prompt tokens not prefilled (at least the last one always is) */
    double pfx_saved_ms;      /* isolated-prefill time of the skipped tokens (cost model), ms */
};

/* A plan's answer when it has planned a step to run now. */
#define PLAN_STEP ((simtime_t) -1)

/* A row of the scheduler table (`scheduler = NAME`). */
struct llm_sched {
    const char *name;         /* the value of `scheduler =` */
    int batches;              /* 1: whole batches (static, dynamic); 0: iteration-level */
    int splits_prompts;       /* 1: prompts are prefilled in chunks (no max_batch_tokens cap on them) */
    /* Plans R's next step into R->cur.  Returns PLAN_STEP when there is a step
     * to run now; else the replica idles until a request arrives
     * (SIMTIME_NEVER) or until the time returned, when it plans again. */
    simtime_t (*plan)(replica *R);
    /* The step in flight has ended: advance sequences. */
    void (*complete)(replica *R);
};

/* ---- routing index ------------------------------------------------------------ */

/* R's requests inside (KEY ROUTE_KEY_INSIDE) or its free KV blocks (ROUTE_KEY_KV)
 * have just changed: if the pool's routing index orders by that, R is refreshed
 * there before the next request is routed (refresh_index). */
static inline void load_changed(replica *R, route_key_kind key)
{
    llm *P = R->pool;
    if (P->ix_key != key || R->ix_dirty) return;
    R->ix_dirty = 1;
    P->dirty[P->ndirty++] = R->index;
}

/* ---- running list, finish heap, phase counts -------------------------------- */

static void run_append(replica *R, request *r)
{
    r->rnext = NULL;
    r->rprev = R->run_tail;
    if (R->run_tail) R->run_tail->rnext = r;
    else R->run_head = r;
    R->run_tail = r;
    R->nrun++;
    load_changed(R, ROUTE_KEY_INSIDE);
}

static void run_remove(replica *R, request *r)
{
    if (r->rprev) r->rprev->rnext = r->rnext;
    else R->run_head = r->rnext;
    if (r->rnext) r->rnext->rprev = r->rprev;
    else R->run_tail = r->rprev;
    r->rprev = r->rnext = NULL;
    R->nrun--;
    load_changed(R, ROUTE_KEY_INSIDE);
}

static void heap_swap(replica *R, int i, int j)
{
    request *t = R->heap[i];
    R->heap[i] = R->heap[j];
    R->heap[j] = t;
    R->heap[i]->heap_pos = (uint32_t) i;
    R->heap[j]->heap_pos = (uint32_t) j;
}

static void heap_up(replica *R, int i)
{
    while (i > 0) {
        int p = (i - 1) / 2;
        if (R->heap[p]->finish_step <= R->heap[i]->finish_step) break;
        heap_swap(R, i, p);
        i = p;
    }
}

static void heap_down(replica *R, int i)
{
    for (;;) {
        int c = 2 * i + 1, m = i;
        if (c < R->ndec && R->heap[c]->finish_step < R->heap[m]->finish_step) m = c;
        if (c + 1 < R->ndec && R->heap[c + 1]->finish_step < R->heap[m]->finish_step) m = c + 1;
        if (m == i) break;
        heap_swap(R, i, m);
        i = m;
    }
}

static int64_t pmod(int64_t a, int64_t b) { int64_t r = a % b; return r < 0 ? r + b : r; }

/* pmod(A, P->B): for a power of two the low bits of A (two's complement: the
 * same value for negative A), without a division. */
static inline int64_t bmod(const llm *P, int64_t a) { return P->Bmask >= 0 ? a & P->Bmask : pmod(a, P->B); }

/* R's sequence r has just produced its first (or, after recompute, next) token
 * at the end of step s with c0 tokens cached: it decodes from step s + 1. */
static void decode_join(replica *R, request *r, int64_t s, int64_t c0)
{
    int64_t f = s + 1;
    r->phase_base = c0 - f;
    r->finish_step = (int64_t) r->output - r->generated + f - 1;
    R->base_sum += r->phase_base;
    R->phase_cnt[bmod(R->pool, r->phase_base)]++;
    r->heap_pos = (uint32_t) R->ndec;
    R->heap[R->ndec++] = r;
    heap_up(R, R->ndec - 1);
    R->ndec_meas += r->measured;
    r->cost_mark = R->dec_sum;
}

/* Cost accounting: R's decoding sequence r is charged its share of the decode
 * steps since it began decoding. */
static void charge_decode(replica *R, request *r)
{
    if (R->pool->acct) station_charge(&R->pool->st, r, R->dec_sum - r->cost_mark);
}

static void decode_leave(replica *R, request *r)
{
    int i = (int) r->heap_pos;
    assert(i < R->ndec && R->heap[i] == r);
    charge_decode(R, r);
    R->base_sum -= r->phase_base;
    R->phase_cnt[bmod(R->pool, r->phase_base)]--;
    R->ndec_meas -= r->measured;
    R->ndec--;
    if (i != R->ndec) {
        heap_swap(R, i, R->ndec);
        heap_down(R, i);
        heap_up(R, i);
    }
}

static int64_t blocks_for(const llm *P, int64_t tokens) { return (tokens + P->B - 1) / P->B; }

/* ---- prefix cache ----------------------------------------------------------- */

/* The content ids of R's first TOKENS context tokens (its prompt, then for a
 * session turn its answer) into P->ids: its trace's hash ids (each covering
 * prefix_id_tokens prompt tokens, the last possibly fewer), or, without them (or
 * with a truncated prompt), its class's system-prompt blocks and then ids of its own.
 * *LAST_COST gets the KV blocks of the last id (fewer than a whole id's for a
 * partial last block).  Returns their number, or -1 when out of memory. */
static int64_t context_ids(llm *P, const request *r, int64_t tokens, uint32_t *last_cost)
{
    int64_t T = P->cfg->prefix_id_tokens;
    int64_t n = (tokens + T - 1) / T;
    int own = !r->hash_ids || r->truncated;
    if (!own && n > r->nhash) n = r->nhash;
    if (n > (int64_t) P->nids) {
        uint64_t *x = realloc(P->ids, (size_t) n * sizeof *x);
        if (!x) return -1;
        P->ids = x;
        P->nids = (uint32_t) n;
    }
    /* Without trace ids: the whole blocks of its class's shared system prompt,
     * then, for a turn of a multi-turn session, its whole blocks keyed by the
     * session (the same tokens in every later turn), then blocks of its own. */
    int64_t shared = own && !r->truncated ? r->sys_tokens / T : 0;
    for (int64_t k = 0; k < n; k++)
        P->ids[k] = !own ? (uint64_t) r->hash_ids[k]
                  : k < shared ? (UINT64_C(1) << 62) | ((uint64_t) r->cls << 32) | (uint64_t) k
                  : r->session && !r->truncated && (k + 1) * T <= tokens
                    ? (UINT64_C(1) << 61) | (r->session << 20) | (uint64_t) k
                  : (UINT64_C(1) << 63) | (r->id << 20) | (uint64_t) k;
    int64_t rest = tokens - (n - 1) * T;          /* tokens of the last id */
    if (last_cost) *last_cost = (uint32_t) (rest > 0 && rest < T ? blocks_for(P, rest) : T / P->B);
    return n;
}

static int64_t prompt_ids(llm *P, const request *r, uint32_t *last_cost)
{
    return context_ids(P, r, r->prompt, last_cost);
}

/* Content KV blocks R holds. */
static int64_t content_blocks(const llm *P, const request *r)
{
    (void) P;
    return r->pfx_blocks;
}

/* R gives back its TOTAL blocks: anonymous ones become free, its content blocks
 * cached (or stay held by others). */
static void release_blocks(replica *R, request *r, int64_t total)
{
    load_changed(R, ROUTE_KEY_KV);
    if (!R->pc) {
        R->free_blocks += total;
        return;
    }
    prefix_give(R->pc, (uint64_t) (total - content_blocks(R->pool, r)));
    prefix_release(R->pc, r->pfx_h, (uint32_t) r->pfx_n);
    free(r->pfx_h);
    r->pfx_h = NULL;
    r->pfx_n = 0;
    r->pfx_blocks = 0;
    R->free_blocks = (int64_t) prefix_available(R->pc);
}

/* A turn of a multi-turn session R finished with its TOTAL blocks: as
 * release_blocks, but the whole blocks of its context (prompt and answer, all
 * but the last token, whose KV is never computed) stay cached under the
 * session's keys, for the next turn, whose prompt starts with them (vLLM keeps
 * the full blocks of generated tokens too).  Without room they are not kept. */
static void release_context(replica *R, request *r, int64_t total)
{
    llm *P = R->pool;
    int64_t T = P->cfg->prefix_id_tokens;
    int64_t n = T > 0 ? ((int64_t) r->prompt + r->output - 1) / T : 0;   /* T = 0 without a prefix cache */
    if (!R->pc || !r->session || r->truncated || r->hash_ids || n <= 0) {
        release_blocks(R, r, total);
        return;
    }
    load_changed(R, ROUTE_KEY_KV);
    prefix_give(R->pc, (uint64_t) (total - content_blocks(P, r)));
    uint32_t *h = malloc((size_t) n * sizeof *h), hit = 0;
    int got = 0;
    if (!h || context_ids(P, r, n * T, NULL) < 0)
        P->st.sink->oom(P->st.sink->ctx);
    else {
        prefix_clock(R->pc, evq_now(P->st.q));
        got = prefix_acquire(R->pc, P->ids, (uint32_t) n, h, &hit) == 0;
    }
    /* The prompt's references first, so that the context is the most recent. */
    prefix_release(R->pc, r->pfx_h, (uint32_t) r->pfx_n);
    if (got) prefix_release(R->pc, h, (uint32_t) n);
    free(h);
    free(r->pfx_h);
    r->pfx_h = NULL;
    r->pfx_n = 0;
    r->pfx_blocks = 0;
    R->free_blocks = (int64_t) prefix_available(R->pc);
}

/* Takes N anonymous blocks (decode growth); the caller checked they are available. */
static void take_blocks(replica *R, int64_t n)
{
    load_changed(R, ROUTE_KEY_KV);
    if (!R->pc) {
        R->free_blocks -= n;
        return;
    }
    int rc = prefix_take(R->pc, (uint64_t) n);
    assert(rc == 0);
    (void) rc;
    R->free_blocks = (int64_t) prefix_available(R->pc);
}

static void give_blocks(replica *R, int64_t n)
{
    load_changed(R, ROUTE_KEY_KV);
    if (!R->pc) {
        R->free_blocks += n;
        return;
    }
    prefix_give(R->pc, (uint64_t) n);
    R->free_blocks = (int64_t) prefix_available(R->pc);
}

/* ---- sequences leaving ----------------------------------------------------- */

static void finish(replica *R, request *r)
{
    llm *P = R->pool;
    station *st = &P->st;
    simtime_t now = evq_now(st->q);
    r->last_token = now;
    r->service_ns += now - r->start;
    if (P->fl && P->st.cfg->fleet->cold && R->since < (uint64_t) P->st.cfg->fleet->cs.cold_requests &&
        P->st.cfg->fleet->cs.cold_factor > 1) {
        r->cold = 1;
        if (r->measured) P->cold++;
    }
    R->since++;
    if (r->measured) {
        /* All its waits and all its service in this pool, preemptions included. */
        stat_add(st->queue_ms, simtime_to_ms(r->queue_ns - r->pool_queue0));
        stat_add(st->service_ms, simtime_to_ms(r->service_ns - r->pool_service0));
        st->served++;
    }
    station_forward(st, r, 0);
}

/* Takes the newest running sequence out of R and puts it back at the head of
 * the queue; it will be recomputed (prompt + tokens generated so far). */
static void preempt_newest(replica *R)
{
    llm *P = R->pool;
    request *r = R->run_tail;
    assert(r != NULL);
    run_remove(R, r);
    if (r->prefilled < r->prefill_len) {
        for (int i = 0; i < R->npf; i++)
            if (R->pf[i] == r) {
                memmove(&R->pf[i], &R->pf[i + 1], (size_t) (R->npf - i - 1) * sizeof *R->pf);
                R->npf--;
                break;
            }
    } else {
        /* Tokens produced so far: it has finish_step - s + 1 still to make. */
        int64_t s = R->steps;
        r->blocks = blocks_for(P, r->phase_base + s);
        r->generated = (int32_t) (r->output - (r->finish_step - s + 1));
        r->last_token = evq_now(P->st.q);   /* its last token came at the end of the step just done */
        decode_leave(R, r);
    }
    release_blocks(R, r, r->blocks);
    r->blocks = 0;
    simtime_t now = evq_now(P->st.q);
    r->service_ns += now - r->start;
    r->enq = now;
    if (*P->st.sink->measuring) P->preemptions++;
    squeue_push_front(R->wq, r);
    load_changed(R, ROUTE_KEY_INSIDE);
}

/* ---- admission --------------------------------------------------------------- */

/* Starts R's sequence r: it is dequeued and holds BLOCKS blocks. */
static void admit(replica *R, request *r, int64_t blocks)
{
    llm *P = R->pool;
    request *d = squeue_dequeue(R->wq);
    assert(d == r);
    (void) d;
    load_changed(R, ROUTE_KEY_INSIDE);
    load_changed(R, ROUTE_KEY_KV);
    station_start(&P->st, r);
    r->prefill_len = r->prompt + (r->generated > 0 ? r->generated : 0);
    r->prefilled = 0;
    r->blocks = blocks;
    if (R->pc) {
        /* The content blocks are shared through the cache (plan checked the room). */
        uint32_t last = 0, hit = 0;
        int64_t n = prompt_ids(P, r, &last);
        r->pfx_h = n > 0 ? malloc((size_t) n * sizeof *r->pfx_h) : NULL;
        prefix_clock(R->pc, evq_now(P->st.q));
        if ((n > 0 && !r->pfx_h) || n < 0 ||
            prefix_acquire_cost(R->pc, P->ids, (uint32_t) (n > 0 ? n : 0), last, r->pfx_h, &hit) != 0) {
            P->st.sink->oom(P->st.sink->ctx);
            free(r->pfx_h);
            r->pfx_h = NULL;
            n = 0;
        }
        r->pfx_n = (int32_t) n;
        r->pfx_blocks = n > 0 ? (int32_t) ((n - 1) * (P->cfg->prefix_id_tokens / P->B) + last) : 0;
        int rc = prefix_take(R->pc, (uint64_t) (blocks - content_blocks(P, r)));
        assert(rc == 0);
        (void) rc;
        R->free_blocks = (int64_t) prefix_available(R->pc);
        /* A hit skips the prefill of its cached prefix, all but the last token (vLLM). */
        int64_t found = (int64_t) hit * P->cfg->prefix_id_tokens;
        if (found > r->prompt) found = r->prompt;
        int64_t skip = found < r->prefill_len - 1 ? found : r->prefill_len - 1;
        r->prefilled = (int32_t) skip;
        if (r->measured && !r->pfx_seen) {
            r->pfx_seen = 1;
            P->pfx_requests++;
            P->pfx_hit_requests += hit > 0;
            P->pfx_prompt += r->prompt;
            P->pfx_found += (double) found;
            P->pfx_skipped += (double) skip;
            cost_step a = { .prefill_tokens = r->prefill_len, .prefill_seqs = 1,
                            .prefill_pairs = (double) r->prefill_len * (r->prefill_len + 1.0) / 2.0 };
            int64_t c = r->prefill_len - skip;
            cost_step b = { .prefill_tokens = c, .prefill_seqs = 1,
                            .prefill_pairs = (double) c * (double) skip + (double) c * (c + 1.0) / 2.0 };
            if (skip > 0) P->pfx_saved_ms += cost_fast_ms(&P->cf, &a) - cost_fast_ms(&P->cf, &b);
        }
    } else
        R->free_blocks -= blocks;
    run_append(R, r);
    R->pf[R->npf++] = r;
}

/* ---- continuous and chunked ------------------------------------------------- */

static simtime_t plan_iteration(replica *R, int chunked)
{
    llm *P = R->pool;
    const llm_cfg *L = P->cfg;
    int64_t s = R->steps;
    /* Blocks the decodes of this step need; preempt the newest until they fit. */
    const int64_t phase = bmod(P, -s);
    while (R->phase_cnt[phase] > R->free_blocks) preempt_newest(R);
    int64_t need = R->phase_cnt[phase];
    take_blocks(R, need);                   /* taken now; decodes hold them from this step */
    memset(&R->cur, 0, sizeof R->cur);
    R->cur.decode_seqs = R->ndec;
    R->cur.kv_tokens = R->base_sum + (int64_t) R->ndec * (s + 1);
    int64_t budget = L->max_batch_tokens - R->ndec;
    /* Chunked (Sarathi-Serve, vLLM max_num_batched_tokens): the step's token
     * budget chunk_tokens counts its decode tokens too. */
    int64_t pbudget = chunked ? L->chunk_tokens - R->ndec : budget;
    if (pbudget > budget) pbudget = budget;
    /* Sequences already prefilling (chunked) continue first. */
    for (int i = 0; i < R->npf && pbudget > 0; i++) {
        request *r = R->pf[i];
        int64_t c = r->prefill_len - r->prefilled;
        if (c > pbudget) c = pbudget;
        R->chunk[i] = (int32_t) c;
        pbudget -= c;
    }
    /* Then newcomers, first come first served: stop at the first that does not fit. */
    request *r;
    while (!R->down && pbudget > 0 && R->nrun < L->max_batch && (r = squeue_peek(R->wq)) != NULL) {
        int64_t len = r->prompt + (r->generated > 0 ? r->generated : 0);
        int64_t blocks = blocks_for(P, len), skip = 0;
        if (R->pc) {
            /* Cached blocks it finds are not prefilled, nor taken again. */
            uint32_t last = 0;
            int64_t n = prompt_ids(P, r, &last);
            if (n < 0) n = 0;
            uint32_t hit = prefix_match(R->pc, P->ids, (uint32_t) n);
            int64_t found = (int64_t) hit * P->cfg->prefix_id_tokens;
            if (found > r->prompt) found = r->prompt;
            skip = found < len - 1 ? found : len - 1;
            int64_t content = n > 0 ? (n - 1) * (P->cfg->prefix_id_tokens / P->B) + last : 0;
            int64_t room = (int64_t) prefix_need_cost(R->pc, P->ids, (uint32_t) n, last) + blocks - content;
            if (!chunked && len - skip > pbudget) break;
            if (room > R->free_blocks) break;
        } else {
            if (!chunked && len > pbudget) break;
            if (blocks > R->free_blocks) break;
        }
        admit(R, r, blocks);
        len -= r->prefilled;
        (void) skip;
        int64_t c = len < pbudget ? len : pbudget;
        R->chunk[R->npf - 1] = (int32_t) c;
        pbudget -= c;
    }
    for (int i = 0; i < R->npf; i++) {
        int64_t c = R->chunk[i];
        if (c <= 0) continue;
        int64_t k = R->pf[i]->prefilled;
        R->cur.prefill_tokens += c;
        R->cur.prefill_pairs += (double) c * (double) k + (double) c * (double) (c + 1) / 2.0;
        R->cur.prefill_seqs++;
    }
    if (R->cur.decode_seqs == 0 && R->cur.prefill_seqs == 0) {
        give_blocks(R, need);
        return SIMTIME_NEVER;
    }
    return PLAN_STEP;
}

static simtime_t plan_continuous(replica *R) { return plan_iteration(R, 0); }
static simtime_t plan_chunked(replica *R) { return plan_iteration(R, 1); }

/* Inter-token latency: each measured decoding sequence of the step in flight got
 * a token now, one step (back to back) after its previous one. */
static void itl_decodes(replica *R)
{
    stat_acc *itl = R->pool->st.sink->itl;
    if (itl && R->ndec_meas > 0)
        stat_add_n(itl, simtime_to_ms(R->step_dur), (uint64_t) R->ndec_meas);
}

static void complete_iteration(replica *R)
{
    llm *P = R->pool;
    int64_t s = R->steps;
    simtime_t now = evq_now(P->st.q);
    itl_decodes(R);
    /* Decoders: new blocks were taken at planning; sequences ending now leave. */
    while (R->ndec > 0 && R->heap[0]->finish_step <= s) {
        request *r = R->heap[0];
        assert(r->finish_step == s);
        decode_leave(R, r);
        run_remove(R, r);
        r->generated = r->output;
        release_context(R, r, blocks_for(P, r->phase_base + s + 1));
        r->blocks = 0;
        finish(R, r);
    }
    /* Prefills: those completing now produce a token and start decoding. */
    int k = 0;
    for (int i = 0; i < R->npf; i++) {
        request *r = R->pf[i];
        r->prefilled += R->chunk[i];
        R->chunk[i] = 0;
        if (r->prefilled < r->prefill_len) { R->pf[k++] = r; continue; }
        if (r->generated == 0) r->first_token = now;
        else if (r->measured && P->st.sink->itl)   /* recomputed after a preemption */
            stat_add(P->st.sink->itl, simtime_to_ms(now - r->last_token));
        r->generated++;
        if (r->generated >= r->output) {
            run_remove(R, r);
            release_context(R, r, r->blocks);
            r->blocks = 0;
            finish(R, r);
        } else {
            decode_join(R, r, s, r->prefill_len);
            /* From now on its blocks are counted by the phase formula. */
            r->blocks = 0;
        }
    }
    R->npf = k;
}

/* ---- static and dynamic ----------------------------------------------------- */

/* DYNAMIC: a batch starts only when max_batch requests wait or the oldest has
 * waited max_wait_ms; until then the plan asks to be woken at that time. */
static simtime_t plan_batch(replica *R, int dynamic)
{
    llm *P = R->pool;
    const llm_cfg *L = P->cfg;
    memset(&R->cur, 0, sizeof R->cur);
    if (R->batch_n == 0) {
        /* Form a batch from what is waiting. */
        request *h = squeue_peek(R->wq);
        if (!h) return SIMTIME_NEVER;
        if (dynamic && R->wq->len < (uint64_t) L->max_batch) {
            simtime_t due = simtime_add(h->enq, simtime_from_ms(L->max_wait_ms));
            if (evq_now(P->st.q) < due) return due;
        }
        int32_t maxp = 0, maxo = 0;
        request *r;
        while (R->batch_n < L->max_batch && (r = squeue_peek(R->wq)) != NULL) {
            int64_t len = r->prompt + r->output;
            int64_t blocks = blocks_for(P, len);
            /* The padded prefill (batch size x longest prompt) must fit max_batch_tokens. */
            int64_t padded = (int64_t) (R->batch_n + 1) * (r->prompt > maxp ? r->prompt : maxp);
            if (blocks > R->free_blocks || (R->batch_n > 0 && padded > L->max_batch_tokens)) break;
            admit(R, r, blocks);
            R->batch_blocks += blocks;
            r->prefilled = r->prefill_len;
            if (r->prompt > maxp) maxp = r->prompt;
            if (r->output > maxo) maxo = r->output;
            R->batch_n++;
        }
        assert(R->batch_n > 0);
        R->batch_live = R->batch_n;
        R->batch_maxp = maxp;
        R->batch_first = R->steps;
        R->batch_last = R->steps + maxo - 1;
        R->npf = 0;
        /* Finishing order: each sequence ends at the step of its own last token. */
        for (request *q = R->run_head; q; q = q->rnext) {
            q->finish_step = R->batch_first + q->output - 1;
            q->heap_pos = (uint32_t) R->ndec;
            R->heap[R->ndec++] = q;
            heap_up(R, R->ndec - 1);
            R->ndec_meas += q->measured;
            q->cost_mark = R->dec_sum;
        }
        /* The prefill step, prompts padded to the longest. */
        R->cur.prefill_tokens = (int64_t) R->batch_n * maxp;
        R->cur.prefill_pairs = (double) R->batch_n * maxp * (maxp + 1.0) / 2.0;
        R->cur.prefill_seqs = R->batch_n;
        return PLAN_STEP;
    }
    /* A decode step of the whole padded batch. */
    int64_t k = R->steps - R->batch_first;     /* decode steps done + 1 */
    R->cur.decode_seqs = R->batch_n;
    R->cur.kv_tokens = (int64_t) R->batch_n * (R->batch_maxp + k);
    return PLAN_STEP;
}

static simtime_t plan_static(replica *R) { return plan_batch(R, 0); }
static simtime_t plan_dynamic(replica *R) { return plan_batch(R, 1); }

static void complete_batch(replica *R)
{
    llm *P = R->pool;
    int64_t s = R->steps;
    simtime_t now = evq_now(P->st.q);
    if (s == R->batch_first)
        for (request *q = R->run_head; q; q = q->rnext) {
            q->first_token = now;
            q->generated = 1;
        }
    else
        itl_decodes(R);
    while (R->ndec > 0 && R->heap[0]->finish_step <= s) {
        request *r = R->heap[0];
        R->ndec_meas -= r->measured;
        R->ndec--;
        if (R->ndec > 0) {
            heap_swap(R, 0, R->ndec);
            heap_down(R, 0);
        }
        charge_decode(R, r);
        r->generated = r->output;
        run_remove(R, r);       /* its KV blocks stay reserved until the batch ends */
        R->batch_live--;
        finish(R, r);
    }
    if (s == R->batch_last) {
        assert(R->batch_live == 0);
        R->free_blocks += R->batch_blocks;
        load_changed(R, ROUTE_KEY_KV);
        R->batch_blocks = 0;
        assert(R->free_blocks == P->cfg->kv_blocks);
        R->batch_n = 0;
    }
}

/* The scheduler table (llm.h lists what each does). */
static const llm_sched SCHEDULERS[] = {
    { "static", 1, 0, plan_static, complete_batch },
    { "dynamic", 1, 0, plan_dynamic, complete_batch },
    { "continuous", 0, 0, plan_continuous, complete_iteration },
    { "chunked", 0, 1, plan_chunked, complete_iteration },
};
#define NSCHED ((int) (sizeof SCHEDULERS / sizeof SCHEDULERS[0]))

int llm_sched_count(void) { return NSCHED; }
const llm_sched *llm_sched_at(int i) { return i >= 0 && i < NSCHED ? &SCHEDULERS[i] : NULL; }
const char *llm_sched_name(const llm_sched *s) { return s->name; }
int llm_sched_splits_prompts(const llm_sched *s) { return s->splits_prompts; }

const llm_sched *llm_sched_find(const char *name)
{
    for (int i = 0; i < NSCHED; i++)
        if (!strcasecmp(SCHEDULERS[i].name, name)) return &SCHEDULERS[i];
    return NULL;
}

void llm_sched_choices(char *buf, size_t n)
{
    size_t len = 0;
    buf[0] = '\0';
    for (int i = 0; i < NSCHED && len < n; i++)
        len += (size_t) snprintf(buf + len, n - len, "%s%s", i ? "|" : "", SCHEDULERS[i].name);
}

/* ---- whole-structure sanity checks (assert only) ----------------------------------- */

/* 0 with a line on stderr when R's bookkeeping is inconsistent.  PLANNED: a
 * step is planned and in flight (its decodes' new blocks taken), else R is
 * between steps.  O(sequences): run only when the pool's check flag is on. */
static int replica_sane(const replica *R, int planned)
{
    const llm *P = R->pool;
    const char *bad = NULL;
    int64_t s = R->steps, held = 0, base = 0, phases = 0;
    int nlist = 0;
    for (const request *r = R->run_head; r; r = r->rnext) nlist++;
    for (int i = 0; i < P->B; i++) phases += R->phase_cnt[i];
    for (int i = 0; i < R->ndec; i++) {
        const request *r = R->heap[i];
        if (r->heap_pos != (uint32_t) i) bad = "a decoding sequence's heap position";
        if (i > 0 && R->heap[(i - 1) / 2]->finish_step > r->finish_step) bad = "the finish-heap order";
        base += r->phase_base;
    }
    if (nlist != R->nrun) bad = "running-list length";
    else if (R->ndec > R->nrun) bad = "more decoding sequences than running ones";
    else if (P->cfg->sched->batches) {
        if (R->nrun != R->ndec) bad = "batch: running sequences != finish-heap size";
        else if (phases != 0 || R->npf != 0) bad = "batch: phase counts or prefills in use";
        else if (R->free_blocks + R->batch_blocks != P->cfg->kv_blocks) bad = "batch: free + reserved KV blocks != capacity";
        else if (R->batch_n == 0 && R->batch_blocks != 0) bad = "batch: blocks reserved without a batch";
    } else {
        /* With a prefix cache, content blocks are shared: count each sequence's
         * anonymous blocks here, and let the cache check the rest. */
        for (int i = 0; i < R->npf; i++) held += R->pf[i]->blocks - content_blocks(P, R->pf[i]);
        for (int i = 0; i < R->ndec; i++)
            held += blocks_for(P, R->heap[i]->phase_base + s + (planned ? 1 : 0)) - content_blocks(P, R->heap[i]);
        if (R->pc) {
            /* The counters every step; the whole structure (O(entries)) every 1024 steps. */
            if (prefix_free_blocks(R->pc) + prefix_held_blocks(R->pc) + prefix_cached_blocks(R->pc)
                != prefix_capacity(R->pc)) bad = "prefix cache: free + held + cached KV blocks != capacity";
            else if ((s & 1023) == 0 && !prefix_sane(R->pc)) bad = "prefix cache: its structure";
            else if (R->free_blocks != (int64_t) prefix_available(R->pc)) bad = "prefix cache: free blocks";
            else if ((int64_t) prefix_anon_blocks(R->pc) != held) bad = "prefix cache: anonymous blocks != sequences' own";
            held = P->cfg->kv_blocks - R->free_blocks;   /* the check below then holds */
        }
        if (R->nrun != R->npf + R->ndec) bad = "running sequences != prefilling + decoding";
        else if (phases != R->ndec) bad = "phase counts do not sum to the decoding sequences";
        else if (base != R->base_sum) bad = "sum of phase bases";
        else if (R->free_blocks < 0 || R->free_blocks + held != P->cfg->kv_blocks) bad = "free + held KV blocks != capacity";
    }
    uint64_t queued = P->st.queue.len;
    for (int i = 0; i < P->nrep; i++) queued += P->r[i].own.len;
    if (!bad && queued != P->st.qlen) bad = "queue lengths do not sum to the pool's";
    if (bad)
        fprintf(stderr, "latsim: llm pool %s replica %d, step %lld (%s): inconsistent %s\n", ERRMSG_SHOWN(P->st.cfg->name), R->index,
                (long long) s, planned ? "planned" : "between steps", bad);
    return bad == NULL;
}

/* ---- stepping ------------------------------------------------------------------ */

static void on_step_end(evq *q, void *subject, int64_t arg);
static void kick(llm *P);

/* The idle stack: R goes on top, or comes off it in O(1) (the top takes its place). */
static void idle_push(llm *P, replica *R)
{
    R->idle_listed = 1;
    R->idle_pos = P->nidle;
    P->idle[P->nidle++] = R;
}

static void idle_remove(llm *P, replica *R)
{
    if (!R->idle_listed) return;
    replica *top = P->idle[--P->nidle];
    P->idle[R->idle_pos] = top;
    top->idle_pos = R->idle_pos;
    R->idle_listed = 0;
}

static void go_idle(replica *R)
{
    llm *P = R->pool;
    if (R->stepping) {
        R->stepping = 0;
        station_busy(&P->st, -1);
    }
    if (R->down) {                 /* it takes nothing new: off the idle stack */
        if (P->fl && R->nrun == 0 && fleet_state(P->fl, R->index) == UNIT_DRAINING)
            fleet_drained(P->fl, R->index);
        return;
    }
    if (!R->idle_listed) idle_push(P, R);
}

static void on_wake(evq *q, void *subject, int64_t arg);

/* Plans and starts R's next step, or idles it (until the time the plan asks for). */
static void step(replica *R)
{
    llm *P = R->pool;
    simtime_t wake_at = P->cfg->sched->plan(R);
    if (wake_at != PLAN_STEP) {
        go_idle(R);
        if (wake_at != SIMTIME_NEVER && !R->wait_ev)
            R->wait_ev = station_at(&P->st, wake_at, on_wake, R, 0);
        return;
    }
    if (P->check) assert(replica_sane(R, 1));
    if (!R->stepping) {
        R->stepping = 1;
        station_busy(&P->st, +1);
    }
    simtime_t now = evq_now(P->st.q);
    double ms = cost_fast_ms_work(&P->cf, &R->cur, &R->step_flops, &R->step_bytes);
    simtime_t dur;
    if (P->fl) {   /* slow replicas and pauses come with a fleet too */
        const fleet_cfg *fc = P->st.cfg->fleet;
        if (fc->cold) ms *= cold_factor(&fc->cs, R->since);
        if (R->slow) ms *= fc->fault.slow_factor;
        if (fc->contention) {
            /* Host CPU utilisation: the stepping share of the replicas up (this one
             * included); the curve multiplies the CPU overhead share of the step time. */
            ms *= fleet_contention(P->fl, P->st.busy, &P->cpu, &P->cpu_t);
        }
        dur = simtime_from_ms(ms);
        if (dur < 1) dur = 1;
        if (R->paused_to > now) dur += R->paused_to - now;   /* it runs once the pause is over */
    } else {
        dur = simtime_from_ms(ms);
        if (dur < 1) dur = 1;
    }
    R->step_start = now;
    R->step_dur = dur;
    R->step_used = P->cfg->kv_blocks - R->free_blocks;
    if (P->window_open) {
        P->steps++;
        P->seqs_in_steps += R->cur.decode_seqs + R->cur.prefill_seqs;
        double occ = (double) R->step_used / (double) P->cfg->kv_blocks;
        if (occ > P->kv_peak) P->kv_peak = occ;
    }
    R->step_ev = station_after(&P->st, dur, on_step_end, R, 0);
}

/* Cost accounting (README, "Cost per class"): the step in flight has ended;
 * its time goes to its sequences.  A step with both prompt tokens and decodes
 * is split between the two in proportion to their standalone step times (the
 * cost model's time of its prefill alone and of its decodes alone); the decode
 * part is shared equally by the decoding sequences (through dec_sum, O(1)), the
 * prefill part by the prefilling sequences in proportion to their chunks (a
 * static or dynamic batch's padded prefill: equally). */
static void charge_step(replica *R)
{
    llm *P = R->pool;
    const cost_step *c = &R->cur;
    double dur = (double) R->step_dur, dec = 0;
    int decodes = c->decode_seqs > 0 && R->ndec > 0;
    if (decodes && c->prefill_seqs > 0) {
        cost_step pf = { .prefill_tokens = c->prefill_tokens, .prefill_pairs = c->prefill_pairs,
                         .prefill_seqs = c->prefill_seqs };
        cost_step dc = { .decode_seqs = c->decode_seqs, .kv_tokens = c->kv_tokens };
        double a = cost_fast_ms(&P->cf, &pf), b = cost_fast_ms(&P->cf, &dc);
        dec = a + b > 0 ? dur * b / (a + b) : dur / 2;
    } else if (decodes)
        dec = dur;
    if (decodes) R->dec_sum += dec / R->ndec;
    double pre = dur - dec;
    if (c->prefill_seqs <= 0 || pre <= 0) return;
    if (P->cfg->sched->batches) {
        for (request *q = R->run_head; q; q = q->rnext) station_charge(&P->st, q, pre / R->batch_n);
        return;
    }
    if (c->prefill_tokens <= 0) return;
    for (int i = 0; i < R->npf; i++)
        if (R->chunk[i] > 0) station_charge(&P->st, R->pf[i], pre * R->chunk[i] / (double) c->prefill_tokens);
}

/* Adds the part of R's step in flight that lies in the window, up to now. */
static void account_step(replica *R)
{
    llm *P = R->pool;
    if (!P->window_open) return;
    simtime_t from = R->step_start > P->window_start ? R->step_start : P->window_start;
    double in = (double) (evq_now(P->st.q) - from);
    if (in <= 0) return;
    double frac = in / (double) R->step_dur;
    P->kv_area += (double) R->step_used * in;
    P->flops += R->step_flops * frac;
    P->bytes += R->step_bytes * frac;
}

static void on_step_end(evq *q, void *subject, int64_t arg)
{
    (void) q;
    (void) arg;
    replica *R = subject;
    R->step_ev = 0;
    account_step(R);
    if (R->pool->acct) charge_step(R);
    R->pool->cfg->sched->complete(R);
    R->steps++;
    if (R->pool->check) assert(replica_sane(R, 0));
    step(R);
    if (!R->pool->routed && R->pool->nidle > 0 && R->pool->st.qlen > 0) kick(R->pool);   /* e.g. a preempted request */
}

/* Takes R off the idle stack and tries to start it. */
static void wake(replica *R)
{
    idle_remove(R->pool, R);
    step(R);
}

/* The time a plan asked to be woken at (a dynamic batch's wait) has come. */
static void on_wake(evq *q, void *subject, int64_t arg)
{
    (void) q;
    (void) arg;
    replica *R = subject;
    R->wait_ev = 0;
    if (!R->stepping) wake(R);
    if (!R->pool->routed) kick(R->pool);   /* a batch may not take everything: other idle replicas may */
}

/* ---- replicas as fleet units (fleet.h) ---------------------------------------- */

static void kick(llm *P);

static void unit_down(void *ctx, int u, int failed)
{
    llm *P = ctx;
    replica *R = &P->r[u];
    station *st = &P->st;
    R->down = 1;
    idle_remove(P, R);
    if (R->wait_ev) {
        evq_cancel(st->q, R->wait_ev);
        R->wait_ev = 0;
    }
    if (!failed) return;                       /* draining: its steps go on without newcomers */
    /* It crashed: the step in flight is lost, and every sequence it held goes back
     * to the head of the queue to be recomputed elsewhere (as after a preemption),
     * or fails. */
    if (R->step_ev) {
        evq_cancel(st->q, R->step_ev);
        R->step_ev = 0;
        account_step(R);
    }
    if (R->stepping) {
        R->stepping = 0;
        station_busy(st, -1);
    }
    int n = 0;
    while (R->run_tail) {
        preempt_newest(R);
        if (*st->sink->measuring) P->preemptions--;   /* not a preemption: a failure */
        n++;
    }
    R->npf = 0;
    if (R->pc) prefix_clear(R->pc);             /* its cached prefixes are gone too */
    R->free_blocks = P->cfg->kv_blocks;        /* its KV cache is gone */
    load_changed(R, ROUTE_KEY_KV);
    if (st->cfg->fleet->fault.on_failure == FAULT_FAIL)
        for (int i = 0; i < n; i++) {
            request *r = squeue_dequeue(R->wq);
            if (r->measured) st->failed++;
            station_drop(st, r, OUT_FAILED);
        }
    else
        kick(P);
}

static void unit_up(void *ctx, int u)
{
    llm *P = ctx;
    replica *R = &P->r[u];
    R->down = 0;
    R->since = 0;
    go_idle(R);
    kick(P);
}

static uint64_t unit_held(void *ctx, int u)
{
    return (uint64_t) ((llm *) ctx)->r[u].nrun;
}

/* Replica U stalls for LEN (GC, stop-the-world): the step in flight ends LEN
 * later; a step planned during the pause runs after it (step()). */
static void unit_pause(void *ctx, int u, simtime_t len)
{
    llm *P = ctx;
    replica *R = &P->r[u];
    simtime_t now = evq_now(P->st.q);
    R->paused_to = now + len;
    if (R->step_ev) {
        evq_cancel(P->st.q, R->step_ev);
        R->step_dur += len;
        R->step_ev = station_at(&P->st, R->step_start + R->step_dur, on_step_end, R, 0);
    }
}

/* The autoscaler's load: requests in the pool, mean stepping replicas since the
 * last evaluation, or KV blocks in use in units of one replica's capacity. */
static double unit_load(void *ctx, as_metric m)
{
    llm *P = ctx;
    station *st = &P->st;
    if (m == AS_QUEUE) return (double) st->inside;
    /* Scaled to zero with requests waiting, nothing is busy and no KV is held,
     * but the load is not nothing (the autoscaler then wants one replica). */
    double least = st->inside > 0 ? 1e-9 : 0;
    if (m == AS_KV) {
        double used = 0;
        for (int i = 0; i < P->nrep; i++)
            used += (double) (P->cfg->kv_blocks - P->r[i].free_blocks) / (double) P->cfg->kv_blocks;
        return used > least ? used : least;
    }
    station_busy(st, 0);
    simtime_t now = evq_now(st->q);
    double busy = now > P->as_t ? (st->busy_area - P->as_area) / (double) (now - P->as_t) : st->busy;
    P->as_area = st->busy_area;
    P->as_t = now;
    return busy > least ? busy : least;
}

/* ---- the station ----------------------------------------------------------------- */

/* Gives idle replicas, most recently idled first, a chance at waiting requests. */
static void kick(llm *P)
{
    while (P->nidle > 0 && P->st.qlen > 0) {
        replica *R = P->idle[P->nidle - 1];
        wake(R);
        if (!R->stepping) break;    /* it stayed idle (a dynamic batch still filling): so would others */
    }
}

/* Replica I's load, as the routing policy sees it. */
static void replica_snap(const replica *R, station_snap *out)
{
    out->waiting = R->own.len;
    out->inside = R->own.len + (uint64_t) R->nrun;
    out->running = (uint64_t) R->nrun;
    out->busy = R->stepping;
    out->capacity = 1;
    out->kv_free = (double) R->free_blocks / (double) R->pool->cfg->kv_blocks;
}

/* Replica I's snapshot for the routing policy (route_view.snap); with
 * prefix_affinity, how much of the routed request's prompt its cache holds, as it
 * is now (the pool's own router sees its replicas' caches). */
static const station_snap *routed_snap(void *ctx, int i)
{
    llm *P = ctx;
    station_snap *s = &P->snaps[i];
    replica_snap(&P->r[i], s);
    if (P->route_pfx) {
        int64_t n = P->route_nids;
        uint32_t h = n > 0 ? prefix_match(P->r[i].pc, P->ids, (uint32_t) n) : 0;
        /* Only a prefix covering affinity_threshold of the prompt counts. */
        s->prefix_ids = (double) h >= P->cfg->affinity_threshold * (double) n ? h : 0;
    }
    return s;
}

/* Brings the routing index up to date: the replicas marked since the last request. */
static void refresh_index(llm *P)
{
    for (int k = 0; k < P->ndirty; k++) {
        replica *R = &P->r[P->dirty[k]];
        station_snap s;
        replica_snap(R, &s);
        route_index_set(&P->ix, R->index, route_key(P->rc.policy, &s));
        R->ix_dirty = 0;
    }
    P->ndirty = 0;
}

/* Sanity check (assert only): every replica's key in the index is that of its
 * snapshot now, and the policy reading every snapshot, from the same turn, picks
 * GOT too.  O(replicas): run only when the pool's check flag is on. */
static int index_sane(llm *P, const request *r, uint64_t turn, int got)
{
    for (int i = 0; i < P->nrep; i++) {
        station_snap s;
        replica_snap(&P->r[i], &s);
        if (route_index_key(&P->ix, i) != route_key(P->rc.policy, &s)) {
            fprintf(stderr, "latsim: llm pool %s replica %d: routing index key %g, load %g\n", P->st.cfg->name, i,
                    route_index_key(&P->ix, i), route_key(P->rc.policy, &s));
            return 0;
        }
    }
    route_ctx scan = P->rc;
    scan.turn = turn;
    route_view all = { routed_snap, P, NULL };
    route_counts tally = route_tally;          /* the check's own reads are not counted */
    int want = scan.policy->pick(&scan, r, &all, scan.n);
    route_tally = tally;
    if (want != got)
        fprintf(stderr, "latsim: llm pool %s: routing index picked replica %d, a scan of every replica %d\n",
                P->st.cfg->name, got, want);
    return want == got;
}

static void enter_queue(llm *P, request *r)
{
    if (!P->routed) {
        if (station_enqueue(&P->st, r) == 0) kick(P);
        return;
    }
    if (P->rc.policy->uses_prefix && P->cfg->prefix_cache) {
        P->route_nids = prompt_ids(P, r, NULL);
        P->route_pfx = 1;
    }
    if (P->ix_key != ROUTE_KEY_NONE) refresh_index(P);
    route_view v = { routed_snap, P, P->ix_key != ROUTE_KEY_NONE ? &P->ix : NULL };
    uint64_t turn = P->rc.turn;
    int e = route_pick(&P->rc, r, &v);
    if (P->check && P->ix_key != ROUTE_KEY_NONE) assert(index_sane(P, r, turn, e));
    P->route_pfx = 0;
    replica *R = &P->r[e];
    if (squeue_enqueue(&R->own, r) == 0) {
        load_changed(R, ROUTE_KEY_INSIDE);
        if (R->idle_listed) wake(R);
    }
}

/* A timeout took a request out of replica R's own queue (squeue.timed_out). */
static void own_timed_out(squeue *q)
{
    load_changed((replica *) (void *) ((char *) q - offsetof(replica, own)), ROUTE_KEY_INSIDE);
}

static void on_overhead_done(evq *q, void *subject, int64_t arg)
{
    llm *P = subject;
    request *r = (request *) (intptr_t) arg;
    r->enq = evq_now(q);
    enter_queue(P, r);
}

static void arrive(station *st, request *r)
{
    llm *P = (llm *) st;
    const llm_cfg *L = P->cfg;
    if (r->measured) st->arrivals++;
    r->generated = 0;
    r->pool_queue0 = r->queue_ns;
    r->pool_service0 = r->service_ns;
    if ((int64_t) r->prompt + r->output > L->max_seq_len) {
        if (!L->truncate) {
            if (r->measured) {
                st->rejected++;
                P->too_long++;
            }
            station_drop(st, r, OUT_REJECTED);
            return;
        }
        int64_t o = r->output < L->max_seq_len - 1 ? r->output : L->max_seq_len - 1;
        r->output = (int32_t) o;
        r->prompt = (int32_t) (L->max_seq_len - o < r->prompt ? L->max_seq_len - o : r->prompt);
        r->truncated = 1;
        if (r->measured) P->truncated++;
    }
    if (L->request_overhead_ms > 0) {
        simtime_t d = simtime_from_ms(L->request_overhead_ms);
        r->overhead_ns = simtime_add(r->overhead_ns, d);
        station_after(st, d, on_overhead_done, P, (int64_t) (intptr_t) r);
        return;
    }
    r->enq = evq_now(st->q);
    enter_queue(P, r);
}

static void window_open(station *st)
{
    llm *P = (llm *) st;
    if (P->fl) fleet_window_open(P->fl);
    P->window_open = 1;
    P->window_start = evq_now(st->q);
    P->steps = 0;
    P->seqs_in_steps = 0;
    P->kv_area = 0;
    P->kv_peak = 0;
    P->flops = P->bytes = 0;
    P->preemptions = 0;
    P->truncated = 0;
}

static void window_close(station *st)
{
    llm *P = (llm *) st;
    for (int i = 0; i < P->nrep; i++)
        if (P->r[i].stepping) account_step(&P->r[i]);
    P->window_open = 0;
    if (P->fl) fleet_window_close(P->fl);
}

static int report(station *st, pool_result *out)
{
    llm *P = (llm *) st;
    const llm_cfg *L = P->cfg;
    int gpus = L->replicas * L->tp;
    double kv_occupancy = 0, mfu = 0, mbu = 0;
    double span_ns = out->window_s * 1e9;
    if (span_ns > 0) {
        kv_occupancy = P->kv_area / (span_ns * (double) L->kv_blocks * L->replicas);
        double span_s = span_ns / 1e9;
        double pf = cost_peak_flops(&L->cost), pb = cost_peak_bw(&L->cost);
        mfu = pf > 0 ? P->flops / (pf * L->replicas * span_s) : 0;
        mbu = pb > 0 ? P->bytes / (pb * L->replicas * span_s) : 0;
    }
    out->cost_per_hour = gpus * L->gpu.price_hr;
    fleet_result fr = { 0 };
    if (P->fl) {
        /* Paid for: the replica-seconds that ran (starting, up or draining). */
        fleet_results(P->fl, &fr);
        if (out->window_s > 0) out->cost_per_hour = fr.running_s * L->tp * L->gpu.price_hr / out->window_s;
        double up_ns = fr.up_mean * span_ns;
        out->utilization = up_ns > 0 ? (st->busy_area - st->area_at_start) / up_ns : 0;
    }
    const struct { const char *name; double value; } rows[] = {
        { "replicas", L->replicas },
        { "gpus", gpus },
        { "kv_blocks", (double) L->kv_blocks },
        { "max_seq_len", (double) L->max_seq_len },
        { "steps", (double) P->steps },
        { "mean_batch", P->steps ? P->seqs_in_steps / (double) P->steps : 0 },
        { "kv_occupancy", kv_occupancy },
        { "kv_peak", P->kv_peak },
        { "preemptions", (double) P->preemptions },
        { "truncated", (double) P->truncated },
        { "too_long", (double) P->too_long },
        { "mfu", mfu },
        { "mbu", mbu },
        { "cost_per_hour", out->cost_per_hour },
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        if (pool_result_add(out, rows[i].name, rows[i].value)) return -1;
    if (P->fl) {
        const fleet_cfg *fc = st->cfg->fleet;
        int rc = 0;
        rc |= pool_result_add(out, "failed", (double) st->failed);
        rc |= pool_result_add(out, "availability", fr.availability);
        rc |= pool_result_add(out, "replicas_up_mean", fr.up_mean);
        rc |= pool_result_add(out, "replica_seconds", fr.running_s);
        rc |= pool_result_add(out, "cost_usd", fr.running_s * L->tp * L->gpu.price_hr / 3600.0);
        if (fc->fault.failures) rc |= pool_result_add(out, "failures", (double) fr.failures);
        if (fc->autoscale) {
            rc |= pool_result_add(out, "scale_ups", (double) fr.scale_ups);
            rc |= pool_result_add(out, "scale_downs", (double) fr.scale_downs);
        }
        if (fc->cold) rc |= pool_result_add(out, "cold_served", (double) P->cold);
        if (rc) return -1;
    }
    if (L->prefix_cache) {
        double n = P->pfx_requests ? (double) P->pfx_requests : NAN;
        uint64_t ev = 0;
        for (int i = 0; i < P->nrep; i++) ev += prefix_get_stats(P->r[i].pc)->evictions;
        int rc = 0;
        rc |= pool_result_add(out, "prefix_hit_rate", P->pfx_prompt > 0 ? P->pfx_found / P->pfx_prompt : NAN);
        rc |= pool_result_add(out, "prefix_request_hit_rate", (double) P->pfx_hit_requests / n);
        rc |= pool_result_add(out, "prefill_tokens_saved", P->pfx_skipped / n);
        rc |= pool_result_add(out, "ttft_saved_ms", P->pfx_saved_ms / n);
        rc |= pool_result_add(out, "prefix_evictions", (double) ev);
        if (rc) return -1;
    }
    /* Which cost model produced the step times (report.c prints them as one object). */
    cost_info ci;
    cost_describe(&L->cost, &ci);
    const cost_ops *row = cost_find(ci.kind);
    const pool_metric cm[] = {
        { "cost_model.kind", NAN, row ? row->name : "" },
        { "cost_model.id", ci.id > 0 ? (double) ci.id : NAN, NULL },
        { "cost_model.source", NAN, cost_source_known(ci.source) },
        { "cost_model.mape", ci.mape, NULL },
        { "cost_model.extrapolated", ci.extrapolated, NULL },
    };
    for (size_t i = 0; i < sizeof cm / sizeof cm[0]; i++)
        if (cm[i].text ? pool_result_add_name(out, cm[i].name, cm[i].text)
                       : pool_result_add(out, cm[i].name, cm[i].value)) return -1;
    return 0;
}

static void snapshot(const station *st, station_snap *out)
{
    const llm *P = (const llm *) st;
    int64_t free_blocks = 0;
    uint64_t running = 0;
    for (int i = 0; i < P->nrep; i++) {
        free_blocks += P->r[i].free_blocks;
        running += (uint64_t) P->r[i].nrun;
    }
    out->running = running;
    out->kv_free = (double) free_blocks / ((double) P->cfg->kv_blocks * P->nrep);
    if (P->fl) {
        out->capacity = fleet_up(P->fl);
        out->cap_area = fleet_up_area(P->fl);
    }
}

static void destroy(station *st)
{
    llm *P = (llm *) st;
    for (int i = 0; P->r && i < P->nrep; i++) {
        for (request *r = P->r[i].run_head; r; r = r->rnext) {   /* still running at the end */
            free(r->pfx_h);
            r->pfx_h = NULL;
        }
        prefix_free(P->r[i].pc);
        free(P->r[i].pf);
        free(P->r[i].chunk);
        free(P->r[i].heap);
        free(P->r[i].phase_cnt);
    }
    fleet_free(P->fl);
    free(P->ids);
    free(P->r);
    free(P->idle);
    free(P->snaps);
    free(P->dirty);
    route_index_free(&P->ix);
    if (P->routed) route_close(&P->rc);
    station_fini(st);
    free(P);
}

/* The longest leading run of R's prompt blocks one of the replicas holds, as
 * cached at or before VISIBLE (a router's view). */
static uint32_t pool_prefix_match(const station *st, const request *r, simtime_t visible, uint32_t *nids)
{
    llm *P = (llm *) st;                    /* the id scratch is written, nothing else */
    *nids = 0;
    if (!P->cfg->prefix_cache) return 0;
    int64_t n = prompt_ids(P, r, NULL);
    if (n > 0) *nids = (uint32_t) n;
    uint32_t best = 0;
    for (int i = 0; n > 0 && i < P->nrep; i++) {
        uint32_t h = prefix_match_seen(P->r[i].pc, P->ids, (uint32_t) n, visible);
        if (h > best) best = h;
    }
    return best;
}

static const station_ops LLM_OPS = {
    .arrive = arrive,
    .prefix_match = pool_prefix_match,
    .window_open = window_open,
    .window_close = window_close,
    .snapshot = snapshot,
    .report = report,
    .destroy = destroy,
};

const station_kind llm_kind = {
    .name = "llm",
    .help = "LLM serving replicas (schedulers, paged KV cache, cost model)",
    .keys = llm_keys,
    .parse = llm_parse,
    .more_keys = llm_more_keys,
    .resolve = llm_resolve,
    .make = llm_new,
    .free_cfg = llm_free_cfg,
    .min_next = 0,
    .max_next = 1,
    .flags = KIND_TOKENS | KIND_FLEET,
};

double llm_footprint(const llm_cfg *L)
{
    const replica *R = NULL;   /* only for sizeof */
    double per = (double) sizeof *R + sizeof R + (double) L->max_batch * (double) (sizeof *R->pf + sizeof *R->chunk + sizeof *R->heap)
                 + (double) L->block_tokens * (double) sizeof *R->phase_cnt;
    return (double) L->replicas * per;
}

station *llm_new(const pool_cfg *cfg, const station_env *env)
{
    llm *P = calloc(1, sizeof *P);
    if (!P) return NULL;
    const llm_cfg *L = &cfg->llm;
    if (station_init(&P->st, &LLM_OPS, cfg, env) != 0) goto fail;
    P->cfg = L;
    cost_fast_init(&P->cf, &L->cost);
    P->B = L->block_tokens;
    P->Bmask = P->B > 0 && (P->B & (P->B - 1)) == 0 ? P->B - 1 : -1;
    P->acct = P->st.cls_use && L->gpu.price_hr > 0;
    const fleet_cfg *fc = cfg->fleet;
    P->nrep = fc && fc->autoscale ? fc->as.max_replicas : L->replicas;
    P->st.capacity = L->replicas;
    P->st.queue_stat_at_finish = 1;
    P->r = calloc((size_t) P->nrep, sizeof *P->r);
    P->idle = calloc((size_t) P->nrep, sizeof *P->idle);
    if (!P->r || !P->idle) goto fail;
    if (L->routing) {
        P->snaps = calloc((size_t) L->replicas, sizeof *P->snaps);
        if (!P->snaps || route_open(&P->rc, L->routing, L->replicas, env->seed, cfg->name) != 0) goto fail;
        P->routed = 1;
        if (L->routing->key != ROUTE_KEY_NONE) {
            /* Keys set once the replicas are (below). */
            if (!(P->dirty = calloc((size_t) P->nrep, sizeof *P->dirty)) ||
                route_index_init(&P->ix, L->replicas, 0) != 0)
                goto fail;
            P->ix_key = L->routing->key;
        }
    }
#ifdef LATSIM_DEBUG
    P->check = 1;
#else
    const char *chk = getenv("LATSIM_CHECK");
    P->check = chk && *chk && strcmp(chk, "0") != 0;
#endif
    for (int i = 0; i < P->nrep; i++) {
        replica *R = &P->r[i];
        R->pool = P;
        R->index = i;
        R->free_blocks = L->kv_blocks;
        squeue_init(&R->own, &P->st);
        if (P->ix_key == ROUTE_KEY_INSIDE) R->own.timed_out = own_timed_out;
        R->wq = L->routing ? &R->own : &P->st.queue;
        R->pf = calloc((size_t) L->max_batch, sizeof *R->pf);
        R->chunk = calloc((size_t) L->max_batch, sizeof *R->chunk);
        R->heap = calloc((size_t) L->max_batch, sizeof *R->heap);
        R->phase_cnt = calloc((size_t) P->B, sizeof *R->phase_cnt);
        if (!R->pf || !R->chunk || !R->heap || !R->phase_cnt) goto fail;
        if (L->prefix_cache &&
            !(R->pc = prefix_new((uint64_t) L->kv_blocks, (uint32_t) (L->prefix_id_tokens / L->block_tokens))))
            goto fail;
    }
    for (int i = 0; P->ix_key != ROUTE_KEY_NONE && i < P->nrep; i++) {
        station_snap s;
        replica_snap(&P->r[i], &s);
        route_index_set(&P->ix, i, route_key(L->routing, &s));
    }
    int up = L->replicas;
    if (fc) {
        char name[96];
        snprintf(name, sizeof name, "pool %s", cfg->name);
        fleet_units ops = { .ctx = P, .down = unit_down, .up = unit_up, .held = unit_held, .load = unit_load,
                            .pause = unit_pause };
        fleet_cfg f = *fc;
        f.units = L->replicas;
        /* A start loads the weights: each GPU its tp-th share, in parallel. */
        f.weight_bytes = L->model.params * catalog_weight_bytes(L->weights) / L->tp;
        if (!(P->fl = fleet_new(&f, env->q, env->seed, name, &ops))) goto fail;
        up = fleet_initial_up(P->fl);
        P->st.capacity = P->nrep;
        for (int i = 0; i < P->nrep; i++) {
            P->r[i].down = i >= up;
            P->r[i].since = UINT64_MAX / 2;   /* up at the start: warm */
        }
        if (fc->fault.slow_fraction > 0) {    /* chosen from a stream of their own */
            unsigned char *slow = calloc((size_t) P->nrep, 1);
            if (!slow || fleet_pick_slow(fc, env->seed, cfg->name, P->nrep, slow) != 0) {
                free(slow);
                goto fail;
            }
            for (int i = 0; i < P->nrep; i++) P->r[i].slow = slow[i];
            free(slow);
        }
    }
    /* Idle stack: replica 0 on top, so a lone request goes to replica 0. */
    for (int i = up - 1; i >= 0; i--) idle_push(P, &P->r[i]);
    return &P->st;
fail:
    destroy(&P->st);
    return NULL;
}
